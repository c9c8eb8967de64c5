/* Counters of the subnet, read from the last sweep's snapshot (pm_subnet.c):
 *   IBSNMPD-MIB::ibsnmpdPmPortTable  every port: 64-bit data and packet
 *                                    counters (octets), error counters
 *   IB-PM-MIB::pmClassPortInfoTable  every node: AllPortSelect
 *   IB-PM-MIB::pmPortCountersTable   every node: the counters of the port its
 *                                    PortSelect names; SET of a counter to 0
 *                                    clears it on the node (PerfMgtSet)
 *   IB-PM-MIB::pmPortSampleCntrlTable, pmPortSampleResultTable
 *                                    every node; values for the nodes sampled
 *                                    (pm_samples.c); SET starts a sample
 */
#include <limits.h>
#include <stdlib.h>

#include "ibsnmpd/mad_engine.h"
#include "ibsnmpd/pm.h"

#include <net-snmp/agent/agent_sysORTable.h>

static const oid pm_port_table_oid[] = {1, 3, 6, 1, 4, 1, 8072, 9999, 9999, 117, 1, 3, 1};

static void set_c64(netsnmp_variable_list *vb, uint64_t v)
{
	struct counter64 c = {.high = (u_long)(v >> 32), .low = (u_long)(v & 0xffffffffu)};

	snmp_set_var_typed_value(vb, ASN_COUNTER64, &c, sizeof(c));
}

static int pm_port_value(const void *row, unsigned column, netsnmp_variable_list *vb,
			 const void *snap)
{
	const struct pm_port_state *st = row;
	const struct pm_counters *c = &st->raw;

	(void)snap;
	if (!st->have_raw && column >= 5 && column <= 21)
		return -1; /* never read: no counter values yet */
	switch (column) {
	case 3: mib_set_octets(vb, st->node->desc, strlen(st->node->desc)); return 0;
	case 4: mib_set_unsigned(vb, ASN_UNSIGNED, st->lid); return 0;
	case 5: set_c64(vb, st->xmit_data * 4); return 0; /* IB counts 4-octet words */
	case 6: set_c64(vb, st->rcv_data * 4); return 0;
	case 7: set_c64(vb, st->xmit_pkts); return 0;
	case 8: set_c64(vb, st->rcv_pkts); return 0;
	case 9: mib_set_unsigned(vb, ASN_COUNTER, c->symbol_errors); return 0;
	case 10: mib_set_unsigned(vb, ASN_COUNTER, c->link_error_recovery); return 0;
	case 11: mib_set_unsigned(vb, ASN_COUNTER, c->link_downed); return 0;
	case 12: mib_set_unsigned(vb, ASN_COUNTER, c->rcv_errors); return 0;
	case 13: mib_set_unsigned(vb, ASN_COUNTER, c->rcv_remote_phys_errors); return 0;
	case 14: mib_set_unsigned(vb, ASN_COUNTER, c->rcv_switch_relay_errors); return 0;
	case 15: mib_set_unsigned(vb, ASN_COUNTER, c->xmit_discards); return 0;
	case 16: mib_set_unsigned(vb, ASN_COUNTER, c->xmit_constraint_errors); return 0;
	case 17: mib_set_unsigned(vb, ASN_COUNTER, c->rcv_constraint_errors); return 0;
	case 18: mib_set_unsigned(vb, ASN_COUNTER, c->local_link_integrity_errors); return 0;
	case 19: mib_set_unsigned(vb, ASN_COUNTER, c->excessive_buffer_overruns); return 0;
	case 20: mib_set_unsigned(vb, ASN_COUNTER, c->vl15_dropped); return 0;
	case 21: mib_set_unsigned(vb, ASN_COUNTER, c->xmit_wait); return 0;
	case 22: mib_set_int(vb, st->extended ? 1 : 2); return 0;
	case 23: mib_set_unsigned(vb, ASN_UNSIGNED, (unsigned long)st->discontinuity); return 0;
	case 24: mib_set_unsigned(vb, ASN_UNSIGNED, (unsigned long)st->last_read); return 0;
	case 25: mib_set_int(vb, mib_truth(st->stale || !st->have_raw)); return 0;
	default: return -1;
	}
}

static const struct mib_rows *pm_rows(const void *ctx, const void **snap)
{
	const struct pm_snapshot *s = cache_snapshot(ctx);

	*snap = s;
	return s ? &s->rows : NULL;
}

static struct mib_table pm_port_table = {
	.name = "ibsnmpdPmPortTable",
	.table_oid = pm_port_table_oid,
	.table_oid_len = OID_LENGTH(pm_port_table_oid),
	.first_column = 3,
	.last_column = 25,
	.rows = pm_rows,
	.value = pm_port_value,
};

/* ---- IB-PM-MIB (the 2001 draft; pm = experimental 117) ------------------- */

static const oid pm_cpi_table_oid[] = {1, 3, 6, 1, 3, 117, 1, 1};
static const oid pm_counters_table_oid[] = {1, 3, 6, 1, 3, 117, 1, 4};
static struct pm_subnet *served_pm;

static const struct mib_rows *node_rows(const void *ctx, const void **snap)
{
	const struct pm_snapshot *s = cache_snapshot(ctx);

	*snap = s;
	return s && s->nodes ? &s->node_rows : NULL;
}

static int cpi_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		     const void *snap)
{
	const struct pm_node_row *nr = row;

	(void)snap;
	switch (column) {
	case 1: mib_set_be_octets(vb, nr->node->guid, 8); return 0;
	case 2:
		if (!nr->capmask_known)
			return -1; /* ClassPortInfo did not answer */
		mib_set_int(vb, mib_truth(nr->capmask & PM_CAP_ALL_PORT_SELECT));
		return 0;
	default: return -1;
	}
}

/* pmPortCounters columns 3..18 in PortCounters' CounterSelect bit order */
static uint32_t counter_of(const struct pm_counters *c, unsigned column)
{
	const uint32_t v[16] = {
		c->symbol_errors, c->link_error_recovery, c->link_downed, c->rcv_errors,
		c->rcv_remote_phys_errors, c->rcv_switch_relay_errors, c->xmit_discards,
		c->xmit_constraint_errors, c->rcv_constraint_errors,
		c->local_link_integrity_errors, c->excessive_buffer_overruns, c->vl15_dropped,
		c->xmit_data, c->rcv_data, c->xmit_pkts, c->rcv_pkts,
	};

	return v[column - 3];
}

static int counters_value(const void *row, unsigned column, netsnmp_variable_list *vb,
			  const void *snap)
{
	const struct pm_node_row *nr = row;
	const struct pm_snapshot *s = snap;
	unsigned sel = pm_port_select_get(served_pm, nr, s);
	uint64_t sum = 0;
	bool found = false;

	if (column == 1) {
		mib_set_be_octets(vb, nr->node->guid, 8);
		return 0;
	}
	if (column == 2) {
		mib_set_int(vb, sel);
		return 0;
	}
	if (column < 3 || column > 18)
		return -1;
	/* PortSelect 0xFF: all ports, as the node would add them up */
	for (size_t i = nr->first_port; i < nr->first_port + nr->n_ports; i++) {
		const struct pm_port_state *st = &s->ports[i];

		if ((sel == 0xff || st->port == sel) && st->have_raw) {
			sum += counter_of(&st->raw, column);
			found = true;
		}
	}
	if (!found)
		return -1;
	/* the draft's counters are Integer32: the larger IB values stop there */
	mib_set_int(vb, sum > INT_MAX ? INT_MAX : (long)sum);
	return 0;
}

/* Varbinds of one SET answered by one exchange with one node (delegated:
 * other requests are served while the MADs are under way). */
struct pm_delegation {
	netsnmp_delegated_cache *cache;
	netsnmp_request_info *requests[64];
	size_t n;
};

static struct pm_delegation *delegation_new(netsnmp_mib_handler *handler,
					    netsnmp_handler_registration *reg,
					    netsnmp_agent_request_info *reqinfo,
					    netsnmp_request_info *requests)
{
	struct pm_delegation *d = calloc(1, sizeof(*d));

	if (d)
		d->cache = netsnmp_create_delegated_cache(handler, reg, reqinfo, requests, NULL);
	return d;
}

static void delegation_add(struct pm_delegation *d, netsnmp_request_info *r)
{
	r->delegated = 1;
	d->requests[d->n++] = r;
}

/* Ends the exchange: every varbind answered, with commitFailed on failure. */
static void delegation_finish(struct pm_delegation *d, int result, bool cache_alive)
{
	netsnmp_delegated_cache *cache = cache_alive ? d->cache
						     : netsnmp_handler_check_cache(d->cache);

	if (cache) {
		for (size_t i = 0; i < d->n; i++) {
			if (result != MAD_OK)
				netsnmp_set_request_error(cache->reqinfo, d->requests[i],
							  SNMP_ERR_COMMITFAILED);
			d->requests[i]->delegated = 0;
		}
		netsnmp_free_delegated_cache(cache);
	}
	free(d);
}

static const char *mad_failure(int result)
{
	return result == MAD_TIMEOUT ? "no answer" : "the node refused";
}

static const struct pm_node_row *set_row(struct mib_table *t, netsnmp_request_info *r,
					 const struct pm_snapshot **snap, unsigned *column)
{
	const struct mib_rows *rows = t->rows(t->ctx, (const void **)snap);
	const struct mib_row *row = mib_table_find_row(t, rows, r->requestvb->name,
						       r->requestvb->name_length, column);

	return row ? row->data : NULL;
}

static bool node_has_port(const struct pm_node_row *nr, const struct pm_snapshot *s,
			  unsigned port)
{
	for (size_t i = nr->first_port; i < nr->first_port + nr->n_ports; i++)
		if (s->ports[i].port == port)
			return true;
	return false;
}

/* A PortSelect value (PortCounters or PortSamplesControl) for this node. */
static int check_port_select(const struct pm_node_row *nr, const struct pm_snapshot *s, long v)
{
	if (v < 0 || v > 255)
		return SNMP_ERR_WRONGVALUE;
	if (v == 0xff ? !(nr->capmask & PM_CAP_ALL_PORT_SELECT) : !node_has_port(nr, s, (unsigned)v))
		return SNMP_ERR_INCONSISTENTVALUE; /* a port the node does not have */
	return SNMP_ERR_NOERROR;
}

/* RESERVE1: everything is checked before anything is sent or changed. */
static int check_set(struct mib_table *t, netsnmp_request_info *r)
{
	const struct pm_snapshot *s;
	unsigned column;
	const struct pm_node_row *nr = set_row(t, r, &s, &column);
	long v;

	if (!nr)
		return SNMP_ERR_NOCREATION; /* rows are the discovered nodes */
	if (column < 2 || column > 18)
		return SNMP_ERR_NOTWRITABLE;
	if (r->requestvb->type != ASN_INTEGER)
		return SNMP_ERR_WRONGTYPE;
	v = *r->requestvb->val.integer;
	if (column == 2)
		return check_port_select(nr, s, v);
	if (v != 0)
		return SNMP_ERR_WRONGVALUE; /* a counter can only be cleared */
	if (!nr->node->lid)
		return SNMP_ERR_RESOURCEUNAVAILABLE;
	return SNMP_ERR_NOERROR;
}

static void clear_done(void *ctx, int result, const uint8_t *data, size_t len)
{
	(void)data;
	(void)len;
	delegation_finish(ctx, result, false);
	if (result != MAD_OK)
		snmp_log(LOG_WARNING, "clearing counters failed: %s\n", mad_failure(result));
	else if (served_pm && !served_pm->sweep.refreshing)
		cache_group_refresh_now(&served_pm->sweep); /* show the zeros soon */
}

/* ACTION: PortSelect changes first, then one PerfMgtSet per node with every
 * counter of that node's varbinds selected. */
static int apply_set(struct mib_table *t, netsnmp_mib_handler *handler,
		     netsnmp_handler_registration *reg, netsnmp_agent_request_info *reqinfo,
		     netsnmp_request_info *requests)
{
	for (netsnmp_request_info *r = requests; r; r = r->next) {
		const struct pm_snapshot *s;
		unsigned column;
		const struct pm_node_row *nr = set_row(t, r, &s, &column);

		if (nr && column == 2 &&
		    pm_port_select_set(served_pm, nr->node->guid,
				       (unsigned)*r->requestvb->val.integer))
			netsnmp_set_request_error(reqinfo, r, SNMP_ERR_RESOURCEUNAVAILABLE);
	}
	for (netsnmp_request_info *r = requests; r; r = r->next) {
		const struct pm_snapshot *s;
		unsigned column, mask = 0;
		const struct pm_node_row *nr = set_row(t, r, &s, &column);
		struct pm_delegation *d;
		uint8_t data[IB_PC_DATA_SZ];

		if (!nr || column < 3 || r->delegated || r->processed)
			continue;
		if (!(d = delegation_new(handler, reg, reqinfo, requests))) {
			netsnmp_set_request_error(reqinfo, r, SNMP_ERR_RESOURCEUNAVAILABLE);
			continue;
		}
		/* this request and every later one for the same node */
		for (netsnmp_request_info *q = r; q && d->n < 64; q = q->next) {
			const struct pm_snapshot *s2;
			unsigned col2;

			if (set_row(t, q, &s2, &col2) != nr || col2 < 3 || q->delegated)
				continue;
			mask |= 1u << (col2 - 3);
			delegation_add(d, q);
		}
		pm_port_select(data, sizeof(data), IB_GSI_PORT_COUNTERS,
			       pm_port_select_get(served_pm, nr, s));
		mad_set_field(data, 0, IB_PC_COUNTER_SELECT_F, mask);
		if (mad_engine_perf(nr->node->lid, IB_MAD_METHOD_SET, IB_GSI_PORT_COUNTERS, data,
				    sizeof(data), clear_done, d))
			delegation_finish(d, MAD_SEND_FAILED, true);
	}
	return SNMP_ERR_NOERROR;
}

typedef int (*set_check_fn)(struct mib_table *t, netsnmp_request_info *r);
typedef int (*set_apply_fn)(struct mib_table *t, netsnmp_mib_handler *handler,
			    netsnmp_handler_registration *reg,
			    netsnmp_agent_request_info *reqinfo, netsnmp_request_info *requests);

/* The SET modes of a table whose SETs act on nodes: every varbind checked in
 * RESERVE1, the MADs sent in ACTION. Nothing is held between the modes, and
 * what a node did cannot be taken back (UNDO does nothing): a cleared counter
 * stays cleared, a started sample runs. */
static int node_action_set(struct mib_table *t, netsnmp_mib_handler *handler,
			   netsnmp_handler_registration *reg,
			   netsnmp_agent_request_info *reqinfo, netsnmp_request_info *requests,
			   set_check_fn check, set_apply_fn apply)
{
	switch (reqinfo->mode) {
	case MODE_SET_RESERVE1:
		for (netsnmp_request_info *r = requests; r; r = r->next) {
			int err = check(t, r);

			if (err != SNMP_ERR_NOERROR)
				netsnmp_set_request_error(reqinfo, r, err);
		}
		break;
	case MODE_SET_ACTION:
		return apply(t, handler, reg, reqinfo, requests);
	default:
		break;
	}
	return SNMP_ERR_NOERROR;
}

static int counters_set(struct mib_table *t, netsnmp_mib_handler *handler,
			netsnmp_handler_registration *reg, netsnmp_agent_request_info *reqinfo,
			netsnmp_request_info *requests)
{
	return node_action_set(t, handler, reg, reqinfo, requests, check_set, apply_set);
}

/* ---- pmPortSampleCntrlTable and pmPortSampleResultTable -------------------- */

static const oid pm_sample_ctl_table_oid[] = {1, 3, 6, 1, 3, 117, 1, 2};
static const oid pm_sample_result_table_oid[] = {1, 3, 6, 1, 3, 117, 1, 3};

enum {
	SCTL_GUID = 1, SCTL_OPCODE, SCTL_PORT_SELECT, SCTL_TICK, SCTL_COUNTER_WIDTH,
	SCTL_MASK0 = 6, /* ..20: Counter0..14Mask */
	SCTL_MECHANISMS = 21, SCTL_STATUS, SCTL_OPTION_MASK, SCTL_VENDOR_MASK,
	SCTL_START, SCTL_INTERVAL, SCTL_TAG,
	SCTL_SELECT0 = 28, /* ..42: CounterSelect0..14 */
	SCTL_LAST = 42,
};

static const struct pm_sample_state *sample_state(const struct pm_node_row *nr)
{
	return served_pm ? pm_samples_find(cache_snapshot(&served_pm->samples), nr->node->guid)
			 : NULL;
}

/* The draft's Tag is 4 octets; IBA's is 16 bits: served in the last two. */
static void set_tag(netsnmp_variable_list *vb, unsigned tag)
{
	mib_set_be_octets(vb, tag & 0xffff, 4);
}

/* SampleStart and SampleInterval are 32-bit in IBA, Integer32 in the draft */
static long clip_int32(uint32_t v)
{
	return v > INT_MAX ? INT_MAX : (long)v;
}

static int sample_ctl_value(const void *row, unsigned column, netsnmp_variable_list *vb,
			    const void *snap)
{
	const struct pm_node_row *nr = row;
	const struct pm_sample_state *st;
	const struct pm_sample_ctl *c;

	(void)snap;
	if (column == SCTL_GUID) {
		mib_set_be_octets(vb, nr->node->guid, 8);
		return 0;
	}
	st = sample_state(nr);
	if (!st || !st->have_ctl)
		return -1; /* not watched, or never answered */
	c = &st->ctl;
	if (column >= SCTL_MASK0 && column < SCTL_MASK0 + PM_SAMPLE_COUNTERS) {
		mib_set_int(vb, c->counter_mask[column - SCTL_MASK0]);
		return 0;
	}
	if (column >= SCTL_SELECT0 && column <= SCTL_LAST) {
		mib_set_int(vb, c->counter_select[column - SCTL_SELECT0]);
		return 0;
	}
	switch (column) {
	case SCTL_OPCODE: mib_set_int(vb, c->opcode); return 0;
	case SCTL_PORT_SELECT: mib_set_int(vb, c->port_select); return 0;
	case SCTL_TICK: mib_set_int(vb, c->tick); return 0;
	case SCTL_COUNTER_WIDTH: mib_set_int(vb, c->counter_width); return 0;
	case SCTL_MECHANISMS: mib_set_int(vb, c->sample_mechanisms); return 0;
	case SCTL_STATUS: mib_set_int(vb, c->sample_status); return 0;
	case SCTL_OPTION_MASK: mib_set_be_octets(vb, c->option_mask, 8); return 0;
	case SCTL_VENDOR_MASK: mib_set_be_octets(vb, c->vendor_mask, 8); return 0;
	case SCTL_START: mib_set_int(vb, clip_int32(c->sample_start)); return 0;
	case SCTL_INTERVAL: mib_set_int(vb, clip_int32(c->sample_interval)); return 0;
	case SCTL_TAG: set_tag(vb, c->tag); return 0;
	default: return -1;
	}
}

static int sample_result_value(const void *row, unsigned column, netsnmp_variable_list *vb,
			       const void *snap)
{
	const struct pm_node_row *nr = row;
	const struct pm_sample_state *st;

	(void)snap;
	if (column == 1) {
		mib_set_be_octets(vb, nr->node->guid, 8);
		return 0;
	}
	st = sample_state(nr);
	if (!st || !st->have_res)
		return -1;
	if (column == 2)
		set_tag(vb, st->res.tag);
	else if (column == 3)
		mib_set_int(vb, st->res.sample_status);
	else if (column >= 4 && column < 4 + PM_SAMPLE_COUNTERS)
		mib_set_unsigned(vb, ASN_COUNTER, st->res.counter[column - 4]);
	else
		return -1;
	return 0;
}

/* One writable sampling column of a varbind into the start request. */
static int sample_field(unsigned column, const netsnmp_variable_list *vb,
			const struct pm_sample_state *st, struct pm_sample_ctl *want,
			uint32_t *fields)
{
	long v;

	if (column == SCTL_TAG) {
		if (vb->type != ASN_OCTET_STR)
			return SNMP_ERR_WRONGTYPE;
		if (vb->val_len != 4)
			return SNMP_ERR_WRONGLENGTH;
		if (vb->val.string[0] || vb->val.string[1])
			return SNMP_ERR_WRONGVALUE; /* IBA's Tag has 16 bits */
		want->tag = (unsigned)vb->val.string[2] << 8 | vb->val.string[3];
		*fields |= PM_SAMPLE_SET_TAG;
		return SNMP_ERR_NOERROR;
	}
	if (vb->type != ASN_INTEGER)
		return SNMP_ERR_WRONGTYPE;
	v = *vb->val.integer;
	if (column >= SCTL_SELECT0 && column <= SCTL_LAST) {
		if (v < 0 || v > 0xffff)
			return SNMP_ERR_WRONGVALUE;
		want->counter_select[column - SCTL_SELECT0] = (unsigned)v;
		*fields |= PM_SAMPLE_SET_SELECT(column - SCTL_SELECT0);
		return SNMP_ERR_NOERROR;
	}
	switch (column) {
	case SCTL_OPCODE:
		if (v < 0 || v > 255)
			return SNMP_ERR_WRONGVALUE;
		want->opcode = (unsigned)v;
		*fields |= PM_SAMPLE_SET_OPCODE;
		return SNMP_ERR_NOERROR;
	case SCTL_START:
	case SCTL_INTERVAL:
		if (v < 0)
			return SNMP_ERR_WRONGVALUE;
		/* the node's timers are CounterWidth bits wide */
		if (st && st->have_ctl && pm_sample_width_bits(st->ctl.counter_width) < 32 &&
		    (unsigned long)v >> pm_sample_width_bits(st->ctl.counter_width))
			return SNMP_ERR_INCONSISTENTVALUE;
		if (column == SCTL_START) {
			want->sample_start = (uint32_t)v;
			*fields |= PM_SAMPLE_SET_START;
		} else {
			want->sample_interval = (uint32_t)v;
			*fields |= PM_SAMPLE_SET_INTERVAL;
		}
		return SNMP_ERR_NOERROR;
	default:
		return SNMP_ERR_NOTWRITABLE;
	}
}

static int check_sample_set(struct mib_table *t, netsnmp_request_info *r)
{
	const struct pm_snapshot *s;
	unsigned column;
	const struct pm_node_row *nr = set_row(t, r, &s, &column);
	struct pm_sample_ctl want;
	uint32_t fields = 0;

	if (!nr)
		return SNMP_ERR_NOCREATION;
	if (column == SCTL_PORT_SELECT) {
		if (r->requestvb->type != ASN_INTEGER)
			return SNMP_ERR_WRONGTYPE;
		return check_port_select(nr, s, *r->requestvb->val.integer);
	}
	if (column != SCTL_OPCODE && column != SCTL_START && column != SCTL_INTERVAL &&
	    column != SCTL_TAG && (column < SCTL_SELECT0 || column > SCTL_LAST))
		return SNMP_ERR_NOTWRITABLE;
	{
		int err = sample_field(column, r->requestvb, sample_state(nr), &want, &fields);

		if (err != SNMP_ERR_NOERROR)
			return err;
	}
	if (!nr->node->lid)
		return SNMP_ERR_RESOURCEUNAVAILABLE;
	return SNMP_ERR_NOERROR;
}

static void sample_started(void *ctx, int result)
{
	delegation_finish(ctx, result, false);
	if (result != MAD_OK)
		snmp_log(LOG_WARNING, "starting a sample failed: %s\n", mad_failure(result));
}

/* ACTION: one start (Get, then Set of PortSamplesControl) per node, with
 * every field its varbinds name. */
static int apply_sample_set(struct mib_table *t, netsnmp_mib_handler *handler,
			    netsnmp_handler_registration *reg,
			    netsnmp_agent_request_info *reqinfo, netsnmp_request_info *requests)
{
	for (netsnmp_request_info *r = requests; r; r = r->next) {
		const struct pm_snapshot *s;
		unsigned column;
		const struct pm_node_row *nr = set_row(t, r, &s, &column);
		struct pm_sample_ctl want = {0};
		uint32_t fields = 0;
		struct pm_delegation *d;

		if (!nr || r->delegated || r->processed)
			continue;
		if (!(d = delegation_new(handler, reg, reqinfo, requests))) {
			netsnmp_set_request_error(reqinfo, r, SNMP_ERR_RESOURCEUNAVAILABLE);
			continue;
		}
		for (netsnmp_request_info *q = r; q && d->n < 64; q = q->next) {
			const struct pm_snapshot *s2;
			unsigned col2;

			if (set_row(t, q, &s2, &col2) != nr || q->delegated)
				continue;
			if (col2 == SCTL_PORT_SELECT) {
				want.port_select = (unsigned)*q->requestvb->val.integer;
				fields |= PM_SAMPLE_SET_PORT_SELECT;
			} else {
				sample_field(col2, q->requestvb, NULL, &want, &fields);
			}
			delegation_add(d, q);
		}
		if (pm_samples_start(served_pm, nr->node->guid, nr->node->lid, &want, fields,
				     sample_started, d))
			delegation_finish(d, MAD_SEND_FAILED, true);
	}
	return SNMP_ERR_NOERROR;
}

static int sample_ctl_set(struct mib_table *t, netsnmp_mib_handler *handler,
			  netsnmp_handler_registration *reg, netsnmp_agent_request_info *reqinfo,
			  netsnmp_request_info *requests)
{
	return node_action_set(t, handler, reg, reqinfo, requests, check_sample_set,
			       apply_sample_set);
}

static struct mib_table pm_sample_ctl_table = {
	.name = "pmPortSampleCntrlTable",
	.table_oid = pm_sample_ctl_table_oid,
	.table_oid_len = OID_LENGTH(pm_sample_ctl_table_oid),
	.first_column = 1,
	.last_column = SCTL_LAST,
	.rows = node_rows,
	.value = sample_ctl_value,
	.set = sample_ctl_set,
};

static struct mib_table pm_sample_result_table = {
	.name = "pmPortSampleResultTable",
	.table_oid = pm_sample_result_table_oid,
	.table_oid_len = OID_LENGTH(pm_sample_result_table_oid),
	.first_column = 1,
	.last_column = 3 + PM_SAMPLE_COUNTERS,
	.rows = node_rows,
	.value = sample_result_value,
};

static struct mib_table pm_cpi_table = {
	.name = "pmClassPortInfoTable",
	.table_oid = pm_cpi_table_oid,
	.table_oid_len = OID_LENGTH(pm_cpi_table_oid),
	.first_column = 1,
	.last_column = 2,
	.rows = node_rows,
	.value = cpi_value,
};

static struct mib_table pm_counters_table = {
	.name = "pmPortCountersTable",
	.table_oid = pm_counters_table_oid,
	.table_oid_len = OID_LENGTH(pm_counters_table_oid),
	.first_column = 1,
	.last_column = 18,
	.rows = node_rows,
	.value = counters_value,
	.set = counters_set,
};

int pm_mib_register(struct pm_subnet *pm)
{
	static oid pm_draft_oid[] = {1, 3, 6, 1, 3, 117, 1};

	served_pm = pm;
	pm_port_table.ctx = pm_cpi_table.ctx = pm_counters_table.ctx = &pm->sweep;
	pm_sample_ctl_table.ctx = pm_sample_result_table.ctx = &pm->sweep;
	if (mib_table_register(&pm_port_table) || mib_table_register(&pm_cpi_table) ||
	    mib_table_register(&pm_counters_table) || mib_table_register(&pm_sample_ctl_table) ||
	    mib_table_register(&pm_sample_result_table))
		return -1;
	register_sysORTable(pm_draft_oid, OID_LENGTH(pm_draft_oid),
			    "IB-PM-MIB: InfiniBand performance management (draft), served by ibsnmpd");
	return 0;
}

void pm_mib_unregister(void)
{
	static oid pm_draft_oid[] = {1, 3, 6, 1, 3, 117, 1};

	mib_table_unregister(&pm_port_table);
	mib_table_unregister(&pm_cpi_table);
	mib_table_unregister(&pm_counters_table);
	mib_table_unregister(&pm_sample_ctl_table);
	mib_table_unregister(&pm_sample_result_table);
	unregister_sysORTable(pm_draft_oid, OID_LENGTH(pm_draft_oid));
	served_pm = NULL;
}
