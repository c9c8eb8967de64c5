/* What the verification's snapshot says is wrong, for the active alarm
 * table (alarm.h): the last apply of the partition policy gave up before
 * every member port held its P_Key (ibPartitionNotVerified), until an
 * apply is verified or another begins. */
#include <stdio.h>

#include "ibsnmpd/alarm.h"

#include "pkey_policy.h"

void pkey_alarms(const void *snapshot, struct alarm_list *out)
{
	const struct pkey_status_snapshot *s = snapshot;
	struct alarm_cond *c;
	size_t missing = 0;

	if (s->apply_result != APPLY_NOT_VERIFIED)
		return;
	for (size_t i = 0; i < s->n; i++)
		missing += s->st[i].status != PSTAT_APPLIED && s->st[i].status != PSTAT_REJECTED;
	if ((c = alarm_list_add(out, ALARM_PARTITION_NOT_VERIFIED, 0, 0, 0, 0)))
		snprintf(c->desc, sizeof(c->desc),
			 "partition policy applied, not in force: %zu member port%s without "
			 "its P_Key", missing, missing == 1 ? "" : "s");
}
