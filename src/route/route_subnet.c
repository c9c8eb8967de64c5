/* The subnet checks (route.h), pure: what the SM gave the ports, from the
 * topology and the link sweep's PortInfo of every port, by sorting (no walk,
 * no table):
 *   duplicates: a port GUID or a LID (with its LMC's range) that two ports
 *   have, a linked CA port or switch without a LID; node descriptions two
 *   nodes share are said, not counted (switches out of the box share one);
 *   links: an end whose link is up (LinkUp) but stays Init or Armed (the SM
 *   did not bring it to Active), an active link whose MTU (NeighborMTU) or
 *   operational VLs are below what both ends can (MTUCap, VLCap): what
 *   ibdiagnet's links check and `iblinkinfo -l` show by hand;
 *   SMs: from their SMInfo, one master (IBA 14.4: a master hands over to
 *   an SM of higher priority; the lower GUID decides ties only when they
 *   discover each other, so a tie is no fault), whose ActCount
 *   moves, whose LID every Active CA port has for its master (MasterSMLID);
 *   a master alone, or a port that says it is an SM and does not answer,
 *   is said, not counted: what `sminfo` and `saquery SMIR` show by hand;
 *   cabling: every link of the plan (expectedTopology, route_plan.c) there,
 *   no port cabled elsewhere, no node more or less; the plan's nodes are the
 *   subnet's of the same GUID, else of the same description (a plan made
 *   before the hardware came), as ibdiagnet's topology compare does.
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

/* ---- SMs ---- */

static const char *sm_state_name(unsigned state)
{
	static const char *const names[] = {"notActive", "discovering", "standby", "master"};

	return state < 4 ? names[state] : "not answering";
}

/* The port with LID lid (a CA's, or a switch's port 0): its words. */
static void lid_port_words(const struct topology *f, unsigned lid, char *out, size_t len)
{
	for (size_t i = 0; lid && i < f->n_nodes; i++)
		if (f->nodes[i].type == 2 && f->nodes[i].lid == lid) {
			port_words(f, i, 0, out, len);
			return;
		}
	for (size_t i = 0; lid && i < f->n_ports; i++)
		if (f->nodes[f->ports[i].node].type != 2 && f->ports[i].lid == lid) {
			port_words(f, f->ports[i].node, f->ports[i].port, out, len);
			return;
		}
	words(out, len, "LID %u", lid);
}

/* Ports that take LID lid for their master SM: how many, the first. */
struct sm_lid_count {
	unsigned lid;
	uint64_t ports;
	const struct route_port_fact *first;
};

/* Whether SM a wins over b (IBA 14.4.1.1: priority, then the lower GUID). */
static bool sm_wins(const struct route_sm *a, const struct route_sm *b)
{
	return a->priority != b->priority ? a->priority > b->priority : a->guid < b->guid;
}

static void sms(const struct topology *f, const struct route_subnet_input *in,
		struct subnet_out *o)
{
	const struct route_sm *master = NULL, *winner = NULL;
	size_t masters = 0, standbys = 0;
	struct route_offender *x;
	bool fresh_master = false;

	/* an SM whose last answer stands (stale: late now) says what it said,
	 * but another's answer now says more: a master that answers now is the
	 * master, and a stale one beside it is not counted twice */
	for (size_t i = 0; i < in->n_sms; i++)
		fresh_master |= !in->sms[i].stale && in->sms[i].state == 3;
	for (size_t i = 0; i < in->n_sms; i++) {
		struct route_sm *m = &in->sms[i];

		lid_port_words(f, m->lid, m->name, sizeof(m->name));
		if (m->stale && m->state == 3 && fresh_master)
			continue;
		if (m->state == ROUTE_SM_NO_ANSWER) {
			if ((x = offender(o, ROUTE_CHECK_SM, ROUTE_SM_SILENT))) {
				x->guid = m->guid;
				x->lid = m->lid;
				x->count = 1;
				route_offender_say(x, "%s (LID %u) is an SM (IsSM) and does not answer "
						      "SMInfo (informational)", m->name, m->lid);
			}
			continue;
		}
		if (m->state != 0 && (!winner || sm_wins(m, winner)))
			winner = m;
		standbys += m->state == 2;
		if (m->state != 3)
			continue;
		if (master && (x = offender(o, ROUTE_CHECK_SM, ROUTE_SM_MASTERS))) {
			x->guid = m->guid;
			x->lid = m->lid;
			x->count = 2;
			route_offender_say(x, "%s (LID %u) is master beside %s (LID %u): two SMs "
					      "configure the subnet", m->name, m->lid, master->name,
					      master->lid);
		}
		if (!master)
			master = m;
		masters++;
	}
	if (!masters) {
		if ((x = offender(o, ROUTE_CHECK_SM, ROUTE_SM_NO_MASTER))) {
			x->count = in->n_sms;
			route_offender_say(x, "no SM is master (%zu SM%s found): nothing configures "
					      "ports that come up or reroutes around links that fail",
					   in->n_sms, in->n_sms == 1 ? "" : "s");
		}
		return;
	}
	/* a master hands over to a higher priority only (a tie of priorities
	 * is decided by GUID when SMs discover each other, not after) */
	if (masters == 1 && winner && winner->priority > master->priority &&
	    (x = offender(o, ROUTE_CHECK_SM, ROUTE_SM_NOT_WINNER))) {
		x->guid = master->guid;
		x->lid = master->lid;
		x->count = 1;
		route_offender_say(x, "master %s has priority %u; %s (%s, priority %u) should win",
				   master->name, master->priority, winner->name,
				   sm_state_name(winner->state), winner->priority);
	}
	if (master->act_still_s >= in->stall_s &&
	    (x = offender(o, ROUTE_CHECK_SM, ROUTE_SM_STALLED))) {
		x->guid = master->guid;
		x->lid = master->lid;
		x->count = 1;
		route_offender_say(x, "master %s answers but its ActCount (%u) has not moved for "
				      "%u s: it has stopped working", master->name, master->act_count,
				   master->act_still_s);
	}
	if (masters == 1 && !standbys && (x = offender(o, ROUTE_CHECK_SM, ROUTE_SM_NO_STANDBY))) {
		x->guid = master->guid;
		x->lid = master->lid;
		x->count = 1;
		route_offender_say(x, "no standby SM: master %s is alone (informational)",
				   master->name);
	}
	if (masters != 1 || !in->ports)
		return;
	/* Active CA ports that take another LID for their master: one row per
	 * LID they name (the first 8; the ports of others count with the
	 * last), once the master has been for two sweeps (ports follow a new
	 * master as the sweeps read them) */
	if (master->master_s < in->stuck_s)
		return;
	{
		struct sm_lid_count other[8];
		size_t n_other = 0;

		for (size_t i = 0; i < in->n_ports; i++) {
			const struct route_port_fact *p = &in->ports[i];
			const struct topo_node *nd;
			size_t k = 0;

			if (p->state != 4 || p->sm_lid == master->lid ||
			    !(nd = topology_node(f, p->guid)) || nd->type == 2)
				continue;
			while (k < n_other && other[k].lid != p->sm_lid)
				k++;
			if (k == n_other && n_other < 8)
				other[n_other++] = (struct sm_lid_count){p->sm_lid, 0, p};
			other[k < n_other ? k : n_other - 1].ports++;
		}
		for (size_t k = 0; k < n_other; k++) {
			const struct route_port_fact *p = other[k].first;
			const struct topo_node *nd = topology_node(f, p->guid);
			char who[100];

			if (!(x = offender(o, ROUTE_CHECK_SM, ROUTE_SM_LID_DISAGREE)))
				continue;
			lid_port_words(f, other[k].lid, who, sizeof(who));
			x->guid = p->guid;
			x->port = p->port;
			x->lid = other[k].lid;
			x->count = other[k].ports;
			route_offender_say(x, "%llu Active CA port%s (%s port %u the first) take%s LID "
					      "%u (%s) for the master SM, not %s's LID %u",
					   (unsigned long long)other[k].ports,
					   other[k].ports == 1 ? "" : "s", nd->name ? nd->name : nd->desc,
					   p->port, other[k].ports == 1 ? "s" : "", other[k].lid, who,
					   master->name, master->lid);
		}
	}
}

/* ---- the expected cabling ---- */

#define NO_NODE SIZE_MAX

struct cabling {
	const struct topology *f;
	const struct route_plan *plan;
	size_t *node_of;          /* per plan node: the subnet's, NO_NODE */
	uint64_t *plan_guid_of;   /* per subnet node: its plan node's GUID, 0 none */
};

static size_t plan_index(const struct route_plan *plan, uint64_t guid)
{
	struct route_plan_node key = {.guid = guid};
	const struct route_plan_node *x =
		bsearch(&key, plan->nodes, plan->n_nodes, sizeof(key), route_plan_node_cmp);

	return x ? (size_t)(x - plan->nodes) : NO_NODE;
}

static const struct route_plan_port *plan_port(const struct route_plan *plan, uint64_t guid,
					       unsigned port)
{
	struct route_plan_port key = {.guid = guid, .port = port};

	return plan->n_ports ? bsearch(&key, plan->ports, plan->n_ports, sizeof(key),
				       route_plan_port_cmp)
			     : NULL;
}

/* The plan's nodes matched to the subnet's: by GUID, else by a description
 * that one node of each has. */
static int cabling_map(struct cabling *c, struct desc_owner *by_desc)
{
	const struct topology *f = c->f;
	size_t n = 0;

	for (size_t i = 0; i < f->n_nodes; i++)
		by_desc[n++] = (struct desc_owner){f->nodes[i].desc, i};
	qsort(by_desc, n, sizeof(*by_desc), desc_cmp);
	for (size_t k = 0; k < c->plan->n_nodes; k++) {
		const struct route_plan_node *pn = &c->plan->nodes[k];
		const struct topo_node *nd = topology_node(f, pn->guid);
		size_t lo = 0, hi = n;

		c->node_of[k] = nd ? (size_t)(nd - f->nodes) : NO_NODE;
		if (nd || !pn->desc[0])
			continue;
		while (lo < hi) { /* the first of that description */
			size_t mid = (lo + hi) / 2;

			if (strcmp(by_desc[mid].desc, pn->desc) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < n && !strcmp(by_desc[lo].desc, pn->desc) &&
		    (lo + 1 == n || strcmp(by_desc[lo + 1].desc, pn->desc)) &&
		    plan_index(c->plan, f->nodes[by_desc[lo].node].guid) == NO_NODE)
			c->node_of[k] = by_desc[lo].node;
	}
	for (size_t k = 0; k < c->plan->n_nodes; k++)
		if (c->node_of[k] != NO_NODE)
			c->plan_guid_of[c->node_of[k]] = c->plan->nodes[k].guid;
	return 0;
}

static void plan_words(const struct cabling *c, size_t k, char *out, size_t len)
{
	const struct route_plan_node *pn = &c->plan->nodes[k];

	if (c->node_of[k] != NO_NODE)
		words(out, len, "%s", name_of(c->f, c->node_of[k]));
	else if (pn->desc[0])
		words(out, len, "%s", pn->desc);
	else
		words(out, len, "0x%016llx", (unsigned long long)pn->guid);
}

static void cabling(const struct topology *f, const struct route_plan *plan,
		    struct cabling *c, struct subnet_out *o)
{
	struct route_offender *x;
	char a[100], b[100];

	for (size_t k = 0; k < plan->n_nodes; k++)
		if (c->node_of[k] == NO_NODE &&
		    (x = offender(o, ROUTE_CHECK_CABLING, ROUTE_CABLE_NODE_MISSING))) {
			plan_words(c, k, a, sizeof(a));
			x->guid = plan->nodes[k].guid;
			x->count = 1;
			route_offender_say(x, "%s (0x%016llx) is planned and not in the subnet", a,
					   (unsigned long long)plan->nodes[k].guid);
		}
	for (size_t i = 0; i < f->n_nodes; i++)
		if (!c->plan_guid_of[i] &&
		    (x = offender(o, ROUTE_CHECK_CABLING, ROUTE_CABLE_NODE_UNPLANNED))) {
			x->guid = f->nodes[i].guid;
			x->count = 1;
			route_offender_say(x, "%s (0x%016llx) is in the subnet and not in the plan",
					   name_of(f, i), (unsigned long long)f->nodes[i].guid);
		}
	/* each planned port: linked as planned, elsewhere, or not at all */
	for (size_t i = 0; i < plan->n_ports; i++) {
		const struct route_plan_port *pp = &plan->ports[i];
		size_t ka = plan_index(plan, pp->guid), kb = plan_index(plan, pp->peer);
		size_t na, nb = kb == NO_NODE ? NO_NODE : c->node_of[kb];
		const struct topo_port *ta, *tb = NULL;

		if (ka == NO_NODE || (na = c->node_of[ka]) == NO_NODE)
			continue; /* a node missing: said as such */
		ta = topology_port(f, na, pp->port);
		if (nb != NO_NODE) {
			tb = topology_port(f, nb, pp->peer_port);
			if (ta && ta->peer_guid == f->nodes[nb].guid && ta->peer_port == pp->peer_port)
				continue;
		}
		port_words(f, na, pp->port, a, sizeof(a));
		if (nb != NO_NODE) {
			port_words(f, nb, pp->peer_port, b, sizeof(b));
		} else {
			char who[100];

			if (kb != NO_NODE)
				plan_words(c, kb, who, sizeof(who));
			else
				words(who, sizeof(who), "0x%016llx", (unsigned long long)pp->peer);
			words(b, sizeof(b), "%s port %u", who, pp->peer_port);
		}
		if (ta && ta->peer_guid) {
			const struct topo_node *to = topology_node(f, ta->peer_guid);
			char w[100];

			if (!(x = offender(o, ROUTE_CHECK_CABLING, ROUTE_CABLE_WRONG_PORT)))
				continue;
			if (to)
				port_words(f, (size_t)(to - f->nodes), ta->peer_port, w, sizeof(w));
			else
				words(w, sizeof(w), "0x%016llx port %u",
				      (unsigned long long)ta->peer_guid, ta->peer_port);
			x->guid = f->nodes[na].guid;
			x->port = pp->port;
			x->count = 1;
			route_offender_say(x, "%s is cabled to %s, planned %s", a, w, b);
		} else if (nb != NO_NODE && (!tb || !tb->peer_guid) &&
			   (pp->guid < pp->peer || (pp->guid == pp->peer && pp->port < pp->peer_port)) &&
			   (x = offender(o, ROUTE_CHECK_CABLING, ROUTE_CABLE_LINK_MISSING))) {
			/* neither end linked: once, from the plan's lower end (one
			 * linked elsewhere is that end's wrong port; a node missing
			 * is said as such) */
			x->guid = f->nodes[na].guid;
			x->port = pp->port;
			x->count = 1;
			route_offender_say(x, "%s <-> %s is planned: neither end has a link", a, b);
		}
	}
	/* links between planned nodes on ports the plan leaves unused */
	for (size_t i = 0; i < f->n_ports; i++) {
		const struct topo_port *tp = &f->ports[i];
		const struct topo_node *to;
		uint64_t pa = c->plan_guid_of[tp->node], pc;

		if (!pa || !tp->peer_guid || !(to = topology_node(f, tp->peer_guid)) ||
		    !(pc = c->plan_guid_of[to - f->nodes]) || plan_port(plan, pa, tp->port))
			continue;
		/* once a link: from the lower end, unless that end is planned */
		if (plan_port(plan, pc, tp->peer_port) == NULL &&
		    (f->nodes[tp->node].guid > tp->peer_guid ||
		     (f->nodes[tp->node].guid == tp->peer_guid && tp->port > tp->peer_port)))
			continue;
		if (!(x = offender(o, ROUTE_CHECK_CABLING, ROUTE_CABLE_UNPLANNED_LINK)))
			continue;
		port_words(f, tp->node, tp->port, a, sizeof(a));
		port_words(f, (size_t)(to - f->nodes), tp->peer_port, b, sizeof(b));
		x->guid = f->nodes[tp->node].guid;
		x->port = tp->port;
		x->count = 1;
		route_offender_say(x, "%s <-> %s: not in the plan (%s planned unused)", a, b, a);
	}
}

int route_subnet_check(const struct topology *f, const struct route_subnet_input *in,
		       struct route_findings *out)
{
	const struct route_port_fact *p = in->ports;
	size_t n = in->n_ports;
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
		links(f, p, n, in->stuck_s, &o);
	if (in->sms)
		sms(f, in, &o);
	if (in->plan) {
		struct cabling c = {f, in->plan, calloc(in->plan->n_nodes + 1, sizeof(size_t)),
				    calloc(f->n_nodes + 1, sizeof(uint64_t))};

		if (!c.node_of || !c.plan_guid_of || cabling_map(&c, order))
			o.failed = true;
		else
			cabling(f, in->plan, &c, &o);
		free(c.node_of);
		free(c.plan_guid_of);
	}
	if (o.failed)
		goto out;
	for (unsigned k = ROUTE_ROUTING_CHECKS + 1; k <= ROUTE_CHECKS; k++) {
		struct route_check_result *c = &out->checks[k];

		c->id = (uint8_t)k;
		c->status = c->offenders ? ROUTE_STATUS_FAILED : ROUTE_STATUS_PASSED;
		if (!f->n_nodes || (k == ROUTE_CHECK_LINKS && !p) ||
		    (k == ROUTE_CHECK_SM && !in->sms) || (k == ROUTE_CHECK_CABLING && !in->plan))
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
