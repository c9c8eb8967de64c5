/* IBSNMPD-MIB::ibsnmpdTraps: the traps taken in and the notifications they
 * became (the notification path's counters of IB traps). */
#include "ibsnmpd/mib_oids.h"
#include "ibsnmpd/notify.h"

#include "trap_internal.h"

static const oid traps_oid[] = {OID_IBSNMPD_TRAPS};

static int traps_value(unsigned column, netsnmp_variable_list *vb, const void *snap)
{
	struct trap_stats st;
	struct notify_stats ns;

	trap_get_stats(snap, &st);
	notify_get_stats(NOTIFY_IB_TRAP, &ns); /* SMA-MIB's notifications */
	switch (column) {
	case SCALAR_IBSNMPD_TRAPS_RECEIVED: mib_set_unsigned(vb, ASN_COUNTER, st.received); return 0;
	case SCALAR_IBSNMPD_NOTIFICATIONS_SENT: mib_set_unsigned(vb, ASN_COUNTER, ns.sent); return 0;
	case SCALAR_IBSNMPD_NOTIFICATIONS_SUPPRESSED:
		mib_set_unsigned(vb, ASN_COUNTER, ns.suppressed);
		return 0;
	case SCALAR_IBSNMPD_REPORTS_REPEATED: mib_set_unsigned(vb, ASN_COUNTER, st.repeated); return 0;
	case SCALAR_IBSNMPD_REPORTS_MALFORMED: mib_set_unsigned(vb, ASN_COUNTER, st.malformed); return 0;
	case SCALAR_IBSNMPD_TRAP_SUBSCRIPTIONS: mib_set_unsigned(vb, ASN_GAUGE, st.subscriptions); return 0;
	default: return -1;
	}
}

static const void *area_snapshot(const void *ctx)
{
	return ctx; /* the counters: always there */
}

int trap_mib_register(struct trap_area *t)
{
	t->scalars = (struct mib_scalars){
		.name = "ibsnmpdTraps", .group_oid = traps_oid, .group_oid_len = OID_LENGTH(traps_oid),
		.first = SCALAR_IBSNMPD_TRAPS_RECEIVED, .last = SCALAR_IBSNMPD_TRAP_SUBSCRIPTIONS,
		.snapshot = area_snapshot, .value = traps_value, .ctx = t,
	};
	return mib_scalars_register(&t->scalars);
}

void trap_mib_unregister(struct trap_area *t)
{
	mib_scalars_unregister(&t->scalars);
}
