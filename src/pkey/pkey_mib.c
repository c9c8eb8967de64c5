/* IBSNMPD-PARTITION-MIB (1.3.6.1.4.1.8072.9999.9999.117.3): opensm's
 * partition policy, read from its file and changed through SNMP.
 *
 *   ibPartitionTable        .1.1  INDEX P_Key (1..32766)
 *   ibPartitionMemberTable  .1.2  INDEX P_Key, port GUID (8 octets)
 *   ibPartitionPolicy       .1.3  file, last apply: time, result, error;
 *                                 unconfigured ports isolated/connected (writable)
 *
 * A SET is one transaction over both tables: RESERVE1 checks each varbind
 * and applies it to a copy of the policy, RESERVE2 checks the copy as a
 * whole (the file it would write must parse), ACTION writes the file
 * atomically (UNDO puts the previous one back), COMMIT tells opensm and
 * starts the verification of the member ports. */
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/config.h"
#include "ibsnmpd/mib_table.h"
#include "ibsnmpd/netsnmp.h"

#include "pkey_policy.h"

#include <net-snmp/agent/agent_sysORTable.h>

#define PARTITION_MIB 1, 3, 6, 1, 4, 1, 8072, 9999, 9999, 117, 3
static const oid part_table_oid[] = {PARTITION_MIB, 1, 1};
static const oid member_table_oid[] = {PARTITION_MIB, 1, 2};
static const oid policy_oid[] = {PARTITION_MIB, 1, 3};
static oid partition_mib_oid[] = {PARTITION_MIB};

/* RowStatus values: net-snmp's RS_ACTIVE, RS_CREATEANDGO, RS_DESTROY, ... */
enum { PC_NAME = 2, PC_IPOIB, PC_MTU, PC_RATE, PC_SL, PC_SCOPE, PC_DEFMEMBER, PC_STATUS,
       PC_ROWSTATUS };
enum { MC_TYPE = 2, MC_STATUS, MC_ROWSTATUS, MC_DETAIL };

static struct pkey_policy *policy;

/* ---- rows, rebuilt when the policy changes ------------------------------------------ */

static struct {
	unsigned generation;
	bool built;
	struct mib_rows parts, members;
} rows;

struct member_row {
	const struct partition *p;
	const struct partition_member *m;
};
static struct member_row *member_rows;

static void rebuild_rows(void)
{
	const struct partition_file *pf = &policy->pf;
	size_t np = 0, nm = 0;

	free(rows.parts.rows);
	free(rows.members.rows);
	free(member_rows);
	memset(&rows.parts, 0, sizeof(rows.parts));
	memset(&rows.members, 0, sizeof(rows.members));
	member_rows = NULL;
	rows.generation = policy->generation;
	rows.built = true;
	if (!policy->loaded)
		return;
	for (size_t i = 0; i < pf->n_parts; i++) {
		if (pf->parts[i].pkey < PKEY_MIN || pf->parts[i].pkey > PKEY_MAX)
			continue;
		np++;
		for (size_t k = 0; k < pf->parts[i].n_members; k++)
			nm += pf->parts[i].members[k].is_guid;
	}
	rows.parts.rows = calloc(np ? np : 1, sizeof(struct mib_row));
	rows.members.rows = calloc(nm ? nm : 1, sizeof(struct mib_row));
	member_rows = calloc(nm ? nm : 1, sizeof(*member_rows));
	if (!rows.parts.rows || !rows.members.rows || !member_rows)
		return;
	for (size_t i = 0; i < pf->n_parts; i++) {
		const struct partition *p = &pf->parts[i];
		struct mib_row *r;

		if (p->pkey < PKEY_MIN || p->pkey > PKEY_MAX)
			continue;
		r = &rows.parts.rows[rows.parts.count++];
		r->index[0] = p->pkey;
		r->index_len = 1;
		r->data = p;
		for (size_t k = 0; k < p->n_members; k++) {
			const struct partition_member *m = &p->members[k];
			struct member_row *mr;

			if (!m->is_guid)
				continue; /* keywords (ALL, ...) have no GUID to index by */
			mr = &member_rows[rows.members.count];
			mr->p = p;
			mr->m = m;
			r = &rows.members.rows[rows.members.count++];
			r->index[0] = p->pkey;
			for (int b = 0; b < 8; b++)
				r->index[1 + b] = (oid)(m->guid >> (56 - 8 * b) & 0xff);
			r->index_len = 9;
			r->data = mr;
		}
	}
	mib_rows_sort(&rows.parts);
	mib_rows_sort(&rows.members);
}

/* No file I/O here (a walk calls this per varbind): the file is looked at
 * every 5 s (pkey_policy.c) and at the start of every SET. */
static const struct mib_rows *current_rows(bool members)
{
	if (!rows.built || rows.generation != policy->generation)
		rebuild_rows();
	return members ? &rows.members : &rows.parts;
}

static const struct mib_rows *part_rows(const void *ctx, const void **snap)
{
	(void)ctx;
	*snap = cache_snapshot(&policy->status);
	return current_rows(false);
}

static const struct mib_rows *member_rows_fn(const void *ctx, const void **snap)
{
	(void)ctx;
	*snap = cache_snapshot(&policy->status);
	return current_rows(true);
}

/* ---- values ------------------------------------------------------------------------- */

static enum partition_status_value member_status(const struct pkey_status_snapshot *s,
						 unsigned pkey, uint64_t guid,
						 const char **detail)
{
	const struct partition_status *st = pkey_status_find(s, pkey, guid);

	*detail = "";
	if (!st || s->generation != policy->generation)
		return PSTAT_PENDING; /* changed since the last check */
	*detail = st->detail;
	return st->status;
}

static int part_value(const void *row, unsigned column, netsnmp_variable_list *vb,
		      const void *snap)
{
	const struct partition *p = row;

	switch (column) {
	case PC_NAME: mib_set_octets(vb, p->name, strlen(p->name)); return 0;
	case PC_IPOIB: mib_set_int(vb, p->ipoib ? 1 : 2); return 0;
	case PC_MTU: mib_set_int(vb, p->mtu < 0 ? 0 : p->mtu); return 0;
	case PC_RATE: mib_set_int(vb, p->rate < 0 ? 0 : p->rate); return 0;
	case PC_SL: mib_set_int(vb, p->sl); return 0;
	case PC_SCOPE: mib_set_int(vb, p->scope < 0 ? 0 : p->scope); return 0;
	case PC_DEFMEMBER: mib_set_int(vb, p->defmember); return 0;
	case PC_STATUS: {
		/* the worst of its members; applied when it has none to check */
		int worst = PSTAT_APPLIED;
		const char *d;

		for (size_t k = 0; k < p->n_members; k++) {
			int st;

			if (!p->members[k].is_guid)
				continue;
			st = member_status(snap, p->pkey, p->members[k].guid, &d);
			if (st > worst)
				worst = st;
		}
		mib_set_int(vb, worst);
		return 0;
	}
	case PC_ROWSTATUS: mib_set_int(vb, RS_ACTIVE); return 0;
	default: return -1;
	}
}

static int member_value(const void *row, unsigned column, netsnmp_variable_list *vb,
			const void *snap)
{
	const struct member_row *mr = row;
	const char *detail;

	switch (column) {
	case MC_TYPE: mib_set_int(vb, partition_member_effective(mr->p, mr->m)); return 0;
	case MC_STATUS:
		mib_set_int(vb, member_status(snap, mr->p->pkey, mr->m->guid, &detail));
		return 0;
	case MC_ROWSTATUS: mib_set_int(vb, RS_ACTIVE); return 0;
	case MC_DETAIL:
		member_status(snap, mr->p->pkey, mr->m->guid, &detail);
		mib_set_octets(vb, detail, strlen(detail));
		return 0;
	default: return -1;
	}
}

static int policy_value(unsigned column, netsnmp_variable_list *vb, const void *snap)
{
	(void)snap;
	switch (column) {
	case 1:
		mib_set_octets(vb, ibsnmpd_cfg.partition_file, strlen(ibsnmpd_cfg.partition_file));
		return 0;
	case 2: mib_set_unsigned(vb, ASN_UNSIGNED, (unsigned long)policy->last_apply); return 0;
	case 3: mib_set_int(vb, policy->last_result); return 0;
	case 4: {
		const char *e = policy->loaded ? policy->last_error : policy->load_error;

		mib_set_octets(vb, e, strlen(e));
		return 0;
	}
	case 5:
		if (!policy->loaded)
			return -1;
		mib_set_int(vb, partition_unconfigured_connected(&policy->pf) ? 2 : 1);
		return 0;
	default: return -1;
	}
}

/* ---- the SET transaction ----------------------------------------------------------- */

static struct {
	long transid;         /* the SET it belongs to: over AgentX each phase comes in a
			       * PDU of its own, with the transaction's ID */
	bool open, written, told;
	struct partition_file pf;
} tx;

static void tx_close(void)
{
	if (tx.open)
		partition_file_free(&tx.pf);
	memset(&tx, 0, sizeof(tx));
}

static int tx_begin(netsnmp_agent_request_info *reqinfo)
{
	if (tx.open && tx.transid == mib_set_transid(reqinfo))
		return 0;
	tx_close();
	pkey_policy_reload_if_changed(policy);
	if (!policy->loaded)
		return -1; /* the file does not parse: change nothing */
	if (partition_file_copy(&policy->pf, &tx.pf))
		return -1;
	tx.open = true;
	tx.transid = mib_set_transid(reqinfo);
	return 0;
}

/* index -> P_Key (and GUID); -1 if the OID cannot name a row */
static int parse_index(const oid *table, size_t table_len, const netsnmp_variable_list *vb,
		       unsigned *column, unsigned *pkey, uint64_t *guid)
{
	size_t base = table_len, n = vb->name_length;
	size_t want = guid ? 9 : 1;

	if (n != base + 2 + want || vb->name[base] != 1)
		return -1;
	*column = (unsigned)vb->name[base + 1];
	if (vb->name[base + 2] < PKEY_MIN || vb->name[base + 2] > PKEY_MAX)
		return -1;
	*pkey = (unsigned)vb->name[base + 2];
	if (guid) {
		*guid = 0;
		for (int b = 0; b < 8; b++) {
			if (vb->name[base + 3 + b] > 255)
				return -1;
			*guid = *guid << 8 | vb->name[base + 3 + b];
		}
	}
	return 0;
}

static int row_status_check(long v)
{
	return v == RS_ACTIVE || v == RS_CREATEANDGO || v == RS_DESTROY ? SNMP_ERR_NOERROR
									: SNMP_ERR_WRONGVALUE;
}

/* One partition-table varbind onto the transaction. pass 0: RowStatus,
 * pass 1: the other columns (so that a row created in the PDU exists). */
static int part_reserve(netsnmp_variable_list *vb, int pass)
{
	unsigned column, pkey;
	struct partition *p;
	long v;
	int err;

	if (parse_index(part_table_oid, OID_LENGTH(part_table_oid), vb, &column, &pkey, NULL))
		return SNMP_ERR_NOCREATION;
	if (column < PC_NAME || column > PC_ROWSTATUS || column == PC_STATUS)
		return pass ? SNMP_ERR_NOTWRITABLE : SNMP_ERR_NOERROR;
	if ((column == PC_ROWSTATUS) != (pass == 0))
		return SNMP_ERR_NOERROR;
	p = partition_find_pkey(&tx.pf, pkey);
	if (column == PC_ROWSTATUS) {
		if ((err = mib_set_int_value(vb, 1, 6, &v)) || (err = row_status_check(v)))
			return err;
		if (v == RS_CREATEANDGO)
			return p ? SNMP_ERR_INCONSISTENTVALUE
				 : (partition_add(&tx.pf, "", pkey) ? SNMP_ERR_NOERROR
								   : SNMP_ERR_RESOURCEUNAVAILABLE);
		if (v == RS_ACTIVE)
			return p ? SNMP_ERR_NOERROR : SNMP_ERR_INCONSISTENTVALUE;
		if (p)
			p->removed = true; /* destroy; of a missing row: nothing to do */
		return SNMP_ERR_NOERROR;
	}
	if (!p)
		return SNMP_ERR_NOCREATION;
	switch (column) {
	case PC_NAME: {
		char name[PARTITION_NAME_MAX + 1];
		struct partition *other;

		if (vb->type != ASN_OCTET_STR)
			return SNMP_ERR_WRONGTYPE;
		if (vb->val_len < 1 || vb->val_len > PARTITION_NAME_MAX)
			return SNMP_ERR_WRONGLENGTH;
		if (!partition_name_valid((const char *)vb->val.string, vb->val_len))
			return SNMP_ERR_WRONGVALUE;
		memcpy(name, vb->val.string, vb->val_len);
		name[vb->val_len] = '\0';
		other = partition_find_name(&tx.pf, name);
		if (other && other != p)
			return SNMP_ERR_INCONSISTENTVALUE; /* the name of another partition */
		snprintf(p->name, sizeof(p->name), "%s", name);
		break;
	}
	case PC_IPOIB:
		if ((err = mib_set_int_value(vb, 1, 2, &v)))
			return err;
		p->ipoib = v == 1;
		break;
	case PC_MTU:
		if ((err = mib_set_int_value(vb, 0, 5, &v)))
			return err;
		p->mtu = v ? (int)v : -1;
		break;
	case PC_RATE:
		if ((err = mib_set_int_value(vb, 0, 255, &v)))
			return err;
		p->rate = v ? (int)v : -1;
		break;
	case PC_SL:
		if ((err = mib_set_int_value(vb, -1, 15, &v)))
			return err;
		p->sl = (int)v;
		break;
	case PC_SCOPE:
		if ((err = mib_set_int_value(vb, 0, 15, &v)))
			return err;
		p->scope = v ? (int)v : -1;
		break;
	case PC_DEFMEMBER:
		if ((err = mib_set_int_value(vb, 0, 3, &v)))
			return err;
		p->defmember = (enum member_type)v;
		break;
	default:
		return SNMP_ERR_NOTWRITABLE;
	}
	p->changed = true;
	return SNMP_ERR_NOERROR;
}

static int member_reserve(netsnmp_variable_list *vb, int pass)
{
	unsigned column, pkey;
	uint64_t guid;
	struct partition *p;
	struct partition_member *m;
	long v;
	int err;

	if (parse_index(member_table_oid, OID_LENGTH(member_table_oid), vb, &column, &pkey, &guid))
		return SNMP_ERR_NOCREATION; /* a malformed GUID or P_Key */
	if (column != MC_TYPE && column != MC_ROWSTATUS)
		return pass ? SNMP_ERR_NOTWRITABLE : SNMP_ERR_NOERROR;
	if ((column == MC_ROWSTATUS) != (pass == 0))
		return SNMP_ERR_NOERROR;
	p = partition_find_pkey(&tx.pf, pkey);
	m = p ? partition_find_member(p, guid) : NULL;
	if (column == MC_ROWSTATUS) {
		if ((err = mib_set_int_value(vb, 1, 6, &v)) || (err = row_status_check(v)))
			return err;
		if (v == RS_CREATEANDGO) {
			if (!p || m)
				return SNMP_ERR_INCONSISTENTVALUE; /* no such partition, or there */
			return partition_add_member(p, guid, MEMBER_UNSET)
				       ? SNMP_ERR_NOERROR : SNMP_ERR_RESOURCEUNAVAILABLE;
		}
		if (v == RS_ACTIVE)
			return m ? SNMP_ERR_NOERROR : SNMP_ERR_INCONSISTENTVALUE;
		if (m)
			partition_remove_member(p, guid);
		return SNMP_ERR_NOERROR;
	}
	if (!m)
		return SNMP_ERR_NOCREATION;
	if ((err = mib_set_int_value(vb, 1, 3, &v)))
		return err;
	m->type = (enum member_type)v;
	p->changed = true;
	return SNMP_ERR_NOERROR;
}

/* ibPartitionPolicy scalars: only ibPartitionUnconfiguredPorts is writable */
static int global_reserve(netsnmp_variable_list *vb, int pass)
{
	long v;
	int err;

	if (pass == 0)
		return SNMP_ERR_NOERROR;
	if (vb->name_length != OID_LENGTH(policy_oid) + 2 || vb->name[OID_LENGTH(policy_oid)] != 5)
		return SNMP_ERR_NOTWRITABLE;
	if ((err = mib_set_int_value(vb, 1, 2, &v)))
		return err;
	return partition_set_unconfigured_connected(&tx.pf, v == 2) ? SNMP_ERR_RESOURCEUNAVAILABLE
								     : SNMP_ERR_NOERROR;
}

/* RESERVE2: the transaction as a whole */
static int tx_check(void)
{
	struct partition_file check;
	char err[200], *text;
	size_t len;

	for (size_t i = 0; i < tx.pf.n_parts; i++)
		if (!tx.pf.parts[i].removed && !tx.pf.parts[i].name[0])
			return SNMP_ERR_INCONSISTENTVALUE; /* created without a name */
	text = partition_file_render(&tx.pf, &len);
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

typedef int (*reserve_fn)(netsnmp_variable_list *vb, int pass);

static int policy_set(netsnmp_agent_request_info *reqinfo, netsnmp_request_info *requests,
		      reserve_fn reserve)
{
	switch (reqinfo->mode) {
	case MODE_SET_RESERVE1:
		if (tx_begin(reqinfo)) {
			netsnmp_set_request_error(reqinfo, requests, SNMP_ERR_RESOURCEUNAVAILABLE);
			break;
		}
		for (int pass = 0; pass < 2; pass++)
			for (netsnmp_request_info *r = requests; r; r = r->next) {
				int err = reserve(r->requestvb, pass);

				if (err != SNMP_ERR_NOERROR) {
					netsnmp_set_request_error(reqinfo, r, err);
					return SNMP_ERR_NOERROR;
				}
			}
		break;
	case MODE_SET_RESERVE2:
		if (tx.open && tx.transid == mib_set_transid(reqinfo)) {
			int err = tx_check();

			if (err != SNMP_ERR_NOERROR)
				netsnmp_set_request_error(reqinfo, requests, err);
		}
		break;
	case MODE_SET_ACTION:
		if (tx.open && tx.transid == mib_set_transid(reqinfo) && !tx.written) {
			char err[300];

			if (pkey_policy_write(policy, &tx.pf, err, sizeof(err))) {
				snmp_log(LOG_ERR, "partition policy: %s\n", err);
				policy->last_result = APPLY_WRITE_FAILED;
				snprintf(policy->last_error, sizeof(policy->last_error), "%.250s", err);
				netsnmp_set_request_error(reqinfo, requests, SNMP_ERR_COMMITFAILED);
				break;
			}
			tx.written = true;
		}
		break;
	case MODE_SET_COMMIT:
		if (tx.open && tx.transid == mib_set_transid(reqinfo) && tx.written && !tx.told) {
			tx.told = true;
			pkey_policy_apply(policy);
		}
		break;
	case MODE_SET_UNDO:
		if (tx.open && tx.transid == mib_set_transid(reqinfo) && tx.written) {
			if (pkey_policy_restore(policy))
				netsnmp_set_request_error(reqinfo, requests, SNMP_ERR_UNDOFAILED);
			tx.written = false;
		}
		break;
	case MODE_SET_FREE:
		if (tx.open && tx.transid == mib_set_transid(reqinfo))
			tx_close();
		break;
	}
	return SNMP_ERR_NOERROR;
}

static int part_set(struct mib_table *t, netsnmp_mib_handler *handler,
		    netsnmp_handler_registration *reg, netsnmp_agent_request_info *reqinfo,
		    netsnmp_request_info *requests)
{
	(void)t;
	(void)handler;
	(void)reg;
	return policy_set(reqinfo, requests, part_reserve);
}

static int member_set(struct mib_table *t, netsnmp_mib_handler *handler,
		      netsnmp_handler_registration *reg, netsnmp_agent_request_info *reqinfo,
		      netsnmp_request_info *requests)
{
	(void)t;
	(void)handler;
	(void)reg;
	return policy_set(reqinfo, requests, member_reserve);
}

static struct mib_table part_table = {
	.name = "ibPartitionTable",
	.table_oid = part_table_oid,
	.table_oid_len = OID_LENGTH(part_table_oid),
	.first_column = PC_NAME,
	.last_column = PC_ROWSTATUS,
	.rows = part_rows,
	.value = part_value,
	.set = part_set,
};

static struct mib_table member_table = {
	.name = "ibPartitionMemberTable",
	.table_oid = member_table_oid,
	.table_oid_len = OID_LENGTH(member_table_oid),
	.first_column = MC_TYPE,
	.last_column = MC_DETAIL,
	.rows = member_rows_fn,
	.value = member_value,
	.set = member_set,
};

static const void *policy_snapshot(const void *ctx)
{
	return ctx;
}

static int global_set(netsnmp_agent_request_info *reqinfo, netsnmp_request_info *requests)
{
	return policy_set(reqinfo, requests, global_reserve);
}

static struct mib_scalars policy_scalars = {
	.name = "ibPartitionPolicy", .group_oid = policy_oid,
	.group_oid_len = OID_LENGTH(policy_oid), .first = 1, .last = 5,
	.snapshot = policy_snapshot, .value = policy_value, .set = global_set,
};

int pkey_mib_register(struct pkey_policy *pp)
{
	policy = pp;
	policy_scalars.ctx = pp;
	if (mib_table_register(&part_table) || mib_table_register(&member_table) ||
	    mib_scalars_register(&policy_scalars))
		return -1;
	register_sysORTable(partition_mib_oid, OID_LENGTH(partition_mib_oid),
			    "IBSNMPD-PARTITION-MIB: opensm's partition policy, served by ibsnmpd");
	return 0;
}

void pkey_mib_unregister(void)
{
	mib_table_unregister(&part_table);
	mib_table_unregister(&member_table);
	mib_scalars_unregister(&policy_scalars);
	unregister_sysORTable(partition_mib_oid, OID_LENGTH(partition_mib_oid));
	tx_close();
	free(rows.parts.rows);
	free(rows.members.rows);
	free(member_rows);
	memset(&rows, 0, sizeof(rows));
	member_rows = NULL;
}
