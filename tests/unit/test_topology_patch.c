/* Following changes without a discovery (topology_patch.c): where the link
 * sweep's reading disagrees with a discovery, and the discovery patched
 * with what probes found, as a discovery by libibnetdisc would see the
 * changed fabric: nodes reached or gone, links, LIDs, routes, and the
 * ports that changed for the followers to read again.
 *
 * The fabric: host-1 (local, 0x10) on port 1 of sw-1 (0x100, 4 ports);
 * host-2 (0x20) on sw-1 port 2; sw-1 port 4 to sw-2 (0x200) port 4;
 * host-3 (0x30) on sw-2 port 1. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ibsnmpd/topology.h"

static const char fabric_text[] =
	"port 0000000000000010 1 1 0000000000000011 0000000000000100 1 4\n"
	"node 0000000000000010 1 1 1 host-1\n"
	"route 0000000000000010 0\n"
	"port 0000000000000020 1 2 0000000000000021 0000000000000100 2 4\n"
	"node 0000000000000020 1 1 2 host-2\n"
	"route 0000000000000020 2 1 2\n"
	"port 0000000000000030 1 3 0000000000000031 0000000000000200 1 4\n"
	"node 0000000000000030 1 1 3 host-3\n"
	"route 0000000000000030 3 1 4 1\n"
	"port 0000000000000100 1 5 0000000000000100 0000000000000010 1 4\n"
	"port 0000000000000100 2 5 0000000000000100 0000000000000020 1 4\n"
	"port 0000000000000100 3 5 0000000000000100 0000000000000000 0 0\n"
	"port 0000000000000100 4 5 0000000000000100 0000000000000200 4 4\n"
	"node 0000000000000100 2 4 5 sw-1\n"
	"route 0000000000000100 1 1\n"
	"port 0000000000000200 1 6 0000000000000200 0000000000000030 1 4\n"
	"port 0000000000000200 2 6 0000000000000200 0000000000000000 0 0\n"
	"port 0000000000000200 3 6 0000000000000200 0000000000000000 0 0\n"
	"port 0000000000000200 4 6 0000000000000200 0000000000000100 4 4\n"
	"node 0000000000000200 2 4 6 sw-2\n"
	"route 0000000000000200 2 1 4\n"
	"done 0.01\n";

/* Whether t's changed ports hold (guid, port). */
static bool topology_port_changed(const struct topology *t, uint64_t guid, unsigned port)
{
	const struct topo_port_ref key = {guid, port};

	return t->n_changed && bsearch(&key, t->changed, t->n_changed, sizeof(key),
				       topo_port_ref_cmp) != NULL;
}

static struct topology *fabric(void)
{
	char err[160];
	struct topology *f = topology_parse(fabric_text, strlen(fabric_text), NULL, err,
					    sizeof(err));

	assert_non_null(f);
	topology_get(f);
	return f;
}

static const struct topo_port *port_of(const struct topology *f, uint64_t guid, unsigned port)
{
	const struct topo_node *nd = topology_node(f, guid);

	return nd ? topology_port(f, (size_t)(nd - f->nodes), port) : NULL;
}

static void assert_route(const struct topology *f, uint64_t guid, unsigned hops, const uint8_t *r)
{
	const struct topo_node *nd = topology_node(f, guid);

	assert_non_null(nd);
	assert_true(nd->has_route);
	assert_int_equal(nd->route_hops, hops);
	assert_memory_equal(nd->route, r, hops);
}

static struct topology *finish(struct topo_patch *p)
{
	char err[160];
	struct topology *t = topology_patch_finish(p, NULL, err, sizeof(err));

	assert_non_null(t);
	topology_get(t);
	topology_patch_free(p);
	return t;
}

static void test_changes_seen(void **state)
{
	struct topology *f = fabric();
	const struct topo_link_seen seen[] = {
		{0x100, 1, true, 5, 4},  /* as discovered */
		{0x100, 2, false, 5, 0}, /* host-2's link down */
		{0x100, 3, true, 5, 4},  /* something on port 3 */
		{0x200, 1, true, 6, 4},
		{0x30, 1, true, 9, 4},   /* host-3 has another LID */
		{0x20, 1, true, 2, 4},   /* as discovered */
		{0x10, 1, false, 1, 0},  /* the local node: the discovery's root, not followed */
		{0x999, 1, true, 7, 4},  /* not in the topology */
		{0x100, 9, true, 5, 4},  /* no such port */
	};
	struct topo_change out[sizeof(seen) / sizeof(seen[0])];
	size_t n = topology_changes(f, seen, sizeof(seen) / sizeof(seen[0]), out);

	(void)state;
	assert_int_equal(n, 3);
	assert_int_equal(out[0].kind, TOPO_LINK_GONE);
	assert_int_equal(out[0].port, 2);
	assert_int_equal(out[1].kind, TOPO_LINK_NEW);
	assert_int_equal(out[1].port, 3);
	assert_int_equal(out[1].speed, 4);
	assert_int_equal(out[2].kind, TOPO_PORT_LID);
	assert_true(out[2].guid == 0x30);
	assert_int_equal(out[2].lid, 9);
	topology_put(f);
}

static void test_a_host_gone_and_back(void **state)
{
	struct topology *f = fabric(), *t, *u;
	struct topo_patch *p = topology_patch_begin(f);
	const struct topo_node host2 = {.guid = 0x20, .type = 1, .num_ports = 1, .desc = "host-2"};
	const uint8_t r[] = {1, 2};

	(void)state;
	topology_patch_unlink(p, 0x100, 2);
	t = finish(p);
	assert_int_equal(t->n_nodes, 4);
	assert_null(topology_node(t, 0x20));
	assert_int_equal(t->nodes_removed, 1);
	assert_int_equal(port_of(t, 0x100, 2)->peer_guid, 0);
	assert_int_equal(t->n_changed, 1); /* host-2's rows go with the node */
	assert_true(topology_port_changed(t, 0x100, 2));
	assert_int_equal(t->n_ports, f->n_ports - 1);

	/* back, as a probe finds it: NodeInfo, then its port's PortInfo */
	p = topology_patch_begin(t);
	assert_int_equal(topology_patch_add(p, &host2), 0);
	assert_int_equal(topology_patch_add(p, &host2), -1); /* there already */
	assert_int_equal(topology_patch_link(p, 0x100, 2, 0x20, 1), 0);
	assert_int_equal(topology_patch_port(p, 0x20, 1, 2, 0x21, 4), 0);
	assert_int_equal(topology_patch_port(p, 0x100, 2, 5, 0, 4), 0);
	u = finish(p);
	assert_int_equal(u->n_nodes, 5);
	assert_int_equal(u->nodes_added, 1);
	assert_int_equal(topology_node(u, 0x20)->lid, 2);
	assert_string_equal(topology_node(u, 0x20)->name, "host-2");
	assert_route(u, 0x20, 2, r);
	/* the same as the first discovery, port for port */
	assert_int_equal(u->n_ports, f->n_ports);
	for (size_t k = 0; k < f->n_ports; k++) {
		const struct topo_port *a = &f->ports[k], *b = &u->ports[k];

		assert_true(f->nodes[a->node].guid == u->nodes[b->node].guid);
		assert_int_equal(a->port, b->port);
		assert_true(a->peer_guid == b->peer_guid);
		assert_int_equal(a->peer_port, b->peer_port);
		assert_int_equal(a->lid, b->lid);
		assert_true(a->port_guid == b->port_guid);
		assert_int_equal(a->speed, b->speed);
	}
	assert_true(topology_port_changed(u, 0x20, 1));
	assert_true(topology_port_changed(u, 0x100, 2));
	assert_false(topology_port_changed(u, 0x100, 1));
	topology_put(f);
	topology_put(t);
	topology_put(u);
}

static void test_a_switch_gone_takes_what_is_behind(void **state)
{
	struct topology *f = fabric(), *t;
	struct topo_patch *p = topology_patch_begin(f);

	(void)state;
	topology_patch_unlink(p, 0x100, 4);
	t = finish(p);
	assert_int_equal(t->n_nodes, 3);
	assert_null(topology_node(t, 0x200));
	assert_null(topology_node(t, 0x30));
	assert_int_equal(t->nodes_removed, 2);
	assert_int_equal(port_of(t, 0x100, 4)->peer_guid, 0);
	topology_put(f);
	topology_put(t);
}

static void test_a_moved_cable_and_a_new_switch(void **state)
{
	struct topology *f = fabric(), *t;
	struct topo_patch *p = topology_patch_begin(f);
	const struct topo_node sw3 = {.guid = 0x300, .type = 2, .num_ports = 4, .lid = 8,
				      .desc = "sw-3"};
	const struct topo_node host4 = {.guid = 0x40, .type = 1, .num_ports = 2, .desc = "host-4"};
	const uint8_t r3[] = {1, 3}, r_sw3[] = {1, 4, 2}, r4[] = {1, 4, 2, 3};

	(void)state;
	/* host-3 from sw-2 port 1 to sw-1 port 3, its old end not yet seen down */
	assert_int_equal(topology_patch_link(p, 0x100, 3, 0x30, 1), 0);
	/* sw-3 on sw-2 port 2 (its port 1), host-4's port 2 on sw-3 port 3 */
	assert_int_equal(topology_patch_add(p, &sw3), 0);
	assert_int_equal(topology_patch_add(p, &host4), 0);
	assert_int_equal(topology_patch_link(p, 0x200, 2, 0x300, 1), 0);
	assert_int_equal(topology_patch_link(p, 0x300, 3, 0x40, 2), 0);
	assert_int_equal(topology_patch_port(p, 0x40, 2, 12, 0x42, 5), 0);
	assert_int_equal(topology_patch_port(p, 0x40, 3, 12, 0x42, 5), -1); /* no port 3 */
	assert_int_equal(topology_patch_link(p, 0x300, 9, 0x40, 1), -1);
	assert_int_equal(topology_patch_link(p, 0x300, 1, 0x999, 1), -1);
	t = finish(p);
	assert_int_equal(t->n_nodes, 7);
	assert_int_equal(t->nodes_added, 2);
	assert_int_equal(t->nodes_removed, 0);
	assert_int_equal(port_of(t, 0x200, 1)->peer_guid, 0); /* the old end, unlinked */
	assert_true(port_of(t, 0x30, 1)->peer_guid == 0x100);
	assert_route(t, 0x30, 2, r3);
	assert_route(t, 0x300, 3, r_sw3);
	assert_route(t, 0x40, 4, r4);
	/* a switch's ports at its LID, all of them in the topology */
	for (unsigned k = 1; k <= 4; k++)
		assert_int_equal(port_of(t, 0x300, k)->lid, 8);
	assert_int_equal(topology_node(t, 0x40)->lid, 12);
	assert_null(port_of(t, 0x40, 1)); /* a CA's port not linked */
	assert_true(topology_port_changed(t, 0x200, 1));
	assert_true(topology_port_changed(t, 0x300, 4));
	assert_true(topology_port_changed(t, 0x40, 2));
	assert_false(topology_port_changed(t, 0x200, 4));
	topology_put(f);
	topology_put(t);
}

/* ---- a discovery that did not find a node (topology_keep.c) ---- */

/* The fabric again, sw-2 and host-3 not found: sw-1's port 4 as given */
static struct topology *without_sw2(const char *port4)
{
	char text[sizeof(fabric_text)], err[160];
	const char *keep[] = {"0000000000000010", "0000000000000020", "0000000000000100 1",
			      "0000000000000100 2", "0000000000000100 3", "node 0000000000000100",
			      "route 0000000000000100", "done"};
	const char *line = fabric_text;
	struct topology *f;

	text[0] = 0;
	while (*line) {
		const char *end = strchr(line, '\n') + 1;
		bool wanted = false;

		for (size_t k = 0; k < sizeof(keep) / sizeof(keep[0]); k++)
			wanted |= memmem(line, (size_t)(end - line), keep[k], strlen(keep[k])) != NULL;
		if (!strncmp(line, "node 0000000000000100", 21))
			strcat(text, port4); /* sw-1's port lines come before its node line */
		if (wanted)
			strncat(text, line, (size_t)(end - line));
		line = end;
	}
	f = topology_parse(text, strlen(text), NULL, err, sizeof(err));
	assert_non_null(f);
	return f;
}

static void test_nodes_unanswered_behind_a_port_up_are_kept(void **state)
{
	struct topology *prev = fabric(), *f;
	size_t kept;

	(void)state;
	/* sw-1's port 4 is up and names no node: sw-2's NodeInfo went
	 * unanswered, and host-3 behind it was not asked */
	f = without_sw2("port 0000000000000100 4 5 0000000000000100 0000000000000000 0 4\n");
	assert_int_equal(f->n_nodes, 3);
	f = topology_keep_unanswered(prev, f, &kept);
	assert_int_equal(kept, 2);
	assert_int_equal(f->n_nodes, 5);
	assert_int_equal(f->n_ports, prev->n_ports);
	for (size_t i = 0; i < f->n_ports; i++) { /* every link as it was */
		const struct topo_port *p = &f->ports[i];
		const struct topo_port *was = port_of(prev, f->nodes[p->node].guid, p->port);

		assert_non_null(was);
		assert_true(p->peer_guid == was->peer_guid && p->peer_port == was->peer_port);
		assert_int_equal(p->lid, was->lid);
	}
	assert_non_null(topology_node(f, 0x30));
	assert_int_equal(topology_name_nodes(f, NULL), 0);
	assert_string_equal(topology_node(f, 0x200)->name, "sw-2");
	topology_free(f);
	topology_put(prev);
}

static void test_nodes_behind_a_port_down_are_gone(void **state)
{
	struct topology *prev = fabric(), *f;
	size_t kept;

	(void)state;
	/* sw-1's port 4 says down (speed 0): an answer, sw-2 is gone */
	f = without_sw2("port 0000000000000100 4 5 0000000000000100 0000000000000000 0 0\n");
	f = topology_keep_unanswered(prev, f, &kept);
	assert_int_equal(kept, 0);
	assert_int_equal(f->n_nodes, 3);
	assert_null(topology_node(f, 0x200));
	topology_free(f);
	topology_put(prev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_changes_seen),
		cmocka_unit_test(test_a_host_gone_and_back),
		cmocka_unit_test(test_a_switch_gone_takes_what_is_behind),
		cmocka_unit_test(test_a_moved_cable_and_a_new_switch),
		cmocka_unit_test(test_nodes_unanswered_behind_a_port_up_are_kept),
		cmocka_unit_test(test_nodes_behind_a_port_down_are_gone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
