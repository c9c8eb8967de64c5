/* prometheusWebConfig: the exporter-toolkit's web configuration file
 * (prom_internal.h). Pure: unit-tested and fuzzed.
 *
 * The file is YAML. No YAML library is in Debian's list of what ibsnmpd
 * builds with (libyaml would parse it, but only into events this code would
 * still have to walk), so this reads by hand the subset the format needs:
 * block mappings, block and flow lists of scalars, plain and quoted
 * scalars, literal block scalars (an inline PEM), comments. Anything else
 * (anchors, tags, flow mappings, several documents) is refused with its
 * line, as the exporter-toolkit refuses keys it does not know. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prom_internal.h"

/* ---- the YAML subset: a tree of maps, lists and scalars --------------------------- */

enum ykind { Y_NULL, Y_SCALAR, Y_MAP, Y_LIST };

struct ynode {
	enum ykind kind;
	unsigned line;
	char *key;            /* its key, in a map */
	char *value;          /* a scalar's text */
	struct ynode *child;  /* a map's or list's first entry */
	struct ynode *next;
};

struct yline {
	unsigned number;      /* 1-based */
	unsigned indent;
	const char *text;     /* after the indent, to the end of the line */
	size_t len;
};

struct yparser {
	struct yline *lines;
	size_t n, at;
	char *why;
	size_t why_len;
	unsigned depth;
};

#define YAML_DEPTH_MAX 8

__attribute__((format(printf, 3, 4)))
static int fail(struct yparser *p, unsigned line, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (line)
		n = snprintf(p->why, p->why_len, "line %u: ", line);
	if (n < 0 || (size_t)n >= p->why_len)
		return -1;
	va_start(ap, fmt);
	vsnprintf(p->why + n, p->why_len - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static void ynode_free(struct ynode *n)
{
	while (n) {
		struct ynode *next = n->next;

		ynode_free(n->child);
		free(n->key);
		free(n->value);
		free(n);
		n = next;
	}
}

static struct ynode *ynode_new(enum ykind kind, unsigned line)
{
	struct ynode *n = calloc(1, sizeof(*n));

	if (n) {
		n->kind = kind;
		n->line = line;
	}
	return n;
}

/* The lines that say something: blank and comment lines dropped, the
 * indentation measured (a tab in it is an error in YAML). */
static int split_lines(struct yparser *p, const char *text, size_t len)
{
	size_t cap = 0;
	unsigned number = 0;

	for (size_t at = 0; at < len;) {
		const char *line = text + at, *end = memchr(line, '\n', len - at);
		size_t n = end ? (size_t)(end - line) : len - at;
		unsigned indent = 0;

		at += n + (end ? 1 : 0);
		number++;
		if (n && line[n - 1] == '\r')
			n--;
		if (memchr(line, '\0', n))
			return fail(p, number, "a NUL character");
		while (indent < n && line[indent] == ' ')
			indent++;
		if (indent < n && line[indent] == '\t')
			return fail(p, number, "a tab in the indentation (YAML indents with spaces)");
		if (p->n == cap) {
			struct yline *more;

			cap = cap ? cap * 2 : 32;
			more = realloc(p->lines, cap * sizeof(*more));
			if (!more)
				return fail(p, number, "out of memory");
			p->lines = more;
		}
		p->lines[p->n++] = (struct yline){number, indent, line + indent, n - indent};
	}
	return 0;
}

static bool line_is_blank(const struct yline *l)
{
	size_t i = 0;

	while (i < l->len && l->text[i] == ' ')
		i++;
	return i == l->len || l->text[i] == '#';
}

/* The next line that says something, or NULL */
static struct yline *peek(struct yparser *p)
{
	while (p->at < p->n && line_is_blank(&p->lines[p->at]))
		p->at++;
	return p->at < p->n ? &p->lines[p->at] : NULL;
}

static char *copy(const char *s, size_t n)
{
	char *c = malloc(n + 1);

	if (c) {
		memcpy(c, s, n);
		c[n] = '\0';
	}
	return c;
}

/* After a scalar: only blanks and a comment may follow */
static bool rest_is_empty(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && s[i] == ' ')
		i++;
	return i == n || s[i] == '#';
}

/* A scalar at s[0..n): quoted or plain. *used: octets it took (to the
 * closing quote); *out malloc'd, NULL for null (~, null, nothing). */
static int scalar(struct yparser *p, unsigned line, const char *s, size_t n, char **out,
		  size_t *used, const char *stops)
{
	size_t i, o = 0;
	char *v;

	*out = NULL;
	if (n && s[0] == '\'') {
		if (!(v = malloc(n)))
			return fail(p, line, "out of memory");
		for (i = 1; i < n; i++) {
			if (s[i] == '\'') {
				if (i + 1 < n && s[i + 1] == '\'') {
					v[o++] = '\'';
					i++;
					continue;
				}
				break;
			}
			v[o++] = s[i];
		}
		if (i >= n) {
			free(v);
			return fail(p, line, "a quoted string that does not end on its line");
		}
		v[o] = '\0';
		*out = v;
		*used = i + 1;
		return 0;
	}
	if (n && s[0] == '"') {
		if (!(v = malloc(n)))
			return fail(p, line, "out of memory");
		for (i = 1; i < n && s[i] != '"'; i++) {
			if (s[i] != '\\') {
				v[o++] = s[i];
				continue;
			}
			if (++i == n)
				break;
			switch (s[i]) {
			case '\\': v[o++] = '\\'; break;
			case '"': v[o++] = '"'; break;
			case '/': v[o++] = '/'; break;
			case 'n': v[o++] = '\n'; break;
			case 't': v[o++] = '\t'; break;
			default:
				free(v);
				return fail(p, line, "the escape \\%c is not supported here", s[i]);
			}
		}
		if (i >= n) {
			free(v);
			return fail(p, line, "a quoted string that does not end on its line");
		}
		v[o] = '\0';
		*out = v;
		*used = i + 1;
		return 0;
	}
	if (n && strchr("&*!|>%@`{", s[0]))
		return fail(p, line, "'%c' starts a YAML construct this file does not use "
			    "(anchors, aliases, tags, flow mappings)", s[0]);
	/* plain: to a comment (" #"), or to a stop character (a flow list) */
	for (i = 0; i < n; i++) {
		if (s[i] == '#' && i && s[i - 1] == ' ')
			break;
		if (stops && strchr(stops, s[i]))
			break;
	}
	*used = i;
	while (i && s[i - 1] == ' ')
		i--;
	if (!i || (i == 1 && s[0] == '~') || (i == 4 && !memcmp(s, "null", 4)))
		return 0;
	if (!(*out = copy(s, i)))
		return fail(p, line, "out of memory");
	return 0;
}

/* "[a, b, 'c']" on one line */
static int flow_list(struct yparser *p, unsigned line, const char *s, size_t n,
		     struct ynode *list)
{
	struct ynode **tail = &list->child;
	size_t i = 1;

	for (;;) {
		struct ynode *item;
		size_t used;
		char *v;

		while (i < n && s[i] == ' ')
			i++;
		if (i < n && s[i] == ']' && list->child == NULL)
			break;
		if (scalar(p, line, s + i, n - i, &v, &used, ",]"))
			return -1;
		if (!v)
			return fail(p, line, "an empty entry in a list");
		if (!(item = ynode_new(Y_SCALAR, line))) {
			free(v);
			return fail(p, line, "out of memory");
		}
		item->value = v;
		*tail = item;
		tail = &item->next;
		i += used;
		while (i < n && s[i] == ' ')
			i++;
		if (i < n && s[i] == ',') {
			i++;
			continue;
		}
		if (i < n && s[i] == ']')
			break;
		return fail(p, line, "a list '[...]' must end on its line with ']'");
	}
	if (!rest_is_empty(s + i + 1, n - i - 1))
		return fail(p, line, "something after the list's ']'");
	return 0;
}

/* "|" or "|-": the lines indented more than the key's, as they are */
static int block_scalar(struct yparser *p, unsigned key_indent, bool keep_last_newline,
			char **out)
{
	size_t len = 0, cap = 256;
	unsigned indent = 0;
	char *v = malloc(cap);

	if (!v)
		return fail(p, 0, "out of memory");
	while (p->at < p->n) {
		const struct yline *l = &p->lines[p->at];
		bool blank = l->len == 0;

		if (!blank && l->indent <= key_indent)
			break;
		if (!blank && !indent)
			indent = l->indent;
		if (!blank && l->indent < indent) {
			free(v);
			return fail(p, l->number, "a line of a '|' block indented less than its first");
		}
		{
			size_t extra = blank ? 0 : l->indent - indent, n = blank ? 0 : l->len;

			if (len + extra + n + 2 > cap) {
				char *more;

				while (len + extra + n + 2 > cap)
					cap *= 2;
				if (!(more = realloc(v, cap))) {
					free(v);
					return fail(p, l->number, "out of memory");
				}
				v = more;
			}
			memset(v + len, ' ', extra);
			memcpy(v + len + extra, l->text, n);
			len += extra + n;
			v[len++] = '\n';
		}
		p->at++;
	}
	while (len && v[len - 1] == '\n')
		len--;
	if (keep_last_newline && len)
		v[len++] = '\n';
	v[len] = '\0';
	*out = v;
	return 0;
}

static int block(struct yparser *p, unsigned parent_indent, bool list_may_share_indent,
		 struct ynode **out);

/* A key's value: what follows "key:" on its line, or the block below */
static int value_of(struct yparser *p, const struct yline *l, unsigned indent, const char *s,
		    size_t n, struct ynode *entry)
{
	size_t i = 0, used;

	while (i < n && s[i] == ' ')
		i++;
	if (i < n && s[i] == '|') {
		size_t j = i + 1;
		bool strip = j < n && s[j] == '-';

		if (strip)
			j++;
		if (!rest_is_empty(s + j, n - j) && !(j == n))
			return fail(p, l->number, "only '|' and '|-' blocks are supported");
		entry->kind = Y_SCALAR;
		return block_scalar(p, indent, !strip, &entry->value);
	}
	if (i < n && s[i] == '[') {
		entry->kind = Y_LIST;
		return flow_list(p, l->number, s + i, n - i, entry);
	}
	if (i + 1 < n && s[i] == '{' && s[i + 1] == '}' && rest_is_empty(s + i + 2, n - i - 2)) {
		entry->kind = Y_MAP; /* an empty map */
		return 0;
	}
	if (i < n && s[i] != '#') {
		if (scalar(p, l->number, s + i, n - i, &entry->value, &used, NULL))
			return -1;
		if (!rest_is_empty(s + i + used, n - i - used))
			return fail(p, l->number, "something after the value");
		entry->kind = entry->value ? Y_SCALAR : Y_NULL;
		return 0;
	}
	/* nothing on the line: a block below (a list may sit at the key's indent) */
	{
		struct ynode *below = NULL;

		if (block(p, indent, true, &below)) {
			ynode_free(below);
			return -1;
		}
		if (!below) {
			entry->kind = Y_NULL;
			return 0;
		}
		entry->kind = below->kind;
		entry->child = below->child;
		below->child = NULL;
		ynode_free(below);
		return 0;
	}
}

static int block_list(struct yparser *p, unsigned indent, struct ynode *list)
{
	struct ynode **tail = &list->child;
	struct yline *l;

	while ((l = peek(p)) && l->indent == indent) {
		struct ynode *item;
		size_t used;
		char *v;

		if (l->text[0] != '-' || (l->len > 1 && l->text[1] != ' '))
			break; /* the next key of a map whose list shared its indent */
		p->at++;
		if (scalar(p, l->number, l->text + 1 + (l->len > 1), l->len - 1 - (l->len > 1),
			   &v, &used, NULL))
			return -1;
		if (!v)
			return fail(p, l->number, "an empty list item (lists here hold strings)");
		if (!rest_is_empty(l->text + 2 + used, l->len - 2 - used) ||
		    (l->text[2] != '"' && l->text[2] != '\'' && strstr(v, ": "))) {
			free(v);
			return fail(p, l->number, "a list item here is one string");
		}
		if (!(item = ynode_new(Y_SCALAR, l->number))) {
			free(v);
			return fail(p, l->number, "out of memory");
		}
		item->value = v;
		*tail = item;
		tail = &item->next;
	}
	return 0;
}

/* "key: ...": the key's text and where the value starts */
static int split_key(struct yparser *p, const struct yline *l, char **key, size_t *value_at)
{
	size_t used, i;

	if (l->text[0] == '"' || l->text[0] == '\'') {
		if (scalar(p, l->number, l->text, l->len, key, &used, NULL))
			return -1;
		i = used;
		if (i >= l->len || l->text[i] != ':') {
			free(*key);
			return fail(p, l->number, "expected ':' after the quoted key");
		}
	} else {
		for (i = 0; i < l->len; i++)
			if (l->text[i] == ':' && (i + 1 == l->len || l->text[i + 1] == ' '))
				break;
		if (i == l->len || !i)
			return fail(p, l->number, "expected 'key: value'");
		if (strchr("&*!|>%@`{[#?-", l->text[0]))
			return fail(p, l->number, "a key may not start with '%c'", l->text[0]);
		if (!(*key = copy(l->text, i)))
			return fail(p, l->number, "out of memory");
		while (i && (*key)[i - 1] == ' ')
			(*key)[--i] = '\0';
		i = strlen(*key);
		for (; i < l->len && l->text[i] != ':'; i++)
			;
	}
	if (!*key || !**key) {
		free(*key);
		return fail(p, l->number, "an empty key");
	}
	*value_at = i + 1;
	return 0;
}

static int block_map(struct yparser *p, unsigned indent, struct ynode *map)
{
	struct ynode **tail = &map->child;
	struct yline *l;

	while ((l = peek(p)) && l->indent == indent) {
		struct ynode *entry;
		size_t at = 0;
		char *key = NULL;

		if (l->len >= 3 && (!memcmp(l->text, "---", 3) || !memcmp(l->text, "...", 3)))
			return fail(p, l->number, "one YAML document only");
		if (l->text[0] == '-' && (l->len == 1 || l->text[1] == ' '))
			return fail(p, l->number, "a list item where a key was expected");
		if (split_key(p, l, &key, &at))
			return -1;
		for (struct ynode *e = map->child; e; e = e->next)
			if (!strcmp(e->key, key)) {
				fail(p, l->number, "'%s' is given twice (first on line %u)", key,
				     e->line);
				free(key);
				return -1;
			}
		if (!(entry = ynode_new(Y_NULL, l->number))) {
			free(key);
			return fail(p, l->number, "out of memory");
		}
		entry->key = key;
		*tail = entry;
		tail = &entry->next;
		p->at++;
		if (value_of(p, l, indent, l->text + at, l->len - at, entry))
			return -1;
	}
	return 0;
}

/* The block whose lines are indented more than parent_indent (or, for a
 * list under a key, as much): a map or a list; NULL if there is none. */
static int block(struct yparser *p, unsigned parent_indent, bool list_may_share_indent,
		 struct ynode **out)
{
	struct yline *l = peek(p);
	bool is_list;
	int rc;

	*out = NULL;
	if (!l)
		return 0;
	is_list = l->text[0] == '-' && (l->len == 1 || l->text[1] == ' ');
	if (l->indent < parent_indent || (l->indent == parent_indent &&
					  (!is_list || !list_may_share_indent)))
		return 0;
	if (++p->depth > YAML_DEPTH_MAX)
		return fail(p, l->number, "nested too deep");
	if (!(*out = ynode_new(is_list ? Y_LIST : Y_MAP, l->number)))
		return fail(p, l->number, "out of memory");
	rc = is_list ? block_list(p, l->indent, *out) : block_map(p, l->indent, *out);
	p->depth--;
	return rc;
}

/* The whole text as one map (an empty file: an empty map) */
static int yaml_parse(struct yparser *p, const char *text, size_t len, struct ynode **root)
{
	struct yline *l;

	*root = NULL;
	if (split_lines(p, text, len))
		return -1;
	if ((l = peek(p)) && l->len >= 3 && !memcmp(l->text, "---", 3) &&
	    rest_is_empty(l->text + 3, l->len - 3) && l->indent == 0)
		p->at++;
	if ((l = peek(p)) && l->indent != 0)
		return fail(p, l->number, "the file's keys must start in the first column");
	if ((l = peek(p)) && l->text[0] == '-')
		return fail(p, l->number, "the file is a map of keys, not a list");
	if (!(*root = ynode_new(Y_MAP, 1)))
		return fail(p, 0, "out of memory");
	if (block_map(p, 0, *root))
		return -1;
	if ((l = peek(p))) {
		if (l->len >= 3 && (!memcmp(l->text, "---", 3) || !memcmp(l->text, "...", 3)))
			return fail(p, l->number, "one YAML document only");
		return fail(p, l->number, "indented more than the key it would belong to");
	}
	return 0;
}

/* ---- the exporter-toolkit's keys --------------------------------------------------- */

/* Go's cipher suites (crypto/tls) and the GnuTLS parts that make them:
 * the key exchange, the cipher and the MAC of its priority strings. */
struct suite {
	const char *go;
	const char *kx;      /* NULL: a TLS 1.3 suite (Go does not let them be chosen) */
	const char *cipher;
	const char *mac;
};

static const struct suite suites[] = {
	{"TLS_RSA_WITH_AES_128_CBC_SHA", "RSA", "AES-128-CBC", "SHA1"},
	{"TLS_RSA_WITH_AES_256_CBC_SHA", "RSA", "AES-256-CBC", "SHA1"},
	{"TLS_RSA_WITH_AES_128_GCM_SHA256", "RSA", "AES-128-GCM", "AEAD"},
	{"TLS_RSA_WITH_AES_256_GCM_SHA384", "RSA", "AES-256-GCM", "AEAD"},
	{"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA", "AES-128-CBC", "SHA1"},
	{"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA", "AES-256-CBC", "SHA1"},
	{"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA", "AES-128-CBC", "SHA1"},
	{"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA", "AES-256-CBC", "SHA1"},
	{"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA", "AES-128-GCM", "AEAD"},
	{"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA", "AES-128-GCM", "AEAD"},
	{"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA", "AES-256-GCM", "AEAD"},
	{"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA", "AES-256-GCM", "AEAD"},
	{"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA", "CHACHA20-POLY1305",
	 "AEAD"},
	{"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA", "CHACHA20-POLY1305", "AEAD"},
	/* Go's older names of the last two */
	{"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305", "ECDHE-ECDSA", "CHACHA20-POLY1305", "AEAD"},
	{"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305", "ECDHE-RSA", "CHACHA20-POLY1305", "AEAD"},
	{"TLS_AES_128_GCM_SHA256", NULL, "AES-128-GCM", "AEAD"},
	{"TLS_AES_256_GCM_SHA384", NULL, "AES-256-GCM", "AEAD"},
	{"TLS_CHACHA20_POLY1305_SHA256", NULL, "CHACHA20-POLY1305", "AEAD"},
};
#define N_SUITES (sizeof(suites) / sizeof(suites[0]))
#define FIRST_ALIAS 14 /* the older names: the same suites again */

/* Go's curve names and GnuTLS' groups */
static const char *const curves[][2] = {
	{"CurveP256", "GROUP-SECP256R1"},
	{"CurveP384", "GROUP-SECP384R1"},
	{"CurveP521", "GROUP-SECP521R1"},
	{"X25519", "GROUP-X25519"},
};
#define N_CURVES (sizeof(curves) / sizeof(curves[0]))

static const char *const client_auth_names[] = {
	[PROM_CLIENT_NONE] = "NoClientCert",
	[PROM_CLIENT_REQUEST] = "RequestClientCert",
	[PROM_CLIENT_REQUIRE_ANY] = "RequireAnyClientCert",
	[PROM_CLIENT_VERIFY_IF_GIVEN] = "VerifyClientCertIfGiven",
	[PROM_CLIENT_REQUIRE_VERIFY] = "RequireAndVerifyClientCert",
};

const char *const prom_web_header_names[PROM_WEB_HEADERS] = {
	"Content-Security-Policy", "X-Frame-Options", "X-Content-Type-Options",
	"X-XSS-Protection",        "Strict-Transport-Security",
};

static int want_scalar(struct yparser *p, const struct ynode *n, char **out)
{
	if (n->kind == Y_NULL)
		return 0;
	if (n->kind != Y_SCALAR)
		return fail(p, n->line, "'%s' takes one value", n->key);
	free(*out);
	*out = n->value;
	((struct ynode *)n)->value = NULL;
	return 0;
}

static int want_bool(struct yparser *p, const struct ynode *n, bool *out)
{
	if (n->kind != Y_SCALAR || (strcmp(n->value, "true") && strcmp(n->value, "false")))
		return fail(p, n->line, "'%s' takes true or false", n->key);
	*out = n->value[0] == 't';
	return 0;
}

static int want_list(struct yparser *p, const struct ynode *n)
{
	if (n->kind != Y_LIST && n->kind != Y_NULL)
		return fail(p, n->line, "'%s' takes a list ('- item' lines, or [a, b])", n->key);
	return 0;
}

static int tls_version(struct yparser *p, const struct ynode *n, unsigned *out)
{
	static const char *const names[] = {"TLS10", "TLS11", "TLS12", "TLS13"};

	if (n->kind == Y_SCALAR)
		for (unsigned i = 0; i < 4; i++)
			if (!strcmp(n->value, names[i])) {
				*out = 10 + i;
				return 0;
			}
	return fail(p, n->line, "'%s' takes TLS10, TLS11, TLS12 or TLS13", n->key);
}

int prom_web_duration(const char *text, double *seconds)
{
	static const struct {
		const char *unit;
		double s;
	} units[] = {{"ms", 0.001}, {"s", 1}, {"m", 60}, {"h", 3600},
		     {"d", 86400}, {"w", 604800}, {"y", 31536000}};
	double total = 0;
	const char *s = text;

	if (!*s)
		return -1;
	if (!strcmp(s, "0")) {
		*seconds = 0;
		return 0;
	}
	while (*s) {
		unsigned long long v = 0;
		size_t digits = 0, u;

		while (isdigit((unsigned char)*s) && digits < 12) {
			v = v * 10 + (unsigned)(*s++ - '0');
			digits++;
		}
		if (!digits)
			return -1;
		for (u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
			size_t len = strlen(units[u].unit);

			/* "ms" before "m" */
			if (!strncmp(s, units[u].unit, len) && !(units[u].unit[0] == 'm' && len == 1 &&
								 s[1] == 's')) {
				s += len;
				break;
			}
		}
		if (u == sizeof(units) / sizeof(units[0]))
			return -1;
		total += (double)v * units[u].s;
	}
	*seconds = total;
	return 0;
}

/* A bcrypt hash as htpasswd -B and Python's bcrypt write it */
static bool is_bcrypt(const char *h)
{
	static const char alphabet[] =
		"./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

	if (strlen(h) != 60 || h[0] != '$' || h[1] != '2' || !strchr("aby", h[2]) || h[3] != '$' ||
	    !isdigit((unsigned char)h[4]) || !isdigit((unsigned char)h[5]) || h[6] != '$')
		return false;
	if ((h[4] - '0') * 10 + (h[5] - '0') < 4 || (h[4] - '0') * 10 + (h[5] - '0') > 31)
		return false;
	return strspn(h + 7, alphabet) == 53;
}

static int tls_section(struct yparser *p, const struct ynode *map, struct prom_web_config *c)
{
	const struct ynode *auth = NULL;

	if (map->kind == Y_NULL)
		return 0;
	if (map->kind != Y_MAP)
		return fail(p, map->line, "'tls_server_config' holds keys");
	for (const struct ynode *n = map->child; n; n = n->next) {
		const char *k = n->key;
		int rc = 0;

		if (!strcmp(k, "cert_file"))
			rc = want_scalar(p, n, &c->cert_file);
		else if (!strcmp(k, "key_file"))
			rc = want_scalar(p, n, &c->key_file);
		else if (!strcmp(k, "client_ca_file"))
			rc = want_scalar(p, n, &c->client_ca_file);
		else if (!strcmp(k, "cert"))
			rc = want_scalar(p, n, &c->cert);
		else if (!strcmp(k, "key"))
			rc = want_scalar(p, n, &c->key);
		else if (!strcmp(k, "client_ca"))
			rc = want_scalar(p, n, &c->client_ca);
		else if (!strcmp(k, "client_auth_type")) {
			unsigned i;

			for (i = 0; n->kind == Y_SCALAR && i < PROM_CLIENT_AUTHS; i++)
				if (!strcmp(n->value, client_auth_names[i]))
					break;
			if (n->kind != Y_SCALAR || i == PROM_CLIENT_AUTHS)
				rc = fail(p, n->line, "client_auth_type takes NoClientCert, "
					  "RequestClientCert, RequireAnyClientCert, "
					  "VerifyClientCertIfGiven or RequireAndVerifyClientCert");
			c->client_auth = (enum prom_client_auth)i;
			auth = n;
		} else if (!strcmp(k, "client_allowed_sans")) {
			rc = want_list(p, n);
			for (const struct ynode *s = n->child; !rc && s; s = s->next) {
				if (c->n_sans == PROM_WEB_SANS_MAX)
					rc = fail(p, s->line, "at most %d names", PROM_WEB_SANS_MAX);
				else if (!(c->sans[c->n_sans++] = strdup(s->value)))
					rc = fail(p, s->line, "out of memory");
			}
		} else if (!strcmp(k, "min_version"))
			rc = tls_version(p, n, &c->min_version);
		else if (!strcmp(k, "max_version"))
			rc = tls_version(p, n, &c->max_version);
		else if (!strcmp(k, "cipher_suites")) {
			rc = want_list(p, n);
			for (const struct ynode *s = n->child; !rc && s; s = s->next) {
				unsigned i;

				for (i = 0; i < N_SUITES && strcmp(suites[i].go, s->value); i++)
					;
				if (i == N_SUITES)
					rc = fail(p, s->line, "cipher suite '%s' is not one of Go's "
						  "(e.g. TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256)",
						  s->value);
				else if (c->n_suites == PROM_WEB_SUITES_MAX)
					rc = fail(p, s->line, "too many cipher suites");
				else
					c->suites[c->n_suites++] = i;
			}
		} else if (!strcmp(k, "prefer_server_cipher_suites"))
			rc = want_bool(p, n, &c->prefer_server_suites);
		else if (!strcmp(k, "curve_preferences")) {
			rc = want_list(p, n);
			for (const struct ynode *s = n->child; !rc && s; s = s->next) {
				unsigned i;

				for (i = 0; i < N_CURVES && strcmp(curves[i][0], s->value); i++)
					;
				if (i == N_CURVES)
					rc = fail(p, s->line, "curve '%s': CurveP256, CurveP384, "
						  "CurveP521 or X25519", s->value);
				else if (c->n_curves == PROM_WEB_CURVES_MAX)
					rc = fail(p, s->line, "too many curves");
				else
					c->curves[c->n_curves++] = i;
			}
		} else
			rc = fail(p, n->line, "unknown key '%s' in tls_server_config", k);
		if (rc)
			return -1;
	}
	/* as the exporter-toolkit: TLS is on once anything of it is given */
	c->tls = c->cert_file || c->cert || c->key_file || c->key || c->client_ca_file ||
		 c->client_ca || auth;
	if (c->min_version > c->max_version)
		return fail(p, map->line, "min_version is above max_version");
	if (!c->tls)
		return 0;
	if ((c->cert_file && c->cert) || (c->key_file && c->key) ||
	    (c->client_ca_file && c->client_ca))
		return fail(p, map->line, "give a certificate, key or CA either as a file or inline, "
			    "not both");
	if (!(c->cert_file || c->cert) || !(c->key_file || c->key))
		return fail(p, map->line, "tls_server_config needs cert_file and key_file");
	if ((c->client_ca_file || c->client_ca) && c->client_auth == PROM_CLIENT_NONE)
		return fail(p, map->line, "a client CA without a client_auth_type that uses it "
			    "(RequireAndVerifyClientCert)");
	if ((c->client_auth == PROM_CLIENT_VERIFY_IF_GIVEN ||
	     c->client_auth == PROM_CLIENT_REQUIRE_VERIFY) && !c->client_ca_file && !c->client_ca)
		return fail(p, auth->line, "%s needs client_ca_file (the CA that signs the "
			    "scrapers' certificates)", client_auth_names[c->client_auth]);
	if (c->n_sans && c->client_auth != PROM_CLIENT_REQUIRE_ANY &&
	    c->client_auth != PROM_CLIENT_REQUIRE_VERIFY)
		return fail(p, map->line, "client_allowed_sans needs client_auth_type "
			    "RequireAnyClientCert or RequireAndVerifyClientCert");
	return 0;
}

static int http_section(struct yparser *p, const struct ynode *map, struct prom_web_config *c)
{
	if (map->kind == Y_NULL)
		return 0;
	if (map->kind != Y_MAP)
		return fail(p, map->line, "'http_server_config' holds keys");
	for (const struct ynode *n = map->child; n; n = n->next) {
		if (!strcmp(n->key, "http2")) {
			bool ignored;

			/* HTTP/1.1 is what libmicrohttpd speaks; Prometheus uses it */
			if (want_bool(p, n, &ignored))
				return -1;
			continue;
		}
		if (strcmp(n->key, "headers"))
			return fail(p, n->line, "unknown key '%s' in http_server_config", n->key);
		if (n->kind == Y_NULL)
			continue;
		if (n->kind != Y_MAP)
			return fail(p, n->line, "'headers' holds header names and values");
		for (const struct ynode *h = n->child; h; h = h->next) {
			unsigned i;

			for (i = 0; i < PROM_WEB_HEADERS && strcmp(h->key, prom_web_header_names[i]);
			     i++)
				;
			if (i == PROM_WEB_HEADERS)
				return fail(p, h->line, "header '%s' cannot be set (Content-Security-"
					    "Policy, X-Frame-Options, X-Content-Type-Options, "
					    "X-XSS-Protection, Strict-Transport-Security)", h->key);
			if (h->kind == Y_NULL)
				continue;
			if (h->kind != Y_SCALAR || strpbrk(h->value, "\r\n"))
				return fail(p, h->line, "'%s' takes one line of text", h->key);
			if (i == 1 && strcasecmp(h->value, "deny") && strcasecmp(h->value, "sameorigin"))
				return fail(p, h->line, "X-Frame-Options takes deny or sameorigin");
			if (i == 2 && strcasecmp(h->value, "nosniff"))
				return fail(p, h->line, "X-Content-Type-Options takes nosniff");
			free(c->headers[i]);
			c->headers[i] = h->value;
			((struct ynode *)h)->value = NULL;
		}
	}
	return 0;
}

static int users_section(struct yparser *p, const struct ynode *map, struct prom_web_config *c)
{
	if (map->kind == Y_NULL)
		return 0;
	if (map->kind != Y_MAP)
		return fail(p, map->line, "'basic_auth_users' holds user: bcrypt-hash lines");
	for (const struct ynode *n = map->child; n; n = n->next) {
		struct prom_web_user *u;

		if (strchr(n->key, ':') || strlen(n->key) > PROM_WEB_USER_MAX)
			return fail(p, n->line, "a user name has no ':' and at most %d characters",
				    PROM_WEB_USER_MAX);
		if (n->kind != Y_SCALAR || !is_bcrypt(n->value))
			return fail(p, n->line, "the password of '%s' is not a bcrypt hash "
				    "(htpasswd -nBC 10 \"\" | tr -d ':\\n' makes one)", n->key);
		if (c->n_users == PROM_WEB_USERS_MAX)
			return fail(p, n->line, "at most %d users", PROM_WEB_USERS_MAX);
		u = &c->users[c->n_users++];
		snprintf(u->name, sizeof(u->name), "%s", n->key);
		snprintf(u->hash, sizeof(u->hash), "%s", n->value);
	}
	return 0;
}

static int rate_section(struct yparser *p, const struct ynode *map, struct prom_web_config *c)
{
	if (map->kind == Y_NULL)
		return 0;
	if (map->kind != Y_MAP)
		return fail(p, map->line, "'rate_limit' holds interval and burst");
	for (const struct ynode *n = map->child; n; n = n->next) {
		if (!strcmp(n->key, "interval")) {
			if (n->kind != Y_SCALAR || prom_web_duration(n->value, &c->rate_interval_s) ||
			    c->rate_interval_s > 86400)
				return fail(p, n->line, "interval takes a duration (e.g. 100ms, 1s), "
					    "at most a day");
		} else if (!strcmp(n->key, "burst")) {
			char *end;
			unsigned long v = n->kind == Y_SCALAR ? strtoul(n->value, &end, 10) : 0;

			if (n->kind != Y_SCALAR || !isdigit((unsigned char)n->value[0]) || *end ||
			    v > 1000000)
				return fail(p, n->line, "burst takes a number of requests");
			c->rate_burst = (unsigned)v;
		} else
			return fail(p, n->line, "unknown key '%s' in rate_limit", n->key);
	}
	if (c->rate_interval_s > 0 && !c->rate_burst)
		c->rate_burst = 1;
	return 0;
}

void prom_web_config_free(struct prom_web_config *c)
{
	free(c->cert_file);
	free(c->key_file);
	free(c->client_ca_file);
	free(c->cert);
	free(c->key);
	free(c->client_ca);
	for (size_t i = 0; i < c->n_sans; i++)
		free(c->sans[i]);
	for (size_t i = 0; i < PROM_WEB_HEADERS; i++)
		free(c->headers[i]);
	memset(c->users, 0, sizeof(c->users)); /* the hashes do not linger */
	memset(c, 0, sizeof(*c));
}

int prom_web_parse(const char *text, size_t len, struct prom_web_config *c, char *why,
		   size_t why_len)
{
	struct yparser p = {.why = why, .why_len = why_len};
	struct ynode *root = NULL;
	int rc = 0;

	memset(c, 0, sizeof(*c));
	c->min_version = 12;
	c->max_version = 13;
	c->prefer_server_suites = true;
	if (why_len)
		why[0] = '\0';
	if (yaml_parse(&p, text, len, &root))
		rc = -1;
	for (const struct ynode *n = root ? root->child : NULL; !rc && n; n = n->next) {
		if (!strcmp(n->key, "tls_server_config"))
			rc = tls_section(&p, n, c);
		else if (!strcmp(n->key, "http_server_config"))
			rc = http_section(&p, n, c);
		else if (!strcmp(n->key, "basic_auth_users"))
			rc = users_section(&p, n, c);
		else if (!strcmp(n->key, "rate_limit"))
			rc = rate_section(&p, n, c);
		else
			rc = fail(&p, n->line, "unknown key '%s' (the file holds tls_server_config, "
				  "http_server_config, basic_auth_users and rate_limit)", n->key);
	}
	ynode_free(root);
	free(p.lines);
	if (rc)
		prom_web_config_free(c);
	return rc;
}

/* ---- GnuTLS' priority string ---------------------------------------------------------- */

static size_t put(char *out, size_t len, size_t at, const char *s)
{
	int n = snprintf(at < len ? out + at : NULL, at < len ? len - at : 0, "%s", s);

	return at + (n > 0 ? (size_t)n : 0);
}

static bool listed(const char *const *names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

int prom_web_priorities(const struct prom_web_config *c, char *out, size_t len, char *extra,
			size_t extra_len)
{
	static const char *const versions[] = {"VERS-TLS1.0", "VERS-TLS1.1", "VERS-TLS1.2",
					       "VERS-TLS1.3"};
	const char *kx[N_SUITES], *ciphers[N_SUITES + 3], *macs[N_SUITES + 1];
	size_t n_kx = 0, n_ciphers = 0, n_macs = 0, at = 0, at_extra = 0;
	bool tls13 = c->max_version >= 13;

	if (extra_len)
		extra[0] = '\0';
	at = put(out, len, at, "NORMAL:-VERS-ALL");
	for (unsigned v = c->max_version; v >= c->min_version && v >= 10; v--) {
		at = put(out, len, at, ":+");
		at = put(out, len, at, versions[v - 10]);
	}
	if (c->n_suites) {
		for (size_t i = 0; i < c->n_suites; i++) {
			const struct suite *s = &suites[c->suites[i]];

			if (!s->kx)
				continue; /* TLS 1.3's are always on, as in Go */
			if (!listed(kx, n_kx, s->kx))
				kx[n_kx++] = s->kx;
			if (!listed(ciphers, n_ciphers, s->cipher))
				ciphers[n_ciphers++] = s->cipher;
			if (!listed(macs, n_macs, s->mac))
				macs[n_macs++] = s->mac;
		}
		if (tls13) {
			for (size_t i = FIRST_ALIAS + 2; i < N_SUITES; i++)
				if (!listed(ciphers, n_ciphers, suites[i].cipher))
					ciphers[n_ciphers++] = suites[i].cipher;
			if (!listed(macs, n_macs, "AEAD"))
				macs[n_macs++] = "AEAD";
		}
		at = put(out, len, at, ":-KX-ALL:-CIPHER-ALL:-MAC-ALL");
		for (size_t i = 0; i < n_kx; i++)
			at = put(out, len, at, ":+"), at = put(out, len, at, kx[i]);
		for (size_t i = 0; i < n_ciphers; i++)
			at = put(out, len, at, ":+"), at = put(out, len, at, ciphers[i]);
		for (size_t i = 0; i < n_macs; i++)
			at = put(out, len, at, ":+"), at = put(out, len, at, macs[i]);
		/* the pairs GnuTLS makes of those parts that the list did not name */
		for (size_t i = 0; i < FIRST_ALIAS; i++) {
			const struct suite *s = &suites[i];
			bool named = false;

			if (!listed(kx, n_kx, s->kx) || !listed(ciphers, n_ciphers, s->cipher) ||
			    !listed(macs, n_macs, s->mac))
				continue;
			for (size_t j = 0; j < c->n_suites && !named; j++) {
				const struct suite *t = &suites[c->suites[j]];

				named = t->kx && !strcmp(t->kx, s->kx) &&
					!strcmp(t->cipher, s->cipher) && !strcmp(t->mac, s->mac);
			}
			if (!named) {
				at_extra = put(extra, extra_len, at_extra, at_extra ? ", " : "");
				at_extra = put(extra, extra_len, at_extra, s->go);
			}
		}
	} else {
		/* GnuTLS' NORMAL ciphers, in Go's order: AES-128-GCM first (Go's
		 * servers on CPUs with AES instructions); AES-256-GCM, GnuTLS' first,
		 * costs a quarter more to encrypt a scrape */
		at = put(out, len, at, ":-CIPHER-ALL:+AES-128-GCM:+CHACHA20-POLY1305:+AES-256-GCM"
				       ":+AES-128-CCM:+AES-256-CCM:+AES-128-CBC:+AES-256-CBC");
	}
	if (c->n_curves) {
		at = put(out, len, at, ":-GROUP-ALL");
		for (size_t i = 0; i < c->n_curves; i++)
			at = put(out, len, at, ":+"), at = put(out, len, at, curves[c->curves[i]][1]);
	}
	if (c->prefer_server_suites)
		at = put(out, len, at, ":%SERVER_PRECEDENCE");
	return at < len ? 0 : -1;
}

const char *prom_client_auth_name(enum prom_client_auth a)
{
	return a < PROM_CLIENT_AUTHS ? client_auth_names[a] : "?";
}
