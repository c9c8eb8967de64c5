/* bench-route-checks: what the routing checks (route_check) cost on a big
 * fat tree, without the read that feeds them (nine minutes of SMPs at
 * 40,000 hosts through fabricsim).
 *
 * fabricsim's own generator (tests/fabricsim) makes its radix-R NDR fat
 * tree of HOSTS hosts, as `simfabric up --big HOSTS` does; the topology is
 * written as the discovery helper writes it and parsed (topology_parse),
 * and every switch's table is filled with what fabricsim answers an SMP
 * SubnGet(LinearForwardingTable) (its rule, per target switch once, and a
 * sample asked of fabricsim itself: fs_route_port). Then
 * route_check runs RUNS times (a share of the destinations per CPU): the
 * median and the fastest, then once on one thread; the findings' summary,
 * and the memory: the tables (blocks alike kept once), and the resident
 * peak the checks add, against the aims (2 s and 100 MB more at
 * 40,000 hosts).
 *
 *   bench-route-checks [HOSTS [RUNS [RADIX]]]     (default 40000 5 64) */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <time.h>

#include "ibsnmpd/route.h"
#include "ibsnmpd/topology.h"
#include "../tests/fabricsim/fabricsim.h"

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* VmRSS or VmHWM of /proc/self/status, kB */
static long status_kb(const char *field)
{
	char line[256];
	long kb = -1;
	size_t n = strlen(field);
	FILE *st = fopen("/proc/self/status", "r");

	while (st && fgets(line, sizeof(line), st))
		if (!strncmp(line, field, n) && line[n] == ':')
			kb = strtol(line + n + 1, NULL, 10);
	if (st)
		fclose(st);
	return kb;
}

/* What route_check adds to the resident memory at its peak: run once in a
 * child, whose high-water mark starts at what it shares with us. */
static double check_peak_mb(const struct topology *topo, const struct route_tables *t)
{
	int fds[2], status;
	double mb = -1;
	pid_t pid;

	if (pipe(fds))
		return -1;
	pid = fork();
	if (pid == 0) {
		struct route_findings r;
		long start = status_kb("VmRSS");
		double add;

		if (route_check(topo, t, &r))
			_exit(1);
		add = (double)(status_kb("VmHWM") - start) / 1024.0;
		if (write(fds[1], &add, sizeof(add)) != sizeof(add))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (pid > 0 && read(fds[0], &mb, sizeof(mb)) != sizeof(mb))
		mb = -1;
	close(fds[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	return mb;
}

/* The fabric as ibsnmpd-discover prints it ("node" and "port" lines). */
static char *discovery_text(struct fabric *f, size_t *len)
{
	size_t cap = (size_t)f->nnodes * 120 + (size_t)f->nports * 90 + 64, n = 0;
	char *text = malloc(cap);

	if (!text)
		return NULL;
	for (uint32_t i = 0; i < f->nnodes; i++) {
		const struct fs_node *nd = &f->nodes[i];

		n += (size_t)snprintf(text + n, cap - n, "node %016llx %d %u %u %s\n",
				      (unsigned long long)nd->guid, nd->type == FS_SWITCH ? 2 : 1,
				      nd->nports, nd->lid, nd->name);
		for (unsigned p = 1; p <= nd->nports; p++) {
			const struct fs_port *pt = &f->ports[nd->first_port + p];
			unsigned lid = nd->type == FS_SWITCH ? nd->lid : pt->lid;

			if (p && pt->up && pt->peer != FS_NO_PORT) {
				uint32_t peer = fs_node_of_port(f, pt->peer);

				n += (size_t)snprintf(text + n, cap - n,
						      "port %016llx %u %u %016llx %016llx %u\n",
						      (unsigned long long)nd->guid, p, lid,
						      (unsigned long long)fs_port_guid(f, i, (uint8_t)p),
						      (unsigned long long)f->nodes[peer].guid,
						      f->ports[pt->peer].num);
			} else {
				n += (size_t)snprintf(text + n, cap - n, "port %016llx %u %u %016llx\n",
						      (unsigned long long)nd->guid, p, lid,
						      (unsigned long long)fs_port_guid(f, i, (uint8_t)p));
			}
		}
	}
	n += (size_t)snprintf(text + n, cap - n, "done 1.0\n");
	*len = n;
	return text;
}

/* Every switch's table as fabricsim answers it (fs_sm_route_port's rule:
 * 0 for the switch's own LID, the CA's port on its leaf, else among the
 * ports toward a switch one hop nearer the target switch the one at
 * LID % their number), computed per target switch by one BFS rather than
 * per entry: 1.5e8 entries at 40,000 hosts. A sample of the entries is
 * asked of fabricsim itself (fs_route_port) and must agree. */
static int fill_tables(struct fabric *f, const struct topology *topo, struct route_tables *t)
{
	size_t S = t->n_switches;
	uint32_t *target = malloc(((size_t)t->max_lid + 1) * sizeof(*target));
	uint32_t *node_of = malloc(S * sizeof(*node_of)), *sw_of = malloc(f->nnodes * sizeof(*sw_of));
	uint32_t *dist = malloc(S * sizeof(*dist)), *queue = malloc(S * sizeof(*queue));
	uint8_t *cand = malloc(S * 64), *nc = malloc(S);
	uint32_t *peer = malloc(S * 256 * sizeof(*peer)); /* (switch, port): the switch there */
	uint8_t *flat = malloc(((size_t)t->max_lid + 1) * S); /* lid-major, the bench's own */
	unsigned long long asked = 0;
	int rc = -1;

	if (!target || !node_of || !sw_of || !dist || !queue || !cand || !nc || !peer || !flat)
		goto out;
	for (uint32_t i = 0; i < f->nnodes; i++)
		sw_of[i] = UINT32_MAX;
	for (size_t s = 0; s < S; s++) {
		uint64_t guid = topo->nodes[t->switch_node[s]].guid;

		node_of[s] = UINT32_MAX;
		for (uint32_t i = 0; i < f->nnodes; i++)
			if (f->nodes[i].guid == guid)
				node_of[s] = i;
		if (node_of[s] == UINT32_MAX)
			goto out;
		sw_of[node_of[s]] = (uint32_t)s;
		t->read[s] = true;
	}
	for (size_t s = 0; s < S; s++) {
		const struct fs_node *nd = &f->nodes[node_of[s]];

		for (unsigned p = 0; p < 256; p++) {
			const struct fs_port *pt = p && p <= nd->nports ? &f->ports[nd->first_port + p]
									: NULL;

			peer[s * 256 + p] = pt && pt->up && pt->peer != FS_NO_PORT
						    ? sw_of[fs_node_of_port(f, pt->peer)] : UINT32_MAX;
		}
	}
	/* a LID's target switch: its own, or the one a CA is cabled to */
	for (unsigned lid = 0; lid <= t->max_lid; lid++) {
		uint32_t port = lid && lid <= f->max_lid ? f->lid_port[lid] : UINT32_MAX, node;

		target[lid] = UINT32_MAX;
		if (port == UINT32_MAX)
			continue;
		node = fs_node_of_port(f, port);
		if (f->nodes[node].type != FS_SWITCH)
			node = f->ports[port].up && f->ports[port].peer != FS_NO_PORT
				       ? fs_node_of_port(f, f->ports[port].peer) : UINT32_MAX;
		target[lid] = node == UINT32_MAX ? UINT32_MAX : sw_of[node];
	}
	for (size_t T = 0; T < S; T++) {
		size_t head = 0, tail = 0;

		for (size_t s = 0; s < S; s++)
			dist[s] = UINT32_MAX;
		dist[T] = 0;
		queue[tail++] = (uint32_t)T;
		while (head < tail) {
			uint32_t from = queue[head++];

			for (unsigned p = 1; p <= f->nodes[node_of[from]].nports; p++) {
				uint32_t y = peer[(size_t)from * 256 + p];

				if (y != UINT32_MAX && dist[y] == UINT32_MAX) {
					dist[y] = dist[from] + 1;
					queue[tail++] = y;
				}
			}
		}
		for (size_t s = 0; s < S; s++) {
			nc[s] = 0;
			if (dist[s] == UINT32_MAX)
				continue;
			for (unsigned p = 1; p <= f->nodes[node_of[s]].nports && nc[s] < 64; p++) {
				uint32_t y = peer[s * 256 + p];

				if (y != UINT32_MAX && dist[y] + 1 == dist[s])
					cand[s * 64 + nc[s]++] = (uint8_t)p;
			}
		}
		for (unsigned lid = 0; lid <= t->max_lid; lid++) {
			uint32_t port = lid && lid <= f->max_lid ? f->lid_port[lid] : UINT32_MAX;
			bool ca;

			if (target[lid] != T)
				continue;
			ca = f->nodes[fs_node_of_port(f, port)].type != FS_SWITCH;
			for (size_t s = 0; s < S; s++) {
				uint8_t e = s == T ? (ca ? f->ports[f->ports[port].peer].num : 0)
					    : nc[s] ? cand[s * 64 + lid % nc[s]] : 255;

				flat[(size_t)lid * S + s] = e;
			}
		}
	}
	for (unsigned lid = 0; lid <= t->max_lid; lid++)
		if (target[lid] == UINT32_MAX)
			for (size_t s = 0; s < S; s++)
				flat[(size_t)lid * S + s] = 255;
	/* into the tables, a block at a time, as the SMPs would */
	for (unsigned b = 0; b <= t->max_lid / 64; b++)
		for (size_t s = 0; s < S; s++) {
			uint8_t e[64];

			for (unsigned i = 0; i < 64; i++)
				e[i] = b * 64 + i <= t->max_lid ? flat[(size_t)(b * 64 + i) * S + s] : 255;
			if (route_tables_put_block(t, s, b, e))
				goto out;
		}
	/* fabricsim's own answer, for one entry in 9973 */
	for (size_t k = 0; k < (size_t)(t->max_lid + 1) * S; k += 9973, asked++) {
		unsigned lid = (unsigned)(k / S);
		size_t s = k % S;
		int want = lid ? fs_route_port(f, node_of[s], (uint16_t)lid) : 255;

		if (want != route_entry(t, lid, s)) {
			fprintf(stderr, "bench-route-checks: switch %s, LID %u: fabricsim says port %d, "
				"the bench %u\n", f->nodes[node_of[s]].name, lid, want, route_entry(t, lid, s));
			goto out;
		}
	}
	printf("tables: %llu entries asked of fabricsim (one in 9973), every one the same\n", asked);
	rc = 0;
out:
	free(target);
	free(node_of);
	free(sw_of);
	free(dist);
	free(queue);
	free(cand);
	free(nc);
	free(peer);
	free(flat);
	return rc;
}

int main(int argc, char **argv)
{
	unsigned hosts = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 0) : 40000;
	unsigned runs = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0) : 5;
	unsigned radix = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 0) : 64;
	struct fabric f;
	struct topology *topo;
	struct route_tables t;
	struct route_findings r, one;
	char err[200], *text;
	size_t len;
	double *took, t0, peak_mb, one_s, tables_mb;

	if (!runs || !(took = calloc(runs, sizeof(*took))))
		return 2;
	memset(&f, 0, sizeof(f));
	t0 = now();
	if (fs_generate(&f, FS_FATTREE3, radix, hosts, err, sizeof(err))) {
		fprintf(stderr, "bench-route-checks: %s\n", err);
		return 2;
	}
	if (!(text = discovery_text(&f, &len)) ||
	    !(topo = topology_parse(text, len, NULL, err, sizeof(err)))) {
		fprintf(stderr, "bench-route-checks: the discovery's text: %s\n", text ? err : "memory");
		return 2;
	}
	free(text);
	if (route_tables_init(&t, topo, route_max_lid(topo)) || fill_tables(&f, topo, &t)) {
		fprintf(stderr, "bench-route-checks: out of memory\n");
		return 2;
	}
	printf("fabric: fabricsim fat tree, %u hosts, radix %u: %zu nodes, %zu switches, LIDs "
	       "1-%u (made and routed in %.1f s)\n",
	       hosts, radix, topo->n_nodes, t.n_switches, t.max_lid, now() - t0);
	for (unsigned k = 0; k < runs; k++) {
		double s = now();

		if (route_check(topo, &t, &r)) {
			fprintf(stderr, "bench-route-checks: route_check: out of memory\n");
			return 2;
		}
		took[k] = now() - s;
		if (k + 1 < runs)
			route_findings_free(&r);
	}
	qsort(took, runs, sizeof(*took), cmp);
	t0 = now();
	if (route_check_shares(topo, &t, &one, 1)) {
		fprintf(stderr, "bench-route-checks: route_check: out of memory\n");
		return 2;
	}
	one_s = now() - t0;
	route_findings_free(&one);
	printf("checks: %s; %llu CA pairs, %llu reached; offenders:",
	       r.checks[ROUTE_CHECK_REACH].status == ROUTE_STATUS_PASSED ? "reachability passed"
									 : "reachability NOT passed",
	       (unsigned long long)r.ca_pairs, (unsigned long long)r.pairs_reached);
	for (unsigned c = 1; c <= ROUTE_ROUTING_CHECKS; c++)
		printf(" %s %llu", route_check_name(c), (unsigned long long)r.checks[c].offenders);
	printf("\n");
	printf("route_check (%u runs, %ld CPUs): median %.3f s, fastest %.3f s; aim 2 s: ratio "
	       "%.2f; on one thread (route_check_shares 1, once) %.3f s\n", runs,
	       sysconf(_SC_NPROCESSORS_ONLN), took[runs / 2], took[0], took[runs / 2] / 2.0, one_s);
	peak_mb = check_peak_mb(topo, &t);
	route_tables_compact(&t); /* as a read leaves them, the index by content dropped */
	tables_mb = (double)route_tables_bytes(&t) / 1048576.0;
	printf("memory: the tables %.1f MB (%zu switches x %u LIDs: %zu blocks of 64 entries, "
	       "%u unlike; an octet an entry would be %.1f MB), the checks' peak beyond them "
	       "%.1f MB; together %.1f MB, aim 100 MB: ratio %.2f\n",
	       tables_mb, t.n_switches, t.max_lid + 1, (size_t)(t.max_lid / 64 + 1) * t.n_switches,
	       t.n_blocks, (double)t.n_switches * (t.max_lid + 1) / 1048576.0, peak_mb,
	       tables_mb + peak_mb, (tables_mb + peak_mb) / 100.0);
	route_findings_free(&r);
	route_tables_free(&t);
	topology_put(topo);
	free(took);
	return 0;
}
