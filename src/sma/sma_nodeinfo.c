/* NodeInfo and NodeDescription decoders (SMA-MIB Node Info group).
 * Field layouts come from libibmad's IB_NODE_* descriptors. */
#include <string.h>

#include "ibsnmpd/sma_attr.h"

int sma_nodeinfo_decode(const uint8_t *data, size_t len, struct sma_nodeinfo *out)
{
	uint8_t buf[IB_SMP_DATA_SIZE];
	uint32_t v32;

	/* NodeInfo is 40 octets; libibmad's getters want a full buffer. */
	if (!data || len < 40)
		return -1;
	memset(buf, 0, sizeof(buf));
	memcpy(buf, data, len < sizeof(buf) ? len : sizeof(buf));
	memset(out, 0, sizeof(*out));
	out->base_version = mad_get_field(buf, 0, IB_NODE_BASE_VERS_F);
	out->class_version = mad_get_field(buf, 0, IB_NODE_CLASS_VERS_F);
	out->node_type = mad_get_field(buf, 0, IB_NODE_TYPE_F);
	out->num_ports = mad_get_field(buf, 0, IB_NODE_NPORTS_F);
	out->system_image_guid = mad_get_field64(buf, 0, IB_NODE_SYSTEM_GUID_F);
	out->node_guid = mad_get_field64(buf, 0, IB_NODE_GUID_F);
	out->port_guid = mad_get_field64(buf, 0, IB_NODE_PORT_GUID_F);
	out->partition_cap = mad_get_field(buf, 0, IB_NODE_PARTITION_CAP_F);
	out->device_id = mad_get_field(buf, 0, IB_NODE_DEVID_F);
	mad_decode_field(buf, IB_NODE_REVISION_F, &v32);
	out->revision = v32;
	out->local_port = mad_get_field(buf, 0, IB_NODE_LOCAL_PORT_F);
	out->vendor_id = mad_get_field(buf, 0, IB_NODE_VENDORID_F);
	return 0;
}

int sma_nodedesc_decode(const uint8_t *data, size_t len, char *out, size_t outlen)
{
	size_t n = 0;

	if (!data || !out || outlen == 0)
		return -1;
	/* NodeString is 64 octets of UTF-8, NUL-padded (not NUL-terminated
	 * when all 64 are used). */
	while (n < len && n < 64 && n + 1 < outlen && data[n])
		n++;
	memcpy(out, data, n);
	while (n > 0 && (out[n - 1] == ' ' || out[n - 1] == '\t'))
		n--;
	out[n] = '\0';
	return 0;
}

int sma_node_type_to_mib(unsigned node_type)
{
	return node_type >= 1 && node_type <= 3 ? (int)node_type : 4;
}
