/* One computation at a time off the main thread (base/worker.c): work
 * that takes seconds at 40,000 hosts (the routing checks, the subnet
 * checks, Slurm's tree) runs on a thread of its own, niced below the main
 * loop, and the main loop learns of its end from an eventfd it watches;
 * done is called there, after the join, so the results are taken and
 * published on the main thread. */
#ifndef IBSNMPD_WORKER_H
#define IBSNMPD_WORKER_H

#include <pthread.h>
#include <stdbool.h>

struct worker {
	const char *what;            /* in the log: "routing checks" */
	pthread_t thread;
	bool running;
	int fd;                      /* eventfd: the thread's end; -1 none */
	void (*work)(void *arg);     /* on the thread */
	void (*done)(void *arg);     /* on the main loop (not after worker_stop) */
	void *arg;
};

int worker_init(struct worker *w, const char *what); /* -1: no eventfd */
/* -1: one is running, or no thread (logged) */
int worker_start(struct worker *w, void (*work)(void *), void (*done)(void *), void *arg);
/* Joins the one running (its done is not called), stops watching. */
void worker_stop(struct worker *w);

#endif
