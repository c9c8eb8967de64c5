/* What the DCBX snapshot says is wrong, for the active alarm table
 * (alarm.h): the conditions LLDP-EXT-DCBX-MIB's notifications raise
 * (dcbx_rules.c) while they hold: a feature in error
 * (lldpXdcbxMiscFeatureError), the peer's configuration differing from
 * ours (lldpXdcbxPeerConfigMismatch). */
#include <stdio.h>

#include "ibsnmpd/alarm.h"

#include "dcbx_internal.h"

static const char *const feature_names[] = {
	[DCBX_FEAT_PG] = "priority groups", [DCBX_FEAT_PFC] = "PFC", [DCBX_FEAT_APP] = "applications",
};

void dcbx_alarms(const void *snapshot, struct alarm_list *out)
{
	const struct dcbx_snapshot *s = snapshot;

	for (size_t i = 0; i < s->n; i++) {
		const struct dcbx_port *p = &s->ports[i];
		struct alarm_cond *c;

		for (int f = DCBX_FEAT_FIRST; f <= DCBX_FEAT_LAST; f++)
			if (dcbx_feature_error(p, (enum dcbx_feature)f) &&
			    (c = alarm_list_add(out, ALARM_DCBX_FEATURE_ERROR, 0, p->ifindex,
						(uint32_t)f, 0)))
				snprintf(c->desc, sizeof(c->desc), "%s DCBX %s: error", p->ifname,
					 feature_names[f]);
		if (dcbx_any_mismatch(p) &&
		    (c = alarm_list_add(out, ALARM_DCBX_MISMATCH, 0, p->ifindex, 0, 0)))
			snprintf(c->desc, sizeof(c->desc), "%s DCBX: the peer's configuration differs",
				 p->ifname);
	}
}
