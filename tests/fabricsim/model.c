/* fabricsim's model: nodes, ports, links, LIDs, counters. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "fabricsim.h"

double fs_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *grow(void *p, size_t size)
{
	void *q = realloc(p, size);

	if (!q) {
		fprintf(stderr, "fabricsim: out of memory\n");
		exit(1);
	}
	return q;
}

static uint32_t ports_cap; /* one fabric per process */

uint32_t fs_add_node(struct fabric *f, enum fs_node_type type, uint8_t nports, const char *name)
{
	struct fs_node *n;
	uint32_t id = f->nnodes;

	if ((id & (id - 1)) == 0 || id == 0)
		f->nodes = grow(f->nodes, sizeof(*f->nodes) * (id ? id * 2 : 1));
	n = &f->nodes[f->nnodes++];
	memset(n, 0, sizeof(*n));
	n->name = strdup(name);
	n->type = (uint8_t)type;
	n->nports = nports;
	/* GUIDs: a made-up OUI-like prefix, then the fabric (two simulators of
	 * one bed give GUIDs apart, as real fabrics do), the type and the node
	 * number */
	n->guid = 0xf452140300000000ULL | ((uint64_t)(f->fabric_id & 3) << 30) |
		  ((uint64_t)type << 28) | (id + 1);
	n->sys_guid = n->guid;
	n->device_id = type == FS_SWITCH ? 54002 /* Quantum-2 */ : 4129 /* ConnectX-7 */;
	n->first_port = f->nports;
	if (f->nports + nports + 1u > ports_cap) {
		ports_cap = (f->nports + nports + 1u) * 2;
		f->ports = grow(f->ports, sizeof(*f->ports) * ports_cap);
	}
	for (unsigned i = 0; i <= nports; i++) {
		struct fs_port *p = &f->ports[f->nports + i];

		memset(p, 0, sizeof(*p));
		p->peer = FS_NO_PORT;
		p->num = (uint8_t)i;
		p->width = f->default_width;
		p->speed = f->default_speed;
	}
	f->nports += nports + 1u;
	if (type == FS_SWITCH)
		f->nswitches++;
	return id;
}

uint32_t fs_port_index(struct fabric *f, uint32_t node, uint8_t num)
{
	return f->nodes[node].first_port + num;
}

struct fs_port *fs_port_of(struct fabric *f, uint32_t node, uint8_t num)
{
	if (node >= f->nnodes || num > f->nodes[node].nports)
		return NULL;
	return &f->ports[fs_port_index(f, node, num)];
}

uint32_t fs_node_of_port(const struct fabric *f, uint32_t port_index)
{
	/* nodes are laid out in port order: a binary search */
	uint32_t lo = 0, hi = f->nnodes;

	while (hi - lo > 1) {
		uint32_t mid = (lo + hi) / 2;

		if (f->nodes[mid].first_port <= port_index)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

void fs_cable(struct fabric *f, uint32_t node_a, uint8_t port_a, uint32_t node_b, uint8_t port_b)
{
	uint32_t a = fs_port_index(f, node_a, port_a), b = fs_port_index(f, node_b, port_b);

	f->ports[a].peer = b;
	f->ports[b].peer = a;
	f->ports[a].up = f->ports[b].up = 1;
}

uint64_t fs_port_guid(const struct fabric *f, uint32_t node, uint8_t num)
{
	const struct fs_node *n = &f->nodes[node];

	if (n->type == FS_SWITCH)
		return n->guid;
	/* port 1's GUID is the node's (as on ConnectX); others apart from
	 * every node GUID (those use the low 24 bits) */
	return n->guid + ((uint64_t)(num ? num - 1 : 0) << 24);
}

/* LIDs in node order from the SM's node on, switches' port 0 and every CA
 * port; the components; the clock. */
void fs_finish(struct fabric *f)
{
	uint16_t lid = 1;
	bool any_sm = false;

	for (uint32_t i = 0; i < f->nnodes; i++)
		any_sm |= f->nodes[i].sm_state != 0;
	if (!any_sm && f->nnodes)
		f->nodes[f->sm_node].sm_state = 4; /* master */
	f->epoch = fs_now();
	memset(f->lid_port, 0xff, sizeof(f->lid_port));
	for (uint32_t k = 0; k < f->nnodes; k++) {
		uint32_t i = (f->sm_node + k) % f->nnodes;
		struct fs_node *n = &f->nodes[i];

		if (n->type == FS_SWITCH) {
			n->lid = lid;
			for (unsigned p = 0; p <= n->nports; p++)
				f->ports[n->first_port + p].lid = lid;
			f->lid_port[lid++] = n->first_port;
		} else {
			n->lid = lid;
			for (unsigned p = 1; p <= n->nports; p++) {
				f->ports[n->first_port + p].lid = lid;
				f->lid_port[lid++] = n->first_port + p;
			}
		}
	}
	f->max_lid = (uint16_t)(lid - 1);
	for (uint32_t i = 0; i < f->nports; i++)
		if (f->ports[i].up)
			f->ports[i].up_since = f->epoch;
	f->switch_index = grow(NULL, sizeof(uint32_t) * f->nnodes);
	f->switches = grow(NULL, sizeof(uint32_t) * (f->nswitches + 1u));
	for (uint32_t i = 0, s = 0; i < f->nnodes; i++) {
		f->switch_index[i] = UINT32_MAX;
		if (f->nodes[i].type == FS_SWITCH) {
			f->switch_index[i] = s;
			f->switches[s++] = i;
		}
	}
	f->dist = calloc(f->nswitches + 1u, sizeof(*f->dist));
	fs_components(f);
}

int fs_find_node(const struct fabric *f, const char *name)
{
	for (uint32_t i = 0; i < f->nnodes; i++)
		if (!strcmp(f->nodes[i].name, name))
			return (int)i;
	/* also a GUID, as ibsim's names may be */
	char *end;
	unsigned long long g = strtoull(name, &end, 0);

	if (*name && !*end)
		for (uint32_t i = 0; i < f->nnodes; i++)
			if (f->nodes[i].guid == g)
				return (int)i;
	return -1;
}

static uint32_t find_root(uint32_t *parent, uint32_t x)
{
	while (parent[x] != x) {
		parent[x] = parent[parent[x]];
		x = parent[x];
	}
	return x;
}

/* Which nodes reach which over links that are up (union-find). A LID-routed
 * MAD arrives when its two ends are in one component: the simulator routes
 * by reachability, not hop by hop (no congestion model). */
void fs_components(struct fabric *f)
{
	uint32_t *parent = grow(NULL, sizeof(uint32_t) * f->nnodes);

	for (uint32_t i = 0; i < f->nnodes; i++)
		parent[i] = i;
	for (uint32_t i = 0; i < f->nnodes; i++) {
		struct fs_node *n = &f->nodes[i];

		for (unsigned p = 1; p <= n->nports; p++) {
			struct fs_port *port = &f->ports[n->first_port + p];

			if (port->up && port->peer != FS_NO_PORT) {
				uint32_t a = find_root(parent, i);
				uint32_t b = find_root(parent, fs_node_of_port(f, port->peer));

				if (a != b)
					parent[a] = b;
			}
		}
	}
	for (uint32_t i = 0; i < f->nnodes; i++)
		f->nodes[i].component = find_root(parent, i);
	free(parent);
	/* hop counts change with the links */
	for (uint32_t s = 0; f->dist && s < f->nswitches; s++) {
		free(f->dist[s]);
		f->dist[s] = NULL;
	}
}

uint32_t fs_add_node_live(struct fabric *f, enum fs_node_type type, uint8_t nports,
			  const char *name)
{
	uint32_t id, old_switches = f->nswitches;
	struct fs_node *n;
	uint16_t lid = (uint16_t)(f->max_lid + 1);

	if (f->max_lid + (type == FS_SWITCH ? 1u : nports) > FS_MAX_LID)
		return UINT32_MAX;
	id = fs_add_node(f, type, nports, name);
	n = &f->nodes[id];
	/* its LIDs after the others', as an SM gives a new node's */
	n->lid = lid;
	for (unsigned p = type == FS_SWITCH ? 0 : 1; p <= nports; p++) {
		f->ports[n->first_port + p].lid = lid;
		if (type != FS_SWITCH || p == 0)
			f->lid_port[lid++] = n->first_port + (type == FS_SWITCH ? 0 : p);
	}
	f->max_lid = (uint16_t)(lid - 1);
	f->switch_index = grow(f->switch_index, sizeof(uint32_t) * f->nnodes);
	f->switch_index[id] = UINT32_MAX;
	if (type == FS_SWITCH) {
		/* every switch's hop counts are to every switch: computed again */
		for (uint32_t s = 0; s < old_switches; s++) {
			free(f->dist[s]);
			f->dist[s] = NULL;
		}
		f->dist = grow(f->dist, sizeof(*f->dist) * (f->nswitches + 1u));
		f->dist[old_switches] = f->dist[f->nswitches] = NULL;
		f->switches = grow(f->switches, sizeof(uint32_t) * (f->nswitches + 1u));
		f->switches[old_switches] = id;
		f->switch_index[id] = old_switches;
	}
	if (f->vitals) {
		f->vitals = grow(f->vitals, sizeof(*f->vitals) * f->nnodes);
		f->vitals[id] = NULL;
	}
	fs_components(f);
	return id;
}

void fs_recable(struct fabric *f, uint32_t a, uint32_t b)
{
	double now = fs_now();

	/* what either port was cabled to is left without a cable */
	for (int i = 0; i < 2; i++) {
		uint32_t end = i ? b : a, old = f->ports[end].peer;

		if (old != FS_NO_PORT) {
			f->ports[old].peer = FS_NO_PORT;
			f->ports[old].up = 0;
		}
	}
	f->ports[a].peer = b;
	f->ports[b].peer = a;
	f->ports[a].up = f->ports[b].up = 1;
	f->ports[a].up_since = f->ports[b].up_since = now;
	fs_components(f);
}

void fs_set_link(struct fabric *f, uint32_t port_index, bool up)
{
	struct fs_port *p = &f->ports[port_index];
	double now = fs_now();
	uint32_t ends[2] = {port_index, p->peer};

	if (p->peer == FS_NO_PORT || p->up == up)
		return;
	for (int i = 0; i < 2; i++) {
		struct fs_port *e = &f->ports[ends[i]];

		if (up) {
			e->up_since = now;
		} else {
			e->up_seconds += now - e->up_since;
			fs_set_error(f, ends[i], FS_LINK_DOWNED,
				     fs_error_value(f, ends[i], FS_LINK_DOWNED) + 1);
		}
		e->up = up;
	}
	fs_components(f);
}

/* bits per second of a link: lane rate x lanes, the data rate after encoding */
uint64_t fs_link_bps(uint8_t speed, uint8_t width)
{
	static const uint64_t lane[FS_SPEEDS] = {2000000000ULL,  4000000000ULL,  8000000000ULL,
						 13640000000ULL, 25000000000ULL, 50000000000ULL,
						 100000000000ULL, 200000000000ULL};
	return lane[speed < FS_SPEEDS ? speed : FS_QDR] * fs_lanes(width);
}

unsigned fs_lanes(uint8_t width)
{
	return width == 1 ? 1 : width == 2 ? 4 : width == 4 ? 8 : width == 8 ? 12 :
	       width == 16 ? 2 : 4;
}

unsigned fs_fec_mode(const struct fs_port *p)
{
	return p->speed >= FS_HDR ? 2 : p->speed >= FS_FDR ? 1 : 0;
}

/* A port's share of its link's bandwidth: fixed per port, 5-50 %, so that
 * counters move at rates a test can predict. */
static double load_of(uint32_t port_index)
{
	uint32_t h = port_index * 2654435761u;

	return 0.05 + (h >> 8) % 4500 / 10000.0;
}

uint64_t fs_data_counter(const struct fabric *f, uint32_t port_index, enum fs_data which)
{
	const struct fs_port *p = &f->ports[port_index];
	double seconds = p->up_seconds + (p->up ? fs_now() - p->up_since : 0);
	double words = 0;

	if (p->peer != FS_NO_PORT)
		words = seconds * load_of(port_index ^ (which & 1)) *
			(double)fs_link_bps(p->speed, p->width) / 32.0;
	if (which == FS_XMIT_PKTS || which == FS_RCV_PKTS)
		words /= 1024; /* 4 KiB packets */
	return (uint64_t)words - p->data_offset[which];
}

void fs_set_data_counter(struct fabric *f, uint32_t port_index, enum fs_data which,
			 uint64_t value)
{
	struct fs_port *p = &f->ports[port_index];

	p->data_offset[which] = 0;
	p->data_offset[which] = fs_data_counter(f, port_index, which) - value;
}

struct fs_port_errors *fs_errors(struct fabric *f, uint32_t port_index, bool create)
{
	struct fs_port *p = &f->ports[port_index];

	if (p->errors)
		return &f->errors[p->errors - 1];
	if (!create)
		return NULL;
	if (f->nerrors == f->errors_cap) {
		f->errors_cap = f->errors_cap ? f->errors_cap * 2 : 64;
		f->errors = grow(f->errors, sizeof(*f->errors) * f->errors_cap);
	}
	memset(&f->errors[f->nerrors], 0, sizeof(*f->errors));
	p->errors = ++f->nerrors;
	return &f->errors[p->errors - 1];
}

/* Hops from switch s to every switch over links that are up (BFS), kept
 * until the links change. */
static uint8_t *distances(struct fabric *f, uint32_t s)
{
	uint32_t *queue;
	uint8_t *d;
	uint32_t head = 0, tail = 0;

	if (f->dist[s])
		return f->dist[s];
	d = grow(NULL, f->nswitches);
	memset(d, 0xff, f->nswitches);
	queue = grow(NULL, sizeof(uint32_t) * f->nswitches);
	d[s] = 0;
	queue[tail++] = s;
	while (head < tail) {
		uint32_t cur = queue[head++];
		struct fs_node *n = &f->nodes[f->switches[cur]];

		for (unsigned p = 1; p <= n->nports; p++) {
			struct fs_port *port = &f->ports[n->first_port + p];
			uint32_t nb;

			if (!port->up || port->peer == FS_NO_PORT)
				continue;
			nb = f->switch_index[fs_node_of_port(f, port->peer)];
			if (nb != UINT32_MAX && d[nb] == 0xff) {
				d[nb] = (uint8_t)(d[cur] + 1);
				queue[tail++] = nb;
			}
		}
	}
	free(queue);
	f->dist[s] = d;
	return d;
}

/* The port a switch forwards a LID to (its LinearForwardingTable): the
 * console's entry (Lft) if it set one, else the SM's (fs_sm_route_port). */
int fs_route_port(struct fabric *f, uint32_t node, uint16_t lid)
{
	for (uint32_t i = 0; i < f->n_lft_faults; i++)
		if (f->lft_faults[i].node == node &&
		    (f->lft_faults[i].lid == lid || f->lft_faults[i].lid == 0))
			return f->lft_faults[i].port;
	return fs_sm_route_port(f, node, lid);
}

/* The SM's route (its copy, the SA's LinearForwardingTableRecords): 0 for
 * the switch's own LID, a port toward the target on a shortest path
 * (several: chosen by the LID, so that LIDs spread over the up links as a
 * fat-tree routing does), 255 for an unreachable or unassigned LID. */
int fs_sm_route_port(struct fabric *f, uint32_t node, uint16_t lid)
{
	struct fs_node *n = &f->nodes[node];
	uint32_t target_port, target_node, target_sw, s = f->switch_index[node];
	uint8_t *d;
	int candidates[64], nc = 0;

	if (lid == 0 || lid > FS_MAX_LID || f->lid_port[lid] == UINT32_MAX || s == UINT32_MAX)
		return 255;
	target_port = f->lid_port[lid];
	target_node = fs_node_of_port(f, target_port);
	if (target_node == node)
		return 0;
	if (f->nodes[target_node].type == FS_CA) {
		/* a CA is reached through the switch its port is cabled to */
		struct fs_port *tp = &f->ports[target_port];

		if (!tp->up || tp->peer == FS_NO_PORT)
			return 255;
		target_node = fs_node_of_port(f, tp->peer);
		if (target_node == node)
			return f->ports[tp->peer].num;
	}
	target_sw = f->switch_index[target_node];
	if (target_sw == UINT32_MAX)
		return 255;
	d = distances(f, target_sw); /* hops are symmetric: the target's row */
	if (d[s] == 0xff)
		return 255;
	for (unsigned p = 1; p <= n->nports && nc < 64; p++) {
		struct fs_port *port = &f->ports[n->first_port + p];
		uint32_t nb;

		if (!port->up || port->peer == FS_NO_PORT)
			continue;
		nb = f->switch_index[fs_node_of_port(f, port->peer)];
		if (nb != UINT32_MAX && d[nb] + 1 == d[s])
			candidates[nc++] = (int)p;
	}
	return nc ? candidates[lid % nc] : 255;
}

int fs_set_lft(struct fabric *f, uint32_t node, uint16_t lid, int port)
{
	struct fs_lft_fault *v;
	uint32_t n = 0;

	/* what this replaces goes: the entry's fault, or all of the switch's */
	for (uint32_t i = 0; i < f->n_lft_faults; i++)
		if (f->lft_faults[i].node != node ||
		    (lid && port >= 0 && f->lft_faults[i].lid != lid))
			f->lft_faults[n++] = f->lft_faults[i];
	f->n_lft_faults = n;
	if (port < 0)
		return 0;
	v = realloc(f->lft_faults, (n + 1) * sizeof(*v));
	if (!v)
		return -1;
	f->lft_faults = v;
	/* the first that matches answers: entries first, cleared tables
	 * last (an entry set after a clear counts) */
	if (lid) {
		memmove(v + 1, v, n * sizeof(*v));
		v[0] = (struct fs_lft_fault){node, lid, (uint8_t)port};
	} else {
		v[n] = (struct fs_lft_fault){node, 0, (uint8_t)port};
	}
	f->n_lft_faults++;
	return 0;
}

static const char *const speed_names[FS_SPEEDS] = {"SDR", "DDR", "QDR", "FDR",
						   "EDR", "HDR", "NDR", "XDR"};

int fs_speed_by_name(const char *name)
{
	for (int i = 0; i < FS_SPEEDS; i++)
		if (!strcasecmp(name, speed_names[i]))
			return i;
	return -1;
}

int fs_width_by_name(const char *name)
{
	static const struct {
		const char *name;
		int code;
	} w[] = {{"1X", 1}, {"4X", 2}, {"8X", 4}, {"12X", 8}, {"2X", 16}};

	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		if (!strcasecmp(name, w[i].name))
			return w[i].code;
	return -1;
}

/* The generated fabric, for tests to compare with what tools discover:
 * "node TYPE GUID NPORTS LID NAME", "desc GUID NODEDESCRIPTION" where it is not
 * the name, and "link GUID PORT GUID PORT WIDTH SPEED" (each cable once). */
void fs_write_links(const struct fabric *f, FILE *out)
{
	for (uint32_t i = 0; i < f->nnodes; i++) {
		const struct fs_node *n = &f->nodes[i];

		fprintf(out, "node %s 0x%016llx %u %u %s\n", n->type == FS_SWITCH ? "switch" : "ca",
			(unsigned long long)n->guid, n->nports, n->lid, n->name);
		if (n->desc)
			fprintf(out, "desc 0x%016llx %s\n", (unsigned long long)n->guid, n->desc);
	}
	for (uint32_t i = 0; i < f->nnodes; i++) {
		const struct fs_node *n = &f->nodes[i];

		for (unsigned p = 1; p <= n->nports; p++) {
			const struct fs_port *port = &f->ports[n->first_port + p];
			uint32_t peer_node;

			if (port->peer == FS_NO_PORT || port->peer < n->first_port + p)
				continue;
			peer_node = fs_node_of_port(f, port->peer);
			fprintf(out, "link 0x%016llx %u 0x%016llx %u %u %s\n",
				(unsigned long long)n->guid, p,
				(unsigned long long)f->nodes[peer_node].guid,
				f->ports[port->peer].num, port->width, speed_names[port->speed]);
		}
	}
}

uint64_t fs_error_value(struct fabric *f, uint32_t port_index, enum fs_error which)
{
	struct fs_port_errors *e = fs_errors(f, port_index, false);
	double moved;

	if (!e)
		return 0;
	moved = e->rate[which] > 0 ? e->rate[which] * (fs_now() - e->since[which]) : 0;
	return e->v[which] + (uint64_t)moved;
}

void fs_set_error(struct fabric *f, uint32_t port_index, enum fs_error which, uint64_t value)
{
	struct fs_port_errors *e = fs_errors(f, port_index, true);

	e->v[which] = value;
	e->since[which] = fs_now();
}

/* the counter goes on from its value now, at the new pace */
void fs_set_error_rate(struct fabric *f, uint32_t port_index, enum fs_error which,
		       double per_second)
{
	fs_set_error(f, port_index, which, fs_error_value(f, port_index, which));
	fs_errors(f, port_index, true)->rate[which] = per_second;
}
