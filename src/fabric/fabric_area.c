/* The fabric area: every link of the subnet (fabricEnable). It follows the
 * topology (a new node list is swept at once) and the traps (a trap 128
 * has the switch read again within a second); each build reads the PM
 * area's last counters for the links' health (fabric_health.c); its
 * notifications come from an observer of its own group (fabric_notify.c). */
#include "ibsnmpd/netsnmp.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/area.h"
#include "ibsnmpd/fabric.h"
#include "ibsnmpd/pm.h"

static struct fabric_config {
	bool enabled;             /* fabricEnable */
	char state_file[4096];    /* fabricStateFile: the baseline ("" = net-snmp's persistent dir) */
	bool baseline_reset;      /* fabricBaselineReset: forget the saved baseline at start and SIGHUP */
	struct fabric_health_config health; /* berWindow, berThreshold, flapThreshold */
} cfg;

static const struct cache_decl caches[] = {
	{18, "fabricPorts", 15, offsetof(struct fabric_area, group)},
};

static void discovered(struct cache_group *g, const void *before, const void *after, void *arg)
{
	(void)g;
	fabric_sweep_discovered(arg, before, after);
}

static void trap_seen(const struct notice *n, const char *via, void *arg)
{
	(void)via;
	if (n->is_generic && n->trap_number == 128)
		fabric_link_trap(arg, n->lid);
}

static void *start(const struct area_env *env)
{
	struct cache_group *topology = topology_followed_by("the link sweeps");
	struct fabric_area *a = topology ? calloc(1, sizeof(*a)) : NULL;
	struct pm_area *pm;

	(void)env;
	if (!a)
		return NULL;
	a->topology = topology;
	a->health = cfg.health;
	pm = area_find(&pm_area_def);
	a->counters = pm ? &pm->sweep : NULL; /* started before: areas.c */
	fabric_sweep_init(a, config_cache_lifetime(&caches[0]), cfg.state_file, cfg.baseline_reset);
	cache_group_observe(&a->group, &a->notified, fabric_notify_published, a);
	cache_group_observe(a->topology, &a->discovered, discovered, a);
	a->traps = area_find(&trap_area_def);
	if (a->traps)
		trap_observe(a->traps, &a->trap_seen, trap_seen, a);
	fabric_sweep_discovered(a, NULL, cache_snapshot(topology)); /* one may be in already */
	return a;
}

static int register_handlers(void *self)
{
	struct fabric_area *a = self;

	return fabric_mib_register(&a->mib, a, NULL);
}

static void unregister_handlers(void *self)
{
	struct fabric_area *a = self;

	fabric_mib_unregister(&a->mib);
}

static void reload(void *self)
{
	struct fabric_area *a = self;

	a->health = cfg.health;
	fabric_sweep_apply_config(self, config_cache_lifetime(&caches[0]), cfg.state_file,
				  cfg.baseline_reset);
}

static void stop(void *self)
{
	struct fabric_area *a = self;

	cache_group_unobserve(a->topology, &a->discovered);
	if (a->traps)
		trap_unobserve(a->traps, &a->trap_seen);
	fabric_sweep_stop(a);
	free(a);
}

static bool wanted(void)
{
	return cfg.enabled;
}

static void defaults(void)
{
	memset(&cfg, 0, sizeof(cfg));
	cfg.enabled = true;
	fabric_health_defaults(&cfg.health);
}

/* "berThreshold RAW POST": two rates, e.g. 1e-5 1e-12 */
static void parse_ber_threshold(const char *token, char *line)
{
	char *end;
	double raw = strtod(line, &end), post = end != line ? strtod(end, &end) : 0;

	while (*end == ' ' || *end == '\t')
		end++;
	if (*end || !(raw > 0 && raw < 1) || !(post > 0 && post < 1)) {
		config_report(token, line, "give two bit error rates between 0 and 1, "
					   "before and after FEC (e.g. 1e-5 1e-12)");
		return;
	}
	cfg.health.ber_raw_max = raw;
	cfg.health.ber_post_max = post;
}

/* "flapThreshold N MINUTES": more than N downs in MINUTES */
static void parse_flap_threshold(const char *token, char *line)
{
	unsigned downs, minutes;
	int used = 0;

	if (sscanf(line, "%u %u %n", &downs, &minutes, &used) != 2 || line[used] ||
	    downs < 1 || downs >= FABRIC_FLAP_KEPT || minutes < 1 || minutes > 1440) {
		config_report(token, line, "give N (1-7) downs and MINUTES (1-1440)");
		return;
	}
	cfg.health.flap_downs = downs;
	cfg.health.flap_minutes = minutes;
}

static const struct config_token tokens[] = {
	{"fabricEnable", CONFIG_BOOL, &cfg.enabled, .help = "yes|no"},
	{"fabricStateFile", CONFIG_PATH, cfg.state_file, sizeof(cfg.state_file), .help = "PATH"},
	{"fabricBaselineReset", CONFIG_BOOL, &cfg.baseline_reset, .help = "yes|no"},
	{"berWindow", CONFIG_UINT, &cfg.health.ber_window_s, .min = 10, .max = 86400,
	 .help = "SECONDS"},
	{"berThreshold", CONFIG_CUSTOM, .parse = parse_ber_threshold, .help = "RAW POST"},
	{"flapThreshold", CONFIG_CUSTOM, .parse = parse_flap_threshold, .help = "N MINUTES"},
};

static struct cache_group *alarm_group(void *self)
{
	return &((struct fabric_area *)self)->group;
}

const struct area_def fabric_area_def = {
	.name = "the link sweeps",
	AREA_CONFIG(tokens, cfg, defaults),
	.wanted = wanted,
	.enable_token = "fabricEnable",
	AREA_CACHES(caches),
	.start = start,
	.register_mib = register_handlers,
	.reload = reload,
	.unregister_mib = unregister_handlers,
	.stop = stop,
	.alarm_group = alarm_group,
	.alarm_collect = fabric_alarms,
};
