/* Where ibsnmpd relies on net-snmp's (and libc's) internals, rather than on
 * their documented interfaces: all of it in one file (netsnmp_compat.c),
 * each with the versions it was checked against and a unit test
 * (tests/unit/test_netsnmp_compat.c) that fails if an update changes the
 * behaviour it relies on. */
#ifndef IBSNMPD_NETSNMP_COMPAT_H
#define IBSNMPD_NETSNMP_COMPAT_H

/* AgentX sessions (to snmpd) give up on a silent master after half a
 * second, without retries, instead of net-snmp's 1 s x 5: registered as a
 * session-init callback before init_snmp(). */
#define COMPAT_AGENTX_TIMEOUT_US 500000L
void compat_agentx_quick_sessions(void);

/* The first registration in a new SNMP context, made without net-snmp
 * sending the context's root registrations (0, 1, 2) to snmpd. */
void compat_context_roots(const char *context);

/* The default context back at the head of net-snmp's list of contexts,
 * after contexts were added (requests find their context by walking it). */
void compat_default_context_first(void);

/* Writes to stream sockets (AgentX, TCP) never wait: sendto() there sends
 * a message whole if the socket has room for it now, else fails with
 * EAGAIN; one sent in part shuts the connection down. refused: writes
 * that found no room; shut: connections shut down that way. */
struct compat_write_stats {
	unsigned long refused, shut;
};
void compat_get_write_stats(struct compat_write_stats *st);

/* Test hooks: how many connect() calls were bounded by the replacement. */
unsigned long compat_bounded_connects(void);

#endif
