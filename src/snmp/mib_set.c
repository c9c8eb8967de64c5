/* The SET transaction engine (mib_set.h). Written by hand rather than with
 * net-snmp's table_data_set or MFD helpers: those keep rows of their own,
 * while here rows live in snapshots replaced whole, and a transaction spans
 * several registrations (a partition and its members in one PDU). What it
 * takes from net-snmp: the value checks (netsnmp_check_vb_*), delegated
 * requests, and the modes themselves. */
#include <stdlib.h>

#include "ibsnmpd/mib_set.h"
#include "ibsnmpd/mib_table.h"

/* The varbinds of one ACTION call that wait for the area. */
struct delegated {
	struct delegated *next;
	netsnmp_delegated_cache *cache;
	netsnmp_request_info *requests;
};

enum action_state { ACTION_NONE, ACTION_PENDING, ACTION_DONE };

struct mib_set_state {
	bool open;
	long transid;
	void *tx;          /* the area's */
	unsigned token;    /* moves with every transaction: late completions are ignored */
	bool checked;
	enum action_state action;
	int action_error;
	struct delegated *waiting;
};

static struct mib_set_state *state_of(struct mib_set_domain *d)
{
	if (!d->state)
		d->state = calloc(1, sizeof(*d->state));
	return d->state;
}

/* Ends the delegated varbinds: each gets error (if any), then they are
 * answered. */
static void release_waiting(struct mib_set_state *st, int error)
{
	while (st->waiting) {
		struct delegated *w = st->waiting;
		netsnmp_delegated_cache *cache = netsnmp_handler_check_cache(w->cache);

		st->waiting = w->next;
		if (cache) {
			for (netsnmp_request_info *r = w->requests; r; r = r->next) {
				if (error != SNMP_ERR_NOERROR && !r->processed)
					netsnmp_set_request_error(cache->reqinfo, r, error);
				r->delegated = 0;
			}
			netsnmp_free_delegated_cache(cache);
		}
		free(w);
	}
}

static void close_tx(struct mib_set_domain *d, struct mib_set_state *st)
{
	if (!st->open)
		return;
	/* a transaction snmpd gave up on while its ACTION was under way */
	release_waiting(st, SNMP_ERR_GENERR);
	d->end(st->tx);
	st->open = false;
	st->tx = NULL;
	st->token++;
}

/* The transaction of this SET, opened at its first RESERVE1; NULL if the
 * request belongs to no open transaction (or one could not be begun). */
static struct mib_set_state *current(struct mib_set_domain *d,
				     netsnmp_agent_request_info *reqinfo)
{
	struct mib_set_state *st = state_of(d);
	long transid = mib_set_transid(reqinfo);

	if (!st)
		return NULL;
	if (st->open && st->transid == transid)
		return st;
	if (reqinfo->mode != MODE_SET_RESERVE1)
		return NULL;
	close_tx(d, st); /* a transaction that never got its FREE */
	st->tx = d->begin(d->area);
	if (!st->tx)
		return NULL;
	st->open = true;
	st->transid = transid;
	st->token++;
	st->checked = false;
	st->action = ACTION_NONE;
	st->action_error = SNMP_ERR_NOERROR;
	return st;
}

static const struct mib_column_set *column_of(const struct mib_set_table *set, unsigned column)
{
	for (size_t i = 0; i < set->n_columns; i++)
		if (set->columns[i].column == column)
			return &set->columns[i];
	return NULL;
}

/* The column's declared check; the value in req->value. */
static int check_value(const struct mib_column_set *c, struct mib_set_request *req)
{
	const netsnmp_variable_list *vb = req->vb;
	int err;

	switch (c->kind) {
	case MIB_VALUE_INT:
		err = netsnmp_check_vb_int_range(vb, (int)c->min, (int)c->max);
		break;
	case MIB_VALUE_TRUTH:
		err = netsnmp_check_vb_truthvalue(vb);
		break;
	case MIB_VALUE_OCTETS:
		if (vb->type != ASN_OCTET_STR)
			return SNMP_ERR_WRONGTYPE;
		return vb->val_len < (size_t)c->min || vb->val_len > (size_t)c->max
			       ? SNMP_ERR_WRONGLENGTH : SNMP_ERR_NOERROR;
	default:
		return SNMP_ERR_GENERR;
	}
	if (err == SNMP_ERR_NOERROR)
		req->value = *vb->val.integer;
	return err;
}

/* One varbind of RESERVE1: declared checks, then the column's stage hook. */
static int stage(const struct mib_set_table *set, void *tx, struct mib_set_request *req,
		 bool named, bool need_row)
{
	const struct mib_column_set *c;
	int err;

	if (!named || (!req->row && need_row))
		return SNMP_ERR_NOCREATION; /* rows are what the area serves */
	c = column_of(set, req->column);
	if (!c)
		return SNMP_ERR_NOTWRITABLE;
	if ((err = check_value(c, req)) != SNMP_ERR_NOERROR)
		return err;
	return c->stage(tx, req);
}

/* How a registration names the varbinds of a SET. */
struct target {
	const struct mib_set_table *set;
	bool need_row; /* a varbind must name a row served now */
	/* fills req from vb; false if the OID names no instance */
	bool (*name)(const void *reg, const void *rows, netsnmp_variable_list *vb,
		     struct mib_set_request *req);
	const void *reg;
	const void *rows;
};

static void reserve1(const struct target *t, struct mib_set_state *st,
		     netsnmp_agent_request_info *reqinfo, netsnmp_request_info *requests)
{
	unsigned rs = t->set->row_status_column;

	/* pass 0: RowStatus columns (when the table has one), pass 1: the rest */
	for (int pass = rs ? 0 : 1; pass < 2; pass++) {
		for (netsnmp_request_info *r = requests; r; r = r->next) {
			struct mib_set_request req = {.vb = r->requestvb};
			bool named = t->name(t->reg, t->rows, r->requestvb, &req);
			int err;

			if (named && rs && (req.column == rs) != (pass == 0))
				continue;
			if (!named && pass == 0)
				continue; /* reported in pass 1 */
			err = stage(t->set, st->tx, &req, named, t->need_row);
			if (err != SNMP_ERR_NOERROR) {
				netsnmp_set_request_error(reqinfo, r, err);
				return; /* nothing more: the whole SET fails */
			}
		}
	}
}

static void delegate(struct mib_set_state *st, netsnmp_mib_handler *handler,
		     netsnmp_handler_registration *reg, netsnmp_agent_request_info *reqinfo,
		     netsnmp_request_info *requests)
{
	struct delegated *w = calloc(1, sizeof(*w));

	if (!w) {
		netsnmp_set_request_error(reqinfo, requests, SNMP_ERR_RESOURCEUNAVAILABLE);
		return;
	}
	w->cache = netsnmp_create_delegated_cache(handler, reg, reqinfo, requests, NULL);
	w->requests = requests;
	for (netsnmp_request_info *r = requests; r; r = r->next)
		r->delegated = 1;
	w->next = st->waiting;
	st->waiting = w;
}

static void action(struct mib_set_domain *d, struct mib_set_state *st,
		   netsnmp_mib_handler *handler, netsnmp_handler_registration *reg,
		   netsnmp_agent_request_info *reqinfo, netsnmp_request_info *requests)
{
	if (st->action == ACTION_NONE) {
		int r;

		st->action = ACTION_PENDING;
		r = d->action(st->tx, st->token);
		if (r != MIB_SET_PENDING) {
			st->action = ACTION_DONE;
			st->action_error = r;
		}
		/* (an area may also have ended it before returning) */
		if (st->action == ACTION_DONE) {
			if (st->action_error != SNMP_ERR_NOERROR)
				netsnmp_set_request_error(reqinfo, requests, st->action_error);
			return;
		}
	}
	if (st->action == ACTION_PENDING)
		delegate(st, handler, reg, reqinfo, requests);
	/* done: another registration's ACTION call already carries the outcome */
}

static int run(struct mib_set_domain *d, const struct target *t, netsnmp_mib_handler *handler,
	       netsnmp_handler_registration *reg, netsnmp_agent_request_info *reqinfo,
	       netsnmp_request_info *requests)
{
	struct mib_set_state *st = current(d, reqinfo);
	int err;

	if (!st) {
		if (reqinfo->mode == MODE_SET_RESERVE1)
			netsnmp_set_request_error(reqinfo, requests, SNMP_ERR_RESOURCEUNAVAILABLE);
		return SNMP_ERR_NOERROR;
	}
	switch (reqinfo->mode) {
	case MODE_SET_RESERVE1:
		reserve1(t, st, reqinfo, requests);
		break;
	case MODE_SET_RESERVE2:
		if (!st->checked) {
			st->checked = true;
			err = d->consistent ? d->consistent(st->tx) : SNMP_ERR_NOERROR;
			if (err != SNMP_ERR_NOERROR)
				netsnmp_set_request_error(reqinfo, requests, err);
		}
		break;
	case MODE_SET_ACTION:
		action(d, st, handler, reg, reqinfo, requests);
		break;
	/* A SET ends in COMMIT (every ACTION worked), UNDO (one failed) or FREE
	 * (a RESERVE failed): net-snmp sends no FREE after the first two, in
	 * the master as over AgentX (CleanupSet after CommitSet is a COMMIT).
	 * The first registration's call ends the transaction; the others'
	 * calls then belong to none. */
	case MODE_SET_COMMIT:
		if (st->action == ACTION_DONE && st->action_error == SNMP_ERR_NOERROR && d->commit)
			d->commit(st->tx);
		close_tx(d, st);
		break;
	case MODE_SET_UNDO:
		/* the area knows what its ACTION did (maybe nothing, maybe part) */
		if (st->action != ACTION_NONE && d->undo && d->undo(st->tx))
			netsnmp_set_request_error(reqinfo, requests, SNMP_ERR_UNDOFAILED);
		close_tx(d, st);
		break;
	case MODE_SET_FREE:
		close_tx(d, st);
		break;
	}
	return SNMP_ERR_NOERROR;
}

void mib_set_action_done(struct mib_set_domain *d, unsigned token, int error)
{
	struct mib_set_state *st = d->state;

	if (!st || !st->open || st->token != token || st->action != ACTION_PENDING)
		return; /* that transaction is over */
	st->action = ACTION_DONE;
	st->action_error = error;
	release_waiting(st, error);
}

void *mib_set_tx(struct mib_set_domain *d, unsigned token)
{
	struct mib_set_state *st = d->state;

	return st && st->open && st->token == token ? st->tx : NULL;
}

void mib_set_domain_free(struct mib_set_domain *d)
{
	if (!d->state)
		return;
	close_tx(d, d->state);
	free(d->state);
	d->state = NULL;
}

/* ---- tables and scalar groups ------------------------------------------------ */

static bool table_name(const void *reg, const void *rows, netsnmp_variable_list *vb,
		       struct mib_set_request *req)
{
	const struct mib_table *t = reg;
	size_t base = t->table_oid_len;
	unsigned column;

	if (vb->name_length < base + 3 || vb->name[base] != 1)
		return false;
	req->column = (unsigned)vb->name[base + 1];
	req->index = vb->name + base + 2;
	req->index_len = vb->name_length - base - 2;
	req->row = mib_table_find_row(t, rows, vb->name, vb->name_length, &column);
	return true;
}

int mib_set_run_table(const struct mib_table *t, netsnmp_mib_handler *handler,
		      netsnmp_handler_registration *reg, netsnmp_agent_request_info *reqinfo,
		      netsnmp_request_info *requests)
{
	const void *snap;
	struct target target = {.set = t->set, .need_row = !t->set->creatable,
				.name = table_name, .reg = t, .rows = t->rows(t->ctx, &snap)};

	return run(t->set->domain, &target, handler, reg, reqinfo, requests);
}

/* The scalar_group helper has checked the instance (.0) and the range. */
static bool scalar_name(const void *reg, const void *rows, netsnmp_variable_list *vb,
			struct mib_set_request *req)
{
	const struct mib_scalars *s = reg;

	(void)rows;
	if (vb->name_length <= s->group_oid_len)
		return false;
	req->column = (unsigned)vb->name[s->group_oid_len];
	req->index = vb->name + s->group_oid_len + 1;
	req->index_len = vb->name_length - s->group_oid_len - 1;
	return true;
}

int mib_set_run_scalars(const struct mib_scalars *s, netsnmp_mib_handler *handler,
			netsnmp_handler_registration *reg,
			netsnmp_agent_request_info *reqinfo, netsnmp_request_info *requests)
{
	struct target target = {.set = s->set, .need_row = false, /* scalars have no rows */
				.name = scalar_name, .reg = s};

	return run(s->set->domain, &target, handler, reg, reqinfo, requests);
}
