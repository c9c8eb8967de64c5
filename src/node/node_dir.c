/* The node directory: every node of the subnet and its interfaces, built
 * whole from what the other areas' sweeps published (no MAD of its own).
 *
 *   node           <- the discovery (NodeInfo, NodeDescription: ibnetdiscover's)
 *   if link rows   <- the fabric's PortInfo sweep (fabric_snapshot)
 *   if counters    <- the PM sweep (pm_snapshot: PortCounters[Extended])
 *
 * A node the discovery no longer reaches keeps its entry (reachable false)
 * for hold_s seconds, its interfaces as last seen (or as the fabric keeps
 * them), every one down.
 *
 * A node with a context also has its LLDP neighbours (the interfaces whose
 * link is up, and the node at their other end as the discovery found it)
 * and its entities (its chassis and ports, ENTITY-MIB); the neighbours that
 * came and went since the previous directory are counted (LLDP-MIB's
 * lldpStatsRemTables*).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/fabric.h"
#include "ibsnmpd/node.h"
#include "ibsnmpd/pm.h"
#include "ibsnmpd/vitals.h"

static struct node_dir empty_dir;

struct node_dir *node_dir_empty(void)
{
	return &empty_dir;
}

void node_dir_free(void *p)
{
	struct node_dir *d = p;

	if (!d || d == &empty_dir)
		return;
	for (size_t k = 0; k < d->n; k++)
		free(d->nodes[k].name);
	free(d->nodes);
	free(d->ports);
	free(d->kept_links);
	free(d->kept_counters);
	free(d->neighbors);
	free(d->entities);
	free(d->sensors);
	free(d->contains);
	free(d);
}

static int entry_cmp(const void *key, const void *elem)
{
	uint64_t g = *(const uint64_t *)key, e = ((const struct node_entry *)elem)->guid;

	return g < e ? -1 : g > e;
}

const struct node_entry *node_dir_find(const struct node_dir *d, uint64_t guid)
{
	return d && d->n ? bsearch(&guid, d->nodes, d->n, sizeof(*d->nodes), entry_cmp) : NULL;
}

/* The first counters row of guid in the PM snapshot (sorted by GUID, port). */
static size_t first_counters(const struct pm_snapshot *s, uint64_t guid)
{
	size_t lo = 0, hi = s ? s->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->ports[mid].guid < guid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Link fields from the fabric's row of the port. */
static void if_from_fabric(struct node_if *i, const struct fabric_port *p)
{
	i->have_info = p->have_info;
	i->link_state = p->have_info ? p->pi.state : 0;
	i->phys_state = p->have_info ? p->pi.phys_state : 0;
	i->lanes = p->lanes;
	i->speed = p->speed;
	i->mtu = p->have_info ? sma_mtu_octets(p->pi.neighbor_mtu) : 0;
	i->last_change = p->last_change;
	i->remote_guid = p->remote_guid;
	i->remote_port = p->remote_port;
}

/* Counters, as IF-MIB's columns take them (octets; IB counts 4-octet
 * words). The error columns, from PortCounters:
 *   ifInErrors        <- PortRcvErrors (packets received with an error)
 *   ifInDiscards      <- PortRcvConstraintErrors (partition / raw filter)
 *   ifInUnknownProtos <- PortRcvSwitchRelayErrors (no route for the DLID)
 *   ifOutDiscards     <- PortXmitDiscards
 *   ifOutErrors       <- PortXmitConstraintErrors */
static void if_counters(struct node_if *i, const struct pm_port_state *st)
{
	struct node_if_counters *c = &i->c;

	if (!st->have_raw)
		return;
	i->have_counters = true;
	c->in_octets = st->rcv_data * 4;
	c->out_octets = st->xmit_data * 4;
	c->in_pkts = st->rcv_pkts;
	c->out_pkts = st->xmit_pkts;
	c->per_cast = pm_port_has_cast_counters(st);
	if (c->per_cast) {
		c->in_ucast = st->rcv_ucast_pkts;
		c->out_ucast = st->xmit_ucast_pkts;
		c->in_mcast = st->rcv_mcast_pkts;
		c->out_mcast = st->xmit_mcast_pkts;
	}
	c->in_errors = st->raw.rcv_errors;
	c->in_discards = st->raw.rcv_constraint_errors;
	c->in_unknown = st->raw.rcv_switch_relay_errors;
	c->out_discards = st->raw.xmit_discards;
	c->out_errors = st->raw.xmit_constraint_errors;
	c->discontinuity = st->discontinuity;
}

struct builder {
	struct node_dir *d;
	size_t cap_nodes, cap_if, cap_neighbors, cap_entities, cap_sensors, cap_contains;
};

/* Room for one more element of *arr (n used, *cap allocated); 0, or -1
 * out of memory. */
static int make_room(void **arr, size_t *cap, size_t n, size_t size)
{
	void *q;

	if (n < *cap)
		return 0;
	if (!(q = realloc(*arr, (*cap ? *cap * 2 : 64) * size)))
		return -1;
	*arr = q;
	*cap = *cap ? *cap * 2 : 64;
	return 0;
}

static struct node_entry *add_node(struct builder *b)
{
	void *arr = b->d->nodes;

	if (make_room(&arr, &b->cap_nodes, b->d->n, sizeof(*b->d->nodes)))
		return NULL;
	b->d->nodes = arr;
	memset(&b->d->nodes[b->d->n], 0, sizeof(b->d->nodes[0]));
	return &b->d->nodes[b->d->n++];
}

static struct node_port *add_port(struct builder *b)
{
	void *arr = b->d->ports;

	if (make_room(&arr, &b->cap_if, b->d->n_if, sizeof(*b->d->ports)))
		return NULL;
	b->d->ports = arr;
	memset(&b->d->ports[b->d->n_if], 0, sizeof(b->d->ports[0]));
	return &b->d->ports[b->d->n_if++];
}

/* The node's interfaces 1..num_ports: the fabric's rows and the PM
 * sweep's, else what the previous directory had (copied later: see
 * keep_rows). */
static int add_ifs(struct builder *b, const struct node_dir_build *in, struct node_entry *e,
		   const struct node_entry *before)
{
	size_t c = first_counters(in->counters, e->guid);

	e->first_if = b->d->n_if;
	for (unsigned port = 1; port <= e->num_ports; port++) {
		const struct node_port *was = before && port <= before->n_if
					      ? &in->prev->ports[before->first_if + port - 1] : NULL;
		struct node_port *np = add_port(b);

		if (!np)
			return -1;
		np->port = port;
		np->link = in->ports ? fabric_find(in->ports, e->guid, port) : NULL;
		if (!np->link && was)
			np->link = was->link;
		while (in->counters && c < in->counters->n && in->counters->ports[c].guid == e->guid &&
		       in->counters->ports[c].port < port)
			c++;
		if (in->counters && c < in->counters->n && in->counters->ports[c].guid == e->guid &&
		    in->counters->ports[c].port == port && in->counters->ports[c].have_raw)
			np->counters = &in->counters->ports[c];
		else if (was)
			np->counters = was->counters; /* the sweep no longer has it: as last read */
	}
	e->n_if = b->d->n_if - e->first_if;
	return 0;
}

static int add_entity(struct builder *b, uint32_t index)
{
	void *arr = b->d->entities;

	if (make_room(&arr, &b->cap_entities, b->d->n_entities, sizeof(*b->d->entities)))
		return -1;
	b->d->entities = arr;
	b->d->entities[b->d->n_entities++] = (struct node_entity){index};
	if (index < NODE_ENTITY_TEMP_BASE ||
	    (index > NODE_ENTITY_FAN_BASE && index < NODE_ENTITY_TACHO_BASE))
		return 0;
	arr = b->d->sensors; /* a sensor: a row of entPhySensorTable too */
	if (make_room(&arr, &b->cap_sensors, b->d->n_sensors, sizeof(*b->d->sensors)))
		return -1;
	b->d->sensors = arr;
	b->d->sensors[b->d->n_sensors++] = (struct node_entity){index};
	return 0;
}

/* The module of a lane row's module-wide lane number (1-based over its
 * ports' lanes) */
static unsigned module_lane(const struct vitals_module *m, const struct vitals_lane *l)
{
	return (l->port - m->first_port) * 4u + l->lane;
}

/* The hardware's entities, in entPhysicalIndex order: the modules in their
 * cages, the temperature sensors, the fans and their speed sensors, the
 * modules' sensors */
static int add_vitals_entities(struct builder *b, const struct vitals_snapshot *s,
			       const struct vitals_node *v)
{
	const struct vitals_module *mods = s->modules + v->first_module;
	int rc = 0;

	for (uint32_t i = 0; i < v->n_modules; i++)
		if (mods[i].have_info && mods[i].first_port)
			rc |= add_entity(b, NODE_ENTITY_MODULE_BASE + mods[i].module + 1u);
	for (uint32_t i = 0; i < v->n_temps; i++)
		rc |= add_entity(b, NODE_ENTITY_TEMP_BASE + s->temps[v->first_temp + i].sensor + 1u);
	for (uint32_t i = 0; i < v->n_fans; i++)
		rc |= add_entity(b, NODE_ENTITY_FAN_BASE + s->fans[v->first_fan + i].tacho + 1u);
	for (uint32_t i = 0; i < v->n_fans; i++)
		rc |= add_entity(b, NODE_ENTITY_TACHO_BASE + s->fans[v->first_fan + i].tacho + 1u);
	for (uint32_t i = 0; i < v->n_modules; i++) {
		const struct vitals_module *m = &mods[i];
		uint32_t base = NODE_ENTITY_MODULE_SENSOR_BASE + 100u * m->module;
		uint8_t lanes[VITALS_LANES_MAX + 1] = {0};

		if (!m->have_info || !m->first_port)
			continue;
		if (m->info.have_temp)
			rc |= add_entity(b, base + NODE_ENTITY_SENSOR_TEMP);
		if (m->info.have_voltage)
			rc |= add_entity(b, base + NODE_ENTITY_SENSOR_VOLTAGE);
		for (uint32_t j = 0; j < v->n_lanes; j++) {
			const struct vitals_lane *l = &s->lanes[v->first_lane + j];

			if (l->module == m->module && l->port >= m->first_port &&
			    module_lane(m, l) <= VITALS_LANES_MAX)
				lanes[module_lane(m, l)] = 1;
		}
		for (unsigned kind = NODE_ENTITY_SENSOR_RX; kind <= NODE_ENTITY_SENSOR_BIAS; kind += 10)
			for (unsigned l = 1; l <= VITALS_LANES_MAX; l++)
				if (lanes[l])
					rc |= add_entity(b, base + kind + l);
	}
	return rc;
}

/* What holds an entity (entPhysicalContainedIn): a module's port is its
 * cage's first */
static uint32_t entity_parent(const struct vitals_snapshot *s, const struct vitals_node *v,
			      uint32_t index)
{
	if (index >= NODE_ENTITY_MODULE_SENSOR_BASE)
		return NODE_ENTITY_MODULE_BASE + (index - NODE_ENTITY_MODULE_SENSOR_BASE) / 100 + 1;
	if (index > NODE_ENTITY_TACHO_BASE)
		return NODE_ENTITY_FAN_BASE + index - NODE_ENTITY_TACHO_BASE;
	if (index > NODE_ENTITY_MODULE_BASE && index < NODE_ENTITY_TEMP_BASE && v) {
		uint32_t m = index - NODE_ENTITY_MODULE_BASE - 1;

		return m < v->n_modules ? NODE_ENTITY_PORT_BASE +
			s->modules[v->first_module + m].first_port : NODE_ENTITY_CHASSIS;
	}
	return NODE_ENTITY_CHASSIS;
}

uint32_t node_entity_parent(const struct node_entry *e, uint32_t index)
{
	return index == NODE_ENTITY_CHASSIS ? 0 : entity_parent(e->dir->vitals, e->vitals, index);
}

static int contain_cmp(const void *a, const void *b)
{
	const struct node_contain *x = a, *y = b;

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return x->child < y->child ? -1 : x->child > y->child;
}

/* entPhysicalContainsTable's rows of the node: every entity but the chassis */
static int add_contains(struct builder *b, const struct node_dir_build *in, struct node_entry *e)
{
	void *arr = b->d->contains;

	e->first_contain = (uint32_t)b->d->n_contains;
	for (uint32_t i = 1; i < e->n_entities; i++) {
		uint32_t child = b->d->entities[e->first_entity + i].index;

		if (make_room(&arr, &b->cap_contains, b->d->n_contains, sizeof(*b->d->contains)))
			return -1;
		b->d->contains = arr;
		b->d->contains[b->d->n_contains++] =
			(struct node_contain){entity_parent(in->vitals, e->vitals, child), child};
	}
	if (e->n_entities > 2)
		qsort(b->d->contains + e->first_contain, e->n_entities - 1, sizeof(*b->d->contains),
		      contain_cmp);
	return 0;
}

static bool same_entities(const struct node_dir *d, const struct node_entry *e,
			  const struct node_dir *pd, const struct node_entry *before)
{
	return before->n_entities == e->n_entities &&
	       !memcmp(pd->entities + before->first_entity, d->entities + e->first_entity,
		       e->n_entities * sizeof(*d->entities));
}

/* Its chassis, its ports, its hardware (entPhysicalIndex order). */
static int add_entities(struct builder *b, const struct node_dir_build *in, struct node_entry *e,
			const struct node_entry *before)
{
	e->first_entity = (uint32_t)b->d->n_entities;
	e->first_sensor = (uint32_t)b->d->n_sensors;
	if (add_entity(b, NODE_ENTITY_CHASSIS))
		return -1;
	for (size_t k = 0; k < e->n_if; k++)
		if (add_entity(b, NODE_ENTITY_PORT_BASE + b->d->ports[e->first_if + k].port))
			return -1;
	if (e->vitals && add_vitals_entities(b, in->vitals, e->vitals))
		return -1;
	e->n_entities = (uint32_t)(b->d->n_entities - e->first_entity);
	e->n_sensors = (uint32_t)(b->d->n_sensors - e->first_sensor);
	if (add_contains(b, in, e))
		return -1;
	/* entLastChangeTime: when its context's entities were made, or came
	 * and went (modules), or its identity changed */
	if (before && before->n_if && before->has_ident == e->has_ident &&
	    before->vendor_id == e->vendor_id && before->device_id == e->device_id &&
	    before->revision == e->revision && !strcmp(before->desc, e->desc) &&
	    !strcmp(node_sys_name(before), node_sys_name(e)) &&
	    same_entities(b->d, e, in->prev, before))
		e->entity_changed = before->entity_changed;
	else
		e->entity_changed = in->now;
	return 0;
}

/* Whether an interface has a neighbour: its node reached, its link up, the
 * node at the other end known. */
static bool has_neighbor(const struct node_entry *e, const struct node_port *np)
{
	return e->reachable && np->link && np->link->up && np->link->remote_guid;
}

static int neighbor_cmp(const void *a, const void *b)
{
	const struct node_neighbor *x = a, *y = b;

	if (x->time_mark != y->time_mark)
		return x->time_mark < y->time_mark ? -1 : 1;
	return x->port < y->port ? -1 : x->port > y->port;
}

/* The node's neighbours, and the rows that came and went since the
 * previous directory (a row whose other end or time mark changed went and
 * came): lldpStatsRemTablesInserts, Deletes, LastChangeTime. */
static int add_neighbors(struct builder *b, const struct node_dir_build *in, struct node_entry *e,
			 const struct node_entry *before)
{
	struct was {
		uint64_t guid;
		uint32_t mark;
		uint16_t port;
		bool had;
	} was[256];
	bool had_context = before && before->n_if;
	bool changed = false;
	time_t inserted_at = 0; /* the newest row's link change */
	bool deleted = false;
	void *arr = b->d->neighbors;

	memset(was, 0, sizeof(was));
	for (uint32_t k = 0; had_context && k < before->n_nb; k++) {
		const struct node_neighbor *nb = &in->prev->neighbors[before->first_nb + k];
		const struct fabric_port *link = in->prev->ports[before->first_if + nb->if_at].link;

		was[nb->port & 255] = (struct was){link->remote_guid, nb->time_mark,
						   (uint16_t)link->remote_port, true};
	}
	e->lldp_inserts = had_context ? before->lldp_inserts : 0;
	e->lldp_deletes = had_context ? before->lldp_deletes : 0;
	e->lldp_changed = had_context ? before->lldp_changed : 0;
	e->first_nb = (uint32_t)b->d->n_neighbors;
	for (size_t k = 0; k < e->n_if; k++) {
		const struct node_port *np = &b->d->ports[e->first_if + k];
		struct node_neighbor nb;
		struct was *w = &was[np->port & 255];

		if (!has_neighbor(e, np))
			continue;
		nb = (struct node_neighbor){node_time_ticks(b->d, np->link->last_change),
					    (uint16_t)np->port, (uint16_t)k};
		if (make_room(&arr, &b->cap_neighbors, b->d->n_neighbors, sizeof(nb)))
			return -1;
		b->d->neighbors = arr;
		b->d->neighbors[b->d->n_neighbors++] = nb;
		if (!w->had || w->guid != np->link->remote_guid ||
		    w->port != np->link->remote_port || w->mark != nb.time_mark) {
			e->lldp_deletes += w->had;
			e->lldp_inserts++;
			changed = true;
			if (np->link->last_change > inserted_at)
				inserted_at = np->link->last_change;
		}
		w->had = false;
	}
	for (size_t p = 0; p < 256; p++) {
		if (was[p].had) {
			e->lldp_deletes++;
			changed = deleted = true;
		}
	}
	e->n_nb = (uint32_t)(b->d->n_neighbors - e->first_nb);
	if (e->n_nb > 1)
		qsort(b->d->neighbors + e->first_nb, e->n_nb, sizeof(*b->d->neighbors), neighbor_cmp);
	/* a row's time mark is its link's change: the tables changed then too
	 * (a build in the next second would put the change after the row) */
	if (changed) {
		time_t at = inserted_at > 0 && !deleted ? inserted_at : in->now;

		if (at > e->lldp_changed) /* never back */
			e->lldp_changed = at;
	}
	return 0;
}

/* Whether a row the directory points to is not in the sweep's snapshot
 * it is built from (it is the previous directory's). */
static bool link_elsewhere(const struct fabric_port *p, const struct fabric_snapshot *s)
{
	return p && !(s && p >= s->ports && p < s->ports + s->n);
}

static bool counters_elsewhere(const struct pm_port_state *p, const struct pm_snapshot *s)
{
	return p && !(s && p >= s->ports && p < s->ports + s->n);
}

/* Rows still pointing into the previous directory's sources (a node the
 * sweeps no longer have): copied into this directory, as the sources they
 * point into are freed once it is published. */
static int keep_rows(struct node_dir *d, const struct node_dir_build *in)
{
	size_t n_links = 0, n_counters = 0;

	for (size_t k = 0; k < d->n_if; k++) {
		n_links += link_elsewhere(d->ports[k].link, in->ports);
		n_counters += counters_elsewhere(d->ports[k].counters, in->counters);
	}
	if ((n_links && !(d->kept_links = calloc(n_links, sizeof(*d->kept_links)))) ||
	    (n_counters && !(d->kept_counters = calloc(n_counters, sizeof(*d->kept_counters)))))
		return -1;
	n_links = n_counters = 0;
	for (size_t k = 0; k < d->n_if; k++) {
		struct node_port *np = &d->ports[k];

		if (link_elsewhere(np->link, in->ports)) {
			d->kept_links[n_links] = *np->link;
			/* its names point into the snapshot being replaced; the
			 * directory's entries name the nodes */
			d->kept_links[n_links].node_desc = d->kept_links[n_links].remote_desc = "";
			np->link = &d->kept_links[n_links++];
		}
		if (counters_elsewhere(np->counters, in->counters)) {
			d->kept_counters[n_counters] = *np->counters;
			np->counters = &d->kept_counters[n_counters++];
		}
	}
	return 0;
}

static void set_context(struct node_entry *e, unsigned types_mask)
{
	if (e->type < 32 && (types_mask >> e->type & 1))
		mib_node_context(e->guid, e->type, e->context, sizeof(e->context));
}

static int node_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct node_entry *)a)->guid, y = ((const struct node_entry *)b)->guid;

	return x < y ? -1 : x > y;
}

/* An interface's index in ifTable: its port (ifIndex). */
static unsigned if_index(const void *data, oid *index)
{
	index[0] = ((const struct node_port *)data)->port;
	return 1;
}

/* A node's index in ibsnmpdNodeTable: its GUID. */
static unsigned node_index(const void *data, oid *index)
{
	mib_index_put_guid(index, ((const struct node_entry *)data)->guid);
	return MIB_GUID_INDEX_LEN;
}

/* The arrays to their size: they grew by doubling, and a directory of a
 * big subnet is kept for as long as nothing is published (a context's
 * share of the slack was about as much as its own rows). */
static void *fit(void *arr, size_t n, size_t size)
{
	void *q = n ? realloc(arr, n * size) : NULL;

	if (!n) {
		free(arr);
		return NULL;
	}
	return q ? q : arr;
}

/* Rows of both tables, once the arrays no longer move (nodes sorted by
 * GUID). */
static void index_rows(struct node_dir *d)
{
	d->rows = (struct mib_rows){.count = d->n, .array = d->nodes, .stride = sizeof(*d->nodes),
				    .index_of = node_index};
	for (size_t k = 0; k < d->n; k++) {
		struct node_entry *e = &d->nodes[k];

		e->dir = d;
		e->if_rows = (struct mib_rows){.count = e->n_if, .array = d->ports + e->first_if,
					       .stride = sizeof(*d->ports), .index_of = if_index};
	}
}

struct node_dir *node_dir_build(const struct node_dir_build *in)
{
	struct builder b = {0};
	const struct topology *f = in->fabric;

	if (!(b.d = calloc(1, sizeof(*b.d))))
		return NULL;
	b.d->boot = in->boot;
	/* reached now: every node of the discovery */
	for (size_t k = 0; f && k < f->n_nodes; k++) {
		const struct topo_node *nd = &f->nodes[k];
		struct node_entry *e = add_node(&b);

		if (!e)
			goto fail;
		e->guid = nd->guid;
		e->type = nd->type;
		e->lid = nd->lid;
		e->num_ports = nd->num_ports;
		snprintf(e->desc, sizeof(e->desc), "%s", nd->desc);
		if (!(e->name = strdup(nd->name ? nd->name : nd->desc)))
			goto fail;
		e->has_ident = nd->has_ident;
		e->vendor_id = nd->vendor_id;
		e->device_id = nd->device_id;
		e->revision = nd->revision;
		e->reachable = true;
	}
	/* no longer reached: kept for hold_s (without a discovery yet, all kept) */
	for (size_t k = 0; in->prev && k < in->prev->n; k++) {
		const struct node_entry *old = &in->prev->nodes[k];
		struct node_entry *e;

		if (f && topology_node(f, old->guid))
			continue;
		if (f && !old->reachable && in->now - old->unreachable_since >= (time_t)in->hold_s)
			continue;
		if (!(e = add_node(&b)))
			goto fail;
		*e = *old;
		if (!(e->name = strdup(old->name ? old->name : old->desc)))
			goto fail;
		if (f && old->reachable) {
			e->reachable = false;
			e->unreachable_since = in->now;
		}
	}
	if (b.d->n > 1)
		qsort(b.d->nodes, b.d->n, sizeof(*b.d->nodes), node_cmp);
	for (size_t k = 0; k < b.d->n; k++) {
		struct node_entry *e = &b.d->nodes[k];
		const struct node_entry *before;

		e->context[0] = '\0';
		/* a kept entry's were the previous directory's */
		e->first_if = e->n_if = 0;
		e->first_nb = e->n_nb = e->first_entity = e->n_entities = 0;
		e->first_sensor = e->n_sensors = 0;
		e->vitals = NULL;
		set_context(e, in->types_mask);
		if (!e->context[0])
			continue;
		e->vitals = vitals_find_node(in->vitals, e->guid);
		/* interfaces, neighbours, entities only where a context serves them */
		before = node_dir_find(in->prev, e->guid);
		if (add_ifs(&b, in, e, before) || add_neighbors(&b, in, e, before) ||
		    add_entities(&b, in, e, before))
			goto fail;
	}
	if (keep_rows(b.d, in))
		goto fail;
	b.d->nodes = fit(b.d->nodes, b.d->n, sizeof(*b.d->nodes));
	b.d->ports = fit(b.d->ports, b.d->n_if, sizeof(*b.d->ports));
	b.d->neighbors = fit(b.d->neighbors, b.d->n_neighbors, sizeof(*b.d->neighbors));
	b.d->entities = fit(b.d->entities, b.d->n_entities, sizeof(*b.d->entities));
	b.d->sensors = fit(b.d->sensors, b.d->n_sensors, sizeof(*b.d->sensors));
	b.d->contains = fit(b.d->contains, b.d->n_contains, sizeof(*b.d->contains));
	/* only a context's entities point into the sweeps' snapshots: with
	 * none, the directory follows the discovery alone */
	b.d->vitals = in->types_mask ? in->vitals : NULL;
	b.d->vitals_lifetime_s = in->vitals_lifetime_s;
	index_rows(b.d);
	return b.d;
fail:
	node_dir_free(b.d);
	return NULL;
}

uint32_t node_time_ticks(const struct node_dir *d, time_t t)
{
	double ticks = difftime(t, d->boot) * 100.0;

	if (t <= 0 || ticks <= 0)
		return 0;
	return ticks >= 4294967295.0 ? 4294967295u : (uint32_t)ticks;
}

const char *node_type_name(unsigned type)
{
	static const char *const names[] = {"channel adapter", "switch", "router"};

	return type >= 1 && type <= 3 ? names[type - 1] : "node";
}

void node_sys_descr(const struct node_entry *e, char *out, size_t len)
{
	int n = snprintf(out, len, "InfiniBand %s \"%s\", node GUID 0x%016llx, %u ports",
			 node_type_name(e->type), e->desc, (unsigned long long)e->guid, e->num_ports);

	if (e->has_ident && n >= 0 && (size_t)n < len)
		n += snprintf(out + n, len - (size_t)n, ", vendor 0x%06x device 0x%04x revision 0x%x",
			      e->vendor_id, e->device_id, e->revision);
	if (n >= 0 && (size_t)n < len)
		snprintf(out + n, len - (size_t)n, "; served by ibsnmpd");
}

void node_if_descr(const struct node_entry *e, unsigned port, char *out, size_t len)
{
	snprintf(out, len, "%s port %u (InfiniBand %s 0x%016llx)", node_sys_name(e), port,
		 node_type_name(e->type), (unsigned long long)e->guid);
}

const char *node_sys_name(const struct node_entry *e)
{
	/* its name (never empty but out of memory); else its context */
	return e->name && e->name[0] ? e->name : e->context;
}

void node_if_name(const struct node_entry *e, unsigned port, char *out, size_t len)
{
	snprintf(out, len, "%s/%u", node_sys_name(e), port);
}

void node_if_view(struct node_if *view, const struct node_entry *e, const struct node_port *np)
{
	const struct node_entry *remote;

	memset(view, 0, sizeof(*view));
	if (np->link)
		if_from_fabric(view, np->link);
	view->port = np->port;
	if (np->counters)
		if_counters(view, np->counters);
	if (!e->reachable)
		view->link_state = 1; /* down: nothing answers there */
	remote = view->remote_guid ? node_dir_find(e->dir, view->remote_guid) : NULL;
	view->remote_desc = remote ? node_sys_name(remote) : "";
}

/* ---- IF-MIB mappings ---------------------------------------------------- */

/* ifAdminStatus: down(2) only for a port disabled (PhysState Disabled, 3). */
unsigned node_if_admin_status(const struct node_if *i)
{
	return i->have_info && i->phys_state == 3 ? NODE_IF_DOWN : NODE_IF_UP;
}

/* ifOperStatus from LinkState: Active and ActDefer up(1); Init and Armed
 * dormant(5) (the link is trained and waits for the subnet manager); Down
 * down(2); unread or its node unreachable: down(2). */
unsigned node_if_oper_status(const struct node_if *i, bool reachable)
{
	if (!reachable || !i->have_info)
		return NODE_IF_DOWN;
	switch (i->link_state) {
	case 4:
	case 5: return NODE_IF_UP;
	case 2:
	case 3: return NODE_IF_DORMANT;
	default: return NODE_IF_DOWN;
	}
}

unsigned node_if_high_speed(const struct node_if *i)
{
	return i->lanes * sma_lane_nominal_mbps(i->speed);
}
