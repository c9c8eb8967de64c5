/* The partition policy as ibsnmpd serves and changes it: the file read and
 * written (pkey_policy.c), its member ports verified, and what the MIB
 * handlers read (pkey_mib.c). */
#ifndef IBSNMPD_PKEY_POLICY_H
#define IBSNMPD_PKEY_POLICY_H

#include "ibsnmpd/pkey.h"
#include "partition_file.h"

#include <sys/types.h>
#include <time.h>

#include "ibsnmpd/cache.h"
#include "ibsnmpd/mib_table.h"

struct pm_subnet;

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

struct pkey_status_snapshot {
	unsigned generation;   /* of the policy it verified */
	size_t n;
	struct partition_status *st; /* sorted by (pkey, guid) */
};

enum partition_apply_result {
	APPLY_NONE = 0, APPLY_VERIFIED = 1, APPLY_VERIFYING = 2, APPLY_NOT_VERIFIED = 3,
	APPLY_RELOAD_FAILED = 4, APPLY_WRITE_FAILED = 5,
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
	const struct pm_subnet *pm;
	char backup_path[4200];
	bool have_backup;
	/* what the MIB handlers read: snapshot struct pkey_view, rebuilt
	 * whenever the file, the verification or the last apply changes */
	struct cache_group view;
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

#endif
