/* OpenSM's partition policy (seed 004) served and set through
 * IBSNMPD-PARTITION-MIB: what the daemon's main loop needs of it. */
#ifndef IBSNMPD_PKEY_H
#define IBSNMPD_PKEY_H

struct cache_group;
struct pkey_policy;
struct pm_subnet;

/* Reads the partition file and starts verifying its member ports (their
 * LIDs and links come from pm's discovery; pm may be NULL). */
struct pkey_policy *pkey_policy_start(const struct pm_subnet *pm);
void pkey_policy_stop(struct pkey_policy *pp);
/* The member ports' verification, for IBSNMPD-MIB's cache table. */
struct cache_group *pkey_policy_status_group(struct pkey_policy *pp);

int pkey_mib_register(struct pkey_policy *pp);
void pkey_mib_unregister(void);

#endif
