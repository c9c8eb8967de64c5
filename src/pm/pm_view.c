/* IB-PM-MIB's per-node view (struct pm_view): what pmClassPortInfoTable,
 * pmPortCountersTable and the sampling tables show, built whole from its
 * sources whenever one of them changes: the newest discovery (the rows), the
 * last sweep (ClassPortInfo, each port's PortCounters), the last read of the
 * sampling state of the watched nodes, and the PortSelect a manager chose per
 * node. The handlers read the view only. */
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/pm.h"

static void view_free(void *p)
{
	struct pm_view *v = p;

	if (!v)
		return;
	free(v->nodes);
	topology_put(v->fabric);
	free(v);
}

/* A node's index in the per-node tables: its GUID (the fabric's nodes, and
 * so the view's, are sorted by it). */
static unsigned node_index(const void *data, oid *index)
{
	mib_index_put_guid(index, ((const struct pm_node_view *)data)->node->guid);
	return MIB_GUID_INDEX_LEN;
}

/* PortCounters' counters in CounterSelect bit order */
static void counters_of(const struct pm_counters *c, uint64_t out[PM_SELECT_COUNTERS])
{
	const uint32_t v[PM_SELECT_COUNTERS] = {
		c->symbol_errors, c->link_error_recovery, c->link_downed, c->rcv_errors,
		c->rcv_remote_phys_errors, c->rcv_switch_relay_errors, c->xmit_discards,
		c->xmit_constraint_errors, c->rcv_constraint_errors,
		c->local_link_integrity_errors, c->excessive_buffer_overruns, c->vl15_dropped,
		c->xmit_data, c->rcv_data, c->xmit_pkts, c->rcv_pkts,
	};

	for (int i = 0; i < PM_SELECT_COUNTERS; i++)
		out[i] += v[i];
}

/* One node: its ports are ports[0..n) of the sweep (sorted with the node). */
static void build_node(const struct pm_area *pm, struct pm_node_view *nv, unsigned capmask,
		       const struct pm_port_state *ports, size_t n,
		       const struct pm_samples_snapshot *samples)
{
	const struct pm_sample_state *st = pm_samples_find(samples, nv->node->guid);

	nv->capmask = capmask & 0xffffu;
	nv->capmask_known = capmask & PM_CAPMASK_KNOWN;
	nv->port_select = pm_port_select_get(pm, nv->node->guid, n ? ports[0].port : 1);
	for (size_t i = 0; i < n; i++) {
		if (ports[i].port < 256)
			nv->ports[ports[i].port / 8] |= (uint8_t)(1u << (ports[i].port % 8));
		/* PortSelect 0xFF: all ports, as the node would add them up */
		if ((nv->port_select == 0xff || ports[i].port == nv->port_select) &&
		    ports[i].have_raw) {
			counters_of(&ports[i].raw, nv->counter);
			nv->have_counters = true;
		}
	}
	nv->sample = st;
}

/* The sweep's ClassPortInfo capability mask of a node (0: not known); the
 * sweep may have run over an older node list than the view's. */
static unsigned capmask_of(const struct pm_snapshot *s, uint64_t guid)
{
	const struct topo_node *n = s->node_capmask ? topology_node(s->fabric, guid) : NULL;

	return n ? s->node_capmask[n - s->fabric->nodes] : 0;
}

/* The rows are the nodes of the newest discovery (they are served as soon as
 * it is in, before their first sweep); what the last sweep read is added to
 * them (NULL: nothing swept yet). */
static struct pm_view *build(const struct pm_area *pm, const struct topology *f,
			     const struct pm_snapshot *s)
{
	const struct pm_samples_snapshot *samples = cache_snapshot(&pm->samples);
	struct pm_view *v = calloc(1, sizeof(*v));
	size_t pi = 0, n_ports = s ? s->n : 0;

	if (!v || !(v->nodes = calloc(f->n_nodes ? f->n_nodes : 1, sizeof(*v->nodes)))) {
		view_free(v);
		return NULL;
	}
	v->fabric = topology_get(f);
	/* fabric nodes and the sweep's ports are both sorted by GUID */
	for (size_t k = 0; k < f->n_nodes; k++) {
		struct pm_node_view *nv = &v->nodes[v->n++];
		size_t first;

		nv->node = &f->nodes[k];
		while (pi < n_ports && s->ports[pi].guid < nv->node->guid)
			pi++;
		first = pi;
		while (pi < n_ports && s->ports[pi].guid == nv->node->guid)
			pi++;
		build_node(pm, nv, s ? capmask_of(s, nv->node->guid) : 0,
			   s ? &s->ports[first] : NULL, pi - first, samples);
	}
	v->rows = (struct mib_rows){.count = v->n, .array = v->nodes, .stride = sizeof(*v->nodes),
				    .index_of = node_index};
	return v;
}

/* Before the first discovery: an empty view (the tables have no rows yet). */
static void refresh(struct cache_group *g)
{
	struct pm_area *pm = g->owner;
	const struct pm_snapshot *s = cache_snapshot(&pm->sweep);
	const struct topology *f = pm_topology(pm);
	struct pm_view *v = f ? build(pm, f, s) : calloc(1, sizeof(*v));

	cache_refresh_done(g, v, v ? NULL : "out of memory");
}

void pm_view_refresh(struct pm_area *pm)
{
	cache_group_refresh_now(&pm->view);
}

void pm_view_init(struct pm_area *pm)
{
	pm->view.name = "PM node view";
	pm->view.refresh = refresh;
	pm->view.free_snapshot = view_free;
	pm->view.owner = pm;
	/* no lifetime of its own: rebuilt when a source changes (the discovery
	 * too: pm_area.c) */
	cache_group_follow(&pm->view, &pm->sweep, &pm->view_follows[0]);
	cache_group_follow(&pm->view, &pm->samples, &pm->view_follows[1]);
}
