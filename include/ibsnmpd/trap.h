/* InfiniBand traps in, SMA-MIB notifications out.
 *
 *   SA Report(Notice) (InformInfo subscription) ---> notice_decode ---\
 *   opensm's log line (traps 129-131) -------------> osm_log_line_parse --> sma_notify -> snmpd
 *   PM sweep: integrity/overrun counters rose ----> (129/130) ---------/
 */
#ifndef IBSNMPD_TRAP_H
#define IBSNMPD_TRAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "ibsnmpd/notice.h"

/* ---- rate limit per trap kind and source (notify_limit.c, pure) ---- */

struct notify_limit_entry {
	unsigned trap, source;
	time_t window_start;
	unsigned sent, suppressed;
};

struct notify_limiter {
	unsigned max_per_window, window_s;
	struct notify_limit_entry *e;
	size_t n, cap;
};

/* What to do with one more notification of (trap, source) at now. */
enum notify_verdict {
	NOTIFY_SEND,
	NOTIFY_SUPPRESS,       /* over the limit */
	NOTIFY_SUPPRESS_FIRST, /* over the limit, the first time in this window: log it */
};
/* *ended_suppressed: what the previous window of this (trap, source)
 * suppressed, when that window has just ended (to be logged), else 0. */
enum notify_verdict notify_limit_check(struct notify_limiter *l, unsigned trap, unsigned source,
				       time_t now, unsigned *ended_suppressed);
/* Ends the windows that are over: calls report(trap, source, suppressed) for
 * each that suppressed something, so that a burst is logged even when no
 * later trap of its kind comes. */
void notify_limit_expire(struct notify_limiter *l, time_t now,
			 void (*report)(unsigned trap, unsigned source, unsigned suppressed));
void notify_limit_free(struct notify_limiter *l);

/* ---- counters (IBSNMPD-MIB ibsnmpdTraps) ---- */

struct trap_stats {
	unsigned long received;     /* Notices taken in (Reports + plugin) */
	unsigned long sent;         /* notifications handed to snmpd */
	unsigned long suppressed;   /* over the rate limit */
	unsigned long repeated;     /* Reports seen again (same TID): answered, not notified */
	unsigned long malformed;    /* Reports or plugin messages dropped */
	unsigned subscriptions;     /* trap numbers the SA accepted */
};
extern struct trap_stats trap_stats;
void trap_get_stats(struct trap_stats *st);

/* ---- SMA-MIB notifications (sma/sma_notify.c) ---- */

/* The SMA-MIB notification of a trap number, 1..10; 0 if it has none. */
unsigned sma_notification_of_trap(unsigned trap_number);
/* Sends the notification for n (rate-limited); via names the path for logs. */
void sma_notify(const struct notice *n, const char *via);
void sma_notify_apply_config(void);
void sma_notify_stop(void);

/* ---- sources (trap_subscriber.c) ---- */

/* Every trap from every source goes through here: the observer (e.g. a PM
 * rediscovery after a link-state change) sees it, then sma_notify(). */
void trap_deliver(const struct notice *n, const char *via);
typedef void (*trap_observer_fn)(const struct notice *n, void *arg);
void trap_set_observer(trap_observer_fn fn, void *arg);

/* Subscribes with the SA at sm_lid and listens for Reports (and, if
 * configured, the opensm plugin's socket). */
int trap_subscriber_start(unsigned sm_lid);
/* The master SM moved: subscribe there. */
void trap_subscriber_sm_changed(unsigned sm_lid);
void trap_subscriber_apply_config(void);
void trap_subscriber_stop(void);
/* Traps 129-131 come from opensm's log (so not from the counters). */
bool trap_subscriber_reads_osm_log(void);
/* One line of opensm's log -> the trap it reports; -1 if it reports none.
 * Pure, unit-tested. */
int osm_log_line_parse(const char *line, struct notice *n);

#endif
