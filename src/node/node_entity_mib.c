/* ENTITY-MIB (RFC 6933, entityMIB mib-2 47) in a node's context: the node
 * as a chassis (entPhysicalIndex 1) holding its ports (1000 + port), each
 * port mapped to its ifIndex; what an NMS lists as the device's hardware.
 * From the directory's entry (the discovery's NodeInfo, NodeDescription):
 * no MAD of its own.
 *
 * What IBA's NodeInfo gives: the vendor (an IEEE OUI), the device ID and
 * its revision (entPhysicalMfgName, ModelName, HardwareRev of the chassis).
 * Serial number, firmware and software revisions, the manufacturing date
 * and asset IDs come from no standard MAD (vendors' own MADs differ):
 * served empty, as RFC 6933 says for what is unknown. ENTITY-MIB's module
 * is the IETF's: its OIDs are facts written here. */
#include <stdio.h>
#include <string.h>

#include "ibsnmpd/mib_oids.h"
#include "ibsnmpd/node.h"

#define ENTITY_OID 1, 3, 6, 1, 2, 1, 47 /* ENTITY-MIB::entityMIB */
static const oid physical_oid[] = {ENTITY_OID, 1, 1, 1}; /* entPhysicalTable */
static const oid alias_oid[] = {ENTITY_OID, 1, 3, 2};    /* entAliasMappingTable */
static const oid contains_oid[] = {ENTITY_OID, 1, 3, 3}; /* entPhysicalContainsTable */
static const oid general_oid[] = {ENTITY_OID, 1, 4};     /* entityGeneral */
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

/* PhysicalClass */
#define CLASS_CHASSIS 3
#define CLASS_PORT 10

static const void *entry_of(const void *ctx)
{
	return node_context_entry(ctx);
}

static void set_text(netsnmp_variable_list *vb, const char *text)
{
	mib_set_octets(vb, text, strlen(text));
}

/* ---- entPhysicalTable: the chassis, then its ports --------------------------------- */

static unsigned physical_index(const void *data, oid *index)
{
	const struct node_entity *ent = data;

	index[0] = ent->port ? NODE_ENTITY_PORT_BASE + ent->port : NODE_ENTITY_CHASSIS;
	return 1;
}

static const struct mib_rows *physical_rows(const void *ctx, const void **snap)
{
	struct node_context_regs *r = (struct node_context_regs *)ctx; /* the header's */
	const struct node_entry *e = node_context_entry(ctx);

	*snap = e;
	return e ? node_rows_at(&r->entity_rows, e->dir->entities + e->first_entity, e->n_if + 1,
				sizeof(struct node_entity), physical_index) : NULL;
}

static int chassis_value(const struct node_entry *e, unsigned column, netsnmp_variable_list *vb)
{
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
		/* NodeInfo Revision: the device's, as its manufacturer numbers it */
		if (e->has_ident)
			snprintf(text, sizeof(text), "0x%x", e->revision);
		else
			text[0] = '\0';
		set_text(vb, text);
		return 0;
	case PHYS_MFG_NAME:
		/* NodeInfo VendorID: an IEEE OUI, written as IEEE writes them */
		if (e->has_ident)
			snprintf(text, sizeof(text), "OUI %02X-%02X-%02X", e->vendor_id >> 16 & 0xff,
				 e->vendor_id >> 8 & 0xff, e->vendor_id & 0xff);
		else
			text[0] = '\0';
		set_text(vb, text);
		return 0;
	case PHYS_MODEL_NAME:
		if (e->has_ident)
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
	const struct node_entity *ent = row;

	switch (column) {
	/* known of no node: no standard MAD reads them */
	case PHYS_FIRMWARE_REV:
	case PHYS_SOFTWARE_REV:
	case PHYS_SERIAL_NUM:
	case PHYS_ALIAS:
	case PHYS_ASSET_ID:
	case PHYS_URIS: set_text(vb, ""); return 0;
	case PHYS_MFG_DATE: mib_set_octets(vb, unknown_date, sizeof(unknown_date)); return 0;
	default: break;
	}
	return ent->port ? port_value(snap, ent->port, column, vb) : chassis_value(snap, column, vb);
}

/* ---- entAliasMappingTable, entPhysicalContainsTable: over the ports -------------- */

static unsigned alias_index(const void *data, oid *index)
{
	index[0] = NODE_ENTITY_PORT_BASE + ((const struct node_port *)data)->port;
	index[1] = 0; /* entAliasLogicalIndexOrZero: every logical entity */
	return 2;
}

static unsigned contains_index(const void *data, oid *index)
{
	index[0] = NODE_ENTITY_CHASSIS;
	index[1] = NODE_ENTITY_PORT_BASE + ((const struct node_port *)data)->port;
	return 2;
}

/* The node's interfaces, indexed as index_of says (a header of ctx's). */
static const struct mib_rows *port_rows(const void *ctx, const void **snap, struct mib_rows *header,
					unsigned (*index_of)(const void *, oid *))
{
	const struct node_entry *e = node_context_entry(ctx);

	*snap = e;
	return e ? node_rows_at(header, e->dir->ports + e->first_if, e->n_if,
				sizeof(struct node_port), index_of) : NULL;
}

static const struct mib_rows *alias_rows(const void *ctx, const void **snap)
{
	struct node_context_regs *r = (struct node_context_regs *)ctx;

	return port_rows(ctx, snap, &r->alias_rows, alias_index);
}

static const struct mib_rows *contains_rows(const void *ctx, const void **snap)
{
	struct node_context_regs *r = (struct node_context_regs *)ctx;

	return port_rows(ctx, snap, &r->contains_rows, contains_index);
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
	mib_set_int(vb, NODE_ENTITY_PORT_BASE + ((const struct node_port *)row)->port);
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
