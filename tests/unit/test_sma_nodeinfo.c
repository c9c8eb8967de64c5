/* Decoders of SMA-MIB's Node Info group, against static SMP payloads.
 * The NodeInfo fixture is the attribute as the IBA lays it out (14.2.5.3),
 * written octet by octet here, not produced by libibmad. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ibsnmpd/octets.h"
#include "ibsnmpd/sma_attr.h"

/* BaseVersion 1, ClassVersion 1, NodeType 2 (switch), NumPorts 36,
 * SystemImageGUID 0x0002c90300a1b2c3, NodeGUID 0x0002c90300a1b2c4,
 * PortGUID 0x0002c90300a1b2c5, PartitionCap 32, DeviceID 0xcf08,
 * Revision 0x000000a0, LocalPortNum 7, VendorID 0x0002c9. */
static const uint8_t nodeinfo_switch[64] = {
	0x01, 0x01, 0x02, 0x24,
	0x00, 0x02, 0xc9, 0x03, 0x00, 0xa1, 0xb2, 0xc3,
	0x00, 0x02, 0xc9, 0x03, 0x00, 0xa1, 0xb2, 0xc4,
	0x00, 0x02, 0xc9, 0x03, 0x00, 0xa1, 0xb2, 0xc5,
	0x00, 0x20, 0xcf, 0x08,
	0x00, 0x00, 0x00, 0xa0,
	0x07, 0x00, 0x02, 0xc9,
};

static void decodes_every_nodeinfo_field(void **state)
{
	struct sma_nodeinfo ni;

	(void)state;
	assert_int_equal(sma_nodeinfo_decode(nodeinfo_switch, sizeof(nodeinfo_switch), &ni), 0);
	assert_int_equal(ni.base_version, 1);
	assert_int_equal(ni.class_version, 1);
	assert_int_equal(ni.node_type, 2);
	assert_int_equal(ni.num_ports, 36);
	assert_true(ni.system_image_guid == 0x0002c90300a1b2c3ULL);
	assert_true(ni.node_guid == 0x0002c90300a1b2c4ULL);
	assert_true(ni.port_guid == 0x0002c90300a1b2c5ULL);
	assert_int_equal(ni.partition_cap, 32);
	assert_int_equal(ni.device_id, 0xcf08);
	assert_int_equal(ni.revision, 0xa0);
	assert_int_equal(ni.local_port, 7);
	assert_int_equal(ni.vendor_id, 0x0002c9);
}

static void refuses_short_nodeinfo(void **state)
{
	struct sma_nodeinfo ni;

	(void)state;
	assert_int_equal(sma_nodeinfo_decode(nodeinfo_switch, 39, &ni), -1);
	assert_int_equal(sma_nodeinfo_decode(NULL, 64, &ni), -1);
	/* exactly the 40 octets of the attribute is enough */
	assert_int_equal(sma_nodeinfo_decode(nodeinfo_switch, 40, &ni), 0);
	assert_int_equal(ni.vendor_id, 0x0002c9);
}

static void node_description_is_trimmed(void **state)
{
	uint8_t raw[64];
	char out[65];

	(void)state;
	memset(raw, 0, sizeof(raw));
	memcpy(raw, "leaf01 HCA-1  ", 14);
	assert_int_equal(sma_nodedesc_decode(raw, sizeof(raw), out, sizeof(out)), 0);
	assert_string_equal(out, "leaf01 HCA-1");
}

static void node_description_of_64_octets_has_no_nul(void **state)
{
	uint8_t raw[64];
	char out[65];

	(void)state;
	memset(raw, 'x', sizeof(raw));
	assert_int_equal(sma_nodedesc_decode(raw, sizeof(raw), out, sizeof(out)), 0);
	assert_int_equal(strlen(out), 64);
	/* a short output buffer truncates instead of overflowing */
	char small[8];
	assert_int_equal(sma_nodedesc_decode(raw, sizeof(raw), small, sizeof(small)), 0);
	assert_int_equal(strlen(small), 7);
}

static void node_type_maps_reserved_to_other(void **state)
{
	(void)state;
	assert_int_equal(sma_node_type_to_mib(1), 1);
	assert_int_equal(sma_node_type_to_mib(2), 2);
	assert_int_equal(sma_node_type_to_mib(3), 3);
	assert_int_equal(sma_node_type_to_mib(0), 4);
	assert_int_equal(sma_node_type_to_mib(4), 4);
	assert_int_equal(sma_node_type_to_mib(255), 4);
}

static void octets_are_big_endian(void **state)
{
	uint8_t out[8];
	static const uint8_t vendor[3] = {0x00, 0x02, 0xc9};
	static const uint8_t guid[8] = {0x00, 0x02, 0xc9, 0x03, 0x00, 0xa1, 0xb2, 0xc4};

	(void)state;
	octets_put_be(0x0002c9, out, 3);
	assert_memory_equal(out, vendor, 3);
	octets_put_be(0x0002c90300a1b2c4ULL, out, 8);
	assert_memory_equal(out, guid, 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decodes_every_nodeinfo_field),
		cmocka_unit_test(refuses_short_nodeinfo),
		cmocka_unit_test(node_description_is_trimmed),
		cmocka_unit_test(node_description_of_64_octets_has_no_nul),
		cmocka_unit_test(node_type_maps_reserved_to_other),
		cmocka_unit_test(octets_are_big_endian),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
