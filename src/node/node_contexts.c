/* Every node of the subnet as an SNMP device: the directory's cache group
 * (derived: rebuilt after each fabric or PM sweep, no MAD of its own), and
 * one SNMP context per node, registered with snmpd over AgentX as nodes
 * come (switches first) and unregistered when they have been gone for
 * nodeContextHold seconds.
 *
 * A context's system group and IF-MIB come from the subnet-wide sweeps and
 * are there at once. Its SMA-MIB groups (forwarding tables, SL-to-VL and VL
 * arbitration of every port: too heavy to sweep for every switch) are read
 * when SMA-MIB is first asked in the context (PortInfo of ports 1..N comes
 * from the fabric sweep), then kept fresh per cacheLifetime while it is
 * asked at least every nodeContextIdle seconds; then they stop and are
 * dropped. A request never waits for them: until they are read they have
 * no instances.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <net-snmp/agent/agent_callbacks.h>

#include "ibsnmpd/fabric.h"
#include "ibsnmpd/netsnmp_compat.h"
#include "ibsnmpd/node.h"
#include "ibsnmpd/notify.h"
#include "ibsnmpd/pm.h"

#define TICK_S 2

/* A context's own SMA-MIB reads: made when first asked (most contexts of a
 * big fabric never are, and cost nothing for it). */
struct node_sma {
	struct sma_collector collector;
	char group_name[SMA_GROUPS][MIB_NODE_CONTEXT_MAX + 32]; /* its log lines name it */
	struct cache_observer stage_done[2]; /* its start-up steps: NodeInfo, PortInfo */
};

struct node_context {
	uint64_t guid;
	char name[MIB_NODE_CONTEXT_MAX];
	struct node_area *area;
	struct node_sma *own;          /* NULL until SMA-MIB is asked */
	struct sma_collector *sma;     /* what SMA-MIB serves: own's, the local node's, NULL */
	bool sma_running, sma_started;
	bool retired;                  /* unregistered; freed once no read is in flight */
	time_t last_asked;             /* monotonic */
	/* entConfigChange (RFC 6933): when the last went (monotonic s), and
	 * whether a change waits for the end of its throttling period */
	double entity_notified;
	bool entity_pending;
	/* one registration: mib-2, SMA-MIB, ibsnmpdPortExtTable */
	struct node_context_regs regs;
};

/* ---- the directory ---------------------------------------------------------- */

/* A directory points into the sweeps' snapshots (its interfaces' links
 * and counters, its entities' hardware) rather than copying them; at
 * 40,000 hosts with switch contexts a build is some 200 ms, and a host's
 * change publishes three or four snapshots. So a sweep's publication
 * builds it again at most every NODE_DIR_GAP_S, the snapshots it points
 * into held for it meanwhile (a discovery's builds it at once). */
#define NODE_DIR_GAP_S 1.0
#define NODE_DIR_SOURCES 3

struct node_dir_holds {
	struct cache_group *group[NODE_DIR_SOURCES];
	const void *snapshot[NODE_DIR_SOURCES];
};

/* The sweeps' snapshots the directory was built from, held; NULL: out of
 * memory (the directory is then built again at each publication). */
static struct node_dir_holds *hold_sources(struct node_area *a)
{
	struct node_dir_holds *h = calloc(1, sizeof(*h));
	struct cache_group *groups[NODE_DIR_SOURCES] = {a->ports, a->counters, a->vitals};

	for (int i = 0; h && i < NODE_DIR_SOURCES; i++)
		if (groups[i] && (h->snapshot[i] = cache_snapshot_hold(groups[i])))
			h->group[i] = groups[i];
	return h;
}

static void dir_free(void *p)
{
	struct node_dir *d = p;

	if (d && d->holds) {
		for (int i = 0; i < NODE_DIR_SOURCES; i++)
			if (d->holds->group[i])
				cache_snapshot_release(d->holds->group[i], d->holds->snapshot[i]);
		free(d->holds);
		d->holds = NULL;
	}
	node_dir_free(d);
}

static void refresh_dir(struct cache_group *g)
{
	struct node_area *a = g->owner;
	struct node_dir_build in = {
		.fabric = cache_snapshot(a->topology),
		.ports = a->ports ? cache_snapshot(a->ports) : NULL,
		.counters = a->counters ? cache_snapshot(a->counters) : NULL,
		.vitals = a->vitals ? cache_snapshot(a->vitals) : NULL,
		.vitals_lifetime_s = a->vitals ? a->vitals->lifetime_s : 0,
		.prev = cache_snapshot(g),
		.types_mask = ibsnmpd_cfg.node_context_types,
		.hold_s = a->hold_s,
		.now = time(NULL),
		.boot = a->boot,
	};
	struct node_dir *d;

	if (!in.fabric && !in.prev)
		return cache_refresh_done(g, NULL, NULL); /* nothing discovered yet */
	d = node_dir_build(&in);
	if (d)
		d->holds = hold_sources(a);
	a->dir_built_at = monotonic_seconds();
	if (a->dir_alarm) {
		snmp_alarm_unregister(a->dir_alarm); /* this build is the one due */
		a->dir_alarm = 0;
	}
	/* never the previous one: it points into the snapshots being replaced */
	cache_refresh_done(g, d ? d : node_dir_empty(),
			   d ? NULL : "out of memory: no node served until the next build");
}

static void dir_due(unsigned reg, void *arg)
{
	struct node_area *a = arg;

	(void)reg;
	a->dir_alarm = 0;
	cache_group_refresh_now(&a->dir);
}

/* ---- a context's SMA-MIB, read while asked ------------------------------------ */

static bool sma_in_flight(const struct node_context *c)
{
	for (int i = 0; c->own && i < SMA_GROUPS; i++)
		if (c->own->collector.group[i].refreshing)
			return true;
	return false;
}

static void sma_stage_done(struct cache_group *g, const void *before, const void *after,
			   void *arg)
{
	struct node_context *c = arg;

	(void)g;
	(void)before;
	(void)after;
	if (c->sma_running && !c->sma_started)
		c->sma_started = sma_collector_start_step(c->sma);
}

/* A remote node's ports 1..N as the fabric sweep last read them: the same
 * SubnGet(PortInfo), so the context's SMA-MIB sends no second one (its
 * switch port 0, and a port the sweep could not read, it reads itself). */
static bool port_from_fabric_sweep(void *arg, unsigned port, struct sma_portinfo *pi)
{
	const struct node_context *c = arg;
	const struct fabric_snapshot *s = c->area->ports ? cache_snapshot(c->area->ports) : NULL;
	const struct fabric_port *fp = s ? fabric_find(s, c->guid, port) : NULL;

	if (!fp || !fp->have_info || fp->stale || fp->gone)
		return false;
	return sma_portinfo_decode(fp->pi_raw, sizeof(fp->pi_raw), pi) == 0;
}

static void sma_start(struct node_context *c)
{
	const struct topology *f = cache_snapshot(c->area->topology);
	const struct topo_node *nd = f ? topology_node(f, c->guid) : NULL;
	ib_portid_t path;

	if (!nd || topology_node_portid(nd, &path))
		return; /* not reached now: nothing to read */
	if (!c->own && !(c->own = calloc(1, sizeof(*c->own)))) {
		snmp_log(LOG_ERR, "%s: out of memory for its SMA-MIB\n", c->name);
		return;
	}
	if (!c->sma || (!sma_in_flight(c) && memcmp(&path, &c->sma->path, sizeof(path)))) {
		struct node_sma *o = c->own;

		sma_collector_init(&o->collector, &path, true);
		o->collector.port_known = port_from_fabric_sweep;
		o->collector.port_known_arg = c;
		for (int i = 0; i < SMA_GROUPS; i++) {
			snprintf(o->group_name[i], sizeof(o->group_name[i]), "%s: %s", c->name,
				 o->collector.group[i].name);
			o->collector.group[i].name = o->group_name[i];
		}
		cache_group_observe(&o->collector.group[SMA_NODE_INFO], &o->stage_done[0],
				    sma_stage_done, c);
		cache_group_observe(&o->collector.group[SMA_PORT_INFO], &o->stage_done[1],
				    sma_stage_done, c);
		c->sma = &o->collector;
	}
	DEBUGMSGTL(("ibsnmpd:nodes", "%s: SMA-MIB asked, reading it\n", c->name));
	c->sma_running = true;
	c->sma_started = false;
	sma_collector_start(c->sma);
}

static void sma_stop(struct node_context *c)
{
	DEBUGMSGTL(("ibsnmpd:nodes", "%s: SMA-MIB not asked for a while, dropped\n", c->name));
	sma_collector_stop(c->sma);
	c->sma_running = false;
}

static void sma_asked(void *arg)
{
	struct node_context *c = arg;

	c->last_asked = monotonic_whole_seconds();
	if (!c->sma_running)
		sma_start(c);
}

/* ---- contexts come and go ----------------------------------------------------- */

static const struct sma_nodeinfo *local_info(const struct node_area *a)
{
	return a->local ? cache_snapshot(&a->local->group[SMA_NODE_INFO]) : NULL;
}

static struct node_context *context_new(struct node_area *a, const struct node_entry *e)
{
	struct node_context *c = calloc(1, sizeof(*c));
	const struct sma_nodeinfo *li = local_info(a);
	/* SMA-MIB requests start its reads; the system group's and IF-MIB's
	 * do not (they come from the subnet-wide sweeps) */
	struct mib_asked asked = {sma_asked, c};

	if (!c)
		return NULL;
	c->guid = e->guid;
	c->area = a;
	snprintf(c->name, sizeof(c->name), "%s", e->context);
	if (li && li->node_guid == e->guid) {
		c->sma = a->local; /* the local node: read all the time already */
		asked.fn = NULL;
	}
	compat_context_roots(c->name);
	if (node_mib_register_context(&c->regs, &a->dir, c->guid, c->name, &c->sma, asked)) {
		free(c);
		return NULL;
	}
	DEBUGMSGTL(("ibsnmpd:nodes", "context %s registered (%s)\n", c->name, e->desc));
	return c;
}

static void context_retire(struct node_context *c)
{
	DEBUGMSGTL(("ibsnmpd:nodes", "context %s unregistered\n", c->name));
	node_mib_unregister_context(&c->regs);
	if (c->sma_running)
		sma_stop(c);
	c->retired = true;
}

static void context_free(struct node_context *c)
{
	if (c->own)
		sma_collector_stop(&c->own->collector);
	free(c->own);
	free(c);
}

static int context_cmp(const void *a, const void *b)
{
	const struct node_context *x = *(struct node_context *const *)a;
	const struct node_context *y = *(struct node_context *const *)b;

	return x->guid < y->guid ? -1 : x->guid > y->guid;
}

/* The live context of guid (a retired one of the same node may still wait
 * to be freed beside it). */
static struct node_context *find_context(const struct node_area *a, uint64_t guid)
{
	size_t lo = 0, hi = a->n_contexts;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a->contexts[mid]->guid < guid)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < a->n_contexts && a->contexts[lo]->guid == guid; lo++)
		if (!a->contexts[lo]->retired)
			return a->contexts[lo];
	return NULL;
}

static int add_context(struct node_area *a, struct node_context *c)
{
	if (a->n_contexts == a->cap_contexts) {
		size_t cap = a->cap_contexts ? a->cap_contexts * 2 : 64;
		void *q = realloc(a->contexts, cap * sizeof(*a->contexts));

		if (!q)
			return -1;
		a->contexts = q;
		a->cap_contexts = cap;
	}
	a->contexts[a->n_contexts++] = c;
	return 0;
}

/* Contexts of nodes gone (or whose type no longer gets one) go, new nodes
 * get theirs, switches first: after a directory is published, at the end
 * of the pass (dir_published). Each registration and unregistration is an
 * AgentX exchange that net-snmp makes synchronously (a round trip to
 * snmpd): thousands of them at once would hold the main loop for seconds,
 * so a pass makes them for FOLLOW_SLICE_S at most and the next pass goes
 * on (from the directory published by then). */
#define FOLLOW_SLICE_S 0.05

/* The new contexts of d, switches first; false when the slice ran out. */
static bool contexts_add(struct node_area *a, const struct node_dir *d, double deadline)
{
	size_t n_new = 0, *fresh = calloc(d->n ? d->n : 1, sizeof(*fresh));
	bool done = true;

	if (!fresh) {
		snmp_log(LOG_ERR, "node contexts: out of memory\n");
		return true;
	}
	/* found while the array is sorted; then made */
	for (size_t k = 0; k < d->n; k++)
		if (d->nodes[k].context[0] && !find_context(a, d->nodes[k].guid))
			fresh[n_new++] = k;
	for (int pass = 0; pass < 2 && done; pass++) {
		for (size_t j = 0; j < n_new; j++) {
			const struct node_entry *e = &d->nodes[fresh[j]];
			struct node_context *c;

			if ((e->type == 2) != (pass == 0))
				continue;
			if (monotonic_seconds() >= deadline) {
				done = false;
				break;
			}
			if (!(c = context_new(a, e)) || add_context(a, c)) {
				if (c) {
					context_retire(c);
					context_free(c);
				}
				a->following.failed++;
				continue;
			}
			a->following.added++;
		}
	}
	free(fresh);
	if (a->n_contexts > 1) /* none at all: no array (qsort wants one) */
		qsort(a->contexts, a->n_contexts, sizeof(*a->contexts), context_cmp);
	if (a->following.added)
		compat_default_context_first();
	return done;
}

static void contexts_follow_dir(void *arg)
{
	struct node_area *a = arg;
	const struct node_dir *d = cache_snapshot(&a->dir);
	double deadline = monotonic_seconds() + FOLLOW_SLICE_S;

	if (!d || a->master_away)
		return; /* master_back() follows */
	if (!a->following.running) {
		memset(&a->following, 0, sizeof(a->following));
		a->following.running = true;
		a->following.began = monotonic_seconds();
	}
	for (size_t k = 0; k < a->n_contexts; k++) {
		struct node_context *c = a->contexts[k];
		const struct node_entry *e = node_dir_find(d, c->guid);

		if (c->retired || (e && e->context[0]))
			continue;
		if (monotonic_seconds() >= deadline) {
			loop_defer(&a->follow);
			return;
		}
		context_retire(c);
	}
	if (!contexts_add(a, d, deadline)) {
		DEBUGMSGTL(("ibsnmpd:nodes", "node contexts: %zu registered so far, going on in "
			    "the next pass\n", a->following.added));
		loop_defer(&a->follow);
		return;
	}
	a->following.running = false;
	if (a->following.added || a->following.failed)
		snmp_log(a->following.failed ? LOG_WARNING : LOG_INFO,
			 "node contexts: %zu registered in %.2f s%s (%zu in all)\n",
			 a->following.added, monotonic_seconds() - a->following.began,
			 a->following.failed ? ", some could not be (see above)" : "", a->n_contexts);
}

/* A directory published while the main loop dispatches a ready descriptor
 * (MAD answers, the discovery's output): net-snmp's synchronous AgentX
 * exchange there would run a select loop of its own, take what the outer
 * loop found ready and block reading it (the daemon stalled until snmpd
 * dropped the session: seen in CI). The contexts follow at the end of the
 * pass, once every ready descriptor has been read. */
static void dir_published(struct cache_group *g, const void *before, const void *after,
			  void *arg)
{
	struct node_area *a = arg;

	(void)g;
	(void)before;
	(void)after;
	loop_defer(&a->follow);
}

/* ENTITY-MIB::entConfigChange for a node whose entities changed while its
 * context served (modules in or out), in its context (v3 receivers see it)
 * and naming it (ibsnmpdNodeContext) for the others. RFC 6933's throttle,
 * per context (each is an agent to an NMS): at most one in
 * ENTITY_CHANGE_QUIET_S; changes within that time are told by one more at
 * its end (the tick). A rail dead changes hundreds of contexts at once:
 * their notifications wait in the notification path's queue, in order. */
#define ENTITY_CHANGE_QUIET_S 5.0

static void entity_notify(struct node_context *c, const struct node_entry *e)
{
	static const oid trap[] = {1, 3, 6, 1, 2, 1, 47, 2, 0, 1}; /* entConfigChange */
	netsnmp_variable_list *vl = mib_notification_new(trap, OID_LENGTH(trap));

	if (vl)
		mib_notification_add_node_context(&vl, e->guid, e->type);
	notify_send_context(NOTIFY_ENTITY, 1, e->lid, vl, c->name);
	c->entity_notified = monotonic_seconds();
	c->entity_pending = false;
}

static void entities_changed(struct cache_group *g, const void *before, const void *after,
			     void *arg)
{
	struct node_area *a = arg;
	const struct node_dir *b = before, *d = after;

	(void)g;
	for (size_t k = 0; b && d && k < d->n; k++) {
		const struct node_entry *e = &d->nodes[k], *old;
		struct node_context *c;

		if (!e->context[0] || !(old = node_dir_find(b, e->guid)) || !old->context[0] ||
		    old->entity_changed == e->entity_changed || !(c = find_context(a, e->guid)))
			continue;
		if (c->entity_notified && monotonic_seconds() - c->entity_notified < ENTITY_CHANGE_QUIET_S)
			c->entity_pending = true; /* at the end of the period (tick) */
		else
			entity_notify(c, e);
	}
}

/* The throttling periods that ended with a change in them. */
static void entities_pending(struct node_area *a)
{
	const struct node_dir *d = cache_snapshot(&a->dir);

	for (size_t k = 0; d && k < a->n_contexts; k++) {
		struct node_context *c = a->contexts[k];
		const struct node_entry *e;

		if (!c->entity_pending || c->retired ||
		    monotonic_seconds() - c->entity_notified < ENTITY_CHANGE_QUIET_S)
			continue;
		if ((e = node_dir_find(d, c->guid)))
			entity_notify(c, e);
		else
			c->entity_pending = false;
	}
}

/* snmpd gone (a subagent's session closed): net-snmp would register every
 * context again, at once, in the pass the session opens again
 * (register_mib_reattach: a synchronous round trip each, seconds for the
 * thousands of a big fabric). The contexts go now (nothing is sent: the
 * session is closed) and come back a slice a pass once it is open. */
static int master_gone(int major, int minor, void *server_arg, void *client_arg)
{
	struct node_area *a = client_arg;
	size_t n = 0;

	(void)major;
	(void)minor;
	(void)server_arg;
	loop_cancel(&a->follow);
	a->following.running = false;
	a->master_away = true;
	for (size_t k = 0; k < a->n_contexts; k++)
		if (!a->contexts[k]->retired) {
			context_retire(a->contexts[k]);
			n++;
		}
	DEBUGMSGTL(("ibsnmpd:nodes", "AgentX session closed: %zu contexts dropped until it is "
		    "back\n", n));
	return SNMP_ERR_NOERROR;
}

static int master_back(int major, int minor, void *server_arg, void *client_arg)
{
	struct node_area *a = client_arg;

	(void)major;
	(void)minor;
	(void)server_arg;
	a->master_away = false;
	loop_defer(&a->follow);
	return SNMP_ERR_NOERROR;
}

/* Every TICK_S: SMA-MIB reads of contexts no longer asked stop; contexts
 * unregistered are freed once nothing of theirs is in flight. */
static void tick(unsigned reg, void *arg)
{
	struct node_area *a = arg;
	time_t now = monotonic_whole_seconds();
	size_t kept = 0;

	(void)reg;
	for (size_t k = 0; k < a->n_contexts; k++) {
		struct node_context *c = a->contexts[k];

		if (c->retired && !sma_in_flight(c)) {
			context_free(c);
			continue;
		}
		a->contexts[kept++] = c;
		if (!c->sma_running)
			continue;
		if (now - c->last_asked > (time_t)a->idle_s)
			sma_stop(c);
		else if (!c->sma_started)
			c->sma_started = sma_collector_start_step(c->sma);
	}
	a->n_contexts = kept;
	entities_pending(a);
}

/* A sweep the directory reads published: the directory is built again
 * if a node has a context (its interfaces and entities point into the
 * sweeps' snapshots); without contexts it holds nothing of theirs. */
static void sweep_published(struct cache_group *g, const void *before, const void *after,
			    void *arg)
{
	struct node_area *a = arg;
	const struct node_dir *d = cache_snapshot(&a->dir);
	double since = monotonic_seconds() - a->dir_built_at;

	(void)g;
	(void)after;
	if (d && !ibsnmpd_cfg.node_context_types)
		return;
	if (!d || !d->holds || !before || since >= NODE_DIR_GAP_S) {
		/* now: it would point into what goes, or a sweep's first
		 * reading fills it (what the contexts serve at start) */
		cache_group_refresh_now(&a->dir);
	} else if (!a->dir_alarm) {
		struct timeval due = {0, (suseconds_t)((NODE_DIR_GAP_S - since) * 1e6)};

		a->dir_alarm = snmp_alarm_register_hr(due, 0, dir_due, a);
		if (!a->dir_alarm)
			cache_group_refresh_now(&a->dir);
	}
}

void node_contexts_start(struct node_area *a)
{
	a->dir.name = "node directory";
	a->dir.refresh = refresh_dir;
	a->dir.free_snapshot = dir_free;
	a->dir.owner = a;
	a->follow.fn = contexts_follow_dir;
	a->follow.arg = a;
	/* sysUpTime 0 on the wall clock: the context's TimeStamps (LLDP-MIB's
	 * time marks, which are indexes; ifLastChange, ...) are computed from
	 * it, so that one stays the same at every request. A second later
	 * than the uptime says: the wall clock's seconds are whole, and a
	 * TimeStamp must not pass sysUpTime. */
	a->boot = time(NULL) + 1 - (time_t)(netsnmp_get_agent_uptime() / 100);
	/* no lifetime of its own: rebuilt when a source publishes (the
	 * sweeps' only where a node has a context) */
	cache_group_follow(&a->dir, a->topology, &a->follows[0]);
	if (a->ports)
		cache_group_observe(a->ports, &a->follows[1], sweep_published, a);
	if (a->counters)
		cache_group_observe(a->counters, &a->follows[2], sweep_published, a);
	if (a->vitals)
		cache_group_observe(a->vitals, &a->follows[3], sweep_published, a);
	cache_group_observe(&a->dir, &a->registers, dir_published, a);
	cache_group_observe(&a->dir, &a->entities_seen, entities_changed, a);
	a->tick_alarm = snmp_alarm_register(TICK_S, SA_REPEAT, tick, a);
	snmp_register_callback(SNMP_CALLBACK_APPLICATION, SNMPD_CALLBACK_INDEX_STOP, master_gone, a);
	snmp_register_callback(SNMP_CALLBACK_APPLICATION, SNMPD_CALLBACK_INDEX_START, master_back, a);
	if (cache_snapshot(a->topology)) /* a discovery is in already */
		cache_group_refresh_now(&a->dir);
}

void node_contexts_apply_config(struct node_area *a)
{
	for (size_t k = 0; k < a->n_contexts; k++)
		if (a->contexts[k]->own)
			sma_collector_apply_config(&a->contexts[k]->own->collector);
	if (a->dir.snapshot)
		cache_group_refresh_now(&a->dir); /* nodeContextTypes may have changed */
}

void node_contexts_stop(struct node_area *a)
{
	snmp_unregister_callback(SNMP_CALLBACK_APPLICATION, SNMPD_CALLBACK_INDEX_STOP, master_gone, a,
				 1);
	snmp_unregister_callback(SNMP_CALLBACK_APPLICATION, SNMPD_CALLBACK_INDEX_START, master_back,
				 a, 1);
	cache_group_unobserve(a->topology, &a->follows[0]);
	if (a->ports)
		cache_group_unobserve(a->ports, &a->follows[1]);
	if (a->counters)
		cache_group_unobserve(a->counters, &a->follows[2]);
	if (a->vitals)
		cache_group_unobserve(a->vitals, &a->follows[3]);
	if (a->tick_alarm)
		snmp_alarm_unregister(a->tick_alarm);
	a->tick_alarm = 0;
	if (a->dir_alarm)
		snmp_alarm_unregister(a->dir_alarm);
	a->dir_alarm = 0;
	loop_cancel(&a->follow);
	for (size_t k = 0; k < a->n_contexts; k++) {
		if (!a->contexts[k]->retired)
			context_retire(a->contexts[k]);
		context_free(a->contexts[k]);
	}
	free(a->contexts);
	a->contexts = NULL;
	a->n_contexts = a->cap_contexts = 0;
	cache_group_stop(&a->dir);
}
