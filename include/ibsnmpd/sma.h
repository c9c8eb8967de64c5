/* SMA-MIB (seed 000): decoded SMP attributes and the MIB glue. */
#ifndef IBSNMPD_SMA_H
#define IBSNMPD_SMA_H

#include <stddef.h>
#include <stdint.h>
#include <infiniband/mad.h>

#include "ibsnmpd/cache.h"

/* NodeInfo (IBA 14.2.5.3) plus NodeDescription (14.2.5.2). */
struct sma_nodeinfo {
	char description[65];   /* NodeString, NULs and trailing blanks removed */
	unsigned base_version;
	unsigned class_version;
	unsigned node_type;     /* 1 CA, 2 switch, 3 router */
	unsigned num_ports;
	uint64_t system_image_guid;
	uint64_t node_guid;
	uint64_t port_guid;
	unsigned partition_cap;
	unsigned device_id;
	uint32_t revision;
	unsigned local_port;
	uint32_t vendor_id;     /* 24 bits */
};

/* Decoders: pure functions over the SMP attribute data (64 octets). */
int sma_nodeinfo_decode(const uint8_t *data, size_t len, struct sma_nodeinfo *out);
int sma_nodedesc_decode(const uint8_t *data, size_t len, char *out, size_t outlen);

/* ibSmaNodeType from NodeInfo's NodeType (reserved values: other(4)). */
int sma_node_type_to_mib(unsigned node_type);
/* Big-endian octets of a value, as the MIB's fixed-size OCTET STRINGs want. */
void sma_be_octets(uint64_t v, uint8_t *out, size_t n);

/* The node whose SMA ibsnmpd serves: a path and its cache groups. */
struct sma_node {
	ib_portid_t path;
	struct cache_group node_info; /* snapshot: struct sma_nodeinfo */
};

void sma_node_init(struct sma_node *node, const ib_portid_t *path);
void sma_node_start(struct sma_node *node);
void sma_node_stop(struct sma_node *node);
void sma_node_apply_config(struct sma_node *node);

/* Registers SMA-MIB's groups and its sysORTable entry. */
int sma_mib_register(struct sma_node *node);
void sma_mib_unregister(void);

#endif
