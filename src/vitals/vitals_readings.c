/* The vitals' readings (vitals_internal.h): every inventoried node read
 * every vitalsSensors, pipelined as the inventory is, but for one whose
 * last readings went unanswered: it keeps its rows, stale, and is tried
 * again a minute later or after the next discovery (a dead switch costs a
 * try a minute, not one a sweep). After a topology patch, only what it named:
 * the nodes new or back, read whole, and the module of each switch port
 * whose link changed (MGIR, its PMAOS and PDDR); the other nodes keep
 * their rows until the periodic sweep. What a sweep read becomes a
 * snapshot (vitals_build.c); and the two groups' life. */
#include "ibsnmpd/netsnmp.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ibsnmpd/mad_engine.h"
#include "ibsnmpd/vitals.h"

#include "vitals_internal.h"

/* ---- the readings ------------------------------------------------------------------ */

struct rd_sweep {
	struct vitals_area *a;
	const struct vitals_inventory *inv; /* held */
	const struct vitals_snapshot *prev; /* the group's: replaced only when this ends */
	struct vitals_reading *readings;    /* one per node read */
	size_t n_readings;
	size_t next, pending;
	time_t now;
	struct mad_feeder feeder;
	/* a partial sweep (what patches named): the nodes read whole and the
	 * switch ports whose module is read, both sorted; not partial: every
	 * node */
	bool partial;
	uint64_t *whole;
	size_t n_whole;
	struct topo_port_ref *modules;
	size_t n_modules;
};

/* The readings of one node; its arrays become the reading's */
struct rd_job {
	struct rd_sweep *sw;
	struct vitals_reading *r;
	const struct vitals_inv_node *n;
	const struct vitals_port_map *ports; /* the node's, in the inventory */
	unsigned outstanding;
	/* lanes: 4 a port, lane_count[p - 1] of them read */
	uint8_t *lane_count;
	/* the EEPROM of a module read by MCIA (PDDR missing): pages as read */
	uint8_t (*eeprom)[256];
	/* modules a read of went unanswered (PMAOS, PDDR, MCIA) */
	uint64_t unanswered[(VITALS_MODULES_MAX + 63) / 64];
};

struct rd_read {
	struct rd_job *job;
	enum vitals_reg_bit reg;
	unsigned index;            /* the sensor, tacho, module or port */
	unsigned part;             /* MCIA: which read of the module */
};

#define LANES_PER_PORT 4

static void rd_sweep_done_one(struct rd_sweep *sw);
static bool booted_since_inventory(const struct vitals_node *n, time_t now);
static void rd_read(struct rd_job *job, enum vitals_reg_bit reg, unsigned reg_id,
		    const uint8_t *req, size_t req_len, unsigned index, unsigned part);

static bool copy_old_modules(struct rd_job *job, const uint64_t *modules, bool in_set);

static bool any_bit(const uint64_t *set, size_t words)
{
	for (size_t i = 0; i < words; i++)
		if (set[i])
			return true;
	return false;
}

static void rd_job_done(struct rd_job *job)
{
	struct vitals_reading *r = job->r;
	size_t n = 0;

	if (--job->outstanding)
		return;
	/* a module whose read went unanswered is as it was, stale: a lost MAD
	 * is no module pulled out (its entities would go and come back) */
	if (any_bit(job->unanswered, sizeof(job->unanswered) / sizeof(job->unanswered[0])))
		copy_old_modules(job, job->unanswered, true);
	/* the lanes read, in (port, lane) order */
	for (unsigned p = 1; p <= job->n->num_ports; p++)
		for (unsigned l = 0; l < job->lane_count[p - 1]; l++)
			r->lanes[n++] = r->lanes[(p - 1) * LANES_PER_PORT + l];
	r->n_lanes = n;
	free(job->lane_count);
	free(job->eeprom);
	rd_sweep_done_one(job->sw);
	free(job);
}

static struct vitals_module *module_row(struct rd_job *job, unsigned module)
{
	return module < job->r->n_modules ? &job->r->modules[module] : NULL;
}

/* the MCIA reads of a module without PDDR: the lower page, upper page 00h,
 * the thresholds' page, and (CMIS) the lanes' page 11h */
enum { EEPROM_LOWER, EEPROM_PAGE0, EEPROM_THRESHOLDS, EEPROM_LANES, EEPROM_READS };

static void eeprom_read(struct rd_job *job, unsigned module, unsigned part)
{
	uint8_t req[148];
	bool cmis;

	/* the pages read, kept until the job ends: made when first needed */
	if (!job->eeprom && !(job->eeprom = calloc(job->r->n_modules + 1, sizeof(*job->eeprom))))
		return;
	if (module >= job->r->n_modules)
		return;
	cmis = vitals_eeprom_is_cmis(job->eeprom[module][0]);

	switch (part) {
	case EEPROM_LOWER: vitals_mcia_request(req, module, 0, 0, 128); break;
	case EEPROM_PAGE0: vitals_mcia_request(req, module, 0, 128, 128); break;
	case EEPROM_THRESHOLDS: vitals_mcia_request(req, module, cmis ? 0x02 : 0x03, 128, 72); break;
	default: vitals_mcia_request(req, module, 0x11, 154, 48); break;
	}
	rd_read(job, VITALS_R_MCIA, VITALS_REG_MCIA, req, sizeof(req), module, part);
}

static void port_lanes(struct rd_job *job, unsigned port, unsigned module,
		       const struct vitals_module_info *info);

/* The lanes of every port of a module, from its monitors */
static void module_port_lanes(struct rd_job *job, const struct vitals_module *m)
{
	for (unsigned p = m->first_port; p < m->first_port + m->n_ports; p++)
		if (job->ports[p - 1].module == m->module)
			port_lanes(job, p, m->module, &m->info);
}

/* A module's EEPROM part answered: the next, or the module's info */
static void got_eeprom(struct rd_job *job, unsigned module, unsigned part, const uint8_t *reg,
		       size_t len)
{
	struct vitals_module *m = module_row(job, module);
	unsigned status, offset = part == EEPROM_LOWER ? 0 : part == EEPROM_LANES ? 154 : 128;
	const uint8_t *data;
	uint8_t *e;
	size_t n;

	if (!m || !job->eeprom || vitals_mcia_decode(reg, len, &status, &data, &n) || status ||
	    offset + n > 256)
		return; /* no module there, or not readable: stays without info */
	e = job->eeprom[module];
	memcpy(e + offset, data, n);
	if (part == EEPROM_LOWER) {
		eeprom_read(job, module, EEPROM_PAGE0);
	} else if (part == EEPROM_PAGE0) {
		if (vitals_eeprom_decode(e, &m->info))
			return;
		m->have_info = m->from_eeprom = true;
		if (!m->info.have_temp)
			return; /* passive copper: no monitors, no thresholds */
		if (!vitals_eeprom_is_cmis(e[0]))
			module_port_lanes(job, m); /* SFF-8636: the lower page has them */
		eeprom_read(job, module, EEPROM_THRESHOLDS);
	} else if (part == EEPROM_THRESHOLDS) {
		vitals_eeprom_thresholds(e, vitals_eeprom_is_cmis(e[0]), &m->info);
		if (vitals_eeprom_is_cmis(e[0]))
			eeprom_read(job, module, EEPROM_LANES);
	} else {
		vitals_eeprom_cmis_lanes(e, m->n_ports * LANES_PER_PORT, &m->info);
		module_port_lanes(job, m);
	}
}

/* A port's lanes from its module's (PDDR's and the EEPROM's are the
 * module's): PMLP's first lane and width */
static void port_lanes(struct rd_job *job, unsigned port, unsigned module,
		       const struct vitals_module_info *info)
{
	struct vitals_lane *lanes = &job->r->lanes[(port - 1) * LANES_PER_PORT];
	unsigned first = job->ports[port - 1].first_lane, n = job->ports[port - 1].width;

	if (!info->have_power)
		n = 0;
	if (n > LANES_PER_PORT)
		n = LANES_PER_PORT;
	for (unsigned l = 0; l < n && first + l < info->lanes && first + l < VITALS_LANES_MAX; l++)
		lanes[l] = (struct vitals_lane){
			.guid = job->n->guid, .port = (uint16_t)port, .lane = (uint8_t)(l + 1),
			.module = (uint16_t)module, .rx_uw = info->rx_uw[first + l],
			.tx_uw = info->tx_uw[first + l], .bias = info->bias[first + l]};
	job->lane_count[port - 1] = (uint8_t)n;
}

/* A module's state: its ports' PDDR (or its EEPROM) if it is in */
static void got_pmaos(struct rd_job *job, unsigned module, const uint8_t *reg, size_t len)
{
	struct vitals_module *m = module_row(job, module);
	struct vitals_pmaos st;
	uint8_t req[VITALS_REG_MAX];

	if (!m || vitals_pmaos_decode(reg, len, &st) || st.module != module)
		return;
	m->oper_status = (uint8_t)st.oper_status;
	m->error_type = (uint8_t)st.error_type;
	m->stale = false;
	if (st.oper_status != VITALS_MODULE_PLUGGED && st.oper_status != VITALS_MODULE_ERROR)
		return;
	if (vitals_missing(job->n, VITALS_R_PDDR)) {
		if (!vitals_missing(job->n, VITALS_R_MCIA))
			eeprom_read(job, module, EEPROM_LOWER);
		return;
	}
	/* one PDDR a module: its lanes are the module's, every port's */
	vitals_pddr_request(req, m->first_port);
	rd_read(job, VITALS_R_PDDR, VITALS_REG_PDDR, req, VITALS_PDDR_READ, m->first_port, 0);
}

/* A module's PDDR (of its first port): its identity and monitors, its
 * ports' lanes */
static void got_pddr(struct rd_job *job, unsigned port, const uint8_t *reg, size_t len)
{
	struct vitals_module *m = module_row(job, job->ports[port - 1].module);

	if (!m || vitals_pddr_module_decode(reg, len, &m->info) || m->info.cable_type == 4) {
		if (m)
			memset(&m->info, 0, sizeof(m->info));
		return;
	}
	m->have_info = true;
	m->from_eeprom = false;
	module_port_lanes(job, m);
}

static void got_reading(void *ctx, int status, const uint8_t *reg, size_t len)
{
	struct rd_read *rd = ctx;
	struct rd_job *job = rd->job;
	struct vitals_reading *r = job->r;

	if (status < 0 && (rd->reg == VITALS_R_PMAOS || rd->reg == VITALS_R_PDDR || rd->reg == VITALS_R_MCIA)) {
		unsigned m = rd->reg == VITALS_R_PDDR
				     ? (rd->index >= 1 && rd->index <= job->n->num_ports
						? job->ports[rd->index - 1].module
						: VITALS_MODULES_MAX)
				     : rd->index;

		if (m < VITALS_MODULES_MAX)
			job->unanswered[m / 64] |= 1ull << (m % 64);
	}
	if (status == VITALS_REG_STATUS_NOT_SUPPORTED && rd->reg == VITALS_R_PDDR &&
	    !vitals_missing(job->n, VITALS_R_MCIA)) {
		/* PDDR refused since the inventory: the module's EEPROM instead */
		eeprom_read(job, job->ports[rd->index - 1].module, EEPROM_LOWER);
	} else if (status == 0) {
		switch (rd->reg) {
		case VITALS_R_MGIR: {
			struct vitals_mgir g;

			if (!vitals_mgir_decode(reg, len, &g)) {
				r->answered = true;
				r->uptime_s = g.uptime_s;
			}
			break;
		}
		case VITALS_R_MTMP:
			for (size_t i = 0; i < r->n_temps; i++) {
				struct vitals_temp *t = &r->temps[i];
				struct vitals_mtmp m;

				if (t->sensor != rd->index || vitals_mtmp_decode(reg, len, &m) ||
				    m.sensor != rd->index)
					continue;
				t->temp = m.temp;
				t->max = m.max_valid ? m.max : m.temp;
				t->threshold_hi = m.threshold_hi;
				t->threshold_lo = m.threshold_lo;
				memcpy(t->name, m.name, sizeof(t->name));
				t->stale = false;
			}
			break;
		case VITALS_R_MFSM:
			for (size_t i = 0; i < r->n_fans; i++) {
				unsigned rpm;

				if (r->fans[i].tacho == rd->index && !vitals_mfsm_decode(reg, len, &rpm)) {
					r->fans[i].rpm = (uint16_t)rpm;
					r->fans[i].stale = false;
				}
			}
			break;
		case VITALS_R_FORE: {
			uint16_t under, over;

			if (!vitals_fore_decode(reg, len, &under, &over))
				for (size_t i = 0; i < r->n_fans; i++) {
					r->fans[i].under = under >> r->fans[i].tacho & 1;
					r->fans[i].over = over >> r->fans[i].tacho & 1;
				}
			break;
		}
		case VITALS_R_PMAOS: got_pmaos(job, rd->index, reg, len); break;
		case VITALS_R_PDDR: got_pddr(job, rd->index, reg, len); break;
		case VITALS_R_MCIA: got_eeprom(job, rd->index, rd->part, reg, len); break;
		default: break;
		}
	}
	free(rd);
	rd_job_done(job);
}

static void rd_read(struct rd_job *job, enum vitals_reg_bit reg, unsigned reg_id,
		    const uint8_t *req, size_t req_len, unsigned index, unsigned part)
{
	struct rd_read *rd = calloc(1, sizeof(*rd));

	if (!rd)
		return;
	*rd = (struct rd_read){.job = job, .reg = reg, .index = index, .part = part};
	job->outstanding++;
	if (vitals_read_register(job->n->lid, job->n->by_gmp, reg_id, req, req_len, got_reading, rd)) {
		job->outstanding--;
		free(rd);
	}
}

static unsigned bits(uint64_t v)
{
	return (unsigned)__builtin_popcountll(v);
}

/* The rows a node's readings fill, from its inventory: every one stale
 * until its answer comes */
static int rd_job_rows(struct rd_job *job)
{
	const struct vitals_inv_node *n = job->n;
	struct vitals_reading *r = job->r;
	uint64_t sensors = vitals_missing(n, VITALS_R_MTMP) ? 0 : n->sensor_map;
	uint16_t tachos = vitals_missing(n, VITALS_R_MFSM) ? 0 : n->tachos;
	size_t k = 0;

	r->temps = calloc(bits(sensors) + 1, sizeof(*r->temps));
	r->fans = calloc(bits(tachos) + 1, sizeof(*r->fans));
	r->modules = calloc(n->n_modules + 1, sizeof(*r->modules));
	r->lanes = calloc((size_t)n->num_ports * LANES_PER_PORT + 1, sizeof(*r->lanes));
	job->lane_count = calloc(n->num_ports + 1, 1);
	if (!r->temps || !r->fans || !r->modules || !r->lanes || !job->lane_count)
		return -1;
	for (unsigned s = 0; s < 64; s++)
		if (sensors >> s & 1)
			r->temps[k++] = (struct vitals_temp){.guid = n->guid, .sensor = (uint16_t)s,
							     .stale = true};
	r->n_temps = k;
	k = 0;
	for (unsigned t = 0; t < VITALS_TACHOS_MAX; t++)
		if (tachos >> t & 1)
			r->fans[k++] = (struct vitals_fan){.guid = n->guid, .tacho = (uint16_t)t,
							   .stale = true};
	r->n_fans = k;
	r->n_modules = vitals_missing(n, VITALS_R_PMAOS) ? 0 : n->n_modules;
	for (unsigned m = 0; m < r->n_modules; m++) {
		struct vitals_module *row = &r->modules[m];

		*row = (struct vitals_module){.guid = n->guid, .module = (uint16_t)m,
					      .oper_status = VITALS_MODULE_UNKNOWN, .stale = true};
		/* its ports, by PMLP: the first and how many (a cage's are adjacent) */
		for (unsigned p = 1; p <= n->num_ports; p++)
			if (job->ports[p - 1].module == m) {
				if (!row->n_ports)
					row->first_port = (uint16_t)p;
				row->n_ports++;
			}
	}
	return 0;
}

static int guid_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A node whose readings went unanswered is tried again a minute later
 * (the MAD engine's longest silence), or after the next discovery: a dead
 * switch costs a try a minute, not one a sweep */
#define VITALS_SILENT_RETRY_S 60

static int silent_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct vitals_silent *)a)->guid,
		 y = ((const struct vitals_silent *)b)->guid;

	return x < y ? -1 : x > y;
}

static bool silent(const struct vitals_area *a, uint64_t guid, time_t now)
{
	struct vitals_silent key = {.guid = guid};
	const struct vitals_silent *hit =
		a->n_silent ? bsearch(&key, a->silent, a->n_silent, sizeof(key), silent_cmp) : NULL;

	return hit && now - hit->since < VITALS_SILENT_RETRY_S;
}

/* The silent nodes after a sweep: those that were and were not read (left
 * out of it), and those it read that did not answer, since now (both
 * lists in GUID order); one that answered is no longer */
static void note_silent(struct vitals_area *a, const struct vitals_reading *r, size_t n,
			time_t now)
{
	size_t unanswered = 0, i = 0, j = 0, k = 0;
	struct vitals_silent *merged;

	for (size_t x = 0; x < n; x++)
		unanswered += !r[x].answered;
	if (!(merged = malloc((a->n_silent + unanswered + 1) * sizeof(*merged))))
		return; /* they are read again: a try more, no harm */
	while (i < a->n_silent || j < n) {
		if (j == n || (i < a->n_silent && a->silent[i].guid < r[j].guid)) {
			merged[k++] = a->silent[i++]; /* not read */
			continue;
		}
		if (i < a->n_silent && a->silent[i].guid == r[j].guid)
			i++; /* read: what it did now counts */
		if (!r[j].answered)
			merged[k++] = (struct vitals_silent){r[j].guid, now};
		j++;
	}
	free(a->silent);
	a->silent = merged;
	a->n_silent = k;
}

enum want { WANT_NONE, WANT_WHOLE, WANT_MODULES };

static int ref_cmp_guid(const void *key, const void *elem)
{
	uint64_t g = *(const uint64_t *)key, e = ((const struct topo_port_ref *)elem)->guid;

	return g < e ? -1 : g > e;
}

/* What a sweep reads of node n: all of it, the modules of some ports (into
 * modules, a bitmap), or nothing */
static enum want wanted(const struct rd_sweep *sw, const struct vitals_inv_node *n,
			uint64_t *modules)
{
	const struct topo_port_ref *ref;
	const struct vitals_port_map *map = sw->inv->ports + n->first_port;
	bool any = false;

	if (!sw->partial ||
	    (sw->n_whole && bsearch(&n->guid, sw->whole, sw->n_whole, sizeof(uint64_t), guid_cmp)))
		return WANT_WHOLE;
	if (!sw->n_modules ||
	    !(ref = bsearch(&n->guid, sw->modules, sw->n_modules, sizeof(*ref), ref_cmp_guid)))
		return WANT_NONE;
	while (ref > sw->modules && ref[-1].guid == n->guid)
		ref--;
	memset(modules, 0, (VITALS_MODULES_MAX + 63) / 64 * sizeof(uint64_t));
	for (; ref < sw->modules + sw->n_modules && ref->guid == n->guid; ref++)
		if (ref->port >= 1 && ref->port <= n->num_ports && map[ref->port - 1].module < n->n_modules) {
			modules[map[ref->port - 1].module / 64] |= 1ull << (map[ref->port - 1].module % 64);
			any = true;
		}
	return any ? WANT_MODULES : WANT_NONE;
}

/* The last snapshot's rows of the node's modules in the set (in_set) or
 * out of it, and their ports' lanes; those in the set marked stale. false:
 * the node has no rows there. */
static bool copy_old_modules(struct rd_job *job, const uint64_t *modules, bool in_set)
{
	const struct vitals_snapshot *p = job->sw->prev;
	const struct vitals_node *old = vitals_find_node(p, job->n->guid);
	struct vitals_reading *r = job->r;

	if (!old || !old->read_at)
		return false;
	for (size_t i = 0; i < r->n_modules; i++) {
		unsigned m = r->modules[i].module;

		if ((m < VITALS_MODULES_MAX && modules[m / 64] >> (m % 64) & 1) != in_set)
			continue;
		for (uint32_t j = 0; j < old->n_modules; j++)
			if (p->modules[old->first_module + j].module == m) {
				r->modules[i] = p->modules[old->first_module + j];
				r->modules[i].stale |= in_set;
			}
	}
	for (uint32_t j = 0; j < old->n_lanes; j++) {
		const struct vitals_lane *l = &p->lanes[old->first_lane + j];

		if (l->port < 1 || l->port > job->n->num_ports || l->lane < 1 ||
		    l->lane > LANES_PER_PORT ||
		    (l->module < VITALS_MODULES_MAX && modules[l->module / 64] >> (l->module % 64) & 1) !=
			    in_set)
			continue;
		r->lanes[(l->port - 1) * LANES_PER_PORT + l->lane - 1] = *l;
		if (job->lane_count[l->port - 1] < l->lane)
			job->lane_count[l->port - 1] = l->lane;
	}
	return true;
}

/* A node of which only some modules are read: its other rows as the last
 * snapshot has them (stale or not), the modules' own stale until read */
static int rd_job_keep(struct rd_job *job, const uint64_t *modules)
{
	const struct vitals_node *old = vitals_find_node(job->sw->prev, job->n->guid);
	const struct vitals_snapshot *p = job->sw->prev;
	struct vitals_reading *r = job->r;

	if (!old || !old->read_at)
		return -1; /* never read: a whole reading's turn */
	for (size_t i = 0; i < r->n_temps; i++)
		for (uint32_t j = 0; j < old->n_temps; j++)
			if (p->temps[old->first_temp + j].sensor == r->temps[i].sensor)
				r->temps[i] = p->temps[old->first_temp + j];
	for (size_t i = 0; i < r->n_fans; i++)
		for (uint32_t j = 0; j < old->n_fans; j++)
			if (p->fans[old->first_fan + j].tacho == r->fans[i].tacho)
				r->fans[i] = p->fans[old->first_fan + j];
	copy_old_modules(job, modules, false);
	return 0;
}

static bool rd_feed(void *ctx)
{
	struct rd_sweep *sw = ctx;
	const struct vitals_inv_node *n;
	struct vitals_reading *r;
	struct rd_job *job;
	uint8_t req[VITALS_REG_MAX] = {0};
	uint64_t modules[(VITALS_MODULES_MAX + 63) / 64];
	enum want whole = WANT_WHOLE;

	/* left out: nodes not inventoried, silent ones (a try a minute),
	 * and ones the engine still takes for dead, whose requests would
	 * fail without a MAD: their try waits for a sweep that sends it */
	while (sw->next < sw->inv->n && (sw->inv->nodes[sw->next].status != VITALS_READ ||
					 silent(sw->a, sw->inv->nodes[sw->next].guid, sw->now) ||
					 mad_engine_lid_silent(sw->inv->nodes[sw->next].lid,
							       MAD_VENDOR_NVIDIA_CLASS) ||
					 !(whole = wanted(sw, &sw->inv->nodes[sw->next], modules))))
		sw->next++;
	if (sw->next == sw->inv->n) {
		rd_sweep_done_one(sw); /* the feeder's hold */
		return false;
	}
	n = &sw->inv->nodes[sw->next++];
	r = &sw->readings[sw->n_readings++];
	r->guid = n->guid;
	if (!(job = calloc(1, sizeof(*job))))
		return true;
	*job = (struct rd_job){.sw = sw, .r = r, .n = n, .ports = sw->inv->ports + n->first_port};
	sw->pending++;
	if (rd_job_rows(job) || (whole == WANT_MODULES && rd_job_keep(job, modules))) {
		free(job->lane_count);
		free(job->eeprom);
		free(job);
		sw->pending--;
		return true;
	}
	job->outstanding = 1; /* held while the reads are queued */
	rd_read(job, VITALS_R_MGIR, VITALS_REG_MGIR, req, 160, 0, 0);
	if (whole == WANT_MODULES) {
		for (unsigned m = 0; m < r->n_modules; m++)
			if (modules[m / 64] >> (m % 64) & 1) {
				vitals_pmaos_request(req, m);
				rd_read(job, VITALS_R_PMAOS, VITALS_REG_PMAOS, req, 16, m, 0);
			}
		rd_job_done(job);
		return true;
	}
	for (size_t i = 0; i < r->n_temps; i++) {
		vitals_mtmp_request(req, r->temps[i].sensor);
		rd_read(job, VITALS_R_MTMP, VITALS_REG_MTMP, req, 32, r->temps[i].sensor, 0);
	}
	for (size_t i = 0; i < r->n_fans; i++) {
		vitals_mfsm_request(req, r->fans[i].tacho);
		rd_read(job, VITALS_R_MFSM, VITALS_REG_MFSM, req, 8, r->fans[i].tacho, 0);
	}
	if (r->n_fans && !vitals_missing(n, VITALS_R_FORE)) {
		memset(req, 0, 12);
		rd_read(job, VITALS_R_FORE, VITALS_REG_FORE, req, 12, 0, 0);
	}
	for (size_t m = 0; m < r->n_modules; m++) {
		vitals_pmaos_request(req, (unsigned)m);
		rd_read(job, VITALS_R_PMAOS, VITALS_REG_PMAOS, req, 16, (unsigned)m, 0);
	}
	rd_job_done(job);
	return true;
}

static void reading_free(struct vitals_reading *r)
{
	free(r->temps);
	free(r->fans);
	free(r->modules);
	free(r->lanes);
}

static void rd_sweep_done_one(struct rd_sweep *sw)
{
	struct vitals_area *a = sw->a;
	const struct vitals_snapshot *prev = cache_snapshot(&a->readings);
	struct vitals_build in = {.inv = sw->inv, .readings = sw->readings,
				  .n_readings = sw->n_readings, .prev = prev, .now = sw->now,
				  .partial = sw->partial};
	struct vitals_snapshot *s;

	if (--sw->pending)
		return;
	note_silent(a, sw->readings, sw->n_readings, sw->now);
	s = vitals_build(&in);
	/* nodes that restarted are inventoried again: their uptime went back,
	 * or is shorter than their inventory's age (one back after a while
	 * away) */
	for (size_t k = 0; s && k < s->n_nodes; k++)
		if (s->nodes[k].restarted || booted_since_inventory(&s->nodes[k], sw->now)) {
			if (a->n_again == a->cap_again) {
				size_t cap = a->cap_again ? 2 * a->cap_again : 16;
				uint64_t *p = realloc(a->again, cap * sizeof(*p));

				if (!p)
					break;
				a->again = p;
				a->cap_again = cap;
			}
			a->again[a->n_again++] = s->nodes[k].guid;
		}
	for (size_t i = 0; i < sw->n_readings; i++)
		reading_free(&sw->readings[i]);
	free(sw->readings);
	vitals_inventory_put(sw->inv);
	DEBUGMSGTL(("ibsnmpd:vitals", "readings of %zu nodes done%s\n", sw->n_readings,
		    sw->partial ? " (those patches named)" : ""));
	cache_refresh_done(&a->readings, s, s ? NULL : "out of memory");
	if (s && a->n_again) {
		a->inventory_patch = true; /* those nodes only */
		if (a->inventory.refreshing)
			a->inventory_pending = true;
		else
			cache_group_refresh_now(&a->inventory);
	}
	/* patches came while it ran, or the periodic sweep fell due while a
	 * patch's ran (its turn was skipped) */
	if (a->n_read_whole || a->n_module_ports || a->readings_whole ||
	    (sw->partial && monotonic_whole_seconds() - a->readings_full_at >= (time_t)a->readings.lifetime_s))
		cache_group_refresh_now(&a->readings);
	free(sw->whole);
	free(sw->modules);
	free(sw);
}

/* Whether a node just read has been up for less time than its inventory's
 * age: it restarted since (new firmware perhaps). 10 s of slack for the
 * clocks' seconds. */
static bool booted_since_inventory(const struct vitals_node *n, time_t now)
{
	return n->read_at == now && n->inv && n->inv->read_at &&
	       (time_t)n->uptime_s + 10 < now - n->inv->read_at;
}

static void readings_start(struct cache_group *g)
{
	struct vitals_area *a = g->owner;
	const struct vitals_inventory *inv = cache_snapshot(&a->inventory);
	struct rd_sweep *sw;

	if (!inv) {
		cache_refresh_done(g, NULL, "no node has been inventoried yet");
		return;
	}
	sw = calloc(1, sizeof(*sw));
	if (!sw || !(sw->readings = calloc(inv->n + 1, sizeof(*sw->readings)))) {
		free(sw);
		cache_refresh_done(g, NULL, "out of memory");
		return;
	}
	sw->a = a;
	sw->inv = vitals_inventory_get(inv);
	sw->prev = cache_snapshot(g);
	sw->now = time(NULL);
	/* what patches named, or every node (a discovery's, the periodic one,
	 * the first) */
	if (sw->prev && !a->readings_whole && (a->n_read_whole || a->n_module_ports) &&
	    monotonic_whole_seconds() - a->readings_full_at < (time_t)g->lifetime_s) {
		sw->partial = true;
		sw->whole = a->read_whole;
		sw->n_whole = a->n_read_whole;
		sw->modules = a->module_ports;
		sw->n_modules = a->n_module_ports;
		if (sw->n_whole > 1)
			qsort(sw->whole, sw->n_whole, sizeof(*sw->whole), guid_cmp);
		if (sw->n_modules > 1)
			qsort(sw->modules, sw->n_modules, sizeof(*sw->modules), topo_port_ref_cmp);
		a->read_whole = NULL;
		a->module_ports = NULL;
		a->cap_read_whole = a->cap_module_ports = 0;
	} else {
		a->readings_full_at = monotonic_whole_seconds();
		a->readings_whole = false;
	}
	a->n_read_whole = a->n_module_ports = 0;
	sw->pending = 1;
	sw->feeder = (struct mad_feeder){.next = rd_feed, .ctx = sw};
	mad_engine_feed(&sw->feeder);
}

/* ---- the groups ---------------------------------------------------------------------- */

/* A new inventory: read it now (the periodic readings go on after) */
static void inventoried(struct cache_group *g, const void *before, const void *after, void *arg)
{
	struct vitals_area *a = arg;

	(void)g;
	(void)before;
	(void)after;
	cache_group_start(&a->readings);
}

void vitals_sweep_discovered(struct vitals_area *a)
{
	a->n_silent = 0; /* each tried once more */
	a->readings_whole = true;
	cache_group_start(&a->inventory);
}

/* A list's room for one more (doubling); -1 out of memory */
static int room_for_one(void **arr, size_t *cap, size_t n, size_t size)
{
	size_t want = *cap ? 2 * *cap : 16;
	void *p;

	if (n < *cap)
		return 0;
	if (!(p = realloc(*arr, want * size)))
		return -1;
	*arr = p;
	*cap = want;
	return 0;
}

void vitals_read_whole(struct vitals_area *a, uint64_t guid)
{
	if (a->n_read_whole && a->read_whole[a->n_read_whole - 1] == guid)
		return;
	if (room_for_one((void **)&a->read_whole, &a->cap_read_whole, a->n_read_whole,
			 sizeof(*a->read_whole)))
		a->readings_whole = true; /* every node, then */
	else
		a->read_whole[a->n_read_whole++] = guid;
}

void vitals_sweep_patched(struct vitals_area *a, const struct topology *before,
			  const struct topology *f)
{
	const struct vitals_inventory *inv = cache_snapshot(&a->inventory);
	bool new_nodes = false;

	for (size_t i = 0; i < f->n_changed; i++) {
		const struct topo_port_ref *ref = &f->changed[i];
		const struct vitals_inv_node *n = vitals_inventory_find(inv, ref->guid);

		if (!topology_node(f, ref->guid))
			continue; /* gone: its rows stay until the next inventory */
		if (!n) {
			/* new, or back after an inventory without it: inventoried
			 * (or its inventory taken back), then read whole */
			new_nodes = true;
			vitals_read_whole(a, ref->guid);
		} else if (before && !topology_node(before, ref->guid)) {
			vitals_read_whole(a, ref->guid); /* back: read whole */
		} else if (n->type == 2) {
			if (room_for_one((void **)&a->module_ports, &a->cap_module_ports,
					 a->n_module_ports, sizeof(*a->module_ports)))
				a->readings_whole = true;
			else
				a->module_ports[a->n_module_ports++] = *ref;
		}
	}
	if (new_nodes) {
		a->inventory_patch = true;
		if (a->inventory.refreshing)
			a->inventory_pending = true;
		else
			cache_group_refresh_now(&a->inventory); /* the readings follow */
	} else if (a->n_module_ports || a->n_read_whole) {
		cache_group_refresh_now(&a->readings);
	}
}

void vitals_sweep_init(struct vitals_area *a, unsigned inventory_s, unsigned readings_s)
{
	a->inventory = (struct cache_group){.name = "vitals inventory", .lifetime_s = inventory_s,
					    .refresh = vitals_inventory_start,
					    .free_snapshot = vitals_inventory_snapshot_free, .owner = a};
	a->readings = (struct cache_group){.name = "vitals readings", .lifetime_s = readings_s,
					   .refresh = readings_start,
					   .free_snapshot = vitals_snapshot_free, .owner = a};
	cache_group_observe(&a->inventory, &a->inventoried, inventoried, a);
}

void vitals_sweep_stop(struct vitals_area *a)
{
	cache_group_stop(&a->readings);
	cache_group_stop(&a->inventory);
	free(a->again);
	a->again = NULL;
	a->n_again = a->cap_again = 0;
	free(a->silent);
	a->silent = NULL;
	a->n_silent = 0;
	free(a->read_whole);
	a->read_whole = NULL;
	free(a->module_ports);
	a->module_ports = NULL;
	a->n_read_whole = a->cap_read_whole = a->n_module_ports = a->cap_module_ports = 0;
	vitals_departed_free(a);
}
