/* libFuzzer target: one SMP attribute decoder, chosen at build time
 * (FUZZ_SMA_ATTR, e.g. "portinfo"), over any octets an SMA could send as
 * the attribute data of a SubnGetResp. Sanitizers catch any read past the
 * input; the checks below catch what a decoder must never produce. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/sma_attr.h"

#ifndef FUZZ_SMA_ATTR
#error "FUZZ_SMA_ATTR names the decoder"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The decoder gets exactly the input (no copy into a 64-octet buffer), so a
 * read past a short answer is seen. */
static void run(const char *attr, const uint8_t *d, size_t n)
{
	if (!strcmp(attr, "nodeinfo")) {
		struct sma_nodeinfo ni;

		if (!sma_nodeinfo_decode(d, n, &ni) && sma_node_type_to_mib(ni.node_type) > 4)
			abort();
	} else if (!strcmp(attr, "nodedesc")) {
		char desc[65];

		if (!sma_nodedesc_decode(d, n, desc, sizeof(desc)) && strlen(desc) > 64)
			abort();
	} else if (!strcmp(attr, "switchinfo")) {
		struct sma_switchinfo si;

		sma_switchinfo_decode(d, n, &si);
	} else if (!strcmp(attr, "portinfo")) {
		struct sma_portinfo pi;

		if (!sma_portinfo_decode(d, n, &pi)) { /* and what the handlers make of it */
			int gen = sma_speed_generation(pi.speed_active, pi.speed_ext_active);

			(void)sma_mib_speed(pi.speed_supported, pi.speed_ext_supported);
			(void)sma_mib_width_active(pi.width_active);
			(void)sma_mib_mtu(pi.neighbor_mtu);
			(void)sma_mtu_octets(pi.mtu_cap);
			(void)sma_vl_count(pi.oper_vls);
			(void)(sma_lane_data_mbps(gen) * sma_width_lanes(pi.width_active));
		}
	} else if (!strcmp(attr, "sminfo")) {
		struct sma_sminfo sm;

		if (!sma_sminfo_decode(d, n, &sm))
			(void)sma_mib_sm_state(sm.state);
	} else if (!strcmp(attr, "guidinfo")) {
		uint64_t g[8];

		sma_guidinfo_decode(d, n, g);
	} else if (!strcmp(attr, "pkey")) {
		uint16_t p[32];

		sma_pkey_block_decode(d, n, p);
	} else if (!strcmp(attr, "sl2vl")) {
		uint8_t vl[16];

		if (!sma_sl2vl_decode(d, n, vl))
			for (int i = 0; i < 16; i++)
				if (vl[i] > 15)
					abort();
	} else if (!strcmp(attr, "vlarb")) {
		uint8_t vl[32], w[32];

		if (!sma_vlarb_block_decode(d, n, vl, w))
			for (int i = 0; i < 32; i++)
				if (vl[i] > 15)
					abort();
	} else if (!strcmp(attr, "lft")) {
		uint8_t port[64];

		sma_lft_block_decode(d, n, port);
	} else if (!strcmp(attr, "mft")) {
		uint16_t mask[32];

		sma_mft_block_decode(d, n, mask);
	} else if (!strcmp(attr, "rft")) {
		struct sma_rft_entry e[16];

		if (!sma_rft_block_decode(d, n, e))
			for (int i = 0; i < 16; i++)
				if (e[i].valid > 1 || e[i].lmc > 7)
					abort();
	} else if (!strcmp(attr, "vendordiag")) {
		struct sma_vendordiag v;

		sma_vendordiag_decode(d, n, &v);
	} else if (!strcmp(attr, "ledinfo")) {
		unsigned on;

		if (!sma_ledinfo_decode(d, n, &on) && on > 1)
			abort();
	} else {
		abort(); /* a target built for a decoder that does not exist */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy of exactly size octets: ASan sees any read past it */
	uint8_t *d = malloc(size ? size : 1);

	memcpy(d, data, size);
	run(FUZZ_SMA_ATTR, d, size);
	free(d);
	return 0;
}
