/* prometheusWebConfig: the exporter-toolkit's web configuration file
 * (prom_internal.h). Pure: unit-tested and fuzzed.
 *
 * The file is YAML, read by libyaml's parser into a small tree of maps,
 * lists and scalars; the subset the format needs is kept: block and flow
 * mappings of keys (a flow mapping only empty, "{}"), lists of scalars,
 * plain and quoted scalars, literal block scalars (an inline PEM),
 * comments. Anything else (anchors, aliases, tags, folded scalars, several
 * documents) is refused with its line, as the exporter-toolkit refuses keys
 * it does not know. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

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

struct yparser {
	yaml_parser_t yaml;
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

static unsigned line_of(const yaml_event_t *e)
{
	return (unsigned)e->start_mark.line + 1;
}

/* The next event, or the parser's complaint with its line. */
static int next_event(struct yparser *p, yaml_event_t *e)
{
	const yaml_parser_t *y = &p->yaml;

	if (yaml_parser_parse(&p->yaml, e))
		return 0;
	if (y->error == YAML_MEMORY_ERROR)
		return fail(p, 0, "out of memory");
	if (y->context && y->context_mark.line != y->problem_mark.line)
		return fail(p, (unsigned)y->context_mark.line + 1, "%s, %s at line %u", y->context,
			    y->problem ? y->problem : "not YAML", (unsigned)y->problem_mark.line + 1);
	if (y->context)
		return fail(p, (unsigned)y->context_mark.line + 1, "%s, %s", y->context,
			    y->problem ? y->problem : "not YAML");
	return fail(p, (unsigned)y->problem_mark.line + 1, "%s",
		    y->problem ? y->problem : "not YAML");
}

static int refused(struct yparser *p, unsigned line, char what)
{
	return fail(p, line, "'%c' starts a YAML construct this file does not use (anchors, "
		    "aliases, tags, flow mappings, folded blocks)", what);
}

/* A node with an anchor or a tag: refused. */
static int unadorned(struct yparser *p, const yaml_event_t *e, const yaml_char_t *anchor,
		     const yaml_char_t *tag)
{
	if (anchor)
		return refused(p, line_of(e), '&');
	if (tag)
		return refused(p, line_of(e), '!');
	return 0;
}

/* A scalar's text; NULL for YAML's null ("", "~", "null" unquoted). */
static int scalar_text(struct yparser *p, const yaml_event_t *e, char **out)
{
	const char *v = (const char *)e->data.scalar.value;
	size_t n = e->data.scalar.length;

	*out = NULL;
	if (unadorned(p, e, e->data.scalar.anchor, e->data.scalar.tag))
		return -1;
	if (e->data.scalar.style == YAML_FOLDED_SCALAR_STYLE)
		return refused(p, line_of(e), '>');
	if (memchr(v, '\0', n))
		return fail(p, line_of(e), "a value with a NUL in it");
	if (e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
	    (!n || (n == 1 && v[0] == '~') || (n == 4 && !memcmp(v, "null", 4))))
		return 0;
	if (!(*out = strndup(v, n)))
		return fail(p, 0, "out of memory");
	return 0;
}

static int value_from(struct yparser *p, yaml_event_t *e, struct ynode *n);

/* A list's items, scalars, to its end. */
static int list_items(struct yparser *p, struct ynode *list)
{
	struct ynode **tail = &list->child;

	for (;;) {
		yaml_event_t e;
		struct ynode *item;
		int rc;

		if (next_event(p, &e))
			return -1;
		if (e.type == YAML_SEQUENCE_END_EVENT) {
			yaml_event_delete(&e);
			return 0;
		}
		if (!(item = ynode_new(Y_NULL, line_of(&e)))) {
			yaml_event_delete(&e);
			return fail(p, 0, "out of memory");
		}
		*tail = item;
		tail = &item->next;
		rc = value_from(p, &e, item);
		yaml_event_delete(&e);
		if (rc)
			return -1;
		if (item->kind != Y_SCALAR)
			return fail(p, item->line, "a list here holds values, not lists, maps or "
				    "empty items");
	}
}

/* A map's entries, keys and values, to its end; an entry's line is its
 * key's. */
static int map_entries(struct yparser *p, struct ynode *map)
{
	struct ynode **tail = &map->child;

	for (;;) {
		yaml_event_t e;
		struct ynode *entry;
		char *key = NULL;
		int rc;

		if (next_event(p, &e))
			return -1;
		if (e.type == YAML_MAPPING_END_EVENT) {
			yaml_event_delete(&e);
			return 0;
		}
		if (e.type != YAML_SCALAR_EVENT) {
			rc = fail(p, line_of(&e), "a key is a name, not a list or a map");
			yaml_event_delete(&e);
			return rc;
		}
		rc = scalar_text(p, &e, &key);
		if (!rc && !key)
			rc = fail(p, line_of(&e), "a key without a name");
		for (const struct ynode *k = map->child; !rc && k; k = k->next)
			if (!strcmp(k->key, key))
				rc = fail(p, line_of(&e), "'%s' is given twice (first on line %u)", key,
					  k->line);
		if (rc || !(entry = ynode_new(Y_NULL, line_of(&e)))) {
			free(key);
			yaml_event_delete(&e);
			return rc ? rc : fail(p, 0, "out of memory");
		}
		yaml_event_delete(&e);
		entry->key = key;
		*tail = entry;
		tail = &entry->next;
		if (next_event(p, &e))
			return -1;
		rc = value_from(p, &e, entry);
		yaml_event_delete(&e);
		if (rc)
			return -1;
	}
}

/* The value whose first event is e, into n: its kind, its text, its
 * entries. */
static int value_from(struct yparser *p, yaml_event_t *e, struct ynode *n)
{
	int rc;

	switch (e->type) {
	case YAML_SCALAR_EVENT:
		if (scalar_text(p, e, &n->value))
			return -1;
		n->kind = n->value ? Y_SCALAR : Y_NULL;
		return 0;
	case YAML_ALIAS_EVENT: return refused(p, line_of(e), '*');
	case YAML_SEQUENCE_START_EVENT:
		if (unadorned(p, e, e->data.sequence_start.anchor, e->data.sequence_start.tag))
			return -1;
		n->kind = Y_LIST;
		break;
	case YAML_MAPPING_START_EVENT:
		if (unadorned(p, e, e->data.mapping_start.anchor, e->data.mapping_start.tag))
			return -1;
		n->kind = Y_MAP;
		break;
	default: return fail(p, line_of(e), "not a value");
	}
	if (++p->depth > YAML_DEPTH_MAX)
		return fail(p, line_of(e), "nested more than %u deep", YAML_DEPTH_MAX);
	rc = n->kind == Y_LIST ? list_items(p, n) : map_entries(p, n);
	p->depth--;
	/* a flow mapping only as "{}": an empty map */
	if (!rc && n->kind == Y_MAP && n->child &&
	    e->data.mapping_start.style == YAML_FLOW_MAPPING_STYLE)
		return refused(p, line_of(e), '{');
	return rc;
}

/* The file: one document, a map of keys from the first column (or
 * nothing). */
static int yaml_tree(struct yparser *p, struct ynode *root)
{
	yaml_event_t e;
	int rc = 0;

	if (next_event(p, &e)) /* the stream's start */
		return -1;
	yaml_event_delete(&e);
	if (next_event(p, &e))
		return -1;
	if (e.type == YAML_STREAM_END_EVENT) {
		yaml_event_delete(&e);
		return 0; /* nothing: every default */
	}
	yaml_event_delete(&e); /* the document's start */
	if (next_event(p, &e))
		return -1;
	if (e.type == YAML_SEQUENCE_START_EVENT)
		rc = fail(p, line_of(&e), "the file is a map of keys, not a list");
	else if (e.type == YAML_MAPPING_START_EVENT && e.start_mark.column)
		rc = fail(p, line_of(&e), "the file's keys must start in the first column");
	else if (e.type == YAML_MAPPING_START_EVENT)
		rc = value_from(p, &e, root);
	else if (e.type != YAML_SCALAR_EVENT || e.data.scalar.length)
		rc = fail(p, line_of(&e), "the file is a map of keys");
	yaml_event_delete(&e);
	if (rc || next_event(p, &e)) /* the document's end */
		return -1;
	yaml_event_delete(&e);
	if (next_event(p, &e))
		return -1;
	if (e.type != YAML_STREAM_END_EVENT)
		rc = fail(p, line_of(&e), "one YAML document only");
	yaml_event_delete(&e);
	return rc;
}

static int yaml_parse(struct yparser *p, const char *text, size_t len, struct ynode **root)
{
	int rc;

	if (!(*root = ynode_new(Y_MAP, 1)))
		return fail(p, 0, "out of memory");
	if (!yaml_parser_initialize(&p->yaml))
		return fail(p, 0, "out of memory");
	yaml_parser_set_input_string(&p->yaml, (const unsigned char *)text, len);
	rc = yaml_tree(p, *root);
	yaml_parser_delete(&p->yaml);
	return rc;
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
