/* The one way out for notifications. Every notification ibsnmpd sends (SMA-MIB
 * traps, DCBX, the partition policy, ...) goes through notify_send(): the
 * rate limit (notificationLimit, per kind and source), the counters, one log
 * line when a burst starts and one when it ends, then a queue, in order, to
 * snmpd (AgentX Notify PDUs, at most a few unanswered at once, so that a
 * burst never blocks the daemon or snmpd) or, in direct mode, to the
 * agent's own sinks (a few a pass). While the AgentX session is down,
 * net-snmp would drop them without a word: they wait too (notificationQueue,
 * the oldest dropped and counted) and go when it is back. One that waited
 * (for the session, or a second or more behind a burst) carries
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
	NOTIFY_ROUTING,   /* number: ibsnmpdNotifications.N; source: ibsnmpdRouteCheckIndex */
	NOTIFY_FAMILIES
};

struct notify_stats {
	unsigned long sent, suppressed;
};

/* Sends vl (begun with mib_notification_new) unless (family, number,
 * source) is over the limit; vl is taken over either way. true if it is
 * on its way (sent or queued). */
bool notify_send(enum notify_family family, unsigned number, unsigned source,
		 netsnmp_variable_list *vl);
/* The same, sent in an SNMP context (a node's): snmpd gives SNMPv3
 * receivers its name. */
bool notify_send_context(enum notify_family family, unsigned number, unsigned source,
			 netsnmp_variable_list *vl, const char *context);
void notify_get_stats(enum notify_family family, struct notify_stats *st);
/* The queue (all families): waiting now, sent to snmpd and not answered
 * yet, dropped when full, sent with their time (late), not answered by
 * snmpd in time (or with an error), and how often the socket had no room. */
struct notify_queue_stats {
	unsigned long queued, in_flight, dropped, sent_late, unanswered, deferred;
};
void notify_get_queue_stats(struct notify_queue_stats *st);
/* Before init_snmp: follows the AgentX session (subagent) so that what is
 * sent while it is down is kept; in direct mode the agent's own sinks are
 * always there. */
void notify_init(bool subagent);
/* notificationLimit, at start and after SIGHUP. */
void notify_apply_config(void);
void notify_stop(void);

#endif
