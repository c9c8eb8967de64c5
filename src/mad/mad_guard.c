/* The MAD engine's M_Key guard (mad_internal.h): whether an SMP may be sent
 * at all, asked of this port's own PortInfo. */
#include "ibsnmpd/netsnmp.h"

#include <stdbool.h>
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
 * protected fabric costs this port one violation, not a discovery's. */
static struct {
	bool refused, probing, unsettled;
	unsigned long suspects; /* SMP tries unanswered since one was answered */
	struct mad_request *held, *held_tail;
	struct timespec next;   /* the next question allowed */
	unsigned interval_s;
	void (*changed)(bool refused, void *arg);
	void *changed_arg;
} guard;

static void guard_done(void *ctx, int result, const uint8_t *data, size_t len);

/* Seconds between two questions while SMPs are refused (the default of
 * pmDiscoveryInterval until the topology area sets it). */
static unsigned guard_interval(void)
{
	return guard.interval_s ? guard.interval_s : 300;
}

/* The guard's question: this port's PortInfo, directed-routed, no retry. */
static void guard_ask(void)
{
	struct mad_request *r = mad_engine_new_directed();

	if (!r)
		return;
	r->mgmt_class = IB_SMI_DIRECT_CLASS;
	r->method = IB_MAD_METHOD_GET;
	r->attr_id = IB_ATTR_PORT_INFO;
	r->done = guard_done;
	r->guard = true;
	guard.probing = true;
	mad_ts_add_ms(&guard.next, (guard.refused ? guard_interval() : GUARD_SUSPECT_S) * 1000u);
	mad_engine_queue_first(r);
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

static void guard_done(void *ctx, int result, const uint8_t *data, size_t len)
{
	bool first = guard.unsettled;

	(void)ctx;
	(void)data;
	(void)len;
	guard.probing = false;
	guard.unsettled = false;
	if (result == MAD_TIMEOUT) /* protected: what went unanswered was violations */
		mad_engine_count_violations(guard.suspects);
	guard.suspects = 0;
	if (first && result == MAD_OK) /* the start's question, not a suspicion's */
		memset(&guard.next, 0, sizeof(guard.next));
	if (result == MAD_OK && guard.refused) {
		guard.refused = false;
		snmp_log(LOG_NOTICE, "this port answers SMPs again (M_Key): sending them again\n");
		if (guard.changed)
			guard.changed(false, guard.changed_arg);
	} else if (result == MAD_TIMEOUT && !guard.refused) {
		guard.refused = true;
		mad_ts_add_ms(&guard.next, guard_interval() * 1000u);
		snmp_log(LOG_ERR, "this port does not answer SMPs: the fabric is protected by M_Key "
			 "(protect bits 2 or 3) and %s: no SMP is sent (each would count as an M_Key "
			 "violation and raise trap 256 at the SM) but one PortInfo of this port every "
			 "%u s. Served meanwhile: the nodes, links and port states the SM's SA gives "
			 "(discoverySource auto) and the counters (PerfMgt needs no key). Not served "
			 "without the key: what only SMPs read (SMA-MIB's tables of the local node "
			 "and of the nodes' contexts, forwarding tables, the hardware's vitals, "
			 "the partition check)\n",
			 mad_engine_has_mkey() ? "mKey is not the fabric's key" : "no mKey is set",
			 guard_interval());
		if (guard.changed)
			guard.changed(true, guard.changed_arg);
	} else if (first && guard.changed) {
		guard.changed(guard.refused, guard.changed_arg); /* settled */
	}
	guard_release();
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
	if (guard.refused && !guard.probing && mad_ts_passed(&guard.next, now))
		guard_ask();
}

void mad_guard_reset(void)
{
	guard.refused = guard.probing = false;
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
