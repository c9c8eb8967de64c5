/* IBSNMPD-MIB::ibsnmpdPmPortTable: every port of the subnet, 64-bit data and
 * packet counters (octets, not IB's 4-octet words) and the error counters,
 * read from the last sweep's snapshot (pm_subnet.c). */
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

int pm_mib_register(struct pm_subnet *pm)
{
	pm_port_table.ctx = &pm->sweep;
	return mib_table_register(&pm_port_table);
}

void pm_mib_unregister(void)
{
	mib_table_unregister(&pm_port_table);
}
