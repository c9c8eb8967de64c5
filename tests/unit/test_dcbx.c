/* dcbnl messages and DCBX notifications: decoding the kernel's formats
 * (fixtures written octet by octet, and a CEE_GET built here with libmnl the
 * way net/dcb/dcbnl.c builds it), errors, multipart dumps, truncated and
 * malformed messages; the set commands' attributes; the events derived
 * from two states. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <libmnl/libmnl.h>
#include <linux/dcbnl.h>
#include <linux/rtnetlink.h>

#include "dcbx/dcbnl.h"

/* GSTATE reply: nlmsghdr (len 28, RTM_GETDCB 78, flags 0, seq 7, pid 99),
 * dcbmsg (AF_UNSPEC, cmd 1, pad), DCB_ATTR_STATE (len 5, type 2) = 1, pad. */
static const uint8_t gstate_reply[] = {
	28, 0, 0, 0, 78, 0, 0, 0, 7, 0, 0, 0, 99, 0, 0, 0,
	0, 1, 0, 0,
	5, 0, 2, 0, 1, 0, 0, 0,
};

/* NLMSG_ERROR (type 2) for seq 8: error -95 (EOPNOTSUPP), the request's header. */
static const uint8_t error_reply[] = {
	36, 0, 0, 0, 2, 0, 0, 0, 8, 0, 0, 0, 99, 0, 0, 0,
	0xa1, 0xff, 0xff, 0xff,
	20, 0, 0, 0, 78, 0, 1, 0, 8, 0, 0, 0, 0, 0, 0, 0,
};

static size_t build_cee(uint8_t *buf, uint32_t seq, uint32_t pid, bool with_peer)
{
	struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
	struct dcbmsg *d;
	struct nlattr *cee, *pg, *tc, *pfc, *apps, *app, *feat, *peer_apps;

	nlh->nlmsg_type = RTM_GETDCB;
	nlh->nlmsg_seq = seq;
	nlh->nlmsg_pid = pid;
	d = mnl_nlmsg_put_extra_header(nlh, sizeof(*d));
	d->cmd = DCB_CMD_CEE_GET;
	mnl_attr_put_strz(nlh, DCB_ATTR_IFNAME, "eth2");
	cee = mnl_attr_nest_start(nlh, DCB_ATTR_CEE);
	pg = mnl_attr_nest_start(nlh, DCB_ATTR_CEE_TX_PG);
	for (int i = 0; i < 8; i++) {
		tc = mnl_attr_nest_start(nlh, (uint16_t)(DCB_PG_ATTR_TC_0 + i));
		mnl_attr_put_u8(nlh, DCB_TC_ATTR_PARAM_PGID, (uint8_t)(i / 2));
		mnl_attr_put_u8(nlh, DCB_TC_ATTR_PARAM_UP_MAPPING, (uint8_t)(1 << i));
		mnl_attr_put_u8(nlh, DCB_TC_ATTR_PARAM_STRICT_PRIO, 0);
		mnl_attr_put_u8(nlh, DCB_TC_ATTR_PARAM_BW_PCT, 0);
		mnl_attr_nest_end(nlh, tc);
	}
	for (int i = 0; i < 8; i++)
		mnl_attr_put_u8(nlh, (uint16_t)(DCB_PG_ATTR_BW_ID_0 + i), i < 4 ? 25 : 0);
	mnl_attr_nest_end(nlh, pg);
	pfc = mnl_attr_nest_start(nlh, DCB_ATTR_CEE_PFC);
	for (int i = 0; i < 8; i++)
		mnl_attr_put_u8(nlh, (uint16_t)(DCB_PFC_UP_ATTR_0 + i), i == 3);
	mnl_attr_nest_end(nlh, pfc);
	apps = mnl_attr_nest_start(nlh, DCB_ATTR_CEE_APP_TABLE);
	app = mnl_attr_nest_start(nlh, DCB_ATTR_APP);
	mnl_attr_put_u8(nlh, DCB_APP_ATTR_IDTYPE, 0);
	mnl_attr_put_u16(nlh, DCB_APP_ATTR_ID, 0x8915);
	mnl_attr_put_u8(nlh, DCB_APP_ATTR_PRIORITY, 0x08);
	mnl_attr_nest_end(nlh, app);
	mnl_attr_nest_end(nlh, apps);
	feat = mnl_attr_nest_start(nlh, DCB_ATTR_CEE_FEAT);
	mnl_attr_put_u8(nlh, DCB_FEATCFG_ATTR_PG, DCB_FEATCFG_ENABLE | DCB_FEATCFG_WILLING);
	mnl_attr_put_u8(nlh, DCB_FEATCFG_ATTR_PFC, DCB_FEATCFG_ENABLE | DCB_FEATCFG_ADVERTISE);
	mnl_attr_put_u8(nlh, DCB_FEATCFG_ATTR_APP, DCB_FEATCFG_ERROR);
	mnl_attr_nest_end(nlh, feat);
	if (with_peer) {
		struct cee_pg peer_pg = {.willing = 1, .pg_en = 1, .tcs_supported = 8,
					 .pg_bw = {50, 50}, .prio_pg = {0, 0, 0, 0, 1, 1, 1, 1}};
		struct cee_pfc peer_pfc = {.pfc_en = 0x08, .tcs_supported = 4};
		struct dcb_peer_app_info info = {.willing = 1};
		struct dcb_app papp = {.selector = 0, .priority = 0x10, .protocol = 0x8915};

		mnl_attr_put(nlh, DCB_ATTR_CEE_PEER_PG, sizeof(peer_pg), &peer_pg);
		mnl_attr_put(nlh, DCB_ATTR_CEE_PEER_PFC, sizeof(peer_pfc), &peer_pfc);
		peer_apps = mnl_attr_nest_start(nlh, DCB_ATTR_CEE_PEER_APP_TABLE);
		mnl_attr_put(nlh, DCB_ATTR_CEE_PEER_APP_INFO, sizeof(info), &info);
		mnl_attr_put(nlh, DCB_ATTR_CEE_PEER_APP, sizeof(papp), &papp);
		mnl_attr_nest_end(nlh, peer_apps);
	}
	mnl_attr_nest_end(nlh, cee);
	mnl_attr_put_u8(nlh, DCB_ATTR_DCBX, DCB_CAP_DCBX_VER_CEE | DCB_CAP_DCBX_LLD_MANAGED);
	return nlh->nlmsg_len;
}

static void decodes_state_and_errors(void **state)
{
	struct dcbnl_reply r;
	struct dcbx_port p;
	const char *why;

	(void)state;
	memset(&p, 0, sizeof(p));
	assert_int_equal(dcbnl_decode(gstate_reply, sizeof(gstate_reply), &r, &p, &why), 28);
	assert_int_equal(r.type, RTM_GETDCB);
	assert_int_equal(r.cmd, DCB_CMD_GSTATE);
	assert_int_equal(r.seq, 7);
	assert_int_equal(r.portid, 99);
	assert_true(p.have_state);
	assert_int_equal(p.state, 1);
	assert_int_equal(dcbnl_decode(error_reply, sizeof(error_reply), &r, &p, &why), 36);
	assert_int_equal(r.error, 95);
	assert_true(r.done);
	assert_int_equal(r.seq, 8);
	assert_int_equal(dcbnl_decode(gstate_reply, 0, &r, &p, &why), 0);
}

static void decodes_cee_get_with_peer(void **state)
{
	uint8_t buf[DCBNL_BUF_SIZE];
	size_t len = build_cee(buf, 3, 99, true);
	struct dcbnl_reply r;
	struct dcbx_port p;
	const char *why;

	(void)state;
	memset(&p, 0, sizeof(p));
	assert_int_equal(dcbnl_decode(buf, len, &r, &p, &why), (int)len);
	assert_string_equal(p.ifname, "eth2");
	assert_true(p.have_pg && p.have_pfc && p.have_apps && p.have_feat && p.have_dcbx);
	for (int i = 0; i < 8; i++) {
		assert_int_equal(p.prio_pgid[i], i / 2);
		assert_int_equal(p.pg_bw[i], i < 4 ? 25 : 0);
		assert_int_equal(p.pfc[i], i == 3);
	}
	assert_int_equal(p.n_apps, 1);
	assert_int_equal(p.apps[0].id, 0x8915);
	assert_int_equal(p.apps[0].prio_map, 0x08);
	assert_int_equal(dcbx_feat_flags(&p, DCBX_FEAT_PG), DCBX_FLAG_ENABLE | DCBX_FLAG_WILLING);
	assert_int_equal(dcbx_feat_flags(&p, DCBX_FEAT_APP), DCBX_FLAG_ERROR);
	assert_true(p.have_peer_pg && p.have_peer_pfc && p.have_peer_apps);
	assert_int_equal(p.peer_pg_willing, 1);
	assert_int_equal(p.peer_pg_bw[1], 50);
	assert_int_equal(p.peer_prio_pg[7], 1);
	assert_int_equal(p.peer_pfc_en, 0x08);
	assert_int_equal(p.peer_pfc_tcs, 4);
	assert_int_equal(p.peer_app_willing, 1);
	assert_int_equal(p.n_peer_apps, 1);
	assert_int_equal(p.peer_apps[0].prio_map, 0x10);
	assert_int_equal(p.dcbx, DCB_CAP_DCBX_VER_CEE | DCB_CAP_DCBX_LLD_MANAGED);
	/* against ours: PG and APP differ, PFC agrees */
	assert_true(dcbx_peer_mismatch(&p, DCBX_FEAT_PG));
	assert_false(dcbx_peer_mismatch(&p, DCBX_FEAT_PFC));
	assert_true(dcbx_peer_mismatch(&p, DCBX_FEAT_APP));
}

static void multipart_link_dump(void **state)
{
	uint8_t buf[512];
	size_t off = 0;
	const char *names[] = {"lo", "eth2"};
	struct dcbnl_reply r;
	struct dcbx_port p;
	const char *why;
	int used, seen = 0;

	(void)state;
	for (int i = 0; i < 2; i++) {
		struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf + off);
		struct ifinfomsg *ifi;

		nlh->nlmsg_type = RTM_NEWLINK;
		nlh->nlmsg_flags = NLM_F_MULTI;
		ifi = mnl_nlmsg_put_extra_header(nlh, sizeof(*ifi));
		ifi->ifi_index = i ? 5 : 1;
		mnl_attr_put_strz(nlh, IFLA_IFNAME, names[i]);
		off += nlh->nlmsg_len;
	}
	{
		struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf + off);

		nlh->nlmsg_type = NLMSG_DONE;
		nlh->nlmsg_flags = NLM_F_MULTI;
		mnl_nlmsg_put_extra_header(nlh, sizeof(int));
		off += nlh->nlmsg_len;
	}
	for (size_t at = 0; (used = dcbnl_decode(buf + at, off - at, &r, &p, &why)) > 0;
	     at += (size_t)used) {
		if (r.type == RTM_NEWLINK) {
			assert_false(r.done);
			assert_string_equal(r.ifname, names[seen]);
			assert_int_equal(r.ifindex, seen ? 5 : 1);
			seen++;
		} else {
			assert_int_equal(r.type, NLMSG_DONE);
			assert_true(r.done);
		}
	}
	assert_int_equal(used, 0);
	assert_int_equal(seen, 2);
}

/* A message whose nlmsg_len is not a multiple of 4: the next header starts
 * at the aligned offset, and that is where the returned step leads (UBSan
 * saw a misaligned read when the caller stepped by nlmsg_len). */
static void unaligned_length_steps_to_the_aligned_header(void **state)
{
	uint32_t words[16] = {0};
	uint8_t *buf = (uint8_t *)words;
	struct nlmsghdr *noop = (struct nlmsghdr *)buf;
	struct dcbnl_reply r;
	struct dcbx_port p;
	const char *why;
	int used;

	(void)state;
	noop->nlmsg_len = 17; /* a header and one octet */
	noop->nlmsg_type = NLMSG_NOOP;
	memcpy(buf + 20, gstate_reply, sizeof(gstate_reply));
	used = dcbnl_decode(buf, 20 + sizeof(gstate_reply), &r, &p, &why);
	assert_int_equal(used, 20);
	memset(&p, 0, sizeof(p));
	used = dcbnl_decode(buf + used, sizeof(gstate_reply), &r, &p, &why);
	assert_int_equal(used, (int)sizeof(gstate_reply));
	assert_true(p.have_state);
	/* the last message of a datagram need not be padded */
	assert_int_equal(dcbnl_decode(buf, 17, &r, &p, &why), 17);
}

static void malformed_messages_are_refused(void **state)
{
	uint8_t buf[DCBNL_BUF_SIZE], bad[64];
	size_t len = build_cee(buf, 3, 0, false);
	struct dcbnl_reply r;
	struct dcbx_port p;
	const char *why;

	(void)state;
	/* truncated: the header says more than there is */
	assert_int_equal(dcbnl_decode(buf, len - 9, &r, &p, &why), -1);
	assert_non_null(why);
	/* an attribute whose length runs past the message */
	memcpy(bad, gstate_reply, sizeof(gstate_reply));
	bad[20] = 40;
	assert_int_equal(dcbnl_decode(bad, sizeof(gstate_reply), &r, &p, &why), -1);
	/* a u16 where the kernel puts a u8 */
	memcpy(bad, gstate_reply, sizeof(gstate_reply));
	bad[20] = 6;
	assert_int_equal(dcbnl_decode(bad, sizeof(gstate_reply), &r, &p, &why), -1);
	assert_string_equal(why, "a DCB state that is not a u8");
	/* a dcbmsg cut short */
	memcpy(bad, gstate_reply, 18);
	bad[0] = 18;
	assert_int_equal(dcbnl_decode(bad, 18, &r, &p, &why), -1);
	/* a short NLMSG_ERROR */
	memcpy(bad, error_reply, 18);
	bad[0] = 18;
	assert_int_equal(dcbnl_decode(bad, 18, &r, &p, &why), -1);
	/* found by libFuzzer: an RTM_NEWLINK whose nlmsg_len has its top bit set
	 * (0xfff9ff20) passed mnl_nlmsg_ok()'s signed compare and the ifinfomsg
	 * was read past the end of the 22 octets */
	{
		static const uint8_t huge_len[] = {
			0x20, 0xff, 0xf9, 0xff, 0x10, 0x00, 0x91, 0x44, 0x02, 0x00, 0x30,
			0x60, 0x00, 0x2f, 0x5b, 0x10, 0x00, 0x00, 0x00, 0xff, 0x00, 0x31,
		};

		assert_int_equal(dcbnl_decode(huge_len, sizeof(huge_len), &r, &p, &why), -1);
		assert_string_equal(why, "a truncated netlink message");
	}
	/* found by libFuzzer: an NLMSG_ERROR whose error is INT_MIN (negated,
	 * it overflowed) */
	memcpy(bad, error_reply, sizeof(error_reply));
	bad[16] = bad[17] = bad[18] = 0;
	bad[19] = 0x80;
	assert_int_equal(dcbnl_decode(bad, sizeof(error_reply), &r, &p, &why), -1);
	assert_string_equal(why, "an NLMSG_ERROR with no errno in it");
	/* every prefix and every one-octet change of a good CEE_GET: refused or
	 * decoded, never a read past the end (the ASan build checks) */
	for (size_t cut = 0; cut <= len; cut++)
		dcbnl_decode(buf, cut, &r, &p, &why);
	for (size_t at = 0; at < len; at++) {
		uint8_t keep = buf[at];

		for (int v = 0; v < 256; v += 51) {
			buf[at] = (uint8_t)v;
			memset(&p, 0, sizeof(p));
			dcbnl_decode(buf, len, &r, &p, &why);
			assert_true(p.n_apps <= DCBX_APPS_MAX && p.n_peer_apps <= DCBX_APPS_MAX);
		}
		buf[at] = keep;
	}
}

static int count_attrs(const struct nlattr *a, void *data)
{
	(void)a;
	(*(int *)data)++;
	return MNL_CB_OK;
}

static void set_commands_carry_the_values(void **state)
{
	uint8_t buf[DCBNL_BUF_SIZE];
	const uint8_t pgid[8] = {0, 0, 1, 1, 2, 2, 3, 15}, bw[8] = {40, 30, 20, 10};
	const uint8_t pfc[8] = {0, 0, 0, 1, 1};
	const uint8_t feat[3] = {DCBX_FLAG_ENABLE | DCBX_FLAG_ERROR, 0, DCBX_FLAG_ADVERTISE};
	struct dcbx_app app = {.selector = 1, .id = 4791, .prio_map = 0x20};
	size_t len;
	int n = 0;

	(void)state;
	len = dcbnl_build_set_pgtx(buf, sizeof(buf), 11, "eth2", pgid, bw);
	assert_true(len > 0);
	{
		struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
		struct dcbmsg *d = mnl_nlmsg_get_payload(nlh);
		struct nlattr *a;

		assert_int_equal(nlh->nlmsg_type, RTM_SETDCB);
		assert_int_equal(d->cmd, DCB_CMD_PGTX_SCFG);
		mnl_attr_for_each(a, nlh, sizeof(*d)) {
			if (mnl_attr_get_type(a) == DCB_ATTR_PG_CFG)
				mnl_attr_parse_nested(a, count_attrs, &n);
		}
		assert_int_equal(n, 16); /* 8 TC nests, 8 bandwidths */
	}
	assert_true(dcbnl_build_set_pfc(buf, sizeof(buf), 12, "eth2", pfc) > 0);
	assert_true(dcbnl_build_set_featcfg(buf, sizeof(buf), 13, "eth2", feat) > 0);
	{
		struct nlmsghdr *nlh = (struct nlmsghdr *)buf;
		struct nlattr *a, *f;

		mnl_attr_for_each(a, nlh, sizeof(struct dcbmsg)) {
			if (mnl_attr_get_type(a) != DCB_ATTR_FEATCFG)
				continue;
			mnl_attr_for_each_nested(f, a) {
				/* the error flag is never sent */
				assert_int_equal(mnl_attr_get_u8(f) & DCBX_FLAG_ERROR, 0);
			}
		}
	}
	assert_true(dcbnl_build_set_app(buf, sizeof(buf), 14, "eth2", &app) > 0);
	assert_true(dcbnl_build_set_state(buf, sizeof(buf), 15, "eth2", 1) > 0);
	assert_true(dcbnl_build_set_all(buf, sizeof(buf), 16, "eth2") > 0);
	assert_int_equal(dcbnl_build_set_all(buf, 100, 16, "eth2"), 0); /* buffer too small */
}

static void events_fire_on_changes_only(void **state)
{
	struct dcbx_port before = {.ifindex = 5}, after;
	struct dcbx_event ev[8];
	size_t n;

	(void)state;
	before.have_feat = true;
	for (int f = 0; f < 3; f++) {
		before.have_feat_of[f] = true;
		before.feat[f] = DCBX_FLAG_ENABLE | DCBX_FLAG_ADVERTISE;
	}
	before.have_pfc = before.have_peer_pfc = before.have_peer_pg = true;
	before.have_pg = true;
	before.pfc[3] = 1;
	before.peer_pfc_en = 0x08;
	/* nothing changed: nothing to say */
	after = before;
	assert_int_equal(dcbx_events(&before, 1, &after, 1, ev, 8), 0);
	/* the PFC error flag goes up; the peer stops sending APP (it never did:
	 * already lacking before, so no event) */
	after.feat[1] |= DCBX_FLAG_ERROR;
	n = dcbx_events(&before, 1, &after, 1, ev, 8);
	assert_int_equal(n, 1);
	assert_int_equal(ev[0].what, DCBX_NOTIFY_FEATURE_ERROR);
	assert_int_equal(ev[0].feature, DCBX_FEAT_PFC);
	assert_int_equal(ev[0].ifindex, 5);
	/* the peer's PFC changes: a mismatch */
	after = before;
	after.peer_pfc_en = 0x09;
	n = dcbx_events(&before, 1, &after, 1, ev, 8);
	assert_int_equal(n, 1);
	assert_int_equal(ev[0].what, DCBX_NOTIFY_CONFIG_MISMATCH);
	/* the peer goes silent */
	after = before;
	after.have_peer_pfc = after.have_peer_pg = false;
	n = dcbx_events(&before, 1, &after, 1, ev, 8);
	assert_int_equal(n, 1);
	assert_int_equal(ev[0].what, DCBX_NOTIFY_PEER_NO_RESP);
	/* the peer drops PG but still answers: PeerNoFeat for PG */
	after = before;
	after.have_peer_pg = false;
	n = dcbx_events(&before, 1, &after, 1, ev, 8);
	assert_int_equal(n, 1);
	assert_int_equal(ev[0].what, DCBX_NOTIFY_PEER_NO_FEAT);
	assert_int_equal(ev[0].feature, DCBX_FEAT_PG);
	/* a port seen for the first time with an error: notified */
	after = before;
	after.feat[0] |= DCBX_FLAG_ERROR;
	assert_true(dcbx_events(NULL, 0, &after, 1, ev, 8) >= 1);
	/* no room: no overflow */
	assert_int_equal(dcbx_events(NULL, 0, &after, 1, ev, 0), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decodes_state_and_errors),
		cmocka_unit_test(decodes_cee_get_with_peer),
		cmocka_unit_test(multipart_link_dump),
		cmocka_unit_test(unaligned_length_steps_to_the_aligned_header),
		cmocka_unit_test(malformed_messages_are_refused),
		cmocka_unit_test(set_commands_carry_the_values),
		cmocka_unit_test(events_fire_on_changes_only),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
