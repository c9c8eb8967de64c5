/* Files read whole and replaced whole (file_io.c). */
#ifndef IBSNMPD_FILE_IO_H
#define IBSNMPD_FILE_IO_H

#include <stddef.h>
#include <sys/stat.h>

/* The file's whole text. It is opened without
 * blocking and must be a regular file of at most max octets: a FIFO or a
 * device put in its place must not hold the main loop, and a directory must
 * not read as an empty file. 1: there is no file; -1: it cannot be read,
 * *why says why and *st is what is at the path (if anything), so that the
 * same failure is logged once. */
int file_read_whole(const char *path, size_t max, char **text, size_t *len, struct stat *st,
		    const char **why);
/* A file of secrets (keys) others may read holds secrets others have: 0
 * if st is readable by its owner alone (root or this process's user),
 * else -1 (the caller says "mode %04o, owner %u: refused"). */
int file_check_private(const struct stat *st);
#define FILE_PRIVATE_HINT "keys must be readable by their owner alone: chmod 600"

/* path.tag.PID, written and fsync'd; its name in tmp. */
int file_write_temp(const char *path, const char *tag, const char *text, size_t len, char *tmp,
		    size_t tmplen);
/* fsync of the directory of path (after a rename into it). */
void file_sync_dir(const char *path);
/* Writes text to a temporary file beside path and renames it over path. */
int file_replace(const char *path, const char *text, size_t len, const char **why);

#endif
