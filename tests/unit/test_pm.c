/* PerfMgt decoders and the 64-bit bookkeeping of pm_port_update(). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <infiniband/mad.h>

#include "ibsnmpd/pm_attr.h"

/* PortCounters (IBA table 247), octet by octet: PortSelect 3, SymbolError
 * 0x0102, LinkErrorRecovery 4, LinkDowned 5, RcvErrors 6, RcvRemotePhys 7,
 * SwitchRelay 8, XmitDiscards 9, XmitConstraint 10, RcvConstraint 11,
 * LocalLinkIntegrity 12 / ExcessiveBufferOverrun 13, VL15Dropped 14,
 * XmitData 0x01020304, RcvData 0xfffffffe, XmitPkts 17, RcvPkts 18,
 * XmitWait 19. */
static const uint8_t port_counters[64] = {
	0, 3, 0, 0, 0x01, 0x02, 4, 5, 0, 6, 0, 7, 0, 8, 0, 9,
	10, 11, 0, 0xcd, 0, 0, 0, 14,
	0x01, 0x02, 0x03, 0x04, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 17, 0, 0, 0, 18,
	0, 0, 0, 19,
};

static void decodes_port_counters(void **state)
{
	struct pm_counters pc;

	(void)state;
	assert_int_equal(pm_counters_decode(port_counters, sizeof(port_counters), &pc), 0);
	assert_int_equal(pc.symbol_errors, 0x0102);
	assert_int_equal(pc.link_error_recovery, 4);
	assert_int_equal(pc.link_downed, 5);
	assert_int_equal(pc.rcv_errors, 6);
	assert_int_equal(pc.rcv_remote_phys_errors, 7);
	assert_int_equal(pc.rcv_switch_relay_errors, 8);
	assert_int_equal(pc.xmit_discards, 9);
	assert_int_equal(pc.xmit_constraint_errors, 10);
	assert_int_equal(pc.rcv_constraint_errors, 11);
	assert_int_equal(pc.local_link_integrity_errors, 12);
	assert_int_equal(pc.excessive_buffer_overruns, 13);
	assert_int_equal(pc.vl15_dropped, 14);
	assert_int_equal(pc.xmit_data, 0x01020304);
	assert_int_equal(pc.rcv_data, 0xfffffffeu);
	assert_int_equal(pc.xmit_pkts, 17);
	assert_int_equal(pc.rcv_pkts, 18);
	assert_int_equal(pc.xmit_wait, 19);
	assert_int_equal(pm_counters_decode(port_counters, 63, &pc), -1);
}

static void port_select_lands_in_octet_1(void **state)
{
	uint8_t d[IB_PC_DATA_SZ];

	(void)state;
	pm_port_select(d, sizeof(d), IB_GSI_PORT_COUNTERS, 7);
	assert_int_equal(d[1], 7);
	pm_port_select(d, sizeof(d), IB_GSI_PORT_COUNTERS_EXT, 9);
	assert_int_equal(d[1], 9);
}

static struct pm_counters counters(uint32_t xmit_data, uint32_t symbol_errors)
{
	struct pm_counters pc;

	memset(&pc, 0, sizeof(pc));
	pc.xmit_data = xmit_data;
	pc.symbol_errors = symbol_errors;
	return pc;
}

static void accumulates_32_bit_counters(void **state)
{
	struct pm_port_state st;
	struct pm_counters pc;

	(void)state;
	memset(&st, 0, sizeof(st));
	pc = counters(100, 0);
	pm_port_update(&st, &pc, NULL, 1000);
	assert_int_equal(st.xmit_data, 100);
	assert_int_equal(st.discontinuity, 1000);
	assert_false(st.extended);
	pc = counters(0xffffffffu, 0); /* filled up and stopped */
	pm_port_update(&st, &pc, NULL, 1010);
	assert_true(st.xmit_data == 0xffffffffull);
	assert_int_equal(st.discontinuity, 1000);
	pc = counters(50, 0); /* cleared by someone, then 50 more */
	pm_port_update(&st, &pc, NULL, 1020);
	assert_true(st.xmit_data == 0xffffffffull + 50);
	assert_int_equal(st.discontinuity, 1020);
	assert_int_equal(st.last_read, 1020);
}

static void error_counter_going_down_is_a_discontinuity(void **state)
{
	struct pm_port_state st;
	struct pm_counters pc;

	(void)state;
	memset(&st, 0, sizeof(st));
	pc = counters(10, 5);
	pm_port_update(&st, &pc, NULL, 1);
	pc = counters(20, 5);
	pm_port_update(&st, &pc, NULL, 2);
	assert_int_equal(st.discontinuity, 1);
	pc = counters(30, 0);
	pm_port_update(&st, &pc, NULL, 3);
	assert_int_equal(st.discontinuity, 3);
	assert_int_equal(st.xmit_data, 30);
}

static void extended_counters_are_taken_as_read(void **state)
{
	struct pm_port_state st;
	struct pm_counters pc = counters(1, 0);
	struct pm_counters_ext ext;

	(void)state;
	memset(&st, 0, sizeof(st));
	memset(&ext, 0, sizeof(ext));
	ext.xmit_data = 123456789012ull;
	ext.rcv_pkts = 7;
	pm_port_update(&st, &pc, &ext, 5);
	assert_true(st.extended);
	assert_true(st.xmit_data == 123456789012ull);
	assert_int_equal(st.rcv_pkts, 7);
	ext.xmit_data = 10; /* cleared */
	pm_port_update(&st, &pc, &ext, 6);
	assert_int_equal(st.discontinuity, 6);
	assert_int_equal(st.xmit_data, 10);
}

static void parses_discovery_output(void **state)
{
	static const char out[] =
		"port 0000000000200000 2 1\n"
		"port 0000000000200000 1 1\n"
		"node 0000000000200000 2 8 1 sw1 spine, rack 4\n"
		"route 0000000000200000 1 2\n"
		"port 0000000000100002 1 3 0000000000100003 0000000000200000 2 7\n"
		"node 0000000000100002 1 1 3 hca2\n"
		"route 0000000000100002 0\n"
		"port 0000000000300000 2 6 0000000000300002 0000000000200000 3\n"
		"port 0000000000300000 1 5 0000000000300001\n"
		"node 0000000000300000 2 8 0 no LID yet\n"
		"route 0000000000300000 3 2 17 254\n"
		"done 0.012\n";
	char err[160];
	struct topology *f = topology_parse(out, sizeof(out) - 1, NULL, err, sizeof(err));

	(void)state;
	assert_non_null(f);
	assert_int_equal(f->n_nodes, 3);
	assert_int_equal(f->n_ports, 5);
	/* directed routes: out ports from the local node */
	assert_true(f->nodes[0].has_route && f->nodes[0].route_hops == 0);
	assert_true(f->nodes[1].has_route && f->nodes[1].route_hops == 1);
	assert_int_equal(f->nodes[1].route[0], 2);
	assert_int_equal(f->nodes[2].lid, 0);
	assert_int_equal(f->nodes[2].route_hops, 3);
	assert_int_equal(f->nodes[2].route[2], 254);
	/* sorted by node GUID, then port */
	assert_true(f->nodes[f->ports[0].node].guid == 0x100002);
	assert_int_equal(f->ports[0].speed, 7); /* NDR: its FEC counters' layout follows */
	assert_int_equal(f->ports[1].speed, 0);
	assert_int_equal(f->ports[1].port, 1);
	assert_int_equal(f->ports[2].port, 2);
	assert_int_equal(f->ports[2].lid, 1);
	/* the older, shorter lines: what they leave out is 0 */
	assert_true(f->ports[3].port == 1 && f->ports[3].port_guid == 0x300001);
	assert_true(f->ports[3].peer_guid == 0 && f->ports[3].peer_port == 0);
	assert_true(f->ports[4].peer_guid == 0x200000 && f->ports[4].peer_port == 3);
	assert_int_equal(f->ports[4].speed, 0);
	assert_string_equal(f->nodes[1].desc, "sw1 spine, rack 4");
	assert_int_equal(f->nodes[1].type, 2);
	topology_free(f);
}

static void refuses_bad_discovery_output(void **state)
{
	static const char *const bad[] = {
		"node 0000000000200000 2 8 1 sw1\n",                       /* no done line */
		"node 0000000000200000 2 8 1 sw1\ndone 1",                 /* cut mid-line */
		"port 0000000000200000 1 1\ndone 0.1\n",                  /* unknown node */
		"node 00000000002 2 8 1 a\nnode 00000000002 2 8 1 b\ndone 1\n", /* twice */
		"node zz 2 8 1 a\ndone 1\n",                             /* not a GUID */
		"node 0000000000200000 9 8 1 a\ndone 1\n",                /* bad node type */
		"port 0000000000200000 0 1\nnode 0000000000200000 2 8 1 a\ndone 1\n", /* port 0 */
		"port 0000000000200000 1 1 extra\nnode 0000000000200000 2 8 1 a\ndone 1\n",
		/* a peer GUID without its port; speed 10; an eighth field */
		"port 0000000000200000 1 1 1 2\nnode 0000000000200000 2 8 1 a\ndone 1\n",
		"port 0000000000200000 1 1 1 2 3 10\nnode 0000000000200000 2 8 1 a\ndone 1\n",
		"port 0000000000200000 1 1 1 2 3 4 5\nnode 0000000000200000 2 8 1 a\ndone 1\n",
		"hello\ndone 1\n",
		"route 0000000000200000 0\nnode 0000000000200000 2 8 1 a\ndone 1\n", /* before */
		"node 0000000000200000 2 8 1 a\nroute 0000000000200001 0\ndone 1\n", /* other node */
		"node 00000000002 2 8 1 a\nroute 2 1 1\nroute 2 1 1\ndone 1\n",     /* twice */
		"node 00000000002 2 8 1 a\nroute 2 2 1\ndone 1\n",                  /* short */
		"node 00000000002 2 8 1 a\nroute 2 1 1 3\ndone 1\n",                /* long */
		"node 00000000002 2 8 1 a\nroute 2 1 0\ndone 1\n",                  /* port 0 */
		"node 00000000002 2 8 1 a\nroute 2 64 1\ndone 1\n",                 /* 64 hops */
	};
	char err[160];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_null(topology_parse(bad[i], strlen(bad[i]), NULL, err, sizeof(err)));
		assert_true(err[0] != '\0');
	}
}

/* PortSamplesControl (IBA 16.1.3.2), octet by octet, written independently
 * of libibmad: OpCode 0x12, PortSelect 3, Tick 5, CounterWidth 4,
 * CounterMask0..14 = 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7, SampleMechanisms 7,
 * SampleStatus 2, OptionMask 0x1e, VendorMask 0x0123456789abcdef,
 * SampleStart 100, SampleInterval 0xfffffff0, Tag 0xbeef,
 * CounterSelect[i] = 0x100 + i. */
static const uint8_t samples_control[68] = {
	0x12, 0x03, 0x05, 0x04, 0x0a, 0x72, 0xee, 0x0a, 0x39, 0x77, 0x07, 0x02,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1e, 0x01, 0x23, 0x45, 0x67,
	0x89, 0xab, 0xcd, 0xef, 0x00, 0x00, 0x00, 0x64, 0xff, 0xff, 0xff, 0xf0,
	0xbe, 0xef, 0x01, 0x00, 0x01, 0x01, 0x01, 0x02, 0x01, 0x03, 0x01, 0x04,
	0x01, 0x05, 0x01, 0x06, 0x01, 0x07, 0x01, 0x08, 0x01, 0x09, 0x01, 0x0a,
	0x01, 0x0b, 0x01, 0x0c, 0x01, 0x0d, 0x01, 0x0e,
};

static void decodes_and_encodes_samples_control(void **state)
{
	static const unsigned masks[15] = {1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7};
	struct pm_sample_ctl c;
	uint8_t d[IB_PC_DATA_SZ];

	(void)state;
	assert_int_equal(pm_sample_ctl_decode(samples_control, sizeof(samples_control), &c), 0);
	assert_int_equal(c.opcode, 0x12);
	assert_int_equal(c.port_select, 3);
	assert_int_equal(c.tick, 5);
	assert_int_equal(c.counter_width, 4);
	for (int i = 0; i < 15; i++) {
		assert_int_equal(c.counter_mask[i], masks[i]);
		assert_int_equal(c.counter_select[i], 0x100 + i);
	}
	assert_int_equal(c.sample_mechanisms, 7);
	assert_int_equal(c.sample_status, 2);
	assert_true(c.option_mask == 0x1e);
	assert_true(c.vendor_mask == 0x0123456789abcdefULL);
	assert_int_equal(c.sample_start, 100);
	assert_int_equal(c.sample_interval, 0xfffffff0u);
	assert_int_equal(c.tag, 0xbeef);
	/* a Set carries only the writable fields, in the same places */
	pm_sample_ctl_encode(&c, d, sizeof(d));
	assert_int_equal(d[0], 0x12);
	assert_int_equal(d[1], 3);
	assert_int_equal(d[2], 0);  /* Tick is the node's */
	assert_int_equal(d[11], 0); /* so is SampleStatus */
	assert_memory_equal(d + 28, samples_control + 28, 68 - 28);
	assert_int_equal(pm_sample_ctl_decode(samples_control, 63, &c), -1);
	assert_int_equal(pm_sample_width_bits(0), 16);
	assert_int_equal(pm_sample_width_bits(4), 32);
}

static void decodes_samples_result(void **state)
{
	uint8_t d[64] = {0xbe, 0xef, 0x00, 0x01};
	struct pm_sample_result r;

	(void)state;
	for (int i = 0; i < 15; i++) {
		d[4 + 4 * i] = (uint8_t)i;
		d[7 + 4 * i] = 0x80;
	}
	assert_int_equal(pm_sample_result_decode(d, sizeof(d), &r), 0);
	assert_int_equal(r.tag, 0xbeef);
	assert_int_equal(r.sample_status, 1);
	for (int i = 0; i < 15; i++)
		assert_int_equal(r.counter[i], (uint32_t)i << 24 | 0x80);
}

/* PortRcvErrorDetails (IBA 16.1.4.5) and PortXmitDiscardDetails (16.1.4.6):
 * PortSelect 3, then 16-bit counters from octet 4. */
static void decodes_error_details(void **state)
{
	static const uint8_t rcv[64] = {0, 3, 0, 0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0xff, 0xff};
	static const uint8_t xmit[64] = {0, 3, 0, 0, 0, 7, 0, 8, 0, 9, 0x01, 0x02};
	struct pm_error_details e;

	(void)state;
	memset(&e, 0, sizeof(e));
	assert_int_equal(pm_rcv_error_details_decode(rcv, sizeof(rcv), &e), 0);
	assert_int_equal(e.local_phys, 1);
	assert_int_equal(e.malformed, 2);
	assert_int_equal(e.buffer_overrun, 3);
	assert_int_equal(e.dlid_mapping, 4);
	assert_int_equal(e.vl_mapping, 5);
	assert_int_equal(e.looping, 0xffff);
	assert_int_equal(e.inactive, 0); /* the other half is not touched */
	assert_int_equal(pm_xmit_discard_details_decode(xmit, sizeof(xmit), &e), 0);
	assert_int_equal(e.inactive, 7);
	assert_int_equal(e.neighbor_mtu, 8);
	assert_int_equal(e.sw_lifetime, 9);
	assert_int_equal(e.sw_hoq_lifetime, 0x0102);
	assert_int_equal(e.local_phys, 1);
	assert_int_equal(pm_rcv_error_details_decode(rcv, 63, &e), -1);
	assert_int_equal(pm_xmit_discard_details_decode(NULL, 64, &e), -1);
}

static void put32(uint8_t *d, unsigned v)
{
	d[0] = (uint8_t)(v >> 24);
	d[1] = (uint8_t)(v >> 16);
	d[2] = (uint8_t)(v >> 8);
	d[3] = (uint8_t)v;
}

/* PortExtendedSpeedsCounters, both layouts, by the byte offsets of IBA
 * 16.1.4.x (not libibmad's descriptors the decoder uses) */
static void decodes_ext_speeds_counters_in_both_layouts(void **state)
{
	uint8_t d[192];
	struct pm_ext_speeds e;

	(void)state;
	memset(d, 0, sizeof(d));
	d[16] = 0x00; d[17] = 0x05;   /* SyncHeaderErrorCounter */
	d[18] = 0x00; d[19] = 0x06;   /* UnknownBlockCounter */
	put32(d + 44, 7);             /* RS: FECCorrectableSymbolCtrLane0 */
	put32(d + 140, 1000);         /* RS: PortFECCorrectableBlockCtr */
	put32(d + 144, 3);            /* RS: PortFECUncorrectableBlockCtr */
	put32(d + 148, 123456);       /* RS: PortFECCorrectedSymbolCtr */
	assert_int_equal(pm_ext_speeds_decode(d, sizeof(d), PM_FEC_RS, &e), 0);
	assert_int_equal(e.sync_header_errors, 5);
	assert_int_equal(e.unknown_blocks, 6);
	assert_int_equal(e.corrected_symbols, 123456);
	assert_int_equal(e.correctable_blocks, 1000);
	assert_int_equal(e.uncorrectable_blocks, 3);
	assert_int_equal(e.error_detection, 0);

	memset(d, 0, sizeof(d));
	for (int lane = 0; lane < 4; lane++) {
		d[20 + 2 * lane + 1] = (uint8_t)(lane + 1); /* ErrorDetectionCounterLane: 1+2+3+4 */
		put32(d + 44 + 4 * lane, 100);             /* FECCorrectableBlockCtrLane */
		put32(d + 92 + 4 * lane, 2);               /* FECUncorrectableBlockCtrLane */
	}
	put32(d + 44 + 4 * 11, 0xffffffffu); /* lane 11: sums go past 32 bits */
	assert_int_equal(pm_ext_speeds_decode(d, sizeof(d), PM_FEC_PER_LANE, &e), 0);
	assert_int_equal(e.error_detection, 10);
	assert_true(e.correctable_blocks == 400 + 0xffffffffull);
	assert_int_equal(e.uncorrectable_blocks, 8);
	assert_int_equal(e.corrected_symbols, 0);
	assert_int_equal(pm_ext_speeds_decode(d, 63, PM_FEC_RS, &e), -1);
	assert_int_equal(pm_ext_speeds_decode(d, sizeof(d), PM_FEC_NONE, &e), -1);
}

static void fec_layout_follows_speed_and_pma(void **state)
{
	(void)state;
	assert_int_equal(pm_fec_layout_of(3, PM_CAP_RSFEC_COUNTERS), PM_FEC_NONE); /* QDR */
	assert_int_equal(pm_fec_layout_of(0, PM_CAP_RSFEC_COUNTERS), PM_FEC_NONE); /* down */
	assert_int_equal(pm_fec_layout_of(5, PM_CAP_RSFEC_COUNTERS), PM_FEC_PER_LANE); /* EDR */
	assert_int_equal(pm_fec_layout_of(7, PM_CAP_RSFEC_COUNTERS), PM_FEC_RS); /* NDR */
	assert_int_equal(pm_fec_layout_of(8, PM_CAP_RSFEC_COUNTERS), PM_FEC_RS); /* XDR */
	assert_int_equal(pm_fec_layout_of(7, 0), PM_FEC_PER_LANE);
	assert_int_equal(pm_fec_layout_of(9, PM_CAP_RSFEC_COUNTERS), PM_FEC_NONE);
}

/* The totals the bit error rates are computed from go on across reads and
 * clears (a smaller value: cleared, all of it new) */
static void fec_totals_accumulate_across_clears(void **state)
{
	struct pm_port_state st;
	struct pm_ext_speeds e = {.corrected_symbols = 100, .uncorrectable_blocks = 5};
	struct pm_counters pc = {.symbol_errors = 2};

	(void)state;
	memset(&st, 0, sizeof(st));
	st.fec_layout = PM_FEC_RS;
	pm_port_update(&st, &pc, NULL, 10);
	pm_port_fec_update(&st, &e);
	assert_true(st.fec_raw_total == 0 && st.fec_uncorrectable_total == 0); /* the base */
	e.corrected_symbols = 150;
	e.uncorrectable_blocks = 7;
	pc.symbol_errors = 5;
	pm_port_update(&st, &pc, NULL, 20);
	pm_port_fec_update(&st, &e);
	assert_int_equal(st.fec_raw_total, 50);
	assert_int_equal(st.fec_uncorrectable_total, 2);
	assert_int_equal(st.symbol_errors_total, 3);
	e.corrected_symbols = 30; /* perfquery -R */
	e.uncorrectable_blocks = 1;
	pc.symbol_errors = 1;
	pm_port_update(&st, &pc, NULL, 30);
	pm_port_fec_update(&st, &e);
	assert_int_equal(st.fec_raw_total, 80);
	assert_int_equal(st.fec_uncorrectable_total, 3);
	assert_int_equal(st.symbol_errors_total, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decodes_port_counters),
		cmocka_unit_test(port_select_lands_in_octet_1),
		cmocka_unit_test(accumulates_32_bit_counters),
		cmocka_unit_test(error_counter_going_down_is_a_discontinuity),
		cmocka_unit_test(extended_counters_are_taken_as_read),
		cmocka_unit_test(decodes_error_details),
		cmocka_unit_test(decodes_ext_speeds_counters_in_both_layouts),
		cmocka_unit_test(fec_layout_follows_speed_and_pma),
		cmocka_unit_test(fec_totals_accumulate_across_clears),
		cmocka_unit_test(parses_discovery_output),
		cmocka_unit_test(refuses_bad_discovery_output),
		cmocka_unit_test(decodes_and_encodes_samples_control),
		cmocka_unit_test(decodes_samples_result),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
