/* mad_check_response(): which received MADs are accepted as the answer to a
 * request, and which are dropped as malformed. Fixtures are MAD headers
 * written octet by octet (IBA 13.4.2). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "ibsnmpd/mad_engine.h"

static void make_response(uint8_t *mad, uint8_t mgmt_class, uint16_t status, uint32_t tid,
			  uint16_t attr, uint32_t mod)
{
	memset(mad, 0, 256);
	mad[0] = 1;          /* BaseVersion */
	mad[1] = mgmt_class;
	mad[2] = 1;          /* ClassVersion */
	mad[3] = 0x81;       /* R bit + GetResp */
	mad[4] = status >> 8;
	mad[5] = status & 0xff;
	mad[12] = tid >> 24;
	mad[13] = tid >> 16;
	mad[14] = tid >> 8;
	mad[15] = tid & 0xff;
	mad[16] = attr >> 8;
	mad[17] = attr & 0xff;
	mad[20] = mod >> 24;
	mad[21] = mod >> 16;
	mad[22] = mod >> 8;
	mad[23] = mod & 0xff;
}

static void accepts_matching_answer(void **state)
{
	uint8_t mad[256];

	(void)state;
	make_response(mad, 0x81, 0, 0x1234, 0x11, 0);
	assert_int_equal(mad_check_response(mad, 256, 0x81, 0x11, 0, 0x1234), 0);
}

static void direction_bit_is_not_a_status(void **state)
{
	uint8_t mad[256];

	(void)state;
	/* DR SMP: bit 15 of the status word is the D (direction) bit */
	make_response(mad, 0x81, 0x8000, 7, 0x10, 0);
	assert_int_equal(mad_check_response(mad, 256, 0x81, 0x10, 0, 7), 0);
	make_response(mad, 0x81, 0x8000 | 0x0c, 7, 0x10, 0);
	assert_int_equal(mad_check_response(mad, 256, 0x81, 0x10, 0, 7), 0x0c);
}

static void reports_status_of_lid_routed_smp(void **state)
{
	uint8_t mad[256];

	(void)state;
	make_response(mad, 0x01, 0x000c, 9, 0x20, 0);
	assert_int_equal(mad_check_response(mad, 256, 0x01, 0x20, 0, 9), 0x0c);
}

static void drops_what_does_not_match(void **state)
{
	uint8_t mad[256];

	(void)state;
	make_response(mad, 0x81, 0, 5, 0x11, 0);
	assert_int_equal(mad_check_response(mad, 100, 0x81, 0x11, 0, 5), MAD_MALFORMED);
	assert_int_equal(mad_check_response(mad, 256, 0x01, 0x11, 0, 5), MAD_MALFORMED);
	assert_int_equal(mad_check_response(mad, 256, 0x81, 0x10, 0, 5), MAD_MALFORMED);
	assert_int_equal(mad_check_response(mad, 256, 0x81, 0x11, 1, 5), MAD_MALFORMED);
	assert_int_equal(mad_check_response(mad, 256, 0x81, 0x11, 0, 6), MAD_MALFORMED);
	mad[3] = 0x01; /* a Get, not a response */
	assert_int_equal(mad_check_response(mad, 256, 0x81, 0x11, 0, 5), MAD_MALFORMED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(accepts_matching_answer),
		cmocka_unit_test(direction_bit_is_not_a_status),
		cmocka_unit_test(reports_status_of_lid_routed_smp),
		cmocka_unit_test(drops_what_does_not_match),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
