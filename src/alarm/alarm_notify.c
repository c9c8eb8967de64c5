/* The alarm table's own notifications: after a snapshot is published,
 *   ibsnmpdNodeUnreachable for a node's row that came (not one the state
 *     file or its area's first snapshot brought: that was said before),
 *   ibsnmpdAlarmCleared for a row that went whose raising notification
 *     has no clearing one of its own (alarm_kinds.c),
 * through the notification path. The other rows come and go with their
 * areas' notifications. */
#include "alarm_internal.h"

#include <stdlib.h>

#include "ibsnmpd/mib_oids.h"
#include "ibsnmpd/notify.h"

static const oid table_oid[] = {OID_IBSNMPD_ALARM_TABLE};

static int row_column(const void *row, unsigned column, netsnmp_variable_list *vb)
{
	return alarm_mib_column(row, column, vb);
}

static int by_index(const void *key, const void *row)
{
	uint32_t x = *(const uint32_t *)key, y = ((const struct alarm *)row)->index;

	return x < y ? -1 : x > y;
}

static bool holds(const struct alarm_snapshot *s, uint32_t index)
{
	return s && s->n && bsearch(&index, s->rows, s->n, sizeof(*s->rows), by_index);
}

static void add(netsnmp_variable_list **vl, const struct alarm *a, unsigned column)
{
	oid index[1] = {a->index};

	mib_notification_add_column(vl, table_oid, OID_LENGTH(table_oid), column, index, 1,
				    row_column, a);
}

static void send_unreachable(const struct alarm *a)
{
	static const oid trap[] = {OID_IBSNMPD_NODE_UNREACHABLE};
	netsnmp_variable_list *vl = mib_notification_new(trap, OID_LENGTH(trap));

	if (!vl)
		return;
	add(&vl, a, COLUMN_IBSNMPD_ALARM_DESCRIPTION);
	add(&vl, a, COLUMN_IBSNMPD_ALARM_NODE_GUID);
	add(&vl, a, COLUMN_IBSNMPD_ALARM_RESOURCE);
	add(&vl, a, COLUMN_IBSNMPD_ALARM_NODE_CONTEXT);
	notify_send(NOTIFY_ALARM, 17, a->index, vl);
}

static void send_cleared(const struct alarm *a)
{
	static const oid trap[] = {OID_IBSNMPD_ALARM_CLEARED};
	static const oid severity[] = {OID_IBSNMPD_ALARM_TABLE, 1, COLUMN_IBSNMPD_ALARM_SEVERITY};
	oid instance[OID_LENGTH(severity) + 1];
	netsnmp_variable_list *vl = mib_notification_new(trap, OID_LENGTH(trap));
	long cleared = 1;

	if (!vl)
		return;
	add(&vl, a, COLUMN_IBSNMPD_ALARM_NOTIFICATION);
	memcpy(instance, severity, sizeof(severity));
	instance[OID_LENGTH(severity)] = a->index;
	snmp_varlist_add_variable(&vl, instance, OID_LENGTH(instance), ASN_INTEGER, &cleared,
				  sizeof(cleared));
	add(&vl, a, COLUMN_IBSNMPD_ALARM_RESOURCE);
	add(&vl, a, COLUMN_IBSNMPD_ALARM_DESCRIPTION);
	notify_send(NOTIFY_ALARM, 18, a->index, vl);
}

void alarm_notify_published(struct cache_group *g, const void *before, const void *after,
			    void *arg)
{
	const struct alarm_snapshot *b = before, *s = after;

	(void)g;
	(void)arg;
	if (!b || !s)
		return; /* the first: what is wrong at the start was said before, or is said by
			   its area */
	for (size_t i = 0; i < b->n; i++) {
		const struct alarm *a = &b->rows[i];
		const struct alarm_kind_info *k = alarm_kind_info(a->key.kind);

		if (k && !k->cleared_by_own && !holds(s, a->index))
			send_cleared(a);
	}
	for (size_t i = 0; i < s->n; i++) {
		const struct alarm *a = &s->rows[i];

		if (a->key.kind == ALARM_NODE_UNREACHABLE && !a->restored && !holds(b, a->index))
			send_unreachable(a);
	}
}
