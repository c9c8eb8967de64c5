/* The subnet's topology: every node and port a discovery found, and the
 * area that discovers it (src/topology/).
 *
 *   discover_main.c    ibsnmpd-discover: libibnetdisc, in a helper process
 *   topology_parse.c   pure: the helper's output as a struct topology
 *   sa_view.c          pure: the SA's records (RMPP put together) as the
 *                      helper's output, when it discovers from the SA
 *   topology_area.c    the area: one cache group whose snapshot is the last
 *                      discovery; it runs the helper every
 *                      pmDiscoveryInterval, after a trap 128 (once a burst
 *                      is over) and when the master SM moves
 *
 * Every area that needs the subnet's nodes (the PM sweeps, the link sweeps,
 * the node contexts, the partition verifier) reads this snapshot and
 * observes its publications; none discovers on its own. */
#ifndef IBSNMPD_TOPOLOGY_H
#define IBSNMPD_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/mad.h>

#include "ibsnmpd/cache.h"

struct topo_node {
	uint64_t guid;
	unsigned type;        /* 1 CA, 2 switch, 3 router */
	unsigned lid;         /* where its agents answer: a switch's port 0, a CA port's LID */
	unsigned num_ports;
	char desc[65];        /* NodeDescription, as the node says it */
	const char *name;     /* what ibsnmpd calls it (node_names.h): the node-name
				 map's, else desc, unique in the subnet; in the
				 topology's name pool */
	/* the directed route the discovery reached it by (out ports from the
	 * local node), for a node without a LID yet; hops 0: the local node */
	bool has_route;
	unsigned route_hops;
	uint8_t route[63];
	/* NodeInfo's identity ("ident" line) */
	bool has_ident;
	unsigned vendor_id, device_id, revision;
};

struct topo_port {
	size_t node;          /* index into nodes */
	unsigned port;
	unsigned lid;         /* LID to send PerfMgt MADs to for this port */
	uint64_t port_guid;   /* 0 if the discovery did not say */
	uint64_t peer_guid;   /* the node at the other end of the link; 0 unknown */
	unsigned peer_port;
	uint8_t speed;        /* active speed when discovered (sma_speed_generation), 0 down
				 or unknown: the layout of its FEC counters follows it */
};

/* One discovery. Shared, read-only, by the topology's cache group and by
 * every snapshot built from it: the last reference frees it (all on the
 * main thread). */
struct topology {
	unsigned refs;
	size_t n_nodes, n_ports;
	struct topo_node *nodes;   /* sorted by GUID */
	struct topo_port *ports;   /* sorted by (node GUID, port) */
	double seconds;            /* how long the discovery took */
	char *name_pool;           /* the nodes' names */
	/* Where it comes from: the discovery by directed route (libibnetdisc),
	 * or the SA (the SM's NodeRecords, PortInfoRecords, LinkRecords: where
	 * this port may not send SMPs); then every port's PortInfo as the SA
	 * gave it, beside ports (NULL otherwise), which the link sweep serves
	 * in place of its own SMPs. */
	bool from_sa;
	uint8_t (*portinfo)[64];
};

void topology_free(struct topology *f);
/* Parses ibsnmpd-discover's output, its nodes named after the node-name map
 * names (NULL: none); NULL (reason in err) if it is not whole and
 * well-formed. Pure; unit-tested, fuzzed. */
struct node_name_map;
struct topology *topology_parse(const char *text, size_t len, const struct node_name_map *names,
				char *err, size_t errlen);
/* Names the nodes (node_names_assign) after the map m (NULL: none); -1 out
 * of memory (the names before stay). */
int topology_name_nodes(struct topology *f, const struct node_name_map *m);
/* A copy of f with its nodes named after m: the same discovery as the
 * followers see it after the map changed. NULL out of memory. */
struct topology *topology_renamed(const struct topology *f, const struct node_name_map *m);
const struct topology *topology_get(const struct topology *f);
void topology_put(const struct topology *f);
/* A node by GUID; NULL if none. */
const struct topo_node *topology_node(const struct topology *f, uint64_t guid);
/* The port line of port `port` of nodes[node] (its LID, its remote end), or
 * NULL; a binary search. */
const struct topo_port *topology_port(const struct topology *f, size_t node, unsigned port);

/* ---- the area (topology_area.c) ---- */

struct area_def;
extern const struct area_def topology_area_def;

/* The group whose snapshot is the last discovery (NULL until the first)
 * and whose publications are the discoveries, for an area that follows it
 * (from a start hook); NULL, logged as "WHO needs the subnet's topology",
 * when the topology area does not run. */
struct cache_group *topology_followed_by(const char *who);

/* Where SMPs to the node go: its LID, or (no LID yet: no SM) the directed
 * route the discovery took; -1 if neither is known. */
int topology_node_portid(const struct topo_node *nd, ib_portid_t *to);

#endif
