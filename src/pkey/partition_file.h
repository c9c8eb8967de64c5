/* OpenSM's partition file: parsed, changed and rewritten in
 * place. Pure (no net-snmp, no I/O): the unit tests and the fuzz targets
 * link it alone. */
#ifndef IBSNMPD_PARTITION_FILE_H
#define IBSNMPD_PARTITION_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PARTITION_NAME_MAX 64
#define PKEY_MIN 0x0001
#define PKEY_MAX 0x7ffe
#define PKEY_DEFAULT 0x7fff /* opensm's Default partition */

enum member_type { MEMBER_UNSET = 0, MEMBER_FULL = 1, MEMBER_LIMITED = 2, MEMBER_BOTH = 3 };

struct partition_member {
	bool is_guid;           /* else a keyword (ALL, ALL_CAS, SELF, ...) kept as written */
	uint64_t guid;
	char keyword[32];
	enum member_type type;  /* as written; MEMBER_UNSET: the partition's default */
};

struct partition {
	char name[PARTITION_NAME_MAX + 1];
	unsigned pkey;          /* low 15 bits; 0 = not given (opensm picks one) */
	bool ipoib;
	int mtu, rate, sl, scope; /* -1 = not given */
	enum member_type defmember;
	char other_flags[256];  /* flags ibsnmpd does not manage, verbatim (", "-joined) */
	struct partition_member *members;
	size_t n_members;
	/* where it is in the file; rewritten only when changed */
	size_t src_begin, src_end;
	unsigned line;
	bool changed, removed, added;
};

struct partition_file {
	char *text;             /* the file as read */
	size_t len;
	struct partition *parts;
	size_t n_parts, cap_parts;
};

/* Parses opensm's partition file syntax. -1 on error, with "line N: why" in
 * err. The file keeps its text: partition_file_render() rewrites only what
 * changed (comments, order and untouched entries stay as they were). */
int partition_file_parse(const char *text, size_t len, struct partition_file *out, char *err,
			 size_t errlen);
/* The new file's text (malloc'd, NUL-terminated); NULL on out of memory. */
char *partition_file_render(const struct partition_file *pf, size_t *len);
void partition_file_free(struct partition_file *pf);

struct partition *partition_find_pkey(struct partition_file *pf, unsigned pkey);
struct partition *partition_find_name(struct partition_file *pf, const char *name);
struct partition_member *partition_find_member(struct partition *p, uint64_t guid);
/* Adds a partition (marked added) or a member; NULL on out of memory. */
struct partition *partition_add(struct partition_file *pf, const char *name, unsigned pkey);
struct partition_member *partition_add_member(struct partition *p, uint64_t guid,
					      enum member_type type);
void partition_remove_member(struct partition *p, uint64_t guid);
/* A deep copy (for a transaction that may be thrown away). */
int partition_file_copy(const struct partition_file *from, struct partition_file *to);

/* Names as opensm's parser takes them: 1..64 of [A-Za-z0-9_.+-]. */
bool partition_name_valid(const char *name, size_t len);
/* A member's membership as opensm applies it. */
enum member_type partition_member_effective(const struct partition *p,
					    const struct partition_member *m);

/* The seed's global flag "Disconnect Unconfigured EndPorts": false when
 * opensm keeps ports in no partition apart (all limited in Default, 0x7fff),
 * true when the Default entry makes ALL (or ALL_CAS) full or both members. */
bool partition_unconfigured_connected(const struct partition_file *pf);
/* Changes the Default entry to that (adds "Default=0x7fff : ALL=full ;" if
 * the file has none); -1 on out of memory, 1 if the file has no Default
 * entry and names another partition "Default" (opensm takes a name once). */
int partition_set_unconfigured_connected(struct partition_file *pf, bool connected);

#endif
