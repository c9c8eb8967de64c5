/* The MAD engine: requests in per-destination queues, a window of MADs in
 * flight, retries and timeouts, answers matched by TID and handed to their
 * callbacks, destinations taken for dead and probed. Whether an SMP may go
 * at all is the M_Key guard's (mad_guard.c). All of it runs on the main thread; the wire is a transport
 * (mad_device.c: the umad device; the unit tests: a fake one) that sends
 * what the engine built and hands back, on the main thread, what came in
 * (mad_engine_received, then mad_engine_pump). */
#include "ibsnmpd/netsnmp.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/umad.h>
#include <infiniband/mad.h>

#include "ibsnmpd/mad_engine.h"

#include "mad_internal.h"

#define MAD_BLOCK 256

struct mad_dest;

/* A destination: one LID, whose agent (a switch's PMA or SMA) answers one
 * MAD at a time on real hardware. Requests wait in their destination's
 * queue; destinations that have requests and room take turns (the ready
 * ring), so that a sweep keeps many nodes busy instead of queueing on one.
 * Directed-route MADs (no LID) share one destination without the
 * per-destination limit: they go to the local SMA, or to nodes not yet
 * given a LID, a few at a time. */
/* A LID's answer time, estimated as TCP estimates a round trip (RFC 6298):
 * a smoothed time and its variation from each answer (every try has a TID
 * of its own, so an answer tells which try it answers: no ambiguity to
 * leave out, Karn's rule's reason). A try is given SRTT + 4 RTTVAR, at
 * least madTimeout and at most madTimeoutMax; each try unanswered in a row
 * doubles that (back-off), an answer ends it. A LID never heard from is
 * given madTimeout, without back-off: a dead node costs what it did. Why:
 * a switch whose management processor answers late (an SM sweep, a
 * firmware update, other tools' PerfMgt) is read, not declared silent;
 * one that answers at once is waited for no longer than before. */
struct answer_time {
	uint32_t srtt_us, rttvar_us; /* 0 0: no answer timed yet */
	uint32_t answers;            /* timed */
	uint8_t backoff;             /* tries unanswered in a row since an answer */
};

#define BACKOFF_MAX 6

struct mad_dest {
	struct mad_request *head, *tail; /* not yet sent */
	struct mad_dest *next_ready;
	unsigned in_flight;
	bool ready;
	struct silence *silences;      /* the classes it does not answer */
	uint64_t mkey;                 /* its SMPs' M_Key (mKeyFile); 0: the subnet's */
	struct answer_time time;
	/* tries unanswered in a row, by class (class_slot): a node is taken
	 * for dead only after twice a request's tries went so, so that a
	 * lossy one (30% lost: a request's three tries all lost one time in
	 * 37) is not; a dead one costs the same, its requests in flight
	 * together */
	uint8_t unanswered[4];
};

/* A request of one management class failed after every retry: the node's
 * agent of that class (or the path to it) is taken for dead, and what
 * waits for it fails at once instead of timing out port by port, until it
 * answers. A class at a time: a switch that does not answer NVIDIA's vendor
 * class still answers its SMA and PMA. When `until` passes, and something
 * asked it since the last probe (a sweep that skips a silent node costs it
 * nothing), the engine probes it on its own: the request that failed, sent
 * again once, without retries, beside the sweeps and in a small share of
 * the window (probes_max), so that no sweep waits on a dead node. A probe answered
 * ends the silence; one unanswered (a strike) makes it twice as long, up to
 * SILENT_MAX_MS. */
struct silence {
	struct mad_dest *dest;
	unsigned mgmt_class;           /* silence_class() */
	bool probe_in_flight;
	bool wanted;                   /* a request failed at once since the last probe */
	unsigned strikes;
	size_t at;                     /* its place in eng.silences */
	struct timespec until;
	struct mad_request probe;      /* the request that failed, sent again when due */
	struct silence *next;          /* the destination's other silent classes */
};

/* How long a destination that let a request fail stays silent: at least
 * the time of one request's tries, doubled at each strike up to the max. */
#define SILENT_MIN_MS 5000
#define SILENT_MAX_MS 60000

#define MAD_UNICAST_LIDS 0xc000
/* in-flight requests by TID (sequential, so the low bits spread them) */
#define IN_FLIGHT_BUCKETS 1024

static struct {
	struct mad_transport wire;
	bool open;
	bool silent; /* stopping: no callbacks, no retries */
	unsigned timeout_ms, retries, max_outstanding, max_per_dest;
	unsigned timeout_max_ms; /* madTimeoutMax: a slow LID's longest */
	uint32_t next_tid;
	struct mad_dest *by_lid;                /* MAD_UNICAST_LIDS of them */
	struct mad_dest directed;
	struct mad_dest *ready_head, *ready_tail;
	struct mad_request *in_flight[IN_FLIGHT_BUCKETS]; /* sent, waiting */
	unsigned n_in_flight, n_queued;
	unsigned timer;
	struct mad_engine_stats stats;
	mad_unsolicited_fn unsolicited;
	void *unsolicited_ctx;
	struct mad_feeder *feeders; /* their turn: the head */
	bool feeding;               /* in a feeder's next(): a nested pump only sends */
	struct silence **silences;  /* every silent (destination, class), probed when due */
	size_t n_silences, cap_silences;
	unsigned probes_in_flight;
	uint64_t mkey;             /* in every SMP (mKey) */
} eng;

/* Probes in flight at once: a sixteenth of the window (at least one), so
 * that a dead rail's thousand LIDs are probed beside the sweeps, not in
 * their way. */
static unsigned probes_max(void)
{
	return eng.max_outstanding / 16 ? eng.max_outstanding / 16 : 1;
}

void mad_portid_local(ib_portid_t *p)
{
	memset(p, 0, sizeof(*p));
	p->drpath.cnt = 0;
	p->drpath.drslid = 0xffff;
	p->drpath.drdlid = 0xffff;
}

void mad_portid_gs(ib_portid_t *p, unsigned lid)
{
	memset(p, 0, sizeof(*p));
	p->lid = (int)lid;
	p->qp = 1;
	p->qkey = IB_DEFAULT_QP1_QKEY;
}

void mad_engine_set_unsolicited(mad_unsolicited_fn fn, void *ctx)
{
	eng.unsolicited = fn;
	eng.unsolicited_ctx = ctx;
}

void mad_engine_set_timeout_max(unsigned ms)
{
	eng.timeout_max_ms = ms;
}

void mad_engine_set_limits(unsigned timeout_ms, unsigned retries, unsigned max_outstanding,
			   unsigned max_per_destination)
{
	eng.timeout_ms = timeout_ms ? timeout_ms : 1000;
	eng.retries = retries;
	eng.max_outstanding = max_outstanding ? max_outstanding : 1;
	eng.max_per_dest = max_per_destination ? max_per_destination : 1;
}

void mad_engine_set_mkey(uint64_t mkey)
{
	eng.mkey = mkey;
}

void mad_engine_set_lid_mkey(unsigned lid, uint64_t mkey)
{
	if (lid && lid < MAD_UNICAST_LIDS && eng.by_lid)
		eng.by_lid[lid].mkey = mkey;
}

void mad_engine_get_stats(struct mad_engine_stats *st)
{
	*st = eng.stats;
	st->in_flight = eng.n_in_flight;
	st->queued = eng.n_queued;
}

/* ---- sending ------------------------------------------------------------- */

void mad_ts_add_ms(struct timespec *t, unsigned ms)
{
	clock_gettime(CLOCK_MONOTONIC, t);
	t->tv_sec += ms / 1000;
	t->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

bool mad_ts_passed(const struct timespec *t, const struct timespec *now)
{
	return now->tv_sec > t->tv_sec || (now->tv_sec == t->tv_sec && now->tv_nsec >= t->tv_nsec);
}

static void arm_timer(void);

/* A class's place in mad_dest's unanswered. */
static unsigned class_slot(unsigned mgmt_class)
{
	switch (mgmt_class) {
	case IB_SMI_CLASS:
	case IB_SMI_DIRECT_CLASS: return 0;
	case IB_PERFORMANCE_CLASS: return 1;
	case MAD_VENDOR_NVIDIA_CLASS: return 2;
	default: return 3;
	}
}

/* Whether the tries of d's class left unanswered in a row make it dead. */
static bool dest_seems_dead(const struct mad_dest *d, unsigned mgmt_class)
{
	return d->unanswered[class_slot(mgmt_class)] >= 2 * (eng.retries + 1);
}

/* ---- each LID's answer time (struct answer_time) ---- */

static unsigned timeout_max_ms(void)
{
	unsigned max = eng.timeout_max_ms ? eng.timeout_max_ms : 8 * eng.timeout_ms;

	if (max > 60000)
		max = 60000;
	return max < eng.timeout_ms ? eng.timeout_ms : max;
}

/* How long a try to d is given now (ms). */
static unsigned try_timeout_ms(const struct mad_dest *d)
{
	const struct answer_time *t = &d->time;
	uint64_t ms;

	if (d == &eng.directed || !t->answers)
		return eng.timeout_ms; /* many nodes behind it, or none heard from */
	ms = (t->srtt_us + (4 * t->rttvar_us > 1000 ? 4 * t->rttvar_us : 1000) + 999) / 1000;
	if (ms < eng.timeout_ms)
		ms = eng.timeout_ms;
	ms <<= t->backoff;
	return ms > timeout_max_ms() ? timeout_max_ms() : (unsigned)ms;
}

static void answer_timed(struct mad_dest *d, const struct timespec *sent)
{
	struct answer_time *t = &d->time;
	struct timespec now;
	int64_t us;
	uint32_t r, diff;

	clock_gettime(CLOCK_MONOTONIC, &now);
	us = (int64_t)(now.tv_sec - sent->tv_sec) * 1000000 + (now.tv_nsec - sent->tv_nsec) / 1000;
	r = us < 1 ? 1 : us > 600000000 ? 600000000 : (uint32_t)us;
	t->backoff = 0;
	if (!t->answers++) {
		t->srtt_us = r;
		t->rttvar_us = r / 2;
		return;
	}
	diff = t->srtt_us > r ? t->srtt_us - r : r - t->srtt_us;
	t->rttvar_us = t->rttvar_us - t->rttvar_us / 4 + diff / 4;  /* beta 1/4 */
	t->srtt_us = t->srtt_us - t->srtt_us / 8 + r / 8;           /* alpha 1/8 */
}

static void try_unanswered(struct mad_dest *d, unsigned mgmt_class)
{
	uint8_t *n = &d->unanswered[class_slot(mgmt_class)];

	if (*n < UINT8_MAX)
		(*n)++;
	if (d != &eng.directed && d->time.answers && d->time.backoff < BACKOFF_MAX)
		d->time.backoff++;
}

bool mad_engine_lid_answer_time(unsigned lid, struct mad_answer_time *out)
{
	const struct mad_dest *d;

	if (!eng.by_lid || !lid || lid >= MAD_UNICAST_LIDS)
		return false;
	d = &eng.by_lid[lid];
	if (!d->time.answers)
		return false;
	out->smoothed_us = d->time.srtt_us;
	out->variation_us = d->time.rttvar_us;
	out->timeout_ms = try_timeout_ms(d);
	out->answers = d->time.answers;
	return true;
}

static int send_one(struct mad_request *r)
{
	uint8_t umad[sizeof(struct ib_user_mad) + MAD_BLOCK];
	ib_rpc_t rpc;
	unsigned timeout;

	memset(umad, 0, sizeof(umad));
	memset(&rpc, 0, sizeof(rpc));
	rpc.mgtclass = r->mgmt_class;
	rpc.method = r->method;
	rpc.attr.id = r->attr_id;
	rpc.attr.mod = r->attr_mod;
	rpc.datasz = (int)mad_class_data_size(r->mgmt_class);
	rpc.dataoffs = (int)mad_class_data_offset(r->mgmt_class);
	rpc.mask = r->sa_comp_mask;
	if (r->mgmt_class == IB_SMI_CLASS || r->mgmt_class == IB_SMI_DIRECT_CLASS)
		/* mad_encode writes it in the SMP's M_Key: the LID's own, else the subnet's */
		rpc.mkey = r->dest->mkey ? r->dest->mkey : eng.mkey;
	r->tid = ++eng.next_tid ? eng.next_tid : ++eng.next_tid;
	rpc.trid = r->tid;
	if (mad_build_pkt(umad, &rpc, &r->target, NULL, r->data_len ? r->data : NULL) < 0)
		return -1;
	if (r->mgmt_class == IB_SA_CLASS) /* mad_build_pkt leaves the SM_Key out */
		mad_set_field64(umad_get_mad(umad), 0, IB_SA_MKEY_F, r->sa_sm_key);
	/* The kernel times the request out and reports it as a status; retries
	 * are ours, so that every transport behaves alike. */
	/* the guard's two questions wait alike, as long as a slow node is
	 * waited for: one given less than the other, when a stall of the
	 * fabric ends, went unanswered beside the other's answer (mad_guard.c) */
	timeout = r->guard ? timeout_max_ms() : try_timeout_ms(r->dest);
	if (eng.wire.send(eng.wire.self, r->mgmt_class, umad, MAD_BLOCK, timeout) < 0)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &r->sent);
	eng.stats.sent++;
	DEBUGMSGTL(("ibsnmpd:mad", "sent class 0x%02x attr 0x%04x mod 0x%x tid 0x%08x to lid %d%s\n",
		    r->mgmt_class, r->attr_id, r->attr_mod, r->tid, r->target.lid,
		    r->target.lid ? "" : " (directed route)"));
	/* The simulator ignores the timeout: keep a deadline of our own, a little
	 * later than the kernel's so that on hardware the kernel's report wins. */
	mad_ts_add_ms(&r->deadline, timeout + timeout / 4 + 10);
	return 0;
}


static void finish(struct mad_request *r, int result, const uint8_t *data, size_t len)
{
	if (result == MAD_TIMEOUT)
		eng.stats.timeouts++;
	else if (result != MAD_SEND_FAILED && result != MAD_MALFORMED && mad_request_is_smp(r))
		mad_guard_answered(); /* an SMA answered: what went before was no violation */
	if (!eng.silent && r->done)
		r->done(r->ctx, result, data, len);
	free(r);
}

static struct mad_dest *dest_of(const ib_portid_t *target)
{
	if (target->lid > 0 && target->lid < MAD_UNICAST_LIDS && eng.by_lid)
		return &eng.by_lid[target->lid];
	return &eng.directed;
}

/* The class a silence is kept for: a directed-route SMP is an SMP. */
static unsigned silence_class(unsigned mgmt_class)
{
	return mgmt_class == IB_SMI_DIRECT_CLASS ? IB_SMI_CLASS : mgmt_class;
}

static struct silence *find_silence(const struct mad_dest *d, unsigned mgmt_class)
{
	unsigned c = silence_class(mgmt_class);

	for (struct silence *x = d->silences; x; x = x->next)
		if (x->mgmt_class == c)
			return x;
	return NULL;
}

bool mad_request_is_smp(const struct mad_request *r)
{
	return r->mgmt_class == IB_SMI_CLASS || r->mgmt_class == IB_SMI_DIRECT_CLASS;
}

/* Whether r would fail at once: its class is taken for dead at its LID, or
 * it is an SMP and the M_Key guard refuses them. */
static bool request_silent(const struct mad_request *r)
{
	if (r->guard) /* the guard's questions go, whatever is taken for dead */
		return false;
	if (mad_guard_refuses(r))
		return true;
	return r->dest->silences && find_silence(r->dest, r->mgmt_class);
}

static void queue_request(struct mad_request *r, bool first);

/* ---- what the M_Key guard asks of the engine (mad_internal.h) ---------------- */

void mad_engine_queue_first(struct mad_request *r)
{
	queue_request(r, true);
}

struct mad_request *mad_engine_new_directed(void)
{
	struct mad_request *r = calloc(1, sizeof(*r));

	if (r) {
		mad_portid_local(&r->target);
		r->dest = &eng.directed;
	}
	return r;
}

struct mad_request *mad_engine_new_lid(unsigned lid)
{
	struct mad_request *r = calloc(1, sizeof(*r));

	if (r) {
		mad_portid_gs(&r->target, lid);
		r->dest = dest_of(&r->target);
	}
	return r;
}

bool mad_engine_is_open(void)
{
	return eng.open;
}

void mad_engine_pump_unless_feeding(void)
{
	if (!eng.feeding)
		mad_engine_pump();
}

void mad_engine_count_violations(unsigned long n)
{
	eng.stats.mkey_violations_caused += n;
}

bool mad_engine_has_mkey(void)
{
	return eng.mkey != 0;
}

/* r fails at once: its silence is wanted over (a probe when due). */
static void want_probe(const struct mad_request *r)
{
	struct silence *x = find_silence(r->dest, r->mgmt_class);

	if (x)
		x->wanted = true;
}

/* A destination whose next request would fail at once always has room. */
static bool dest_has_room(struct mad_dest *d)
{
	if (d == &eng.directed || (d->head && request_silent(d->head)))
		return true;
	return d->in_flight < eng.max_per_dest;
}

/* failed did not answer after its retries (or, probe, as a probe): its
 * class is silent at its destination, longer at each strike. */
static void make_silent(const struct mad_request *failed, bool probe)
{
	struct mad_dest *d = failed->dest;
	struct silence *x = find_silence(d, failed->mgmt_class);
	unsigned ms = eng.timeout_ms * (eng.retries + 1) * 2;

	if (d == &eng.directed)
		return; /* directed routes lead to many nodes */
	if (!x) {
		if (eng.n_silences == eng.cap_silences) {
			size_t cap = eng.cap_silences ? 2 * eng.cap_silences : 64;
			struct silence **p = realloc(eng.silences, cap * sizeof(*p));

			if (!p)
				return; /* out of memory: not taken for dead, its requests time out */
			eng.silences = p;
			eng.cap_silences = cap;
		}
		if (!(x = calloc(1, sizeof(*x))))
			return;
		x->dest = d;
		x->mgmt_class = silence_class(failed->mgmt_class);
		x->probe = *failed;
		x->probe.done = NULL;
		x->probe.ctx = NULL;
		x->probe.next = NULL;
		x->next = d->silences;
		d->silences = x;
		x->at = eng.n_silences;
		eng.silences[eng.n_silences++] = x;
		x->strikes = 1;
		DEBUGMSGTL(("ibsnmpd:mad", "LID %td does not answer class 0x%02x: what waits for it "
			    "fails at once\n", d - eng.by_lid, x->mgmt_class));
	} else if (probe && x->strikes < 16) {
		x->strikes++;
	}
	if (ms < SILENT_MIN_MS)
		ms = SILENT_MIN_MS;
	for (unsigned k = 1; k < x->strikes && ms < SILENT_MAX_MS; k++)
		ms *= 2;
	mad_ts_add_ms(&x->until, ms < SILENT_MAX_MS ? ms : SILENT_MAX_MS);
}

/* d answered a request of mgmt_class: that class is no longer silent. */
static void class_answers(struct mad_dest *d, unsigned mgmt_class)
{
	struct silence *x = d->silences ? find_silence(d, mgmt_class) : NULL, **pp;

	if (!x)
		return;
	for (pp = &d->silences; *pp != x; pp = &(*pp)->next)
		;
	*pp = x->next;
	eng.silences[x->at] = eng.silences[--eng.n_silences];
	eng.silences[x->at]->at = x->at;
	DEBUGMSGTL(("ibsnmpd:mad", "LID %td answers class 0x%02x again\n", d - eng.by_lid,
		    x->mgmt_class));
	free(x);
}

/* Puts d at the end of the ready ring if it has requests and room. */
static void dest_make_ready(struct mad_dest *d)
{
	if (d->ready || !d->head || !dest_has_room(d))
		return;
	d->ready = true;
	d->next_ready = NULL;
	if (eng.ready_tail)
		eng.ready_tail->next_ready = d;
	else
		eng.ready_head = d;
	eng.ready_tail = d;
}

static void queue_request(struct mad_request *r, bool first)
{
	struct mad_dest *d = r->dest;

	if (first) { /* a retry */
		r->next = d->head;
		d->head = r;
		if (!d->tail)
			d->tail = r;
	} else {
		r->next = NULL;
		if (d->tail)
			d->tail->next = r;
		else
			d->head = r;
		d->tail = r;
	}
	eng.n_queued++;
	dest_make_ready(d);
}

static void put_in_flight(struct mad_request *r)
{
	struct mad_request **b = &eng.in_flight[r->tid % IN_FLIGHT_BUCKETS];

	r->next = *b;
	*b = r;
	eng.n_in_flight++;
	r->dest->in_flight++;
}

static struct mad_request *find_in_flight(uint32_t tid)
{
	struct mad_request *r = eng.in_flight[tid % IN_FLIGHT_BUCKETS];

	while (r && r->tid != tid)
		r = r->next;
	return r;
}

/* Removes r from flight; its destination may take another. */
static void unlink_in_flight(struct mad_request *r)
{
	for (struct mad_request **pp = &eng.in_flight[r->tid % IN_FLIGHT_BUCKETS]; *pp;
	     pp = &(*pp)->next) {
		if (*pp == r) {
			*pp = r->next;
			r->next = NULL;
			eng.n_in_flight--;
			r->dest->in_flight--;
			dest_make_ready(r->dest);
			return;
		}
	}
}

static int send_one(struct mad_request *r);

/* Silent classes whose silence is over get their probe, as many as
 * probes_max() allows in flight (the engine's own, beside the sweeps). */
static void send_probes_due(const struct timespec *now)
{
	for (size_t k = 0; k < eng.n_silences && eng.probes_in_flight < probes_max() &&
			   eng.n_in_flight < eng.max_outstanding; k++) {
		struct silence *x = eng.silences[k];
		struct mad_request *r;

		if (x->probe_in_flight || !x->wanted || !mad_ts_passed(&x->until, now))
			continue;
		if (mad_engine_smps_refused() && x->mgmt_class == IB_SMI_CLASS)
			continue; /* an SMP: the guard's question alone goes */
		if (!(r = malloc(sizeof(*r))))
			return;
		*r = x->probe;
		r->tries_left = 0;
		if (send_one(r) < 0) {
			make_silent(r, true); /* a strike: tried again later */
			free(r);
			continue;
		}
		put_in_flight(r);
		x->probe_in_flight = true;
		x->wanted = false;
		eng.probes_in_flight++;
		eng.stats.probes++;
	}
}

/* A probe's end: answered (its class answers again) or not (a strike). */
static void probe_ended(struct mad_request *r, bool answered)
{
	struct silence *x = find_silence(r->dest, r->mgmt_class);

	if (x)
		x->probe_in_flight = false;
	eng.probes_in_flight--;
	if (answered)
		class_answers(r->dest, r->mgmt_class);
	else
		make_silent(r, true);
	dest_make_ready(r->dest);
	free(r);
}

static void feeder_append(struct mad_feeder *f)
{
	struct mad_feeder **pp = &eng.feeders;

	while (*pp)
		pp = &(*pp)->next_feeder;
	f->next_feeder = NULL;
	*pp = f;
}

void mad_engine_feed(struct mad_feeder *f)
{
	feeder_append(f);
	mad_engine_pump();
}

/* The head feeder queues more (it goes to the back of the line, or away
 * when it has nothing left); false if no feeder could. */
static bool feed_once(void)
{
	struct mad_feeder *f = eng.feeders;
	bool more;

	if (!f || eng.feeding || eng.silent)
		return false;
	eng.feeders = f->next_feeder;
	eng.feeding = true;
	more = f->next(f->ctx);
	eng.feeding = false;
	if (more)
		feeder_append(f);
	return true;
}

/* Sends while the global window has room: one request of each ready
 * destination in turn, and when none is ready, what the feeders make. */
void mad_engine_pump(void)
{
	while (eng.n_in_flight < eng.max_outstanding && (eng.ready_head || feed_once())) {
		struct mad_dest *d = eng.ready_head;
		struct mad_request *r;

		if (!d)
			continue; /* fed: look again */
		r = d->head;

		eng.ready_head = d->next_ready;
		if (!eng.ready_head)
			eng.ready_tail = NULL;
		d->ready = false;
		d->head = r->next;
		if (!d->head)
			d->tail = NULL;
		eng.n_queued--;
		if (mad_guard_hold(r)) {
			dest_make_ready(d);
			continue;
		}
		if (request_silent(r)) {
			if (mad_guard_refuses(r))
				eng.stats.smps_refused++;
			want_probe(r);
			dest_make_ready(d);
			finish(r, MAD_TIMEOUT, NULL, 0);
			continue;
		}
		if (send_one(r) < 0) {
			snmp_log(LOG_ERR, "sending a MAD failed: %s\n", strerror(errno));
			dest_make_ready(d);
			finish(r, MAD_SEND_FAILED, NULL, 0);
			continue;
		}
		put_in_flight(r);
		dest_make_ready(d);
	}
	arm_timer();
}

/* A try failed (timeout): send again or give up. */
static void retry_or_fail(struct mad_request *r)
{
	unlink_in_flight(r);
	try_unanswered(r->dest, (unsigned)r->mgmt_class);
	if (!r->done) {
		mad_guard_unanswered(r, false);
		probe_ended(r, false);
		return;
	}
	mad_guard_unanswered(r, !eng.silent);
	/* no SMP is tried again while the guard asks (each try may be a
	 * violation), nor once it refuses them */
	if (r->tries_left > 0 && !eng.silent && !mad_guard_stops_retries(r)) {
		r->tries_left--;
		queue_request(r, true); /* retries go first */
		return;
	}
	if (dest_seems_dead(r->dest, (unsigned)r->mgmt_class))
		make_silent(r, false);
	dest_make_ready(r->dest); /* what waits for it: failed by the pump */
	finish(r, MAD_TIMEOUT, NULL, 0);
}

/* -Drawmad: every MAD received, in hex (the fuzz targets' seed corpora
 * are captured this way from the simulated fabric). Not under "ibsnmpd",
 * so that -Dibsnmpd does not turn it on. */
static void debug_raw(const uint8_t *mad, size_t len, int status, const struct mad_source *from)
{
	char hex[2 * MAD_BLOCK + 1];

	DEBUGIF("rawmad") {
		for (size_t i = 0; i < len && i < MAD_BLOCK; i++)
			snprintf(hex + 2 * i, 3, "%02x", mad[i]);
		hex[2 * (len < MAD_BLOCK ? len : MAD_BLOCK)] = '\0';
		DEBUGMSGTL(("rawmad", "from LID %u status %d: %s\n", from->lid, status, hex));
	}
}

void mad_engine_received(const uint8_t *data, size_t len, int status,
			 const struct mad_source *from)
{
	uint8_t *mad = (uint8_t *)data; /* libibmad's getters take non-const */
	uint32_t tid;
	struct mad_request *r = NULL;

	debug_raw(data, len, status, from);
	if (len < 24) {
		eng.stats.dropped++;
		snmp_log(LOG_WARNING, "dropping a MAD of %zu octets: too short\n", len);
		return;
	}
	if (!status && !mad_get_field(mad, 0, IB_MAD_RESPONSE_F)) {
		if (eng.unsolicited && !eng.silent)
			eng.unsolicited(eng.unsolicited_ctx, data, len, from);
		else
			DEBUGMSGTL(("ibsnmpd:mad", "ignoring an unsolicited MAD (class 0x%02x)\n",
				    mad_get_field(mad, 0, IB_MAD_MGMTCLASS_F)));
		return;
	}
	tid = (uint32_t)mad_get_field64(mad, 0, IB_MAD_TRID_F);
	r = find_in_flight(tid);
	if (!r) {
		eng.stats.dropped++;
		DEBUGMSGTL(("ibsnmpd:mad", "dropping MAD tid 0x%08x: no request waits for it\n", tid));
		return;
	}
	if (status) {
		/* ETIMEDOUT from the kernel (or the simulator's "no answer"). */
		DEBUGMSGTL(("ibsnmpd:mad", "tid 0x%08x: transport status %d\n", tid, status));
		retry_or_fail(r);
		return;
	}
	int st = mad_check_response(data, len, r->mgmt_class, r->attr_id, r->attr_mod, tid);
	if (st == MAD_MALFORMED) {
		eng.stats.dropped++;
		snmp_log(LOG_WARNING, "dropping a malformed answer to attr 0x%04x (tid 0x%08x)\n",
			 r->attr_id, tid);
		DEBUGMSGTL(("ibsnmpd:mad", "malformed: %zu octets, class 0x%02x method 0x%02x attr "
			    "0x%04x mod 0x%x\n", len, mad_get_field(mad, 0, IB_MAD_MGMTCLASS_F),
			    mad_get_field(mad, 0, IB_MAD_METHOD_F),
			    mad_get_field(mad, 0, IB_MAD_ATTRID_F),
			    mad_get_field(mad, 0, IB_MAD_ATTRMOD_F)));
		return; /* the request stays in flight and times out */
	}
	unlink_in_flight(r);
	/* it answers */
	eng.stats.answered++;
	answer_timed(r->dest, &r->sent);
	r->dest->unanswered[class_slot((unsigned)r->mgmt_class)] = 0;
	if (!r->done) {
		DEBUGMSGTL(("ibsnmpd:mad", "answer to probe tid 0x%08x\n", tid));
		probe_ended(r, true);
		mad_engine_pump();
		return;
	}
	class_answers(r->dest, r->mgmt_class);
	DEBUGMSGTL(("ibsnmpd:mad", "answer to tid 0x%08x\n", tid));
	finish(r, st, data + mad_class_data_offset(r->mgmt_class),
	       mad_class_data_size(r->mgmt_class));
}

void mad_engine_expire(const struct timespec *now)
{
	struct mad_request *r, *next;

	for (size_t b = 0; b < IN_FLIGHT_BUCKETS && eng.n_in_flight; b++) {
		for (r = eng.in_flight[b]; r; r = next) {
			next = r->next;
			if (mad_ts_passed(&r->deadline, now)) {
				DEBUGMSGTL(("ibsnmpd:mad", "tid 0x%08x timed out\n", r->tid));
				retry_or_fail(r);
			}
		}
	}
	if (!eng.silent)
		send_probes_due(now);
	if (!eng.silent)
		mad_guard_due(now);
	mad_engine_pump();
}

static void on_timer(unsigned reg, void *arg)
{
	struct timespec now;

	(void)reg;
	(void)arg;
	eng.timer = 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	mad_engine_expire(&now);
}

/* While MADs are in flight, look at deadlines a few times per timeout. */
static void arm_timer(void)
{
	struct timeval tv;
	unsigned ms;

	/* silent destinations wait for their probes: the timer sends them */
	if (eng.timer || (!eng.n_in_flight && !eng.n_silences && !mad_engine_smps_refused()) ||
	    !eng.open)
		return;
	ms = eng.timeout_ms / 4 + 1;
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	eng.timer = snmp_alarm_register_hr(tv, 0, on_timer, NULL);
}

int mad_engine_call(const ib_portid_t *target, const struct mad_call *call, mad_done_fn done,
		    void *ctx)
{
	struct mad_request *r;

	if (!eng.open || !eng.wire.supports(eng.wire.self, call->mgmt_class) ||
	    call->data_len > sizeof(r->data))
		return -1;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -1;
	r->target = *target;
	r->mgmt_class = call->mgmt_class;
	r->method = call->method;
	r->attr_id = call->attr_id;
	r->attr_mod = call->attr_mod;
	if (call->data && call->data_len) {
		memcpy(r->data, call->data, call->data_len);
		r->data_len = sizeof(r->data); /* mad_build_pkt copies the class's size */
	}
	r->sa_sm_key = call->sa_sm_key;
	r->sa_comp_mask = call->sa_comp_mask;
	r->tries_left = eng.retries;
	r->done = done;
	r->ctx = ctx;
	r->dest = dest_of(target);
	queue_request(r, false);
	mad_engine_pump();
	return 0;
}

int mad_engine_respond(const uint8_t *request, size_t len, const struct mad_source *to,
		       unsigned status, const uint8_t *data, size_t data_len)
{
	uint8_t umad[sizeof(struct ib_user_mad) + MAD_BLOCK];
	uint8_t *mad = umad_get_mad(umad);
	int mgmt_class, method;
	size_t offs;

	if (!eng.open || len < IB_SA_DATA_OFFS || len > MAD_BLOCK)
		return -1;
	memset(umad, 0, sizeof(umad));
	memcpy(mad, request, len);
	mgmt_class = (int)mad_get_field(mad, 0, IB_MAD_MGMTCLASS_F);
	method = (int)mad_get_field(mad, 0, IB_MAD_METHOD_F);
	if (!eng.wire.supports(eng.wire.self, mgmt_class))
		return -1;
	offs = mad_class_data_offset(mgmt_class);
	/* the 7-bit method plus the response bit: Report -> ReportResp, Get and
	 * Set -> GetResp */
	if (method == IB_MAD_METHOD_SET)
		mad_set_field(mad, 0, IB_MAD_METHOD_F, IB_MAD_METHOD_GET);
	mad_set_field(mad, 0, IB_MAD_RESPONSE_F, 1);
	mad_set_field(mad, 0, IB_MAD_STATUS_F, status);
	if (data && data_len && offs + data_len <= MAD_BLOCK)
		memcpy(mad + offs, data, data_len);
	umad_set_addr(umad, (int)to->lid, (int)to->qpn, (int)to->sl, (int)to->qkey);
	if (eng.wire.send(eng.wire.self, mgmt_class, umad, MAD_BLOCK, 0) < 0)
		return -1;
	eng.stats.sent++;
	return 0;
}

int mad_engine_smp_get(const ib_portid_t *target, unsigned attr_id, unsigned attr_mod,
		       mad_done_fn done, void *ctx)
{
	struct mad_call c = {
		.mgmt_class = target->lid ? IB_SMI_CLASS : IB_SMI_DIRECT_CLASS,
		.method = IB_MAD_METHOD_GET,
		.attr_id = attr_id,
		.attr_mod = attr_mod,
	};

	return mad_engine_call(target, &c, done, ctx);
}

int mad_engine_perf(unsigned lid, int method, unsigned attr_id, const uint8_t *data,
		    size_t data_len, mad_done_fn done, void *ctx)
{
	struct mad_call c = {
		.mgmt_class = IB_PERFORMANCE_CLASS,
		.method = method,
		.attr_id = attr_id,
		.data = data,
		.data_len = data_len,
	};
	ib_portid_t to;

	mad_portid_gs(&to, lid);
	return mad_engine_call(&to, &c, done, ctx);
}

int mad_engine_attach(const struct mad_transport *wire)
{
	if (eng.open)
		return -1;
	/* 1.5 MB of address space; only the LIDs used are ever touched */
	eng.by_lid = calloc(MAD_UNICAST_LIDS, sizeof(*eng.by_lid));
	if (!eng.by_lid)
		return -1;
	mad_guard_reset(); /* a new port, a new question */
	eng.wire = *wire;
	eng.open = true;
	return 0;
}

bool mad_engine_lid_silent(unsigned lid, unsigned mgmt_class)
{
	struct silence *x = lid < MAD_UNICAST_LIDS && eng.by_lid && eng.by_lid[lid].silences
			    ? find_silence(&eng.by_lid[lid], mgmt_class) : NULL;

	if (x)
		x->wanted = true; /* asked: probed when due, as a request failed at once */
	return x != NULL;
}

void mad_engine_lid_wake(unsigned lid)
{
	if (lid >= MAD_UNICAST_LIDS || !eng.by_lid)
		return;
	for (struct silence *x = eng.by_lid[lid].silences; x; x = x->next) {
		x->wanted = true;
		mad_ts_add_ms(&x->until, 0);
	}
}

/* Requests not yet sent, dropped without callbacks. */
static void drop_queued(void)
{
	for (size_t lid = 0; lid <= MAD_UNICAST_LIDS; lid++) {
		struct mad_dest *d = lid < MAD_UNICAST_LIDS ? (eng.by_lid ? &eng.by_lid[lid] : NULL)
							    : &eng.directed;

		while (d && d->head) {
			struct mad_request *r = d->head;

			d->head = r->next;
			free(r);
		}
		if (d) {
			d->tail = NULL;
			d->ready = false;
		}
	}
	eng.ready_head = eng.ready_tail = NULL;
	eng.n_queued = 0;
}

void mad_engine_stop_calling_back(void)
{
	if (!eng.open)
		return;
	eng.silent = true;
	drop_queued();
}

/* Why closing waits for answers: under libumad2sim (the simulator), a MAD
 * that arrives while the process exits can deadlock the library's exit
 * handler (it holds its device lock while it joins its receive thread,
 * which waits for that lock to deliver the MAD), and the daemon never
 * exits. Waiting here for what is in flight, at most one try's deadline
 * and never more than a couple of seconds, leaves nothing to arrive. On
 * hardware it costs the same short wait and nothing else. */
#define CLOSE_WAIT_MAX_MS 2000

static void wait_for_answers(void)
{
	struct timespec now, limit;
	unsigned ms = eng.timeout_ms + eng.timeout_ms / 4 + 10;

	if (!eng.wire.wait)
		return;
	clock_gettime(CLOCK_MONOTONIC, &limit);
	mad_ts_add_ms(&limit, ms < CLOSE_WAIT_MAX_MS ? ms : CLOSE_WAIT_MAX_MS);
	while (eng.n_in_flight || eng.n_queued) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (mad_ts_passed(&limit, &now))
			break;
		mad_engine_expire(&now); /* silent: a timeout ends its request */
		if (eng.n_in_flight || eng.n_queued)
			eng.wire.wait(eng.wire.self, eng.timeout_ms / 8 + 1);
	}
}

void mad_engine_close(void)
{
	if (!eng.open)
		return;
	if (!eng.silent)
		mad_engine_stop_calling_back();
	wait_for_answers();
	if (eng.wire.stop_receiving)
		eng.wire.stop_receiving(eng.wire.self);
	eng.open = false;
	if (eng.timer)
		snmp_alarm_unregister(eng.timer);
	eng.timer = 0;
	/* Requests still pending are dropped without callbacks: their owners
	 * are being torn down too. */
	for (size_t b = 0; b < IN_FLIGHT_BUCKETS; b++) {
		while (eng.in_flight[b]) {
			struct mad_request *r = eng.in_flight[b];

			eng.in_flight[b] = r->next;
			free(r);
		}
	}
	drop_queued();
	mad_guard_drop_held(); /* dropped too, as the queued */
	for (size_t k = 0; k < eng.n_silences; k++)
		free(eng.silences[k]); /* by_lid, their destinations, goes below */
	free(eng.silences);
	eng.silences = NULL;
	eng.n_silences = eng.cap_silences = 0;
	eng.probes_in_flight = 0;
	eng.directed = (struct mad_dest){0};
	free(eng.by_lid);
	eng.by_lid = NULL;
	eng.n_in_flight = 0;
	eng.silent = false;
	if (eng.wire.close)
		eng.wire.close(eng.wire.self);
	memset(&eng.wire, 0, sizeof(eng.wire));
}
