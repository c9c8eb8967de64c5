/* Files ibsnmpd reads whole and replaces whole: opensm's partition file,
 * the fabric baseline's state file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ibsnmpd/file_io.h"

int file_read_whole(const char *path, size_t max, char **text, size_t *len, struct stat *st,
		    const char **why)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	char *buf = NULL;
	size_t n = 0;

	*text = NULL;
	*len = 0;
	memset(st, 0, sizeof(*st));
	if (fd < 0) {
		int e = errno;

		if (e == ENOENT)
			return 1;
		stat(path, st);
		*why = strerror(e);
		return -1;
	}
	if (fstat(fd, st) || !S_ISREG(st->st_mode) || st->st_size > (off_t)max) {
		*why = !S_ISREG(st->st_mode) ? "not a regular file" : "too large";
		close(fd);
		return -1;
	}
	buf = malloc((size_t)st->st_size + 4096);
	for (size_t cap = buf ? (size_t)st->st_size + 4096 : 0;;) {
		ssize_t got;

		if (!buf) {
			*why = "out of memory";
			break;
		}
		if (n == cap) { /* it grew while being read */
			char *nb;

			if (cap >= max) {
				*why = "too large";
				break;
			}
			if (!(nb = realloc(buf, cap *= 2))) {
				*why = "out of memory";
				break;
			}
			buf = nb;
		}
		got = read(fd, buf + n, cap - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			*why = strerror(errno);
			break;
		}
		if (got == 0) {
			close(fd);
			*text = buf;
			*len = n;
			return 0;
		}
		n += (size_t)got;
	}
	free(buf);
	close(fd);
	return -1;
}

static int write_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(fd, s, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

int file_write_temp(const char *path, const char *tag, const char *text, size_t len,
		      char *tmp, size_t tmplen)
{
	int fd;

	snprintf(tmp, tmplen, "%s.%s.%ld", path, tag, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	if (write_all(fd, text, len) || fsync(fd)) {
		close(fd);
		unlink(tmp);
		return -1;
	}
	return close(fd);
}

void file_sync_dir(const char *path)
{
	char dir[4096];
	char *slash;
	int fd;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		return;
	*(slash == dir ? slash + 1 : slash) = '\0';
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

int file_replace(const char *path, const char *text, size_t len, const char **why)
{
	char tmp[4200];

	if (file_write_temp(path, "ibsnmpd-new", text, len, tmp, sizeof(tmp))) {
		*why = strerror(errno);
		return -1;
	}
	if (rename(tmp, path)) {
		*why = strerror(errno);
		unlink(tmp);
		return -1;
	}
	file_sync_dir(path);
	return 0;
}

int file_check_private(const struct stat *st)
{
	return (st->st_mode & (S_IRWXG | S_IRWXO)) || (st->st_uid != 0 && st->st_uid != geteuid())
		       ? -1
		       : 0;
}
