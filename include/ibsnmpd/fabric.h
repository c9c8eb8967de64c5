/* Every link of the subnet (the fabric area, src/fabric/): PortInfo of
 * every port of every node the topology's discovery found, the baseline of
 * the links once seen, and the link notifications.
 *
 *   fabric_area.c      the area: tokens, cache group, what it observes
 *   fabric_sweep.c     the cache group: PortInfo SMPs through the MAD
 *                      engine (all nodes, or the switch a trap 128 names),
 *                      the state file
 *   fabric_link.c      pure: the snapshot built from the readings, the
 *                      discovery and the previous snapshot; link rules
 *   fabric_health.c    pure: a link's health from the PM sweeps' counters
 *                      (bit error rates, flapping, congestion)
 *   fabric_baseline.c  pure: the state file's text, both ways
 *   fabric_mib.c       IBSNMPD-MIB::ibsnmpdFabric
 *   fabric_notify.c    an observer of the group: the link notifications
 *   fabric_alarms.c    pure: what is wrong, for the active alarm table
 */
#ifndef IBSNMPD_FABRIC_H
#define IBSNMPD_FABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "ibsnmpd/cache.h"
#include "ibsnmpd/mib_set.h"
#include "ibsnmpd/mib_table.h"
#include "ibsnmpd/pm_attr.h"
#include "ibsnmpd/sma_attr.h"
#include "ibsnmpd/state_file.h"
#include "ibsnmpd/topology.h"
#include "ibsnmpd/trap.h"

/* What the notifications have said of a link, and what it is now. */
enum fabric_link_cond {
	LINK_NONE,     /* never linked (not in the baseline) */
	LINK_DOWN,     /* in the baseline, not up */
	LINK_UP,
	LINK_DEGRADED, /* up, narrower or slower than it can or did */
};

/* Notifications a row asks for (ibsnmpdNotifications.N = bit N). */
#define FABRIC_EV_DOWN (1u << 1)
#define FABRIC_EV_UP (1u << 2)
#define FABRIC_EV_DEGRADED (1u << 3)
#define FABRIC_EV_RESTORED (1u << 4)
#define FABRIC_EV_BER_HIGH (1u << 5)
#define FABRIC_EV_BER_NORMAL (1u << 6)
#define FABRIC_EV_FLAPPING (1u << 7)
#define FABRIC_EV_LAST 7

/* berWindow, berThreshold, flapThreshold (the fabric area's tokens). */
struct fabric_health_config {
	unsigned ber_window_s;           /* the rates' span: from half of it to all of it */
	double ber_raw_max, ber_post_max; /* above either: high */
	unsigned flap_downs, flap_minutes; /* more downs than this in that many minutes */
};
#define FABRIC_BER_WINDOW_DEFAULT 300
#define FABRIC_BER_RAW_DEFAULT 1e-5
#define FABRIC_BER_POST_DEFAULT 1e-12
#define FABRIC_FLAP_DOWNS_DEFAULT 3
#define FABRIC_FLAP_MINUTES_DEFAULT 10
#define FABRIC_FLAP_KEPT 8 /* downs remembered: flapThreshold N is at most 7 */
#define FABRIC_SILENT_AFTER_S 10 /* a node unanswered this long while linked: silent */

/* A link's health, from the counters of the PM sweeps (fabric_health.c).
 * Times are Unix seconds in 32 bits (until 2106): a row is kept for every
 * port of the subnet, 40,000-host fabrics have a quarter million. */
struct fabric_health {
	uint32_t pm_read;              /* the counters' reading last folded in; 0 none */
	uint32_t link_downed, xmit_wait; /* its LinkDownedCounter, PortXmitWait */
	/* the bit error rates' window: two readings kept (the older first) */
	uint32_t anchor_t[2];
	uint64_t anchor_raw[2], anchor_post[2];
	uint32_t anchor_rate;          /* the data rate they were read at (Mb/s) */
	uint32_t downs[FABRIC_FLAP_KEPT]; /* when the link went down, newest first */
	/* when the link's flapping was notified (from either end); 0: not
	 * since it was last quiet for a whole window */
	uint32_t flap_said;
	int16_t ber_raw_e, ber_post_e;
	uint16_t xmit_wait_permille;
	uint8_t ber_raw_m, ber_post_m; /* mantissa in tenths (ibsnmpdFabricPortBer*) */
	uint8_t anchors;
	uint8_t n_downs;               /* kept, and (after each build) within the window */
	bool have_xmit_wait, ber_valid;
	bool ber_high, ber_reported;   /* above a threshold; what was notified */
	bool flapping;
};

/* The seconds the bit error rates span (valid only with ber_valid): from
 * the older reading kept to the last. */
static inline uint32_t fabric_ber_span(const struct fabric_health *h)
{
	return h->pm_read - h->anchor_t[0];
}

void fabric_health_defaults(struct fabric_health_config *c);
/* A bit error rate as (mantissa in tenths, power of ten): 2.5E-9 is
 * (25, -9); 0 is (0, 0). */
void fabric_ber_split(double ber, unsigned *mantissa, int *exponent);

/* The PortInfo fields a link row keeps: those its columns, its rules and
 * the node contexts' IF-MIB read (the 40-odd fields of struct
 * sma_portinfo take 192 octets a port; this, 16). */
struct fabric_portinfo {
	uint16_t lid;
	uint8_t state, phys_state, neighbor_mtu, oper_vls;
	uint8_t width_active, width_supported, width_enabled;
	uint8_t speed_active, speed_supported, speed_enabled;
	uint8_t speed_ext_active, speed_ext_supported, speed_ext_enabled;
	bool ext_speeds; /* CapabilityMask.IsExtendedSpeedsSupported */
};

/* The fields of a decoded PortInfo a row keeps. */
void fabric_portinfo_of(struct fabric_portinfo *out, const struct sma_portinfo *pi);

/* A row's node descriptions point into its snapshot (never copied out of
 * it): to its discovery's nodes, or to its names. */
struct fabric_port {
	uint64_t guid;
	unsigned port;
	unsigned node_type;        /* 1 CA, 2 switch, 3 router */
	unsigned lid;              /* where the port is read */
	const char *node_desc;     /* its node's name (topo_node.name); "" unknown */
	bool have_info;            /* pi has been read (now or before) */
	bool stale;                /* the last read got no answer */
	bool gone;                 /* the last discovery did not reach the node */
	struct fabric_portinfo pi;
	uint8_t pi_raw[64];        /* the attribute as read: a node context's SMA-MIB
				      decodes it rather than asking again */
	uint64_t remote_guid;      /* 0: never seen linked */
	unsigned remote_port;
	const char *remote_desc;   /* the remote node's name; "" unknown */
	/* derived */
	bool up;
	unsigned lanes;            /* active width in lanes, 0 when not up */
	int speed;                 /* active speed (sma_speed_generation), 0 when not up */
	unsigned rate_mbps;
	bool degraded;
	enum fabric_link_cond cond, reported;
	unsigned events;           /* FABRIC_EV_*: sent after publication */
	bool read_now;             /* this build read it (or found its node gone) */
	/* its node answers nothing while a neighbour that answers sees a link
	 * to it up: since when (Unix seconds; 0: it answers), and whether for
	 * long enough to be told (a node whose link just came back is asked
	 * again first: fabric_sweep.c wakes it) */
	uint32_t node_silent_since;
	bool node_silent;
	time_t last_change;
	/* the baseline */
	bool base_linked;
	unsigned base_lanes;
	int base_speed;
	struct fabric_health health;
};

/* What a row says of its link, for every reader of the snapshot (the MIB,
 * the Prometheus metrics): 0 where it says nothing. */
/* IBA PortState (1 Down .. 5), 1 for a baseline link of a node no longer
 * reached; 0: never read. */
static inline unsigned fabric_port_link_state(const struct fabric_port *p)
{
	if (p->gone && p->base_linked)
		return 1;
	if (!p->have_info || p->pi.state < 1 || p->pi.state > 5)
		return 0;
	return p->pi.state;
}
/* IBA PortPhysicalState (1 Sleep .. 7), of a node still reached. */
static inline unsigned fabric_port_phys_state(const struct fabric_port *p)
{
	if (!p->have_info || p->gone || p->pi.phys_state < 1 || p->pi.phys_state > 7)
		return 0;
	return p->pi.phys_state;
}
/* Whether lanes and rate_mbps say something (0 of a gone node's link). */
static inline bool fabric_port_rate_known(const struct fabric_port *p)
{
	return p->have_info || p->gone;
}

/* Descriptions of nodes the snapshot's discovery does not hold (no longer
 * discovered, remote ends it did not reach, the state file's), in blocks
 * that never move: a row points to them. */
struct fabric_names;
void fabric_names_free(struct fabric_names *n);
/* A copy of desc that lives as long as *names; NULL on out of memory. */
const char *fabric_name_keep(struct fabric_names **names, const char *desc);

struct fabric_snapshot {
	size_t n;
	struct fabric_port *ports; /* sorted by (GUID, port) */
	const struct topology *fabric; /* held (NULL: none): its nodes' descriptions */
	struct fabric_names *names;    /* the other descriptions */
	struct mib_rows rows;      /* index: node GUID (8 octets), port */
	unsigned baseline_links, links_lost, degraded;
	bool baseline_changed;     /* the state file is to be written */
};

void fabric_snapshot_free(void *p);
/* Order of the rows: (GUID, port); a qsort/bsearch comparator. */
int fabric_port_cmp(const void *a, const void *b);
/* The other end of p's link, if its row names p as its other end; else NULL. */
const struct fabric_port *fabric_peer(const struct fabric_snapshot *s,
				      const struct fabric_port *p);
/* The row of (guid, port), or NULL. */
const struct fabric_port *fabric_find(const struct fabric_snapshot *s, uint64_t guid,
				      unsigned port);

/* One port's PortInfo as a sweep got it. */
struct fabric_reading {
	uint64_t guid;
	unsigned port;
	int result; /* MAD_OK, or how it failed */
	uint8_t data[64];
};
/* By (GUID, port), the order a build takes them in. */
int fabric_reading_cmp(const void *a, const void *b);

struct fabric_build {
	const struct topology *fabric;          /* the discovery; NULL: none yet */
	const struct fabric_reading *readings;  /* sorted by (GUID, port) */
	size_t n_readings;
	const struct fabric_snapshot *prev;     /* the last snapshot, or the baseline loaded */
	bool reset_baseline;
	bool partial;                           /* only some nodes were read: the others
						   keep their rows as they are */
	time_t now;
	/* the PM sweep's last ports, sorted by (GUID, port); NULL: none */
	const struct pm_port_state *counters;
	size_t n_counters;
	const struct fabric_health_config *health; /* NULL: the defaults */
};

/* A row's health after this build (fabric_health.c): prev is its row
 * before, q its counters (NULL: none). Pure. */
void fabric_health_update(struct fabric_port *p, const struct fabric_port *prev,
			  const struct pm_port_state *q, const struct fabric_health_config *c,
			  time_t now);

/* The new snapshot (NULL: out of memory). Pure; unit-tested. The rules:
 * rows of every discovered node's ports 1..N, plus the baseline's links of
 * nodes no longer reached (down, stale); a port not read now keeps its last
 * values; events for the rows read now whose condition differs from what
 * was notified, one per link (the other end's row is marked notified). */
struct fabric_snapshot *fabric_build(const struct fabric_build *in);

/* Link rules (pure). */
unsigned fabric_widest_lanes(unsigned width_mask);
int fabric_fastest_speed(unsigned speed_mask, unsigned speed_ext_mask);
int fabric_active_speed(const struct fabric_portinfo *pi);
/* The fastest speed a port supports / enables (LinkSpeed and, where the
 * port has them, LinkSpeedExt); 0: none. */
int fabric_supported_speed(const struct fabric_portinfo *pi);
int fabric_enabled_speed(const struct fabric_portinfo *pi);

/* The state file: a baseline as text, and back. fabric_baseline_parse
 * returns rows with the baseline's fields, names and remote ends only
 * (have_info false), or NULL with the line and reason in err. */
char *fabric_baseline_format(const struct fabric_snapshot *s, size_t *len);
struct fabric_snapshot *fabric_baseline_parse(const char *text, size_t len, char *err,
					      size_t errlen);

/* ---- the area ---- */

struct fabric_area;

/* IBSNMPD-MIB::ibsnmpdFabric of one area, in a context (NULL: the default
 * one) (fabric_mib.c). */
struct fabric_mib {
	struct fabric_area *area;
	struct mib_table port_table;
	struct mib_scalars baseline;
	struct mib_set_domain domain;     /* a SET of ibsnmpdFabricBaselineReset */
	struct mib_set_table baseline_set;
};
int fabric_mib_register(struct fabric_mib *m, struct fabric_area *a, const char *context);
void fabric_mib_unregister(struct fabric_mib *m);
/* A column of ibsnmpdFabricPortTable of row p: 0, or -1 if it has no value
 * there (the notifications carry the same values as the table). */
int fabric_mib_column(const struct fabric_port *p, unsigned column, netsnmp_variable_list *vb);

struct fabric_area {
	struct cache_group group;     /* snapshot: struct fabric_snapshot */
	struct cache_group *topology; /* the discovery's group */
	struct cache_group *counters; /* the PM sweeps' group (snapshot: struct
					 pm_snapshot), NULL: no PM area; read for
					 the links' health at each build */
	struct fabric_health_config health;
	struct cache_observer discovered, state_saved, notified;
	struct trap_area *traps;      /* NULL: none */
	struct trap_observer trap_seen;
	const struct topology *swept_fabric; /* the discovery the last sweep used (held) */
	struct fabric_snapshot *loaded; /* the state file's baseline, until the first sweep */
	bool reset_pending;
	bool again;                   /* a full sweep is wanted after the running one */
	bool partial_next;            /* the next refresh reads only the LIDs below */
	/* the switches traps 128 named, and how often each was read again
	 * since because its answer did not come (fabric_sweep.c) */
	struct fabric_trap_lid {
		unsigned lid, rereads;
	} *trap_lids;
	size_t n_trap_lids, cap_trap_lids;
	unsigned trap_alarm;
	/* the topology's serial the last sweep began with; whether every
	 * publication since was a patch of it, and the ports they changed
	 * (the next sweep reads only those) */
	unsigned long base_serial;
	bool patch_only;
	struct topo_port_ref *patched;
	size_t n_patched, cap_patched;
	struct state_file state;      /* the baseline's */
	struct fabric_mib mib;
};

struct area_def;
extern const struct area_def fabric_area_def;

/* The sweeps (fabric_sweep.c), started by the area: state_file "" names
 * net-snmp's persistent directory; reset: forget the saved baseline. */
void fabric_sweep_init(struct fabric_area *a, unsigned lifetime_s, const char *state_file,
		       bool reset);
void fabric_sweep_stop(struct fabric_area *a);
void fabric_sweep_apply_config(struct fabric_area *a, unsigned lifetime_s,
			       const char *state_file, bool reset);
/* A topology was published (after; before: the one it replaced): a new
 * node list is swept now, a patched one's changed ports only. */
void fabric_sweep_discovered(struct fabric_area *a, const struct topology *before,
			     const struct topology *after);
/* A trap 128 from the switch at lid: its ports are read again shortly. */
void fabric_link_trap(struct fabric_area *a, unsigned lid);
/* Forgets the baseline; the next sweep records it again. */
void fabric_reset_baseline(struct fabric_area *a);
/* An observer of the group: the notifications the rows of a published
 * snapshot ask for (fabric_notify.c). */
/* The active alarms of a snapshot (struct fabric_snapshot): alarm.h. */
struct alarm_list;
void fabric_alarms(const void *snapshot, struct alarm_list *out);
void fabric_notify_published(struct cache_group *g, const void *before, const void *after,
			     void *arg);

#endif
