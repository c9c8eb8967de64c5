/* ibsnmpd-discover: the subnet discovery ibsnmpd runs as a helper process.
 *
 * libibnetdisc's ibnd_discover_fabric() blocks while the fabric answers and
 * opens a umad port of its own; in a process of its own it neither holds up
 * the daemon's event loop nor shares a umad device with the daemon's MAD
 * engine (which libumad2sim, used by the tests, cannot do), and a crash here
 * costs one discovery, not the daemon.
 *
 * Usage: ibsnmpd-discover [--sa|--lft] CA PORT TIMEOUT_MS RETRIES < M_KEY
 * (stdin: the M_Key for every SMP, "0x" and hex digits; a terminal or
 * nothing: none). --sa: no SMP at all, the SM's view from its SA instead
 * (NodeRecords, PortInfoRecords, LinkRecords: sa_view.c), with a "source sa"
 * line first and each port's PortInfo ("pinfo GUID PORT HEX"). --lft: the
 * SM's copy of the switches' forwarding tables for the routing checks (the
 * SA's LinearForwardingTableRecords), "lft LID BLOCK HEX" lines, then done
 * (read by route_lft_line()).
 * Output (stdout), read by topology_parse():
 *   node GUID TYPE NUMPORTS LID DESCRIPTION...
 *   route GUID HOPS PORT...     (the directed route to the node above)
 *   port GUID PORTNUM LID PORTGUID PEERGUID PEERPORT SPEED
 *                               (SPEED: the active speed's generation,
 *                               sma_speed_generation(); 0 when not up)
 *   done SECONDS
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/ibnetdisc.h>
#include <infiniband/umad.h>

#include "ibsnmpd/clock.h"
#include "ibsnmpd/sa_view.h"
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

/* ---- the SA's view ----------------------------------------------------------- */

struct sa_port {
	int fd, agent;
	unsigned sm_lid;
	unsigned timeout_ms, retries;
	uint32_t tid;
};

/* One GetTable of attr, all of it: its segments come one by one through
 * libumad2sim, as one MAD through the kernel's RMPP. */
static int sa_get_table(struct sa_port *sp, unsigned attr, struct sa_table *t)
{
	size_t cap = umad_size() + IB_MAD_SIZE;
	void *umad = calloc(1, cap);
	uint8_t *mad;
	uint32_t tid = ++sp->tid;
	char err[160];
	int r = -1;

	sa_table_init(t, attr);
	if (!umad)
		return -1;
	mad = umad_get_mad(umad);
	mad_set_field(mad, 0, IB_MAD_BASEVER_F, 1);
	mad_set_field(mad, 0, IB_MAD_MGMTCLASS_F, IB_SA_CLASS);
	mad_set_field(mad, 0, IB_MAD_CLASSVER_F, 2);
	mad_set_field(mad, 0, IB_MAD_METHOD_F, IB_MAD_METHOD_GET_TABLE);
	mad_set_field64(mad, 0, IB_MAD_TRID_F, tid);
	mad_set_field(mad, 0, IB_MAD_ATTRID_F, attr);
	umad_set_addr(umad, (int)sp->sm_lid, 1, 0, IB_DEFAULT_QP1_QKEY);
	if (umad_send(sp->fd, sp->agent, umad, IB_MAD_SIZE, (int)sp->timeout_ms,
		      (int)sp->retries) < 0) {
		fprintf(stderr, "ibsnmpd-discover: cannot send to the SA: %s\n", strerror(errno));
		goto out;
	}
	for (;;) {
		int len = (int)(cap - umad_size());
		int got = umad_recv(sp->fd, umad, &len, (int)(sp->timeout_ms * (sp->retries + 1)));

		if (got == -ENOSPC && len > 0) { /* a table the kernel put together */
			void *bigger = realloc(umad, umad_size() + (size_t)len);

			if (!bigger)
				goto out;
			umad = bigger;
			cap = umad_size() + (size_t)len;
			continue;
		}
		if (got < 0) {
			fprintf(stderr, "ibsnmpd-discover: no answer from the SA (LID %u) to "
				"attribute 0x%04x\n", sp->sm_lid, attr);
			goto out;
		}
		if (umad_status(umad)) {
			fprintf(stderr, "ibsnmpd-discover: the SA (LID %u) did not answer attribute "
				"0x%04x: %s\n", sp->sm_lid, attr, strerror(umad_status(umad)));
			goto out;
		}
		mad = umad_get_mad(umad);
		if ((uint32_t)mad_get_field64(mad, 0, IB_MAD_TRID_F) != tid)
			continue; /* a late answer to an earlier question */
		switch (sa_table_take(t, mad, (size_t)len, err, sizeof(err))) {
		case 1:
			r = 0;
			goto out;
		case 0:
			continue;
		default:
			fprintf(stderr, "ibsnmpd-discover: SA attribute 0x%04x: %s\n", attr, err);
			goto out;
		}
	}
out:
	free(umad);
	return r;
}

/* The port's SA (its SM's LID) opened as sp; its own LID in *local_lid.
 * -1: said why. */
static int sa_port_open(const char *ca, int port_num, struct sa_port *sp, unsigned *local_lid)
{
	umad_port_t port;

	if (umad_init() < 0 || umad_get_port(ca, port_num, &port) < 0) {
		fprintf(stderr, "ibsnmpd-discover: no port %d on %s\n", port_num, ca ? ca : "any CA");
		return -1;
	}
	sp->sm_lid = port.sm_lid;
	*local_lid = port.base_lid;
	umad_release_port(&port);
	if (!sp->sm_lid) {
		fprintf(stderr, "ibsnmpd-discover: no SM known to this port: no SA to ask\n");
		return -1;
	}
	if ((sp->fd = umad_open_port(ca, port_num)) < 0 ||
	    (sp->agent = umad_register(sp->fd, IB_SA_CLASS, 2, 1, NULL)) < 0) {
		fprintf(stderr, "ibsnmpd-discover: cannot open the SA class on port %d\n", port_num);
		return -1;
	}
	return 0;
}

static int discover_from_sa(const char *ca, int port_num, unsigned timeout_ms, unsigned retries)
{
	struct sa_port sp = {.timeout_ms = timeout_ms, .retries = retries};
	struct sa_table nr, pir, lr;
	unsigned local_lid;
	char err[160];
	int r = 1;

	if (sa_port_open(ca, port_num, &sp, &local_lid))
		return 1;
	sa_table_init(&nr, IB_SA_ATTR_NODERECORD);
	sa_table_init(&pir, IB_SA_ATTR_PORTINFORECORD);
	sa_table_init(&lr, IB_SA_ATTR_LINKRECORD);
	if (!sa_get_table(&sp, IB_SA_ATTR_NODERECORD, &nr) &&
	    !sa_get_table(&sp, IB_SA_ATTR_PORTINFORECORD, &pir) &&
	    !sa_get_table(&sp, IB_SA_ATTR_LINKRECORD, &lr)) {
		if (sa_view_print(stdout, &nr, &pir, &lr, local_lid, err, sizeof(err)))
			fprintf(stderr, "ibsnmpd-discover: the SA's records: %s\n", err);
		else
			r = 0;
	}
	sa_table_free(&nr);
	sa_table_free(&pir);
	sa_table_free(&lr);
	umad_unregister(sp.fd, sp.agent);
	umad_close_port(sp.fd);
	return r;
}

/* The SM's copy of every switch's unicast forwarding table: the SA's
 * LinearForwardingTableRecords, one line each ("lft LID BLOCK" and its 64
 * entries in hex), for the routing checks (routingSource sa). */
static int lft_from_sa(const char *ca, int port_num, unsigned timeout_ms, unsigned retries)
{
	struct sa_port sp = {.timeout_ms = timeout_ms, .retries = retries};
	struct sa_table lft;
	unsigned local_lid;
	size_t n;
	int r = 1;

	if (sa_port_open(ca, port_num, &sp, &local_lid))
		return 1;
	if (!sa_get_table(&sp, IB_SA_ATTR_LFTRECORD, &lft)) {
		n = sa_table_records(&lft, 72); /* LID, block, 4 reserved, 64 entries */
		for (size_t i = 0; i < n; i++) {
			const uint8_t *rec = lft.data + i * lft.record_size;

			printf("lft %u %u ", (unsigned)(rec[0] << 8 | rec[1]),
			       (unsigned)(rec[2] << 8 | rec[3]));
			for (unsigned k = 0; k < 64; k++)
				printf("%02x", rec[8 + k]);
			putchar('\n');
		}
		r = 0;
	}
	sa_table_free(&lft);
	umad_unregister(sp.fd, sp.agent);
	umad_close_port(sp.fd);
	return r;
}

int main(int argc, char **argv)
{
	ibnd_config_t cfg;
	ibnd_fabric_t *fabric;
	double began;
	bool from_sa = argc > 1 && !strcmp(argv[1], "--sa");
	bool lft = argc > 1 && !strcmp(argv[1], "--lft");

	if (from_sa || lft) {
		argv++;
		argc--;
	}
	if (argc != 5) {
		fprintf(stderr, "usage: %s [--sa|--lft] CA PORT TIMEOUT_MS RETRIES\n", argv[0]);
		return 2;
	}
	if (from_sa || lft) {
		began = monotonic_seconds();
		if ((from_sa ? discover_from_sa : lft_from_sa)(argv[1][0] ? argv[1] : NULL,
							       atoi(argv[2]), (unsigned)atoi(argv[3]),
							       (unsigned)atoi(argv[4])))
			return 1;
		printf("done %.6f\n", monotonic_seconds() - began);
		return fflush(stdout) == 0 ? 0 : 1;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.mkey = read_mkey();
	cfg.max_smps = 16;
	cfg.timeout_ms = (unsigned)atoi(argv[3]);
	cfg.retries = (unsigned)atoi(argv[4]);
	began = monotonic_seconds();
	fabric = ibnd_discover_fabric(argv[1], atoi(argv[2]), NULL, &cfg);
	if (!fabric) {
		fprintf(stderr, "ibsnmpd-discover: discovery from %s port %s failed\n", argv[1],
			argv[2]);
		return 1;
	}
	ibnd_iter_nodes(fabric, print_node, NULL);
	ibnd_destroy_fabric(fabric);
	printf("done %.6f\n", monotonic_seconds() - began);
	return fflush(stdout) == 0 ? 0 : 1;
}
