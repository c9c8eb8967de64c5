/* libFuzzer target: a line of opensm's log (osm_log_line_parse), which
 * carries text from any node (node descriptions). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trap/osm_log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1);
	struct notice n;

	memcpy(line, data, size);
	line[size] = '\0';
	if (!osm_log_line_parse(line, &n) && (n.lid > 0xffff || n.port > 255))
		abort();
	free(line);
	return 0;
}
