/* ibsnmpd.conf tokens, read through net-snmp's config machinery so that the
 * file is found in the usual search path, -c works as in snmpd, and errors
 * come out as "file: line N: Error: ...". The core's tokens are declared
 * here; an area declares its own beside its code (area.h) and they are
 * handled the same way. */
#include "ibsnmpd/netsnmp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ibsnmpd/config.h"

static unsigned config_errors;

/* Every token table registered, and every cache group cacheLifetime knows. */
#define TABLES_MAX 32
static struct {
	const struct config_token *tokens;
	size_t n;
	void (*defaults)(void);
} tables[TABLES_MAX];
static size_t n_tables;

static const struct cache_decl *caches[CACHE_INDEX_MAX];
static size_t n_caches;

void config_report(const char *token, const char *value, const char *why)
{
	char msg[1024];

	snprintf(msg, sizeof(msg), "%s %s: %s", token, value ? value : "", why);
	config_perror(msg); /* prints "file: line N: Error: msg" */
	config_errors++;
}

static const struct config_token *find_token(const char *name)
{
	for (size_t t = 0; t < n_tables; t++)
		for (size_t i = 0; i < tables[t].n; i++)
			if (!strcasecmp(tables[t].tokens[i].name, name))
				return &tables[t].tokens[i];
	return NULL;
}

/* net-snmp's handler of every declared token: by its kind. */
static void handle_token(const char *token, char *line)
{
	const struct config_token *t = find_token(token);
	const char *why = NULL;
	char reason[96];
	unsigned u;

	if (!t)
		return;
	switch (t->kind) {
	case CONFIG_UINT:
		if (config_parse_uint(line, t->min, t->max, &u, &why)) {
			snprintf(reason, sizeof(reason), "%s (expected %u..%u)", why, t->min, t->max);
			config_report(token, line, reason);
			return;
		}
		*(unsigned *)t->value = u;
		return;
	case CONFIG_BOOL:
		if (config_parse_bool(line, t->value, &why))
			config_report(token, line, why);
		return;
	case CONFIG_PATH:
		if (config_parse_path(line, t->value, t->size, &why))
			config_report(token, line, why);
		return;
	case CONFIG_CUSTOM:
		t->parse(token, line);
		return;
	}
}

void config_defaults(void)
{
	for (size_t t = 0; t < n_tables; t++)
		if (tables[t].defaults)
			tables[t].defaults();
}

void config_register_tokens_of(const struct config_token *tokens, size_t n,
			       void (*defaults)(void))
{
	if (n_tables == TABLES_MAX)
		return;
	tables[n_tables].tokens = tokens;
	tables[n_tables].n = n;
	tables[n_tables].defaults = defaults;
	n_tables++;
	if (defaults)
		defaults();
	for (size_t i = 0; i < n; i++)
		/* the first token of all carries the reset of every table, which
		 * net-snmp calls before the files are (re)read: a line removed
		 * before SIGHUP stops having an effect */
		register_config_handler(NULL, tokens[i].name, handle_token,
					n_tables == 1 && i == 0 ? config_defaults : NULL,
					tokens[i].help);
}

void config_register_caches(const struct cache_decl *decls, size_t n)
{
	for (size_t i = 0; i < n && n_caches < CACHE_INDEX_MAX; i++)
		caches[n_caches++] = &decls[i];
}

unsigned config_cache_lifetime(const struct cache_decl *decl)
{
	unsigned s = decl->index < CACHE_INDEX_MAX ? ibsnmpd_cfg.cache_lifetime_s[decl->index] : 0;

	return s ? s : decl->default_lifetime_s;
}

/* ---- the core's tokens ---------------------------------------------------------- */

static void parse_ca(const char *token, char *line)
{
	char name[IBSNMPD_CA_NAME_MAX], extra[2];

	if (!line || sscanf(line, "%63s %1s", name, extra) != 1) {
		config_report(token, line, "expected one CA name (see ibstat -l)");
		return;
	}
	snprintf(ibsnmpd_cfg.ca_name, sizeof(ibsnmpd_cfg.ca_name), "%s", name);
}

/* fabricName NAME: letters, digits, '.', '_', '-' (a context name and a
 * Prometheus label value an operator types), not "ib-..." (nodes' contexts) */
static void parse_fabric_name(const char *token, char *line)
{
	char name[64] = "", extra[2];
	size_t n;

	if (!line || sscanf(line, "%63s %1s", name, extra) != 1 ||
	    (n = strlen(name)) >= IBSNMPD_FABRIC_NAME_MAX ||
	    strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") != n ||
	    !strncmp(name, "ib-", 3)) {
		config_report(token, line, "expected one name of 1-32 letters, digits, '.', '_' or "
					   "'-', not beginning with ib- (the nodes' contexts)");
		return;
	}
	memcpy(ibsnmpd_cfg.fabric_name, name, n + 1); /* n is under its size: checked above */
}

static void parse_port(const char *token, char *line)
{
	const char *why;
	unsigned v;

	if (config_parse_uint(line, 1, 254, &v, &why)) {
		char reason[96];

		snprintf(reason, sizeof(reason), "%s (expected 1..254)", why);
		config_report(token, line, reason);
		return;
	}
	ibsnmpd_cfg.port_num = (int)v;
}

static void parse_cache_lifetime(const char *token, char *line)
{
	unsigned s;
	size_t which;
	const char *why;

	if (config_parse_cache_lifetime(line, caches, n_caches, &which, &s, &why)) {
		config_report(token, line, why);
		return;
	}
	if (caches[which]->index < CACHE_INDEX_MAX)
		ibsnmpd_cfg.cache_lifetime_s[caches[which]->index] = s;
}

static void parse_notification_limit(const char *token, char *line)
{
	unsigned count, window;
	char a[32], b[32], extra[2];
	const char *why;

	if (!line || sscanf(line, "%31s %31s %1s", a, b, extra) != 2) {
		config_report(token, line, "expected: notificationLimit COUNT SECONDS");
		return;
	}
	if (config_parse_uint(a, 0, 1000000, &count, &why) ||
	    config_parse_uint(b, 1, 86400, &window, &why)) {
		config_report(token, line, why);
		return;
	}
	ibsnmpd_cfg.notify_limit_count = count;
	ibsnmpd_cfg.notify_limit_window_s = window;
}

static void parse_node_context_types(const char *token, char *line)
{
	const char *why;
	unsigned mask;

	if (config_parse_node_types(line, &mask, &why))
		config_report(token, line, why);
	else
		ibsnmpd_cfg.node_context_types = mask;
}

/* mKey KEY: as a GUID, up to 16 hex digits; never echoed */
static void parse_mkey(const char *token, char *line)
{
	const char *why;

	if (config_parse_guid(line, &ibsnmpd_cfg.mkey, &why))
		config_report(token, "(hidden)", "expected a key of up to 16 hexadecimal digits");
}

static void core_defaults(void)
{
	config_set_defaults(&ibsnmpd_cfg);
}

static const struct config_token core_tokens[] = {
	{"ca", CONFIG_CUSTOM, .parse = parse_ca, .help = "NAME"},
	{"port", CONFIG_CUSTOM, .parse = parse_port, .help = "PORTNUMBER"},
	{"fabricName", CONFIG_CUSTOM, .parse = parse_fabric_name, .help = "NAME"},
	{"madTimeout", CONFIG_UINT, &ibsnmpd_cfg.mad_timeout_ms, .min = 1, .max = 60000,
	 .help = "MILLISECONDS"},
	{"madTimeoutMax", CONFIG_UINT, &ibsnmpd_cfg.mad_timeout_max_ms, .min = 0, .max = 60000,
	 .help = "MILLISECONDS"},
	{"madRetries", CONFIG_UINT, &ibsnmpd_cfg.mad_retries, .min = 0, .max = 20, .help = "COUNT"},
	{"madMaxOutstanding", CONFIG_UINT, &ibsnmpd_cfg.mad_max_outstanding, .min = 1, .max = 1024,
	 .help = "COUNT"},
	{"madMaxPerDestination", CONFIG_UINT, &ibsnmpd_cfg.mad_max_per_destination, .min = 1,
	 .max = 1024, .help = "COUNT"},
	{"cacheLifetime", CONFIG_CUSTOM, .parse = parse_cache_lifetime, .help = "GROUP SECONDS"},
	{"exposeKeys", CONFIG_BOOL, &ibsnmpd_cfg.expose_keys, .help = "yes|no"},
	{"mKey", CONFIG_CUSTOM, .parse = parse_mkey, .help = "KEY"},
	{"mKeyFile", CONFIG_PATH, ibsnmpd_cfg.mkey_file, sizeof(ibsnmpd_cfg.mkey_file),
	 .help = "PATH"},
	{"notificationLimit", CONFIG_CUSTOM, .parse = parse_notification_limit,
	 .help = "COUNT SECONDS"},
	{"notificationQueue", CONFIG_UINT, &ibsnmpd_cfg.notify_queue, .min = 0, .max = 1000000,
	 .help = "COUNT"},
	{"notificationRate", CONFIG_UINT, &ibsnmpd_cfg.notify_rate, .min = 0, .max = 100000,
	 .help = "PER_SECOND"},
	{"loopWatchdog", CONFIG_UINT, &ibsnmpd_cfg.loop_watchdog_s, .min = 0, .max = 3600,
	 .help = "SECONDS"},
	{"nodeContextTypes", CONFIG_CUSTOM, .parse = parse_node_context_types,
	 .help = "switch|ca|router ...|none"},
};

/* net-snmp only warns about unknown tokens; count them as errors so that a
 * typo in ibsnmpd.conf stops the daemon instead of being ignored. */
static int count_unknown_tokens(int major, int minor, void *serverarg, void *clientarg)
{
	const struct snmp_log_message *m = serverarg;

	(void)major;
	(void)minor;
	(void)clientarg;
	if (m && m->msg && strstr(m->msg, "Unknown token"))
		config_errors++;
	return 0;
}

void config_register_tokens(void)
{
	config_register_tokens_of(core_tokens, sizeof(core_tokens) / sizeof(core_tokens[0]),
				  core_defaults);
	netsnmp_register_loghandler(NETSNMP_LOGHANDLER_CALLBACK, LOG_WARNING);
	snmp_register_callback(SNMP_CALLBACK_LIBRARY, SNMP_CALLBACK_LOGGING,
			       count_unknown_tokens, NULL);
}

unsigned config_error_count(void)
{
	return config_errors;
}

void config_reset_error_count(void)
{
	config_errors = 0;
}
