/* LLDP-EXT-DCBX-MIB's notifications: after every published snapshot, the
 * events the rules find between it and the one before (dcbx_rules.c) go out
 * through the notification path (notificationLimit per notification and
 * ifIndex: a flapping peer must not flood the trap receivers). */
#include <string.h>

#include "ibsnmpd/cache.h"
#include "ibsnmpd/mib_oids.h"
#include "ibsnmpd/notify.h"

#include "dcbx_internal.h"

/* snmpTrapOID = lldpXdcbxNotifications.N, then the NOTIFICATION-TYPE's one object */
static netsnmp_variable_list *notification_of(const struct dcbx_event *e)
{
	oid notification[] = {OID_LLDP_XDCBX_NOTIFICATIONS, e->what};
	oid object[MAX_OID_LEN];
	size_t len;
	netsnmp_variable_list *vl;
	long value;

	if (e->what == DCBX_NOTIFY_FEATURE_ERROR || e->what == DCBX_NOTIFY_PEER_NO_FEAT) {
		/* lldpXdcbxFeatError or FeatType of the feature (subtype 0) */
		const oid table[] = {OID_LLDP_XDCBX_FEAT_TABLE};
		const oid column[] = {1, e->what == DCBX_NOTIFY_FEATURE_ERROR
					     ? COLUMN_LLDP_XDCBX_FEAT_ERROR : COLUMN_LLDP_XDCBX_FEAT_TYPE,
				      e->ifindex, e->feature, 0};

		len = OID_LENGTH(table);
		memcpy(object, table, sizeof(table));
		memcpy(object + len, column, sizeof(column));
		len += OID_LENGTH(column);
		value = e->what == DCBX_NOTIFY_FEATURE_ERROR ? TV_TRUE : (long)e->feature;
	} else {
		/* lldpXdcbxPortNumber of the port */
		const oid table[] = {OID_LLDP_XDCBX_PORT_TABLE};
		const oid column[] = {1, COLUMN_LLDP_XDCBX_PORT_NUMBER, e->ifindex};

		len = OID_LENGTH(table);
		memcpy(object, table, sizeof(table));
		memcpy(object + len, column, sizeof(column));
		len += OID_LENGTH(column);
		value = (long)e->ifindex;
	}
	vl = mib_notification_new(notification, OID_LENGTH(notification));
	if (vl)
		snmp_varlist_add_variable(&vl, object, len, ASN_INTEGER, &value, sizeof(value));
	return vl;
}

void dcbx_notify_published(struct cache_group *g, const void *before, const void *after,
			   void *arg)
{
	const struct dcbx_snapshot *old = before, *now = after;
	struct dcbx_event ev[64];
	size_t n = dcbx_events(old ? old->ports : NULL, old ? old->n : 0, now->ports, now->n, ev,
			       64);

	(void)g;
	(void)arg;
	for (size_t i = 0; i < n; i++)
		notify_send(NOTIFY_DCBX, ev[i].what, ev[i].ifindex, notification_of(&ev[i]));
}
