/* What the readings snapshot says is wrong, for the active alarm table
 * (alarm.h): the conditions the vitals notifications raise
 * (vitals_notify.c), while they hold: a sensor over its threshold, a
 * failed fan, a module plugged with an error, a lane's received power
 * under its alarm. */
#include <inttypes.h>
#include <stdio.h>

#include "ibsnmpd/alarm.h"
#include "ibsnmpd/vitals.h"

static const char *name_of(const struct vitals_node *n, char *buf, size_t len)
{
	if (n && n->inv && n->inv->desc && n->inv->desc[0])
		return n->inv->desc;
	snprintf(buf, len, "0x%016" PRIx64, n ? n->guid : 0);
	return buf;
}

void vitals_alarms(const void *snapshot, struct alarm_list *out)
{
	const struct vitals_snapshot *s = snapshot;

	for (size_t i = 0; i < s->n_nodes; i++) {
		const struct vitals_node *n = &s->nodes[i];
		unsigned type = n->inv ? n->inv->type : 0;
		char guid[24];
		const char *name = name_of(n, guid, sizeof(guid));
		struct alarm_cond *c;

		for (uint32_t k = 0; k < n->n_temps; k++) {
			const struct vitals_temp *t = &s->temps[n->first_temp + k];

			if (t->high && (c = alarm_list_add(out, ALARM_TEMPERATURE_HIGH, n->guid, 0,
							   t->sensor + 1u, type)))
				snprintf(c->desc, sizeof(c->desc), "%s sensor %s", name,
					 t->name[0] ? t->name : "?");
		}
		for (uint32_t k = 0; k < n->n_fans; k++) {
			const struct vitals_fan *f = &s->fans[n->first_fan + k];

			if (f->failed && (c = alarm_list_add(out, ALARM_FAN_FAILED, n->guid, 0,
							     f->tacho + 1u, type)))
				snprintf(c->desc, sizeof(c->desc), "%s fan %u", name, f->tacho + 1u);
		}
		for (uint32_t k = 0; k < n->n_modules; k++) {
			const struct vitals_module *m = &s->modules[n->first_module + k];

			if (m->oper_status == VITALS_MODULE_ERROR &&
			    (c = alarm_list_add(out, ALARM_MODULE_FAULTED, n->guid, 0, m->module + 1u,
						type)))
				snprintf(c->desc, sizeof(c->desc), "%s module %u (port %u)", name,
					 m->module + 1u, m->first_port);
		}
		for (uint32_t k = 0; k < n->n_lanes; k++) {
			const struct vitals_lane *l = &s->lanes[n->first_lane + k];

			if (l->rx_low && (c = alarm_list_add(out, ALARM_RX_POWER_LOW, n->guid, l->port,
							     l->lane, type)))
				snprintf(c->desc, sizeof(c->desc), "%s port %u lane %u", name, l->port,
					 l->lane);
		}
	}
}
