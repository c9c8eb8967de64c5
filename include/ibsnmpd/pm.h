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

#include "ibsnmpd/cache.h"
#include "ibsnmpd/mib_table.h"
#include "ibsnmpd/pm_attr.h"

/* One node of a snapshot, for IB-PM-MIB's per-node tables. */
struct pm_node_row {
	const struct pm_node *node;
	unsigned capmask;      /* ClassPortInfo CapabilityMask */
	bool capmask_known;    /* ClassPortInfo answered */
	size_t first_port, n_ports; /* its ports in pm_snapshot.ports */
};

/* Snapshot of the pm group: the fabric and every port's state, sorted. */
struct pm_snapshot {
	struct pm_fabric *fabric;
	size_t n;
	struct pm_port_state *ports;
	struct mib_rows rows; /* index: 8 octets of node GUID, port */
	struct pm_node_row *nodes;
	struct mib_rows node_rows; /* index: 8 octets of node GUID */
	size_t stale_ports;
};

void pm_snapshot_free(void *p);

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
	char *discover_out;
	size_t discover_len, discover_cap;
	char helper[4096];
	/* sampling state of the watched nodes (pm_samples.c) */
	struct cache_group samples;   /* snapshot: struct pm_samples_snapshot */
	bool samples_again;           /* a sample started while reading: read again */
	uint64_t *watch;              /* watched node GUIDs, sorted */
	size_t n_watch, cap_watch;
	/* IB-PM-MIB PortSelect chosen by managers, per node GUID (sorted) */
	struct pm_port_select { uint64_t guid; unsigned port; } *select;
	size_t n_select, cap_select;
};

/* The port pmPortCountersTable shows for a node: what a manager set, else
 * the node's first port. */
unsigned pm_port_select_get(const struct pm_subnet *pm, const struct pm_node_row *row,
			    const struct pm_snapshot *snap);
int pm_port_select_set(struct pm_subnet *pm, uint64_t guid, unsigned port);

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

typedef void (*pm_samples_done_fn)(void *ctx, int mad_result);

void pm_samples_init(struct pm_subnet *pm);
void pm_samples_stop(struct pm_subnet *pm);
void pm_samples_apply_config(struct pm_subnet *pm);
int pm_samples_watch(struct pm_subnet *pm, uint64_t guid);
const struct pm_sample_state *pm_samples_find(const struct pm_samples_snapshot *s,
					      uint64_t guid);
/* PerfMgtGet PortSamplesControl, then PerfMgtSet with the named fields
 * changed: this starts a sample. done() gets MAD_OK or the failure. */
int pm_samples_start(struct pm_subnet *pm, uint64_t guid, unsigned lid,
		     const struct pm_sample_ctl *want, uint32_t fields, pm_samples_done_fn done,
		     void *ctx);

int pm_subnet_start(struct pm_subnet *pm, const char *ca_name, int port_num);
void pm_subnet_stop(struct pm_subnet *pm);
void pm_subnet_apply_config(struct pm_subnet *pm);
/* Asks for a new discovery now (e.g. after a link-state trap or SM change). */
void pm_subnet_rediscover(struct pm_subnet *pm);

int pm_mib_register(struct pm_subnet *pm);
void pm_mib_unregister(void);

#endif
