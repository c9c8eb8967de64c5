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
	enum cache_group_id group;

	if (!size)
		return 0;
	text = malloc(size);
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	switch (data[0] % 6) {
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
		if (!config_parse_cache_lifetime(text, &group, &u, &why) &&
		    (group >= CACHE_GROUP_COUNT || !cache_group_name(group)))
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
	}
	free(text);
	return 0;
}
