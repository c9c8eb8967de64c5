/* The notification path (notify.h): one limiter for every family, so that
 * notificationLimit means the same for an IB trap and a DCBX event, and one
 * queue for everything not sent yet: while the AgentX session is down, and
 * while earlier notifications wait for snmpd's answers.
 *
 * snmpd answers every AgentX Notify PDU. A subagent that writes hundreds
 * of them in one pass, reading nothing, fills snmpd's socket with answers
 * until snmpd blocks writing them, and then itself blocks writing to
 * snmpd: both stand still for good. So a subagent's notifications go out
 * through a window: at most NOTIFY_WINDOW unanswered, each answer letting
 * the next one go, and only while the socket has room (the main loop reads
 * between two writes); the rest wait in the queue, in order. They are sent
 * here rather than through net-snmp's send_v2trap(), which gives no way to
 * know when snmpd has answered. In direct mode (the agent's own sinks, UDP
 * or TCP, no answers) a pass sends at most NOTIFY_DIRECT_BATCH.
 *
 * Either way at most notificationRate a second: snmpd forwards each at once,
 * over UDP, and a receiver that falls behind loses what its socket cannot
 * hold (snmptrapd lost one in twenty of a 2,000 burst forwarded as fast as
 * snmpd could). */
#include "ibsnmpd/notify.h" /* net-snmp's headers first, in their order */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <net-snmp/agent/agent_callbacks.h>
#include <net-snmp/library/snmp-tc.h>

#include "ibsnmpd/clock.h"
#include "ibsnmpd/config.h"
#include "ibsnmpd/loop.h"
#include "ibsnmpd/mib_oids.h"

#include "notify_limit.h"

/* agentx-Notify-PDU (RFC 2741 6.2.10; net-snmp's agentx/protocol.h is not
 * installed) */
#define AGENTX_NOTIFY_PDU 12
#define NOTIFY_WINDOW 8         /* Notify PDUs snmpd has not answered yet */
#define NOTIFY_DIRECT_BATCH 16  /* direct mode: notifications a pass sends */
#define NOTIFY_LATE_MS 1000     /* waited this long: it says when it happened */
#define NOTIFY_ROOM 16384       /* free in the AgentX socket before a Notify goes */
#define NOTIFY_RETRY_MS 20      /* the socket was full: look again */
#define NOTIFY_RATE_BURST_S 20  /* notificationRate / this: sent back to back at most */

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
	[NOTIFY_ROUTING] = {"routing notification", "for check"},
};

static struct notify_limiter limiter;
static unsigned expire_alarm;
static struct notify_stats stats[NOTIFY_FAMILIES];

/* A notification not sent yet, or sent and not answered. */
struct kept {
	netsnmp_variable_list *vl;
	char *context;      /* NULL: the default */
	time_t when;        /* ibsnmpdNotificationTime */
	long long queued_ms; /* monotonic */
	enum notify_family family;
	bool away;          /* kept while the session was down */
};

static struct {
	bool subagent, connected;
	netsnmp_session *session; /* the AgentX session while it is open */
	struct kept *ring;        /* what waits, oldest first */
	size_t cap, head, n;
	struct kept flight[NOTIFY_WINDOW]; /* sent, snmpd's answer not in yet */
	long flight_reqid[NOTIFY_WINDOW];   /* 0: a free slot */
	size_t n_flight;
	struct notify_queue_stats st;
	bool dropping;            /* said once a burst of drops */
	size_t sent_late_burst;   /* kept while away, sent since the session came back */
	struct loop_deferred next_pass;
	unsigned retry_alarm;
	double tokens;            /* notificationRate's bucket */
	long long tokens_at_ms;
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

static void count_waiting(void)
{
	q.st.queued = q.n;
	q.st.in_flight = q.n_flight;
}

static void drop_oldest(void)
{
	kept_free(&q.ring[q.head]);
	q.head = (q.head + 1) % q.cap;
	q.n--;
	q.st.dropped++;
	if (!q.dropping)
		snmp_log(LOG_WARNING, "%zu notifications wait for the master agent: dropping the "
			 "oldest (notificationQueue %zu)\n", q.cap, q.cap);
	q.dropping = true;
}

/* Takes k over: at the end of the queue (front: at its head, as the oldest,
 * a notification snmpd did not answer before its session closed). false:
 * not kept (notificationQueue 0), freed. */
static bool keep(struct kept *k, bool front)
{
	if (!q.ring || !q.cap) {
		kept_free(k); /* notificationQueue 0: lost, as net-snmp loses it */
		q.st.dropped++;
		return false;
	}
	if (q.n == q.cap) {
		if (front) { /* it is the oldest: it goes */
			kept_free(k);
			q.st.dropped++;
			return false;
		}
		drop_oldest();
	}
	if (front) {
		q.head = (q.head + q.cap - 1) % q.cap;
		q.ring[q.head] = *k;
	} else {
		q.ring[(q.head + q.n) % q.cap] = *k;
	}
	q.n++;
	count_waiting();
	return true;
}

static void pop_head(void)
{
	memset(&q.ring[q.head], 0, sizeof(q.ring[q.head]));
	q.head = (q.head + 1) % q.cap;
	q.n--;
	count_waiting();
}

/* The varbinds that go out: sysUpTime.0 first (as net-snmp's own sending
 * adds it), the notification's, and ibsnmpdNotificationTime when it waited
 * (kept while snmpd was away, or behind a burst for a second or more). */
static netsnmp_variable_list *varbinds_of(const struct kept *k, bool *late)
{
	static const oid uptime_oid[] = {1, 3, 6, 1, 2, 1, 1, 3, 0};
	static const oid time_oid[] = {OID_IBSNMPD_NOTIFICATION_TIME, 0};
	netsnmp_variable_list *vars = NULL;
	u_long uptime = netsnmp_get_agent_uptime();

	*late = k->away || monotonic_ms() - k->queued_ms >= NOTIFY_LATE_MS;
	if (!snmp_varlist_add_variable(&vars, uptime_oid, OID_LENGTH(uptime_oid), ASN_TIMETICKS,
				       &uptime, sizeof(uptime)))
		return NULL;
	if (!(vars->next_variable = snmp_clone_varbind(k->vl))) {
		snmp_free_varbind(vars);
		return NULL;
	}
	if (*late) {
		size_t len = 0;
		u_char *when = date_n_time(&k->when, &len);

		snmp_varlist_add_variable(&vars, time_oid, OID_LENGTH(time_oid), ASN_OCTET_STR,
					  when, len);
	}
	return vars;
}

static void sent(const struct kept *k, bool late)
{
	stats[k->family].sent++;
	if (late)
		q.st.sent_late++;
	if (k->away)
		q.sent_late_burst++;
}

static void pump(void);

static int flight_slot_of(long reqid)
{
	for (int i = 0; i < NOTIFY_WINDOW; i++)
		if (q.flight_reqid[i] == reqid)
			return i;
	return -1;
}

/* snmpd's answer to a Notify PDU (or none: net-snmp says it timed out,
 * also for those in flight when the session closes, by then forgotten
 * here). */
static int on_answer(int op, netsnmp_session *s, int reqid, netsnmp_pdu *pdu, void *magic)
{
	int slot = reqid ? flight_slot_of(reqid) : -1;

	(void)s;
	(void)magic;
	if (slot < 0)
		return 1;
	/* no answer in the session's time (snmpd alive but slow: it has most
	 * likely sent it on; not sent twice), or an AgentX error (snmpd did not) */
	if (op != NETSNMP_CALLBACK_OP_RECEIVED_MESSAGE || !pdu || pdu->errstat)
		q.st.unanswered++;
	kept_free(&q.flight[slot]);
	q.flight_reqid[slot] = 0;
	q.n_flight--;
	count_waiting();
	pump();
	return 1;
}

/* The AgentX session's socket: room for one more Notify without waiting. */
static bool agentx_has_room(void)
{
	struct session_list *sl = snmp_sess_pointer(q.session);
	long room = sl && sl->transport ? loop_stream_room(sl->transport->sock) : -1;

	return room < 0 || room >= NOTIFY_ROOM;
}

/* The head of the queue as an AgentX Notify PDU, into the window; false:
 * not sent (still at the head). */
static bool send_agentx(void)
{
	struct kept *k = &q.ring[q.head];
	netsnmp_pdu *pdu = snmp_pdu_create(AGENTX_NOTIFY_PDU);
	bool late;
	int slot = flight_slot_of(0);

	if (!pdu || slot < 0)
		goto fail;
	if (!(pdu->variables = varbinds_of(k, &late)))
		goto fail;
	pdu->version = q.session->version;
	pdu->sessid = q.session->sessid;
	if (k->context) {
		pdu->contextName = strdup(k->context);
		pdu->contextNameLen = strlen(k->context);
	}
	q.flight_reqid[slot] = pdu->reqid;
	if (!snmp_async_send(q.session, pdu, on_answer, NULL)) {
		q.flight_reqid[slot] = 0;
		goto fail;
	}
	sent(k, late);
	q.flight[slot] = *k;
	q.n_flight++;
	pop_head();
	return true;
fail:
	snmp_free_pdu(pdu);
	return false;
}

/* Direct mode: the agent's own sinks (net-snmp's sending, its
 * NOTIFICATION-LOG-MIB too). */
static void send_direct(void)
{
	struct kept *k = &q.ring[q.head];
	bool late;
	netsnmp_variable_list *vars = varbinds_of(k, &late);

	if (vars) {
		if (k->context)
			send_trap_vars_with_context(-1, -1, vars, k->context); /* -1, -1: v2 */
		else
			send_v2trap(vars);
		snmp_free_varbind(vars);
		sent(k, late);
	} else {
		q.st.dropped++; /* out of memory */
	}
	kept_free(k);
	pop_head();
}

static void retry(unsigned reg, void *arg)
{
	(void)reg;
	(void)arg;
	q.retry_alarm = 0;
	pump();
}

static void retry_in(long ms)
{
	struct timeval t = {ms / 1000, ms % 1000 * 1000};

	if (!q.retry_alarm)
		q.retry_alarm = snmp_alarm_register_hr(t, 0, retry, NULL);
}

/* notificationRate: a token a notification, at that rate, a few saved up
 * at most; 0 ms: one may go now, else when the next token comes. */
static long rate_wait_ms(void)
{
	unsigned rate = ibsnmpd_cfg.notify_rate;
	double most = rate / NOTIFY_RATE_BURST_S > 1 ? rate / NOTIFY_RATE_BURST_S : 1;
	long long now = monotonic_ms();

	if (!rate)
		return 0;
	q.tokens += (double)(now - q.tokens_at_ms) * rate / 1000.0;
	if (q.tokens > most)
		q.tokens = most;
	q.tokens_at_ms = now;
	return q.tokens >= 1 ? 0 : (long)((1 - q.tokens) * 1000.0 / rate) + 1;
}

static void say_back(void)
{
	if (!q.sent_late_burst || q.n)
		return;
	snmp_log(LOG_NOTICE, "the master agent is back: %zu notification%s kept while it was "
		 "away sent%s\n", q.sent_late_burst, q.sent_late_burst == 1 ? "" : "s",
		 q.dropping ? " (the oldest were dropped: ibsnmpdNotificationsDropped)" : "");
	q.sent_late_burst = 0;
	q.dropping = false;
}

/* Sends what waits, as far as the window, the socket, the rate and the pass
 * allow; called again by what opens them (an answer, the session, the
 * retry, the next pass). */
static void pump(void)
{
	size_t batch = 0;
	long wait;

	while (q.n) {
		if (q.subagent && (!q.connected || !q.session || q.n_flight >= NOTIFY_WINDOW))
			break;
		if (!q.subagent && batch++ == NOTIFY_DIRECT_BATCH) {
			loop_defer(&q.next_pass);
			break;
		}
		if ((wait = rate_wait_ms())) {
			retry_in(wait);
			break;
		}
		if (q.subagent && (!agentx_has_room() || !send_agentx())) {
			q.st.deferred++;
			retry_in(NOTIFY_RETRY_MS);
			break;
		}
		if (!q.subagent)
			send_direct();
		q.tokens -= 1;
	}
	say_back();
	if (!q.n)
		q.dropping = false; /* the next burst of drops is said again */
}

static void pump_deferred(void *arg)
{
	(void)arg;
	pump();
}

/* net-snmp's subagent calls these when its AgentX session opens (its trap
 * sink is then in place) and when it closes. */
static int session_opened(int major, int minor, void *server_arg, void *client_arg)
{
	(void)major;
	(void)minor;
	(void)client_arg;
	q.session = server_arg;
	q.connected = true;
	/* at the end of the pass, after the library has finished opening */
	if (q.n)
		loop_defer(&q.next_pass);
	return SNMP_ERR_NOERROR;
}

/* What snmpd had not answered goes back to the head of the queue, in
 * order: it may not have been sent on (sent twice rather than lost). */
static int session_closed(int major, int minor, void *server_arg, void *client_arg)
{
	long long now = monotonic_ms();

	(void)major;
	(void)minor;
	(void)server_arg;
	(void)client_arg;
	q.connected = false;
	q.session = NULL;
	while (q.n_flight) {
		int newest = -1;

		for (int i = 0; i < NOTIFY_WINDOW; i++)
			if (q.flight_reqid[i] &&
			    (newest < 0 || q.flight_reqid[i] > q.flight_reqid[newest]))
				newest = i;
		q.flight[newest].away = true;
		q.flight[newest].queued_ms = now;
		keep(&q.flight[newest], true);
		memset(&q.flight[newest], 0, sizeof(q.flight[newest]));
		q.flight_reqid[newest] = 0;
		q.n_flight--;
	}
	for (size_t i = 0; i < q.n; i++)
		q.ring[(q.head + i) % q.cap].away = true;
	count_waiting();
	return SNMP_ERR_NOERROR;
}

void notify_init(bool subagent)
{
	q.subagent = subagent;
	q.connected = !subagent;
	q.next_pass.fn = pump_deferred;
	q.tokens_at_ms = monotonic_ms();
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
	size_t cap = ibsnmpd_cfg.notify_queue;
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
	count_waiting();
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
	if (q.retry_alarm)
		snmp_alarm_unregister(q.retry_alarm);
	q.retry_alarm = 0;
	loop_cancel(&q.next_pass);
	if (q.n + q.n_flight)
		snmp_log(LOG_WARNING, "stopping with %zu notifications not sent to the master agent "
			 "and %zu not answered by it\n", q.n, q.n_flight);
	while (q.n) {
		kept_free(&q.ring[q.head]);
		q.head = (q.head + 1) % q.cap;
		q.n--;
	}
	for (int i = 0; i < NOTIFY_WINDOW; i++) {
		kept_free(&q.flight[i]);
		q.flight_reqid[i] = 0;
	}
	q.n_flight = 0;
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
	struct kept k;

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
	DEBUGMSGTL(("ibsnmpd:notify", "%s %u %s %u queued\n", family_label[family].name, number,
		    family_label[family].source, source));
	k = (struct kept){.vl = vl, .context = context ? strdup(context) : NULL,
			  .when = time(NULL), .queued_ms = monotonic_ms(), .family = family,
			  .away = q.subagent && !q.connected};
	if (!keep(&k, false))
		return false;
	pump();
	return true;
}
