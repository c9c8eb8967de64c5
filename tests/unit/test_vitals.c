/* The vitals' codecs (vitals_decode.c: NVIDIA's vendor MADs, registers,
 * a module's EEPROM), the readings' snapshot and its conditions
 * (vitals_build.c), and /metrics' query (prom_filter_arg). Registers are
 * written here field by field as the .adb lays them out: (dword, lowest
 * bit, width), big-endian. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ibsnmpd/prom.h"
#include "ibsnmpd/vitals.h"

static void set_field(uint8_t *r, unsigned dword, unsigned lsb, unsigned width, uint32_t v)
{
	uint32_t cur = (uint32_t)r[dword] << 24 | (uint32_t)r[dword + 1] << 16 |
		       (uint32_t)r[dword + 2] << 8 | r[dword + 3];
	uint32_t mask = width >= 32 ? 0xffffffffu : ((1u << width) - 1) << lsb;

	cur = (cur & ~mask) | ((v << lsb) & mask);
	r[dword] = (uint8_t)(cur >> 24);
	r[dword + 1] = (uint8_t)(cur >> 16);
	r[dword + 2] = (uint8_t)(cur >> 8);
	r[dword + 3] = (uint8_t)cur;
}

/* ---- GeneralInfo and the routes ---- */

static void general_info_as_vendstat_lays_it_out(void **state)
{
	uint8_t d[232] = {0};
	struct vitals_general_info gi;

	(void)state;
	/* MAD offsets less 24: hw_revision 32, device_id 34, uptime 60, psid 80,
	 * extended firmware 100/104/108, capability mask 160 */
	d[8] = 0, d[9] = 0xa1, d[10] = 0xd2, d[11] = 0xf2;
	set_field(d, 36, 0, 32, 123456);
	memcpy(d + 56, "MT_0000000838", 13);
	set_field(d, 76, 0, 32, 31);
	set_field(d, 80, 0, 32, 2012);
	set_field(d, 84, 0, 32, 4036);
	set_field(d, 136, 20, 1, 1);
	assert_int_equal(vitals_general_info_decode(d, sizeof(d), &gi), 0);
	assert_int_equal(gi.hw_revision, 0xa1);
	assert_int_equal(gi.device_id, 0xd2f2);
	assert_int_equal(gi.uptime_s, 123456);
	assert_string_equal(gi.psid, "MT_0000000838");
	assert_true(gi.fw[0] == 31 && gi.fw[1] == 2012 && gi.fw[2] == 4036);
	assert_true(gi.registers_by_gmp);
	assert_int_equal(vitals_general_info_decode(d, 100, &gi), -1);
}

static void a_register_round_trips_both_routes(void **state)
{
	uint8_t reg[32] = {0}, data[232];
	const uint8_t *got;
	size_t len;
	unsigned status;

	(void)state;
	vitals_mtmp_request(reg, 64 + 5);
	/* GMP: the register after the VS_Key and the config dword (block 0) */
	assert_int_equal(vitals_gmp_request(data, sizeof(data), reg, sizeof(reg)), 232);
	assert_memory_equal(data + 12, reg, sizeof(reg));
	assert_int_equal(vitals_gmp_answer(data, sizeof(data), &got, &len), 0);
	assert_int_equal(len, 220);
	assert_memory_equal(got, reg, sizeof(reg));
	data[9] = 1; /* block 1 (config bits 31..16): not a block-0 answer */
	assert_int_equal(vitals_gmp_answer(data, sizeof(data), &got, &len), -1);
	assert_int_equal(vitals_gmp_status(20), VITALS_REG_STATUS_NOT_SUPPORTED);
	assert_int_equal(vitals_gmp_status(28), VITALS_REG_STATUS_BAD_PARAM);
	/* TLVs: Operation TLV (type 1, 4 dwords, register 0x900a, query), Reg
	 * TLV (type 3, (32 + 4) / 4 dwords) */
	assert_int_equal(vitals_tlv_request(data, sizeof(data), VITALS_REG_MTMP, reg, sizeof(reg)),
			 232);
	assert_int_equal(data[8] >> 3, 1);
	assert_int_equal(data[12] << 8 | data[13], 0x900a);
	assert_int_equal(data[24] >> 3, 3);
	assert_int_equal(data[25], 9);
	/* not yet an answer (r bit 0), then one with status 4 */
	assert_int_equal(vitals_tlv_answer(data, sizeof(data), VITALS_REG_MTMP, &got, &len, &status),
			 -1);
	data[14] |= 0x80;
	data[10] = 4;
	assert_int_equal(vitals_tlv_answer(data, sizeof(data), VITALS_REG_MTMP, &got, &len, &status),
			 0);
	assert_int_equal(status, 4);
	assert_int_equal(len, 32);
	assert_int_equal(vitals_tlv_answer(data, sizeof(data), VITALS_REG_MGIR, &got, &len, &status),
			 -1);
	/* a Reg TLV longer than the MAD: refused */
	data[25] = 60;
	assert_int_equal(vitals_tlv_answer(data, sizeof(data), VITALS_REG_MTMP, &got, &len, &status),
			 -1);
}

/* ---- registers ---- */

static void the_inventory_registers(void **state)
{
	uint8_t r[160] = {0};
	struct vitals_mgir g;
	struct vitals_msgi m;
	struct vitals_mtcap cap;
	unsigned modules;
	uint16_t tachos;

	(void)state;
	set_field(r, 0x00, 0, 16, 0xd2f2);
	set_field(r, 0x00, 16, 16, 0xa1);
	set_field(r, 0x04, 16, 8, 64);
	set_field(r, 0x08, 0, 16, 0x257);
	set_field(r, 0x1c, 0, 32, 86400);
	memcpy(r + 0x30, "MT_0000000838", 13);
	set_field(r, 0x44, 0, 32, 31);
	set_field(r, 0x48, 0, 32, 2012);
	set_field(r, 0x4c, 0, 32, 4036);
	assert_int_equal(vitals_mgir_decode(r, 160, &g), 0);
	assert_true(g.device_id == 0xd2f2 && g.hw_revision == 0xa1 && g.num_ports == 64);
	assert_true(g.hw_dev_id == 0x257 && g.uptime_s == 86400);
	assert_string_equal(g.psid, "MT_0000000838");
	assert_true(g.fw[0] == 31 && g.fw[1] == 2012 && g.fw[2] == 4036);
	assert_int_equal(vitals_mgir_decode(r, 0x40, &g), -1);

	memset(r, 0, sizeof(r));
	memcpy(r, "MT2251X00416", 12);
	memcpy(r + 0x20, "MQM9790-NS2F", 12);
	memcpy(r + 0x38, "A1", 2);
	memcpy(r + 0x40, "Quantum-2 \x01 x", 13); /* what is not text: '?' */
	assert_int_equal(vitals_msgi_decode(r, 128, &m), 0);
	assert_string_equal(m.serial, "MT2251X00416");
	assert_string_equal(m.part, "MQM9790-NS2F");
	assert_string_equal(m.revision, "A1");
	assert_string_equal(m.product, "Quantum-2 ? x");

	memset(r, 0, sizeof(r));
	set_field(r, 0x00, 0, 7, 3);
	set_field(r, 0x0c, 0, 32, 7);
	assert_int_equal(vitals_mtcap_decode(r, 16, &cap), 0);
	assert_true(cap.sensor_count == 3 && cap.sensor_map == 7);

	/* 14 tachometers: 10 in tacho_active, 4 in its msb */
	memset(r, 0, sizeof(r));
	set_field(r, 0x04, 16, 10, 0x3ff);
	set_field(r, 0x04, 26, 6, 0xf);
	assert_int_equal(vitals_mfcr_decode(r, 8, &tachos), 0);
	assert_int_equal(tachos, 0x3fff);

	memset(r, 0, sizeof(r));
	set_field(r, 0x04, 0, 8, 32);
	assert_int_equal(vitals_mgpir_decode(r, 160, &modules), 0);
	assert_int_equal(modules, 32);
}

static void the_readings_registers(void **state)
{
	uint8_t r[32] = {0};
	struct vitals_mtmp t;
	struct vitals_pmaos st;
	struct vitals_pmlp map;
	unsigned rpm;
	uint16_t under, over;

	(void)state;
	vitals_mtmp_request(r, 0);
	set_field(r, 0x04, 0, 16, (uint16_t)-26); /* -3.25 degrees, as the PRM's example */
	set_field(r, 0x08, 0, 16, 800);
	set_field(r, 0x08, 31, 1, 1);
	set_field(r, 0x0c, 0, 16, 840);
	set_field(r, 0x10, 0, 16, 800);
	memcpy(r + 0x18, "ASIC", 4);
	assert_int_equal(vitals_mtmp_decode(r, 32, &t), 0);
	assert_int_equal(t.temp, -26);
	assert_int_equal(vitals_tenths_from_eighths(t.temp), -33); /* -3.25 rounds away */
	assert_true(t.max_valid && t.max == 800 && t.threshold_hi == 840 && t.threshold_lo == 800);
	assert_string_equal(t.name, "ASIC");

	memset(r, 0, sizeof(r));
	vitals_mfsm_request(r, 17); /* tacho 1 and tacho_hi 1 */
	assert_int_equal(r[0], 0x11);
	set_field(r, 0x04, 0, 16, 9100);
	assert_int_equal(vitals_mfsm_decode(r, 8, &rpm), 0);
	assert_int_equal(rpm, 9100);

	memset(r, 0, sizeof(r));
	set_field(r, 0x00, 16, 10, 1u << 3);
	set_field(r, 0x00, 26, 6, 1);
	set_field(r, 0x04, 16, 10, 1);
	assert_int_equal(vitals_fore_decode(r, 12, &under, &over), 0);
	assert_int_equal(under, 1u << 3 | 1u << 10);
	assert_int_equal(over, 1);

	memset(r, 0, sizeof(r));
	vitals_pmaos_request(r, 17);
	set_field(r, 0x00, 0, 4, VITALS_MODULE_ERROR);
	set_field(r, 0x04, 8, 4, 6);
	assert_int_equal(vitals_pmaos_decode(r, 16, &st), 0);
	assert_true(st.module == 17 && st.oper_status == VITALS_MODULE_ERROR && st.error_type == 6);

	/* PMLP of port 300 (local_port with its two msb): 4 lanes, from lane 4 */
	uint8_t p[64] = {0};

	vitals_pmlp_request(p, 300);
	set_field(p, 0x00, 0, 8, 4);
	set_field(p, 0x04, 0, 8, 17);
	set_field(p, 0x04, 16, 4, 4);
	assert_int_equal(vitals_pmlp_decode(p, 64, &map), 0);
	assert_true(map.port == 300 && map.width == 4 && map.module == 17 && map.first_lane == 4);
}

static void pddr_page_3_as_mstlink_reads_it(void **state)
{
	uint8_t r[VITALS_REG_MAX];
	uint8_t *d = r + 8;
	struct vitals_module_info m;

	(void)state;
	vitals_pddr_request(r, 33);
	assert_int_equal(r[1], 33);            /* local_port */
	assert_int_equal(r[2] >> 6, 1);        /* pnat: the IB port */
	assert_int_equal(r[7], 3);             /* page 3 */
	assert_int_equal(r[4] >> 5 & 3, 1);    /* module_info_ext: uW */
	set_field(d, 0x04, 28, 4, 2);          /* optical module */
	set_field(d, 0x04, 8, 8, 8);           /* OSFP */
	set_field(d, 0x04, 16, 8, 1u << 6 | 3); /* 3 m, CMIS multiplier */
	memcpy(d + 0x14, "NVIDIA          ", 16);
	memcpy(d + 0x24, "MMA4Z00-NS      ", 16);
	memcpy(d + 0x34, "A3  ", 4);
	set_field(d, 0x38, 0, 32, 46u << 24 | 120u << 16 | 9);
	memcpy(d + 0x3c, "MT2318F0002064  ", 16);
	set_field(d, 0x4c, 0, 16, 33200);      /* 3.32 V */
	set_field(d, 0x4c, 16, 16, 40 * 256);
	set_field(d, 0x50, 16, 16, 741);       /* lane 0 */
	set_field(d, 0x50, 0, 16, 100);        /* lane 1 */
	set_field(d, 0x5c, 0, 16, 7);          /* lane 7 */
	set_field(d, 0x70, 16, 16, 3900);      /* bias, 2 uA */
	set_field(d, 0x80, 16, 16, 75 * 256);
	set_field(d, 0x88, 0, 16, 100);        /* Rx low alarm: -10 dBm */
	set_field(d, 0x9c, 8, 8, 0x0f);
	memcpy(d + 0xb0, "230814AB", 8);
	assert_int_equal(vitals_pddr_module_decode(r, 204, &m), 0);
	assert_true(m.cable_type == 2 && m.identifier == 8 && m.length_dm == 30);
	assert_string_equal(m.vendor, "NVIDIA");
	assert_string_equal(m.part, "MMA4Z00-NS");
	assert_string_equal(m.serial, "MT2318F0002064");
	assert_string_equal(m.date, "230814AB");
	assert_int_equal(m.fw_version >> 24, 46);
	assert_true(m.have_temp && m.have_voltage && m.have_power && m.have_thresholds);
	assert_int_equal(vitals_tenths_from_256ths(m.temp), 400);
	assert_int_equal(m.voltage, 33200);
	assert_true(m.rx_uw[0] == 741 && m.rx_uw[1] == 100 && m.rx_uw[7] == 7);
	assert_int_equal(m.bias[0], 3900);
	assert_int_equal(m.rx_lo_uw, 100);
	/* a date that is not one: none */
	memcpy(d + 0xb0, "2308\x01\x02\x03\x04", 8);
	assert_int_equal(vitals_pddr_module_decode(r, 204, &m), 0);
	assert_string_equal(m.date, "");
	/* unplugged: nothing more */
	set_field(d, 0x04, 28, 4, 4);
	assert_int_equal(vitals_pddr_module_decode(r, 204, &m), 0);
	assert_true(m.cable_type == 4 && !m.vendor[0] && !m.have_temp);
	/* another page, or too short */
	r[7] = 0;
	assert_int_equal(vitals_pddr_module_decode(r, 204, &m), -1);
	r[7] = 3;
	assert_int_equal(vitals_pddr_module_decode(r, 100, &m), -1);
}

static void cmis_and_sff_8636_eeproms(void **state)
{
	uint8_t e[256] = {0}, p[256] = {0};
	uint8_t mcia[148] = {0};
	struct vitals_module_info m;
	const uint8_t *data;
	size_t n;
	unsigned status;

	(void)state;
	/* CMIS (OSFP): identity in upper page 00h, monitors in the lower page */
	e[0] = 0x19, e[3] = 3 << 1, e[14] = 38, e[15] = 128, e[16] = 0x81, e[17] = 0xb0;
	e[85] = 1;
	memcpy(e + 129, "NVIDIA          ", 16);
	memcpy(e + 148, "MMA4Z00-NS      ", 16);
	memcpy(e + 164, "A3", 2);
	memcpy(e + 166, "MT2318F0002064  ", 16);
	memcpy(e + 182, "230814  ", 8);
	assert_int_equal(vitals_eeprom_decode(e, &m), 0);
	assert_true(m.identifier == 8 && m.cable_type == 2 && m.module_state == 3);
	assert_string_equal(m.part, "MMA4Z00-NS");
	assert_int_equal(vitals_tenths_from_256ths(m.temp), 385);
	assert_int_equal(m.voltage, 0x81b0);
	/* page 11h: lane Rx power in 0.1 uW */
	p[186] = 0x1c, p[187] = 0xf2; /* 7410 = 741 uW */
	vitals_eeprom_cmis_lanes(p, 8, &m);
	assert_int_equal(m.rx_uw[0], 741);
	/* page 02h: the low Rx alarm at 194 */
	p[194] = 0x03, p[195] = 0xe8; /* 1000 = 100 uW */
	vitals_eeprom_thresholds(p, true, &m);
	assert_int_equal(m.rx_lo_uw, 100);
	/* SFF-8636 (QSFP28), passive copper: no monitors */
	memset(e, 0, sizeof(e));
	e[0] = 0x11, e[2] = 0x04, e[146] = 2, e[147] = 0xa0;
	memcpy(e + 148, "Mellanox        ", 16);
	assert_int_equal(vitals_eeprom_decode(e, &m), 0);
	assert_true(m.identifier == 0 && m.cable_type == 3 && m.length_dm == 20 && !m.have_temp);
	assert_string_equal(m.vendor, "Mellanox");
	/* an identifier of neither */
	e[0] = 0x42;
	assert_int_equal(vitals_eeprom_decode(e, &m), -1);
	/* MCIA: its status and its octets */
	vitals_mcia_request(mcia, 3, 0x11, 154, 48);
	assert_true(mcia[1] == 3 && mcia[5] == 0x11 && mcia[6] == 0 && mcia[7] == 154 &&
		    mcia[11] == 48);
	assert_int_equal(vitals_mcia_decode(mcia, sizeof(mcia), &status, &data, &n), 0);
	assert_true(status == 0 && n == 48 && data == mcia + 16);
	mcia[11] = 200; /* longer than the register */
	assert_int_equal(vitals_mcia_decode(mcia, sizeof(mcia), &status, &data, &n), -1);
}

static void units(void **state)
{
	(void)state;
	assert_int_equal(vitals_uw_to_centi_dbm(1000), 0);
	assert_int_equal(vitals_uw_to_centi_dbm(100), -1000);
	assert_int_equal(vitals_uw_to_centi_dbm(2000), 301);
	assert_int_equal(vitals_uw_to_centi_dbm(0), -4000);
	assert_int_equal(vitals_tenths_from_eighths(428), 535);
	assert_int_equal(vitals_tenths_from_256ths(-5 * 256), -50);
}

/* ---- the readings' snapshot ---- */

struct world {
	struct vitals_inventory inv;
	struct vitals_inv_node node;
	struct vitals_temp temps[1];
	struct vitals_fan fans[1];
	struct vitals_module modules[1];
	struct vitals_lane lanes[1];
	struct vitals_reading reading;
};

static void world_init(struct world *w)
{
	memset(w, 0, sizeof(*w));
	w->inv.refs = 100; /* the test's: never freed by a snapshot */
	w->inv.n = 1;
	w->inv.nodes = &w->node;
	w->node = (struct vitals_inv_node){.guid = 0x42, .lid = 7, .type = 2, .num_ports = 2,
					   .desc = "sw", .status = VITALS_READ};
	w->reading = (struct vitals_reading){.guid = 0x42, .answered = true, .uptime_s = 1000,
					     .temps = w->temps, .n_temps = 1, .fans = w->fans,
					     .n_fans = 1, .modules = w->modules, .n_modules = 1,
					     .lanes = w->lanes, .n_lanes = 1};
	w->temps[0] = (struct vitals_temp){.guid = 0x42, .temp = 50 * 8, .threshold_hi = 105 * 8,
					   .threshold_lo = 100 * 8};
	w->fans[0] = (struct vitals_fan){.guid = 0x42, .rpm = 9000};
	w->modules[0] = (struct vitals_module){.guid = 0x42, .first_port = 1, .n_ports = 2,
					       .oper_status = VITALS_MODULE_PLUGGED, .have_info = true};
	w->modules[0].info.have_thresholds = true;
	w->modules[0].info.rx_lo_uw = 100;
	w->lanes[0] = (struct vitals_lane){.guid = 0x42, .port = 1, .lane = 1, .rx_uw = 700};
}

static struct vitals_snapshot *build(struct world *w, const struct vitals_snapshot *prev,
				     time_t now)
{
	struct vitals_build in = {.inv = &w->inv, .readings = &w->reading, .n_readings = 1,
				  .prev = prev, .now = now};

	return vitals_build(&in);
}

static void conditions_follow_their_thresholds_and_are_told_once(void **state)
{
	struct world w;
	struct vitals_snapshot *s0, *s1, *s2, *s3;

	(void)state;
	world_init(&w);
	/* the first readings: what is wrong is served, not told */
	w.fans[0].under = true;
	s0 = build(&w, NULL, 100);
	assert_true(s0->fans[0].failed && !s0->fans[0].events);
	assert_int_equal(s0->nodes[0].fans_failed, 1);
	assert_true(s0->nodes[0].have_asic && s0->nodes[0].asic_temp == 400);
	/* over the high threshold, the fan back, the module out, the lane low */
	w.temps[0].temp = 105 * 8;
	w.fans[0].under = false;
	w.modules[0].oper_status = VITALS_MODULE_UNPLUGGED;
	w.lanes[0].rx_uw = 99;
	s1 = build(&w, s0, 160);
	assert_int_equal(s1->temps[0].events, VITALS_EV_TEMP_HIGH);
	assert_int_equal(s1->fans[0].events, VITALS_EV_FAN_RESTORED);
	assert_int_equal(s1->modules[0].events, VITALS_EV_MODULE_REMOVED);
	assert_false(s1->modules[0].have_info);
	/* the lane's module is out: no threshold, not low */
	assert_false(s1->lanes[0].rx_low);
	/* under the high threshold but over the low: still high, nothing told;
	 * the module in again with an error */
	w.temps[0].temp = 102 * 8;
	w.modules[0].oper_status = VITALS_MODULE_ERROR;
	w.modules[0].have_info = true;
	s2 = build(&w, s1, 220);
	assert_true(s2->temps[0].high && !s2->temps[0].events);
	assert_int_equal(s2->modules[0].events, VITALS_EV_MODULE_FAULTED);
	assert_true(s2->lanes[0].rx_low && s2->lanes[0].events == VITALS_EV_RX_LOW);
	/* under the low threshold: normal; the lane over the alarm but not 1 dB
	 * over: still low; the error cleared: in */
	w.temps[0].temp = 99 * 8;
	w.modules[0].oper_status = VITALS_MODULE_PLUGGED;
	w.lanes[0].rx_uw = 120;
	s3 = build(&w, s2, 280);
	assert_int_equal(s3->temps[0].events, VITALS_EV_TEMP_NORMAL);
	assert_int_equal(s3->modules[0].events, VITALS_EV_MODULE_INSERTED);
	assert_true(s3->lanes[0].rx_low && !s3->lanes[0].events);
	vitals_snapshot_free(s0);
	vitals_snapshot_free(s1);
	vitals_snapshot_free(s2);
	/* 1 dB over (126 uW): normal */
	w.lanes[0].rx_uw = 127;
	s1 = build(&w, s3, 340);
	assert_true(!s1->lanes[0].rx_low && s1->lanes[0].events == VITALS_EV_RX_NORMAL);
	vitals_snapshot_free(s3);
	vitals_snapshot_free(s1);
}

/* A switch's lanes: each new lane finds its own previous reading among
 * many (one walk of the old rows), also when a port's lanes come and go */
static void lanes_are_matched_by_port_and_lane(void **state)
{
	struct world w;
	struct vitals_lane lanes[8];
	struct vitals_snapshot *s0, *s1, *s2;

	(void)state;
	world_init(&w);
	for (unsigned i = 0; i < 8; i++)
		lanes[i] = (struct vitals_lane){.guid = 0x42, .port = (uint16_t)(1 + i / 4),
						.lane = (uint8_t)(1 + i % 4), .rx_uw = 700};
	w.reading.lanes = lanes;
	w.reading.n_lanes = 8;
	s0 = build(&w, NULL, 100);
	lanes[6].rx_uw = 50; /* port 2 lane 3 */
	s1 = build(&w, s0, 160);
	for (unsigned i = 0; i < 8; i++)
		assert_int_equal(s1->lanes[i].events, i == 6 ? VITALS_EV_RX_LOW : 0);
	/* port 1 now reads two lanes only: port 2 lane 3 is still low, told once */
	lanes[2] = lanes[4], lanes[3] = lanes[5], lanes[4] = lanes[6], lanes[5] = lanes[7];
	w.reading.n_lanes = 6;
	s2 = build(&w, s1, 220);
	assert_int_equal(s2->n_lanes, 6);
	for (unsigned i = 0; i < 6; i++) {
		assert_int_equal(s2->lanes[i].events, 0);
		assert_int_equal(s2->lanes[i].rx_low, i == 4);
	}
	vitals_snapshot_free(s0);
	vitals_snapshot_free(s1);
	vitals_snapshot_free(s2);
}

static void a_silent_node_keeps_its_rows_stale_and_a_restart_is_seen(void **state)
{
	struct world w;
	struct vitals_snapshot *s0, *s1, *s2;

	(void)state;
	world_init(&w);
	s0 = build(&w, NULL, 100);
	w.reading.answered = false;
	s1 = build(&w, s0, 160);
	assert_true(s1->nodes[0].stale && s1->n_temps == 1 && s1->temps[0].stale);
	assert_int_equal(s1->temps[0].temp, 50 * 8);
	assert_int_equal(s1->nodes[0].read_at, 100);
	/* answering again with a lower uptime: it restarted */
	w.reading.answered = true;
	w.reading.uptime_s = 30;
	s2 = build(&w, s1, 220);
	assert_true(s2->nodes[0].restarted && !s2->nodes[0].stale);
	/* a sensor whose reading went unanswered keeps its last value, stale */
	w.temps[0].stale = true;
	w.temps[0].temp = 0;
	vitals_snapshot_free(s0);
	s0 = build(&w, s2, 280);
	assert_true(s0->temps[0].stale && s0->temps[0].temp == 50 * 8);
	vitals_snapshot_free(s0);
	vitals_snapshot_free(s1);
	vitals_snapshot_free(s2);
}

/* A partial sweep (what a topology patch named): a node not read keeps
 * its rows as they were, stale or not, and nothing is told of it */
static void a_partial_sweep_keeps_the_nodes_it_did_not_read(void **state)
{
	struct world w;
	struct vitals_build in;
	struct vitals_snapshot *s0, *s1, *s2;

	(void)state;
	world_init(&w);
	s0 = build(&w, NULL, 100);
	in = (struct vitals_build){.inv = &w.inv, .readings = NULL, .n_readings = 0, .prev = s0,
				   .now = 160, .partial = true};
	s1 = vitals_build(&in);
	assert_true(!s1->nodes[0].stale && s1->n_temps == 1 && !s1->temps[0].stale);
	assert_true(!s1->fans[0].stale && !s1->modules[0].stale && s1->n_lanes == 1);
	assert_int_equal(s1->nodes[0].read_at, 100);
	assert_int_equal(s1->temps[0].events, 0);
	/* the same without partial: stale */
	in.partial = false;
	s2 = vitals_build(&in);
	assert_true(s2->nodes[0].stale && s2->temps[0].stale && s2->modules[0].stale);
	/* a stale node stays stale in a partial sweep that did not read it */
	vitals_snapshot_free(s1);
	in.prev = s2;
	in.partial = true;
	s1 = vitals_build(&in);
	assert_true(s1->nodes[0].stale && s1->temps[0].stale);
	vitals_snapshot_free(s0);
	vitals_snapshot_free(s1);
	vitals_snapshot_free(s2);
}

/* ---- /metrics' query ---- */

static void the_metrics_query_selects_and_refuses(void **state)
{
	struct prom_filter f = {0};
	const char *why = NULL;
	unsigned count[4] = {0};

	(void)state;
	assert_int_equal(prom_filter_arg(&f, "collect[]", "vitals", &why), 0);
	assert_int_equal(prom_filter_arg(&f, "collect[]", "modules", &why), 0);
	assert_int_equal(f.collectors, 1u << PROM_C_VITALS | 1u << PROM_C_MODULES);
	assert_int_equal(prom_filter_arg(&f, "node_type", "switch", &why), 0);
	assert_int_equal(f.node_types, 1u << 2);
	assert_int_equal(prom_filter_arg(&f, "shard", "3", &why), 0);
	assert_int_equal(prom_filter_arg(&f, "shards", "4", &why), 0);
	assert_int_equal(prom_filter_check(&f, &why), 0);
	assert_int_equal(prom_filter_arg(&f, "collect[]", "vital", &why), -1);
	assert_non_null(why);
	assert_int_equal(prom_filter_arg(&f, "node_type", "", &why), -1);
	assert_int_equal(prom_filter_arg(&f, "shards", "0", &why), -1);
	assert_int_equal(prom_filter_arg(&f, "shard", "-1", &why), -1);
	assert_int_equal(prom_filter_arg(&f, "shard", "99999999", &why), -1);
	assert_int_equal(prom_filter_arg(&f, "target", "x", &why), -1);
	assert_int_equal(prom_filter_arg(&f, "collect[]", NULL, &why), -1);
	f.shard = 4;
	assert_int_equal(prom_filter_check(&f, &why), -1);
	f = (struct prom_filter){.shard = 1};
	assert_int_equal(prom_filter_check(&f, &why), -1);
	/* GUIDs in sequence spread over the shards */
	for (uint64_t g = 0xf452140320000001ULL; g < 0xf452140320000001ULL + 4000; g++)
		count[prom_shard_of(g, 4)]++;
	for (int k = 0; k < 4; k++)
		assert_in_range(count[k], 900, 1100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(general_info_as_vendstat_lays_it_out),
		cmocka_unit_test(a_register_round_trips_both_routes),
		cmocka_unit_test(the_inventory_registers),
		cmocka_unit_test(the_readings_registers),
		cmocka_unit_test(pddr_page_3_as_mstlink_reads_it),
		cmocka_unit_test(cmis_and_sff_8636_eeproms),
		cmocka_unit_test(units),
		cmocka_unit_test(conditions_follow_their_thresholds_and_are_told_once),
		cmocka_unit_test(lanes_are_matched_by_port_and_lane),
		cmocka_unit_test(a_silent_node_keeps_its_rows_stale_and_a_restart_is_seen),
		cmocka_unit_test(a_partial_sweep_keeps_the_nodes_it_did_not_read),
		cmocka_unit_test(the_metrics_query_selects_and_refuses),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
