/* libFuzzer target: Slurm's tree (slurm_tree_build) over any graph the
 * fabric's cabling and names may make: the first octet says how many nodes
 * (up to 64), each node takes 3 octets (a switch or an adapter, a name
 * drawn from a small set, so that hosts share names and switches collide,
 * and bytes that are no name at all), then each pair of octets a cable,
 * loops and repeats included. Every host is under one switch of level 0 at
 * most, every member is a host or a switch of the tree, and the text
 * renders. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/slurm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct slurm_node nodes[64];
	struct slurm_cable cables[512];
	char names[64][16];
	size_t n, nc = 0, at = 1;
	struct slurm_tree *t;
	char *text;

	if (!size)
		return 0;
	n = data[0] % 65;
	if (size < 1 + 3 * n)
		return 0;
	for (size_t i = 0; i < n; i++, at += 3) {
		const uint8_t *p = data + at;

		nodes[i] = (struct slurm_node){.guid = 0x1000 + i, .is_switch = p[0] & 1};
		if (p[1] == 0xff)
			snprintf(names[i], sizeof(names[i]), "bad name");
		else
			snprintf(names[i], sizeof(names[i]), "%s%u", p[0] & 1 ? "sw" : "h",
				 p[1] % 16);
		if (p[2] & 1) {
			if (nodes[i].is_switch)
				nodes[i].name = names[i];
			else
				nodes[i].host = names[i];
		}
	}
	for (; at + 1 < size && nc < 512; at += 2)
		cables[nc++] = (struct slurm_cable){0x1000 + data[at] % 70, 0x1000 + data[at + 1] % 70};
	t = slurm_tree_build(nodes, n, cables, nc);
	if (!t)
		abort();
	for (size_t i = 0; i < t->n_switches; i++) {
		const struct slurm_switch *s = &t->switches[i];

		if (!s->n || !slurm_name_ok(s->name) || (i && s->level < t->switches[i - 1].level))
			abort();
		for (size_t k = 0; k < s->n; k++) {
			const char *m = t->members[s->first + k];
			size_t seen = 0;

			if (s->level)
				continue;
			for (size_t j = 0; j < t->n_switches; j++)
				for (size_t q = 0; !t->switches[j].level && q < t->switches[j].n; q++)
					seen += !strcmp(t->members[t->switches[j].first + q], m);
			if (seen != 1)
				abort(); /* a host under two switches of level 0 */
		}
	}
	text = slurm_tree_conf(t);
	if (!text)
		abort();
	free(text);
	text = slurm_tree_yaml(t);
	if (!text || !strstr(text, "\n---\n- topology: " SLURM_YAML_TREE "\n"))
		abort();
	free(text);
	slurm_tree_free(t);
	return 0;
}
