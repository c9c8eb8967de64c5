/* What each kind of alarm is (alarm.h): the notification that raises it,
 * its X.733 severity and event type, and whether its own area sends the
 * notification that clears it. Severities: what stops traffic or may soon
 * (a link down, a node silent, heat, a fan, a faulted module, a partition
 * not in force) is major; what degrades it (a narrower or slower link, a
 * bit error rate, flapping, weak light, a DCBX disagreement) is minor.
 * Nothing is critical: ibsnmpd sees one part of a fabric of many, the NMS
 * raises what several alarms together mean. */
#include "ibsnmpd/alarm.h"

static const struct alarm_kind_info kinds[ALARM_KINDS] = {
	[ALARM_LINK_DOWN] = {"ibsnmpdLinkDown", SEV_MAJOR, TYPE_COMMUNICATIONS, true},
	[ALARM_LINK_DEGRADED] = {"ibsnmpdLinkDegraded", SEV_MINOR, TYPE_COMMUNICATIONS, true},
	[ALARM_LINK_BER_HIGH] = {"ibsnmpdLinkBerHigh", SEV_MINOR, TYPE_QUALITY_OF_SERVICE, true},
	[ALARM_LINK_FLAPPING] = {"ibsnmpdLinkFlapping", SEV_MINOR, TYPE_COMMUNICATIONS, false},
	[ALARM_NODE_UNREACHABLE] = {"ibsnmpdNodeUnreachable", SEV_MAJOR, TYPE_COMMUNICATIONS,
				    false},
	[ALARM_PARTITION_NOT_VERIFIED] = {"ibPartitionNotVerified", SEV_MAJOR,
					  TYPE_PROCESSING_ERROR, false},
	[ALARM_DCBX_FEATURE_ERROR] = {"lldpXdcbxMiscFeatureError", SEV_MINOR, TYPE_COMMUNICATIONS,
				      false},
	[ALARM_DCBX_MISMATCH] = {"lldpXdcbxPeerConfigMismatch", SEV_MINOR, TYPE_COMMUNICATIONS,
				 false},
	[ALARM_TEMPERATURE_HIGH] = {"ibsnmpdTemperatureHigh", SEV_MAJOR, TYPE_ENVIRONMENTAL, true},
	[ALARM_FAN_FAILED] = {"ibsnmpdFanFailed", SEV_MAJOR, TYPE_EQUIPMENT, true},
	[ALARM_MODULE_FAULTED] = {"ibsnmpdModuleFaulted", SEV_MAJOR, TYPE_EQUIPMENT, false},
	[ALARM_RX_POWER_LOW] = {"ibsnmpdModuleRxPowerLow", SEV_MINOR, TYPE_COMMUNICATIONS, true},
	/* routes that go nowhere stop traffic; the others slow it or may */
	[ALARM_ROUTE_CHECK_FAILED] = {"ibsnmpdRouteCheckFailed", SEV_MAJOR, TYPE_PROCESSING_ERROR,
				      true},
	[ALARM_ROUTE_UNREACHABLE] = {"ibsnmpdRouteCheckFailed", SEV_MAJOR, TYPE_COMMUNICATIONS,
				     false},
};

const struct alarm_kind_info *alarm_kind_info(unsigned kind)
{
	return kind > 0 && kind < ALARM_KINDS ? &kinds[kind] : 0;
}
