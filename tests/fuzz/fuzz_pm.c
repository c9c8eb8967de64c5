/* libFuzzer target: one PerfMgt attribute decoder, chosen at build time
 * (FUZZ_PM_ATTR), over any octets a PMA could answer; for PortCounters and
 * PortCountersExtended also the 64-bit bookkeeping of successive readings
 * (pm_port_update), for PortExtendedSpeedsCounters (either layout) the
 * totals of successive readings (pm_port_fec_update), and for
 * PortSamplesControl the Set built back from a decoded Get. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "ibsnmpd/pm_attr.h"

#ifndef FUZZ_PM_ATTR
#error "FUZZ_PM_ATTR names the decoder"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Successive readings of one port from consecutive 64-octet slices: the
 * totals never go down unless a discontinuity was recorded. */
static void fold(const uint8_t *d, size_t n, bool ext)
{
	struct pm_port_state st = {0};
	time_t now = 1000;

	for (size_t off = 0; off + 64 <= n; off += 64, now++) {
		struct pm_counters pc;
		struct pm_counters_ext e;
		uint64_t before = st.xmit_data;
		time_t disc = st.discontinuity;

		if (pm_counters_decode(d + off, n - off, &pc))
			abort();
		if (ext && pm_counters_ext_decode(d + off, n - off, &e))
			abort();
		pm_port_update(&st, &pc, ext ? &e : NULL, now);
		if (st.xmit_data < before && st.discontinuity == disc)
			abort(); /* went down without a discontinuity */
		if (!st.have_raw || st.stale || st.last_read != now)
			abort();
	}
}

/* Successive PortExtendedSpeedsCounters readings from 192-octet slices:
 * the totals the bit error rates come from never go down. */
static void fold_fec(const uint8_t *d, size_t n, enum pm_fec_layout layout)
{
	struct pm_port_state st = {.fec_layout = (uint8_t)layout};

	for (size_t off = 0; off + 64 <= n; off += 192) {
		struct pm_ext_speeds e;
		uint64_t raw = st.fec_raw_total, lost = st.fec_uncorrectable_total;

		if (pm_ext_speeds_decode(d + off, n - off, layout, &e))
			abort();
		if (layout == PM_FEC_RS && e.error_detection)
			abort(); /* the RS-FEC layout has no per-lane error detection */
		pm_port_fec_update(&st, &e);
		if (st.fec_raw_total < raw || st.fec_uncorrectable_total < lost || !st.have_fec)
			abort();
	}
}

static void run(const char *attr, const uint8_t *d, size_t n)
{
	if (!strcmp(attr, "counters")) {
		struct pm_counters pc;

		pm_counters_decode(d, n, &pc);
		fold(d, n, false);
	} else if (!strcmp(attr, "counters_ext")) {
		struct pm_counters_ext e;

		pm_counters_ext_decode(d, n, &e);
		fold(d, n, true);
	} else if (!strcmp(attr, "classportinfo")) {
		unsigned cap;

		pm_classportinfo_capmask(d, n, &cap);
	} else if (!strcmp(attr, "sample_ctl")) {
		struct pm_sample_ctl c, again;
		uint8_t set[IB_PC_DATA_SZ];

		if (pm_sample_ctl_decode(d, n, &c))
			return;
		if (pm_sample_width_bits(c.counter_width) > 32)
			abort();
		/* the fields a Set writes come back as they were */
		pm_sample_ctl_encode(&c, set, sizeof(set));
		if (pm_sample_ctl_decode(set, sizeof(set), &again) || again.opcode != c.opcode ||
		    again.port_select != c.port_select || again.tag != c.tag ||
		    again.sample_start != c.sample_start ||
		    again.sample_interval != c.sample_interval ||
		    memcmp(again.counter_select, c.counter_select, sizeof(c.counter_select)))
			abort();
	} else if (!strcmp(attr, "rcv_error_details")) {
		struct pm_error_details e;

		pm_rcv_error_details_decode(d, n, &e);
	} else if (!strcmp(attr, "xmit_discard_details")) {
		struct pm_error_details e;

		pm_xmit_discard_details_decode(d, n, &e);
	} else if (!strcmp(attr, "ext_speeds_rsfec")) {
		fold_fec(d, n, PM_FEC_RS);
	} else if (!strcmp(attr, "ext_speeds_per_lane")) {
		fold_fec(d, n, PM_FEC_PER_LANE);
	} else if (!strcmp(attr, "sample_result")) {
		struct pm_sample_result r;

		pm_sample_result_decode(d, n, &r);
	} else {
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *d = malloc(size ? size : 1);

	memcpy(d, data, size);
	run(FUZZ_PM_ATTR, d, size);
	free(d);
	return 0;
}
