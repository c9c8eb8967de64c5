/* ibsnmpd.conf's values: defaults and the parsers behind the tokens. Pure
 * (no net-snmp): config.c hands them each line, the unit tests and the
 * fuzz targets call them directly. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ibsnmpd/config.h"

struct ibsnmpd_config ibsnmpd_cfg;

void config_set_defaults(struct ibsnmpd_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->mad_timeout_ms = 1000; /* libibmad's and infiniband-diags' default */
	cfg->mad_retries = 2;
	/* OpenSM's PerfMgr keeps 500 queries in flight; a switch's agents
	 * answer one MAD at a time, so a few queued each keep them busy */
	cfg->mad_max_outstanding = 256;
	cfg->mad_max_per_destination = 4;
	cfg->expose_keys = false;
	cfg->notify_limit_count = 10;
	cfg->notify_limit_window_s = 60;
	cfg->notify_queue = 10000;
	cfg->notify_rate = 200;
	cfg->loop_watchdog_s = 5;
	/* the nodes without an agent of their own: hosts have theirs, and
	 * 40,000 CA contexts would fill snmpd and an NMS's device list */
	cfg->node_context_types = 1u << 2 | 1u << 3;
}

int config_parse_node_types(const char *text, unsigned *mask, const char **why)
{
	static const char *const names[] = {NULL, "ca", "switch", "router"};
	char word[16];
	int used;
	unsigned m = 0;
	bool none = false, any = false;

	while (text && sscanf(text, " %15s%n", word, &used) == 1) {
		unsigned t = 0;

		for (unsigned k = 1; k <= 3; k++)
			if (!strcasecmp(word, names[k]))
				t = k;
		if (!strcasecmp(word, "none"))
			none = true;
		else if (!t) {
			*why = "expected switch, ca, router or none";
			return -1;
		}
		m |= t ? 1u << t : 0;
		any = true;
		text += used;
	}
	if (!any || (none && m)) {
		*why = any ? "none goes alone" : "expected switch, ca, router or none";
		return -1;
	}
	*mask = m;
	return 0;
}

int config_parse_uint(const char *text, unsigned min, unsigned max, unsigned *out,
		      const char **why)
{
	char *end;
	unsigned long v;

	if (!text || !*text) {
		*why = "a number is missing";
		return -1;
	}
	errno = 0;
	v = strtoul(text, &end, 10);
	while (*end == ' ' || *end == '\t')
		end++;
	if (errno || *end || text[0] == '-' || text[0] == '+') {
		*why = "not a whole number";
		return -1;
	}
	if (v < min || v > max) {
		*why = "out of range";
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

int config_parse_bool(const char *text, bool *out, const char **why)
{
	static const char *const yes[] = {"yes", "true", "on", "1"};
	static const char *const no[] = {"no", "false", "off", "0"};
	char word[16];

	if (!text || sscanf(text, "%15s", word) != 1) {
		*why = "yes or no is missing";
		return -1;
	}
	for (size_t i = 0; i < 4; i++) {
		if (!strcasecmp(word, yes[i])) {
			*out = true;
			return 0;
		}
		if (!strcasecmp(word, no[i])) {
			*out = false;
			return 0;
		}
	}
	*why = "expected yes or no";
	return -1;
}

int config_parse_guid(const char *text, uint64_t *out, const char **why)
{
	char word[24], extra[2], *end;
	const char *digits = word;
	unsigned long long v;
	int n = text ? sscanf(text, "%23s %1s", word, extra) : 0;

	if (n != 1) {
		*why = n == 2 ? "one GUID per line" : "GUID is missing";
		return -1;
	}
	if (!strncasecmp(word, "0x", 2))
		digits = word + 2;
	if (!*digits || strlen(digits) > 16 || strspn(digits, "0123456789abcdefABCDEF") != strlen(digits)) {
		*why = "expected a GUID of up to 16 hexadecimal digits (0x0002c90300a1b2c3)";
		return -1;
	}
	v = strtoull(digits, &end, 16);
	*out = v;
	return 0;
}

int config_parse_cache_lifetime(const char *line, const struct cache_decl *const *decls,
				size_t n_decls, size_t *which, unsigned *seconds,
				const char **why)
{
	char name[32], value[32], extra[2];
	int n = line ? sscanf(line, "%31s %31s %1s", name, value, extra) : 0;

	if (n != 2) {
		*why = "expected: cacheLifetime GROUP SECONDS";
		return -1;
	}
	for (size_t g = 0; g < n_decls; g++) {
		if (!strcasecmp(name, decls[g]->name)) {
			*which = g;
			return config_parse_uint(value, 1, 86400, seconds, why);
		}
	}
	*why = "unknown cache group";
	return -1;
}

int config_parse_path(const char *text, char *out, size_t size, const char **why)
{
	const char *p = text, *end;
	size_t n;

	while (p && (*p == ' ' || *p == '\t'))
		p++;
	if (!p || *p != '/') {
		*why = "expected one absolute path";
		return -1;
	}
	end = p + strcspn(p, " \t\r\n");
	n = (size_t)(end - p);
	end += strspn(end, " \t\r\n");
	if (*end) {
		*why = "expected one absolute path";
		return -1;
	}
	if (n >= size) {
		static char too_long[64];

		snprintf(too_long, sizeof(too_long), "expected one absolute path (at most %zu "
			 "characters)", size - 1);
		*why = too_long;
		return -1;
	}
	memcpy(out, p, n);
	out[n] = '\0';
	return 0;
}

bool config_text_has_token(const char *text, size_t len, const char *token)
{
	size_t tlen = strlen(token);
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p));
		const char *q = p;

		if (!eol)
			eol = end;
		while (q < eol && (*q == ' ' || *q == '\t'))
			q++;
		if ((size_t)(eol - q) > tlen && !strncasecmp(q, token, tlen) &&
		    (q[tlen] == ' ' || q[tlen] == '\t'))
			return true;
		p = eol + 1;
	}
	return false;
}
