/* IBSNMPD-MIB::ibsnmpdAlarms: the count, the last change and
 * ibsnmpdAlarmTable, served from the alarm area's snapshot. */
#include "alarm_internal.h"

#include <string.h>

#include <net-snmp/library/snmp-tc.h>

#include "ibsnmpd/mib_oids.h"
#include "ibsnmpd/route.h"

static const oid alarms_oid[] = {OID_IBSNMPD_ALARMS};
static const oid table_oid[] = {OID_IBSNMPD_ALARM_TABLE};

/* The notification that raised a kind (alarm_kinds.c names it). */
static const struct {
	oid arcs[MAX_OID_LEN];
	size_t len;
} raised_by[ALARM_KINDS] = {
#define N(k, ...) [k] = {{__VA_ARGS__}, sizeof((oid[]){__VA_ARGS__}) / sizeof(oid)}
	N(ALARM_LINK_DOWN, OID_IBSNMPD_LINK_DOWN),
	N(ALARM_LINK_DEGRADED, OID_IBSNMPD_LINK_DEGRADED),
	N(ALARM_LINK_BER_HIGH, OID_IBSNMPD_LINK_BER_HIGH),
	N(ALARM_LINK_FLAPPING, OID_IBSNMPD_LINK_FLAPPING),
	N(ALARM_NODE_UNREACHABLE, OID_IBSNMPD_NODE_UNREACHABLE),
	N(ALARM_PARTITION_NOT_VERIFIED, OID_IB_PARTITION_NOT_VERIFIED),
	N(ALARM_DCBX_FEATURE_ERROR, OID_LLDP_XDCBX_MISC_FEATURE_ERROR),
	N(ALARM_DCBX_MISMATCH, OID_LLDP_XDCBX_PEER_CONFIG_MISMATCH),
	N(ALARM_TEMPERATURE_HIGH, OID_IBSNMPD_TEMPERATURE_HIGH),
	N(ALARM_FAN_FAILED, OID_IBSNMPD_FAN_FAILED),
	N(ALARM_MODULE_FAULTED, OID_IBSNMPD_MODULE_FAULTED),
	N(ALARM_RX_POWER_LOW, OID_IBSNMPD_MODULE_RX_POWER_LOW),
	N(ALARM_ROUTE_CHECK_FAILED, OID_IBSNMPD_ROUTE_CHECK_FAILED),
	N(ALARM_ROUTE_UNREACHABLE, OID_IBSNMPD_ROUTE_CHECK_FAILED),
#undef N
};

static size_t put(oid *o, size_t at, const oid *arcs, size_t n)
{
	memcpy(o + at, arcs, n * sizeof(*arcs));
	return at + n;
}

/* The instance of the column of a table's entry that details the alarm. */
static size_t column_of(oid *o, const oid *table, size_t table_len, unsigned column)
{
	size_t n = put(o, 0, table, table_len);

	o[n++] = 1;
	o[n++] = column;
	return n;
}

/* ibsnmpdAlarmResource (the MIB's DESCRIPTION lists them) */
static size_t resource_of(const struct alarm *a, oid *o)
{
	static const oid fabric[] = {OID_IBSNMPD_FABRIC_PORT_TABLE}, temp[] = {OID_IBSNMPD_TEMPERATURE_TABLE}, fan[] = {OID_IBSNMPD_FAN_TABLE},
			 module[] = {OID_IBSNMPD_MODULE_TABLE}, lane[] = {OID_IBSNMPD_MODULE_LANE_TABLE},
			 apply[] = {OID_IB_PARTITION_LAST_APPLY_RESULT, 0},
			 feat[] = {OID_LLDP_XDCBX_FEAT_TABLE}, dport[] = {OID_LLDP_XDCBX_PORT_TABLE},
			 checks[] = {OID_IBSNMPD_ROUTE_CHECK_TABLE};
	size_t n;

	switch (a->key.kind) {
	case ALARM_LINK_DOWN:
	case ALARM_LINK_DEGRADED:
	case ALARM_LINK_BER_HIGH:
	case ALARM_LINK_FLAPPING: {
		static const unsigned col[] = {
			[ALARM_LINK_DOWN] = COLUMN_IBSNMPD_FABRIC_PORT_LINK_STATE,
			[ALARM_LINK_DEGRADED] = COLUMN_IBSNMPD_FABRIC_PORT_DEGRADED,
			[ALARM_LINK_BER_HIGH] = COLUMN_IBSNMPD_FABRIC_PORT_BER_HIGH,
			[ALARM_LINK_FLAPPING] = COLUMN_IBSNMPD_FABRIC_PORT_FLAPPING,
		};

		n = column_of(o, fabric, OID_LENGTH(fabric), col[a->key.kind]);
		return n + mib_index_guid_port(o + n, a->key.guid, a->key.port);
	}
	case ALARM_NODE_UNREACHABLE:
		n = column_of(o, fabric, OID_LENGTH(fabric), COLUMN_IBSNMPD_FABRIC_PORT_STALE);
		return n + mib_index_guid_port(o + n, a->key.guid, a->key.port);
	case ALARM_TEMPERATURE_HIGH:
		n = column_of(o, temp, OID_LENGTH(temp), COLUMN_IBSNMPD_TEMPERATURE_OVER_THRESHOLD);
		return n + mib_index_guid_port(o + n, a->key.guid, a->key.sub);
	case ALARM_FAN_FAILED:
		n = column_of(o, fan, OID_LENGTH(fan), COLUMN_IBSNMPD_FAN_FAULT);
		return n + mib_index_guid_port(o + n, a->key.guid, a->key.sub);
	case ALARM_MODULE_FAULTED:
		n = column_of(o, module, OID_LENGTH(module), COLUMN_IBSNMPD_MODULE_STATUS);
		return n + mib_index_guid_port(o + n, a->key.guid, a->key.sub);
	case ALARM_RX_POWER_LOW:
		n = column_of(o, lane, OID_LENGTH(lane), COLUMN_IBSNMPD_MODULE_LANE_RX_POWER_LOW);
		n += mib_index_guid_port(o + n, a->key.guid, a->key.port);
		o[n++] = a->key.sub;
		return n;
	case ALARM_PARTITION_NOT_VERIFIED:
		return put(o, 0, apply, OID_LENGTH(apply));
	case ALARM_ROUTE_CHECK_FAILED:
	case ALARM_ROUTE_UNREACHABLE:
		n = column_of(o, checks, OID_LENGTH(checks), COLUMN_IBSNMPD_ROUTE_CHECK_STATUS);
		o[n++] = a->key.kind == ALARM_ROUTE_CHECK_FAILED ? a->key.sub : ROUTE_CHECK_REACH;
		return n;
	case ALARM_DCBX_FEATURE_ERROR:
		n = column_of(o, feat, OID_LENGTH(feat), COLUMN_LLDP_XDCBX_FEAT_ERROR);
		o[n++] = a->key.port;
		o[n++] = a->key.sub;
		o[n++] = 0;
		return n;
	default:
		n = column_of(o, dport, OID_LENGTH(dport), COLUMN_LLDP_XDCBX_PORT_NUMBER);
		o[n++] = a->key.port;
		return n;
	}
}

static void set_oid(netsnmp_variable_list *vb, const oid *o, size_t n)
{
	snmp_set_var_typed_value(vb, ASN_OBJECT_ID, o, n * sizeof(*o));
}

int alarm_mib_column(const struct alarm *a, unsigned column, netsnmp_variable_list *vb)
{
	const struct alarm_kind_info *k = alarm_kind_info(a->key.kind);
	oid o[MAX_OID_LEN];

	if (!k)
		return -1;
	switch (column) {
	case COLUMN_IBSNMPD_ALARM_NOTIFICATION:
		set_oid(vb, raised_by[a->key.kind].arcs, raised_by[a->key.kind].len);
		return 0;
	case COLUMN_IBSNMPD_ALARM_SEVERITY: mib_set_int(vb, k->severity); return 0;
	case COLUMN_IBSNMPD_ALARM_TYPE: mib_set_int(vb, k->type); return 0;
	case COLUMN_IBSNMPD_ALARM_RESOURCE: set_oid(vb, o, resource_of(a, o)); return 0;
	case COLUMN_IBSNMPD_ALARM_NODE_GUID: mib_set_be_octets(vb, a->key.guid, 8); return 0;
	case COLUMN_IBSNMPD_ALARM_PORT: mib_set_unsigned(vb, ASN_UNSIGNED, a->key.port); return 0;
	case COLUMN_IBSNMPD_ALARM_SUB_INDEX: mib_set_unsigned(vb, ASN_UNSIGNED, a->key.sub); return 0;
	case COLUMN_IBSNMPD_ALARM_DESCRIPTION: mib_set_octets(vb, a->desc, strlen(a->desc)); return 0;
	case COLUMN_IBSNMPD_ALARM_BEGAN: {
		size_t len = 0;
		time_t t = a->began;
		u_char *dt = date_n_time(&t, &len);

		mib_set_octets(vb, dt, len);
		return 0;
	}
	case COLUMN_IBSNMPD_ALARM_BEGAN_UPTIME:
		mib_set_unsigned(vb, ASN_TIMETICKS, a->began_ticks);
		return 0;
	case COLUMN_IBSNMPD_ALARM_NODE_CONTEXT: {
		char name[MIB_NODE_CONTEXT_MAX] = "";

		if (a->key.guid && a->node_type)
			mib_node_context_name(a->key.guid, a->node_type, name, sizeof(name));
		mib_set_octets(vb, name, strlen(name));
		return 0;
	}
	default: return -1;
	}
}

static const void *alarm_snapshot(const void *ctx)
{
	const struct alarm_area *a = ctx;

	return cache_snapshot(&a->group);
}

static int scalar_value(unsigned column, netsnmp_variable_list *vb, const void *snap)
{
	const struct alarm_snapshot *s = snap;

	switch (column) {
	case SCALAR_IBSNMPD_ALARMS_ACTIVE: mib_set_unsigned(vb, ASN_GAUGE, s->n); return 0;
	case SCALAR_IBSNMPD_ALARMS_LAST_CHANGE:
		mib_set_unsigned(vb, ASN_TIMETICKS, s->last_change_ticks);
		return 0;
	default: return -1;
	}
}

static unsigned index_of(const void *data, oid *index)
{
	index[0] = ((const struct alarm *)data)->index;
	return 1;
}

static const struct mib_rows *table_rows(const void *ctx, const void **snap)
{
	struct alarm_area *a = (struct alarm_area *)ctx;
	const struct alarm_snapshot *s = cache_snapshot(&a->group);

	*snap = s;
	if (!s)
		return NULL;
	a->mib.rows = (struct mib_rows){.count = s->n, .array = s->rows,
					.stride = sizeof(*s->rows), .index_of = index_of};
	return &a->mib.rows;
}

static int table_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		       const void *snap)
{
	(void)snap;
	return alarm_mib_column(row, column, vb);
}

int alarm_mib_register(struct alarm_mib *m, struct alarm_area *a)
{
	m->scalars = (struct mib_scalars){
		.name = "ibsnmpdAlarms", .group_oid = alarms_oid,
		.group_oid_len = OID_LENGTH(alarms_oid), .first = SCALAR_IBSNMPD_ALARMS_ACTIVE,
		.last = SCALAR_IBSNMPD_ALARMS_LAST_CHANGE, .snapshot = alarm_snapshot,
		.value = scalar_value, .ctx = a, .one_by_one = true, /* the table is inside */
	};
	m->table = (struct mib_table){
		.name = "ibsnmpdAlarmTable", .table_oid = table_oid,
		.table_oid_len = OID_LENGTH(table_oid), .first_column = COLUMN_IBSNMPD_ALARM_NOTIFICATION,
		.last_column = COLUMN_IBSNMPD_ALARM_NODE_CONTEXT, .rows = table_rows,
		.value = table_value, .ctx = a,
	};
	if (mib_scalars_register(&m->scalars))
		return -1;
	if (mib_table_register(&m->table)) {
		mib_scalars_unregister(&m->scalars);
		return -1;
	}
	return 0;
}

void alarm_mib_unregister(struct alarm_mib *m)
{
	mib_table_unregister(&m->table);
	mib_scalars_unregister(&m->scalars);
}
