/* The node area: every node of the subnet as an SNMP device
 * (nodeContextTypes). It follows the topology, and the link and counter
 * sweeps where those areas run; the local node's context serves the SMA
 * area's collector. */
#include "ibsnmpd/netsnmp.h"

#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/area.h"
#include "ibsnmpd/fabric.h"
#include "ibsnmpd/node.h"
#include "ibsnmpd/pm.h"
#include "ibsnmpd/topology.h"
#include "ibsnmpd/vitals.h"

static struct node_config {
	unsigned hold_s;  /* nodeContextHold: a node no longer reached keeps its context */
	unsigned idle_s;  /* nodeContextIdle: a context's SMA-MIB is read while asked this often */
} cfg;

static void *start(const struct area_env *env)
{
	struct cache_group *topology = topology_followed_by("the node contexts");
	struct fabric_area *fabric = area_find(&fabric_area_def);
	struct pm_area *pm = area_find(&pm_area_def);
	struct sma_area *sma = area_find(&sma_area_def);
	struct vitals_area *vitals = area_find(&vitals_area_def);
	struct node_area *a = topology ? calloc(1, sizeof(*a)) : NULL;

	(void)env;
	if (!a)
		return NULL;
	a->topology = topology;
	a->ports = fabric ? &fabric->group : NULL;
	a->counters = pm ? &pm->sweep : NULL;
	a->vitals = vitals ? &vitals->readings : NULL;
	a->local = sma ? sma_local(sma) : NULL;
	a->hold_s = cfg.hold_s;
	a->idle_s = cfg.idle_s;
	node_contexts_start(a);
	return a;
}

static int register_handlers(void *self)
{
	struct node_area *a = self;

	return node_table_register(&a->mib, &a->dir);
}

static void unregister_handlers(void *self)
{
	struct node_area *a = self;

	node_table_unregister(&a->mib);
}

static void reload(void *self)
{
	struct node_area *a = self;

	a->hold_s = cfg.hold_s;
	a->idle_s = cfg.idle_s;
	node_contexts_apply_config(a);
}

static void stop(void *self)
{
	node_contexts_stop(self);
	free(self);
}

static void defaults(void)
{
	memset(&cfg, 0, sizeof(cfg));
	cfg.hold_s = 3600;
	cfg.idle_s = 300;
}

static const struct config_token tokens[] = {
	{"nodeContextHold", CONFIG_UINT, &cfg.hold_s, .min = 0, .max = 30 * 86400,
	 .help = "SECONDS"},
	{"nodeContextIdle", CONFIG_UINT, &cfg.idle_s, .min = 10, .max = 86400, .help = "SECONDS"},
};

const struct area_def node_area_def = {
	.name = "the node contexts",
	AREA_CONFIG(tokens, cfg, defaults),
	.start = start,
	.register_mib = register_handlers,
	.reload = reload,
	.unregister_mib = unregister_handlers,
	.stop = stop,
};
