/* The route area: the fabric's routing and configuration checked
 * (routingCheck). The subnet checks follow the link sweeps (route_links.c);
 * the routing checks follow the topology: the first discovery is read at once, every change
 * (a discovery, a patch after a link came or went) routingSettle seconds
 * later, once the SM has had its heavy sweep; and every
 * routingCheckInterval. Its notifications come from an observer of its own
 * group (route_notify.c). */
#include "ibsnmpd/netsnmp.h"

#include <ctype.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/area.h"
#include "ibsnmpd/mad_engine.h"

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

void route_routing_put(const struct route_routing *r)
{
	struct route_routing *m = (struct route_routing *)r;

	if (!m || --m->refs)
		return;
	route_findings_free(&m->f);
	topology_put(m->fabric);
	free(m);
}

void route_snapshot_free(void *p)
{
	struct route_snapshot *s = p;

	if (!s)
		return;
	route_routing_put(s->routing);
	free(s->offenders);
	free(s->sms);
	free(s);
}

/* The offenders of checks first..last of f appended to s's. */
static int offenders_take(struct route_snapshot *s, size_t *cap, const struct route_offender *o,
			  size_t n, unsigned first, unsigned last)
{
	for (size_t i = 0; i < n; i++) {
		if (o[i].check < first || o[i].check > last)
			continue;
		if (s->n_offenders == *cap) {
			size_t more = *cap ? 2 * *cap : 64;
			struct route_offender *v = realloc(s->offenders, more * sizeof(*v));

			if (!v)
				return -1;
			s->offenders = v;
			*cap = more;
		}
		s->offenders[s->n_offenders++] = o[i];
	}
	return 0;
}

static unsigned long publications; /* main thread */

struct route_snapshot *route_snapshot_make(struct route_routing *routing,
					   const struct route_findings *subnet,
					   double subnet_seconds, const struct route_snapshot *before)
{
	struct route_snapshot *s = calloc(1, sizeof(*s));
	size_t cap = 0;

	if (!s)
		return NULL;
	/* made on the main thread to be published at once: counted now */
	s->publication = ++publications;
	for (unsigned k = 1; k <= ROUTE_CHECKS; k++)
		s->checks[k] = (struct route_check_result){.id = (uint8_t)k,
							   .status = ROUTE_STATUS_NOT_RUN};
	if (routing) {
		routing->refs++;
		s->routing = routing;
		memcpy(&s->checks[1], &routing->f.checks[1],
		       ROUTE_ROUTING_CHECKS * sizeof(s->checks[1]));
		if (offenders_take(s, &cap, routing->f.offenders, routing->f.n_offenders, 1,
				   ROUTE_ROUTING_CHECKS))
			goto fail;
	}
	if (subnet || before) {
		const struct route_check_result *c = subnet ? subnet->checks : before->checks;

		memcpy(&s->checks[ROUTE_ROUTING_CHECKS + 1], &c[ROUTE_ROUTING_CHECKS + 1],
		       (ROUTE_CHECKS - ROUTE_ROUTING_CHECKS) * sizeof(*c));
		s->subnet_seconds = subnet ? subnet_seconds : before->subnet_seconds;
		if (subnet ? offenders_take(s, &cap, subnet->offenders, subnet->n_offenders,
					    ROUTE_ROUTING_CHECKS + 1, ROUTE_CHECKS)
			   : offenders_take(s, &cap, before->offenders, before->n_offenders,
					    ROUTE_ROUTING_CHECKS + 1, ROUTE_CHECKS))
			goto fail;
	}
	/* the SMs: the subnet run's own (its caller's), else those before */
	if (!subnet && before) {
		s->master = before->master;
		s->previous_master = before->previous_master;
		if (before->n_sms && !(s->sms = malloc(before->n_sms * sizeof(*s->sms))))
			goto fail;
		if (before->n_sms)
			memcpy(s->sms, before->sms, before->n_sms * sizeof(*s->sms));
		s->n_sms = before->n_sms;
	}
	return s;
fail:
	route_snapshot_free(s);
	return NULL;
}

struct cache_group *route_area_group(void *area)
{
	return area ? &((struct route_area *)area)->group : NULL;
}

static void *start(const struct area_env *env)
{
	struct cache_group *topology = topology_followed_by("the routing checks");
	struct route_area *a = topology ? calloc(1, sizeof(*a)) : NULL;

	if (!a)
		return NULL;
	a->sm_lid = env && env->local ? (unsigned)env->local->sm_lid : 0;
	a->checker.fd = a->subnet.fd = -1;
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
	route_links_start(a);
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
	route_links_stop(a);
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
	route_cfg.sm_stall_s = 60; /* OpenSM moves its ActCount at every sweep (10 s) */
	/* the switches themselves: what forwards is what is checked, and a
	 * partial read after a change costs the blocks it changed; the SA's
	 * copy (sa) spares the switches' CPUs but is the SM's belief */
	route_cfg.source = ROUTE_SOURCE_SMP;
	route_cfg.path_sls = 1; /* SL 0: ftree, updn, minhop without QoS */
}

/* routingSource smp|sa */
static void parse_source(const char *token, char *line)
{
	char word[8] = "", extra[2];

	if (line && sscanf(line, "%7s %1s", word, extra) == 1) {
		if (!strcmp(word, "smp") || !strcmp(word, "sa")) {
			route_cfg.source = word[1] == 'm' ? ROUTE_SOURCE_SMP : ROUTE_SOURCE_SA;
			return;
		}
	}
	config_report(token, line, "expected smp or sa");
}

/* routingPathSls LIST: SLs, 0-15, as N or N-M, separated by commas
 * (0-3,8): those the fabric's paths use (the SM's PathRecords say). */
static void parse_path_sls(const char *token, char *line)
{
	uint16_t sls = 0;
	const char *p = line;

	while (p && *p) {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;

		if (end == p || lo < 0 || lo > 15)
			break;
		p = end;
		if (*p == '-') {
			hi = strtol(p + 1, &end, 10);
			if (end == p + 1 || hi < lo || hi > 15)
				break;
			p = end;
		}
		for (long sl = lo; sl <= hi; sl++)
			sls |= (uint16_t)(1u << sl);
		if (*p == ',')
			p++;
		else if (*p && !isspace((unsigned char)*p))
			break;
		else {
			while (*p && isspace((unsigned char)*p))
				p++;
			if (!*p) {
				route_cfg.path_sls = sls;
				return;
			}
			break;
		}
	}
	config_report(token, line, "expected SLs 0-15, as N or N-M separated by commas");
}

static const struct config_token tokens[] = {
	{"routingCheck", CONFIG_BOOL, &route_cfg.enabled, .help = "yes|no"},
	{"routingCheckInterval", CONFIG_UINT, &route_cfg.interval_s, .min = 1, .max = 604800,
	 .help = "SECONDS"},
	{"routingSettle", CONFIG_UINT, &route_cfg.settle_s, .min = 1, .max = 3600,
	 .help = "SECONDS"},
	{"routingSmStall", CONFIG_UINT, &route_cfg.sm_stall_s, .min = 5, .max = 86400,
	 .help = "SECONDS"},
	{"expectedTopology", CONFIG_PATH, route_cfg.plan_path, sizeof(route_cfg.plan_path),
	 .help = "FILE"},
	{"routingSource", CONFIG_CUSTOM, .parse = parse_source, .help = "smp|sa"},
	{"routingPathSls", CONFIG_CUSTOM, .parse = parse_path_sls, .help = "SL[-SL][,...]"},
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
