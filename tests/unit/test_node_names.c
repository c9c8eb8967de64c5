/* Node-name maps as infiniband-diags reads them, and the unique names
 * served for nodes (src/base/node_names.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ibsnmpd/node_names.h"
#include "ibsnmpd/topology.h"

static struct node_name_map *parse(const char *text)
{
	char err[300];
	struct node_name_map *m = node_name_map_parse(text, strlen(text), "map", err, sizeof(err));

	if (!m)
		fail_msg("%s", err);
	return m;
}

static void refused(const char *text, const char *why)
{
	char err[300];

	assert_null(node_name_map_parse(text, strlen(text), "/etc/rdma/ib-node-name-map", err,
					sizeof(err)));
	if (!strstr(err, why))
		fail_msg("'%s' does not say '%s'", err, why);
}

/* What ibnetdiscover(8) documents, and what its reader makes of the
 * lines it is lax about. */
static void a_map_reads_as_the_tools_read_it(void **state)
{
	struct node_name_map *m = parse(
		"# comment\n"
		"\n"
		"   \t\n"
		"0x0002c903000a1b2c \"leaf01\"\n"
		"0x0002c903000a1b2d   \"spine 01\"   # the first spine\n"
		"0x0002c903000a1b2e unquoted name\n"
		"0x0002c903000a1b2f \"\"\n"                /* no name: maps nothing */
		"0x0002c903000a1b30\n"                     /* likewise */
		"0x0002c903000a1b2c \"leaf01 again\"\n"    /* the first line counts */
		"0x0002c903000a1b31#\"hashed\"\n"
		"1234 \"decimal\"\r\n"
		"0x0002c903000a1b32 \"dos\"\r\n"
		"0x0002c903000a1b33 name # comment\n"
		"  0x0002C903000A1B34 \"upper\"");         /* no newline at the end */

	(void)state;
	assert_string_equal(node_name_map_find(m, 0x0002c903000a1b2cULL), "leaf01");
	assert_string_equal(node_name_map_find(m, 0x0002c903000a1b2dULL), "spine 01");
	assert_string_equal(node_name_map_find(m, 0x0002c903000a1b2eULL), "unquoted name");
	assert_null(node_name_map_find(m, 0x0002c903000a1b2fULL));
	assert_null(node_name_map_find(m, 0x0002c903000a1b30ULL));
	assert_string_equal(node_name_map_find(m, 0x0002c903000a1b31ULL), "hashed");
	assert_string_equal(node_name_map_find(m, 1234), "decimal");
	assert_string_equal(node_name_map_find(m, 0x0002c903000a1b32ULL), "dos");
	/* strtok's first token: the space before the '#' is the name's */
	assert_string_equal(node_name_map_find(m, 0x0002c903000a1b33ULL), "name ");
	assert_string_equal(node_name_map_find(m, 0x0002c903000a1b34ULL), "upper");
	assert_int_equal(node_name_map_count(m), 8);
	node_name_map_free(m);
}

static void a_bad_line_refuses_the_map_naming_its_line(void **state)
{
	char big[400];

	(void)state;
	refused("0x1 \"a\"\nleaf01 0x2\n", "/etc/rdma/ib-node-name-map:2: a line must start");
	refused("0x1 \"a\"\n\n0x2x \"b\"\n", ":3: the GUID is not a number");
	refused("-1 \"a\"\n", ":1: a line must start");
	refused("0x10000000000000000 \"a\"\n", ":1: the GUID is longer than 64 bits");
	memset(big, 'a', sizeof(big));
	memcpy(big, "0x1 ", 4);
	big[sizeof(big) - 1] = '\0';
	refused(big, ":1: the line is longer than 255");
	{
		char err[100];
		static const char nul[] = "0x1 \"a\0b\"\n";

		assert_null(node_name_map_parse(nul, sizeof(nul) - 1, "m", err, sizeof(err)));
		assert_non_null(strstr(err, "m:1: the line holds a NUL"));
	}
	/* an empty file is an empty map */
	{
		struct node_name_map *m = parse("");

		assert_int_equal(node_name_map_count(m), 0);
		node_name_map_free(m);
	}
}

static void maps_compare_by_their_names(void **state)
{
	struct node_name_map *a = parse("0x1 \"a\"\n0x2 \"b\"\n");
	struct node_name_map *b = parse("0x2 \"b\"\n# x\n0x1 \"a\"\n");
	struct node_name_map *c = parse("0x1 \"a\"\n0x2 \"c\"\n");

	(void)state;
	assert_true(node_name_map_same(a, b));
	assert_false(node_name_map_same(a, c));
	assert_false(node_name_map_same(a, NULL));
	assert_true(node_name_map_same(NULL, NULL));
	node_name_map_free(a);
	node_name_map_free(b);
	node_name_map_free(c);
}

static const char *name_of(struct node_naming *items, size_t n, uint64_t guid)
{
	for (size_t k = 0; k < n; k++)
		if (items[k].guid == guid)
			return items[k].name;
	return NULL;
}

/* Switches of a model share their factory description: each gets its
 * GUID's last octets; a mapped one its name; a unique one stays as it is;
 * none shares a name with another. */
static void names_are_unique_and_follow_the_map(void **state)
{
	struct node_name_map *m = parse("0x0002c90300000003 \"leaf03\"\n"
					"0x0002c90300000010 \"Quantum-2 Mellanox Technologies\"\n"
					"0x0002c90300000020 \"twin\"\n0x0002c90300000021 \"twin\"\n");
	struct node_naming items[] = {
		{0x0002c90300000001ULL, "Quantum-2 Mellanox Technologies", NULL},
		{0x0002c90300000002ULL, "Quantum-2 Mellanox Technologies", NULL},
		{0x0002c90300000003ULL, "Quantum-2 Mellanox Technologies", NULL},
		{0x0002c90300000004ULL, "node17 mlx5_0", NULL},
		{0x0002c90300000010ULL, "whatever it says", NULL},
		{0x0002c90300000020ULL, "a", NULL},
		{0x0002c90300000021ULL, "b", NULL},
		{0x0002c90300000030ULL, "", NULL},
		{0x0002c90300000031ULL, "tab\there\x01", NULL},
		/* the same last octets under another OUI */
		{0x0008f10400000001ULL, "Quantum-2 Mellanox Technologies", NULL},
	};
	size_t n = sizeof(items) / sizeof(*items);
	char *pool = node_names_assign(items, n, m);

	(void)state;
	assert_non_null(pool);
	assert_string_equal(name_of(items, n, 0x0002c90300000001ULL),
			    "Quantum-2 Mellanox Technologies [0x0002c90300000001]");
	assert_string_equal(name_of(items, n, 0x0008f10400000001ULL),
			    "Quantum-2 Mellanox Technologies [0x0008f10400000001]");
	assert_string_equal(name_of(items, n, 0x0002c90300000002ULL),
			    "Quantum-2 Mellanox Technologies [000002]");
	assert_string_equal(name_of(items, n, 0x0002c90300000003ULL), "leaf03");
	assert_string_equal(name_of(items, n, 0x0002c90300000004ULL), "node17 mlx5_0");
	/* the one mapped keeps its name over the descriptions that collide */
	assert_string_equal(name_of(items, n, 0x0002c90300000010ULL),
			    "Quantum-2 Mellanox Technologies");
	/* two mapped to one name: both told apart */
	assert_string_equal(name_of(items, n, 0x0002c90300000020ULL), "twin [000020]");
	assert_string_equal(name_of(items, n, 0x0002c90300000021ULL), "twin [000021]");
	assert_string_equal(name_of(items, n, 0x0002c90300000030ULL), "0x0002c90300000030");
	assert_string_equal(name_of(items, n, 0x0002c90300000031ULL), "tab here ");
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			assert_string_not_equal(items[i].name, items[j].name);
	free(pool);
	node_name_map_free(m);
}

/* The names stay while the fabric does: the order nodes come in does not
 * change them, nor does another discovery of the same nodes. */
static void names_do_not_depend_on_the_order(void **state)
{
	struct node_naming a[] = {
		{0x10, "sw", NULL}, {0x11, "sw", NULL}, {0x12, "host mlx5_0", NULL},
	};
	struct node_naming b[] = {
		{0x12, "host mlx5_0", NULL}, {0x11, "sw", NULL}, {0x10, "sw", NULL},
	};
	char *pa = node_names_assign(a, 3, NULL), *pb = node_names_assign(b, 3, NULL);

	(void)state;
	for (size_t k = 0; k < 3; k++)
		assert_string_equal(a[k].name, name_of(b, 3, a[k].guid));
	free(pa);
	free(pb);
}

/* A discovery's nodes are named without a map; renamed after one, the
 * copy is the same discovery with the new names. */
static void a_topology_is_renamed_after_a_map(void **state)
{
	static const char out[] = "port 0000000000000001 1 1\n"
				  "node 0000000000000001 2 8 1 Quantum-2 Mellanox Technologies\n"
				  "port 0000000000000002 1 2\n"
				  "node 0000000000000002 2 8 2 Quantum-2 Mellanox Technologies\n"
				  "done 0.1\n";
	char err[100];
	struct topology *f = topology_parse(out, sizeof(out) - 1, NULL, err, sizeof(err));
	struct node_name_map *m = parse("0x2 \"leaf02\"\n");
	struct topology *r;

	(void)state;
	assert_non_null(f);
	assert_string_equal(f->nodes[0].name, "Quantum-2 Mellanox Technologies [000001]");
	assert_string_equal(f->nodes[1].name, "Quantum-2 Mellanox Technologies [000002]");
	r = topology_renamed(f, m);
	assert_non_null(r);
	assert_string_equal(r->nodes[0].name, "Quantum-2 Mellanox Technologies");
	assert_string_equal(r->nodes[1].name, "leaf02");
	assert_string_equal(r->nodes[1].desc, "Quantum-2 Mellanox Technologies");
	assert_int_equal(r->n_ports, 2);
	assert_int_equal(r->ports[1].lid, 2);
	topology_free(f);
	topology_free(r);
	node_name_map_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_map_reads_as_the_tools_read_it),
		cmocka_unit_test(a_bad_line_refuses_the_map_naming_its_line),
		cmocka_unit_test(maps_compare_by_their_names),
		cmocka_unit_test(names_are_unique_and_follow_the_map),
		cmocka_unit_test(names_do_not_depend_on_the_order),
		cmocka_unit_test(a_topology_is_renamed_after_a_map),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
