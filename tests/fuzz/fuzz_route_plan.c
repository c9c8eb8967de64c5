/* libFuzzer target: the expected cabling (route_plan_parse) over any text,
 * then the cabling check of what it takes against a small subnet (a
 * switch and three adapters, as ibsim's switch-3ca.net). What comes back is
 * checked for what the check relies on: nodes and ports sorted, unique. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/route.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char subnet[] =
	"port 0000000000200000 1 1 0000000000200000 0000000000100000 1 1\n"
	"port 0000000000200000 2 1 0000000000200000 0000000000100002 1 1\n"
	"port 0000000000200000 3 1 0000000000200000 0000000000100004 1 1\n"
	"node 0000000000200000 2 8 1 sw1\n"
	"port 0000000000100000 1 2 0000000000100001 0000000000200000 1 1\n"
	"node 0000000000100000 1 1 2 hca1\n"
	"port 0000000000100002 1 3 0000000000100003 0000000000200000 2 1\n"
	"node 0000000000100002 1 1 3 hca2\n"
	"port 0000000000100004 1 4 0000000000100005 0000000000200000 3 1\n"
	"node 0000000000100004 1 2 4 hca3\n"
	"done 0.01\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[200];
	struct route_plan *p = route_plan_parse((const char *)data, size, err, sizeof(err));
	static struct topology *f;
	struct route_subnet_input in = {.stuck_s = 20, .stall_s = 60};
	struct route_findings r;

	if (!p) {
		if (!memchr(err, 0, sizeof(err)) || !err[0])
			abort();
		return 0;
	}
	for (size_t i = 1; i < p->n_nodes; i++)
		if (route_plan_node_cmp(&p->nodes[i - 1], &p->nodes[i]) >= 0)
			abort();
	for (size_t i = 1; i < p->n_ports; i++)
		if (route_plan_port_cmp(&p->ports[i - 1], &p->ports[i]) >= 0)
			abort();
	if (!f && (f = topology_parse(subnet, strlen(subnet), NULL, err, sizeof(err))))
		topology_get(f); /* kept for every input */
	in.plan = p;
	if (f && route_subnet_check(f, &in, &r) == 0) {
		for (size_t i = 0; i < r.n_offenders; i++)
			if (!route_offense_name(r.offenders[i].kind) ||
			    !memchr(r.offenders[i].desc, 0, sizeof(r.offenders[i].desc)))
				abort();
		if ((r.checks[ROUTE_CHECK_CABLING].status == ROUTE_STATUS_FAILED) !=
		    (r.checks[ROUTE_CHECK_CABLING].offenders > 0))
			abort();
		route_findings_free(&r);
	}
	route_plan_free(p);
	return 0;
}
