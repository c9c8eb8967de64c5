/* The vitals area: the hardware of every node (vitalsEnable). It follows
 * the topology (a discovery's new nodes are inventoried, then read at
 * once); its readings are swept every vitalsSensors; its notifications
 * come from an observer of its readings (vitals_notify.c). */
#include "ibsnmpd/netsnmp.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ibsnmpd/area.h"
#include "ibsnmpd/vitals.h"

static struct vitals_config {
	bool enabled;       /* vitalsEnable */
	unsigned types;     /* vitalsNodes: 1 << node type read */
} cfg;

/* The inventory is read once a node appears; its lifetime is how old it
 * may grow before it is read again anyway (a day). */
static const struct cache_decl caches[] = {
	{19, "vitalsInventory", 86400, offsetof(struct vitals_area, inventory)},
	{20, "vitalsSensors", 60, offsetof(struct vitals_area, readings)},
};

/* A discovery: its new nodes inventoried, every node read; a topology
 * patched after a change: what it names only (vitals_sweep_patched) */
static void discovered(struct cache_group *g, const void *before, const void *after, void *arg)
{
	struct vitals_area *a = arg;
	const struct topology *f = after;

	(void)g;
	if (f && f->patched_from && cache_snapshot(&a->inventory)) {
		vitals_sweep_patched(a, before, f);
		return;
	}
	if (topology_patch_adds_no_node(after))
		return; /* nothing new to inventory */
	vitals_sweep_discovered(a);
}

static void *start(const struct area_env *env)
{
	struct cache_group *topology = topology_followed_by("the vitals sweeps");
	struct vitals_area *a = topology ? calloc(1, sizeof(*a)) : NULL;

	(void)env;
	if (!a)
		return NULL;
	a->topology = topology;
	a->types_mask = cfg.types;
	vitals_sweep_init(a, config_cache_lifetime(&caches[0]), config_cache_lifetime(&caches[1]));
	cache_group_observe(&a->readings, &a->notified, vitals_notify_published, a);
	cache_group_observe(a->topology, &a->discovered, discovered, a);
	if (cache_snapshot(a->topology)) /* a discovery is in already */
		vitals_sweep_discovered(a);
	return a;
}

static int register_handlers(void *self)
{
	struct vitals_area *a = self;

	return vitals_mib_register(&a->mib, a, NULL);
}

static void unregister_handlers(void *self)
{
	struct vitals_area *a = self;

	vitals_mib_unregister(&a->mib);
}

static void reload(void *self)
{
	struct vitals_area *a = self;

	cache_group_set_lifetime(&a->inventory, config_cache_lifetime(&caches[0]));
	cache_group_set_lifetime(&a->readings, config_cache_lifetime(&caches[1]));
	if (a->types_mask != cfg.types) {
		a->types_mask = cfg.types;
		a->inventory_all = true; /* nodes in or out: all asked again */
		if (!a->inventory.refreshing)
			cache_group_refresh_now(&a->inventory);
	}
}

static void stop(void *self)
{
	struct vitals_area *a = self;

	cache_group_unobserve(a->topology, &a->discovered);
	vitals_sweep_stop(a);
	free(a);
}

static bool wanted(void)
{
	return cfg.enabled;
}

/* "vitalsNodes switches|all" (routers go with switches: they have cages
 * and fans too) */
static void parse_nodes(const char *token, char *line)
{
	if (!strcasecmp(line, "switches"))
		cfg.types = 1u << 2 | 1u << 3;
	else if (!strcasecmp(line, "all"))
		cfg.types = 1u << 1 | 1u << 2 | 1u << 3;
	else
		config_report(token, line, "give switches or all");
}

static void defaults(void)
{
	memset(&cfg, 0, sizeof(cfg));
	cfg.enabled = true;
	cfg.types = 1u << 1 | 1u << 2 | 1u << 3;
}

static const struct config_token tokens[] = {
	{"vitalsEnable", CONFIG_BOOL, &cfg.enabled, .help = "yes|no"},
	{"vitalsNodes", CONFIG_CUSTOM, .parse = parse_nodes, .help = "switches|all"},
};

static struct cache_group *alarm_group(void *self)
{
	return &((struct vitals_area *)self)->readings;
}

const struct area_def vitals_area_def = {
	.name = "the vitals sweeps",
	AREA_CONFIG(tokens, cfg, defaults),
	.wanted = wanted,
	.enable_token = "vitalsEnable",
	AREA_CACHES(caches),
	.start = start,
	.register_mib = register_handlers,
	.reload = reload,
	.unregister_mib = unregister_handlers,
	.stop = stop,
	.alarm_group = alarm_group,
	.alarm_collect = vitals_alarms,
};
