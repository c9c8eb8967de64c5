/* The routing group's refresh: SubnGet(LinearForwardingTable) of every
 * block of every switch the topology holds, then SubnGet(SLtoVLMappingTable)
 * of each switch port cabled to a switch (the credit loops' VLs),
 * LID-routed, fed to the MAD engine as its window has room
 * (madMaxOutstanding: the switches' CPUs see no more than the sweeps give
 * them); then route_check() on a thread
 * of its own, whose end the main loop reads from an eventfd and publishes.
 * The blocks read are those up to the highest LID the topology has (a
 * switch's LinearFDBTop may be higher; entries past the last LID route
 * nothing). A switch that leaves a block unanswered is "not read": the
 * checks are partial, never failed, for it.
 *
 * When: the group's lifetime (routingCheckInterval), and routingSettle
 * seconds after the topology changed (the SM reroutes after its heavy
 * sweep: a trap 128 burst, a node come or gone) or another SM became
 * master (route_links.c's SM rounds see it); a read running is never
 * begun again, the change reads once it is published. A read that left
 * switches unread (a storm's timeouts, a switch rebooting) resumes: those
 * switches are read again, alone, routingSettle seconds after it was
 * published, then twice as long after each run that still left some, up
 * to routingCheckInterval. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ibsnmpd/netsnmp.h"
#include "ibsnmpd/clock.h"
#include "ibsnmpd/sma_attr.h"

#include "route_internal.h"

/* The run's tables are the last now (the next partial read starts from
 * them). */
static void keep_tables(struct route_area *a, struct route_run *r)
{
	route_tables_free(&a->last);
	topology_put(a->last_fabric);
	a->last = r->t;
	memset(&r->t, 0, sizeof(r->t));
	a->last_fabric = topology_get(r->fabric);
}

static void run_free(struct route_run *r)
{
	if (!r)
		return;
	/* a read that took the last tables and ends unpublished gives them
	 * back, with what it read meanwhile: the next read starts from them */
	if (r->adopted && r->t.block_of && !r->a->last.block_of)
		keep_tables(r->a, r);
	route_findings_free(&r->found);
	route_tables_free(&r->t);
	topology_put(r->fabric);
	free(r->failed);
	free(r->whole);
	free(r->some);
	free(r->skip);
	free(r->vl_reads);
	route_sa_free(r);
	free(r);
}

void route_read_abandon(struct route_run *r)
{
	run_free(r);
}

static void settled(unsigned reg, void *arg);
static int keep_guid(struct route_area *a, uint64_t guid);

/* The switches the published run left unread: kept as changed, for a
 * partial read of them after routingSettle, doubled each run in a row
 * that still leaves some (a switch that is gone for good costs its blocks'
 * timeouts that often, at most once a routingCheckInterval). With
 * routingSource sa the resume is a whole run: the SA's copy costs the
 * switches nothing. */
static void resume_unread(struct route_area *a)
{
	const struct route_tables *t = &a->last;
	unsigned unread = 0, delay = route_cfg.settle_s, cap = a->group.lifetime_s;

	for (size_t i = 0; i < t->n_switches; i++) {
		if (t->read[i])
			continue;
		unread++;
		if (keep_guid(a, a->last_fabric->nodes[t->switch_node[i]].guid))
			a->full_next = true;
	}
	if (!unread) {
		a->resumes = 0;
		return;
	}
	for (unsigned k = 0; k < a->resumes && delay < cap; k++)
		delay *= 2;
	if (cap && delay > cap)
		delay = cap;
	a->resumes++;
	DEBUGMSGTL(("ibsnmpd:route", "%u switches unread: read again in %u s\n", unread, delay));
	if (!a->settle_alarm && !a->again) /* else the read coming takes them */
		a->settle_alarm = snmp_alarm_register(delay, 0, settled, a);
}

/* ---- the checks' thread ---- */

static void checks(void *arg)
{
	struct route_run *r = arg;
	double t0 = monotonic_seconds();

	/* the blocks a partial read replaced: gone before the tables are kept */
	if (route_tables_compact(&r->t)) {
		/* out of memory: kept as they are */
	}
	r->check_rc = route_check(r->fabric, &r->t, &r->found);
	r->check_seconds = monotonic_seconds() - t0;
}

static void publish(void *arg)
{
	struct route_run *r = arg;
	struct route_area *a = r->a;
	struct route_routing *g = NULL;
	struct route_snapshot *s = NULL;
	const char *why = "out of memory";

	a->run = NULL;
	if (r->check_rc == 0 && (g = calloc(1, sizeof(*g)))) {
		g->refs = 1;
		g->f = r->found;
		memset(&r->found, 0, sizeof(r->found));
		route_sa_offenders(r, &g->f);
		g->fabric = topology_get(r->fabric);
		g->source = r->from_sa ? ROUTE_SOURCE_SA : ROUTE_SOURCE_SMP;
		g->read_at = time(NULL);
		for (unsigned k = 1; k <= ROUTE_ROUTING_CHECKS; k++)
			g->f.checks[k].at = g->read_at;
		g->read_seconds = r->read_done - r->began;
		g->check_seconds = r->check_seconds;
		g->switches = (unsigned)r->t.n_switches;
		for (size_t i = 0; i < r->t.n_switches; i++)
			g->switches_read += r->t.read[i];
		g->mads = r->mads;
		g->max_lid = r->t.max_lid;
		g->run = ++a->runs;
		DEBUGMSGTL(("ibsnmpd:route", "tables: %u unlike blocks of %zu, %zu octets\n",
			    r->t.n_blocks, (size_t)(r->t.max_lid / 64 + 1) * r->t.n_switches,
			    route_tables_bytes(&r->t)));
		keep_tables(a, r);
		resume_unread(a);
		s = route_snapshot_make(g, NULL, 0, cache_snapshot(&a->group));
	}
	if (s)
		DEBUGMSGTL(("ibsnmpd:route",
			    "checked %u switches (%u read) to %u LIDs: read %.2f s, %lu SMPs; "
			    "checks %.3f s\n",
			    g->switches, g->switches_read, g->f.destinations, g->read_seconds, g->mads,
			    g->check_seconds));
	route_routing_put(g);
	run_free(r);
	cache_refresh_done(&a->group, s, s ? NULL : why);
	if (a->again && !a->group.refreshing) {
		a->again = false;
		cache_group_refresh_now(&a->group);
	}
}

static void read_done(struct route_run *r)
{
	r->read_done = monotonic_seconds();
	if (r->whole) /* the others keep what the last read found */
		for (size_t i = 0; i < r->t.n_switches; i++)
			r->t.read[i] = r->failed[i] == 0 && r->blocks > 0 &&
				       (r->whole[i] || r->t.read[i]);
	else
		for (size_t i = 0; i < r->t.n_switches; i++)
			r->t.read[i] = r->failed[i] == 0 && r->blocks > 0;
	route_sa_path_sls(r);
}

void route_read_checks(struct route_run *r)
{
	struct route_area *a = r->a;

	if (worker_start(&a->checker, checks, publish, r)) {
		a->run = NULL;
		run_free(r);
		cache_refresh_done(&a->group, NULL, "no thread for the checks");
	}
}

/* ---- the read ---- */

struct block_ref {
	struct route_run *r;
	size_t sw;
	unsigned block;
};

/* routingSource sa: a block as the switch answered it, against the SA's
 * copy in the tables; a difference kept (the first LID that differs). */
static void compare_block(struct route_run *r, size_t sw, unsigned block, const uint8_t *data)
{
	struct route_diff d = {.sw = sw, .block = block};

	for (unsigned i = 0; i < 64 && block * 64 + i <= r->t.max_lid; i++) {
		uint8_t sm = route_entry(&r->t, block * 64 + i, sw);

		if (sm == data[i])
			continue;
		if (!d.differ++) {
			d.lid = block * 64 + i;
			d.port = data[i];
			d.sm_port = sm;
		}
	}
	if (!d.differ)
		return;
	if (r->n_diffs == r->cap_diffs) {
		size_t cap = r->cap_diffs ? 2 * r->cap_diffs : 16;
		struct route_diff *v = realloc(r->diffs, cap * sizeof(*v));

		if (!v)
			return;
		r->diffs = v;
		r->cap_diffs = cap;
	}
	r->diffs[r->n_diffs++] = d;
}

static void got_block(void *ctx, int result, const uint8_t *data, size_t len)
{
	struct block_ref *ref = ctx;
	struct route_run *r = ref->r;

	if (result == MAD_OK && data && len >= 64) {
		if (r->from_sa)
			compare_block(r, ref->sw, ref->block, data);
		if (route_tables_put_block(&r->t, ref->sw, ref->block, data))
			r->failed[ref->sw]++; /* not kept (out of memory): not read whole */
	} else
		r->failed[ref->sw]++;
	free(ref);
	if (--r->pending == 0)
		read_done(r);
}

struct vl_ref {
	struct route_run *r;
	size_t sw;
	unsigned out;
};

/* A port's SL2VL: what the credit-loop check takes its VLs from; not
 * answered, it stays as it was (routingSource sa: the last run's; else
 * unread, taken to be as most ports'). */
static void got_sl2vl(void *ctx, int result, const uint8_t *data, size_t len)
{
	struct vl_ref *ref = ctx;
	struct route_run *r = ref->r;
	uint8_t vl[16];

	if (result == MAD_OK && data && sma_sl2vl_decode(data, len, vl) == 0)
		route_tables_put_sl2vl(&r->t, ref->sw, ref->out, vl);
	free(ref);
	if (--r->pending == 0)
		read_done(r);
}

/* The SL2VL reads of switch sw: each port cabled to another switch, as
 * from the first other such port (the SM sets a port's table alike from
 * every input, as OpenSM does: one input read stands for all). */
static void plan_vl_reads_of(struct route_run *r, size_t sw)
{
	const struct topology *f = r->fabric;
	size_t node = r->t.switch_node[sw];
	unsigned n = 0, ports[256];

	for (unsigned p = 1; p <= f->nodes[node].num_ports && n < 256; p++) {
		const struct topo_port *tp = topology_port(f, node, p);
		const struct topo_node *far = tp && tp->peer_guid ? topology_node(f, tp->peer_guid)
								   : NULL;

		if (far && far->type == 2)
			ports[n++] = p;
	}
	for (unsigned k = 0; k < n && n > 1; k++)
		r->vl_reads[r->n_vl_reads++] = (struct route_vl_read){
			(uint32_t)sw, (uint8_t)ports[k ? 0 : 1], (uint8_t)ports[k]};
}

/* The SL2VL reads of this run: every switch's in a whole read; none in a
 * partial one (a link's change does not change what the SM maps SLs to:
 * the last read's stay, and a change costs its own blocks only); with
 * routingSource sa, a sixteenth of the switches each run (the others'
 * from the last run), as the blocks' sample. Not planned (out of memory):
 * none read (VL 0 taken). */
static void plan_vl_reads(struct route_area *a, struct route_run *r, bool rotate)
{
	size_t ports = 0;

	if (r->whole && !rotate)
		return;
	for (size_t i = 0; i < r->t.n_switches; i++)
		ports += r->fabric->nodes[r->t.switch_node[i]].num_ports;
	if (!(r->vl_reads = malloc((ports + 1) * sizeof(*r->vl_reads))))
		return;
	for (size_t i = 0; i < r->t.n_switches; i++)
		if (!rotate || i % 16 == a->runs % 16)
			plan_vl_reads_of(r, i);
}

static bool block_wanted(const struct route_run *r, size_t sw, unsigned block)
{
	if (!r->whole || r->whole[sw])
		return true;
	for (unsigned k = 0; k < r->n_some; k++)
		if (r->some[k] == block)
			return true;
	return false;
}

/* The next (switch, block) to read: block by block, each of every switch
 * in turn (every block of a switch read whole, those of `some` of the
 * others), so that the requests in a row go to different switches and
 * madMaxPerDestination holds none back in the queue; false: none left. */
static bool next_target(struct route_run *r, size_t *sw, unsigned *block)
{
	while (r->next_block < r->blocks) {
		while (r->next_sw < r->t.n_switches) {
			size_t s = r->next_sw++;

			if (!r->skip[s] && block_wanted(r, s, r->next_block)) {
				*sw = s;
				*block = r->next_block;
				return true;
			}
		}
		r->next_sw = 0;
		r->next_block++;
	}
	return false;
}

static void feed_sl2vl(struct route_run *r, const struct route_vl_read *v)
{
	const struct topo_node *nd = &r->fabric->nodes[r->t.switch_node[v->sw]];
	struct vl_ref *ref;
	ib_portid_t to;

	if (r->skip[v->sw] || topology_node_portid(nd, &to) || !(ref = malloc(sizeof(*ref))))
		return;
	*ref = (struct vl_ref){r, v->sw, v->out};
	r->pending++;
	r->mads++;
	if (mad_engine_smp_get(&to, IB_ATTR_SLVL_TABLE, (unsigned)v->in << 8 | v->out, got_sl2vl,
			       ref)) {
		free(ref);
		r->pending--;
	}
}

/* The feeder: the next blocks, a few at a time, then the SL2VL tables. */
static bool feed(void *ctx)
{
	struct route_run *r = ctx;

	for (unsigned n = 0; n < 8; n++) {
		const struct topo_node *nd;
		struct block_ref *ref;
		ib_portid_t to;
		unsigned block;
		size_t sw;

		if (!next_target(r, &sw, &block)) {
			if (r->next_vl < r->n_vl_reads) {
				feed_sl2vl(r, &r->vl_reads[r->next_vl++]);
				continue;
			}
			if (--r->pending == 0) /* the hold of the start */
				read_done(r);
			return false;
		}
		nd = &r->fabric->nodes[r->t.switch_node[sw]];
		if (topology_node_portid(nd, &to)) {
			r->failed[sw]++;
			r->skip[sw] = true; /* none of its blocks */
			continue;
		}
		if (!(ref = malloc(sizeof(*ref)))) {
			r->failed[sw]++;
			continue;
		}
		*ref = (struct block_ref){r, sw, block};
		r->pending++;
		r->mads++;
		if (mad_engine_smp_get(&to, IB_ATTR_LINEARFORWTBL, block, got_block, ref)) {
			free(ref);
			r->pending--;
			r->failed[sw]++;
		}
	}
	return true;
}

/* Whether the last tables name the same switches as f (the LIDs may have
 * grown or shrunk: a CA's LID come or gone is read in its block). */
static bool same_switches(const struct route_area *a, const struct topology *f,
			  const struct route_tables *t)
{
	const struct topology *l = a->last_fabric;

	if (!l || !a->last.block_of || a->last.n_switches != t->n_switches)
		return false;
	for (size_t i = 0; i < t->n_switches; i++)
		if (l->nodes[a->last.switch_node[i]].guid != f->nodes[t->switch_node[i]].guid)
			return false;
	return true;
}

static int guid_cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return (a > b) - (a < b);
}

/* A read of the switches the patches since the last read changed, the
 * others' tables taken from it; or (no change to follow, a new node list,
 * no table before) of every switch. */
static void partial_from_last(struct route_area *a, struct route_run *r,
			      const struct topology *f)
{
	bool partial = a->partial_wanted && !a->full_next &&
		       (a->n_changed || a->n_changed_lids) && same_switches(a, f, &r->t);

	/* a periodic read begun while a change settles reads every switch,
	 * but maybe before the SM rerouted: the settled read still follows,
	 * with the changes kept for it */
	if (!a->partial_wanted)
		return;
	a->full_next = a->partial_wanted = false;
	/* the last tables taken over, not copied (the blocks this read
	 * replaces are dropped before its checks) */
	if (partial && (r->whole = calloc(r->t.n_switches + 1, sizeof(*r->whole))) &&
	    (r->some = calloc(a->n_changed_lids + 1, sizeof(*r->some))) &&
	    route_tables_adopt(&r->t, &a->last) == 0) {
		r->adopted = true;
		qsort(a->changed, a->n_changed, sizeof(*a->changed), guid_cmp);
		for (size_t i = 0; i < r->t.n_switches; i++) {
			uint64_t guid = f->nodes[r->t.switch_node[i]].guid;

			r->whole[i] = a->n_changed && bsearch(&guid, a->changed, a->n_changed,
							      sizeof(guid), guid_cmp);
		}
		/* the blocks of the LIDs given, once each */
		for (size_t k = 0; k < a->n_changed_lids; k++) {
			unsigned b = a->changed_lids[k] / 64;
			bool seen = false;

			for (unsigned j = 0; j < r->n_some && !seen; j++)
				seen = r->some[j] == b;
			if (!seen && b < r->blocks)
				r->some[r->n_some++] = b;
		}
	} else if (partial) { /* out of memory: all of it */
		free(r->whole);
		r->whole = NULL;
	}
	a->n_changed = a->n_changed_lids = 0;
}

void route_read_start(struct cache_group *g)
{
	struct route_area *a = g->owner;
	const struct topology *f = a->topology ? cache_snapshot(a->topology) : NULL;
	struct route_run *r;
	unsigned max_lid;

	if (!f) {
		cache_refresh_done(g, NULL, "no discovery of the subnet yet");
		return;
	}
	if (route_cfg.source != ROUTE_SOURCE_SA && mad_engine_smps_refused()) {
		/* a protected fabric without the key: each SMP would be a violation */
		cache_refresh_done(g, NULL, "SMPs refused (M_Key): the switches' tables not read");
		return;
	}
	max_lid = route_max_lid(f);
	r = calloc(1, sizeof(*r));
	if (!r || route_tables_init(&r->t, f, max_lid) ||
	    !(r->failed = calloc(r->t.n_switches + 1, sizeof(*r->failed))) ||
	    !(r->skip = calloc(r->t.n_switches + 1, sizeof(*r->skip)))) {
		if (r) {
			route_tables_free(&r->t);
			free(r->failed);
		}
		free(r);
		cache_refresh_done(g, NULL, "out of memory");
		return;
	}
	r->blocks = max_lid / 64 + 1;
	r->a = a;
	r->fabric = topology_get(f);
	r->began = monotonic_seconds();
	a->run = r;
	r->t.path_sls = route_cfg.path_sls;
	if (route_cfg.source == ROUTE_SOURCE_SA) { /* the SM's copy, whole, then a sample */
		bool same = same_switches(a, f, &r->t) &&
			    a->last.vl_first[a->last.n_switches] == r->t.vl_first[r->t.n_switches];

		a->n_changed = a->n_changed_lids = 0;
		a->full_next = a->partial_wanted = false;
		if (same) /* the VLs of the switches not read this run */
			memcpy(r->t.sl2vl, a->last.sl2vl,
			       r->t.vl_first[r->t.n_switches] * sizeof(*r->t.sl2vl));
		plan_vl_reads(a, r, same);
		route_sa_read(r);
		return;
	}
	partial_from_last(a, r, f);
	plan_vl_reads(a, r, false);
	r->pending = 1; /* held until every SMP is queued */
	r->feeder = (struct mad_feeder){.next = feed, .ctx = r};
	mad_engine_feed(&r->feeder);
}

void route_read_sample(struct route_run *r)
{
	if (mad_engine_smps_refused()) { /* the SA's copy alone */
		r->pending = 1;
		if (--r->pending == 0)
			read_done(r);
		return;
	}
	r->next_sw = 0;
	r->next_block = 0;
	r->next_vl = 0;
	r->pending = 1; /* held until every SMP is queued */
	r->feeder = (struct mad_feeder){.next = feed, .ctx = r};
	mad_engine_feed(&r->feeder);
}

static void settled(unsigned reg, void *arg)
{
	struct route_area *a = arg;

	(void)reg;
	a->settle_alarm = 0;
	a->partial_wanted = true;
	if (a->group.refreshing)
		a->again = true;
	else
		cache_group_refresh_now(&a->group);
}

static int keep_guid(struct route_area *a, uint64_t guid)
{
	if (a->n_changed == a->cap_changed) {
		size_t cap = a->cap_changed ? 2 * a->cap_changed : 16;
		uint64_t *v = realloc(a->changed, cap * sizeof(*v));

		if (!v)
			return -1;
		a->changed = v;
		a->cap_changed = cap;
	}
	a->changed[a->n_changed++] = guid;
	return 0;
}

static int keep_lid(struct route_area *a, unsigned lid)
{
	if (a->n_changed_lids == a->cap_changed_lids) {
		size_t cap = a->cap_changed_lids ? 2 * a->cap_changed_lids : 16;
		unsigned *v = realloc(a->changed_lids, cap * sizeof(*v));

		if (!v)
			return -1;
		a->changed_lids = v;
		a->cap_changed_lids = cap;
	}
	a->changed_lids[a->n_changed_lids++] = lid;
	return 0;
}

/* What the patch after (of before) changed, for the next read: the
 * switches whose ports it changed are read whole, and on every switch the
 * blocks of the LIDs of the CA ports it changed (a CA come or gone, a LID
 * moved: the SM routes or unroutes that LID everywhere); a switch come or
 * gone has every table read. */
static void note_changed(struct route_area *a, const struct topology *before,
			 const struct topology *after)
{
	for (size_t k = 0; k < after->n_changed && !a->full_next; k++) {
		const struct topo_port_ref *ref = &after->changed[k];
		const struct topo_node *now = topology_node(after, ref->guid);
		const struct topo_node *was = topology_node(before, ref->guid);
		const struct topology *in = now ? after : before;
		const struct topo_node *nd = now ? now : was;
		const struct topo_port *tp;

		if (!nd)
			continue;
		if (nd->type == 2) {
			if (!now || !was || keep_guid(a, nd->guid))
				a->full_next = true;
			continue;
		}
		tp = topology_port(in, (size_t)(nd - in->nodes), ref->port);
		if (tp && tp->lid && keep_lid(a, tp->lid))
			a->full_next = true;
		if (now && was && (tp = topology_port(before, (size_t)(was - before->nodes),
						      ref->port)) && tp->lid && keep_lid(a, tp->lid))
			a->full_next = true; /* the LID it had */
	}
}

static void settle_again(struct route_area *a)
{
	if (a->settle_alarm)
		snmp_alarm_unregister(a->settle_alarm);
	a->settle_alarm = snmp_alarm_register(route_cfg.settle_s, 0, settled, a);
}

void route_read_soon(struct route_area *a, const struct topology *before,
		     const struct topology *after)
{
	if (after->patched_from && before && after->patched_from == before->serial)
		note_changed(a, before, after);
	else
		a->full_next = true;
	settle_again(a);
}

void route_read_master_changed(struct route_area *a, uint64_t was, uint64_t now)
{
	snmp_log(LOG_INFO, "routing checks: the master SM is %016llx, was %016llx: every table "
		 "read again in %u s\n", (unsigned long long)now, (unsigned long long)was,
		 route_cfg.settle_s);
	a->full_next = true;
	settle_again(a);
}

int route_read_init(struct route_area *a)
{
	return worker_init(&a->checker, "routing checks");
}

void route_read_stop(struct route_area *a)
{
	bool checking = a->checker.running;

	if (a->settle_alarm)
		snmp_alarm_unregister(a->settle_alarm);
	a->settle_alarm = 0;
	worker_stop(&a->checker);
	if (checking) { /* its checks joined: not published */
		run_free(a->run);
		a->run = NULL;
	} else if (a->run) {
		route_sa_free(a->run); /* its helper stopped; SMPs of its sample: as below */
	}
	route_tables_free(&a->last);
	topology_put(a->last_fabric);
	a->last_fabric = NULL;
	free(a->changed);
	a->changed = NULL;
	free(a->changed_lids);
	a->changed_lids = NULL;
	/* a read still feeding: the engine calls back no more at stop, its
	 * memory goes with the process */
}
