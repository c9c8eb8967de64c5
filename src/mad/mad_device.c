/* The umad device as the MAD engine's transport (mad_device.h): the port
 * chosen, the MAD agents registered, sends, and a receive thread.
 *
 * Why a receive thread: the umad file descriptor cannot go into net-snmp's
 * select() set in every setting (libumad2sim, which the tests and the demo
 * use, hands out descriptors >= 1024 that only its poll() wrapper knows).
 * So one thread blocks in umad_recv() and passes each received MAD through a
 * queue and a self-pipe; the pipe's read end is what net-snmp selects on,
 * and the main thread hands the MADs to the engine. The thread never calls
 * net-snmp nor the engine.
 *
 * While answers are due and coming (a sweep), the main thread, once woken,
 * takes them from the device itself for up to DRAIN_MAX_MS and the receive
 * thread waits: an answer then costs no hand-over between threads (a
 * sweep's answers used to wake two threads each, issue 24). SNMP requests
 * wait for it at most that long; a millisecond without an answer ends it.
 *
 * Why a send thread: a umad write can wait. Through libumad2sim it is a
 * datagram to the simulator, whose socket holds ten before the writer
 * waits for it to read (net.unix.max_dgram_qlen): a starved simulator
 * held the main loop for a second. The main thread queues each MAD and
 * goes on; the thread writes them in order. A write that fails comes back
 * as the MAD with an error status (as the kernel reports a timeout), so
 * that the engine retries it as it would a MAD unanswered. */
#include "ibsnmpd/netsnmp.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/umad.h>
#include <infiniband/mad.h>

#include "ibsnmpd/mad_device.h"

#define MAD_BLOCK 256
#define DRAIN_MAX_MS 2

struct rx_item {
	struct rx_item *next;
	int status; /* umad status: 0 or an errno such as ETIMEDOUT */
	struct mad_source from;
	size_t len;
	uint8_t mad[MAD_BLOCK];
};

struct tx_item {
	struct tx_item *next;
	int agent;
	unsigned timeout_ms;
	size_t len;
	uint8_t umad[sizeof(struct ib_user_mad) + MAD_BLOCK];
};

/* The daemon reads the fabric through one port. */
static struct mad_device {
	int fd;
	int agent[256];
	pthread_t rx_thread;
	bool rx_running;
	atomic_bool rx_stop;
	pthread_mutex_t rx_lock;
	struct rx_item *rx_head, *rx_tail;
	bool rx_wake_pending; /* a byte is in the pipe or the main thread is draining */
	bool main_takes;      /* the main thread receives; the thread waits (rx_park) */
	pthread_cond_t rx_park;
	int pipe_r, pipe_w;
	/* the send thread's queue (tx_lock) */
	pthread_t tx_thread;
	bool tx_running, tx_stop;
	pthread_mutex_t tx_lock;
	pthread_cond_t tx_work;
	struct tx_item *tx_head, *tx_tail;
} dev = {.fd = -1, .pipe_r = -1, .pipe_w = -1, .rx_lock = PTHREAD_MUTEX_INITIALIZER,
	 .rx_park = PTHREAD_COND_INITIALIZER, .tx_lock = PTHREAD_MUTEX_INITIALIZER,
	 .tx_work = PTHREAD_COND_INITIALIZER};

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

/* ---- receiving ------------------------------------------------------------ */

/* One MAD from the device, waiting up to timeout_ms; false if none. */
static bool receive(struct rx_item *it, int timeout_ms)
{
	uint8_t buf[sizeof(struct ib_user_mad) + MAD_BLOCK + 64];
	int len = MAD_BLOCK;
	ib_mad_addr_t *a;

	if (umad_recv(dev.fd, buf, &len, timeout_ms) < 0)
		return false;
	it->next = NULL;
	it->status = umad_status(buf);
	a = umad_get_mad_addr(buf);
	it->from.lid = ntohs(a->lid);
	it->from.qpn = ntohl(a->qpn);
	it->from.qkey = ntohl(a->qkey);
	it->from.sl = a->sl;
	it->len = len > MAD_BLOCK ? MAD_BLOCK : (size_t)(len < 0 ? 0 : len);
	memcpy(it->mad, umad_get_mad(buf), it->len);
	return true;
}

/* Waits while the main thread receives (at most 200 ms a time, so that
 * stopping can end the thread). */
static void wait_while_main_takes(void)
{
	pthread_mutex_lock(&dev.rx_lock);
	while (dev.main_takes && !atomic_load(&dev.rx_stop)) {
		struct timespec until;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 200 * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&dev.rx_park, &dev.rx_lock, &until);
	}
	pthread_mutex_unlock(&dev.rx_lock);
}

/* An item for the main thread (the receive thread's, or a failed send's);
 * false if the main loop could not be woken. */
static bool rx_queue(struct rx_item *it)
{
	bool wake;

	pthread_mutex_lock(&dev.rx_lock);
	if (dev.rx_tail)
		dev.rx_tail->next = it;
	else
		dev.rx_head = it;
	dev.rx_tail = it;
	/* One wake-up per batch: while the main thread drains, it also
	 * takes what arrives meanwhile (on_pipe_readable). */
	wake = !dev.rx_wake_pending;
	dev.rx_wake_pending = true;
	pthread_mutex_unlock(&dev.rx_lock);
	return !(wake && write(dev.pipe_w, "", 1) < 0 && errno != EAGAIN);
}

static void *rx_main(void *arg)
{
	struct rx_item *it = NULL;

	(void)arg;
	while (!atomic_load(&dev.rx_stop)) {
		wait_while_main_takes();
		if (!it && !(it = malloc(sizeof(*it)))) {
			usleep(1000);
			continue;
		}
		/* A bounded wait so that stopping can end the thread. */
		if (!receive(it, 200))
			continue;
		it->next = NULL;
		if (!rx_queue(it)) {
			it = NULL;
			break;
		}
		it = NULL;
	}
	free(it);
	return NULL;
}

/* ---- sending ---------------------------------------------------------------- */

/* A send the device refused: the MAD back to the engine with the error as
 * its status, as the kernel hands back one that timed out. */
static void send_failed(const struct tx_item *t, int err)
{
	struct rx_item *it = malloc(sizeof(*it));

	if (!it)
		return; /* the engine's own deadline fails it */
	memset(it, 0, sizeof(*it));
	it->status = err ? err : EIO;
	it->len = MAD_BLOCK;
	memcpy(it->mad, umad_get_mad((void *)t->umad), MAD_BLOCK);
	rx_queue(it);
}

static void *tx_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&dev.tx_lock);
	for (;;) {
		struct tx_item *t;

		while (!dev.tx_head && !dev.tx_stop)
			pthread_cond_wait(&dev.tx_work, &dev.tx_lock);
		if (!dev.tx_head)
			break; /* stopping, and every MAD queued is written */
		t = dev.tx_head;
		dev.tx_head = t->next;
		if (!dev.tx_head)
			dev.tx_tail = NULL;
		pthread_mutex_unlock(&dev.tx_lock);
		if (umad_send(dev.fd, t->agent, t->umad, (int)t->len, (int)t->timeout_ms, 0) < 0)
			send_failed(t, errno);
		free(t);
		pthread_mutex_lock(&dev.tx_lock);
	}
	pthread_mutex_unlock(&dev.tx_lock);
	return NULL;
}

/* Ends the send thread once what is queued is written. */
static void stop_sending(void)
{
	if (!dev.tx_running)
		return;
	pthread_mutex_lock(&dev.tx_lock);
	dev.tx_stop = true;
	pthread_cond_signal(&dev.tx_work);
	pthread_mutex_unlock(&dev.tx_lock);
	pthread_join(dev.tx_thread, NULL);
	dev.tx_running = false;
}

static double elapsed_ms(const struct timespec *since)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - since->tv_sec) * 1e3 + (t.tv_nsec - since->tv_nsec) / 1e6;
}

static bool receive_on_main(struct rx_item *it, int timeout_ms)
{
	return receive(it, timeout_ms);
}

/* What the receive thread queued, to the engine; how many. */
static unsigned hand_queued(void)
{
	struct rx_item *list;
	unsigned n = 0;

	pthread_mutex_lock(&dev.rx_lock);
	list = dev.rx_head;
	dev.rx_head = dev.rx_tail = NULL;
	pthread_mutex_unlock(&dev.rx_lock);
	for (; list; n++) {
		struct rx_item *next = list->next;

		mad_engine_received(list->mad, list->len, list->status, &list->from);
		free(list);
		list = next;
	}
	return n;
}

/* On the main thread, woken by the receive thread: what it queued, and
 * while answers are due, what the device has, for up to DRAIN_MAX_MS (an
 * answer awaited a millisecond at most). */
static void on_pipe_readable(int fd, void *arg)
{
	char drain[256];
	struct rx_item it;
	struct timespec start;
	bool pending;

	(void)arg;
	while (read(fd, drain, sizeof(drain)) > 0)
		;
	clock_gettime(CLOCK_MONOTONIC, &start);
	pthread_mutex_lock(&dev.rx_lock);
	dev.main_takes = true;
	pthread_mutex_unlock(&dev.rx_lock);
	for (;;) {
		struct mad_engine_stats st;
		unsigned n = hand_queued();

		for (; n < 256 && receive_on_main(&it, 0); n++)
			mad_engine_received(it.mad, it.len, it.status, &it.from);
		mad_engine_pump();
		mad_engine_get_stats(&st);
		if (!st.in_flight || elapsed_ms(&start) >= DRAIN_MAX_MS)
			break;
		if (!n) {
			if (!receive_on_main(&it, 1))
				break; /* none coming now: the receive thread waits for them */
			mad_engine_received(it.mad, it.len, it.status, &it.from);
		}
	}
	/* The receive thread writes to the pipe again only once the list was
	 * found empty here: what it queued meanwhile wakes this loop anew. */
	pthread_mutex_lock(&dev.rx_lock);
	dev.main_takes = false;
	pending = dev.rx_wake_pending = dev.rx_head != NULL;
	pthread_cond_broadcast(&dev.rx_park);
	pthread_mutex_unlock(&dev.rx_lock);
	if (pending && write(dev.pipe_w, "", 1) < 0 && errno != EAGAIN)
		snmp_log(LOG_ERR, "MAD receive: cannot wake the main loop: %s\n", strerror(errno));
}

/* ---- the transport --------------------------------------------------------- */

static bool supports(void *self, int mgmt_class)
{
	(void)self;
	return dev.fd >= 0 && dev.agent[mgmt_class & 0xff] >= 0;
}

/* Queued for the send thread: the main thread never waits on the device. */
static int send_umad(void *self, int mgmt_class, void *umad, size_t len, unsigned timeout_ms)
{
	struct tx_item *t;
	bool was_empty;

	(void)self;
	if (len > MAD_BLOCK || !(t = malloc(sizeof(*t))))
		return -1;
	t->next = NULL;
	t->agent = dev.agent[mgmt_class & 0xff];
	/* The kernel times the request out and reports it as a status; retries
	 * are the engine's, so that every transport behaves alike. */
	t->timeout_ms = timeout_ms;
	t->len = len;
	memcpy(t->umad, umad, sizeof(struct ib_user_mad) + len);
	pthread_mutex_lock(&dev.tx_lock);
	was_empty = !dev.tx_head;
	if (dev.tx_tail)
		dev.tx_tail->next = t;
	else
		dev.tx_head = t;
	dev.tx_tail = t;
	if (was_empty)
		pthread_cond_signal(&dev.tx_work);
	pthread_mutex_unlock(&dev.tx_lock);
	return 0;
}

static void wait_received(void *self, unsigned ms)
{
	struct pollfd p = {.fd = dev.pipe_r, .events = POLLIN};

	(void)self;
	if (dev.pipe_r >= 0 && poll(&p, 1, (int)ms) > 0)
		on_pipe_readable(dev.pipe_r, NULL);
}

/* What is queued is written first (an unsubscription at exit), then the
 * threads end. */
static void stop_receiving(void *self)
{
	(void)self;
	stop_sending();
	if (!dev.rx_running)
		return;
	atomic_store(&dev.rx_stop, true);
	pthread_join(dev.rx_thread, NULL);
	dev.rx_running = false;
}

static void close_pipe(void)
{
	if (dev.pipe_r >= 0)
		close(dev.pipe_r);
	if (dev.pipe_w >= 0)
		close(dev.pipe_w);
	dev.pipe_r = dev.pipe_w = -1;
}

static void close_device(void *self)
{
	stop_receiving(self);
	if (dev.pipe_r >= 0)
		unregister_readfd(dev.pipe_r);
	while (dev.rx_head) {
		struct rx_item *it = dev.rx_head;

		dev.rx_head = it->next;
		free(it);
	}
	dev.rx_tail = NULL;
	close_pipe();
	/* The umad port is left for exit() to close (this runs only when the
	 * daemon exits): under libumad2sim a MAD that arrives after the port is
	 * closed (a late answer, an SA Report) makes the simulator's own
	 * receive thread lock a NULL fd's mutex (ibsim umad2sim.c, __receiver)
	 * and the daemon dies with SIGSEGV while exiting; its exit handler
	 * stops that thread first (and mad_engine_close waited for the answers
	 * in flight, so that none arrives meanwhile). The kernel closes the
	 * real device at exit the same way. */
}

/* A failed open: what was taken goes back (nothing has been received yet:
 * no MAD was sent, no subscription made). */
static void release(void)
{
	close_pipe();
	if (dev.fd >= 0)
		umad_close_port(dev.fd);
	dev.fd = -1;
	umad_done();
}

/* ---- opening ------------------------------------------------------------------ */

/* A thread that takes none of the process's signals (SIGTERM, SIGHUP are
 * the main thread's); 0 or an error number. */
static int start_thread(pthread_t *t, void *(*fn)(void *))
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(t, NULL, fn, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

int mad_device_open(const char *ca_name, int port_num, struct mad_local_port *out,
		    struct mad_transport *wire, char *err, size_t errlen, int *exit_code)
{
	char ca[UMAD_CA_NAME_LEN];
	int port = 0, fds[2];
	umad_port_t pinfo;
	/* SA last: a test shim waits for it (see tests/tools/sim_issm_shim.c) */
	static const int classes[] = {IB_SMI_CLASS, IB_SMI_DIRECT_CLASS, IB_PERFORMANCE_CLASS,
				      MAD_VENDOR_NVIDIA_CLASS, IB_SA_CLASS};

	*exit_code = 2;
	if (umad_init() < 0) {
		snprintf(err, errlen, "cannot initialise libibumad (is ib_umad loaded?)");
		return -1;
	}
	if (choose_port(ca_name ? ca_name : "", port_num, ca, &port, err, errlen) < 0) {
		release();
		return -1;
	}
	dev.fd = umad_open_port(ca, port);
	if (dev.fd < 0) {
		int e = -dev.fd;

		if (e == EACCES || e == EPERM) {
			*exit_code = 4;
			snprintf(err, errlen, "permission denied opening the umad device of %s port "
				 "%d (/dev/infiniband/umad*): run as root or give the daemon's user "
				 "read/write access to it", ca, port);
		} else {
			snprintf(err, errlen, "cannot open umad device of %s port %d: %s", ca, port,
				 strerror(e));
		}
		dev.fd = -1;
		release();
		return -1;
	}
	*exit_code = 3;
	memset(dev.agent, -1, sizeof(dev.agent));
	for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++) {
		/* the SA agent also takes Reports (traps forwarded by the SM) */
		long report_mask[16 / sizeof(long)] = {0};
		int id;

		report_mask[IB_MAD_METHOD_REPORT / (8 * sizeof(long))] |=
			1L << (IB_MAD_METHOD_REPORT % (8 * sizeof(long)));
		id = umad_register(dev.fd, classes[i], classes[i] == IB_SA_CLASS ? 2 : 1, 0,
				   classes[i] == IB_SA_CLASS ? report_mask : NULL);
		if (id < 0) {
			*exit_code = 2;
			snprintf(err, errlen, "cannot register MAD agent for class 0x%02x on %s port "
				 "%d: %s", classes[i], ca, port, strerror(-id));
			release();
			return -1;
		}
		dev.agent[classes[i]] = id;
	}
	if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) < 0) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		release();
		return -1;
	}
	dev.pipe_r = fds[0];
	dev.pipe_w = fds[1];
	atomic_store(&dev.rx_stop, false);
	dev.tx_stop = false;
	if (start_thread(&dev.tx_thread, tx_main)) {
		snprintf(err, errlen, "cannot start the MAD send thread");
		release();
		return -1;
	}
	dev.tx_running = true;
	if (start_thread(&dev.rx_thread, rx_main)) {
		snprintf(err, errlen, "cannot start the MAD receive thread");
		stop_sending();
		release();
		return -1;
	}
	dev.rx_running = true;
	register_readfd(dev.pipe_r, on_pipe_readable, NULL);

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
	*wire = (struct mad_transport){.supports = supports, .send = send_umad,
				       .wait = wait_received, .stop_receiving = stop_receiving,
				       .close = close_device};
	*exit_code = 0;
	return 0;
}
