/* Parses what ibsnmpd-discover prints into a struct topology. Pure; any
 * malformed or truncated output is refused as a whole, with the line. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/node_names.h"
#include "ibsnmpd/topology.h"

/* A discovery is shared by the topology's cache group and by every snapshot
 * built from it; the last one to let go frees it. All on the main thread. */
/* Holders keep const pointers; the count is the only thing that changes. */
const struct topology *topology_get(const struct topology *f)
{
	if (f)
		((struct topology *)f)->refs++;
	return f;
}

void topology_put(const struct topology *f)
{
	if (f && --((struct topology *)f)->refs == 0)
		topology_free((struct topology *)f);
}

void topology_free(struct topology *f)
{
	if (!f)
		return;
	free(f->nodes);
	free(f->ports);
	free(f->portinfo);
	free(f->changed);
	free(f->name_pool);
	free(f);
}

int topology_name_nodes(struct topology *f, const struct node_name_map *m)
{
	struct node_naming *items = calloc(f->n_nodes ? f->n_nodes : 1, sizeof(*items));
	char *pool;

	if (!items)
		return -1;
	for (size_t k = 0; k < f->n_nodes; k++)
		items[k] = (struct node_naming){f->nodes[k].guid, f->nodes[k].desc, NULL};
	if (!(pool = node_names_assign(items, f->n_nodes, m))) {
		free(items);
		return -1;
	}
	for (size_t k = 0; k < f->n_nodes; k++)
		f->nodes[k].name = items[k].name;
	free(items);
	free(f->name_pool);
	f->name_pool = pool;
	return 0;
}

struct topology *topology_renamed(const struct topology *f, const struct node_name_map *m)
{
	struct topology *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->n_nodes = f->n_nodes;
	c->n_ports = f->n_ports;
	c->seconds = f->seconds;
	c->from_sa = f->from_sa;
	c->nodes = malloc((f->n_nodes ? f->n_nodes : 1) * sizeof(*c->nodes));
	c->ports = malloc((f->n_ports ? f->n_ports : 1) * sizeof(*c->ports));
	if (!c->nodes || !c->ports)
		goto fail;
	memcpy(c->nodes, f->nodes, f->n_nodes * sizeof(*c->nodes));
	memcpy(c->ports, f->ports, f->n_ports * sizeof(*c->ports));
	if (f->portinfo) {
		if (!(c->portinfo = malloc((f->n_ports ? f->n_ports : 1) * sizeof(*c->portinfo))))
			goto fail;
		memcpy(c->portinfo, f->portinfo, f->n_ports * sizeof(*c->portinfo));
	}
	if (topology_name_nodes(c, m))
		goto fail;
	return c;
fail:
	topology_free(c);
	return NULL;
}

static int node_cmp(const void *a, const void *b)
{
	const struct topo_node *x = a, *y = b;

	return x->guid < y->guid ? -1 : x->guid > y->guid;
}

struct port_line {
	uint64_t guid;
	unsigned port, lid;
	uint64_t port_guid, peer_guid;
	unsigned peer_port, speed;
	bool has_portinfo;
	uint8_t portinfo[64];
};

static int port_line_cmp(const void *a, const void *b)
{
	const struct port_line *x = a, *y = b;

	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return x->port < y->port ? -1 : x->port > y->port;
}

static void *grow(void *p, size_t *cap, size_t n, size_t sz)
{
	if (n < *cap)
		return p;
	*cap = *cap ? *cap * 2 : 64;
	return realloc(p, *cap * sz);
}

/* What the lines said so far. */
struct parse {
	struct topology *f;
	size_t cap_nodes;
	struct port_line *pl;
	size_t n_pl, cap_pl;
	bool done, from_sa, any_portinfo;
};

/* "node GUID TYPE NUMPORTS LID DESCRIPTION..." */
static int node_line(struct parse *ps, const char *line)
{
	unsigned long long guid;
	int type, numports, used = 0;
	unsigned lid;
	struct topo_node *nd;
	void *q;

	if (sscanf(line, "node %llx %d %d %u %n", &guid, &type, &numports, &lid, &used) != 4 ||
	    used <= 0 || type < 1 || type > 3 || numports < 0 || numports > 254 || lid > 0xffff)
		return 1;
	if (!(q = grow(ps->f->nodes, &ps->cap_nodes, ps->f->n_nodes, sizeof(*ps->f->nodes))))
		return -1;
	ps->f->nodes = q;
	nd = &ps->f->nodes[ps->f->n_nodes++];
	memset(nd, 0, sizeof(*nd));
	nd->guid = guid;
	nd->type = (unsigned)type;
	nd->num_ports = (unsigned)numports;
	nd->lid = lid;
	snprintf(nd->desc, sizeof(nd->desc), "%.64s", line + used);
	return 0;
}

/* "port GUID PORTNUM LID [PORTGUID [PEERGUID PEERPORT [SPEED]]]" */
static int port_line(struct parse *ps, const char *line)
{
	unsigned long long guid, port_guid = 0, peer_guid = 0;
	int port, peer_port = 0, speed = 0;
	int end[8] = {0}; /* where the line ends after N fields */
	unsigned lid;
	struct port_line *p;
	void *q;
	/* the fields left out are those not converted (left 0) */
	int n = sscanf(line, "port %llx %d %u%n %llx%n %llx %d%n %d%n", &guid, &port, &lid,
		       &end[3], &port_guid, &end[4], &peer_guid, &peer_port, &end[6], &speed,
		       &end[7]);

	if (n < 3 || n == 5 || speed < 0 || speed > 9)
		return 1;
	if (line[end[n]] != '\0' || port < 1 || port > 254 || lid < 1 || lid > 0xffff)
		return 1;
	if (!(q = grow(ps->pl, &ps->cap_pl, ps->n_pl, sizeof(*ps->pl))))
		return -1;
	ps->pl = q;
	p = &ps->pl[ps->n_pl++];
	p->guid = guid;
	p->port = (unsigned)port;
	p->lid = lid;
	p->port_guid = port_guid;
	p->peer_guid = peer_guid;
	p->peer_port = peer_port >= 0 && peer_port <= 254 ? (unsigned)peer_port : 0;
	p->speed = (unsigned)speed;
	p->has_portinfo = false;
	return 0;
}

/* "route GUID HOPS PORT..." right after its node's line */
static int route_line(struct parse *ps, const char *line)
{
	unsigned long long guid;
	int hops, used = 0;
	struct topo_node *nd;

	if (sscanf(line, "route %llx %d%n", &guid, &hops, &used) != 2 || hops < 0 || hops > TOPO_MAX_HOPS)
		return 1;
	if (!ps->f->n_nodes || ps->f->nodes[ps->f->n_nodes - 1].guid != guid)
		return 1;
	nd = &ps->f->nodes[ps->f->n_nodes - 1];
	if (nd->has_route)
		return 1;
	line += used;
	for (int i = 0; i < hops; i++) {
		int port, n = 0;

		if (sscanf(line, " %d%n", &port, &n) != 1 || port < 1 || port > 254)
			return 1;
		nd->route[i] = (uint8_t)port;
		line += n;
	}
	if (*line)
		return 1;
	nd->route_hops = (unsigned)hops;
	nd->has_route = true;
	return 0;
}

/* "ident GUID VENDORID DEVICEID REVISION" right after its node's line
 * (NodeInfo's identity: the nodes' contexts name it in sysDescr) */
static int ident_line(struct parse *ps, const char *line)
{
	unsigned long long guid;
	unsigned vendor, device, revision;
	int used = 0;
	struct topo_node *nd;

	if (sscanf(line, "ident %llx %x %x %x%n", &guid, &vendor, &device, &revision, &used) != 4 ||
	    line[used] != '\0' || vendor > 0xffffff || device > 0xffff)
		return 1;
	if (!ps->f->n_nodes || ps->f->nodes[ps->f->n_nodes - 1].guid != guid)
		return 1;
	nd = &ps->f->nodes[ps->f->n_nodes - 1];
	if (nd->has_ident)
		return 1;
	nd->vendor_id = vendor;
	nd->device_id = device;
	nd->revision = revision;
	nd->has_ident = true;
	return 0;
}

static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* "pinfo GUID PORT HEX" right after its port's line: the port's PortInfo
 * (128 hex digits) as the SA gave it */
static int pinfo_line(struct parse *ps, const char *line)
{
	unsigned long long guid;
	int port, used = 0;
	struct port_line *p;

	if (sscanf(line, "pinfo %llx %d %n", &guid, &port, &used) != 2 || used <= 0)
		return 1;
	if (!ps->n_pl)
		return 1;
	p = &ps->pl[ps->n_pl - 1];
	if (p->guid != guid || p->port != (unsigned)port || p->has_portinfo)
		return 1;
	line += used;
	for (size_t i = 0; i < sizeof(p->portinfo); i++) {
		int hi = hex_digit(line[2 * i]), lo = hi < 0 ? -1 : hex_digit(line[2 * i + 1]);

		if (lo < 0)
			return 1;
		p->portinfo[i] = (uint8_t)(hi << 4 | lo);
	}
	if (line[2 * sizeof(p->portinfo)])
		return 1;
	p->has_portinfo = true;
	ps->any_portinfo = true;
	return 0;
}

/* One line: 0 taken, 1 not understood, -1 out of memory. */
static int one_line(struct parse *ps, const char *line)
{
	double secs;
	int r;

	if ((r = node_line(ps, line)) <= 0 || (r = port_line(ps, line)) <= 0 ||
	    (r = route_line(ps, line)) <= 0 || (r = ident_line(ps, line)) <= 0 ||
	    (r = pinfo_line(ps, line)) <= 0)
		return r;
	if (!strcmp(line, "source sa") && !ps->n_pl && !ps->f->n_nodes) {
		ps->from_sa = true;
		return 0;
	}
	if (sscanf(line, "done %lf", &secs) == 1) {
		ps->f->seconds = secs;
		ps->done = true;
		return 0;
	}
	return 1;
}

/* The lines, sorted and checked, become the fabric's nodes and ports. */
static int assemble(struct parse *ps, char *err, size_t errlen)
{
	struct topology *f = ps->f;

	if (f->n_nodes > 1)
		qsort(f->nodes, f->n_nodes, sizeof(*f->nodes), node_cmp);
	for (size_t i = 1; i < f->n_nodes; i++) {
		if (f->nodes[i].guid == f->nodes[i - 1].guid) {
			snprintf(err, errlen, "node %016llx listed twice",
				 (unsigned long long)f->nodes[i].guid);
			return -1;
		}
	}
	if (ps->n_pl > 1)
		qsort(ps->pl, ps->n_pl, sizeof(*ps->pl), port_line_cmp);
	f->from_sa = ps->from_sa;
	f->ports = calloc(ps->n_pl ? ps->n_pl : 1, sizeof(*f->ports));
	if (ps->any_portinfo && f->ports &&
	    !(f->portinfo = calloc(ps->n_pl ? ps->n_pl : 1, sizeof(*f->portinfo)))) {
		free(f->ports);
		f->ports = NULL;
	}
	if (!f->ports) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < ps->n_pl; i++) {
		const struct port_line *p = &ps->pl[i];
		const struct topo_node *nd = topology_node(f, p->guid);
		struct topo_port *ref = &f->ports[f->n_ports];

		if (!nd) {
			snprintf(err, errlen, "port %u of unknown node %016llx", p->port,
				 (unsigned long long)p->guid);
			return -1;
		}
		if (i && !port_line_cmp(p, p - 1)) {
			snprintf(err, errlen, "port %u of node %016llx listed twice", p->port,
				 (unsigned long long)p->guid);
			return -1;
		}
		ref->node = (size_t)(nd - f->nodes);
		ref->port = p->port;
		ref->lid = p->lid;
		ref->port_guid = p->port_guid;
		ref->peer_guid = p->peer_guid;
		ref->peer_port = p->peer_port;
		ref->speed = (uint8_t)p->speed;
		if (p->has_portinfo)
			memcpy(f->portinfo[f->n_ports], p->portinfo, sizeof(p->portinfo));
		f->n_ports++;
	}
	return 0;
}

struct topology *topology_parse(const char *text, size_t len, const struct node_name_map *names,
				char *err, size_t errlen)
{
	struct parse ps = {.f = calloc(1, sizeof(struct topology))};
	const char *p = text, *end = text + len;
	size_t lineno = 0;
	int r = 0;

	if (!ps.f) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	while (p < end && !ps.done) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		char line[256];
		size_t n;

		lineno++;
		if (!nl) {
			snprintf(err, errlen, "line %zu: output ends in the middle of a line", lineno);
			goto bad;
		}
		n = (size_t)(nl - p);
		if (n >= sizeof(line)) {
			snprintf(err, errlen, "line %zu: too long", lineno);
			goto bad;
		}
		memcpy(line, p, n);
		line[n] = '\0';
		p = nl + 1;
		if ((r = one_line(&ps, line)) < 0) {
			snprintf(err, errlen, "out of memory");
			goto bad;
		}
		if (r > 0) {
			snprintf(err, errlen, "line %zu: not understood: %.60s", lineno, line);
			goto bad;
		}
	}
	if (!ps.done) {
		snprintf(err, errlen, "output ends without its 'done' line");
		goto bad;
	}
	if (assemble(&ps, err, errlen))
		goto bad;
	if (topology_name_nodes(ps.f, names)) {
		snprintf(err, errlen, "out of memory");
		goto bad;
	}
	free(ps.pl);
	if (ps.f->n_nodes && ps.f->n_nodes < ps.cap_nodes) {
		/* it is kept till the next discovery: not twice its size */
		void *fit = realloc(ps.f->nodes, ps.f->n_nodes * sizeof(*ps.f->nodes));

		if (fit)
			ps.f->nodes = fit;
	}
	return ps.f;
bad:
	free(ps.pl);
	topology_free(ps.f);
	return NULL;
}

const struct topo_node *topology_node(const struct topology *f, uint64_t guid)
{
	for (size_t lo = 0, hi = f ? f->n_nodes : 0; lo < hi;) {
		size_t mid = (lo + hi) / 2;

		if (f->nodes[mid].guid == guid)
			return &f->nodes[mid];
		if (f->nodes[mid].guid < guid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct topo_port *topology_port(const struct topology *f, size_t node, unsigned port)
{
	size_t lo = 0, hi = f && node < f->n_nodes ? f->n_ports : 0;
	uint64_t guid = hi ? f->nodes[node].guid : 0;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		const struct topo_port *r = &f->ports[mid];
		uint64_t g = f->nodes[r->node].guid;

		if (g < guid || (g == guid && r->port < port))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (f && lo < f->n_ports && f->ports[lo].node == node && f->ports[lo].port == port)
		return &f->ports[lo];
	return NULL;
}
