/* The Prometheus text of one scrape (prom.h), a block at a time. Pure: it
 * reads the snapshots and counters it was given, and nothing else.
 *
 * Families follow Prometheus' conventions: counters end in _total, units
 * are base units (bytes, seconds, bits per second, ratios), one family per
 * quantity with a label for its kinds. Every port series has the labels
 * node_guid, node (its NodeDescription) and port; what else is known of a
 * port and a node (type, LID, the other end of the cable, vendor) is on
 * infiniband_port_info and infiniband_node_info, to be joined on node_guid
 * and port. A stale port keeps its last values, with infiniband_port_stale
 * 1: a series that vanished would break rate() and hide what the operator
 * alerts on. Values that a port does not have (FEC counters below FDR, a
 * bit error rate before two readings, a row never read) are left out, not
 * served as 0.
 *
 * Text is formatted by hand (no printf): a scrape of a 40,000-host fabric
 * is millions of lines. */
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/node_names.h"
#include "ibsnmpd/prom.h"

/* ---- the families ---------------------------------------------------------------- */

enum metric_type { COUNTER, GAUGE, INFO };

/* What a family's rows are. */
enum family_rows {
	ROWS_AGENT,  /* one row, no labels */
	ROWS_CACHES, /* label group */
	ROWS_NOTIFY, /* label family */
	ROWS_HTTP_REFUSED, /* label reason */
	ROWS_NODES,  /* the discovery's nodes: node_guid, node */
	ROWS_PORTS,  /* the merged ports: node_guid, node, port */
	/* the vitals: node_guid, node and each row's own */
	ROWS_VITALS_NODES,
	ROWS_TEMPS,  /* sensor, name */
	ROWS_FANS,   /* fan */
	ROWS_MODULES, /* module */
	ROWS_LANES,  /* port, lane, module */
	ROWS_ALARMS, /* the active alarms: index, notification, severity, ... */
	ROWS_ROUTING, /* the routing checks' run: one row, no labels */
	ROWS_ROUTE_CHECKS, /* label check */
	ROWS_ROUTE_LOADS,  /* the switch ports: node_guid, node, port, direction */
	ROWS_ROUTE_HOPS,   /* label hops */
	ROWS_ROUTE_SMS,    /* the SMs: guid, node, lid */
};

enum metric {
	/* the agent */
	M_BUILD_INFO,
	M_MADS_SENT,
	M_MADS_ANSWERED,
	M_MADS_TIMED_OUT,
	M_MADS_DROPPED,
	M_MADS_IN_FLIGHT,
	M_MADS_QUEUED,
	M_TRAPS_RECEIVED,
	M_LOOP_LONGEST_PASS,
	M_LOOP_LONGEST_WORK,
	M_LOOP_LONGEST_SLEEP,
	M_LOOP_STALLS,
	M_WRITES_REFUSED,
	M_NOTIFICATIONS_QUEUED,
	M_NOTIFICATIONS_IN_FLIGHT,
	M_NOTIFICATIONS_DROPPED,
	M_NOTIFICATIONS_SENT,
	M_NOTIFICATIONS_SUPPRESSED,
	M_HTTP_REQUESTS,
	M_HTTP_CONNECTIONS,
	M_HTTP_REFUSED,
	M_CACHE_AGE,
	M_CACHE_LIFETIME,
	M_CACHE_REFRESHES,
	M_CACHE_DURATION,
	M_CACHE_FAILING,
	/* the nodes */
	M_NODE_INFO,
	M_NODE_ANSWER_TIME,
	M_NODE_MAD_TIMEOUT,
	/* the ports: counters (ibsnmpdPmPortTable, ibsnmpdPmErrorDetailTable,
	 * ibsnmpdPmFecTable) */
	M_XMIT_BYTES,
	M_RCV_BYTES,
	M_XMIT_PKTS,
	M_RCV_PKTS,
	M_XMIT_UCAST,
	M_RCV_UCAST,
	M_XMIT_MCAST,
	M_RCV_MCAST,
	M_ERRORS,
	M_LINK_DOWNED,
	M_LINK_ERROR_RECOVERY,
	M_XMIT_WAIT,
	M_RCV_ERROR_DETAILS,
	M_XMIT_DISCARD_DETAILS,
	M_FEC_CORRECTED_SYMBOLS,
	M_FEC_CORRECTABLE_BLOCKS,
	M_FEC_UNCORRECTABLE_BLOCKS,
	M_PHY_ERRORS_DETECTED,
	M_PHY_SYNC_HEADER_ERRORS,
	M_PHY_UNKNOWN_BLOCKS,
	/* the ports: links (ibsnmpdFabricPortTable) */
	M_LINK_STATE,
	M_PHYS_STATE,
	M_WIDTH,
	M_SPEED,
	M_DEGRADED,
	M_BASELINE,
	M_FLAPPING,
	M_BER,
	M_BER_HIGH,
	M_XMIT_WAIT_RATIO,
	M_STALE,
	M_PORT_INFO,
	/* the hardware (ibsnmpdVitals) */
	M_VITALS_INFO,
	M_SWITCH_HARDWARE_INFO,
	M_SWITCH_TEMPERATURE,
	M_SWITCH_UPTIME,
	M_NODE_TEMPERATURE,
	M_NODE_TEMPERATURE_THRESHOLD,
	M_NODE_TEMPERATURE_HIGH,
	M_FAN_RPM,
	M_FAN_FAILED,
	M_MODULE_INFO,
	M_MODULE_PRESENT,
	M_MODULE_FAULT,
	M_MODULE_TEMPERATURE,
	M_MODULE_TEMPERATURE_HIGH_ALARM,
	M_MODULE_VOLTAGE,
	M_MODULE_RX_POWER_LOW_ALARM,
	M_LANE_RX_POWER,
	M_LANE_TX_POWER,
	M_LANE_TX_BIAS,
	M_LANE_RX_POWER_LOW,
	/* the active alarms (ibsnmpdAlarmTable) */
	M_ALARM_ACTIVE,
	/* the routing checks (ibsnmpdRouting) */
	M_ROUTE_READ_TIME,
	M_ROUTE_READ_DURATION,
	M_ROUTE_CHECK_DURATION,
	M_ROUTE_SWITCHES_UNREAD,
	M_ROUTE_CA_PAIRS_UNREACHED,
	M_ROUTE_CHECK_FAILED,
	M_ROUTE_CHECK_OFFENDERS,
	M_ROUTE_PORT_LIDS,
	M_ROUTE_PORT_PATHS,
	M_ROUTE_HOP_PAIRS,
	M_SM_STATE,
	M_SM_PRIORITY,
	M_SM_ACT_COUNT,
	M_SM_ACT_STILL,
};

struct family {
	enum metric id;
	const char *name; /* without _total (counters) or _info (info) */
	enum metric_type type;
	enum family_rows rows;
	const char *help;
	const char *const *variants; /* a label of each variant; NULL: one, none */
	unsigned n_variants;
	bool switches_only;          /* the rows of switches only (the exporters' names) */
};

/* The collector (collect[]) of a family */
static enum prom_collector collector_of(enum metric id)
{
	if (id <= M_CACHE_FAILING)
		return PROM_C_AGENT;
	if (id >= M_NODE_INFO && id <= M_NODE_MAD_TIMEOUT)
		return PROM_C_NODES;
	if (id < M_LINK_STATE)
		return PROM_C_COUNTERS;
	if (id < M_VITALS_INFO)
		return PROM_C_LINKS;
	if (id == M_ALARM_ACTIVE)
		return PROM_C_ALARMS;
	if (id >= M_ROUTE_READ_TIME)
		return PROM_C_ROUTING;
	return id < M_MODULE_INFO ? PROM_C_VITALS : PROM_C_MODULES;
}

/* PortCounters' error counters, in ibsnmpdPmPortTable's order */
static const char *const error_kinds[] = {
	"kind=\"symbol\"",
	"kind=\"receive\"",
	"kind=\"receive_remote_physical\"",
	"kind=\"receive_switch_relay\"",
	"kind=\"transmit_discards\"",
	"kind=\"transmit_constraint\"",
	"kind=\"receive_constraint\"",
	"kind=\"local_link_integrity\"",
	"kind=\"excessive_buffer_overrun\"",
	"kind=\"vl15_dropped\"",
};
static const char *const rcv_detail_kinds[] = {
	"kind=\"local_physical\"", "kind=\"malformed_packet\"", "kind=\"buffer_overrun\"",
	"kind=\"dlid_mapping\"",   "kind=\"vl_mapping\"",       "kind=\"looping\"",
};
static const char *const xmit_detail_kinds[] = {
	"kind=\"inactive\"",
	"kind=\"neighbor_mtu\"",
	"kind=\"switch_lifetime_limit\"",
	"kind=\"switch_hoq_lifetime_limit\"",
};
static const char *const ber_stages[] = {"stage=\"raw\"", "stage=\"post_fec\""};
static const char *const notify_families[NOTIFY_FAMILIES] = {
	[NOTIFY_IB_TRAP] = "ib_trap",
	[NOTIFY_DCBX] = "dcbx",
	[NOTIFY_PARTITION] = "partition",
	[NOTIFY_LINK] = "link",
	[NOTIFY_VITALS] = "vitals",
	[NOTIFY_ENTITY] = "entity",
	[NOTIFY_ALARM] = "alarm",
	[NOTIFY_ROUTING] = "routing",
};

#define VARIANTS(a) .variants = (a), .n_variants = sizeof(a) / sizeof((a)[0])
#define F(id_, name_, type_, rows_, help_, ...)                                             \
	{.id = (id_), .name = (name_), .type = (type_), .rows = (rows_), .help = (help_),     \
	 __VA_ARGS__}

static const struct family families[] = {
	F(M_BUILD_INFO, "ibsnmpd_build", INFO, ROWS_AGENT, "The agent's version."),
	F(M_MADS_SENT, "ibsnmpd_mads_sent", COUNTER, ROWS_AGENT,
	 "MADs the agent put on the wire, retries included (ibsnmpdMadsSent)."),
	F(M_MADS_ANSWERED, "ibsnmpd_mads_answered", COUNTER, ROWS_AGENT,
	 "MADs answered (ibsnmpdMadsAnswered)."),
	F(M_MADS_TIMED_OUT, "ibsnmpd_mads_timed_out", COUNTER, ROWS_AGENT,
	 "Requests that failed after every retry (ibsnmpdMadTimeouts)."),
	F(M_MADS_DROPPED, "ibsnmpd_mads_dropped", COUNTER, ROWS_AGENT,
	 "Received MADs that matched no request or were malformed (ibsnmpdMadsDropped)."),
	F(M_MADS_IN_FLIGHT, "ibsnmpd_mads_in_flight", GAUGE, ROWS_AGENT,
	 "Requests sent and not yet answered (ibsnmpdMadsInFlight)."),
	F(M_MADS_QUEUED, "ibsnmpd_mads_queued", GAUGE, ROWS_AGENT,
	 "Requests waiting for a place in flight (madMaxOutstanding, madMaxPerDestination)."),
	F(M_TRAPS_RECEIVED, "ibsnmpd_traps_received", COUNTER, ROWS_AGENT,
	 "IB traps taken in, from every source (ibsnmpdTrapsReceived)."),
	F(M_LOOP_LONGEST_PASS, "ibsnmpd_loop_longest_pass_seconds", GAUGE, ROWS_AGENT,
	 "The main loop's longest pass since the agent started serving "
	 "(ibsnmpdLoopLongestPass)."),
	F(M_LOOP_LONGEST_WORK, "ibsnmpd_loop_longest_work_seconds", GAUGE, ROWS_AGENT,
	 "The most time the main thread spent on a processor in one pass "
	 "(ibsnmpdLoopLongestWork)."),
	F(M_LOOP_LONGEST_SLEEP, "ibsnmpd_loop_longest_sleep_seconds", GAUGE, ROWS_AGENT,
	 "The most time the main thread slept in the kernel in one pass: waiting on "
	 "something else, not on the machine's load (ibsnmpdLoopLongestSleep)."),
	F(M_LOOP_STALLS, "ibsnmpd_loop_stalls", COUNTER, ROWS_AGENT,
	 "Passes of the main loop longer than loopWatchdog (ibsnmpdLoopStalls)."),
	F(M_WRITES_REFUSED, "ibsnmpd_writes_refused", COUNTER, ROWS_AGENT,
	 "Writes to snmpd or a client not made: the socket had no room (ibsnmpdWritesRefused)."),
	F(M_NOTIFICATIONS_QUEUED, "ibsnmpd_notifications_queued", GAUGE, ROWS_AGENT,
	 "Notifications waiting to be sent, in order (ibsnmpdNotificationsQueued)."),
	F(M_NOTIFICATIONS_IN_FLIGHT, "ibsnmpd_notifications_in_flight", GAUGE, ROWS_AGENT,
	 "Notifications sent to snmpd and not answered yet (ibsnmpdNotificationsInFlight)."),
	F(M_NOTIFICATIONS_DROPPED, "ibsnmpd_notifications_dropped", COUNTER, ROWS_AGENT,
	 "Notifications lost: the queue was full (ibsnmpdNotificationsDropped)."),
	F(M_NOTIFICATIONS_SENT, "ibsnmpd_notifications_sent", COUNTER, ROWS_NOTIFY,
	 "SNMP notifications sent, by family."),
	F(M_NOTIFICATIONS_SUPPRESSED, "ibsnmpd_notifications_suppressed", COUNTER, ROWS_NOTIFY,
	 "SNMP notifications not sent: over notificationLimit."),
	F(M_HTTP_REQUESTS, "ibsnmpd_http_requests", COUNTER, ROWS_AGENT,
	 "HTTP requests the metrics listener answered, whatever the status."),
	F(M_HTTP_CONNECTIONS, "ibsnmpd_http_connections", GAUGE, ROWS_AGENT,
	 "Connections open to the metrics listener."),
	F(M_HTTP_REFUSED, "ibsnmpd_http_refused", COUNTER, ROWS_HTTP_REFUSED,
	 "Connections and requests the metrics listener refused or cut, by reason "
	 "(prometheusAllow, its limits, prometheusWebConfig)."),
	F(M_CACHE_AGE, "ibsnmpd_cache_age_seconds", GAUGE, ROWS_CACHES,
	 "Seconds since the group's snapshot was published (ibsnmpdCacheAge)."),
	F(M_CACHE_LIFETIME, "ibsnmpd_cache_lifetime_seconds", GAUGE, ROWS_CACHES,
	 "How often the group is read again (cacheLifetime)."),
	F(M_CACHE_REFRESHES, "ibsnmpd_cache_refreshes", COUNTER, ROWS_CACHES,
	 "Refreshes of the group finished, successful or not (ibsnmpdCacheRefreshes)."),
	F(M_CACHE_DURATION, "ibsnmpd_cache_refresh_duration_seconds", GAUGE, ROWS_CACHES,
	 "How long the group's last refresh took (ibsnmpdCacheLastDuration)."),
	F(M_CACHE_FAILING, "ibsnmpd_cache_failing", GAUGE, ROWS_CACHES,
	 "1 while the group's last refresh failed: the previous values are served."),
	F(M_NODE_INFO, "infiniband_node", INFO, ROWS_NODES,
	 "A node of the subnet as the last discovery found it (NodeInfo, NodeDescription)."),
	F(M_NODE_ANSWER_TIME, "infiniband_node_answer_seconds", GAUGE, ROWS_NODES,
	 "How long the node takes to answer a MAD, smoothed over its answers "
	 "(ibsnmpdNodeAnswerTime)."),
	F(M_NODE_MAD_TIMEOUT, "infiniband_node_mad_timeout_seconds", GAUGE, ROWS_NODES,
	 "How long the agent waits for the node's next answer (ibsnmpdNodeMadTimeout)."),
	F(M_XMIT_BYTES, "infiniband_port_transmit_bytes", COUNTER, ROWS_PORTS,
	 "Octets sent: PortXmitData x 4, 64-bit (PortCountersExtended, or accumulated)."),
	F(M_RCV_BYTES, "infiniband_port_receive_bytes", COUNTER, ROWS_PORTS,
	 "Octets received: PortRcvData x 4, 64-bit."),
	F(M_XMIT_PKTS, "infiniband_port_transmit_packets", COUNTER, ROWS_PORTS,
	 "Packets sent: PortXmitPkts, 64-bit."),
	F(M_RCV_PKTS, "infiniband_port_receive_packets", COUNTER, ROWS_PORTS,
	 "Packets received: PortRcvPkts, 64-bit."),
	F(M_XMIT_UCAST, "infiniband_port_unicast_transmit_packets", COUNTER, ROWS_PORTS,
	 "Unicast packets sent: PortUnicastXmitPkts (PortCountersExtended)."),
	F(M_RCV_UCAST, "infiniband_port_unicast_receive_packets", COUNTER, ROWS_PORTS,
	 "Unicast packets received: PortUnicastRcvPkts (PortCountersExtended)."),
	F(M_XMIT_MCAST, "infiniband_port_multicast_transmit_packets", COUNTER, ROWS_PORTS,
	 "Multicast packets sent: PortMulticastXmitPkts (PortCountersExtended)."),
	F(M_RCV_MCAST, "infiniband_port_multicast_receive_packets", COUNTER, ROWS_PORTS,
	 "Multicast packets received: PortMulticastRcvPkts (PortCountersExtended)."),
	F(M_ERRORS, "infiniband_port_errors", COUNTER, ROWS_PORTS,
	 "PortCounters' error counters by kind: SymbolErrorCounter, PortRcvErrors, "
	 "PortRcvRemotePhysicalErrors, PortRcvSwitchRelayErrors, PortXmitDiscards, "
	 "PortXmitConstraintErrors, PortRcvConstraintErrors, LocalLinkIntegrityErrors, "
	 "ExcessiveBufferOverrunErrors, VL15Dropped (they stop at their maximum).",
	 VARIANTS(error_kinds)),
	F(M_LINK_DOWNED, "infiniband_port_link_downed", COUNTER, ROWS_PORTS,
	 "Times the link went down: LinkDownedCounter (8 bits, stops at 255)."),
	F(M_LINK_ERROR_RECOVERY, "infiniband_port_link_error_recovery", COUNTER, ROWS_PORTS,
	 "Link error recoveries: LinkErrorRecoveryCounter (8 bits, stops at 255)."),
	F(M_XMIT_WAIT, "infiniband_port_transmit_wait_ticks", COUNTER, ROWS_PORTS,
	 "Ticks the port had data to send and could not: PortXmitWait (32 bits, stops at its "
	 "maximum)."),
	F(M_RCV_ERROR_DETAILS, "infiniband_port_receive_error_details", COUNTER, ROWS_PORTS,
	 "PortRcvErrorDetails by kind, served while PortRcvErrors is not 0.",
	 VARIANTS(rcv_detail_kinds)),
	F(M_XMIT_DISCARD_DETAILS, "infiniband_port_transmit_discard_details", COUNTER, ROWS_PORTS,
	 "PortXmitDiscardDetails by kind, served while PortXmitDiscards is not 0.",
	 VARIANTS(xmit_detail_kinds)),
	F(M_FEC_CORRECTED_SYMBOLS, "infiniband_port_fec_corrected_symbols", COUNTER, ROWS_PORTS,
	 "Symbols RS-FEC corrected: PortFECCorrectedSymbolCounter (HDR and faster)."),
	F(M_FEC_CORRECTABLE_BLOCKS, "infiniband_port_fec_correctable_blocks", COUNTER, ROWS_PORTS,
	 "FEC blocks with errors FEC corrected (PortExtendedSpeedsCounters)."),
	F(M_FEC_UNCORRECTABLE_BLOCKS, "infiniband_port_fec_uncorrectable_blocks", COUNTER,
	 ROWS_PORTS, "FEC blocks FEC could not correct (PortExtendedSpeedsCounters)."),
	F(M_PHY_ERRORS_DETECTED, "infiniband_port_phy_errors_detected", COUNTER, ROWS_PORTS,
	 "Errors detected, the sum of ErrorDetectionCounterLane0..11 (FDR, EDR)."),
	F(M_PHY_SYNC_HEADER_ERRORS, "infiniband_port_phy_sync_header_errors", COUNTER, ROWS_PORTS,
	 "SyncHeaderErrorCounter (PortExtendedSpeedsCounters)."),
	F(M_PHY_UNKNOWN_BLOCKS, "infiniband_port_phy_unknown_blocks", COUNTER, ROWS_PORTS,
	 "UnknownBlockCounter (PortExtendedSpeedsCounters)."),
	F(M_LINK_STATE, "infiniband_port_link_state", GAUGE, ROWS_PORTS,
	 "PortInfo PortState: 1 down, 2 init, 3 armed, 4 active; 1 for a link of the baseline "
	 "whose node is no longer reached."),
	F(M_PHYS_STATE, "infiniband_port_physical_state", GAUGE, ROWS_PORTS,
	 "PortInfo PortPhysicalState: 1 sleep, 2 polling, 3 disabled, 4 training, 5 link up, "
	 "6 error recovery, 7 phy test."),
	F(M_WIDTH, "infiniband_port_link_width_lanes", GAUGE, ROWS_PORTS,
	 "Lanes the link runs (PortInfo LinkWidthActive); 0 when it is not up."),
	F(M_SPEED, "infiniband_port_speed_bytes_per_second", GAUGE, ROWS_PORTS,
	 "Data rate of the link: lanes x the data rate of a lane at LinkSpeedActive, "
	 "LinkSpeedExtActive or LinkSpeedExtActive2 (ibsnmpdFabricPortRate / 8); 0 when not up."),
	F(M_DEGRADED, "infiniband_port_link_degraded", GAUGE, ROWS_PORTS,
	 "1: up, narrower or slower than both ends can run or than the baseline."),
	F(M_BASELINE, "infiniband_port_baseline_linked", GAUGE, ROWS_PORTS,
	 "1: the port has been seen linked (ibsnmpd's baseline); its link down is a lost link."),
	F(M_FLAPPING, "infiniband_port_link_flapping", GAUGE, ROWS_PORTS,
	 "1: the link went down more than flapThreshold N times in its window."),
	F(M_BER, "infiniband_port_bit_error_rate", GAUGE, ROWS_PORTS,
	 "Bit errors per bit received over berWindow: raw (corrected symbols or errors "
	 "detected) and after FEC (uncorrectable blocks and symbol errors).",
	 VARIANTS(ber_stages)),
	F(M_BER_HIGH, "infiniband_port_bit_error_rate_high", GAUGE, ROWS_PORTS,
	 "1: a bit error rate is above berThreshold."),
	F(M_XMIT_WAIT_RATIO, "infiniband_port_transmit_wait_ratio", GAUGE, ROWS_PORTS,
	 "Share of the time between two counter sweeps the port waited to send (PortXmitWait)."),
	F(M_STALE, "infiniband_port_stale", GAUGE, ROWS_PORTS,
	 "1: the port's last counter or PortInfo read got no answer; its values are the last read."),
	F(M_PORT_INFO, "infiniband_port", INFO, ROWS_PORTS,
	 "A port: its node's type and LID, and the other end of its cable (remote_*) as last "
	 "seen."),
	F(M_VITALS_INFO, "infiniband_node_vitals", INFO, ROWS_VITALS_NODES,
	 "Whether a node's hardware is read with NVIDIA's vendor MADs, and why not "
	 "(ibsnmpdVitalsNodeStatus): read, not_nvidia, no_answer, unsupported, no_registers, "
	 "pending, disabled."),
	F(M_SWITCH_HARDWARE_INFO, "infiniband_switch_hardware", INFO, ROWS_VITALS_NODES,
	 "A switch's firmware (MGIR) and inventory (MSGI).", .switches_only = true),
	F(M_SWITCH_TEMPERATURE, "infiniband_switch_temperature_celsius", GAUGE, ROWS_VITALS_NODES,
	 "A switch's ASIC temperature (MTMP sensor 0).", .switches_only = true),
	F(M_SWITCH_UPTIME, "infiniband_switch_uptime_seconds", GAUGE, ROWS_VITALS_NODES,
	 "Seconds since the switch started (MGIR uptime, as last read).", .switches_only = true),
	F(M_NODE_TEMPERATURE, "infiniband_node_temperature_celsius", GAUGE, ROWS_TEMPS,
	 "Every temperature sensor of a node (MTMP): sensor 1 the ASIC, 2 and more ambient."),
	F(M_NODE_TEMPERATURE_THRESHOLD, "infiniband_node_temperature_threshold_celsius", GAUGE,
	 ROWS_TEMPS, "The device's own high threshold of the sensor (MTMP temperature_threshold_hi)."),
	F(M_NODE_TEMPERATURE_HIGH, "infiniband_node_temperature_high", GAUGE, ROWS_TEMPS,
	 "1 from a reading at the high threshold until one under the low threshold."),
	F(M_FAN_RPM, "infiniband_switch_fan_rpm", GAUGE, ROWS_FANS,
	 "A tachometer's speed (MFSM), revolutions per minute."),
	F(M_FAN_FAILED, "infiniband_switch_fan_failed", GAUGE, ROWS_FANS,
	 "1 while the tachometer is under its limit (FORE) or stands."),
	F(M_MODULE_INFO, "infiniband_module", INFO, ROWS_MODULES,
	 "A module plugged in a cage: its ports, type and identity (PDDR page 3, or its EEPROM)."),
	F(M_MODULE_PRESENT, "infiniband_module_present", GAUGE, ROWS_MODULES,
	 "1: a module is in the cage (PMAOS plugged, or plugged with an error)."),
	F(M_MODULE_FAULT, "infiniband_module_fault", GAUGE, ROWS_MODULES,
	 "1: the module is plugged with an error (PMAOS)."),
	F(M_MODULE_TEMPERATURE, "infiniband_module_temperature_celsius", GAUGE, ROWS_MODULES,
	 "The module's temperature, where it has a sensor."),
	F(M_MODULE_TEMPERATURE_HIGH_ALARM, "infiniband_module_temperature_high_alarm_celsius", GAUGE,
	 ROWS_MODULES, "The module's own high temperature alarm threshold."),
	F(M_MODULE_VOLTAGE, "infiniband_module_voltage_volts", GAUGE, ROWS_MODULES,
	 "The module's supply voltage."),
	F(M_MODULE_RX_POWER_LOW_ALARM, "infiniband_module_rx_power_low_alarm_dbm", GAUGE,
	 ROWS_MODULES, "The module's own low received power alarm threshold."),
	F(M_LANE_RX_POWER, "infiniband_module_rx_power_dbm", GAUGE, ROWS_LANES,
	 "Received optical power of a lane of the port, dBm (-40 for none)."),
	F(M_LANE_TX_POWER, "infiniband_module_tx_power_dbm", GAUGE, ROWS_LANES,
	 "Transmitted optical power of a lane of the port, dBm (-40 for none)."),
	F(M_LANE_TX_BIAS, "infiniband_module_tx_bias_amperes", GAUGE, ROWS_LANES,
	 "Laser bias current of a lane of the port."),
	F(M_LANE_RX_POWER_LOW, "infiniband_module_rx_power_low", GAUGE, ROWS_LANES,
	 "1 from a reading under the module's low alarm threshold until one 1 dB over it."),
	F(M_ALARM_ACTIVE, "infiniband_alarm_active_since_seconds", GAUGE, ROWS_ALARMS,
	 "Every active alarm (ibsnmpdAlarmTable): when it began, Unix time. Labels: index, "
	 "alarm (the notification that raised it), severity, type, node_guid, port, sub, "
	 "description."),
	F(M_ROUTE_READ_TIME, "infiniband_routing_read_timestamp_seconds", GAUGE, ROWS_ROUTING,
	 "When the switches' forwarding tables the routing checks last ran on were read, Unix "
	 "time."),
	F(M_ROUTE_READ_DURATION, "infiniband_routing_read_duration_seconds", GAUGE, ROWS_ROUTING,
	 "How long reading the switches' forwarding tables took."),
	F(M_ROUTE_CHECK_DURATION, "infiniband_routing_check_duration_seconds", GAUGE,
	 ROWS_ROUTING, "How long computing every routing check took."),
	F(M_ROUTE_SWITCHES_UNREAD, "infiniband_routing_switches_unread", GAUGE, ROWS_ROUTING,
	 "Switches whose forwarding table could not be read whole: the checks are partial."),
	F(M_ROUTE_CA_PAIRS_UNREACHED, "infiniband_routing_ca_pairs_unreached", GAUGE,
	 ROWS_ROUTING, "Pairs of CA ports whose route does not reach the destination."),
	F(M_ROUTE_CHECK_FAILED, "infiniband_routing_check_failed", GAUGE, ROWS_ROUTE_CHECKS,
	 "1 if the routing check found something wrong (ibsnmpdRouteCheckStatus failed)."),
	F(M_ROUTE_CHECK_OFFENDERS, "infiniband_routing_check_offenders", GAUGE, ROWS_ROUTE_CHECKS,
	 "What the routing check found wrong (ibsnmpdRouteCheckOffenders)."),
	F(M_ROUTE_PORT_LIDS, "infiniband_routing_port_lids", GAUGE, ROWS_ROUTE_LOADS,
	 "CA LIDs the switch's forwarding table sends out of the port."),
	F(M_ROUTE_PORT_PATHS, "infiniband_routing_port_paths", GAUGE, ROWS_ROUTE_LOADS,
	 "CA-to-CA routes out of the port."),
	F(M_ROUTE_HOP_PAIRS, "infiniband_routing_ca_pairs", GAUGE, ROWS_ROUTE_HOPS,
	 "CA pairs whose route has that many links (label hops)."),
	F(M_SM_STATE, "infiniband_sm_state", GAUGE, ROWS_ROUTE_SMS,
	 "An SM's SMInfo SMState: 0 notActive, 1 discovering, 2 standby, 3 master; -1 no answer."),
	F(M_SM_PRIORITY, "infiniband_sm_priority", GAUGE, ROWS_ROUTE_SMS,
	 "An SM's SMInfo Priority."),
	F(M_SM_ACT_COUNT, "infiniband_sm_activity", GAUGE, ROWS_ROUTE_SMS,
	 "An SM's SMInfo ActCount (a working SM moves it)."),
	F(M_SM_ACT_STILL, "infiniband_sm_activity_still_seconds", GAUGE, ROWS_ROUTE_SMS,
	 "How long an SM's ActCount has not moved, as far as ibsnmpd has seen."),
};
#define N_FAMILIES (sizeof(families) / sizeof(families[0]))

/* ---- text ------------------------------------------------------------------------- */

static char *put(char *o, const char *s, size_t n)
{
	memcpy(o, s, n);
	return o + n;
}

static char *puts0(char *o, const char *s)
{
	return put(o, s, strlen(s));
}

static char *put_u64(char *o, uint64_t v)
{
	char t[20];
	size_t n = 0;

	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*o++ = t[--n];
	return o;
}

static char *put_i64(char *o, int64_t v)
{
	if (v < 0) {
		*o++ = '-';
		return put_u64(o, (uint64_t)0 - (uint64_t)v);
	}
	return put_u64(o, (uint64_t)v);
}

static char *put_hex(char *o, uint64_t v, unsigned digits)
{
	static const char hex[] = "0123456789abcdef";

	*o++ = '0';
	*o++ = 'x';
	for (unsigned i = digits; i-- > 0;)
		*o++ = hex[v >> (4 * i) & 15];
	return o;
}

/* Seconds with three decimals: 0.052 */
static char *put_millis(char *o, uint64_t ms)
{
	o = put_u64(o, ms / 1000);
	*o++ = '.';
	*o++ = (char)('0' + ms / 100 % 10);
	*o++ = (char)('0' + ms / 10 % 10);
	*o++ = (char)('0' + ms % 10);
	return o;
}

/* v / 10^decimals with its decimals: -1250, 2 is -12.50 */
static char *put_decimal(char *o, int64_t v, unsigned decimals)
{
	uint64_t a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, scale = 1;
	char digits[24];

	for (unsigned i = 0; i < decimals; i++)
		scale *= 10;
	if (v < 0)
		*o++ = '-';
	o = put_u64(o, a / scale);
	if (!decimals)
		return o;
	*o++ = '.';
	put_u64(digits, a % scale + scale); /* a leading 1 keeps the zeros */
	return put(o, digits + 1, decimals);
}

/* The length of a valid UTF-8 sequence at s (at most n octets), 0 if
 * there is none: overlong forms and surrogates are invalid, as Prometheus'
 * parser (Go's utf8.Valid) has them. */
static size_t utf8_valid(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len;
	unsigned lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/* A label value from a node's description (at most 64 octets of the
 * fabric): \, " and newlines escaped, what is not UTF-8 (a description
 * cut inside a character, a vendor's Latin-1) as U+FFFD. At most 3 octets
 * of output per octet of input. */
static char *put_label_value(char *o, const char *value, size_t max_in)
{
	const unsigned char *s = (const unsigned char *)value;
	size_t n = strnlen(value, max_in);

	for (size_t i = 0; i < n;) {
		size_t len = utf8_valid(s + i, n - i);

		if (!len) {
			o = put(o, "\xef\xbf\xbd", 3);
			i++;
			continue;
		}
		if (s[i] == '\\' || s[i] == '"') {
			*o++ = '\\';
			*o++ = (char)s[i];
		} else if (s[i] == '\n') {
			*o++ = '\\';
			*o++ = 'n';
		} else {
			o = put(o, (const char *)s + i, len);
		}
		i += len;
	}
	return o;
}

#define DESC_MAX NODE_NAME_MAX /* a node's name (node_names.h) */

static char *put_label(char *o, const char *name, const char *value)
{
	o = puts0(o, name);
	*o++ = '=';
	*o++ = '"';
	o = put_label_value(o, value, DESC_MAX);
	*o++ = '"';
	return o;
}

static char *put_guid_label(char *o, const char *name, uint64_t guid)
{
	o = puts0(o, name);
	o = put(o, "=\"", 2);
	o = put_hex(o, guid, 16);
	*o++ = '"';
	return o;
}

static char *put_uint_label(char *o, const char *name, uint64_t v)
{
	o = puts0(o, name);
	o = put(o, "=\"", 2);
	o = put_u64(o, v);
	*o++ = '"';
	return o;
}

static const char *node_type_name(unsigned type)
{
	switch (type) {
	case 1: return "ca";
	case 2: return "switch";
	case 3: return "router";
	default: return "";
	}
}

/* ---- the ports: both snapshots merged --------------------------------------------- */

struct prom_port {
	uint64_t guid;
	unsigned port;
	const struct pm_port_state *pm;  /* NULL: no counters */
	const struct fabric_port *link;  /* NULL: no link row */
	uint32_t label_at;               /* in labels */
	uint16_t label_len;
};

static const char *port_desc(const struct prom_port *p)
{
	if (p->link && p->link->node_desc[0])
		return p->link->node_desc;
	return p->pm && p->pm->node ? p->pm->node->name : "";
}

static int merge_ports(struct prom_render *r)
{
	const struct pm_snapshot *pm = r->src->pm;
	const struct fabric_snapshot *fs = r->src->fabric;
	size_t n_pm = pm ? pm->n : 0, n_fs = fs ? fs->n : 0, i = 0, j = 0, used = 0;
	/* the longest label set: a GUID, an escaped name, a port */
	size_t most = sizeof("node_guid=\"0x0123456789abcdef\",node=\"\",port=\"255\"") +
		      3 * DESC_MAX;
	/* sized for names of a NodeDescription's length, grown if a map's are
	 * longer: the longest possible a port would be 0.5 GB at 40,000 hosts */
	size_t cap = (n_pm + n_fs + 1) * (most - 3 * DESC_MAX + 64) + most;
	char *o;

	r->ports = calloc(n_pm + n_fs + 1, sizeof(*r->ports));
	r->labels = malloc(cap);
	if (!r->ports || !r->labels)
		return -1;
	o = r->labels;
	while (i < n_pm || j < n_fs) {
		struct prom_port *p = &r->ports[used++];
		const struct pm_port_state *a = i < n_pm ? &pm->ports[i] : NULL;
		const struct fabric_port *b = j < n_fs ? &fs->ports[j] : NULL;
		int order = !a ? 1 : !b ? -1 : a->guid != b->guid ? (a->guid < b->guid ? -1 : 1)
				 : a->port != b->port ? (a->port < b->port ? -1 : 1) : 0;
		char *start;

		if (cap - (size_t)(o - r->labels) < most) {
			size_t at = (size_t)(o - r->labels);
			char *grown = realloc(r->labels, cap * 2);

			if (!grown)
				return -1;
			r->labels = grown;
			cap *= 2;
			o = r->labels + at;
		}
		start = o;

		if (order <= 0) {
			p->pm = a;
			i++;
		}
		if (order >= 0) {
			p->link = b;
			j++;
		}
		p->guid = p->link ? p->link->guid : p->pm->guid;
		p->port = p->link ? p->link->port : p->pm->port;
		o = put_guid_label(o, "node_guid", p->guid);
		*o++ = ',';
		o = put_label(o, "node", port_desc(p));
		*o++ = ',';
		o = put_uint_label(o, "port", p->port);
		p->label_at = (uint32_t)(start - r->labels);
		p->label_len = (uint16_t)(o - start);
	}
	r->n_ports = used;
	/* what was taken for the longest label sets goes back */
	o = realloc(r->labels, (size_t)(o - r->labels) + 1);
	if (o)
		r->labels = o;
	return 0;
}

/* ---- a sample's value (and an info sample's own labels) ---------------------------- */

struct sample {
	char *labels;    /* where the next label goes, each after a ',' */
	char *value;
	char *value_end;
};

static char *put_bool(char *o, bool v)
{
	*o++ = v ? '1' : '0';
	return o;
}

/* mantissa in tenths, power of ten: (25, -9) is 2.5e-9; (0, 0) is 0 */
static char *put_ber(char *o, unsigned mantissa, int exponent)
{
	if (!mantissa) {
		*o++ = '0';
		return o;
	}
	o = put_u64(o, mantissa / 10);
	*o++ = '.';
	*o++ = (char)('0' + mantissa % 10);
	*o++ = 'e';
	return put_i64(o, exponent);
}

static char *put_permille(char *o, unsigned permille)
{
	if (permille >= 1000) {
		*o++ = '1';
		return o;
	}
	*o++ = '0';
	*o++ = '.';
	*o++ = (char)('0' + permille / 100);
	*o++ = (char)('0' + permille / 10 % 10);
	*o++ = (char)('0' + permille % 10);
	return o;
}

static uint64_t error_of(const struct pm_counters *c, unsigned kind)
{
	switch (kind) {
	case 0: return c->symbol_errors;
	case 1: return c->rcv_errors;
	case 2: return c->rcv_remote_phys_errors;
	case 3: return c->rcv_switch_relay_errors;
	case 4: return c->xmit_discards;
	case 5: return c->xmit_constraint_errors;
	case 6: return c->rcv_constraint_errors;
	case 7: return c->local_link_integrity_errors;
	case 8: return c->excessive_buffer_overruns;
	default: return c->vl15_dropped;
	}
}

static uint64_t detail_of(const struct pm_error_details *d, bool rcv, unsigned kind)
{
	if (rcv) {
		switch (kind) {
		case 0: return d->local_phys;
		case 1: return d->malformed;
		case 2: return d->buffer_overrun;
		case 3: return d->dlid_mapping;
		case 4: return d->vl_mapping;
		default: return d->looping;
		}
	}
	switch (kind) {
	case 0: return d->inactive;
	case 1: return d->neighbor_mtu;
	case 2: return d->sw_lifetime;
	default: return d->sw_hoq_lifetime;
	}
}

/* The counters' value of p (NULL: p has none). */
static char *counter_value(enum metric id, unsigned variant, const struct pm_port_state *st,
			   char *o)
{
	const struct pm_ext_speeds *fec = &st->fec;
	bool rs = st->fec_layout == PM_FEC_RS;

	switch (id) {
	case M_XMIT_BYTES: return put_u64(o, st->xmit_data * 4);
	case M_RCV_BYTES: return put_u64(o, st->rcv_data * 4);
	case M_XMIT_PKTS: return put_u64(o, st->xmit_pkts);
	case M_RCV_PKTS: return put_u64(o, st->rcv_pkts);
	case M_XMIT_UCAST:
	case M_RCV_UCAST:
	case M_XMIT_MCAST:
	case M_RCV_MCAST:
		if (!pm_port_has_cast_counters(st))
			return NULL;
		return put_u64(o, id == M_XMIT_UCAST ? st->xmit_ucast_pkts
				  : id == M_RCV_UCAST ? st->rcv_ucast_pkts
				  : id == M_XMIT_MCAST ? st->xmit_mcast_pkts : st->rcv_mcast_pkts);
	case M_ERRORS: return put_u64(o, error_of(&st->raw, variant));
	case M_LINK_DOWNED: return put_u64(o, st->raw.link_downed);
	case M_LINK_ERROR_RECOVERY: return put_u64(o, st->raw.link_error_recovery);
	case M_XMIT_WAIT: return put_u64(o, st->raw.xmit_wait);
	case M_RCV_ERROR_DETAILS:
	case M_XMIT_DISCARD_DETAILS:
		/* only where their total is not 0: ten series a port that say 0
		 * on a healthy fabric would be a quarter of a big scrape */
		if (!st->have_details ||
		    !(id == M_RCV_ERROR_DETAILS ? st->raw.rcv_errors : st->raw.xmit_discards))
			return NULL;
		return put_u64(o, detail_of(&st->details, id == M_RCV_ERROR_DETAILS, variant));
	default: break;
	}
	if (!pm_port_has_fec(st))
		return NULL;
	switch (id) {
	case M_FEC_CORRECTED_SYMBOLS: return rs ? put_u64(o, fec->corrected_symbols) : NULL;
	case M_FEC_CORRECTABLE_BLOCKS: return put_u64(o, fec->correctable_blocks);
	case M_FEC_UNCORRECTABLE_BLOCKS: return put_u64(o, fec->uncorrectable_blocks);
	case M_PHY_ERRORS_DETECTED: return rs ? NULL : put_u64(o, fec->error_detection);
	case M_PHY_SYNC_HEADER_ERRORS: return put_u64(o, fec->sync_header_errors);
	case M_PHY_UNKNOWN_BLOCKS: return put_u64(o, fec->unknown_blocks);
	default: return NULL;
	}
}

/* The link row's value (NULL: it says nothing). */
static char *link_value(enum metric id, unsigned variant, const struct fabric_port *f, char *o)
{
	const struct fabric_health *h = &f->health;

	switch (id) {
	case M_LINK_STATE:
		return fabric_port_link_state(f) ? put_u64(o, fabric_port_link_state(f)) : NULL;
	case M_PHYS_STATE:
		return fabric_port_phys_state(f) ? put_u64(o, fabric_port_phys_state(f)) : NULL;
	case M_WIDTH: return fabric_port_rate_known(f) ? put_u64(o, f->lanes) : NULL;
	case M_SPEED:
		/* octets: Prometheus' base unit (promtool's lint refuses bits) */
		return fabric_port_rate_known(f) ? put_u64(o, (uint64_t)f->rate_mbps * 125000) : NULL;
	case M_DEGRADED: return put_bool(o, f->degraded);
	case M_BASELINE: return put_bool(o, f->base_linked);
	case M_FLAPPING: return put_bool(o, h->flapping);
	case M_BER:
		if (!h->ber_valid)
			return NULL;
		return variant ? put_ber(o, h->ber_post_m, h->ber_post_e)
			       : put_ber(o, h->ber_raw_m, h->ber_raw_e);
	case M_BER_HIGH: return put_bool(o, h->ber_high);
	case M_XMIT_WAIT_RATIO:
		return h->have_xmit_wait ? put_permille(o, h->xmit_wait_permille) : NULL;
	default: return NULL;
	}
}

static bool port_sample(enum metric id, unsigned variant, const struct prom_port *p,
			struct sample *s)
{
	char *o = s->labels;
	const struct fabric_port *f = p->link;

	if (id == M_STALE) {
		s->value_end = put_bool(s->value, (p->pm && p->pm->stale) || (f && f->stale));
		return true;
	}
	if (id == M_PORT_INFO) {
		unsigned type = f ? f->node_type : p->pm->node ? p->pm->node->type : 0;

		*o++ = ',';
		o = put_label(o, "node_type", node_type_name(type));
		*o++ = ',';
		o = put_uint_label(o, "lid", f ? f->lid : p->pm->lid);
		if (f && f->remote_guid) {
			*o++ = ',';
			o = put_guid_label(o, "remote_node_guid", f->remote_guid);
			*o++ = ',';
			o = put_label(o, "remote_node", f->remote_desc);
			*o++ = ',';
			o = put_uint_label(o, "remote_port", f->remote_port);
		}
		s->labels = o;
		s->value_end = put_bool(s->value, true);
		return true;
	}
	if (id < M_LINK_STATE) {
		if (!p->pm || !p->pm->have_raw)
			return false;
		s->value_end = counter_value(id, variant, p->pm, s->value);
	} else {
		if (!f)
			return false;
		s->value_end = link_value(id, variant, f, s->value);
	}
	return s->value_end != NULL;
}

static bool node_sample(const struct topo_node *n, struct sample *s)
{
	char *o = s->labels;

	o = put_guid_label(put(o, ",", 1), "node_guid", n->guid);
	o = put_label(put(o, ",", 1), "node", n->name);
	*o++ = ',';
	o = put_label(o, "node_type", node_type_name(n->type));
	*o++ = ',';
	o = put_uint_label(o, "lid", n->lid);
	*o++ = ',';
	o = put_uint_label(o, "ports", n->num_ports);
	if (n->has_ident) {
		*o++ = ',';
		o = puts0(o, "vendor_id=\"");
		o = put_hex(o, n->vendor_id, 6);
		o = puts0(o, "\",device_id=\"");
		o = put_hex(o, n->device_id, 4);
		o = puts0(o, "\",revision=\"");
		o = put_hex(o, n->revision, 8);
		*o++ = '"';
	}
	s->labels = o;
	s->value_end = put_bool(s->value, true);
	return true;
}

static bool cache_sample(enum metric id, const struct prom_cache *c, struct sample *s)
{
	char *o = s->value;

	switch (id) {
	case M_CACHE_AGE:
		if (c->age_s < 0)
			return false;
		o = put_u64(o, (uint64_t)c->age_s);
		break;
	case M_CACHE_LIFETIME: o = put_u64(o, c->lifetime_s); break;
	case M_CACHE_REFRESHES: o = put_u64(o, c->refreshes); break;
	case M_CACHE_DURATION:
		o = put_millis(o, (uint64_t)(c->last_duration_s * 1000.0 + 0.5));
		break;
	default: o = put_bool(o, c->failing); break;
	}
	s->value_end = o;
	return true;
}

static bool agent_sample(const struct prom_sources *src, enum metric id, struct sample *s)
{
	char *o = s->value;

	switch (id) {
	case M_BUILD_INFO:
		s->labels = put_label(s->labels, ",version", src->version ? src->version : "");
		o = put_bool(o, true);
		break;
	case M_MADS_SENT: o = put_u64(o, src->mads.sent); break;
	case M_MADS_ANSWERED: o = put_u64(o, src->mads.answered); break;
	case M_MADS_TIMED_OUT: o = put_u64(o, src->mads.timeouts); break;
	case M_MADS_DROPPED: o = put_u64(o, src->mads.dropped); break;
	case M_MADS_IN_FLIGHT: o = put_u64(o, src->mads.in_flight); break;
	case M_MADS_QUEUED: o = put_u64(o, src->mads.queued); break;
	case M_TRAPS_RECEIVED:
		if (!src->have_traps)
			return false;
		o = put_u64(o, src->traps.received);
		break;
	case M_LOOP_LONGEST_PASS: o = put_millis(o, src->loop.longest_pass_ms); break;
	case M_LOOP_LONGEST_WORK: o = put_millis(o, src->loop.longest_work_ms); break;
	case M_LOOP_LONGEST_SLEEP:
		if (src->loop.longest_sleep_ms == UINT32_MAX)
			return false; /* not known here */
		o = put_millis(o, src->loop.longest_sleep_ms);
		break;
	case M_LOOP_STALLS: o = put_u64(o, src->loop.stalls); break;
	case M_WRITES_REFUSED: o = put_u64(o, src->writes.refused); break;
	case M_NOTIFICATIONS_QUEUED: o = put_u64(o, src->queue.queued); break;
	case M_NOTIFICATIONS_IN_FLIGHT: o = put_u64(o, src->queue.in_flight); break;
	case M_NOTIFICATIONS_DROPPED: o = put_u64(o, src->queue.dropped); break;
	case M_HTTP_REQUESTS:
		if (!src->have_http)
			return false;
		o = put_u64(o, src->http.requests);
		break;
	case M_HTTP_CONNECTIONS:
		if (!src->have_http)
			return false;
		o = put_u64(o, src->http.connections);
		break;
	default: return false;
	}
	s->value_end = o;
	return true;
}

/* ---- the hardware ----------------------------------------------------------------- */

static const char *const vitals_status_names[] = {
	"", "read", "not_nvidia", "no_answer", "unsupported", "no_registers", "pending", "disabled"};
static const char *const module_type_names[] = {
	"unidentified", "active_cable", "optical_module", "passive_copper", "unplugged"};
static const char *const module_form_names[] = {
	"qsfp28", "qsfp_plus", "sfp", "qsa", "backplane", "sfp_dd", "qsfp_dd", "qsfp_cmis", "osfp",
	"c2c", "dsfp", "qsfp_split"};

/* The vitals node of a row's GUID (rows of a node are consecutive: the
 * last one found is looked at first) */
static const struct vitals_node *vnode_of(struct prom_render *r, uint64_t guid)
{
	if (!r->vnode || r->vnode->guid != guid)
		r->vnode = vitals_find_node(r->src->vitals, guid);
	return r->vnode;
}

static char *put_node_labels(char *o, const struct vitals_node *n)
{
	o = put_guid_label(put(o, ",", 1), "node_guid", n->guid);
	return put_label(put(o, ",", 1), "node", n->inv->desc ? n->inv->desc : "");
}

static char *put_version(char *o, const uint32_t v[3])
{
	o = put_u64(o, v[0]);
	*o++ = '.';
	o = put_u64(o, v[1]);
	*o++ = '.';
	return put_u64(o, v[2]);
}

static bool vitals_node_sample(const struct prom_sources *src, enum metric id,
			       const struct vitals_node *n, struct sample *s)
{
	const struct vitals_inv_node *iv = n->inv;
	char *o = put_node_labels(s->labels, n);
	bool read = iv->status == VITALS_READ;

	switch (id) {
	case M_VITALS_INFO:
		o = put_label(put(o, ",", 1), "status", n->status <= VITALS_DISABLED ?
			      vitals_status_names[n->status] : "");
		s->value_end = put_bool(s->value, true);
		break;
	case M_SWITCH_HARDWARE_INFO:
		if (!read)
			return false;
		o = puts0(o, ",firmware_version=\"");
		o = put_version(o, iv->mgir.fw);
		*o++ = '"';
		o = put_label(put(o, ",", 1), "psid", iv->mgir.psid);
		if (iv->have_msgi) {
			o = put_label(put(o, ",", 1), "part_number", iv->msgi.part);
			o = put_label(put(o, ",", 1), "serial_number", iv->msgi.serial);
			o = put_label(put(o, ",", 1), "revision", iv->msgi.revision);
			o = put_label(put(o, ",", 1), "product_name", iv->msgi.product);
		}
		s->value_end = put_bool(s->value, true);
		break;
	case M_SWITCH_TEMPERATURE:
		if (!n->have_asic)
			return false;
		s->value_end = put_decimal(s->value, vitals_tenths_from_eighths(n->asic_temp), 1);
		break;
	case M_SWITCH_UPTIME: {
		uint64_t up = n->uptime_s;

		if (!n->read_at)
			return false;
		if (!n->stale && src->now > n->read_at)
			up += (uint64_t)(src->now - n->read_at);
		s->value_end = put_u64(s->value, up);
		break;
	}
	default:
		return false;
	}
	s->labels = o;
	return true;
}

static bool temp_sample(enum metric id, const struct vitals_node *n, const struct vitals_temp *t,
			struct sample *s)
{
	char *o = put_node_labels(s->labels, n);

	o = put_uint_label(put(o, ",", 1), "sensor", t->sensor + 1u);
	o = put_label(put(o, ",", 1), "name", t->name);
	s->labels = o;
	if (id == M_NODE_TEMPERATURE_HIGH)
		s->value_end = put_bool(s->value, t->high);
	else
		s->value_end = put_decimal(s->value, vitals_tenths_from_eighths(
			id == M_NODE_TEMPERATURE ? t->temp : t->threshold_hi), 1);
	return id != M_NODE_TEMPERATURE_THRESHOLD || t->threshold_hi > 0;
}

static bool fan_sample(enum metric id, const struct vitals_node *n, const struct vitals_fan *f,
		       struct sample *s)
{
	s->labels = put_uint_label(put(put_node_labels(s->labels, n), ",", 1), "fan", f->tacho + 1u);
	s->value_end = id == M_FAN_RPM ? put_u64(s->value, f->rpm) : put_bool(s->value, f->failed);
	return true;
}

static bool module_sample(enum metric id, const struct vitals_node *n,
			  const struct vitals_module *m, struct sample *s)
{
	const struct vitals_module_info *i = &m->info;
	char *o = put_uint_label(put(put_node_labels(s->labels, n), ",", 1), "module",
				 m->module + 1u);
	bool in = m->oper_status == VITALS_MODULE_PLUGGED || m->oper_status == VITALS_MODULE_ERROR;

	switch (id) {
	case M_MODULE_PRESENT: s->value_end = put_bool(s->value, in); break;
	case M_MODULE_FAULT: s->value_end = put_bool(s->value, m->oper_status == VITALS_MODULE_ERROR); break;
	default:
		if (!m->have_info)
			return false;
		switch (id) {
		case M_MODULE_INFO: {
			char fw[VITALS_FW_TEXT];

			o = put_uint_label(put(o, ",", 1), "port", m->first_port);
			o = put_uint_label(put(o, ",", 1), "ports", m->n_ports);
			o = put_label(put(o, ",", 1), "type", i->cable_type < 5 ?
				      module_type_names[i->cable_type] : "other");
			o = put_label(put(o, ",", 1), "form", i->identifier < 12 ?
				      module_form_names[i->identifier] : "other");
			o = put_label(put(o, ",", 1), "vendor", i->vendor);
			o = put_label(put(o, ",", 1), "part_number", i->part);
			o = put_label(put(o, ",", 1), "serial_number", i->serial);
			o = put_label(put(o, ",", 1), "revision", i->revision);
			vitals_module_fw_text(i->fw_version, fw);
			if (fw[0])
				o = put_label(put(o, ",", 1), "firmware_version", fw);
			s->value_end = put_bool(s->value, true);
			break;
		}
		case M_MODULE_TEMPERATURE:
			if (!i->have_temp)
				return false;
			s->value_end = put_decimal(s->value, vitals_tenths_from_256ths(i->temp), 1);
			break;
		case M_MODULE_TEMPERATURE_HIGH_ALARM:
			if (!i->have_thresholds)
				return false;
			s->value_end = put_decimal(s->value, vitals_tenths_from_256ths(i->temp_hi), 1);
			break;
		case M_MODULE_VOLTAGE:
			if (!i->have_voltage)
				return false;
			s->value_end = put_decimal(s->value, i->voltage, 4); /* 100 uV */
			break;
		case M_MODULE_RX_POWER_LOW_ALARM:
			if (!i->have_thresholds)
				return false;
			s->value_end = put_decimal(s->value, vitals_uw_to_centi_dbm(i->rx_lo_uw), 2);
			break;
		default:
			return false;
		}
	}
	s->labels = o;
	return true;
}

static bool lane_sample(enum metric id, const struct vitals_node *n, const struct vitals_lane *l,
			struct sample *s)
{
	char *o = put_uint_label(put(put_node_labels(s->labels, n), ",", 1), "port", l->port);

	o = put_uint_label(put(o, ",", 1), "lane", l->lane);
	s->labels = put_uint_label(put(o, ",", 1), "module", l->module + 1u);
	switch (id) {
	case M_LANE_RX_POWER:
		s->value_end = put_decimal(s->value, vitals_uw_to_centi_dbm(l->rx_uw), 2);
		break;
	case M_LANE_TX_POWER:
		s->value_end = put_decimal(s->value, vitals_uw_to_centi_dbm(l->tx_uw), 2);
		break;
	case M_LANE_TX_BIAS: s->value_end = put_decimal(s->value, 2 * l->bias, 6); break;
	default: s->value_end = put_bool(s->value, l->rx_low); break;
	}
	return true;
}

/* ---- alarms; the query's selection ------------------------------------------------- */

static const char *const severity_names[] = {
	[SEV_CRITICAL] = "critical", [SEV_MAJOR] = "major", [SEV_MINOR] = "minor",
	[SEV_WARNING] = "warning",
};
static const char *const alarm_type_names[] = {
	[TYPE_COMMUNICATIONS] = "communications", [TYPE_QUALITY_OF_SERVICE] = "quality_of_service",
	[TYPE_PROCESSING_ERROR] = "processing_error", [TYPE_EQUIPMENT] = "equipment",
	[TYPE_ENVIRONMENTAL] = "environmental",
};

/* An alarm: the columns of its row as labels, when it began as the value */
static void alarm_sample(const struct alarm *a, struct sample *s)
{
	const struct alarm_kind_info *k = alarm_kind_info(a->key.kind);

	s->labels = put_uint_label(s->labels, ",index", a->index);
	s->labels = put_label(s->labels, ",alarm", k ? k->name : "");
	s->labels = put_label(s->labels, ",severity", k ? severity_names[k->severity] : "");
	s->labels = put_label(s->labels, ",type", k ? alarm_type_names[k->type] : "");
	s->labels = put_guid_label(s->labels, ",node_guid", a->key.guid);
	s->labels = put_uint_label(s->labels, ",port", a->key.port);
	s->labels = put_uint_label(s->labels, ",sub", a->key.sub);
	s->labels = put_label(s->labels, ",description", a->desc);
	s->value_end = put_i64(s->value, (int64_t)a->began);
}

static bool node_wanted(const struct prom_filter *f, uint64_t guid, unsigned type)
{
	if (f->node_types && !(f->node_types >> type & 1))
		return false;
	return !f->shards || prom_shard_of(guid, f->shards) == f->shard;
}

/* The routing checks' run, a check, a switch port's load, a route length */
static bool route_sample(const struct prom_render *r, const struct family *f, size_t row,
			 struct sample *s)
{
	const struct route_snapshot *snap = r->src->route;
	/* the routing run's (families of checks aside, rows only when there is
	 * one: family_rows) */
	const struct route_routing *rs = snap->routing;
	/* the row's check and load: only where the family has them */
	const struct route_check_result *c =
		f->rows == ROWS_ROUTE_CHECKS ? &snap->checks[row + 1] : &snap->checks[0];
	const struct route_port_load *l =
		f->rows == ROWS_ROUTE_LOADS ? &rs->f.loads[row] : NULL;
	char *o = s->value;

	if (f->rows == ROWS_ROUTE_SMS) {
		const struct route_sm *m = &snap->sms[row];
		bool silent = m->state == ROUTE_SM_NO_ANSWER;

		s->labels = put_guid_label(s->labels, ",guid", m->guid);
		s->labels = put_label(s->labels, ",node", m->name);
		s->labels = put_uint_label(s->labels, ",lid", m->lid);
		switch (f->id) {
		case M_SM_STATE: o = put_i64(o, silent ? -1 : m->state); break;
		case M_SM_PRIORITY: o = put_u64(o, m->priority); break;
		case M_SM_ACT_COUNT: o = put_u64(o, m->act_count); break;
		default: o = put_u64(o, m->act_still_s); break;
		}
		s->value_end = o;
		/* an SM that does not answer has a state only */
		return !silent || f->id == M_SM_STATE;
	}
	if (f->rows == ROWS_ROUTE_CHECKS)
		s->labels = put_label(s->labels, ",check", route_check_name((unsigned)row + 1));
	if (f->rows == ROWS_ROUTE_LOADS) {
		const struct topo_node *n = topology_node(rs->fabric, l->guid);
		static const char *const directions[] = {"down", "level", "up"};

		if (!node_wanted(&r->src->filter, l->guid, 2))
			return false;
		s->labels = put_guid_label(s->labels, ",node_guid", l->guid);
		s->labels = put_label(s->labels, ",node", n && n->name ? n->name : "");
		s->labels = put_uint_label(s->labels, ",port", l->port);
		s->labels = put_label(s->labels, ",direction", directions[l->direction + 1]);
	}
	if (f->rows == ROWS_ROUTE_HOPS)
		s->labels = put_uint_label(s->labels, ",hops", rs->f.hop_rows[row].hops);
	switch (f->id) {
	case M_ROUTE_READ_TIME: o = put_i64(o, (int64_t)rs->read_at); break;
	case M_ROUTE_READ_DURATION: o = put_decimal(o, (int64_t)(rs->read_seconds * 1000), 3); break;
	case M_ROUTE_CHECK_DURATION:
		o = put_decimal(o, (int64_t)(rs->check_seconds * 1000), 3);
		break;
	case M_ROUTE_SWITCHES_UNREAD: o = put_u64(o, rs->switches - rs->switches_read); break;
	case M_ROUTE_CA_PAIRS_UNREACHED: o = put_u64(o, rs->f.ca_pairs - rs->f.pairs_reached); break;
	case M_ROUTE_CHECK_FAILED: o = put_bool(o, c->status == ROUTE_STATUS_FAILED); break;
	case M_ROUTE_CHECK_OFFENDERS: o = put_u64(o, c->offenders); break;
	case M_ROUTE_PORT_LIDS: o = put_u64(o, l ? l->lids : 0); break;
	case M_ROUTE_PORT_PATHS: o = put_u64(o, l ? l->paths : 0); break;
	default: o = put_u64(o, rs->f.hop_rows[row].pairs); break;
	}
	s->value_end = o;
	return true;
}

/* ---- lines ------------------------------------------------------------------------ */

static size_t family_rows(const struct prom_render *r, const struct family *f)
{
	switch (f->rows) {
	case ROWS_AGENT: return 1;
	case ROWS_CACHES: return r->src->n_caches;
	case ROWS_NOTIFY: return NOTIFY_FAMILIES;
	case ROWS_HTTP_REFUSED: return r->src->have_http ? PROM_HTTP_REFUSALS : 0;
	case ROWS_NODES: return r->src->topology ? r->src->topology->n_nodes : 0;
	case ROWS_VITALS_NODES: return r->src->vitals ? r->src->vitals->n_nodes : 0;
	case ROWS_TEMPS: return r->src->vitals ? r->src->vitals->n_temps : 0;
	case ROWS_FANS: return r->src->vitals ? r->src->vitals->n_fans : 0;
	case ROWS_MODULES: return r->src->vitals ? r->src->vitals->n_modules : 0;
	case ROWS_LANES: return r->src->vitals ? r->src->vitals->n_lanes : 0;
	case ROWS_ALARMS: return r->src->alarms ? r->src->alarms->n : 0;
	case ROWS_ROUTING: return r->src->route && r->src->route->routing ? 1 : 0;
	case ROWS_ROUTE_CHECKS: return r->src->route ? ROUTE_CHECKS : 0;
	case ROWS_ROUTE_LOADS:
		return r->src->route && r->src->route->routing ? r->src->route->routing->f.n_loads : 0;
	case ROWS_ROUTE_HOPS:
		return r->src->route && r->src->route->routing ? r->src->route->routing->f.n_hop_rows
							       : 0;
	case ROWS_ROUTE_SMS: return r->src->route ? r->src->route->n_sms : 0;
	default: return r->n_ports;
	}
}

/* The vitals node of row `row` of a family of the hardware */
static const struct vitals_node *vitals_row_node(struct prom_render *r, const struct family *f,
						 size_t row)
{
	const struct vitals_snapshot *v = r->src->vitals;

	switch (f->rows) {
	case ROWS_VITALS_NODES: return r->vnode = &v->nodes[row];
	case ROWS_TEMPS: return vnode_of(r, v->temps[row].guid);
	case ROWS_FANS: return vnode_of(r, v->fans[row].guid);
	case ROWS_MODULES: return vnode_of(r, v->modules[row].guid);
	default: return vnode_of(r, v->lanes[row].guid);
	}
}

/* The name a sample of f has. */
static char *put_sample_name(char *o, const struct family *f)
{
	o = puts0(o, f->name);
	if (f->type == COUNTER)
		o = puts0(o, "_total");
	else if (f->type == INFO)
		o = puts0(o, "_info");
	return o;
}

/* HELP and TYPE: OpenMetrics names the family (a counter without _total,
 * info as its own type), the text format the samples. */
static char *put_header(char *o, const struct family *f, enum prom_format format)
{
	static const char *const type_name[] = {"counter", "gauge", "info"};
	bool om = format == PROM_OPENMETRICS;

	o = puts0(o, "# HELP ");
	o = om ? puts0(o, f->name) : put_sample_name(o, f);
	*o++ = ' ';
	o = puts0(o, f->help);
	o = puts0(o, "\n# TYPE ");
	o = om ? puts0(o, f->name) : put_sample_name(o, f);
	*o++ = ' ';
	o = puts0(o, om ? type_name[f->type] : f->type == INFO ? "gauge" : type_name[f->type]);
	*o++ = '\n';
	return o;
}

/* One sample of f at (variant, row) into o, or nothing (the row has none,
 * or the query leaves its node out). */
static char *put_sample(struct prom_render *r, const struct family *f, unsigned variant,
			size_t row, char *o)
{
	char labels[PROM_LINE_MAX - 64], value[48];
	struct sample s = {.labels = labels, .value = value};
	const struct prom_filter *q = &r->src->filter;
	bool found = true;

	if (r->src->fabric_name) /* the fabric first: one instance a fabric, one Prometheus for all */
		s.labels = put_label(s.labels, ",fabric", r->src->fabric_name);
	if (f->rows >= ROWS_ROUTING) {
		found = route_sample(r, f, row, &s);
	} else if (f->rows == ROWS_ALARMS) {
		const struct alarm *a = &r->src->alarms->rows[row];

		if (a->key.guid && !node_wanted(q, a->key.guid, a->node_type))
			return o;
		alarm_sample(a, &s);
	} else if (f->rows >= ROWS_VITALS_NODES) {
		const struct vitals_node *n = vitals_row_node(r, f, row);
		const struct vitals_snapshot *v = r->src->vitals;

		if (!n || !node_wanted(q, n->guid, n->inv->type) ||
		    (f->switches_only && n->inv->type != 2))
			return o;
		switch (f->rows) {
		case ROWS_VITALS_NODES: found = vitals_node_sample(r->src, f->id, n, &s); break;
		case ROWS_TEMPS: found = temp_sample(f->id, n, &v->temps[row], &s); break;
		case ROWS_FANS: found = fan_sample(f->id, n, &v->fans[row], &s); break;
		case ROWS_MODULES: found = module_sample(f->id, n, &v->modules[row], &s); break;
		default: found = lane_sample(f->id, n, &v->lanes[row], &s); break;
		}
	} else switch (f->rows) {
	case ROWS_AGENT: found = agent_sample(r->src, f->id, &s); break;
	case ROWS_CACHES:
		s.labels = put_label(s.labels, ",group", r->src->caches[row].name);
		found = cache_sample(f->id, &r->src->caches[row], &s);
		break;
	case ROWS_NOTIFY:
		s.labels = put_label(s.labels, ",family", notify_families[row]);
		s.value_end = put_u64(s.value, f->id == M_NOTIFICATIONS_SENT ? r->src->notify[row].sent
									 : r->src->notify[row].suppressed);
		break;
	case ROWS_HTTP_REFUSED:
		s.labels = put_label(s.labels, ",reason", prom_http_refusal_names[row]);
		s.value_end = put_u64(s.value, r->src->http.refused[row]);
		break;
	case ROWS_NODES: {
		const struct topo_node *n = &r->src->topology->nodes[row];

		if (!node_wanted(q, n->guid, n->type))
			return o;
		if (f->id == M_NODE_INFO) {
			found = node_sample(n, &s);
			break;
		}
		if (!r->src->answer_times || !r->src->answer_times[row].answers)
			return o;
		s.labels = put_guid_label(put(s.labels, ",", 1), "node_guid", n->guid);
		s.labels = put_label(put(s.labels, ",", 1), "node", n->name);
		s.value_end = f->id == M_NODE_ANSWER_TIME ?
			put_decimal(s.value, r->src->answer_times[row].smoothed_us, 6) :
			put_millis(s.value, r->src->answer_times[row].timeout_ms);
		break;
	}
	default: {
		const struct prom_port *p = &r->ports[row];
		unsigned type = p->link ? p->link->node_type : p->pm->node ? p->pm->node->type : 0;

		if (!node_wanted(q, p->guid, type))
			return o;

		*s.labels++ = ',';
		s.labels = put(s.labels, r->labels + p->label_at, p->label_len);
		if (f->variants) {
			*s.labels++ = ',';
			s.labels = puts0(s.labels, f->variants[variant]);
		}
		found = port_sample(f->id, variant, p, &s);
		break;
	}
	}
	if (!found)
		return o;
	o = put_sample_name(o, f);
	if (s.labels != labels) { /* the first label's ',' is left out */
		*o++ = '{';
		o = put(o, labels + 1, (size_t)(s.labels - labels - 1));
		*o++ = '}';
	}
	*o++ = ' ';
	o = put(o, value, (size_t)(s.value_end - value));
	*o++ = '\n';
	return o;
}

/* The next line (or HELP and TYPE) into o, at most PROM_LINE_MAX octets;
 * o itself at the end. */
static char *next_line(struct prom_render *r, char *o)
{
	for (;;) {
		const struct family *f;
		unsigned variants;
		char *end;

		if (r->family == N_FAMILIES) {
			if (r->format == PROM_OPENMETRICS && !r->eof_done) {
				r->eof_done = true;
				return puts0(o, "# EOF\n");
			}
			r->done = true;
			return o;
		}
		f = &families[r->family];
		variants = f->variants ? f->n_variants : 1;
		if (r->src->filter.collectors && !(r->src->filter.collectors >> collector_of(f->id) & 1)) {
			r->family++;
			continue;
		}
		if (!r->header_done) {
			r->header_done = true;
			return put_header(o, f, r->format);
		}
		if (r->variant == variants) {
			r->family++;
			r->variant = r->row = 0;
			r->header_done = false;
			continue;
		}
		if (r->row >= family_rows(r, f)) {
			r->variant++;
			r->row = 0;
			continue;
		}
		end = put_sample(r, f, (unsigned)r->variant, r->row++, o);
		if (end != o)
			return end;
	}
}

int prom_render_begin(struct prom_render *r, const struct prom_sources *src,
		      enum prom_format format)
{
	memset(r, 0, sizeof(*r));
	r->src = src;
	r->format = format;
	if (merge_ports(r)) {
		prom_render_end(r);
		return -1;
	}
	return 0;
}

size_t prom_render_next(struct prom_render *r, char *buf, size_t max)
{
	size_t n = 0;

	while (n < max) {
		if (r->carry_at < r->carry_len) {
			size_t k = r->carry_len - r->carry_at;

			if (k > max - n)
				k = max - n;
			memcpy(buf + n, r->carry + r->carry_at, k);
			r->carry_at += k;
			n += k;
			continue;
		}
		if (r->done)
			break;
		if (max - n >= PROM_LINE_MAX) {
			n = (size_t)(next_line(r, buf + n) - buf);
		} else {
			r->carry_len = (size_t)(next_line(r, r->carry) - r->carry);
			r->carry_at = 0;
		}
	}
	return n;
}

void prom_render_end(struct prom_render *r)
{
	free(r->ports);
	free(r->labels);
	r->ports = NULL;
	r->labels = NULL;
}
