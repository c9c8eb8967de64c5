/* The one way out for notifications. Every notification ibsnmpd sends (SMA-MIB
 * traps, DCBX, the partition policy, ...) goes through notify_send(): the
 * rate limit (notificationLimit, per kind and source), the counters, one log
 * line when a burst starts and one when it ends, then snmpd's trap sinks
 * (send_v2trap, over AgentX). While the AgentX session is down, net-snmp
 * would drop them without a word: they are kept (notificationQueue, the
 * oldest dropped and counted) and sent in order when it is back, each with
 * ibsnmpdNotificationTime, when it happened. */
#ifndef IBSNMPD_NOTIFY_H
#define IBSNMPD_NOTIFY_H

#include <stdbool.h>

#include "ibsnmpd/netsnmp.h"

/* Who sends: the kind of a notification is (family, number), its source a
 * LID, an ifIndex, ... as the family says (for the limit and the log). */
enum notify_family {
	NOTIFY_IB_TRAP,   /* number: the IB trap number; source: a LID */
	NOTIFY_DCBX,      /* number: lldpXdcbxNotifications.N; source: ifIndex */
	NOTIFY_PARTITION, /* number: ibPartitionNotifications.N; source: 0 */
	NOTIFY_LINK,      /* number: ibsnmpdNotifications.N; source: the port's LID */
	NOTIFY_VITALS,    /* number: ibsnmpdNotifications.N; source: the node's LID */
	NOTIFY_ENTITY,    /* number: entityMIBTraps.0.N; source: the node's LID */
	NOTIFY_ALARM,     /* number: ibsnmpdNotifications.N; source: ibsnmpdAlarmIndex */
	NOTIFY_FAMILIES
};

struct notify_stats {
	unsigned long sent, suppressed;
};

/* Sends vl (begun with mib_notification_new) unless (family, number,
 * source) is over the limit; vl is freed either way. true if sent. */
bool notify_send(enum notify_family family, unsigned number, unsigned source,
		 netsnmp_variable_list *vl);
/* The same, sent in an SNMP context (a node's): snmpd gives SNMPv3
 * receivers its name. */
bool notify_send_context(enum notify_family family, unsigned number, unsigned source,
			 netsnmp_variable_list *vl, const char *context);
void notify_get_stats(enum notify_family family, struct notify_stats *st);
/* The queue: waiting now, dropped when full, sent late (all families). */
struct notify_queue_stats {
	unsigned long queued, dropped, sent_late;
};
void notify_get_queue_stats(struct notify_queue_stats *st);
/* Before init_snmp: follows the AgentX session (subagent) so that what is
 * sent while it is down is kept; in direct mode nothing is kept (the
 * agent's own sinks are always there). */
void notify_init(bool subagent);
/* notificationLimit, at start and after SIGHUP. */
void notify_apply_config(void);
void notify_stop(void);

#endif
