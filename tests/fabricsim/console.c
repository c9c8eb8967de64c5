/* fabricsim's console: ibsim's command syntax where ibsim has the command
 * (Unlink, ReLink, PerformanceSet, Error), and a few of its own (Dead, Alive,
 * Width, Speed, Stats). A node is "NAME" (its node description) or a GUID,
 * a port [N]; without a port, Unlink/ReLink take every port of the node. */
#include <ctype.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <infiniband/mad.h>

#include "fabricsim.h"

static const char *const help =
	"# Unlink \"node\"[port]           take a link down (both ends; every port without [port])\n"
	"# ReLink \"node\"[port]           bring it back up\n"
	"# Link \"a\"[p] \"b\"[q]            cable two ports (a cable moved: what they were cabled\n"
	"#                               to is left without one), as ibsim's Link\n"
	"# Add ca|switch \"name\" PORTS     a new node, not cabled (Link it)\n"
	"# PerformanceSet \"node\"[port] PortCounters.FIELD=VALUE | PortCountersExtended.FIELD=VALUE\n"
	"#                               | PortExtendedSpeedsCounters.FIELD=VALUE (port totals)\n"
	"# CounterRate \"node\"[port] FIELD=PER_SECOND  an error counter moves at that pace\n"
	"# Error \"node\"[port] PERCENT    answers about that port come back as timeouts\n"
	"# Dead \"node\" / Alive \"node\"    the node answers nothing at all / again; a name\n"
	"#                               with * or ? takes every node it matches (a rail)\n"
	"# Width \"node\"[port] 1X|2X|4X|8X|12X, Speed \"node\"[port] SDR|...|NDR|XDR (both ends)\n"
	"# Stats                         MADs answered so far: SMPs (vendor attributes and\n"
	"#                               LinearForwardingTable apart), PerfMgt, SA, vendor\n"
	"#                               (class 0x0A, SMP 0xFFxx), routing (LFT SMPs)\n"
	"# Temperature \"node\" SENSOR CELSIUS|auto   sensor 0 the ASIC, 1-2 ambient, 64+M module M\n"
	"# Fan \"node\" TACHO RPM|auto     tacho 0-13 of a switch (0 rpm: stopped)\n"
	"# Module \"node\"[port] Remove|Insert|Fault   the module of the port (its cage's links\n"
	"#                               go down while it is out or faulted)\n"
	"# Module \"node\"[port] RxPower LANE DBM|auto, Module \"node\"[port] Temperature CELSIUS|auto\n"
	"#                               LANE 0-3 of the port\n"
	"# Vendor \"node\" nvidia|other|silent|unsupported|noregister REG[,REG...]\n"
	"#                               how it answers NVIDIA's vendor MADs (a pattern: every\n"
	"#                               node it matches); without a mode, how many reached it\n"
	"# Lft \"switch\" LID PORT|none  an entry of its LinearForwardingTable set (none: 255);\n"
	"# Lft \"switch\" clear|auto      every entry none / as the model routes them again\n"
	"# MKey \"node\"|* KEY [PROTECT [LEASE]]  its M_Key (0: none), protect bits 0-3, lease\n"
	"#                               seconds; MKey \"node\" alone: its violations\n"
	"# PortInfo \"node\"[port] NeighborMTU 256..4096|OperVLs 1|2|4|8|15|PortState\n"
	"#                               Init|Armed|Active|LID N  what one end says (auto: the\n"
	"#                               model's again): a link the SM left misconfigured\n"
	"# Sm \"node\" master|standby|discovering|notactive|none [PRIORITY]  an SM on the node\n"
	"#                               (its SMInfo); Sm \"node\" freeze|thaw: its ActCount\n"
	"#                               stops / moves again (ports keep following the first\n"
	"#                               master for their MasterSMLID)\n"
	"# Delay \"node\" MS [JITTER_MS]   its answers held that long (give or take the jitter)\n"
	"# Rate \"node\" N [QUEUE]         it answers at most N MADs a second; the others wait in\n"
	"#                               its queue (256; beyond it unanswered); 0: no limit\n"
	"# Loss \"node\" PERCENT           that share of the MADs to it go unanswered\n"
	"#                               (Delay, Rate, Loss: a pattern takes every node it\n"
	"#                               matches; 0 ends it)\n"
	"# Ports \"node\"                  its ports as the simulator has them (up|down, the\n"
	"#                               peer), and its processor's faults and losses\n";

unsigned long fs_answered[FS_CLASSES]; /* server.c counts */

enum fs_class fs_class_of(const uint8_t *mad, uint32_t status)
{
	unsigned attr = (unsigned)mad[16] << 8 | mad[17];

	if (status)
		return FS_UNDELIVERABLE;
	switch (mad[1]) {
	case IB_PERFORMANCE_CLASS:
		return FS_PERFMGT;
	case IB_SA_CLASS:
		return FS_SA;
	case 0x0A:
		return FS_VENDOR;
	default:
		return attr >= 0xFF00 ? FS_VENDOR : attr == IB_ATTR_LINEARFORWTBL ? FS_ROUTING : FS_SMP;
	}
}

/* "NAME"[PORT] at *s; the node, the port (-1: none given); s moves past */
static int parse_target(const struct fabric *f, char **s, int *node, int *port, FILE *out)
{
	char *p = *s, *end, name[128];
	size_t len;

	while (isspace((unsigned char)*p))
		p++;
	if (*p == '"') {
		end = strchr(p + 1, '"');
		if (!end) {
			fprintf(out, "# missing closing quote\n");
			return -1;
		}
		len = (size_t)(end - p - 1);
		p++;
	} else {
		end = p;
		while (*end && !isspace((unsigned char)*end) && *end != '[')
			end++;
		len = (size_t)(end - p);
		end--;
	}
	if (len == 0 || len >= sizeof(name)) {
		fprintf(out, "# give a node: \"NAME\"[PORT]\n");
		return -1;
	}
	memcpy(name, p, len);
	name[len] = 0;
	*node = fs_find_node(f, name);
	if (*node < 0) {
		fprintf(out, "# nodeid \"%s\" not found\n", name);
		return -1;
	}
	p = end + 1;
	*port = -1;
	if (*p == '[') {
		char *close;
		long v = strtol(p + 1, &close, 0);

		if (*close != ']' || v < 0 || v > f->nodes[*node].nports) {
			fprintf(out, "# bad port in \"%s\"\n", name);
			return -1;
		}
		*port = (int)v;
		p = close + 1;
	}
	*s = p;
	return 0;
}

static const char *const error_names[FS_ERRORS] = {
	"SymbolErrorCounter", "LinkErrorRecoveryCounter", "LinkDownedCounter", "PortRcvErrors",
	"PortRcvRemotePhysicalErrors", "PortRcvSwitchRelayErrors", "PortXmitDiscards",
	"PortXmitConstraintErrors", "PortRcvConstraintErrors", "LocalLinkIntegrityErrors",
	"ExcessiveBufferOverrunErrors", "VL15Dropped", "PortXmitWait",
	/* PortExtendedSpeedsCounters: port totals (split over the lanes) */
	"SyncHeaderErrorCounter", "UnknownBlockCounter", "ErrorDetectionCounter",
	"FECCorrectableBlockCounter", "FECUncorrectableBlockCounter", "FECCorrectedSymbolCounter"};

/* The attribute a counter of error_names is set through. */
static bool error_in(const char *attr, int k)
{
	if (k > FS_XMIT_WAIT)
		return !strcasecmp(attr, "PortExtendedSpeedsCounters");
	return !strcasecmp(attr, "PortCounters");
}

static int error_by_name(const char *name)
{
	for (int k = 0; k < FS_ERRORS; k++)
		if (!strcasecmp(name, error_names[k]))
			return k;
	return -1;
}
static const char *const data_names[FS_DATAS] = {"PortXmitData", "PortRcvData", "PortXmitPkts",
						 "PortRcvPkts"};

static void performance_set(struct fabric *f, int node, int port, char *s, FILE *out)
{
	char *dot, *eq, *end;
	unsigned long long v;

	while (isspace((unsigned char)*s))
		s++;
	dot = strchr(s, '.');
	eq = strchr(s, '=');
	if (port < 0 || !dot || !eq || eq < dot) {
		fprintf(out, "# PerformanceSet \"node\"[port] Attribute.Field=value\n");
		return;
	}
	*dot = *eq = 0;
	for (char *t = eq - 1; t > dot && isspace((unsigned char)*t); t--)
		*t = 0;
	v = strtoull(eq + 1, &end, 0);
	if (end == eq + 1) {
		fprintf(out, "# value '%s' is not a valid integer\n", eq + 1);
		return;
	}
	uint32_t pi = fs_port_index(f, (uint32_t)node, (uint8_t)port);

	if (!strcasecmp(s, "PortCounters") || !strcasecmp(s, "PortCountersExtended")) {
		for (int k = 0; k < FS_DATAS; k++)
			if (!strcasecmp(dot + 1, data_names[k])) {
				fs_set_data_counter(f, pi, (enum fs_data)k, v);
				return;
			}
	}
	{
		int k = error_by_name(dot + 1);

		if (k >= 0 && error_in(s, k)) {
			fs_set_error(f, pi, (enum fs_error)k, v);
			return;
		}
	}
	fprintf(out, "# unknown attribute field %s.%s\n", s, dot + 1);
}

/* CounterRate "node"[port] COUNTER=PER_SECOND: the error counter moves at
 * that pace from now on (0 stops it) */
static void counter_rate(struct fabric *f, int node, int port, char *s, FILE *out)
{
	char name[64], *end;
	double rate;
	int k, used = 0;

	if (port < 0 || sscanf(s, " %63[^= ] =%n", name, &used) != 1 || !used ||
	    (k = error_by_name(name)) < 0) {
		fprintf(out, "# CounterRate \"node\"[port] COUNTER=PER_SECOND (a counter of "
			     "PerformanceSet)\n");
		return;
	}
	rate = strtod(s + used, &end);
	if (end == s + used || rate < 0) {
		fprintf(out, "# rate '%s' is not a number >= 0\n", s + used);
		return;
	}
	fs_set_error_rate(f, fs_port_index(f, (uint32_t)node, (uint8_t)port), (enum fs_error)k,
			  rate);
}

static void for_ports(struct fabric *f, int node, int port, bool up,
		      void (*link_changed)(struct fabric *f, uint32_t node))
{
	struct fs_node *n = &f->nodes[node];
	unsigned first = port < 0 ? 1 : (unsigned)port, last = port < 0 ? n->nports : (unsigned)port;

	for (unsigned p = first; p <= last; p++) {
		uint32_t pi = n->first_port + p;
		struct fs_port *fp = &f->ports[pi];
		uint32_t peer = fp->peer;

		if (peer == FS_NO_PORT || fp->up == up)
			continue;
		fs_set_link(f, pi, up);
		if (link_changed) {
			link_changed(f, (uint32_t)node);
			link_changed(f, fs_node_of_port(f, peer));
		}
	}
}

/* ---- vitals (vendor.c's models) ---- */

/* "auto" (the model's value again) or a number; false if neither */
static bool value_or_auto(const char *word, bool *set, double *value)
{
	char *end;

	if (!strcasecmp(word, "auto")) {
		*set = false;
		return true;
	}
	*value = strtod(word, &end);
	if (end == word || *end)
		return false;
	*set = true;
	return true;
}

static void temperature(struct fabric *f, int node, char *s, FILE *out)
{
	struct fs_vitals *v = fs_vitals_of(f, (uint32_t)node);
	unsigned sensor;
	char word[32];
	bool set;
	double c = 0;

	if (!v || sscanf(s, "%u %31s", &sensor, word) != 2 || !value_or_auto(word, &set, &c)) {
		fprintf(out, "# Temperature \"node\" SENSOR CELSIUS|auto\n");
		return;
	}
	if (sensor == 0) {
		v->asic_set = set, v->asic_c = c;
	} else if (sensor <= 2 && f->nodes[node].type == FS_SWITCH) {
		v->amb_set[sensor - 1] = set, v->amb_c[sensor - 1] = c;
	} else if (sensor >= 64 && sensor - 64 < v->n_modules) {
		v->modules[sensor - 64].temp_set = set, v->modules[sensor - 64].temp_c = c;
	} else {
		fprintf(out, "# no sensor %u on \"%s\"\n", sensor, f->nodes[node].name);
	}
}

static void fan(struct fabric *f, int node, char *s, FILE *out)
{
	struct fs_vitals *v = fs_vitals_of(f, (uint32_t)node);
	unsigned tacho;
	char word[32];
	bool set;
	double rpm = 0;

	if (!v || f->nodes[node].type != FS_SWITCH ||
	    sscanf(s, "%u %31s", &tacho, word) != 2 || tacho >= 14 ||
	    !value_or_auto(word, &set, &rpm) || rpm < 0 || rpm > 65535) {
		fprintf(out, "# Fan \"switch\" TACHO(0-13) RPM|auto\n");
		return;
	}
	v->fan_rpm[tacho] = set ? (int)rpm : -1;
}

/* the cage's ports up or down with its module */
static void module_links(struct fabric *f, int node, unsigned module, bool up,
			 void (*link_changed)(struct fabric *f, uint32_t node))
{
	for (unsigned p = 1; p <= f->nodes[node].nports; p++)
		if (fs_module_of_port(f, (uint32_t)node, p) == (int)module)
			for_ports(f, node, (int)p, up, link_changed);
}

static void module(struct fabric *f, int node, int port, char *s, FILE *out,
		   void (*link_changed)(struct fabric *f, uint32_t node))
{
	struct fs_vitals *v = fs_vitals_of(f, (uint32_t)node);
	int m = port < 0 ? -1 : fs_module_of_port(f, (uint32_t)node, (unsigned)port);
	char what[32] = "", a[32] = "", b[32] = "";
	struct fs_module *mod;
	bool set;
	double value = 0;

	if (!v || m < 0 || sscanf(s, "%31s %31s %31s", what, a, b) < 1) {
		fprintf(out, "# Module \"node\"[port] Remove|Insert|Fault|RxPower LANE DBM|"
			     "Temperature CELSIUS\n");
		return;
	}
	mod = &v->modules[m];
	if (!strcasecmp(what, "Remove") || !strcasecmp(what, "Fault")) {
		mod->state = !strcasecmp(what, "Remove") ? FS_MODULE_UNPLUGGED : FS_MODULE_FAULT;
		mod->error_type = 6; /* high temperature */
		module_links(f, node, (unsigned)m, false, link_changed);
	} else if (!strcasecmp(what, "Insert")) {
		mod->state = FS_MODULE_PLUGGED;
		module_links(f, node, (unsigned)m, true, link_changed);
	} else if (!strcasecmp(what, "Temperature") && value_or_auto(a, &set, &value)) {
		mod->temp_set = set, mod->temp_c = value;
	} else if (!strcasecmp(what, "RxPower") && value_or_auto(b, &set, &value) &&
		   isdigit((unsigned char)a[0]) && atoi(a) < 4) {
		/* the port's lane: lanes 4k..4k+3 of the cage for its k-th port */
		unsigned ppm = f->nodes[node].type == FS_SWITCH && f->nodes[node].nports % 2 == 0
				       ? 2 : 1;
		unsigned lane = ((unsigned)port - 1) % ppm * 4 + (unsigned)atoi(a);

		mod->rx_set[lane] = set, mod->rx_dbm[lane] = value;
	} else {
		fprintf(out, "# Module \"node\"[port] Remove|Insert|Fault|RxPower LANE(0-3) DBM|auto|"
			     "Temperature CELSIUS|auto\n");
	}
}

/* Vendor "PATTERN" MODE [REG,...] */
static void vendor(struct fabric *f, char *s, FILE *out)
{
	static const char *const modes[] = {"nvidia", "other", "silent", "unsupported",
					    "noregister"};
	char *p = strchr(s, '"'), *end = p ? strchr(p + 1, '"') : NULL;
	char mode[32] = "", regs[160] = "";
	int m = -1;
	uint32_t noreg = 0;
	unsigned n = 0;

	if (end) {
		*end = 0;
		sscanf(end + 1, "%31s %159s", mode, regs);
	}
	if (end && !mode[0]) { /* the count of each node it matches */
		for (uint32_t i = 0; i < f->nnodes; i++)
			if (!fnmatch(p + 1, f->nodes[i].name, 0) || fs_find_node(f, p + 1) == (int)i)
				fprintf(out, "%s: %u vendor MADs\n", f->nodes[i].name,
					f->nodes[i].vendor_mads);
		return;
	}
	for (int k = 0; k < 5; k++)
		if (!strcasecmp(mode, modes[k]))
			m = k;
	for (char *save = NULL, *r = strtok_r(regs, ",", &save); r; r = strtok_r(NULL, ",", &save)) {
		int reg = fs_register_by_name(r);

		if (reg < 0) {
			fprintf(out, "# no register %s\n", r);
			return;
		}
		noreg |= 1u << reg;
	}
	if (!end || m < 0 || (m == FS_VENDOR_NOREG) != (noreg != 0)) {
		fprintf(out, "# Vendor \"node\" nvidia|other|silent|unsupported|noregister "
			     "REG[,REG...]\n");
		return;
	}
	for (uint32_t i = 0; i < f->nnodes; i++) {
		struct fs_vitals *v;

		if (fnmatch(p + 1, f->nodes[i].name, 0) && fs_find_node(f, p + 1) != (int)i)
			continue;
		if (!(v = fs_vitals_of(f, i)))
			continue;
		f->nodes[i].vendor = (uint8_t)m;
		v->noreg = noreg;
		n++;
	}
	fprintf(out, "# %u nodes %s\n", n, modes[m]);
}

/* Link "a"[p] "b"[q]: a cable between two ports (both named) */
static void cable(struct fabric *f, int node, int port, char *s, FILE *out,
		  void (*link_changed)(struct fabric *f, uint32_t node))
{
	int other, other_port;
	uint32_t ends[4];
	size_t n = 0;

	if (parse_target(f, &s, &other, &other_port, out))
		return;
	if (port < 1 || other_port < 1 || (other == node && other_port == port)) {
		fprintf(out, "# Link \"a\"[p] \"b\"[q]: two ports, each with its number\n");
		return;
	}
	/* the nodes whose links change: both ends, and what they were cabled to */
	for (int i = 0; i < 2; i++) {
		struct fs_port *p = fs_port_of(f, (uint32_t)(i ? other : node),
					       (uint8_t)(i ? other_port : port));

		ends[n++] = (uint32_t)(i ? other : node);
		if (p->peer != FS_NO_PORT)
			ends[n++] = fs_node_of_port(f, p->peer);
	}
	fs_recable(f, fs_port_index(f, (uint32_t)node, (uint8_t)port),
		   fs_port_index(f, (uint32_t)other, (uint8_t)other_port));
	for (size_t i = 0; link_changed && i < n; i++)
		link_changed(f, ends[i]);
}

/* Add ca|switch "name" PORTS */
static void add_node(struct fabric *f, char *s, FILE *out)
{
	char type[16] = "", *q, *end;
	unsigned long ports;
	uint32_t id;

	if (sscanf(s, "%15s", type) != 1 || !(q = strchr(s, '"')) || !(end = strchr(q + 1, '"'))) {
		fprintf(out, "# Add ca|switch \"name\" PORTS\n");
		return;
	}
	*end = 0;
	ports = strtoul(end + 1, NULL, 0);
	if ((strcasecmp(type, "ca") && strcasecmp(type, "switch")) || ports < 1 || ports > 254 ||
	    !q[1] || fs_find_node(f, q + 1) >= 0) {
		fprintf(out, "# Add ca|switch \"name\" PORTS(1-254): a new name\n");
		return;
	}
	id = fs_add_node_live(f, strcasecmp(type, "ca") ? FS_SWITCH : FS_CA, (uint8_t)ports, q + 1);
	if (id == UINT32_MAX)
		fprintf(out, "# no LIDs left\n");
	else
		fprintf(out, "# %s: GUID 0x%016llx, LID %u\n", q + 1,
			(unsigned long long)f->nodes[id].guid, f->nodes[id].lid);
}

/* MKey "node"|* KEY [PROTECT [LEASE]], or MKey "node": its violations */
static void mkey(struct fabric *f, char *s, FILE *out)
{
	char *end;
	int node = -1, port;
	unsigned long long key;
	long protect = -1, lease = -1;

	while (isspace((unsigned char)*s))
		s++;
	if (*s == '*')
		s++;
	else if (parse_target(f, &s, &node, &port, out))
		return;
	while (isspace((unsigned char)*s))
		s++;
	if (!*s && node >= 0) {
		const struct fs_node *n = &f->nodes[node];
		const struct fs_port *k = &f->ports[n->first_port + (n->type == FS_SWITCH ? 0 : 1)];

		fprintf(out, "# %s: protect bits %u, lease %u s, violations %u\n", n->name,
			k->mkey_protect, k->mkey_lease, k->mkey_violations);
		return;
	}
	key = strtoull(s, &end, 0);
	if (end == s || sscanf(end, "%ld %ld", &protect, &lease) < 0)
		protect = lease = -1; /* no key, or nothing after it */
	if (end == s || protect > 3 || lease > 65535 || protect < -1 || lease < -1) {
		fprintf(out, "# MKey \"node\"|* KEY [PROTECT(0-3) [LEASE(0-65535)]]\n");
		return;
	}
	fs_set_mkey(f, node, key, (int)protect, (int)lease);
}

/* Dead/Alive "PATTERN": every node whose name matches (fnmatch) */
static void dead_matching(struct fabric *f, char *s, bool dead, FILE *out)
{
	char *p = strchr(s, '"'), *end = p ? strchr(p + 1, '"') : NULL;
	unsigned n = 0;

	if (!end) {
		fprintf(out, "# give a quoted pattern: Dead \"leaf-r1.*\"\n");
		return;
	}
	*end = 0;
	for (uint32_t i = 0; i < f->nnodes; i++)
		if (!fnmatch(p + 1, f->nodes[i].name, 0)) {
			f->nodes[i].dead = dead;
			n++;
		}
	fprintf(out, "# %u nodes %s\n", n, dead ? "dead" : "alive");
}

/* Delay/Rate/Loss "NODE"|"PATTERN" N [M]: a slow, rate-limited or lossy
 * management processor on every node whose name matches (fnmatch) */
static void processor(struct fabric *f, const char *cmd, char *s, FILE *out)
{
	char *p = strchr(s, '"'), *end = p ? strchr(p + 1, '"') : NULL;
	long a = -1, b = 0;
	unsigned n = 0;

	if (!end || sscanf(end + 1, "%ld %ld", &a, &b) < 1 || a < 0 || b < 0 ||
	    (!strcasecmp(cmd, "Loss") && a > 100) || a > 600000 || b > 600000) {
		fprintf(out, "# %s \"node\"|\"pattern\" %s\n", cmd,
			!strcasecmp(cmd, "Delay") ? "MS [JITTER_MS]" :
			!strcasecmp(cmd, "Rate") ? "MADS_PER_SECOND [QUEUE] (0: no limit)" :
			"PERCENT");
		return;
	}
	*end = 0;
	for (uint32_t i = 0; i < f->nnodes; i++) {
		struct fs_node *nd = &f->nodes[i];

		if (fnmatch(p + 1, nd->name, 0))
			continue;
		n++;
		if (!strcasecmp(cmd, "Delay")) {
			nd->delay_ms = (uint32_t)a;
			nd->jitter_ms = (uint32_t)(b > a ? a : b);
		} else if (!strcasecmp(cmd, "Rate")) {
			nd->rate = (uint32_t)a;
			nd->queue_max = (uint32_t)b;
		} else {
			nd->loss = (uint8_t)a;
		}
	}
	fprintf(out, "# %s on %u nodes\n", cmd, n);
}

/* Ports "node": the simulator's own account of its ports, no MAD: "NODE[P]
 * up|down PEER[Q]" a line (the peer's name, "-" where none is cabled),
 * and its processor's faults and what they lost */
static void ports(struct fabric *f, int node, FILE *out)
{
	const struct fs_node *n = &f->nodes[node];

	for (unsigned p = 1; p <= n->nports; p++) {
		const struct fs_port *pt = &f->ports[n->first_port + p];

		if (pt->peer == FS_NO_PORT) {
			fprintf(out, "%s[%u] down -\n", n->name, p);
			continue;
		}
		fprintf(out, "%s[%u] %s %s[%u]\n", n->name, p, pt->up ? "up" : "down",
			f->nodes[fs_node_of_port(f, pt->peer)].name, f->ports[pt->peer].num);
	}
	fprintf(out, "%s: delay %u ms +/- %u, rate %u/s, loss %u%%: %u lost, %u waiting\n",
		n->name, n->delay_ms, n->jitter_ms, n->rate, n->loss, n->lost, n->queued);
}

/* Lft "switch" LID PORT|none, Lft "switch" clear|auto */
static void lft(struct fabric *f, int node, char *s, FILE *out)
{
	char a[16] = "", b[16] = "";
	long lid = 0, port = -1;
	char *end;

	sscanf(s, "%15s %15s", a, b);
	if (f->nodes[node].type != FS_SWITCH) {
		fprintf(out, "# Lft: %s is not a switch\n", f->nodes[node].name);
		return;
	}
	if (!strcasecmp(a, "clear")) {
		port = 255;
	} else if (strcasecmp(a, "auto")) {
		lid = strtol(a, &end, 0);
		if (*end || lid < 1 || lid > FS_MAX_LID) {
			fprintf(out, "# Lft \"switch\" LID PORT|none: bad LID '%s'\n", a);
			return;
		}
		port = !strcasecmp(b, "none") ? 255 : strtol(b, &end, 0);
		if ((strcasecmp(b, "none") && (*end || !*b)) || port < 0 || port > 255) {
			fprintf(out, "# Lft \"switch\" LID PORT|none: bad port '%s'\n", b);
			return;
		}
	}
	if (fs_set_lft(f, (uint32_t)node, (uint16_t)lid, (int)port))
		fprintf(out, "# Lft: out of memory\n");
}

/* Sm "node" STATE [PRIORITY] | freeze | thaw */
static void sm(struct fabric *f, int node, const char *s, FILE *out)
{
	static const char *const states[] = {"notactive", "discovering", "standby", "master"};
	struct fs_node *n = &f->nodes[node];
	char word[16] = "";
	int priority = -1;

	if (sscanf(s, "%15s %d", word, &priority) < 1) {
		fprintf(out, "# Sm \"node\" STATE [PRIORITY] | freeze | thaw\n");
		return;
	}
	if (!strcasecmp(word, "freeze") || !strcasecmp(word, "thaw")) {
		n->sm_frozen = !strcasecmp(word, "freeze");
		return;
	}
	if (!strcasecmp(word, "none")) {
		n->sm_state = 0;
		return;
	}
	for (int k = 0; k < 4; k++)
		if (!strcasecmp(word, states[k])) {
			n->sm_state = (uint8_t)(k + 1);
			if (priority >= 0 && priority <= 15)
				n->sm_priority = (uint8_t)priority;
			return;
		}
	fprintf(out, "# Sm: state '%s' not understood\n", word);
}

/* PortInfo "node"[port] FIELD VALUE|auto: one end's PortInfo overridden */
static void portinfo(struct fabric *f, int node, int port, const char *s, FILE *out)
{
	static const char *const states[] = {"", "Down", "Init", "Armed", "Active"};
	char field[16] = "", value[16] = "";
	struct fs_port *p;
	bool automatic;
	long v;
	int code = -1;

	if (port < 1 || sscanf(s, "%15s %15s", field, value) != 2 ||
	    !(p = fs_port_of(f, (uint32_t)node, (uint8_t)port))) {
		fprintf(out, "# PortInfo \"node\"[port] FIELD VALUE|auto\n");
		return;
	}
	automatic = !strcasecmp(value, "auto");
	v = strtol(value, NULL, 0);
	if (!strcasecmp(field, "NeighborMTU")) {
		for (int c = 1; c <= 5; c++)
			if (v == 128L << c)
				code = c;
		if (automatic || code > 0)
			p->mtu_set = (uint8_t)(automatic ? 0 : code);
	} else if (!strcasecmp(field, "OperVLs")) {
		static const long vls[] = {0, 1, 2, 4, 8, 15};

		for (int c = 1; c <= 5; c++)
			if (v == vls[c])
				code = c;
		if (automatic || code > 0)
			p->vls_set = (uint8_t)(automatic ? 0 : code);
	} else if (!strcasecmp(field, "PortState")) {
		for (int c = 2; c <= 4; c++)
			if (!strcasecmp(value, states[c]))
				code = c;
		if (automatic || code > 0)
			p->state_set = (uint8_t)(automatic ? 0 : code);
	} else if (!strcasecmp(field, "LID")) {
		if (v >= 0 && v < 0xc000)
			code = 0;
		if (automatic || code == 0) {
			p->lid_is_set = !automatic;
			p->lid_set = (uint16_t)(automatic ? 0 : v);
		}
	}
	if (!automatic && code < 0)
		fprintf(out, "# PortInfo: %s %s not understood\n", field, value);
}

void fs_console(struct fabric *f, char *line, FILE *out,
		void (*link_changed)(struct fabric *f, uint32_t node))
{
	char *s = line, *cmd;
	int node, port;

	while (isspace((unsigned char)*s))
		s++;
	if (!*s || *s == '#')
		return;
	cmd = s;
	while (*s && !isspace((unsigned char)*s))
		s++;
	if (*s)
		*s++ = 0;
	if (!strcasecmp(cmd, "help") || !strcmp(cmd, "?")) {
		fputs(help, out);
		return;
	}
	if (!strcasecmp(cmd, "Stats")) {
		fprintf(out, "answered: %lu SMPs, %lu PerfMgt, %lu SA, %lu vendor, %lu routing; "
			"%lu undeliverable\n",
			fs_answered[FS_SMP], fs_answered[FS_PERFMGT], fs_answered[FS_SA],
			fs_answered[FS_VENDOR], fs_answered[FS_ROUTING], fs_answered[FS_UNDELIVERABLE]);
		return;
	}
	if (!strcasecmp(cmd, "Vendor")) {
		vendor(f, s, out);
		return;
	}
	if (!strcasecmp(cmd, "MKey")) {
		mkey(f, s, out);
		return;
	}
	if (!strcasecmp(cmd, "Add")) {
		add_node(f, s, out);
		return;
	}
	if ((!strcasecmp(cmd, "Dead") || !strcasecmp(cmd, "Alive")) && strpbrk(s, "*?")) {
		dead_matching(f, s, !strcasecmp(cmd, "Dead"), out);
		return;
	}
	if (!strcasecmp(cmd, "Delay") || !strcasecmp(cmd, "Rate") || !strcasecmp(cmd, "Loss")) {
		processor(f, cmd, s, out);
		return;
	}
	if (parse_target(f, &s, &node, &port, out))
		return;
	if (!strcasecmp(cmd, "Link") && strchr(s, '"')) {
		cable(f, node, port, s, out, link_changed);
	} else if (!strcasecmp(cmd, "Unlink") || !strcasecmp(cmd, "ReLink") ||
		   !strcasecmp(cmd, "Link")) {
		for_ports(f, node, port, strcasecmp(cmd, "Unlink") != 0, link_changed);
	} else if (!strcasecmp(cmd, "PerformanceSet")) {
		performance_set(f, node, port, s, out);
	} else if (!strcasecmp(cmd, "CounterRate")) {
		counter_rate(f, node, port, s, out);
	} else if (!strcasecmp(cmd, "Error")) {
		long rate = strtol(s, NULL, 0);
		struct fs_node *n = &f->nodes[node];

		if (rate < 0 || rate > 100) {
			fprintf(out, "# rate %ld: give 0-100\n", rate);
			return;
		}
		for (unsigned p = port < 0 ? 0 : (unsigned)port;
		     p <= (port < 0 ? n->nports : (unsigned)port); p++)
			f->ports[n->first_port + p].err_rate = (uint8_t)rate;
	} else if (!strcasecmp(cmd, "Ports")) {
		ports(f, node, out);
	} else if (!strcasecmp(cmd, "Lft")) {
		lft(f, node, s, out);
	} else if (!strcasecmp(cmd, "Sm")) {
		sm(f, node, s, out);
	} else if (!strcasecmp(cmd, "PortInfo")) {
		portinfo(f, node, port, s, out);
	} else if (!strcasecmp(cmd, "Temperature")) {
		temperature(f, node, s, out);
	} else if (!strcasecmp(cmd, "Fan")) {
		fan(f, node, s, out);
	} else if (!strcasecmp(cmd, "Module")) {
		module(f, node, port, s, out, link_changed);
	} else if (!strcasecmp(cmd, "Dead") || !strcasecmp(cmd, "Alive")) {
		f->nodes[node].dead = !strcasecmp(cmd, "Dead");
	} else if (!strcasecmp(cmd, "Width") || !strcasecmp(cmd, "Speed")) {
		char word[16] = "";
		int code;
		struct fs_port *p;

		sscanf(s, "%15s", word);
		code = !strcasecmp(cmd, "Width") ? fs_width_by_name(word) : fs_speed_by_name(word);
		if (port < 1 || code < 0) {
			fprintf(out, "# %s \"node\"[port] VALUE: bad port or value '%s'\n", cmd, word);
			return;
		}
		p = fs_port_of(f, (uint32_t)node, (uint8_t)port);
		for (int end = 0; end < 2 && p; end++) {
			if (!strcasecmp(cmd, "Width"))
				p->width = (uint8_t)code;
			else
				p->speed = (uint8_t)code;
			p = p->peer == FS_NO_PORT ? NULL : &f->ports[p->peer];
		}
		if (link_changed) {
			link_changed(f, (uint32_t)node);
		}
	} else {
		fprintf(out, "# unknown command '%s' (help lists them)\n", cmd);
	}
}
