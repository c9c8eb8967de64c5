/* Cache groups: one snapshot per MIB group, refreshed in the background and
 * replaced whole. MIB handlers only ever read cache_snapshot(). */
#ifndef IBSNMPD_CACHE_H
#define IBSNMPD_CACHE_H

#include <stdbool.h>
#include <time.h>

#include "ibsnmpd/clock.h"

struct cache_group;
struct cache_held;

/* Starts a refresh; must end (now or later) in cache_refresh_done(). */
typedef void (*cache_refresh_fn)(struct cache_group *g);
typedef void (*cache_free_fn)(void *snapshot);
/* Called after a new snapshot is published, with the one it replaced (NULL
 * at the first fill), which is freed once the observers return. Events
 * (notifications, rediscoveries) come from here, never from a builder: a
 * builder's batch may still be dropped. */
typedef void (*cache_published_fn)(struct cache_group *g, const void *before,
				   const void *after, void *arg);

/* One observer of a group; its storage is the observer's (no limit, no
 * allocation: observing cannot fail). */
struct cache_observer {
	cache_published_fn fn;
	void *arg;
	struct cache_observer *next;
};

struct cache_group {
	const char *name;
	unsigned lifetime_s;
	cache_refresh_fn refresh;
	cache_free_fn free_snapshot;
	void *owner; /* the collector's own state */

	void *snapshot;       /* what handlers read; NULL until the first fill */
	time_t filled_at;     /* monotonic seconds of the last successful fill */
	bool refreshing;
	unsigned attempts;    /* refreshes finished, successful or not */
	unsigned alarm;
	bool last_failed;     /* to log a failure once, not at every lifetime */
	bool noted;           /* likewise for a note on a published snapshot */
	double started_at;    /* monotonic seconds when the running refresh began */
	double last_duration; /* seconds the last finished refresh took */
	struct cache_observer *observers; /* in the order they came */
	unsigned holds;       /* readers holding the snapshot (cache_snapshot_hold) */
	struct cache_held *held; /* replaced snapshots still held, freed at their last release */
};

/* Refreshes every lifetime from now on, and now (if no refresh is running);
 * on a started group, the same as cache_group_refresh_now. */
void cache_group_start(struct cache_group *g);
void cache_group_stop(struct cache_group *g);
/* Refreshes now (if no refresh is running), besides the periodic ones. */
void cache_group_refresh_now(struct cache_group *g);
void cache_group_set_lifetime(struct cache_group *g, unsigned lifetime_s);
/* fn(g, before, after, arg) after every publication, through o (the
 * observer's storage, until cache_group_unobserve or the group's end). */
void cache_group_observe(struct cache_group *g, struct cache_observer *o, cache_published_fn fn,
			 void *arg);
void cache_group_unobserve(struct cache_group *g, struct cache_observer *o);
/* A derived group (a view built from other groups' snapshots, no lifetime
 * of its own): refreshed at once after every publication of source. Its
 * refresh must end before it returns. */
void cache_group_follow(struct cache_group *derived, struct cache_group *source,
			struct cache_observer *o);
/* Ends a refresh: fresh (may be NULL on failure) replaces the snapshot when
 * not NULL, then the observers are called; on failure the previous snapshot
 * stays. With both fresh and a message, fresh is published and the message
 * logged once (e.g. "the node does not support this attribute: served
 * empty"). */
void cache_refresh_done(struct cache_group *g, void *fresh, const char *failure);
/* Publishes fresh outside a refresh (the same data seen otherwise: the
 * topology renamed after a new node-name map); observers are called as
 * after a refresh. */
void cache_publish(struct cache_group *g, void *fresh);
/* Ends a refresh that brought nothing new (its owner said why, or nothing
 * changed): the snapshot stays, nothing is logged, no observer is called. */
void cache_refresh_kept(struct cache_group *g);
/* Seconds since g's snapshot was published; -1: none yet. */
long cache_group_age_s(const struct cache_group *g);
static inline const void *cache_snapshot(const struct cache_group *g)
{
	return g->snapshot;
}
/* A reader that spans several turns of the main loop (a streamed HTTP
 * answer) holds the snapshot it began with: a newer publication does not
 * free it before the last hold is released. NULL: no snapshot yet, or out
 * of memory (nothing held). Main thread only, as everything here. */
const void *cache_snapshot_hold(struct cache_group *g);
void cache_snapshot_release(struct cache_group *g, const void *snapshot);

#endif
