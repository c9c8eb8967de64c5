/* The DCBX state of the host's ports, kept by talking dcbnl to the kernel.
 *
 * One socket: NETLINK_ROUTE joined to RTNLGRP_DCB, or (dcbxSocket, tests)
 * a SOCK_SEQPACKET unix socket with a fake kernel on the other end: the
 * messages are the same, only the transport differs. All I/O is
 * non-blocking on net-snmp's main loop (register_readfd); one request is
 * outstanding at a time, each with a 2 s timeout.
 *
 * A poll cycle (cache group "dcbx", every cacheLifetime dcbx seconds, and at
 * once after a RTNLGRP_DCB event): RTM_GETLINK dump -> for each interface
 * (or each dcbxInterface) DCB_CMD_GSTATE; an interface that refuses it has no
 * dcbnl ops and is skipped; else GNUMTCS and CEE_GET. The new snapshot
 * replaces the old one whole (its observer, dcbx_notify.c, turns the
 * differences into notifications).
 * SETs (dcbx_apply) wait for a running cycle and run before the next one. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/dcbnl.h>
#include <linux/rtnetlink.h>

#include "ibsnmpd/cache.h"
#include "ibsnmpd/config.h"
#include "ibsnmpd/netsnmp.h"

#include "dcbx_internal.h"

#define REQUEST_TIMEOUT_S 2

struct link {
	unsigned ifindex;
	char name[DCBX_IFNAME_MAX];
};

enum step { STEP_IDLE, STEP_LINKS, STEP_STATE, STEP_NUMTCS, STEP_CEE, STEP_SET };

static struct {
	int fd;
	bool readfd;
	struct cache_group group;
	uint32_t seq, want_seq;
	enum step step;
	unsigned timeout_alarm;
	/* the running cycle */
	struct link *links;
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
} B = {.fd = -1};

/* ---- transport ---- */

static int open_netlink(void)
{
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
	struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
	int group = RTNLGRP_DCB;

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	if (setsockopt(fd, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof(group)) < 0)
		snmp_log(LOG_WARNING, "dcbx: cannot join RTNLGRP_DCB (%s): changes are seen at "
			 "the next poll only\n", strerror(errno));
	return fd;
}

static int open_test_socket(const char *path)
{
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	if (fd < 0)
		return -1;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return fd;
}

static void on_timeout(unsigned reg, void *arg);

static int send_request(size_t len)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)B.buf;

	if (!len)
		return -1;
	B.want_seq = nlh->nlmsg_seq;
	if (send(B.fd, B.buf, len, 0) != (ssize_t)len) {
		snmp_log(LOG_WARNING, "dcbx: cannot send to the kernel: %s\n", strerror(errno));
		return -1;
	}
	if (B.timeout_alarm)
		snmp_alarm_unregister(B.timeout_alarm);
	B.timeout_alarm = snmp_alarm_register(REQUEST_TIMEOUT_S, 0, on_timeout, NULL);
	return 0;
}

static uint32_t next_seq(void)
{
	if (++B.seq == 0)
		B.seq = 1; /* 0 is the kernel's events' */
	return B.seq;
}

/* ---- the poll cycle ---- */

static bool wanted(const char *name)
{
	if (!ibsnmpd_cfg.n_dcbx_interfaces)
		return true;
	for (size_t i = 0; i < ibsnmpd_cfg.n_dcbx_interfaces; i++)
		if (!strcmp(ibsnmpd_cfg.dcbx_interfaces[i], name))
			return true;
	return false;
}

static void cycle_finish(bool ok, const char *failure);
static void cycle_start(void);
static void job_start(void);

static void port_next(void)
{
	while (B.cur < B.n_links && !wanted(B.links[B.cur].name))
		B.cur++;
	if (B.cur == B.n_links) {
		cycle_finish(true, NULL);
		return;
	}
	memset(&B.work, 0, sizeof(B.work));
	B.work.ifindex = B.links[B.cur].ifindex;
	snprintf(B.work.ifname, sizeof(B.work.ifname), "%s", B.links[B.cur].name);
	B.step = STEP_STATE;
	if (send_request(dcbnl_build_get(B.buf, sizeof(B.buf), DCB_CMD_GSTATE, next_seq(),
					 B.work.ifname)))
		cycle_finish(false, "cannot send to the kernel");
}

/* Makes room for element n of a growing array; -1 on out of memory. */
static int room_for_one(void **array, size_t *cap, size_t n, size_t size)
{
	void *bigger;
	size_t more;

	if (n < *cap)
		return 0;
	more = *cap ? 2 * *cap : 16;
	if (!(bigger = realloc(*array, more * size)))
		return -1;
	*array = bigger;
	*cap = more;
	return 0;
}

static void port_done(void)
{
	if (room_for_one((void **)&B.ports, &B.cap_ports, B.n_ports, sizeof(*B.ports))) {
		cycle_finish(false, "out of memory");
		return;
	}
	B.ports[B.n_ports++] = B.work;
	B.cur++;
	port_next();
}

static void port_skipped(int error)
{
	size_t used = strlen(B.skipped);

	if (used < sizeof(B.skipped) - 40)
		snprintf(B.skipped + used, sizeof(B.skipped) - used, "%s%s (%s)", used ? ", " : "",
			 B.work.ifname, strerror(error));
	B.cur++;
	port_next();
}

static void cycle_start(void)
{
	B.n_links = B.n_ports = B.cur = 0;
	B.skipped[0] = '\0';
	B.again = false;
	B.step = STEP_LINKS;
	if (send_request(dcbnl_build_link_dump(B.buf, sizeof(B.buf), next_seq())))
		cycle_finish(false, "cannot ask the kernel for its interfaces");
}

static void refresh(struct cache_group *g)
{
	(void)g;
	if (B.job) {
		B.refresh_pending = true; /* the cycle runs when the SET is done */
		return;
	}
	cycle_start();
}

static void free_snapshot(void *v)
{
	dcbx_snapshot_free(v);
}

static void cycle_finish(bool ok, const char *failure)
{
	struct dcbx_snapshot *fresh = NULL;
	char note[640] = "";

	if (B.timeout_alarm)
		snmp_alarm_unregister(B.timeout_alarm);
	B.timeout_alarm = 0;
	B.step = STEP_IDLE;
	if (ok) {
		/* the cycle's ports become the snapshot's */
		fresh = dcbx_snapshot_new(B.ports, B.n_ports);
		B.ports = NULL;
		B.n_ports = B.cap_ports = 0;
	}
	if (fresh && !fresh->n)
		snprintf(note, sizeof(note), "no interface answers dcbnl%s%.500s%s: the DCBX "
			 "tables are empty", B.skipped[0] ? " (" : "", B.skipped,
			 B.skipped[0] ? ")" : "");
	if (fresh)
		cache_refresh_done(&B.group, fresh, note[0] ? note : NULL);
	else
		cache_refresh_done(&B.group, NULL, failure ? failure : "out of memory");
	if (B.job)
		job_start();
	else if (B.again)
		cache_group_refresh_now(&B.group);
}

/* ---- SET jobs ---- */

/* The commands of one port's change, in the order they are sent. */
enum set_step { SET_STATE, SET_FEATURES, SET_PG, SET_PFC, SET_APPS, SET_ALL, SET_PORT_DONE };

struct set_job {
	struct set_job *next;
	struct dcbx_change *changes;
	size_t n, cur;      /* the port being set */
	enum set_step step; /* its next command */
	size_t app;         /* its next app, at SET_APPS */
	unsigned accepted; /* commands the kernel took */
	dcbx_set_done_fn done;
	void *ctx;
};

static void job_end(int error)
{
	struct set_job *j = B.job;

	if (B.timeout_alarm)
		snmp_alarm_unregister(B.timeout_alarm);
	B.timeout_alarm = 0;
	B.job = j->next;
	if (!B.job)
		B.job_tail = NULL;
	B.step = STEP_IDLE;
	j->done(j->ctx, error, j->accepted);
	free(j->changes);
	free(j);
	if (B.job) {
		job_start(); /* the next SET waiting */
		return;
	}
	/* read what the kernel made of it */
	if (B.refresh_pending) {
		B.refresh_pending = false;
		cycle_start();
	} else {
		cache_group_refresh_now(&B.group);
	}
}

/* Builds the next command of the port's change into B.buf and moves past
 * it: the commands its change needs, then SET_ALL; 0 when none is left. */
static size_t next_command(struct set_job *j, const struct dcbx_change *c, const char *ifname)
{
	for (;;) {
		switch (j->step) {
		case SET_STATE:
			j->step = SET_FEATURES;
			if (c->set_state)
				return dcbnl_build_set_state(B.buf, sizeof(B.buf), next_seq(), ifname,
							     c->state);
			break;
		case SET_FEATURES:
			j->step = SET_PG;
			if (c->set_feat)
				return dcbnl_build_set_featcfg(B.buf, sizeof(B.buf), next_seq(), ifname,
							       c->feat);
			break;
		case SET_PG:
			j->step = SET_PFC;
			if (c->set_pg)
				return dcbnl_build_set_pgtx(B.buf, sizeof(B.buf), next_seq(), ifname,
							    c->prio_pgid, c->pg_bw);
			break;
		case SET_PFC:
			j->step = SET_APPS;
			if (c->set_pfc)
				return dcbnl_build_set_pfc(B.buf, sizeof(B.buf), next_seq(), ifname,
							   c->pfc);
			break;
		case SET_APPS:
			if (j->app < c->n_set_apps)
				return dcbnl_build_set_app(B.buf, sizeof(B.buf), next_seq(), ifname,
							   &c->set_apps[j->app++]);
			j->step = SET_ALL;
			break;
		case SET_ALL:
			j->step = SET_PORT_DONE;
			return dcbnl_build_set_all(B.buf, sizeof(B.buf), next_seq(), ifname);
		case SET_PORT_DONE:
			return 0;
		}
	}
}

/* Sends the job's next command; returns 1 when there is none left, -1 when
 * the job ended in a failure. */
static int job_send_next(void)
{
	struct set_job *j = B.job;

	while (j->cur < j->n) {
		const struct dcbx_change *c = &j->changes[j->cur];
		const struct dcbx_port *p = dcbx_snapshot_port(cache_snapshot(&B.group), c->ifindex);
		size_t len;

		if (!p) {
			job_end(ENODEV);
			return -1;
		}
		len = next_command(j, c, p->ifname);
		if (!len) { /* this port is done: the next one */
			j->cur++;
			j->step = SET_STATE;
			j->app = 0;
			continue;
		}
		if (send_request(len)) {
			job_end(EIO);
			return -1;
		}
		return 0;
	}
	return 1;
}

static void job_start(void)
{
	B.step = STEP_SET;
	if (job_send_next() == 1)
		job_end(0);
}

int dcbx_apply(const struct dcbx_change *changes, size_t n, dcbx_set_done_fn done, void *ctx)
{
	struct set_job *j;

	if (B.fd < 0)
		return -1;
	j = calloc(1, sizeof(*j));
	if (!j || !(j->changes = malloc(n * sizeof(*changes) + 1))) {
		free(j);
		return -1;
	}
	memcpy(j->changes, changes, n * sizeof(*changes));
	j->n = n;
	j->done = done;
	j->ctx = ctx;
	if (B.job_tail) {
		B.job_tail->next = j; /* after the SETs before it */
		B.job_tail = j;
		return 0;
	}
	B.job = B.job_tail = j;
	if (B.step == STEP_IDLE)
		job_start();
	return 0;
}

/* ---- receiving ---- */

static void on_timeout(unsigned reg, void *arg)
{
	(void)reg;
	(void)arg;
	B.timeout_alarm = 0;
	snmp_log(LOG_WARNING, "dcbx: the kernel did not answer within %d s\n",
		 REQUEST_TIMEOUT_S);
	if (B.step == STEP_SET)
		job_end(ETIMEDOUT);
	else if (B.step != STEP_IDLE)
		cycle_finish(false, "the kernel did not answer");
}

static void on_event(const struct dcbnl_reply *r)
{
	DEBUGMSGTL(("ibsnmpd:dcbx", "event cmd %u for %s\n", r->cmd, r->ifname));
	if (B.step == STEP_IDLE && !B.job)
		cache_group_refresh_now(&B.group);
	else
		B.again = true;
}

/* ---- the answers, step by step ---- */

/* One interface of the link dump (multipart, ended by NLMSG_DONE). */
static void links_reply(const struct dcbnl_reply *r)
{
	if (r->error) {
		cycle_finish(false, "the kernel refused the interface dump");
		return;
	}
	if (r->type == RTM_NEWLINK && r->ifindex && r->ifname[0]) {
		if (room_for_one((void **)&B.links, &B.cap_links, B.n_links, sizeof(*B.links))) {
			cycle_finish(false, "out of memory");
			return;
		}
		B.links[B.n_links].ifindex = r->ifindex;
		snprintf(B.links[B.n_links].name, DCBX_IFNAME_MAX, "%s", r->ifname);
		B.n_links++;
	}
	if (r->type == NLMSG_DONE) {
		B.cur = 0;
		port_next();
	}
}

/* GSTATE: an interface that refuses it has no dcbnl ops. */
static void state_reply(const struct dcbnl_reply *r, const struct dcbx_port *decoded)
{
	if (r->error || !decoded->have_state) {
		port_skipped(r->error ? r->error : EPROTO);
		return;
	}
	B.work.have_state = true;
	B.work.state = decoded->state;
	B.step = STEP_NUMTCS;
	if (send_request(dcbnl_build_get(B.buf, sizeof(B.buf), DCB_CMD_GNUMTCS, next_seq(),
					 B.work.ifname)))
		cycle_finish(false, "cannot send to the kernel");
}

static void numtcs_reply(const struct dcbnl_reply *r, const struct dcbx_port *decoded)
{
	if (!r->error && decoded->have_numtcs) {
		B.work.have_numtcs = true;
		B.work.numtcs_pg = decoded->numtcs_pg;
		B.work.numtcs_pfc = decoded->numtcs_pfc;
	}
	B.step = STEP_CEE;
	if (send_request(dcbnl_build_get(B.buf, sizeof(B.buf), DCB_CMD_CEE_GET, next_seq(),
					 B.work.ifname)))
		cycle_finish(false, "cannot send to the kernel");
}

/* CEE_GET: everything else of the port; what the earlier steps found stays. */
static void cee_reply(const struct dcbnl_reply *r, const struct dcbx_port *decoded)
{
	if (!r->error) {
		struct dcbx_port keep = B.work;

		B.work = *decoded;
		B.work.ifindex = keep.ifindex;
		snprintf(B.work.ifname, sizeof(B.work.ifname), "%s", keep.ifname);
		B.work.have_state = keep.have_state;
		B.work.state = keep.state;
		B.work.have_numtcs = keep.have_numtcs;
		B.work.numtcs_pg = keep.numtcs_pg;
		B.work.numtcs_pfc = keep.numtcs_pfc;
	}
	port_done();
}

static void set_reply(const struct dcbnl_reply *r)
{
	if (r->error) {
		job_end(r->error);
		return;
	}
	/* SET_ALL answers how the device took it (0, 1, 2: applied with reset,
	 * nothing to do, applied); the other commands answer 0 */
	if (r->set_status > 0 && !(r->cmd == DCB_CMD_SET_ALL && r->set_status <= 2)) {
		job_end(EINVAL);
		return;
	}
	B.job->accepted++;
	if (job_send_next() == 1)
		job_end(0);
}

/* One answer to the outstanding request. */
static void on_reply(const struct dcbnl_reply *r, const struct dcbx_port *decoded)
{
	switch (B.step) {
	case STEP_LINKS: links_reply(r); return;
	case STEP_STATE: state_reply(r, decoded); return;
	case STEP_NUMTCS: numtcs_reply(r, decoded); return;
	case STEP_CEE: cee_reply(r, decoded); return;
	case STEP_SET: set_reply(r); return;
	case STEP_IDLE: return;
	}
}

/* -Drawdcbnl: every datagram from the kernel, in hex (the fuzz target's
 * seed corpus is captured this way). */
static void debug_raw(size_t len)
{
	static char hex[2 * DCBNL_BUF_SIZE + 1];

	DEBUGIF("rawdcbnl") {
		for (size_t i = 0; i < len; i++)
			snprintf(hex + 2 * i, 3, "%02x", B.buf[i]);
		hex[2 * len] = '\0';
		DEBUGMSGTL(("rawdcbnl", "%zu octets: %s\n", len, hex));
	}
}

static void on_readable(int fd, void *arg)
{
	ssize_t got;

	(void)arg;
	while ((got = recv(fd, B.buf, sizeof(B.buf), MSG_DONTWAIT)) > 0) {
		size_t off = 0;

		debug_raw((size_t)got);
		while (off < (size_t)got) {
			struct dcbnl_reply r;
			struct dcbx_port decoded;
			const char *why;
			int used;

			memset(&decoded, 0, sizeof(decoded));
			used = dcbnl_decode(B.buf + off, (size_t)got - off, &r, &decoded, &why);
			if (used == 0)
				break;
			if (used < 0) {
				snmp_log(LOG_WARNING, "dcbx: dropped a message from the kernel: %s\n",
					 why);
				/* a malformed answer (its header was whole: seq and pid are
				 * known; events have pid 0) ends our request at once */
				if (B.step != STEP_IDLE && r.portid && r.seq == B.want_seq) {
					if (B.step == STEP_SET)
						job_end(EPROTO);
					else
						cycle_finish(false, "a malformed answer");
				}
				break;
			}
			off += (size_t)used; /* aligned: the next header */
			if (r.type == NLMSG_NOOP)
				continue;
			if (r.portid == 0 && (r.type == RTM_GETDCB || r.type == RTM_SETDCB) &&
			    !(B.step != STEP_IDLE && r.seq == B.want_seq && r.set_status >= 0)) {
				on_event(&r);
				continue;
			}
			if (B.step == STEP_IDLE || r.seq != B.want_seq)
				continue; /* late: its request timed out */
			on_reply(&r, &decoded);
		}
	}
	if (got == 0) {
		snmp_log(LOG_WARNING, "dcbx: the kernel's socket closed; DCBX stays as last read\n");
		unregister_readfd(fd);
		B.readfd = false;
	}
}

/* ---- start / stop ---- */

void dcbx_apply_config(void)
{
	if (B.fd >= 0)
		cache_group_set_lifetime(&B.group, ibsnmpd_cfg.cache_lifetime_s[CACHE_DCBX]);
}

struct cache_group *dcbx_cache_group(void)
{
	return &B.group;
}

int dcbx_start(void)
{
	const char *how = ibsnmpd_cfg.dcbx_socket[0] ? ibsnmpd_cfg.dcbx_socket : "netlink";

	B.fd = ibsnmpd_cfg.dcbx_socket[0] ? open_test_socket(ibsnmpd_cfg.dcbx_socket)
					  : open_netlink();
	if (B.fd < 0) {
		snmp_log(LOG_ERR, "dcbx: cannot open %s: %s; DCBX is not served\n", how,
			 strerror(errno));
		return -1;
	}
	register_readfd(B.fd, on_readable, NULL);
	B.readfd = true;
	B.group.name = "dcbx";
	B.group.lifetime_s = ibsnmpd_cfg.cache_lifetime_s[CACHE_DCBX];
	B.group.refresh = refresh;
	B.group.free_snapshot = free_snapshot;
	cache_group_start(&B.group);
	return 0;
}

void dcbx_stop(void)
{
	if (B.fd < 0)
		return;
	if (B.timeout_alarm)
		snmp_alarm_unregister(B.timeout_alarm);
	if (B.readfd)
		unregister_readfd(B.fd);
	cache_group_stop(&B.group);
	close(B.fd);
	while (B.job) {
		struct set_job *next = B.job->next;

		free(B.job->changes);
		free(B.job);
		B.job = next;
	}
	free(B.links);
	free(B.ports);
	memset(&B, 0, sizeof(B));
	B.fd = -1;
}
