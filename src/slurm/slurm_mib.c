/* IBSNMPD-MIB::ibsnmpdSlurm: the tree of Slurm's topology.conf as last
 * built, from the area's snapshot (slurm_internal.h). Read-only. */
#include "ibsnmpd/netsnmp.h"

#include <string.h>

#include "ibsnmpd/mib_oids.h"
#include "ibsnmpd/mib_table.h"

#include "slurm_internal.h"

static const oid slurm_oid[] = {OID_IBSNMPD_SLURM};
static const oid switches_oid[] = {OID_IBSNMPD_SLURM_SWITCH_TABLE};
static const oid members_oid[] = {OID_IBSNMPD_SLURM_MEMBER_TABLE};

static unsigned long capped(size_t n)
{
	return n > 0xffffffffu ? 0xffffffffu : (unsigned long)n;
}

/* The scalars read the area (the path, the writes) and its snapshot. */
static const void *area_of(const void *ctx)
{
	return ctx;
}

static int scalar_value(unsigned column, netsnmp_variable_list *vb, const void *ctx)
{
	const struct slurm_area *a = ctx;
	const struct slurm_snapshot *s = cache_snapshot(&a->group);
	const char *path = slurm_topology_path();

	switch (column) {
	case SCALAR_IBSNMPD_SLURM_TOPOLOGY_FILE: mib_set_octets(vb, path, strlen(path)); return 0;
	case SCALAR_IBSNMPD_SLURM_HOSTS:
		mib_set_unsigned(vb, ASN_GAUGE, s ? capped(s->tree->hosts) : 0);
		return 0;
	case SCALAR_IBSNMPD_SLURM_HOSTS_LEFT_OUT:
		mib_set_unsigned(vb, ASN_GAUGE,
				 s ? capped(s->hosts_unknown + s->tree->hosts_bad_name +
					    s->tree->hosts_uncabled)
				   : 0);
		return 0;
	case SCALAR_IBSNMPD_SLURM_WRITES:
		mib_set_unsigned(vb, ASN_COUNTER, a->writes & 0xffffffffu);
		return 0;
	default: return -1;
	}
}

static unsigned switch_index(const void *data, oid *index)
{
	index[0] = ((const struct slurm_switch_row *)data)->index;
	return 1;
}

static unsigned member_index(const void *data, oid *index)
{
	const struct slurm_member_row *m = data;

	index[0] = m->sw;
	index[1] = m->member;
	return 2;
}

static const struct mib_rows *rows_of(const void *ctx, const void **snap, bool members)
{
	struct slurm_area *a = (struct slurm_area *)ctx;
	const struct slurm_snapshot *s = cache_snapshot(&a->group);

	*snap = s;
	if (!s)
		return NULL;
	if (members)
		a->mib.rows = (struct mib_rows){.count = s->tree->n_members, .array = s->member_rows,
						.stride = sizeof(*s->member_rows),
						.index_of = member_index};
	else
		a->mib.rows = (struct mib_rows){.count = s->tree->n_switches, .array = s->switch_rows,
						.stride = sizeof(*s->switch_rows),
						.index_of = switch_index};
	return &a->mib.rows;
}

static const struct mib_rows *switch_rows(const void *ctx, const void **snap)
{
	return rows_of(ctx, snap, false);
}

static const struct mib_rows *member_rows(const void *ctx, const void **snap)
{
	return rows_of(ctx, snap, true);
}

static int switch_value(const void *row, unsigned column, netsnmp_variable_list *vb,
			const void *snap)
{
	const struct slurm_switch *sw = ((const struct slurm_switch_row *)row)->sw;
	uint8_t guid[8];

	(void)snap;
	switch (column) {
	case COLUMN_IBSNMPD_SLURM_SWITCH_NAME: mib_set_octets(vb, sw->name, strlen(sw->name)); return 0;
	case COLUMN_IBSNMPD_SLURM_SWITCH_LEVEL: mib_set_unsigned(vb, ASN_UNSIGNED, sw->level); return 0;
	case COLUMN_IBSNMPD_SLURM_SWITCH_GUID:
		for (int i = 0; i < 8; i++)
			guid[i] = (uint8_t)(sw->guid >> (56 - 8 * i));
		mib_set_octets(vb, guid, sw->guid ? sizeof(guid) : 0);
		return 0;
	case COLUMN_IBSNMPD_SLURM_SWITCH_MEMBERS: mib_set_unsigned(vb, ASN_GAUGE, capped(sw->n)); return 0;
	default: return -1;
	}
}

static int member_value(const void *row, unsigned column, netsnmp_variable_list *vb,
			const void *snap)
{
	const char *name = ((const struct slurm_member_row *)row)->name;

	(void)snap;
	if (column != COLUMN_IBSNMPD_SLURM_MEMBER_NAME)
		return -1;
	mib_set_octets(vb, name, strlen(name));
	return 0;
}

int slurm_mib_register(struct slurm_area *a)
{
	struct slurm_mib *m = &a->mib;

	m->scalars = (struct mib_scalars){
		.name = "ibsnmpdSlurm", .group_oid = slurm_oid, .group_oid_len = OID_LENGTH(slurm_oid),
		.first = SCALAR_IBSNMPD_SLURM_TOPOLOGY_FILE, .last = SCALAR_IBSNMPD_SLURM_WRITES,
		.snapshot = area_of, .value = scalar_value, .ctx = a,
		.one_by_one = true, /* the tables are inside */
	};
	m->switches = (struct mib_table){
		.name = "ibsnmpdSlurmSwitchTable", .table_oid = switches_oid,
		.table_oid_len = OID_LENGTH(switches_oid),
		.first_column = COLUMN_IBSNMPD_SLURM_SWITCH_NAME,
		.last_column = COLUMN_IBSNMPD_SLURM_SWITCH_MEMBERS, .rows = switch_rows,
		.value = switch_value, .ctx = a,
	};
	m->members = (struct mib_table){
		.name = "ibsnmpdSlurmMemberTable", .table_oid = members_oid,
		.table_oid_len = OID_LENGTH(members_oid),
		.first_column = COLUMN_IBSNMPD_SLURM_MEMBER_NAME,
		.last_column = COLUMN_IBSNMPD_SLURM_MEMBER_NAME, .rows = member_rows,
		.value = member_value, .ctx = a,
	};
	if (mib_scalars_register(&m->scalars))
		return -1;
	if (mib_table_register(&m->switches) || mib_table_register(&m->members)) {
		slurm_mib_unregister(a);
		return -1;
	}
	return 0;
}

void slurm_mib_unregister(struct slurm_area *a)
{
	struct slurm_mib *m = &a->mib;

	if (m->members.reg)
		mib_table_unregister(&m->members);
	if (m->switches.reg)
		mib_table_unregister(&m->switches);
	mib_scalars_unregister(&m->scalars);
}
