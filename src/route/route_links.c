/* The subnet checks' runs (route_subnet.c): after every publication of the
 * link sweeps (ibsnmpdFabricPortTable's group), from the PortInfo it holds of
 * every port, read by no MAD of its own. It runs on the main thread: two
 * sorts of the ports and a search per link (bench/routing.py prints its
 * time; 40,000 hosts' quarter million ports in tens of milliseconds), and
 * publishes the routing group again with the routing run's findings
 * unchanged. What it keeps between runs: each port's state and since when,
 * so that an end stuck in Init or Armed is told after two sweeps (a
 * transition the SM is making is not). */
#include "ibsnmpd/netsnmp.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/mad.h>

#include "ibsnmpd/area.h"
#include "ibsnmpd/fabric.h"

#include "route_internal.h"

static int fact_cmp(const struct route_port_fact *x, const struct route_port_fact *y)
{
	if (x->guid != y->guid)
		return (x->guid > y->guid) - (x->guid < y->guid);
	return (x->port > y->port) - (x->port < y->port);
}

static void fact_of_port(struct route_port_fact *x, const struct fabric_port *p)
{
	const uint8_t *raw = p->pi_raw;

	*x = (struct route_port_fact){
		.guid = p->guid,
		.port = p->port,
		.lid = p->pi.lid,
		.lmc = (uint8_t)mad_get_field((void *)raw, 0, IB_PORT_LMC_F),
		.state = p->pi.state,
		.phys_state = p->pi.phys_state,
		.mtu_cap = (uint8_t)mad_get_field((void *)raw, 0, IB_PORT_MTU_CAP_F),
		.active_mtu = p->pi.neighbor_mtu,
		.vl_cap = (uint8_t)mad_get_field((void *)raw, 0, IB_PORT_VL_CAP_F),
		.oper_vls = p->pi.oper_vls,
	};
}

static void swept(struct cache_group *g, const void *before, const void *after, void *arg)
{
	struct route_area *a = arg;
	const struct fabric_snapshot *fs = after;
	const struct route_snapshot *cur = cache_snapshot(&a->group);
	struct route_port_fact *facts;
	struct route_findings found;
	struct route_snapshot *s;
	time_t now = cache_clock_s(), *since;
	/* two sweeps: an end the SM is bringing up is Active by then */
	unsigned stuck_s = 2 * (g->lifetime_s ? g->lifetime_s : 1);
	size_t n = 0, j = 0;
	double t0;

	(void)before;
	if (!fs || !fs->fabric)
		return;
	facts = calloc(fs->n + 1, sizeof(*facts));
	since = calloc(fs->n + 1, sizeof(*since));
	if (!facts || !since)
		goto fail;
	t0 = cache_clock();
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
	if (route_subnet_check(fs->fabric, facts, n, stuck_s, &found))
		goto fail;
	for (unsigned k = ROUTE_ROUTING_CHECKS + 1; k <= ROUTE_CHECKS; k++)
		found.checks[k].at = time(NULL);
	s = route_snapshot_make(cur ? (struct route_routing *)cur->routing : NULL, &found,
				cache_clock() - t0, NULL);
	route_findings_free(&found);
	if (!s)
		goto fail;
	free(a->facts);
	free(a->since);
	a->facts = facts;
	a->since = since;
	a->n_facts = n;
	DEBUGMSGTL(("ibsnmpd:route", "subnet checks of %zu ports: %.3f s\n", n, s->subnet_seconds));
	cache_publish(&a->group, s);
	return;
fail:
	free(facts);
	free(since);
	snmp_log(LOG_WARNING, "subnet checks: out of memory: the last ones stay\n");
}

void route_links_start(struct route_area *a)
{
	struct fabric_area *links = area_find(&fabric_area_def);

	a->links = links ? &links->group : NULL;
	if (a->links)
		cache_group_observe(a->links, &a->swept, swept, a);
}

void route_links_stop(struct route_area *a)
{
	if (a->links)
		cache_group_unobserve(a->links, &a->swept);
	a->links = NULL;
	free(a->facts);
	free(a->since);
	a->facts = NULL;
	a->since = NULL;
	a->n_facts = 0;
}
