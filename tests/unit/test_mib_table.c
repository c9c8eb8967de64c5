/* The table helpers every MIB area builds its snapshots with: sorted rows,
 * binary search, the GUID <-> index conversion. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ibsnmpd/mib_table.h"

static void row_search_is_ordered(void **state)
{
	struct mib_row r[5];
	struct mib_rows rows = {5, r};
	static const oid keys[5][2] = {{1, 2}, {1, 10}, {2, 0}, {2, 1}, {10, 3}};
	oid k[2];

	(void)state;
	for (int i = 4; i >= 0; i--) { /* unsorted on purpose */
		r[4 - i].index[0] = keys[i][0];
		r[4 - i].index[1] = keys[i][1];
		r[4 - i].index_len = 2;
	}
	mib_rows_sort(&rows);
	for (int i = 0; i < 5; i++)
		assert_int_equal(r[i].index[1], keys[i][1]);
	k[0] = 1; k[1] = 10;
	assert_int_equal(mib_rows_search(&rows, k, 2, 0), 1);
	assert_int_equal(mib_rows_search(&rows, k, 2, 1), 2);
	assert_int_equal(mib_rows_search(&rows, k, 1, 1), 0); /* prefix (1) < (1,2) */
	k[0] = 3;
	assert_int_equal(mib_rows_search(&rows, k, 1, 1), 4);
	k[0] = 11;
	assert_int_equal(mib_rows_search(&rows, k, 1, 0), 5);
	assert_int_equal(mib_rows_search(NULL, k, 1, 0), 0);
}

static void guid_index_round_trip(void **state)
{
	oid idx[MIB_GUID_INDEX_LEN];
	uint64_t guid;

	(void)state;
	mib_index_put_guid(idx, 0x0002c90300a1b2c3ULL);
	assert_int_equal(idx[0], 0x00);
	assert_int_equal(idx[2], 0xc9);
	assert_int_equal(idx[7], 0xc3);
	assert_int_equal(mib_index_get_guid(idx, &guid), 0);
	assert_true(guid == 0x0002c90300a1b2c3ULL);
	idx[3] = 256; /* not an octet: no GUID */
	assert_int_equal(mib_index_get_guid(idx, &guid), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(row_search_is_ordered),
		cmocka_unit_test(guid_index_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
