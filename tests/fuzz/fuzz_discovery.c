/* libFuzzer target: what the discovery helper prints (topology_parse): the
 * helper is ours, but a crash or a corrupt pipe must not reach the daemon.
 * A fabric that parses is checked for what its users rely on. */
#include <stdint.h>
#include <stdlib.h>

#include "ibsnmpd/pm_attr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[160];
	struct topology *f = topology_parse((const char *)data, size, NULL, err, sizeof(err));

	if (!f)
		return 0;
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
	topology_free(f);
	return 0;
}
