/* The M_Keys in force (mkeys.h). */
#include "ibsnmpd/netsnmp.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ibsnmpd/config.h"
#include "ibsnmpd/file_io.h"
#include "ibsnmpd/mad_engine.h"
#include "mkey_file.h"
#include "ibsnmpd/mkeys.h"

#define MKEY_FILE_MAX (16u << 20)

static struct mkey_file keys;

int mkeys_load(const char *path, char *why, size_t len)
{
	struct stat st;
	struct mkey_file fresh;
	char *text = NULL, err[160];
	const char *reason = "";
	size_t n = 0;
	int r;

	if (!path || !path[0]) {
		mkeys_free();
		return 0;
	}
	r = file_read_whole(path, MKEY_FILE_MAX, &text, &n, &st, &reason);
	if (r) {
		snprintf(why, len, "mKeyFile %s: %s", path, r > 0 ? "no such file" : reason);
		return -1;
	}
	/* a key file others may read is a key others have */
	if (file_check_private(&st)) {
		snprintf(why, len, "mKeyFile %s: mode %04o, owner %u: refused (" FILE_PRIVATE_HINT ")",
			 path, (unsigned)(st.st_mode & 07777), (unsigned)st.st_uid);
		free(text);
		return -1;
	}
	r = mkey_file_parse(text, n, &fresh, err, sizeof(err));
	memset(text, 0, n); /* the keys do not linger in freed memory */
	free(text);
	if (r) {
		snprintf(why, len, "mKeyFile %s:%s", path, err);
		return -1;
	}
	mkey_file_free(&keys);
	keys = fresh;
	return 0;
}

void mkeys_free(void)
{
	if (keys.v)
		memset(keys.v, 0, keys.n * sizeof(*keys.v));
	mkey_file_free(&keys);
}

uint64_t mkeys_default(void)
{
	return ibsnmpd_cfg.mkey ? ibsnmpd_cfg.mkey : mkey_file_common(&keys);
}

bool mkeys_per_port(void)
{
	for (size_t i = 1; i < keys.n; i++)
		if (keys.v[i].key != keys.v[0].key)
			return true;
	return false;
}

uint64_t mkeys_of(uint64_t guid)
{
	return guid ? mkey_file_find(&keys, guid) : 0;
}
