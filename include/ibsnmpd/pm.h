/* Performance management for the whole subnet: discovery (libibnetdisc, in
 * a helper process), pipelined PerfMgt sweeps, and the counters they
 * produce. The attributes' codecs: pm_attr.h. */
#ifndef IBSNMPD_PM_H
#define IBSNMPD_PM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <infiniband/mad.h>

#include "ibsnmpd/cache.h"
#include "ibsnmpd/mib_table.h"
#include "ibsnmpd/pm_attr.h"

/* Snapshot of the pm group (one sweep): the fabric and every port's state,
 * sorted by node GUID and port, and what each node's ClassPortInfo said. */
struct pm_snapshot {
	struct pm_fabric *fabric;
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
	const struct pm_node *node;      /* in the view's fabric */
	unsigned capmask;                /* ClassPortInfo CapabilityMask */
	bool capmask_known;
	unsigned port_select;            /* pmPortCountersPortSelect */
	bool have_counters;              /* the selected port(s) have been read */
	uint64_t counter[PM_SELECT_COUNTERS]; /* of the selected port; 0xFF: summed */
	uint8_t ports[32];               /* bitmap of the node's ports */
	bool have_ctl, have_res;         /* sampling state (nodes being sampled) */
	struct pm_sample_ctl ctl;
	struct pm_sample_result res;
};

struct pm_view {
	struct pm_fabric *fabric;        /* held */
	size_t n;
	struct pm_node_view *nodes;
	struct mib_rows rows;            /* index: node GUID (8 octets) */
};

static inline bool pm_node_has_port(const struct pm_node_view *v, unsigned port)
{
	return port < 256 && (v->ports[port / 8] >> (port % 8) & 1);
}

/* The subsystem, on the main loop: discovery (the helper process
 * ibsnmpd-discover, read through a pipe) and the counter sweeps. */
struct pm_subnet {
	struct cache_group sweep;     /* snapshot: struct pm_snapshot */
	struct pm_fabric *fabric;     /* latest discovery */
	char ca_name[64];
	int port_num;
	unsigned discovery_interval_s;
	unsigned discovery_alarm;
	/* the running discovery: helper process, its stdout, what it said so far */
	pid_t discover_pid;
	int discover_fd;
	bool discover_output_done, discover_exited; /* both: the discovery is over */
	int discover_status;          /* waitpid's; -1: killed at its deadline */
	char *discover_out;
	size_t discover_len, discover_cap;
	char helper[4096];
	bool alone_noted;             /* a discovery saw only the local node: said */
	uint64_t silent_print;        /* the nodes the last sweep found silent (a sum) */
	/* ClassPortInfo is asked once per node and discovery; these LIDs' again
	 * at the next sweep (a trap 144 said their capabilities changed) */
	unsigned recheck_lid[32];
	size_t n_recheck;
	bool recheck_all;             /* more than recheck_lid holds */
	/* sampling state of the watched nodes (pm_samples.c) */
	struct cache_group samples;   /* snapshot: struct pm_samples_snapshot */
	bool samples_again;           /* a sample started while reading: read again */
	uint64_t *watch;              /* watched node GUIDs, sorted */
	size_t n_watch, cap_watch;
	/* IB-PM-MIB PortSelect chosen by managers, per node GUID (sorted) */
	struct pm_port_select { uint64_t guid; unsigned port; } *select;
	size_t n_select, cap_select;
	/* what IB-PM-MIB's handlers read: snapshot struct pm_view, rebuilt
	 * after the sweep or the sampling read is published, and after a SET
	 * of PortSelect */
	struct cache_group view;
};

/* A node's capabilities changed (trap 144 from lid): its PMA's ClassPortInfo
 * is asked again at the next sweep. */
void pm_subnet_capabilities_changed(struct pm_subnet *pm, unsigned lid);

/* The port pmPortCountersTable shows for a node: what a manager set, else
 * first_port (the node's first). */
unsigned pm_port_select_get(const struct pm_subnet *pm, uint64_t guid, unsigned first_port);
int pm_port_select_set(struct pm_subnet *pm, uint64_t guid, unsigned port);

/* An action on a node is over: MAD_OK or the failure. */
typedef void (*pm_done_fn)(void *ctx, int mad_result);

/* PerfMgtSet(PortCounters) to lid: clears the counters counter_select names
 * (PortCounters' CounterSelect bits) of port; after it worked a sweep shows
 * the zeros soon. -1: not sent. */
int pm_clear_counters(struct pm_subnet *pm, unsigned lid, unsigned port,
		      unsigned counter_select, pm_done_fn done, void *ctx);

/* Rebuilds the view now (after a change of PortSelect). */
void pm_view_refresh(struct pm_subnet *pm);
void pm_view_init(struct pm_subnet *pm);

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

void pm_samples_init(struct pm_subnet *pm);
void pm_samples_stop(struct pm_subnet *pm);
void pm_samples_apply_config(struct pm_subnet *pm);
int pm_samples_watch(struct pm_subnet *pm, uint64_t guid);
const struct pm_sample_state *pm_samples_find(const struct pm_samples_snapshot *s,
					      uint64_t guid);
/* PerfMgtGet PortSamplesControl, then PerfMgtSet with the named fields
 * changed: this starts a sample. done() gets MAD_OK or the failure. */
int pm_samples_start(struct pm_subnet *pm, uint64_t guid, unsigned lid,
		     const struct pm_sample_ctl *want, uint32_t fields, pm_done_fn done,
		     void *ctx);

/* Where SMPs to the node go: its LID, or (no LID yet: no SM) the directed
 * route the discovery took; -1 if neither is known. */
int pm_node_portid(const struct pm_node *nd, ib_portid_t *to);

int pm_subnet_start(struct pm_subnet *pm, const char *ca_name, int port_num);
void pm_subnet_stop(struct pm_subnet *pm);
void pm_subnet_apply_config(struct pm_subnet *pm);
/* Asks for a new discovery now (e.g. after a link-state trap or SM change). */
void pm_subnet_rediscover(struct pm_subnet *pm);

int pm_mib_register(struct pm_subnet *pm);
void pm_mib_unregister(void);

#endif
