/* The MAD engine's M_Key guard (mad_internal.h): whether an SMP may be sent
 * at all, asked of this port's own PortInfo. */
#include "ibsnmpd/netsnmp.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/mad.h>

#include "ibsnmpd/mad_engine.h"

#include "mad_internal.h"

#define GUARD_SUSPECT_S 10

/* The M_Key guard: on a fabric whose ports are protected (protect bits
 * 2, 3) an SMP without the right key goes unanswered, counts as a
 * violation and raises trap 256 at the SM. When an SMP times out, this
 * port's own PortInfo is asked (at most every GUARD_SUSPECT_S): if this
 * port does not answer either, no SMP is sent any more (each would be a
 * violation) but that one question, every interval_s, until it is
 * answered. The first SMP a port would send asks it first (unsettled),
 * and SMPs wait for the answer while the question is out (held): a
 * protected fabric costs this port one violation, not a discovery's.
 *
 * With the PortInfo, this port's PerfMgt ClassPortInfo is asked (by its
 * LID: PerfMgt has no M_Key). An SMA that does not answer while the PMA
 * asked with it does is M_Key; when neither answers, MADs are lost
 * (the port's link, its HCA, a simulator that drops them): nothing is
 * refused for interval_s then, and the question is asked again when an
 * SMP next times out, at most every GUARD_SUSPECT_S, so that SMPs are
 * read again at most that long after the loss ends (pmDiscoveryInterval,
 * 300 s by default, was the pause after a total loss before). */
static struct {
	bool refused, probing, unsettled;
	bool lost;              /* neither question answered: said once */
	unsigned long suspects; /* SMP tries unanswered since one was answered */
	struct mad_request *held, *held_tail;
	struct timespec next;   /* the next question allowed */
	unsigned interval_s;
	unsigned local_lid;     /* this port's, for the PerfMgt question (0: none) */
	/* the question's two answers while it is out: 0 not yet, else MAD_OK or not */
	int smp_result, pma_result;
	bool pma_asked;
	uintptr_t round;        /* the question's number: a late answer is the last one's */
	void (*changed)(bool refused, void *arg);
	void *changed_arg;
} guard;

static void guard_done(void *ctx, int result, const uint8_t *data, size_t len);
static void guard_pma_done(void *ctx, int result, const uint8_t *data, size_t len);

#define ANSWER_PENDING 0
#define ANSWER_OK 1
#define ANSWER_NONE 2

/* Seconds between two questions while SMPs are refused (the default of
 * pmDiscoveryInterval until the topology area sets it). */
static unsigned guard_interval(void)
{
	return guard.interval_s ? guard.interval_s : 300;
}

/* This port's PortInfo, directed-routed, no retry; it does not wait for a
 * silence to end. */
static void ask_smp(void)
{
	struct mad_request *r = mad_engine_new_directed();

	if (!r)
		return;
	r->mgmt_class = IB_SMI_DIRECT_CLASS;
	r->method = IB_MAD_METHOD_GET;
	r->attr_id = IB_ATTR_PORT_INFO;
	r->done = guard_done;
	r->ctx = (void *)guard.round;
	r->guard = true;
	mad_engine_queue_first(r);
}

/* This port's PerfMgt ClassPortInfo, by its LID, no retry (PerfMgt has no
 * M_Key); false if it cannot be asked. */
static bool ask_pma(void)
{
	struct mad_request *pma;

	if (!guard.local_lid || !(pma = mad_engine_new_lid(guard.local_lid)))
		return false;
	pma->mgmt_class = IB_PERFORMANCE_CLASS;
	pma->method = IB_MAD_METHOD_GET;
	pma->attr_id = CLASS_PORT_INFO;
	pma->done = guard_pma_done;
	pma->ctx = (void *)guard.round;
	pma->guard = true;
	mad_engine_queue_first(pma);
	return true;
}

/* The guard's question: this port's PortInfo and, asked with it, its
 * PerfMgt ClassPortInfo, so that both are answered (or not) by the same
 * moment of the fabric: a PerfMgt asked after the PortInfo had timed out
 * was answered when a stall of the fabric ended between them (a simulator
 * stopped 3 s of every 10), and taken for M_Key. Both wait madTimeoutMax
 * (mad_engine.c). Without a LID for the PMA, the PortInfo alone. */
static void guard_ask(void)
{
	guard.round++;
	guard.probing = true;
	guard.smp_result = guard.pma_result = ANSWER_PENDING;
	guard.pma_asked = ask_pma();
	mad_ts_add_ms(&guard.next, (guard.refused ? guard_interval() : GUARD_SUSPECT_S) * 1000u);
	DEBUGMSGTL(("ibsnmpd:mad", "M_Key guard: asking this port's PortInfo%s\n",
		    guard.pma_asked ? " and PerfMgt ClassPortInfo" : ""));
	ask_smp(); /* queued first: sent just before the PMA's */
}

/* r, an SMP, waits for the guard's answer. */
static void guard_hold(struct mad_request *r)
{
	r->next = NULL;
	if (guard.held_tail)
		guard.held_tail->next = r;
	else
		guard.held = r;
	guard.held_tail = r;
}

/* The SMPs that waited go on (first, in their order): sent if SMPs are
 * answered, failed at once if they are refused. */
static void guard_release(void)
{
	struct mad_request *r = guard.held, *rest = NULL;

	guard.held = guard.held_tail = NULL;
	while (r) { /* reversed, so that queueing each first keeps the order */
		struct mad_request *next = r->next;

		r->next = rest;
		rest = r;
		r = next;
	}
	while (rest) {
		struct mad_request *next = rest->next;

		mad_engine_queue_first(rest);
		rest = next;
	}
}

/* Both answers in (or the PortInfo's alone when no PerfMgt question went):
 * what they say. */
static void guard_decide(void)
{
	bool first = guard.unsettled;
	bool smp_ok = guard.smp_result == ANSWER_OK;
	bool pma_ok = guard.pma_asked && guard.pma_result == ANSWER_OK;

	guard.probing = false;
	guard.unsettled = false;
	if (!smp_ok && pma_ok) /* protected: what went unanswered was violations */
		mad_engine_count_violations(guard.suspects);
	guard.suspects = 0;
	if (first && smp_ok) /* the start's question, not a suspicion's */
		memset(&guard.next, 0, sizeof(guard.next));
	if (smp_ok || pma_ok)
		guard.lost = false;
	if (smp_ok && guard.refused) {
		guard.refused = false;
		snmp_log(LOG_NOTICE, "this port answers SMPs again (M_Key): sending them again\n");
		if (guard.changed)
			guard.changed(false, guard.changed_arg);
	} else if (!smp_ok && !pma_ok) {
		/* lost, not refused: what was decided stays, and the question
		 * comes again with the next SMP unanswered (refused: at the
		 * interval, when it is due anyway) */
		if (!guard.lost)
			snmp_log(LOG_WARNING, "this port answers no MAD: neither its PortInfo nor "
				 "its PerfMgt%s; MADs are lost, not refused by M_Key: SMPs %s\n",
				 guard.pma_asked ? "" : " (no LID to ask it by)",
				 guard.refused ? "stay refused" : "go on");
		guard.lost = true;
		if (!guard.refused)
			mad_ts_add_ms(&guard.next, GUARD_SUSPECT_S * 1000u);
		if (first && guard.changed)
			guard.changed(guard.refused, guard.changed_arg); /* settled */
	} else if (!smp_ok && !guard.refused) {
		guard.refused = true;
		mad_ts_add_ms(&guard.next, guard_interval() * 1000u);
		snmp_log(LOG_ERR, "this port does not answer SMPs: the fabric is protected by "
			 "M_Key (protect bits 2 or 3; its PerfMgt answers) and %s: no SMP is sent (each "
			 "would count as an M_Key violation and raise trap 256 at the SM) but one "
			 "PortInfo of this port every %u s. Served meanwhile: the nodes, links and "
			 "port states the SM's SA gives (discoverySource auto) and the counters "
			 "(PerfMgt needs no key). Not served without the key: what only SMPs read "
			 "(SMA-MIB's tables of the local node and of the nodes' contexts, forwarding "
			 "tables, the hardware's vitals, the partition check)\n",
			 mad_engine_has_mkey() ? "mKey is not the fabric's key" : "no mKey is set",
			 guard_interval());
		if (guard.changed)
			guard.changed(true, guard.changed_arg);
	} else if (first && guard.changed) {
		guard.changed(guard.refused, guard.changed_arg); /* settled */
	}
	guard_release();
}

/* An SMA that answers decides at once; one that does not, with its PMA's
 * answer (none asked: lost, not M_Key). */
static void guard_done(void *ctx, int result, const uint8_t *data, size_t len)
{
	if ((uintptr_t)ctx != guard.round || !guard.probing)
		return;
	guard.smp_result = result == MAD_OK ? ANSWER_OK : ANSWER_NONE;
	/* an answer tells this port's LID (the SM may have given another) */
	if (result == MAD_OK && data && len >= 64)
		guard.local_lid = (unsigned)mad_get_field((void *)data, 0, IB_PORT_LID_F);
	if (result == MAD_OK || !guard.pma_asked || guard.pma_result != ANSWER_PENDING)
		guard_decide();
}

static void guard_pma_done(void *ctx, int result, const uint8_t *data, size_t len)
{
	(void)data;
	(void)len;
	if ((uintptr_t)ctx != guard.round || !guard.probing)
		return;
	/* any answer is one, an error status too: the PMA is there */
	guard.pma_result = result >= 0 ? ANSWER_OK : ANSWER_NONE;
	if (guard.smp_result != ANSWER_PENDING)
		guard_decide();
}

bool mad_engine_smp_guard_settled(void)
{
	if (guard.unsettled && !guard.probing && mad_engine_is_open()) {
		guard_ask();
		mad_engine_pump_unless_feeding();
	}
	return !guard.unsettled;
}

/* ---- its interface (mad_engine.h) ---------------------------------------------- */

void mad_engine_set_local_lid(unsigned lid)
{
	guard.local_lid = lid;
}

void mad_engine_set_smp_guard_interval(unsigned seconds)
{
	guard.interval_s = seconds ? seconds : 1;
}

void mad_engine_on_smp_guard(void (*changed)(bool refused, void *arg), void *arg)
{
	guard.changed = changed;
	guard.changed_arg = arg;
}

int mad_engine_smp_access(void)
{
	return guard.unsettled ? 0 : guard.refused ? 2 : 1;
}

bool mad_engine_smps_refused(void)
{
	return guard.refused;
}

/* ---- what the engine asks of it (mad_internal.h) ---------------------------- */

bool mad_guard_refuses(const struct mad_request *r)
{
	return guard.refused && mad_request_is_smp(r) && !r->guard;
}

bool mad_guard_hold(struct mad_request *r)
{
	if (!mad_request_is_smp(r) || r->guard || !(guard.probing || guard.unsettled))
		return false;
	if (!guard.probing)
		guard_ask(); /* the port's first SMP: is the fabric protected? */
	guard_hold(r);
	return true;
}

void mad_guard_unanswered(const struct mad_request *r, bool may_ask)
{
	struct timespec now;

	if (!mad_request_is_smp(r))
		return;
	guard.suspects++; /* a violation, if the fabric turns out protected */
	if (!may_ask || r->guard || guard.probing || guard.refused)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (mad_ts_passed(&guard.next, &now))
		guard_ask(); /* is it M_Key? this port tells */
}

void mad_guard_answered(void)
{
	guard.suspects = 0;
}

bool mad_guard_stops_retries(const struct mad_request *r)
{
	return (guard.refused || guard.probing) && mad_request_is_smp(r) && !r->guard;
}

void mad_guard_due(const struct timespec *now)
{
	/* refused: the interval's question; lost: once an SMP went unanswered
	 * since the last question (the engine's timer gives the time, so that
	 * the unit tests can) */
	if ((guard.refused || (guard.lost && guard.suspects)) && !guard.probing &&
	    mad_ts_passed(&guard.next, now))
		guard_ask();
}

void mad_guard_reset(void)
{
	guard.refused = guard.probing = guard.lost = false;
	guard.unsettled = true;
	memset(&guard.next, 0, sizeof(guard.next));
}

void mad_guard_drop_held(void)
{
	while (guard.held) {
		struct mad_request *r = guard.held;

		guard.held = r->next;
		free(r);
	}
	guard.held_tail = NULL;
}
