/* State files (state_file.h): one way to read, replace and log them. */
#include "ibsnmpd/netsnmp.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ibsnmpd/file_io.h"
#include "ibsnmpd/state_file.h"

void state_file_init(struct state_file *sf, const char *configured, const char *name)
{
	if (configured && configured[0])
		snprintf(sf->path, sizeof(sf->path), "%s", configured);
	else
		snprintf(sf->path, sizeof(sf->path), "%s/%s", get_persistent_directory(), name);
}

int state_file_read(struct state_file *sf, size_t max, char **text, size_t *len)
{
	struct stat st;
	const char *why = "";
	int r = file_read_whole(sf->path, max, text, len, &st, &why);

	if (r > 0)
		snmp_log(LOG_INFO, "%s: no state file %s yet: %s\n", sf->what, sf->path, sf->fresh);
	else if (r < 0)
		snmp_log(LOG_WARNING, "%s: cannot read %s (%s); %s, the file will be replaced\n",
			 sf->what, sf->path, why, sf->fresh);
	return r ? -1 : 0;
}

void state_file_refused(const struct state_file *sf, const char *why)
{
	snmp_log(LOG_WARNING, "%s: %s:%s; %s, the file will be replaced\n", sf->what, sf->path, why,
		 sf->fresh);
}

/* ---- the writer ------------------------------------------------------------------
 *
 * One thread for every state file: a job is a file's latest text; the
 * outcomes go back to the main thread (net-snmp's logging is its own)
 * through an eventfd its loop watches. */

struct write_job {
	struct write_job *next;
	struct state_file *sf;
	char path[sizeof(((struct state_file *)0)->path)];
	char *text;
	size_t len;
	bool ok;
	char why[128];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t work = PTHREAD_COND_INITIALIZER, written = PTHREAD_COND_INITIALIZER;
/* under lock: the jobs in order, the file being written, those written */
static struct write_job *waiting, **waiting_tail = &waiting, *done;
static struct state_file *writing;
static bool stopping;
/* the main thread's */
static pthread_t writer;
static bool writer_up;
static int done_fd = -1;

static void say_outcome(struct state_file *sf, bool ok, const char *why)
{
	if (ok) {
		if (sf->failed)
			snmp_log(LOG_INFO, "%s: %s written again\n", sf->what, sf->path);
		sf->failed = false;
	} else if (!sf->failed) {
		snmp_log(LOG_ERR, "%s: cannot write %s: %s (%s)\n", sf->what, sf->path, why,
			 sf->unsaved);
		sf->failed = true;
	}
}

static void write_job(struct write_job *j)
{
	const char *why = "";

	j->ok = !file_replace(j->path, j->text, j->len, &why);
	snprintf(j->why, sizeof(j->why), "%s", why);
	free(j->text);
	j->text = NULL;
}

static void *writer_main(void *arg)
{
	uint64_t one = 1;

	(void)arg;
	pthread_mutex_lock(&lock);
	for (;;) {
		struct write_job *j = waiting;

		if (!j) {
			if (stopping)
				break;
			pthread_cond_wait(&work, &lock);
			continue;
		}
		if (!(waiting = j->next))
			waiting_tail = &waiting;
		writing = j->sf;
		pthread_mutex_unlock(&lock);
		write_job(j);
		pthread_mutex_lock(&lock);
		j->next = done;
		done = j;
		writing = NULL;
		pthread_cond_broadcast(&written);
		if (write(done_fd, &one, sizeof(one)) < 0) {
			/* the counter is full: the main loop reads it anyway */
		}
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

/* The outcomes written (of sf alone, or all: NULL), oldest first. */
static void take_done(struct state_file *only)
{
	struct write_job *mine = NULL, *rest = NULL;

	pthread_mutex_lock(&lock);
	while (done) {
		struct write_job *j = done;

		done = j->next;
		if (only && j->sf != only) {
			j->next = rest;
			rest = j;
		} else {
			j->next = mine; /* reversed: oldest first */
			mine = j;
		}
	}
	while (rest) { /* the others back, in their order */
		struct write_job *j = rest;

		rest = j->next;
		j->next = done;
		done = j;
	}
	pthread_mutex_unlock(&lock);
	while (mine) {
		struct write_job *j = mine;

		mine = j->next;
		say_outcome(j->sf, j->ok, j->why);
		free(j);
	}
}

static void outcomes_ready(int fd, void *arg)
{
	uint64_t n;

	(void)arg;
	if (read(fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		return;
	take_done(NULL);
}

static bool start_writer(void)
{
	if (writer_up)
		return true;
	if (done_fd < 0 && (done_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) < 0)
		return false;
	stopping = false;
	{
		/* the process's signals (SIGTERM, SIGHUP) stay the main thread's */
		sigset_t all, old;
		int failed;

		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		failed = pthread_create(&writer, NULL, writer_main, NULL);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		if (failed)
			return false;
	}
	register_readfd(done_fd, outcomes_ready, NULL);
	writer_up = true;
	return true;
}

void state_file_write(struct state_file *sf, const char *text, size_t len)
{
	struct write_job *j = NULL, *queued;

	if (!text || !(j = calloc(1, sizeof(*j))) || !(j->text = malloc(len ? len : 1))) {
		if (text)
			free(j);
		say_outcome(sf, false, "out of memory");
		return;
	}
	j->sf = sf;
	snprintf(j->path, sizeof(j->path), "%s", sf->path);
	memcpy(j->text, text, len);
	j->len = len;
	if (!start_writer()) { /* no thread: here, as the loop can */
		write_job(j);
		say_outcome(sf, j->ok, j->why);
		free(j);
		return;
	}
	pthread_mutex_lock(&lock);
	for (queued = waiting; queued && queued->sf != sf; queued = queued->next)
		;
	if (queued) { /* the newer text in its place */
		free(queued->text);
		queued->text = j->text;
		queued->len = j->len;
		memcpy(queued->path, j->path, sizeof(j->path));
		free(j);
	} else {
		*waiting_tail = j;
		waiting_tail = &j->next;
		pthread_cond_signal(&work);
	}
	pthread_mutex_unlock(&lock);
}

static bool has_job(const struct state_file *sf)
{
	if (writing == sf)
		return true;
	for (const struct write_job *j = waiting; j; j = j->next)
		if (j->sf == sf)
			return true;
	return false;
}

void state_file_close(struct state_file *sf)
{
	if (!writer_up)
		return;
	pthread_mutex_lock(&lock);
	while (has_job(sf))
		pthread_cond_wait(&written, &lock);
	pthread_mutex_unlock(&lock);
	take_done(sf);
}

void state_file_stop(void)
{
	if (!writer_up)
		return;
	pthread_mutex_lock(&lock);
	stopping = true;
	pthread_cond_signal(&work);
	pthread_mutex_unlock(&lock);
	pthread_join(writer, NULL);
	writer_up = false;
	unregister_readfd(done_fd);
	close(done_fd);
	done_fd = -1;
	while (done) { /* of files closed already: nobody to tell */
		struct write_job *j = done;

		done = j->next;
		free(j);
	}
}
