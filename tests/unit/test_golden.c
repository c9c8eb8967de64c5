/* Golden walks of every table and scalar group, as lldpd's check_snmp does:
 * each area's handlers are registered in-process (agent_harness) over a
 * fixture snapshot, walked with GETNEXT, and every answer (OID, type,
 * value) compared with a committed list in tests/golden/. A change of an
 * answer shows as a diff of that list.
 *
 * IBSNMPD_GOLDEN_UPDATE=1 writes the lists instead (then review the diff
 * with git). Values that depend on the clock are masked ("*"). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <infiniband/mad.h>

#include "ibsnmpd/area.h"
#include "ibsnmpd/agent_mib.h"
#include "ibsnmpd/config.h"
#include "ibsnmpd/fabric.h"
#include "ibsnmpd/mad_engine.h"
#include "ibsnmpd/mib_oids.h"
#include "ibsnmpd/node.h"
#include "ibsnmpd/pm.h"
#include "ibsnmpd/prom.h"
#include "ibsnmpd/sma.h"
#include "ibsnmpd/topology.h"

#include "agent_harness.h"
#include "fixtures.h"
#include "dcbx/dcbx_internal.h"
#include "pkey/pkey_policy.h"

#ifndef GOLDEN_DIR
#error "GOLDEN_DIR: where the committed lists are"
#endif

/* ---- the walk and its list ------------------------------------------------------- */

struct walk {
	char *text;
	size_t len, cap;
};

static void add(struct walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(struct walk *w, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(w->text + w->len, w->cap - w->len, fmt, ap);
		va_end(ap);
		if (n >= 0 && (size_t)n < w->cap - w->len)
			break;
		w->cap = w->cap ? 2 * w->cap + (size_t)n : 65536;
		w->text = realloc(w->text, w->cap);
		assert_non_null(w->text);
	}
	w->len += (size_t)n;
}

static bool printable(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] < 0x20 || p[i] > 0x7e)
			return false;
	return true;
}

/* Values that depend on the clock: shown as "*". */
static const char *const masked[] = {
	".1.3.6.1.2.1.1.3.0",                        /* sysUpTime */
	".1.3.6.1.4.1.8072.9999.9999.117.1.1.6.1.4.", /* ibsnmpdCacheAge */
	".1.3.6.1.4.1.8072.9999.9999.117.1.1.6.1.7.", /* ibsnmpdCacheLastDuration */
	".1.3.6.1.4.1.8072.9999.9999.117.3.1.3.1.0",  /* ibPartitionFile: a temporary path */
};

static void add_varbind(struct walk *w, const netsnmp_variable_list *vb)
{
	char name[512];
	bool mask = false;

	harness_oid_string(vb->name, vb->name_length, name, sizeof(name));
	for (size_t i = 0; i < sizeof(masked) / sizeof(masked[0]); i++)
		mask |= !strncmp(name, masked[i], strlen(masked[i]));
	add(w, "%s ", name);
	switch (vb->type) {
	case ASN_INTEGER: add(w, "INTEGER"); break;
	case ASN_UNSIGNED: add(w, "Gauge32"); break;
	case ASN_COUNTER: add(w, "Counter32"); break;
	case ASN_TIMETICKS: add(w, "Timeticks"); break;
	case ASN_COUNTER64: add(w, "Counter64"); break;
	case ASN_OCTET_STR: add(w, "OCTETS"); break;
	case ASN_OBJECT_ID: add(w, "OID"); break;
	default: add(w, "type-0x%02x", vb->type); break;
	}
	if (mask) {
		add(w, " *\n");
		return;
	}
	switch (vb->type) {
	case ASN_INTEGER: add(w, " %ld\n", *vb->val.integer); break;
	case ASN_UNSIGNED:
	case ASN_COUNTER:
	case ASN_TIMETICKS: add(w, " %lu\n", (unsigned long)*vb->val.integer); break;
	case ASN_COUNTER64:
		add(w, " %llu\n", (unsigned long long)vb->val.counter64->high << 32 |
					  vb->val.counter64->low);
		break;
	case ASN_OCTET_STR:
		if (printable(vb->val.string, vb->val_len)) {
			add(w, " \"");
			for (size_t i = 0; i < vb->val_len; i++)
				add(w, "%s%c", vb->val.string[i] == '"' || vb->val.string[i] == '\\'
						   ? "\\" : "", vb->val.string[i]);
			add(w, "\"\n");
		} else {
			add(w, " hex:");
			for (size_t i = 0; i < vb->val_len; i++)
				add(w, "%02x", vb->val.string[i]);
			add(w, "\n");
		}
		break;
	case ASN_OBJECT_ID: {
		char o[512];

		harness_oid_string(vb->val.objid, vb->val_len / sizeof(oid), o, sizeof(o));
		add(w, " %s\n", o);
		break;
	}
	default: add(w, "\n"); break;
	}
}

/* GETNEXT from root while the answers stay under it, in a context (NULL:
 * the default one). */
static void walk_subtree(struct walk *w, const char *context, const oid *root, size_t len)
{
	oid at[MAX_OID_LEN];
	size_t at_len = len;

	memcpy(at, root, len * sizeof(oid));
	for (;;) {
		netsnmp_variable_list *vars = NULL;
		netsnmp_pdu *pdu;
		netsnmp_variable_list *vb;

		snmp_varlist_add_variable(&vars, at, at_len, ASN_NULL, NULL, 0);
		pdu = harness_request_in(context, SNMP_MSG_GETNEXT, vars);
		vb = pdu->variables;
		if (pdu->errstat != SNMP_ERR_NOERROR || vb->type == SNMP_ENDOFMIBVIEW ||
		    vb->name_length < len || memcmp(vb->name, root, len * sizeof(oid))) {
			snmp_free_pdu(pdu);
			return;
		}
		add_varbind(w, vb);
		memcpy(at, vb->name, vb->name_length * sizeof(oid));
		at_len = vb->name_length;
		snmp_free_pdu(pdu);
	}
}

/* The walk against tests/golden/NAME.txt: equal, or (IBSNMPD_GOLDEN_UPDATE)
 * written there. A difference fails the test with diff -u's output. */
static void compare(struct walk *w, const char *name)
{
	char path[512], got[512], cmd[1600];
	FILE *f;
	char *want = NULL;
	long size;

	snprintf(path, sizeof(path), "%s/%s.txt", GOLDEN_DIR, name);
	if (getenv("IBSNMPD_GOLDEN_UPDATE")) {
		f = fopen(path, "w");
		assert_non_null(f);
		fwrite(w->text, 1, w->len, f);
		fclose(f);
		free(w->text);
		return;
	}
	f = fopen(path, "r");
	if (f) {
		fseek(f, 0, SEEK_END);
		size = ftell(f);
		rewind(f);
		want = calloc(1, (size_t)size + 1);
		if (fread(want, 1, (size_t)size, f) != (size_t)size)
			size = -1;
		fclose(f);
	}
	if (!want || strlen(want) != w->len || memcmp(want, w->text, w->len)) {
		snprintf(got, sizeof(got), "/tmp/ibsnmpd-golden-%s.%ld.txt", name, (long)getpid());
		f = fopen(got, "w");
		assert_non_null(f);
		fwrite(w->text, 1, w->len, f);
		fclose(f);
		snprintf(cmd, sizeof(cmd), "diff -u %s %s >&2; rm -f %s", path, got, got);
		fprintf(stderr, "golden walk %s differs (IBSNMPD_GOLDEN_UPDATE=1 writes it):\n",
			name);
		if (system(cmd) < 0)
			perror("diff");
		free(want);
		free(w->text);
		fail();
	}
	free(want);
	free(w->text);
}

/* ---- SMA-MIB: a switch of 3 ports ------------------------------------------------------ */

#define SW_GUID 0x0002c90300000001ull

static struct sma_collector sw;
static const struct sma_nodeinfo sw_info = {
	.description = "sw1 SwitchX", .base_version = 1, .class_version = 1, .node_type = 2,
	.num_ports = 3, .system_image_guid = SW_GUID, .node_guid = SW_GUID, .port_guid = SW_GUID,
	.partition_cap = 8, .device_id = 0xc738, .revision = 0xa1, .local_port = 0,
	.vendor_id = 0x0002c9,
};
static const struct sma_switch_snapshot sw_switch = {
	.present = true,
	.si = {.lft_cap = 49152, .rft_cap = 16, .mft_cap = 512, .lft_top = 5, .default_port = 0,
	       .def_mcast_pri_port = 255, .def_mcast_not_pri_port = 255, .lifetime = 18,
	       .port_state_change = 1, .lids_per_port = 0, .partition_enf_cap = 8,
	       .inb_enf_cap = 1, .outb_enf_cap = 1, .enhanced_port0 = 0, .mft_top = 0xc000},
};
static struct sma_port_entry sw_ports[4];
static struct mib_row sw_all_rows[4], sw_data_rows[3];
static struct sma_port_snapshot sw_port_snapshot;

/* A table group's snapshot of n entries of size sz, each indexed by index(). */
static struct sma_table_snapshot *table(int t, struct sma_table_snapshot *s, void *entries,
					size_t n, size_t sz,
					void (*index)(const void *e, struct mib_row *r))
{
	struct mib_row *rows = calloc(n ? n : 1, sizeof(*rows));

	for (size_t i = 0; i < n; i++) {
		rows[i].data = (const char *)entries + i * sz;
		index(rows[i].data, &rows[i]);
	}
	s->entries[t] = entries;
	s->table[t] = (struct mib_rows){.count = n, .rows = rows};
	mib_rows_sort(&s->table[t]);
	return s;
}

static void idx_guid(const void *e, struct mib_row *r)
{
	const struct sma_guid_entry *g = e;

	r->index[0] = g->port;
	r->index[1] = g->index;
	r->index_len = 2;
}

static void idx_pkey(const void *e, struct mib_row *r)
{
	const struct sma_pkey_entry *p = e;

	r->index[0] = p->port;
	r->index[1] = p->index;
	r->index_len = 2;
}

static void idx_sl2vl(const void *e, struct mib_row *r)
{
	const struct sma_sl2vl_entry *s = e;

	r->index[0] = s->out_port;
	r->index[1] = s->in_port;
	r->index[2] = s->sl;
	r->index_len = 3;
}

static void idx_vlarb(const void *e, struct mib_row *r)
{
	const struct sma_vlarb_entry *v = e;

	r->index[0] = v->port;
	r->index[1] = v->n;
	r->index_len = 2;
}

static void idx_lft(const void *e, struct mib_row *r)
{
	r->index[0] = ((const struct sma_lft_entry *)e)->lid;
	r->index_len = 1;
}

static void idx_mft(const void *e, struct mib_row *r)
{
	r->index[0] = ((const struct sma_mft_entry *)e)->mlid;
	r->index_len = 1;
}

static void idx_rft(const void *e, struct mib_row *r)
{
	r->index[0] = ((const struct sma_rft_row *)e)->index;
	r->index_len = 1;
}

static void idx_port(const void *e, struct mib_row *r)
{
	r->index[0] = *(const unsigned *)e; /* each per-port entry starts with its port */
	r->index_len = 1;
}

static struct sma_guid_entry sw_guids[] = {{0, 0, SW_GUID}};
static struct sma_pkey_entry sw_pkeys[] = {{0, 0, 0xffff}, {1, 0, 0xffff}, {1, 1, 0x8123},
					   {2, 0, 0x7fff}};
static struct sma_sl2vl_entry sw_sl2vl[32];
static struct sma_vlarb_entry sw_vlarb_high[] = {{1, 0, 0, 255}, {1, 1, 1, 64}};
static struct sma_vlarb_entry sw_vlarb_low[] = {{1, 0, 0, 32}, {1, 1, 1, 32}, {2, 0, 0, 1}};
static struct sma_lft_entry sw_lft[] = {{1, 0}, {2, 1}, {3, 2}, {4, 2}, {5, 255}};
static struct sma_mft_entry sw_mft[] = {{0xc000, {0x70}}, {0xc001, {0x40}}};
static struct sma_rft_row sw_rft[] = {{1, {6, 1, 0, 3}}, {2, {7, 1, 2, 1}}};
static struct sma_sminfo_entry sw_sminfo[] = {
	{0, {.guid = SW_GUID, .sm_key = 0x1122334455667788ull, .act_count = 42, .priority = 14,
	     .state = 3}},
};
static struct sma_vdiag_entry sw_vdiag[] = {{0, {1, {0xde, 0xad}}, 0x8012}, {1, {0, {0}}, 2}};
static struct sma_led_entry sw_led[] = {{1, 1}, {2, 0}, {3, 0}};
static struct sma_table_snapshot sw_tables[SMA_GROUPS];

static void sw_fixture(void)
{
	static const struct sma_portinfo up = {
		.lid = 0, .sm_lid = 1, .state = 4, .phys_state = 5, .width_enabled = 3,
		.width_supported = 3, .width_active = 2, .speed_supported = 7, .speed_enabled = 7,
		.speed_active = 4, .neighbor_mtu = 5, .mtu_cap = 5, .vl_cap = 4, .oper_vls = 4,
		.vlarb_high_cap = 8, .vlarb_low_cap = 8, .hoq_life = 16, .vl_stall_count = 7,
		.link_down_default = 2, .mkey_protect = 0, .local_phys_err = 8, .overrun_err = 8,
		.guid_cap = 1, .resp_time = 8, .subnet_timeout = 18, .init_type_reply = 0,
	};

	for (unsigned p = 0; p <= 3; p++) {
		sw_ports[p].num = p;
		sw_ports[p].pi = up;
		sw_all_rows[p] = (struct mib_row){.index = {p}, .index_len = 1, .data = &sw_ports[p]};
		if (p)
			sw_data_rows[p - 1] = sw_all_rows[p];
	}
	/* port 0: the switch's management port */
	sw_ports[0].pi.lid = 1;
	sw_ports[0].pi.mkey = 0x0102030405060708ull;
	sw_ports[0].pi.gid_prefix = 0xfe80000000000000ull;
	sw_ports[0].pi.cap_mask = 1u << 1 | 1u << 3 | 1u << 5 | 1u << 9 | 1u << 11;
	sw_ports[0].pi.lmc = 0;
	sw_ports[0].pi.mkey_lease = 15;
	sw_ports[0].pi.mkey_violations = 2;
	sw_ports[0].pi.pkey_violations = 3;
	sw_ports[0].pi.qkey_violations = 4;
	/* port 3: not linked */
	sw_ports[3].pi.state = 1;
	sw_ports[3].pi.phys_state = 2;
	sw_ports[3].pi.width_active = 0;
	sw_ports[3].pi.speed_active = 0;
	/* port 2: an HDR port (LinkSpeedExt) */
	sw_ports[2].pi.speed_ext_supported = 7;
	sw_ports[2].pi.speed_ext_enabled = 7;
	sw_ports[2].pi.speed_ext_active = 4;
	sw_port_snapshot = (struct sma_port_snapshot){
		.mgmt_port = 0, .mgmt = &sw_ports[0], .count = 4, .ports = sw_ports,
		.data_ports = {.count = 3, .rows = sw_data_rows},
		.all_ports = {.count = 4, .rows = sw_all_rows},
	};
	for (unsigned sl = 0; sl < 16; sl++) {
		sw_sl2vl[sl] = (struct sma_sl2vl_entry){1, 2, sl, sl % 4};
		sw_sl2vl[16 + sl] = (struct sma_sl2vl_entry){2, 1, sl, 15 - sl % 8};
	}
#define TABLE(g, t, arr, fn) \
	table(t, &sw_tables[g], arr, sizeof(arr) / sizeof(arr[0]), sizeof(arr[0]), fn)
	TABLE(SMA_GUID_INFO, 0, sw_guids, idx_guid);
	TABLE(SMA_PKEY, 0, sw_pkeys, idx_pkey);
	TABLE(SMA_SL2VL, 0, sw_sl2vl, idx_sl2vl);
	TABLE(SMA_VLARB, 0, sw_vlarb_high, idx_vlarb);
	TABLE(SMA_VLARB, 1, sw_vlarb_low, idx_vlarb);
	TABLE(SMA_LFT, 0, sw_lft, idx_lft);
	TABLE(SMA_MFT, 0, sw_mft, idx_mft);
	TABLE(SMA_RFT, 0, sw_rft, idx_rft);
	TABLE(SMA_SM_INFO, 0, sw_sminfo, idx_port);
	TABLE(SMA_VENDOR_DIAG, 0, sw_vdiag, idx_port);
	TABLE(SMA_LED_INFO, 0, sw_led, idx_port);
#undef TABLE
	sw.group[SMA_NODE_INFO].snapshot = (void *)&sw_info;
	sw.group[SMA_SWITCH_INFO].snapshot = (void *)&sw_switch;
	sw.group[SMA_PORT_INFO].snapshot = &sw_port_snapshot;
	for (int g = SMA_GUID_INFO; g < SMA_GROUPS; g++)
		sw.group[g].snapshot = &sw_tables[g];
}

static void sma_mib_of_a_switch(void **state)
{
	static const oid sma[] = {OID_IB_SMA_MIB};
	static const oid port_ext[] = {OID_IBSNMPD_PORT_EXT_TABLE};
	static const oid internet[] = {1, 3, 6, 1};
	static struct sma_mib_regs regs;
	static struct node_context_regs context;
	static struct cache_group no_dir; /* no directory: no mib-2 instances */
	static struct sma_collector *node = &sw;
	struct walk w = {0};

	(void)state;
	sw_fixture();
	assert_int_equal(sma_mib_register(&regs, &node), 0);
	walk_subtree(&w, NULL, sma, OID_LENGTH(sma));
	walk_subtree(&w, NULL, port_ext, OID_LENGTH(port_ext));
	sma_mib_unregister(&regs);
	/* the same in a node's context, through its one registration, walked
	 * from the top: SMA-MIB, then ibsnmpdPortExtTable, nothing else */
	memset(&no_dir, 0, sizeof(no_dir));
	assert_int_equal(node_mib_register_context(&context, &no_dir, 0x0002c90300000001ull,
						   "ib-0002c90300000001", &node,
						   (struct mib_asked){0}), 0);
	add(&w, "# in context ib-0002c90300000001\n");
	walk_subtree(&w, "ib-0002c90300000001", internet, OID_LENGTH(internet));
	node_mib_unregister_context(&context);
	for (int g = SMA_GUID_INFO; g < SMA_GROUPS; g++)
		for (int t = 0; t < 2; t++)
			free(sw_tables[g].table[t].rows);
	compare(&w, "sma");
}

/* ---- the subnet: a discovery, its links, its counters ------------------------------- */

#define SW1 0x1ull
#define SW2 0x2ull
#define CA1 0x10ull

static const char discovery[] =
	"port 0000000000000001 1 1 0000000000000001 0000000000000010 1\n"
	"port 0000000000000001 2 1 0000000000000001 0000000000000000 0\n"
	"port 0000000000000001 3 1 0000000000000001 0000000000000002 3\n"
	"node 0000000000000001 2 3 1 sw1\n"
	"ident 0000000000000001 2c9 c738 a1\n"
	"port 0000000000000002 3 2 0000000000000002 0000000000000001 3\n"
	"node 0000000000000002 2 3 2 sw2\n"
	"ident 0000000000000002 2c9 c738 a1\n"
	"port 0000000000000010 1 5 0000000000000011 0000000000000001 1\n"
	"node 0000000000000010 1 1 5 ca1 HCA-1\n"
	"ident 0000000000000010 2c9 1003 0\n"
	"done 0.01\n";

static struct topology *subnet(void)
{
	char err[200];
	struct topology *f = topology_parse(discovery, strlen(discovery), NULL, err, sizeof(err));

	assert_non_null(f);
	return (struct topology *)topology_get(f);
}

/* PortInfo of a QDR port (LinkSpeed 1|2|4), 4X when up. */
static void portinfo(struct fabric_reading *r, uint64_t guid, unsigned port, bool up,
		     unsigned width_active)
{
	fixture_portinfo(r, guid, port, guid == CA1 ? 5 : (unsigned)guid, up, width_active, 3, 7);
	mad_set_field(r->data, 0, IB_PORT_NEIGHBOR_MTU_F, 5);
	mad_set_field(r->data, 0, IB_PORT_OPER_VLS_F, 4);
}

/* Two sweeps: every link up, then sw1/3-sw2/3 down (a notification's row). */
static struct fabric_snapshot *links(const struct topology *f)
{
	struct fabric_reading r[5];
	struct fabric_build in = {.fabric = f, .readings = r, .n_readings = 5,
				  .now = 1700000000};
	struct fabric_snapshot *first, *second;

	portinfo(&r[0], SW1, 1, true, 2);
	portinfo(&r[1], SW1, 2, false, 0);
	portinfo(&r[2], SW1, 3, true, 2);
	portinfo(&r[3], SW2, 3, true, 2);
	portinfo(&r[4], CA1, 1, true, 2);
	first = fabric_build(&in);
	assert_non_null(first);
	portinfo(&r[2], SW1, 3, false, 0);
	portinfo(&r[3], SW2, 3, false, 0);
	in.prev = first;
	in.now = 1700000600;
	second = fabric_build(&in);
	assert_non_null(second);
	fabric_snapshot_free(first);
	return second;
}

/* The PM sweep's snapshot of the discovery's ports, with counters. */
static struct pm_snapshot *counters(const struct topology *f)
{
	struct pm_snapshot *s = calloc(1, sizeof(*s));

	s->fabric = topology_get(f);
	s->n = f->n_ports;
	s->ports = calloc(s->n, sizeof(*s->ports));
	s->rows.rows = calloc(s->n, sizeof(struct mib_row));
	s->node_capmask = calloc(f->n_nodes, sizeof(unsigned));
	for (size_t k = 0; k < f->n_nodes; k++)
		s->node_capmask[k] = PM_CAPMASK_KNOWN | PM_CAP_EXT_WIDTH |
				     (f->nodes[k].type == 2 ? PM_CAP_ALL_PORT_SELECT : 0);
	for (size_t i = 0; i < s->n; i++) {
		struct pm_port_state *st = &s->ports[i];
		const struct topo_port *p = &f->ports[i];
		struct mib_row *r = &s->rows.rows[s->rows.count++];

		st->node = &f->nodes[p->node];
		st->guid = st->node->guid;
		st->port = p->port;
		st->lid = p->lid;
		st->extended = true;
		st->have_raw = true;
		st->raw.symbol_errors = (uint32_t)(3 * i);
		st->raw.link_downed = (uint32_t)i % 2;
		st->raw.rcv_errors = i == 0 ? 5 : 0;
		st->raw.xmit_discards = i == 2 ? 2 : 0;
		st->raw.xmit_wait = (uint32_t)(1000 * i);
		st->raw.xmit_data = (uint32_t)(100 + i);
		st->raw.rcv_data = (uint32_t)(200 + i);
		st->raw.xmit_pkts = (uint32_t)(10 + i);
		st->raw.rcv_pkts = (uint32_t)(20 + i);
		st->xmit_ucast_pkts = 7 + i;
		st->rcv_ucast_pkts = 8 + i;
		st->xmit_mcast_pkts = i;
		st->rcv_mcast_pkts = 2 * i;
		st->xmit_data = 0x100000000ull + i;
		st->rcv_data = 0x200000000ull + i;
		st->xmit_pkts = 1000 + i;
		st->rcv_pkts = 2000 + i;
		st->have_details = true;
		st->details = (struct pm_error_details){.local_phys = (uint16_t)(i == 0 ? 4 : 0),
							.malformed = (uint16_t)(i == 0 ? 1 : 0),
							.inactive = (uint16_t)(i == 2 ? 2 : 0)};
		st->discontinuity = 1700000000;
		st->last_read = 1700000600;
		st->stale = i == 3;
		mib_index_put_guid(r->index, st->guid);
		r->index[MIB_GUID_INDEX_LEN] = st->port;
		r->index_len = MIB_GUID_INDEX_LEN + 1;
		r->data = st;
	}
	return s;
}

static void fabric_port_table_and_baseline(void **state)
{
	static const oid fabric_oid[] = {OID_IBSNMPD_FABRIC};
	struct topology *f = subnet();
	static struct fabric_area area;
	struct walk w = {0};

	(void)state;
	memset(&area, 0, sizeof(area));
	area.group.snapshot = links(f);
	assert_int_equal(fabric_mib_register(&area.mib, &area, NULL), 0);
	walk_subtree(&w, NULL, fabric_oid, OID_LENGTH(fabric_oid));
	fabric_mib_unregister(&area.mib);
	fabric_snapshot_free(area.group.snapshot);
	topology_put(f);
	compare(&w, "fabric");
}

static void pm_tables_and_ib_pm_mib(void **state)
{
	static const oid pm_mib[] = {OID_PM_MIB_OBJECTS};
	static const oid port_table[] = {OID_IBSNMPD_PM_PORT_TABLE};
	static const oid detail_table[] = {OID_IBSNMPD_PM_ERROR_DETAIL_TABLE};
	static struct pm_area pm;
	static struct cache_group discovery_group;
	static struct pm_sample_state sampled[1];
	static struct pm_samples_snapshot samples = {1, sampled};
	struct topology *f = subnet();
	struct walk w = {0};

	(void)state;
	memset(&pm, 0, sizeof(pm));
	discovery_group.snapshot = f;
	pm.topology = &discovery_group;
	pm.sweep.snapshot = counters(f);
	/* sw1 is being sampled */
	sampled[0] = (struct pm_sample_state){
		.guid = SW1, .have_ctl = true, .have_res = true,
		.ctl = {.opcode = 1, .port_select = 1, .tick = 2, .counter_width = 3,
			.counter_mask = {1, 1}, .sample_mechanisms = 1, .sample_status = 2,
			.sample_start = 100, .sample_interval = 1000, .tag = 0x1234,
			.counter_select = {1, 2, 3}},
		.res = {.tag = 0x1234, .sample_status = 2, .counter = {11, 22, 33}},
	};
	pm.samples.snapshot = &samples;
	pm_view_init(&pm);
	assert_int_equal(pm_port_select_set(&pm, SW1, 3), 0);
	pm_view_refresh(&pm);
	assert_int_equal(pm_mib_register(&pm.mib, &pm, NULL), 0);
	walk_subtree(&w, NULL, pm_mib, OID_LENGTH(pm_mib));
	walk_subtree(&w, NULL, port_table, OID_LENGTH(port_table));
	walk_subtree(&w, NULL, detail_table, OID_LENGTH(detail_table));
	pm_mib_unregister(&pm.mib);
	cache_group_stop(&pm.view);
	pm_snapshot_free(pm.sweep.snapshot);
	free(pm.select);
	topology_put(f);
	compare(&w, "pm");
}

static void node_table_and_a_switch_context(void **state)
{
	static const oid node_table[] = {OID_IBSNMPD_NODE_TABLE};
	static const oid system[] = {1, 3, 6, 1, 2, 1, 1};
	static const oid interfaces[] = {1, 3, 6, 1, 2, 1, 2};
	static const oid ifx[] = {1, 3, 6, 1, 2, 1, 31};
	static struct cache_group dir;
	static struct node_table_mib table;
	static struct node_context_regs regs;
	struct topology *f = subnet();
	struct fabric_snapshot *ports = links(f);
	struct pm_snapshot *pm = counters(f);
	static const oid entity[] = {1, 3, 6, 1, 2, 1, 47};
	static const oid lldp[] = {1, 0, 8802, 1, 1, 2};
	/* the agent started 1,000 s before the first sweep (links() at 1700000000) */
	struct node_dir_build in = {.fabric = f, .ports = ports, .counters = pm,
				    .types_mask = 1u << 1 | 1u << 2, .hold_s = 3600,
				    .now = 1700000600, .boot = 1699999000};
	struct walk w = {0};

	(void)state;
	memset(&dir, 0, sizeof(dir));
	dir.snapshot = node_dir_build(&in);
	assert_non_null(dir.snapshot);
	assert_int_equal(node_table_register(&table, &dir), 0);
	walk_subtree(&w, NULL, node_table, OID_LENGTH(node_table));
	node_table_unregister(&table);
	static struct sma_collector *no_sma; /* SMA-MIB not read: no instances */

	assert_int_equal(node_mib_register_context(&regs, &dir, SW1, "ib-0000000000000001",
						   &no_sma, (struct mib_asked){0}), 0);
	add(&w, "# in context ib-0000000000000001\n");
	walk_subtree(&w, "ib-0000000000000001", system, OID_LENGTH(system));
	walk_subtree(&w, "ib-0000000000000001", interfaces, OID_LENGTH(interfaces));
	walk_subtree(&w, "ib-0000000000000001", ifx, OID_LENGTH(ifx));
	walk_subtree(&w, "ib-0000000000000001", entity, OID_LENGTH(entity));
	walk_subtree(&w, "ib-0000000000000001", lldp, OID_LENGTH(lldp));
	node_mib_unregister_context(&regs);
	node_dir_free(dir.snapshot);
	fabric_snapshot_free(ports);
	pm_snapshot_free(pm);
	topology_put(f);
	compare(&w, "node");
}

/* ---- the partition policy ------------------------------------------------------------- */

static void partition_mib_of_a_file(void **state)
{
	static const oid partition_mib[] = {OID_IBSNMPD_PARTITION_MIB};
	static const char text[] =
		"Default=0x7fff, ipoib : ALL=full ;\n"
		"storage=0x0123, ipoib, mtu=5, rate=7, sl=1 : 0x0002c90300a1b2c3=full, "
		"0x0002c90300a1b2c4 ;\n"
		"compute=0x0456, defmember=limited : 0x0002c90300a1b2c5 ;\n";
	char dir[] = "/tmp/ibsnmpd-golden-pkey.XXXXXX";
	struct pkey_policy *pp;
	struct walk w = {0};
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	pkey_area_def.config_defaults();
	snprintf(pkey_cfg.partition_file, sizeof(pkey_cfg.partition_file), "%s/p.conf", dir);
	f = fopen(pkey_cfg.partition_file, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	pp = pkey_policy_start(NULL, 60); /* no subnet: every member unreachable */
	assert_non_null(pp);
	assert_int_equal(pkey_mib_register(&pp->mib, pp, NULL), 0);
	walk_subtree(&w, NULL, partition_mib, OID_LENGTH(partition_mib));
	pkey_mib_unregister(&pp->mib);
	pkey_policy_stop(pp);
	unlink(pkey_cfg.partition_file);
	rmdir(dir);
	compare(&w, "partition");
}

/* ---- DCBX: one port with a peer, one without --------------------------------------- */

static void dcbx_mib_of_two_ports(void **state)
{
	static const oid dcbx_mib[] = {OID_LLDP_XDCBX_MIB};
	static struct dcbx_backend backend = {.fd = -1};
	static struct dcbx_mib mib;
	struct dcbx_port *ports = calloc(2, sizeof(*ports));
	struct walk w = {0};

	(void)state;
	ports[0] = fixture_dcbx_port(5, "eth2", true);
	ports[1] = fixture_dcbx_port(6, "eth3", false);
	backend.group.snapshot = dcbx_snapshot_new(ports, 2);
	assert_int_equal(dcbx_mib_register(&mib, &backend, NULL), 0);
	walk_subtree(&w, NULL, dcbx_mib, OID_LENGTH(dcbx_mib));
	dcbx_mib_unregister(&mib);
	dcbx_snapshot_free(backend.group.snapshot);
	compare(&w, "dcbx");
}

/* ---- the agent's statistics: an area of two cache groups ----------------------------- */

struct two_groups {
	struct cache_group filled, empty;
};

static void *two_groups_start(const struct area_env *env)
{
	static struct two_groups g;

	(void)env;
	g.filled = (struct cache_group){.name = "filled", .lifetime_s = 15, .owner = &g,
					.snapshot = &g, .attempts = 3, .last_failed = true};
	g.empty = (struct cache_group){.name = "empty", .lifetime_s = 300, .owner = &g};
	return &g;
}

static void two_groups_stop(void *self)
{
	(void)self;
}

static const struct cache_decl two_caches[] = {
	{20, "emptyGroup", 300, offsetof(struct two_groups, empty)},
	{19, "filledGroup", 15, offsetof(struct two_groups, filled)},
};

static const struct area_def two_groups_area = {
	.name = "a test area", .caches = two_caches, .n_caches = 2,
	.start = two_groups_start, .stop = two_groups_stop,
};

static void agent_statistics_and_cache_table(void **state)
{
	static const oid stats[] = {OID_IBSNMPD_STATS};
	static const struct area_def *const list[] = {&two_groups_area, NULL};
	const struct area_env env = {0};
	struct walk w = {0};

	(void)state;
	assert_int_equal(areas_start(list, &env), 0);
	assert_int_equal(agent_mib_register(NULL), 0);
	walk_subtree(&w, NULL, stats, OID_LENGTH(stats));
	agent_mib_unregister();
	areas_stop();
	compare(&w, "agent");
}

/* The Prometheus text (src/prom/) of the same subnet, in both formats: the
 * links (one of them down), the counters, and on the CA's port an RS-FEC
 * reading and a bit error rate. */
static void prometheus_text_of_the_subnet(void **state)
{
	struct topology *f = subnet();
	struct fabric_snapshot *ports = links(f);
	struct pm_snapshot *pm = counters(f);
	struct prom_sources src = {
		.version = "9.9.9", .topology = f, .pm = pm, .fabric = ports,
		.mads = {.sent = 120, .answered = 110, .timeouts = 3, .dropped = 1, .in_flight = 2},
		.have_traps = true, .traps = {.received = 4},
		.notify = {[NOTIFY_IB_TRAP] = {5, 1}, [NOTIFY_LINK] = {2, 0}},
		.caches = {{"pmCounters", 15, 40, 3, 0.052, false}, {"fabricPorts", 15, 7, -1, 0, true}},
		.n_caches = 2,
	};
	struct fabric_port *ca = (struct fabric_port *)fabric_find(ports, CA1, 1);
	struct pm_port_state *ca_pm = &pm->ports[pm->n - 1];
	struct prom_render r;
	char block[PROM_LINE_MAX * 4];
	size_t n;
	struct alarm_list conds = {0};
	struct alarm_build alarms_in = {.conds = &conds, .now = 1790000000, .now_ticks = 500};

	(void)state;
	/* the active alarms: the link down, as the fabric area says it */
	fabric_alarms(ports, &conds);
	src.alarms = alarm_build(&alarms_in);
	alarm_list_free(&conds);
	assert_non_null(src.alarms);
	assert_non_null(ca);
	assert_int_equal(ca_pm->guid, CA1);
	ca->health.ber_valid = true;
	ca->health.ber_raw_m = 25;
	ca->health.ber_raw_e = -9;
	ca->health.have_xmit_wait = true;
	ca->health.xmit_wait_permille = 5;
	ca_pm->fec_layout = PM_FEC_RS;
	ca_pm->have_fec = true;
	ca_pm->fec = (struct pm_ext_speeds){.sync_header_errors = 1, .corrected_symbols = 4000,
					    .correctable_blocks = 300, .uncorrectable_blocks = 2};
	for (int format = PROM_TEXT; format <= PROM_OPENMETRICS; format++) {
		struct walk w = {0};

		assert_int_equal(prom_render_begin(&r, &src, (enum prom_format)format), 0);
		while ((n = prom_render_next(&r, block, sizeof(block) - 1))) {
			block[n] = '\0';
			add(&w, "%s", block);
		}
		prom_render_end(&r);
		compare(&w, format == PROM_TEXT ? "prometheus" : "openmetrics");
	}
	alarm_snapshot_free((void *)src.alarms);
	pm_snapshot_free(pm);
	fabric_snapshot_free(ports);
	topology_put(f);
}

static int setup(void **state)
{
	(void)state;
	config_set_defaults(&ibsnmpd_cfg);
	harness_start();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	harness_stop();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(sma_mib_of_a_switch),
		cmocka_unit_test(fabric_port_table_and_baseline),
		cmocka_unit_test(pm_tables_and_ib_pm_mib),
		cmocka_unit_test(node_table_and_a_switch_context),
		cmocka_unit_test(partition_mib_of_a_file),
		cmocka_unit_test(dcbx_mib_of_two_ports),
		cmocka_unit_test(agent_statistics_and_cache_table),
		cmocka_unit_test(prometheus_text_of_the_subnet),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
