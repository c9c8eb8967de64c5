/* sim-pma-responder: a test tool, not part of the daemon.
 *
 * ibsim implements no port sampling: it forwards PortSamplesControl and
 * PortSamplesResult to the IsSM client of the addressed node. This program
 * attaches to a node of the simulated fabric (LD_PRELOAD=libumad2sim,
 * SIM_HOST=node), becomes its IsSM client and answers them like a PMA with
 * one sampling mechanism, so that ibsnmpd's sampling can be tested end to end
 * (and checked with perfquery --smplctl).
 *
 * Its behaviour, which the tests rely on:
 * - CounterWidth 4 (32 bits), Tick 0, SampleMechanisms 0, CounterMask0 1,
 *   CounterMask1..14 2, OptionMask 0x1e, VendorMask 0x0123456789abcdef.
 * - A Set takes OpCode, PortSelect, SampleStart, SampleInterval, Tag and
 *   CounterSelect0..14 and starts a sample; one tick is one microsecond of
 *   real time: SampleStatus is 1 for SampleStart ticks, 2 for SampleInterval
 *   ticks, then 0.
 * - When a sample is complete, PortSamplesResult Counter[i] is
 *   CounterSelect[i] * 1000 + i; while it runs, the counters are 0.
 * - SMInfo (opensm asks every IsSM port) is answered as a not-active SM.
 *
 * The IsSM trick (register the MAD agents, then open issm0) is what the
 * simulator needs (ibsim.c delivers unsolicited requests to IsSM clients
 * only); it stays here, in tests/, never in the daemon.
 *
 * Usage: sim-pma-responder   (prints "ready" once attached; SIGTERM stops) */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/mad.h>
#include <infiniband/umad.h>

#define COUNTERS 15

struct sample_state {
	unsigned opcode, port_select, tag;
	uint32_t start, interval;
	unsigned select[COUNTERS];
	double started; /* monotonic seconds of the last Set; 0 = never */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static unsigned status_of(const struct sample_state *s)
{
	double us;

	if (!s->started)
		return 0;
	us = (now() - s->started) * 1e6;
	if (us < s->start)
		return 1;
	if (us < (double)s->start + s->interval)
		return 2;
	return 0;
}

static void fill_control(const struct sample_state *s, uint8_t *d)
{
	memset(d, 0, IB_PC_DATA_SZ);
	mad_set_field(d, 0, IB_PSC_OPCODE_F, s->opcode);
	mad_set_field(d, 0, IB_PSC_PORT_SELECT_F, s->port_select);
	mad_set_field(d, 0, IB_PSC_TICK_F, 0);
	mad_set_field(d, 0, IB_PSC_COUNTER_WIDTH_F, 4);
	mad_set_field(d, 0, IB_PSC_COUNTER_MASK0_F, 1);
	/* CounterMask1..14 = 2: 3-bit groups of 010 */
	mad_set_field(d, 0, IB_PSC_COUNTER_MASKS1TO9_F, 0222222222);
	mad_set_field(d, 0, IB_PSC_COUNTER_MASKS10TO14_F, 022222);
	mad_set_field(d, 0, IB_PSC_SAMPLE_MECHS_F, 0);
	mad_set_field(d, 0, IB_PSC_SAMPLE_STATUS_F, status_of(s));
	mad_set_field64(d, 0, IB_PSC_OPTION_MASK_F, 0x1e);
	mad_set_field64(d, 0, IB_PSC_VENDOR_MASK_F, 0x0123456789abcdefULL);
	mad_set_field(d, 0, IB_PSC_SAMPLE_START_F, s->start);
	mad_set_field(d, 0, IB_PSC_SAMPLE_INTVL_F, s->interval);
	mad_set_field(d, 0, IB_PSC_TAG_F, s->tag);
	for (int i = 0; i < COUNTERS; i++)
		mad_set_field(d, 0, IB_PSC_COUNTER_SEL0_F + i, s->select[i]);
}

static void take_control(struct sample_state *s, uint8_t *d)
{
	s->opcode = mad_get_field(d, 0, IB_PSC_OPCODE_F);
	s->port_select = mad_get_field(d, 0, IB_PSC_PORT_SELECT_F);
	s->start = mad_get_field(d, 0, IB_PSC_SAMPLE_START_F);
	s->interval = mad_get_field(d, 0, IB_PSC_SAMPLE_INTVL_F);
	s->tag = mad_get_field(d, 0, IB_PSC_TAG_F);
	for (int i = 0; i < COUNTERS; i++)
		s->select[i] = mad_get_field(d, 0, IB_PSC_COUNTER_SEL0_F + i);
	s->started = now();
	printf("sample started: tag 0x%04x start %u interval %u port %u\n", s->tag, s->start,
	       s->interval, s->port_select);
	fflush(stdout);
}

static void fill_result(const struct sample_state *s, uint8_t *d)
{
	unsigned st = status_of(s);

	memset(d, 0, IB_PC_DATA_SZ);
	mad_set_field(d, 0, IB_PSR_TAG_F, s->tag);
	mad_set_field(d, 0, IB_PSR_SAMPLE_STATUS_F, st);
	for (int i = 0; i < COUNTERS; i++)
		mad_set_field(d, 0, IB_PSR_COUNTER0_F + i,
			      st == 0 && s->started ? s->select[i] * 1000 + (unsigned)i : 0);
}

static void fill_sminfo(uint8_t *d, uint64_t guid)
{
	memset(d, 0, IB_SMP_DATA_SIZE);
	mad_set_field64(d, 0, IB_SMINFO_GUID_F, guid);
	mad_set_field(d, 0, IB_SMINFO_PRIO_F, 0);
	mad_set_field(d, 0, IB_SMINFO_STATE_F, 0); /* not active */
}

int main(void)
{
	int classes[] = {IB_SMI_CLASS, IB_SMI_DIRECT_CLASS, IB_SA_CLASS, IB_PERFORMANCE_CLASS};
	struct ibmad_port *port = mad_rpc_open_port(NULL, 0, classes, 4);
	struct sample_state s = {.opcode = 0xff};
	uint8_t *umad = umad_alloc(1, umad_size() + IB_MAD_SIZE);
	uint64_t guid = 0;
	umad_port_t info;
	int issm;

	if (!port || !umad) {
		fprintf(stderr, "sim-pma-responder: cannot open the port: %s\n", strerror(errno));
		return 1;
	}
	if (umad_get_port(NULL, 0, &info) == 0) {
		guid = be64toh(info.port_guid);
		umad_release_port(&info);
	}
	/* after the agents exist: the simulator now delivers requests to us */
	issm = open("/dev/infiniband/issm0", O_RDWR);
	if (issm < 0) {
		fprintf(stderr, "sim-pma-responder: cannot become IsSM: %s\n", strerror(errno));
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		int len = IB_MAD_SIZE;
		uint8_t *mad;
		unsigned mgmt, method, attr;
		uint32_t status = 0;

		if (umad_recv(mad_rpc_portid(port), umad, &len, -1) < 0) {
			if (errno == EINTR)
				continue;
			fprintf(stderr, "sim-pma-responder: receive: %s\n", strerror(errno));
			return 1;
		}
		mad = umad_get_mad(umad);
		mgmt = mad_get_field(mad, 0, IB_MAD_MGMTCLASS_F);
		method = mad_get_field(mad, 0, IB_MAD_METHOD_F);
		attr = mad_get_field(mad, 0, IB_MAD_ATTRID_F);
		if (method != IB_MAD_METHOD_GET && method != IB_MAD_METHOD_SET)
			continue; /* responses, reports: not ours to answer */
		if (mgmt == IB_PERFORMANCE_CLASS && attr == IB_GSI_PORT_SAMPLES_CONTROL) {
			if (method == IB_MAD_METHOD_SET)
				take_control(&s, mad + IB_PC_DATA_OFFS);
			fill_control(&s, mad + IB_PC_DATA_OFFS);
		} else if (mgmt == IB_PERFORMANCE_CLASS && attr == IB_GSI_PORT_SAMPLES_RESULT &&
			   method == IB_MAD_METHOD_GET) {
			fill_result(&s, mad + IB_PC_DATA_OFFS);
		} else if ((mgmt == IB_SMI_CLASS || mgmt == IB_SMI_DIRECT_CLASS) &&
			   attr == IB_ATTR_SMINFO && method == IB_MAD_METHOD_GET) {
			fill_sminfo(mad + IB_SMP_DATA_OFFS, guid);
		} else {
			status = 0x0c; /* unsupported method/attribute */
		}
		if (mad_respond_via(umad, NULL, status, port) < 0)
			fprintf(stderr, "sim-pma-responder: respond: %s\n", strerror(errno));
	}
}
