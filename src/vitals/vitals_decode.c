/* NVIDIA's vendor MADs and registers as octets (vitals_attr.h): pure,
 * unit-tested and fuzzed. Written by hand: libibmad has no field
 * descriptors for the vendor class, its registers or a module's EEPROM;
 * the offsets are the facts of vitals_attr.h's sources. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ibsnmpd/octets.h"
#include "ibsnmpd/vitals_attr.h"

#define VS_KEY 8            /* the VS_Key before a class 0x0A attribute */
#define GMP_CONFIG 4        /* AccessRegisterGMP's config dword */
#define OP_TLV 16
#define REG_TLV_HEADER 4
#define TLV_OPERATION 1
#define TLV_REG 3
#define TLV_METHOD_QUERY 1
#define TLV_CLASS_REG_ACCESS 1

/* ---- fields: (dword offset, lowest bit, width), as the .adb writes them ---- */

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)octets_get_be(p, 4);
}

static uint32_t field(const uint8_t *r, unsigned dword, unsigned lsb, unsigned width)
{
	uint32_t v = get32(r + dword);

	return width >= 32 ? v : (v >> lsb) & ((1u << width) - 1);
}

static void set_field(uint8_t *r, unsigned dword, unsigned lsb, unsigned width, uint32_t value)
{
	uint32_t mask = width >= 32 ? 0xffffffffu : ((1u << width) - 1) << lsb;

	octets_put_be((get32(r + dword) & ~mask) | ((value << lsb) & mask), r + dword, 4);
}

/* A fixed-width text field: printable ASCII up to the first NUL, trailing
 * blanks dropped; anything else becomes '?' (outside input, served as a
 * DisplayString). */
static void text(char *out, size_t out_len, const uint8_t *p, size_t n)
{
	size_t len = 0;

	for (size_t i = 0; i < n && p[i] && len + 1 < out_len; i++)
		out[len++] = p[i] >= 0x20 && p[i] < 0x7f ? (char)p[i] : '?';
	while (len && out[len - 1] == ' ')
		len--;
	out[len] = '\0';
}

/* A date code (SFF-8636, CMIS, PDDR): YYMMDD and a two-character lot
 * code; anything else is no date (served empty) */
static void date_code(char out[9], const uint8_t *p)
{
	text(out, 9, p, 8);
	for (int i = 0; i < 6; i++)
		if (out[i] < '0' || out[i] > '9') {
			out[0] = '\0';
			return;
		}
}

/* ---- GeneralInfo ---- */

int vitals_general_info_decode(const uint8_t *d, size_t len, struct vitals_general_info *out)
{
	/* MAD offsets (vendstat's layout) less the 24 of the header */
	if (len < 140)
		return -1;
	memset(out, 0, sizeof(*out));
	out->hw_revision = (unsigned)octets_get_be(d + 8, 2);
	out->device_id = (unsigned)octets_get_be(d + 10, 2);
	out->uptime_s = get32(d + 36);
	text(out->psid, sizeof(out->psid), d + 56, 16);
	out->fw[0] = get32(d + 76);
	out->fw[1] = get32(d + 80);
	out->fw[2] = get32(d + 84);
	out->registers_by_gmp = get32(d + 136) >> 20 & 1;
	return 0;
}

/* ---- the routes ---- */

size_t vitals_gmp_request(uint8_t *d, size_t len, const uint8_t *reg, size_t reg_len)
{
	size_t n = reg_len < VITALS_GMP_BLOCK ? reg_len : VITALS_GMP_BLOCK;

	if (len < VS_KEY + GMP_CONFIG + VITALS_GMP_BLOCK)
		return 0;
	memset(d, 0, VS_KEY + GMP_CONFIG + VITALS_GMP_BLOCK);
	/* block 0: the config dword stays 0 */
	memcpy(d + VS_KEY + GMP_CONFIG, reg, n);
	return VS_KEY + GMP_CONFIG + VITALS_GMP_BLOCK;
}

int vitals_gmp_answer(const uint8_t *d, size_t len, const uint8_t **reg, size_t *reg_len)
{
	if (len < VS_KEY + GMP_CONFIG + VITALS_GMP_BLOCK || get32(d + VS_KEY) >> 16 != 0)
		return -1;
	*reg = d + VS_KEY + GMP_CONFIG;
	*reg_len = VITALS_GMP_BLOCK;
	return 0;
}

int vitals_gmp_status(int mad_status)
{
	switch (mad_status) {
	case 20: return VITALS_REG_STATUS_NOT_SUPPORTED;
	case 28: return VITALS_REG_STATUS_BAD_PARAM;
	case 4:  /* class not supported */
	case 12: return VITALS_REG_STATUS_NOT_SUPPORTED; /* method not supported */
	default: return -1;
	}
}

size_t vitals_tlv_request(uint8_t *d, size_t len, unsigned reg_id, const uint8_t *reg,
			  size_t reg_len)
{
	uint8_t *op = d + VS_KEY, *rt = op + OP_TLV;

	if (reg_len > VITALS_TLV_REG_MAX || reg_len % 4 ||
	    len < VS_KEY + OP_TLV + REG_TLV_HEADER + VITALS_TLV_REG_MAX)
		return 0;
	memset(d, 0, VS_KEY + OP_TLV + REG_TLV_HEADER + VITALS_TLV_REG_MAX);
	set_field(op, 0, 27, 5, TLV_OPERATION);
	set_field(op, 0, 16, 11, OP_TLV / 4);
	set_field(op, 4, 16, 16, reg_id);
	set_field(op, 4, 8, 7, TLV_METHOD_QUERY);
	set_field(op, 4, 0, 8, TLV_CLASS_REG_ACCESS);
	set_field(rt, 0, 27, 5, TLV_REG);
	set_field(rt, 0, 16, 11, (uint32_t)(reg_len + REG_TLV_HEADER) / 4);
	memcpy(rt + REG_TLV_HEADER, reg, reg_len);
	return VS_KEY + OP_TLV + REG_TLV_HEADER + VITALS_TLV_REG_MAX;
}

int vitals_tlv_answer(const uint8_t *d, size_t len, unsigned reg_id, const uint8_t **reg,
		      size_t *reg_len, unsigned *status)
{
	const uint8_t *op = d + VS_KEY, *rt = op + OP_TLV;
	size_t n;

	if (len < VS_KEY + OP_TLV + REG_TLV_HEADER)
		return -1;
	if (field(op, 0, 27, 5) != TLV_OPERATION || field(op, 4, 16, 16) != reg_id ||
	    !field(op, 4, 15, 1) || field(rt, 0, 27, 5) != TLV_REG)
		return -1;
	n = field(rt, 0, 16, 11) * 4u;
	if (n < REG_TLV_HEADER || VS_KEY + OP_TLV + n > len)
		return -1;
	*status = field(op, 0, 8, 7);
	*reg = rt + REG_TLV_HEADER;
	*reg_len = n - REG_TLV_HEADER;
	return 0;
}

/* ---- requests ---- */

void vitals_mtmp_request(uint8_t reg[32], unsigned sensor)
{
	memset(reg, 0, 32);
	set_field(reg, 0x00, 0, 12, sensor);
}

void vitals_mfsm_request(uint8_t reg[8], unsigned tacho)
{
	memset(reg, 0, 8);
	set_field(reg, 0x00, 24, 4, tacho & 0xf);
	set_field(reg, 0x00, 28, 4, tacho >> 4); /* tacho_hi: more than 16 fans */
}

void vitals_pmaos_request(uint8_t reg[16], unsigned module)
{
	memset(reg, 0, 16);
	set_field(reg, 0x00, 16, 8, module);
}

static void put_local_port(uint8_t *reg, unsigned port)
{
	set_field(reg, 0x00, 16, 8, port & 0xff);
	set_field(reg, 0x00, 12, 2, port >> 8);
}

void vitals_pmlp_request(uint8_t reg[64], unsigned port)
{
	memset(reg, 0, 64);
	put_local_port(reg, port);
}

void vitals_pddr_request(uint8_t reg[VITALS_REG_MAX], unsigned port)
{
	memset(reg, 0, VITALS_REG_MAX);
	put_local_port(reg, port);
	set_field(reg, 0x00, 14, 2, 1);  /* pnat: IB port number */
	set_field(reg, 0x04, 0, 8, 3);   /* module info page */
	set_field(reg, 0x04, 29, 2, 1);  /* powers in microwatts */
}

void vitals_mcia_request(uint8_t reg[148], unsigned module, unsigned page, unsigned offset,
			 unsigned size)
{
	memset(reg, 0, 148);
	set_field(reg, 0x00, 16, 8, module);
	set_field(reg, 0x04, 0, 16, offset);
	set_field(reg, 0x04, 16, 8, offset >= 128 ? page : 0);
	set_field(reg, 0x04, 24, 8, 0x50);
	set_field(reg, 0x08, 0, 16, size);
}

/* ---- registers ---- */

int vitals_mgir_decode(const uint8_t *r, size_t len, struct vitals_mgir *out)
{
	if (len < 0x70)
		return -1;
	memset(out, 0, sizeof(*out));
	out->device_id = field(r, 0x00, 0, 16);
	out->hw_revision = field(r, 0x00, 16, 16);
	out->num_ports = field(r, 0x04, 16, 8);
	out->hw_dev_id = field(r, 0x08, 0, 16);
	out->uptime_s = get32(r + 0x1c);
	text(out->psid, sizeof(out->psid), r + 0x30, 16);
	out->fw[0] = get32(r + 0x44);
	out->fw[1] = get32(r + 0x48);
	out->fw[2] = get32(r + 0x4c);
	out->sw[0] = field(r, 0x60, 16, 8);
	out->sw[1] = field(r, 0x60, 8, 8);
	out->sw[2] = field(r, 0x60, 0, 8);
	return 0;
}

int vitals_msgi_decode(const uint8_t *r, size_t len, struct vitals_msgi *out)
{
	if (len < 0x80)
		return -1;
	text(out->serial, sizeof(out->serial), r + 0x00, 24);
	text(out->part, sizeof(out->part), r + 0x20, 20);
	text(out->revision, sizeof(out->revision), r + 0x38, 4);
	text(out->product, sizeof(out->product), r + 0x40, 64);
	return 0;
}

int vitals_mtcap_decode(const uint8_t *r, size_t len, struct vitals_mtcap *out)
{
	if (len < 16)
		return -1;
	out->sensor_count = field(r, 0x00, 0, 7);
	out->sensor_map = (uint64_t)get32(r + 0x08) << 32 | get32(r + 0x0c);
	return 0;
}

int vitals_mtmp_decode(const uint8_t *r, size_t len, struct vitals_mtmp *out)
{
	if (len < 32)
		return -1;
	out->sensor = field(r, 0x00, 0, 12);
	out->temp = (int16_t)field(r, 0x04, 0, 16);
	out->max = (int16_t)field(r, 0x08, 0, 16);
	out->max_valid = field(r, 0x08, 31, 1);
	out->threshold_hi = (int16_t)field(r, 0x0c, 0, 16);
	out->threshold_lo = (int16_t)field(r, 0x10, 0, 16);
	text(out->name, sizeof(out->name), r + 0x18, 8);
	return 0;
}

int vitals_mfcr_decode(const uint8_t *r, size_t len, uint16_t *active)
{
	if (len < 8)
		return -1;
	*active = (uint16_t)(field(r, 0x04, 16, 10) | field(r, 0x04, 26, 6) << 10);
	return 0;
}

int vitals_mfsm_decode(const uint8_t *r, size_t len, unsigned *rpm)
{
	if (len < 8)
		return -1;
	*rpm = field(r, 0x04, 0, 16);
	return 0;
}

int vitals_fore_decode(const uint8_t *r, size_t len, uint16_t *under, uint16_t *over)
{
	if (len < 12)
		return -1;
	*under = (uint16_t)(field(r, 0x00, 16, 10) | field(r, 0x00, 26, 6) << 10);
	*over = (uint16_t)(field(r, 0x04, 16, 10) | field(r, 0x04, 26, 6) << 10);
	return 0;
}

int vitals_mgpir_decode(const uint8_t *r, size_t len, unsigned *modules)
{
	if (len < 8)
		return -1;
	*modules = field(r, 0x04, 0, 8);
	return 0;
}

int vitals_pmaos_decode(const uint8_t *r, size_t len, struct vitals_pmaos *out)
{
	if (len < 16)
		return -1;
	out->module = field(r, 0x00, 16, 8);
	out->oper_status = field(r, 0x00, 0, 4);
	out->error_type = field(r, 0x04, 8, 4);
	return 0;
}

int vitals_pmlp_decode(const uint8_t *r, size_t len, struct vitals_pmlp *out)
{
	if (len < 8)
		return -1;
	out->port = field(r, 0x00, 16, 8) | field(r, 0x00, 12, 2) << 8;
	out->width = field(r, 0x00, 0, 8);
	out->module = field(r, 0x04, 0, 8);
	out->first_lane = field(r, 0x04, 16, 4);
	return 0;
}

/* CMIS cable length (octet 202; PDDR's cable_length likewise): multiplier
 * in bits 7-6 (0.1, 1, 10, 100 m), value in 5-0; in decimetres */
static unsigned cmis_length_dm(unsigned v)
{
	static const unsigned dm[4] = {1, 10, 100, 1000};

	return dm[v >> 6 & 3] * (v & 0x3f);
}

int vitals_pddr_module_decode(const uint8_t *reg, size_t len, struct vitals_module_info *out)
{
	const uint8_t *d = reg + 0x08; /* page_data */
	unsigned cap;

	if (len < 0x08 + 0xc0 || field(reg, 0x04, 0, 8) != 3)
		return -1;
	memset(out, 0, sizeof(*out));
	out->cable_type = field(d, 0x04, 28, 4);
	out->identifier = field(d, 0x04, 8, 8);
	if (out->cable_type == 4) /* unplugged: nothing more */
		return 0;
	/* PDDR's length: CMIS modules' with the multiplier, others in metres */
	out->length_dm = out->identifier >= 5 && out->identifier != 11 ?
		cmis_length_dm(field(d, 0x04, 16, 8)) : field(d, 0x04, 16, 8) * 10u;
	out->module_state = field(d, 0x94, 29, 3);
	text(out->vendor, sizeof(out->vendor), d + 0x14, 16);
	text(out->part, sizeof(out->part), d + 0x24, 16);
	text(out->revision, sizeof(out->revision), d + 0x34, 4);
	out->fw_version = get32(d + 0x38);
	text(out->serial, sizeof(out->serial), d + 0x3c, 16);
	date_code(out->date, d + 0xb0);
	cap = field(d, 0x9c, 8, 8); /* monitor_cap_mask: 1 temperature, 2 voltage, 4 Rx, 8 Tx */
	out->have_temp = cap & 1;
	out->have_voltage = cap & 2;
	out->have_power = (cap & 0xc) != 0;
	out->have_thresholds = cap != 0;
	out->temp = (int16_t)field(d, 0x4c, 16, 16);
	out->voltage = (uint16_t)field(d, 0x4c, 0, 16);
	out->lanes = VITALS_LANES_MAX; /* the module's: PMLP maps a port's to them */
	for (unsigned l = 0; l < VITALS_LANES_MAX; l++) {
		unsigned dw = (l / 2) * 4, lsb = l % 2 ? 0 : 16;

		out->rx_uw[l] = (uint16_t)field(d, 0x50 + dw, lsb, 16);
		out->tx_uw[l] = (uint16_t)field(d, 0x60 + dw, lsb, 16);
		out->bias[l] = (uint16_t)field(d, 0x70 + dw, lsb, 16);
	}
	out->temp_lo = (int16_t)field(d, 0x80, 0, 16);
	out->temp_hi = (int16_t)field(d, 0x80, 16, 16);
	out->volt_lo = (uint16_t)field(d, 0x84, 0, 16);
	out->volt_hi = (uint16_t)field(d, 0x84, 16, 16);
	out->rx_lo_uw = (uint16_t)field(d, 0x88, 0, 16);
	out->rx_hi_uw = (uint16_t)field(d, 0x88, 16, 16);
	out->tx_lo_uw = (uint16_t)field(d, 0x8c, 0, 16);
	out->tx_hi_uw = (uint16_t)field(d, 0x8c, 16, 16);
	out->bias_lo = (uint16_t)field(d, 0x90, 0, 16);
	out->bias_hi = (uint16_t)field(d, 0x90, 16, 16);
	return 0;
}

int vitals_mcia_decode(const uint8_t *r, size_t len, unsigned *status, const uint8_t **data,
		       size_t *n)
{
	size_t size;

	if (len < 0x10)
		return -1;
	*status = field(r, 0x00, 0, 8);
	size = field(r, 0x08, 0, 16);
	if (size > 128 || 0x10 + size > len)
		return -1;
	*data = r + 0x10;
	*n = size;
	return 0;
}

/* ---- a module's EEPROM ---- */

bool vitals_eeprom_is_cmis(uint8_t id)
{
	/* SFF-8024: QSFP-DD 0x18, OSFP 0x19, SFP-DD 0x1a, DSFP 0x1b, QSFP+ and
	 * QSFP28 with CMIS 0x1e, OSFP-XD and later CMIS forms 0x1f-0x22 */
	return id == 0x18 || id == 0x19 || id == 0x1a || id == 0x1b || (id >= 0x1e && id <= 0x22);
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)octets_get_be(p, 2);
}

/* 0.1 uW (SFF-8636 and CMIS) to uW */
static uint16_t uw_of(const uint8_t *p)
{
	return (uint16_t)((be16(p) + 5) / 10);
}

/* The identity and the lower page's monitors of an EEPROM. The PDDR
 * numbers for the identifier and the type, so that both sources say the
 * same: OSFP 8, QSFP-DD 6, QSFP28 0, QSFP+ 1, SFP 2; optical module 2,
 * passive copper 3, active cable 1. */
int vitals_eeprom_decode(const uint8_t *e, struct vitals_module_info *out)
{
	bool cmis = vitals_eeprom_is_cmis(e[0]);

	memset(out, 0, sizeof(*out));
	switch (e[0]) {
	case 0x19: out->identifier = 8; break;
	case 0x18: out->identifier = 6; break;
	case 0x11: out->identifier = 0; break;
	case 0x0d: out->identifier = 1; break;
	case 0x03: out->identifier = 2; break;
	default:
		if (!cmis)
			return -1;
		out->identifier = 7; /* QSFP with CMIS */
	}
	if (cmis) {
		unsigned media = e[85]; /* MediaType: 1 MMF, 2 SMF, 3 passive copper, 4 active */

		out->cable_type = media == 3 ? 3 : media == 4 ? 1 : 2;
		out->module_state = e[3] >> 1 & 7;
		text(out->vendor, sizeof(out->vendor), e + 129, 16);
		text(out->part, sizeof(out->part), e + 148, 16);
		text(out->revision, sizeof(out->revision), e + 164, 2);
		text(out->serial, sizeof(out->serial), e + 166, 16);
		date_code(out->date, e + 182);
		out->length_dm = cmis_length_dm(e[202]);
		out->fw_version = (uint32_t)e[39] << 24 | (uint32_t)e[40] << 16;
		out->temp = (int16_t)be16(e + 14);
		out->voltage = be16(e + 16);
		/* flat memory (octet 2 bit 7): passive copper, no monitors */
		out->have_temp = out->have_voltage = !(e[2] & 0x80);
		return 0;
	}
	/* SFF-8636 */
	out->cable_type = (e[147] >> 4) >= 0xa ? 3 : 2; /* transmitter technology: copper */
	text(out->vendor, sizeof(out->vendor), e + 148, 16);
	text(out->part, sizeof(out->part), e + 168, 16);
	text(out->revision, sizeof(out->revision), e + 184, 2);
	text(out->serial, sizeof(out->serial), e + 196, 16);
	date_code(out->date, e + 212);
	out->length_dm = out->cable_type == 3 ? e[146] * 10u : 0;
	out->temp = (int16_t)be16(e + 22);
	out->voltage = be16(e + 26);
	out->have_temp = out->have_voltage = out->have_power = !(e[2] & 0x04);
	out->lanes = 4;
	for (unsigned l = 0; l < 4; l++) {
		out->rx_uw[l] = uw_of(e + 34 + 2 * l);
		out->bias[l] = be16(e + 42 + 2 * l);
		out->tx_uw[l] = uw_of(e + 50 + 2 * l);
	}
	return 0;
}

void vitals_eeprom_cmis_lanes(const uint8_t *p, unsigned lanes, struct vitals_module_info *out)
{
	if (lanes > VITALS_LANES_MAX)
		lanes = VITALS_LANES_MAX;
	out->lanes = lanes;
	out->have_power = true;
	for (unsigned l = 0; l < lanes; l++) {
		out->tx_uw[l] = uw_of(p + 154 + 2 * l);
		out->bias[l] = be16(p + 170 + 2 * l);
		out->rx_uw[l] = uw_of(p + 186 + 2 * l);
	}
}

/* (high alarm, low alarm) pairs: CMIS page 02h / SFF-8636 page 03h */
void vitals_eeprom_thresholds(const uint8_t *p, bool cmis, struct vitals_module_info *out)
{
	unsigned volt = cmis ? 136 : 144, rx = cmis ? 192 : 176, tx = cmis ? 176 : 192;

	out->have_thresholds = true;
	out->temp_hi = (int16_t)be16(p + 128);
	out->temp_lo = (int16_t)be16(p + 130);
	out->volt_hi = be16(p + volt);
	out->volt_lo = be16(p + volt + 2);
	out->rx_hi_uw = uw_of(p + rx);
	out->rx_lo_uw = uw_of(p + rx + 2);
	out->tx_hi_uw = uw_of(p + tx);
	out->tx_lo_uw = uw_of(p + tx + 2);
	out->bias_hi = be16(p + 184);
	out->bias_lo = be16(p + 186);
}

void vitals_module_fw_text(uint32_t v, char out[VITALS_FW_TEXT])
{
	if (v)
		snprintf(out, VITALS_FW_TEXT, "%u.%u.%u", v >> 24, v >> 16 & 0xff, v & 0xffff);
	else
		out[0] = '\0';
}

/* ---- units ---- */

int vitals_uw_to_centi_dbm(unsigned uw)
{
	if (uw == 0)
		return -4000;
	return (int)lround(1000.0 * log10((double)uw / 1000.0));
}

static int div_round(int v, int by)
{
	return v >= 0 ? (v + by / 2) / by : -((-v + by / 2) / by);
}

int vitals_tenths_from_eighths(int16_t v)
{
	return div_round(v * 10, 8);
}

int vitals_tenths_from_256ths(int16_t v)
{
	return div_round(v * 10, 256);
}
