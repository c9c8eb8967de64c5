/* ibsnmpd configuration: the values of ibsnmpd.conf's tokens. */
#ifndef IBSNMPD_CONFIG_H
#define IBSNMPD_CONFIG_H

/* The name net-snmp knows the daemon by: its configuration files are
 * APP_NAME.conf and APP_NAME.local.conf. */
#define APP_NAME "ibsnmpd"

#include <stdbool.h>

#include <stddef.h>
#include <stdint.h>

#define IBSNMPD_CA_NAME_MAX 64
#define IBSNMPD_SAMPLE_NODES_MAX 256

enum cache_group_id {
	CACHE_NODE_INFO,
	CACHE_SWITCH_INFO,
	CACHE_PORT_INFO,
	CACHE_GUID_INFO,
	CACHE_PKEY,
	CACHE_SL2VL,
	CACHE_VLARB,
	CACHE_LFT,
	CACHE_MFT,
	CACHE_RFT,
	CACHE_SM_INFO,
	CACHE_VENDOR_DIAG,
	CACHE_LED_INFO,
	CACHE_SMA_COUNT, /* the groups above are SMA-MIB's, one node's */
	CACHE_PM_COUNTERS = CACHE_SMA_COUNT,
	CACHE_PM_SAMPLES,
	CACHE_PARTITION_STATUS,
	CACHE_DCBX,
	CACHE_FABRIC_PORTS,
	CACHE_GROUP_COUNT
};

struct ibsnmpd_config {
	char ca_name[IBSNMPD_CA_NAME_MAX]; /* "" = first CA with a usable port */
	int port_num;                      /* 0 = first active InfiniBand port */
	unsigned mad_timeout_ms;
	unsigned mad_retries;
	unsigned mad_max_outstanding;
	unsigned mad_max_per_destination;
	unsigned cache_lifetime_s[CACHE_GROUP_COUNT];
	bool expose_keys;
	bool pm_enabled;                   /* sweep the subnet's counters */
	unsigned pm_discovery_interval_s;
	uint64_t pm_sample_nodes[IBSNMPD_SAMPLE_NODES_MAX]; /* node GUIDs read for sampling */
	char pm_discovery_helper[4096];    /* "" = ibsnmpd-discover beside the daemon or in libexec */
	size_t n_pm_sample_nodes;
	/* traps and notifications */
	bool trap_subscribe;               /* InformInfo subscriptions with the SA */
	uint64_t sa_key;                   /* SM_Key for traps 256-259 (opensm's sa_key); secret */
	bool sa_key_set;
	unsigned trap_resubscribe_s;
	unsigned notify_limit_count;       /* per trap kind and source; 0 = no limit */
	unsigned notify_limit_window_s;
	char osm_log_file[4096];           /* opensm's log: traps 129-131 ("" = off) */
	bool traps_from_counters;          /* 129/130 from the PM sweep's counters */
	/* partition policy */
	char partition_file[4096];         /* opensm's partition file */
	char opensm_pid_file[4096];        /* SIGHUP opensm after a change ("" = none) */
	char opensm_reload_command[1024];  /* or run this ("" = none) */
	unsigned partition_verify_delay_s; /* first check of the ports after a change */
	/* DCBX of the host's Ethernet ports (kernel dcbnl) */
	bool dcbx_enabled;
	char dcbx_interfaces[32][16];      /* served interfaces; none: every DCB-capable one */
	size_t n_dcbx_interfaces;
	char dcbx_socket[108];             /* tests: a fake kernel's socket instead of netlink */
	/* the links of the subnet */
	bool fabric_enabled;               /* sweep every port's PortInfo (needs pmEnable) */
	char fabric_state_file[4096];      /* the baseline ("" = net-snmp's persistent dir) */
	bool fabric_baseline_reset;        /* forget the saved baseline at start and SIGHUP */
	/* every node as an SNMP device (a context each) */
	unsigned node_context_types;       /* 1 << NodeType (1 CA, 2 switch, 3 router); 0: none */
	unsigned node_context_hold_s;      /* a node no longer reached keeps its context */
	unsigned node_context_idle_s;      /* a context's SMA-MIB is read while asked this often */
};

extern struct ibsnmpd_config ibsnmpd_cfg;

/* Names of the cache groups as written after "cacheLifetime". */
const char *cache_group_name(enum cache_group_id id);

/* Parsers used by the config handlers; pure, unit-tested. Return 0 or -1
 * with a reason in why. */
int config_parse_uint(const char *text, unsigned min, unsigned max, unsigned *out,
		      const char **why);
int config_parse_bool(const char *text, bool *out, const char **why);
/* A GUID as 0x-prefixed or plain hex, 1..16 digits. */
int config_parse_guid(const char *text, uint64_t *out, const char **why);
/* "switch ca router" (any of them, in any order) or "none": a mask of
 * 1 << NodeType. */
int config_parse_node_types(const char *text, unsigned *mask, const char **why);
int config_parse_cache_lifetime(const char *line, enum cache_group_id *group,
				unsigned *seconds, const char **why);

/* Whether a configuration text has a line that begins with token (and a
 * value): net-snmp decides master or subagent before it reads the files,
 * so agentaddress is looked for first. */
bool config_text_has_token(const char *text, size_t len, const char *token);

void config_set_defaults(struct ibsnmpd_config *cfg);
/* Registers ibsnmpd.conf's tokens with net-snmp's config machinery. */
void config_register_tokens(void);
/* Number of bad lines met since the last read (ours and unknown tokens). */
unsigned config_error_count(void);
void config_reset_error_count(void);

#endif
