/* What a received MAD must be to answer a request, and where a class keeps
 * its attribute data. Pure (libibmad's field descriptors, no I/O): the unit
 * tests and the fuzz targets call it directly. */
#include <stdint.h>

#include <infiniband/mad.h>

#include "ibsnmpd/mad_engine.h"

size_t mad_class_data_size(int mgmt_class)
{
	if (mgmt_class == IB_SMI_CLASS || mgmt_class == IB_SMI_DIRECT_CLASS)
		return IB_SMP_DATA_SIZE;
	if (mad_is_vendor_range1(mgmt_class))
		return IB_VENDOR_RANGE1_DATA_SIZE;
	return mgmt_class == IB_SA_CLASS ? IB_SA_DATA_SIZE : IB_PC_DATA_SZ;
}

size_t mad_class_data_offset(int mgmt_class)
{
	if (mad_is_vendor_range1(mgmt_class))
		return IB_VENDOR_RANGE1_DATA_OFFS; /* a vendor's class: all after the header */
	return mgmt_class == IB_SA_CLASS ? IB_SA_DATA_OFFS : IB_SMP_DATA_OFFS;
}

int mad_check_response(const uint8_t *mad, size_t len, int mgmt_class, unsigned attr_id,
		       unsigned attr_mod, uint32_t tid_low)
{
	uint8_t *m = (uint8_t *)mad; /* libibmad's getters take non-const */

	/* SA answers carry only their attribute (opensm sends 56 + 36 octets for
	 * InformInfo); what is missing reads as zeros. Other classes: whole. */
	if (len < mad_class_data_offset(mgmt_class) +
			  (mgmt_class == IB_SA_CLASS ? 0 : mad_class_data_size(mgmt_class)))
		return MAD_MALFORMED;
	if ((int)mad_get_field(m, 0, IB_MAD_MGMTCLASS_F) != mgmt_class ||
	    !mad_get_field(m, 0, IB_MAD_RESPONSE_F) ||
	    mad_get_field(m, 0, IB_MAD_ATTRID_F) != attr_id ||
	    mad_get_field(m, 0, IB_MAD_ATTRMOD_F) != attr_mod ||
	    (uint32_t)mad_get_field64(m, 0, IB_MAD_TRID_F) != tid_low)
		return MAD_MALFORMED;
	if (mgmt_class == IB_SMI_DIRECT_CLASS)
		return (int)mad_get_field(m, 0, IB_DRSMP_STATUS_F);
	return (int)mad_get_field(m, 0, IB_MAD_STATUS_F);
}
