/* The route area: the fabric's routing checked (routingCheck). It follows
 * the topology: the first discovery is read at once, every change
 * (a discovery, a patch after a link came or went) routingSettle seconds
 * later, once the SM has had its heavy sweep; and every
 * routingCheckInterval. Its notifications come from an observer of its own
 * group (route_notify.c). */
#include "ibsnmpd/netsnmp.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/area.h"

#include "route_internal.h"

struct route_config route_cfg;

static const struct cache_decl caches[] = {
	{21, "routing", 3600, offsetof(struct route_area, group)},
};

static unsigned interval(void)
{
	return route_cfg.interval_s ? route_cfg.interval_s : config_cache_lifetime(&caches[0]);
}

static void discovered(struct cache_group *g, const void *before, const void *after, void *arg)
{
	struct route_area *a = arg;

	(void)g;
	if (!after)
		return;
	if (!a->group.alarm && !before) {
		cache_group_start(&a->group); /* the first discovery: read now */
		return;
	}
	if (!a->group.alarm)
		cache_group_start(&a->group);
	else
		route_read_soon(a, before, after);
}

void route_snapshot_free(void *p)
{
	struct route_snapshot *s = p;

	if (!s)
		return;
	route_findings_free(&s->f);
	topology_put(s->fabric);
	free(s);
}

struct cache_group *route_area_group(void *area)
{
	return area ? &((struct route_area *)area)->group : NULL;
}

static void *start(const struct area_env *env)
{
	struct cache_group *topology = topology_followed_by("the routing checks");
	struct route_area *a = topology ? calloc(1, sizeof(*a)) : NULL;

	(void)env;
	if (!a)
		return NULL;
	a->done_fd = -1;
	if (route_read_init(a)) {
		free(a);
		return NULL;
	}
	a->topology = topology;
	a->group.name = "routing checks";
	a->group.refresh = route_read_start;
	a->group.free_snapshot = route_snapshot_free;
	a->group.owner = a;
	a->group.lifetime_s = interval();
	cache_group_observe(&a->group, &a->notified, route_notify_published, a);
	cache_group_observe(topology, &a->discovered, discovered, a);
	if (cache_snapshot(topology))
		cache_group_start(&a->group);
	return a;
}

static int register_handlers(void *self)
{
	return route_mib_register(self);
}

static void unregister_handlers(void *self)
{
	route_mib_unregister(self);
}

static void reload(void *self)
{
	struct route_area *a = self;

	cache_group_set_lifetime(&a->group, interval());
}

static void stop(void *self)
{
	struct route_area *a = self;

	cache_group_unobserve(a->topology, &a->discovered);
	route_read_stop(a);
	cache_group_stop(&a->group);
	free(a);
}

static bool wanted(void)
{
	return route_cfg.enabled;
}

static void defaults(void)
{
	memset(&route_cfg, 0, sizeof(route_cfg));
	route_cfg.enabled = true;
	route_cfg.settle_s = 10;
}

static const struct config_token tokens[] = {
	{"routingCheck", CONFIG_BOOL, &route_cfg.enabled, .help = "yes|no"},
	{"routingCheckInterval", CONFIG_UINT, &route_cfg.interval_s, .min = 1, .max = 604800,
	 .help = "SECONDS"},
	{"routingSettle", CONFIG_UINT, &route_cfg.settle_s, .min = 1, .max = 3600,
	 .help = "SECONDS"},
};

static struct cache_group *alarm_group(void *self)
{
	return &((struct route_area *)self)->group;
}

const struct area_def route_area_def = {
	.name = "the routing checks",
	AREA_CONFIG(tokens, route_cfg, defaults),
	.wanted = wanted,
	.enable_token = "routingCheck",
	AREA_CACHES(caches),
	.start = start,
	.register_mib = register_handlers,
	.reload = reload,
	.unregister_mib = unregister_handlers,
	.stop = stop,
	.alarm_group = alarm_group,
	.alarm_collect = route_alarms,
};
