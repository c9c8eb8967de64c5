/* Rate limit of notifications per kind and source: at most max_per_window
 * in a fixed window of window_s seconds, so that a flapping link does not
 * flood the managers. Pure: time comes from the caller. */
#include <stdlib.h>

#include "notify_limit.h"

static struct notify_limit_entry *entry_of(struct notify_limiter *l, unsigned kind,
					   unsigned source)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->e[i].kind == kind && l->e[i].source == source)
			return &l->e[i];
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 32;
		void *p = realloc(l->e, cap * sizeof(*l->e));

		if (!p)
			return NULL;
		l->e = p;
		l->cap = cap;
	}
	l->e[l->n] = (struct notify_limit_entry){.kind = kind, .source = source};
	return &l->e[l->n++];
}

enum notify_verdict notify_limit_check(struct notify_limiter *l, unsigned kind, unsigned source,
				       time_t now, unsigned *ended_suppressed)
{
	struct notify_limit_entry *e = entry_of(l, kind, source);

	*ended_suppressed = 0;
	if (!e || !l->max_per_window)
		return NOTIFY_SEND; /* no memory for bookkeeping, or no limit: never lose one */
	if (!e->window_start || now - e->window_start >= (time_t)l->window_s || now < e->window_start) {
		*ended_suppressed = e->suppressed;
		e->window_start = now;
		e->sent = e->suppressed = 0;
	}
	if (e->sent < l->max_per_window) {
		e->sent++;
		return NOTIFY_SEND;
	}
	return e->suppressed++ == 0 ? NOTIFY_SUPPRESS_FIRST : NOTIFY_SUPPRESS;
}

void notify_limit_expire(struct notify_limiter *l, time_t now,
			 void (*report)(unsigned kind, unsigned source, unsigned suppressed))
{
	size_t keep = 0;

	for (size_t i = 0; i < l->n; i++) {
		struct notify_limit_entry *e = &l->e[i];

		if (now - e->window_start >= (time_t)l->window_s || now < e->window_start) {
			if (e->suppressed && report)
				report(e->kind, e->source, e->suppressed);
			continue; /* forgotten: the next one opens a new window */
		}
		l->e[keep++] = *e;
	}
	l->n = keep;
}

void notify_limit_free(struct notify_limiter *l)
{
	free(l->e);
	l->e = NULL;
	l->n = l->cap = 0;
}
