/* The main loop and its watchdog (loop.h). */
#include "ibsnmpd/netsnmp.h"

#include <errno.h>
#include <fcntl.h>
#include <execinfo.h>
#include <linux/sockios.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <net-snmp/library/fd_event_manager.h>
#include <net-snmp/library/large_fd_set.h>
#include <systemd/sd-daemon.h>

#include "ibsnmpd/clock.h"
#include "ibsnmpd/config.h"
#include "ibsnmpd/loop.h"

#define WAIT_MAX_S 1        /* an idle loop still comes round (systemd's watchdog) */
#define WATCH_TICK_MS 100   /* how often the watchdog looks */
#define STACK_DEPTH 24
#define STACK_WAIT_MS 500   /* for the main thread to take its stack */
#define LOG_DESTS 4

static uint64_t now_ms(void)
{
	return (uint64_t)monotonic_ms();
}

/* ---- work deferred to the end of the pass ------------------------------------------ */

static struct loop_deferred *waiting_head, **waiting_tail = &waiting_head;
static struct loop_deferred *running_list; /* the pass's, while it runs */

void loop_defer(struct loop_deferred *d)
{
	if (d->waiting)
		return;
	d->waiting = true;
	d->next = NULL;
	*waiting_tail = d;
	waiting_tail = &d->next;
}

static bool unlink_from(struct loop_deferred **head, struct loop_deferred *d,
			struct loop_deferred ***tail)
{
	for (struct loop_deferred **pp = head; *pp; pp = &(*pp)->next) {
		if (*pp != d)
			continue;
		*pp = d->next;
		if (tail && *tail == &d->next)
			*tail = pp;
		return true;
	}
	return false;
}

void loop_cancel(struct loop_deferred *d)
{
	if (!d->waiting)
		return;
	if (!unlink_from(&waiting_head, d, &waiting_tail))
		unlink_from(&running_list, d, NULL);
	d->waiting = false;
	d->next = NULL;
}

/* What was deferred before this point; what these defer runs next pass. */
static void run_deferred(void)
{
	running_list = waiting_head;
	waiting_head = NULL;
	waiting_tail = &waiting_head;
	while (running_list) {
		struct loop_deferred *d = running_list;

		running_list = d->next;
		d->waiting = false;
		d->next = NULL;
		d->fn(d->arg);
	}
}

/* ---- the watchdog ------------------------------------------------------------------ */

/* Shared with the watchdog's thread: when the running pass began (0: the
 * loop waits), which pass it is, the limit. */
static _Atomic uint64_t busy_since_ms, pass_number;
static _Atomic unsigned stall_limit_ms;
static atomic_bool watching;
static pthread_t watch_thread, main_thread;
static bool thread_started;

/* Measured on the main thread. */
static struct loop_stats stats;
static bool measuring;
static uint64_t sd_ping_every_ms, sd_pinged_ms;

/* The main thread's stack, taken by itself when the watchdog asks (a
 * signal): backtrace() is safe in a handler once loaded (loop_start). */
static void *stack_frames[STACK_DEPTH];
static volatile sig_atomic_t stack_depth; /* -1: asked */
static int stack_signal;

static void take_stack(int sig)
{
	int saved = errno;

	(void)sig;
	stack_depth = backtrace(stack_frames, STACK_DEPTH);
	errno = saved;
}

/* Where the watchdog's lines go: where net-snmp's log handlers write, read
 * from them on the main thread at start. The thread writes them itself:
 * net-snmp's logging is the main thread's, and the main thread is stuck
 * when the watchdog speaks. Its files are net-snmp's own streams (a log
 * file is not opened for appending: a second descriptor would be
 * overwritten); stdio locks a stream, and syslog() is thread-safe. */
static FILE *dest[LOG_DESTS];
static size_t n_dest;
static bool to_syslog, with_timestamp;

static void find_log_destinations(void)
{
	n_dest = 0;
	to_syslog = false;
	with_timestamp = netsnmp_ds_get_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_LOG_TIMESTAMP);
	for (netsnmp_log_handler *h = get_logh_head(); h; h = h->next) {
		if (!h->enabled || h->priority < LOG_WARNING)
			continue;
		if (h->type == NETSNMP_LOGHANDLER_SYSLOG)
			to_syslog = true;
		else if (n_dest < LOG_DESTS && h->type == NETSNMP_LOGHANDLER_STDERR)
			dest[n_dest++] = stderr;
		else if (n_dest < LOG_DESTS && h->type == NETSNMP_LOGHANDLER_STDOUT)
			dest[n_dest++] = stdout;
		else if (n_dest < LOG_DESTS && h->type == NETSNMP_LOGHANDLER_FILE && h->magic)
			dest[n_dest++] = h->magic; /* its FILE, opened when the handler was made */
	}
}

__attribute__((format(printf, 1, 2))) static void watch_say(const char *fmt, ...)
{
	char line[4096], stamp[32] = "";
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (to_syslog)
		syslog(LOG_WARNING, "%s", line);
	if (with_timestamp) {
		time_t t = time(NULL);
		struct tm tm;

		localtime_r(&t, &tm);
		strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S ", &tm);
	}
	for (size_t i = 0; i < n_dest; i++) {
		fprintf(dest[i], "%s%s\n", stamp, line);
		fflush(dest[i]);
	}
}

/* The main thread's frames as one line: "f+0x12 <- g+0x40 <- ..." (the
 * executable exports its symbols: -Wl,-E). */
static void describe_stack(char *out, size_t len)
{
	char **names;
	size_t used = 0;
	int depth;

	stack_depth = -1;
	if (pthread_kill(main_thread, stack_signal)) {
		snprintf(out, len, "(its stack could not be taken)");
		return;
	}
	for (int waited = 0; stack_depth < 0 && waited < STACK_WAIT_MS; waited += 10)
		usleep(10 * 1000);
	depth = stack_depth;
	if (depth <= 0 || !(names = backtrace_symbols(stack_frames, depth))) {
		snprintf(out, len, "(its stack could not be taken)");
		return;
	}
	out[0] = 0;
	/* frame 0 is take_stack, 1 the signal's trampoline */
	for (int i = 2; i < depth && used + 8 < len; i++) {
		const char *name = strrchr(names[i], '/');
		int w = snprintf(out + used, len - used, "%s%s", used ? " <- " : "",
				 name ? name + 1 : names[i]);

		if (w < 0)
			break;
		used += (size_t)w < len - used ? (size_t)w : len - used - 1;
	}
	free(names);
}

static void *watch(void *arg)
{
	uint64_t reported = 0;

	(void)arg;
	while (atomic_load(&watching)) {
		uint64_t since = atomic_load(&busy_since_ms), pass = atomic_load(&pass_number);
		unsigned limit = atomic_load(&stall_limit_ms);

		if (since && limit && pass != reported && now_ms() - since >= limit) {
			char where[3000];

			reported = pass;
			describe_stack(where, sizeof(where));
			watch_say(APP_NAME ": the main loop has not come round for %.1f s (loopWatchdog "
				  "%u): SNMP requests, MAD answers and notifications wait; it is in %s",
				  (double)(now_ms() - since) / 1000.0, limit / 1000, where);
		}
		usleep(WATCH_TICK_MS * 1000);
	}
	return NULL;
}

void loop_start(unsigned stall_s)
{
	struct sigaction sa;
	void *preload[1];
	uint64_t usec = 0;

	main_thread = pthread_self();
	atomic_store(&stall_limit_ms, stall_s * 1000);
	if (sd_watchdog_enabled(0, &usec) > 0 && usec >= 4000)
		sd_ping_every_ms = usec / 4000; /* four times in systemd's WatchdogSec */
	if (!stall_s || thread_started)
		return;
	backtrace(preload, 1); /* loads libgcc's unwinder now, not in the handler */
	find_log_destinations();
	stack_signal = SIGRTMIN + 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = take_stack;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	if (sigaction(stack_signal, &sa, NULL)) {
		snmp_log(LOG_WARNING, "loopWatchdog: no signal for the main thread's stack: %s\n",
			 strerror(errno));
		return;
	}
	atomic_store(&watching, true);
	{
		/* the thread takes no signal of the process's (SIGTERM, SIGHUP) */
		sigset_t all, old;

		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		thread_started = !pthread_create(&watch_thread, NULL, watch, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (!thread_started) {
		atomic_store(&watching, false);
		snmp_log(LOG_WARNING, "loopWatchdog: cannot start its thread\n");
	}
}

void loop_set_stall(unsigned stall_s)
{
	if (stall_s && !thread_started)
		loop_start(stall_s);
	atomic_store(&stall_limit_ms, stall_s * 1000);
}

void loop_ready(void)
{
	measuring = true;
	sd_notify(0, "READY=1");
	sd_pinged_ms = now_ms();
}

void loop_stop(void)
{
	sd_notify(0, "STOPPING=1");
	if (!thread_started)
		return;
	atomic_store(&watching, false);
	pthread_join(watch_thread, NULL);
	thread_started = false;
}

void loop_get_stats(struct loop_stats *st)
{
	*st = stats;
}

/* ---- what a socket takes without waiting ----------------------------------------------
 *
 * Linux's SIOCOUTQ: on a Unix stream socket the bytes (with their buffers'
 * overhead) the peer has not read, which the kernel holds against
 * SO_SNDBUF; on TCP the bytes not yet acknowledged. */

long loop_stream_room(int fd)
{
	int queued = 0, sndbuf = 0, type = 0;
	socklen_t len = sizeof(sndbuf), tlen = sizeof(type);
	long room;

	if (getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, &len) ||
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) || ioctl(fd, SIOCOUTQ, &queued))
		return -1;
	room = (long)sndbuf - queued;
	if (type == SOCK_STREAM && room > 0) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);

		/* TCP's SIOCOUTQ leaves out the overhead: keep half for it */
		if (!getsockname(fd, (struct sockaddr *)&ss, &sl) && ss.ss_family != AF_UNIX)
			room = (long)sndbuf / 2 - queued;
	}
	return room > 0 ? room : 0;
}

/* ---- one pass ------------------------------------------------------------------------ */

/* The main thread's time on a core and waiting for one (ns), from the
 * scheduler's own account (/proc/thread-self/schedstat, Linux's
 * CONFIG_SCHED_INFO): the file is kept open and read again. false: not
 * there (the time on a core is then the thread's CPU clock, the wait not
 * known). */
struct sched_times {
	uint64_t on_cpu_ns, waiting_ns;
	bool known;
};

static int schedstat_fd = -2; /* -2: not opened yet */

static void sched_times(struct sched_times *t)
{
	char buf[96];
	ssize_t n;
	unsigned long long run, wait;

	if (schedstat_fd == -2)
		schedstat_fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
	t->known = false;
	if (schedstat_fd >= 0 && (n = pread(schedstat_fd, buf, sizeof(buf) - 1, 0)) > 0) {
		buf[n] = 0;
		if (sscanf(buf, "%llu %llu", &run, &wait) == 2) {
			*t = (struct sched_times){run, wait, true};
			return;
		}
	}
	{
		struct timespec c;

		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c);
		t->on_cpu_ns = (uint64_t)c.tv_sec * 1000000000u + (uint64_t)c.tv_nsec;
		t->waiting_ns = 0;
	}
}

static uint32_t clamp_ms(uint64_t ms)
{
	return ms > UINT32_MAX ? UINT32_MAX : (uint32_t)ms;
}

static void pass_ended(uint64_t began, uint64_t ended, const struct sched_times *at_start)
{
	uint64_t took = ended - began;
	unsigned limit = atomic_load(&stall_limit_ms);
	struct sched_times at_end;

	stats.passes++;
	if (measuring && took > stats.longest_pass_ms)
		stats.longest_pass_ms = clamp_ms(took);
	sched_times(&at_end);
	if (measuring) {
		uint64_t work = (at_end.on_cpu_ns - at_start->on_cpu_ns) / 1000000u;
		uint64_t queued = (at_end.waiting_ns - at_start->waiting_ns) / 1000000u;

		if (work > stats.longest_work_ms)
			stats.longest_work_ms = clamp_ms(work);
		if (!at_end.known || !at_start->known)
			stats.longest_sleep_ms = UINT32_MAX;
		else if (stats.longest_sleep_ms != UINT32_MAX && took > work + queued &&
			 took - work - queued > stats.longest_sleep_ms)
			stats.longest_sleep_ms = clamp_ms(took - work - queued);
	}
	if (measuring && limit && took >= limit) {
		stats.stalls++;
		snmp_log(LOG_WARNING, "the main loop came round after %.1f s (loopWatchdog %u)\n",
			 (double)took / 1000.0, limit / 1000);
	}
	if (sd_ping_every_ms && ended - sd_pinged_ms >= sd_ping_every_ms) {
		sd_notify(0, "WATCHDOG=1");
		sd_pinged_ms = ended;
	}
}

void loop_pass(void)
{
	netsnmp_large_fd_set readfds, writefds, exceptfds;
	struct timeval timeout = {LONG_MAX, 0};
	int numfds = 0, block = 0;
	uint64_t began;
	struct sched_times at_start;

	netsnmp_large_fd_set_init(&readfds, FD_SETSIZE);
	netsnmp_large_fd_set_init(&writefds, FD_SETSIZE);
	netsnmp_large_fd_set_init(&exceptfds, FD_SETSIZE);
	snmp_select_info2(&numfds, &readfds, &timeout, &block);
	netsnmp_external_event_info2(&numfds, &readfds, &writefds, &exceptfds);
	if (waiting_head)
		timerclear(&timeout); /* deferred work: look, do not wait */
	else if (block || timeout.tv_sec >= WAIT_MAX_S)
		timeout = (struct timeval){WAIT_MAX_S, 0};
	/* waiting is not a pass: the watchdog looks at what follows */
	if (netsnmp_large_fd_set_select(numfds, &readfds, &writefds, &exceptfds, &timeout) < 0 &&
	    errno != EINTR)
		snmp_log_perror("select");
	netsnmp_large_fd_set_cleanup(&readfds);
	netsnmp_large_fd_set_cleanup(&writefds);
	netsnmp_large_fd_set_cleanup(&exceptfds);

	began = now_ms();
	sched_times(&at_start);
	atomic_store(&pass_number, stats.passes + 1);
	atomic_store(&busy_since_ms, began);
	/* what is ready now: net-snmp dispatches it and runs its alarms */
	agent_check_and_process(0);
	run_deferred();
	atomic_store(&busy_since_ms, 0);
	pass_ended(began, now_ms(), &at_start);
}
