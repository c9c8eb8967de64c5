/* A batch of SubnGet SMPs to one node, all in flight at once (up to the
 * engine's limit); when the last answer is in, build() turns the raw
 * attribute blocks into a snapshot. */
#ifndef IBSNMPD_SMP_BATCH_H
#define IBSNMPD_SMP_BATCH_H

#include <stddef.h>
#include <stdint.h>
#include <infiniband/mad.h>

#include "ibsnmpd/cache.h"

struct smp_item {
	unsigned attr_id, attr_mod;
	unsigned key[3];      /* what the builder needs to place the block */
	int result;           /* enum mad_result or MAD status */
	uint8_t data[IB_SMP_DATA_SIZE];
};

struct smp_batch;
/* Builds the snapshot from the answered items and ends the refresh with
 * cache_refresh_done(). */
typedef void (*smp_build_fn)(struct smp_batch *b);

struct smp_batch {
	struct cache_group *group;
	size_t count, pending;
	smp_build_fn build;
	const void *arg; /* e.g. the prerequisite snapshots the plan used */
	struct smp_item items[];
};

struct smp_batch *smp_batch_new(struct cache_group *g, size_t count, smp_build_fn build);
/* Sends every item to path; build() runs when all are answered or failed.
 * An empty batch builds at once. */
void smp_batch_run(struct smp_batch *b, const ib_portid_t *path);

/* How a batch went, for the builder. */
enum smp_batch_outcome {
	SMP_BATCH_OK,          /* every item answered */
	SMP_BATCH_UNSUPPORTED, /* the node said the attribute is not supported */
	SMP_BATCH_LOST,        /* some items got no answer, or failed otherwise */
};
enum smp_batch_outcome smp_batch_outcome(const struct smp_batch *b, char *why, size_t whylen);

#endif
