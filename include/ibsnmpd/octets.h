/* Big-endian fields of n octets (n <= 8) where libibmad has no field
 * descriptor: fixed-size OCTET STRINGs (GUIDs, VendorID, DeviceID ...) and
 * the Notice details IBA lays out octet by octet. Pure. */
#ifndef IBSNMPD_OCTETS_H
#define IBSNMPD_OCTETS_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t octets_get_be(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

/* The n low octets of v, most significant first. */
static inline void octets_put_be(uint64_t v, uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[n - 1 - i] = (uint8_t)(v >> (8 * i));
}

#endif
