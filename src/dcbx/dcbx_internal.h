/* What the DCBX files share: the area's configuration and backend (the
 * socket, its poll cycles and SETs: dcbx_backend.c), the snapshot served
 * (dcbx_snapshot.c), the handlers (dcbx_mib.c), and the notifications sent
 * from successive snapshots (dcbx_notify.c).
 *
 *   dcbx_area.c --> dcbx_backend.c --> dcbnl.c (messages)
 *    |     |              |
 *    |     +--> dcbx_mib.c --> dcbx_snapshot.c
 *    +--> dcbx_notify.c --> dcbx_rules.c (observes the backend's group) */
#ifndef IBSNMPD_DCBX_INTERNAL_H
#define IBSNMPD_DCBX_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "ibsnmpd/cache.h"
#include "ibsnmpd/dcbx.h"
#include "ibsnmpd/mib_set.h"
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

/* The area's configuration (dcbx_area.c). */
struct dcbx_config {
	bool enabled;                 /* dcbxEnable */
	char interfaces[32][16];      /* dcbxInterface: served; none: every DCB-capable one */
	size_t n_interfaces;
	char socket[108];             /* dcbxSocket, tests: a fake kernel's socket, not netlink */
};
extern struct dcbx_config dcbx_cfg;

/* ---- the backend (dcbx_backend.c) ---- */

struct dcbx_link {
	unsigned ifindex;
	char name[DCBX_IFNAME_MAX];
};

enum dcbx_step { STEP_IDLE, STEP_LINKS, STEP_STATE, STEP_NUMTCS, STEP_CEE, STEP_SET };

struct dcbx_backend {
	int fd;
	bool readfd;
	struct cache_group group;
	uint32_t seq, want_seq;
	enum dcbx_step step;
	unsigned timeout_alarm;
	/* the running cycle */
	struct dcbx_link *links;
	size_t n_links, cap_links, cur;
	struct dcbx_port *ports;
	size_t n_ports, cap_ports;
	struct dcbx_port work;
	char skipped[512];   /* interfaces without dcbnl, for the once-logged note */
	bool again;          /* an event came during the cycle */
	bool refresh_pending; /* the cache asked for a cycle during a SET */
	/* the SET running or waiting */
	struct set_job *job, *job_tail; /* SETs: the one running, then those waiting */
	uint8_t buf[DCBNL_BUF_SIZE];
};

/* Opens the kernel's socket (or dcbxSocket's) and starts polling. */
int dcbx_backend_start(struct dcbx_backend *b, unsigned lifetime_s);
void dcbx_backend_stop(struct dcbx_backend *b);
/* After SIGHUP: the poll interval (dcbxInterface lines apply at the next poll). */
void dcbx_backend_apply_config(struct dcbx_backend *b, unsigned lifetime_s);

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
int dcbx_apply(struct dcbx_backend *b, const struct dcbx_change *changes, size_t n,
	       dcbx_set_done_fn done, void *ctx);

/* ---- the handlers (dcbx_mib.c) ---- */

#define DCBX_MIB_TABLES DCBX_T_COUNT
struct dcbx_mib {
	struct dcbx_backend *backend;
	struct mib_table tables[DCBX_MIB_TABLES];
	struct mib_scalars numtcs[2];     /* PG's and PFC's smallest TC counts */
	struct mib_set_domain domain;     /* a SET of any of them */
	struct mib_set_table sets[DCBX_MIB_TABLES];
};
/* LLDP-EXT-DCBX-MIB of one backend, in a context (NULL: the default one). */
int dcbx_mib_register(struct dcbx_mib *m, struct dcbx_backend *b, const char *context);
void dcbx_mib_unregister(struct dcbx_mib *m);

/* An observer of the backend's group: the notifications the rules find
 * between two snapshots (dcbx_notify.c). */
/* The active alarms of a snapshot (struct dcbx_snapshot): alarm.h. */
struct alarm_list;
void dcbx_alarms(const void *snapshot, struct alarm_list *out);
void dcbx_notify_published(struct cache_group *g, const void *before, const void *after,
			   void *arg);

#endif
