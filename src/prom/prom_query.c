/* What a scrape asks for (prom.h): the query's selection (collect[],
 * node_type, shard, shards: outside input, fuzzed by fuzz_prom_query), a
 * node's shard, and the format its Accept header asks for. What is
 * rendered of it is prom_render.c's. */
#include <string.h>

#include "ibsnmpd/prom.h"

/* ---- the query's selection -------------------------------------------------------- */

unsigned prom_shard_of(uint64_t guid, unsigned shards)
{
	/* splitmix64's finalizer: the GUIDs of one vendor run in sequence */
	guid ^= guid >> 30;
	guid *= 0xbf58476d1ce4e5b9ULL;
	guid ^= guid >> 27;
	guid *= 0x94d049bb133111ebULL;
	guid ^= guid >> 31;
	return shards ? (unsigned)(guid % shards) : 0;
}

static const char *const collector_names[PROM_COLLECTORS] = {
	[PROM_C_AGENT] = "agent",     [PROM_C_NODES] = "nodes",   [PROM_C_COUNTERS] = "counters",
	[PROM_C_LINKS] = "links",     [PROM_C_VITALS] = "vitals", [PROM_C_MODULES] = "modules",
	[PROM_C_ALARMS] = "alarms",   [PROM_C_ROUTING] = "routing",
};

static int parse_small(const char *v, unsigned max, unsigned *out)
{
	unsigned n = 0;

	if (!*v || strlen(v) > 6)
		return -1;
	for (; *v; v++) {
		if (*v < '0' || *v > '9')
			return -1;
		n = n * 10 + (unsigned)(*v - '0');
	}
	if (n > max)
		return -1;
	*out = n;
	return 0;
}

#define PROM_SHARDS_MAX 4096

int prom_filter_arg(struct prom_filter *f, const char *key, const char *value, const char **why)
{
	if (!value)
		value = "";
	if (!strcmp(key, "collect[]")) {
		for (unsigned c = 0; c < PROM_COLLECTORS; c++)
			if (!strcmp(value, collector_names[c])) {
				f->collectors |= 1u << c;
				return 0;
			}
		*why = "collect[]: give agent, nodes, counters, links, vitals, modules or alarms";
		return -1;
	}
	if (!strcmp(key, "node_type")) {
		unsigned type = !strcmp(value, "ca") ? 1 : !strcmp(value, "switch") ? 2 :
				!strcmp(value, "router") ? 3 : 0;

		if (!type) {
			*why = "node_type: give switch, ca or router";
			return -1;
		}
		f->node_types |= 1u << type;
		return 0;
	}
	if (!strcmp(key, "shard") || !strcmp(key, "shards")) {
		unsigned n;

		if (parse_small(value, PROM_SHARDS_MAX, &n) ||
		    (!strcmp(key, "shards") && n == 0)) {
			*why = "shard and shards: whole numbers, 0 <= shard < shards <= 4096";
			return -1;
		}
		if (!strcmp(key, "shard"))
			f->shard = n;
		else
			f->shards = n;
		return 0;
	}
	*why = "unknown argument: the query takes collect[], node_type, shard and shards";
	return -1;
}

int prom_filter_check(const struct prom_filter *f, const char **why)
{
	if ((f->shards && f->shard >= f->shards) || (!f->shards && f->shard)) {
		*why = "shard and shards: whole numbers, 0 <= shard < shards <= 4096";
		return -1;
	}
	return 0;
}

/* ---- content negotiation ---------------------------------------------------------- */

enum prom_format prom_format_for(const char *accept)
{
	/* Prometheus asks "application/openmetrics-text;version=1.0.0,...;q=0.75,
	 * text/plain;version=0.0.4;q=0.5,*\/\*;q=0.1": its first choice is
	 * served; anything that does not name OpenMetrics gets the text format */
	return accept && strstr(accept, "application/openmetrics-text") ? PROM_OPENMETRICS
									 : PROM_TEXT;
}

const char *prom_content_type(enum prom_format format)
{
	return format == PROM_OPENMETRICS
		       ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
		       : "text/plain; version=0.0.4; charset=utf-8";
}
