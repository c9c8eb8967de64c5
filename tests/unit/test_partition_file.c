/* opensm's partition file: parsed, changed, rendered with everything else
 * kept byte for byte. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pkey/partition_file.h"

static const char file[] =
	"# site partitions\n"
	"Default=0x7fff, ipoib : ALL=full ;\n"
	"\n"
	"storage=0x8001, ipoib, mtu=4, defmember=full, qkey=0x1234 :\n"
	"    0x0000000000100001, # head node\n"
	"    0x0000000000100003=limited ;\n"
	"compute = 0x0010 : ALL_CAS ; # trailing comment\n";

static void parses_entries_flags_members(void **state)
{
	struct partition_file pf;
	char err[128];
	struct partition *p;

	(void)state;
	assert_int_equal(partition_file_parse(file, strlen(file), &pf, err, sizeof(err)), 0);
	assert_int_equal(pf.n_parts, 3);
	p = partition_find_pkey(&pf, 1);
	assert_non_null(p);
	assert_string_equal(p->name, "storage");
	assert_true(p->ipoib);
	assert_int_equal(p->mtu, 4);
	assert_int_equal(p->rate, -1);
	assert_int_equal(p->defmember, MEMBER_FULL);
	assert_string_equal(p->other_flags, "qkey=0x1234");
	assert_int_equal(p->n_members, 2);
	assert_true(p->members[0].guid == 0x100001);
	assert_int_equal(partition_member_effective(p, &p->members[0]), MEMBER_FULL);
	assert_int_equal(partition_member_effective(p, &p->members[1]), MEMBER_LIMITED);
	assert_int_equal(p->line, 4);
	p = partition_find_pkey(&pf, 0x7fff);
	assert_non_null(p);
	assert_false(p->members[0].is_guid);
	assert_string_equal(p->members[0].keyword, "ALL");
	assert_non_null(partition_find_name(&pf, "compute"));
	partition_file_free(&pf);
}

static void untouched_file_renders_identically(void **state)
{
	struct partition_file pf;
	char err[128], *out;
	size_t len;

	(void)state;
	assert_int_equal(partition_file_parse(file, strlen(file), &pf, err, sizeof(err)), 0);
	out = partition_file_render(&pf, &len);
	assert_non_null(out);
	assert_int_equal(len, strlen(file));
	assert_memory_equal(out, file, len);
	free(out);
	partition_file_free(&pf);
}

static void changes_touch_only_their_entries(void **state)
{
	struct partition_file pf, again;
	char err[128], *out;
	size_t len;
	struct partition *p;

	(void)state;
	assert_int_equal(partition_file_parse(file, strlen(file), &pf, err, sizeof(err)), 0);
	p = partition_find_pkey(&pf, 1);
	partition_add_member(p, 0x100005, MEMBER_BOTH);
	partition_find_name(&pf, "compute")->removed = true;
	p = partition_add(&pf, "web", 0x0020);
	partition_add_member(p, 0x100001, MEMBER_FULL);
	out = partition_file_render(&pf, &len);
	assert_non_null(out);
	/* the comment line and the Default entry are as they were */
	assert_memory_equal(out, file, strlen("# site partitions\nDefault=0x7fff, ipoib : ALL=full ;\n\n"));
	assert_non_null(strstr(out, "storage=0x0001, ipoib, mtu=4, defmember=full, qkey=0x1234 : "
				    "0x0000000000100001, 0x0000000000100003=limited, "
				    "0x0000000000100005=both ;"));
	assert_null(strstr(out, "compute"));
	assert_non_null(strstr(out, "# trailing comment\n"));
	assert_non_null(strstr(out, "web=0x0020 : 0x0000000000100001=full ;\n"));
	/* what is written parses again */
	assert_int_equal(partition_file_parse(out, len, &again, err, sizeof(err)), 0);
	assert_int_equal(again.n_parts, 3);
	assert_int_equal(partition_find_pkey(&again, 1)->n_members, 3);
	partition_file_free(&again);
	free(out);
	partition_file_free(&pf);
}

static void bad_files_name_the_line(void **state)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{"a=0x1 : ALL ;\nb=0x2 : 0x12\n", "line 2: entry without a closing ';'"},
		{"a=0x1 ALL ;", "line 1: expected"},
		{"\n\na=zz : ALL ;", "line 3: P_Key"},
		{"a=0x1 : 0x1=most ;", "line 1: membership"},
		{"a=0x1 : 0xnothex ;", "line 1: port GUID"},
		{"a=0x1 : EVERYONE ;", "line 1: member"},
		{"a b=0x1 : ALL ;", "line 1: partition name"},
		{"a=0x1 : ALL ;\na=0x2 : ALL ;", "line 2: P_Key or name of line 1"},
		{"a=0x1, mtu=big : ALL ;", "line 1: mtu"},
	};
	struct partition_file pf;
	char err[128];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(partition_file_parse(cases[i].text, strlen(cases[i].text), &pf,
						      err, sizeof(err)), -1);
		assert_non_null(strstr(err, cases[i].want));
	}
}

static void copies_are_deep(void **state)
{
	struct partition_file pf, copy;
	char err[128];

	(void)state;
	assert_int_equal(partition_file_parse(file, strlen(file), &pf, err, sizeof(err)), 0);
	assert_int_equal(partition_file_copy(&pf, &copy), 0);
	partition_remove_member(partition_find_pkey(&copy, 1), 0x100001);
	assert_int_equal(partition_find_pkey(&pf, 1)->n_members, 2);
	assert_int_equal(partition_find_pkey(&copy, 1)->n_members, 1);
	partition_file_free(&copy);
	partition_file_free(&pf);
	assert_true(partition_name_valid("a.b-c_d+e", 9));
	assert_false(partition_name_valid("a:b", 3));
	assert_false(partition_name_valid("", 0));
}

/* The seed's "Disconnect Unconfigured EndPorts": the Default entry's ALL member. */
static char *render_after(const char *text, bool connected)
{
	struct partition_file pf;
	char err[128], *out;
	size_t len;

	assert_int_equal(partition_file_parse(text, strlen(text), &pf, err, sizeof(err)), 0);
	assert_int_equal(partition_set_unconfigured_connected(&pf, connected), 0);
	assert_true(partition_unconfigured_connected(&pf) == connected);
	out = partition_file_render(&pf, &len);
	partition_file_free(&pf);
	return out;
}

static void unconfigured_ports_flag(void **state)
{
	static const char none[] = "# no Default entry\nstorage=0x0001 : 0x0000000000100001 ;\n";
	static const char limited[] = "Default=0x7fff, ipoib : ALL=limited, SELF=full ;\n";
	static const char by_default[] = "Default=0x7fff, defmember=full : ALL_CAS ; # cas\n";
	struct partition_file pf;
	char err[128], *out;

	(void)state;
	assert_int_equal(partition_file_parse(file, strlen(file), &pf, err, sizeof(err)), 0);
	assert_true(partition_unconfigured_connected(&pf));
	partition_file_free(&pf);
	assert_int_equal(partition_file_parse(none, strlen(none), &pf, err, sizeof(err)), 0);
	assert_false(partition_unconfigured_connected(&pf));
	partition_file_free(&pf);

	/* isolated: ALL=limited in place, nothing else touched */
	out = render_after(file, false);
	assert_non_null(strstr(out, "Default=0x7fff, ipoib : ALL=limited ;\n"));
	assert_non_null(strstr(out, "    0x0000000000100003=limited ;\n"));
	free(out);
	out = render_after(by_default, false);
	assert_string_equal(out, "Default=0x7fff, defmember=full : ALL_CAS=limited ; # cas\n");
	free(out);
	/* connected: the ALL member made full, or a Default entry added */
	out = render_after(limited, true);
	assert_string_equal(out, "Default=0x7fff, ipoib : ALL=full, SELF=full ;\n");
	free(out);
	out = render_after(none, true);
	assert_string_equal(out, "# no Default entry\nstorage=0x0001 : 0x0000000000100001 ;\n"
				 "Default=0x7fff : ALL=full ;\n");
	free(out);
	/* already so: the file stays byte for byte */
	out = render_after(file, true);
	assert_string_equal(out, file);
	free(out);
}

/* Found by libFuzzer (fuzz_partition_file): a file with NUL octets parsed
 * as less than it held, and a partition named Default with another P_Key
 * made the flag's SET add a second "Default" entry, which no parser takes. */
static void fuzzer_findings(void **state)
{
	static const char with_nul[] = "Default=0x6fff, ipoib : \0\0DaDa, ipoib : ALL=full ;\n";
	static const char default_elsewhere[] = "Default=0x6fff, ipoib : ;\n";
	struct partition_file pf;
	char err[200], *text;
	size_t len;

	(void)state;
	assert_int_equal(partition_file_parse(with_nul, sizeof(with_nul) - 1, &pf, err,
					      sizeof(err)), -1);
	assert_string_equal(err, "line 1: a NUL octet: not a text file");
	assert_int_equal(partition_file_parse(default_elsewhere, strlen(default_elsewhere), &pf,
					      err, sizeof(err)), 0);
	assert_false(partition_unconfigured_connected(&pf));
	assert_int_equal(partition_set_unconfigured_connected(&pf, true), 1);
	text = partition_file_render(&pf, &len);
	assert_string_equal(text, default_elsewhere); /* unchanged */
	free(text);
	partition_file_free(&pf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(parses_entries_flags_members),
		cmocka_unit_test(untouched_file_renders_identically),
		cmocka_unit_test(changes_touch_only_their_entries),
		cmocka_unit_test(bad_files_name_the_line),
		cmocka_unit_test(copies_are_deep),
		cmocka_unit_test(unconfigured_ports_flag),
		cmocka_unit_test(fuzzer_findings),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
