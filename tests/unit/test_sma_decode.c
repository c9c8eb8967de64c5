/* Decoders of the SMA table attributes and the enumeration mappings, against
 * payloads written octet by octet from the IBA tables. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ibsnmpd/sma_attr.h"

static void pkey_block(void **state)
{
	uint8_t d[64] = {0xff, 0xff, 0x80, 0x01, 0x7f, 0xff};
	uint16_t pk[32];

	(void)state;
	assert_int_equal(sma_pkey_block_decode(d, 64, pk), 0);
	assert_int_equal(pk[0], 0xffff);
	assert_int_equal(pk[1], 0x8001);
	assert_int_equal(pk[2], 0x7fff);
	assert_int_equal(pk[31], 0);
	assert_int_equal(sma_pkey_block_decode(d, 63, pk), -1);
}

static void sl2vl_nibbles_high_first(void **state)
{
	uint8_t d[64] = {0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef};
	uint8_t vl[16];

	(void)state;
	assert_int_equal(sma_sl2vl_decode(d, 64, vl), 0);
	for (int sl = 0; sl < 16; sl++)
		assert_int_equal(vl[sl], sl);
}

static void vlarb_pairs(void **state)
{
	uint8_t d[64] = {0xf1, 0x20, 0x07, 0xff};
	uint8_t vl[32], w[32];

	(void)state;
	assert_int_equal(sma_vlarb_block_decode(d, 64, vl, w), 0);
	assert_int_equal(vl[0], 1); /* reserved high nibble ignored */
	assert_int_equal(w[0], 0x20);
	assert_int_equal(vl[1], 7);
	assert_int_equal(w[1], 0xff);
}

static void lft_and_mft_blocks(void **state)
{
	uint8_t d[64];
	uint8_t port[64];
	uint16_t mask[32];

	(void)state;
	for (int i = 0; i < 64; i++)
		d[i] = (uint8_t)i;
	assert_int_equal(sma_lft_block_decode(d, 64, port), 0);
	assert_int_equal(port[0], 0);
	assert_int_equal(port[63], 63);
	assert_int_equal(sma_mft_block_decode(d, 64, mask), 0);
	assert_int_equal(mask[0], 0x0001);
	assert_int_equal(mask[31], 0x3e3f);
}

static void rft_vendordiag_led(void **state)
{
	uint8_t d[64] = {0x00, 0x05, 0xb0, 0x07};
	struct sma_rft_entry e[16];
	struct sma_vendordiag vd;
	unsigned on;

	(void)state;
	assert_int_equal(sma_rft_block_decode(d, 64, e), 0);
	assert_int_equal(e[0].lid, 5);
	assert_int_equal(e[0].valid, 1);
	assert_int_equal(e[0].lmc, 3);
	assert_int_equal(e[0].port, 7);
	assert_int_equal(sma_vendordiag_decode(d, 64, &vd), 0);
	assert_int_equal(vd.next_index, 5);
	assert_int_equal(vd.diag_data[0], 0);
	d[0] = 0x80;
	assert_int_equal(sma_ledinfo_decode(d, 64, &on), 0);
	assert_int_equal(on, 1);
}

static void portinfo_fields(void **state)
{
	uint8_t d[64];
	struct sma_portinfo pi;

	(void)state;
	memset(d, 0, sizeof(d));
	d[16] = 0x00; d[17] = 0x2a;          /* LID 42 */
	d[18] = 0x00; d[19] = 0x01;          /* MasterSMLID 1 */
	d[20] = 0x00; d[21] = 0x50; d[22] = 0xc0; d[23] = 0x48; /* CapabilityMask */
	d[32] = 0x24; /* LinkSpeedSupported 2 (bits 7-4), PortState 4 active (bits 3-0) */
	assert_int_equal(sma_portinfo_decode(d, 64, &pi), 0);
	assert_int_equal(pi.lid, 42);
	assert_int_equal(pi.sm_lid, 1);
	assert_int_equal(pi.cap_mask, 0x0050c048);
	assert_int_equal(pi.state, 4);
	assert_int_equal(pi.speed_supported, 2);
}

/* XDR: LinkSpeedExt*2 (IBA 1.7) by their offsets, only with
 * CapabilityMask2.IsExtendedSpeeds2Supported; folded in as bit 16 */
static void portinfo_xdr_speeds(void **state)
{
	uint8_t d[64];
	struct sma_portinfo pi;

	(void)state;
	memset(d, 0, sizeof(d));
	d[60] = 0x18; d[61] = 0x00;       /* CapabilityMask2: ExtSpeeds2, XDR supported */
	d[56] = 0x20 | 0x08 | 0x01;      /* Active2 1 (bits 449-450), Supported2 1, Enabled2 1 */
	d[62] = 0x00; d[63] = 0x0f;       /* LinkSpeedExtEnabled FDR..NDR (bits 507-511) */
	assert_int_equal(sma_portinfo_decode(d, 64, &pi), 0);
	assert_int_equal(pi.cap_mask2, 0x1800);
	assert_int_equal(pi.speed_ext_active, 16);
	assert_true(pi.speed_ext_supported & 16);
	assert_int_equal(pi.speed_ext_enabled, 0x0f | 16);
	assert_int_equal(sma_speed_generation(pi.speed_active, pi.speed_ext_active), 8);
	assert_int_equal(sma_lane_data_mbps(8) * 4, 800000); /* 4X XDR */
	/* without the capability bit the byte means nothing */
	d[60] = 0x10;
	assert_int_equal(sma_portinfo_decode(d, 64, &pi), 0);
	assert_int_equal(pi.speed_ext_active, 0);
	assert_false(pi.speed_ext_supported & 16);
}

static void enumerations(void **state)
{
	(void)state;
	assert_int_equal(sma_mib_width_active(2), 2);  /* 4X */
	assert_int_equal(sma_mib_width_active(4), 4);  /* 8X: other */
	assert_int_equal(sma_mib_width_supported(0x1f), 4);
	assert_int_equal(sma_mib_speed(1, 0), 1);
	assert_int_equal(sma_mib_speed(1, 4), 2);      /* HDR: other */
	assert_int_equal(sma_mib_port_state(4), 5);
	assert_int_equal(sma_mib_port_state(9), 6);
	assert_int_equal(sma_mib_phys_state(5), 6);
	assert_int_equal(sma_mib_mtu(4), 4);
	assert_int_equal(sma_mib_mtu(0), 6);
	assert_int_equal(sma_mib_sm_state(3), 5);
	assert_int_equal(sma_mtu_octets(5), 4096);
	assert_int_equal(sma_vl_count(5), 15);
	assert_int_equal(sma_width_lanes(16), 2);
	assert_int_equal(sma_speed_generation(1, 4), 6); /* HDR */
	assert_int_equal(sma_lane_data_mbps(6), 50000);
	assert_int_equal(sma_speed_generation(4, 0), 3);  /* QDR */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(pkey_block),
		cmocka_unit_test(sl2vl_nibbles_high_first),
		cmocka_unit_test(vlarb_pairs),
		cmocka_unit_test(lft_and_mft_blocks),
		cmocka_unit_test(rft_vendordiag_led),
		cmocka_unit_test(portinfo_fields),
		cmocka_unit_test(portinfo_xdr_speeds),
		cmocka_unit_test(enumerations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
