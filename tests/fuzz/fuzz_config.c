/* libFuzzer target: the parsers behind ibsnmpd.conf's tokens (pure); the
 * first octet picks one, the rest is the value as net-snmp hands it over. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;
	const char *why = NULL;
	unsigned u;
	bool b;
	uint64_t g;
	size_t group;
	static const struct cache_decl node_info = {1, "nodeInfo", 60, 0},
				       pm_counters = {14, "pmCounters", 15, 0};
	static const struct cache_decl *const decls[] = {&node_info, &pm_counters};
	char path[64];

	if (!size)
		return 0;
	text = malloc(size);
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	switch (data[0] % 7) {
	case 0:
		if (!config_parse_uint(text, 1, 86400, &u, &why) && (u < 1 || u > 86400))
			abort();
		break;
	case 1:
		config_parse_bool(text, &b, &why);
		break;
	case 2:
		config_parse_guid(text, &g, &why);
		break;
	case 3:
		if (!config_parse_cache_lifetime(text, decls, 2, &group, &u, &why) && group >= 2)
			abort();
		break;
	case 4:
		/* a mask of NodeTypes 1..3 only */
		if (!config_parse_node_types(text, &u, &why) && (u & ~0xeu))
			abort();
		break;
	case 5:
		/* the raw octets, NULs and all */
		config_text_has_token((const char *)data + 1, size - 1, "agentaddress");
		break;
	case 6:
		/* one absolute path, and only if it fits */
		if (!config_parse_path(text, path, sizeof(path), &why) &&
		    (path[0] != '/' || strlen(path) >= sizeof(path)))
			abort();
		break;
	}
	free(text);
	return 0;
}
