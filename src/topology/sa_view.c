/* The SM's view of the subnet, read from its SA, as the discovery helper's
 * output (topology_parse() reads it as it reads libibnetdisc's): used where
 * this port may not send SMPs (a fabric protected by M_Key without its
 * key) or where the ports' keys differ (libibnetdisc carries one key), and
 * when discoverySource says sa. Pure: the helper hands it the records;
 * unit-tested and fuzzed (fuzz_sa_view).
 *
 * RMPP put together by hand: libibmad's sa_rpc_call() takes one MAD; the
 * kernel reassembles a GetTable answer for an agent registered with RMPP,
 * libumad2sim passes its segments as they are: both are taken here. */
#include <stdlib.h>
#include <string.h>

#include <infiniband/mad.h>

#include "ibsnmpd/sa_view.h"
#include "ibsnmpd/sma_attr.h"

#define SA_HEADER_END 56      /* common MAD, RMPP and SA headers (IB_SA_DATA_OFFS) */
#define SEGMENT_DATA 200u     /* IB_SA_DATA_SIZE */
#define SEGMENT_SA_HEADER 20u /* counted in RMPP's PayloadLength */
#define SA_STATUS_NO_RECORDS 3u

/* IBA 15.2.5.2, .3, .13: where the fields of the records are */
#define NR_LID 0
#define NR_NODEINFO 4
#define NR_DESC 44
#define PIR_LID 0
#define PIR_PORT 2
#define PIR_PORTINFO 4
#define LR_FROM_LID 0
#define LR_FROM_PORT 2
#define LR_TO_PORT 3
#define LR_TO_LID 4

static unsigned be16(const uint8_t *p)
{
	return (unsigned)p[0] << 8 | p[1];
}

void sa_table_init(struct sa_table *t, unsigned attr)
{
	memset(t, 0, sizeof(*t));
	t->attr = attr;
	t->next_segment = 1;
}

void sa_table_free(struct sa_table *t)
{
	free(t->data);
	t->data = NULL;
	t->len = t->cap = 0;
}

static int append(struct sa_table *t, const uint8_t *p, size_t n)
{
	if (!n)
		return 0; /* an empty segment: nothing to keep (and maybe no buffer yet) */
	if (t->len + n > SA_TABLE_MAX)
		return -1;
	if (t->len + n > t->cap) {
		size_t cap = t->cap ? t->cap : 4096;
		uint8_t *q;

		while (cap < t->len + n)
			cap *= 2;
		if (!(q = realloc(t->data, cap)))
			return -1;
		t->data = q;
		t->cap = cap;
	}
	memcpy(t->data + t->len, p, n);
	t->len += n;
	return 0;
}

int sa_table_take(struct sa_table *t, const uint8_t *mad, size_t len, char *err, size_t errlen)
{
	unsigned status, flags, offset;
	uint8_t head[SA_HEADER_END];

	if (len < SA_HEADER_END) {
		snprintf(err, errlen, "an SA answer of %zu octets", len);
		return -1;
	}
	memcpy(head, mad, sizeof(head)); /* libibmad's getters take no const */
	if (mad_get_field(head, 0, IB_MAD_MGMTCLASS_F) != IB_SA_CLASS ||
	    mad_get_field(head, 0, IB_MAD_ATTRID_F) != t->attr) {
		snprintf(err, errlen, "an SA answer of another attribute");
		return -1;
	}
	status = mad_get_field(head, 0, IB_MAD_STATUS_F);
	if (status) {
		if (status >> 8 == SA_STATUS_NO_RECORDS) /* an empty table */
			return 1;
		snprintf(err, errlen, "the SA answered status 0x%04x", status);
		return -1;
	}
	offset = mad_get_field(head, 0, IB_SA_ATTROFFS_F);
	if (t->record_size && t->record_size != offset * 8u) {
		snprintf(err, errlen, "the record size changed between segments");
		return -1;
	}
	t->record_size = offset * 8u;
	flags = mad_get_field(head, 0, IB_SA_RMPP_FLAGS_F);
	if (!(flags & 1) || len > IB_MAD_SIZE) {
		/* not segmented, or put together by the kernel: all here */
		if (append(t, mad + SA_HEADER_END, len - SA_HEADER_END)) {
			snprintf(err, errlen, "an SA table too big or out of memory");
			return -1;
		}
		return 1;
	}
	/* a segment as libumad2sim passes it */
	if (mad_get_field(head, 0, IB_SA_RMPP_TYPE_F) != 1 ||
	    mad_get_field(head, 0, IB_SA_RMPP_SEGNUM_F) != t->next_segment) {
		snprintf(err, errlen, "RMPP segment %u out of order (expected %u)",
			 mad_get_field(head, 0, IB_SA_RMPP_SEGNUM_F), t->next_segment);
		return -1;
	}
	{
		/* what follows its headers (IBA's 200 octets; libumad2sim passes
		 * fewer, and says so), the last's PayloadLength of it at most */
		size_t here = len - SA_HEADER_END;

		if (flags & 4) {
			unsigned paylen = mad_get_field(head, 0, IB_SA_RMPP_LEN_F);
			size_t said = paylen <= SEGMENT_SA_HEADER ? 0 : paylen - SEGMENT_SA_HEADER;

			if (said < here)
				here = said;
		}
		if (here > SEGMENT_DATA)
			here = SEGMENT_DATA;
		if (append(t, mad + SA_HEADER_END, here)) {
			snprintf(err, errlen, "an SA table too big or out of memory");
			return -1;
		}
	}
	t->next_segment++;
	return flags & 4 ? 1 : 0;
}

size_t sa_table_records(const struct sa_table *t, size_t min_size)
{
	if (t->record_size < min_size)
		return 0;
	return t->len / t->record_size;
}

/* ---- the view ------------------------------------------------------------------ */

struct view_node {
	uint64_t guid;
	unsigned type, num_ports, lid;
	unsigned vendor, device, revision;
	char desc[65];
	int route_from;           /* BFS: the node it was reached from, -1 none */
	unsigned route_port, hops;
	unsigned low_port;        /* a CA: its lowest port with a LID */
	bool reached;
};

/* what a LID is: a switch (port 0) or one CA port */
struct lid_entry {
	unsigned lid;
	uint64_t node_guid;
	size_t node;              /* index into nodes, once they are merged */
	unsigned port;
	uint64_t port_guid;
};

struct view_port {
	size_t node;
	unsigned port, lid;
	uint64_t port_guid;
	const uint8_t *portinfo;  /* in the PortInfoRecords' table */
	long peer;                /* index into ports, -1 none */
};

struct view {
	struct view_node *nodes;
	size_t n_nodes;
	struct lid_entry *lids;
	size_t n_lids;
	struct view_port *ports;
	size_t n_ports;
};

static int lid_cmp(const void *a, const void *b)
{
	const struct lid_entry *x = a, *y = b;

	return x->lid < y->lid ? -1 : x->lid > y->lid;
}

static int vnode_cmp(const void *a, const void *b)
{
	const struct view_node *x = a, *y = b;

	return x->guid < y->guid ? -1 : x->guid > y->guid;
}

static int vport_cmp(const void *a, const void *b)
{
	const struct view_port *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return x->port < y->port ? -1 : x->port > y->port;
}

static const struct lid_entry *find_lid(const struct view *v, unsigned lid)
{
	struct lid_entry key = {.lid = lid};

	return v->n_lids ? bsearch(&key, v->lids, v->n_lids, sizeof(key), lid_cmp) : NULL;
}

static long find_port(const struct view *v, size_t node, unsigned port)
{
	struct view_port key = {.node = node, .port = port};
	const struct view_port *p =
		v->n_ports ? bsearch(&key, v->ports, v->n_ports, sizeof(key), vport_cmp) : NULL;

	return p ? (long)(p - v->ports) : -1;
}

static size_t find_node(const struct view *v, uint64_t guid)
{
	size_t lo = 0, hi = v->n_nodes;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (v->nodes[mid].guid < guid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void free_view(struct view *v)
{
	free(v->nodes);
	free(v->lids);
	free(v->ports);
}

/* The nodes and their LIDs from the NodeRecords (a CA has one a port). */
static int view_nodes(struct view *v, const struct sa_table *nr, char *err, size_t errlen)
{
	size_t n = sa_table_records(nr, NR_DESC + 64);

	v->nodes = calloc(n ? n : 1, sizeof(*v->nodes));
	v->lids = calloc(n ? n : 1, sizeof(*v->lids));
	if (!v->nodes || !v->lids) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		uint8_t rec[NR_DESC + 64];
		struct view_node *nd = &v->nodes[v->n_nodes];
		unsigned type;

		memcpy(rec, nr->data + i * nr->record_size, sizeof(rec));
		type = mad_get_field(rec + NR_NODEINFO, 0, IB_NODE_TYPE_F);
		if (!be16(rec + NR_LID) || type < 1 || type > 3 ||
		    mad_get_field(rec + NR_NODEINFO, 0, IB_NODE_NPORTS_F) > 254)
			continue; /* no LID, not a node type, more ports than IBA's: not placed */
		nd->guid = mad_get_field64(rec + NR_NODEINFO, 0, IB_NODE_GUID_F);
		nd->type = type;
		nd->num_ports = mad_get_field(rec + NR_NODEINFO, 0, IB_NODE_NPORTS_F);
		nd->lid = be16(rec + NR_LID);
		nd->vendor = mad_get_field(rec + NR_NODEINFO, 0, IB_NODE_VENDORID_F);
		nd->device = mad_get_field(rec + NR_NODEINFO, 0, IB_NODE_DEVID_F);
		nd->revision = mad_get_field(rec + NR_NODEINFO, 0, IB_NODE_REVISION_F);
		memcpy(nd->desc, rec + NR_DESC, 64);
		nd->desc[64] = '\0';
		for (char *c = nd->desc; *c; c++)
			if (*c == '\n' || *c == '\r')
				*c = ' ';
		v->lids[v->n_lids].lid = nd->lid;
		v->lids[v->n_lids].port = type == 2 ? 0
			: mad_get_field(rec + NR_NODEINFO, 0, IB_NODE_LOCAL_PORT_F);
		v->lids[v->n_lids].port_guid =
			mad_get_field64(rec + NR_NODEINFO, 0, IB_NODE_PORT_GUID_F);
		v->lids[v->n_lids].node_guid = nd->guid;
		v->n_lids++;
		v->n_nodes++;
	}
	/* one node a GUID: a CA's records merged, its LID its lowest port's */
	if (v->n_nodes > 1)
		qsort(v->nodes, v->n_nodes, sizeof(*v->nodes), vnode_cmp);
	{
		size_t out = 0;

		for (size_t i = 0; i < v->n_nodes; i++) {
			if (out && v->nodes[out - 1].guid == v->nodes[i].guid) {
				if (v->nodes[i].type != v->nodes[out - 1].type) {
					snprintf(err, errlen, "node %016llx listed as two types",
						 (unsigned long long)v->nodes[i].guid);
					return -1;
				}
				continue;
			}
			v->nodes[out++] = v->nodes[i];
		}
		v->n_nodes = out;
	}
	for (size_t i = 0; i < v->n_lids; i++)
		v->lids[i].node = find_node(v, v->lids[i].node_guid);
	if (v->n_lids > 1)
		qsort(v->lids, v->n_lids, sizeof(*v->lids), lid_cmp);
	for (size_t i = 1; i < v->n_lids; i++)
		if (v->lids[i].lid == v->lids[i - 1].lid) {
			snprintf(err, errlen, "LID %u given to two ports", v->lids[i].lid);
			return -1;
		}
	/* a CA's LID: its lowest port's (as the discovery's) */
	for (size_t i = 0; i < v->n_lids; i++) {
		struct view_node *nd = &v->nodes[v->lids[i].node];
		unsigned p = v->lids[i].port;

		if (nd->type != 2 && (!nd->low_port || p < nd->low_port)) {
			nd->low_port = p;
			nd->lid = v->lids[i].lid;
		}
	}
	return 0;
}

/* The ports from the PortInfoRecords; their peers from the LinkRecords. */
static int view_ports(struct view *v, const struct sa_table *pir, const struct sa_table *lr,
		      char *err, size_t errlen)
{
	size_t n = sa_table_records(pir, PIR_PORTINFO + 64);
	size_t nl = sa_table_records(lr, LR_TO_LID + 2);

	v->ports = calloc(n ? n : 1, sizeof(*v->ports));
	if (!v->ports) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		const uint8_t *rec = pir->data + i * pir->record_size;
		const struct lid_entry *le = find_lid(v, be16(rec + PIR_LID));
		const struct view_node *nd;
		unsigned port = rec[PIR_PORT];

		if (!le)
			continue; /* a port of a node the NodeRecords do not have */
		nd = &v->nodes[le->node];
		if (nd->type != 2)
			port = le->port; /* a CA's record: the port the LID is */
		if (port < 1 || port > nd->num_ports || port > 254)
			continue; /* a switch's port 0: no link */
		v->ports[v->n_ports].node = le->node;
		v->ports[v->n_ports].port = port;
		v->ports[v->n_ports].lid = le->lid;
		v->ports[v->n_ports].port_guid = le->port_guid;
		v->ports[v->n_ports].portinfo = rec + PIR_PORTINFO;
		v->ports[v->n_ports].peer = -1;
		v->n_ports++;
	}
	if (v->n_ports > 1)
		qsort(v->ports, v->n_ports, sizeof(*v->ports), vport_cmp);
	for (size_t i = 1; i < v->n_ports; i++)
		if (!vport_cmp(&v->ports[i], &v->ports[i - 1])) {
			snprintf(err, errlen, "port %u of node %016llx listed twice", v->ports[i].port,
				 (unsigned long long)v->nodes[v->ports[i].node].guid);
			return -1;
		}
	for (size_t i = 0; i < nl; i++) {
		const uint8_t *rec = lr->data + i * lr->record_size;
		const struct lid_entry *from = find_lid(v, be16(rec + LR_FROM_LID));
		const struct lid_entry *to = find_lid(v, be16(rec + LR_TO_LID));
		long a, b;

		if (!from || !to)
			continue;
		a = find_port(v, from->node, v->nodes[from->node].type == 2 ? rec[LR_FROM_PORT]
								    : from->port);
		b = find_port(v, to->node, v->nodes[to->node].type == 2 ? rec[LR_TO_PORT] : to->port);
		if (a >= 0 && b >= 0)
			v->ports[a].peer = b; /* the other direction has its own record */
	}
	return 0;
}

/* Directed routes from the local node, breadth first, lowest ports first
 * (for a node without a LID; the SA's all have one, but the view says the
 * same as a discovery). */
static void view_routes(struct view *v, unsigned local_lid)
{
	const struct lid_entry *here = find_lid(v, local_lid);
	size_t *queue, head = 0, tail = 0, local = here ? here->node : v->n_nodes;

	for (size_t i = 0; i < v->n_nodes; i++) {
		v->nodes[i].route_from = -1;
		v->nodes[i].reached = false;
	}
	if (local == v->n_nodes || !(queue = malloc(v->n_nodes * sizeof(*queue))))
		return;
	v->nodes[local].reached = true;
	queue[tail++] = local;
	while (head < tail) {
		size_t at = queue[head++];
		long first = find_port(v, at, 1);

		if (v->nodes[at].hops >= 63 || first < 0)
			continue;
		if (v->nodes[at].type != 2 && at != local)
			continue; /* only switches forward */
		for (size_t i = (size_t)first; i < v->n_ports && v->ports[i].node == at; i++) {
			const struct view_port *p = &v->ports[i];
			struct view_node *next;

			if (p->peer < 0)
				continue;
			next = &v->nodes[v->ports[p->peer].node];
			if (next->reached)
				continue;
			next->reached = true;
			next->route_from = (int)at;
			next->route_port = p->port;
			next->hops = v->nodes[at].hops + 1;
			queue[tail++] = v->ports[p->peer].node;
		}
	}
	free(queue);
}

static void print_route(FILE *out, const struct view *v, size_t i)
{
	uint8_t ports[64];
	unsigned hops = v->nodes[i].hops;

	for (size_t at = i, h = hops; h > 0; h--) {
		ports[h - 1] = (uint8_t)v->nodes[at].route_port;
		at = (size_t)v->nodes[at].route_from;
	}
	fprintf(out, "route %016llx %u", (unsigned long long)v->nodes[i].guid, hops);
	for (unsigned h = 0; h < hops; h++)
		fprintf(out, " %u", ports[h]);
	fputc('\n', out);
}

static int port_speed(const uint8_t *portinfo)
{
	struct sma_portinfo pi;

	if (sma_portinfo_decode(portinfo, 64, &pi) || pi.phys_state != SMA_PHYS_LINK_UP)
		return 0;
	return sma_portinfo_active_speed(&pi);
}

int sa_view_print(FILE *out, const struct sa_table *nr, const struct sa_table *pir,
		  const struct sa_table *lr, unsigned local_lid, char *err, size_t errlen)
{
	struct view v = {0};

	if (view_nodes(&v, nr, err, errlen) || view_ports(&v, pir, lr, err, errlen)) {
		free_view(&v);
		return -1;
	}
	view_routes(&v, local_lid);
	fprintf(out, "source sa\n");
	for (size_t i = 0, p = 0; i < v.n_nodes; i++) {
		const struct view_node *nd = &v.nodes[i];

		for (; p < v.n_ports && v.ports[p].node == i; p++) {
			const struct view_port *vp = &v.ports[p];
			const struct view_port *peer = vp->peer >= 0 ? &v.ports[vp->peer] : NULL;

			fprintf(out, "port %016llx %u %u %016llx %016llx %u %d\n",
				(unsigned long long)nd->guid, vp->port, vp->lid,
				(unsigned long long)vp->port_guid,
				(unsigned long long)(peer ? v.nodes[peer->node].guid : 0),
				peer ? peer->port : 0, port_speed(vp->portinfo));
			fprintf(out, "pinfo %016llx %u ", (unsigned long long)nd->guid, vp->port);
			for (int k = 0; k < 64; k++)
				fprintf(out, "%02x", vp->portinfo[k]);
			fputc('\n', out);
		}
		fprintf(out, "node %016llx %u %u %u %s\n", (unsigned long long)nd->guid, nd->type,
			nd->num_ports, nd->lid, nd->desc);
		fprintf(out, "ident %016llx %x %x %x\n", (unsigned long long)nd->guid, nd->vendor,
			nd->device, nd->revision);
		if (nd->reached)
			print_route(out, &v, i);
	}
	free_view(&v);
	return 0;
}
