/* SMA-MIB handlers: each object is read from one cache snapshot of the node
 * (sma_collector.c), whose fields come from one SMP attribute decoder
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
#include "ibsnmpd/mib_oids.h"
#include "ibsnmpd/sma.h"

#include <net-snmp/agent/agent_sysORTable.h>

static oid sma_mib_oid[] = {OID_IB_SMA_MIB};
static const oid node_info_oid[] = {OID_IB_SMA_NODE_INFO};
static const oid switch_info_oid[] = {OID_IB_SMA_SWITCH_INFO};
static const oid guid_table_oid[] = {OID_IB_SMA_GUID_INFO_TABLE};
static const oid mgmt_port_oid[] = {OID_IB_SMA_MGMT_PORT_INFO};
static const oid port_table_oid[] = {OID_IB_SMA_PORT_INFO_TABLE};
static const oid pkey_table_oid[] = {OID_IB_SMA_P_KEY_TABLE};
static const oid sl2vl_table_oid[] = {OID_IB_SMA_SL2_VL_MAP_TABLE};
static const oid vlarb_high_oid[] = {OID_IB_SMA_HI_PRI_VL_ARB_TABLE};
static const oid vlarb_low_oid[] = {OID_IB_SMA_LOW_PRI_VL_ARB_TABLE};
static const oid lft_table_oid[] = {OID_IB_SMA_LIN_FOR_TABLE};
static const oid rft_table_oid[] = {OID_IB_SMA_RANDOM_FORWARDING_TABLE};
static const oid mft_table_oid[] = {OID_IB_SMA_MUL_FOR_TABLE};
static const oid sminfo_table_oid[] = {OID_IB_SMA_SM_INFO_TABLE};
static const oid vdiag_table_oid[] = {OID_IB_SMA_VEND_DIAG_INFO_TABLE};
static const oid led_table_oid[] = {OID_IB_SMA_LED_INFO_TABLE};
static const oid port_ext_table_oid[] = {OID_IBSNMPD_PORT_EXT_TABLE};

/* ---- Node Info scalars ----------------------------------------------------- */

static int node_info_value(unsigned column, netsnmp_variable_list *vb, const void *snap)
{
	const struct sma_nodeinfo *ni = snap;

	switch (column) {
	case SCALAR_IB_SMA_NODE_STRING:
		/* DisplayString (SIZE(1..64)): an empty description has no value */
		if (!ni->description[0])
			return -1;
		mib_set_octets(vb, ni->description, strlen(ni->description));
		return 0;
	case SCALAR_IB_SMA_NODE_BASE_VERSION: mib_set_int(vb, ni->base_version); return 0;
	case SCALAR_IB_SMA_NODE_CLASS_VERSION: mib_set_int(vb, ni->class_version); return 0;
	case SCALAR_IB_SMA_NODE_TYPE: mib_set_int(vb, sma_node_type_to_mib(ni->node_type)); return 0;
	case SCALAR_IB_SMA_NODE_NUM_PORTS: mib_set_int(vb, ni->num_ports); return 0;
	case SCALAR_IB_SMA_SYSTEM_IMAGE_GUID: mib_set_be_octets(vb, ni->system_image_guid, 8); return 0;
	case SCALAR_IB_SMA_NODE_GUID: mib_set_be_octets(vb, ni->node_guid, 8); return 0;
	case SCALAR_IB_SMA_NODE_PORT_GUID: mib_set_be_octets(vb, ni->port_guid, 8); return 0;
	case SCALAR_IB_SMA_NODE_PARTITION_TABLE_NUM: mib_set_int(vb, ni->partition_cap); return 0;
	case SCALAR_IB_SMA_NODE_DEVICE_ID: mib_set_be_octets(vb, ni->device_id, 2); return 0;
	case SCALAR_IB_SMA_NODE_REVISION: mib_set_be_octets(vb, ni->revision, 4); return 0;
	case SCALAR_IB_SMA_NODE_LOCAL_PORT_NUM_OR_ZERO: mib_set_int(vb, ni->local_port); return 0;
	case SCALAR_IB_SMA_NODE_VENDOR_ID: mib_set_be_octets(vb, ni->vendor_id, 3); return 0;
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
	case SCALAR_IB_SMA_SW_LINEAR_FDB_TABLE_NUM: mib_set_int(vb, si->lft_cap); return 0;
	case SCALAR_IB_SMA_SW_RANDOM_FDB_TABLE_NUM: mib_set_int(vb, si->rft_cap); return 0;
	case SCALAR_IB_SMA_SW_MULTICAST_FDB_TABLE_NUM: mib_set_int(vb, si->mft_cap); return 0;
	case SCALAR_IB_SMA_SW_LINEAR_FDB_TOP: mib_set_int(vb, si->lft_top); return 0;
	case SCALAR_IB_SMA_SW_DEFAULT_PORT: mib_set_int(vb, si->default_port); return 0;
	case SCALAR_IB_SMA_SW_DEF_MCAST_PRI_PORT: mib_set_int(vb, si->def_mcast_pri_port); return 0;
	case SCALAR_IB_SMA_SW_DEF_MCAST_NOT_PRI_PORT: mib_set_int(vb, si->def_mcast_not_pri_port); return 0;
	case SCALAR_IB_SMA_SW_LIFE_TIME_VALUE: mib_set_int(vb, si->lifetime); return 0;
	case SCALAR_IB_SMA_SW_PORT_STATE_CHANGE: mib_set_int(vb, si->port_state_change); return 0;
	case SCALAR_IB_SMA_SW_LIDS_PER_PORT: mib_set_int(vb, si->lids_per_port); return 0;
	case SCALAR_IB_SMA_SW_PARTITION_ENFORCE_NUM: mib_set_int(vb, si->partition_enf_cap); return 0;
	case SCALAR_IB_SMA_SW_INBOUND_ENFORCE_CAP: mib_set_int(vb, mib_truth(si->inb_enf_cap)); return 0;
	case SCALAR_IB_SMA_SW_OUTBOUND_ENFORCE_CAP: mib_set_int(vb, mib_truth(si->outb_enf_cap)); return 0;
	case SCALAR_IB_SMA_SW_FILTER_RAW_PKT_INPUT_CAP: mib_set_int(vb, mib_truth(si->filter_raw_inb_cap)); return 0;
	case SCALAR_IB_SMA_SW_FILTER_RAW_PKT_OUTPUT_CAP: mib_set_int(vb, mib_truth(si->filter_raw_outb_cap)); return 0;
	case SCALAR_IB_SMA_SW_ENHANCED_PORT0: mib_set_int(vb, mib_truth(si->enhanced_port0)); return 0;
	default: return -1;
	}
}

/* ---- Management port scalars (PortInfo of port 0 / the local port) -------- */

/* ibSmaPortIs*: the CapabilityMask bit each one reports. */
static const struct {
	unsigned scalar, bit;
} capmask_scalar[] = {
	{SCALAR_IB_SMA_PORT_IS_SUBNET_MANAGER, 1},
	{SCALAR_IB_SMA_PORT_IS_NOTICE_SUPPORTED, 2},
	{SCALAR_IB_SMA_PORT_IS_TRAP_SUPPORTED, 3},
	{SCALAR_IB_SMA_PORT_IS_AUTO_MIGRATE_SUPPORTED, 5},
	{SCALAR_IB_SMA_PORT_IS_SL_MAPPING_SUPPORTED, 6},
	{SCALAR_IB_SMA_PORT_IS_M_KEY_NVRAM, 7},
	{SCALAR_IB_SMA_PORT_IS_P_KEY_NVRAM, 8},
	{SCALAR_IB_SMA_PORT_IS_LED_INFO_SUPPORTED, 9},
	{SCALAR_IB_SMA_PORT_IS_SM_DISABLED, 10},
	{SCALAR_IB_SMA_PORT_IS_SYS_IMG_GUID_SUPPORTED, 11},
	{SCALAR_IB_SMA_PORT_IS_P_KEY_EXT_PORT_TRAP_SUP, 12},
	{SCALAR_IB_SMA_PORT_IS_COMM_MANAGE_SUPPORTED, 16},
	{SCALAR_IB_SMA_PORT_IS_SNMP_TUNNEL_SUPPORTED, 17},
	{SCALAR_IB_SMA_PORT_IS_REINIT_SUPPORTED, 18},
	{SCALAR_IB_SMA_PORT_IS_DEV_MANAGE_SUPPORTED, 19},
	{SCALAR_IB_SMA_PORT_IS_VENDOR_CLASS_SUPPORTED, 20},
	{SCALAR_IB_SMA_PORT_IS_DR_NOTICE_SUPPORTED, 21},
	{SCALAR_IB_SMA_PORT_IS_CAP_MASK_NOTIC_SUPPORTED, 22},
	{SCALAR_IB_SMA_PORT_IS_BOOT_MGMT_SUPPORTED, 23},
};

static int mgmt_port_value(unsigned column, netsnmp_variable_list *vb, const void *snap)
{
	const struct sma_port_snapshot *ps = snap;
	const struct sma_portinfo *pi;

	if (!ps->mgmt)
		return -1;
	pi = &ps->mgmt->pi;
	for (size_t i = 0; i < sizeof(capmask_scalar) / sizeof(capmask_scalar[0]); i++) {
		if (capmask_scalar[i].scalar == column) {
			mib_set_int(vb, mib_truth(pi->cap_mask >> capmask_scalar[i].bit & 1));
			return 0;
		}
	}
	switch (column) {
	case SCALAR_IB_SMA_PORT_M_KEY: /* zeros unless the configuration exposes keys */
		mib_set_be_octets(vb, ibsnmpd_cfg.expose_keys ? pi->mkey : 0, 8);
		return 0;
	case SCALAR_IB_SMA_PORT_GID_PREFIX: mib_set_be_octets(vb, pi->gid_prefix, 8); return 0;
	case SCALAR_IB_SMA_PORT_LID: mib_set_int(vb, pi->lid); return 0;
	case SCALAR_IB_SMA_PORT_MASTER_SM_LID: mib_set_int(vb, pi->sm_lid); return 0;
	case SCALAR_IB_SMA_PORT_M_KEY_LEASE_PERIOD: mib_set_int(vb, pi->mkey_lease); return 0;
	case SCALAR_IB_SMA_PORT_M_KEY_PROTECT_BITS:
		mib_set_int(vb, sma_mib_mkey_protect(pi->mkey_protect));
		return 0;
	case SCALAR_IB_SMA_PORT_MASTER_SM_SL: mib_set_int(vb, pi->sm_sl); return 0;
	/* InitType bits: NoLoad(0) PreserveContent(1) PreservePresence(2)
	 * DoNotResuscitate(3); InitTypeReply likewise for the first three */
	case SCALAR_IB_SMA_PORT_INIT_TYPE_LOAD:
	case SCALAR_IB_SMA_PORT_INIT_TYPE_CONTENT:
	case SCALAR_IB_SMA_PORT_INIT_TYPE_PRESENCE:
	case SCALAR_IB_SMA_PORT_INIT_TYPE_RESUSCITATE:
		mib_set_int(vb, mib_truth(pi->init_type >>
					  (column - SCALAR_IB_SMA_PORT_INIT_TYPE_LOAD) & 1));
		return 0;
	case SCALAR_IB_SMA_PORT_INIT_NO_LOAD_REPLY:
	case SCALAR_IB_SMA_PORT_INIT_PRESERVE_CONT_REPLY:
	case SCALAR_IB_SMA_PORT_INIT_PRESERVE_PRES_REPLY:
		mib_set_int(vb, mib_truth(pi->init_type_reply >>
					  (column - SCALAR_IB_SMA_PORT_INIT_NO_LOAD_REPLY) & 1));
		return 0;
	case SCALAR_IB_SMA_PORT_M_KEY_VIOLATIONS:
		mib_set_unsigned(vb, ASN_GAUGE, pi->mkey_violations);
		return 0;
	case SCALAR_IB_SMA_PORT_P_KEY_VIOLATIONS:
		mib_set_unsigned(vb, ASN_GAUGE, pi->pkey_violations);
		return 0;
	case SCALAR_IB_SMA_PORT_Q_KEY_VIOLATIONS:
		mib_set_unsigned(vb, ASN_GAUGE, pi->qkey_violations);
		return 0;
	case SCALAR_IB_SMA_PORT_NUM_GUID: mib_set_int(vb, pi->guid_cap); return 0;
	case SCALAR_IB_SMA_PORT_SUBNET_TIMEOUT: mib_set_int(vb, pi->subnet_timeout); return 0;
	case SCALAR_IB_SMA_PORT_RESPONSE_TIME_VALUE: mib_set_int(vb, pi->resp_time); return 0;
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
	case COLUMN_IB_SMA_PORT_LINK_WIDTH_ENABLED: v = sma_mib_width_enabled(pi->width_enabled); break;
	case COLUMN_IB_SMA_PORT_LINK_WIDTH_SUPPORTED:
		v = sma_mib_width_supported(pi->width_supported);
		break;
	case COLUMN_IB_SMA_PORT_LINK_WIDTH_ACTIVE: v = sma_mib_width_active(pi->width_active); break;
	case COLUMN_IB_SMA_PORT_LINK_SPEED_SUPPORTED:
		v = sma_mib_speed(pi->speed_supported, pi->speed_ext_supported);
		break;
	case COLUMN_IB_SMA_PORT_LINK_STATE: v = sma_mib_port_state(pi->state); break;
	case COLUMN_IB_SMA_PORT_PHYS_STATE: v = sma_mib_phys_state(pi->phys_state); break;
	case COLUMN_IB_SMA_PORT_LINK_DOWN_DEFAULT_STATE:
		v = sma_mib_link_down_default(pi->link_down_default);
		break;
	case COLUMN_IB_SMA_PORT_LID_MASK_COUNT: v = pi->lmc; break;
	case COLUMN_IB_SMA_PORT_LINK_SPEED_ACTIVE:
		v = sma_mib_speed(pi->speed_active, pi->speed_ext_active);
		break;
	case COLUMN_IB_SMA_PORT_LINK_SPEED_ENABLED: v = sma_mib_speed_enabled(pi->speed_enabled); break;
	case COLUMN_IB_SMA_PORT_NEIGHBOR_MTU: v = sma_mib_mtu(pi->neighbor_mtu); break;
	case COLUMN_IB_SMA_PORT_VIRT_LANE_SUPPORT: v = sma_mib_vls(pi->vl_cap); break;
	case COLUMN_IB_SMA_PORT_VL_HIGH_PRIORITY_LIMIT: v = pi->vl_high_limit; break;
	case COLUMN_IB_SMA_PORT_VL_ARB_HIGH_CAPACITY: v = pi->vlarb_high_cap; break;
	case COLUMN_IB_SMA_PORT_VL_ARB_LOW_CAPACITY: v = pi->vlarb_low_cap; break;
	case COLUMN_IB_SMA_PORT_MTU_CAPACITY: v = sma_mib_mtu(pi->mtu_cap); break;
	case COLUMN_IB_SMA_PORT_VL_STALL_COUNT: v = pi->vl_stall_count; break;
	case COLUMN_IB_SMA_PORT_HEAD_OF_QUEUE_LIFE: v = pi->hoq_life; break;
	case COLUMN_IB_SMA_PORT_OPERATIONAL_VLS: v = sma_mib_vls(pi->oper_vls); break;
	case COLUMN_IB_SMA_PORT_PART_ENFORCE_INBOUND: v = mib_truth(pi->part_enf_inb); break;
	case COLUMN_IB_SMA_PORT_PART_ENFORCE_OUTBOUND: v = mib_truth(pi->part_enf_outb); break;
	case COLUMN_IB_SMA_PORT_FILTER_RAW_PKT_INBOUND: v = mib_truth(pi->filter_raw_inb); break;
	case COLUMN_IB_SMA_PORT_FILTER_RAW_PKT_OUTBOUND: v = mib_truth(pi->filter_raw_outb); break;
	case COLUMN_IB_SMA_PORT_LOCAL_PHYS_ERROR_THRESHOLD: v = pi->local_phys_err; break;
	case COLUMN_IB_SMA_PORT_OVERRUN_ERROR_THRESHOLD: v = pi->overrun_err; break;
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
	case COLUMN_IBSNMPD_PORT_EXT_WIDTH_ACTIVE: v = sma_width_lanes(pi->width_active); break;
	case COLUMN_IBSNMPD_PORT_EXT_WIDTH_SUPPORTED: v = pi->width_supported; break;
	case COLUMN_IBSNMPD_PORT_EXT_SPEED_ACTIVE: mib_set_int(vb, gen); return 0;
	case COLUMN_IBSNMPD_PORT_EXT_LANE_RATE: v = sma_lane_data_mbps(gen); break;
	case COLUMN_IBSNMPD_PORT_EXT_RATE:
		v = (unsigned long)sma_lane_data_mbps(gen) * sma_width_lanes(pi->width_active);
		break;
	case COLUMN_IBSNMPD_PORT_EXT_MTU_CAP: v = sma_mtu_octets(pi->mtu_cap); break;
	case COLUMN_IBSNMPD_PORT_EXT_NEIGHBOR_MTU: v = sma_mtu_octets(pi->neighbor_mtu); break;
	case COLUMN_IBSNMPD_PORT_EXT_VL_CAP: v = sma_vl_count(pi->vl_cap); break;
	case COLUMN_IBSNMPD_PORT_EXT_OPER_VLS: v = sma_vl_count(pi->oper_vls); break;
	case COLUMN_IBSNMPD_PORT_EXT_SPEED_SUPPORTED: v = pi->speed_supported; break;
	case COLUMN_IBSNMPD_PORT_EXT_SPEED_EXT_SUPPORTED: v = pi->speed_ext_supported; break;
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
	if (column != COLUMN_IB_SMA_GUID_VAL)
		return -1;
	mib_set_be_octets(vb, ((const struct sma_guid_entry *)row)->guid, 8);
	return 0;
}

/* IbPartitionMembership: full(3) when the top bit is set, else limited(2) */
#define PKEY_MEMBERSHIP_LIMITED 2
#define PKEY_MEMBERSHIP_FULL 3

static int pkey_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		      const void *snap)
{
	const struct sma_pkey_entry *e = row;

	(void)snap;
	if (column == COLUMN_IB_SMA_P_KEY_MEMBERSHIP)
		mib_set_int(vb, e->pkey & 0x8000 ? PKEY_MEMBERSHIP_FULL : PKEY_MEMBERSHIP_LIMITED);
	else if (column == COLUMN_IB_SMA_P_KEY_BASE)
		mib_set_int(vb, e->pkey & 0x7fff);
	else
		return -1;
	return 0;
}

static int sl2vl_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		       const void *snap)
{
	(void)snap;
	if (column != COLUMN_IB_SMA_VIRTUAL_LANE)
		return -1;
	mib_set_int(vb, ((const struct sma_sl2vl_entry *)row)->vl);
	return 0;
}

/* Both VL arbitration tables: the high- and low-priority columns have the
 * same numbers. */
static int vlarb_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		       const void *snap)
{
	const struct sma_vlarb_entry *e = row;

	(void)snap;
	if (column == COLUMN_IB_SMA_HI_PRI_VIRT_LANE)
		mib_set_int(vb, e->vl);
	else if (column == COLUMN_IB_SMA_HI_PRI_WEIGHT)
		mib_set_int(vb, e->weight);
	else
		return -1;
	return 0;
}

static int lft_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		     const void *snap)
{
	(void)snap;
	if (column != COLUMN_IB_SMA_LIN_FORW_EGRESS_PORT)
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
	case COLUMN_IB_SMA_RANDOM_DEST_LID: mib_set_int(vb, r->e.lid); return 0;
	case COLUMN_IB_SMA_RANDOM_FORW_EGRESS_PORT:
		mib_set_unsigned(vb, ASN_UNSIGNED, r->e.port);
		return 0;
	case COLUMN_IB_SMA_RANDOM_LMC: mib_set_int(vb, r->e.lmc); return 0;
	case COLUMN_IB_SMA_RANDOM_IS_VALID: mib_set_int(vb, mib_truth(r->e.valid)); return 0;
	default: return -1;
	}
}

static int mft_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		     const void *snap)
{
	(void)snap;
	if (column != COLUMN_IB_SMA_MUL_FORW_MASK)
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
	case COLUMN_IB_SMA_SM_GUID: mib_set_be_octets(vb, sm->guid, 8); return 0;
	case COLUMN_IB_SMA_SM_SM_KEY: /* zeros unless the configuration exposes keys */
		mib_set_be_octets(vb, ibsnmpd_cfg.expose_keys ? sm->sm_key : 0, 8);
		return 0;
	case COLUMN_IB_SMA_SM_SMP_COUNT: mib_set_unsigned(vb, ASN_COUNTER, sm->act_count); return 0;
	case COLUMN_IB_SMA_SM_PRIORITY: mib_set_int(vb, sm->priority); return 0;
	case COLUMN_IB_SMA_SM_STATE: mib_set_int(vb, sma_mib_sm_state(sm->state)); return 0;
	default: return -1;
	}
}

/* DiagCode (PortInfo, read with the group) bits 0-3 generic code, 4-14
 * vendor code, 15 index forward flag; DiagData from the VendorDiag
 * attribute. */
static int vdiag_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		       const void *snap)
{
	const struct sma_vdiag_entry *e = row;
	unsigned diag = e->diag_code;

	(void)snap;
	switch (column) {
	case COLUMN_IB_SMA_PORT_GENERIC_DIAG_CODE:
		mib_set_int(vb, (diag & 0xf) <= 4 ? (long)(diag & 0xf) + 1 : 6);
		return 0;
	case COLUMN_IB_SMA_PORT_VENDOR_DIAG_CODE: mib_set_int(vb, diag >> 4 & 0x7ff); return 0;
	case COLUMN_IB_SMA_PORT_VENDOR_DIAG_INDEX_FWD:
		mib_set_int(vb, mib_truth(diag >> 15 & 1));
		return 0;
	case COLUMN_IB_SMA_PORT_VENDOR_DIAG_DATA:
		mib_set_octets(vb, e->d.diag_data, sizeof(e->d.diag_data));
		return 0;
	default: return -1;
	}
}

/* LedState: on(2), off(3) */
static int led_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		     const void *snap)
{
	(void)snap;
	if (column != COLUMN_IB_SMA_LED_STATE)
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

static const struct mib_scalars scalars[] = {
	SCALARS("ibSmaNodeInfo", node_info_oid, SCALAR_IB_SMA_NODE_VENDOR_ID, node_info_value),
	SCALARS("ibSmaSwitchInfo", switch_info_oid, SCALAR_IB_SMA_SW_ENHANCED_PORT0,
		switch_info_value),
	SCALARS("ibSmaMgmtPortInfo", mgmt_port_oid, SCALAR_IB_SMA_PORT_RESPONSE_TIME_VALUE,
		mgmt_port_value),
};
static const enum sma_group scalars_group[] = {
	SMA_NODE_INFO, SMA_SWITCH_INFO, SMA_PORT_INFO,
};

static const struct mib_table tables[] = {
	TABLE("ibSmaGuidInfoTable", guid_table_oid, COLUMN_IB_SMA_GUID_VAL, COLUMN_IB_SMA_GUID_VAL,
	      table0_rows, guid_value),
	TABLE("ibSmaPortInfoTable", port_table_oid, COLUMN_IB_SMA_PORT_LINK_WIDTH_ENABLED,
	      COLUMN_IB_SMA_PORT_OVERRUN_ERROR_THRESHOLD, port_rows, data_port_value),
	TABLE("ibSmaPKeyTable", pkey_table_oid, COLUMN_IB_SMA_P_KEY_MEMBERSHIP,
	      COLUMN_IB_SMA_P_KEY_BASE, table0_rows, pkey_value),
	TABLE("ibSmaSL2VLMapTable", sl2vl_table_oid, COLUMN_IB_SMA_VIRTUAL_LANE,
	      COLUMN_IB_SMA_VIRTUAL_LANE, table0_rows, sl2vl_value),
	TABLE("ibSmaHiPriVlArbTable", vlarb_high_oid, COLUMN_IB_SMA_HI_PRI_VIRT_LANE,
	      COLUMN_IB_SMA_HI_PRI_WEIGHT, table0_rows, vlarb_value),
	TABLE("ibSmaLowPriVlArbTable", vlarb_low_oid, COLUMN_IB_SMA_LOW_PRI_VIRT_LANE,
	      COLUMN_IB_SMA_LOW_PRI_WEIGHT, table1_rows, vlarb_value),
	TABLE("ibSmaLinForTable", lft_table_oid, COLUMN_IB_SMA_LIN_FORW_EGRESS_PORT,
	      COLUMN_IB_SMA_LIN_FORW_EGRESS_PORT, table0_rows, lft_value),
	TABLE("ibSmaRandomForwardingTable", rft_table_oid, COLUMN_IB_SMA_RANDOM_DEST_LID,
	      COLUMN_IB_SMA_RANDOM_IS_VALID, table0_rows, rft_value),
	TABLE("ibSmaMulForTable", mft_table_oid, COLUMN_IB_SMA_MUL_FORW_MASK,
	      COLUMN_IB_SMA_MUL_FORW_MASK, table0_rows, mft_value),
	TABLE("ibSmaSmInfoTable", sminfo_table_oid, COLUMN_IB_SMA_SM_GUID, COLUMN_IB_SMA_SM_STATE,
	      table0_rows, sminfo_value),
	TABLE("ibSmaVendDiagInfoTable", vdiag_table_oid, COLUMN_IB_SMA_PORT_GENERIC_DIAG_CODE,
	      COLUMN_IB_SMA_PORT_VENDOR_DIAG_DATA, table0_rows, vdiag_value),
	TABLE("ibSmaLedInfoTable", led_table_oid, COLUMN_IB_SMA_LED_STATE, COLUMN_IB_SMA_LED_STATE,
	      table0_rows, led_value),
	TABLE("ibsnmpdPortExtTable", port_ext_table_oid, COLUMN_IBSNMPD_PORT_EXT_WIDTH_ACTIVE,
	      COLUMN_IBSNMPD_PORT_EXT_SPEED_EXT_SUPPORTED, all_port_rows, port_ext_value),
};
static const enum sma_group tables_group[] = {
	SMA_GUID_INFO, SMA_PORT_INFO, SMA_PKEY, SMA_SL2VL, SMA_VLARB, SMA_VLARB,
	SMA_LFT, SMA_RFT, SMA_MFT, SMA_SM_INFO, SMA_VENDOR_DIAG, SMA_LED_INFO,
	SMA_PORT_INFO,
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ---- SMA-MIB and ibsnmpdPortExtTable, two subtrees ------------------------- */

/* SMA-MIB's members in OID order (its management port scalars sit between
 * two tables) */
static const struct mib_member sma_members[] = {
	{.scalars = &scalars[0]}, {.scalars = &scalars[1]}, {.table = &tables[0]},
	{.scalars = &scalars[2]}, {.table = &tables[1]},    {.table = &tables[2]},
	{.table = &tables[3]},    {.table = &tables[4]},    {.table = &tables[5]},
	{.table = &tables[6]},    {.table = &tables[7]},    {.table = &tables[8]},
	{.table = &tables[9]},    {.table = &tables[10]},   {.table = &tables[11]},
};
static const struct mib_member port_ext_member[] = {{.table = &tables[12]}};

_Static_assert(COUNT(sma_members) + COUNT(port_ext_member) == COUNT(scalars) + COUNT(tables),
	       "every group and table is served");

/* The cache group a member reads (the pairings above); ctx: where the
 * collector is kept (NULL until it is read). */
static const void *collector_group(const void *ctx, const struct mib_member *m)
{
	const struct sma_collector *node = *(struct sma_collector *const *)ctx;

	if (!node)
		return NULL;
	return &node->group[m->table ? tables_group[m->table - tables]
				     : scalars_group[m->scalars - scalars]];
}

void sma_mib_subtrees(struct sma_mib_regs *r, struct sma_collector *const *node,
		      struct mib_asked asked)
{
	r->sma = (struct mib_subtree){
		.name = "ibSmaMIB", .root = sma_mib_oid, .root_len = OID_LENGTH(sma_mib_oid),
		.members = sma_members, .n_members = COUNT(sma_members),
		.member_ctx = collector_group, .ctx = node, .asked = asked};
	r->port_ext = (struct mib_subtree){
		.name = "ibsnmpdPortExtTable", .root = port_ext_table_oid,
		.root_len = OID_LENGTH(port_ext_table_oid), .members = port_ext_member,
		.n_members = COUNT(port_ext_member), .member_ctx = collector_group, .ctx = node,
		.asked = asked};
}

int sma_mib_register(struct sma_mib_regs *r, struct sma_collector *const *node)
{
	sma_mib_subtrees(r, node, (struct mib_asked){0});
	if (mib_subtree_register(&r->sma) || mib_subtree_register(&r->port_ext)) {
		sma_mib_unregister(r);
		return -1;
	}
	register_sysORTable(sma_mib_oid, OID_LENGTH(sma_mib_oid),
			    "SMA-MIB: InfiniBand Subnet Management Agent, served by ibsnmpd");
	return 0;
}

void sma_mib_unregister(struct sma_mib_regs *r)
{
	bool registered = r->sma.reg && r->port_ext.reg;

	mib_subtree_unregister(&r->sma);
	mib_subtree_unregister(&r->port_ext);
	if (registered)
		unregister_sysORTable(sma_mib_oid, OID_LENGTH(sma_mib_oid));
}
