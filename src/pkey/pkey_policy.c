/* The partition policy: opensm's partition file read, written atomically,
 * opensm told to read it again, and the member ports checked afterwards.
 *
 * Verification reads, with SMPs, the P_Key table of every port the policy
 * names by GUID (LID-routed: NodeInfo for PartitionCap and the node type,
 * then the P_KeyTable blocks; then the same of the switch port at the other
 * end of its link, if the switch enforces partitions) and says per member:
 * applied, missing, unreachable, or rejected (a switch port, more
 * partitions than the port's PartitionCap). The ports' LIDs and links come
 * from the topology's last discovery (topology.h). */
#include <errno.h>
#include <glob.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <infiniband/mad.h>

#include "ibsnmpd/child.h"
#include "ibsnmpd/file_io.h"
#include "ibsnmpd/mib_table.h"
#include "ibsnmpd/mad_engine.h"
#include "ibsnmpd/netsnmp.h"
#include "ibsnmpd/topology.h"
#include "ibsnmpd/sma_attr.h"

#include "pkey_policy.h"

/* ---- reading and writing the file --------------------------------------------- */

#define PARTITION_FILE_MAX (16u << 20) /* far above any fabric's policy */

/* What is at the path now, to tell a change from the file last read. */
static void remember_file(struct pkey_policy *pp, const struct stat *st)
{
	pp->mtime = st->st_mtim;
	pp->ino = st->st_ino;
	pp->size = st->st_size;
}

static void load(struct pkey_policy *pp, bool quiet)
{
	struct partition_file pf;
	struct stat st = {0};
	char *text, err[200];
	const char *why = "";
	size_t len;
	int r = file_read_whole(pkey_cfg.partition_file, PARTITION_FILE_MAX, &text, &len, &st, &why);

	if (r < 0) {
		snprintf(pp->load_error, sizeof(pp->load_error), "cannot read %.160s: %.80s",
			 pkey_cfg.partition_file, why);
		snmp_log(LOG_ERR, "partition policy: %s (not served, SETs refused until it is "
			 "fixed)\n", pp->load_error);
		pp->loaded = false;
		remember_file(pp, &st);
		pkey_view_refresh(pp);
		return;
	}
	if (partition_file_parse(text ? text : "", len, &pf, err, sizeof(err))) {
		snprintf(pp->load_error, sizeof(pp->load_error), "%.100s: %.150s",
			 pkey_cfg.partition_file, err);
		snmp_log(LOG_ERR, "partition policy: %s (not served, SETs refused until it is "
			 "fixed)\n", pp->load_error);
		free(text);
		pp->loaded = false;
		remember_file(pp, &st);
		pkey_view_refresh(pp);
		return;
	}
	free(text);
	partition_file_free(&pp->pf);
	pp->pf = pf;
	pp->loaded = true;
	pp->load_error[0] = '\0';
	remember_file(pp, &st);
	pp->generation++;
	if (!quiet)
		snmp_log(LOG_INFO, "partition policy: read %s (%zu partitions)\n",
			 pkey_cfg.partition_file, pf.n_parts);
	pkey_view_refresh(pp);
}

void pkey_policy_reload_if_changed(struct pkey_policy *pp)
{
	struct stat st;

	if (stat(pkey_cfg.partition_file, &st)) {
		if (pp->ino) { /* it was there */
			pp->ino = 0;
			load(pp, false);
		}
		return;
	}
	if (st.st_ino != pp->ino || st.st_size != pp->size ||
	    st.st_mtim.tv_sec != pp->mtime.tv_sec || st.st_mtim.tv_nsec != pp->mtime.tv_nsec)
		load(pp, false);
}

int pkey_policy_write(struct pkey_policy *pp, const struct partition_file *from, char *err,
		      size_t errlen)
{
	const char *path = pkey_cfg.partition_file;
	char tmp[4200], bak_tmp[4200], perr[200];
	struct partition_file check;
	size_t len;
	char *text = partition_file_render(from, &len);
	const char *pause = getenv("IBSNMPD_TEST_PAUSE_BEFORE_RENAME");

	if (!text) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	/* never write a file opensm could not read */
	if (partition_file_parse(text, len, &check, perr, sizeof(perr))) {
		snprintf(err, errlen, "the new file would not parse: %s", perr);
		free(text);
		return -1;
	}
	partition_file_free(&check);
	if (file_write_temp(path, "ibsnmpd-new", text, len, tmp, sizeof(tmp))) {
		snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(errno));
		free(text);
		return -1;
	}
	/* the previous version, kept as FILE.bak */
	snprintf(pp->backup_path, sizeof(pp->backup_path), "%s.bak", path);
	pp->have_backup = false;
	if (pp->pf.text && access(path, F_OK) == 0) {
		if (file_write_temp(path, "ibsnmpd-bak", pp->pf.text, pp->pf.len, bak_tmp,
			       sizeof(bak_tmp)) ||
		    rename(bak_tmp, pp->backup_path)) {
			snprintf(err, errlen, "cannot keep the previous version as %s: %s",
				 pp->backup_path, strerror(errno));
			unlink(bak_tmp);
			unlink(tmp);
			free(text);
			return -1;
		}
		pp->have_backup = true;
	}
	if (pause) /* test hook: a kill here must leave the old file */
		sleep((unsigned)atoi(pause));
	if (rename(tmp, path)) {
		snprintf(err, errlen, "cannot replace %s: %s", path, strerror(errno));
		unlink(tmp);
		free(text);
		return -1;
	}
	file_sync_dir(path);
	free(text);
	load(pp, true);
	return pp->loaded ? 0 : -1;
}

int pkey_policy_restore(struct pkey_policy *pp)
{
	if (!pp->have_backup)
		return unlink(pkey_cfg.partition_file); /* there was no file */
	if (rename(pp->backup_path, pkey_cfg.partition_file))
		return -1;
	pp->have_backup = false;
	file_sync_dir(pkey_cfg.partition_file);
	load(pp, true);
	return 0;
}

/* ---- telling opensm ---------------------------------------------------------------- */

#define RELOAD_DEADLINE_S 30

static int tell_opensm(char *err, size_t errlen)
{
	if (pkey_cfg.opensm_pid_file[0]) {
		/* not blocking: a FIFO in its place must not hold the main loop */
		int fd = open(pkey_cfg.opensm_pid_file, O_RDONLY | O_NONBLOCK | O_NOCTTY |
			      O_CLOEXEC);
		char text[32] = "";
		ssize_t n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;
		long pid = n > 0 ? strtol(text, NULL, 10) : 0;

		if (fd >= 0)
			close(fd);
		if (pid <= 1) {
			snprintf(err, errlen, "no opensm pid in %.200s", pkey_cfg.opensm_pid_file);
			return -1;
		}
		if (kill((pid_t)pid, SIGHUP)) {
			snprintf(err, errlen, "cannot signal opensm (pid %ld): %s", pid,
				 strerror(errno));
			return -1;
		}
		return 0;
	}
	if (pkey_cfg.opensm_reload_command[0]) {
		char *argv[] = {"/bin/sh", "-c", pkey_cfg.opensm_reload_command, NULL};

		/* not waited for; one that hangs is killed after RELOAD_DEADLINE_S */
		if (child_spawn("opensmReloadCommand", argv, -1, -1, RELOAD_DEADLINE_S, NULL, NULL) < 0) {
			snprintf(err, errlen, "cannot run '%.200s'", pkey_cfg.opensm_reload_command);
			return -1;
		}
		return 0;
	}
	snprintf(err, errlen, "opensm was not told (set opensmPidFile or opensmReloadCommand)");
	return -1;
}

/* ---- verification ----------------------------------------------------------------- */

static int status_cmp(const void *a, const void *b)
{
	const struct partition_status *x = a, *y = b;

	if (x->pkey != y->pkey)
		return x->pkey < y->pkey ? -1 : 1;
	return x->guid < y->guid ? -1 : x->guid > y->guid;
}

const struct partition_status *pkey_status_find(const struct pkey_status_snapshot *s,
						unsigned pkey, uint64_t guid)
{
	struct partition_status key = {.pkey = pkey, .guid = guid};

	if (!s || !s->n)
		return NULL;
	return bsearch(&key, s->st, s->n, sizeof(key), status_cmp);
}

struct verify {
	struct pkey_policy *pp;
	struct pkey_status_snapshot *snap;
	size_t pending;
};

struct port_check {
	struct verify *v;
	size_t i;               /* into snap->st */
	unsigned lid, cap, block;
	enum member_type want;
	bool found_full, found_limited;
	unsigned memberships;   /* partitions of the policy this port is in */
	/* then the switch port at the other end of its link (opensm configures
	 * a leaf switch's port like the end port behind it) */
	unsigned leaf_lid, leaf_port;
	uint64_t leaf_guid;
	bool on_leaf;
};

static void verify_done_one(struct verify *v);

static void send_check(struct port_check *c, unsigned attr, unsigned mod);

/* The member's check is over: its status, why (printf-style, or NULL). */
static void check_end(struct port_check *c, enum partition_status_value status,
		      const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void check_end(struct port_check *c, enum partition_status_value status,
		      const char *fmt, ...)
{
	struct partition_status *st = &c->v->snap->st[c->i];

	st->status = status;
	if (fmt) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(st->detail, sizeof(st->detail), fmt, ap);
		va_end(ap);
	}
	verify_done_one(c->v);
	free(c);
}

static void check_finish(struct port_check *c)
{
	unsigned pkey = c->v->snap->st[c->i].pkey;
	bool ok;

	if (c->on_leaf) {
		if (c->found_full || c->found_limited)
			check_end(c, PSTAT_APPLIED, NULL);
		else
			check_end(c, PSTAT_MISSING, "the end port has it, switch 0x%016llx port %u "
				  "does not", (unsigned long long)c->leaf_guid, c->leaf_port);
		return;
	}
	ok = c->want == MEMBER_LIMITED ? c->found_limited : c->found_full;
	if (ok && c->leaf_lid) {
		c->on_leaf = true;
		c->found_full = c->found_limited = false;
		send_check(c, IB_ATTR_SWITCH_INFO, 0);
	} else if (ok) {
		check_end(c, PSTAT_APPLIED, NULL);
	} else {
		check_end(c, PSTAT_MISSING, "P_Key 0x%04x %s on LID %u", pkey,
			  c->found_full || c->found_limited ? "has the wrong membership"
							    : "is not in the port's table",
			  c->lid);
	}
}

static void got_pkeys(void *ctx, int result, const uint8_t *data, size_t len)
{
	struct port_check *c = ctx;
	unsigned pkey = c->v->snap->st[c->i].pkey;
	uint16_t block[32];

	if (result != MAD_OK || sma_pkey_block_decode(data, len, block)) {
		check_end(c, PSTAT_UNREACHABLE, "LID %u: P_KeyTable not answered",
			  c->on_leaf ? c->leaf_lid : c->lid);
		return;
	}
	for (unsigned k = 0; k < 32 && c->block * 32 + k < c->cap; k++) {
		if ((block[k] & 0x7fff) != pkey)
			continue;
		if (block[k] & 0x8000)
			c->found_full = true;
		else
			c->found_limited = true;
	}
	if (++c->block * 32 < c->cap && c->block < 2048)
		send_check(c, IB_ATTR_PKEY_TBL, c->on_leaf ? c->leaf_port << 16 | c->block : c->block);
	else
		check_finish(c);
}

static void got_switchinfo(void *ctx, int result, const uint8_t *data, size_t len)
{
	struct port_check *c = ctx;
	struct sma_switchinfo si;

	if (result != MAD_OK || sma_switchinfo_decode(data, len, &si)) {
		check_end(c, PSTAT_UNREACHABLE, "switch LID %u: SwitchInfo not answered",
			  c->leaf_lid);
		return;
	}
	c->cap = si.partition_enf_cap;
	if (!c->cap) { /* the switch does not enforce partitions: nothing to hold */
		check_end(c, PSTAT_APPLIED, NULL);
		return;
	}
	c->block = 0;
	send_check(c, IB_ATTR_PKEY_TBL, c->leaf_port << 16);
}

static void got_nodeinfo(void *ctx, int result, const uint8_t *data, size_t len)
{
	struct port_check *c = ctx;
	struct sma_nodeinfo ni;

	if (result != MAD_OK || sma_nodeinfo_decode(data, len, &ni)) {
		check_end(c, PSTAT_UNREACHABLE, "LID %u: NodeInfo not answered", c->lid);
		return;
	}
	c->cap = ni.partition_cap;
	if (c->memberships > c->cap) {
		check_end(c, PSTAT_REJECTED, "%u partitions for a PartitionCap of %u",
			  c->memberships, c->cap);
		return;
	}
	c->block = 0;
	send_check(c, IB_ATTR_PKEY_TBL, 0);
}

static void send_check(struct port_check *c, unsigned attr, unsigned mod)
{
	ib_portid_t to = {0}; /* ib_portid_set leaves the other fields as they are */

	ib_portid_set(&to, (int)(c->on_leaf ? c->leaf_lid : c->lid), 0, 0); /* SMP, LID-routed */
	if (mad_engine_smp_get(&to, attr, mod,
			       attr == IB_ATTR_NODE_INFO ? got_nodeinfo
			       : attr == IB_ATTR_SWITCH_INFO ? got_switchinfo : got_pkeys, c))
		check_end(c, PSTAT_UNREACHABLE, "cannot send an SMP");
}

static void status_free(void *p)
{
	struct pkey_status_snapshot *s = p;

	if (s)
		free(s->st);
	free(s);
}

static void verify_done_one(struct verify *v)
{
	struct pkey_policy *pp = v->pp;
	bool all_applied = true;

	if (--v->pending)
		return;
	for (size_t i = 0; i < v->snap->n; i++)
		if (v->snap->st[i].status != PSTAT_APPLIED &&
		    v->snap->st[i].status != PSTAT_REJECTED)
			all_applied = false;
	/* the outcome first: the view built after the publication shows it */
	if (pp->last_result == APPLY_VERIFYING && v->snap->generation == pp->applied_generation) {
		if (all_applied) {
			pp->last_result = APPLY_VERIFIED;
			snmp_log(LOG_INFO, "partition policy: verified on every member port\n");
		} else if (++pp->verify_rounds >= 6) {
			pp->last_result = APPLY_NOT_VERIFIED;
			snprintf(pp->last_error, sizeof(pp->last_error),
				 "not every member port holds its P_Key after %u checks",
				 pp->verify_rounds);
			snmp_log(LOG_WARNING, "partition policy: %s\n", pp->last_error);
			/* the event: pkey_notify.c sends it once this is published */
			v->snap->gave_up = true;
			snprintf(v->snap->apply_error, sizeof(v->snap->apply_error), "%s",
				 pp->last_error);
		}
	}
	v->snap->apply_result = pp->last_result;
	cache_refresh_done(&pp->status, v->snap, NULL);
	free(v);
}

/* How many partitions of the policy name this GUID (keywords count for
 * every port: ALL, and ALL_CAS for channel adapters). */
static unsigned memberships(const struct partition_file *pf, uint64_t guid)
{
	unsigned n = 0;

	for (size_t i = 0; i < pf->n_parts; i++) {
		const struct partition *p = &pf->parts[i];

		for (size_t k = 0; k < p->n_members; k++) {
			const struct partition_member *m = &p->members[k];

			if ((m->is_guid && m->guid == guid) ||
			    (!m->is_guid && (!strcmp(m->keyword, "ALL") ||
					     !strcmp(m->keyword, "ALL_CAS")))) {
				n++;
				break;
			}
		}
	}
	return n;
}

static const struct topo_port *port_of(const struct topology *f, uint64_t guid)
{
	for (size_t i = 0; f && i < f->n_ports; i++)
		if (f->ports[i].port_guid == guid)
			return &f->ports[i];
	return NULL;
}

static void verify_start(struct cache_group *g)
{
	struct pkey_policy *pp = g->owner;
	const struct topology *f = pp->topology ? cache_snapshot(pp->topology) : NULL;
	struct verify *v = calloc(1, sizeof(*v));
	struct pkey_status_snapshot *s = calloc(1, sizeof(*s));
	size_t n = 0;

	pkey_policy_reload_if_changed(pp);
	for (size_t i = 0; i < pp->pf.n_parts; i++)
		for (size_t k = 0; k < pp->pf.parts[i].n_members; k++)
			n += pp->pf.parts[i].members[k].is_guid;
	if (!v || !s || !(s->st = calloc(n ? n : 1, sizeof(*s->st)))) {
		free(v);
		status_free(s);
		cache_refresh_done(g, NULL, "out of memory");
		return;
	}
	s->generation = pp->generation;
	v->pp = pp;
	v->snap = s;
	v->pending = 1;
	/* the entries first, sorted (answers find them by index), then the SMPs */
	for (size_t i = 0; i < pp->pf.n_parts; i++) {
		const struct partition *p = &pp->pf.parts[i];

		if (p->pkey < PKEY_MIN || p->pkey > PKEY_MAX)
			continue;
		for (size_t k = 0; k < p->n_members; k++)
			if (p->members[k].is_guid) {
				s->st[s->n].pkey = p->pkey;
				s->st[s->n++].guid = p->members[k].guid;
			}
	}
	if (s->n > 1)
		qsort(s->st, s->n, sizeof(*s->st), status_cmp);
	for (size_t i = 0; i < s->n; i++) {
		struct partition_status *st = &s->st[i];
		struct partition *p = partition_find_pkey(&pp->pf, st->pkey);
		const struct partition_member *m = p ? partition_find_member(p, st->guid) : NULL;
		const struct topo_port *port = port_of(f, st->guid);
		struct port_check *c;

		if (!port || !m) {
			st->status = PSTAT_UNREACHABLE;
			snprintf(st->detail, sizeof(st->detail), "%s",
				 f ? "no such port in the subnet" : "subnet not discovered yet");
			continue;
		}
		if (f->nodes[port->node].type == 2) {
			st->status = PSTAT_REJECTED;
			snprintf(st->detail, sizeof(st->detail),
				 "a switch port: opensm takes end ports only");
			continue;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			st->status = PSTAT_UNREACHABLE;
			continue;
		}
		st->status = PSTAT_PENDING;
		c->v = v;
		c->i = i;
		c->lid = port->lid;
		c->want = partition_member_effective(p, m);
		c->memberships = memberships(&pp->pf, st->guid);
		if (port->peer_guid) {
			const struct topo_node *peer = topology_node(f, port->peer_guid);

			if (peer && peer->type == 2 && peer->lid) {
				c->leaf_lid = peer->lid;
				c->leaf_port = port->peer_port;
				c->leaf_guid = peer->guid;
			}
		}
		v->pending++;
		send_check(c, IB_ATTR_NODE_INFO, 0);
	}
	verify_done_one(v);
}

static void verify_again(unsigned reg, void *arg)
{
	struct pkey_policy *pp = arg;

	(void)reg;
	if (pp->last_result != APPLY_VERIFYING) {
		snmp_alarm_unregister(pp->verify_alarm);
		pp->verify_alarm = 0;
		return;
	}
	if (!pp->status.refreshing)
		cache_group_refresh_now(&pp->status);
}

void pkey_policy_apply(struct pkey_policy *pp)
{
	char err[256];

	pp->last_apply = time(NULL);
	pp->applied_generation = pp->generation;
	pp->verify_rounds = 0;
	pp->last_error[0] = '\0';
	if (tell_opensm(err, sizeof(err))) {
		pp->last_result = APPLY_RELOAD_FAILED;
		snprintf(pp->last_error, sizeof(pp->last_error), "%s", err);
		snmp_log(LOG_WARNING, "partition policy written, but %s\n", err);
		pkey_view_refresh(pp);
		return;
	}
	pp->last_result = APPLY_VERIFYING;
	pkey_view_refresh(pp);
	snmp_log(LOG_INFO, "partition policy written to %s; opensm told; checking the ports in "
		 "%u s\n", pkey_cfg.partition_file, pkey_cfg.verify_delay_s);
	if (pp->verify_alarm)
		snmp_alarm_unregister(pp->verify_alarm);
	pp->verify_alarm = snmp_alarm_register(pkey_cfg.verify_delay_s, SA_REPEAT,
					       verify_again, pp);
}

/* ---- life cycle --------------------------------------------------------------------- */

static void watch_file(unsigned reg, void *arg)
{
	(void)reg;
	pkey_policy_reload_if_changed(arg);
}

/* Temporary files of a write that was killed before its rename: the
 * partition file itself is whole (old or new), these are leftovers. */
static void remove_leftovers(void)
{
	char pattern[4200];
	glob_t g;

	snprintf(pattern, sizeof(pattern), "%s.ibsnmpd-*", pkey_cfg.partition_file);
	if (glob(pattern, GLOB_NOSORT, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++) {
			snmp_log(LOG_NOTICE, "partition policy: removing %s, left by an "
				 "interrupted write\n", g.gl_pathv[i]);
			unlink(g.gl_pathv[i]);
		}
		globfree(&g);
	}
}

struct pkey_policy *pkey_policy_start(struct cache_group *topology, unsigned lifetime_s)
{
	struct pkey_policy *pp = calloc(1, sizeof(*pp));

	if (!pp)
		return NULL;
	pp->topology = topology;
	remove_leftovers();
	load(pp, false);
	pp->status.name = "partition status";
	pp->status.refresh = verify_start;
	pp->status.free_snapshot = status_free;
	pp->status.owner = pp;
	pp->status.lifetime_s = lifetime_s;
	pkey_view_init(pp);
	cache_group_start(&pp->status);
	/* someone may edit the file by hand: serve what it says */
	pp->watch_alarm = snmp_alarm_register(5, SA_REPEAT, watch_file, pp);
	return pp;
}

void pkey_policy_stop(struct pkey_policy *pp)
{
	if (pp->watch_alarm)
		snmp_alarm_unregister(pp->watch_alarm);
	if (pp->verify_alarm)
		snmp_alarm_unregister(pp->verify_alarm);
	cache_group_stop(&pp->view);
	cache_group_stop(&pp->status);
	partition_file_free(&pp->pf);
	free(pp);
}
