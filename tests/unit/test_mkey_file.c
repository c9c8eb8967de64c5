/* opensm's guid2mkey file (mKeyFile): read as opensm writes it, a port's
 * key found by its GUID, the subnet's key the one most ports have; a file
 * that is not one is refused with its line, and never with a key. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "mad/mkey_file.h"

static void as_opensm_writes_it(void **state)
{
	static const char text[] = "0x0002c9030000001e 0x0000000000000111\n\n"
				   "0x0002c9030000002a 0x0000000000000111\n\n"
				   "# a comment\n"
				   "0x0002c90300000001\t0x00000000000000ff\n\n";
	struct mkey_file f;
	char err[160];

	(void)state;
	assert_int_equal(mkey_file_parse(text, strlen(text), &f, err, sizeof(err)), 0);
	assert_int_equal(f.n, 3);
	assert_true(mkey_file_find(&f, 0x0002c9030000002aull) == 0x111);
	assert_true(mkey_file_find(&f, 0x0002c90300000001ull) == 0xff);
	assert_true(mkey_file_find(&f, 0x1234) == 0);
	assert_true(mkey_file_common(&f) == 0x111);
	mkey_file_free(&f);
	assert_int_equal(mkey_file_parse("", 0, &f, err, sizeof(err)), 0);
	assert_true(mkey_file_common(&f) == 0);
}

static void what_is_not_one_is_refused_with_its_line(void **state)
{
	static const struct {
		const char *text, *err;
	} bad[] = {
		{"0x1 0x2\nnot a line\n", "2: not"},
		{"0x1\n", "1: not"},
		{"0x1 0x2 0x3\n", "1: not"},
		{"0x1 0x12345678901234567\n", "1: not"},
		{"1 2\n", "1: not"},
		{"0x1 0x2\n0x1 0x3\n", "port GUID 0x0000000000000001 twice"},
	};
	struct mkey_file f;
	char err[160];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(mkey_file_parse(bad[i].text, strlen(bad[i].text), &f, err,
						 sizeof(err)), -1);
		if (strncmp(err, bad[i].err, strlen(bad[i].err)))
			fail_msg("%s: got '%s'", bad[i].text, err);
		assert_null(strstr(err, "0x2")); /* a key is never in the message */
		assert_int_equal(f.n, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(as_opensm_writes_it),
		cmocka_unit_test(what_is_not_one_is_refused_with_its_line),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
