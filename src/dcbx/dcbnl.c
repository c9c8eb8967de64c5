/* dcbnl messages (include/uapi/linux/dcbnl.h, net/dcb/dcbnl.c): requests
 * built and replies decoded with libmnl. Pure: no I/O, no state; the
 * backend does the socket work so that tests can put a fake kernel on the
 * other end.
 *
 * Formats, as the kernel writes them:
 *   GSTATE reply     DCB_ATTR_STATE u8
 *   GNUMTCS reply    DCB_ATTR_NUMTCS { PG u8, PFC u8 }
 *   CEE_GET / event  DCB_ATTR_IFNAME, DCB_ATTR_CEE { TX_PG { TC_0..7 { PGID,
 *                    UP_MAPPING, STRICT_PRIO, BW_PCT }, BW_ID_0..7 u8 }, RX_PG,
 *                    PFC { UP_0..7 u8 }, APP_TABLE { APP { IDTYPE, ID u16,
 *                    PRIORITY } ... }, FEAT { PG, PFC, APP u8 }, PEER_PG
 *                    struct cee_pg, PEER_PFC struct cee_pfc, PEER_APP_TABLE {
 *                    INFO struct dcb_peer_app_info, APP struct dcb_app ... } },
 *                    DCB_ATTR_DCBX u8
 *   set replies      the command's attribute as u8: 0 accepted
 * In CEE PG nests the TC_n index is the 802.1p priority and PGID its
 * priority group (the convention of mlx5 and of the CEE managed objects). */
#include <errno.h>
#include <limits.h>
#include <string.h>

#include <libmnl/libmnl.h>
#include <linux/dcbnl.h>
#include <linux/rtnetlink.h>

#include "dcbnl.h"

static struct nlmsghdr *dcb_header(void *buf, uint16_t type, uint8_t cmd, uint32_t seq,
				   const char *ifname)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct dcbmsg *d;

	nlh->nlmsg_type = type;
	nlh->nlmsg_flags = NLM_F_REQUEST;
	nlh->nlmsg_seq = seq;
	d = mnl_nlmsg_put_extra_header(nlh, sizeof(*d));
	d->dcb_family = AF_UNSPEC;
	d->cmd = cmd;
	mnl_attr_put_strz(nlh, DCB_ATTR_IFNAME, ifname);
	return nlh;
}

size_t dcbnl_build_get(void *buf, size_t len, uint8_t cmd, uint32_t seq, const char *ifname)
{
	struct nlmsghdr *nlh;
	struct nlattr *nest;

	if (len < DCBNL_BUF_SIZE)
		return 0;
	nlh = dcb_header(buf, RTM_GETDCB, cmd, seq, ifname);
	switch (cmd) {
	case DCB_CMD_GNUMTCS:
		nest = mnl_attr_nest_start(nlh, DCB_ATTR_NUMTCS);
		mnl_attr_put(nlh, DCB_NUMTCS_ATTR_ALL, 0, NULL);
		mnl_attr_nest_end(nlh, nest);
		break;
	default:
		break;
	}
	return nlh->nlmsg_len;
}

size_t dcbnl_build_link_dump(void *buf, size_t len, uint32_t seq)
{
	struct nlmsghdr *nlh;
	struct ifinfomsg *ifi;

	if (len < DCBNL_BUF_SIZE)
		return 0;
	nlh = mnl_nlmsg_put_header(buf);
	nlh->nlmsg_type = RTM_GETLINK;
	nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
	nlh->nlmsg_seq = seq;
	ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
	ifi->ifi_family = AF_UNSPEC;
	return nlh->nlmsg_len;
}

size_t dcbnl_build_set_state(void *buf, size_t len, uint32_t seq, const char *ifname,
			     uint8_t state)
{
	struct nlmsghdr *nlh;

	if (len < DCBNL_BUF_SIZE)
		return 0;
	nlh = dcb_header(buf, RTM_SETDCB, DCB_CMD_SSTATE, seq, ifname);
	mnl_attr_put_u8(nlh, DCB_ATTR_STATE, state);
	return nlh->nlmsg_len;
}

size_t dcbnl_build_set_featcfg(void *buf, size_t len, uint32_t seq, const char *ifname,
			       const uint8_t flags[DCBX_FEAT_COUNT])
{
	struct nlmsghdr *nlh;
	struct nlattr *nest;

	if (len < DCBNL_BUF_SIZE)
		return 0;
	nlh = dcb_header(buf, RTM_SETDCB, DCB_CMD_SFEATCFG, seq, ifname);
	nest = mnl_attr_nest_start(nlh, DCB_ATTR_FEATCFG);
	for (int f = DCBX_FEAT_FIRST; f <= DCBX_FEAT_LAST; f++)
		/* the error flag is the device's to set, not ours */
		mnl_attr_put_u8(nlh, (uint16_t)f,
				flags[f - DCBX_FEAT_FIRST] & (uint8_t)~DCBX_FLAG_ERROR);
	mnl_attr_nest_end(nlh, nest);
	return nlh->nlmsg_len;
}

size_t dcbnl_build_set_pgtx(void *buf, size_t len, uint32_t seq, const char *ifname,
			    const uint8_t prio_pgid[DCBX_PRIOS], const uint8_t pg_bw[DCBX_PGS])
{
	struct nlmsghdr *nlh;
	struct nlattr *pg, *tc;

	if (len < DCBNL_BUF_SIZE)
		return 0;
	nlh = dcb_header(buf, RTM_SETDCB, DCB_CMD_PGTX_SCFG, seq, ifname);
	pg = mnl_attr_nest_start(nlh, DCB_ATTR_PG_CFG);
	for (int i = 0; i < DCBX_PRIOS; i++) {
		tc = mnl_attr_nest_start(nlh, (uint16_t)(DCB_PG_ATTR_TC_0 + i));
		mnl_attr_put_u8(nlh, DCB_TC_ATTR_PARAM_PGID, prio_pgid[i]);
		mnl_attr_nest_end(nlh, tc);
	}
	for (int i = 0; i < DCBX_PGS; i++)
		mnl_attr_put_u8(nlh, (uint16_t)(DCB_PG_ATTR_BW_ID_0 + i), pg_bw[i]);
	mnl_attr_nest_end(nlh, pg);
	return nlh->nlmsg_len;
}

size_t dcbnl_build_set_pfc(void *buf, size_t len, uint32_t seq, const char *ifname,
			   const uint8_t pfc[DCBX_PRIOS])
{
	struct nlmsghdr *nlh;
	struct nlattr *nest;

	if (len < DCBNL_BUF_SIZE)
		return 0;
	nlh = dcb_header(buf, RTM_SETDCB, DCB_CMD_PFC_SCFG, seq, ifname);
	nest = mnl_attr_nest_start(nlh, DCB_ATTR_PFC_CFG);
	for (int i = 0; i < DCBX_PRIOS; i++)
		mnl_attr_put_u8(nlh, (uint16_t)(DCB_PFC_UP_ATTR_0 + i), pfc[i] ? 1 : 0);
	mnl_attr_nest_end(nlh, nest);
	return nlh->nlmsg_len;
}

size_t dcbnl_build_set_app(void *buf, size_t len, uint32_t seq, const char *ifname,
			   const struct dcbx_app *app)
{
	struct nlmsghdr *nlh;
	struct nlattr *nest;

	if (len < DCBNL_BUF_SIZE)
		return 0;
	nlh = dcb_header(buf, RTM_SETDCB, DCB_CMD_SAPP, seq, ifname);
	nest = mnl_attr_nest_start(nlh, DCB_ATTR_APP);
	mnl_attr_put_u8(nlh, DCB_APP_ATTR_IDTYPE, app->selector);
	mnl_attr_put_u16(nlh, DCB_APP_ATTR_ID, app->id);
	mnl_attr_put_u8(nlh, DCB_APP_ATTR_PRIORITY, app->prio_map);
	mnl_attr_nest_end(nlh, nest);
	return nlh->nlmsg_len;
}

size_t dcbnl_build_set_all(void *buf, size_t len, uint32_t seq, const char *ifname)
{
	struct nlmsghdr *nlh;

	if (len < DCBNL_BUF_SIZE)
		return 0;
	nlh = dcb_header(buf, RTM_SETDCB, DCB_CMD_SET_ALL, seq, ifname);
	mnl_attr_put_u8(nlh, DCB_ATTR_SET_ALL, 1);
	return nlh->nlmsg_len;
}

/* ---- decoding ---- */

/* Calls fn for each attribute of [start, start+len); -1 if one does not fit
 * (a truncated or lying length) or fn refuses one. */
typedef int (*attr_fn)(const struct nlattr *a, void *ctx);

static int each_attr(const void *start, size_t len, attr_fn fn, void *ctx)
{
	const struct nlattr *a = start;
	int rem = (int)len;

	while (rem >= (int)sizeof(struct nlattr)) {
		if (!mnl_attr_ok(a, rem))
			return -1;
		if (fn(a, ctx))
			return -1;
		rem -= (int)MNL_ALIGN(a->nla_len);
		a = mnl_attr_next(a);
	}
	return 0;
}

static int each_nested(const struct nlattr *a, attr_fn fn, void *ctx)
{
	return each_attr(mnl_attr_get_payload(a), mnl_attr_get_payload_len(a), fn, ctx);
}

static int u8_of(const struct nlattr *a, uint8_t *out)
{
	if (mnl_attr_validate(a, MNL_TYPE_U8) < 0)
		return -1;
	*out = mnl_attr_get_u8(a);
	return 0;
}

struct decode_ctx {
	struct dcbx_port *port;
	struct dcbnl_reply *r;
	const char *why;
	/* per nest */
	int index;
	uint8_t pgid;
	struct dcbx_app app;
	bool have_pgid;
};

static int fail(struct decode_ctx *c, const char *why)
{
	c->why = why;
	return -1;
}

static int tc_param(const struct nlattr *a, void *ctx)
{
	struct decode_ctx *c = ctx;
	uint8_t v;

	if (u8_of(a, &v))
		return fail(c, "a TC parameter that is not a u8");
	if (mnl_attr_get_type(a) == DCB_TC_ATTR_PARAM_PGID) {
		c->pgid = v;
		c->have_pgid = true;
	}
	return 0;
}

static int pg_nest(const struct nlattr *a, void *ctx)
{
	struct decode_ctx *c = ctx;
	uint16_t t = mnl_attr_get_type(a);
	uint8_t v;

	if (t >= DCB_PG_ATTR_TC_0 && t <= DCB_PG_ATTR_TC_7) {
		c->have_pgid = false;
		if (mnl_attr_validate(a, MNL_TYPE_NESTED) < 0 || each_nested(a, tc_param, c))
			return fail(c, c->why ? c->why : "a malformed TC nest");
		if (c->have_pgid)
			c->port->prio_pgid[t - DCB_PG_ATTR_TC_0] = c->pgid;
	} else if (t >= DCB_PG_ATTR_BW_ID_0 && t <= DCB_PG_ATTR_BW_ID_7) {
		if (u8_of(a, &v))
			return fail(c, "a PG bandwidth that is not a u8");
		c->port->pg_bw[t - DCB_PG_ATTR_BW_ID_0] = v;
	}
	return 0;
}

static int pfc_nest(const struct nlattr *a, void *ctx)
{
	struct decode_ctx *c = ctx;
	uint16_t t = mnl_attr_get_type(a);
	uint8_t v;

	if (t < DCB_PFC_UP_ATTR_0 || t > DCB_PFC_UP_ATTR_7)
		return 0;
	if (u8_of(a, &v))
		return fail(c, "a PFC priority that is not a u8");
	c->port->pfc[t - DCB_PFC_UP_ATTR_0] = v;
	return 0;
}

static int app_param(const struct nlattr *a, void *ctx)
{
	struct decode_ctx *c = ctx;

	switch (mnl_attr_get_type(a)) {
	case DCB_APP_ATTR_IDTYPE:
		return u8_of(a, &c->app.selector) ? fail(c, "an app IDTYPE that is not a u8") : 0;
	case DCB_APP_ATTR_PRIORITY:
		return u8_of(a, &c->app.prio_map) ? fail(c, "an app PRIORITY that is not a u8") : 0;
	case DCB_APP_ATTR_ID:
		if (mnl_attr_validate(a, MNL_TYPE_U16) < 0)
			return fail(c, "an app ID that is not a u16");
		c->app.id = mnl_attr_get_u16(a);
		return 0;
	default:
		return 0;
	}
}

static int app_table(const struct nlattr *a, void *ctx)
{
	struct decode_ctx *c = ctx;

	if (mnl_attr_get_type(a) != DCB_ATTR_APP)
		return 0;
	memset(&c->app, 0, sizeof(c->app));
	if (mnl_attr_validate(a, MNL_TYPE_NESTED) < 0 || each_nested(a, app_param, c))
		return fail(c, c->why ? c->why : "a malformed app nest");
	if (c->port->n_apps < DCBX_APPS_MAX)
		c->port->apps[c->port->n_apps++] = c->app;
	return 0;
}

static int feat_nest(const struct nlattr *a, void *ctx)
{
	struct decode_ctx *c = ctx;
	uint16_t t = mnl_attr_get_type(a);
	uint8_t v;

	if (t < DCBX_FEAT_FIRST || t > DCBX_FEAT_LAST)
		return 0;
	if (u8_of(a, &v))
		return fail(c, "feature flags that are not a u8");
	c->port->feat[t - DCBX_FEAT_FIRST] = v;
	c->port->have_feat_of[t - DCBX_FEAT_FIRST] = true;
	return 0;
}

static int peer_app_table(const struct nlattr *a, void *ctx)
{
	struct decode_ctx *c = ctx;
	struct dcbx_port *p = c->port;

	switch (mnl_attr_get_type(a)) {
	case DCB_ATTR_CEE_PEER_APP_INFO: {
		struct dcb_peer_app_info info;

		if (mnl_attr_get_payload_len(a) < sizeof(info))
			return fail(c, "a short peer app info");
		memcpy(&info, mnl_attr_get_payload(a), sizeof(info));
		p->peer_app_willing = info.willing;
		p->peer_app_error = info.error;
		return 0;
	}
	case DCB_ATTR_CEE_PEER_APP: {
		struct dcb_app app;

		if (mnl_attr_get_payload_len(a) < sizeof(app))
			return fail(c, "a short peer app entry");
		memcpy(&app, mnl_attr_get_payload(a), sizeof(app));
		if (p->n_peer_apps < DCBX_APPS_MAX) {
			struct dcbx_app *out = &p->peer_apps[p->n_peer_apps++];

			out->selector = app.selector;
			out->id = app.protocol;
			out->prio_map = app.priority;
		}
		return 0;
	}
	default:
		return 0;
	}
}

static int cee_nest(const struct nlattr *a, void *ctx)
{
	struct decode_ctx *c = ctx;
	struct dcbx_port *p = c->port;

	switch (mnl_attr_get_type(a)) {
	case DCB_ATTR_CEE_TX_PG:
		if (mnl_attr_validate(a, MNL_TYPE_NESTED) < 0 || each_nested(a, pg_nest, c))
			return fail(c, c->why ? c->why : "a malformed PG nest");
		p->have_pg = true;
		return 0;
	case DCB_ATTR_CEE_PFC:
		if (mnl_attr_validate(a, MNL_TYPE_NESTED) < 0 || each_nested(a, pfc_nest, c))
			return fail(c, c->why ? c->why : "a malformed PFC nest");
		p->have_pfc = true;
		return 0;
	case DCB_ATTR_CEE_APP_TABLE:
		p->n_apps = 0;
		if (mnl_attr_validate(a, MNL_TYPE_NESTED) < 0 || each_nested(a, app_table, c))
			return fail(c, c->why ? c->why : "a malformed app table");
		p->have_apps = true;
		return 0;
	case DCB_ATTR_CEE_FEAT:
		if (mnl_attr_validate(a, MNL_TYPE_NESTED) < 0 || each_nested(a, feat_nest, c))
			return fail(c, c->why ? c->why : "a malformed feature nest");
		p->have_feat = true;
		return 0;
	case DCB_ATTR_CEE_PEER_PG: {
		struct cee_pg pg;

		if (mnl_attr_get_payload_len(a) < sizeof(pg))
			return fail(c, "a short peer PG");
		memcpy(&pg, mnl_attr_get_payload(a), sizeof(pg));
		p->have_peer_pg = true;
		p->peer_pg_willing = pg.willing;
		p->peer_pg_error = pg.error;
		p->peer_pg_enable = pg.pg_en;
		p->peer_pg_tcs = pg.tcs_supported;
		memcpy(p->peer_pg_bw, pg.pg_bw, sizeof(p->peer_pg_bw));
		memcpy(p->peer_prio_pg, pg.prio_pg, sizeof(p->peer_prio_pg));
		return 0;
	}
	case DCB_ATTR_CEE_PEER_PFC: {
		struct cee_pfc pfc;

		if (mnl_attr_get_payload_len(a) < sizeof(pfc))
			return fail(c, "a short peer PFC");
		memcpy(&pfc, mnl_attr_get_payload(a), sizeof(pfc));
		p->have_peer_pfc = true;
		p->peer_pfc_willing = pfc.willing;
		p->peer_pfc_error = pfc.error;
		p->peer_pfc_en = pfc.pfc_en;
		p->peer_pfc_tcs = pfc.tcs_supported;
		return 0;
	}
	case DCB_ATTR_CEE_PEER_APP_TABLE:
		p->n_peer_apps = 0;
		if (mnl_attr_validate(a, MNL_TYPE_NESTED) < 0 || each_nested(a, peer_app_table, c))
			return fail(c, c->why ? c->why : "a malformed peer app table");
		p->have_peer_apps = true;
		return 0;
	default:
		return 0;
	}
}

static int numtcs_nest(const struct nlattr *a, void *ctx)
{
	struct decode_ctx *c = ctx;
	uint8_t v;

	switch (mnl_attr_get_type(a)) {
	case DCB_NUMTCS_ATTR_PG:
		if (u8_of(a, &v))
			return fail(c, "a PG TC count that is not a u8");
		c->port->numtcs_pg = v;
		return 0;
	case DCB_NUMTCS_ATTR_PFC:
		if (u8_of(a, &v))
			return fail(c, "a PFC TC count that is not a u8");
		c->port->numtcs_pfc = v;
		return 0;
	default:
		return 0;
	}
}

static int set_status(struct decode_ctx *c, const struct nlattr *a)
{
	uint8_t v;

	if (u8_of(a, &v))
		return fail(c, "a set answer that is not a u8");
	c->r->set_status = v;
	return 0;
}

static int top_attr(const struct nlattr *a, void *ctx)
{
	struct decode_ctx *c = ctx;
	struct dcbx_port *p = c->port;
	uint16_t t = mnl_attr_get_type(a);
	bool is_set = c->r->type == RTM_SETDCB && c->r->cmd != DCB_CMD_SET_ALL &&
		      c->r->cmd != DCB_CMD_SAPP && c->r->cmd != DCB_CMD_CEE_GET;

	switch (t) {
	case DCB_ATTR_IFNAME:
		if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0)
			return fail(c, "an interface name that is not a string");
		snprintf(c->r->ifname, sizeof(c->r->ifname), "%s", mnl_attr_get_str(a));
		snprintf(p->ifname, sizeof(p->ifname), "%s", c->r->ifname);
		return 0;
	case DCB_ATTR_STATE:
		if (is_set)
			return set_status(c, a);
		if (u8_of(a, &p->state))
			return fail(c, "a DCB state that is not a u8");
		p->have_state = true;
		return 0;
	case DCB_ATTR_NUMTCS:
		if (is_set)
			return set_status(c, a);
		if (mnl_attr_validate(a, MNL_TYPE_NESTED) < 0 || each_nested(a, numtcs_nest, c))
			return fail(c, c->why ? c->why : "a malformed NUMTCS nest");
		p->have_numtcs = true;
		return 0;
	case DCB_ATTR_CEE:
		if (mnl_attr_validate(a, MNL_TYPE_NESTED) < 0 || each_nested(a, cee_nest, c))
			return fail(c, c->why ? c->why : "a malformed CEE nest");
		return 0;
	case DCB_ATTR_DCBX:
		if (u8_of(a, &p->dcbx))
			return fail(c, "a DCBX mode that is not a u8");
		p->have_dcbx = true;
		return 0;
	case DCB_ATTR_PG_CFG:
	case DCB_ATTR_PFC_CFG:
	case DCB_ATTR_FEATCFG:
		return is_set ? set_status(c, a) : 0;
	case DCB_ATTR_SET_ALL:
	case DCB_ATTR_APP:
		return c->r->type == RTM_SETDCB ? set_status(c, a) : 0;
	default:
		return 0;
	}
}

static int link_attr(const struct nlattr *a, void *ctx)
{
	struct decode_ctx *c = ctx;

	if (mnl_attr_get_type(a) != IFLA_IFNAME)
		return 0;
	if (mnl_attr_validate(a, MNL_TYPE_NUL_STRING) < 0)
		return fail(c, "an IFLA_IFNAME that is not a string");
	snprintf(c->r->ifname, sizeof(c->r->ifname), "%s", mnl_attr_get_str(a));
	return 0;
}

int dcbnl_decode(const void *msg, size_t len, struct dcbnl_reply *r, struct dcbx_port *port,
		 const char **why)
{
	const struct nlmsghdr *nlh = msg;
	struct decode_ctx c = {.port = port, .r = r};
	size_t hdr, step;

	memset(r, 0, sizeof(*r));
	r->set_status = -1;
	*why = NULL;
	if (len == 0)
		return 0;
	/* Not mnl_nlmsg_ok(): it compares nlmsg_len as an int, so a length
	 * with its top bit set passes and the payload is read past the end. */
	if (len < sizeof(*nlh) || nlh->nlmsg_len < sizeof(*nlh) || nlh->nlmsg_len > len ||
	    nlh->nlmsg_len > INT_MAX) {
		*why = "a truncated netlink message";
		return -1;
	}
	step = NLMSG_ALIGN(nlh->nlmsg_len) < len ? NLMSG_ALIGN(nlh->nlmsg_len) : len;
	r->seq = nlh->nlmsg_seq;
	r->portid = nlh->nlmsg_pid;
	r->type = nlh->nlmsg_type;
	r->done = !(nlh->nlmsg_flags & NLM_F_MULTI);
	switch (nlh->nlmsg_type) {
	case NLMSG_ERROR: {
		const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

		if (mnl_nlmsg_get_payload_len(nlh) < sizeof(*e)) {
			*why = "a short NLMSG_ERROR";
			return -1;
		}
		if (e->error == INT_MIN) { /* no errno; and it has no positive int */
			*why = "an NLMSG_ERROR with no errno in it";
			return -1;
		}
		r->error = e->error < 0 ? -e->error : e->error;
		r->done = true;
		return (int)step;
	}
	case NLMSG_DONE:
		r->done = true;
		return (int)step;
	case NLMSG_NOOP:
		return (int)step;
	case RTM_NEWLINK: {
		const struct ifinfomsg *ifi = mnl_nlmsg_get_payload(nlh);

		hdr = sizeof(*ifi);
		if (mnl_nlmsg_get_payload_len(nlh) < hdr) {
			*why = "a short RTM_NEWLINK";
			return -1;
		}
		r->ifindex = ifi->ifi_index > 0 ? (unsigned)ifi->ifi_index : 0;
		if (each_attr(mnl_nlmsg_get_payload_offset(nlh, hdr),
			      mnl_nlmsg_get_payload_len(nlh) - hdr, link_attr, &c)) {
			*why = c.why ? c.why : "malformed link attributes";
			return -1;
		}
		return (int)step;
	}
	case RTM_GETDCB:
	case RTM_SETDCB: {
		const struct dcbmsg *d = mnl_nlmsg_get_payload(nlh);

		hdr = sizeof(*d);
		if (mnl_nlmsg_get_payload_len(nlh) < hdr) {
			*why = "a short dcbmsg";
			return -1;
		}
		r->cmd = d->cmd;
		if (each_attr(mnl_nlmsg_get_payload_offset(nlh, hdr),
			      mnl_nlmsg_get_payload_len(nlh) - hdr, top_attr, &c)) {
			*why = c.why ? c.why : "malformed DCB attributes";
			return -1;
		}
		return (int)step;
	}
	default:
		return (int)step; /* not ours: skipped */
	}
}
