/* ibsnmpd configuration: the core's values of ibsnmpd.conf, and how an area
 * declares its own tokens and cache groups (area.h). */
#ifndef IBSNMPD_CONFIG_H
#define IBSNMPD_CONFIG_H

/* The name net-snmp knows the daemon by: its configuration files are
 * APP_NAME.conf and APP_NAME.local.conf. */
#define APP_NAME "ibsnmpd"

#include <stdbool.h>

#include <stddef.h>
#include <stdint.h>

#define IBSNMPD_CA_NAME_MAX 64
#define IBSNMPD_FABRIC_NAME_MAX 33 /* an SNMP context name of 32 octets at most */

/* A cache group an area declares: a row of IBSNMPD-MIB's ibsnmpdCacheTable
 * and a name for cacheLifetime. */
struct cache_decl {
	unsigned index;               /* ibsnmpdCacheIndex: fixed once published */
	const char *name;             /* as written after cacheLifetime */
	unsigned default_lifetime_s;
	size_t offset;                /* of the struct cache_group in the area's instance */
};
#define CACHE_INDEX_MAX 64

/* What the core reads; an area's own values are its own (area.h). */
struct ibsnmpd_config {
	char ca_name[IBSNMPD_CA_NAME_MAX]; /* "" = first CA with a usable port */
	/* fabricName: the SNMP context served instead of the default one, the
	 * fabric label of /metrics and a varbind of every notification; "": none */
	char fabric_name[IBSNMPD_FABRIC_NAME_MAX];
	int port_num;                      /* 0 = first active InfiniBand port */
	unsigned mad_timeout_ms;
	unsigned mad_timeout_max_ms; /* a slow node's longest try; 0: 8 x mad_timeout_ms */
	unsigned mad_retries;
	unsigned mad_max_outstanding;
	unsigned mad_max_per_destination;
	unsigned cache_lifetime_s[CACHE_INDEX_MAX]; /* by ibsnmpdCacheIndex; 0: the default */
	bool expose_keys;                  /* M_Key and SM_Key values are served */
	uint64_t mkey;                     /* mKey: in every SMP (opensm's m_key); a secret */
	char mkey_file[4096];              /* mKeyFile: opensm's guid2mkey ("": none), mkeys.c */
	unsigned notify_limit_count;       /* per notification kind and source; 0 = no limit */
	unsigned notify_limit_window_s;
	unsigned notify_queue;             /* waiting for the master agent; 0: none */
	unsigned notify_rate;              /* notifications a second at most; 0: no limit */
	unsigned loop_watchdog_s;          /* a pass of the main loop longer is logged; 0: off */
	/* which nodes are served in a context of their own (ib-<GUID>): read by
	 * the node area and named in the link notifications */
	unsigned node_context_types;       /* 1 << NodeType (1 CA, 2 switch, 3 router); 0: none */
};

extern struct ibsnmpd_config ibsnmpd_cfg;

/* ---- tokens an area declares ---- */

enum config_kind {
	CONFIG_UINT,   /* value: unsigned, in min..max */
	CONFIG_BOOL,   /* value: bool; yes/no, true/false, on/off, 1/0 */
	CONFIG_PATH,   /* value: char[size], one absolute path */
	CONFIG_CUSTOM, /* parse() does it, reporting with config_report() */
};

struct config_token {
	const char *name;
	enum config_kind kind;
	void *value;
	size_t size;          /* CONFIG_PATH: the buffer's size */
	unsigned min, max;    /* CONFIG_UINT */
	void (*parse)(const char *token, char *line); /* CONFIG_CUSTOM */
	const char *help;     /* what follows the token, for net-snmp's usage text */
};

/* Registers the core's tokens with net-snmp's config machinery (and its
 * defaults); areas add theirs with config_register_tokens_of() before the
 * files are read (init_snmp). */
void config_register_tokens(void);
/* tokens, and defaults() to run before every read of the files (a line
 * removed before SIGHUP stops having an effect). */
void config_register_tokens_of(const struct config_token *tokens, size_t n,
			       void (*defaults)(void));
/* Every registered table back to its defaults (as before a read). */
void config_defaults(void);
/* cacheLifetime knows these names. */
void config_register_caches(const struct cache_decl *decls, size_t n);
/* A bad line: "file: line N: Error: token value: why", counted. */
void config_report(const char *token, const char *value, const char *why);
/* Number of bad lines met since the last read (ours and unknown tokens). */
unsigned config_error_count(void);
void config_reset_error_count(void);
/* The group's lifetime: cacheLifetime's, else its default. */
unsigned config_cache_lifetime(const struct cache_decl *decl);

/* ---- pure parsers (unit-tested, fuzzed) ---- */

/* Return 0 or -1 with a reason in why. */
int config_parse_uint(const char *text, unsigned min, unsigned max, unsigned *out,
		      const char **why);
int config_parse_bool(const char *text, bool *out, const char **why);
/* A GUID as 0x-prefixed or plain hex, 1..16 digits. */
int config_parse_guid(const char *text, uint64_t *out, const char **why);
/* "switch ca router" (any of them, in any order) or "none": a mask of
 * 1 << NodeType. */
int config_parse_node_types(const char *text, unsigned *mask, const char **why);
/* "GROUP SECONDS": *which is the index into decls of GROUP. */
int config_parse_cache_lifetime(const char *line, const struct cache_decl *const *decls,
				size_t n_decls, size_t *which, unsigned *seconds,
				const char **why);
/* One absolute path of at most size - 1 octets, alone on the line. */
int config_parse_path(const char *text, char *out, size_t size, const char **why);

/* Whether a configuration text has a line that begins with token (and a
 * value): net-snmp decides master or subagent before it reads the files,
 * so agentaddress is looked for first. */
bool config_text_has_token(const char *text, size_t len, const char *token);

void config_set_defaults(struct ibsnmpd_config *cfg);

#endif
