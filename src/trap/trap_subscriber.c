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
 * 3. The counters (the PM area's counter_traps.c, through
 *    trap_from_counters): a LocalLinkIntegrityErrors or
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

#include "ibsnmpd/cache.h"
#include "ibsnmpd/mad_engine.h"
#include "ibsnmpd/netsnmp.h"
#include "ibsnmpd/sma.h"
#include "ibsnmpd/sma_attr.h"

#include "osm_log.h"
#include "trap_internal.h"

void trap_deliver(struct trap_area *t, const struct notice *n, const char *via)
{
	t->stats.received++;
	DEBUGMSGTL(("ibsnmpd:trap", "trap %u from LID %u (issuer %u, count %u) via %s\n",
		    n->trap_number, notice_source_lid(n), n->issuer_lid, n->count, via));
	/* an observer may stop observing while called */
	for (struct trap_observer *o = t->observers, *next; o; o = next) {
		next = o->next;
		o->fn(n, via, o->arg);
	}
}

/* Trap numbers subscribed to, SMA-MIB's ten. */
static const unsigned subscribed_traps[TRAP_SUBSCRIPTIONS] = {128, 129, 130, 131, 144, 145,
							      256, 257, 258, 259};

/* The same Notice in a second Report right behind the first is not notified
 * twice either: opensm 3.3.23 can hold a stale record of a subscriber that
 * restarted without unsubscribing (seen for traps 258 and 259) and reports
 * the trap to both records back to back. The window is short so that a
 * flapping link's identical traps are not merged (ibsim does not alternate
 * NoticeToggle; IBA nodes do). */
#define SAME_NOTICE_WINDOW_S 0.02

/* ---- InformInfo subscriptions -------------------------------------------------- */

struct sub_job {
	struct trap_area *t;
	struct subscription *s;
	unsigned generation;
};

static void subscribe_all(struct trap_area *t);

static bool is_security_trap(unsigned trap)
{
	return trap >= 256 && trap <= 259;
}

static void count_active(struct trap_area *t)
{
	t->stats.subscriptions = 0;
	for (size_t i = 0; i < TRAP_SUBSCRIPTIONS; i++)
		t->stats.subscriptions += t->sub[i].active;
}

static void subscribe_done(void *ctx, int result, const uint8_t *data, size_t len)
{
	struct sub_job *job = ctx;
	struct trap_area *t = job->t;
	struct subscription *s = job->s;
	bool stale = job->generation != t->generation || !t->running;

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
				 t->sm_lid);
		else if (result == MAD_TIMEOUT)
			snmp_log(LOG_WARNING, "trap %u: the SA at LID %u does not answer; "
				 "trying again in %u s\n", s->trap, t->sm_lid, trap_cfg.resubscribe_s);
		else if (is_security_trap(s->trap) && !trap_cfg.sa_key_set)
			snmp_log(LOG_WARNING, "trap %u: the SA refused the subscription (status "
				 "0x%04x); traps 256-259 need the SA's SM_Key: set saKey\n",
				 s->trap, (unsigned)result);
		else
			snmp_log(LOG_WARNING, "trap %u: the SA refused the subscription (status "
				 "0x%04x)\n", s->trap, (unsigned)result);
		s->last_result = result;
	}
	count_active(t);
}

static void send_informinfo(struct trap_area *t, struct subscription *s, bool subscribe,
			    mad_done_fn done, void *ctx)
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
		.sa_sm_key = is_security_trap(s->trap) ? trap_cfg.sa_key : 0,
	};
	ib_portid_t sa;

	informinfo_encode(&ii, data, sizeof(data));
	mad_portid_gs(&sa, t->sm_lid);
	if (mad_engine_call(&sa, &call, done, ctx))
		done(ctx, MAD_SEND_FAILED, NULL, 0);
}

static void subscribe(struct trap_area *t, struct subscription *s)
{
	struct sub_job *job;

	if (s->pending || !t->sm_lid)
		return;
	job = calloc(1, sizeof(*job));
	if (!job)
		return;
	job->t = t;
	job->s = s;
	job->generation = t->generation;
	s->pending = true;
	send_informinfo(t, s, true, subscribe_done, job);
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
static void unsubscribe_all(struct trap_area *t)
{
	for (size_t i = 0; i < TRAP_SUBSCRIPTIONS; i++)
		if (t->sub[i].active)
			send_informinfo(t, &t->sub[i], false, unsubscribed, NULL);
}

static void subscribe_all(struct trap_area *t)
{
	if (!trap_cfg.subscribe)
		return;
	for (size_t i = 0; i < TRAP_SUBSCRIPTIONS; i++)
		subscribe(t, &t->sub[i]);
}

static void forget_subscriptions(struct trap_area *t)
{
	for (size_t i = 0; i < TRAP_SUBSCRIPTIONS; i++) {
		t->sub[i].active = t->sub[i].pending = false;
		t->sub[i].last_result = 1; /* log the next outcome */
	}
	count_active(t);
}

/* Is the SM there, and master? Asked every few seconds (trap_area.c's
 * watch) and every trapResubscribeInterval; the subscriptions are sent when
 * it becomes master, when it restarted (an ActCount lower than last time:
 * it forgot us) and, as a renewal, every trapResubscribeInterval. An SMP,
 * not an SA request: a missing or starting SM gets no burst of SA requests
 * it cannot serve. */
struct probe_job {
	struct trap_area *t;
	unsigned generation;
};

/* The local port's link as the SMA last read it (true when not known). */
static bool local_link_active(const struct trap_area *t)
{
	const struct sma_port_snapshot *s = t->local_ports ? cache_snapshot(t->local_ports) : NULL;

	return !s || !s->mgmt || s->mgmt->pi.state == 4;
}

static void probe_done(void *ctx, int result, const uint8_t *data, size_t len)
{
	struct probe_job *job = ctx;
	struct trap_area *t = job->t;
	unsigned generation = job->generation, state = 0, act = 0;
	struct sma_sminfo sm = {0};

	free(job);
	if (generation != t->generation || !t->running)
		return;
	t->probing = false;
	if (result == MAD_TIMEOUT && mad_engine_smps_refused())
		return; /* not asked (M_Key): the subscriptions stay as they are */
	if (result == MAD_OK && !sma_sminfo_decode(data, len, &sm)) {
		state = sm.state;
		act = sm.act_count;
	}
	/* while the local port's link is not Active (as the SMA last read
	 * it), an answer or none is not the SM's word on itself: the port is
	 * down, or the SM is sweeping it in (Init); the SMA has said that
	 * nothing beyond the port can be read (seen under load: "the SM is no
	 * longer master" told while this port's link was down). An SMInfo
	 * naming this port is its own SMA's, not the SM's. */
	if (result == MAD_OK && (!local_link_active(t) || (t->own_port_guid &&
							     sm.guid == t->own_port_guid)))
		result = MAD_TIMEOUT;
	if (state != 3 || result != MAD_OK) { /* not master (or no answer) */
		if (t->sm_master && local_link_active(t))
			snmp_log(LOG_WARNING, "the SM at LID %u %s; subscribing to traps again when "
				 "it is master\n", t->sm_lid,
				 result == MAD_OK ? "is no longer master" : "does not answer");
		else if (t->sm_master) /* the SMA said it: nothing beyond the port is read */
			DEBUGMSGTL(("ibsnmpd:trap", "the SM at LID %u is out of reach (the local "
				    "port's link is down); subscribing again when it is back\n",
				    t->sm_lid));
		t->sm_master = false;
		forget_subscriptions(t);
		return;
	}
	if (t->sm_master && act < t->act_count) {
		snmp_log(LOG_NOTICE, "the SM at LID %u restarted: subscribing to traps again\n",
			 t->sm_lid);
		forget_subscriptions(t);
		t->sm_master = false;
	}
	t->act_count = act;
	if (t->sm_master && !t->renew_due)
		return;
	t->sm_master = true;
	t->renew_due = false;
	subscribe_all(t); /* renewals are harmless: the SA keeps one record */
}

static void probe_sm(struct trap_area *t)
{
	ib_portid_t sm = {0}; /* ib_portid_set leaves the other fields as they are */
	struct probe_job *job;

	if (t->probing || !t->sm_lid || !trap_cfg.subscribe) /* nothing to renew */
		return;
	if (mad_engine_smps_refused()) {
		/* no SMP (M_Key, no key): the SM this port names is taken for
		 * master; its SA answers the subscriptions (GMPs) or not, and
		 * they are renewed every trapResubscribeInterval */
		if (!t->sm_master || t->renew_due) {
			t->sm_master = true;
			t->renew_due = false;
			subscribe_all(t);
		}
		return;
	}
	job = malloc(sizeof(*job));
	if (!job)
		return;
	job->t = t;
	job->generation = t->generation;
	ib_portid_set(&sm, (int)t->sm_lid, 0, 0); /* an SMP, LID-routed */
	t->probing = true;
	if (mad_engine_smp_get(&sm, IB_ATTR_SMINFO, 0, probe_done, job)) {
		t->probing = false;
		free(job);
	}
}

static void on_resubscribe_alarm(unsigned reg, void *arg)
{
	struct trap_area *t = arg;

	(void)reg;
	t->renew_due = true;
	probe_sm(t);
}

bool trap_subscriber_has_master(const struct trap_area *t)
{
	return !t->running || !trap_cfg.subscribe || t->sm_master;
}

void trap_subscriber_probe_now(struct trap_area *t)
{
	if (t->running)
		probe_sm(t);
}

void trap_subscriber_sm_changed(struct trap_area *t, unsigned sm_lid)
{
	if (!t->running || sm_lid == t->sm_lid)
		return;
	t->sm_lid = sm_lid;
	t->generation++;
	t->probing = t->sm_master = false;
	forget_subscriptions(t);
	probe_sm(t);
}

/* ---- Reports -------------------------------------------------------------------- */

static bool seen_before(struct trap_area *t, uint32_t tid, unsigned slid, const uint8_t *notice)
{
	double now = monotonic_seconds();
	struct seen_report *r;

	for (size_t i = 0; i < SEEN_REPORTS; i++) {
		r = &t->seen[i];
		if (!r->at)
			continue;
		if (r->tid == tid && r->slid == slid && now - r->at < 60)
			return true;
		if (now - r->at < SAME_NOTICE_WINDOW_S && !memcmp(r->notice, notice, NOTICE_SIZE))
			return true;
	}
	r = &t->seen[t->seen_next];
	r->tid = tid;
	r->slid = slid;
	r->at = now;
	memcpy(r->notice, notice, NOTICE_SIZE);
	t->seen_next = (t->seen_next + 1) % SEEN_REPORTS;
	return false;
}

static void on_unsolicited(void *ctx, const uint8_t *mad, size_t len,
			   const struct mad_source *from)
{
	struct trap_area *t = ctx;
	uint8_t *m = (uint8_t *)mad; /* libibmad's getters take non-const */
	unsigned mgmt = mad_get_field(m, 0, IB_MAD_MGMTCLASS_F);
	unsigned method = mad_get_field(m, 0, IB_MAD_METHOD_F);
	unsigned attr = mad_get_field(m, 0, IB_MAD_ATTRID_F);
	uint32_t tid = (uint32_t)mad_get_field64(m, 0, IB_MAD_TRID_F);
	struct notice n;

	if (mgmt != IB_SA_CLASS || method != IB_MAD_METHOD_REPORT) {
		DEBUGMSGTL(("ibsnmpd:trap", "ignoring a request of class 0x%02x method 0x%02x "
			    "attribute 0x%04x from LID %u\n", mgmt, method, attr, from->lid));
		return;
	}
	if (attr != IB_SA_ATTR_NOTICE || len < IB_SA_DATA_OFFS + NOTICE_SIZE ||
	    notice_decode(mad + IB_SA_DATA_OFFS, len - IB_SA_DATA_OFFS, &n)) {
		t->stats.malformed++;
		snmp_log(LOG_WARNING, "dropping a malformed Report from LID %u (attribute 0x%04x, "
			 "%zu octets)\n", from->lid, attr, len);
		return;
	}
	/* answer first: the SA may resend until it hears from us */
	if (mad_engine_respond(mad, len, from, 0, NULL, 0))
		snmp_log(LOG_WARNING, "cannot answer a Report from LID %u\n", from->lid);
	DEBUGMSGTL(("ibsnmpd:trap", "Report tid 0x%08x from LID %u qp %u\n", tid, from->lid,
		    from->qpn));
	if (seen_before(t, tid, from->lid, mad + IB_SA_DATA_OFFS)) {
		t->stats.repeated++;
		DEBUGMSGTL(("ibsnmpd:trap", "Report tid 0x%08x from LID %u again\n", tid, from->lid));
		return;
	}
	trap_deliver(t, &n, "SA report");
}

/* ---- opensm's log ------------------------------------------------------------------ */

static void log_line(struct trap_area *t, const char *line)
{
	struct notice n;

	if (osm_log_line_parse(line, &n))
		return;
	/* the others arrive as SA Reports */
	if (n.trap_number >= 129 && n.trap_number <= 131)
		trap_deliver(t, &n, "opensm log");
}

static void log_read_new(struct trap_area *t)
{
	char buf[4096];
	ssize_t got;

	while ((got = pread(t->log_fd, buf, sizeof(buf), t->log_off)) > 0) {
		t->log_off += got;
		for (ssize_t i = 0; i < got; i++) {
			if (buf[i] == '\n') {
				t->line[t->line_len] = '\0';
				log_line(t, t->line);
				t->line_len = 0;
			} else if (t->line_len < sizeof(t->line) - 1) {
				t->line[t->line_len++] = buf[i];
			}
		}
	}
}

static void log_close(struct trap_area *t)
{
	if (t->inotify_fd >= 0) {
		unregister_readfd(t->inotify_fd);
		close(t->inotify_fd);
	}
	if (t->log_fd >= 0)
		close(t->log_fd);
	t->inotify_fd = t->log_fd = t->watch = -1;
}

static void on_log_event(int fd, void *arg);

/* Opens the log at its end (what is already there is history); reopens it
 * when it was rotated (new inode) or truncated. */
static void log_open(struct trap_area *t, bool at_end)
{
	const char *why = NULL;
	struct stat st;

	log_close(t);
	/* not blocking: a FIFO in its place must not hold the main loop */
	t->log_fd = open(trap_cfg.osm_log_file, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (t->log_fd < 0 || fstat(t->log_fd, &st))
		why = strerror(errno);
	else if (!S_ISREG(st.st_mode))
		why = "not a regular file";
	if (why) {
		if (!t->log_missing_noted)
			snmp_log(LOG_WARNING, "cannot read opensm's log %s (%s): traps 129-131 "
				 "come from the counters until it can be read\n",
				 trap_cfg.osm_log_file, why);
		t->log_missing_noted = true;
		log_close(t);
		return;
	}
	if (t->log_missing_noted)
		snmp_log(LOG_INFO, "reading opensm's log %s\n", trap_cfg.osm_log_file);
	t->log_missing_noted = false;
	t->log_ino = st.st_ino;
	t->log_off = at_end ? st.st_size : 0;
	t->line_len = 0;
	t->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (t->inotify_fd >= 0) {
		t->watch = inotify_add_watch(t->inotify_fd, trap_cfg.osm_log_file, IN_MODIFY);
		register_readfd(t->inotify_fd, on_log_event, t);
	}
}

static void on_log_event(int fd, void *arg)
{
	char ev[4096];

	while (read(fd, ev, sizeof(ev)) > 0)
		;
	log_read_new(arg);
}

/* Every second: catch up (inotify may be unavailable) and notice rotation. */
static void on_log_alarm(unsigned reg, void *arg)
{
	struct trap_area *t = arg;
	struct stat st;

	(void)reg;
	if (t->log_fd < 0) {
		log_open(t, false); /* appeared since: it is all new */
		if (t->log_fd >= 0)
			log_read_new(t);
		return;
	}
	log_read_new(t);
	if (stat(trap_cfg.osm_log_file, &st) || st.st_ino != t->log_ino || st.st_size < t->log_off) {
		log_open(t, false); /* rotated or truncated: read the new file from its start */
		if (t->log_fd >= 0)
			log_read_new(t);
	}
}

bool trap_subscriber_reads_osm_log(const struct trap_area *t)
{
	return t->running && trap_cfg.osm_log_file[0];
}

/* ---- life cycle ------------------------------------------------------------------ */

void trap_subscriber_apply_config(struct trap_area *t)
{
	if (!t->running)
		return;
	if (t->alarm_interval != trap_cfg.resubscribe_s) {
		if (t->alarm)
			snmp_alarm_unregister(t->alarm);
		t->alarm_interval = trap_cfg.resubscribe_s;
		t->alarm = snmp_alarm_register(t->alarm_interval, SA_REPEAT, on_resubscribe_alarm, t);
	}
	if (trap_cfg.osm_log_file[0] && !t->log_alarm) {
		log_open(t, true);
		t->log_alarm = snmp_alarm_register(1, SA_REPEAT, on_log_alarm, t);
	} else if (!trap_cfg.osm_log_file[0] && t->log_alarm) {
		snmp_alarm_unregister(t->log_alarm);
		t->log_alarm = 0;
		log_close(t);
	}
}

void trap_subscriber_start(struct trap_area *t, unsigned sm_lid)
{
	t->running = true;
	t->sm_lid = sm_lid;
	for (size_t i = 0; i < TRAP_SUBSCRIPTIONS; i++)
		t->sub[i] = (struct subscription){.trap = subscribed_traps[i], .last_result = 1};
	mad_engine_set_unsolicited(on_unsolicited, t);
	trap_subscriber_apply_config(t);
	probe_sm(t);
}

void trap_subscriber_stop(struct trap_area *t)
{
	if (!t->running)
		return;
	unsubscribe_all(t);
	t->running = false;
	mad_engine_set_unsolicited(NULL, NULL);
	if (t->alarm)
		snmp_alarm_unregister(t->alarm);
	if (t->log_alarm)
		snmp_alarm_unregister(t->log_alarm);
	t->alarm = t->log_alarm = 0;
	t->alarm_interval = 0;
	log_close(t);
}
