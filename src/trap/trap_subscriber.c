/* Where traps come from.
 *
 * 1. The subnet administrator: one InformInfo subscription (SubnAdmSet) per
 *    trap number; the SA then forwards each trap it receives as a
 *    Report(Notice), which is answered with a ReportResp. opensm forwards
 *    128, 144, 145 and 256-259. It forgets subscriptions when it restarts and
 *    has no way to tell subscribers, so every trapResubscribeInterval seconds
 *    the SM is asked for its SMInfo and, if it is master, the subscriptions
 *    are renewed (opensm treats a renewal as the same subscription); at once
 *    when the master SM moves.
 * 2. opensm's log (osmLogFile, on the SM's host): opensm never forwards traps
 *    129, 130 and 131 (they only feed its port-health logic, and its event
 *    plugin interface is not called for them either), but it logs each one:
 *    "Received Generic Notice type:T num:N (...) Producer:P (...) from LID:L
 *    Port P TID:...". Those three are taken from there.
 * 3. The counters (counter_traps.c): a LocalLinkIntegrityErrors or
 *    ExcessiveBufferOverrunErrors increase between two published sweeps is,
 *    by the counter's definition, the threshold event of trap 129 or 130;
 *    used when no opensm log is configured.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/mad.h>

#include "ibsnmpd/config.h"
#include "ibsnmpd/mad_engine.h"
#include "ibsnmpd/netsnmp.h"
#include "ibsnmpd/pm.h"
#include "ibsnmpd/sma_attr.h"
#include "ibsnmpd/trap.h"

#include "counter_traps.h"
#include "osm_log.h"

static struct trap_stats trap_stats;

void trap_get_stats(struct trap_stats *st)
{
	*st = trap_stats;
}

#define TRAP_OBSERVERS_MAX 4
static struct {
	trap_observer_fn fn;
	void *arg;
} observers[TRAP_OBSERVERS_MAX];
static unsigned n_observers;

int trap_observe(trap_observer_fn fn, void *arg)
{
	if (n_observers == TRAP_OBSERVERS_MAX)
		return -1;
	observers[n_observers].fn = fn;
	observers[n_observers].arg = arg;
	n_observers++;
	return 0;
}

/* Every trap from every source goes through here. */
static void trap_deliver(const struct notice *n, const char *via)
{
	trap_stats.received++;
	DEBUGMSGTL(("ibsnmpd:trap", "trap %u from LID %u (issuer %u, count %u) via %s\n",
		    n->trap_number, notice_source_lid(n), n->issuer_lid, n->count, via));
	for (unsigned i = 0; i < n_observers; i++)
		observers[i].fn(n, via, observers[i].arg);
}

/* Trap numbers subscribed to, SMA-MIB's ten. */
static const unsigned subscribed_traps[] = {128, 129, 130, 131, 144, 145, 256, 257, 258, 259};
#define N_SUBS (sizeof(subscribed_traps) / sizeof(subscribed_traps[0]))

struct subscription {
	unsigned trap;
	bool active;       /* the SA accepted it (last answer) */
	bool pending;      /* a SubnAdmSet is under way */
	int last_result;   /* to log a change of outcome once */
	unsigned generation;
};

/* Reports already answered: a resent Report (same TID from the same LID)
 * gets its ReportResp again but no second notification. So does the same
 * Notice in a second Report right behind the first: opensm 3.3.23 can hold a
 * stale record of a subscriber that restarted without unsubscribing (seen
 * for traps 258 and 259) and reports the trap to both records back to back.
 * The window is short so that a flapping link's identical traps are not
 * merged (ibsim does not alternate NoticeToggle; IBA nodes do). */
#define SAME_NOTICE_WINDOW_S 0.02
#define SEEN_REPORTS 64
struct seen_report {
	uint32_t tid;
	unsigned slid;
	double at;
	uint8_t notice[NOTICE_SIZE];
};

static struct {
	bool running;
	unsigned sm_lid;
	unsigned generation; /* bumped when the SM moves: answers of the old one are stale */
	bool probing;        /* an SMInfo query to the SM is under way */
	bool sm_master;      /* the SM said it is master at the last query */
	bool renew_due;      /* trapResubscribeInterval passed: subscribe again */
	unsigned act_count;  /* its SMInfo ActCount then */
	unsigned alarm, alarm_interval;
	struct subscription sub[N_SUBS];
	struct seen_report seen[SEEN_REPORTS];
	size_t seen_next;
	/* opensm log watcher */
	int log_fd, inotify_fd, watch;
	ino_t log_ino;
	off_t log_off;
	char line[1024];
	size_t line_len;
	unsigned log_alarm;
	bool log_missing_noted;
} ts = {.log_fd = -1, .inotify_fd = -1, .watch = -1};

/* ---- InformInfo subscriptions -------------------------------------------------- */

struct sub_job {
	struct subscription *s;
	unsigned generation;
};

static void subscribe_all(void);

static bool is_security_trap(unsigned trap)
{
	return trap >= 256 && trap <= 259;
}

static void count_active(void)
{
	trap_stats.subscriptions = 0;
	for (size_t i = 0; i < N_SUBS; i++)
		trap_stats.subscriptions += ts.sub[i].active;
}

static void subscribe_done(void *ctx, int result, const uint8_t *data, size_t len)
{
	struct sub_job *job = ctx;
	struct subscription *s = job->s;
	bool stale = job->generation != ts.generation || !ts.running;

	free(job);
	if (stale)
		return; /* sent to an SM that is no longer master, or stopping */
	s->pending = false;
	/* the answer echoes InformInfo; Subscribe (octet 23) 0 means refused */
	if (result == MAD_OK && (len < INFORMINFO_SIZE || !data[23]))
		result = MAD_MALFORMED;
	s->active = result == MAD_OK;
	if (result != s->last_result) {
		if (result == MAD_OK)
			snmp_log(LOG_INFO, "subscribed to trap %u with the SA at LID %u\n", s->trap,
				 ts.sm_lid);
		else if (result == MAD_TIMEOUT)
			snmp_log(LOG_WARNING, "trap %u: the SA at LID %u does not answer; "
				 "trying again in %u s\n", s->trap, ts.sm_lid,
				 ibsnmpd_cfg.trap_resubscribe_s);
		else if (is_security_trap(s->trap) && !ibsnmpd_cfg.sa_key_set)
			snmp_log(LOG_WARNING, "trap %u: the SA refused the subscription (status "
				 "0x%04x); traps 256-259 need the SA's SM_Key: set saKey\n",
				 s->trap, (unsigned)result);
		else
			snmp_log(LOG_WARNING, "trap %u: the SA refused the subscription (status "
				 "0x%04x)\n", s->trap, (unsigned)result);
		s->last_result = result;
	}
	count_active();
}

static void send_informinfo(struct subscription *s, bool subscribe, mad_done_fn done,
			    void *ctx)
{
	uint8_t data[IB_SA_DATA_SIZE] = {0};
	struct informinfo ii = {
		.lid_begin = 0xffff, /* every LID */
		.lid_end = 0,
		.is_generic = true,
		.subscribe = subscribe,
		.type = 0xffff,
		.trap_number = s->trap,
		.qpn = 1, /* ours: the SA takes the sender's on subscribe, this on unsubscribe */
		.resp_time_value = 18, /* 4.096 us * 2^18: about 1 s */
		.producer_type = 0xffffff,
	};
	struct mad_call call = {
		.mgmt_class = IB_SA_CLASS,
		.method = IB_MAD_METHOD_SET,
		.attr_id = IB_SA_ATTR_INFORMINFO,
		.data = data,
		.data_len = sizeof(data),
		/* the SM_Key goes only where it is needed: a wrong one for the
		 * other traps would make opensm drop the request silently */
		.sa_sm_key = is_security_trap(s->trap) ? ibsnmpd_cfg.sa_key : 0,
	};
	ib_portid_t sa;

	informinfo_encode(&ii, data, sizeof(data));
	mad_portid_gs(&sa, ts.sm_lid);
	if (mad_engine_call(&sa, &call, done, ctx))
		done(ctx, MAD_SEND_FAILED, NULL, 0);
}

static void subscribe(struct subscription *s)
{
	struct sub_job *job;

	if (s->pending || !ts.sm_lid)
		return;
	job = calloc(1, sizeof(*job));
	if (!job)
		return;
	job->s = s;
	job->generation = ts.generation;
	s->pending = true;
	send_informinfo(s, true, subscribe_done, job);
}

static void unsubscribed(void *ctx, int result, const uint8_t *data, size_t len)
{
	(void)ctx;
	(void)result;
	(void)data;
	(void)len;
}

/* At exit, so that the SA does not keep reporting to a QP nobody reads (and
 * to a restarted ibsnmpd twice). Sent, not waited for. */
static void unsubscribe_all(void)
{
	for (size_t i = 0; i < N_SUBS; i++)
		if (ts.sub[i].active)
			send_informinfo(&ts.sub[i], false, unsubscribed, NULL);
}

static void subscribe_all(void)
{
	if (!ibsnmpd_cfg.trap_subscribe)
		return;
	for (size_t i = 0; i < N_SUBS; i++)
		subscribe(&ts.sub[i]);
}

static void forget_subscriptions(void)
{
	for (size_t i = 0; i < N_SUBS; i++) {
		ts.sub[i].active = ts.sub[i].pending = false;
		ts.sub[i].last_result = 1; /* log the next outcome */
	}
	count_active();
}

/* Is the SM there, and master? Asked every few seconds (the daemon's
 * trap_subscriber_probe_now) and every trapResubscribeInterval; the
 * subscriptions are sent when it becomes master, when it restarted (an
 * ActCount lower than last time: it forgot us) and, as a renewal, every
 * trapResubscribeInterval. An SMP, not an SA request: a missing or starting
 * SM gets no burst of SA requests it cannot serve. */
static void probe_done(void *ctx, int result, const uint8_t *data, size_t len)
{
	unsigned generation = (unsigned)(uintptr_t)ctx, state = 0, act = 0;
	struct sma_sminfo sm;

	if (generation != ts.generation || !ts.running)
		return;
	ts.probing = false;
	if (result == MAD_OK && !sma_sminfo_decode(data, len, &sm)) {
		state = sm.state;
		act = sm.act_count;
	}
	if (state != 3) { /* not master (or no answer) */
		if (ts.sm_master)
			snmp_log(LOG_WARNING, "the SM at LID %u %s; subscribing to traps again when "
				 "it is master\n", ts.sm_lid,
				 result == MAD_OK ? "is no longer master" : "does not answer");
		ts.sm_master = false;
		forget_subscriptions();
		return;
	}
	if (ts.sm_master && act < ts.act_count) {
		snmp_log(LOG_NOTICE, "the SM at LID %u restarted: subscribing to traps again\n",
			 ts.sm_lid);
		forget_subscriptions();
		ts.sm_master = false;
	}
	ts.act_count = act;
	if (ts.sm_master && !ts.renew_due)
		return;
	ts.sm_master = true;
	ts.renew_due = false;
	subscribe_all(); /* renewals are harmless: the SA keeps one record */
}

static void probe_sm(void)
{
	ib_portid_t sm = {0}; /* ib_portid_set leaves the other fields as they are */

	if (ts.probing || !ts.sm_lid)
		return;
	ib_portid_set(&sm, (int)ts.sm_lid, 0, 0); /* an SMP, LID-routed */
	ts.probing = true;
	if (mad_engine_smp_get(&sm, IB_ATTR_SMINFO, 0, probe_done,
			       (void *)(uintptr_t)ts.generation))
		ts.probing = false;
}

static void on_resubscribe_alarm(unsigned reg, void *arg)
{
	(void)reg;
	(void)arg;
	ts.renew_due = true;
	probe_sm();
}

bool trap_subscriber_has_master(void)
{
	return !ts.running || ts.sm_master;
}

void trap_subscriber_probe_now(void)
{
	if (ts.running)
		probe_sm();
}

void trap_subscriber_sm_changed(unsigned sm_lid)
{
	if (!ts.running || sm_lid == ts.sm_lid)
		return;
	ts.sm_lid = sm_lid;
	ts.generation++;
	ts.probing = ts.sm_master = false;
	forget_subscriptions();
	probe_sm();
}

/* ---- Reports -------------------------------------------------------------------- */

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static bool seen_before(uint32_t tid, unsigned slid, const uint8_t *notice)
{
	double now = now_s();
	struct seen_report *r;

	for (size_t i = 0; i < SEEN_REPORTS; i++) {
		r = &ts.seen[i];
		if (!r->at)
			continue;
		if (r->tid == tid && r->slid == slid && now - r->at < 60)
			return true;
		if (now - r->at < SAME_NOTICE_WINDOW_S && !memcmp(r->notice, notice, NOTICE_SIZE))
			return true;
	}
	r = &ts.seen[ts.seen_next];
	r->tid = tid;
	r->slid = slid;
	r->at = now;
	memcpy(r->notice, notice, NOTICE_SIZE);
	ts.seen_next = (ts.seen_next + 1) % SEEN_REPORTS;
	return false;
}

static void on_unsolicited(void *ctx, const uint8_t *mad, size_t len,
			   const struct mad_source *from)
{
	uint8_t *m = (uint8_t *)mad; /* libibmad's getters take non-const */
	unsigned mgmt = mad_get_field(m, 0, IB_MAD_MGMTCLASS_F);
	unsigned method = mad_get_field(m, 0, IB_MAD_METHOD_F);
	unsigned attr = mad_get_field(m, 0, IB_MAD_ATTRID_F);
	uint32_t tid = (uint32_t)mad_get_field64(m, 0, IB_MAD_TRID_F);
	struct notice n;

	(void)ctx;
	if (mgmt != IB_SA_CLASS || method != IB_MAD_METHOD_REPORT) {
		DEBUGMSGTL(("ibsnmpd:trap", "ignoring a request of class 0x%02x method 0x%02x "
			    "attribute 0x%04x from LID %u\n", mgmt, method, attr, from->lid));
		return;
	}
	if (attr != IB_SA_ATTR_NOTICE || len < IB_SA_DATA_OFFS + NOTICE_SIZE ||
	    notice_decode(mad + IB_SA_DATA_OFFS, len - IB_SA_DATA_OFFS, &n)) {
		trap_stats.malformed++;
		snmp_log(LOG_WARNING, "dropping a malformed Report from LID %u (attribute 0x%04x, "
			 "%zu octets)\n", from->lid, attr, len);
		return;
	}
	/* answer first: the SA may resend until it hears from us */
	if (mad_engine_respond(mad, len, from, 0, NULL, 0))
		snmp_log(LOG_WARNING, "cannot answer a Report from LID %u\n", from->lid);
	DEBUGMSGTL(("ibsnmpd:trap", "Report tid 0x%08x from LID %u qp %u\n", tid, from->lid,
		    from->qpn));
	if (seen_before(tid, from->lid, mad + IB_SA_DATA_OFFS)) {
		trap_stats.repeated++;
		DEBUGMSGTL(("ibsnmpd:trap", "Report tid 0x%08x from LID %u again\n", tid, from->lid));
		return;
	}
	trap_deliver(&n, "SA report");
}

/* ---- opensm's log ------------------------------------------------------------------ */

static void log_line(const char *line)
{
	struct notice n;

	if (osm_log_line_parse(line, &n))
		return;
	/* the others arrive as SA Reports */
	if (n.trap_number >= 129 && n.trap_number <= 131)
		trap_deliver(&n, "opensm log");
}

static void log_read_new(void)
{
	char buf[4096];
	ssize_t got;

	while ((got = pread(ts.log_fd, buf, sizeof(buf), ts.log_off)) > 0) {
		ts.log_off += got;
		for (ssize_t i = 0; i < got; i++) {
			if (buf[i] == '\n') {
				ts.line[ts.line_len] = '\0';
				log_line(ts.line);
				ts.line_len = 0;
			} else if (ts.line_len < sizeof(ts.line) - 1) {
				ts.line[ts.line_len++] = buf[i];
			}
		}
	}
}

static void log_close(void)
{
	if (ts.inotify_fd >= 0) {
		unregister_readfd(ts.inotify_fd);
		close(ts.inotify_fd);
	}
	if (ts.log_fd >= 0)
		close(ts.log_fd);
	ts.inotify_fd = ts.log_fd = ts.watch = -1;
}

static void on_log_event(int fd, void *arg);

/* Opens the log at its end (what is already there is history); reopens it
 * when it was rotated (new inode) or truncated. */
static void log_open(bool at_end)
{
	const char *why = NULL;
	struct stat st;

	log_close();
	/* not blocking: a FIFO in its place must not hold the main loop */
	ts.log_fd = open(ibsnmpd_cfg.osm_log_file, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (ts.log_fd < 0 || fstat(ts.log_fd, &st))
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	if (why) {
		if (!ts.log_missing_noted)
			snmp_log(LOG_WARNING, "cannot read opensm's log %s (%s): traps 129-131 "
				 "come from the counters until it can be read\n",
				 ibsnmpd_cfg.osm_log_file, why);
		ts.log_missing_noted = true;
		log_close();
		return;
	}
	if (ts.log_missing_noted)
		snmp_log(LOG_INFO, "reading opensm's log %s\n", ibsnmpd_cfg.osm_log_file);
	ts.log_missing_noted = false;
	ts.log_ino = st.st_ino;
	ts.log_off = at_end ? st.st_size : 0;
	ts.line_len = 0;
	ts.inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (ts.inotify_fd >= 0) {
		ts.watch = inotify_add_watch(ts.inotify_fd, ibsnmpd_cfg.osm_log_file, IN_MODIFY);
		register_readfd(ts.inotify_fd, on_log_event, NULL);
	}
}

static void on_log_event(int fd, void *arg)
{
	char ev[4096];

	(void)arg;
	while (read(fd, ev, sizeof(ev)) > 0)
		;
	log_read_new();
}

/* Every second: catch up (inotify may be unavailable) and notice rotation. */
static void on_log_alarm(unsigned reg, void *arg)
{
	struct stat st;

	(void)reg;
	(void)arg;
	if (ts.log_fd < 0) {
		log_open(false); /* appeared since: it is all new */
		if (ts.log_fd >= 0)
			log_read_new();
		return;
	}
	log_read_new();
	if (stat(ibsnmpd_cfg.osm_log_file, &st) || st.st_ino != ts.log_ino ||
	    st.st_size < ts.log_off) {
		log_open(false); /* rotated or truncated: read the new file from its start */
		if (ts.log_fd >= 0)
			log_read_new();
	}
}

static bool reads_osm_log(void)
{
	return ts.running && ibsnmpd_cfg.osm_log_file[0];
}

/* ---- the counters ------------------------------------------------------------------ */

static void counter_trap(const struct notice *n, void *arg)
{
	(void)arg;
	trap_deliver(n, "counters");
}

static void sweep_published(struct cache_group *g, const void *before, const void *after,
			    void *arg)
{
	const struct pm_snapshot *old = before, *now = after;

	(void)g;
	(void)arg;
	if (!old || !ibsnmpd_cfg.traps_from_counters || reads_osm_log())
		return;
	counter_traps(old->ports, old->n, now->ports, now->n, counter_trap, NULL);
}

int trap_watch_counters(struct cache_group *pm_sweep)
{
	return cache_group_observe(pm_sweep, sweep_published, NULL);
}

/* ---- life cycle ------------------------------------------------------------------ */

void trap_subscriber_apply_config(void)
{
	if (!ts.running)
		return;
	if (ts.alarm_interval != ibsnmpd_cfg.trap_resubscribe_s) {
		if (ts.alarm)
			snmp_alarm_unregister(ts.alarm);
		ts.alarm_interval = ibsnmpd_cfg.trap_resubscribe_s;
		ts.alarm = snmp_alarm_register(ts.alarm_interval, SA_REPEAT, on_resubscribe_alarm,
					       NULL);
	}
	if (ibsnmpd_cfg.osm_log_file[0] && !ts.log_alarm) {
		log_open(true);
		ts.log_alarm = snmp_alarm_register(1, SA_REPEAT, on_log_alarm, NULL);
	} else if (!ibsnmpd_cfg.osm_log_file[0] && ts.log_alarm) {
		snmp_alarm_unregister(ts.log_alarm);
		ts.log_alarm = 0;
		log_close();
	}
}

int trap_subscriber_start(unsigned sm_lid)
{
	ts.running = true;
	ts.sm_lid = sm_lid;
	for (size_t i = 0; i < N_SUBS; i++)
		ts.sub[i] = (struct subscription){.trap = subscribed_traps[i], .last_result = 1};
	mad_engine_set_unsolicited(on_unsolicited, NULL);
	trap_subscriber_apply_config();
	probe_sm();
	return 0;
}

void trap_subscriber_stop(void)
{
	if (!ts.running)
		return;
	unsubscribe_all();
	ts.running = false;
	mad_engine_set_unsolicited(NULL, NULL);
	if (ts.alarm)
		snmp_alarm_unregister(ts.alarm);
	if (ts.log_alarm)
		snmp_alarm_unregister(ts.log_alarm);
	ts.alarm = ts.log_alarm = 0;
	ts.alarm_interval = 0;
	log_close();
}
