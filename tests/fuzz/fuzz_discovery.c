/* libFuzzer target: what the discovery helper prints (topology_parse): the
 * helper is ours, but a crash or a corrupt pipe must not reach the daemon.
 * A fabric that parses is checked for what its users rely on; so is what
 * topology_keep_unanswered makes of it, taken for the discovery after the
 * fabric of the input's first half (the nodes it did not find kept). */
#include <stdint.h>
#include <stdlib.h>

#include "ibsnmpd/pm_attr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const struct topology *f);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[160];
	struct topology *f = topology_parse((const char *)data, size, NULL, err, sizeof(err));
	struct topology *before = topology_parse((const char *)data, size / 2, NULL, err,
						 sizeof(err));

	if (f)
		check(f);
	if (f && before) {
		size_t kept;

		f = topology_keep_unanswered(before, f, &kept);
		check(f);
	}
	topology_free(before);
	topology_free(f);
	return 0;
}

static void check(const struct topology *f)
{
	for (size_t i = 0; i < f->n_nodes; i++) {
		if (i && f->nodes[i - 1].guid >= f->nodes[i].guid)
			abort(); /* sorted, each node once */
		if (topology_node(f, f->nodes[i].guid) != &f->nodes[i])
			abort();
	}
	for (size_t i = 0; i < f->n_ports; i++) {
		const struct topo_port *p = &f->ports[i];

		if (p->node >= f->n_nodes || p->port < 1 || p->port > 254 || !p->lid)
			abort();
		if (i && f->nodes[f->ports[i - 1].node].guid == f->nodes[p->node].guid &&
		    f->ports[i - 1].port >= p->port)
			abort();
	}
}
