/* Probes around the ports whose link came up, through the MAD engine (its
 * window paces them; nothing waits): NodeInfo by directed route behind the
 * port tells which node is there, the same one as before, another, or
 * none. A node not seen before is read as a discovery reads it
 * (NodeDescription; PortInfo of the CA port it was reached by, of a
 * switch's port 0 and of its every port), and behind each of a new
 * switch's ports that is up, the same again, as far as the fabric is new.
 * What they find patches the topology (topology_patch.c). A node that
 * answers as something the topology cannot hold (another type or number of
 * ports for a GUID it has, a port beyond its ports) ends the round with the
 * reason: the area then discovers the whole subnet. */
#include "ibsnmpd/netsnmp.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/mad_engine.h"
#include "ibsnmpd/sma_attr.h"
#include "topology_internal.h"

enum probe_kind { PROBE_NODEINFO, PROBE_NODEDESC, PROBE_PORTINFO };

struct probe {
	struct topo_round *r;
	enum probe_kind kind;
	ib_portid_t path;       /* to the node probed */
	uint64_t from_guid;     /* NodeInfo: the port it is sent out of */
	unsigned from_port;
	uint8_t from_speed;
	uint64_t guid;          /* NodeDescription, PortInfo: the node */
	unsigned port;          /* PortInfo: which (0: a switch's port 0) */
	uint64_t port_guid;     /* a CA port's, from its NodeInfo */
	bool is_switch;
};

static void round_step_done(struct topo_round *r)
{
	if (--r->pending)
		return;
	if (r->abandoned)
		topo_round_free(r);
	else
		r->done(r, r->arg);
}

__attribute__((format(printf, 2, 3)))
static void give_up(struct topo_round *r, const char *fmt, ...)
{
	va_list ap;

	if (r->why[0])
		return; /* the first reason is the one said */
	va_start(ap, fmt);
	vsnprintf(r->why, sizeof(r->why), fmt, ap);
	va_end(ap);
}

static void got_answer(void *ctx, int result, const uint8_t *data, size_t len);

static void send_probe(struct topo_round *r, const struct probe *tmpl, unsigned attr,
		       unsigned mod)
{
	struct probe *pr;

	if (r->why[0] || r->abandoned)
		return;
	if (r->smps >= r->budget) {
		snprintf(r->why, sizeof(r->why), "the probes would cost more than a discovery "
			 "(%zu SMPs)", r->budget);
		return;
	}
	if (!(pr = malloc(sizeof(*pr))))
		return;
	*pr = *tmpl;
	pr->r = r;
	r->pending++;
	r->smps++;
	if (mad_engine_smp_get(&pr->path, attr, mod, got_answer, pr)) {
		free(pr);
		r->pending--;
	}
}

/* NodeInfo behind port `port` of node `guid` (a switch, or the local node),
 * if that port is not linked already. */
static void probe_behind(struct topo_round *r, uint64_t guid, unsigned port, uint8_t speed)
{
	const struct topo_node *nd = topology_node(r->routes, guid);
	struct probe pr = {.kind = PROBE_NODEINFO, .from_guid = guid, .from_port = port,
			   .from_speed = speed};

	if (!nd) /* a node this round found: the route it was found by */
		nd = topology_patch_node(r->patch, guid);
	if (!nd || !nd->has_route || nd->route_hops >= TOPO_MAX_HOPS ||
	    topology_patch_linked(r->patch, guid, port))
		return;
	mad_portid_local(&pr.path);
	pr.path.drpath.cnt = (int)nd->route_hops + 1;
	for (unsigned h = 0; h < nd->route_hops; h++)
		pr.path.drpath.p[h + 1] = nd->route[h];
	pr.path.drpath.p[nd->route_hops + 1] = (uint8_t)port;
	r->probed++;
	send_probe(r, &pr, IB_ATTR_NODE_INFO, 0);
}

static void note_silent(struct topo_round *r, uint64_t guid, unsigned port)
{
	if (r->n_silent == r->cap_silent) {
		size_t cap = r->cap_silent ? r->cap_silent * 2 : 16;
		void *q = realloc(r->silent, cap * sizeof(*r->silent));

		if (!q)
			return;
		r->silent = q;
		r->cap_silent = cap;
	}
	r->silent[r->n_silent++] = (struct topo_port_ref){guid, port};
}

/* A new node's route: the one the probe took. */
static void set_route(struct topo_round *r, uint64_t guid, const ib_portid_t *path)
{
	struct topo_node *nd = topology_patch_node(r->patch, guid);

	if (!nd)
		return;
	nd->has_route = true;
	nd->route_hops = (unsigned)path->drpath.cnt;
	for (int h = 0; h < path->drpath.cnt; h++)
		nd->route[h] = path->drpath.p[h + 1];
}

static void got_nodeinfo(struct topo_round *r, struct probe *pr, const uint8_t *data, size_t len)
{
	struct sma_nodeinfo ni;
	struct topo_node *known;
	struct probe next = *pr;

	/* reached through a link: its LocalPortNum is that link's port */
	if (sma_nodeinfo_decode(data, len, &ni) || ni.node_type < 1 || ni.node_type > 3 ||
	    !ni.num_ports || ni.num_ports > 254 || !ni.node_guid || !ni.local_port ||
	    ni.local_port > ni.num_ports) {
		give_up(r, "the node behind %016" PRIx64 " port %u answered a NodeInfo that does "
			"not hold together", pr->from_guid, pr->from_port);
		return;
	}
	r->found++;
	known = topology_patch_node(r->patch, ni.node_guid);
	if (known && (known->type != ni.node_type || known->num_ports != ni.num_ports)) {
		give_up(r, "node %016" PRIx64 " answers as another kind of node than the one "
			"discovered", ni.node_guid);
		return;
	}
	if (!known) {
		struct topo_node nd = {.guid = ni.node_guid, .type = ni.node_type,
				       .num_ports = ni.num_ports, .has_ident = true,
				       .vendor_id = ni.vendor_id, .device_id = ni.device_id,
				       .revision = ni.revision};

		if (topology_patch_add(r->patch, &nd)) {
			give_up(r, "node %016" PRIx64 ": out of memory", ni.node_guid);
			return;
		}
		set_route(r, ni.node_guid, &pr->path);
		r->added++;
	}
	if (topology_patch_link(r->patch, pr->from_guid, pr->from_port, ni.node_guid,
				ni.local_port) ||
	    topology_patch_port(r->patch, pr->from_guid, pr->from_port, 0, 0, pr->from_speed)) {
		give_up(r, "the link from %016" PRIx64 " port %u cannot be placed", pr->from_guid,
			pr->from_port);
		return;
	}
	next.guid = ni.node_guid;
	next.port_guid = ni.port_guid;
	next.is_switch = ni.node_type == 2;
	if (!known)
		send_probe(r, &(struct probe){.kind = PROBE_NODEDESC, .path = pr->path,
					      .guid = ni.node_guid}, IB_ATTR_NODE_DESC, 0);
	next.kind = PROBE_PORTINFO;
	if (!next.is_switch) {
		/* its LID: the SM may have given another */
		next.port = ni.local_port;
		send_probe(r, &next, IB_ATTR_PORT_INFO, ni.local_port);
		return;
	}
	/* the other end's speed is the link's; a switch's port GUID is its node's */
	topology_patch_port(r->patch, ni.node_guid, ni.local_port, 0, ni.port_guid,
			    pr->from_speed);
	if (known)
		return;
	/* its LID (port 0) and its other ports: the one it was reached by
	 * is the link just made */
	for (unsigned p = 0; p <= ni.num_ports; p++) {
		if (p == ni.local_port)
			continue;
		next.port = p;
		send_probe(r, &next, IB_ATTR_PORT_INFO, p);
	}
}

static void got_portinfo(struct topo_round *r, struct probe *pr, const uint8_t *data, size_t len)
{
	struct sma_portinfo pi;
	struct topo_node *nd = topology_patch_node(r->patch, pr->guid);
	bool up;
	uint8_t speed;

	if (!nd || sma_portinfo_decode(data, len, &pi))
		return;
	up = pi.phys_state == SMA_PHYS_LINK_UP;
	speed = up ? (uint8_t)sma_portinfo_active_speed(&pi) : 0;
	if (pr->is_switch && pr->port == 0) {
		nd->lid = pi.lid;
		return;
	}
	if (!pr->is_switch) {
		topology_patch_port(r->patch, pr->guid, pr->port, pi.lid, pr->port_guid, speed);
		return;
	}
	topology_patch_port(r->patch, pr->guid, pr->port, 0, pr->port_guid, speed);
	if (up)
		probe_behind(r, pr->guid, pr->port, speed);
}

static void got_answer(void *ctx, int result, const uint8_t *data, size_t len)
{
	struct probe *pr = ctx;
	struct topo_round *r = pr->r;

	if (!r->abandoned && !r->why[0]) {
		if (result != MAD_OK || !data) {
			if (pr->kind == PROBE_NODEINFO)
				note_silent(r, pr->from_guid, pr->from_port);
		} else if (pr->kind == PROBE_NODEINFO) {
			got_nodeinfo(r, pr, data, len);
		} else if (pr->kind == PROBE_NODEDESC) {
			struct topo_node *nd = topology_patch_node(r->patch, pr->guid);

			if (nd)
				sma_nodedesc_decode(data, len, nd->desc, sizeof(nd->desc));
		} else {
			got_portinfo(r, pr, data, len);
		}
	}
	free(pr);
	round_step_done(r);
}

struct topo_round *topo_round_start(const struct topology *f, const struct topology *routes,
				    const struct topo_change *c, size_t n, size_t budget,
				    void (*done)(struct topo_round *r, void *arg), void *arg)
{
	struct topo_round *r = calloc(1, sizeof(*r));

	if (!r || !(r->patch = topology_patch_begin(f))) {
		free(r);
		return NULL;
	}
	r->routes = topology_get(routes);
	r->budget = budget;
	r->done = done;
	r->arg = arg;
	r->began = monotonic_seconds();
	for (size_t k = 0; k < n; k++)
		if (c[k].kind == TOPO_LINK_GONE)
			topology_patch_unlink(r->patch, c[k].guid, c[k].port);
		else if (c[k].kind == TOPO_PORT_LID)
			topology_patch_port(r->patch, c[k].guid, c[k].port, c[k].lid, 0, c[k].speed);
	r->pending = 1; /* held while the first probes go out */
	for (size_t k = 0; k < n; k++)
		if (c[k].kind == TOPO_LINK_NEW)
			probe_behind(r, c[k].guid, c[k].port, c[k].speed);
	return r;
}

void topo_round_abandon(struct topo_round *r)
{
	r->abandoned = true;
}

void topo_round_free(struct topo_round *r)
{
	if (!r)
		return;
	topology_patch_free(r->patch);
	topology_put(r->routes);
	free(r->silent);
	free(r);
}

void topo_round_release(struct topo_round *r)
{
	round_step_done(r);
}
