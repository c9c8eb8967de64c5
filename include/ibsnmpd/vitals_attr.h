/* NVIDIA's vendor MADs and the registers behind them, as octets (pure: no
 * net-snmp, no I/O): the requests' encoders, the answers' decoders, and a
 * transceiver's EEPROM. The unit tests and the fuzz targets link these
 * alone.
 *
 * Facts (../shared/notes/vendor-mads.md, with their sources: infiniband-
 * diags' vendstat.c, mstflint's mtcr_ul/mtcr_ib_ofed.c and its register
 * database register_access_table.adb, SFF-8636 and CMIS 5.0):
 *   class 0x0A, LID-routed GMPs; the data after the MAD header (octet 24)
 *   begins with the 8-octet VS_Key (0: none configured)
 *   GeneralInfo (0x0017, Get): hardware, firmware, PSID; capability bit 20
 *     of the dword at MAD octet 160: registers over GMP
 *   AccessRegisterGMP (0x0051, Get, modifier: the register's ID): a
 *     config dword (block << 16), then 220 octets of the register; the
 *     register status in the MAD status (20 not supported, 28 bad field)
 *   AccessRegister (0xFF52, TLVs): Operation TLV (16 octets), Reg TLV
 *     header (4), the register (at most 204 octets in class 0x0A); the
 *     register status in the Operation TLV
 * A register is big-endian dwords; its fields (dword offset, lowest bit,
 * width) as the .adb gives them. libibmad has no field descriptors for
 * any of this: hence these decoders. */
#ifndef IBSNMPD_VITALS_ATTR_H
#define IBSNMPD_VITALS_ATTR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VITALS_ATTR_GENERAL_INFO 0x0017
#define VITALS_ATTR_ACCESS_REG_GMP 0x0051
#define VITALS_ATTR_ACCESS_REG 0xff52

/* The registers read, and their sizes in octets */
#define VITALS_REG_MGIR 0x9020  /* 160: hardware, firmware, uptime */
#define VITALS_REG_MSGI 0x9021  /* 128: the system's serial, part number */
#define VITALS_REG_MTCAP 0x9009 /* 16: the temperature sensors */
#define VITALS_REG_MTMP 0x900a  /* 32: a sensor's temperature and thresholds */
#define VITALS_REG_MFCR 0x9001  /* 8: the tachometers */
#define VITALS_REG_MFSM 0x9003  /* 8: a tachometer's speed */
#define VITALS_REG_FORE 0x9007  /* 12: tachometers under or over their limits */
#define VITALS_REG_MGPIR 0x9100 /* 160: the number of modules */
#define VITALS_REG_PMAOS 0x5012 /* 16: a module's state */
#define VITALS_REG_PMLP 0x5002  /* 64: a port's module and lanes */
#define VITALS_REG_PDDR 0x5031  /* 256: page 3, the module behind a port */
#define VITALS_REG_MCIA 0x9014  /* 148: a module's EEPROM */

#define VITALS_REG_MAX 256       /* the largest register read: PDDR */
#define VITALS_GMP_BLOCK 220     /* register octets an AccessRegisterGMP carries */
#define VITALS_TLV_REG_MAX 204   /* ... and an AccessRegister of class 0x0A */
#define VITALS_PDDR_READ 204     /* PDDR's octets read: module info ends at 0xcc */

/* The register status of a failed access (the Operation TLV's numbers;
 * the GMP's MAD status is mapped onto them) */
#define VITALS_REG_STATUS_OK 0
#define VITALS_REG_STATUS_NOT_SUPPORTED 4
#define VITALS_REG_STATUS_BAD_PARAM 7

/* ---- GeneralInfo ---- */

struct vitals_general_info {
	unsigned hw_revision, device_id;
	uint32_t uptime_s;
	uint32_t fw[3];     /* extended major, minor, sub-minor */
	char psid[17];
	bool registers_by_gmp; /* capability bit 20 */
};
/* data: the answer's attribute data (from MAD octet 24, VS_Key first) */
int vitals_general_info_decode(const uint8_t *data, size_t len, struct vitals_general_info *out);

/* ---- the two register routes: the request's attribute data (len octets
 * from MAD octet 24, VS_Key 0) for a register image (reg_len octets: its
 * index fields set), and the register in an answer ---- */
size_t vitals_gmp_request(uint8_t *data, size_t len, const uint8_t *reg, size_t reg_len);
/* the register octets of a GMP answer (block 0): *reg points into data */
int vitals_gmp_answer(const uint8_t *data, size_t len, const uint8_t **reg, size_t *reg_len);
/* The register status a GMP's MAD status says (status > 0), -1 if none:
 * 20 not supported, 28 bad field, 12 method */
int vitals_gmp_status(int mad_status);
size_t vitals_tlv_request(uint8_t *data, size_t len, unsigned reg_id, const uint8_t *reg,
			  size_t reg_len);
/* 0 and the register (its status in *status: 0 ok), or -1 if the TLVs are
 * not an answer to a query of reg_id */
int vitals_tlv_answer(const uint8_t *data, size_t len, unsigned reg_id, const uint8_t **reg,
		      size_t *reg_len, unsigned *status);

/* ---- requests: a register image with its index fields, zeros around ---- */
void vitals_mtmp_request(uint8_t reg[32], unsigned sensor);
void vitals_mfsm_request(uint8_t reg[8], unsigned tacho);
void vitals_pmaos_request(uint8_t reg[16], unsigned module);
void vitals_pmlp_request(uint8_t reg[64], unsigned port);
/* page 3 of the IB port (pnat 1), powers in microwatts */
void vitals_pddr_request(uint8_t reg[VITALS_REG_MAX], unsigned port);
/* size octets of the module's EEPROM at offset (0-255: 128 and up are the
 * upper page `page`) */
void vitals_mcia_request(uint8_t reg[148], unsigned module, unsigned page, unsigned offset,
			 unsigned size);

/* ---- registers ---- */

struct vitals_mgir {
	unsigned device_id, hw_revision, hw_dev_id, num_ports;
	uint32_t uptime_s;
	uint32_t fw[3];
	char psid[17];
	uint32_t sw[3];     /* the switch OS's, on a managed switch; 0 otherwise */
};
int vitals_mgir_decode(const uint8_t *reg, size_t len, struct vitals_mgir *out);

struct vitals_msgi {
	char serial[25], part[21], revision[5], product[65];
};
int vitals_msgi_decode(const uint8_t *reg, size_t len, struct vitals_msgi *out);

struct vitals_mtcap {
	unsigned sensor_count;
	uint64_t sensor_map;  /* bit N: sensor N exists */
};
int vitals_mtcap_decode(const uint8_t *reg, size_t len, struct vitals_mtcap *out);

/* temperatures in 1/8 degree Celsius, as MTMP counts */
struct vitals_mtmp {
	unsigned sensor;
	int16_t temp, max, threshold_hi, threshold_lo;
	bool max_valid;
	char name[9];
};
int vitals_mtmp_decode(const uint8_t *reg, size_t len, struct vitals_mtmp *out);

#define VITALS_TACHOS_MAX 16
int vitals_mfcr_decode(const uint8_t *reg, size_t len, uint16_t *tachos_active);
int vitals_mfsm_decode(const uint8_t *reg, size_t len, unsigned *rpm);
int vitals_fore_decode(const uint8_t *reg, size_t len, uint16_t *under, uint16_t *over);
int vitals_mgpir_decode(const uint8_t *reg, size_t len, unsigned *modules);

/* PMAOS oper_status */
enum vitals_module_oper {
	VITALS_MODULE_INITIALIZING = 0,
	VITALS_MODULE_PLUGGED = 1,
	VITALS_MODULE_UNPLUGGED = 2,
	VITALS_MODULE_ERROR = 3,
	VITALS_MODULE_DISABLED = 4,
	VITALS_MODULE_UNKNOWN = 5,
};
struct vitals_pmaos {
	unsigned module, oper_status, error_type;
};
int vitals_pmaos_decode(const uint8_t *reg, size_t len, struct vitals_pmaos *out);

struct vitals_pmlp {
	unsigned port, width, module, first_lane; /* lane 0's module, its Tx lane */
};
int vitals_pmlp_decode(const uint8_t *reg, size_t len, struct vitals_pmlp *out);

#define VITALS_LANES_MAX 8

/* A module as PDDR page 3 (or the EEPROM) describes it. Powers in
 * microwatts, bias in 2 uA, voltage in 100 uV, temperatures in 1/256
 * degree Celsius; "have" says which monitors the module has. */
struct vitals_module_info {
	unsigned cable_type;   /* PDDR: 0 unidentified, 1 active cable, 2 optical module,
				  3 passive copper, 4 unplugged, ... */
	unsigned identifier;   /* PDDR cable_identifier: 0 QSFP28, 1 QSFP+, 8 OSFP, ... */
	unsigned length_dm;    /* the cable assembly's length, decimetres; 0 separable */
	unsigned module_state; /* CMIS: 3 ready, 5 fault; 0 unknown */
	char vendor[17], part[17], revision[5], serial[17], date[9];
	uint32_t fw_version;   /* major << 24 | minor << 16 | build */
	bool have_temp, have_voltage, have_power;
	int16_t temp;
	uint16_t voltage;
	unsigned lanes;        /* lanes with readings: the module's (PMLP says a port's) */
	uint16_t rx_uw[VITALS_LANES_MAX], tx_uw[VITALS_LANES_MAX], bias[VITALS_LANES_MAX];
	bool have_thresholds;
	int16_t temp_hi, temp_lo;
	uint16_t volt_hi, volt_lo, rx_hi_uw, rx_lo_uw, tx_hi_uw, tx_lo_uw, bias_hi, bias_lo;
};
int vitals_pddr_module_decode(const uint8_t *reg, size_t len, struct vitals_module_info *out);

/* MCIA: its status (0 ok, 3 not connected ...) and the EEPROM octets */
int vitals_mcia_decode(const uint8_t *reg, size_t len, unsigned *status, const uint8_t **data,
		       size_t *n);

/* A module's EEPROM: lower page (octets 0-127) with upper page 00h
 * (128-255): the identity and the monitors (SFF-8636 or CMIS, by the
 * identifier at octet 0); -1 if neither. */
int vitals_eeprom_decode(const uint8_t *page0, struct vitals_module_info *out);
/* Whether the EEPROM is CMIS (QSFP-DD, OSFP, ...), by its identifier */
bool vitals_eeprom_is_cmis(uint8_t identifier);
/* CMIS page 11h (upper half, octets 128-255): the lane monitors */
void vitals_eeprom_cmis_lanes(const uint8_t *page11, unsigned lanes,
			      struct vitals_module_info *out);
/* The alarm thresholds: CMIS page 02h, SFF-8636 page 03h (upper halves) */
void vitals_eeprom_thresholds(const uint8_t *page, bool cmis, struct vitals_module_info *out);

/* A module's firmware version as text, major.minor.build ("" for none) */
#define VITALS_FW_TEXT 16
void vitals_module_fw_text(uint32_t fw_version, char out[VITALS_FW_TEXT]);

/* ---- units ---- */

/* microwatts as hundredths of a dBm (-4000 for no light) */
int vitals_uw_to_centi_dbm(unsigned uw);
/* tenths of a degree from MTMP's eighths and from 1/256 */
int vitals_tenths_from_eighths(int16_t v);
int vitals_tenths_from_256ths(int16_t v);

#endif
