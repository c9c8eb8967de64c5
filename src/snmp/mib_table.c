/* Scalar groups and tables answered from snapshots (see mib_table.h).
 * Written by hand rather than with table_container because the snapshot is
 * replaced whole by the refresh: the handler only needs a sorted array and a
 * binary search, and no container has to be kept in step row by row. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/config.h"
#include "ibsnmpd/mib_set.h"
#include "ibsnmpd/mib_oids.h"
#include "ibsnmpd/mib_table.h"
#include "ibsnmpd/octets.h"

int mib_index_compare(const oid *a, size_t alen, const oid *b, size_t blen)
{
	size_t n = alen < blen ? alen : blen;

	for (size_t i = 0; i < n; i++) {
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	}
	return alen == blen ? 0 : (alen < blen ? -1 : 1);
}

static int row_cmp(const void *x, const void *y)
{
	const struct mib_row *a = x, *b = y;

	return mib_index_compare(a->index, a->index_len, b->index, b->index_len);
}

void mib_rows_sort(struct mib_rows *r)
{
	if (r->rows && r->count > 1)
		qsort(r->rows, r->count, sizeof(r->rows[0]), row_cmp);
}

static const void *row_data(const struct mib_rows *r, size_t i)
{
	return r->rows ? r->rows[i].data : (const char *)r->array + i * r->stride;
}

/* Row i's index: its own, or computed into buf. */
static const oid *row_index(const struct mib_rows *r, size_t i, oid *buf, size_t *len)
{
	if (r->rows) {
		*len = r->rows[i].index_len;
		return r->rows[i].index;
	}
	*len = r->index_of(row_data(r, i), buf);
	return buf;
}

/* 0 if row i's index is key. */
static int row_compare(const struct mib_rows *r, size_t i, const oid *key, size_t key_len)
{
	oid buf[MIB_INDEX_MAX];
	size_t len;
	const oid *idx = row_index(r, i, buf, &len);

	return mib_index_compare(idx, len, key, key_len);
}

size_t mib_rows_search(const struct mib_rows *r, const oid *key, size_t key_len, int strict)
{
	size_t lo = 0, hi = r ? r->count : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = row_compare(r, mid, key, key_len);

		if (c < 0 || (strict && c == 0))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void mib_set_int(netsnmp_variable_list *vb, long v)
{
	snmp_set_var_typed_value(vb, ASN_INTEGER, &v, sizeof(v));
}

void mib_set_unsigned(netsnmp_variable_list *vb, u_char type, unsigned long v)
{
	snmp_set_var_typed_value(vb, type, &v, sizeof(v));
}

void mib_set_octets(netsnmp_variable_list *vb, const void *p, size_t n)
{
	snmp_set_var_typed_value(vb, ASN_OCTET_STR, p, n);
}

void mib_set_be_octets(netsnmp_variable_list *vb, uint64_t v, size_t n)
{
	uint8_t buf[8];

	if (n > sizeof(buf))
		n = sizeof(buf);
	octets_put_be(v, buf, n);
	mib_set_octets(vb, buf, n);
}

/* ---- tables ------------------------------------------------------------ */

/* GET: name must be table.1.column.index of an existing row. */
static void table_get(const struct mib_table *t, const struct mib_rows *rows,
		      const void *snap, netsnmp_agent_request_info *reqinfo,
		      netsnmp_request_info *r)
{
	netsnmp_variable_list *vb = r->requestvb;
	size_t base = t->table_oid_len;

	if (vb->name_length < base + 3 || vb->name[base] != 1 ||
	    vb->name[base + 1] < t->first_column || vb->name[base + 1] > t->last_column) {
		netsnmp_set_request_error(reqinfo, r, SNMP_NOSUCHOBJECT);
		return;
	}
	const oid *idx = vb->name + base + 2;
	size_t idx_len = vb->name_length - base - 2;
	size_t i = mib_rows_search(rows, idx, idx_len, 0);

	if (!rows || i >= rows->count || row_compare(rows, i, idx, idx_len) ||
	    t->value(row_data(rows, i), (unsigned)vb->name[base + 1], vb, snap))
		netsnmp_set_request_error(reqinfo, r, SNMP_NOSUCHINSTANCE);
}

/* GETNEXT: the first (column, row) after name, column by column. When the
 * table has nothing after name the varbind is left alone and the agent moves
 * on to the next registered subtree. */
static bool table_getnext(const struct mib_table *t, const struct mib_rows *rows,
			  const void *snap, netsnmp_request_info *r)
{
	netsnmp_variable_list *vb = r->requestvb;
	size_t base = t->table_oid_len;
	unsigned column = t->first_column;
	size_t pos = 0;

	if (!rows || rows->count == 0)
		return false;
	if (snmp_oid_compare(vb->name, vb->name_length, t->table_oid, base) > 0 &&
	    vb->name_length > base) {
		if (vb->name[base] > 1)
			return false; /* past the entry */
		if (vb->name[base] == 1 && vb->name_length > base + 1) {
			if (vb->name[base + 1] > t->last_column)
				return false;
			if (vb->name[base + 1] >= t->first_column) {
				column = (unsigned)vb->name[base + 1];
				pos = mib_rows_search(rows, vb->name + base + 2,
						      vb->name_length - base - 2, 1);
			}
		}
	}
	for (; column <= t->last_column; column++, pos = 0) {
		for (; pos < rows->count; pos++) {
			oid name[MAX_OID_LEN], buf[MIB_INDEX_MAX];
			const oid *idx;
			size_t idx_len;

			if (t->value(row_data(rows, pos), column, vb, snap))
				continue;
			idx = row_index(rows, pos, buf, &idx_len);
			memcpy(name, t->table_oid, base * sizeof(oid));
			name[base] = 1;
			name[base + 1] = column;
			memcpy(name + base + 2, idx, idx_len * sizeof(oid));
			snmp_set_var_objid(vb, name, base + 2 + idx_len);
			return true;
		}
	}
	/* nothing found: make sure a value set by a skipped column does not stick */
	snmp_set_var_typed_value(vb, ASN_NULL, NULL, 0);
	return false;
}

const void *mib_table_find_row(const struct mib_table *t, const struct mib_rows *rows,
			       const oid *name, size_t name_len, unsigned *column)
{
	size_t base = t->table_oid_len, i;

	if (!rows || name_len < base + 3 || name[base] != 1)
		return NULL;
	*column = (unsigned)name[base + 1];
	i = mib_rows_search(rows, name + base + 2, name_len - base - 2, 0);
	if (i >= rows->count || row_compare(rows, i, name + base + 2, name_len - base - 2))
		return NULL;
	return row_data(rows, i);
}

static int table_handler(netsnmp_mib_handler *handler, netsnmp_handler_registration *reg,
			 netsnmp_agent_request_info *reqinfo, netsnmp_request_info *requests)
{
	struct mib_table *t = handler->myvoid;
	const void *snap = NULL;
	const struct mib_rows *rows;

	if (reqinfo->mode != MODE_GET && reqinfo->mode != MODE_GETNEXT && t->set)
		return mib_set_run_table(t, handler, reg, reqinfo, requests);
	if (t->asked.fn)
		t->asked.fn(t->asked.arg);
	rows = t->rows(t->ctx, &snap);
	for (netsnmp_request_info *r = requests; r; r = r->next) {
		if (r->processed)
			continue;
		switch (reqinfo->mode) {
		case MODE_GET:
			table_get(t, rows, snap, reqinfo, r);
			break;
		case MODE_GETNEXT:
			table_getnext(t, rows, snap, r);
			break;
		default:
			netsnmp_set_request_error(reqinfo, r, SNMP_ERR_NOTWRITABLE);
			break;
		}
	}
	return SNMP_ERR_NOERROR;
}

/* net-snmp frees the registration's contextName with it. What an area
 * registers in the default context goes to the fabric's (fabricName), so
 * that two instances under one snmpd serve the same OIDs side by side. */
static int set_context(netsnmp_handler_registration *reg, const char *context)
{
	if (!context && ibsnmpd_cfg.fabric_name[0])
		context = ibsnmpd_cfg.fabric_name;
	if (!context)
		return 0;
	reg->contextName = strdup(context);
	return reg->contextName ? 0 : -1;
}

/* netsnmp_unregister_handler() hands unregister_mib_context() the
 * registration's own context name and root, which it frees on the way and
 * then reads again (heap-use-after-free under ASan in a named context):
 * it is given copies. */
static void unregister(netsnmp_handler_registration *reg)
{
	char context[128];
	oid root[MAX_OID_LEN];
	size_t len = reg->rootoid_len;

	if (!reg->contextName || len > MAX_OID_LEN) {
		netsnmp_unregister_handler(reg);
		return;
	}
	snprintf(context, sizeof(context), "%s", reg->contextName);
	memcpy(root, reg->rootoid, len * sizeof(oid));
	unregister_mib_context(root, len, reg->priority, reg->range_subid, reg->range_ubound,
			       context);
}

/* A registration of handler fn (myvoid: what it serves) at root in context
 * (NULL: the default one), not yet registered; NULL on out of memory. Not
 * HANDLER_CAN_GETBULK: net-snmp puts its bulk_to_next helper in front, which
 * turns a GETBULK into the GETNEXTs handled here. (Over AgentX, snmpd sends
 * GETNEXTs anyway.) */
static netsnmp_handler_registration *registration(const char *name, Netsnmp_Node_Handler *fn,
						  const void *myvoid, const oid *root, size_t len,
						  bool writable, const char *context)
{
	netsnmp_mib_handler *h = netsnmp_create_handler(name, fn);
	netsnmp_handler_registration *reg;

	if (!h)
		return NULL;
	h->myvoid = (void *)myvoid;
	reg = netsnmp_handler_registration_create(name, h, root, len,
						  writable ? HANDLER_CAN_RWRITE : HANDLER_CAN_RONLY);
	if (reg && set_context(reg, context)) {
		netsnmp_handler_registration_free(reg);
		reg = NULL;
	}
	return reg;
}

/* Registers a subtree-wide handler (a table, a subtree); NULL and logged if
 * it cannot be. */
static netsnmp_handler_registration *register_handler(const char *name,
						      Netsnmp_Node_Handler *fn,
						      const void *myvoid, const oid *root,
						      size_t len, bool writable,
						      const char *context)
{
	netsnmp_handler_registration *reg = registration(name, fn, myvoid, root, len, writable,
							 context);

	if (!reg || netsnmp_register_handler(reg) != MIB_REGISTERED_OK) {
		snmp_log(LOG_ERR, "cannot register %s%s%s\n", name, context ? " in context " : "",
			 context ? context : "");
		return NULL;
	}
	return reg;
}

int mib_table_register(struct mib_table *t)
{
	t->reg = register_handler(t->name, table_handler, t, t->table_oid, t->table_oid_len,
				  t->set != NULL, t->context);
	return t->reg ? 0 : -1;
}

void mib_table_unregister(struct mib_table *t)
{
	if (t->reg)
		unregister(t->reg);
	t->reg = NULL;
}

/* ---- scalars ----------------------------------------------------------- */

static int scalars_handler(netsnmp_mib_handler *handler, netsnmp_handler_registration *reg,
			   netsnmp_agent_request_info *reqinfo, netsnmp_request_info *requests)
{
	const struct mib_scalars *s = handler->myvoid;
	const void *snap;

	(void)reg;
	if (s->asked.fn && reqinfo->mode == MODE_GET)
		s->asked.fn(s->asked.arg);
	snap = s->snapshot(s->ctx);
	if (reqinfo->mode != MODE_GET)
		return s->set && reqinfo->mode != MODE_GETNEXT
			       ? mib_set_run_scalars(s, handler, reg, reqinfo, requests)
			       : SNMP_ERR_NOERROR;
	for (netsnmp_request_info *r = requests; r; r = r->next) {
		netsnmp_variable_list *vb = r->requestvb;

		if (r->processed)
			continue;
		if (!snap || s->value((unsigned)vb->name[s->group_oid_len], vb, snap))
			netsnmp_set_request_error(reqinfo, r, SNMP_NOSUCHINSTANCE);
	}
	return SNMP_ERR_NOERROR;
}

static netsnmp_handler_registration *scalars_registration(struct mib_scalars *s,
								  const oid *root, size_t len)
{
	return registration(s->name, scalars_handler, s, root, len, s->set != NULL, s->context);
}

static int register_one_by_one(struct mib_scalars *s)
{
	oid name[MAX_OID_LEN];

	if (s->last - s->first >= MIB_SCALARS_MAX || s->group_oid_len + 1 > MAX_OID_LEN)
		return -1;
	memcpy(name, s->group_oid, s->group_oid_len * sizeof(oid));
	for (unsigned n = s->first; n <= s->last; n++) {
		netsnmp_handler_registration *reg;

		name[s->group_oid_len] = n;
		reg = scalars_registration(s, name, s->group_oid_len + 1);
		/* netsnmp_register_scalar() frees reg when it fails */
		if (!reg || netsnmp_register_scalar(reg) != MIB_REGISTERED_OK)
			return -1;
		s->regs[n - s->first] = reg;
	}
	return 0;
}

int mib_scalars_register(struct mib_scalars *s)
{
	int failed;

	if (s->one_by_one) {
		failed = register_one_by_one(s);
	} else {
		s->reg = scalars_registration(s, s->group_oid, s->group_oid_len);
		failed = !s->reg ||
			 netsnmp_register_scalar_group(s->reg, s->first, s->last) != MIB_REGISTERED_OK;
		if (failed)
			s->reg = NULL;
	}
	if (failed) {
		snmp_log(LOG_ERR, "cannot register %s%s%s\n", s->name,
			 s->context ? " in context " : "", s->context ? s->context : "");
		mib_scalars_unregister(s);
		return -1;
	}
	return 0;
}

void mib_scalars_unregister(struct mib_scalars *s)
{
	if (s->reg)
		unregister(s->reg);
	s->reg = NULL;
	for (unsigned i = 0; i < MIB_SCALARS_MAX; i++) {
		if (s->regs[i])
			unregister(s->regs[i]);
		s->regs[i] = NULL;
	}
}

/* ---- subtrees: many members, one registration ------------------------- */

/* Where a member's objects begin and end: a table is table_oid and what
 * follows it; a scalar group group.first up to (not including) group.last+1. */
static size_t member_bound(const struct mib_member *m, bool end, oid *out)
{
	const oid *base = m->table ? m->table->table_oid : m->scalars->group_oid;
	size_t len = m->table ? m->table->table_oid_len : m->scalars->group_oid_len;

	if (len + 1 > MAX_OID_LEN)
		return 0;
	memcpy(out, base, len * sizeof(oid));
	if (m->table) {
		out[len - 1] += end;
		return len;
	}
	out[len] = end ? m->scalars->last + 1 : m->scalars->first;
	return len + 1;
}

static const void *member_ctx(const struct mib_subtree *s, const struct mib_member *m)
{
	return s->member_ctx ? s->member_ctx(s->ctx, m) : s->ctx;
}

static void subtree_get(const struct mib_subtree *s, netsnmp_agent_request_info *reqinfo,
			netsnmp_request_info *r)
{
	netsnmp_variable_list *vb = r->requestvb;

	for (size_t i = 0; i < s->n_members; i++) {
		const struct mib_member *m = &s->members[i];
		oid start[MAX_OID_LEN], end[MAX_OID_LEN];
		size_t start_len = member_bound(m, false, start), end_len = member_bound(m, true, end);
		const void *ctx = member_ctx(s, m), *snap = NULL;

		if (snmp_oid_compare(vb->name, vb->name_length, start, start_len) < 0 ||
		    snmp_oid_compare(vb->name, vb->name_length, end, end_len) >= 0)
			continue;
		if (m->table) {
			const struct mib_rows *rows = ctx ? m->table->rows(ctx, &snap) : NULL;

			table_get(m->table, rows, snap, reqinfo, r);
			return;
		}
		/* group.N.0 */
		snap = ctx ? m->scalars->snapshot(ctx) : NULL;
		if (vb->name_length != m->scalars->group_oid_len + 2 || vb->name[vb->name_length - 1] ||
		    !snap || m->scalars->value((unsigned)vb->name[start_len - 1], vb, snap))
			netsnmp_set_request_error(reqinfo, r, SNMP_NOSUCHINSTANCE);
		return;
	}
	netsnmp_set_request_error(reqinfo, r, SNMP_NOSUCHOBJECT);
}

static bool scalars_getnext(const struct mib_scalars *sc, const void *snap,
			    netsnmp_variable_list *vb)
{
	oid name[MAX_OID_LEN];
	size_t len = sc->group_oid_len + 2;

	if (!snap || len > MAX_OID_LEN)
		return false;
	memcpy(name, sc->group_oid, sc->group_oid_len * sizeof(oid));
	name[len - 1] = 0;
	for (unsigned n = sc->first; n <= sc->last; n++) {
		name[len - 2] = n;
		if (snmp_oid_compare(name, len, vb->name, vb->name_length) <= 0 ||
		    sc->value(n, vb, snap))
			continue;
		snmp_set_var_objid(vb, name, len);
		return true;
	}
	snmp_set_var_typed_value(vb, ASN_NULL, NULL, 0);
	return false;
}

/* The first instance after name in the members that end after it, in order;
 * false if none: the varbind is left alone for the next part, or for the
 * agent to go on past the registration. */
static bool subtree_getnext(const struct mib_subtree *s, netsnmp_request_info *r)
{
	netsnmp_variable_list *vb = r->requestvb;

	for (size_t i = 0; i < s->n_members; i++) {
		const struct mib_member *m = &s->members[i];
		oid end[MAX_OID_LEN];
		size_t end_len = member_bound(m, true, end);
		const void *ctx, *snap = NULL;

		if (snmp_oid_compare(vb->name, vb->name_length, end, end_len) >= 0)
			continue;
		ctx = member_ctx(s, m);
		if (!ctx)
			continue;
		if (m->table) {
			const struct mib_rows *rows = m->table->rows(ctx, &snap);

			if (table_getnext(m->table, rows, snap, r))
				return true;
		} else if (scalars_getnext(m->scalars, m->scalars->snapshot(ctx), vb)) {
			return true;
		}
	}
	return false;
}

/* Whether name is at or before the end of a part's root (a GETNEXT may find
 * something there), or inside it (a GET). */
static bool part_ends_after(const struct mib_subtree *s, const netsnmp_variable_list *vb)
{
	oid end[MAX_OID_LEN];

	memcpy(end, s->root, s->root_len * sizeof(oid));
	end[s->root_len - 1]++;
	return snmp_oid_compare(vb->name, vb->name_length, end, s->root_len) < 0;
}

static bool part_holds(const struct mib_subtree *s, const netsnmp_variable_list *vb)
{
	return snmp_oidtree_compare(s->root, s->root_len, vb->name, vb->name_length) == 0;
}

static void asked(const struct mib_subtree *s)
{
	if (s->asked.fn)
		s->asked.fn(s->asked.arg);
}

/* One registration's requests, served by its parts (one for a subtree). */
static int serve_parts(const struct mib_subtree *const *parts, size_t n,
		       netsnmp_agent_request_info *reqinfo, netsnmp_request_info *requests)
{
	if (reqinfo->mode != MODE_GET && reqinfo->mode != MODE_GETNEXT)
		return SNMP_ERR_NOERROR; /* read-only: net-snmp answers notWritable */
	for (netsnmp_request_info *r = requests; r; r = r->next) {
		size_t i = 0;

		if (r->processed)
			continue;
		if (reqinfo->mode == MODE_GET) {
			while (i < n && !part_holds(parts[i], r->requestvb))
				i++;
			if (i == n) {
				netsnmp_set_request_error(reqinfo, r, SNMP_NOSUCHOBJECT);
				continue;
			}
			asked(parts[i]);
			subtree_get(parts[i], reqinfo, r);
			continue;
		}
		for (; i < n; i++) {
			if (!part_ends_after(parts[i], r->requestvb))
				continue;
			asked(parts[i]);
			if (subtree_getnext(parts[i], r))
				break;
		}
	}
	return SNMP_ERR_NOERROR;
}

static int subtree_handler(netsnmp_mib_handler *handler, netsnmp_handler_registration *reg,
			   netsnmp_agent_request_info *reqinfo, netsnmp_request_info *requests)
{
	const struct mib_subtree *s = handler->myvoid;

	(void)reg;
	return serve_parts(&s, 1, reqinfo, requests);
}

static int joined_handler(netsnmp_mib_handler *handler, netsnmp_handler_registration *reg,
			  netsnmp_agent_request_info *reqinfo, netsnmp_request_info *requests)
{
	const struct mib_joined *j = handler->myvoid;

	(void)reg;
	return serve_parts(j->parts, j->n_parts, reqinfo, requests);
}

/* A subtree's members in OID order, none inside another's range, all in
 * its root; logged (a bug) if not. */
static bool members_in_order(const char *name, const struct mib_subtree *s)
{
	for (size_t i = 0; i < s->n_members; i++) {
		oid a[MAX_OID_LEN], b[MAX_OID_LEN];
		size_t alen = member_bound(&s->members[i], false, a);

		if (!alen || snmp_oidtree_compare(s->root, s->root_len, a, alen) != 0 ||
		    (i && snmp_oid_compare(b, member_bound(&s->members[i - 1], true, b), a, alen) > 0)) {
			snmp_log(LOG_ERR, "%s: member %zu out of order (a bug)\n", name, i);
			return false;
		}
	}
	return true;
}

int mib_subtree_register(struct mib_subtree *s)
{
	if (!members_in_order(s->name, s))
		return -1;
	s->reg = register_handler(s->name, subtree_handler, s, s->root, s->root_len, false,
				  s->context);
	return s->reg ? 0 : -1;
}

void mib_subtree_unregister(struct mib_subtree *s)
{
	if (s->reg)
		unregister(s->reg);
	s->reg = NULL;
}

int mib_joined_register(struct mib_joined *j)
{
	/* parts in OID order, apart, all in the root */
	for (size_t i = 0; i < j->n_parts; i++) {
		const struct mib_subtree *p = j->parts[i], *q = i ? j->parts[i - 1] : NULL;
		oid end[MAX_OID_LEN];

		if (q) {
			memcpy(end, q->root, q->root_len * sizeof(oid));
			end[q->root_len - 1]++;
		}
		if (!members_in_order(j->name, p))
			return -1;
		if (snmp_oidtree_compare(j->root, j->root_len, p->root, p->root_len) != 0 ||
		    (q && snmp_oid_compare(end, q->root_len, p->root, p->root_len) > 0)) {
			snmp_log(LOG_ERR, "%s: part %zu out of order (a bug)\n", j->name, i);
			return -1;
		}
	}
	j->reg = register_handler(j->name, joined_handler, j, j->root, j->root_len, false,
				  j->context);
	return j->reg ? 0 : -1;
}

void mib_joined_unregister(struct mib_joined *j)
{
	if (j->reg)
		unregister(j->reg);
	j->reg = NULL;
}

/* ---- SET helpers ------------------------------------------------------- */

long mib_set_transid(const netsnmp_agent_request_info *reqinfo)
{
	return reqinfo->asp && reqinfo->asp->pdu ? reqinfo->asp->pdu->transid : 0;
}

void mib_index_put_guid(oid *index, uint64_t guid)
{
	for (int k = 0; k < MIB_GUID_INDEX_LEN; k++)
		index[k] = (oid)(guid >> (56 - 8 * k) & 0xff);
}

unsigned mib_index_guid_port(oid *index, uint64_t guid, unsigned port)
{
	mib_index_put_guid(index, guid);
	index[MIB_GUID_INDEX_LEN] = port;
	return MIB_GUID_INDEX_LEN + 1;
}

int mib_index_get_guid(const oid *index, uint64_t *guid)
{
	*guid = 0;
	for (int k = 0; k < MIB_GUID_INDEX_LEN; k++) {
		if (index[k] > 255)
			return -1;
		*guid = *guid << 8 | index[k];
	}
	return 0;
}

static struct {
	uint64_t (*port_guid_of)(uint64_t node_guid, void *arg);
	void *arg;
} ca_resolver;

void mib_set_ca_port_guid_resolver(uint64_t (*port_guid_of)(uint64_t node_guid, void *arg),
				   void *arg)
{
	ca_resolver.port_guid_of = port_guid_of;
	ca_resolver.arg = arg;
}

void mib_node_context(uint64_t guid, unsigned node_type, char *out, size_t len)
{
	if (node_type == 1 && ibsnmpd_cfg.fabric_name[0] && ca_resolver.port_guid_of) {
		uint64_t port_guid = ca_resolver.port_guid_of(guid, ca_resolver.arg);

		if (port_guid)
			guid = port_guid;
	}
	snprintf(out, len, MIB_NODE_CONTEXT_PREFIX "%016llx", (unsigned long long)guid);
}

bool mib_node_context_name(uint64_t guid, unsigned node_type, char *out, size_t len)
{
	if (node_type >= 32 || !(ibsnmpd_cfg.node_context_types >> node_type & 1))
		return false;
	mib_node_context(guid, node_type, out, len);
	return true;
}

void mib_notification_add_column(netsnmp_variable_list **vl, const oid *table, size_t table_len,
				 unsigned column, const oid *index, size_t index_len,
				 int (*value)(const void *row, unsigned column,
					      netsnmp_variable_list *vb),
				 const void *row)
{
	oid name[MAX_OID_LEN];
	netsnmp_variable_list vb;

	if (table_len + 2 + index_len > MAX_OID_LEN)
		return;
	memcpy(name, table, table_len * sizeof(oid));
	name[table_len] = 1; /* the entry */
	name[table_len + 1] = column;
	memcpy(name + table_len + 2, index, index_len * sizeof(oid));
	memset(&vb, 0, sizeof(vb));
	vb.val.string = vb.buf;
	if (!value(row, column, &vb))
		snmp_varlist_add_variable(vl, name, table_len + 2 + index_len, vb.type, vb.val.string,
					  vb.val_len);
	snmp_free_var_internals(&vb);
}

void mib_notification_add_node_context(netsnmp_variable_list **vl, uint64_t guid,
				       unsigned node_type)
{
	static const oid node_table_oid[] = {OID_IBSNMPD_NODE_TABLE};
	oid name[OID_LENGTH(node_table_oid) + 2 + MIB_GUID_INDEX_LEN];
	char context[MIB_NODE_CONTEXT_MAX];

	if (!mib_node_context_name(guid, node_type, context, sizeof(context)))
		return;
	memcpy(name, node_table_oid, sizeof(node_table_oid));
	name[OID_LENGTH(node_table_oid)] = 1;
	name[OID_LENGTH(node_table_oid) + 1] = COLUMN_IBSNMPD_NODE_CONTEXT;
	mib_index_put_guid(name + OID_LENGTH(node_table_oid) + 2, guid);
	snmp_varlist_add_variable(vl, name, OID_LENGTH(name), ASN_OCTET_STR, context,
				  strlen(context));
}

netsnmp_variable_list *mib_notification_new(const oid *trap, size_t trap_len)
{
	static const oid snmp_trap_oid[] = {1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0}; /* SNMPv2-MIB */
	netsnmp_variable_list *vl = NULL;

	snmp_varlist_add_variable(&vl, snmp_trap_oid, OID_LENGTH(snmp_trap_oid), ASN_OBJECT_ID,
				  trap, trap_len * sizeof(oid));
	return vl;
}
