/* Following the fabric's changes without a discovery: where the link
 * sweep's last reading disagrees with the topology (topology_changes), and
 * a copy of the topology that the probes' findings are made to
 * (topology_patch_*), pruned and routed as libibnetdisc would find the
 * fabric: the nodes the local node reaches through switches, each by a
 * shortest directed route. Written by hand: libibnetdisc discovers whole
 * fabrics only. Pure; unit-tested (test_topology_patch). */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/topology.h"

static bool is_local(const struct topo_node *nd)
{
	return nd->has_route && nd->route_hops == 0;
}

size_t topology_changes(const struct topology *f, const struct topo_link_seen *seen, size_t n,
			struct topo_change *out)
{
	size_t k = 0;

	for (size_t i = 0; f && i < n; i++) {
		const struct topo_link_seen *s = &seen[i];
		const struct topo_node *nd = topology_node(f, s->guid);
		const struct topo_port *tp;
		bool linked;

		if (!nd || is_local(nd) || !s->port || s->port > nd->num_ports)
			continue;
		tp = topology_port(f, (size_t)(nd - f->nodes), s->port);
		linked = tp && tp->peer_guid;
		if (linked && !s->up)
			out[k++] = (struct topo_change){TOPO_LINK_GONE, s->guid, s->port, 0, 0};
		else if (!linked && s->up && nd->type == 2)
			out[k++] = (struct topo_change){TOPO_LINK_NEW, s->guid, s->port, s->lid, s->speed};
		else if (s->up && nd->type != 2 && s->lid && (!tp || tp->lid != s->lid))
			out[k++] = (struct topo_change){TOPO_PORT_LID, s->guid, s->port, s->lid, s->speed};
	}
	return k;
}

size_t topology_discovery_cost(const struct topology *f)
{
	size_t smps = 0;

	for (size_t k = 0; k < f->n_nodes; k++)
		smps += 2 + (f->nodes[k].type == 2 ? f->nodes[k].num_ports + 1 : 1);
	for (size_t k = 0; k < f->n_ports; k++)
		smps += f->ports[k].peer_guid && f->nodes[f->ports[k].node].type == 2;
	return smps;
}

int topo_port_ref_cmp(const void *x, const void *y)
{
	const struct topo_port_ref *a = x, *b = y;

	if (a->guid != b->guid)
		return a->guid < b->guid ? -1 : 1;
	return a->port < b->port ? -1 : a->port > b->port;
}

/* ---- the patch ------------------------------------------------------------- */

/* The original's nodes and ports come first, in its order (found by binary
 * search); what is added follows (found by a scan: a change adds a few).
 * A port taken out is marked, not moved. */
struct topo_patch {
	const struct topology *base;
	uint64_t local;
	struct topo_node *nodes;
	size_t n_nodes, cap_nodes, n_base_nodes;
	struct topo_port *ports;
	bool *dropped;
	size_t n_ports, cap_ports, n_base_ports;
};

static long find_node(const struct topo_patch *p, uint64_t guid)
{
	for (size_t lo = 0, hi = p->n_base_nodes; lo < hi;) {
		size_t mid = (lo + hi) / 2;

		if (p->nodes[mid].guid == guid)
			return (long)mid;
		if (p->nodes[mid].guid < guid)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t k = p->n_base_nodes; k < p->n_nodes; k++)
		if (p->nodes[k].guid == guid)
			return (long)k;
	return -1;
}

/* The entry of (node, port), dropped or not; NULL if none. The original's
 * entries are where they are in it. */
static struct topo_port *find_entry(struct topo_patch *p, size_t node, unsigned port)
{
	const struct topo_port *in_base = node < p->n_base_nodes ?
		topology_port(p->base, node, port) : NULL;

	if (in_base)
		return &p->ports[in_base - p->base->ports];
	for (size_t k = p->n_base_ports; k < p->n_ports; k++)
		if (p->ports[k].node == node && p->ports[k].port == port)
			return &p->ports[k];
	return NULL;
}

static struct topo_port *find_port(struct topo_patch *p, size_t node, unsigned port)
{
	struct topo_port *tp = find_entry(p, node, port);

	return tp && !p->dropped[tp - p->ports] ? tp : NULL;
}

static void *grow(void *v, size_t *cap, size_t n, size_t size)
{
	void *q;

	if (n < *cap)
		return v;
	q = realloc(v, (*cap ? *cap * 2 : 16) * size);
	if (q)
		*cap = *cap ? *cap * 2 : 16;
	return q;
}

/* The entry of (node, port), made (unlinked, no LID) if need be. */
static struct topo_port *make_port(struct topo_patch *p, size_t node, unsigned port)
{
	struct topo_port *tp = find_entry(p, node, port);
	size_t cap = p->cap_ports;
	void *q;

	if (!tp) {
		if (!(q = grow(p->ports, &cap, p->n_ports, sizeof(*p->ports))))
			return NULL;
		p->ports = q;
		if (cap != p->cap_ports) {
			bool *d = realloc(p->dropped, cap * sizeof(*d));

			if (!d)
				return NULL; /* the ports' room grew; the next try uses it */
			p->dropped = d;
			p->cap_ports = cap;
		}
		tp = &p->ports[p->n_ports++];
		*tp = (struct topo_port){.node = node, .port = port};
	}
	/* one taken out and back (a CA's cable moved) keeps its LID and GUID */
	p->dropped[tp - p->ports] = false;
	return tp;
}

struct topo_patch *topology_patch_begin(const struct topology *f)
{
	struct topo_patch *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->base = topology_get(f);
	p->n_nodes = p->n_base_nodes = p->cap_nodes = f->n_nodes;
	p->n_ports = p->n_base_ports = p->cap_ports = f->n_ports;
	p->nodes = malloc((f->n_nodes ? f->n_nodes : 1) * sizeof(*p->nodes));
	p->ports = malloc((f->n_ports ? f->n_ports : 1) * sizeof(*p->ports));
	p->dropped = calloc(f->n_ports ? f->n_ports : 1, sizeof(*p->dropped));
	if (!p->nodes || !p->ports || !p->dropped) {
		topology_patch_free(p);
		return NULL;
	}
	if (!f->n_nodes)
		p->cap_nodes = 1;
	if (!f->n_ports)
		p->cap_ports = 1;
	memcpy(p->nodes, f->nodes, f->n_nodes * sizeof(*p->nodes));
	memcpy(p->ports, f->ports, f->n_ports * sizeof(*p->ports));
	for (size_t k = 0; k < f->n_nodes; k++)
		if (is_local(&f->nodes[k]))
			p->local = f->nodes[k].guid;
	return p;
}

void topology_patch_free(struct topo_patch *p)
{
	if (!p)
		return;
	topology_put(p->base);
	free(p->nodes);
	free(p->ports);
	free(p->dropped);
	free(p);
}

struct topo_node *topology_patch_node(struct topo_patch *p, uint64_t guid)
{
	long k = find_node(p, guid);

	return k < 0 ? NULL : &p->nodes[k];
}

int topology_patch_add(struct topo_patch *p, const struct topo_node *nd)
{
	void *q;

	if (!nd->guid || find_node(p, nd->guid) >= 0 || !nd->num_ports || nd->num_ports > 254)
		return -1;
	if (!(q = grow(p->nodes, &p->cap_nodes, p->n_nodes, sizeof(*p->nodes))))
		return -1;
	p->nodes = q;
	p->nodes[p->n_nodes] = *nd;
	p->nodes[p->n_nodes].name = NULL;
	p->nodes[p->n_nodes].has_route = false;
	p->n_nodes++;
	/* a switch's every port is in a discovery, linked or not */
	for (unsigned port = 1; nd->type == 2 && port <= nd->num_ports; port++)
		if (!make_port(p, p->n_nodes - 1, port))
			return -1;
	return 0;
}

int topology_patch_port(struct topo_patch *p, uint64_t guid, unsigned port, unsigned lid,
			uint64_t port_guid, uint8_t speed)
{
	long k = find_node(p, guid);
	struct topo_port *tp;

	if (k < 0 || !port || port > p->nodes[k].num_ports || !(tp = make_port(p, (size_t)k, port)))
		return -1;
	tp->lid = lid;
	if (port_guid)
		tp->port_guid = port_guid;
	tp->speed = speed;
	return 0;
}

bool topology_patch_linked(struct topo_patch *p, uint64_t guid, unsigned port)
{
	long k = find_node(p, guid);
	const struct topo_port *tp = k < 0 ? NULL : find_port(p, (size_t)k, port);

	return tp && tp->peer_guid;
}

/* One end unlinked: a CA's port without a link goes (but the local
 * node's: the discovery starts there). */
static void clear_end(struct topo_patch *p, struct topo_port *tp)
{
	const struct topo_node *nd = &p->nodes[tp->node];

	tp->peer_guid = 0;
	tp->peer_port = 0;
	tp->speed = 0;
	if (nd->type != 2 && nd->guid != p->local)
		p->dropped[tp - p->ports] = true;
}

void topology_patch_unlink(struct topo_patch *p, uint64_t guid, unsigned port)
{
	long k = find_node(p, guid), j;
	struct topo_port *tp = k < 0 ? NULL : find_port(p, (size_t)k, port), *other;

	if (!tp || !tp->peer_guid)
		return;
	j = find_node(p, tp->peer_guid);
	other = j < 0 ? NULL : find_port(p, (size_t)j, tp->peer_port);
	if (other && other->peer_guid == guid && other->peer_port == port)
		clear_end(p, other);
	clear_end(p, tp);
}

int topology_patch_link(struct topo_patch *p, uint64_t a, unsigned pa, uint64_t b, unsigned pb)
{
	long ka = find_node(p, a), kb = find_node(p, b);
	struct topo_port *ta, *tb;

	if (ka < 0 || kb < 0 || !pa || !pb || pa > p->nodes[ka].num_ports ||
	    pb > p->nodes[kb].num_ports || (a == b && pa == pb))
		return -1;
	topology_patch_unlink(p, a, pa);
	topology_patch_unlink(p, b, pb);
	if (!make_port(p, (size_t)ka, pa) || !(tb = make_port(p, (size_t)kb, pb)))
		return -1;
	ta = find_port(p, (size_t)ka, pa); /* the second make may have moved the ports */
	ta->peer_guid = b;
	ta->peer_port = pb;
	tb->peer_guid = a;
	tb->peer_port = pa;
	return 0;
}

/* ---- finishing ----------------------------------------------------------------- */

static const struct topo_node *sort_nodes;

static int index_by_guid(const void *x, const void *y)
{
	uint64_t a = sort_nodes[*(const size_t *)x].guid, b = sort_nodes[*(const size_t *)y].guid;

	return a < b ? -1 : a > b;
}

static const struct topo_port *sort_ports;

static int port_index_cmp(const void *x, const void *y)
{
	const struct topo_port *a = &sort_ports[*(const size_t *)x];
	const struct topo_port *b = &sort_ports[*(const size_t *)y];
	uint64_t ga = sort_nodes[a->node].guid, gb = sort_nodes[b->node].guid;

	if (ga != gb)
		return ga < gb ? -1 : 1;
	return a->port < b->port ? -1 : a->port > b->port;
}

/* The order of items [0, n): the original's part [0, n_base) is in order
 * already, what was added is sorted and merged in (a change adds a few
 * nodes and ports to some 250,000). NULL out of memory. */
static size_t *merged_order(size_t n_base, size_t n, int (*cmp)(const void *, const void *))
{
	size_t n_added = n - n_base, i = 0, j = 0, k = 0;
	size_t *added = malloc((n_added + 1) * sizeof(*added));
	size_t *order = malloc((n ? n : 1) * sizeof(*order));

	if (!added || !order) {
		free(added);
		free(order);
		return NULL;
	}
	for (size_t x = 0; x < n_added; x++)
		added[x] = n_base + x;
	qsort(added, n_added, sizeof(*added), cmp);
	while (i < n_base || j < n_added)
		order[k++] = j == n_added || (i < n_base && cmp(&i, &added[j]) <= 0) ? i++ : added[j++];
	free(added);
	return order;
}

/* The nodes and live ports, sorted as a discovery's; NULL out of memory. */
static struct topology *sorted_copy(const struct topo_patch *p)
{
	struct topology *t = calloc(1, sizeof(*t));
	size_t *order = NULL, *where = malloc((p->n_nodes ? p->n_nodes : 1) * sizeof(*where));
	size_t n = 0;

	sort_nodes = p->nodes;
	sort_ports = p->ports;
	if (!t || !where || !(order = merged_order(p->n_base_nodes, p->n_nodes, index_by_guid)) ||
	    !(t->nodes = malloc((p->n_nodes ? p->n_nodes : 1) * sizeof(*t->nodes))) ||
	    !(t->ports = malloc((p->n_ports ? p->n_ports : 1) * sizeof(*t->ports))))
		goto fail;
	for (size_t k = 0; k < p->n_nodes; k++) {
		t->nodes[k] = p->nodes[order[k]];
		where[order[k]] = k;
	}
	t->n_nodes = p->n_nodes;
	free(order);
	if (!(order = merged_order(p->n_base_ports, p->n_ports, port_index_cmp)))
		goto fail;
	for (size_t k = 0; k < p->n_ports; k++)
		if (!p->dropped[order[k]]) {
			t->ports[n] = p->ports[order[k]];
			t->ports[n++].node = where[p->ports[order[k]].node];
		}
	t->n_ports = n;
	free(order);
	free(where);
	return t;
fail:
	free(order);
	free(where);
	topology_free(t);
	return NULL;
}

/* Breadth first from the local node, through switches: reached[k] and
 * every reached node's route. first[k]: node k's first port (ports are
 * grouped by node, in the nodes' order). */
static void route_all(struct topology *t, const size_t *first, bool *reached, uint64_t local)
{
	const struct topo_node *root = topology_node(t, local);
	size_t *queue = malloc((t->n_nodes ? t->n_nodes : 1) * sizeof(*queue)), head = 0, tail = 0;

	if (!queue || !root) {
		free(queue);
		return; /* nothing reached: the caller keeps what it has */
	}
	queue[tail++] = (size_t)(root - t->nodes);
	reached[queue[0]] = true;
	t->nodes[queue[0]].has_route = true;
	t->nodes[queue[0]].route_hops = 0;
	while (head < tail) {
		size_t u = queue[head++];
		struct topo_node *nu = &t->nodes[u];

		if ((u != queue[0] && nu->type != 2) || nu->route_hops >= TOPO_MAX_HOPS)
			continue; /* a CA does not pass a directed route on */
		for (size_t k = first[u]; k < first[u + 1]; k++) {
			const struct topo_node *peer = t->ports[k].peer_guid ?
				topology_node(t, t->ports[k].peer_guid) : NULL;
			size_t v;

			if (!peer || reached[v = (size_t)(peer - t->nodes)])
				continue;
			reached[v] = true;
			t->nodes[v].has_route = true;
			t->nodes[v].route_hops = nu->route_hops + 1;
			memcpy(t->nodes[v].route, nu->route, nu->route_hops);
			t->nodes[v].route[nu->route_hops] = (uint8_t)t->ports[k].port;
			queue[tail++] = v;
		}
	}
	free(queue);
}

static size_t *port_groups(const struct topology *t)
{
	size_t *first = malloc((t->n_nodes + 1) * sizeof(*first)), k = 0;

	if (!first)
		return NULL;
	for (size_t i = 0; i < t->n_nodes; i++) {
		while (k < t->n_ports && t->ports[k].node < i)
			k++;
		first[i] = k;
	}
	first[t->n_nodes] = t->n_ports;
	return first;
}

/* Drops the nodes not reached and what links to them. */
static void prune(struct topology *t, const bool *reached, size_t *removed)
{
	size_t *where = malloc((t->n_nodes ? t->n_nodes : 1) * sizeof(*where)), n = 0, m = 0;

	if (!where)
		return;
	/* the ports first: the nodes' GUIDs are looked up where they are */
	for (size_t k = 0; k < t->n_ports; k++) {
		struct topo_port tp = t->ports[k];
		const struct topo_node *peer;

		if (!reached[tp.node])
			continue;
		peer = tp.peer_guid ? topology_node(t, tp.peer_guid) : NULL;
		if (tp.peer_guid && (!peer || !reached[peer - t->nodes])) {
			if (t->nodes[tp.node].type != 2 && !(t->nodes[tp.node].has_route &&
							    t->nodes[tp.node].route_hops == 0))
				continue; /* a CA's port without a link is not in a discovery */
			tp.peer_guid = tp.peer_port = tp.speed = 0;
		}
		t->ports[m++] = tp;
	}
	for (size_t k = 0; k < t->n_nodes; k++) {
		where[k] = n;
		if (reached[k])
			t->nodes[n++] = t->nodes[k];
	}
	for (size_t k = 0; k < m; k++)
		t->ports[k].node = where[t->ports[k].node];
	*removed = t->n_nodes - n;
	t->n_nodes = n;
	t->n_ports = m;
	free(where);
}

/* A switch's ports answer at its LID; a CA is where its first port with a
 * LID answers (as the discovery helper says). */
static void place_lids(struct topology *t, const size_t *first)
{
	for (size_t i = 0; i < t->n_nodes; i++) {
		struct topo_node *nd = &t->nodes[i];

		if (nd->type != 2)
			nd->lid = 0;
		for (size_t k = first[i]; k < first[i + 1]; k++) {
			if (nd->type == 2)
				t->ports[k].lid = nd->lid;
			else if (!nd->lid)
				nd->lid = t->ports[k].lid;
		}
	}
}

/* What differs from the original: ports added, changed or gone (of nodes
 * that stay), nodes added and gone. */
static int diff(struct topology *t, const struct topology *base)
{
	size_t cap = 16, n = 0;
	struct topo_port_ref *refs = malloc(cap * sizeof(*refs));

	if (!refs)
		return -1;
	for (int pass = 0; pass < 2; pass++) {
		const struct topology *x = pass ? base : t, *y = pass ? t : base;

		for (size_t k = 0; k < x->n_ports; k++) {
			const struct topo_port *a = &x->ports[k], *b;
			const struct topo_node *ny = topology_node(y, x->nodes[a->node].guid);

			if (pass && !ny)
				continue; /* a node gone: its rows go with it */
			b = ny ? topology_port(y, (size_t)(ny - y->nodes), a->port) : NULL;
			if (b && (pass || (a->peer_guid == b->peer_guid && a->peer_port == b->peer_port &&
					   a->lid == b->lid && a->speed == b->speed &&
					   a->port_guid == b->port_guid)))
				continue;
			if (n == cap) {
				void *q = realloc(refs, (cap *= 2) * sizeof(*refs));

				if (!q) {
					free(refs);
					return -1;
				}
				refs = q;
			}
			refs[n++] = (struct topo_port_ref){x->nodes[a->node].guid, a->port};
		}
	}
	qsort(refs, n, sizeof(*refs), topo_port_ref_cmp);
	t->changed = refs;
	t->n_changed = n;
	for (size_t k = 0; k < t->n_nodes; k++)
		t->nodes_added += !topology_node(base, t->nodes[k].guid);
	return 0;
}

struct topology *topology_patch_finish(struct topo_patch *p, const struct node_name_map *names,
				       char *err, size_t errlen)
{
	struct topology *t = sorted_copy(p);
	size_t *first = NULL;
	bool *reached = NULL;

	if (!t || !(first = port_groups(t)) ||
	    !(reached = calloc(t->n_nodes ? t->n_nodes : 1, sizeof(*reached))))
		goto oom;
	for (size_t k = 0; k < t->n_nodes; k++)
		t->nodes[k].has_route = false;
	route_all(t, first, reached, p->local);
	prune(t, reached, &t->nodes_removed);
	free(first);
	if (!(first = port_groups(t)))
		goto oom;
	place_lids(t, first);
	if (diff(t, p->base) || topology_name_nodes(t, names))
		goto oom;
	free(first);
	free(reached);
	return t;
oom:
	snprintf(err, errlen, "out of memory");
	free(first);
	free(reached);
	topology_free(t);
	return NULL;
}

int topology_changed_keep(const struct topology *f, struct topo_port_ref **refs, size_t *n,
			  size_t *cap)
{
	if (!f->n_changed)
		return 0;
	if (*n + f->n_changed > *cap) {
		size_t want = (*n + f->n_changed) * 2;
		struct topo_port_ref *p = realloc(*refs, want * sizeof(*p));

		if (!p)
			return -1;
		*refs = p;
		*cap = want;
	}
	memcpy(*refs + *n, f->changed, f->n_changed * sizeof(*f->changed));
	*n += f->n_changed;
	return 0;
}
