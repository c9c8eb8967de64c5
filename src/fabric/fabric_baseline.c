/* The baseline's state file, both ways. Pure (no I/O); a file that is not
 * whole and well-formed is refused as a whole, with its line.
 *
 *   ibsnmpd-fabric-baseline 1
 *   node GUID TYPE DESCRIPTION...
 *   link GUID PORT LANES SPEED NOTIFIED REMOTEGUID REMOTEPORT
 *
 * LANES and SPEED: the best the link ran at (SPEED as
 * IbsnmpdLinkSpeed, 0 unknown); NOTIFIED: up, down or degraded, what the
 * last notification said; every link's node (and remote node, if known)
 * has a node line. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/fabric.h"
#include "ibsnmpd/node_names.h"

#define HEADER "ibsnmpd-fabric-baseline 1"

static const char *const cond_names[] = {
	[LINK_NONE] = "none", [LINK_DOWN] = "down", [LINK_UP] = "up", [LINK_DEGRADED] = "degraded",
};

struct text {
	char *p;
	size_t len, cap;
	bool failed;
};

static void add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->failed)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->p ? t->p + t->len : NULL, t->p ? t->cap - t->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->failed = true;
			return;
		}
		if (t->p && (size_t)n < t->cap - t->len) {
			t->len += (size_t)n;
			return;
		}
		size_t cap = t->cap ? t->cap * 2 : 4096;
		while (cap < t->len + (size_t)n + 1)
			cap *= 2;
		char *q = realloc(t->p, cap);

		if (!q) {
			t->failed = true;
			return;
		}
		t->p = q;
		t->cap = cap;
	}
}

/* Some port of node guid is in the baseline (rows are sorted by GUID). */
static bool node_in_baseline(const struct fabric_snapshot *s, uint64_t guid)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->ports[mid].guid < guid)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < s->n && s->ports[lo].guid == guid; lo++)
		if (s->ports[lo].base_linked)
			return true;
	return false;
}

char *fabric_baseline_format(const struct fabric_snapshot *s, size_t *len)
{
	struct text t = {0};
	uint64_t last = 0;
	bool any = false;

	add(&t, "# The links ibsnmpd has seen up in the subnet (its baseline) and what it\n"
		"# last notified of each. Written whole by ibsnmpd; reset it with\n"
		"# IBSNMPD-MIB::ibsnmpdFabricBaselineReset or fabricBaselineReset.\n" HEADER "\n");
	/* node lines: the ports' own nodes (rows are sorted by GUID), then the
	 * remote nodes that have no rows of their own here */
	for (size_t i = 0; i < s->n; i++) {
		const struct fabric_port *p = &s->ports[i];

		if (!p->base_linked || (any && p->guid == last))
			continue;
		add(&t, "node %016llx %u %s\n", (unsigned long long)p->guid, p->node_type,
		    p->node_desc);
		last = p->guid;
		any = true;
	}
	for (size_t i = 0; i < s->n; i++) {
		const struct fabric_port *p = &s->ports[i];
		bool earlier = false;

		if (!p->base_linked || !p->remote_guid || node_in_baseline(s, p->remote_guid))
			continue;
		for (size_t k = 0; k < i && !earlier; k++) /* once per remote node */
			earlier = s->ports[k].base_linked && s->ports[k].remote_guid == p->remote_guid;
		if (!earlier)
			add(&t, "node %016llx 0 %s\n", (unsigned long long)p->remote_guid,
			    p->remote_desc);
	}
	for (size_t i = 0; i < s->n; i++) {
		const struct fabric_port *p = &s->ports[i];

		if (!p->base_linked)
			continue;
		add(&t, "link %016llx %u %u %d %s %016llx %u\n", (unsigned long long)p->guid,
		    p->port, p->base_lanes, p->base_speed,
		    cond_names[p->reported <= LINK_DEGRADED ? p->reported : LINK_NONE],
		    (unsigned long long)p->remote_guid, p->remote_port);
	}
	if (t.failed) {
		free(t.p);
		return NULL;
	}
	*len = t.len;
	return t.p;
}

/* ---- parsing ---- */

struct node_entry {
	uint64_t guid;
	unsigned type;
	char desc[NODE_NAME_MAX]; /* its name when the file was written */
	const char *kept; /* desc in the snapshot's names, once made */
};

struct parse {
	struct node_entry *nodes;
	size_t n_nodes, cap_nodes;
	struct fabric_port *links;
	size_t n_links, cap_links;
	bool header;
};

static int entry_cmp(const void *a, const void *b)
{
	const struct node_entry *x = a, *y = b;

	return x->guid < y->guid ? -1 : x->guid > y->guid;
}

static struct node_entry *node_entry_find(const struct parse *ps, uint64_t guid)
{
	struct node_entry key = {.guid = guid};

	return ps->n_nodes ? bsearch(&key, ps->nodes, ps->n_nodes, sizeof(key), entry_cmp) : NULL;
}

/* A node's description as s keeps it, once per node; NULL: out of memory. */
static const char *kept_desc(struct fabric_snapshot *s, struct node_entry *e)
{
	if (!e)
		return "";
	if (!e->kept)
		e->kept = fabric_name_keep(&s->names, e->desc);
	return e->kept;
}

static void *grow(void *p, size_t *cap, size_t n, size_t size)
{
	if (n < *cap)
		return p;
	size_t c = *cap ? *cap * 2 : 64;
	void *q = realloc(p, c * size);

	if (q)
		*cap = c;
	return q;
}

static bool hex_guid(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;

	if (n < 1 || n > 16)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!isxdigit((unsigned char)s[i]))
			return false;
		v = v << 4 | (uint64_t)(isdigit((unsigned char)s[i]) ? s[i] - '0'
					: (tolower((unsigned char)s[i]) - 'a' + 10));
	}
	*out = v;
	return true;
}

/* A decimal in min..max, then a blank or the end. */
static const char *number(const char *s, unsigned min, unsigned max, unsigned *out)
{
	unsigned v = 0;
	const char *p = s;

	if (!isdigit((unsigned char)*p))
		return NULL;
	while (isdigit((unsigned char)*p)) {
		v = v * 10 + (unsigned)(*p - '0');
		if (v > max)
			return NULL;
		p++;
	}
	if (v < min || (*p && *p != ' '))
		return NULL;
	*out = v;
	return *p ? p + 1 : p;
}

static const char *guid_field(const char *s, uint64_t *out)
{
	size_t n = strcspn(s, " ");

	if (!hex_guid(s, n, out))
		return NULL;
	return s[n] ? s + n + 1 : s + n;
}

static const char *node_line(struct parse *ps, const char *s)
{
	struct node_entry *e;
	uint64_t guid;
	unsigned type;
	void *q;

	if (!(s = guid_field(s, &guid)) || !(s = number(s, 0, 3, &type)))
		return "expected: node GUID TYPE DESCRIPTION";
	if (strlen(s) >= NODE_NAME_MAX)
		return "name longer than 287 characters";
	for (const char *c = s; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return "control character in a description";
	if (!(q = grow(ps->nodes, &ps->cap_nodes, ps->n_nodes, sizeof(*ps->nodes))))
		return "out of memory";
	ps->nodes = q;
	e = &ps->nodes[ps->n_nodes++];
	e->guid = guid;
	e->type = type;
	snprintf(e->desc, sizeof(e->desc), "%s", s);
	e->kept = NULL;
	return NULL;
}

static const char *link_line(struct parse *ps, const char *s)
{
	struct fabric_port *p;
	uint64_t guid, rguid;
	unsigned port, lanes, speed, rport;
	size_t n;
	int cond = -1;
	void *q;

	if (!(s = guid_field(s, &guid)) || !(s = number(s, 1, 254, &port)) ||
	    !(s = number(s, 0, 12, &lanes)) || !(s = number(s, 0, 9, &speed)))
		return "expected: link GUID PORT LANES SPEED NOTIFIED REMOTEGUID REMOTEPORT";
	n = strcspn(s, " ");
	for (int c = LINK_DOWN; c <= LINK_DEGRADED; c++)
		if (strlen(cond_names[c]) == n && !strncmp(s, cond_names[c], n))
			cond = c;
	if (cond < 0 || !s[n])
		return "NOTIFIED must be up, down or degraded";
	s += n + 1;
	if (!(s = guid_field(s, &rguid)) || !(s = number(s, 0, 254, &rport)) || *s)
		return "expected: link GUID PORT LANES SPEED NOTIFIED REMOTEGUID REMOTEPORT";
	if (lanes == 3 || lanes == 5 || lanes == 6 || lanes == 7 || lanes == 9 || lanes == 10 ||
	    lanes == 11)
		return "LANES must be 0, 1, 2, 4, 8 or 12";
	if (!(q = grow(ps->links, &ps->cap_links, ps->n_links, sizeof(*ps->links))))
		return "out of memory";
	ps->links = q;
	p = &ps->links[ps->n_links++];
	memset(p, 0, sizeof(*p));
	p->guid = guid;
	p->port = port;
	p->base_linked = true;
	p->base_lanes = lanes;
	p->base_speed = (int)speed;
	p->reported = p->cond = (enum fabric_link_cond)cond;
	p->remote_guid = rguid;
	p->remote_port = rport;
	p->stale = true;
	return NULL;
}

static struct fabric_snapshot *assemble(struct parse *ps, char *err, size_t errlen)
{
	struct fabric_snapshot *s;

	if (ps->n_nodes > 1)
		qsort(ps->nodes, ps->n_nodes, sizeof(*ps->nodes), entry_cmp);
	for (size_t i = 1; i < ps->n_nodes; i++)
		if (ps->nodes[i].guid == ps->nodes[i - 1].guid) {
			snprintf(err, errlen, "node %016llx listed twice",
				 (unsigned long long)ps->nodes[i].guid);
			return NULL;
		}
	if (ps->n_links > 1)
		qsort(ps->links, ps->n_links, sizeof(*ps->links), fabric_port_cmp);
	if (!(s = calloc(1, sizeof(*s)))) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	for (size_t i = 0; i < ps->n_links; i++) {
		struct fabric_port *p = &ps->links[i];
		struct node_entry *nd = node_entry_find(ps, p->guid);

		if (i && !fabric_port_cmp(p, p - 1)) {
			snprintf(err, errlen, "link of port %u of node %016llx listed twice", p->port,
				 (unsigned long long)p->guid);
			goto bad;
		}
		if (!nd || !nd->type) {
			snprintf(err, errlen, "link of node %016llx, which has no node line",
				 (unsigned long long)p->guid);
			goto bad;
		}
		p->node_type = nd->type;
		if (!(p->node_desc = kept_desc(s, nd)) ||
		    !(p->remote_desc = p->remote_guid
				       ? kept_desc(s, node_entry_find(ps, p->remote_guid)) : "")) {
			snprintf(err, errlen, "out of memory");
			goto bad;
		}
	}
	s->ports = ps->links;
	s->n = ps->n_links;
	s->baseline_links = (unsigned)ps->n_links;
	ps->links = NULL;
	return s;
bad:
	fabric_snapshot_free(s);
	return NULL;
}

struct fabric_snapshot *fabric_baseline_parse(const char *text, size_t len, char *err,
					      size_t errlen)
{
	struct parse ps = {0};
	struct fabric_snapshot *s = NULL;
	char line[512];
	size_t pos = 0;
	unsigned lineno = 0;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		const char *why = NULL;

		lineno++;
		if (!nl) {
			why = "the last line is not whole";
		} else if (n >= sizeof(line)) {
			why = "line too long";
		} else if (memchr(text + pos, '\0', n)) {
			why = "NUL in a line";
		} else {
			memcpy(line, text + pos, n);
			line[n] = '\0';
			if (!line[0] || line[0] == '#')
				why = NULL;
			else if (!ps.header)
				why = strcmp(line, HEADER) ? "expected the line '" HEADER "'"
							    : (ps.header = true, NULL);
			else if (!strncmp(line, "node ", 5))
				why = node_line(&ps, line + 5);
			else if (!strncmp(line, "link ", 5))
				why = link_line(&ps, line + 5);
			else
				why = "not a node or link line";
		}
		if (why) {
			snprintf(err, errlen, "line %u: %s", lineno, why);
			goto out;
		}
		pos += n + 1;
	}
	if (!ps.header) {
		snprintf(err, errlen, "no '" HEADER "' line");
		goto out;
	}
	s = assemble(&ps, err, errlen);
out:
	free(ps.nodes);
	free(ps.links);
	return s;
}
