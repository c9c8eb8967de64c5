/* Performance management for the whole subnet (the PM area, src/pm/):
 * pipelined PerfMgt sweeps of every port the topology's discovery found,
 * and the counters they produce. The attributes' codecs: pm_attr.h.
 *
 *   pm_area.c          the area: tokens, cache groups, what it observes
 *   pm_sweep.c         the counter sweeps, actions on a node (SETs)
 *   pm_samples.c       port sampling of the watched nodes
 *   pm_view.c          IB-PM-MIB's per-node view, built from the others
 *   pm_counter_traps.c pure: traps 129/130 from two sweeps
 *   pm_mib.c           the handlers */
#ifndef IBSNMPD_PM_H
#define IBSNMPD_PM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <infiniband/mad.h>

#include "ibsnmpd/cache.h"
#include "ibsnmpd/mib_set.h"
#include "ibsnmpd/mib_table.h"
#include "ibsnmpd/pm_attr.h"
#include "ibsnmpd/trap.h"

/* Snapshot of the pm group (one sweep): the fabric and every port's state,
 * sorted by node GUID and port, and what each node's ClassPortInfo said. */
struct pm_snapshot {
	const struct topology *fabric;
	size_t n;
	struct pm_port_state *ports;
	struct mib_rows rows;   /* ibsnmpdPmPortTable; index: node GUID (8 octets), port */
	unsigned *node_capmask; /* per node of fabric: CapabilityMask | PM_CAPMASK_KNOWN */
	size_t stale_ports;
};
#define PM_CAPMASK_KNOWN 0x80000000u /* ClassPortInfo answered */

void pm_snapshot_free(void *p);

/* PortCounters' counters in CounterSelect bit order: pmPortCountersTable's
 * columns 3..18. */
#define PM_SELECT_COUNTERS 16

/* One node of IB-PM-MIB's per-node tables (pmClassPortInfoTable,
 * pmPortCountersTable, the sampling tables), built (pm_view.c) from the
 * last sweep, the last read of the sampling state and the managers'
 * PortSelect choices, whenever one of them changes. */
struct pm_node_view {
	const struct topo_node *node;      /* in the view's fabric */
	unsigned capmask;                /* ClassPortInfo CapabilityMask */
	bool capmask_known;
	unsigned port_select;            /* pmPortCountersPortSelect */
	bool have_counters;              /* the selected port(s) have been read */
	uint64_t counter[PM_SELECT_COUNTERS]; /* of the selected port; 0xFF: summed */
	uint8_t ports[32];               /* bitmap of the node's ports */
	/* its sampling state in the samples' snapshot (the view is rebuilt
	 * whenever that is replaced); NULL: not sampled */
	const struct pm_sample_state *sample;
};

struct pm_view {
	const struct topology *fabric;  /* held */
	size_t n;
	struct pm_node_view *nodes;
	struct mib_rows rows;            /* index: node GUID (8 octets) */
};

static inline bool pm_node_has_port(const struct pm_node_view *v, unsigned port)
{
	return port < 256 && (v->ports[port / 8] >> (port % 8) & 1);
}

/* IB-PM-MIB's tables and ibsnmpdPmPortTable, ibsnmpdPmErrorDetailTable,
 * ibsnmpdPmFecTable of one area (pm_mib.c). */
struct pm_area;
#define PM_MIB_TABLES 7
struct pm_mib {
	struct pm_area *pm;
	struct mib_table tables[PM_MIB_TABLES];
	struct mib_set_domain domain; /* a SET of any of them */
	struct mib_set_table counters_set, sample_set;
};

/* The area, on the main loop. */
struct pm_area {
	struct cache_group sweep;     /* snapshot: struct pm_snapshot */
	struct cache_group *topology; /* the discovery's group (its snapshot: struct topology) */
	struct cache_observer topology_seen;
	struct trap_area *traps;      /* NULL: none (counter traps, trap 144) */
	struct trap_observer trap_seen;
	struct cache_observer counters_seen;
	uint64_t silent_print;        /* the nodes the last sweep found silent (a sum) */
	time_t silent_said;           /* monotonic: when that was last logged */
	/* ClassPortInfo is asked once per node and discovery; these LIDs' again
	 * at the next sweep (a trap 144 said their capabilities changed) */
	unsigned recheck_lid[32];
	size_t n_recheck;
	bool recheck_all;             /* more than recheck_lid holds */
	/* Ports a topology patch named since the last sweep began (a new
	 * node's, a link made or gone): the next sweep reads only these,
	 * unless the periodic one is due (then it reads every port).
	 * pending_all: more than could be kept, every port. */
	struct topo_port_ref *pending;
	size_t n_pending, cap_pending;
	bool pending_all;
	time_t full_at;               /* monotonic s: when the last sweep of every port began */
	/* sampling state of the watched nodes (pm_samples.c) */
	struct cache_group samples;   /* snapshot: struct pm_samples_snapshot */
	bool samples_again;           /* a sample started while reading: read again */
	uint64_t *watch;              /* watched node GUIDs, sorted */
	size_t n_watch, cap_watch;
	/* IB-PM-MIB PortSelect chosen by managers, per node GUID (sorted) */
	struct pm_port_select { uint64_t guid; unsigned port; } *select;
	size_t n_select, cap_select;
	/* what IB-PM-MIB's handlers read: snapshot struct pm_view, rebuilt
	 * after the discovery, the sweep or the sampling read is published, and
	 * after a SET of PortSelect */
	struct cache_group view;
	struct cache_observer view_follows[2];
	struct pm_mib mib;
};

struct area_def;
extern const struct area_def pm_area_def;

/* The discovery the area works from (NULL: none yet). */
static inline const struct topology *pm_topology(const struct pm_area *pm)
{
	return pm->topology ? cache_snapshot(pm->topology) : NULL;
}

/* A node's capabilities changed (trap 144 from lid): its PMA's ClassPortInfo
 * is asked again at the next sweep. */
void pm_sweep_capabilities_changed(struct pm_area *pm, unsigned lid);

/* The port pmPortCountersTable shows for a node: what a manager set, else
 * first_port (the node's first). */
unsigned pm_port_select_get(const struct pm_area *pm, uint64_t guid, unsigned first_port);
int pm_port_select_set(struct pm_area *pm, uint64_t guid, unsigned port);

/* An action on a node is over: MAD_OK or the failure. */
typedef void (*pm_done_fn)(void *ctx, int mad_result);

/* PerfMgtSet(PortCounters) to lid: clears the counters counter_select names
 * (PortCounters' CounterSelect bits) of port; after it worked a sweep shows
 * the zeros soon. -1: not sent. */
int pm_clear_counters(struct pm_area *pm, unsigned lid, unsigned port,
		      unsigned counter_select, pm_done_fn done, void *ctx);

/* Rebuilds the view now (after a change of PortSelect). */
void pm_view_refresh(struct pm_area *pm);
void pm_view_init(struct pm_area *pm);

/* ---- sampling (pm_samples.c) ---- */

struct pm_sample_state {
	uint64_t guid;
	bool have_ctl, have_res; /* answered at least once */
	bool stale;              /* the last read got no answer */
	struct pm_sample_ctl ctl;
	struct pm_sample_result res;
};

struct pm_samples_snapshot {
	size_t n;
	struct pm_sample_state *nodes; /* sorted by GUID */
};

/* Fields of a sample start named by the manager (the others stay as the
 * node has them). */
#define PM_SAMPLE_SET_OPCODE (1u << 0)
#define PM_SAMPLE_SET_PORT_SELECT (1u << 1)
#define PM_SAMPLE_SET_START (1u << 2)
#define PM_SAMPLE_SET_INTERVAL (1u << 3)
#define PM_SAMPLE_SET_TAG (1u << 4)
#define PM_SAMPLE_SET_SELECT(i) (1u << (5 + (i)))

void pm_samples_init(struct pm_area *pm, unsigned lifetime_s);
void pm_samples_stop(struct pm_area *pm);
/* pmSampleNode's nodes are watched from now on. */
void pm_samples_watch_all(struct pm_area *pm, const uint64_t *guids, size_t n);
int pm_samples_watch(struct pm_area *pm, uint64_t guid);
const struct pm_sample_state *pm_samples_find(const struct pm_samples_snapshot *s,
					      uint64_t guid);
/* PerfMgtGet PortSamplesControl, then PerfMgtSet with the named fields
 * changed: this starts a sample. done() gets MAD_OK or the failure. */
int pm_samples_start(struct pm_area *pm, uint64_t guid, unsigned lid,
		     const struct pm_sample_ctl *want, uint32_t fields, pm_done_fn done,
		     void *ctx);

/* Registers m for pm in a context (NULL: the default one). */
int pm_mib_register(struct pm_mib *m, struct pm_area *pm, const char *context);
void pm_mib_unregister(struct pm_mib *m);

/* The area's parts (pm_area.c starts them in this order). */
void pm_sweep_init(struct pm_area *pm, unsigned lifetime_s);
void pm_sweep_stop(struct pm_area *pm);
/* A new discovery: sweep it now (the first one starts the periodic sweeps). */
void pm_sweep_discovered(struct pm_area *pm);
/* A topology patched from the one swept (f): the ports it names are read
 * now, the others at the next periodic sweep. */
void pm_sweep_patched(struct pm_area *pm, const struct topology *f);



#endif
