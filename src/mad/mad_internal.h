/* Between the MAD engine's files: its requests and queues (mad_engine.c)
 * and the M_Key guard (mad_guard.c), which decides whether an SMP may go. */
#ifndef IBSNMPD_MAD_INTERNAL_H
#define IBSNMPD_MAD_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <infiniband/mad.h>

#include "ibsnmpd/mad_engine.h"

struct mad_dest;

struct mad_request {
	struct mad_request *next; /* in its destination's queue, or its in-flight bucket */
	struct mad_dest *dest;
	ib_portid_t target;
	int mgmt_class, method;
	unsigned attr_id, attr_mod;
	size_t data_len;
	uint8_t data[IB_VENDOR_RANGE1_DATA_SIZE]; /* the largest: a vendor class's (232) */
	uint64_t sa_sm_key, sa_comp_mask;
	uint32_t tid;
	unsigned tries_left;
	struct timespec deadline;
	struct timespec sent;     /* its last try's, for its LID's answer time */
	mad_done_fn done;         /* NULL: the engine's own probe */
	void *ctx;
	bool guard;               /* the M_Key guard's questions of this port: always sent */
};

bool mad_request_is_smp(const struct mad_request *r);
void mad_ts_add_ms(struct timespec *t, unsigned ms);
bool mad_ts_passed(const struct timespec *t, const struct timespec *now);

/* ---- mad_engine.c, for the guard ---- */

/* A request to this port's own SMA, by directed route (the caller fills it). */
struct mad_request *mad_engine_new_directed(void);
/* A request to a LID's GS agents (QP1; the caller fills it). */
struct mad_request *mad_engine_new_lid(unsigned lid);
/* r queued first at its destination (a retry, or what waited). */
void mad_engine_queue_first(struct mad_request *r);
/* Attached to a port; a pump now, unless a feeder is feeding. */
bool mad_engine_is_open(void);
void mad_engine_pump_unless_feeding(void);
void mad_engine_count_violations(unsigned long n);
bool mad_engine_has_mkey(void);

/* ---- mad_guard.c, for the engine ---- */

/* r, an SMP, fails at once: SMPs are refused. */
bool mad_guard_refuses(const struct mad_request *r);
/* r, an SMP, waits for the guard's answer (taken over): true. */
bool mad_guard_hold(struct mad_request *r);
/* A try of r went unanswered: a violation if the fabric turns out
 * protected; may_ask: this port is asked when that is due. An SMA
 * answered: what went before was none. */
void mad_guard_unanswered(const struct mad_request *r, bool may_ask);
void mad_guard_answered(void);
/* No SMP is tried again while the guard asks, nor once it refuses them. */
bool mad_guard_stops_retries(const struct mad_request *r);
/* The timer: this port asked again when the interval is over. */
void mad_guard_due(const struct timespec *now);
/* A new port: a new question. What waits is dropped without callbacks. */
void mad_guard_reset(void);
void mad_guard_drop_held(void);

#endif
