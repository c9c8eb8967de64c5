/* IBSNMPD-PARTITION-MIB's handlers in-process (agent_harness), over a real
 * partition file in a temporary directory: the tables as the file says, SET
 * sequences through every mode (RESERVE1 .. COMMIT, and UNDO when another
 * registration's ACTION fails in the same PDU), bad SETs that change
 * nothing. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "ibsnmpd/config.h"
#include "ibsnmpd/mib_oids.h"
#include "ibsnmpd/mib_set.h"
#include "ibsnmpd/mib_table.h"
#include "ibsnmpd/area.h"
#include "ibsnmpd/pkey.h"
#include "pkey/pkey_policy.h"

#include "agent_harness.h"

static char dir[] = "/tmp/ibsnmpd-test-partitions.XXXXXX";
static struct pkey_policy *policy;

static const char file_text[] =
	"# the bed's partitions\n"
	"Default=0x7fff, ipoib : ALL=full ;\n"
	"storage=0x0123, ipoib : 0x0002c90300a1b2c3=full, 0x0002c90300a1b2c4 ;\n";

static char *read_policy_file(void)
{
	static char text[4096];
	FILE *f = fopen(pkey_cfg.partition_file, "r");
	size_t n;

	assert_non_null(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	return text;
}

/* ---- a registration whose ACTION always fails: makes the engine UNDO ---- */

static const oid failing_oid[] = {OID_IBSNMPD_MIB, 999, 1}; /* test-only */

static void *failing_begin(void *area)
{
	(void)area;
	return malloc(1);
}

static int failing_action(void *tx, unsigned token)
{
	(void)tx;
	(void)token;
	return SNMP_ERR_COMMITFAILED;
}

static int failing_stage(void *tx, const struct mib_set_request *req)
{
	(void)tx;
	(void)req;
	return SNMP_ERR_NOERROR;
}

static struct mib_set_domain failing_domain = {
	.name = "failing", .begin = failing_begin, .action = failing_action, .end = free,
};
static const struct mib_column_set failing_columns[] = {
	{1, MIB_VALUE_INT, 0, 10, failing_stage},
};
static const struct mib_set_table failing_set = {
	.domain = &failing_domain, .columns = failing_columns, .n_columns = 1,
};

static int failing_value(unsigned column, netsnmp_variable_list *vb, const void *snap)
{
	(void)column;
	(void)snap;
	mib_set_int(vb, 0);
	return 0;
}

static const void *failing_snapshot(const void *ctx)
{
	return ctx;
}

static struct mib_scalars failing_scalars = {
	.name = "failing", .group_oid = failing_oid, .group_oid_len = OID_LENGTH(failing_oid),
	.first = 1, .last = 1, .snapshot = failing_snapshot, .value = failing_value,
	.set = &failing_set, .ctx = &failing_domain,
};

/* ---- setup ---------------------------------------------------------------------------- */

static int setup(void **state)
{
	FILE *f;

	(void)state;
	config_set_defaults(&ibsnmpd_cfg);
	pkey_area_def.config_defaults();
	assert_non_null(mkdtemp(dir));
	snprintf(pkey_cfg.partition_file, sizeof(pkey_cfg.partition_file),
		 "%s/partitions.conf", dir);
	f = fopen(pkey_cfg.partition_file, "w");
	fputs(file_text, f);
	fclose(f);
	harness_start();
	policy = pkey_policy_start(NULL, 60); /* no subnet: members read unreachable */
	if (!policy || pkey_mib_register(&policy->mib, policy, NULL))
		return -1;
	return mib_scalars_register(&failing_scalars);
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	mib_scalars_unregister(&failing_scalars);
	mib_set_domain_free(&failing_domain);
	pkey_mib_unregister(&policy->mib);
	pkey_policy_stop(policy);
	harness_stop();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

/* ---- tests ---------------------------------------------------------------------------- */

#define GUID_ARCS(g)                                                                          \
	((g) >> 56) & 0xff, ((g) >> 48) & 0xff, ((g) >> 40) & 0xff, ((g) >> 32) & 0xff,       \
		((g) >> 24) & 0xff, ((g) >> 16) & 0xff, ((g) >> 8) & 0xff, (g) & 0xff

static void tables_show_the_file(void **state)
{
	static const oid parts[] = {OID_IB_PARTITION_TABLE};
	static const oid members[] = {OID_IB_PARTITION_MEMBER_TABLE};
	static const oid name[] = {OID_IB_PARTITION_TABLE, 1, COLUMN_IB_PARTITION_NAME, 0x123};
	static const oid type[] = {OID_IB_PARTITION_MEMBER_TABLE, 1, COLUMN_IB_PARTITION_MEMBER_TYPE,
				   0x123, GUID_ARCS(0x0002c90300a1b2c4ULL)};
	static char names[64][128];
	netsnmp_pdu *pdu;
	netsnmp_variable_list *vb;

	(void)state;
	/* Default (0x7fff) is no row; storage has every column Name..RowStatus */
	assert_int_equal(harness_walk(parts, OID_LENGTH(parts), names, 64),
			 COLUMN_IB_PARTITION_ROW_STATUS - COLUMN_IB_PARTITION_NAME + 1);
	assert_int_equal(harness_walk(members, OID_LENGTH(members), names, 64),
			 2 * (COLUMN_IB_PARTITION_MEMBER_DETAIL - COLUMN_IB_PARTITION_MEMBER_TYPE + 1));
	vb = harness_get(name, OID_LENGTH(name), &pdu);
	assert_int_equal(vb->val_len, strlen("storage"));
	assert_memory_equal(vb->val.string, "storage", 7);
	snmp_free_pdu(pdu);
	/* a member with no membership written: the partition's default, limited */
	vb = harness_get(type, OID_LENGTH(type), &pdu);
	assert_int_equal(*vb->val.integer, 2);
	snmp_free_pdu(pdu);
}

static void a_partition_and_its_member_in_one_set(void **state)
{
	static const oid row_status[] = {OID_IB_PARTITION_TABLE, 1,
					 COLUMN_IB_PARTITION_ROW_STATUS, 0x200};
	static const oid name[] = {OID_IB_PARTITION_TABLE, 1, COLUMN_IB_PARTITION_NAME, 0x200};
	static const oid member[] = {OID_IB_PARTITION_MEMBER_TABLE, 1,
				     COLUMN_IB_PARTITION_MEMBER_ROW_STATUS, 0x200,
				     GUID_ARCS(0x0002c90300a1b2c3ULL)};
	static const oid result[] = {OID_IB_PARTITION_LAST_APPLY_RESULT, 0};
	netsnmp_variable_list *vars = NULL;
	netsnmp_pdu *pdu;

	(void)state;
	/* the member's RowStatus first in the PDU: the partition row is staged
	 * first anyway (RowStatus columns of each table first; tables in order) */
	harness_add_int(&vars, row_status, OID_LENGTH(row_status), RS_CREATEANDGO);
	harness_add_int(&vars, member, OID_LENGTH(member), RS_CREATEANDGO);
	harness_add_string(&vars, name, OID_LENGTH(name), "compute", 7);
	assert_int_equal(harness_set(vars, NULL), SNMP_ERR_NOERROR);
	assert_non_null(strstr(read_policy_file(), "compute=0x0200"));
	assert_non_null(strstr(read_policy_file(), "0x0002c90300a1b2c3"));
	/* written, but nobody to tell here (no opensmPidFile): reloadFailed(4) */
	assert_int_equal(*harness_get(result, OID_LENGTH(result), &pdu)->val.integer, 4);
	snmp_free_pdu(pdu);
	/* served at once, from the view the write rebuilt */
	assert_int_equal(harness_get(name, OID_LENGTH(name), &pdu)->val_len, 7);
	snmp_free_pdu(pdu);
	vars = NULL;
	harness_add_int(&vars, row_status, OID_LENGTH(row_status), RS_DESTROY);
	assert_int_equal(harness_set(vars, NULL), SNMP_ERR_NOERROR);
	assert_null(strstr(read_policy_file(), "compute"));
}

static void another_action_failing_undoes_the_write(void **state)
{
	static const oid row_status[] = {OID_IB_PARTITION_TABLE, 1,
					 COLUMN_IB_PARTITION_ROW_STATUS, 0x300};
	static const oid name[] = {OID_IB_PARTITION_TABLE, 1, COLUMN_IB_PARTITION_NAME, 0x300};
	static const oid failing[] = {OID_IBSNMPD_MIB, 999, 1, 1, 0};
	netsnmp_variable_list *vars = NULL;
	char before[4096];
	netsnmp_pdu *pdu;

	(void)state;
	snprintf(before, sizeof(before), "%s", read_policy_file());
	harness_add_int(&vars, row_status, OID_LENGTH(row_status), RS_CREATEANDGO);
	harness_add_string(&vars, name, OID_LENGTH(name), "gone", 4);
	harness_add_int(&vars, failing, OID_LENGTH(failing), 1);
	assert_int_equal(harness_set(vars, NULL), SNMP_ERR_COMMITFAILED);
	/* the partition file was written in ACTION, then put back in UNDO */
	assert_string_equal(read_policy_file(), before);
	assert_int_equal(harness_get(name, OID_LENGTH(name), &pdu)->type, SNMP_NOSUCHINSTANCE);
	snmp_free_pdu(pdu);
}

static void bad_sets_change_nothing(void **state)
{
	static const oid rs_7fff[] = {OID_IB_PARTITION_TABLE, 1, COLUMN_IB_PARTITION_ROW_STATUS,
				      0x7fff};
	static const oid rs_301[] = {OID_IB_PARTITION_TABLE, 1, COLUMN_IB_PARTITION_ROW_STATUS,
				     0x301};
	static const oid name_123[] = {OID_IB_PARTITION_TABLE, 1, COLUMN_IB_PARTITION_NAME, 0x123};
	static const oid status_123[] = {OID_IB_PARTITION_TABLE, 1, COLUMN_IB_PARTITION_STATUS,
					 0x123};
	static const oid short_member[] = {OID_IB_PARTITION_MEMBER_TABLE, 1,
					   COLUMN_IB_PARTITION_MEMBER_ROW_STATUS, 0x123, 0, 2};
	static const oid flag[] = {OID_IB_PARTITION_UNCONFIGURED_PORTS, 0};
	char before[4096];
	netsnmp_variable_list *vars;
	long index;

	(void)state;
	snprintf(before, sizeof(before), "%s", read_policy_file());
	vars = NULL; /* no such P_Key can exist */
	harness_add_int(&vars, rs_7fff, OID_LENGTH(rs_7fff), RS_CREATEANDGO);
	assert_int_equal(harness_set(vars, NULL), SNMP_ERR_NOCREATION);
	vars = NULL; /* created without a name: the whole is inconsistent */
	harness_add_int(&vars, rs_301, OID_LENGTH(rs_301), RS_CREATEANDGO);
	assert_int_equal(harness_set(vars, NULL), SNMP_ERR_INCONSISTENTVALUE);
	vars = NULL; /* createAndWait is not offered */
	harness_add_int(&vars, rs_301, OID_LENGTH(rs_301), RS_CREATEANDWAIT);
	assert_int_equal(harness_set(vars, NULL), SNMP_ERR_WRONGVALUE);
	vars = NULL; /* a name opensm's parser would not take */
	harness_add_string(&vars, name_123, OID_LENGTH(name_123), "two words", 9);
	assert_int_equal(harness_set(vars, NULL), SNMP_ERR_WRONGVALUE);
	vars = NULL;
	harness_add_int(&vars, status_123, OID_LENGTH(status_123), 1);
	assert_int_equal(harness_set(vars, NULL), SNMP_ERR_NOTWRITABLE);
	vars = NULL; /* a GUID of 2 octets */
	harness_add_int(&vars, short_member, OID_LENGTH(short_member), RS_CREATEANDGO);
	assert_int_equal(harness_set(vars, NULL), SNMP_ERR_NOCREATION);
	vars = NULL; /* a good name with a bad flag value: nothing written */
	harness_add_string(&vars, name_123, OID_LENGTH(name_123), "renamed", 7);
	harness_add_int(&vars, flag, OID_LENGTH(flag), 3);
	assert_int_equal(harness_set(vars, &index), SNMP_ERR_WRONGVALUE);
	assert_int_equal(index, 2);
	assert_string_equal(read_policy_file(), before);
}

static void unconfigured_ports_flag(void **state)
{
	static const oid flag[] = {OID_IB_PARTITION_UNCONFIGURED_PORTS, 0};
	netsnmp_variable_list *vars = NULL;
	netsnmp_pdu *pdu;

	(void)state;
	assert_int_equal(*harness_get(flag, OID_LENGTH(flag), &pdu)->val.integer, 2); /* connected */
	snmp_free_pdu(pdu);
	harness_add_int(&vars, flag, OID_LENGTH(flag), 1);
	assert_int_equal(harness_set(vars, NULL), SNMP_ERR_NOERROR);
	assert_non_null(strstr(read_policy_file(), "ALL=limited"));
	assert_int_equal(*harness_get(flag, OID_LENGTH(flag), &pdu)->val.integer, 1); /* isolated */
	snmp_free_pdu(pdu);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(tables_show_the_file),
		cmocka_unit_test(a_partition_and_its_member_in_one_set),
		cmocka_unit_test(another_action_failing_undoes_the_write),
		cmocka_unit_test(bad_sets_change_nothing),
		cmocka_unit_test(unconfigured_ports_flag),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
