/* Slurm's hostlists: read (slurm.conf's NodeName=, a list of hosts) and
 * written (topology.conf's Nodes= and Switches=). Pure.
 *
 * The notation (slurm.conf(5), topology.conf(5)): items separated by
 * commas; an item is text with bracketed ranges, "tux[0-3,12]"; a range's
 * low end with a leading zero fixes the width ("n[001-010]"); several
 * brackets in one item multiply ("r[1-2]n[1-3]"). */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ibsnmpd/slurm.h"

#define NAME_MAX_LEN 255

bool slurm_name_ok(const char *name)
{
	size_t len = 0;

	if (!name || !*name)
		return false;
	for (const unsigned char *p = (const unsigned char *)name; *p; p++, len++) {
		if (*p <= ' ' || *p >= 0x7f || strchr(",[]=#\"'", *p))
			return false;
	}
	return len <= NAME_MAX_LEN;
}

__attribute__((format(printf, 3, 4))) static void say(char *err, size_t errlen,
							  const char *fmt, ...)
{
	va_list ap;

	if (!errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* ---- expanding ---- */

struct expansion {
	int (*add)(void *arg, const char *name);
	void *arg;
	size_t count;
	char *err;
	size_t errlen;
};

/* One item item[0..len) from position at, what is before at already in
 * name[0..nlen). */
static int expand_item(struct expansion *x, const char *item, size_t len, size_t at, char *name,
		       size_t nlen)
{
	const char *open, *close;
	size_t plain;

	open = memchr(item + at, '[', len - at);
	plain = (open ? (size_t)(open - item) : len) - at;
	if (nlen + plain > NAME_MAX_LEN) {
		say(x->err, x->errlen, "a name longer than %d bytes", NAME_MAX_LEN);
		return -1;
	}
	memcpy(name + nlen, item + at, plain);
	nlen += plain;
	if (memchr(item + at, ']', plain)) {
		say(x->err, x->errlen, "a ']' without its '['");
		return -1;
	}
	if (!open) {
		int rc;

		name[nlen] = '\0';
		if (!slurm_name_ok(name)) {
			say(x->err, x->errlen, "'%s' is not a host name", name);
			return -1;
		}
		if (++x->count > SLURM_HOSTLIST_MAX) {
			say(x->err, x->errlen, "more than %u names", SLURM_HOSTLIST_MAX);
			return -1;
		}
		rc = x->add(x->arg, name);
		return rc;
	}
	close = memchr(open, ']', len - (size_t)(open - item));
	if (!close) {
		say(x->err, x->errlen, "a '[' without its ']'");
		return -1;
	}
	for (const char *r = open + 1; r <= close;) {
		const char *end = r, *dash;
		unsigned long long lo, hi;
		unsigned width;
		char *e;

		while (end < close && *end != ',')
			end++;
		dash = memchr(r, '-', (size_t)(end - r));
		if (r == end || !isdigit((unsigned char)*r) || (dash && (dash + 1 == end ||
							     !isdigit((unsigned char)dash[1])))) {
			say(x->err, x->errlen, "a range in brackets that is not N or N-M");
			return -1;
		}
		width = (unsigned)((dash ? dash : end) - r);
		errno = 0;
		lo = strtoull(r, &e, 10);
		if (e != (dash ? dash : end) || errno || width > 18) {
			say(x->err, x->errlen, "a range in brackets that is not N or N-M");
			return -1;
		}
		hi = lo;
		if (dash) {
			hi = strtoull(dash + 1, &e, 10);
			if (e != end || errno || end - dash - 1 > 18) {
				say(x->err, x->errlen, "a range in brackets that is not N or N-M");
				return -1;
			}
		}
		if (hi < lo) {
			say(x->err, x->errlen, "a range from %llu down to %llu", lo, hi);
			return -1;
		}
		if (hi - lo >= SLURM_HOSTLIST_MAX) {
			say(x->err, x->errlen, "more than %u names", SLURM_HOSTLIST_MAX);
			return -1;
		}
		for (unsigned long long v = lo;; v++) {
			int w = snprintf(name + nlen, NAME_MAX_LEN + 1 - nlen, "%0*llu",
					 (int)width, v), rc;

			if (w < 0 || nlen + (size_t)w > NAME_MAX_LEN) {
				say(x->err, x->errlen, "a name longer than %d bytes", NAME_MAX_LEN);
				return -1;
			}
			rc = expand_item(x, item, len, (size_t)(close + 1 - item), name,
					 nlen + (size_t)w);
			if (rc)
				return rc;
			if (v == hi)
				break;
		}
		r = end + 1;
	}
	return 0;
}

int slurm_hostlist_expand(const char *expr, size_t len, int (*add)(void *arg, const char *name),
			  void *arg, char *err, size_t errlen)
{
	struct expansion x = {add, arg, 0, err, errlen};
	char name[NAME_MAX_LEN + 1];
	size_t start = 0;
	int depth = 0;

	for (size_t i = 0; i <= len; i++) {
		int rc;

		if (i < len && expr[i] == '[') {
			if (depth++) {
				say(err, errlen, "a '[' inside brackets");
				return -1;
			}
			continue;
		}
		if (i < len && expr[i] == ']') {
			if (!depth--) {
				say(err, errlen, "a ']' without its '['");
				return -1;
			}
			continue;
		}
		if (i < len && (expr[i] != ',' || depth))
			continue;
		if (depth) {
			say(err, errlen, "a '[' without its ']'");
			return -1;
		}
		if (i == start) {
			say(err, errlen, "an empty name");
			return -1;
		}
		rc = expand_item(&x, expr + start, i - start, 0, name, 0);
		if (rc)
			return rc;
		start = i + 1;
	}
	return 0;
}

/* ---- compressing ---- */

struct split_name {
	const char *name;
	size_t prefix;          /* bytes before the number */
	unsigned width;         /* the number's digits; 0: no number */
	bool padded;            /* a leading zero: the width is part of the name */
	unsigned long long num;
};

static int split_cmp(const void *x, const void *y)
{
	const struct split_name *a = x, *b = y;
	size_t p = a->prefix < b->prefix ? a->prefix : b->prefix;
	int c = memcmp(a->name, b->name, p);
	unsigned aw = a->padded ? a->width : 0, bw = b->padded ? b->width : 0;

	if (c)
		return c;
	if (a->prefix != b->prefix)
		return a->prefix < b->prefix ? -1 : 1;
	if (!a->width != !b->width)
		return a->width ? 1 : -1;
	if (aw != bw)
		return aw < bw ? -1 : 1;
	if (a->num != b->num)
		return a->num < b->num ? -1 : 1;
	return strcmp(a->name, b->name);
}

/* Whether b continues a's group: the same text before the number, both
 * numbered, the same fixed width or none. */
static bool same_group(const struct split_name *a, const struct split_name *b)
{
	return a->width && b->width && a->prefix == b->prefix &&
	       !memcmp(a->name, b->name, a->prefix) && a->padded == b->padded &&
	       (!a->padded || a->width == b->width);
}

struct text {
	char *s;
	size_t len, cap;
	bool oom;
};

__attribute__((format(printf, 2, 3))) static void put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (t->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->oom = true;
			return;
		}
		if (t->len + (size_t)n < t->cap)
			break;
		size_t cap = (t->cap + (size_t)n + 1) * 2;
		char *s = realloc(t->s, cap);

		if (!s) {
			t->oom = true;
			return;
		}
		t->s = s;
		t->cap = cap;
	}
	t->len += (size_t)n;
}

char *slurm_hostlist_compress(const char *const *names, size_t n)
{
	struct split_name *v = calloc(n ? n : 1, sizeof(*v));
	struct text t = {0};

	if (!v)
		return NULL;
	t.s = malloc(64);
	t.cap = t.s ? 64 : 0;
	t.oom = !t.s;
	if (t.s)
		t.s[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(names[i]), d = len;

		while (d && isdigit((unsigned char)names[i][d - 1]))
			d--;
		v[i].name = names[i];
		v[i].prefix = d;
		if (d < len && len - d <= 18) {
			v[i].width = (unsigned)(len - d);
			v[i].padded = v[i].width > 1 && names[i][d] == '0';
			v[i].num = strtoull(names[i] + d, NULL, 10);
		} else {
			v[i].prefix = len;
		}
	}
	qsort(v, n, sizeof(*v), split_cmp);
	for (size_t i = 0; i < n;) {
		size_t j = i + 1, distinct = 1;

		if (!v[i].width) { /* no number: the name as it is, once */
			put(&t, "%s%s", t.len ? "," : "", v[i].name);
			while (j < n && !strcmp(v[j].name, v[i].name))
				j++;
			i = j;
			continue;
		}
		for (; j < n && same_group(&v[i], &v[j]); j++)
			distinct += v[j].num != v[j - 1].num;
		if (distinct == 1) {
			put(&t, "%s%s", t.len ? "," : "", v[i].name);
			i = j;
			continue;
		}
		put(&t, "%s%.*s[", t.len ? "," : "", (int)v[i].prefix, v[i].name);
		for (size_t k = i; k < j;) {
			size_t e = k;
			int w = v[k].padded ? (int)v[k].width : 0;

			while (e + 1 < j && v[e + 1].num <= v[e].num + 1)
				e++;
			if (v[e].num == v[k].num)
				put(&t, "%s%0*llu", k > i ? "," : "", w, v[k].num);
			else
				put(&t, "%s%0*llu-%0*llu", k > i ? "," : "", w, v[k].num, w,
				    v[e].num);
			k = e + 1;
		}
		put(&t, "]");
		i = j;
	}
	free(v);
	if (t.oom) {
		free(t.s);
		return NULL;
	}
	return t.s;
}

/* ---- the hosts Slurm knows ---- */

struct slurm_hosts {
	char **names; /* sorted, unique */
	size_t n, cap;
};

static int hosts_add(void *arg, const char *name)
{
	struct slurm_hosts *h = arg;

	if (h->n == h->cap) {
		size_t cap = h->cap ? h->cap * 2 : 64;
		char **p = realloc(h->names, cap * sizeof(*p));

		if (!p)
			return -2;
		h->names = p;
		h->cap = cap;
	}
	if (!(h->names[h->n] = strdup(name)))
		return -2;
	h->n++;
	return 0;
}

static int str_ptr_cmp(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

void slurm_hosts_free(struct slurm_hosts *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->n; i++)
		free(h->names[i]);
	free(h->names);
	free(h);
}

size_t slurm_hosts_count(const struct slurm_hosts *h)
{
	return h ? h->n : 0;
}

const char *slurm_hosts_name(const struct slurm_hosts *h, size_t i)
{
	return h && i < h->n ? h->names[i] : NULL;
}

bool slurm_hosts_has(const struct slurm_hosts *h, const char *name)
{
	return h && h->n && bsearch(&name, h->names, h->n, sizeof(*h->names), str_ptr_cmp);
}

/* "NodeName=" at p (any case), as slurm.conf's keys are read. */
static bool is_nodename_key(const char *p, const char *end)
{
	return end - p >= 9 && !strncasecmp(p, "NodeName=", 9);
}

/* The value of one hostlist word [p, end) of line `line`. */
static int hosts_word(struct slurm_hosts *h, const char *p, const char *end, const char *file,
		      unsigned line, char *err, size_t errlen)
{
	char why[200];
	int rc = slurm_hostlist_expand(p, (size_t)(end - p), hosts_add, h, why, sizeof(why));

	if (rc == -2)
		say(err, errlen, "%s:%u: out of memory", file, line);
	else if (rc)
		say(err, errlen, "%s:%u: '%.*s': %s", file, line, (int)(end - p > 60 ? 60 : end - p),
		    p, why);
	return rc ? -1 : 0;
}

struct slurm_hosts *slurm_hosts_parse(const char *text, size_t len, const char *file, char *err,
				      size_t errlen)
{
	struct slurm_hosts *h = calloc(1, sizeof(*h));
	bool conf = false;
	unsigned line = 0;

	if (!h) {
		say(err, errlen, "%s: out of memory", file);
		return NULL;
	}
	for (size_t i = 0; i < len && !conf; i++) /* a NodeName= at a word's start */
		conf = (i == 0 || isspace((unsigned char)text[i - 1])) &&
		       is_nodename_key(text + i, text + len);
	for (const char *p = text, *stop = text + len; p < stop;) {
		const char *eol = memchr(p, '\n', (size_t)(stop - p)), *end, *hash;

		line++;
		end = eol ? eol : stop;
		hash = memchr(p, '#', (size_t)(end - p));
		if (hash)
			end = hash;
		if (memchr(p, '\0', (size_t)(end - p))) {
			say(err, errlen, "%s:%u: a NUL byte", file, line);
			slurm_hosts_free(h);
			return NULL;
		}
		while (p < end) {
			const char *w;

			while (p < end && isspace((unsigned char)*p))
				p++;
			w = p;
			while (p < end && !isspace((unsigned char)*p))
				p++;
			if (w == p)
				break;
			if (conf) { /* NodeName=LIST, not DEFAULT; the other keys are not ours */
				if (!is_nodename_key(w, p) || (p - w == 16 &&
							       !strncasecmp(w + 9, "DEFAULT", 7)))
					continue;
				if (p - w == 9) {
					say(err, errlen, "%s:%u: NodeName= names no host", file, line);
					slurm_hosts_free(h);
					return NULL;
				}
				w += 9;
			}
			if (hosts_word(h, w, p, file, line, err, errlen)) {
				slurm_hosts_free(h);
				return NULL;
			}
			if (conf)
				break; /* one NodeName= a line */
		}
		p = eol ? eol + 1 : stop;
	}
	if (h->n) {
		size_t u = 1;

		qsort(h->names, h->n, sizeof(*h->names), str_ptr_cmp);
		for (size_t i = 1; i < h->n; i++) {
			if (strcmp(h->names[i], h->names[u - 1]))
				h->names[u++] = h->names[i];
			else
				free(h->names[i]);
		}
		h->n = u;
	}
	return h;
}
