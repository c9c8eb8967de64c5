/* The expected cabling (expectedTopology FILE), pure: a topology in
 * ibnetdiscover's format, an operator's reference dump or plan, as the
 * nodes and the port-to-port links it names. Read: node lines
 *   Switch 36 "S-0002c90200400000"   # "leaf1" base port 0 lid 2 lmc 0
 *   Ca 1 "H-0002c90200100000"        # "host1"
 *   Rt 2 "R-..."
 * and their port lines
 *   [1]  "H-0002c90200100000"[1](2c90200100001)   # "host1" lid 4 4xNDR
 *   [1](2c90200100001)  "S-0002c90200400000"[25]   # lid 4 lmc 0 "leaf1" ...
 * (the node's description: the comment's first quoted string); the
 * vendid=, devid=, sysimgguid=, switchguid=, caguid=, rtguid= lines and
 * comments are skipped. Anything else is refused with its line. Written here:
 * infiniband-diags reads this format (ibnetdiscover --load-cache reads its
 * own cache, not it) but exposes no parser of it. */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/route.h"

#define PLAN_MAX_LINE 1024

void route_plan_free(struct route_plan *p)
{
	if (!p)
		return;
	free(p->nodes);
	free(p->ports);
	free(p);
}

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	void *w;

	if (n < *cap)
		return 0;
	*cap = *cap ? 2 * *cap : 64;
	if (!(w = realloc(*v, *cap * size)))
		return -1;
	*v = w;
	return 0;
}

static const char *skip_space(const char *s)
{
	while (*s == ' ' || *s == '\t')
		s++;
	return s;
}

/* "X-<16 hex>" in quotes: its type (1 CA, 2 switch, 3 router) and GUID */
static const char *quoted_guid(const char *s, unsigned *type, uint64_t *guid)
{
	char *end;

	if (s[0] != '"' || !strchr("SHR", s[1]) || s[2] != '-' || !isxdigit((unsigned char)s[3]))
		return NULL;
	*type = s[1] == 'S' ? 2 : s[1] == 'H' ? 1 : 3;
	*guid = strtoull(s + 3, &end, 16);
	if (end - (s + 3) != 16 || *end != '"')
		return NULL;
	return end + 1;
}

/* "(hex)": a port GUID, skipped */
static const char *port_guid(const char *s)
{
	const char *t = s + 1;

	if (*s != '(')
		return s;
	while (isxdigit((unsigned char)*t))
		t++;
	return *t == ')' && t > s + 1 ? t + 1 : NULL;
}

/* the comment's first quoted string, into desc */
static void comment_desc(const char *s, char *desc, size_t len)
{
	const char *q = strchr(s, '"'), *e;

	desc[0] = 0;
	if (!q || !(e = strchr(q + 1, '"')))
		return;
	snprintf(desc, len, "%.*s", (int)(e - q - 1 < (long)len - 1 ? e - q - 1 : (long)len - 1),
		 q + 1);
}

static bool ends_here(const char *s)
{
	s = skip_space(s);
	return !*s || *s == '#';
}

int route_plan_port_cmp(const void *x, const void *y)
{
	const struct route_plan_port *a = x, *b = y;

	if (a->guid != b->guid)
		return (a->guid > b->guid) - (a->guid < b->guid);
	return (a->port > b->port) - (a->port < b->port);
}

int route_plan_node_cmp(const void *x, const void *y)
{
	const struct route_plan_node *a = x, *b = y;

	return (a->guid > b->guid) - (a->guid < b->guid);
}

struct route_plan *route_plan_parse(const char *text, size_t len, char *err, size_t errlen)
{
	struct route_plan *p = calloc(1, sizeof(*p));
	size_t cap_nodes = 0, cap_ports = 0, line_no = 0;
	const char *at = text, *end = text + len;
	struct route_plan_node *node = NULL; /* the node whose port lines follow */
	char line[PLAN_MAX_LINE];

	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	while (at < end) {
		const char *nl = memchr(at, '\n', (size_t)(end - at));
		size_t n = (size_t)((nl ? nl : end) - at);
		const char *s;

		line_no++;
		if (n >= sizeof(line) || memchr(at, 0, n)) {
			snprintf(err, errlen, "line %zu: %s", line_no,
				 n >= sizeof(line) ? "too long" : "a NUL in it");
			goto fail;
		}
		memcpy(line, at, n);
		line[n] = 0;
		at = nl ? nl + 1 : end;
		if (n && line[n - 1] == '\r')
			line[n - 1] = 0;
		s = skip_space(line);
		if (!*s || *s == '#')
			continue;
		if (!strncmp(s, "vendid=", 7) || !strncmp(s, "devid=", 6) ||
		    !strncmp(s, "sysimgguid=", 11) || !strncmp(s, "switchguid=", 11) ||
		    !strncmp(s, "caguid=", 7) || !strncmp(s, "rtguid=", 7))
			continue;
		if (!strncmp(s, "Switch", 6) || !strncmp(s, "Ca", 2) || !strncmp(s, "Rt", 2)) {
			unsigned want = s[0] == 'S' ? 2 : s[0] == 'C' ? 1 : 3, type, ports;
			const char *t = s + (s[0] == 'S' ? 6 : 2);
			uint64_t guid;
			char *e;

			if (*t != ' ' && *t != '\t')
				goto bad;
			t = skip_space(t);
			ports = (unsigned)strtoul(t, &e, 10);
			if (e == t || ports < 1 || ports > 254)
				goto bad;
			if (!(t = quoted_guid(skip_space(e), &type, &guid)) || type != want ||
			    !ends_here(t))
				goto bad;
			if (grow((void **)&p->nodes, &cap_nodes, p->n_nodes, sizeof(*p->nodes))) {
				snprintf(err, errlen, "out of memory");
				goto fail;
			}
			node = &p->nodes[p->n_nodes++];
			memset(node, 0, sizeof(*node));
			node->guid = guid;
			node->type = (uint8_t)type;
			node->ports = ports;
			comment_desc(t, node->desc, sizeof(node->desc));
			continue;
		}
		if (*s == '[') {
			struct route_plan_port *x;
			unsigned port, peer_port, type;
			uint64_t peer;
			char *e;
			const char *t;

			if (!node) {
				snprintf(err, errlen, "line %zu: a port before any node", line_no);
				goto fail;
			}
			port = (unsigned)strtoul(s + 1, &e, 10);
			if (e == s + 1 || *e != ']' || port < 1 || port > node->ports)
				goto bad;
			if (!(t = port_guid(e + 1)) ||
			    !(t = quoted_guid(skip_space(t), &type, &peer)) || *t != '[')
				goto bad;
			peer_port = (unsigned)strtoul(t + 1, &e, 10);
			if (e == t + 1 || *e != ']' || peer_port < 1 || peer_port > 254 ||
			    !(t = port_guid(e + 1)) || !ends_here(t))
				goto bad;
			if (grow((void **)&p->ports, &cap_ports, p->n_ports, sizeof(*p->ports))) {
				snprintf(err, errlen, "out of memory");
				goto fail;
			}
			x = &p->ports[p->n_ports++];
			*x = (struct route_plan_port){node->guid, port, peer, peer_port};
			continue;
		}
	bad:
		snprintf(err, errlen, "line %zu: not a line of ibnetdiscover's output", line_no);
		goto fail;
	}
	if (!p->n_nodes) { /* every node of the subnet would be unplanned */
		snprintf(err, errlen, "no node in it");
		goto fail;
	}
	qsort(p->nodes, p->n_nodes, sizeof(*p->nodes), route_plan_node_cmp);
	if (p->n_ports)
		qsort(p->ports, p->n_ports, sizeof(*p->ports), route_plan_port_cmp);
	for (size_t i = 1; i < p->n_nodes; i++)
		if (p->nodes[i].guid == p->nodes[i - 1].guid) {
			snprintf(err, errlen, "node 0x%016" PRIx64 " twice", p->nodes[i].guid);
			goto fail;
		}
	for (size_t i = 1; i < p->n_ports; i++)
		if (!route_plan_port_cmp(&p->ports[i], &p->ports[i - 1])) {
			snprintf(err, errlen, "port %u of 0x%016" PRIx64 " twice", p->ports[i].port,
				 p->ports[i].guid);
			goto fail;
		}
	return p;
fail:
	route_plan_free(p);
	return NULL;
}
