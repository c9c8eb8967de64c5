/* Parses what ibsnmpd-discover prints into a struct pm_fabric. Pure; any
 * malformed or truncated output is refused as a whole, with the line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/pm_attr.h"

/* A fabric is shared by pm_subnet (the latest discovery) and by every
 * snapshot built from it; the last one to let go frees it. All on the main
 * thread. */
struct pm_fabric *pm_fabric_get(struct pm_fabric *f)
{
	if (f)
		f->refs++;
	return f;
}

void pm_fabric_put(struct pm_fabric *f)
{
	if (f && --f->refs == 0)
		pm_fabric_free(f);
}

void pm_fabric_free(struct pm_fabric *f)
{
	if (!f)
		return;
	free(f->nodes);
	free(f->ports);
	free(f);
}

static int node_cmp(const void *a, const void *b)
{
	const struct pm_node *x = a, *y = b;

	return x->guid < y->guid ? -1 : x->guid > y->guid;
}

struct port_line {
	uint64_t guid;
	unsigned port, lid;
	uint64_t port_guid, peer_guid;
	unsigned peer_port;
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

struct pm_fabric *pm_fabric_parse(const char *text, size_t len, char *err, size_t errlen)
{
	struct pm_fabric *f = calloc(1, sizeof(*f));
	struct port_line *pl = NULL;
	size_t n_pl = 0, cap_pl = 0, cap_nodes = 0, lineno = 0;
	const char *p = text, *end = text + len;
	int done = 0;

	if (!f)
		goto oom;
	while (p < end && !done) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		char line[256];
		size_t n;
		unsigned long long guid, port_guid = 0, peer_guid = 0;
		int type, numports, port, peer_port = 0, used = 0;
		unsigned lid;
		double secs;

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
		if (sscanf(line, "node %llx %d %d %u %n", &guid, &type, &numports, &lid, &used) == 4 &&
		    used > 0 && type >= 1 && type <= 3 && numports >= 0 && numports <= 254 &&
		    lid <= 0xffff) {
			void *q = grow(f->nodes, &cap_nodes, f->n_nodes, sizeof(*f->nodes));
			struct pm_node *nd;

			if (!q)
				goto oom;
			f->nodes = q;
			nd = &f->nodes[f->n_nodes++];
			memset(nd, 0, sizeof(*nd));
			nd->guid = guid;
			nd->type = (unsigned)type;
			nd->num_ports = (unsigned)numports;
			nd->lid = lid;
			snprintf(nd->desc, sizeof(nd->desc), "%.64s", line + used);
		} else if ((sscanf(line, "port %llx %d %u %llx %llx %d%n", &guid, &port, &lid,
				   &port_guid, &peer_guid, &peer_port, &used) == 6 ||
			    (peer_guid = 0, peer_port = 0,
			     sscanf(line, "port %llx %d %u %llx%n", &guid, &port, &lid, &port_guid,
				    &used) == 4) ||
			    (port_guid = 0, sscanf(line, "port %llx %d %u%n", &guid, &port, &lid,
						   &used) == 3)) &&
			   line[used] == '\0' && port >= 1 && port <= 254 && lid >= 1 && lid <= 0xffff) {
			void *q = grow(pl, &cap_pl, n_pl, sizeof(*pl));

			if (!q)
				goto oom;
			pl = q;
			pl[n_pl].guid = guid;
			pl[n_pl].port = (unsigned)port;
			pl[n_pl].lid = lid;
			pl[n_pl].port_guid = port_guid;
			pl[n_pl].peer_guid = peer_guid;
			pl[n_pl].peer_port = peer_port >= 0 && peer_port <= 254 ? (unsigned)peer_port : 0;
			n_pl++;
		} else if (sscanf(line, "done %lf", &secs) == 1) {
			f->seconds = secs;
			done = 1;
		} else {
			snprintf(err, errlen, "line %zu: not understood: %.60s", lineno, line);
			goto bad;
		}
	}
	if (!done) {
		snprintf(err, errlen, "output ends without its 'done' line");
		goto bad;
	}
	if (f->n_nodes > 1)
		qsort(f->nodes, f->n_nodes, sizeof(*f->nodes), node_cmp);
	for (size_t i = 1; i < f->n_nodes; i++) {
		if (f->nodes[i].guid == f->nodes[i - 1].guid) {
			snprintf(err, errlen, "node %016llx listed twice",
				 (unsigned long long)f->nodes[i].guid);
			goto bad;
		}
	}
	if (n_pl > 1)
		qsort(pl, n_pl, sizeof(*pl), port_line_cmp);
	f->ports = calloc(n_pl ? n_pl : 1, sizeof(*f->ports));
	if (!f->ports)
		goto oom;
	for (size_t i = 0; i < n_pl; i++) {
		struct pm_node key = {.guid = pl[i].guid};
		struct pm_node *nd = f->n_nodes ? bsearch(&key, f->nodes, f->n_nodes, sizeof(key),
							  node_cmp) : NULL;

		if (!nd) {
			snprintf(err, errlen, "port %u of unknown node %016llx", pl[i].port,
				 (unsigned long long)pl[i].guid);
			goto bad;
		}
		if (i && !port_line_cmp(&pl[i], &pl[i - 1])) {
			snprintf(err, errlen, "port %u of node %016llx listed twice", pl[i].port,
				 (unsigned long long)pl[i].guid);
			goto bad;
		}
		f->ports[f->n_ports].node = (size_t)(nd - f->nodes);
		f->ports[f->n_ports].port = pl[i].port;
		f->ports[f->n_ports].lid = pl[i].lid;
		f->ports[f->n_ports].port_guid = pl[i].port_guid;
		f->ports[f->n_ports].peer_guid = pl[i].peer_guid;
		f->ports[f->n_ports].peer_port = pl[i].peer_port;
		f->n_ports++;
	}
	free(pl);
	return f;
oom:
	snprintf(err, errlen, "out of memory");
bad:
	free(pl);
	pm_fabric_free(f);
	return NULL;
}

const struct pm_node *pm_fabric_node(const struct pm_fabric *f, uint64_t guid)
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
