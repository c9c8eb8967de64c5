/* A state file an area keeps across restarts (the link baseline, the
 * active alarms): read once at start, replaced whole when what it keeps
 * changes. What it logs is the same for every such file: a file not there
 * yet, one that cannot be read or is refused (the area starts anew), a
 * write that fails (said once, and once more when one succeeds again). */
#ifndef IBSNMPD_STATE_FILE_H
#define IBSNMPD_STATE_FILE_H

#include <stdbool.h>
#include <stddef.h>

struct state_file {
	const char *what;     /* in the log: "fabric baseline" */
	const char *fresh;    /* what is done without a file: "recording the links as ..." */
	const char *unsaved;  /* what a failed write means: "the baseline is kept in memory" */
	char path[4096];
	bool failed;          /* the last write failed (said) */
};

/* path: configured (an absolute path), else name in net-snmp's persistent
 * directory. */
void state_file_init(struct state_file *sf, const char *configured, const char *name);
/* The file's whole text (free it): 0; none yet or unreadable (logged): -1. */
int state_file_read(struct state_file *sf, size_t max, char **text, size_t *len);
/* The area refused the text (its parser's why, "LINE: ..."): logged. */
void state_file_refused(const struct state_file *sf, const char *why);
/* Replaces the file with text (NULL: out of memory), logging as said. */
void state_file_write(struct state_file *sf, const char *text, size_t len);

#endif
