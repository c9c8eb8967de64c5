/* IBSNMPD-PARTITION-MIB's notification: after a verification is published
 * that gave up on the last apply (not every member port holds its P_Key
 * after the checks), ibPartitionNotVerified with the apply's result and
 * error, through the notification path. */
#include <string.h>

#include "ibsnmpd/mib_oids.h"
#include "ibsnmpd/notify.h"

#include "pkey_policy.h"

void pkey_notify_published(struct cache_group *g, const void *before, const void *after,
			   void *arg)
{
	static const oid notification[] = {OID_IB_PARTITION_NOT_VERIFIED};
	static const oid result_oid[] = {OID_IB_PARTITION_LAST_APPLY_RESULT, 0};
	static const oid error_oid[] = {OID_IB_PARTITION_LAST_ERROR, 0};
	const struct pkey_status_snapshot *s = after;
	netsnmp_variable_list *vl;
	long result;

	(void)g;
	(void)before;
	(void)arg;
	if (!s || !s->gave_up)
		return;
	if (!(vl = mib_notification_new(notification, OID_LENGTH(notification))))
		return;
	result = s->apply_result;
	snmp_varlist_add_variable(&vl, result_oid, OID_LENGTH(result_oid), ASN_INTEGER, &result,
				  sizeof(result));
	snmp_varlist_add_variable(&vl, error_oid, OID_LENGTH(error_oid), ASN_OCTET_STR,
				  s->apply_error, strlen(s->apply_error));
	notify_send(NOTIFY_PARTITION, 1, 0, vl);
}
