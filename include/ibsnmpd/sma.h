/* SMA-MIB (seed 000): the node whose SMA is served, its snapshots (one per
 * cache group) and the MIB glue. The attributes' decoders: sma_attr.h. */
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

/* ---- the node whose SMA ibsnmpd serves: a path and its cache groups ---- */

struct sma_node {
	ib_portid_t path;
	struct cache_group group[CACHE_SMA_COUNT];
	/* called after a PortInfo snapshot is published whose management port
	 * has another MasterSMLID (a new master SM): the subnet may have changed
	 * under it */
	void (*on_sm_change)(void *arg, unsigned old_lid, unsigned new_lid);
	void *on_sm_change_arg;
	bool remote; /* a node of the subnet, not the local one: its link is not ours */
	/* PortInfo of a port another sweep reads already (a remote node's ports
	 * 1..N: the fabric sweep's SubnGet(PortInfo)): fills *pi and returns
	 * true, and the port group sends no SMP for that port. NULL: every port
	 * is read here. Set after sma_node_init(). */
	bool (*port_known)(void *arg, unsigned port, struct sma_portinfo *pi);
	void *port_known_arg;
};

void sma_node_init(struct sma_node *node, const ib_portid_t *path);
/* Starts node info; sma_node_start_step() starts the rest. */
void sma_node_start(struct sma_node *node);
void sma_node_stop(struct sma_node *node);
void sma_node_apply_config(struct sma_node *node);
/* Start-up: starts the next stage of groups once the previous stage has had
 * its first refresh; true once every group has (successfully or not). Called
 * from the main loop until it returns true. */
bool sma_node_start_step(struct sma_node *node);

/* ---- SMA-MIB notifications (sma_notify.c) ---- */

struct notice;
/* A trap observer (trap_observe): the trap's notification, sent through
 * the notification path. */
void sma_notify_trap(const struct notice *n, const char *via, void *arg);

/* Registers SMA-MIB's groups (of the local node, in the default context)
 * and its sysORTable entry. */
int sma_mib_register(struct sma_node *node);
void sma_mib_unregister(void);

/* SMA-MIB's groups of one node in one SNMP context (a node of the subnet
 * served as a device of its own); asked is called before each answer. */
#define SMA_MIB_SCALAR_GROUPS 3
#define SMA_MIB_TABLES 13
struct sma_mib_regs {
	struct mib_scalars scalars[SMA_MIB_SCALAR_GROUPS];
	struct mib_table tables[SMA_MIB_TABLES];
};
int sma_mib_register_in(struct sma_mib_regs *r, struct sma_node *node, const char *context,
			struct mib_asked asked);
void sma_mib_unregister_in(struct sma_mib_regs *r);

#endif
