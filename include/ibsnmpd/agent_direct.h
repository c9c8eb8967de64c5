/* Direct mode: ibsnmpd as its own SNMP agent (net-snmp's master agent on
 * the addresses of `agentaddress`), instead of snmpd's AgentX subagent.
 * AgentX stays the default. */
#ifndef IBSNMPD_AGENT_DIRECT_H
#define IBSNMPD_AGENT_DIRECT_H

#include <stdbool.h>

/* Whether to run as the master agent: an address on the command line
 * (-a, stored as net-snmp's agentaddress), or an agentaddress line in the
 * configuration files net-snmp will read. Called before init_agent(). */
bool agent_direct_wanted(const char *cli_address);
/* After init_agent(): the net-snmp MIB modules a master agent needs. */
void agent_direct_init_modules(void);
/* After the configuration is read: refuses (NULL: fine, else why) without
 * access control, then listens. *code: the exit status to use. */
const char *agent_direct_listen(int *code);

#endif
