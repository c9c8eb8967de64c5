/* Traps 129 and 130 as the counters tell them (pure): LocalLinkIntegrity-
 * Errors and ExcessiveBufferOverrunErrors count exactly the threshold events
 * those traps report, and opensm never forwards the traps themselves. */
#ifndef IBSNMPD_PM_COUNTER_TRAPS_H
#define IBSNMPD_PM_COUNTER_TRAPS_H

#include <stddef.h>

#include "ibsnmpd/notice.h"
#include "ibsnmpd/pm_attr.h"

/* Calls fn for each trap that two successive states of the ports report: a
 * port read in both (sorted by node GUID, then port) whose counter rose.
 * A first reading reports nothing. */
void counter_traps(const struct pm_port_state *before, size_t n_before,
		   const struct pm_port_state *after, size_t n_after,
		   void (*fn)(const struct notice *n, void *arg), void *arg);

#endif
