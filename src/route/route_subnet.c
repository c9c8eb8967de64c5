/* The subnet checks (route.h), pure: what the SM gave the ports, from the
 * topology and the link sweep's PortInfo of every port, by sorting (no walk,
 * no table):
 *   duplicates: a port GUID or a LID (with its LMC's range) that two ports
 *   have, a linked CA port or switch without a LID; node descriptions two
 *   nodes share are said, not counted (switches out of the box share one);
 *   links: an end whose link is up (LinkUp) but stays Init or Armed (the SM
 *   did not bring it to Active), an active link whose MTU (NeighborMTU) or
 *   operational VLs are below what both ends can (MTUCap, VLCap): what
 *   ibdiagnet's links check and `iblinkinfo -l` show by hand.
 * Written here: no library checks a subnet's configuration. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/route.h"

struct lid_owner {
	unsigned lo, hi;  /* the LIDs it answers (LMC) */
	size_t node;
	unsigned port;    /* 0: a switch (its port 0) */
};

struct guid_owner {
	uint64_t guid;
	size_t node;
	unsigned port;
};

struct subnet_out {
	struct route_findings *r;
	size_t cap;
	bool failed;
};

static struct route_offender *offender(struct subnet_out *o, unsigned check, unsigned kind)
{
	return route_offender_add(o->r, &o->cap, check, kind, &o->failed);
}

static const char *name_of(const struct topology *f, size_t node)
{
	const struct topo_node *nd = &f->nodes[node];

	return nd->name ? nd->name : nd->desc;
}

/* Words into out, cut at its end when names are long. */
__attribute__((format(printf, 3, 4))) static void words(char *out, size_t len, const char *fmt,
							...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, len, fmt, ap);
	va_end(ap);
}

/* "host-3 port 1", or "leaf-1-1" for a switch's port 0 */
static void port_words(const struct topology *f, size_t node, unsigned port, char *out,
		       size_t len)
{
	if (port)
		words(out, len, "%s port %u", name_of(f, node), port);
	else
		words(out, len, "%s", name_of(f, node));
}

static int fact_cmp(const void *k, const void *e)
{
	const struct route_port_fact *x = k, *y = e;

	if (x->guid != y->guid)
		return (x->guid > y->guid) - (x->guid < y->guid);
	return (x->port > y->port) - (x->port < y->port);
}

static const struct route_port_fact *fact_of(const struct route_port_fact *p, size_t n,
					     uint64_t guid, unsigned port)
{
	struct route_port_fact key = {.guid = guid, .port = port};

	return p ? bsearch(&key, p, n, sizeof(*p), fact_cmp) : NULL;
}

/* Whether a node has a port the link sweep saw Active (a switch: any). */
static bool node_active(const struct topology *f, size_t node, const struct route_port_fact *p,
			size_t n)
{
	const struct topo_node *nd = &f->nodes[node];

	for (unsigned port = 1; port <= nd->num_ports; port++) {
		const struct route_port_fact *x = fact_of(p, n, nd->guid, port);

		if (x && x->state == 4)
			return true;
	}
	return false;
}

/* ---- duplicates ---- */

static int guid_owner_cmp(const void *a, const void *b)
{
	const struct guid_owner *x = a, *y = b;

	if (x->guid != y->guid)
		return (x->guid > y->guid) - (x->guid < y->guid);
	if (x->node != y->node)
		return (x->node > y->node) - (x->node < y->node);
	return (x->port > y->port) - (x->port < y->port);
}

static int lid_owner_cmp(const void *a, const void *b)
{
	const struct lid_owner *x = a, *y = b;

	if (x->lo != y->lo)
		return (x->lo > y->lo) - (x->lo < y->lo);
	if (x->node != y->node)
		return (x->node > y->node) - (x->node < y->node);
	return (x->port > y->port) - (x->port < y->port);
}

struct desc_owner {
	const char *desc;
	size_t node;
};

static int desc_cmp(const void *a, const void *b)
{
	const struct desc_owner *x = a, *y = b;
	int c = strcmp(x->desc, y->desc);

	return c ? c : (x->node > y->node) - (x->node < y->node);
}

static void port_guids(const struct topology *f, struct guid_owner *g, struct subnet_out *o)
{
	size_t n = 0;

	/* a switch's ports share its port GUID: once per switch */
	for (size_t i = 0; i < f->n_ports; i++) {
		const struct topo_port *tp = &f->ports[i];

		if (!tp->port_guid)
			continue;
		if (f->nodes[tp->node].type == 2 && n && g[n - 1].node == tp->node)
			continue;
		g[n++] = (struct guid_owner){tp->port_guid, tp->node,
					     f->nodes[tp->node].type == 2 ? 0 : tp->port};
	}
	qsort(g, n, sizeof(*g), guid_owner_cmp);
	for (size_t i = 1; i < n; i++) {
		struct route_offender *x;
		char a[100], b[100];

		if (g[i].guid != g[i - 1].guid)
			continue;
		if (!(x = offender(o, ROUTE_CHECK_DUPLICATES, ROUTE_DUP_PORT_GUID)))
			continue;
		port_words(f, g[i - 1].node, g[i - 1].port, a, sizeof(a));
		port_words(f, g[i].node, g[i].port, b, sizeof(b));
		x->guid = f->nodes[g[i].node].guid;
		x->port = g[i].port;
		x->count = 2;
		route_offender_say(x, "port GUID 0x%016llx is both %s and %s",
			 (unsigned long long)g[i].guid, a, b);
	}
}

static void lids(const struct topology *f, const struct route_port_fact *p, size_t np,
		 struct lid_owner *l, struct subnet_out *o)
{
	size_t n = 0;
	unsigned reach_hi = 0;
	size_t reach = 0;

	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct topo_node *nd = &f->nodes[i];
		struct route_offender *x;

		if (nd->type != 2)
			continue;
		if (nd->lid) {
			l[n++] = (struct lid_owner){nd->lid, nd->lid, i, 0};
		} else if (node_active(f, i, p, np) &&
			   (x = offender(o, ROUTE_CHECK_DUPLICATES, ROUTE_ZERO_LID))) {
			x->guid = nd->guid;
			x->count = 1;
			route_offender_say(x,
				 "switch %s has active links and no LID: the SM has not given it one",
				 name_of(f, i));
		}
	}
	for (size_t i = 0; i < f->n_ports; i++) {
		const struct topo_port *tp = &f->ports[i];
		const struct topo_node *nd = &f->nodes[tp->node];
		const struct route_port_fact *x = fact_of(p, np, nd->guid, tp->port);
		unsigned lmc = x && x->lmc <= 7 ? x->lmc : 0;
		struct route_offender *z;

		if (nd->type == 2)
			continue;
		if (tp->lid)
			l[n++] = (struct lid_owner){tp->lid, tp->lid + (1u << lmc) - 1, tp->node,
						    tp->port};
		/* the discovery keeps a port's LID from before: its PortInfo
		 * now says none */
		if (x && !x->lid && (x->state == 3 || x->state == 4) &&
		    (z = offender(o, ROUTE_CHECK_DUPLICATES, ROUTE_ZERO_LID))) {
			z->guid = nd->guid;
			z->port = tp->port;
			z->count = 1;
			route_offender_say(z, "%s port %u is %s with LID 0",
				 name_of(f, tp->node), tp->port, x->state == 4 ? "Active" : "Armed");
		}
	}
	qsort(l, n, sizeof(*l), lid_owner_cmp);
	/* a LID range that begins inside the widest one before it */
	for (size_t i = 0; i < n; i++) {
		if (i && l[i].lo <= reach_hi &&
		    (l[i].node != l[reach].node || l[i].port != l[reach].port)) {
			struct route_offender *x = offender(o, ROUTE_CHECK_DUPLICATES, ROUTE_DUP_LID);
			char a[100], b[100];

			if (x) {
				port_words(f, l[reach].node, l[reach].port, a, sizeof(a));
				port_words(f, l[i].node, l[i].port, b, sizeof(b));
				x->guid = f->nodes[l[i].node].guid;
				x->port = l[i].port;
				x->lid = l[i].lo;
				x->count = 2;
				route_offender_say(x, "LID %u is both %s's and %s's",
					 l[i].lo, a, b);
			}
		}
		if (!i || l[i].hi > reach_hi) {
			reach_hi = l[i].hi;
			reach = i;
		}
	}
}

static void descriptions(const struct topology *f, struct desc_owner *d, struct subnet_out *o)
{
	size_t n = 0;

	for (size_t i = 0; i < f->n_nodes; i++)
		if (f->nodes[i].desc[0])
			d[n++] = (struct desc_owner){f->nodes[i].desc, i};
	qsort(d, n, sizeof(*d), desc_cmp);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		struct route_offender *x;

		while (j < n && !strcmp(d[i].desc, d[j].desc))
			j++;
		if (j - i > 1 && (x = offender(o, ROUTE_CHECK_DUPLICATES, ROUTE_DUP_DESCRIPTION))) {
			x->guid = f->nodes[d[i].node].guid;
			x->count = j - i;
			route_offender_say(x,
				 "%zu nodes have the node description \"%.64s\" (informational)", j - i,
				 d[i].desc);
		}
		i = j;
	}
}

/* ---- links ---- */

static const char *state_name(unsigned s)
{
	static const char *const names[] = {"?", "Down", "Init", "Armed", "Active", "ActDefer"};

	return s < 6 ? names[s] : "?";
}

static unsigned mtu_octets(unsigned code)
{
	return code >= 1 && code <= 5 ? 128u << code : 0;
}

static unsigned data_vls(unsigned code)
{
	static const unsigned vls[] = {0, 1, 2, 4, 8, 15};

	return code <= 5 ? vls[code] : 0;
}

static unsigned min_u(unsigned a, unsigned b)
{
	return a < b ? a : b;
}

static void one_link(const struct topology *f, size_t na, const struct route_port_fact *a,
		     size_t nb, const struct route_port_fact *b, unsigned stuck_s,
		     struct subnet_out *o)
{
	const struct route_port_fact *e[2] = {a, b};
	size_t node[2] = {na, nb};
	char ends[200], w0[100], w1[100];
	struct route_offender *x;

	port_words(f, na, a->port, w0, sizeof(w0));
	port_words(f, nb, b->port, w1, sizeof(w1));
	words(ends, sizeof(ends), "%s <-> %s", w0, w1);
	for (int k = 0; k < 2; k++) {
		const struct route_port_fact *s = e[k], *t = e[1 - k];

		if (s->phys_state != 5 || (s->state != 2 && s->state != 3) || s->state_s < stuck_s)
			continue;
		if ((x = offender(o, ROUTE_CHECK_LINKS, ROUTE_LINK_STUCK))) {
			x->guid = s->guid;
			x->port = s->port;
			x->count = 1;
			route_offender_say(x,
				 "%.120s: %s's end has been %s for %u s (the other end %s)", ends,
				 name_of(f, node[k]), state_name(s->state), s->state_s,
				 state_name(t->state));
		}
		break; /* a link once */
	}
	if (a->state != 4 || b->state != 4)
		return;
	{
		unsigned cap = min_u(a->mtu_cap, b->mtu_cap);
		int low = a->active_mtu <= b->active_mtu ? 0 : 1;

		if (cap && e[low]->active_mtu && e[low]->active_mtu < cap &&
		    (x = offender(o, ROUTE_CHECK_LINKS, ROUTE_LINK_MTU))) {
			x->guid = e[low]->guid;
			x->port = e[low]->port;
			x->count = 1;
			route_offender_say(x,
				 "%.120s runs MTU %u (%s's end), both ends can %u", ends,
				 mtu_octets(e[low]->active_mtu), name_of(f, node[low]),
				 mtu_octets(cap));
		}
	}
	{
		unsigned cap = min_u(a->vl_cap, b->vl_cap);
		int low = a->oper_vls <= b->oper_vls ? 0 : 1;

		if (cap && e[low]->oper_vls && e[low]->oper_vls < cap &&
		    (x = offender(o, ROUTE_CHECK_LINKS, ROUTE_LINK_VLS))) {
			x->guid = e[low]->guid;
			x->port = e[low]->port;
			x->count = 1;
			route_offender_say(x,
				 "%.120s runs %u data VLs (%s's end), both ends can %u", ends,
				 data_vls(e[low]->oper_vls), name_of(f, node[low]),
				 data_vls(cap));
		}
	}
}

static void links(const struct topology *f, const struct route_port_fact *p, size_t n,
		  unsigned stuck_s, struct subnet_out *o)
{
	for (size_t i = 0; i < f->n_ports; i++) {
		const struct topo_port *tp = &f->ports[i];
		uint64_t guid = f->nodes[tp->node].guid;
		const struct topo_node *peer;
		const struct route_port_fact *a, *b;

		if (!tp->peer_guid || tp->peer_guid < guid ||
		    (tp->peer_guid == guid && tp->peer_port <= tp->port))
			continue; /* each link once, from its lower end */
		if (!(peer = topology_node(f, tp->peer_guid)) ||
		    !(a = fact_of(p, n, guid, tp->port)) ||
		    !(b = fact_of(p, n, tp->peer_guid, tp->peer_port)))
			continue;
		one_link(f, tp->node, a, (size_t)(peer - f->nodes), b, stuck_s, o);
	}
}

int route_subnet_check(const struct topology *f, const struct route_port_fact *p, size_t n,
		       unsigned stuck_s, struct route_findings *out)
{
	struct subnet_out o = {.r = out};
	size_t cells = f->n_ports + f->n_nodes + 1;
	struct guid_owner *g = calloc(cells, sizeof(*g));
	struct lid_owner *l = calloc(cells, sizeof(*l));
	struct desc_owner *order = calloc(f->n_nodes + 1, sizeof(*order));
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (!g || !l || !order)
		goto out;
	port_guids(f, g, &o);
	lids(f, p, n, l, &o);
	descriptions(f, order, &o);
	if (p)
		links(f, p, n, stuck_s, &o);
	if (o.failed)
		goto out;
	for (unsigned k = ROUTE_CHECK_DUPLICATES; k <= ROUTE_CHECK_LINKS; k++) {
		struct route_check_result *c = &out->checks[k];

		c->id = (uint8_t)k;
		c->status = c->offenders ? ROUTE_STATUS_FAILED : ROUTE_STATUS_PASSED;
		if (!f->n_nodes || (k == ROUTE_CHECK_LINKS && !p))
			c->status = ROUTE_STATUS_NOT_RUN;
	}
	route_offenders_sort(out);
	rc = 0;
out:
	free(g);
	free(l);
	free(order);
	if (rc)
		route_findings_free(out);
	return rc;
}
