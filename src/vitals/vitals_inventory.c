/* The vitals' inventory (vitals_internal.h): a node read once, when a
 * discovery or a topology patch first shows it (a node back within the
 * inventory's lifetime keeps what it had when it left, while it has not
 * restarted since), when its inventory is older than
 * vitalsInventory's lifetime, when its uptime went back (it restarted: new
 * firmware perhaps), pipelined through the MAD engine (its window, its
 * per-destination limit, its silent-node back-off), node by node as the
 * engine has room (a feeder). GeneralInfo first: a node that does not
 * answer it ("no answer") is asked again at the next inventory, which every
 * discovery starts; one of another vendor (NodeInfo's VendorID) is not asked
 * at all. And the one way to read a register of a node, both sweeps'.
 *
 * Registers go by AccessRegisterGMP where GeneralInfo says the node has it
 * (a Get to QP1: 220 octets of register), else by class 0x0A's
 * AccessRegister with TLVs (204 octets), as mstflint does; never by the
 * SMP AccessRegister, a SubnSet that an M_Key would refuse and count. */
#include "ibsnmpd/netsnmp.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ibsnmpd/mad_engine.h"
#include "ibsnmpd/vitals.h"

#include "vitals_internal.h"

/* ---- one register of a node ------------------------------------------------ */

struct reg_call {
	vitals_reg_done_fn done;
	void *ctx;
	unsigned reg_id;
	bool gmp;
};

static void got_register(void *ctx, int result, const uint8_t *data, size_t len)
{
	struct reg_call *c = ctx;
	const uint8_t *reg = NULL;
	size_t reg_len = 0;
	unsigned tlv_status = 0;
	int status;

	if (result == MAD_OK) {
		if (c->gmp)
			status = vitals_gmp_answer(data, len, &reg, &reg_len) ? -1 : 0;
		else if (vitals_tlv_answer(data, len, c->reg_id, &reg, &reg_len, &tlv_status))
			status = -1;
		else
			status = (int)tlv_status;
		if (status < 0)
			snmp_log(LOG_WARNING, "vitals: a malformed answer to register 0x%04x dropped\n",
				 c->reg_id);
	} else if (result > 0) {
		status = c->gmp ? vitals_gmp_status(result) : VITALS_REG_STATUS_NOT_SUPPORTED;
		if (status < 0)
			status = VITALS_REG_STATUS_BAD_PARAM;
	} else {
		status = -1;
	}
	c->done(c->ctx, status, reg, reg_len);
	free(c);
}

int vitals_read_register(unsigned lid, bool gmp, unsigned reg_id, const uint8_t *req,
			 size_t req_len, vitals_reg_done_fn done, void *ctx)
{
	uint8_t data[IB_VENDOR_RANGE1_DATA_SIZE];
	struct mad_call call = {.mgmt_class = MAD_VENDOR_NVIDIA_CLASS, .data = data};
	struct reg_call *c;
	ib_portid_t to;

	if (gmp) {
		call.method = IB_MAD_METHOD_GET;
		call.attr_id = VITALS_ATTR_ACCESS_REG_GMP;
		call.attr_mod = reg_id;
		call.data_len = vitals_gmp_request(data, sizeof(data), req, req_len);
	} else {
		/* mstflint sends class 0x0A's AccessRegister as a Set, whatever
		 * the Operation TLV asks (a query here) */
		call.method = IB_MAD_METHOD_SET;
		call.attr_id = VITALS_ATTR_ACCESS_REG;
		call.data_len = vitals_tlv_request(data, sizeof(data), reg_id, req,
						   req_len < VITALS_TLV_REG_MAX ? req_len :
						   VITALS_TLV_REG_MAX);
	}
	if (!call.data_len || !(c = calloc(1, sizeof(*c))))
		return -1;
	*c = (struct reg_call){.done = done, .ctx = ctx, .reg_id = reg_id, .gmp = gmp};
	mad_portid_gs(&to, lid);
	if (mad_engine_call(&to, &call, got_register, c)) {
		free(c);
		return -1;
	}
	return 0;
}

bool vitals_missing(const struct vitals_inv_node *n, enum vitals_reg_bit r)
{
	return n->missing >> r & 1;
}

/* ---- the inventory -------------------------------------------------------------- */

struct inv_sweep {
	struct vitals_area *a;
	struct vitals_inventory *inv;
	bool *to_read;            /* per node of inv */
	size_t next, pending;
	time_t now;
	struct mad_feeder feeder;
};

struct inv_job {
	struct inv_sweep *sw;
	struct vitals_inv_node *n;
	unsigned outstanding;
	bool mgir_answered;
	enum vitals_status refused; /* GeneralInfo's failure; 0: it answered */
};

/* One register of an inventory: which, and for PMLP which port */
struct inv_read {
	struct inv_job *job;
	enum vitals_reg_bit reg;
	unsigned port;
};

static void inv_sweep_done_one(struct inv_sweep *sw);

static void inv_job_done(struct inv_job *job)
{
	struct vitals_inv_node *n = job->n;
	struct inv_sweep *sw = job->sw;

	if (--job->outstanding)
		return;
	if (job->refused)
		n->status = job->refused;
	else if (!job->mgir_answered)
		n->status = vitals_missing(n, VITALS_R_MGIR) ? VITALS_NO_REGISTERS : VITALS_NO_ANSWER;
	else
		n->status = VITALS_READ;
	n->read_at = sw->now;
	free(job);
	inv_sweep_done_one(sw);
}

static void got_inventory_register(void *ctx, int status, const uint8_t *reg, size_t len)
{
	struct inv_read *rd = ctx;
	struct inv_job *job = rd->job;
	struct vitals_inv_node *n = job->n;
	bool bad = status != 0;

	if (status == VITALS_REG_STATUS_NOT_SUPPORTED)
		n->missing |= 1u << rd->reg;
	switch (rd->reg) {
	case VITALS_R_MGIR:
		job->mgir_answered = !bad && !vitals_mgir_decode(reg, len, &n->mgir);
		break;
	case VITALS_R_MSGI:
		n->have_msgi = !bad && !vitals_msgi_decode(reg, len, &n->msgi);
		break;
	case VITALS_R_MTCAP: {
		struct vitals_mtcap cap;

		if (!bad && !vitals_mtcap_decode(reg, len, &cap))
			n->sensor_map = cap.sensor_map;
		break;
	}
	case VITALS_R_MFCR:
		if (bad || vitals_mfcr_decode(reg, len, &n->tachos))
			n->tachos = 0;
		break;
	case VITALS_R_MGPIR:
		if (bad || vitals_mgpir_decode(reg, len, &n->n_modules) ||
		    n->n_modules > VITALS_MODULES_MAX)
			n->n_modules = 0;
		break;
	case VITALS_R_PMLP: {
		struct vitals_pmlp map;

		if (!bad && !vitals_pmlp_decode(reg, len, &map) && map.port == rd->port &&
		    map.width && map.width <= VITALS_LANES_MAX && map.module < VITALS_MODULES_MAX &&
		    map.first_lane + map.width <= VITALS_LANES_MAX)
			job->sw->inv->ports[n->first_port + rd->port - 1] =
				(struct vitals_port_map){(uint8_t)map.module, (uint8_t)map.first_lane,
							 (uint8_t)map.width};
		break;
	}
	default:
		break;
	}
	free(rd);
	inv_job_done(job);
}

static void inv_read(struct inv_job *job, enum vitals_reg_bit reg, unsigned reg_id,
		     const uint8_t *req, size_t req_len, unsigned port)
{
	struct inv_read *rd = calloc(1, sizeof(*rd));

	if (!rd)
		return;
	*rd = (struct inv_read){.job = job, .reg = reg, .port = port};
	job->outstanding++;
	if (vitals_read_register(job->n->lid, job->n->by_gmp, reg_id, req, req_len,
			  got_inventory_register, rd)) {
		job->outstanding--;
		free(rd);
	}
}

/* GeneralInfo answered: the registers of the inventory, all at once (the
 * engine paces them per destination) */
static void got_general_info(void *ctx, int result, const uint8_t *data, size_t len)
{
	struct inv_job *job = ctx;
	struct vitals_inv_node *n = job->n;
	struct vitals_general_info gi;
	uint8_t req[VITALS_REG_MAX] = {0};

	if (result != MAD_OK || vitals_general_info_decode(data, len, &gi)) {
		/* a status: no NVIDIA vendor class; a timeout: silent, asked again
		 * only at the next inventory of the node */
		job->refused = result > 0 || result == MAD_OK ? VITALS_UNSUPPORTED : VITALS_NO_ANSWER;
		job->outstanding = 1;
		inv_job_done(job);
		return;
	}
	n->by_gmp = gi.registers_by_gmp;
	job->outstanding = 1; /* held while the reads are queued */
	inv_read(job, VITALS_R_MGIR, VITALS_REG_MGIR, req, 160, 0);
	if (n->type == 2) {
		inv_read(job, VITALS_R_MSGI, VITALS_REG_MSGI, req, 128, 0);
		inv_read(job, VITALS_R_MFCR, VITALS_REG_MFCR, req, 8, 0);
	}
	inv_read(job, VITALS_R_MTCAP, VITALS_REG_MTCAP, req, 16, 0);
	inv_read(job, VITALS_R_MGPIR, VITALS_REG_MGPIR, req, 160, 0);
	/* whether the modules are read by PDDR or from their EEPROM (MCIA):
	 * PDDR of port 1 answers, a module in its cage or not */
	if (n->num_ports) {
		vitals_pddr_request(req, 1);
		inv_read(job, VITALS_R_PDDR, VITALS_REG_PDDR, req, VITALS_PDDR_READ, 1);
		memset(req, 0, sizeof(req));
	}
	for (unsigned p = 1; p <= n->num_ports; p++) {
		vitals_pmlp_request(req, p);
		inv_read(job, VITALS_R_PMLP, VITALS_REG_PMLP, req, 64, p);
	}
	inv_job_done(job);
}

/* NodeInfo VendorIDs of devices with NVIDIA's (Mellanox's) vendor class:
 * Mellanox/NVIDIA, and the OEMs whose switches are Mellanox's (Bull,
 * Voltaire), as ibutils2 lists them */
static bool nvidia_vendor(const struct topo_node *t)
{
	return !t->has_ident || t->vendor_id == 0x0002c9 || t->vendor_id == 0x00119f ||
	       t->vendor_id == 0x0008f1;
}

static bool inv_feed(void *ctx)
{
	struct inv_sweep *sw = ctx;
	struct vitals_inv_node *n;
	struct inv_job *job;
	struct mad_call call = {.mgmt_class = MAD_VENDOR_NVIDIA_CLASS,
				.method = IB_MAD_METHOD_GET,
				.attr_id = VITALS_ATTR_GENERAL_INFO};
	ib_portid_t to;

	while (sw->next < sw->inv->n && !sw->to_read[sw->next])
		sw->next++;
	if (sw->next == sw->inv->n) {
		inv_sweep_done_one(sw); /* the feeder's hold */
		return false;
	}
	n = &sw->inv->nodes[sw->next++];
	if (!(job = calloc(1, sizeof(*job))))
		return true;
	job->sw = sw;
	job->n = n;
	sw->pending++;
	mad_portid_gs(&to, n->lid);
	if (mad_engine_call(&to, &call, got_general_info, job)) {
		free(job);
		sw->pending--;
	}
	return true;
}

static void inventory_free(struct vitals_inventory *inv)
{
	if (!inv)
		return;
	topology_put(inv->fabric);
	free(inv->nodes);
	free(inv->ports);
	free(inv);
}

void vitals_inventory_put(const struct vitals_inventory *c)
{
	struct vitals_inventory *inv = (struct vitals_inventory *)c;

	if (inv && --inv->refs == 0)
		inventory_free(inv);
}

const struct vitals_inventory *vitals_inventory_get(const struct vitals_inventory *c)
{
	struct vitals_inventory *inv = (struct vitals_inventory *)c;

	if (inv)
		inv->refs++;
	return inv;
}

void vitals_inventory_snapshot_free(void *p)
{
	vitals_inventory_put(p);
}

static int inv_node_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct vitals_inv_node *)a)->guid,
		 y = ((const struct vitals_inv_node *)b)->guid;

	return x < y ? -1 : x > y;
}

const struct vitals_inv_node *vitals_inventory_find(const struct vitals_inventory *inv,
						    uint64_t guid)
{
	struct vitals_inv_node key = {.guid = guid};

	return inv && inv->n ? bsearch(&key, inv->nodes, inv->n, sizeof(key), inv_node_cmp) : NULL;
}

static void inv_sweep_done_one(struct inv_sweep *sw)
{
	struct vitals_area *a = sw->a;
	size_t read = 0;

	if (--sw->pending)
		return;
	for (size_t k = 0; k < sw->inv->n; k++)
		if (sw->to_read[k]) {
			read++;
			vitals_read_whole(a, sw->inv->nodes[k].guid); /* its readings next */
		}
	DEBUGMSGTL(("ibsnmpd:vitals", "inventory of %zu nodes, %zu read now\n", sw->inv->n, read));
	cache_refresh_done(&a->inventory, sw->inv, NULL);
	free(sw->to_read);
	free(sw);
	if (a->inventory_pending) {
		a->inventory_pending = false;
		cache_group_refresh_now(&a->inventory);
	}
}

/* ---- nodes gone, and back ------------------------------------------------------ */

static int departed_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct vitals_departed *)a)->node.guid,
		 y = ((const struct vitals_departed *)b)->node.guid;

	return x < y ? -1 : x > y;
}

static const struct vitals_departed *departed_find(const struct vitals_area *a, uint64_t guid)
{
	struct vitals_departed key = {.node.guid = guid};

	return a->n_departed ? bsearch(&key, a->departed, a->n_departed, sizeof(key), departed_cmp)
			     : NULL;
}

/* Whether an inventory read at read_at is still good at now */
static bool inventory_fresh(const struct vitals_inv_node *n, time_t now, unsigned lifetime_s)
{
	return n->status == VITALS_READ && now - n->read_at < (time_t)lifetime_s;
}

/* The nodes of prev that inv lacks (they left) join the departed; the
 * departed back in inv, or too old, leave them. Out of memory: some are
 * forgotten (read again if they come back). */
static void departures(struct vitals_area *a, const struct vitals_inventory *prev,
		       const struct vitals_inventory *inv, time_t now, unsigned lifetime_s)
{
	size_t n = 0, gone = 0;
	struct vitals_departed *d;

	for (size_t k = 0; prev && k < prev->n; k++)
		gone += !vitals_inventory_find(inv, prev->nodes[k].guid) &&
			inventory_fresh(&prev->nodes[k], now, lifetime_s);
	d = malloc((a->n_departed + gone + 1) * sizeof(*d));
	if (!d)
		return;
	for (size_t k = 0; k < a->n_departed; k++) {
		struct vitals_departed *x = &a->departed[k];

		if (vitals_inventory_find(inv, x->node.guid) ||
		    !inventory_fresh(&x->node, now, lifetime_s) || n >= VITALS_DEPARTED_MAX) {
			free(x->ports);
			continue;
		}
		d[n++] = *x;
	}
	for (size_t k = 0; prev && k < prev->n && gone; k++) {
		const struct vitals_inv_node *p = &prev->nodes[k];
		struct vitals_departed x = {.node = *p};

		if (vitals_inventory_find(inv, p->guid) || !inventory_fresh(p, now, lifetime_s) ||
		    n >= VITALS_DEPARTED_MAX || departed_find(a, p->guid))
			continue;
		x.node.desc = NULL;
		x.ports = malloc((p->num_ports + 1) * sizeof(*x.ports));
		if (!x.ports)
			continue;
		memcpy(x.ports, prev->ports + p->first_port, p->num_ports * sizeof(*x.ports));
		d[n++] = x;
	}
	free(a->departed);
	a->departed = d;
	a->n_departed = n;
	if (n > 1)
		qsort(a->departed, n, sizeof(*d), departed_cmp);
}

void vitals_departed_free(struct vitals_area *a)
{
	for (size_t k = 0; k < a->n_departed; k++)
		free(a->departed[k].ports);
	free(a->departed);
	a->departed = NULL;
	a->n_departed = 0;
}

static bool asked_again(const struct vitals_area *a, uint64_t guid)
{
	for (size_t i = 0; i < a->n_again; i++)
		if (a->again[i] == guid)
			return true;
	return false;
}

void vitals_inventory_start(struct cache_group *g)
{
	struct vitals_area *a = g->owner;
	const struct topology *f = a->topology ? cache_snapshot(a->topology) : NULL;
	const struct vitals_inventory *prev = cache_snapshot(g);
	struct inv_sweep *sw;
	struct vitals_inventory *inv;
	size_t ports = 0;
	bool patch = a->inventory_patch;

	a->inventory_patch = false;
	a->inventory_pending = false;
	if (!f) {
		cache_refresh_done(g, NULL, "the subnet has not been discovered yet");
		return;
	}
	for (size_t k = 0; k < f->n_nodes; k++)
		ports += f->nodes[k].num_ports;
	sw = calloc(1, sizeof(*sw));
	inv = calloc(1, sizeof(*inv));
	if (!sw || !inv || !(inv->nodes = calloc(f->n_nodes + 1, sizeof(*inv->nodes))) ||
	    !(inv->ports = malloc((ports + 1) * sizeof(*inv->ports))) ||
	    !(sw->to_read = calloc(f->n_nodes + 1, sizeof(bool)))) {
		if (inv) {
			free(inv->nodes);
			free(inv->ports);
		}
		free(inv);
		if (sw)
			free(sw->to_read);
		free(sw);
		cache_refresh_done(g, NULL, "out of memory");
		return;
	}
	memset(inv->ports, 0xff, (ports + 1) * sizeof(*inv->ports));
	inv->refs = 1;
	inv->fabric = topology_get(f);
	inv->n = f->n_nodes;
	inv->n_ports = ports;
	sw->a = a;
	sw->inv = inv;
	sw->now = time(NULL);
	ports = 0;
	/* the discovery's nodes are sorted by GUID, as the inventory's */
	for (size_t k = 0; k < f->n_nodes; k++) {
		const struct topo_node *t = &f->nodes[k];
		struct vitals_inv_node *n = &inv->nodes[k];
		const struct vitals_inv_node *old = vitals_inventory_find(prev, t->guid);
		const struct vitals_departed *back = old ? NULL : departed_find(a, t->guid);
		/* a patch's inventory reads the nodes it lacks, not those that
		 * did not answer before (one try a discovery) */
		bool keep = patch ? old && old->status != VITALS_PENDING
				  : old && old->status != VITALS_PENDING &&
				    old->status != VITALS_DISABLED &&
				    old->status != VITALS_NO_ANSWER;

		if (old && old->num_ports == t->num_ports && !a->inventory_all &&
		    !asked_again(a, t->guid) && keep &&
		    sw->now - old->read_at < (time_t)g->lifetime_s) {
			*n = *old; /* known: kept as read */
			memcpy(inv->ports + ports, prev->ports + old->first_port,
			       t->num_ports * sizeof(*inv->ports));
		} else if (back && back->node.num_ports == t->num_ports && !a->inventory_all &&
			   !asked_again(a, t->guid) &&
			   inventory_fresh(&back->node, sw->now, g->lifetime_s)) {
			*n = back->node; /* back: as it left (its readings say if it restarted) */
			memcpy(inv->ports + ports, back->ports, t->num_ports * sizeof(*inv->ports));
		} else {
			memset(n, 0, sizeof(*n));
			n->status = VITALS_PENDING;
			sw->to_read[k] = true;
		}
		n->guid = t->guid;
		n->lid = t->lid;
		n->type = t->type;
		n->num_ports = t->num_ports;
		n->desc = t->name;
		n->first_port = ports;
		ports += t->num_ports;
		if (!(a->types_mask >> t->type & 1)) {
			n->status = VITALS_DISABLED;
			sw->to_read[k] = false;
		} else if (!nvidia_vendor(t)) {
			n->status = VITALS_NOT_NVIDIA;
			sw->to_read[k] = false;
		} else if (!t->lid) {
			sw->to_read[k] = false; /* no LID yet (no SM): GMPs need one */
		}
	}
	departures(a, prev, inv, sw->now, g->lifetime_s);
	a->n_again = 0;
	a->inventory_all = false;
	sw->pending = 1; /* the feeder's, until every node has been fed */
	sw->feeder = (struct mad_feeder){.next = inv_feed, .ctx = sw};
	mad_engine_feed(&sw->feeder);
}
