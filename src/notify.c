/* The notification path (notify.h): one limiter for every family, so that
 * notificationLimit means the same for an IB trap and a DCBX event, and one
 * queue for what comes while the AgentX session is down. */
#include "ibsnmpd/notify.h" /* net-snmp's headers first, in their order */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <net-snmp/agent/agent_callbacks.h>
#include <net-snmp/library/snmp-tc.h>

#include "ibsnmpd/config.h"
#include "ibsnmpd/mib_oids.h"

#include "notify_limit.h"

/* How the log names a notification and its source. */
static const struct {
	const char *name, *source;
} family_label[NOTIFY_FAMILIES] = {
	[NOTIFY_IB_TRAP] = {"trap", "from LID"},
	[NOTIFY_DCBX] = {"DCBX notification", "for ifIndex"},
	[NOTIFY_PARTITION] = {"partition notification", "source"},
	[NOTIFY_LINK] = {"link notification", "for LID"},
	[NOTIFY_VITALS] = {"vitals notification", "for LID"},
	[NOTIFY_ENTITY] = {"entity notification", "for LID"},
	[NOTIFY_ALARM] = {"alarm notification", "for alarm"},
};

static struct notify_limiter limiter;
static unsigned expire_alarm;
static struct notify_stats stats[NOTIFY_FAMILIES];

/* What waits for the AgentX session: a ring, oldest first. */
struct kept {
	netsnmp_variable_list *vl;
	char *context;      /* NULL: the default */
	time_t when;
	enum notify_family family;
};
static struct {
	bool subagent, connected;
	struct kept *ring;
	size_t cap, head, n;
	struct notify_queue_stats st;
	bool dropping;      /* said once a burst of drops */
	unsigned replay_alarm;
} q;

/* The limiter's key: the family in the high bits, the number below. */
static unsigned kind_of(enum notify_family family, unsigned number)
{
	return (unsigned)family << 16 | (number & 0xffff);
}

static void log_burst_end(unsigned kind, unsigned source, unsigned suppressed)
{
	unsigned family = kind >> 16;

	if (family >= NOTIFY_FAMILIES)
		return;
	snmp_log(LOG_NOTICE, "%s %u %s %u: %u notification%s suppressed in the last %u s "
		 "(limit %u)\n", family_label[family].name, kind & 0xffff,
		 family_label[family].source, source, suppressed, suppressed == 1 ? "" : "s",
		 limiter.window_s, limiter.max_per_window);
}

static void on_expire(unsigned reg, void *arg)
{
	(void)reg;
	(void)arg;
	notify_limit_expire(&limiter, time(NULL), log_burst_end);
}

static void kept_free(struct kept *k)
{
	snmp_free_varbind(k->vl);
	free(k->context);
	memset(k, 0, sizeof(*k));
}

/* Keeps vl (taken over) for the session's return; false: not kept (no
 * queue, out of memory), vl freed. */
static bool keep(enum notify_family family, netsnmp_variable_list *vl, const char *context)
{
	struct kept *k;

	if (!q.ring || !q.cap) {
		snmp_free_varbind(vl); /* notificationQueue 0: lost, as net-snmp loses it */
		q.st.dropped++;
		return false;
	}
	if (q.n == q.cap) {
		/* full: the oldest goes */
		kept_free(&q.ring[q.head]);
		q.head = (q.head + 1) % q.cap;
		q.n--;
		q.st.dropped++;
		if (!q.dropping)
			snmp_log(LOG_WARNING, "the master agent is away and %zu notifications wait: "
				 "dropping the oldest (notificationQueue %zu)\n", q.cap, q.cap);
		q.dropping = true;
	}
	k = &q.ring[(q.head + q.n) % q.cap];
	k->vl = vl;
	k->context = context ? strdup(context) : NULL;
	k->when = time(NULL);
	k->family = family;
	q.n++;
	q.st.queued = q.n;
	return true;
}

static void send_now(netsnmp_variable_list *vl, const char *context)
{
	if (context)
		send_trap_vars_with_context(-1, -1, vl, context); /* -1, -1: an SNMPv2 trap */
	else
		send_v2trap(vl);
}

/* The session is back: what was kept goes out in order, each saying when
 * it happened. */
static void replay(unsigned reg, void *arg)
{
	static const oid time_oid[] = {OID_IBSNMPD_NOTIFICATION_TIME, 0};
	size_t sent = 0;

	(void)reg;
	(void)arg;
	q.replay_alarm = 0;
	while (q.n && q.connected) {
		struct kept *k = &q.ring[q.head];
		size_t len = 0;
		u_char *when = date_n_time(&k->when, &len);

		snmp_varlist_add_variable(&k->vl, time_oid, OID_LENGTH(time_oid), ASN_OCTET_STR,
					  when, len);
		send_now(k->vl, k->context);
		stats[k->family].sent++;
		kept_free(k);
		q.head = (q.head + 1) % q.cap;
		q.n--;
		sent++;
	}
	q.st.queued = q.n;
	q.st.sent_late += sent;
	if (sent)
		snmp_log(LOG_NOTICE, "the master agent is back: %zu notification%s kept while it was "
			 "away sent%s\n", sent, sent == 1 ? "" : "s",
			 q.dropping ? " (the oldest were dropped: ibsnmpdNotificationsDropped)" : "");
	q.dropping = false;
}

/* net-snmp's subagent calls these when its AgentX session opens (its trap
 * sink is then in place) and when it closes. */
static int session_opened(int major, int minor, void *server_arg, void *client_arg)
{
	(void)major;
	(void)minor;
	(void)server_arg;
	(void)client_arg;
	q.connected = true;
	/* from the main loop, after the library has finished opening */
	if (q.n && !q.replay_alarm)
		q.replay_alarm = snmp_alarm_register(0, 0, replay, NULL);
	return SNMP_ERR_NOERROR;
}

static int session_closed(int major, int minor, void *server_arg, void *client_arg)
{
	(void)major;
	(void)minor;
	(void)server_arg;
	(void)client_arg;
	q.connected = false;
	return SNMP_ERR_NOERROR;
}

void notify_init(bool subagent)
{
	q.subagent = subagent;
	q.connected = !subagent;
	if (subagent) {
		snmp_register_callback(SNMP_CALLBACK_APPLICATION, SNMPD_CALLBACK_INDEX_START,
				       session_opened, NULL);
		snmp_register_callback(SNMP_CALLBACK_APPLICATION, SNMPD_CALLBACK_INDEX_STOP,
				       session_closed, NULL);
	}
}

void notify_get_queue_stats(struct notify_queue_stats *st)
{
	*st = q.st;
}

/* notificationQueue: a new size keeps the newest of what waits. */
static void resize_queue(void)
{
	size_t cap = q.subagent ? ibsnmpd_cfg.notify_queue : 0;
	struct kept *ring;

	if (cap == q.cap)
		return;
	ring = cap ? calloc(cap, sizeof(*ring)) : NULL;
	if (cap && !ring) {
		snmp_log(LOG_ERR, "out of memory for notificationQueue %zu: keeping %zu\n", cap,
			 q.cap);
		return;
	}
	while (q.n > cap) {
		kept_free(&q.ring[q.head]);
		q.head = (q.head + 1) % q.cap;
		q.n--;
		q.st.dropped++;
	}
	for (size_t i = 0; i < q.n; i++)
		ring[i] = q.ring[(q.head + i) % q.cap];
	free(q.ring);
	q.ring = ring;
	q.cap = cap;
	q.head = 0;
	q.st.queued = q.n;
}

void notify_apply_config(void)
{
	resize_queue();
	if (limiter.max_per_window == ibsnmpd_cfg.notify_limit_count &&
	    limiter.window_s == ibsnmpd_cfg.notify_limit_window_s && expire_alarm)
		return;
	notify_limit_free(&limiter);
	limiter.max_per_window = ibsnmpd_cfg.notify_limit_count;
	limiter.window_s = ibsnmpd_cfg.notify_limit_window_s;
	if (expire_alarm)
		snmp_alarm_unregister(expire_alarm);
	expire_alarm = snmp_alarm_register(limiter.window_s, SA_REPEAT, on_expire, NULL);
}

void notify_stop(void)
{
	if (expire_alarm)
		snmp_alarm_unregister(expire_alarm);
	expire_alarm = 0;
	if (q.replay_alarm)
		snmp_alarm_unregister(q.replay_alarm);
	q.replay_alarm = 0;
	if (q.n)
		snmp_log(LOG_WARNING, "stopping with %zu notifications kept for the master agent: "
			 "not sent\n", q.n);
	while (q.n) {
		kept_free(&q.ring[q.head]);
		q.head = (q.head + 1) % q.cap;
		q.n--;
	}
	free(q.ring);
	q.ring = NULL;
	q.cap = q.head = 0;
	notify_limit_free(&limiter);
	limiter.max_per_window = limiter.window_s = 0;
}

void notify_get_stats(enum notify_family family, struct notify_stats *st)
{
	*st = stats[family];
}

bool notify_send(enum notify_family family, unsigned number, unsigned source,
		 netsnmp_variable_list *vl)
{
	return notify_send_context(family, number, source, vl, NULL);
}

bool notify_send_context(enum notify_family family, unsigned number, unsigned source,
			 netsnmp_variable_list *vl, const char *context)
{
	unsigned ended = 0;

	if (!vl)
		return false; /* out of memory while it was built */
	switch (notify_limit_check(&limiter, kind_of(family, number), source, time(NULL),
				   &ended)) {
	case NOTIFY_SUPPRESS_FIRST:
		snmp_log(LOG_WARNING, "%s %u %s %u: more than %u in %u s, suppressing "
			 "notifications until the window ends\n", family_label[family].name, number,
			 family_label[family].source, source, limiter.max_per_window,
			 limiter.window_s);
		/* fall through */
	case NOTIFY_SUPPRESS:
		stats[family].suppressed++;
		snmp_free_varbind(vl);
		return false;
	case NOTIFY_SEND:
		break;
	}
	if (ended)
		log_burst_end(kind_of(family, number), source, ended);
	if (ibsnmpd_cfg.fabric_name[0]) {
		/* which fabric: a varbind for every receiver, the context for v3 */
		static const oid name_oid[] = {OID_IBSNMPD_FABRIC_NAME, 0};

		snmp_varlist_add_variable(&vl, name_oid, OID_LENGTH(name_oid), ASN_OCTET_STR,
					  ibsnmpd_cfg.fabric_name, strlen(ibsnmpd_cfg.fabric_name));
		if (!context)
			context = ibsnmpd_cfg.fabric_name;
	}
	DEBUGMSGTL(("ibsnmpd:notify", "%s %u %s %u sent\n", family_label[family].name, number,
		    family_label[family].source, source));
	/* the session is down, or back with older ones still to go: kept, in
	 * order (the limit above still applied) */
	if (q.subagent && (!q.connected || q.n))
		return keep(family, vl, context);
	send_now(vl, context);
	snmp_free_varbind(vl);
	stats[family].sent++;
	return true;
}
