/* The SM's view from its SA (sa_view.c): a GetTable answer put together
 * from RMPP segments (as libumad2sim passes them) or whole (as the kernel
 * hands it); NodeRecords, PortInfoRecords and LinkRecords printed as the
 * discovery helper prints libibnetdisc's fabric, which topology_parse()
 * reads back: nodes, ports, peers, LIDs, routes and each port's PortInfo. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <infiniband/mad.h>

#include "ibsnmpd/sa_view.h"
#include "ibsnmpd/topology.h"

#define HEADERS 56

/* An SA answer's headers: attribute, record size, RMPP segment and flags,
 * the last segment's PayloadLength. */
static void sa_header(uint8_t *mad, unsigned attr, unsigned record_size, unsigned seg,
		      unsigned flags, unsigned paylen)
{
	memset(mad, 0, HEADERS);
	mad_set_field(mad, 0, IB_MAD_BASEVER_F, 1);
	mad_set_field(mad, 0, IB_MAD_MGMTCLASS_F, IB_SA_CLASS);
	mad_set_field(mad, 0, IB_MAD_METHOD_F, IB_MAD_METHOD_GET_TABLE_RESPONSE & 0x7f);
	mad_set_field(mad, 0, IB_MAD_RESPONSE_F, 1);
	mad_set_field(mad, 0, IB_MAD_ATTRID_F, attr);
	mad_set_field(mad, 0, IB_SA_ATTROFFS_F, record_size / 8);
	mad_set_field(mad, 0, IB_SA_RMPP_VERS_F, 1);
	mad_set_field(mad, 0, IB_SA_RMPP_TYPE_F, 1);
	mad_set_field(mad, 0, IB_SA_RMPP_FLAGS_F, flags);
	mad_set_field(mad, 0, IB_SA_RMPP_SEGNUM_F, seg);
	mad_set_field(mad, 0, IB_SA_RMPP_LEN_F, paylen);
}

/* recs (n of size each) into t, in segments of seg_data octets (0: one
 * MAD, as the kernel puts it together) */
static void take_all(struct sa_table *t, unsigned attr, const uint8_t *recs, size_t n,
		     unsigned size, size_t seg_data)
{
	size_t len = n * size;
	uint8_t mad[HEADERS + 4096];
	char err[160];

	sa_table_init(t, attr);
	if (!seg_data) {
		assert_true(HEADERS + len <= sizeof(mad));
		sa_header(mad, attr, size, 1, 1 | 2 | 4, (unsigned)(20 + len));
		memcpy(mad + HEADERS, recs, len);
		assert_int_equal(sa_table_take(t, mad, HEADERS + (len > 200 ? len : 200), err,
					       sizeof(err)), 1);
		return;
	}
	for (size_t off = 0, seg = 1; off < len || seg == 1; off += seg_data, seg++) {
		size_t here = len - off < seg_data ? len - off : seg_data;
		bool last = off + here >= len;

		sa_header(mad, attr, size, (unsigned)seg, 1 | (seg == 1 ? 2 : 0) | (last ? 4 : 0),
			  last ? (unsigned)(20 + here) : 0);
		memset(mad + HEADERS, 0xee, 200); /* what follows a last segment's data: not taken */
		memcpy(mad + HEADERS, recs + off, here);
		assert_int_equal(sa_table_take(t, mad, HEADERS + (last ? 200 : here), err,
					       sizeof(err)), last ? 1 : 0);
		if (last)
			break;
	}
}

static void segments_and_a_whole_answer_give_the_same_records(void **state)
{
	uint8_t recs[30 * 8];
	struct sa_table a, b, c;

	(void)state;
	for (size_t i = 0; i < sizeof(recs); i++)
		recs[i] = (uint8_t)(i * 7 + 1);
	take_all(&a, IB_SA_ATTR_LINKRECORD, recs, 30, 8, 168); /* libumad2sim's */
	take_all(&b, IB_SA_ATTR_LINKRECORD, recs, 30, 8, 200); /* IBA's */
	take_all(&c, IB_SA_ATTR_LINKRECORD, recs, 30, 8, 0);   /* the kernel's */
	assert_int_equal(sa_table_records(&a, 6), 30);
	assert_int_equal(sa_table_records(&b, 6), 30);
	assert_int_equal(sa_table_records(&c, 6), 30);
	assert_memory_equal(a.data, recs, sizeof(recs));
	assert_memory_equal(b.data, recs, sizeof(recs));
	assert_memory_equal(c.data, recs, sizeof(recs));
	assert_int_equal(sa_table_records(&a, 9), 0); /* records shorter than asked */
	sa_table_free(&a);
	sa_table_free(&b);
	sa_table_free(&c);
}

static void what_is_not_the_answer_is_refused(void **state)
{
	uint8_t mad[256];
	struct sa_table t;
	char err[160];

	(void)state;
	sa_table_init(&t, IB_SA_ATTR_NODERECORD);
	assert_int_equal(sa_table_take(&t, mad, 40, err, sizeof(err)), -1); /* too short */
	sa_header(mad, IB_SA_ATTR_LINKRECORD, 8, 1, 1 | 2 | 4, 28);
	assert_int_equal(sa_table_take(&t, mad, sizeof(mad), err, sizeof(err)), -1);
	sa_header(mad, IB_SA_ATTR_NODERECORD, 112, 2, 1 | 2, 0); /* segment 2 first */
	assert_int_equal(sa_table_take(&t, mad, sizeof(mad), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "out of order"));
	sa_header(mad, IB_SA_ATTR_NODERECORD, 112, 1, 1 | 2 | 4, 20);
	mad_set_field(mad, 0, IB_MAD_STATUS_F, 3u << 8); /* no records: an empty table */
	assert_int_equal(sa_table_take(&t, mad, sizeof(mad), err, sizeof(err)), 1);
	assert_int_equal(sa_table_records(&t, 108), 0);
	mad_set_field(mad, 0, IB_MAD_STATUS_F, 2u << 8);
	assert_int_equal(sa_table_take(&t, mad, sizeof(mad), err, sizeof(err)), -1);
	assert_non_null(strstr(err, "status 0x0200"));
	sa_table_free(&t);
}

/* ---- a fabric: a switch (LID 1, 4 ports), hosts a (LID 2) and b (LID 3) --- */

#define SW_GUID 0x0002c90300000100ull
#define A_GUID 0x0002c90300000a00ull
#define B_GUID 0x0002c90300000b00ull

static void node_record(uint8_t *r, unsigned lid, unsigned type, unsigned nports, uint64_t guid,
			unsigned local_port, const char *desc)
{
	memset(r, 0, 112);
	r[0] = (uint8_t)(lid >> 8);
	r[1] = (uint8_t)lid;
	mad_set_field(r + 4, 0, IB_NODE_BASE_VERS_F, 1);
	mad_set_field(r + 4, 0, IB_NODE_TYPE_F, type);
	mad_set_field(r + 4, 0, IB_NODE_NPORTS_F, nports);
	mad_set_field64(r + 4, 0, IB_NODE_GUID_F, guid);
	mad_set_field64(r + 4, 0, IB_NODE_PORT_GUID_F, guid + (type == 2 ? 0 : local_port));
	mad_set_field(r + 4, 0, IB_NODE_LOCAL_PORT_F, local_port);
	mad_set_field(r + 4, 0, IB_NODE_VENDORID_F, 0x2c9);
	mad_set_field(r + 4, 0, IB_NODE_DEVID_F, 0xd2f2);
	memcpy(r + 44, desc, strlen(desc));
}

static void port_record(uint8_t *r, unsigned lid, unsigned port, bool up)
{
	memset(r, 0, 72);
	r[0] = (uint8_t)(lid >> 8);
	r[1] = (uint8_t)lid;
	r[2] = (uint8_t)port;
	mad_set_field(r + 4, 0, IB_PORT_LID_F, lid);
	mad_set_field(r + 4, 0, IB_PORT_STATE_F, up ? 4 : 1);
	mad_set_field(r + 4, 0, IB_PORT_PHYS_STATE_F, up ? 5 : 2);
	mad_set_field(r + 4, 0, IB_PORT_LINK_WIDTH_ACTIVE_F, 2);
	mad_set_field(r + 4, 0, IB_PORT_LINK_SPEED_ACTIVE_F, 4); /* QDR */
}

static void link_record(uint8_t *r, unsigned from, unsigned from_port, unsigned to,
			unsigned to_port)
{
	memset(r, 0, 8);
	r[1] = (uint8_t)from;
	r[2] = (uint8_t)from_port;
	r[3] = (uint8_t)to_port;
	r[5] = (uint8_t)to;
}

static void the_view_reads_back_as_a_discovery(void **state)
{
	uint8_t nr[3 * 112], pir[7 * 72], lr[4 * 8];
	struct sa_table tn, tp, tl;
	char *text = NULL, err[160];
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);
	struct topology *f;
	const struct topo_node *sw, *a, *b;
	const struct topo_port *p;

	(void)state;
	node_record(nr, 1, 2, 4, SW_GUID, 0, "leaf-1");
	node_record(nr + 112, 2, 1, 1, A_GUID, 1, "a mlx5_0");
	node_record(nr + 224, 3, 1, 1, B_GUID, 1, "b\nmlx5_0");
	for (unsigned i = 0; i < 5; i++)
		port_record(pir + i * 72, 1, i, i == 1 || i == 3); /* port 0 too, as opensm */
	port_record(pir + 5 * 72, 2, 1, true);
	port_record(pir + 6 * 72, 3, 1, true);
	link_record(lr, 1, 1, 2, 1);
	link_record(lr + 8, 2, 1, 1, 1);
	link_record(lr + 16, 1, 3, 3, 1);
	link_record(lr + 24, 3, 1, 1, 3);
	take_all(&tn, IB_SA_ATTR_NODERECORD, nr, 3, 112, 168);
	take_all(&tp, IB_SA_ATTR_PORTINFORECORD, pir, 7, 72, 168);
	take_all(&tl, IB_SA_ATTR_LINKRECORD, lr, 4, 8, 168);
	assert_int_equal(sa_view_print(out, &tn, &tp, &tl, 2, err, sizeof(err)), 0);
	fprintf(out, "done 0.5\n");
	fclose(out);
	f = topology_parse(text, len, NULL, err, sizeof(err));
	assert_non_null(f);
	assert_true(f->from_sa);
	assert_non_null(f->portinfo);
	assert_int_equal(f->n_nodes, 3);
	assert_int_equal(f->n_ports, 6); /* the switch's 4, a host's one each */
	sw = topology_node(f, SW_GUID);
	a = topology_node(f, A_GUID);
	b = topology_node(f, B_GUID);
	assert_non_null(sw);
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(sw->type, 2);
	assert_int_equal(sw->lid, 1);
	assert_string_equal(sw->desc, "leaf-1");
	assert_string_equal(b->desc, "b mlx5_0");
	assert_true(sw->has_ident && sw->vendor_id == 0x2c9 && sw->device_id == 0xd2f2);
	/* routes from a (LID 2): a itself, the switch behind its port 1, b
	 * behind the switch's port 3 */
	assert_true(a->has_route && a->route_hops == 0);
	assert_true(sw->has_route && sw->route_hops == 1 && sw->route[0] == 1);
	assert_true(b->has_route && b->route_hops == 2 && b->route[0] == 1 && b->route[1] == 3);
	p = topology_port(f, (size_t)(sw - f->nodes), 3);
	assert_non_null(p);
	assert_true(p->peer_guid == B_GUID && p->peer_port == 1 && p->lid == 1 && p->speed > 0);
	assert_true(p->port_guid == SW_GUID);
	p = topology_port(f, (size_t)(sw - f->nodes), 2);
	assert_true(p->peer_guid == 0 && p->speed == 0); /* down */
	assert_int_equal(mad_get_field(f->portinfo[p - f->ports], 0, IB_PORT_STATE_F), 1);
	p = topology_port(f, (size_t)(a - f->nodes), 1);
	assert_true(p->peer_guid == SW_GUID && p->peer_port == 1 && p->lid == 2);
	assert_true(p->port_guid == A_GUID + 1);
	assert_int_equal(mad_get_field(f->portinfo[p - f->ports], 0, IB_PORT_STATE_F), 4);
	topology_free(f);
	free(text);
	sa_table_free(&tn);
	sa_table_free(&tp);
	sa_table_free(&tl);
}

static void records_that_contradict_each_other_are_refused(void **state)
{
	uint8_t nr[2 * 112];
	struct sa_table tn, tp, tl;
	char err[160];

	(void)state;
	node_record(nr, 1, 2, 4, SW_GUID, 0, "leaf-1");
	node_record(nr + 112, 1, 1, 1, A_GUID, 1, "a"); /* the same LID */
	take_all(&tn, IB_SA_ATTR_NODERECORD, nr, 2, 112, 0);
	sa_table_init(&tp, IB_SA_ATTR_PORTINFORECORD);
	sa_table_init(&tl, IB_SA_ATTR_LINKRECORD);
	assert_int_equal(sa_view_print(stdout, &tn, &tp, &tl, 1, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "LID 1 given to two ports"));
	sa_table_free(&tn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(segments_and_a_whole_answer_give_the_same_records),
		cmocka_unit_test(what_is_not_the_answer_is_refused),
		cmocka_unit_test(the_view_reads_back_as_a_discovery),
		cmocka_unit_test(records_that_contradict_each_other_are_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
