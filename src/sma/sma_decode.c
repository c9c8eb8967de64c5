/* Decoders of the SMA attributes behind SMA-MIB's groups other than Node
 * Info. Pure functions over the 64-octet SMP data; layouts from libibmad's
 * field descriptors, except RandomForwardingTable, VendorDiag and LedInfo,
 * for which libibmad has none (their layouts are written out from the IBA
 * tables cited). */
#include <string.h>

#include "ibsnmpd/sma_attr.h"

/* libibmad's getters take a mutable buffer of a whole SMP data area. */
static int load(const uint8_t *data, size_t len, size_t need, uint8_t buf[IB_SMP_DATA_SIZE])
{
	if (!data || len < need)
		return -1;
	memset(buf, 0, IB_SMP_DATA_SIZE);
	memcpy(buf, data, len < IB_SMP_DATA_SIZE ? len : IB_SMP_DATA_SIZE);
	return 0;
}

#define F(field) mad_get_field(b, 0, field)

int sma_switchinfo_decode(const uint8_t *data, size_t len, struct sma_switchinfo *o)
{
	uint8_t b[IB_SMP_DATA_SIZE];

	if (load(data, len, 20, b))
		return -1;
	memset(o, 0, sizeof(*o));
	o->lft_cap = F(IB_SW_LINEAR_FDB_CAP_F);
	o->rft_cap = F(IB_SW_RANDOM_FDB_CAP_F);
	o->mft_cap = F(IB_SW_MCAST_FDB_CAP_F);
	o->lft_top = F(IB_SW_LINEAR_FDB_TOP_F);
	o->default_port = F(IB_SW_DEF_PORT_F);
	o->def_mcast_pri_port = F(IB_SW_DEF_MCAST_PRIM_F);
	o->def_mcast_not_pri_port = F(IB_SW_DEF_MCAST_NOT_PRIM_F);
	o->lifetime = F(IB_SW_LIFE_TIME_F);
	o->port_state_change = F(IB_SW_STATE_CHANGE_F);
	o->opt_sl2vl = F(IB_SW_OPT_SLTOVL_MAPPING_F);
	o->lids_per_port = F(IB_SW_LIDS_PER_PORT_F);
	o->partition_enf_cap = F(IB_SW_PARTITION_ENFORCE_CAP_F);
	o->inb_enf_cap = F(IB_SW_PARTITION_ENF_INB_F);
	o->outb_enf_cap = F(IB_SW_PARTITION_ENF_OUTB_F);
	o->filter_raw_inb_cap = F(IB_SW_FILTER_RAW_INB_F);
	o->filter_raw_outb_cap = F(IB_SW_FILTER_RAW_OUTB_F);
	o->enhanced_port0 = F(IB_SW_ENHANCED_PORT0_F);
	o->mft_top = F(IB_SW_MCAST_FDB_TOP_F);
	return 0;
}

/* CapabilityMask2.IsExtendedSpeeds2Supported (IBA 1.7) */
#define PORT_CAP2_EXT_SPEEDS2 0x0800u
#define SPEED_EXT_XDR 16 /* sma_speed_generation's bit for XDR */

/* LinkSpeedExtActive2 (PortInfo bits 449-450), LinkSpeedExtSupported2
 * (451-452) and LinkSpeedExtEnabled2 (453-455), IBA 1.7, value 1 = XDR
 * (212.5 Gb/s a lane). Decoded by offset, by hand: Debian 12's libibmad
 * (rdma-core 44) has no field for them (rdma-core 49 added
 * IB_PORT_LINK_SPEED_EXT_ACTIVE_2_F and its siblings). They mean something
 * only with IsExtendedSpeeds2Supported; XDR is folded into LinkSpeedExt*
 * as bit 16, the one encoding of it the rest of the agent knows. */
static void speeds2_decode(const uint8_t *b, struct sma_portinfo *o)
{
	unsigned active2, supported2, enabled2;

	if (!(o->cap_mask2 & PORT_CAP2_EXT_SPEEDS2))
		return;
	active2 = b[56] >> 5 & 3;
	supported2 = b[56] >> 3 & 3;
	enabled2 = b[56] & 7;
	if (active2 & 1)
		o->speed_ext_active = SPEED_EXT_XDR;
	if (supported2 & 1)
		o->speed_ext_supported |= SPEED_EXT_XDR;
	/* Enabled 30 (none) and 31 (every supported speed) stay as they are */
	if ((enabled2 & 1) && o->speed_ext_enabled < 30)
		o->speed_ext_enabled |= SPEED_EXT_XDR;
}

int sma_portinfo_decode(const uint8_t *data, size_t len, struct sma_portinfo *o)
{
	uint8_t b[IB_SMP_DATA_SIZE];

	if (load(data, len, 54, b))
		return -1;
	memset(o, 0, sizeof(*o));
	o->mkey = mad_get_field64(b, 0, IB_PORT_MKEY_F);
	o->gid_prefix = mad_get_field64(b, 0, IB_PORT_GID_PREFIX_F);
	o->lid = F(IB_PORT_LID_F);
	o->sm_lid = F(IB_PORT_SMLID_F);
	o->cap_mask = F(IB_PORT_CAPMASK_F);
	o->diag_code = F(IB_PORT_DIAG_F);
	o->mkey_lease = F(IB_PORT_MKEY_LEASE_F);
	o->local_port = F(IB_PORT_LOCAL_PORT_F);
	o->width_enabled = F(IB_PORT_LINK_WIDTH_ENABLED_F);
	o->width_supported = F(IB_PORT_LINK_WIDTH_SUPPORTED_F);
	o->width_active = F(IB_PORT_LINK_WIDTH_ACTIVE_F);
	o->speed_supported = F(IB_PORT_LINK_SPEED_SUPPORTED_F);
	o->state = F(IB_PORT_STATE_F);
	o->phys_state = F(IB_PORT_PHYS_STATE_F);
	o->link_down_default = F(IB_PORT_LINK_DOWN_DEF_F);
	o->mkey_protect = F(IB_PORT_MKEY_PROT_BITS_F);
	o->lmc = F(IB_PORT_LMC_F);
	o->speed_active = F(IB_PORT_LINK_SPEED_ACTIVE_F);
	o->speed_enabled = F(IB_PORT_LINK_SPEED_ENABLED_F);
	o->neighbor_mtu = F(IB_PORT_NEIGHBOR_MTU_F);
	o->sm_sl = F(IB_PORT_SMSL_F);
	o->vl_cap = F(IB_PORT_VL_CAP_F);
	o->init_type = F(IB_PORT_INIT_TYPE_F);
	o->vl_high_limit = F(IB_PORT_VL_HIGH_LIMIT_F);
	o->vlarb_high_cap = F(IB_PORT_VL_ARBITRATION_HIGH_CAP_F);
	o->vlarb_low_cap = F(IB_PORT_VL_ARBITRATION_LOW_CAP_F);
	o->init_type_reply = F(IB_PORT_INIT_TYPE_REPLY_F);
	o->mtu_cap = F(IB_PORT_MTU_CAP_F);
	o->vl_stall_count = F(IB_PORT_VL_STALL_COUNT_F);
	o->hoq_life = F(IB_PORT_HOQ_LIFE_F);
	o->oper_vls = F(IB_PORT_OPER_VLS_F);
	o->part_enf_inb = F(IB_PORT_PART_EN_INB_F);
	o->part_enf_outb = F(IB_PORT_PART_EN_OUTB_F);
	o->filter_raw_inb = F(IB_PORT_FILTER_RAW_INB_F);
	o->filter_raw_outb = F(IB_PORT_FILTER_RAW_OUTB_F);
	o->mkey_violations = F(IB_PORT_MKEY_VIOL_F);
	o->pkey_violations = F(IB_PORT_PKEY_VIOL_F);
	o->qkey_violations = F(IB_PORT_QKEY_VIOL_F);
	o->guid_cap = F(IB_PORT_GUID_CAP_F);
	o->subnet_timeout = F(IB_PORT_SUBN_TIMEOUT_F);
	o->resp_time = F(IB_PORT_RESP_TIME_VAL_F);
	o->local_phys_err = F(IB_PORT_LOCAL_PHYS_ERR_F);
	o->overrun_err = F(IB_PORT_OVERRUN_ERR_F);
	o->speed_ext_active = F(IB_PORT_LINK_SPEED_EXT_ACTIVE_F);
	o->speed_ext_supported = F(IB_PORT_LINK_SPEED_EXT_SUPPORTED_F);
	o->speed_ext_enabled = F(IB_PORT_LINK_SPEED_EXT_ENABLED_F);
	o->cap_mask2 = F(IB_PORT_CAPMASK2_F);
	speeds2_decode(b, o);
	return 0;
}

int sma_sminfo_decode(const uint8_t *data, size_t len, struct sma_sminfo *o)
{
	uint8_t b[IB_SMP_DATA_SIZE];

	if (load(data, len, 21, b))
		return -1;
	o->guid = mad_get_field64(b, 0, IB_SMINFO_GUID_F);
	o->sm_key = mad_get_field64(b, 0, IB_SMINFO_KEY_F);
	o->act_count = F(IB_SMINFO_ACT_F);
	o->priority = F(IB_SMINFO_PRIO_F);
	o->state = F(IB_SMINFO_STATE_F);
	return 0;
}

int sma_guidinfo_decode(const uint8_t *data, size_t len, uint64_t guids[8])
{
	uint8_t b[IB_SMP_DATA_SIZE];

	if (load(data, len, 64, b))
		return -1;
	for (int i = 0; i < 8; i++)
		guids[i] = mad_get_field64(b, 0, IB_GI_GUID0_F + i);
	return 0;
}

/* libibmad describes the table attributes only as whole arrays
 * (IB_LINEAR_FORW_TBL_F and the like, for dumping); their entries are
 * fixed-width big-endian values, read here one by one. */
static unsigned array_entry(const uint8_t *b, unsigned bits, unsigned i)
{
	switch (bits) {
	case 16:
		return (unsigned)b[2 * i] << 8 | b[2 * i + 1];
	case 8:
		return b[i];
	default: /* 4 bits, high nibble first */
		return i & 1 ? b[i / 2] & 0xfu : (unsigned)b[i / 2] >> 4;
	}
}

int sma_pkey_block_decode(const uint8_t *data, size_t len, uint16_t pkeys[32])
{
	uint8_t b[IB_SMP_DATA_SIZE];

	if (load(data, len, 64, b))
		return -1;
	for (unsigned i = 0; i < 32; i++)
		pkeys[i] = (uint16_t)array_entry(b, 16, i);
	return 0;
}

int sma_sl2vl_decode(const uint8_t *data, size_t len, uint8_t vl[16])
{
	uint8_t b[IB_SMP_DATA_SIZE];

	if (load(data, len, 8, b))
		return -1;
	for (unsigned i = 0; i < 16; i++)
		vl[i] = (uint8_t)array_entry(b, 4, i);
	return 0;
}

int sma_vlarb_block_decode(const uint8_t *data, size_t len, uint8_t vl[32], uint8_t weight[32])
{
	uint8_t b[IB_SMP_DATA_SIZE];

	if (load(data, len, 64, b))
		return -1;
	/* each entry: reserved(4) VL(4) Weight(8) */
	for (unsigned i = 0; i < 32; i++) {
		vl[i] = b[2 * i] & 0x0f;
		weight[i] = b[2 * i + 1];
	}
	return 0;
}

int sma_lft_block_decode(const uint8_t *data, size_t len, uint8_t port[64])
{
	uint8_t b[IB_SMP_DATA_SIZE];

	if (load(data, len, 64, b))
		return -1;
	for (unsigned i = 0; i < 64; i++)
		port[i] = (uint8_t)array_entry(b, 8, i);
	return 0;
}

int sma_mft_block_decode(const uint8_t *data, size_t len, uint16_t mask[32])
{
	uint8_t b[IB_SMP_DATA_SIZE];

	if (load(data, len, 64, b))
		return -1;
	for (unsigned i = 0; i < 32; i++)
		mask[i] = (uint16_t)array_entry(b, 16, i);
	return 0;
}

int sma_rft_block_decode(const uint8_t *data, size_t len, struct sma_rft_entry e[16])
{
	if (!data || len < 64)
		return -1;
	for (unsigned i = 0; i < 16; i++) {
		const uint8_t *p = data + 4 * i;

		e[i].lid = (unsigned)p[0] << 8 | p[1];
		e[i].valid = p[2] >> 7;
		e[i].lmc = (p[2] >> 4) & 0x7;
		e[i].port = p[3];
	}
	return 0;
}

int sma_vendordiag_decode(const uint8_t *data, size_t len, struct sma_vendordiag *o)
{
	if (!data || len < 64)
		return -1;
	o->next_index = (unsigned)data[0] << 8 | data[1];
	memcpy(o->diag_data, data + 4, sizeof(o->diag_data));
	return 0;
}

int sma_ledinfo_decode(const uint8_t *data, size_t len, unsigned *led_on)
{
	if (!data || len < 4)
		return -1;
	*led_on = data[0] >> 7;
	return 0;
}
