/* The cache groups (cache.h): a refresh publishes a whole snapshot, the
 * observers see the one it replaced before it is freed, a failure keeps the
 * last one, a derived group follows its sources, stopping frees. Refreshes
 * here end at once or when the test says (no fabric, no clock). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ibsnmpd/cache.h"
#include "ibsnmpd/netsnmp.h"

/* ---- a source whose refreshes the test ends -------------------------------------- */

struct snap {
	int value;
	bool *freed; /* set when the cache frees it */
};

static struct snap *snap_new(int value, bool *freed)
{
	struct snap *s = calloc(1, sizeof(*s));

	s->value = value;
	s->freed = freed;
	*freed = false;
	return s;
}

static void snap_free(void *p)
{
	struct snap *s = p;

	*s->freed = true;
	free(s);
}

static unsigned refreshes_started;

static void refresh_later(struct cache_group *g)
{
	(void)g;
	refreshes_started++; /* the test calls cache_refresh_done() */
}

static void group_init(struct cache_group *g, const char *name, cache_refresh_fn refresh)
{
	memset(g, 0, sizeof(*g));
	g->name = name;
	g->lifetime_s = 60;
	g->refresh = refresh;
	g->free_snapshot = snap_free;
}

/* ---- an observer that records what it saw ------------------------------------------ */

struct seen {
	unsigned calls;
	int before, after;  /* values, -1 for none */
	bool before_alive;  /* the replaced snapshot was not freed yet */
	unsigned order;     /* its place among the observers of one publication */
};

static unsigned publication_order;

static void record(struct cache_group *g, const void *before, const void *after, void *arg)
{
	struct seen *s = arg;
	const struct snap *b = before, *a = after;

	(void)g;
	s->calls++;
	s->before = b ? b->value : -1;
	s->after = a ? a->value : -1;
	s->before_alive = b ? !*b->freed : false;
	s->order = ++publication_order;
}

static int setup(void **state)
{
	(void)state;
	/* alarms are kept on a list, not sent as signals (as in the agent) */
	netsnmp_ds_set_boolean(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_ALARM_DONT_USE_SIG, 1);
	snmp_disable_log();
	refreshes_started = 0;
	return 0;
}

/* ---- tests ---------------------------------------------------------------------------- */

static void publish_replaces_whole_and_observers_see_both(void **state)
{
	struct cache_group g;
	struct cache_observer o;
	struct seen seen = {0};
	bool freed1, freed2;

	(void)state;
	group_init(&g, "test", refresh_later);
	cache_group_observe(&g, &o, record, &seen);
	cache_group_start(&g);
	assert_true(g.refreshing);
	assert_int_equal(refreshes_started, 1);
	assert_int_not_equal(g.alarm, 0); /* periodic refreshes are armed */
	assert_null(cache_snapshot(&g));

	cache_refresh_done(&g, snap_new(1, &freed1), NULL);
	assert_false(g.refreshing);
	assert_int_equal(g.attempts, 1);
	assert_int_equal(seen.calls, 1);
	assert_int_equal(seen.before, -1);
	assert_int_equal(seen.after, 1);
	assert_int_equal(((const struct snap *)cache_snapshot(&g))->value, 1);

	cache_group_refresh_now(&g);
	cache_refresh_done(&g, snap_new(2, &freed2), NULL);
	assert_int_equal(seen.calls, 2);
	assert_int_equal(seen.before, 1);
	assert_int_equal(seen.after, 2);
	assert_true(seen.before_alive); /* freed only after the observers */
	assert_true(freed1);
	assert_false(freed2);

	cache_group_stop(&g);
	assert_true(freed2);
	assert_null(cache_snapshot(&g));
	assert_int_equal(g.alarm, 0);
}

static void a_refresh_running_is_not_started_again(void **state)
{
	struct cache_group g;
	bool freed;

	(void)state;
	group_init(&g, "test", refresh_later);
	cache_group_refresh_now(&g);
	cache_group_refresh_now(&g);
	cache_group_refresh_now(&g);
	assert_int_equal(refreshes_started, 1);
	cache_refresh_done(&g, snap_new(1, &freed), NULL);
	cache_group_refresh_now(&g);
	assert_int_equal(refreshes_started, 2);
	cache_refresh_kept(&g);
	cache_group_stop(&g);
}

static void failure_keeps_the_last_snapshot(void **state)
{
	struct cache_group g;
	struct cache_observer o;
	struct seen seen = {0};
	bool freed1, freed2;

	(void)state;
	group_init(&g, "test", refresh_later);
	cache_group_observe(&g, &o, record, &seen);
	cache_group_refresh_now(&g);
	cache_refresh_done(&g, snap_new(1, &freed1), NULL);
	cache_group_refresh_now(&g);
	cache_refresh_done(&g, NULL, "no answer");
	assert_true(g.last_failed);
	assert_int_equal(g.attempts, 2);
	assert_int_equal(seen.calls, 1); /* nothing published */
	assert_false(freed1);
	assert_int_equal(((const struct snap *)cache_snapshot(&g))->value, 1);
	cache_group_refresh_now(&g);
	cache_refresh_done(&g, snap_new(2, &freed2), NULL);
	assert_false(g.last_failed);
	assert_int_equal(seen.calls, 2);
	cache_group_stop(&g);
}

static void kept_changes_nothing_and_calls_nobody(void **state)
{
	struct cache_group g;
	struct cache_observer o;
	struct seen seen = {0};
	bool freed;

	(void)state;
	group_init(&g, "test", refresh_later);
	cache_group_observe(&g, &o, record, &seen);
	cache_group_refresh_now(&g);
	cache_refresh_done(&g, snap_new(1, &freed), NULL);
	cache_group_refresh_now(&g);
	cache_refresh_kept(&g);
	assert_false(g.refreshing);
	assert_false(g.last_failed);
	assert_int_equal(g.attempts, 2);
	assert_int_equal(seen.calls, 1);
	assert_false(freed);
	cache_group_stop(&g);
	assert_true(freed);
}

/* More observers than the old limit of 4, called in the order they came;
 * one that stops observing while called does not stop the others. */
static struct cache_observer leaving;

static void leave(struct cache_group *g, const void *before, const void *after, void *arg)
{
	record(g, before, after, arg);
	cache_group_unobserve(g, &leaving);
}

static void every_observer_in_order_and_one_may_leave(void **state)
{
	struct cache_group g;
	struct cache_observer o[9];
	struct seen seen[10] = {{0}};
	bool freed1, freed2;

	(void)state;
	group_init(&g, "test", refresh_later);
	for (int i = 0; i < 4; i++)
		cache_group_observe(&g, &o[i], record, &seen[i]);
	cache_group_observe(&g, &leaving, leave, &seen[9]);
	for (int i = 4; i < 9; i++)
		cache_group_observe(&g, &o[i], record, &seen[i]);
	publication_order = 0;
	cache_group_refresh_now(&g);
	cache_refresh_done(&g, snap_new(1, &freed1), NULL);
	for (int i = 0; i < 4; i++)
		assert_int_equal(seen[i].order, i + 1);
	assert_int_equal(seen[9].order, 5);
	for (int i = 4; i < 9; i++)
		assert_int_equal(seen[i].order, i + 2);
	/* it left: the next publication reaches the nine others only */
	cache_group_refresh_now(&g);
	cache_refresh_done(&g, snap_new(2, &freed2), NULL);
	assert_int_equal(seen[9].calls, 1);
	for (int i = 0; i < 9; i++)
		assert_int_equal(seen[i].calls, 2);
	cache_group_unobserve(&g, &o[0]);
	cache_group_refresh_now(&g);
	cache_refresh_done(&g, snap_new(3, &freed1), NULL);
	assert_int_equal(seen[0].calls, 2);
	assert_int_equal(seen[1].calls, 3);
	cache_group_stop(&g);
}

/* ---- a derived group: built from its sources' snapshots at once ---- */

static struct cache_group source_a, source_b;

static void build_sum(struct cache_group *g)
{
	const struct snap *a = cache_snapshot(&source_a), *b = cache_snapshot(&source_b);
	bool *freed = g->owner;

	cache_refresh_done(g, snap_new((a ? a->value : 0) + (b ? b->value : 0), freed), NULL);
}

static void a_derived_group_follows_its_sources(void **state)
{
	struct cache_group sum;
	struct cache_observer follow_a, follow_b, o;
	struct seen seen = {0};
	bool freed_a, freed_b, freed_sum;

	(void)state;
	group_init(&source_a, "a", refresh_later);
	group_init(&source_b, "b", refresh_later);
	group_init(&sum, "a + b", build_sum);
	sum.owner = &freed_sum;
	cache_group_follow(&sum, &source_a, &follow_a);
	cache_group_follow(&sum, &source_b, &follow_b);
	cache_group_observe(&sum, &o, record, &seen);

	cache_group_refresh_now(&source_a);
	cache_refresh_done(&source_a, snap_new(2, &freed_a), NULL);
	assert_int_equal(seen.after, 2);
	assert_int_equal(sum.alarm, 0); /* no lifetime of its own */
	cache_group_refresh_now(&source_b);
	cache_refresh_done(&source_b, snap_new(40, &freed_b), NULL);
	assert_int_equal(seen.calls, 2);
	assert_int_equal(seen.after, 42);
	/* a failed source refresh publishes nothing: the sum is not rebuilt */
	cache_group_refresh_now(&source_a);
	cache_refresh_done(&source_a, NULL, "lost");
	assert_int_equal(seen.calls, 2);
	/* no longer following a */
	cache_group_unobserve(&source_a, &follow_a);
	cache_group_refresh_now(&source_a);
	cache_refresh_done(&source_a, snap_new(5, &freed_a), NULL);
	assert_int_equal(seen.calls, 2);
	cache_group_refresh_now(&source_b);
	cache_refresh_done(&source_b, snap_new(50, &freed_b), NULL);
	assert_int_equal(seen.after, 55);
	cache_group_stop(&sum);
	cache_group_stop(&source_a);
	cache_group_stop(&source_b);
	assert_true(freed_sum && freed_a && freed_b);
}

static void lifetime_change_rearms_the_alarm(void **state)
{
	struct cache_group g;
	unsigned before;

	(void)state;
	group_init(&g, "test", refresh_later);
	cache_group_set_lifetime(&g, 30); /* not started: nothing armed */
	assert_int_equal(g.alarm, 0);
	assert_int_equal(g.lifetime_s, 30);
	cache_group_start(&g);
	before = g.alarm;
	assert_int_not_equal(before, 0);
	cache_group_set_lifetime(&g, 30);
	assert_int_equal(g.alarm, before);
	cache_group_set_lifetime(&g, 5);
	assert_int_not_equal(g.alarm, 0);
	assert_int_equal(g.lifetime_s, 5);
	cache_refresh_kept(&g);
	cache_group_stop(&g);
	assert_int_equal(g.alarm, 0);
}

/* A streamed reader holds the snapshot it began with across publications. */
static void a_held_snapshot_outlives_its_replacement(void **state)
{
	struct cache_group g;
	bool freed1, freed2, freed3;
	const void *a, *b, *b2;

	(void)state;
	group_init(&g, "test", refresh_later);
	assert_null(cache_snapshot_hold(&g)); /* nothing yet: nothing held */
	cache_group_start(&g);
	cache_refresh_done(&g, snap_new(1, &freed1), NULL);
	a = cache_snapshot_hold(&g);
	assert_ptr_equal(a, cache_snapshot(&g));

	cache_group_refresh_now(&g);
	cache_refresh_done(&g, snap_new(2, &freed2), NULL);
	assert_false(freed1); /* replaced, still held */
	assert_int_equal(((const struct snap *)a)->value, 1);
	b = cache_snapshot_hold(&g);
	b2 = cache_snapshot_hold(&g);
	assert_ptr_equal(b, b2);

	cache_group_refresh_now(&g);
	cache_refresh_done(&g, snap_new(3, &freed3), NULL);
	assert_false(freed2);
	cache_snapshot_release(&g, a);
	assert_true(freed1);
	cache_snapshot_release(&g, b);
	assert_false(freed2); /* one hold left */
	cache_snapshot_release(&g, b2);
	assert_true(freed2);

	/* holding and releasing the current one frees nothing */
	a = cache_snapshot_hold(&g);
	cache_snapshot_release(&g, a);
	assert_false(freed3);
	assert_null(g.held);
	cache_group_refresh_now(&g);
	cache_refresh_done(&g, snap_new(4, &freed1), NULL);
	assert_true(freed3); /* not held: freed at once */
	/* stopping frees what is still held */
	a = cache_snapshot_hold(&g);
	cache_group_refresh_now(&g);
	cache_refresh_done(&g, snap_new(5, &freed2), NULL);
	cache_group_stop(&g);
	assert_true(freed1);
	assert_true(freed2);
	assert_null(g.held);
}

/* An observer that holds what a group publishes and lets go of what it
 * held before (the node directory's way with the sweeps' snapshots): the
 * holds stay apart, and the snapshot before lives until every observer
 * has seen it. */
struct holder {
	const void *held;
	bool before_alive; /* the later observer saw the one before unfreed */
	bool *freed_before;
};

static void hold_fresh(struct cache_group *g, const void *before, const void *after, void *arg)
{
	struct holder *h = arg;

	(void)before;
	(void)after;
	if (h->held)
		cache_snapshot_release(g, h->held);
	h->held = cache_snapshot_hold(g);
}

static void look_at_before(struct cache_group *g, const void *before, const void *after,
			   void *arg)
{
	struct holder *h = arg;

	(void)g;
	(void)after;
	h->before_alive = !before || !*h->freed_before;
}

static void an_observer_may_hold_the_fresh_snapshot(void **state)
{
	struct cache_group g;
	struct cache_observer o1, o2;
	bool freed1, freed2, freed3;
	struct holder h = {0};

	(void)state;
	group_init(&g, "test", refresh_later);
	cache_group_observe(&g, &o1, hold_fresh, &h);
	cache_group_observe(&g, &o2, look_at_before, &h);
	cache_group_start(&g);
	h.freed_before = &freed1;
	cache_refresh_done(&g, snap_new(1, &freed1), NULL);
	assert_ptr_equal(h.held, cache_snapshot(&g));
	cache_group_refresh_now(&g);
	cache_refresh_done(&g, snap_new(2, &freed2), NULL);
	assert_true(h.before_alive); /* 1's last hold went in the first observer */
	assert_true(freed1);
	assert_false(freed2);
	assert_ptr_equal(h.held, cache_snapshot(&g));
	h.freed_before = &freed2;
	cache_group_refresh_now(&g);
	cache_refresh_done(&g, snap_new(3, &freed3), NULL);
	assert_true(h.before_alive && freed2 && !freed3);
	cache_snapshot_release(&g, h.held); /* the current one: nothing freed */
	assert_false(freed3);
	assert_null(g.held);
	cache_group_stop(&g);
	assert_true(freed3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(publish_replaces_whole_and_observers_see_both, setup),
		cmocka_unit_test_setup(a_refresh_running_is_not_started_again, setup),
		cmocka_unit_test_setup(failure_keeps_the_last_snapshot, setup),
		cmocka_unit_test_setup(kept_changes_nothing_and_calls_nobody, setup),
		cmocka_unit_test_setup(every_observer_in_order_and_one_may_leave, setup),
		cmocka_unit_test_setup(a_derived_group_follows_its_sources, setup),
		cmocka_unit_test_setup(lifetime_change_rearms_the_alarm, setup),
		cmocka_unit_test_setup(a_held_snapshot_outlives_its_replacement, setup),
		cmocka_unit_test_setup(an_observer_may_hold_the_fresh_snapshot, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
