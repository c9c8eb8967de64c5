/* opensm's log lines that report traps 129-131 (pure). */
#ifndef IBSNMPD_OSM_LOG_H
#define IBSNMPD_OSM_LOG_H

#include "ibsnmpd/notice.h"

/* One line of opensm's log -> the trap it reports; -1 if it reports none. */
int osm_log_line_parse(const char *line, struct notice *n);

#endif
