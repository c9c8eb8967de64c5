/* ibsnmpd.conf value parsers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <cmocka.h>
#include <string.h>

#include "ibsnmpd/config.h"

static void uint_accepts_range_and_rejects_junk(void **state)
{
	unsigned v = 0;
	const char *why = NULL;

	(void)state;
	assert_int_equal(config_parse_uint("500", 1, 60000, &v, &why), 0);
	assert_int_equal(v, 500);
	assert_int_equal(config_parse_uint("  7 ", 1, 10, &v, &why), 0);
	assert_int_equal(v, 7);
	assert_int_equal(config_parse_uint("0", 1, 10, &v, &why), -1);
	assert_string_equal(why, "out of range");
	assert_int_equal(config_parse_uint("abc", 1, 10, &v, &why), -1);
	assert_string_equal(why, "not a whole number");
	assert_int_equal(config_parse_uint("5x", 1, 10, &v, &why), -1);
	assert_int_equal(config_parse_uint("-1", 0, 10, &v, &why), -1);
	assert_int_equal(config_parse_uint("", 0, 10, &v, &why), -1);
	assert_int_equal(config_parse_uint(NULL, 0, 10, &v, &why), -1);
	assert_int_equal(config_parse_uint("99999999999999999999", 0, 10, &v, &why), -1);
	assert_int_equal(v, 7); /* untouched on error */
}

static void bool_words(void **state)
{
	bool b = false;
	const char *why;

	(void)state;
	assert_int_equal(config_parse_bool("yes", &b, &why), 0);
	assert_true(b);
	assert_int_equal(config_parse_bool("Off", &b, &why), 0);
	assert_false(b);
	assert_int_equal(config_parse_bool("maybe", &b, &why), -1);
	assert_int_equal(config_parse_bool(NULL, &b, &why), -1);
}

/* Groups as areas declare them (area.h). */
static const struct cache_decl node_info = {1, "nodeInfo", 60, 0};
static const struct cache_decl pm_counters = {14, "pmCounters", 15, 0};
static const struct cache_decl *const decls[] = {&node_info, &pm_counters};

static void cache_lifetime_lines(void **state)
{
	size_t g;
	unsigned s;
	const char *why;

	(void)state;
	assert_int_equal(config_parse_cache_lifetime("nodeInfo 30", decls, 2, &g, &s, &why), 0);
	assert_ptr_equal(decls[g], &node_info);
	assert_int_equal(s, 30);
	assert_int_equal(config_parse_cache_lifetime("pmcounters 5", decls, 2, &g, &s, &why), 0);
	assert_ptr_equal(decls[g], &pm_counters);
	assert_int_equal(config_parse_cache_lifetime("bogusGroup 5", decls, 2, &g, &s, &why), -1);
	assert_string_equal(why, "unknown cache group");
	assert_int_equal(config_parse_cache_lifetime("nodeInfo", decls, 2, &g, &s, &why), -1);
	assert_int_equal(config_parse_cache_lifetime("nodeInfo 5 6", decls, 2, &g, &s, &why), -1);
	assert_int_equal(config_parse_cache_lifetime("nodeInfo 0", decls, 2, &g, &s, &why), -1);
}

static void paths(void **state)
{
	char out[16];
	const char *why;

	(void)state;
	assert_int_equal(config_parse_path(" /etc/x.conf ", out, sizeof(out), &why), 0);
	assert_string_equal(out, "/etc/x.conf");
	assert_int_equal(config_parse_path("etc/x.conf", out, sizeof(out), &why), -1);
	assert_string_equal(why, "expected one absolute path");
	assert_int_equal(config_parse_path("/a /b", out, sizeof(out), &why), -1);
	assert_int_equal(config_parse_path("", out, sizeof(out), &why), -1);
	assert_int_equal(config_parse_path("/a-path-of-sixteen", out, sizeof(out), &why), -1);
	assert_string_equal(why, "expected one absolute path (at most 15 characters)");
}

static void guids(void **state)
{
	uint64_t g;
	const char *why;

	(void)state;
	assert_int_equal(config_parse_guid("0x0002c90300a1b2c3", &g, &why), 0);
	assert_true(g == 0x0002c90300a1b2c3ULL);
	assert_int_equal(config_parse_guid("FFFFFFFFFFFFFFFF", &g, &why), 0);
	assert_true(g == UINT64_MAX);
	assert_int_equal(config_parse_guid("100004", &g, &why), 0);
	assert_true(g == 0x100004);
	assert_int_equal(config_parse_guid("0x", &g, &why), -1);
	assert_int_equal(config_parse_guid("0x12345678901234567", &g, &why), -1);
	assert_int_equal(config_parse_guid("0xg1", &g, &why), -1);
	assert_int_equal(config_parse_guid("0x1 0x2", &g, &why), -1);
	assert_int_equal(config_parse_guid(NULL, &g, &why), -1);
}

static void node_context_types(void **state)
{
	const char *why = NULL;
	unsigned m = 99;

	(void)state;
	assert_int_equal(config_parse_node_types("switch", &m, &why), 0);
	assert_int_equal(m, 1u << 2);
	assert_int_equal(config_parse_node_types(" CA  router switch ", &m, &why), 0);
	assert_int_equal(m, 1u << 1 | 1u << 2 | 1u << 3);
	assert_int_equal(config_parse_node_types("none", &m, &why), 0);
	assert_int_equal(m, 0);
	assert_int_equal(config_parse_node_types("switch none", &m, &why), -1);
	assert_string_equal(why, "none goes alone");
	assert_int_equal(config_parse_node_types("switches", &m, &why), -1);
	assert_int_equal(config_parse_node_types("", &m, &why), -1);
	assert_int_equal(config_parse_node_types(NULL, &m, &why), -1);
}

static void token_lines(void **state)
{
	static const char text[] = "# agentaddress udp:1\nmadTimeout 500\n  AgentAddress\tudp:161\n";

	(void)state;
	assert_true(config_text_has_token(text, strlen(text), "agentaddress"));
	assert_false(config_text_has_token(text, 30, "agentaddress"));  /* the comment only */
	assert_false(config_text_has_token("agentaddress\n", 13, "agentaddress")); /* no value */
	assert_false(config_text_has_token("agentaddresses x\n", 17, "agentaddress"));
	assert_false(config_text_has_token("", 0, "agentaddress"));
}

static void defaults(void **state)
{
	struct ibsnmpd_config c;

	(void)state;
	config_set_defaults(&c);
	assert_int_equal(c.port_num, 0);
	assert_string_equal(c.ca_name, "");
	assert_int_equal(c.mad_timeout_ms, 1000);
	assert_false(c.expose_keys);
	assert_int_equal(c.node_context_types, 1u << 2 | 1u << 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(uint_accepts_range_and_rejects_junk),
		cmocka_unit_test(bool_words),
		cmocka_unit_test(cache_lifetime_lines),
		cmocka_unit_test(paths),
		cmocka_unit_test(guids),
		cmocka_unit_test(node_context_types),
		cmocka_unit_test(token_lines),
		cmocka_unit_test(defaults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
