/* Slurm's hostlists and the tree of topology.conf (src/slurm/). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ibsnmpd/slurm.h"

/* ---- hostlists ---- */

struct names {
	char text[4096]; /* "a,b,c" */
	size_t n;
};

static int collect(void *arg, const char *name)
{
	struct names *v = arg;
	size_t len = strlen(v->text);

	snprintf(v->text + len, sizeof(v->text) - len, "%s%s", len ? "," : "", name);
	v->n++;
	return 0;
}

static void expands_to(const char *expr, const char *want)
{
	struct names v = {{0}, 0};
	char err[200] = "";

	if (slurm_hostlist_expand(expr, strlen(expr), collect, &v, err, sizeof(err)))
		fail_msg("'%s': %s", expr, err);
	assert_string_equal(v.text, want);
}

static void refused(const char *expr, const char *why)
{
	struct names v = {{0}, 0};
	char err[200] = "";

	assert_int_equal(slurm_hostlist_expand(expr, strlen(expr), collect, &v, err, sizeof(err)),
			 -1);
	if (!strstr(err, why))
		fail_msg("'%s': '%s' does not say '%s'", expr, err, why);
}

static void a_hostlist_expands_as_slurm_reads_it(void **state)
{
	(void)state;
	expands_to("h1", "h1");
	expands_to("h[1-3]", "h1,h2,h3");
	expands_to("tux[0-1,12],x", "tux0,tux1,tux12,x");
	expands_to("n[001-003]", "n001,n002,n003");
	expands_to("n[8-11]", "n8,n9,n10,n11");
	expands_to("r[1-2]n[1-2]", "r1n1,r1n2,r2n1,r2n2");
	expands_to("a-b[3],c.d", "a-b3,c.d");
	refused("h[1-", "without its ']'");
	refused("h1]", "without its '['");
	refused("h[[1]]", "inside brackets");
	refused("h[3-1]", "from 3 down to 1");
	refused("h[a]", "not N or N-M");
	refused("h[1,]", "not N or N-M");
	refused("h[]", "not N or N-M");
	refused("h1,,h2", "an empty name");
	refused("h[0-99999999]", "more than");
	refused("[0-999][0-999][0-999]", "more than");
}

static void compresses_to(const char *list, const char *want)
{
	const char *names[64];
	char buf[1024], *save = NULL, *got;
	size_t n = 0;

	snprintf(buf, sizeof(buf), "%s", list);
	for (char *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save))
		names[n++] = t;
	got = slurm_hostlist_compress(names, n);
	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void a_hostlist_is_written_ranged(void **state)
{
	(void)state;
	compresses_to("", "");
	compresses_to("h1", "h1");
	compresses_to("h3 h1 h2 h7 h2", "h[1-3,7]");
	compresses_to("h9 h10 h11", "h[9-11]");
	compresses_to("n001 n002 n010", "n[001-002,010]");
	compresses_to("n01 n1 n2", "n[1-2],n01");
	compresses_to("login x h1", "h1,login,x");
	compresses_to("r1n1 r1n2 r2n1", "r1n[1-2],r2n1");
	compresses_to("h99999999999999999999", "h99999999999999999999");
}

/* What a hostlist written reads back as the same hosts. */
static void a_written_hostlist_reads_back_the_same(void **state)
{
	const char *prefixes[] = {"h", "node", "n0", "r1-"};
	char store[200][16];
	const char *names[200];
	unsigned seed = 7;

	(void)state;
	for (int round = 0; round < 200; round++) {
		size_t n = (size_t)(rand_r(&seed) % 200);
		struct names v = {{0}, 0};
		char err[200], *list, wrapped[sizeof(v.text) + 2];

		for (size_t i = 0; i < n; i++) {
			unsigned num = (unsigned)rand_r(&seed) % 120;

			if (rand_r(&seed) % 3)
				snprintf(store[i], sizeof(store[i]), "%s%u",
					 prefixes[rand_r(&seed) % 4], num);
			else
				snprintf(store[i], sizeof(store[i]), "%s%03u",
					 prefixes[rand_r(&seed) % 4], num);
			names[i] = store[i];
		}
		list = slurm_hostlist_compress(names, n);
		assert_non_null(list);
		if (*list && slurm_hostlist_expand(list, strlen(list), collect, &v, err, sizeof(err)))
			fail_msg("'%s': %s", list, err);
		/* the same set: written again from what was read, the same text */
		{
			const char *back[200];
			char copy[4096], *save = NULL, *again;
			size_t m = 0;

			snprintf(copy, sizeof(copy), "%s", v.text);
			for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
				back[m++] = t;
			again = slurm_hostlist_compress(back, m);
			assert_string_equal(again, list);
			snprintf(wrapped, sizeof(wrapped), ",%s,", v.text);
			for (size_t i = 0; i < n; i++) {
				char key[20];

				snprintf(key, sizeof(key), ",%s,", names[i]);
				if (!strstr(wrapped, key))
					fail_msg("%s lost from '%s'", names[i], list);
			}
			free(again);
		}
		free(list);
	}
}

static struct slurm_hosts *parse_text(const char *text, const char *file, char *err,
				      size_t errlen)
{
	return slurm_hosts_parse(text, strlen(text), file, err, errlen);
}

static void the_hosts_slurm_knows_come_from_slurm_conf_or_a_list(void **state)
{
	char err[300] = "";
	const char conf[] =
		"ClusterName=ib\n"
		"NodeName=DEFAULT CPUs=4\n"
		"NodeName=h[1-3],gpu01 NodeAddr=127.0.0.1 # three and one\n"
		"  nodename=x7 CPUs=2\n"
		"PartitionName=all Nodes=ALL\n";
	struct slurm_hosts *h = slurm_hosts_parse(conf, strlen(conf), "slurm.conf", err, sizeof(err));

	(void)state;
	assert_non_null(h);
	assert_int_equal(slurm_hosts_count(h), 5);
	assert_true(slurm_hosts_has(h, "h2"));
	assert_true(slurm_hosts_has(h, "gpu01"));
	assert_true(slurm_hosts_has(h, "x7"));
	assert_false(slurm_hosts_has(h, "DEFAULT"));
	assert_false(slurm_hosts_has(h, "all"));
	slurm_hosts_free(h);

	h = parse_text("# hosts\nh[1-2] h2\nx1,x2 # more\n", "hosts", err, sizeof(err));
	assert_non_null(h);
	assert_int_equal(slurm_hosts_count(h), 4);
	assert_true(slurm_hosts_has(h, "x2"));
	slurm_hosts_free(h);

	assert_null(parse_text("h1\nh[2-\n", "/etc/hosts.list", err, sizeof(err)));
	assert_string_equal(err, "/etc/hosts.list:2: 'h[2-': a '[' without its ']'");
	assert_null(parse_text("NodeName=a\nNodeName= x\n", "s.conf", err, sizeof(err)));
	assert_string_equal(err, "s.conf:2: NodeName= names no host");
	assert_null(slurm_hosts_parse("h1\nh\0002\n", 7, "nul", err, sizeof(err)));
	assert_string_equal(err, "nul:2: a NUL byte");
}

/* ---- the tree ---- */

struct fabric {
	struct slurm_node nodes[256];
	size_t n;
	struct slurm_cable cables[1024];
	size_t n_cables;
	char names[256][32];
};

static uint64_t add_node(struct fabric *f, bool is_switch, const char *name)
{
	struct slurm_node *nd = &f->nodes[f->n];

	snprintf(f->names[f->n], sizeof(f->names[f->n]), "%s", name ? name : "");
	nd->guid = 0x0002c90300000000ULL + f->n + 1;
	nd->is_switch = is_switch;
	if (is_switch)
		nd->name = name ? f->names[f->n] : NULL;
	else
		nd->host = name ? f->names[f->n] : NULL;
	f->n++;
	return nd->guid;
}

static void cable(struct fabric *f, uint64_t a, uint64_t b)
{
	f->cables[f->n_cables++] = (struct slurm_cable){a, b};
}

/* The fabric's tree as render writes it, from the first from on ("": none). */
static void rendered_is(struct fabric *f, char *(*render)(const struct slurm_tree *),
			const char *from, const char *want)
{
	struct slurm_tree *t = slurm_tree_build(f->nodes, f->n, f->cables, f->n_cables);
	char *text;
	const char *body;

	assert_non_null(t);
	text = render(t);
	assert_non_null(text);
	body = strstr(text, from);
	assert_string_equal(body ? body : "", want);
	free(text);
	slurm_tree_free(t);
}

static void tree_is(struct fabric *f, const char *want)
{
	rendered_is(f, slurm_tree_conf, "SwitchName=", want);
}

/* The same tree as topology.yaml, from its document start on. */
static void yaml_is(struct fabric *f, const char *want)
{
	rendered_is(f, slurm_tree_yaml, "---\n", want);
}

/* Two spines over three leaves, four hosts a leaf: leaves with Nodes=, the
 * spines with Switches=, both spines over every leaf. */
static void a_fat_tree_of_two_levels(void **state)
{
	struct fabric *f = calloc(1, sizeof(*f));
	uint64_t spine[2], leaf[3];
	char name[32];

	(void)state;
	for (int s = 0; s < 2; s++) {
		snprintf(name, sizeof(name), "spine%d", s + 1);
		spine[s] = add_node(f, true, name);
	}
	for (int l = 0; l < 3; l++) {
		snprintf(name, sizeof(name), "leaf%02d", l + 1);
		leaf[l] = add_node(f, true, name);
		for (int s = 0; s < 2; s++) {
			cable(f, leaf[l], spine[s]);
			cable(f, spine[s], leaf[l]); /* both ends told: once */
		}
		for (int h = 0; h < 4; h++) {
			snprintf(name, sizeof(name), "h%d", l * 4 + h + 1);
			cable(f, add_node(f, false, name), leaf[l]);
		}
	}
	tree_is(f, "SwitchName=leaf01 Nodes=h[1-4]\n"
		   "SwitchName=leaf02 Nodes=h[5-8]\n"
		   "SwitchName=leaf03 Nodes=h[9-12]\n"
		   "SwitchName=spine1 Switches=leaf[01-03]\n"
		   "SwitchName=spine2 Switches=leaf[01-03]\n");
	/* topology.yaml: the tree alone (no host on several leaves) */
	yaml_is(f, "---\n"
		   "- topology: infiniband\n"
		   "  cluster_default: true\n"
		   "  tree:\n"
		   "    switches:\n"
		   "      - switch: 'leaf01'\n        nodes: 'h[1-4]'\n"
		   "      - switch: 'leaf02'\n        nodes: 'h[5-8]'\n"
		   "      - switch: 'leaf03'\n        nodes: 'h[9-12]'\n"
		   "      - switch: 'spine1'\n        children: 'leaf[01-03]'\n"
		   "      - switch: 'spine2'\n        children: 'leaf[01-03]'\n");
	free(f);
}

/* Two pods of two leaves each under their own spine, cores over both
 * spines: three tiers; a core over one pod only still stands. */
static void a_fat_tree_of_three_levels(void **state)
{
	struct fabric *f = calloc(1, sizeof(*f));
	uint64_t core[2], spine[2], leaf;
	char name[32];
	int host = 1;

	(void)state;
	for (int c = 0; c < 2; c++) {
		snprintf(name, sizeof(name), "core%d", c + 1);
		core[c] = add_node(f, true, name);
	}
	for (int p = 0; p < 2; p++) {
		snprintf(name, sizeof(name), "pod%d-spine", p + 1);
		spine[p] = add_node(f, true, name);
		cable(f, spine[p], core[0]);
		if (p == 0)
			cable(f, spine[p], core[1]);
		for (int l = 0; l < 2; l++) {
			snprintf(name, sizeof(name), "pod%d-leaf%d", p + 1, l + 1);
			leaf = add_node(f, true, name);
			cable(f, leaf, spine[p]);
			for (int h = 0; h < 2; h++, host++) {
				snprintf(name, sizeof(name), "node%03d", host);
				cable(f, add_node(f, false, name), leaf);
			}
		}
	}
	tree_is(f, "SwitchName=pod1-leaf1 Nodes=node[001-002]\n"
		   "SwitchName=pod1-leaf2 Nodes=node[003-004]\n"
		   "SwitchName=pod2-leaf1 Nodes=node[005-006]\n"
		   "SwitchName=pod2-leaf2 Nodes=node[007-008]\n"
		   "SwitchName=pod1-spine Switches=pod1-leaf[1-2]\n"
		   "SwitchName=pod2-spine Switches=pod2-leaf[1-2]\n"
		   "SwitchName=core1 Switches=pod1-spine,pod2-spine\n"
		   "SwitchName=core2 Switches=pod1-spine\n");
	free(f);
}

/* Rail-optimized: each host has an adapter on each of its unit's two rail
 * leaves; a unit's hosts form one switch of their own, under the spines
 * of its leaves. */
static void a_rail_optimized_fabric(void **state)
{
	struct fabric *f = calloc(1, sizeof(*f));
	uint64_t spine[2], rail[2][2];
	char name[32];

	(void)state;
	for (int r = 0; r < 2; r++) {
		snprintf(name, sizeof(name), "spine-r%d", r + 1);
		spine[r] = add_node(f, true, name);
	}
	for (int u = 0; u < 2; u++)
		for (int r = 0; r < 2; r++) {
			snprintf(name, sizeof(name), "su%d-r%d", u + 1, r + 1);
			rail[u][r] = add_node(f, true, name);
			cable(f, rail[u][r], spine[r]);
		}
	for (int u = 0; u < 2; u++)
		for (int h = 0; h < 3; h++) {
			snprintf(name, sizeof(name), "gpu%d", u * 3 + h + 1);
			for (int r = 0; r < 2; r++)
				cable(f, add_node(f, false, name), rail[u][r]);
		}
	tree_is(f, "SwitchName=su1-r1+1 Nodes=gpu[1-3]\n"
		   "SwitchName=su2-r1+1 Nodes=gpu[4-6]\n"
		   "SwitchName=spine-r1 Switches=su1-r1+1,su2-r1+1\n"
		   "SwitchName=spine-r2 Switches=su1-r1+1,su2-r1+1\n");
	/* a host on one rail only: under its leaf, a block of its own */
	cable(f, add_node(f, false, "cpu1"), rail[1][0]);
	yaml_is(f, "---\n"
		   "- topology: infiniband\n"
		   "  cluster_default: true\n"
		   "  tree:\n"
		   "    switches:\n"
		   "      - switch: 'su1-r1+1'\n        nodes: 'gpu[1-3]'\n"
		   "      - switch: 'su2-r1'\n        nodes: 'cpu1'\n"
		   "      - switch: 'su2-r1+1'\n        nodes: 'gpu[4-6]'\n"
		   "      - switch: 'spine-r1'\n        children: 'su1-r1+1,su2-r1,su2-r1+1'\n"
		   "      - switch: 'spine-r2'\n        children: 'su1-r1+1,su2-r1+1'\n"
		   "- topology: infiniband-units\n"
		   "  cluster_default: false\n"
		   "  block:\n"
		   "    blocks:\n"
		   "      - block: 'su1-r1+1'\n        nodes: 'gpu[1-3]'\n"
		   "      - block: 'su2-r1'\n        nodes: 'cpu1'\n"
		   "      - block: 'su2-r1+1'\n        nodes: 'gpu[4-6]'\n");
	free(f);
}

/* One switch: one line. A host with two adapters on it comes once; one
 * whose name Slurm cannot read, or cabled to nothing, is left out and
 * counted; a router (no host) is no host. */
static void a_single_switch_and_the_hosts_left_out(void **state)
{
	struct fabric *f = calloc(1, sizeof(*f));
	uint64_t sw = add_node(f, true, NULL);
	struct slurm_tree *t;

	(void)state;
	cable(f, add_node(f, false, "a1"), sw);
	cable(f, add_node(f, false, "a1"), sw);
	cable(f, add_node(f, false, "a2"), sw);
	cable(f, add_node(f, false, "bad name"), sw);
	cable(f, add_node(f, false, NULL), sw);
	add_node(f, false, "lonely");
	cable(f, sw, sw);
	cable(f, sw, 0x1234); /* a node not listed */
	tree_is(f, "SwitchName=ib-0002c90300000001 Nodes=a[1-2]\n");
	t = slurm_tree_build(f->nodes, f->n, f->cables, f->n_cables);
	assert_non_null(t);
	assert_int_equal(t->hosts, 2);
	assert_int_equal(t->hosts_bad_name, 1);
	assert_int_equal(t->hosts_uncabled, 1);
	slurm_tree_free(t);
	free(f);
}

/* Two switches of one name (a node-name map that says so) take their
 * GUIDs' names (every one of them); no fabric, no line. */
static void names_stay_unique(void **state)
{
	struct fabric *f = calloc(1, sizeof(*f));
	uint64_t a = add_node(f, true, "leaf"), b = add_node(f, true, "leaf"),
		 s = add_node(f, true, "spine");

	(void)state;
	tree_is(f, "");
	cable(f, a, s);
	cable(f, b, s);
	cable(f, add_node(f, false, "h1"), a);
	cable(f, add_node(f, false, "h2"), b);
	tree_is(f, "SwitchName=ib-0002c90300000001 Nodes=h1\n"
		   "SwitchName=ib-0002c90300000002 Nodes=h2\n"
		   "SwitchName=spine Switches=ib-0002c[90300000001-90300000002]\n");
	free(f);
}

/* Two leaves cabled to nothing above them (found by fuzz_slurm_tree: the
 * tier above had no switch): each its line, no top. */
static void leaves_with_nothing_above(void **state)
{
	struct fabric *f = calloc(1, sizeof(*f));
	uint64_t a = add_node(f, true, "la"), b = add_node(f, true, "lb");

	(void)state;
	cable(f, add_node(f, false, "h1"), a);
	cable(f, add_node(f, false, "h2"), b);
	tree_is(f, "SwitchName=la Nodes=h1\nSwitchName=lb Nodes=h2\n");
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(a_hostlist_expands_as_slurm_reads_it),
		cmocka_unit_test(a_hostlist_is_written_ranged),
		cmocka_unit_test(a_written_hostlist_reads_back_the_same),
		cmocka_unit_test(the_hosts_slurm_knows_come_from_slurm_conf_or_a_list),
		cmocka_unit_test(a_fat_tree_of_two_levels),
		cmocka_unit_test(a_fat_tree_of_three_levels),
		cmocka_unit_test(a_rail_optimized_fabric),
		cmocka_unit_test(a_single_switch_and_the_hosts_left_out),
		cmocka_unit_test(names_stay_unique),
		cmocka_unit_test(leaves_with_nothing_above),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
