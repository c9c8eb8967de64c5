/* DCBX state of the host's Ethernet (RoCE) ports, from the kernel's dcbnl
 * rtnetlink interface, served as LLDP-EXT-DCBX-MIB (the dcbx area,
 * src/dcbx/): what other parts of the daemon need of it. */
#ifndef IBSNMPD_DCBX_H
#define IBSNMPD_DCBX_H

struct area_def;
extern const struct area_def dcbx_area_def;

#endif
