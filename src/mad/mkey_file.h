/* M_Keys by port GUID, in opensm's guid2mkey cache format (mKeyFile):
 *
 *   0x0002c9030000001e 0x0000000000000111
 *
 * a port GUID and its M_Key a line (opensm writes a blank line after each;
 * '#' comments are taken too). Pure: unit-tested, fuzzed. The keys are
 * secrets: the parser's messages name lines, never a key. */
#ifndef IBSNMPD_MKEY_FILE_H
#define IBSNMPD_MKEY_FILE_H

#include <stddef.h>
#include <stdint.h>

struct mkey_entry {
	uint64_t guid, key;
};

struct mkey_file {
	struct mkey_entry *v; /* sorted by GUID, one each */
	size_t n;
};

/* 0, or -1 and err ("LINE: why"); out is empty on failure. */
int mkey_file_parse(const char *text, size_t len, struct mkey_file *out, char *err,
		    size_t errlen);
void mkey_file_free(struct mkey_file *f);
/* The key of a port GUID; 0 if the file has none. */
uint64_t mkey_file_find(const struct mkey_file *f, uint64_t guid);
/* The key most ports have (opensm's m_key: all of them); 0 for none. */
uint64_t mkey_file_common(const struct mkey_file *f);

#endif
