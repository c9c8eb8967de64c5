/* Every node of the subnet as an SNMP device (the node area, src/node/):
 * one SNMP context per node (ib-<node GUID>, mib_node_context()), serving
 * the system group, IF-MIB's ifNumber, ifTable and ifXTable, ENTITY-MIB,
 * LLDP-MIB and SMA-MIB of that node; IBSNMPD-MIB::ibsnmpdNodeTable lists
 * them in the default context.
 *
 *   node_area.c        the area: tokens, what it follows
 *   node_dir.c         pure: the directory snapshot (nodes, their
 *                      interfaces, LLDP neighbours and entities) built from
 *                      the discovery, the fabric's PortInfo sweep, the PM
 *                      sweep's counters and the previous directory
 *   node_contexts.c    the directory's cache group, the contexts registered
 *                      and unregistered as nodes come and go, each context's
 *                      SMA-MIB read while it is being asked
 *   node_mib.c         the handlers: ibsnmpdNodeTable; a context's system
 *                      group, ifNumber, ifTable, ifXTable; its registration
 *   node_entity_mib.c  a context's ENTITY-MIB (the chassis and its ports)
 *   node_lldp_mib.c    a context's LLDP-MIB (its ports' neighbours)
 */
#ifndef IBSNMPD_NODE_H
#define IBSNMPD_NODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "ibsnmpd/cache.h"
#include "ibsnmpd/loop.h"
#include "ibsnmpd/mib_table.h"
#include "ibsnmpd/sma.h"


/* A port's counters from the PM sweep, as IF-MIB counts (octets). */
struct node_if_counters {
	bool per_cast;            /* unicast and multicast counted apart */
	uint64_t in_octets, out_octets, in_pkts, out_pkts;
	uint64_t in_ucast, out_ucast, in_mcast, out_mcast;
	uint32_t in_errors, in_discards, in_unknown, out_discards, out_errors;
	time_t discontinuity;     /* wall clock */
};

/* One physical port as IF-MIB sees it: what the handlers of ifTable and
 * ifXTable answer from, filled when asked (node_if_view) from the
 * directory's node_port. */
struct node_if {
	unsigned port;
	bool have_info;           /* PortInfo read (now or before) */
	unsigned link_state;      /* PortInfo PortState: 1 down .. 5 actDefer */
	unsigned phys_state;      /* PortPhysicalState: 1 sleep .. 7 phyTest */
	unsigned lanes;           /* active width in lanes, 0 when not up */
	int speed;                /* sma_speed_generation, 0 when not up */
	unsigned mtu;             /* octets: NeighborMTU */
	time_t last_change;       /* wall clock; 0 unknown */
	uint64_t remote_guid;     /* 0: never seen linked */
	unsigned remote_port;
	const char *remote_desc;  /* the remote node's name, in the directory; "" unknown */
	bool have_counters;
	struct node_if_counters c;
};

struct fabric_port;
struct pm_port_state;

/* One physical port in the directory (a row of the node's ifTable,
 * ifIndex = port): where its values are, not a copy of them. The rows
 * point into the fabric's and the PM sweep's snapshots the directory was
 * built from; it is rebuilt at every publication of either, on the main
 * thread, before the snapshot replaced is freed (cache_group_follow), so
 * the pointers never outlive their rows. A node no longer reached keeps
 * its last rows as copies of its own (kept_links, kept_counters). 24
 * octets a port where a copy was 176, plus 96 of a struct mib_row. */
struct node_port {
	const struct fabric_port *link;       /* its PortInfo row; NULL: never read */
	const struct pm_port_state *counters; /* its counters; NULL: never read */
	unsigned port;
};

/* A neighbour of a node with a context: a row of its lldpRemTable, whose
 * index is (lldpRemTimeMark, lldpRemLocalPortNum = the port = ifIndex,
 * lldpRemIndex 1). 8 octets: a 64-port switch's neighbours take 512. */
struct node_neighbor {
	uint32_t time_mark;       /* TimeTicks since the agent started, when the link last
				     changed (0: before it started) */
	uint16_t port;
	uint16_t if_at;           /* its interface: the node's ports[if_at] */
};

/* A row of a node's entPhysicalTable: its entPhysicalIndex, which says
 * what it is (node_entity_mib.c finds the row of the vitals it stands for):
 *   1              the chassis
 *   1000 + P       port P
 *   2000 + M + 1   the module in cage M (the PRM's number, from 0)
 *   3000 + S + 1   temperature sensor S (MTMP: 0 the ASIC)
 *   4000 + T + 1   the fan of tachometer T; 5000 + T + 1 its speed sensor
 *   10000 + 100 M + K  a sensor of module M: K 1 its temperature, 2 its
 *                  voltage, 10 + L, 20 + L, 30 + L the Rx power, Tx power
 *                  and bias of its lane L (from 1, over its ports' lanes) */
struct node_entity {
	uint32_t index;
};
#define NODE_ENTITY_CHASSIS 1       /* entPhysicalIndex of the chassis */
#define NODE_ENTITY_PORT_BASE 1000  /* of port N: 1000 + N */
#define NODE_ENTITY_MODULE_BASE 2000
#define NODE_ENTITY_TEMP_BASE 3000
#define NODE_ENTITY_FAN_BASE 4000
#define NODE_ENTITY_TACHO_BASE 5000
#define NODE_ENTITY_MODULE_SENSOR_BASE 10000
#define NODE_ENTITY_SENSOR_TEMP 1
#define NODE_ENTITY_SENSOR_VOLTAGE 2
#define NODE_ENTITY_SENSOR_RX 10
#define NODE_ENTITY_SENSOR_TX 20
#define NODE_ENTITY_SENSOR_BIAS 30

/* A row of entPhysicalContainsTable: a container and one of its children */
struct node_contain {
	uint32_t parent, child;
};

struct node_dir;

struct node_entry {
	uint64_t guid;
	unsigned type, lid, num_ports; /* type: 1 CA, 2 switch, 3 router */
	char desc[65];            /* NodeDescription */
	char *name;               /* what it is called (topo_node.name); its own copy */
	bool has_ident;
	unsigned vendor_id, device_id, revision;
	bool reachable;           /* the last discovery reached it */
	time_t unreachable_since; /* wall clock, when !reachable */
	char context[MIB_NODE_CONTEXT_MAX]; /* "" if its type gets no context */
	size_t first_if, n_if;    /* its interfaces: ports[first_if ..] */
	struct mib_rows if_rows;  /* ifTable / ifXTable; index: port */
	const struct node_dir *dir; /* the directory it is in */
	/* what its context's LLDP-MIB and ENTITY-MIB serve (node_dir.c) */
	uint32_t first_nb, n_nb;  /* its neighbours: neighbors[first_nb ..], by index */
	uint32_t first_entity, n_entities; /* its entities: entities[first_entity ..] */
	uint32_t first_sensor, n_sensors;  /* those of class sensor: sensors[first_sensor ..] */
	uint32_t first_contain;            /* contains[first_contain ..], n_entities - 1 */
	const struct vitals_node *vitals;  /* its hardware, in the directory's vitals; NULL none */
	uint32_t lldp_inserts, lldp_deletes; /* neighbours come and gone since its context began */
	time_t lldp_changed;      /* wall clock of the last of those; 0: none */
	time_t entity_changed;    /* wall clock when its ports or identity last changed */
};

struct node_dir {
	size_t n;
	struct node_entry *nodes; /* sorted by GUID */
	struct mib_rows rows;     /* ibsnmpdNodeTable; index: GUID (8 octets) */
	size_t n_if;
	struct node_port *ports;
	struct fabric_port *kept_links;      /* copies, for nodes no longer reached */
	struct pm_port_state *kept_counters;
	struct node_neighbor *neighbors;
	size_t n_neighbors;
	struct node_entity *entities;
	size_t n_entities;
	struct node_entity *sensors; /* entPhySensorTable's rows (ENTITY-SENSOR-MIB) */
	size_t n_sensors;
	struct node_contain *contains; /* by (parent, child) */
	size_t n_contains;
	const struct vitals_snapshot *vitals; /* what it was built from (NULL: none) */
	unsigned vitals_lifetime_s;  /* vitalsSensors: entPhySensorValueUpdateRate */
	time_t boot;              /* the agent's start (wall clock): TimeTicks 0 */
	/* the sweeps' snapshots it points into, held for it by its builder
	 * (node_contexts.c) until it is freed; NULL: none held */
	struct node_dir_holds *holds;
};

void node_dir_free(void *p);
/* A directory of no node (static; node_dir_free leaves it). */
struct node_dir *node_dir_empty(void);
const struct node_entry *node_dir_find(const struct node_dir *d, uint64_t guid);

struct topology;
struct fabric_snapshot;
struct pm_snapshot;
struct vitals_snapshot;
struct vitals_node;

struct node_dir_build {
	const struct topology *fabric;         /* the discovery; NULL: none yet */
	const struct fabric_snapshot *ports;    /* PortInfo of every port; NULL: none yet */
	const struct pm_snapshot *counters;     /* the PM sweep; NULL: none yet */
	const struct vitals_snapshot *vitals;   /* the vitals' readings; NULL: none */
	unsigned vitals_lifetime_s;
	const struct node_dir *prev;
	unsigned types_mask;                    /* 1 << node type: gets a context */
	unsigned hold_s;                        /* an unreachable node stays this long */
	time_t now;
	time_t boot;                            /* the agent's start (wall clock) */
};

/* The new directory (NULL: out of memory). Pure; unit-tested. */
struct node_dir *node_dir_build(const struct node_dir_build *in);

/* Interface np of node e as IF-MIB sees it (pure). */
void node_if_view(struct node_if *view, const struct node_entry *e, const struct node_port *np);

/* What holds an entity of a node (entPhysicalContainedIn; 0 for the
 * chassis). */
uint32_t node_entity_parent(const struct node_entry *e, uint32_t index);

/* The sysUpTime (TimeTicks) at wall-clock time t, from the directory's
 * boot: the same value at every request (an index may hold it); 0 for
 * before the agent started. Every TimeStamp of a node's context. */
uint32_t node_time_ticks(const struct node_dir *d, time_t t);

/* Texts a node's context serves in several MIBs, each one way (pure):
 * sysDescr (also lldpLocSysDesc, entPhysicalDescr of the chassis, a
 * neighbour's lldpRemSysDesc), ifDescr (also lldpLocPortDesc,
 * entPhysicalDescr of a port, lldpRemPortDesc), ifName (also
 * entPhysicalName of a port), sysName (also lldpLocSysName, lldpRemSysName). */
const char *node_type_name(unsigned type);
void node_sys_descr(const struct node_entry *e, char *out, size_t len);
void node_if_descr(const struct node_entry *e, unsigned port, char *out, size_t len);
void node_if_name(const struct node_entry *e, unsigned port, char *out, size_t len);
const char *node_sys_name(const struct node_entry *e);

/* IF-MIB mappings (pure). */
#define NODE_IF_UP 1
#define NODE_IF_DOWN 2
#define NODE_IF_DORMANT 5
unsigned node_if_admin_status(const struct node_if *i);
unsigned node_if_oper_status(const struct node_if *i, bool reachable);
/* ifHighSpeed: active lanes x nominal lane rate, Mb/s. */
unsigned node_if_high_speed(const struct node_if *i);

/* ---- the handlers (node_mib.c) ---- */

/* ibsnmpdNodeTable, in the default context. */
struct node_table_mib {
	struct mib_table table;
};
int node_table_register(struct node_table_mib *m, struct cache_group *dir);
void node_table_unregister(struct node_table_mib *m);

/* One node's context: its system group, IF-MIB tables and ENTITY-MIB,
 * answered from the node's entry in the current directory, and its SMA-MIB
 * (*sma: its collector, NULL until read; sma_asked called when SMA-MIB is
 * asked), through one registration of internet (1.3.6.1); its LLDP-MIB
 * through one of lldpMIB (1.0.8802.1.1.2). Nothing else answers in a
 * node's context. */
struct node_context_regs {
	struct cache_group *dir;
	uint64_t guid;
	struct mib_subtree lldp; /* LLDP-MIB (node_lldp_mib.c), registered apart */
	struct mib_subtree mib2; /* system, ifNumber, ifTable, ifXTable, ENTITY-MIB */
	struct sma_mib_regs sma; /* SMA-MIB, ibsnmpdPortExtTable */
	struct mib_joined all;
	/* the rows of the node's current entry, set when asked (they live in
	 * the directory; these say where) */
	struct mib_rows neighbor_rows, entity_rows, alias_rows, contains_rows, sensor_rows;
};
/* The context's node in the current directory (ctx: its registrations). */
const struct node_entry *node_context_entry(const void *ctx);
/* A table of the context's node, count rows of stride octets from array,
 * described in the header the registrations keep for it (set at each
 * request: the rows are the current directory's). */
const struct mib_rows *node_rows_at(struct mib_rows *header, const void *array, size_t count,
				    size_t stride, unsigned (*index_of)(const void *data, oid *index));
/* What node_mib.c registers in a context beside its own: LLDP-MIB's
 * members (node_lldp_mib.c), and ENTITY-MIB's tables and scalar, members
 * of mib-2 (node_entity_mib.c). */
extern const struct mib_member node_lldp_members[];
extern const size_t node_n_lldp_members;
extern const struct mib_table node_ent_physical_table, node_ent_alias_table,
	node_ent_contains_table, node_ent_sensor_table;
extern const struct mib_scalars node_ent_general;
int node_mib_register_context(struct node_context_regs *r, struct cache_group *dir,
			      uint64_t guid, const char *name, struct sma_collector *const *sma,
			      struct mib_asked sma_asked);
void node_mib_unregister_context(struct node_context_regs *r);

/* ---- the area ---- */

struct node_context;

struct node_area {
	struct cache_group dir;       /* snapshot: struct node_dir */
	struct cache_group *topology; /* the discovery's group */
	struct cache_group *ports;    /* the fabric area's sweep; NULL: not running */
	struct cache_group *counters; /* the PM area's sweep; NULL: not running */
	struct cache_group *vitals;   /* the vitals' readings; NULL: not running */
	struct cache_observer follows[4], registers, entities_seen;
	struct sma_collector *local;  /* served in the default context already */
	struct node_context **contexts; /* sorted by GUID */
	size_t n_contexts, cap_contexts;
	unsigned tick_alarm;
	/* the contexts follow a new directory (node_contexts.c), a slice a
	 * pass: added and failed so far, when it began (monotonic s) */
	struct loop_deferred follow;
	struct {
		bool running;
		size_t added, failed;
		double began;
	} following;
	/* a sweep published: the directory is built again at most every
	 * NODE_DIR_GAP_S (it holds the snapshots it points into meanwhile) */
	double dir_built_at;          /* monotonic s */
	unsigned dir_alarm;           /* a build due */
	bool master_away;             /* a subagent's AgentX session is closed */
	unsigned hold_s, idle_s;      /* nodeContextHold, nodeContextIdle */
	time_t boot;                  /* the agent's start, wall clock (node_dir_build) */
	struct node_table_mib mib;
};

struct area_def;
extern const struct area_def node_area_def;

/* The contexts (node_contexts.c), started and stopped by the area. */
void node_contexts_start(struct node_area *a);
void node_contexts_stop(struct node_area *a);
void node_contexts_apply_config(struct node_area *a);

#endif
