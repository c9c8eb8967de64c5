/* Slurm's view of the fabric (src/slurm/): the tree its topology/tree
 * plugin reads from topology.conf, built from the fabric as cabled.
 *
 *   slurm_hostlist.c   pure: Slurm's hostlists (bracket notation) read and
 *                      written, and the hosts a slurm.conf or a list names
 *   slurm_tree.c       pure: the tree (leaves with their hosts, the tiers
 *                      above) from the nodes and cables, and its text
 *                      (topology.conf, topology.yaml)
 *   slurm_area.c       the area: the tree of the link table's baseline,
 *                      built off the loop, written when it changes
 *
 * Written by hand: Slurm's own hostlist code is in libslurm, which Debian
 * ships only inside slurmctld's private library, and no other library
 * reads or writes the notation. */
#ifndef IBSNMPD_SLURM_H
#define IBSNMPD_SLURM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct area_def;
/* The area (slurm_area.c): slurmTopologyFile and its tokens. */
extern const struct area_def slurm_area_def;
/* The topology.conf (yaml false) or topology.yaml last built (what the
 * files hold), a copy to free; NULL when none is yet, or area is NULL (no
 * slurmTopologyFile or slurmTopologyYaml). Main thread. */
char *slurm_topology_text(void *area, bool yaml);

/* The most names one hostlist may expand to: a slurm.conf names at most a
 * few hundred thousand hosts; more is a mistake, not a cluster. */
#define SLURM_HOSTLIST_MAX 1000000u

/* Whether name can stand in a hostlist and a topology.conf line as it is:
 * not empty, at most 255 bytes, printable, none of the characters the
 * notation or the file's syntax use (white space , [ ] = # " '). */
bool slurm_name_ok(const char *name);

/* Expands expr (len bytes; "h[1-3,07-09],x1", several brackets in one item
 * multiply) into names, calling add(arg, name) for each in order; add
 * returning nonzero stops with that value. 0 when whole; -1 and the reason
 * in err when malformed (nothing about what was added before it is
 * undone: the caller drops what it built). Pure; unit-tested, fuzzed. */
int slurm_hostlist_expand(const char *expr, size_t len, int (*add)(void *arg, const char *name),
			  void *arg, char *err, size_t errlen);

/* names[0..n) as one hostlist, ranged ("h[1-16,20],x1"), sorted, without
 * duplicates; a malloc'd string ("" for none), NULL when out of memory. */
char *slurm_hostlist_compress(const char *const *names, size_t n);

/* The hosts Slurm knows, sorted, from a slurm.conf (its NodeName= lines,
 * DEFAULT skipped) or from a list (hostlists separated by white space or
 * commas, '#' to the end of a line a comment). A file with a NodeName= line
 * is read as a slurm.conf. NULL and "FILE:LINE: why" in err when a line is
 * not that. Pure; unit-tested, fuzzed. */
struct slurm_hosts;
struct slurm_hosts *slurm_hosts_parse(const char *text, size_t len, const char *file, char *err,
				      size_t errlen);
void slurm_hosts_free(struct slurm_hosts *h);
size_t slurm_hosts_count(const struct slurm_hosts *h);
bool slurm_hosts_has(const struct slurm_hosts *h, const char *name);
/* The i-th host, in order; NULL past the last. */
const char *slurm_hosts_name(const struct slurm_hosts *h, size_t i);

/* ---- the tree (slurm_tree.c) ---- */

/* A node of the fabric: a switch, or an adapter with the host it is in
 * (host NULL: not a host Slurm schedules, as a router or an adapter left
 * out). Switch names that are not slurm_name_ok are replaced by one made
 * from the GUID ("ib-0002c90300a1b2c3"). */
struct slurm_node {
	uint64_t guid;
	bool is_switch;
	const char *name; /* a switch's name (its node-name map entry), or NULL */
	const char *host; /* an adapter's host name, or NULL */
};

/* A cable between two nodes (either order; repeated cables, cables to
 * nodes not listed and a node's cable to itself count for nothing). */
struct slurm_cable {
	uint64_t a, b;
};

struct slurm_switch {
	const char *name;   /* in the tree's pool */
	unsigned level;     /* 0: hosts under it (Nodes=); 1..: switches (Switches=) */
	uint64_t guid;      /* 0: the hosts cabled to the same several leaves */
	size_t first, n;    /* its members: members[first .. first + n), sorted */
};

struct slurm_tree {
	struct slurm_switch *switches; /* by level, then name */
	size_t n_switches;
	const char **members;          /* host names (level 0) or switch names */
	size_t n_members;
	size_t hosts;                  /* hosts in the tree */
	size_t hosts_bad_name;         /* adapters' host names not slurm_name_ok: left out */
	size_t hosts_uncabled;         /* hosts cabled to no switch: left out */
	struct slurm_arena *arena;     /* the names */
};

/* The tree of nodes[0..n_nodes) as cables[0..n_cables) join them: the
 * switches hosts are cabled to (level 0) with their hosts; hosts cabled to
 * several switches (a rail-optimized fabric, one adapter per rail) grouped
 * by the set of switches they share, each group a switch of level 0 of its
 * own ("LEAF+N", N the group's other leaves) above which stand those
 * switches' parents; then each tier above, a switch's members those of the
 * tier below it is cabled to, up to the first tier with a switch that
 * reaches every leaf. NULL when out of memory. Pure; unit-tested. */
struct slurm_tree *slurm_tree_build(const struct slurm_node *nodes, size_t n_nodes,
				    const struct slurm_cable *cables, size_t n_cables);
void slurm_tree_free(struct slurm_tree *t);

/* The tree as topology.conf: a comment, then a line a switch, leaves first.
 * The same tree gives the same text byte for byte. NULL out of memory. */
char *slurm_tree_conf(const struct slurm_tree *t);

/* The names of the topologies in topology.yaml, for a partition's
 * Topology= in slurm.conf. */
#define SLURM_YAML_TREE "infiniband"
#define SLURM_YAML_BLOCKS "infiniband-units"

/* The tree as topology.yaml (Slurm 25.05 and later): the same tree as
 * topology.conf, named SLURM_YAML_TREE and the cluster's default; when
 * hosts are cabled to several leaves (a rail-optimized fabric), a second
 * topology, SLURM_YAML_BLOCKS, with each level-0 switch's hosts a block
 * (topology/block; Slurm chooses the block sizes). The same tree gives the
 * same text byte for byte. NULL out of memory. */
char *slurm_tree_yaml(const struct slurm_tree *t);

#endif
