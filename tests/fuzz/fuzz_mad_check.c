/* libFuzzer target: a received MAD checked against the request it claims to
 * answer (mad_check_response): any octets from the wire, with the request
 * taken from the MAD itself half of the time (so the matching path is
 * reached) and from the input's first octets otherwise. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "ibsnmpd/mad_engine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int classes[] = {IB_SMI_CLASS, IB_SMI_DIRECT_CLASS, IB_PERFORMANCE_CLASS,
				      IB_SA_CLASS};
	uint8_t *m = malloc(size ? size : 1);
	int mgmt_class = IB_SMI_CLASS, st;
	unsigned attr = 0, mod = 0;
	uint32_t tid = 0;

	memcpy(m, data, size);
	if (size >= 24 && (m[0] & 1)) { /* as if we had sent what this answers */
		mgmt_class = m[1];
		attr = (unsigned)m[16] << 8 | m[17];
		mod = (unsigned)m[20] << 24 | (unsigned)m[21] << 16 | (unsigned)m[22] << 8 | m[23];
		tid = (uint32_t)m[12] << 24 | (uint32_t)m[13] << 16 | (uint32_t)m[14] << 8 | m[15];
	} else if (size >= 4) {
		mgmt_class = classes[m[1] & 3];
		attr = m[2];
		tid = m[3];
	}
	st = mad_check_response(m, size, mgmt_class, attr, mod, tid);
	if (st != MAD_MALFORMED && st < 0)
		abort();
	(void)mad_class_data_size(mgmt_class);
	(void)mad_class_data_offset(mgmt_class);
	free(m);
	return 0;
}
