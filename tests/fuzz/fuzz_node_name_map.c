/* libFuzzer target: node-name maps (node_name_map_parse), which operators
 * write by hand or by script, and the names made of them
 * (node_names_assign). The first half of the input is the map; the second,
 * 16 octets a node, GUIDs and descriptions to name after it. Every mapped
 * GUID must find its name; every name must be non-empty and unique. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/node_names.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t half = size / 2, n = (size - half) / 16;
	char err[400], descs[64][9];
	struct node_naming items[64];
	struct node_name_map *m = node_name_map_parse((const char *)data, half, "fuzz", err,
						      sizeof(err));
	char *pool;

	if (!m && !strstr(err, "fuzz:"))
		abort(); /* a refusal names the file and line */
	if (n > 64)
		n = 64;
	for (size_t k = 0; k < n; k++) {
		const uint8_t *p = data + half + 16 * k;

		memcpy(&items[k].guid, p, 8);
		/* GUIDs are unique in a subnet: the builder sees each once */
		items[k].guid = (items[k].guid & ~(uint64_t)63) | k;
		memcpy(descs[k], p + 8, 8);
		descs[k][8] = '\0';
		items[k].desc = descs[k];
		items[k].name = NULL;
	}
	pool = node_names_assign(items, n, m);
	if (!pool)
		abort();
	for (size_t i = 0; i < n; i++) {
		if (!items[i].name[0] || strlen(items[i].name) >= NODE_NAME_MAX)
			abort();
		for (size_t j = i + 1; j < n; j++)
			if (!strcmp(items[i].name, items[j].name))
				abort();
	}
	node_name_map_free(m);
	free(pool);
	return 0;
}
