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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(row_search_is_ordered),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
