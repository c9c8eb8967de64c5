/* The table helpers every MIB area builds its snapshots with: sorted rows,
 * binary search, the GUID <-> index conversion. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "ibsnmpd/config.h"
#include "ibsnmpd/mib_table.h"

#include "agent_harness.h"

static void row_search_is_ordered(void **state)
{
	struct mib_row r[5];
	struct mib_rows rows = {.count = 5, .rows = r};
	static const oid keys[5][2] = {{1, 2}, {1, 10}, {2, 0}, {2, 1}, {10, 3}};
	oid k[2];

	(void)state;
	for (int i = 4; i >= 0; i--) { /* unsorted on purpose */
		r[4 - i].index[0] = keys[i][0];
		r[4 - i].index[1] = keys[i][1];
		r[4 - i].index_len = 2;
	}
	mib_rows_sort(&rows);
	for (int i = 0; i < 5; i++)
		assert_int_equal(r[i].index[1], keys[i][1]);
	k[0] = 1; k[1] = 10;
	assert_int_equal(mib_rows_search(&rows, k, 2, 0), 1);
	assert_int_equal(mib_rows_search(&rows, k, 2, 1), 2);
	assert_int_equal(mib_rows_search(&rows, k, 1, 1), 0); /* prefix (1) < (1,2) */
	k[0] = 3;
	assert_int_equal(mib_rows_search(&rows, k, 1, 1), 4);
	k[0] = 11;
	assert_int_equal(mib_rows_search(&rows, k, 1, 0), 5);
	assert_int_equal(mib_rows_search(NULL, k, 1, 0), 0);
}

struct guid_port {
	uint64_t guid;
	unsigned port;
};

static unsigned guid_port_index(const void *data, oid *index)
{
	const struct guid_port *p = data;

	return mib_index_guid_port(index, p->guid, p->port);
}

/* Rows that are the snapshot's own sorted array: no struct mib_row, the
 * index computed from the data when searched. */
static void array_rows_search_by_computed_index(void **state)
{
	static const struct guid_port ports[3] = {{0x10, 1}, {0x10, 2}, {0x0200, 1}};
	struct mib_rows rows = {.count = 3, .array = ports, .stride = sizeof(ports[0]),
				.index_of = guid_port_index};
	oid k[MIB_INDEX_MAX];
	unsigned len = mib_index_guid_port(k, 0x10, 2);

	(void)state;
	assert_int_equal(mib_rows_search(&rows, k, len, 0), 1);
	assert_int_equal(mib_rows_search(&rows, k, len, 1), 2);
	assert_int_equal(mib_rows_search(&rows, k, MIB_GUID_INDEX_LEN, 0), 0); /* prefix */
	len = mib_index_guid_port(k, 0x0200, 1);
	assert_int_equal(mib_rows_search(&rows, k, len, 0), 2);
	assert_int_equal(mib_rows_search(&rows, k, len, 1), 3);
	mib_rows_sort(&rows); /* nothing to sort: already in order */
	assert_int_equal(rows.count, 3);
}

static void guid_index_round_trip(void **state)
{
	oid idx[MIB_GUID_INDEX_LEN];
	uint64_t guid;

	(void)state;
	mib_index_put_guid(idx, 0x0002c90300a1b2c3ULL);
	assert_int_equal(idx[0], 0x00);
	assert_int_equal(idx[2], 0xc9);
	assert_int_equal(idx[7], 0xc3);
	assert_int_equal(mib_index_get_guid(idx, &guid), 0);
	assert_true(guid == 0x0002c90300a1b2c3ULL);
	idx[3] = 256; /* not an octet: no GUID */
	assert_int_equal(mib_index_get_guid(idx, &guid), -1);
}

/* A table registered in a named context answers there only, notes each
 * request, and goes when unregistered (net-snmp's own unregistration reads
 * the freed context name: mib_table.c hands it copies). */
static const oid ctx_table_oid[] = {1, 3, 6, 1, 4, 1, 8072, 9999, 9999, 999, 1};

static int ctx_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		     const void *snap)
{
	(void)snap;
	mib_set_int(vb, (long)(*(const unsigned *)row * 10 + column));
	return 0;
}

static const struct mib_rows *ctx_rows(const void *ctx, const void **snap)
{
	*snap = ctx;
	return ctx;
}

static void count_asked(void *arg)
{
	(*(unsigned *)arg)++;
}

static long get_in(const char *context, const oid *name, size_t len, int *type)
{
	netsnmp_variable_list *vars = NULL;
	netsnmp_pdu *pdu;
	long v;

	snmp_varlist_add_variable(&vars, name, len, ASN_NULL, NULL, 0);
	pdu = harness_request_in(context, SNMP_MSG_GET, vars);
	*type = pdu->variables->type;
	v = *type == ASN_INTEGER ? *pdu->variables->val.integer : -1;
	snmp_free_pdu(pdu);
	return v;
}

static void a_table_in_a_context(void **state)
{
	static const unsigned seven = 7;
	struct mib_row row = {.index = {7}, .index_len = 1, .data = &seven};
	struct mib_rows rows = {.count = 1, .rows = &row};
	unsigned asked = 0;
	struct mib_table t = {.name = "ctxTable", .table_oid = ctx_table_oid,
			      .table_oid_len = OID_LENGTH(ctx_table_oid), .first_column = 2,
			      .last_column = 2, .rows = ctx_rows, .value = ctx_value, .ctx = &rows,
			      .context = "ib-0000000000000007", .asked = {count_asked, &asked}};
	const oid cell[] = {1, 3, 6, 1, 4, 1, 8072, 9999, 9999, 999, 1, 1, 2, 7};
	int type;

	(void)state;
	harness_start();
	assert_int_equal(mib_table_register(&t), 0);
	assert_int_equal(get_in("ib-0000000000000007", cell, OID_LENGTH(cell), &type), 72);
	assert_int_equal(asked, 1);
	get_in(NULL, cell, OID_LENGTH(cell), &type);
	assert_int_not_equal(type, ASN_INTEGER); /* not in the default context */
	assert_int_equal(asked, 1);
	mib_table_unregister(&t);
	get_in("ib-0000000000000007", cell, OID_LENGTH(cell), &type);
	assert_int_not_equal(type, ASN_INTEGER);
	/* and again, as a node that comes back */
	assert_int_equal(mib_table_register(&t), 0);
	assert_int_equal(get_in("ib-0000000000000007", cell, OID_LENGTH(cell), &type), 72);
	mib_table_unregister(&t);
	harness_stop();
}

static uint64_t port_of(uint64_t node_guid, void *arg)
{
	(void)arg;
	return node_guid == 0x0002c90300000a00ull ? 0x0002c90301000a00ull : 0;
}

/* Node contexts: ib-NODEGUID; with fabricName a CA's is its port's GUID on
 * this fabric (a dual-port adapter on two fabrics: two instances, two
 * contexts), a switch's stays. */
static void a_ca_on_a_named_fabric_by_its_port(void **state)
{
	char name[MIB_NODE_CONTEXT_MAX];

	(void)state;
	mib_set_ca_port_guid_resolver(port_of, NULL);
	mib_node_context(0x0002c90300000a00ull, 1, name, sizeof(name));
	assert_string_equal(name, "ib-0002c90300000a00"); /* no fabricName */
	snprintf(ibsnmpd_cfg.fabric_name, sizeof(ibsnmpd_cfg.fabric_name), "storage");
	mib_node_context(0x0002c90300000a00ull, 1, name, sizeof(name));
	assert_string_equal(name, "ib-0002c90301000a00");
	mib_node_context(0x0002c90300000b00ull, 1, name, sizeof(name)); /* port not known */
	assert_string_equal(name, "ib-0002c90300000b00");
	mib_node_context(0x0002c90300000a00ull, 2, name, sizeof(name)); /* a switch */
	assert_string_equal(name, "ib-0002c90300000a00");
	ibsnmpd_cfg.fabric_name[0] = '\0';
	mib_set_ca_port_guid_resolver(NULL, NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(row_search_is_ordered),
		cmocka_unit_test(array_rows_search_by_computed_index),
		cmocka_unit_test(guid_index_round_trip),
		cmocka_unit_test(a_table_in_a_context),
		cmocka_unit_test(a_ca_on_a_named_fabric_by_its_port),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
