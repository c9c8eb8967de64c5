/* The net-snmp agent in-process, for tests of the MIB handlers: a master
 * agent with no network port, queried through net-snmp's internal callback
 * transport, so that every request goes through the real agent code (the
 * registry, GETNEXT across registrations, the SET modes, delegation) and
 * reaches the handlers with what a manager would send. No snmpd. */
#ifndef IBSNMPD_AGENT_HARNESS_H
#define IBSNMPD_AGENT_HARNESS_H

#include <stdbool.h>

#include "ibsnmpd/netsnmp.h"

void harness_start(void);
void harness_stop(void);

/* One request (SNMP_MSG_GET, _GETNEXT, _SET) with vars (freed here); the
 * response PDU (snmp_free_pdu it), never NULL. */
netsnmp_pdu *harness_request(int command, netsnmp_variable_list *vars);
/* The same in an SNMP context (NULL: the default one). */
netsnmp_pdu *harness_request_in(const char *context, int command, netsnmp_variable_list *vars);

/* GET / GETNEXT of one OID; the response's varbind (type SNMP_NOSUCHOBJECT,
 * SNMP_NOSUCHINSTANCE, SNMP_ENDOFMIBVIEW, or a value), in *pdu to free. */
netsnmp_variable_list *harness_get(const oid *name, size_t len, netsnmp_pdu **pdu);
netsnmp_variable_list *harness_getnext(const oid *name, size_t len, netsnmp_pdu **pdu);

/* GETNEXT from root while the answers stay under it: their OIDs, each
 * written as ".1.3.6..." into names (up to max), and how many there were. */
size_t harness_walk(const oid *root, size_t len, char names[][128], size_t max);

/* A SET of the varbinds added to *vars with harness_add_*; returns the
 * response's error status, its index in *index (may be NULL). */
void harness_add_int(netsnmp_variable_list **vars, const oid *name, size_t len, long v);
void harness_add_string(netsnmp_variable_list **vars, const oid *name, size_t len,
			const char *s, size_t n);
int harness_set(netsnmp_variable_list *vars, long *index);

/* An OID as ".1.3.6..." */
void harness_oid_string(const oid *name, size_t len, char *out, size_t outlen);

#endif
