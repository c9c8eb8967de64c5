/* PerfMgt attribute decoders and the per-port counter bookkeeping. Pure;
 * layouts from libibmad's IB_PC_*, IB_PC_EXT_*, IB_PESC_*, IB_PESC_RSFEC_*,
 * IB_PSC_*, IB_PSR_* and IB_CPI_* fields. */
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "ibsnmpd/pm_attr.h"

static int load(const uint8_t *data, size_t len, uint8_t buf[IB_PC_DATA_SZ])
{
	if (!data || len < 64)
		return -1;
	memset(buf, 0, IB_PC_DATA_SZ);
	memcpy(buf, data, len < IB_PC_DATA_SZ ? len : IB_PC_DATA_SZ);
	return 0;
}

int pm_counters_decode(const uint8_t *data, size_t len, struct pm_counters *o)
{
	uint8_t b[IB_PC_DATA_SZ];

	if (load(data, len, b))
		return -1;
	o->symbol_errors = mad_get_field(b, 0, IB_PC_ERR_SYM_F);
	o->link_error_recovery = mad_get_field(b, 0, IB_PC_LINK_RECOVERS_F);
	o->link_downed = mad_get_field(b, 0, IB_PC_LINK_DOWNED_F);
	o->rcv_errors = mad_get_field(b, 0, IB_PC_ERR_RCV_F);
	o->rcv_remote_phys_errors = mad_get_field(b, 0, IB_PC_ERR_PHYSRCV_F);
	o->rcv_switch_relay_errors = mad_get_field(b, 0, IB_PC_ERR_SWITCH_REL_F);
	o->xmit_discards = mad_get_field(b, 0, IB_PC_XMT_DISCARDS_F);
	o->xmit_constraint_errors = mad_get_field(b, 0, IB_PC_ERR_XMTCONSTR_F);
	o->rcv_constraint_errors = mad_get_field(b, 0, IB_PC_ERR_RCVCONSTR_F);
	o->local_link_integrity_errors = mad_get_field(b, 0, IB_PC_ERR_LOCALINTEG_F);
	o->excessive_buffer_overruns = mad_get_field(b, 0, IB_PC_ERR_EXCESS_OVR_F);
	o->vl15_dropped = mad_get_field(b, 0, IB_PC_VL15_DROPPED_F);
	o->xmit_wait = mad_get_field(b, 0, IB_PC_XMT_WAIT_F);
	o->xmit_data = mad_get_field(b, 0, IB_PC_XMT_BYTES_F);
	o->rcv_data = mad_get_field(b, 0, IB_PC_RCV_BYTES_F);
	o->xmit_pkts = mad_get_field(b, 0, IB_PC_XMT_PKTS_F);
	o->rcv_pkts = mad_get_field(b, 0, IB_PC_RCV_PKTS_F);
	return 0;
}

int pm_counters_ext_decode(const uint8_t *data, size_t len, struct pm_counters_ext *o)
{
	uint8_t b[IB_PC_DATA_SZ];

	if (load(data, len, b))
		return -1;
	o->xmit_data = mad_get_field64(b, 0, IB_PC_EXT_XMT_BYTES_F);
	o->rcv_data = mad_get_field64(b, 0, IB_PC_EXT_RCV_BYTES_F);
	o->xmit_pkts = mad_get_field64(b, 0, IB_PC_EXT_XMT_PKTS_F);
	o->rcv_pkts = mad_get_field64(b, 0, IB_PC_EXT_RCV_PKTS_F);
	o->xmit_ucast_pkts = mad_get_field64(b, 0, IB_PC_EXT_XMT_UPKTS_F);
	o->rcv_ucast_pkts = mad_get_field64(b, 0, IB_PC_EXT_RCV_UPKTS_F);
	o->xmit_mcast_pkts = mad_get_field64(b, 0, IB_PC_EXT_XMT_MPKTS_F);
	o->rcv_mcast_pkts = mad_get_field64(b, 0, IB_PC_EXT_RCV_MPKTS_F);
	return 0;
}

/* sma_speed_generation: FDR 4, EDR 5, HDR 6, NDR 7, XDR 8; 9 other */
enum pm_fec_layout pm_fec_layout_of(unsigned speed_generation, unsigned capmask)
{
	if (speed_generation < 4 || speed_generation > 8)
		return PM_FEC_NONE;
	/* HDR and faster run RS-FEC (IBA); a PMA that has no RS-FEC layout
	 * answers in the per-lane one */
	if (speed_generation >= 6 && (capmask & PM_CAP_RSFEC_COUNTERS))
		return PM_FEC_RS;
	return PM_FEC_PER_LANE;
}

int pm_ext_speeds_decode(const uint8_t *data, size_t len, enum pm_fec_layout layout,
			 struct pm_ext_speeds *o)
{
	uint8_t b[IB_PC_DATA_SZ];

	if (load(data, len, b) || layout == PM_FEC_NONE)
		return -1;
	memset(o, 0, sizeof(*o));
	o->sync_header_errors = (uint16_t)mad_get_field(b, 0, IB_PESC_SYNC_HDR_ERR_CTR_F);
	o->unknown_blocks = (uint16_t)mad_get_field(b, 0, IB_PESC_UNK_BLOCK_CTR_F);
	if (layout == PM_FEC_RS) {
		o->corrected_symbols = mad_get_field(b, 0, IB_PESC_PORT_FEC_CORR_SYMBOL_CTR_F);
		o->correctable_blocks = mad_get_field(b, 0, IB_PESC_PORT_FEC_CORR_BLOCK_CTR_F);
		o->uncorrectable_blocks = mad_get_field(b, 0, IB_PESC_PORT_FEC_UNCORR_BLOCK_CTR_F);
		return 0;
	}
	/* the lanes' fields are consecutive in libibmad's enum */
	for (int lane = 0; lane < 12; lane++) {
		o->error_detection += mad_get_field(b, 0, IB_PESC_ERR_DET_CTR_LANE0_F + lane);
		o->correctable_blocks += mad_get_field(b, 0, IB_PESC_FEC_CORR_BLOCK_CTR_LANE0_F + lane);
		o->uncorrectable_blocks +=
			mad_get_field(b, 0, IB_PESC_FEC_UNCORR_BLOCK_CTR_LANE0_F + lane);
	}
	return 0;
}

int pm_rcv_error_details_decode(const uint8_t *data, size_t len, struct pm_error_details *o)
{
	uint8_t b[IB_PC_DATA_SZ];

	if (load(data, len, b))
		return -1;
	o->local_phys = (uint16_t)mad_get_field(b, 0, IB_PC_RCV_LOCAL_PHY_ERR_F);
	o->malformed = (uint16_t)mad_get_field(b, 0, IB_PC_RCV_MALFORMED_PKT_ERR_F);
	o->buffer_overrun = (uint16_t)mad_get_field(b, 0, IB_PC_RCV_BUF_OVR_ERR_F);
	o->dlid_mapping = (uint16_t)mad_get_field(b, 0, IB_PC_RCV_DLID_MAP_ERR_F);
	o->vl_mapping = (uint16_t)mad_get_field(b, 0, IB_PC_RCV_VL_MAP_ERR_F);
	o->looping = (uint16_t)mad_get_field(b, 0, IB_PC_RCV_LOOPING_ERR_F);
	return 0;
}

int pm_xmit_discard_details_decode(const uint8_t *data, size_t len, struct pm_error_details *o)
{
	uint8_t b[IB_PC_DATA_SZ];

	if (load(data, len, b))
		return -1;
	o->inactive = (uint16_t)mad_get_field(b, 0, IB_PC_XMT_INACT_DISC_F);
	o->neighbor_mtu = (uint16_t)mad_get_field(b, 0, IB_PC_XMT_NEIGH_MTU_DISC_F);
	o->sw_lifetime = (uint16_t)mad_get_field(b, 0, IB_PC_XMT_SW_LIFE_DISC_F);
	o->sw_hoq_lifetime = (uint16_t)mad_get_field(b, 0, IB_PC_XMT_SW_HOL_DISC_F);
	return 0;
}

int pm_classportinfo_capmask(const uint8_t *data, size_t len, unsigned *capmask)
{
	uint8_t b[IB_PC_DATA_SZ];

	if (load(data, len, b))
		return -1;
	*capmask = mad_get_field(b, 0, IB_CPI_CAPMASK_F);
	return 0;
}

void pm_port_select(uint8_t *data, size_t len, unsigned attr_id, unsigned port)
{
	memset(data, 0, len);
	if (len >= 64)
		mad_set_field(data, 0, attr_id == IB_GSI_PORT_COUNTERS_EXT ? IB_PC_EXT_PORT_SELECT_F :
				       attr_id == IB_GSI_PORT_EXT_SPEEDS_COUNTERS ? IB_PESC_PORT_SELECT_F :
				       IB_PC_PORT_SELECT_F, port);
}

void pm_counters_clear_encode(uint8_t *data, size_t len, unsigned port, unsigned counter_select)
{
	pm_port_select(data, len, IB_GSI_PORT_COUNTERS, port);
	if (len >= 64)
		mad_set_field(data, 0, IB_PC_COUNTER_SELECT_F, counter_select);
}

static int state_cmp(const void *a, const void *b)
{
	const struct pm_port_state *x = a, *y = b;

	if (x->guid != y->guid)
		return x->guid < y->guid ? -1 : 1;
	return x->port < y->port ? -1 : x->port > y->port;
}

const struct pm_port_state *pm_port_find(const struct pm_port_state *ports, size_t n,
					 uint64_t guid, unsigned port)
{
	struct pm_port_state key = {.guid = guid, .port = port};

	return n ? bsearch(&key, ports, n, sizeof(key), state_cmp) : NULL;
}

/* Counters went down: cleared by someone since the last reading. */
static bool went_down(const struct pm_counters *a, const struct pm_counters *b)
{
	const uint32_t *x = (const uint32_t *)a, *y = (const uint32_t *)b;

	for (size_t i = 0; i < sizeof(*a) / sizeof(uint32_t); i++)
		if (y[i] < x[i])
			return true;
	return false;
}

void pm_port_update(struct pm_port_state *st, const struct pm_counters *pc,
		    const struct pm_counters_ext *ext, time_t now)
{
	/* extended: the totals are the last PortCountersExtended read */
	bool cleared = st->have_raw && (went_down(&st->raw, pc) ||
					(ext && st->extended &&
					 (ext->xmit_data < st->xmit_data ||
					  ext->rcv_data < st->rcv_data ||
					  ext->xmit_pkts < st->xmit_pkts ||
					  ext->rcv_pkts < st->rcv_pkts)));

	if (!st->have_raw || cleared)
		st->discontinuity = now;
	if (st->have_raw)
		st->symbol_errors_total +=
			pm_counter_rise(st->raw.symbol_errors, pc->symbol_errors);
	if (ext) {
		st->xmit_data = ext->xmit_data;
		st->rcv_data = ext->rcv_data;
		st->xmit_pkts = ext->xmit_pkts;
		st->rcv_pkts = ext->rcv_pkts;
		st->xmit_ucast_pkts = ext->xmit_ucast_pkts;
		st->rcv_ucast_pkts = ext->rcv_ucast_pkts;
		st->xmit_mcast_pkts = ext->xmit_mcast_pkts;
		st->rcv_mcast_pkts = ext->rcv_mcast_pkts;
		st->extended = true;
	} else if (!st->have_raw) {
		/* accumulating starts from what the node shows now */
		st->xmit_data = pc->xmit_data;
		st->rcv_data = pc->rcv_data;
		st->xmit_pkts = pc->xmit_pkts;
		st->rcv_pkts = pc->rcv_pkts;
		st->extended = false;
	} else {
		if (st->extended) { /* the node stopped offering 64-bit counters */
			st->extended = false;
			st->discontinuity = now;
		}
		st->xmit_data += pm_counter_rise(st->raw.xmit_data, pc->xmit_data);
		st->rcv_data += pm_counter_rise(st->raw.rcv_data, pc->rcv_data);
		st->xmit_pkts += pm_counter_rise(st->raw.xmit_pkts, pc->xmit_pkts);
		st->rcv_pkts += pm_counter_rise(st->raw.rcv_pkts, pc->rcv_pkts);
	}
	st->raw = *pc;
	st->have_raw = true;
	st->stale = false;
	st->last_read = now;
}

void pm_port_fec_update(struct pm_port_state *st, const struct pm_ext_speeds *fec)
{
	if (st->have_fec) {
		/* before FEC: corrected symbols (RS-FEC) or errors detected per lane */
		if (st->fec_layout == PM_FEC_RS)
			st->fec_raw_total +=
				pm_counter_rise(st->fec.corrected_symbols, fec->corrected_symbols);
		else
			st->fec_raw_total +=
				pm_counter_rise(st->fec.error_detection, fec->error_detection);
		st->fec_uncorrectable_total +=
			pm_counter_rise(st->fec.uncorrectable_blocks, fec->uncorrectable_blocks);
	}
	st->fec = *fec;
	st->have_fec = true;
	st->fec_stale = false;
}

/* CounterSelect0..14 and the result counters are consecutive field enums */
int pm_sample_ctl_decode(const uint8_t *data, size_t len, struct pm_sample_ctl *o)
{
	uint8_t b[IB_PC_DATA_SZ];
	uint32_t m19, m1014;

	if (load(data, len, b))
		return -1;
	o->opcode = mad_get_field(b, 0, IB_PSC_OPCODE_F);
	o->port_select = mad_get_field(b, 0, IB_PSC_PORT_SELECT_F);
	o->tick = mad_get_field(b, 0, IB_PSC_TICK_F);
	o->counter_width = mad_get_field(b, 0, IB_PSC_COUNTER_WIDTH_F);
	/* CounterMask0 alone, then 1..9 and 10..14 packed 3 bits each, the lower
	 * numbered counter in the more significant bits */
	o->counter_mask[0] = mad_get_field(b, 0, IB_PSC_COUNTER_MASK0_F);
	m19 = mad_get_field(b, 0, IB_PSC_COUNTER_MASKS1TO9_F);
	m1014 = mad_get_field(b, 0, IB_PSC_COUNTER_MASKS10TO14_F);
	for (int i = 1; i <= 9; i++)
		o->counter_mask[i] = m19 >> (3 * (9 - i)) & 7;
	for (int i = 10; i <= 14; i++)
		o->counter_mask[i] = m1014 >> (3 * (14 - i)) & 7;
	o->sample_mechanisms = mad_get_field(b, 0, IB_PSC_SAMPLE_MECHS_F);
	o->sample_status = mad_get_field(b, 0, IB_PSC_SAMPLE_STATUS_F);
	o->option_mask = mad_get_field64(b, 0, IB_PSC_OPTION_MASK_F);
	o->vendor_mask = mad_get_field64(b, 0, IB_PSC_VENDOR_MASK_F);
	o->sample_start = mad_get_field(b, 0, IB_PSC_SAMPLE_START_F);
	o->sample_interval = mad_get_field(b, 0, IB_PSC_SAMPLE_INTVL_F);
	o->tag = mad_get_field(b, 0, IB_PSC_TAG_F);
	for (int i = 0; i < PM_SAMPLE_COUNTERS; i++)
		o->counter_select[i] = mad_get_field(b, 0, IB_PSC_COUNTER_SEL0_F + i);
	return 0;
}

void pm_sample_ctl_encode(const struct pm_sample_ctl *c, uint8_t *data, size_t len)
{
	memset(data, 0, len);
	if (len < IB_PC_DATA_SZ)
		return;
	mad_set_field(data, 0, IB_PSC_OPCODE_F, c->opcode);
	mad_set_field(data, 0, IB_PSC_PORT_SELECT_F, c->port_select);
	mad_set_field(data, 0, IB_PSC_SAMPLE_START_F, c->sample_start);
	mad_set_field(data, 0, IB_PSC_SAMPLE_INTVL_F, c->sample_interval);
	mad_set_field(data, 0, IB_PSC_TAG_F, c->tag);
	for (int i = 0; i < PM_SAMPLE_COUNTERS; i++)
		mad_set_field(data, 0, IB_PSC_COUNTER_SEL0_F + i, c->counter_select[i]);
}

int pm_sample_result_decode(const uint8_t *data, size_t len, struct pm_sample_result *o)
{
	uint8_t b[IB_PC_DATA_SZ];

	if (load(data, len, b))
		return -1;
	o->tag = mad_get_field(b, 0, IB_PSR_TAG_F);
	o->sample_status = mad_get_field(b, 0, IB_PSR_SAMPLE_STATUS_F);
	for (int i = 0; i < PM_SAMPLE_COUNTERS; i++)
		o->counter[i] = mad_get_field(b, 0, IB_PSR_COUNTER0_F + i);
	return 0;
}

unsigned pm_sample_width_bits(unsigned counter_width)
{
	return counter_width <= 4 ? 16 + 4 * counter_width : 32; /* 4 = 32 bits */
}
