/* Fabric validation: the switches' unicast forwarding tables, read, and the
 * checks made of them and the topology (the route area, src/route/).
 *
 *   route_check.c   pure: every routing check from the topology and the
 *                   tables, by one walk per destination LID over the
 *                   switches' next hops (never per pair of hosts)
 *   route_subnet.c  pure: the checks of the subnet's configuration, from
 *                   the topology, the link sweep's PortInfo and the SMs'
 *                   SMInfo (duplicates, links' state, MTU and VLs, SMs),
 *                   and the expected cabling
 *   route_plan.c    pure: the expected cabling (expectedTopology FILE, in
 *                   ibnetdiscover's format)
 *   route_read.c    the tables: SubnGet(LinearForwardingTable) of every
 *                   switch, and SubnGet(SLtoVLMappingTable) of its ports
 *                   cabled to switches, paced by the MAD engine's window
 *   route_area.c    the area: tokens, its cache group, when it reads again
 *   route_mib.c     IBSNMPD-MIB::ibsnmpdRouting
 *   route_notify.c  an observer: a check failed or cleared
 *   route_alarms.c  pure: a failing check, for the active alarm table
 *
 * Facts, algorithms and costs: ../shared/notes/fabric-validation.md
 * (3.5: per destination, not per pair). */
#ifndef IBSNMPD_ROUTE_H
#define IBSNMPD_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "ibsnmpd/cache.h"
#include "ibsnmpd/topology.h"

#define ROUTE_LFT_UNREAD 0xff   /* IBA: 255 is "no port" in a LinearForwardingTable */
#define ROUTE_MAX_LID 0xbfff    /* the last unicast LID */
#define ROUTE_HOPS_MAX 64       /* the hop histogram's last bucket: 64 or more */
#define ROUTE_OFFENDERS_MAX 100 /* offenders kept per check (the count is whole) */
#define ROUTE_DESC_MAX 160

/* The checks, numbered as ibsnmpdRouteCheckTable's index. */
enum route_check_id {
	ROUTE_CHECK_REACH = 1, /* every LID reached from every switch: no dead end, no loop */
	ROUTE_CHECK_HOPS,      /* CA-to-CA routes no longer than the shortest path */
	ROUTE_CHECK_UPDOWN,    /* on a tree ranked from the CAs: no route goes down, then up */
	ROUTE_CHECK_CREDIT,    /* the channel dependency graph (per VL) has no cycle */
	ROUTE_CHECK_BALANCE,   /* a switch's up-going ports carry CA LIDs within one of each other */
	ROUTE_ROUTING_CHECKS = ROUTE_CHECK_BALANCE, /* the last made of the tables */
	ROUTE_CHECK_DUPLICATES, /* GUIDs and LIDs given once, no zero LID */
	ROUTE_CHECK_LINKS,      /* links Active at both ends, at the MTU and VLs both can */
	ROUTE_CHECK_SM,         /* one master SM, the winner, working, that every port follows */
	ROUTE_CHECK_CABLING,    /* every link as expectedTopology plans it, no node more or less */
	ROUTE_CHECKS = ROUTE_CHECK_CABLING
};

/* ibsnmpdRouteCheckStatus */
enum route_status {
	ROUTE_STATUS_PASSED = 1,
	ROUTE_STATUS_FAILED = 2,
	ROUTE_STATUS_NOT_RUN = 3, /* no tables yet, or the check does not apply (no tree) */
	ROUTE_STATUS_PARTIAL = 4, /* passed on what was read: some tables were not */
};

/* What an offender is (ibsnmpdRouteOffenderKind). */
enum route_offense {
	ROUTE_DEAD_UNASSIGNED = 1, /* the entry says no port (255) */
	ROUTE_DEAD_DOWN,           /* the entry's port has no link */
	ROUTE_DEAD_BAD_PORT,       /* the entry's port is not one of the switch's */
	ROUTE_DEAD_SELF,           /* port 0 (the switch itself) for another's LID */
	ROUTE_DEAD_WRONG_NODE,     /* the entry's port reaches a CA that is not the LID's */
	ROUTE_LOOP,                /* the routes to a LID go round */
	ROUTE_NOT_MIN_HOP,         /* CA pairs routed longer than the shortest path */
	ROUTE_DOWN_UP,             /* CA pairs whose route goes down then up */
	ROUTE_CREDIT_LOOP,         /* a cycle of channel dependencies */
	ROUTE_UNBALANCED,          /* a switch's up-going ports: max - min LIDs > 1 */
	ROUTE_DUP_PORT_GUID,       /* a port GUID two ports have */
	ROUTE_DUP_LID,             /* a LID two ports have (LMC ranges included) */
	ROUTE_ZERO_LID,            /* a CA port or switch with a link and no LID */
	ROUTE_DUP_DESCRIPTION,     /* a node description two nodes have (informational) */
	ROUTE_LINK_STUCK,          /* a link up whose end stays Init or Armed */
	ROUTE_LINK_MTU,            /* a link's active MTU below what both ends can */
	ROUTE_LINK_VLS,            /* a link's operational VLs below what both ends can */
	ROUTE_SM_NO_MASTER,        /* no SM is master */
	ROUTE_SM_MASTERS,          /* a master beside another */
	ROUTE_SM_NOT_WINNER,       /* the master is not the SM of highest priority, lowest GUID */
	ROUTE_SM_STALLED,          /* the master's ActCount has stopped */
	ROUTE_SM_LID_DISAGREE,     /* ports that take another LID for their master SM */
	ROUTE_SM_NO_STANDBY,       /* the master alone (informational) */
	ROUTE_SM_SILENT,           /* a port that is an SM (IsSM) and does not answer (informational) */
	ROUTE_CABLE_NODE_MISSING,  /* a node of the plan not in the subnet */
	ROUTE_CABLE_NODE_UNPLANNED, /* a node of the subnet not in the plan */
	ROUTE_CABLE_LINK_MISSING,  /* a planned link whose ends are both without one */
	ROUTE_CABLE_WRONG_PORT,    /* a port cabled to another node or port than planned */
	ROUTE_CABLE_UNPLANNED_LINK, /* a link between planned nodes on ports planned unused */
	ROUTE_TABLE_NOT_SMS,       /* a switch's table differs from the SM's copy (routingSource sa) */
	ROUTE_OFFENSES = ROUTE_TABLE_NOT_SMS
};

/* Offenders that do not fail their check (said, not counted). */
static inline bool route_offense_informational(unsigned kind)
{
	return kind == ROUTE_DUP_DESCRIPTION || kind == ROUTE_SM_NO_STANDBY ||
	       kind == ROUTE_SM_SILENT;
}

struct route_offender {
	uint8_t check;        /* enum route_check_id */
	uint32_t n;           /* its number among its check's, from 1 (ibsnmpdRouteOffenderIndex) */
	uint8_t kind;         /* enum route_offense */
	uint64_t guid;        /* the switch at fault (or the first of a loop) */
	unsigned port;        /* its port, 0 none */
	unsigned lid;         /* the destination LID, 0 none */
	uint64_t count;       /* switches or CA pairs it affects (what desc says) */
	char desc[ROUTE_DESC_MAX]; /* in words an operator can act on, with names */
};

struct route_check_result {
	uint8_t id;           /* enum route_check_id */
	uint8_t status;       /* enum route_status */
	uint64_t offenders;   /* all found that fail it (the list keeps ROUTE_OFFENDERS_MAX) */
	uint32_t listed;      /* its rows in the offender list (informational ones too) */
	time_t at;            /* wall clock of the run that made it; 0 none */
};

/* LIDs and CA paths a switch port carries (the balance table). */
struct route_port_load {
	uint64_t guid;
	unsigned port;
	uint32_t lids;        /* CA LIDs its switch forwards through it */
	uint64_t paths;       /* CA-to-CA routes through it */
	int8_t direction;     /* 1 up (toward a switch ranked higher), -1 down, 0 level or CA */
};

/* The tables as read, a block of 64 LIDs at a time (what one SMP reads):
 * blocks alike are kept once. A fat tree's tables repeat (a leaf sends
 * every 64 LIDs of other leaves up in the same turn of its uplinks, the
 * spines of a pod send each leaf's LIDs down alike): at 40,000 hosts in
 * fabricsim 2.4 million blocks are a few thousand, where a table of an
 * octet per switch and LID is 148 MB. Destination-major, so that one
 * destination's blocks for every switch lie together (a walk reads S
 * indexes in a row). */
struct route_tables {
	unsigned max_lid;       /* entries 0..max_lid of each table */
	size_t n_switches;
	size_t *switch_node;    /* switch i: its index in the topology's nodes */
	bool *read;             /* switch i's table was read whole */
	uint32_t *block_of;     /* [(lid / 64) * n_switches + i]: the block in blocks */
	uint8_t *blocks;        /* 64 entries each; block 0: none read (ROUTE_LFT_UNREAD) */
	uint32_t n_blocks, cap_blocks;
	uint32_t *index;        /* the blocks by content (open addressing; id + 1, 0 free) */
	size_t index_cap;       /* 0: not built (route_tables_index builds it) */
	/* The credit-loop check's VLs: SLtoVLMappingTable of each switch port
	 * cabled to another switch, as read from one other such port of its
	 * switch (the VL each SL leaves on), by slot: switch i's port p is
	 * vl_first[i] + p (the switches' ports one after the other, as the
	 * topology numbers them); ROUTE_VL_UNREAD none (taken as most ports). */
	size_t *vl_first;       /* per switch, then the total */
	uint8_t (*sl2vl)[16];
	uint16_t path_sls;      /* the SLs the fabric's paths use (routingPathSls); 0: SL 0 */
	uint16_t sampled_sls;   /* those a sample of the SA's PathRecords gave */
};
#define ROUTE_VL_UNREAD 0xff

/* The SLs the credit-loop check takes every path to use, a bit each. */
static inline uint16_t route_path_sls(const struct route_tables *t)
{
	return (uint16_t)((t->path_sls ? t->path_sls : 1) | t->sampled_sls);
}

static inline uint8_t route_entry(const struct route_tables *t, unsigned lid, size_t sw)
{
	return t->blocks[(size_t)t->block_of[(size_t)(lid >> 6) * t->n_switches + sw] * 64 +
			 (lid & 63)];
}

/* What route_check finds. */
struct route_findings {
	struct route_check_result checks[ROUTE_CHECKS + 1]; /* by enum route_check_id */
	struct route_offender *offenders; /* by check, then as found */
	size_t n_offenders;
	struct route_port_load *loads;    /* by (GUID, port): every switch port linked */
	size_t n_loads;
	uint64_t hops[ROUTE_HOPS_MAX + 1]; /* CA-to-CA routes by their links (hops) */
	/* the same, the lengths some route has only (ibsnmpdRouteHopTable) */
	struct route_hop_count {
		unsigned hops;
		uint64_t pairs;
	} hop_rows[ROUTE_HOPS_MAX + 1];
	unsigned n_hop_rows;
	uint64_t ca_pairs, pairs_reached;
	unsigned destinations;            /* LIDs checked */
	bool tree;                        /* ranks could be given (some switch has a CA) */
};

void route_findings_free(struct route_findings *r);

/* The routing checks (1 .. ROUTE_ROUTING_CHECKS) of the tables t (read
 * against the topology f, whose switches they name) into *out; -1 out of
 * memory (out freed). Pure; unit-tested, fuzzed. */
int route_check(const struct topology *f, const struct route_tables *t,
		struct route_findings *out);
/* The same with the destinations split in n_shares (at most
 * ROUTE_CHECK_SHARES_MAX) ranges of LIDs, each walked on a thread of its
 * own; the findings are those of one walk in order. route_check takes one
 * share per CPU from ROUTE_CHECK_SHARE_STEPS (destinations x switches). */
#define ROUTE_CHECK_SHARES_MAX 4
#define ROUTE_CHECK_SHARE_STEPS 4000000ull
int route_check_shares(const struct topology *f, const struct route_tables *t,
		       struct route_findings *out, unsigned n_shares);

/* Tables for f's switches: every entry ROUTE_LFT_UNREAD, none read; -1 out
 * of memory. */
int route_tables_init(struct route_tables *t, const struct topology *f, unsigned max_lid);
void route_tables_free(struct route_tables *t);
/* One block of 64 entries of switch i, as SubnGet(LinearForwardingTable)
 * answered it (entries past max_lid: none); -1 out of memory (the block
 * left as it was). */
int route_tables_put_block(struct route_tables *t, size_t sw, unsigned block,
			   const uint8_t *entries);
/* Switch sw's port's SLtoVLMappingTable (the VL of each SL, 0-15) as read
 * (a port past its switch's: ignored). */
void route_tables_put_sl2vl(struct route_tables *t, size_t sw, unsigned port,
			    const uint8_t vl[16]);
/* One entry (tests, the simulator's benches); -1 out of memory. */
int route_tables_set(struct route_tables *t, size_t sw, unsigned lid, uint8_t port);
/* The tables of from taken over by t (the same switches, in the same
 * order): t's entries are from's, its LIDs up to t->max_lid (new ones
 * none); from is left empty. For a read that starts from the last one's
 * tables without a copy. -1 out of memory (both as they were). */
int route_tables_adopt(struct route_tables *t, struct route_tables *from);
/* Keeps only the blocks some switch uses (a read that starts from the
 * last one's leaves those it replaced) and drops the index by content
 * until the next put; -1 out of memory (as it was). */
int route_tables_compact(struct route_tables *t);
/* What the tables take in memory, octets. */
size_t route_tables_bytes(const struct route_tables *t);

/* One line of ibsnmpd-discover --lft ("lft LID BLOCK" and 128 hex digits:
 * the SA's LinearForwardingTableRecord) put in t: the switch whose LID it
 * is (sw_of_lid[LID]: its index + 1; 0 none, n_lids entries) gets the
 * block, counted in got[switch]. 0 put (or not a switch of t, or a block
 * past its LIDs: skipped), 1 the "done" line, -1 malformed. Pure;
 * unit-tested, fuzzed. */
int route_lft_line(struct route_tables *t, const uint32_t *sw_of_lid, size_t n_lids,
		   uint32_t *got, const char *line, size_t len);

/* The highest LID f's ports have (0: none). */
unsigned route_max_lid(const struct topology *f);

/* A port as the link sweep last read its PortInfo (the subnet checks'
 * input), sorted by (GUID, port). */
struct route_port_fact {
	uint64_t guid;
	unsigned port;
	uint16_t lid;
	uint8_t lmc;
	uint8_t state, phys_state;   /* PortState 1..5, PortPhysicalState 1..7 */
	uint8_t mtu_cap, active_mtu; /* MTUCap, NeighborMTU (IBA codes: 1 256 .. 5 4096) */
	uint8_t vl_cap, oper_vls;    /* VLCap, OperationalVLs (1 VL0 .. 5 VL0-14) */
	uint32_t state_s;            /* seconds it has been in that state, as far as seen */
	bool is_sm;                  /* CapabilityMask.IsSM */
	uint16_t sm_lid;             /* MasterSMLID */
};

/* An SM as its SMInfo answered (the SM check's input; its row in
 * ibsnmpdRouteSmTable): every port that says it is one (IsSM) and every
 * LID a port takes for its master. */
#define ROUTE_SM_NO_ANSWER 0xff
struct route_sm {
	uint64_t guid;         /* SMInfo's GUID (the SM's port), or the port's with that LID */
	unsigned lid;          /* where it was asked */
	uint8_t state;         /* SMInfo SMState: 0 notActive .. 3 master; ROUTE_SM_NO_ANSWER */
	uint8_t priority;
	uint32_t act_count;
	uint32_t act_still_s;  /* seconds ActCount has not moved, as far as seen */
	uint32_t master_s;     /* seconds it has been master, as far as seen */
	/* not answering this round: the rest is its last answer, which stands
	 * (a late SMA is no SM gone) until another SM's answer says otherwise
	 * or it has been silent for routingSmStall */
	bool stale;
	char name[80];         /* its node's name and port (the check fills it) */
};

/* The expected cabling (route_plan.c): nodes by GUID, each port's planned
 * far end by (GUID, port) (both ends of a link listed, as ibnetdiscover
 * lists them). */
struct route_plan_node {
	uint64_t guid;
	uint8_t type;          /* 1 CA, 2 switch, 3 router */
	unsigned ports;
	char desc[65];         /* the comment's description; "" none */
};
struct route_plan_port {
	uint64_t guid;
	unsigned port;
	uint64_t peer;
	unsigned peer_port;
};
struct route_plan {
	struct route_plan_node *nodes;
	size_t n_nodes;
	struct route_plan_port *ports;
	size_t n_ports;
};
/* NULL (the line and reason in err) unless the text is ibnetdiscover's
 * output. Pure; unit-tested, fuzzed. */
struct route_plan *route_plan_parse(const char *text, size_t len, char *err, size_t errlen);
void route_plan_free(struct route_plan *p);
/* Their orders (qsort, bsearch): by GUID; by GUID, then port. */
int route_plan_node_cmp(const void *x, const void *y);
int route_plan_port_cmp(const void *x, const void *y);

/* What the subnet checks read. */
struct route_subnet_input {
	const struct route_port_fact *ports; /* by (GUID, port); NULL: no link sweep */
	size_t n_ports;
	struct route_sm *sms;                /* by GUID; NULL: no SMInfo read yet */
	size_t n_sms;
	const struct route_plan *plan;       /* NULL: no expectedTopology */
	unsigned stuck_s;  /* an end in Init or Armed this long is stuck */
	unsigned stall_s;  /* a master's ActCount still this long has stalled */
};

/* The subnet checks (ROUTE_ROUTING_CHECKS + 1 .. ROUTE_CHECKS) of the
 * topology f and what in says into *out, their checks' rows only (the
 * links and SM checks do not run without ports, SMs); the SMs' names are
 * filled in. -1 out of memory (out freed). Pure; unit-tested, fuzzed. */
int route_subnet_check(const struct topology *f, const struct route_subnet_input *in,
		       struct route_findings *out);

/* For the checks' files: an offender of check `check` added to r (its
 * count kept whole, its row kept if fewer than ROUTE_OFFENDERS_MAX are);
 * NULL: not kept (*failed set if for want of memory). */
struct route_offender *route_offender_add(struct route_findings *r, size_t *cap, unsigned check,
					  unsigned kind, bool *failed);
/* An offender's words, cut at its end when names are long. */
__attribute__((format(printf, 2, 3))) void route_offender_say(struct route_offender *x,
							       const char *fmt, ...);
/* r's offenders in index order: by check, then number. */
void route_offenders_sort(struct route_findings *r);

const char *route_check_name(unsigned check);   /* "reachability" ...; NULL: none */
const char *route_offense_name(unsigned kind);  /* "deadEndUnassigned" ...; NULL: none */

/* ---- the area ---- */

enum route_source { ROUTE_SOURCE_SMP = 1, ROUTE_SOURCE_SA = 2 };

/* One run of the routing checks: held by every snapshot until the next
 * (the subnet checks publish in between). */
struct route_routing {
	unsigned refs;                  /* main thread only */
	struct route_findings f;        /* checks 1 .. ROUTE_ROUTING_CHECKS, loads, hops */
	const struct topology *fabric;  /* held: what the tables were read against */
	uint8_t source;                 /* enum route_source */
	time_t read_at;                 /* wall clock of the read's end */
	double read_seconds, check_seconds;
	unsigned switches, switches_read;
	unsigned long mads;             /* the read's */
	unsigned max_lid;
	unsigned long run;              /* the routing checks' run number, from 1 */
};

struct route_snapshot {
	const struct route_routing *routing; /* NULL: no table read yet */
	/* the SMs of the last subnet run (by GUID), the master's GUID (0:
	 * none or several) and the one before it (0: none seen) */
	struct route_sm *sms;
	size_t n_sms;
	uint64_t master, previous_master;
	/* every check: the routing run's, then the last subnet run's */
	struct route_check_result checks[ROUTE_CHECKS + 1];
	struct route_offender *offenders;    /* all checks', by check then number */
	size_t n_offenders;
	double subnet_seconds;               /* the last subnet checks' time */
	unsigned long publication;           /* its number: ibsnmpdRouteTablesPublications */
};

void route_snapshot_free(void *p);

struct area_def;
extern const struct area_def route_area_def;
/* The group of the running area (snapshot: struct route_snapshot); NULL if
 * it does not run. */
struct cache_group *route_area_group(void *area);

#endif
