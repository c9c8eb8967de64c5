/* LLDP-MIB (IEEE 802.1AB, lldpMIB 1.0.8802.1.1.2) in a node's context:
 * what an NMS reads to draw the node on its map, as it reads it from an
 * Ethernet switch's LLDP agent. Nothing here speaks LLDP: the neighbours
 * are the discovery's (the other end of each cable) and the fabric sweep's
 * (the link up), from the directory (node_dir.c); no MAD of their own.
 *
 *   lldpStatistics 1-5        the neighbours that came and went (node_entry.lldp_*)
 *   lldpLocalSystemData 1-6   the node: chassis ID, sysName, sysDescr, capabilities
 *   lldpLocPortTable          its ports: the port number, ifDescr
 *   lldpRemTable              its linked ports' other ends
 *
 * Chassis ID: subtype local(7), the node GUID as 0x and 16 hex digits, as
 * infiniband-diags print it. A GUID is an EUI-64, not an IEEE 802 MAC
 * address (macAddress(4) is one of 6 octets), and ENTITY-MIB's chassis has
 * no entPhysicalAlias to point to (chassisComponent(1)). Port ID: subtype
 * local(7), the port number (= ifIndex in the context). Its description is
 * ifDescr, the text NMSs match with the ifTable (SNMP::Info's lldp_if).
 * lldpRemTimeMark (a TimeFilter index) is the sysUpTime at the link's last
 * change, as lldpd's agent serves it: one row per neighbour, not RFC 2021's
 * view of every row at every time mark. LLDP-MIB's module is IEEE's, not
 * the project's: its OIDs are facts written here. */
#include <stdio.h>
#include <string.h>

#include "ibsnmpd/fabric.h"
#include "ibsnmpd/node.h"

#define LLDP_OID 1, 0, 8802, 1, 1, 2 /* LLDP-MIB::lldpMIB */
static const oid statistics_oid[] = {LLDP_OID, 1, 2};  /* lldpStatistics */
static const oid local_oid[] = {LLDP_OID, 1, 3};       /* lldpLocalSystemData */
static const oid loc_port_oid[] = {LLDP_OID, 1, 3, 7}; /* lldpLocPortTable */
static const oid rem_oid[] = {LLDP_OID, 1, 4, 1};      /* lldpRemTable */

enum { STATS_LAST_CHANGE = 1, STATS_INSERTS, STATS_DELETES, STATS_DROPS, STATS_AGEOUTS };
enum { LOC_CHASSIS_ID_SUBTYPE = 1, LOC_CHASSIS_ID, LOC_SYS_NAME, LOC_SYS_DESC,
       LOC_SYS_CAP_SUPPORTED, LOC_SYS_CAP_ENABLED };
enum { LOC_PORT_ID_SUBTYPE = 2, LOC_PORT_ID, LOC_PORT_DESC };
enum { REM_CHASSIS_ID_SUBTYPE = 4, REM_CHASSIS_ID, REM_PORT_ID_SUBTYPE, REM_PORT_ID,
       REM_PORT_DESC, REM_SYS_NAME, REM_SYS_DESC, REM_SYS_CAP_SUPPORTED, REM_SYS_CAP_ENABLED };

#define CHASSIS_ID_LOCAL 7 /* LldpChassisIdSubtype local(7) */
#define PORT_ID_LOCAL 7    /* LldpPortIdSubtype local(7) */

static const void *entry_of(const void *ctx)
{
	return node_context_entry(ctx);
}

/* LldpSystemCapabilitiesMap (BITS, bit 0 the first octet's highest): a
 * switch relays at layer 2, bridge(2); a router, router(4); a channel
 * adapter ends the link, stationOnly(7). */
static void set_capabilities(netsnmp_variable_list *vb, unsigned node_type)
{
	uint8_t bits = node_type == 2 ? 0x20 : node_type == 3 ? 0x08 : node_type == 1 ? 0x01 : 0;

	mib_set_octets(vb, &bits, bits ? 1 : 0);
}

static void set_guid_text(netsnmp_variable_list *vb, uint64_t guid)
{
	char text[24];

	snprintf(text, sizeof(text), "0x%016llx", (unsigned long long)guid);
	mib_set_octets(vb, text, strlen(text));
}

/* ---- lldpStatistics, lldpLocalSystemData ---------------------------------------- */

static int statistics_value(unsigned column, netsnmp_variable_list *vb, const void *snap)
{
	const struct node_entry *e = snap;

	switch (column) {
	case STATS_LAST_CHANGE:
		mib_set_unsigned(vb, ASN_TIMETICKS, node_time_ticks(e->dir, e->lldp_changed));
		return 0;
	/* ZeroBasedCounter32: a Gauge32 that starts at 0 */
	case STATS_INSERTS: mib_set_unsigned(vb, ASN_GAUGE, e->lldp_inserts); return 0;
	case STATS_DELETES: mib_set_unsigned(vb, ASN_GAUGE, e->lldp_deletes); return 0;
	case STATS_DROPS:   /* no table is ever full */
	case STATS_AGEOUTS: /* nothing ages out: a row goes with its link */
		mib_set_unsigned(vb, ASN_GAUGE, 0);
		return 0;
	default: return -1;
	}
}

static int local_value(unsigned column, netsnmp_variable_list *vb, const void *snap)
{
	const struct node_entry *e = snap;
	char text[256];

	switch (column) {
	case LOC_CHASSIS_ID_SUBTYPE: mib_set_int(vb, CHASSIS_ID_LOCAL); return 0;
	case LOC_CHASSIS_ID: set_guid_text(vb, e->guid); return 0;
	case LOC_SYS_NAME: mib_set_octets(vb, node_sys_name(e), strlen(node_sys_name(e))); return 0;
	case LOC_SYS_DESC:
		node_sys_descr(e, text, sizeof(text));
		mib_set_octets(vb, text, strlen(text));
		return 0;
	case LOC_SYS_CAP_SUPPORTED:
	case LOC_SYS_CAP_ENABLED: set_capabilities(vb, e->type); return 0;
	default: return -1;
	}
}

/* ---- lldpLocPortTable: the node's ports (its ifTable's rows) ---------------------- */

static const struct mib_rows *loc_port_rows(const void *ctx, const void **snap)
{
	const struct node_entry *e = node_context_entry(ctx);

	*snap = e;
	return e ? &e->if_rows : NULL;
}

static int loc_port_value(const void *row, unsigned column, netsnmp_variable_list *vb,
			  const void *snap)
{
	const struct node_port *np = row;
	char text[160];

	switch (column) {
	case LOC_PORT_ID_SUBTYPE: mib_set_int(vb, PORT_ID_LOCAL); return 0;
	case LOC_PORT_ID:
		snprintf(text, sizeof(text), "%u", np->port);
		mib_set_octets(vb, text, strlen(text));
		return 0;
	case LOC_PORT_DESC:
		node_if_descr(snap, np->port, text, sizeof(text));
		mib_set_octets(vb, text, strlen(text));
		return 0;
	default: return -1;
	}
}

/* ---- lldpRemTable: the other end of each linked port ------------------------------ */

static unsigned neighbor_index(const void *data, oid *index)
{
	const struct node_neighbor *nb = data;

	index[0] = nb->time_mark;
	index[1] = nb->port;
	index[2] = 1; /* lldpRemIndex: one neighbour a port */
	return 3;
}

static const struct mib_rows *rem_rows(const void *ctx, const void **snap)
{
	struct node_context_regs *r = (struct node_context_regs *)ctx; /* the header's */
	const struct node_entry *e = node_context_entry(ctx);

	*snap = e;
	if (!e || !e->n_nb) /* none: the directory may have no array at all */
		return NULL;
	return node_rows_at(&r->neighbor_rows, e->dir->neighbors + e->first_nb, e->n_nb,
			    sizeof(struct node_neighbor), neighbor_index);
}

static int rem_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		     const void *snap)
{
	const struct node_neighbor *nb = row;
	const struct node_entry *e = snap;
	const struct fabric_port *link = e->dir->ports[e->first_if + nb->if_at].link;
	/* the other end: in the directory if the discovery found it */
	const struct node_entry *peer = node_dir_find(e->dir, link->remote_guid);
	char text[256];

	switch (column) {
	case REM_CHASSIS_ID_SUBTYPE: mib_set_int(vb, CHASSIS_ID_LOCAL); return 0;
	case REM_CHASSIS_ID: set_guid_text(vb, link->remote_guid); return 0;
	case REM_PORT_ID_SUBTYPE: mib_set_int(vb, PORT_ID_LOCAL); return 0;
	case REM_PORT_ID:
		snprintf(text, sizeof(text), "%u", link->remote_port);
		mib_set_octets(vb, text, strlen(text));
		return 0;
	case REM_PORT_DESC:
		if (peer)
			node_if_descr(peer, link->remote_port, text, sizeof(text));
		else
			text[0] = '\0';
		mib_set_octets(vb, text, strlen(text));
		return 0;
	case REM_SYS_NAME:
		mib_set_octets(vb, peer ? node_sys_name(peer) : "", peer ? strlen(node_sys_name(peer)) : 0);
		return 0;
	case REM_SYS_DESC:
		if (peer)
			node_sys_descr(peer, text, sizeof(text));
		else
			text[0] = '\0';
		mib_set_octets(vb, text, strlen(text));
		return 0;
	case REM_SYS_CAP_SUPPORTED:
	case REM_SYS_CAP_ENABLED: set_capabilities(vb, peer ? peer->type : 0); return 0;
	default: return -1;
	}
}

static const struct mib_scalars statistics = {
	.name = "lldpStatistics", .group_oid = statistics_oid,
	.group_oid_len = OID_LENGTH(statistics_oid), .first = STATS_LAST_CHANGE,
	.last = STATS_AGEOUTS, .snapshot = entry_of, .value = statistics_value};
static const struct mib_scalars local_system = {
	.name = "lldpLocalSystemData", .group_oid = local_oid, .group_oid_len = OID_LENGTH(local_oid),
	.first = LOC_CHASSIS_ID_SUBTYPE, .last = LOC_SYS_CAP_ENABLED, .snapshot = entry_of,
	.value = local_value};
static const struct mib_table loc_port_table = {
	.name = "lldpLocPortTable", .table_oid = loc_port_oid,
	.table_oid_len = OID_LENGTH(loc_port_oid), .first_column = LOC_PORT_ID_SUBTYPE,
	.last_column = LOC_PORT_DESC, .rows = loc_port_rows, .value = loc_port_value};
static const struct mib_table rem_table = {
	.name = "lldpRemTable", .table_oid = rem_oid, .table_oid_len = OID_LENGTH(rem_oid),
	.first_column = REM_CHASSIS_ID_SUBTYPE, .last_column = REM_SYS_CAP_ENABLED,
	.rows = rem_rows, .value = rem_value};

/* in OID order */
const struct mib_member node_lldp_members[] = {
	{.scalars = &statistics},
	{.scalars = &local_system},
	{.table = &loc_port_table},
	{.table = &rem_table},
};
const size_t node_n_lldp_members = sizeof(node_lldp_members) / sizeof(node_lldp_members[0]);
