/* fabricsim: NVIDIA's vendor MADs and the registers behind them, as a
 * Quantum-2 switch and a ConnectX-7 adapter answer them, for ibsnmpd's
 * vitals and for Debian's mstflint tools (mstreg, mstlink) and vendstat run
 * through libumad2sim.
 *
 * Facts (../shared/notes/vendor-mads.md; mstflint's mtcr_ul/mtcr_ib_ofed.c
 * and register_access_table.adb; infiniband-diags' vendstat.c):
 *   class 0x0A, LID-routed GMPs to QP1, data at MAD offset 24 with the
 *   8-octet VS_Key first:
 *     0x0001 ClassPortInfo, 0x0017 GeneralInfo (capability bit 20 at MAD
 *     octet 160: AccessRegister over GMP), 0x0050 ConfigSpaceAccess (the
 *     tools read the hardware ID at 0xf0014 before anything else),
 *     0xFF52 AccessRegister: Operation TLV, Reg TLV, register (204 octets),
 *     0x0051 AccessRegisterGMP: attribute modifier the register ID, a
 *     config dword (block << 16) at 32, 220 octets of register at 36, the
 *     register status in the MAD status (20 not supported, 28 bad field);
 *   SMP 0xFF52 AccessRegister (a SubnSet, TLVs in the 64-octet SMP data: 44
 *   octets of register).
 * Register images are big-endian dwords; a field is (dword offset, lowest
 * bit, width) as the .adb gives it.
 *
 * The models move: temperatures drift, fans turn at a jittering speed,
 * uptime counts; what the console sets stays as set. */
#include <endian.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <infiniband/mad.h>

#include "fabricsim.h"

#define NVIDIA_VENDOR_ID 0x0002c9u /* what NVIDIA (Mellanox) IB devices report */
#define OTHER_VENDOR_ID 0x00066au  /* QLogic: a switch of another vendor */

#define STATUS_UNSUP_ATTR 0x000c
#define STATUS_BAD_FIELD 0x001c

/* register status (Operation TLV) and its GMP MAD status */
#define REG_OK 0
#define REG_NOT_SUPPORTED 4
#define REG_METHOD_NOT_SUPPORTED 6
#define REG_BAD_PARAM 7

#define VS_DATA 24        /* class 0x0A data: VS_Key, then the attribute */
#define VS_PAYLOAD 32
#define GMP_BLOCK 220     /* register octets per AccessRegisterGMP block */
#define CLASS_A_REG_MAX 204
#define SMP_REG_MAX 44
#define REG_IMAGE_MAX 256 /* the largest register modelled: PDDR */

#define ATTR_CLASS_PORT_INFO 0x0001
#define ATTR_GENERAL_INFO 0x0017
#define ATTR_CONFIG_SPACE 0x0050
#define ATTR_ACCESS_REG_GMP 0x0051
#define ATTR_ACCESS_REG 0xff52

enum fs_register {
	REG_MGIR, REG_MSGI, REG_MTCAP, REG_MTMP, REG_MFCR, REG_MFSM, REG_FORE, REG_MGPIR,
	REG_PMAOS, REG_PMLP, REG_PDDR, REG_MCIA, REG_PLIB, REG_PAOS, REG_SLTP, REG_PTYS, REG_COUNT
};

static const struct {
	const char *name;
	uint16_t id, size;
} registers[REG_COUNT] = {
	[REG_MGIR] = {"MGIR", 0x9020, 160},   [REG_MSGI] = {"MSGI", 0x9021, 128},
	[REG_MTCAP] = {"MTCAP", 0x9009, 16},  [REG_MTMP] = {"MTMP", 0x900a, 32},
	[REG_MFCR] = {"MFCR", 0x9001, 8},     [REG_MFSM] = {"MFSM", 0x9003, 8},
	[REG_FORE] = {"FORE", 0x9007, 12},    [REG_MGPIR] = {"MGPIR", 0x9100, 160},
	[REG_PMAOS] = {"PMAOS", 0x5012, 16},  [REG_PMLP] = {"PMLP", 0x5002, 64},
	[REG_PDDR] = {"PDDR", 0x5031, 256},   [REG_MCIA] = {"MCIA", 0x9014, 148},
	[REG_PLIB] = {"PLIB", 0x500a, 16},    [REG_PAOS] = {"PAOS", 0x5006, 16},
	[REG_SLTP] = {"SLTP", 0x5027, 76},    [REG_PTYS] = {"PTYS", 0x5004, 68},
};

int fs_register_by_name(const char *name)
{
	for (int r = 0; r < REG_COUNT; r++)
		if (!strcasecmp(name, registers[r].name))
			return r;
	return -1;
}

/* ---- big-endian fields ---- */

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t get_bits(const uint8_t *img, unsigned dword, unsigned lsb, unsigned width)
{
	uint32_t v = get32(img + dword);

	return width >= 32 ? v : (v >> lsb) & ((1u << width) - 1);
}

static void set_bits(uint8_t *img, unsigned dword, unsigned lsb, unsigned width, uint32_t value)
{
	uint32_t mask = width >= 32 ? 0xffffffffu : ((1u << width) - 1) << lsb;

	put32(img + dword, (get32(img + dword) & ~mask) | ((value << lsb) & mask));
}

static void put_text(uint8_t *p, size_t len, const char *s, char pad)
{
	size_t n = strlen(s);

	memset(p, pad, len);
	memcpy(p, s, n < len ? n : len);
}

/* ---- the node models ---- */

static double model_time(const struct fabric *f)
{
	return fs_now() - f->epoch;
}

static bool is_switch(const struct fabric *f, uint32_t node)
{
	return f->nodes[node].type == FS_SWITCH;
}

/* A Quantum-2 switch has OSFP cages of two ports each; an adapter one
 * module behind its port. */
static unsigned ports_per_module(const struct fabric *f, uint32_t node)
{
	return is_switch(f, node) && f->nodes[node].nports % 2 == 0 ? 2 : 1;
}

int fs_module_of_port(const struct fabric *f, uint32_t node, unsigned port)
{
	if (port < 1 || port > f->nodes[node].nports)
		return -1;
	return (int)((port - 1) / ports_per_module(f, node));
}

uint32_t fs_vendor_id(const struct fabric *f, uint32_t node)
{
	return f->nodes[node].vendor == FS_VENDOR_OTHER ? OTHER_VENDOR_ID : NVIDIA_VENDOR_ID;
}

struct fs_vitals *fs_vitals_of(struct fabric *f, uint32_t node)
{
	struct fs_vitals *v;

	if (!f->vitals)
		f->vitals = calloc(f->nnodes, sizeof(*f->vitals));
	if (!f->vitals)
		return NULL;
	if (f->vitals[node])
		return f->vitals[node];
	v = calloc(1, sizeof(*v));
	if (!v)
		return NULL;
	for (int k = 0; k < FS_TACHOS_MAX; k++)
		v->fan_rpm[k] = -1;
	v->n_modules = (f->nodes[node].nports + ports_per_module(f, node) - 1) /
		       ports_per_module(f, node);
	v->modules = calloc(v->n_modules ? v->n_modules : 1, sizeof(*v->modules));
	if (!v->modules) {
		free(v);
		return NULL;
	}
	f->vitals[node] = v;
	return v;
}

static double asic_celsius(struct fabric *f, uint32_t node, struct fs_vitals *v)
{
	double c = v->asic_set ? v->asic_c :
		45.0 + node % 9 + 1.5 * sin(model_time(f) / 120.0 + node);

	if (c > v->max_asic_c)
		v->max_asic_c = c;
	return c;
}

static double ambient_celsius(struct fabric *f, uint32_t node, struct fs_vitals *v, unsigned i)
{
	return v->amb_set[i] ? v->amb_c[i] :
		27.0 + node % 5 + 3.0 * i + 0.5 * sin(model_time(f) / 300.0 + node + i);
}

/* 14 tachos on a switch (seven fans of two rotors); none on an adapter */
static unsigned tachos(const struct fabric *f, uint32_t node)
{
	return is_switch(f, node) ? 14 : 0;
}

static unsigned fan_rpm(struct fabric *f, uint32_t node, struct fs_vitals *v, unsigned k)
{
	double base = 8000.0 + (node * 37u) % 500 + (k % 2) * 1800.0;

	if (v->fan_rpm[k] >= 0)
		return (unsigned)v->fan_rpm[k];
	return (unsigned)(base + base * 0.01 * sin(model_time(f) / 30.0 + k));
}

/* FORE's limits: under 3,000 rpm (a stopped fan is 0) or over 20,000 */
#define FAN_RPM_LOW 3000
#define FAN_RPM_HIGH 20000

/* The cable at a port: a passive copper splitter to the hosts, optical
 * transceivers between switches. */
static bool port_to_host(const struct fabric *f, uint32_t node, unsigned port)
{
	const struct fs_port *p = &f->ports[f->nodes[node].first_port + port];

	if (!is_switch(f, node))
		return true; /* an adapter's cable is a host cable */
	return p->peer != FS_NO_PORT && !is_switch(f, fs_node_of_port(f, p->peer));
}

struct module_identity {
	bool optical, cmis;
	const char *vendor, *pn, *rev;
	char sn[17];
	const char *date;      /* YYMMDD */
	unsigned length_m;     /* cable assembly, 0 for a separable transceiver */
	unsigned lanes;        /* of the module (8 for a twin-port OSFP) */
	uint32_t fw;           /* major << 24 | minor << 16 | build */
};

static void module_identity(const struct fabric *f, uint32_t node, unsigned module,
			    struct module_identity *id)
{
	unsigned first_port = module * ports_per_module(f, node) + 1;
	bool ndr = f->ports[f->nodes[node].first_port + first_port].speed >= FS_NDR;

	memset(id, 0, sizeof(*id));
	id->cmis = ndr; /* OSFP at NDR and XDR; QSFP (SFF-8636) below */
	id->optical = !port_to_host(f, node, first_port);
	id->vendor = ndr ? "NVIDIA" : "Mellanox";
	id->lanes = ports_per_module(f, node) * 4;
	if (id->optical) {
		id->pn = ndr ? (id->lanes == 8 ? "MMA4Z00-NS" : "MMA4Z00-NS400") : "MMA1T00-HS";
		id->rev = "A3";
		id->fw = 46u << 24 | 120u << 16 | 9;
	} else {
		/* both ends of one copper cable: the switch's 2-way end, the host's */
		id->pn = ndr ? "MCP7Y00-N002" : "MCP1650-H002E26";
		id->rev = "A1";
		id->length_m = 2;
	}
	id->date = "230814";
	snprintf(id->sn, sizeof(id->sn), "MT23%02u%c%07u", 10 + (node + module) % 40,
		 id->optical ? 'F' : 'C', (unsigned)((node * 64u + module) % 10000000u));
}

static double module_celsius(struct fabric *f, uint32_t node, unsigned m,
			     const struct module_identity *id)
{
	struct fs_vitals *v = fs_vitals_of(f, node);

	if (v && v->modules[m].temp_set)
		return v->modules[m].temp_c;
	if (!id->optical)
		return 0; /* passive copper: no sensor */
	return 38.0 + (node + m) % 8 + 0.8 * sin(model_time(f) / 200.0 + m);
}

static double rx_dbm(struct fabric *f, uint32_t node, unsigned m, unsigned lane)
{
	struct fs_vitals *v = fs_vitals_of(f, node);

	if (v && v->modules[m].rx_set[lane])
		return v->modules[m].rx_dbm[lane];
	return -1.5 + ((node * 7 + m * 3 + lane) % 10) * 0.1 +
	       0.05 * sin(model_time(f) / 60.0 + lane);
}

static double tx_dbm(uint32_t node, unsigned lane)
{
	return 0.5 + ((node + lane) % 5) * 0.1;
}

static double bias_ma(unsigned m, unsigned lane)
{
	return 7.0 + ((m + lane) % 6) * 0.2;
}

static double module_volts(uint32_t node)
{
	return 3.30 + (node % 5) * 0.01;
}

/* the module's alarm thresholds (what CMIS page 02h and PDDR carry) */
#define TEMP_HIGH_ALARM 75.0
#define TEMP_LOW_ALARM -5.0
#define VOLT_HIGH 3.63
#define VOLT_LOW 2.97
#define RX_HIGH_DBM 4.0
#define RX_LOW_DBM -10.0
#define TX_HIGH_DBM 4.0
#define TX_LOW_DBM -8.0
#define BIAS_HIGH_MA 15.0
#define BIAS_LOW_MA 2.0

static uint16_t dbm_to_uw(double dbm)
{
	double uw = 1000.0 * pow(10.0, dbm / 10.0);

	return (uint16_t)(uw > 65535 ? 65535 : uw + 0.5);
}

/* dBm as PDDR's dBm mode gives it: a whole number, two's complement */
static uint16_t dbm_whole(double dbm)
{
	return (uint16_t)(int16_t)lround(dbm);
}

static uint16_t celsius_256(double c)
{
	return (uint16_t)(int16_t)lround(c * 256.0);
}

static uint16_t celsius_8(double c)
{
	return (uint16_t)(int16_t)lround(c * 8.0);
}

static uint32_t uptime_s(struct fabric *f, uint32_t node)
{
	return (3 + node % 40) * 86400u + (node * 3571u) % 86400u + (uint32_t)model_time(f);
}

/* firmware: Quantum-2 31.2012.4036, ConnectX-7 28.39.1002 */
static void firmware(const struct fabric *f, uint32_t node, uint32_t v[3], const char **psid)
{
	if (is_switch(f, node)) {
		v[0] = 31, v[1] = 2012, v[2] = 4036;
		*psid = "MT_0000000838";
	} else {
		v[0] = 28, v[1] = 39, v[2] = 1002;
		*psid = "MT_0000000834";
	}
}

/* hardware IDs as mstflint's device table has them */
static unsigned hw_dev_id(const struct fabric *f, uint32_t node)
{
	return is_switch(f, node) ? 0x257 : 0x218;
}

/* ---- the registers ---- */

static int reg_mgir(struct fabric *f, uint32_t node, uint8_t *r)
{
	uint32_t fw[3];
	const char *psid;

	firmware(f, node, fw, &psid);
	memset(r, 0, 160);
	set_bits(r, 0x00, 0, 16, f->nodes[node].device_id);
	set_bits(r, 0x00, 16, 16, 0xa1);
	set_bits(r, 0x04, 16, 8, f->nodes[node].nports);
	set_bits(r, 0x08, 0, 16, hw_dev_id(f, node));
	put32(r + 0x1c, uptime_s(f, node));
	put32(r + 0x24, 0x5c3a9e21u);      /* build_id */
	set_bits(r, 0x28, 0, 16, 0x2023);  /* BCD: 2023-08-14 12:30 */
	set_bits(r, 0x28, 16, 8, 0x14);
	set_bits(r, 0x28, 24, 8, 0x08);
	set_bits(r, 0x2c, 0, 16, 0x1230);
	put_text(r + 0x30, 16, psid, 0);
	put32(r + 0x44, fw[0]);
	put32(r + 0x48, fw[1]);
	put32(r + 0x4c, fw[2]);
	return REG_OK;
}

static int reg_msgi(struct fabric *f, uint32_t node, uint8_t *r)
{
	char serial[32];

	if (!is_switch(f, node))
		return REG_NOT_SUPPORTED; /* a switch system's register */
	memset(r, 0, 128);
	snprintf(serial, sizeof(serial), "MT2251X%05u", (unsigned)(node * 13u % 100000u));
	put_text(r + 0x00, 24, serial, 0);
	put_text(r + 0x20, 20, "MQM9790-NS2F", 0);
	put_text(r + 0x38, 4, "A1", 0);
	put_text(r + 0x40, 64, "Quantum-2 Unmng IB 400", 0);
	return REG_OK;
}

/* sensors: 0 the ASIC, 1 and 2 ambient (switches), 64 + M module M */
static unsigned sensor_count(const struct fabric *f, uint32_t node)
{
	return is_switch(f, node) ? 3 : 1;
}

static int reg_mtcap(struct fabric *f, uint32_t node, uint8_t *r)
{
	unsigned n = sensor_count(f, node);

	memset(r, 0, 16);
	set_bits(r, 0x00, 0, 7, n);
	set_bits(r, 0x04, 0, 7, 1);
	put32(r + 0x0c, (1u << n) - 1); /* sensor_map, low half */
	return REG_OK;
}

static int reg_mtmp(struct fabric *f, uint32_t node, struct fs_vitals *v, uint8_t *r)
{
	unsigned index = get_bits(r, 0x00, 0, 12);
	double c, hi, lo;
	const char *name;
	uint32_t keep = get32(r);

	if (index == 0) {
		c = asic_celsius(f, node, v);
		hi = 105, lo = 100, name = "ASIC";
	} else if (index < sensor_count(f, node)) {
		c = ambient_celsius(f, node, v, index - 1);
		hi = 70, lo = 65, name = index == 1 ? "AMB_PORT" : "AMB_FAN";
	} else if (index >= 64 && index - 64 < v->n_modules) {
		struct module_identity id;
		unsigned m = index - 64;

		module_identity(f, node, m, &id);
		name = "MODULE";
		if (v->modules[m].state == FS_MODULE_UNPLUGGED)
			c = hi = lo = 0;
		else
			c = module_celsius(f, node, m, &id), hi = TEMP_HIGH_ALARM, lo = 70;
	} else {
		return REG_BAD_PARAM;
	}
	memset(r, 0, 32);
	put32(r, keep);
	set_bits(r, 0x04, 0, 16, celsius_8(c));
	set_bits(r, 0x08, 0, 16, celsius_8(index == 0 ? v->max_asic_c : c));
	set_bits(r, 0x08, 31, 1, 1); /* mte */
	set_bits(r, 0x0c, 0, 16, celsius_8(hi));
	set_bits(r, 0x10, 0, 16, celsius_8(lo));
	put_text(r + 0x18, 8, name, 0);
	return REG_OK;
}

static int reg_mfcr(struct fabric *f, uint32_t node, uint8_t *r)
{
	unsigned n = tachos(f, node);

	if (!n)
		return REG_NOT_SUPPORTED;
	memset(r, 0, 8);
	set_bits(r, 0x00, 0, 7, 1);
	set_bits(r, 0x04, 16, 10, ((1u << n) - 1) & 0x3ff);
	set_bits(r, 0x04, 26, 6, ((1u << n) - 1) >> 10);
	return REG_OK;
}

static int reg_mfsm(struct fabric *f, uint32_t node, struct fs_vitals *v, uint8_t *r)
{
	unsigned k = get_bits(r, 0x00, 24, 4) | get_bits(r, 0x00, 28, 4) << 4;

	if (!tachos(f, node))
		return REG_NOT_SUPPORTED;
	if (k >= tachos(f, node))
		return REG_BAD_PARAM;
	set_bits(r, 0x04, 0, 16, fan_rpm(f, node, v, k));
	return REG_OK;
}

static int reg_fore(struct fabric *f, uint32_t node, struct fs_vitals *v, uint8_t *r)
{
	uint32_t under = 0, over = 0;

	if (!tachos(f, node))
		return REG_NOT_SUPPORTED;
	for (unsigned k = 0; k < tachos(f, node); k++) {
		unsigned rpm = fan_rpm(f, node, v, k);

		under |= (rpm < FAN_RPM_LOW) << k;
		over |= (rpm > FAN_RPM_HIGH) << k;
	}
	memset(r, 0, 12);
	set_bits(r, 0x00, 16, 10, under & 0x3ff);
	set_bits(r, 0x00, 26, 6, under >> 10);
	set_bits(r, 0x04, 16, 10, over & 0x3ff);
	set_bits(r, 0x04, 26, 6, over >> 10);
	return REG_OK;
}

static int reg_mgpir(struct fabric *f, uint32_t node, struct fs_vitals *v, uint8_t *r)
{
	(void)f;
	(void)node;
	memset(r, 0, 160);
	set_bits(r, 0x00, 8, 8, v->n_modules); /* num_of_modules_per_system */
	set_bits(r, 0x04, 0, 8, v->n_modules); /* num_of_modules */
	return REG_OK;
}

static int reg_pmaos(struct fs_vitals *v, uint8_t *r)
{
	unsigned m = get_bits(r, 0x00, 16, 8);
	uint32_t keep = get32(r);

	if (m >= v->n_modules)
		return REG_BAD_PARAM;
	memset(r, 0, 16);
	put32(r, keep);
	set_bits(r, 0x00, 0, 4, v->modules[m].state == FS_MODULE_PLUGGED ? 1 :
				 v->modules[m].state == FS_MODULE_UNPLUGGED ? 2 : 3);
	set_bits(r, 0x00, 8, 4, 1); /* admin: enabled */
	if (v->modules[m].state == FS_MODULE_FAULT)
		set_bits(r, 0x04, 8, 4, v->modules[m].error_type);
	return REG_OK;
}

/* local ports are the IB port numbers here */
static int local_port_of(const struct fabric *f, uint32_t node, const uint8_t *r)
{
	unsigned p = get_bits(r, 0x00, 16, 8) | get_bits(r, 0x00, 12, 2) << 8;

	return p >= 1 && p <= f->nodes[node].nports ? (int)p : -1;
}

static int reg_pmlp(struct fabric *f, uint32_t node, uint8_t *r)
{
	int port = local_port_of(f, node, r);
	uint32_t keep = get32(r);
	unsigned first;

	if (port < 0)
		return REG_BAD_PARAM;
	first = ((unsigned)port - 1) % ports_per_module(f, node) * 4;
	memset(r, 0, 64);
	put32(r, keep);
	set_bits(r, 0x00, 0, 8, 4); /* x4 */
	for (unsigned i = 0; i < 4; i++) {
		set_bits(r, 0x04 + 4 * i, 0, 8, (uint32_t)fs_module_of_port(f, node, (unsigned)port));
		set_bits(r, 0x04 + 4 * i, 16, 4, first + i);
		set_bits(r, 0x04 + 4 * i, 24, 4, first + i);
	}
	return REG_OK;
}

/* PLIB: the IB port of a local port (mstlink maps its port argument so) */
static int reg_plib(struct fabric *f, uint32_t node, uint8_t *r)
{
	int port = local_port_of(f, node, r);
	uint32_t keep = get32(r);

	if (port < 0)
		return REG_BAD_PARAM;
	memset(r, 0, 16);
	put32(r, keep);
	set_bits(r, 0x00, 0, 10, (uint32_t)port);
	return REG_OK;
}

static bool port_up(const struct fabric *f, uint32_t node, unsigned port)
{
	const struct fs_port *p = &f->ports[f->nodes[node].first_port + port];

	return p->up && p->peer != FS_NO_PORT;
}

/* PAOS: a port's administrative and operational state */
static int reg_paos(struct fabric *f, uint32_t node, uint8_t *r)
{
	int port = local_port_of(f, node, r);
	uint32_t keep = get32(r);
	bool up;

	if (port < 0)
		return REG_BAD_PARAM;
	up = port_up(f, node, (unsigned)port);
	memset(r, 0, 16);
	put32(r, keep);
	set_bits(r, 0x00, 0, 4, up ? 1 : 2);
	set_bits(r, 0x00, 8, 4, 1);
	set_bits(r, 0x04, 4, 4, up ? 5 : 2);  /* LinkUp, Polling */
	set_bits(r, 0x04, 16, 3, up ? 4 : 1); /* Active, Down */
	return REG_OK;
}

/* SLTP: only its version (the process: 7 nm) is modelled, which mstlink
 * reads to know the product's technology */
static int reg_sltp(struct fabric *f, uint32_t node, uint8_t *r)
{
	uint32_t keep = get32(r);

	if (local_port_of(f, node, r) < 0)
		return REG_BAD_PARAM;
	memset(r, 0, 76);
	put32(r, keep);
	set_bits(r, 0x00, 24, 4, 4);
	return REG_OK;
}

/* PTYS's speed bits: SDR 0x1, DDR 0x2, QDR 0x4, FDR10 0x8, FDR 0x10 ...
 * XDR 0x100 */
static uint32_t ptys_speed(unsigned speed)
{
	return speed < FS_FDR ? 1u << speed : 1u << (speed + 1);
}

/* PTYS (InfiniBand): what the port can and runs; lanes as mstlink counts
 * them */
static int reg_ptys(struct fabric *f, uint32_t node, uint8_t *r)
{
	int port = local_port_of(f, node, r);
	uint32_t keep = get32(r);
	const struct fs_port *p;
	uint32_t all = 0;

	if (port < 0)
		return REG_BAD_PARAM;
	p = &f->ports[f->nodes[node].first_port + port];
	for (unsigned s = 0; s <= p->speed; s++)
		all |= ptys_speed(s);
	memset(r, 0, 68);
	put32(r, keep);
	set_bits(r, 0x10, 0, 16, all);
	set_bits(r, 0x10, 16, 16, 0x7); /* 1x, 2x, 4x */
	set_bits(r, 0x1c, 0, 16, all);
	set_bits(r, 0x1c, 16, 16, 0x7);
	if (port_up(f, node, (unsigned)port)) {
		set_bits(r, 0x28, 0, 16, ptys_speed(p->speed));
		set_bits(r, 0x28, 16, 16, fs_lanes(p->width));
	}
	return REG_OK;
}

/* PDDR page 0, operational info: InfiniBand, the port's state and speed */
static void pddr_operational(struct fabric *f, uint32_t node, unsigned port, uint8_t *d)
{
	const struct fs_port *p = &f->ports[f->nodes[node].first_port + port];
	bool up = port_up(f, node, port);

	set_bits(d, 0x00, 20, 4, 1);               /* InfiniBand */
	set_bits(d, 0x04, 24, 8, up ? 3 : 2);      /* Active, Polling */
	set_bits(d, 0x14, 0, 16, up ? ptys_speed(p->speed) : 0);
	set_bits(d, 0x1c, 16, 16, fs_fec_mode(p) == 2 ? 2 : fs_fec_mode(p) == 1 ? 1 : 0);
}

/* PDDR page 3, the module behind a port: its lanes are the module's (a
 * twin-port cage's eight), which mstlink maps to the port's with PMLP.
 * module_info_ext 1: powers in uW, else whole dBm. */
static int reg_pddr(struct fabric *f, uint32_t node, struct fs_vitals *v, uint8_t *r)
{
	int port = local_port_of(f, node, r);
	unsigned page = get_bits(r, 0x04, 0, 8), uw = get_bits(r, 0x04, 29, 2) == 1;
	uint32_t keep0 = get32(r), keep1 = get32(r + 4);
	struct module_identity id;
	uint8_t *d = r + 0x08;
	unsigned m;

	if (port < 0 || (page != 0 && page != 1 && page != 3))
		return REG_BAD_PARAM;
	if (page != 3) {
		/* page 1 (troubleshooting) is all zeros: nothing to report */
		memset(r, 0, REG_IMAGE_MAX);
		put32(r, keep0);
		put32(r + 4, keep1);
		if (page == 0)
			pddr_operational(f, node, (unsigned)port, d);
		return REG_OK;
	}
	m = (unsigned)fs_module_of_port(f, node, (unsigned)port);
	memset(r, 0, REG_IMAGE_MAX);
	put32(r, keep0);
	put32(r + 4, keep1);
	if (v->modules[m].state == FS_MODULE_UNPLUGGED) {
		set_bits(d, 0x04, 28, 4, 4); /* cable unplugged */
		return REG_OK;
	}
	module_identity(f, node, m, &id);
	set_bits(d, 0x00, 24, 8, id.optical ? 0x00 : 0x0a); /* 850 nm VCSEL, copper */
	set_bits(d, 0x04, 0, 8, id.optical ? 6 : 1);         /* power class */
	set_bits(d, 0x04, 8, 8, id.cmis ? 8 : 0);            /* OSFP, QSFP28 */
	set_bits(d, 0x04, 16, 8, id.cmis ? (1u << 6 | id.length_m) : id.length_m);
	set_bits(d, 0x04, 24, 4, id.cmis ? 3 : 1);           /* NVIDIA, Mellanox */
	set_bits(d, 0x04, 28, 4, id.optical ? 2 : 3);        /* optical module, passive copper */
	put_text(d + 0x14, 16, id.vendor, ' ');
	put_text(d + 0x24, 16, id.pn, ' ');
	put_text(d + 0x34, 4, id.rev, ' ');
	put32(d + 0x38, id.fw);
	put_text(d + 0x3c, 16, id.sn, ' ');
	put_text(d + 0xb0, 8, id.date, ' ');
	set_bits(d, 0xb8, 0, 24, id.cmis ? 0x48b02d : 0x0002c9);
	set_bits(d, 0xb8, 24, 8, id.optical ? 0x0c : 0x23); /* MPO 1x12, no separable connector */
	set_bits(d, 0x94, 29, 3, v->modules[m].state == FS_MODULE_FAULT ? 5 : 3);
	set_bits(d, 0x98, 0, 8, id.cmis ? 0x40 : 0x10);       /* NDR, EDR */
	set_bits(d, 0x9c, 0, 6, 4); /* ib_width: 4x ports */
	if (!id.optical)
		return REG_OK; /* passive copper: no monitors */
	set_bits(d, 0x9c, 8, 8, 0x0f);                        /* temperature, voltage, Rx, Tx */
	set_bits(d, 0x94, 0, 16, 850);
	set_bits(d, 0x94, 28, 1, 1);                          /* average power */
	set_bits(d, 0x4c, 0, 16, (uint32_t)lround(module_volts(node) * 1e4));
	set_bits(d, 0x4c, 16, 16, celsius_256(module_celsius(f, node, m, &id)));
	for (unsigned lane = 0; lane < id.lanes && lane < FS_LANES_MAX; lane++) {
		unsigned dw = (lane / 2) * 4, lsb = lane % 2 ? 0 : 16;
		double rx = rx_dbm(f, node, m, lane), tx = tx_dbm(node, lane);

		set_bits(d, 0x50 + dw, lsb, 16, uw ? dbm_to_uw(rx) : dbm_whole(rx));
		set_bits(d, 0x60 + dw, lsb, 16, uw ? dbm_to_uw(tx) : dbm_whole(tx));
		set_bits(d, 0x70 + dw, lsb, 16, (uint32_t)lround(bias_ma(m, lane) * 500));
	}
	set_bits(d, 0x80, 0, 16, celsius_256(TEMP_LOW_ALARM));
	set_bits(d, 0x80, 16, 16, celsius_256(TEMP_HIGH_ALARM));
	set_bits(d, 0x84, 0, 16, (uint32_t)lround(VOLT_LOW * 1e4));
	set_bits(d, 0x84, 16, 16, (uint32_t)lround(VOLT_HIGH * 1e4));
	set_bits(d, 0x88, 0, 16, uw ? dbm_to_uw(RX_LOW_DBM) : dbm_whole(RX_LOW_DBM));
	set_bits(d, 0x88, 16, 16, uw ? dbm_to_uw(RX_HIGH_DBM) : dbm_whole(RX_HIGH_DBM));
	set_bits(d, 0x8c, 0, 16, uw ? dbm_to_uw(TX_LOW_DBM) : dbm_whole(TX_LOW_DBM));
	set_bits(d, 0x8c, 16, 16, uw ? dbm_to_uw(TX_HIGH_DBM) : dbm_whole(TX_HIGH_DBM));
	set_bits(d, 0x90, 0, 16, (uint32_t)lround(BIAS_LOW_MA * 500));
	set_bits(d, 0x90, 16, 16, (uint32_t)lround(BIAS_HIGH_MA * 500));
	return REG_OK;
}

/* ---- the module's EEPROM (MCIA): CMIS for OSFP, SFF-8636 for QSFP ---- */

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t uw_tenths(double dbm)
{
	double v = 10000.0 * pow(10.0, dbm / 10.0);

	return (uint16_t)(v > 65535 ? 65535 : v + 0.5);
}

static void put_thresholds(uint8_t *p, double ha, double la, uint16_t (*enc)(double))
{
	put16(p, enc(ha));
	put16(p + 2, enc(la));
	put16(p + 4, enc(ha - (ha - la) * 0.05)); /* warnings just inside the alarms */
	put16(p + 6, enc(la + (ha - la) * 0.05));
}

static uint16_t enc_c256(double c)
{
	return celsius_256(c);
}

static uint16_t enc_volts(double v)
{
	return (uint16_t)lround(v * 1e4);
}

static uint16_t enc_bias(double ma)
{
	return (uint16_t)lround(ma * 500);
}

/* 256 octets as the module shows them for a page: the lower page (0-127)
 * and upper page `page` (128-255); false if the module has no such page */
static bool eeprom_page(struct fabric *f, uint32_t node, unsigned m, unsigned page, uint8_t *e)
{
	struct fs_vitals *v = fs_vitals_of(f, node);
	struct module_identity id;
	unsigned lanes;
	double c;

	module_identity(f, node, m, &id);
	lanes = id.cmis ? id.lanes : 4;
	c = module_celsius(f, node, m, &id);
	memset(e, 0, 256);
	if (id.cmis) {
		e[0] = 0x19;                     /* OSFP 8X */
		e[1] = 0x50;                     /* CMIS 5.0 */
		e[2] = id.optical ? 0x00 : 0x80; /* passive copper: flat memory */
		e[3] = (v->modules[m].state == FS_MODULE_FAULT ? 5 : 3) << 1; /* ModuleState */
		put16(e + 14, celsius_256(c));
		put16(e + 16, id.optical ? enc_volts(module_volts(node)) : 0);
		e[39] = (uint8_t)(id.fw >> 24);
		e[40] = (uint8_t)(id.fw >> 16);
		e[85] = id.optical ? 1 : 3;      /* MMF, passive copper */
		if (page == 0) {
			e[128] = 0x19;
			put_text(e + 129, 16, id.vendor, ' ');
			e[145] = 0x48, e[146] = 0xb0, e[147] = 0x2d;
			put_text(e + 148, 16, id.pn, ' ');
			put_text(e + 164, 2, id.rev, ' ');
			put_text(e + 166, 16, id.sn, ' ');
			put_text(e + 182, 8, id.date, ' ');
			e[202] = (uint8_t)(id.length_m ? (1u << 6 | id.length_m) : 0);
			e[203] = id.optical ? 0x0c : 0x23;
			e[212] = id.optical ? 0x00 : 0x0a;
			return true;
		}
		if (!id.optical)
			return false; /* flat memory: page 00h only */
		if (page == 0x02) {
			put_thresholds(e + 128, TEMP_HIGH_ALARM, TEMP_LOW_ALARM, enc_c256);
			put_thresholds(e + 136, VOLT_HIGH, VOLT_LOW, enc_volts);
			put_thresholds(e + 176, TX_HIGH_DBM, TX_LOW_DBM, uw_tenths);
			put_thresholds(e + 184, BIAS_HIGH_MA, BIAS_LOW_MA, enc_bias);
			put_thresholds(e + 192, RX_HIGH_DBM, RX_LOW_DBM, uw_tenths);
			return true;
		}
		if (page == 0x11) {
			for (unsigned l = 0; l < lanes && l < FS_LANES_MAX; l++) {
				put16(e + 154 + 2 * l, uw_tenths(tx_dbm(node, l)));
				put16(e + 170 + 2 * l, enc_bias(bias_ma(m, l)));
				put16(e + 186 + 2 * l, uw_tenths(rx_dbm(f, node, m, l)));
			}
			return true;
		}
		return false;
	}
	/* SFF-8636 */
	e[0] = 0x11;                      /* QSFP28 */
	e[1] = 0x08;
	e[2] = id.optical ? 0x00 : 0x04;  /* flat memory */
	put16(e + 22, celsius_256(c));
	put16(e + 26, id.optical ? enc_volts(module_volts(node)) : 0);
	for (unsigned l = 0; id.optical && l < 4; l++) {
		put16(e + 34 + 2 * l, uw_tenths(rx_dbm(f, node, m, l)));
		put16(e + 42 + 2 * l, enc_bias(bias_ma(m, l)));
		put16(e + 50 + 2 * l, uw_tenths(tx_dbm(node, l)));
	}
	if (page == 0) {
		e[128] = 0x11;
		e[130] = id.optical ? 0x0c : 0x23;
		e[146] = (uint8_t)id.length_m;
		e[147] = id.optical ? 0x00 : 0xa0;
		put_text(e + 148, 16, id.vendor, ' ');
		e[165] = 0x00, e[166] = 0x02, e[167] = 0xc9;
		put_text(e + 168, 16, id.pn, ' ');
		put_text(e + 184, 2, id.rev, ' ');
		put_text(e + 196, 16, id.sn, ' ');
		put_text(e + 212, 8, id.date, ' ');
		return true;
	}
	if (page == 0x03 && id.optical) {
		put_thresholds(e + 128, TEMP_HIGH_ALARM, TEMP_LOW_ALARM, enc_c256);
		put_thresholds(e + 144, VOLT_HIGH, VOLT_LOW, enc_volts);
		put_thresholds(e + 176, RX_HIGH_DBM, RX_LOW_DBM, uw_tenths);
		put_thresholds(e + 184, BIAS_HIGH_MA, BIAS_LOW_MA, enc_bias);
		put_thresholds(e + 192, TX_HIGH_DBM, TX_LOW_DBM, uw_tenths);
		return true;
	}
	return false;
}

/* MCIA status (in the register): 0 ok, 3 module not connected, 5 a page
 * the module does not have */
static int reg_mcia(struct fabric *f, uint32_t node, struct fs_vitals *v, uint8_t *r)
{
	unsigned m = get_bits(r, 0x00, 16, 8), addr = get_bits(r, 0x04, 0, 16);
	unsigned page = get_bits(r, 0x04, 16, 8), size = get_bits(r, 0x08, 0, 16);
	uint32_t keep[3] = {get32(r), get32(r + 4), get32(r + 8)};
	uint8_t e[256];

	if (m >= v->n_modules || size > 128 || addr + size > 256)
		return REG_BAD_PARAM;
	memset(r, 0, 148);
	for (int i = 0; i < 3; i++)
		put32(r + 4 * i, keep[i]);
	if (v->modules[m].state == FS_MODULE_UNPLUGGED) {
		set_bits(r, 0x00, 0, 8, 3);
		return REG_OK;
	}
	if (!eeprom_page(f, node, m, addr + size > 128 ? page : 0, e)) {
		set_bits(r, 0x00, 0, 8, 5);
		return REG_OK;
	}
	memcpy(r + 0x10, e + addr, size);
	return REG_OK;
}

/* A register query on a node: the image in r (len octets: the request's
 * index fields in, the register out, as far as len goes); the register
 * status. */
static int register_query(struct fabric *f, uint32_t node, unsigned reg_id, uint8_t *r, size_t len)
{
	struct fs_vitals *v = fs_vitals_of(f, node);
	uint8_t img[REG_IMAGE_MAX];
	int reg = -1, status;

	for (int k = 0; k < REG_COUNT; k++)
		if (registers[k].id == reg_id)
			reg = k;
	if (!v)
		return REG_BAD_PARAM;
	if (reg < 0 || (f->nodes[node].vendor == FS_VENDOR_NOREG && (v->noreg & (1u << reg)))) {
		if (getenv("FABRICSIM_TRACE"))
			fprintf(stderr, "fabricsim: node %u register 0x%04x: not supported\n", node,
				reg_id);
		return REG_NOT_SUPPORTED;
	}
	memset(img, 0, sizeof(img));
	memcpy(img, r, len < sizeof(img) ? len : sizeof(img));
	switch (reg) {
	case REG_MGIR: status = reg_mgir(f, node, img); break;
	case REG_MSGI: status = reg_msgi(f, node, img); break;
	case REG_MTCAP: status = reg_mtcap(f, node, img); break;
	case REG_MTMP: status = reg_mtmp(f, node, v, img); break;
	case REG_MFCR: status = reg_mfcr(f, node, img); break;
	case REG_MFSM: status = reg_mfsm(f, node, v, img); break;
	case REG_FORE: status = reg_fore(f, node, v, img); break;
	case REG_MGPIR: status = reg_mgpir(f, node, v, img); break;
	case REG_PMAOS: status = reg_pmaos(v, img); break;
	case REG_PMLP: status = reg_pmlp(f, node, img); break;
	case REG_PDDR: status = reg_pddr(f, node, v, img); break;
	case REG_MCIA: status = reg_mcia(f, node, v, img); break;
	case REG_PLIB: status = reg_plib(f, node, img); break;
	case REG_PAOS: status = reg_paos(f, node, img); break;
	case REG_SLTP: status = reg_sltp(f, node, img); break;
	case REG_PTYS: status = reg_ptys(f, node, img); break;
	default: status = REG_NOT_SUPPORTED;
	}
	if (getenv("FABRICSIM_TRACE"))
		fprintf(stderr, "fabricsim: node %u register 0x%04x (%zu octets): status %d\n", node,
			reg_id, len, status);
	/* a shorter request gets the register's first octets (the simulator's
	 * choice: whether firmware takes a truncated register is not known) */
	if (status == REG_OK)
		memcpy(r, img, len < sizeof(img) ? len : sizeof(img));
	return status;
}

/* ---- the TLV routes: class 0x0A and SMP AccessRegister ---- */

/* tlv: Operation TLV (16), Reg TLV header (4), register (at most max) */
static void access_register_tlv(struct fabric *f, uint32_t node, uint8_t *tlv, size_t max)
{
	unsigned reg_id = get_bits(tlv, 4, 16, 16), method = get_bits(tlv, 4, 8, 7);
	size_t len = get_bits(tlv, 16, 16, 11) * 4u;
	int status;

	len = len >= 4 ? len - 4 : 0;
	if (get_bits(tlv, 0, 27, 5) != 1 || get_bits(tlv, 16, 27, 5) != 3 || len > max)
		status = REG_BAD_PARAM;
	else if (method != 1)
		status = REG_METHOD_NOT_SUPPORTED; /* the simulated registers are read only */
	else
		status = register_query(f, node, reg_id, tlv + 20, len);
	set_bits(tlv, 0, 8, 7, (uint32_t)status);
	set_bits(tlv, 4, 15, 1, 1); /* a response */
}

int fs_vendor_smp(struct fabric *f, uint32_t node, unsigned method, uint8_t *smp_data)
{
	struct fs_node *n = &f->nodes[node];

	if (n->vendor == FS_VENDOR_OTHER || n->vendor == FS_VENDOR_UNSUPPORTED)
		return STATUS_UNSUP_ATTR;
	if (n->vendor == FS_VENDOR_SILENT)
		return -1;
	if (method != IB_MAD_METHOD_SET && method != IB_MAD_METHOD_GET)
		return STATUS_UNSUP_ATTR;
	access_register_tlv(f, node, smp_data, SMP_REG_MAX);
	return 0;
}

/* GeneralInfo, at MAD octet 32 (after the VS_Key): vendstat's layout */
static void general_info(struct fabric *f, uint32_t node, uint8_t *mad)
{
	uint32_t fw[3];
	const char *psid;

	firmware(f, node, fw, &psid);
	memset(mad + VS_PAYLOAD, 0, 256 - VS_PAYLOAD);
	put16(mad + 32, 0xa1);
	put16(mad + 34, f->nodes[node].device_id);
	put32(mad + 60, uptime_s(f, node));
	put32(mad + 68, 0x5c3a9e21u);
	mad[72] = 0x08, mad[73] = 0x14, put16(mad + 74, 0x2023);
	put16(mad + 78, 0x1230);
	put_text(mad + 80, 16, psid, 0);
	put32(mad + 100, fw[0]);
	put32(mad + 104, fw[1]);
	put32(mad + 108, fw[2]);
	put32(mad + 160, 1u << 20); /* AccessRegister over GMP */
}

/* ---- configuration space: the hardware ID and the ICMD gateway ----
 *
 * mstflint's tools read the hardware ID (0xf0014), then, before any
 * register, ask the firmware's capabilities through the ICMD gateway in
 * configuration space (QUERY_CAP: may registers be accessed at all), over
 * ConfigSpaceAccess reads and writes. The gateway's addresses are the
 * device's (mstflint's mtcr_ul_icmd_cif.c, icmd_init_cr): a dword with the
 * interface version (bits 31-24, 1) and the mailbox's address (bits 23-0);
 * the mailbox, its control dword at mailbox + 0x3fc (busy bit 0, status
 * bits 15-8, opcode bits 31-16); a semaphore (0 read: taken); a "static
 * configuration not done" bit (0: ready). Nothing else is modelled: other
 * addresses read 0 and take no writes. */
struct cr_layout {
	uint32_t version_addr, mailbox, semaphore, cfg_not_done;
};

#define CR_HW_ID 0xf0014
#define ICMD_CTRL 0x3fc
#define ICMD_MAILBOX_DWORDS (0x340 / 4)
#define ICMD_QUERY_CAP 0x8400
#define ICMD_STATUS_BAD_OPCODE 2
/* QUERY_CAP's first dword: allow_icmd_access_reg_on_all_registers (29),
 * fw_info_psid (30) */
#define ICMD_CAP_ACCESS_REG (1u << 29 | 1u << 30)

static struct cr_layout cr_layout(const struct fabric *f, uint32_t node)
{
	if (is_switch(f, node)) /* Quantum-2 */
		return (struct cr_layout){0x100000, 0x101000, 0xa52f8, 0x100010};
	return (struct cr_layout){0x0, 0x1000, 0xe5660, 0xb5f04}; /* ConnectX-7 */
}

static uint32_t *icmd_mailbox(struct fs_vitals *v)
{
	if (!v->icmd_mailbox)
		v->icmd_mailbox = calloc(ICMD_MAILBOX_DWORDS, sizeof(uint32_t));
	return v->icmd_mailbox;
}

static uint32_t cr_read(struct fabric *f, uint32_t node, uint32_t addr)
{
	struct cr_layout l = cr_layout(f, node);
	struct fs_vitals *v = fs_vitals_of(f, node);
	uint32_t *mbox;

	if (addr == CR_HW_ID)
		return hw_dev_id(f, node);
	if (addr == l.version_addr)
		return 1u << 24 | l.mailbox;
	if (!v)
		return 0;
	if (addr == l.mailbox + ICMD_CTRL)
		return v->icmd_ctrl;
	if (addr >= l.mailbox && addr < l.mailbox + ICMD_MAILBOX_DWORDS * 4 && (mbox = icmd_mailbox(v)))
		return mbox[(addr - l.mailbox) / 4];
	return 0; /* the semaphore free, the configuration done, the rest */
}

/* the ICMD the control dword starts: QUERY_CAP only */
static void icmd_run(struct fs_vitals *v)
{
	unsigned opcode = v->icmd_ctrl >> 16;
	uint32_t *mbox = icmd_mailbox(v);

	if (opcode == ICMD_QUERY_CAP && mbox) {
		memset(mbox, 0, ICMD_MAILBOX_DWORDS * sizeof(uint32_t));
		mbox[0] = ICMD_CAP_ACCESS_REG;
		v->icmd_ctrl = (uint32_t)opcode << 16;
	} else {
		v->icmd_ctrl = (uint32_t)opcode << 16 | ICMD_STATUS_BAD_OPCODE << 8;
	}
}

static void cr_write(struct fabric *f, uint32_t node, uint32_t addr, uint32_t value)
{
	struct cr_layout l = cr_layout(f, node);
	struct fs_vitals *v = fs_vitals_of(f, node);
	uint32_t *mbox;

	if (!v)
		return;
	if (addr == l.mailbox + ICMD_CTRL) {
		v->icmd_ctrl = value;
		if (value & 1)
			icmd_run(v); /* at once: the busy bit is down at the next read */
	} else if (addr >= l.mailbox && addr < l.mailbox + ICMD_MAILBOX_DWORDS * 4 &&
		   (mbox = icmd_mailbox(v))) {
		mbox[(addr - l.mailbox) / 4] = value;
	}
}

/* ConfigSpaceAccess: mode 0 (consecutive dwords from an address: bits
 * 31-24 and 15-0 of the modifier), mode 2 (records of address, data, mask) */
static int config_space(struct fabric *f, uint32_t node, unsigned method, uint32_t mod,
			uint8_t *mad)
{
	unsigned mode = (mod >> 22) & 3, n = (mod >> 16) & 0x3f;

	if ((method != IB_MAD_METHOD_GET && method != IB_MAD_METHOD_SET) || n == 0 ||
	    n > (mode == 2 ? 18u : 56u))
		return STATUS_BAD_FIELD;
	for (unsigned i = 0; i < n; i++) {
		uint32_t addr = mode == 2 ? get32(mad + VS_PAYLOAD + 12 * i) :
			(mod & 0xffff) + ((mod >> 24) << 16) + 4 * i;
		uint8_t *data = mad + VS_PAYLOAD + (mode == 2 ? 12 * i + 4 : 4 * i);

		if (method == IB_MAD_METHOD_SET)
			cr_write(f, node, addr, get32(data));
		put32(data, cr_read(f, node, addr));
	}
	return 0;
}

int fs_vendor_gmp(struct fabric *f, uint32_t node, unsigned method, unsigned attr, uint32_t mod,
		  uint8_t *mad)
{
	struct fs_node *n = &f->nodes[node];

	if (n->vendor == FS_VENDOR_OTHER || n->vendor == FS_VENDOR_SILENT)
		return -1; /* as a device without NVIDIA's class: nothing comes back */
	if (n->vendor == FS_VENDOR_UNSUPPORTED)
		return STATUS_UNSUP_ATTR;
	switch (attr) {
	case ATTR_CLASS_PORT_INFO:
		if (method != IB_MAD_METHOD_GET)
			return STATUS_UNSUP_ATTR;
		memset(mad + VS_DATA, 0, 256 - VS_DATA);
		mad_set_field(mad + VS_DATA, 0, IB_CPI_BASEVER_F, 1);
		mad_set_field(mad + VS_DATA, 0, IB_CPI_CLASSVER_F, 1);
		mad_set_field(mad + VS_DATA, 0, IB_CPI_RESP_TIME_VALUE_F, 18);
		return 0;
	case ATTR_GENERAL_INFO:
		if (method != IB_MAD_METHOD_GET)
			return STATUS_UNSUP_ATTR;
		general_info(f, node, mad);
		return 0;
	case ATTR_CONFIG_SPACE:
		return config_space(f, node, method, mod, mad);
	case ATTR_ACCESS_REG:
		if (method != IB_MAD_METHOD_GET && method != IB_MAD_METHOD_SET)
			return STATUS_UNSUP_ATTR;
		access_register_tlv(f, node, mad + VS_PAYLOAD, CLASS_A_REG_MAX);
		return 0;
	case ATTR_ACCESS_REG_GMP: {
		/* the register in 220-octet blocks; the request's first block
		 * carries the index fields */
		uint8_t img[REG_IMAGE_MAX + GMP_BLOCK];
		unsigned block = get32(mad + VS_PAYLOAD) >> 16;
		int status;

		if (method != IB_MAD_METHOD_GET)
			return 12; /* method not supported: reads only */
		memset(img, 0, sizeof(img));
		memcpy(img, mad + VS_PAYLOAD + 4, GMP_BLOCK);
		if ((size_t)block * GMP_BLOCK >= REG_IMAGE_MAX)
			return 28;
		status = register_query(f, node, mod & 0xffff, img, REG_IMAGE_MAX);
		if (status)
			return status == REG_NOT_SUPPORTED ? 20 : status == REG_BAD_PARAM ? 28 : 12;
		memcpy(mad + VS_PAYLOAD + 4, img + (size_t)block * GMP_BLOCK, GMP_BLOCK);
		return 0;
	}
	default:
		return STATUS_UNSUP_ATTR;
	}
}
