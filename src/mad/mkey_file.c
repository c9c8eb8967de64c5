/* opensm's guid2mkey format, read (mkey_file.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mkey_file.h"

/* "0x" and 1-16 hex digits, then a blank or the end: 0, or -1 */
static int hex64(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	unsigned digits = 0;

	if (end - s < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
		return -1;
	for (s += 2; s < end && *s != ' ' && *s != '\t'; s++, digits++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (*s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (*s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			return -1;
		if (digits == 16)
			return -1;
		v = v << 4 | d;
	}
	if (!digits)
		return -1;
	*p = s;
	*out = v;
	return 0;
}

static const char *skip_blanks(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t' || *s == '\r'))
		s++;
	return s;
}

static int by_guid(const void *a, const void *b)
{
	uint64_t x = ((const struct mkey_entry *)a)->guid, y = ((const struct mkey_entry *)b)->guid;

	return x < y ? -1 : x > y;
}

int mkey_file_parse(const char *text, size_t len, struct mkey_file *out, char *err,
		    size_t errlen)
{
	const char *p = text, *end = text + len;
	size_t cap = 0;
	unsigned line = 0;

	memset(out, 0, sizeof(*out));
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *s;
		struct mkey_entry e;

		if (!eol)
			eol = end;
		line++;
		s = skip_blanks(p, eol);
		if (s == eol || *s == '#') {
			p = eol + (eol < end);
			continue;
		}
		if (hex64(&s, eol, &e.guid) || (s = skip_blanks(s, eol)) == eol ||
		    hex64(&s, eol, &e.key) || skip_blanks(s, eol) != eol) {
			snprintf(err, errlen, "%u: not \"0xPORTGUID 0xMKEY\"", line);
			mkey_file_free(out);
			return -1;
		}
		if (out->n == cap) {
			size_t c = cap ? 2 * cap : 64;
			struct mkey_entry *v = realloc(out->v, c * sizeof(*v));

			if (!v) {
				snprintf(err, errlen, "%u: out of memory", line);
				mkey_file_free(out);
				return -1;
			}
			out->v = v;
			cap = c;
		}
		out->v[out->n++] = e;
		p = eol + (eol < end);
	}
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), by_guid);
	/* a GUID twice: the later line is the SM's later key */
	for (size_t i = 1; i < out->n; i++)
		if (out->v[i - 1].guid == out->v[i].guid) {
			snprintf(err, errlen, "port GUID 0x%016llx twice",
				 (unsigned long long)out->v[i].guid);
			mkey_file_free(out);
			return -1;
		}
	return 0;
}

void mkey_file_free(struct mkey_file *f)
{
	free(f->v);
	memset(f, 0, sizeof(*f));
}

uint64_t mkey_file_find(const struct mkey_file *f, uint64_t guid)
{
	struct mkey_entry key = {.guid = guid};
	const struct mkey_entry *e = f->n ? bsearch(&key, f->v, f->n, sizeof(key), by_guid) : NULL;

	return e ? e->key : 0;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t mkey_file_common(const struct mkey_file *f)
{
	uint64_t best = 0, *keys = f->n ? malloc(f->n * sizeof(*keys)) : NULL;
	size_t best_n = 0, run = 0;

	if (!keys)
		return f->n ? f->v[0].key : 0;
	for (size_t i = 0; i < f->n; i++)
		keys[i] = f->v[i].key;
	qsort(keys, f->n, sizeof(*keys), by_value);
	for (size_t i = 0; i < f->n; i++) {
		run = i && keys[i] == keys[i - 1] ? run + 1 : 1;
		if (run > best_n) {
			best_n = run;
			best = keys[i];
		}
	}
	free(keys);
	return best;
}
