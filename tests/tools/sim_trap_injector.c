/* sim-trap-injector: a test tool, not part of the daemon.
 *
 * Attached to a node of the simulated fabric (LD_PRELOAD=libumad2sim,
 * SIM_HOST=node), it sends Trap(Notice) SMPs to the master SM's LID the way a
 * node's SMA would: class 0x01 (LID-routed; a 0-hop directed-route trap stays
 * local), method Trap, attribute Notice, generic type-1..4 notices with the
 * data details given on the command line.
 *
 * Usage: sim-trap-injector [-n COUNT] [-i MICROSECONDS] [-V] TRAP [FIELD=VALUE]...
 *   -V: vary the data: capmask and sysguid grow by one per trap (benchmarks
 *       tell the notifications apart by it)
 *   -R LID: send the Notice as an SA Report(Notice) straight to LID (QP1), as
 *       the SA would forward it, instead of a trap to the SM; -t TID sets its
 *       transaction ID (the same TID twice is a retransmission); -M makes it
 *       malformed (attribute InformInfo instead of Notice)
 *   FIELD: type producer issuer lid port capmask sysguid method attrid attrmod
 *          key lid1 lid2 sl qp1 qp2 gid1 gid2 swlid valid
 *   (numbers in C syntax; gid1/gid2 as 32 hex digits)
 * NoticeCount is the trap's sequence number (1..COUNT), so that opensm's
 * suppression of identical traps (10 in a row) does not hide them. For each
 * trap it prints "sent SEQ REALTIME_NS" (the latency benchmark reads it). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/mad.h>
#include <infiniband/umad.h>

#define DD 10 /* data details in the Notice */

static void put16(uint8_t *p, unsigned long v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put_be(uint8_t *p, unsigned long long v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

static int put_gid(uint8_t *p, const char *hex)
{
	if (strlen(hex) != 32)
		return -1;
	for (int i = 0; i < 16; i++) {
		unsigned b;

		if (sscanf(hex + 2 * i, "%2x", &b) != 1)
			return -1;
		p[i] = (uint8_t)b;
	}
	return 0;
}

struct fields {
	unsigned long long v[32];
	const char *gid1, *gid2;
};

enum { F_TYPE, F_PRODUCER, F_ISSUER, F_LID, F_PORT, F_CAPMASK, F_SYSGUID, F_METHOD, F_ATTRID,
       F_ATTRMOD, F_KEY, F_LID1, F_LID2, F_SL, F_QP1, F_QP2, F_SWLID, F_VALID, F_N };
static const char *const names[F_N] = {"type", "producer", "issuer", "lid", "port", "capmask",
	"sysguid", "method", "attrid", "attrmod", "key", "lid1", "lid2", "sl", "qp1", "qp2",
	"swlid", "valid"};

static void build_notice(uint8_t *d, unsigned trap, const struct fields *f, unsigned count,
			 int vary)
{
	unsigned long long v[F_N];

	memcpy(v, f->v, sizeof(v));
	if (vary) {
		v[F_CAPMASK] += count - 1;
		v[F_SYSGUID] += count - 1;
	}
	uint8_t *dd = d + DD;

	memset(d, 0, IB_SMP_DATA_SIZE);
	d[0] = (uint8_t)(0x80 | (v[F_TYPE] & 0x7f)); /* IsGeneric, Type */
	put_be(d + 1, v[F_PRODUCER], 3);
	put16(d + 4, trap);
	put16(d + 6, v[F_ISSUER]);
	put16(d + 8, count & 0x7fff); /* NoticeToggle 0, NoticeCount */
	switch (trap) {
	case 128:
		put16(dd, v[F_LID]);
		break;
	case 129: case 130: case 131:
		put16(dd + 2, v[F_LID]);
		dd[4] = (uint8_t)v[F_PORT];
		break;
	case 144:
		put16(dd + 2, v[F_LID]);
		put_be(dd + 6, v[F_CAPMASK], 4);
		break;
	case 145:
		put16(dd + 2, v[F_LID]);
		put_be(dd + 6, v[F_SYSGUID], 8);
		break;
	case 256:
		put16(dd + 2, v[F_LID]);
		dd[6] = (uint8_t)v[F_METHOD];
		put16(dd + 8, v[F_ATTRID]);
		put_be(dd + 10, v[F_ATTRMOD], 4);
		put_be(dd + 14, v[F_KEY], 8);
		break;
	case 257: case 258:
		put16(dd + 2, v[F_LID1]);
		put16(dd + 4, v[F_LID2]);
		put_be(dd + 6, v[F_KEY], 4);
		dd[10] = (uint8_t)(v[F_SL] << 4);
		put_be(dd + 11, v[F_QP1], 3);
		put_be(dd + 15, v[F_QP2], 3);
		if (f->gid1) put_gid(dd + 18, f->gid1);
		if (f->gid2) put_gid(dd + 34, f->gid2);
		break;
	case 259:
		put16(dd, v[F_VALID]);
		put16(dd + 2, v[F_LID1]);
		put16(dd + 4, v[F_LID2]);
		put16(dd + 6, v[F_KEY]);
		dd[8] = (uint8_t)(v[F_SL] << 4);
		put_be(dd + 9, v[F_QP1], 3);
		put_be(dd + 13, v[F_QP2], 3);
		if (f->gid1) put_gid(dd + 16, f->gid1);
		if (f->gid2) put_gid(dd + 32, f->gid2);
		put16(dd + 48, v[F_SWLID]);
		dd[50] = (uint8_t)v[F_PORT];
		break;
	default:
		break;
	}
}

int main(int argc, char **argv)
{
	int classes[] = {IB_SMI_CLASS, IB_SA_CLASS};
	struct fields f;
	unsigned long count = 1, interval_us = 0;
	struct ibmad_port *port;
	umad_port_t info;
	unsigned trap, sm_lid = 0, my_lid = 0, report_lid = 0, malformed = 0;
	uint64_t tid = 0;
	int c, vary = 0;

	memset(&f, 0, sizeof(f));

	while ((c = getopt(argc, argv, "n:i:VR:t:M")) != -1) {
		if (c == 'V')
			vary = 1;
		else if (c == 'R')
			report_lid = (unsigned)strtoul(optarg, NULL, 0);
		else if (c == 't')
			tid = strtoull(optarg, NULL, 0);
		else if (c == 'M')
			malformed = 1;
		else if (c == 'n')
			count = strtoul(optarg, NULL, 0);
		else if (c == 'i')
			interval_us = strtoul(optarg, NULL, 0);
		else
			return 2;
	}
	if (optind >= argc) {
		fprintf(stderr, "usage: sim-trap-injector [-n COUNT] [-i US] TRAP [FIELD=VALUE]...\n");
		return 2;
	}
	trap = (unsigned)strtoul(argv[optind++], NULL, 0);
	f.v[F_TYPE] = trap >= 256 ? 2 : 4; /* security / informational */
	f.v[F_PRODUCER] = 1;               /* channel adapter */
	for (; optind < argc; optind++) {
		char *eq = strchr(argv[optind], '=');
		int k;

		if (!eq) {
			fprintf(stderr, "sim-trap-injector: expected FIELD=VALUE: %s\n", argv[optind]);
			return 2;
		}
		*eq = '\0';
		if (!strcmp(argv[optind], "gid1")) { f.gid1 = eq + 1; continue; }
		if (!strcmp(argv[optind], "gid2")) { f.gid2 = eq + 1; continue; }
		for (k = 0; k < F_N && strcmp(names[k], argv[optind]); k++)
			;
		if (k == F_N) {
			fprintf(stderr, "sim-trap-injector: unknown field %s\n", argv[optind]);
			return 2;
		}
		f.v[k] = strtoull(eq + 1, NULL, 0);
	}
	port = mad_rpc_open_port(NULL, 0, classes, 2);
	if (!port || umad_get_port(NULL, 0, &info) < 0) {
		fprintf(stderr, "sim-trap-injector: cannot open the port: %s\n", strerror(errno));
		return 1;
	}
	sm_lid = info.sm_lid;
	my_lid = info.base_lid;
	umad_release_port(&info);
	if (!f.v[F_ISSUER])
		f.v[F_ISSUER] = my_lid;
	for (unsigned long seq = 1; seq <= count; seq++) {
		uint8_t data[IB_SMP_DATA_SIZE];
		ib_portid_t sm = {.lid = (int)sm_lid, .qp = 0};
		ib_rpc_t rpc = {
			.mgtclass = IB_SMI_CLASS,
			.method = IB_MAD_METHOD_TRAP,
			.attr = {.id = 0x0002 /* Notice */, .mod = 0},
			.datasz = IB_SMP_DATA_SIZE,
			.dataoffs = IB_SMP_DATA_OFFS,
			.timeout = 0,
		};
		struct timespec t;

		uint8_t sa_data[IB_SA_DATA_SIZE] = {0};
		ib_portid_t dest = {.lid = (int)report_lid, .qp = 1, .qkey = IB_DEFAULT_QP1_QKEY};
		ib_rpc_t report = {
			.mgtclass = IB_SA_CLASS,
			.method = IB_MAD_METHOD_REPORT,
			.attr = {.id = malformed ? 0x0003 : 0x0002, .mod = 0},
			.datasz = IB_SA_DATA_SIZE,
			.dataoffs = IB_SA_DATA_OFFS,
			.trid = tid ? tid : seq,
		};
		int sent;

		build_notice(data, trap, &f, (unsigned)seq, vary);
		clock_gettime(CLOCK_REALTIME, &t);
		if (report_lid) {
			memcpy(sa_data, data, IB_SMP_DATA_SIZE); /* Notice's first 64 octets */
			sent = mad_send_via(&report, &dest, NULL, sa_data, port);
		} else {
			sent = mad_send_via(&rpc, &sm, NULL, data, port);
		}
		if (sent < 0) {
			fprintf(stderr, "sim-trap-injector: send failed: %s\n", strerror(errno));
			return 1;
		}
		printf("sent %lu %lld\n", seq, (long long)t.tv_sec * 1000000000LL + t.tv_nsec);
		fflush(stdout);
		if (interval_us && seq < count)
			usleep((useconds_t)interval_us);
	}
	/* ibsim reads a client's packets and its disconnect on different
	 * sockets: leaving at once can lose the last trap. (Waiting for the
	 * TrapRepress is no help: ibsim drops represses.) */
	usleep(300000);
	return 0;
}
