/* bench-pipelined-pma: the reference bench/pm_sweep.py compares ibsnmpd's
 * counter sweep with (and bench/vitals.py its vitals sweep); not part of
 * the daemon.
 *
 * PerfMgtGet(PortCounters) to every "LID PORT" line of stdin, with "ext"
 * PortCountersExtended too, with "fec" PortCountersExtended and
 * PortExtendedSpeedsCounters too (the MADs of one ibsnmpd sweep of an FDR or
 * faster fabric); with "vendor", an NVIDIA AccessRegisterGMP Get (vendor
 * class 0x0A, attribute 0x0051, modifier the register ID, data the VS_Key
 * 0, the config dword 0 and the register with its index fields) for every
 * "LID REGISTER HEX" line (REGISTER in hex, HEX the register's octets, at
 * most 220): WINDOW of them in flight, straight through libibumad (libibmad
 * builds the packets; PortSelect is the same octet in the three PerfMgt
 * attributes): the time the MADs themselves take on this fabric, with
 * nothing else around them. Prints "answers A of N in S s" (a vendor
 * register answered with a MAD status other than 0 is not counted). With
 * "lft", SubnGet(LinearForwardingTable) LID-routed for every "LID BLOCK"
 * line (bench/routing.py's reference: the blocks of every switch).
 * Attach it like any diag tool (scripts/simfabric run --
 * bench-pipelined-pma 256 ext < pairs).
 *
 * Usage: bench-pipelined-pma [WINDOW [ext|fec|vendor|lft]]  (default 256, madMaxOutstanding's) */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/mad.h>
#include <infiniband/umad.h>

#define TIMEOUT_MS 1000
#define VENDOR_CLASS 0x0a
#define VENDOR_ATTR_ACCESS_REG_GMP 0x0051
#define VENDOR_DATA_OFFSET 24
#define VENDOR_DATA_SIZE 232
#define VENDOR_REG_OFFSET 12 /* after the VS_Key (8) and the config dword (4) */
#define VENDOR_REG_MAX 220

/* One MAD to send: a PerfMgt attribute of a port, or a vendor register */
struct request {
	unsigned lid, port, attr, reg_id;
	uint8_t *reg; /* vendor: VENDOR_REG_MAX octets */
	bool smp;     /* SubnGet(attr, port as the modifier) */
};

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static int send_get(int fd, int agent, const struct request *r, unsigned tid)
{
	uint8_t umad[sizeof(struct ib_user_mad) + IB_MAD_SIZE] = {0};
	uint8_t data[VENDOR_DATA_SIZE] = {0};
	ib_rpc_t rpc = {0};
	ib_portid_t to = {0};

	to.lid = (int)r->lid;
	to.qp = 1;
	to.qkey = IB_DEFAULT_QP1_QKEY;
	rpc.method = IB_MAD_METHOD_GET;
	rpc.trid = tid;
	if (r->smp) {
		to.qp = 0;
		to.qkey = 0;
		rpc.mgtclass = IB_SMI_CLASS;
		rpc.attr.id = r->attr;
		rpc.attr.mod = r->port;
		rpc.datasz = IB_SMP_DATA_SIZE;
		rpc.dataoffs = IB_SMP_DATA_OFFS;
	} else if (r->reg) {
		rpc.mgtclass = VENDOR_CLASS;
		rpc.attr.id = VENDOR_ATTR_ACCESS_REG_GMP;
		rpc.attr.mod = r->reg_id;
		rpc.datasz = VENDOR_DATA_SIZE;
		rpc.dataoffs = VENDOR_DATA_OFFSET;
		memcpy(data + VENDOR_REG_OFFSET, r->reg, VENDOR_REG_MAX);
	} else {
		rpc.mgtclass = IB_PERFORMANCE_CLASS;
		rpc.attr.id = r->attr;
		rpc.datasz = IB_PC_DATA_SZ;
		rpc.dataoffs = IB_PC_DATA_OFFS;
		mad_set_field(data, 0, IB_PC_PORT_SELECT_F, r->port);
	}
	if (mad_build_pkt(umad, &rpc, &to, NULL, data) < 0)
		return -1;
	return umad_send(fd, agent, umad, IB_MAD_SIZE, TIMEOUT_MS, 0);
}

/* "LID REGISTER HEX" into r (its register allocated): 0, or -1 at the end
 * or on a line it cannot read */
static int read_vendor_line(struct request *r)
{
	char hex[2 * VENDOR_REG_MAX + 1];

	if (scanf("%u %x %440s", &r->lid, &r->reg_id, hex) != 3 ||
	    !(r->reg = calloc(1, VENDOR_REG_MAX)))
		return -1;
	for (size_t i = 0; i < VENDOR_REG_MAX && hex[2 * i] && hex[2 * i + 1]; i++) {
		unsigned octet;

		if (sscanf(hex + 2 * i, "%2x", &octet) != 1)
			return -1;
		r->reg[i] = (uint8_t)octet;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const unsigned attrs[] = {IB_GSI_PORT_COUNTERS, IB_GSI_PORT_COUNTERS_EXT,
					 IB_GSI_PORT_EXT_SPEEDS_COUNTERS};
	unsigned window = argc > 1 ? (unsigned)atoi(argv[1]) : 256, a, b;
	const char *mode = argc > 2 ? argv[2] : "";
	bool vendor = !strcmp(mode, "vendor"), lft = !strcmp(mode, "lft");
	unsigned per_line = vendor ? 1 : !strcmp(mode, "ext") ? 2 : !strcmp(mode, "fec") ? 3 : 1;
	uint8_t buf[sizeof(struct ib_user_mad) + IB_MAD_SIZE];
	struct request *req = NULL;
	size_t cap = 0, n = 0, sent = 0, done = 0, answered = 0;
	int fd, agent;
	double started;

	/* every line: a fabric of 250,000 ports is 500,000 MADs */
	for (;;) {
		if (n + per_line > cap) {
			cap = cap ? cap * 2 : 4096;
			if (!(req = realloc(req, cap * sizeof(*req)))) {
				fprintf(stderr, "bench-pipelined-pma: out of memory\n");
				return 1;
			}
		}
		memset(&req[n], 0, sizeof(*req));
		if (vendor) {
			if (read_vendor_line(&req[n])) {
				free(req[n].reg);
				break;
			}
			n++;
			continue;
		}
		if (scanf("%u %u", &a, &b) != 2)
			break;
		if (lft) {
			req[n++] = (struct request){.lid = a, .port = b, .attr = IB_ATTR_LINEARFORWTBL,
						    .smp = true};
			continue;
		}
		for (unsigned i = 0; i < per_line; i++)
			req[n++] = (struct request){.lid = a, .port = b, .attr = attrs[i]};
	}
	if (!window || umad_init() < 0 || (fd = umad_open_port(NULL, 0)) < 0 ||
	    (agent = umad_register(fd, vendor ? VENDOR_CLASS : lft ? IB_SMI_CLASS
								  : IB_PERFORMANCE_CLASS,
				   1, 0, NULL)) < 0) {
		fprintf(stderr, "bench-pipelined-pma: cannot open a umad port\n");
		return 1;
	}
	started = now();
	while (done < n) {
		int len = (int)sizeof(buf);

		while (sent < n && sent - done < window) {
			if (send_get(fd, agent, &req[sent], (unsigned)sent + 1) < 0) {
				fprintf(stderr, "bench-pipelined-pma: send failed\n");
				return 1;
			}
			sent++;
		}
		if (umad_recv(fd, buf, &len, TIMEOUT_MS * 2) < 0)
			break; /* nothing more comes */
		done++;
		answered += umad_status(buf) == 0 &&
			    (!vendor || !mad_get_field(umad_get_mad(buf), 0, IB_MAD_STATUS_F));
	}
	printf("answers %zu of %zu in %.6f s\n", answered, n, now() - started);
	umad_unregister(fd, agent);
	umad_close_port(fd);
	for (size_t i = 0; i < n; i++)
		free(req[i].reg);
	free(req);
	return 0;
}
