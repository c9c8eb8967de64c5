/* OpenSM's partition file (opensm(8), "PARTITION CONFIGURATION"):
 *
 *   # comment
 *   Name[=PKey][,ipoib][,mtu=N][,rate=N][,sl=N][,scope=N][,defmember=full|limited|both]
 *       : PortGUID[=full|limited|both], ..., ALL|ALL_CAS|ALL_SWITCHES|ALL_ROUTERS|SELF ;
 *
 * No library parses it for others (opensm's own parser is internal to
 * libopensm), so this is written here: pure functions, unit-tested. Flags
 * ibsnmpd does not manage are kept verbatim, and an entry's text is
 * rewritten only when the entry changed. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partition_file.h"

static const char *const type_names[] = {"", "full", "limited", "both"};

static void trim(const char **b, const char **e)
{
	while (*b < *e && isspace((unsigned char)**b))
		(*b)++;
	while (*e > *b && isspace((unsigned char)(*e)[-1]))
		(*e)--;
}

static unsigned line_of(const char *text, const char *p)
{
	unsigned line = 1;

	for (const char *q = text; q < p; q++)
		line += *q == '\n';
	return line;
}

static enum member_type type_of(const char *b, const char *e)
{
	for (int t = MEMBER_FULL; t <= MEMBER_BOTH; t++)
		if ((size_t)(e - b) == strlen(type_names[t]) && !strncmp(b, type_names[t], e - b))
			return (enum member_type)t;
	return MEMBER_UNSET;
}

bool partition_name_valid(const char *name, size_t len)
{
	if (len == 0 || len > PARTITION_NAME_MAX)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("_.+-", name[i]))
			return false;
	return true;
}

/* the copy of [b, e) without '#' comments (they may sit inside an entry) */
static char *strip_comments(const char *b, const char *e)
{
	char *out = malloc((size_t)(e - b) + 1), *o = out;

	if (!out)
		return NULL;
	while (b < e) {
		if (*b == '#') {
			while (b < e && *b != '\n')
				b++;
			continue;
		}
		*o++ = *b++;
	}
	*o = '\0';
	return out;
}

static int parse_number(const char *b, const char *e, long min, long max, int *out)
{
	char buf[32], *end;
	long v;

	if (e - b <= 0 || e - b >= (long)sizeof(buf))
		return -1;
	memcpy(buf, b, (size_t)(e - b));
	buf[e - b] = '\0';
	v = strtol(buf, &end, 0);
	if (*end || v < min || v > max)
		return -1;
	*out = (int)v;
	return 0;
}

static int add_other_flag(struct partition *p, const char *b, const char *e)
{
	size_t have = strlen(p->other_flags), n = (size_t)(e - b);

	if (have + n + 3 >= sizeof(p->other_flags))
		return -1;
	if (have)
		strcat(p->other_flags, ", ");
	strncat(p->other_flags, b, n);
	return 0;
}

/* "Name[=PKey], flag[=value], ..." */
static int parse_header(struct partition *p, const char *b, const char *e, const char **why)
{
	const char *item = b;

	for (int first = 1; item <= e; first = 0) {
		const char *comma = memchr(item, ',', (size_t)(e - item));
		const char *ie = comma ? comma : e, *ib = item, *eq;

		trim(&ib, &ie);
		eq = memchr(ib, '=', (size_t)(ie - ib));
		if (first) {
			const char *ne = eq ? eq : ie, *nb = ib;
			int pkey;

			trim(&nb, &ne);
			if (ne > nb && !partition_name_valid(nb, (size_t)(ne - nb))) {
				*why = "partition name: use 1-64 of letters, digits, _ . + -";
				return -1;
			}
			memcpy(p->name, nb, (size_t)(ne - nb));
			p->name[ne - nb] = '\0';
			if (eq) {
				const char *vb = eq + 1, *ve = ie;

				trim(&vb, &ve);
				if (parse_number(vb, ve, 0, 0xffff, &pkey) || !(pkey & 0x7fff)) {
					*why = "P_Key: expected a number such as 0x8001";
					return -1;
				}
				p->pkey = (unsigned)pkey & 0x7fff;
			}
		} else if (ie > ib) {
			const char *ke = eq ? eq : ie, *vb = eq ? eq + 1 : ie, *ve = ie;
			size_t kl = (size_t)(ke - ib);
			int v;

			trim(&ib, &ke);
			kl = (size_t)(ke - ib);
			trim(&vb, &ve);
			if (kl == 5 && !strncmp(ib, "ipoib", 5) && !eq) {
				p->ipoib = true;
			} else if (eq && kl == 9 && !strncmp(ib, "defmember", 9)) {
				p->defmember = type_of(vb, ve);
				if (!p->defmember) {
					*why = "defmember: expected full, limited or both";
					return -1;
				}
			} else if (eq && ((kl == 3 && !strncmp(ib, "mtu", 3)) ||
					  (kl == 4 && !strncmp(ib, "rate", 4)) ||
					  (kl == 2 && !strncmp(ib, "sl", 2)) ||
					  (kl == 5 && !strncmp(ib, "scope", 5)))) {
				if (parse_number(vb, ve, 0, 255, &v)) {
					*why = "mtu, rate, sl, scope: expected a number";
					return -1;
				}
				if (*ib == 'm')
					p->mtu = v;
				else if (*ib == 'r')
					p->rate = v;
				else if (ib[1] == 'l')
					p->sl = v;
				else
					p->scope = v;
			} else if (add_other_flag(p, ib, ie)) {
				*why = "too many flags";
				return -1;
			}
		}
		if (!comma)
			break;
		item = comma + 1;
	}
	return 0;
}

static int parse_members(struct partition *p, const char *b, const char *e, const char **why)
{
	const char *item = b;

	while (item <= e) {
		const char *comma = memchr(item, ',', (size_t)(e - item));
		const char *ie = comma ? comma : e, *ib = item, *eq, *ge;
		struct partition_member m = {0};

		trim(&ib, &ie);
		if (ie > ib) {
			eq = memchr(ib, '=', (size_t)(ie - ib));
			ge = eq ? eq : ie;
			trim(&ib, &ge);
			if (eq) {
				const char *tb = eq + 1, *te = ie;

				trim(&tb, &te);
				m.type = type_of(tb, te);
				if (!m.type) {
					*why = "membership: expected full, limited or both";
					return -1;
				}
			}
			if (ge - ib > 2 && ib[0] == '0' && (ib[1] == 'x' || ib[1] == 'X')) {
				char buf[24], *end;

				if (ge - ib > 18) {
					*why = "port GUID: too long";
					return -1;
				}
				memcpy(buf, ib, (size_t)(ge - ib));
				buf[ge - ib] = '\0';
				m.guid = strtoull(buf, &end, 16);
				if (*end) {
					*why = "port GUID: expected 0x and 16 hexadecimal digits";
					return -1;
				}
				m.is_guid = true;
			} else if (ge - ib > 0 && (size_t)(ge - ib) < sizeof(m.keyword)) {
				memcpy(m.keyword, ib, (size_t)(ge - ib));
				if (strcmp(m.keyword, "ALL") && strcmp(m.keyword, "ALL_CAS") &&
				    strcmp(m.keyword, "ALL_SWITCHES") &&
				    strcmp(m.keyword, "ALL_ROUTERS") && strcmp(m.keyword, "SELF")) {
					*why = "member: expected a port GUID (0x...) or ALL, ALL_CAS, "
					       "ALL_SWITCHES, ALL_ROUTERS, SELF";
					return -1;
				}
			} else {
				*why = "member: empty or too long";
				return -1;
			}
			{
				void *np = realloc(p->members, (p->n_members + 1) * sizeof(m));

				if (!np) {
					*why = "out of memory";
					return -1;
				}
				p->members = np;
				p->members[p->n_members++] = m;
			}
		}
		if (!comma)
			break;
		item = comma + 1;
	}
	return 0;
}

static struct partition *new_part(struct partition_file *pf)
{
	if (pf->n_parts == pf->cap_parts) {
		size_t cap = pf->cap_parts ? 2 * pf->cap_parts : 8;
		void *np = realloc(pf->parts, cap * sizeof(*pf->parts));

		if (!np)
			return NULL;
		pf->parts = np;
		pf->cap_parts = cap;
	}
	memset(&pf->parts[pf->n_parts], 0, sizeof(pf->parts[0]));
	pf->parts[pf->n_parts].mtu = pf->parts[pf->n_parts].rate = -1;
	pf->parts[pf->n_parts].sl = pf->parts[pf->n_parts].scope = -1;
	return &pf->parts[pf->n_parts++];
}

int partition_file_parse(const char *text, size_t len, struct partition_file *pf, char *err,
			 size_t errlen)
{
	const char *p = text, *end = text + len;
	const char *why = NULL, *nul = memchr(text, '\0', len);

	memset(pf, 0, sizeof(*pf));
	if (nul) { /* opensm reads lines with fgets(): text after a NUL is lost */
		unsigned line = 1;

		for (const char *c = text; c < nul; c++)
			line += *c == '\n';
		snprintf(err, errlen, "line %u: a NUL octet: not a text file", line);
		return -1;
	}
	pf->text = malloc(len + 1);
	if (!pf->text) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memcpy(pf->text, text, len);
	pf->text[len] = '\0';
	pf->len = len;
	while (p < end) {
		const char *semi, *colon;
		char *clean;
		struct partition *part;

		if (isspace((unsigned char)*p)) {
			p++;
			continue;
		}
		if (*p == '#') {
			while (p < end && *p != '\n')
				p++;
			continue;
		}
		/* an entry: up to its ';' (comments inside are skipped) */
		semi = p;
		while (semi < end && *semi != ';') {
			if (*semi == '#')
				while (semi < end && *semi != '\n')
					semi++;
			else
				semi++;
		}
		if (semi >= end) {
			snprintf(err, errlen, "line %u: entry without a closing ';'", line_of(text, p));
			partition_file_free(pf);
			return -1;
		}
		part = new_part(pf);
		clean = part ? strip_comments(p, semi) : NULL;
		if (!clean) {
			snprintf(err, errlen, "out of memory");
			partition_file_free(pf);
			return -1;
		}
		part->src_begin = (size_t)(p - text);
		part->src_end = (size_t)(semi + 1 - text);
		part->line = line_of(text, p);
		colon = strchr(clean, ':');
		if (!colon)
			why = "expected 'name[=P_Key][,flags] : members ;'";
		else if (!parse_header(part, clean, colon, &why))
			parse_members(part, colon + 1, clean + strlen(clean), &why);
		free(clean);
		if (why) {
			snprintf(err, errlen, "line %u: %s", part->line, why);
			partition_file_free(pf);
			return -1;
		}
		p = semi + 1;
	}
	/* a P_Key or a name used twice: opensm would take one of them */
	for (size_t i = 0; i < pf->n_parts; i++)
		for (size_t j = i + 1; j < pf->n_parts; j++)
			if ((pf->parts[i].pkey && pf->parts[i].pkey == pf->parts[j].pkey) ||
			    (pf->parts[i].name[0] && !strcmp(pf->parts[i].name, pf->parts[j].name))) {
				snprintf(err, errlen, "line %u: P_Key or name of line %u used again",
					 pf->parts[j].line, pf->parts[i].line);
				partition_file_free(pf);
				return -1;
			}
	return 0;
}

void partition_file_free(struct partition_file *pf)
{
	for (size_t i = 0; i < pf->n_parts; i++)
		free(pf->parts[i].members);
	free(pf->parts);
	free(pf->text);
	memset(pf, 0, sizeof(*pf));
}

struct buf {
	char *s;
	size_t len, cap;
	bool oom;
};

static void put(struct buf *b, const char *s, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = (b->len + n + 1) * 2;
		char *ns = realloc(b->s, cap);

		if (!ns) {
			b->oom = true;
			return;
		}
		b->s = ns;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void putf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#include <stdarg.h>
static void putf(struct buf *b, const char *fmt, ...)
{
	char tmp[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		put(b, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

static void format_entry(struct buf *b, const struct partition *p)
{
	putf(b, "%s", p->name);
	if (p->pkey)
		putf(b, "=0x%04x", p->pkey);
	if (p->ipoib)
		putf(b, ", ipoib");
	if (p->mtu >= 0)
		putf(b, ", mtu=%d", p->mtu);
	if (p->rate >= 0)
		putf(b, ", rate=%d", p->rate);
	if (p->sl >= 0)
		putf(b, ", sl=%d", p->sl);
	if (p->scope >= 0)
		putf(b, ", scope=%d", p->scope);
	if (p->defmember)
		putf(b, ", defmember=%s", type_names[p->defmember]);
	if (p->other_flags[0])
		putf(b, ", %s", p->other_flags);
	putf(b, " :");
	for (size_t i = 0; i < p->n_members; i++) {
		const struct partition_member *m = &p->members[i];

		if (m->is_guid)
			putf(b, "%s 0x%016llx", i ? "," : "", (unsigned long long)m->guid);
		else
			putf(b, "%s %s", i ? "," : "", m->keyword);
		if (m->type)
			putf(b, "=%s", type_names[m->type]);
	}
	putf(b, " ;");
}

char *partition_file_render(const struct partition_file *pf, size_t *len)
{
	struct buf b = {0};
	size_t pos = 0;

	put(&b, "", 0);
	for (size_t i = 0; i < pf->n_parts; i++) {
		const struct partition *p = &pf->parts[i];

		if (p->added)
			continue;
		put(&b, pf->text + pos, p->src_begin - pos);
		pos = p->src_end;
		if (p->removed) {
			/* and the rest of its line, if only blanks */
			size_t q = pos;

			while (q < pf->len && (pf->text[q] == ' ' || pf->text[q] == '\t'))
				q++;
			if (q < pf->len && pf->text[q] == '\n')
				pos = q + 1;
			continue;
		}
		if (p->changed)
			format_entry(&b, p);
		else
			put(&b, pf->text + p->src_begin, p->src_end - p->src_begin);
	}
	put(&b, pf->text + pos, pf->len - pos);
	for (size_t i = 0; i < pf->n_parts; i++) {
		const struct partition *p = &pf->parts[i];

		if (!p->added || p->removed)
			continue;
		if (b.len && b.s[b.len - 1] != '\n')
			put(&b, "\n", 1);
		format_entry(&b, p);
		put(&b, "\n", 1);
	}
	if (b.oom) {
		free(b.s);
		return NULL;
	}
	*len = b.len;
	return b.s;
}

struct partition *partition_find_pkey(struct partition_file *pf, unsigned pkey)
{
	for (size_t i = 0; i < pf->n_parts; i++)
		if (!pf->parts[i].removed && pf->parts[i].pkey == pkey)
			return &pf->parts[i];
	return NULL;
}

struct partition *partition_find_name(struct partition_file *pf, const char *name)
{
	for (size_t i = 0; i < pf->n_parts; i++)
		if (!pf->parts[i].removed && !strcmp(pf->parts[i].name, name))
			return &pf->parts[i];
	return NULL;
}

struct partition_member *partition_find_member(struct partition *p, uint64_t guid)
{
	for (size_t i = 0; i < p->n_members; i++)
		if (p->members[i].is_guid && p->members[i].guid == guid)
			return &p->members[i];
	return NULL;
}

struct partition *partition_add(struct partition_file *pf, const char *name, unsigned pkey)
{
	struct partition *p = new_part(pf);

	if (!p)
		return NULL;
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->pkey = pkey;
	p->added = p->changed = true;
	return p;
}

struct partition_member *partition_add_member(struct partition *p, uint64_t guid,
					      enum member_type type)
{
	struct partition_member *m = realloc(p->members, (p->n_members + 1) * sizeof(*m));

	if (!m)
		return NULL;
	p->members = m;
	m = &p->members[p->n_members++];
	memset(m, 0, sizeof(*m));
	m->is_guid = true;
	m->guid = guid;
	m->type = type;
	p->changed = true;
	return m;
}

void partition_remove_member(struct partition *p, uint64_t guid)
{
	for (size_t i = 0; i < p->n_members; i++) {
		if (p->members[i].is_guid && p->members[i].guid == guid) {
			memmove(&p->members[i], &p->members[i + 1],
				(p->n_members - i - 1) * sizeof(p->members[0]));
			p->n_members--;
			p->changed = true;
			return;
		}
	}
}

int partition_file_copy(const struct partition_file *from, struct partition_file *to)
{
	memset(to, 0, sizeof(*to));
	to->text = malloc(from->len + 1);
	to->parts = calloc(from->n_parts ? from->n_parts : 1, sizeof(*to->parts));
	if (!to->text || !to->parts) {
		partition_file_free(to);
		return -1;
	}
	memcpy(to->text, from->text, from->len + 1);
	to->len = from->len;
	to->cap_parts = from->n_parts ? from->n_parts : 1;
	for (size_t i = 0; i < from->n_parts; i++) {
		struct partition *p = &to->parts[to->n_parts++];

		*p = from->parts[i];
		p->members = NULL;
		if (from->parts[i].n_members) {
			p->members = malloc(from->parts[i].n_members * sizeof(*p->members));
			if (!p->members) {
				p->n_members = 0;
				partition_file_free(to);
				return -1;
			}
			memcpy(p->members, from->parts[i].members,
			       from->parts[i].n_members * sizeof(*p->members));
		}
	}
	return 0;
}

enum member_type partition_member_effective(const struct partition *p,
					    const struct partition_member *m)
{
	if (m->type)
		return m->type;
	return p->defmember ? p->defmember : MEMBER_LIMITED;
}

/* The seed's "Disconnect Unconfigured EndPorts" as opensm has it: with a
 * partition file, opensm makes every port a limited member of the Default
 * partition (0x7fff; only the SM's port full), so ports in no partition reach
 * only the SM, unless the file's Default entry makes ALL (or ALL_CAS) full. */
static bool keyword_connects(const struct partition *p, const struct partition_member *m)
{
	enum member_type t = partition_member_effective(p, m);

	return !m->is_guid && (!strcmp(m->keyword, "ALL") || !strcmp(m->keyword, "ALL_CAS")) &&
	       (t == MEMBER_FULL || t == MEMBER_BOTH);
}

bool partition_unconfigured_connected(const struct partition_file *pf)
{
	for (size_t i = 0; i < pf->n_parts; i++) {
		const struct partition *p = &pf->parts[i];

		if (p->removed || p->pkey != PKEY_DEFAULT)
			continue;
		for (size_t k = 0; k < p->n_members; k++)
			if (keyword_connects(p, &p->members[k]))
				return true;
	}
	return false;
}

int partition_set_unconfigured_connected(struct partition_file *pf, bool connected)
{
	struct partition *def = partition_find_pkey(pf, PKEY_DEFAULT), *named;
	struct partition_member *m;

	if (connected == partition_unconfigured_connected(pf))
		return 0;
	if (!connected) {
		/* explicit ALL=limited rather than a removed member: the intent stays readable */
		for (size_t i = 0; i < pf->n_parts; i++) {
			struct partition *p = &pf->parts[i];

			if (p->removed || p->pkey != PKEY_DEFAULT)
				continue;
			for (size_t k = 0; k < p->n_members; k++)
				if (keyword_connects(p, &p->members[k])) {
					p->members[k].type = MEMBER_LIMITED;
					p->changed = true;
				}
		}
		return 0;
	}
	if (!def) {
		/* opensm takes a name once: "Default" naming another P_Key leaves
		 * no name for the Default partition's entry */
		named = partition_find_name(pf, "Default");
		if (named && !named->removed)
			return 1;
		if (!(def = partition_add(pf, "Default", PKEY_DEFAULT)))
			return -1;
	}
	for (size_t k = 0; k < def->n_members; k++) {
		m = &def->members[k];
		if (!m->is_guid && !strcmp(m->keyword, "ALL")) {
			m->type = MEMBER_FULL;
			def->changed = true;
			return 0;
		}
	}
	if (!(m = partition_add_member(def, 0, MEMBER_FULL)))
		return -1;
	m->is_guid = false;
	snprintf(m->keyword, sizeof(m->keyword), "ALL");
	return 0;
}
