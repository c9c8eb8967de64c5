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
#include "ibsnmpd/netsnmp.h"

#include "dcbx_internal.h"

#define REQUEST_TIMEOUT_S 2

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

static int send_request(struct dcbx_backend *b, size_t len)
{
	struct nlmsghdr *nlh = (struct nlmsghdr *)b->buf;

	if (!len)
		return -1;
	b->want_seq = nlh->nlmsg_seq;
	if (send(b->fd, b->buf, len, 0) != (ssize_t)len) {
		snmp_log(LOG_WARNING, "dcbx: cannot send to the kernel: %s\n", strerror(errno));
		return -1;
	}
	if (b->timeout_alarm)
		snmp_alarm_unregister(b->timeout_alarm);
	b->timeout_alarm = snmp_alarm_register(REQUEST_TIMEOUT_S, 0, on_timeout, b);
	return 0;
}

static uint32_t next_seq(struct dcbx_backend *b)
{
	if (++b->seq == 0)
		b->seq = 1; /* 0 is the kernel's events' */
	return b->seq;
}

/* ---- the poll cycle ---- */

static bool interface_wanted(const char *name)
{
	if (!dcbx_cfg.n_interfaces)
		return true;
	for (size_t i = 0; i < dcbx_cfg.n_interfaces; i++)
		if (!strcmp(dcbx_cfg.interfaces[i], name))
			return true;
	return false;
}

static void cycle_finish(struct dcbx_backend *b, bool ok, const char *failure);
static void cycle_start(struct dcbx_backend *b);
static void job_start(struct dcbx_backend *b);

static void port_next(struct dcbx_backend *b)
{
	while (b->cur < b->n_links && !interface_wanted(b->links[b->cur].name))
		b->cur++;
	if (b->cur == b->n_links) {
		cycle_finish(b, true, NULL);
		return;
	}
	memset(&b->work, 0, sizeof(b->work));
	b->work.ifindex = b->links[b->cur].ifindex;
	snprintf(b->work.ifname, sizeof(b->work.ifname), "%s", b->links[b->cur].name);
	b->step = STEP_STATE;
	if (send_request(b, dcbnl_build_get(b->buf, sizeof(b->buf), DCB_CMD_GSTATE, next_seq(b),
					 b->work.ifname)))
		cycle_finish(b, false, "cannot send to the kernel");
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

static void port_done(struct dcbx_backend *b)
{
	if (room_for_one((void **)&b->ports, &b->cap_ports, b->n_ports, sizeof(*b->ports))) {
		cycle_finish(b, false, "out of memory");
		return;
	}
	b->ports[b->n_ports++] = b->work;
	b->cur++;
	port_next(b);
}

static void port_skipped(struct dcbx_backend *b, int error)
{
	size_t used = strlen(b->skipped);

	if (used < sizeof(b->skipped) - 40)
		snprintf(b->skipped + used, sizeof(b->skipped) - used, "%s%s (%s)", used ? ", " : "",
			 b->work.ifname, strerror(error));
	b->cur++;
	port_next(b);
}

static void cycle_start(struct dcbx_backend *b)
{
	b->n_links = b->n_ports = b->cur = 0;
	b->skipped[0] = '\0';
	b->again = false;
	b->step = STEP_LINKS;
	if (send_request(b, dcbnl_build_link_dump(b->buf, sizeof(b->buf), next_seq(b))))
		cycle_finish(b, false, "cannot ask the kernel for its interfaces");
}

static void refresh(struct cache_group *g)
{
	struct dcbx_backend *b = g->owner;

	if (b->job) {
		b->refresh_pending = true; /* the cycle runs when the SET is done */
		return;
	}
	cycle_start(b);
}

static void free_snapshot(void *v)
{
	dcbx_snapshot_free(v);
}

static void cycle_finish(struct dcbx_backend *b, bool ok, const char *failure)
{
	struct dcbx_snapshot *fresh = NULL;
	char note[640] = "";

	if (b->timeout_alarm)
		snmp_alarm_unregister(b->timeout_alarm);
	b->timeout_alarm = 0;
	b->step = STEP_IDLE;
	if (ok) {
		/* the cycle's ports become the snapshot's */
		fresh = dcbx_snapshot_new(b->ports, b->n_ports);
		b->ports = NULL;
		b->n_ports = b->cap_ports = 0;
	}
	if (fresh && !fresh->n)
		snprintf(note, sizeof(note), "no interface answers dcbnl%s%.500s%s: the DCBX "
			 "tables are empty", b->skipped[0] ? " (" : "", b->skipped,
			 b->skipped[0] ? ")" : "");
	if (fresh)
		cache_refresh_done(&b->group, fresh, note[0] ? note : NULL);
	else
		cache_refresh_done(&b->group, NULL, failure ? failure : "out of memory");
	if (b->job)
		job_start(b);
	else if (b->again)
		cache_group_refresh_now(&b->group);
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

static void job_end(struct dcbx_backend *b, int error)
{
	struct set_job *j = b->job;

	if (b->timeout_alarm)
		snmp_alarm_unregister(b->timeout_alarm);
	b->timeout_alarm = 0;
	b->job = j->next;
	if (!b->job)
		b->job_tail = NULL;
	b->step = STEP_IDLE;
	j->done(j->ctx, error, j->accepted);
	free(j->changes);
	free(j);
	if (b->job) {
		job_start(b); /* the next SET waiting */
		return;
	}
	/* read what the kernel made of it */
	if (b->refresh_pending) {
		b->refresh_pending = false;
		cycle_start(b);
	} else {
		cache_group_refresh_now(&b->group);
	}
}

/* Builds the next command of the port's change into b->buf and moves past
 * it: the commands its change needs, then SET_ALL; 0 when none is left. */
static size_t next_command(struct dcbx_backend *b, struct set_job *j, const struct dcbx_change *c,
			   const char *ifname)
{
	for (;;) {
		switch (j->step) {
		case SET_STATE:
			j->step = SET_FEATURES;
			if (c->set_state)
				return dcbnl_build_set_state(b->buf, sizeof(b->buf), next_seq(b), ifname,
							     c->state);
			break;
		case SET_FEATURES:
			j->step = SET_PG;
			if (c->set_feat)
				return dcbnl_build_set_featcfg(b->buf, sizeof(b->buf), next_seq(b), ifname,
							       c->feat);
			break;
		case SET_PG:
			j->step = SET_PFC;
			if (c->set_pg)
				return dcbnl_build_set_pgtx(b->buf, sizeof(b->buf), next_seq(b), ifname,
							    c->prio_pgid, c->pg_bw);
			break;
		case SET_PFC:
			j->step = SET_APPS;
			if (c->set_pfc)
				return dcbnl_build_set_pfc(b->buf, sizeof(b->buf), next_seq(b), ifname,
							   c->pfc);
			break;
		case SET_APPS:
			if (j->app < c->n_set_apps)
				return dcbnl_build_set_app(b->buf, sizeof(b->buf), next_seq(b), ifname,
							   &c->set_apps[j->app++]);
			j->step = SET_ALL;
			break;
		case SET_ALL:
			j->step = SET_PORT_DONE;
			return dcbnl_build_set_all(b->buf, sizeof(b->buf), next_seq(b), ifname);
		case SET_PORT_DONE:
			return 0;
		}
	}
}

/* Sends the job's next command; returns 1 when there is none left, -1 when
 * the job ended in a failure. */
static int job_send_next(struct dcbx_backend *b)
{
	struct set_job *j = b->job;

	while (j->cur < j->n) {
		const struct dcbx_change *c = &j->changes[j->cur];
		const struct dcbx_port *p = dcbx_snapshot_port(cache_snapshot(&b->group), c->ifindex);
		size_t len;

		if (!p) {
			job_end(b, ENODEV);
			return -1;
		}
		len = next_command(b, j, c, p->ifname);
		if (!len) { /* this port is done: the next one */
			j->cur++;
			j->step = SET_STATE;
			j->app = 0;
			continue;
		}
		if (send_request(b, len)) {
			job_end(b, EIO);
			return -1;
		}
		return 0;
	}
	return 1;
}

static void job_start(struct dcbx_backend *b)
{
	b->step = STEP_SET;
	if (job_send_next(b) == 1)
		job_end(b, 0);
}

int dcbx_apply(struct dcbx_backend *b, const struct dcbx_change *changes, size_t n, dcbx_set_done_fn done, void *ctx)
{
	struct set_job *j;

	if (b->fd < 0)
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
	if (b->job_tail) {
		b->job_tail->next = j; /* after the SETs before it */
		b->job_tail = j;
		return 0;
	}
	b->job = b->job_tail = j;
	if (b->step == STEP_IDLE)
		job_start(b);
	return 0;
}

/* ---- receiving ---- */

static void on_timeout(unsigned reg, void *arg)
{
	struct dcbx_backend *b = arg;

	(void)reg;
	b->timeout_alarm = 0;
	snmp_log(LOG_WARNING, "dcbx: the kernel did not answer within %d s\n",
		 REQUEST_TIMEOUT_S);
	if (b->step == STEP_SET)
		job_end(b, ETIMEDOUT);
	else if (b->step != STEP_IDLE)
		cycle_finish(b, false, "the kernel did not answer");
}

static void on_event(struct dcbx_backend *b, const struct dcbnl_reply *r)
{
	DEBUGMSGTL(("ibsnmpd:dcbx", "event cmd %u for %s\n", r->cmd, r->ifname));
	if (b->step == STEP_IDLE && !b->job)
		cache_group_refresh_now(&b->group);
	else
		b->again = true;
}

/* ---- the answers, step by step ---- */

/* One interface of the link dump (multipart, ended by NLMSG_DONE). */
static void links_reply(struct dcbx_backend *b, const struct dcbnl_reply *r)
{
	if (r->error) {
		cycle_finish(b, false, "the kernel refused the interface dump");
		return;
	}
	if (r->type == RTM_NEWLINK && r->ifindex && r->ifname[0]) {
		if (room_for_one((void **)&b->links, &b->cap_links, b->n_links, sizeof(*b->links))) {
			cycle_finish(b, false, "out of memory");
			return;
		}
		b->links[b->n_links].ifindex = r->ifindex;
		snprintf(b->links[b->n_links].name, DCBX_IFNAME_MAX, "%s", r->ifname);
		b->n_links++;
	}
	if (r->type == NLMSG_DONE) {
		b->cur = 0;
		port_next(b);
	}
}

/* GSTATE: an interface that refuses it has no dcbnl ops. */
static void state_reply(struct dcbx_backend *b, const struct dcbnl_reply *r,
			const struct dcbx_port *decoded)
{
	if (r->error || !decoded->have_state) {
		port_skipped(b, r->error ? r->error : EPROTO);
		return;
	}
	b->work.have_state = true;
	b->work.state = decoded->state;
	b->step = STEP_NUMTCS;
	if (send_request(b, dcbnl_build_get(b->buf, sizeof(b->buf), DCB_CMD_GNUMTCS, next_seq(b),
					 b->work.ifname)))
		cycle_finish(b, false, "cannot send to the kernel");
}

static void numtcs_reply(struct dcbx_backend *b, const struct dcbnl_reply *r,
			 const struct dcbx_port *decoded)
{
	if (!r->error && decoded->have_numtcs) {
		b->work.have_numtcs = true;
		b->work.numtcs_pg = decoded->numtcs_pg;
		b->work.numtcs_pfc = decoded->numtcs_pfc;
	}
	b->step = STEP_CEE;
	if (send_request(b, dcbnl_build_get(b->buf, sizeof(b->buf), DCB_CMD_CEE_GET, next_seq(b),
					 b->work.ifname)))
		cycle_finish(b, false, "cannot send to the kernel");
}

/* CEE_GET: everything else of the port; what the earlier steps found stays. */
static void cee_reply(struct dcbx_backend *b, const struct dcbnl_reply *r,
		      const struct dcbx_port *decoded)
{
	if (!r->error) {
		struct dcbx_port keep = b->work;

		b->work = *decoded;
		b->work.ifindex = keep.ifindex;
		snprintf(b->work.ifname, sizeof(b->work.ifname), "%s", keep.ifname);
		b->work.have_state = keep.have_state;
		b->work.state = keep.state;
		b->work.have_numtcs = keep.have_numtcs;
		b->work.numtcs_pg = keep.numtcs_pg;
		b->work.numtcs_pfc = keep.numtcs_pfc;
	}
	port_done(b);
}

static void set_reply(struct dcbx_backend *b, const struct dcbnl_reply *r)
{
	if (r->error) {
		job_end(b, r->error);
		return;
	}
	/* SET_ALL answers how the device took it (0, 1, 2: applied with reset,
	 * nothing to do, applied); the other commands answer 0 */
	if (r->set_status > 0 && !(r->cmd == DCB_CMD_SET_ALL && r->set_status <= 2)) {
		job_end(b, EINVAL);
		return;
	}
	b->job->accepted++;
	if (job_send_next(b) == 1)
		job_end(b, 0);
}

/* One answer to the outstanding request. */
static void on_reply(struct dcbx_backend *b, const struct dcbnl_reply *r,
		     const struct dcbx_port *decoded)
{
	switch (b->step) {
	case STEP_LINKS: links_reply(b, r); return;
	case STEP_STATE: state_reply(b, r, decoded); return;
	case STEP_NUMTCS: numtcs_reply(b, r, decoded); return;
	case STEP_CEE: cee_reply(b, r, decoded); return;
	case STEP_SET: set_reply(b, r); return;
	case STEP_IDLE: return;
	}
}

/* -Drawdcbnl: every datagram from the kernel, in hex (the fuzz target's
 * seed corpus is captured this way). */
static void debug_raw(struct dcbx_backend *b, size_t len)
{
	static char hex[2 * DCBNL_BUF_SIZE + 1];

	DEBUGIF("rawdcbnl") {
		for (size_t i = 0; i < len; i++)
			snprintf(hex + 2 * i, 3, "%02x", b->buf[i]);
		hex[2 * len] = '\0';
		DEBUGMSGTL(("rawdcbnl", "%zu octets: %s\n", len, hex));
	}
}

static void on_readable(int fd, void *arg)
{
	struct dcbx_backend *b = arg;
	ssize_t got;

	while ((got = recv(fd, b->buf, sizeof(b->buf), MSG_DONTWAIT)) > 0) {
		size_t off = 0;

		debug_raw(b, (size_t)got);
		while (off < (size_t)got) {
			struct dcbnl_reply r;
			struct dcbx_port decoded;
			const char *why;
			int used;

			memset(&decoded, 0, sizeof(decoded));
			used = dcbnl_decode(b->buf + off, (size_t)got - off, &r, &decoded, &why);
			if (used == 0)
				break;
			if (used < 0) {
				snmp_log(LOG_WARNING, "dcbx: dropped a message from the kernel: %s\n",
					 why);
				/* a malformed answer (its header was whole: seq and pid are
				 * known; events have pid 0) ends our request at once */
				if (b->step != STEP_IDLE && r.portid && r.seq == b->want_seq) {
					if (b->step == STEP_SET)
						job_end(b, EPROTO);
					else
						cycle_finish(b, false, "a malformed answer");
				}
				break;
			}
			off += (size_t)used; /* aligned: the next header */
			if (r.type == NLMSG_NOOP)
				continue;
			if (r.portid == 0 && (r.type == RTM_GETDCB || r.type == RTM_SETDCB) &&
			    !(b->step != STEP_IDLE && r.seq == b->want_seq && r.set_status >= 0)) {
				on_event(b, &r);
				continue;
			}
			if (b->step == STEP_IDLE || r.seq != b->want_seq)
				continue; /* late: its request timed out */
			on_reply(b, &r, &decoded);
		}
	}
	if (got == 0) {
		snmp_log(LOG_WARNING, "dcbx: the kernel's socket closed; DCBX stays as last read\n");
		unregister_readfd(fd);
		b->readfd = false;
	}
}

/* ---- start / stop ---- */

void dcbx_backend_apply_config(struct dcbx_backend *b, unsigned lifetime_s)
{
	if (b->fd >= 0)
		cache_group_set_lifetime(&b->group, lifetime_s);
}

int dcbx_backend_start(struct dcbx_backend *b, unsigned lifetime_s)
{
	const char *how = dcbx_cfg.socket[0] ? dcbx_cfg.socket : "netlink";

	memset(b, 0, sizeof(*b));
	b->fd = dcbx_cfg.socket[0] ? open_test_socket(dcbx_cfg.socket) : open_netlink();
	if (b->fd < 0) {
		snmp_log(LOG_ERR, "dcbx: cannot open %s: %s; DCBX is not served\n", how,
			 strerror(errno));
		return -1;
	}
	register_readfd(b->fd, on_readable, b);
	b->readfd = true;
	b->group.name = "dcbx";
	b->group.lifetime_s = lifetime_s;
	b->group.refresh = refresh;
	b->group.free_snapshot = free_snapshot;
	b->group.owner = b;
	cache_group_start(&b->group);
	return 0;
}

void dcbx_backend_stop(struct dcbx_backend *b)
{
	if (b->fd < 0)
		return;
	if (b->timeout_alarm)
		snmp_alarm_unregister(b->timeout_alarm);
	if (b->readfd)
		unregister_readfd(b->fd);
	cache_group_stop(&b->group);
	close(b->fd);
	while (b->job) {
		struct set_job *next = b->job->next;

		free(b->job->changes);
		free(b->job);
		b->job = next;
	}
	free(b->links);
	free(b->ports);
	memset(b, 0, sizeof(*b));
	b->fd = -1;
}
