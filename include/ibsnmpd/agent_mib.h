/* IBSNMPD-MIB's statistics group: the MAD engine's counters and the state
 * of every cache group the running areas declare. */
#ifndef IBSNMPD_AGENT_MIB_H
#define IBSNMPD_AGENT_MIB_H

/* After the areas have started (their groups are the table's rows). */
int agent_mib_register(void);
void agent_mib_unregister(void);

#endif
