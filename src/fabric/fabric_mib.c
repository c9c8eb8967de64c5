/* The links of the subnet:
 *   IBSNMPD-MIB::ibsnmpdFabricPortTable   every port, from the last sweep's
 *                                         snapshot (fabric_sweep.c)
 *   IBSNMPD-MIB::ibsnmpdFabric.2-5        the baseline: its reset (SET), its
 *                                         counts
 *   IBSNMPD-MIB::ibsnmpdLinkDown, ...Up, ...Degraded, ...Restored
 * Each column is a PortInfo field of the row (struct fabric_port's pi) or a
 * value fabric_link.c derived from them. */
#include <string.h>

#include "ibsnmpd/config.h"
#include "ibsnmpd/fabric.h"
#include "ibsnmpd/mib_oids.h"
#include "ibsnmpd/mib_set.h"
#include "ibsnmpd/node.h"
#include "ibsnmpd/notify.h"

static const oid port_table_oid[] = {OID_IBSNMPD_FABRIC_PORT_TABLE};
static const oid fabric_oid[] = {OID_IBSNMPD_FABRIC};

static struct fabric_area *served;

static int port_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		      const void *snap)
{
	const struct fabric_port *p = row;
	const struct sma_portinfo *pi = &p->pi;
	bool info = p->have_info;

	(void)snap;
	switch (column) {
	case COLUMN_IBSNMPD_FABRIC_PORT_NODE_DESCRIPTION:
		mib_set_octets(vb, p->node_desc, strlen(p->node_desc));
		return 0;
	case COLUMN_IBSNMPD_FABRIC_PORT_NODE_TYPE:
		if (p->node_type < 1 || p->node_type > 3)
			return -1;
		mib_set_int(vb, p->node_type);
		return 0;
	case COLUMN_IBSNMPD_FABRIC_PORT_LID: mib_set_unsigned(vb, ASN_UNSIGNED, p->lid); return 0;
	case COLUMN_IBSNMPD_FABRIC_PORT_LINK_STATE:
		/* a node no longer reached: its links are down */
		if (p->gone && p->base_linked) {
			mib_set_int(vb, 1);
			return 0;
		}
		if (!info || pi->state < 1 || pi->state > 5)
			return -1;
		mib_set_int(vb, pi->state);
		return 0;
	case COLUMN_IBSNMPD_FABRIC_PORT_PHYS_STATE:
		if (!info || p->gone || pi->phys_state < 1 || pi->phys_state > 7)
			return -1;
		mib_set_int(vb, pi->phys_state);
		return 0;
	case COLUMN_IBSNMPD_FABRIC_PORT_WIDTH_ACTIVE:
		if (!info && !p->gone)
			return -1;
		mib_set_unsigned(vb, ASN_UNSIGNED, p->lanes);
		return 0;
	case COLUMN_IBSNMPD_FABRIC_PORT_WIDTH_SUPPORTED:
		if (!info)
			return -1;
		mib_set_unsigned(vb, ASN_UNSIGNED, fabric_widest_lanes(pi->width_supported));
		return 0;
	case COLUMN_IBSNMPD_FABRIC_PORT_WIDTH_ENABLED:
		if (!info)
			return -1;
		mib_set_unsigned(vb, ASN_UNSIGNED, fabric_widest_lanes(pi->width_enabled));
		return 0;
	case COLUMN_IBSNMPD_FABRIC_PORT_SPEED_ACTIVE:
		if (!info)
			return -1;
		mib_set_int(vb, fabric_active_speed(pi));
		return 0;
	case COLUMN_IBSNMPD_FABRIC_PORT_SPEED_SUPPORTED:
	case COLUMN_IBSNMPD_FABRIC_PORT_SPEED_ENABLED: {
		int s = column == COLUMN_IBSNMPD_FABRIC_PORT_SPEED_SUPPORTED
			? fabric_supported_speed(pi) : fabric_enabled_speed(pi);

		if (!info || !s)
			return -1;
		mib_set_int(vb, s);
		return 0;
	}
	case COLUMN_IBSNMPD_FABRIC_PORT_RATE:
		if (!info && !p->gone)
			return -1;
		mib_set_unsigned(vb, ASN_UNSIGNED, p->rate_mbps);
		return 0;
	case COLUMN_IBSNMPD_FABRIC_PORT_REMOTE_NODE_GUID:
		if (p->remote_guid)
			mib_set_be_octets(vb, p->remote_guid, 8);
		else
			mib_set_octets(vb, "", 0);
		return 0;
	case COLUMN_IBSNMPD_FABRIC_PORT_REMOTE_NODE_DESCRIPTION:
		mib_set_octets(vb, p->remote_desc, p->remote_guid ? strlen(p->remote_desc) : 0);
		return 0;
	case COLUMN_IBSNMPD_FABRIC_PORT_REMOTE_PORT:
		mib_set_unsigned(vb, ASN_UNSIGNED, p->remote_guid ? p->remote_port : 0);
		return 0;
	case COLUMN_IBSNMPD_FABRIC_PORT_DEGRADED: mib_set_int(vb, mib_truth(p->degraded)); return 0;
	case COLUMN_IBSNMPD_FABRIC_PORT_LAST_CHANGE:
		if (!p->last_change)
			return -1;
		mib_set_unsigned(vb, ASN_UNSIGNED, (unsigned long)p->last_change);
		return 0;
	case COLUMN_IBSNMPD_FABRIC_PORT_MTU:
		if (!info)
			return -1;
		mib_set_unsigned(vb, ASN_UNSIGNED, sma_mtu_octets(pi->neighbor_mtu));
		return 0;
	case COLUMN_IBSNMPD_FABRIC_PORT_OPER_VLS:
		if (!info)
			return -1;
		mib_set_unsigned(vb, ASN_UNSIGNED, sma_vl_count(pi->oper_vls));
		return 0;
	case COLUMN_IBSNMPD_FABRIC_PORT_BASELINE_LINKED:
		mib_set_int(vb, mib_truth(p->base_linked));
		return 0;
	case COLUMN_IBSNMPD_FABRIC_PORT_BASELINE_WIDTH:
		mib_set_unsigned(vb, ASN_UNSIGNED, p->base_linked ? p->base_lanes : 0);
		return 0;
	case COLUMN_IBSNMPD_FABRIC_PORT_BASELINE_SPEED:
		if (!p->base_linked || p->base_speed < 1 || p->base_speed > 9)
			return -1;
		mib_set_int(vb, p->base_speed);
		return 0;
	case COLUMN_IBSNMPD_FABRIC_PORT_STALE: mib_set_int(vb, mib_truth(p->stale)); return 0;
	default: return -1;
	}
}

static const struct mib_rows *port_rows(const void *ctx, const void **snap)
{
	const struct fabric_snapshot *s = cache_snapshot(ctx);

	*snap = s;
	return s ? &s->rows : NULL;
}

static struct mib_table port_table = {
	.name = "ibsnmpdFabricPortTable",
	.table_oid = port_table_oid,
	.table_oid_len = OID_LENGTH(port_table_oid),
	.first_column = COLUMN_IBSNMPD_FABRIC_PORT_NODE_DESCRIPTION,
	.last_column = COLUMN_IBSNMPD_FABRIC_PORT_STALE,
	.rows = port_rows,
	.value = port_value,
};

/* ---- the baseline's scalars ---- */

static int baseline_value(unsigned column, netsnmp_variable_list *vb, const void *snap)
{
	const struct fabric_snapshot *s = snap;

	switch (column) {
	case SCALAR_IBSNMPD_FABRIC_BASELINE_RESET: mib_set_int(vb, mib_truth(0)); return 0;
	case SCALAR_IBSNMPD_FABRIC_BASELINE_LINKS:
		mib_set_unsigned(vb, ASN_GAUGE, s->baseline_links);
		return 0;
	case SCALAR_IBSNMPD_FABRIC_PORTS_LINK_LOST:
		mib_set_unsigned(vb, ASN_GAUGE, s->links_lost);
		return 0;
	case SCALAR_IBSNMPD_FABRIC_PORTS_DEGRADED:
		mib_set_unsigned(vb, ASN_GAUGE, s->degraded);
		return 0;
	default: return -1;
	}
}

static const void *baseline_snapshot(const void *ctx)
{
	return cache_snapshot(ctx);
}

/* A SET of ibsnmpdFabricBaselineReset: true(1) resets, false(2) does nothing. */
struct reset_tx {
	bool reset;
};

static struct reset_tx the_tx;

static void *reset_begin(void *area)
{
	(void)area;
	the_tx.reset = false;
	return &the_tx;
}

static int stage_reset(void *tx, const struct mib_set_request *req)
{
	((struct reset_tx *)tx)->reset = req->value == 1;
	return SNMP_ERR_NOERROR;
}

static int reset_action(void *tx, unsigned token)
{
	(void)tx;
	(void)token;
	return SNMP_ERR_NOERROR;
}

/* COMMIT: forgetting the baseline cannot be undone, so it happens only
 * when the whole PDU has worked */
static void reset_commit(void *tx)
{
	if (((struct reset_tx *)tx)->reset)
		fabric_reset_baseline(served);
}

static void reset_end(void *tx)
{
	(void)tx;
}

static struct mib_set_domain baseline_domain = {
	.name = "ibsnmpdFabric", .begin = reset_begin, .action = reset_action,
	.commit = reset_commit, .end = reset_end,
};

static const struct mib_column_set baseline_columns[] = {
	{SCALAR_IBSNMPD_FABRIC_BASELINE_RESET, MIB_VALUE_TRUTH, 0, 0, stage_reset},
};

static const struct mib_set_table baseline_set = {
	.domain = &baseline_domain, .columns = baseline_columns,
	.n_columns = sizeof(baseline_columns) / sizeof(baseline_columns[0]),
};

/* Beside the table in ibsnmpdFabric: registered one by one (mib_table.h) */
static struct mib_scalars baseline_scalars = {
	.name = "ibsnmpdFabric", .group_oid = fabric_oid, .group_oid_len = OID_LENGTH(fabric_oid),
	.first = SCALAR_IBSNMPD_FABRIC_BASELINE_RESET, .last = SCALAR_IBSNMPD_FABRIC_PORTS_DEGRADED,
	.snapshot = baseline_snapshot, .value = baseline_value, .set = &baseline_set,
	.one_by_one = true,
};

/* ---- notifications ---- */

static const unsigned link_objects[] = {
	COLUMN_IBSNMPD_FABRIC_PORT_NODE_DESCRIPTION, COLUMN_IBSNMPD_FABRIC_PORT_REMOTE_NODE_GUID,
	COLUMN_IBSNMPD_FABRIC_PORT_REMOTE_NODE_DESCRIPTION, COLUMN_IBSNMPD_FABRIC_PORT_REMOTE_PORT,
	COLUMN_IBSNMPD_FABRIC_PORT_LINK_STATE, COLUMN_IBSNMPD_FABRIC_PORT_PHYS_STATE,
	COLUMN_IBSNMPD_FABRIC_PORT_WIDTH_ACTIVE, COLUMN_IBSNMPD_FABRIC_PORT_SPEED_ACTIVE,
	COLUMN_IBSNMPD_FABRIC_PORT_RATE,
};

static const unsigned degraded_objects[] = {
	COLUMN_IBSNMPD_FABRIC_PORT_BASELINE_WIDTH, COLUMN_IBSNMPD_FABRIC_PORT_BASELINE_SPEED,
};

static void add_column(netsnmp_variable_list **vl, const struct fabric_port *p, unsigned column)
{
	oid name[MAX_OID_LEN];
	size_t len = OID_LENGTH(port_table_oid);
	netsnmp_variable_list vb;

	memcpy(name, port_table_oid, sizeof(port_table_oid));
	name[len++] = 1;
	name[len++] = column;
	mib_index_put_guid(name + len, p->guid);
	len += MIB_GUID_INDEX_LEN;
	name[len++] = p->port;
	memset(&vb, 0, sizeof(vb));
	vb.val.string = vb.buf;
	if (port_value(p, column, &vb, NULL)) {
		/* no value (e.g. PhysState of a node no longer reached) */
		snmp_free_var_internals(&vb);
		return;
	}
	snmp_varlist_add_variable(vl, name, len, vb.type, vb.val.string, vb.val_len);
	snmp_free_var_internals(&vb);
}

/* ibsnmpdNodeContext of the row's node: the context an NMS that added the
 * node as a device knows it by (none if its type gets no context). */
static void add_node_context(netsnmp_variable_list **vl, const struct fabric_port *p)
{
	static const oid node_table_oid[] = {OID_IBSNMPD_NODE_TABLE};
	oid name[OID_LENGTH(node_table_oid) + 2 + MIB_GUID_INDEX_LEN];
	char context[NODE_CONTEXT_MAX];

	if (p->node_type >= 32 || !(ibsnmpd_cfg.node_context_types >> p->node_type & 1))
		return;
	memcpy(name, node_table_oid, sizeof(node_table_oid));
	name[OID_LENGTH(node_table_oid)] = 1;
	name[OID_LENGTH(node_table_oid) + 1] = COLUMN_IBSNMPD_NODE_CONTEXT;
	mib_index_put_guid(name + OID_LENGTH(node_table_oid) + 2, p->guid);
	node_context_name(p->guid, context, sizeof(context));
	snmp_varlist_add_variable(vl, name, OID_LENGTH(name), ASN_OCTET_STR, context,
				  strlen(context));
}

static void send_link(const struct fabric_port *p, unsigned number)
{
	oid trap[] = {OID_IBSNMPD_NOTIFICATIONS, 0};
	netsnmp_variable_list *vl;

	trap[OID_LENGTH(trap) - 1] = number;
	vl = mib_notification_new(trap, OID_LENGTH(trap));
	if (!vl)
		return;
	for (size_t i = 0; i < sizeof(link_objects) / sizeof(link_objects[0]); i++)
		add_column(&vl, p, link_objects[i]);
	if (number == 3)
		for (size_t i = 0; i < sizeof(degraded_objects) / sizeof(degraded_objects[0]); i++)
			add_column(&vl, p, degraded_objects[i]);
	add_node_context(&vl, p);
	/* the notification is the record; the log keeps to the agent's own state */
	DEBUGMSGTL(("ibsnmpd:fabric", "link %s: %s port %u <-> %s port %u (%u lanes, speed %d)\n",
		    number == 1 ? "down" : number == 2 ? "up" : number == 3 ? "degraded" : "restored",
		    p->node_desc, p->port, p->remote_guid ? p->remote_desc : "?", p->remote_port,
		    p->lanes, p->speed));
	notify_send(NOTIFY_LINK, number, p->lid, vl);
}

void fabric_notify(const struct fabric_snapshot *s)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct fabric_port *p = &s->ports[i];

		/* FABRIC_EV_* bit N is ibsnmpdNotifications.N: up before degraded */
		for (unsigned n = 1; n <= 4; n++)
			if (p->events & 1u << n)
				send_link(p, n);
	}
}

int fabric_mib_register(struct fabric_area *a)
{
	served = a;
	baseline_domain.area = a;
	port_table.ctx = baseline_scalars.ctx = &a->group;
	if (mib_table_register(&port_table) || mib_scalars_register(&baseline_scalars))
		return -1;
	return 0;
}

void fabric_mib_unregister(void)
{
	mib_table_unregister(&port_table);
	mib_scalars_unregister(&baseline_scalars);
	mib_set_domain_free(&baseline_domain);
}
