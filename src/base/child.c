/* Child processes (child.h). Reaped by polling waitpid(WNOHANG) from a
 * net-snmp alarm rather than from a SIGCHLD handler, so the main loop stays
 * signal-free; a caller that knows a child is done (its output ended) asks
 * for the poll at once (child_reap_now). */
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ibsnmpd/child.h"
#include "ibsnmpd/clock.h"
#include "ibsnmpd/netsnmp.h"

#define REAP_INTERVAL_S 1
#define KILL_GRACE_S 2 /* between SIGTERM and SIGKILL */

struct child {
	struct child *next;
	pid_t pid;
	char what[64];
	time_t deadline, kill_at; /* 0: none */
	bool killed;
	child_exit_fn done;
	void *arg;
};

static struct child *children;
static unsigned reap_alarm;

static void reap(unsigned reg, void *arg);

pid_t child_spawn(const char *what, char *const argv[], int stdin_fd, int stdout_fd,
		  unsigned deadline_s, child_exit_fn done, void *arg)
{
	posix_spawn_file_actions_t fa;
	struct child *c = calloc(1, sizeof(*c));
	pid_t pid;
	int err;

	if (!c)
		return -1;
	posix_spawn_file_actions_init(&fa);
	if (stdin_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, stdin_fd, STDIN_FILENO);
	if (stdout_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, stdout_fd, STDOUT_FILENO);
	/* nothing of ours beyond the three standard descriptors */
	posix_spawn_file_actions_addclosefrom_np(&fa, STDERR_FILENO + 1);
	err = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (err) {
		snmp_log(LOG_ERR, "%s: cannot run %s: %s\n", what, argv[0], strerror(err));
		free(c);
		return -1;
	}
	c->pid = pid;
	snprintf(c->what, sizeof(c->what), "%s", what);
	c->deadline = deadline_s ? monotonic_whole_seconds() + deadline_s : 0;
	c->done = done;
	c->arg = arg;
	c->next = children;
	children = c;
	if (!reap_alarm)
		reap_alarm = snmp_alarm_register(REAP_INTERVAL_S, SA_REPEAT, reap, NULL);
	DEBUGMSGTL(("ibsnmpd:child", "%s started (pid %ld)\n", what, (long)pid));
	return pid;
}

static void unlink_child(struct child *c)
{
	for (struct child **pp = &children; *pp; pp = &(*pp)->next)
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	if (!children && reap_alarm) {
		snmp_alarm_unregister(reap_alarm);
		reap_alarm = 0;
	}
}

/* Exits are collected, and children past their deadline stopped: SIGTERM,
 * then SIGKILL a little later. */
static void reap(unsigned reg, void *arg)
{
	time_t now = monotonic_whole_seconds();
	struct child *c, *next;

	(void)reg;
	(void)arg;
	for (c = children; c; c = next) {
		int status;
		pid_t r;

		next = c->next;
		r = waitpid(c->pid, &status, WNOHANG);
		if (r == c->pid || (r < 0 && errno == ECHILD)) {
			DEBUGMSGTL(("ibsnmpd:child", "%s (pid %ld) exited\n", c->what, (long)c->pid));
			unlink_child(c);
			if (c->done)
				c->done(c->pid, r == c->pid ? status : 0, c->killed, c->arg);
			free(c);
			continue;
		}
		if (c->kill_at && now >= c->kill_at) {
			kill(c->pid, SIGKILL);
		} else if (c->deadline && now >= c->deadline && !c->killed) {
			snmp_log(LOG_WARNING, "%s (pid %ld) did not finish in time: killed\n",
				 c->what, (long)c->pid);
			c->killed = true;
			kill(c->pid, SIGTERM);
			c->kill_at = now + KILL_GRACE_S;
		}
	}
}

void child_reap_now(void)
{
	reap(0, NULL);
}

static void stop_now(struct child *c)
{
	kill(c->pid, SIGTERM);
	for (int i = 0; i < 20 && waitpid(c->pid, NULL, WNOHANG) == 0; i++)
		usleep(50000);
	if (kill(c->pid, 0) == 0) {
		kill(c->pid, SIGKILL);
		waitpid(c->pid, NULL, 0);
	}
}

void child_stop(pid_t pid)
{
	for (struct child *c = children; c; c = c->next) {
		if (c->pid == pid) {
			unlink_child(c);
			stop_now(c);
			free(c);
			return;
		}
	}
}

void child_stop_all(void)
{
	while (children)
		child_stop(children->pid);
}
