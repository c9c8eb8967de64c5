/* The SM's view from its SA (src/topology/sa_view.c, pure): a GetTable
 * answer put together from its RMPP segments, and NodeRecords,
 * PortInfoRecords and LinkRecords printed as the discovery helper prints
 * what libibnetdisc found (topology.h). */
#ifndef IBSNMPD_SA_VIEW_H
#define IBSNMPD_SA_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define SA_TABLE_MAX (256u << 20) /* a 40,000-host fabric's PortInfoRecords: some 12 MiB */

/* One GetTable answer as it comes in. */
struct sa_table {
	unsigned attr;            /* the attribute asked */
	unsigned record_size;     /* AttributeOffset x 8 */
	unsigned next_segment;
	uint8_t *data;            /* the records, one after the other */
	size_t len, cap;
};

void sa_table_init(struct sa_table *t, unsigned attr);
void sa_table_free(struct sa_table *t);
/* Takes one MAD of the answer (len octets: put together by the kernel, or a
 * segment): 1 the table is whole, 0 more segments to come, -1 malformed or
 * refused (err says why; the table is of no use then). */
int sa_table_take(struct sa_table *t, const uint8_t *mad, size_t len, char *err, size_t errlen);
/* Its whole records of at least min_size octets (0 if its records are shorter). */
size_t sa_table_records(const struct sa_table *t, size_t min_size);
/* The view as the helper's lines ("source sa", then node, ident, route,
 * port and pinfo lines; no "done"), routes from the node whose port has
 * local_lid (its LID, not its GUID: libumad2sim's sysfs makes up port
 * GUIDs). 0, or -1 and why (nothing printed: it checks first). */
int sa_view_print(FILE *out, const struct sa_table *nr, const struct sa_table *pir,
		  const struct sa_table *lr, unsigned local_lid, char *err, size_t errlen);

#endif
