/* The links of the subnet, swept: SubnGet(PortInfo) of ports 1..N of every
 * node the topology's discovery found, LID-routed (directed-routed by the
 * discovery's route while a node has no LID), all through the MAD engine
 * (madMaxOutstanding in flight). The answers become a snapshot in
 * fabric_build() (fabric_link.c); after it is published the baseline's state
 * file is rewritten if it changed (and, fabric_notify.c, the notifications
 * it asks for are sent).
 *
 * Sweeps: when a discovery brings a new node list, every fabricPorts
 * lifetime, and, a second after a trap 128, of the switches the traps name
 * (a partial sweep: the other rows stay as they are); when the topology
 * followed a change (a patched topology), of the ports it changed. After
 * each publication the topology compares what was read (it follows the
 * links that came and went by probes: topology_follow.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/fabric.h"
#include "ibsnmpd/mad_engine.h"
#include "ibsnmpd/netsnmp.h"
#include "ibsnmpd/pm.h"

#define STATE_FILE_MAX (64u << 20)
#define TRAP_DELAY_S 1 /* the SM brings a link up within it; a burst is one sweep */
/* A trapped switch whose ports did not all answer is read again, 1, 2, 4,
 * 8 then 16 s later: a lost read must not leave a link's change to the
 * periodic sweep, when the link may have come back before it (seen: a
 * leaf losing 30% of its MADs, a host's link down 15 s told neither way). */
#define TRAP_REREADS 5

struct sweep {
	struct fabric_area *a;
	const struct topology *fabric; /* held */
	struct fabric_reading *readings;
	size_t n, pending;
	bool partial;
	/* what to read, fed to the engine one by one as it has room: a node's
	 * ports (port 0: all of them) */
	struct sweep_item {
		size_t node;
		unsigned port;
	} *items;
	size_t n_items, next_item;
	struct mad_feeder feeder;
	struct fabric_trap_lid *trapped; /* the trap LIDs this sweep reads */
	size_t n_trapped;
};

static void trap_reread(struct fabric_area *a, unsigned lid, unsigned rereads);

struct reading_ref {
	struct sweep *sw;
	size_t i;
};

static int trap_lid_cmp(const void *x, const void *y)
{
	unsigned a = ((const struct fabric_trap_lid *)x)->lid, b = ((const struct fabric_trap_lid *)y)->lid;

	return (a > b) - (a < b);
}

/* The trapped switches this sweep did not read whole are read again
 * (TRAP_REREADS); one that went from the topology is not. One pass over the
 * readings, each unanswered one looked up among the trapped LIDs (sorted):
 * a full sweep that took traps over holds the whole fabric's readings. */
static void reread_unanswered(struct sweep *sw)
{
	bool *unanswered;
	uint64_t last_guid = 0;
	unsigned last_lid = 0;

	if (!sw->n_trapped)
		return;
	unanswered = calloc(sw->n_trapped, sizeof(*unanswered));
	if (!unanswered)
		return; /* the periodic sweep will read them */
	qsort(sw->trapped, sw->n_trapped, sizeof(*sw->trapped), trap_lid_cmp);
	for (size_t i = 0; i < sw->n; i++) {
		const struct fabric_reading *r = &sw->readings[i];
		struct fabric_trap_lid key;
		const struct fabric_trap_lid *t;

		if (r->result == MAD_OK)
			continue;
		if (r->guid != last_guid || !last_guid) { /* a node's ports come together */
			const struct topo_node *nd = topology_node(sw->fabric, r->guid);

			last_guid = r->guid;
			last_lid = nd ? nd->lid : 0;
		}
		if (!last_lid)
			continue;
		key.lid = last_lid;
		t = bsearch(&key, sw->trapped, sw->n_trapped, sizeof(*sw->trapped), trap_lid_cmp);
		if (t)
			unanswered[t - sw->trapped] = true;
	}
	for (size_t k = 0; k < sw->n_trapped; k++) {
		const struct fabric_trap_lid *t = &sw->trapped[k];

		if (!unanswered[k])
			continue;
		if (t->rereads < TRAP_REREADS) {
			trap_reread(sw->a, t->lid, t->rereads + 1);
		} else {
			snmp_log(LOG_INFO, "fabric: the switch at LID %u did not answer for all its "
				 "ports after a trap 128, read %u times: left to the periodic sweep\n",
				 t->lid, t->rereads + 1);
		}
	}
	free(unanswered);
}

static void sweep_finish(struct sweep *sw)
{
	struct fabric_area *a = sw->a;
	const struct fabric_snapshot *prev = cache_snapshot(&a->group);
	const struct pm_snapshot *pm = a->counters ? cache_snapshot(a->counters) : NULL;
	struct fabric_build in = {
		.fabric = sw->fabric,
		.readings = sw->readings,
		.n_readings = sw->n,
		.prev = prev ? prev : a->loaded,
		.reset_baseline = a->reset_pending,
		.partial = sw->partial,
		.now = time(NULL),
		.counters = pm ? pm->ports : NULL,
		.n_counters = pm ? pm->n : 0,
		.health = &a->health,
	};
	struct fabric_snapshot *s;

	/* the build looks readings up by (GUID, port): a partial sweep's
	 * switches and patched ports come one list after the other */
	for (size_t i = 1; i < sw->n; i++)
		if (fabric_reading_cmp(&sw->readings[i - 1], &sw->readings[i]) > 0) {
			qsort(sw->readings, sw->n, sizeof(*sw->readings), fabric_reading_cmp);
			break;
		}
	s = fabric_build(&in);
	reread_unanswered(sw);

	if (s) {
		a->reset_pending = false;
		fabric_snapshot_free(a->loaded);
		a->loaded = NULL;
		topology_put(a->swept_fabric);
		a->swept_fabric = topology_get(sw->fabric);
	}
	topology_put(sw->fabric);
	free(sw->readings);
	free(sw->items);
	free(sw->trapped);
	free(sw);
	cache_refresh_done(&a->group, s, s ? NULL : "out of memory");
	if (a->again && !a->group.refreshing) {
		a->again = false;
		cache_group_refresh_now(&a->group);
	}
}

static void got_portinfo(void *ctx, int result, const uint8_t *data, size_t len)
{
	struct reading_ref *ref = ctx;
	struct sweep *sw = ref->sw;
	struct fabric_reading *r = &sw->readings[ref->i];

	free(ref);
	r->result = result;
	if (result == MAD_OK && data)
		memcpy(r->data, data, len < sizeof(r->data) ? len : sizeof(r->data));
	if (--sw->pending == 0)
		sweep_finish(sw);
}

static bool lid_wanted(const struct fabric_area *a, unsigned lid)
{
	for (size_t i = 0; i < a->n_trap_lids; i++)
		if (a->trap_lids[i].lid == lid)
			return true;
	return false;
}

/* The feeder: SubnGet(PortInfo) of the next item's ports. */
static bool feed_node(void *ctx)
{
	struct sweep *sw = ctx;
	const struct sweep_item *it;
	const struct topo_node *nd;
	ib_portid_t to;

	if (sw->next_item == sw->n_items) {
		DEBUGMSGTL(("ibsnmpd:fabric", "%s sweep: %zu PortInfo SMPs\n",
			    sw->partial ? "partial" : "full", sw->n));
		if (--sw->pending == 0) /* the hold of sweep_start */
			sweep_finish(sw);
		return false;
	}
	it = &sw->items[sw->next_item++];
	nd = &sw->fabric->nodes[it->node];
	if (topology_node_portid(nd, &to))
		return true;
	for (unsigned p = it->port ? it->port : 1; p <= (it->port ? it->port : nd->num_ports); p++) {
		struct fabric_reading *r = &sw->readings[sw->n++];
		struct reading_ref *ref = malloc(sizeof(*ref));

		r->guid = nd->guid;
		r->port = p;
		r->result = MAD_SEND_FAILED;
		if (!ref)
			continue;
		ref->sw = sw;
		ref->i = (size_t)(r - sw->readings);
		sw->pending++;
		if (mad_engine_smp_get(&to, IB_ATTR_PORT_INFO, p, got_portinfo, ref)) {
			free(ref);
			sw->pending--;
		}
	}
	return true;
}

/* A discovery from the SA brought every port's PortInfo as the SM read it:
 * the sweep takes those and sends no SMP (this port may not, or the
 * operator chose the SM's view). A port the SA has no record of is not
 * known this time. */
static void sweep_from_sa(struct sweep *sw)
{
	const struct topology *f = sw->fabric;

	for (size_t k = 0; k < sw->n_items; k++) {
		const struct sweep_item *it = &sw->items[k];
		const struct topo_node *nd = &f->nodes[it->node];

		for (unsigned p = it->port ? it->port : 1;
		     p <= (it->port ? it->port : nd->num_ports); p++) {
			struct fabric_reading *r = &sw->readings[sw->n++];
			const struct topo_port *tp = topology_port(f, it->node, p);

			r->guid = nd->guid;
			r->port = p;
			r->result = tp ? MAD_OK : MAD_TIMEOUT;
			if (tp)
				memcpy(r->data, f->portinfo[tp - f->ports], sizeof(r->data));
		}
	}
	DEBUGMSGTL(("ibsnmpd:fabric", "sweep: %zu ports from the SA's PortInfoRecords\n", sw->n));
	sweep_finish(sw);
}

/* What a sweep reads: every node's ports; or those of the switches traps
 * named (all that came since the last sweep began, whatever made this one
 * partial), and the ports the topology's patches since then changed (once
 * each). */
static void choose_items(struct fabric_area *a, struct sweep *sw, bool patched)
{
	const struct topology *f = sw->fabric;

	for (size_t i = 0; i < f->n_nodes; i++)
		if (!sw->partial || (f->nodes[i].lid && lid_wanted(a, f->nodes[i].lid)))
			sw->items[sw->n_items++] = (struct sweep_item){i, 0};
	if (!patched)
		return;
	qsort(a->patched, a->n_patched, sizeof(*a->patched), topo_port_ref_cmp);
	for (size_t k = 0; k < a->n_patched; k++) {
		const struct topo_port_ref *r = &a->patched[k];
		const struct topo_node *nd = topology_node(f, r->guid);

		if ((k && !topo_port_ref_cmp(r, &a->patched[k - 1])) || !nd || !r->port ||
		    r->port > nd->num_ports)
			continue; /* read already, or of a node gone since */
		sw->items[sw->n_items++] = (struct sweep_item){(size_t)(nd - f->nodes), r->port};
	}
}

static void sweep_start(struct cache_group *g)
{
	struct fabric_area *a = g->owner;
	const struct topology *f = cache_snapshot(a->topology);
	struct sweep *sw;
	size_t cap = 0;
	bool patched = a->patch_only && cache_snapshot(g);
	bool trapped = a->partial_next && cache_snapshot(g) && (f == a->swept_fabric || patched);
	bool partial = patched || trapped;

	a->partial_next = false;
	if (!f) {
		cache_refresh_done(g, NULL, "no discovery of the subnet yet");
		return;
	}
	for (size_t i = 0; i < f->n_nodes; i++)
		cap += f->nodes[i].num_ports;
	cap += patched ? a->n_patched : 0;
	sw = calloc(1, sizeof(*sw));
	if (!sw || !(sw->readings = calloc(cap ? cap : 1, sizeof(*sw->readings))) ||
	    !(sw->items = calloc(f->n_nodes + (patched ? a->n_patched : 0) + 1,
				 sizeof(*sw->items)))) {
		if (sw)
			free(sw->readings);
		free(sw);
		cache_refresh_done(g, NULL, "out of memory");
		return;
	}
	sw->a = a;
	sw->fabric = topology_get(f);
	sw->partial = partial;
	choose_items(a, sw, patched);
	{ /* the trapped switches are read now: this sweep's */
		sw->trapped = a->trap_lids;
		sw->n_trapped = a->n_trap_lids;
		a->trap_lids = NULL;
		a->cap_trap_lids = 0;
	}
	a->n_trap_lids = 0;
	a->base_serial = f->serial;
	a->patch_only = false;
	a->n_patched = 0;
	if (f->portinfo) {
		sweep_from_sa(sw);
		return;
	}
	sw->pending = 1; /* held until every SMP is queued */
	sw->feeder = (struct mad_feeder){.next = feed_node, .ctx = sw};
	mad_engine_feed(&sw->feeder);
}

/* ---- the state file --------------------------------------------------------- */

static void load_state(struct fabric_area *a)
{
	char *text = NULL, err[200];
	size_t len = 0;

	if (state_file_read(&a->state, STATE_FILE_MAX, &text, &len))
		return;
	a->loaded = fabric_baseline_parse(text, len, err, sizeof(err));
	free(text);
	if (!a->loaded)
		state_file_refused(&a->state, err);
	else
		snmp_log(LOG_INFO, "fabric baseline: %zu links from %s\n", a->loaded->n,
			 a->state.path);
}

static void save_state(struct fabric_area *a, const struct fabric_snapshot *s)
{
	size_t len;
	char *text = fabric_baseline_format(s, &len);

	state_file_write(&a->state, text, len);
	free(text);
}

/* ---- events ------------------------------------------------------------------ */

/* After a publication: the baseline's state file, if it changed; the
 * nodes at both ends of a link that came up are asked again at once (the
 * MAD engine took a node cut off for dead and would wait out its back-off). */
static void state_published(struct cache_group *g, const void *before, const void *after,
			    void *arg)
{
	struct fabric_area *a = arg;
	const struct fabric_snapshot *s = after;

	(void)g;
	(void)before;
	if (s && (s->baseline_changed || a->state.failed))
		save_state(a, s);
	for (size_t i = 0; s && i < s->n; i++) {
		const struct fabric_port *p = &s->ports[i], *q;

		if (!(p->events & FABRIC_EV_UP))
			continue;
		mad_engine_lid_wake(p->lid);
		if ((q = fabric_peer(s, p)))
			mad_engine_lid_wake(q->lid);
	}
	topology_links_read();
}

/* The ports a patch changed, kept for the next sweep; false out of memory. */
static bool keep_patched(struct fabric_area *a, const struct topology *f)
{
	return !topology_changed_keep(f, &a->patched, &a->n_patched, &a->cap_patched);
}

void fabric_sweep_discovered(struct fabric_area *a, const struct topology *before,
			     const struct topology *f)
{
	if (!f || f == a->swept_fabric)
		return;
	/* patched from the topology the last sweep began with, or from a patch
	 * of it since: what the patches changed is read, the rest stays */
	if (f->patched_from && before && f->patched_from == before->serial &&
	    (before->serial == a->base_serial || a->patch_only) && keep_patched(a, f)) {
		a->patch_only = true;
	} else {
		a->patch_only = false;
		a->n_patched = 0;
	}
	if (!a->group.alarm)
		cache_group_start(&a->group);
	else if (a->group.refreshing)
		a->again = true;
	else
		cache_group_refresh_now(&a->group);
}

/* What was read, lent to the topology (topology_follow_links): each row of
 * a node of the topology swept that was answered. */
static size_t lend_links(void *arg, const struct topology **swept, struct topo_link_seen **seen)
{
	struct fabric_area *a = arg;
	const struct fabric_snapshot *s = cache_snapshot(&a->group);
	size_t n = 0;

	*swept = s ? s->fabric : NULL;
	*seen = malloc((s && s->n ? s->n : 1) * sizeof(**seen));
	for (size_t i = 0; s && *seen && i < s->n; i++) {
		const struct fabric_port *p = &s->ports[i];

		if (p->have_info && !p->stale && !p->gone)
			(*seen)[n++] = (struct topo_link_seen){p->guid, p->port, p->up, p->pi.lid,
							       (uint8_t)(p->speed > 0 ? p->speed : 0)};
	}
	return n;
}

static void trap_sweep(unsigned reg, void *arg)
{
	struct fabric_area *a = arg;

	(void)reg;
	a->trap_alarm = 0;
	if (!a->group.alarm)
		return; /* no sweep yet: the first one reads everything */
	if (a->group.refreshing) {
		a->trap_alarm = snmp_alarm_register(TRAP_DELAY_S, 0, trap_sweep, a);
		return;
	}
	a->partial_next = true;
	cache_group_refresh_now(&a->group);
}

/* lid's switch is read in a partial sweep TRAP_DELAY_S << rereads from
 * now (sooner if another is due sooner); a trap's own read is rereads 0. */
static void trap_reread(struct fabric_area *a, unsigned lid, unsigned rereads)
{
	size_t i;

	for (i = 0; i < a->n_trap_lids && a->trap_lids[i].lid != lid; i++)
		;
	if (i == a->n_trap_lids) {
		if (a->n_trap_lids == a->cap_trap_lids) {
			size_t cap = a->cap_trap_lids ? a->cap_trap_lids * 2 : 16;
			struct fabric_trap_lid *p = realloc(a->trap_lids, cap * sizeof(*p));

			if (!p)
				return; /* the periodic sweep will see it */
			a->trap_lids = p;
			a->cap_trap_lids = cap;
		}
		a->trap_lids[a->n_trap_lids++] = (struct fabric_trap_lid){lid, rereads};
	} else if (rereads < a->trap_lids[i].rereads) {
		a->trap_lids[i].rereads = rereads; /* a new trap: its tries anew */
	}
	if (rereads)
		DEBUGMSGTL(("ibsnmpd:fabric", "the switch at LID %u: not every port answered "
			    "after its trap; read again in %u s\n", lid, TRAP_DELAY_S << (rereads - 1)));
	if (!a->trap_alarm)
		a->trap_alarm = snmp_alarm_register(TRAP_DELAY_S << (rereads ? rereads - 1 : 0), 0,
						    trap_sweep, a);
}

void fabric_link_trap(struct fabric_area *a, unsigned lid)
{
	if (a->group.owner && lid)
		trap_reread(a, lid, 0);
}

void fabric_reset_baseline(struct fabric_area *a)
{
	snmp_log(LOG_NOTICE, "fabric baseline: reset; recording the links as the next sweep "
		 "finds them\n");
	a->reset_pending = true;
	fabric_snapshot_free(a->loaded);
	a->loaded = NULL;
	if (!a->group.alarm)
		return;
	if (a->group.refreshing)
		a->again = true;
	else
		cache_group_refresh_now(&a->group);
}

void fabric_sweep_apply_config(struct fabric_area *a, unsigned lifetime_s,
			       const char *state_file, bool reset)
{
	cache_group_set_lifetime(&a->group, lifetime_s);
	state_file_init(&a->state, state_file, "ibsnmpd-fabric-baseline");
	if (reset && !a->reset_pending)
		fabric_reset_baseline(a);
}

void fabric_sweep_init(struct fabric_area *a, unsigned lifetime_s, const char *state_file,
		       bool reset)
{
	a->group.name = "fabric ports sweep";
	a->group.refresh = sweep_start;
	a->group.free_snapshot = fabric_snapshot_free;
	a->group.owner = a;
	a->group.lifetime_s = lifetime_s;
	a->state = (struct state_file){
		.what = "fabric baseline",
		.fresh = "recording the links as the first sweep finds them",
		.unsaved = "the baseline is kept in memory",
	};
	state_file_init(&a->state, state_file, "ibsnmpd-fabric-baseline");
	if (reset)
		snmp_log(LOG_NOTICE, "fabric baseline: fabricBaselineReset: not reading %s\n",
			 a->state.path);
	else
		load_state(a);
	cache_group_observe(&a->group, &a->state_saved, state_published, a);
	topology_follow_links(lend_links, a);
}

void fabric_sweep_stop(struct fabric_area *a)
{
	state_file_close(&a->state);
	if (a->trap_alarm)
		snmp_alarm_unregister(a->trap_alarm);
	a->trap_alarm = 0;
	topology_follow_links(NULL, NULL);
	cache_group_stop(&a->group);
	fabric_snapshot_free(a->loaded);
	a->loaded = NULL;
	free(a->patched);
	a->patched = NULL;
	a->n_patched = a->cap_patched = 0;
	free(a->trap_lids);
	a->trap_lids = NULL;
	topology_put(a->swept_fabric);
	a->swept_fabric = NULL;
}
