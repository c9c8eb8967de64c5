/* An area: one part of what ibsnmpd serves (the local node's SMA, the
 * traps, the subnet's topology, its counters, its links, its nodes as
 * devices, the partition policy, DCBX), declared in one place, its folder's
 * <area>_area.c: its ibsnmpd.conf tokens, its cache groups (ibsnmpdCacheTable
 * and cacheLifetime) and its life-cycle hooks. The daemon runs the list of
 * areas (areas.c) in order; an area finds those before it with area_find().
 * Adding an area is a folder and a line in that list.
 *
 * Life cycle, every area in list order (stop and unregister in reverse):
 *   start         the instance: its data sources, cache groups, observers
 *   register_mib  its MIB handlers (every area has started)
 *   started       every area has registered: sources that notify begin
 *   reload        SIGHUP: the new values have been read
 *   unregister_mib, stop (frees the instance) */
#ifndef IBSNMPD_AREA_H
#define IBSNMPD_AREA_H

#include <stdbool.h>
#include <stddef.h>

#include "ibsnmpd/cache.h"
#include "ibsnmpd/config.h"

struct mad_local_port;
struct alarm_list;

/* What an area is started with. */
struct area_env {
	const struct mad_local_port *local; /* the MAD engine's port */
	bool (*stopping)(void);             /* a signal asked the daemon to stop */
};

struct area_def {
	const char *name;
	/* its lines of ibsnmpd.conf: the tokens, the values they fill (its own
	 * structure, restored as it was when a SIGHUP's file has errors) and
	 * their defaults */
	const struct config_token *tokens;
	size_t n_tokens;
	void *config;
	size_t config_size;
	void (*config_defaults)(void);
	/* whether the configuration wants it (NULL: always); a change of
	 * enable_token takes effect at the next start */
	bool (*wanted)(void);
	const char *enable_token;
	/* a configuration it will not run with, though every line is right
	 * (a listener beyond loopback without access control): why, else
	 * NULL (or no hook). The daemon does not start with it, and a SIGHUP
	 * that brings it keeps the previous settings. */
	const char *(*refused)(void);
	/* its cache groups: rows of ibsnmpdCacheTable, names for cacheLifetime */
	const struct cache_decl *caches;
	size_t n_caches;
	/* the instance, or NULL (logged; the daemon cannot start) */
	void *(*start)(const struct area_env *env);
	int (*register_mib)(void *self);   /* -1: failed (logged) */
	void (*started)(void *self);
	void (*reload)(void *self);
	void (*unregister_mib)(void *self);
	void (*stop)(void *self);
	/* what it finds wrong, for the active alarm table (alarm.h): the group
	 * whose snapshots hold it and their collector (NULL: nothing) */
	struct cache_group *(*alarm_group)(void *self);
	void (*alarm_collect)(const void *snapshot, struct alarm_list *out);
};

/* An area_def's configuration and cache groups from its arrays and its
 * values' structure: AREA_CONFIG(tokens, cfg, defaults), AREA_CACHES(caches). */
#define AREA_CONFIG(tokens_, cfg_, defaults_)                                         \
	.tokens = (tokens_), .n_tokens = sizeof(tokens_) / sizeof((tokens_)[0]),       \
	.config = &(cfg_), .config_size = sizeof(cfg_), .config_defaults = (defaults_)
#define AREA_CACHES(caches_) .caches = (caches_), .n_caches = sizeof(caches_) / sizeof((caches_)[0])

/* Registers the tokens and cache groups of every area of the list
 * (NULL-terminated) with the configuration, before the files are read. */
void areas_configure(const struct area_def *const *list);
/* Why one area of the list refuses the configuration as read, else NULL. */
const char *areas_config_refused(const struct area_def *const *list);
/* Starts every wanted area of the list in order; -1 (logged) if one could
 * not be started. */
int areas_start(const struct area_def *const *list, const struct area_env *env);
int areas_register_mib(void);
void areas_started(void);
/* SIGHUP: the configuration has been read again (without errors). */
void areas_reload(void);
/* The configuration values of every area, to put back after a failed read. */
void *areas_config_save(void);
void areas_config_restore(void *saved);
void areas_unregister_mib(void);
void areas_stop(void);

/* The running instance of def, or NULL (not wanted, or not started yet). */
void *area_find(const struct area_def *def);
/* fn(def, instance, arg) for every area running (started so far), in
 * start order. */
void areas_for_each_running(void (*fn)(const struct area_def *def, void *self, void *arg),
			    void *arg);
/* fn(decl, group, arg) for every cache group of every running area, by
 * ibsnmpdCacheIndex. */
void areas_for_each_cache(void (*fn)(const struct cache_decl *decl, struct cache_group *g,
				     void *arg),
			  void *arg);
/* The group decl names in an instance. */
static inline struct cache_group *area_cache_group(void *self, const struct cache_decl *decl)
{
	return (struct cache_group *)((char *)self + decl->offset);
}

/* The daemon's list (areas.c), in start order, NULL-terminated. */
extern const struct area_def *const ibsnmpd_areas[];

#endif
