/* opensm's log lines that report traps 129-131 (osm_log.h). opensm logs
 * each trap it receives (osm_trap_rcv.c), also those it never forwards. */
#include <stdio.h>
#include <string.h>

#include "osm_log.h"

/* "Received Generic Notice type:1 num:129 (...) Producer:2 (...) from LID:5 Port 3 TID:" */
int osm_log_line_parse(const char *line, struct notice *n)
{
	const char *p = strstr(line, "Received Generic Notice type:");
	unsigned type, num, producer, lid, port;
	const char *q;

	if (!p || sscanf(p, "Received Generic Notice type:%u num:%u", &type, &num) != 2)
		return -1;
	q = strstr(p, "Producer:");
	if (!q || sscanf(q, "Producer:%u", &producer) != 1)
		return -1;
	q = strstr(q, " from LID:");
	if (!q || sscanf(q, " from LID:%u Port %u", &lid, &port) != 2)
		return -1;
	if (lid > 0xffff || port > 255 || num > 0xffff)
		return -1;
	memset(n, 0, sizeof(*n));
	n->is_generic = true;
	n->type = type;
	n->producer_type = producer;
	n->trap_number = num;
	n->issuer_lid = lid;
	n->lid = lid;
	n->port = port;
	return 0;
}
