/* IBSNMPD-MIB::ibsnmpdRouting, served from the route area's snapshot: its
 * scalars, the checks, their offenders, the load of every switch port and
 * the hop histogram; each table an array of the snapshot, in index order. */
#include "ibsnmpd/netsnmp.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <net-snmp/library/snmp-tc.h>

#include "ibsnmpd/mib_oids.h"

#include "route_internal.h"

enum { ROWS_CHECKS, ROWS_OFFENDERS, ROWS_LOADS, ROWS_HOPS, ROWS_SMS };

static const oid routing_oid[] = {OID_IBSNMPD_ROUTING};
static const oid checks_oid[] = {OID_IBSNMPD_ROUTE_CHECK_TABLE};
static const oid offenders_oid[] = {OID_IBSNMPD_ROUTE_OFFENDER_TABLE};
static const oid loads_oid[] = {OID_IBSNMPD_ROUTE_LOAD_TABLE};
static const oid hops_oid[] = {OID_IBSNMPD_ROUTE_HOP_TABLE};
static const oid sms_oid[] = {OID_IBSNMPD_ROUTE_SM_TABLE};

/* Every table is an array of the snapshot, already in index order. */
static unsigned check_index(const void *data, oid *index)
{
	index[0] = ((const struct route_check_result *)data)->id;
	return 1;
}

static unsigned offender_index(const void *data, oid *index)
{
	const struct route_offender *o = data;

	index[0] = o->check;
	index[1] = o->n;
	return 2;
}

static unsigned load_index(const void *data, oid *index)
{
	const struct route_port_load *l = data;

	return mib_index_guid_port(index, l->guid, l->port);
}

static unsigned hop_index(const void *data, oid *index)
{
	index[0] = ((const struct route_hop_count *)data)->hops;
	return 1;
}

static unsigned sm_index(const void *data, oid *index)
{
	mib_index_put_guid(index, ((const struct route_sm *)data)->guid);
	return MIB_GUID_INDEX_LEN;
}

static const struct route_snapshot *snapshot_of(const void *ctx)
{
	const struct route_area *a = ctx;

	return cache_snapshot(&a->group);
}

/* The scalars are the routing run's: none before the first. */
static const void *scalars_snapshot(const void *ctx)
{
	const struct route_snapshot *s = snapshot_of(ctx);

	return s ? s->routing : NULL;
}

static uint32_t capped(uint64_t v)
{
	return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static int scalar_value(unsigned column, netsnmp_variable_list *vb, const void *snap)
{
	const struct route_routing *s = snap;
	time_t now = time(NULL);

	switch (column) {
	case SCALAR_IBSNMPD_ROUTING_SOURCE: mib_set_int(vb, s->source); return 0;
	case SCALAR_IBSNMPD_ROUTING_AGE:
		mib_set_unsigned(vb, ASN_UNSIGNED, now > s->read_at ? (u_long)(now - s->read_at) : 0);
		return 0;
	case SCALAR_IBSNMPD_ROUTING_READ_DURATION:
		mib_set_unsigned(vb, ASN_UNSIGNED, (u_long)(s->read_seconds * 1000));
		return 0;
	case SCALAR_IBSNMPD_ROUTING_CHECK_DURATION:
		mib_set_unsigned(vb, ASN_UNSIGNED, (u_long)(s->check_seconds * 1000));
		return 0;
	case SCALAR_IBSNMPD_ROUTING_SWITCHES: mib_set_unsigned(vb, ASN_UNSIGNED, s->switches); return 0;
	case SCALAR_IBSNMPD_ROUTING_SWITCHES_READ:
		mib_set_unsigned(vb, ASN_UNSIGNED, s->switches_read);
		return 0;
	case SCALAR_IBSNMPD_ROUTING_MADS: mib_set_unsigned(vb, ASN_UNSIGNED, capped(s->mads)); return 0;
	case SCALAR_IBSNMPD_ROUTING_RUNS: mib_set_unsigned(vb, ASN_COUNTER, s->run); return 0;
	case SCALAR_IBSNMPD_ROUTING_CA_PAIRS:
		mib_set_unsigned(vb, ASN_GAUGE, capped(s->f.ca_pairs));
		return 0;
	case SCALAR_IBSNMPD_ROUTING_CA_PAIRS_REACHED:
		mib_set_unsigned(vb, ASN_GAUGE, capped(s->f.pairs_reached));
		return 0;
	default: return -1;
	}
}

static const struct mib_rows *rows_of(struct route_area *a, int which, const void **snap)
{
	const struct route_snapshot *s = snapshot_of(a);
	struct mib_rows *r = &a->mib.rows;

	*snap = s;
	if (!s)
		return NULL;
	switch (which) {
	case ROWS_CHECKS:
		*r = (struct mib_rows){.count = ROUTE_CHECKS, .array = &s->checks[1],
				       .stride = sizeof(s->checks[1]), .index_of = check_index};
		break;
	case ROWS_OFFENDERS:
		*r = (struct mib_rows){.count = s->n_offenders, .array = s->offenders,
				       .stride = sizeof(*s->offenders), .index_of = offender_index};
		break;
	case ROWS_LOADS:
		*r = (struct mib_rows){.count = s->routing ? s->routing->f.n_loads : 0,
				       .array = s->routing ? s->routing->f.loads : NULL,
				       .stride = sizeof(struct route_port_load), .index_of = load_index};
		break;
	case ROWS_SMS:
		*r = (struct mib_rows){.count = s->n_sms, .array = s->sms,
				       .stride = sizeof(*s->sms), .index_of = sm_index};
		break;
	default:
		*r = (struct mib_rows){.count = s->routing ? s->routing->f.n_hop_rows : 0,
				       .array = s->routing ? s->routing->f.hop_rows : NULL,
				       .stride = sizeof(struct route_hop_count), .index_of = hop_index};
	}
	return r;
}

static const struct mib_rows *check_rows(const void *ctx, const void **snap)
{
	return rows_of((struct route_area *)ctx, ROWS_CHECKS, snap);
}

static const struct mib_rows *offender_rows(const void *ctx, const void **snap)
{
	return rows_of((struct route_area *)ctx, ROWS_OFFENDERS, snap);
}

static const struct mib_rows *load_rows(const void *ctx, const void **snap)
{
	return rows_of((struct route_area *)ctx, ROWS_LOADS, snap);
}

static const struct mib_rows *hop_rows(const void *ctx, const void **snap)
{
	return rows_of((struct route_area *)ctx, ROWS_HOPS, snap);
}

static const struct mib_rows *sm_rows(const void *ctx, const void **snap)
{
	return rows_of((struct route_area *)ctx, ROWS_SMS, snap);
}

/* The subnet run's scalar. */
static const void *subnet_snapshot(const void *ctx)
{
	return snapshot_of(ctx);
}

static int subnet_scalar_value(unsigned column, netsnmp_variable_list *vb, const void *snap)
{
	const struct route_snapshot *s = snap;

	switch (column) {
	case SCALAR_IBSNMPD_ROUTE_PREVIOUS_MASTER_SM:
		mib_set_be_octets(vb, s->previous_master, 8);
		return 0;
	case SCALAR_IBSNMPD_ROUTE_TABLES_PUBLICATIONS:
		mib_set_unsigned(vb, ASN_COUNTER, s->publication);
		return 0;
	default: return -1;
	}
}

/* An SM's column (also what ibsnmpdMasterSmChanged carries). */
int route_mib_sm_column(const struct route_sm *m, unsigned column, netsnmp_variable_list *vb)
{
	switch (column) {
	case COLUMN_IBSNMPD_ROUTE_SM_NAME: mib_set_octets(vb, m->name, strlen(m->name)); return 0;
	case COLUMN_IBSNMPD_ROUTE_SM_LID: mib_set_unsigned(vb, ASN_UNSIGNED, m->lid); return 0;
	case COLUMN_IBSNMPD_ROUTE_SM_STATE:
		/* SMA-MIB's numbering: SMState + 2, 1 no answer */
		mib_set_int(vb, m->state == ROUTE_SM_NO_ANSWER ? 1 : m->state + 2);
		return 0;
	case COLUMN_IBSNMPD_ROUTE_SM_PRIORITY:
		if (m->state == ROUTE_SM_NO_ANSWER)
			return -1;
		mib_set_unsigned(vb, ASN_UNSIGNED, m->priority);
		return 0;
	case COLUMN_IBSNMPD_ROUTE_SM_ACT_COUNT:
		if (m->state == ROUTE_SM_NO_ANSWER)
			return -1;
		mib_set_unsigned(vb, ASN_UNSIGNED, m->act_count);
		return 0;
	case COLUMN_IBSNMPD_ROUTE_SM_ACT_COUNT_STILL:
		if (m->state == ROUTE_SM_NO_ANSWER)
			return -1;
		mib_set_unsigned(vb, ASN_UNSIGNED, m->act_still_s);
		return 0;
	default: return -1;
	}
}

static int sm_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		    const void *snap)
{
	(void)snap;
	return route_mib_sm_column(row, column, vb);
}

/* A check's column (also what its notifications carry). */
int route_mib_check_column(const struct route_snapshot *s, unsigned check, unsigned column,
			   netsnmp_variable_list *vb)
{
	const struct route_check_result *c = &s->checks[check];

	switch (column) {
	case COLUMN_IBSNMPD_ROUTE_CHECK_NAME: {
		const char *name = route_check_name(check);

		mib_set_octets(vb, name, strlen(name));
		return 0;
	}
	case COLUMN_IBSNMPD_ROUTE_CHECK_STATUS: mib_set_int(vb, c->status); return 0;
	case COLUMN_IBSNMPD_ROUTE_CHECK_OFFENDERS:
		mib_set_unsigned(vb, ASN_GAUGE, capped(c->offenders));
		return 0;
	case COLUMN_IBSNMPD_ROUTE_CHECK_LAST_RUN: {
		size_t len = 0;
		time_t t = c->at;
		u_char *dt;

		if (!t)
			return -1; /* never run */
		dt = date_n_time(&t, &len);
		mib_set_octets(vb, dt, len);
		return 0;
	}
	default: return -1;
	}
}

static int check_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		       const void *snap)
{
	return route_mib_check_column(snap, ((const struct route_check_result *)row)->id, column,
				      vb);
}

static int offender_column(const struct route_offender *o, unsigned column,
			   netsnmp_variable_list *vb)
{
	switch (column) {
	case COLUMN_IBSNMPD_ROUTE_OFFENDER_KIND: mib_set_int(vb, o->kind); return 0;
	case COLUMN_IBSNMPD_ROUTE_OFFENDER_NODE_GUID: mib_set_be_octets(vb, o->guid, 8); return 0;
	case COLUMN_IBSNMPD_ROUTE_OFFENDER_PORT: mib_set_unsigned(vb, ASN_UNSIGNED, o->port); return 0;
	case COLUMN_IBSNMPD_ROUTE_OFFENDER_LID: mib_set_unsigned(vb, ASN_UNSIGNED, o->lid); return 0;
	case COLUMN_IBSNMPD_ROUTE_OFFENDER_COUNT:
		mib_set_unsigned(vb, ASN_GAUGE, capped(o->count));
		return 0;
	case COLUMN_IBSNMPD_ROUTE_OFFENDER_DESCRIPTION:
		mib_set_octets(vb, o->desc, strlen(o->desc));
		return 0;
	default: return -1;
	}
}

static int offender_value(const void *row, unsigned column, netsnmp_variable_list *vb,
			  const void *snap)
{
	(void)snap;
	return offender_column(row, column, vb);
}

static int load_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		      const void *snap)
{
	const struct route_port_load *l = row;

	(void)snap;
	switch (column) {
	case COLUMN_IBSNMPD_ROUTE_LOAD_LIDS: mib_set_unsigned(vb, ASN_GAUGE, l->lids); return 0;
	case COLUMN_IBSNMPD_ROUTE_LOAD_PATHS: mib_set_unsigned(vb, ASN_GAUGE, capped(l->paths)); return 0;
	case COLUMN_IBSNMPD_ROUTE_LOAD_DIRECTION:
		mib_set_int(vb, l->direction > 0 ? 1 : l->direction < 0 ? 2 : 3);
		return 0;
	default: return -1;
	}
}

static int hop_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		     const void *snap)
{
	(void)snap;
	if (column != COLUMN_IBSNMPD_ROUTE_HOP_PAIRS)
		return -1;
	mib_set_unsigned(vb, ASN_GAUGE, capped(((const struct route_hop_count *)row)->pairs));
	return 0;
}

int route_mib_register(struct route_area *a)
{
	struct route_mib *m = &a->mib;

	m->scalars = (struct mib_scalars){
		.name = "ibsnmpdRouting", .group_oid = routing_oid,
		.group_oid_len = OID_LENGTH(routing_oid), .first = SCALAR_IBSNMPD_ROUTING_SOURCE,
		.last = SCALAR_IBSNMPD_ROUTING_CA_PAIRS_REACHED, .snapshot = scalars_snapshot,
		.value = scalar_value, .ctx = a, .one_by_one = true, /* the tables are inside */
	};
	m->checks = (struct mib_table){
		.name = "ibsnmpdRouteCheckTable", .table_oid = checks_oid,
		.table_oid_len = OID_LENGTH(checks_oid), .first_column = COLUMN_IBSNMPD_ROUTE_CHECK_NAME,
		.last_column = COLUMN_IBSNMPD_ROUTE_CHECK_LAST_RUN, .rows = check_rows,
		.value = check_value, .ctx = a,
	};
	m->offenders = (struct mib_table){
		.name = "ibsnmpdRouteOffenderTable", .table_oid = offenders_oid,
		.table_oid_len = OID_LENGTH(offenders_oid),
		.first_column = COLUMN_IBSNMPD_ROUTE_OFFENDER_KIND,
		.last_column = COLUMN_IBSNMPD_ROUTE_OFFENDER_DESCRIPTION, .rows = offender_rows,
		.value = offender_value, .ctx = a,
	};
	m->loads = (struct mib_table){
		.name = "ibsnmpdRouteLoadTable", .table_oid = loads_oid,
		.table_oid_len = OID_LENGTH(loads_oid), .first_column = COLUMN_IBSNMPD_ROUTE_LOAD_LIDS,
		.last_column = COLUMN_IBSNMPD_ROUTE_LOAD_DIRECTION, .rows = load_rows,
		.value = load_value, .ctx = a,
	};
	m->hops = (struct mib_table){
		.name = "ibsnmpdRouteHopTable", .table_oid = hops_oid,
		.table_oid_len = OID_LENGTH(hops_oid), .first_column = COLUMN_IBSNMPD_ROUTE_HOP_PAIRS,
		.last_column = COLUMN_IBSNMPD_ROUTE_HOP_PAIRS, .rows = hop_rows, .value = hop_value,
		.ctx = a,
	};
	m->sms = (struct mib_table){
		.name = "ibsnmpdRouteSmTable", .table_oid = sms_oid,
		.table_oid_len = OID_LENGTH(sms_oid), .first_column = COLUMN_IBSNMPD_ROUTE_SM_NAME,
		.last_column = COLUMN_IBSNMPD_ROUTE_SM_ACT_COUNT_STILL, .rows = sm_rows,
		.value = sm_value, .ctx = a,
	};
	m->subnet_scalars = (struct mib_scalars){
		.name = "ibsnmpdRoutePreviousMasterSm", .group_oid = routing_oid,
		.group_oid_len = OID_LENGTH(routing_oid),
		.first = SCALAR_IBSNMPD_ROUTE_PREVIOUS_MASTER_SM,
		.last = SCALAR_IBSNMPD_ROUTE_TABLES_PUBLICATIONS, .snapshot = subnet_snapshot,
		.value = subnet_scalar_value, .ctx = a, .one_by_one = true,
	};
	if (mib_scalars_register(&m->scalars))
		return -1;
	if (mib_scalars_register(&m->subnet_scalars)) {
		mib_scalars_unregister(&m->scalars);
		return -1;
	}
	if (mib_table_register(&m->checks) || mib_table_register(&m->offenders) ||
	    mib_table_register(&m->loads) || mib_table_register(&m->hops) ||
	    mib_table_register(&m->sms)) {
		route_mib_unregister(a);
		return -1;
	}
	return 0;
}

void route_mib_unregister(struct route_area *a)
{
	struct route_mib *m = &a->mib;

	if (m->sms.reg)
		mib_table_unregister(&m->sms);
	if (m->hops.reg)
		mib_table_unregister(&m->hops);
	if (m->loads.reg)
		mib_table_unregister(&m->loads);
	if (m->offenders.reg)
		mib_table_unregister(&m->offenders);
	if (m->checks.reg)
		mib_table_unregister(&m->checks);
	mib_scalars_unregister(&m->subnet_scalars);
	mib_scalars_unregister(&m->scalars);
}
