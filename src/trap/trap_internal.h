/* What the trap area's files share: its instance and its configuration.
 *
 *   trap_area.c        the area: tokens, life cycle, the master SM watch
 *   trap_subscriber.c  the sources: SA subscriptions and Reports, opensm's log
 *   trap_notify.c      an observer: SMA-MIB's notifications
 *   trap_mib.c         IBSNMPD-MIB::ibsnmpdTraps */
#ifndef IBSNMPD_TRAP_INTERNAL_H
#define IBSNMPD_TRAP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "ibsnmpd/cache.h"
#include "ibsnmpd/mib_table.h"
#include "ibsnmpd/trap.h"

struct trap_config {
	bool subscribe;            /* InformInfo subscriptions with the SA */
	uint64_t sa_key;           /* SM_Key for traps 256-259 (opensm's sa_key); secret */
	bool sa_key_set;
	unsigned resubscribe_s;
	char osm_log_file[4096];   /* opensm's log: traps 129-131 ("" = off) */
	bool from_counters;        /* 129/130 from the PM sweep's counters */
};
extern struct trap_config trap_cfg;

/* SMA-MIB's ten: the trap numbers subscribed to. */
#define TRAP_SUBSCRIPTIONS 10

struct subscription {
	unsigned trap;
	bool active;       /* the SA accepted it (last answer) */
	bool pending;      /* a SubnAdmSet is under way */
	int last_result;   /* to log a change of outcome once */
};

/* Reports already answered: a resent Report (same TID from the same LID)
 * gets its ReportResp again but no second notification (trap_subscriber.c
 * says why the same Notice right behind it too). */
#define SEEN_REPORTS 64
struct seen_report {
	uint32_t tid;
	unsigned slid;
	double at;
	uint8_t notice[NOTICE_SIZE];
};

struct trap_area {
	struct trap_stats stats;
	struct trap_observer *observers;
	struct trap_observer notify;     /* SMA-MIB's notifications */
	/* the SA */
	bool running;
	unsigned sm_lid;
	unsigned generation; /* bumped when the SM moves: answers of the old one are stale */
	bool probing;        /* an SMInfo query to the SM is under way */
	bool sm_master;      /* the SM said it is master at the last query */
	bool renew_due;      /* trapResubscribeInterval passed: subscribe again */
	unsigned act_count;  /* its SMInfo ActCount then */
	unsigned alarm, alarm_interval;
	struct subscription sub[TRAP_SUBSCRIPTIONS];
	struct seen_report seen[SEEN_REPORTS];
	size_t seen_next;
	/* opensm's log */
	int log_fd, inotify_fd, watch;
	ino_t log_ino;
	off_t log_off;
	char line[1024];
	size_t line_len;
	unsigned log_alarm;
	bool log_missing_noted;
	/* the master SM: the local node's PortInfo names it */
	struct cache_group *local_ports;
	struct cache_observer sm_watch;
	unsigned sm_watch_alarm;
	unsigned first_sm_lid;           /* as umad said at start */
	uint64_t own_port_guid;          /* the local port's: an SMInfo of it is not the SM's */
	/* ibsnmpdTraps */
	struct mib_scalars scalars;
};

/* Every trap from every source goes through here. */
void trap_deliver(struct trap_area *t, const struct notice *n, const char *via);

/* The sources (trap_subscriber.c). */
void trap_subscriber_start(struct trap_area *t, unsigned sm_lid);
void trap_subscriber_stop(struct trap_area *t);
void trap_subscriber_apply_config(struct trap_area *t);
/* The master SM moved: subscribe there. */
void trap_subscriber_sm_changed(struct trap_area *t, unsigned sm_lid);
/* Whether the SM at the known LID answered as master (subscriptions sent;
 * true with trapSubscribe no: there is no SM to watch); probe_now asks it
 * (an SMInfo SMP), subscriptions follow its answer. */
bool trap_subscriber_has_master(const struct trap_area *t);
void trap_subscriber_probe_now(struct trap_area *t);
bool trap_subscriber_reads_osm_log(const struct trap_area *t);

/* The observer that sends SMA-MIB's notifications (trap_notify.c). */
void trap_notify_sma(const struct notice *n, const char *via, void *arg);

/* IBSNMPD-MIB::ibsnmpdTraps (trap_mib.c). */
int trap_mib_register(struct trap_area *t);
void trap_mib_unregister(struct trap_area *t);

#endif
