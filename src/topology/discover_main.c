/* ibsnmpd-discover: the subnet discovery ibsnmpd runs as a helper process.
 *
 * libibnetdisc's ibnd_discover_fabric() blocks while the fabric answers and
 * opens a umad port of its own; in a process of its own it neither holds up
 * the daemon's event loop nor shares a umad device with the daemon's MAD
 * engine (which libumad2sim, used by the tests, cannot do), and a crash here
 * costs one discovery, not the daemon.
 *
 * Usage: ibsnmpd-discover CA PORT TIMEOUT_MS RETRIES < M_KEY
 * (stdin: the M_Key for every SMP, "0x" and hex digits; a terminal or
 * nothing: none)
 * Output (stdout), read by topology_parse():
 *   node GUID TYPE NUMPORTS LID DESCRIPTION...
 *   route GUID HOPS PORT...     (the directed route to the node above)
 *   port GUID PORTNUM LID PORTGUID PEERGUID PEERPORT SPEED
 *                               (SPEED: the active speed's generation,
 *                               sma_speed_generation(); 0 when not up)
 *   done SECONDS
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/ibnetdisc.h>

#include "ibsnmpd/sma_attr.h"

/* The active speed of a port as the discovery read its PortInfo (0: the
 * link is not up): the PM sweeps read its PortExtendedSpeedsCounters in
 * the layout of its FEC mode, which follows the speed. */
static int port_speed(const ibnd_port_t *port)
{
	struct sma_portinfo pi;

	if (sma_portinfo_decode(port->info, sizeof(port->info), &pi) ||
	    pi.phys_state != SMA_PHYS_LINK_UP)
		return 0;
	return sma_portinfo_active_speed(&pi);
}

static void print_node(ibnd_node_t *n, void *user)
{
	unsigned node_lid = 0;
	char desc[IB_SMP_DATA_SIZE + 1];

	(void)user;
	if (n->type == IB_NODE_SWITCH && n->ports && n->ports[0])
		node_lid = n->ports[0]->base_lid;
	/* one line per field set: the description may hold any byte but NUL */
	snprintf(desc, sizeof(desc), "%s", n->nodedesc);
	for (char *c = desc; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	for (int p = 1; p <= n->numports; p++) {
		ibnd_port_t *port = n->ports ? n->ports[p] : NULL;
		unsigned lid;

		if (!port)
			continue;
		/* a switch's PMA answers at the switch's LID for every port */
		lid = n->type == IB_NODE_SWITCH ? node_lid : port->base_lid;
		if (!lid)
			continue;
		if (!node_lid)
			node_lid = lid;
		/* the peer: the partition policy checks the switch port behind a member */
		printf("port %016llx %d %u %016llx %016llx %d %d\n", (unsigned long long)n->guid,
		       p, lid, (unsigned long long)port->guid,
		       (unsigned long long)(port->remoteport ? port->remoteport->node->guid : 0),
		       port->remoteport ? port->remoteport->portnum : 0, port_speed(port));
	}
	printf("node %016llx %d %d %u %s\n", (unsigned long long)n->guid, n->type, n->numports,
	       node_lid, desc);
	printf("ident %016llx %x %x %x\n", (unsigned long long)n->guid,
	       mad_get_field(n->info, 0, IB_NODE_VENDORID_F),
	       mad_get_field(n->info, 0, IB_NODE_DEVID_F),
	       mad_get_field(n->info, 0, IB_NODE_REVISION_F));
	/* for a node without a LID yet: directed route, out port by out port */
	if (n->path_portid.drpath.cnt >= 0 && n->path_portid.drpath.cnt <= 63) {
		printf("route %016llx %d", (unsigned long long)n->guid, n->path_portid.drpath.cnt);
		for (int h = 1; h <= n->path_portid.drpath.cnt; h++)
			printf(" %u", n->path_portid.drpath.p[h]);
		printf("\n");
	}
}

/* The M_Key the daemon hands over on stdin ("0x" and 16 hex digits), not on
 * the command line: written before the helper starts, so it is there at
 * once; a stdin with nothing to read now (a terminal, someone else's pipe)
 * means none. */
static uint64_t read_mkey(void)
{
	struct pollfd p = {.fd = STDIN_FILENO, .events = POLLIN};
	char line[40] = "";

	if (poll(&p, 1, 0) != 1 || !(p.revents & POLLIN) || !fgets(line, sizeof(line), stdin))
		return 0;
	return strtoull(line, NULL, 16);
}

int main(int argc, char **argv)
{
	ibnd_config_t cfg;
	ibnd_fabric_t *fabric;
	struct timespec a, b;

	if (argc != 5) {
		fprintf(stderr, "usage: %s CA PORT TIMEOUT_MS RETRIES\n", argv[0]);
		return 2;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.mkey = read_mkey();
	cfg.max_smps = 16;
	cfg.timeout_ms = (unsigned)atoi(argv[3]);
	cfg.retries = (unsigned)atoi(argv[4]);
	clock_gettime(CLOCK_MONOTONIC, &a);
	fabric = ibnd_discover_fabric(argv[1], atoi(argv[2]), NULL, &cfg);
	if (!fabric) {
		fprintf(stderr, "ibsnmpd-discover: discovery from %s port %s failed\n", argv[1],
			argv[2]);
		return 1;
	}
	ibnd_iter_nodes(fabric, print_node, NULL);
	ibnd_destroy_fabric(fabric);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("done %.6f\n", (double)(b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
	return fflush(stdout) == 0 ? 0 : 1;
}
