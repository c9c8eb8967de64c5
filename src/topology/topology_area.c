/* The subnet's topology as an area: one cache group whose snapshot is the
 * last discovery (struct topology).
 *
 * A refresh runs the helper process ibsnmpd-discover (discover_main.c, which
 * says why a process of its own); its output is read from a pipe watched by
 * the main loop and parsed by topology_parse(). A discovery that failed, or
 * that saw the local node alone (its link is down), keeps the previous
 * snapshot. Discoveries: at start, every pmDiscoveryInterval, when the
 * master SM moves (a new SM may have given new LIDs), and when probes find
 * what they cannot place.
 *
 * Between them the topology follows the fabric's changes by probes: each
 * time the link sweep (the fabric area, which reads a switch a trap 128
 * names within a second) publishes what it read, the ports whose link
 * differs from the topology are looked at (topology_changes): a link gone
 * is taken out at once, with the nodes no longer reached (no SMP); behind a
 * switch port up without a link the probes of topology_probe.c ask what is
 * there. Each result is published as a topology patched from the one
 * before, naming the ports that changed, so that the followers read those
 * again and keep every other row. A port behind which nothing answered is
 * probed again after 10 s, then 20, 40, ... (at most pmDiscoveryInterval),
 * and at once when it has been seen down or a discovery came. Where the
 * link sweep does not run, or the subnet is read from the SA (a discovery
 * from it costs the switches nothing), a burst of traps 128 brings a
 * discovery, two seconds after its last.
 *
 * discoverySource: the helper discovers by directed route (libibnetdisc), or
 * reads the SM's view from its SA (sa_view.c): always (sa), never (smp), or
 * (auto) where a discovery by SMP cannot be made without violations: while
 * the MAD engine's M_Key guard refuses SMPs (no key, or the wrong one) and
 * where mKeyFile gives the ports different keys.
 *
 * The nodes are named after the node-name map (nodeNameMap, node_names.h)
 * at each discovery; the map is read at start, on SIGHUP and when its file
 * changes (looked at every NAME_MAP_CHECK_S), and a map that names nodes
 * otherwise republishes the last discovery with the new names, so that
 * every follower renames its rows the way it follows a discovery. */
#include "ibsnmpd/netsnmp.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ibsnmpd/area.h"
#include "ibsnmpd/child.h"
#include "ibsnmpd/file_io.h"
#include "ibsnmpd/mad_engine.h"
#include "ibsnmpd/mib_table.h"
#include "ibsnmpd/mkeys.h"
#include "ibsnmpd/node_names.h"
#include "ibsnmpd/sma.h"
#include "ibsnmpd/topology.h"
#include "ibsnmpd/trap.h"
#include "topology_internal.h"

#define LINK_TRAP_QUIET_S 2 /* a burst of traps 128 is one rediscovery */
#define NAME_MAP_CHECK_S 5  /* how soon an edited node-name map is read */
#define NAME_MAP_MAX (16u << 20) /* octets: 100 times 40,000 nodes' lines */

/* Where infiniband-diags (rdma-core) and opensm look for their map when
 * told nothing, in that order: the first that exists is read. */
static const char *const default_name_maps[] = {
	"/etc/rdma/ib-node-name-map",
	"/etc/opensm/ib-node-name-map",
};

enum discovery_source { SOURCE_AUTO, SOURCE_SMP, SOURCE_SA };

static struct topology_config {
	unsigned interval_s;             /* pmDiscoveryInterval */
	enum discovery_source source;    /* discoverySource */
	char helper[4096];               /* pmDiscoveryHelper; "" = beside the daemon or in libexec */
	char name_map[4096];             /* nodeNameMap; "" = the tools' default */
} cfg;

/* A port behind which nothing answered: probed again once `next` has
 * passed (SILENT_FIRST_S, doubling with each try, at most a discovery's
 * interval), or when it has been seen down. */
struct silent_port {
	struct topo_port_ref ref; /* first: sorted and found by it */
	unsigned tries;
	time_t next;
};
#define SILENT_FIRST_S 10

struct topology_area {
	struct cache_group group;        /* snapshot: struct topology */
	char ca_name[64];
	int port_num;
	char helper[4096];
	/* the running discovery: helper process, its stdout, what it said so far */
	pid_t pid;
	int fd;
	bool output_done, exited;        /* both: the discovery is over */
	int status;                      /* waitpid's; -1: killed at its deadline */
	char *out;
	size_t len, cap;
	bool alone_noted;                /* a discovery saw only the local node: said */
	unsigned link_trap_alarm;
	struct trap_area *traps;
	struct trap_observer trap_seen;
	struct cache_group *local_ports; /* the local node's PortInfo */
	struct cache_observer sm_watch;
	/* the node-name map in force (NULL: none), the file it came from and
	 * what was last seen there (to read it again only when it changed,
	 * and to say a failure once) */
	struct node_name_map *names;
	char names_path[4096];
	struct stat names_seen;
	bool names_file_seen, names_failed;
	unsigned names_alarm;
	/* following changes: the link sweep's reading (topology_follow_links),
	 * the probes under way, a reading that came meanwhile, the ports
	 * behind which nothing answered (sorted), the publications' count */
	topology_links_fn links;
	void *links_arg;
	struct topo_round *round;
	bool recheck;
	bool storm_pending;              /* a discovery was asked for many links up at once */
	unsigned links_alarm, silent_alarm;
	struct silent_port *silent;
	size_t n_silent;
	unsigned long serial;
};

struct cache_group *topology_followed_by(const char *who)
{
	struct topology_area *a = area_find(&topology_area_def);

	if (!a)
		snmp_log(LOG_ERR, "%s needs the subnet's topology\n", who);
	return a ? &a->group : NULL;
}

int topology_node_portid(const struct topo_node *nd, ib_portid_t *to)
{
	memset(to, 0, sizeof(*to)); /* ib_portid_set leaves the other fields as they are */
	if (nd->lid) {
		ib_portid_set(to, (int)nd->lid, 0, 0); /* an SMP, LID-routed */
		return 0;
	}
	if (!nd->has_route)
		return -1;
	mad_portid_local(to);
	to->drpath.cnt = (int)nd->route_hops;
	for (unsigned h = 0; h < nd->route_hops; h++)
		to->drpath.p[h + 1] = nd->route[h];
	return 0;
}

/* ---- the helper ------------------------------------------------------------- */

static void discovery_output(int fd, void *arg);
static void discovery_exited(pid_t pid, int status, bool killed, void *arg);

static void start_discovery(struct cache_group *g)
{
	struct topology_area *a = g->owner;
	char port[16], timeout[16], retries[16];
	char sa_flag[] = "--sa";
	char *argv_smp[] = {a->helper, a->ca_name, port, timeout, retries, NULL};
	char *argv_sa[] = {a->helper, sa_flag, a->ca_name, port, timeout, retries, NULL};
	bool from_sa;
	int fds[2], keys[2];
	char key[32];
	pid_t pid;

	/* which source depends on whether this port may send SMPs: the
	 * guard's first answer says (it calls back) */
	if (cfg.source == SOURCE_AUTO && !mad_engine_smp_guard_settled()) {
		DEBUGMSGTL(("ibsnmpd:topology", "discovery waits for the M_Key guard's answer\n"));
		cache_refresh_kept(g);
		return;
	}
	from_sa = cfg.source == SOURCE_SA ||
		     (cfg.source == SOURCE_AUTO && (mad_engine_smps_refused() || mkeys_per_port()));
	snprintf(port, sizeof(port), "%d", a->port_num);
	snprintf(timeout, sizeof(timeout), "%u", ibsnmpd_cfg.mad_timeout_ms);
	snprintf(retries, sizeof(retries), "%u", ibsnmpd_cfg.mad_retries);
	if (pipe2(fds, O_CLOEXEC) < 0) {
		snmp_log(LOG_ERR, "discovery: pipe: %s\n", strerror(errno));
		cache_refresh_kept(g);
		return;
	}
	/* the M_Key on its stdin, not on its command line (ps shows that) */
	if (pipe2(keys, O_CLOEXEC) < 0) {
		snmp_log(LOG_ERR, "discovery: pipe: %s\n", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		cache_refresh_kept(g);
		return;
	}
	snprintf(key, sizeof(key), "0x%016" PRIx64 "\n", mkeys_default());
	if (write(keys[1], key, strlen(key)) != (ssize_t)strlen(key))
		snmp_log(LOG_ERR, "discovery: cannot hand the helper its M_Key\n");
	close(keys[1]);
	memset(key, 0, sizeof(key));
	/* a discovery that takes longer than the interval between two is hung */
	pid = child_spawn("the subnet discovery helper", from_sa ? argv_sa : argv_smp, keys[0],
			  fds[1], cfg.interval_s, discovery_exited, a);
	close(keys[0]);
	close(fds[1]);
	if (pid < 0) {
		close(fds[0]);
		cache_refresh_kept(g); /* child_spawn said why */
		return;
	}
	fcntl(fds[0], F_SETFL, O_NONBLOCK);
	a->pid = pid;
	a->fd = fds[0];
	a->len = 0;
	a->output_done = a->exited = false;
	register_readfd(fds[0], discovery_output, a);
	DEBUGMSGTL(("ibsnmpd:topology", "discovery started (pid %ld)\n", (long)pid));
}

/* A discovery now (logged; one at a time). */
static void rediscover(struct topology_area *a)
{
	if (a->group.refreshing)
		return; /* one at a time */
	if (a->round) { /* the discovery sees what they would have found */
		topo_round_abandon(a->round);
		a->round = NULL;
	}
	snmp_log(LOG_INFO, "rediscovering the subnet\n");
	cache_group_refresh_now(&a->group);
}

static void discovery_finish(struct topology_area *a);

/* Collects the helper's output; at its end (and its exit), parses it. */
static void discovery_output(int fd, void *arg)
{
	struct topology_area *a = arg;

	for (;;) {
		ssize_t n;

		if (a->cap - a->len < 4096) {
			size_t cap = a->cap ? a->cap * 2 : 65536;
			char *p = realloc(a->out, cap);

			if (!p)
				break;
			a->out = p;
			a->cap = cap;
		}
		n = read(fd, a->out + a->len, a->cap - a->len);
		if (n > 0) {
			a->len += (size_t)n;
			continue;
		}
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return; /* more later */
		break;  /* end of output (or an error) */
	}
	unregister_readfd(fd);
	close(fd);
	a->fd = -1;
	a->output_done = true;
	if (a->exited)
		discovery_finish(a);
	else
		child_reap_now(); /* it has most likely exited: finish now, not a second later */
}

static void discovery_exited(pid_t pid, int status, bool killed, void *arg)
{
	struct topology_area *a = arg;

	(void)pid;
	a->exited = true;
	a->status = killed ? -1 : status;
	if (a->output_done)
		discovery_finish(a);
}

/* Each LID's M_Key (mKeyFile: its port's, by GUID; none: the default)
 * handed to the MAD engine: a key the file no longer has does not linger.
 * A switch answers at its port 0: its node GUID's. */
static void apply_mkeys(const struct topology *t)
{
	for (size_t i = 0; t && i < t->n_nodes; i++) {
		const struct topo_node *n = &t->nodes[i];

		if (n->type == 2 && n->lid)
			mad_engine_set_lid_mkey(n->lid, mkeys_of(n->guid));
	}
	for (size_t i = 0; t && i < t->n_ports; i++) {
		const struct topo_port *p = &t->ports[i];

		if (p->lid && t->nodes[p->node].type != 2)
			mad_engine_set_lid_mkey(p->lid, mkeys_of(p->port_guid));
	}
}

/* Both the output's end and the helper's exit are in. */
static void discovery_finish(struct topology_area *a)
{
	const struct topology *prev = cache_snapshot(&a->group);
	int status = a->status;
	struct topology *f;
	char err[160];

	a->pid = 0;
	f = topology_parse(a->out, a->len, a->names, err, sizeof(err));
	/* the text is parsed: its buffer (about 100 octets a port) goes until
	 * the next discovery */
	free(a->out);
	a->out = NULL;
	a->len = a->cap = 0;
	if (!f || status < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snmp_log(LOG_WARNING, "subnet discovery failed (%s); keeping the previous node list\n",
			 status < 0 ? "the helper hung and was killed"
			 : !WIFEXITED(status) || WEXITSTATUS(status) ? "the helper failed" : err);
		topology_free(f);
		cache_refresh_kept(&a->group);
		return;
	}
	/* Seen from a port whose link is down the subnet is the local node
	 * alone: the nodes behind the link are not gone, their rows stay. */
	if (f->n_nodes == 1 && prev && prev->n_nodes > 1) {
		if (!a->alone_noted)
			snmp_log(LOG_WARNING, "subnet discovery saw the local node only (its link is "
				 "down?); keeping the previous node list of %zu nodes\n",
				 prev->n_nodes);
		a->alone_noted = true;
		topology_free(f);
		cache_refresh_kept(&a->group);
		return;
	}
	a->alone_noted = false;
	snmp_log(LOG_INFO, "subnet discovered%s: %zu nodes, %zu ports in %.3f s\n",
		 f->from_sa ? " from the SA (the SM's view)" : "", f->n_nodes, f->n_ports,
		 f->seconds);
	apply_mkeys(f);
	f->serial = ++a->serial;
	/* a discovery: every port is probed again where it differs */
	free(a->silent);
	a->silent = NULL;
	a->n_silent = 0;
	if (a->silent_alarm)
		snmp_alarm_unregister(a->silent_alarm);
	a->silent_alarm = 0;
	if (a->round) {
		topo_round_abandon(a->round);
		a->round = NULL;
	}
	cache_refresh_done(&a->group, (void *)topology_get(f), NULL);
}

static void free_snapshot(void *p)
{
	topology_put(p);
}

/* The helper: pmDiscoveryHelper if set, else beside the daemon's binary (the
 * build tree), else in IBSNMPD_LIBEXECDIR (an install). */
static void find_helper(struct topology_area *a)
{
	char self[4096];
	ssize_t n;

	if (cfg.helper[0]) {
		snprintf(a->helper, sizeof(a->helper), "%s", cfg.helper);
		return;
	}
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			snprintf(a->helper, sizeof(a->helper), "%.4000s/ibsnmpd-discover", self);
			if (access(a->helper, X_OK) == 0)
				return;
		}
	}
	snprintf(a->helper, sizeof(a->helper), "%s/ibsnmpd-discover", IBSNMPD_LIBEXECDIR);
}

/* ---- the node-name map --------------------------------------------------------- */

/* The file to read: nodeNameMap, else the first of the tools' defaults that
 * exists ("" if none). */
static void name_map_path(char *out, size_t len)
{
	snprintf(out, len, "%s", cfg.name_map);
	for (size_t k = 0; !out[0] && k < sizeof(default_name_maps) / sizeof(*default_name_maps); k++)
		if (access(default_name_maps[k], F_OK) == 0)
			snprintf(out, len, "%s", default_name_maps[k]);
}

static bool same_file_state(const struct stat *x, const struct stat *y)
{
	return x->st_ino == y->st_ino && x->st_dev == y->st_dev && x->st_size == y->st_size &&
	       x->st_mtim.tv_sec == y->st_mtim.tv_sec && x->st_mtim.tv_nsec == y->st_mtim.tv_nsec;
}

/* The last discovery again, its nodes named after the map now in force. */
static void republish_names(struct topology_area *a)
{
	const struct topology *now = cache_snapshot(&a->group);
	struct topology *renamed;

	if (!now || a->group.refreshing)
		return; /* the discovery under way names its nodes when it ends */
	if (!(renamed = topology_renamed(now, a->names))) {
		snmp_log(LOG_WARNING, "out of memory renaming the nodes: the names stay\n");
		return;
	}
	renamed->serial = ++a->serial;
	cache_publish(&a->group, (void *)topology_get(renamed));
}

/* Reads the map if its file changed (force: in any case, as on SIGHUP);
 * a map that cannot be read or has a bad line changes nothing (said once). */
static void name_map_load(struct topology_area *a, bool force)
{
	char path[sizeof(cfg.name_map)], err[4200];
	struct node_name_map *m;
	struct stat st;
	const char *why = NULL;
	char *text = NULL;
	size_t len = 0;
	int r;

	name_map_path(path, sizeof(path));
	if (!path[0]) {
		/* none given, none of the defaults there: no map */
		if (a->names) {
			snmp_log(LOG_NOTICE, "node-name map %s is gone: nodes are named by their "
				 "descriptions\n", a->names_path);
			node_name_map_free(a->names);
			a->names = NULL;
			a->names_path[0] = '\0';
			republish_names(a);
		}
		a->names_file_seen = false;
		return;
	}
	if (!force && a->names_file_seen && !strcmp(path, a->names_path) &&
	    stat(path, &st) == 0 && same_file_state(&st, &a->names_seen))
		return;
	memset(&st, 0, sizeof(st));
	r = file_read_whole(path, NAME_MAP_MAX, &text, &len, &st, &why);
	if (r != 0) {
		bool again = a->names_failed && !strcmp(path, a->names_path) &&
			     same_file_state(&st, &a->names_seen);

		if (!again)
			snmp_log(r > 0 && !cfg.name_map[0] ? LOG_INFO : LOG_WARNING,
				 "node-name map %s: %s; %s\n", path,
				 r > 0 ? "no such file" : why,
				 a->names ? "the names read before stay" : "nodes are named by their descriptions");
		snprintf(a->names_path, sizeof(a->names_path), "%s", path);
		a->names_seen = st;
		a->names_file_seen = true;
		a->names_failed = true;
		return;
	}
	m = node_name_map_parse(text, len, path, err, sizeof(err));
	free(text);
	snprintf(a->names_path, sizeof(a->names_path), "%s", path);
	a->names_seen = st;
	a->names_file_seen = true;
	if (!m) {
		snmp_log(LOG_WARNING, "%s; the map is not used, %s\n", err,
			 a->names ? "the names read before stay" : "nodes are named by their descriptions");
		a->names_failed = true;
		return;
	}
	a->names_failed = false;
	if (a->names && node_name_map_same(a->names, m)) {
		node_name_map_free(m);
		return;
	}
	snmp_log(LOG_INFO, "node-name map %s: %zu nodes named\n", path, node_name_map_count(m));
	node_name_map_free(a->names);
	a->names = m;
	republish_names(a);
}

static void name_map_check(unsigned reg, void *arg)
{
	(void)reg;
	name_map_load(arg, false);
}

/* ---- following changes -------------------------------------------------------- */

static struct topology_area *the_area; /* for the link sweep's calls */

/* Whether changes are followed by probes: the link sweep lends its
 * readings, the subnet was discovered by SMP and SMPs are answered. */
static bool following(const struct topology_area *a)
{
	const struct topology *f = cache_snapshot(&a->group);

	return a->links && cfg.source != SOURCE_SA && f && !f->from_sa &&
	       !mad_engine_smps_refused();
}

static bool is_silent(const struct topology_area *a, uint64_t guid, unsigned port, time_t now)
{
	const struct topo_port_ref key = {guid, port};
	const struct silent_port *hit = a->n_silent ?
		bsearch(&key, a->silent, a->n_silent, sizeof(*a->silent), topo_port_ref_cmp) : NULL;

	return hit && now < hit->next;
}

/* The ports seen down are probed again when they come up. */
static void forget_silent_down(struct topology_area *a, const struct topo_link_seen *seen,
			       size_t n)
{
	bool *down;
	size_t kept = 0;

	if (!a->n_silent || !(down = calloc(a->n_silent, sizeof(*down))))
		return;
	for (size_t k = 0; k < n; k++) {
		const struct topo_port_ref key = {seen[k].guid, seen[k].port};
		const struct silent_port *hit = seen[k].up ? NULL :
			bsearch(&key, a->silent, a->n_silent, sizeof(*a->silent), topo_port_ref_cmp);

		if (hit)
			down[hit - a->silent] = true;
	}
	for (size_t j = 0; j < a->n_silent; j++)
		if (!down[j])
			a->silent[kept++] = a->silent[j];
	a->n_silent = kept;
	free(down);
}

static void follow_links(struct topology_area *a);

static void silent_retry(unsigned reg, void *arg)
{
	struct topology_area *a = arg;

	(void)reg;
	a->silent_alarm = 0;
	follow_links(a); /* what the link sweep last read, the waits over */
}

/* The link sweep's reading is looked at again when the first wait is over
 * (no sweep may come before: fabricPorts can be an hour). */
static void silent_retry_at_next(struct topology_area *a)
{
	time_t first = 0, now = time(NULL);

	for (size_t j = 0; j < a->n_silent; j++)
		if (!first || a->silent[j].next < first)
			first = a->silent[j].next;
	if (a->silent_alarm)
		snmp_alarm_unregister(a->silent_alarm);
	a->silent_alarm = first ? snmp_alarm_register(first > now ? (unsigned)(first - now) : 1, 0,
						      silent_retry, a) : 0;
}

/* Ports probed with no answer: each waits longer before the next try. */
static void add_silent(struct topology_area *a, const struct topo_port_ref *refs, size_t n)
{
	time_t now = time(NULL);
	size_t n_new = 0;
	struct silent_port *q;

	if (!n || !(q = realloc(a->silent, (a->n_silent + n) * sizeof(*q))))
		return;
	a->silent = q;
	for (size_t k = 0; k < n; k++) {
		struct silent_port *hit = a->n_silent ?
			bsearch(&refs[k], a->silent, a->n_silent, sizeof(*q), topo_port_ref_cmp) : NULL;
		unsigned tries = hit ? hit->tries + 1 : 1;
		time_t wait = (time_t)SILENT_FIRST_S << (tries < 12 ? tries - 1 : 11);

		if (!hit)
			hit = &a->silent[a->n_silent + n_new++];
		*hit = (struct silent_port){refs[k], tries,
					    now + (wait < cfg.interval_s ? wait : cfg.interval_s)};
	}
	a->n_silent += n_new;
	qsort(a->silent, a->n_silent, sizeof(*q), topo_port_ref_cmp);
	silent_retry_at_next(a);
}

/* t, patched from the topology published now, published in its place;
 * not a topology of the local node alone (its own link is down: the nodes
 * behind it are not gone, as after a discovery that saw it alone). */
static void publish_patch(struct topology_area *a, struct topology *t)
{
	const struct topology *prev = cache_snapshot(&a->group);

	if (t->n_nodes == 1 && prev && prev->n_nodes > 1)
		return;
	a->storm_pending = false;
	t->serial = ++a->serial;
	t->patched_from = prev ? prev->serial : 0;
	apply_mkeys(t);
	cache_publish(&a->group, (void *)topology_get(t));
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void round_done(struct topo_round *r, void *arg)
{
	struct topology_area *a = arg;
	struct topology *t;
	char err[80];

	a->round = NULL;
	if (r->why[0]) {
		snmp_log(LOG_NOTICE, "subnet: probes around the ports that came up: %s; "
			 "rediscovering the subnet\n", r->why);
		topo_round_free(r);
		rediscover(a);
		return;
	}
	if (r->n_silent)
		DEBUGMSGTL(("ibsnmpd:topology", "nothing answered behind %zu ports: probed again "
			    "later\n", r->n_silent));
	add_silent(a, r->silent, r->n_silent);
	t = (struct topology *)topology_get(topology_patch_finish(r->patch, a->names, err,
								  sizeof(err)));
	if (!t) {
		snmp_log(LOG_WARNING, "subnet: following a change: %s\n", err);
	} else if (t->n_changed) {
		t->seconds = seconds_since(&r->began);
		snmp_log(LOG_INFO, "subnet changed: %zu ports probed, %zu answered, %zu nodes new "
			 "(%zu SMPs in %.3f s): %zu nodes, %zu ports\n", r->probed, r->found,
			 t->nodes_added, r->smps, t->seconds, t->n_nodes, t->n_ports);
		publish_patch(a, t);
	}
	topology_put(t);
	topo_round_free(r);
	if (a->recheck)
		follow_links(a);
}

/* f with the links gone and the LIDs given of c taken (no SMP), the nodes
 * no longer reached gone; NULL if c has none of them (or out of memory:
 * said). */
static struct topology *gone_taken(struct topology_area *a, const struct topology *f,
				   const struct topo_change *c, size_t n, size_t *gone)
{
	struct topo_patch *p = NULL;
	struct topology *t;
	char err[80];

	*gone = 0;
	for (size_t k = 0; k < n; k++) {
		if (c[k].kind == TOPO_LINK_NEW)
			continue;
		if (!p && !(p = topology_patch_begin(f)))
			return NULL;
		if (c[k].kind == TOPO_LINK_GONE) {
			topology_patch_unlink(p, c[k].guid, c[k].port);
			++*gone;
		} else {
			topology_patch_port(p, c[k].guid, c[k].port, c[k].lid, 0, c[k].speed);
		}
	}
	if (!p)
		return NULL;
	t = topology_patch_finish(p, a->names, err, sizeof(err));
	topology_patch_free(p);
	if (!t)
		snmp_log(LOG_WARNING, "subnet: following a change: %s\n", err);
	return t;
}

/* The TOPO_LINK_NEW ports of c wait before they are probed. */
static void silence_new(struct topology_area *a, const struct topo_change *c, size_t n)
{
	struct topo_port_ref *refs = malloc((n ? n : 1) * sizeof(*refs));
	size_t r = 0;

	for (size_t j = 0; refs && j < n; j++)
		if (c[j].kind == TOPO_LINK_NEW)
			refs[r++] = (struct topo_port_ref){c[j].guid, c[j].port};
	add_silent(a, refs, r);
	free(refs);
}

/* The link sweep's last reading against the topology: links gone are
 * taken out at once; where links came up too, one round of probes makes
 * both into one patch (a cable moved keeps its node). */
static void follow_links(struct topology_area *a)
{
	const struct topology *f = cache_snapshot(&a->group), *swept = NULL;
	struct topo_link_seen *seen = NULL;
	struct topology *without;
	struct topo_change *c = NULL, *news = NULL;
	size_t n, k = 0, m, n_news = 0, gone, cost;
	time_t now = time(NULL);

	if (!following(a))
		return;
	if (a->group.refreshing || a->round) {
		a->recheck = true; /* looked at when they are over */
		return;
	}
	a->recheck = false;
	n = a->links(a->links_arg, &swept, &seen);
	if (!seen || swept != f || !n || !(c = malloc(2 * n * sizeof(*c))) ||
	    !(news = malloc(n * sizeof(*news)))) {
		free(seen); /* read against another topology: its sweep comes */
		free(c);
		return;
	}
	forget_silent_down(a, seen, n);
	m = topology_changes(f, seen, n, news);
	for (size_t j = 0; j < m; j++)
		if (news[j].kind != TOPO_LINK_NEW)
			c[k++] = news[j];
	without = (struct topology *)topology_get(gone_taken(a, f, c, k, &gone));
	/* the ports to probe: against the topology without what is gone */
	m = topology_changes(without ? without : f, seen, n, news);
	free(seen);
	for (size_t j = 0; j < m; j++)
		if (news[j].kind == TOPO_LINK_NEW &&
		    !is_silent(a, news[j].guid, news[j].port, now)) {
			c[k++] = news[j];
			n_news++;
		}
	free(news);
	cost = topology_discovery_cost(f);
	if (n_news && n_news * 3 > cost && a->storm_pending && !f->patched_from) {
		/* the discovery asked for them did not reach them either: they
		 * wait as any port with nothing behind it (nor is the subnet
		 * discovered again for them) */
		snmp_log(LOG_NOTICE, "subnet: %zu ports are up with nothing that answers behind "
			 "them\n", n_news);
		silence_new(a, c, k);
		a->storm_pending = false;
		n_news = 0;
	} else if (n_news && n_news * 3 > cost) {
		snmp_log(LOG_NOTICE, "subnet: %zu links came up at once: a discovery costs less than "
			 "probing each; rediscovering the subnet\n", n_news);
		topology_put(without);
		free(c);
		a->storm_pending = true;
		rediscover(a);
		return;
	}
	if (!n_news) {
		if (without && without->n_changed) {
			snmp_log(LOG_INFO, "subnet changed: %zu links gone, %zu nodes no longer "
				 "reached: %zu nodes, %zu ports\n", gone, without->nodes_removed,
				 without->n_nodes, without->n_ports);
			publish_patch(a, without);
		}
		topology_put(without);
		free(c);
		return;
	}
	a->round = topo_round_start(f, without ? without : f, c, k, cost, round_done, a);
	if (!a->round)
		snmp_log(LOG_WARNING, "subnet: out of memory probing %zu ports\n", n_news);
	topology_put(without); /* the round holds it */
	free(c);
	if (a->round)
		topo_round_release(a->round);
}

void topology_follow_links(topology_links_fn links, void *arg)
{
	if (!the_area)
		return;
	the_area->links = links;
	the_area->links_arg = arg;
}

static void links_read_now(unsigned reg, void *arg)
{
	struct topology_area *a = arg;

	(void)reg;
	a->links_alarm = 0;
	follow_links(a);
}

/* From the link sweep's observer: looked at from the main loop, not while
 * its publication is told (a patch published now would start its sweep). */
void topology_links_read(void)
{
	if (the_area && !the_area->links_alarm)
		the_area->links_alarm = snmp_alarm_register(0, 0, links_read_now, the_area);
}

/* ---- events ------------------------------------------------------------------ */

static void rediscover_now(unsigned reg, void *arg)
{
	struct topology_area *a = arg;

	(void)reg;
	a->link_trap_alarm = 0;
	rediscover(a);
}

/* A link changed state somewhere (trap 128): the subnet is rediscovered once
 * a burst of them is over. */
static void trap_seen(const struct notice *n, const char *via, void *arg)
{
	struct topology_area *a = arg;

	(void)via;
	if (!n->is_generic || n->trap_number != 128 || following(a))
		return; /* followed: the link sweep reads the switch, probes follow */
	if (a->link_trap_alarm)
		snmp_alarm_unregister(a->link_trap_alarm);
	a->link_trap_alarm = snmp_alarm_register(LINK_TRAP_QUIET_S, 0, rediscover_now, a);
}

/* A new master SM (the local port's MasterSMLID moved) may have changed LIDs
 * and routes. */
static void local_ports_published(struct cache_group *g, const void *before, const void *after,
				  void *arg)
{
	struct topology_area *a = arg;
	unsigned from, to;

	(void)g;
	if (!sma_sm_moved(before, after, &from, &to))
		return;
	snmp_log(LOG_NOTICE, "master SM moved from LID %u to LID %u: rediscovering the subnet\n",
		 from, to);
	rediscover(a);
}

/* The M_Key guard began or ended refusing SMPs: under discoverySource auto
 * the subnet is read again from the other source at once. */
static void smp_guard_changed(bool refused, void *arg)
{
	struct topology_area *a = arg;
	const struct topology *f = cache_snapshot(&a->group);

	if (cfg.source != SOURCE_AUTO || (!refused && f && !f->from_sa))
		return; /* answered as before: the discovery it has stays */
	if (refused)
		snmp_log(LOG_NOTICE, "discovery: from the SM's SA while this port may not send "
			 "SMPs\n");
	rediscover(a);
}

/* The port by which this fabric sees a CA (its lowest port GUID in the
 * last discovery): its context's name where fabricName is set. */
static uint64_t ca_port_guid(uint64_t node_guid, void *arg)
{
	const struct topology *f = cache_snapshot(&((struct topology_area *)arg)->group);
	const struct topo_node *nd = f ? topology_node(f, node_guid) : NULL;
	uint64_t lowest = 0;

	for (unsigned p = 1; nd && p <= nd->num_ports; p++) {
		const struct topo_port *tp = topology_port(f, (size_t)(nd - f->nodes), p);

		if (tp && tp->port_guid && (!lowest || tp->port_guid < lowest))
			lowest = tp->port_guid;
	}
	return lowest;
}

/* ---- the area ----------------------------------------------------------------- */

/* Without the key the guard asks its own port every discovery interval, at
 * most every GUARD_MAX_S: a key set meanwhile is noticed within minutes
 * though discoveries are an hour apart (each question unanswered is one
 * violation). */
#define GUARD_MAX_S 300
static unsigned guard_interval(void)
{
	return cfg.interval_s < GUARD_MAX_S ? cfg.interval_s : GUARD_MAX_S;
}

static void *start(const struct area_env *env)
{
	struct topology_area *a = calloc(1, sizeof(*a));
	struct sma_area *sma = area_find(&sma_area_def);

	if (!a)
		return NULL;
	snprintf(a->ca_name, sizeof(a->ca_name), "%s", env->local->ca_name);
	a->port_num = env->local->port_num;
	a->fd = -1;
	find_helper(a);
	if (access(a->helper, X_OK)) {
		snmp_log(LOG_ERR, "cannot run the discovery helper %s: %s\n", a->helper,
			 strerror(errno));
		free(a);
		return NULL;
	}
	a->group.name = "subnet discovery";
	a->group.refresh = start_discovery;
	a->group.free_snapshot = free_snapshot;
	a->group.owner = a;
	a->group.lifetime_s = cfg.interval_s;
	mad_engine_set_smp_guard_interval(guard_interval());
	mad_engine_on_smp_guard(smp_guard_changed, a);
	mib_set_ca_port_guid_resolver(ca_port_guid, a);
	name_map_load(a, true);
	a->names_alarm = snmp_alarm_register(NAME_MAP_CHECK_S, SA_REPEAT, name_map_check, a);
	a->traps = area_find(&trap_area_def);
	if (a->traps)
		trap_observe(a->traps, &a->trap_seen, trap_seen, a);
	if (sma) {
		a->local_ports = sma_group(sma_local(sma), SMA_PORT_INFO);
		cache_group_observe(a->local_ports, &a->sm_watch, local_ports_published, a);
	}
	the_area = a;
	cache_group_start(&a->group); /* the sweeps of the other areas follow */
	return a;
}

static void reload(void *self)
{
	struct topology_area *a = self;

	cache_group_set_lifetime(&a->group, cfg.interval_s);
	mad_engine_set_smp_guard_interval(guard_interval());
	name_map_load(a, true); /* SIGHUP: read again, changed or not */
}

static void stop(void *self)
{
	struct topology_area *a = self;

	mad_engine_on_smp_guard(NULL, NULL);
	mib_set_ca_port_guid_resolver(NULL, NULL);
	the_area = NULL;
	if (a->links_alarm)
		snmp_alarm_unregister(a->links_alarm);
	if (a->silent_alarm)
		snmp_alarm_unregister(a->silent_alarm);
	if (a->round)
		topo_round_abandon(a->round); /* freed by its last answer */
	free(a->silent);
	if (a->link_trap_alarm)
		snmp_alarm_unregister(a->link_trap_alarm);
	if (a->names_alarm)
		snmp_alarm_unregister(a->names_alarm);
	if (a->traps)
		trap_unobserve(a->traps, &a->trap_seen);
	if (a->local_ports)
		cache_group_unobserve(a->local_ports, &a->sm_watch);
	cache_group_stop(&a->group);
	if (a->pid) {
		if (a->fd >= 0) {
			unregister_readfd(a->fd);
			close(a->fd);
		}
		child_stop(a->pid);
	}
	free(a->out);
	node_name_map_free(a->names);
	free(a);
}

static void defaults(void)
{
	memset(&cfg, 0, sizeof(cfg));
	/* changes are followed between discoveries: a discovery of 40,000
	 * hosts (some 750,000 SMPs) every five minutes would be a switch's
	 * management processor's busiest work */
	cfg.interval_s = 3600;
	cfg.source = SOURCE_AUTO;
}

/* discoverySource auto|smp|sa */
static void parse_source(const char *token, char *line)
{
	static const char *const names[] = {"auto", "smp", "sa"};
	char word[8] = "", extra[2];

	if (line && sscanf(line, "%7s %1s", word, extra) == 1)
		for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (!strcmp(word, names[i])) {
				cfg.source = (enum discovery_source)i;
				return;
			}
	config_report(token, line, "expected auto, smp or sa");
}

static const struct config_token tokens[] = {
	{"pmDiscoveryInterval", CONFIG_UINT, &cfg.interval_s, .min = 10, .max = 86400,
	 .help = "SECONDS"},
	{"pmDiscoveryHelper", CONFIG_PATH, cfg.helper, sizeof(cfg.helper), .help = "PATH"},
	{"nodeNameMap", CONFIG_PATH, cfg.name_map, sizeof(cfg.name_map), .help = "PATH"},
	{"discoverySource", CONFIG_CUSTOM, .parse = parse_source, .help = "auto|smp|sa"},
};

const struct area_def topology_area_def = {
	.name = "the subnet's topology",
	AREA_CONFIG(tokens, cfg, defaults),
	.start = start,
	.reload = reload,
	.stop = stop,
};
