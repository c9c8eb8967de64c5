/* The SMA area: the local node, read all the time and served as SMA-MIB
 * (and IBSNMPD-MIB's ibsnmpdPortExtTable) in the default context. It starts
 * first and is filled before anything is registered: a manager never sees
 * an empty group just because the daemon has only started. */
#include "ibsnmpd/netsnmp.h"

#include <stddef.h>
#include <stdlib.h>

#include "ibsnmpd/area.h"
#include "ibsnmpd/mad_engine.h"
#include "ibsnmpd/sma.h"

struct sma_area {
	struct sma_collector local; /* first: sma_cache_decls' offsets are the collector's */
	struct sma_collector *served; /* &local: what the registrations read */
	struct sma_mib_regs regs;
};

_Static_assert(offsetof(struct sma_area, local) == 0, "the groups' offsets are the collector's");

struct sma_collector *sma_local(struct sma_area *a)
{
	return &a->local;
}

static void *start(const struct area_env *env)
{
	struct sma_area *a = calloc(1, sizeof(*a));
	ib_portid_t self;

	if (!a)
		return NULL;
	mad_portid_local(&self);
	sma_collector_init(&a->local, &self, false);
	sma_collector_start(&a->local);
	while (!env->stopping() && !sma_collector_start_step(&a->local))
		agent_check_and_process(1);
	if (!cache_snapshot(&a->local.group[SMA_NODE_INFO]) && !env->stopping())
		snmp_log(LOG_WARNING, "the first read of the local node failed; serving nothing "
			 "until a refresh succeeds\n");
	return a;
}

static int register_handlers(void *self)
{
	struct sma_area *a = self;

	a->served = &a->local;
	return sma_mib_register(&a->regs, &a->served);
}

static void unregister_handlers(void *self)
{
	struct sma_area *a = self;

	sma_mib_unregister(&a->regs);
}

static void reload(void *self)
{
	struct sma_area *a = self;

	sma_collector_apply_config(&a->local);
}

static void stop(void *self)
{
	struct sma_area *a = self;

	sma_collector_stop(&a->local);
	free(a);
}

const struct area_def sma_area_def = {
	.name = "the local node's SMA",
	.caches = sma_cache_decls,
	.n_caches = SMA_GROUPS,
	.start = start,
	.register_mib = register_handlers,
	.reload = reload,
	.unregister_mib = unregister_handlers,
	.stop = stop,
};
