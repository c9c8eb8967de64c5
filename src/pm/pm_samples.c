/* Port sampling (PortSamplesControl / PortSamplesResult) of the nodes a
 * manager works with.
 *
 * Unlike the counters, sampling is not swept over the whole subnet: a sample
 * is something a manager starts on one node, and reading every node's
 * sampling state would cost a MAD pair per node per lifetime for nothing
 * (and, in ibsim, PortSamplesControl sent to opensm's LID crashes opensm
 * 3.3.23). A node is "watched" once a manager SETs one of its sampling
 * columns, or when ibsnmpd.conf names it (pmSampleNode); watched nodes are
 * read every cacheLifetime pmSamples seconds. */
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/mad_engine.h"
#include "ibsnmpd/netsnmp.h"
#include "ibsnmpd/pm.h"

static int guid_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

int pm_samples_watch(struct pm_area *pm, uint64_t guid)
{
	if (pm->n_watch && bsearch(&guid, pm->watch, pm->n_watch, sizeof(guid), guid_cmp))
		return 0;
	if (pm->n_watch == pm->cap_watch) {
		size_t cap = pm->cap_watch ? 2 * pm->cap_watch : 16;
		void *p = realloc(pm->watch, cap * sizeof(*pm->watch));

		if (!p)
			return -1;
		pm->watch = p;
		pm->cap_watch = cap;
	}
	pm->watch[pm->n_watch++] = guid;
	qsort(pm->watch, pm->n_watch, sizeof(guid), guid_cmp);
	return 0;
}

static int state_cmp(const void *a, const void *b)
{
	const struct pm_sample_state *x = a, *y = b;

	return x->guid < y->guid ? -1 : x->guid > y->guid;
}

const struct pm_sample_state *pm_samples_find(const struct pm_samples_snapshot *s,
					      uint64_t guid)
{
	struct pm_sample_state key = {.guid = guid};

	if (!s || !s->n)
		return NULL;
	return bsearch(&key, s->nodes, s->n, sizeof(key), state_cmp);
}

/* ---- reading the watched nodes ------------------------------------------------ */

struct samples_read {
	struct pm_area *pm;
	struct pm_samples_snapshot *snap;
	size_t pending;
};

struct samples_job {
	struct samples_read *rd;
	size_t i;
	unsigned attr;
};

static void samples_free(void *p)
{
	struct pm_samples_snapshot *s = p;

	if (s)
		free(s->nodes);
	free(s);
}

static void samples_read_done_one(struct samples_read *rd)
{
	struct pm_area *pm = rd->pm;

	if (--rd->pending)
		return;
	cache_refresh_done(&pm->samples, rd->snap, NULL);
	free(rd);
	if (pm->samples_again) {
		pm->samples_again = false;
		cache_group_refresh_now(&pm->samples);
	}
}

static void got_sample_attr(void *ctx, int result, const uint8_t *data, size_t len)
{
	struct samples_job *job = ctx;
	struct pm_sample_state *st = &job->rd->snap->nodes[job->i];

	DEBUGMSGTL(("ibsnmpd:pm", "sampling attribute 0x%x of 0x%016llx: %d\n", job->attr,
		    (unsigned long long)st->guid, result));
	if (result != MAD_OK)
		st->stale = true;
	else if (job->attr == IB_GSI_PORT_SAMPLES_CONTROL)
		st->have_ctl = !pm_sample_ctl_decode(data, len, &st->ctl);
	else
		st->have_res = !pm_sample_result_decode(data, len, &st->res);
	samples_read_done_one(job->rd);
	free(job);
}

static void send_sample_get(struct samples_read *rd, size_t i, unsigned lid, unsigned attr)
{
	struct samples_job *job = calloc(1, sizeof(*job));

	if (!job) {
		rd->snap->nodes[i].stale = true;
		return;
	}
	job->rd = rd;
	job->i = i;
	job->attr = attr;
	rd->pending++;
	if (mad_engine_perf(lid, IB_MAD_METHOD_GET, attr, NULL, 0, got_sample_attr, job)) {
		rd->pending--;
		rd->snap->nodes[i].stale = true;
		free(job);
	}
}

static void samples_read_start(struct cache_group *g)
{
	struct pm_area *pm = g->owner;
	const struct pm_samples_snapshot *prev = cache_snapshot(g);
	struct samples_read *rd = calloc(1, sizeof(*rd));
	struct pm_samples_snapshot *s = calloc(1, sizeof(*s));

	if (!rd || !s || !(s->nodes = calloc(pm->n_watch ? pm->n_watch : 1, sizeof(*s->nodes)))) {
		free(rd);
		samples_free(s);
		cache_refresh_done(g, NULL, "out of memory");
		return;
	}
	rd->pm = pm;
	rd->snap = s;
	rd->pending = 1;
	DEBUGMSGTL(("ibsnmpd:pm", "reading the sampling state of %zu nodes\n", pm->n_watch));
	for (size_t k = 0; k < pm->n_watch; k++) {
		const struct topo_node *n = topology_node(pm_topology(pm), pm->watch[k]);
		const struct pm_sample_state *old = pm_samples_find(prev, pm->watch[k]);
		struct pm_sample_state *st = &s->nodes[s->n++];

		if (old)
			*st = *old; /* a node that stops answering keeps its last values */
		st->guid = pm->watch[k];
		st->stale = false;
		if (!n || !n->lid) {
			st->stale = true; /* not (or no longer) in the subnet */
			continue;
		}
		send_sample_get(rd, s->n - 1, n->lid, IB_GSI_PORT_SAMPLES_CONTROL);
		send_sample_get(rd, s->n - 1, n->lid, IB_GSI_PORT_SAMPLES_RESULT);
	}
	samples_read_done_one(rd);
}

/* ---- starting a sample ---------------------------------------------------------- */

struct samples_set {
	struct pm_area *pm;
	uint64_t guid;
	unsigned lid;
	struct pm_sample_ctl want;
	uint32_t fields;
	pm_done_fn done;
	void *ctx;
};

static void set_finish(struct samples_set *op, int result)
{
	struct pm_area *pm = op->pm;

	op->done(op->ctx, result);
	if (result == MAD_OK && pm_samples_watch(pm, op->guid) == 0) {
		if (pm->samples.refreshing)
			pm->samples_again = true;
		else
			cache_group_refresh_now(&pm->samples);
	}
	free(op);
}

static void got_set_answer(void *ctx, int result, const uint8_t *data, size_t len)
{
	(void)data;
	(void)len;
	set_finish(ctx, result);
}

/* The node's current control attribute: the manager's fields go on top of it,
 * so what the manager did not name stays as the node has it. */
static void got_current_ctl(void *ctx, int result, const uint8_t *data, size_t len)
{
	struct samples_set *op = ctx;
	struct pm_sample_ctl c;
	uint8_t d[IB_PC_DATA_SZ];

	if (result == MAD_OK && pm_sample_ctl_decode(data, len, &c))
		result = MAD_MALFORMED;
	if (result != MAD_OK) {
		set_finish(op, result);
		return;
	}
	if (op->fields & PM_SAMPLE_SET_OPCODE)
		c.opcode = op->want.opcode;
	if (op->fields & PM_SAMPLE_SET_PORT_SELECT)
		c.port_select = op->want.port_select;
	if (op->fields & PM_SAMPLE_SET_START)
		c.sample_start = op->want.sample_start;
	if (op->fields & PM_SAMPLE_SET_INTERVAL)
		c.sample_interval = op->want.sample_interval;
	if (op->fields & PM_SAMPLE_SET_TAG)
		c.tag = op->want.tag;
	for (int i = 0; i < PM_SAMPLE_COUNTERS; i++)
		if (op->fields & PM_SAMPLE_SET_SELECT(i))
			c.counter_select[i] = op->want.counter_select[i];
	pm_sample_ctl_encode(&c, d, sizeof(d));
	if (mad_engine_perf(op->lid, IB_MAD_METHOD_SET, IB_GSI_PORT_SAMPLES_CONTROL, d, sizeof(d),
			    got_set_answer, op))
		set_finish(op, MAD_MALFORMED);
}

int pm_samples_start(struct pm_area *pm, uint64_t guid, unsigned lid,
		     const struct pm_sample_ctl *want, uint32_t fields, pm_done_fn done,
		     void *ctx)
{
	struct samples_set *op = calloc(1, sizeof(*op));

	if (!op)
		return -1;
	op->pm = pm;
	op->guid = guid;
	op->lid = lid;
	op->want = *want;
	op->fields = fields;
	op->done = done;
	op->ctx = ctx;
	DEBUGMSGTL(("ibsnmpd:pm", "starting a sample on 0x%016llx (fields 0x%x)\n",
		    (unsigned long long)guid, (unsigned)fields));
	if (mad_engine_perf(lid, IB_MAD_METHOD_GET, IB_GSI_PORT_SAMPLES_CONTROL, NULL, 0,
			    got_current_ctl, op)) {
		free(op);
		return -1;
	}
	return 0;
}

void pm_samples_watch_all(struct pm_area *pm, const uint64_t *guids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		pm_samples_watch(pm, guids[i]);
}

void pm_samples_init(struct pm_area *pm, unsigned lifetime_s)
{
	pm->samples.name = "PM samples";
	pm->samples.refresh = samples_read_start;
	pm->samples.free_snapshot = samples_free;
	pm->samples.owner = pm;
	pm->samples.lifetime_s = lifetime_s;
}

void pm_samples_stop(struct pm_area *pm)
{
	cache_group_stop(&pm->samples);
	free(pm->watch);
	pm->watch = NULL;
	pm->n_watch = pm->cap_watch = 0;
}
