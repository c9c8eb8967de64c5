/* Background refresh of cache groups on net-snmp alarms. A refresh builds a
 * whole new snapshot; the swap happens on the main thread between two SNMP
 * requests, so a handler never sees half a refresh. */
#include "ibsnmpd/netsnmp.h"

#include <malloc.h>
#include <stdlib.h>

#include "ibsnmpd/cache.h"

/* A snapshot of a big fabric is tens of megabytes, built while the previous
 * one is still served; glibc keeps what is freed for later, so without this
 * the process would hold about two of each (and a sweep's transient
 * requests) for good. Given back at most every TRIM_INTERVAL_S. */
#define TRIM_INTERVAL_S 5

static void give_back_freed_memory(void)
{
	static double last;
	double now = monotonic_seconds();

	if (last && now - last < TRIM_INTERVAL_S)
		return;
	last = now;
	malloc_trim(0);
	DEBUGMSGTL(("ibsnmpd:cache", "freed memory given back in %.1f ms\n",
		    (monotonic_seconds() - now) * 1000.0));
}

long cache_group_age_s(const struct cache_group *g)
{
	return g->snapshot ? (long)(monotonic_whole_seconds() - g->filled_at) : -1;
}

static void kick(unsigned reg, void *arg)
{
	struct cache_group *g = arg;

	(void)reg;
	if (g->refreshing)
		return;
	g->refreshing = true;
	g->started_at = monotonic_seconds();
	DEBUGMSGTL(("ibsnmpd:cache", "refreshing %s\n", g->name));
	g->refresh(g);
}

void cache_group_start(struct cache_group *g)
{
	if (!g->alarm)
		g->alarm = snmp_alarm_register(g->lifetime_s, SA_REPEAT, kick, g);
	kick(0, g);
}

void cache_group_refresh_now(struct cache_group *g)
{
	kick(0, g);
}

/* A replaced snapshot some reader still holds. */
struct cache_held {
	void *snapshot;
	unsigned holds;
	struct cache_held *next;
};

/* The node a replaced snapshot will need is made when its first hold is
 * taken: publishing never has to allocate. */
const void *cache_snapshot_hold(struct cache_group *g)
{
	struct cache_held *h;

	if (!g->snapshot)
		return NULL;
	if (!g->holds) {
		h = calloc(1, sizeof(*h));
		if (!h)
			return NULL;
		h->next = g->held;
		g->held = h;
	}
	g->holds++;
	return g->snapshot;
}

static void free_snapshot(struct cache_group *g, void *snapshot)
{
	if (g->free_snapshot) {
		g->free_snapshot(snapshot);
		give_back_freed_memory();
	}
}

void cache_snapshot_release(struct cache_group *g, const void *snapshot)
{
	struct cache_held **pp = &g->held, *h;

	if (!snapshot)
		return;
	if (snapshot == g->snapshot) {
		/* the current one: its spare node (the newest without a snapshot) goes */
		if (g->holds && !--g->holds) {
			for (; *pp && (*pp)->snapshot; pp = &(*pp)->next)
				;
			if (*pp) {
				h = *pp;
				*pp = h->next;
				free(h);
			}
		}
		return;
	}
	for (; *pp; pp = &(*pp)->next) {
		h = *pp;
		if (h->snapshot != snapshot)
			continue;
		if (!--h->holds) {
			*pp = h->next;
			free_snapshot(g, h->snapshot);
			free(h);
		}
		return;
	}
}

/* The snapshot a publication replaces: freed now, or when its holds end. */
static void retire(struct cache_group *g, void *old)
{
	struct cache_held *h = g->held;

	if (!g->holds) {
		free_snapshot(g, old);
		return;
	}
	/* the spare node taken with the first hold */
	while (h && h->snapshot)
		h = h->next;
	h->snapshot = old;
	h->holds = g->holds;
	g->holds = 0;
}

void cache_group_stop(struct cache_group *g)
{
	if (g->alarm)
		snmp_alarm_unregister(g->alarm);
	g->alarm = 0;
	if (g->snapshot && g->free_snapshot)
		g->free_snapshot(g->snapshot);
	g->snapshot = NULL;
	/* whoever held a snapshot has let go by now (areas stop in reverse) */
	while (g->held) {
		struct cache_held *h = g->held;

		g->held = h->next;
		if (h->snapshot && g->free_snapshot)
			g->free_snapshot(h->snapshot);
		free(h);
	}
	g->holds = 0;
}

void cache_group_set_lifetime(struct cache_group *g, unsigned lifetime_s)
{
	if (g->lifetime_s == lifetime_s)
		return;
	g->lifetime_s = lifetime_s;
	if (g->alarm) {
		snmp_alarm_unregister(g->alarm);
		g->alarm = snmp_alarm_register(lifetime_s, SA_REPEAT, kick, g);
	}
}

void cache_group_observe(struct cache_group *g, struct cache_observer *o, cache_published_fn fn,
			 void *arg)
{
	struct cache_observer **pp = &g->observers;

	while (*pp)
		pp = &(*pp)->next;
	o->fn = fn;
	o->arg = arg;
	o->next = NULL;
	*pp = o;
}

void cache_group_unobserve(struct cache_group *g, struct cache_observer *o)
{
	for (struct cache_observer **pp = &g->observers; *pp; pp = &(*pp)->next) {
		if (*pp == o) {
			*pp = o->next;
			o->next = NULL;
			return;
		}
	}
}

static void source_published(struct cache_group *source, const void *before, const void *after,
			     void *derived)
{
	(void)source;
	(void)before;
	(void)after;
	cache_group_refresh_now(derived);
}

void cache_group_follow(struct cache_group *derived, struct cache_group *source,
			struct cache_observer *o)
{
	cache_group_observe(source, o, source_published, derived);
}

static void refresh_ended(struct cache_group *g)
{
	g->refreshing = false;
	g->attempts++;
	g->last_duration = monotonic_seconds() - g->started_at;
}

void cache_refresh_kept(struct cache_group *g)
{
	refresh_ended(g);
	DEBUGMSGTL(("ibsnmpd:cache", "%s kept\n", g->name));
}

/* fresh replaces the snapshot; the observers are told, the old one retired. */
static void publish(struct cache_group *g, void *fresh)
{
	void *old = g->snapshot;
	/* The one before is held while the observers run (one of them may let
	 * go of the last other hold on it), and its holds are its own before
	 * an observer may hold the fresh one. Out of memory for the hold: no
	 * other hold on it either; it goes after them. */
	bool held = old && cache_snapshot_hold(g);

	if (held)
		retire(g, old);
	g->snapshot = fresh;
	g->filled_at = monotonic_whole_seconds();
	/* an observer may stop observing (its owner goes) while called */
	for (struct cache_observer *o = g->observers, *next; o; o = next) {
		next = o->next;
		o->fn(g, old, fresh, o->arg);
	}
	if (held)
		cache_snapshot_release(g, old);
	else if (old)
		free_snapshot(g, old);
}

void cache_publish(struct cache_group *g, void *fresh)
{
	publish(g, fresh);
	DEBUGMSGTL(("ibsnmpd:cache", "%s republished\n", g->name));
}

void cache_refresh_done(struct cache_group *g, void *fresh, const char *failure)
{
	refresh_ended(g);
	if (fresh) {
		publish(g, fresh);
		/* for bench/scale.py: the heap in use (mallinfo2 walks the
		 * arenas: only asked for) */
		DEBUGIF("ibsnmpd:memory") {
			struct mallinfo2 mi = mallinfo2();

			DEBUGMSGTL(("ibsnmpd:memory", "%zu octets in use after %s\n",
				    mi.uordblks + mi.hblkhd, g->name));
		}
		if (g->last_failed)
			snmp_log(LOG_INFO, "%s: refresh works again\n", g->name);
		g->last_failed = false;
		if (failure && !g->noted)
			snmp_log(LOG_NOTICE, "%s: %s\n", g->name, failure);
		g->noted = failure != NULL;
		DEBUGMSGTL(("ibsnmpd:cache", "%s refreshed\n", g->name));
		return;
	}
	if (!g->last_failed)
		snmp_log(LOG_WARNING, "%s: refresh failed: %s%s\n", g->name,
			 failure ? failure : "unknown reason",
			 g->snapshot ? " (serving the previous values)" : "");
	g->last_failed = true;
}
