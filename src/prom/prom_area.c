/* The Prometheus area (prom.h): prometheusListen turns it on. A scrape
 * holds the published snapshots of the discovery, the counter sweeps and
 * the link sweeps (those of the areas that run), and copies the agent's
 * counters, when it begins; the listener (prom_http.c) streams the text. */
#include "ibsnmpd/netsnmp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/area.h"
#include "ibsnmpd/fabric.h"
#include "ibsnmpd/pm.h"
#include "ibsnmpd/slurm.h"
#include "ibsnmpd/topology.h"
#include "ibsnmpd/trap.h"
#include "ibsnmpd/vitals.h"
#include "ibsnmpd/alarm.h"

#include "prom_internal.h"

#ifndef IBSNMPD_VERSION
#define IBSNMPD_VERSION "0.1.0"
#endif

static struct prom_config cfg;

struct prom_area {
	struct cache_group *topology, *counters, *links, *vitals, *alarms, *route; /* NULL: none */
	struct trap_area *traps;
	void *slurm;                                  /* the Slurm area; NULL: none */
	struct prom_http *http;
	char listen_text[sizeof(cfg.listen_text)];   /* as started */
	bool web;                                     /* a prometheusWebConfig in force */
	uint8_t web_digest[32];                       /* and what it read */
};

/* ---- a scrape's sources ------------------------------------------------------------- */

static void add_cache(const struct cache_decl *decl, struct cache_group *g, void *arg)
{
	struct prom_sources *src = arg;
	struct prom_cache *c;

	if (src->n_caches == CACHE_INDEX_MAX)
		return;
	c = &src->caches[src->n_caches++];
	c->name = decl->name;
	c->lifetime_s = g->lifetime_s;
	c->refreshes = g->attempts;
	c->age_s = cache_group_age_s(g);
	c->last_duration_s = g->last_duration;
	c->failing = g->last_failed;
}

static const void *hold(struct cache_group *g)
{
	return g ? cache_snapshot_hold(g) : NULL;
}

static int scrape_begin(void *arg, struct prom_sources *src)
{
	struct prom_area *a = arg;

	memset(src, 0, sizeof(*src));
	src->version = IBSNMPD_VERSION;
	src->fabric_name = ibsnmpd_cfg.fabric_name[0] ? ibsnmpd_cfg.fabric_name : NULL;
	src->topology = hold(a->topology);
	src->pm = hold(a->counters);
	src->fabric = hold(a->links);
	src->vitals = hold(a->vitals);
	src->alarms = hold(a->alarms);
	src->route = hold(a->route);
	if (src->topology && src->topology->n_nodes &&
	    (src->answer_times = calloc(src->topology->n_nodes, sizeof(*src->answer_times))))
		for (size_t i = 0; i < src->topology->n_nodes; i++)
			mad_engine_lid_answer_time(src->topology->nodes[i].lid, &src->answer_times[i]);
	src->now = time(NULL);
	mad_engine_get_stats(&src->mads);
	if (a->traps) {
		src->have_traps = true;
		trap_get_stats(a->traps, &src->traps);
	}
	for (int f = 0; f < NOTIFY_FAMILIES; f++)
		notify_get_stats((enum notify_family)f, &src->notify[f]);
	notify_get_queue_stats(&src->queue);
	loop_get_stats(&src->loop);
	compat_get_write_stats(&src->writes);
	areas_for_each_cache(add_cache, src);
	return 0;
}

static void scrape_end(void *arg, struct prom_sources *src)
{
	struct prom_area *a = arg;

	if (a->topology)
		cache_snapshot_release(a->topology, src->topology);
	if (a->counters)
		cache_snapshot_release(a->counters, src->pm);
	if (a->links)
		cache_snapshot_release(a->links, src->fabric);
	if (a->vitals)
		cache_snapshot_release(a->vitals, src->vitals);
	if (a->alarms)
		cache_snapshot_release(a->alarms, src->alarms);
	if (a->route)
		cache_snapshot_release(a->route, src->route);
	free(src->answer_times);
	src->answer_times = NULL;
}

static char *slurm_topology(void *arg, bool yaml)
{
	return slurm_topology_text(((struct prom_area *)arg)->slurm, yaml);
}

/* ---- life cycle --------------------------------------------------------------------- */

/* prometheusWebConfig read for use; what it says worth a line, said */
static int load_web(struct prom_web **web)
{
	char why[600];
	time_t expiry;

	if (prom_web_load(cfg.web_path, web, why, sizeof(why))) {
		snmp_log(LOG_ERR, "prometheusWebConfig %s: %s\n", cfg.web_path, why);
		return -1;
	}
	if ((*web)->extra_suites[0])
		snmp_log(LOG_WARNING, "prometheusWebConfig %s: GnuTLS combines the parts of the "
			 "cipher_suites listed: it also allows %s\n", cfg.web_path,
			 (*web)->extra_suites);
	expiry = prom_web_cert_expiry(*web);
	if (expiry && expiry < time(NULL))
		snmp_log(LOG_WARNING, "prometheusWebConfig %s: the server's certificate has "
			 "expired: scrapers will refuse it\n", cfg.web_path);
	else if (expiry && expiry < time(NULL) + 14 * 86400)
		snmp_log(LOG_WARNING, "prometheusWebConfig %s: the server's certificate expires in "
			 "%ld day(s)\n", cfg.web_path, (long)((expiry - time(NULL)) / 86400));
	if ((*web)->cfg.n_users && !(*web)->cfg.tls &&
	    !prom_addr_is_loopback((struct sockaddr *)&cfg.listen))
		snmp_log(LOG_WARNING, "prometheusWebConfig %s: basic auth without TLS: the "
			 "passwords cross the network in the clear\n", cfg.web_path);
	return 0;
}

static void *start(const struct area_env *env)
{
	struct prom_area *a = calloc(1, sizeof(*a));
	struct pm_area *pm = area_find(&pm_area_def);
	struct fabric_area *fabric = area_find(&fabric_area_def);
	struct vitals_area *vitals = area_find(&vitals_area_def);
	void *alarm_area = area_find(&alarm_area_def);
	struct cache_group *alarms = alarm_area ? alarm_area_group(alarm_area) : NULL;
	struct prom_feed feed = {scrape_begin, scrape_end, slurm_topology, NULL};
	struct prom_web *web = NULL;

	(void)env;
	if (!a)
		return NULL;
	a->topology = topology_followed_by("the Prometheus metrics");
	a->counters = pm ? &pm->sweep : NULL;
	a->links = fabric ? &fabric->group : NULL;
	a->vitals = vitals ? &vitals->readings : NULL;
	a->alarms = alarms;
	a->route = route_area_group(area_find(&route_area_def));
	a->traps = area_find(&trap_area_def);
	a->slurm = area_find(&slurm_area_def);
	feed.arg = a;
	snprintf(a->listen_text, sizeof(a->listen_text), "%s", cfg.listen_text);
	if (cfg.web_path[0]) {
		if (load_web(&web))
			goto fail;
		a->web = true;
		memcpy(a->web_digest, web->digest, sizeof(a->web_digest));
	}
	a->http = prom_http_start(&cfg, web, &feed);
	if (!a->http)
		goto fail;
	return a;
fail:
	free(a);
	return NULL;
}

static void reload(void *self)
{
	struct prom_area *a = self;
	struct prom_web *web = NULL;

	if (strcmp(a->listen_text, cfg.listen_text))
		snmp_log(LOG_WARNING, "a change of 'prometheusListen' takes effect at the next start\n");
	if (cfg.web_path[0] && load_web(&web)) {
		snmp_log(LOG_ERR, "prometheusWebConfig: the configuration before stays\n");
		return;
	}
	prom_http_set_allow(a->http, cfg.allow, cfg.n_allow, prom_web_authenticates(web));
	if (!web && !a->web)
		return;
	if (web && a->web && !memcmp(web->digest, a->web_digest, sizeof(a->web_digest))) {
		prom_web_free(web); /* nothing changed: the scrapes under way go on */
		return;
	}
	{
		uint8_t digest[32] = {0};
		bool with = web != NULL;

		if (web)
			memcpy(digest, web->digest, sizeof(digest));
		if (prom_http_set_web(a->http, web))
			return;
		a->web = with;
		memcpy(a->web_digest, digest, sizeof(digest));
	}
}

static void stop(void *self)
{
	struct prom_area *a = self;

	prom_http_stop(a->http); /* its scrapes end: nothing is held after */
	free(a);
}

static bool wanted(void)
{
	return cfg.listen_set;
}

/* A listener beyond loopback without access control: as direct mode
 * without rocommunity, refused. Access control is prometheusAllow, or
 * scrapers who say who they are over TLS (prometheusWebConfig's basic auth
 * or verified client certificates). */
static const char *refused(void)
{
	static char why[320];

	if (!cfg.listen_set || cfg.n_allow || prom_addr_is_loopback((struct sockaddr *)&cfg.listen))
		return NULL;
	if (cfg.web_tls && cfg.web_authenticates)
		return NULL;
	snprintf(why, sizeof(why),
		 "prometheusListen %s is not a loopback address: refusing to start without "
		 "prometheusAllow (the addresses that may scrape, e.g. 10.0.0.0/8) or a "
		 "prometheusWebConfig with TLS and basic_auth_users or client certificates",
		 cfg.listen_text);
	return why;
}

/* ---- tokens --------------------------------------------------------------------------- */

static void parse_listen(const char *token, char *line)
{
	struct sockaddr_storage ss;
	socklen_t len;
	const char *why;

	if (strlen(line) >= sizeof(cfg.listen_text) ||
	    prom_parse_listen(line, &ss, &len, &why)) {
		config_report(token, line, strlen(line) >= sizeof(cfg.listen_text)
						   ? "too long" : why);
		return;
	}
	cfg.listen = ss;
	cfg.listen_len = len;
	cfg.listen_set = true;
	snprintf(cfg.listen_text, sizeof(cfg.listen_text), "%s", line);
}

/* "prometheusAllow CIDR [CIDR...]", repeatable */
static void parse_allow(const char *token, char *line)
{
	struct prom_cidr found[PROM_ALLOW_MAX];
	size_t n = 0;
	const char *why;
	char *save = NULL;

	for (char *word = strtok_r(line, " \t", &save); word; word = strtok_r(NULL, " \t", &save)) {
		if (cfg.n_allow + n == PROM_ALLOW_MAX) {
			config_report(token, word, "too many address blocks (at most 64)");
			return;
		}
		if (prom_parse_cidr(word, &found[n], &why)) {
			config_report(token, word, why);
			return;
		}
		n++;
	}
	if (!n) {
		config_report(token, "", "give one or more address blocks, e.g. 10.0.0.0/8");
		return;
	}
	/* all or nothing: a line with a bad block adds none */
	memcpy(&cfg.allow[cfg.n_allow], found, n * sizeof(found[0]));
	cfg.n_allow += n;
}

/* "prometheusWebConfig PATH": read now, so that a file ibsnmpd would
 * not serve with is an error of this line (and a SIGHUP keeps the one
 * before); read again for use at start and on SIGHUP */
static void parse_web_config(const char *token, char *line)
{
	struct prom_web *web = NULL;
	char why[600];

	if (!line[0] || strlen(line) >= sizeof(cfg.web_path)) {
		config_report(token, line, line[0] ? "too long" : "give the file's path");
		return;
	}
	if (prom_web_load(line, &web, why, sizeof(why))) {
		config_report(token, line, why);
		return;
	}
	snprintf(cfg.web_path, sizeof(cfg.web_path), "%s", line);
	cfg.web_tls = web->cfg.tls;
	cfg.web_authenticates = prom_web_authenticates(web);
	prom_web_free(web);
}

static void defaults(void)
{
	memset(&cfg, 0, sizeof(cfg));
}

static const struct config_token tokens[] = {
	{"prometheusListen", CONFIG_CUSTOM, .parse = parse_listen, .help = "ADDRESS:PORT"},
	{"prometheusAllow", CONFIG_CUSTOM, .parse = parse_allow, .help = "CIDR [CIDR...]"},
	{"prometheusWebConfig", CONFIG_CUSTOM, .parse = parse_web_config, .help = "PATH"},
};

const struct area_def prom_area_def = {
	.name = "the Prometheus metrics",
	AREA_CONFIG(tokens, cfg, defaults),
	.wanted = wanted,
	.enable_token = "prometheusListen",
	.refused = refused,
	.start = start,
	.reload = reload,
	.stop = stop,
};
