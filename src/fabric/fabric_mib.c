/* The links of the subnet:
 *   IBSNMPD-MIB::ibsnmpdFabricPortTable   every port, from the last sweep's
 *                                         snapshot (fabric_sweep.c)
 *   IBSNMPD-MIB::ibsnmpdFabric.2-5        the baseline: its reset (SET), its
 *                                         counts
 * Each column is a PortInfo field of the row (struct fabric_port's pi) or a
 * value fabric_link.c derived from them; the notifications (fabric_notify.c)
 * carry the same. */
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/fabric.h"
#include "ibsnmpd/mib_oids.h"
#include "ibsnmpd/mib_set.h"

static const oid port_table_oid[] = {OID_IBSNMPD_FABRIC_PORT_TABLE};
static const oid fabric_oid[] = {OID_IBSNMPD_FABRIC};

/* The health columns (fabric_health.c computes them). */
static int fabric_health_column(const struct fabric_health *h, unsigned column,
				netsnmp_variable_list *vb)
{
	switch (column) {
	case COLUMN_IBSNMPD_FABRIC_PORT_FLAPPING: mib_set_int(vb, mib_truth(h->flapping)); return 0;
	case COLUMN_IBSNMPD_FABRIC_PORT_RECENT_DOWNS:
		mib_set_unsigned(vb, ASN_GAUGE, h->n_downs);
		return 0;
	case COLUMN_IBSNMPD_FABRIC_PORT_BER_SPAN:
		mib_set_unsigned(vb, ASN_UNSIGNED, h->ber_valid ? fabric_ber_span(h) : 0);
		return 0;
	case COLUMN_IBSNMPD_FABRIC_PORT_BER_HIGH: mib_set_int(vb, mib_truth(h->ber_high)); return 0;
	case COLUMN_IBSNMPD_FABRIC_PORT_XMIT_WAIT_PERMILLE:
		if (!h->have_xmit_wait)
			return -1;
		mib_set_unsigned(vb, ASN_UNSIGNED, h->xmit_wait_permille);
		return 0;
	default:
		break;
	}
	if (!h->ber_valid)
		return -1;
	switch (column) {
	case COLUMN_IBSNMPD_FABRIC_PORT_BER_RAW_MANTISSA:
		mib_set_unsigned(vb, ASN_UNSIGNED, h->ber_raw_m);
		return 0;
	case COLUMN_IBSNMPD_FABRIC_PORT_BER_RAW_EXPONENT: mib_set_int(vb, h->ber_raw_e); return 0;
	case COLUMN_IBSNMPD_FABRIC_PORT_BER_POST_MANTISSA:
		mib_set_unsigned(vb, ASN_UNSIGNED, h->ber_post_m);
		return 0;
	case COLUMN_IBSNMPD_FABRIC_PORT_BER_POST_EXPONENT: mib_set_int(vb, h->ber_post_e); return 0;
	default: return -1;
	}
}

int fabric_mib_column(const struct fabric_port *p, unsigned column, netsnmp_variable_list *vb)
{
	const struct fabric_portinfo *pi = &p->pi;
	bool info = p->have_info;

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
		if (!fabric_port_link_state(p))
			return -1;
		mib_set_int(vb, fabric_port_link_state(p));
		return 0;
	case COLUMN_IBSNMPD_FABRIC_PORT_PHYS_STATE:
		if (!fabric_port_phys_state(p))
			return -1;
		mib_set_int(vb, fabric_port_phys_state(p));
		return 0;
	case COLUMN_IBSNMPD_FABRIC_PORT_WIDTH_ACTIVE:
		if (!fabric_port_rate_known(p))
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
		if (!fabric_port_rate_known(p))
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
	default: return fabric_health_column(&p->health, column, vb);
	}
}

static int port_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		      const void *snap)
{
	(void)snap;
	return fabric_mib_column(row, column, vb);
}

static const struct mib_rows *port_rows(const void *ctx, const void **snap)
{
	const struct fabric_snapshot *s = cache_snapshot(ctx);

	*snap = s;
	return s ? &s->rows : NULL;
}

static const struct mib_table port_table_template = {
	.name = "ibsnmpdFabricPortTable",
	.table_oid = port_table_oid,
	.table_oid_len = OID_LENGTH(port_table_oid),
	.first_column = COLUMN_IBSNMPD_FABRIC_PORT_NODE_DESCRIPTION,
	.last_column = COLUMN_IBSNMPD_FABRIC_PORT_XMIT_WAIT_PERMILLE,
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
	struct fabric_area *area;
	bool reset;
};

static void *reset_begin(void *area)
{
	struct reset_tx *tx = calloc(1, sizeof(*tx));

	if (tx)
		tx->area = area;
	return tx;
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
static void reset_commit(void *p)
{
	struct reset_tx *tx = p;

	if (tx->reset)
		fabric_reset_baseline(tx->area);
}

static void reset_end(void *tx)
{
	free(tx);
}

static const struct mib_set_domain domain_template = {
	.name = "ibsnmpdFabric", .begin = reset_begin, .action = reset_action,
	.commit = reset_commit, .end = reset_end,
};

static const struct mib_column_set baseline_columns[] = {
	{SCALAR_IBSNMPD_FABRIC_BASELINE_RESET, MIB_VALUE_TRUTH, 0, 0, stage_reset},
};

/* Beside the table in ibsnmpdFabric: registered one by one (mib_table.h) */
static const struct mib_scalars baseline_template = {
	.name = "ibsnmpdFabric", .group_oid = fabric_oid, .group_oid_len = OID_LENGTH(fabric_oid),
	.first = SCALAR_IBSNMPD_FABRIC_BASELINE_RESET, .last = SCALAR_IBSNMPD_FABRIC_PORTS_DEGRADED,
	.snapshot = baseline_snapshot, .value = baseline_value, .one_by_one = true,
};

int fabric_mib_register(struct fabric_mib *m, struct fabric_area *a, const char *context)
{
	memset(m, 0, sizeof(*m));
	m->area = a;
	m->domain = domain_template;
	m->domain.area = a;
	m->baseline_set = (struct mib_set_table){
		.domain = &m->domain, .columns = baseline_columns,
		.n_columns = sizeof(baseline_columns) / sizeof(baseline_columns[0]),
	};
	m->port_table = port_table_template;
	m->port_table.ctx = &a->group;
	m->port_table.context = context;
	m->baseline = baseline_template;
	m->baseline.ctx = &a->group;
	m->baseline.context = context;
	m->baseline.set = &m->baseline_set;
	if (mib_table_register(&m->port_table) || mib_scalars_register(&m->baseline))
		return -1;
	return 0;
}

void fabric_mib_unregister(struct fabric_mib *m)
{
	mib_table_unregister(&m->port_table);
	mib_scalars_unregister(&m->baseline);
	mib_set_domain_free(&m->domain);
}
