/* libFuzzer target: the SA's forwarding tables as the helper prints them
 * (ibsnmpd-discover --lft, route_lft_line), line by line as route_sa.c
 * takes them, into the tables of a small subnet (a switch and three
 * adapters). Nothing may be written outside the tables; a line put is
 * counted to its switch. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/route.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char subnet[] =
	"port 0000000000200000 1 1 0000000000200000 0000000000100000 1 1\n"
	"port 0000000000200000 2 1 0000000000200000 0000000000100002 1 1\n"
	"node 0000000000200000 2 8 1 sw1\n"
	"port 0000000000100000 1 2 0000000000100001 0000000000200000 1 1\n"
	"node 0000000000100000 1 1 2 hca1\n"
	"port 0000000000100002 1 3 0000000000100003 0000000000200000 2 1\n"
	"node 0000000000100002 1 1 3 hca2\n"
	"done 0.01\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct topology *f;
	struct route_tables t;
	uint32_t sw_of_lid[4] = {0}, got[2] = {0};
	const char *at = (const char *)data, *end = at + size;
	uint32_t lines = 0;
	char err[160];

	if (!f && (f = topology_parse(subnet, strlen(subnet), NULL, err, sizeof(err))))
		topology_get(f); /* kept for every input */
	if (!f || route_tables_init(&t, f, route_max_lid(f)))
		return 0;
	sw_of_lid[1] = 1; /* sw1 */
	while (at < end) {
		const char *nl = memchr(at, '\n', (size_t)(end - at));
		size_t len = (size_t)((nl ? nl + 1 : end) - at);
		int rc = route_lft_line(&t, sw_of_lid, 4, got, at, len);

		if (rc < -1 || rc > 1)
			abort();
		lines++;
		at += len;
	}
	if (got[0] > lines || got[1])
		abort();
	route_tables_free(&t);
	return 0;
}
