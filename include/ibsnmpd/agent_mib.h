/* IBSNMPD-MIB's statistics group: the MAD engine's counters and the state
 * of every cache group. */
#ifndef IBSNMPD_AGENT_MIB_H
#define IBSNMPD_AGENT_MIB_H

#include "ibsnmpd/cache.h"

/* groups[i] is the cache group named cache_group_name(i); NULL if absent. */
int agent_mib_register(struct cache_group *const *groups, unsigned count);
void agent_mib_unregister(void);

#endif
