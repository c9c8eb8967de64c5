/* What the routing checks find wrong, for the active alarm table
 * (alarm.h): a row per failing check (cleared by ibsnmpdRouteCheckPassed),
 * and one per destination LID a switch cannot reach (a dead end or a loop:
 * the switch blamed, the LID; cleared by ibsnmpdAlarmCleared). Pure. */
#include <stdio.h>
#include <string.h>

#include "ibsnmpd/alarm.h"

#include "route_internal.h"

void route_alarms(const void *snapshot, struct alarm_list *out)
{
	const struct route_snapshot *s = snapshot;
	struct alarm_cond *c;

	for (unsigned k = 1; k <= ROUTE_CHECKS; k++) {
		const struct route_check_result *r = &s->checks[k];

		if (r->status != ROUTE_STATUS_FAILED)
			continue;
		if ((c = alarm_list_add(out, ALARM_ROUTE_CHECK_FAILED, 0, 0, k, 0)))
			snprintf(c->desc, sizeof(c->desc), "%s check %s failed: %llu offender%s",
				 k <= ROUTE_ROUTING_CHECKS ? "routing" : "subnet",
				 route_check_name(k), (unsigned long long)r->offenders,
				 r->offenders == 1 ? "" : "s");
	}
	for (size_t i = 0; i < s->n_offenders; i++) {
		const struct route_offender *o = &s->offenders[i];

		if (o->check != ROUTE_CHECK_REACH)
			continue;
		if ((c = alarm_list_add(out, ALARM_ROUTE_UNREACHABLE, o->guid, o->port, o->lid, 2)))
			snprintf(c->desc, sizeof(c->desc), "%.*s", (int)sizeof(c->desc) - 1, o->desc);
	}
}
