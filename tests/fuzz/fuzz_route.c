/* libFuzzer target: the routing checks (route_check) over any topology the
 * discovery's parser takes and any forwarding tables: the input is the
 * topology's text, a NUL, then the tables' entries, destination-major, each
 * switch read unless its bit in the first octet after the NUL is set. What
 * comes back is checked for what the MIB and /metrics rely on. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/route.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	struct route_tables t;
	struct route_findings r;
	struct topology *f;
	const uint8_t *lft;
	size_t text_len, n_lft, cells, kept[ROUTE_CHECKS + 1] = {0};
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
		t.lft[i] = lft[1 + i % (n_lft - 1)];
	if (route_check(f, &t, &r) == 0) {
		uint64_t hist = 0;

		for (size_t i = 0; i < r.n_offenders; i++) {
			const struct route_offender *o = &r.offenders[i];

			if (!o->check || o->check > ROUTE_CHECKS || !route_offense_name(o->kind) ||
			    !memchr(o->desc, 0, sizeof(o->desc)) || !o->desc[0])
				abort();
			if (i && r.offenders[i - 1].check > o->check)
				abort(); /* by check */
			if (++kept[o->check] > ROUTE_OFFENDERS_MAX)
				abort();
		}
		for (unsigned k = 1; k <= ROUTE_CHECKS; k++) {
			if (kept[k] > r.checks[k].offenders || r.checks[k].status < ROUTE_STATUS_PASSED ||
			    r.checks[k].status > ROUTE_STATUS_PARTIAL)
				abort();
			if ((r.checks[k].status == ROUTE_STATUS_FAILED) != (r.checks[k].offenders > 0) &&
			    r.checks[k].status != ROUTE_STATUS_NOT_RUN)
				abort();
		}
		for (unsigned h = 0; h <= ROUTE_HOPS_MAX; h++)
			hist += r.hops[h];
		if (hist != r.pairs_reached || r.pairs_reached > r.ca_pairs)
			abort();
		for (size_t i = 1; i < r.n_loads; i++)
			if (r.loads[i - 1].guid > r.loads[i].guid ||
			    (r.loads[i - 1].guid == r.loads[i].guid &&
			     r.loads[i - 1].port >= r.loads[i].port))
				abort();
		route_findings_free(&r);
	}
	route_tables_free(&t);
	topology_put(f);
	return 0;
}
