/* Trap decoders (Notice, opensm log lines), the InformInfo encoder and the
 * notification rate limit. Fixtures are octets written from IBA 14.2.5.1's
 * tables, independently of the decoder. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ibsnmpd/notice.h"
#include "ibsnmpd/sma_attr.h"

#include "base/notify_limit.h"
#include "trap/osm_log.h"

/* Trap 259 from LID 4: DataValid 0x00ff, LID1 4, LID2 2, P_Key 0x8002, SL 5,
 * QP1 7, QP2 8, GID1 fe80::10:5, switch LID 1, port 3; NoticeToggle 1,
 * NoticeCount 1; IssuerGID fe80::10:5. */
static const uint8_t trap259[80] = {
	0x82, 0x00, 0x00, 0x01, 0x01, 0x03, 0x00, 0x04, 0x80, 0x01, 0x00, 0xff, 0x00, 0x04,
	0x00, 0x02, 0x80, 0x02, 0x50, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x08, 0xfe, 0x80,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x05,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x01, 0x03, 0x00, 0x00, 0x00, 0xfe, 0x80, 0x00, 0x00, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x05,
};

/* Trap 256 from LID 4: method 2 (Set), attribute 0x15, modifier 7,
 * M_Key 0x1122334455667788. */
static const uint8_t trap256[80] = {
	0x82, 0x00, 0x00, 0x01, 0x01, 0x00, 0x00, 0x04, 0x00, 0x01, 0x00, 0x00, 0x00, 0x04,
	0x00, 0x00, 0x02, 0x00, 0x00, 0x15, 0x00, 0x00, 0x00, 0x07, 0x11, 0x22, 0x33, 0x44,
	0x55, 0x66, 0x77, 0x88,
};

static void decodes_trap_259(void **state)
{
	static const uint8_t gid1[16] = {0xfe, 0x80, [13] = 0x10, [15] = 0x05};
	struct notice n;

	(void)state;
	assert_int_equal(notice_decode(trap259, sizeof(trap259), &n), 0);
	assert_true(n.is_generic);
	assert_int_equal(n.type, 2);
	assert_int_equal(n.producer_type, 1);
	assert_int_equal(n.trap_number, 259);
	assert_int_equal(n.issuer_lid, 4);
	assert_true(n.toggle);
	assert_int_equal(n.count, 1);
	assert_int_equal(n.data_valid, 0xff);
	assert_int_equal(n.lid1, 4);
	assert_int_equal(n.lid2, 2);
	assert_int_equal(n.key, 0x8002);
	assert_int_equal(n.sl, 5);
	assert_int_equal(n.qp1, 7);
	assert_int_equal(n.qp2, 8);
	assert_memory_equal(n.gid1, gid1, 16);
	assert_int_equal(n.switch_lid, 1);
	assert_int_equal(n.port, 3);
	assert_memory_equal(n.issuer_gid, gid1, 16);
	assert_int_equal(notice_source_lid(&n), 4);
	assert_int_equal(notice_decode(trap259, 79, &n), -1);
}

static void decodes_trap_256(void **state)
{
	struct notice n;

	(void)state;
	assert_int_equal(notice_decode(trap256, sizeof(trap256), &n), 0);
	assert_int_equal(n.trap_number, 256);
	assert_int_equal(n.lid, 4);
	assert_int_equal(n.method, 2);
	assert_int_equal(n.attr_id, 0x15);
	assert_int_equal(n.attr_mod, 7);
	assert_true(n.key == 0x1122334455667788ULL);
	assert_false(n.toggle);
}

static void encodes_informinfo(void **state)
{
	struct informinfo ii = {.lid_begin = 0xffff, .is_generic = true, .subscribe = true,
				.type = 0xffff, .trap_number = 259, .qpn = 0x123456,
				.resp_time_value = 18, .producer_type = 0xffffff};
	static const uint8_t want[36] = {
		[16] = 0xff, 0xff, 0x00, 0x00, 0x00, 0x00, 0x01, 0x01, 0xff, 0xff, 0x01, 0x03,
		0x12, 0x34, 0x56, 0x12, 0x00, 0xff, 0xff, 0xff,
	};
	uint8_t got[40];

	(void)state;
	memset(got, 0xaa, sizeof(got));
	informinfo_encode(&ii, got, sizeof(got));
	assert_memory_equal(got, want, 36);
	assert_int_equal(got[36], 0xaa); /* nothing past the attribute */
}

static void parses_opensm_log_lines(void **state)
{
	struct notice n;

	(void)state;
	assert_int_equal(osm_log_line_parse(
		"Nov 22 10:57:24 186940 [36E106C0] 0x01 -> log_trap_info: Received Generic Notice "
		"type:4 num:129 (Local Link integrity threshold reached) Producer:1 (Channel "
		"Adapter) from LID:4 Port 1 TID:0x000200007e08f066", &n), 0);
	assert_int_equal(n.trap_number, 129);
	assert_int_equal(n.lid, 4);
	assert_int_equal(n.port, 1);
	assert_int_equal(n.producer_type, 1);
	/* traps without a port in the line, other lines, mangled lines */
	assert_int_equal(osm_log_line_parse(
		"log_trap_info: Received Generic Notice type:4 num:144 (CapabilityMask) Producer:1 "
		"(Channel Adapter) from LID:2 TID:0x0", &n), -1);
	assert_int_equal(osm_log_line_parse("SUBNET UP", &n), -1);
	assert_int_equal(osm_log_line_parse("Received Generic Notice type:x", &n), -1);
	assert_int_equal(osm_log_line_parse("Received Generic Notice type:1 num:129 (a) "
					    "Producer:2 (b) from LID:70000 Port 1 TID:0", &n), -1);
}

static void limits_per_trap_and_source(void **state)
{
	struct notify_limiter l = {.max_per_window = 2, .window_s = 10};
	unsigned ended;

	(void)state;
	assert_int_equal(notify_limit_check(&l, 128, 1, 100, &ended), NOTIFY_SEND);
	assert_int_equal(notify_limit_check(&l, 128, 1, 101, &ended), NOTIFY_SEND);
	assert_int_equal(notify_limit_check(&l, 128, 1, 102, &ended), NOTIFY_SUPPRESS_FIRST);
	assert_int_equal(notify_limit_check(&l, 128, 1, 103, &ended), NOTIFY_SUPPRESS);
	/* another source, another kind: their own budget */
	assert_int_equal(notify_limit_check(&l, 128, 2, 103, &ended), NOTIFY_SEND);
	assert_int_equal(notify_limit_check(&l, 144, 1, 103, &ended), NOTIFY_SEND);
	/* the window ends: sent again, and what was suppressed is told */
	assert_int_equal(notify_limit_check(&l, 128, 1, 110, &ended), NOTIFY_SEND);
	assert_int_equal(ended, 2);
	notify_limit_free(&l);
}

static unsigned reported_trap, reported_source, reported_count;

static void remember(unsigned trap, unsigned source, unsigned suppressed)
{
	reported_trap = trap;
	reported_source = source;
	reported_count = suppressed;
}

static void expired_windows_are_reported(void **state)
{
	struct notify_limiter l = {.max_per_window = 1, .window_s = 10};
	unsigned ended;

	(void)state;
	notify_limit_check(&l, 129, 7, 100, &ended);
	notify_limit_check(&l, 129, 7, 101, &ended);
	notify_limit_check(&l, 129, 7, 102, &ended);
	notify_limit_expire(&l, 105, remember);
	assert_int_equal(reported_count, 0); /* window still open */
	notify_limit_expire(&l, 111, remember);
	assert_int_equal(reported_trap, 129);
	assert_int_equal(reported_source, 7);
	assert_int_equal(reported_count, 2);
	assert_int_equal(l.n, 0);
	/* no limit configured: everything goes */
	l.max_per_window = 0;
	for (int i = 0; i < 100; i++)
		assert_int_equal(notify_limit_check(&l, 128, 1, 200, &ended), NOTIFY_SEND);
	notify_limit_free(&l);
}

static void notification_numbers(void **state)
{
	(void)state;
	assert_int_equal(sma_notification_of_trap(128), 1);
	assert_int_equal(sma_notification_of_trap(131), 4);
	assert_int_equal(sma_notification_of_trap(145), 6);
	assert_int_equal(sma_notification_of_trap(259), 10);
	assert_int_equal(sma_notification_of_trap(64), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(decodes_trap_259),
		cmocka_unit_test(decodes_trap_256),
		cmocka_unit_test(encodes_informinfo),
		cmocka_unit_test(parses_opensm_log_lines),
		cmocka_unit_test(limits_per_trap_and_source),
		cmocka_unit_test(expired_windows_are_reported),
		cmocka_unit_test(notification_numbers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
