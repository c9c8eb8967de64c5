/* The topology follows the fabric's changes between discoveries, by
 * probes (topology_internal.h). Each time the link sweep (the fabric area,
 * which reads a switch a trap 128 names within a second) publishes what it
 * read, the ports whose link differs from the topology are looked at
 * (topology_changes): a link gone is taken out at once, with the nodes no
 * longer reached (no SMP); behind a switch port up without a link the
 * probes of topology_probe.c ask what is there. Each result is published as
 * a topology patched from the one before, naming the ports that changed,
 * so that the followers read those again and keep every other row. A port
 * behind which nothing answered is probed again after 10 s, then 20, 40,
 * ... (at most pmDiscoveryInterval), and at once when it has been seen down
 * or a discovery came (topology_area.c). */
#include "ibsnmpd/netsnmp.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ibsnmpd/mad_engine.h"
#include "topology_internal.h"

static struct topology_area *the_area; /* for the link sweep's calls */

bool topology_following(const struct topology_area *a)
{
	const struct topology *f = cache_snapshot(&a->group);

	return a->links && !topology_source_is_sa() && f && !f->from_sa &&
	       !mad_engine_smps_refused();
}

static bool is_silent(const struct topology_area *a, uint64_t guid, unsigned port, time_t now)
{
	const struct topo_port_ref key = {guid, port};
	const struct silent_port *hit = a->n_silent ?
		bsearch(&key, a->silent, a->n_silent, sizeof(*a->silent), topo_port_ref_cmp) : NULL;

	return hit && now < hit->next;
}

/* The ports seen down are probed again when they come up. */
static void forget_silent_down(struct topology_area *a, const struct topo_link_seen *seen,
			       size_t n)
{
	bool *down;
	size_t kept = 0;

	if (!a->n_silent || !(down = calloc(a->n_silent, sizeof(*down))))
		return;
	for (size_t k = 0; k < n; k++) {
		const struct topo_port_ref key = {seen[k].guid, seen[k].port};
		const struct silent_port *hit = seen[k].up ? NULL :
			bsearch(&key, a->silent, a->n_silent, sizeof(*a->silent), topo_port_ref_cmp);

		if (hit)
			down[hit - a->silent] = true;
	}
	for (size_t j = 0; j < a->n_silent; j++)
		if (!down[j])
			a->silent[kept++] = a->silent[j];
	a->n_silent = kept;
	free(down);
}

static void follow_links(struct topology_area *a);

static void silent_retry(unsigned reg, void *arg)
{
	struct topology_area *a = arg;

	(void)reg;
	a->silent_alarm = 0;
	follow_links(a); /* what the link sweep last read, the waits over */
}

/* The link sweep's reading is looked at again when the first wait is over
 * (no sweep may come before: fabricPorts can be an hour). */
static void silent_retry_at_next(struct topology_area *a)
{
	time_t first = 0, now = time(NULL);

	for (size_t j = 0; j < a->n_silent; j++)
		if (!first || a->silent[j].next < first)
			first = a->silent[j].next;
	if (a->silent_alarm)
		snmp_alarm_unregister(a->silent_alarm);
	a->silent_alarm = first ? snmp_alarm_register(first > now ? (unsigned)(first - now) : 1, 0,
						      silent_retry, a) : 0;
}

/* Ports probed with no answer: each waits longer before the next try. */
static void add_silent(struct topology_area *a, const struct topo_port_ref *refs, size_t n)
{
	time_t now = time(NULL);
	size_t n_new = 0;
	struct silent_port *q;

	if (!n || !(q = realloc(a->silent, (a->n_silent + n) * sizeof(*q))))
		return;
	a->silent = q;
	for (size_t k = 0; k < n; k++) {
		struct silent_port *hit = a->n_silent ?
			bsearch(&refs[k], a->silent, a->n_silent, sizeof(*q), topo_port_ref_cmp) : NULL;
		unsigned tries = hit ? hit->tries + 1 : 1;
		time_t wait = (time_t)SILENT_FIRST_S << (tries < 12 ? tries - 1 : 11);

		if (!hit)
			hit = &a->silent[a->n_silent + n_new++];
		*hit = (struct silent_port){refs[k], tries,
					    now + (wait < (time_t)topology_interval_s() ? wait
										: (time_t)topology_interval_s())};
	}
	a->n_silent += n_new;
	qsort(a->silent, a->n_silent, sizeof(*q), topo_port_ref_cmp);
	silent_retry_at_next(a);
}

/* t, patched from the topology published now, published in its place;
 * not a topology of the local node alone (its own link is down: the nodes
 * behind it are not gone, as after a discovery that saw it alone). */
static void publish_patch(struct topology_area *a, struct topology *t)
{
	const struct topology *prev = cache_snapshot(&a->group);

	if (t->n_nodes == 1 && prev && prev->n_nodes > 1)
		return;
	a->storm_pending = false;
	t->serial = ++a->serial;
	t->patched_from = prev ? prev->serial : 0;
	topology_apply_mkeys(t);
	cache_publish(&a->group, (void *)topology_get(t));
}

static void round_done(struct topo_round *r, void *arg)
{
	struct topology_area *a = arg;
	struct topology *t;
	char err[80];

	a->round = NULL;
	if (r->why[0]) {
		snmp_log(LOG_NOTICE, "subnet: probes around the ports that came up: %s; "
			 "rediscovering the subnet\n", r->why);
		topo_round_free(r);
		topology_rediscover(a);
		return;
	}
	if (r->n_silent)
		DEBUGMSGTL(("ibsnmpd:topology", "nothing answered behind %zu ports: probed again "
			    "later\n", r->n_silent));
	add_silent(a, r->silent, r->n_silent);
	t = (struct topology *)topology_get(topology_patch_finish(r->patch, a->names, err,
								  sizeof(err)));
	if (!t) {
		snmp_log(LOG_WARNING, "subnet: following a change: %s\n", err);
	} else if (t->n_changed) {
		t->seconds = monotonic_seconds() - r->began;
		snmp_log(LOG_INFO, "subnet changed: %zu ports probed, %zu answered, %zu nodes new "
			 "(%zu SMPs in %.3f s): %zu nodes, %zu ports\n", r->probed, r->found,
			 t->nodes_added, r->smps, t->seconds, t->n_nodes, t->n_ports);
		publish_patch(a, t);
	}
	topology_put(t);
	topo_round_free(r);
	if (a->recheck)
		follow_links(a);
}

/* f with the links gone and the LIDs given of c taken (no SMP), the nodes
 * no longer reached gone; NULL if c has none of them (or out of memory:
 * said). */
static struct topology *gone_taken(struct topology_area *a, const struct topology *f,
				   const struct topo_change *c, size_t n, size_t *gone)
{
	struct topo_patch *p = NULL;
	struct topology *t;
	char err[80];

	*gone = 0;
	for (size_t k = 0; k < n; k++) {
		if (c[k].kind == TOPO_LINK_NEW)
			continue;
		if (!p && !(p = topology_patch_begin(f)))
			return NULL;
		if (c[k].kind == TOPO_LINK_GONE) {
			topology_patch_unlink(p, c[k].guid, c[k].port);
			++*gone;
		} else {
			topology_patch_port(p, c[k].guid, c[k].port, c[k].lid, 0, c[k].speed);
		}
	}
	if (!p)
		return NULL;
	t = topology_patch_finish(p, a->names, err, sizeof(err));
	topology_patch_free(p);
	if (!t)
		snmp_log(LOG_WARNING, "subnet: following a change: %s\n", err);
	return t;
}

/* The TOPO_LINK_NEW ports of c wait before they are probed. */
static void silence_new(struct topology_area *a, const struct topo_change *c, size_t n)
{
	struct topo_port_ref *refs = malloc((n ? n : 1) * sizeof(*refs));
	size_t r = 0;

	for (size_t j = 0; refs && j < n; j++)
		if (c[j].kind == TOPO_LINK_NEW)
			refs[r++] = (struct topo_port_ref){c[j].guid, c[j].port};
	add_silent(a, refs, r);
	free(refs);
}

/* The link sweep's last reading against the topology: links gone are
 * taken out at once; where links came up too, one round of probes makes
 * both into one patch (a cable moved keeps its node). */
static void follow_links(struct topology_area *a)
{
	const struct topology *f = cache_snapshot(&a->group), *swept = NULL;
	struct topo_link_seen *seen = NULL;
	struct topology *without;
	struct topo_change *c = NULL, *news = NULL;
	size_t n, k = 0, m, n_news = 0, gone, cost;
	time_t now = time(NULL);

	if (!topology_following(a))
		return;
	if (a->group.refreshing || a->round) {
		a->recheck = true; /* looked at when they are over */
		return;
	}
	a->recheck = false;
	n = a->links(a->links_arg, &swept, &seen);
	if (!seen || swept != f || !n || !(c = malloc(2 * n * sizeof(*c))) ||
	    !(news = malloc(n * sizeof(*news)))) {
		free(seen); /* read against another topology: its sweep comes */
		free(c);
		return;
	}
	forget_silent_down(a, seen, n);
	m = topology_changes(f, seen, n, news);
	for (size_t j = 0; j < m; j++)
		if (news[j].kind != TOPO_LINK_NEW)
			c[k++] = news[j];
	without = (struct topology *)topology_get(gone_taken(a, f, c, k, &gone));
	/* the ports to probe: against the topology without what is gone */
	m = topology_changes(without ? without : f, seen, n, news);
	free(seen);
	for (size_t j = 0; j < m; j++)
		if (news[j].kind == TOPO_LINK_NEW &&
		    !is_silent(a, news[j].guid, news[j].port, now)) {
			c[k++] = news[j];
			n_news++;
		}
	free(news);
	cost = topology_discovery_cost(f);
	if (n_news && n_news * 3 > cost && a->storm_pending && !f->patched_from) {
		/* the discovery asked for them did not reach them either: they
		 * wait as any port with nothing behind it (nor is the subnet
		 * discovered again for them) */
		snmp_log(LOG_NOTICE, "subnet: %zu ports are up with nothing that answers behind "
			 "them\n", n_news);
		silence_new(a, c, k);
		a->storm_pending = false;
		n_news = 0;
	} else if (n_news && n_news * 3 > cost) {
		snmp_log(LOG_NOTICE, "subnet: %zu links came up at once: a discovery costs less than "
			 "probing each; rediscovering the subnet\n", n_news);
		topology_put(without);
		free(c);
		a->storm_pending = true;
		topology_rediscover(a);
		return;
	}
	if (!n_news) {
		if (without && without->n_changed) {
			snmp_log(LOG_INFO, "subnet changed: %zu links gone, %zu nodes no longer "
				 "reached: %zu nodes, %zu ports\n", gone, without->nodes_removed,
				 without->n_nodes, without->n_ports);
			publish_patch(a, without);
		}
		topology_put(without);
		free(c);
		return;
	}
	a->round = topo_round_start(f, without ? without : f, c, k, cost, round_done, a);
	if (!a->round)
		snmp_log(LOG_WARNING, "subnet: out of memory probing %zu ports\n", n_news);
	topology_put(without); /* the round holds it */
	free(c);
	if (a->round)
		topo_round_release(a->round);
}

void topology_follow_links(topology_links_fn links, void *arg)
{
	if (!the_area)
		return;
	the_area->links = links;
	the_area->links_arg = arg;
}

static void links_read_now(unsigned reg, void *arg)
{
	struct topology_area *a = arg;

	(void)reg;
	a->links_alarm = 0;
	follow_links(a);
}

/* From the link sweep's observer: looked at from the main loop, not while
 * its publication is told (a patch published now would start its sweep). */
void topology_links_read(void)
{
	if (the_area && !the_area->links_alarm)
		the_area->links_alarm = snmp_alarm_register(0, 0, links_read_now, the_area);
}

void topology_follow_start(struct topology_area *a)
{
	the_area = a;
}

void topology_follow_stop(struct topology_area *a)
{
	the_area = NULL;
	if (a->links_alarm)
		snmp_alarm_unregister(a->links_alarm);
	if (a->silent_alarm)
		snmp_alarm_unregister(a->silent_alarm);
	if (a->round)
		topo_round_abandon(a->round); /* freed by its last answer */
	free(a->silent);
	a->silent = NULL;
	a->n_silent = 0;
}
