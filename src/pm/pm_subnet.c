/* The subnet's performance counters: discovery and sweeps.
 *
 * Discovery uses libibnetdisc, whose ibnd_discover_fabric() blocks for as
 * long as the fabric takes to answer; it runs in a worker thread that calls
 * no net-snmp function and hands a plain copy of the fabric back through a
 * pipe watched by the main loop.
 *
 * A sweep sends ClassPortInfo (once per node, to learn whether the node has
 * 64-bit counters) and PortCounters / PortCountersExtended for every port,
 * all through the MAD engine, which keeps madMaxOutstanding in flight. A node
 * that does not answer costs only its own timeouts; its ports are marked
 * stale and keep their last values. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/ibnetdisc.h>

#include "ibsnmpd/config.h"
#include "ibsnmpd/mad_engine.h"
#include "ibsnmpd/netsnmp.h"
#include "ibsnmpd/pm.h"

static double now_mono(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

void pm_fabric_free(struct pm_fabric *f)
{
	if (!f)
		return;
	free(f->nodes);
	free(f->ports);
	free(f);
}

/* A fabric is shared by pm_subnet (the latest discovery) and by every
 * snapshot built from it; the last one to let go frees it. All on the main
 * thread. */
static struct pm_fabric *pm_fabric_get(struct pm_fabric *f)
{
	if (f)
		f->refs++;
	return f;
}

void pm_fabric_put(struct pm_fabric *f)
{
	if (f && --f->refs == 0)
		pm_fabric_free(f);
}

/* ---- discovery (worker thread) --------------------------------------------- */

struct discovery_job {
	char ca_name[64];
	int port_num;
	unsigned timeout_ms, retries;
	int pipe_w;
};

static int port_ref_cmp_guid(const void *a, const void *b, const struct pm_node *nodes)
{
	const struct pm_port_ref *x = a, *y = b;
	uint64_t gx = nodes[x->node].guid, gy = nodes[y->node].guid;

	if (gx != gy)
		return gx < gy ? -1 : 1;
	return x->port < y->port ? -1 : x->port > y->port;
}

static const struct pm_node *sort_nodes; /* qsort has no context argument */

static int port_ref_cmp(const void *a, const void *b)
{
	return port_ref_cmp_guid(a, b, sort_nodes);
}

struct copy_ctx {
	struct pm_fabric *f;
	size_t cap_nodes, cap_ports;
	int failed;
};

static void copy_node(ibnd_node_t *n, void *user)
{
	struct copy_ctx *c = user;
	struct pm_fabric *f = c->f;
	struct pm_node *pn;
	unsigned node_lid = 0;

	if (c->failed)
		return;
	if (f->n_nodes == c->cap_nodes) {
		size_t cap = c->cap_nodes ? 2 * c->cap_nodes : 256;
		void *p = realloc(f->nodes, cap * sizeof(*f->nodes));

		if (!p) {
			c->failed = 1;
			return;
		}
		f->nodes = p;
		c->cap_nodes = cap;
	}
	pn = &f->nodes[f->n_nodes];
	memset(pn, 0, sizeof(*pn));
	pn->guid = n->guid;
	pn->type = (unsigned)n->type;
	pn->num_ports = (unsigned)n->numports;
	snprintf(pn->desc, sizeof(pn->desc), "%.64s", n->nodedesc);
	if (n->type == IB_NODE_SWITCH && n->ports && n->ports[0])
		node_lid = n->ports[0]->base_lid;
	for (int p = 1; p <= n->numports; p++) {
		ibnd_port_t *port = n->ports ? n->ports[p] : NULL;
		struct pm_port_ref *r;

		if (!port)
			continue;
		if (f->n_ports == c->cap_ports) {
			size_t cap = c->cap_ports ? 2 * c->cap_ports : 1024;
			void *q = realloc(f->ports, cap * sizeof(*f->ports));

			if (!q) {
				c->failed = 1;
				return;
			}
			f->ports = q;
			c->cap_ports = cap;
		}
		r = &f->ports[f->n_ports];
		r->node = f->n_nodes;
		r->port = (unsigned)p;
		/* a switch's PMA answers at the switch's LID (port 0) for every port;
		 * a CA port's at its own LID */
		r->lid = n->type == IB_NODE_SWITCH ? node_lid : port->base_lid;
		if (!r->lid)
			continue; /* no LID: not reachable by PerfMgt MADs */
		if (!node_lid)
			node_lid = r->lid;
		f->n_ports++;
	}
	pn->lid = node_lid;
	f->n_nodes++;
}

static void *discovery_main(void *arg)
{
	struct discovery_job *job = arg;
	ibnd_config_t cfg;
	ibnd_fabric_t *fabric;
	struct pm_fabric *f = calloc(1, sizeof(*f));
	double started = now_mono();

	memset(&cfg, 0, sizeof(cfg));
	cfg.max_smps = 16;
	cfg.timeout_ms = job->timeout_ms;
	cfg.retries = job->retries;
	fabric = f ? ibnd_discover_fabric(job->ca_name, job->port_num, NULL, &cfg) : NULL;
	if (fabric) {
		struct copy_ctx c = {.f = f};

		ibnd_iter_nodes(fabric, copy_node, &c);
		ibnd_destroy_fabric(fabric);
		if (c.failed) {
			pm_fabric_free(f);
			f = NULL;
		} else {
			sort_nodes = f->nodes;
			qsort(f->ports, f->n_ports, sizeof(*f->ports), port_ref_cmp);
			sort_nodes = NULL;
		}
	} else {
		pm_fabric_free(f);
		f = NULL;
	}
	if (f)
		f->seconds = now_mono() - started;
	/* the pointer itself goes through the pipe; NULL means failure */
	if (write(job->pipe_w, &f, sizeof(f)) != (ssize_t)sizeof(f))
		pm_fabric_free(f);
	free(job);
	return NULL;
}

static void start_discovery(struct pm_subnet *pm)
{
	struct discovery_job *job;
	pthread_t t;

	if (pm->discovering)
		return;
	job = calloc(1, sizeof(*job));
	if (!job)
		return;
	snprintf(job->ca_name, sizeof(job->ca_name), "%s", pm->ca_name);
	job->port_num = pm->port_num;
	job->timeout_ms = ibsnmpd_cfg.mad_timeout_ms;
	job->retries = ibsnmpd_cfg.mad_retries;
	job->pipe_w = pm->pipe_w;
	if (pthread_create(&t, NULL, discovery_main, job)) {
		free(job);
		snmp_log(LOG_ERR, "cannot start the discovery thread\n");
		return;
	}
	pthread_detach(t);
	pm->discovering = true;
	DEBUGMSGTL(("ibsnmpd:pm", "discovery started\n"));
}

static void on_discovery_alarm(unsigned reg, void *arg)
{
	(void)reg;
	start_discovery(arg);
}

void pm_subnet_rediscover(struct pm_subnet *pm)
{
	start_discovery(pm);
}

static void on_discovery_done(int fd, void *arg)
{
	struct pm_subnet *pm = arg;
	struct pm_fabric *f = NULL;

	if (read(fd, &f, sizeof(f)) != (ssize_t)sizeof(f))
		return;
	pm->discovering = false;
	if (!f) {
		snmp_log(LOG_WARNING, "subnet discovery failed; keeping the previous node list\n");
		return;
	}
	DEBUGMSGTL(("ibsnmpd:pm", "discovered %zu nodes, %zu ports in %.3f s\n", f->n_nodes,
		    f->n_ports, f->seconds));
	pm_fabric_put(pm->fabric);
	pm->fabric = pm_fabric_get(f);
	/* sweep the new node list now; then every lifetime */
	if (!pm->sweep.alarm)
		cache_group_start(&pm->sweep);
	else if (!pm->sweep.refreshing)
		cache_group_refresh_now(&pm->sweep);
}

/* ---- sweeps ------------------------------------------------------------------ */

struct sweep {
	struct pm_subnet *pm;
	struct pm_snapshot *snap;   /* being built */
	const struct pm_snapshot *prev;
	unsigned *node_capmask;     /* per node of snap->fabric; 0 unknown */
	size_t pending;
	double started;
	time_t now;
};

struct port_job {
	struct sweep *sw;
	size_t i;                   /* index into snap->ports */
	int step;                   /* 0 PortCounters, 1 PortCountersExtended */
	struct pm_counters pc;
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

static void send_port_counters(struct sweep *sw, size_t i, int step, struct port_job *reuse);

static void got_port(void *ctx, int result, const uint8_t *data, size_t len)
{
	struct port_job *job = ctx;
	struct sweep *sw = job->sw;
	struct pm_port_state *st = &sw->snap->ports[job->i];

	if (result != MAD_OK) {
		st->stale = true;
		free(job);
		sweep_done_one(sw);
		return;
	}
	if (job->step == 0) {
		if (pm_counters_decode(data, len, &job->pc)) {
			st->stale = true;
			free(job);
			sweep_done_one(sw);
			return;
		}
		if (st->extended) {
			send_port_counters(sw, job->i, 1, job);
			return;
		}
		pm_port_update(st, &job->pc, NULL, sw->now);
	} else {
		struct pm_counters_ext ext;

		if (pm_counters_ext_decode(data, len, &ext))
			st->stale = true;
		else
			pm_port_update(st, &job->pc, &ext, sw->now);
	}
	free(job);
	sweep_done_one(sw);
}

static void send_port_counters(struct sweep *sw, size_t i, int step, struct port_job *reuse)
{
	struct pm_port_state *st = &sw->snap->ports[i];
	struct port_job *job = reuse ? reuse : calloc(1, sizeof(*job));
	uint8_t sel[IB_PC_DATA_SZ];
	ib_portid_t to;
	struct mad_call call = {
		.mgmt_class = IB_PERFORMANCE_CLASS,
		.method = IB_MAD_METHOD_GET,
		.attr_id = step ? IB_GSI_PORT_COUNTERS_EXT : IB_GSI_PORT_COUNTERS,
		.data = sel,
		.data_len = sizeof(sel),
	};

	if (!job) {
		st->stale = true;
		sweep_done_one(sw);
		return;
	}
	job->sw = sw;
	job->i = i;
	job->step = step;
	pm_port_select(sel, sizeof(sel), call.attr_id, st->port);
	mad_portid_gs(&to, st->lid);
	if (mad_engine_call(&to, &call, got_port, job)) {
		st->stale = true;
		free(job);
		sweep_done_one(sw);
	}
}

/* ClassPortInfo of a node answered: its ports can now be read. */
static void got_classportinfo(void *ctx, int result, const uint8_t *data, size_t len)
{
	struct node_job *job = ctx;
	struct sweep *sw = job->sw;
	unsigned cap = 0;
	bool ext;

	if (result != MAD_OK || pm_classportinfo_capmask(data, len, &cap)) {
		/* the node does not answer: its ports stay stale */
		for (size_t i = 0; i < sw->snap->n; i++)
			if (sw->snap->ports[i].node == &sw->snap->fabric->nodes[job->node])
				sw->snap->ports[i].stale = true;
		free(job);
		sweep_done_one(sw);
		return;
	}
	sw->node_capmask[job->node] = cap | 0x80000000u; /* known */
	ext = cap & (PM_CAP_EXT_WIDTH | PM_CAP_EXT_WIDTH_NOIETF);
	for (size_t i = 0; i < sw->snap->n; i++) {
		struct pm_port_state *st = &sw->snap->ports[i];

		if (st->node != &sw->snap->fabric->nodes[job->node])
			continue;
		if (st->extended != ext && st->have_raw)
			st->discontinuity = sw->now;
		st->extended = ext;
		sw->pending++;
		send_port_counters(sw, i, 0, NULL);
	}
	free(job);
	sweep_done_one(sw);
}

static int state_cmp(const void *a, const void *b)
{
	const struct pm_port_state *x = a, *y = b;

	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return x->port < y->port ? -1 : x->port > y->port;
}

static const struct pm_port_state *find_prev(const struct pm_snapshot *prev, uint64_t guid,
					     unsigned port)
{
	struct pm_port_state key = {.guid = guid, .port = port};

	if (!prev || !prev->n)
		return NULL;
	return bsearch(&key, prev->ports, prev->n, sizeof(key), state_cmp);
}

void pm_snapshot_free(void *p)
{
	struct pm_snapshot *s = p;

	if (!s)
		return;
	free(s->ports);
	free(s->rows.rows);
	pm_fabric_put(s->fabric);
	free(s);
}

static void sweep_finish(struct sweep *sw)
{
	struct pm_snapshot *s = sw->snap;

	s->sweep_seconds = now_mono() - sw->started;
	for (size_t i = 0; i < s->n; i++) {
		struct mib_row *r = &s->rows.rows[s->rows.count++];

		for (int k = 0; k < 8; k++)
			r->index[k] = (oid)(s->ports[i].guid >> (56 - 8 * k) & 0xff);
		r->index[8] = s->ports[i].port;
		r->index_len = 9;
		r->data = &s->ports[i];
		if (s->ports[i].stale)
			s->stale_ports++;
	}
	DEBUGMSGTL(("ibsnmpd:pm", "sweep of %zu ports done in %.3f s, %zu stale\n", s->n,
		    s->sweep_seconds, s->stale_ports));
	cache_refresh_done(&sw->pm->sweep, s, NULL);
	free(sw->node_capmask);
	free(sw);
}

static void sweep_start(struct cache_group *g)
{
	struct pm_subnet *pm = g->owner;
	struct pm_fabric *f = pm->fabric;
	struct sweep *sw;
	struct pm_snapshot *s;

	if (!f) {
		cache_refresh_done(g, NULL, "the subnet has not been discovered yet");
		return;
	}
	sw = calloc(1, sizeof(*sw));
	s = calloc(1, sizeof(*s));
	if (!sw || !s || !(s->ports = calloc(f->n_ports ? f->n_ports : 1, sizeof(*s->ports))) ||
	    !(s->rows.rows = calloc(f->n_ports ? f->n_ports : 1, sizeof(struct mib_row))) ||
	    !(sw->node_capmask = calloc(f->n_nodes ? f->n_nodes : 1, sizeof(unsigned)))) {
		if (s) {
			free(s->ports);
			free(s->rows.rows);
		}
		free(s);
		if (sw)
			free(sw->node_capmask);
		free(sw);
		cache_refresh_done(g, NULL, "out of memory");
		return;
	}
	sw->pm = pm;
	sw->snap = s;
	sw->prev = cache_snapshot(g);
	sw->started = now_mono();
	sw->now = time(NULL);
	s->fabric = pm_fabric_get(f);
	s->n = f->n_ports;
	for (size_t i = 0; i < f->n_ports; i++) {
		const struct pm_port_ref *r = &f->ports[i];
		const struct pm_node *n = &f->nodes[r->node];
		const struct pm_port_state *old = find_prev(sw->prev, n->guid, r->port);
		struct pm_port_state *st = &s->ports[i];

		if (old)
			*st = *old; /* counting goes on where it was */
		st->guid = n->guid;
		st->port = r->port;
		st->lid = r->lid;
		st->node = n;
	}
	/* one ClassPortInfo per node; each answer sends that node's ports */
	sw->pending = 1;
	for (size_t k = 0; k < f->n_nodes; k++) {
		struct node_job *job = calloc(1, sizeof(*job));
		ib_portid_t to;
		struct mad_call call = {
			.mgmt_class = IB_PERFORMANCE_CLASS,
			.method = IB_MAD_METHOD_GET,
			.attr_id = CLASS_PORT_INFO,
		};

		if (!job || !f->nodes[k].lid) {
			free(job);
			continue;
		}
		job->sw = sw;
		job->node = k;
		mad_portid_gs(&to, f->nodes[k].lid);
		sw->pending++;
		if (mad_engine_call(&to, &call, got_classportinfo, job)) {
			free(job);
			sw->pending--;
		}
	}
	sweep_done_one(sw);
}

void pm_subnet_apply_config(struct pm_subnet *pm)
{
	cache_group_set_lifetime(&pm->sweep, ibsnmpd_cfg.cache_lifetime_s[CACHE_PM_COUNTERS]);
	if (pm->discovery_interval_s != ibsnmpd_cfg.pm_discovery_interval_s) {
		pm->discovery_interval_s = ibsnmpd_cfg.pm_discovery_interval_s;
		if (pm->discovery_alarm)
			snmp_alarm_unregister(pm->discovery_alarm);
		pm->discovery_alarm = snmp_alarm_register(pm->discovery_interval_s, SA_REPEAT,
							  on_discovery_alarm, pm);
	}
}

int pm_subnet_start(struct pm_subnet *pm, const char *ca_name, int port_num)
{
	int fds[2];

	memset(pm, 0, sizeof(*pm));
	snprintf(pm->ca_name, sizeof(pm->ca_name), "%s", ca_name);
	pm->port_num = port_num;
	if (pipe(fds) < 0)
		return -1;
	pm->pipe_r = fds[0];
	pm->pipe_w = fds[1];
	fcntl(pm->pipe_r, F_SETFD, FD_CLOEXEC);
	fcntl(pm->pipe_w, F_SETFD, FD_CLOEXEC);
	register_readfd(pm->pipe_r, on_discovery_done, pm);
	pm->sweep.name = "PM counters sweep";
	pm->sweep.refresh = sweep_start;
	pm->sweep.free_snapshot = pm_snapshot_free;
	pm->sweep.owner = pm;
	pm->sweep.lifetime_s = ibsnmpd_cfg.cache_lifetime_s[CACHE_PM_COUNTERS];
	pm_subnet_apply_config(pm);
	start_discovery(pm); /* the first sweep follows the first discovery */
	return 0;
}

void pm_subnet_stop(struct pm_subnet *pm)
{
	if (pm->discovery_alarm)
		snmp_alarm_unregister(pm->discovery_alarm);
	pm->discovery_alarm = 0;
	cache_group_stop(&pm->sweep);
	unregister_readfd(pm->pipe_r);
	/* a discovery still running writes into a pipe nobody reads: it ends
	 * with the process; the write end stays open so that it never fails on
	 * a closed descriptor number reused by something else */
	close(pm->pipe_r);
	pm_fabric_put(pm->fabric);
	pm->fabric = NULL;
}
