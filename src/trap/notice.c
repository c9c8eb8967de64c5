/* Notice and InformInfo layouts.
 *
 * The Notice header uses libibmad's IB_NOTICE_* fields; libibmad has fields
 * for the data details of traps 128 and 144 only, so the other traps'
 * details (IBA 14.2.5.1, tables 121-126) are read octet by octet here, and
 * InformInfo, for which libibmad has no fields at all, is written by hand. */
#include <string.h>

#include <infiniband/mad.h>

#include "ibsnmpd/notice.h"
#include "ibsnmpd/octets.h"

/* data details start at octet 10 of the Notice */
#define DD 10

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
		n->lid = (unsigned)octets_get_be(d + 2, 2);
		n->port = d[4];
		break;
	case 144:
		n->lid = mad_get_field(b, 0, IB_NOTICE_DATA_144_LID_F);
		n->cap_mask = mad_get_field(b, 0, IB_NOTICE_DATA_144_CAPMASK_F);
		break;
	case 145:
		n->lid = (unsigned)octets_get_be(d + 2, 2);
		n->sys_image_guid = octets_get_be(d + 6, 8);
		break;
	case 256:
		n->lid = (unsigned)octets_get_be(d + 2, 2);
		n->method = d[6];
		n->attr_id = (unsigned)octets_get_be(d + 8, 2);
		n->attr_mod = (uint32_t)octets_get_be(d + 10, 4);
		n->key = octets_get_be(d + 14, 8);
		break;
	case 257:
	case 258:
		n->lid1 = (unsigned)octets_get_be(d + 2, 2);
		n->lid2 = (unsigned)octets_get_be(d + 4, 2);
		n->key = (uint32_t)octets_get_be(d + 6, 4); /* 257: P_Key in the low 16 bits; 258: Q_Key */
		n->sl = d[10] >> 4;
		n->qp1 = (uint32_t)octets_get_be(d + 11, 3);
		n->qp2 = (uint32_t)octets_get_be(d + 15, 3);
		memcpy(n->gid1, d + 18, 16);
		memcpy(n->gid2, d + 34, 16);
		n->data_valid = 0xff; /* every field is given */
		break;
	case 259:
		n->data_valid = (unsigned)octets_get_be(d, 2);
		n->lid1 = (unsigned)octets_get_be(d + 2, 2);
		n->lid2 = (unsigned)octets_get_be(d + 4, 2);
		n->key = (unsigned)octets_get_be(d + 6, 2);
		n->sl = d[8] >> 4;
		n->qp1 = (uint32_t)octets_get_be(d + 9, 3);
		n->qp2 = (uint32_t)octets_get_be(d + 13, 3);
		memcpy(n->gid1, d + 16, 16);
		memcpy(n->gid2, d + 32, 16);
		n->switch_lid = (unsigned)octets_get_be(d + 48, 2);
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
	octets_put_be(ii->lid_begin, p + 16, 2);
	octets_put_be(ii->lid_end, p + 18, 2);
	/* 20..21 reserved */
	p[22] = ii->is_generic ? 1 : 0;
	p[23] = ii->subscribe ? 1 : 0;
	octets_put_be(ii->type, p + 24, 2);
	octets_put_be(ii->trap_number, p + 26, 2);
	/* QPN (24 bits), reserved (3), RespTimeValue (5) */
	octets_put_be(ii->qpn, p + 28, 3);
	p[31] = (uint8_t)(ii->resp_time_value & 0x1f);
	/* 32 reserved, 33..35 ProducerType / VendorID */
	octets_put_be(ii->producer_type, p + 33, 3);
}
