/* ibsnmpd.conf tokens, read through net-snmp's config machinery so that the
 * file is found in the usual search path, -c works as in snmpd, and errors
 * come out as "file: line N: Error: ...". */
#include "ibsnmpd/netsnmp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ibsnmpd/config.h"

static unsigned config_errors;

static void report(const char *token, const char *value, const char *why)
{
	char msg[256];

	snprintf(msg, sizeof(msg), "%s %s: %s", token, value ? value : "", why);
	config_perror(msg); /* prints "file: line N: Error: msg" */
	config_errors++;
}

static void parse_ca(const char *token, char *line)
{
	char name[IBSNMPD_CA_NAME_MAX], extra[2];

	if (!line || sscanf(line, "%63s %1s", name, extra) != 1) {
		report(token, line, "expected one CA name (see ibstat -l)");
		return;
	}
	snprintf(ibsnmpd_cfg.ca_name, sizeof(ibsnmpd_cfg.ca_name), "%s", name);
}

static void parse_uint_token(const char *token, char *line, unsigned min, unsigned max,
			     unsigned *dst)
{
	const char *why;
	unsigned v;

	if (config_parse_uint(line, min, max, &v, &why)) {
		char reason[96];

		snprintf(reason, sizeof(reason), "%s (expected %u..%u)", why, min, max);
		report(token, line, reason);
		return;
	}
	*dst = v;
}

static void parse_port(const char *token, char *line)
{
	unsigned v;

	v = 0;
	parse_uint_token(token, line, 1, 254, &v);
	if (v)
		ibsnmpd_cfg.port_num = (int)v;
}

static void parse_mad_timeout(const char *token, char *line)
{
	parse_uint_token(token, line, 1, 60000, &ibsnmpd_cfg.mad_timeout_ms);
}

static void parse_mad_retries(const char *token, char *line)
{
	parse_uint_token(token, line, 0, 20, &ibsnmpd_cfg.mad_retries);
}

static void parse_mad_outstanding(const char *token, char *line)
{
	parse_uint_token(token, line, 1, 1024, &ibsnmpd_cfg.mad_max_outstanding);
}

static void parse_mad_per_destination(const char *token, char *line)
{
	parse_uint_token(token, line, 1, 1024, &ibsnmpd_cfg.mad_max_per_destination);
}

static void parse_cache_lifetime(const char *token, char *line)
{
	enum cache_group_id g;
	unsigned s;
	const char *why;

	if (config_parse_cache_lifetime(line, &g, &s, &why)) {
		report(token, line, why);
		return;
	}
	ibsnmpd_cfg.cache_lifetime_s[g] = s;
}

static void parse_pm_enable(const char *token, char *line)
{
	const char *why;

	if (config_parse_bool(line, &ibsnmpd_cfg.pm_enabled, &why))
		report(token, line, why);
}

static void parse_pm_discovery_interval(const char *token, char *line)
{
	parse_uint_token(token, line, 10, 86400, &ibsnmpd_cfg.pm_discovery_interval_s);
}

static void parse_pm_sample_node(const char *token, char *line)
{
	const char *why;
	uint64_t guid;

	if (config_parse_guid(line, &guid, &why)) {
		report(token, line, why);
		return;
	}
	if (ibsnmpd_cfg.n_pm_sample_nodes == IBSNMPD_SAMPLE_NODES_MAX) {
		report(token, line, "too many pmSampleNode lines (at most 256)");
		return;
	}
	ibsnmpd_cfg.pm_sample_nodes[ibsnmpd_cfg.n_pm_sample_nodes++] = guid;
}

static void parse_bool_token(const char *token, char *line, bool *out)
{
	const char *why;

	if (config_parse_bool(line, out, &why))
		report(token, line, why);
}

static void parse_trap_subscribe(const char *token, char *line)
{
	parse_bool_token(token, line, &ibsnmpd_cfg.trap_subscribe);
}

static void parse_traps_from_counters(const char *token, char *line)
{
	parse_bool_token(token, line, &ibsnmpd_cfg.traps_from_counters);
}

static void parse_sa_key(const char *token, char *line)
{
	const char *why;

	/* same syntax as a GUID: up to 16 hex digits */
	if (config_parse_guid(line, &ibsnmpd_cfg.sa_key, &why)) {
		report(token, "(hidden)", "expected a key of up to 16 hexadecimal digits");
		return;
	}
	ibsnmpd_cfg.sa_key_set = true;
}

static void parse_trap_resubscribe(const char *token, char *line)
{
	parse_uint_token(token, line, 1, 86400, &ibsnmpd_cfg.trap_resubscribe_s);
}

static void parse_notification_limit(const char *token, char *line)
{
	unsigned count, window;
	char a[32], b[32], extra[2];
	const char *why;

	if (!line || sscanf(line, "%31s %31s %1s", a, b, extra) != 2) {
		report(token, line, "expected: notificationLimit COUNT SECONDS");
		return;
	}
	if (config_parse_uint(a, 0, 1000000, &count, &why) ||
	    config_parse_uint(b, 1, 86400, &window, &why)) {
		report(token, line, why);
		return;
	}
	ibsnmpd_cfg.notify_limit_count = count;
	ibsnmpd_cfg.notify_limit_window_s = window;
}

static void parse_osm_log_file(const char *token, char *line)
{
	char path[sizeof(ibsnmpd_cfg.osm_log_file)], extra[2];

	if (!line || sscanf(line, "%4095s %1s", path, extra) != 1 || path[0] != '/') {
		report(token, line, "expected one absolute path");
		return;
	}
	snprintf(ibsnmpd_cfg.osm_log_file, sizeof(ibsnmpd_cfg.osm_log_file), "%s", path);
}

static void parse_path_token(const char *token, char *line, char *out, size_t outlen)
{
	char extra[2];
	char *path = malloc(outlen);

	if (!path)
		return;
	if (!line || sscanf(line, "%4095s %1s", path, extra) != 1 || path[0] != '/' ||
	    strlen(path) >= outlen) {
		report(token, line, "expected one absolute path");
	} else {
		snprintf(out, outlen, "%s", path);
	}
	free(path);
}

static void parse_pm_discovery_helper(const char *token, char *line)
{
	parse_path_token(token, line, ibsnmpd_cfg.pm_discovery_helper,
			 sizeof(ibsnmpd_cfg.pm_discovery_helper));
}

static void parse_partition_file(const char *token, char *line)
{
	parse_path_token(token, line, ibsnmpd_cfg.partition_file,
			 sizeof(ibsnmpd_cfg.partition_file));
}

static void parse_opensm_pid_file(const char *token, char *line)
{
	parse_path_token(token, line, ibsnmpd_cfg.opensm_pid_file,
			 sizeof(ibsnmpd_cfg.opensm_pid_file));
}

static void parse_opensm_reload_command(const char *token, char *line)
{
	if (!line || !*line) {
		report(token, line, "expected a command line");
		return;
	}
	snprintf(ibsnmpd_cfg.opensm_reload_command, sizeof(ibsnmpd_cfg.opensm_reload_command),
		 "%s", line);
}

static void parse_partition_verify_delay(const char *token, char *line)
{
	parse_uint_token(token, line, 1, 3600, &ibsnmpd_cfg.partition_verify_delay_s);
}

static void parse_expose_keys(const char *token, char *line)
{
	const char *why;

	if (config_parse_bool(line, &ibsnmpd_cfg.expose_keys, &why))
		report(token, line, why);
}

/* Called by net-snmp before the files are (re)read: back to defaults so that
 * a line removed before SIGHUP stops having an effect. */
static void reset_all(void)
{
	config_set_defaults(&ibsnmpd_cfg);
}

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

static void parse_dcbx_enable(const char *token, char *line)
{
	parse_bool_token(token, line, &ibsnmpd_cfg.dcbx_enabled);
}

static void parse_dcbx_interface(const char *token, char *line)
{
	char name[64], extra[2];

	if (sscanf(line, "%63s %1s", name, extra) != 1 || strlen(name) >= 16) {
		report(token, line, "expected one interface name (at most 15 characters)");
		return;
	}
	if (ibsnmpd_cfg.n_dcbx_interfaces == 32) {
		report(token, line, "too many dcbxInterface lines (at most 32)");
		return;
	}
	memcpy(ibsnmpd_cfg.dcbx_interfaces[ibsnmpd_cfg.n_dcbx_interfaces++], name,
	       strlen(name) + 1); /* < 16: checked above */
}

static void parse_dcbx_socket(const char *token, char *line)
{
	char path[sizeof(ibsnmpd_cfg.dcbx_socket)], extra[2];

	if (sscanf(line, "%107s %1s", path, extra) != 1 || path[0] != '/') {
		report(token, line, "expected one absolute path (at most 107 characters)");
		return;
	}
	snprintf(ibsnmpd_cfg.dcbx_socket, sizeof(ibsnmpd_cfg.dcbx_socket), "%s", path);
}

static void parse_fabric_enable(const char *token, char *line)
{
	parse_bool_token(token, line, &ibsnmpd_cfg.fabric_enabled);
}

static void parse_fabric_state_file(const char *token, char *line)
{
	parse_path_token(token, line, ibsnmpd_cfg.fabric_state_file,
			 sizeof(ibsnmpd_cfg.fabric_state_file));
}

static void parse_fabric_baseline_reset(const char *token, char *line)
{
	parse_bool_token(token, line, &ibsnmpd_cfg.fabric_baseline_reset);
}

static void parse_node_context_types(const char *token, char *line)
{
	const char *why;
	unsigned mask;

	if (config_parse_node_types(line, &mask, &why))
		report(token, line, why);
	else
		ibsnmpd_cfg.node_context_types = mask;
}

static void parse_node_context_hold(const char *token, char *line)
{
	parse_uint_token(token, line, 0, 30 * 86400, &ibsnmpd_cfg.node_context_hold_s);
}

static void parse_node_context_idle(const char *token, char *line)
{
	parse_uint_token(token, line, 10, 86400, &ibsnmpd_cfg.node_context_idle_s);
}

void config_register_tokens(void)
{
	config_set_defaults(&ibsnmpd_cfg);
	register_config_handler(NULL, "ca", parse_ca, reset_all, "NAME");
	register_config_handler(NULL, "port", parse_port, NULL, "PORTNUMBER");
	register_config_handler(NULL, "madTimeout", parse_mad_timeout, NULL, "MILLISECONDS");
	register_config_handler(NULL, "madRetries", parse_mad_retries, NULL, "COUNT");
	register_config_handler(NULL, "madMaxOutstanding", parse_mad_outstanding, NULL, "COUNT");
	register_config_handler(NULL, "madMaxPerDestination", parse_mad_per_destination, NULL,
				"COUNT");
	register_config_handler(NULL, "cacheLifetime", parse_cache_lifetime, NULL,
				"GROUP SECONDS");
	register_config_handler(NULL, "exposeKeys", parse_expose_keys, NULL, "yes|no");
	register_config_handler(NULL, "pmEnable", parse_pm_enable, NULL, "yes|no");
	register_config_handler(NULL, "pmDiscoveryInterval", parse_pm_discovery_interval, NULL,
				"SECONDS");
	register_config_handler(NULL, "pmSampleNode", parse_pm_sample_node, NULL, "NODEGUID");
	register_config_handler(NULL, "pmDiscoveryHelper", parse_pm_discovery_helper, NULL, "PATH");
	register_config_handler(NULL, "trapSubscribe", parse_trap_subscribe, NULL, "yes|no");
	register_config_handler(NULL, "saKey", parse_sa_key, NULL, "KEY");
	register_config_handler(NULL, "trapResubscribeInterval", parse_trap_resubscribe, NULL,
				"SECONDS");
	register_config_handler(NULL, "notificationLimit", parse_notification_limit, NULL,
				"COUNT SECONDS");
	register_config_handler(NULL, "osmLogFile", parse_osm_log_file, NULL, "PATH");
	register_config_handler(NULL, "trapsFromCounters", parse_traps_from_counters, NULL,
				"yes|no");
	register_config_handler(NULL, "partitionFile", parse_partition_file, NULL, "PATH");
	register_config_handler(NULL, "opensmPidFile", parse_opensm_pid_file, NULL, "PATH");
	register_config_handler(NULL, "opensmReloadCommand", parse_opensm_reload_command, NULL,
				"COMMAND");
	register_config_handler(NULL, "partitionVerifyDelay", parse_partition_verify_delay, NULL,
				"SECONDS");
	register_config_handler(NULL, "dcbxEnable", parse_dcbx_enable, NULL, "yes|no");
	register_config_handler(NULL, "dcbxInterface", parse_dcbx_interface, NULL, "IFNAME");
	register_config_handler(NULL, "dcbxSocket", parse_dcbx_socket, NULL, "PATH");
	register_config_handler(NULL, "fabricEnable", parse_fabric_enable, NULL, "yes|no");
	register_config_handler(NULL, "fabricStateFile", parse_fabric_state_file, NULL, "PATH");
	register_config_handler(NULL, "fabricBaselineReset", parse_fabric_baseline_reset, NULL,
				"yes|no");
	register_config_handler(NULL, "nodeContextTypes", parse_node_context_types, NULL,
				"switch|ca|router ...|none");
	register_config_handler(NULL, "nodeContextHold", parse_node_context_hold, NULL, "SECONDS");
	register_config_handler(NULL, "nodeContextIdle", parse_node_context_idle, NULL, "SECONDS");

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
