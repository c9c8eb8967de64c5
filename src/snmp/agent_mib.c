/* IBSNMPD-MIB ibsnmpdStats: counters that let an operator (and the tests)
 * see what the agent costs the fabric, e.g. that a walk answered from the
 * caches sent no MAD; and ibsnmpdCacheTable, a row for every cache group
 * the running areas declare (area.h). */

#include "ibsnmpd/agent_mib.h"
#include "ibsnmpd/area.h"
#include "ibsnmpd/loop.h"
#include "ibsnmpd/mib_oids.h"
#include "ibsnmpd/mib_table.h"
#include "ibsnmpd/netsnmp_compat.h"
#include "ibsnmpd/notify.h"

#include <net-snmp/agent/agent_sysORTable.h>

static oid ibsnmpd_mib_oid[] = {OID_IBSNMPD_MIB};
static const oid stats_oid[] = {OID_IBSNMPD_STATS};
static const oid cache_table_oid[] = {OID_IBSNMPD_CACHE_TABLE};
static const oid queue_oid[] = {OID_IBSNMPD_NOTIFICATION_QUEUE};
static const oid instance_oid[] = {OID_IBSNMPD_INSTANCE};
static const oid loop_oid[] = {OID_IBSNMPD_LOOP};
struct cache_entry {
	const struct cache_decl *decl;
	const struct cache_group *group;
};

static struct {
	void (*mads)(struct agent_mib_mads *out); /* main.c's: the MAD engine's */
	unsigned count;
	struct mib_rows rows;
	struct mib_row row[CACHE_INDEX_MAX];
	struct cache_entry entry[CACHE_INDEX_MAX];
} stats;

static void mad_figures(struct agent_mib_mads *st)
{
	memset(st, 0, sizeof(*st));
	if (stats.mads)
		stats.mads(st);
}

static int stats_value(unsigned column, netsnmp_variable_list *vb, const void *snap)
{
	struct agent_mib_mads st;

	(void)snap;
	mad_figures(&st);
	switch (column) {
	case SCALAR_IBSNMPD_MADS_SENT: mib_set_unsigned(vb, ASN_COUNTER, st.sent); return 0;
	case SCALAR_IBSNMPD_MADS_ANSWERED: mib_set_unsigned(vb, ASN_COUNTER, st.answered); return 0;
	case SCALAR_IBSNMPD_MAD_TIMEOUTS: mib_set_unsigned(vb, ASN_COUNTER, st.timeouts); return 0;
	case SCALAR_IBSNMPD_MADS_DROPPED: mib_set_unsigned(vb, ASN_COUNTER, st.dropped); return 0;
	case SCALAR_IBSNMPD_MADS_IN_FLIGHT: mib_set_unsigned(vb, ASN_GAUGE, st.in_flight); return 0;
	default: return -1;
	}
}

static const void *stats_snapshot(const void *ctx)
{
	return ctx; /* always present */
}

static int cache_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		       const void *snap)
{
	const struct cache_entry *e = row;
	const struct cache_group *g = e->group;

	(void)snap;
	switch (column) {
	case COLUMN_IBSNMPD_CACHE_NAME: mib_set_octets(vb, e->decl->name, strlen(e->decl->name)); return 0;
	case COLUMN_IBSNMPD_CACHE_LIFETIME: mib_set_unsigned(vb, ASN_UNSIGNED, g->lifetime_s); return 0;
	case COLUMN_IBSNMPD_CACHE_AGE: {
		long age = cache_group_age_s(g);

		mib_set_unsigned(vb, ASN_UNSIGNED, age >= 0 ? (unsigned long)age : 4294967295UL);
		return 0;
	}
	case COLUMN_IBSNMPD_CACHE_REFRESHES: mib_set_unsigned(vb, ASN_COUNTER, g->attempts); return 0;
	case COLUMN_IBSNMPD_CACHE_FAILING: mib_set_int(vb, g->last_failed ? 2 : 1); return 0; /* ok(1), failing(2) */
	case COLUMN_IBSNMPD_CACHE_LAST_DURATION:
		mib_set_unsigned(vb, ASN_UNSIGNED, (unsigned long)(g->last_duration * 1000 + 0.5));
		return 0;
	default: return -1;
	}
}

static const struct mib_rows *cache_rows(const void *ctx, const void **snap)
{
	(void)ctx;
	*snap = NULL;
	return &stats.rows;
}

static struct mib_scalars stats_scalars = {
	.name = "ibsnmpdStats", .group_oid = stats_oid, .group_oid_len = OID_LENGTH(stats_oid),
	.first = SCALAR_IBSNMPD_MADS_SENT, .last = SCALAR_IBSNMPD_MADS_IN_FLIGHT,
	.snapshot = stats_snapshot, .value = stats_value,
	.ctx = &stats, .one_by_one = true, /* ibsnmpdCacheTable is inside the group */
};

/* ibsnmpdNotificationQueue: the notification path's queue (notify.c). */
static int queue_value(unsigned column, netsnmp_variable_list *vb, const void *snap)
{
	struct notify_queue_stats st;

	(void)snap;
	notify_get_queue_stats(&st);
	switch (column) {
	case SCALAR_IBSNMPD_NOTIFICATIONS_QUEUED: mib_set_unsigned(vb, ASN_GAUGE, st.queued); return 0;
	case SCALAR_IBSNMPD_NOTIFICATIONS_DROPPED:
		mib_set_unsigned(vb, ASN_COUNTER, st.dropped);
		return 0;
	case SCALAR_IBSNMPD_NOTIFICATIONS_SENT_LATE:
		mib_set_unsigned(vb, ASN_COUNTER, st.sent_late);
		return 0;
	case SCALAR_IBSNMPD_NOTIFICATIONS_IN_FLIGHT:
		mib_set_unsigned(vb, ASN_GAUGE, st.in_flight);
		return 0;
	case SCALAR_IBSNMPD_NOTIFICATIONS_UNANSWERED:
		mib_set_unsigned(vb, ASN_COUNTER, st.unanswered);
		return 0;
	case SCALAR_IBSNMPD_NOTIFICATIONS_HELD_BACK:
		mib_set_unsigned(vb, ASN_COUNTER, st.deferred);
		return 0;
	default: return -1; /* ibsnmpdNotificationTime: in notifications only */
	}
}

static struct mib_scalars queue_scalars = {
	.name = "ibsnmpdNotificationQueue", .group_oid = queue_oid,
	.group_oid_len = OID_LENGTH(queue_oid), .first = SCALAR_IBSNMPD_NOTIFICATIONS_QUEUED,
	/* ibsnmpdNotificationTime (4) is a hole: net-snmp's scalar group steps
	 * over it */
	.last = SCALAR_IBSNMPD_NOTIFICATIONS_HELD_BACK, .snapshot = stats_snapshot,
	.value = queue_value, .ctx = &stats,
};

/* ibsnmpdLoop: the main loop (loop.c) and the writes that would have
 * stopped it (netsnmp_compat.c). */
static int loop_value(unsigned column, netsnmp_variable_list *vb, const void *snap)
{
	struct loop_stats ls;
	struct compat_write_stats ws;

	(void)snap;
	loop_get_stats(&ls);
	compat_get_write_stats(&ws);
	switch (column) {
	case SCALAR_IBSNMPD_LOOP_LONGEST_PASS:
		mib_set_unsigned(vb, ASN_GAUGE, ls.longest_pass_ms);
		return 0;
	case SCALAR_IBSNMPD_LOOP_STALLS: mib_set_unsigned(vb, ASN_COUNTER, ls.stalls); return 0;
	case SCALAR_IBSNMPD_WRITES_REFUSED: mib_set_unsigned(vb, ASN_COUNTER, ws.refused); return 0;
	case SCALAR_IBSNMPD_STREAMS_SHUT: mib_set_unsigned(vb, ASN_COUNTER, ws.shut); return 0;
	case SCALAR_IBSNMPD_LOOP_LONGEST_WORK:
		mib_set_unsigned(vb, ASN_GAUGE, ls.longest_work_ms);
		return 0;
	case SCALAR_IBSNMPD_LOOP_LONGEST_SLEEP:
		mib_set_unsigned(vb, ASN_GAUGE, ls.longest_sleep_ms);
		return 0;
	default: return -1;
	}
}

static struct mib_scalars loop_scalars = {
	.name = "ibsnmpdLoop", .group_oid = loop_oid, .group_oid_len = OID_LENGTH(loop_oid),
	.first = SCALAR_IBSNMPD_LOOP_LONGEST_PASS, .last = SCALAR_IBSNMPD_LOOP_LONGEST_SLEEP,
	.snapshot = stats_snapshot, .value = loop_value, .ctx = &stats,
};

/* ibsnmpdInstance: the fabric this instance serves (fabricName), and
 * whether it may send SMPs there (the MAD engine's M_Key guard). */
static int instance_value(unsigned column, netsnmp_variable_list *vb, const void *snap)
{
	struct agent_mib_mads st;

	(void)snap;
	mad_figures(&st);
	switch (column) {
	case SCALAR_IBSNMPD_FABRIC_NAME:
		mib_set_octets(vb, ibsnmpd_cfg.fabric_name, strlen(ibsnmpd_cfg.fabric_name));
		return 0;
	case SCALAR_IBSNMPD_SMP_ACCESS:
		mib_set_int(vb, 1 + st.smp_access); /* unknown, answered, refused */
		return 0;
	case SCALAR_IBSNMPD_SMPS_REFUSED:
		mib_set_unsigned(vb, ASN_COUNTER, st.smps_refused);
		return 0;
	case SCALAR_IBSNMPD_M_KEY_VIOLATIONS_CAUSED:
		mib_set_unsigned(vb, ASN_COUNTER, st.mkey_violations_caused);
		return 0;
	default:
		return -1;
	}
}

static struct mib_scalars instance_scalars = {
	.name = "ibsnmpdInstance", .group_oid = instance_oid,
	.group_oid_len = OID_LENGTH(instance_oid), .first = SCALAR_IBSNMPD_FABRIC_NAME,
	.last = SCALAR_IBSNMPD_M_KEY_VIOLATIONS_CAUSED, .snapshot = stats_snapshot,
	.value = instance_value, .ctx = &stats,
};

static struct mib_table cache_table = {
	.name = "ibsnmpdCacheTable", .table_oid = cache_table_oid,
	.table_oid_len = OID_LENGTH(cache_table_oid), .first_column = COLUMN_IBSNMPD_CACHE_NAME,
	.last_column = COLUMN_IBSNMPD_CACHE_LAST_DURATION,
	.rows = cache_rows, .value = cache_value,
};

static void add_row(const struct cache_decl *decl, struct cache_group *g, void *arg)
{
	(void)arg;
	if (stats.count == CACHE_INDEX_MAX)
		return;
	stats.entry[stats.count].decl = decl;
	stats.entry[stats.count].group = g;
	stats.row[stats.count].index[0] = decl->index;
	stats.row[stats.count].index_len = 1;
	stats.row[stats.count].data = &stats.entry[stats.count];
	stats.count++;
}

int agent_mib_register(void (*mads)(struct agent_mib_mads *out))
{
	stats.mads = mads;
	stats.count = 0;
	areas_for_each_cache(add_row, NULL);
	stats.rows.rows = stats.row;
	stats.rows.count = stats.count;
	if (mib_scalars_register(&stats_scalars) || mib_table_register(&cache_table) ||
	    mib_scalars_register(&queue_scalars) || mib_scalars_register(&instance_scalars) ||
	    mib_scalars_register(&loop_scalars))
		return -1;
	register_sysORTable(ibsnmpd_mib_oid, OID_LENGTH(ibsnmpd_mib_oid),
			    "IBSNMPD-MIB: ibsnmpd statistics and InfiniBand MIB extensions");
	return 0;
}

void agent_mib_unregister(void)
{
	mib_scalars_unregister(&stats_scalars);
	mib_scalars_unregister(&queue_scalars);
	mib_scalars_unregister(&instance_scalars);
	mib_scalars_unregister(&loop_scalars);
	mib_table_unregister(&cache_table);
	unregister_sysORTable(ibsnmpd_mib_oid, OID_LENGTH(ibsnmpd_mib_oid));
}
