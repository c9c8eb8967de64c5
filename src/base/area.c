/* The areas' life cycle (area.h): the running instances, in start order. */
#include "ibsnmpd/netsnmp.h"

#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/area.h"

#define AREAS_MAX 32

static struct running {
	const struct area_def *def;
	void *self;       /* NULL: not wanted at start */
	bool registered;
} areas[AREAS_MAX];
static size_t n_areas;

void areas_configure(const struct area_def *const *list)
{
	for (size_t i = 0; list[i]; i++) {
		config_register_tokens_of(list[i]->tokens, list[i]->n_tokens,
					  list[i]->config_defaults);
		config_register_caches(list[i]->caches, list[i]->n_caches);
	}
}

const char *areas_config_refused(const struct area_def *const *list)
{
	const char *why;

	for (size_t i = 0; list[i]; i++)
		if (list[i]->refused && (why = list[i]->refused()))
			return why;
	return NULL;
}

int areas_start(const struct area_def *const *list, const struct area_env *env)
{
	for (size_t i = 0; list[i] && n_areas < AREAS_MAX; i++) {
		struct running *r = &areas[n_areas++];

		r->def = list[i];
		r->self = NULL;
		if (r->def->wanted && !r->def->wanted()) {
			DEBUGMSGTL(("ibsnmpd:area", "%s: not wanted\n", r->def->name));
			continue;
		}
		r->self = r->def->start(env);
		if (!r->self) {
			snmp_log(LOG_ERR, "cannot start %s\n", r->def->name);
			return -1;
		}
		DEBUGMSGTL(("ibsnmpd:area", "%s: started\n", r->def->name));
	}
	return 0;
}

int areas_register_mib(void)
{
	for (size_t i = 0; i < n_areas; i++) {
		struct running *r = &areas[i];

		if (!r->self || !r->def->register_mib)
			continue;
		if (r->def->register_mib(r->self))
			return -1;
		r->registered = true;
	}
	return 0;
}

void areas_started(void)
{
	for (size_t i = 0; i < n_areas; i++)
		if (areas[i].self && areas[i].def->started)
			areas[i].def->started(areas[i].self);
}

void areas_reload(void)
{
	for (size_t i = 0; i < n_areas; i++) {
		const struct area_def *def = areas[i].def;
		bool now = !def->wanted || def->wanted();

		if (now != (areas[i].self != NULL) && def->enable_token)
			snmp_log(LOG_WARNING, "a change of '%s' takes effect at the next start\n",
				 def->enable_token);
		if (areas[i].self && def->reload)
			def->reload(areas[i].self);
	}
}

void *areas_config_save(void)
{
	size_t total = 0, at = 0;
	char *copy;

	for (size_t i = 0; i < n_areas; i++)
		total += areas[i].def->config_size;
	copy = malloc(total ? total : 1);
	if (!copy)
		return NULL;
	for (size_t i = 0; i < n_areas; i++) {
		if (!areas[i].def->config_size)
			continue;
		memcpy(copy + at, areas[i].def->config, areas[i].def->config_size);
		at += areas[i].def->config_size;
	}
	return copy;
}

void areas_config_restore(void *saved)
{
	const char *copy = saved;
	size_t at = 0;

	if (!copy)
		return;
	for (size_t i = 0; i < n_areas; i++) {
		if (!areas[i].def->config_size)
			continue;
		memcpy(areas[i].def->config, copy + at, areas[i].def->config_size);
		at += areas[i].def->config_size;
	}
}

void areas_unregister_mib(void)
{
	for (size_t i = n_areas; i-- > 0;) {
		struct running *r = &areas[i];

		if (r->registered && r->def->unregister_mib)
			r->def->unregister_mib(r->self);
		r->registered = false;
	}
}

void areas_stop(void)
{
	for (size_t i = n_areas; i-- > 0;) {
		struct running *r = &areas[i];

		if (r->self)
			r->def->stop(r->self);
		r->self = NULL;
	}
	n_areas = 0;
}

void *area_find(const struct area_def *def)
{
	for (size_t i = 0; i < n_areas; i++)
		if (areas[i].def == def)
			return areas[i].self;
	return NULL;
}

void areas_for_each_running(void (*fn)(const struct area_def *def, void *self, void *arg),
			    void *arg)
{
	for (size_t i = 0; i < n_areas; i++)
		if (areas[i].self)
			fn(areas[i].def, areas[i].self, arg);
}

void areas_for_each_cache(void (*fn)(const struct cache_decl *decl, struct cache_group *g,
				     void *arg),
			  void *arg)
{
	/* by index: areas declare theirs in any order; a group never set up (no
	 * owner: its source could not be opened) has no row */
	for (unsigned index = 1; index < CACHE_INDEX_MAX; index++) {
		for (size_t i = 0; i < n_areas; i++) {
			for (size_t k = 0; areas[i].self && k < areas[i].def->n_caches; k++) {
				const struct cache_decl *decl = &areas[i].def->caches[k];
				struct cache_group *g = area_cache_group(areas[i].self, decl);

				if (decl->index == index && g->owner)
					fn(decl, g, arg);
			}
		}
	}
}
