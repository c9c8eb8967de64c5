/* routingSource sa: the switches' forwarding tables as the SM holds them,
 * the SA's LinearForwardingTableRecords (GetTable, RMPP), read by the
 * discovery helper (ibsnmpd-discover --lft: the MAD engine does not put
 * RMPP tables together) and streamed from its output line by line into the
 * tables (route_lft_line); no SMP reaches a switch for it. Then, so that a
 * switch whose table is not the SM's copy is caught, a sample of blocks is
 * read from every switch by SMP and compared: a sixteenth of the blocks
 * each run, the next sixteenth the run after, so that every block of every
 * switch is compared once in sixteen runs. What differs is a reachability
 * offender, and the switch's own entries are what the checks use.
 * And, whatever the source, between a read and its checks: the SLs the
 * SA's PathRecords give a sample of paths (SubnAdmGet through the MAD
 * engine: one MAD each, no RMPP, no second client on the port), for the
 * credit-loop check. */
#include "ibsnmpd/netsnmp.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ibsnmpd/child.h"
#include "ibsnmpd/config.h"

#include "route_internal.h"

#define SAMPLE_RUNS 16    /* every block compared once in this many runs */
#define LINE_MAX_LEN 256  /* "lft LID BLOCK" and 128 hex digits */

#define PATH_SAMPLE 16    /* paths whose SL is asked each run */

void route_sa_free(struct route_run *r)
{
	if (r->helper_fd) {
		unregister_readfd(r->fd);
		close(r->fd);
		r->fd = -1;
		r->helper_fd = false;
	}
	if (r->pid > 0)
		child_stop(r->pid);
	r->pid = 0;
	free(r->line);
	free(r->sw_of_lid);
	free(r->got);
	free(r->diffs);
	r->line = NULL;
	r->sw_of_lid = r->got = NULL;
	r->diffs = NULL;
}

static void sa_failed(struct route_run *r, const char *why)
{
	struct route_area *a = r->a;

	a->run = NULL; /* the group's refresh failed: logged once, with why */
	route_sa_free(r);
	cache_refresh_done(&a->group, NULL, why);
	/* the run itself goes with the caller (route_read.c frees it) */
	route_read_abandon(r);
}

/* The helper's output and exit are both in: the sample, or why not. */
static void sa_finish(struct route_run *r)
{
	struct route_area *a = r->a;
	unsigned per_run;

	if (!r->exited || !r->output_done)
		return;
	if (r->status != 0 || !r->sa_done) {
		sa_failed(r, r->status < 0 ? "the helper hung and was killed"
					   : "the helper failed (its log line says why)");
		return;
	}
	for (size_t i = 0; i < r->t.n_switches; i++)
		r->t.read[i] = r->got[i] >= r->blocks;
	/* the sample: the next sixteenth of the blocks, of every switch */
	per_run = (r->blocks + SAMPLE_RUNS - 1) / SAMPLE_RUNS;
	free(r->whole);
	free(r->some);
	r->whole = calloc(r->t.n_switches + 1, sizeof(*r->whole));
	r->some = calloc(per_run + 1, sizeof(*r->some));
	if (!r->whole || !r->some) {
		sa_failed(r, "out of memory");
		return;
	}
	r->n_some = 0;
	for (unsigned k = 0; k < per_run && k < r->blocks; k++)
		r->some[r->n_some++] = (a->sample_next + k) % r->blocks;
	a->sample_next = (a->sample_next + per_run) % r->blocks;
	route_read_sample(r);
}

static void sa_line(struct route_run *r, const char *line, size_t len)
{
	int rc = route_lft_line(&r->t, r->sw_of_lid, r->n_lids, r->got, line, len);

	if (rc == 1)
		r->sa_done = true;
	else if (rc < 0 && !r->sa_done) {
		snmp_log(LOG_WARNING, "routing checks: a line of the helper not understood: %.*s\n",
			 (int)(len > 80 ? 80 : len), line);
		r->status = -2; /* the read is of no use */
	}
}

static void sa_output(int fd, void *arg)
{
	struct route_run *r = arg;
	char buf[65536];

	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n > 0) {
			for (ssize_t i = 0; i < n; i++) {
				if (r->line_len == r->line_cap) {
					char *p = r->line_cap < LINE_MAX_LEN
							  ? realloc(r->line, LINE_MAX_LEN + 1)
							  : NULL;

					if (!p) { /* a line too long: malformed */
						r->status = -2;
						r->line_len = 0;
						continue;
					}
					r->line = p;
					r->line_cap = LINE_MAX_LEN;
				}
				r->line[r->line_len++] = buf[i];
				if (buf[i] == '\n') {
					sa_line(r, r->line, r->line_len);
					r->line_len = 0;
				}
			}
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return; /* more later */
		break;
	}
	unregister_readfd(fd);
	close(fd);
	r->fd = -1;
	r->helper_fd = false;
	r->output_done = true;
	if (r->exited)
		sa_finish(r);
	else
		child_reap_now();
}

static void sa_exited(pid_t pid, int status, bool killed, void *arg)
{
	struct route_run *r = arg;

	(void)pid;
	r->pid = 0;
	r->exited = true;
	if (r->status == 0)
		r->status = killed ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	sa_finish(r);
}

/* The helper started with flag, then CA PORT TIMEOUT RETRIES, its output
 * watched; -1 not started (why in *why). */
static int helper_start(struct route_run *r, const char *flag, const char *what,
			const char **why)
{
	const char *helper, *ca;
	char port[16], timeout[16], retries[16];
	char *argv[7];
	int port_num, fds[2], n = 0;

	if (topology_helper(&helper, &ca, &port_num)) {
		*why = "no discovery helper to ask the SA with";
		return -1;
	}
	snprintf(port, sizeof(port), "%d", port_num);
	snprintf(timeout, sizeof(timeout), "%u", ibsnmpd_cfg.mad_timeout_ms);
	snprintf(retries, sizeof(retries), "%u", ibsnmpd_cfg.mad_retries);
	argv[n++] = (char *)helper;
	argv[n++] = (char *)flag;
	argv[n++] = (char *)ca;
	argv[n++] = port;
	argv[n++] = timeout;
	argv[n++] = retries;
	argv[n] = NULL;
	if (pipe2(fds, O_CLOEXEC) < 0) {
		*why = "no pipe for the helper";
		return -1;
	}
	r->output_done = r->exited = r->sa_done = false;
	r->status = 0;
	r->line_len = 0;
	/* a read that takes longer than the interval between two is hung */
	r->pid = child_spawn(what, argv, -1, fds[1], r->a->group.lifetime_s, sa_exited, r);
	close(fds[1]);
	if (r->pid < 0) {
		close(fds[0]);
		r->pid = 0;
		*why = "the helper did not start";
		return -1;
	}
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	r->fd = fds[0];
	r->helper_fd = true;
	register_readfd(r->fd, sa_output, r);
	return 0;
}

/* A path's SL, or the SA's refusal: the checks once every answer is in. */
static void got_path(void *ctx, int result, const uint8_t *data, size_t len)
{
	struct route_run *r = ctx;
	uint8_t rec[IB_SA_PR_RECSZ];

	if (result == MAD_OK && data && len >= sizeof(rec)) {
		memcpy(rec, data, sizeof(rec)); /* libibmad's getters take no const */
		r->t.sampled_sls |= (uint16_t)(1u << (mad_get_field(rec, 0, IB_SA_PR_SL_F) & 15));
	}
	if (--r->paths_asked == 0) {
		DEBUGMSGTL(("ibsnmpd:route", "the paths' SLs: 0x%04x\n", r->t.sampled_sls));
		route_read_checks(r);
	}
}

/* The SA to ask: the master the SM rounds last saw, else the local
 * port's SM. */
static unsigned sa_lid(const struct route_area *a)
{
	for (size_t i = 0; i < a->n_sms; i++)
		if (a->sms[i].state == 3 && a->sms[i].lid)
			return a->sms[i].lid;
	return a->sm_lid;
}

void route_sa_path_sls(struct route_run *r)
{
	const struct topology *f = r->fabric;
	unsigned *cas = malloc((f->n_ports + 1) * sizeof(*cas)), n = 0, lid = sa_lid(r->a);
	struct {
		unsigned s, d;
	} pairs[PATH_SAMPLE];
	unsigned k = 0;
	ib_portid_t sa;

	for (size_t i = 0; cas && i < f->n_ports; i++)
		if (f->ports[i].lid && f->nodes[f->ports[i].node].type != 2)
			cas[n++] = f->ports[i].lid;
	/* sources and destinations spread over the CA ports, turning with the
	 * runs, so that SLs given per pair (DFSSSP, LASH) show in time */
	for (unsigned i = 0; n > 1 && lid && i < PATH_SAMPLE; i++) {
		unsigned s = (unsigned)((r->a->runs * PATH_SAMPLE + i) * 2654435761u % n);
		unsigned d = (s + 1 + (i * 7919u + (unsigned)r->a->runs) % (n - 1)) % n;

		pairs[k].s = cas[s];
		pairs[k++].d = cas[d];
	}
	free(cas);
	if (!k) {
		route_read_checks(r);
		return;
	}
	mad_portid_gs(&sa, lid);
	r->paths_asked = k + 1; /* held until every one is queued */
	for (unsigned i = 0; i < k; i++) {
		uint8_t rec[IB_SA_DATA_SIZE] = {0};
		struct mad_call call = {
			.mgmt_class = IB_SA_CLASS,
			.method = IB_MAD_METHOD_GET,
			.attr_id = IB_SA_ATTR_PATHRECORD,
			.data = rec,
			.data_len = sizeof(rec),
			.sa_comp_mask = 1u << 4 | 1u << 5, /* IBA PathRecord: DLID bit 4, SLID bit 5 */
		};

		mad_set_field(rec, 0, IB_SA_PR_SLID_F, pairs[i].s);
		mad_set_field(rec, 0, IB_SA_PR_DLID_F, pairs[i].d);
		if (mad_engine_call(&sa, &call, got_path, r))
			r->paths_asked--;
	}
	got_path(r, MAD_SEND_FAILED, NULL, 0); /* the hold */
}

void route_sa_read(struct route_run *r)
{
	const char *why = NULL;

	r->from_sa = true;
	r->fd = -1;
	r->n_lids = (size_t)r->t.max_lid + 1;
	r->sw_of_lid = calloc(r->n_lids, sizeof(*r->sw_of_lid));
	r->got = calloc(r->t.n_switches + 1, sizeof(*r->got));
	if (!r->sw_of_lid || !r->got) {
		sa_failed(r, "out of memory");
		return;
	}
	for (size_t i = 0; i < r->t.n_switches; i++) {
		unsigned lid = r->fabric->nodes[r->t.switch_node[i]].lid;

		if (lid && lid < r->n_lids)
			r->sw_of_lid[lid] = (uint32_t)i + 1;
	}
	if (helper_start(r, "--lft", "the SA's forwarding tables (helper)", &why))
		sa_failed(r, why);
}

void route_sa_offenders(const struct route_run *r, struct route_findings *g)
{
	size_t cap = g->n_offenders;
	bool failed = false;

	for (size_t i = 0; i < r->n_diffs; i++) {
		const struct route_diff *d = &r->diffs[i];
		const struct topo_node *sw = &r->fabric->nodes[r->t.switch_node[d->sw]];
		struct route_offender *x =
			route_offender_add(g, &cap, ROUTE_CHECK_REACH, ROUTE_TABLE_NOT_SMS, &failed);

		if (!x)
			continue;
		x->guid = sw->guid;
		x->lid = d->lid;
		x->count = d->differ;
		route_offender_say(x, "switch %s's table is not the SM's: %u of LIDs %u-%u differ "
				      "(LID %u: port %u, the SM's %u)",
				   sw->name ? sw->name : sw->desc, d->differ, d->block * 64,
				   d->block * 64 + 63, d->lid, d->port, d->sm_port);
	}
	if (r->n_diffs && g->checks[ROUTE_CHECK_REACH].status != ROUTE_STATUS_NOT_RUN)
		g->checks[ROUTE_CHECK_REACH].status = ROUTE_STATUS_FAILED;
	route_offenders_sort(g);
}
