/* LLDP-EXT-DCBX-MIB's handlers in-process (agent_harness): a snapshot of one
 * DCB port built from a static fixture, as the backend publishes it; walks
 * and the SET checks (per varbind, then per port as a whole). No kernel
 * socket is open here: a SET that passes every check ends in
 * resourceUnavailable at ACTION (the integration tests take SETs to a fake
 * kernel). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ibsnmpd/cache.h"
#include "ibsnmpd/config.h"
#include "ibsnmpd/mib_oids.h"

#include "agent_harness.h"
#include "dcbx/dcbx_internal.h"
#include "fixtures.h"

#define IFINDEX 5

static struct dcbx_backend backend = {.fd = -1}; /* no socket */
static struct dcbx_mib mib;

static int setup(void **state)
{
	struct dcbx_port *ports = malloc(sizeof(*ports));

	(void)state;
	config_set_defaults(&ibsnmpd_cfg);
	harness_start();
	*ports = fixture_dcbx_port(IFINDEX, "eth2", false);
	backend.group.snapshot = dcbx_snapshot_new(ports, 1); /* published */
	return dcbx_mib_register(&mib, &backend, NULL);
}

static int teardown(void **state)
{
	(void)state;
	dcbx_mib_unregister(&mib);
	dcbx_snapshot_free(backend.group.snapshot);
	backend.group.snapshot = NULL;
	harness_stop();
	return 0;
}

static void walks_show_the_port(void **state)
{
	static const oid port_table[] = {OID_LLDP_XDCBX_PORT_TABLE};
	static const oid bw_table[] = {OID_LLDP_XDCBX_FEAT_PG_BW_ALLOC_TABLE};
	static const oid app_prio[] = {OID_LLDP_XDCBX_FEAT_APP_PROTO_PRIO_TABLE};
	static char names[64][128];

	(void)state;
	/* PortEnable only: the version and sequence columns have no dcbnl source */
	assert_int_equal(harness_walk(port_table, OID_LENGTH(port_table), names, 64), 1);
	assert_string_equal(names[0], ".1.0.8802.1.1.2.1.5.6945.1.1.1.2.5");
	/* 8 PGs: desired and oper (no peer data) */
	assert_int_equal(harness_walk(bw_table, OID_LENGTH(bw_table), names, 64), 16);
	/* one app x 8 priorities: desired and oper */
	assert_int_equal(harness_walk(app_prio, OID_LENGTH(app_prio), names, 64), 16);
}

static int set_bandwidths(long bw0, long bw1)
{
	oid a[] = {OID_LLDP_XDCBX_FEAT_PG_BW_ALLOC_TABLE, 1,
		   COLUMN_LLDP_XDCBX_FEAT_PG_BW_ALLOC_BW_DESIRED, IFINDEX, 0};
	oid b[] = {OID_LLDP_XDCBX_FEAT_PG_BW_ALLOC_TABLE, 1,
		   COLUMN_LLDP_XDCBX_FEAT_PG_BW_ALLOC_BW_DESIRED, IFINDEX, 1};
	netsnmp_variable_list *vars = NULL;

	harness_add_int(&vars, a, OID_LENGTH(a), bw0);
	harness_add_int(&vars, b, OID_LENGTH(b), bw1);
	return harness_set(vars, NULL);
}

static void a_port_is_checked_as_a_whole(void **state)
{
	(void)state;
	assert_int_equal(set_bandwidths(50, 40), SNMP_ERR_INCONSISTENTVALUE); /* 90 % */
	assert_int_equal(set_bandwidths(50, 101), SNMP_ERR_WRONGVALUE);
	/* every check passed; no kernel to send the commands to */
	assert_int_equal(set_bandwidths(70, 30), SNMP_ERR_RESOURCEUNAVAILABLE);
}

static void varbinds_are_checked_one_by_one(void **state)
{
	oid pgid[] = {OID_LLDP_XDCBX_FEAT_PG_PRIO_ALLOC_TABLE, 1,
		      COLUMN_LLDP_XDCBX_FEAT_PG_PRIO_ALLOC_PG_ID_DESIRED, IFINDEX, 2};
	oid pfc[] = {OID_LLDP_XDCBX_FEAT_PFC_TABLE, 1, COLUMN_LLDP_XDCBX_FEAT_PFC_ENABLE_DESIRED,
		     IFINDEX, 4};
	oid pfc_oper[] = {OID_LLDP_XDCBX_FEAT_PFC_TABLE, 1, COLUMN_LLDP_XDCBX_FEAT_PFC_ENABLE_OPER,
			  IFINDEX, 4};
	oid app_id[] = {OID_LLDP_XDCBX_FEAT_APP_PROTO_TABLE, 1, COLUMN_LLDP_XDCBX_FEAT_APP_PROTO_ID,
			IFINDEX, 0};
	oid other_port[] = {OID_LLDP_XDCBX_PORT_TABLE, 1, COLUMN_LLDP_XDCBX_PORT_ENABLE, 77};
	netsnmp_variable_list *vars;

	(void)state;
	vars = NULL; /* PG ids 8..14 are reserved */
	harness_add_int(&vars, pgid, OID_LENGTH(pgid), 9);
	assert_int_equal(harness_set(vars, NULL), SNMP_ERR_WRONGVALUE);
	vars = NULL; /* a TruthValue of 3 */
	harness_add_int(&vars, pfc, OID_LENGTH(pfc), 3);
	assert_int_equal(harness_set(vars, NULL), SNMP_ERR_WRONGVALUE);
	vars = NULL;
	harness_add_string(&vars, pfc, OID_LENGTH(pfc), "x", 1);
	assert_int_equal(harness_set(vars, NULL), SNMP_ERR_WRONGTYPE);
	vars = NULL; /* Oper is the device's */
	harness_add_int(&vars, pfc_oper, OID_LENGTH(pfc_oper), 1);
	assert_int_equal(harness_set(vars, NULL), SNMP_ERR_NOTWRITABLE);
	vars = NULL;
	harness_add_int(&vars, app_id, OID_LENGTH(app_id), 4791);
	assert_int_equal(harness_set(vars, NULL), SNMP_ERR_NOTWRITABLE);
	vars = NULL; /* no such interface */
	harness_add_int(&vars, other_port, OID_LENGTH(other_port), 1);
	assert_int_equal(harness_set(vars, NULL), SNMP_ERR_NOCREATION);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(walks_show_the_port),
		cmocka_unit_test(a_port_is_checked_as_a_whole),
		cmocka_unit_test(varbinds_are_checked_one_by_one),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
