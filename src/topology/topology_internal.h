/* Between the topology area's files: the discovery's life cycle
 * (topology_area.c), the following of changes between discoveries
 * (topology_follow.c) and its probes (topology_probe.c). */
#ifndef IBSNMPD_TOPOLOGY_INTERNAL_H
#define IBSNMPD_TOPOLOGY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "ibsnmpd/cache.h"
#include "ibsnmpd/node_names.h"
#include "ibsnmpd/topology.h"
#include "ibsnmpd/trap.h"

/* One round of probes: behind every switch port that came up, NodeInfo by
 * directed route; for a node not seen before, its NodeDescription and
 * PortInfo (a CA's port it was reached by; a switch's port 0 and every
 * port, and behind each one up, the same again). What they find is made
 * to patch; done() is called once every answer is in, at the earliest from
 * topo_round_release. */
struct topo_round {
	struct topo_patch *patch;
	const struct topology *routes;
	size_t pending;       /* SMPs in flight, + 1 while starting */
	size_t smps, budget;  /* sent; more than budget: given up for a discovery */
	size_t probed, found, added;
	bool abandoned;       /* a discovery took over: freed when the last answer is in */
	char why[200];        /* what could not be placed: a discovery is wanted */
	double began;        /* monotonic_seconds() */
	/* ports behind which nothing answered */
	struct topo_port_ref *silent;
	size_t n_silent, cap_silent;
	void (*done)(struct topo_round *r, void *arg);
	void *arg;
};

/* A round patching f (held by the patch) with the links gone and the LIDs
 * of c, and probing behind the ports of its TOPO_LINK_NEW changes, by the
 * routes of `routes` (f with the links gone taken out: a route through
 * one of them would not pass; held); NULL out of memory. */
struct topo_round *topo_round_start(const struct topology *f, const struct topology *routes,
				    const struct topo_change *c, size_t n, size_t budget,
				    void (*done)(struct topo_round *r, void *arg), void *arg);
/* Lets go of the hold the start keeps (the caller has stored the round):
 * done() now if no probe went out. */
void topo_round_release(struct topo_round *r);
/* The round's answers are dropped from now on (done() is not called); it
 * frees itself when the last one is in. */
void topo_round_abandon(struct topo_round *r);
void topo_round_free(struct topo_round *r);

/* ---- the area ---- */

/* A port behind which nothing answered: probed again once `next` has
 * passed (SILENT_FIRST_S, doubling with each try, at most a discovery's
 * interval), or when it has been seen down. */
struct silent_port {
	struct topo_port_ref ref; /* first: sorted and found by it */
	unsigned tries;
	time_t next;
};
#define SILENT_FIRST_S 10

struct topology_area {
	struct cache_group group;        /* snapshot: struct topology */
	char ca_name[64];
	int port_num;
	char helper[4096];
	/* the running discovery: helper process, its stdout, what it said so far */
	pid_t pid;
	int fd;
	bool output_done, exited;        /* both: the discovery is over */
	int status;                      /* waitpid's; -1: killed at its deadline */
	char *out;
	size_t len, cap;
	bool alone_noted;                /* a discovery saw only the local node: said */
	unsigned link_trap_alarm;
	struct trap_area *traps;
	struct trap_observer trap_seen;
	struct cache_group *local_ports; /* the local node's PortInfo */
	struct cache_observer sm_watch;
	/* the node-name map in force (NULL: none), the file it came from and
	 * what was last seen there (to read it again only when it changed,
	 * and to say a failure once) */
	struct node_name_map *names;
	char names_path[4096];
	struct stat names_seen;
	bool names_file_seen, names_failed;
	unsigned names_alarm;
	/* following changes: the link sweep's reading (topology_follow_links),
	 * the probes under way, a reading that came meanwhile, the ports
	 * behind which nothing answered (sorted), the publications' count */
	topology_links_fn links;
	void *links_arg;
	struct topo_round *round;
	bool recheck;
	bool storm_pending;              /* a discovery was asked for many links up at once */
	unsigned links_alarm, silent_alarm;
	struct silent_port *silent;
	size_t n_silent;
	unsigned long serial;
};

/* topology_area.c: a discovery now (logged; one at a time); each LID's M_Key
 * after a discovery or a patch; pmDiscoveryInterval; discoverySource sa. */
void topology_rediscover(struct topology_area *a);
void topology_apply_mkeys(const struct topology *t);
unsigned topology_interval_s(void);
bool topology_source_is_sa(void);

/* topology_follow.c: whether changes are followed by probes (the link sweep
 * lends its readings, the subnet was discovered by SMP and SMPs are
 * answered); the area's start and stop. */
bool topology_following(const struct topology_area *a);
void topology_follow_start(struct topology_area *a);
void topology_follow_stop(struct topology_area *a);

#endif
