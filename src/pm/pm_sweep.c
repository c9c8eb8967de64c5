/* The subnet's performance counters: the sweeps.
 *
 * A sweep sends PortCounters / PortCountersExtended for every port of the
 * topology's last discovery, all through the MAD engine (madMaxOutstanding
 * in flight, madMaxPerDestination to one LID). ClassPortInfo (whether a node
 * has 64-bit counters, error details) is asked once per node after each
 * discovery (a node keeps it, by GUID, across the topology's patches),
 * again for a node that did not answer it, and after a trap 144 from the
 * node. A node that does not answer costs only its own timeouts; its ports
 * are marked stale and keep their last values.
 *
 * After a topology patch, a sweep reads only the ports the patches named
 * (pm->pending): the others keep what the sweep before read, and the
 * periodic sweep reads every port. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <time.h>

#include "ibsnmpd/config.h"
#include "ibsnmpd/mad_engine.h"
#include "ibsnmpd/netsnmp.h"
#include "ibsnmpd/pm.h"

/* ---- sweeps ------------------------------------------------------------------ */

struct sweep {
	struct pm_area *pm;
	struct pm_snapshot *snap;   /* being built */
	const struct pm_snapshot *prev;
	unsigned *node_capmask;     /* per node of snap->fabric; 0 unknown */
	/* the ports of node k are snap->ports[node_first[k] .. node_first[k + 1] - 1]:
	 * the fabric's ports are sorted by node GUID, as its nodes are */
	size_t *node_first;
	size_t pending;
	time_t now;
	size_t next_node;           /* fed to the engine node by node as it has room */
	struct mad_feeder feeder;
	/* a sweep of the ports a patch named: which ports of snap are read;
	 * NULL: every port */
	bool *to_read;
	bool *unseen;               /* per port of snap: not in the sweep before */
};

struct port_job {
	struct sweep *sw;
	size_t i;                   /* index into snap->ports */
	int step;                   /* enum port_step */
	struct pm_counters pc;
};

/* The MADs of one port, in order; the details only where the counters
 * they break down are not 0. */
enum port_step {
	STEP_COUNTERS,       /* PortCounters */
	STEP_COUNTERS_EXT,   /* PortCountersExtended, if the node has them */
	STEP_EXT_SPEEDS,     /* PortExtendedSpeedsCounters, if the port runs FDR or faster */
	STEP_RCV_DETAILS,    /* PortRcvErrorDetails, if PortRcvErrors > 0 */
	STEP_XMIT_DETAILS,   /* PortXmitDiscardDetails, if PortXmitDiscards > 0 */
	STEP_DONE,
};

static const unsigned step_attr[] = {
	[STEP_COUNTERS] = IB_GSI_PORT_COUNTERS,
	[STEP_COUNTERS_EXT] = IB_GSI_PORT_COUNTERS_EXT,
	[STEP_EXT_SPEEDS] = IB_GSI_PORT_EXT_SPEEDS_COUNTERS,
	[STEP_RCV_DETAILS] = IB_GSI_PORT_RCV_ERROR_DETAILS,
	[STEP_XMIT_DETAILS] = IB_GSI_PORT_XMIT_DISCARD_DETAILS,
};

struct node_job {
	struct sweep *sw;
	size_t node;
};

static void sweep_finish(struct sweep *sw);

static void sweep_done_one(struct sweep *sw)
{
	if (--sw->pending == 0)
		sweep_finish(sw);
}

static void send_port_step(struct sweep *sw, struct port_job *job);

/* The step after `step` that this port needs. */
static int next_step(const struct pm_port_state *st, int step)
{
	switch (step) {
	case STEP_COUNTERS:
		if (st->extended)
			return STEP_COUNTERS_EXT;
		/* fall through */
	case STEP_COUNTERS_EXT:
		if (st->fec_layout != PM_FEC_NONE && !st->fec_unsupported)
			return STEP_EXT_SPEEDS;
		/* fall through */
	case STEP_EXT_SPEEDS:
		if (!st->details_unsupported && st->raw.rcv_errors)
			return STEP_RCV_DETAILS;
		/* fall through */
	case STEP_RCV_DETAILS:
		if (!st->details_unsupported && st->raw.xmit_discards)
			return STEP_XMIT_DETAILS;
		/* fall through */
	default:
		return STEP_DONE;
	}
}

/* IBA MAD status bits 2-4: 3 method/attribute not supported, 7 invalid
 * attribute or modifier. */
static bool unsupported(int result)
{
	return result > 0 && (((result >> 2) & 7) == 3 || ((result >> 2) & 7) == 7);
}

static void got_port(void *ctx, int result, const uint8_t *data, size_t len)
{
	struct port_job *job = ctx;
	struct sweep *sw = job->sw;
	struct pm_port_state *st = &sw->snap->ports[job->i];
	struct pm_counters_ext ext;
	struct pm_ext_speeds fec;
	int failed = result != MAD_OK;

	switch (job->step) {
	case STEP_COUNTERS:
		failed = failed || pm_counters_decode(data, len, &job->pc);
		if (!failed && !st->extended)
			pm_port_update(st, &job->pc, NULL, sw->now);
		break;
	case STEP_COUNTERS_EXT:
		failed = failed || pm_counters_ext_decode(data, len, &ext);
		if (!failed)
			pm_port_update(st, &job->pc, &ext, sw->now);
		break;
	case STEP_EXT_SPEEDS:
		/* the error details may still be due: only a silent node ends the port */
		if (unsupported(result)) {
			st->fec_unsupported = true;
			st->have_fec = false;
		} else if (failed || pm_ext_speeds_decode(data, len, st->fec_layout, &fec)) {
			st->fec_stale = true;
			if (result == MAD_TIMEOUT)
				goto done;
		} else {
			pm_port_fec_update(st, &fec);
		}
		goto next;
	case STEP_RCV_DETAILS:
	case STEP_XMIT_DETAILS:
		if (unsupported(result)) {
			st->details_unsupported = true; /* the counters are read all the same */
			st->have_details = false;
			goto done;
		}
		if (failed || (job->step == STEP_RCV_DETAILS
			       ? pm_rcv_error_details_decode(data, len, &st->details)
			       : pm_xmit_discard_details_decode(data, len, &st->details))) {
			st->details_stale = true; /* the counters were read all the same */
			goto done;
		}
		break;
	default:
		break;
	}
	if (failed) {
		st->stale = true;
		if (result == MAD_TIMEOUT && job->step == STEP_COUNTERS)
			/* the node is silent: said, and its ClassPortInfo asked again */
			sw->node_capmask[st->node - sw->snap->fabric->nodes] &= ~PM_CAPMASK_KNOWN;
		goto done;
	}
	if (job->step <= STEP_COUNTERS_EXT && !st->details_unsupported) {
		/* what is not asked is 0: the details break down these two */
		st->have_details = true;
		st->details_stale = false;
		if (!job->pc.rcv_errors)
			memset(&st->details, 0, offsetof(struct pm_error_details, inactive));
		if (!job->pc.xmit_discards) {
			st->details.inactive = st->details.neighbor_mtu = 0;
			st->details.sw_lifetime = st->details.sw_hoq_lifetime = 0;
		}
	}
next:
	job->step = next_step(st, job->step);
	if (job->step != STEP_DONE) {
		send_port_step(sw, job);
		return;
	}
done:
	free(job);
	sweep_done_one(sw);
}

static void send_port_step(struct sweep *sw, struct port_job *job)
{
	struct pm_port_state *st = &sw->snap->ports[job->i];
	uint8_t sel[IB_PC_DATA_SZ];
	unsigned attr = step_attr[job->step];

	pm_port_select(sel, sizeof(sel), attr, st->port);
	if (mad_engine_perf(st->lid, IB_MAD_METHOD_GET, attr, sel, sizeof(sel), got_port, job)) {
		st->stale = true;
		free(job);
		sweep_done_one(sw);
	}
}

static void send_port_counters(struct sweep *sw, size_t i)
{
	struct port_job *job = calloc(1, sizeof(*job));

	if (!job) {
		sw->snap->ports[i].stale = true;
		sweep_done_one(sw);
		return;
	}
	job->sw = sw;
	job->i = i;
	job->step = STEP_COUNTERS;
	send_port_step(sw, job);
}

/* The node's capabilities are known: its ports can be read. */
static void send_node_ports(struct sweep *sw, size_t node, unsigned cap)
{
	bool ext = cap & (PM_CAP_EXT_WIDTH | PM_CAP_EXT_WIDTH_NOIETF);

	sw->node_capmask[node] = cap | PM_CAPMASK_KNOWN;
	for (size_t i = sw->node_first[node]; i < sw->node_first[node + 1]; i++) {
		struct pm_port_state *st = &sw->snap->ports[i];
		enum pm_fec_layout layout = pm_fec_layout_of(sw->snap->fabric->ports[i].speed, cap);

		if (sw->to_read && !sw->to_read[i])
			continue;
		if (st->extended != ext && st->have_raw)
			st->discontinuity = sw->now;
		st->extended = ext;
		if (st->fec_layout != layout) {
			/* counting starts again in the new layout, asked again */
			st->have_fec = false;
			st->fec_unsupported = false;
		}
		st->fec_layout = (uint8_t)layout;
		sw->pending++;
		send_port_counters(sw, i);
	}
}

/* ClassPortInfo of a node answered: its ports can now be read. */
static void got_classportinfo(void *ctx, int result, const uint8_t *data, size_t len)
{
	struct node_job *job = ctx;
	struct sweep *sw = job->sw;
	unsigned cap = 0;

	if (result != MAD_OK || pm_classportinfo_capmask(data, len, &cap)) {
		/* the node does not answer: its ports (those asked) stay stale */
		for (size_t i = sw->node_first[job->node]; i < sw->node_first[job->node + 1]; i++)
			if (!sw->to_read || sw->to_read[i])
				sw->snap->ports[i].stale = true;
		free(job);
		sweep_done_one(sw);
		return;
	}
	send_node_ports(sw, job->node, cap);
	free(job);
	sweep_done_one(sw);
}

void pm_sweep_capabilities_changed(struct pm_area *pm, unsigned lid)
{
	if (pm->n_recheck < sizeof(pm->recheck_lid) / sizeof(pm->recheck_lid[0]))
		pm->recheck_lid[pm->n_recheck++] = lid;
	else
		pm->recheck_all = true;
}

/* The node's ClassPortInfo as the previous sweep learned it, of the same
 * discovery or of one it was patched from (by GUID); 0 where it must be
 * asked. */
static unsigned known_capmask(const struct pm_area *pm, const struct pm_snapshot *prev,
			      const struct topology *f, size_t node)
{
	const struct topo_node *before;
	unsigned cap;

	if (!prev || !prev->node_capmask || pm->recheck_all)
		return 0;
	if (prev->fabric == f)
		cap = prev->node_capmask[node];
	else if (f->patched_from && (before = topology_node(prev->fabric, f->nodes[node].guid)))
		cap = prev->node_capmask[before - prev->fabric->nodes];
	else
		return 0;
	for (size_t i = 0; i < pm->n_recheck; i++)
		if (pm->recheck_lid[i] == f->nodes[node].lid)
			return 0;
	return cap & PM_CAPMASK_KNOWN ? cap : 0;
}

void pm_snapshot_free(void *p)
{
	struct pm_snapshot *s = p;

	if (!s)
		return;
	free(s->ports);
	free(s->node_capmask);
	topology_put(s->fabric);
	free(s);
}

/* While nodes stay silent, a changed set of them is said at most every
 * SILENT_LOG_MIN_S: under random loss (a lossy own link) the set differs at
 * every sweep. The first silence and the end of it are said at once. */
#define SILENT_LOG_MIN_S 30

/* Nodes that did not answer the sweep are said when they change: their
 * ports keep their last values, marked stale. */
static void note_silent_nodes(struct pm_area *pm, const struct pm_snapshot *s,
			      const unsigned *capmask)
{
	const struct topology *f = s->fabric;
	size_t silent = 0, asked = 0, len = 0;
	uint64_t print = 0;
	char names[160] = "";
	time_t now;

	for (size_t k = 0; k < f->n_nodes; k++) {
		const struct topo_node *n = &f->nodes[k];

		if (!n->lid)
			continue;
		asked++;
		if (capmask[k] & PM_CAPMASK_KNOWN)
			continue;
		silent++;
		print += n->guid * 2 + 1;
		if (silent <= 3 && len < sizeof(names))
			len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%.40s LID %u",
						silent > 1 ? ", " : "", n->name, n->lid);
	}
	if (print == pm->silent_print)
		return;
	now = monotonic_whole_seconds();
	if (silent && pm->silent_print && now - pm->silent_said < SILENT_LOG_MIN_S)
		return;
	pm->silent_print = print;
	pm->silent_said = now;
	if (silent)
		snmp_log(LOG_WARNING, "counter sweep: %zu of %zu nodes do not answer (%s%s); "
			 "their ports keep their last values, marked stale\n", silent, asked, names,
			 silent > 3 ? ", ..." : "");
	else
		snmp_log(LOG_NOTICE, "counter sweep: every node answers again\n");
}

/* A row's index in ibsnmpdPmPortTable: (node GUID, port). */
static unsigned port_index(const void *data, oid *index)
{
	const struct pm_port_state *p = data;

	return mib_index_guid_port(index, p->guid, p->port);
}

static void sweep_finish(struct sweep *sw)
{
	struct pm_snapshot *s = sw->snap;
	struct pm_area *pm = sw->pm;
	bool partial = sw->to_read != NULL;

	for (size_t i = 0; i < s->n; i++)
		s->stale_ports += s->ports[i].stale;
	s->rows = (struct mib_rows){.count = s->n, .array = s->ports, .stride = sizeof(*s->ports),
				    .index_of = port_index};
	note_silent_nodes(sw->pm, s, sw->node_capmask);
	s->node_capmask = sw->node_capmask; /* the snapshot's now */
	DEBUGMSGTL(("ibsnmpd:pm", "sweep of %zu ports done (%s), %zu stale\n", s->n,
		    sw->to_read ? "those a patch named" : "every one", s->stale_ports));
	cache_refresh_done(&pm->sweep, s, NULL);
	free(sw->node_first);
	free(sw->to_read);
	free(sw->unseen);
	free(sw);
	/* patches came while it ran, or the periodic sweep fell due while a
	 * patch's ran (its turn was skipped) */
	if (pm->n_pending || pm->pending_all ||
	    (partial && monotonic_whole_seconds() - pm->full_at >= (time_t)pm->sweep.lifetime_s))
		cache_group_refresh_now(&pm->sweep);
}

/* The feeder: the next node's ports when its ClassPortInfo is known, else
 * that first (each answer sends the node's ports). */
static bool feed_node(void *ctx)
{
	struct sweep *sw = ctx;
	const struct topology *f = sw->snap->fabric;
	size_t k = sw->next_node;
	unsigned cap;
	struct node_job *job;

	if (k == f->n_nodes) {
		sweep_done_one(sw); /* the hold of sweep_start */
		return false;
	}
	sw->next_node++;
	if (sw->to_read) {
		bool any = false;

		for (size_t i = sw->node_first[k]; i < sw->node_first[k + 1] && !any; i++)
			any = sw->to_read[i];
		if (!any)
			return true;
	}
	cap = sw->node_capmask[k];
	if (cap & PM_CAPMASK_KNOWN) {
		send_node_ports(sw, k, cap & ~PM_CAPMASK_KNOWN);
		return true;
	}
	if (!f->nodes[k].lid || !(job = calloc(1, sizeof(*job))))
		return true;
	job->sw = sw;
	job->node = k;
	sw->pending++;
	if (mad_engine_perf(f->nodes[k].lid, IB_MAD_METHOD_GET, CLASS_PORT_INFO, NULL, 0,
			    got_classportinfo, job)) {
		free(job);
		sw->pending--;
	}
	return true;
}

/* Whether the sweep sw of f reads every port (false: only those the
 * patches since the last sweep named, and the ports the sweep before did
 * not have: sw->to_read). Every port when the periodic sweep is due, at
 * the first sweep and after a discovery (not a patch). */
static bool sweep_of_patches(struct pm_area *pm, struct sweep *sw, const struct topology *f)
{
	size_t n = 0;

	if (pm->pending_all || !pm->n_pending || !sw->prev || !f->patched_from || !sw->unseen ||
	    monotonic_whole_seconds() - pm->full_at >= (time_t)pm->sweep.lifetime_s ||
	    !(sw->to_read = calloc(f->n_ports ? f->n_ports : 1, sizeof(bool))))
		return true;
	for (size_t i = 0; i < pm->n_pending; i++) {
		const struct topo_node *nd = topology_node(f, pm->pending[i].guid);
		const struct topo_port *p = nd ? topology_port(f, (size_t)(nd - f->nodes),
							       pm->pending[i].port) : NULL;

		if (p && !sw->to_read[p - f->ports]) {
			sw->to_read[p - f->ports] = true;
			n++;
		}
	}
	for (size_t i = 0; i < f->n_ports; i++)
		if (!sw->to_read[i] && sw->unseen[i]) {
			sw->to_read[i] = true; /* not read before */
			n++;
		}
	DEBUGMSGTL(("ibsnmpd:pm", "a sweep of the %zu ports patches named\n", n));
	return false;
}

void pm_sweep_patched(struct pm_area *pm, const struct topology *f)
{
	if (!f->n_changed)
		return; /* nodes gone only: nothing to read */
	if (topology_changed_keep(f, &pm->pending, &pm->n_pending, &pm->cap_pending))
		pm->pending_all = true; /* every port, then */
	cache_group_refresh_now(&pm->sweep); /* if one runs, when it ends */
}

static void sweep_start(struct cache_group *g)
{
	struct pm_area *pm = g->owner;
	const struct topology *f = pm_topology(pm);
	struct sweep *sw;
	struct pm_snapshot *s;

	if (!f) {
		cache_refresh_done(g, NULL, "the subnet has not been discovered yet");
		return;
	}
	sw = calloc(1, sizeof(*sw));
	s = calloc(1, sizeof(*s));
	if (!sw || !s || !(s->ports = calloc(f->n_ports ? f->n_ports : 1, sizeof(*s->ports))) ||
	    !(sw->node_capmask = calloc(f->n_nodes ? f->n_nodes : 1, sizeof(unsigned))) ||
	    !(sw->node_first = calloc(f->n_nodes + 1, sizeof(size_t)))) {
		if (s)
			free(s->ports);
		free(s);
		if (sw) {
			free(sw->node_capmask);
			free(sw->node_first);
		}
		free(sw);
		cache_refresh_done(g, NULL, "out of memory");
		return;
	}
	sw->pm = pm;
	sw->snap = s;
	sw->prev = cache_snapshot(g);
	sw->unseen = calloc(f->n_ports ? f->n_ports : 1, sizeof(bool)); /* NULL: a whole sweep */
	sw->now = time(NULL);
	s->fabric = topology_get(f);

	s->n = f->n_ports;
	/* both sorted by (node GUID, port): one walk of the ports before (at
	 * 40,000 hosts a search each was most of a patch's sweep) */
	for (size_t i = 0, j = 0; i < f->n_ports; i++) {
		const struct topo_port *r = &f->ports[i];
		const struct topo_node *n = &f->nodes[r->node];
		const struct pm_port_state *before = sw->prev ? sw->prev->ports : NULL;
		struct pm_port_state *st = &s->ports[i];

		while (before && j < sw->prev->n && (before[j].guid < n->guid ||
						     (before[j].guid == n->guid &&
						      before[j].port < r->port)))
			j++;
		if (before && j < sw->prev->n && before[j].guid == n->guid &&
		    before[j].port == r->port)
			*st = before[j]; /* counting goes on where it was */
		else if (sw->unseen)
			sw->unseen[i] = true; /* not read before */
		st->guid = n->guid;
		st->port = r->port;
		st->lid = r->lid;
		st->node = n;
		sw->node_first[r->node + 1]++;
	}
	for (size_t k = 0; k < f->n_nodes; k++)
		sw->node_first[k + 1] += sw->node_first[k];
	/* what the previous sweep learned of each node's ClassPortInfo, as of now */
	for (size_t k = 0; k < f->n_nodes; k++)
		sw->node_capmask[k] = f->nodes[k].lid ? known_capmask(pm, sw->prev, f, k) : 0;
	if (sweep_of_patches(pm, sw, f)) {
		pm->full_at = monotonic_whole_seconds();
		DEBUGMSGTL(("ibsnmpd:pm", "a sweep of every port (%zu)\n", f->n_ports));
	}
	pm->n_pending = 0; /* read in this sweep */
	pm->pending_all = false;
	pm->n_recheck = 0; /* asked in this sweep */
	pm->recheck_all = false;
	sw->pending = 1; /* held until every node has been fed */
	sw->feeder = (struct mad_feeder){.next = feed_node, .ctx = sw};
	mad_engine_feed(&sw->feeder);
}

/* ---- actions on a node (SETs of IB-PM-MIB) ------------------------------------------ */

struct clear_op {
	struct pm_area *pm;
	pm_done_fn done;
	void *ctx;
};

static void cleared(void *ctx, int result, const uint8_t *data, size_t len)
{
	struct clear_op *op = ctx;
	struct pm_area *pm = op->pm;

	(void)data;
	(void)len;
	op->done(op->ctx, result);
	free(op);
	if (result == MAD_OK && !pm->sweep.refreshing)
		cache_group_refresh_now(&pm->sweep); /* show the zeros soon */
}

int pm_clear_counters(struct pm_area *pm, unsigned lid, unsigned port,
		      unsigned counter_select, pm_done_fn done, void *ctx)
{
	struct clear_op *op = calloc(1, sizeof(*op));
	uint8_t data[IB_PC_DATA_SZ];

	if (!op)
		return -1;
	op->pm = pm;
	op->done = done;
	op->ctx = ctx;
	pm_counters_clear_encode(data, sizeof(data), port, counter_select);
	if (mad_engine_perf(lid, IB_MAD_METHOD_SET, IB_GSI_PORT_COUNTERS, data, sizeof(data),
			    cleared, op)) {
		free(op);
		return -1;
	}
	return 0;
}

/* A discovery is published: sweep its node list now (unless a sweep runs);
 * then every lifetime. */
void pm_sweep_discovered(struct pm_area *pm)
{
	cache_group_start(&pm->sweep);
}

void pm_sweep_init(struct pm_area *pm, unsigned lifetime_s)
{
	pm->sweep.name = "PM counters sweep";
	pm->sweep.refresh = sweep_start;
	pm->sweep.free_snapshot = pm_snapshot_free;
	pm->sweep.owner = pm;
	pm->sweep.lifetime_s = lifetime_s;
}

void pm_sweep_stop(struct pm_area *pm)
{
	cache_group_stop(&pm->sweep);
	free(pm->select);
	pm->select = NULL;
	free(pm->pending);
	pm->pending = NULL;
	pm->n_pending = pm->cap_pending = 0;
}

static int select_cmp(const void *a, const void *b)
{
	const struct pm_port_select *x = a, *y = b;

	return x->guid < y->guid ? -1 : x->guid > y->guid;
}

static struct pm_port_select *select_find(const struct pm_area *pm, uint64_t guid)
{
	struct pm_port_select key = {.guid = guid};

	return pm->n_select ? bsearch(&key, pm->select, pm->n_select, sizeof(key), select_cmp)
			    : NULL;
}

unsigned pm_port_select_get(const struct pm_area *pm, uint64_t guid, unsigned first_port)
{
	const struct pm_port_select *hit = select_find(pm, guid);

	return hit ? hit->port : first_port;
}

int pm_port_select_set(struct pm_area *pm, uint64_t guid, unsigned port)
{
	struct pm_port_select key = {.guid = guid, .port = port};
	struct pm_port_select *hit = select_find(pm, guid);

	if (hit) {
		hit->port = port;
		return 0;
	}
	if (pm->n_select == pm->cap_select) {
		size_t cap = pm->cap_select ? 2 * pm->cap_select : 64;
		void *p = realloc(pm->select, cap * sizeof(*pm->select));

		if (!p)
			return -1;
		pm->select = p;
		pm->cap_select = cap;
	}
	pm->select[pm->n_select++] = key;
	if (pm->n_select > 1)
		qsort(pm->select, pm->n_select, sizeof(key), select_cmp);
	return 0;
}
