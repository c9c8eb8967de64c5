/* libFuzzer target: one decoder of NVIDIA's vendor MADs (vitals_attr.h),
 * chosen at build time (FUZZ_VITALS_ATTR, e.g. "pddr"), over any octets a
 * node could answer: GeneralInfo and the two register routes as attribute
 * data (from MAD octet 24), the registers as the route hands them over, a
 * module's EEPROM as MCIA reads it (lower page and upper page 00h, then
 * page 11h, then the thresholds' page). The decoder gets exactly the input,
 * so a read past a short answer is seen; the checks catch what must never
 * come out (text that is not a printable C string, more lanes than a
 * module has, a register outside the MAD). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/vitals_attr.h"

#ifndef FUZZ_VITALS_ATTR
#error "FUZZ_VITALS_ATTR names the decoder"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_text(const char *s, size_t room)
{
	size_t n = strnlen(s, room);

	if (n == room)
		abort(); /* no NUL */
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			abort();
	if (n && s[n - 1] == ' ')
		abort(); /* trailing blanks are dropped */
}

/* what the MIB and /metrics make of a module's numbers */
static void check_module(const struct vitals_module_info *m)
{
	check_text(m->vendor, sizeof(m->vendor));
	check_text(m->part, sizeof(m->part));
	check_text(m->revision, sizeof(m->revision));
	check_text(m->serial, sizeof(m->serial));
	check_text(m->date, sizeof(m->date));
	if (m->date[0] && strlen(m->date) < 6)
		abort(); /* a date is YYMMDD or nothing */
	if (m->lanes > VITALS_LANES_MAX)
		abort();
	for (unsigned l = 0; l < m->lanes; l++) {
		int rx = vitals_uw_to_centi_dbm(m->rx_uw[l]), tx = vitals_uw_to_centi_dbm(m->tx_uw[l]);

		if (rx < -4000 || rx > 1900 || tx < -4000 || tx > 1900)
			abort(); /* 65535 uW is 18.2 dBm */
	}
	(void)vitals_tenths_from_256ths(m->temp);
	(void)vitals_tenths_from_256ths(m->temp_hi);
}

static void run(const char *attr, const uint8_t *d, size_t n)
{
	if (!strcmp(attr, "general_info")) {
		struct vitals_general_info gi;

		if (!vitals_general_info_decode(d, n, &gi))
			check_text(gi.psid, sizeof(gi.psid));
	} else if (!strcmp(attr, "access_reg_gmp")) {
		const uint8_t *reg;
		size_t len;

		if (!vitals_gmp_answer(d, n, &reg, &len) && (reg < d || reg + len > d + n))
			abort();
	} else if (!strcmp(attr, "access_reg")) {
		/* the register the TLVs claim to answer, and one they do not */
		static const unsigned ids[] = {VITALS_REG_MTMP, VITALS_REG_PDDR, VITALS_REG_MCIA};

		for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
			const uint8_t *reg;
			size_t len;
			unsigned status;

			if (!vitals_tlv_answer(d, n, ids[i], &reg, &len, &status) &&
			    (reg < d || reg + len > d + n || status > 0x7f))
				abort();
		}
	} else if (!strcmp(attr, "mgir")) {
		struct vitals_mgir g;

		if (!vitals_mgir_decode(d, n, &g))
			check_text(g.psid, sizeof(g.psid));
	} else if (!strcmp(attr, "msgi")) {
		struct vitals_msgi m;

		if (!vitals_msgi_decode(d, n, &m)) {
			check_text(m.serial, sizeof(m.serial));
			check_text(m.part, sizeof(m.part));
			check_text(m.revision, sizeof(m.revision));
			check_text(m.product, sizeof(m.product));
		}
	} else if (!strcmp(attr, "mtcap")) {
		struct vitals_mtcap c;

		if (!vitals_mtcap_decode(d, n, &c) && c.sensor_count > 127)
			abort();
	} else if (!strcmp(attr, "mtmp")) {
		struct vitals_mtmp t;

		if (!vitals_mtmp_decode(d, n, &t)) {
			check_text(t.name, sizeof(t.name));
			(void)vitals_tenths_from_eighths(t.temp);
			(void)vitals_tenths_from_eighths(t.threshold_hi);
		}
	} else if (!strcmp(attr, "mfcr")) {
		uint16_t active;

		vitals_mfcr_decode(d, n, &active);
	} else if (!strcmp(attr, "mfsm")) {
		unsigned rpm;

		if (!vitals_mfsm_decode(d, n, &rpm) && rpm > 0xffff)
			abort();
	} else if (!strcmp(attr, "fore")) {
		uint16_t under, over;

		vitals_fore_decode(d, n, &under, &over);
	} else if (!strcmp(attr, "mgpir")) {
		unsigned modules;

		if (!vitals_mgpir_decode(d, n, &modules) && modules > 255)
			abort();
	} else if (!strcmp(attr, "pmaos")) {
		struct vitals_pmaos p;

		if (!vitals_pmaos_decode(d, n, &p) && (p.oper_status > 15 || p.module > 255))
			abort();
	} else if (!strcmp(attr, "pmlp")) {
		struct vitals_pmlp p;

		if (!vitals_pmlp_decode(d, n, &p) && (p.first_lane > 15 || p.port > 1023))
			abort();
	} else if (!strcmp(attr, "pddr")) {
		struct vitals_module_info m;

		if (!vitals_pddr_module_decode(d, n, &m))
			check_module(&m);
	} else if (!strcmp(attr, "mcia")) {
		unsigned status;
		const uint8_t *eeprom;
		size_t len;

		if (!vitals_mcia_decode(d, n, &status, &eeprom, &len) &&
		    (eeprom < d || eeprom + len > d + n || len > 128))
			abort();
	} else if (!strcmp(attr, "eeprom")) {
		struct vitals_module_info m;
		uint8_t page[256] = {0};

		if (n < 256 || vitals_eeprom_decode(d, &m))
			return;
		if (vitals_eeprom_is_cmis(d[0]) && n >= 256 + 128) {
			/* the decoders read pages as 256 octets, upper half used */
			memcpy(page + 128, d + 256, 128);
			vitals_eeprom_cmis_lanes(page, d[256] % 16, &m);
		}
		if (n >= 256 + 256) {
			memcpy(page + 128, d + 256 + 128, 128);
			vitals_eeprom_thresholds(page, vitals_eeprom_is_cmis(d[0]), &m);
		}
		check_module(&m);
	} else {
		abort(); /* a target built for a decoder this file does not know */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	run(FUZZ_VITALS_ATTR, data, size);
	return 0;
}
