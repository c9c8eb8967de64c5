/* Child processes of the daemon (the discovery helper, opensmReloadCommand):
 * one way to start them and one to end them. A child gets stdin, stdout and
 * stderr only (every other descriptor is closed in it: the AgentX socket,
 * the umad devices, netlink sockets), is reaped on the main loop, and one
 * that outlives its deadline is killed, with one log line. */
#ifndef IBSNMPD_CHILD_H
#define IBSNMPD_CHILD_H

#include <stdbool.h>
#include <sys/types.h>

/* status as waitpid() gives it; killed: ibsnmpd killed it at its deadline */
typedef void (*child_exit_fn)(pid_t pid, int status, bool killed, void *arg);

/* Starts argv[0] (a path) with argv; its stdin is stdin_fd and its stdout
 * stdout_fd (-1: ours). what names it in the logs; deadline_s 0: none.
 * done (may be NULL) is called on the main loop when it has exited. -1 on
 * failure (logged). */
pid_t child_spawn(const char *what, char *const argv[], int stdin_fd, int stdout_fd,
		  unsigned deadline_s, child_exit_fn done, void *arg);
/* Collects the exits there are now (as the main loop does every second),
 * e.g. when a child's output has ended: it has most likely exited. */
void child_reap_now(void);
/* Stops a child now (SIGTERM, then SIGKILL); done is not called. */
void child_stop(pid_t pid);
/* At exit: every child still running is stopped. */
void child_stop_all(void);

#endif
