/* The links of the subnet, as a snapshot built from one sweep's PortInfo
 * readings, the discovery and the previous snapshot. Pure (no net-snmp, no
 * I/O); the unit tests and the fuzz target call fabric_build() directly. */
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/fabric.h"
#include "ibsnmpd/node_names.h"
#include "ibsnmpd/mad_engine.h"

#define SPEED_OTHER 9 /* sma_speed_generation: not a known speed */

void fabric_portinfo_of(struct fabric_portinfo *out, const struct sma_portinfo *pi)
{
	*out = (struct fabric_portinfo){
		.lid = (uint16_t)pi->lid,
		.state = (uint8_t)pi->state,
		.phys_state = (uint8_t)pi->phys_state,
		.neighbor_mtu = (uint8_t)pi->neighbor_mtu,
		.oper_vls = (uint8_t)pi->oper_vls,
		.width_active = (uint8_t)pi->width_active,
		.width_supported = (uint8_t)pi->width_supported,
		.width_enabled = (uint8_t)pi->width_enabled,
		.speed_active = (uint8_t)pi->speed_active,
		.speed_supported = (uint8_t)pi->speed_supported,
		.speed_enabled = (uint8_t)pi->speed_enabled,
		.speed_ext_active = (uint8_t)pi->speed_ext_active,
		.speed_ext_supported = (uint8_t)pi->speed_ext_supported,
		.speed_ext_enabled = (uint8_t)pi->speed_ext_enabled,
		.ext_speeds = (pi->cap_mask & SMA_PORT_CAP_EXT_SPEEDS) != 0,
	};
}

/* Width bits: 1 1X, 2 4X, 4 8X, 8 12X, 16 2X. */
unsigned fabric_widest_lanes(unsigned width_mask)
{
	unsigned best = 0;

	for (unsigned bit = 1; bit <= 16; bit <<= 1) {
		unsigned lanes = (width_mask & bit) ? sma_width_lanes(bit) : 0;

		if (lanes > best)
			best = lanes;
	}
	return best;
}

/* Speed bits: 1 SDR, 2 DDR, 4 QDR; extended: 1 FDR, 2 EDR, 4 HDR, 8 NDR,
 * 16 XDR. 0: none. */
int fabric_fastest_speed(unsigned speed_mask, unsigned speed_ext_mask)
{
	for (unsigned bit = 16; bit; bit >>= 1)
		if (speed_ext_mask & bit)
			return sma_speed_generation(0, bit);
	for (unsigned bit = 4; bit; bit >>= 1)
		if (speed_mask & bit)
			return sma_speed_generation(bit, 0);
	return 0;
}

int fabric_active_speed(const struct fabric_portinfo *pi)
{
	return sma_speed_generation(pi->speed_active,
				    pi->ext_speeds ? pi->speed_ext_active : 0);
}

/* The extended speeds a port supports (none without CapabilityMask bit 14). */
static unsigned ext_supported(const struct fabric_portinfo *pi)
{
	return pi->ext_speeds ? pi->speed_ext_supported : 0;
}

/* LinkSpeedExtEnabled 30 means "none", 31 "all supported" (IBA 14.2.5.6). */
static unsigned ext_enabled(const struct fabric_portinfo *pi)
{
	if (!pi->ext_speeds || pi->speed_ext_enabled == 30)
		return 0;
	return pi->speed_ext_enabled == 31 ? pi->speed_ext_supported : pi->speed_ext_enabled;
}

int fabric_supported_speed(const struct fabric_portinfo *pi)
{
	return fabric_fastest_speed(pi->speed_supported, ext_supported(pi));
}

int fabric_enabled_speed(const struct fabric_portinfo *pi)
{
	return fabric_fastest_speed(pi->speed_enabled, ext_enabled(pi));
}

int fabric_port_cmp(const void *a, const void *b)
{
	const struct fabric_port *x = a, *y = b;

	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return x->port < y->port ? -1 : x->port > y->port;
}

static struct fabric_port *find_port(struct fabric_port *ports, size_t n, uint64_t guid,
				     unsigned port)
{
	struct fabric_port key = {.guid = guid, .port = port};

	return n ? bsearch(&key, ports, n, sizeof(key), fabric_port_cmp) : NULL;
}

/* The other end of p's link, if its row says p is its other end. */
static const struct fabric_port *peer_of(struct fabric_port *ports, size_t n,
					 const struct fabric_port *p)
{
	const struct fabric_port *q = p->remote_guid ? find_port(ports, n, p->remote_guid,
								p->remote_port) : NULL;

	return q && q->remote_guid == p->guid && q->remote_port == p->port ? q : NULL;
}

const struct fabric_port *fabric_peer(const struct fabric_snapshot *s, const struct fabric_port *p)
{
	return peer_of(s->ports, s->n, p);
}

const struct fabric_port *fabric_find(const struct fabric_snapshot *s, uint64_t guid,
				      unsigned port)
{
	return s ? find_port(s->ports, s->n, guid, port) : NULL;
}

int fabric_reading_cmp(const void *a, const void *b)
{
	const struct fabric_reading *x = a, *y = b;

	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return x->port < y->port ? -1 : x->port > y->port;
}

static const struct fabric_reading *find_reading(const struct fabric_build *in, uint64_t guid,
						 unsigned port)
{
	struct fabric_reading key = {.guid = guid, .port = port};

	return in->n_readings ? bsearch(&key, in->readings, in->n_readings, sizeof(key),
					fabric_reading_cmp)
			      : NULL;
}

/* ---- the names rows point to ---- */

#define NAMES_PER_BLOCK 256

struct fabric_names {
	struct fabric_names *next;
	size_t n;
	char name[NAMES_PER_BLOCK][NODE_NAME_MAX];
};

void fabric_names_free(struct fabric_names *n)
{
	while (n) {
		struct fabric_names *next = n->next;

		free(n);
		n = next;
	}
}

const char *fabric_name_keep(struct fabric_names **names, const char *desc)
{
	struct fabric_names *b = *names;

	if (!desc || !desc[0])
		return "";
	if (!b || b->n == NAMES_PER_BLOCK) {
		if (!(b = malloc(sizeof(*b))))
			return NULL;
		b->next = *names;
		b->n = 0;
		*names = b;
	}
	snprintf(b->name[b->n], sizeof(b->name[0]), "%s", desc);
	return b->name[b->n++];
}

/* The description rows of s give node guid: its discovery's, else a copy
 * of what a row had (old); the last one kept is taken again for the next
 * row of the same node. NULL on out of memory. */
struct name_memo {
	uint64_t guid;
	const char *desc;
};

static const char *desc_of(struct fabric_snapshot *s, uint64_t guid, const char *old,
			   struct name_memo *memo)
{
	const struct topo_node *nd = s->fabric ? topology_node(s->fabric, guid) : NULL;

	if (nd)
		return nd->name;
	if (memo->desc && memo->guid == guid)
		return memo->desc;
	memo->guid = guid;
	return memo->desc = fabric_name_keep(&s->names, old);
}

void fabric_snapshot_free(void *p)
{
	struct fabric_snapshot *s = p;

	if (!s)
		return;
	free(s->ports);
	fabric_names_free(s->names);
	topology_put(s->fabric);
	free(s);
}

/* A row of a discovered node: its last values, the discovery's names and
 * remote end, and this sweep's reading; -1 on out of memory. */
static int discovered_row(struct fabric_snapshot *s, struct fabric_port *row,
			  const struct fabric_build *in, size_t node, unsigned port,
			  struct name_memo *memo)
{
	const struct topology *f = in->fabric;
	const struct topo_node *nd = &f->nodes[node];
	const struct fabric_port *prev = fabric_find(in->prev, nd->guid, port);
	const struct fabric_reading *rd = find_reading(in, nd->guid, port);
	const struct topo_port *ref = topology_port(f, node, port);
	struct sma_portinfo pi;

	if (prev) {
		*row = *prev;
	} else {
		memset(row, 0, sizeof(*row));
		row->remote_desc = "";
	}
	row->guid = nd->guid;
	row->port = port;
	row->node_type = nd->type;
	row->node_desc = nd->name;
	row->gone = false;
	row->events = 0;
	row->read_now = false;
	if (rd && rd->result == MAD_OK && !sma_portinfo_decode(rd->data, sizeof(rd->data), &pi)) {
		fabric_portinfo_of(&row->pi, &pi);
		memcpy(row->pi_raw, rd->data, sizeof(row->pi_raw));
		row->have_info = true;
		row->stale = false;
		row->read_now = true;
	} else if (rd || (!in->partial && !prev)) {
		row->stale = true; /* asked, no answer (or never asked: no LID) */
	}
	/* a switch is read at its LID (port 0); a CA port has its own */
	row->lid = nd->type == 2 ? nd->lid : row->have_info ? row->pi.lid : ref ? ref->lid : 0;
	if (ref && ref->peer_guid) {
		row->remote_guid = ref->peer_guid;
		row->remote_port = ref->peer_port;
	}
	/* the remote end as the discovery names it, else as it was last named */
	if (!row->remote_guid)
		row->remote_desc = "";
	else if (!(row->remote_desc = desc_of(s, row->remote_guid,
					      prev ? prev->remote_desc : "", memo)))
		return -1;
	return 0;
}

static void derive(struct fabric_port *p)
{
	p->up = p->have_info && !p->gone && p->pi.phys_state == SMA_PHYS_LINK_UP;
	p->lanes = p->up ? sma_width_lanes(p->pi.width_active) : 0;
	p->speed = p->up ? fabric_active_speed(&p->pi) : 0;
	p->rate_mbps = p->lanes * sma_lane_data_mbps(p->speed);
}

/* The baseline follows the best a link has run at since it was reset. */
static bool update_baseline(struct fabric_port *p, const struct fabric_port *prev)
{
	bool changed = false;

	if (p->up) {
		if (!p->base_linked) {
			p->base_linked = true;
			changed = true;
		}
		if (p->lanes > p->base_lanes) {
			p->base_lanes = p->lanes;
			changed = true;
		}
		if (p->speed != SPEED_OTHER && p->speed > p->base_speed) {
			p->base_speed = p->speed;
			changed = true;
		}
	}
	if (p->base_linked && (!prev || prev->remote_guid != p->remote_guid ||
			       prev->remote_port != p->remote_port))
		changed = true;
	return changed;
}

/* Up, but narrower or slower than both ends can (supported and enabled)
 * or than the baseline. */
static bool is_degraded(const struct fabric_port *p, const struct fabric_port *peer)
{
	if (!p->up)
		return false;
	if (p->base_linked && (p->lanes < p->base_lanes ||
			       (p->speed != SPEED_OTHER && p->speed < p->base_speed)))
		return true;
	if (peer && peer->have_info && !peer->gone) {
		const struct fabric_portinfo *a = &p->pi, *b = &peer->pi;
		unsigned lanes = fabric_widest_lanes(a->width_supported & a->width_enabled &
						     b->width_supported & b->width_enabled);
		int speed = fabric_fastest_speed(a->speed_supported & a->speed_enabled &
						 b->speed_supported & b->speed_enabled,
						 ext_supported(a) & ext_enabled(a) &
						 ext_supported(b) & ext_enabled(b));

		if (lanes && p->lanes < lanes)
			return true;
		if (speed && speed != SPEED_OTHER && p->speed != SPEED_OTHER && p->speed < speed)
			return true;
	}
	return false;
}

static enum fabric_link_cond condition(const struct fabric_port *p)
{
	if (!p->base_linked)
		return LINK_NONE;
	if (!p->up)
		return LINK_DOWN;
	return p->degraded ? LINK_DEGRADED : LINK_UP;
}

static unsigned events_of(enum fabric_link_cond was, enum fabric_link_cond now)
{
	switch (now) {
	case LINK_DOWN:
		return was == LINK_UP || was == LINK_DEGRADED ? FABRIC_EV_DOWN : 0;
	case LINK_UP:
		return was == LINK_DEGRADED ? FABRIC_EV_RESTORED
		       : was == LINK_NONE || was == LINK_DOWN ? FABRIC_EV_UP : 0;
	case LINK_DEGRADED:
		return was == LINK_UP ? FABRIC_EV_DEGRADED
		       : was == LINK_NONE || was == LINK_DOWN ? FABRIC_EV_UP | FABRIC_EV_DEGRADED
		       : 0;
	default:
		return 0;
	}
}

static bool link_changed(const struct fabric_port *p, const struct fabric_port *prev)
{
	return !prev || prev->have_info != p->have_info || prev->gone != p->gone ||
	       prev->pi.state != p->pi.state || prev->lanes != p->lanes || prev->speed != p->speed;
}

/* A row's index in ibsnmpdFabricPortTable: (node GUID, port). */
static unsigned port_index(const void *data, oid *index)
{
	const struct fabric_port *p = data;

	return mib_index_guid_port(index, p->guid, p->port);
}

/* The health notifications: a port's bit error rate crossing its
 * threshold (each end for what it receives), a link starting to flap (one
 * per link: the other end is marked said). */
static void health_events(struct fabric_port *ports, size_t n, struct fabric_port *const *peer_at,
			  time_t now)
{
	for (size_t i = 0; i < n; i++) {
		struct fabric_port *p = &ports[i], *peer;
		struct fabric_health *h = &p->health;

		if (h->ber_valid && h->ber_high != h->ber_reported) {
			p->events |= h->ber_high ? FABRIC_EV_BER_HIGH : FABRIC_EV_BER_NORMAL;
			h->ber_reported = h->ber_high;
		}
		if (!h->flapping || h->flap_said)
			continue;
		p->events |= FABRIC_EV_FLAPPING;
		h->flap_said = (uint32_t)now;
		if ((peer = peer_at[i]))
			peer->health.flap_said = (uint32_t)now;
	}
}

/* Nodes the discovery reaches that answer nothing: every row unanswered
 * while a neighbour that answers sees its link up (a node cut off shows as
 * its links down instead); silent once it was so in the build before and
 * for FABRIC_SILENT_AFTER_S. */
static void node_silence(struct fabric_port *ports, size_t n, struct fabric_port *const *peer_at,
			 const struct fabric_port *const *prev_at, time_t now)
{
	size_t first = 0;

	for (size_t i = 0; i < n; i++) {
		bool all = true, reached = false, read = false;
		uint32_t since = 0;

		if (i + 1 < n && ports[i + 1].guid == ports[i].guid)
			continue;
		for (size_t k = first; k <= i; k++) {
			const struct fabric_port *q = peer_at[k], *was = prev_at[k];

			/* the other end, if its row says this is its other end */
			if (q && (q->remote_guid != ports[k].guid || q->remote_port != ports[k].port))
				q = NULL;
			all &= !ports[k].gone && ports[k].stale;
			read |= ports[k].have_info;
			reached |= q && !q->stale && !q->gone && q->up;
			if (was && was->node_silent_since)
				since = was->node_silent_since;
		}
		if (!(all && read && reached))
			since = 0;
		else if (!since)
			since = (uint32_t)now;
		for (size_t k = first; k <= i; k++) {
			ports[k].node_silent_since = since;
			ports[k].node_silent = since && now - (time_t)since >= FABRIC_SILENT_AFTER_S;
		}
		first = i + 1;
	}
}

/* Each row's row in the snapshot before and its link's other end, looked
 * up once (a build of 250,000 rows would look them up a million times):
 * both sorted, the first by a walk side by side. */
static int link_rows(struct fabric_port *ports, size_t n, const struct fabric_snapshot *prev,
		     struct fabric_port ***peer_at, const struct fabric_port ***prev_at)
{
	size_t j = 0;

	*peer_at = calloc(n ? n : 1, sizeof(**peer_at));
	*prev_at = calloc(n ? n : 1, sizeof(**prev_at));
	if (!*peer_at || !*prev_at)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct fabric_port *p = &ports[i];

		if (p->remote_guid)
			(*peer_at)[i] = find_port(ports, n, p->remote_guid, p->remote_port);
		while (prev && j < prev->n && fabric_port_cmp(&prev->ports[j], p) < 0)
			j++;
		if (prev && j < prev->n && !fabric_port_cmp(&prev->ports[j], p))
			(*prev_at)[i] = &prev->ports[j];
	}
	return 0;
}

/* A link of the baseline whose node the discovery no longer reaches: its
 * row stays. */
static bool kept_link(const struct fabric_build *in, const struct fabric_port *old)
{
	return old->base_linked && !in->reset_baseline &&
	       !(in->fabric && topology_node(in->fabric, old->guid));
}

struct fabric_snapshot *fabric_build(const struct fabric_build *in)
{
	struct fabric_snapshot *s = calloc(1, sizeof(*s));
	const struct topology *f = in->fabric;
	struct name_memo node_memo = {0}, remote_memo = {0};
	struct fabric_port **peer_at = NULL;
	const struct fabric_port **prev_at = NULL;
	size_t cap = 0, n = 0;
	struct fabric_health_config defaults;
	const struct fabric_health_config *health = in->health;

	if (!s)
		return NULL;
	if (!health) {
		fabric_health_defaults(&defaults);
		health = &defaults;
	}
	s->fabric = f ? topology_get(f) : NULL;
	for (size_t i = 0; f && i < f->n_nodes; i++)
		cap += f->nodes[i].num_ports;
	for (size_t i = 0; in->prev && i < in->prev->n; i++)
		cap += kept_link(in, &in->prev->ports[i]);
	s->ports = calloc(cap ? cap : 1, sizeof(*s->ports));
	if (!s->ports)
		goto oom;
	for (size_t i = 0; f && i < f->n_nodes; i++)
		for (unsigned p = 1; p <= f->nodes[i].num_ports; p++)
			if (discovered_row(s, &s->ports[n++], in, i, p, &remote_memo))
				goto oom;
	for (size_t i = 0; in->prev && i < in->prev->n; i++) {
		const struct fabric_port *old = &in->prev->ports[i];
		struct fabric_port *row = &s->ports[n];

		if (!kept_link(in, old))
			continue;
		*row = *old;
		row->events = 0;
		row->read_now = !old->gone; /* it is gone now */
		row->gone = row->stale = true;
		row->remote_desc = "";
		if (!(row->node_desc = desc_of(s, old->guid, old->node_desc, &node_memo)) ||
		    (old->remote_guid &&
		     !(row->remote_desc = desc_of(s, old->remote_guid, old->remote_desc,
						  &remote_memo))))
			goto oom;
		n++;
	}
	s->n = n;
	/* rows of discovered nodes come in order; the kept ones do not */
	for (size_t i = 1; i < n; i++)
		if (fabric_port_cmp(&s->ports[i - 1], &s->ports[i]) > 0) {
			qsort(s->ports, n, sizeof(*s->ports), fabric_port_cmp);
			break;
		}
	if (link_rows(s->ports, n, in->prev, &peer_at, &prev_at))
		goto oom;
	for (size_t i = 0; i < n; i++) {
		struct fabric_port *p = &s->ports[i];
		const struct fabric_port *prev = prev_at[i];

		derive(p);
		if (in->reset_baseline) {
			p->base_linked = false;
			p->base_lanes = 0;
			p->base_speed = 0;
			s->baseline_changed = true;
		}
		if (update_baseline(p, prev))
			s->baseline_changed = true;
		if (p->read_now && link_changed(p, prev))
			p->last_change = in->now;
		fabric_health_update(p, prev, pm_port_find(in->counters, in->n_counters, p->guid,
							    p->port),
				     health, in->now);
	}
	for (size_t i = 0; i < n; i++) {
		struct fabric_port *p = &s->ports[i];
		const struct fabric_port *prev = prev_at[i];

		p->degraded = is_degraded(p, p->up ? peer_at[i] : NULL);
		p->cond = condition(p);
		if (!prev)
			p->reported = in->prev ? LINK_NONE : p->cond; /* the very first sweep: quiet */
	}
	/* one notification per link: the first of its ends read now */
	for (size_t i = 0; i < n; i++) {
		struct fabric_port *p = &s->ports[i], *peer = peer_at[i];

		/* an end read now that says down while the other, read now too,
		 * says up: a sweep read them apart (the other first), and the
		 * end that says down is the news; the link is down, and said
		 * once (the other end's row goes with it when it is next read
		 * or taken out) */
		if (peer && p->read_now && peer->read_now && p->cond == LINK_DOWN &&
		    (peer->cond == LINK_UP || peer->cond == LINK_DEGRADED) &&
		    peer->reported == peer->cond && p->cond != p->reported) {
			p->events = events_of(p->reported, p->cond);
			p->reported = peer->reported = p->cond;
			peer->read_now = false; /* said: its older word is not news */
			s->baseline_changed = true;
			continue;
		}
		if (!p->read_now || p->cond == p->reported)
			continue;
		p->events = events_of(p->reported, p->cond);
		p->reported = p->cond;
		s->baseline_changed = true; /* the file keeps what was notified */
		/* the other end: said too, unless it was read now and differs
		 * (then it speaks for itself); a row of a node no longer
		 * reached is no reading: it is said too, and says nothing more */
		if (peer && (!peer->read_now || peer->gone || peer->cond == p->cond)) {
			peer->reported = p->cond;
			if (peer->gone)
				peer->read_now = false;
		}
	}
	health_events(s->ports, n, peer_at, in->now);
	node_silence(s->ports, n, peer_at, prev_at, in->now);
	free(peer_at);
	free(prev_at);
	for (size_t i = 0; i < n; i++) {
		const struct fabric_port *p = &s->ports[i];

		s->baseline_links += p->base_linked;
		s->links_lost += p->base_linked && !p->up;
		s->degraded += p->degraded;
	}
	s->rows = (struct mib_rows){.count = n, .array = s->ports, .stride = sizeof(*s->ports),
				    .index_of = port_index};
	return s;
oom:
	free(peer_at);
	free(prev_at);
	fabric_snapshot_free(s);
	return NULL;
}
