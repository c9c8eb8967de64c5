/* A state file an area keeps across restarts (the link baseline, the
 * active alarms): read once at start, replaced whole when what it keeps
 * changes. What it logs is the same for every such file: a file not there
 * yet, one that cannot be read or is refused (the area starts anew), a
 * write that fails (said once, and once more when one succeeds again).
 *
 * The writes are a thread's: a replacement fsyncs the file and its
 * directory, and on a busy disk that takes hundreds of milliseconds the
 * main loop must not wait. The latest text of a file wins: a write asked
 * while an older one waits takes its place. */
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
/* Replaces the file with text (NULL: out of memory) on the writer's
 * thread (the text is copied); the outcome is logged, as said, on the main
 * thread once written. */
void state_file_write(struct state_file *sf, const char *text, size_t len);
/* Waits for sf's write under way or waiting, if any, and forgets sf (its
 * area stops: what it asked last is on disk). */
void state_file_close(struct state_file *sf);
/* At exit, after every state file was closed: the writer's thread ends. */
void state_file_stop(void);

#endif
