/* A readings snapshot from the inventory, a sweep's readings and the
 * snapshot before (vitals.h): pure but for the rows' index functions. The
 * conditions follow the device's own thresholds:
 *   a temperature is high at MTMP's threshold_hi and stays high until it
 *   is under threshold_lo (the device's hysteresis);
 *   a fan has failed when FORE says it is under its limit, or it stands;
 *   a module's state is PMAOS's;
 *   a lane's Rx power is low under the module's own low alarm threshold,
 *   until it is 1 dB over it (VITALS_RX_CLEAR_FACTOR).
 * A change of one is an event, to be notified after publication; a node's
 * first readings are none: what is wrong already is served, not told. */
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/mib_table.h"
#include "ibsnmpd/vitals.h"

void vitals_snapshot_free(void *p)
{
	struct vitals_snapshot *s = p;

	if (!s)
		return;
	vitals_inventory_put(s->inv);
	free(s->nodes);
	free(s->temps);
	free(s->fans);
	free(s->modules);
	free(s->lanes);
	free(s);
}

static int node_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct vitals_node *)a)->guid, y = ((const struct vitals_node *)b)->guid;

	return x < y ? -1 : x > y;
}

const struct vitals_node *vitals_find_node(const struct vitals_snapshot *s, uint64_t guid)
{
	struct vitals_node key = {.guid = guid};

	return s && s->n_nodes ? bsearch(&key, s->nodes, s->n_nodes, sizeof(key), node_cmp) : NULL;
}

/* ---- the rows' indexes ---- */

static unsigned node_index(const void *data, oid *index)
{
	mib_index_put_guid(index, ((const struct vitals_node *)data)->guid);
	return MIB_GUID_INDEX_LEN;
}

/* sensors, tachometers and modules are numbered from 0 by the PRM, from 1
 * in the MIB */
static unsigned temp_index(const void *data, oid *index)
{
	const struct vitals_temp *t = data;

	return mib_index_guid_port(index, t->guid, t->sensor + 1u);
}

static unsigned fan_index(const void *data, oid *index)
{
	const struct vitals_fan *f = data;

	return mib_index_guid_port(index, f->guid, f->tacho + 1u);
}

static unsigned module_index(const void *data, oid *index)
{
	const struct vitals_module *m = data;

	return mib_index_guid_port(index, m->guid, m->module + 1u);
}

static unsigned lane_index(const void *data, oid *index)
{
	const struct vitals_lane *l = data;
	unsigned n = mib_index_guid_port(index, l->guid, l->port);

	index[n] = l->lane;
	return n + 1;
}

/* ---- conditions ---- */

/* The previous row of the same (node, key) among prev's rows of the node,
 * or NULL. Both are in the order of their key (the MIB's index order), so
 * one cursor walks the old rows once for all the new ones: a switch has
 * hundreds of lanes, and a search each would make the build quadratic. */
#define FIND_PREV(type, rows, n, cursor, key_of, want)                         \
	({                                                                     \
		const type *hit_ = NULL;                                       \
		while ((cursor) < (n) && key_of(&(rows)[cursor]) < (want))     \
			(cursor)++;                                            \
		if ((cursor) < (n) && key_of(&(rows)[cursor]) == (want))       \
			hit_ = &(rows)[cursor];                                \
		hit_;                                                          \
	})
#define TEMP_KEY(t) ((t)->sensor)
#define FAN_KEY(f) ((f)->tacho)
#define MODULE_KEY(m) ((m)->module)
#define LANE_KEY(l) ((unsigned)(l)->port << 8 | (l)->lane)

static void temp_condition(struct vitals_temp *t, const struct vitals_temp *old, bool baseline)
{
	bool was = old && old->high;

	if (t->stale) {
		if (old) { /* kept as read before */
			*t = *old;
			t->stale = true;
			t->events = 0;
		}
		return;
	}
	/* a threshold of 0 is none (the sensor has no event) */
	if (t->threshold_hi <= 0)
		t->high = false;
	else
		t->high = was ? t->temp > t->threshold_lo : t->temp >= t->threshold_hi;
	if (!baseline && t->high != was)
		t->events = t->high ? VITALS_EV_TEMP_HIGH : VITALS_EV_TEMP_NORMAL;
}

static void fan_condition(struct vitals_fan *f, const struct vitals_fan *old, bool baseline)
{
	bool was = old && old->failed;

	if (f->stale) {
		if (old) {
			*f = *old;
			f->stale = true;
			f->events = 0;
		}
		return;
	}
	f->failed = f->under || f->rpm == 0;
	if (!baseline && f->failed != was)
		f->events = f->failed ? VITALS_EV_FAN_FAILED : VITALS_EV_FAN_RESTORED;
}

static bool module_in(unsigned oper)
{
	return oper == VITALS_MODULE_PLUGGED || oper == VITALS_MODULE_ERROR;
}

static void module_condition(struct vitals_module *m, const struct vitals_module *old,
			     bool baseline)
{
	if (m->stale) {
		if (old) {
			uint16_t first = m->first_port, n = m->n_ports;

			*m = *old;
			m->first_port = first;
			m->n_ports = n;
			m->stale = true;
			m->events = 0;
		}
		return;
	}
	if (!module_in(m->oper_status)) {
		m->have_info = false; /* out: what was in is gone */
		memset(&m->info, 0, sizeof(m->info));
	} else if (!m->have_info && old && old->have_info && module_in(old->oper_status)) {
		m->info = old->info; /* its identity was read before; not this time */
		m->have_info = true;
		m->from_eeprom = old->from_eeprom;
	}
	if (baseline || !old || old->stale || old->oper_status == m->oper_status)
		return;
	if (m->oper_status == VITALS_MODULE_UNPLUGGED && module_in(old->oper_status))
		m->events = VITALS_EV_MODULE_REMOVED;
	else if (m->oper_status == VITALS_MODULE_ERROR)
		m->events = VITALS_EV_MODULE_FAULTED;
	else if (m->oper_status == VITALS_MODULE_PLUGGED)
		m->events = VITALS_EV_MODULE_INSERTED; /* in, or its error cleared */
}

static void lane_condition(struct vitals_lane *l, const struct vitals_lane *old,
			   const struct vitals_module *m, bool baseline)
{
	bool was = old && old->rx_low;
	double low = m && m->have_info && m->info.have_thresholds ? m->info.rx_lo_uw : 0;

	if (low <= 0)
		l->rx_low = false;
	else
		l->rx_low = was ? l->rx_uw < low * VITALS_RX_CLEAR_FACTOR : l->rx_uw < low;
	if (!baseline && old && l->rx_low != was)
		l->events = l->rx_low ? VITALS_EV_RX_LOW : VITALS_EV_RX_NORMAL;
}

/* ---- the build ---- */

static const struct vitals_reading *reading_of(const struct vitals_build *in, uint64_t guid,
					       size_t *at)
{
	while (*at < in->n_readings && in->readings[*at].guid < guid)
		(*at)++;
	return *at < in->n_readings && in->readings[*at].guid == guid ? &in->readings[*at] : NULL;
}

struct vitals_snapshot *vitals_build(const struct vitals_build *in)
{
	const struct vitals_inventory *inv = in->inv;
	const struct vitals_snapshot *prev = in->prev;
	struct vitals_snapshot *s = calloc(1, sizeof(*s));
	size_t temps = 0, fans = 0, modules = 0, lanes = 0, at = 0;

	if (!s)
		return NULL;
	/* how many rows: a node read now has its reading's, another keeps its
	 * last ones */
	for (size_t k = 0; k < inv->n; k++) {
		const struct vitals_reading *r = reading_of(in, inv->nodes[k].guid, &at);
		const struct vitals_node *old = vitals_find_node(prev, inv->nodes[k].guid);

		if (r && r->answered) {
			temps += r->n_temps, fans += r->n_fans, modules += r->n_modules;
			lanes += r->n_lanes;
		} else if (old) {
			temps += old->n_temps, fans += old->n_fans, modules += old->n_modules;
			lanes += old->n_lanes;
		}
	}
	s->inv = vitals_inventory_get(inv);
	s->built = in->now;
	s->nodes = calloc(inv->n + 1, sizeof(*s->nodes));
	s->temps = calloc(temps + 1, sizeof(*s->temps));
	s->fans = calloc(fans + 1, sizeof(*s->fans));
	s->modules = calloc(modules + 1, sizeof(*s->modules));
	s->lanes = calloc(lanes + 1, sizeof(*s->lanes));
	if (!s->nodes || !s->temps || !s->fans || !s->modules || !s->lanes) {
		vitals_snapshot_free(s);
		return NULL;
	}
	at = 0;
	for (size_t k = 0; k < inv->n; k++) {
		const struct vitals_inv_node *iv = &inv->nodes[k];
		const struct vitals_reading *r = reading_of(in, iv->guid, &at);
		const struct vitals_node *old = vitals_find_node(prev, iv->guid);
		struct vitals_node *n = &s->nodes[s->n_nodes++];
		/* the node's first readings: the conditions as they are, untold */
		bool baseline = !old || !old->read_at;

		*n = (struct vitals_node){.guid = iv->guid, .inv = iv, .status = iv->status,
					  .first_temp = (uint32_t)s->n_temps,
					  .first_fan = (uint32_t)s->n_fans,
					  .first_module = (uint32_t)s->n_modules,
					  .first_lane = (uint32_t)s->n_lanes,
					  .hottest_module = INT16_MIN};
		if (r && r->answered) {
			const struct vitals_temp *ot = old ? prev->temps + old->first_temp : NULL;
			const struct vitals_fan *of = old ? prev->fans + old->first_fan : NULL;
			const struct vitals_module *om = old ? prev->modules + old->first_module : NULL;
			const struct vitals_lane *ol = old ? prev->lanes + old->first_lane : NULL;
			size_t ct = 0, cf = 0, cm = 0, cl = 0; /* the cursors in prev's rows */

			n->read_at = in->now;
			n->uptime_s = r->uptime_s;
			n->restarted = old && old->read_at && r->uptime_s < old->uptime_s;
			for (size_t i = 0; i < r->n_temps; i++) {
				struct vitals_temp *t = &s->temps[s->n_temps++];

				*t = r->temps[i];
				t->events = 0;
				temp_condition(t, old ? FIND_PREV(struct vitals_temp, ot, old->n_temps,
								  ct, TEMP_KEY, TEMP_KEY(t)) : NULL,
					       baseline);
			}
			for (size_t i = 0; i < r->n_fans; i++) {
				struct vitals_fan *f = &s->fans[s->n_fans++];

				*f = r->fans[i];
				f->events = 0;
				fan_condition(f, old ? FIND_PREV(struct vitals_fan, of, old->n_fans,
								 cf, FAN_KEY, FAN_KEY(f)) : NULL,
					      baseline);
			}
			for (size_t i = 0; i < r->n_modules; i++) {
				struct vitals_module *m = &s->modules[s->n_modules++];

				*m = r->modules[i];
				m->events = 0;
				module_condition(m, old ? FIND_PREV(struct vitals_module, om,
								    old->n_modules, cm, MODULE_KEY,
								    MODULE_KEY(m)) : NULL,
						 baseline);
			}
			n->n_temps = (uint32_t)r->n_temps;
			n->n_fans = (uint32_t)r->n_fans;
			n->n_modules = (uint32_t)r->n_modules;
			for (size_t i = 0; i < r->n_lanes; i++) {
				struct vitals_lane *l = &s->lanes[s->n_lanes++];
				const struct vitals_module *m;

				*l = r->lanes[i];
				l->events = 0;
				m = l->module < n->n_modules ? &s->modules[n->first_module + l->module]
							      : NULL;
				lane_condition(l, old ? FIND_PREV(struct vitals_lane, ol, old->n_lanes,
								  cl, LANE_KEY, LANE_KEY(l)) : NULL,
					       m, baseline);
			}
			n->n_lanes = (uint32_t)r->n_lanes;
		} else if (old) {
			/* not answered (or not read): its last rows, stale; a
			 * partial sweep's node not read: as they were */
			bool kept = in->partial && !r;

			n->read_at = old->read_at;
			n->uptime_s = old->uptime_s;
			n->stale = kept ? old->stale : true;
			memcpy(&s->temps[s->n_temps], prev->temps + old->first_temp,
			       old->n_temps * sizeof(*s->temps));
			memcpy(&s->fans[s->n_fans], prev->fans + old->first_fan,
			       old->n_fans * sizeof(*s->fans));
			memcpy(&s->modules[s->n_modules], prev->modules + old->first_module,
			       old->n_modules * sizeof(*s->modules));
			memcpy(&s->lanes[s->n_lanes], prev->lanes + old->first_lane,
			       old->n_lanes * sizeof(*s->lanes));
			n->n_temps = old->n_temps, n->n_fans = old->n_fans;
			n->n_modules = old->n_modules, n->n_lanes = old->n_lanes;
			s->n_temps += old->n_temps, s->n_fans += old->n_fans;
			s->n_modules += old->n_modules, s->n_lanes += old->n_lanes;
			for (size_t i = 0; i < n->n_temps; i++)
				s->temps[n->first_temp + i].stale |= !kept,
				s->temps[n->first_temp + i].events = 0;
			for (size_t i = 0; i < n->n_fans; i++)
				s->fans[n->first_fan + i].stale |= !kept,
				s->fans[n->first_fan + i].events = 0;
			for (size_t i = 0; i < n->n_modules; i++)
				s->modules[n->first_module + i].stale |= !kept,
				s->modules[n->first_module + i].events = 0;
			for (size_t i = 0; i < n->n_lanes; i++)
				s->lanes[n->first_lane + i].events = 0;
		}
		for (size_t i = 0; i < n->n_fans; i++)
			n->fans_failed += s->fans[n->first_fan + i].failed;
		if (n->n_temps && s->temps[n->first_temp].sensor == 0) {
			const struct vitals_temp *t = &s->temps[n->first_temp];

			n->have_asic = true;
			n->asic_temp = t->temp, n->asic_max = t->max, n->asic_hi = t->threshold_hi;
		}
		for (size_t i = 0; i < n->n_modules; i++) {
			const struct vitals_module *m = &s->modules[n->first_module + i];

			n->modules_in += module_in(m->oper_status);
			if (m->have_info && m->info.have_temp && m->info.temp > n->hottest_module)
				n->hottest_module = m->info.temp;
		}
	}
	s->node_rows = (struct mib_rows){.count = s->n_nodes, .array = s->nodes,
					 .stride = sizeof(*s->nodes), .index_of = node_index};
	s->temp_rows = (struct mib_rows){.count = s->n_temps, .array = s->temps,
					 .stride = sizeof(*s->temps), .index_of = temp_index};
	s->fan_rows = (struct mib_rows){.count = s->n_fans, .array = s->fans,
					.stride = sizeof(*s->fans), .index_of = fan_index};
	s->module_rows = (struct mib_rows){.count = s->n_modules, .array = s->modules,
					   .stride = sizeof(*s->modules), .index_of = module_index};
	s->lane_rows = (struct mib_rows){.count = s->n_lanes, .array = s->lanes,
					 .stride = sizeof(*s->lanes), .index_of = lane_index};
	return s;
}
