/* The subnet's topology: every node and port a discovery found, and the
 * area that discovers it (src/topology/).
 *
 *   discover_main.c    ibsnmpd-discover: libibnetdisc, in a helper process
 *   topology_parse.c   pure: the helper's output as a struct topology
 *   sa_view.c          pure: the SA's records (RMPP put together) as the
 *                      helper's output, when it discovers from the SA
 *   topology_patch.c   pure: where the link sweep's last reading disagrees
 *                      with the topology, and the topology patched with
 *                      what probes found there
 *   topology_probe.c   the probes: NodeInfo by directed route behind a port
 *                      that came up, and what a node not seen before is
 *   topology_area.c    the area: one cache group whose snapshot is the last
 *                      discovery, or the last one patched; it runs the
 *                      helper at start, every pmDiscoveryInterval, when the
 *                      master SM moves and when probes cannot place what
 *                      they found, and probes around the ports whose link
 *                      changed (after a trap 128, the link sweep's reading)
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

#define TOPO_MAX_HOPS 63 /* the longest directed route (IBA: HopCount 0..63) */

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
	uint8_t route[TOPO_MAX_HOPS];
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
	/* Which publication it is (the area numbers them from 1), and, for a
	 * topology patched from the one before (topology_patch_finish), that
	 * one's serial and the ports that differ from it (a new node's, a
	 * link made or gone, a LID given): a follower that read the one
	 * before reads only those again. patched_from 0: a discovery. */
	unsigned long serial, patched_from;
	struct topo_port_ref *changed;
	size_t n_changed;
	size_t nodes_added, nodes_removed;
};

struct topo_port_ref {
	uint64_t guid;
	unsigned port;
};
/* By GUID, then port (qsort, bsearch). */
int topo_port_ref_cmp(const void *x, const void *y);

void topology_free(struct topology *f);
/* Parses ibsnmpd-discover's output, its nodes named after the node-name map
 * names (NULL: none); NULL (reason in err) if it is not whole and
 * well-formed. Pure; unit-tested, fuzzed. */
struct node_name_map;
struct topology *topology_parse(const char *text, size_t len, const struct node_name_map *names,
				char *err, size_t errlen);
/* A discovery f (taken over) with the nodes of prev it did not find though
 * the port in front of them is up and names no node (their NodeInfo went
 * unanswered), and what is behind them, kept as prev had them: nodes
 * unanswered are no nodes gone (topology_keep.c). *kept: how many; their
 * names are for the caller to give (topology_name_nodes). f itself when
 * none is kept, or out of memory. Pure; unit-tested. */
struct topology *topology_keep_unanswered(const struct topology *prev, struct topology *f,
					  size_t *kept);
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

/* Whether f is a patch that brings no node (links gone or back, LIDs):
 * a follower that reads every node has nothing new to read. */
static inline bool topology_patch_adds_no_node(const struct topology *f)
{
	return f && f->patched_from && !f->nodes_added;
}

/* ---- following changes (topology_patch.c) ---- */

/* What the link sweep last read of a port of a node of the topology it
 * swept: its physical link up (a directed-route SMP passes), its LID, its
 * active speed (sma_speed_generation). */
struct topo_link_seen {
	uint64_t guid;
	unsigned port;
	bool up;
	unsigned lid;
	uint8_t speed;
};

enum topo_change_kind {
	TOPO_LINK_GONE,  /* linked in the topology, down now: no probe */
	TOPO_LINK_NEW,   /* a switch's port up, no link in the topology: probe behind it */
	TOPO_PORT_LID,   /* a CA port's LID is another now (or it had none) */
};

struct topo_change {
	enum topo_change_kind kind;
	uint64_t guid;
	unsigned port;
	unsigned lid;
	uint8_t speed;
};

/* Where seen[0..n) disagrees with f, into out (room for n): links gone,
 * links new (of switches; the local node's own port is the discovery's
 * root: not probed), LIDs changed. Pure; unit-tested. */
size_t topology_changes(const struct topology *f, const struct topo_link_seen *seen, size_t n,
			struct topo_change *out);

/* f's changed ports appended to a follower's list of what its next read
 * takes (*refs of *n, room for *cap, grown by doubling); -1 out of memory
 * (the list as it was). Pure. */
int topology_changed_keep(const struct topology *f, struct topo_port_ref **refs, size_t *n,
			  size_t *cap);

/* About what a discovery by libibnetdisc of f costs in SMPs: NodeInfo and
 * NodeDescription of each node, PortInfo of each port it reads (a switch's
 * port 0 too), NodeInfo behind each switch port linked. */
size_t topology_discovery_cost(const struct topology *f);

/* A topology being patched: a copy of one that changes are made to, then
 * (finish) pruned to what the local node reaches, sorted, routed and
 * named. Pure; unit-tested. */
struct topo_patch;
struct topo_patch *topology_patch_begin(const struct topology *f);
void topology_patch_free(struct topo_patch *p);
/* The node with guid (new ones too): its fields may be changed through the
 * pointer until the next call that adds; NULL if none. */
struct topo_node *topology_patch_node(struct topo_patch *p, uint64_t guid);
/* A node not in it (guid, type, num_ports, desc, ident; a switch's ports
 * are made, unlinked): -1 if the GUID is there or out of memory. */
int topology_patch_add(struct topo_patch *p, const struct topo_node *nd);
/* A port's LID, port GUID, speed (the port made if need be); -1 if its
 * node is not there, the port is beyond its ports, or out of memory. */
int topology_patch_port(struct topo_patch *p, uint64_t guid, unsigned port, unsigned lid,
			uint64_t port_guid, uint8_t speed);
/* The link between two ports (both nodes there), each unlinked from what it
 * was linked to before; -1 as above. */
int topology_patch_link(struct topo_patch *p, uint64_t a, unsigned pa, uint64_t b, unsigned pb);
/* Whether (guid, port) is linked in it. */
bool topology_patch_linked(struct topo_patch *p, uint64_t guid, unsigned port);
/* The link of a port gone, at both ends (a CA's port without a link is
 * not in a discovery: it goes). */
void topology_patch_unlink(struct topo_patch *p, uint64_t guid, unsigned port);
/* The patched topology: the nodes the local node reaches through switches
 * (the others gone), every node's route from it, its ports that differ
 * from the original in changed, named after names. NULL out of memory
 * (err says). The patch stays and is freed by topology_patch_free. */
struct topology *topology_patch_finish(struct topo_patch *p, const struct node_name_map *names,
				       char *err, size_t errlen);

/* ---- the area (topology_area.c) ---- */

struct area_def;
extern const struct area_def topology_area_def;

/* The group whose snapshot is the last discovery (NULL until the first)
 * and whose publications are the discoveries, for an area that follows it
 * (from a start hook); NULL, logged as "WHO needs the subnet's topology",
 * when the topology area does not run. */
struct cache_group *topology_followed_by(const char *who);
/* The discovery helper (ibsnmpd-discover) and the CA and port it works
 * from, for another of its modes (the route area's --lft); -1: none. */
int topology_helper(const char **path, const char **ca, int *port);

/* Where SMPs to the node go: its LID, or (no LID yet: no SM) the directed
 * route the discovery took; -1 if neither is known. */
int topology_node_portid(const struct topo_node *nd, ib_portid_t *to);

/* The link sweep (the fabric area) lends what it last read, for the
 * topology to follow changes by probes: links(arg, &swept, &seen) returns
 * the number of ports in *seen (malloc'ed, the caller frees; NULL out of
 * memory) and the topology they were swept against in *swept (NULL:
 * none yet). Once, at start; NULL at stop. */
typedef size_t (*topology_links_fn)(void *arg, const struct topology **swept,
				    struct topo_link_seen **seen);
void topology_follow_links(topology_links_fn links, void *arg);
/* The link sweep published a reading: the topology compares it. */
void topology_links_read(void);

#endif
