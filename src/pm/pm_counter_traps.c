/* Traps 129/130 from successive readings of the counters (pm_counter_traps.h). */
#include "pm_counter_traps.h"

static int port_cmp(const struct pm_port_state *a, const struct pm_port_state *b)
{
	if (a->guid != b->guid)
		return a->guid < b->guid ? -1 : 1;
	return a->port < b->port ? -1 : a->port > b->port;
}

static void report(const struct pm_port_state *st, unsigned trap_number,
		   void (*fn)(const struct notice *n, void *arg), void *arg)
{
	struct notice n = {
		.is_generic = true, .type = 1, .trap_number = trap_number,
		.lid = st->lid, .port = st->port, .issuer_lid = st->lid,
		.producer_type = st->node && st->node->type == 2 ? 2 : 1, /* switch, else CA */
	};

	fn(&n, arg);
}

void counter_traps(const struct pm_port_state *before, size_t n_before,
		   const struct pm_port_state *after, size_t n_after,
		   void (*fn)(const struct notice *n, void *arg), void *arg)
{
	size_t i = 0;

	for (size_t k = 0; k < n_after; k++) {
		const struct pm_port_state *now = &after[k];
		int c = 1;

		while (i < n_before && (c = port_cmp(&before[i], now)) < 0)
			i++;
		if (i == n_before || c != 0 || !before[i].have_raw || !now->have_raw)
			continue;
		if (now->raw.local_link_integrity_errors > before[i].raw.local_link_integrity_errors)
			report(now, 129, fn, arg);
		if (now->raw.excessive_buffer_overruns > before[i].raw.excessive_buffer_overruns)
			report(now, 130, fn, arg);
	}
}
