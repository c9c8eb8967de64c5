/* libFuzzer target: the query of a /metrics scrape (prom_filter_arg,
 * prom_filter_check), as libmicrohttpd hands it over: key=value pairs
 * split at '&' and the first '='. Whatever is asked, an argument is taken
 * or refused with a reason, and a query that passes the check selects a
 * shard that exists. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/prom.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prom_filter f = {0};
	char *query = malloc(size + 1), *save = NULL;
	const char *why = NULL;
	uint64_t guid = 0;

	if (!query)
		return 0;
	memcpy(query, data, size);
	query[size] = '\0';
	for (size_t i = 0; i < size && i < 8; i++)
		guid = guid << 8 | data[i];
	for (char *arg = strtok_r(query, "&", &save); arg; arg = strtok_r(NULL, "&", &save)) {
		char *value = strchr(arg, '=');

		if (value)
			*value++ = '\0';
		why = NULL;
		if (prom_filter_arg(&f, arg, value, &why)) {
			if (!why || !*why)
				abort(); /* a refusal says why */
			break;
		}
		if (f.collectors >> PROM_COLLECTORS || f.node_types & ~0xeu || f.shards > 4096)
			abort();
	}
	why = NULL;
	if (!prom_filter_check(&f, &why)) {
		if (f.shards && prom_shard_of(guid, f.shards) >= f.shards)
			abort();
	} else if (!why) {
		abort();
	}
	free(query);
	return 0;
}
