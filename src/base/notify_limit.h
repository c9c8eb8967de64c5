/* Rate limit of notifications per kind and source (notificationLimit): at
 * most max_per_window in a fixed window of window_s seconds. Pure: time
 * comes from the caller; the notification path (notify.c) keeps one. */
#ifndef IBSNMPD_NOTIFY_LIMIT_H
#define IBSNMPD_NOTIFY_LIMIT_H

#include <stddef.h>
#include <time.h>

struct notify_limit_entry {
	unsigned kind, source;
	time_t window_start;
	unsigned sent, suppressed;
};

struct notify_limiter {
	unsigned max_per_window, window_s;
	struct notify_limit_entry *e;
	size_t n, cap;
};

/* What to do with one more notification of (kind, source) at now. */
enum notify_verdict {
	NOTIFY_SEND,
	NOTIFY_SUPPRESS,       /* over the limit */
	NOTIFY_SUPPRESS_FIRST, /* over the limit, the first time in this window: log it */
};
/* *ended_suppressed: what the previous window of this (kind, source)
 * suppressed, when that window has just ended (to be logged), else 0. */
enum notify_verdict notify_limit_check(struct notify_limiter *l, unsigned kind, unsigned source,
				       time_t now, unsigned *ended_suppressed);
/* Ends the windows that are over: calls report(kind, source, suppressed) for
 * each that suppressed something, so that a burst is logged even when no
 * later trap of its kind comes. */
void notify_limit_expire(struct notify_limiter *l, time_t now,
			 void (*report)(unsigned kind, unsigned source, unsigned suppressed));
void notify_limit_free(struct notify_limiter *l);

#endif
