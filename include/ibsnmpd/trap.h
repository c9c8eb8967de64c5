/* InfiniBand traps in: where they come from, and who is told.
 *
 *   SA Report(Notice) (InformInfo subscription) --> notice_decode ------\
 *   opensm's log line (traps 129-131) -----------> osm_log_line_parse --> trap_deliver
 *   PM sweep published: LLI/EBO counters rose ----> counter_traps -----/   -> observers
 *
 * The observers (the daemon wires them: SMA-MIB's notifications, a
 * rediscovery after trap 128) see every trap, whatever its source. */
#ifndef IBSNMPD_TRAP_H
#define IBSNMPD_TRAP_H

#include <stdbool.h>

#include "ibsnmpd/notice.h"

struct cache_group;

/* ---- counters (IBSNMPD-MIB ibsnmpdTraps) ---- */

struct trap_stats {
	unsigned long received;     /* traps taken in, from every source */
	unsigned long repeated;     /* Reports seen again (same TID): answered, not notified */
	unsigned long malformed;    /* Reports dropped */
	unsigned subscriptions;     /* trap numbers the SA accepted */
};
void trap_get_stats(struct trap_stats *st);

/* ---- who is told ---- */

/* via names the source for the logs ("SA report", "opensm log", "counters"). */
typedef void (*trap_observer_fn)(const struct notice *n, const char *via, void *arg);
/* -1 if there is no room (a handful are allowed). */
int trap_observe(trap_observer_fn fn, void *arg);

/* ---- sources (trap_subscriber.c) ---- */

/* Subscribes with the SA at sm_lid and listens for Reports; reads opensm's
 * log if osmLogFile says where. */
int trap_subscriber_start(unsigned sm_lid);
/* The master SM moved: subscribe there. */
void trap_subscriber_sm_changed(unsigned sm_lid);
/* Whether the SM at the known LID answered as master (subscriptions sent).
 * probe_now asks it (an SMInfo SMP); subscriptions follow its answer. */
bool trap_subscriber_has_master(void);
void trap_subscriber_probe_now(void);
void trap_subscriber_apply_config(void);
void trap_subscriber_stop(void);
/* Traps 129/130 from the counters of every sweep the PM group publishes
 * (trapsFromCounters; not while opensm's log is read: it has them). */
int trap_watch_counters(struct cache_group *pm_sweep);

#endif
