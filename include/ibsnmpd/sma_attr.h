/* SMP attributes of a node's SMA, decoded (pure: no net-snmp, no I/O), and
 * their IBA codes mapped to SMA-MIB's enumerations. The unit tests and the
 * fuzz targets link these alone. */
#ifndef IBSNMPD_SMA_ATTR_H
#define IBSNMPD_SMA_ATTR_H

#include <stddef.h>
#include <stdint.h>
#include <infiniband/mad.h>

/* NodeInfo (IBA 14.2.5.3) plus NodeDescription (14.2.5.2). */
struct sma_nodeinfo {
	char description[65];   /* NodeString, NULs and trailing blanks removed */
	unsigned base_version;
	unsigned class_version;
	unsigned node_type;     /* 1 CA, 2 switch, 3 router */
	unsigned num_ports;
	uint64_t system_image_guid;
	uint64_t node_guid;
	uint64_t port_guid;
	unsigned partition_cap;
	unsigned device_id;
	uint32_t revision;
	unsigned local_port;
	uint32_t vendor_id;     /* 24 bits */
};

/* SwitchInfo (IBA 14.2.5.4). */
struct sma_switchinfo {
	unsigned lft_cap, rft_cap, mft_cap, lft_top;
	unsigned default_port, def_mcast_pri_port, def_mcast_not_pri_port;
	unsigned lifetime, port_state_change, opt_sl2vl, lids_per_port;
	unsigned partition_enf_cap, inb_enf_cap, outb_enf_cap;
	unsigned filter_raw_inb_cap, filter_raw_outb_cap, enhanced_port0;
	unsigned mft_top;
};

/* PortInfo (IBA 14.2.5.6). */
struct sma_portinfo {
	uint64_t mkey, gid_prefix;
	unsigned lid, sm_lid;
	uint32_t cap_mask;
	unsigned diag_code, mkey_lease, local_port;
	unsigned width_enabled, width_supported, width_active;
	unsigned speed_supported, state, phys_state, link_down_default;
	unsigned mkey_protect, lmc, speed_active, speed_enabled;
	unsigned neighbor_mtu, sm_sl, vl_cap, init_type, vl_high_limit;
	unsigned vlarb_high_cap, vlarb_low_cap, init_type_reply, mtu_cap;
	unsigned vl_stall_count, hoq_life, oper_vls;
	unsigned part_enf_inb, part_enf_outb, filter_raw_inb, filter_raw_outb;
	unsigned mkey_violations, pkey_violations, qkey_violations;
	unsigned guid_cap, subnet_timeout, resp_time;
	unsigned local_phys_err, overrun_err;
	/* LinkSpeedExt*: bit 16 is XDR, from LinkSpeedExt*2 (sma_decode.c) */
	unsigned speed_ext_active, speed_ext_supported, speed_ext_enabled;
	uint32_t cap_mask2;
};

/* SMInfo (IBA 14.2.5.13). */
struct sma_sminfo {
	uint64_t guid, sm_key;
	uint32_t act_count;
	unsigned priority, state;
};

/* Decoders: pure functions over the SMP attribute data (64 octets). */
int sma_switchinfo_decode(const uint8_t *data, size_t len, struct sma_switchinfo *out);
int sma_portinfo_decode(const uint8_t *data, size_t len, struct sma_portinfo *out);
int sma_sminfo_decode(const uint8_t *data, size_t len, struct sma_sminfo *out);
/* GUIDInfo block: 8 GUIDs. */
int sma_guidinfo_decode(const uint8_t *data, size_t len, uint64_t guids[8]);
/* P_KeyTable block: 32 P_Keys. */
int sma_pkey_block_decode(const uint8_t *data, size_t len, uint16_t pkeys[32]);
/* SLtoVLMappingTable: VL of each of the 16 SLs. */
int sma_sl2vl_decode(const uint8_t *data, size_t len, uint8_t vl[16]);
/* VLArbitrationTable block: 32 (VL, weight) pairs. */
int sma_vlarb_block_decode(const uint8_t *data, size_t len, uint8_t vl[32], uint8_t weight[32]);
/* LinearForwardingTable block: egress ports of 64 LIDs. */
int sma_lft_block_decode(const uint8_t *data, size_t len, uint8_t port[64]);
/* MulticastForwardingTable block: 32 MLIDs x 16-port mask at one position. */
int sma_mft_block_decode(const uint8_t *data, size_t len, uint16_t mask[32]);
/* RandomForwardingTable block (no libibmad fields; IBA 14.2.5.11):
 * 16 entries of LID(16) Valid(1) LMC(3) reserved(4) Port(8). */
struct sma_rft_entry {
	unsigned lid, valid, lmc, port;
};
int sma_rft_block_decode(const uint8_t *data, size_t len, struct sma_rft_entry e[16]);
/* VendorDiag (no libibmad fields; IBA 14.2.5.14): NextIndex(16)
 * reserved(16) DiagData(480 bits). */
struct sma_vendordiag {
	unsigned next_index;
	uint8_t diag_data[60];
};
int sma_vendordiag_decode(const uint8_t *data, size_t len, struct sma_vendordiag *out);
/* LedInfo (no libibmad fields; IBA 14.2.5.15): LedMask bit 31. */
int sma_ledinfo_decode(const uint8_t *data, size_t len, unsigned *led_on);
int sma_nodeinfo_decode(const uint8_t *data, size_t len, struct sma_nodeinfo *out);
int sma_nodedesc_decode(const uint8_t *data, size_t len, char *out, size_t outlen);

/* ibSmaNodeType from NodeInfo's NodeType (reserved values: other(4)). */
int sma_node_type_to_mib(unsigned node_type);

/* IBA codes -> SMA-MIB enumerations and extension values (sma_enums.c). */
int sma_mib_width_enabled(unsigned v);
int sma_mib_width_supported(unsigned v);
int sma_mib_width_active(unsigned v);
int sma_mib_speed(unsigned speed, unsigned speed_ext);
int sma_mib_speed_enabled(unsigned v);
int sma_mib_port_state(unsigned v);
int sma_mib_phys_state(unsigned v);
int sma_mib_link_down_default(unsigned v);
int sma_mib_mtu(unsigned v);
int sma_mib_vls(unsigned v);
int sma_mib_mkey_protect(unsigned v);
int sma_mib_sm_state(unsigned v);
unsigned sma_mtu_octets(unsigned v);
unsigned sma_vl_count(unsigned v);
unsigned sma_width_lanes(unsigned v);
int sma_speed_generation(unsigned speed, unsigned speed_ext);
/* PortInfo CapabilityMask IsExtendedSpeedsSupported (IBA 14.2.5.6): the
 * LinkSpeedExt fields mean something only with it. */
#define SMA_PORT_CAP_EXT_SPEEDS (1u << 14)
#define SMA_PHYS_LINK_UP 5 /* PortPhysicalState LinkUp */
/* The active speed of a decoded PortInfo (sma_speed_generation), its
 * LinkSpeedExtActive only where the port has extended speeds. */
int sma_portinfo_active_speed(const struct sma_portinfo *pi);
unsigned sma_lane_data_mbps(int generation);
unsigned sma_lane_nominal_mbps(int generation);

/* The SMA-MIB notification of a trap number, 1..10; 0 if it has none. */
unsigned sma_notification_of_trap(unsigned trap_number);

#endif
