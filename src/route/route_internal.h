/* The route area's own parts (route.h says what each file does). */
#ifndef IBSNMPD_ROUTE_INTERNAL_H
#define IBSNMPD_ROUTE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "ibsnmpd/mad_engine.h"
#include "ibsnmpd/mib_table.h"
#include "ibsnmpd/route.h"
#include "ibsnmpd/worker.h"

struct route_config {
	bool enabled;         /* routingCheck */
	unsigned interval_s;  /* routingCheckInterval; 0: cacheLifetime routing */
	unsigned settle_s;    /* routingSettle: after the topology changed, before reading */
	unsigned sm_stall_s;  /* routingSmStall: a master's ActCount still this long has stalled */
	char plan_path[4096]; /* expectedTopology: "" none */
	unsigned source;      /* routingSource: enum route_source */
	uint16_t path_sls;    /* routingPathSls: the SLs paths use, a bit each (0: SL 0) */
};
extern struct route_config route_cfg;

/* A read of every switch's table (route_read.c), then its checks on a
 * thread of their own (the main loop must not wait 2 s at 40,000 hosts). */
struct route_run {
	struct route_area *a;
	const struct topology *fabric; /* held */
	struct route_tables t;
	uint32_t *failed;              /* per switch: blocks unanswered */
	/* a partial read: the switches read whole, and the blocks read of
	 * the others (those of LIDs given or moved); NULL: every block of all */
	bool *whole;
	unsigned *some, n_some;
	bool adopted;                  /* t is the last read's, taken over */
	bool *skip;                    /* per switch: no way to send it SMPs */
	/* SLtoVLMappingTable reads after the blocks: a switch's port cabled
	 * to a switch, out, as from another such port, in */
	struct route_vl_read {
		uint32_t sw;
		uint8_t in, out;
	} *vl_reads;
	size_t n_vl_reads, next_vl;
	size_t next_sw;
	unsigned next_block, blocks;
	size_t pending;
	unsigned long mads;
	double began, read_done;
	struct mad_feeder feeder;
	/* routingSource sa (route_sa.c): the SA's copy, read by the helper,
	 * then a sample of blocks read from the switches and compared */
	bool from_sa, sa_done;
	unsigned paths_asked;          /* PathRecords not answered yet (route_sa_path_sls) */
	bool helper_fd;                /* fd is a helper's output, watched */
	pid_t pid;
	int fd, status;
	bool output_done, exited;
	char *line;
	size_t line_len, line_cap;
	uint32_t *sw_of_lid, *got;
	size_t n_lids;
	struct route_diff {
		size_t sw;
		unsigned block, differ, lid;
		uint8_t port, sm_port;
	} *diffs;
	size_t n_diffs, cap_diffs;
	/* the checks' thread */
	struct route_findings found;
	int check_rc;
	double check_seconds;
};

struct route_mib {
	struct mib_scalars scalars, subnet_scalars;
	struct mib_table checks, offenders, loads, hops, sms;
	struct mib_rows rows; /* the rows of the request being answered */
};

struct route_area {
	struct cache_group group;      /* snapshot: struct route_snapshot */
	struct cache_group *topology;
	struct cache_observer discovered, notified;
	struct route_run *run;         /* the read or the checks running; NULL none */
	struct worker checker;   /* the routing checks of a run */
	struct worker subnet;    /* the subnet checks (route_links.c) */
	struct route_subnet_job *job;  /* the subnet checks running; NULL none */
	bool subnet_again;             /* run them again once these are published */
	bool again;                    /* read again once this run is published */
	unsigned settle_alarm;         /* a change settling, or a resume (both read the changed) */
	unsigned resumes;              /* runs in a row that left switches unread */
	/* the last run's tables and the topology they name the switches of:
	 * a patch that changed some switches' ports has only those read again */
	struct route_tables last;
	const struct topology *last_fabric; /* held */
	uint64_t *changed;             /* switches a patch changed since (GUIDs) */
	size_t n_changed, cap_changed;
	unsigned *changed_lids;        /* LIDs a patch gave since (a new CA's, one moved) */
	size_t n_changed_lids, cap_changed_lids;
	bool full_next;                /* a change the partial read cannot follow */
	bool partial_wanted;           /* the next read is the settled change's, not the period's */
	unsigned sample_next;          /* routingSource sa: the first block of the next sample */
	unsigned long runs;
	/* the subnet checks: the link sweeps' group, and what the last one
	 * saw of each port (by GUID, port) with since when (monotonic s) */
	struct cache_group *links;     /* NULL: no link sweeps */
	struct cache_observer swept;
	struct route_port_fact *facts;
	time_t *since;
	size_t n_facts;
	const struct topology *facts_fabric; /* held: the discovery the facts are of */
	/* the SMs: their SMInfo asked after every link sweep (one round at a
	 * time), the last round's answers (by GUID: NULL, no round ended),
	 * and what is remembered of each SM across rounds */
	struct route_sm *sms;
	size_t n_sms;
	struct route_sm_round *round;  /* under way; NULL none */
	time_t round_at;               /* when the last began (monotonic s); 0 never */
	struct route_sm_track *track;
	size_t n_track;
	/* LIDs whose SM answered the last round: asked again (an SM on a
	 * switch's port 0, whose IsSM no link row shows, once master) */
	unsigned *answered_lids;
	size_t n_answered_lids;
	/* the expected cabling: the file as last read (its identity, so that a
	 * change is read again), what it says; a file that does not parse
	 * leaves the plan before */
	struct route_plan *plan;
	struct stat plan_st;
	bool plan_failed;             /* said once, until it reads again */
	uint64_t master, previous_master;
	unsigned sm_lid;               /* the local port's SM when the area started */
	struct route_mib mib;
};

/* route_read.c: the group's refresh (a read, then the checks) and its end */
int route_read_init(struct route_area *a); /* -1: no eventfd */
void route_read_start(struct cache_group *g);
void route_read_stop(struct route_area *a);
/* The topology changed (after; before: the one it replaced): a read once
 * it settled (routingSettle), of the switches it changed if it is a patch
 * that adds no node, else of all. */
void route_read_soon(struct route_area *a, const struct topology *before,
		     const struct topology *after);
/* Another SM became master: every table read once it settled (a new master
 * may route anew, or keep what it found). */
void route_read_master_changed(struct route_area *a, uint64_t was, uint64_t now);

/* route_area.c: a snapshot of routing (NULL: none yet; held by it) and
 * the subnet checks of subnet (NULL: those of before, if any, and its
 * SMs; else the caller gives the SMs) */
struct route_snapshot *route_snapshot_make(struct route_routing *routing,
					   const struct route_findings *subnet,
					   double subnet_seconds, const struct route_snapshot *before);
void route_routing_put(const struct route_routing *r);

/* route_links.c: the subnet checks after every link sweep published */
void route_links_start(struct route_area *a);
void route_links_stop(struct route_area *a);

/* An SM seen across rounds: its ActCount and since when (monotonic s),
 * since when it is master (0: it is not). */
struct route_sm_track {
	uint64_t guid;
	uint32_t act;
	time_t act_since, master_since;
	/* its last answer: when, and what it said (kept while it does not
	 * answer: route_links.c, round_end) */
	time_t answered_at;
	uint8_t state, priority;
	uint32_t still_s, master_s;
};

/* route_sa.c: routingSource sa */
/* The SA's copy read into r (set up as for a read of every switch), then
 * the sample; its end is route_read_sampled(). */
void route_sa_read(struct route_run *r);
/* Between the read and the checks: the SLs of a sample of paths, from the
 * SA's PathRecords (SubnAdmGet through the MAD engine), then
 * route_read_checks(). */
void route_sa_path_sls(struct route_run *r);
/* The differences the sample found, as reachability offenders of g. */
void route_sa_offenders(const struct route_run *r, struct route_findings *g);
void route_sa_free(struct route_run *r);
/* route_read.c: the blocks of r's some[] read from every switch (the
 * sample), compared with what is in its tables; then the checks. */
void route_read_sample(struct route_run *r);
/* A run that ended before its checks (its failure published): freed. */
void route_read_abandon(struct route_run *r);
/* The read is whole: the checks on their thread, then the publication. */
void route_read_checks(struct route_run *r);

/* route_mib.c */
int route_mib_register(struct route_area *a);
void route_mib_unregister(struct route_area *a);
/* A column of ibsnmpdRouteCheckTable, as the table serves it (the
 * notifications carry the same): 0, or -1 none. */
int route_mib_check_column(const struct route_snapshot *s, unsigned check, unsigned column,
			   netsnmp_variable_list *vb);
/* A column of ibsnmpdRouteSmTable (ibsnmpdMasterSmChanged carries the
 * same): 0, or -1 none. */
int route_mib_sm_column(const struct route_sm *m, unsigned column, netsnmp_variable_list *vb);

/* route_notify.c: an observer of the group */
void route_notify_published(struct cache_group *g, const void *before, const void *after,
			    void *arg);
/* route_alarms.c */
struct alarm_list;
void route_alarms(const void *snapshot, struct alarm_list *out);

#endif
