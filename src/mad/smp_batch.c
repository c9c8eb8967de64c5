#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/mad_engine.h"
#include "ibsnmpd/netsnmp.h"
#include "ibsnmpd/smp_batch.h"

/* IBA MAD status, bits 2-4: 3 = method/attribute combination not supported,
 * 7 = invalid attribute or modifier. */
#define MAD_STATUS_CODE(s) (((s) >> 2) & 0x7)

struct item_ref {
	struct smp_batch *batch;
	size_t i;
};

struct smp_batch *smp_batch_new(struct cache_group *g, size_t count, smp_build_fn build)
{
	struct smp_batch *b = calloc(1, sizeof(*b) + count * sizeof(struct smp_item));

	if (!b)
		return NULL;
	b->group = g;
	b->count = count;
	b->build = build;
	return b;
}

static void item_done(void *ctx, int result, const uint8_t *data, size_t len)
{
	struct item_ref *ref = ctx;
	struct smp_batch *b = ref->batch;
	struct smp_item *it = &b->items[ref->i];

	free(ref);
	it->result = result;
	if (result == MAD_OK && data)
		memcpy(it->data, data, len < sizeof(it->data) ? len : sizeof(it->data));
	if (--b->pending == 0)
		b->build(b);
}

void smp_batch_run(struct smp_batch *b, const ib_portid_t *path)
{
	b->pending = b->count + 1; /* held until every item is queued */
	for (size_t i = 0; i < b->count; i++) {
		struct item_ref *ref = malloc(sizeof(*ref));

		if (!ref) {
			b->items[i].result = MAD_SEND_FAILED;
			b->pending--;
			continue;
		}
		ref->batch = b;
		ref->i = i;
		if (mad_engine_smp_get(path, b->items[i].attr_id, b->items[i].attr_mod, item_done,
				       ref)) {
			free(ref);
			b->items[i].result = MAD_SEND_FAILED;
			b->pending--;
		}
	}
	if (--b->pending == 0)
		b->build(b);
}

enum smp_batch_outcome smp_batch_outcome(const struct smp_batch *b, char *why, size_t whylen)
{
	size_t lost = 0, unsupported = 0;
	const struct smp_item *first_bad = NULL;

	for (size_t i = 0; i < b->count; i++) {
		int r = b->items[i].result;

		if (r == MAD_OK)
			continue;
		if (!first_bad)
			first_bad = &b->items[i];
		if (r > 0 && (MAD_STATUS_CODE(r) == 3 || MAD_STATUS_CODE(r) == 7))
			unsupported++;
		else
			lost++;
	}
	if (!first_bad)
		return SMP_BATCH_OK;
	if (why)
		snprintf(why, whylen, "attribute 0x%04x modifier 0x%x: %s (%zu of %zu SMPs failed)",
			 first_bad->attr_id, first_bad->attr_mod,
			 first_bad->result == MAD_TIMEOUT ? "no answer" :
			 first_bad->result > 0 ? "not supported by the node" : "cannot send",
			 lost + unsupported, b->count);
	return lost ? SMP_BATCH_LOST : SMP_BATCH_UNSUPPORTED;
}
