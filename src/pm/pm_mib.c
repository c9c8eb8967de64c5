/* Counters of the subnet, read from the last sweep's snapshot (pm_subnet.c):
 *   IBSNMPD-MIB::ibsnmpdPmPortTable  every port: 64-bit data and packet
 *                                    counters (octets), error counters
 *   IB-PM-MIB::pmClassPortInfoTable  every node: AllPortSelect
 *   IB-PM-MIB::pmPortCountersTable   every node: the counters of the port its
 *                                    PortSelect names; SET of a counter to 0
 *                                    clears it on the node (PerfMgtSet)
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

/* A SET in progress: the clears sent to one node, answered together. */
struct pm_clear {
	netsnmp_delegated_cache *cache;
	netsnmp_request_info **requests;
	size_t n;
};

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

/* RESERVE1: everything is checked before anything is sent or changed. */
static int check_set(struct mib_table *t, netsnmp_agent_request_info *reqinfo,
		     netsnmp_request_info *r)
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
	if (column == 2) {
		if (v < 0 || v > 255)
			return SNMP_ERR_WRONGVALUE;
		if (v == 0xff ? !(nr->capmask & PM_CAP_ALL_PORT_SELECT)
			      : !node_has_port(nr, s, (unsigned)v))
			return SNMP_ERR_INCONSISTENTVALUE; /* a port the node does not have */
		return SNMP_ERR_NOERROR;
	}
	if (v != 0)
		return SNMP_ERR_WRONGVALUE; /* a counter can only be cleared */
	if (!nr->node->lid)
		return SNMP_ERR_RESOURCEUNAVAILABLE;
	(void)reqinfo;
	return SNMP_ERR_NOERROR;
}

static void clear_done(void *ctx, int result, const uint8_t *data, size_t len)
{
	struct pm_clear *c = ctx;
	netsnmp_delegated_cache *cache = netsnmp_handler_check_cache(c->cache);

	(void)data;
	(void)len;
	if (cache) {
		for (size_t i = 0; i < c->n; i++) {
			if (result != MAD_OK)
				netsnmp_set_request_error(cache->reqinfo, c->requests[i],
							  SNMP_ERR_COMMITFAILED);
			c->requests[i]->delegated = 0;
		}
		netsnmp_free_delegated_cache(cache);
	}
	if (result != MAD_OK)
		snmp_log(LOG_WARNING, "clearing counters failed: %s\n",
			 result == MAD_TIMEOUT ? "no answer" : "the node refused");
	else if (served_pm && !served_pm->sweep.refreshing)
		cache_group_refresh_now(&served_pm->sweep); /* show the zeros soon */
	free(c->requests);
	free(c);
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
		struct pm_clear *c;
		uint8_t d[IB_PC_DATA_SZ];
		ib_portid_t to;
		struct mad_call call = {
			.mgmt_class = IB_PERFORMANCE_CLASS,
			.method = IB_MAD_METHOD_SET,
			.attr_id = IB_GSI_PORT_COUNTERS,
			.data = d,
			.data_len = sizeof(d),
		};

		if (!nr || column < 3 || r->delegated || r->processed)
			continue;
		c = calloc(1, sizeof(*c));
		if (!c || !(c->requests = calloc(1, sizeof(*c->requests) * 32))) {
			free(c);
			netsnmp_set_request_error(reqinfo, r, SNMP_ERR_RESOURCEUNAVAILABLE);
			continue;
		}
		/* this request and every later one for the same node */
		for (netsnmp_request_info *q = r; q && c->n < 32; q = q->next) {
			const struct pm_snapshot *s2;
			unsigned col2;

			if (set_row(t, q, &s2, &col2) != nr || col2 < 3 || q->delegated)
				continue;
			mask |= 1u << (col2 - 3);
			q->delegated = 1;
			c->requests[c->n++] = q;
		}
		pm_port_select(d, sizeof(d), IB_GSI_PORT_COUNTERS,
			       pm_port_select_get(served_pm, nr, s));
		mad_set_field(d, 0, IB_PC_COUNTER_SELECT_F, mask);
		mad_portid_gs(&to, nr->node->lid);
		c->cache = netsnmp_create_delegated_cache(handler, reg, reqinfo, requests, NULL);
		if (mad_engine_call(&to, &call, clear_done, c)) {
			for (size_t i = 0; i < c->n; i++) {
				c->requests[i]->delegated = 0;
				netsnmp_set_request_error(reqinfo, c->requests[i],
							  SNMP_ERR_COMMITFAILED);
			}
			netsnmp_free_delegated_cache(c->cache);
			free(c->requests);
			free(c);
		}
	}
	return SNMP_ERR_NOERROR;
}

static int counters_set(struct mib_table *t, netsnmp_mib_handler *handler,
			netsnmp_handler_registration *reg, netsnmp_agent_request_info *reqinfo,
			netsnmp_request_info *requests)
{
	switch (reqinfo->mode) {
	case MODE_SET_RESERVE1:
		for (netsnmp_request_info *r = requests; r; r = r->next) {
			int err = check_set(t, reqinfo, r);

			if (err != SNMP_ERR_NOERROR)
				netsnmp_set_request_error(reqinfo, r, err);
		}
		break;
	case MODE_SET_ACTION:
		return apply_set(t, handler, reg, reqinfo, requests);
	default:
		/* RESERVE2, COMMIT, FREE: nothing held; UNDO: a cleared counter
		 * cannot be restored, and PortSelect changes are harmless */
		break;
	}
	return SNMP_ERR_NOERROR;
}

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
	if (mib_table_register(&pm_port_table) || mib_table_register(&pm_cpi_table) ||
	    mib_table_register(&pm_counters_table))
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
	unregister_sysORTable(pm_draft_oid, OID_LENGTH(pm_draft_oid));
	served_pm = NULL;
}
