/* The trap area: IB traps from the SA, opensm's log and the counters, told
 * to its observers; SMA-MIB's notifications are one of them. */
#include "ibsnmpd/netsnmp.h"

#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/area.h"
#include "ibsnmpd/mad_engine.h"
#include "ibsnmpd/sma.h"

#include "trap_internal.h"

struct trap_config trap_cfg;

void trap_get_stats(const struct trap_area *t, struct trap_stats *st)
{
	*st = t->stats;
}

void trap_observe(struct trap_area *t, struct trap_observer *o, trap_observer_fn fn, void *arg)
{
	struct trap_observer **pp = &t->observers;

	while (*pp)
		pp = &(*pp)->next;
	o->fn = fn;
	o->arg = arg;
	o->next = NULL;
	*pp = o;
}

void trap_unobserve(struct trap_area *t, struct trap_observer *o)
{
	for (struct trap_observer **pp = &t->observers; *pp; pp = &(*pp)->next) {
		if (*pp == o) {
			*pp = o->next;
			return;
		}
	}
}

bool trap_wants_counters(const struct trap_area *t)
{
	return trap_cfg.from_counters && !trap_subscriber_reads_osm_log(t);
}

void trap_from_counters(struct trap_area *t, const struct notice *n)
{
	if (trap_wants_counters(t))
		trap_deliver(t, n, "counters");
}

/* ---- the master SM ---------------------------------------------------------------- */

/* Every 2 s the SM that traps come from is asked whether it is master (one
 * SMInfo SMP); while it is gone or not master (it died, a standby takes
 * over, it restarts) the local PortInfo is read as often, whose MasterSMLID
 * names a new master on another node. Traps sent after a new SM is master
 * are then lost for seconds, not for a PortInfo lifetime or a
 * trapResubscribeInterval. */
#define SM_WATCH_INTERVAL_S 2

static void watch_master_sm(unsigned reg, void *arg)
{
	struct trap_area *t = arg;

	(void)reg;
	trap_subscriber_probe_now(t);
	if (t->local_ports && !trap_subscriber_has_master(t) && !t->local_ports->refreshing)
		cache_group_refresh_now(t->local_ports);
}

/* The local port's MasterSMLID moved: subscribe with the new master's SA. */
static void local_ports_published(struct cache_group *g, const void *before, const void *after,
				  void *arg)
{
	unsigned from, to;

	(void)g;
	if (sma_sm_moved(before, after, &from, &to))
		trap_subscriber_sm_changed(arg, to);
}

/* The master SM's LID as the local port last read it, else as umad said. */
static unsigned sm_lid(const struct trap_area *t)
{
	const struct sma_port_snapshot *s = t->local_ports ? cache_snapshot(t->local_ports) : NULL;

	return s && s->mgmt && s->mgmt->pi.sm_lid ? s->mgmt->pi.sm_lid : t->first_sm_lid;
}

/* ---- the area ----------------------------------------------------------------------- */

static void *start(const struct area_env *env)
{
	struct trap_area *t = calloc(1, sizeof(*t));
	struct sma_area *sma = area_find(&sma_area_def);

	if (!t)
		return NULL;
	t->log_fd = t->inotify_fd = t->watch = -1;
	t->first_sm_lid = (unsigned)env->local->sm_lid;
	t->own_port_guid = env->local->port_guid;
	trap_observe(t, &t->notify, trap_notify_sma, NULL);
	if (sma) {
		t->local_ports = sma_group(sma_local(sma), SMA_PORT_INFO);
		cache_group_observe(t->local_ports, &t->sm_watch, local_ports_published, t);
	}
	return t;
}

static int register_handlers(void *self)
{
	return trap_mib_register(self);
}

/* Every area is served: traps may become notifications now. */
static void started(void *self)
{
	struct trap_area *t = self;

	trap_subscriber_start(t, sm_lid(t));
	t->sm_watch_alarm = snmp_alarm_register(SM_WATCH_INTERVAL_S, SA_REPEAT, watch_master_sm, t);
}

static void reload(void *self)
{
	trap_subscriber_apply_config(self);
}

static void unregister_handlers(void *self)
{
	trap_mib_unregister(self);
}

static void stop(void *self)
{
	struct trap_area *t = self;

	if (t->sm_watch_alarm)
		snmp_alarm_unregister(t->sm_watch_alarm);
	trap_subscriber_stop(t);
	if (t->local_ports)
		cache_group_unobserve(t->local_ports, &t->sm_watch);
	free(t);
}

static void parse_sa_key(const char *token, char *line)
{
	const char *why;

	/* same syntax as a GUID: up to 16 hex digits */
	if (config_parse_guid(line, &trap_cfg.sa_key, &why)) {
		config_report(token, "(hidden)", "expected a key of up to 16 hexadecimal digits");
		return;
	}
	trap_cfg.sa_key_set = true;
}

static void defaults(void)
{
	memset(&trap_cfg, 0, sizeof(trap_cfg));
	trap_cfg.subscribe = true;
	trap_cfg.resubscribe_s = 60;
	trap_cfg.from_counters = true;
}

static const struct config_token tokens[] = {
	{"trapSubscribe", CONFIG_BOOL, &trap_cfg.subscribe, .help = "yes|no"},
	{"saKey", CONFIG_CUSTOM, .parse = parse_sa_key, .help = "KEY"},
	{"trapResubscribeInterval", CONFIG_UINT, &trap_cfg.resubscribe_s, .min = 1, .max = 86400,
	 .help = "SECONDS"},
	{"osmLogFile", CONFIG_PATH, trap_cfg.osm_log_file, sizeof(trap_cfg.osm_log_file),
	 .help = "PATH"},
	{"trapsFromCounters", CONFIG_BOOL, &trap_cfg.from_counters, .help = "yes|no"},
};

const struct area_def trap_area_def = {
	.name = "the traps",
	AREA_CONFIG(tokens, trap_cfg, defaults),
	.start = start,
	.register_mib = register_handlers,
	.started = started,
	.reload = reload,
	.unregister_mib = unregister_handlers,
	.stop = stop,
};
