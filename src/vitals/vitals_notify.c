/* The vitals notifications: after a readings snapshot is published, each
 * row's events (vitals_build() set them: one per change of a condition)
 * go out through the notification path
 *   IBSNMPD-MIB::ibsnmpdTemperatureHigh, ...Normal, ibsnmpdFanFailed,
 *   ...Restored, ibsnmpdModuleRemoved, ...Inserted, ...Faulted,
 *   ibsnmpdModuleRxPowerLow, ...Normal
 * with the rows' columns as IBSNMPD-MIB::ibsnmpdVitals serves them, the
 * node's description and its context. A module taken out is named by what
 * the snapshot before knew of it. */
#include <string.h>

#include "ibsnmpd/mib_oids.h"
#include "ibsnmpd/notify.h"
#include "ibsnmpd/vitals.h"

static const oid node_oid[] = {OID_IBSNMPD_VITALS_NODE_TABLE};
static const oid temp_oid[] = {OID_IBSNMPD_TEMPERATURE_TABLE};
static const oid fan_oid[] = {OID_IBSNMPD_FAN_TABLE};
static const oid module_oid[] = {OID_IBSNMPD_MODULE_TABLE};
static const oid lane_oid[] = {OID_IBSNMPD_MODULE_LANE_TABLE};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

/* ibsnmpdNotifications.N */
enum {
	TEMPERATURE_HIGH = 8, TEMPERATURE_NORMAL, FAN_FAILED, FAN_RESTORED, MODULE_REMOVED,
	MODULE_INSERTED, MODULE_FAULTED, RX_POWER_LOW, RX_POWER_NORMAL
};

static int node_column(const void *row, unsigned column, netsnmp_variable_list *vb)
{
	return vitals_mib_node_column(row, column, vb);
}

static int temp_column(const void *row, unsigned column, netsnmp_variable_list *vb)
{
	return vitals_mib_temp_column(row, column, vb);
}

static int fan_column(const void *row, unsigned column, netsnmp_variable_list *vb)
{
	return vitals_mib_fan_column(row, column, vb);
}

static int module_column(const void *row, unsigned column, netsnmp_variable_list *vb)
{
	return vitals_mib_module_column(row, column, vb);
}

static int lane_column(const void *row, unsigned column, netsnmp_variable_list *vb)
{
	return vitals_mib_lane_column(row, column, vb);
}

/* A notification begun: snmpTrapOID, the node's description */
static netsnmp_variable_list *begin(unsigned number, const struct vitals_node *n)
{
	oid trap[] = {OID_IBSNMPD_NOTIFICATIONS, 0}, index[MIB_GUID_INDEX_LEN];
	netsnmp_variable_list *vl;

	trap[OID_LENGTH(trap) - 1] = number;
	vl = mib_notification_new(trap, OID_LENGTH(trap));
	mib_index_put_guid(index, n->guid);
	if (vl)
		mib_notification_add_column(&vl, node_oid, OID_LENGTH(node_oid),
					    COLUMN_IBSNMPD_VITALS_NODE_DESCRIPTION, index,
					    MIB_GUID_INDEX_LEN, node_column, n);
	return vl;
}

static void finish(netsnmp_variable_list *vl, unsigned number, const struct vitals_node *n)
{
	if (!vl)
		return;
	mib_notification_add_node_context(&vl, n->guid, n->inv->type);
	notify_send(NOTIFY_VITALS, number, n->inv->lid, vl);
}

static void send_temp(const struct vitals_node *n, const struct vitals_temp *t, unsigned number)
{
	static const unsigned columns[] = {
		COLUMN_IBSNMPD_TEMPERATURE_NAME, COLUMN_IBSNMPD_TEMPERATURE_VALUE,
		COLUMN_IBSNMPD_TEMPERATURE_THRESHOLD_HIGH, COLUMN_IBSNMPD_TEMPERATURE_THRESHOLD_LOW};
	netsnmp_variable_list *vl = begin(number, n);
	oid index[MIB_INDEX_MAX];
	unsigned len = mib_index_guid_port(index, t->guid, t->sensor + 1u);

	for (size_t i = 0; vl && i < N_OF(columns); i++)
		mib_notification_add_column(&vl, temp_oid, OID_LENGTH(temp_oid), columns[i], index, len,
					    temp_column, t);
	DEBUGMSGTL(("ibsnmpd:vitals", "temperature %s: %s sensor %u at %d/8 C\n",
		    number == TEMPERATURE_HIGH ? "high" : "normal", n->inv->desc, t->sensor, t->temp));
	finish(vl, number, n);
}

static void send_fan(const struct vitals_node *n, const struct vitals_fan *f, unsigned number)
{
	static const unsigned columns[] = {COLUMN_IBSNMPD_FAN_RPM, COLUMN_IBSNMPD_FAN_STATUS};
	netsnmp_variable_list *vl = begin(number, n);
	oid index[MIB_INDEX_MAX];
	unsigned len = mib_index_guid_port(index, f->guid, f->tacho + 1u);

	for (size_t i = 0; vl && i < N_OF(columns); i++)
		mib_notification_add_column(&vl, fan_oid, OID_LENGTH(fan_oid), columns[i], index, len,
					    fan_column, f);
	finish(vl, number, n);
}

/* The module's columns; id: the row whose identity is told (the one before,
 * for a module taken out) */
static void add_module(netsnmp_variable_list **vl, const struct vitals_module *m,
		       const struct vitals_module *id, bool error)
{
	static const unsigned state[] = {COLUMN_IBSNMPD_MODULE_FIRST_PORT,
					 COLUMN_IBSNMPD_MODULE_PORTS, COLUMN_IBSNMPD_MODULE_STATUS};
	static const unsigned identity[] = {COLUMN_IBSNMPD_MODULE_VENDOR,
					    COLUMN_IBSNMPD_MODULE_PART_NUMBER,
					    COLUMN_IBSNMPD_MODULE_SERIAL};
	oid index[MIB_INDEX_MAX];
	unsigned len = mib_index_guid_port(index, m->guid, m->module + 1u);

	for (size_t i = 0; i < N_OF(state); i++)
		mib_notification_add_column(vl, module_oid, OID_LENGTH(module_oid), state[i], index, len,
					    module_column, m);
	for (size_t i = 0; id && i < N_OF(identity); i++)
		mib_notification_add_column(vl, module_oid, OID_LENGTH(module_oid), identity[i], index,
					    len, module_column, id);
	if (error)
		mib_notification_add_column(vl, module_oid, OID_LENGTH(module_oid),
					    COLUMN_IBSNMPD_MODULE_ERROR_TYPE, index, len,
					    module_column, m);
}

static const struct vitals_module *module_before(const struct vitals_snapshot *before,
						 const struct vitals_module *m)
{
	const struct vitals_node *n = vitals_find_node(before, m->guid);

	for (uint32_t i = 0; n && i < n->n_modules; i++)
		if (before->modules[n->first_module + i].module == m->module)
			return &before->modules[n->first_module + i];
	return NULL;
}

static void send_module(const struct vitals_node *n, const struct vitals_module *m,
			const struct vitals_snapshot *before, unsigned number)
{
	netsnmp_variable_list *vl = begin(number, n);
	const struct vitals_module *id = number == MODULE_REMOVED ? module_before(before, m) : m;

	if (vl)
		add_module(&vl, m, id, number == MODULE_FAULTED);
	DEBUGMSGTL(("ibsnmpd:vitals", "module %u of %s: event %u\n", m->module, n->inv->desc,
		    number));
	finish(vl, number, n);
}

static void send_lane(const struct vitals_node *n, const struct vitals_lane *l,
		      const struct vitals_snapshot *s, unsigned number)
{
	static const unsigned columns[] = {COLUMN_IBSNMPD_MODULE_LANE_MODULE,
					   COLUMN_IBSNMPD_MODULE_LANE_RX_POWER};
	static const unsigned module_columns[] = {
		COLUMN_IBSNMPD_MODULE_RX_POWER_LOW_ALARM, COLUMN_IBSNMPD_MODULE_VENDOR,
		COLUMN_IBSNMPD_MODULE_PART_NUMBER, COLUMN_IBSNMPD_MODULE_SERIAL};
	netsnmp_variable_list *vl = begin(number, n);
	oid index[MIB_INDEX_MAX];
	unsigned len = mib_index_guid_port(index, l->guid, l->port);
	const struct vitals_module *m = l->module < n->n_modules ?
		&s->modules[n->first_module + l->module] : NULL;

	index[len++] = l->lane;
	for (size_t i = 0; vl && i < N_OF(columns); i++)
		mib_notification_add_column(&vl, lane_oid, OID_LENGTH(lane_oid), columns[i], index, len,
					    lane_column, l);
	len = mib_index_guid_port(index, l->guid, l->module + 1u);
	for (size_t i = 0; vl && m && i < N_OF(module_columns); i++)
		mib_notification_add_column(&vl, module_oid, OID_LENGTH(module_oid), module_columns[i],
					    index, len, module_column, m);
	finish(vl, number, n);
}

void vitals_notify_published(struct cache_group *g, const void *before, const void *after,
			     void *arg)
{
	const struct vitals_snapshot *s = after, *b = before;

	(void)g;
	(void)arg;
	for (size_t k = 0; s && k < s->n_nodes; k++) {
		const struct vitals_node *n = &s->nodes[k];

		for (uint32_t i = n->first_temp; i < n->first_temp + n->n_temps; i++)
			if (s->temps[i].events)
				send_temp(n, &s->temps[i], s->temps[i].events & VITALS_EV_TEMP_HIGH ?
					  TEMPERATURE_HIGH : TEMPERATURE_NORMAL);
		for (uint32_t i = n->first_fan; i < n->first_fan + n->n_fans; i++)
			if (s->fans[i].events)
				send_fan(n, &s->fans[i], s->fans[i].events & VITALS_EV_FAN_FAILED ?
					 FAN_FAILED : FAN_RESTORED);
		for (uint32_t i = n->first_module; i < n->first_module + n->n_modules; i++) {
			unsigned ev = s->modules[i].events;

			if (ev)
				send_module(n, &s->modules[i], b,
					    ev & VITALS_EV_MODULE_REMOVED ? MODULE_REMOVED :
					    ev & VITALS_EV_MODULE_FAULTED ? MODULE_FAULTED :
					    MODULE_INSERTED);
		}
		for (uint32_t i = n->first_lane; i < n->first_lane + n->n_lanes; i++)
			if (s->lanes[i].events)
				send_lane(n, &s->lanes[i], s, s->lanes[i].events & VITALS_EV_RX_LOW ?
					  RX_POWER_LOW : RX_POWER_NORMAL);
	}
}
