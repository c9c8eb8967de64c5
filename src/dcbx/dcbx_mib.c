/* LLDP-EXT-DCBX-MIB (lldpXdcbxMIB = 1.0.8802.1.1.2.1.5.6945), answered from
 * the dcbx snapshot (dcbx_backend.c). Port numbers are ifIndex values (the
 * MIB's rule for a system that is not a bridge).
 *
 *   .1.1    lldpXdcbxPortTable          port enable (DCB state)
 *   .2.1    lldpXdcbxFeatTable          feature flags, the peer's flags
 *   .2.2.1  ...FeatPgNumTCsSupported    scalar: the ports' smallest PG TC count
 *   .2.2.2  ...FeatPgPrioAllocTable     priority -> PG: desired, oper, peer
 *   .2.2.3  ...FeatPgBwAllocTable       PG -> bandwidth %: desired, oper, peer
 *   .2.3.1  ...FeatPfcNumTCPFCSupported scalar: the ports' smallest PFC TC count
 *   .2.3.2  ...FeatPfcTable             priority -> PFC on: desired, oper, peer
 *   .2.4.1  ...FeatAppProtoTable        app entries: selector, id
 *   .2.4.2  ...FeatAppProtoPrioTable    app x priority: desired, oper, peer
 * Objects dcbnl has no source for are not served (noSuchInstance, skipped
 * by walks); mibs/README.md lists them.
 *
 * SETs, one transaction of the SET engine (mib_set.h): every varbind is
 * checked and staged per port (RESERVE1), each port as a whole (RESERVE2:
 * bandwidths sum to 100, PG ids and PFC priorities within the port's TC
 * counts), then ACTION sends the set commands and SET_ALL (delegated: other
 * requests are served meanwhile); the kernel's refusal becomes the varbinds'
 * error; UNDO sends back the previous values of what the kernel took. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ibsnmpd/cache.h"
#include "ibsnmpd/config.h"
#include "ibsnmpd/mib_oids.h"
#include "ibsnmpd/mib_set.h"
#include "ibsnmpd/mib_table.h"
#include "ibsnmpd/netsnmp.h"

#include "dcbx_internal.h"

#include <net-snmp/agent/agent_sysORTable.h>

static const oid port_table_oid[] = {OID_LLDP_XDCBX_PORT_TABLE};
static const oid feat_table_oid[] = {OID_LLDP_XDCBX_FEAT_TABLE};
static const oid pg_numtcs_oid[] = {OID_LLDP_XDCBX_FEAT_PG_NUM_TCS_SUPPORTED};
static const oid prio_table_oid[] = {OID_LLDP_XDCBX_FEAT_PG_PRIO_ALLOC_TABLE};
static const oid bw_table_oid[] = {OID_LLDP_XDCBX_FEAT_PG_BW_ALLOC_TABLE};
static const oid pfc_numtcs_oid[] = {OID_LLDP_XDCBX_FEAT_PFC_NUM_TCPFC_SUPPORTED};
static const oid pfc_table_oid[] = {OID_LLDP_XDCBX_FEAT_PFC_TABLE};
static const oid app_table_oid[] = {OID_LLDP_XDCBX_FEAT_APP_PROTO_TABLE};
static const oid app_prio_table_oid[] = {OID_LLDP_XDCBX_FEAT_APP_PROTO_PRIO_TABLE};
static oid dcbx_mib_oid[] = {OID_LLDP_XDCBX_MIB};

/* ctx: the backend's group */
static const struct mib_rows *rows_of(const void *ctx, int t, const void **snap)
{
	const struct dcbx_snapshot *s = cache_snapshot(ctx);

	*snap = s;
	return s ? &s->rows[t] : NULL;
}

#define ROWS_FN(name, t)                                                    \
	static const struct mib_rows *name(const void *ctx, const void **snap) \
	{                                                                   \
		return rows_of(ctx, t, snap);                               \
	}
ROWS_FN(port_rows, DCBX_T_PORT)
ROWS_FN(feat_rows, DCBX_T_FEAT)
ROWS_FN(prio_rows, DCBX_T_PRIO)
ROWS_FN(bw_rows, DCBX_T_BW)
ROWS_FN(pfc_rows, DCBX_T_PFC)
ROWS_FN(app_rows, DCBX_T_APP)
ROWS_FN(app_prio_rows, DCBX_T_APP_PRIO)

/* ---- values ---- */

static int port_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		      const void *snap)
{
	const struct dcbx_row *r = row;

	(void)snap;
	if (column != COLUMN_LLDP_XDCBX_PORT_ENABLE || !r->p->have_state)
		return -1; /* VersionOper/Max, SeqNo, AckNo: no dcbnl source */
	mib_set_int(vb, mib_truth(r->p->state));
	return 0;
}

static int feat_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		      const void *snap)
{
	const struct dcbx_row *r = row;
	const struct dcbx_port *p = r->p;
	uint8_t flags = dcbx_feat_flags(p, (enum dcbx_feature)r->a);
	bool peer = dcbx_peer_has(p, (enum dcbx_feature)r->a);

	(void)snap;
	switch (column) {
	case COLUMN_LLDP_XDCBX_FEAT_ENABLE: mib_set_int(vb, mib_truth(flags & DCBX_FLAG_ENABLE)); return 0;
	case COLUMN_LLDP_XDCBX_FEAT_WILLING: mib_set_int(vb, mib_truth(flags & DCBX_FLAG_WILLING)); return 0;
	case COLUMN_LLDP_XDCBX_FEAT_ERROR: mib_set_int(vb, mib_truth(flags & DCBX_FLAG_ERROR)); return 0;
	case COLUMN_LLDP_XDCBX_FEAT_ADVERTISE:
		mib_set_int(vb, mib_truth(flags & DCBX_FLAG_ADVERTISE));
		return 0;
	case COLUMN_LLDP_XDCBX_FEAT_PEER_WILLING:
		if (!peer)
			return -1;
		mib_set_int(vb, mib_truth(r->a == DCBX_FEAT_PG ? p->peer_pg_willing
					  : r->a == DCBX_FEAT_PFC ? p->peer_pfc_willing
					  : p->peer_app_willing));
		return 0;
	case COLUMN_LLDP_XDCBX_FEAT_PEER_ENABLE:
		if (!peer)
			return -1;
		/* only the PG TLV carries the peer's enable bit; PFC and APP: sent = on */
		mib_set_int(vb, mib_truth(r->a == DCBX_FEAT_PG ? p->peer_pg_enable : 1));
		return 0;
	case COLUMN_LLDP_XDCBX_FEAT_PEER_ERROR:
		if (!peer)
			return -1;
		mib_set_int(vb, mib_truth(r->a == DCBX_FEAT_PG ? p->peer_pg_error
					  : r->a == DCBX_FEAT_PFC ? p->peer_pfc_error
					  : p->peer_app_error));
		return 0;
	case COLUMN_LLDP_XDCBX_FEAT_PEER_ADVERTISE:
		if (!peer)
			return -1;
		mib_set_int(vb, mib_truth(1)); /* the peer sent the TLV */
		return 0;
	case COLUMN_LLDP_XDCBX_FEAT_PEER_TC: {
		unsigned tcs = r->a == DCBX_FEAT_PG ? p->peer_pg_tcs
			     : r->a == DCBX_FEAT_PFC ? p->peer_pfc_tcs : 0;

		if (!peer)
			return -1;
		mib_set_int(vb, tcs > 8 ? 8 : tcs);
		return 0;
	}
	default:
		return -1; /* VersionOper/Max, OperMode, Syncd, SeqNo, LocalParameterChange */
	}
}

/* The PG, PFC and application priority tables all have the columns
 * Desired, Oper and Peer, numbered alike. */
#define COL_DESIRED COLUMN_LLDP_XDCBX_FEAT_PFC_ENABLE_DESIRED
#define COL_OPER COLUMN_LLDP_XDCBX_FEAT_PFC_ENABLE_OPER
#define COL_PEER COLUMN_LLDP_XDCBX_FEAT_PFC_ENABLE_PEER
_Static_assert(COLUMN_LLDP_XDCBX_FEAT_PG_PRIO_ALLOC_PG_ID_DESIRED == COL_DESIRED &&
	       COLUMN_LLDP_XDCBX_FEAT_PG_PRIO_ALLOC_PG_ID_OPER == COL_OPER &&
	       COLUMN_LLDP_XDCBX_FEAT_PG_PRIO_ALLOC_PG_ID_PEER == COL_PEER &&
	       COLUMN_LLDP_XDCBX_FEAT_PG_BW_ALLOC_BW_DESIRED == COL_DESIRED &&
	       COLUMN_LLDP_XDCBX_FEAT_PG_BW_ALLOC_BW_OPER == COL_OPER &&
	       COLUMN_LLDP_XDCBX_FEAT_PG_BW_ALLOC_BW_PEER == COL_PEER &&
	       COLUMN_LLDP_XDCBX_FEAT_APP_PROTO_ENABLE_DESIRED == COL_DESIRED &&
	       COLUMN_LLDP_XDCBX_FEAT_APP_PROTO_ENABLE_OPER == COL_OPER &&
	       COLUMN_LLDP_XDCBX_FEAT_APP_PROTO_ENABLE_PEER == COL_PEER,
	       "Desired, Oper and Peer are numbered alike in the four tables");

/* A PG table's desired/oper (ours) and peer columns: ours[i] or peer[i],
 * served when it is within max (drivers put 0xff for "undefined"). */
static int pg_column(const struct dcbx_row *r, unsigned column, netsnmp_variable_list *vb,
		     const uint8_t *ours, const uint8_t *peer, unsigned max)
{
	unsigned v;

	if ((column == COL_DESIRED || column == COL_OPER) && r->p->have_pg)
		v = ours[r->a];
	else if (column == COL_PEER && r->p->have_peer_pg)
		v = peer[r->a];
	else
		return -1;
	if (v > max)
		return -1;
	mib_set_int(vb, v);
	return 0;
}

static int prio_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		      const void *snap)
{
	const struct dcbx_row *r = row;

	(void)snap;
	return pg_column(r, column, vb, r->p->prio_pgid, r->p->peer_prio_pg, DCBX_PGID_NO_LIMIT);
}

static int bw_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		    const void *snap)
{
	const struct dcbx_row *r = row;

	(void)snap;
	return pg_column(r, column, vb, r->p->pg_bw, r->p->peer_pg_bw, 100);
}

static int pfc_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		     const void *snap)
{
	const struct dcbx_row *r = row;
	const struct dcbx_port *p = r->p;

	(void)snap;
	if ((column == COL_DESIRED || column == COL_OPER) && p->have_pfc) {
		mib_set_int(vb, mib_truth(p->pfc[r->a]));
		return 0;
	}
	if (column == COL_PEER && p->have_peer_pfc) {
		mib_set_int(vb, mib_truth(p->peer_pfc_en & (1u << r->a)));
		return 0;
	}
	return -1;
}

static int app_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		     const void *snap)
{
	const struct dcbx_row *r = row;
	const struct dcbx_app *a = &r->p->apps[r->a];

	(void)snap;
	if (column == COLUMN_LLDP_XDCBX_FEAT_APP_PROTO_SF && a->selector <= 3) {
		mib_set_int(vb, a->selector);
		return 0;
	}
	if (column == COLUMN_LLDP_XDCBX_FEAT_APP_PROTO_ID) {
		mib_set_int(vb, a->id);
		return 0;
	}
	return -1; /* OUI: dcbnl's app entries have none */
}

static int app_prio_value(const void *row, unsigned column, netsnmp_variable_list *vb,
			  const void *snap)
{
	const struct dcbx_row *r = row;
	const struct dcbx_app *a = &r->p->apps[r->a], *o;

	(void)snap;
	if (column == COL_DESIRED || column == COL_OPER) {
		mib_set_int(vb, mib_truth(a->prio_map & (1u << r->b)));
		return 0;
	}
	if (column == COL_PEER && r->p->have_peer_apps &&
	    (o = dcbx_find_app(r->p->peer_apps, r->p->n_peer_apps, a->selector, a->id))) {
		mib_set_int(vb, mib_truth(o->prio_map & (1u << r->b)));
		return 0;
	}
	return -1;
}

/* ---- the SET transaction ---- */

#define DCBX_TX_PORTS 32

struct dcbx_tx {
	struct dcbx_mib *m;
	size_t n;
	struct dcbx_change change[DCBX_TX_PORTS], before[DCBX_TX_PORTS];
	bool sent;
	unsigned accepted; /* set commands the kernel took before refusing one */
};

static void *tx_begin(void *area)
{
	struct dcbx_tx *tx = calloc(1, sizeof(struct dcbx_tx));

	if (tx)
		tx->m = area;
	return tx;
}

static void tx_end(void *tx)
{
	free(tx);
}

/* The staged change of a port, begun from what the kernel has now. */
static struct dcbx_change *change_of(struct dcbx_tx *tx, const struct dcbx_port *p)
{
	struct dcbx_change *c;

	for (size_t i = 0; i < tx->n; i++)
		if (tx->change[i].ifindex == p->ifindex)
			return &tx->change[i];
	if (tx->n == DCBX_TX_PORTS)
		return NULL;
	c = &tx->change[tx->n];
	memset(c, 0, sizeof(*c));
	c->ifindex = p->ifindex;
	c->state = p->state;
	memcpy(c->feat, p->feat, sizeof(c->feat));
	memcpy(c->prio_pgid, p->prio_pgid, sizeof(c->prio_pgid));
	memcpy(c->pg_bw, p->pg_bw, sizeof(c->pg_bw));
	memcpy(c->pfc, p->pfc, sizeof(c->pfc));
	tx->before[tx->n] = *c;
	tx->n++;
	return c;
}

/* The change of the varbind's port; NULL: too many ports in one SET. */
static struct dcbx_change *change_for(void *tx, const struct mib_set_request *req,
				      const struct dcbx_row **row)
{
	*row = req->row;
	return change_of(tx, (*row)->p);
}

static int stage_port_enable(void *tx, const struct mib_set_request *req)
{
	const struct dcbx_row *r;
	struct dcbx_change *c = change_for(tx, req, &r);

	if (!c)
		return SNMP_ERR_RESOURCEUNAVAILABLE;
	c->set_state = true;
	c->state = req->value == TV_TRUE;
	return SNMP_ERR_NOERROR;
}

static int stage_feature_flag(void *tx, const struct mib_set_request *req)
{
	const struct dcbx_row *r;
	struct dcbx_change *c = change_for(tx, req, &r);
	uint8_t bit = req->column == COLUMN_LLDP_XDCBX_FEAT_ENABLE ? DCBX_FLAG_ENABLE
		    : req->column == COLUMN_LLDP_XDCBX_FEAT_WILLING ? DCBX_FLAG_WILLING
		    : DCBX_FLAG_ADVERTISE;
	uint8_t *flags;

	if (!c)
		return SNMP_ERR_RESOURCEUNAVAILABLE;
	flags = &c->feat[r->a - DCBX_FEAT_FIRST];
	*flags = req->value == TV_TRUE ? (uint8_t)(*flags | bit) : (uint8_t)(*flags & ~bit);
	c->set_feat = true;
	return SNMP_ERR_NOERROR;
}

static int stage_priority_pg(void *tx, const struct mib_set_request *req)
{
	const struct dcbx_row *r;
	struct dcbx_change *c = change_for(tx, req, &r);

	if (req->value > 7 && req->value < DCBX_PGID_NO_LIMIT)
		return SNMP_ERR_WRONGVALUE; /* reserved8 .. reserved14 */
	if (!c)
		return SNMP_ERR_RESOURCEUNAVAILABLE;
	c->prio_pgid[r->a] = (uint8_t)req->value;
	c->set_pg = true;
	return SNMP_ERR_NOERROR;
}

static int stage_pg_bandwidth(void *tx, const struct mib_set_request *req)
{
	const struct dcbx_row *r;
	struct dcbx_change *c = change_for(tx, req, &r);

	if (!c)
		return SNMP_ERR_RESOURCEUNAVAILABLE;
	c->pg_bw[r->a] = (uint8_t)req->value;
	c->set_pg = true;
	return SNMP_ERR_NOERROR;
}

static int stage_pfc(void *tx, const struct mib_set_request *req)
{
	const struct dcbx_row *r;
	struct dcbx_change *c = change_for(tx, req, &r);

	if (!c)
		return SNMP_ERR_RESOURCEUNAVAILABLE;
	c->pfc[r->a] = req->value == TV_TRUE;
	c->set_pfc = true;
	return SNMP_ERR_NOERROR;
}

static struct dcbx_app *set_app(struct dcbx_change *c, const struct dcbx_app *a)
{
	for (size_t i = 0; i < c->n_set_apps; i++)
		if (c->set_apps[i].selector == a->selector && c->set_apps[i].id == a->id)
			return &c->set_apps[i];
	if (c->n_set_apps == DCBX_APPS_MAX)
		return NULL;
	c->set_apps[c->n_set_apps] = *a;
	return &c->set_apps[c->n_set_apps++];
}

static int stage_app_priority(void *tx, const struct mib_set_request *req)
{
	const struct dcbx_row *r;
	struct dcbx_change *c = change_for(tx, req, &r);
	struct dcbx_app *a;

	if (!c || !(a = set_app(c, &r->p->apps[r->a])))
		return SNMP_ERR_RESOURCEUNAVAILABLE;
	a->prio_map = req->value == TV_TRUE ? (uint8_t)(a->prio_map | 1u << r->b)
					    : (uint8_t)(a->prio_map & ~(1u << r->b));
	return SNMP_ERR_NOERROR;
}

/* RESERVE2: each port's configuration as a whole. */
static int tx_consistent(void *p)
{
	const struct dcbx_tx *tx = p;
	const struct dcbx_snapshot *s = cache_snapshot(&tx->m->backend->group);

	for (size_t i = 0; i < tx->n; i++) {
		const struct dcbx_change *c = &tx->change[i];
		const struct dcbx_port *port = dcbx_snapshot_port(s, c->ifindex);
		unsigned sum = 0, pfc_on = 0;

		if (!port)
			return SNMP_ERR_INCONSISTENTNAME; /* the interface went away */
		if (c->set_pg) {
			for (int k = 0; k < DCBX_PGS; k++)
				sum += c->pg_bw[k];
			if (sum != 100) {
				snmp_log(LOG_INFO, "dcbx: SET refused: %s's PG bandwidths sum to %u, "
					 "not 100\n", port->ifname, sum);
				return SNMP_ERR_INCONSISTENTVALUE;
			}
			for (int k = 0; k < DCBX_PRIOS; k++)
				if (c->prio_pgid[k] != DCBX_PGID_NO_LIMIT && port->have_numtcs &&
				    port->numtcs_pg && c->prio_pgid[k] >= port->numtcs_pg)
					return SNMP_ERR_INCONSISTENTVALUE;
		}
		if (c->set_pfc && port->have_numtcs && port->numtcs_pfc) {
			for (int k = 0; k < DCBX_PRIOS; k++)
				pfc_on += !!c->pfc[k];
			if (pfc_on > port->numtcs_pfc)
				return SNMP_ERR_INCONSISTENTVALUE;
		}
	}
	return SNMP_ERR_NOERROR;
}

static int snmp_error_of(int error)
{
	switch (error) {
	case 0: return SNMP_ERR_NOERROR;
	case EOPNOTSUPP: case 524 /* the kernel's ENOTSUPP */: return SNMP_ERR_NOTWRITABLE;
	case EPERM: case EACCES: return SNMP_ERR_NOACCESS;
	case EINVAL: case ERANGE: return SNMP_ERR_WRONGVALUE;
	case ENODEV: return SNMP_ERR_INCONSISTENTNAME;
	case ETIMEDOUT: return SNMP_ERR_RESOURCEUNAVAILABLE;
	default: return SNMP_ERR_GENERR;
	}
}

/* Which transaction an answer of the kernel is for. */
struct set_ctx {
	struct dcbx_mib *m;
	unsigned token;
};

static void set_done(void *ctx, int error, unsigned accepted)
{
	struct set_ctx *c = ctx;
	struct dcbx_tx *tx = mib_set_tx(&c->m->domain, c->token);

	if (error)
		snmp_log(LOG_WARNING, "dcbx: the kernel refused a SET: %s\n", strerror(error));
	if (tx)
		tx->accepted = accepted; /* UNDO sends back only what it took */
	mib_set_action_done(&c->m->domain, c->token, snmp_error_of(error));
	free(c);
}

/* ACTION: the set commands and SET_ALL, per port (the answer may come at
 * once: a port gone, a send that fails) */
static int tx_action(void *p, unsigned token)
{
	struct dcbx_tx *tx = p;
	struct set_ctx *c = malloc(sizeof(*c));

	if (!c)
		return SNMP_ERR_RESOURCEUNAVAILABLE;
	c->m = tx->m;
	c->token = token;
	if (dcbx_apply(tx->m->backend, tx->change, tx->n, set_done, c)) {
		free(c);
		return SNMP_ERR_RESOURCEUNAVAILABLE; /* not queued: no socket, no memory */
	}
	tx->sent = true;
	return MIB_SET_PENDING;
}

static void undo_done(void *ctx, int error, unsigned accepted)
{
	(void)ctx;
	(void)accepted;
	if (error)
		snmp_log(LOG_WARNING, "dcbx: undoing a failed SET: the kernel said %s\n",
			 strerror(error));
}

/* UNDO: the previous values of what the kernel took, sent back (not waited
 * for) */
static int tx_undo(void *p)
{
	struct dcbx_tx *tx = p;
	struct dcbx_change back[DCBX_TX_PORTS];

	if (!tx->sent || !tx->accepted)
		return 0;
	memcpy(back, tx->before, tx->n * sizeof(back[0]));
	for (size_t i = 0; i < tx->n; i++) {
		back[i].set_state = tx->change[i].set_state;
		back[i].set_feat = tx->change[i].set_feat;
		back[i].set_pg = tx->change[i].set_pg;
		back[i].set_pfc = tx->change[i].set_pfc;
		back[i].n_set_apps = 0; /* apps: the snapshot still has the old priorities */
	}
	if (dcbx_apply(tx->m->backend, back, tx->n, undo_done, NULL))
		snmp_log(LOG_WARNING, "dcbx: cannot undo a failed SET\n");
	return 0;
}

static const struct mib_set_domain domain_template = {
	.name = "LLDP-EXT-DCBX-MIB", .begin = tx_begin, .consistent = tx_consistent,
	.action = tx_action, .undo = tx_undo, .end = tx_end,
};

static const struct mib_column_set port_columns[] = {
	{COLUMN_LLDP_XDCBX_PORT_ENABLE, MIB_VALUE_TRUTH, 0, 0, stage_port_enable},
};
static const struct mib_column_set feat_columns[] = {
	{COLUMN_LLDP_XDCBX_FEAT_ENABLE, MIB_VALUE_TRUTH, 0, 0, stage_feature_flag},
	{COLUMN_LLDP_XDCBX_FEAT_WILLING, MIB_VALUE_TRUTH, 0, 0, stage_feature_flag},
	{COLUMN_LLDP_XDCBX_FEAT_ADVERTISE, MIB_VALUE_TRUTH, 0, 0, stage_feature_flag},
};
static const struct mib_column_set prio_columns[] = {
	{COLUMN_LLDP_XDCBX_FEAT_PG_PRIO_ALLOC_PG_ID_DESIRED, MIB_VALUE_INT, 0, 15,
	 stage_priority_pg},
};
static const struct mib_column_set bw_columns[] = {
	{COLUMN_LLDP_XDCBX_FEAT_PG_BW_ALLOC_BW_DESIRED, MIB_VALUE_INT, 0, 100, stage_pg_bandwidth},
};
static const struct mib_column_set pfc_columns[] = {
	{COLUMN_LLDP_XDCBX_FEAT_PFC_ENABLE_DESIRED, MIB_VALUE_TRUTH, 0, 0, stage_pfc},
};
static const struct mib_column_set app_prio_columns[] = {
	{COLUMN_LLDP_XDCBX_FEAT_APP_PROTO_ENABLE_DESIRED, MIB_VALUE_TRUTH, 0, 0,
	 stage_app_priority},
};
/* Each table's writable columns (the app entries' selector, OUI and id are
 * not: dcbnl sets priorities), by table. */
static const struct {
	const struct mib_column_set *columns;
	size_t n;
} set_columns[DCBX_MIB_TABLES] = {
#define COLUMNS(t, cols) [t] = {cols, sizeof(cols) / sizeof(cols[0])}
	COLUMNS(DCBX_T_PORT, port_columns),
	COLUMNS(DCBX_T_FEAT, feat_columns),
	COLUMNS(DCBX_T_PRIO, prio_columns),
	COLUMNS(DCBX_T_BW, bw_columns),
	COLUMNS(DCBX_T_PFC, pfc_columns),
	COLUMNS(DCBX_T_APP_PRIO, app_prio_columns),
#undef COLUMNS
};

#define TABLE(t, tname, toid, first, last, rowsfn, valuefn)                               \
	[t] = {                                                                           \
		.name = tname, .table_oid = toid, .table_oid_len = OID_LENGTH(toid),      \
		.first_column = first, .last_column = last, .rows = rowsfn,               \
		.value = valuefn,                                                         \
	}
static const struct mib_table table_template[DCBX_MIB_TABLES] = {
	TABLE(DCBX_T_PORT, "lldpXdcbxPortTable", port_table_oid, COLUMN_LLDP_XDCBX_PORT_ENABLE,
	      COLUMN_LLDP_XDCBX_PORT_ACK_NO, port_rows, port_value),
	TABLE(DCBX_T_FEAT, "lldpXdcbxFeatTable", feat_table_oid,
	      COLUMN_LLDP_XDCBX_FEAT_VERSION_OPER, COLUMN_LLDP_XDCBX_FEAT_PEER_TC, feat_rows,
	      feat_value),
	TABLE(DCBX_T_PRIO, "lldpXdcbxFeatPgPrioAllocTable", prio_table_oid,
	      COLUMN_LLDP_XDCBX_FEAT_PG_PRIO_ALLOC_PG_ID_DESIRED,
	      COLUMN_LLDP_XDCBX_FEAT_PG_PRIO_ALLOC_PG_ID_PEER, prio_rows, prio_value),
	TABLE(DCBX_T_BW, "lldpXdcbxFeatPgBwAllocTable", bw_table_oid,
	      COLUMN_LLDP_XDCBX_FEAT_PG_BW_ALLOC_BW_DESIRED,
	      COLUMN_LLDP_XDCBX_FEAT_PG_BW_ALLOC_BW_PEER, bw_rows, bw_value),
	TABLE(DCBX_T_PFC, "lldpXdcbxFeatPfcTable", pfc_table_oid,
	      COLUMN_LLDP_XDCBX_FEAT_PFC_ENABLE_DESIRED, COLUMN_LLDP_XDCBX_FEAT_PFC_ENABLE_PEER,
	      pfc_rows, pfc_value),
	TABLE(DCBX_T_APP, "lldpXdcbxFeatAppProtoTable", app_table_oid,
	      COLUMN_LLDP_XDCBX_FEAT_APP_PROTO_SF, COLUMN_LLDP_XDCBX_FEAT_APP_PROTO_ID, app_rows,
	      app_value),
	TABLE(DCBX_T_APP_PRIO, "lldpXdcbxFeatAppProtoPrioTable", app_prio_table_oid,
	      COLUMN_LLDP_XDCBX_FEAT_APP_PROTO_ENABLE_DESIRED,
	      COLUMN_LLDP_XDCBX_FEAT_APP_PROTO_ENABLE_PEER, app_prio_rows, app_prio_value),
};
#undef TABLE

/* ---- the two scalars: the smallest TC counts of the ports ---- */

static int numtcs_value(bool pfc, netsnmp_variable_list *vb, const struct dcbx_snapshot *s)
{
	unsigned best = 0;
	bool any = false;

	for (size_t i = 0; i < s->n; i++) {
		const struct dcbx_port *p = &s->ports[i];
		unsigned v = pfc ? p->numtcs_pfc : p->numtcs_pg;

		if (p->have_numtcs && (!any || v < best)) {
			best = v;
			any = true;
		}
	}
	if (!any || (pfc && best < 1))
		return -1;
	/* the draft's ranges: PG 0..7 (8 TCs served as 7), PFC 1..8 */
	mib_set_int(vb, pfc ? (best > 8 ? 8 : best) : (best > 7 ? 7 : best));
	return 0;
}

static int pg_numtcs_value(unsigned column, netsnmp_variable_list *vb, const void *snap)
{
	(void)column;
	return numtcs_value(false, vb, snap);
}

static int pfc_numtcs_value(unsigned column, netsnmp_variable_list *vb, const void *snap)
{
	(void)column;
	return numtcs_value(true, vb, snap);
}

static const void *numtcs_snapshot(const void *ctx)
{
	return cache_snapshot(ctx);
}

/* One scalar of its own group (one_by_one: the parent holds tables too). */
static struct mib_scalars numtcs_scalar(const char *name, const oid *o, size_t len,
					mib_scalar_fn value)
{
	return (struct mib_scalars){
		.name = name, .group_oid = o, .group_oid_len = len - 1, .first = (unsigned)o[len - 1],
		.last = (unsigned)o[len - 1], .snapshot = numtcs_snapshot, .value = value,
		.one_by_one = true,
	};
}

int dcbx_mib_register(struct dcbx_mib *m, struct dcbx_backend *b, const char *context)
{
	memset(m, 0, sizeof(*m));
	m->backend = b;
	m->domain = domain_template;
	m->domain.area = m;
	for (int t = 0; t < DCBX_MIB_TABLES; t++) {
		m->sets[t] = (struct mib_set_table){.domain = &m->domain,
						    .columns = set_columns[t].columns,
						    .n_columns = set_columns[t].n};
		m->tables[t] = table_template[t];
		m->tables[t].ctx = &b->group;
		m->tables[t].context = context;
		m->tables[t].set = &m->sets[t];
		if (mib_table_register(&m->tables[t]))
			return -1;
	}
	m->numtcs[0] = numtcs_scalar("lldpXdcbxFeatPgNumTCsSupported", pg_numtcs_oid,
				     OID_LENGTH(pg_numtcs_oid), pg_numtcs_value);
	m->numtcs[1] = numtcs_scalar("lldpXdcbxFeatPfcNumTCPFCSupported", pfc_numtcs_oid,
				     OID_LENGTH(pfc_numtcs_oid), pfc_numtcs_value);
	for (int i = 0; i < 2; i++) {
		m->numtcs[i].ctx = &b->group;
		m->numtcs[i].context = context;
		if (mib_scalars_register(&m->numtcs[i]))
			return -1;
	}
	if (!context)
		register_sysORTable(dcbx_mib_oid, OID_LENGTH(dcbx_mib_oid),
				    "LLDP-EXT-DCBX-MIB: DCBX of the host's Ethernet ports, from dcbnl");
	return 0;
}

void dcbx_mib_unregister(struct dcbx_mib *m)
{
	bool default_context = m->tables[0].reg && !m->tables[0].context;

	for (int t = 0; t < DCBX_MIB_TABLES; t++)
		mib_table_unregister(&m->tables[t]);
	for (int i = 0; i < 2; i++)
		mib_scalars_unregister(&m->numtcs[i]);
	if (default_context)
		unregister_sysORTable(dcbx_mib_oid, OID_LENGTH(dcbx_mib_oid));
	mib_set_domain_free(&m->domain);
}
