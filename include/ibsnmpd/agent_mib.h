/* IBSNMPD-MIB's statistics group: the MAD engine's counters and the state
 * of every cache group the running areas declare. */
#ifndef IBSNMPD_AGENT_MIB_H
#define IBSNMPD_AGENT_MIB_H

/* What ibsnmpdStats and ibsnmpdInstance show of the MAD engine, handed over
 * by main.c (mad_engine_get_stats, mad_engine_smp_access): the SNMP edge
 * uses the base only, not the MAD layer beside it. */
struct agent_mib_mads {
	unsigned long sent, answered, timeouts, dropped; /* ibsnmpdMadsSent ... */
	unsigned long in_flight;
	unsigned long smps_refused, mkey_violations_caused;
	int smp_access;                                  /* 0 unknown, 1 answered, 2 refused */
};

/* After the areas have started (their groups are the table's rows); mads
 * fills the figures when they are asked (NULL: zeros). */
int agent_mib_register(void (*mads)(struct agent_mib_mads *out));
void agent_mib_unregister(void);

#endif
