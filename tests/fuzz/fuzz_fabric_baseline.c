/* libFuzzer target: the fabric baseline's state file (fabric_baseline_parse),
 * which anything with write access to it may change. What parses is written
 * again and parsed again: the same links must come back; and it must serve
 * as the previous snapshot of a sweep that read nothing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/fabric.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same_links(const struct fabric_snapshot *a, const struct fabric_snapshot *b)
{
	if (a->n != b->n)
		abort();
	for (size_t i = 0; i < a->n; i++) {
		const struct fabric_port *p = &a->ports[i], *q = &b->ports[i];

		if (p->guid != q->guid || p->port != q->port || p->base_lanes != q->base_lanes ||
		    p->base_speed != q->base_speed || p->reported != q->reported ||
		    p->remote_guid != q->remote_guid || p->remote_port != q->remote_port ||
		    p->node_type != q->node_type || strcmp(p->node_desc, q->node_desc) ||
		    strcmp(p->remote_desc, q->remote_desc))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[200], *text;
	size_t len;
	struct fabric_snapshot *s = fabric_baseline_parse((const char *)data, size, err,
							  sizeof(err)), *again, *built;
	struct fabric_build in = {0};

	if (!s)
		return 0;
	text = fabric_baseline_format(s, &len);
	if (!text)
		abort();
	again = fabric_baseline_parse(text, len, err, sizeof(err));
	if (!again)
		abort();
	same_links(s, again);
	in.prev = s;
	in.now = 1;
	built = fabric_build(&in); /* no discovery: the links are kept, gone */
	if (!built || built->n != s->n)
		abort();
	fabric_snapshot_free(built);
	fabric_snapshot_free(again);
	fabric_snapshot_free(s);
	free(text);
	return 0;
}
