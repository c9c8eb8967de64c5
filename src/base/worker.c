/* Computations off the main thread (worker.h): the routing checks take
 * seconds at 40,000 hosts, the subnet checks a sort of a quarter million
 * ports; the main loop must not wait on any. */
#include "ibsnmpd/netsnmp.h"

#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ibsnmpd/worker.h"

#define WORKER_NICE 10

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t one = 1;

	/* below the main loop: where the cores are few, SNMP requests and MAD
	 * answers go first (Linux: a thread's nice value is its own, and the
	 * checks' own threads inherit it) */
	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), WORKER_NICE)) {
		/* unprivileged and already niced more: as it is */
	}
	w->work(w->arg);
	if (write(w->fd, &one, sizeof(one)) < 0 && errno != EAGAIN) {
		/* the main loop reads it: nothing else to do */
	}
	return NULL;
}

static void worker_ended(int fd, void *arg)
{
	struct worker *w = arg;
	uint64_t n;

	if (read(fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return;
	if (!w->running)
		return;
	pthread_join(w->thread, NULL); /* it wrote: it is ending */
	w->running = false;
	w->done(w->arg);
}

int worker_init(struct worker *w, const char *what)
{
	memset(w, 0, sizeof(*w));
	w->what = what;
	w->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (w->fd < 0)
		return -1;
	register_readfd(w->fd, worker_ended, w);
	return 0;
}

int worker_start(struct worker *w, void (*work)(void *), void (*done)(void *), void *arg)
{
	if (w->running || w->fd < 0)
		return -1;
	w->work = work;
	w->done = done;
	w->arg = arg;
	if (pthread_create(&w->thread, NULL, worker_main, w)) {
		snmp_log(LOG_ERR, "%s: cannot start a thread: %s\n", w->what, strerror(errno));
		return -1;
	}
	w->running = true;
	return 0;
}

void worker_stop(struct worker *w)
{
	if (w->running) {
		pthread_join(w->thread, NULL); /* at most one computation */
		w->running = false;
	}
	if (w->fd >= 0) {
		unregister_readfd(w->fd);
		close(w->fd);
		w->fd = -1;
	}
}
