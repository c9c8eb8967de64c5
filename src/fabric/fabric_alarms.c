/* What the fabric group's snapshot says is wrong, for the active alarm
 * table (alarm.h): what the link notifications said and did not take back
 * (fabric_notify.c), and nodes reached that stopped answering.
 *   a link down or degraded (reported), flapping (now, and said): one row
 *     per link, spoken for by its switch end (between
 *     two of a kind, the lower GUID and port), named by both ends;
 *   a port's bit error rate over its threshold (as notified): the port
 *     that receives;
 *   a node every port of which went unanswered while a neighbour sees its
 *     link to it up, two builds in a row (a node cut off shows as its
 *     links down). */
#include <inttypes.h>
#include <stdio.h>

#include "ibsnmpd/alarm.h"
#include "ibsnmpd/fabric.h"

typedef bool (*link_holds_fn)(const struct fabric_port *p);

static bool is_down(const struct fabric_port *p)
{
	return p->reported == LINK_DOWN;
}

static bool is_degraded(const struct fabric_port *p)
{
	return p->reported == LINK_DEGRADED;
}

static bool is_flapping(const struct fabric_port *p)
{
	return p->health.flapping && p->health.flap_said != 0;
}

/* Whether p speaks for its link, the other end holding the same. */
static bool speaks(const struct fabric_snapshot *s, const struct fabric_port *p,
		   link_holds_fn holds)
{
	const struct fabric_port *q = fabric_peer(s, p);
	bool ps = p->node_type == 2, qs;

	if (!q || !holds(q))
		return true;
	qs = q->node_type == 2;
	if (ps != qs)
		return ps;
	return fabric_port_cmp(p, q) < 0;
}

static void name_end(char *out, size_t len, const char *desc, uint64_t guid, unsigned port)
{
	if (desc && desc[0])
		snprintf(out, len, "%s port %u", desc, port);
	else
		snprintf(out, len, "0x%016" PRIx64 " port %u", guid, port);
}

/* a, sep and b in desc, cut where it ends */
static void join(char desc[ALARM_DESC_MAX], const char *a, const char *sep, const char *b)
{
	size_t n = 0;

	for (const char *part[] = {a, sep, b}, **s = part; s < part + 3; s++)
		for (const char *q = *s; *q && n < ALARM_DESC_MAX - 1; q++)
			desc[n++] = *q;
	desc[n] = '\0';
}

/* A row of kind at p, its description p's end, sep and the other end */
static void add_port(struct alarm_list *out, enum alarm_kind kind, const struct fabric_port *p,
		     const char *sep)
{
	struct alarm_cond *c = alarm_list_add(out, kind, p->guid, p->port, 0, p->node_type);
	char a[ALARM_DESC_MAX / 2], b[ALARM_DESC_MAX / 2] = "";

	if (!c)
		return;
	name_end(a, sizeof(a), p->node_desc, p->guid, p->port);
	if (p->remote_guid)
		name_end(b, sizeof(b), p->remote_desc, p->remote_guid, p->remote_port);
	join(c->desc, a, b[0] ? sep : "", b);
}

static void add_node(struct alarm_list *out, const struct fabric_port *p)
{
	struct alarm_cond *c = alarm_list_add(out, ALARM_NODE_UNREACHABLE, p->guid, p->port, 0,
					      p->node_type);

	if (c && p->node_desc && p->node_desc[0])
		snprintf(c->desc, sizeof(c->desc), "%s", p->node_desc);
	else if (c)
		snprintf(c->desc, sizeof(c->desc), "0x%016" PRIx64, p->guid);
}

void fabric_alarms(const void *snapshot, struct alarm_list *out)
{
	static const struct {
		enum alarm_kind kind;
		link_holds_fn holds;
	} link_kinds[] = {
		{ALARM_LINK_DOWN, is_down},
		{ALARM_LINK_DEGRADED, is_degraded},
		{ALARM_LINK_FLAPPING, is_flapping},
	};
	const struct fabric_snapshot *s = snapshot;

	for (size_t i = 0; i < s->n; i++) {
		const struct fabric_port *p = &s->ports[i];

		for (size_t k = 0; k < sizeof(link_kinds) / sizeof(link_kinds[0]); k++)
			if (link_kinds[k].holds(p) && speaks(s, p, link_kinds[k].holds))
				add_port(out, link_kinds[k].kind, p, " <-> ");
		if (p->health.ber_reported)
			add_port(out, ALARM_LINK_BER_HIGH, p, ", receiving from ");
		/* a silent node (fabric_link.c: node_silence), named by its first row,
		 * whose ibsnmpdFabricPortStale says it */
		if ((i == 0 || s->ports[i - 1].guid != p->guid) && p->node_silent)
			add_node(out, p);
	}
}
