/* The alarm area: the active alarms (alarm.h). It follows the group of
 * every area that reports conditions (area_def.alarm_group), rebuilds its
 * snapshot after each of their publications, and keeps the alarms' indexes
 * and begin times in its state file (alarmStateFile) so that after a
 * restart the alarms found again from the fabric say when they began. */
#include "ibsnmpd/netsnmp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/state_file.h"

#include "alarm_internal.h"

#define STATE_FILE_MAX (64u << 20)
#define KEPT_WAIT_S 600

static struct alarm_config {
	char state_file[4096]; /* alarmStateFile ("": net-snmp's persistent directory) */
} cfg;

static void refresh(struct cache_group *g)
{
	struct alarm_area *a = g->owner;
	struct alarm_list conds = {0};
	struct alarm_snapshot *s;
	struct alarm_build in = {.conds = &conds, .prev = g->snapshot, .kept = a->kept,
				 .now = time(NULL),
				 .now_ticks = (uint32_t)netsnmp_get_agent_uptime()};
	bool all_seen = true;

	for (size_t i = 0; i < a->n_src; i++) {
		struct alarm_source *src = &a->src[i];
		const void *snap = cache_snapshot(src->group);

		if (!snap) {
			all_seen = false;
			continue;
		}
		/* a snapshot is published while the one before is alive: a new
		 * one is at another address */
		if (snap != src->from || src->conds.failed) {
			alarm_list_free(&src->conds);
			src->collect(snap, &src->conds);
			for (size_t k = 0; !src->seen && k < src->conds.n; k++)
				src->conds.v[k].quiet = true; /* its area's first word */
			src->from = snap;
			src->seen = true;
		}
		for (size_t k = 0; k < src->conds.n && !src->conds.failed; k++) {
			struct alarm_cond *c = alarm_list_add(&conds, src->conds.v[k].key.kind, 0, 0,
							      0, 0);

			if (c)
				*c = src->conds.v[k];
		}
		conds.failed |= src->conds.failed;
	}
	s = conds.failed ? NULL : alarm_build(&in);
	alarm_list_free(&conds);
	/* what the file kept waits until every area has said what is wrong (an
	 * area that never publishes, e.g. DCBX without its netlink, not for ever) */
	if (s && a->kept && (all_seen || monotonic_whole_seconds() >= a->kept_until)) {
		alarm_snapshot_free(a->kept);
		a->kept = NULL;
	}
	cache_refresh_done(g, s, s ? NULL : "out of memory");
}

static void load_state(struct alarm_area *a)
{
	char *text = NULL, err[200];
	size_t len = 0;

	if (state_file_read(&a->state, STATE_FILE_MAX, &text, &len))
		return;
	a->kept = alarm_state_parse(text, len, err, sizeof(err));
	free(text);
	if (!a->kept)
		state_file_refused(&a->state, err);
	else
		snmp_log(LOG_INFO, "alarms: %zu active at the last stop (%s)\n", a->kept->n,
			 a->state.path);
}

static void state_published(struct cache_group *g, const void *before, const void *after,
			    void *arg)
{
	struct alarm_area *a = arg;
	const struct alarm_snapshot *s = after;
	size_t len = 0;
	char *text;

	(void)g;
	(void)before;
	if (!s || !(s->changed || a->state.failed) || a->kept)
		return; /* (while the file's alarms wait: it stays as it is) */
	text = alarm_state_format(s, &len);
	state_file_write(&a->state, text, len);
	free(text);
}

static void add_source(const struct area_def *def, void *self, void *arg)
{
	struct alarm_area *a = arg;
	struct alarm_source *src = &a->src[a->n_src];

	if (!def->alarm_group || !def->alarm_collect || a->n_src == ALARM_SOURCES_MAX ||
	    !(src->group = def->alarm_group(self)))
		return;
	src->collect = def->alarm_collect;
	a->n_src++;
	cache_group_follow(&a->group, src->group, &src->follows);
}

static void *start(const struct area_env *env)
{
	struct alarm_area *a = calloc(1, sizeof(*a));

	(void)env;
	if (!a)
		return NULL;
	a->state = (struct state_file){
		.what = "alarms",
		.fresh = "the active alarms begin as the areas find them",
		.unsaved = "a restart finds the alarms again, beginning then",
	};
	state_file_init(&a->state, cfg.state_file, "ibsnmpd-alarms");
	load_state(a);
	a->kept_until = monotonic_whole_seconds() + KEPT_WAIT_S;
	a->group.name = "alarms";
	a->group.refresh = refresh;
	a->group.free_snapshot = alarm_snapshot_free;
	a->group.owner = a;
	/* the areas before this one (areas.c) that report conditions */
	areas_for_each_running(add_source, a);
	cache_group_observe(&a->group, &a->notified, alarm_notify_published, a);
	cache_group_observe(&a->group, &a->saved, state_published, a);
	cache_group_refresh_now(&a->group); /* empty, or what the sources have already */
	return a;
}

struct cache_group *alarm_area_group(void *area)
{
	return &((struct alarm_area *)area)->group;
}

static int register_handlers(void *self)
{
	struct alarm_area *a = self;

	return alarm_mib_register(&a->mib, a);
}

static void unregister_handlers(void *self)
{
	struct alarm_area *a = self;

	alarm_mib_unregister(&a->mib);
}

static void stop(void *self)
{
	struct alarm_area *a = self;

	state_file_close(&a->state);
	for (size_t i = 0; i < a->n_src; i++) {
		cache_group_unobserve(a->src[i].group, &a->src[i].follows);
		alarm_list_free(&a->src[i].conds);
	}
	cache_group_stop(&a->group);
	alarm_snapshot_free(a->kept);
	free(a);
}

static void defaults(void)
{
	memset(&cfg, 0, sizeof(cfg));
}

static const struct config_token tokens[] = {
	{"alarmStateFile", CONFIG_PATH, cfg.state_file, sizeof(cfg.state_file), .help = "PATH"},
};

const struct area_def alarm_area_def = {
	.name = "the active alarms",
	AREA_CONFIG(tokens, cfg, defaults),
	.start = start,
	.register_mib = register_handlers,
	.unregister_mib = unregister_handlers,
	.stop = stop,
};
