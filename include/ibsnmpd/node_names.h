/* The names ibsnmpd serves for nodes (src/base/node_names.c, pure).
 *
 * A node's name is its entry in the node-name map (the ib-node-name-map file
 * infiniband-diags and opensm read: a node GUID and a quoted name a line),
 * else its NodeDescription as those tools print it (bytes that are not
 * printable shown as spaces). Names are made unique over the subnet: when
 * several nodes would share one (switches of a model keep their factory
 * description), each of them gets the last three octets of its GUID after
 * it, "DESCRIPTION [a1b2c3]", or the whole GUID where those collide too; a
 * node with neither a map entry nor a description is named by its GUID
 * ("0x0002c90300a1b2c3"). A single mapped node keeps its mapped name when an
 * unmapped one's description collides with it. The GUID stays every row's
 * identity; the name is what people read. */
#ifndef IBSNMPD_NODE_NAMES_H
#define IBSNMPD_NODE_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* The longest line infiniband-diags reads from a map (its fgets buffer). */
#define NODE_NAME_MAP_LINE_MAX 255
/* The longest name, with its NUL: a map's name and " [0x" GUID "]". */
#define NODE_NAME_MAX 288

struct node_name_map;

/* Parses a map's text the way infiniband-diags' reader does: blank lines and
 * lines starting with '#' skipped; a GUID (0x hexadecimal, or decimal)
 * followed by white space, '#' or the end; then the name, the first run of
 * characters between '"' and '#' ("name", or name # comment). A line with no
 * name maps nothing; of two lines for a GUID the first counts. A line that
 * is not that is refused with the whole file, as those tools refuse it: NULL
 * and "FILE:LINE: why" in err. An empty map is a map. */
struct node_name_map *node_name_map_parse(const char *text, size_t len, const char *file,
					  char *err, size_t errlen);
void node_name_map_free(struct node_name_map *m);
/* The mapped name of guid, or NULL. */
const char *node_name_map_find(const struct node_name_map *m, uint64_t guid);
size_t node_name_map_count(const struct node_name_map *m);
/* 1 when both map the same GUIDs to the same names (NULL: no map). */
int node_name_map_same(const struct node_name_map *a, const struct node_name_map *b);

/* One node to name: in, its GUID and NodeDescription; out, its name. */
struct node_naming {
	uint64_t guid;
	const char *desc;
	const char *name; /* set by node_names_assign, into the pool it returns */
};

/* Names every item (m may be NULL: no map); returns the pool the names are
 * in (free it when done with them), NULL when out of memory. */
char *node_names_assign(struct node_naming *items, size_t n, const struct node_name_map *m);

#endif
