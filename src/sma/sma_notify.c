/* SMA-MIB notifications from InfiniBand traps: which notification a trap
 * number becomes, and the Notice's data details in the varbinds its
 * NOTIFICATION-TYPE lists (each scalar's .0 instance, the trap's value).
 * They leave through the notification path (notify.c: notificationLimit per
 * trap number and source LID), and snmpd sends them on (trap2sink,
 * informsink, trapsess, v3 users). */
#include <string.h>

#include "ibsnmpd/config.h"
#include "ibsnmpd/mib_table.h"
#include "ibsnmpd/netsnmp.h"
#include "ibsnmpd/notice.h"
#include "ibsnmpd/notify.h"
#include "ibsnmpd/octets.h"
#include "ibsnmpd/sma.h"

#define SMA_NODE_INFO 1, 3, 6, 1, 3, 117, 3, 1, 1
#define SMA_NOTIFICATIONS 1, 3, 6, 1, 3, 117, 3, 2

enum sma_notify_object {
	OBJ_SYS_IMAGE_GUID = 6,
	OBJ_LID = 14,
	OBJ_PORT = 15,
	OBJ_METHOD = 16,
	OBJ_ATTR_ID = 17,
	OBJ_ATTR_MOD = 18,
	OBJ_KEY = 19,
	OBJ_LID2 = 20,
	OBJ_SL = 21,
	OBJ_QP1 = 22,
	OBJ_QP2 = 23,
	OBJ_GID1 = 24,
	OBJ_GID2 = 25,
	OBJ_CAP_MASK = 26,
	OBJ_SWITCH_LID = 27,
	OBJ_DATA_VALID = 28,
};

static void add_int(netsnmp_variable_list **vl, enum sma_notify_object obj, long v)
{
	oid name[] = {SMA_NODE_INFO, obj, 0};

	snmp_varlist_add_variable(vl, name, OID_LENGTH(name), ASN_INTEGER, &v, sizeof(v));
}

static void add_unsigned(netsnmp_variable_list **vl, enum sma_notify_object obj, u_long v)
{
	oid name[] = {SMA_NODE_INFO, obj, 0};

	snmp_varlist_add_variable(vl, name, OID_LENGTH(name), ASN_UNSIGNED, &v, sizeof(v));
}

static void add_octets(netsnmp_variable_list **vl, enum sma_notify_object obj, const void *p,
		       size_t n)
{
	oid name[] = {SMA_NODE_INFO, obj, 0};

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
	oid notification[] = {SMA_NOTIFICATIONS, which};
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

void sma_notify_trap(const struct notice *n, const char *via, void *arg)
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
