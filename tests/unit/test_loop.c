/* The main loop (loop.c) in-process: work deferred to a pass runs at its end,
 * what that work defers runs in the next pass, and a cancelled piece does
 * not run; a pass longer than loopWatchdog is logged by the watchdog's
 * thread while it lasts, naming the function the main thread is in, and
 * once more when it ends, and counted; a pass's work and sleep apart. And
 * the state files (state_file.c), written by a thread: the latest text
 * wins, a failure is logged on the loop. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "ibsnmpd/loop.h"
#include "ibsnmpd/state_file.h"

#include "agent_harness.h"

static int ran[3];
static struct loop_deferred first, second, cancelled;

static void run_second(void *arg)
{
	(void)arg;
	ran[1]++;
}

static void run_first(void *arg)
{
	(void)arg;
	ran[0]++;
	loop_defer(&second); /* the next pass's */
	loop_defer(&first);  /* again: the next pass's too */
}

static void run_cancelled(void *arg)
{
	(void)arg;
	ran[2]++;
}

static void deferred_work_runs_at_the_end_of_the_pass(void **state)
{
	(void)state;
	first = (struct loop_deferred){.fn = run_first};
	second = (struct loop_deferred){.fn = run_second};
	cancelled = (struct loop_deferred){.fn = run_cancelled};
	loop_defer(&first);
	loop_defer(&first); /* once */
	loop_defer(&cancelled);
	loop_cancel(&cancelled);
	loop_pass();
	assert_int_equal(ran[0], 1);
	assert_int_equal(ran[1], 0);
	assert_int_equal(ran[2], 0);
	loop_cancel(&first);
	loop_pass();
	assert_int_equal(ran[0], 1);
	assert_int_equal(ran[1], 1);
	assert_int_equal(ran[2], 0);
}

/* Not static: the watchdog names it from the executable's symbols. */
void ibsnmpd_test_stall_on_purpose(void *arg);
void ibsnmpd_test_stall_on_purpose(void *arg)
{
	struct timespec t0, t;

	(void)arg;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do { /* the watchdog's signal ends a sleep early */
		usleep(100 * 1000);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < 2500);
}

static void a_long_pass_is_logged_while_it_lasts(void **state)
{
	char path[] = "/tmp/ibsnmpd-test-loop.XXXXXX", text[16384];
	struct loop_deferred stall = {.fn = ibsnmpd_test_stall_on_purpose};
	struct loop_stats st;
	FILE *f;
	size_t n;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	snmp_enable_filelog(path, 0);
	loop_start(1);
	loop_ready();
	loop_defer(&stall);
	loop_pass();
	loop_get_stats(&st);
	loop_stop();
	snmp_disable_filelog();
	assert_int_equal(st.stalls, 1);
	assert_true(st.longest_pass_ms >= 2400);
	/* it slept: no work to speak of */
	assert_true(st.longest_sleep_ms >= 2000 && st.longest_sleep_ms != UINT32_MAX);
	assert_true(st.longest_work_ms < 1000);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	unlink(path);
	text[n] = 0;
	/* the thread's line, while it lasted, with where the main thread was */
	assert_non_null(strstr(text, "the main loop has not come round for 1."));
	assert_non_null(strstr(text, "ibsnmpd_test_stall_on_purpose"));
	/* the loop's own, when it came round */
	assert_non_null(strstr(text, "the main loop came round after 2."));
}

static uint64_t ms_since(const struct timespec *t0, clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return (uint64_t)(t.tv_sec - t0->tv_sec) * 1000 + (uint64_t)(t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* 300 ms on a core */
static void work_on_purpose(void *arg)
{
	struct timespec t0;
	volatile uint64_t spin = 0;

	(void)arg;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	while (ms_since(&t0, CLOCK_THREAD_CPUTIME_ID) < 300)
		spin++;
}

static void a_pass_is_split_into_work_and_sleep(void **state)
{
	struct loop_deferred busy = {.fn = work_on_purpose};
	struct loop_stats before, st;

	(void)state;
	loop_ready();
	loop_get_stats(&before);
	loop_defer(&busy);
	loop_pass();
	loop_get_stats(&st);
	assert_true(st.longest_pass_ms >= 300);
	/* its work counted (the earlier test's pass worked less) */
	assert_true(st.longest_work_ms >= 280);
	/* working is not sleeping: the earlier pass's sleep stays the longest */
	assert_int_equal(st.longest_sleep_ms, before.longest_sleep_ms);
}

/* ---- state files: written by a thread, told on the main loop ---------- */

static char *read_text(const char *path)
{
	static char text[256];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	return text;
}

static void a_state_file_is_written_off_the_loop_the_latest_text_winning(void **state)
{
	char dir[] = "/tmp/ibsnmpd-test-state.XXXXXX", path[300], log[300], bad[300];
	struct state_file sf = {.what = "test state", .fresh = "anew", .unsaved = "kept in memory"};
	struct state_file nowhere = sf;
	char *text;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/state", dir);
	snprintf(log, sizeof(log), "%s/log", dir);
	snprintf(bad, sizeof(bad), "%s/no/such/dir/state", dir);
	snmp_enable_filelog(log, 0);
	state_file_init(&sf, path, "unused");
	state_file_init(&nowhere, bad, "unused");
	state_file_write(&sf, "one\n", 4);
	state_file_write(&sf, "two\n", 4);
	state_file_write(&sf, "three\n", 6);
	state_file_write(&nowhere, "x\n", 2);
	/* the loop comes round while the writer works; its outcomes come back */
	for (int i = 0; i < 200 && !nowhere.failed; i++)
		loop_pass();
	assert_true(nowhere.failed);
	state_file_close(&sf); /* what was asked last is on disk */
	text = read_text(path);
	assert_non_null(text);
	assert_string_equal(text, "three\n");
	assert_false(sf.failed);
	state_file_close(&nowhere);
	state_file_stop();
	snmp_disable_filelog();
	text = read_text(log);
	assert_non_null(text);
	assert_non_null(strstr(text, "test state: cannot write"));
	assert_non_null(strstr(text, "(kept in memory)"));
	unlink(log);
	unlink(path);
	rmdir(dir);
}

static int setup(void **state)
{
	(void)state;
	harness_start();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	harness_stop();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(deferred_work_runs_at_the_end_of_the_pass),
		cmocka_unit_test(a_long_pass_is_logged_while_it_lasts),
		cmocka_unit_test(a_pass_is_split_into_work_and_sleep),
		cmocka_unit_test(a_state_file_is_written_off_the_loop_the_latest_text_winning),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
