/* PerfMgt attributes (pure: no net-snmp, no I/O): decoders and encoders,
 * and the bookkeeping that turns successive readings of a port into 64-bit
 * totals. The unit tests and the fuzz targets link these alone. */
#ifndef IBSNMPD_PM_ATTR_H
#define IBSNMPD_PM_ATTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "ibsnmpd/topology.h"

/* ClassPortInfo CapabilityMask bits (IBA 16.1.3.5, PMA) */
#define PM_CAP_ALL_PORT_SELECT (1u << 8)
#define PM_CAP_EXT_WIDTH (1u << 9)          /* PortCountersExtended, IETF-style */
#define PM_CAP_EXT_WIDTH_NOIETF (1u << 10)  /* PortCountersExtended, data/pkts only */
#define PM_CAP_XMIT_WAIT (1u << 12)
#define PM_CAP_RSFEC_COUNTERS (1u << 14)    /* PortExtendedSpeedsCounters, RS-FEC layout */

/* PortCounters (IBA 16.1.3.5): 32-bit data/packet counters, error counters. */
struct pm_counters {
	uint32_t symbol_errors, link_error_recovery, link_downed, rcv_errors;
	uint32_t rcv_remote_phys_errors, rcv_switch_relay_errors, xmit_discards;
	uint32_t xmit_constraint_errors, rcv_constraint_errors;
	uint32_t local_link_integrity_errors, excessive_buffer_overruns, vl15_dropped;
	uint32_t xmit_wait;
	uint32_t xmit_data, rcv_data, xmit_pkts, rcv_pkts; /* data in 4-octet words */
};

/* PortCountersExtended: 64-bit data (4-octet words) and packet counters. */
struct pm_counters_ext {
	uint64_t xmit_data, rcv_data, xmit_pkts, rcv_pkts;
	uint64_t xmit_ucast_pkts, rcv_ucast_pkts, xmit_mcast_pkts, rcv_mcast_pkts;
};

/* PortRcvErrorDetails and PortXmitDiscardDetails (IBA 16.1.4.5, 16.1.4.6):
 * what PortRcvErrors and PortXmitDiscards count, by cause; 16 bits each. */
struct pm_error_details {
	uint16_t local_phys, malformed, buffer_overrun, dlid_mapping, vl_mapping, looping;
	uint16_t inactive, neighbor_mtu, sw_lifetime, sw_hoq_lifetime;
};

/* PortExtendedSpeedsCounters (PerfMgt 0x1F): the PHY and FEC counters of
 * a port at FDR and faster, in the layout of the FEC the port runs. */
enum pm_fec_layout {
	PM_FEC_NONE,     /* not read: the port runs no extended speed */
	PM_FEC_PER_LANE, /* error detection, FEC blocks per lane (Fire-code, FDR/EDR) */
	PM_FEC_RS,       /* RS-FEC active (HDR and faster): corrected symbols */
};

/* The port totals of either layout; what a layout lacks is 0. */
struct pm_ext_speeds {
	uint16_t sync_header_errors, unknown_blocks;
	uint32_t error_detection;      /* per lane: sum of ErrorDetectionCounterLane0..11 */
	uint32_t corrected_symbols;    /* RS: PortFECCorrectedSymbolCtr */
	uint64_t correctable_blocks;   /* RS: PortFECCorrectableBlockCtr; per lane: the sum */
	uint64_t uncorrectable_blocks; /* RS: PortFECUncorrectableBlockCtr; per lane: the sum */
};

int pm_ext_speeds_decode(const uint8_t *data, size_t len, enum pm_fec_layout layout,
			 struct pm_ext_speeds *out);
/* The layout a port's counters come in: from its active speed as the
 * discovery found it (sma_speed_generation) and its PMA's capabilities. */
enum pm_fec_layout pm_fec_layout_of(unsigned speed_generation, unsigned capmask);

int pm_counters_decode(const uint8_t *data, size_t len, struct pm_counters *out);
/* Each fills its own half of out. */
int pm_rcv_error_details_decode(const uint8_t *data, size_t len, struct pm_error_details *out);
int pm_xmit_discard_details_decode(const uint8_t *data, size_t len,
				   struct pm_error_details *out);
int pm_counters_ext_decode(const uint8_t *data, size_t len, struct pm_counters_ext *out);
int pm_classportinfo_capmask(const uint8_t *data, size_t len, unsigned *capmask);
/* Request data selecting a port (PortSelect) for PortCounters[Extended]. */
void pm_port_select(uint8_t *data, size_t len, unsigned attr_id, unsigned port);
/* A PerfMgtSet(PortCounters) that clears the counters counter_select names
 * (CounterSelect: bit 0 SymbolErrorCounter ... bit 15 PortRcvPkts) of port. */
void pm_counters_clear_encode(uint8_t *data, size_t len, unsigned port, unsigned counter_select);

/* PortSamplesControl (IBA 16.1.3.2): one sampling mechanism of a node. */
#define PM_SAMPLE_COUNTERS 15
struct pm_sample_ctl {
	unsigned opcode, port_select, tick, counter_width;
	unsigned counter_mask[PM_SAMPLE_COUNTERS]; /* 3 bits each */
	unsigned sample_mechanisms, sample_status;
	uint64_t option_mask, vendor_mask;
	uint32_t sample_start, sample_interval;
	unsigned tag;                                /* 16 bits */
	unsigned counter_select[PM_SAMPLE_COUNTERS]; /* 16 bits each */
};

/* PortSamplesResult (IBA 16.1.3.3). */
struct pm_sample_result {
	unsigned tag, sample_status;
	uint32_t counter[PM_SAMPLE_COUNTERS];
};

int pm_sample_ctl_decode(const uint8_t *data, size_t len, struct pm_sample_ctl *out);
/* The Set request: only the fields a PerformanceSet writes. */
void pm_sample_ctl_encode(const struct pm_sample_ctl *c, uint8_t *data, size_t len);
int pm_sample_result_decode(const uint8_t *data, size_t len, struct pm_sample_result *out);
/* Bits of SampleStart, SampleInterval and the result counters (CounterWidth). */
unsigned pm_sample_width_bits(unsigned counter_width);

/* ---- counters of one port, kept across sweeps ---- */

struct pm_port_state {
	uint64_t guid;
	unsigned port, lid;
	const struct topo_node *node;   /* in the snapshot's fabric */
	bool extended;                /* 64-bit counters read from the node */
	bool stale;                   /* the last sweep got no answer */
	bool have_raw;
	/* the error details: read when PortRcvErrors / PortXmitDiscards are
	 * not 0 (they count nothing those do not), else 0 */
	bool have_details;            /* as of the last read of the counters */
	bool details_unsupported;     /* the node said so: not asked again */
	bool details_stale;           /* the last read of the details got no answer */
	struct pm_error_details details;
	struct pm_counters raw;       /* last PortCounters read */
	/* PortExtendedSpeedsCounters, in the layout fec_layout names */
	uint8_t fec_layout;           /* enum pm_fec_layout; NONE: not asked */
	bool have_fec;                /* read at least once in that layout */
	bool fec_unsupported;         /* the node said so: not asked again */
	bool fec_stale;               /* the last read got no answer */
	struct pm_ext_speeds fec;
	/* totals kept across reads and clears, for the link's bit error rates:
	 * SymbolErrorCounter; errors before FEC (corrected symbols, or errors
	 * detected per lane); FEC's uncorrectable blocks */
	uint64_t symbol_errors_total, fec_raw_total, fec_uncorrectable_total;
	/* PortCountersExtended's packets by cast (its data and packet counters
	 * are the totals below, as read) */
	uint64_t xmit_ucast_pkts, rcv_ucast_pkts, xmit_mcast_pkts, rcv_mcast_pkts;
	uint64_t xmit_data, rcv_data, xmit_pkts, rcv_pkts; /* 64-bit totals, 4-octet words */
	time_t discontinuity;         /* when counting (re)started or counters were cleared */
	time_t last_read;             /* last successful read, 0 never */
};

/* Whether st's packets by cast were read: PortCountersExtended of a node
 * that counts them (one that does not leaves them 0). */
static inline bool pm_port_has_cast_counters(const struct pm_port_state *st)
{
	return st->extended && (st->rcv_ucast_pkts || st->xmit_ucast_pkts || st->rcv_mcast_pkts ||
				st->xmit_mcast_pkts);
}
/* Whether st's PortExtendedSpeedsCounters were read, in st->fec_layout. */
static inline bool pm_port_has_fec(const struct pm_port_state *st)
{
	return st->have_fec && !st->fec_unsupported && st->fec_layout != PM_FEC_NONE;
}

/* The state of (guid, port) in ports (sorted by GUID, then port), or NULL. */
const struct pm_port_state *pm_port_find(const struct pm_port_state *ports, size_t n,
					 uint64_t guid, unsigned port);

/* How much a counter rose from one reading to the next: IB's counters
 * stop at their maximum instead of wrapping, so a smaller value means
 * they were cleared, and all of it is new. */
static inline uint64_t pm_counter_rise(uint64_t before, uint64_t now)
{
	return now >= before ? now - before : now;
}

/* Folds one reading into a port's state: 64-bit totals (read, or
 * accumulated from the 32-bit counters), and a discontinuity when any
 * counter went down (someone cleared it). Pure; unit-tested. */
void pm_port_update(struct pm_port_state *st, const struct pm_counters *pc,
		    const struct pm_counters_ext *ext, time_t now);
/* Folds one PortExtendedSpeedsCounters reading into the port's state and
 * its totals. Pure; unit-tested. */
void pm_port_fec_update(struct pm_port_state *st, const struct pm_ext_speeds *fec);

#endif
