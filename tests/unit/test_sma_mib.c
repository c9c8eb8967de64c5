/* SMA-MIB's handlers in-process (agent_harness): snapshots built from static
 * fixtures, as the collector would publish them, then GET, GETNEXT through
 * whole tables and SETs the way a manager sends them. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ibsnmpd/config.h"
#include "ibsnmpd/mib_oids.h"
#include "ibsnmpd/sma.h"

#include "agent_harness.h"

/* ---- fixtures: a channel adapter with two ports -------------------------------------- */

static struct sma_collector node;
static struct sma_collector *served = &node;
static struct sma_mib_regs regs;

static const struct sma_nodeinfo node_info = {
	.description = "hca1 HCA-1", .base_version = 1, .class_version = 1, .node_type = 1,
	.num_ports = 2, .system_image_guid = 0x0002c90300a1b2c0ULL,
	.node_guid = 0x0002c90300a1b2c3ULL, .port_guid = 0x0002c90300a1b2c4ULL,
	.partition_cap = 64, .device_id = 0x1003, .revision = 0xa0, .local_port = 1,
	.vendor_id = 0x0002c9,
};

static const struct sma_switch_snapshot no_switch = {.present = false};

static struct sma_port_entry ports[2];
static struct mib_row port_row[2];
static struct sma_port_snapshot port_snapshot;

static struct sma_pkey_entry pkeys[2] = {{1, 0, 0xffff}, {1, 1, 0x0801}};
static struct mib_row pkey_row[2];
static struct sma_table_snapshot pkey_snapshot;

static void build_fixtures(void)
{
	ports[0].num = 1;
	ports[0].pi = (struct sma_portinfo){.mkey = 0x1122334455667788ULL, .lid = 3, .sm_lid = 1,
					    .state = 4, .phys_state = 5, .width_active = 2,
					    .width_supported = 3, .width_enabled = 3,
					    .speed_active = 1, .speed_supported = 1, .cap_mask = 1u << 1,
					    .guid_cap = 1, .neighbor_mtu = 5, .mtu_cap = 5};
	ports[1].num = 2;
	ports[1].pi = (struct sma_portinfo){.state = 1, .phys_state = 2, .width_supported = 3};
	for (int i = 0; i < 2; i++) {
		port_row[i].index[0] = ports[i].num;
		port_row[i].index_len = 1;
		port_row[i].data = &ports[i];
	}
	port_snapshot = (struct sma_port_snapshot){
		.mgmt_port = 1, .mgmt = &ports[0], .count = 2, .ports = ports,
		.data_ports = {.count = 2, .rows = port_row},
		.all_ports = {.count = 2, .rows = port_row},
	};
	for (int i = 0; i < 2; i++) {
		pkey_row[i].index[0] = pkeys[i].port;
		pkey_row[i].index[1] = pkeys[i].index;
		pkey_row[i].index_len = 2;
		pkey_row[i].data = &pkeys[i];
	}
	pkey_snapshot.table[0] = (struct mib_rows){.count = 2, .rows = pkey_row};
	/* published: what handlers read (no free function: static) */
	node.group[SMA_NODE_INFO].snapshot = (void *)&node_info;
	node.group[SMA_SWITCH_INFO].snapshot = (void *)&no_switch;
	node.group[SMA_PORT_INFO].snapshot = &port_snapshot;
	node.group[SMA_PKEY].snapshot = &pkey_snapshot;
}

static int setup(void **state)
{
	(void)state;
	config_set_defaults(&ibsnmpd_cfg);
	harness_start();
	build_fixtures();
	return sma_mib_register(&regs, &served);
}

static int teardown(void **state)
{
	(void)state;
	sma_mib_unregister(&regs);
	harness_stop();
	return 0;
}

/* ---- tests ---------------------------------------------------------------------------- */

static long get_int(const oid *name, size_t len)
{
	netsnmp_pdu *pdu;
	netsnmp_variable_list *vb = harness_get(name, len, &pdu);
	long v;

	assert_int_equal(vb->type, ASN_INTEGER);
	v = *vb->val.integer;
	snmp_free_pdu(pdu);
	return v;
}

static void node_info_scalars(void **state)
{
	static const oid type[] = {OID_IB_SMA_NODE_TYPE, 0};
	static const oid nports[] = {OID_IB_SMA_NODE_NUM_PORTS, 0};
	static const oid guid[] = {OID_IB_SMA_NODE_GUID, 0};
	static const oid vendor[] = {OID_IB_SMA_NODE_VENDOR_ID, 0};
	static const oid desc[] = {OID_IB_SMA_NODE_STRING, 0};
	static const uint8_t guid_octets[] = {0x00, 0x02, 0xc9, 0x03, 0x00, 0xa1, 0xb2, 0xc3};
	netsnmp_pdu *pdu;
	netsnmp_variable_list *vb;

	(void)state;
	assert_int_equal(get_int(type, OID_LENGTH(type)), 1); /* channelAdapter */
	assert_int_equal(get_int(nports, OID_LENGTH(nports)), 2);
	vb = harness_get(guid, OID_LENGTH(guid), &pdu);
	assert_int_equal(vb->type, ASN_OCTET_STR);
	assert_int_equal(vb->val_len, 8);
	assert_memory_equal(vb->val.string, guid_octets, 8);
	snmp_free_pdu(pdu);
	vb = harness_get(vendor, OID_LENGTH(vendor), &pdu);
	assert_int_equal(vb->val_len, 3);
	assert_memory_equal(vb->val.string, "\x00\x02\xc9", 3);
	snmp_free_pdu(pdu);
	vb = harness_get(desc, OID_LENGTH(desc), &pdu);
	assert_int_equal(vb->val_len, strlen("hca1 HCA-1"));
	snmp_free_pdu(pdu);
}

static void switch_info_of_a_ca_has_no_instance(void **state)
{
	static const oid lft_cap[] = {OID_IB_SMA_SW_LINEAR_FDB_TABLE_NUM, 0};
	netsnmp_pdu *pdu;

	(void)state;
	assert_int_equal(harness_get(lft_cap, OID_LENGTH(lft_cap), &pdu)->type,
			 SNMP_NOSUCHINSTANCE);
	snmp_free_pdu(pdu);
}

static void m_key_is_hidden_unless_exposed(void **state)
{
	static const oid mkey[] = {OID_IB_SMA_PORT_M_KEY, 0};
	static const uint8_t zeros[8], key[] = {0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
	netsnmp_pdu *pdu;
	netsnmp_variable_list *vb;

	(void)state;
	vb = harness_get(mkey, OID_LENGTH(mkey), &pdu);
	assert_int_equal(vb->val_len, 8);
	assert_memory_equal(vb->val.string, zeros, 8);
	snmp_free_pdu(pdu);
	ibsnmpd_cfg.expose_keys = true;
	vb = harness_get(mkey, OID_LENGTH(mkey), &pdu);
	assert_memory_equal(vb->val.string, key, 8);
	snmp_free_pdu(pdu);
	ibsnmpd_cfg.expose_keys = false;
}

/* Column by column, rows in index order, from the first column served to
 * the last; then the walk leaves the table. */
static void port_table_walk_is_ordered_and_ends(void **state)
{
	static const oid table[] = {OID_IB_SMA_PORT_INFO_TABLE};
	static char names[128][128];
	size_t n = harness_walk(table, OID_LENGTH(table), names, 128);
	unsigned columns = COLUMN_IB_SMA_PORT_OVERRUN_ERROR_THRESHOLD -
			   COLUMN_IB_SMA_PORT_LINK_WIDTH_ENABLED + 1;

	(void)state;
	assert_int_equal(n, columns * 2);
	assert_string_equal(names[0], ".1.3.6.1.3.117.3.1.5.1.1.2.1");
	assert_string_equal(names[1], ".1.3.6.1.3.117.3.1.5.1.1.2.2");
	assert_string_equal(names[2], ".1.3.6.1.3.117.3.1.5.1.1.3.1");
	assert_string_equal(names[n - 1], ".1.3.6.1.3.117.3.1.5.1.1.26.2");
}

static void getnext_after_a_table_reaches_the_next_registration(void **state)
{
	static const oid last[] = {OID_IB_SMA_PORT_INFO_TABLE, 1,
				   COLUMN_IB_SMA_PORT_OVERRUN_ERROR_THRESHOLD, 2};
	netsnmp_pdu *pdu;
	netsnmp_variable_list *vb = harness_getnext(last, OID_LENGTH(last), &pdu);
	char name[128];

	(void)state;
	harness_oid_string(vb->name, vb->name_length, name, sizeof(name));
	/* ibSmaPKeyTable's first column served, first row */
	assert_string_equal(name, ".1.3.6.1.3.117.3.1.6.1.1.3.1.0");
	assert_int_equal(*vb->val.integer, 3); /* full member (0xffff) */
	snmp_free_pdu(pdu);
}

static void port_values_and_missing_instances(void **state)
{
	static const oid state1[] = {OID_IB_SMA_PORT_INFO_TABLE, 1, COLUMN_IB_SMA_PORT_LINK_STATE, 1};
	static const oid state2[] = {OID_IB_SMA_PORT_INFO_TABLE, 1, COLUMN_IB_SMA_PORT_LINK_STATE, 2};
	static const oid port3[] = {OID_IB_SMA_PORT_INFO_TABLE, 1, COLUMN_IB_SMA_PORT_LINK_STATE, 3};
	static const oid index_column[] = {OID_IB_SMA_PORT_INFO_TABLE, 1, COLUMN_IB_SMA_PORT_INDEX, 1};
	static const oid pkey_base[] = {OID_IB_SMA_P_KEY_TABLE, 1, COLUMN_IB_SMA_P_KEY_BASE, 1, 1};
	static const oid pkey_member[] = {OID_IB_SMA_P_KEY_TABLE, 1, COLUMN_IB_SMA_P_KEY_MEMBERSHIP,
					  1, 1};
	netsnmp_pdu *pdu;

	(void)state;
	assert_int_equal(get_int(state1, OID_LENGTH(state1)), sma_mib_port_state(4));
	assert_int_equal(get_int(state2, OID_LENGTH(state2)), sma_mib_port_state(1));
	assert_int_equal(harness_get(port3, OID_LENGTH(port3), &pdu)->type, SNMP_NOSUCHINSTANCE);
	snmp_free_pdu(pdu);
	/* the index column is not-accessible: no such object */
	assert_int_equal(harness_get(index_column, OID_LENGTH(index_column), &pdu)->type,
			 SNMP_NOSUCHOBJECT);
	snmp_free_pdu(pdu);
	assert_int_equal(get_int(pkey_base, OID_LENGTH(pkey_base)), 0x0801);
	assert_int_equal(get_int(pkey_member, OID_LENGTH(pkey_member)), 2); /* limited */
}

static void empty_groups_are_skipped_by_walks(void **state)
{
	static const oid sl2vl[] = {OID_IB_SMA_SL2_VL_MAP_TABLE};
	static char names[4][128];

	(void)state;
	assert_int_equal(harness_walk(sl2vl, OID_LENGTH(sl2vl), names, 4), 0);
}

static void sets_of_read_only_objects_are_refused(void **state)
{
	static const oid lid[] = {OID_IB_SMA_PORT_LID, 0};
	static const oid width[] = {OID_IB_SMA_PORT_INFO_TABLE, 1,
				    COLUMN_IB_SMA_PORT_LINK_WIDTH_ENABLED, 1};
	netsnmp_variable_list *vars = NULL;

	(void)state;
	harness_add_int(&vars, lid, OID_LENGTH(lid), 7);
	assert_int_equal(harness_set(vars, NULL), SNMP_ERR_NOTWRITABLE);
	vars = NULL;
	harness_add_int(&vars, width, OID_LENGTH(width), 1);
	assert_int_equal(harness_set(vars, NULL), SNMP_ERR_NOTWRITABLE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(node_info_scalars),
		cmocka_unit_test(switch_info_of_a_ca_has_no_instance),
		cmocka_unit_test(m_key_is_hidden_unless_exposed),
		cmocka_unit_test(port_table_walk_is_ordered_and_ends),
		cmocka_unit_test(getnext_after_a_table_reaches_the_next_registration),
		cmocka_unit_test(port_values_and_missing_instances),
		cmocka_unit_test(empty_groups_are_skipped_by_walks),
		cmocka_unit_test(sets_of_read_only_objects_are_refused),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
