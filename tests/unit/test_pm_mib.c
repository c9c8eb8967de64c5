/* IB-PM-MIB's and ibsnmpdPmPortTable's handlers in-process (agent_harness):
 * a sweep snapshot built from static fixtures, the per-node view built from
 * it as the daemon builds it, then GETs, walks and SETs. No MAD engine is
 * open, so a SET that must reach a node ends in commitFailed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ibsnmpd/config.h"
#include "ibsnmpd/mib_oids.h"
#include "ibsnmpd/pm.h"

#include "agent_harness.h"

#define SW_GUID 0x0002c90300000001ULL
#define CA_GUID 0x0002c90300000002ULL

static struct pm_area pm;
static struct cache_group discovery; /* the topology's group, published */
static struct topo_node nodes[2] = {
	{.guid = SW_GUID, .type = 2, .lid = 1, .num_ports = 3, .desc = "sw1", .name = "sw1"},
	{.guid = CA_GUID, .type = 1, .lid = 2, .num_ports = 2, .desc = "hca1", .name = "hca1"},
};
static struct topology fabric = {.refs = 1, .n_nodes = 2, .nodes = nodes};
static struct pm_port_state ports[4];
static struct mib_row port_rows[4];
static unsigned capmask[2] = {PM_CAP_ALL_PORT_SELECT | PM_CAPMASK_KNOWN, PM_CAPMASK_KNOWN};
static struct pm_snapshot sweep = {.fabric = &fabric, .n = 4, .ports = ports,
				   .rows = {.count = 4, .rows = port_rows}, .node_capmask = capmask};

static void build_fixtures(void)
{
	static const struct {
		unsigned node, port;
		uint32_t symbol_errors;
	} fixture[4] = {{0, 1, 11}, {0, 2, 22}, {0, 3, 33}, {1, 1, 44}};

	for (int i = 0; i < 4; i++) {
		struct pm_port_state *st = &ports[i];

		st->node = &nodes[fixture[i].node];
		st->guid = st->node->guid;
		st->port = fixture[i].port;
		st->lid = st->node->lid;
		st->have_raw = true;
		st->raw.symbol_errors = fixture[i].symbol_errors;
		st->raw.rcv_pkts = 1000 + i;
		st->xmit_data = 0x100000000ULL + i; /* 4-octet words, beyond 32 bits */
		mib_index_put_guid(port_rows[i].index, st->guid);
		port_rows[i].index[MIB_GUID_INDEX_LEN] = st->port;
		port_rows[i].index_len = MIB_GUID_INDEX_LEN + 1;
		port_rows[i].data = st;
	}
	discovery.snapshot = &fabric; /* discovered */
	pm.topology = &discovery;
	pm.sweep.snapshot = &sweep; /* published (static: no free function) */
	pm_view_refresh(&pm);
}

static int setup(void **state)
{
	(void)state;
	config_set_defaults(&ibsnmpd_cfg);
	harness_start();
	pm_samples_init(&pm, 5);
	pm_view_init(&pm);
	build_fixtures();
	return pm_mib_register(&pm.mib, &pm, NULL);
}

static int teardown(void **state)
{
	(void)state;
	pm_mib_unregister(&pm.mib);
	cache_group_stop(&pm.view);
	harness_stop();
	return 0;
}

/* table.1.column.<GUID octets> */
static size_t row_oid(oid *name, const oid *table, size_t len, unsigned column, uint64_t guid)
{
	memcpy(name, table, len * sizeof(oid));
	name[len] = 1;
	name[len + 1] = column;
	mib_index_put_guid(name + len + 2, guid);
	return len + 2 + MIB_GUID_INDEX_LEN;
}

static const oid counters[] = {OID_PM_PORT_COUNTERS_TABLE};

static long get_counter_column(unsigned column, uint64_t guid, int *type)
{
	oid name[MAX_OID_LEN];
	size_t len = row_oid(name, counters, OID_LENGTH(counters), column, guid);
	netsnmp_pdu *pdu;
	netsnmp_variable_list *vb = harness_get(name, len, &pdu);
	long v = vb->type == ASN_INTEGER ? *vb->val.integer : -1;

	*type = vb->type;
	snmp_free_pdu(pdu);
	return v;
}

static long counter(unsigned column, uint64_t guid)
{
	int type;
	long v = get_counter_column(column, guid, &type);

	assert_int_equal(type, ASN_INTEGER);
	return v;
}

static int set_one(unsigned column, uint64_t guid, long v)
{
	oid name[MAX_OID_LEN];
	size_t len = row_oid(name, counters, OID_LENGTH(counters), column, guid);
	netsnmp_variable_list *vars = NULL;

	harness_add_int(&vars, name, len, v);
	return harness_set(vars, NULL);
}

static void counters_follow_the_port_select(void **state)
{
	(void)state;
	/* default: the node's first port */
	assert_int_equal(counter(COLUMN_PM_PORT_COUNTERS_PORT_SELECT, SW_GUID), 1);
	assert_int_equal(counter(COLUMN_PM_PORT_COUNTERS_SYMBOL_ERRORS, SW_GUID), 11);
	assert_int_equal(set_one(COLUMN_PM_PORT_COUNTERS_PORT_SELECT, SW_GUID, 2),
			 SNMP_ERR_NOERROR);
	assert_int_equal(counter(COLUMN_PM_PORT_COUNTERS_PORT_SELECT, SW_GUID), 2);
	assert_int_equal(counter(COLUMN_PM_PORT_COUNTERS_SYMBOL_ERRORS, SW_GUID), 22);
	/* 0xFF: every port, added up, where the node says AllPortSelect */
	assert_int_equal(set_one(COLUMN_PM_PORT_COUNTERS_PORT_SELECT, SW_GUID, 0xff),
			 SNMP_ERR_NOERROR);
	assert_int_equal(counter(COLUMN_PM_PORT_COUNTERS_SYMBOL_ERRORS, SW_GUID), 66);
	assert_int_equal(set_one(COLUMN_PM_PORT_COUNTERS_PORT_SELECT, SW_GUID, 1),
			 SNMP_ERR_NOERROR);
	assert_int_equal(counter(COLUMN_PM_PORT_COUNTERS_SYMBOL_ERRORS, CA_GUID), 44);
}

static void bad_sets_get_their_error_and_change_nothing(void **state)
{
	oid name[MAX_OID_LEN], name2[MAX_OID_LEN];
	size_t len, len2;
	netsnmp_variable_list *vars = NULL;
	long index;

	(void)state;
	/* a port the node lacks; AllPortSelect where the node cannot */
	assert_int_equal(set_one(COLUMN_PM_PORT_COUNTERS_PORT_SELECT, SW_GUID, 7),
			 SNMP_ERR_INCONSISTENTVALUE);
	assert_int_equal(set_one(COLUMN_PM_PORT_COUNTERS_PORT_SELECT, CA_GUID, 0xff),
			 SNMP_ERR_INCONSISTENTVALUE);
	assert_int_equal(set_one(COLUMN_PM_PORT_COUNTERS_PORT_SELECT, SW_GUID, 300),
			 SNMP_ERR_WRONGVALUE);
	assert_int_equal(set_one(COLUMN_PM_PORT_COUNTERS_SYMBOL_ERRORS, SW_GUID, 5),
			 SNMP_ERR_WRONGVALUE); /* only 0 clears */
	assert_int_equal(set_one(COLUMN_PM_PORT_COUNTERS_GUID, SW_GUID, 1), SNMP_ERR_NOTWRITABLE);
	assert_int_equal(set_one(COLUMN_PM_PORT_COUNTERS_PORT_SELECT, 0x42, 1),
			 SNMP_ERR_NOCREATION); /* not a node of the subnet */
	len = row_oid(name, counters, OID_LENGTH(counters), COLUMN_PM_PORT_COUNTERS_PORT_SELECT,
		      SW_GUID);
	harness_add_string(&vars, name, len, "x", 1);
	assert_int_equal(harness_set(vars, NULL), SNMP_ERR_WRONGTYPE);
	/* all or nothing: a good PortSelect with a bad counter value */
	vars = NULL;
	harness_add_int(&vars, name, len, 3);
	len2 = row_oid(name2, counters, OID_LENGTH(counters), COLUMN_PM_PORT_COUNTERS_RCV_PKTS,
		       SW_GUID);
	harness_add_int(&vars, name2, len2, 9);
	assert_int_equal(harness_set(vars, &index), SNMP_ERR_WRONGVALUE);
	assert_int_equal(index, 2);
	assert_int_equal(counter(COLUMN_PM_PORT_COUNTERS_PORT_SELECT, SW_GUID), 1);
}

static void clearing_without_an_answer_is_commit_failed(void **state)
{
	(void)state;
	/* no MAD engine here: the PerfMgtSet cannot go out */
	assert_int_equal(set_one(COLUMN_PM_PORT_COUNTERS_SYMBOL_ERRORS, SW_GUID, 0),
			 SNMP_ERR_COMMITFAILED);
	assert_int_equal(counter(COLUMN_PM_PORT_COUNTERS_SYMBOL_ERRORS, SW_GUID), 11);
}

static void class_port_info_and_sampling_rows(void **state)
{
	static const oid cpi[] = {OID_PM_CLASS_PORT_INFO_TABLE};
	static const oid sample_ctl[] = {OID_PM_PORT_SAMPLE_CNTRL_TABLE};
	static char names[16][128];
	oid name[MAX_OID_LEN];
	size_t len;
	netsnmp_pdu *pdu;

	(void)state;
	len = row_oid(name, cpi, OID_LENGTH(cpi), COLUMN_PM_CLASS_PORT_INFO_ALL_PORT_SELECT,
		      SW_GUID);
	assert_int_equal(*harness_get(name, len, &pdu)->val.integer, 1); /* true */
	snmp_free_pdu(pdu);
	len = row_oid(name, cpi, OID_LENGTH(cpi), COLUMN_PM_CLASS_PORT_INFO_ALL_PORT_SELECT,
		      CA_GUID);
	assert_int_equal(*harness_get(name, len, &pdu)->val.integer, 2); /* false */
	snmp_free_pdu(pdu);
	/* no node is sampled: each row has its GUID only */
	assert_int_equal(harness_walk(sample_ctl, OID_LENGTH(sample_ctl), names, 16), 2);
}

/* The nodes are rows as soon as they are discovered: a manager can start a
 * sample on one before the first sweep is in. */
static void discovered_nodes_are_rows_before_their_first_sweep(void **state)
{
	static const oid sample_ctl[] = {OID_PM_PORT_SAMPLE_CNTRL_TABLE};
	static const oid cpi[] = {OID_PM_CLASS_PORT_INFO_TABLE};
	static char names[16][128];
	oid name[MAX_OID_LEN];
	size_t len;
	netsnmp_pdu *pdu;

	(void)state;
	pm.sweep.snapshot = NULL;
	pm_view_refresh(&pm);
	assert_int_equal(harness_walk(sample_ctl, OID_LENGTH(sample_ctl), names, 16), 2);
	/* what only a sweep tells is not there yet */
	len = row_oid(name, cpi, OID_LENGTH(cpi), COLUMN_PM_CLASS_PORT_INFO_ALL_PORT_SELECT,
		      SW_GUID);
	assert_int_equal(harness_get(name, len, &pdu)->type, SNMP_NOSUCHINSTANCE);
	snmp_free_pdu(pdu);
	pm.sweep.snapshot = &sweep;
	pm_view_refresh(&pm);
}

static void port_table_serves_64_bit_octets(void **state)
{
	static const oid table[] = {OID_IBSNMPD_PM_PORT_TABLE};
	oid name[MAX_OID_LEN];
	size_t len = row_oid(name, table, OID_LENGTH(table), COLUMN_IBSNMPD_PM_XMIT_OCTETS, SW_GUID);
	netsnmp_pdu *pdu;
	netsnmp_variable_list *vb;
	static char names[200][128];

	(void)state;
	name[len++] = 2; /* port 2 */
	vb = harness_get(name, len, &pdu);
	assert_int_equal(vb->type, ASN_COUNTER64);
	/* (2^32 + 1) words of 4 octets */
	assert_int_equal(vb->val.counter64->high, 4);
	assert_int_equal(vb->val.counter64->low, 4);
	snmp_free_pdu(pdu);
	/* every port, every column from NodeDescription to Stale */
	assert_int_equal(harness_walk(table, OID_LENGTH(table), names, 200),
			 4 * (COLUMN_IBSNMPD_PM_STALE - COLUMN_IBSNMPD_PM_NODE_DESCRIPTION + 1));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(counters_follow_the_port_select),
		cmocka_unit_test(bad_sets_get_their_error_and_change_nothing),
		cmocka_unit_test(clearing_without_an_answer_is_commit_failed),
		cmocka_unit_test(class_port_info_and_sampling_rows),
		cmocka_unit_test(port_table_serves_64_bit_octets),
		cmocka_unit_test(discovered_nodes_are_rows_before_their_first_sweep),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
