/* From IBA attribute codes to SMA-MIB's enumerations (SYNTAX of each object),
 * and to the plain numbers of the project's extension objects. Pure. */
#include "ibsnmpd/sma_attr.h"

/* LinkWidthEnabled: noStateChange(1) oneX(2) fourX(3) oneXOr4X(4) twelveX(5)
 * oneXOr12X(6) fourXOr12X(7) oneX4XOr12X(8) linkWidthSupported(9) other(10) */
int sma_mib_width_enabled(unsigned v)
{
	switch (v) {
	case 0: return 1;
	case 1: return 2;
	case 2: return 3;
	case 3: return 4;
	case 8: return 5;
	case 9: return 6;
	case 10: return 7;
	case 11: return 8;
	case 255: return 9;
	default: return 10;
	}
}

/* LinkWidthSupported: oneX(1) oneXOr4X(2) oneX4XOr12X(3) other(4) */
int sma_mib_width_supported(unsigned v)
{
	switch (v) {
	case 1: return 1;
	case 3: return 2;
	case 11: return 3;
	default: return 4;
	}
}

/* LinkWidthActive: oneX(1) fourX(2) twelveX(3) other(4) (8X, 2X) */
int sma_mib_width_active(unsigned v)
{
	switch (v) {
	case 1: return 1;
	case 2: return 2;
	case 8: return 3;
	default: return 4;
	}
}

/* LinkSpeedSupported / LinkSpeedActive: twoPoint5Gbps(1) other(2). A port
 * running an extended speed (FDR and up) reports it in LinkSpeedExtActive. */
int sma_mib_speed(unsigned speed, unsigned speed_ext)
{
	return speed == 1 && speed_ext == 0 ? 1 : 2;
}

/* LinkSpeedEnabled: noStateChange(1) twoPoint5Gbps(2) linkSpeedSupported(3)
 * other(4) */
int sma_mib_speed_enabled(unsigned v)
{
	switch (v) {
	case 0: return 1;
	case 1: return 2;
	case 15: return 3;
	default: return 4;
	}
}

/* PortState 0..4 -> noChange(1) down(2) init(3) armed(4) active(5); other(6) */
int sma_mib_port_state(unsigned v)
{
	return v <= 4 ? (int)v + 1 : 6;
}

/* PortPhysicalState 0..6 -> noChange(1) .. linkErrorRecovery(7); other(8) */
int sma_mib_phys_state(unsigned v)
{
	return v <= 6 ? (int)v + 1 : 8;
}

/* LinkDownDefaultState 0..2 -> noChange(1) sleep(2) polling(3); other(4) */
int sma_mib_link_down_default(unsigned v)
{
	return v <= 2 ? (int)v + 1 : 4;
}

/* MTU codes 1..5 (256..4096) -> mtu256(1)..mtu4096(5); other(6) */
int sma_mib_mtu(unsigned v)
{
	return v >= 1 && v <= 5 ? (int)v : 6;
}

/* VLCap / OperationalVLs 1..5 -> vl0(1)..vl0ToVl14(5); other(6) */
int sma_mib_vls(unsigned v)
{
	return v >= 1 && v <= 5 ? (int)v : 6;
}

/* M_KeyProtectBits 0..3 -> noMKeyProtection(1)..failOnNoMatch(4) */
int sma_mib_mkey_protect(unsigned v)
{
	return (int)(v & 3) + 1;
}

/* SMInfo SMState 0..3 -> notActive(2) discovering(3) standby(4) master(5) */
int sma_mib_sm_state(unsigned v)
{
	return v <= 3 ? (int)v + 2 : 1;
}

/* Extension values: octets of an MTU code, data VLs of a VL code. */
unsigned sma_mtu_octets(unsigned v)
{
	return v >= 1 && v <= 5 ? 128u << v : 0;
}

unsigned sma_vl_count(unsigned v)
{
	static const unsigned n[] = {0, 1, 2, 4, 8, 15};

	return v <= 5 ? n[v] : 0;
}

unsigned sma_width_lanes(unsigned v)
{
	switch (v) {
	case 1: return 1;
	case 2: return 4;
	case 4: return 8;
	case 8: return 12;
	case 16: return 2;
	default: return 0;
	}
}

/* Active speed as the extension's enumeration: sdr(1) ddr(2) qdr(3) fdr(4)
 * edr(5) hdr(6) ndr(7) xdr(8) other(9); and per lane: the signalling rate
 * and the data rate in Mb/s (encoding overhead removed). */
int sma_speed_generation(unsigned speed, unsigned speed_ext)
{
	switch (speed_ext) {
	case 1: return 4;
	case 2: return 5;
	case 4: return 6;
	case 8: return 7;
	case 16: return 8;
	case 0: break;
	default: return 9;
	}
	switch (speed) {
	case 1: return 1;
	case 2: return 2;
	case 4: return 3;
	default: return 9;
	}
}

int sma_portinfo_active_speed(const struct sma_portinfo *pi)
{
	return sma_speed_generation(pi->speed_active, (pi->cap_mask & SMA_PORT_CAP_EXT_SPEEDS) ?
						       pi->speed_ext_active : 0);
}

unsigned sma_lane_data_mbps(int generation)
{
	static const unsigned mbps[] = {0, 2000, 4000, 8000, 13636, 25000, 50000, 100000, 200000};

	return generation >= 1 && generation <= 8 ? mbps[generation] : 0;
}

/* The nominal rate of a lane as the IBTA and the vendors name a link ("4X
 * QDR 40 Gb/s", "4X FDR 56 Gb/s", "4X EDR 100 Gb/s"), in Mb/s. */
unsigned sma_lane_nominal_mbps(int generation)
{
	static const unsigned mbps[] = {0, 2500, 5000, 10000, 14000, 25000, 50000, 100000, 200000};

	return generation >= 1 && generation <= 8 ? mbps[generation] : 0;
}

/* SMA-MIB ibSmaNotifications 1..10, in the draft's order */
static const unsigned trap_of_notification[] = {128, 129, 130, 131, 144, 145,
						256, 257, 258, 259};

unsigned sma_notification_of_trap(unsigned trap_number)
{
	for (unsigned i = 0; i < sizeof(trap_of_notification) / sizeof(trap_of_notification[0]); i++)
		if (trap_of_notification[i] == trap_number)
			return i + 1;
	return 0;
}
