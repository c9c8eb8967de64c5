/* MIB glue shared by every area: scalar groups and tables served from cache
 * snapshots. A table snapshot is a sorted array of rows; GET and GETNEXT
 * find a row by binary search, so a GETNEXT costs the same at row 40,000 as
 * at row 1. Handlers never wait on the fabric. */
#ifndef IBSNMPD_MIB_TABLE_H
#define IBSNMPD_MIB_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ibsnmpd/netsnmp.h"

#define MIB_INDEX_MAX 10 /* 8 octets of a GUID, a port, one spare */

struct mib_row {
	oid index[MIB_INDEX_MAX];
	unsigned index_len;
	const void *data; /* the area's own row structure, inside the snapshot */
};

/* A table's rows, in index order, in one of two forms:
 * - rows: an array of struct mib_row, each with its index and data (small
 *   tables, whose data is not one sorted array);
 * - array: the snapshot's own array of row structures, `stride` bytes
 *   apart, already in index order, each one's index computed by index_of
 *   when asked. The per-port tables of a subnet of 250,000 ports take no
 *   memory beyond their snapshot this way (a struct mib_row is 96 bytes). */
struct mib_rows {
	size_t count;
	struct mib_row *rows; /* sorted by index (mib_rows_sort); or NULL: */
	const void *array;
	size_t stride;
	unsigned (*index_of)(const void *data, oid *index); /* returns its length */
};

/* Fills vb with column of row; returns 0, or -1 if the row has no value in
 * that column (GET: noSuchInstance; GETNEXT: skipped). */
typedef int (*mib_value_fn)(const void *row_data, unsigned column, netsnmp_variable_list *vb,
			    const void *snapshot);
/* The rows of the current snapshot of the table, or NULL (no rows). */
typedef const struct mib_rows *(*mib_rows_fn)(const void *ctx, const void **snapshot);

struct mib_set_table;

/* Called before a request is answered (a context's data read on demand:
 * its use is noted; the answer is never delayed). Over AgentX a GETNEXT
 * that began before the registration (a walk running on from an earlier
 * subtree) reaches it as one that began at its first OID: snmpd rewrites
 * the start, so it counts too. */
struct mib_asked {
	void (*fn)(void *arg);
	void *arg;
};

struct mib_table {
	const char *name;
	const oid *table_oid; /* the table; the entry is table.1, columns table.1.N */
	size_t table_oid_len;
	unsigned first_column, last_column;
	mib_rows_fn rows;
	mib_value_fn value;
	const struct mib_set_table *set; /* writable columns (mib_set.h); NULL: read-only */
	const void *ctx;
	const char *context;  /* SNMP context; NULL: the default one */
	struct mib_asked asked;
	netsnmp_handler_registration *reg;
};

int mib_table_register(struct mib_table *t);
/* The data of the row a table OID names (table.1.column.index), or NULL;
 * *column set. */
const void *mib_table_find_row(const struct mib_table *t, const struct mib_rows *rows,
					 const oid *name, size_t name_len, unsigned *column);
void mib_table_unregister(struct mib_table *t);

/* Scalars ID.1 .. ID.last, all answered from one snapshot (NULL: none). */
typedef int (*mib_scalar_fn)(unsigned column, netsnmp_variable_list *vb, const void *snapshot);
typedef const void *(*mib_snapshot_fn)(const void *ctx);

#define MIB_SCALARS_MAX 16

struct mib_scalars {
	const char *name;
	const oid *group_oid;
	size_t group_oid_len;
	unsigned first, last;
	mib_snapshot_fn snapshot;
	mib_scalar_fn value;
	const struct mib_set_table *set; /* writable scalars (mib_set.h); NULL: read-only */
	const void *ctx;
	const char *context;  /* SNMP context; NULL: the default one */
	struct mib_asked asked;
	/* A group with a table inside it (ibsnmpdStats holds ibsnmpdCacheTable)
	 * is registered scalar by scalar: registered whole, net-snmp splits it
	 * around the table and, attaching again to a restarted master, registers
	 * the group's OID once per piece, which the master refuses
	 * (duplicateRegistration, logged). */
	bool one_by_one;
	netsnmp_handler_registration *reg;
	netsnmp_handler_registration *regs[MIB_SCALARS_MAX]; /* one_by_one */
};

int mib_scalars_register(struct mib_scalars *s);
void mib_scalars_unregister(struct mib_scalars *s);

/* Tables and scalar groups served under one registration: a node context's
 * whole mib-2 or SMA-MIB is one AgentX registration, not one per table or
 * group. Members (shared by every context that serves them: their own ctx,
 * context, asked and reg are not used) are in OID order; each reads the
 * ctx member_ctx gives it (NULL: no instances now; no member_ctx: the
 * subtree's ctx). Read-only. */
struct mib_member {
	const struct mib_table *table; /* one of the two */
	const struct mib_scalars *scalars;
};

struct mib_subtree {
	const char *name;
	const oid *root;
	size_t root_len;
	const struct mib_member *members;
	size_t n_members;
	const void *(*member_ctx)(const void *ctx, const struct mib_member *m);
	const void *ctx;
	const char *context;  /* SNMP context; NULL: the default one */
	struct mib_asked asked;
	netsnmp_handler_registration *reg;
};

int mib_subtree_register(struct mib_subtree *s);
void mib_subtree_unregister(struct mib_subtree *s);

/* Several subtrees served through one registration of a root that holds
 * them all, in OID order: a node context's mib-2, SMA-MIB and
 * ibsnmpdPortExtTable as one registration of internet (1.3.6.1), where
 * nothing else answers in that context. Each registration costs net-snmp
 * about 2 KiB (its subtree, and the copy of the context's root it splits)
 * and snmpd an AgentX entry, per context. The parts keep their members, ctx
 * and asked (called when a request reaches that part); their own context
 * and reg are not used. */
#define MIB_JOINED_MAX 4
struct mib_joined {
	const char *name;
	const oid *root;
	size_t root_len;
	const struct mib_subtree *parts[MIB_JOINED_MAX];
	size_t n_parts;
	const char *context;  /* SNMP context; NULL: the default one */
	netsnmp_handler_registration *reg;
};

int mib_joined_register(struct mib_joined *j);
void mib_joined_unregister(struct mib_joined *j);

/* Row helpers for snapshot builders. */
void mib_rows_sort(struct mib_rows *r);
/* Index of the first row whose index is > (strict) or >= key; count if none. */
size_t mib_rows_search(const struct mib_rows *r, const oid *key, size_t key_len, int strict);
int mib_index_compare(const oid *a, size_t alen, const oid *b, size_t blen);

/* The transaction a SET mode belongs to: over AgentX every mode comes in a
 * PDU of its own, carrying the transaction's ID. */
long mib_set_transid(const netsnmp_agent_request_info *reqinfo);

/* A GUID as an index: its 8 octets, one arc each (fixed size, no length). */
#define MIB_GUID_INDEX_LEN 8
void mib_index_put_guid(oid *index, uint64_t guid);
/* The index (node GUID, port) of a per-port table; returns its length. */
unsigned mib_index_guid_port(oid *index, uint64_t guid, unsigned port);
/* -1 if an arc is not an octet. */
int mib_index_get_guid(const oid *index, uint64_t *guid);

/* The SNMP context a node of the subnet is served in as a device: "ib-"
 * and its node GUID in 16 lower-case hex digits. */
#define MIB_NODE_CONTEXT_PREFIX "ib-"
#define MIB_NODE_CONTEXT_MAX 24 /* the prefix, 16 hex digits, NUL; rounded */
/* A node's context name: "ib-" and its node GUID; but, where fabricName
 * names the fabric, a CA's is its port's GUID on this fabric (the resolver's
 * answer): a dual-port adapter cabled to two fabrics is seen by two
 * instances under one snmpd, each serving it in a context of its own. */
void mib_node_context(uint64_t guid, unsigned node_type, char *out, size_t len);
/* The port GUID by which this instance's fabric sees a CA (the topology
 * area's: the lowest of its ports found); 0: not known, the node GUID. */
void mib_set_ca_port_guid_resolver(uint64_t (*port_guid_of)(uint64_t node_guid, void *arg),
				   void *arg);
/* Whether nodes of that type (1 CA, 2 switch, 3 router) get a context
 * (nodeContextTypes); if so, out is the context of guid. */
bool mib_node_context_name(uint64_t guid, unsigned node_type, char *out, size_t len);

/* A notification's varbind list, begun with snmpTrapOID.0 = trap; the
 * caller adds the NOTIFICATION-TYPE's objects, sends it (send_v2trap) and
 * frees it (snmp_free_varbind). NULL on out of memory. */
netsnmp_variable_list *mib_notification_new(const oid *trap, size_t trap_len);
/* Adds table.1.column.index with the value value(row, column) fills in
 * (as the table's handler serves it); nothing if the row has none there. */
void mib_notification_add_column(netsnmp_variable_list **vl, const oid *table, size_t table_len,
				 unsigned column, const oid *index, size_t index_len,
				 int (*value)(const void *row, unsigned column,
					      netsnmp_variable_list *vb),
				 const void *row);
/* Adds ibsnmpdNodeContext of a node: the context an NMS that added the node
 * as a device knows it by (nothing if its type gets no context). */
void mib_notification_add_node_context(netsnmp_variable_list **vl, uint64_t guid,
				       unsigned node_type);

/* Value setters. */
void mib_set_int(netsnmp_variable_list *vb, long v);
void mib_set_unsigned(netsnmp_variable_list *vb, u_char type, unsigned long v);
void mib_set_octets(netsnmp_variable_list *vb, const void *p, size_t n);
/* The n low octets of v, most significant first (octets.h). */
void mib_set_be_octets(netsnmp_variable_list *vb, uint64_t v, size_t n);
static inline long mib_truth(int b) { return b ? 1 : 2; } /* TruthValue */

#endif
