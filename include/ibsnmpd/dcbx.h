/* DCBX state of the host's Ethernet (RoCE) ports, from the kernel's dcbnl
 * rtnetlink interface, served as LLDP-EXT-DCBX-MIB (seed 002): what the
 * daemon's main loop needs of it (src/dcbx/ holds the rest). */
#ifndef IBSNMPD_DCBX_H
#define IBSNMPD_DCBX_H

struct cache_group;

/* Opens the kernel's socket (or dcbxSocket's) and starts polling. */
int dcbx_start(void);
void dcbx_stop(void);
/* After SIGHUP: the poll interval (dcbxInterface lines apply at the next poll). */
void dcbx_apply_config(void);
/* Its cache group ("dcbx"), for IBSNMPD-MIB's cache table. */
struct cache_group *dcbx_cache_group(void);

/* LLDP-EXT-DCBX-MIB's handlers and, from every new snapshot, its
 * notifications. */
int dcbx_mib_register(void);
void dcbx_mib_unregister(void);

#endif
