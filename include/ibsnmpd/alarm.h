/* The active alarms (the alarm area, src/alarm/): one row for every
 * condition that is wrong now and was notified, in IBSNMPD-MIB's
 * ibsnmpdAlarmTable. The areas that notify say what is wrong in their own
 * published snapshots (area_def.alarms: a collector of their group's
 * snapshot); the alarm area follows those groups and keeps an index and a
 * begin time for each condition while it lasts, across restarts (its
 * state file).
 *
 *   alarm_area.c    the area: the groups followed, the state file
 *   alarm_build.c   pure: a snapshot from the conditions and the one before
 *   alarm_state.c   pure: the state file's text, both ways (fuzzed)
 *   alarm_kinds.c   what each kind is: its notification, severity, type,
 *                   the row that details it
 *   alarm_mib.c     IBSNMPD-MIB::ibsnmpdAlarms
 *   alarm_notify.c  an observer: the notifications of conditions whose
 *                   area has none (ibsnmpdNodeUnreachable, ibsnmpdAlarmCleared)
 *
 * The collectors: fabric_alarms.c, vitals_alarms.c, pkey_alarms.c and
 * dcbx_alarms.c, each beside its area's notifications. */
#ifndef IBSNMPD_ALARM_H
#define IBSNMPD_ALARM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* What is wrong; the kind and (guid, port, sub) name a condition. */
enum alarm_kind {
	ALARM_LINK_DOWN = 1,        /* ibsnmpdLinkDown: a link of the baseline */
	ALARM_LINK_DEGRADED,        /* ibsnmpdLinkDegraded */
	ALARM_LINK_BER_HIGH,        /* ibsnmpdLinkBerHigh: the receiving port */
	ALARM_LINK_FLAPPING,        /* ibsnmpdLinkFlapping */
	ALARM_NODE_UNREACHABLE,     /* ibsnmpdNodeUnreachable: a node reached that stopped answering */
	ALARM_PARTITION_NOT_VERIFIED, /* ibPartitionNotVerified */
	ALARM_DCBX_FEATURE_ERROR,   /* lldpXdcbxMiscFeatureError: port = ifIndex, sub = feature */
	ALARM_DCBX_MISMATCH,        /* lldpXdcbxPeerConfigMismatch: port = ifIndex */
	ALARM_TEMPERATURE_HIGH,     /* ibsnmpdTemperatureHigh: sub = sensor + 1 */
	ALARM_FAN_FAILED,           /* ibsnmpdFanFailed: sub = tachometer + 1 */
	ALARM_MODULE_FAULTED,       /* ibsnmpdModuleFaulted: sub = module + 1 */
	ALARM_RX_POWER_LOW,         /* ibsnmpdModuleRxPowerLow: port, sub = lane */
	ALARM_ROUTE_CHECK_FAILED,   /* ibsnmpdRouteCheckFailed: sub = the check */
	ALARM_ROUTE_UNREACHABLE,    /* ibsnmpdRouteCheckFailed: a dead end or a loop: the
				       switch blamed, sub = the destination LID */
	ALARM_KINDS
};

struct alarm_key {
	uint64_t guid;              /* the node (0: none, e.g. the partition policy) */
	uint32_t port, sub;
	uint8_t kind;
};

#define ALARM_DESC_MAX 200

/* A condition as an area reports it. */
struct alarm_cond {
	struct alarm_key key;
	uint8_t node_type;          /* the node's (its context); 0 none */
	bool quiet;                 /* from its area's first snapshot: not notified here */
	char desc[ALARM_DESC_MAX];  /* readable: names both ends of a link */
};

struct alarm_list {
	struct alarm_cond *v;
	size_t n, cap;
	bool failed;                /* out of memory: the list is not whole */
};

/* A new condition at the end of l (its desc empty), or NULL (l->failed). */
struct alarm_cond *alarm_list_add(struct alarm_list *l, enum alarm_kind kind, uint64_t guid,
				  uint32_t port, uint32_t sub, unsigned node_type);
void alarm_list_free(struct alarm_list *l);

/* An area's collector: the conditions its published snapshot holds. */
typedef void (*alarm_collect_fn)(const void *snapshot, struct alarm_list *out);

struct area_def;
extern const struct area_def alarm_area_def;
struct cache_group;
/* The group of the running area (area_find(&alarm_area_def)); snapshot:
 * struct alarm_snapshot. */
struct cache_group *alarm_area_group(void *area);

/* ---- what a kind is (alarm_kinds.c) ---- */

/* ITU-T X.733 perceived severity and event type, in RFC 3877's numbers */
enum alarm_severity { SEV_CRITICAL = 3, SEV_MAJOR = 4, SEV_MINOR = 5, SEV_WARNING = 6 };
enum alarm_type {
	TYPE_COMMUNICATIONS = 2, TYPE_QUALITY_OF_SERVICE = 3, TYPE_PROCESSING_ERROR = 4,
	TYPE_EQUIPMENT = 5, TYPE_ENVIRONMENTAL = 6,
};

struct alarm_kind_info {
	const char *name;           /* the notification's descriptor (and /metrics' label) */
	enum alarm_severity severity;
	enum alarm_type type;
	bool cleared_by_own;        /* its area sends the clearing notification */
};
const struct alarm_kind_info *alarm_kind_info(unsigned kind); /* NULL: none */

/* ---- the snapshot (alarm_build.c) ---- */

struct alarm {
	struct alarm_key key;
	uint32_t index;             /* ibsnmpdAlarmIndex: never moves while it lasts */
	time_t began;               /* wall clock */
	uint32_t began_ticks;       /* sysUpTime when it began; 0: before the agent's start */
	uint8_t node_type;
	bool restored;              /* notified before (the state file), or quiet */
	char desc[ALARM_DESC_MAX];
};

struct mib_rows;
struct alarm_snapshot {
	size_t n;
	struct alarm *rows;         /* by index */
	uint32_t next_index;
	time_t last_change;         /* wall clock; 0: never */
	uint32_t last_change_ticks;
	bool changed;               /* rows came or went: the state file is to be written */
};

/* What a build starts from: the conditions now (sorted here), the snapshot
 * before (NULL: the first) and, until every area reporting conditions has
 * published once since the start, what the state file kept (NULL: none). */
struct alarm_build {
	struct alarm_list *conds;
	const struct alarm_snapshot *prev;
	const struct alarm_snapshot *kept;
	time_t now;
	uint32_t now_ticks;
};
struct alarm_snapshot *alarm_build(const struct alarm_build *in); /* NULL: out of memory */
void alarm_snapshot_free(void *p);
int alarm_key_cmp(const struct alarm_key *a, const struct alarm_key *b);

/* ---- the state file (alarm_state.c): pure, fuzzed ----
 *
 *   ibsnmpd-alarms 1
 *   next INDEX
 *   alarm INDEX KIND GUID PORT SUB BEGAN
 *
 * BEGAN in Unix seconds. A file that is not whole and well-formed is
 * refused as a whole (err names the line). */
char *alarm_state_format(const struct alarm_snapshot *s, size_t *len);
struct alarm_snapshot *alarm_state_parse(const char *text, size_t len, char *err, size_t errlen);

#endif
