/* SMA-MIB handlers: each object is read from one cache snapshot of the node
 * (sma_node.c), whose fields come from one SMP attribute decoder
 * (sma_nodeinfo.c, sma_decode.c). Handlers never wait on the fabric.
 *
 *   ibSmaNodeInfo.N        <- node group    <- NodeInfo, NodeDescription
 *   ibSmaSwitchInfo.N      <- switch group  <- SwitchInfo
 *   ibSmaMgmtPortInfo.N    <- port group    <- PortInfo (port 0 / local port)
 *   ibSmaPortInfoTable     <- port group    <- PortInfo (ports 1..N)
 *   ibSmaGuidInfoTable, ibSmaPKeyTable, ibSmaSL2VLMapTable, ibSma*VlArbTable,
 *   ibSmaLinForTable, ibSmaRandomForwardingTable, ibSmaMulForTable,
 *   ibSmaSmInfoTable, ibSmaVendDiagInfoTable, ibSmaLedInfoTable
 *                          <- one table group each
 */
#include "ibsnmpd/config.h"
#include "ibsnmpd/sma.h"

#include <net-snmp/agent/agent_sysORTable.h>

#define SMA 1, 3, 6, 1, 3, 117, 3
static oid sma_mib_oid[] = {SMA};
static const oid node_info_oid[] = {SMA, 1, 1};
static const oid switch_info_oid[] = {SMA, 1, 2};
static const oid guid_table_oid[] = {SMA, 1, 3, 1};
static const oid mgmt_port_oid[] = {SMA, 1, 4};
static const oid port_table_oid[] = {SMA, 1, 5, 1};
static const oid pkey_table_oid[] = {SMA, 1, 6, 1};
static const oid sl2vl_table_oid[] = {SMA, 1, 7, 1};
static const oid vlarb_high_oid[] = {SMA, 1, 8, 1};
static const oid vlarb_low_oid[] = {SMA, 1, 8, 2};
static const oid lft_table_oid[] = {SMA, 1, 9, 1};
static const oid rft_table_oid[] = {SMA, 1, 10, 1};
static const oid mft_table_oid[] = {SMA, 1, 11, 1};
static const oid sminfo_table_oid[] = {SMA, 1, 12, 1, 1};
static const oid vdiag_table_oid[] = {SMA, 1, 13, 1};
static const oid led_table_oid[] = {SMA, 1, 14, 1};
/* IBSNMPD-MIB::ibsnmpdPortExtTable */
static const oid port_ext_table_oid[] = {1, 3, 6, 1, 4, 1, 8072, 9999, 9999, 117, 1, 2, 1};

static struct sma_node *served_node;

/* ---- Node Info scalars ----------------------------------------------------- */

static int node_info_value(unsigned column, netsnmp_variable_list *vb, const void *snap)
{
	const struct sma_nodeinfo *ni = snap;

	switch (column) {
	case 1:
		/* DisplayString (SIZE(1..64)): an empty description has no value */
		if (!ni->description[0])
			return -1;
		mib_set_octets(vb, ni->description, strlen(ni->description));
		return 0;
	case 2: mib_set_int(vb, ni->base_version); return 0;
	case 3: mib_set_int(vb, ni->class_version); return 0;
	case 4: mib_set_int(vb, sma_node_type_to_mib(ni->node_type)); return 0;
	case 5: mib_set_int(vb, ni->num_ports); return 0;
	case 6: mib_set_be_octets(vb, ni->system_image_guid, 8); return 0;
	case 7: mib_set_be_octets(vb, ni->node_guid, 8); return 0;
	case 8: mib_set_be_octets(vb, ni->port_guid, 8); return 0;
	case 9: mib_set_int(vb, ni->partition_cap); return 0;
	case 10: mib_set_be_octets(vb, ni->device_id, 2); return 0;
	case 11: mib_set_be_octets(vb, ni->revision, 4); return 0;
	case 12: mib_set_int(vb, ni->local_port); return 0;
	case 13: mib_set_be_octets(vb, ni->vendor_id, 3); return 0;
	default: return -1;
	}
}

/* ---- Switch Info scalars --------------------------------------------------- */

static int switch_info_value(unsigned column, netsnmp_variable_list *vb, const void *snap)
{
	const struct sma_switch_snapshot *s = snap;
	const struct sma_switchinfo *si = &s->si;

	if (!s->present)
		return -1; /* a CA or router: the group has no instances */
	switch (column) {
	case 1: mib_set_int(vb, si->lft_cap); return 0;
	case 2: mib_set_int(vb, si->rft_cap); return 0;
	case 3: mib_set_int(vb, si->mft_cap); return 0;
	case 4: mib_set_int(vb, si->lft_top); return 0;
	case 5: mib_set_int(vb, si->default_port); return 0;
	case 6: mib_set_int(vb, si->def_mcast_pri_port); return 0;
	case 7: mib_set_int(vb, si->def_mcast_not_pri_port); return 0;
	case 8: mib_set_int(vb, si->lifetime); return 0;
	case 9: mib_set_int(vb, si->port_state_change); return 0;
	case 10: mib_set_int(vb, si->lids_per_port); return 0;
	case 11: mib_set_int(vb, si->partition_enf_cap); return 0;
	case 12: mib_set_int(vb, mib_truth(si->inb_enf_cap)); return 0;
	case 13: mib_set_int(vb, mib_truth(si->outb_enf_cap)); return 0;
	case 14: mib_set_int(vb, mib_truth(si->filter_raw_inb_cap)); return 0;
	case 15: mib_set_int(vb, mib_truth(si->filter_raw_outb_cap)); return 0;
	case 16: mib_set_int(vb, mib_truth(si->enhanced_port0)); return 0;
	default: return -1;
	}
}

/* ---- Management port scalars (PortInfo of port 0 / the local port) -------- */

/* ibSmaPortIs*(5..23): the CapabilityMask bit each one reports. */
static const unsigned char capmask_bit[24] = {
	[5] = 1, [6] = 2, [7] = 3, [8] = 5, [9] = 6, [10] = 7, [11] = 8, [12] = 9,
	[13] = 10, [14] = 11, [15] = 12, [16] = 16, [17] = 17, [18] = 18, [19] = 19,
	[20] = 20, [21] = 21, [22] = 22, [23] = 23,
};

static int mgmt_port_value(unsigned column, netsnmp_variable_list *vb, const void *snap)
{
	const struct sma_port_snapshot *ps = snap;
	const struct sma_portinfo *pi;

	if (!ps->mgmt)
		return -1;
	pi = &ps->mgmt->pi;
	if (column >= 5 && column <= 23) {
		mib_set_int(vb, mib_truth(pi->cap_mask >> capmask_bit[column] & 1));
		return 0;
	}
	switch (column) {
	case 1: /* M_Key: zeros unless the configuration exposes keys */
		mib_set_be_octets(vb, ibsnmpd_cfg.expose_keys ? pi->mkey : 0, 8);
		return 0;
	case 2: mib_set_be_octets(vb, pi->gid_prefix, 8); return 0;
	case 3: mib_set_int(vb, pi->lid); return 0;
	case 4: mib_set_int(vb, pi->sm_lid); return 0;
	case 24: mib_set_int(vb, pi->mkey_lease); return 0;
	case 25: mib_set_int(vb, sma_mib_mkey_protect(pi->mkey_protect)); return 0;
	case 26: mib_set_int(vb, pi->sm_sl); return 0;
	/* InitType bits: NoLoad(0) PreserveContent(1) PreservePresence(2)
	 * DoNotResuscitate(3); InitTypeReply likewise for the first three */
	case 27: case 28: case 29: case 30:
		mib_set_int(vb, mib_truth(pi->init_type >> (column - 27) & 1));
		return 0;
	case 31: case 32: case 33:
		mib_set_int(vb, mib_truth(pi->init_type_reply >> (column - 31) & 1));
		return 0;
	case 34: mib_set_unsigned(vb, ASN_GAUGE, pi->mkey_violations); return 0;
	case 35: mib_set_unsigned(vb, ASN_GAUGE, pi->pkey_violations); return 0;
	case 36: mib_set_unsigned(vb, ASN_GAUGE, pi->qkey_violations); return 0;
	case 37: mib_set_int(vb, pi->guid_cap); return 0;
	case 38: mib_set_int(vb, pi->subnet_timeout); return 0;
	case 39: mib_set_int(vb, pi->resp_time); return 0;
	default: return -1;
	}
}

/* ---- Data port table ---------------------------------------------------------- */

static int data_port_value(const void *row, unsigned column, netsnmp_variable_list *vb,
			   const void *snap)
{
	const struct sma_portinfo *pi = &((const struct sma_port_entry *)row)->pi;
	long v;

	(void)snap;
	switch (column) {
	case 2: v = sma_mib_width_enabled(pi->width_enabled); break;
	case 3: v = sma_mib_width_supported(pi->width_supported); break;
	case 4: v = sma_mib_width_active(pi->width_active); break;
	case 5: v = sma_mib_speed(pi->speed_supported, pi->speed_ext_supported); break;
	case 6: v = sma_mib_port_state(pi->state); break;
	case 7: v = sma_mib_phys_state(pi->phys_state); break;
	case 8: v = sma_mib_link_down_default(pi->link_down_default); break;
	case 9: v = pi->lmc; break;
	case 10: v = sma_mib_speed(pi->speed_active, pi->speed_ext_active); break;
	case 11: v = sma_mib_speed_enabled(pi->speed_enabled); break;
	case 12: v = sma_mib_mtu(pi->neighbor_mtu); break;
	case 13: v = sma_mib_vls(pi->vl_cap); break;
	case 14: v = pi->vl_high_limit; break;
	case 15: v = pi->vlarb_high_cap; break;
	case 16: v = pi->vlarb_low_cap; break;
	case 17: v = sma_mib_mtu(pi->mtu_cap); break;
	case 18: v = pi->vl_stall_count; break;
	case 19: v = pi->hoq_life; break;
	case 20: v = sma_mib_vls(pi->oper_vls); break;
	case 21: v = mib_truth(pi->part_enf_inb); break;
	case 22: v = mib_truth(pi->part_enf_outb); break;
	case 23: v = mib_truth(pi->filter_raw_inb); break;
	case 24: v = mib_truth(pi->filter_raw_outb); break;
	case 25: v = pi->local_phys_err; break;
	case 26: v = pi->overrun_err; break;
	default: return -1;
	}
	mib_set_int(vb, v);
	return 0;
}

/* ---- IBSNMPD-MIB port extensions: what SMA-MIB's enumerations cannot say */

static int port_ext_value(const void *row, unsigned column, netsnmp_variable_list *vb,
			  const void *snap)
{
	const struct sma_portinfo *pi = &((const struct sma_port_entry *)row)->pi;
	int gen = sma_speed_generation(pi->speed_active, pi->speed_ext_active);
	unsigned long v;

	(void)snap;
	switch (column) {
	case 2: v = sma_width_lanes(pi->width_active); break;
	case 3: v = pi->width_supported; break;
	case 4: mib_set_int(vb, gen); return 0;
	case 5: v = sma_lane_data_mbps(gen); break;
	case 6: v = (unsigned long)sma_lane_data_mbps(gen) * sma_width_lanes(pi->width_active); break;
	case 7: v = sma_mtu_octets(pi->mtu_cap); break;
	case 8: v = sma_mtu_octets(pi->neighbor_mtu); break;
	case 9: v = sma_vl_count(pi->vl_cap); break;
	case 10: v = sma_vl_count(pi->oper_vls); break;
	case 11: v = pi->speed_supported; break;
	case 12: v = pi->speed_ext_supported; break;
	default: return -1;
	}
	mib_set_unsigned(vb, ASN_UNSIGNED, v);
	return 0;
}

/* ---- table groups ----------------------------------------------------------- */

static int guid_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		      const void *snap)
{
	(void)snap;
	if (column != 3)
		return -1;
	mib_set_be_octets(vb, ((const struct sma_guid_entry *)row)->guid, 8);
	return 0;
}

static int pkey_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		      const void *snap)
{
	const struct sma_pkey_entry *e = row;

	(void)snap;
	if (column == 3) /* membership: full(3) when the top bit is set, else limited(2) */
		mib_set_int(vb, e->pkey & 0x8000 ? 3 : 2);
	else if (column == 4)
		mib_set_int(vb, e->pkey & 0x7fff);
	else
		return -1;
	return 0;
}

static int sl2vl_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		       const void *snap)
{
	(void)snap;
	if (column != 4)
		return -1;
	mib_set_int(vb, ((const struct sma_sl2vl_entry *)row)->vl);
	return 0;
}

static int vlarb_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		       const void *snap)
{
	const struct sma_vlarb_entry *e = row;

	(void)snap;
	if (column == 3)
		mib_set_int(vb, e->vl);
	else if (column == 4)
		mib_set_int(vb, e->weight);
	else
		return -1;
	return 0;
}

static int lft_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		     const void *snap)
{
	(void)snap;
	if (column != 2)
		return -1;
	mib_set_unsigned(vb, ASN_UNSIGNED, ((const struct sma_lft_entry *)row)->port);
	return 0;
}

static int rft_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		     const void *snap)
{
	const struct sma_rft_row *r = row;

	(void)snap;
	switch (column) {
	case 2: mib_set_int(vb, r->e.lid); return 0;
	case 3: mib_set_unsigned(vb, ASN_UNSIGNED, r->e.port); return 0;
	case 4: mib_set_int(vb, r->e.lmc); return 0;
	case 5: mib_set_int(vb, mib_truth(r->e.valid)); return 0;
	default: return -1;
	}
}

static int mft_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		     const void *snap)
{
	(void)snap;
	if (column != 2)
		return -1;
	mib_set_octets(vb, ((const struct sma_mft_entry *)row)->ports, 32);
	return 0;
}

static int sminfo_value(const void *row, unsigned column, netsnmp_variable_list *vb,
			const void *snap)
{
	const struct sma_sminfo *sm = &((const struct sma_sminfo_entry *)row)->sm;

	(void)snap;
	switch (column) {
	case 2: mib_set_be_octets(vb, sm->guid, 8); return 0;
	case 3: /* SM_Key: zeros unless the configuration exposes keys */
		mib_set_be_octets(vb, ibsnmpd_cfg.expose_keys ? sm->sm_key : 0, 8);
		return 0;
	case 4: mib_set_unsigned(vb, ASN_COUNTER, sm->act_count); return 0;
	case 5: mib_set_int(vb, sm->priority); return 0;
	case 6: mib_set_int(vb, sma_mib_sm_state(sm->state)); return 0;
	default: return -1;
	}
}

/* DiagCode (PortInfo) bits 0-3 generic code, 4-14 vendor code, 15 index
 * forward flag; DiagData from the VendorDiag attribute. */
static int vdiag_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		       const void *snap)
{
	const struct sma_vdiag_entry *e = row;
	const struct sma_port_snapshot *ps;
	unsigned diag = 0;

	(void)snap;
	ps = served_node ? cache_snapshot(&served_node->group[CACHE_PORT_INFO]) : NULL;
	for (size_t i = 0; ps && i < ps->count; i++)
		if (ps->ports[i].num == e->port)
			diag = ps->ports[i].pi.diag_code;
	switch (column) {
	case 2: mib_set_int(vb, (diag & 0xf) <= 4 ? (long)(diag & 0xf) + 1 : 6); return 0;
	case 3: mib_set_int(vb, diag >> 4 & 0x7ff); return 0;
	case 4: mib_set_int(vb, mib_truth(diag >> 15 & 1)); return 0;
	case 5: mib_set_octets(vb, e->d.diag_data, sizeof(e->d.diag_data)); return 0;
	default: return -1;
	}
}

static int led_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		     const void *snap)
{
	(void)snap;
	if (column != 2)
		return -1;
	mib_set_int(vb, ((const struct sma_led_entry *)row)->on ? 2 : 3);
	return 0;
}

/* ---- registration ------------------------------------------------------------- */

static const void *group_snapshot(const void *ctx)
{
	return cache_snapshot(ctx);
}

static const struct mib_rows *port_rows(const void *ctx, const void **snap)
{
	const struct sma_port_snapshot *ps = cache_snapshot(ctx);

	*snap = ps;
	return ps ? &ps->data_ports : NULL;
}

/* every port, a switch's port 0 included */
static const struct mib_rows *all_port_rows(const void *ctx, const void **snap)
{
	const struct sma_port_snapshot *ps = cache_snapshot(ctx);

	*snap = ps;
	return ps ? &ps->all_ports : NULL;
}

static const struct mib_rows *table0_rows(const void *ctx, const void **snap)
{
	const struct sma_table_snapshot *t = cache_snapshot(ctx);

	*snap = t;
	return t ? &t->table[0] : NULL;
}

static const struct mib_rows *table1_rows(const void *ctx, const void **snap)
{
	const struct sma_table_snapshot *t = cache_snapshot(ctx);

	*snap = t;
	return t ? &t->table[1] : NULL;
}

/* Each registration reads the cache group named beside it. */
#define SCALARS(nm, o, last_, fn) \
	{.name = nm, .group_oid = o, .group_oid_len = OID_LENGTH(o), .first = 1, \
	 .last = last_, .snapshot = group_snapshot, .value = fn}
#define TABLE(nm, o, first_, last_, rowsfn, fn) \
	{.name = nm, .table_oid = o, .table_oid_len = OID_LENGTH(o), .first_column = first_, \
	 .last_column = last_, .rows = rowsfn, .value = fn}

static struct mib_scalars scalars[] = {
	SCALARS("ibSmaNodeInfo", node_info_oid, 13, node_info_value),
	SCALARS("ibSmaSwitchInfo", switch_info_oid, 16, switch_info_value),
	SCALARS("ibSmaMgmtPortInfo", mgmt_port_oid, 39, mgmt_port_value),
};
static const enum cache_group_id scalars_group[] = {
	CACHE_NODE_INFO, CACHE_SWITCH_INFO, CACHE_PORT_INFO,
};

static struct mib_table tables[] = {
	TABLE("ibSmaGuidInfoTable", guid_table_oid, 3, 3, table0_rows, guid_value),
	TABLE("ibSmaPortInfoTable", port_table_oid, 2, 26, port_rows, data_port_value),
	TABLE("ibSmaPKeyTable", pkey_table_oid, 3, 4, table0_rows, pkey_value),
	TABLE("ibSmaSL2VLMapTable", sl2vl_table_oid, 4, 4, table0_rows, sl2vl_value),
	TABLE("ibSmaHiPriVlArbTable", vlarb_high_oid, 3, 4, table0_rows, vlarb_value),
	TABLE("ibSmaLowPriVlArbTable", vlarb_low_oid, 3, 4, table1_rows, vlarb_value),
	TABLE("ibSmaLinForTable", lft_table_oid, 2, 2, table0_rows, lft_value),
	TABLE("ibSmaRandomForwardingTable", rft_table_oid, 2, 5, table0_rows, rft_value),
	TABLE("ibSmaMulForTable", mft_table_oid, 2, 2, table0_rows, mft_value),
	TABLE("ibSmaSmInfoTable", sminfo_table_oid, 2, 6, table0_rows, sminfo_value),
	TABLE("ibSmaVendDiagInfoTable", vdiag_table_oid, 2, 5, table0_rows, vdiag_value),
	TABLE("ibSmaLedInfoTable", led_table_oid, 2, 2, table0_rows, led_value),
	TABLE("ibsnmpdPortExtTable", port_ext_table_oid, 2, 12, all_port_rows, port_ext_value),
};
static const enum cache_group_id tables_group[] = {
	CACHE_GUID_INFO, CACHE_PORT_INFO, CACHE_PKEY, CACHE_SL2VL, CACHE_VLARB, CACHE_VLARB,
	CACHE_LFT, CACHE_RFT, CACHE_MFT, CACHE_SM_INFO, CACHE_VENDOR_DIAG, CACHE_LED_INFO,
	CACHE_PORT_INFO,
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

int sma_mib_register(struct sma_node *node)
{
	served_node = node;
	for (size_t i = 0; i < COUNT(scalars); i++) {
		scalars[i].ctx = &node->group[scalars_group[i]];
		if (mib_scalars_register(&scalars[i]))
			return -1;
	}
	for (size_t i = 0; i < COUNT(tables); i++) {
		tables[i].ctx = &node->group[tables_group[i]];
		if (mib_table_register(&tables[i]))
			return -1;
	}
	register_sysORTable(sma_mib_oid, OID_LENGTH(sma_mib_oid),
			    "SMA-MIB: InfiniBand Subnet Management Agent, served by ibsnmpd");
	return 0;
}

void sma_mib_unregister(void)
{
	for (size_t i = 0; i < COUNT(scalars); i++)
		mib_scalars_unregister(&scalars[i]);
	for (size_t i = 0; i < COUNT(tables); i++)
		mib_table_unregister(&tables[i]);
	unregister_sysORTable(sma_mib_oid, OID_LENGTH(sma_mib_oid));
	served_node = NULL;
}
