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
 * Between them the topology follows the fabric's changes by probes
 * (topology_follow.c). Where the link sweep does not run, or the subnet is
 * read from the SA (a discovery from it costs the switches nothing), a
 * burst of traps 128 brings a discovery, two seconds after its last.
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

struct cache_group *topology_followed_by(const char *who)
{
	struct topology_area *a = area_find(&topology_area_def);

	if (!a)
		snmp_log(LOG_ERR, "%s needs the subnet's topology\n", who);
	return a ? &a->group : NULL;
}

int topology_helper(const char **path, const char **ca, int *port)
{
	struct topology_area *a = area_find(&topology_area_def);

	if (!a || !a->helper[0])
		return -1;
	*path = a->helper;
	*ca = a->ca_name;
	*port = a->port_num;
	return 0;
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
void topology_rediscover(struct topology_area *a)
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
void topology_apply_mkeys(const struct topology *t)
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
	{
		/* nodes it did not find behind ports that are up went
		 * unanswered: kept, not gone (a change needs an answer) */
		size_t found = f->n_nodes, kept;

		f = topology_keep_unanswered(prev, f, &kept);
		if (kept && topology_name_nodes(f, a->names))
			snmp_log(LOG_WARNING, "subnet discovery: out of memory naming its nodes\n");
		if (kept)
			snmp_log(LOG_NOTICE, "subnet discovery: %zu nodes of the last one did not "
				 "answer behind ports that are up: kept as they were, not gone "
				 "(%zu found)\n", kept, found);
	}
	snmp_log(LOG_INFO, "subnet discovered%s: %zu nodes, %zu ports in %.3f s\n",
		 f->from_sa ? " from the SA (the SM's view)" : "", f->n_nodes, f->n_ports,
		 f->seconds);
	topology_apply_mkeys(f);
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

/* ---- events ------------------------------------------------------------------ */

static void rediscover_now(unsigned reg, void *arg)
{
	struct topology_area *a = arg;

	(void)reg;
	a->link_trap_alarm = 0;
	topology_rediscover(a);
}

/* A link changed state somewhere (trap 128): the subnet is rediscovered once
 * a burst of them is over. */
static void trap_seen(const struct notice *n, const char *via, void *arg)
{
	struct topology_area *a = arg;

	(void)via;
	if (!n->is_generic || n->trap_number != 128 || topology_following(a))
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
	topology_rediscover(a);
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
	topology_rediscover(a);
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
	topology_follow_start(a);
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
	topology_follow_stop(a);
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

unsigned topology_interval_s(void)
{
	return cfg.interval_s;
}

bool topology_source_is_sa(void)
{
	return cfg.source == SOURCE_SA;
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
