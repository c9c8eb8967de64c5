/* SMA-MIB handlers. Each reads one cache snapshot and never waits on the
 * fabric: ibSmaNodeInfo.N <- sma_node.node_info <- NodeInfo/NodeDescription
 * (sma_nodeinfo.c). */
#include "ibsnmpd/netsnmp.h"

#include <net-snmp/agent/agent_sysORTable.h>

#include "ibsnmpd/sma.h"

/* SMA-MIB::ibSmaMIB = infinibandMIB 3 = experimental 117 3 */
static oid sma_mib_oid[] = {1, 3, 6, 1, 3, 117, 3};
static const oid sma_node_info_oid[] = {1, 3, 6, 1, 3, 117, 3, 1, 1};

enum {
	NODE_STRING = 1,
	NODE_BASE_VERSION,
	NODE_CLASS_VERSION,
	NODE_TYPE,
	NODE_NUM_PORTS,
	SYSTEM_IMAGE_GUID,
	NODE_GUID,
	NODE_PORT_GUID,
	NODE_PARTITION_TABLE_NUM,
	NODE_DEVICE_ID,
	NODE_REVISION,
	NODE_LOCAL_PORT_NUM_OR_ZERO,
	NODE_VENDOR_ID,
	NODE_INFO_LAST_SCALAR = NODE_VENDOR_ID
};

static netsnmp_handler_registration *node_info_reg;

static void set_int(netsnmp_variable_list *vb, long v)
{
	snmp_set_var_typed_value(vb, ASN_INTEGER, &v, sizeof(v));
}

static void set_octets(netsnmp_variable_list *vb, uint64_t v, size_t n)
{
	uint8_t buf[8];

	sma_be_octets(v, buf, n);
	snmp_set_var_typed_value(vb, ASN_OCTET_STR, buf, n);
}

/* Fills vb with ibSmaNodeInfo.<column> from ni; returns 0, or -1 for an
 * object without a value. */
static int node_info_value(netsnmp_variable_list *vb, oid column, const struct sma_nodeinfo *ni)
{
	switch (column) {
	case NODE_STRING:
		/* DisplayString (SIZE(1..64)): an empty description is not valid */
		if (!ni->description[0])
			return -1;
		snmp_set_var_typed_value(vb, ASN_OCTET_STR, ni->description,
					 strlen(ni->description));
		return 0;
	case NODE_BASE_VERSION: set_int(vb, ni->base_version); return 0;
	case NODE_CLASS_VERSION: set_int(vb, ni->class_version); return 0;
	case NODE_TYPE: set_int(vb, sma_node_type_to_mib(ni->node_type)); return 0;
	case NODE_NUM_PORTS: set_int(vb, ni->num_ports); return 0;
	case SYSTEM_IMAGE_GUID: set_octets(vb, ni->system_image_guid, 8); return 0;
	case NODE_GUID: set_octets(vb, ni->node_guid, 8); return 0;
	case NODE_PORT_GUID: set_octets(vb, ni->port_guid, 8); return 0;
	case NODE_PARTITION_TABLE_NUM: set_int(vb, ni->partition_cap); return 0;
	case NODE_DEVICE_ID: set_octets(vb, ni->device_id, 2); return 0;
	case NODE_REVISION: set_octets(vb, ni->revision, 4); return 0;
	case NODE_LOCAL_PORT_NUM_OR_ZERO: set_int(vb, ni->local_port); return 0;
	case NODE_VENDOR_ID: set_octets(vb, ni->vendor_id, 3); return 0;
	default: return -1;
	}
}

static int handle_node_info(netsnmp_mib_handler *handler, netsnmp_handler_registration *reg,
			    netsnmp_agent_request_info *reqinfo, netsnmp_request_info *requests)
{
	struct sma_node *node = handler->myvoid;
	const struct sma_nodeinfo *ni = cache_snapshot(&node->node_info);

	(void)reg;
	if (reqinfo->mode != MODE_GET)
		return SNMP_ERR_NOERROR;
	for (netsnmp_request_info *r = requests; r; r = r->next) {
		netsnmp_variable_list *vb = r->requestvb;
		oid column = vb->name[OID_LENGTH(sma_node_info_oid)];

		if (r->processed)
			continue;
		if (!ni || node_info_value(vb, column, ni))
			netsnmp_set_request_error(reqinfo, r, SNMP_NOSUCHINSTANCE);
	}
	return SNMP_ERR_NOERROR;
}

int sma_mib_register(struct sma_node *node)
{
	netsnmp_mib_handler *h;

	h = netsnmp_create_handler("ibSmaNodeInfo", handle_node_info);
	if (!h)
		return -1;
	h->myvoid = node;
	node_info_reg = netsnmp_handler_registration_create("ibSmaNodeInfo", h, sma_node_info_oid,
							    OID_LENGTH(sma_node_info_oid),
							    HANDLER_CAN_RONLY);
	if (!node_info_reg ||
	    netsnmp_register_scalar_group(node_info_reg, NODE_STRING, NODE_INFO_LAST_SCALAR) !=
		    MIB_REGISTERED_OK) {
		snmp_log(LOG_ERR, "cannot register ibSmaNodeInfo\n");
		return -1;
	}
	register_sysORTable(sma_mib_oid, OID_LENGTH(sma_mib_oid),
			    "SMA-MIB: InfiniBand Subnet Management Agent, served by ibsnmpd");
	return 0;
}

void sma_mib_unregister(void)
{
	if (node_info_reg) {
		netsnmp_unregister_handler(node_info_reg);
		node_info_reg = NULL;
	}
	unregister_sysORTable(sma_mib_oid, OID_LENGTH(sma_mib_oid));
}
