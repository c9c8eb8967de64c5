/* DCBX of the host's Ethernet ports as the kernel's dcbnl describes them:
 * the port state, the messages (dcbnl.c) and the rules derived from two
 * states (dcbx_rules.c). Pure (libmnl, no net-snmp, no I/O): the unit tests
 * and the fuzz targets link them alone. */
#ifndef IBSNMPD_DCBNL_H
#define IBSNMPD_DCBNL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DCBX_PRIOS 8
#define DCBX_PGS 8
#define DCBX_APPS_MAX 16   /* the MIB's LldpXdcbxAppProtos: 0..15 */
#define DCBX_IFNAME_MAX 16 /* IFNAMSIZ */
#define DCBX_PGID_NO_LIMIT 15

/* = the kernel's DCB_FEATCFG_ATTR_* = the MIB's LldpXdcbxFeatureType */
enum dcbx_feature { DCBX_FEAT_PG = 2, DCBX_FEAT_PFC = 3, DCBX_FEAT_APP = 4 };
#define DCBX_FEAT_FIRST DCBX_FEAT_PG
#define DCBX_FEAT_LAST DCBX_FEAT_APP
#define DCBX_FEAT_COUNT 3

/* DCB_FEATCFG_* flags */
#define DCBX_FLAG_ERROR 0x01
#define DCBX_FLAG_ENABLE 0x02
#define DCBX_FLAG_WILLING 0x04
#define DCBX_FLAG_ADVERTISE 0x08

struct dcbx_app {
	uint8_t selector;  /* CEE: 0 ethertype, 1 TCP/UDP port */
	uint16_t id;
	uint8_t prio_map;  /* CEE: a bitmap of 802.1p priorities */
};

struct dcbx_port {
	char ifname[DCBX_IFNAME_MAX];
	unsigned ifindex;
	/* DCB_CMD_GSTATE */
	bool have_state;
	uint8_t state;
	/* DCB_CMD_GNUMTCS */
	bool have_numtcs;
	uint8_t numtcs_pg, numtcs_pfc;
	/* DCB_CMD_CEE_GET: the local (Tx) configuration ... */
	bool have_pg;
	uint8_t prio_pgid[DCBX_PRIOS]; /* per priority: its PG (15: no bandwidth limit) */
	uint8_t pg_bw[DCBX_PGS];       /* per PG: percent */
	bool have_pfc;
	uint8_t pfc[DCBX_PRIOS];       /* per priority: enabled */
	bool have_apps;
	size_t n_apps;
	struct dcbx_app apps[DCBX_APPS_MAX];
	bool have_feat;
	uint8_t feat[DCBX_FEAT_COUNT]; /* DCBX_FLAG_* of PG, PFC, APP */
	bool have_feat_of[DCBX_FEAT_COUNT];
	/* ... what the peer sent ... */
	bool have_peer_pg;
	uint8_t peer_pg_willing, peer_pg_error, peer_pg_enable, peer_pg_tcs;
	uint8_t peer_pg_bw[DCBX_PGS], peer_prio_pg[DCBX_PRIOS];
	bool have_peer_pfc;
	uint8_t peer_pfc_willing, peer_pfc_error, peer_pfc_en, peer_pfc_tcs;
	bool have_peer_apps;
	uint8_t peer_app_willing, peer_app_error;
	size_t n_peer_apps;
	struct dcbx_app peer_apps[DCBX_APPS_MAX];
	/* ... and the DCBX mode (DCB_ATTR_DCBX: DCB_CAP_DCBX_*) */
	bool have_dcbx;
	uint8_t dcbx;
};

static inline uint8_t dcbx_feat_flags(const struct dcbx_port *p, enum dcbx_feature f)
{
	return p->feat[f - DCBX_FEAT_FIRST];
}

/* ---- dcbnl.c: messages (pure) ---- */

#define DCBNL_BUF_SIZE 8192

/* What one reply, error or event said. */
struct dcbnl_reply {
	uint32_t seq, portid;
	uint16_t type;     /* RTM_GETDCB / RTM_SETDCB / RTM_NEWLINK / NLMSG_* */
	uint8_t cmd;       /* dcbmsg cmd */
	int error;         /* NLMSG_ERROR: the errno (positive); 0: none */
	bool done;         /* NLMSG_DONE or a message without NLM_F_MULTI */
	int set_status;    /* a set command's u8 answer (0 = accepted); -1 if none */
	char ifname[DCBX_IFNAME_MAX];
	unsigned ifindex;  /* RTM_NEWLINK */
};

/* Builds a DCB request: RTM_GETDCB or RTM_SETDCB, cmd, DCB_ATTR_IFNAME and,
 * for the get commands that need one, the "all" nest. Returns its length. */
size_t dcbnl_build_get(void *buf, size_t len, uint8_t cmd, uint32_t seq, const char *ifname);
/* An RTM_GETLINK dump request. */
size_t dcbnl_build_link_dump(void *buf, size_t len, uint32_t seq);

/* Set commands (RTM_SETDCB), each with DCB_ATTR_IFNAME. */
size_t dcbnl_build_set_state(void *buf, size_t len, uint32_t seq, const char *ifname,
			     uint8_t state);
size_t dcbnl_build_set_featcfg(void *buf, size_t len, uint32_t seq, const char *ifname,
			       const uint8_t flags[DCBX_FEAT_COUNT]);
size_t dcbnl_build_set_pgtx(void *buf, size_t len, uint32_t seq, const char *ifname,
			    const uint8_t prio_pgid[DCBX_PRIOS], const uint8_t pg_bw[DCBX_PGS]);
size_t dcbnl_build_set_pfc(void *buf, size_t len, uint32_t seq, const char *ifname,
			   const uint8_t pfc[DCBX_PRIOS]);
size_t dcbnl_build_set_app(void *buf, size_t len, uint32_t seq, const char *ifname,
			   const struct dcbx_app *app);
size_t dcbnl_build_set_all(void *buf, size_t len, uint32_t seq, const char *ifname);

/* Decodes one netlink message (header at msg, len octets available):
 * fills r and, for DCB replies and events, the fields of port the message
 * carries (have_* set). Returns how far the next message starts (the
 * message's length rounded up to NLMSG_ALIGNTO, at most len), 0 at the end
 * of the buffer, -1 if malformed (why says what). */
int dcbnl_decode(const void *msg, size_t len, struct dcbnl_reply *r, struct dcbx_port *port,
		 const char **why);

/* The port of ifindex in ports[n] (sorted by ifindex), or NULL. */
const struct dcbx_port *dcbx_port_find(const struct dcbx_port *ports, size_t n,
				       unsigned ifindex);
/* Whether the peer sent feature f, and the peer's entry for an app of ours. */
bool dcbx_peer_has(const struct dcbx_port *p, enum dcbx_feature f);
const struct dcbx_app *dcbx_find_app(const struct dcbx_app *apps, size_t n, uint8_t selector,
				     uint16_t id);

/* ---- dcbx_rules.c: the peer's state and notifications from two successive
 * states of the ports (pure) ---- */

enum dcbx_notification {
	DCBX_NOTIFY_FEATURE_ERROR = 2,   /* lldpXdcbxMiscFeatureError */
	DCBX_NOTIFY_PEER_NO_FEAT = 8,    /* lldpXdcbxPeerNoFeat */
	DCBX_NOTIFY_PEER_NO_RESP = 9,    /* lldpXdcbxPeerNoResp */
	DCBX_NOTIFY_CONFIG_MISMATCH = 10 /* lldpXdcbxPeerConfigMismatch */
};

/* A feature in error (its flags say so); any feature the peer disagrees on. */
bool dcbx_feature_error(const struct dcbx_port *p, enum dcbx_feature f);
bool dcbx_any_mismatch(const struct dcbx_port *p);

struct dcbx_event {
	enum dcbx_notification what;
	unsigned ifindex;
	enum dcbx_feature feature; /* 0 for port-wide events */
};

/* Whether the peer's configuration of f differs from ours (PG: priority
 * groups and bandwidths; PFC: the enabled priorities; APP: the table). */
bool dcbx_peer_mismatch(const struct dcbx_port *p, enum dcbx_feature f);
/* The events between two states of the ports (sorted by ifindex; before
 * may be empty: none yet), into ev (up to max); returns how many. */
size_t dcbx_events(const struct dcbx_port *before, size_t n_before,
		   const struct dcbx_port *after, size_t n_after, struct dcbx_event *ev,
		   size_t max);

#endif
