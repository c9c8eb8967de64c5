/* SMA-MIB: a node's Subnet Management Agent read into snapshots, one per
 * cache group (sma_collector.c), and the MIB glue (sma_mib.c). The local
 * node is the SMA area's (sma_area.c), served in the default context; a
 * node context (node.h) has a collector of its own. The attributes'
 * decoders: sma_attr.h. */
#ifndef IBSNMPD_SMA_H
#define IBSNMPD_SMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/mad.h>

#include "ibsnmpd/cache.h"
#include "ibsnmpd/config.h"
#include "ibsnmpd/mib_table.h"
#include "ibsnmpd/sma_attr.h"

/* SMA-MIB's groups, one cache group each; IBSNMPD-MIB's ibsnmpdCacheIndex
 * is this + 1. */
enum sma_group {
	SMA_NODE_INFO,
	SMA_SWITCH_INFO,
	SMA_PORT_INFO,
	SMA_GUID_INFO,
	SMA_PKEY,
	SMA_SL2VL,
	SMA_VLARB,
	SMA_LFT,
	SMA_MFT,
	SMA_RFT,
	SMA_SM_INFO,
	SMA_VENDOR_DIAG,
	SMA_LED_INFO,
	SMA_GROUPS
};
/* Their names (cacheLifetime) and default lifetimes. */
extern const struct cache_decl sma_cache_decls[SMA_GROUPS];

/* ---- snapshots (one per cache group) ---------------------------------- */

struct sma_switch_snapshot {
	bool present; /* false on a CA or router: the group has no instances */
	struct sma_switchinfo si;
};

struct sma_port_entry {
	unsigned num;
	struct sma_portinfo pi;
};

struct sma_port_snapshot {
	unsigned mgmt_port;             /* switch: 0; CA: the local port */
	const struct sma_port_entry *mgmt; /* NULL if it did not answer */
	size_t count;
	struct sma_port_entry *ports;   /* sorted by port number */
	struct mib_rows data_ports;     /* rows: ports 1..N (SMA-MIB) */
	struct mib_rows all_ports;      /* rows: ports 0..N (extensions) */
};

/* A table group's snapshot: one or two tables of typed entries. */
struct sma_table_snapshot {
	struct mib_rows table[2];
	void *entries[2];
};

struct sma_guid_entry { unsigned port, index; uint64_t guid; };
struct sma_pkey_entry { unsigned port, index; uint16_t pkey; };
struct sma_sl2vl_entry { unsigned out_port, in_port, sl, vl; };
struct sma_vlarb_entry { unsigned port, n, vl, weight; };
struct sma_lft_entry { unsigned lid, port; };
struct sma_mft_entry { unsigned mlid; uint8_t ports[32]; /* IbSmPortList */ };
struct sma_rft_row { unsigned index; struct sma_rft_entry e; };
struct sma_sminfo_entry { unsigned port; struct sma_sminfo sm; };
/* VendorDiag and, read in the same batch, PortInfo's DiagCode of the port */
struct sma_vdiag_entry { unsigned port; struct sma_vendordiag d; unsigned diag_code; };
struct sma_led_entry { unsigned index, on; };

/* ---- a collector: one node's SMA, reached by a path, in cache groups ---- */

struct sma_collector {
	ib_portid_t path;
	struct cache_group group[SMA_GROUPS];
	struct cache_observer local_link; /* the local node: its link's state, logged */
	bool remote; /* a node of the subnet, not the local one: its link is not ours */
	/* PortInfo of a port another sweep reads already (a remote node's ports
	 * 1..N: the fabric sweep's SubnGet(PortInfo)): fills *pi and returns
	 * true, and the port group sends no SMP for that port. NULL: every port
	 * is read here. Set after sma_collector_init(). */
	bool (*port_known)(void *arg, unsigned port, struct sma_portinfo *pi);
	void *port_known_arg;
};

/* remote: a node of the subnet (not the local one, whose link is ours). */
void sma_collector_init(struct sma_collector *node, const ib_portid_t *path, bool remote);
/* Starts node info; sma_collector_start_step() starts the rest. */
void sma_collector_start(struct sma_collector *node);
void sma_collector_stop(struct sma_collector *node);
void sma_collector_apply_config(struct sma_collector *node);
/* Start-up: starts the next stage of groups once the previous stage has had
 * its first refresh; true once every group has (successfully or not). Called
 * from the main loop until it returns true. */
bool sma_collector_start_step(struct sma_collector *node);

static inline struct cache_group *sma_group(struct sma_collector *c, enum sma_group g)
{
	return &c->group[g];
}

/* Whether two successive PortInfo snapshots (struct sma_port_snapshot, of
 * an observer) name another master SM on the management port: the old
 * and the new MasterSMLID. */
bool sma_sm_moved(const void *before, const void *after, unsigned *from, unsigned *to);

/* ---- the area: the local node (sma_area.c) ---- */

struct sma_area;
struct area_def;
extern const struct area_def sma_area_def;
/* The local node's collector (read all the time). */
struct sma_collector *sma_local(struct sma_area *a);

/* SMA-MIB's groups of one node as two subtrees, SMA-MIB and
 * ibsnmpdPortExtTable: *node is the collector, NULL until it is read (a
 * node context's, made when asked); asked (may be empty) is called before
 * an answer from them. sma_mib_subtrees fills them for a node context,
 * which serves them through its one registration (node_mib.c);
 * sma_mib_register fills and registers them in the default context. */
struct sma_mib_regs {
	struct mib_subtree sma, port_ext;
};
void sma_mib_subtrees(struct sma_mib_regs *r, struct sma_collector *const *node,
		      struct mib_asked asked);
int sma_mib_register(struct sma_mib_regs *r, struct sma_collector *const *node);
void sma_mib_unregister(struct sma_mib_regs *r);

#endif
