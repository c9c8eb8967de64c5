/* The routing checks (route_check.c) on two small fabrics with tables made
 * here, as OpenSM's engines would make them, then broken as real fabrics
 * break: an entry unassigned or sent to the wrong port, a loop, a route
 * down then up, uplinks unbalanced, a ring routed one way (a credit loop);
 * then the subnet checks (route_subnet.c) on the same tree, its ports'
 * PortInfo made here: duplicate LIDs and GUIDs, an end stuck in Init, a
 * link below the MTU and VLs both ends can; SMs as their SMInfo would say:
 * two masters, none, the wrong one, a stalled one, ports following another.
 *
 * The fat tree: leaves l0..l3 (4 ports: 1-2 hosts, 3 to s0, 4 to s1),
 * spines s0, s1 (port N+1 to leaf N); hosts h1..h8 with LIDs 1..8 (h1, h2
 * on l0 ...), leaves LIDs 9..12, spines 13, 14. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ibsnmpd/route.h"

#define HOST(h) (0x1000u + (h))
#define LEAF(l) (0x2000u + (l))
#define SPINE(s) (0x3000u + (s))

static char text[8192];

static void add(const char *fmt, ...)
{
	size_t n = strlen(text);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text + n, sizeof(text) - n, fmt, ap);
	va_end(ap);
}

static void port_line(unsigned guid, unsigned port, unsigned lid, unsigned peer, unsigned pport)
{
	add("port %016x %u %u %016x %016x %u 4\n", guid, port, lid, guid + (guid < 0x2000 ? 0x100 : 0),
	    peer, pport);
}

static struct topology *parse(void)
{
	char err[160];
	struct topology *f = topology_parse(text, strlen(text), NULL, err, sizeof(err));

	if (!f)
		fail_msg("%s", err);
	topology_get(f);
	return f;
}

static struct topology *fat_tree(void)
{
	text[0] = 0;
	for (unsigned h = 1; h <= 8; h++) {
		port_line(HOST(h), 1, h, LEAF((h - 1) / 2), (h - 1) % 2 + 1);
		add("node %016x 1 1 %u h%u\n", HOST(h), h, h);
	}
	for (unsigned l = 0; l < 4; l++) {
		port_line(LEAF(l), 1, 9 + l, HOST(2 * l + 1), 1);
		port_line(LEAF(l), 2, 9 + l, HOST(2 * l + 2), 1);
		port_line(LEAF(l), 3, 9 + l, SPINE(0), l + 1);
		port_line(LEAF(l), 4, 9 + l, SPINE(1), l + 1);
		add("node %016x 2 4 %u l%u\n", LEAF(l), 9 + l, l);
	}
	for (unsigned s = 0; s < 2; s++) {
		for (unsigned l = 0; l < 4; l++)
			port_line(SPINE(s), l + 1, 13 + s, LEAF(l), 3 + s);
		add("node %016x 2 4 %u s%u\n", SPINE(s), 13 + s, s);
	}
	add("done 0.01\n");
	return parse();
}

/* the switch number of a node in t (by name) */
static size_t sw(const struct topology *f, const struct route_tables *t, const char *name)
{
	for (size_t i = 0; i < t->n_switches; i++)
		if (!strcmp(f->nodes[t->switch_node[i]].desc, name))
			return i;
	fail_msg("no switch %s", name);
	return 0;
}

static void set(struct route_tables *t, size_t s, unsigned lid, unsigned port)
{
	assert_int_equal(route_tables_set(t, s, lid, (uint8_t)port), 0);
}

/* ftree's tables: down to the host's leaf, up by the LID's parity */
static void fat_tree_tables(const struct topology *f, struct route_tables *t)
{
	char name[8];

	assert_int_equal(route_tables_init(t, f, route_max_lid(f)), 0);
	for (unsigned l = 0; l < 4; l++) {
		size_t s;

		snprintf(name, sizeof(name), "l%u", l);
		s = sw(f, t, name);
		t->read[s] = true;
		for (unsigned lid = 1; lid <= 14; lid++) {
			if (lid == 9 + l)
				set(t, s, lid, 0);
			else if (lid <= 8 && (lid - 1) / 2 == l)
				set(t, s, lid, (lid - 1) % 2 + 1);
			else if (lid == 13 || lid == 14)
				set(t, s, lid, 3 + (lid - 13));
			else
				set(t, s, lid, 3 + lid % 2);
		}
	}
	for (unsigned sp = 0; sp < 2; sp++) {
		size_t s;

		snprintf(name, sizeof(name), "s%u", sp);
		s = sw(f, t, name);
		t->read[s] = true;
		for (unsigned lid = 1; lid <= 14; lid++) {
			if (lid <= 8)
				set(t, s, lid, (lid - 1) / 2 + 1);
			else if (lid <= 12)
				set(t, s, lid, lid - 9 + 1);
			else
				set(t, s, lid, lid == 13 + sp ? 0 : 1); /* the other spine: by l0 */
		}
	}
}

struct bed {
	struct topology *f;
	struct route_tables t;
	struct route_findings r;
};

static int bed_up(void **state)
{
	struct bed *b = calloc(1, sizeof(*b));

	b->f = fat_tree();
	fat_tree_tables(b->f, &b->t);
	*state = b;
	return 0;
}

static int bed_down(void **state)
{
	struct bed *b = *state;

	route_findings_free(&b->r);
	route_tables_free(&b->t);
	topology_put(b->f);
	free(b);
	return 0;
}

static void check(struct bed *b)
{
	route_findings_free(&b->r);
	assert_int_equal(route_check(b->f, &b->t, &b->r), 0);
}

static const struct route_offender *offender(const struct bed *b, unsigned check)
{
	for (size_t i = 0; i < b->r.n_offenders; i++)
		if (b->r.offenders[i].check == check)
			return &b->r.offenders[i];
	fail_msg("no offender of check %u", check);
	return NULL;
}

static void passed_but(const struct bed *b, unsigned failing)
{
	for (unsigned k = 1; k <= ROUTE_ROUTING_CHECKS; k++)
		if (k != failing && b->r.checks[k].status != ROUTE_STATUS_PASSED)
			fail_msg("check %s: status %u", route_check_name(k), b->r.checks[k].status);
	if (failing)
		assert_int_equal(b->r.checks[failing].status, ROUTE_STATUS_FAILED);
}

static const struct route_port_load *load(const struct bed *b, uint64_t guid, unsigned port)
{
	for (size_t i = 0; i < b->r.n_loads; i++)
		if (b->r.loads[i].guid == guid && b->r.loads[i].port == port)
			return &b->r.loads[i];
	fail_msg("no load of %llx/%u", (unsigned long long)guid, port);
	return NULL;
}

static void clean_fat_tree_passes(void **state)
{
	struct bed *b = *state;

	check(b);
	passed_but(b, 0);
	assert_int_equal(b->r.n_offenders, 0);
	assert_int_equal(b->r.destinations, 14);
	/* 8 x 7 CA pairs: a leaf's two hosts 2 hops apart, the others 4 */
	assert_int_equal(b->r.ca_pairs, 56);
	assert_int_equal(b->r.pairs_reached, 56);
	assert_int_equal(b->r.hops[2], 8);
	assert_int_equal(b->r.hops[4], 48);
	/* l0's uplinks: the 6 other hosts' LIDs, 3 each; each of l0's hosts
	 * sends to 6, receives from 7 */
	assert_int_equal(load(b, LEAF(0), 3)->lids, 3);
	assert_int_equal(load(b, LEAF(0), 4)->lids, 3);
	assert_int_equal(load(b, LEAF(0), 3)->direction, 1);
	assert_int_equal(load(b, SPINE(0), 1)->direction, -1);
	assert_int_equal(load(b, LEAF(0), 1)->paths, 7);
	/* l0 port 3 carries its 2 hosts' routes to the 3 remote LIDs of its parity */
	assert_int_equal(load(b, LEAF(0), 3)->paths, 6);
	assert_int_equal(b->r.n_loads, 16 + 8);
}

static void unassigned_entry_is_a_dead_end(void **state)
{
	struct bed *b = *state;
	const struct route_offender *o;

	set(&b->t, sw(b->f, &b->t, "l0"), 5, ROUTE_LFT_UNREAD);
	check(b);
	assert_int_equal(b->r.checks[ROUTE_CHECK_REACH].status, ROUTE_STATUS_FAILED);
	assert_int_equal(b->r.checks[ROUTE_CHECK_REACH].offenders, 1);
	o = offender(b, ROUTE_CHECK_REACH);
	assert_int_equal(o->kind, ROUTE_DEAD_UNASSIGNED);
	assert_int_equal(o->guid, LEAF(0));
	assert_int_equal(o->lid, 5);
	assert_int_equal(o->count, 1);
	assert_non_null(strstr(o->desc, "switch l0 has no port for LID 5 (h5 port 1)"));
	/* h1 and h2 cannot reach h5: 2 of 56 pairs */
	assert_int_equal(b->r.pairs_reached, 54);
}

static void wrong_port_is_named(void **state)
{
	struct bed *b = *state;
	const struct route_offender *o;

	set(&b->t, sw(b->f, &b->t, "l2"), 5, 2); /* h6, not h5 */
	check(b);
	o = offender(b, ROUTE_CHECK_REACH);
	assert_int_equal(o->kind, ROUTE_DEAD_WRONG_NODE);
	assert_int_equal(o->guid, LEAF(2));
	assert_int_equal(o->port, 2);
	assert_non_null(strstr(o->desc, "out of port 2 to h6"));
	/* every switch's route to h5 ends at l2 now */
	assert_int_equal(o->count, 6);
}

static void a_loop_is_found(void **state)
{
	struct bed *b = *state;
	const struct route_offender *o;

	set(&b->t, sw(b->f, &b->t, "s0"), 5, 1);  /* down to l0 */
	set(&b->t, sw(b->f, &b->t, "l0"), 5, 3);  /* up to s0 */
	check(b);
	o = offender(b, ROUTE_CHECK_REACH);
	assert_int_equal(o->kind, ROUTE_LOOP);
	assert_int_equal(o->lid, 5);
	/* l0 and s0: the other leaves go up by s1 (LID 5 is odd) */
	assert_int_equal(o->count, 2);
	assert_non_null(strstr(o->desc, "loop through switch"));
}

static void down_then_up_is_found(void **state)
{
	struct bed *b = *state;
	const struct route_offender *o;

	/* l1 -> s0 -> l2 -> s1 -> l0 for h1 */
	set(&b->t, sw(b->f, &b->t, "l1"), 1, 3);
	set(&b->t, sw(b->f, &b->t, "s0"), 1, 3);
	set(&b->t, sw(b->f, &b->t, "l2"), 1, 4);
	check(b);
	assert_int_equal(b->r.checks[ROUTE_CHECK_REACH].status, ROUTE_STATUS_PASSED);
	assert_int_equal(b->r.checks[ROUTE_CHECK_UPDOWN].status, ROUTE_STATUS_FAILED);
	o = offender(b, ROUTE_CHECK_UPDOWN);
	assert_int_equal(o->kind, ROUTE_DOWN_UP);
	assert_int_equal(o->lid, 1);
	assert_int_equal(o->count, 2); /* l1's two hosts */
	assert_int_equal(o->guid, LEAF(2)); /* where it turns up */
	assert_non_null(strstr(o->desc, "turning up at switch l2"));
	/* and 6 hops where 4 would do */
	assert_int_equal(b->r.checks[ROUTE_CHECK_HOPS].status, ROUTE_STATUS_FAILED);
	o = offender(b, ROUTE_CHECK_HOPS);
	assert_int_equal(o->count, 2);
	assert_int_equal(b->r.hops[6], 2);
}

/* The destinations split in shares, each walked on a thread of its own:
 * the findings are those of one walk, offenders in the same order. */
static void shares_find_what_one_walk_finds(void **state)
{
	struct bed *b = *state;
	struct route_findings one, more;

	set(&b->t, sw(b->f, &b->t, "l1"), 1, 3); /* down then up for h1 */
	set(&b->t, sw(b->f, &b->t, "s0"), 1, 3);
	set(&b->t, sw(b->f, &b->t, "l2"), 1, 4);
	set(&b->t, sw(b->f, &b->t, "l3"), 5, ROUTE_LFT_UNREAD); /* dead ends */
	set(&b->t, sw(b->f, &b->t, "s1"), 8, 1);
	set(&b->t, sw(b->f, &b->t, "s0"), 12, 2);
	set(&b->t, sw(b->f, &b->t, "l0"), 14, 4);
	assert_int_equal(route_check_shares(b->f, &b->t, &one, 1), 0);
	/* offenders of three checks, in destinations far apart */
	assert_int_equal(one.checks[ROUTE_CHECK_REACH].offenders, 2);
	assert_int_equal(one.checks[ROUTE_CHECK_UPDOWN].offenders, 1);
	assert_int_equal(one.checks[ROUTE_CHECK_HOPS].offenders, 1);
	for (unsigned n = 2; n <= ROUTE_CHECK_SHARES_MAX + 1; n++) {
		assert_int_equal(route_check_shares(b->f, &b->t, &more, n), 0);
		for (unsigned k = 1; k <= ROUTE_ROUTING_CHECKS; k++) {
			assert_int_equal(more.checks[k].status, one.checks[k].status);
			assert_int_equal(more.checks[k].offenders, one.checks[k].offenders);
			assert_int_equal(more.checks[k].listed, one.checks[k].listed);
		}
		assert_int_equal(more.n_offenders, one.n_offenders);
		for (size_t i = 0; i < one.n_offenders; i++) {
			const struct route_offender *x = &one.offenders[i], *y = &more.offenders[i];

			assert_int_equal(y->check, x->check);
			assert_int_equal(y->n, x->n);
			assert_int_equal(y->kind, x->kind);
			assert_int_equal(y->guid, x->guid);
			assert_int_equal(y->lid, x->lid);
			assert_int_equal(y->count, x->count);
			assert_string_equal(y->desc, x->desc);
		}
		assert_int_equal(more.n_loads, one.n_loads);
		for (size_t i = 0; i < one.n_loads; i++) {
			assert_int_equal(more.loads[i].lids, one.loads[i].lids);
			assert_int_equal(more.loads[i].paths, one.loads[i].paths);
		}
		assert_memory_equal(more.hops, one.hops, sizeof(one.hops));
		assert_int_equal(more.ca_pairs, one.ca_pairs);
		assert_int_equal(more.pairs_reached, one.pairs_reached);
		assert_int_equal(more.destinations, one.destinations);
		route_findings_free(&more);
	}
	route_findings_free(&one);
}

static void unbalanced_uplinks_are_found(void **state)
{
	struct bed *b = *state;
	const struct route_offender *o;
	size_t l0 = sw(b->f, &b->t, "l0");

	for (unsigned lid = 3; lid <= 8; lid++)
		set(&b->t, l0, lid, 3);
	check(b);
	passed_but(b, ROUTE_CHECK_BALANCE);
	o = offender(b, ROUTE_CHECK_BALANCE);
	assert_int_equal(o->guid, LEAF(0));
	assert_int_equal(o->port, 3);
	assert_int_equal(o->count, 6);
	assert_non_null(strstr(o->desc, "port 3 carries 6 CA LIDs, port 4 0"));
}

static void unread_switch_is_partial(void **state)
{
	struct bed *b = *state;

	b->t.read[sw(b->f, &b->t, "s1")] = false;
	check(b);
	assert_int_equal(b->r.checks[ROUTE_CHECK_REACH].status, ROUTE_STATUS_PARTIAL);
	assert_int_equal(b->r.checks[ROUTE_CHECK_REACH].offenders, 0);
}

/* A ring of 4 switches r0..r3, one host each, every LID routed clockwise
 * (port 2): the textbook credit loop. */
static struct topology *ring_one_way(struct route_tables *t)
{
	struct topology *f;
	char name[8];

	text[0] = 0;
	for (unsigned i = 0; i < 4; i++) {
		port_line(HOST(i), 1, 1 + i, LEAF(i), 1);
		add("node %016x 1 1 %u h%u\n", HOST(i), 1 + i, i);
		port_line(LEAF(i), 1, 5 + i, HOST(i), 1);
		port_line(LEAF(i), 2, 5 + i, LEAF((i + 1) % 4), 3); /* clockwise */
		port_line(LEAF(i), 3, 5 + i, LEAF((i + 3) % 4), 2);
		add("node %016x 2 3 %u r%u\n", LEAF(i), 5 + i, i);
	}
	add("done 0.01\n");
	f = parse();
	assert_int_equal(route_tables_init(t, f, route_max_lid(f)), 0);
	for (unsigned i = 0; i < 4; i++) {
		size_t s;

		snprintf(name, sizeof(name), "r%u", i);
		s = sw(f, t, name);
		t->read[s] = true;
		for (unsigned lid = 1; lid <= 8; lid++)
			set(t, s, lid, lid == 1 + i ? 1 : lid == 5 + i ? 0 : 2);
	}
	return f;
}

static void ring_routed_one_way_has_a_credit_loop(void **state)
{
	struct route_tables t;
	struct topology *f = ring_one_way(&t);
	struct route_findings r;
	char name[8];

	(void)state;
	assert_int_equal(route_check(f, &t, &r), 0);
	assert_int_equal(r.checks[ROUTE_CHECK_REACH].status, ROUTE_STATUS_PASSED);
	assert_int_equal(r.checks[ROUTE_CHECK_CREDIT].status, ROUTE_STATUS_FAILED);
	assert_int_equal(r.checks[ROUTE_CHECK_CREDIT].offenders, 1);
	for (size_t i = 0; i < r.n_offenders; i++)
		if (r.offenders[i].check == ROUTE_CHECK_CREDIT) {
			assert_int_equal(r.offenders[i].count, 4);
			assert_non_null(strstr(r.offenders[i].desc, "credit loop of 4 links"));
		}
	/* 3 hops clockwise where 1 would do */
	assert_int_equal(r.checks[ROUTE_CHECK_HOPS].status, ROUTE_STATUS_FAILED);
	route_findings_free(&r);
	/* routed both ways by the shortest path: no loop (two hops: either) */
	for (unsigned i = 0; i < 4; i++) {
		size_t s;

		snprintf(name, sizeof(name), "r%u", i);
		s = sw(f, &t, name);
		for (unsigned h = 0; h < 4; h++) {
			unsigned d = (h + 4 - i) % 4;

			set(&t, s, 1 + h, d == 0 ? 1 : d == 3 ? 3 : d == 1 ? 2 : (i < 2 ? 2 : 3));
		}
	}
	assert_int_equal(route_check(f, &t, &r), 0);
	assert_int_equal(r.checks[ROUTE_CHECK_CREDIT].status, ROUTE_STATUS_PASSED);
	assert_int_equal(r.checks[ROUTE_CHECK_HOPS].status, ROUTE_STATUS_PASSED);
	route_findings_free(&r);
	route_tables_free(&t);
	topology_put(f);
}

static const char *credit_words(const struct route_findings *r, size_t k)
{
	for (size_t i = 0; i < r->n_offenders; i++)
		if (r->offenders[i].check == ROUTE_CHECK_CREDIT && k-- == 0)
			return r->offenders[i].desc;
	return "";
}

/* Every ring port's SL2VL: SL 0 on VL vl0, SL 1 on VL vl1, the rest on 0. */
static void ring_vls(const struct topology *f, struct route_tables *t, uint8_t vl0, uint8_t vl1)
{
	uint8_t vl[16] = {vl0, vl1};
	char name[8];

	for (unsigned i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "r%u", i);
		for (unsigned p = 2; p <= 3; p++)
			route_tables_put_sl2vl(t, sw(f, t, name), p, vl);
	}
}

/* The CDG is over (channel, VL), the VLs from SL2VL: the loop named on
 * the VL SL 0 leaves on (a port unread: as the others); a link whose SL 0
 * goes on another VL, the VLs named at each link (still a loop: the VL
 * follows the link, not the packet); two SLs in use, a loop on each one's
 * VLs, possible only: partial. */
static void credit_loops_are_per_vl_from_sl2vl(void **state)
{
	struct route_tables t;
	struct topology *f = ring_one_way(&t);
	struct route_findings r;
	uint8_t vl[16] = {1};

	(void)state;
	ring_vls(f, &t, 3, 5);
	assert_int_equal(route_check(f, &t, &r), 0);
	assert_int_equal(r.checks[ROUTE_CHECK_CREDIT].status, ROUTE_STATUS_FAILED);
	assert_int_equal(r.checks[ROUTE_CHECK_CREDIT].offenders, 1);
	assert_string_equal(credit_words(&r, 0),
			    "credit loop of 4 links on VL 3: r0/2 > r1/2 > r2/2 > r3/2");
	route_findings_free(&r);
	/* a port unanswered: as most ports map SL 0 */
	memset(t.sl2vl[t.vl_first[sw(f, &t, "r2")] + 2], ROUTE_VL_UNREAD, 16);
	assert_int_equal(route_check(f, &t, &r), 0);
	assert_string_equal(credit_words(&r, 0),
			    "credit loop of 4 links on VL 3: r0/2 > r1/2 > r2/2 > r3/2");
	route_findings_free(&r);
	route_tables_put_sl2vl(&t, sw(f, &t, "r1"), 2, vl);
	assert_int_equal(route_check(f, &t, &r), 0);
	assert_int_equal(r.checks[ROUTE_CHECK_CREDIT].offenders, 1);
	assert_string_equal(credit_words(&r, 0),
			    "credit loop of 4 links on several VLs: r0/2 VL 3 > r1/2 VL 1 > "
			    "r2/2 VL 3 > r3/2 VL 3");
	route_findings_free(&r);
	ring_vls(f, &t, 3, 5);
	t.path_sls = 1;
	t.sampled_sls = 2; /* SL 0 configured, SL 1 from the SA's paths */
	assert_int_equal(route_path_sls(&t), 3);
	assert_int_equal(route_check(f, &t, &r), 0);
	assert_int_equal(r.checks[ROUTE_CHECK_CREDIT].status, ROUTE_STATUS_PARTIAL);
	assert_int_equal(r.checks[ROUTE_CHECK_CREDIT].offenders, 2);
	assert_string_equal(credit_words(&r, 0),
			    "possible credit loop of 4 links on VL 3: r0/2 > r1/2 > r2/2 > r3/2");
	assert_string_equal(credit_words(&r, 1),
			    "possible credit loop of 4 links on VL 5: r0/2 > r1/2 > r2/2 > r3/2");
	route_findings_free(&r);
	route_tables_free(&t);
	topology_put(f);
}

/* ---- the subnet checks (route_subnet.c) ---- */

/* text's first `from` made `to` (a topology's line changed) */
static void edit(const char *from, const char *to)
{
	char *at = strstr(text, from);

	assert_non_null(at);
	memmove(at + strlen(to), at + strlen(from), strlen(at + strlen(from)) + 1);
	memcpy(at, to, strlen(to));
}

/* the fat tree with one line changed */
static struct topology *fat_tree_edited(const char *from, const char *to)
{
	topology_put(fat_tree());
	edit(from, to);
	return parse();
}

/* every port of f Active, at MTU 4096 and VL0-7 which both ends can */
static struct route_port_fact *healthy_facts(const struct topology *f)
{
	struct route_port_fact *p = calloc(f->n_ports + 1, sizeof(*p));

	for (size_t i = 0; i < f->n_ports; i++)
		p[i] = (struct route_port_fact){
			.guid = f->nodes[f->ports[i].node].guid, .port = f->ports[i].port,
			.lid = (uint16_t)f->ports[i].lid, .state = 4, .phys_state = 5,
			.mtu_cap = 5, .active_mtu = 5, .vl_cap = 4, .oper_vls = 4, .state_s = 600};
	return p;
}

static struct route_port_fact *fact(struct route_port_fact *p, const struct topology *f,
				    uint64_t guid, unsigned port)
{
	for (size_t i = 0; i < f->n_ports; i++)
		if (p[i].guid == guid && p[i].port == port)
			return &p[i];
	fail_msg("no port %llx/%u", (unsigned long long)guid, port);
	return NULL;
}

static const struct route_offender *subnet_offender(const struct route_findings *r,
						    unsigned kind)
{
	for (size_t i = 0; i < r->n_offenders; i++)
		if (r->offenders[i].kind == kind)
			return &r->offenders[i];
	fail_msg("no offender %s", route_offense_name(kind));
	return NULL;
}

static void subnet_sms(const struct topology *f, const struct route_port_fact *p,
		       struct route_sm *sms, size_t n_sms, struct route_findings *r)
{
	struct route_subnet_input in = {.ports = p, .n_ports = p ? f->n_ports : 0, .sms = sms,
					.n_sms = n_sms, .stuck_s = 20, .stall_s = 60};

	assert_int_equal(route_subnet_check(f, &in, r), 0);
	for (unsigned k = 1; k <= ROUTE_ROUTING_CHECKS; k++)
		assert_int_equal(r->checks[k].status, 0); /* not its rows */
}

static void subnet(const struct topology *f, const struct route_port_fact *p,
		   struct route_findings *r)
{
	subnet_sms(f, p, NULL, 0, r);
}

static void clean_subnet_passes(void **state)
{
	struct topology *f = fat_tree();
	struct route_port_fact *p = healthy_facts(f);
	struct route_findings r;

	(void)state;
	subnet(f, p, &r);
	assert_int_equal(r.checks[ROUTE_CHECK_DUPLICATES].status, ROUTE_STATUS_PASSED);
	assert_int_equal(r.checks[ROUTE_CHECK_LINKS].status, ROUTE_STATUS_PASSED);
	assert_int_equal(r.n_offenders, 0);
	route_findings_free(&r);
	/* no link sweep: the links are not checked, the duplicates are */
	subnet(f, NULL, &r);
	assert_int_equal(r.checks[ROUTE_CHECK_DUPLICATES].status, ROUTE_STATUS_PASSED);
	assert_int_equal(r.checks[ROUTE_CHECK_LINKS].status, ROUTE_STATUS_NOT_RUN);
	assert_int_equal(r.checks[ROUTE_CHECK_SM].status, ROUTE_STATUS_NOT_RUN);
	route_findings_free(&r);
	free(p);
	topology_put(f);
}

static void duplicate_lid_names_both_ports(void **state)
{
	/* h3 given h1's LID */
	struct topology *f = fat_tree_edited("port 0000000000001003 1 3 ",
					     "port 0000000000001003 1 1 ");
	struct route_findings r;
	const struct route_offender *o;

	(void)state;
	subnet(f, NULL, &r);
	assert_int_equal(r.checks[ROUTE_CHECK_DUPLICATES].status, ROUTE_STATUS_FAILED);
	assert_int_equal(r.checks[ROUTE_CHECK_DUPLICATES].offenders, 1);
	o = subnet_offender(&r, ROUTE_DUP_LID);
	assert_int_equal(o->lid, 1);
	assert_string_equal(o->desc, "LID 1 is both h1 port 1's and h3 port 1's");
	route_findings_free(&r);
	topology_put(f);
}

static void lmc_range_overlap_is_a_duplicate(void **state)
{
	struct topology *f = fat_tree();
	struct route_port_fact *p = healthy_facts(f);
	struct route_findings r;

	(void)state;
	fact(p, f, HOST(1), 1)->lmc = 1; /* h1 answers 1 and 2: h2's */
	subnet(f, p, &r);
	assert_int_equal(subnet_offender(&r, ROUTE_DUP_LID)->lid, 2);
	route_findings_free(&r);
	fact(p, f, HOST(1), 1)->lmc = 0;
	subnet(f, p, &r);
	assert_int_equal(r.checks[ROUTE_CHECK_DUPLICATES].status, ROUTE_STATUS_PASSED);
	route_findings_free(&r);
	free(p);
	topology_put(f);
}

static void duplicate_port_guid_is_found(void **state)
{
	/* h4's port GUID made h2's */
	struct topology *f = fat_tree_edited("port 0000000000001004 1 4 0000000000001104",
					     "port 0000000000001004 1 4 0000000000001102");
	struct route_findings r;

	(void)state;
	subnet(f, NULL, &r);
	assert_string_equal(subnet_offender(&r, ROUTE_DUP_PORT_GUID)->desc,
			    "port GUID 0x0000000000001102 is both h2 port 1 and h4 port 1");
	route_findings_free(&r);
	topology_put(f);
}

static void active_port_without_lid_is_found(void **state)
{
	struct topology *f = fat_tree();
	struct route_port_fact *p = healthy_facts(f);
	struct route_findings r;

	(void)state;
	fact(p, f, HOST(5), 1)->lid = 0; /* its PortInfo now */
	subnet(f, p, &r);
	assert_string_equal(subnet_offender(&r, ROUTE_ZERO_LID)->desc,
			    "h5 port 1 is Active with LID 0");
	route_findings_free(&r);
	/* in Init it has none yet: that is the link check's, once it stays */
	fact(p, f, HOST(5), 1)->state = 2;
	fact(p, f, HOST(5), 1)->state_s = 5;
	subnet(f, p, &r);
	assert_int_equal(r.checks[ROUTE_CHECK_DUPLICATES].status, ROUTE_STATUS_PASSED);
	assert_int_equal(r.checks[ROUTE_CHECK_LINKS].status, ROUTE_STATUS_PASSED);
	route_findings_free(&r);
	free(p);
	topology_put(f);
}

static void shared_description_is_said_not_failed(void **state)
{
	struct topology *f = fat_tree_edited(" 2 4 14 s1\n", " 2 4 14 s0\n");
	struct route_findings r;
	const struct route_offender *o;

	(void)state;
	subnet(f, NULL, &r);
	assert_int_equal(r.checks[ROUTE_CHECK_DUPLICATES].status, ROUTE_STATUS_PASSED);
	assert_int_equal(r.checks[ROUTE_CHECK_DUPLICATES].offenders, 0);
	o = subnet_offender(&r, ROUTE_DUP_DESCRIPTION);
	assert_int_equal(o->count, 2);
	assert_string_equal(o->desc, "2 nodes have the node description \"s0\" (informational)");
	route_findings_free(&r);
	topology_put(f);
}

static void end_stuck_in_init_is_found_after_a_while(void **state)
{
	struct topology *f = fat_tree();
	struct route_port_fact *p = healthy_facts(f);
	struct route_port_fact *h = fact(p, f, HOST(3), 1);
	struct route_findings r;
	const struct route_offender *o;

	(void)state;
	h->state = 2;
	h->state_s = 19; /* the SM may be at it */
	subnet(f, p, &r);
	assert_int_equal(r.checks[ROUTE_CHECK_LINKS].status, ROUTE_STATUS_PASSED);
	route_findings_free(&r);
	h->state_s = 45;
	subnet(f, p, &r);
	assert_int_equal(r.checks[ROUTE_CHECK_LINKS].offenders, 1);
	o = subnet_offender(&r, ROUTE_LINK_STUCK);
	assert_int_equal(o->guid, HOST(3));
	assert_string_equal(o->desc, "h3 port 1 <-> l1 port 1: h3's end has been Init for 45 s "
				     "(the other end Active)");
	route_findings_free(&r);
	/* no light: polling, not stuck */
	h->phys_state = 2;
	subnet(f, p, &r);
	assert_int_equal(r.checks[ROUTE_CHECK_LINKS].status, ROUTE_STATUS_PASSED);
	route_findings_free(&r);
	free(p);
	topology_put(f);
}

static void mtu_and_vls_below_both_ends_are_found(void **state)
{
	struct topology *f = fat_tree();
	struct route_port_fact *p = healthy_facts(f);
	struct route_findings r;

	(void)state;
	fact(p, f, LEAF(2), 3)->active_mtu = 4;  /* 2048 on l2's uplink to s0 */
	fact(p, f, SPINE(1), 2)->oper_vls = 3;   /* VL0-3 on s1's link to l1 */
	subnet(f, p, &r);
	assert_int_equal(r.checks[ROUTE_CHECK_LINKS].offenders, 2);
	assert_string_equal(subnet_offender(&r, ROUTE_LINK_MTU)->desc,
			    "l2 port 3 <-> s0 port 3 runs MTU 2048 (l2's end), both ends can 4096");
	assert_int_equal(subnet_offender(&r, ROUTE_LINK_MTU)->guid, LEAF(2));
	assert_string_equal(subnet_offender(&r, ROUTE_LINK_VLS)->desc,
			    "l1 port 4 <-> s1 port 2 runs 4 data VLs (s1's end), both ends can 8");
	route_findings_free(&r);
	/* one end that cannot do more: what both can is the lower */
	fact(p, f, SPINE(0), 3)->mtu_cap = 4;
	fact(p, f, LEAF(1), 4)->vl_cap = 3;
	subnet(f, p, &r);
	assert_int_equal(r.checks[ROUTE_CHECK_LINKS].status, ROUTE_STATUS_PASSED);
	route_findings_free(&r);
	free(p);
	topology_put(f);
}

/* h1 master (priority 5), h8 standby (priority 3), every port following h1 */
static void two_sms(const struct topology *f, struct route_port_fact *p, struct route_sm *sm)
{
	for (size_t i = 0; i < f->n_ports; i++)
		p[i].sm_lid = 1;
	fact(p, f, HOST(1), 1)->is_sm = fact(p, f, HOST(8), 1)->is_sm = true;
	sm[0] = (struct route_sm){.guid = HOST(1) + 0x100, .lid = 1, .state = 3, .priority = 5,
				  .act_count = 1000, .act_still_s = 10, .master_s = 600};
	sm[1] = (struct route_sm){.guid = HOST(8) + 0x100, .lid = 8, .state = 2, .priority = 3,
				  .act_count = 40, .act_still_s = 10};
}

static unsigned sm_kind(const struct route_findings *r)
{
	for (size_t i = 0; i < r->n_offenders; i++)
		if (r->offenders[i].check == ROUTE_CHECK_SM)
			return r->offenders[i].kind;
	return 0;
}

static void sm_master_and_standby_pass(void **state)
{
	struct topology *f = fat_tree();
	struct route_port_fact *p = healthy_facts(f);
	struct route_sm sm[2];
	struct route_findings r;

	(void)state;
	two_sms(f, p, sm);
	subnet_sms(f, p, sm, 2, &r);
	assert_int_equal(r.checks[ROUTE_CHECK_SM].status, ROUTE_STATUS_PASSED);
	assert_int_equal(sm_kind(&r), 0);
	assert_string_equal(sm[0].name, "h1 port 1"); /* named for the table */
	route_findings_free(&r);
	/* alone: said, passed */
	subnet_sms(f, p, sm, 1, &r);
	assert_int_equal(r.checks[ROUTE_CHECK_SM].status, ROUTE_STATUS_PASSED);
	assert_string_equal(subnet_offender(&r, ROUTE_SM_NO_STANDBY)->desc,
			    "no standby SM: master h1 port 1 is alone (informational)");
	route_findings_free(&r);
	/* a port that says it is an SM and does not answer: said */
	sm[1].state = ROUTE_SM_NO_ANSWER;
	subnet_sms(f, p, sm, 2, &r);
	assert_int_equal(r.checks[ROUTE_CHECK_SM].status, ROUTE_STATUS_PASSED);
	assert_non_null(subnet_offender(&r, ROUTE_SM_SILENT));
	route_findings_free(&r);
	free(p);
	topology_put(f);
}

static void sm_faults_are_found(void **state)
{
	struct topology *f = fat_tree();
	struct route_port_fact *p = healthy_facts(f);
	struct route_sm sm[2];
	struct route_findings r;

	(void)state;
	two_sms(f, p, sm);
	sm[1].state = 3; /* a second master */
	subnet_sms(f, p, sm, 2, &r);
	assert_int_equal(r.checks[ROUTE_CHECK_SM].status, ROUTE_STATUS_FAILED);
	assert_string_equal(subnet_offender(&r, ROUTE_SM_MASTERS)->desc,
			    "h8 port 1 (LID 8) is master beside h1 port 1 (LID 1): two SMs "
			    "configure the subnet");
	route_findings_free(&r);
	sm[0].state = sm[1].state = 2; /* none */
	subnet_sms(f, p, sm, 2, &r);
	assert_int_equal(sm_kind(&r), ROUTE_SM_NO_MASTER);
	route_findings_free(&r);
	/* the standby should have won: higher priority */
	two_sms(f, p, sm);
	sm[1].priority = 9;
	subnet_sms(f, p, sm, 2, &r);
	assert_string_equal(subnet_offender(&r, ROUTE_SM_NOT_WINNER)->desc,
			    "master h1 port 1 has priority 5; h8 port 1 (standby, priority 9) "
			    "should win");
	route_findings_free(&r);
	/* the same priority: no handover, whatever the GUIDs */
	sm[1].priority = 5;
	sm[1].guid = 1;
	subnet_sms(f, p, sm, 2, &r);
	assert_int_equal(r.checks[ROUTE_CHECK_SM].status, ROUTE_STATUS_PASSED);
	route_findings_free(&r);
	sm[1].guid = HOST(8) + 0x100;
	/* the master's ActCount still for a minute */
	sm[0].act_still_s = 60;
	subnet_sms(f, p, sm, 2, &r);
	assert_int_equal(sm_kind(&r), ROUTE_SM_STALLED);
	route_findings_free(&r);
	free(p);
	topology_put(f);
}

static void ports_following_another_master_are_counted(void **state)
{
	struct topology *f = fat_tree();
	struct route_port_fact *p = healthy_facts(f);
	struct route_sm sm[2];
	struct route_findings r;
	const struct route_offender *o;

	(void)state;
	two_sms(f, p, sm);
	fact(p, f, HOST(3), 1)->sm_lid = 8;
	fact(p, f, HOST(6), 1)->sm_lid = 8;
	fact(p, f, LEAF(0), 1)->sm_lid = 8; /* a switch's: not counted */
	subnet_sms(f, p, sm, 2, &r);
	o = subnet_offender(&r, ROUTE_SM_LID_DISAGREE);
	assert_int_equal(o->count, 2);
	assert_string_equal(o->desc, "2 Active CA ports (h3 port 1 the first) take LID 8 "
				     "(h8 port 1) for the master SM, not h1 port 1's LID 1");
	route_findings_free(&r);
	/* a master of a few seconds: the ports follow it as they are read */
	sm[0].master_s = 5;
	subnet_sms(f, p, sm, 2, &r);
	assert_int_equal(r.checks[ROUTE_CHECK_SM].status, ROUTE_STATUS_PASSED);
	route_findings_free(&r);
	free(p);
	topology_put(f);
}

/* ---- the expected cabling (route_plan.c, the cabling check) ---- */

static const char ibsim_dump[] =
	"#\n# Topology file: generated on Sat Nov 28 14:31:04 2026\n#\n"
	"vendid=0x0\ndevid=0x0\nsysimgguid=0x200000\nswitchguid=0x200000(200000)\n"
	"Switch\t8 \"S-0000000000200000\"\t\t# \"sw1\" base port 0 lid 1 lmc 0\n"
	"[1]\t\"H-0000000000100000\"[1](100001) \t\t# \"hca1\" lid 2 4xSDR\n"
	"[3]\t\"H-0000000000100004\"[1](100005) \t\t# \"hca3\" lid 4 4xSDR\r\n"
	"\nvendid=0x0\ncaguid=0x100004\n"
	"Ca\t2 \"H-0000000000100004\"\t\t# \"hca3\"\n"
	"[1](100005) \t\"S-0000000000200000\"[3]\t\t# lid 4 lmc 0 \"sw1\" lid 1 4xSDR\n"
	"Ca\t1 \"H-0000000000100000\"\n"
	"[1](100001) \t\"S-0000000000200000\"[1]\n";

static void plan_reads_ibnetdiscover_output(void **state)
{
	char err[200];
	struct route_plan *p = route_plan_parse(ibsim_dump, strlen(ibsim_dump), err, sizeof(err));

	(void)state;
	if (!p)
		fail_msg("%s", err);
	assert_int_equal(p->n_nodes, 3);
	assert_int_equal(p->nodes[2].guid, 0x200000);
	assert_int_equal(p->nodes[2].type, 2);
	assert_int_equal(p->nodes[2].ports, 8);
	assert_string_equal(p->nodes[2].desc, "sw1");
	assert_string_equal(p->nodes[1].desc, "hca3");
	assert_string_equal(p->nodes[0].desc, ""); /* no comment */
	assert_int_equal(p->n_ports, 4);
	assert_int_equal(p->ports[2].guid, 0x200000);
	assert_int_equal(p->ports[2].port, 1);
	assert_int_equal(p->ports[2].peer, 0x100000);
	assert_int_equal(p->ports[2].peer_port, 1);
	route_plan_free(p);
}

static void plan_refuses_with_the_line(void **state)
{
	static const struct {
		const char *text, *err;
	} bad[] = {
		{"[1]\t\"H-0000000000100000\"[1]\n", "line 1: a port before any node"},
		{"# x\nSwitch\t8 \"S-00000000002000\"\n", "line 2: not a line of ibnetdiscover's output"},
		{"Ca\t1 \"S-0000000000200000\"\n", "line 1: not a line of ibnetdiscover's output"},
		{"Ca\t1 \"H-0000000000100000\"\n[2]\t\"S-0000000000200000\"[1]\n",
		 "line 2: not a line of ibnetdiscover's output"},
		{"Ca\t1 \"H-0000000000100000\"\n[1]\t\"S-0000000000200000\"[1] junk\n",
		 "line 2: not a line of ibnetdiscover's output"},
		{"Ca\t1 \"H-0000000000100000\"\nCa\t1 \"H-0000000000100000\"\n",
		 "node 0x0000000000100000 twice"},
		{"hello\n", "line 1: not a line of ibnetdiscover's output"},
		{"# nothing\n\n", "no node in it"},
	};
	char err[200];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_null(route_plan_parse(bad[i].text, strlen(bad[i].text), err, sizeof(err)));
		assert_string_equal(err, bad[i].err);
	}
}

/* f as ibnetdiscover would dump it, node GUIDs plus `guid_add` */
static struct route_plan *plan_of(const struct topology *f, uint64_t guid_add)
{
	static char dump[16384];
	char err[200];
	struct route_plan *p;

	dump[0] = 0;
	for (size_t i = 0; i < f->n_nodes; i++) {
		const struct topo_node *nd = &f->nodes[i];
		size_t n = strlen(dump);

		snprintf(dump + n, sizeof(dump) - n, "%s\t%u \"%c-%016llx\"\t\t# \"%s\"\n",
			 nd->type == 2 ? "Switch" : "Ca", nd->num_ports, nd->type == 2 ? 'S' : 'H',
			 (unsigned long long)(nd->guid + guid_add), nd->desc);
		for (size_t k = 0; k < f->n_ports; k++) {
			const struct topo_port *tp = &f->ports[k];
			const struct topo_node *peer = topology_node(f, tp->peer_guid);

			if (tp->node != i || !peer)
				continue;
			n = strlen(dump);
			snprintf(dump + n, sizeof(dump) - n, "[%u]\t\"%c-%016llx\"[%u]\n", tp->port,
				 peer->type == 2 ? 'S' : 'H',
				 (unsigned long long)(tp->peer_guid + guid_add), tp->peer_port);
		}
	}
	p = route_plan_parse(dump, strlen(dump), err, sizeof(err));
	if (!p)
		fail_msg("%s", err);
	return p;
}

static void cabling(const struct topology *f, const struct route_plan *plan,
		    struct route_findings *r)
{
	struct route_subnet_input in = {.plan = plan, .stuck_s = 20, .stall_s = 60};

	assert_int_equal(route_subnet_check(f, &in, r), 0);
}

static void cabling_as_planned_passes(void **state)
{
	struct topology *f = fat_tree();
	struct route_plan *p = plan_of(f, 0);
	struct route_findings r;

	(void)state;
	cabling(f, p, &r);
	assert_int_equal(r.checks[ROUTE_CHECK_CABLING].status, ROUTE_STATUS_PASSED);
	assert_int_equal(r.n_offenders, 0);
	route_findings_free(&r);
	route_plan_free(p);
	/* a plan made before the hardware: other GUIDs, the same names */
	p = plan_of(f, 0x7700000000ull);
	cabling(f, p, &r);
	assert_int_equal(r.checks[ROUTE_CHECK_CABLING].status, ROUTE_STATUS_PASSED);
	route_findings_free(&r);
	route_plan_free(p);
	/* no plan: not run */
	cabling(f, NULL, &r);
	assert_int_equal(r.checks[ROUTE_CHECK_CABLING].status, ROUTE_STATUS_NOT_RUN);
	route_findings_free(&r);
	topology_put(f);
}

static void swapped_cables_are_named_at_each_end(void **state)
{
	struct topology *planned = fat_tree();
	struct route_plan *p = plan_of(planned, 0);
	/* h1 and h2 swapped on l0's ports 1 and 2 */
	struct topology *f;
	struct route_findings r;

	(void)state;
	topology_put(planned);
	/* both hosts' lines and both of l0's (the text is still the tree's) */
	edit("port 0000000000001001 1 1 0000000000001101 0000000000002000 1 ",
	     "port 0000000000001001 1 1 0000000000001101 0000000000002000 2 ");
	edit("port 0000000000001002 1 2 0000000000001102 0000000000002000 2 ",
	     "port 0000000000001002 1 2 0000000000001102 0000000000002000 1 ");
	edit("port 0000000000002000 1 9 0000000000002000 0000000000001001 1 ",
	     "port 0000000000002000 1 9 0000000000002000 0000000000001002 1 ");
	edit("port 0000000000002000 2 9 0000000000002000 0000000000001002 1 ",
	     "port 0000000000002000 2 9 0000000000002000 0000000000001001 1 ");
	f = parse();
	cabling(f, p, &r);
	assert_int_equal(r.checks[ROUTE_CHECK_CABLING].status, ROUTE_STATUS_FAILED);
	assert_string_equal(subnet_offender(&r, ROUTE_CABLE_WRONG_PORT)->desc,
			    "h1 port 1 is cabled to l0 port 2, planned l0 port 1");
	assert_int_equal(r.checks[ROUTE_CHECK_CABLING].offenders, 4); /* each end of each cable */
	route_findings_free(&r);
	route_plan_free(p);
	topology_put(f);
}

static void nodes_more_or_less_than_planned(void **state)
{
	struct topology *f = fat_tree();
	struct route_plan *p = plan_of(f, 0);
	struct route_findings r;

	(void)state;
	/* the plan without h8 (its node line and port line) and with a spare
	 * host the subnet does not have */
	for (size_t i = 0; i < p->n_nodes; i++)
		if (p->nodes[i].guid == HOST(8)) {
			p->nodes[i].guid = 0x9999;
			snprintf(p->nodes[i].desc, sizeof(p->nodes[i].desc), "spare");
		}
	qsort(p->nodes, p->n_nodes, sizeof(*p->nodes), route_plan_node_cmp);
	cabling(f, p, &r);
	assert_int_equal(r.checks[ROUTE_CHECK_CABLING].status, ROUTE_STATUS_FAILED);
	assert_string_equal(subnet_offender(&r, ROUTE_CABLE_NODE_MISSING)->desc,
			    "spare (0x0000000000009999) is planned and not in the subnet");
	assert_string_equal(subnet_offender(&r, ROUTE_CABLE_NODE_UNPLANNED)->desc,
			    "h8 (0x0000000000001008) is in the subnet and not in the plan");
	route_findings_free(&r);
	route_plan_free(p);
	topology_put(f);
}

/* ---- the SA's copy (routingSource sa): ibsnmpd-discover --lft's lines ---- */

static void lft_lines_fill_the_tables(void **state)
{
	struct bed *b = *state;
	struct route_tables t;
	uint32_t sw_of_lid[15] = {0}, got[6] = {0};
	char line[300];
	size_t l0 = sw(b->f, &b->t, "l0");

	assert_int_equal(route_tables_init(&t, b->f, route_max_lid(b->f)), 0);
	for (size_t i = 0; i < t.n_switches; i++)
		sw_of_lid[b->f->nodes[t.switch_node[i]].lid] = (uint32_t)i + 1;
	/* l0 (LID 9): LID k out of port k % 4 + 1 */
	strcpy(line, "lft 9 0 ");
	for (unsigned k = 0; k < 64; k++)
		sprintf(line + strlen(line), "%02x", k % 4 + 1);
	strcat(line, "\n");
	assert_int_equal(route_lft_line(&t, sw_of_lid, 15, got, line, strlen(line)), 0);
	assert_int_equal(got[l0], 1);
	assert_int_equal(route_entry(&t, 6, l0), 3);
	assert_int_equal(route_entry(&t, 14, l0), 3);
	/* a LID that is no switch's, a block past the LIDs: skipped */
	line[4] = '3';
	assert_int_equal(route_lft_line(&t, sw_of_lid, 15, got, line, strlen(line)), 0);
	memcpy(line, "lft 9 7 ", 8);
	assert_int_equal(route_lft_line(&t, sw_of_lid, 15, got, line, strlen(line)), 0);
	assert_int_equal(got[l0], 1);
	assert_int_equal(route_lft_line(&t, sw_of_lid, 15, got, "done 0.5\n", 9), 1);
	/* malformed: refused, nothing put */
	{
		static const char *const bad[] = {
			"lft 9 0 0102\n", "lft x 0 00\n", "lft  9 0 01\n", "hello\n",
			"lft 9 0 zz02030401020304010203040102030401020304010203040102030401020304"
			"0102030401020304010203040102030401020304010203040102030401020304\n",
			"lft 99999 0 0102030401020304010203040102030401020304010203040102030401020304"
			"0102030401020304010203040102030401020304010203040102030401020304\n",
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			assert_int_equal(route_lft_line(&t, sw_of_lid, 15, got, bad[i], strlen(bad[i])),
					 -1);
	}
	assert_int_equal(got[l0], 1);
	route_tables_free(&t);
}

/* Blocks alike kept once; a read that takes the last tables over, with
 * more or fewer LIDs; the blocks it replaced dropped. */
static void tables_keep_blocks_alike_once(void **state)
{
	struct topology *f = fat_tree();
	struct route_tables t, u;
	uint8_t up[64], down[64];
	uint32_t before;

	(void)state;
	memset(up, 3, sizeof(up));
	memset(down, 1, sizeof(down));
	assert_int_equal(route_tables_init(&t, f, 200), 0); /* 4 blocks a switch */
	assert_int_equal(t.n_blocks, 1);                    /* none read */
	assert_int_equal(route_entry(&t, 200, 5), ROUTE_LFT_UNREAD);
	for (size_t s = 0; s < t.n_switches; s++)
		for (unsigned b = 0; b < 3; b++)
			assert_int_equal(route_tables_put_block(&t, s, b, s % 2 ? up : down), 0);
	assert_int_equal(t.n_blocks, 3);
	assert_int_equal(route_entry(&t, 130, 1), 3);
	assert_int_equal(route_entry(&t, 130, 2), 1);
	/* one entry: one block more, the others as they were */
	assert_int_equal(route_tables_set(&t, 1, 70, 4), 0);
	assert_int_equal(t.n_blocks, 4);
	assert_int_equal(route_entry(&t, 70, 1), 4);
	assert_int_equal(route_entry(&t, 71, 1), 3);
	assert_int_equal(route_entry(&t, 70, 3), 3);
	/* the last block past max_lid: none there, whatever was answered */
	assert_int_equal(route_tables_put_block(&t, 0, 3, up), 0);
	assert_int_equal(route_entry(&t, 200, 0), 3);
	/* taken over by a read of more LIDs: the new ones none read */
	assert_int_equal(route_tables_init(&u, f, 300), 0);
	assert_int_equal(route_tables_adopt(&u, &t), 0);
	assert_null(t.block_of);
	assert_int_equal(route_entry(&u, 70, 1), 4);
	assert_int_equal(route_entry(&u, 130, 2), 1);
	assert_int_equal(route_entry(&u, 300, 2), ROUTE_LFT_UNREAD);
	/* a block replaced, then dropped */
	before = u.n_blocks;
	assert_int_equal(route_tables_put_block(&u, 1, 1, up), 0);
	assert_int_equal(u.n_blocks, before);
	assert_int_equal(route_tables_compact(&u), 0);
	assert_int_equal(u.n_blocks, before - 1); /* the one of LID 70's change */
	assert_int_equal(route_entry(&u, 70, 1), 3);
	assert_int_equal(route_entry(&u, 130, 2), 1);
	assert_int_equal(route_entry(&u, 200, 0), 3);
	assert_int_equal(route_entry(&u, 250, 0), ROUTE_LFT_UNREAD);
	assert_int_equal(route_tables_set(&u, 2, 250, 2), 0); /* the index rebuilt */
	assert_int_equal(route_entry(&u, 250, 2), 2);
	/* blocks dropped below those kept: every entry as it was */
	{
		uint8_t seq[64];
		unsigned want[8][4];

		for (unsigned i = 0; i < 64; i++)
			seq[i] = (uint8_t)(i % 7);
		for (size_t s = 0; s < u.n_switches; s++)
			for (unsigned b = 0; b < 4; b++) {
				seq[0] = (uint8_t)(10 + s * 4 + b); /* every block unlike */
				assert_int_equal(route_tables_put_block(&u, s, b, seq), 0);
				want[s][b] = seq[0];
			}
		for (size_t s = 0; s < u.n_switches; s++) /* the first ones replaced */
			assert_int_equal(route_tables_put_block(&u, s, 0, down), 0);
		assert_int_equal(route_tables_compact(&u), 0);
		for (size_t s = 0; s < u.n_switches; s++)
			for (unsigned b = 1; b < 4; b++) {
				assert_int_equal(route_entry(&u, b * 64, s), want[s][b]);
				assert_int_equal(route_entry(&u, b * 64 + 13, s), 13 % 7);
			}
		assert_int_equal(route_entry(&u, 5, 3), 1);
	}
	/* fewer LIDs */
	assert_int_equal(route_tables_init(&t, f, 100), 0);
	assert_int_equal(route_tables_adopt(&t, &u), 0);
	assert_int_equal(route_entry(&t, 70, 1), 6 % 7);
	assert_int_equal(route_entry(&t, 10, 2), 1);
	route_tables_free(&t);
	topology_put(f);
}

static void names_are_whole(void **state)
{
	(void)state;
	for (unsigned k = 1; k <= ROUTE_CHECKS; k++)
		assert_non_null(route_check_name(k));
	assert_null(route_check_name(0));
	assert_null(route_check_name(ROUTE_CHECKS + 1));
	for (unsigned k = ROUTE_DEAD_UNASSIGNED; k <= ROUTE_OFFENSES; k++)
		assert_non_null(route_offense_name(k));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(clean_fat_tree_passes, bed_up, bed_down),
		cmocka_unit_test_setup_teardown(unassigned_entry_is_a_dead_end, bed_up, bed_down),
		cmocka_unit_test_setup_teardown(wrong_port_is_named, bed_up, bed_down),
		cmocka_unit_test_setup_teardown(a_loop_is_found, bed_up, bed_down),
		cmocka_unit_test_setup_teardown(down_then_up_is_found, bed_up, bed_down),
		cmocka_unit_test_setup_teardown(shares_find_what_one_walk_finds, bed_up, bed_down),
		cmocka_unit_test_setup_teardown(unbalanced_uplinks_are_found, bed_up, bed_down),
		cmocka_unit_test_setup_teardown(unread_switch_is_partial, bed_up, bed_down),
		cmocka_unit_test(ring_routed_one_way_has_a_credit_loop),
		cmocka_unit_test(credit_loops_are_per_vl_from_sl2vl),
		cmocka_unit_test(tables_keep_blocks_alike_once),
		cmocka_unit_test(clean_subnet_passes),
		cmocka_unit_test(duplicate_lid_names_both_ports),
		cmocka_unit_test(lmc_range_overlap_is_a_duplicate),
		cmocka_unit_test(duplicate_port_guid_is_found),
		cmocka_unit_test(active_port_without_lid_is_found),
		cmocka_unit_test(shared_description_is_said_not_failed),
		cmocka_unit_test(end_stuck_in_init_is_found_after_a_while),
		cmocka_unit_test(mtu_and_vls_below_both_ends_are_found),
		cmocka_unit_test(sm_master_and_standby_pass),
		cmocka_unit_test(sm_faults_are_found),
		cmocka_unit_test(ports_following_another_master_are_counted),
		cmocka_unit_test(plan_reads_ibnetdiscover_output),
		cmocka_unit_test(plan_refuses_with_the_line),
		cmocka_unit_test(cabling_as_planned_passes),
		cmocka_unit_test(swapped_cables_are_named_at_each_end),
		cmocka_unit_test(nodes_more_or_less_than_planned),
		cmocka_unit_test_setup_teardown(lft_lines_fill_the_tables, bed_up, bed_down),
		cmocka_unit_test(names_are_whole),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
