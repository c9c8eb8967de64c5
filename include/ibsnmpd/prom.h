/* Prometheus metrics served by ibsnmpd itself (src/prom/): the published
 * snapshots of the subnet's ports, links and nodes and the agent's own
 * counters, in Prometheus' text exposition format (0.0.4) or OpenMetrics
 * 1.0, on an HTTP listener of the main loop (prometheusListen).
 *
 *   prom_area.c    the area: prometheusListen, prometheusAllow; what a
 *                  scrape holds (the snapshots) and copies (the counters)
 *   prom_http.c    the listener: libmicrohttpd driven by the main loop,
 *                  access by address, paths, a scrape streamed a block at
 *                  a time while SNMP requests go on
 *   prom_render.c  pure: a scrape's text, a block at a time
 *
 * A metric reads one field of a snapshot's row (struct pm_port_state,
 * struct fabric_port, struct topo_node), the same field the MIB column of
 * the same name serves; mibs/README.md maps them. */
#ifndef IBSNMPD_PROM_H
#define IBSNMPD_PROM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ibsnmpd/alarm.h"
#include "ibsnmpd/config.h"
#include "ibsnmpd/fabric.h"
#include "ibsnmpd/loop.h"
#include "ibsnmpd/mad_engine.h"
#include "ibsnmpd/netsnmp_compat.h"
#include "ibsnmpd/notify.h"
#include "ibsnmpd/pm.h"
#include "ibsnmpd/route.h"
#include "ibsnmpd/topology.h"
#include "ibsnmpd/trap.h"
#include "ibsnmpd/vitals.h"

/* ---- the text (prom_render.c, pure) ---- */

/* What a scrape asks for, in its URL's query (as node_exporter's collect[]):
 * collect[]=NAME (repeated; none: all) the families of those collectors;
 * node_type=switch|ca|router (repeated; none: all) the rows of those nodes;
 * shard=K&shards=N the rows of the nodes whose GUID hashes to K of N, so
 * that a big fabric can be split across scrape jobs or Prometheus servers
 * (every shard has the agent's own families). */
enum prom_collector {
	PROM_C_AGENT,    /* ibsnmpd_*: the agent's MAD engine, caches, notifications */
	PROM_C_NODES,    /* infiniband_node_info */
	PROM_C_COUNTERS, /* the ports' counters */
	PROM_C_LINKS,    /* the ports' links: state, speed, health, the other end */
	PROM_C_VITALS,   /* temperatures, fans, firmware and inventory, uptime */
	PROM_C_MODULES,  /* the modules and their lanes' optics */
	PROM_C_ALARMS,   /* the active alarms */
	PROM_C_ROUTING,  /* the routing checks, the switch ports' loads, the hop histogram */
	PROM_COLLECTORS
};

struct prom_filter {
	unsigned collectors;   /* 1 << enum prom_collector; 0: all */
	unsigned node_types;   /* 1 << node type; 0: all */
	unsigned shard, shards; /* shards 0: all */
};

/* One argument of the query (pure: unit-tested, fuzzed): 0, or -1 and
 * why (the scraper gets 400 and it) */
int prom_filter_arg(struct prom_filter *f, const char *key, const char *value, const char **why);
/* After the last argument: -1 and why if they do not fit together */
int prom_filter_check(const struct prom_filter *f, const char **why);
/* The shard of a node GUID among shards (a hash: GUIDs of a vendor run in
 * sequence) */
unsigned prom_shard_of(uint64_t guid, unsigned shards);

/* One cache group as a scrape found it (ibsnmpdCacheTable's row). */
struct prom_cache {
	const char *name;
	unsigned lifetime_s;
	unsigned long refreshes;
	long age_s;               /* -1: never filled */
	double last_duration_s;
	bool failing;
};

/* The metrics listener's own counts (prom_http.c): what it refused or cut,
 * by reason (the label of ibsnmpd_http_refused_total). */
enum prom_http_refusal {
	PROM_HTTP_OUTSIDE_ALLOW,     /* a connection from outside prometheusAllow */
	PROM_HTTP_CONNECTIONS,       /* a connection past the limit of them all */
	PROM_HTTP_PER_ADDRESS,       /* a connection past the limit of one address */
	PROM_HTTP_NO_REQUEST,        /* closed before a request: TLS failed, or nothing asked */
	PROM_HTTP_SLOW_REQUEST,      /* a request not sent whole in time: cut */
	PROM_HTTP_UNAUTHORIZED,      /* 401: no user, or a wrong password */
	PROM_HTTP_AUTH_BUSY,         /* 503: too many passwords being checked */
	PROM_HTTP_RATE_LIMITED,      /* 429: over rate_limit */
	PROM_HTTP_SCRAPES,           /* 503: too many scrapes at once */
	PROM_HTTP_SLOW_SCRAPE,       /* a scrape read too slowly: cut */
	PROM_HTTP_BAD_CERTIFICATE,   /* a client certificate refused */
	PROM_HTTP_REFUSALS
};
extern const char *const prom_http_refusal_names[PROM_HTTP_REFUSALS];

struct prom_http_stats {
	unsigned long requests;
	unsigned long connections;   /* open now */
	unsigned long refused[PROM_HTTP_REFUSALS];
};

/* What one scrape renders: snapshots held for it (NULL: none yet), and
 * counters copied when it began. */
struct prom_sources {
	const char *version;
	const char *fabric_name;  /* fabricName: a label of every series; NULL: none */
	const struct topology *topology;
	const struct pm_snapshot *pm;
	const struct fabric_snapshot *fabric;
	const struct vitals_snapshot *vitals;
	const struct alarm_snapshot *alarms;
	const struct route_snapshot *route;
	/* each topology node's answer time, copied when the scrape began
	 * (answers == 0: none timed); NULL: none */
	struct mad_answer_time *answer_times;
	struct prom_filter filter;
	time_t now;               /* wall clock of the scrape's start */
	struct mad_engine_stats mads;
	bool have_traps;
	struct trap_stats traps;
	struct notify_stats notify[NOTIFY_FAMILIES];
	struct notify_queue_stats queue;
	struct loop_stats loop;
	struct compat_write_stats writes;
	bool have_http;
	struct prom_http_stats http;
	struct prom_cache caches[CACHE_INDEX_MAX];
	size_t n_caches;
};

enum prom_format {
	PROM_TEXT,        /* text/plain; version=0.0.4 */
	PROM_OPENMETRICS, /* application/openmetrics-text; version=1.0.0 */
};

/* The longest line the text has (a port's info line with two escaped
 * descriptions is under 700 octets). */
#define PROM_LINE_MAX 4096

struct prom_port;
struct prom_render {
	const struct prom_sources *src;
	enum prom_format format;
	/* the ports of both snapshots, merged by (GUID, port), and their
	 * label sets (node_guid, node, port) one after the other in labels */
	struct prom_port *ports;
	size_t n_ports;
	char *labels;
	const struct vitals_node *vnode; /* the vitals node of the last row read */
	/* where the text is: the next sample is (family, variant, row) */
	size_t family, variant, row;
	bool header_done, eof_done, done;
	/* a line that did not fit the caller's block, and how much of it went */
	char carry[PROM_LINE_MAX];
	size_t carry_len, carry_at;
};

/* -1: out of memory (nothing to end). */
int prom_render_begin(struct prom_render *r, const struct prom_sources *src,
		      enum prom_format format);
/* The next octets of the text, at most max (any max > 0); 0: the end. */
size_t prom_render_next(struct prom_render *r, char *buf, size_t max);
void prom_render_end(struct prom_render *r);

/* The format a scraper's Accept header asks for (NULL: none): OpenMetrics
 * where it names application/openmetrics-text, else the text format. */
enum prom_format prom_format_for(const char *accept);
const char *prom_content_type(enum prom_format format);

/* ---- the area (prom_area.c) ---- */

struct area_def;
extern const struct area_def prom_area_def;

#endif
