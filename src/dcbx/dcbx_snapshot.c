/* The DCBX snapshot: the ports of one poll cycle and LLDP-EXT-DCBX-MIB's
 * rows over them, built whole before the backend publishes it. Port
 * numbers are ifIndex values (the MIB's rule for a system that is not a
 * bridge). */
#include <stdlib.h>

#include "dcbx_internal.h"

static void add_row(struct dcbx_snapshot *s, int t, const struct dcbx_port *p, unsigned a,
		    unsigned b, int n_index)
{
	size_t i = s->rows[t].count++;
	struct mib_row *r = &s->rows[t].rows[i];

	s->row_data[t][i] = (struct dcbx_row){.p = p, .a = a, .b = b};
	r->index[0] = p->ifindex;
	r->index[1] = a;
	r->index[2] = b;
	r->index_len = (unsigned)n_index;
	r->data = &s->row_data[t][i];
}

void dcbx_snapshot_free(struct dcbx_snapshot *s)
{
	if (!s)
		return;
	for (int t = 0; t < DCBX_T_COUNT; t++) {
		free(s->rows[t].rows);
		free(s->row_data[t]);
	}
	free(s->ports);
	free(s);
}

/* The tables' rows, built before the snapshot is published. */
static int index_rows(struct dcbx_snapshot *s)
{
	size_t cap = 1;

	for (size_t i = 0; i < s->n; i++)
		cap += DCBX_PRIOS * (1 + s->ports[i].n_apps); /* the most rows any table has */
	for (int t = 0; t < DCBX_T_COUNT; t++) {
		s->rows[t].rows = calloc(cap, sizeof(struct mib_row));
		s->row_data[t] = calloc(cap, sizeof(struct dcbx_row));
		if (!s->rows[t].rows || !s->row_data[t])
			return -1;
	}
	for (size_t i = 0; i < s->n; i++) {
		const struct dcbx_port *p = &s->ports[i];

		if (p->ifindex < 1 || p->ifindex > 4096)
			continue; /* LldpPortNumber: 1..4096 */
		add_row(s, DCBX_T_PORT, p, 0, 0, 1);
		for (unsigned f = DCBX_FEAT_FIRST; f <= DCBX_FEAT_LAST; f++)
			if (p->have_feat_of[f - DCBX_FEAT_FIRST])
				add_row(s, DCBX_T_FEAT, p, f, 0, 3); /* subtype 0 */
		for (unsigned k = 0; k < DCBX_PRIOS; k++) {
			if (p->have_pg || p->have_peer_pg) {
				add_row(s, DCBX_T_PRIO, p, k, 0, 2);
				add_row(s, DCBX_T_BW, p, k, 0, 2);
			}
			if (p->have_pfc || p->have_peer_pfc)
				add_row(s, DCBX_T_PFC, p, k, 0, 2);
		}
		for (unsigned k = 0; k < p->n_apps; k++) {
			add_row(s, DCBX_T_APP, p, k, 0, 2);
			for (unsigned q = 0; q < DCBX_PRIOS; q++)
				add_row(s, DCBX_T_APP_PRIO, p, k, q, 3);
		}
	}
	for (int t = 0; t < DCBX_T_COUNT; t++)
		mib_rows_sort(&s->rows[t]);
	return 0;
}

static int by_ifindex(const void *a, const void *b)
{
	const struct dcbx_port *x = a, *y = b;

	return x->ifindex < y->ifindex ? -1 : x->ifindex > y->ifindex;
}

struct dcbx_snapshot *dcbx_snapshot_new(struct dcbx_port *ports, size_t n)
{
	struct dcbx_snapshot *s = calloc(1, sizeof(*s));

	if (!s) {
		free(ports);
		return NULL;
	}
	s->n = n;
	s->ports = ports;
	if (n)
		qsort(s->ports, n, sizeof(*s->ports), by_ifindex);
	if (index_rows(s)) {
		dcbx_snapshot_free(s);
		return NULL;
	}
	return s;
}

const struct dcbx_port *dcbx_snapshot_port(const struct dcbx_snapshot *s, unsigned ifindex)
{
	return s ? dcbx_port_find(s->ports, s->n, ifindex) : NULL;
}
