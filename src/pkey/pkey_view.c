/* IBSNMPD-PARTITION-MIB's view (struct pkey_view): the partitions and member
 * ports of the policy as last read, each with its verification status, and
 * the policy's scalars; built whole whenever the file is (re)read, the
 * member ports have been checked again, or an apply changed its outcome.
 * The handlers read the view only. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkey_policy.h"

static void view_free(void *p)
{
	struct pkey_view *v = p;

	if (!v)
		return;
	free(v->parts);
	free(v->members);
	free(v->part_rows.rows);
	free(v->member_rows.rows);
	free(v);
}

/* A member's status as the last verification found it; pending when the
 * policy changed since (or the member was never checked). */
static enum partition_status_value member_status(const struct pkey_policy *pp,
						 const struct pkey_status_snapshot *s,
						 unsigned pkey, uint64_t guid, char *detail,
						 size_t detail_len)
{
	const struct partition_status *st = pkey_status_find(s, pkey, guid);

	if (!st || s->generation != pp->generation)
		return PSTAT_PENDING;
	snprintf(detail, detail_len, "%s", st->detail);
	return st->status;
}

static void add_partition(struct pkey_view *v, const struct pkey_policy *pp,
			  const struct partition *p, const struct pkey_status_snapshot *s)
{
	struct pkey_partition_row *pr = &v->parts[v->n_parts];
	struct mib_row *r = &v->part_rows.rows[v->part_rows.count++];

	pr->pkey = p->pkey;
	snprintf(pr->name, sizeof(pr->name), "%s", p->name);
	pr->ipoib = p->ipoib;
	pr->mtu = p->mtu;
	pr->rate = p->rate;
	pr->sl = p->sl;
	pr->scope = p->scope;
	pr->defmember = p->defmember;
	pr->status = PSTAT_APPLIED; /* the worst of its members; applied with none to check */
	r->index[0] = p->pkey;
	r->index_len = 1;
	r->data = pr;
	v->n_parts++;
	for (size_t k = 0; k < p->n_members; k++) {
		const struct partition_member *m = &p->members[k];
		struct pkey_member_row *mr = &v->members[v->n_members];

		if (!m->is_guid)
			continue; /* keywords (ALL, ...) have no GUID to index by */
		mr->pkey = p->pkey;
		mr->guid = m->guid;
		mr->type = partition_member_effective(p, m);
		mr->status = member_status(pp, s, p->pkey, m->guid, mr->detail, sizeof(mr->detail));
		if (mr->status > pr->status)
			pr->status = mr->status;
		r = &v->member_rows.rows[v->member_rows.count++];
		r->index[0] = p->pkey;
		mib_index_put_guid(r->index + 1, m->guid);
		r->index_len = 1 + MIB_GUID_INDEX_LEN;
		r->data = mr;
		v->n_members++;
	}
}

static struct pkey_view *build(const struct pkey_policy *pp)
{
	const struct partition_file *pf = &pp->pf;
	const struct pkey_status_snapshot *s = cache_snapshot(&pp->status);
	struct pkey_view *v = calloc(1, sizeof(*v));
	size_t np = 0, nm = 0;

	if (!v)
		return NULL;
	v->loaded = pp->loaded;
	v->last_apply = pp->last_apply;
	v->last_result = pp->last_result;
	snprintf(v->error, sizeof(v->error), "%s", pp->loaded ? pp->last_error : pp->load_error);
	if (pp->loaded) {
		v->unconfigured_connected = partition_unconfigured_connected(pf);
		for (size_t i = 0; i < pf->n_parts; i++) {
			np++;
			for (size_t k = 0; k < pf->parts[i].n_members; k++)
				nm += pf->parts[i].members[k].is_guid;
		}
	}
	v->parts = calloc(np ? np : 1, sizeof(*v->parts));
	v->members = calloc(nm ? nm : 1, sizeof(*v->members));
	v->part_rows.rows = calloc(np ? np : 1, sizeof(struct mib_row));
	v->member_rows.rows = calloc(nm ? nm : 1, sizeof(struct mib_row));
	if (!v->parts || !v->members || !v->part_rows.rows || !v->member_rows.rows) {
		view_free(v);
		return NULL;
	}
	for (size_t i = 0; pp->loaded && i < pf->n_parts; i++)
		if (pf->parts[i].pkey >= PKEY_MIN && pf->parts[i].pkey <= PKEY_MAX)
			add_partition(v, pp, &pf->parts[i], s);
	mib_rows_sort(&v->part_rows);
	mib_rows_sort(&v->member_rows);
	return v;
}

static void refresh(struct cache_group *g)
{
	struct pkey_view *v = build(g->owner);

	cache_refresh_done(g, v, v ? NULL : "out of memory");
}

void pkey_view_refresh(struct pkey_policy *pp)
{
	if (pp->view.owner)
		cache_group_refresh_now(&pp->view);
}

void pkey_view_init(struct pkey_policy *pp)
{
	pp->view.name = "partition view";
	pp->view.refresh = refresh;
	pp->view.free_snapshot = view_free;
	pp->view.owner = pp;
	/* the member ports were checked again */
	cache_group_follow(&pp->view, &pp->status, &pp->view_follows);
	pkey_view_refresh(pp);
}
