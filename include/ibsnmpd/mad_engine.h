/* The MAD engine: one local HCA port, many MADs in flight, replies handed to
 * callbacks on the daemon's (net-snmp's) thread. Nothing here blocks. The
 * port is a transport (mad_device.h opens the umad device's); the engine
 * schedules, matches, retries and times out. */
#ifndef IBSNMPD_MAD_ENGINE_H
#define IBSNMPD_MAD_ENGINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <infiniband/mad.h>

/* What the engine found when it opened the local port. */
struct mad_local_port {
	char ca_name[64];
	int port_num;
	int lid;
	int sm_lid;
	int state;      /* PortInfo PortState: 1 down .. 4 active */
	uint64_t port_guid;
};

enum mad_result {
	MAD_OK = 0,
	MAD_TIMEOUT = -1,   /* no answer after every retry */
	MAD_SEND_FAILED = -2,
	MAD_MALFORMED = -3, /* answer too short or not a response to our request */
	/* > 0: the MAD status field of the answer (e.g. 0x0c unsupported attribute) */
};

/* data points at the attribute data of the answer (SMP: 64 octets). */
typedef void (*mad_done_fn)(void *ctx, int result, const uint8_t *data, size_t data_len);

/* Where a received MAD came from. */
struct mad_source {
	unsigned lid, qpn, qkey, sl;
};

/* The wire. send() gets a umad buffer (struct ib_user_mad, the MAD built
 * and addressed) for the agent of mgmt_class, with the kernel's timeout
 * (0: none, a response); what comes in, the transport hands to
 * mad_engine_received() on the main thread, then calls mad_engine_pump(). */
struct mad_transport {
	void *self;
	bool (*supports)(void *self, int mgmt_class); /* an agent of the class is there */
	int (*send)(void *self, int mgmt_class, void *umad, size_t len, unsigned timeout_ms);
	/* Hands what arrives within ms to the engine (mad_engine_received);
	 * closing waits with it for the answers to MADs in flight. May be NULL. */
	void (*wait)(void *self, unsigned ms);
	void (*stop_receiving)(void *self); /* may be NULL */
	void (*close)(void *self);          /* may be NULL */
};

/* The engine on a transport; -1 if already attached or out of memory. */
int mad_engine_attach(const struct mad_transport *wire);
/* A MAD in: an answer to a request in flight (status: the transport's,
 * 0 or an errno such as ETIMEDOUT), or a request of someone else's
 * (mad_engine_set_unsolicited); a malformed one is dropped and counted. */
void mad_engine_received(const uint8_t *mad, size_t len, int status,
			 const struct mad_source *from);
/* Sends what the window and the destinations' limits allow now. */
void mad_engine_pump(void);
/* Requests in flight whose deadline is before now are sent again or fail
 * with MAD_TIMEOUT (the engine's timer calls it; tests give the time). */
void mad_engine_expire(const struct timespec *now);
/* Stopping, first step: no callback is called any more, so that the areas
 * can be torn down; what is queued is dropped. Sends still go out (an
 * unsubscription) and answers are still taken, and dropped. */
void mad_engine_stop_calling_back(void);
/* Waits, for a bounded time, for the answers to the MADs in flight, then
 * drops what is left (no callback) and closes the transport. */
void mad_engine_close(void);
/* max_outstanding: MADs in flight in all; max_per_destination: to one LID
 * (directed-route MADs only count against the first). */
void mad_engine_set_limits(unsigned timeout_ms, unsigned retries, unsigned max_outstanding,
			   unsigned max_per_destination);
/* madTimeoutMax: the longest a try to a slow LID is given (its answer time
 * estimated from its answers; 0: eight times timeout_ms, at most 60 s). */
void mad_engine_set_timeout_max(unsigned ms);
/* A LID's answer time as estimated (RFC 6298, mad_engine.c) and the time
 * its next try is given; false if none of its answers was timed yet. */
struct mad_answer_time {
	uint32_t smoothed_us, variation_us;
	uint32_t timeout_ms;
	uint32_t answers;
};
bool mad_engine_lid_answer_time(unsigned lid, struct mad_answer_time *out);

/* One request. data (may be NULL) is the attribute data of the request,
 * e.g. PortCounters' PortSelect. */
struct mad_call {
	int mgmt_class;   /* IB_SMI_CLASS, IB_SMI_DIRECT_CLASS, IB_PERFORMANCE_CLASS, IB_SA_CLASS,
			     MAD_VENDOR_NVIDIA_CLASS */
	int method;       /* IB_MAD_METHOD_GET or IB_MAD_METHOD_SET */
	unsigned attr_id, attr_mod;
	const uint8_t *data;
	size_t data_len;
	uint64_t sa_sm_key;    /* SA only: SM_Key of the SA header */
	uint64_t sa_comp_mask; /* SA only: ComponentMask */
};

/* Queues a request; done() gets the answer's attribute data (SMP: 64
 * octets at offset 64; GS classes: 192 octets at offset 64). */
int mad_engine_call(const ib_portid_t *target, const struct mad_call *call, mad_done_fn done,
		    void *ctx);
/* A sweep's requests made as the window has room, not all at once: the
 * engine calls next() when nothing queued can be sent and there is room;
 * next() queues one or a few requests (mad_engine_call and the like) and
 * returns false once it has none left (it is then forgotten, and must not
 * be freed before that). Feeders take turns in the order they came. With
 * them a sweep of 250,000 ports keeps a few thousand requests in memory,
 * and none waits long in a queue. */
struct mad_feeder {
	bool (*next)(void *ctx);
	void *ctx;
	struct mad_feeder *next_feeder; /* the engine's */
};
void mad_engine_feed(struct mad_feeder *f);

/* Queues a SubnGet(attr, mod) to target (directed route or LID). */
int mad_engine_smp_get(const ib_portid_t *target, unsigned attr_id, unsigned attr_mod,
		       mad_done_fn done, void *ctx);
/* A LID-routed GS destination (QP1, the well-known Q_Key). */
void mad_portid_gs(ib_portid_t *p, unsigned lid);
/* A PerfMgt (performance class) request to a LID: Get or Set of attr_id
 * with data (a Get's PortSelect, a Set's values; may be NULL). */
int mad_engine_perf(unsigned lid, int method, unsigned attr_id, const uint8_t *data,
		    size_t data_len, mad_done_fn done, void *ctx);

/* A directed route of zero hops: the local node's SMA. */
void mad_portid_local(ib_portid_t *p);

struct mad_engine_stats {
	unsigned long sent;      /* MADs put on the wire, retries included */
	unsigned long answered;
	unsigned long timeouts;  /* requests that failed after every retry */
	unsigned long dropped;   /* received MADs that matched nothing or were malformed */
	unsigned long probes;    /* the engine's own probes of LIDs taken for dead */
	unsigned long smps_refused;          /* not sent: the M_Key guard refuses SMPs */
	unsigned long mkey_violations_caused; /* SMPs unanswered on a fabric found protected */
	unsigned in_flight;
	unsigned queued;
};
void mad_engine_get_stats(struct mad_engine_stats *st);
/* The M_Key every SMP carries (mKey; 0: none), LID- and directed-routed. */
void mad_engine_set_mkey(uint64_t mkey);
/* A LID's own M_Key (mKeyFile: its port's), for the SMPs LID-routed to it;
 * 0: the one above. */
void mad_engine_set_lid_mkey(unsigned lid, uint64_t mkey);
/* The M_Key guard: when an SMP times out and this port's own PortInfo is not
 * answered either, the fabric is protected and the key is missing or wrong:
 * every SMP then fails at once, unsent (each would be a violation), but one
 * PortInfo of this port every `seconds` (pmDiscoveryInterval), which ends it
 * when answered. Logged once each way. */
void mad_engine_set_smp_guard_interval(unsigned seconds);
/* This port's LID (the device's at start): the guard also asks its PerfMgt
 * ClassPortInfo, so that MADs lost are not taken for M_Key (mad_guard.c). */
void mad_engine_set_local_lid(unsigned lid);
bool mad_engine_smps_refused(void);
/* 0 before the guard's first answer, 1 SMPs answered, 2 refused */
int mad_engine_smp_access(void);
/* changed(refused, arg) each time the guard begins or ends refusing SMPs
 * (the topology area: it discovers from the SA meanwhile); one listener. */
void mad_engine_on_smp_guard(void (*changed)(bool refused, void *arg), void *arg);
/* Whether the guard has had its first answer on this port (SMPs answered
 * or refused); if not, its question is asked now and changed() says when
 * it is answered. */
bool mad_engine_smp_guard_settled(void);
/* Whether requests of mgmt_class to lid fail at once now, without a MAD:
 * the engine takes that agent of the node for dead, until it answers one
 * of the engine's own probes. A sweep that wants one real try of a silent
 * node asks this and waits until it says false; asking is wanting the node
 * probed, as a request that fails at once is (the engine probes only what
 * someone asks for). */
bool mad_engine_lid_silent(unsigned lid, unsigned mgmt_class);
/* lid's node may answer again (a link to it came up): its silent classes
 * are probed at the engine's next turn, not at the end of their back-off. */
void mad_engine_lid_wake(unsigned lid);

/* NVIDIA's (Mellanox's) vendor class: GMPs to QP1, LID-routed only; its
 * data from offset 24, the 8-octet VS_Key first (vitals.h). */
#define MAD_VENDOR_NVIDIA_CLASS 0x0a

/* Attribute data size and offset of a class's MADs (SMP 64 at 64, SA 200 at
 * 56, vendor classes 0x09-0x0f 232 at 24, other GS classes 192 at 64). */
size_t mad_class_data_size(int mgmt_class);
size_t mad_class_data_offset(int mgmt_class);

/* A request that is not an answer to ours (an SA Report, an SMInfo query
 * the simulator hands to an IsSM client, ...): the whole MAD and where it
 * came from. */
typedef void (*mad_unsolicited_fn)(void *ctx, const uint8_t *mad, size_t len,
				   const struct mad_source *from);
void mad_engine_set_unsolicited(mad_unsolicited_fn fn, void *ctx);
/* Answers a received request: the same MAD with the response method
 * (Report -> ReportResp, Get/Set -> GetResp), the given status and, if data
 * is not NULL, that attribute data. */
int mad_engine_respond(const uint8_t *request, size_t len, const struct mad_source *to,
		       unsigned status, const uint8_t *data, size_t data_len);
/* Pure helper, unit-tested: checks a received MAD against the request it
 * claims to answer; returns the MAD status (0 ok) or MAD_MALFORMED. */
int mad_check_response(const uint8_t *mad, size_t len, int mgmt_class, unsigned attr_id,
		       unsigned attr_mod, uint32_t tid_low);

#endif
