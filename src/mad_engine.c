/* MAD engine over libibumad (transport) and libibmad (packet layout).
 *
 * Why a receive thread: the umad file descriptor cannot go into net-snmp's
 * select() set in every setting (libumad2sim, which the tests and the demo
 * use, hands out descriptors >= 1024 that only its poll() wrapper knows).
 * So one thread blocks in umad_recv() and passes each received MAD through a
 * queue and a self-pipe; the pipe's read end is what net-snmp selects on.
 * The thread never calls net-snmp. Sends, matching, timeouts, retries and
 * callbacks all run on the main thread.
 */
#include "ibsnmpd/netsnmp.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/umad.h>
#include <infiniband/mad.h>

#include "ibsnmpd/mad_engine.h"

#define MAD_BLOCK 256

struct mad_dest;

struct mad_request {
	struct mad_request *next; /* in its destination's queue, or its in-flight bucket */
	struct mad_dest *dest;
	ib_portid_t target;
	int mgmt_class, method;
	unsigned attr_id, attr_mod;
	size_t data_len;
	uint8_t data[IB_SA_DATA_SIZE]; /* the largest: SA */
	uint64_t sa_sm_key, sa_comp_mask;
	uint32_t tid;
	unsigned tries_left;
	struct timespec deadline;
	mad_done_fn done;
	void *ctx;
};

struct rx_item {
	struct rx_item *next;
	int status; /* umad status: 0 or an errno such as ETIMEDOUT */
	struct mad_source from;
	size_t len;
	uint8_t mad[MAD_BLOCK];
};

/* A destination: one LID, whose agent (a switch's PMA or SMA) answers one
 * MAD at a time on real hardware. Requests wait in their destination's
 * queue; destinations that have requests and room take turns (the ready
 * ring), so that a sweep keeps many nodes busy instead of queueing on one.
 * Directed-route MADs (no LID) share one destination without the
 * per-destination limit: they go to the local SMA, or to nodes not yet
 * given a LID, a few at a time. */
struct mad_dest {
	struct mad_request *head, *tail; /* not yet sent */
	struct mad_dest *next_ready;
	unsigned in_flight;
	bool ready;
};

#define MAD_UNICAST_LIDS 0xc000
/* in-flight requests by TID (sequential, so the low bits spread them) */
#define IN_FLIGHT_BUCKETS 1024

static struct {
	int fd;
	int agent[256];
	bool open;
	unsigned timeout_ms, retries, max_outstanding, max_per_dest;
	uint32_t next_tid;
	struct mad_dest *by_lid;                /* MAD_UNICAST_LIDS of them */
	struct mad_dest directed;
	struct mad_dest *ready_head, *ready_tail;
	struct mad_request *in_flight[IN_FLIGHT_BUCKETS]; /* sent, waiting */
	unsigned n_in_flight, n_queued;
	unsigned timer;
	struct mad_engine_stats stats;

	pthread_t rx_thread;
	atomic_bool rx_stop;
	bool rx_joined;
	pthread_mutex_t rx_lock;
	struct rx_item *rx_head, *rx_tail;
	bool rx_wake_pending; /* a byte is in the pipe or the main thread is draining */
	int pipe_r, pipe_w;
	mad_unsolicited_fn unsolicited;
	void *unsolicited_ctx;
} eng = {.fd = -1, .pipe_r = -1, .pipe_w = -1, .rx_lock = PTHREAD_MUTEX_INITIALIZER};

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

void mad_engine_set_limits(unsigned timeout_ms, unsigned retries, unsigned max_outstanding,
			   unsigned max_per_destination)
{
	eng.timeout_ms = timeout_ms ? timeout_ms : 1000;
	eng.retries = retries;
	eng.max_outstanding = max_outstanding ? max_outstanding : 1;
	eng.max_per_dest = max_per_destination ? max_per_destination : 1;
}

void mad_engine_get_stats(struct mad_engine_stats *st)
{
	*st = eng.stats;
	st->in_flight = eng.n_in_flight;
	st->queued = eng.n_queued;
}

/* ---- port selection ---------------------------------------------------- */

static void copy_name(char *dst, size_t n, const char *src)
{
	size_t len = strnlen(src, n - 1);

	memcpy(dst, src, len);
	dst[len] = '\0';
}

static bool is_ethernet(const umad_port_t *p)
{
	return !strcmp(p->link_layer, "Ethernet");
}

/* Picks ca/port: the configured ones, or the first active InfiniBand port,
 * or failing that the first InfiniBand port at all. */
static int choose_port(const char *want_ca, int want_port, char *ca_out, int *port_out,
		       char *err, size_t errlen)
{
	char names[UMAD_MAX_DEVICES][UMAD_CA_NAME_LEN];
	char seen[512] = "";
	int n = umad_get_cas_names(names, UMAD_MAX_DEVICES);
	char fallback_ca[UMAD_CA_NAME_LEN] = "";
	int fallback_port = 0;

	int readable = 0;

	for (int i = 0; i < n; i++) {
		umad_ca_t ca;

		if (umad_get_ca(names[i], &ca) < 0)
			continue;
		readable++;
		if (want_ca[0] && strcmp(want_ca, names[i])) {
			umad_release_ca(&ca);
			continue;
		}
		/* A switch has one management port, port 0; a CA ports 1..n. */
		for (int p = 0; p <= ca.numports && p < UMAD_CA_MAX_PORTS; p++) {
			umad_port_t *port = ca.ports[p];
			size_t used = strlen(seen);

			if (!port)
				continue;
			snprintf(seen + used, sizeof(seen) - used, "%s%.*s port %d (%.16s, state %d)",
				 used ? ", " : "", UMAD_CA_NAME_LEN, names[i], p, port->link_layer,
				 port->state);
			if (want_port && p != want_port)
				continue;
			if (is_ethernet(port)) {
				snmp_log(LOG_INFO, "skipping %s port %d: link layer is Ethernet "
					 "(RoCE ports are served by the DCBX tables, not by MADs)\n",
					 names[i], p);
				continue;
			}
			if (port->state == 4) {
				copy_name(ca_out, UMAD_CA_NAME_LEN, names[i]);
				*port_out = p;
				umad_release_ca(&ca);
				return 0;
			}
			if (!fallback_ca[0]) {
				copy_name(fallback_ca, sizeof(fallback_ca), names[i]);
				fallback_port = p;
			}
		}
		umad_release_ca(&ca);
	}
	if (readable == 0) {
		snprintf(err, errlen, "no InfiniBand device found (nothing in "
			 "/sys/class/infiniband); is the HCA driver loaded? (ibstat -l lists devices)");
		return -1;
	}
	if (fallback_ca[0]) {
		snmp_log(LOG_WARNING, "no active InfiniBand port; using %s port %d, which is "
			 "not active (is a subnet manager running?)\n", fallback_ca, fallback_port);
		copy_name(ca_out, UMAD_CA_NAME_LEN, fallback_ca);
		*port_out = fallback_port;
		return 0;
	}
	if (want_ca[0] || want_port)
		snprintf(err, errlen, "no usable InfiniBand port matches ca '%s' port %d; "
			 "ports found: %s", want_ca[0] ? want_ca : "(any)", want_port,
			 seen[0] ? seen : "none");
	else
		snprintf(err, errlen, "no InfiniBand port found (Ethernet ports are skipped); "
			 "ports found: %s", seen[0] ? seen : "none");
	return -1;
}

/* ---- receive thread ---------------------------------------------------- */

static void *rx_main(void *arg)
{
	(void)arg;
	while (!atomic_load(&eng.rx_stop)) {
		uint8_t buf[sizeof(struct ib_user_mad) + MAD_BLOCK + 64];
		int len = MAD_BLOCK;
		struct rx_item *it;
		bool wake;

		/* A bounded wait so that mad_engine_close() can stop the thread. */
		if (umad_recv(eng.fd, buf, &len, 200) < 0)
			continue;
		it = calloc(1, sizeof(*it));
		if (!it)
			continue;
		it->status = umad_status(buf);
		{
			ib_mad_addr_t *a = umad_get_mad_addr(buf);

			it->from.lid = ntohs(a->lid);
			it->from.qpn = ntohl(a->qpn);
			it->from.qkey = ntohl(a->qkey);
			it->from.sl = a->sl;
		}
		it->len = len > MAD_BLOCK ? MAD_BLOCK : (size_t)(len < 0 ? 0 : len);
		memcpy(it->mad, umad_get_mad(buf), it->len);
		pthread_mutex_lock(&eng.rx_lock);
		if (eng.rx_tail)
			eng.rx_tail->next = it;
		else
			eng.rx_head = it;
		eng.rx_tail = it;
		/* One wake-up per batch: while the main thread drains, it also
		 * takes what arrives meanwhile (on_pipe_readable). */
		wake = !eng.rx_wake_pending;
		eng.rx_wake_pending = true;
		pthread_mutex_unlock(&eng.rx_lock);
		if (wake && write(eng.pipe_w, "", 1) < 0 && errno != EAGAIN)
			break;
	}
	return NULL;
}

/* ---- main-thread side -------------------------------------------------- */

static void ts_add_ms(struct timespec *t, unsigned ms)
{
	clock_gettime(CLOCK_MONOTONIC, t);
	t->tv_sec += ms / 1000;
	t->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

static bool ts_passed(const struct timespec *t, const struct timespec *now)
{
	return now->tv_sec > t->tv_sec || (now->tv_sec == t->tv_sec && now->tv_nsec >= t->tv_nsec);
}

static void arm_timer(void);

static int send_one(struct mad_request *r)
{
	uint8_t umad[sizeof(struct ib_user_mad) + MAD_BLOCK];
	ib_rpc_t rpc;
	int agent = eng.agent[r->mgmt_class & 0xff];

	memset(umad, 0, sizeof(umad));
	memset(&rpc, 0, sizeof(rpc));
	rpc.mgtclass = r->mgmt_class;
	rpc.method = r->method;
	rpc.attr.id = r->attr_id;
	rpc.attr.mod = r->attr_mod;
	rpc.datasz = (int)mad_class_data_size(r->mgmt_class);
	rpc.dataoffs = (int)mad_class_data_offset(r->mgmt_class);
	rpc.mask = r->sa_comp_mask;
	r->tid = ++eng.next_tid ? eng.next_tid : ++eng.next_tid;
	rpc.trid = r->tid;
	if (mad_build_pkt(umad, &rpc, &r->target, NULL, r->data_len ? r->data : NULL) < 0)
		return -1;
	if (r->mgmt_class == IB_SA_CLASS) /* mad_build_pkt leaves the SM_Key out */
		mad_set_field64(umad_get_mad(umad), 0, IB_SA_MKEY_F, r->sa_sm_key);
	/* The kernel times the request out and reports it as a status; retries
	 * are ours, so that every transport behaves alike. */
	if (umad_send(eng.fd, agent, umad, MAD_BLOCK, (int)eng.timeout_ms, 0) < 0)
		return -1;
	eng.stats.sent++;
	DEBUGMSGTL(("ibsnmpd:mad", "sent class 0x%02x attr 0x%04x mod 0x%x tid 0x%08x to lid %d%s\n",
		    r->mgmt_class, r->attr_id, r->attr_mod, r->tid, r->target.lid,
		    r->target.lid ? "" : " (directed route)"));
	/* The simulator ignores the timeout: keep a deadline of our own, a little
	 * later than the kernel's so that on hardware the kernel's report wins. */
	ts_add_ms(&r->deadline, eng.timeout_ms + eng.timeout_ms / 4 + 10);
	return 0;
}

static void finish(struct mad_request *r, int result, const uint8_t *data, size_t len)
{
	if (result == MAD_TIMEOUT)
		eng.stats.timeouts++;
	r->done(r->ctx, result, data, len);
	free(r);
}

static struct mad_dest *dest_of(const ib_portid_t *target)
{
	if (target->lid > 0 && target->lid < MAD_UNICAST_LIDS && eng.by_lid)
		return &eng.by_lid[target->lid];
	return &eng.directed;
}

static bool dest_has_room(const struct mad_dest *d)
{
	return d == &eng.directed || d->in_flight < eng.max_per_dest;
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

/* Sends while the global window has room: one request of each ready
 * destination in turn. */
static void pump_queue(void)
{
	while (eng.ready_head && eng.n_in_flight < eng.max_outstanding) {
		struct mad_dest *d = eng.ready_head;
		struct mad_request *r = d->head;

		eng.ready_head = d->next_ready;
		if (!eng.ready_head)
			eng.ready_tail = NULL;
		d->ready = false;
		d->head = r->next;
		if (!d->head)
			d->tail = NULL;
		eng.n_queued--;
		if (send_one(r) < 0) {
			snmp_log(LOG_ERR, "umad_send failed: %s\n", strerror(errno));
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
	if (r->tries_left > 0) {
		r->tries_left--;
		queue_request(r, true); /* retries go first */
		return;
	}
	finish(r, MAD_TIMEOUT, NULL, 0);
}

/* -Drawmad: every MAD received, in hex (the fuzz targets' seed corpora
 * are captured this way from the simulated fabric). Not under "ibsnmpd",
 * so that -Dibsnmpd does not turn it on. */
static void debug_raw(const struct rx_item *it)
{
	char hex[2 * MAD_BLOCK + 1];

	DEBUGIF("rawmad") {
		for (size_t i = 0; i < it->len; i++)
			snprintf(hex + 2 * i, 3, "%02x", it->mad[i]);
		hex[2 * it->len] = '\0';
		DEBUGMSGTL(("rawmad", "from LID %u status %d: %s\n", it->from.lid,
			    it->status, hex));
	}
}

static void handle_rx(struct rx_item *it)
{
	uint32_t tid;
	struct mad_request *r = NULL;

	debug_raw(it);
	if (it->len < 24) {
		eng.stats.dropped++;
		snmp_log(LOG_WARNING, "dropping a MAD of %zu octets: too short\n", it->len);
		return;
	}
	if (!it->status && !mad_get_field(it->mad, 0, IB_MAD_RESPONSE_F)) {
		if (eng.unsolicited)
			eng.unsolicited(eng.unsolicited_ctx, it->mad, it->len, &it->from);
		else
			DEBUGMSGTL(("ibsnmpd:mad", "ignoring an unsolicited MAD (class 0x%02x)\n",
				    mad_get_field(it->mad, 0, IB_MAD_MGMTCLASS_F)));
		return;
	}
	tid = (uint32_t)mad_get_field64(it->mad, 0, IB_MAD_TRID_F);
	r = find_in_flight(tid);
	if (!r) {
		eng.stats.dropped++;
		DEBUGMSGTL(("ibsnmpd:mad", "dropping MAD tid 0x%08x: no request waits for it\n", tid));
		return;
	}
	if (it->status) {
		/* ETIMEDOUT from the kernel (or the simulator's "no answer"). */
		DEBUGMSGTL(("ibsnmpd:mad", "tid 0x%08x: transport status %d\n", tid, it->status));
		retry_or_fail(r);
		return;
	}
	int st = mad_check_response(it->mad, it->len, r->mgmt_class, r->attr_id, r->attr_mod, tid);
	if (st == MAD_MALFORMED) {
		eng.stats.dropped++;
		snmp_log(LOG_WARNING, "dropping a malformed answer to attr 0x%04x (tid 0x%08x)\n",
			 r->attr_id, tid);
		DEBUGMSGTL(("ibsnmpd:mad", "malformed: %zu octets, class 0x%02x method 0x%02x attr "
			    "0x%04x mod 0x%x\n", it->len, mad_get_field(it->mad, 0, IB_MAD_MGMTCLASS_F),
			    mad_get_field(it->mad, 0, IB_MAD_METHOD_F),
			    mad_get_field(it->mad, 0, IB_MAD_ATTRID_F),
			    mad_get_field(it->mad, 0, IB_MAD_ATTRMOD_F)));
		return; /* the request stays in flight and times out */
	}
	unlink_in_flight(r);
	eng.stats.answered++;
	DEBUGMSGTL(("ibsnmpd:mad", "answer to tid 0x%08x\n", tid));
	finish(r, st, it->mad + mad_class_data_offset(r->mgmt_class),
	       mad_class_data_size(r->mgmt_class));
}

static void on_pipe_readable(int fd, void *arg)
{
	char drain[256];
	struct rx_item *list;

	(void)arg;
	while (read(fd, drain, sizeof(drain)) > 0)
		;
	/* Answers that arrive while these are handled are taken in the same
	 * wake-up; the receive thread writes to the pipe again only after the
	 * list was found empty here. */
	for (;;) {
		pthread_mutex_lock(&eng.rx_lock);
		list = eng.rx_head;
		eng.rx_head = eng.rx_tail = NULL;
		if (!list)
			eng.rx_wake_pending = false;
		pthread_mutex_unlock(&eng.rx_lock);
		if (!list)
			break;
		while (list) {
			struct rx_item *next = list->next;

			handle_rx(list);
			free(list);
			list = next;
		}
		pump_queue();
	}
}

static void on_timer(unsigned reg, void *arg)
{
	struct timespec now;
	struct mad_request *r, *next;

	(void)reg;
	(void)arg;
	eng.timer = 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	for (size_t b = 0; b < IN_FLIGHT_BUCKETS && eng.n_in_flight; b++) {
		for (r = eng.in_flight[b]; r; r = next) {
			next = r->next;
			if (ts_passed(&r->deadline, &now)) {
				DEBUGMSGTL(("ibsnmpd:mad", "tid 0x%08x timed out\n", r->tid));
				retry_or_fail(r);
			}
		}
	}
	pump_queue();
}

/* While MADs are in flight, look at deadlines a few times per timeout. */
static void arm_timer(void)
{
	struct timeval tv;
	unsigned ms;

	if (eng.timer || !eng.n_in_flight)
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

	if (!eng.open || eng.agent[call->mgmt_class & 0xff] < 0 ||
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
	pump_queue();
	return 0;
}

int mad_engine_respond(const uint8_t *request, size_t len, const struct mad_source *to,
		       unsigned status, const uint8_t *data, size_t data_len)
{
	uint8_t umad[sizeof(struct ib_user_mad) + MAD_BLOCK];
	uint8_t *mad = umad_get_mad(umad);
	int mgmt_class, method, agent;
	size_t offs;

	if (!eng.open || len < IB_SA_DATA_OFFS || len > MAD_BLOCK)
		return -1;
	memset(umad, 0, sizeof(umad));
	memcpy(mad, request, len);
	mgmt_class = (int)mad_get_field(mad, 0, IB_MAD_MGMTCLASS_F);
	method = (int)mad_get_field(mad, 0, IB_MAD_METHOD_F);
	agent = eng.agent[mgmt_class & 0xff];
	if (agent < 0)
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
	if (umad_send(eng.fd, agent, umad, MAD_BLOCK, 0, 0) < 0)
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

int mad_engine_open(const char *ca_name, int port_num, struct mad_local_port *out,
		    char *err, size_t errlen, int *exit_code)
{
	char ca[UMAD_CA_NAME_LEN];
	int port = 0, fds[2];
	umad_port_t pinfo;
	/* SA last: a test shim waits for it (see tests/tools/sim_issm_shim.c) */
	static const int classes[] = {IB_SMI_CLASS, IB_SMI_DIRECT_CLASS, IB_PERFORMANCE_CLASS,
				      IB_SA_CLASS};

	*exit_code = 2;
	if (umad_init() < 0) {
		snprintf(err, errlen, "cannot initialise libibumad (is ib_umad loaded?)");
		return -1;
	}
	if (choose_port(ca_name ? ca_name : "", port_num, ca, &port, err, errlen) < 0)
		return -1;
	eng.fd = umad_open_port(ca, port);
	if (eng.fd < 0) {
		int e = -eng.fd;

		if (e == EACCES || e == EPERM) {
			*exit_code = 4;
			snprintf(err, errlen, "permission denied opening the umad device of %s port "
				 "%d (/dev/infiniband/umad*): run as root or give the daemon's user "
				 "read/write access to it", ca, port);
		} else {
			snprintf(err, errlen, "cannot open umad device of %s port %d: %s", ca, port,
				 strerror(e));
		}
		eng.fd = -1;
		return -1;
	}
	memset(eng.agent, -1, sizeof(eng.agent));
	/* 1.5 MB of address space; only the LIDs used are ever touched */
	eng.by_lid = calloc(MAD_UNICAST_LIDS, sizeof(*eng.by_lid));
	if (!eng.by_lid) {
		snprintf(err, errlen, "out of memory");
		umad_close_port(eng.fd);
		eng.fd = -1;
		return -1;
	}
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		/* the SA agent also takes Reports (traps forwarded by the SM) */
		long report_mask[16 / sizeof(long)] = {0};
		int id;

		report_mask[IB_MAD_METHOD_REPORT / (8 * sizeof(long))] |=
			1L << (IB_MAD_METHOD_REPORT % (8 * sizeof(long)));
		id = umad_register(eng.fd, classes[i], classes[i] == IB_SA_CLASS ? 2 : 1, 0,
				   classes[i] == IB_SA_CLASS ? report_mask : NULL);

		if (id < 0) {
			snprintf(err, errlen, "cannot register MAD agent for class 0x%02x on %s port "
				 "%d: %s", classes[i], ca, port, strerror(-id));
			umad_close_port(eng.fd);
			eng.fd = -1;
			return -1;
		}
		eng.agent[classes[i]] = id;
	}
	if (pipe(fds) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	eng.pipe_r = fds[0];
	eng.pipe_w = fds[1];
	fcntl(eng.pipe_r, F_SETFL, O_NONBLOCK);
	fcntl(eng.pipe_w, F_SETFL, O_NONBLOCK);
	fcntl(eng.pipe_r, F_SETFD, FD_CLOEXEC);
	fcntl(eng.pipe_w, F_SETFD, FD_CLOEXEC);
	atomic_store(&eng.rx_stop, false);
	eng.rx_joined = false;
	if (pthread_create(&eng.rx_thread, NULL, rx_main, NULL)) {
		snprintf(err, errlen, "cannot start the MAD receive thread");
		return -1;
	}
	register_readfd(eng.pipe_r, on_pipe_readable, NULL);
	eng.open = true;

	memset(out, 0, sizeof(*out));
	snprintf(out->ca_name, sizeof(out->ca_name), "%s", ca);
	out->port_num = port;
	if (umad_get_port(ca, port, &pinfo) == 0) {
		out->lid = (int)pinfo.base_lid;
		out->sm_lid = (int)pinfo.sm_lid;
		out->state = (int)pinfo.state;
		out->port_guid = be64toh(pinfo.port_guid);
		umad_release_port(&pinfo);
	}
	*exit_code = 0;
	return 0;
}

void mad_engine_stop_receiving(void)
{
	if (!eng.open || eng.rx_joined)
		return;
	atomic_store(&eng.rx_stop, true);
	pthread_join(eng.rx_thread, NULL);
	eng.rx_joined = true;
}

void mad_engine_close(void)
{
	if (!eng.open)
		return;
	mad_engine_stop_receiving();
	eng.open = false;
	unregister_readfd(eng.pipe_r);
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
	for (size_t lid = 0; lid <= MAD_UNICAST_LIDS; lid++) {
		struct mad_dest *d = lid < MAD_UNICAST_LIDS ? (eng.by_lid ? &eng.by_lid[lid] : NULL)
							    : &eng.directed;

		while (d && d->head) {
			struct mad_request *r = d->head;

			d->head = r->next;
			free(r);
		}
	}
	eng.ready_head = eng.ready_tail = NULL;
	free(eng.by_lid);
	eng.by_lid = NULL;
	eng.n_in_flight = eng.n_queued = 0;
	while (eng.rx_head) {
		struct rx_item *it = eng.rx_head;

		eng.rx_head = it->next;
		free(it);
	}
	eng.rx_tail = NULL;
	close(eng.pipe_r);
	close(eng.pipe_w);
	/* The umad port is left for exit() to close (this runs only when the
	 * daemon exits): under libumad2sim a MAD that arrives after the port is
	 * closed (a late answer, an SA Report) makes the simulator's own
	 * receive thread lock a NULL fd's mutex (ibsim umad2sim.c, __receiver)
	 * and the daemon dies with SIGSEGV while exiting; its exit handler
	 * stops that thread first. The kernel closes the real device at exit
	 * the same way. */
}
