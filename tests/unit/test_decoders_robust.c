/* Every decoder against many pseudo-random payloads of every length 0..80:
 * none may read past its input or crash (the ASan/UBSan build checks), and
 * each either decodes or refuses. A deterministic PRNG keeps runs repeatable. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ibsnmpd/mad_engine.h"
#include "ibsnmpd/pm_attr.h"
#include "ibsnmpd/notice.h"
#include "ibsnmpd/sma_attr.h"

#include "dcbx/dcbnl.h"
#include "trap/osm_log.h"

static uint32_t rng = 0x1bad5eed;

static uint8_t next_byte(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return (uint8_t)rng;
}

static void every_decoder_survives_random_input(void **state)
{
	(void)state;
	for (int round = 0; round < 2000; round++) {
		size_t len = (size_t)round % 81;
		uint8_t *buf = malloc(len ? len : 1); /* exact size: ASan sees over-reads */
		union {
			struct sma_nodeinfo ni;
			struct sma_switchinfo si;
			struct sma_portinfo pi;
			struct sma_sminfo sm;
			struct sma_vendordiag vd;
		} out;
		uint64_t guids[8];
		uint16_t u16[32];
		uint8_t u8[64], w[32];
		struct sma_rft_entry rft[16];
		char desc[65];
		unsigned led;

		assert_non_null(buf);
		for (size_t i = 0; i < len; i++)
			buf[i] = next_byte();
		sma_nodeinfo_decode(buf, len, &out.ni);
		sma_nodedesc_decode(buf, len, desc, sizeof(desc));
		assert_true(strlen(desc) <= 64);
		sma_switchinfo_decode(buf, len, &out.si);
		sma_portinfo_decode(buf, len, &out.pi);
		sma_sminfo_decode(buf, len, &out.sm);
		sma_guidinfo_decode(buf, len, guids);
		sma_pkey_block_decode(buf, len, u16);
		sma_sl2vl_decode(buf, len, u8);
		sma_vlarb_block_decode(buf, len, u8, w);
		sma_lft_block_decode(buf, len, u8);
		sma_mft_block_decode(buf, len, u16);
		sma_rft_block_decode(buf, len, rft);
		sma_vendordiag_decode(buf, len, &out.vd);
		sma_ledinfo_decode(buf, len, &led);
		mad_check_response(buf, len, 0x81, 0x11, 0, 1);
		mad_check_response(buf, len, 0x04, 0x12, 0, 1);
		{
			struct pm_counters pc;
			struct pm_counters_ext ext;
			unsigned cap;
			struct pm_sample_ctl sc;
			struct pm_sample_result sr;

			struct notice nt;
			char line[128];

			notice_decode(buf, len, &nt);
			memcpy(line, buf, len < sizeof(line) ? len : sizeof(line));
			line[len < sizeof(line) ? len : sizeof(line) - 1] = '\0';
			osm_log_line_parse(line, &nt);
			pm_sample_ctl_decode(buf, len, &sc);
			pm_sample_result_decode(buf, len, &sr);
			pm_counters_decode(buf, len, &pc);
			pm_counters_ext_decode(buf, len, &ext);
			pm_classportinfo_capmask(buf, len, &cap);
		}
		{
			struct dcbnl_reply r;
			struct dcbx_port p;
			const char *why;

			memset(&p, 0, sizeof(p));
			dcbnl_decode(buf, len, &r, &p, &why);
		}
		free(buf);
	}
}

/* ibsnmpd-discover's output, mangled: random bytes, and valid lines with
 * random bytes spliced in. The parser must refuse or accept whole. */
static void discovery_parser_survives_mangled_output(void **state)
{
	static const char good[] = "port 0000000000200000 1 1\n"
				   "node 0000000000200000 2 8 1 sw1\n"
				   "done 0.1\n";
	char err[160];

	(void)state;
	for (int round = 0; round < 3000; round++) {
		size_t len = (size_t)(next_byte() % 96);
		char *buf = malloc(len ? len : 1);
		struct topology *f;

		assert_non_null(buf);
		for (size_t i = 0; i < len; i++) {
			buf[i] = round % 2 && i < sizeof(good) - 1 ? good[i] : (char)next_byte();
			if (round % 2 && next_byte() < 8)
				buf[i] = (char)next_byte(); /* a few mangled octets */
		}
		f = topology_parse(buf, len, NULL, err, sizeof(err));
		if (f) {
			for (size_t i = 0; i < f->n_ports; i++)
				assert_true(f->ports[i].node < f->n_nodes);
			topology_free(f);
		}
		free(buf);
	}
}

static void random_mads_are_dropped_not_accepted(void **state)
{
	uint8_t mad[256];
	int accepted = 0;

	(void)state;
	for (int round = 0; round < 5000; round++) {
		for (size_t i = 0; i < sizeof(mad); i++)
			mad[i] = next_byte();
		if (mad_check_response(mad, sizeof(mad), 0x81, 0x11, 0, 0x12345678) != MAD_MALFORMED)
			accepted++;
	}
	assert_int_equal(accepted, 0); /* class, method, attribute and TID must all match */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_decoder_survives_random_input),
		cmocka_unit_test(discovery_parser_survives_mangled_output),
		cmocka_unit_test(random_mads_are_dropped_not_accepted),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
