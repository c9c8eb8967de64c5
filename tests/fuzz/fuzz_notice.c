/* libFuzzer target: the Notice of an SA Report (notice_decode), as any node
 * can make the SA forward one, and what the notification path reads of it. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/notice.h"
#include "ibsnmpd/sma_attr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *d = malloc(size ? size : 1);
	struct notice n;

	memcpy(d, data, size);
	if (!notice_decode(d, size, &n)) {
		if (n.port > 255 || n.sl > 15 || n.lid > 0xffff || n.data_valid > 0xffff)
			abort();
		(void)notice_source_lid(&n);
		(void)sma_notification_of_trap(n.trap_number);
	}
	free(d);
	return 0;
}
