/* libFuzzer target: the routing checks (route_check) over any topology the
 * discovery's parser takes and any forwarding tables: the input is the
 * topology's text, a NUL, then the tables' entries, destination-major, each
 * switch read unless its bit in the first octet after the NUL is set, the
 * ports' SL2VL (SLs 0 and 1) and the SLs in use from the same octets; then
 * the subnet checks (route_subnet_check) over the same topology, its ports'
 * PortInfo fields taken from the same octets. What comes back is checked
 * for what the MIB and /metrics rely on. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/route.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void offenders_hold(const struct route_findings *r, unsigned first, unsigned last)
{
	size_t kept[ROUTE_CHECKS + 1] = {0};

	for (size_t i = 0; i < r->n_offenders; i++) {
		const struct route_offender *o = &r->offenders[i];

		if (o->check < first || o->check > last || !route_offense_name(o->kind) ||
		    !memchr(o->desc, 0, sizeof(o->desc)) || !o->desc[0])
			abort();
		if (i && (r->offenders[i - 1].check > o->check ||
			  (r->offenders[i - 1].check == o->check && r->offenders[i - 1].n >= o->n)))
			abort(); /* by check, then number */
		if (++kept[o->check] > ROUTE_OFFENDERS_MAX)
			abort();
	}
	for (unsigned k = first; k <= last; k++) {
		const struct route_check_result *c = &r->checks[k];

		if (kept[k] != c->listed || c->status < ROUTE_STATUS_PASSED ||
		    c->status > ROUTE_STATUS_PARTIAL || c->listed < (c->offenders > 100 ? 100 : 0))
			abort();
		/* with several SLs, credit loops are possible only: partial */
		if ((c->status == ROUTE_STATUS_FAILED) != (c->offenders > 0) &&
		    c->status != ROUTE_STATUS_NOT_RUN &&
		    !(k == ROUTE_CHECK_CREDIT && c->status == ROUTE_STATUS_PARTIAL))
			abort();
	}
}

/* the topology's ports' PortInfo, of the octets from p on (cycled) */
static void subnet_checks(const struct topology *f, const uint8_t *p, size_t n)
{
	struct route_port_fact *facts = calloc(f->n_ports + 1, sizeof(*facts));
	struct route_findings r;

	if (!facts)
		return;
	for (size_t i = 0; i < f->n_ports; i++) {
		uint8_t v[6] = {0};

		for (unsigned k = 0; n && k < 6; k++)
			v[k] = p[(i * 6 + k) % n];
		facts[i] = (struct route_port_fact){
			.guid = f->nodes[f->ports[i].node].guid, .port = f->ports[i].port,
			.lid = v[0] & 1 ? 0 : (uint16_t)f->ports[i].lid, .lmc = v[0] >> 5,
			.state = v[1] % 7, .phys_state = v[1] >> 4, .mtu_cap = v[2] % 7,
			.active_mtu = v[2] >> 4, .vl_cap = v[3] % 7, .oper_vls = v[3] >> 4,
			.state_s = (uint32_t)v[4] << 8 | v[5], .is_sm = v[0] & 2,
			.sm_lid = v[0] & 4 ? (uint16_t)f->ports[0].lid : (uint16_t)v[5]};
	}
	{
		struct route_subnet_input in = {.ports = facts, .n_ports = f->n_ports,
						.stuck_s = 20, .stall_s = 60};
		struct route_sm sms[4];

		/* SMs at the first ports' LIDs, their SMInfo of the same octets */
		for (size_t i = 0; i < 4 && i < f->n_ports; i++) {
			uint8_t v = n ? p[(i * 5 + 3) % n] : 0;

			sms[i] = (struct route_sm){.guid = f->ports[i].port_guid,
						   .lid = f->ports[i].lid,
						   .state = v & 0x80 ? ROUTE_SM_NO_ANSWER : v & 3,
						   .priority = v >> 2 & 15, .act_still_s = v,
						   .master_s = (uint32_t)v << 2};
			in.n_sms = i + 1;
		}
		in.sms = in.n_sms ? sms : NULL;
		if (route_subnet_check(f, &in, &r) == 0) {
			offenders_hold(&r, ROUTE_ROUTING_CHECKS + 1, ROUTE_CHECKS);
			for (size_t i = 0; i < in.n_sms; i++)
				if (!memchr(sms[i].name, 0, sizeof(sms[i].name)))
					abort();
			route_findings_free(&r);
		}
	}
	free(facts);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	struct route_tables t;
	struct route_findings r;
	struct topology *f;
	const uint8_t *lft;
	size_t text_len, n_lft, cells;
	char err[160];

	if (!nul)
		return 0;
	text_len = (size_t)(nul - data);
	f = topology_parse((const char *)data, text_len, NULL, err, sizeof(err));
	if (!f)
		return 0;
	topology_get(f);
	/* a small LID space: the tables are the input's */
	if (route_tables_init(&t, f, route_max_lid(f) > 512 ? 512 : route_max_lid(f))) {
		topology_put(f);
		return 0;
	}
	lft = nul + 1;
	n_lft = size - text_len - 1;
	cells = ((size_t)t.max_lid + 1) * t.n_switches;
	for (size_t s = 0; s < t.n_switches; s++)
		t.read[s] = !(n_lft && (lft[0] >> (s % 8) & 1));
	for (size_t i = 0; n_lft > 1 && i < cells; i++)
		if (route_tables_set(&t, i % t.n_switches, (unsigned)(i / t.n_switches),
				     lft[1 + i % (n_lft - 1)]))
			break;
	/* SL2VL from the same octets, SL 0 the low nibble, SL 1 the high; both
	 * SLs in use when the last octet's top bit is set */
	for (size_t k = 0; n_lft > 1 && k < t.vl_first[t.n_switches]; k++) {
		t.sl2vl[k][0] = lft[1 + k % (n_lft - 1)] & 15;
		t.sl2vl[k][1] = lft[1 + k % (n_lft - 1)] >> 4;
	}
	t.path_sls = n_lft && lft[n_lft - 1] & 0x80 ? 3 : 1;
	if (route_check(f, &t, &r) == 0) {
		struct route_findings more;

		uint64_t hist = 0;

		offenders_hold(&r, 1, ROUTE_ROUTING_CHECKS);
		for (unsigned h = 0; h <= ROUTE_HOPS_MAX; h++)
			hist += r.hops[h];
		if (hist != r.pairs_reached || r.pairs_reached > r.ca_pairs)
			abort();
		for (size_t i = 1; i < r.n_loads; i++)
			if (r.loads[i - 1].guid > r.loads[i].guid ||
			    (r.loads[i - 1].guid == r.loads[i].guid &&
			     r.loads[i - 1].port >= r.loads[i].port))
				abort();
		/* the destinations in three shares, on threads: the same findings */
		if (route_check_shares(f, &t, &more, 3) == 0) {
			if (more.n_offenders != r.n_offenders || more.n_loads != r.n_loads ||
			    more.pairs_reached != r.pairs_reached || more.ca_pairs != r.ca_pairs)
				abort();
			for (size_t i = 0; i < r.n_offenders; i++)
				if (more.offenders[i].kind != r.offenders[i].kind ||
				    more.offenders[i].lid != r.offenders[i].lid ||
				    more.offenders[i].count != r.offenders[i].count ||
				    strcmp(more.offenders[i].desc, r.offenders[i].desc))
					abort();
			for (size_t i = 0; i < r.n_loads; i++)
				if (more.loads[i].lids != r.loads[i].lids ||
				    more.loads[i].paths != r.loads[i].paths)
					abort();
			for (unsigned k = 1; k <= ROUTE_ROUTING_CHECKS; k++)
				if (more.checks[k].status != r.checks[k].status ||
				    more.checks[k].offenders != r.checks[k].offenders)
					abort();
			route_findings_free(&more);
		}
		route_findings_free(&r);
	}
	subnet_checks(f, lft, n_lft);
	route_tables_free(&t);
	topology_put(f);
	return 0;
}
