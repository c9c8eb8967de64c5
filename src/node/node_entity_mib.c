/* ENTITY-MIB (RFC 6933, entityMIB mib-2 47) and ENTITY-SENSOR-MIB
 * (RFC 3433, entitySensorMIB mib-2 99) in a node's context: what an NMS
 * lists as the device's hardware. The node is a chassis (entPhysicalIndex
 * 1) holding its ports (1000 + port, each mapped to its ifIndex); where the
 * vitals are read (NVIDIA's nodes), also its temperature sensors, its fans
 * and their speed sensors, and in each port the module plugged in, with
 * the module's temperature, voltage and per-lane optics as sensors (node.h
 * says how an entPhysicalIndex names each). From the directory's entry and
 * the vitals' readings it was built with: no MAD of its own.
 *
 * The chassis: NodeInfo gives the vendor (an IEEE OUI), the device ID and
 * its revision; the vitals (MGIR, MSGI) its serial number, part number,
 * revision and firmware. A module: PDDR's (or the EEPROM's) vendor, part
 * number, serial, revision, firmware and date code. What is unknown is
 * served empty, as RFC 6933 says. The modules' OIDs are the IETF's: facts
 * written here. */
#include <stdio.h>
#include <string.h>

#include "ibsnmpd/mib_oids.h"
#include "ibsnmpd/node.h"
#include "ibsnmpd/vitals.h"

#define ENTITY_OID 1, 3, 6, 1, 2, 1, 47 /* ENTITY-MIB::entityMIB */
static const oid physical_oid[] = {ENTITY_OID, 1, 1, 1}; /* entPhysicalTable */
static const oid alias_oid[] = {ENTITY_OID, 1, 3, 2};    /* entAliasMappingTable */
static const oid contains_oid[] = {ENTITY_OID, 1, 3, 3}; /* entPhysicalContainsTable */
static const oid general_oid[] = {ENTITY_OID, 1, 4};     /* entityGeneral */
/* ENTITY-SENSOR-MIB::entPhySensorTable */
static const oid sensor_oid[] = {1, 3, 6, 1, 2, 1, 99, 1, 1};
static const oid if_index_oid[] = {1, 3, 6, 1, 2, 1, 2, 2, 1, 1}; /* IF-MIB::ifIndex */
static const oid zero_dot_zero[] = {0, 0};
static const oid product_oid[][OID_LENGTH((oid[]){OID_IBSNMPD_SWITCH_NODE})] = {
	[0] = {OID_IBSNMPD_CHANNEL_ADAPTER_NODE},
	[1] = {OID_IBSNMPD_SWITCH_NODE},
	[2] = {OID_IBSNMPD_ROUTER_NODE},
};

enum { PHYS_DESCR = 2, PHYS_VENDOR_TYPE, PHYS_CONTAINED_IN, PHYS_CLASS, PHYS_PARENT_REL_POS,
       PHYS_NAME, PHYS_HARDWARE_REV, PHYS_FIRMWARE_REV, PHYS_SOFTWARE_REV, PHYS_SERIAL_NUM,
       PHYS_MFG_NAME, PHYS_MODEL_NAME, PHYS_ALIAS, PHYS_ASSET_ID, PHYS_IS_FRU, PHYS_MFG_DATE,
       PHYS_URIS };
#define ALIAS_MAPPING_IDENTIFIER 2
#define CONTAINS_CHILD_INDEX 1
#define LAST_CHANGE_TIME 1
enum { SENSOR_TYPE = 1, SENSOR_SCALE, SENSOR_PRECISION, SENSOR_VALUE, SENSOR_OPER_STATUS,
       SENSOR_UNITS_DISPLAY, SENSOR_VALUE_TIME_STAMP, SENSOR_VALUE_UPDATE_RATE };

/* PhysicalClass */
#define CLASS_CHASSIS 3
#define CLASS_FAN 7
#define CLASS_SENSOR 8
#define CLASS_MODULE 9
#define CLASS_PORT 10

/* EntitySensorDataType, EntitySensorDataScale, EntitySensorStatus */
#define SENSOR_AMPERES 5
#define SENSOR_WATTS 6
#define SENSOR_VOLTS_DC 4
#define SENSOR_CELSIUS 8
#define SENSOR_RPM 10
#define SCALE_MICRO 7
#define SCALE_UNITS 9
#define STATUS_OK 1
#define STATUS_UNAVAILABLE 2

static const void *entry_of(const void *ctx)
{
	return node_context_entry(ctx);
}

static void set_text(netsnmp_variable_list *vb, const char *text)
{
	mib_set_octets(vb, text, strlen(text));
}

/* ---- the hardware an entity stands for ------------------------------------------ */

struct hw {
	const struct vitals_snapshot *s;
	const struct vitals_node *v;
	const struct vitals_module *module;
	const struct vitals_temp *temp;
	const struct vitals_fan *fan;
	const struct vitals_lane *lane;
	unsigned kind;             /* a module sensor's K */
};

static const struct vitals_module *hw_module(const struct hw *h, unsigned m)
{
	return m < h->v->n_modules && h->s->modules[h->v->first_module + m].module == m
		? &h->s->modules[h->v->first_module + m] : NULL;
}

/* The row of the vitals an entity of e stands for; false if none (a row
 * the directory's vitals no longer have) */
static bool hw_of(const struct node_entry *e, uint32_t index, struct hw *h)
{
	memset(h, 0, sizeof(*h));
	h->s = e->dir->vitals;
	h->v = e->vitals;
	if (!h->s || !h->v)
		return false;
	if (index >= NODE_ENTITY_MODULE_SENSOR_BASE) {
		unsigned m = (index - NODE_ENTITY_MODULE_SENSOR_BASE) / 100, lane;

		h->kind = (index - NODE_ENTITY_MODULE_SENSOR_BASE) % 100;
		if (!(h->module = hw_module(h, m)))
			return false;
		if (h->kind < NODE_ENTITY_SENSOR_RX)
			return true;
		lane = h->kind % 10;
		for (uint32_t i = 0; i < h->v->n_lanes; i++) {
			const struct vitals_lane *l = &h->s->lanes[h->v->first_lane + i];

			if (l->module == m && l->port >= h->module->first_port &&
			    (l->port - h->module->first_port) * 4u + l->lane == lane)
				h->lane = l;
		}
		return h->lane != NULL;
	}
	if (index > NODE_ENTITY_FAN_BASE) {
		unsigned t = index - (index > NODE_ENTITY_TACHO_BASE ? NODE_ENTITY_TACHO_BASE
								      : NODE_ENTITY_FAN_BASE) - 1;

		for (uint32_t i = 0; i < h->v->n_fans; i++)
			if (h->s->fans[h->v->first_fan + i].tacho == t)
				h->fan = &h->s->fans[h->v->first_fan + i];
		return h->fan != NULL;
	}
	if (index > NODE_ENTITY_TEMP_BASE) {
		for (uint32_t i = 0; i < h->v->n_temps; i++)
			if (h->s->temps[h->v->first_temp + i].sensor == index - NODE_ENTITY_TEMP_BASE - 1)
				h->temp = &h->s->temps[h->v->first_temp + i];
		return h->temp != NULL;
	}
	h->module = hw_module(h, index - NODE_ENTITY_MODULE_BASE - 1);
	return h->module != NULL;
}

static const char *lane_kind_name(unsigned kind)
{
	return kind >= NODE_ENTITY_SENSOR_BIAS ? "Tx bias" :
	       kind >= NODE_ENTITY_SENSOR_TX ? "Tx power" : "Rx power";
}

/* entPhysicalName of a hardware entity */
static void hw_name(const struct node_entry *e, uint32_t index, const struct hw *h, char *out,
		    size_t len)
{
	const char *node = node_sys_name(e);

	if (h->module && index < NODE_ENTITY_TEMP_BASE)
		snprintf(out, len, "%s/module %u", node, h->module->module + 1u);
	else if (h->module && h->kind == NODE_ENTITY_SENSOR_TEMP)
		snprintf(out, len, "%s/module %u temperature", node, h->module->module + 1u);
	else if (h->module && h->kind == NODE_ENTITY_SENSOR_VOLTAGE)
		snprintf(out, len, "%s/module %u voltage", node, h->module->module + 1u);
	else if (h->module)
		snprintf(out, len, "%s/module %u lane %u %s", node, h->module->module + 1u,
			 h->kind % 10, lane_kind_name(h->kind));
	else if (h->temp)
		snprintf(out, len, "%s/temperature %s", node, h->temp->name[0] ? h->temp->name :
			 h->temp->sensor ? "ambient" : "ASIC");
	else if (h->fan && index > NODE_ENTITY_TACHO_BASE)
		snprintf(out, len, "%s/fan %u speed", node, h->fan->tacho + 1u);
	else if (h->fan)
		snprintf(out, len, "%s/fan %u", node, h->fan->tacho + 1u);
	else
		snprintf(out, len, "%s/%u", node, index);
}

/* entPhysicalDescr of a hardware entity: what it is, for people */
static void hw_descr(const struct node_entry *e, uint32_t index, const struct hw *h, char *out,
		     size_t len)
{
	const struct vitals_module_info *i = h->module ? &h->module->info : NULL;

	if (i && index < NODE_ENTITY_TEMP_BASE && h->module->n_ports > 1)
		snprintf(out, len, "%s %s in the cage of ports %u-%u", i->vendor, i->part,
			 h->module->first_port, h->module->first_port + h->module->n_ports - 1u);
	else if (i && index < NODE_ENTITY_TEMP_BASE)
		snprintf(out, len, "%s %s in the cage of port %u", i->vendor, i->part,
			 h->module->first_port);
	else if (i && h->kind == NODE_ENTITY_SENSOR_TEMP)
		snprintf(out, len, "module %u temperature", h->module->module + 1u);
	else if (i && h->kind == NODE_ENTITY_SENSOR_VOLTAGE)
		snprintf(out, len, "module %u supply voltage", h->module->module + 1u);
	else if (i)
		snprintf(out, len, "module %u lane %u %s (port %u lane %u)", h->module->module + 1u,
			 h->kind % 10, lane_kind_name(h->kind), h->lane->port, h->lane->lane);
	else if (h->temp)
		snprintf(out, len, "%s temperature sensor %u", h->temp->sensor ? "ambient" : "ASIC",
			 h->temp->sensor);
	else if (h->fan && index > NODE_ENTITY_TACHO_BASE)
		snprintf(out, len, "fan tachometer %u", h->fan->tacho + 1u);
	else if (h->fan)
		snprintf(out, len, "fan %u", h->fan->tacho + 1u);
	else
		hw_name(e, index, h, out, len);
}

/* entPhysicalMfgDate of a module from its date code (YYMMDD): a
 * DateAndTime of 8 octets; '0000000000000000'H unknown */
static void mfg_date(netsnmp_variable_list *vb, const struct vitals_module *m)
{
	uint8_t d[8] = {0};

	if (m && m->have_info && m->info.date[0]) {
		const char *c = m->info.date;
		unsigned year = 2000 + (unsigned)((c[0] - '0') * 10 + (c[1] - '0'));

		d[0] = (uint8_t)(year >> 8);
		d[1] = (uint8_t)year;
		d[2] = (uint8_t)((c[2] - '0') * 10 + (c[3] - '0'));
		d[3] = (uint8_t)((c[4] - '0') * 10 + (c[5] - '0'));
	}
	mib_set_octets(vb, d, sizeof(d));
}

static int hw_value(const struct node_entry *e, uint32_t index, unsigned column,
		    netsnmp_variable_list *vb)
{
	const struct vitals_module_info *i;
	struct hw h;
	char text[160];
	bool module_row;

	if (!hw_of(e, index, &h))
		return -1;
	module_row = h.module && index < NODE_ENTITY_TEMP_BASE;
	i = module_row ? &h.module->info : NULL;
	switch (column) {
	case PHYS_DESCR: hw_descr(e, index, &h, text, sizeof(text)); set_text(vb, text); return 0;
	case PHYS_VENDOR_TYPE:
		snmp_set_var_typed_value(vb, ASN_OBJECT_ID, zero_dot_zero, sizeof(zero_dot_zero));
		return 0;
	case PHYS_CONTAINED_IN: mib_set_int(vb, node_entity_parent(e, index)); return 0;
	case PHYS_CLASS:
		mib_set_int(vb, module_row ? CLASS_MODULE :
				(h.fan && index < NODE_ENTITY_TACHO_BASE) ? CLASS_FAN : CLASS_SENSOR);
		return 0;
	case PHYS_PARENT_REL_POS:
		/* its place among its container's children of its kind */
		mib_set_int(vb, module_row ? 1 : h.module ? (int)h.kind : h.temp ? h.temp->sensor + 1 :
				h.fan && index < NODE_ENTITY_TACHO_BASE ? h.fan->tacho + 1 : 1);
		return 0;
	case PHYS_NAME: hw_name(e, index, &h, text, sizeof(text)); set_text(vb, text); return 0;
	case PHYS_HARDWARE_REV: set_text(vb, i ? i->revision : ""); return 0;
	case PHYS_FIRMWARE_REV:
		vitals_module_fw_text(i ? i->fw_version : 0, text);
		set_text(vb, text);
		return 0;
	case PHYS_SERIAL_NUM: set_text(vb, i ? i->serial : ""); return 0;
	case PHYS_MFG_NAME: set_text(vb, i ? i->vendor : ""); return 0;
	case PHYS_MODEL_NAME: set_text(vb, i ? i->part : ""); return 0;
	case PHYS_IS_FRU:
		/* a module and a fan are replaced in the field; a sensor is not */
		mib_set_int(vb, mib_truth(module_row || (h.fan && index < NODE_ENTITY_TACHO_BASE)));
		return 0;
	case PHYS_MFG_DATE: mfg_date(vb, module_row ? h.module : NULL); return 0;
	default: return -1;
	}
}

/* ---- entPhysicalTable: the chassis, its ports, its hardware ---------------------- */

static unsigned physical_index(const void *data, oid *index)
{
	index[0] = ((const struct node_entity *)data)->index;
	return 1;
}

static const struct mib_rows *physical_rows(const void *ctx, const void **snap)
{
	struct node_context_regs *r = (struct node_context_regs *)ctx; /* the header's */
	const struct node_entry *e = node_context_entry(ctx);

	*snap = e;
	return e ? node_rows_at(&r->entity_rows, e->dir->entities + e->first_entity, e->n_entities,
				sizeof(struct node_entity), physical_index) : NULL;
}

/* The inventory the vitals read of a node, NULL if none */
static const struct vitals_inv_node *inventory_of(const struct node_entry *e)
{
	return e->vitals && e->vitals->inv->status == VITALS_READ ? e->vitals->inv : NULL;
}

static int chassis_value(const struct node_entry *e, unsigned column, netsnmp_variable_list *vb)
{
	const struct vitals_inv_node *iv = inventory_of(e);
	char text[256];

	switch (column) {
	case PHYS_DESCR: node_sys_descr(e, text, sizeof(text)); set_text(vb, text); return 0;
	case PHYS_VENDOR_TYPE:
		if (e->type >= 1 && e->type <= 3)
			snmp_set_var_typed_value(vb, ASN_OBJECT_ID, product_oid[e->type - 1],
						 sizeof(product_oid[0]));
		else
			snmp_set_var_typed_value(vb, ASN_OBJECT_ID, zero_dot_zero,
						 sizeof(zero_dot_zero));
		return 0;
	case PHYS_CONTAINED_IN: mib_set_int(vb, 0); return 0;
	case PHYS_CLASS: mib_set_int(vb, CLASS_CHASSIS); return 0;
	case PHYS_PARENT_REL_POS: mib_set_int(vb, -1); return 0;
	case PHYS_NAME: set_text(vb, node_sys_name(e)); return 0;
	case PHYS_HARDWARE_REV:
		/* MSGI's revision; else NodeInfo Revision, as the manufacturer numbers it */
		if (iv && iv->have_msgi && iv->msgi.revision[0])
			snprintf(text, sizeof(text), "%s", iv->msgi.revision);
		else if (e->has_ident)
			snprintf(text, sizeof(text), "0x%x", e->revision);
		else
			text[0] = '\0';
		set_text(vb, text);
		return 0;
	case PHYS_FIRMWARE_REV:
		if (iv)
			snprintf(text, sizeof(text), "%u.%u.%u", iv->mgir.fw[0], iv->mgir.fw[1],
				 iv->mgir.fw[2]);
		else
			text[0] = '\0';
		set_text(vb, text);
		return 0;
	case PHYS_SOFTWARE_REV:
		/* a managed switch's OS (MGIR sw_info); none on an unmanaged one */
		if (iv && (iv->mgir.sw[0] || iv->mgir.sw[1] || iv->mgir.sw[2]))
			snprintf(text, sizeof(text), "%u.%u.%u", iv->mgir.sw[0], iv->mgir.sw[1],
				 iv->mgir.sw[2]);
		else
			text[0] = '\0';
		set_text(vb, text);
		return 0;
	case PHYS_SERIAL_NUM: set_text(vb, iv && iv->have_msgi ? iv->msgi.serial : ""); return 0;
	case PHYS_MFG_NAME:
		/* NVIDIA where its vendor class answered; else the NodeInfo VendorID,
		 * an IEEE OUI, written as IEEE writes them */
		if (iv)
			snprintf(text, sizeof(text), "NVIDIA");
		else if (e->has_ident)
			snprintf(text, sizeof(text), "OUI %02X-%02X-%02X", e->vendor_id >> 16 & 0xff,
				 e->vendor_id >> 8 & 0xff, e->vendor_id & 0xff);
		else
			text[0] = '\0';
		set_text(vb, text);
		return 0;
	case PHYS_MODEL_NAME:
		if (iv && iv->have_msgi && iv->msgi.part[0])
			snprintf(text, sizeof(text), "%s", iv->msgi.part);
		else if (e->has_ident)
			snprintf(text, sizeof(text), "vendor 0x%06x device 0x%04x", e->vendor_id,
				 e->device_id);
		else
			text[0] = '\0';
		set_text(vb, text);
		return 0;
	case PHYS_IS_FRU: mib_set_int(vb, mib_truth(1)); return 0;
	default: return -1;
	}
}

static int port_value(const struct node_entry *e, unsigned port, unsigned column,
		      netsnmp_variable_list *vb)
{
	char text[160];

	switch (column) {
	case PHYS_DESCR: node_if_descr(e, port, text, sizeof(text)); set_text(vb, text); return 0;
	case PHYS_VENDOR_TYPE:
		snmp_set_var_typed_value(vb, ASN_OBJECT_ID, zero_dot_zero, sizeof(zero_dot_zero));
		return 0;
	case PHYS_CONTAINED_IN: mib_set_int(vb, NODE_ENTITY_CHASSIS); return 0;
	case PHYS_CLASS: mib_set_int(vb, CLASS_PORT); return 0;
	case PHYS_PARENT_REL_POS: mib_set_int(vb, port); return 0;
	case PHYS_NAME: node_if_name(e, port, text, sizeof(text)); set_text(vb, text); return 0;
	case PHYS_HARDWARE_REV:
	case PHYS_FIRMWARE_REV:
	case PHYS_SERIAL_NUM:
	case PHYS_MFG_NAME:
	case PHYS_MODEL_NAME: set_text(vb, ""); return 0;
	case PHYS_IS_FRU: mib_set_int(vb, mib_truth(0)); return 0;
	default: return -1;
	}
}

static int physical_value(const void *row, unsigned column, netsnmp_variable_list *vb,
			  const void *snap)
{
	static const uint8_t unknown_date[8]; /* DateAndTime '0000000000000000'H: unknown */
	uint32_t index = ((const struct node_entity *)row)->index;

	switch (column) {
	/* known of no entity */
	case PHYS_ALIAS:
	case PHYS_ASSET_ID:
	case PHYS_URIS: set_text(vb, ""); return 0;
	default: break;
	}
	if (index == NODE_ENTITY_CHASSIS || (index > NODE_ENTITY_PORT_BASE &&
					     index < NODE_ENTITY_MODULE_BASE)) {
		switch (column) {
		case PHYS_SOFTWARE_REV:
			if (index != NODE_ENTITY_CHASSIS) {
				set_text(vb, "");
				return 0;
			}
			break;
		case PHYS_MFG_DATE: mib_set_octets(vb, unknown_date, sizeof(unknown_date)); return 0;
		default: break;
		}
		return index == NODE_ENTITY_CHASSIS ? chassis_value(snap, column, vb)
						    : port_value(snap, index - NODE_ENTITY_PORT_BASE,
								 column, vb);
	}
	if (column == PHYS_SOFTWARE_REV) {
		set_text(vb, "");
		return 0;
	}
	return hw_value(snap, index, column, vb);
}

/* ---- entAliasMappingTable, entPhysicalContainsTable --------------------------------- */

static unsigned alias_index(const void *data, oid *index)
{
	index[0] = NODE_ENTITY_PORT_BASE + ((const struct node_port *)data)->port;
	index[1] = 0; /* entAliasLogicalIndexOrZero: every logical entity */
	return 2;
}

static unsigned contains_index(const void *data, oid *index)
{
	const struct node_contain *c = data;

	index[0] = c->parent;
	index[1] = c->child;
	return 2;
}

static const struct mib_rows *alias_rows(const void *ctx, const void **snap)
{
	struct node_context_regs *r = (struct node_context_regs *)ctx;
	const struct node_entry *e = node_context_entry(ctx);

	*snap = e;
	return e ? node_rows_at(&r->alias_rows, e->dir->ports + e->first_if, e->n_if,
				sizeof(struct node_port), alias_index) : NULL;
}

static const struct mib_rows *contains_rows(const void *ctx, const void **snap)
{
	struct node_context_regs *r = (struct node_context_regs *)ctx;
	const struct node_entry *e = node_context_entry(ctx);

	*snap = e;
	return e && e->n_entities ? node_rows_at(&r->contains_rows,
						 e->dir->contains + e->first_contain,
						 e->n_entities - 1, sizeof(struct node_contain),
						 contains_index) : NULL;
}

static int alias_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		       const void *snap)
{
	oid to[OID_LENGTH(if_index_oid) + 1];

	(void)snap;
	if (column != ALIAS_MAPPING_IDENTIFIER)
		return -1;
	/* a RowPointer: the port's ifIndex instance (the port itself) */
	memcpy(to, if_index_oid, sizeof(if_index_oid));
	to[OID_LENGTH(if_index_oid)] = ((const struct node_port *)row)->port;
	snmp_set_var_typed_value(vb, ASN_OBJECT_ID, to, sizeof(to));
	return 0;
}

static int contains_value(const void *row, unsigned column, netsnmp_variable_list *vb,
			  const void *snap)
{
	(void)snap;
	if (column != CONTAINS_CHILD_INDEX)
		return -1;
	mib_set_int(vb, ((const struct node_contain *)row)->child);
	return 0;
}

/* ---- entityGeneral ----------------------------------------------------------------- */

static int general_value(unsigned column, netsnmp_variable_list *vb, const void *snap)
{
	const struct node_entry *e = snap;

	if (column != LAST_CHANGE_TIME)
		return -1;
	mib_set_unsigned(vb, ASN_TIMETICKS, node_time_ticks(e->dir, e->entity_changed));
	return 0;
}

/* ---- entPhySensorTable: every sensor row of entPhysicalTable -------------------------- */

static const struct mib_rows *sensor_rows(const void *ctx, const void **snap)
{
	struct node_context_regs *r = (struct node_context_regs *)ctx;
	const struct node_entry *e = node_context_entry(ctx);

	*snap = e;
	return e && e->n_sensors ? node_rows_at(&r->sensor_rows, e->dir->sensors + e->first_sensor,
						e->n_sensors, sizeof(struct node_entity),
						physical_index) : NULL;
}

/* A sensor's reading: type, scale, precision, value, units, and whether it
 * is there (the row's last reading was answered) */
struct reading {
	int type, scale, precision;
	long value;
	const char *units;
	bool available;
	time_t at;
};

static bool sensor_reading(const struct node_entry *e, uint32_t index, struct reading *r)
{
	struct hw h;

	if (!hw_of(e, index, &h))
		return false;
	memset(r, 0, sizeof(*r));
	r->scale = SCALE_UNITS;
	r->at = h.v->read_at;
	if (h.temp) {
		*r = (struct reading){SENSOR_CELSIUS, SCALE_UNITS, 1,
				      vitals_tenths_from_eighths(h.temp->temp), "C", !h.temp->stale,
				      h.v->read_at};
	} else if (h.fan) {
		*r = (struct reading){SENSOR_RPM, SCALE_UNITS, 0, h.fan->rpm, "RPM", !h.fan->stale,
				      h.v->read_at};
	} else if (h.kind == NODE_ENTITY_SENSOR_TEMP) {
		*r = (struct reading){SENSOR_CELSIUS, SCALE_UNITS, 1,
				      vitals_tenths_from_256ths(h.module->info.temp), "C",
				      !h.module->stale, h.v->read_at};
	} else if (h.kind == NODE_ENTITY_SENSOR_VOLTAGE) {
		/* 100 uV units: volts with four decimals */
		*r = (struct reading){SENSOR_VOLTS_DC, SCALE_UNITS, 4, h.module->info.voltage, "V",
				      !h.module->stale, h.v->read_at};
	} else if (h.lane) {
		/* RFC 3433 has no dBm: powers in microwatts, bias in microamperes */
		bool bias = h.kind >= NODE_ENTITY_SENSOR_BIAS;
		long v = bias ? 2L * h.lane->bias :
			 h.kind >= NODE_ENTITY_SENSOR_TX ? h.lane->tx_uw : h.lane->rx_uw;

		*r = (struct reading){bias ? SENSOR_AMPERES : SENSOR_WATTS, SCALE_MICRO, 0, v,
				      bias ? "uA" : "uW", !h.module->stale, h.v->read_at};
	} else {
		return false;
	}
	return true;
}

static int sensor_value(const void *row, unsigned column, netsnmp_variable_list *vb,
			const void *snap)
{
	const struct node_entry *e = snap;
	struct reading r;

	if (!sensor_reading(e, ((const struct node_entity *)row)->index, &r))
		return -1;
	switch (column) {
	case SENSOR_TYPE: mib_set_int(vb, r.type); return 0;
	case SENSOR_SCALE: mib_set_int(vb, r.scale); return 0;
	case SENSOR_PRECISION: mib_set_int(vb, r.precision); return 0;
	case SENSOR_VALUE: mib_set_int(vb, r.value); return 0;
	case SENSOR_OPER_STATUS: mib_set_int(vb, r.available ? STATUS_OK : STATUS_UNAVAILABLE); return 0;
	case SENSOR_UNITS_DISPLAY: set_text(vb, r.units); return 0;
	case SENSOR_VALUE_TIME_STAMP:
		mib_set_unsigned(vb, ASN_TIMETICKS, node_time_ticks(e->dir, r.at));
		return 0;
	case SENSOR_VALUE_UPDATE_RATE:
		/* milliseconds between two readings: the sweep's lifetime */
		mib_set_unsigned(vb, ASN_UNSIGNED, e->dir->vitals_lifetime_s * 1000UL);
		return 0;
	default: return -1;
	}
}

const struct mib_table node_ent_physical_table = {
	.name = "entPhysicalTable", .table_oid = physical_oid,
	.table_oid_len = OID_LENGTH(physical_oid), .first_column = PHYS_DESCR,
	.last_column = PHYS_URIS, .rows = physical_rows, .value = physical_value};
const struct mib_table node_ent_alias_table = {
	.name = "entAliasMappingTable", .table_oid = alias_oid, .table_oid_len = OID_LENGTH(alias_oid),
	.first_column = ALIAS_MAPPING_IDENTIFIER, .last_column = ALIAS_MAPPING_IDENTIFIER,
	.rows = alias_rows, .value = alias_value};
const struct mib_table node_ent_contains_table = {
	.name = "entPhysicalContainsTable", .table_oid = contains_oid,
	.table_oid_len = OID_LENGTH(contains_oid), .first_column = CONTAINS_CHILD_INDEX,
	.last_column = CONTAINS_CHILD_INDEX, .rows = contains_rows, .value = contains_value};
const struct mib_scalars node_ent_general = {
	.name = "entityGeneral", .group_oid = general_oid, .group_oid_len = OID_LENGTH(general_oid),
	.first = LAST_CHANGE_TIME, .last = LAST_CHANGE_TIME, .snapshot = entry_of,
	.value = general_value};
const struct mib_table node_ent_sensor_table = {
	.name = "entPhySensorTable", .table_oid = sensor_oid, .table_oid_len = OID_LENGTH(sensor_oid),
	.first_column = SENSOR_TYPE, .last_column = SENSOR_VALUE_UPDATE_RATE, .rows = sensor_rows,
	.value = sensor_value};
