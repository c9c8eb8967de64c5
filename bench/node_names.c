/* bench-node-names: what naming the nodes costs a discovery (node_names.c).
 *
 * Writes the discovery output of a fabric of HOSTS adapters ("srv-N mlx5_K",
 * eight a server) and one switch for every 12 of them, all with one
 * factory description, parses it naming the nodes after a node-name map of
 * MAPPED switches (topology_parse, what a discovery's end does), then names
 * them again alone (topology_name_nodes): the medians of five, and naming's
 * share of the whole.
 *
 *   bench-node-names [HOSTS [MAPPED]]     (default 40000 2000) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ibsnmpd/node_names.h"
#include "ibsnmpd/topology.h"

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

int main(int argc, char **argv)
{
	unsigned hosts = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 0) : 40000;
	unsigned switches = hosts / 12 + 1, mapped = argc > 2 ? (unsigned)strtoul(argv[2], NULL, 0)
							      : 2000;
	size_t cap = (size_t)(hosts + switches) * 200 + 64, len = 0, map_len = 0;
	char *text = malloc(cap), *map = malloc((size_t)mapped * 48 + 1), err[200];
	double parse[5], name[5];
	struct node_name_map *m;

	if (!text || !map)
		return 1;
	for (unsigned k = 0; k < switches; k++)
		len += (size_t)sprintf(text + len, "port %016llx 1 %u\nnode %016llx 2 64 %u "
				       "Quantum-2 Mellanox Technologies\n",
				       0xb83fd20300000000ULL + k, k + 1, 0xb83fd20300000000ULL + k, k + 1);
	for (unsigned k = 0; k < hosts; k++)
		len += (size_t)sprintf(text + len, "port %016llx 1 %u\nnode %016llx 1 1 %u "
				       "srv-%u mlx5_%u\n", 0x1070fd0300000000ULL + k,
				       switches + k + 1, 0x1070fd0300000000ULL + k, switches + k + 1,
				       k / 8 + 1, k % 8);
	len += (size_t)sprintf(text + len, "done 1.0\n");
	for (unsigned k = 0; k < mapped && k < switches; k++)
		map_len += (size_t)sprintf(map + map_len, "0x%016llx \"leaf-%u\"\n",
					   0xb83fd20300000000ULL + k, k + 1);
	if (!(m = node_name_map_parse(map, map_len, "map", err, sizeof(err)))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	for (int r = 0; r < 5; r++) {
		double t0 = now(), t1, t2;
		struct topology *f = topology_parse(text, len, m, err, sizeof(err));

		t1 = now();
		if (!f || topology_name_nodes(f, m)) {
			fprintf(stderr, "bench-node-names: %s\n", f ? "out of memory" : err);
			return 1;
		}
		t2 = now();
		parse[r] = t1 - t0;
		name[r] = t2 - t1;
		topology_free(f);
	}
	qsort(parse, 5, sizeof(double), cmp);
	qsort(name, 5, sizeof(double), cmp);
	printf("%u nodes (%u switches of one description, %u of them mapped)\n", hosts + switches,
	       switches, mapped < switches ? mapped : switches);
	printf("discovery output parsed, nodes named after the map: %.1f ms (median of 5)\n",
	       parse[2] * 1e3);
	printf("the naming alone:                                  %.1f ms (median of 5)\n",
	       name[2] * 1e3);
	printf("naming / the whole: %.2f\n", name[2] / parse[2]);
	node_name_map_free(m);
	free(text);
	free(map);
	return 0;
}
