/* Collects the SMA attributes of one node, reached by a path (directed route
 * or LID), into one cache snapshot per SMA-MIB group.
 *
 * Every refresh plans its SMPs from the snapshots it depends on (NodeInfo
 * gives the node type and port count, SwitchInfo the forwarding table tops,
 * PortInfo the capabilities), sends them as one batch and builds a whole new
 * snapshot from the answers. What a node does not support is served empty;
 * what got lost keeps the previous snapshot. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/mad_engine.h"
#include "ibsnmpd/netsnmp.h"
#include "ibsnmpd/smp_batch.h"
#include "ibsnmpd/sma.h"

#define IB_ATTR_RANDOM_FT 0x1a   /* not in libibmad's list */
#define IB_ATTR_VENDOR_DIAG 0x30
#define IB_ATTR_LED_INFO 0x31
#define NODE_TYPE_SWITCH 2
#define CAPMASK_IS_SL_MAPPING_SUPPORTED (1u << 6)

static struct sma_collector *node_of(struct cache_group *g)
{
	return g->owner;
}

static const struct sma_nodeinfo *node_info(const struct sma_collector *n)
{
	return cache_snapshot(&n->group[SMA_NODE_INFO]);
}

static bool is_switch(const struct sma_collector *n)
{
	const struct sma_nodeinfo *ni = node_info(n);

	return ni && ni->node_type == NODE_TYPE_SWITCH;
}

static const struct sma_switchinfo *switch_info(const struct sma_collector *n)
{
	const struct sma_switch_snapshot *s = cache_snapshot(&n->group[SMA_SWITCH_INFO]);

	return s && s->present ? &s->si : NULL;
}

static const struct sma_port_snapshot *port_info(const struct sma_collector *n)
{
	return cache_snapshot(&n->group[SMA_PORT_INFO]);
}

static const struct sma_portinfo *port_of(const struct sma_port_snapshot *ps, unsigned num)
{
	for (size_t i = 0; ps && i < ps->count; i++)
		if (ps->ports[i].num == num)
			return &ps->ports[i].pi;
	return NULL;
}

/* The port an SMP sent to a CA over this path is about: its local port. */
static unsigned local_port(const struct sma_collector *n)
{
	const struct sma_nodeinfo *ni = node_info(n);

	return ni ? ni->local_port : 0;
}

/* Ends a table refresh: publish, publish empty (unsupported) or keep. */
static void finish(struct smp_batch *b, void *fresh, void (*free_fn)(void *))
{
	char why[160];

	switch (smp_batch_outcome(b, why, sizeof(why))) {
	case SMP_BATCH_OK:
		cache_refresh_done(b->group, fresh, NULL);
		break;
	case SMP_BATCH_UNSUPPORTED: {
		char note[200];

		snprintf(note, sizeof(note), "%s; serving what the node answered", why);
		cache_refresh_done(b->group, fresh, note);
		break;
	}
	case SMP_BATCH_LOST:
		free_fn(fresh);
		cache_refresh_done(b->group, NULL, why);
		break;
	}
	free(b);
}

static void fail_refresh(struct cache_group *g, const char *why)
{
	cache_refresh_done(g, NULL, why);
}

/* ---- generic table snapshots --------------------------------------------- */

static void table_snapshot_free(void *p)
{
	struct sma_table_snapshot *t = p;

	if (!t)
		return;
	for (int i = 0; i < 2; i++) {
		free(t->table[i].rows);
		free(t->entries[i]);
	}
	free(t);
}

/* Allocates table i of t for up to n entries of size sz. */
static int table_alloc(struct sma_table_snapshot *t, int i, size_t n, size_t sz)
{
	t->entries[i] = calloc(n ? n : 1, sz);
	t->table[i].rows = calloc(n ? n : 1, sizeof(struct mib_row));
	t->table[i].count = 0;
	return t->entries[i] && t->table[i].rows ? 0 : -1;
}

static void table_add(struct sma_table_snapshot *t, int i, const void *entry, unsigned nidx,
		      unsigned a, unsigned b, unsigned c)
{
	struct mib_row *r = &t->table[i].rows[t->table[i].count++];

	r->index[0] = a;
	r->index[1] = b;
	r->index[2] = c;
	r->index_len = nidx;
	r->data = entry;
}

static struct sma_table_snapshot *table_snapshot_new(void)
{
	return calloc(1, sizeof(struct sma_table_snapshot));
}

/* A builder's table snapshot with room for n entries of size sz (and n1 of
 * sz1 in the second table, if n1); on failure the refresh ends here and the
 * batch is freed. */
static struct sma_table_snapshot *begin_table(struct smp_batch *b, size_t n, size_t sz,
					      size_t n1, size_t sz1)
{
	struct sma_table_snapshot *t = table_snapshot_new();

	if (!t || table_alloc(t, 0, n, sz) || (n1 && table_alloc(t, 1, n1, sz1))) {
		table_snapshot_free(t);
		cache_refresh_done(b->group, NULL, "out of memory");
		free(b);
		return NULL;
	}
	return t;
}

/* Runs a batch whose plan turned out empty: publishes an empty table. */
static void publish_empty(struct cache_group *g, const char *note)
{
	struct sma_table_snapshot *t = table_snapshot_new();

	cache_refresh_done(g, t, t ? note : "out of memory");
}

/* ---- Node Info --------------------------------------------------------- */

static void build_node_info(struct smp_batch *b)
{
	struct sma_nodeinfo *ni = calloc(1, sizeof(*ni));
	char why[160];

	if (!ni) {
		cache_refresh_done(b->group, NULL, "out of memory");
	} else if (b->items[1].result != MAD_OK || b->items[0].result != MAD_OK ||
		   sma_nodeinfo_decode(b->items[1].data, IB_SMP_DATA_SIZE, ni) ||
		   sma_nodedesc_decode(b->items[0].data, IB_SMP_DATA_SIZE, ni->description,
				       sizeof(ni->description))) {
		free(ni);
		smp_batch_outcome(b, why, sizeof(why));
		cache_refresh_done(b->group, NULL, why);
	} else {
		cache_refresh_done(b->group, ni, NULL);
	}
	free(b);
}

static void refresh_node_info(struct cache_group *g)
{
	struct smp_batch *b = smp_batch_new(g, 2, build_node_info);

	if (!b)
		return fail_refresh(g, "out of memory");
	b->items[0].attr_id = IB_ATTR_NODE_DESC;
	b->items[1].attr_id = IB_ATTR_NODE_INFO;
	smp_batch_run(b, &node_of(g)->path);
}

/* ---- Switch Info ------------------------------------------------------- */

static void build_switch_info(struct smp_batch *b)
{
	struct sma_switch_snapshot *s = calloc(1, sizeof(*s));

	if (s) {
		s->present = b->items[0].result == MAD_OK &&
			     !sma_switchinfo_decode(b->items[0].data, IB_SMP_DATA_SIZE, &s->si);
	}
	finish(b, s, free);
}

static void refresh_switch_info(struct cache_group *g)
{
	struct sma_collector *n = node_of(g);
	struct smp_batch *b;

	if (!node_info(n))
		return fail_refresh(g, "NodeInfo not read yet");
	if (!is_switch(n)) {
		struct sma_switch_snapshot *s = calloc(1, sizeof(*s)); /* absent */

		return cache_refresh_done(g, s, s ? NULL : "out of memory");
	}
	b = smp_batch_new(g, 1, build_switch_info);
	if (!b)
		return fail_refresh(g, "out of memory");
	b->items[0].attr_id = IB_ATTR_SWITCH_INFO;
	smp_batch_run(b, &n->path);
}

/* ---- Port Info --------------------------------------------------------- */

static void port_snapshot_free(void *p)
{
	struct sma_port_snapshot *s = p;

	if (!s)
		return;
	free(s->ports);
	free(s->data_ports.rows);
	free(s->all_ports.rows);
	free(s);
}

static bool port_known(const struct sma_collector *n, unsigned port, struct sma_portinfo *pi)
{
	return n->port_known && n->port_known(n->port_known_arg, port, pi);
}

/* The batch holds the ports read here, in port order; the others of the
 * node's range are taken where port_known() has them (one it no longer has
 * by now is missing until the next refresh). */
static void build_port_info(struct smp_batch *b)
{
	struct sma_port_snapshot *s = calloc(1, sizeof(*s));
	struct sma_collector *n = (struct sma_collector *)b->arg;
	const struct sma_nodeinfo *ni = node_info(n);
	unsigned first = is_switch(n) ? 0 : 1, last = ni ? ni->num_ports : 0;
	size_t cap = b->count + (last >= first ? last - first + 1 : 0), next = 0;

	if (!s || !(s->ports = calloc(cap, sizeof(*s->ports))) ||
	    !(s->data_ports.rows = calloc(cap, sizeof(struct mib_row))) ||
	    !(s->all_ports.rows = calloc(cap, sizeof(struct mib_row)))) {
		port_snapshot_free(s);
		cache_refresh_done(b->group, NULL, "out of memory");
		free(b);
		return;
	}
	s->mgmt_port = is_switch(n) ? 0 : local_port(n);
	for (unsigned p = 0; p < 256; p++) { /* port numbers are 8 bits */
		struct sma_port_entry *e = &s->ports[s->count];

		if (next < b->count && b->items[next].attr_mod == p) {
			const struct smp_item *it = &b->items[next++];

			if (it->result != MAD_OK ||
			    sma_portinfo_decode(it->data, IB_SMP_DATA_SIZE, &e->pi))
				continue;
		} else if (p < first || p > last || !port_known(n, p, &e->pi)) {
			continue;
		}
		e->num = p;
		s->count++;
	}
	for (size_t i = 0; i < s->count; i++) {
		struct sma_port_entry *e = &s->ports[i];

		struct mib_row *all = &s->all_ports.rows[s->all_ports.count++];

		all->index[0] = e->num;
		all->index_len = 1;
		all->data = e;
		if (e->num == s->mgmt_port)
			s->mgmt = e;
		if (e->num >= 1) {
			struct mib_row *r = &s->data_ports.rows[s->data_ports.count++];

			r->index[0] = e->num;
			r->index_len = 1;
			r->data = e;
		}
	}
	finish(b, s, port_snapshot_free);
}

static const char *link_state_name(unsigned state)
{
	static const char *const names[] = {"Down", "Init", "Armed", "Active", "ActDefer"};

	return state >= 1 && state <= 5 ? names[state - 1] : "unknown";
}

/* After the local node's PortInfo snapshot is published: its link leaving
 * or reaching Active is said once (the fabric beyond it cannot be read
 * meanwhile). */
static void local_link_published(struct cache_group *g, const void *before, const void *after,
				 void *arg)
{
	const struct sma_port_snapshot *old = before, *now = after;
	const unsigned active = 4;

	(void)g;
	(void)arg;
	if (!old || !old->mgmt || !now->mgmt)
		return;
	if (old->mgmt->pi.state == active && now->mgmt->pi.state != active)
		snmp_log(LOG_WARNING, "the local port's link is %s (was Active): nothing beyond it "
			 "can be read until it is back\n", link_state_name(now->mgmt->pi.state));
	else if (old->mgmt->pi.state != active && now->mgmt->pi.state == active)
		snmp_log(LOG_NOTICE, "the local port's link is Active again\n");
}

bool sma_sm_moved(const void *before, const void *after, unsigned *from, unsigned *to)
{
	const struct sma_port_snapshot *old = before, *now = after;

	if (!old || !old->mgmt || !now || !now->mgmt || old->mgmt->pi.sm_lid == now->mgmt->pi.sm_lid)
		return false;
	*from = old->mgmt->pi.sm_lid;
	*to = now->mgmt->pi.sm_lid;
	return true;
}

static void refresh_port_info(struct cache_group *g)
{
	struct sma_collector *n = node_of(g);
	const struct sma_nodeinfo *ni = node_info(n);
	unsigned first, last, known = 0;
	bool elsewhere[256] = {false}; /* NumPorts is 8 bits */
	struct sma_portinfo scratch;
	struct smp_batch *b;
	size_t i = 0;

	if (!ni)
		return fail_refresh(g, "NodeInfo not read yet");
	first = is_switch(n) ? 0 : 1;
	last = ni->num_ports;
	for (unsigned p = first; p <= last && p < 256; p++)
		known += elsewhere[p] = port_known(n, p, &scratch);
	if (n->port_known) /* a node's context (node_contexts.c): its debug token */
		DEBUGMSGTL(("ibsnmpd:nodes", "%s: PortInfo of %u ports, %u of them read "
			    "elsewhere\n", g->name, last - first + 1, known));
	b = smp_batch_new(g, last - first + 1 - known, build_port_info);
	if (!b)
		return fail_refresh(g, "out of memory");
	b->arg = n;
	for (unsigned p = first; p <= last; p++) {
		if (p < 256 && elsewhere[p])
			continue;
		b->items[i].attr_id = IB_ATTR_PORT_INFO;
		b->items[i++].attr_mod = p;
	}
	smp_batch_run(b, &n->path);
}

/* ---- GUID Info: the GUIDs of the port the SMPs arrive at --------------- */

static void build_guid_info(struct smp_batch *b)
{
	struct sma_table_snapshot *t;
	const struct sma_collector *n = b->arg;
	unsigned port = is_switch(n) ? 0 : local_port(n);
	const struct sma_port_snapshot *ps = port_info(n);
	const struct sma_portinfo *pi = port_of(ps, port);
	unsigned cap = pi ? pi->guid_cap : 0;

	t = begin_table(b, b->count * 8, sizeof(struct sma_guid_entry), 0, 0);
	if (!t)
		return;
	for (size_t i = 0; i < b->count; i++) {
		uint64_t guids[8];

		if (b->items[i].result != MAD_OK ||
		    sma_guidinfo_decode(b->items[i].data, IB_SMP_DATA_SIZE, guids))
			continue;
		for (unsigned k = 0; k < 8; k++) {
			unsigned index = b->items[i].attr_mod * 8 + k;
			struct sma_guid_entry *e = (struct sma_guid_entry *)t->entries[0] +
						   t->table[0].count;

			if (index >= cap || guids[k] == 0) /* unassigned GUID slots */
				continue;
			e->port = port;
			e->index = index;
			e->guid = guids[k];
			table_add(t, 0, e, 2, port, index, 0);
		}
	}
	finish(b, t, table_snapshot_free);
}

static void refresh_guid_info(struct cache_group *g)
{
	struct sma_collector *n = node_of(g);
	const struct sma_portinfo *pi;
	unsigned blocks;
	struct smp_batch *b;

	if (!node_info(n) || !port_info(n))
		return fail_refresh(g, "PortInfo not read yet");
	pi = port_of(port_info(n), is_switch(n) ? 0 : local_port(n));
	blocks = pi ? (pi->guid_cap + 7) / 8 : 0;
	if (!blocks)
		return publish_empty(g, NULL);
	b = smp_batch_new(g, blocks, build_guid_info);
	if (!b)
		return fail_refresh(g, "out of memory");
	b->arg = n;
	for (unsigned i = 0; i < blocks; i++) {
		b->items[i].attr_id = IB_ATTR_GUID_INFO;
		b->items[i].attr_mod = i;
	}
	smp_batch_run(b, &n->path);
}

/* ---- P_Key tables -------------------------------------------------------- */

static void build_pkey(struct smp_batch *b)
{
	struct sma_table_snapshot *t;

	t = begin_table(b, b->count * 32, sizeof(struct sma_pkey_entry), 0, 0);
	if (!t)
		return;
	for (size_t i = 0; i < b->count; i++) {
		const struct smp_item *it = &b->items[i];
		uint16_t pk[32];

		if (it->result != MAD_OK || sma_pkey_block_decode(it->data, IB_SMP_DATA_SIZE, pk))
			continue;
		for (unsigned k = 0; k < 32; k++) {
			unsigned index = it->key[1] * 32 + k;
			struct sma_pkey_entry *e = (struct sma_pkey_entry *)t->entries[0] +
						   t->table[0].count;

			/* key[2]: entries of this port; empty slots (base 0) are omitted */
			if (index >= it->key[2] || (pk[k] & 0x7fff) == 0)
				continue;
			e->port = it->key[0];
			e->index = index;
			e->pkey = pk[k];
			table_add(t, 0, e, 2, e->port, e->index, 0);
		}
	}
	mib_rows_sort(&t->table[0]);
	finish(b, t, table_snapshot_free);
}

static void refresh_pkey(struct cache_group *g)
{
	struct sma_collector *n = node_of(g);
	const struct sma_nodeinfo *ni = node_info(n);
	const struct sma_switchinfo *si = switch_info(n);
	bool sw = is_switch(n);
	size_t count = 0, k = 0;
	struct smp_batch *b;

	if (!ni || (sw && !si))
		return fail_refresh(g, "NodeInfo/SwitchInfo not read yet");
	/* switch: port 0 holds PartitionCap entries, external ports
	 * PartitionEnforcementCap; CA: its local port, PartitionCap */
	unsigned first = sw ? 0 : local_port(n), last = sw ? ni->num_ports : local_port(n);

	for (unsigned p = first; p <= last; p++) {
		unsigned cap = sw && p > 0 ? si->partition_enf_cap : ni->partition_cap;

		count += (cap + 31) / 32;
	}
	if (!count)
		return publish_empty(g, NULL);
	b = smp_batch_new(g, count, build_pkey);
	if (!b)
		return fail_refresh(g, "out of memory");
	for (unsigned p = first; p <= last; p++) {
		unsigned cap = sw && p > 0 ? si->partition_enf_cap : ni->partition_cap;

		for (unsigned blk = 0; blk < (cap + 31) / 32; blk++, k++) {
			b->items[k].attr_id = IB_ATTR_PKEY_TBL;
			b->items[k].attr_mod = (sw ? p << 16 : 0) | blk;
			b->items[k].key[0] = p;
			b->items[k].key[1] = blk;
			b->items[k].key[2] = cap;
		}
	}
	smp_batch_run(b, &n->path);
}

/* ---- SL to VL mapping ---------------------------------------------------- */

static void build_sl2vl(struct smp_batch *b)
{
	struct sma_table_snapshot *t;

	t = begin_table(b, b->count * 16, sizeof(struct sma_sl2vl_entry), 0, 0);
	if (!t)
		return;
	for (size_t i = 0; i < b->count; i++) {
		const struct smp_item *it = &b->items[i];
		uint8_t vl[16];

		if (it->result != MAD_OK || sma_sl2vl_decode(it->data, IB_SMP_DATA_SIZE, vl))
			continue;
		for (unsigned sl = 0; sl < 16; sl++) {
			struct sma_sl2vl_entry *e = (struct sma_sl2vl_entry *)t->entries[0] +
						    t->table[0].count;

			e->out_port = it->key[0];
			e->in_port = it->key[1];
			e->sl = sl;
			e->vl = vl[sl];
			table_add(t, 0, e, 3, e->out_port, e->in_port, sl);
		}
	}
	mib_rows_sort(&t->table[0]);
	finish(b, t, table_snapshot_free);
}

static void refresh_sl2vl(struct cache_group *g)
{
	struct sma_collector *n = node_of(g);
	const struct sma_nodeinfo *ni = node_info(n);
	const struct sma_port_snapshot *ps = port_info(n);
	struct smp_batch *b;
	size_t k = 0;

	if (!ni || !ps || !ps->mgmt)
		return fail_refresh(g, "PortInfo not read yet");
	if (!(ps->mgmt->pi.cap_mask & CAPMASK_IS_SL_MAPPING_SUPPORTED) && !is_switch(n))
		return publish_empty(g, "the port does not support SL to VL mapping");
	if (!is_switch(n)) {
		b = smp_batch_new(g, 1, build_sl2vl);
		if (!b)
			return fail_refresh(g, "out of memory");
		b->items[0].attr_id = IB_ATTR_SLVL_TABLE;
		b->items[0].key[0] = b->items[0].key[1] = local_port(n);
		return smp_batch_run(b, &n->path);
	}
	/* switch: every (input port, output port) pair, port 0 included */
	unsigned np = ni->num_ports + 1;

	b = smp_batch_new(g, (size_t)np * np, build_sl2vl);
	if (!b)
		return fail_refresh(g, "out of memory");
	for (unsigned in = 0; in < np; in++) {
		for (unsigned out = 0; out < np; out++, k++) {
			b->items[k].attr_id = IB_ATTR_SLVL_TABLE;
			b->items[k].attr_mod = in << 8 | out;
			b->items[k].key[0] = out;
			b->items[k].key[1] = in;
		}
	}
	smp_batch_run(b, &n->path);
}

/* ---- VL arbitration: table 0 high priority, table 1 low priority ------- */

static void build_vlarb(struct smp_batch *b)
{
	struct sma_table_snapshot *t;

	t = begin_table(b, b->count * 32, sizeof(struct sma_vlarb_entry), b->count * 32, sizeof(struct sma_vlarb_entry));
	if (!t)
		return;
	for (size_t i = 0; i < b->count; i++) {
		const struct smp_item *it = &b->items[i];
		unsigned block = it->key[1]; /* 1,2 low; 3,4 high */
		int tab = block >= 3 ? 0 : 1;
		uint8_t vl[32], w[32];

		if (it->result != MAD_OK ||
		    sma_vlarb_block_decode(it->data, IB_SMP_DATA_SIZE, vl, w))
			continue;
		for (unsigned k = 0; k < 32; k++) {
			unsigned num = (block == 2 || block == 4 ? 32 : 0) + k;
			struct sma_vlarb_entry *e = (struct sma_vlarb_entry *)t->entries[tab] +
						    t->table[tab].count;

			if (num >= it->key[2]) /* key[2]: the port's cap */
				break;
			e->port = it->key[0];
			e->n = num;
			e->vl = vl[k];
			e->weight = w[k];
			table_add(t, tab, e, 2, e->port, num, 0);
		}
	}
	mib_rows_sort(&t->table[0]);
	mib_rows_sort(&t->table[1]);
	finish(b, t, table_snapshot_free);
}

static void refresh_vlarb(struct cache_group *g)
{
	struct sma_collector *n = node_of(g);
	const struct sma_port_snapshot *ps = port_info(n);
	bool sw = is_switch(n);
	size_t count = 0, k = 0;
	struct smp_batch *b;

	if (!node_info(n) || !ps)
		return fail_refresh(g, "PortInfo not read yet");
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < ps->count; i++) {
			const struct sma_port_entry *e = &ps->ports[i];
			unsigned low = e->pi.vlarb_low_cap, high = e->pi.vlarb_high_cap;

			if (e->num == 0 || (!sw && e->num != local_port(n)))
				continue;
			for (unsigned blk = 1; blk <= 4; blk++) {
				unsigned cap = blk <= 2 ? low : high;
				unsigned start = blk == 2 || blk == 4 ? 32 : 0;

				if (cap <= start)
					continue;
				if (pass == 1) {
					b->items[k].attr_id = IB_ATTR_VL_ARBITRATION;
					/* block in bits 31-16, port in 15-0 */
					b->items[k].attr_mod = blk << 16 | e->num;
					b->items[k].key[0] = e->num;
					b->items[k].key[1] = blk;
					b->items[k].key[2] = cap;
				}
				k++;
			}
		}
		if (pass == 0) {
			count = k;
			k = 0;
			if (!count)
				return publish_empty(g, NULL);
			b = smp_batch_new(g, count, build_vlarb);
			if (!b)
				return fail_refresh(g, "out of memory");
		}
	}
	smp_batch_run(b, &n->path);
}

/* ---- Linear forwarding: blocks of 64 LIDs up to LinearFDBTop ------------ */

static void build_lft(struct smp_batch *b)
{
	struct sma_table_snapshot *t;
	unsigned top = b->items[0].key[2];

	t = begin_table(b, b->count * 64, sizeof(struct sma_lft_entry), 0, 0);
	if (!t)
		return;
	for (size_t i = 0; i < b->count; i++) {
		uint8_t port[64];

		if (b->items[i].result != MAD_OK ||
		    sma_lft_block_decode(b->items[i].data, IB_SMP_DATA_SIZE, port))
			continue;
		for (unsigned k = 0; k < 64; k++) {
			unsigned lid = b->items[i].attr_mod * 64 + k;
			struct sma_lft_entry *e = (struct sma_lft_entry *)t->entries[0] +
						  t->table[0].count;

			if (lid == 0 || lid > top)
				continue;
			e->lid = lid;
			e->port = port[k];
			table_add(t, 0, e, 1, lid, 0, 0);
		}
	}
	finish(b, t, table_snapshot_free); /* built in LID order: already sorted */
}

static void refresh_lft(struct cache_group *g)
{
	struct sma_collector *n = node_of(g);
	const struct sma_switchinfo *si = switch_info(n);
	struct smp_batch *b;
	unsigned blocks;

	if (!node_info(n))
		return fail_refresh(g, "NodeInfo not read yet");
	if (!is_switch(n))
		return publish_empty(g, NULL);
	if (!si)
		return fail_refresh(g, "SwitchInfo not read yet");
	if (si->lft_cap == 0 || si->lft_top == 0)
		return publish_empty(g, NULL);
	blocks = si->lft_top / 64 + 1;
	b = smp_batch_new(g, blocks, build_lft);
	if (!b)
		return fail_refresh(g, "out of memory");
	for (unsigned i = 0; i < blocks; i++) {
		b->items[i].attr_id = IB_ATTR_LINEARFORWTBL;
		b->items[i].attr_mod = i;
		b->items[i].key[2] = si->lft_top;
	}
	smp_batch_run(b, &n->path);
}

/* ---- Multicast forwarding: 32 MLIDs x 16 ports per block ---------------- */

static void build_mft(struct smp_batch *b)
{
	struct sma_table_snapshot *t;
	unsigned nblocks = b->items[0].key[2];

	t = begin_table(b, (size_t)nblocks * 32, sizeof(struct sma_mft_entry), 0, 0);
	if (!t)
		return;
	struct sma_mft_entry *all = t->entries[0];

	for (size_t i = 0; i < b->count; i++) {
		const struct smp_item *it = &b->items[i];
		unsigned block = it->key[0], position = it->key[1];
		uint16_t mask[32];

		if (it->result != MAD_OK || sma_mft_block_decode(it->data, IB_SMP_DATA_SIZE, mask))
			continue;
		for (unsigned k = 0; k < 32; k++) {
			struct sma_mft_entry *e = &all[block * 32 + k];

			e->mlid = 0xc000 + block * 32 + k;
			for (unsigned bit = 0; bit < 16; bit++) {
				unsigned p = position * 16 + bit;

				if (mask[k] & (1u << bit))
					e->ports[p / 8] |= (uint8_t)(0x80 >> (p % 8));
			}
		}
	}
	for (size_t i = 0; i < (size_t)nblocks * 32; i++) {
		static const uint8_t none[32];

		if (all[i].mlid && memcmp(all[i].ports, none, sizeof(none)))
			table_add(t, 0, &all[i], 1, all[i].mlid, 0, 0);
	}
	finish(b, t, table_snapshot_free);
}

static void refresh_mft(struct cache_group *g)
{
	struct sma_collector *n = node_of(g);
	const struct sma_nodeinfo *ni = node_info(n);
	const struct sma_switchinfo *si = switch_info(n);
	unsigned entries, blocks, positions;
	struct smp_batch *b;
	size_t k = 0;

	if (!ni)
		return fail_refresh(g, "NodeInfo not read yet");
	if (!is_switch(n))
		return publish_empty(g, NULL);
	if (!si)
		return fail_refresh(g, "SwitchInfo not read yet");
	/* MulticastFDBTop bounds the table when the SM set it; else the cap */
	entries = si->mft_top >= 0xc000 ? si->mft_top - 0xc000 + 1 : si->mft_cap;
	if (entries > si->mft_cap)
		entries = si->mft_cap;
	blocks = (entries + 31) / 32;
	positions = ni->num_ports / 16 + 1;
	if (!blocks)
		return publish_empty(g, NULL);
	b = smp_batch_new(g, (size_t)blocks * positions, build_mft);
	if (!b)
		return fail_refresh(g, "out of memory");
	for (unsigned blk = 0; blk < blocks; blk++) {
		for (unsigned pos = 0; pos < positions; pos++, k++) {
			b->items[k].attr_id = IB_ATTR_MULTICASTFORWTBL;
			b->items[k].attr_mod = pos << 28 | blk;
			b->items[k].key[0] = blk;
			b->items[k].key[1] = pos;
			b->items[k].key[2] = blocks;
		}
	}
	smp_batch_run(b, &n->path);
}

/* ---- Random forwarding: 16 entries per block, up to RandomFDBCap -------- */

static void build_rft(struct smp_batch *b)
{
	struct sma_table_snapshot *t;
	unsigned cap = b->items[0].key[2];

	t = begin_table(b, b->count * 16, sizeof(struct sma_rft_row), 0, 0);
	if (!t)
		return;
	for (size_t i = 0; i < b->count; i++) {
		struct sma_rft_entry e16[16];

		if (b->items[i].result != MAD_OK ||
		    sma_rft_block_decode(b->items[i].data, IB_SMP_DATA_SIZE, e16))
			continue;
		for (unsigned k = 0; k < 16; k++) {
			unsigned index = b->items[i].attr_mod * 16 + k + 1;
			struct sma_rft_row *r = (struct sma_rft_row *)t->entries[0] +
						t->table[0].count;

			if (index > cap || !e16[k].valid)
				continue;
			r->index = index;
			r->e = e16[k];
			table_add(t, 0, r, 1, index, 0, 0);
		}
	}
	finish(b, t, table_snapshot_free);
}

static void refresh_rft(struct cache_group *g)
{
	struct sma_collector *n = node_of(g);
	const struct sma_switchinfo *si = switch_info(n);
	struct smp_batch *b;
	unsigned blocks;

	if (!node_info(n))
		return fail_refresh(g, "NodeInfo not read yet");
	if (!is_switch(n) || (si && si->rft_cap == 0))
		return publish_empty(g, NULL);
	if (!si)
		return fail_refresh(g, "SwitchInfo not read yet");
	blocks = (si->rft_cap + 15) / 16;
	b = smp_batch_new(g, blocks, build_rft);
	if (!b)
		return fail_refresh(g, "out of memory");
	for (unsigned i = 0; i < blocks; i++) {
		b->items[i].attr_id = IB_ATTR_RANDOM_FT;
		b->items[i].attr_mod = i;
		b->items[i].key[2] = si->rft_cap;
	}
	smp_batch_run(b, &n->path);
}

/* ---- One SMP per port: SMInfo, VendorDiag, LedInfo ----------------------- */

/* The ports a per-port attribute is read for: the management port (where
 * SMInfo lives), or every port of a switch / the local port of a CA. */
static size_t plan_ports(const struct sma_collector *n, bool mgmt_only, unsigned *ports, size_t max)
{
	const struct sma_nodeinfo *ni = node_info(n);
	size_t k = 0;

	if (!ni)
		return 0;
	if (mgmt_only || !is_switch(n)) {
		ports[k++] = is_switch(n) ? 0 : local_port(n);
		return k;
	}
	for (unsigned p = 0; p <= ni->num_ports && k < max; p++)
		ports[k++] = p;
	return k;
}

/* Entries of the per-port tables start with the port: struct
 * sma_sminfo_entry, sma_vdiag_entry, sma_led_entry. */
struct per_port_attr {
	unsigned attr_id;
	bool mgmt_only;         /* only the management port (SMInfo) */
	bool port_in_modifier;  /* a switch's port in bits 31-16 */
	size_t entry_size, payload_offset;
	int (*decode)(const uint8_t *data, size_t len, void *payload);
	/* also the port's PortInfo, in the same batch: its DiagCode goes to
	 * this offset of the entry (0: not read) */
	size_t diag_code_offset;
};

static int decode_sminfo(const uint8_t *data, size_t len, void *payload)
{
	return sma_sminfo_decode(data, len, payload);
}

static int decode_vdiag(const uint8_t *data, size_t len, void *payload)
{
	return sma_vendordiag_decode(data, len, payload);
}

static int decode_led(const uint8_t *data, size_t len, void *payload)
{
	return sma_ledinfo_decode(data, len, payload);
}

static const struct per_port_attr per_port_attrs[] = {
	[SMA_SM_INFO] = {IB_ATTR_SMINFO, true, false, sizeof(struct sma_sminfo_entry),
			   offsetof(struct sma_sminfo_entry, sm), decode_sminfo, 0},
	[SMA_VENDOR_DIAG] = {IB_ATTR_VENDOR_DIAG, false, true, sizeof(struct sma_vdiag_entry),
			       offsetof(struct sma_vdiag_entry, d), decode_vdiag,
			       offsetof(struct sma_vdiag_entry, diag_code)},
	[SMA_LED_INFO] = {IB_ATTR_LED_INFO, false, true, sizeof(struct sma_led_entry),
			    offsetof(struct sma_led_entry, on), decode_led, 0},
};

/* Items: the attribute of each port, followed by its PortInfo when the
 * attribute wants the DiagCode. */
static void build_per_port(struct smp_batch *b)
{
	const struct per_port_attr *a = b->arg;
	size_t step = a->diag_code_offset ? 2 : 1;
	struct sma_table_snapshot *t = begin_table(b, b->count / step, a->entry_size, 0, 0);

	if (!t)
		return;
	for (size_t i = 0; i < b->count; i += step) {
		uint8_t *entry = (uint8_t *)t->entries[0] + t->table[0].count * a->entry_size;
		struct sma_portinfo pi;

		if (b->items[i].result != MAD_OK ||
		    a->decode(b->items[i].data, IB_SMP_DATA_SIZE, entry + a->payload_offset))
			continue;
		if (a->diag_code_offset) {
			if (b->items[i + 1].result != MAD_OK ||
			    sma_portinfo_decode(b->items[i + 1].data, IB_SMP_DATA_SIZE, &pi))
				continue;
			memcpy(entry + a->diag_code_offset, &pi.diag_code, sizeof(unsigned));
		}
		*(unsigned *)entry = b->items[i].key[0];
		table_add(t, 0, entry, 1, b->items[i].key[0], 0, 0);
	}
	finish(b, t, table_snapshot_free);
}

static void refresh_per_port(struct cache_group *g)
{
	const struct per_port_attr *a = &per_port_attrs[g - node_of(g)->group];
	struct sma_collector *n = node_of(g);
	unsigned ports[256];
	size_t np = plan_ports(n, a->mgmt_only, ports, 256);
	size_t step = a->diag_code_offset ? 2 : 1;
	struct smp_batch *b;

	if (!np)
		return fail_refresh(g, "NodeInfo not read yet");
	b = smp_batch_new(g, np * step, build_per_port);
	if (!b)
		return fail_refresh(g, "out of memory");
	b->arg = a;
	for (size_t i = 0; i < np; i++) {
		struct smp_item *it = &b->items[i * step];

		it->attr_id = a->attr_id;
		it->attr_mod = a->port_in_modifier && is_switch(n) ? ports[i] << 16 : 0;
		it->key[0] = ports[i];
		if (step == 2) {
			it[1].attr_id = IB_ATTR_PORT_INFO;
			it[1].attr_mod = ports[i];
			it[1].key[0] = ports[i];
		}
	}
	smp_batch_run(b, &n->path);
}

/* ---- the node -------------------------------------------------------------- */

#define DECL(g, nm, lifetime) \
	[g] = {g + 1, nm, lifetime, offsetof(struct sma_collector, group) + \
					    (g) * sizeof(struct cache_group)}

/* Defaults: what changes often (port state, SM state) is read more often. */
const struct cache_decl sma_cache_decls[SMA_GROUPS] = {
	DECL(SMA_NODE_INFO, "nodeInfo", 60),
	DECL(SMA_SWITCH_INFO, "switchInfo", 60),
	DECL(SMA_PORT_INFO, "portInfo", 15),
	DECL(SMA_GUID_INFO, "guidInfo", 300),
	DECL(SMA_PKEY, "pKeyTable", 60),
	DECL(SMA_SL2VL, "slToVlTable", 300),
	DECL(SMA_VLARB, "vlArbTable", 300),
	DECL(SMA_LFT, "linearForwarding", 60),
	DECL(SMA_MFT, "multicastForwarding", 60),
	DECL(SMA_RFT, "randomForwarding", 300),
	DECL(SMA_SM_INFO, "smInfo", 30),
	DECL(SMA_VENDOR_DIAG, "vendorDiag", 300),
	DECL(SMA_LED_INFO, "ledInfo", 300),
};

static const struct {
	const char *name;
	cache_refresh_fn refresh;
	cache_free_fn free_snapshot;
} group_def[SMA_GROUPS] = {
	[SMA_NODE_INFO] = {"SMA node info", refresh_node_info, free},
	[SMA_SWITCH_INFO] = {"SMA switch info", refresh_switch_info, free},
	[SMA_PORT_INFO] = {"SMA port info", refresh_port_info, port_snapshot_free},
	[SMA_GUID_INFO] = {"SMA GUID info", refresh_guid_info, table_snapshot_free},
	[SMA_PKEY] = {"SMA P_Key table", refresh_pkey, table_snapshot_free},
	[SMA_SL2VL] = {"SMA SL to VL table", refresh_sl2vl, table_snapshot_free},
	[SMA_VLARB] = {"SMA VL arbitration", refresh_vlarb, table_snapshot_free},
	[SMA_LFT] = {"SMA linear forwarding", refresh_lft, table_snapshot_free},
	[SMA_MFT] = {"SMA multicast forwarding", refresh_mft, table_snapshot_free},
	[SMA_RFT] = {"SMA random forwarding", refresh_rft, table_snapshot_free},
	[SMA_SM_INFO] = {"SMA SM info", refresh_per_port, table_snapshot_free},
	[SMA_VENDOR_DIAG] = {"SMA vendor diagnostics", refresh_per_port, table_snapshot_free},
	[SMA_LED_INFO] = {"SMA LED info", refresh_per_port, table_snapshot_free},
};

void sma_collector_init(struct sma_collector *node, const ib_portid_t *path, bool remote)
{
	memset(node, 0, sizeof(*node));
	node->path = *path;
	node->remote = remote;
	for (int i = 0; i < SMA_GROUPS; i++) {
		node->group[i].name = group_def[i].name;
		node->group[i].refresh = group_def[i].refresh;
		node->group[i].free_snapshot = group_def[i].free_snapshot;
		node->group[i].owner = node;
	}
	if (!remote)
		cache_group_observe(&node->group[SMA_PORT_INFO], &node->local_link,
				    local_link_published, node);
	sma_collector_apply_config(node);
}

void sma_collector_apply_config(struct sma_collector *node)
{
	for (int i = 0; i < SMA_GROUPS; i++)
		cache_group_set_lifetime(&node->group[i], config_cache_lifetime(&sma_cache_decls[i]));
}

/* Start-up order: NodeInfo; then SwitchInfo and PortInfo, which the others
 * plan from; then the rest. Each stage starts when the previous one has had
 * its first refresh (sma_collector_start_step). */
static void start_range(struct sma_collector *node, int from, int to)
{
	for (int i = from; i <= to; i++)
		if (!node->group[i].alarm)
			cache_group_start(&node->group[i]);
}

static bool tried(const struct sma_collector *node, int from, int to)
{
	for (int i = from; i <= to; i++)
		if (!node->group[i].alarm || node->group[i].attempts == 0)
			return false;
	return true;
}

void sma_collector_start(struct sma_collector *node)
{
	start_range(node, SMA_NODE_INFO, SMA_NODE_INFO);
}

bool sma_collector_start_step(struct sma_collector *n)
{
	if (!tried(n, SMA_NODE_INFO, SMA_NODE_INFO))
		return false;
	if (!n->group[SMA_SWITCH_INFO].alarm)
		start_range(n, SMA_SWITCH_INFO, SMA_PORT_INFO);
	if (!tried(n, SMA_SWITCH_INFO, SMA_PORT_INFO))
		return false;
	if (!n->group[SMA_GUID_INFO].alarm)
		start_range(n, SMA_GUID_INFO, SMA_GROUPS - 1);
	return tried(n, SMA_GUID_INFO, SMA_GROUPS - 1);
}

void sma_collector_stop(struct sma_collector *node)
{
	for (int i = 0; i < SMA_GROUPS; i++)
		cache_group_stop(&node->group[i]);
}
