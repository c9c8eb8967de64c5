/* SMA-MIB notifications from InfiniBand traps: which notification a trap
 * number becomes, and the Notice's data details in the varbinds its
 * NOTIFICATION-TYPE lists (each scalar's .0 instance, the trap's value).
 * They leave through the notification path (notify.c: notificationLimit per
 * trap number and source LID), and snmpd sends them on (trap2sink,
 * informsink, trapsess, v3 users). */
#include <string.h>

#include "ibsnmpd/config.h"
#include "ibsnmpd/mib_oids.h"
#include "ibsnmpd/mib_table.h"
#include "ibsnmpd/netsnmp.h"
#include "ibsnmpd/notice.h"
#include "ibsnmpd/notify.h"
#include "ibsnmpd/octets.h"
#include "ibsnmpd/sma_attr.h"

#include "trap_internal.h"

/* The Notice's details go in ibSmaNodeInfo's notification objects (.0). */
enum sma_notify_object {
	OBJ_SYS_IMAGE_GUID = SCALAR_IB_SMA_SYSTEM_IMAGE_GUID,
	OBJ_LID = SCALAR_IB_SMA_NODE_LID,
	OBJ_PORT = SCALAR_IB_SMA_NODE_PORT_NUM,
	OBJ_METHOD = SCALAR_IB_SMA_NODE_METHOD,
	OBJ_ATTR_ID = SCALAR_IB_SMA_NODE_ATTRIBUTE_ID,
	OBJ_ATTR_MOD = SCALAR_IB_SMA_NODE_ATTRIBUTE_MODIFIER,
	OBJ_KEY = SCALAR_IB_SMA_NODE_KEY,
	OBJ_LID2 = SCALAR_IB_SMA_NODE_LID2,
	OBJ_SL = SCALAR_IB_SMA_NODE_SERVICE_LEVEL,
	OBJ_QP1 = SCALAR_IB_SMA_NODE_QUEUE_PAIR1,
	OBJ_QP2 = SCALAR_IB_SMA_NODE_QUEUE_PAIR2,
	OBJ_GID1 = SCALAR_IB_SMA_NODE_GID1,
	OBJ_GID2 = SCALAR_IB_SMA_NODE_GID2,
	OBJ_CAP_MASK = SCALAR_IB_SMA_NODE_CAP_MASK,
	OBJ_SWITCH_LID = SCALAR_IB_SMA_NODE_SWITCH_LID,
	OBJ_DATA_VALID = SCALAR_IB_SMA_NODE_DATA_VALID,
};

static void add_int(netsnmp_variable_list **vl, enum sma_notify_object obj, long v)
{
	oid name[] = {OID_IB_SMA_NODE_INFO, obj, 0};

	snmp_varlist_add_variable(vl, name, OID_LENGTH(name), ASN_INTEGER, &v, sizeof(v));
}

static void add_unsigned(netsnmp_variable_list **vl, enum sma_notify_object obj, u_long v)
{
	oid name[] = {OID_IB_SMA_NODE_INFO, obj, 0};

	snmp_varlist_add_variable(vl, name, OID_LENGTH(name), ASN_UNSIGNED, &v, sizeof(v));
}

static void add_octets(netsnmp_variable_list **vl, enum sma_notify_object obj, const void *p,
		       size_t n)
{
	oid name[] = {OID_IB_SMA_NODE_INFO, obj, 0};

	snmp_varlist_add_variable(vl, name, OID_LENGTH(name), ASN_OCTET_STR, p, n);
}

static void add_be(netsnmp_variable_list **vl, enum sma_notify_object obj, uint64_t v,
		   size_t n)
{
	uint8_t b[8];

	octets_put_be(v, b, n);
	add_octets(vl, obj, b, n);
}

/* 257-259: the offending packet's addresses */
static void add_packet_fields(netsnmp_variable_list **vl, const struct notice *n)
{
	add_int(vl, OBJ_LID, n->lid1);
	add_octets(vl, OBJ_GID1, n->gid1, 16);
	add_int(vl, OBJ_QP1, n->qp1);
	add_int(vl, OBJ_LID2, n->lid2);
	add_octets(vl, OBJ_GID2, n->gid2, 16);
	add_int(vl, OBJ_QP2, n->qp2);
	add_int(vl, OBJ_SL, n->sl);
}

/* The varbinds after snmpTrapOID: the OBJECTS of the notification. */
static netsnmp_variable_list *notification_varbinds(const struct notice *n, unsigned which)
{
	oid notification[] = {OID_IB_SMA_NOTIFICATIONS, which};
	netsnmp_variable_list *vl = NULL;

	if (!(vl = mib_notification_new(notification, OID_LENGTH(notification))))
		return NULL;
	switch (n->trap_number) {
	case 128:
		add_int(&vl, OBJ_LID, notice_source_lid(n));
		break;
	case 129:
	case 130:
	case 131:
		add_int(&vl, OBJ_LID, n->lid);
		add_int(&vl, OBJ_PORT, n->port);
		break;
	case 144:
		add_int(&vl, OBJ_LID, n->lid);
		add_be(&vl, OBJ_CAP_MASK, n->cap_mask, 4);
		break;
	case 145:
		add_int(&vl, OBJ_LID, n->lid);
		add_be(&vl, OBJ_SYS_IMAGE_GUID, n->sys_image_guid, 8);
		break;
	case 256:
		/* the M_Key is a secret: zeros unless exposeKeys */
		add_be(&vl, OBJ_KEY, ibsnmpd_cfg.expose_keys ? n->key : 0, 8);
		add_int(&vl, OBJ_LID, n->lid);
		add_int(&vl, OBJ_METHOD, n->method);
		add_unsigned(&vl, OBJ_ATTR_ID, n->attr_id);
		add_unsigned(&vl, OBJ_ATTR_MOD, n->attr_mod);
		break;
	case 257:
	case 258:
		/* P_Key / Q_Key: the draft's 8 octets, value in the low bits */
		add_be(&vl, OBJ_KEY, n->key, 8);
		add_packet_fields(&vl, n);
		break;
	case 259:
		add_be(&vl, OBJ_KEY, n->key, 8);
		add_packet_fields(&vl, n);
		add_int(&vl, OBJ_SWITCH_LID, n->switch_lid);
		add_be(&vl, OBJ_DATA_VALID, n->data_valid, 2);
		break;
	default:
		break;
	}
	return vl;
}

void trap_notify_sma(const struct notice *n, const char *via, void *arg)
{
	unsigned which = n->is_generic ? sma_notification_of_trap(n->trap_number) : 0;

	(void)arg;
	if (!which) {
		DEBUGMSGTL(("ibsnmpd:trap", "no SMA-MIB notification for %s trap %u (via %s)\n",
			    n->is_generic ? "generic" : "vendor", n->trap_number, via));
		return;
	}
	notify_send(NOTIFY_IB_TRAP, n->trap_number, notice_source_lid(n),
		    notification_varbinds(n, which));
}
