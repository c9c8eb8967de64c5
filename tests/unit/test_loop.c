/* The main loop (loop.c) in-process: work deferred to a pass runs at its end,
 * what that work defers runs in the next pass, and a cancelled piece does
 * not run; a pass longer than loopWatchdog is logged by the watchdog's
 * thread while it lasts, naming the function the main thread is in, and
 * once more when it ends, and counted. */
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
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
