/* Between the topology area and its probes (topology_probe.c). */
#ifndef IBSNMPD_TOPOLOGY_INTERNAL_H
#define IBSNMPD_TOPOLOGY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <time.h>

#include "ibsnmpd/topology.h"

/* One round of probes: behind every switch port that came up, NodeInfo by
 * directed route; for a node not seen before, its NodeDescription and
 * PortInfo (a CA's port it was reached by; a switch's port 0 and every
 * port, and behind each one up, the same again). What they find is made
 * to patch; done() is called once every answer is in, at the earliest from
 * topo_round_release. */
struct topo_round {
	struct topo_patch *patch;
	const struct topology *routes;
	size_t pending;       /* SMPs in flight, + 1 while starting */
	size_t smps, budget;  /* sent; more than budget: given up for a discovery */
	size_t probed, found, added;
	bool abandoned;       /* a discovery took over: freed when the last answer is in */
	char why[200];        /* what could not be placed: a discovery is wanted */
	struct timespec began;
	/* ports behind which nothing answered */
	struct topo_port_ref *silent;
	size_t n_silent, cap_silent;
	void (*done)(struct topo_round *r, void *arg);
	void *arg;
};

/* A round patching f (held by the patch) with the links gone and the LIDs
 * of c, and probing behind the ports of its TOPO_LINK_NEW changes, by the
 * routes of `routes` (f with the links gone taken out: a route through
 * one of them would not pass; held); NULL out of memory. */
struct topo_round *topo_round_start(const struct topology *f, const struct topology *routes,
				    const struct topo_change *c, size_t n, size_t budget,
				    void (*done)(struct topo_round *r, void *arg), void *arg);
/* Lets go of the hold the start keeps (the caller has stored the round):
 * done() now if no probe went out. */
void topo_round_release(struct topo_round *r);
/* The round's answers are dropped from now on (done() is not called); it
 * frees itself when the last one is in. */
void topo_round_abandon(struct topo_round *r);
void topo_round_free(struct topo_round *r);

#endif
