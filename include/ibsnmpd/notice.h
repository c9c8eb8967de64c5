/* InfiniBand traps: the Notice attribute (IBA 13.4.8.2, 14.2.5.1) decoded
 * into the values SMA-MIB's notifications carry, and the InformInfo
 * attribute (IBA 15.2.5.12) a subscriber sends to the SA. Pure functions,
 * unit-tested and fuzzed. */
#ifndef IBSNMPD_NOTICE_H
#define IBSNMPD_NOTICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NOTICE_SIZE 80        /* Notice attribute, IssuerGID included */
#define INFORMINFO_SIZE 36

/* Data-valid bits of trap 259 (and what 257/258 always carry). */
#define NOTICE_VALID_LID1 (1u << 0)
#define NOTICE_VALID_LID2 (1u << 1)
#define NOTICE_VALID_PKEY (1u << 2)
#define NOTICE_VALID_SL (1u << 3)
#define NOTICE_VALID_QP1 (1u << 4)
#define NOTICE_VALID_QP2 (1u << 5)
#define NOTICE_VALID_GID1 (1u << 6)
#define NOTICE_VALID_GID2 (1u << 7)

struct notice {
	bool is_generic;
	unsigned type, producer_type, trap_number, issuer_lid;
	bool toggle;
	unsigned count;
	uint8_t issuer_gid[16];
	/* data details, as far as the trap number defines them */
	unsigned lid;             /* 128: switch; 129-131, 144, 145, 256: port's LID */
	unsigned port;            /* 129-131: port; 259: switch external port */
	uint32_t cap_mask;        /* 144 */
	uint64_t sys_image_guid;  /* 145 */
	unsigned method, attr_id; /* 256 */
	uint32_t attr_mod;        /* 256 */
	uint64_t key;             /* 256 M_Key; 257/259 P_Key; 258 Q_Key */
	unsigned lid1, lid2, sl;  /* 257-259 */
	uint32_t qp1, qp2;        /* 257-259 */
	uint8_t gid1[16], gid2[16];
	unsigned switch_lid;      /* 259 */
	unsigned data_valid;      /* 259 (16 bits) */
};

/* 0, or -1 if the buffer cannot hold a Notice. */
int notice_decode(const uint8_t *data, size_t len, struct notice *out);
/* The trap's source for rate limiting: the LID the details name, else the
 * issuer's. */
unsigned notice_source_lid(const struct notice *n);

struct informinfo {
	unsigned lid_begin, lid_end; /* 0xffff begin: every LID */
	bool is_generic, subscribe;
	unsigned type;               /* 0xffff: every type */
	unsigned trap_number;        /* 0xffff: every trap */
	uint32_t qpn;                /* reports go to this QP (the SA uses the sender's) */
	unsigned resp_time_value;
	uint32_t producer_type;      /* 0xffffff: every producer */
};

/* Writes the 36 octets of InformInfo into data (at least INFORMINFO_SIZE). */
void informinfo_encode(const struct informinfo *ii, uint8_t *data, size_t len);

#endif
