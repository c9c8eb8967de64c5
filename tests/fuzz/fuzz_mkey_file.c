/* libFuzzer target: opensm's guid2mkey file (mkey_file_parse), which
 * ibsnmpd reads as mKeyFile. What parses: one key a GUID, found again by
 * its GUID; the common key is one of the file's. */
#include <stdint.h>
#include <stdlib.h>

#include "mad/mkey_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mkey_file f;
	char err[160];
	uint64_t common;
	int found = 0;

	if (mkey_file_parse((const char *)data, size, &f, err, sizeof(err)))
		return 0;
	for (size_t i = 0; i < f.n; i++) {
		if (mkey_file_find(&f, f.v[i].guid) != f.v[i].key)
			abort();
		if (i && f.v[i - 1].guid >= f.v[i].guid)
			abort();
	}
	common = mkey_file_common(&f);
	for (size_t i = 0; i < f.n; i++)
		found |= f.v[i].key == common;
	if (f.n && !found)
		abort();
	mkey_file_free(&f);
	return 0;
}
