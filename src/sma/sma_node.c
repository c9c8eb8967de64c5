/* Collects the SMA attributes of one node (reached by a path) into cache
 * snapshots. One refresh sends its SMPs at once; the engine pipelines them. */
#include "ibsnmpd/netsnmp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/config.h"
#include "ibsnmpd/mad_engine.h"
#include "ibsnmpd/sma.h"

/* One NodeInfo refresh in progress: two SMPs, one snapshot. */
struct node_info_refresh {
	struct cache_group *group;
	struct sma_nodeinfo fresh;
	unsigned pending;
	char failure[96];
};

static void node_info_step_done(struct node_info_refresh *r)
{
	if (--r->pending)
		return;
	if (r->failure[0]) {
		cache_refresh_done(r->group, NULL, r->failure);
	} else {
		struct sma_nodeinfo *snap = malloc(sizeof(*snap));

		if (snap)
			*snap = r->fresh;
		cache_refresh_done(r->group, snap, snap ? NULL : "out of memory");
	}
	free(r);
}

static void note_failure(struct node_info_refresh *r, const char *attr, int result)
{
	if (r->failure[0])
		return;
	if (result == MAD_TIMEOUT)
		snprintf(r->failure, sizeof(r->failure), "%s: no answer", attr);
	else if (result < 0)
		snprintf(r->failure, sizeof(r->failure), "%s: cannot send", attr);
	else
		snprintf(r->failure, sizeof(r->failure), "%s: MAD status 0x%04x", attr, result);
}

static void got_node_desc(void *ctx, int result, const uint8_t *data, size_t len)
{
	struct node_info_refresh *r = ctx;

	if (result != MAD_OK ||
	    sma_nodedesc_decode(data, len, r->fresh.description, sizeof(r->fresh.description)))
		note_failure(r, "NodeDescription", result == MAD_OK ? MAD_MALFORMED : result);
	node_info_step_done(r);
}

static void got_node_info(void *ctx, int result, const uint8_t *data, size_t len)
{
	struct node_info_refresh *r = ctx;
	char desc[sizeof(r->fresh.description)];

	memcpy(desc, r->fresh.description, sizeof(desc)); /* the other SMP may be first */
	if (result != MAD_OK || sma_nodeinfo_decode(data, len, &r->fresh))
		note_failure(r, "NodeInfo", result == MAD_OK ? MAD_MALFORMED : result);
	memcpy(r->fresh.description, desc, sizeof(desc));
	node_info_step_done(r);
}

static void refresh_node_info(struct cache_group *g)
{
	struct sma_node *node = g->owner;
	struct node_info_refresh *r = calloc(1, sizeof(*r));

	if (!r) {
		cache_refresh_done(g, NULL, "out of memory");
		return;
	}
	r->group = g;
	r->pending = 2;
	if (mad_engine_smp_get(&node->path, IB_ATTR_NODE_DESC, 0, got_node_desc, r))
		got_node_desc(r, MAD_SEND_FAILED, NULL, 0);
	if (mad_engine_smp_get(&node->path, IB_ATTR_NODE_INFO, 0, got_node_info, r))
		got_node_info(r, MAD_SEND_FAILED, NULL, 0);
}

void sma_node_init(struct sma_node *node, const ib_portid_t *path)
{
	memset(node, 0, sizeof(*node));
	node->path = *path;
	node->node_info.name = "SMA node info";
	node->node_info.refresh = refresh_node_info;
	node->node_info.free_snapshot = free;
	node->node_info.owner = node;
	sma_node_apply_config(node);
}

void sma_node_apply_config(struct sma_node *node)
{
	cache_group_set_lifetime(&node->node_info, ibsnmpd_cfg.cache_lifetime_s[CACHE_NODE_INFO]);
}

void sma_node_start(struct sma_node *node)
{
	cache_group_start(&node->node_info);
}

void sma_node_stop(struct sma_node *node)
{
	cache_group_stop(&node->node_info);
}
