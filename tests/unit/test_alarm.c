/* The active alarms' snapshot builder and state file (src/alarm/): a
 * condition keeps its row while it lasts, a new one gets the next index, a
 * restart takes back the index and begin time of what still holds, and a
 * state file that is not whole is refused with its line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ibsnmpd/alarm.h"

static void add(struct alarm_list *l, enum alarm_kind kind, uint64_t guid, unsigned port,
		const char *desc)
{
	struct alarm_cond *c = alarm_list_add(l, kind, guid, port, 0, 2);

	assert_non_null(c);
	strcpy(c->desc, desc);
}

static struct alarm_snapshot *build(struct alarm_list *l, const struct alarm_snapshot *prev,
				    const struct alarm_snapshot *kept, time_t now)
{
	struct alarm_build in = {.conds = l, .prev = prev, .kept = kept, .now = now,
				 .now_ticks = (uint32_t)(now - 1000) * 100};
	struct alarm_snapshot *s = alarm_build(&in);

	assert_non_null(s);
	alarm_list_free(l);
	return s;
}

static const struct alarm *find(const struct alarm_snapshot *s, const char *desc)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->rows[i].desc, desc))
			return &s->rows[i];
	return NULL;
}

static void rows_keep_their_index_while_they_last(void **state)
{
	struct alarm_list l = {0};
	struct alarm_snapshot *a, *b, *c;

	(void)state;
	add(&l, ALARM_LINK_DOWN, 0x10, 3, "leaf port 3 <-> host port 1");
	add(&l, ALARM_FAN_FAILED, 0x20, 0, "fan");
	add(&l, ALARM_LINK_DOWN, 0x10, 3, "leaf port 3 <-> host port 1"); /* the same once */
	a = build(&l, NULL, NULL, 1000);
	assert_int_equal(a->n, 2);
	assert_int_equal(a->next_index, 3);
	assert_true(a->changed);
	add(&l, ALARM_FAN_FAILED, 0x20, 0, "fan");
	add(&l, ALARM_TEMPERATURE_HIGH, 0x20, 0, "hot");
	b = build(&l, a, NULL, 1010);
	assert_int_equal(b->n, 2);
	assert_int_equal(find(b, "fan")->index, find(a, "fan")->index);
	assert_int_equal(find(b, "fan")->began, 1000);
	assert_int_equal(find(b, "hot")->index, 3);
	assert_int_equal(find(b, "hot")->began, 1010);
	assert_int_equal(find(b, "hot")->began_ticks, 1000);
	assert_null(find(b, "leaf port 3 <-> host port 1"));
	assert_true(b->changed);
	assert_int_equal(b->last_change, 1010);
	assert_true(b->rows[0].index < b->rows[1].index);
	add(&l, ALARM_FAN_FAILED, 0x20, 0, "fan");
	add(&l, ALARM_TEMPERATURE_HIGH, 0x20, 0, "hot");
	c = build(&l, b, NULL, 1020);
	assert_false(c->changed);
	assert_int_equal(c->last_change, 1010);
	alarm_snapshot_free(a);
	alarm_snapshot_free(b);
	alarm_snapshot_free(c);
}

static void nothing_wrong_is_an_empty_table(void **state)
{
	struct alarm_list l = {0};
	struct alarm_snapshot *a = build(&l, NULL, NULL, 1000), *b = build(&l, a, NULL, 1010);

	(void)state;
	assert_int_equal(a->n, 0);
	assert_int_equal(a->next_index, 1);
	assert_false(b->changed);
	alarm_snapshot_free(a);
	alarm_snapshot_free(b);
}

static void a_restart_takes_back_what_still_holds(void **state)
{
	struct alarm_list l = {0};
	struct alarm_snapshot *a, *kept, *b;
	char err[200], *text;
	size_t len;

	(void)state;
	add(&l, ALARM_LINK_DOWN, 0x10, 3, "down");
	add(&l, ALARM_FAN_FAILED, 0x20, 0, "fan");
	a = build(&l, NULL, NULL, 1000);
	text = alarm_state_format(a, &len);
	assert_non_null(text);
	kept = alarm_state_parse(text, len, err, sizeof(err));
	assert_non_null(kept);
	assert_int_equal(kept->n, 2);
	/* after the restart: the link is still down, the fan turns, a node is silent */
	add(&l, ALARM_LINK_DOWN, 0x10, 3, "down");
	add(&l, ALARM_NODE_UNREACHABLE, 0x30, 0, "silent");
	l.v[1].quiet = true; /* its area's first snapshot */
	b = build(&l, NULL, kept, 5000);
	assert_int_equal(find(b, "down")->index, find(a, "down")->index);
	assert_int_equal(find(b, "down")->began, 1000);
	assert_int_equal(find(b, "down")->began_ticks, 0); /* before this start */
	assert_true(find(b, "down")->restored);
	assert_int_equal(find(b, "silent")->index, 3);   /* not the fan's 2 */
	assert_true(find(b, "silent")->restored);
	assert_true(b->changed);
	free(text);
	alarm_snapshot_free(a);
	alarm_snapshot_free(kept);
	alarm_snapshot_free(b);
}

static void a_bad_state_file_is_refused_with_its_line(void **state)
{
	static const struct {
		const char *text, *err;
	} bad[] = {
		{"ibsnmpd-alarms 2\nnext 1\n", "1: not an ibsnmpd-alarms 1 file"},
		{"ibsnmpd-alarms 1\nnext 5\nalarm 1 1 0x10 3 0\n", "3: alarm:"},
		{"ibsnmpd-alarms 1\nnext 5\nalarm 1 1 0x10 3 0 99", "3: the file ends inside"},
		{"ibsnmpd-alarms 1\nalarm 1 1 0x10 3 0 99\n", "2: no next line"},
		{"ibsnmpd-alarms 1\nnext 5\nalarm 1 1 0x10 3 0 99\nalarm 1 2 0x10 3 0 99\n",
		 "an alarm twice"},
		{"ibsnmpd-alarms 1\nnext 5\nalarm 1 1 0x10 3 0 99\nalarm 2 1 0x10 3 0 99\n",
		 "an alarm twice"},
		{"ibsnmpd-alarms 1\nnext 5\nalarm 5 1 0x10 3 0 99\n", "alarm 5 is not under next"},
		{"ibsnmpd-alarms 1\nnext 5\nalarm 1 99 0x10 3 0 99\n", "3: alarm:"},
		{"ibsnmpd-alarms 1\nnext 5\nlink 1\n", "3: neither"},
	};
	char err[200];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_null(alarm_state_parse(bad[i].text, strlen(bad[i].text), err, sizeof(err)));
		if (strncmp(err, bad[i].err, strlen(bad[i].err)))
			fail_msg("%s: got '%s'", bad[i].text, err);
	}
}

static void every_kind_has_a_name_and_a_severity(void **state)
{
	(void)state;
	assert_null(alarm_kind_info(0));
	assert_null(alarm_kind_info(ALARM_KINDS));
	for (unsigned k = 1; k < ALARM_KINDS; k++) {
		assert_non_null(alarm_kind_info(k)->name);
		assert_true(alarm_kind_info(k)->severity >= SEV_CRITICAL);
		assert_true(alarm_kind_info(k)->type >= TYPE_COMMUNICATIONS);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rows_keep_their_index_while_they_last),
		cmocka_unit_test(nothing_wrong_is_an_empty_table),
		cmocka_unit_test(a_restart_takes_back_what_still_holds),
		cmocka_unit_test(a_bad_state_file_is_refused_with_its_line),
		cmocka_unit_test(every_kind_has_a_name_and_a_severity),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
