/* The main loop (loop.c): every net-snmp call, MAD answer, snapshot swap and
 * notification happens on it, so a pass that does not end stops them all.
 *
 * A pass waits for what is ready (net-snmp's sessions, the descriptors the
 * areas registered, the next alarm), lets net-snmp dispatch it and run its
 * alarms, then runs the work deferred to it. Work that would hold the loop
 * (hundreds of registrations, a burst of writes) does a slice and defers
 * the rest: the next pass reads what came meanwhile first. A 0-second
 * snmp_alarm does not do that: net-snmp runs one registered while it runs
 * alarms in the same call.
 *
 * A thread of its own watches that passes end: one longer than loopWatchdog
 * seconds is logged while it lasts, with where the main thread is (its
 * stack), and once more when it ends. Under systemd (WatchdogSec) each pass
 * that ends tells systemd the daemon is alive. */
#ifndef IBSNMPD_LOOP_H
#define IBSNMPD_LOOP_H

#include <stdbool.h>
#include <stdint.h>

/* A piece of work run once at the end of the next pass; set fn and arg,
 * then loop_defer(). Deferring one already waiting does nothing. */
struct loop_deferred {
	void (*fn)(void *arg);
	void *arg;
	struct loop_deferred *next;
	bool waiting;
};
void loop_defer(struct loop_deferred *d);
void loop_cancel(struct loop_deferred *d);

/* One pass of the loop. */
void loop_pass(void);

/* After the agent's logging is set up (init_snmp): the watchdog's thread,
 * which writes where net-snmp's log handlers write. stall_s 0: no thread. */
void loop_start(unsigned stall_s);
/* loopWatchdog changed (SIGHUP). */
void loop_set_stall(unsigned stall_s);
/* Start-up done: passes are measured from here on, and systemd is told
 * the daemon is ready (Type=notify). */
void loop_ready(void);
void loop_stop(void);

/* What fd (a stream socket) takes now without waiting, in bytes; -1 if it
 * cannot be told. A write to a peer must not wait: see netsnmp_compat.c. */
long loop_stream_room(int fd);

/* A pass's wall time is its work (the main thread on a core), its wait
 * for a core (the machine busy: nothing of ibsnmpd's) and the rest, where
 * the thread slept in the kernel: a write, a file, a lock, the MAD
 * device. The last must stay near nothing whatever the machine's load
 * (MADs are written by a thread of their own); the first is what the
 * daemon's own work costs in one go. */
struct loop_stats {
	uint64_t passes;
	uint32_t longest_pass_ms; /* since loop_ready(), wall time */
	uint32_t longest_work_ms; /* the most on a core in one pass */
	uint32_t longest_sleep_ms; /* the most asleep in one pass (-1: not known) */
	uint32_t stalls;          /* passes longer than loopWatchdog */
};
void loop_get_stats(struct loop_stats *st);

#endif
