/* State files (state_file.h): one way to read, replace and log them. */
#include "ibsnmpd/netsnmp.h"

#include <stdio.h>
#include <sys/stat.h>

#include "ibsnmpd/file_io.h"
#include "ibsnmpd/state_file.h"

void state_file_init(struct state_file *sf, const char *configured, const char *name)
{
	if (configured && configured[0])
		snprintf(sf->path, sizeof(sf->path), "%s", configured);
	else
		snprintf(sf->path, sizeof(sf->path), "%s/%s", get_persistent_directory(), name);
}

int state_file_read(struct state_file *sf, size_t max, char **text, size_t *len)
{
	struct stat st;
	const char *why = "";
	int r = file_read_whole(sf->path, max, text, len, &st, &why);

	if (r > 0)
		snmp_log(LOG_INFO, "%s: no state file %s yet: %s\n", sf->what, sf->path, sf->fresh);
	else if (r < 0)
		snmp_log(LOG_WARNING, "%s: cannot read %s (%s); %s, the file will be replaced\n",
			 sf->what, sf->path, why, sf->fresh);
	return r ? -1 : 0;
}

void state_file_refused(const struct state_file *sf, const char *why)
{
	snmp_log(LOG_WARNING, "%s: %s:%s; %s, the file will be replaced\n", sf->what, sf->path, why,
		 sf->fresh);
}

void state_file_write(struct state_file *sf, const char *text, size_t len)
{
	const char *why = "out of memory";

	if (text && !file_replace(sf->path, text, len, &why)) {
		if (sf->failed)
			snmp_log(LOG_INFO, "%s: %s written again\n", sf->what, sf->path);
		sf->failed = false;
	} else if (!sf->failed) {
		snmp_log(LOG_ERR, "%s: cannot write %s: %s (%s)\n", sf->what, sf->path, why,
			 sf->unsaved);
		sf->failed = true;
	}
}
