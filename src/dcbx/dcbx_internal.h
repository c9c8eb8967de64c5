/* What the DCBX files share: the snapshot served (dcbx_snapshot.c), the
 * backend's SET entry point (dcbx_backend.c), and the notifications sent
 * from successive snapshots (dcbx_notify.c).
 *
 *   dcbx_mib.c --> dcbx_backend.c --> dcbnl.c (messages)
 *        |               |
 *        +-------> dcbx_snapshot.c          dcbx_notify.c --> dcbx_rules.c
 *                                           (observes the dcbx cache group) */
#ifndef IBSNMPD_DCBX_INTERNAL_H
#define IBSNMPD_DCBX_INTERNAL_H

#include "ibsnmpd/dcbx.h"
#include "ibsnmpd/mib_table.h"

#include "dcbnl.h"

/* LLDP-EXT-DCBX-MIB's tables, indexed with the snapshot */
enum dcbx_table { DCBX_T_PORT, DCBX_T_FEAT, DCBX_T_PRIO, DCBX_T_BW, DCBX_T_PFC, DCBX_T_APP,
		  DCBX_T_APP_PRIO, DCBX_T_COUNT };

struct dcbx_row {
	const struct dcbx_port *p;
	unsigned a, b; /* feature / priority / PG / app index; priority of an app */
};

struct dcbx_snapshot {
	size_t n;
	struct dcbx_port *ports; /* sorted by ifindex */
	struct mib_rows rows[DCBX_T_COUNT];
	struct dcbx_row *row_data[DCBX_T_COUNT];
};

/* A snapshot of the n ports (taken over, sorted here), its tables' rows
 * built; NULL on out of memory (ports freed). */
struct dcbx_snapshot *dcbx_snapshot_new(struct dcbx_port *ports, size_t n);
void dcbx_snapshot_free(struct dcbx_snapshot *s);
const struct dcbx_port *dcbx_snapshot_port(const struct dcbx_snapshot *s, unsigned ifindex);

/* A SET of one port, as the MIB handler validated it. */
struct dcbx_change {
	unsigned ifindex;
	bool set_state;
	uint8_t state;
	bool set_feat;
	uint8_t feat[DCBX_FEAT_COUNT];
	bool set_pg;
	uint8_t prio_pgid[DCBX_PRIOS], pg_bw[DCBX_PGS];
	bool set_pfc;
	uint8_t pfc[DCBX_PRIOS];
	size_t n_set_apps;
	struct dcbx_app set_apps[DCBX_APPS_MAX];
};

/* Sends the changes' set commands and SET_ALL, after any SET still under
 * way; done(ctx, 0, n) when the kernel accepted all n, done(ctx, errno,
 * accepted) at the first refusal (EOPNOTSUPP, EPERM, EINVAL, ...) or
 * ETIMEDOUT, with how many it had accepted before (nothing to undo if 0).
 * Later commands are not sent after a refusal. -1: not queued (no socket,
 * no memory). */
typedef void (*dcbx_set_done_fn)(void *ctx, int error, unsigned accepted);
int dcbx_apply(const struct dcbx_change *changes, size_t n, dcbx_set_done_fn done, void *ctx);

/* Sends the notifications of every snapshot the backend publishes. */
int dcbx_notify_watch(void);

#endif
