/* The notification path (notify.h): one limiter for every family, so that
 * notificationLimit means the same for an IB trap and a DCBX event. */
#include <stdio.h>

#include "ibsnmpd/config.h"
#include "ibsnmpd/notify.h"

#include "notify_limit.h"

/* How the log names a notification and its source. */
static const struct {
	const char *name, *source;
} family_label[NOTIFY_FAMILIES] = {
	[NOTIFY_IB_TRAP] = {"trap", "from LID"},
	[NOTIFY_DCBX] = {"DCBX notification", "for ifIndex"},
	[NOTIFY_PARTITION] = {"partition notification", "source"},
	[NOTIFY_LINK] = {"link notification", "for LID"},
	[NOTIFY_VITALS] = {"vitals notification", "for LID"},
	[NOTIFY_ENTITY] = {"entity notification", "for LID"},
};

static struct notify_limiter limiter;
static unsigned expire_alarm;
static struct notify_stats stats[NOTIFY_FAMILIES];

/* The limiter's key: the family in the high bits, the number below. */
static unsigned kind_of(enum notify_family family, unsigned number)
{
	return (unsigned)family << 16 | (number & 0xffff);
}

static void log_burst_end(unsigned kind, unsigned source, unsigned suppressed)
{
	unsigned family = kind >> 16;

	if (family >= NOTIFY_FAMILIES)
		return;
	snmp_log(LOG_NOTICE, "%s %u %s %u: %u notification%s suppressed in the last %u s "
		 "(limit %u)\n", family_label[family].name, kind & 0xffff,
		 family_label[family].source, source, suppressed, suppressed == 1 ? "" : "s",
		 limiter.window_s, limiter.max_per_window);
}

static void on_expire(unsigned reg, void *arg)
{
	(void)reg;
	(void)arg;
	notify_limit_expire(&limiter, time(NULL), log_burst_end);
}

void notify_apply_config(void)
{
	if (limiter.max_per_window == ibsnmpd_cfg.notify_limit_count &&
	    limiter.window_s == ibsnmpd_cfg.notify_limit_window_s && expire_alarm)
		return;
	notify_limit_free(&limiter);
	limiter.max_per_window = ibsnmpd_cfg.notify_limit_count;
	limiter.window_s = ibsnmpd_cfg.notify_limit_window_s;
	if (expire_alarm)
		snmp_alarm_unregister(expire_alarm);
	expire_alarm = snmp_alarm_register(limiter.window_s, SA_REPEAT, on_expire, NULL);
}

void notify_stop(void)
{
	if (expire_alarm)
		snmp_alarm_unregister(expire_alarm);
	expire_alarm = 0;
	notify_limit_free(&limiter);
	limiter.max_per_window = limiter.window_s = 0;
}

void notify_get_stats(enum notify_family family, struct notify_stats *st)
{
	*st = stats[family];
}

bool notify_send(enum notify_family family, unsigned number, unsigned source,
		 netsnmp_variable_list *vl)
{
	return notify_send_context(family, number, source, vl, NULL);
}

bool notify_send_context(enum notify_family family, unsigned number, unsigned source,
			 netsnmp_variable_list *vl, const char *context)
{
	unsigned ended = 0;

	if (!vl)
		return false; /* out of memory while it was built */
	switch (notify_limit_check(&limiter, kind_of(family, number), source, time(NULL),
				   &ended)) {
	case NOTIFY_SUPPRESS_FIRST:
		snmp_log(LOG_WARNING, "%s %u %s %u: more than %u in %u s, suppressing "
			 "notifications until the window ends\n", family_label[family].name, number,
			 family_label[family].source, source, limiter.max_per_window,
			 limiter.window_s);
		/* fall through */
	case NOTIFY_SUPPRESS:
		stats[family].suppressed++;
		snmp_free_varbind(vl);
		return false;
	case NOTIFY_SEND:
		break;
	}
	if (ended)
		log_burst_end(kind_of(family, number), source, ended);
	DEBUGMSGTL(("ibsnmpd:notify", "%s %u %s %u sent\n", family_label[family].name, number,
		    family_label[family].source, source));
	if (context)
		send_trap_vars_with_context(-1, -1, vl, context); /* -1, -1: an SNMPv2 trap */
	else
		send_v2trap(vl);
	snmp_free_varbind(vl);
	stats[family].sent++;
	return true;
}
