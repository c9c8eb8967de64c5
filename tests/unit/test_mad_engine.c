/* The MAD engine's scheduling against a fake transport (mad_engine.h): the
 * window of MADs in flight, destinations taking turns within their limit,
 * directed-route MADs outside it, retries first in their queue, timeouts
 * (the test gives the time), answers matched by TID, malformed ones
 * dropped, requests of others handed on, failed sends, stopping and
 * closing. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <infiniband/umad.h>
#include <infiniband/mad.h>

#include "ibsnmpd/clock.h"
#include "ibsnmpd/mad_engine.h"
#include "ibsnmpd/netsnmp.h"

/* ---- the fake wire: what was sent, in order ------------------------------------- */

#define SENT_MAX 256

struct sent {
	int mgmt_class;
	unsigned lid, attr_id, attr_mod;
	uint32_t tid;
	uint8_t mad[256];
};

static struct {
	struct sent sent[SENT_MAX];
	size_t n;
	bool fail;      /* the next sends fail */
	bool closed;
	bool answer_on_wait; /* wait answers what was sent since the last wait */
	size_t answered, waits;
} wire;

static bool fake_supports(void *self, int mgmt_class)
{
	(void)self;
	return mgmt_class != IB_CC_CLASS; /* no agent for one class */
}

static int fake_send(void *self, int mgmt_class, void *umad, size_t len, unsigned timeout_ms)
{
	struct sent *s;
	uint8_t *mad = umad_get_mad(umad);

	(void)self;
	(void)timeout_ms;
	assert_int_equal(len, 256);
	if (wire.fail)
		return -1;
	assert_true(wire.n < SENT_MAX);
	s = &wire.sent[wire.n++];
	s->mgmt_class = mgmt_class;
	s->lid = ntohs(umad_get_mad_addr(umad)->lid);
	s->attr_id = mad_get_field(mad, 0, IB_MAD_ATTRID_F);
	s->attr_mod = mad_get_field(mad, 0, IB_MAD_ATTRMOD_F);
	s->tid = (uint32_t)mad_get_field64(mad, 0, IB_MAD_TRID_F);
	memcpy(s->mad, mad, sizeof(s->mad));
	return 0;
}

static void fake_close(void *self)
{
	(void)self;
	wire.closed = true;
}

static void answer(size_t i, unsigned status, uint8_t value);

static void fake_wait(void *self, unsigned ms)
{
	struct timespec t = {.tv_nsec = (long)ms * 1000000};

	(void)self;
	wire.waits++;
	if (!wire.answer_on_wait) {
		nanosleep(&t, NULL);
		return;
	}
	while (wire.answered < wire.n)
		answer(wire.answered++, 0, 7);
}

static const struct mad_transport fake = {
	.supports = fake_supports, .send = fake_send, .wait = fake_wait, .close = fake_close,
};

/* The answer to sent MAD i: a GetResp with status, its data's first octet value. */
static void answer(size_t i, unsigned status, uint8_t value)
{
	uint8_t mad[256];
	const struct mad_source from = {.lid = wire.sent[i].lid, .qpn = 1};
	int cls = wire.sent[i].mgmt_class;

	memcpy(mad, wire.sent[i].mad, sizeof(mad));
	mad_set_field(mad, 0, IB_MAD_METHOD_F, IB_MAD_METHOD_GET_RESPONSE & 0x7f);
	mad_set_field(mad, 0, IB_MAD_RESPONSE_F, 1);
	if (cls == IB_SMI_DIRECT_CLASS)
		mad_set_field(mad, 0, IB_DRSMP_STATUS_F, status);
	else
		mad_set_field(mad, 0, IB_MAD_STATUS_F, status);
	mad[mad_class_data_offset(cls)] = value;
	mad_engine_received(mad, sizeof(mad), 0, &from);
	mad_engine_pump();
}

/* ---- what the callbacks got -------------------------------------------------------- */

struct outcome {
	unsigned calls;
	int result;
	uint8_t first;
};

static void done(void *ctx, int result, const uint8_t *data, size_t len)
{
	struct outcome *o = ctx;

	o->calls++;
	o->result = result;
	o->first = data && len ? data[0] : 0;
}

static int perf_get(unsigned lid, unsigned attr, struct outcome *o)
{
	return mad_engine_perf(lid, IB_MAD_METHOD_GET, attr, NULL, 0, done, o);
}

static void far_future(struct timespec *t)
{
	clock_gettime(CLOCK_MONOTONIC, t);
	t->tv_sec += 3600;
}

/* Past every request's deadline (a timeout of 1 s), before any silent
 * destination's probe is due (SILENT_MIN_MS, 5 s). */
static void past_the_deadlines(struct timespec *t)
{
	clock_gettime(CLOCK_MONOTONIC, t);
	t->tv_sec += 2;
}

/* The engine's counters run on across the tests: each looks at its own. */
static struct mad_engine_stats stats_before;

static int setup(void **state)
{
	(void)state;
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_ALARM_DONT_USE_SIG, 1);
	memset(&wire, 0, sizeof(wire));
	mad_engine_set_limits(1000, 2, 256, 4);
	mad_engine_get_stats(&stats_before);
	if (mad_engine_attach(&fake))
		return -1;
	/* the M_Key guard's first question, answered: SMPs go out as asked */
	assert_false(mad_engine_smp_guard_settled());
	assert_int_equal(wire.n, 1);
	answer(0, 0, 0);
	assert_true(mad_engine_smp_guard_settled());
	memset(&wire, 0, sizeof(wire));
	mad_engine_get_stats(&stats_before);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	mad_engine_set_local_lid(0); /* the guard's: the next setup's question is one MAD */
	mad_engine_set_timeout_max(0);
	mad_engine_set_limits(10, 2, 256, 4); /* closing waits for no one long */
	mad_engine_close();
	return 0;
}

/* ---- tests ------------------------------------------------------------------------------ */

static void the_window_bounds_what_is_in_flight(void **state)
{
	struct outcome o[10] = {{0}};
	struct mad_engine_stats st;

	(void)state;
	mad_engine_set_limits(1000, 2, 4, 4);
	for (unsigned i = 0; i < 10; i++)
		assert_int_equal(perf_get(10 + i, IB_GSI_PORT_COUNTERS, &o[i]), 0);
	assert_int_equal(wire.n, 4);
	mad_engine_get_stats(&st);
	assert_int_equal(st.in_flight, 4);
	assert_int_equal(st.queued, 6);
	answer(0, 0, 0x11);
	assert_int_equal(o[0].calls, 1);
	assert_int_equal(o[0].result, MAD_OK);
	assert_int_equal(o[0].first, 0x11);
	assert_int_equal(wire.n, 5); /* one answer: one more out */
	assert_int_equal(wire.sent[4].lid, 14);
	for (size_t i = 1; i < 10; i++)
		answer(i, 0, 0);
	for (int i = 0; i < 10; i++)
		assert_int_equal(o[i].calls, 1);
	mad_engine_get_stats(&st);
	assert_int_equal(st.in_flight, 0);
	assert_int_equal(st.queued, 0);
	assert_int_equal(st.sent - stats_before.sent, 10);
	assert_int_equal(st.answered - stats_before.answered, 10);
}

/* A feeder makes requests only as the window has room: a sweep of many
 * ports keeps no more than about the window queued, and every request it
 * made is sent and answered; then it is forgotten. */
struct feed_state {
	unsigned made, limit, calls;
	struct outcome o[40];
};

static bool feed_two(void *ctx)
{
	struct feed_state *f = ctx;

	f->calls++;
	if (f->made == f->limit)
		return false;
	for (int k = 0; k < 2; k++, f->made++) /* two requests to one destination */
		assert_int_equal(perf_get(100 + f->made / 2, IB_GSI_PORT_COUNTERS, &f->o[f->made]), 0);
	return true;
}

static void a_feeder_fills_the_window_as_it_drains(void **state)
{
	static struct feed_state f = {.limit = 40};
	static struct mad_feeder feeder = {.next = feed_two, .ctx = &f};
	struct mad_engine_stats st;

	(void)state;
	mad_engine_set_limits(1000, 2, 4, 4);
	mad_engine_feed(&feeder);
	assert_int_equal(wire.n, 4);
	assert_int_equal(f.made, 4); /* not 40: only what the window takes */
	mad_engine_get_stats(&st);
	assert_int_equal(st.queued, 0);
	for (size_t i = 0; i < wire.n; i++) {
		answer(i, 0, 0);
		mad_engine_get_stats(&st);
		assert_true(st.queued <= 2);
	}
	assert_int_equal(wire.n, 40);
	assert_int_equal(f.made, 40);
	for (int i = 0; i < 40; i++)
		assert_int_equal(f.o[i].calls, 1);
	assert_int_equal(f.calls, 21); /* 20 that made two, one that said no more */
	mad_engine_pump();
	assert_int_equal(f.calls, 21);
}

/* Destinations with requests and room take turns for the window: a sweep
 * keeps every node busy instead of queueing on one; each holds at most its
 * limit. */
static void destinations_take_turns_within_their_limit(void **state)
{
	struct outcome o[9] = {{0}};

	(void)state;
	mad_engine_set_limits(1000, 2, 3, 2);
	for (int i = 0; i < 4; i++)
		perf_get(1, IB_GSI_PORT_COUNTERS, &o[i]);
	for (int i = 4; i < 8; i++)
		perf_get(2, IB_GSI_PORT_COUNTERS, &o[i]);
	perf_get(3, IB_GSI_PORT_COUNTERS, &o[8]);
	/* LID 1 up to its limit, then the window is full */
	assert_int_equal(wire.n, 3);
	assert_int_equal(wire.sent[0].lid, 1);
	assert_int_equal(wire.sent[1].lid, 1);
	assert_int_equal(wire.sent[2].lid, 2);
	/* each answer frees a place in the window: the next destination in
	 * turn takes it (LID 2, then 3), not the one that answered */
	answer(0, 0, 0);
	assert_int_equal(wire.n, 4);
	assert_int_equal(wire.sent[3].lid, 2);
	answer(1, 0, 0);
	assert_int_equal(wire.n, 5);
	assert_int_equal(wire.sent[4].lid, 3);
	answer(2, 0, 0);
	assert_int_equal(wire.n, 6);
	assert_int_equal(wire.sent[5].lid, 1);
	/* a wider window: LID 2 and LID 1 in turn, up to their limits; LID 2's
	 * last request waits for one of its two in flight, whatever the window */
	mad_engine_set_limits(1000, 2, 16, 2);
	answer(4, 0, 0);
	assert_int_equal(o[8].calls, 1);
	assert_int_equal(wire.n, 8);
	assert_int_equal(wire.sent[6].lid, 2);
	assert_int_equal(wire.sent[7].lid, 1);
	answer(5, 0, 0);
	assert_int_equal(wire.n, 8);
	answer(3, 0, 0);
	assert_int_equal(wire.n, 9);
	assert_int_equal(wire.sent[8].lid, 2);
}

/* Directed-route SMPs (no LID: the local SMA, nodes without one yet) share
 * one destination without the per-destination limit. */
static void directed_route_is_not_limited_per_destination(void **state)
{
	struct outcome o[6] = {{0}};
	ib_portid_t local;

	(void)state;
	mad_engine_set_limits(1000, 2, 16, 1);
	mad_portid_local(&local);
	for (int i = 0; i < 6; i++)
		assert_int_equal(mad_engine_smp_get(&local, IB_ATTR_PORT_INFO, (unsigned)i, done, &o[i]),
				 0);
	assert_int_equal(wire.n, 6);
	for (size_t i = 0; i < 6; i++) {
		assert_int_equal(wire.sent[i].mgmt_class, IB_SMI_DIRECT_CLASS);
		assert_int_equal(wire.sent[i].attr_mod, i);
	}
	answer(3, 0, 7);
	assert_int_equal(o[3].result, MAD_OK);
	assert_int_equal(o[3].first, 7);
}

/* A timeout sends the request again, before what waits behind it at its
 * destination, until the retries are spent: then MAD_TIMEOUT. */
static void timeouts_retry_first_then_fail(void **state)
{
	struct outcome a = {0}, b = {0}, c = {0};
	struct timespec later;
	struct mad_engine_stats st;

	(void)state;
	mad_engine_set_limits(1000, 2, 16, 1);
	perf_get(5, IB_GSI_PORT_COUNTERS, &a);
	perf_get(5, IB_GSI_PORT_COUNTERS_EXT, &b);
	assert_int_equal(wire.n, 1);
	past_the_deadlines(&later);
	mad_engine_expire(&later);
	assert_int_equal(wire.n, 2);
	assert_int_equal(wire.sent[1].attr_id, IB_GSI_PORT_COUNTERS); /* the retry, not b */
	assert_int_not_equal(wire.sent[1].tid, wire.sent[0].tid);
	mad_engine_expire(&later);
	assert_int_equal(wire.n, 3);
	assert_int_equal(a.calls, 0);
	mad_engine_expire(&later);
	assert_int_equal(a.calls, 1);
	assert_int_equal(a.result, MAD_TIMEOUT);
	/* three tries unanswered are one request's, not a dead node (a lossy
	 * one loses them all now and then): b goes, and its three too */
	assert_int_equal(b.calls, 0);
	assert_int_equal(wire.n, 4);
	assert_int_equal(wire.sent[3].attr_id, IB_GSI_PORT_COUNTERS_EXT);
	for (int i = 0; i < 3; i++)
		mad_engine_expire(&later);
	assert_int_equal(b.calls, 1);
	assert_int_equal(b.result, MAD_TIMEOUT);
	assert_int_equal(wire.n, 6);
	/* six in a row: taken for dead, c fails at once, unsent, instead of
	 * timing out in its turn */
	perf_get(5, IB_GSI_PORT_COUNTERS, &c);
	assert_int_equal(c.calls, 1);
	assert_int_equal(c.result, MAD_TIMEOUT);
	assert_int_equal(wire.n, 6);
	/* a late answer to a's first try matches nothing */
	answer(0, 0, 0);
	assert_int_equal(a.calls, 1);
	mad_engine_get_stats(&st);
	assert_int_equal(st.timeouts - stats_before.timeouts, 3); /* a, b, c */
	assert_int_equal(st.dropped - stats_before.dropped, 1);
	/* not yet due: nothing happens */
	clock_gettime(CLOCK_MONOTONIC, &later);
	mad_engine_expire(&later);
	assert_int_equal(wire.n, 6);
}

/* A node that lets a request fail after every retry is taken for dead: what
 * waits for it, and what comes for it for a while, fails at once (a dead
 * switch of 64 ports costs one request's tries, not 16 rounds of them);
 * other nodes go on. (An answer from it, or SILENT_MIN_MS, ends that.) */
static void a_silent_destination_fails_at_once_until_it_answers(void **state)
{
	struct outcome port[12] = {{0}}, other = {0}, again = {0}, after = {0};
	struct timespec later;

	(void)state;
	mad_engine_set_limits(1000, 0, 16, 4);
	for (int i = 0; i < 12; i++)
		perf_get(9, IB_GSI_PORT_COUNTERS, &port[i]);
	perf_get(10, IB_GSI_PORT_COUNTERS, &other);
	assert_int_equal(wire.n, 5); /* 4 to LID 9 (its limit), 1 to LID 10 */
	answer(4, 0, 0);             /* LID 10 answers */
	past_the_deadlines(&later);
	mad_engine_expire(&later);   /* LID 9's four fail: the other eight with them */
	for (int i = 0; i < 12; i++) {
		assert_int_equal(port[i].calls, 1);
		assert_int_equal(port[i].result, MAD_TIMEOUT);
	}
	assert_int_equal(other.result, MAD_OK);
	assert_int_equal(wire.n, 5);
	perf_get(9, IB_GSI_PORT_COUNTERS, &again); /* still dead: not sent */
	assert_int_equal(again.calls, 1);
	assert_int_equal(again.result, MAD_TIMEOUT);
	assert_int_equal(wire.n, 5);
	/* other nodes are not affected */
	perf_get(10, IB_GSI_PORT_COUNTERS, &after);
	assert_int_equal(wire.n, 6);
}

/* Its silence over, the engine probes a dead node itself, when something
 * asked it meanwhile: the request that failed, once, no retries; requests
 * still fail at once (no sweep waits on it). Unanswered, the silence goes
 * on, longer; answered, the node is asked again. Silence is per class (a
 * node silent to one agent answers another's requests). Probes take a
 * sixteenth of the window at most. */
static void the_engine_probes_a_silent_node_itself(void **state)
{
	struct outcome a = {0}, a2 = {0}, during = {0}, again = {0}, after = {0};
	struct outcome dead[40] = {{0}}, dead2[40] = {{0}};
	struct timespec later;
	struct mad_engine_stats st;
	unsigned long probes;

	(void)state;
	mad_engine_set_limits(1000, 0, 32, 4);
	/* two tries unanswered in a row (madRetries 0: two requests): dead */
	perf_get(9, IB_GSI_PORT_COUNTERS_EXT, &a);
	perf_get(9, IB_GSI_PORT_COUNTERS_EXT, &a2);
	past_the_deadlines(&later);
	mad_engine_expire(&later);
	assert_int_equal(wire.n, 2);
	far_future(&later);
	mad_engine_expire(&later);   /* due, but nobody asked: no probe */
	assert_int_equal(wire.n, 2);
	/* asking is wanting it probed, as a request that fails at once */
	assert_true(mad_engine_lid_silent(9, IB_PERFORMANCE_CLASS));
	assert_false(mad_engine_lid_silent(9, IB_SMI_CLASS));
	perf_get(9, IB_GSI_PORT_COUNTERS, &during); /* fails at once, unsent */
	assert_int_equal(during.calls, 1);
	assert_int_equal(during.result, MAD_TIMEOUT);
	assert_int_equal(wire.n, 2);
	mad_engine_expire(&later);   /* asked and due: one probe, the request that failed */
	assert_int_equal(wire.n, 3);
	assert_int_equal(wire.sent[2].attr_id, IB_GSI_PORT_COUNTERS_EXT);
	past_the_deadlines(&later);
	mad_engine_expire(&later);   /* the probe times out: still silent, no retry */
	assert_true(mad_engine_lid_silent(9, IB_PERFORMANCE_CLASS));
	assert_int_equal(wire.n, 3);
	perf_get(9, IB_GSI_PORT_COUNTERS, &again);
	assert_int_equal(again.result, MAD_TIMEOUT);
	far_future(&later);          /* the longer silence over: probed again */
	mad_engine_expire(&later);
	assert_int_equal(wire.n, 4);
	answer(3, 0, 0);             /* it answers: alive, asked again */
	assert_false(mad_engine_lid_silent(9, IB_PERFORMANCE_CLASS));
	assert_int_equal(a.calls, 1);    /* a probe calls nobody back */
	assert_int_equal(a2.calls, 1);
	perf_get(9, IB_GSI_PORT_COUNTERS, &after);
	assert_int_equal(wire.n, 5);
	answer(4, 0, 0);
	assert_int_equal(after.result, MAD_OK);
	/* forty dead LIDs due at once, each asked: two probes in flight (32 / 16) */
	for (int i = 0; i < 40; i++) {
		perf_get(100 + i, IB_GSI_PORT_COUNTERS, &dead[i]);
		perf_get(100 + i, IB_GSI_PORT_COUNTERS, &dead2[i]);
	}
	for (int i = 0; i < 5; i++) {
		past_the_deadlines(&later);
		later.tv_sec += 2 * i;
		mad_engine_expire(&later);
	}
	for (int i = 0; i < 40; i++) {
		struct outcome o = {0};

		assert_true(mad_engine_lid_silent(100 + i, IB_PERFORMANCE_CLASS));
		perf_get(100 + i, IB_GSI_PORT_COUNTERS, &o);
		assert_int_equal(o.result, MAD_TIMEOUT);
	}
	mad_engine_get_stats(&st);
	probes = st.probes;
	far_future(&later);
	mad_engine_expire(&later);
	mad_engine_get_stats(&st);
	assert_int_equal(st.probes - probes, 2);
	assert_int_equal(st.in_flight, 2);
}

/* On a fabric protected by M_Key without the key (or with a wrong one): an
 * SMP times out, this port's own PortInfo is asked and is not answered
 * either, while its PerfMgt answers: SMPs fail at once, unsent (each would
 * be a violation); PerfMgt goes on; one question every interval; answered,
 * SMPs are sent again. */
static void without_the_m_key_smps_stop_but_one_question(void **state)
{
	struct outcome a = {0}, b = {0}, pm = {0}, c = {0};
	struct timespec later;
	ib_portid_t to7, to8, to9;
	size_t pma;

	(void)state;
	mad_engine_set_limits(1000, 0, 16, 4);
	mad_engine_set_timeout_max(1500); /* the guard's questions: within a second and a half */
	mad_engine_set_smp_guard_interval(60);
	mad_engine_set_local_lid(1);
	ib_portid_set(&to7, 7, 0, 0);
	ib_portid_set(&to8, 8, 0, 0);
	ib_portid_set(&to9, 9, 0, 0);
	mad_engine_smp_get(&to7, IB_ATTR_NODE_INFO, 0, done, &a);
	assert_int_equal(wire.n, 1);
	past_the_deadlines(&later);
	mad_engine_expire(&later);         /* a times out: the guard asks this port */
	assert_int_equal(a.result, MAD_TIMEOUT);
	assert_int_equal(wire.n, 3);       /* its PortInfo and, with it, its PerfMgt */
	pma = wire.sent[1].mgmt_class == IB_PERFORMANCE_CLASS ? 1 : 2;
	assert_int_equal(wire.sent[pma].attr_id, CLASS_PORT_INFO);
	assert_int_equal(wire.sent[pma].lid, 1);
	assert_int_equal(wire.sent[3 - pma].mgmt_class, IB_SMI_DIRECT_CLASS);
	assert_int_equal(wire.sent[3 - pma].attr_id, IB_ATTR_PORT_INFO);
	answer(pma, 0, 0);                 /* the PMA answers... */
	assert_false(mad_engine_smps_refused());
	past_the_deadlines(&later);
	mad_engine_expire(&later);         /* ...the SMA asked with it does not: M_Key */
	assert_true(mad_engine_smps_refused());
	mad_engine_smp_get(&to8, IB_ATTR_PORT_INFO, 1, done, &b);
	assert_int_equal(b.calls, 1);
	assert_int_equal(b.result, MAD_TIMEOUT); /* at once, unsent */
	assert_int_equal(wire.n, 3);
	perf_get(8, IB_GSI_PORT_COUNTERS, &pm);  /* PerfMgt needs no key */
	assert_int_equal(wire.n, 4);
	answer(3, 0, 0);
	assert_int_equal(pm.result, MAD_OK);
	far_future(&later);
	mad_engine_expire(&later);         /* the interval over: one question */
	assert_int_equal(wire.n, 6);
	answer(wire.sent[4].mgmt_class == IB_SMI_DIRECT_CLASS ? 4 : 5, 0, 0); /* SMPs again */
	assert_false(mad_engine_smps_refused());
	mad_engine_smp_get(&to9, IB_ATTR_NODE_INFO, 0, done, &c);
	assert_int_equal(wire.n, 7);
}

/* MADs lost, not refused: an SMP times out, and neither this port's
 * PortInfo nor its PerfMgt answers. Nothing is refused: SMPs go on (and
 * time out), and the question comes again with the next SMP unanswered,
 * at most every 10 s; the pause after the loss ends is that, not the
 * interval of a protected fabric (pmDiscoveryInterval, 300 s). */
static void lost_mads_are_not_the_m_key(void **state)
{
	struct outcome a = {0}, b = {0}, c = {0};
	struct timespec later;
	ib_portid_t to7, to8, to9;

	(void)state;
	mad_engine_set_limits(1000, 0, 16, 4);
	mad_engine_set_timeout_max(1500);
	mad_engine_set_smp_guard_interval(300);
	mad_engine_set_local_lid(1);
	ib_portid_set(&to7, 7, 0, 0);
	ib_portid_set(&to8, 8, 0, 0);
	ib_portid_set(&to9, 9, 0, 0);
	mad_engine_smp_get(&to7, IB_ATTR_NODE_INFO, 0, done, &a);
	past_the_deadlines(&later);
	mad_engine_expire(&later);         /* a times out: its PortInfo and PerfMgt asked */
	assert_int_equal(wire.n, 3);
	past_the_deadlines(&later);
	mad_engine_expire(&later);         /* neither answered: lost, not refused */
	assert_false(mad_engine_smps_refused());
	assert_int_equal(mad_engine_smp_access(), 1);
	mad_engine_smp_get(&to8, IB_ATTR_NODE_INFO, 0, done, &b);
	assert_int_equal(wire.n, 4);       /* sent, not failed at once */
	/* it times out within 10 s of the question: no question yet */
	past_the_deadlines(&later);
	mad_engine_expire(&later);
	assert_int_equal(b.result, MAD_TIMEOUT);
	assert_int_equal(wire.n, 4);
	/* 11 s after the question, the next SMP unanswered asks again */
	mad_engine_smp_get(&to9, IB_ATTR_NODE_INFO, 0, done, &c);
	assert_int_equal(wire.n, 5);
	clock_gettime(CLOCK_MONOTONIC, &later);
	later.tv_sec += 13;
	mad_engine_expire(&later);
	assert_int_equal(c.result, MAD_TIMEOUT);
	assert_int_equal(wire.n, 7);
	answer(wire.sent[5].mgmt_class == IB_SMI_DIRECT_CLASS ? 5 : 6, 0, 0); /* the loss ended */
	assert_false(mad_engine_smps_refused());
}

/* A LID that answers late is given the time it takes (RFC 6298's smoothed
 * round trip and four times its variation), at least madTimeout; a try it
 * leaves unanswered doubles that until it answers again. A LID never heard
 * from is given madTimeout. */
static void a_slow_lid_is_given_the_time_it_takes(void **state)
{
	struct outcome o[8] = {{0}};
	struct mad_answer_time t;
	struct timespec pause = {.tv_nsec = 30 * 1000000L}, later;
	unsigned before;

	(void)state;
	mad_engine_set_limits(10, 0, 16, 4); /* madTimeout 10 ms */
	mad_engine_set_timeout_max(0);       /* eight times it: 80 ms */
	assert_false(mad_engine_lid_answer_time(5, &t));
	for (int i = 0; i < 6; i++) {        /* each answered 30 ms after it went */
		perf_get(5, IB_GSI_PORT_COUNTERS, &o[i]);
		nanosleep(&pause, NULL);
		answer(wire.n - 1, 0, 0);
		assert_int_equal(o[i].result, MAD_OK);
	}
	assert_true(mad_engine_lid_answer_time(5, &t));
	assert_int_equal(t.answers, 6);
	assert_true(t.smoothed_us >= 29000); /* (more on a loaded machine) */
	assert_true(t.timeout_ms >= 30 && t.timeout_ms <= 80); /* more than madTimeout */
	before = t.timeout_ms;
	perf_get(5, IB_GSI_PORT_COUNTERS, &o[6]); /* unanswered: the time doubles */
	clock_gettime(CLOCK_MONOTONIC, &later);
	later.tv_sec += 1;
	mad_engine_expire(&later);
	assert_int_equal(o[6].result, MAD_TIMEOUT);
	assert_true(mad_engine_lid_answer_time(5, &t));
	assert_true(t.timeout_ms >= 2 * before || t.timeout_ms == 80);
	mad_engine_set_limits(1000, 2, 256, 4);
}

/* The transport's own "no answer" (the kernel's timeout) is a try too. */
static void a_transport_timeout_is_a_try(void **state)
{
	struct outcome a = {0}, b = {0};
	const struct mad_source from = {.lid = 5};

	(void)state;
	mad_engine_set_limits(1000, 1, 16, 4);
	perf_get(5, IB_GSI_PORT_COUNTERS, &a);
	mad_engine_received(wire.sent[0].mad, 256, ETIMEDOUT, &from);
	mad_engine_pump();
	assert_int_equal(wire.n, 2);
	assert_false(mad_engine_lid_silent(5, IB_PERFORMANCE_CLASS));
	mad_engine_received(wire.sent[1].mad, 256, ETIMEDOUT, &from);
	mad_engine_pump();
	assert_int_equal(a.calls, 1);
	assert_int_equal(a.result, MAD_TIMEOUT);
	assert_false(mad_engine_lid_silent(5, IB_PERFORMANCE_CLASS)); /* one request's */
	perf_get(5, IB_GSI_PORT_COUNTERS, &b);
	mad_engine_received(wire.sent[2].mad, 256, ETIMEDOUT, &from);
	mad_engine_pump();
	mad_engine_received(wire.sent[3].mad, 256, ETIMEDOUT, &from);
	mad_engine_pump();
	assert_int_equal(b.result, MAD_TIMEOUT);
	/* four tries in a row: taken for dead, what asks it fails at once (a
	 * sweep can tell) */
	assert_true(mad_engine_lid_silent(5, IB_PERFORMANCE_CLASS));
	assert_false(mad_engine_lid_silent(6, IB_PERFORMANCE_CLASS));
}

/* An answer that does not fit its request (another attribute) is dropped:
 * the request stays in flight and its real answer still counts; a MAD
 * status is the result. */
static void malformed_answers_are_dropped(void **state)
{
	struct outcome a = {0}, b = {0};
	struct mad_engine_stats st;
	uint8_t short_mad[16] = {0};
	const struct mad_source from = {.lid = 6};

	(void)state;
	perf_get(6, IB_GSI_PORT_COUNTERS, &a);
	perf_get(7, IB_GSI_PORT_COUNTERS, &b);
	mad_set_field(wire.sent[0].mad, 0, IB_MAD_ATTRID_F, IB_GSI_PORT_SAMPLES_CONTROL);
	answer(0, 0, 1);
	assert_int_equal(a.calls, 0);
	mad_engine_received(short_mad, sizeof(short_mad), 0, &from);
	mad_engine_get_stats(&st);
	assert_int_equal(st.dropped - stats_before.dropped, 2);
	mad_set_field(wire.sent[0].mad, 0, IB_MAD_ATTRID_F, IB_GSI_PORT_COUNTERS);
	answer(0, 0, 2);
	assert_int_equal(a.calls, 1);
	assert_int_equal(a.first, 2);
	answer(1, 0x0c, 0); /* unsupported attribute */
	assert_int_equal(b.result, 0x0c);
}

static unsigned unsolicited_calls, unsolicited_lid;

static void on_unsolicited(void *ctx, const uint8_t *mad, size_t len,
			   const struct mad_source *from)
{
	(void)ctx;
	(void)mad;
	(void)len;
	unsolicited_calls++;
	unsolicited_lid = from->lid;
}

static void requests_of_others_go_to_the_unsolicited_handler(void **state)
{
	uint8_t report[256] = {0};
	const struct mad_source from = {.lid = 1, .qpn = 1};

	(void)state;
	mad_set_field(report, 0, IB_MAD_MGMTCLASS_F, IB_SA_CLASS);
	mad_set_field(report, 0, IB_MAD_METHOD_F, IB_MAD_METHOD_REPORT);
	mad_engine_set_unsolicited(on_unsolicited, NULL);
	mad_engine_received(report, sizeof(report), 0, &from);
	assert_int_equal(unsolicited_calls, 1);
	assert_int_equal(unsolicited_lid, 1);
	mad_engine_set_unsolicited(NULL, NULL);
	mad_engine_received(report, sizeof(report), 0, &from);
	assert_int_equal(unsolicited_calls, 1);
}

static void failed_sends_and_missing_agents(void **state)
{
	struct outcome a = {0};
	struct mad_call cc = {.mgmt_class = IB_CC_CLASS, .method = IB_MAD_METHOD_GET};
	ib_portid_t to;

	(void)state;
	mad_portid_gs(&to, 9);
	assert_int_equal(mad_engine_call(&to, &cc, done, &a), -1); /* no agent: not queued */
	wire.fail = true;
	assert_int_equal(perf_get(9, IB_GSI_PORT_COUNTERS, &a), 0);
	assert_int_equal(a.calls, 1);
	assert_int_equal(a.result, MAD_SEND_FAILED);
}

/* Closing drops what waits, without callbacks, and closes the wire. */
static void closing_drops_everything_quietly(void **state)
{
	struct outcome o[8] = {{0}};

	(void)state;
	mad_engine_set_limits(40, 2, 2, 1);
	for (int i = 0; i < 8; i++)
		perf_get(20 + (unsigned)(i % 2), IB_GSI_PORT_COUNTERS, &o[i]);
	mad_engine_close();
	assert_true(wire.closed);
	for (int i = 0; i < 8; i++)
		assert_int_equal(o[i].calls, 0);
	/* and a new attach starts from nothing */
	assert_int_equal(mad_engine_attach(&fake), 0);
	assert_int_equal(perf_get(20, IB_GSI_PORT_COUNTERS, &o[0]), 0);
	assert_int_equal(wire.sent[wire.n - 1].lid, 20);
}

/* Stopping: queued requests are dropped, new ones still go out (an
 * unsubscription), nothing calls back; closing waits for the answers to
 * what is in flight. */
static void stopping_waits_for_answers_without_callbacks(void **state)
{
	struct outcome o[5] = {{0}};
	uint8_t report[256] = {0};
	const struct mad_source from = {.lid = 1, .qpn = 1};

	(void)state;
	mad_engine_set_limits(1000, 2, 2, 1);
	for (int i = 0; i < 4; i++)
		perf_get(20 + (unsigned)i, IB_GSI_PORT_COUNTERS, &o[i]);
	assert_int_equal(wire.n, 2);
	mad_engine_set_unsolicited(on_unsolicited, NULL);
	unsolicited_calls = 0;
	mad_engine_stop_calling_back();
	assert_int_equal(perf_get(30, IB_GSI_PORT_COUNTERS, &o[4]), 0); /* waits for room */
	mad_set_field(report, 0, IB_MAD_MGMTCLASS_F, IB_SA_CLASS);
	mad_set_field(report, 0, IB_MAD_METHOD_F, IB_MAD_METHOD_REPORT);
	mad_engine_received(report, sizeof(report), 0, &from);
	wire.answer_on_wait = true;
	mad_engine_close();
	mad_engine_set_unsolicited(NULL, NULL);
	assert_true(wire.closed);
	assert_int_equal(unsolicited_calls, 0);
	assert_int_equal(wire.n, 3); /* 20, 21, then 30; 22 and 23 were dropped */
	assert_int_equal(wire.sent[2].lid, 30);
	assert_int_equal(wire.answered, 3);
	for (int i = 0; i < 5; i++)
		assert_int_equal(o[i].calls, 0);
	assert_int_equal(mad_engine_attach(&fake), 0); /* for the teardown */
}

/* Nothing answers: closing gives up after one try's deadline, without
 * retrying. Whether it waited at all is the clock's: a try's deadline that
 * passed before close looked (a machine loaded enough, under the
 * sanitizers, to hold this thread for the try between two calls: seen
 * beside a CPU hog with a try of 400 ms) leaves nothing to wait for, and that is right too. So the wait
 * is checked when close came before the deadline, as it does but on such a
 * machine; the rest always. */
static void closing_waits_no_longer_than_a_try(void **state)
{
	struct outcome o = {0};
	double sent, closing;

	(void)state;
	mad_engine_set_limits(1000, 3, 8, 4);
	sent = monotonic_seconds(); /* before the send: the deadline is later */
	perf_get(20, IB_GSI_PORT_COUNTERS, &o);
	closing = monotonic_seconds();
	mad_engine_close();
	assert_true(wire.closed);
	if (closing - sent < 0.6) /* 0.4 s to spare for close to look */
		assert_true(wire.waits > 0);
	else
		print_message("close came %.0f ms after the send: its try had ended\n",
			      (closing - sent) * 1000);
	assert_int_equal(wire.n, 1);
	assert_int_equal(o.calls, 0);
	assert_int_equal(mad_engine_attach(&fake), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(the_window_bounds_what_is_in_flight, setup, teardown),
		cmocka_unit_test_setup_teardown(a_feeder_fills_the_window_as_it_drains, setup,
						teardown),
		cmocka_unit_test_setup_teardown(destinations_take_turns_within_their_limit, setup,
						teardown),
		cmocka_unit_test_setup_teardown(directed_route_is_not_limited_per_destination, setup,
						teardown),
		cmocka_unit_test_setup_teardown(timeouts_retry_first_then_fail, setup, teardown),
		cmocka_unit_test_setup_teardown(a_transport_timeout_is_a_try, setup, teardown),
		cmocka_unit_test_setup_teardown(lost_mads_are_not_the_m_key, setup, teardown),
		cmocka_unit_test_setup_teardown(a_slow_lid_is_given_the_time_it_takes, setup,
						teardown),
		cmocka_unit_test_setup_teardown(without_the_m_key_smps_stop_but_one_question, setup,
						teardown),
		cmocka_unit_test_setup_teardown(the_engine_probes_a_silent_node_itself, setup,
						teardown),
		cmocka_unit_test_setup_teardown(a_silent_destination_fails_at_once_until_it_answers,
						setup, teardown),
		cmocka_unit_test_setup_teardown(malformed_answers_are_dropped, setup, teardown),
		cmocka_unit_test_setup_teardown(requests_of_others_go_to_the_unsolicited_handler, setup,
						teardown),
		cmocka_unit_test_setup_teardown(failed_sends_and_missing_agents, setup, teardown),
		cmocka_unit_test_setup_teardown(closing_drops_everything_quietly, setup, teardown),
		cmocka_unit_test_setup_teardown(stopping_waits_for_answers_without_callbacks, setup,
						teardown),
		cmocka_unit_test_setup_teardown(closing_waits_no_longer_than_a_try, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
