/* sim-lft-set: a test tool, not part of the daemon.
 *
 * Attached to a node of the simulated fabric (LD_PRELOAD=libumad2sim,
 * SIM_HOST=node), it writes one entry of a switch's unicast forwarding table
 * the way an SM (or a person with the wrong tool) would: SubnGet of the
 * block of LinearForwardingTable, the entry changed, SubnSet of the block,
 * then SubnGet again to show what the switch holds now. infiniband-diags
 * read forwarding tables (ibroute) but write none.
 *
 * Usage: sim-lft-set SWITCH_LID DESTINATION_LID PORT   (PORT 255: none)
 * Prints "LID D: port OLD -> NEW" as the switch answers before and after. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>
#include <infiniband/umad.h>

int main(int argc, char **argv)
{
	int classes[] = {IB_SMI_CLASS, IB_SMI_DIRECT_CLASS};
	struct ibmad_port *port;
	ib_portid_t to = {0};
	uint8_t block[IB_SMP_DATA_SIZE];
	unsigned lid, dest, out, old;

	if (argc != 4) {
		fprintf(stderr, "usage: %s SWITCH_LID DESTINATION_LID PORT\n", argv[0]);
		return 2;
	}
	lid = (unsigned)strtoul(argv[1], NULL, 0);
	dest = (unsigned)strtoul(argv[2], NULL, 0);
	out = (unsigned)strtoul(argv[3], NULL, 0);
	if (!lid || dest > 0xbfff || out > 255) {
		fprintf(stderr, "sim-lft-set: a LID, a unicast LID and a port (0-255)\n");
		return 2;
	}
	port = mad_rpc_open_port(NULL, 0, classes, 2);
	if (!port) {
		fprintf(stderr, "sim-lft-set: cannot open the port\n");
		return 1;
	}
	ib_portid_set(&to, (int)lid, 0, 0);
	if (!smp_query_via(block, &to, IB_ATTR_LINEARFORWTBL, dest / 64, 0, port)) {
		fprintf(stderr, "sim-lft-set: SubnGet(LinearForwardingTable) of LID %u failed\n", lid);
		return 1;
	}
	old = block[dest % 64];
	block[dest % 64] = (uint8_t)out;
	if (!smp_set_via(block, &to, IB_ATTR_LINEARFORWTBL, dest / 64, 0, port) ||
	    !smp_query_via(block, &to, IB_ATTR_LINEARFORWTBL, dest / 64, 0, port)) {
		fprintf(stderr, "sim-lft-set: SubnSet(LinearForwardingTable) of LID %u failed\n", lid);
		return 1;
	}
	printf("LID %u: port %u -> %u\n", dest, old, block[dest % 64]);
	mad_rpc_close_port(port);
	return block[dest % 64] == out ? 0 : 1;
}
