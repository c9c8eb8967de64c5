/* net-snmp's headers for ibsnmpd sources. net-snmp and libibmad both declare
 * a function named xdump() with different types; rename net-snmp's so that
 * one file can include both (neither is called by ibsnmpd). */
#ifndef IBSNMPD_NETSNMP_H
#define IBSNMPD_NETSNMP_H

#ifdef IBSNMPD_PURE
#error "pure code (ibsnmpd_pure) must not depend on net-snmp"
#endif

#define xdump netsnmp_xdump_unused
#include <net-snmp/net-snmp-config.h>
#include <net-snmp/net-snmp-includes.h>
#include <net-snmp/agent/net-snmp-agent-includes.h>
#undef xdump

#endif
