/* The PM area: the counters of every port of the subnet (pmEnable). It
 * follows the topology: each discovery it publishes is swept at once, its
 * nodes become IB-PM-MIB's rows; a trap 144 has a node's ClassPortInfo asked
 * again; each published sweep is compared with the one before for traps
 * 129/130 (trapsFromCounters). */
#include "ibsnmpd/netsnmp.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/area.h"
#include "ibsnmpd/pm.h"
#include "ibsnmpd/topology.h"

#include "pm_counter_traps.h"

#define SAMPLE_NODES_MAX 256

static struct pm_config {
	bool enabled;                          /* pmEnable */
	uint64_t sample_nodes[SAMPLE_NODES_MAX]; /* pmSampleNode: node GUIDs read for sampling */
	size_t n_sample_nodes;
} cfg;

static const struct cache_decl caches[] = {
	{14, "pmCounters", 15, offsetof(struct pm_area, sweep)},
	{15, "pmSamples", 5, offsetof(struct pm_area, samples)},
};

/* A discovery: its nodes are IB-PM-MIB's rows now, their counters after the
 * sweep that starts at once; watched nodes may have new LIDs. A topology
 * patched after a change (a node back or new, a link made or gone): only
 * the ports it names are read now, the rest at the periodic sweep (every
 * port read again for each host that comes and goes would be a whole
 * sweep's load a host). */
static void discovered(struct cache_group *g, const void *before, const void *after, void *arg)
{
	struct pm_area *pm = arg;

	(void)g;
	(void)before;
	pm_view_refresh(pm);
	if (after && ((const struct topology *)after)->patched_from && pm->sweep.alarm) {
		pm_sweep_patched(pm, after);
		if (((const struct topology *)after)->nodes_added)
			cache_group_start(&pm->samples); /* a watched node may be back */
		return;
	}
	pm_sweep_discovered(pm);
	cache_group_start(&pm->samples);
}

static void trap_seen(const struct notice *n, const char *via, void *arg)
{
	(void)via;
	if (n->is_generic && n->trap_number == 144)
		pm_sweep_capabilities_changed(arg, n->lid);
}

static void counter_trap(const struct notice *n, void *arg)
{
	trap_from_counters(arg, n);
}

/* Traps 129/130 from the counters of every sweep published. */
static void swept(struct cache_group *g, const void *before, const void *after, void *arg)
{
	const struct pm_snapshot *old = before, *now = after;
	struct pm_area *pm = arg;

	(void)g;
	if (!old || !trap_wants_counters(pm->traps))
		return;
	counter_traps(old->ports, old->n, now->ports, now->n, counter_trap, pm->traps);
}

static void *start(const struct area_env *env)
{
	struct cache_group *topology = topology_followed_by("the PM sweeps");
	struct pm_area *pm = topology ? calloc(1, sizeof(*pm)) : NULL;

	(void)env;
	if (!pm)
		return NULL;
	pm->topology = topology;
	pm_sweep_init(pm, config_cache_lifetime(&caches[0]));
	pm_samples_init(pm, config_cache_lifetime(&caches[1]));
	pm_samples_watch_all(pm, cfg.sample_nodes, cfg.n_sample_nodes);
	pm_view_init(pm);
	cache_group_observe(pm->topology, &pm->topology_seen, discovered, pm);
	pm->traps = area_find(&trap_area_def);
	if (pm->traps) {
		trap_observe(pm->traps, &pm->trap_seen, trap_seen, pm);
		cache_group_observe(&pm->sweep, &pm->counters_seen, swept, pm);
	}
	if (cache_snapshot(pm->topology)) /* a discovery is in already */
		discovered(pm->topology, NULL, cache_snapshot(pm->topology), pm);
	return pm;
}

static int register_handlers(void *self)
{
	struct pm_area *pm = self;

	return pm_mib_register(&pm->mib, pm, NULL);
}

static void unregister_handlers(void *self)
{
	struct pm_area *pm = self;

	pm_mib_unregister(&pm->mib);
}

static void reload(void *self)
{
	struct pm_area *pm = self;

	cache_group_set_lifetime(&pm->sweep, config_cache_lifetime(&caches[0]));
	cache_group_set_lifetime(&pm->samples, config_cache_lifetime(&caches[1]));
	pm_samples_watch_all(pm, cfg.sample_nodes, cfg.n_sample_nodes);
}

static void stop(void *self)
{
	struct pm_area *pm = self;

	cache_group_unobserve(pm->topology, &pm->topology_seen);
	if (pm->traps)
		trap_unobserve(pm->traps, &pm->trap_seen);
	cache_group_stop(&pm->view);
	pm_sweep_stop(pm);
	pm_samples_stop(pm);
	free(pm);
}

static bool wanted(void)
{
	return cfg.enabled;
}

static void parse_sample_node(const char *token, char *line)
{
	const char *why;
	uint64_t guid;

	if (config_parse_guid(line, &guid, &why)) {
		config_report(token, line, why);
		return;
	}
	if (cfg.n_sample_nodes == SAMPLE_NODES_MAX) {
		config_report(token, line, "too many pmSampleNode lines (at most 256)");
		return;
	}
	cfg.sample_nodes[cfg.n_sample_nodes++] = guid;
}

static void defaults(void)
{
	memset(&cfg, 0, sizeof(cfg));
	cfg.enabled = true;
}

static const struct config_token tokens[] = {
	{"pmEnable", CONFIG_BOOL, &cfg.enabled, .help = "yes|no"},
	{"pmSampleNode", CONFIG_CUSTOM, .parse = parse_sample_node, .help = "NODEGUID"},
};

const struct area_def pm_area_def = {
	.name = "the subnet's performance sweeps",
	AREA_CONFIG(tokens, cfg, defaults),
	.wanted = wanted,
	.enable_token = "pmEnable",
	AREA_CACHES(caches),
	.start = start,
	.register_mib = register_handlers,
	.reload = reload,
	.unregister_mib = unregister_handlers,
	.stop = stop,
};
