/* The tree Slurm's topology/tree plugin reads, from the fabric as cabled
 * (slurm_internal.h says what comes out). Pure.
 *
 * Levels are distances from the leaves (the switches hosts are cabled to)
 * over switch-to-switch cables, so a fat tree of two levels gives leaves
 * and spines, one of three levels adds its cores; a tier's members are the
 * tier below's switches it is cabled to. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/slurm.h"

/* ---- names, kept together ---- */

struct slurm_arena {
	struct slurm_arena *next;
	size_t used, cap;
	char data[];
};

static char *arena_dup(struct slurm_arena **a, const char *s)
{
	size_t len = strlen(s) + 1;
	char *p;

	if (!*a || (*a)->cap - (*a)->used < len) {
		size_t cap = len > 65536 ? len : 65536;
		struct slurm_arena *c = malloc(sizeof(*c) + cap);

		if (!c)
			return NULL;
		c->next = *a;
		c->used = 0;
		c->cap = cap;
		*a = c;
	}
	p = (*a)->data + (*a)->used;
	memcpy(p, s, len);
	(*a)->used += len;
	return p;
}

static void arena_free(struct slurm_arena *a)
{
	while (a) {
		struct slurm_arena *next = a->next;

		free(a);
		a = next;
	}
}

/* ---- the fabric as a graph ---- */

struct guid_index {
	uint64_t guid;
	size_t node;
};

static int guid_index_cmp(const void *x, const void *y)
{
	uint64_t a = ((const struct guid_index *)x)->guid, b = ((const struct guid_index *)y)->guid;

	return (a > b) - (a < b);
}

struct edge {
	size_t from, to;
};

static int edge_cmp(const void *x, const void *y)
{
	const struct edge *a = x, *b = y;

	if (a->from != b->from)
		return a->from < b->from ? -1 : 1;
	return (a->to > b->to) - (a->to < b->to);
}

/* Each node's neighbours: adj[start[i] .. start[i + 1]), unique. */
struct graph {
	size_t *start, *adj;
};

static int graph_build(struct graph *g, const struct slurm_node *nodes, size_t n,
		       const struct slurm_cable *cables, size_t n_cables)
{
	struct guid_index *idx = malloc((n ? n : 1) * sizeof(*idx));
	struct edge *e = malloc((n_cables ? 2 * n_cables : 1) * sizeof(*e));
	size_t ne = 0, u = 0;

	g->start = calloc(n + 1, sizeof(*g->start));
	g->adj = NULL;
	if (!idx || !e || !g->start)
		goto oom;
	for (size_t i = 0; i < n; i++)
		idx[i] = (struct guid_index){nodes[i].guid, i};
	qsort(idx, n, sizeof(*idx), guid_index_cmp);
	for (size_t i = 0; i < n_cables; i++) {
		struct guid_index ka = {cables[i].a, 0}, kb = {cables[i].b, 0};
		const struct guid_index *a = bsearch(&ka, idx, n, sizeof(*idx), guid_index_cmp);
		const struct guid_index *b = bsearch(&kb, idx, n, sizeof(*idx), guid_index_cmp);

		if (!a || !b || a->node == b->node)
			continue;
		e[ne++] = (struct edge){a->node, b->node};
		e[ne++] = (struct edge){b->node, a->node};
	}
	qsort(e, ne, sizeof(*e), edge_cmp);
	g->adj = malloc((ne ? ne : 1) * sizeof(*g->adj));
	if (!g->adj)
		goto oom;
	for (size_t i = 0; i < ne; i++) {
		if (u && e[i].from == e[i - 1].from && e[i].to == e[i - 1].to)
			continue;
		g->adj[u++] = e[i].to;
		g->start[e[i].from + 1]++;
	}
	for (size_t i = 0; i < n; i++)
		g->start[i + 1] += g->start[i];
	free(idx);
	free(e);
	return 0;
oom:
	free(idx);
	free(e);
	free(g->start);
	free(g->adj);
	return -1;
}

/* ---- hosts and the leaves they share ---- */

struct host {
	const char *name;
	size_t first, n; /* its leaves: leaves[first .. first + n), sorted */
};

struct build {
	const struct slurm_node *nodes;
	size_t n_nodes;
	struct graph g;
	size_t *leaves; /* the hosts' leaf sets, one after the other */
	struct host *hosts;
	size_t n_hosts;
};

static const size_t *host_leaves(const struct build *b, const struct host *h)
{
	return b->leaves + h->first;
}

/* By their sets of leaves alone. */
static int host_cmp_leaves(const struct build *b, const struct host *a, const struct host *h)
{
	size_t n = a->n < h->n ? a->n : h->n;
	const size_t *la = host_leaves(b, a), *lh = host_leaves(b, h);

	for (size_t i = 0; i < n; i++)
		if (la[i] != lh[i])
			return la[i] < lh[i] ? -1 : 1;
	if (a->n != h->n)
		return a->n < h->n ? -1 : 1;
	return 0;
}

static int host_cmp(const void *x, const void *y, void *arg)
{
	int c = host_cmp_leaves(arg, x, y);

	return c ? c : strcmp(((const struct host *)x)->name, ((const struct host *)y)->name);
}

static int size_cmp(const void *x, const void *y)
{
	size_t a = *(const size_t *)x, b = *(const size_t *)y;

	return (a > b) - (a < b);
}

static int node_by_host_cmp(const void *x, const void *y, void *arg)
{
	const struct slurm_node *nodes = arg;
	const struct slurm_node *a = &nodes[*(const size_t *)x], *b = &nodes[*(const size_t *)y];
	int c = strcmp(a->host, b->host);

	return c ? c : size_cmp(x, y);
}

/* The hosts, each with the sorted set of switches its adapters are cabled
 * to, sorted by that set: hosts under one leaf, or one group, come
 * together. */
static int hosts_build(struct build *b, struct slurm_tree *t)
{
	size_t *adapters = malloc((b->n_nodes ? b->n_nodes : 1) * sizeof(*adapters));
	size_t n_adapters = 0, n_leaves = 0, cap_leaves = 64;

	b->hosts = malloc((b->n_nodes ? b->n_nodes : 1) * sizeof(*b->hosts));
	b->leaves = malloc(cap_leaves * sizeof(*b->leaves));
	if (!adapters || !b->hosts || !b->leaves) {
		free(adapters);
		return -1;
	}
	for (size_t i = 0; i < b->n_nodes; i++) {
		if (b->nodes[i].is_switch || !b->nodes[i].host)
			continue;
		if (!slurm_name_ok(b->nodes[i].host))
			t->hosts_bad_name++;
		else
			adapters[n_adapters++] = i;
	}
	qsort_r(adapters, n_adapters, sizeof(*adapters), node_by_host_cmp, (void *)b->nodes);
	for (size_t i = 0; i < n_adapters;) {
		struct host *h = &b->hosts[b->n_hosts];
		size_t j = i;

		h->name = b->nodes[adapters[i]].host;
		h->first = n_leaves;
		for (; j < n_adapters && !strcmp(b->nodes[adapters[j]].host, h->name); j++) {
			size_t a = adapters[j];

			for (size_t k = b->g.start[a]; k < b->g.start[a + 1]; k++) {
				if (!b->nodes[b->g.adj[k]].is_switch)
					continue;
				if (n_leaves == cap_leaves) {
					size_t *p = realloc(b->leaves, 2 * cap_leaves * sizeof(*p));

					if (!p) {
						free(adapters);
						return -1;
					}
					b->leaves = p;
					cap_leaves *= 2;
				}
				b->leaves[n_leaves++] = b->g.adj[k];
			}
		}
		h->n = n_leaves - h->first;
		if (!h->n) {
			t->hosts_uncabled++;
		} else {
			size_t u = 1, *l = b->leaves + h->first;

			qsort(l, h->n, sizeof(*l), size_cmp);
			for (size_t k = 1; k < h->n; k++)
				if (l[k] != l[u - 1])
					l[u++] = l[k];
			h->n = u;
			n_leaves = h->first + u;
			b->n_hosts++;
		}
		i = j;
	}
	free(adapters);
	qsort_r(b->hosts, b->n_hosts, sizeof(*b->hosts), host_cmp, b);
	return 0;
}

/* ---- the tree's switches ---- */

struct entity {
	const char *name;
	unsigned level;
	uint64_t guid;     /* 0: a group */
	size_t sw;         /* its switch (a node index); a group: its first leaf's */
	size_t mfirst, mn; /* its members in the build's member list */
	size_t lfirst, ln; /* a group's leaves (in b->leaves); a leaf: ln 1, lfirst unused */
	uint64_t *cover;   /* the leaves it reaches, a bit each */
};

struct member {
	size_t owner;      /* an entity */
	const char *name;  /* a host's, or a member entity's name (set once named) */
	size_t entity;     /* a member entity, or SIZE_MAX for a host */
};

struct tree_work {
	struct entity *e;
	size_t n_e, cap_e;
	struct member *m;
	size_t n_m, cap_m;
	size_t *leaf_bit; /* per node: its bit among the leaves, SIZE_MAX if none */
	size_t n_leaf_bits, cover_words;
};

static struct entity *entity_add(struct tree_work *w)
{
	if (w->n_e == w->cap_e) {
		size_t cap = w->cap_e ? 2 * w->cap_e : 64;
		struct entity *p = realloc(w->e, cap * sizeof(*p));

		if (!p)
			return NULL;
		w->e = p;
		w->cap_e = cap;
	}
	memset(&w->e[w->n_e], 0, sizeof(w->e[w->n_e]));
	w->e[w->n_e].cover = calloc(w->cover_words ? w->cover_words : 1, sizeof(uint64_t));
	if (!w->e[w->n_e].cover)
		return NULL;
	return &w->e[w->n_e++];
}

static int member_add(struct tree_work *w, size_t owner, const char *name, size_t entity)
{
	if (w->n_m == w->cap_m) {
		size_t cap = w->cap_m ? 2 * w->cap_m : 256;
		struct member *p = realloc(w->m, cap * sizeof(*p));

		if (!p)
			return -1;
		w->m = p;
		w->cap_m = cap;
	}
	w->m[w->n_m++] = (struct member){owner, name, entity};
	return 0;
}

static void cover_set(struct tree_work *w, struct entity *e, size_t node)
{
	size_t bit = w->leaf_bit[node];

	e->cover[bit / 64] |= UINT64_C(1) << (bit % 64);
}

static bool covers_all(const struct tree_work *w, const struct entity *e)
{
	for (size_t i = 0; i < w->n_leaf_bits; i++)
		if (!(e->cover[i / 64] & (UINT64_C(1) << (i % 64))))
			return false;
	return true;
}

/* The switches of level `level`: each switch of that level cabled to a
 * member switch of entities[from .. to) becomes an entity with those
 * members. -1 out of memory. */
static int tier_build(const struct build *b, struct tree_work *w, const unsigned *level_of,
		      unsigned level, size_t from, size_t to)
{
	struct edge *p = NULL; /* from: a switch of the tier, to: its member entity */
	size_t n = 0, cap = 0;

	for (size_t c = from; c < to; c++) {
		const struct entity *e = &w->e[c];
		size_t nsw = e->guid ? 1 : e->ln;

		for (size_t s = 0; s < nsw; s++) {
			size_t sw = e->guid ? e->sw : b->leaves[e->lfirst + s];

			for (size_t k = b->g.start[sw]; k < b->g.start[sw + 1]; k++) {
				size_t up = b->g.adj[k];

				if (!b->nodes[up].is_switch || level_of[up] != level)
					continue;
				if (n == cap) {
					size_t ncap = cap ? 2 * cap : 256;
					struct edge *q = realloc(p, ncap * sizeof(*q));

					if (!q) {
						free(p);
						return -1;
					}
					p = q;
					cap = ncap;
				}
				p[n++] = (struct edge){up, c};
			}
		}
	}
	if (n) /* p is NULL when no switch of the tier is cabled to these */
		qsort(p, n, sizeof(*p), edge_cmp);
	for (size_t i = 0; i < n;) {
		struct entity *e = entity_add(w);
		size_t j = i;

		if (!e) {
			free(p);
			return -1;
		}
		e->level = level;
		e->sw = p[i].from;
		e->guid = b->nodes[e->sw].guid;
		e->mfirst = w->n_m;
		for (; j < n && p[j].from == p[i].from; j++) {
			const struct entity *child;

			if (j > i && p[j].to == p[j - 1].to)
				continue;
			child = &w->e[p[j].to];
			for (size_t k = 0; k < w->cover_words; k++)
				e->cover[k] |= child->cover[k];
			if (member_add(w, (size_t)(e - w->e), NULL, p[j].to)) {
				free(p);
				return -1;
			}
		}
		e->mn = w->n_m - e->mfirst;
		i = j;
	}
	free(p);
	return 0;
}

/* Each switch's distance from the nearest leaf over switch cables (BFS);
 * UINT_MAX where none reaches. */
static unsigned *levels_build(const struct build *b, const struct tree_work *w)
{
	unsigned *level = malloc((b->n_nodes ? b->n_nodes : 1) * sizeof(*level));
	size_t *queue = malloc((b->n_nodes ? b->n_nodes : 1) * sizeof(*queue));
	size_t head = 0, tail = 0;

	if (!level || !queue) {
		free(level);
		free(queue);
		return NULL;
	}
	for (size_t i = 0; i < b->n_nodes; i++) {
		level[i] = w->leaf_bit[i] != SIZE_MAX ? 0 : UINT32_MAX;
		if (!level[i])
			queue[tail++] = i;
	}
	while (head < tail) {
		size_t s = queue[head++];

		for (size_t k = b->g.start[s]; k < b->g.start[s + 1]; k++) {
			size_t up = b->g.adj[k];

			if (b->nodes[up].is_switch && level[up] == UINT32_MAX) {
				level[up] = level[s] + 1;
				queue[tail++] = up;
			}
		}
	}
	free(queue);
	return level;
}

static int entity_order_cmp(const void *x, const void *y, void *arg)
{
	const struct tree_work *w = arg;
	const struct entity *a = &w->e[*(const size_t *)x], *b = &w->e[*(const size_t *)y];

	if (a->level != b->level)
		return a->level < b->level ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* By name, then GUID (groups, GUID 0, by their first leaf). */
static int entity_name_cmp(const void *x, const void *y, void *arg)
{
	const struct tree_work *w = arg;
	const struct entity *a = &w->e[*(const size_t *)x], *b = &w->e[*(const size_t *)y];
	int c = strcmp(a->name, b->name);

	if (c)
		return c;
	if (a->guid != b->guid)
		return a->guid < b->guid ? -1 : 1;
	return (a->sw > b->sw) - (a->sw < b->sw);
}

static int str_cmp(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* A switch's Slurm name: its own when it is one, else from its GUID. */
static const char *switch_name(struct slurm_arena **a, const struct slurm_node *nd)
{
	char buf[32];

	if (nd->name && slurm_name_ok(nd->name))
		return arena_dup(a, nd->name);
	snprintf(buf, sizeof(buf), "ib-%016" PRIx64, nd->guid);
	return arena_dup(a, buf);
}

/* Names every entity: switches theirs (from its GUID where two would
 * share one), groups "FIRST+N" after their leaves' names ("_2", "_3"
 * after where two would share one). */
static int entities_name(const struct build *b, struct tree_work *w, struct slurm_arena **a)
{
	size_t *order = malloc((w->n_e ? w->n_e : 1) * sizeof(*order));

	if (!order)
		return -1;
	for (size_t i = 0; i < w->n_e; i++) {
		struct entity *e = &w->e[i];

		if (e->guid) {
			e->name = switch_name(a, &b->nodes[e->sw]);
		} else {
			const char *first = NULL;
			char buf[300];

			for (size_t k = 0; k < e->ln; k++) {
				const struct slurm_node *nd = &b->nodes[b->leaves[e->lfirst + k]];
				const char *nm = nd->name && slurm_name_ok(nd->name) ? nd->name : NULL;
				char gbuf[32];

				if (!nm) {
					snprintf(gbuf, sizeof(gbuf), "ib-%016" PRIx64, nd->guid);
					nm = gbuf;
				}
				if (!first || strcmp(nm, first) < 0)
					first = arena_dup(a, nm);
				if (!first)
					break;
			}
			if (first) {
				snprintf(buf, sizeof(buf), "%s+%zu", first, e->ln - 1);
				e->name = arena_dup(a, buf);
			}
		}
		if (!e->name) {
			free(order);
			return -1;
		}
		order[i] = i;
	}
	/* two of one name: every switch of it takes its GUID's, groups a number */
	for (bool again = true; again;) {
		again = false;
		for (size_t i = 0; i < w->n_e; i++)
			order[i] = i;
		qsort_r(order, w->n_e, sizeof(*order), entity_name_cmp, w);
		for (size_t i = 0, j; i < w->n_e; i = j) {
			for (j = i + 1; j < w->n_e && !strcmp(w->e[order[i]].name, w->e[order[j]].name);
			     j++)
				;
			for (size_t k = i; j - i > 1 && k < j; k++) {
				struct entity *e = &w->e[order[k]];
				char buf[320];

				if (e->guid)
					snprintf(buf, sizeof(buf), "ib-%016" PRIx64, e->guid);
				else
					snprintf(buf, sizeof(buf), "%s_%zu", e->name, k - i + 1);
				if (!strcmp(buf, e->name))
					continue;
				if (!(e->name = arena_dup(a, buf))) {
					free(order);
					return -1;
				}
				again = true;
			}
		}
	}
	free(order);
	return 0;
}

static int level0_build(struct build *b, struct tree_work *w, struct slurm_arena **a)
{
	for (size_t i = 0; i < b->n_hosts;) {
		const struct host *h = &b->hosts[i];
		struct entity *e = entity_add(w);
		size_t j = i;

		if (!e)
			return -1;
		e->level = 0;
		e->sw = host_leaves(b, h)[0];
		e->guid = h->n == 1 ? b->nodes[e->sw].guid : 0;
		e->lfirst = h->first;
		e->ln = h->n;
		for (size_t k = 0; k < h->n; k++)
			cover_set(w, e, host_leaves(b, h)[k]);
		e->mfirst = w->n_m;
		for (; j < b->n_hosts && !host_cmp_leaves(b, &b->hosts[j], h); j++) {
			const char *name = arena_dup(a, b->hosts[j].name);

			if (!name || member_add(w, (size_t)(e - w->e), name, SIZE_MAX))
				return -1;
		}
		e->mn = w->n_m - e->mfirst;
		i = j;
	}
	return 0;
}

static void work_free(struct tree_work *w)
{
	for (size_t i = 0; i < w->n_e; i++)
		free(w->e[i].cover);
	free(w->e);
	free(w->m);
	free(w->leaf_bit);
}

/* The entities in order into t, each one's member names sorted. */
static int tree_assemble(struct tree_work *w, struct slurm_tree *t)
{
	size_t *order = malloc((w->n_e ? w->n_e : 1) * sizeof(*order));
	size_t at = 0;

	t->switches = calloc(w->n_e ? w->n_e : 1, sizeof(*t->switches));
	t->members = malloc((w->n_m ? w->n_m : 1) * sizeof(*t->members));
	if (!order || !t->switches || !t->members) {
		free(order);
		return -1;
	}
	for (size_t i = 0; i < w->n_e; i++)
		order[i] = i;
	qsort_r(order, w->n_e, sizeof(*order), entity_order_cmp, w);
	for (size_t i = 0; i < w->n_e; i++) {
		const struct entity *e = &w->e[order[i]];
		struct slurm_switch *s = &t->switches[i];

		s->name = e->name;
		s->level = e->level;
		s->guid = e->guid;
		s->first = at;
		for (size_t k = e->mfirst; k < e->mfirst + e->mn; k++) {
			const struct member *m = &w->m[k];

			t->members[at++] = m->entity == SIZE_MAX ? m->name : w->e[m->entity].name;
		}
		s->n = at - s->first;
		qsort(t->members + s->first, s->n, sizeof(*t->members), str_cmp);
	}
	t->n_switches = w->n_e;
	t->n_members = at;
	free(order);
	return 0;
}

struct slurm_tree *slurm_tree_build(const struct slurm_node *nodes, size_t n_nodes,
				    const struct slurm_cable *cables, size_t n_cables)
{
	struct build b = {.nodes = nodes, .n_nodes = n_nodes};
	struct tree_work w = {0};
	struct slurm_tree *t = calloc(1, sizeof(*t));
	unsigned *level_of = NULL;
	size_t from = 0, to;
	bool top = false, built = false;

	if (!t || graph_build(&b.g, nodes, n_nodes, cables, n_cables))
		goto oom;
	if (hosts_build(&b, t))
		goto oom;
	t->hosts = b.n_hosts;
	w.leaf_bit = malloc((n_nodes ? n_nodes : 1) * sizeof(*w.leaf_bit));
	if (!w.leaf_bit)
		goto oom;
	for (size_t i = 0; i < n_nodes; i++)
		w.leaf_bit[i] = SIZE_MAX;
	for (size_t i = 0; i < b.n_hosts; i++)
		for (size_t k = 0; k < b.hosts[i].n; k++) {
			size_t sw = host_leaves(&b, &b.hosts[i])[k];

			if (w.leaf_bit[sw] == SIZE_MAX)
				w.leaf_bit[sw] = w.n_leaf_bits++;
		}
	w.cover_words = (w.n_leaf_bits + 63) / 64;
	if (level0_build(&b, &w, &t->arena) || !(level_of = levels_build(&b, &w)))
		goto oom;
	/* tier by tier, up to the first with a switch that reaches every leaf */
	for (unsigned level = 1;; level++) {
		to = w.n_e;
		for (size_t i = from; i < to && !top; i++)
			top = covers_all(&w, &w.e[i]);
		if (top || from == to)
			break;
		if (tier_build(&b, &w, level_of, level, from, to))
			goto oom;
		from = to;
	}
	if (entities_name(&b, &w, &t->arena) || tree_assemble(&w, t))
		goto oom;
	built = true;
oom:
	free(level_of);
	work_free(&w);
	free(b.g.start);
	free(b.g.adj);
	free(b.hosts);
	free(b.leaves);
	if (built)
		return t;
	slurm_tree_free(t);
	return NULL;
}

void slurm_tree_free(struct slurm_tree *t)
{
	if (!t)
		return;
	free(t->switches);
	free(t->members);
	arena_free(t->arena);
	free(t);
}

static void lists_free(char **lists, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(lists[i]);
	free(lists);
}

/* Each switch's members as one hostlist, lists[i] for switches[i]; their
 * lengths summed in *chars. NULL out of memory. */
static char **member_lists(const struct slurm_tree *t, size_t *chars)
{
	char **lists = calloc(t->n_switches ? t->n_switches : 1, sizeof(*lists));

	*chars = 0;
	for (size_t i = 0; lists && i < t->n_switches; i++) {
		const struct slurm_switch *s = &t->switches[i];

		lists[i] = slurm_hostlist_compress(t->members + s->first, s->n);
		if (!lists[i]) {
			lists_free(lists, i);
			return NULL;
		}
		*chars += strlen(s->name) + strlen(lists[i]);
	}
	return lists;
}

char *slurm_tree_conf(const struct slurm_tree *t)
{
	static const char head[] =
		"# topology.conf(5) for Slurm's topology/tree plugin: the InfiniBand fabric as\n"
		"# cabled, written by ibsnmpd (slurmTopologyFile) each time its tree changes.\n"
		"# Edits here are overwritten.\n";
	size_t chars, cap, len = sizeof(head) - 1;
	char **lists = member_lists(t, &chars);
	char *out;

	if (!lists)
		return NULL;
	cap = sizeof(head) + chars + 32 * t->n_switches;
	out = malloc(cap);
	if (out) {
		memcpy(out, head, len + 1);
		for (size_t i = 0; i < t->n_switches; i++) {
			const struct slurm_switch *s = &t->switches[i];

			len += (size_t)snprintf(out + len, cap - len, "SwitchName=%s %s=%s\n",
						s->name, s->level ? "Switches" : "Nodes", lists[i]);
		}
	}
	lists_free(lists, t->n_switches);
	return out;
}

/* Names and hostlists are single-quoted scalars: a name Slurm can read has
 * no quote (slurm_name_ok), and quoted, none is read as a number, a
 * boolean or YAML's own syntax ("-", ":", "[" at its start). */
char *slurm_tree_yaml(const struct slurm_tree *t)
{
	static const char head[] =
		"# topology.yaml(5) for Slurm 25.05 and later: the InfiniBand fabric as\n"
		"# cabled, written by ibsnmpd (slurmTopologyYaml) each time its tree changes.\n"
		"# Edits here are overwritten. " SLURM_YAML_TREE ": the tree (topology/tree)";
	static const char blocks_said[] =
		"; " SLURM_YAML_BLOCKS ": the\n"
		"# hosts cabled to the same leaves (a rail-optimized fabric's scalable\n"
		"# units) as blocks (topology/block)";
	size_t chars, units = 0, size = 0;
	char **lists = member_lists(t, &chars);
	char *out = NULL;
	FILE *f;

	if (!lists)
		return NULL;
	for (size_t i = 0; i < t->n_switches; i++)
		units += t->switches[i].level == 0 && t->switches[i].guid == 0;
	f = open_memstream(&out, &size);
	if (!f)
		goto done;
	fprintf(f, "%s%s.\n---\n- topology: %s\n  cluster_default: true\n  tree:\n    switches:\n",
		head, units ? blocks_said : "", SLURM_YAML_TREE);
	for (size_t i = 0; i < t->n_switches; i++)
		fprintf(f, "      - switch: '%s'\n        %s: '%s'\n", t->switches[i].name,
			t->switches[i].level ? "children" : "nodes", lists[i]);
	if (units) {
		/* every leaf's hosts a block, the units' and the single-rail
		 * leaves' alike: a host in no block could not be placed there */
		fprintf(f, "- topology: %s\n  cluster_default: false\n  block:\n    blocks:\n",
			SLURM_YAML_BLOCKS);
		for (size_t i = 0; i < t->n_switches && t->switches[i].level == 0; i++)
			fprintf(f, "      - block: '%s'\n        nodes: '%s'\n", t->switches[i].name,
				lists[i]);
	}
	if (ferror(f) | fclose(f)) {
		free(out);
		out = NULL;
	}
done:
	lists_free(lists, t->n_switches);
	return out;
}
