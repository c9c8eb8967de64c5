/* The partition policy as ibsnmpd serves and changes it: the file read and
 * written (pkey_policy.c), its member ports verified, what the MIB handlers
 * read (pkey_view.c, pkey_mib.c), and the notification when a change could
 * not be verified (pkey_notify.c). */
#ifndef IBSNMPD_PKEY_POLICY_H
#define IBSNMPD_PKEY_POLICY_H

#include "ibsnmpd/pkey.h"
#include "partition_file.h"

#include <sys/types.h>
#include <time.h>

#include "ibsnmpd/cache.h"
#include "ibsnmpd/mib_set.h"
#include "ibsnmpd/mib_table.h"

/* The area's configuration (pkey_area.c). */
struct pkey_config {
	char partition_file[4096];         /* opensm's partition file */
	char opensm_pid_file[4096];        /* SIGHUP opensm after a change ("" = none) */
	char opensm_reload_command[1024];  /* or run this ("" = none) */
	unsigned verify_delay_s;           /* first check of the ports after a change */
};
extern struct pkey_config pkey_cfg;

enum partition_status_value {
	PSTAT_APPLIED = 1,     /* the port holds the P_Key with the right membership */
	PSTAT_PENDING = 2,     /* written, not verified yet */
	PSTAT_MISSING = 3,     /* the port does not hold it (or not as full/limited) */
	PSTAT_UNREACHABLE = 4, /* not in the subnet, or its SMA does not answer */
	PSTAT_REJECTED = 5,    /* opensm will not apply it (a switch port, PartitionCap) */
};

struct partition_status {
	unsigned pkey;
	uint64_t guid;
	enum partition_status_value status;
	char detail[96];
};

enum partition_apply_result {
	APPLY_NONE = 0, APPLY_VERIFIED = 1, APPLY_VERIFYING = 2, APPLY_NOT_VERIFIED = 3,
	APPLY_RELOAD_FAILED = 4, APPLY_WRITE_FAILED = 5,
};

/* The active alarms of a snapshot (struct pkey_status_snapshot): alarm.h. */
struct alarm_list;
void pkey_alarms(const void *snapshot, struct alarm_list *out);

struct pkey_status_snapshot {
	unsigned generation;   /* of the policy it verified */
	size_t n;
	struct partition_status *st; /* sorted by (pkey, guid) */
	/* the last apply's outcome as of this verification; gave_up: this one
	 * ended the apply's checks without every member holding its P_Key (the
	 * event pkey_notify.c sends) */
	enum partition_apply_result apply_result;
	bool gave_up;
	char apply_error[256];
};

/* IBSNMPD-PARTITION-MIB of one policy, in a context (NULL: the default one)
 * (pkey_mib.c). */
struct pkey_mib {
	struct mib_table part_table, member_table;
	struct mib_scalars policy;
	struct mib_set_domain domain;     /* a SET of any of them */
	struct mib_set_table part_set, member_set, policy_set;
};

struct pkey_policy {
	struct partition_file pf;  /* the file as last read or written */
	bool loaded;
	char load_error[256];
	unsigned generation;       /* moves at every change of pf */
	struct timespec mtime;
	ino_t ino;
	off_t size;
	time_t last_apply;
	enum partition_apply_result last_result;
	char last_error[256];
	unsigned applied_generation, verify_rounds, verify_alarm, watch_alarm;
	struct cache_group status; /* snapshot: struct pkey_status_snapshot */
	struct cache_group *topology; /* the discovery's group; NULL: none */
	struct cache_observer discovered, notified;
	char backup_path[4200];
	bool have_backup;
	/* what the MIB handlers read: snapshot struct pkey_view, rebuilt
	 * whenever the file, the verification or the last apply changes */
	struct cache_group view;
	struct cache_observer view_follows;
	struct pkey_mib mib;
};

/* ---- the view (pkey_view.c) ---- */

struct pkey_partition_row {
	unsigned pkey;
	char name[PARTITION_NAME_MAX + 1];
	bool ipoib;
	int mtu, rate, sl, scope;        /* -1: not given */
	enum member_type defmember;
	enum partition_status_value status; /* the worst of its members' */
};

struct pkey_member_row {
	unsigned pkey;
	uint64_t guid;
	enum member_type type;           /* as opensm applies it */
	enum partition_status_value status;
	char detail[96];
};

struct pkey_view {
	size_t n_parts, n_members;
	struct pkey_partition_row *parts;
	struct pkey_member_row *members;
	struct mib_rows part_rows;       /* index: P_Key */
	struct mib_rows member_rows;     /* index: P_Key, port GUID (8 octets) */
	/* ibPartitionPolicy */
	bool loaded;                     /* the file parsed */
	bool unconfigured_connected;
	time_t last_apply;
	enum partition_apply_result last_result;
	char error[256];                 /* of the last apply, or why the file did not parse */
};

void pkey_view_init(struct pkey_policy *pp);
/* Rebuilds the view now: the file, the verification or the last apply changed. */
void pkey_view_refresh(struct pkey_policy *pp);

/* Reads the file again if it changed on disk (someone edited it). */
void pkey_policy_reload_if_changed(struct pkey_policy *pp);
/* Writes what from describes: rendered, parsed again, written to a
 * temporary file, fsync'd, the old file kept as FILE.bak, renamed over. */
int pkey_policy_write(struct pkey_policy *pp, const struct partition_file *from, char *err,
		      size_t errlen);
/* Back to the file before the last write (a SET that is undone). */
int pkey_policy_restore(struct pkey_policy *pp);
/* Tells opensm to read the file again and starts verification. */
void pkey_policy_apply(struct pkey_policy *pp);
const struct partition_status *pkey_status_find(const struct pkey_status_snapshot *s,
						unsigned pkey, uint64_t guid);

/* Reads the partition file and starts verifying its member ports (their
 * LIDs and links come from the discovery topology publishes; NULL: none). */
struct pkey_policy *pkey_policy_start(struct cache_group *topology, unsigned lifetime_s);
void pkey_policy_stop(struct pkey_policy *pp);

int pkey_mib_register(struct pkey_mib *m, struct pkey_policy *pp, const char *context);
void pkey_mib_unregister(struct pkey_mib *m);
/* An observer of the status group: ibPartitionNotVerified (pkey_notify.c). */
void pkey_notify_published(struct cache_group *g, const void *before, const void *after,
			   void *arg);

#endif
