/* Notice and InformInfo layouts.
 *
 * The Notice header uses libibmad's IB_NOTICE_* fields; libibmad has fields
 * for the data details of traps 128 and 144 only, so the other traps'
 * details (IBA 14.2.5.1, tables 121-126) are read octet by octet here, and
 * InformInfo, for which libibmad has no fields at all, is written by hand. */
#include <string.h>

#include <infiniband/mad.h>

#include "ibsnmpd/notice.h"

/* data details start at octet 10 of the Notice */
#define DD 10

static unsigned be16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

static uint32_t be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const uint8_t *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

int notice_decode(const uint8_t *data, size_t len, struct notice *n)
{
	uint8_t b[NOTICE_SIZE];
	const uint8_t *d = b + DD;

	if (!data || len < NOTICE_SIZE)
		return -1;
	memcpy(b, data, NOTICE_SIZE);
	memset(n, 0, sizeof(*n));
	n->is_generic = mad_get_field(b, 0, IB_NOTICE_IS_GENERIC_F);
	n->type = mad_get_field(b, 0, IB_NOTICE_TYPE_F);
	n->producer_type = mad_get_field(b, 0, IB_NOTICE_PRODUCER_F);
	n->trap_number = mad_get_field(b, 0, IB_NOTICE_TRAP_NUMBER_F);
	n->issuer_lid = mad_get_field(b, 0, IB_NOTICE_ISSUER_LID_F);
	n->toggle = mad_get_field(b, 0, IB_NOTICE_TOGGLE_F);
	n->count = mad_get_field(b, 0, IB_NOTICE_COUNT_F);
	memcpy(n->issuer_gid, b + 64, 16);
	if (!n->is_generic)
		return 0; /* vendor traps: no details we know */
	switch (n->trap_number) {
	case 128:
		n->lid = mad_get_field(b, 0, IB_NOTICE_DATA_LID_F);
		break;
	case 129:
	case 130:
	case 131:
		n->lid = be16(d + 2);
		n->port = d[4];
		break;
	case 144:
		n->lid = mad_get_field(b, 0, IB_NOTICE_DATA_144_LID_F);
		n->cap_mask = mad_get_field(b, 0, IB_NOTICE_DATA_144_CAPMASK_F);
		break;
	case 145:
		n->lid = be16(d + 2);
		n->sys_image_guid = be64(d + 6);
		break;
	case 256:
		n->lid = be16(d + 2);
		n->method = d[6];
		n->attr_id = be16(d + 8);
		n->attr_mod = be32(d + 10);
		n->key = be64(d + 14);
		break;
	case 257:
	case 258:
		n->lid1 = be16(d + 2);
		n->lid2 = be16(d + 4);
		n->key = be32(d + 6); /* 257: P_Key in the low 16 bits; 258: Q_Key */
		n->sl = d[10] >> 4;
		n->qp1 = be24(d + 11);
		n->qp2 = be24(d + 15);
		memcpy(n->gid1, d + 18, 16);
		memcpy(n->gid2, d + 34, 16);
		n->data_valid = 0xff; /* every field is given */
		break;
	case 259:
		n->data_valid = be16(d);
		n->lid1 = be16(d + 2);
		n->lid2 = be16(d + 4);
		n->key = be16(d + 6);
		n->sl = d[8] >> 4;
		n->qp1 = be24(d + 9);
		n->qp2 = be24(d + 13);
		memcpy(n->gid1, d + 16, 16);
		memcpy(n->gid2, d + 32, 16);
		n->switch_lid = be16(d + 48);
		n->port = d[50];
		break;
	default:
		break;
	}
	return 0;
}

unsigned notice_source_lid(const struct notice *n)
{
	if (n->lid)
		return n->lid;
	if (n->lid1)
		return n->lid1;
	return n->issuer_lid;
}

void informinfo_encode(const struct informinfo *ii, uint8_t *p, size_t len)
{
	if (len < INFORMINFO_SIZE)
		return;
	memset(p, 0, INFORMINFO_SIZE);
	/* 0..15 GID: zero (LID range used instead) */
	put16(p + 16, ii->lid_begin);
	put16(p + 18, ii->lid_end);
	/* 20..21 reserved */
	p[22] = ii->is_generic ? 1 : 0;
	p[23] = ii->subscribe ? 1 : 0;
	put16(p + 24, ii->type);
	put16(p + 26, ii->trap_number);
	/* QPN (24 bits), reserved (3), RespTimeValue (5) */
	p[28] = (uint8_t)(ii->qpn >> 16);
	p[29] = (uint8_t)(ii->qpn >> 8);
	p[30] = (uint8_t)ii->qpn;
	p[31] = (uint8_t)(ii->resp_time_value & 0x1f);
	/* 32 reserved, 33..35 ProducerType / VendorID */
	p[33] = (uint8_t)(ii->producer_type >> 16);
	p[34] = (uint8_t)(ii->producer_type >> 8);
	p[35] = (uint8_t)ii->producer_type;
}
