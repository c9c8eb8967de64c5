/* The subnet checks' runs (route_subnet.c): after every publication of the
 * link sweeps (ibsnmpdFabricPortTable's group), from the PortInfo it holds of
 * every port; and after every round of SMInfo to the SMs, which each sweep
 * begins, 10 s apart at least (a few SMPs: the ports that say they are SMs,
 * the LIDs ports take for their master). A run takes a copy of what the area holds to a thread
 * of its own (sorts of a quarter million ports at 40,000 hosts: the main
 * loop must not wait on them; bench/routing.py prints their time), then the
 * routing group is published again with the routing run's findings as they
 * are then.
 * What it keeps between runs: each port's state and since when (an end
 * stuck in Init or Armed is told after two sweeps, a transition the SM is
 * making is not), each SM's ActCount and since when it has not moved, since
 * when it is master. */
#include "ibsnmpd/netsnmp.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/mad.h>

#include "ibsnmpd/area.h"
#include "ibsnmpd/fabric.h"
#include "ibsnmpd/file_io.h"
#include "ibsnmpd/sma_attr.h"

#include "route_internal.h"

#define CAP_IS_SM 0x2u        /* PortInfo CapabilityMask.IsSM */
#define ROUND_MAX 64          /* SMs asked in a round */
#define ROUND_EVERY_S 10      /* at most a round this often (OpenSM's sweep): a burst of
				 sweeps after a change costs one round, not one each */
#define PLAN_MAX (256u << 20) /* an ibnetdiscover dump of 40,000 hosts is some 15 MB */

/* One round of SMInfo. */
struct route_sm_round {
	struct route_area *a;       /* NULL: the area stopped (the last answer frees it) */
	unsigned pending;
	size_t n;
	struct route_sm_ask {
		struct route_sm_round *round;
		unsigned lid;
		uint64_t port_guid;     /* of the port with that LID, 0 unknown */
		bool answered;
		struct sma_sminfo info;
	} asks[ROUND_MAX];
};

static int fact_cmp(const struct route_port_fact *x, const struct route_port_fact *y)
{
	if (x->guid != y->guid)
		return (x->guid > y->guid) - (x->guid < y->guid);
	return (x->port > y->port) - (x->port < y->port);
}

static void fact_of_port(struct route_port_fact *x, const struct fabric_port *p)
{
	void *raw = (void *)p->pi_raw;

	*x = (struct route_port_fact){
		.guid = p->guid,
		.port = p->port,
		.lid = p->pi.lid,
		.lmc = (uint8_t)mad_get_field(raw, 0, IB_PORT_LMC_F),
		.state = p->pi.state,
		.phys_state = p->pi.phys_state,
		.mtu_cap = (uint8_t)mad_get_field(raw, 0, IB_PORT_MTU_CAP_F),
		.active_mtu = p->pi.neighbor_mtu,
		.vl_cap = (uint8_t)mad_get_field(raw, 0, IB_PORT_VL_CAP_F),
		.oper_vls = p->pi.oper_vls,
		.is_sm = (mad_get_field(raw, 0, IB_PORT_CAPMASK_F) & CAP_IS_SM) != 0,
		.sm_lid = (uint16_t)mad_get_field(raw, 0, IB_PORT_SMLID_F),
	};
}

static int sm_cmp(const void *x, const void *y)
{
	const struct route_sm *a = x, *b = y;

	if (a->guid != b->guid)
		return (a->guid > b->guid) - (a->guid < b->guid);
	return (a->lid > b->lid) - (a->lid < b->lid);
}

static struct route_sm_track *track_of(struct route_area *a, uint64_t guid)
{
	for (size_t i = 0; i < a->n_track; i++)
		if (a->track[i].guid == guid)
			return &a->track[i];
	return NULL;
}

/* The master's GUID: the one SM that says master (0: none, several). */
static uint64_t master_of(const struct route_sm *sms, size_t n)
{
	uint64_t m = 0;
	size_t masters = 0;

	for (size_t i = 0; i < n; i++)
		if (sms[i].state == 3) {
			m = sms[i].guid;
			masters++;
		}
	return masters == 1 ? m : 0;
}

/* Whether x is the file y was (the same inode, size and change time). */
static bool same_file(const struct stat *x, const struct stat *y)
{
	return x->st_ino == y->st_ino && x->st_size == y->st_size &&
	       x->st_mtim.tv_sec == y->st_mtim.tv_sec && x->st_mtim.tv_nsec == y->st_mtim.tv_nsec;
}

/* The expected cabling, read again when the file changed (a stat a run);
 * one that does not read or parse is said once and leaves the plan before. */
static void plan_follow(struct route_area *a)
{
	const char *path = route_cfg.plan_path, *why = NULL;
	struct route_plan *plan;
	struct stat st;
	char *text = NULL, err[200];
	size_t len = 0;
	int rc;

	if (!path[0]) {
		route_plan_free(a->plan);
		a->plan = NULL;
		return;
	}
	if (!stat(path, &st) && a->plan && same_file(&st, &a->plan_st))
		return;
	rc = file_read_whole(path, PLAN_MAX, &text, &len, &st, &why);
	if (rc) {
		if (!a->plan_failed)
			snmp_log(LOG_WARNING, "expectedTopology %s: %s: the cabling check %s\n", path,
				 rc > 0 ? "no such file" : why,
				 a->plan ? "keeps the plan read before" : "does not run");
		a->plan_failed = true;
		return;
	}
	if (a->plan_failed && same_file(&st, &a->plan_st)) {
		free(text); /* the same file that did not parse */
		return;
	}
	a->plan_st = st;
	plan = route_plan_parse(text, len, err, sizeof(err));
	free(text);
	if (!plan) {
		snmp_log(LOG_WARNING, "%s%s%s: the cabling check %s\n", path,
			 strncmp(err, "line ", 5) ? ": " : ":", strncmp(err, "line ", 5) ? err : err + 5,
			 a->plan ? "keeps the plan read before" : "does not run");
		a->plan_failed = true;
		return;
	}
	snmp_log(LOG_INFO, "expectedTopology %s: %zu nodes, %zu ports planned\n", path,
		 plan->n_nodes, plan->n_ports);
	route_plan_free(a->plan);
	a->plan = plan;
	a->plan_failed = false;
}

/* One run of the subnet checks: what the area holds, copied (the area
 * goes on taking sweeps and answers meanwhile), checked on the worker. */
struct route_subnet_job {
	struct route_area *a;
	const struct topology *fabric; /* held */
	struct route_port_fact *facts;
	struct route_sm *sms;          /* their names filled in by the checks */
	struct route_subnet_input in;
	struct route_findings found;
	int rc;
	double seconds;
};

static void job_free(struct route_subnet_job *j)
{
	if (!j)
		return;
	topology_put(j->fabric);
	free(j->facts);
	free(j->sms);
	route_findings_free(&j->found);
	free(j);
}

static void subnet_work(void *arg)
{
	struct route_subnet_job *j = arg;
	double began = monotonic_seconds();

	j->rc = route_subnet_check(j->fabric, &j->in, &j->found);
	j->seconds = monotonic_seconds() - began;
}

static void run(struct route_area *a);

/* On the main loop: the checks published, with the routing run's
 * findings as they are now. */
static void subnet_done(void *arg)
{
	struct route_subnet_job *j = arg;
	struct route_area *a = j->a;
	const struct route_snapshot *cur = cache_snapshot(&a->group);
	struct route_snapshot *s = NULL;
	uint64_t master;

	a->job = NULL;
	if (j->rc == 0) {
		for (unsigned k = ROUTE_ROUTING_CHECKS + 1; k <= ROUTE_CHECKS; k++)
			j->found.checks[k].at = time(NULL);
		s = route_snapshot_make(cur ? (struct route_routing *)cur->routing : NULL, &j->found,
					j->seconds, NULL);
	}
	if (!s) {
		snmp_log(LOG_WARNING, "subnet checks: out of memory: the last ones stay\n");
	} else {
		s->sms = j->sms; /* the snapshot takes them, named */
		s->n_sms = j->in.n_sms;
		j->sms = NULL;
		master = master_of(s->sms, s->n_sms);
		if (master && a->master && master != a->master) {
			a->previous_master = a->master;
			route_read_master_changed(a, a->master, master);
		}
		if (master)
			a->master = master;
		s->master = master;
		s->previous_master = a->previous_master;
		DEBUGMSGTL(("ibsnmpd:route", "subnet checks of %zu ports, %zu SMs: %.3f s\n",
			    j->in.n_ports, s->n_sms, s->subnet_seconds));
		cache_publish(&a->group, s);
	}
	job_free(j);
	if (a->subnet_again) {
		a->subnet_again = false;
		run(a);
	}
}

/* The checks of what the area holds, on the worker (one run at a time: a
 * sweep or a round that ends meanwhile runs them again after). */
static void run(struct route_area *a)
{
	struct route_subnet_job *j;

	if (!a->facts_fabric)
		return;
	if (a->job) {
		a->subnet_again = true;
		return;
	}
	plan_follow(a); /* never while a job reads the plan */
	if (!(j = calloc(1, sizeof(*j))) ||
	    !(j->facts = malloc((a->n_facts + 1) * sizeof(*j->facts))) ||
	    (a->sms && !(j->sms = malloc((a->n_sms + 1) * sizeof(*j->sms))))) {
		job_free(j);
		snmp_log(LOG_WARNING, "subnet checks: out of memory: the last ones stay\n");
		return;
	}
	j->a = a;
	j->fabric = topology_get(a->facts_fabric);
	memcpy(j->facts, a->facts, a->n_facts * sizeof(*j->facts));
	if (a->sms)
		memcpy(j->sms, a->sms, a->n_sms * sizeof(*j->sms));
	j->in = (struct route_subnet_input){
		.ports = j->facts, .n_ports = a->n_facts, .sms = j->sms, .n_sms = a->n_sms,
		.plan = a->plan, .stall_s = route_cfg.sm_stall_s,
		/* two sweeps: an end the SM is bringing up is Active by then */
		.stuck_s = 2 * (a->links->lifetime_s ? a->links->lifetime_s : 1),
	};
	if (worker_start(&a->subnet, subnet_work, subnet_done, j)) {
		job_free(j);
		return;
	}
	a->job = j;
}

/* ---- the SMs' rounds ---- */

static void round_end(struct route_area *a, struct route_sm_round *r)
{
	struct route_sm *sms = calloc(r->n + 1, sizeof(*sms));
	unsigned *answered = calloc(r->n + 1, sizeof(*answered));
	time_t now = monotonic_whole_seconds();
	size_t n = 0, n_answered = 0;

	if (!sms || !answered) {
		free(sms);
		free(answered);
		return;
	}
	for (size_t i = 0; i < r->n; i++)
		if (r->asks[i].answered)
			answered[n_answered++] = r->asks[i].lid;
	free(a->answered_lids);
	a->answered_lids = answered;
	a->n_answered_lids = n_answered;
	for (size_t i = 0; i < r->n; i++) {
		const struct route_sm_ask *k = &r->asks[i];
		struct route_sm *m = &sms[n];
		struct route_sm_track *t;

		m->lid = k->lid;
		if (!k->answered) {
			if (!k->port_guid)
				continue; /* no port has the LID: nobody to name */
			m->guid = k->port_guid;
			m->state = ROUTE_SM_NO_ANSWER;
			/* its last answer stands, stale, for routingSmStall: an SM
			 * whose answers come late is no SM gone (its ActCount's
			 * stillness and its time as master as they were then) */
			if ((t = track_of(a, m->guid)) && t->answered_at &&
			    now - t->answered_at < (time_t)route_cfg.sm_stall_s) {
				m->state = t->state;
				m->priority = t->priority;
				m->act_count = t->act;
				m->act_still_s = t->still_s;
				m->master_s = t->master_s;
				m->stale = true;
			}
			DEBUGMSGTL(("ibsnmpd:route", "SM at LID %u (0x%016llx) does not answer: %s\n",
				    k->lid, (unsigned long long)m->guid,
				    m->stale ? "its last answer stands" : "no answer to keep"));
			n++;
			continue;
		}
		m->guid = k->info.guid;
		m->state = (uint8_t)(k->info.state & 3);
		m->priority = (uint8_t)k->info.priority;
		m->act_count = k->info.act_count;
		if (!(t = track_of(a, m->guid))) {
			struct route_sm_track *v = realloc(a->track, (a->n_track + 1) * sizeof(*v));

			if (!v)
				continue;
			a->track = v;
			t = &a->track[a->n_track++];
			*t = (struct route_sm_track){.guid = m->guid, .act = m->act_count,
						     .act_since = now};
		}
		if (t->act != m->act_count) {
			t->act = m->act_count;
			t->act_since = now;
		}
		if (m->state != 3)
			t->master_since = 0;
		else if (!t->master_since)
			t->master_since = now;
		m->act_still_s = (uint32_t)(now - t->act_since);
		m->master_s = t->master_since ? (uint32_t)(now - t->master_since) : 0;
		t->answered_at = now;
		t->state = m->state;
		t->priority = m->priority;
		t->still_s = m->act_still_s;
		t->master_s = m->master_s;
		n++;
	}
	qsort(sms, n, sizeof(*sms), sm_cmp);
	/* one row per SM: asked at two LIDs (its port's, the one ports name),
	 * it answered the same */
	for (size_t i = 1; i < n;)
		if (sms[i].guid == sms[i - 1].guid && sms[i].guid) {
			if (sms[i - 1].stale && !sms[i].stale)
				sms[i - 1] = sms[i]; /* an answer before a kept one */
			memmove(&sms[i], &sms[i + 1], (n - i - 1) * sizeof(*sms));
			n--;
		} else {
			i++;
		}
	free(a->sms);
	a->sms = sms;
	a->n_sms = n;
	run(a);
}

static void sminfo_done(void *ctx, int result, const uint8_t *data, size_t len)
{
	struct route_sm_ask *k = ctx;
	struct route_sm_round *r = k->round;

	k->answered = result == MAD_OK && data && !sma_sminfo_decode(data, len, &k->info);
	if (--r->pending)
		return;
	if (r->a) {
		r->a->round = NULL;
		round_end(r->a, r);
	}
	free(r);
}

/* Adds an ask of lid to r (once). */
static void ask(struct route_sm_round *r, unsigned lid)
{
	if (!lid || lid >= 0xc000 || r->n >= ROUND_MAX)
		return;
	for (size_t k = 0; k < r->n; k++)
		if (r->asks[k].lid == lid)
			return;
	r->asks[r->n++] = (struct route_sm_ask){.round = r, .lid = lid};
}

/* A round to the SMs the facts show: the ports that say they are one, the
 * LIDs Active ports take for their master; and those that answered the
 * round before (an SM that was master, on a switch, is standby now). */
static void round_begin(struct route_area *a)
{
	struct route_sm_round *r;

	if (a->round || (a->round_at && monotonic_whole_seconds() - a->round_at < ROUND_EVERY_S) ||
	    !(r = calloc(1, sizeof(*r))))
		return;
	a->round_at = monotonic_whole_seconds();
	r->a = a;
	for (size_t i = 0; i < a->n_facts && r->n < ROUND_MAX; i++) {
		const struct route_port_fact *p = &a->facts[i];

		if (p->state != 4)
			continue;
		if (p->is_sm)
			ask(r, p->lid);
		ask(r, p->sm_lid);
	}
	for (size_t i = 0; i < a->n_answered_lids; i++)
		ask(r, a->answered_lids[i]);
	/* the port GUID of each LID (a CA's port; a switch's port 0), for an
	 * SM that does not answer */
	for (size_t i = 0; i < a->facts_fabric->n_ports; i++) {
		const struct topo_port *tp = &a->facts_fabric->ports[i];

		for (size_t k = 0; k < r->n; k++)
			if (tp->lid == r->asks[k].lid && !r->asks[k].port_guid)
				r->asks[k].port_guid = tp->port_guid;
	}
	r->pending = 1; /* the hold of the start */
	for (size_t k = 0; k < r->n; k++) {
		ib_portid_t to;

		memset(&to, 0, sizeof(to)); /* ib_portid_set leaves the other fields */
		ib_portid_set(&to, (int)r->asks[k].lid, 0, 0);
		r->pending++;
		if (mad_engine_smp_get(&to, IB_ATTR_SMINFO, 0, sminfo_done, &r->asks[k]))
			r->pending--;
	}
	a->round = r;
	sminfo_done(&(struct route_sm_ask){.round = r}, MAD_OK, NULL, 0); /* the hold */
}

/* ---- after a link sweep ---- */

static void swept(struct cache_group *g, const void *before, const void *after, void *arg)
{
	struct route_area *a = arg;
	const struct fabric_snapshot *fs = after;
	struct route_port_fact *facts;
	time_t now = monotonic_whole_seconds(), *since;
	size_t n = 0, j = 0;

	(void)g;
	(void)before;
	if (!fs || !fs->fabric)
		return;
	facts = calloc(fs->n + 1, sizeof(*facts));
	since = calloc(fs->n + 1, sizeof(*since));
	if (!facts || !since) {
		free(facts);
		free(since);
		snmp_log(LOG_WARNING, "subnet checks: out of memory: the last ones stay\n");
		return;
	}
	for (size_t i = 0; i < fs->n; i++) {
		const struct fabric_port *p = &fs->ports[i];
		struct route_port_fact *x = &facts[n];

		if (!p->have_info || p->gone)
			continue;
		fact_of_port(x, p);
		/* both lists by (GUID, port): the last run's state of the port */
		while (j < a->n_facts && fact_cmp(&a->facts[j], x) < 0)
			j++;
		since[n] = j < a->n_facts && !fact_cmp(&a->facts[j], x) &&
				   a->facts[j].state == x->state
			   ? a->since[j]
			   : now;
		x->state_s = (uint32_t)(now - since[n]);
		n++;
	}
	free(a->facts);
	free(a->since);
	a->facts = facts;
	a->since = since;
	a->n_facts = n;
	topology_put(a->facts_fabric);
	a->facts_fabric = topology_get(fs->fabric);
	run(a);
	round_begin(a);
}

void route_links_start(struct route_area *a)
{
	struct fabric_area *links = area_find(&fabric_area_def);

	if (worker_init(&a->subnet, "subnet checks")) {
		snmp_log(LOG_ERR, "subnet checks: no eventfd: they do not run\n");
		return;
	}
	a->links = links ? &links->group : NULL;
	if (a->links)
		cache_group_observe(a->links, &a->swept, swept, a);
}

void route_links_stop(struct route_area *a)
{
	worker_stop(&a->subnet); /* a job running: joined, not published */
	job_free(a->job);
	a->job = NULL;
	a->subnet_again = false;
	if (a->links)
		cache_group_unobserve(a->links, &a->swept);
	a->links = NULL;
	if (a->round)
		a->round->a = NULL; /* its last answer frees it */
	a->round = NULL;
	free(a->facts);
	free(a->since);
	free(a->sms);
	free(a->track);
	free(a->answered_lids);
	route_plan_free(a->plan);
	a->plan = NULL;
	memset(&a->plan_st, 0, sizeof(a->plan_st));
	a->plan_failed = false;
	topology_put(a->facts_fabric);
	a->facts = NULL;
	a->since = NULL;
	a->sms = NULL;
	a->track = NULL;
	a->answered_lids = NULL;
	a->facts_fabric = NULL;
	a->n_facts = a->n_sms = a->n_track = a->n_answered_lids = 0;
}
