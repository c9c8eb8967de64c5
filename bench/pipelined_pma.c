/* bench-pipelined-pma: the reference bench/pm_sweep.py compares ibsnmpd's
 * counter sweep with; not part of the daemon.
 *
 * PerfMgtGet(PortCounters) to every "LID PORT" line of stdin, with "ext"
 * PortCountersExtended too, with "fec" PortCountersExtended and
 * PortExtendedSpeedsCounters too (the MADs of one ibsnmpd sweep of an FDR or
 * faster fabric), WINDOW of them in flight, straight through libibumad
 * (libibmad builds the packets; PortSelect is the same octet in all three):
 * the time the MADs themselves take on this fabric, with nothing else around
 * them. Prints "answers A of N in S s". Attach it like any diag tool
 * (scripts/simfabric run -- bench-pipelined-pma 256 ext < pairs).
 *
 * Usage: bench-pipelined-pma [WINDOW [ext|fec]]  (default 256, madMaxOutstanding's) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/mad.h>
#include <infiniband/umad.h>

#define TIMEOUT_MS 1000

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

static int send_get(int fd, int agent, unsigned lid, unsigned port, unsigned attr,
		    unsigned tid)
{
	uint8_t umad[sizeof(struct ib_user_mad) + IB_MAD_SIZE] = {0};
	uint8_t data[IB_PC_DATA_SZ] = {0};
	ib_rpc_t rpc = {0};
	ib_portid_t to = {0};

	to.lid = (int)lid;
	to.qp = 1;
	to.qkey = IB_DEFAULT_QP1_QKEY;
	rpc.mgtclass = IB_PERFORMANCE_CLASS;
	rpc.method = IB_MAD_METHOD_GET;
	rpc.attr.id = attr;
	rpc.datasz = IB_PC_DATA_SZ;
	rpc.dataoffs = IB_PC_DATA_OFFS;
	rpc.trid = tid;
	mad_set_field(data, 0, IB_PC_PORT_SELECT_F, port);
	if (mad_build_pkt(umad, &rpc, &to, NULL, data) < 0)
		return -1;
	return umad_send(fd, agent, umad, IB_MAD_SIZE, TIMEOUT_MS, 0);
}

int main(int argc, char **argv)
{
	unsigned *lid = NULL, *port = NULL, a, b;
	size_t cap = 0;
	uint8_t buf[sizeof(struct ib_user_mad) + IB_MAD_SIZE];
	unsigned window = argc > 1 ? (unsigned)atoi(argv[1]) : 256;
	unsigned per_port = argc > 2 && !strcmp(argv[2], "ext") ? 2 :
			    argc > 2 && !strcmp(argv[2], "fec") ? 3 : 1;
	static const unsigned attrs[] = {IB_GSI_PORT_COUNTERS, IB_GSI_PORT_COUNTERS_EXT,
					 IB_GSI_PORT_EXT_SPEEDS_COUNTERS};
	size_t n = 0, sent = 0, done = 0, answered = 0;
	int fd, agent;
	double started;

	/* every line: a fabric of 250,000 ports is 500,000 MADs */
	while (scanf("%u %u", &a, &b) == 2) {
		if (n + per_port > cap) {
			cap = cap ? cap * 2 : 4096;
			lid = realloc(lid, cap * sizeof(*lid));
			port = realloc(port, cap * sizeof(*port));
			if (!lid || !port) {
				fprintf(stderr, "bench-pipelined-pma: out of memory\n");
				return 1;
			}
		}
		for (unsigned i = 0; i < per_port; i++) {
			lid[n] = a;
			port[n++] = b;
		}
	}
	if (!window || umad_init() < 0 || (fd = umad_open_port(NULL, 0)) < 0 ||
	    (agent = umad_register(fd, IB_PERFORMANCE_CLASS, 1, 0, NULL)) < 0) {
		fprintf(stderr, "bench-pipelined-pma: cannot open a umad port\n");
		return 1;
	}
	started = now();
	while (done < n) {
		int len = (int)sizeof(buf);

		while (sent < n && sent - done < window) {
			unsigned attr = attrs[sent % per_port];

			if (send_get(fd, agent, lid[sent], port[sent], attr, (unsigned)sent + 1) < 0) {
				fprintf(stderr, "bench-pipelined-pma: send failed\n");
				return 1;
			}
			sent++;
		}
		if (umad_recv(fd, buf, &len, TIMEOUT_MS * 2) < 0)
			break; /* nothing more comes */
		done++;
		answered += umad_status(buf) == 0;
	}
	printf("answers %zu of %zu in %.6f s\n", answered, n, now() - started);
	umad_unregister(fd, agent);
	umad_close_port(fd);
	free(lid);
	free(port);
	return 0;
}
