/* The active alarms' snapshot from the conditions the areas report and the
 * snapshot before (alarm.h). Pure: unit-tested. A condition keeps its row
 * (index, begin time) while it lasts; a new one gets the next index; at the
 * first build after a start, what the state file kept is taken back for
 * the conditions that still hold. */
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/alarm.h"

struct alarm_cond *alarm_list_add(struct alarm_list *l, enum alarm_kind kind, uint64_t guid,
				  uint32_t port, uint32_t sub, unsigned node_type)
{
	struct alarm_cond *c;

	if (l->failed)
		return NULL;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 32;
		struct alarm_cond *v = realloc(l->v, cap * sizeof(*v));

		if (!v) {
			l->failed = true;
			return NULL;
		}
		l->v = v;
		l->cap = cap;
	}
	c = &l->v[l->n++];
	memset(&c->key, 0, sizeof(c->key));
	c->key.kind = (uint8_t)kind;
	c->key.guid = guid;
	c->key.port = port;
	c->key.sub = sub;
	c->node_type = (uint8_t)node_type;
	c->quiet = false;
	c->desc[0] = '\0';
	return c;
}

void alarm_list_free(struct alarm_list *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}

int alarm_key_cmp(const struct alarm_key *a, const struct alarm_key *b)
{
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->guid != b->guid)
		return a->guid < b->guid ? -1 : 1;
	if (a->port != b->port)
		return a->port < b->port ? -1 : 1;
	if (a->sub != b->sub)
		return a->sub < b->sub ? -1 : 1;
	return 0;
}

void alarm_snapshot_free(void *p)
{
	struct alarm_snapshot *s = p;

	if (!s)
		return;
	free(s->rows);
	free(s);
}

static int cond_cmp(const void *a, const void *b)
{
	return alarm_key_cmp(&((const struct alarm_cond *)a)->key,
			     &((const struct alarm_cond *)b)->key);
}

static int row_key_cmp(const void *a, const void *b)
{
	return alarm_key_cmp(&(*(const struct alarm *const *)a)->key,
			     &(*(const struct alarm *const *)b)->key);
}

static int row_index_cmp(const void *a, const void *b)
{
	uint32_t x = ((const struct alarm *)a)->index, y = ((const struct alarm *)b)->index;

	return x < y ? -1 : x > y;
}

/* The rows of s by key (NULL: none, or out of memory: *oom). */
static const struct alarm **by_key(const struct alarm_snapshot *s, bool *oom)
{
	const struct alarm **v;

	if (!s || !s->n)
		return NULL;
	if (!(v = malloc(s->n * sizeof(*v)))) {
		*oom = true;
		return NULL;
	}
	for (size_t i = 0; i < s->n; i++)
		v[i] = &s->rows[i];
	qsort(v, s->n, sizeof(*v), row_key_cmp);
	return v;
}

static const struct alarm *find(const struct alarm **v, size_t n, const struct alarm_key *key)
{
	struct alarm probe = {.key = *key};
	const struct alarm *p = &probe, **hit;

	if (!v)
		return NULL;
	hit = bsearch(&p, v, n, sizeof(*v), row_key_cmp);
	return hit ? *hit : NULL;
}

static uint32_t next_of(uint32_t index)
{
	return index == UINT32_MAX ? 1 : index + 1;
}

struct alarm_snapshot *alarm_build(const struct alarm_build *in)
{
	const struct alarm_snapshot *before = in->prev;
	struct alarm_snapshot *s = calloc(1, sizeof(*s));
	struct alarm_list *c = in->conds;
	const struct alarm **old, **file = NULL;
	bool oom = false;
	size_t n = 0, kept = 0;

	if (!s)
		return NULL;
	old = by_key(before, &oom);
	if (!oom)
		file = by_key(in->kept, &oom);
	if (oom || (c->n && !(s->rows = calloc(c->n, sizeof(*s->rows))))) {
		free(old);
		free(file);
		free(s);
		return NULL;
	}
	s->next_index = before ? before->next_index : in->kept ? in->kept->next_index : 1;
	if (c->n)
		qsort(c->v, c->n, sizeof(*c->v), cond_cmp);
	for (size_t i = 0; i < c->n; i++) {
		const struct alarm_cond *k = &c->v[i];
		const struct alarm *was;
		struct alarm *a;

		if (i && !alarm_key_cmp(&c->v[i - 1].key, &k->key))
			continue; /* one row a condition */
		a = &s->rows[n++];
		a->key = k->key;
		a->node_type = k->node_type;
		memcpy(a->desc, k->desc, sizeof(a->desc));
		a->desc[sizeof(a->desc) - 1] = '\0';
		if ((was = find(old, before ? before->n : 0, &k->key))) {
			a->index = was->index;
			a->began = was->began;
			a->began_ticks = was->began_ticks;
			a->restored = was->restored;
			kept++;
			continue;
		}
		if ((was = find(file, in->kept ? in->kept->n : 0, &k->key))) {
			/* from the file: it began before this start */
			a->index = was->index;
			a->began = was->began;
			a->began_ticks = 0;
			a->restored = true;
			continue;
		}
		a->index = s->next_index;
		s->next_index = next_of(s->next_index);
		a->began = in->now;
		a->began_ticks = in->now_ticks;
		a->restored = k->quiet;
	}
	free(old);
	free(file);
	s->n = n;
	/* after 4 billion alarms the index wraps: one still there keeps its own */
	if (n)
		qsort(s->rows, n, sizeof(*s->rows), row_index_cmp);
	s->changed = !before || kept != before->n || kept != n;
	if (s->changed || !in->prev) {
		s->last_change = in->now;
		s->last_change_ticks = in->now_ticks;
	} else {
		s->last_change = in->prev->last_change;
		s->last_change_ticks = in->prev->last_change_ticks;
	}
	return s;
}
