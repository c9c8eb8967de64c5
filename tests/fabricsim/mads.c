/* fabricsim's answers: SMPs (LID- and directed-routed), PerfMgt and the few
 * SA attributes an agent uses when no opensm runs (InformInfo; SMInfo from
 * the SM's node). Fields through libibmad's mad_set_field; the one PortInfo
 * field Debian's libibmad lacks (XDR) by its offset. */
#include <arpa/inet.h>
#include <endian.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "fabricsim.h"

#define STATUS_UNSUP_ATTR 0x000c /* unsupported method/attribute */
#define STATUS_BAD_FIELD 0x001c  /* invalid value in an attribute field */
#define TIMEOUT_STATUS 110       /* what libumad2sim reports as a timeout */
#define FS_VENDOR_CLASS 0x0a     /* NVIDIA's vendor class (vendor.c) */
#define FS_ATTR_ACCESS_REG 0xff52 /* the SMP AccessRegister (vendor.c) */

/* PortInfo CapabilityMask and CapabilityMask2 bits (IBA 14.2.5.6) */
#define CAP_IS_SM (1u << 1)
#define CAP_CA (0x0001c848u)     /* trap, SL mapping, sys image GUID, ext speeds, cap2, CM */
#define CAP_SWITCH0 (0x0000c808u) /* trap, sys image GUID, ext speeds, cap2 */
#define CAP2_PORT_INFO_EXT 0x0002u
#define CAP2_2X_WIDTH 0x0010u
#define CAP2_HDR 0x0020u
#define CAP2_NDR 0x0400u
#define CAP2_EXT_SPEEDS2 0x0800u
#define CAP2_XDR 0x1000u

struct target {
	uint32_t node;
	uint8_t entry;   /* the port the MAD came in by (0: a switch's own) */
	bool routed;
	bool keyed;      /* an SMP with the node's M_Key (or none is set) */
	uint16_t attr;   /* what was asked: a violation's trap 256 says */
	uint32_t mod;
};

static uint32_t origin_node(const struct fabric *f, const struct fs_origin *from)
{
	return fs_node_of_port(f, from->port);
}

/* Directed route from the client's port along the initial path: each hop
 * leaves by the port the path names and enters the node at the far end of
 * that cable. rpath gets the entry ports, as ibsim's does. */
static bool walk_directed(struct fabric *f, const struct fs_origin *from, uint8_t *mad,
			  struct target *t)
{
	uint8_t path[64], rpath[64] = {0};
	unsigned hops = mad_get_field(mad, 0, IB_DRSMP_HOPCNT_F);
	uint32_t node = origin_node(f, from);
	uint8_t entry = f->ports[from->port].num;

	if (hops > 63)
		return false;
	mad_get_array(mad, 0, IB_DRSMP_PATH_F, path);
	rpath[0] = entry;
	for (unsigned i = 1; i <= hops; i++) {
		struct fs_node *n = &f->nodes[node];
		struct fs_port *out;

		if (i > 1 && n->type != FS_SWITCH)
			return false; /* only switches forward */
		if (path[i] == 0 || path[i] > n->nports)
			return false;
		out = &f->ports[n->first_port + path[i]];
		if (!out->up || out->peer == FS_NO_PORT)
			return false;
		node = fs_node_of_port(f, out->peer);
		entry = f->ports[out->peer].num;
		rpath[i] = entry;
	}
	mad_set_array(mad, 0, IB_DRSMP_RPATH_F, rpath);
	t->node = node;
	t->entry = entry;
	return true;
}

static bool route_lid(struct fabric *f, const struct fs_origin *from, uint16_t lid,
		      struct target *t)
{
	uint32_t port, here = origin_node(f, from);

	if (lid == 0xffff) { /* permissive: the local port */
		t->node = here;
		t->entry = f->ports[from->port].num;
		return true;
	}
	if (lid == 0 || lid > FS_MAX_LID || f->lid_port[lid] == UINT32_MAX)
		return false;
	port = f->lid_port[lid];
	t->node = fs_node_of_port(f, port);
	t->entry = f->ports[port].num;
	if (t->node != here && f->nodes[t->node].component != f->nodes[here].component)
		return false;
	return true;
}

/* ---- SMPs ---- */

static void speed_fields(const struct fs_port *p, bool up, uint8_t *d)
{
	unsigned ext_active = 0, ext2_active = 0, cap2 = CAP2_2X_WIDTH | CAP2_PORT_INFO_EXT;
	/* what the port supports: every speed up to its own */
	unsigned top = p->speed;

	mad_set_field(d, 0, IB_PORT_LINK_SPEED_SUPPORTED_F, 7);
	mad_set_field(d, 0, IB_PORT_LINK_SPEED_ENABLED_F, 7);
	if (p->speed <= FS_QDR) {
		mad_set_field(d, 0, IB_PORT_LINK_SPEED_ACTIVE_F, up ? 1u << p->speed : 0);
	} else {
		/* an extended speed rules: the legacy field says SDR, as HCAs do */
		mad_set_field(d, 0, IB_PORT_LINK_SPEED_ACTIVE_F, up ? 1 : 0);
		if (p->speed < FS_XDR)
			ext_active = 1u << (p->speed - FS_FDR);
		else
			ext2_active = 1;
	}
	{
		unsigned ext_supported = 0;

		for (unsigned s = FS_FDR; s <= top && s < FS_XDR; s++)
			ext_supported |= 1u << (s - FS_FDR);
		mad_set_field(d, 0, IB_PORT_LINK_SPEED_EXT_SUPPORTED_F, ext_supported);
		mad_set_field(d, 0, IB_PORT_LINK_SPEED_EXT_ENABLED_F, ext_supported);
		mad_set_field(d, 0, IB_PORT_LINK_SPEED_EXT_ACTIVE_F, up ? ext_active : 0);
	}
	if (top >= FS_HDR)
		cap2 |= CAP2_HDR;
	if (top >= FS_NDR)
		cap2 |= CAP2_NDR;
	if (top >= FS_XDR) {
		cap2 |= CAP2_XDR | CAP2_EXT_SPEEDS2;
		/* LinkSpeedExtActive2 (bits 449-450), Supported2 (451-452),
		 * Enabled2 (453-455) of PortInfo, IBA 1.7: value 1 = XDR.
		 * Written by offset: Debian 12's libibmad has no field for them. */
		d[56] = (uint8_t)((d[56] & 0x80) | ((up ? ext2_active : 0) << 5) |
				  (1u << 3) | 1u);
	}
	mad_set_field(d, 0, IB_PORT_CAPMASK2_F, cap2);
}

void fs_encode_portinfo(struct fabric *f, uint32_t node, uint8_t num, uint8_t entry_port,
			uint8_t *d)
{
	struct fs_node *n = &f->nodes[node];
	struct fs_port *p = &f->ports[n->first_port + num];
	/* a switch's port 0 reports the link of port 1 as its own speed */
	struct fs_port *link = num == 0 && n->nports ? &f->ports[n->first_port + 1] : p;
	bool up = num == 0 || (p->up && p->peer != FS_NO_PORT);
	unsigned cap;

	memset(d, 0, IB_SMP_DATA_SIZE);
	mad_set_field64(d, 0, IB_PORT_GID_PREFIX_F, 0xfe80000000000000ULL);
	mad_set_field(d, 0, IB_PORT_LID_F, p->lid_is_set ? p->lid_set : p->lid);
	mad_set_field(d, 0, IB_PORT_SMLID_F, f->nodes[f->sm_node].lid);
	cap = n->type == FS_SWITCH ? CAP_SWITCH0 : CAP_CA;
	if (n->sm_state)
		cap |= CAP_IS_SM;
	mad_set_field(d, 0, IB_PORT_CAPMASK_F, cap);
	{
		/* the M_Key fields: a switch's are its port 0's */
		struct fs_port *k = &f->ports[n->first_port + (n->type == FS_SWITCH ? 0 : num)];

		mad_set_field(d, 0, IB_PORT_MKEY_LEASE_F, k->mkey_lease);
		mad_set_field(d, 0, IB_PORT_MKEY_PROT_BITS_F, k->mkey_protect);
		mad_set_field(d, 0, IB_PORT_MKEY_VIOL_F, k->mkey_violations);
	}
	mad_set_field(d, 0, IB_PORT_LOCAL_PORT_F, entry_port);
	mad_set_field(d, 0, IB_PORT_LINK_WIDTH_SUPPORTED_F, 1 | 2 | 16);
	mad_set_field(d, 0, IB_PORT_LINK_WIDTH_ENABLED_F, 1 | 2 | 16);
	/* a down port keeps its width: tools warn on 0 (IBA allows any value) */
	mad_set_field(d, 0, IB_PORT_LINK_WIDTH_ACTIVE_F, link->width);
	mad_set_field(d, 0, IB_PORT_STATE_F, !up ? 1 : p->state_set ? p->state_set : 4);
	mad_set_field(d, 0, IB_PORT_PHYS_STATE_F, up ? 5 : 2);     /* LinkUp, Polling */
	mad_set_field(d, 0, IB_PORT_LINK_DOWN_DEF_F, 2);
	mad_set_field(d, 0, IB_PORT_NEIGHBOR_MTU_F, p->mtu_set ? p->mtu_set : 5); /* 4096 */
	mad_set_field(d, 0, IB_PORT_VL_CAP_F, 4);                  /* VL0-7 */
	mad_set_field(d, 0, IB_PORT_VL_ARBITRATION_HIGH_CAP_F, 8);
	mad_set_field(d, 0, IB_PORT_VL_ARBITRATION_LOW_CAP_F, 8);
	mad_set_field(d, 0, IB_PORT_MTU_CAP_F, 5);
	mad_set_field(d, 0, IB_PORT_VL_STALL_COUNT_F, 7);
	mad_set_field(d, 0, IB_PORT_HOQ_LIFE_F, 20);
	mad_set_field(d, 0, IB_PORT_OPER_VLS_F, !up ? 0 : p->vls_set ? p->vls_set : 4);
	mad_set_field(d, 0, IB_PORT_SUBN_TIMEOUT_F, 18);
	mad_set_field(d, 0, IB_PORT_RESP_TIME_VAL_F, 16);
	speed_fields(link, up, d);
}

void fs_encode_nodeinfo(struct fabric *f, uint32_t node, uint8_t entry_port, uint8_t *d)
{
	struct fs_node *n = &f->nodes[node];

	memset(d, 0, IB_SMP_DATA_SIZE);
	mad_set_field(d, 0, IB_NODE_BASE_VERS_F, 1);
	mad_set_field(d, 0, IB_NODE_CLASS_VERS_F, 1);
	mad_set_field(d, 0, IB_NODE_TYPE_F, n->type);
	mad_set_field(d, 0, IB_NODE_NPORTS_F, n->nports);
	mad_set_field64(d, 0, IB_NODE_SYSTEM_GUID_F, n->sys_guid);
	mad_set_field64(d, 0, IB_NODE_GUID_F, n->guid);
	mad_set_field64(d, 0, IB_NODE_PORT_GUID_F,
			fs_port_guid(f, node, n->type == FS_SWITCH ? 0 : entry_port));
	mad_set_field(d, 0, IB_NODE_PARTITION_CAP_F, n->type == FS_SWITCH ? 8 : 128);
	mad_set_field(d, 0, IB_NODE_DEVID_F, n->device_id);
	mad_set_field(d, 0, IB_NODE_REVISION_F, 0xa0);
	mad_set_field(d, 0, IB_NODE_LOCAL_PORT_F, entry_port);
	mad_set_field(d, 0, IB_NODE_VENDORID_F, fs_vendor_id(f, node));
}

/* The port whose M_Key guards an SMP to t: a switch's port 0, a CA's port
 * the SMP came in by. */
static struct fs_port *key_port(struct fabric *f, const struct target *t)
{
	const struct fs_node *n = &f->nodes[t->node];

	return &f->ports[n->first_port + (n->type == FS_SWITCH ? 0 : t->entry)];
}

/* Whether an SMP with key gets an answer (IBA 14.2.4.1-3): without the
 * node's key a Set never does, a Get not at protect bits 2 and 3; either
 * is a violation then, counted, and starts the lease's countdown, at whose
 * end the protect bits fall to 0. The right key stops the countdown. */
static bool mkey_check(struct fabric *f, struct target *t, unsigned method, uint64_t key)
{
	struct fs_port *k = key_port(f, t);
	double now = fs_now();

	if (k->mkey_lease_end && now >= k->mkey_lease_end) {
		k->mkey_protect = 0;
		k->mkey_lease_end = 0;
	}
	t->keyed = !k->mkey || key == k->mkey;
	if (t->keyed) {
		if (k->mkey && key == k->mkey)
			k->mkey_lease_end = 0;
		return true;
	}
	if (method == IB_MAD_METHOD_GET && k->mkey_protect < 2)
		return true;
	if (k->mkey_violations < 0xffff)
		k->mkey_violations++;
	f->bad_mkey = true; /* the SMA's trap 256 to the SM */
	f->bad_mkey_at = (struct fs_bad_mkey){
		.lid = f->nodes[t->node].type == FS_SWITCH ? f->nodes[t->node].lid : k->lid,
		.method = (uint8_t)method, .attr = t->attr, .mod = t->mod, .key = key,
		.node = t->node, .port = t->entry};
	if (k->mkey_lease && !k->mkey_lease_end)
		k->mkey_lease_end = now + k->mkey_lease;
	return false;
}

void fs_set_mkey(struct fabric *f, int node, uint64_t key, int protect, int lease)
{
	for (uint32_t i = node < 0 ? 0 : (uint32_t)node;
	     i < (node < 0 ? f->nnodes : (uint32_t)node + 1); i++) {
		const struct fs_node *n = &f->nodes[i];

		for (unsigned p = 0; p <= n->nports; p++) {
			struct fs_port *k = &f->ports[n->first_port + p];

			k->mkey = key;
			if (protect >= 0)
				k->mkey_protect = (uint8_t)protect;
			if (lease >= 0)
				k->mkey_lease = (uint16_t)lease;
			k->mkey_lease_end = 0;
		}
	}
}

static int smp(struct fabric *f, const struct target *t, unsigned method, unsigned attr,
	       uint32_t mod, uint8_t *d)
{
	struct fs_node *n = &f->nodes[t->node];

	if (method != IB_MAD_METHOD_GET && method != IB_MAD_METHOD_SET)
		return STATUS_UNSUP_ATTR;
	/* Sets are answered as Gets: the simulated fabric is the SM's already */
	switch (attr) {
	case IB_ATTR_NODE_DESC:
		memset(d, 0, IB_SMP_DATA_SIZE);
		strncpy((char *)d, n->desc ? n->desc : n->name, IB_SMP_DATA_SIZE - 1);
		return 0;
	case IB_ATTR_NODE_INFO:
		fs_encode_nodeinfo(f, t->node, t->entry, d);
		return 0;
	case IB_ATTR_PORT_INFO: {
		uint32_t num = mod & 0xff;

		if (n->type != FS_SWITCH && num == 0)
			num = t->entry;
		if (num > n->nports || (n->type != FS_SWITCH && num == 0))
			return STATUS_BAD_FIELD;
		fs_encode_portinfo(f, t->node, (uint8_t)num, t->entry, d);
		{
			/* M_Key: read as 0 at protect bits 1 without the key */
			struct fs_port *k = key_port(f, t);

			if (t->keyed || k->mkey_protect == 0)
				mad_set_field64(d, 0, IB_PORT_MKEY_F, k->mkey);
		}
		return 0;
	}
	case IB_ATTR_PORT_INFO_EXT: {
		/* PortInfoExtended: the FEC mode perfquery -T looks at before it
		 * reads PortExtendedSpeedsCounters in the RS-FEC layout */
		uint32_t num = mod & 0xff;
		struct fs_port *p;

		if (n->type != FS_SWITCH && num == 0)
			num = t->entry;
		if (num > n->nports)
			return STATUS_BAD_FIELD;
		/* a switch's port 0 has the link of port 1, as in PortInfo */
		p = &f->ports[n->first_port + (num == 0 && n->nports ? 1 : num)];
		memset(d, 0, IB_SMP_DATA_SIZE);
		mad_set_field(d, 0, IB_PORT_EXT_CAPMASK_F, 1); /* IsFECModeSupported */
		mad_set_field(d, 0, IB_PORT_EXT_FEC_MODE_ACTIVE_F, fs_fec_mode(p));
		return 0;
	}
	case IB_ATTR_SWITCH_INFO:
		if (n->type != FS_SWITCH)
			return STATUS_UNSUP_ATTR;
		memset(d, 0, IB_SMP_DATA_SIZE);
		mad_set_field(d, 0, IB_SW_LINEAR_FDB_CAP_F, FS_MAX_LID + 1);
		mad_set_field(d, 0, IB_SW_MCAST_FDB_CAP_F, 4096);
		mad_set_field(d, 0, IB_SW_LINEAR_FDB_TOP_F, f->max_lid);
		mad_set_field(d, 0, IB_SW_DEF_MCAST_PRIM_F, 0xff);
		mad_set_field(d, 0, IB_SW_DEF_MCAST_NOT_PRIM_F, 0xff);
		mad_set_field(d, 0, IB_SW_LIFE_TIME_F, 18);
		mad_set_field(d, 0, IB_SW_PARTITION_ENFORCE_CAP_F, 8);
		mad_set_field(d, 0, IB_SW_MCAST_FDB_TOP_F, 0xc000);
		return 0;
	case IB_ATTR_GUID_INFO:
		memset(d, 0, IB_SMP_DATA_SIZE);
		if ((mod & 0xffff) == 0)
			mad_encode_field(d, IB_GUID_GUID0_F, &(uint64_t){fs_port_guid(
				f, t->node, n->type == FS_SWITCH ? 0 : t->entry)});
		return 0;
	case IB_ATTR_PKEY_TBL:
		memset(d, 0, IB_SMP_DATA_SIZE);
		if ((mod & 0xffff) == 0)
			d[0] = d[1] = 0xff; /* the default partition, full member */
		return 0;
	case IB_ATTR_LINEARFORWTBL: {
		uint32_t block = mod & 0x3ff;

		if (n->type != FS_SWITCH)
			return STATUS_UNSUP_ATTR;
		for (unsigned i = 0; i < 64; i++) {
			uint32_t lid = block * 64 + i;

			d[i] = (uint8_t)(lid > f->max_lid ? 255 : fs_route_port(f, t->node,
										   (uint16_t)lid));
		}
		return 0;
	}
	case IB_ATTR_SLVL_TABLE:
	case IB_ATTR_VL_ARBITRATION:
	case IB_ATTR_MULTICASTFORWTBL:
		memset(d, 0, IB_SMP_DATA_SIZE);
		return 0;
	case IB_ATTR_SMINFO:
		if (!n->sm_state)
			return STATUS_UNSUP_ATTR;
		memset(d, 0, IB_SMP_DATA_SIZE);
		mad_set_field64(d, 0, IB_SMINFO_GUID_F,
				fs_port_guid(f, t->node, n->type == FS_SWITCH ? 0 : 1));
		/* a working SM's ActCount moves with what it does: here, with
		 * every question it answers */
		if (!n->sm_frozen)
			n->sm_act++;
		mad_set_field(d, 0, IB_SMINFO_ACT_F, n->sm_act);
		mad_set_field(d, 0, IB_SMINFO_PRIO_F, n->sm_priority);
		mad_set_field(d, 0, IB_SMINFO_STATE_F, n->sm_state - 1u);
		return 0;
	default:
		return STATUS_UNSUP_ATTR;
	}
}

/* ---- PerfMgt ---- */

static uint32_t clip(uint64_t v, unsigned bits)
{
	uint64_t max = bits >= 32 ? 0xffffffffULL : (1ULL << bits) - 1;

	return (uint32_t)(v > max ? max : v);
}

static const struct {
	enum MAD_FIELDS field;
	unsigned bits;
} error_fields[FS_XMIT_WAIT + 1] = {
	[FS_SYMBOL_ERRORS] = {IB_PC_ERR_SYM_F, 16},
	[FS_LINK_RECOVERS] = {IB_PC_LINK_RECOVERS_F, 8},
	[FS_LINK_DOWNED] = {IB_PC_LINK_DOWNED_F, 8},
	[FS_RCV_ERRORS] = {IB_PC_ERR_RCV_F, 16},
	[FS_RCV_REMOTE_PHYS] = {IB_PC_ERR_PHYSRCV_F, 16},
	[FS_RCV_SWITCH_RELAY] = {IB_PC_ERR_SWITCH_REL_F, 16},
	[FS_XMIT_DISCARDS] = {IB_PC_XMT_DISCARDS_F, 16},
	[FS_XMIT_CONSTRAINT] = {IB_PC_ERR_XMTCONSTR_F, 8},
	[FS_RCV_CONSTRAINT] = {IB_PC_ERR_RCVCONSTR_F, 8},
	[FS_LOCAL_LINK_INTEGRITY] = {IB_PC_ERR_LOCALINTEG_F, 4},
	[FS_EXCESSIVE_OVERRUN] = {IB_PC_ERR_EXCESS_OVR_F, 4},
	[FS_VL15_DROPPED] = {IB_PC_VL15_DROPPED_F, 16},
	[FS_XMIT_WAIT] = {IB_PC_XMT_WAIT_F, 32},
};

static const enum MAD_FIELDS data_fields[FS_DATAS] = {IB_PC_XMT_BYTES_F, IB_PC_RCV_BYTES_F,
						      IB_PC_XMT_PKTS_F, IB_PC_RCV_PKTS_F};
static const enum MAD_FIELDS ext_fields[FS_DATAS] = {IB_PC_EXT_XMT_BYTES_F, IB_PC_EXT_RCV_BYTES_F,
						     IB_PC_EXT_XMT_PKTS_F, IB_PC_EXT_RCV_PKTS_F};

/* the ports a PortSelect names: one, or every port (AllPortSelect, 0xff) */
static int selected_ports(const struct fs_node *n, unsigned select, unsigned *first,
			  unsigned *last)
{
	if (select == 0xff) {
		*first = 1;
		*last = n->nports;
		return 0;
	}
	if (select > n->nports || (n->type != FS_SWITCH && select == 0))
		return -1;
	*first = *last = select;
	return 0;
}

static int port_counters(struct fabric *f, const struct target *t, unsigned method, uint8_t *d,
			 bool extended)
{
	struct fs_node *n = &f->nodes[t->node];
	unsigned select = mad_get_field(d, 0, extended ? IB_PC_EXT_PORT_SELECT_F :
						       IB_PC_PORT_SELECT_F);
	unsigned mask = mad_get_field(d, 0, extended ? IB_PC_EXT_COUNTER_SELECT_F :
						     IB_PC_COUNTER_SELECT_F);
	unsigned mask2 = extended ? 0 : mad_get_field(d, 0, IB_PC_COUNTER_SELECT2_F);
	unsigned first, last;
	uint64_t sum_err[FS_ERRORS] = {0}, sum_data[FS_DATAS] = {0};
	struct fs_port_errors *e;

	if (selected_ports(n, select, &first, &last))
		return STATUS_BAD_FIELD;
	for (unsigned num = first; num <= last; num++) {
		uint32_t pi = n->first_port + num;

		if (method == IB_MAD_METHOD_SET) {
			for (int k = 0; k < FS_DATAS; k++)
				if (mask & (extended ? 1u << k : 1u << (12 + k)))
					fs_set_data_counter(f, pi, (enum fs_data)k, 0);
			e = fs_errors(f, pi, false);
			for (int k = 0; e && !extended && k < FS_XMIT_WAIT; k++)
				if (mask & (1u << k))
					fs_set_error(f, pi, (enum fs_error)k, 0);
			if (e && !extended && (mask2 & 1))
				fs_set_error(f, pi, FS_XMIT_WAIT, 0);
		}
		for (int k = 0; k < FS_DATAS; k++)
			sum_data[k] += fs_data_counter(f, pi, (enum fs_data)k);
		for (int k = 0; k <= FS_XMIT_WAIT; k++)
			sum_err[k] += fs_error_value(f, pi, (enum fs_error)k);
	}
	memset(d, 0, IB_PC_DATA_SZ);
	if (extended) {
		mad_set_field(d, 0, IB_PC_EXT_PORT_SELECT_F, select);
		mad_set_field(d, 0, IB_PC_EXT_COUNTER_SELECT_F, mask);
		for (int k = 0; k < FS_DATAS; k++)
			mad_set_field64(d, 0, ext_fields[k], sum_data[k]);
		mad_set_field64(d, 0, IB_PC_EXT_XMT_UPKTS_F, sum_data[FS_XMIT_PKTS]);
		mad_set_field64(d, 0, IB_PC_EXT_RCV_UPKTS_F, sum_data[FS_RCV_PKTS]);
	} else {
		mad_set_field(d, 0, IB_PC_PORT_SELECT_F, select);
		mad_set_field(d, 0, IB_PC_COUNTER_SELECT_F, mask);
		for (int k = 0; k <= FS_XMIT_WAIT; k++)
			mad_set_field(d, 0, error_fields[k].field,
				      clip(sum_err[k], error_fields[k].bits));
		for (int k = 0; k < FS_DATAS; k++)
			mad_set_field(d, 0, data_fields[k], clip(sum_data[k], 32));
	}
	return 0;
}

/* v split over n lanes: lane i's share (the remainder on lane 0) */
static uint64_t lane_share(uint64_t v, unsigned lanes, unsigned i)
{
	return v / lanes + (i == 0 ? v % lanes : 0);
}

/* PortExtendedSpeedsCounters in the layout of the port's FEC mode: RS-FEC
 * (HDR and faster) or the older per-lane one. A Set clears the counters
 * (every one: CounterSelect is not looked at, as perfquery -R sends all). */
static int ext_speeds_counters(struct fabric *f, const struct target *t, unsigned method,
			       uint8_t *d)
{
	struct fs_node *n = &f->nodes[t->node];
	unsigned select = mad_get_field(d, 0, IB_PESC_PORT_SELECT_F), first, last;
	uint64_t v[FS_ERRORS] = {0};
	unsigned lanes = 4, fec = 0;

	if (selected_ports(n, select, &first, &last))
		return STATUS_BAD_FIELD;
	for (unsigned num = first; num <= last; num++) {
		uint32_t pi = n->first_port + num;

		for (int k = FS_SYNC_HEADER_ERRORS; k < FS_ERRORS; k++) {
			if (method == IB_MAD_METHOD_SET)
				fs_set_error(f, pi, (enum fs_error)k, 0);
			v[k] += fs_error_value(f, pi, (enum fs_error)k);
		}
		lanes = fs_lanes(f->ports[pi].width);
		fec = fs_fec_mode(&f->ports[pi]);
	}
	memset(d, 0, IB_PC_DATA_SZ);
	mad_set_field(d, 0, IB_PESC_PORT_SELECT_F, select);
	mad_set_field(d, 0, IB_PESC_SYNC_HDR_ERR_CTR_F, clip(v[FS_SYNC_HEADER_ERRORS], 16));
	mad_set_field(d, 0, IB_PESC_UNK_BLOCK_CTR_F, clip(v[FS_UNKNOWN_BLOCKS], 16));
	if (fec == 2) {
		for (unsigned i = 0; i < lanes && i < 12; i++)
			mad_set_field(d, 0, IB_PESC_RSFEC_FEC_CORR_SYMBOL_CTR_LANE0_F + i,
				      clip(lane_share(v[FS_FEC_CORRECTED_SYMBOLS], lanes, i), 32));
		mad_set_field(d, 0, IB_PESC_PORT_FEC_CORR_BLOCK_CTR_F,
			      clip(v[FS_FEC_CORRECTABLE_BLOCKS], 32));
		mad_set_field(d, 0, IB_PESC_PORT_FEC_UNCORR_BLOCK_CTR_F,
			      clip(v[FS_FEC_UNCORRECTABLE_BLOCKS], 32));
		mad_set_field(d, 0, IB_PESC_PORT_FEC_CORR_SYMBOL_CTR_F,
			      clip(v[FS_FEC_CORRECTED_SYMBOLS], 32));
		return 0;
	}
	for (unsigned i = 0; i < lanes && i < 12; i++) {
		mad_set_field(d, 0, IB_PESC_ERR_DET_CTR_LANE0_F + i,
			      clip(lane_share(v[FS_ERROR_DETECTION], lanes, i), 16));
		mad_set_field(d, 0, IB_PESC_FEC_CORR_BLOCK_CTR_LANE0_F + i,
			      clip(lane_share(v[FS_FEC_CORRECTABLE_BLOCKS], lanes, i), 32));
		mad_set_field(d, 0, IB_PESC_FEC_UNCORR_BLOCK_CTR_LANE0_F + i,
			      clip(lane_share(v[FS_FEC_UNCORRECTABLE_BLOCKS], lanes, i), 32));
	}
	return 0;
}

static int pma(struct fabric *f, const struct target *t, unsigned method, unsigned attr,
	       uint8_t *d)
{
	if (method != IB_MAD_METHOD_GET && method != IB_MAD_METHOD_SET)
		return STATUS_UNSUP_ATTR;
	switch (attr) {
	case CLASS_PORT_INFO:
		memset(d, 0, IB_PC_DATA_SZ);
		mad_set_field(d, 0, IB_CPI_BASEVER_F, 1);
		mad_set_field(d, 0, IB_CPI_CLASSVER_F, 1);
		/* AllPortSelect, extended width, PortXmitWait, RS-FEC counters */
		mad_set_field(d, 0, IB_CPI_CAPMASK_F, 0x5300);
		mad_set_field(d, 0, IB_CPI_RESP_TIME_VALUE_F, 18);
		return 0;
	case IB_GSI_PORT_COUNTERS:
		return port_counters(f, t, method, d, false);
	case IB_GSI_PORT_COUNTERS_EXT:
		return port_counters(f, t, method, d, true);
	case IB_GSI_PORT_EXT_SPEEDS_COUNTERS:
		return ext_speeds_counters(f, t, method, d);
	case IB_GSI_PORT_RCV_ERROR_DETAILS:
	case IB_GSI_PORT_XMIT_DISCARD_DETAILS: {
		unsigned select = mad_get_field(d, 0, IB_PC_PORT_SELECT_F), first, last;

		if (selected_ports(&f->nodes[t->node], select, &first, &last))
			return STATUS_BAD_FIELD;
		memset(d, 0, IB_PC_DATA_SZ);
		mad_set_field(d, 0, IB_PC_PORT_SELECT_F, select);
		return 0;
	}
	default:
		return STATUS_UNSUP_ATTR;
	}
}

/* ---- SA: InformInfo only (the simulator is the SM) ---- */

static void subscribe(struct fabric *f, int client, const uint8_t *d)
{
	unsigned trap = (unsigned)(d[26] << 8 | d[27]);
	bool on = d[23] != 0;
	int i;

	for (i = 0; i < f->nsubs; i++)
		if (f->subs[i].client == client && f->subs[i].trap == trap)
			break;
	if (!on) {
		if (i < f->nsubs)
			f->subs[i] = f->subs[--f->nsubs];
		return;
	}
	if (i == f->nsubs && f->nsubs < (int)(sizeof(f->subs) / sizeof(f->subs[0]))) {
		f->subs[f->nsubs].client = client;
		f->subs[f->nsubs].trap = (uint16_t)trap;
		f->nsubs++;
	}
}

static int sa(struct fabric *f, const struct fs_origin *from, unsigned method, unsigned attr,
	      uint8_t *d)
{
	if (attr == IB_SA_ATTR_INFORMINFO && method == IB_MAD_METHOD_SET) {
		subscribe(f, from->client, d);
		return 0; /* the answer echoes the request */
	}
	return STATUS_UNSUP_ATTR;
}

/* ---- SA: the SM's view (NodeRecord, PortInfoRecord, LinkRecord; the
 * LinearForwardingTableRecords and PathRecords the routing checks ask) ----
 *
 * What an agent reads from the SA on a fabric whose SMAs it may not ask
 * (M_Key): the nodes, ports and links the SM sees, i.e. those of the SM's
 * component that answer. Record layouts: IBA 15.2.5.2 (NodeRecord: LID,
 * reserved, NodeInfo, NodeDescription), 15.2.5.3 (PortInfoRecord:
 * EndportLID, PortNum, Options, PortInfo), 15.2.5.13 (LinkRecord: FromLID,
 * FromPort, ToPort, ToLID); each padded to 8 octets (AttributeOffset). A
 * GetTable answer goes as RMPP segments, all at once (a kernel would
 * acknowledge them; libumad2sim passes them as they are), of 168 octets of
 * data, not IBA's 200: libumad2sim hands its reader the first 224 octets of
 * a MAD only (its buffer is the size of a request, 64 of which go to the
 * umad header), so each segment says its length (56 octets of headers and
 * its data) and the last one's PayloadLength what it holds. */

#define SA_NODE_RECORD_SIZE 112    /* 108, padded */
#define SA_PORTINFO_RECORD_SIZE 72 /* 68, padded */
#define SA_LINK_RECORD_SIZE 8
#define SA_LFT_RECORD_SIZE 72      /* LID, block, 4 reserved, 64 entries */
#define SA_PATH_RECORD_SIZE 64
#define SA_STATUS_NO_RECORDS (3u << 8)
#define RMPP_SEGMENT_DATA 168u     /* what libumad2sim delivers of IB_SA_DATA_SIZE */
#define RMPP_SA_HEADER 20u         /* counted in PayloadLength */

struct sa_table {
	uint8_t *rec;
	size_t n, cap, size;
};

static uint8_t *sa_add(struct sa_table *t)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 256;
		uint8_t *p = realloc(t->rec, cap * t->size);

		if (!p)
			return NULL;
		t->rec = p;
		t->cap = cap;
	}
	memset(t->rec + t->n * t->size, 0, t->size);
	return t->rec + t->n++ * t->size;
}

/* the nodes the SM sees: its component's, answering */
static bool sm_sees(const struct fabric *f, uint32_t node)
{
	return !f->nodes[node].dead &&
	       f->nodes[node].component == f->nodes[f->sm_node].component;
}

static uint16_t endport_lid(const struct fabric *f, uint32_t node, uint8_t num)
{
	const struct fs_node *n = &f->nodes[node];

	return n->type == FS_SWITCH ? n->lid : f->ports[n->first_port + num].lid;
}

static bool be16_matches(const uint8_t *rec, const uint8_t *want, unsigned offs)
{
	return rec[offs] == want[offs] && rec[offs + 1] == want[offs + 1];
}

/* LinearForwardingTableRecords: every block up to the highest LID of every
 * switch the SM sees, as the SM routes it (not the console's Lft: a switch
 * whose table is not the SM's copy); component mask bit 0 the LID, bit 1
 * the block. */
static int sa_lft_records(struct fabric *f, uint64_t mask, const uint8_t *want,
			  struct sa_table *t)
{
	for (uint32_t i = 0; i < f->nnodes; i++) {
		const struct fs_node *n = &f->nodes[i];

		if (n->type != FS_SWITCH || !sm_sees(f, i) || !n->lid)
			continue;
		for (unsigned block = 0; block <= f->max_lid / 64u; block++) {
			uint8_t *rec;

			if (((mask & 1) && (unsigned)(want[0] << 8 | want[1]) != n->lid) ||
			    ((mask & 2) && (unsigned)(want[2] << 8 | want[3]) != block))
				continue;
			if (!(rec = sa_add(t)))
				return -1;
			rec[0] = (uint8_t)(n->lid >> 8);
			rec[1] = (uint8_t)n->lid;
			rec[2] = (uint8_t)(block >> 8);
			rec[3] = (uint8_t)block;
			for (unsigned k = 0; k < 64; k++) {
				unsigned lid = block * 64 + k;

				rec[8 + k] = (uint8_t)(lid > f->max_lid ? 255
						       : fs_sm_route_port(f, i, (uint16_t)lid));
			}
		}
	}
	return 0;
}

/* A PathRecord (IBA 15.2.5.16) between two LIDs the SM sees, both given
 * (component mask DLID bit 4, SLID bit 5): SL 0, as OpenSM's ftree,
 * updn and minhop give every path; none otherwise. */
static int sa_path_records(struct fabric *f, uint64_t mask, const uint8_t *want,
			   struct sa_table *t)
{
	uint8_t q[SA_PATH_RECORD_SIZE], *rec;
	unsigned ends[2];

	memcpy(q, want, sizeof(q));
	ends[0] = mad_get_field(q, 0, IB_SA_PR_SLID_F);
	ends[1] = mad_get_field(q, 0, IB_SA_PR_DLID_F);
	if ((mask & 0x30) != 0x30)
		return 0;
	for (unsigned e = 0; e < 2; e++) {
		bool seen = false;

		for (uint32_t p = 0; p < f->nports && !seen; p++)
			seen = ends[e] && f->ports[p].lid == ends[e] &&
			       sm_sees(f, fs_node_of_port(f, p));
		if (!seen)
			return 0;
	}
	if (!(rec = sa_add(t)))
		return -1;
	mad_set_field(rec, 0, IB_SA_PR_SLID_F, ends[0]);
	mad_set_field(rec, 0, IB_SA_PR_DLID_F, ends[1]);
	mad_set_field(rec, 0, IB_SA_PR_SL_F, 0);
	return 0;
}

/* The records of attr, filtered by the component mask's key fields. */
static int sa_records(struct fabric *f, unsigned attr, uint64_t mask, const uint8_t *want,
		      struct sa_table *t)
{
	if (attr == IB_SA_ATTR_LFTRECORD)
		return sa_lft_records(f, mask, want, t);
	if (attr == IB_SA_ATTR_PATHRECORD)
		return sa_path_records(f, mask, want, t);
	for (uint32_t i = 0; i < f->nnodes; i++) {
		struct fs_node *n = &f->nodes[i];

		if (!sm_sees(f, i))
			continue;
		for (unsigned p = n->type == FS_SWITCH ? 0 : 1; p <= n->nports; p++) {
			struct fs_port *port = &f->ports[n->first_port + p];
			uint16_t lid = endport_lid(f, i, (uint8_t)p);
			uint8_t rec[SA_NODE_RECORD_SIZE] = {0};

			if (!lid)
				continue;
			if (attr == IB_SA_ATTR_NODERECORD) {
				if (n->type == FS_SWITCH && p)
					break; /* a switch: one record, its port 0's */
				rec[0] = (uint8_t)(lid >> 8);
				rec[1] = (uint8_t)lid;
				fs_encode_nodeinfo(f, i, (uint8_t)p, rec + 4);
				strncpy((char *)rec + 44, n->desc ? n->desc : n->name, 63);
				if ((mask & 1) && !be16_matches(rec, want, 0))
					continue;
			} else if (attr == IB_SA_ATTR_PORTINFORECORD) {
				rec[0] = (uint8_t)(lid >> 8);
				rec[1] = (uint8_t)lid;
				rec[2] = (uint8_t)p;
				fs_encode_portinfo(f, i, (uint8_t)p, (uint8_t)p, rec + 4);
				/* the M_Key: only for a trusted requester (SM_Key) */
				memset(rec + 4, 0, 8);
				if (((mask & 1) && !be16_matches(rec, want, 0)) ||
				    ((mask & 2) && rec[2] != want[2]))
					continue;
			} else {
				uint32_t peer_node;
				uint16_t to;

				if (!p || !port->up || port->peer == FS_NO_PORT)
					continue;
				peer_node = fs_node_of_port(f, port->peer);
				if (!sm_sees(f, peer_node))
					continue;
				to = endport_lid(f, peer_node, f->ports[port->peer].num);
				rec[0] = (uint8_t)(lid >> 8);
				rec[1] = (uint8_t)lid;
				rec[2] = (uint8_t)p;
				rec[3] = f->ports[port->peer].num;
				rec[4] = (uint8_t)(to >> 8);
				rec[5] = (uint8_t)to;
				if (((mask & 1) && !be16_matches(rec, want, 0)) ||
				    ((mask & 2) && rec[2] != want[2]) ||
				    ((mask & 4) && rec[3] != want[3]) ||
				    ((mask & 8) && !be16_matches(rec, want, 4)))
					continue;
			}
			{
				uint8_t *slot = sa_add(t);

				if (!slot)
					return -1;
				memcpy(slot, rec, t->size);
			}
		}
	}
	return 0;
}

int fs_sa_table(struct fabric *f, const struct fs_origin *from, const struct fs_request *req,
		void (*emit)(void *ctx, const struct fs_request *seg), void *ctx)
{
	struct fs_request r = *req; /* the answer, made from the question */
	uint8_t want[SA_NODE_RECORD_SIZE];
	unsigned method = mad_get_field(r.mad, 0, IB_MAD_METHOD_F);
	unsigned attr = mad_get_field(r.mad, 0, IB_MAD_ATTRID_F);
	struct sa_table t = {0};
	struct target at;
	size_t len, segments;

	if (r.mad[1] != IB_SA_CLASS || mad_get_field(r.mad, 0, IB_MAD_RESPONSE_F) ||
	    (method != IB_MAD_METHOD_GET_TABLE && method != IB_MAD_METHOD_GET))
		return 0;
	switch (attr) {
	case IB_SA_ATTR_NODERECORD:
		t.size = SA_NODE_RECORD_SIZE;
		break;
	case IB_SA_ATTR_PORTINFORECORD:
		t.size = SA_PORTINFO_RECORD_SIZE;
		break;
	case IB_SA_ATTR_LINKRECORD:
		t.size = SA_LINK_RECORD_SIZE;
		break;
	case IB_SA_ATTR_LFTRECORD:
		t.size = SA_LFT_RECORD_SIZE;
		break;
	case IB_SA_ATTR_PATHRECORD:
		t.size = SA_PATH_RECORD_SIZE;
		break;
	default:
		return 0;
	}
	if (!route_lid(f, from, (uint16_t)ntohs((uint16_t)req->dlid), &at) || at.node != f->sm_node)
		return 0; /* fs_answer says it cannot be delivered */
	memcpy(want, r.mad + IB_SA_DATA_OFFS, sizeof(want));
	if (sa_records(f, attr, mad_get_field64(r.mad, 0, IB_SA_COMPMASK_F), want, &t)) {
		free(t.rec);
		return -1;
	}
	mad_set_field(r.mad, 0, IB_MAD_RESPONSE_F, 1);
	r.dlid = htons(f->ports[from->port].lid);
	r.slid = htons(f->nodes[f->sm_node].lid);
	r.dqp = req->sqp;
	r.sqp = req->dqp;
	r.status = 0;
	mad_set_field(r.mad, 0, IB_SA_ATTROFFS_F, (unsigned)(t.size / 8));
	if (method == IB_MAD_METHOD_GET) { /* one record, no RMPP */
		mad_set_field(r.mad, 0, IB_MAD_METHOD_F, IB_MAD_METHOD_GET);
		memset(r.mad + IB_SA_DATA_OFFS, 0, IB_SA_DATA_SIZE);
		if (t.n)
			memcpy(r.mad + IB_SA_DATA_OFFS, t.rec, t.size);
		mad_set_field(r.mad, 0, IB_MAD_STATUS_F, t.n ? 0 : SA_STATUS_NO_RECORDS);
		emit(ctx, &r);
		free(t.rec);
		return 1;
	}
	mad_set_field(r.mad, 0, IB_MAD_METHOD_F, IB_MAD_METHOD_GET_TABLE);
	len = t.n * t.size;
	segments = len ? (len + RMPP_SEGMENT_DATA - 1) / RMPP_SEGMENT_DATA : 1;
	for (size_t s = 0; s < segments; s++) {
		size_t off = s * RMPP_SEGMENT_DATA;
		size_t here = len - off < RMPP_SEGMENT_DATA ? len - off : RMPP_SEGMENT_DATA;
		unsigned flags = 1 /* active */ | (s == 0 ? 2 : 0) | (s + 1 == segments ? 4 : 0);

		memset(r.mad + IB_SA_DATA_OFFS, 0, IB_SA_DATA_SIZE);
		if (here)
			memcpy(r.mad + IB_SA_DATA_OFFS, t.rec + off, here);
		mad_set_field(r.mad, 0, IB_SA_RMPP_VERS_F, 1);
		mad_set_field(r.mad, 0, IB_SA_RMPP_TYPE_F, 1); /* DATA */
		mad_set_field(r.mad, 0, IB_SA_RMPP_FLAGS_F, flags);
		mad_set_field(r.mad, 0, IB_SA_RMPP_STATUS_F, 0);
		mad_set_field(r.mad, 0, IB_SA_RMPP_SEGNUM_F, (unsigned)(s + 1));
		/* the first: the whole transfer's payload; the last: its own */
		mad_set_field(r.mad, 0, IB_SA_RMPP_LEN_F,
			      s == 0 ? (unsigned)(segments * RMPP_SA_HEADER + len)
			      : s + 1 == segments ? (unsigned)(RMPP_SA_HEADER + here) : 0);
		if (s + 1 == segments && s == 0)
			mad_set_field(r.mad, 0, IB_SA_RMPP_LEN_F, (unsigned)(RMPP_SA_HEADER + here));
		mad_set_field(r.mad, 0, IB_MAD_STATUS_F, 0);
		r.length = htobe64(IB_SA_DATA_OFFS + here);
		emit(ctx, &r);
	}
	free(t.rec);
	return (int)segments;
}

/* Which port a MAD is about, for Error rates: PortInfo's, PortSelect's, else
 * the one it came in by. */
static uint8_t subject_port(unsigned mgmt, unsigned attr, uint32_t mod, uint8_t *d,
			    const struct target *t)
{
	if ((mgmt == IB_SMI_CLASS || mgmt == IB_SMI_DIRECT_CLASS) && attr == IB_ATTR_PORT_INFO)
		return (uint8_t)(mod & 0xff);
	if (mgmt == IB_PERFORMANCE_CLASS && attr != CLASS_PORT_INFO)
		return (uint8_t)mad_get_field(d, 0, IB_PC_PORT_SELECT_F);
	return t->entry;
}

double fs_answer_due;
uint32_t fs_answer_node;

/* A lossy node: whether the MAD that reached it is lost (Loss). */
static bool lost_at(struct fabric *f, uint32_t node)
{
	struct fs_node *n = &f->nodes[node];

	if (!n->loss || (unsigned)(random() % 100) >= n->loss)
		return false;
	n->lost++;
	return true;
}

/* A slow or rate-limited node's processor: when its answer goes
 * (fs_answer_due); false: not at all (its queue is full, as a busy SMA
 * drops what it has no room for). */
static bool processor_answers(struct fabric *f, uint32_t node)
{
	struct fs_node *n = &f->nodes[node];
	double now, due;

	fs_answer_node = node;
	if (!n->delay_ms && !n->rate)
		return true;
	now = fs_now();
	due = now;
	if (n->rate) {
		if (n->queued >= (n->queue_max ? n->queue_max : 256)) {
			n->lost++;
			return false;
		}
		if (n->next_slot < now)
			n->next_slot = now;
		due = n->next_slot;
		n->next_slot += 1.0 / n->rate;
	}
	if (n->delay_ms) {
		double jitter = n->jitter_ms ?
			(double)(random() % (2 * n->jitter_ms + 1)) - n->jitter_ms : 0;

		due += (n->delay_ms + jitter) / 1000.0;
	}
	if (due > now) {
		fs_answer_due = due;
		n->queued++;
	}
	return true;
}

bool fs_answer(struct fabric *f, const struct fs_origin *from, struct fs_request *r)
{
	uint8_t *mad = r->mad;
	unsigned mgmt = mad_get_field(mad, 0, IB_MAD_MGMTCLASS_F);
	unsigned method = mad_get_field(mad, 0, IB_MAD_METHOD_F);
	unsigned attr = mad_get_field(mad, 0, IB_MAD_ATTRID_F);
	uint32_t mod = mad_get_field(mad, 0, IB_MAD_ATTRMOD_F);
	struct target t = {0};
	unsigned offs = mgmt == IB_SA_CLASS ? IB_SA_DATA_OFFS : IB_SMP_DATA_OFFS;
	uint8_t *d = mad + offs;
	int status;
	uint16_t own_lid = f->ports[from->port].lid;

	fs_answer_due = 0;

	if (mad_get_field(mad, 0, IB_MAD_RESPONSE_F) || method == IB_MAD_METHOD_TRAP_REPRESS ||
	    mad_get_field(mad, 0, IB_MAD_BASEVER_F) != 1)
		return false; /* answers to our Reports and such: nobody waits for them */
	if (mgmt == IB_SMI_DIRECT_CLASS) {
		if (mad_get_field(mad, 0, IB_DRSMP_DRDLID_F) != 0xffff ||
		    mad_get_field(mad, 0, IB_DRSMP_DRSLID_F) != 0xffff ||
		    !walk_directed(f, from, mad, &t))
			goto unreachable;
	} else if (mgmt == IB_SMI_CLASS || mgmt == IB_PERFORMANCE_CLASS || mgmt == IB_SA_CLASS ||
		   mgmt == FS_VENDOR_CLASS) {
		if (!route_lid(f, from, (uint16_t)ntohs((uint16_t)r->dlid), &t))
			goto unreachable;
		if (mgmt == IB_SA_CLASS && t.node != f->sm_node)
			goto unreachable; /* no SA there */
	} else {
		goto unreachable;
	}
	if (mgmt == FS_VENDOR_CLASS)
		f->nodes[t.node].vendor_mads++; /* what a sweep costs a node, dead or not */
	if (f->nodes[t.node].dead)
		return false; /* silence, as from a node that hung */
	if (lost_at(f, t.node))
		return false; /* lost: silence too */
	t.attr = (uint16_t)attr;
	t.mod = mod;
	if ((mgmt == IB_SMI_CLASS || mgmt == IB_SMI_DIRECT_CLASS) &&
	    !mkey_check(f, &t, method, mad_get_field64(mad, 0, IB_MAD_MKEY_F)))
		return false; /* no answer: the requester times out, as from a real SMA */
	{
		struct fs_node *n = &f->nodes[t.node];
		uint8_t sp = subject_port(mgmt, attr, mod, d, &t);

		if (sp <= n->nports) {
			struct fs_port *p = &f->ports[n->first_port + sp];

			if (p->err_rate && (unsigned)(random() % 100) < p->err_rate)
				goto unreachable;
		}
	}
	if (mgmt == FS_VENDOR_CLASS)
		status = fs_vendor_gmp(f, t.node, method, attr, mod, mad);
	else if ((mgmt == IB_SMI_CLASS || mgmt == IB_SMI_DIRECT_CLASS) && attr == FS_ATTR_ACCESS_REG)
		status = fs_vendor_smp(f, t.node, method, d);
	else if (mgmt == IB_PERFORMANCE_CLASS)
		status = pma(f, &t, method, attr, d);
	else if (mgmt == IB_SA_CLASS)
		status = sa(f, from, method, attr, d);
	else
		status = smp(f, &t, method, attr, mod, d);
	if (status < 0)
		return false; /* no answer: NVIDIA's class on a node without it */
	if (!processor_answers(f, t.node))
		return false;

	mad_set_field(mad, 0, IB_MAD_RESPONSE_F, 1);
	mad_set_field(mad, 0, IB_MAD_METHOD_F, IB_MAD_METHOD_GET);
	if (mgmt == IB_SMI_DIRECT_CLASS) {
		mad_set_field(mad, 0, IB_DRSMP_STATUS_F, (unsigned)status);
		mad_set_field(mad, 0, IB_DRSMP_DIRECTION_F, 1);
	} else {
		mad_set_field(mad, 0, IB_MAD_STATUS_F, (unsigned)status);
	}
	{
		uint32_t tl = r->dlid, tq = r->dqp;
		uint16_t target_lid = f->nodes[t.node].type == FS_SWITCH ?
			f->nodes[t.node].lid : f->ports[f->nodes[t.node].first_port + t.entry].lid;

		r->dlid = mgmt == IB_SMI_DIRECT_CLASS ? tl : htons(own_lid);
		r->slid = mgmt == IB_SMI_DIRECT_CLASS ? tl : htons(target_lid);
		r->dqp = r->sqp;
		r->sqp = tq;
	}
	r->status = 0;
	return true;

unreachable:
	/* what ibsim does for a MAD it cannot deliver: back at once as a timeout */
	r->status = htonl(TIMEOUT_STATUS);
	return true;
}

/* A Report(Notice) from the SM, its notice data to be filled. */
static uint8_t *report_header(struct fabric *f, struct fs_request *r)
{
	memset(r, 0, sizeof(*r));
	mad_set_field(r->mad, 0, IB_MAD_BASEVER_F, 1);
	mad_set_field(r->mad, 0, IB_MAD_MGMTCLASS_F, IB_SA_CLASS);
	mad_set_field(r->mad, 0, IB_MAD_CLASSVER_F, 2);
	mad_set_field(r->mad, 0, IB_MAD_METHOD_F, IB_MAD_METHOD_REPORT);
	mad_set_field64(r->mad, 0, IB_MAD_TRID_F, 0x5100000000ULL + ++f->notice_count);
	mad_set_field(r->mad, 0, IB_MAD_ATTRID_F, IB_SA_ATTR_NOTICE);
	r->slid = htons(f->nodes[f->sm_node].lid);
	r->sqp = htonl(1);
	r->dqp = htonl(1);
	r->length = htobe64(256);
	return r->mad + IB_SA_DATA_OFFS;
}

static void issuer_gid(uint8_t *d, uint64_t port_guid)
{
	uint64_t prefix = htobe64(0xfe80000000000000ULL), guid = htobe64(port_guid);

	memcpy(d + 64, &prefix, 8);
	memcpy(d + 72, &guid, 8);
}

/* IBA's Bad M_Key trap (256), as an SMA sends it and the SM forwards it:
 * LIDADDR, the method, attribute and modifier asked, the M_Key used (a
 * secret a receiver should not show). */
void fs_trap256(struct fabric *f, struct fs_request *r)
{
	const struct fs_bad_mkey *b = &f->bad_mkey_at;
	uint8_t *d = report_header(f, r), *dd = d + 10;
	uint64_t key = htobe64(b->key);

	mad_set_field(d, 0, IB_NOTICE_IS_GENERIC_F, 1);
	mad_set_field(d, 0, IB_NOTICE_TYPE_F, 0);     /* security */
	mad_set_field(d, 0, IB_NOTICE_PRODUCER_F, f->nodes[b->node].type == FS_SWITCH ? 2 : 1);
	mad_set_field(d, 0, IB_NOTICE_TRAP_NUMBER_F, 256);
	mad_set_field(d, 0, IB_NOTICE_ISSUER_LID_F, b->lid);
	mad_set_field(d, 0, IB_NOTICE_COUNT_F, f->notice_count);
	dd[2] = (uint8_t)(b->lid >> 8);
	dd[3] = (uint8_t)b->lid;
	dd[6] = b->method;
	dd[8] = (uint8_t)(b->attr >> 8);
	dd[9] = (uint8_t)b->attr;
	for (int i = 0; i < 4; i++)
		dd[10 + i] = (uint8_t)(b->mod >> (24 - 8 * i));
	memcpy(dd + 14, &key, 8);
	issuer_gid(d, fs_port_guid(f, b->node, b->port));
}

int fs_forward_trap(struct fabric *f, const struct fs_origin *from, struct fs_request *r,
		    struct fs_request *report)
{
	struct target t;
	uint32_t node = origin_node(f, from);
	uint8_t *d;

	if (r->mad[1] != IB_SMI_CLASS || mad_get_field(r->mad, 0, IB_MAD_METHOD_F) !=
	    IB_MAD_METHOD_TRAP || mad_get_field(r->mad, 0, IB_MAD_ATTRID_F) != IB_SA_ATTR_NOTICE)
		return -1;
	if (!route_lid(f, from, (uint16_t)ntohs((uint16_t)r->dlid), &t) || t.node != f->sm_node)
		return -1;
	d = report_header(f, report);
	memcpy(d, r->mad + IB_SMP_DATA_OFFS, IB_SMP_DATA_SIZE); /* an SMP holds 64 of its 80 */
	issuer_gid(d, fs_port_guid(f, node, f->ports[from->port].num));
	return (int)mad_get_field(d, 0, IB_NOTICE_TRAP_NUMBER_F);
}

void fs_trap128(struct fabric *f, uint32_t switch_node, struct fs_request *r)
{
	struct fs_node *sw = &f->nodes[switch_node];
	uint8_t *d = report_header(f, r);

	mad_set_field(d, 0, IB_NOTICE_IS_GENERIC_F, 1);
	mad_set_field(d, 0, IB_NOTICE_TYPE_F, 1);     /* urgent */
	mad_set_field(d, 0, IB_NOTICE_PRODUCER_F, 2); /* switch */
	mad_set_field(d, 0, IB_NOTICE_TRAP_NUMBER_F, 128);
	mad_set_field(d, 0, IB_NOTICE_ISSUER_LID_F, sw->lid);
	mad_set_field(d, 0, IB_NOTICE_COUNT_F, f->notice_count);
	mad_set_field(d, 0, IB_NOTICE_DATA_LID_F, sw->lid);
	issuer_gid(d, sw->guid);
}
