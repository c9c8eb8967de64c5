/* InfiniBand traps in: where they come from, and who is told (the trap
 * area, src/trap/).
 *
 *   SA Report(Notice) (InformInfo subscription) --> notice_decode ------\
 *   opensm's log line (traps 129-131) -----------> osm_log_line_parse --> trap_deliver
 *   the PM area's sweeps: LLI/EBO counters rose --> trap_from_counters -/   -> observers
 *
 * The observers see every trap, whatever its source: SMA-MIB's
 * notifications (trap_notify.c), and any area that acts on one (the
 * topology rediscovers after trap 128, the link sweep reads the switch,
 * the PM sweep asks ClassPortInfo again after trap 144). */
#ifndef IBSNMPD_TRAP_H
#define IBSNMPD_TRAP_H

#include <stdbool.h>

#include "ibsnmpd/notice.h"

struct trap_area;
struct area_def;
extern const struct area_def trap_area_def;

/* ---- counters (IBSNMPD-MIB ibsnmpdTraps) ---- */

struct trap_stats {
	unsigned long received;     /* traps taken in, from every source */
	unsigned long repeated;     /* Reports seen again (same TID): answered, not notified */
	unsigned long malformed;    /* Reports dropped */
	unsigned subscriptions;     /* trap numbers the SA accepted */
};
void trap_get_stats(const struct trap_area *t, struct trap_stats *st);

/* ---- who is told ---- */

/* via names the source for the logs ("SA report", "opensm log", "counters"). */
typedef void (*trap_observer_fn)(const struct notice *n, const char *via, void *arg);
/* One observer; its storage is the observer's (no limit). */
struct trap_observer {
	trap_observer_fn fn;
	void *arg;
	struct trap_observer *next;
};
void trap_observe(struct trap_area *t, struct trap_observer *o, trap_observer_fn fn, void *arg);
void trap_unobserve(struct trap_area *t, struct trap_observer *o);

/* ---- a source in another area: the counters ---- */

/* Whether traps 129/130 are taken from the counters (trapsFromCounters, and
 * opensm's log is not read: it has them). */
bool trap_wants_counters(const struct trap_area *t);
/* One trap the counters tell (counter_traps, in the PM area). */
void trap_from_counters(struct trap_area *t, const struct notice *n);

#endif
