/* IBSNMPD-MIB's routing notifications: after a run is published, for each
 * check that fails now and did not in the run before (or is the first run
 * since the start), ibsnmpdRouteCheckFailed with its first offender's
 * words; for each that failed and passes now, ibsnmpdRouteCheckPassed;
 * when another SM is master than the one seen before it,
 * ibsnmpdMasterSmChanged. Through the one notification path (its limit:
 * per check, per new master's LID). */
#include <string.h>

#include "ibsnmpd/mib_oids.h"
#include "ibsnmpd/notify.h"

#include "route_internal.h"

static void add_check_column(netsnmp_variable_list **vl, const struct route_snapshot *s,
			     unsigned check, unsigned column)
{
	static const oid table[] = {OID_IBSNMPD_ROUTE_CHECK_TABLE};
	oid name[MAX_OID_LEN];
	size_t n = OID_LENGTH(table);
	netsnmp_variable_list *vb;

	memcpy(name, table, sizeof(table));
	name[n++] = 1;
	name[n++] = column;
	name[n++] = check;
	vb = snmp_varlist_add_variable(vl, name, n, ASN_NULL, NULL, 0);
	if (vb && route_mib_check_column(s, check, column, vb))
		snmp_set_var_typed_value(vb, ASN_NULL, NULL, 0);
}

/* The check's first offender (they come by check, then by number). */
static const struct route_offender *first_offender(const struct route_snapshot *s,
						   unsigned check)
{
	for (size_t i = 0; i < s->n_offenders; i++)
		if (s->offenders[i].check == check)
			return &s->offenders[i];
	return NULL;
}

static void send_check(const struct route_snapshot *s, unsigned check, bool failed)
{
	static const oid failed_oid[] = {OID_IBSNMPD_ROUTE_CHECK_FAILED};
	static const oid passed_oid[] = {OID_IBSNMPD_ROUTE_CHECK_PASSED};
	netsnmp_variable_list *vl = failed ? mib_notification_new(failed_oid, OID_LENGTH(failed_oid))
					   : mib_notification_new(passed_oid, OID_LENGTH(passed_oid));
	const struct route_offender *o;

	if (!vl)
		return;
	add_check_column(&vl, s, check, COLUMN_IBSNMPD_ROUTE_CHECK_NAME);
	add_check_column(&vl, s, check, COLUMN_IBSNMPD_ROUTE_CHECK_STATUS);
	add_check_column(&vl, s, check, COLUMN_IBSNMPD_ROUTE_CHECK_OFFENDERS);
	if (failed && (o = first_offender(s, check))) {
		static const oid table[] = {OID_IBSNMPD_ROUTE_OFFENDER_TABLE};
		oid name[MAX_OID_LEN];
		size_t n = OID_LENGTH(table);

		memcpy(name, table, sizeof(table));
		name[n++] = 1;
		name[n++] = COLUMN_IBSNMPD_ROUTE_OFFENDER_DESCRIPTION;
		name[n++] = check;
		name[n++] = o->n;
		snmp_varlist_add_variable(&vl, name, n, ASN_OCTET_STR, o->desc, strlen(o->desc));
	}
	notify_send(NOTIFY_ROUTING, failed ? 19 : 20, check, vl);
}

/* The new master (s->master) and the one before. */
static void send_master_changed(const struct route_snapshot *s)
{
	static const oid changed_oid[] = {OID_IBSNMPD_MASTER_SM_CHANGED};
	static const oid table[] = {OID_IBSNMPD_ROUTE_SM_TABLE};
	static const oid previous[] = {OID_IBSNMPD_ROUTE_PREVIOUS_MASTER_SM, 0};
	static const unsigned columns[] = {COLUMN_IBSNMPD_ROUTE_SM_NAME, COLUMN_IBSNMPD_ROUTE_SM_LID,
					   COLUMN_IBSNMPD_ROUTE_SM_PRIORITY};
	const struct route_sm *m = NULL;
	netsnmp_variable_list *vl;
	uint8_t prev[8];

	for (size_t i = 0; i < s->n_sms && !m; i++)
		if (s->sms[i].guid == s->master)
			m = &s->sms[i];
	if (!m || !(vl = mib_notification_new(changed_oid, OID_LENGTH(changed_oid))))
		return;
	for (size_t c = 0; c < sizeof(columns) / sizeof(columns[0]); c++) {
		oid name[MAX_OID_LEN];
		size_t n = OID_LENGTH(table);
		netsnmp_variable_list *vb;

		memcpy(name, table, sizeof(table));
		name[n++] = 1;
		name[n++] = columns[c];
		mib_index_put_guid(name + n, m->guid);
		n += MIB_GUID_INDEX_LEN;
		vb = snmp_varlist_add_variable(&vl, name, n, ASN_NULL, NULL, 0);
		if (vb && route_mib_sm_column(m, columns[c], vb))
			snmp_set_var_typed_value(vb, ASN_NULL, NULL, 0);
	}
	for (int i = 0; i < 8; i++)
		prev[i] = (uint8_t)(s->previous_master >> (56 - 8 * i));
	snmp_varlist_add_variable(&vl, previous, OID_LENGTH(previous), ASN_OCTET_STR, prev, 8);
	snmp_log(LOG_NOTICE, "master SM is now %s (LID %u), was 0x%016llx\n", m->name, m->lid,
		 (unsigned long long)s->previous_master);
	notify_send(NOTIFY_ROUTING, 21, m->lid, vl);
}

void route_notify_published(struct cache_group *g, const void *before, const void *after,
			    void *arg)
{
	const struct route_snapshot *b = before, *s = after;

	(void)g;
	(void)arg;
	if (!s || s == b)
		return;
	for (unsigned k = 1; k <= ROUTE_CHECKS; k++) {
		bool now = s->checks[k].status == ROUTE_STATUS_FAILED;
		bool was = b && b->checks[k].status == ROUTE_STATUS_FAILED;

		if (now && !was)
			send_check(s, k, true);
		else if (was && s->checks[k].status == ROUTE_STATUS_PASSED)
			send_check(s, k, false);
	}
	/* previous_master moves exactly when another SM became master */
	if (b && s->master && s->previous_master && s->previous_master != b->previous_master)
		send_master_changed(s);
}
