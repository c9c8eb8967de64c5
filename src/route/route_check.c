/* The routing checks (route.h), pure. LFT routing depends only on the
 * destination, so every question about pairs of hosts is answered by one
 * walk per destination LID over the switches' next hops: D x S steps
 * (8.4e7 at 40,000 hosts) where ibdiagnet -r and ibdmchk trace D x D pairs
 * (1.6e9). For a destination d:
 *   - each switch follows its entry for d, hop by hop, to the destination
 *     (reached, with its depth), a dead end (the first switch whose entry
 *     goes nowhere: the one blamed) or a switch already on the walk (a loop);
 *     every switch on the way shares the outcome, so each is walked once;
 *   - in order of depth: the CA sources that pass each switch (its flow:
 *     paths per port), the hop histogram against BFS distances (routes not
 *     minimal), whether a route goes down then up (ranks from the CAs), and
 *     the channel dependencies (the edges of the CDG: one bit per switch,
 *     in port and out port);
 * then the CDG's cycles (credit loops) over (channel, VL): a dependency
 * channel 1 -> channel 2 is, for each SL the paths use (routingPathSls),
 * (channel 1, its VL for that SL) -> (channel 2, its VL for that SL), the
 * VLs from each port's SL2VL. Exact for engines whose paths all use one SL
 * (ftree, updn, minhop: SL 0); with several, which pair uses which SL is
 * the SM's (DFSSSP, LASH, QoS): every SL is taken for every pair, so a
 * cycle is possible, not certain, and the check is partial. Written here:
 * no library checks routing (ibutils' ibdm is not packaged, and it walks
 * pairs). */
#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ibsnmpd/route.h"

#define NONE SIZE_MAX
#define PEER_NONE UINT32_MAX

enum walk_state { WALK_UNKNOWN, WALK_ACTIVE, WALK_OK, WALK_DEAD, WALK_LOOP, WALK_UNREAD };

/* The fabric as the walks see it: switches, their ports' far ends, LIDs'
 * owners. A slot is (switch, port): base[sw] + port. */
struct model {
	const struct topology *f;
	const struct route_tables *t;
	size_t S, n_slots;
	size_t *base;        /* per switch, then the total */
	uint32_t *peer_sw;   /* per slot: the switch at the other end, PEER_NONE (compact:
	                      * the walks read it for every switch and destination) */
	unsigned *peer_port; /* per slot: its port there (switch or CA) */
	unsigned *ca_lid;    /* per slot: the CA port's LID at the other end, 0 none */
	size_t *ca_node;     /* per slot: that CA's node */
	uint32_t *weight;    /* per switch: CA ports (with a LID) cabled to it */
	int *rank;           /* per switch: links to the nearest switch with CAs; -1 none */
	/* per LID: the switch that delivers it and through which port (0:
	 * itself), the node and port that own it */
	size_t *dest_sw;
	unsigned *final_port;
	size_t *owner_node;
	unsigned *owner_port;
	uint8_t *ca_dest;    /* per LID: a CA's (is_ca_lid) */
	/* per switch: the switches linked to it, each once (adj_first[s] ..
	 * adj_first[s + 1]): the distances' searches read only these */
	size_t *adj_first;
	uint32_t *adj;
};

static inline size_t peer_of(const struct model *m, size_t slot)
{
	uint32_t y = m->peer_sw[slot];

	return y == PEER_NONE ? NONE : y;
}

/* One destination's walk. */
struct walk {
	uint8_t *st;
	uint8_t *column;     /* every switch's entry for the destination, in a row */
	uint8_t *port;       /* walked: the switch's entry for the destination */
	size_t *next;        /* walked: the switch that entry leads to (NONE: none) */
	uint32_t *depth;     /* WALK_OK: links to the destination (the CA's link included) */
	uint32_t maxd;       /* the deepest WALK_OK */
	/* per slot: CA-to-CA routes through it (loads' paths; 32 bits hold
	 * them all: CA ports x CA LIDs < 49,152^2) and CA LIDs (loads' lids) */
	uint32_t *paths, *lids;
	uint32_t *blame;     /* WALK_DEAD, WALK_LOOP: index into blames */
	size_t *stack;
	uint64_t *flow;      /* CA sources whose route passes the switch */
	size_t *order;       /* reached switches by depth */
	uint32_t *count;     /* per depth */
	uint8_t *downonly, *updown_ok;
	uint32_t *dist;      /* BFS switch hops to the destination's switch */
	size_t dist_of;      /* whose dist is in dist (NONE) */
	size_t *queue;
	struct blame {
		uint8_t kind;
		size_t sw;
		unsigned port;
		uint64_t affected;
	} *blames;
	size_t n_blames, cap_blames;
};

struct cdg {
	size_t *bits_base;   /* per switch: its first word */
	uint64_t *bits;      /* (in port, out port) used, per switch */
};

void route_offender_say(struct route_offender *x, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(x->desc, sizeof(x->desc), fmt, ap);
	va_end(ap);
}

static const char *node_name(const struct topology *f, size_t node)
{
	const struct topo_node *nd = &f->nodes[node];

	return nd->name && *nd->name ? nd->name : nd->desc;
}

static const char *sw_name(const struct model *m, size_t sw)
{
	return node_name(m->f, m->t->switch_node[sw]);
}

static void lid_words(const struct model *m, unsigned lid, char *out, size_t len)
{
	size_t node = m->owner_node[lid];

	if (m->f->nodes[node].type == 2)
		snprintf(out, len, "LID %u (switch %s)", lid, node_name(m->f, node));
	else
		snprintf(out, len, "LID %u (%s port %u)", lid, node_name(m->f, node),
			 m->owner_port[lid]);
}

static void model_free(struct model *m)
{
	free(m->base);
	free(m->peer_sw);
	free(m->peer_port);
	free(m->ca_lid);
	free(m->ca_node);
	free(m->weight);
	free(m->rank);
	free(m->dest_sw);
	free(m->final_port);
	free(m->owner_node);
	free(m->owner_port);
	free(m->ca_dest);
	free(m->adj_first);
	free(m->adj);
}

static int ranks(struct model *m)
{
	size_t *queue = malloc((m->S ? m->S : 1) * sizeof(*queue)), head = 0, tail = 0;

	if (!queue)
		return -1;
	for (size_t s = 0; s < m->S; s++) {
		m->rank[s] = m->weight[s] ? 0 : -1;
		if (m->weight[s])
			queue[tail++] = s;
	}
	while (head < tail) {
		size_t s = queue[head++];

		for (size_t k = m->base[s] + 1; k < m->base[s + 1]; k++) {
			size_t y = peer_of(m, k);

			if (y != NONE && m->rank[y] < 0) {
				m->rank[y] = m->rank[s] + 1;
				queue[tail++] = y;
			}
		}
	}
	free(queue);
	return 0;
}

static int adjacency(struct model *m)
{
	size_t *mark = malloc((m->S ? m->S : 1) * sizeof(*mark)), n = 0;

	m->adj_first = calloc(m->S + 1, sizeof(*m->adj_first));
	m->adj = malloc((m->n_slots ? m->n_slots : 1) * sizeof(*m->adj));
	if (!mark || !m->adj_first || !m->adj) {
		free(mark);
		return -1;
	}
	for (size_t s = 0; s < m->S; s++)
		mark[s] = NONE;
	for (size_t s = 0; s < m->S; s++) {
		m->adj_first[s] = n;
		for (size_t k = m->base[s] + 1; k < m->base[s + 1]; k++) {
			size_t y = peer_of(m, k);

			if (y != NONE && mark[y] != s) {
				mark[y] = s;
				m->adj[n++] = (uint32_t)y;
			}
		}
	}
	m->adj_first[m->S] = n;
	free(mark);
	return 0;
}

static int model_build(struct model *m, const struct topology *f, const struct route_tables *t)
{
	size_t *sw_of = malloc((f->n_nodes ? f->n_nodes : 1) * sizeof(*sw_of));
	size_t L = (size_t)t->max_lid + 1;
	int rc = -1;

	memset(m, 0, sizeof(*m));
	m->f = f;
	m->t = t;
	m->S = t->n_switches;
	if (!sw_of)
		return -1;
	for (size_t i = 0; i < f->n_nodes; i++)
		sw_of[i] = NONE;
	m->base = malloc((m->S + 1) * sizeof(*m->base));
	if (!m->base)
		goto out;
	for (size_t s = 0; s < m->S; s++) {
		sw_of[t->switch_node[s]] = s;
		m->base[s] = m->n_slots;
		m->n_slots += (size_t)f->nodes[t->switch_node[s]].num_ports + 1;
	}
	m->base[m->S] = m->n_slots;
	m->peer_sw = malloc((m->n_slots + 1) * sizeof(*m->peer_sw));
	m->peer_port = calloc(m->n_slots + 1, sizeof(*m->peer_port));
	m->ca_lid = calloc(m->n_slots + 1, sizeof(*m->ca_lid));
	m->ca_node = calloc(m->n_slots + 1, sizeof(*m->ca_node));
	m->weight = calloc(m->S + 1, sizeof(*m->weight));
	m->rank = calloc(m->S + 1, sizeof(*m->rank));
	m->dest_sw = malloc(L * sizeof(*m->dest_sw));
	m->final_port = calloc(L, sizeof(*m->final_port));
	m->owner_node = calloc(L, sizeof(*m->owner_node));
	m->owner_port = calloc(L, sizeof(*m->owner_port));
	if (!m->peer_sw || !m->peer_port || !m->ca_lid || !m->ca_node || !m->weight || !m->rank ||
	    !m->dest_sw || !m->final_port || !m->owner_node || !m->owner_port)
		goto out;
	for (size_t k = 0; k < m->n_slots; k++)
		m->peer_sw[k] = PEER_NONE;
	for (size_t l = 0; l < L; l++)
		m->dest_sw[l] = NONE;
	/* a switch's LID: delivered to its port 0 */
	for (size_t s = 0; s < m->S; s++) {
		const struct topo_node *nd = &f->nodes[t->switch_node[s]];

		if (nd->lid && nd->lid < L && m->dest_sw[nd->lid] == NONE) {
			m->dest_sw[nd->lid] = s;
			m->owner_node[nd->lid] = t->switch_node[s];
		}
	}
	for (size_t i = 0; i < f->n_ports; i++) {
		const struct topo_port *tp = &f->ports[i];
		const struct topo_node *peer;
		size_t s = sw_of[tp->node], pn;

		if (!tp->peer_guid || !(peer = topology_node(f, tp->peer_guid)))
			continue;
		pn = (size_t)(peer - f->nodes);
		if (s != NONE) {
			size_t k;

			if (tp->port == 0 || tp->port > f->nodes[tp->node].num_ports ||
			    tp->peer_port == 0 || tp->peer_port > f->nodes[pn].num_ports)
				continue; /* not a link a discovery makes */
			k = m->base[s] + tp->port;
			m->peer_port[k] = tp->peer_port;
			if (sw_of[pn] != NONE) {
				m->peer_sw[k] = (uint32_t)sw_of[pn];
			} else {
				const struct topo_port *cp = topology_port(f, pn, tp->peer_port);

				if (cp && cp->lid && cp->lid < L) {
					m->ca_lid[k] = cp->lid;
					m->ca_node[k] = pn;
				}
			}
		} else if (f->nodes[tp->node].type != 2 && tp->lid && tp->lid < L &&
			   sw_of[pn] != NONE && tp->peer_port &&
			   tp->peer_port <= f->nodes[pn].num_ports &&
			   m->dest_sw[tp->lid] == NONE) {
			/* a CA's port: delivered by the switch it is cabled to */
			m->dest_sw[tp->lid] = sw_of[pn];
			m->final_port[tp->lid] = tp->peer_port;
			m->owner_node[tp->lid] = tp->node;
			m->owner_port[tp->lid] = tp->port;
			m->weight[sw_of[pn]]++;
		}
	}
	if (!(m->ca_dest = calloc(L, 1)) || adjacency(m))
		goto out;
	for (size_t l = 0; l < L; l++)
		m->ca_dest[l] = m->dest_sw[l] != NONE && f->nodes[m->owner_node[l]].type != 2;
	rc = ranks(m);
out:
	free(sw_of);
	if (rc)
		model_free(m);
	return rc;
}

static bool is_ca_lid(const struct model *m, unsigned lid)
{
	return m->ca_dest[lid];
}

/* ---- offenders ---- */

struct out_list {
	struct route_findings *r;
	size_t cap;
	bool failed;
};

struct route_offender *route_offender_add(struct route_findings *r, size_t *cap, unsigned check,
					  unsigned kind, bool *failed)
{
	struct route_check_result *c = &r->checks[check];
	struct route_offender *x;

	if (!route_offense_informational(kind))
		c->offenders++;
	if (c->listed >= ROUTE_OFFENDERS_MAX || *failed)
		return NULL;
	if (r->n_offenders == *cap) {
		size_t more = *cap ? 2 * *cap : 64;
		struct route_offender *v = realloc(r->offenders, more * sizeof(*v));

		if (!v) {
			*failed = true;
			return NULL;
		}
		r->offenders = v;
		*cap = more;
	}
	x = &r->offenders[r->n_offenders++];
	memset(x, 0, sizeof(*x));
	x->check = (uint8_t)check;
	x->n = ++c->listed;
	x->kind = (uint8_t)kind;
	return x;
}

static struct route_offender *offender_add(struct out_list *o, unsigned check, unsigned kind)
{
	return route_offender_add(o->r, &o->cap, check, kind, &o->failed);
}

/* ---- one destination ---- */

static int blame_new(struct walk *w, unsigned kind, size_t sw, unsigned port)
{
	if (w->n_blames == w->cap_blames) {
		size_t cap = w->cap_blames ? 2 * w->cap_blames : 16;
		struct blame *v = realloc(w->blames, cap * sizeof(*v));

		if (!v)
			return -1;
		w->blames = v;
		w->cap_blames = cap;
	}
	w->blames[w->n_blames] = (struct blame){(uint8_t)kind, sw, port, 0};
	return (int)w->n_blames++;
}

/* Follows switch s's route to lid and every switch on it not walked yet. */
static int walk_from(const struct model *m, struct walk *w, unsigned lid, size_t s)
{
	const struct route_tables *t = m->t;
	size_t n = 0, x = s;
	uint8_t state;
	uint32_t depth = 0, blame = 0;

	for (;;) {
		unsigned p;
		size_t k;
		int b;

		if (w->st[x] == WALK_ACTIVE) { /* back on the walk: a loop; the lowest switch in it */
			size_t first = x;

			for (size_t i = n; i-- > 0 && w->stack[i] != x;)
				if (w->stack[i] < first)
					first = w->stack[i];
			if ((b = blame_new(w, ROUTE_LOOP, first, 0)) < 0)
				return -1;
			state = WALK_LOOP;
			blame = (uint32_t)b;
			break;
		}
		if (w->st[x] != WALK_UNKNOWN) { /* walked before: its outcome */
			state = w->st[x];
			depth = w->depth[x] + 1;
			blame = w->blame[x];
			break;
		}
		if (!t->read[x]) {
			w->st[x] = WALK_UNREAD;
			state = WALK_UNREAD;
			break;
		}
		w->st[x] = WALK_ACTIVE;
		w->stack[n++] = x;
		p = w->column[x];
		k = m->base[x] + p;
		w->port[x] = (uint8_t)p;
		w->next[x] = NONE;
		state = WALK_DEAD;
		if (p == 0 && x == m->dest_sw[lid] && m->final_port[lid] == 0) {
			state = WALK_OK;
			depth = 0;
		} else if (p == 0) {
			b = blame_new(w, ROUTE_DEAD_SELF, x, 0);
		} else if (p == ROUTE_LFT_UNREAD) {
			b = blame_new(w, ROUTE_DEAD_UNASSIGNED, x, 0);
		} else if (k >= m->base[x + 1]) {
			b = blame_new(w, ROUTE_DEAD_BAD_PORT, x, p);
		} else if (peer_of(m, k) != NONE) {
			x = w->next[x] = peer_of(m, k);
			continue;
		} else if (m->ca_lid[k] == lid) {
			state = WALK_OK;
			depth = 1;
		} else if (m->ca_lid[k]) {
			b = blame_new(w, ROUTE_DEAD_WRONG_NODE, x, p);
		} else {
			b = blame_new(w, ROUTE_DEAD_DOWN, x, p);
		}
		if (state == WALK_DEAD) {
			if (b < 0)
				return -1;
			blame = (uint32_t)b;
		}
		/* the outcome is x's own: it is the last on the stack */
		break;
	}
	/* unwind: the last switch pushed takes the outcome's depth, each
	 * before it one more */
	for (size_t i = n; i-- > 0;) {
		size_t y = w->stack[i];

		w->st[y] = state;
		w->blame[y] = blame;
		w->depth[y] = depth;
		if (state == WALK_DEAD || state == WALK_LOOP)
			w->blames[blame].affected++;
		else if (state == WALK_OK) {
			w->count[depth + 1]++; /* by depth, for ca_destination's sort */
			if (depth > w->maxd)
				w->maxd = depth;
		}
		depth++;
	}
	return 0;
}

static int bfs_dist(const struct model *m, struct walk *w, size_t from)
{
	size_t head = 0, tail = 0;

	if (w->dist_of == from)
		return 0;
	for (size_t s = 0; s < m->S; s++)
		w->dist[s] = UINT32_MAX;
	w->dist[from] = 0;
	w->queue[tail++] = from;
	while (head < tail) {
		size_t s = w->queue[head++];

		for (size_t a = m->adj_first[s]; a < m->adj_first[s + 1]; a++) {
			uint32_t y = m->adj[a];

			if (w->dist[y] == UINT32_MAX) {
				w->dist[y] = w->dist[s] + 1;
				w->queue[tail++] = y;
			}
		}
	}
	w->dist_of = from;
	return 0;
}

static void say_blames(const struct model *m, struct walk *w, unsigned lid, struct out_list *o)
{
	char who[120], cut[48];

	lid_words(m, lid, who, sizeof(who));
	for (size_t b = 0; b < w->n_blames; b++) {
		const struct blame *bl = &w->blames[b];
		struct route_offender *x = offender_add(o, ROUTE_CHECK_REACH, bl->kind);
		const char *name = sw_name(m, bl->sw);

		if (!x)
			continue;
		x->guid = m->f->nodes[m->t->switch_node[bl->sw]].guid;
		x->port = bl->port;
		x->lid = lid;
		x->count = bl->affected;
		/* how many it leaves without the LID, in the words of every kind */
		snprintf(cut, sizeof(cut), "%llu switch%s cannot reach it",
			 (unsigned long long)bl->affected, bl->affected == 1 ? "" : "es");
		switch (bl->kind) {
		case ROUTE_LOOP:
			route_offender_say(x, "routes to %s loop through switch %s: %s", who, name, cut);
			break;
		case ROUTE_DEAD_UNASSIGNED:
			route_offender_say(x, "switch %s has no port for %s: %s", name, who, cut);
			break;
		case ROUTE_DEAD_SELF:
			route_offender_say(x, "switch %s keeps %s for itself (port 0): %s", name, who, cut);
			break;
		case ROUTE_DEAD_BAD_PORT:
			route_offender_say(x, "switch %s sends %s to port %u, which it does not have: %s", name, who,
			    bl->port, cut);
			break;
		case ROUTE_DEAD_WRONG_NODE:
			route_offender_say(x, "switch %s sends %s out of port %u to %s: %s", name, who, bl->port,
			    node_name(m->f, m->ca_node[m->base[bl->sw] + bl->port]), cut);
			break;
		default:
			route_offender_say(x, "switch %s sends %s out of port %u, which has no link: %s", name, who,
			    bl->port, cut);
		}
	}
}

static void cdg_mark(const struct model *m, struct cdg *c, size_t y, unsigned in, unsigned out)
{
	size_t np = m->base[y + 1] - m->base[y];
	size_t bit = (size_t)in * np + out;

	c->bits[c->bits_base[y] + bit / 64] |= 1ull << (bit % 64);
}

/* What the walk of a CA's LID says beyond reachability: one pass over the
 * switches to order those reached by depth, one nearest first, one
 * farthest first, each following the walk's next hops (w->next). An array
 * in order, not lists per depth: the passes then read ahead. */
static void ca_destination(const struct model *m, struct walk *w, unsigned lid, struct cdg *c,
			   struct route_findings *r, struct out_list *o)
{
	const struct route_tables *t = m->t;
	size_t A = m->dest_sw[lid], reached = 0, maxd = w->maxd;
	uint64_t not_min = 0, down_up = 0;
	size_t ex_min = NONE, ex_du = NONE;
	char who[120];

	/* the switches reached, by depth (a counting sort: the walks counted
	 * them); each one's own CA sources start its flow (the destination is
	 * no source) */
	for (size_t d = 1; d <= maxd + 1; d++)
		w->count[d] += w->count[d - 1];
	for (size_t s = 0; s < m->S; s++)
		if (w->st[s] == WALK_OK) {
			w->order[w->count[w->depth[s]]++] = s;
			w->flow[s] = m->weight[s] - (s == A);
		}
	reached = w->count[maxd];
	if (bfs_dist(m, w, A) < 0)
		return;
	/* nearest first: up/down */
	for (size_t i = 0; i < reached; i++) {
		size_t s = w->order[i], y = w->next[s];

		if (w->depth[s] <= 1 || y == NONE) { /* delivers it */
			w->downonly[s] = w->updown_ok[s] = 1;
		} else {
			int mv = m->rank[y] - m->rank[s];

			w->downonly[s] = mv < 0 && w->downonly[y];
			w->updown_ok[s] = w->downonly[s] || (mv >= 0 && w->updown_ok[y]);
		}
	}
	/* farthest first: flows, paths, hops, dependencies */
	for (size_t i = reached; i-- > 0;) {
		size_t s = w->order[i], k = m->base[s] + w->port[s], y = w->next[s];
		uint64_t own = m->weight[s] - (s == A), flow = w->flow[s];

		if (own) {
			unsigned hops = 1 + w->depth[s];

			r->hops[hops < ROUTE_HOPS_MAX ? hops : ROUTE_HOPS_MAX] += own;
			r->pairs_reached += own;
			if (w->dist[s] != UINT32_MAX && w->depth[s] - 1 > w->dist[s]) {
				not_min += own;
				if (ex_min == NONE)
					ex_min = s;
			}
			if (m->rank[s] >= 0 && !w->updown_ok[s]) {
				down_up += own;
				if (ex_du == NONE)
					ex_du = s;
			}
		}
		w->paths[k] += (uint32_t)flow;
		if (y != NONE) {
			w->flow[y] += flow;
			if (flow && w->next[y] != NONE)
				cdg_mark(m, c, y, m->peer_port[k], w->port[y]);
		}
	}
	if (!not_min && !down_up)
		return;
	lid_words(m, lid, who, sizeof(who));
	if (not_min) {
		struct route_offender *x = offender_add(o, ROUTE_CHECK_HOPS, ROUTE_NOT_MIN_HOP);

		if (x) {
			x->guid = m->f->nodes[t->switch_node[ex_min]].guid;
			x->lid = lid;
			x->count = not_min;
			route_offender_say(x,
				 "%llu CA pairs reach %s by a longer route than the shortest, e.g. from "
				 "switch %s: %u switch hops, shortest %u",
				 (unsigned long long)not_min, who, sw_name(m, ex_min),
				 w->depth[ex_min] - 1, w->dist[ex_min]);
		}
	}
	if (down_up && r->tree) {
		struct route_offender *x = offender_add(o, ROUTE_CHECK_UPDOWN, ROUTE_DOWN_UP);
		size_t turn = ex_du, prev = NONE;

		/* where the example's route turns up after going down */
		for (size_t s = ex_du, hops = 0; s != NONE && hops < m->S; hops++) {
			size_t y = peer_of(m, m->base[s] + route_entry(t, lid, s));

			if (y == NONE)
				break;
			if (prev != NONE && m->rank[s] < m->rank[prev] && m->rank[y] > m->rank[s]) {
				turn = s;
				break;
			}
			prev = s;
			s = y;
		}
		if (x) {
			x->guid = m->f->nodes[t->switch_node[turn]].guid;
			x->lid = lid;
			x->count = down_up;
			route_offender_say(x,
				 "%llu CA pairs reach %s by a route that goes down then up, e.g. from "
				 "switch %s, turning up at switch %s",
				 (unsigned long long)down_up, who, sw_name(m, ex_du), sw_name(m, turn));
		}
	}
}

static int walk_alloc(struct walk *w, size_t S, size_t slots)
{
	size_t n = S ? S : 1;

	memset(w, 0, sizeof(*w));
	w->st = calloc(n, 1);
	w->port = calloc(n, 1);
	w->column = calloc(n, 1);
	w->next = calloc(n, sizeof(*w->next));
	w->paths = calloc(slots + 1, sizeof(*w->paths));
	w->lids = calloc(slots + 1, sizeof(*w->lids));
	w->depth = calloc(n, sizeof(*w->depth));
	w->blame = calloc(n, sizeof(*w->blame));
	w->stack = calloc(n, sizeof(*w->stack));
	w->flow = calloc(n, sizeof(*w->flow));
	w->order = calloc(n, sizeof(*w->order));
	w->count = calloc(n + 2, sizeof(*w->count));
	w->downonly = calloc(n, 1);
	w->updown_ok = calloc(n, 1);
	w->dist = calloc(n, sizeof(*w->dist));
	w->queue = calloc(n, sizeof(*w->queue));
	w->dist_of = NONE;
	return w->st && w->port && w->column && w->next && w->paths && w->lids && w->depth &&
			       w->blame && w->stack && w->flow && w->order && w->count &&
			       w->downonly && w->updown_ok && w->dist && w->queue
		       ? 0
		       : -1;
}

static void walk_free(struct walk *w)
{
	free(w->st);
	free(w->port);
	free(w->column);
	free(w->next);
	free(w->paths);
	free(w->lids);
	free(w->depth);
	free(w->blame);
	free(w->stack);
	free(w->flow);
	free(w->order);
	free(w->count);
	free(w->downonly);
	free(w->updown_ok);
	free(w->dist);
	free(w->queue);
	free(w->blames);
}

/* ---- after every destination ---- */

static void balance(const struct model *m, struct route_findings *r, struct out_list *o)
{
	for (size_t s = 0; s < m->S; s++) {
		uint32_t lo = UINT32_MAX, hi = 0;
		unsigned lo_port = 0, hi_port = 0, n = 0;

		if (m->rank[s] < 0)
			continue;
		for (size_t k = m->base[s] + 1; k < m->base[s + 1]; k++) {
			size_t y = peer_of(m, k);

			if (y == NONE || m->rank[y] <= m->rank[s])
				continue;
			n++;
			if (r->loads[k].lids < lo) {
				lo = r->loads[k].lids;
				lo_port = (unsigned)(k - m->base[s]);
			}
			if (r->loads[k].lids > hi) {
				hi = r->loads[k].lids;
				hi_port = (unsigned)(k - m->base[s]);
			}
		}
		if (n >= 2 && hi > lo + 1) {
			struct route_offender *x = offender_add(o, ROUTE_CHECK_BALANCE, ROUTE_UNBALANCED);

			if (x) {
				x->guid = m->f->nodes[m->t->switch_node[s]].guid;
				x->port = hi_port;
				x->count = hi - lo;
				route_offender_say(x,
					 "switch %s's %u up-going ports are unbalanced: port %u carries "
					 "%u CA LIDs, port %u %u (OpenSM's rule: at most 1 apart)",
					 sw_name(m, s), n, hi_port, hi, lo_port, lo);
			}
		}
	}
}

/* The CDG's cycles: the channels (switch-to-switch ports) pruned of those
 * without a dependency in, or none out, until none is left to prune (as
 * OPA's opareport -o validatecreditloops does); then a cycle followed in
 * what is left, reported, taken out, and pruned again
 * (ROUTE_OFFENDERS_MAX at most). */
struct csr {
	size_t *first, *to;  /* forward: first[v]..first[v+1] */
	size_t *rfirst, *from; /* reverse */
	uint32_t *in, *outd;
	uint8_t *gone;
	size_t *queue, qn;
};

static void csr_free(struct csr *g)
{
	free(g->first);
	free(g->to);
	free(g->rfirst);
	free(g->from);
	free(g->in);
	free(g->outd);
	free(g->gone);
	free(g->queue);
}

/* The VLs of the SLs the paths use: the channels' VLs are numbered in the
 * order first seen (vl_of[VL]: its number; vls[number]: the VL). A port
 * whose SL2VL was not read (unanswered, or facing a CA) is taken to map
 * each SL as most ports read do: a fabric's tables are alike but for a
 * QoS policy's port types. */
struct vl_map {
	uint16_t sls;        /* the SLs (bit per SL), at least SL 0 */
	uint8_t sl[16];      /* the same, listed */
	unsigned n_sl;
	uint8_t usual[16];   /* per SL: the VL most ports read give it (0: none read) */
	unsigned n;          /* VLs seen */
	uint8_t vls[16], vl_of[16];
};

static uint8_t slot_vl(const struct model *m, const struct vl_map *vm, size_t slot, unsigned sl)
{
	uint8_t v = m->t->sl2vl[slot][sl];

	return v == ROUTE_VL_UNREAD ? vm->usual[sl] : v;
}

static void vl_map_make(const struct model *m, struct vl_map *vm)
{
	uint32_t seen[16][16] = {{0}}; /* [SL][VL]: ports read */

	memset(vm, 0, sizeof(*vm));
	memset(vm->vl_of, 0xff, sizeof(vm->vl_of));
	vm->sls = route_path_sls(m->t);
	for (unsigned sl = 0; sl < 16; sl++)
		if (vm->sls >> sl & 1)
			vm->sl[vm->n_sl++] = (uint8_t)sl;
	for (size_t k = 0; k < m->n_slots; k++)
		for (unsigned i = 0; i < vm->n_sl; i++) {
			uint8_t v = m->t->sl2vl[k][vm->sl[i]];

			if (v != ROUTE_VL_UNREAD)
				seen[vm->sl[i]][v & 15]++;
		}
	for (unsigned i = 0; i < vm->n_sl; i++)
		for (unsigned v = 1; v < 16; v++)
			if (seen[vm->sl[i]][v] > seen[vm->sl[i]][vm->usual[vm->sl[i]]])
				vm->usual[vm->sl[i]] = (uint8_t)v;
	for (size_t k = 0; k < m->n_slots; k++)
		for (unsigned i = 0; i < vm->n_sl; i++) {
			uint8_t v = slot_vl(m, vm, k, vm->sl[i]);

			if (vm->vl_of[v] != 0xff)
				continue;
			vm->vl_of[v] = (uint8_t)vm->n;
			vm->vls[vm->n++] = v;
		}
	if (!vm->n) { /* no slot: VL 0 */
		vm->vl_of[0] = 0;
		vm->n = 1;
	}
}

static size_t vl_node(const struct model *m, const struct vl_map *vm, size_t slot, unsigned sl)
{
	return slot * vm->n + vm->vl_of[slot_vl(m, vm, slot, sl)];
}

/* The dependencies of c as a graph over (slot, VL); -1 out of memory. */
static int csr_build(const struct model *m, const struct cdg *c, const struct vl_map *vm,
		     struct csr *g)
{
	size_t V = m->n_slots * vm->n, E = 0;
	size_t *fill = NULL;

	memset(g, 0, sizeof(*g));
	g->first = calloc(V + 2, sizeof(*g->first));
	g->rfirst = calloc(V + 2, sizeof(*g->rfirst));
	g->in = calloc(V + 1, sizeof(*g->in));
	g->outd = calloc(V + 1, sizeof(*g->outd));
	g->gone = calloc(V + 1, 1);
	g->queue = calloc(V + 1, sizeof(*g->queue));
	fill = calloc(V + 1, sizeof(*fill));
	if (!g->first || !g->rfirst || !g->in || !g->outd || !g->gone || !g->queue || !fill)
		goto fail;
	for (int pass = 0; pass < 2; pass++) {
		if (pass == 1) {
			for (size_t v = 0; v < V; v++) {
				g->first[v + 1] += g->first[v];
				g->rfirst[v + 1] += g->rfirst[v];
			}
			g->to = malloc((E ? E : 1) * sizeof(*g->to));
			g->from = malloc((E ? E : 1) * sizeof(*g->from));
			if (!g->to || !g->from)
				goto fail;
		}
		for (size_t y = 0; y < m->S; y++) {
			size_t np = m->base[y + 1] - m->base[y];

			for (size_t bit = 0; bit < np * np; bit++) {
				size_t in_slot = m->base[y] + bit / np, fc, tc;

				if (!(c->bits[c->bits_base[y] + bit / 64] >> (bit % 64) & 1) ||
				    peer_of(m, in_slot) == NONE)
					continue;
				/* the channel into y's port: the far end's slot */
				fc = m->base[peer_of(m, in_slot)] + m->peer_port[in_slot];
				tc = m->base[y] + bit % np;
				if (fc >= m->n_slots || tc >= m->n_slots)
					continue;
				for (unsigned i = 0; i < vm->n_sl; i++) {
					size_t fv = vl_node(m, vm, fc, vm->sl[i]);
					size_t tv = vl_node(m, vm, tc, vm->sl[i]);

					if (pass == 0) {
						g->first[fv + 1]++;
						g->rfirst[tv + 1]++;
						E++;
					} else {
						g->to[g->first[fv] + g->outd[fv]++] = tv;
						g->from[g->rfirst[tv] + fill[tv]++] = fv;
						g->in[tv]++;
					}
				}
			}
		}
	}
	free(fill);
	return 0;
fail:
	free(fill);
	csr_free(g);
	return -1;
}

static void csr_drop(struct csr *g, size_t v)
{
	if (g->gone[v])
		return;
	g->gone[v] = 1;
	g->queue[g->qn++] = v;
}

/* Takes out what has no dependency in or none out, until nothing changes. */
static void csr_prune(struct csr *g)
{
	while (g->qn) {
		size_t v = g->queue[--g->qn];

		for (size_t e = g->first[v]; e < g->first[v + 1]; e++)
			if (!g->gone[g->to[e]] && --g->in[g->to[e]] == 0)
				csr_drop(g, g->to[e]);
		for (size_t e = g->rfirst[v]; e < g->rfirst[v + 1]; e++)
			if (!g->gone[g->from[e]] && --g->outd[g->from[e]] == 0)
				csr_drop(g, g->from[e]);
	}
}

static size_t slot_switch(const struct model *m, size_t slot)
{
	size_t lo = 0, hi = m->S; /* the last switch whose base is <= slot */

	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;

		if (m->base[mid] <= slot)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* A cycle of (slot, VL) nodes, in words: one VL named once, several
 * named at each link. With several SLs in use it is possible, not
 * certain (the check is partial). */
static void say_credit_loop(const struct model *m, const struct vl_map *vm, const size_t *cycle,
			    size_t len, struct out_list *o)
{
	struct route_offender *x = offender_add(o, ROUTE_CHECK_CREDIT, ROUTE_CREDIT_LOOP);
	char path[ROUTE_DESC_MAX] = "", vls[16] = "";
	size_t used = 0, slot0 = cycle[0] / vm->n, sw = slot_switch(m, slot0);
	bool one_vl = true;

	if (!x)
		return;
	for (size_t i = 1; i < len; i++)
		one_vl = one_vl && cycle[i] % vm->n == cycle[0] % vm->n;
	for (size_t i = 0; i < len && used < sizeof(path); i++) {
		size_t slot = cycle[i] / vm->n, s2 = slot_switch(m, slot);
		int w;

		if (!one_vl)
			snprintf(vls, sizeof(vls), " VL %u", vm->vls[cycle[i] % vm->n]);
		w = snprintf(path + used, sizeof(path) - used, "%s%s/%zu%s", i ? " > " : "",
			     sw_name(m, s2), slot - m->base[s2], vls);
		used += w > 0 ? (size_t)w : 0;
	}
	if (one_vl)
		snprintf(vls, sizeof(vls), "VL %u", vm->vls[cycle[0] % vm->n]);
	x->guid = m->f->nodes[m->t->switch_node[sw]].guid;
	x->port = (unsigned)(slot0 - m->base[sw]);
	x->count = len;
	route_offender_say(x, "%scredit loop of %zu links on %s: %s",
			   vm->sls & (vm->sls - 1) ? "possible " : "", len,
			   one_vl ? vls : "several VLs", path);
}

static int credit_loops(const struct model *m, const struct cdg *c, struct out_list *o)
{
	size_t V, *seen_at, *cycle;
	struct vl_map vm;
	struct csr g;

	vl_map_make(m, &vm);
	V = m->n_slots * vm.n;
	if (csr_build(m, c, &vm, &g))
		return -1;
	seen_at = malloc((V + 1) * sizeof(*seen_at));
	cycle = malloc((V + 1) * sizeof(*cycle));
	if (!seen_at || !cycle) {
		free(seen_at);
		free(cycle);
		csr_free(&g);
		return -1;
	}
	for (size_t v = 0; v < V; v++) {
		seen_at[v] = NONE;
		if (!g.in[v] || !g.outd[v])
			csr_drop(&g, v);
	}
	csr_prune(&g);
	for (size_t v = 0, found = 0; v < V && found < ROUTE_OFFENDERS_MAX; v++) {
		size_t n = 0, u = v, start;

		if (g.gone[v])
			continue;
		/* every channel left has a dependency out among those left */
		while (seen_at[u] == NONE) {
			seen_at[u] = n;
			cycle[n++] = u;
			for (size_t e = g.first[u]; e < g.first[u + 1]; e++)
				if (!g.gone[g.to[e]]) {
					u = g.to[e];
					break;
				}
		}
		start = seen_at[u];
		say_credit_loop(m, &vm, cycle + start, n - start, o);
		found++;
		for (size_t i = 0; i < n; i++) { /* the cycle out; the way into it stays */
			seen_at[cycle[i]] = NONE;
			if (i >= start)
				csr_drop(&g, cycle[i]);
		}
		csr_prune(&g);
	}
	free(seen_at);
	free(cycle);
	csr_free(&g);
	return 0;
}

static int load_cmp(const void *a, const void *b)
{
	const struct route_port_load *x = a, *y = b;

	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return (x->port > y->port) - (x->port < y->port);
}

/* The loads kept: every switch port linked, by (GUID, port). */
static int loads_keep(const struct model *m, struct route_findings *r)
{
	size_t n = 0;

	for (size_t s = 0; s < m->S; s++)
		for (size_t k = m->base[s] + 1; k < m->base[s + 1]; k++) {
			struct route_port_load *l = &r->loads[k];
			size_t y = peer_of(m, k);

			if (y == NONE && !m->ca_lid[k])
				continue;
			l->guid = m->f->nodes[m->t->switch_node[s]].guid;
			l->port = (unsigned)(k - m->base[s]);
			l->direction = (int8_t)(y == NONE || m->rank[s] < 0 ? 0
						: m->rank[y] > m->rank[s] ? 1
						: m->rank[y] < m->rank[s] ? -1
									  : 0);
			r->loads[n++] = *l;
		}
	r->n_loads = n;
	qsort(r->loads, n, sizeof(*r->loads), load_cmp);
	return 0;
}

void route_findings_free(struct route_findings *r)
{
	free(r->offenders);
	free(r->loads);
	memset(r, 0, sizeof(*r));
}

static int offender_cmp(const void *a, const void *b)
{
	const struct route_offender *x = a, *y = b;

	if (x->check != y->check)
		return (x->check > y->check) - (x->check < y->check);
	return (x->n > y->n) - (x->n < y->n);
}

void route_offenders_sort(struct route_findings *r)
{
	if (r->n_offenders)
		qsort(r->offenders, r->n_offenders, sizeof(*r->offenders), offender_cmp);
}

/* One share of the destinations (LIDs lo..hi), checked on a thread of its
 * own: its walk, channel dependencies and findings. */
struct share {
	const struct model *m;
	unsigned lo, hi;
	uint64_t ca_sources;
	struct walk w;
	struct cdg c;            /* bits of its own; bits_base the first share's */
	struct route_findings r; /* offenders, hops, pairs, destinations */
	struct out_list o;
	int rc;
};

/* The CA LIDs each port forwards (loads' lids), of the share's LIDs: per
 * block of 64 LIDs, per switch its block's entries in a row. */
static void share_lids(struct share *sh)
{
	const struct model *m = sh->m;
	const struct route_tables *t = m->t;

	for (unsigned b = sh->lo / 64; b <= sh->hi / 64; b++) {
		unsigned l0 = b * 64 < sh->lo ? sh->lo : b * 64;
		unsigned l1 = b * 64 + 63 > sh->hi ? sh->hi : b * 64 + 63;
		const uint32_t *row = &t->block_of[(size_t)b * t->n_switches];

		for (size_t s = 0; s < m->S; s++) {
			const uint8_t *e = t->blocks + (size_t)row[s] * 64;
			size_t first = m->base[s], np = m->base[s + 1] - first;

			if (!t->read[s])
				continue;
			for (unsigned lid = l0; lid <= l1; lid++) {
				unsigned p = e[lid & 63];

				if (p && p < np && m->ca_dest[lid])
					sh->w.lids[first + p]++;
			}
		}
	}
}

static void *share_run(void *arg)
{
	struct share *sh = arg;
	const struct model *m = sh->m;

	sh->rc = -1;
	for (unsigned lid = sh->lo; lid <= sh->hi; lid++) {
		if (m->dest_sw[lid] == NONE)
			continue;
		sh->r.destinations++;
		memset(sh->w.st, WALK_UNKNOWN, m->S ? m->S : 1);
		memset(sh->w.count, 0, (sh->w.maxd + 2) * sizeof(*sh->w.count));
		sh->w.n_blames = 0;
		sh->w.maxd = 0;
		/* the destination's entries gathered once, in switch order: the
		 * walks then read them at random from the first-level cache */
		{
			const uint32_t *row = &m->t->block_of[(size_t)(lid / 64) * m->t->n_switches];
			const uint8_t *blocks = m->t->blocks + lid % 64;

			for (size_t s = 0; s < m->S; s++)
				sh->w.column[s] = blocks[(size_t)row[s] * 64];
		}
		for (size_t s = 0; s < m->S; s++)
			if (sh->w.st[s] == WALK_UNKNOWN && walk_from(m, &sh->w, lid, s))
				return NULL;
		say_blames(m, &sh->w, lid, &sh->o);
		if (!is_ca_lid(m, lid))
			continue;
		sh->r.ca_pairs += sh->ca_sources - 1; /* every CA port but the destination's */
		ca_destination(m, &sh->w, lid, &sh->c, &sh->r, &sh->o);
	}
	share_lids(sh);
	if (!sh->o.failed)
		sh->rc = 0;
	return NULL;
}

/* A share's findings after those of the shares before it (lower LIDs): as
 * one walk of every destination in order would have listed them. */
static int share_merge(struct route_findings *out, size_t *cap, const struct share *sh)
{
	const struct route_findings *r = &sh->r;

	for (unsigned c = 1; c <= ROUTE_CHECKS; c++)
		out->checks[c].offenders += r->checks[c].offenders;
	for (size_t i = 0; i < r->n_offenders; i++) {
		struct route_check_result *c = &out->checks[r->offenders[i].check];

		if (c->listed >= ROUTE_OFFENDERS_MAX)
			continue;
		if (out->n_offenders == *cap) {
			size_t more = *cap ? 2 * *cap : 64;
			struct route_offender *v = realloc(out->offenders, more * sizeof(*v));

			if (!v)
				return -1;
			out->offenders = v;
			*cap = more;
		}
		out->offenders[out->n_offenders] = r->offenders[i];
		out->offenders[out->n_offenders++].n = ++c->listed;
	}
	for (unsigned h = 0; h <= ROUTE_HOPS_MAX; h++)
		out->hops[h] += r->hops[h];
	out->ca_pairs += r->ca_pairs;
	out->pairs_reached += r->pairs_reached;
	out->destinations += r->destinations;
	for (size_t k = 0; k < sh->m->n_slots; k++) {
		out->loads[k].paths += sh->w.paths[k];
		out->loads[k].lids += sh->w.lids[k];
	}
	return 0;
}

static void share_free(struct share *sh)
{
	walk_free(&sh->w);
	free(sh->c.bits);
	route_findings_free(&sh->r);
}

int route_check_shares(const struct topology *f, const struct route_tables *t,
		       struct route_findings *out, unsigned n_shares)
{
	struct model m;
	struct share sh[ROUTE_CHECK_SHARES_MAX];
	pthread_t thread[ROUTE_CHECK_SHARES_MAX];
	bool started[ROUTE_CHECK_SHARES_MAX] = {false};
	size_t *bits_base = NULL, unread = 0, cap = 0;
	uint64_t ca_sources = 0, dests = 0, seen = 0;
	struct out_list o = {.r = out};
	unsigned lid = 1;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	memset(sh, 0, sizeof(sh));
	if (n_shares < 1)
		n_shares = 1;
	if (n_shares > ROUTE_CHECK_SHARES_MAX)
		n_shares = ROUTE_CHECK_SHARES_MAX;
	if (model_build(&m, f, t))
		return -1;
	if (!(out->loads = calloc(m.n_slots + 1, sizeof(*out->loads))) ||
	    !(bits_base = calloc(m.S + 1, sizeof(*bits_base))))
		goto out;
	for (size_t s = 0; s < m.S; s++) {
		size_t np = m.base[s + 1] - m.base[s];

		bits_base[s + 1] = bits_base[s] + (np * np + 63) / 64;
		unread += !t->read[s];
		out->tree |= m.weight[s] > 0;
		ca_sources += m.weight[s];
	}
	for (unsigned l = 1; l <= t->max_lid; l++)
		dests += m.dest_sw[l] != NONE;
	/* each share as many destinations, in order of LID */
	for (unsigned i = 0; i < n_shares; i++) {
		uint64_t until = dests * (i + 1) / n_shares;

		sh[i].m = &m;
		sh[i].ca_sources = ca_sources;
		sh[i].o.r = &sh[i].r;
		sh[i].r.tree = out->tree;
		sh[i].c.bits_base = bits_base;
		sh[i].lo = lid;
		while (lid <= t->max_lid && (seen < until || i + 1 == n_shares))
			seen += m.dest_sw[lid++] != NONE;
		sh[i].hi = lid - 1;
		if (walk_alloc(&sh[i].w, m.S, m.n_slots) ||
		    !(sh[i].c.bits = calloc(bits_base[m.S] + 1, sizeof(*sh[i].c.bits))))
			goto out;
	}
	/* the first share on this thread, the others on threads of their own
	 * (one fails to start: its share runs here) */
	for (unsigned i = 1; i < n_shares; i++)
		started[i] = !pthread_create(&thread[i], NULL, share_run, &sh[i]);
	share_run(&sh[0]);
	for (unsigned i = 1; i < n_shares; i++) {
		if (started[i])
			pthread_join(thread[i], NULL);
		else
			share_run(&sh[i]);
	}
	for (unsigned i = 0; i < n_shares; i++) {
		if (sh[i].rc || share_merge(out, &cap, &sh[i]))
			goto out;
		if (i)
			for (size_t b = 0; b < bits_base[m.S]; b++)
				sh[0].c.bits[b] |= sh[i].c.bits[b];
	}
	o.cap = cap;
	if (out->tree)
		balance(&m, out, &o);
	if (credit_loops(&m, &sh[0].c, &o) || loads_keep(&m, out) || o.failed)
		goto out;
	for (unsigned k = 1; k <= ROUTE_ROUTING_CHECKS; k++) {
		struct route_check_result *cr = &out->checks[k];

		cr->id = (uint8_t)k;
		cr->status = cr->offenders ? ROUTE_STATUS_FAILED
			     : unread	  ? ROUTE_STATUS_PARTIAL
					  : ROUTE_STATUS_PASSED;
		/* several SLs: which pair uses which is the SM's */
		if (k == ROUTE_CHECK_CREDIT && route_path_sls(t) & (route_path_sls(t) - 1))
			cr->status = ROUTE_STATUS_PARTIAL;
		if (!m.S || !out->destinations)
			cr->status = ROUTE_STATUS_NOT_RUN;
	}
	if (!out->tree) {
		out->checks[ROUTE_CHECK_UPDOWN].status = ROUTE_STATUS_NOT_RUN;
		out->checks[ROUTE_CHECK_BALANCE].status = ROUTE_STATUS_NOT_RUN;
	}
	for (unsigned h = 1; h <= ROUTE_HOPS_MAX; h++)
		if (out->hops[h])
			out->hop_rows[out->n_hop_rows++] = (struct route_hop_count){h, out->hops[h]};
	route_offenders_sort(out);
	rc = 0;
out:
	for (unsigned i = 0; i < n_shares; i++)
		share_free(&sh[i]);
	free(bits_base);
	model_free(&m);
	if (rc)
		route_findings_free(out);
	return rc;
}

int route_check(const struct topology *f, const struct route_tables *t,
		struct route_findings *out)
{
	size_t dests = 0;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned n = 1;

	for (size_t i = 0; i < f->n_ports; i++)
		dests += f->ports[i].lid != 0;
	/* a share is worth a thread from about 0.1 s of walks */
	if (cpus > 1 && (uint64_t)dests * t->n_switches >= ROUTE_CHECK_SHARE_STEPS)
		n = cpus < ROUTE_CHECK_SHARES_MAX ? (unsigned)cpus : ROUTE_CHECK_SHARES_MAX;
	return route_check_shares(f, t, out, n);
}

/* ---- the tables ---- */

static size_t block_rows(unsigned max_lid)
{
	return (size_t)max_lid / 64 + 1;
}

static uint64_t block_hash(const uint8_t *e)
{
	uint64_t h = 0x9e3779b97f4a7c15ull, w;

	for (unsigned i = 0; i < 64; i += 8) {
		memcpy(&w, e + i, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdull;
		h ^= h >> 29;
	}
	return h;
}

/* The index by content, built anew for cap slots; -1 out of memory. */
static int index_build(struct route_tables *t, size_t cap)
{
	uint32_t *v = calloc(cap, sizeof(*v));

	if (!v)
		return -1;
	free(t->index);
	t->index = v;
	t->index_cap = cap;
	for (uint32_t id = 0; id < t->n_blocks; id++) {
		size_t j = block_hash(t->blocks + (size_t)id * 64) & (cap - 1);

		while (t->index[j])
			j = (j + 1) & (cap - 1);
		t->index[j] = id + 1;
	}
	return 0;
}

/* The id of a block of these entries, added if none has them; -1 out of
 * memory. */
static int64_t block_intern(struct route_tables *t, const uint8_t *e)
{
	size_t j;

	if (!t->index_cap || 2 * ((size_t)t->n_blocks + 1) > t->index_cap) {
		size_t cap = 1024;

		while (cap < 4 * ((size_t)t->n_blocks + 1))
			cap *= 2;
		if (index_build(t, cap))
			return -1;
	}
	j = block_hash(e) & (t->index_cap - 1);
	for (; t->index[j]; j = (j + 1) & (t->index_cap - 1))
		if (!memcmp(t->blocks + (size_t)(t->index[j] - 1) * 64, e, 64))
			return t->index[j] - 1;
	if (t->n_blocks == UINT32_MAX - 1)
		return -1;
	if (t->n_blocks == t->cap_blocks) {
		uint32_t cap = t->cap_blocks ? 2 * t->cap_blocks : 64;
		uint8_t *v = realloc(t->blocks, (size_t)cap * 64);

		if (!v)
			return -1;
		t->blocks = v;
		t->cap_blocks = cap;
	}
	memcpy(t->blocks + (size_t)t->n_blocks * 64, e, 64);
	t->index[j] = t->n_blocks + 1;
	return t->n_blocks++;
}

int route_tables_init(struct route_tables *t, const struct topology *f, unsigned max_lid)
{
	uint8_t none[64];
	size_t S = 0;

	memset(t, 0, sizeof(*t));
	if (max_lid > ROUTE_MAX_LID)
		max_lid = ROUTE_MAX_LID;
	for (size_t i = 0; i < f->n_nodes; i++)
		S += f->nodes[i].type == 2;
	t->max_lid = max_lid;
	t->n_switches = S;
	t->switch_node = calloc(S ? S : 1, sizeof(*t->switch_node));
	t->read = calloc(S ? S : 1, sizeof(*t->read));
	t->block_of = calloc(block_rows(max_lid) * (S ? S : 1), sizeof(*t->block_of));
	t->vl_first = calloc(S + 1, sizeof(*t->vl_first));
	memset(none, ROUTE_LFT_UNREAD, sizeof(none));
	if (!t->switch_node || !t->read || !t->block_of || !t->vl_first ||
	    block_intern(t, none) != 0) {
		route_tables_free(t);
		return -1;
	}
	S = 0;
	for (size_t i = 0; i < f->n_nodes; i++)
		if (f->nodes[i].type == 2) {
			t->vl_first[S + 1] = t->vl_first[S] + f->nodes[i].num_ports + 1;
			t->switch_node[S++] = i;
		}
	t->sl2vl = malloc((t->vl_first[S] ? t->vl_first[S] : 1) * sizeof(*t->sl2vl));
	if (!t->sl2vl) {
		route_tables_free(t);
		return -1;
	}
	memset(t->sl2vl, ROUTE_VL_UNREAD, (t->vl_first[S] ? t->vl_first[S] : 1) * sizeof(*t->sl2vl));
	return 0;
}

void route_tables_put_sl2vl(struct route_tables *t, size_t sw, unsigned port,
			    const uint8_t vl[16])
{
	if (sw >= t->n_switches || t->vl_first[sw] + port >= t->vl_first[sw + 1])
		return;
	for (unsigned sl = 0; sl < 16; sl++)
		t->sl2vl[t->vl_first[sw] + port][sl] = vl[sl] & 15;
}

void route_tables_free(struct route_tables *t)
{
	free(t->switch_node);
	free(t->read);
	free(t->block_of);
	free(t->blocks);
	free(t->index);
	free(t->vl_first);
	free(t->sl2vl);
	memset(t, 0, sizeof(*t));
}

int route_tables_put_block(struct route_tables *t, size_t sw, unsigned block,
			   const uint8_t *entries)
{
	uint8_t e[64];
	int64_t id;

	if ((size_t)block >= block_rows(t->max_lid) || sw >= t->n_switches)
		return 0;
	memcpy(e, entries, sizeof(e));
	for (unsigned i = 0; i < 64; i++)
		if (block * 64 + i > t->max_lid)
			e[i] = ROUTE_LFT_UNREAD; /* past the LIDs: alike in every block */
	if ((id = block_intern(t, e)) < 0)
		return -1;
	t->block_of[(size_t)block * t->n_switches + sw] = (uint32_t)id;
	return 0;
}

int route_tables_set(struct route_tables *t, size_t sw, unsigned lid, uint8_t port)
{
	uint8_t e[64];
	unsigned block = lid / 64;

	if (lid > t->max_lid || sw >= t->n_switches)
		return 0;
	memcpy(e, t->blocks + (size_t)t->block_of[(size_t)block * t->n_switches + sw] * 64, 64);
	e[lid % 64] = port;
	return route_tables_put_block(t, sw, block, e);
}

int route_tables_adopt(struct route_tables *t, struct route_tables *from)
{
	size_t rows = block_rows(t->max_lid), had = block_rows(from->max_lid), S = t->n_switches;
	uint32_t *v = from->block_of;

	if (rows != had) { /* rows of new LIDs: none read (block 0) */
		v = realloc(from->block_of, rows * (S ? S : 1) * sizeof(*v));
		if (!v)
			return -1;
		if (rows > had)
			memset(v + had * S, 0, (rows - had) * S * sizeof(*v));
	}
	free(t->block_of);
	free(t->blocks);
	free(t->index);
	t->block_of = v;
	t->blocks = from->blocks;
	t->n_blocks = from->n_blocks;
	t->cap_blocks = from->cap_blocks;
	t->index = from->index;
	t->index_cap = from->index_cap;
	memcpy(t->read, from->read, S * sizeof(*t->read));
	if (from->vl_first[S] == t->vl_first[S]) { /* the same ports: their VLs */
		uint8_t(*vl)[16] = t->sl2vl;

		t->sl2vl = from->sl2vl;
		from->sl2vl = vl;
	}
	from->block_of = NULL;
	from->blocks = NULL;
	from->index = NULL;
	route_tables_free(from);
	return 0;
}

int route_tables_compact(struct route_tables *t)
{
	size_t cells = block_rows(t->max_lid) * t->n_switches;
	uint32_t *new_id = malloc(((size_t)t->n_blocks + 1) * sizeof(*new_id)), n = 1;
	uint8_t *v;

	if (!new_id)
		return -1;
	/* the blocks used, moved down in order of id (a block moves only to
	 * a place already moved from or unused), then the switches' ids */
	for (uint32_t id = 0; id < t->n_blocks; id++)
		new_id[id] = UINT32_MAX;
	for (size_t c = 0; c < cells; c++)
		new_id[t->block_of[c]] = 0;
	new_id[0] = 0; /* none read: always block 0 */
	for (uint32_t id = 1; id < t->n_blocks; id++) {
		if (new_id[id] == UINT32_MAX)
			continue;
		new_id[id] = n;
		if (n != id)
			memcpy(t->blocks + (size_t)n * 64, t->blocks + (size_t)id * 64, 64);
		n++;
	}
	for (size_t c = 0; c < cells; c++)
		t->block_of[c] = new_id[t->block_of[c]];
	free(new_id);
	t->n_blocks = n;
	if ((v = realloc(t->blocks, (size_t)n * 64))) {
		t->blocks = v;
		t->cap_blocks = n;
	}
	free(t->index);
	t->index = NULL;
	t->index_cap = 0;
	return 0;
}

size_t route_tables_bytes(const struct route_tables *t)
{
	return block_rows(t->max_lid) * t->n_switches * sizeof(*t->block_of) +
	       (t->vl_first ? t->vl_first[t->n_switches] * sizeof(*t->sl2vl) : 0) +
	       (size_t)t->cap_blocks * 64 + t->index_cap * sizeof(*t->index) +
	       t->n_switches * (sizeof(*t->switch_node) + sizeof(*t->read));
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
		: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int route_lft_line(struct route_tables *t, const uint32_t *sw_of_lid, size_t n_lids,
		   uint32_t *got, const char *line, size_t len)
{
	unsigned long lid, block;
	uint8_t entries[64];
	char head[40], *end;
	const char *hex;
	size_t n;

	if (len >= 5 && !memcmp(line, "done", 4) && (line[4] == ' ' || line[4] == '\n'))
		return 1;
	/* "lft LID BLOCK " then 128 hex digits, nothing after */
	n = len < sizeof(head) - 1 ? len : sizeof(head) - 1;
	memcpy(head, line, n);
	head[n] = 0;
	if (strncmp(head, "lft ", 4))
		return -1;
	if (!isdigit((unsigned char)head[4]))
		return -1;
	lid = strtoul(head + 4, &end, 10);
	if (*end != ' ' || lid > 0xffff || !isdigit((unsigned char)end[1]))
		return -1;
	block = strtoul(end + 1, &end, 10);
	if (*end != ' ' || block > 1023)
		return -1;
	hex = line + (end - head) + 1;
	if ((size_t)(line + len - hex) < 128 || (line + len - hex > 128 && hex[128] != '\n') ||
	    line + len - hex > 129)
		return -1;
	for (unsigned k = 0; k < 64; k++) {
		int hi = hex_digit(hex[2 * k]), lo = hex_digit(hex[2 * k + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		entries[k] = (uint8_t)(hi << 4 | lo);
	}
	if (lid >= n_lids || !sw_of_lid[lid] || block * 64 > t->max_lid)
		return 0; /* not a switch of the topology, or past its LIDs */
	if (route_tables_put_block(t, sw_of_lid[lid] - 1, (unsigned)block, entries) == 0)
		got[sw_of_lid[lid] - 1]++; /* else not kept: the switch not read whole */
	return 0;
}

unsigned route_max_lid(const struct topology *f)
{
	unsigned max = 0;

	for (size_t i = 0; i < f->n_nodes; i++)
		if (f->nodes[i].lid > max)
			max = f->nodes[i].lid;
	for (size_t i = 0; i < f->n_ports; i++)
		if (f->ports[i].lid > max)
			max = f->ports[i].lid;
	return max > ROUTE_MAX_LID ? ROUTE_MAX_LID : max;
}

const char *route_check_name(unsigned check)
{
	static const char *const names[] = {
		[ROUTE_CHECK_REACH] = "reachability", [ROUTE_CHECK_HOPS] = "hops",
		[ROUTE_CHECK_UPDOWN] = "updown",      [ROUTE_CHECK_CREDIT] = "creditLoops",
		[ROUTE_CHECK_BALANCE] = "balance",    [ROUTE_CHECK_DUPLICATES] = "duplicates",
		[ROUTE_CHECK_LINKS] = "links",        [ROUTE_CHECK_SM] = "sm",
		[ROUTE_CHECK_CABLING] = "cabling",
	};

	return check && check <= ROUTE_CHECKS ? names[check] : NULL;
}

const char *route_offense_name(unsigned kind)
{
	static const char *const names[] = {
		[ROUTE_DEAD_UNASSIGNED] = "deadEndUnassigned",
		[ROUTE_DEAD_DOWN] = "deadEndNoLink",
		[ROUTE_DEAD_BAD_PORT] = "deadEndNoSuchPort",
		[ROUTE_DEAD_SELF] = "deadEndSelf",
		[ROUTE_DEAD_WRONG_NODE] = "deadEndWrongNode",
		[ROUTE_LOOP] = "loop",
		[ROUTE_NOT_MIN_HOP] = "notMinHop",
		[ROUTE_DOWN_UP] = "downUp",
		[ROUTE_CREDIT_LOOP] = "creditLoop",
		[ROUTE_UNBALANCED] = "unbalanced",
		[ROUTE_DUP_PORT_GUID] = "duplicatePortGuid",
		[ROUTE_DUP_LID] = "duplicateLid",
		[ROUTE_ZERO_LID] = "zeroLid",
		[ROUTE_DUP_DESCRIPTION] = "duplicateDescription",
		[ROUTE_LINK_STUCK] = "linkStuck",
		[ROUTE_LINK_MTU] = "mtuBelowCapability",
		[ROUTE_LINK_VLS] = "vlsBelowCapability",
		[ROUTE_SM_NO_MASTER] = "smNoMaster",
		[ROUTE_SM_MASTERS] = "smSeveralMasters",
		[ROUTE_SM_NOT_WINNER] = "smMasterNotWinner",
		[ROUTE_SM_STALLED] = "smMasterStalled",
		[ROUTE_SM_LID_DISAGREE] = "smLidDisagree",
		[ROUTE_SM_NO_STANDBY] = "smNoStandby",
		[ROUTE_SM_SILENT] = "smNotAnswering",
		[ROUTE_CABLE_NODE_MISSING] = "cablingNodeMissing",
		[ROUTE_CABLE_NODE_UNPLANNED] = "cablingNodeUnplanned",
		[ROUTE_CABLE_LINK_MISSING] = "cablingLinkMissing",
		[ROUTE_CABLE_WRONG_PORT] = "cablingWrongPort",
		[ROUTE_CABLE_UNPLANNED_LINK] = "cablingUnplannedLink",
		[ROUTE_TABLE_NOT_SMS] = "tableNotSms",
	};

	return kind && kind <= ROUTE_OFFENSES ? names[kind] : NULL;
}
