/* The one SET transaction engine, for every writable table and scalar group
 * (the PM node tables, the partition policy, DCBX), in net-snmp's ifTable
 * style: columns declare their checks and stage their value on the area's
 * transaction; the area checks the whole and applies it once.
 *
 * A domain is what one transaction spans (e.g. the partition policy: its two
 * tables and its scalars). For a SET PDU, net-snmp calls each registration
 * once per mode, in this order:
 *
 *   RESERVE1  per varbind: the row (or, for a creatable table, just its
 *             index), the column's declared check (type, range, length:
 *             wrongType, wrongValue, wrongLength) and its stage hook, which
 *             puts the value on the transaction (or refuses: inconsistentValue,
 *             noCreation ...). RowStatus columns are staged first, so that a
 *             row created in the PDU exists for the other columns.
 *   RESERVE2  once: the area's check of everything staged
 *   ACTION    once: the area applies what is staged, now or later (while its
 *             MADs or netlink messages are under way the varbinds are
 *             delegated: other requests are served meanwhile)
 *   COMMIT    once, when every ACTION of the PDU worked; the end
 *   UNDO      once, when one failed (ours or another registration's); the end
 *   FREE      a RESERVE failed: the end
 *
 * Over AgentX every mode comes in a PDU of its own; the transaction ID ties
 * them together. One transaction per domain at a time: snmpd does not start
 * a SET before the previous one is over. */
#ifndef IBSNMPD_MIB_SET_H
#define IBSNMPD_MIB_SET_H

#include <stdbool.h>
#include <stddef.h>

#include "ibsnmpd/netsnmp.h"

enum mib_value_kind {
	MIB_VALUE_INT,    /* INTEGER in min..max */
	MIB_VALUE_TRUTH,  /* TruthValue: value is true(1) or false(2) */
	MIB_VALUE_OCTETS, /* OCTET STRING of min..max octets */
};

/* One varbind of a SET, checked against its column's declaration. */
struct mib_set_request {
	const void *row;           /* the data of the row served now; NULL if none */
	unsigned column;
	const oid *index;          /* the instance's index (after the column) */
	size_t index_len;
	const netsnmp_variable_list *vb;
	long value;                /* INT and TRUTH: the value */
};

struct mib_column_set {
	unsigned column;
	enum mib_value_kind kind;
	long min, max; /* INT: the value's range; OCTETS: the length's */
	/* Stages the checked value on tx: SNMP_ERR_NOERROR, or the varbind's
	 * error (nothing is applied before ACTION). */
	int (*stage)(void *tx, const struct mib_set_request *req);
};

/* An ACTION that goes on after the call: the area ends it with
 * mib_set_action_done(). */
#define MIB_SET_PENDING (-1)

struct mib_set_domain {
	const char *name;
	void *area; /* handed to begin() */
	/* A new transaction's state; NULL: resourceUnavailable. */
	void *(*begin)(void *area);
	/* RESERVE2: everything staged, as a whole; NULL: nothing to check. */
	int (*consistent)(void *tx);
	/* ACTION: SNMP_ERR_NOERROR, an error, or MIB_SET_PENDING (then the area
	 * calls mib_set_action_done(domain, token, error) when it is over). */
	int (*action)(void *tx, unsigned token);
	void (*commit)(void *tx);  /* NULL: nothing to do */
	int (*undo)(void *tx);     /* NULL: what ACTION did cannot be taken back */
	void (*end)(void *tx);     /* FREE (or a transaction that was never freed) */
	struct mib_set_state *state; /* the engine's; NULL until the first SET */
};

/* What a writable table or scalar group declares. */
struct mib_set_table {
	struct mib_set_domain *domain;
	const struct mib_column_set *columns;
	size_t n_columns;
	bool creatable;             /* RowStatus rows: the stage hooks get row NULL */
	unsigned row_status_column; /* staged first; 0: none */
};

/* An ACTION that returned MIB_SET_PENDING is over (error: an SNMP error,
 * SNMP_ERR_NOERROR if it worked). A stale token (the transaction ended
 * since) is ignored. */
void mib_set_action_done(struct mib_set_domain *d, unsigned token, int error);
/* The transaction state of token, or NULL if that transaction has ended
 * (for an area's completion that wants to note something on it). */
void *mib_set_tx(struct mib_set_domain *d, unsigned token);
/* Frees the engine's state of d (at shutdown). */
void mib_set_domain_free(struct mib_set_domain *d);

/* The engine's entry points (mib_table.c calls them for SET modes). */
struct mib_table;
struct mib_scalars;
int mib_set_run_table(const struct mib_table *t, netsnmp_mib_handler *handler,
		      netsnmp_handler_registration *reg, netsnmp_agent_request_info *reqinfo,
		      netsnmp_request_info *requests);
int mib_set_run_scalars(const struct mib_scalars *s, netsnmp_mib_handler *handler,
			netsnmp_handler_registration *reg,
			netsnmp_agent_request_info *reqinfo, netsnmp_request_info *requests);

#endif
