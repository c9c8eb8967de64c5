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
 * SETs: every varbind is checked (RESERVE1), the port as a whole (RESERVE2:
 * bandwidths sum to 100, PG ids and PFC priorities within the port's TC
 * counts), then ACTION sends the set commands and SET_ALL (delegated: other
 * requests are served meanwhile); the kernel's refusal becomes the varbinds'
 * error; UNDO sends the previous values back. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ibsnmpd/cache.h"
#include "ibsnmpd/config.h"
#include "ibsnmpd/mib_table.h"
#include "ibsnmpd/netsnmp.h"

#include "dcbx_internal.h"

#include <net-snmp/agent/agent_sysORTable.h>

#define DCBX_MIB 1, 0, 8802, 1, 1, 2, 1, 5, 6945
static const oid port_table_oid[] = {DCBX_MIB, 1, 1};
static const oid feat_table_oid[] = {DCBX_MIB, 2, 1};
static const oid pg_numtcs_oid[] = {DCBX_MIB, 2, 2, 1};
static const oid prio_table_oid[] = {DCBX_MIB, 2, 2, 2};
static const oid bw_table_oid[] = {DCBX_MIB, 2, 2, 3};
static const oid pfc_numtcs_oid[] = {DCBX_MIB, 2, 3, 1};
static const oid pfc_table_oid[] = {DCBX_MIB, 2, 3, 2};
static const oid app_table_oid[] = {DCBX_MIB, 2, 4, 1};
static const oid app_prio_table_oid[] = {DCBX_MIB, 2, 4, 2};
static oid dcbx_mib_oid[] = {DCBX_MIB};

static const struct mib_rows *rows_of(int t, const void **snap)
{
	const struct dcbx_snapshot *s = cache_snapshot(dcbx_cache_group());

	*snap = s;
	return s ? &s->rows[t] : NULL;
}

#define ROWS_FN(name, t)                                                    \
	static const struct mib_rows *name(const void *ctx, const void **snap) \
	{                                                                   \
		(void)ctx;                                                  \
		return rows_of(t, snap);                                    \
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
	if (column != 2 || !r->p->have_state)
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
	case 5: mib_set_int(vb, mib_truth(flags & DCBX_FLAG_ENABLE)); return 0;
	case 6: mib_set_int(vb, mib_truth(flags & DCBX_FLAG_WILLING)); return 0;
	case 7: mib_set_int(vb, mib_truth(flags & DCBX_FLAG_ERROR)); return 0;
	case 8: mib_set_int(vb, mib_truth(flags & DCBX_FLAG_ADVERTISE)); return 0;
	case 12:
		if (!peer)
			return -1;
		mib_set_int(vb, mib_truth(r->a == DCBX_FEAT_PG ? p->peer_pg_willing
					  : r->a == DCBX_FEAT_PFC ? p->peer_pfc_willing
					  : p->peer_app_willing));
		return 0;
	case 14:
		if (!peer)
			return -1;
		/* only the PG TLV carries the peer's enable bit; PFC and APP: sent = on */
		mib_set_int(vb, mib_truth(r->a == DCBX_FEAT_PG ? p->peer_pg_enable : 1));
		return 0;
	case 15:
		if (!peer)
			return -1;
		mib_set_int(vb, mib_truth(r->a == DCBX_FEAT_PG ? p->peer_pg_error
					  : r->a == DCBX_FEAT_PFC ? p->peer_pfc_error
					  : p->peer_app_error));
		return 0;
	case 16:
		if (!peer)
			return -1;
		mib_set_int(vb, mib_truth(1)); /* the peer sent the TLV */
		return 0;
	case 17: {
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

/* A PG table's desired/oper (ours) and peer columns: ours[i] or peer[i],
 * served when it is within max (drivers put 0xff for "undefined"). */
static int pg_column(const struct dcbx_row *r, unsigned column, netsnmp_variable_list *vb,
		     const uint8_t *ours, const uint8_t *peer, unsigned max)
{
	unsigned v;

	if ((column == 2 || column == 3) && r->p->have_pg)
		v = ours[r->a];
	else if (column == 4 && r->p->have_peer_pg)
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
	if ((column == 2 || column == 3) && p->have_pfc) {
		mib_set_int(vb, mib_truth(p->pfc[r->a]));
		return 0;
	}
	if (column == 4 && p->have_peer_pfc) {
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
	if (column == 2 && a->selector <= 3) {
		mib_set_int(vb, a->selector);
		return 0;
	}
	if (column == 4) {
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
	if (column == 2 || column == 3) {
		mib_set_int(vb, mib_truth(a->prio_map & (1u << r->b)));
		return 0;
	}
	if (column == 4 && r->p->have_peer_apps && (o = dcbx_find_app(r->p->peer_apps, r->p->n_peer_apps, a->selector, a->id))) {
		mib_set_int(vb, mib_truth(o->prio_map & (1u << r->b)));
		return 0;
	}
	return -1;
}

/* ---- the SET transaction ---- */

static struct {
	long transid;
	bool open, sent, undone;
	unsigned accepted; /* set commands the kernel took before refusing one */
	size_t n;
	struct dcbx_change change[32], before[32];
} tx;

static struct dcbx_change *change_of(const struct dcbx_port *p)
{
	struct dcbx_change *c;

	for (size_t i = 0; i < tx.n; i++)
		if (tx.change[i].ifindex == p->ifindex)
			return &tx.change[i];
	if (tx.n == 32)
		return NULL;
	c = &tx.change[tx.n];
	memset(c, 0, sizeof(*c));
	c->ifindex = p->ifindex;
	c->state = p->state;
	memcpy(c->feat, p->feat, sizeof(c->feat));
	memcpy(c->prio_pgid, p->prio_pgid, sizeof(c->prio_pgid));
	memcpy(c->pg_bw, p->pg_bw, sizeof(c->pg_bw));
	memcpy(c->pfc, p->pfc, sizeof(c->pfc));
	tx.before[tx.n] = *c;
	tx.n++;
	return c;
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

/* One varbind onto the transaction (RESERVE1). */
static int reserve_one(int t, const struct dcbx_row *r, unsigned column,
		       const netsnmp_variable_list *vb)
{
	struct dcbx_change *c = change_of(r->p);
	bool on;
	long v;
	int err;

	if (!c)
		return SNMP_ERR_RESOURCEUNAVAILABLE;
	switch (t) {
	case DCBX_T_PORT:
		if (column != 2)
			return SNMP_ERR_NOTWRITABLE;
		if ((err = mib_set_truth_value(vb, &on)))
			return err;
		c->set_state = true;
		c->state = on;
		return SNMP_ERR_NOERROR;
	case DCBX_T_FEAT: {
		uint8_t bit = column == 5 ? DCBX_FLAG_ENABLE : column == 6 ? DCBX_FLAG_WILLING
			    : column == 8 ? DCBX_FLAG_ADVERTISE : 0;
		uint8_t *flags = &c->feat[r->a - DCBX_FEAT_FIRST];

		if (!bit)
			return SNMP_ERR_NOTWRITABLE;
		if ((err = mib_set_truth_value(vb, &on)))
			return err;
		*flags = on ? (uint8_t)(*flags | bit) : (uint8_t)(*flags & ~bit);
		c->set_feat = true;
		return SNMP_ERR_NOERROR;
	}
	case DCBX_T_PRIO:
		if (column != 2)
			return SNMP_ERR_NOTWRITABLE;
		if ((err = mib_set_int_value(vb, 0, 15, &v)))
			return err;
		if (v > 7 && v < DCBX_PGID_NO_LIMIT)
			return SNMP_ERR_WRONGVALUE; /* reserved8 .. reserved14 */
		c->prio_pgid[r->a] = (uint8_t)v;
		c->set_pg = true;
		return SNMP_ERR_NOERROR;
	case DCBX_T_BW:
		if (column != 2)
			return SNMP_ERR_NOTWRITABLE;
		if ((err = mib_set_int_value(vb, 0, 100, &v)))
			return err;
		c->pg_bw[r->a] = (uint8_t)v;
		c->set_pg = true;
		return SNMP_ERR_NOERROR;
	case DCBX_T_PFC:
		if (column != 2)
			return SNMP_ERR_NOTWRITABLE;
		if ((err = mib_set_truth_value(vb, &on)))
			return err;
		c->pfc[r->a] = on;
		c->set_pfc = true;
		return SNMP_ERR_NOERROR;
	case DCBX_T_APP_PRIO: {
		struct dcbx_app *a;

		if (column != 2)
			return SNMP_ERR_NOTWRITABLE;
		if ((err = mib_set_truth_value(vb, &on)))
			return err;
		if (!(a = set_app(c, &r->p->apps[r->a])))
			return SNMP_ERR_RESOURCEUNAVAILABLE;
		a->prio_map = on ? (uint8_t)(a->prio_map | 1u << r->b)
				 : (uint8_t)(a->prio_map & ~(1u << r->b));
		return SNMP_ERR_NOERROR;
	}
	default:
		return SNMP_ERR_NOTWRITABLE; /* the app entries' selector, OUI, id */
	}
}

/* RESERVE2: each port's configuration as a whole. */
static int check_ports(void)
{
	const struct dcbx_snapshot *s = cache_snapshot(dcbx_cache_group());

	for (size_t i = 0; i < tx.n; i++) {
		const struct dcbx_change *c = &tx.change[i];
		const struct dcbx_port *p = dcbx_snapshot_port(s, c->ifindex);
		unsigned sum = 0, pfc_on = 0;

		if (!p)
			return SNMP_ERR_INCONSISTENTNAME; /* the interface went away */
		if (c->set_pg) {
			for (int k = 0; k < DCBX_PGS; k++)
				sum += c->pg_bw[k];
			if (sum != 100) {
				snmp_log(LOG_INFO, "dcbx: SET refused: %s's PG bandwidths sum to %u, "
					 "not 100\n", p->ifname, sum);
				return SNMP_ERR_INCONSISTENTVALUE;
			}
			for (int k = 0; k < DCBX_PRIOS; k++)
				if (c->prio_pgid[k] != DCBX_PGID_NO_LIMIT && p->have_numtcs &&
				    p->numtcs_pg && c->prio_pgid[k] >= p->numtcs_pg)
					return SNMP_ERR_INCONSISTENTVALUE;
		}
		if (c->set_pfc && p->have_numtcs && p->numtcs_pfc) {
			for (int k = 0; k < DCBX_PRIOS; k++)
				pfc_on += !!c->pfc[k];
			if (pfc_on > p->numtcs_pfc)
				return SNMP_ERR_INCONSISTENTVALUE;
		}
	}
	return SNMP_ERR_NOERROR;
}

struct set_wait {
	netsnmp_delegated_cache *cache;
	netsnmp_request_info *requests;
	long transid;
};

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

static void set_done(void *ctx, int error, unsigned accepted)
{
	struct set_wait *w = ctx;
	netsnmp_delegated_cache *cache = netsnmp_handler_check_cache(w->cache);

	if (error)
		snmp_log(LOG_WARNING, "dcbx: the kernel refused a SET: %s\n", strerror(error));
	if (tx.open && tx.transid == w->transid)
		tx.accepted = accepted;
	if (cache) {
		for (netsnmp_request_info *r = w->requests; r; r = r->next) {
			if (error && !r->processed)
				netsnmp_set_request_error(cache->reqinfo, r, snmp_error_of(error));
			r->delegated = 0;
		}
		netsnmp_free_delegated_cache(cache);
	}
	free(w);
}

static void undo_done(void *ctx, int error, unsigned accepted)
{
	(void)ctx;
	(void)accepted;
	if (error)
		snmp_log(LOG_WARNING, "dcbx: undoing a failed SET: the kernel said %s\n",
			 strerror(error));
}

static int table_set(struct mib_table *t, netsnmp_mib_handler *handler,
		     netsnmp_handler_registration *reg, netsnmp_agent_request_info *reqinfo,
		     netsnmp_request_info *requests)
{
	const int which = (int)(intptr_t)t->ctx;
	long transid = mib_set_transid(reqinfo);

	switch (reqinfo->mode) {
	case MODE_SET_RESERVE1: {
		const void *snap;
		const struct mib_rows *rows = rows_of(which, &snap);

		if (!tx.open || tx.transid != transid) {
			memset(&tx, 0, sizeof(tx));
			tx.open = true;
			tx.transid = transid;
		}
		for (netsnmp_request_info *r = requests; r; r = r->next) {
			unsigned column;
			const struct mib_row *row = rows ? mib_table_find_row(t, rows,
				r->requestvb->name, r->requestvb->name_length, &column) : NULL;
			int err = row ? reserve_one(which, row->data, column, r->requestvb)
				      : SNMP_ERR_NOCREATION;

			if (err != SNMP_ERR_NOERROR) {
				netsnmp_set_request_error(reqinfo, r, err);
				return SNMP_ERR_NOERROR;
			}
		}
		break;
	}
	case MODE_SET_RESERVE2:
		if (tx.open && tx.transid == transid) {
			int err = check_ports();

			if (err != SNMP_ERR_NOERROR)
				netsnmp_set_request_error(reqinfo, requests, err);
		}
		break;
	case MODE_SET_ACTION:
		if (tx.open && tx.transid == transid && !tx.sent) {
			struct set_wait *w = calloc(1, sizeof(*w));

			if (!w) {
				netsnmp_set_request_error(reqinfo, requests,
							  SNMP_ERR_RESOURCEUNAVAILABLE);
				break;
			}
			/* delegated before the first command goes out: the answer may
			 * come at once (a port gone, a send that fails) */
			w->requests = requests;
			w->transid = transid;
			w->cache = netsnmp_create_delegated_cache(handler, reg, reqinfo, requests,
								  NULL);
			for (netsnmp_request_info *r = requests; r; r = r->next)
				r->delegated = 1;
			tx.sent = true;
			if (dcbx_apply(tx.change, tx.n, set_done, w)) {
				/* not queued (no socket, no memory): w is still ours */
				for (netsnmp_request_info *r = requests; r; r = r->next)
					r->delegated = 0;
				netsnmp_free_delegated_cache(w->cache);
				free(w);
				tx.sent = false;
				netsnmp_set_request_error(reqinfo, requests,
							  SNMP_ERR_RESOURCEUNAVAILABLE);
			}
		}
		break;
	case MODE_SET_UNDO:
		/* only what the kernel took needs sending back */
		if (tx.open && tx.transid == transid && tx.sent && tx.accepted && !tx.undone) {
			struct dcbx_change back[32];

			tx.undone = true;
			memcpy(back, tx.before, tx.n * sizeof(back[0]));
			for (size_t i = 0; i < tx.n; i++) {
				back[i].set_state = tx.change[i].set_state;
				back[i].set_feat = tx.change[i].set_feat;
				back[i].set_pg = tx.change[i].set_pg;
				back[i].set_pfc = tx.change[i].set_pfc;
				/* apps: the snapshot still has the old priorities */
				back[i].n_set_apps = 0;
			}
			if (dcbx_apply(back, tx.n, undo_done, NULL))
				snmp_log(LOG_WARNING, "dcbx: cannot undo a failed SET\n");
		}
		break;
	case MODE_SET_COMMIT:
	case MODE_SET_FREE:
		if (tx.open && tx.transid == transid && reqinfo->mode == MODE_SET_FREE)
			memset(&tx, 0, sizeof(tx));
		break;
	}
	return SNMP_ERR_NOERROR;
}

#define TABLE(var, tname, toid, first, last, rowsfn, valuefn, idx)                 \
	static struct mib_table var = {                                             \
		.name = tname, .table_oid = toid, .table_oid_len = OID_LENGTH(toid), \
		.first_column = first, .last_column = last, .rows = rowsfn,          \
		.value = valuefn, .set = table_set, .ctx = (const void *)(intptr_t)idx, \
	}
TABLE(port_table, "lldpXdcbxPortTable", port_table_oid, 2, 6, port_rows, port_value, DCBX_T_PORT);
TABLE(feat_table, "lldpXdcbxFeatTable", feat_table_oid, 3, 17, feat_rows, feat_value, DCBX_T_FEAT);
TABLE(prio_table, "lldpXdcbxFeatPgPrioAllocTable", prio_table_oid, 2, 4, prio_rows,
      prio_value, DCBX_T_PRIO);
TABLE(bw_table, "lldpXdcbxFeatPgBwAllocTable", bw_table_oid, 2, 4, bw_rows, bw_value, DCBX_T_BW);
TABLE(pfc_table, "lldpXdcbxFeatPfcTable", pfc_table_oid, 2, 4, pfc_rows, pfc_value, DCBX_T_PFC);
TABLE(app_table, "lldpXdcbxFeatAppProtoTable", app_table_oid, 2, 4, app_rows, app_value,
      DCBX_T_APP);
TABLE(app_prio_table, "lldpXdcbxFeatAppProtoPrioTable", app_prio_table_oid, 2, 4,
      app_prio_rows, app_prio_value, DCBX_T_APP_PRIO);

static struct mib_table *const tables[] = {&port_table, &feat_table, &prio_table, &bw_table,
					   &pfc_table, &app_table, &app_prio_table};

/* ---- the two scalars: the smallest TC counts of the ports ---- */

static int numtcs_handler(netsnmp_mib_handler *handler, netsnmp_handler_registration *reg,
			  netsnmp_agent_request_info *reqinfo, netsnmp_request_info *requests)
{
	const struct dcbx_snapshot *s = cache_snapshot(dcbx_cache_group());
	bool pfc = handler->myvoid != NULL;
	unsigned best = 0;
	bool any = false;

	(void)reg;
	if (reqinfo->mode != MODE_GET)
		return SNMP_ERR_NOERROR;
	for (size_t i = 0; s && i < s->n; i++) {
		const struct dcbx_port *p = &s->ports[i];
		unsigned v = pfc ? p->numtcs_pfc : p->numtcs_pg;

		if (p->have_numtcs && (!any || v < best)) {
			best = v;
			any = true;
		}
	}
	for (netsnmp_request_info *r = requests; r; r = r->next) {
		if (!any || (pfc && best < 1)) {
			netsnmp_set_request_error(reqinfo, r, SNMP_NOSUCHINSTANCE);
			continue;
		}
		/* the draft's ranges: PG 0..7 (8 TCs served as 7), PFC 1..8 */
		mib_set_int(r->requestvb, pfc ? (best > 8 ? 8 : best) : (best > 7 ? 7 : best));
	}
	return SNMP_ERR_NOERROR;
}

static netsnmp_handler_registration *numtcs_reg[2];

static int register_numtcs(int i, const oid *o, size_t len, const char *name)
{
	numtcs_reg[i] = netsnmp_create_handler_registration(name, numtcs_handler, o, len,
							    HANDLER_CAN_RONLY);
	if (numtcs_reg[i])
		numtcs_reg[i]->handler->myvoid = i ? (void *)numtcs_reg : NULL; /* PFC's */
	return numtcs_reg[i] && netsnmp_register_scalar(numtcs_reg[i]) == MIB_REGISTERED_OK
		       ? 0 : -1;
}

int dcbx_mib_register(void)
{
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		if (mib_table_register(tables[i]))
			return -1;
	if (register_numtcs(0, pg_numtcs_oid, OID_LENGTH(pg_numtcs_oid),
			    "lldpXdcbxFeatPgNumTCsSupported") ||
	    register_numtcs(1, pfc_numtcs_oid, OID_LENGTH(pfc_numtcs_oid),
			    "lldpXdcbxFeatPfcNumTCPFCSupported"))
		return -1;
	if (dcbx_notify_watch())
		return -1;
	register_sysORTable(dcbx_mib_oid, OID_LENGTH(dcbx_mib_oid),
			    "LLDP-EXT-DCBX-MIB: DCBX of the host's Ethernet ports, from dcbnl");
	return 0;
}

void dcbx_mib_unregister(void)
{
	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++)
		mib_table_unregister(tables[i]);
	for (int i = 0; i < 2; i++)
		if (numtcs_reg[i])
			netsnmp_unregister_handler(numtcs_reg[i]);
	unregister_sysORTable(dcbx_mib_oid, OID_LENGTH(dcbx_mib_oid));
}
