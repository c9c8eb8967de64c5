/* Every node as an SNMP device (node_dir.c builds what is served here):
 *   IBSNMPD-MIB::ibsnmpdNodeTable   the directory, default context
 *   in each node's context (ib-<GUID>):
 *     SNMPv2-MIB system group       <- the node's entry (NodeInfo, NodeDescription)
 *     IF-MIB ifNumber, ifTable,     <- the node's interfaces: link columns from
 *     ifXTable                         PortInfo (the fabric sweep), counters from
 *                                      PortCounters[Extended] (the PM sweep)
 *     ENTITY-MIB, LLDP-MIB          <- node_entity_mib.c, node_lldp_mib.c
 *   a context through two registrations: internet (mib-2, SMA-MIB,
 *   ibsnmpdPortExtTable) and lldpMIB.
 * IF-MIB and SNMPv2-MIB are IETF modules; their OIDs are facts written
 * here (the project's generated header covers its own modules only). */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ibsnmpd/mad_engine.h"
#include "ibsnmpd/mib_oids.h"
#include "ibsnmpd/node.h"

static const oid node_table_oid[] = {OID_IBSNMPD_NODE_TABLE};
static const oid mib2_oid[] = {1, 3, 6, 1, 2, 1};                   /* SNMPv2-SMI::mib-2 */
static const oid system_oid[] = {1, 3, 6, 1, 2, 1, 1};              /* SNMPv2-MIB::system */
static const oid interfaces_oid[] = {1, 3, 6, 1, 2, 1, 2};          /* IF-MIB::interfaces */
static const oid if_table_oid[] = {1, 3, 6, 1, 2, 1, 2, 2};         /* IF-MIB::ifTable */
static const oid ifx_table_oid[] = {1, 3, 6, 1, 2, 1, 31, 1, 1};    /* IF-MIB::ifXTable */
static const oid product_oid[][OID_LENGTH((oid[]){OID_IBSNMPD_SWITCH_NODE})] = {
	[0] = {OID_IBSNMPD_CHANNEL_ADAPTER_NODE},
	[1] = {OID_IBSNMPD_SWITCH_NODE},
	[2] = {OID_IBSNMPD_ROUTER_NODE},
};

/* SNMPv2-MIB system scalars */
enum { SYSTEM_DESCR = 1, SYSTEM_OBJECT_ID, SYSTEM_UP_TIME, SYSTEM_CONTACT, SYSTEM_NAME, SYSTEM_LOCATION,
       SYSTEM_SERVICES };
/* IF-MIB ifTable columns served (ifSpecific, ifOutQLen and the NUcast
 * columns are deprecated: not served) */
enum { IF_INDEX = 1, IF_DESCR, IF_TYPE, IF_MTU, IF_SPEED, IF_PHYS_ADDRESS, IF_ADMIN_STATUS,
       IF_OPER_STATUS, IF_LAST_CHANGE, IF_IN_OCTETS, IF_IN_UCAST_PKTS, IF_IN_NUCAST_PKTS,
       IF_IN_DISCARDS, IF_IN_ERRORS, IF_IN_UNKNOWN_PROTOS, IF_OUT_OCTETS, IF_OUT_UCAST_PKTS,
       IF_OUT_NUCAST_PKTS, IF_OUT_DISCARDS, IF_OUT_ERRORS };
/* IF-MIB ifXTable columns */
enum { IFX_NAME = 1, IFX_IN_MCAST, IFX_IN_BCAST, IFX_OUT_MCAST, IFX_OUT_BCAST, IFX_HC_IN_OCTETS,
       IFX_HC_IN_UCAST, IFX_HC_IN_MCAST, IFX_HC_IN_BCAST, IFX_HC_OUT_OCTETS, IFX_HC_OUT_UCAST,
       IFX_HC_OUT_MCAST, IFX_HC_OUT_BCAST, IFX_LINK_UP_DOWN_TRAP_ENABLE, IFX_HIGH_SPEED,
       IFX_PROMISCUOUS_MODE, IFX_CONNECTOR_PRESENT, IFX_ALIAS, IFX_DISCONTINUITY_TIME };

#define IANA_IF_TYPE_INFINIBAND 199

static void set_counter32(netsnmp_variable_list *vb, uint64_t v)
{
	mib_set_unsigned(vb, ASN_COUNTER, (unsigned long)(v & 0xffffffffu));
}

static void set_counter64(netsnmp_variable_list *vb, uint64_t v)
{
	struct counter64 c = {.high = (u_long)(v >> 32), .low = (u_long)(v & 0xffffffffu)};

	snmp_set_var_typed_value(vb, ASN_COUNTER64, &c, sizeof(c));
}

/* ---- ibsnmpdNodeTable ---------------------------------------------------- */

static int node_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		      const void *snap)
{
	const struct node_entry *e = row;

	(void)snap;
	switch (column) {
	case COLUMN_IBSNMPD_NODE_DESCRIPTION: mib_set_octets(vb, e->desc, strlen(e->desc)); return 0;
	case COLUMN_IBSNMPD_NODE_TYPE:
		if (e->type < 1 || e->type > 3)
			return -1;
		mib_set_int(vb, e->type);
		return 0;
	case COLUMN_IBSNMPD_NODE_LID: mib_set_unsigned(vb, ASN_UNSIGNED, e->lid); return 0;
	case COLUMN_IBSNMPD_NODE_PORTS: mib_set_unsigned(vb, ASN_UNSIGNED, e->num_ports); return 0;
	case COLUMN_IBSNMPD_NODE_CONTEXT:
		mib_set_octets(vb, e->context, strlen(e->context));
		return 0;
	case COLUMN_IBSNMPD_NODE_REACHABLE: mib_set_int(vb, mib_truth(e->reachable)); return 0;
	case COLUMN_IBSNMPD_NODE_VENDOR_ID:
		if (!e->has_ident)
			return -1;
		mib_set_unsigned(vb, ASN_UNSIGNED, e->vendor_id);
		return 0;
	case COLUMN_IBSNMPD_NODE_DEVICE_ID:
		if (!e->has_ident)
			return -1;
		mib_set_unsigned(vb, ASN_UNSIGNED, e->device_id);
		return 0;
	case COLUMN_IBSNMPD_NODE_NAME:
		mib_set_octets(vb, node_sys_name(e), strlen(node_sys_name(e)));
		return 0;
	case COLUMN_IBSNMPD_NODE_ANSWER_TIME:
	case COLUMN_IBSNMPD_NODE_MAD_TIMEOUT: {
		/* the MAD engine's estimate now: it moves with each answer, as
		 * ibsnmpdStats' counters do, and has no snapshot of its own */
		struct mad_answer_time t;

		if (!e->lid || !mad_engine_lid_answer_time(e->lid, &t))
			return -1;
		mib_set_unsigned(vb, ASN_UNSIGNED, column == COLUMN_IBSNMPD_NODE_ANSWER_TIME ?
				 t.smoothed_us : t.timeout_ms);
		return 0;
	}
	default: return -1;
	}
}

static const struct mib_rows *node_rows(const void *ctx, const void **snap)
{
	const struct node_dir *d = cache_snapshot(ctx);

	*snap = d;
	return d ? &d->rows : NULL;
}

static const struct mib_table node_table_template = {
	.name = "ibsnmpdNodeTable", .table_oid = node_table_oid,
	.table_oid_len = OID_LENGTH(node_table_oid),
	.first_column = COLUMN_IBSNMPD_NODE_DESCRIPTION,
	.last_column = COLUMN_IBSNMPD_NODE_MAD_TIMEOUT, .rows = node_rows, .value = node_value,
};

int node_table_register(struct node_table_mib *m, struct cache_group *dir)
{
	m->table = node_table_template;
	m->table.ctx = dir;
	return mib_table_register(&m->table);
}

void node_table_unregister(struct node_table_mib *m)
{
	mib_table_unregister(&m->table);
}

const struct node_entry *node_context_entry(const void *ctx)
{
	const struct node_context_regs *r = ctx;

	return node_dir_find(cache_snapshot(r->dir), r->guid);
}

const struct mib_rows *node_rows_at(struct mib_rows *header, const void *array, size_t count,
				    size_t stride, unsigned (*index_of)(const void *data, oid *index))
{
	*header = (struct mib_rows){.count = count, .array = array, .stride = stride,
				    .index_of = index_of};
	return header;
}

/* ---- a node's context: system group ---------------------------------------- */

static int system_value(unsigned column, netsnmp_variable_list *vb, const void *snap)
{
	const struct node_entry *e = snap;
	char text[256];

	switch (column) {
	case SYSTEM_DESCR:
		node_sys_descr(e, text, sizeof(text));
		mib_set_octets(vb, text, strlen(text));
		return 0;
	case SYSTEM_OBJECT_ID:
		if (e->type < 1 || e->type > 3)
			return -1;
		snmp_set_var_typed_value(vb, ASN_OBJECT_ID, product_oid[e->type - 1],
					 sizeof(product_oid[0]));
		return 0;
	case SYSTEM_UP_TIME: mib_set_unsigned(vb, ASN_TIMETICKS, netsnmp_get_agent_uptime()); return 0;
	case SYSTEM_CONTACT:
	case SYSTEM_LOCATION: mib_set_octets(vb, "", 0); return 0;
	case SYSTEM_NAME:
		mib_set_octets(vb, node_sys_name(e), strlen(node_sys_name(e)));
		return 0;
	case SYSTEM_SERVICES:
		/* RFC 3418 layers: a switch relays at layer 2, a router at 3, an
		 * adapter is a host (end-to-end 4 and applications 7) */
		mib_set_int(vb, e->type == 2 ? 2 : e->type == 3 ? 4 : 72);
		return 0;
	default: return -1;
	}
}

static const void *context_entry(const void *ctx)
{
	return node_context_entry(ctx);
}

static int if_number_value(unsigned column, netsnmp_variable_list *vb, const void *snap)
{
	if (column != 1)
		return -1;
	mib_set_int(vb, (long)((const struct node_entry *)snap)->n_if);
	return 0;
}

/* ---- a node's context: ifTable, ifXTable ----------------------------------- */

static const struct mib_rows *if_rows(const void *ctx, const void **snap)
{
	const struct node_entry *e = node_context_entry(ctx);

	*snap = e;
	return e ? &e->if_rows : NULL;
}

static int if_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		    const void *snap)
{
	const struct node_entry *e = snap;
	struct node_if view;
	const struct node_if *i = &view;
	const struct node_if_counters *c = &view.c;

	node_if_view(&view, e, row);
	char text[160];
	uint64_t bps;

	switch (column) {
	case IF_INDEX: mib_set_int(vb, i->port); return 0;
	case IF_DESCR:
		node_if_descr(e, i->port, text, sizeof(text));
		mib_set_octets(vb, text, strlen(text));
		return 0;
	case IF_TYPE: mib_set_int(vb, IANA_IF_TYPE_INFINIBAND); return 0;
	case IF_MTU: mib_set_int(vb, i->mtu); return 0;
	case IF_SPEED:
		bps = (uint64_t)node_if_high_speed(i) * 1000000u;
		mib_set_unsigned(vb, ASN_GAUGE, bps > 0xffffffffu ? 0xffffffffu : (unsigned long)bps);
		return 0;
	case IF_PHYS_ADDRESS: mib_set_octets(vb, "", 0); return 0;
	case IF_ADMIN_STATUS: mib_set_int(vb, node_if_admin_status(i)); return 0;
	case IF_OPER_STATUS: mib_set_int(vb, node_if_oper_status(i, e->reachable)); return 0;
	case IF_LAST_CHANGE:
		mib_set_unsigned(vb, ASN_TIMETICKS, node_time_ticks(e->dir, i->last_change));
		return 0;
	default: break;
	}
	if (!i->have_counters)
		return -1;
	switch (column) {
	case IF_IN_OCTETS: set_counter32(vb, c->in_octets); return 0;
	case IF_IN_UCAST_PKTS: set_counter32(vb, c->per_cast ? c->in_ucast : c->in_pkts); return 0;
	case IF_IN_DISCARDS: set_counter32(vb, c->in_discards); return 0;
	case IF_IN_ERRORS: set_counter32(vb, c->in_errors); return 0;
	case IF_IN_UNKNOWN_PROTOS: set_counter32(vb, c->in_unknown); return 0;
	case IF_OUT_OCTETS: set_counter32(vb, c->out_octets); return 0;
	case IF_OUT_UCAST_PKTS: set_counter32(vb, c->per_cast ? c->out_ucast : c->out_pkts); return 0;
	case IF_OUT_DISCARDS: set_counter32(vb, c->out_discards); return 0;
	case IF_OUT_ERRORS: set_counter32(vb, c->out_errors); return 0;
	default: return -1;
	}
}

static int ifx_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		     const void *snap)
{
	const struct node_entry *e = snap;
	struct node_if view;
	const struct node_if *i = &view;
	const struct node_if_counters *c = &view.c;

	node_if_view(&view, e, row);
	char text[160];

	switch (column) {
	case IFX_NAME:
		node_if_name(e, i->port, text, sizeof(text));
		mib_set_octets(vb, text, strlen(text));
		return 0;
	case IFX_LINK_UP_DOWN_TRAP_ENABLE: mib_set_int(vb, 2); return 0; /* ibsnmpdLinkDown instead */
	case IFX_HIGH_SPEED: mib_set_unsigned(vb, ASN_GAUGE, node_if_high_speed(i)); return 0;
	case IFX_PROMISCUOUS_MODE: mib_set_int(vb, 2); return 0;
	case IFX_CONNECTOR_PRESENT: mib_set_int(vb, 1); return 0;
	case IFX_ALIAS:
		/* the other end, as an operator labels a switch port */
		if (i->remote_guid)
			snprintf(text, sizeof(text), "%s port %u",
				 i->remote_desc[0] ? i->remote_desc : "?", i->remote_port);
		else
			text[0] = '\0';
		mib_set_octets(vb, text, strlen(text));
		return 0;
	default: break;
	}
	if (!i->have_counters)
		return -1;
	switch (column) {
	case IFX_IN_MCAST: if (!c->per_cast) return -1; set_counter32(vb, c->in_mcast); return 0;
	case IFX_OUT_MCAST: if (!c->per_cast) return -1; set_counter32(vb, c->out_mcast); return 0;
	case IFX_IN_BCAST:
	case IFX_OUT_BCAST: set_counter32(vb, 0); return 0; /* InfiniBand has no broadcast */
	case IFX_HC_IN_OCTETS: set_counter64(vb, c->in_octets); return 0;
	case IFX_HC_IN_UCAST: set_counter64(vb, c->per_cast ? c->in_ucast : c->in_pkts); return 0;
	case IFX_HC_IN_MCAST: if (!c->per_cast) return -1; set_counter64(vb, c->in_mcast); return 0;
	case IFX_HC_IN_BCAST:
	case IFX_HC_OUT_BCAST: set_counter64(vb, 0); return 0;
	case IFX_HC_OUT_OCTETS: set_counter64(vb, c->out_octets); return 0;
	case IFX_HC_OUT_UCAST: set_counter64(vb, c->per_cast ? c->out_ucast : c->out_pkts); return 0;
	case IFX_HC_OUT_MCAST: if (!c->per_cast) return -1; set_counter64(vb, c->out_mcast); return 0;
	case IFX_DISCONTINUITY_TIME:
		mib_set_unsigned(vb, ASN_TIMETICKS, node_time_ticks(e->dir, c->discontinuity));
		return 0;
	default: return -1;
	}
}

static const struct mib_scalars system_group = {
	.name = "system", .group_oid = system_oid, .group_oid_len = OID_LENGTH(system_oid),
	.first = SYSTEM_DESCR, .last = SYSTEM_SERVICES, .snapshot = context_entry,
	.value = system_value};
static const struct mib_scalars if_number = {
	.name = "ifNumber", .group_oid = interfaces_oid, .group_oid_len = OID_LENGTH(interfaces_oid),
	.first = 1, .last = 1, .snapshot = context_entry, .value = if_number_value};
static const struct mib_table if_table = {
	.name = "ifTable", .table_oid = if_table_oid, .table_oid_len = OID_LENGTH(if_table_oid),
	.first_column = IF_INDEX, .last_column = IF_OUT_ERRORS, .rows = if_rows, .value = if_value};
static const struct mib_table ifx_table = {
	.name = "ifXTable", .table_oid = ifx_table_oid, .table_oid_len = OID_LENGTH(ifx_table_oid),
	.first_column = IFX_NAME, .last_column = IFX_DISCONTINUITY_TIME, .rows = if_rows,
	.value = ifx_value};
/* A context's mib-2, in OID order (ENTITY-MIB is mib-2 47, ENTITY-SENSOR-MIB
 * mib-2 99) */
static const struct mib_member mib2_members[] = {
	{.scalars = &system_group},          {.scalars = &if_number},
	{.table = &if_table},                {.table = &ifx_table},
	{.table = &node_ent_physical_table}, {.table = &node_ent_alias_table},
	{.table = &node_ent_contains_table}, {.scalars = &node_ent_general},
	{.table = &node_ent_sensor_table},
};

int node_mib_register_context(struct node_context_regs *r, struct cache_group *dir,
			      uint64_t guid, const char *name, struct sma_collector *const *sma,
			      struct mib_asked sma_asked)
{
	static const oid internet_oid[] = {1, 3, 6, 1};
	static const oid lldp_oid[] = {1, 0, 8802, 1, 1, 2}; /* LLDP-MIB::lldpMIB */

	r->dir = dir;
	r->guid = guid;
	r->mib2 = (struct mib_subtree){
		.name = "mib-2", .root = mib2_oid, .root_len = OID_LENGTH(mib2_oid),
		.members = mib2_members, .n_members = sizeof(mib2_members) / sizeof(mib2_members[0]),
		.ctx = r};
	sma_mib_subtrees(&r->sma, sma, sma_asked);
	r->all = (struct mib_joined){
		.name = "internet", .root = internet_oid, .root_len = OID_LENGTH(internet_oid),
		.parts = {&r->mib2, &r->sma.sma, &r->sma.port_ext}, .n_parts = 3, .context = name};
	/* LLDP-MIB is outside internet, under iso, whose root a context
	 * holds already (net-snmp's null registration of 1, at the top
	 * priority): a second registration */
	r->lldp = (struct mib_subtree){
		.name = "lldpMIB", .root = lldp_oid, .root_len = OID_LENGTH(lldp_oid),
		.members = node_lldp_members, .n_members = node_n_lldp_members, .ctx = r,
		.context = name};
	if (mib_joined_register(&r->all))
		return -1;
	if (mib_subtree_register(&r->lldp)) {
		mib_joined_unregister(&r->all);
		return -1;
	}
	return 0;
}

void node_mib_unregister_context(struct node_context_regs *r)
{
	mib_subtree_unregister(&r->lldp);
	mib_joined_unregister(&r->all);
}
