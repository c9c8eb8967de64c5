/* Counters of the subnet:
 *   IBSNMPD-MIB::ibsnmpdPmPortTable  every port: 64-bit data and packet
 *                                    counters (octets), error counters; read
 *                                    from the last sweep's snapshot
 *   IBSNMPD-MIB::ibsnmpdPmErrorDetailTable  the same rows: PortRcvErrorDetails
 *                                    and PortXmitDiscardDetails
 *   IBSNMPD-MIB::ibsnmpdPmFecTable   the same rows: PortExtendedSpeedsCounters
 *   IB-PM-MIB::pmClassPortInfoTable  every node: AllPortSelect
 *   IB-PM-MIB::pmPortCountersTable   every node: the counters of the port its
 *                                    PortSelect names; SET of a counter to 0
 *                                    clears it on the node (PerfMgtSet)
 *   IB-PM-MIB::pmPortSampleCntrlTable, pmPortSampleResultTable
 *                                    every node; values for the nodes sampled
 *                                    (pm_samples.c); SET starts a sample
 * IB-PM-MIB's tables read the per-node view (pm_view.c). */
#include <limits.h>
#include <stdlib.h>

#include "ibsnmpd/mad_engine.h"
#include "ibsnmpd/mib_oids.h"
#include "ibsnmpd/mib_set.h"
#include "ibsnmpd/pm.h"

#include <net-snmp/agent/agent_sysORTable.h>

static const oid pm_port_table_oid[] = {OID_IBSNMPD_PM_PORT_TABLE};
static const oid pm_detail_table_oid[] = {OID_IBSNMPD_PM_ERROR_DETAIL_TABLE};
static const oid pm_fec_table_oid[] = {OID_IBSNMPD_PM_FEC_TABLE};
static const oid pm_cpi_table_oid[] = {OID_PM_CLASS_PORT_INFO_TABLE};
static const oid pm_counters_table_oid[] = {OID_PM_PORT_COUNTERS_TABLE};
static const oid pm_sample_ctl_table_oid[] = {OID_PM_PORT_SAMPLE_CNTRL_TABLE};
static const oid pm_sample_result_table_oid[] = {OID_PM_PORT_SAMPLE_RESULT_TABLE};
static oid pm_draft_oid[] = {OID_PM_MIB_OBJECTS};

/* ---- ibsnmpdPmPortTable ------------------------------------------------------ */

static void set_c64(netsnmp_variable_list *vb, uint64_t v)
{
	struct counter64 c = {.high = (u_long)(v >> 32), .low = (u_long)(v & 0xffffffffu)};

	snmp_set_var_typed_value(vb, ASN_COUNTER64, &c, sizeof(c));
}

static int pm_port_value(const void *row, unsigned column, netsnmp_variable_list *vb,
			 const void *snap)
{
	const struct pm_port_state *st = row;
	const struct pm_counters *c = &st->raw;

	(void)snap;
	if (!st->have_raw && column >= COLUMN_IBSNMPD_PM_XMIT_OCTETS &&
	    column <= COLUMN_IBSNMPD_PM_XMIT_WAIT)
		return -1; /* never read: no counter values yet */
	switch (column) {
	case COLUMN_IBSNMPD_PM_NODE_DESCRIPTION:
		mib_set_octets(vb, st->node->name, strlen(st->node->name));
		return 0;
	case COLUMN_IBSNMPD_PM_LID: mib_set_unsigned(vb, ASN_UNSIGNED, st->lid); return 0;
	/* IB counts data in 4-octet words */
	case COLUMN_IBSNMPD_PM_XMIT_OCTETS: set_c64(vb, st->xmit_data * 4); return 0;
	case COLUMN_IBSNMPD_PM_RCV_OCTETS: set_c64(vb, st->rcv_data * 4); return 0;
	case COLUMN_IBSNMPD_PM_XMIT_PKTS: set_c64(vb, st->xmit_pkts); return 0;
	case COLUMN_IBSNMPD_PM_RCV_PKTS: set_c64(vb, st->rcv_pkts); return 0;
	case COLUMN_IBSNMPD_PM_SYMBOL_ERRORS:
		mib_set_unsigned(vb, ASN_COUNTER, c->symbol_errors);
		return 0;
	case COLUMN_IBSNMPD_PM_LINK_ERROR_RECOVERY:
		mib_set_unsigned(vb, ASN_COUNTER, c->link_error_recovery);
		return 0;
	case COLUMN_IBSNMPD_PM_LINK_DOWNED: mib_set_unsigned(vb, ASN_COUNTER, c->link_downed); return 0;
	case COLUMN_IBSNMPD_PM_RCV_ERRORS: mib_set_unsigned(vb, ASN_COUNTER, c->rcv_errors); return 0;
	case COLUMN_IBSNMPD_PM_RCV_REMOTE_PHYS_ERRORS:
		mib_set_unsigned(vb, ASN_COUNTER, c->rcv_remote_phys_errors);
		return 0;
	case COLUMN_IBSNMPD_PM_RCV_SWITCH_RELAY_ERRORS:
		mib_set_unsigned(vb, ASN_COUNTER, c->rcv_switch_relay_errors);
		return 0;
	case COLUMN_IBSNMPD_PM_XMIT_DISCARDS:
		mib_set_unsigned(vb, ASN_COUNTER, c->xmit_discards);
		return 0;
	case COLUMN_IBSNMPD_PM_XMIT_CONSTRAINT_ERRORS:
		mib_set_unsigned(vb, ASN_COUNTER, c->xmit_constraint_errors);
		return 0;
	case COLUMN_IBSNMPD_PM_RCV_CONSTRAINT_ERRORS:
		mib_set_unsigned(vb, ASN_COUNTER, c->rcv_constraint_errors);
		return 0;
	case COLUMN_IBSNMPD_PM_LOCAL_LINK_INTEGRITY_ERRORS:
		mib_set_unsigned(vb, ASN_COUNTER, c->local_link_integrity_errors);
		return 0;
	case COLUMN_IBSNMPD_PM_EXCESSIVE_BUFFER_OVERRUNS:
		mib_set_unsigned(vb, ASN_COUNTER, c->excessive_buffer_overruns);
		return 0;
	case COLUMN_IBSNMPD_PM_VL15_DROPPED: mib_set_unsigned(vb, ASN_COUNTER, c->vl15_dropped); return 0;
	case COLUMN_IBSNMPD_PM_XMIT_WAIT: mib_set_unsigned(vb, ASN_COUNTER, c->xmit_wait); return 0;
	case COLUMN_IBSNMPD_PM_DATA_SOURCE: mib_set_int(vb, st->extended ? 1 : 2); return 0;
	case COLUMN_IBSNMPD_PM_DISCONTINUITY_TIME:
		mib_set_unsigned(vb, ASN_UNSIGNED, (unsigned long)st->discontinuity);
		return 0;
	case COLUMN_IBSNMPD_PM_LAST_READ:
		mib_set_unsigned(vb, ASN_UNSIGNED, (unsigned long)st->last_read);
		return 0;
	case COLUMN_IBSNMPD_PM_STALE:
		mib_set_int(vb, mib_truth(st->stale || !st->have_raw));
		return 0;
	default: return -1;
	}
}

static const struct mib_rows *pm_rows(const void *ctx, const void **snap)
{
	const struct pm_snapshot *s = cache_snapshot(ctx);

	*snap = s;
	return s ? &s->rows : NULL;
}


/* ---- ibsnmpdPmErrorDetailTable: the same rows, the details' columns ------------ */

static int pm_detail_value(const void *row, unsigned column, netsnmp_variable_list *vb,
			   const void *snap)
{
	const struct pm_port_state *st = row;
	const struct pm_error_details *d = &st->details;
	unsigned v;

	(void)snap;
	if (!st->have_details || st->details_unsupported)
		return -1; /* not read yet, or the node has none */
	switch (column) {
	case COLUMN_IBSNMPD_PM_DETAIL_LOCAL_PHYSICAL_ERRORS: v = d->local_phys; break;
	case COLUMN_IBSNMPD_PM_DETAIL_MALFORMED_PKT_ERRORS: v = d->malformed; break;
	case COLUMN_IBSNMPD_PM_DETAIL_BUFFER_OVERRUN_ERRORS: v = d->buffer_overrun; break;
	case COLUMN_IBSNMPD_PM_DETAIL_DLID_MAPPING_ERRORS: v = d->dlid_mapping; break;
	case COLUMN_IBSNMPD_PM_DETAIL_VL_MAPPING_ERRORS: v = d->vl_mapping; break;
	case COLUMN_IBSNMPD_PM_DETAIL_LOOPING_ERRORS: v = d->looping; break;
	case COLUMN_IBSNMPD_PM_DETAIL_INACTIVE_DISCARDS: v = d->inactive; break;
	case COLUMN_IBSNMPD_PM_DETAIL_NEIGHBOR_MTU_DISCARDS: v = d->neighbor_mtu; break;
	case COLUMN_IBSNMPD_PM_DETAIL_SW_LIFETIME_LIMIT_DISCARDS: v = d->sw_lifetime; break;
	case COLUMN_IBSNMPD_PM_DETAIL_SW_HOQ_LIFETIME_LIMIT_DISCARDS: v = d->sw_hoq_lifetime; break;
	case COLUMN_IBSNMPD_PM_DETAIL_STALE:
		mib_set_int(vb, mib_truth(st->stale || st->details_stale));
		return 0;
	default: return -1;
	}
	mib_set_unsigned(vb, ASN_COUNTER, v);
	return 0;
}


/* ---- ibsnmpdPmFecTable: the same rows, PortExtendedSpeedsCounters -------------- */

static int pm_fec_value(const void *row, unsigned column, netsnmp_variable_list *vb,
			const void *snap)
{
	const struct pm_port_state *st = row;
	const struct pm_ext_speeds *c = &st->fec;

	(void)snap;
	if (!pm_port_has_fec(st))
		return -1; /* not read, or the port runs no extended speed */
	switch (column) {
	case COLUMN_IBSNMPD_PM_FEC_LAYOUT: mib_set_int(vb, st->fec_layout); return 0;
	case COLUMN_IBSNMPD_PM_FEC_SYNC_HEADER_ERRORS:
		mib_set_unsigned(vb, ASN_COUNTER, c->sync_header_errors);
		return 0;
	case COLUMN_IBSNMPD_PM_FEC_UNKNOWN_BLOCKS:
		mib_set_unsigned(vb, ASN_COUNTER, c->unknown_blocks);
		return 0;
	case COLUMN_IBSNMPD_PM_FEC_ERROR_DETECTIONS:
		mib_set_unsigned(vb, ASN_COUNTER, c->error_detection);
		return 0;
	case COLUMN_IBSNMPD_PM_FEC_CORRECTED_SYMBOLS:
		mib_set_unsigned(vb, ASN_COUNTER, c->corrected_symbols);
		return 0;
	case COLUMN_IBSNMPD_PM_FEC_CORRECTABLE_BLOCKS: set_c64(vb, c->correctable_blocks); return 0;
	case COLUMN_IBSNMPD_PM_FEC_UNCORRECTABLE_BLOCKS:
		set_c64(vb, c->uncorrectable_blocks);
		return 0;
	case COLUMN_IBSNMPD_PM_FEC_STALE:
		mib_set_int(vb, mib_truth(st->stale || st->fec_stale));
		return 0;
	default: return -1;
	}
}


/* ---- IB-PM-MIB (the 2001 draft; pm = experimental 117): the node view ----- */

static const struct mib_rows *node_rows(const void *ctx, const void **snap)
{
	const struct pm_view *v = cache_snapshot(ctx);

	*snap = v;
	return v ? &v->rows : NULL;
}

static int cpi_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		     const void *snap)
{
	const struct pm_node_view *nv = row;

	(void)snap;
	switch (column) {
	case COLUMN_PM_CLASS_PORT_INFO_GUID: mib_set_be_octets(vb, nv->node->guid, 8); return 0;
	case COLUMN_PM_CLASS_PORT_INFO_ALL_PORT_SELECT:
		if (!nv->capmask_known)
			return -1; /* ClassPortInfo did not answer */
		mib_set_int(vb, mib_truth(nv->capmask & PM_CAP_ALL_PORT_SELECT));
		return 0;
	default: return -1;
	}
}

/* pmPortCounters' counter columns, in CounterSelect bit order */
#define COUNTER_FIRST COLUMN_PM_PORT_COUNTERS_SYMBOL_ERRORS
#define COUNTER_LAST COLUMN_PM_PORT_COUNTERS_RCV_PKTS

static int counters_value(const void *row, unsigned column, netsnmp_variable_list *vb,
			  const void *snap)
{
	const struct pm_node_view *nv = row;
	uint64_t v;

	(void)snap;
	switch (column) {
	case COLUMN_PM_PORT_COUNTERS_GUID: mib_set_be_octets(vb, nv->node->guid, 8); return 0;
	case COLUMN_PM_PORT_COUNTERS_PORT_SELECT: mib_set_int(vb, nv->port_select); return 0;
	default:
		if (column < COUNTER_FIRST || column > COUNTER_LAST || !nv->have_counters)
			return -1;
		/* the draft's counters are Integer32: the larger IB values stop there */
		v = nv->counter[column - COUNTER_FIRST];
		mib_set_int(vb, v > INT_MAX ? INT_MAX : (long)v);
		return 0;
	}
}

/* The draft's Tag is 4 octets; IBA's is 16 bits: served in the last two. */
static void set_tag(netsnmp_variable_list *vb, unsigned tag)
{
	mib_set_be_octets(vb, tag & 0xffff, 4);
}

/* SampleStart and SampleInterval are 32-bit in IBA, Integer32 in the draft */
static long clip_int32(uint32_t v)
{
	return v > INT_MAX ? INT_MAX : (long)v;
}

#define SCTL_MASK0 COLUMN_PM_PORT_SAMPLE_CNTRL_COUNTER0_MASK   /* ..Counter14Mask */
#define SCTL_SELECT0 COLUMN_PM_PORT_SAMPLE_CNTRL_COUNTER_SELECT0 /* ..CounterSelect14 */
#define SCTL_LAST COLUMN_PM_PORT_SAMPLE_CNTRL_COUNTER_SELECT14

static int sample_ctl_value(const void *row, unsigned column, netsnmp_variable_list *vb,
			    const void *snap)
{
	const struct pm_node_view *nv = row;
	const struct pm_sample_ctl *c = nv->sample ? &nv->sample->ctl : NULL;

	(void)snap;
	if (column == COLUMN_PM_PORT_SAMPLE_CNTRL_GUID) {
		mib_set_be_octets(vb, nv->node->guid, 8);
		return 0;
	}
	if (!c || !nv->sample->have_ctl)
		return -1; /* not watched, or never answered */
	if (column >= SCTL_MASK0 && column < SCTL_MASK0 + PM_SAMPLE_COUNTERS) {
		mib_set_int(vb, c->counter_mask[column - SCTL_MASK0]);
		return 0;
	}
	if (column >= SCTL_SELECT0 && column <= SCTL_LAST) {
		mib_set_int(vb, c->counter_select[column - SCTL_SELECT0]);
		return 0;
	}
	switch (column) {
	case COLUMN_PM_PORT_SAMPLE_CNTRL_OP_CODE: mib_set_int(vb, c->opcode); return 0;
	case COLUMN_PM_PORT_SAMPLE_CNTRL_PORT_SELECT: mib_set_int(vb, c->port_select); return 0;
	case COLUMN_PM_PORT_SAMPLE_CNTRL_TICK: mib_set_int(vb, c->tick); return 0;
	case COLUMN_PM_PORT_SAMPLE_CNTRL_COUNTER_WIDTH: mib_set_int(vb, c->counter_width); return 0;
	case COLUMN_PM_PORT_SAMPLE_CNTRL_SAMPLE_MECHANISMS:
		mib_set_int(vb, c->sample_mechanisms);
		return 0;
	case COLUMN_PM_PORT_SAMPLE_CNTRL_SAMPLE_STATUS: mib_set_int(vb, c->sample_status); return 0;
	case COLUMN_PM_PORT_SAMPLE_CNTRL_OPTION_MASK:
		mib_set_be_octets(vb, c->option_mask, 8);
		return 0;
	case COLUMN_PM_PORT_SAMPLE_CNTRL_VENDOR_MASK:
		mib_set_be_octets(vb, c->vendor_mask, 8);
		return 0;
	case COLUMN_PM_PORT_SAMPLE_CNTRL_SAMPLE_START:
		mib_set_int(vb, clip_int32(c->sample_start));
		return 0;
	case COLUMN_PM_PORT_SAMPLE_CNTRL_SAMPLE_INTERVAL:
		mib_set_int(vb, clip_int32(c->sample_interval));
		return 0;
	case COLUMN_PM_PORT_SAMPLE_CNTRL_TAG: set_tag(vb, c->tag); return 0;
	default: return -1;
	}
}

#define SRES_COUNTER0 COLUMN_PM_PORT_SAMPLE_RESULT_COUNTER0 /* ..Counter14 */

static int sample_result_value(const void *row, unsigned column, netsnmp_variable_list *vb,
			       const void *snap)
{
	const struct pm_node_view *nv = row;
	const struct pm_sample_result *res;

	(void)snap;
	if (column == COLUMN_PM_PORT_SAMPLE_RESULT_GUID) {
		mib_set_be_octets(vb, nv->node->guid, 8);
		return 0;
	}
	if (!nv->sample || !nv->sample->have_res)
		return -1;
	res = &nv->sample->res;
	if (column == COLUMN_PM_PORT_SAMPLE_RESULT_TAG)
		set_tag(vb, res->tag);
	else if (column == COLUMN_PM_RESULT_SAMPLE_STATUS)
		mib_set_int(vb, res->sample_status);
	else if (column >= SRES_COUNTER0 && column < SRES_COUNTER0 + PM_SAMPLE_COUNTERS)
		mib_set_unsigned(vb, ASN_COUNTER, res->counter[column - SRES_COUNTER0]);
	else
		return -1;
	return 0;
}

/* ---- SETs: actions on nodes ---------------------------------------------------------
 *
 * Every varbind is checked and staged in RESERVE1 (per node: a new PortSelect,
 * counters to clear, sampling fields); ACTION applies the PortSelect choices,
 * then sends one PerfMgtSet(PortCounters) per node with every counter named
 * for it, and one sample start per node, and waits for the answers
 * (delegated). What a node did cannot be taken back (no UNDO): a cleared
 * counter stays cleared, a started sample runs. */

struct node_op {
	const struct topo_node *node;
	unsigned port;                /* the port pmPortCountersTable shows (and clears) */
	bool select;                  /* pmPortCountersPortSelect set */
	unsigned clear;               /* CounterSelect bits to clear */
	uint32_t sample_fields;       /* PM_SAMPLE_SET_* of a sample start */
	struct pm_sample_ctl want;
};

struct pm_tx {
	struct pm_mib *m;
	struct node_op *op;
	size_t n, cap;
};

static void *tx_begin(void *area)
{
	struct pm_tx *tx = calloc(1, sizeof(struct pm_tx));

	if (tx)
		tx->m = area;
	return tx;
}

static void tx_end(void *p)
{
	struct pm_tx *tx = p;

	free(tx->op);
	free(tx);
}

/* The staged operation on the node of a row; NULL on out of memory. */
static struct node_op *op_of(struct pm_tx *tx, const struct pm_node_view *nv)
{
	for (size_t i = 0; i < tx->n; i++)
		if (tx->op[i].node == nv->node)
			return &tx->op[i];
	if (tx->n == tx->cap) {
		size_t cap = tx->cap ? 2 * tx->cap : 8;
		struct node_op *p = realloc(tx->op, cap * sizeof(*p));

		if (!p)
			return NULL;
		tx->op = p;
		tx->cap = cap;
	}
	tx->op[tx->n] = (struct node_op){.node = nv->node, .port = nv->port_select};
	return &tx->op[tx->n++];
}

/* A PortSelect value (PortCounters or PortSamplesControl) for this node. */
static int check_port_select(const struct pm_node_view *nv, long v)
{
	if (v == 0xff ? !(nv->capmask & PM_CAP_ALL_PORT_SELECT)
		      : !pm_node_has_port(nv, (unsigned)v))
		return SNMP_ERR_INCONSISTENTVALUE; /* a port the node does not have */
	return SNMP_ERR_NOERROR;
}

static int stage_counter_port_select(void *p, const struct mib_set_request *req)
{
	const struct pm_node_view *nv = req->row;
	struct node_op *op;
	int err = check_port_select(nv, req->value);

	if (err != SNMP_ERR_NOERROR)
		return err;
	if (!(op = op_of(p, nv)))
		return SNMP_ERR_RESOURCEUNAVAILABLE;
	op->select = true;
	op->port = (unsigned)req->value;
	return SNMP_ERR_NOERROR;
}

/* A counter column set to 0 (the only value its check lets through). */
static int stage_counter_clear(void *p, const struct mib_set_request *req)
{
	const struct pm_node_view *nv = req->row;
	struct node_op *op;

	if (!nv->node->lid)
		return SNMP_ERR_RESOURCEUNAVAILABLE;
	if (!(op = op_of(p, nv)))
		return SNMP_ERR_RESOURCEUNAVAILABLE;
	op->clear |= 1u << (req->column - COUNTER_FIRST);
	return SNMP_ERR_NOERROR;
}

/* A sampling field of a sample start. */
static int stage_sample_field(void *p, const struct mib_set_request *req)
{
	const struct pm_node_view *nv = req->row;
	unsigned column = req->column;
	struct node_op *op;
	unsigned long v = (unsigned long)req->value;

	if (column == COLUMN_PM_PORT_SAMPLE_CNTRL_PORT_SELECT) {
		int err = check_port_select(nv, req->value);

		if (err != SNMP_ERR_NOERROR)
			return err;
	} else if (column == COLUMN_PM_PORT_SAMPLE_CNTRL_TAG) {
		if (req->vb->val.string[0] || req->vb->val.string[1])
			return SNMP_ERR_WRONGVALUE; /* IBA's Tag has 16 bits */
		v = (unsigned long)req->vb->val.string[2] << 8 | req->vb->val.string[3];
	} else if ((column == COLUMN_PM_PORT_SAMPLE_CNTRL_SAMPLE_START ||
		    column == COLUMN_PM_PORT_SAMPLE_CNTRL_SAMPLE_INTERVAL) &&
		   nv->sample && nv->sample->have_ctl &&
		   pm_sample_width_bits(nv->sample->ctl.counter_width) < 32 &&
		   v >> pm_sample_width_bits(nv->sample->ctl.counter_width)) {
		return SNMP_ERR_INCONSISTENTVALUE; /* the node's timers are CounterWidth bits */
	}
	if (column != COLUMN_PM_PORT_SAMPLE_CNTRL_PORT_SELECT && !nv->node->lid)
		return SNMP_ERR_RESOURCEUNAVAILABLE;
	if (!(op = op_of(p, nv)))
		return SNMP_ERR_RESOURCEUNAVAILABLE;
	switch (column) {
	case COLUMN_PM_PORT_SAMPLE_CNTRL_OP_CODE:
		op->want.opcode = (unsigned)v;
		op->sample_fields |= PM_SAMPLE_SET_OPCODE;
		break;
	case COLUMN_PM_PORT_SAMPLE_CNTRL_PORT_SELECT:
		op->want.port_select = (unsigned)v;
		op->sample_fields |= PM_SAMPLE_SET_PORT_SELECT;
		break;
	case COLUMN_PM_PORT_SAMPLE_CNTRL_SAMPLE_START:
		op->want.sample_start = (uint32_t)v;
		op->sample_fields |= PM_SAMPLE_SET_START;
		break;
	case COLUMN_PM_PORT_SAMPLE_CNTRL_SAMPLE_INTERVAL:
		op->want.sample_interval = (uint32_t)v;
		op->sample_fields |= PM_SAMPLE_SET_INTERVAL;
		break;
	case COLUMN_PM_PORT_SAMPLE_CNTRL_TAG:
		op->want.tag = (unsigned)v;
		op->sample_fields |= PM_SAMPLE_SET_TAG;
		break;
	default: /* CounterSelect0..14 */
		op->want.counter_select[column - SCTL_SELECT0] = (unsigned)v;
		op->sample_fields |= PM_SAMPLE_SET_SELECT(column - SCTL_SELECT0);
		break;
	}
	return SNMP_ERR_NOERROR;
}

/* The node actions of one ACTION, answered one by one. */
struct pm_action {
	struct pm_mib *m;
	unsigned token;
	size_t pending;
	int error;
};

static void note_result(struct pm_action *a, int result)
{
	if (result == MAD_OK)
		return;
	a->error = SNMP_ERR_COMMITFAILED;
	if (result > 0)
		snmp_log(LOG_WARNING, "a SET of IB-PM-MIB failed: the node refused (MAD status "
			 "0x%04x)\n", (unsigned)result);
	else
		snmp_log(LOG_WARNING, "a SET of IB-PM-MIB failed: %s\n",
			 result == MAD_TIMEOUT ? "the node did not answer" : "cannot send the MAD");
}

static void action_one_done(void *ctx, int result)
{
	struct pm_action *a = ctx;

	note_result(a, result);
	if (--a->pending)
		return;
	mib_set_action_done(&a->m->domain, a->token, a->error);
	free(a);
}

static int tx_action(void *p, unsigned token)
{
	struct pm_tx *tx = p;
	struct pm_area *pm = tx->m->pm;
	struct pm_action *a = calloc(1, sizeof(*a));
	bool selected = false;
	int err;

	if (!a)
		return SNMP_ERR_RESOURCEUNAVAILABLE;
	a->m = tx->m;
	a->token = token;
	a->pending = 1; /* held until every action is sent: no answer ends it before */
	/* PortSelect first: a clear in the same PDU clears the port selected */
	for (size_t i = 0; i < tx->n; i++) {
		if (!tx->op[i].select)
			continue;
		if (pm_port_select_set(pm, tx->op[i].node->guid, tx->op[i].port))
			a->error = SNMP_ERR_RESOURCEUNAVAILABLE;
		selected = true;
	}
	if (selected)
		pm_view_refresh(pm);
	for (size_t i = 0; i < tx->n; i++) {
		const struct node_op *op = &tx->op[i];

		if (op->clear) {
			a->pending++;
			if (pm_clear_counters(pm, op->node->lid, op->port, op->clear,
					      action_one_done, a)) {
				a->pending--;
				note_result(a, MAD_SEND_FAILED);
			}
		}
		if (op->sample_fields) {
			a->pending++;
			if (pm_samples_start(pm, op->node->guid, op->node->lid, &op->want,
					     op->sample_fields, action_one_done, a)) {
				a->pending--;
				note_result(a, MAD_SEND_FAILED);
			}
		}
	}
	if (--a->pending) /* answers to come */
		return MIB_SET_PENDING;
	err = a->error; /* nothing went out, or every answer is in already */
	free(a);
	return err;
}

static const struct mib_set_domain domain_template = {
	.name = "IB-PM-MIB", .begin = tx_begin, .action = tx_action, .end = tx_end,
};

#define COUNTER_COLUMN(c) {c, MIB_VALUE_INT, 0, 0, stage_counter_clear} /* only 0 */

static const struct mib_column_set counter_columns[] = {
	{COLUMN_PM_PORT_COUNTERS_PORT_SELECT, MIB_VALUE_INT, 0, 255, stage_counter_port_select},
	COUNTER_COLUMN(COLUMN_PM_PORT_COUNTERS_SYMBOL_ERRORS),
	COUNTER_COLUMN(COLUMN_PM_PORT_COUNTERS_LINK_ERROR_RECOVERY),
	COUNTER_COLUMN(COLUMN_PM_PORT_COUNTERS_LINK_DOWN),
	COUNTER_COLUMN(COLUMN_PM_PORT_COUNTERS_RCV_ERRORS),
	COUNTER_COLUMN(COLUMN_PM_PORT_COUNTERS_RCV_REMOTE_ERRORS),
	COUNTER_COLUMN(COLUMN_PM_PORT_COUNTERS_RCV_SW_RELAY_ERRORS),
	COUNTER_COLUMN(COLUMN_PM_PORT_COUNTERS_XMIT_DISCARDS),
	COUNTER_COLUMN(COLUMN_PM_PORT_COUNTERS_XMIT_CONSTRAINT_ERRORS),
	COUNTER_COLUMN(COLUMN_PM_PORT_COUNTERS_RCV_CONSTRAINT_ERRORS),
	COUNTER_COLUMN(COLUMN_PM_PORT_COUNTERS_LOCAL_LINK_INTEGRITY_ERRORS),
	COUNTER_COLUMN(COLUMN_PM_PORT_COUNTERS_EXCESSIVE_BUFFER_OVERRUN),
	COUNTER_COLUMN(COLUMN_PM_PORT_COUNTERS_VL15_DROPPED),
	COUNTER_COLUMN(COLUMN_PM_PORT_COUNTERS_XMIT_DATA),
	COUNTER_COLUMN(COLUMN_PM_PORT_COUNTERS_RCV_DATA),
	COUNTER_COLUMN(COLUMN_PM_PORT_COUNTERS_XMIT_PKTS),
	COUNTER_COLUMN(COLUMN_PM_PORT_COUNTERS_RCV_PKTS),
};

#define SELECT_COLUMN(i) \
	{SCTL_SELECT0 + (i), MIB_VALUE_INT, 0, 0xffff, stage_sample_field}

static const struct mib_column_set sample_columns[] = {
	{COLUMN_PM_PORT_SAMPLE_CNTRL_OP_CODE, MIB_VALUE_INT, 0, 255, stage_sample_field},
	{COLUMN_PM_PORT_SAMPLE_CNTRL_PORT_SELECT, MIB_VALUE_INT, 0, 255, stage_sample_field},
	{COLUMN_PM_PORT_SAMPLE_CNTRL_SAMPLE_START, MIB_VALUE_INT, 0, INT_MAX, stage_sample_field},
	{COLUMN_PM_PORT_SAMPLE_CNTRL_SAMPLE_INTERVAL, MIB_VALUE_INT, 0, INT_MAX,
	 stage_sample_field},
	{COLUMN_PM_PORT_SAMPLE_CNTRL_TAG, MIB_VALUE_OCTETS, 4, 4, stage_sample_field},
	SELECT_COLUMN(0), SELECT_COLUMN(1), SELECT_COLUMN(2), SELECT_COLUMN(3),
	SELECT_COLUMN(4), SELECT_COLUMN(5), SELECT_COLUMN(6), SELECT_COLUMN(7),
	SELECT_COLUMN(8), SELECT_COLUMN(9), SELECT_COLUMN(10), SELECT_COLUMN(11),
	SELECT_COLUMN(12), SELECT_COLUMN(13), SELECT_COLUMN(14),
};


/* ---- registration --------------------------------------------------------------------- */

/* Each table reads the group named in table_group. */
static const struct mib_table table_template[PM_MIB_TABLES] = {
	{
		.name = "ibsnmpdPmPortTable",
		.table_oid = pm_port_table_oid,
		.table_oid_len = OID_LENGTH(pm_port_table_oid),
		.first_column = COLUMN_IBSNMPD_PM_NODE_DESCRIPTION,
		.last_column = COLUMN_IBSNMPD_PM_STALE,
		.rows = pm_rows,
		.value = pm_port_value,
	},
	{
		.name = "ibsnmpdPmErrorDetailTable",
		.table_oid = pm_detail_table_oid,
		.table_oid_len = OID_LENGTH(pm_detail_table_oid),
		.first_column = COLUMN_IBSNMPD_PM_DETAIL_LOCAL_PHYSICAL_ERRORS,
		.last_column = COLUMN_IBSNMPD_PM_DETAIL_STALE,
		.rows = pm_rows,
		.value = pm_detail_value,
	},
	{
		.name = "ibsnmpdPmFecTable",
		.table_oid = pm_fec_table_oid,
		.table_oid_len = OID_LENGTH(pm_fec_table_oid),
		.first_column = COLUMN_IBSNMPD_PM_FEC_LAYOUT,
		.last_column = COLUMN_IBSNMPD_PM_FEC_STALE,
		.rows = pm_rows,
		.value = pm_fec_value,
	},
	{
		.name = "pmClassPortInfoTable",
		.table_oid = pm_cpi_table_oid,
		.table_oid_len = OID_LENGTH(pm_cpi_table_oid),
		.first_column = COLUMN_PM_CLASS_PORT_INFO_GUID,
		.last_column = COLUMN_PM_CLASS_PORT_INFO_ALL_PORT_SELECT,
		.rows = node_rows,
		.value = cpi_value,
	},
	{
		.name = "pmPortCountersTable",
		.table_oid = pm_counters_table_oid,
		.table_oid_len = OID_LENGTH(pm_counters_table_oid),
		.first_column = COLUMN_PM_PORT_COUNTERS_GUID,
		.last_column = COUNTER_LAST,
		.rows = node_rows,
		.value = counters_value,
	},
	{
		.name = "pmPortSampleCntrlTable",
		.table_oid = pm_sample_ctl_table_oid,
		.table_oid_len = OID_LENGTH(pm_sample_ctl_table_oid),
		.first_column = COLUMN_PM_PORT_SAMPLE_CNTRL_GUID,
		.last_column = SCTL_LAST,
		.rows = node_rows,
		.value = sample_ctl_value,
	},
	{
		.name = "pmPortSampleResultTable",
		.table_oid = pm_sample_result_table_oid,
		.table_oid_len = OID_LENGTH(pm_sample_result_table_oid),
		.first_column = COLUMN_PM_PORT_SAMPLE_RESULT_GUID,
		.last_column = SRES_COUNTER0 + PM_SAMPLE_COUNTERS - 1,
		.rows = node_rows,
		.value = sample_result_value,
	},
};
enum { T_PORT, T_DETAIL, T_FEC, T_CPI, T_COUNTERS, T_SAMPLE_CTL, T_SAMPLE_RESULT };

int pm_mib_register(struct pm_mib *m, struct pm_area *pm, const char *context)
{
	memset(m, 0, sizeof(*m));
	m->pm = pm;
	m->domain = domain_template;
	m->domain.area = m;
	m->counters_set = (struct mib_set_table){
		.domain = &m->domain, .columns = counter_columns,
		.n_columns = sizeof(counter_columns) / sizeof(counter_columns[0]),
	};
	m->sample_set = (struct mib_set_table){
		.domain = &m->domain, .columns = sample_columns,
		.n_columns = sizeof(sample_columns) / sizeof(sample_columns[0]),
	};
	for (size_t i = 0; i < PM_MIB_TABLES; i++) {
		m->tables[i] = table_template[i];
		m->tables[i].ctx = i <= T_FEC ? &pm->sweep : &pm->view;
		m->tables[i].context = context;
	}
	m->tables[T_COUNTERS].set = &m->counters_set;
	m->tables[T_SAMPLE_CTL].set = &m->sample_set;
	for (size_t i = 0; i < PM_MIB_TABLES; i++)
		if (mib_table_register(&m->tables[i]))
			return -1;
	if (!context)
		register_sysORTable(pm_draft_oid, OID_LENGTH(pm_draft_oid),
				    "IB-PM-MIB: InfiniBand performance management (draft), served by "
				    "ibsnmpd");
	return 0;
}

void pm_mib_unregister(struct pm_mib *m)
{
	bool default_context = m->tables[0].reg && !m->tables[0].context;

	for (size_t i = 0; i < PM_MIB_TABLES; i++)
		mib_table_unregister(&m->tables[i]);
	if (default_context)
		unregister_sysORTable(pm_draft_oid, OID_LENGTH(pm_draft_oid));
	mib_set_domain_free(&m->domain);
}
