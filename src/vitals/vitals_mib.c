/* The hardware of every node, in the default context:
 *   IBSNMPD-MIB::ibsnmpdVitalsNodeTable    per node: status, inventory,
 *                                          the ASIC, the fans' and modules'
 *                                          summary
 *   IBSNMPD-MIB::ibsnmpdTemperatureTable   per MTMP sensor
 *   IBSNMPD-MIB::ibsnmpdFanTable           per tachometer
 *   IBSNMPD-MIB::ibsnmpdModuleTable        per cage and its module
 *   IBSNMPD-MIB::ibsnmpdModuleLaneTable    per lane of a port's module
 * Each column is a register field of the readings snapshot's row
 * (vitals_build.c), in the unit the MIB names; the notifications
 * (vitals_notify.c) carry the same. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ibsnmpd/mib_oids.h"
#include "ibsnmpd/vitals.h"

static const oid node_oid[] = {OID_IBSNMPD_VITALS_NODE_TABLE};
static const oid temp_oid[] = {OID_IBSNMPD_TEMPERATURE_TABLE};
static const oid fan_oid[] = {OID_IBSNMPD_FAN_TABLE};
static const oid module_oid[] = {OID_IBSNMPD_MODULE_TABLE};
static const oid lane_oid[] = {OID_IBSNMPD_MODULE_LANE_TABLE};

static void set_text(netsnmp_variable_list *vb, const char *s)
{
	mib_set_octets(vb, s, strlen(s));
}

static const char *const register_names[VITALS_R_COUNT] = {
	"MGIR", "MSGI", "MTCAP", "MTMP", "MFCR", "MFSM", "FORE", "MGPIR", "PMAOS", "PMLP", "PDDR",
	"MCIA"};

int vitals_mib_node_column(const struct vitals_node *n, unsigned column, netsnmp_variable_list *vb)
{
	const struct vitals_inv_node *iv = n->inv;
	char text[128];

	switch (column) {
	case COLUMN_IBSNMPD_VITALS_NODE_DESCRIPTION: set_text(vb, iv->desc ? iv->desc : ""); return 0;
	case COLUMN_IBSNMPD_VITALS_NODE_STATUS: mib_set_int(vb, n->status); return 0;
	case COLUMN_IBSNMPD_VITALS_NODE_LAST_READ:
		mib_set_unsigned(vb, ASN_UNSIGNED, (unsigned long)n->read_at);
		return 0;
	case COLUMN_IBSNMPD_VITALS_NODE_STALE: mib_set_int(vb, mib_truth(n->stale)); return 0;
	case COLUMN_IBSNMPD_VITALS_NODE_FANS: mib_set_unsigned(vb, ASN_GAUGE, n->n_fans); return 0;
	case COLUMN_IBSNMPD_VITALS_NODE_FANS_FAILED:
		mib_set_unsigned(vb, ASN_GAUGE, n->fans_failed);
		return 0;
	case COLUMN_IBSNMPD_VITALS_NODE_MISSING: {
		size_t len = 0;

		text[0] = '\0';
		for (unsigned r = 0; r < VITALS_R_COUNT; r++)
			if (iv->missing >> r & 1)
				len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s",
							len ? " " : "", register_names[r]);
		set_text(vb, text);
		return 0;
	}
	default:
		break;
	}
	if (iv->status != VITALS_READ)
		return -1; /* what the inventory did not read */
	switch (column) {
	case COLUMN_IBSNMPD_VITALS_NODE_FIRMWARE:
		snprintf(text, sizeof(text), "%u.%u.%u", iv->mgir.fw[0], iv->mgir.fw[1], iv->mgir.fw[2]);
		set_text(vb, text);
		return 0;
	case COLUMN_IBSNMPD_VITALS_NODE_PSID: set_text(vb, iv->mgir.psid); return 0;
	case COLUMN_IBSNMPD_VITALS_NODE_HW_REVISION:
		mib_set_unsigned(vb, ASN_UNSIGNED, iv->mgir.hw_revision);
		return 0;
	case COLUMN_IBSNMPD_VITALS_NODE_UPTIME: {
		time_t now = time(NULL);
		unsigned long up = n->read_at ? n->uptime_s : 0;

		if (n->read_at && !n->stale && now > n->read_at)
			up += (unsigned long)(now - n->read_at);
		mib_set_unsigned(vb, ASN_UNSIGNED, up > 0xffffffffUL ? 0xffffffffUL : up);
		return 0;
	}
	case COLUMN_IBSNMPD_VITALS_NODE_SERIAL: set_text(vb, iv->have_msgi ? iv->msgi.serial : ""); return 0;
	case COLUMN_IBSNMPD_VITALS_NODE_PART_NUMBER:
		set_text(vb, iv->have_msgi ? iv->msgi.part : "");
		return 0;
	case COLUMN_IBSNMPD_VITALS_NODE_REVISION:
		set_text(vb, iv->have_msgi ? iv->msgi.revision : "");
		return 0;
	case COLUMN_IBSNMPD_VITALS_NODE_PRODUCT_NAME:
		set_text(vb, iv->have_msgi ? iv->msgi.product : "");
		return 0;
	case COLUMN_IBSNMPD_VITALS_NODE_MODULES: mib_set_unsigned(vb, ASN_GAUGE, n->n_modules); return 0;
	case COLUMN_IBSNMPD_VITALS_NODE_MODULES_IN: mib_set_unsigned(vb, ASN_GAUGE, n->modules_in); return 0;
	case COLUMN_IBSNMPD_VITALS_NODE_ASIC_TEMP:
		if (!n->have_asic)
			return -1;
		mib_set_int(vb, vitals_tenths_from_eighths(n->asic_temp));
		return 0;
	case COLUMN_IBSNMPD_VITALS_NODE_ASIC_TEMP_MAX:
		if (!n->have_asic)
			return -1;
		mib_set_int(vb, vitals_tenths_from_eighths(n->asic_max));
		return 0;
	case COLUMN_IBSNMPD_VITALS_NODE_ASIC_TEMP_HIGH:
		if (!n->have_asic)
			return -1;
		mib_set_int(vb, vitals_tenths_from_eighths(n->asic_hi));
		return 0;
	case COLUMN_IBSNMPD_VITALS_NODE_HOTTEST_MODULE:
		if (n->hottest_module == INT16_MIN)
			return -1;
		mib_set_int(vb, vitals_tenths_from_256ths((int16_t)n->hottest_module));
		return 0;
	default:
		return -1;
	}
}

int vitals_mib_temp_column(const struct vitals_temp *t, unsigned column, netsnmp_variable_list *vb)
{
	switch (column) {
	case COLUMN_IBSNMPD_TEMPERATURE_NAME: set_text(vb, t->name); return 0;
	case COLUMN_IBSNMPD_TEMPERATURE_VALUE: mib_set_int(vb, vitals_tenths_from_eighths(t->temp)); return 0;
	case COLUMN_IBSNMPD_TEMPERATURE_MAX: mib_set_int(vb, vitals_tenths_from_eighths(t->max)); return 0;
	case COLUMN_IBSNMPD_TEMPERATURE_THRESHOLD_HIGH:
		mib_set_int(vb, vitals_tenths_from_eighths(t->threshold_hi));
		return 0;
	case COLUMN_IBSNMPD_TEMPERATURE_THRESHOLD_LOW:
		mib_set_int(vb, vitals_tenths_from_eighths(t->threshold_lo));
		return 0;
	case COLUMN_IBSNMPD_TEMPERATURE_OVER_THRESHOLD: mib_set_int(vb, mib_truth(t->high)); return 0;
	case COLUMN_IBSNMPD_TEMPERATURE_STALE: mib_set_int(vb, mib_truth(t->stale)); return 0;
	default: return -1;
	}
}

int vitals_mib_fan_column(const struct vitals_fan *f, unsigned column, netsnmp_variable_list *vb)
{
	switch (column) {
	case COLUMN_IBSNMPD_FAN_RPM: mib_set_unsigned(vb, ASN_GAUGE, f->rpm); return 0;
	case COLUMN_IBSNMPD_FAN_STATUS: mib_set_int(vb, f->under ? 2 : f->over ? 3 : 1); return 0;
	case COLUMN_IBSNMPD_FAN_FAULT: mib_set_int(vb, mib_truth(f->failed)); return 0;
	case COLUMN_IBSNMPD_FAN_STALE: mib_set_int(vb, mib_truth(f->stale)); return 0;
	default: return -1;
	}
}

/* PMAOS oper_status as ibsnmpdModuleStatus */
static int module_status(unsigned oper)
{
	switch (oper) {
	case VITALS_MODULE_PLUGGED: return 1;
	case VITALS_MODULE_UNPLUGGED: return 2;
	case VITALS_MODULE_ERROR: return 3;
	case VITALS_MODULE_DISABLED: return 4;
	case VITALS_MODULE_INITIALIZING: return 5;
	default: return 6;
	}
}

static void set_milli_volts(netsnmp_variable_list *vb, unsigned hundred_uv)
{
	mib_set_unsigned(vb, ASN_UNSIGNED, (hundred_uv + 5) / 10);
}

static void set_micro_amps(netsnmp_variable_list *vb, unsigned two_ua)
{
	mib_set_unsigned(vb, ASN_UNSIGNED, 2u * two_ua);
}

int vitals_mib_module_column(const struct vitals_module *m, unsigned column,
			     netsnmp_variable_list *vb)
{
	const struct vitals_module_info *i = &m->info;
	char text[32];

	switch (column) {
	case COLUMN_IBSNMPD_MODULE_FIRST_PORT: mib_set_unsigned(vb, ASN_UNSIGNED, m->first_port); return 0;
	case COLUMN_IBSNMPD_MODULE_PORTS: mib_set_unsigned(vb, ASN_UNSIGNED, m->n_ports); return 0;
	case COLUMN_IBSNMPD_MODULE_STATUS: mib_set_int(vb, module_status(m->oper_status)); return 0;
	case COLUMN_IBSNMPD_MODULE_ERROR_TYPE:
		mib_set_int(vb, m->oper_status == VITALS_MODULE_ERROR ? m->error_type + 2 : 1);
		return 0;
	case COLUMN_IBSNMPD_MODULE_SOURCE:
		mib_set_int(vb, !m->have_info ? 3 : m->from_eeprom ? 2 : 1);
		return 0;
	case COLUMN_IBSNMPD_MODULE_STALE: mib_set_int(vb, mib_truth(m->stale)); return 0;
	default:
		break;
	}
	if (!m->have_info)
		return -1;
	switch (column) {
	case COLUMN_IBSNMPD_MODULE_IDENTIFIER: mib_set_int(vb, i->identifier <= 11 ? i->identifier + 1 : 13); return 0;
	case COLUMN_IBSNMPD_MODULE_TYPE: mib_set_int(vb, i->cable_type <= 4 ? i->cable_type + 1 : 6); return 0;
	case COLUMN_IBSNMPD_MODULE_VENDOR: set_text(vb, i->vendor); return 0;
	case COLUMN_IBSNMPD_MODULE_PART_NUMBER: set_text(vb, i->part); return 0;
	case COLUMN_IBSNMPD_MODULE_SERIAL: set_text(vb, i->serial); return 0;
	case COLUMN_IBSNMPD_MODULE_REVISION: set_text(vb, i->revision); return 0;
	case COLUMN_IBSNMPD_MODULE_FIRMWARE:
		vitals_module_fw_text(i->fw_version, text);
		set_text(vb, text);
		return 0;
	case COLUMN_IBSNMPD_MODULE_DATE_CODE: set_text(vb, i->date); return 0;
	case COLUMN_IBSNMPD_MODULE_LENGTH: mib_set_unsigned(vb, ASN_UNSIGNED, i->length_dm); return 0;
	case COLUMN_IBSNMPD_MODULE_TEMPERATURE:
		if (!i->have_temp)
			return -1;
		mib_set_int(vb, vitals_tenths_from_256ths(i->temp));
		return 0;
	case COLUMN_IBSNMPD_MODULE_VOLTAGE:
		if (!i->have_voltage)
			return -1;
		set_milli_volts(vb, i->voltage);
		return 0;
	default:
		break;
	}
	if (!i->have_thresholds)
		return -1;
	switch (column) {
	case COLUMN_IBSNMPD_MODULE_TEMP_HIGH_ALARM: mib_set_int(vb, vitals_tenths_from_256ths(i->temp_hi)); return 0;
	case COLUMN_IBSNMPD_MODULE_TEMP_LOW_ALARM: mib_set_int(vb, vitals_tenths_from_256ths(i->temp_lo)); return 0;
	case COLUMN_IBSNMPD_MODULE_VOLTAGE_HIGH_ALARM: set_milli_volts(vb, i->volt_hi); return 0;
	case COLUMN_IBSNMPD_MODULE_VOLTAGE_LOW_ALARM: set_milli_volts(vb, i->volt_lo); return 0;
	case COLUMN_IBSNMPD_MODULE_RX_POWER_HIGH_ALARM: mib_set_int(vb, vitals_uw_to_centi_dbm(i->rx_hi_uw)); return 0;
	case COLUMN_IBSNMPD_MODULE_RX_POWER_LOW_ALARM: mib_set_int(vb, vitals_uw_to_centi_dbm(i->rx_lo_uw)); return 0;
	case COLUMN_IBSNMPD_MODULE_TX_POWER_HIGH_ALARM: mib_set_int(vb, vitals_uw_to_centi_dbm(i->tx_hi_uw)); return 0;
	case COLUMN_IBSNMPD_MODULE_TX_POWER_LOW_ALARM: mib_set_int(vb, vitals_uw_to_centi_dbm(i->tx_lo_uw)); return 0;
	case COLUMN_IBSNMPD_MODULE_BIAS_HIGH_ALARM: set_micro_amps(vb, i->bias_hi); return 0;
	case COLUMN_IBSNMPD_MODULE_BIAS_LOW_ALARM: set_micro_amps(vb, i->bias_lo); return 0;
	default: return -1;
	}
}

int vitals_mib_lane_column(const struct vitals_lane *l, unsigned column, netsnmp_variable_list *vb)
{
	switch (column) {
	case COLUMN_IBSNMPD_MODULE_LANE_MODULE: mib_set_unsigned(vb, ASN_UNSIGNED, l->module + 1u); return 0;
	case COLUMN_IBSNMPD_MODULE_LANE_RX_POWER: mib_set_int(vb, vitals_uw_to_centi_dbm(l->rx_uw)); return 0;
	case COLUMN_IBSNMPD_MODULE_LANE_RX_POWER_MICRO_WATTS:
		mib_set_unsigned(vb, ASN_GAUGE, l->rx_uw);
		return 0;
	case COLUMN_IBSNMPD_MODULE_LANE_TX_POWER: mib_set_int(vb, vitals_uw_to_centi_dbm(l->tx_uw)); return 0;
	case COLUMN_IBSNMPD_MODULE_LANE_TX_POWER_MICRO_WATTS:
		mib_set_unsigned(vb, ASN_GAUGE, l->tx_uw);
		return 0;
	case COLUMN_IBSNMPD_MODULE_LANE_TX_BIAS: mib_set_unsigned(vb, ASN_GAUGE, 2u * l->bias); return 0;
	case COLUMN_IBSNMPD_MODULE_LANE_RX_POWER_LOW: mib_set_int(vb, mib_truth(l->rx_low)); return 0;
	default: return -1;
	}
}

/* ---- the tables ---- */

#define ROWS_OF(fn, field)                                                                  \
	static const struct mib_rows *fn(const void *ctx, const void **snap)                 \
	{                                                                                   \
		const struct vitals_snapshot *s = cache_snapshot(ctx);                       \
                                                                                            \
		*snap = s;                                                                  \
		return s ? &s->field : NULL;                                                \
	}

ROWS_OF(node_rows, node_rows)
ROWS_OF(temp_rows, temp_rows)
ROWS_OF(fan_rows, fan_rows)
ROWS_OF(module_rows, module_rows)
ROWS_OF(lane_rows, lane_rows)

static int node_value(const void *row, unsigned column, netsnmp_variable_list *vb, const void *snap)
{
	(void)snap;
	return vitals_mib_node_column(row, column, vb);
}

static int temp_value(const void *row, unsigned column, netsnmp_variable_list *vb, const void *snap)
{
	(void)snap;
	return vitals_mib_temp_column(row, column, vb);
}

static int fan_value(const void *row, unsigned column, netsnmp_variable_list *vb, const void *snap)
{
	(void)snap;
	return vitals_mib_fan_column(row, column, vb);
}

static int module_value(const void *row, unsigned column, netsnmp_variable_list *vb,
			const void *snap)
{
	(void)snap;
	return vitals_mib_module_column(row, column, vb);
}

static int lane_value(const void *row, unsigned column, netsnmp_variable_list *vb, const void *snap)
{
	(void)snap;
	return vitals_mib_lane_column(row, column, vb);
}

static const struct mib_table templates[VITALS_MIB_TABLES] = {
	{.name = "ibsnmpdVitalsNodeTable", .table_oid = node_oid, .table_oid_len = OID_LENGTH(node_oid),
	 .first_column = COLUMN_IBSNMPD_VITALS_NODE_DESCRIPTION,
	 .last_column = COLUMN_IBSNMPD_VITALS_NODE_HW_REVISION, .rows = node_rows,
	 .value = node_value},
	{.name = "ibsnmpdTemperatureTable", .table_oid = temp_oid, .table_oid_len = OID_LENGTH(temp_oid),
	 .first_column = COLUMN_IBSNMPD_TEMPERATURE_NAME,
	 .last_column = COLUMN_IBSNMPD_TEMPERATURE_STALE, .rows = temp_rows, .value = temp_value},
	{.name = "ibsnmpdFanTable", .table_oid = fan_oid, .table_oid_len = OID_LENGTH(fan_oid),
	 .first_column = COLUMN_IBSNMPD_FAN_RPM, .last_column = COLUMN_IBSNMPD_FAN_STALE,
	 .rows = fan_rows, .value = fan_value},
	{.name = "ibsnmpdModuleTable", .table_oid = module_oid,
	 .table_oid_len = OID_LENGTH(module_oid), .first_column = COLUMN_IBSNMPD_MODULE_FIRST_PORT,
	 .last_column = COLUMN_IBSNMPD_MODULE_STALE, .rows = module_rows, .value = module_value},
	{.name = "ibsnmpdModuleLaneTable", .table_oid = lane_oid,
	 .table_oid_len = OID_LENGTH(lane_oid), .first_column = COLUMN_IBSNMPD_MODULE_LANE_MODULE,
	 .last_column = COLUMN_IBSNMPD_MODULE_LANE_RX_POWER_LOW, .rows = lane_rows,
	 .value = lane_value},
};

int vitals_mib_register(struct vitals_mib *m, struct vitals_area *a, const char *context)
{
	memset(m, 0, sizeof(*m));
	m->area = a;
	for (int i = 0; i < VITALS_MIB_TABLES; i++) {
		m->tables[i] = templates[i];
		m->tables[i].ctx = &a->readings;
		m->tables[i].context = context;
		if (mib_table_register(&m->tables[i]))
			return -1;
	}
	return 0;
}

void vitals_mib_unregister(struct vitals_mib *m)
{
	for (int i = 0; i < VITALS_MIB_TABLES; i++)
		mib_table_unregister(&m->tables[i]);
}
