/* fabricsim: the project's simulator of modern InfiniBand fabrics, a test
 * tool. It speaks the client protocol of ibsim (what libumad2sim, preloaded
 * into any libibumad program, talks over Unix datagram sockets), so that
 * unmodified ibsnmpd and infiniband-diags run against it as against ibsim,
 * without ibsim's limits (2,048 nodes, 36-port switches, SDR-QDR) and without
 * opensm: the simulator assigns the LIDs and plays the SM itself (SMInfo,
 * InformInfo subscriptions, trap 128 Reports).
 *
 * Why a server and not a libibumad of our own: libumad2sim is Debian's, used
 * unchanged by every test bed already; a server keeps one fabric shared by
 * every client (ibsnmpd, ibnetdiscover, perfquery ...) as ibsim does. */
#ifndef FABRICSIM_H
#define FABRICSIM_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* ---- ibsim's client protocol (facts from ibsim 0.10 include/ibsim.h: the
 * layout libumad2sim sends; written here, not included: Debian ships no
 * header for it) ---- */
#define FS_MAGIC 0xdeadbeefu
#define FS_CTL_DATA 64

enum fs_ctl_type {
	FS_CTL_ERROR,
	FS_CTL_CONNECT,
	FS_CTL_DISCONNECT,
	FS_CTL_GET_PORT,
	FS_CTL_GET_VENDOR,
	FS_CTL_GET_GID,
	FS_CTL_GET_GUID,
	FS_CTL_GET_NODEINFO,
	FS_CTL_GET_PORTINFO,
	FS_CTL_SET_ISSM,
	FS_CTL_GET_PKEYS,
};

struct fs_ctl {
	uint32_t magic;
	uint32_t clientid;
	uint32_t type;
	uint32_t len;
	char data[FS_CTL_DATA];
};

struct fs_client_info {
	uint32_t id; /* the client's pid in, its client number out */
	uint32_t qp;
	uint32_t issm;
	char nodeid[32];
};

/* dlid, slid: network order in the low 16 bits; qps and status network order */
struct fs_request {
	uint32_t dlid;
	uint32_t slid;
	uint32_t dqp;
	uint32_t sqp;
	uint32_t status;
	uint64_t length;
	uint8_t mad[256];
};

struct fs_vendor {
	uint32_t vendor_id;
	uint32_t vendor_part_id;
	uint32_t hw_ver;
	uint64_t fw_ver;
};

struct fs_port_lid {
	uint16_t lid;
	uint8_t state;
};

/* ---- the model ---- */
#define FS_NO_PORT UINT32_MAX
#define FS_MAX_LID 0xbfff /* unicast LIDs 1..49151 */

enum fs_speed { FS_SDR, FS_DDR, FS_QDR, FS_FDR, FS_EDR, FS_HDR, FS_NDR, FS_XDR, FS_SPEEDS };

enum fs_node_type { FS_CA = 1, FS_SWITCH = 2 };


enum fs_error {
	FS_SYMBOL_ERRORS,
	FS_LINK_RECOVERS,
	FS_LINK_DOWNED,
	FS_RCV_ERRORS,
	FS_RCV_REMOTE_PHYS,
	FS_RCV_SWITCH_RELAY,
	FS_XMIT_DISCARDS,
	FS_XMIT_CONSTRAINT,
	FS_RCV_CONSTRAINT,
	FS_LOCAL_LINK_INTEGRITY,
	FS_EXCESSIVE_OVERRUN,
	FS_VL15_DROPPED,
	FS_XMIT_WAIT,
	/* PortExtendedSpeedsCounters (0x1F): port totals; the per-lane fields
	 * of either layout split them evenly over the active lanes */
	FS_SYNC_HEADER_ERRORS,
	FS_UNKNOWN_BLOCKS,
	FS_ERROR_DETECTION,        /* older layout: ErrorDetectionCounterLane* */
	FS_FEC_CORRECTABLE_BLOCKS,
	FS_FEC_UNCORRECTABLE_BLOCKS,
	FS_FEC_CORRECTED_SYMBOLS,  /* RS-FEC layout: FECCorrectableSymbolCtrLane* */
	FS_ERRORS
};

/* counters set from the console (PerformanceSet, CounterRate), kept only
 * for the ports that have any: most ports never do. A counter is
 * v + rate x (now - since): a rate moves it at a known pace. */
struct fs_port_errors {
	uint64_t v[FS_ERRORS];
	double rate[FS_ERRORS]; /* per second */
	double since[FS_ERRORS];
};

/* the four data counters: they move with time while the link is up */
enum fs_data { FS_XMIT_DATA, FS_RCV_DATA, FS_XMIT_PKTS, FS_RCV_PKTS, FS_DATAS };

struct fs_port {
	uint32_t peer;      /* the cabled port at the other end, FS_NO_PORT if none */
	uint32_t errors;    /* index + 1 into fabric.errors, 0 if none set */
	uint16_t lid;
	uint8_t num;
	uint8_t up;         /* cabled and not Unlinked */
	uint8_t width;      /* LinkWidthActive, IBA encoding (1 1X, 2 4X, 4 8X, 8 12X, 16 2X) */
	uint8_t speed;      /* enum fs_speed */
	uint8_t err_rate;   /* Error: per cent of answers turned into status 110 */
	uint8_t mkey_protect; /* PortInfo MKeyProtectBits 0-3 (a switch: its port 0's) */
	/* PortInfo as the console set it, 0: as the model has it (a fabric
	 * misconfigured: an MTU, VLs or a state the SM left, a LID claimed) */
	uint8_t mtu_set, vls_set, state_set, lid_is_set;
	uint16_t lid_set;
	uint64_t data_offset[FS_DATAS]; /* value subtracted: clears and sets */
	double up_seconds;  /* time up before up_since */
	double up_since;    /* when it came up (if up) */
	/* M_Key, as IBA 14.2.4 and Linux's software SMAs enforce it: of a CA's
	 * port, or of a switch's port 0 for the whole switch */
	uint64_t mkey;
	uint16_t mkey_lease;      /* MKeyLeasePeriod, seconds; 0: no lease */
	uint16_t mkey_violations; /* MKeyViolations (stops at 0xffff) */
	double mkey_lease_end;    /* a violation's countdown: then protect bits 0; 0 none */
};

struct fs_node {
	char *name;           /* the console's name, and its NodeDescription but for desc */
	char *desc;           /* NodeDescription when it is not name (--real-names) */
	uint64_t guid;
	uint64_t sys_guid;
	uint32_t first_port;  /* index of port 0 in fabric.ports */
	uint32_t component;   /* nodes reach each other within one component */
	uint16_t lid;         /* of port 0 (switch) or port 1 (CA) */
	uint16_t device_id;
	uint8_t type;         /* enum fs_node_type */
	uint8_t nports;
	uint8_t dead;         /* Dead: answers nothing at all */
	uint8_t vendor;       /* enum fs_vendor_mode: how it answers NVIDIA's vendor MADs */
	/* an SM on its port (a CA's port 1, a switch's port 0): SMInfo SMState
	 * + 1 (0: none), Priority, ActCount and whether it is frozen (an SM
	 * that answers and does nothing); the SM of sm_node is master */
	uint8_t sm_state, sm_priority, sm_frozen;
	uint32_t sm_act;
	uint32_t vendor_mads; /* vendor MADs that reached it, answered or not */
	/* a slow or lossy management processor (the console's Delay, Rate,
	 * Loss): each answer held delay_ms +/- jitter_ms; at most rate answers
	 * a second, the others waiting in its queue of queue_max (beyond it
	 * unanswered); loss percent of the MADs that reach it unanswered */
	uint32_t delay_ms, jitter_ms, rate, queue_max;
	uint8_t loss;
	uint32_t queued;      /* answers waiting in its queue now */
	double next_slot;     /* when its processor is next free (rate) */
	uint32_t lost;        /* MADs it left unanswered (Loss, a full queue) */
};

/* ---- NVIDIA's vendor MADs and their registers (vendor.c) ---- */

/* How a node answers class 0x0A and the SMP AccessRegister: as an NVIDIA
 * device, as another vendor's (VendorID not NVIDIA's, no answer, as real
 * ones do not answer), silent, "attribute not supported", or GeneralInfo
 * but "register not supported" for the registers in fs_vitals.noreg. */
enum fs_vendor_mode {
	FS_VENDOR_NVIDIA,
	FS_VENDOR_OTHER,
	FS_VENDOR_SILENT,
	FS_VENDOR_UNSUPPORTED,
	FS_VENDOR_NOREG,
};

enum fs_module_state { FS_MODULE_PLUGGED, FS_MODULE_UNPLUGGED, FS_MODULE_FAULT };

#define FS_TACHOS_MAX 16
#define FS_LANES_MAX 8

/* A cage's occupant: its identity comes from the model (the cable at its
 * port); what the console set overrides the model's moving values. */
struct fs_module {
	uint8_t state;            /* enum fs_module_state */
	uint8_t error_type;       /* PMAOS error_type while FAULT */
	bool temp_set;
	bool rx_set[FS_LANES_MAX];
	double temp_c;
	double rx_dbm[FS_LANES_MAX];
};

/* Per node, made at its first vendor MAD or console command. */
struct fs_vitals {
	bool asic_set, amb_set[2];
	double asic_c, amb_c[2];
	int fan_rpm[FS_TACHOS_MAX]; /* -1: the model's */
	double max_asic_c;          /* MTMP max_temperature of the ASIC */
	uint32_t noreg;             /* FS_VENDOR_NOREG: bit per enum fs_register */
	unsigned n_modules;
	struct fs_module *modules;
	uint32_t icmd_ctrl;         /* the ICMD gateway's control dword (vendor.c) */
	uint32_t *icmd_mailbox;     /* its mailbox, made at the first use */
};

/* A switch's LinearForwardingTable as the console broke it: one entry set
 * (port 255: none), or the whole table cleared (lid 0). The model's routes
 * stand for the rest. */
struct fs_lft_fault {
	uint32_t node;
	uint16_t lid;
	uint8_t port;
};

struct fs_subscriber {
	int client;
	uint16_t trap;
};

struct fabric {
	struct fs_node *nodes;
	uint32_t nnodes, nswitches;
	struct fs_port *ports;
	uint32_t nports;
	uint32_t lid_port[FS_MAX_LID + 1]; /* LID -> port index */
	uint16_t max_lid;
	uint32_t sm_node;
	struct fs_port_errors *errors;
	uint32_t nerrors, errors_cap;
	double epoch;                      /* CLOCK_MONOTONIC at start */
	uint8_t **dist;                    /* per switch: hops to every switch, lazily */
	uint32_t *switch_index;            /* node -> switch number, or UINT32_MAX */
	uint32_t *switches;                /* switch number -> node */
	struct fs_subscriber subs[64];
	int nsubs;
	uint32_t sm_activity; /* unused: each SM counts its own (fs_node.sm_act) */
	uint16_t notice_count;
	/* an M_Key violation the last SMP caused: trap 256 for the SM's
	 * subscribers (server.c sends it, fs_trap256) */
	bool bad_mkey;
	struct fs_bad_mkey {
		uint16_t lid;
		uint8_t method;
		uint16_t attr;
		uint32_t mod;
		uint64_t key;
		uint32_t node;
		uint8_t port;
	} bad_mkey_at;
	uint8_t default_speed, default_width;
	uint8_t fabric_id;                 /* --fabric-id: in every GUID, one fabric's apart */
	struct fs_vitals **vitals;         /* per node, NULL until used */
	struct fs_lft_fault *lft_faults;   /* the console's (Lft), few */
	uint32_t n_lft_faults;
};

/* model.c */
double fs_now(void);
uint32_t fs_add_node(struct fabric *f, enum fs_node_type type, uint8_t nports, const char *name);
void fs_cable(struct fabric *f, uint32_t node_a, uint8_t port_a, uint32_t node_b, uint8_t port_b);
void fs_finish(struct fabric *f);
/* A node added to a running fabric (console Add): its LIDs after the
 * others', not cabled; UINT32_MAX if the LIDs are spent. */
uint32_t fs_add_node_live(struct fabric *f, enum fs_node_type type, uint8_t nports,
			  const char *name);
/* Ports a and b (indexes) cabled to each other and up (console Link with two
 * ports); what either was cabled to is left without a cable. */
void fs_recable(struct fabric *f, uint32_t a, uint32_t b);
struct fs_port *fs_port_of(struct fabric *f, uint32_t node, uint8_t num);
uint32_t fs_port_index(struct fabric *f, uint32_t node, uint8_t num);
uint32_t fs_node_of_port(const struct fabric *f, uint32_t port_index);
int fs_find_node(const struct fabric *f, const char *name);
void fs_set_link(struct fabric *f, uint32_t port_index, bool up);
void fs_components(struct fabric *f);
uint64_t fs_data_counter(const struct fabric *f, uint32_t port_index, enum fs_data which);
void fs_set_data_counter(struct fabric *f, uint32_t port_index, enum fs_data which,
			 uint64_t value);
struct fs_port_errors *fs_errors(struct fabric *f, uint32_t port_index, bool create);
/* an error counter now (0 for a port without any set) */
uint64_t fs_error_value(struct fabric *f, uint32_t port_index, enum fs_error which);
void fs_set_error(struct fabric *f, uint32_t port_index, enum fs_error which, uint64_t value);
void fs_set_error_rate(struct fabric *f, uint32_t port_index, enum fs_error which,
		       double per_second);
/* IBA FECModeActive of a port: 2 RS-FEC (HDR and faster), 1 Fire-code
 * (FDR, EDR), 0 none */
unsigned fs_fec_mode(const struct fs_port *p);
unsigned fs_lanes(uint8_t width);
uint64_t fs_port_guid(const struct fabric *f, uint32_t node, uint8_t num);
uint64_t fs_link_bps(uint8_t speed, uint8_t width);
int fs_route_port(struct fabric *f, uint32_t node, uint16_t lid);
int fs_sm_route_port(struct fabric *f, uint32_t node, uint16_t lid);
/* An entry of a switch's table set (port 255: none; lid 0: every entry),
 * or (port -1) the switch's entries as the model routes them again; -1 out
 * of memory. */
int fs_set_lft(struct fabric *f, uint32_t node, uint16_t lid, int port);
void fs_write_links(const struct fabric *f, FILE *out);
/* names as the console and the command line take them: -1 if unknown */
int fs_speed_by_name(const char *name);
int fs_width_by_name(const char *name);

/* generate.c */
/* NodeDescriptions as real fabrics have them (--real-names): a switch's
 * factory description, the same for every switch of its model, the core
 * switches' as an operator set them, a host adapter's as rdma-ndd sets it
 * ("HOSTNAME mlx5_N"). The console's names stay. */
void fs_real_names(struct fabric *f);
enum fs_layout { FS_FATTREE3, FS_FATTREE2, FS_RAIL };
int fs_generate(struct fabric *f, enum fs_layout layout, unsigned radix, unsigned hosts,
		char *err, size_t errlen);

/* mads.c: the answer to one request in place; false: none (dropped) */
struct fs_origin {
	int client;
	uint32_t port; /* the client's port */
};
bool fs_answer(struct fabric *f, const struct fs_origin *from, struct fs_request *r);
/* The answer fs_answer made is held until *due (fs_now()'s clock) by the
 * node that answers, which is *node; 0: sent at once. Set by fs_answer. */
extern double fs_answer_due;
extern uint32_t fs_answer_node;
/* An SA Get or GetTable of NodeRecord, PortInfoRecord or LinkRecord: its
 * answer, segment by segment, to emit; the number of segments, 0 if req is
 * not one (fs_answer then), -1 out of memory. */
int fs_sa_table(struct fabric *f, const struct fs_origin *from, const struct fs_request *req,
		void (*emit)(void *ctx, const struct fs_request *seg), void *ctx);
void fs_encode_nodeinfo(struct fabric *f, uint32_t node, uint8_t entry_port, uint8_t *data);
void fs_encode_portinfo(struct fabric *f, uint32_t node, uint8_t num, uint8_t entry_port,
			uint8_t *data);
/* a Report(Notice 128) from a switch, for subscribers: filled in r but for
 * its destination */
void fs_trap128(struct fabric *f, uint32_t switch_node, struct fs_request *r);
/* a Report(Notice 256, Bad M_Key) of f->bad_mkey_at, for subscribers */
void fs_trap256(struct fabric *f, struct fs_request *r);
/* a SubnTrap a client sent to the SM (a node's SMA trap, as
 * sim-trap-injector sends): its Report for subscribers in report, its trap
 * number returned; -1 if r is not one */
int fs_forward_trap(struct fabric *f, const struct fs_origin *from, struct fs_request *r,
		    struct fs_request *report);
/* M_Key: every port's (key, protect bits, lease): at start (--mkey) and from
 * the console (MKey) */
void fs_set_mkey(struct fabric *f, int node, uint64_t key, int protect, int lease);

/* vendor.c: class 0x0A (LID-routed GMP: ClassPortInfo, GeneralInfo,
 * ConfigSpaceAccess of the hardware ID, AccessRegister by TLVs and by GMP)
 * and the SMP AccessRegister (attribute 0xFF52). The answer's status (0 or
 * a MAD status); -1: no answer at all. mad is the whole MAD. */
int fs_vendor_gmp(struct fabric *f, uint32_t node, unsigned method, unsigned attr, uint32_t mod,
		  uint8_t *mad);
int fs_vendor_smp(struct fabric *f, uint32_t node, unsigned method, uint8_t *smp_data);
/* NodeInfo's VendorID of a node */
uint32_t fs_vendor_id(const struct fabric *f, uint32_t node);
struct fs_vitals *fs_vitals_of(struct fabric *f, uint32_t node);
/* the module behind a node's port (switches: two ports a cage), or -1 */
int fs_module_of_port(const struct fabric *f, uint32_t node, unsigned port);
/* the register a name means (MGIR ...), or -1 */
int fs_register_by_name(const char *name);

/* console.c: one command line; output to out. fs_answered: MADs answered
 * by class, counted by the server for Stats. Vendor: NVIDIA's class 0x0A
 * and the SMPs of vendor-specific attributes (0xFF00 up: AccessRegister),
 * the register reads a switch's management processor answers; routing:
 * the SMPs of LinearForwardingTable (the routing checks' reads). */
enum fs_class { FS_SMP, FS_PERFMGT, FS_SA, FS_UNDELIVERABLE, FS_VENDOR, FS_ROUTING, FS_CLASSES };
extern unsigned long fs_answered[FS_CLASSES];
/* Which count a MAD answered (status: not delivered) goes to. */
enum fs_class fs_class_of(const uint8_t *mad, uint32_t status);
void fs_console(struct fabric *f, char *line, FILE *out,
		void (*link_changed)(struct fabric *f, uint32_t node));

#endif
