/* The hardware of every node of the subnet (the vitals area, src/vitals/):
 * temperatures, fans, inventory and every transceiver with its optics,
 * read in-band with NVIDIA's vendor MADs (vitals_attr.h).
 *
 *   vitals_area.c      the area: tokens, cache groups, what it follows
 *   vitals_inventory.c the inventory (per node once, when it appears or
 *                      restarts: GeneralInfo, MGIR, MSGI, MTCAP, MFCR,
 *                      MGPIR, PMLP of every port); reading a register
 *   vitals_readings.c  the readings (every vitalsSensors: MGIR's uptime,
 *                      MTMP, MFSM, FORE, PMAOS, PDDR; MCIA where PDDR is
 *                      not there; after a topology patch, only what it
 *                      names), built by vitals_build.c; the groups
 *   vitals_build.c     pure: a readings snapshot from the inventory, the
 *                      readings and the previous snapshot; the conditions
 *                      (hot, fan failed, module out or faulted, Rx power
 *                      low) and the events they notify
 *   vitals_decode.c    pure: the MADs, registers and EEPROM (vitals_attr.h)
 *   vitals_mib.c       IBSNMPD-MIB::ibsnmpdVitals in the default context
 *   vitals_notify.c    an observer of the readings: the notifications
 * The node contexts' ENTITY-MIB and ENTITY-SENSOR-MIB read the readings
 * snapshot (node_dir.c, node_entity_mib.c); /metrics too (prom). */
#ifndef IBSNMPD_VITALS_H
#define IBSNMPD_VITALS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "ibsnmpd/cache.h"
#include "ibsnmpd/mib_table.h"
#include "ibsnmpd/topology.h"
#include "ibsnmpd/vitals_attr.h"

/* Why a node's vitals are (not) read: ibsnmpdVitalsNodeStatus. */
enum vitals_status {
	VITALS_READ = 1,            /* they are */
	VITALS_NOT_NVIDIA = 2,      /* NodeInfo's VendorID: no NVIDIA vendor class */
	VITALS_NO_ANSWER = 3,       /* GeneralInfo went unanswered */
	VITALS_UNSUPPORTED = 4,     /* GeneralInfo: attribute or class not supported */
	VITALS_NO_REGISTERS = 5,    /* registers not supported (MGIR refused) */
	VITALS_PENDING = 6,         /* not asked yet */
	VITALS_DISABLED = 7,        /* vitalsNodes leaves its type out */
};

/* Registers a node refused (bits of vitals_inv_node.missing) */
enum vitals_reg_bit {
	VITALS_R_MGIR, VITALS_R_MSGI, VITALS_R_MTCAP, VITALS_R_MTMP, VITALS_R_MFCR, VITALS_R_MFSM,
	VITALS_R_FORE, VITALS_R_MGPIR, VITALS_R_PMAOS, VITALS_R_PMLP, VITALS_R_PDDR, VITALS_R_MCIA,
	VITALS_R_COUNT
};

#define VITALS_MODULES_MAX 255

/* ---- the inventory: what a node is and has (read once) ---- */

struct vitals_inv_node {
	uint64_t guid;
	unsigned lid, type, num_ports;
	const char *desc;          /* in the inventory's discovery */
	enum vitals_status status;
	bool by_gmp;               /* registers over AccessRegisterGMP, else class 0x0A TLVs */
	uint32_t missing;          /* 1 << enum vitals_reg_bit: not supported */
	struct vitals_mgir mgir;
	bool have_msgi;
	struct vitals_msgi msgi;
	uint64_t sensor_map;       /* MTCAP: ASIC and ambient sensors */
	uint16_t tachos;           /* MFCR: active tachometers */
	unsigned n_modules;        /* MGPIR */
	/* each port's module and first lane (PMLP): port_module[first_port + p - 1],
	 * 0xff where PMLP said nothing */
	size_t first_port;
	time_t read_at;            /* wall clock */
};

struct vitals_port_map {
	uint8_t module, first_lane, width; /* width: the port's lanes */
};

/* A node gone from the topology, as its last inventory had it */
struct vitals_departed {
	struct vitals_inv_node node;  /* desc NULL */
	struct vitals_port_map *ports; /* its num_ports */
};

struct vitals_inventory {
	unsigned refs;             /* held by the readings snapshots built on it */
	const struct topology *fabric; /* held */
	size_t n;
	struct vitals_inv_node *nodes;  /* sorted by GUID */
	size_t n_ports;
	struct vitals_port_map *ports;
};

void vitals_inventory_put(const struct vitals_inventory *inv);
const struct vitals_inventory *vitals_inventory_get(const struct vitals_inventory *inv);
const struct vitals_inv_node *vitals_inventory_find(const struct vitals_inventory *inv,
						    uint64_t guid);

/* ---- the readings ---- */

/* A temperature sensor: MTMP's ASIC (0) and ambient ones; in 1/8 degree */
struct vitals_temp {
	uint64_t guid;
	uint16_t sensor;
	int16_t temp, max, threshold_hi, threshold_lo;
	char name[9];
	bool high;                 /* at or over threshold_hi, until under threshold_lo */
	bool stale;
	uint8_t events;            /* VITALS_EV_* to send */
};

/* A tachometer (MFSM, FORE) */
struct vitals_fan {
	uint64_t guid;
	uint16_t tacho;
	uint16_t rpm;
	bool under, over;          /* FORE: under or over its limits */
	bool failed;               /* under its limit, or stopped */
	bool stale;
	uint8_t events;
};

/* A transceiver or cable end in a cage (PMAOS, PDDR page 3 or the EEPROM) */
struct vitals_module {
	uint64_t guid;
	uint16_t module;           /* PRM module number (0-based) */
	uint16_t first_port, n_ports; /* the ports it serves (PMLP) */
	uint8_t oper_status;       /* enum vitals_module_oper */
	uint8_t error_type;
	bool have_info;            /* identity and monitors read (now or before) */
	bool from_eeprom;          /* MCIA, PDDR being not supported */
	struct vitals_module_info info;
	uint32_t first_lane, n_lanes; /* its rows in lanes[] */
	bool stale;
	uint8_t events;
};

/* A lane of a port (PDDR: the port's lanes 1..4) */
struct vitals_lane {
	uint64_t guid;
	uint16_t port;
	uint8_t lane;              /* 1-based, of the port */
	uint16_t module;
	uint16_t rx_uw, tx_uw, bias; /* bias in 2 uA */
	bool rx_low;               /* under the module's low alarm, until 1 dB over it */
	uint8_t events;
};

/* Events of a row (ibsnmpdNotifications.N) */
#define VITALS_EV_TEMP_HIGH (1u << 0)
#define VITALS_EV_TEMP_NORMAL (1u << 1)
#define VITALS_EV_FAN_FAILED (1u << 2)
#define VITALS_EV_FAN_RESTORED (1u << 3)
#define VITALS_EV_MODULE_REMOVED (1u << 4)
#define VITALS_EV_MODULE_INSERTED (1u << 5)
#define VITALS_EV_MODULE_FAULTED (1u << 6)
#define VITALS_EV_RX_LOW (1u << 0)
#define VITALS_EV_RX_NORMAL (1u << 1)

/* A node's readings: its rows in the arrays below */
struct vitals_node {
	uint64_t guid;
	const struct vitals_inv_node *inv; /* in the snapshot's inventory */
	enum vitals_status status;
	bool stale;                /* its last readings went unanswered */
	uint32_t uptime_s;         /* at read_at */
	time_t read_at;            /* wall clock of the last answered reading; 0 never */
	uint32_t first_temp, n_temps, first_fan, n_fans, first_module, n_modules;
	uint32_t first_lane, n_lanes;
	unsigned fans_failed, modules_in;
	int hottest_module;        /* 1/256 degree; INT16_MIN: none */
	bool have_asic;            /* its sensor 0 (the ASIC): 1/8 degree */
	int16_t asic_temp, asic_max, asic_hi;
	bool restarted;            /* its uptime went back: inventory again */
};

struct vitals_snapshot {
	const struct vitals_inventory *inv; /* held */
	size_t n_nodes, n_temps, n_fans, n_modules, n_lanes;
	struct vitals_node *nodes;   /* sorted by GUID; each array by (GUID, its index) */
	struct vitals_temp *temps;
	struct vitals_fan *fans;
	struct vitals_module *modules;
	struct vitals_lane *lanes;
	struct mib_rows node_rows, temp_rows, fan_rows, module_rows, lane_rows;
	time_t built;
};

void vitals_snapshot_free(void *p);
const struct vitals_node *vitals_find_node(const struct vitals_snapshot *s, uint64_t guid);

/* What a readings sweep got from one node, for vitals_build: pointers into
 * the sweep's own arrays (sorted as the snapshot's), or all empty for a
 * node that did not answer. */
struct vitals_reading {
	uint64_t guid;
	bool answered;             /* MGIR answered */
	uint32_t uptime_s;
	struct vitals_temp *temps;
	size_t n_temps;
	struct vitals_fan *fans;
	size_t n_fans;
	struct vitals_module *modules;
	size_t n_modules;
	struct vitals_lane *lanes;
	size_t n_lanes;
};

struct vitals_build {
	const struct vitals_inventory *inv;
	const struct vitals_reading *readings; /* sorted by GUID; one per node of inv read */
	size_t n_readings;
	const struct vitals_snapshot *prev;    /* NULL: the first */
	time_t now;
	/* a sweep of some nodes only (those a topology patch named): a node
	 * not read keeps its rows as they were, stale or not */
	bool partial;
};

/* The new snapshot (NULL: out of memory). Pure; unit-tested. A node or
 * row not read now (but for a partial sweep's) keeps its last values,
 * marked stale; the conditions
 * follow their hysteresis, and a change of one is an event (none at a
 * node's first reading: what is wrong then is served, not notified). */
struct vitals_snapshot *vitals_build(const struct vitals_build *in);

/* Rx power under the low alarm: low until it is this factor over it
 * (1 dB) */
#define VITALS_RX_CLEAR_FACTOR 1.2589

/* ---- the area ---- */

struct vitals_area;

/* IBSNMPD-MIB::ibsnmpdVitals (vitals_mib.c) */
#define VITALS_MIB_TABLES 5
struct vitals_mib {
	struct vitals_area *area;
	struct mib_table tables[VITALS_MIB_TABLES];
};
int vitals_mib_register(struct vitals_mib *m, struct vitals_area *a, const char *context);
void vitals_mib_unregister(struct vitals_mib *m);
/* A column of a row of the tables (the notifications carry the same): 0,
 * or -1 without a value */
int vitals_mib_node_column(const struct vitals_node *n, unsigned column, netsnmp_variable_list *vb);
int vitals_mib_temp_column(const struct vitals_temp *t, unsigned column, netsnmp_variable_list *vb);
int vitals_mib_fan_column(const struct vitals_fan *f, unsigned column, netsnmp_variable_list *vb);
int vitals_mib_module_column(const struct vitals_module *m, unsigned column,
			     netsnmp_variable_list *vb);
int vitals_mib_lane_column(const struct vitals_lane *l, unsigned column, netsnmp_variable_list *vb);

struct vitals_area {
	struct cache_group inventory;  /* snapshot: struct vitals_inventory */
	struct cache_group readings;   /* snapshot: struct vitals_snapshot */
	struct cache_group *topology;
	struct cache_observer discovered, inventoried, notified;
	unsigned types_mask;           /* vitalsNodes: 1 << node type */
	/* nodes to inventory again at the next inventory sweep (restarted) */
	uint64_t *again;
	size_t n_again, cap_again;
	bool inventory_all;            /* the whole subnet at the next one */
	/* nodes whose readings went unanswered, sorted by GUID: not asked
	 * again for VITALS_SILENT_RETRY_S, or until the next discovery */
	struct vitals_silent { uint64_t guid; time_t since; } *silent;
	size_t n_silent;
	/* What topology patches named since the readings began: nodes new or
	 * back (read whole), switch ports whose module is read again; the
	 * next readings read only those (vitals_sweep_patched), unless a
	 * discovery or the periodic sweep wants every node. */
	uint64_t *read_whole;
	size_t n_read_whole, cap_read_whole;
	struct topo_port_ref *module_ports;
	size_t n_module_ports, cap_module_ports;
	bool readings_whole;           /* the next readings read every node */
	time_t readings_full_at;       /* monotonic s: the last readings of every node began */
	bool inventory_patch;          /* the next inventory reads only nodes it lacks */
	bool inventory_pending;        /* a patch came while the inventory ran */
	/* Nodes that left the topology, their inventory kept (sorted by GUID)
	 * for when they come back within vitalsInventory's lifetime */
	struct vitals_departed *departed;
	size_t n_departed;
	struct vitals_mib mib;
};

struct area_def;
extern const struct area_def vitals_area_def;

/* The sweeps (vitals_readings.c, vitals_inventory.c), started by the area. */
void vitals_sweep_init(struct vitals_area *a, unsigned inventory_s, unsigned readings_s);
void vitals_sweep_stop(struct vitals_area *a);
/* A discovery was published: its new nodes are inventoried, silent nodes
 * read again. */
void vitals_sweep_discovered(struct vitals_area *a);
/* A topology patched from the one before (f; before: the one published
 * before it): its new nodes inventoried (those that were here before keep
 * their inventory) and read, the nodes back read, and the modules of the
 * switch ports it names read again; nothing else. */
void vitals_sweep_patched(struct vitals_area *a, const struct topology *before,
			  const struct topology *f);
/* An observer of the readings: the notifications (vitals_notify.c). */
/* The active alarms of a readings snapshot: alarm.h. */
struct alarm_list;
void vitals_alarms(const void *snapshot, struct alarm_list *out);
void vitals_notify_published(struct cache_group *g, const void *before, const void *after,
			     void *arg);

#endif
