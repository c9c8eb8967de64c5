/* libFuzzer target: a line of ibsnmpd.conf through net-snmp's own config
 * reader (netsnmp_config) into ibsnmpd's token handlers (the core's and
 * every area's), as the daemon reads its file: any token, any value. A bad line is refused with a
 * message; nothing may crash or write out of bounds. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/area.h"
#include "ibsnmpd/config.h"
#include "ibsnmpd/netsnmp.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	netsnmp_ds_set_string(NETSNMP_DS_LIBRARY_ID, NETSNMP_DS_LIB_APPTYPE, "ibsnmpd");
	snmp_disable_log();
	config_register_tokens();
	areas_configure(ibsnmpd_areas); /* every area's tokens too */
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = malloc(size + 1);

	memcpy(line, data, size);
	line[size] = '\0';
	if (!memchr(line, '\n', size)) /* one line, as the reader hands them */
		netsnmp_config(line);
	free(line);
	config_defaults();
	return 0;
}
