/* OpenSM's partition policy served and set through IBSNMPD-PARTITION-MIB
 * (the pkey area, src/pkey/): what other parts of the daemon need of it. */
#ifndef IBSNMPD_PKEY_H
#define IBSNMPD_PKEY_H

struct area_def;
extern const struct area_def pkey_area_def;

#endif
