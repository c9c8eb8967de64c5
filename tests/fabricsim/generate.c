/* fabricsim's topologies, generated from a few numbers.
 *
 * Switch ports 1..R/2 go down (hosts or leaves), R/2+1..R up. Names:
 * host-N (one CA port each) or srv-N-hcaK (rail layout: server N's K-th HCA,
 * on rail K), leaf-POD-I, spine-POD-K, core-C; in the rail layout a pod's
 * label is rRAIL.J (the J-th pod of that rail). LIDs from host 1, the SM's
 * node, on (model.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fabricsim.h"

#define RAILS 8

struct pods {
	unsigned count;          /* pods */
	unsigned leaves_per_pod; /* leaves in every pod but perhaps the last */
	unsigned leaves;         /* in all */
	unsigned rails;          /* 0: pods are not rails' */
	unsigned pods_per_rail;
	uint32_t *leaf;          /* leaf number -> node */
};

static void pod_label(const struct pods *t, unsigned pod, char *buf, size_t len)
{
	if (t->rails)
		snprintf(buf, len, "r%u.%u", pod / t->pods_per_rail + 1, pod % t->pods_per_rail + 1);
	else
		snprintf(buf, len, "%u", pod + 1);
}

/* The switches: leaves in pods, R/2 spines per pod over them, and cores over
 * the spines when there is more than one pod. */
static void build_switches(struct fabric *f, unsigned radix, struct pods *t)
{
	unsigned half = radix / 2;
	uint32_t *spine = calloc((size_t)t->count * half, sizeof(uint32_t));
	uint32_t *core = NULL;
	unsigned links_per_pair = 1, group = half;
	char name[64], label[24];

	t->leaf = calloc(t->leaves, sizeof(uint32_t));
	for (unsigned l = 0; l < t->leaves; l++) {
		pod_label(t, l / t->leaves_per_pod, label, sizeof(label));
		snprintf(name, sizeof(name), "leaf-%s-%u", label, l % t->leaves_per_pod + 1);
		t->leaf[l] = fs_add_node(f, FS_SWITCH, (uint8_t)radix, name);
	}
	for (unsigned p = 0; p < t->count; p++)
		for (unsigned k = 0; k < half; k++) {
			pod_label(t, p, label, sizeof(label));
			snprintf(name, sizeof(name), "spine-%s-%u", label, k + 1);
			spine[p * half + k] = fs_add_node(f, FS_SWITCH, (uint8_t)radix, name);
		}
	/* cores in R/2 groups, group k over every pod's spine k; each spine-core
	 * pair joined by c parallel links, c as large as the cores' ports allow
	 * (few pods: few cores) */
	if (t->count > 1) {
		links_per_pair = 1;
		for (unsigned c = half; c >= 1; c--)
			if (half % c == 0 && c * t->count <= radix) {
				links_per_pair = c;
				break;
			}
		group = half / links_per_pair;
		core = calloc((size_t)half * group, sizeof(uint32_t));
		for (unsigned c = 0; c < half * group; c++) {
			snprintf(name, sizeof(name), "core-%u", c + 1);
			core[c] = fs_add_node(f, FS_SWITCH, (uint8_t)radix, name);
		}
	}
	for (unsigned l = 0; l < t->leaves; l++) {
		unsigned p = l / t->leaves_per_pod, i = l % t->leaves_per_pod;

		for (unsigned k = 0; k < half; k++)
			fs_cable(f, t->leaf[l], (uint8_t)(half + 1 + k), spine[p * half + k],
				 (uint8_t)(i + 1));
	}
	for (unsigned p = 0; core && p < t->count; p++)
		for (unsigned k = 0; k < half; k++)
			for (unsigned m = 0; m < half; m++)
				fs_cable(f, spine[p * half + k], (uint8_t)(half + 1 + m),
					 core[k * group + m / links_per_pair],
					 (uint8_t)(p * links_per_pair + m % links_per_pair + 1));
	free(spine);
	free(core);
}

int fs_generate(struct fabric *f, enum fs_layout layout, unsigned radix, unsigned hosts,
		char *err, size_t errlen)
{
	unsigned half = radix / 2, endpoints, per_host = layout == FS_RAIL ? RAILS : 1;
	struct pods t = {0};
	uint32_t *ca;
	char name[64];

	if (radix < 4 || radix > 254 || radix % 2) {
		snprintf(err, errlen, "radix %u: give an even number from 4 to 254", radix);
		return -1;
	}
	if (hosts == 0) {
		snprintf(err, errlen, "no hosts");
		return -1;
	}
	endpoints = hosts * per_host;
	if (layout == FS_FATTREE2) {
		t.count = 1;
		t.leaves = t.leaves_per_pod = (hosts + half - 1) / half;
		if (t.leaves > radix) {
			snprintf(err, errlen, "a two-level tree of radix %u holds %u hosts at most",
				 radix, radix * half);
			return -1;
		}
	} else if (layout == FS_FATTREE3) {
		t.leaves_per_pod = half;
		t.leaves = (hosts + half - 1) / half;
		t.count = (t.leaves + half - 1) / half;
	} else {
		unsigned per_rail = (hosts + half - 1) / half;

		t.rails = RAILS;
		t.pods_per_rail = (per_rail + half - 1) / half;
		/* a rail's leaves start a pod; a small rail is one pod of its own */
		t.leaves_per_pod = t.pods_per_rail == 1 ? per_rail : half;
		t.count = RAILS * t.pods_per_rail;
		t.leaves = t.count * t.leaves_per_pod;
	}
	if (t.count > radix) {
		snprintf(err, errlen, "%u pods: more than the %u ports of a core switch", t.count,
			 radix);
		return -1;
	}
	{
		unsigned switches = t.leaves + t.count * half + (t.count > 1 ? half * half : 0);
		/* (at most: build_switches may need fewer cores) */

		if ((unsigned long)endpoints + switches > FS_MAX_LID) {
			snprintf(err, errlen, "%u endpoints and %u switches: more LIDs than a subnet's "
				 "%u", endpoints, switches, FS_MAX_LID);
			return -1;
		}
	}
	/* hosts first: host 1 is node 0, the SM's node, LID 1 */
	ca = calloc(endpoints, sizeof(uint32_t));
	for (unsigned h = 0; h < hosts; h++)
		for (unsigned k = 0; k < per_host; k++) {
			uint32_t id;

			if (layout == FS_RAIL)
				snprintf(name, sizeof(name), "srv-%u-hca%u", h + 1, k + 1);
			else
				snprintf(name, sizeof(name), "host-%u", h + 1);
			id = fs_add_node(f, FS_CA, 1, name);
			ca[h * per_host + k] = id;
			/* one server: one system image, its first HCA's GUID */
			f->nodes[id].sys_guid = f->nodes[ca[h * per_host]].guid;
		}
	build_switches(f, radix, &t);
	for (unsigned h = 0; h < hosts; h++)
		for (unsigned k = 0; k < per_host; k++) {
			unsigned leaf = layout == FS_RAIL ?
				k * t.pods_per_rail * t.leaves_per_pod + h / half : h / half;

			fs_cable(f, ca[h * per_host + k], 1, t.leaf[leaf], (uint8_t)(h % half + 1));
		}
	free(ca);
	free(t.leaf);
	f->sm_node = 0;
	fs_finish(f);
	return 0;
}

/* A switch model's factory NodeDescription, by the fabric's speed (what
 * unmanaged NVIDIA switches of each generation say; XDR's is a guess in
 * the same style). */
static const char *switch_model_desc(unsigned speed)
{
	switch (speed) {
	case FS_XDR: return "Quantum-3 Mellanox Technologies";
	case FS_NDR: return "Quantum-2 Mellanox Technologies";
	case FS_HDR: return "Quantum Mellanox Technologies";
	case FS_EDR: return "SwitchIB Mellanox Technologies";
	default: return "SwitchX -  Mellanox Technologies";
	}
}

void fs_real_names(struct fabric *f)
{
	char buf[128];

	for (uint32_t i = 0; i < f->nnodes; i++) {
		struct fs_node *n = &f->nodes[i];
		unsigned a, b;

		free(n->desc);
		if (n->type == FS_SWITCH && !strncmp(n->name, "core-", 5))
			/* a managed switch, its hostname set by an operator */
			snprintf(buf, sizeof(buf), "MF0;%s:MQM9700/U1", n->name);
		else if (n->type == FS_SWITCH)
			snprintf(buf, sizeof(buf), "%s", switch_model_desc(f->default_speed));
		else if (sscanf(n->name, "srv-%u-hca%u", &a, &b) == 2 && b >= 1)
			snprintf(buf, sizeof(buf), "srv-%u mlx5_%u", a, b - 1);
		else
			snprintf(buf, sizeof(buf), "%s mlx5_0", n->name);
		n->desc = strdup(buf);
	}
}
