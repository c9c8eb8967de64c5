/* The partition area: opensm's partition policy, read, served, settable and
 * verified on the member ports. The verification reads the ports' LIDs and
 * links from the topology, and runs again when the first discovery is in
 * (before it, every member is "subnet not discovered yet"). */
#include "ibsnmpd/netsnmp.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "ibsnmpd/area.h"
#include "ibsnmpd/topology.h"

#include "pkey_policy.h"

struct pkey_config pkey_cfg;

static const struct cache_decl caches[] = {
	{16, "partitionStatus", 60, offsetof(struct pkey_policy, status)},
};

static void discovered(struct cache_group *g, const void *before, const void *after, void *arg)
{
	struct pkey_policy *pp = arg;

	(void)g;
	(void)after;
	if (!before) /* the first discovery */
		cache_group_refresh_now(&pp->status);
}

static void *start(const struct area_env *env)
{
	struct pkey_policy *pp;

	(void)env;
	pp = pkey_policy_start(topology_followed_by("the partition verifier"),
			       config_cache_lifetime(&caches[0]));
	if (!pp) {
		snmp_log(LOG_ERR, "cannot start the partition policy: out of memory\n");
		return NULL;
	}
	cache_group_observe(&pp->status, &pp->notified, pkey_notify_published, pp);
	if (pp->topology)
		cache_group_observe(pp->topology, &pp->discovered, discovered, pp);
	return pp;
}

static int register_handlers(void *self)
{
	struct pkey_policy *pp = self;

	return pkey_mib_register(&pp->mib, pp, NULL);
}

static void unregister_handlers(void *self)
{
	struct pkey_policy *pp = self;

	pkey_mib_unregister(&pp->mib);
}

static void reload(void *self)
{
	struct pkey_policy *pp = self;

	cache_group_set_lifetime(&pp->status, config_cache_lifetime(&caches[0]));
}

static void stop(void *self)
{
	struct pkey_policy *pp = self;

	if (pp->topology)
		cache_group_unobserve(pp->topology, &pp->discovered);
	pkey_policy_stop(pp);
}

static void parse_reload_command(const char *token, char *line)
{
	if (!line || !*line) {
		config_report(token, line, "expected a command line");
		return;
	}
	snprintf(pkey_cfg.opensm_reload_command, sizeof(pkey_cfg.opensm_reload_command), "%s",
		 line);
}

static void defaults(void)
{
	memset(&pkey_cfg, 0, sizeof(pkey_cfg));
	snprintf(pkey_cfg.partition_file, sizeof(pkey_cfg.partition_file),
		 "/etc/opensm/partitions.conf");
	pkey_cfg.verify_delay_s = 5;
}

static const struct config_token tokens[] = {
	{"partitionFile", CONFIG_PATH, pkey_cfg.partition_file, sizeof(pkey_cfg.partition_file),
	 .help = "PATH"},
	{"opensmPidFile", CONFIG_PATH, pkey_cfg.opensm_pid_file, sizeof(pkey_cfg.opensm_pid_file),
	 .help = "PATH"},
	{"opensmReloadCommand", CONFIG_CUSTOM, .parse = parse_reload_command, .help = "COMMAND"},
	{"partitionVerifyDelay", CONFIG_UINT, &pkey_cfg.verify_delay_s, .min = 1, .max = 3600,
	 .help = "SECONDS"},
};

static struct cache_group *alarm_group(void *self)
{
	return &((struct pkey_policy *)self)->status;
}

const struct area_def pkey_area_def = {
	.name = "the partition policy",
	AREA_CONFIG(tokens, pkey_cfg, defaults),
	AREA_CACHES(caches),
	.start = start,
	.register_mib = register_handlers,
	.reload = reload,
	.unregister_mib = unregister_handlers,
	.stop = stop,
	.alarm_group = alarm_group,
	.alarm_collect = pkey_alarms,
};
