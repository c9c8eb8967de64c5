/* The Slurm area: topology.conf for Slurm's topology/tree plugin
 * (slurmTopologyFile) and topology.yaml for Slurm 25.05 and later
 * (slurmTopologyYaml), kept true from the fabric as cabled.
 *
 * It follows the link table's baseline, not the links' state: a host whose
 * link is down, or that reboots, stays under its leaf; a cable moved, a
 * switch added or replaced, a host added change the tree. After a
 * publication of the link table that may change it (the baseline changed,
 * or a new discovery: new nodes, new names), and once the fabric has been
 * quiet for slurmSettle seconds, a worker thread reads the held snapshot,
 * builds the tree (slurm_tree.c) and, for each file whose text differs from
 * the tree's, replaces the file (a temporary file renamed over it); then
 * slurmReloadCommand runs once, as a child the loop does not wait on. */
#include "ibsnmpd/netsnmp.h"

#include <regex.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ibsnmpd/area.h"
#include "ibsnmpd/cache.h"
#include "ibsnmpd/child.h"
#include "ibsnmpd/fabric.h"
#include "ibsnmpd/file_io.h"
#include "ibsnmpd/slurm.h"
#include "ibsnmpd/worker.h"

#include "slurm_internal.h"

#define RELOAD_DEADLINE_S 60
#define NODES_FILE_MAX (16u << 20)
/* a fabric that never settles (a storm) is written at the latest after */
#define SETTLE_MAX_FACTOR 6

struct slurm_config {
	char topology_file[4096]; /* "": none */
	char topology_yaml[4096]; /* "": none */
	char reload_command[1024];
	char node_regex[256];  /* "": the first word of the node's name */
	char nodes_file[4096]; /* "": every host */
	unsigned settle_s;
};

static struct slurm_config cfg;

/* A file the tree is written to, and what became of it. */
struct slurm_output {
	char path[4096]; /* "": not configured */
	bool changed, written;
	char why[300];
};

enum { OUT_CONF, OUT_YAML, OUTPUTS };

/* What the worker is handed and hands back. */
struct slurm_job {
	struct slurm_area *a;
	const struct fabric_snapshot *fs; /* held */
	const regex_t *re;                /* NULL: the first word */
	const struct slurm_hosts *known;  /* NULL: every host */
	struct slurm_output out[OUTPUTS];
	/* out */
	struct slurm_snapshot *made;
	bool oom;
	double seconds;
};


static const struct cache_decl caches[] = {
	{22, "slurmTopology", 3600, offsetof(struct slurm_area, group)},
};

static void snapshot_free(void *p)
{
	struct slurm_snapshot *s = p;

	if (!s)
		return;
	slurm_tree_free(s->tree);
	free(s->text);
	free(s->yaml);
	free(s->switch_rows);
	free(s->member_rows);
	free(s);
}

/* ---- the worker's part ---- */

/* The host an adapter of that name is in: the capture of slurmNodeName, or
 * its first word; "" when it has none. */
static void host_of(const char *name, const regex_t *re, char *out, size_t len)
{
	size_t n;

	out[0] = '\0';
	if (re) {
		regmatch_t m[2];

		if (regexec(re, name, 2, m, 0) || m[1].rm_so < 0)
			return;
		n = (size_t)(m[1].rm_eo - m[1].rm_so);
		snprintf(out, len, "%.*s", (int)n, name + m[1].rm_so);
		return;
	}
	n = strcspn(name, " \t");
	snprintf(out, len, "%.*s", (int)n, name);
}

static int name_cmp(const void *x, const void *y)
{
	return strcmp(*(const char *const *)x, *(const char *const *)y);
}

/* The nodes and cables of the link table's baseline: a port's cable counts
 * when the other end's row names it back, or the other end has no row. */
static int fabric_input(struct slurm_job *j, struct slurm_node **nodes_out, size_t *n_nodes,
			struct slurm_cable **cables_out, size_t *n_cables, char **hosts_out,
			size_t *unknown)
{
	const struct fabric_snapshot *fs = j->fs;
	size_t n_guids = 0, names = 0, nn = 0, nc = 0, n_unknown = 0, used = 0;
	struct slurm_node *nodes;
	struct slurm_cable *cables;
	const char **unknown_names;
	char *hosts;

	/* the nodes (a node's ports are together), and room for each
	 * adapter's host name: at most its name */
	for (size_t i = 0; i < fs->n; i++) {
		const struct fabric_port *p = &fs->ports[i];

		if (i && fs->ports[i - 1].guid == p->guid)
			continue;
		n_guids++;
		if (p->node_type == 1 && p->node_desc)
			names += strlen(p->node_desc) + 1;
	}
	nodes = calloc(n_guids + 1, sizeof(*nodes));
	cables = calloc(fs->n + 1, sizeof(*cables));
	hosts = malloc(names + 1);
	unknown_names = malloc((n_guids + 1) * sizeof(*unknown_names));
	if (!nodes || !cables || !hosts || !unknown_names) {
		free(nodes);
		free(cables);
		free(hosts);
		free(unknown_names);
		return -1;
	}
	for (size_t i = 0; i < fs->n; i++) {
		const struct fabric_port *p = &fs->ports[i];
		const struct fabric_port *other;

		if (!nn || nodes[nn - 1].guid != p->guid) {
			struct slurm_node *nd = &nodes[nn];

			nd->guid = p->guid;
			nd->is_switch = p->node_type == 2;
			if (nd->is_switch) {
				nd->name = p->node_desc;
			} else if (p->node_type == 1 && p->node_desc) {
				char *host = hosts + used;

				host_of(p->node_desc, j->re, host, strlen(p->node_desc) + 1);
				used += strlen(host) + 1;
				if (host[0] && j->known && !slurm_hosts_has(j->known, host))
					unknown_names[n_unknown++] = host;
				else if (host[0])
					nd->host = host;
			}
			nn++;
		}
		if (!p->base_linked || !p->remote_guid)
			continue;
		other = fabric_find(fs, p->remote_guid, p->remote_port);
		if (other && fabric_peer(fs, p) != other)
			continue; /* its other end is cabled elsewhere now */
		cables[nc++] = (struct slurm_cable){p->guid, p->remote_guid};
	}
	/* hosts, not adapters: a host of several adapters once */
	qsort(unknown_names, n_unknown, sizeof(*unknown_names), name_cmp);
	for (size_t i = 0; i < n_unknown; i++)
		*unknown += !i || strcmp(unknown_names[i - 1], unknown_names[i]);
	free(unknown_names);
	*nodes_out = nodes;
	*n_nodes = nn;
	*cables_out = cables;
	*n_cables = nc;
	*hosts_out = hosts;
	return 0;
}

/* The rows of the two tables, in their index order (the tree's). */
static int mib_rows_build(struct slurm_snapshot *s)
{
	const struct slurm_tree *t = s->tree;

	s->switch_rows = calloc(t->n_switches + 1, sizeof(*s->switch_rows));
	s->member_rows = calloc(t->n_members + 1, sizeof(*s->member_rows));
	if (!s->switch_rows || !s->member_rows)
		return -1;
	for (size_t i = 0; i < t->n_switches; i++) {
		const struct slurm_switch *sw = &t->switches[i];

		s->switch_rows[i] = (struct slurm_switch_row){(uint32_t)(i + 1), sw};
		for (size_t k = 0; k < sw->n; k++)
			s->member_rows[sw->first + k] = (struct slurm_member_row){
				(uint32_t)(i + 1), (uint32_t)(k + 1), t->members[sw->first + k]};
	}
	return 0;
}

/* The file as it is now: one already true is not written again (a
 * restart), one edited by hand is put right. Worker's thread. */
static void output_write(struct slurm_output *o, const char *text)
{
	char *on_disk = NULL;
	const char *why = NULL;
	size_t len = 0;
	struct stat st;

	if (!o->path[0])
		return;
	o->changed = file_read_whole(o->path, NODES_FILE_MAX, &on_disk, &len, &st, &why) ||
		     len != strlen(text) || memcmp(on_disk, text, len);
	free(on_disk);
	if (!o->changed)
		return;
	why = NULL;
	o->written = !file_replace(o->path, text, strlen(text), &why);
	if (!o->written)
		snprintf(o->why, sizeof(o->why), "%s", why ? why : "cannot write it");
}

static void work(void *arg)
{
	struct slurm_job *j = arg;
	struct slurm_node *nodes = NULL;
	struct slurm_cable *cables = NULL;
	char *hosts = NULL;
	size_t n_nodes = 0, n_cables = 0;
	double began = monotonic_seconds();
	struct slurm_snapshot *s = calloc(1, sizeof(*s));

	if (!s || fabric_input(j, &nodes, &n_nodes, &cables, &n_cables, &hosts,
			       &s->hosts_unknown) ||
	    !(s->tree = slurm_tree_build(nodes, n_nodes, cables, n_cables)) ||
	    !(s->text = slurm_tree_conf(s->tree)) || !(s->yaml = slurm_tree_yaml(s->tree)) ||
	    mib_rows_build(s)) {
		j->oom = true;
		snapshot_free(s);
		goto done;
	}
	j->made = s;
	output_write(&j->out[OUT_CONF], s->text);
	output_write(&j->out[OUT_YAML], s->yaml);
done:
	free(nodes);
	free(cables);
	free(hosts);
	j->seconds = monotonic_seconds() - began;
}

/* ---- the main loop's part ---- */

static void run(struct slurm_area *a);
static void take_config(struct slurm_area *a);

static void job_done(void *arg)
{
	struct slurm_job *j = arg;
	struct slurm_area *a = j->a;
	const struct slurm_snapshot *before = cache_snapshot(&a->group);
	struct slurm_snapshot *s = j->made;
	bool written = false, failed = false;

	a->job = NULL;
	cache_snapshot_release(a->links, j->fs);
	for (int i = 0; !j->oom && i < OUTPUTS; i++) {
		struct slurm_output *o = &j->out[i];

		written |= o->written;
		if (!o->changed || o->written)
			continue;
		failed = true;
		if (!a->write_failed[i])
			snmp_log(LOG_ERR, "slurm topology: cannot write %s: %s\n", o->path, o->why);
		a->write_failed[i] = true;
	}
	if (j->oom) {
		snmp_log(LOG_WARNING, "slurm topology: out of memory: the files stay as they were\n");
		cache_refresh_done(&a->group, NULL, "out of memory");
	} else if (failed && !written) {
		/* the tables show what a file holds */
		snapshot_free(s);
		cache_refresh_done(&a->group, NULL, "cannot write the file");
	} else {
		const struct slurm_tree *t = s->tree;

		for (int i = 0; i < OUTPUTS; i++) {
			struct slurm_output *o = &j->out[i];

			if (!o->path[0] || (o->changed && !o->written))
				continue;
			if (o->written || a->write_failed[i] || !before)
				snmp_log(LOG_NOTICE, "slurm topology: %s %s: %zu switches, %zu hosts "
					 "(left out: %zu Slurm does not know, %zu whose names Slurm "
					 "cannot read, %zu cabled to no switch), in %.2f s\n", o->path,
					 o->written ? "written" : "already true", t->n_switches, t->hosts,
					 s->hosts_unknown, t->hosts_bad_name, t->hosts_uncabled,
					 j->seconds);
			a->write_failed[i] = false;
		}
		a->writes += written;
		if (written && cfg.reload_command[0]) {
			char *argv[] = {"/bin/sh", "-c", cfg.reload_command, NULL};

			child_spawn("slurmReloadCommand", argv, -1, -1, RELOAD_DEADLINE_S, NULL, NULL);
		}
		cache_refresh_done(&a->group, s, NULL);
	}
	free(j);
	if (a->config_pending) {
		a->config_pending = false;
		take_config(a);
		cache_group_refresh_now(&a->group); /* names or hosts may have changed */
	} else if (a->pending_since && !a->settle_alarm) {
		cache_group_refresh_now(&a->group); /* a change came while it ran, and settled */
	}
}

static void run(struct slurm_area *a)
{
	struct slurm_job *j;

	a->pending_since = 0;
	if (!a->links || !cache_snapshot(a->links)) {
		cache_refresh_kept(&a->group); /* the link table's first publication runs it */
		return;
	}
	j = calloc(1, sizeof(*j));
	if (!j || !(j->fs = cache_snapshot_hold(a->links))) {
		free(j);
		cache_refresh_done(&a->group, NULL, "out of memory");
		return;
	}
	j->a = a;
	j->re = a->have_re ? &a->re : NULL;
	j->known = a->known;
	snprintf(j->out[OUT_CONF].path, sizeof(j->out[OUT_CONF].path), "%s", cfg.topology_file);
	snprintf(j->out[OUT_YAML].path, sizeof(j->out[OUT_YAML].path), "%s", cfg.topology_yaml);
	if (worker_start(&a->worker, work, job_done, j)) {
		cache_snapshot_release(a->links, j->fs);
		free(j);
		cache_refresh_done(&a->group, NULL, "no thread");
		return;
	}
	a->job = j;
}

static void refresh(struct cache_group *g)
{
	run(g->owner);
}

static void settled(unsigned reg, void *arg)
{
	struct slurm_area *a = arg;

	(void)reg;
	a->settle_alarm = 0;
	if (a->group.refreshing)
		return; /* its end runs it again */
	cache_group_refresh_now(&a->group);
}

/* A publication of the link table: one that may change the tree waits
 * until the fabric has been quiet for slurmSettle seconds (at most
 * SETTLE_MAX_FACTOR times that since the first). */
static void links_published(struct cache_group *g, const void *before, const void *after,
			    void *arg)
{
	struct slurm_area *a = arg;
	const struct fabric_snapshot *b = before, *f = after;
	time_t now = monotonic_whole_seconds();

	(void)g;
	if (!f || (b && !f->baseline_changed && f->fabric == b->fabric))
		return;
	if (!a->pending_since)
		a->pending_since = now;
	if (a->settle_alarm) {
		if (now - a->pending_since >= (time_t)cfg.settle_s * SETTLE_MAX_FACTOR)
			return; /* the alarm set stands */
		snmp_alarm_unregister(a->settle_alarm);
	}
	a->settle_alarm = snmp_alarm_register(cfg.settle_s, 0, settled, a);
}

/* The regular expression and the hosts Slurm knows, anew (start, SIGHUP);
 * the tokens' handlers checked both already, so a failure here is a file
 * changed since. */
static void take_config(struct slurm_area *a)
{
	if (a->have_re)
		regfree(&a->re);
	a->have_re = cfg.node_regex[0] && !regcomp(&a->re, cfg.node_regex, REG_EXTENDED);
	slurm_hosts_free(a->known);
	a->known = NULL;
	if (cfg.nodes_file[0]) {
		char *text = NULL, err[400];
		const char *why = NULL;
		size_t len = 0;
		struct stat st;

		if (file_read_whole(cfg.nodes_file, NODES_FILE_MAX, &text, &len, &st, &why))
			snmp_log(LOG_ERR, "slurm topology: slurmNodes %s: %s: every host is "
				 "written\n", cfg.nodes_file, why ? why : "no such file");
		else if (!(a->known = slurm_hosts_parse(text, len, cfg.nodes_file, err,
							  sizeof(err))))
			snmp_log(LOG_ERR, "slurm topology: slurmNodes %s: every host is written\n",
				 err);
		free(text);
	}
}

static void *start(const struct area_env *env)
{
	struct fabric_area *links = area_find(&fabric_area_def);
	struct slurm_area *a = calloc(1, sizeof(*a));

	(void)env;
	if (!a)
		return NULL;
	if (worker_init(&a->worker, "slurm topology")) {
		free(a);
		return NULL;
	}
	take_config(a);
	a->links = links ? &links->group : NULL;
	a->group.name = "slurm topology";
	a->group.refresh = refresh;
	a->group.free_snapshot = snapshot_free;
	a->group.owner = a;
	a->group.lifetime_s = config_cache_lifetime(&caches[0]);
	if (!a->links)
		snmp_log(LOG_WARNING, "slurm topology: no link table (fabricPorts): %s%s%s is not "
			 "written\n", cfg.topology_file, cfg.topology_file[0] && cfg.topology_yaml[0] ?
			 ", " : "", cfg.topology_yaml);
	else
		cache_group_observe(a->links, &a->cabled, links_published, a);
	return a;
}

/* The first tree once the link table is in, then every lifetime. */
static void started(void *self)
{
	struct slurm_area *a = self;

	if (a->links)
		cache_group_start(&a->group);
}

static int register_handlers(void *self)
{
	return slurm_mib_register(self);
}

static void unregister_handlers(void *self)
{
	slurm_mib_unregister(self);
}

static void reload(void *self)
{
	struct slurm_area *a = self;

	cache_group_set_lifetime(&a->group, config_cache_lifetime(&caches[0]));
	if (a->job) { /* it reads the expression and the hosts: after it */
		a->config_pending = true;
		return;
	}
	take_config(a);
	if (a->links)
		cache_group_refresh_now(&a->group); /* names or hosts may have changed */
}

static void stop(void *self)
{
	struct slurm_area *a = self;

	if (a->settle_alarm)
		snmp_alarm_unregister(a->settle_alarm);
	worker_stop(&a->worker);
	if (a->job) {
		cache_snapshot_release(a->links, a->job->fs);
		snapshot_free(a->job->made);
		free(a->job);
	}
	if (a->links)
		cache_group_unobserve(a->links, &a->cabled);
	cache_group_stop(&a->group);
	if (a->have_re)
		regfree(&a->re);
	slurm_hosts_free(a->known);
	free(a);
}

const char *slurm_topology_path(void)
{
	return cfg.topology_file;
}

char *slurm_topology_text(void *area, bool yaml)
{
	struct slurm_area *a = area;
	const struct slurm_snapshot *s = a ? cache_snapshot(&a->group) : NULL;
	const char *text = s ? (yaml ? s->yaml : s->text) : NULL;

	return text ? strdup(text) : NULL;
}

/* ---- configuration ---- */

static void parse_reload_command(const char *token, char *line)
{
	if (!line || !*line) {
		config_report(token, line, "expected a command line");
		return;
	}
	snprintf(cfg.reload_command, sizeof(cfg.reload_command), "%s", line);
}

static void parse_node_name(const char *token, char *line)
{
	regex_t re;
	char why[200];
	int rc;

	if (!line || !*line || strlen(line) >= sizeof(cfg.node_regex)) {
		config_report(token, line, "expected a regular expression with one group");
		return;
	}
	rc = regcomp(&re, line, REG_EXTENDED);
	if (rc) {
		regerror(rc, &re, why, sizeof(why));
		config_report(token, line, why);
		return;
	}
	if (re.re_nsub != 1) {
		regfree(&re);
		config_report(token, line, "expected exactly one group, ( ), the host's name");
		return;
	}
	regfree(&re);
	snprintf(cfg.node_regex, sizeof(cfg.node_regex), "%s", line);
}

static void parse_nodes(const char *token, char *line)
{
	char path[sizeof(cfg.nodes_file)], err[400], *text = NULL;
	const char *why = NULL;
	struct slurm_hosts *h;
	size_t len = 0;
	struct stat st;

	if (config_parse_path(line, path, sizeof(path), &why)) {
		config_report(token, line, why);
		return;
	}
	if (file_read_whole(path, NODES_FILE_MAX, &text, &len, &st, &why)) {
		config_report(token, line, why ? why : "no such file");
		return;
	}
	h = slurm_hosts_parse(text, len, path, err, sizeof(err));
	free(text);
	if (!h) {
		config_report(token, line, err);
		return;
	}
	if (!slurm_hosts_count(h)) {
		slurm_hosts_free(h);
		config_report(token, line, "it names no host");
		return;
	}
	slurm_hosts_free(h);
	snprintf(cfg.nodes_file, sizeof(cfg.nodes_file), "%s", path);
}

/* The file's directory must be there and writable: a path that can never
 * be written is a mistake to name now, not at the first change. */
static void parse_output(const char *token, char *line, char *out, size_t size)
{
	char path[sizeof(cfg.topology_file)], dir[sizeof(path)], *slash;
	const char *why = NULL;

	if (config_parse_path(line, path, sizeof(path), &why)) {
		config_report(token, line, why);
		return;
	}
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	if (access(dir, W_OK | X_OK)) {
		config_report(token, line, "its directory is not there or not writable");
		return;
	}
	snprintf(out, size, "%s", path);
}

static void parse_topology_file(const char *token, char *line)
{
	parse_output(token, line, cfg.topology_file, sizeof(cfg.topology_file));
}

static void parse_topology_yaml(const char *token, char *line)
{
	parse_output(token, line, cfg.topology_yaml, sizeof(cfg.topology_yaml));
}

static void defaults(void)
{
	memset(&cfg, 0, sizeof(cfg));
	cfg.settle_s = 10;
}

static const struct config_token tokens[] = {
	{"slurmTopologyFile", CONFIG_CUSTOM, .parse = parse_topology_file, .help = "PATH"},
	{"slurmTopologyYaml", CONFIG_CUSTOM, .parse = parse_topology_yaml, .help = "PATH"},
	{"slurmReloadCommand", CONFIG_CUSTOM, .parse = parse_reload_command, .help = "COMMAND"},
	{"slurmNodeName", CONFIG_CUSTOM, .parse = parse_node_name, .help = "REGEX"},
	{"slurmNodes", CONFIG_CUSTOM, .parse = parse_nodes, .help = "FILE"},
	{"slurmSettle", CONFIG_UINT, &cfg.settle_s, .min = 1, .max = 3600, .help = "SECONDS"},
};

static bool wanted(void)
{
	return cfg.topology_file[0] != '\0' || cfg.topology_yaml[0] != '\0';
}

const struct area_def slurm_area_def = {
	.name = "Slurm's topology",
	AREA_CONFIG(tokens, cfg, defaults),
	AREA_CACHES(caches),
	.wanted = wanted,
	.enable_token = "slurmTopologyFile",
	.start = start,
	.register_mib = register_handlers,
	.started = started,
	.reload = reload,
	.unregister_mib = unregister_handlers,
	.stop = stop,
};
