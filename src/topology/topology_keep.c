/* A discovery that did not find a node is no node gone (topology.h,
 * topology_keep_unanswered). Pure.
 *
 * libibnetdisc leaves out a node whose NodeInfo went unanswered (a switch
 * whose management processor is busy or lossy, a simulator stopped a
 * moment): the port in front of it says LinkUp and names no node. Taken as
 * it comes, the discovery would take the node and everything behind it out
 * of the subnet, and the link sweep would tell their links down. Only an
 * answer says a node is gone: the port in front of it down (its speed 0),
 * or another node there. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/topology.h"

static int node_cmp(const void *x, const void *y)
{
	uint64_t a = ((const struct topo_node *)x)->guid, b = ((const struct topo_node *)y)->guid;

	return a < b ? -1 : a > b;
}

/* the place of guid among f's nodes, -1 none (topology_node's search) */
static long node_at(const struct topology *f, uint64_t guid)
{
	const struct topo_node *nd = topology_node(f, guid);

	return nd ? (long)(nd - f->nodes) : -1;
}

struct keep {
	const struct topology *prev, *f;
	bool *kept;       /* by prev's node index */
	size_t *todo, n_todo, n_kept;
};

/* prev's node i, missing from f, kept (what it links to that f misses too
 * comes with it: behind an unanswered node nothing was asked) */
static void keep(struct keep *k, size_t i)
{
	if (k->kept[i])
		return;
	k->kept[i] = true;
	k->n_kept++;
	k->todo[k->n_todo++] = i;
}

/* prev's ports of node i: [*first, *end) (ports sorted by node GUID, port) */
static void ports_of(const struct topology *t, size_t i, size_t *first, size_t *end)
{
	size_t lo = 0, hi = t->n_ports;
	uint64_t guid = t->nodes[i].guid;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->nodes[t->ports[mid].node].guid < guid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*first = lo;
	while (lo < t->n_ports && t->ports[lo].node == i)
		lo++;
	*end = lo;
}

/* ports by (their node's GUID, port): the nodes are t's (qsort_r) */
static int port_order(const void *x, const void *y, void *t)
{
	const struct topo_port *a = x, *b = y;
	uint64_t g = ((const struct topology *)t)->nodes[a->node].guid,
		 h = ((const struct topology *)t)->nodes[b->node].guid;

	return g != h ? (g < h ? -1 : 1) : a->port < b->port ? -1 : a->port > b->port;
}

struct topology *topology_keep_unanswered(const struct topology *prev, struct topology *f,
					  size_t *kept_out)
{
	struct keep k = {.prev = prev, .f = f};
	struct topology *m = NULL;
	size_t n_nodes, n_ports;

	*kept_out = 0;
	if (!prev || !f || f->from_sa || prev->from_sa || !prev->n_nodes)
		return f;
	k.kept = calloc(prev->n_nodes, sizeof(*k.kept));
	k.todo = calloc(prev->n_nodes, sizeof(*k.todo));
	if (!k.kept || !k.todo)
		goto out;
	/* the seeds: a port of f that is up and names no node, where prev had
	 * a node f did not find */
	for (size_t i = 0; i < f->n_ports; i++) {
		const struct topo_port *p = &f->ports[i];
		long pn = node_at(prev, f->nodes[p->node].guid), peer;
		const struct topo_port *was;

		if (p->peer_guid || !p->speed || pn < 0)
			continue;
		if (!(was = topology_port(prev, (size_t)pn, p->port)) || !was->peer_guid)
			continue;
		if (node_at(f, was->peer_guid) >= 0 || (peer = node_at(prev, was->peer_guid)) < 0)
			continue;
		keep(&k, (size_t)peer);
	}
	/* behind them: what prev links them to that f does not have */
	while (k.n_todo) {
		size_t i = k.todo[--k.n_todo], first, end;

		ports_of(prev, i, &first, &end);
		for (size_t j = first; j < end; j++) {
			long peer = prev->ports[j].peer_guid ? node_at(prev, prev->ports[j].peer_guid) : -1;

			if (peer >= 0 && node_at(f, prev->ports[j].peer_guid) < 0)
				keep(&k, (size_t)peer);
		}
	}
	if (!k.n_kept)
		goto out;
	/* the merge: f's nodes and ports, the kept ones', the seeds' links */
	n_nodes = f->n_nodes + k.n_kept;
	n_ports = f->n_ports;
	for (size_t i = 0; i < prev->n_nodes; i++)
		if (k.kept[i]) {
			size_t first, end;

			ports_of(prev, i, &first, &end);
			n_ports += end - first;
		}
	if (!(m = calloc(1, sizeof(*m))) ||
	    !(m->nodes = calloc(n_nodes, sizeof(*m->nodes))) ||
	    !(m->ports = calloc(n_ports ? n_ports : 1, sizeof(*m->ports)))) {
		topology_free(m);
		m = NULL;
		goto out;
	}
	*m = (struct topology){.nodes = m->nodes, .ports = m->ports, .seconds = f->seconds,
			       .refs = 0};
	memcpy(m->nodes, f->nodes, f->n_nodes * sizeof(*m->nodes));
	m->n_nodes = f->n_nodes;
	for (size_t i = 0; i < prev->n_nodes; i++)
		if (k.kept[i])
			m->nodes[m->n_nodes++] = prev->nodes[i];
	qsort(m->nodes, m->n_nodes, sizeof(*m->nodes), node_cmp);
	for (size_t i = 0; i < m->n_nodes; i++)
		m->nodes[i].name = NULL; /* named anew by the caller */
	for (size_t i = 0; i < f->n_ports; i++) {
		struct topo_port p = f->ports[i];
		long pn = node_at(prev, f->nodes[p.node].guid);
		const struct topo_port *was = !p.peer_guid && p.speed && pn >= 0 ?
			topology_port(prev, (size_t)pn, p.port) : NULL;

		if (was && was->peer_guid && node_at(f, was->peer_guid) < 0 &&
		    node_at(m, was->peer_guid) >= 0) {
			p.peer_guid = was->peer_guid; /* the seed's link, as it was */
			p.peer_port = was->peer_port;
		}
		p.node = (size_t)node_at(m, f->nodes[p.node].guid);
		m->ports[m->n_ports++] = p;
	}
	for (size_t i = 0; i < prev->n_nodes; i++) {
		size_t first, end;

		if (!k.kept[i])
			continue;
		ports_of(prev, i, &first, &end);
		for (size_t j = first; j < end; j++) {
			struct topo_port p = prev->ports[j];

			p.node = (size_t)node_at(m, prev->nodes[i].guid);
			m->ports[m->n_ports++] = p;
		}
	}
	qsort_r(m->ports, m->n_ports, sizeof(*m->ports), port_order, m);
	*kept_out = k.n_kept;
out:
	free(k.kept);
	free(k.todo);
	if (!m)
		return f;
	topology_free(f);
	return m;
}
