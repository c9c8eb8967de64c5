/* The active alarms' state file, both ways (alarm.h). Pure (no I/O): what
 * the agent wrote, read back after a restart so that an alarm that still
 * holds keeps its index and the time it began. A file that is not whole
 * and well-formed is refused as a whole, with its line: the alarms are then
 * found again from the fabric, beginning now. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/alarm.h"

#define HEADER "ibsnmpd-alarms 1"
/* more lines than this: not a file the agent wrote (a fabric of 40,000
 * hosts has some 250,000 ports) */
#define ALARMS_MAX 1000000

char *alarm_state_format(const struct alarm_snapshot *s, size_t *len)
{
	/* a line: "alarm" and six numbers of at most 20 digits */
	size_t cap = 64 + s->n * 160, n;
	char *text = malloc(cap);

	if (!text)
		return NULL;
	n = (size_t)snprintf(text, cap, HEADER "\nnext %" PRIu32 "\n", s->next_index);
	for (size_t i = 0; i < s->n; i++) {
		const struct alarm *a = &s->rows[i];

		n += (size_t)snprintf(text + n, cap - n,
				      "alarm %" PRIu32 " %u 0x%016" PRIx64 " %" PRIu32 " %" PRIu32
				      " %lld\n",
				      a->index, (unsigned)a->key.kind, a->key.guid, a->key.port,
				      a->key.sub, (long long)a->began);
	}
	*len = n;
	return text;
}

/* The next unsigned number of the line at *p (decimal, or hex after 0x),
 * at most max: 0, or -1. */
static int number(const char **p, const char *end, uint64_t max, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	unsigned base = 10, digits = 0;

	while (s < end && *s == ' ')
		s++;
	if (end - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	for (; s < end && *s != ' '; s++, digits++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			return -1;
		if (v > (UINT64_MAX - d) / base)
			return -1;
		v = v * base + d;
	}
	if (!digits || v > max)
		return -1;
	*p = s;
	*out = v;
	return 0;
}

static bool starts(const char *s, const char *end, const char *word)
{
	size_t n = strlen(word);

	return (size_t)(end - s) > n && !memcmp(s, word, n) && s[n] == ' ';
}

static int by_key(const void *a, const void *b)
{
	return alarm_key_cmp(&((const struct alarm *)a)->key, &((const struct alarm *)b)->key);
}

static int by_index(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

struct alarm_snapshot *alarm_state_parse(const char *text, size_t len, char *err, size_t errlen)
{
	struct alarm_snapshot *s = calloc(1, sizeof(*s));
	const char *p = text, *end = text + len;
	size_t cap = 0;
	unsigned line = 0;
	bool have_next = false;

	if (!s) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	while (p < end) {
		const char *eol = memchr(p, '\n', (size_t)(end - p)), *q;
		uint64_t v[6];

		if (!eol) {
			snprintf(err, errlen, "%u: the file ends inside a line", line + 1);
			goto bad;
		}
		line++;
		if (line == 1) {
			if ((size_t)(eol - p) != strlen(HEADER) || memcmp(p, HEADER, strlen(HEADER))) {
				snprintf(err, errlen, "1: not an ibsnmpd-alarms 1 file");
				goto bad;
			}
		} else if (starts(p, eol, "next") && !have_next) {
			q = p + 4;
			if (number(&q, eol, UINT32_MAX, &v[0]) || q != eol || !v[0]) {
				snprintf(err, errlen, "%u: next: one index", line);
				goto bad;
			}
			s->next_index = (uint32_t)v[0];
			have_next = true;
		} else if (starts(p, eol, "alarm")) {
			static const uint64_t max[6] = {UINT32_MAX, ALARM_KINDS - 1, UINT64_MAX,
							UINT32_MAX, UINT32_MAX, INT64_MAX};
			struct alarm *a;

			q = p + 5;
			for (unsigned k = 0; k < 6; k++)
				if (number(&q, eol, max[k], &v[k])) {
					snprintf(err, errlen, "%u: alarm: INDEX KIND GUID PORT SUB BEGAN",
						 line);
					goto bad;
				}
			if (q != eol || !v[0] || !v[1]) {
				snprintf(err, errlen, "%u: alarm: INDEX KIND GUID PORT SUB BEGAN", line);
				goto bad;
			}
			if (s->n == ALARMS_MAX) {
				snprintf(err, errlen, "%u: more than %u alarms", line, ALARMS_MAX);
				goto bad;
			}
			if (s->n == cap) {
				size_t c = cap ? cap * 2 : 64;
				struct alarm *r = realloc(s->rows, c * sizeof(*r));

				if (!r) {
					snprintf(err, errlen, "out of memory");
					goto bad;
				}
				s->rows = r;
				cap = c;
			}
			a = &s->rows[s->n++];
			memset(a, 0, sizeof(*a));
			a->index = (uint32_t)v[0];
			a->key.kind = (uint8_t)v[1];
			a->key.guid = v[2];
			a->key.port = (uint32_t)v[3];
			a->key.sub = (uint32_t)v[4];
			a->began = (time_t)v[5];
			a->restored = true;
		} else {
			snprintf(err, errlen, "%u: neither a next nor an alarm line", line);
			goto bad;
		}
		p = eol + 1;
	}
	if (!line) {
		snprintf(err, errlen, "1: empty");
		goto bad;
	}
	if (!have_next) {
		snprintf(err, errlen, "%u: no next line", line);
		goto bad;
	}
	/* a key or an index twice would make two rows one */
	if (s->n) {
		uint32_t *idx = malloc(s->n * sizeof(*idx));

		if (!idx) {
			snprintf(err, errlen, "out of memory");
			goto bad;
		}
		qsort(s->rows, s->n, sizeof(*s->rows), by_key);
		for (size_t i = 0; i < s->n; i++)
			idx[i] = s->rows[i].index;
		qsort(idx, s->n, sizeof(*idx), by_index);
		for (size_t i = 1; i < s->n; i++)
			if (idx[i - 1] == idx[i] ||
			    !alarm_key_cmp(&s->rows[i - 1].key, &s->rows[i].key)) {
				free(idx);
				snprintf(err, errlen, "an alarm twice (its index or what it names)");
				goto bad;
			}
		uint32_t last = idx[s->n - 1];

		free(idx);
		if (last >= s->next_index) {
			snprintf(err, errlen, "alarm %" PRIu32 " is not under next", last);
			goto bad;
		}
	}
	return s;
bad:
	alarm_snapshot_free(s);
	return NULL;
}
