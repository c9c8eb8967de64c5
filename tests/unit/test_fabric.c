/* The links of the subnet: fabric_build()'s rules over static fixtures (a
 * discovery, PortInfo answers), and the baseline's state file both ways;
 * the node directory (node_dir_build) made from them, as the nodes'
 * contexts serve it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <infiniband/mad.h>

#include "ibsnmpd/alarm.h"
#include "ibsnmpd/fabric.h"
#include "ibsnmpd/mad_engine.h"
#include "ibsnmpd/node.h"
#include "ibsnmpd/pm.h"

#include "fixtures.h"

/* Two switches (sw1 LID 1, sw2 LID 2, 4 ports each) cabled sw1/3-sw2/3, a
 * CA (LID 5) on sw1 port 1; sw1 port 2 and 4, sw2 1, 2, 4 are empty. */
static const char discovery[] =
	"port 0000000000000001 1 1 0000000000000001 0000000000000010 1\n"
	"port 0000000000000001 2 1 0000000000000001 0000000000000000 0\n"
	"port 0000000000000001 3 1 0000000000000001 0000000000000002 3\n"
	"port 0000000000000001 4 1 0000000000000001 0000000000000000 0\n"
	"node 0000000000000001 2 4 1 sw1\n"
	"ident 0000000000000001 2c9 c738 a1\n"
	"port 0000000000000002 3 2 0000000000000002 0000000000000001 3\n"
	"node 0000000000000002 2 4 2 sw2\n"
	"port 0000000000000010 1 5 0000000000000011 0000000000000001 1\n"
	"node 0000000000000010 1 1 5 ca1\n"
	"done 0.01\n";

/* The same, after the CA's only link went down: the discovery no longer
 * reaches it. */
static const char without_ca[] =
	"port 0000000000000001 3 1 0000000000000001 0000000000000002 3\n"
	"node 0000000000000001 2 4 1 sw1\n"
	"port 0000000000000002 3 2 0000000000000002 0000000000000001 3\n"
	"node 0000000000000002 2 4 2 sw2\n"
	"done 0.01\n";

#define SW1 0x1ull
#define SW2 0x2ull
#define CA1 0x10ull

static struct topology *fabric(void)
{
	char err[200];
	struct topology *f = topology_parse(discovery, strlen(discovery), NULL, err, sizeof(err));

	assert_non_null(f);
	return (struct topology *)topology_get(f); /* the snapshots hold it too */
}

/* PortInfo: linked at width (1 1X, 2 4X) and SDR, else down/polling. */
static void portinfo(struct fabric_reading *r, uint64_t guid, unsigned port, bool up,
		     unsigned width_active, unsigned width_enabled)
{
	fixture_portinfo(r, guid, port, guid == CA1 ? 5 : (unsigned)guid, up, width_active,
			 width_enabled, 1);
}

/* Every port of the fixture; the links named in `down` are down, the
 * sw1/3-sw2/3 link runs at `width` with both ends enabling `enabled`. */
static size_t readings(struct fabric_reading *r, bool ca_link_up, bool sw_link_up,
		       unsigned width, unsigned enabled)
{
	size_t n = 0;

	portinfo(&r[n++], SW1, 1, ca_link_up, 2, 3);
	portinfo(&r[n++], SW1, 2, false, 0, 3);
	portinfo(&r[n++], SW1, 3, sw_link_up, width, enabled);
	portinfo(&r[n++], SW1, 4, false, 0, 3);
	portinfo(&r[n++], SW2, 1, false, 0, 3);
	portinfo(&r[n++], SW2, 2, false, 0, 3);
	portinfo(&r[n++], SW2, 3, sw_link_up, width, enabled);
	portinfo(&r[n++], SW2, 4, false, 0, 3);
	portinfo(&r[n++], CA1, 1, ca_link_up, 2, 3);
	return n;
}

static struct fabric_snapshot *build(const struct topology *f, const struct fabric_snapshot *prev,
				     const struct fabric_reading *r, size_t n, time_t now)
{
	struct fabric_build in = {.fabric = f, .readings = r, .n_readings = n, .prev = prev,
				  .now = now};
	struct fabric_snapshot *s = fabric_build(&in);

	assert_non_null(s);
	return s;
}

static unsigned events(const struct fabric_snapshot *s, unsigned *rows_with_events)
{
	unsigned all = 0;

	*rows_with_events = 0;
	for (size_t i = 0; i < s->n; i++) {
		all |= s->ports[i].events;
		*rows_with_events += s->ports[i].events != 0;
	}
	return all;
}

static void first_sweep_records_the_baseline_quietly(void **state)
{
	struct topology *f = fabric();
	struct fabric_reading r[9];
	size_t n = readings(r, true, true, 2, 3);
	struct fabric_snapshot *s = build(f, NULL, r, n, 100);
	const struct fabric_port *p;
	unsigned rows;

	(void)state;
	assert_int_equal(s->n, 9);
	assert_int_equal(s->rows.count, 9);
	assert_int_equal(s->baseline_links, 4);
	assert_int_equal(s->links_lost, 0);
	assert_true(s->baseline_changed);
	assert_int_equal(events(s, &rows), 0);
	p = fabric_find(s, SW1, 3);
	assert_true(p->up && p->base_linked && !p->degraded);
	assert_int_equal(p->lanes, 4);
	assert_int_equal(p->base_lanes, 4);
	assert_int_equal(p->speed, 1);
	assert_int_equal(p->rate_mbps, 8000);
	assert_int_equal(p->remote_guid, SW2);
	assert_string_equal(p->remote_desc, "sw2");
	assert_int_equal(p->last_change, 100);
	p = fabric_find(s, SW2, 1);
	assert_true(!p->up && !p->base_linked && p->cond == LINK_NONE);
	p = fabric_find(s, CA1, 1);
	assert_int_equal(p->lid, 5);
	fabric_snapshot_free(s);
	topology_put(f);
}

static void a_link_down_is_one_event_and_stays_a_row(void **state)
{
	struct topology *f = fabric();
	struct fabric_reading r[9];
	size_t n = readings(r, true, true, 2, 3);
	struct fabric_snapshot *a = build(f, NULL, r, n, 100), *b, *c;
	const struct fabric_port *p;
	unsigned rows;

	(void)state;
	n = readings(r, true, false, 0, 3);
	b = build(f, a, r, n, 200);
	assert_int_equal(events(b, &rows), FABRIC_EV_DOWN);
	assert_int_equal(rows, 1); /* not once per end */
	p = fabric_find(b, SW1, 3);
	assert_true(!p->up && p->base_linked && p->cond == LINK_DOWN);
	assert_int_equal(p->remote_guid, SW2); /* as last known */
	assert_int_equal(p->last_change, 200);
	assert_int_equal(b->links_lost, 2);
	/* the same again: nothing new */
	c = build(f, b, r, n, 300);
	assert_int_equal(events(c, &rows), 0);
	assert_int_equal(fabric_find(c, SW1, 3)->last_change, 200);
	fabric_snapshot_free(a);
	a = build(f, c, r, readings(r, true, true, 2, 3), 400);
	assert_int_equal(events(a, &rows), FABRIC_EV_UP);
	assert_int_equal(rows, 1);
	fabric_snapshot_free(a);
	fabric_snapshot_free(b);
	fabric_snapshot_free(c);
	topology_put(f);
}

/* A sweep that reads the CA's end (up) before the link goes down and the
 * switch's end after (down): the end that says down is the news, told
 * once; the CA's row, taken out with its node next, tells nothing more. */
static void ends_read_apart_in_one_sweep_are_one_event(void **state)
{
	struct topology *f = fabric(), *g;
	struct fabric_reading r[9];
	size_t n = readings(r, true, true, 2, 3);
	struct fabric_snapshot *a = build(f, NULL, r, n, 100), *b, *c;
	char err[200];
	unsigned rows;

	(void)state;
	n = readings(r, true, true, 2, 3);
	portinfo(&r[0], SW1, 1, false, 0, 3); /* sw1's end: down; the CA's (r[8]): up */
	b = build(f, a, r, n, 200);
	assert_int_equal(events(b, &rows), FABRIC_EV_DOWN);
	assert_int_equal(rows, 1);
	assert_true(fabric_find(b, SW1, 1)->events == FABRIC_EV_DOWN);
	/* the CA no longer reached: its row stays, gone, and says nothing */
	g = topology_parse(without_ca, strlen(without_ca), NULL, err, sizeof(err));
	assert_non_null(g);
	topology_get(g);
	n = readings(r, false, true, 2, 3);
	c = build(g, b, r, n - 1, 300);
	assert_int_equal(events(c, &rows), 0);
	assert_true(fabric_find(c, CA1, 1)->gone);
	fabric_snapshot_free(a);
	fabric_snapshot_free(b);
	fabric_snapshot_free(c);
	topology_put(g);
	topology_put(f);
}

static struct fabric_snapshot *build_partial(const struct topology *f,
					     const struct fabric_snapshot *prev,
					     const struct fabric_reading *r, size_t n, time_t now)
{
	struct fabric_build in = {.fabric = f, .readings = r, .n_readings = n, .prev = prev,
				  .now = now, .partial = true};
	struct fabric_snapshot *s = fabric_build(&in);

	assert_non_null(s);
	return s;
}

/* A host's link down and back while its switch is read again and again
 * (its trap's read re-read): the switch's end tells it down, then up,
 * before the host is found again (or as it goes: its row, gone, does not
 * speak for the link); when the host's row comes back, read in the same
 * sweep as the switch's end again, the link is up as told: nothing more
 * (seen: LinkUp told by both ends under MAD loss). */
static void a_host_back_after_its_switch_told_the_link_up_tells_nothing(void **state)
{
	/* the host's GUID below its switch's: its row comes first */
	static const char linked[] =
		"port 0000000000000020 1 1 0000000000000020 0000000000000010 1\n"
		"port 0000000000000020 2 1 0000000000000020 0000000000000000 0\n"
		"node 0000000000000020 2 2 1 leaf\n"
		"port 0000000000000010 1 5 0000000000000011 0000000000000020 1\n"
		"node 0000000000000010 1 1 5 host\n"
		"done 0.01\n";
	static const char alone[] =
		"port 0000000000000020 2 1 0000000000000020 0000000000000000 0\n"
		"node 0000000000000020 2 2 1 leaf\n"
		"done 0.01\n";
	char err[200];
	struct topology *f = topology_parse(linked, strlen(linked), NULL, err, sizeof(err));
	struct topology *g = topology_parse(alone, strlen(alone), NULL, err, sizeof(err));
	struct fabric_reading r[3];
	struct fabric_snapshot *a, *b, *c, *d, *e;
	unsigned rows;

	(void)state;
	assert_non_null(f);
	assert_non_null(g);
	topology_get(f);
	topology_get(g);
	/* the readings in the order a sweep hands them over: (GUID, port) */
	fixture_portinfo(&r[0], 0x10, 1, 5, true, 2, 3, 1);
	fixture_portinfo(&r[1], 0x20, 1, 1, true, 2, 3, 1);
	fixture_portinfo(&r[2], 0x20, 2, 1, false, 0, 3, 1);
	a = build(f, NULL, r, 3, 100);
	fixture_portinfo(&r[1], 0x20, 1, 1, false, 0, 3, 1);
	b = build_partial(f, a, r + 1, 2, 200);       /* the leaf alone: port 1 down */
	assert_int_equal(events(b, &rows), FABRIC_EV_DOWN);
	assert_int_equal(rows, 1);
	c = build_partial(g, b, r + 1, 2, 210);       /* the host no longer reached */
	assert_int_equal(events(c, &rows), 0);
	fixture_portinfo(&r[1], 0x20, 1, 1, true, 2, 3, 1);
	d = build_partial(g, c, r + 1, 2, 220);       /* the leaf alone: port 1 up */
	assert_int_equal(events(d, &rows), FABRIC_EV_UP);
	assert_int_equal(rows, 1);
	e = build_partial(f, d, r, 3, 230);           /* the host found again, read with the leaf */
	assert_int_equal(events(e, &rows), 0);
	fabric_snapshot_free(c);
	fabric_snapshot_free(d);
	fabric_snapshot_free(e);
	/* the host's going and the leaf's port read up in one build: the
	 * host's row, gone, does not speak for the link */
	fixture_portinfo(&r[1], 0x20, 1, 1, true, 2, 3, 1);
	c = build_partial(g, b, r + 1, 2, 210);
	assert_int_equal(events(c, &rows), FABRIC_EV_UP);
	assert_int_equal(rows, 1);
	assert_non_null(fabric_find(c, 0x10, 1));
	assert_true(fabric_find(c, 0x10, 1)->gone);
	d = build_partial(f, c, r, 3, 230);           /* the host found again, read with the leaf */
	assert_int_equal(events(d, &rows), 0);
	e = build_partial(f, d, r, 3, 240);
	assert_int_equal(events(e, &rows), 0);
	fabric_snapshot_free(a);
	fabric_snapshot_free(b);
	fabric_snapshot_free(c);
	fabric_snapshot_free(d);
	fabric_snapshot_free(e);
	topology_put(g);
	topology_put(f);
}

/* What the snapshots say is wrong (fabric_alarms.c): a link down once, by
 * its lower end between two switches, named by both; a node that answers
 * nothing while its switch sees it linked, from the second build on. */
static void alarms_name_a_link_once_and_a_silent_node(void **state)
{
	struct topology *f = fabric();
	struct fabric_reading r[9];
	size_t n;
	struct fabric_snapshot *a = build(f, NULL, r, readings(r, true, true, 2, 3), 100), *b, *c;
	struct alarm_list l = {0};

	(void)state;
	n = readings(r, true, false, 0, 3);
	r[n - 1].result = MAD_TIMEOUT; /* the CA answers nothing; sw1 sees it up */
	b = build(f, a, r, n, 200);
	fabric_alarms(b, &l);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.v[0].key.kind, ALARM_LINK_DOWN);
	assert_int_equal(l.v[0].key.guid, SW1);
	assert_int_equal(l.v[0].key.port, 3);
	assert_string_equal(l.v[0].desc, "sw1 port 3 <-> sw2 port 3");
	alarm_list_free(&l);
	assert_int_equal(fabric_find(b, CA1, 1)->node_silent_since, 200);
	c = build(f, b, r, n, 205); /* not long enough */
	fabric_alarms(c, &l);
	assert_int_equal(l.n, 1);
	alarm_list_free(&l);
	fabric_snapshot_free(b);
	b = c;
	c = build(f, b, r, n, 210); /* still so, 10 s on: now it is told */
	fabric_alarms(c, &l);
	assert_int_equal(l.n, 2);
	assert_int_equal(l.v[1].key.kind, ALARM_NODE_UNREACHABLE);
	assert_int_equal(l.v[1].key.guid, CA1);
	assert_int_equal(l.v[1].key.port, 1);
	assert_string_equal(l.v[1].desc, "ca1");
	alarm_list_free(&l);
	fabric_snapshot_free(a);
	fabric_snapshot_free(b);
	fabric_snapshot_free(c);
	topology_put(f);
}

static void narrower_than_the_baseline_is_degraded(void **state)
{
	struct topology *f = fabric();
	struct fabric_reading r[9];
	struct fabric_snapshot *a = build(f, NULL, r, readings(r, true, true, 2, 3), 100), *b, *c;
	unsigned rows;

	(void)state;
	/* one end narrowed to 1X (as ibportstate width 1 does) */
	b = build(f, a, r, readings(r, true, true, 1, 1), 200);
	assert_int_equal(events(b, &rows), FABRIC_EV_DEGRADED);
	assert_int_equal(rows, 1);
	assert_true(fabric_find(b, SW2, 3)->degraded && fabric_find(b, SW1, 3)->degraded);
	assert_int_equal(fabric_find(b, SW1, 3)->base_lanes, 4);
	assert_int_equal(b->degraded, 2);
	c = build(f, b, r, readings(r, true, true, 2, 3), 300);
	assert_int_equal(events(c, &rows), FABRIC_EV_RESTORED);
	assert_int_equal(c->degraded, 0);
	fabric_snapshot_free(a);
	fabric_snapshot_free(b);
	fabric_snapshot_free(c);
	topology_put(f);
}

/* Both ends enable 4X and support it but the link came up at 1X. */
static void narrower_than_both_ends_can_is_degraded(void **state)
{
	struct topology *f = fabric();
	struct fabric_reading r[9];
	struct fabric_build in = {.fabric = f, .readings = r, .reset_baseline = true, .now = 1};
	struct fabric_snapshot *s;

	(void)state;
	in.n_readings = readings(r, true, true, 1, 3);
	s = fabric_build(&in);
	assert_true(fabric_find(s, SW1, 3)->degraded);
	assert_false(fabric_find(s, SW1, 1)->degraded);
	fabric_snapshot_free(s);
	topology_put(f);
}

static void a_node_no_longer_reached_keeps_its_links(void **state)
{
	struct topology *f = fabric(), *g;
	char err[100];
	struct fabric_reading r[9];
	struct fabric_snapshot *a = build(f, NULL, r, readings(r, true, true, 2, 3), 100), *b, *c;
	const struct fabric_port *p;
	unsigned rows;

	(void)state;
	/* the switch end goes down first (its trap), then the CA is gone */
	b = build(f, a, r, readings(r, false, true, 2, 3), 200);
	assert_int_equal(events(b, &rows), FABRIC_EV_DOWN);
	assert_int_equal(rows, 1);
	g = topology_parse(without_ca, strlen(without_ca), NULL, err, sizeof(err));
	assert_non_null(g);
	topology_get(g);
	c = build(g, b, r, readings(r, false, true, 2, 3) - 1, 300);
	p = fabric_find(c, CA1, 1);
	assert_non_null(p);
	assert_true(p->gone && p->stale && !p->up && p->cond == LINK_DOWN);
	assert_string_equal(p->node_desc, "ca1");
	assert_int_equal(events(c, &rows), 0); /* said once already */
	assert_int_equal(c->n, 9);
	fabric_snapshot_free(a);
	fabric_snapshot_free(b);
	fabric_snapshot_free(c);
	topology_put(f);
	topology_put(g);
}

static void a_partial_sweep_keeps_the_other_rows(void **state)
{
	struct topology *f = fabric();
	struct fabric_reading r[9];
	struct fabric_snapshot *a = build(f, NULL, r, readings(r, true, true, 2, 3), 100), *b;
	struct fabric_build in = {.fabric = f, .readings = r, .n_readings = 4, .prev = a,
				  .partial = true, .now = 200};
	unsigned rows;

	(void)state;
	readings(r, true, false, 0, 3); /* sw1's four ports only */
	b = fabric_build(&in);
	assert_int_equal(events(b, &rows), FABRIC_EV_DOWN);
	assert_false(fabric_find(b, SW1, 3)->up);
	assert_true(fabric_find(b, SW2, 3)->up); /* not read: as it was */
	assert_false(fabric_find(b, SW2, 3)->stale);
	assert_int_equal(fabric_find(b, SW2, 3)->reported, LINK_DOWN);
	fabric_snapshot_free(a);
	fabric_snapshot_free(b);
	topology_put(f);
}

static void the_state_file_round_trips(void **state)
{
	struct topology *f = fabric();
	struct fabric_reading r[9];
	struct fabric_snapshot *a = build(f, NULL, r, readings(r, true, true, 2, 3), 100), *b, *l;
	char err[200], *text;
	size_t len;

	(void)state;
	b = build(f, a, r, readings(r, true, false, 0, 3), 200);
	text = fabric_baseline_format(b, &len);
	assert_non_null(text);
	l = fabric_baseline_parse(text, len, err, sizeof(err));
	assert_non_null(l);
	assert_int_equal(l->n, 4);
	assert_int_equal(l->ports[0].guid, SW1);
	assert_int_equal(l->ports[0].base_lanes, 4);
	assert_int_equal(l->ports[1].port, 3);
	assert_int_equal(l->ports[1].reported, LINK_DOWN);
	assert_int_equal(l->ports[1].remote_guid, SW2);
	assert_string_equal(l->ports[1].remote_desc, "sw2");
	assert_string_equal(l->ports[3].node_desc, "ca1");
	assert_int_equal(l->ports[3].node_type, 1);
	/* a restart with the link still down: nothing is told again */
	fabric_snapshot_free(a);
	a = build(f, l, r, readings(r, true, false, 0, 3), 300);
	assert_int_equal(a->baseline_links, 4);
	for (size_t i = 0; i < a->n; i++)
		assert_int_equal(a->ports[i].events, 0);
	free(text);
	fabric_snapshot_free(a);
	fabric_snapshot_free(b);
	fabric_snapshot_free(l);
	topology_put(f);
}

static void bad_state_files_are_refused_with_their_line(void **state)
{
	static const struct {
		const char *text, *why;
	} bad[] = {
		{"", "no 'ibsnmpd-fabric-baseline 1' line"},
		{"link 1 1 4 1 up 2 3\n", "line 1: expected the line"},
		{"ibsnmpd-fabric-baseline 2\n", "line 1: expected the line"},
		{"ibsnmpd-fabric-baseline 1\nnode 1 2 sw1", "line 2: the last line is not whole"},
		{"ibsnmpd-fabric-baseline 1\nnode 1 2 sw1\nlink 1 1 4 1 up 2\n", "line 3: expected"},
		{"ibsnmpd-fabric-baseline 1\nnode 1 2 sw1\nlink 1 1 3 1 up 2 3\n",
		 "line 3: LANES must be"},
		{"ibsnmpd-fabric-baseline 1\nnode 1 2 sw1\nlink 1 255 4 1 up 2 3\n", "line 3: expected"},
		{"ibsnmpd-fabric-baseline 1\nnode 1 2 sw1\nlink 1 1 4 1 sideways 2 3\n",
		 "line 3: NOTIFIED"},
		{"ibsnmpd-fabric-baseline 1\nlink 1 1 4 1 up 2 3\n", "which has no node line"},
		{"ibsnmpd-fabric-baseline 1\nnode 1 2 a\nnode 1 2 b\n", "listed twice"},
		{"ibsnmpd-fabric-baseline 1\nnode 1 2 a\nlink 1 1 4 1 up 2 3\nlink 1 1 4 1 up 2 3\n",
		 "listed twice"},
		{"ibsnmpd-fabric-baseline 1\nnode 12345678901234567 2 a\n", "line 2: expected"},
		{"ibsnmpd-fabric-baseline 1\nnode 1 2 a\x01\n", "control character"},
		{"ibsnmpd-fabric-baseline 1\nbogus\n", "line 2: not a node or link line"},
	};
	char err[200];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct fabric_snapshot *s = fabric_baseline_parse(bad[i].text, strlen(bad[i].text),
								  err, sizeof(err));

		if (s || !strstr(err, bad[i].why))
			fail_msg("case %zu: %s (wanted '%s')", i, s ? "accepted" : err, bad[i].why);
	}
}

static void link_rules(void **state)
{
	(void)state;
	assert_int_equal(fabric_widest_lanes(0x1), 1);
	assert_int_equal(fabric_widest_lanes(0x3), 4);
	assert_int_equal(fabric_widest_lanes(0x1b), 12);
	assert_int_equal(fabric_widest_lanes(0x11), 2);
	assert_int_equal(fabric_widest_lanes(0), 0);
	assert_int_equal(fabric_fastest_speed(0x7, 0), 3);
	assert_int_equal(fabric_fastest_speed(0x7, 0x3), 5);
	assert_int_equal(fabric_fastest_speed(0x1, 0x10), 8);
	assert_int_equal(fabric_fastest_speed(0, 0), 0);
}

/* ---- the node directory -------------------------------------------------- */

#define ALL_TYPES (1u << 1 | 1u << 2 | 1u << 3)

static struct node_dir *dir_build(const struct topology *f, const struct fabric_snapshot *ports,
				  const struct pm_snapshot *counters, const struct node_dir *prev,
				  unsigned types, time_t now)
{
	struct node_dir_build in = {.fabric = f, .ports = ports, .counters = counters, .prev = prev,
				    .types_mask = types, .hold_s = 60, .now = now};
	struct node_dir *d = node_dir_build(&in);

	assert_non_null(d);
	return d;
}

/* The PM sweep's counters of the sw1/3-sw2/3 link's two ends, read at t */
static void counters_at(struct pm_port_state q[2], time_t t, uint32_t link_downed,
			uint64_t raw_errors, uint64_t post_errors, uint32_t xmit_wait)
{
	for (int i = 0; i < 2; i++) {
		memset(&q[i], 0, sizeof(q[i]));
		q[i].guid = i ? SW2 : SW1;
		q[i].port = 3;
		q[i].have_raw = q[i].have_fec = true;
		q[i].fec_layout = PM_FEC_RS;
		q[i].last_read = t;
		q[i].raw.link_downed = link_downed;
		q[i].raw.xmit_wait = xmit_wait;
	}
	/* sw1/3 receives with errors; sw2/3 clean */
	q[0].fec_raw_total = raw_errors;
	q[0].fec_uncorrectable_total = post_errors;
}

static struct fabric_snapshot *build_counted(const struct topology *f,
					     const struct fabric_snapshot *prev,
					     const struct pm_port_state q[2], time_t now,
					     const struct fabric_health_config *c)
{
	struct fabric_reading r[9];
	struct fabric_build in = {.fabric = f, .readings = r, .n_readings = readings(r, true, true,
										      2, 3),
				  .prev = prev, .now = now, .counters = q, .n_counters = 2,
				  .health = c};
	struct fabric_snapshot *s = fabric_build(&in);

	assert_non_null(s);
	return s;
}

/* The link runs 4X SDR: 8,000 Mb/s. 8,000 corrected symbols in 10 s are
 * 8,000 / (8e9 x 10) = 1E-7 before FEC; above a threshold of 1E-8: one
 * ibsnmpdLinkBerHigh from the receiving end; no errors in the next half
 * window: the rate over it is 0, one ibsnmpdLinkBerNormal. */
static void bit_error_rates_over_the_window(void **state)
{
	struct topology *f = fabric();
	struct fabric_health_config c;
	struct pm_port_state q[2];
	struct fabric_snapshot *a, *b, *d, *e;
	const struct fabric_port *p;
	unsigned rows;

	(void)state;
	fabric_health_defaults(&c);
	c.ber_window_s = 20;
	c.ber_raw_max = 1e-8;
	counters_at(q, 100, 0, 1000, 0, 0);
	a = build_counted(f, NULL, q, 100, &c);
	assert_false(fabric_find(a, SW1, 3)->health.ber_valid); /* one reading: no span */
	counters_at(q, 105, 0, 5000, 0, 0);
	b = build_counted(f, a, q, 105, &c);
	assert_false(fabric_find(b, SW1, 3)->health.ber_valid); /* less than half a window */
	counters_at(q, 110, 0, 9000, 0, 0);
	d = build_counted(f, b, q, 110, &c);
	p = fabric_find(d, SW1, 3);
	assert_true(p->health.ber_valid);
	assert_int_equal(fabric_ber_span(&p->health), 10);
	assert_int_equal(p->health.ber_raw_m, 10);
	assert_int_equal(p->health.ber_raw_e, -7);
	assert_int_equal(p->health.ber_post_m, 0); /* none after FEC */
	assert_true(p->health.ber_high);
	assert_int_equal(events(d, &rows), FABRIC_EV_BER_HIGH);
	assert_int_equal(rows, 1);
	assert_false(fabric_find(d, SW2, 3)->health.ber_high);
	/* 10 s later with no new errors: the window moved past them */
	counters_at(q, 120, 0, 9000, 0, 0);
	e = build_counted(f, d, q, 120, &c);
	p = fabric_find(e, SW1, 3);
	assert_int_equal(fabric_ber_span(&p->health), 10);
	assert_int_equal(p->health.ber_raw_m, 0);
	assert_int_equal(events(e, &rows), FABRIC_EV_BER_NORMAL);
	fabric_snapshot_free(a);
	fabric_snapshot_free(b);
	fabric_snapshot_free(d);
	fabric_snapshot_free(e);
	topology_put(f);
}

/* LinkDownedCounter rising by 4 on both ends between two sweeps: more than
 * 3 in 10 minutes, one ibsnmpdLinkFlapping for the link; quiet for 10
 * minutes: no longer flapping. One down is not flapping. */
static void flapping_is_one_notification_per_link(void **state)
{
	struct topology *f = fabric();
	struct pm_port_state q[2];
	struct fabric_snapshot *a, *b, *d;
	unsigned rows;

	(void)state;
	counters_at(q, 100, 2, 0, 0, 0);
	a = build_counted(f, NULL, q, 100, NULL);
	counters_at(q, 110, 3, 0, 0, 0);
	b = build_counted(f, a, q, 110, NULL);
	assert_int_equal(fabric_find(b, SW1, 3)->health.n_downs, 1);
	assert_false(fabric_find(b, SW1, 3)->health.flapping);
	assert_int_equal(events(b, &rows), 0);
	fabric_snapshot_free(a);
	counters_at(q, 120, 7, 0, 0, 0);
	a = build_counted(f, b, q, 120, NULL);
	assert_true(fabric_find(a, SW1, 3)->health.flapping);
	assert_true(fabric_find(a, SW2, 3)->health.flapping);
	assert_int_equal(fabric_find(a, SW2, 3)->health.n_downs, 5);
	assert_int_equal(events(a, &rows), FABRIC_EV_FLAPPING);
	assert_int_equal(rows, 1);
	fabric_snapshot_free(b);
	counters_at(q, 130, 7, 0, 0, 0);
	b = build_counted(f, a, q, 130, NULL);
	assert_int_equal(events(b, &rows), 0); /* said once */
	counters_at(q, 800, 7, 0, 0, 0);
	d = build_counted(f, b, q, 800, NULL);
	assert_false(fabric_find(d, SW1, 3)->health.flapping);
	assert_int_equal(fabric_find(d, SW1, 3)->health.n_downs, 0);
	fabric_snapshot_free(a);
	fabric_snapshot_free(b);
	fabric_snapshot_free(d);
	topology_put(f);
}

/* PortXmitWait: a tick is 8 octets at the data rate. 8e9 b/s for 10 s is
 * 1.25e9 ticks; 312,500,000 of them waited: 250 per mille. */
static void xmit_wait_as_a_share_of_time(void **state)
{
	struct topology *f = fabric();
	struct pm_port_state q[2];
	struct fabric_snapshot *a, *b;
	const struct fabric_port *p;

	(void)state;
	counters_at(q, 100, 0, 0, 0, 1000);
	a = build_counted(f, NULL, q, 100, NULL);
	assert_false(fabric_find(a, SW1, 3)->health.have_xmit_wait);
	counters_at(q, 110, 0, 0, 0, 1000 + 312500000u);
	b = build_counted(f, a, q, 110, NULL);
	p = fabric_find(b, SW1, 3);
	assert_true(p->health.have_xmit_wait);
	assert_int_equal(p->health.xmit_wait_permille, 250);
	fabric_snapshot_free(a);
	fabric_snapshot_free(b);
	topology_put(f);
}

static void ber_as_mantissa_and_exponent(void **state)
{
	unsigned m;
	int e;

	(void)state;
	fabric_ber_split(2.5e-9, &m, &e);
	assert_true(m == 25 && e == -9);
	fabric_ber_split(9.96e-13, &m, &e);
	assert_true(m == 10 && e == -12); /* rounds up into the next power */
	fabric_ber_split(0, &m, &e);
	assert_true(m == 0 && e == 0);
	fabric_ber_split(1.0, &m, &e);
	assert_true(m == 10 && e == 0);
}

static void directory_names_every_node_and_its_context(void **state)
{
	struct topology *f = fabric();
	struct fabric_reading r[9];
	struct fabric_snapshot *s = build(f, NULL, r, readings(r, true, true, 2, 3), 100);
	struct node_dir *d = dir_build(f, s, NULL, NULL, 1u << 2, 100), *all;
	const struct node_entry *e;

	(void)state;
	assert_int_equal(d->n, 3);
	assert_int_equal(d->rows.count, 3);
	e = node_dir_find(d, SW1);
	assert_non_null(e);
	assert_string_equal(e->context, "ib-0000000000000001");
	assert_true(e->reachable && e->has_ident);
	assert_int_equal(e->vendor_id, 0x2c9);
	assert_int_equal(e->device_id, 0xc738);
	assert_int_equal(e->n_if, 4);
	assert_int_equal(e->if_rows.count, 4);
	assert_int_equal(((const struct node_port *)e->if_rows.array)[2].port, 3);
	/* switches only: the CA is listed, without a context */
	e = node_dir_find(d, CA1);
	assert_string_equal(e->context, "");
	assert_false(e->has_ident);
	all = dir_build(f, s, NULL, NULL, ALL_TYPES, 100);
	assert_string_equal(node_dir_find(all, CA1)->context, "ib-0000000000000010");
	node_dir_free(d);
	node_dir_free(all);
	fabric_snapshot_free(s);
	topology_put(f);
}

static void interfaces_take_links_and_counters_from_the_sweeps(void **state)
{
	struct topology *f = fabric();
	struct fabric_reading r[9];
	struct fabric_snapshot *s = build(f, NULL, r, readings(r, true, false, 2, 3), 100);
	struct pm_port_state st[2] = {
		{.guid = SW1, .port = 1, .have_raw = true, .rcv_data = 1000, .xmit_data = 3000,
		 .rcv_pkts = 10, .xmit_pkts = 30, .raw = {.rcv_errors = 7, .xmit_discards = 2}},
		{.guid = SW1, .port = 3, .have_raw = true, .extended = true, .rcv_data = 1,
		 .rcv_ucast_pkts = 5, .rcv_mcast_pkts = 6},
	};
	struct pm_snapshot pm = {.n = 2, .ports = st};
	struct node_dir *d = dir_build(f, s, &pm, NULL, ALL_TYPES, 100);
	const struct node_entry *e = node_dir_find(d, SW1);
	struct node_if v1, v2, v3;
	const struct node_if *i1 = &v1, *i3 = &v3;

	(void)state;
	node_if_view(&v1, e, &d->ports[e->first_if]);
	node_if_view(&v2, e, &d->ports[e->first_if + 1]);
	node_if_view(&v3, e, &d->ports[e->first_if + 2]);
	/* port 1: the CA's link, 4X SDR, counted without per-cast counters */
	assert_int_equal(node_if_oper_status(i1, true), NODE_IF_UP);
	assert_int_equal(node_if_admin_status(i1), NODE_IF_UP);
	assert_int_equal(node_if_high_speed(i1), 4 * 2500);
	assert_int_equal(i1->remote_guid, CA1);
	assert_string_equal(i1->remote_desc, "ca1");
	assert_true(i1->have_counters && !i1->c.per_cast);
	assert_int_equal(i1->c.in_octets, 4000);
	assert_int_equal(i1->c.out_octets, 12000);
	assert_int_equal(i1->c.in_errors, 7);
	assert_int_equal(i1->c.out_discards, 2);
	/* port 3: down (polling), no speed; per-cast counters when the node has them */
	assert_int_equal(node_if_oper_status(i3, true), NODE_IF_DOWN);
	assert_int_equal(node_if_high_speed(i3), 0);
	assert_true(i3->c.per_cast);
	assert_int_equal(i3->c.in_mcast, 6);
	/* port 2: never read by the PM sweep */
	assert_false(v2.have_counters);
	node_dir_free(d);
	fabric_snapshot_free(s);
	topology_put(f);
}

static void an_unreachable_node_is_held_then_dropped(void **state)
{
	struct topology *f = fabric(), *g;
	char err[100];
	struct fabric_reading r[9];
	struct fabric_snapshot *s = build(f, NULL, r, readings(r, true, true, 2, 3), 100);
	struct pm_port_state st = {.guid = CA1, .port = 1, .have_raw = true, .xmit_data = 9};
	struct pm_snapshot pm = {.n = 1, .ports = &st};
	struct node_dir *a = dir_build(f, s, &pm, NULL, ALL_TYPES, 100), *b, *c, *d;
	const struct node_entry *e;
	struct node_if view;

	(void)state;
	g = topology_parse(without_ca, strlen(without_ca), NULL, err, sizeof(err));
	assert_non_null(g);
	topology_get(g);
	/* gone from the discovery and from the PM sweep: kept, down, counters as
	 * last read, in copies of its own (the sweeps' snapshots are freed) */
	b = dir_build(g, NULL, NULL, a, ALL_TYPES, 200);
	node_dir_free(a);
	fabric_snapshot_free(s);
	memset(&st, 0xff, sizeof(st));
	e = node_dir_find(b, CA1);
	assert_non_null(e);
	assert_false(e->reachable);
	assert_int_equal(e->unreachable_since, 200);
	assert_string_equal(e->context, "ib-0000000000000010");
	node_if_view(&view, e, &b->ports[e->first_if]);
	assert_int_equal(node_if_oper_status(&view, e->reachable), NODE_IF_DOWN);
	assert_int_equal(view.c.out_octets, 36);
	assert_string_equal(view.remote_desc, "sw1");
	/* within the hold time: still there, since the same time */
	c = dir_build(g, NULL, NULL, b, ALL_TYPES, 259);
	assert_int_equal(node_dir_find(c, CA1)->unreachable_since, 200);
	/* then gone */
	d = dir_build(g, NULL, NULL, c, ALL_TYPES, 260);
	assert_null(node_dir_find(d, CA1));
	assert_int_equal(d->n, 2);
	node_dir_free(b);
	node_dir_free(c);
	node_dir_free(d);
	topology_put(f);
	topology_put(g);
}

/* LLDP-MIB's neighbours and their statistics, ENTITY-MIB's rows, as the
 * links go and come (no boot given: TimeTicks are the wall clock x 100). */
static void neighbours_and_entities_follow_the_links(void **state)
{
	struct topology *f = fabric();
	struct fabric_reading r[9];
	struct fabric_snapshot *s1 = build(f, NULL, r, readings(r, true, true, 2, 3), 100), *s2, *s3;
	struct node_dir *d1 = dir_build(f, s1, NULL, NULL, ALL_TYPES, 100), *d2, *d3, *d4;
	const struct node_entry *e;
	const struct node_neighbor *nb;
	struct node_dir boot = {.boot = 1000};

	(void)state;
	e = node_dir_find(d1, SW1);
	assert_int_equal(e->n_nb, 2); /* the CA on port 1, sw2 on port 3 */
	nb = d1->neighbors + e->first_nb;
	assert_true(nb[0].port == 1 && nb[1].port == 3);
	assert_true(nb[0].time_mark == 10000 && nb[1].time_mark == 10000);
	assert_int_equal(d1->ports[e->first_if + nb[1].if_at].link->remote_guid, SW2);
	assert_true(e->lldp_inserts == 2 && e->lldp_deletes == 0 && e->lldp_changed == 100);
	/* the chassis, then its four ports */
	assert_int_equal(d1->entities[e->first_entity].index, NODE_ENTITY_CHASSIS);
	assert_int_equal(d1->entities[e->first_entity + 4].index, NODE_ENTITY_PORT_BASE + 4);
	assert_int_equal(e->entity_changed, 100);
	/* sw1/3-sw2/3 goes down: a row deleted at both ends */
	s2 = build(f, s1, r, readings(r, true, false, 2, 3), 200);
	d2 = dir_build(f, s2, NULL, d1, ALL_TYPES, 200);
	e = node_dir_find(d2, SW1);
	assert_int_equal(e->n_nb, 1);
	assert_true(e->lldp_inserts == 2 && e->lldp_deletes == 1 && e->lldp_changed == 200);
	e = node_dir_find(d2, SW2);
	assert_true(e->n_nb == 0 && e->lldp_deletes == 1);
	/* and up again: a new row, marked when it came */
	s3 = build(f, s2, r, readings(r, true, true, 2, 3), 300);
	d3 = dir_build(f, s3, NULL, d2, ALL_TYPES, 300);
	e = node_dir_find(d3, SW1);
	nb = d3->neighbors + e->first_nb;
	assert_true(e->n_nb == 2 && nb[0].port == 1 && nb[1].port == 3);
	assert_int_equal(nb[1].time_mark, 30000);
	assert_true(e->lldp_inserts == 3 && e->lldp_deletes == 1 && e->lldp_changed == 300);
	assert_int_equal(e->entity_changed, 100);
	/* a build with nothing new (another sweep's): nothing came or went */
	d4 = dir_build(f, s3, NULL, d3, ALL_TYPES, 400);
	e = node_dir_find(d4, SW1);
	assert_true(e->lldp_inserts == 3 && e->lldp_deletes == 1 && e->lldp_changed == 300);
	/* TimeTicks from the agent's start */
	assert_int_equal(node_time_ticks(&boot, 999), 0);
	assert_int_equal(node_time_ticks(&boot, 1001), 100);
	node_dir_free(d1);
	node_dir_free(d2);
	node_dir_free(d3);
	node_dir_free(d4);
	fabric_snapshot_free(s1);
	fabric_snapshot_free(s2);
	fabric_snapshot_free(s3);
	topology_put(f);
}

static void interface_states_as_if_mib_says_them(void **state)
{
	struct node_if i = {.have_info = true, .phys_state = 5};

	(void)state;
	for (unsigned ls = 1; ls <= 5; ls++) {
		static const unsigned oper[] = {0, NODE_IF_DOWN, NODE_IF_DORMANT, NODE_IF_DORMANT,
						NODE_IF_UP, NODE_IF_UP};

		i.link_state = ls;
		assert_int_equal(node_if_oper_status(&i, true), oper[ls]);
		assert_int_equal(node_if_oper_status(&i, false), NODE_IF_DOWN);
	}
	i.phys_state = 3; /* Disabled */
	assert_int_equal(node_if_admin_status(&i), NODE_IF_DOWN);
	i.have_info = false;
	assert_int_equal(node_if_oper_status(&i, true), NODE_IF_DOWN);
	i = (struct node_if){.lanes = 4, .speed = 4};
	assert_int_equal(node_if_high_speed(&i), 56000); /* 4X FDR */
	i = (struct node_if){.lanes = 4, .speed = 5};
	assert_int_equal(node_if_high_speed(&i), 100000); /* 4X EDR */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(first_sweep_records_the_baseline_quietly),
		cmocka_unit_test(a_link_down_is_one_event_and_stays_a_row),
		cmocka_unit_test(ends_read_apart_in_one_sweep_are_one_event),
		cmocka_unit_test(a_host_back_after_its_switch_told_the_link_up_tells_nothing),
		cmocka_unit_test(alarms_name_a_link_once_and_a_silent_node),
		cmocka_unit_test(narrower_than_the_baseline_is_degraded),
		cmocka_unit_test(narrower_than_both_ends_can_is_degraded),
		cmocka_unit_test(a_node_no_longer_reached_keeps_its_links),
		cmocka_unit_test(a_partial_sweep_keeps_the_other_rows),
		cmocka_unit_test(the_state_file_round_trips),
		cmocka_unit_test(bad_state_files_are_refused_with_their_line),
		cmocka_unit_test(link_rules),
		cmocka_unit_test(bit_error_rates_over_the_window),
		cmocka_unit_test(flapping_is_one_notification_per_link),
		cmocka_unit_test(xmit_wait_as_a_share_of_time),
		cmocka_unit_test(ber_as_mantissa_and_exponent),
		cmocka_unit_test(directory_names_every_node_and_its_context),
		cmocka_unit_test(interfaces_take_links_and_counters_from_the_sweeps),
		cmocka_unit_test(an_unreachable_node_is_held_then_dropped),
		cmocka_unit_test(interface_states_as_if_mib_says_them),
		cmocka_unit_test(neighbours_and_entities_follow_the_links),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
