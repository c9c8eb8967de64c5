/* IBSNMPD-PARTITION-MIB (1.3.6.1.4.1.8072.9999.9999.117.3): opensm's
 * partition policy, read from its file and changed through SNMP.
 *
 *   ibPartitionTable        .1.1  INDEX P_Key (1..32766)
 *   ibPartitionMemberTable  .1.2  INDEX P_Key, port GUID (8 octets)
 *   ibPartitionPolicy       .1.3  file, last apply: time, result, error;
 *                                 unconfigured ports isolated/connected (writable)
 *
 * The handlers read the policy's view (pkey_view.c). A SET is one
 * transaction of the SET engine over both tables and the scalars: RESERVE1
 * applies each varbind to a copy of the policy, RESERVE2 checks the copy as
 * a whole (the file it would write must parse), ACTION writes the file
 * atomically (UNDO puts the previous one back), COMMIT tells opensm and
 * starts the verification of the member ports. */
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/mib_oids.h"
#include "ibsnmpd/mib_set.h"
#include "ibsnmpd/mib_table.h"
#include "ibsnmpd/netsnmp.h"

#include "pkey_policy.h"

#include <net-snmp/agent/agent_sysORTable.h>

static const oid part_table_oid[] = {OID_IB_PARTITION_TABLE};
static const oid member_table_oid[] = {OID_IB_PARTITION_MEMBER_TABLE};
static const oid policy_oid[] = {OID_IB_PARTITION_POLICY};
static oid partition_mib_oid[] = {OID_IBSNMPD_PARTITION_MIB};

/* RowStatus values: net-snmp's RS_ACTIVE, RS_CREATEANDGO, RS_DESTROY, ... */

/* ---- values ------------------------------------------------------------------------- */

static const struct mib_rows *part_rows(const void *ctx, const void **snap)
{
	const struct pkey_view *v = cache_snapshot(ctx);

	*snap = v;
	return v ? &v->part_rows : NULL;
}

static const struct mib_rows *member_rows(const void *ctx, const void **snap)
{
	const struct pkey_view *v = cache_snapshot(ctx);

	*snap = v;
	return v ? &v->member_rows : NULL;
}

static int part_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		      const void *snap)
{
	const struct pkey_partition_row *p = row;

	(void)snap;
	switch (column) {
	case COLUMN_IB_PARTITION_NAME: mib_set_octets(vb, p->name, strlen(p->name)); return 0;
	case COLUMN_IB_PARTITION_IPOIB: mib_set_int(vb, mib_truth(p->ipoib)); return 0;
	/* 0: not given (opensm's default) */
	case COLUMN_IB_PARTITION_MTU: mib_set_int(vb, p->mtu < 0 ? 0 : p->mtu); return 0;
	case COLUMN_IB_PARTITION_RATE: mib_set_int(vb, p->rate < 0 ? 0 : p->rate); return 0;
	case COLUMN_IB_PARTITION_SL: mib_set_int(vb, p->sl); return 0;
	case COLUMN_IB_PARTITION_SCOPE: mib_set_int(vb, p->scope < 0 ? 0 : p->scope); return 0;
	case COLUMN_IB_PARTITION_DEF_MEMBER: mib_set_int(vb, p->defmember); return 0;
	case COLUMN_IB_PARTITION_STATUS: mib_set_int(vb, p->status); return 0;
	case COLUMN_IB_PARTITION_ROW_STATUS: mib_set_int(vb, RS_ACTIVE); return 0;
	default: return -1;
	}
}

static int member_value(const void *row, unsigned column, netsnmp_variable_list *vb,
			const void *snap)
{
	const struct pkey_member_row *m = row;

	(void)snap;
	switch (column) {
	case COLUMN_IB_PARTITION_MEMBER_TYPE: mib_set_int(vb, m->type); return 0;
	case COLUMN_IB_PARTITION_MEMBER_STATUS: mib_set_int(vb, m->status); return 0;
	case COLUMN_IB_PARTITION_MEMBER_ROW_STATUS: mib_set_int(vb, RS_ACTIVE); return 0;
	case COLUMN_IB_PARTITION_MEMBER_DETAIL:
		mib_set_octets(vb, m->detail, strlen(m->detail));
		return 0;
	default: return -1;
	}
}

/* ibPartitionUnconfiguredPorts: isolated(1), connected(2) */
#define UNCONFIGURED_ISOLATED 1
#define UNCONFIGURED_CONNECTED 2

static int policy_value(unsigned column, netsnmp_variable_list *vb, const void *snap)
{
	const struct pkey_view *v = snap;

	switch (column) {
	case SCALAR_IB_PARTITION_FILE:
		mib_set_octets(vb, pkey_cfg.partition_file, strlen(pkey_cfg.partition_file));
		return 0;
	case SCALAR_IB_PARTITION_LAST_APPLY_TIME:
		mib_set_unsigned(vb, ASN_UNSIGNED, (unsigned long)v->last_apply);
		return 0;
	case SCALAR_IB_PARTITION_LAST_APPLY_RESULT: mib_set_int(vb, v->last_result); return 0;
	case SCALAR_IB_PARTITION_LAST_ERROR: mib_set_octets(vb, v->error, strlen(v->error)); return 0;
	case SCALAR_IB_PARTITION_UNCONFIGURED_PORTS:
		if (!v->loaded)
			return -1;
		mib_set_int(vb, v->unconfigured_connected ? UNCONFIGURED_CONNECTED
							  : UNCONFIGURED_ISOLATED);
		return 0;
	default: return -1;
	}
}

/* ---- the SET transaction: a copy of the policy ---------------------------------------- */

struct pkey_tx {
	struct pkey_policy *pp;
	struct partition_file pf;
	bool written;
};

static void *tx_begin(void *area)
{
	struct pkey_policy *pp = area;
	struct pkey_tx *tx;

	pkey_policy_reload_if_changed(pp);
	if (!pp->loaded)
		return NULL; /* the file does not parse: change nothing */
	tx = calloc(1, sizeof(*tx));
	if (tx && partition_file_copy(&pp->pf, &tx->pf)) {
		free(tx);
		return NULL;
	}
	if (tx)
		tx->pp = pp;
	return tx;
}

static void tx_end(void *p)
{
	struct pkey_tx *tx = p;

	partition_file_free(&tx->pf);
	free(tx);
}

/* The P_Key (and GUID) an index names; -1 if it can name no row. */
static int index_of(const struct mib_set_request *req, unsigned *pkey, uint64_t *guid)
{
	size_t want = guid ? 1 + MIB_GUID_INDEX_LEN : 1;

	if (req->index_len != want || req->index[0] < PKEY_MIN || req->index[0] > PKEY_MAX)
		return -1;
	*pkey = (unsigned)req->index[0];
	return guid ? mib_index_get_guid(req->index + 1, guid) : 0;
}

static int row_status_check(long v)
{
	return v == RS_ACTIVE || v == RS_CREATEANDGO || v == RS_DESTROY ? SNMP_ERR_NOERROR
									: SNMP_ERR_WRONGVALUE;
}

/* The partition a varbind changes (it may have been created in this SET). */
static struct partition *partition_of(struct pkey_tx *tx, const struct mib_set_request *req)
{
	unsigned pkey;

	return index_of(req, &pkey, NULL) ? NULL : partition_find_pkey(&tx->pf, pkey);
}

static int stage_part_row_status(void *p, const struct mib_set_request *req)
{
	struct pkey_tx *tx = p;
	unsigned pkey;
	struct partition *part;
	int err;

	if (index_of(req, &pkey, NULL))
		return SNMP_ERR_NOCREATION;
	if ((err = row_status_check(req->value)))
		return err;
	part = partition_find_pkey(&tx->pf, pkey);
	switch (req->value) {
	case RS_CREATEANDGO:
		if (part)
			return SNMP_ERR_INCONSISTENTVALUE;
		return partition_add(&tx->pf, "", pkey) ? SNMP_ERR_NOERROR
							: SNMP_ERR_RESOURCEUNAVAILABLE;
	case RS_ACTIVE:
		return part ? SNMP_ERR_NOERROR : SNMP_ERR_INCONSISTENTVALUE;
	default: /* destroy; of a missing row: nothing to do */
		if (part)
			part->removed = true;
		return SNMP_ERR_NOERROR;
	}
}

static int stage_part_name(void *p, const struct mib_set_request *req)
{
	struct pkey_tx *tx = p;
	struct partition *part = partition_of(tx, req), *other;
	char name[PARTITION_NAME_MAX + 1];

	if (!part)
		return SNMP_ERR_NOCREATION;
	if (!partition_name_valid((const char *)req->vb->val.string, req->vb->val_len))
		return SNMP_ERR_WRONGVALUE;
	memcpy(name, req->vb->val.string, req->vb->val_len);
	name[req->vb->val_len] = '\0';
	other = partition_find_name(&tx->pf, name);
	if (other && other != part)
		return SNMP_ERR_INCONSISTENTVALUE; /* the name of another partition */
	snprintf(part->name, sizeof(part->name), "%s", name);
	part->changed = true;
	return SNMP_ERR_NOERROR;
}

/* The integer columns of a partition, as its file line says them. */
static int stage_part_value(void *p, const struct mib_set_request *req)
{
	struct partition *part = partition_of(p, req);
	int v = (int)req->value;

	if (!part)
		return SNMP_ERR_NOCREATION;
	switch (req->column) {
	case COLUMN_IB_PARTITION_IPOIB: part->ipoib = req->value == TV_TRUE; break;
	case COLUMN_IB_PARTITION_MTU: part->mtu = v ? v : -1; break;   /* 0: not given */
	case COLUMN_IB_PARTITION_RATE: part->rate = v ? v : -1; break;
	case COLUMN_IB_PARTITION_SL: part->sl = v; break;                 /* -1: not given */
	case COLUMN_IB_PARTITION_SCOPE: part->scope = v ? v : -1; break;
	case COLUMN_IB_PARTITION_DEF_MEMBER: part->defmember = (enum member_type)v; break;
	default: return SNMP_ERR_NOTWRITABLE;
	}
	part->changed = true;
	return SNMP_ERR_NOERROR;
}

/* The partition and member a member-table varbind names (either may be
 * NULL: not there); -1 if its index can name no row. */
static int member_of(struct pkey_tx *tx, const struct mib_set_request *req,
		     struct partition **part, struct partition_member **m, uint64_t *guid)
{
	unsigned pkey;

	if (index_of(req, &pkey, guid))
		return -1;
	*part = partition_find_pkey(&tx->pf, pkey);
	*m = *part ? partition_find_member(*part, *guid) : NULL;
	return 0;
}

static int stage_member_row_status(void *p, const struct mib_set_request *req)
{
	struct partition *part;
	struct partition_member *m;
	uint64_t guid;
	int err;

	if (member_of(p, req, &part, &m, &guid))
		return SNMP_ERR_NOCREATION; /* a malformed GUID or P_Key */
	if ((err = row_status_check(req->value)))
		return err;
	switch (req->value) {
	case RS_CREATEANDGO:
		if (!part || m)
			return SNMP_ERR_INCONSISTENTVALUE; /* no such partition, or there */
		return partition_add_member(part, guid, MEMBER_UNSET)
			       ? SNMP_ERR_NOERROR : SNMP_ERR_RESOURCEUNAVAILABLE;
	case RS_ACTIVE:
		return m ? SNMP_ERR_NOERROR : SNMP_ERR_INCONSISTENTVALUE;
	default:
		if (m)
			partition_remove_member(part, guid);
		return SNMP_ERR_NOERROR;
	}
}

static int stage_member_type(void *p, const struct mib_set_request *req)
{
	struct partition *part;
	struct partition_member *m;
	uint64_t guid;

	if (member_of(p, req, &part, &m, &guid) || !m)
		return SNMP_ERR_NOCREATION;
	m->type = (enum member_type)req->value;
	part->changed = true;
	return SNMP_ERR_NOERROR;
}

static int stage_unconfigured(void *p, const struct mib_set_request *req)
{
	struct pkey_tx *tx = p;

	switch (partition_set_unconfigured_connected(&tx->pf,
						     req->value == UNCONFIGURED_CONNECTED)) {
	case 0:
		return SNMP_ERR_NOERROR;
	case 1:
		snmp_log(LOG_WARNING, "partition policy: refusing a SET: the file names a partition "
			 "'Default' with another P_Key than 0x7fff\n");
		return SNMP_ERR_INCONSISTENTVALUE;
	default:
		return SNMP_ERR_RESOURCEUNAVAILABLE;
	}
}

/* RESERVE2: the transaction as a whole */
static int tx_consistent(void *p)
{
	struct pkey_tx *tx = p;
	struct partition_file check;
	char err[200], *text;
	size_t len;

	for (size_t i = 0; i < tx->pf.n_parts; i++)
		if (!tx->pf.parts[i].removed && !tx->pf.parts[i].name[0])
			return SNMP_ERR_INCONSISTENTVALUE; /* created without a name */
	text = partition_file_render(&tx->pf, &len);
	if (!text)
		return SNMP_ERR_RESOURCEUNAVAILABLE;
	if (partition_file_parse(text, len, &check, err, sizeof(err))) {
		snmp_log(LOG_WARNING, "partition policy: refusing a SET: the file would not "
			 "parse: %s\n", err);
		free(text);
		return SNMP_ERR_INCONSISTENTVALUE;
	}
	partition_file_free(&check);
	free(text);
	return SNMP_ERR_NOERROR;
}

/* ACTION: the file, written atomically */
static int tx_action(void *p, unsigned token)
{
	struct pkey_tx *tx = p;
	struct pkey_policy *pp = tx->pp;
	char err[300];

	(void)token;
	if (pkey_policy_write(pp, &tx->pf, err, sizeof(err))) {
		snmp_log(LOG_ERR, "partition policy: %s\n", err);
		pp->last_result = APPLY_WRITE_FAILED;
		snprintf(pp->last_error, sizeof(pp->last_error), "%.250s", err);
		pkey_view_refresh(pp);
		return SNMP_ERR_COMMITFAILED;
	}
	tx->written = true;
	return SNMP_ERR_NOERROR;
}

/* COMMIT: opensm is told, the member ports checked */
static void tx_commit(void *p)
{
	struct pkey_tx *tx = p;

	pkey_policy_apply(tx->pp);
}

/* UNDO: another varbind's ACTION failed after the file was written */
static int tx_undo(void *p)
{
	struct pkey_tx *tx = p;

	if (!tx->written)
		return 0;
	tx->written = false;
	return pkey_policy_restore(tx->pp);
}

static const struct mib_set_domain domain_template = {
	.name = "IBSNMPD-PARTITION-MIB", .begin = tx_begin, .consistent = tx_consistent,
	.action = tx_action, .commit = tx_commit, .undo = tx_undo, .end = tx_end,
};

static const struct mib_column_set part_columns[] = {
	{COLUMN_IB_PARTITION_NAME, MIB_VALUE_OCTETS, 1, PARTITION_NAME_MAX, stage_part_name},
	{COLUMN_IB_PARTITION_IPOIB, MIB_VALUE_TRUTH, 0, 0, stage_part_value},
	{COLUMN_IB_PARTITION_MTU, MIB_VALUE_INT, 0, 5, stage_part_value},
	{COLUMN_IB_PARTITION_RATE, MIB_VALUE_INT, 0, 255, stage_part_value},
	{COLUMN_IB_PARTITION_SL, MIB_VALUE_INT, -1, 15, stage_part_value},
	{COLUMN_IB_PARTITION_SCOPE, MIB_VALUE_INT, 0, 15, stage_part_value},
	{COLUMN_IB_PARTITION_DEF_MEMBER, MIB_VALUE_INT, 0, 3, stage_part_value},
	{COLUMN_IB_PARTITION_ROW_STATUS, MIB_VALUE_INT, 1, 6, stage_part_row_status},
};

static const struct mib_column_set member_columns[] = {
	{COLUMN_IB_PARTITION_MEMBER_TYPE, MIB_VALUE_INT, 1, 3, stage_member_type},
	{COLUMN_IB_PARTITION_MEMBER_ROW_STATUS, MIB_VALUE_INT, 1, 6, stage_member_row_status},
};

static const struct mib_column_set policy_columns[] = {
	{SCALAR_IB_PARTITION_UNCONFIGURED_PORTS, MIB_VALUE_INT, UNCONFIGURED_ISOLATED,
	 UNCONFIGURED_CONNECTED, stage_unconfigured},
};

static const struct mib_table part_table_template = {
	.name = "ibPartitionTable",
	.table_oid = part_table_oid,
	.table_oid_len = OID_LENGTH(part_table_oid),
	.first_column = COLUMN_IB_PARTITION_NAME,
	.last_column = COLUMN_IB_PARTITION_ROW_STATUS,
	.rows = part_rows,
	.value = part_value,
};

static const struct mib_table member_table_template = {
	.name = "ibPartitionMemberTable",
	.table_oid = member_table_oid,
	.table_oid_len = OID_LENGTH(member_table_oid),
	.first_column = COLUMN_IB_PARTITION_MEMBER_TYPE,
	.last_column = COLUMN_IB_PARTITION_MEMBER_DETAIL,
	.rows = member_rows,
	.value = member_value,
};

static const void *policy_snapshot(const void *ctx)
{
	return cache_snapshot(ctx);
}

static const struct mib_scalars policy_template = {
	.name = "ibPartitionPolicy", .group_oid = policy_oid,
	.group_oid_len = OID_LENGTH(policy_oid), .first = SCALAR_IB_PARTITION_FILE,
	.last = SCALAR_IB_PARTITION_UNCONFIGURED_PORTS, .snapshot = policy_snapshot,
	.value = policy_value,
};

int pkey_mib_register(struct pkey_mib *m, struct pkey_policy *pp, const char *context)
{
	memset(m, 0, sizeof(*m));
	m->domain = domain_template;
	m->domain.area = pp;
	m->part_set = (struct mib_set_table){
		.domain = &m->domain, .columns = part_columns,
		.n_columns = sizeof(part_columns) / sizeof(part_columns[0]), .creatable = true,
		.row_status_column = COLUMN_IB_PARTITION_ROW_STATUS,
	};
	m->member_set = (struct mib_set_table){
		.domain = &m->domain, .columns = member_columns,
		.n_columns = sizeof(member_columns) / sizeof(member_columns[0]), .creatable = true,
		.row_status_column = COLUMN_IB_PARTITION_MEMBER_ROW_STATUS,
	};
	m->policy_set = (struct mib_set_table){
		.domain = &m->domain, .columns = policy_columns,
		.n_columns = sizeof(policy_columns) / sizeof(policy_columns[0]),
	};
	m->part_table = part_table_template;
	m->member_table = member_table_template;
	m->policy = policy_template;
	m->part_table.set = &m->part_set;
	m->member_table.set = &m->member_set;
	m->policy.set = &m->policy_set;
	m->part_table.ctx = m->member_table.ctx = m->policy.ctx = &pp->view;
	m->part_table.context = m->member_table.context = m->policy.context = context;
	if (mib_table_register(&m->part_table) || mib_table_register(&m->member_table) ||
	    mib_scalars_register(&m->policy))
		return -1;
	if (!context)
		register_sysORTable(partition_mib_oid, OID_LENGTH(partition_mib_oid),
				    "IBSNMPD-PARTITION-MIB: opensm's partition policy, served by "
				    "ibsnmpd");
	return 0;
}

void pkey_mib_unregister(struct pkey_mib *m)
{
	bool default_context = m->part_table.reg && !m->part_table.context;

	mib_table_unregister(&m->part_table);
	mib_table_unregister(&m->member_table);
	mib_scalars_unregister(&m->policy);
	if (default_context)
		unregister_sysORTable(partition_mib_oid, OID_LENGTH(partition_mib_oid));
	mib_set_domain_free(&m->domain);
}
