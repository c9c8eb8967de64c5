/* Inside the alarm area (alarm.h). */
#ifndef IBSNMPD_ALARM_INTERNAL_H
#define IBSNMPD_ALARM_INTERNAL_H

#include "ibsnmpd/netsnmp.h"

#include "ibsnmpd/alarm.h"
#include "ibsnmpd/area.h"
#include "ibsnmpd/mib_table.h"
#include "ibsnmpd/state_file.h"

#define ALARM_SOURCES_MAX 8

struct alarm_source {
	struct cache_group *group;
	alarm_collect_fn collect;
	struct cache_observer follows;
	bool seen;                  /* a snapshot of it was collected */
	/* what its snapshot `from` holds: collected again only when another
	 * is published (a vitals reading does not walk every port's link) */
	const void *from;
	struct alarm_list conds;
};

struct alarm_mib {
	struct mib_scalars scalars;
	struct mib_table table;
	struct mib_rows rows;       /* of the snapshot last asked */
};

struct alarm_area {
	struct cache_group group;   /* snapshot: struct alarm_snapshot */
	struct alarm_source src[ALARM_SOURCES_MAX];
	size_t n_src;
	struct alarm_snapshot *kept; /* the state file's, until every source published */
	time_t kept_until;          /* monotonic_whole_seconds(): or until then */
	struct state_file state;
	struct cache_observer saved, notified;
	struct alarm_mib mib;
};

/* A column of ibsnmpdAlarmTable of row a: 0, or -1 (no value). */
int alarm_mib_column(const struct alarm *a, unsigned column, netsnmp_variable_list *vb);
int alarm_mib_register(struct alarm_mib *m, struct alarm_area *a);
void alarm_mib_unregister(struct alarm_mib *m);
void alarm_notify_published(struct cache_group *g, const void *before, const void *after,
			    void *arg);

#endif
