/* Node-name maps and the names served for nodes (include/ibsnmpd/node_names.h).
 *
 * Written here: the readers Debian ships are not meant for a daemon. The
 * one infiniband-diags uses is a static part of rdma-core's tools; opensm's
 * (libosmcomp's open_node_name_map) reports a bad line on stderr without its
 * number, and its header is in no Debian 12 package of the bed. The format
 * is the one those readers take (ibnetdiscover(8), "NODE NAME MAP FILE
 * FORMAT"); where the readers are lax, this one follows them so that every
 * name served is the one the tools print on the same map. */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/node_names.h"

struct map_entry {
	uint64_t guid;
	size_t name;       /* offset in the pool */
	size_t line;       /* where it was: of two lines for a GUID the first counts */
};

struct node_name_map {
	size_t n;
	struct map_entry *entries; /* sorted by GUID */
	char *pool;
};

void node_name_map_free(struct node_name_map *m)
{
	if (!m)
		return;
	free(m->entries);
	free(m->pool);
	free(m);
}

static int entry_cmp(const void *a, const void *b)
{
	const struct map_entry *x = a, *y = b;

	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* C's isspace and isprint in the "C" locale, whatever the daemon's is. */
static bool is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static bool is_print(char c)
{
	return c >= 0x20 && c <= 0x7e;
}

/* One line (NUL-terminated, no newline): 0 and *name (NULL: it maps
 * nothing), or -1 and why. */
static int map_line(char *line, uint64_t *guid, char **name, const char **why)
{
	char *p = line, *e;
	unsigned long long v;

	*name = NULL;
	while (is_space(*p))
		p++;
	if (*p == '\0' || *p == '#')
		return 0;
	if (!isdigit((unsigned char)*p)) {
		*why = "a line must start with a node GUID";
		return -1;
	}
	errno = 0;
	v = strtoull(p, &e, 0);
	if (errno == ERANGE) {
		*why = "the GUID is longer than 64 bits";
		return -1;
	}
	if (e == p || (!is_space(*e) && *e != '#' && *e != '\0')) {
		*why = "the GUID is not a number";
		return -1;
	}
	*guid = v;
	p = e;
	while (is_space(*p))
		p++;
	/* the name: the first run of characters that are neither '"' nor '#'
	 * (infiniband-diags' reader takes strtok's first token) */
	p += strspn(p, "\"#");
	if (!*p)
		return 0;
	e = p + strcspn(p, "\"#");
	*e = '\0';
	/* a file written on Windows: its CR is no part of an unquoted name */
	if (e > p && e[-1] == '\r')
		e[-1] = '\0';
	if (*p)
		*name = p;
	return 0;
}

struct node_name_map *node_name_map_parse(const char *text, size_t len, const char *file,
					  char *err, size_t errlen)
{
	struct node_name_map *m = calloc(1, sizeof(*m));
	size_t cap = 0, pool_len = 0, pool_cap = 0, lineno = 0;
	const char *why = NULL;

	if (!m)
		goto oom;
	for (size_t at = 0; at < len; ) {
		const char *nl = memchr(text + at, '\n', len - at);
		size_t n = (nl ? (size_t)(nl - text) : len) - at;
		char line[NODE_NAME_MAP_LINE_MAX + 1], *name;
		uint64_t guid = 0;

		lineno++;
		if (n > NODE_NAME_MAP_LINE_MAX) {
			why = "the line is longer than 255 characters";
			goto bad;
		}
		memcpy(line, text + at, n);
		line[n] = '\0';
		at += n + 1;
		if (strlen(line) != n) {
			why = "the line holds a NUL character";
			goto bad;
		}
		if (map_line(line, &guid, &name, &why))
			goto bad;
		if (!name)
			continue;
		if (m->n == cap) {
			void *q = realloc(m->entries, (cap = cap ? cap * 2 : 64) * sizeof(*m->entries));

			if (!q)
				goto oom;
			m->entries = q;
		}
		n = strlen(name) + 1;
		if (pool_len + n > pool_cap) {
			void *q;

			pool_cap = (pool_len + n) * 2;
			if (!(q = realloc(m->pool, pool_cap)))
				goto oom;
			m->pool = q;
		}
		memcpy(m->pool + pool_len, name, n);
		m->entries[m->n++] = (struct map_entry){guid, pool_len, lineno};
		pool_len += n;
	}
	if (m->n > 1)
		qsort(m->entries, m->n, sizeof(*m->entries), entry_cmp);
	/* of two lines for a GUID the first counts (the tools keep the first) */
	if (m->n > 1) {
		size_t kept = 1;

		for (size_t k = 1; k < m->n; k++)
			if (m->entries[k].guid != m->entries[kept - 1].guid)
				m->entries[kept++] = m->entries[k];
		m->n = kept;
	}
	return m;
bad:
	snprintf(err, errlen, "%s:%zu: %s", file, lineno, why);
	node_name_map_free(m);
	return NULL;
oom:
	snprintf(err, errlen, "%s: out of memory", file);
	node_name_map_free(m);
	return NULL;
}

const char *node_name_map_find(const struct node_name_map *m, uint64_t guid)
{
	size_t lo = 0, hi = m ? m->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->entries[mid].guid == guid)
			return m->pool + m->entries[mid].name;
		if (m->entries[mid].guid < guid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

size_t node_name_map_count(const struct node_name_map *m)
{
	return m ? m->n : 0;
}

int node_name_map_same(const struct node_name_map *a, const struct node_name_map *b)
{
	if (node_name_map_count(a) != node_name_map_count(b))
		return 0;
	for (size_t k = 0; k < node_name_map_count(a); k++)
		if (a->entries[k].guid != b->entries[k].guid ||
		    strcmp(a->pool + a->entries[k].name, b->pool + b->entries[k].name))
			return 0;
	return 1;
}

/* ---- naming ------------------------------------------------------------- */

/* How a node's name is written: its base (mapped name or description),
 * then with a short GUID, then with the whole GUID, then the GUID alone. */
enum { AS_BASE, AS_SHORT_GUID, AS_GUID, AS_GUID_ALONE };

struct naming {
	char base[NODE_NAME_MAP_LINE_MAX + 1];
	bool mapped;
	int form;
	char *name;     /* as written in its form, this pass */
};

static char *write_name(const struct naming *w, uint64_t guid)
{
	char buf[NODE_NAME_MAP_LINE_MAX + 32];

	switch (w->form) {
	case AS_BASE: snprintf(buf, sizeof(buf), "%s", w->base); break;
	case AS_SHORT_GUID:
		snprintf(buf, sizeof(buf), "%s [%06llx]", w->base,
			 (unsigned long long)(guid & 0xffffff));
		break;
	case AS_GUID:
		snprintf(buf, sizeof(buf), "%s [0x%016llx]", w->base, (unsigned long long)guid);
		break;
	default: snprintf(buf, sizeof(buf), "0x%016llx", (unsigned long long)guid); break;
	}
	return strdup(buf);
}

struct by_name {
	const char *name;
	size_t k;
};

static int by_name_cmp(const void *a, const void *b)
{
	const struct by_name *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : x->k < y->k ? -1 : x->k > y->k;
}

/* The nodes sharing the name of sorted[from .. to): each goes to its next
 * form, but a single mapped node among them keeps its name while another
 * can still move; after enough passes (a map written to collide), every
 * one of them is named by its GUID, which no other node's GUID form
 * shares, so the passes end. */
static size_t spread(struct naming *w, const struct by_name *sorted, size_t from, size_t to,
		     bool last_resort)
{
	size_t mapped = 0, movable = 0, moved = 0;

	for (size_t j = from; j < to; j++) {
		const struct naming *x = &w[sorted[j].k];

		if (x->mapped && x->form == AS_BASE)
			mapped++;
		else if (x->form < AS_GUID_ALONE)
			movable++;
	}
	for (size_t j = from; j < to; j++) {
		struct naming *x = &w[sorted[j].k];

		if (x->form == AS_GUID_ALONE ||
		    (!last_resort && mapped == 1 && movable && x->mapped && x->form == AS_BASE))
			continue;
		x->form = last_resort ? AS_GUID_ALONE : x->form + 1;
		moved++;
	}
	return moved;
}

char *node_names_assign(struct node_naming *items, size_t n, const struct node_name_map *m)
{
	struct naming *w = calloc(n ? n : 1, sizeof(*w));
	struct by_name *sorted = calloc(n ? n : 1, sizeof(*sorted));
	char *pool = NULL;
	size_t total = 0;

	if (!w || !sorted)
		goto out;
	for (size_t k = 0; k < n; k++) {
		const char *mapped = node_name_map_find(m, items[k].guid);

		/* as infiniband-diags prints a description: 64 octets at most,
		 * what is not printable a space */
		snprintf(w[k].base, sizeof(w[k].base), mapped ? "%s" : "%.64s",
			 mapped ? mapped : items[k].desc ? items[k].desc : "");
		if (!mapped)
			for (char *c = w[k].base; *c; c++)
				if (!is_print(*c))
					*c = ' ';
		w[k].mapped = mapped != NULL;
		w[k].form = w[k].base[0] ? AS_BASE : AS_GUID_ALONE;
	}
	/* each pass moves every node still sharing a name to its next form
	 * (descriptions of a model: two passes, three where short GUIDs
	 * collide); a node named by its GUID alone no longer moves */
	for (int pass = 0;; pass++) {
		size_t moved = 0;

		for (size_t k = 0; k < n; k++) {
			free(w[k].name);
			if (!(w[k].name = write_name(&w[k], items[k].guid)))
				goto out;
			sorted[k] = (struct by_name){w[k].name, k};
		}
		if (n > 1)
			qsort(sorted, n, sizeof(*sorted), by_name_cmp);
		for (size_t from = 0, to; from < n; from = to) {
			for (to = from + 1; to < n && !strcmp(sorted[to].name, sorted[from].name); to++)
				;
			if (to - from > 1)
				moved += spread(w, sorted, from, to, pass >= 8);
		}
		if (!moved)
			break; /* unique (or one GUID given twice: nothing can tell those apart) */
	}
	for (size_t k = 0; k < n; k++)
		total += strlen(w[k].name) + 1;
	if (!(pool = malloc(total ? total : 1)))
		goto out;
	total = 0;
	for (size_t k = 0; k < n; k++) {
		size_t len = strlen(w[k].name) + 1;

		memcpy(pool + total, w[k].name, len);
		items[k].name = pool + total;
		total += len;
	}
out:
	for (size_t k = 0; w && k < n; k++)
		free(w[k].name);
	free(w);
	free(sorted);
	return pool;
}
