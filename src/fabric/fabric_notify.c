/* The link notifications: after a snapshot of the fabric group is
 * published, each row's events (fabric_build() set them: one per link and
 * change of condition; one per port and crossing of a BER threshold) go
 * out through the notification path
 *   IBSNMPD-MIB::ibsnmpdLinkDown, ...Up, ...Degraded, ...Restored,
 *   ...BerHigh, ...BerNormal, ...Flapping
 * with the row's columns as ibsnmpdFabricPortTable serves them. */
#include <string.h>

#include "ibsnmpd/fabric.h"
#include "ibsnmpd/mib_oids.h"
#include "ibsnmpd/notify.h"

static const oid port_table_oid[] = {OID_IBSNMPD_FABRIC_PORT_TABLE};

static const unsigned link_objects[] = {
	COLUMN_IBSNMPD_FABRIC_PORT_NODE_DESCRIPTION, COLUMN_IBSNMPD_FABRIC_PORT_REMOTE_NODE_GUID,
	COLUMN_IBSNMPD_FABRIC_PORT_REMOTE_NODE_DESCRIPTION, COLUMN_IBSNMPD_FABRIC_PORT_REMOTE_PORT,
	COLUMN_IBSNMPD_FABRIC_PORT_LINK_STATE, COLUMN_IBSNMPD_FABRIC_PORT_PHYS_STATE,
	COLUMN_IBSNMPD_FABRIC_PORT_WIDTH_ACTIVE, COLUMN_IBSNMPD_FABRIC_PORT_SPEED_ACTIVE,
	COLUMN_IBSNMPD_FABRIC_PORT_RATE,
};

static const unsigned degraded_objects[] = {
	COLUMN_IBSNMPD_FABRIC_PORT_BASELINE_WIDTH, COLUMN_IBSNMPD_FABRIC_PORT_BASELINE_SPEED,
};

static const unsigned ber_objects[] = {
	COLUMN_IBSNMPD_FABRIC_PORT_NODE_DESCRIPTION, COLUMN_IBSNMPD_FABRIC_PORT_REMOTE_NODE_GUID,
	COLUMN_IBSNMPD_FABRIC_PORT_REMOTE_NODE_DESCRIPTION, COLUMN_IBSNMPD_FABRIC_PORT_REMOTE_PORT,
	COLUMN_IBSNMPD_FABRIC_PORT_SPEED_ACTIVE, COLUMN_IBSNMPD_FABRIC_PORT_RATE,
	COLUMN_IBSNMPD_FABRIC_PORT_BER_RAW_MANTISSA, COLUMN_IBSNMPD_FABRIC_PORT_BER_RAW_EXPONENT,
	COLUMN_IBSNMPD_FABRIC_PORT_BER_POST_MANTISSA, COLUMN_IBSNMPD_FABRIC_PORT_BER_POST_EXPONENT,
	COLUMN_IBSNMPD_FABRIC_PORT_BER_SPAN,
};

static const unsigned flapping_objects[] = {
	COLUMN_IBSNMPD_FABRIC_PORT_NODE_DESCRIPTION, COLUMN_IBSNMPD_FABRIC_PORT_REMOTE_NODE_GUID,
	COLUMN_IBSNMPD_FABRIC_PORT_REMOTE_NODE_DESCRIPTION, COLUMN_IBSNMPD_FABRIC_PORT_REMOTE_PORT,
	COLUMN_IBSNMPD_FABRIC_PORT_LINK_STATE, COLUMN_IBSNMPD_FABRIC_PORT_RECENT_DOWNS,
};

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))
#define OBJECTS(a) .objects = (a), .n_objects = N_OF(a)

/* ibsnmpdNotifications.N (FABRIC_EV_* bit N): its name in the log, the
 * columns it carries (the degraded one also the baseline's) */
static const struct link_event {
	const char *name;
	const unsigned *objects;
	size_t n_objects;
} link_events[FABRIC_EV_LAST + 1] = {
	[1] = {"down", OBJECTS(link_objects)},
	[2] = {"up", OBJECTS(link_objects)},
	[3] = {"degraded", OBJECTS(link_objects)},
	[4] = {"restored", OBJECTS(link_objects)},
	[5] = {"BER high", OBJECTS(ber_objects)},
	[6] = {"BER normal", OBJECTS(ber_objects)},
	[7] = {"flapping", OBJECTS(flapping_objects)},
};

static int port_column(const void *row, unsigned column, netsnmp_variable_list *vb)
{
	return fabric_mib_column(row, column, vb);
}

static void add_column(netsnmp_variable_list **vl, const struct fabric_port *p, unsigned column)
{
	oid index[MIB_INDEX_MAX];
	unsigned len = mib_index_guid_port(index, p->guid, p->port);

	/* no value: nothing (e.g. PhysState of a node no longer reached) */
	mib_notification_add_column(vl, port_table_oid, OID_LENGTH(port_table_oid), column, index,
				    len, port_column, p);
}

static void send_link(const struct fabric_port *p, unsigned number)
{
	oid trap[] = {OID_IBSNMPD_NOTIFICATIONS, 0};
	const struct link_event *ev = &link_events[number];
	netsnmp_variable_list *vl;

	trap[OID_LENGTH(trap) - 1] = number;
	vl = mib_notification_new(trap, OID_LENGTH(trap));
	if (!vl)
		return;
	for (size_t i = 0; i < ev->n_objects; i++)
		add_column(&vl, p, ev->objects[i]);
	if (1u << number == FABRIC_EV_DEGRADED)
		for (size_t i = 0; i < N_OF(degraded_objects); i++)
			add_column(&vl, p, degraded_objects[i]);
	mib_notification_add_node_context(&vl, p->guid, p->node_type);
	/* the notification is the record; the log keeps to the agent's own state */
	DEBUGMSGTL(("ibsnmpd:fabric", "link %s: %s port %u <-> %s port %u (%u lanes, speed %d)\n",
		    ev->name, p->node_desc, p->port,
		    p->remote_guid ? p->remote_desc : "?", p->remote_port, p->lanes, p->speed));
	notify_send(NOTIFY_LINK, number, p->lid, vl);
}

void fabric_notify_published(struct cache_group *g, const void *before, const void *after,
			     void *arg)
{
	const struct fabric_snapshot *s = after;

	(void)g;
	(void)before;
	(void)arg;
	for (size_t i = 0; s && i < s->n; i++) {
		const struct fabric_port *p = &s->ports[i];

		/* FABRIC_EV_* bit N is ibsnmpdNotifications.N: up before degraded */
		for (unsigned n = 1; n <= FABRIC_EV_LAST; n++)
			if (p->events & 1u << n)
				send_link(p, n);
	}
}
