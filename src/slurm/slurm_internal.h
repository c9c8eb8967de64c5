/* The Slurm area's own (slurm_area.c, slurm_mib.c): its snapshot and its
 * instance. */
#ifndef IBSNMPD_SLURM_INTERNAL_H
#define IBSNMPD_SLURM_INTERNAL_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ibsnmpd/cache.h"
#include "ibsnmpd/mib_table.h"
#include "ibsnmpd/slurm.h"
#include "ibsnmpd/worker.h"

/* A row of ibsnmpdSlurmSwitchTable and of ibsnmpdSlurmMemberTable: their
 * indices, and what they show, in the tree */
struct slurm_switch_row {
	uint32_t index;                   /* its line, from 1 */
	const struct slurm_switch *sw;
};
struct slurm_member_row {
	uint32_t sw, member;              /* the switch's index, its place under it */
	const char *name;
};

/* What a build made, published: the tree as the file holds it. Built
 * whole on the worker's thread, read-only once published. */
struct slurm_snapshot {
	struct slurm_tree *tree;
	char *text;                       /* topology.conf */
	char *yaml;                       /* topology.yaml */
	size_t hosts_unknown;             /* hosts Slurm does not know (slurmNodes) */
	struct slurm_switch_row *switch_rows;
	struct slurm_member_row *member_rows; /* tree->n_members of them */
};

struct slurm_mib {
	struct mib_scalars scalars;
	struct mib_table switches, members;
	struct mib_rows rows;             /* a handler's, while it answers */
};

struct slurm_job;

struct slurm_area {
	struct cache_group group;         /* snapshot: struct slurm_snapshot */
	struct cache_group *links;
	struct cache_observer cabled;
	struct worker worker;
	struct slurm_job *job;
	unsigned settle_alarm;
	time_t pending_since;             /* a change waits to be settled: since when; 0: none */
	regex_t re;
	bool have_re;
	struct slurm_hosts *known;
	bool write_failed[2];             /* a file's failure said once: conf, yaml */
	bool config_pending;              /* a SIGHUP while a job ran: taken at its end */
	unsigned long writes;             /* ibsnmpdSlurmWrites */
	struct slurm_mib mib;
};

/* The file configured (slurmTopologyFile). */
const char *slurm_topology_path(void);

int slurm_mib_register(struct slurm_area *a);
void slurm_mib_unregister(struct slurm_area *a);

#endif
