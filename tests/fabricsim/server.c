/* fabricsim: main loop. The ibsim client protocol over Unix datagram sockets
 * in the abstract namespace: clients ask on "NAME:ctl" (connect, node info),
 * then each sends its MADs to "NAME:outN" (N its client number), which is
 * connected back to the client's "NAME:inPID". One thread, poll(). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <endian.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <infiniband/mad.h>

#include "fabricsim.h"

_Static_assert(sizeof(struct fs_ctl) == 80, "ibsim's sim_ctl");
_Static_assert(sizeof(struct fs_request) == 288, "ibsim's sim_request");
_Static_assert(offsetof(struct fs_request, mad) == 32, "ibsim's sim_request");

#define MAX_CLIENTS 128

#define MAX_QUEUED 262144 /* an SA table of a big fabric: some 60,000 segments */

struct client {
	int fd;        /* our "outN", connected to the client's "inPID" */
	uint32_t pid;
	uint32_t port; /* where it is attached */
	/* answers its socket had no room for: libumad2sim holds one lock while
	 * it writes a request and while it reads an answer, so a simulator that
	 * waited for room while the client waits to write would never move */
	struct fs_request *queue;
	uint32_t head, count, cap;
	unsigned long dropped;
};

static struct fabric fabric;
static struct client clients[MAX_CLIENTS];
static const char *sockname = "sim";
static volatile sig_atomic_t stopping;

static socklen_t make_name(struct sockaddr_un *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static socklen_t make_name(struct sockaddr_un *a, const char *fmt, ...)
{
	va_list ap;
	int n;

	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	va_start(ap, fmt);
	n = vsnprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, fmt, ap); /* abstract: NUL first */
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(a->sun_path) - 2)
		n = (int)sizeof(a->sun_path) - 3;
	/* libumad2sim's names count a NUL at each end: abstract names match
	 * byte for byte */
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n + 1);
}

static void drop_client(int id)
{
	struct client *c = &clients[id];

	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->pid = 0;
	free(c->queue);
	c->queue = NULL;
	c->head = c->count = c->cap = 0;
	for (int i = 0; i < fabric.nsubs; i++)
		if (fabric.subs[i].client == id)
			fabric.subs[i--] = fabric.subs[--fabric.nsubs];
}

/* false when the socket is full (try later), true when sent or given up */
static bool write_one(int id, const struct fs_request *r)
{
	struct client *c = &clients[id];
	ssize_t n = write(c->fd, r, sizeof(*r));

	if (n == (ssize_t)sizeof(*r))
		return true;
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS))
		return false;
	if (n < 0 && (errno == ECONNREFUSED || errno == ENOTCONN)) {
		fprintf(stderr, "fabricsim: client %d (pid %u) is gone\n", id, c->pid);
		drop_client(id);
		return true;
	}
	fprintf(stderr, "fabricsim: client %d: an answer lost: %m\n", id);
	return true;
}

/* sends what waits for a client, in order, as far as its socket takes it */
static void flush_queue(int id)
{
	struct client *c = &clients[id];

	while (c->fd >= 0 && c->count) {
		if (!write_one(id, &c->queue[c->head]))
			return;
		if (c->fd < 0)
			return;
		c->head = (c->head + 1) % c->cap;
		c->count--;
	}
}

static void send_to(int id, const struct fs_request *r)
{
	struct client *c = &clients[id];

	if (c->fd < 0)
		return;
	if (!c->count && write_one(id, r))
		return;
	if (c->count == c->cap) {
		uint32_t cap = c->cap ? c->cap * 2 : 256;
		struct fs_request *q;

		if (cap > MAX_QUEUED || !(q = malloc(sizeof(*q) * cap))) {
			if (!c->dropped++)
				fprintf(stderr, "fabricsim: client %d reads nothing: answers dropped\n",
					id);
			return;
		}
		for (uint32_t i = 0; i < c->count; i++)
			q[i] = c->queue[(c->head + i) % c->cap];
		free(c->queue);
		c->queue = q;
		c->head = 0;
		c->cap = cap;
	}
	c->queue[(c->head + c->count) % c->cap] = *r;
	c->count++;
}

/* ---- answers held by slow nodes (the console's Delay and Rate) ---- */

struct held {
	double due;
	int client;
	uint32_t pid; /* the client's: its slot may have been taken meanwhile */
	uint32_t node;
	struct fs_request r;
};

static struct held *held;     /* a binary heap by due time */
static size_t n_held, cap_held;

static void hold_answer(int client, uint32_t node, double due, const struct fs_request *r)
{
	size_t i;

	if (n_held == cap_held) {
		size_t cap = cap_held ? 2 * cap_held : 256;
		struct held *h = realloc(held, cap * sizeof(*h));

		if (!h) { /* out of memory: sent now */
			fabric.nodes[node].queued--;
			send_to(client, r);
			return;
		}
		held = h;
		cap_held = cap;
	}
	for (i = n_held++; i > 0 && held[(i - 1) / 2].due > due; i = (i - 1) / 2)
		held[i] = held[(i - 1) / 2];
	held[i] = (struct held){due, client, clients[client].pid, node, *r};
}

/* what is due by now, sent; the milliseconds to the next (-1: none) */
static int release_held(void)
{
	double now = fs_now();

	while (n_held && held[0].due <= now) {
		struct held top = held[0], last = held[--n_held];
		size_t i = 0;

		for (;;) { /* the last one sifted down from the root */
			size_t c = 2 * i + 1;

			if (c >= n_held)
				break;
			if (c + 1 < n_held && held[c + 1].due < held[c].due)
				c++;
			if (held[c].due >= last.due)
				break;
			held[i] = held[c];
			i = c;
		}
		if (n_held)
			held[i] = last;
		fabric.nodes[top.node].queued--;
		if (clients[top.client].fd >= 0 && clients[top.client].pid == top.pid)
			send_to(top.client, &top.r);
	}
	return n_held ? (int)((held[0].due - now) * 1000) + 1 : -1;
}

static bool pid_alive(uint32_t pid)
{
	return pid && (kill((pid_t)pid, 0) == 0 || errno != ESRCH);
}

static void ctl_connect(struct fs_ctl *ctl)
{
	struct fs_client_info info;
	struct sockaddr_un a;
	socklen_t len;
	int id = -1, node;
	struct client *c;

	memcpy(&info, ctl->data, sizeof(info));
	info.nodeid[sizeof(info.nodeid) - 1] = 0;
	for (int i = 0; i < MAX_CLIENTS; i++) {
		if (clients[i].pid && !pid_alive(clients[i].pid))
			drop_client(i); /* killed without a goodbye */
		if (!clients[i].pid && id < 0)
			id = i;
	}
	node = info.nodeid[0] ? fs_find_node(&fabric, info.nodeid) : (int)fabric.sm_node;
	if (id < 0 || node < 0) {
		fprintf(stderr, "fabricsim: cannot attach pid %u to \"%s\"%s\n", info.id,
			info.nodeid, id < 0 ? ": no free client slot" : ": no such node");
		ctl->type = FS_CTL_ERROR;
		return;
	}
	c = &clients[id];
	c->fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	len = make_name(&a, "%s:out%d", sockname, id);
	if (c->fd < 0 || bind(c->fd, (struct sockaddr *)&a, len) < 0) {
		fprintf(stderr, "fabricsim: cannot bind %s:out%d: %m\n", sockname, id);
		if (c->fd >= 0)
			close(c->fd);
		c->fd = -1;
		ctl->type = FS_CTL_ERROR;
		return;
	}
	len = make_name(&a, "%s:in%u", sockname, info.id);
	if (connect(c->fd, (struct sockaddr *)&a, len) < 0) {
		fprintf(stderr, "fabricsim: cannot reach client pid %u: %m\n", info.id);
		close(c->fd);
		c->fd = -1;
		ctl->type = FS_CTL_ERROR;
		return;
	}
	fcntl(c->fd, F_SETFL, O_NONBLOCK);
	c->pid = info.id;
	c->port = fs_port_index(&fabric, (uint32_t)node,
				fabric.nodes[node].type == FS_SWITCH ? 0 : 1);
	snprintf(info.nodeid, sizeof(info.nodeid), "%s", fabric.nodes[node].name);
	info.id = (uint32_t)id;
	memcpy(ctl->data, &info, sizeof(info));
}

static void ctl_answer(struct fs_ctl *ctl)
{
	struct client *c;
	uint32_t node;

	if (ctl->type == FS_CTL_CONNECT) {
		ctl_connect(ctl);
		return;
	}
	if (ctl->clientid >= MAX_CLIENTS || !clients[ctl->clientid].pid) {
		ctl->type = FS_CTL_ERROR;
		return;
	}
	c = &clients[ctl->clientid];
	node = fs_node_of_port(&fabric, c->port);
	switch (ctl->type) {
	case FS_CTL_DISCONNECT:
		drop_client((int)ctl->clientid);
		break;
	case FS_CTL_GET_PORT: {
		struct fs_port_lid pl = {fabric.ports[c->port].lid, 4};

		memcpy(ctl->data, &pl, sizeof(pl));
		break;
	}
	case FS_CTL_GET_VENDOR: {
		struct fs_vendor v = {fs_vendor_id(&fabric, node), fabric.nodes[node].device_id, 0xa0,
				       1};

		memcpy(ctl->data, &v, sizeof(v));
		break;
	}
	case FS_CTL_GET_GID: {
		uint64_t prefix = htobe64(0xfe80000000000000ULL);
		uint64_t guid = htobe64(fs_port_guid(&fabric, node, fabric.ports[c->port].num));

		memcpy(ctl->data, &prefix, 8);
		memcpy(ctl->data + 8, &guid, 8);
		break;
	}
	case FS_CTL_GET_GUID: {
		uint64_t guid = htobe64(fabric.nodes[node].guid);

		memcpy(ctl->data, &guid, 8);
		break;
	}
	case FS_CTL_GET_NODEINFO:
		fs_encode_nodeinfo(&fabric, node, fabric.ports[c->port].num, (uint8_t *)ctl->data);
		break;
	case FS_CTL_GET_PORTINFO: {
		uint8_t num = (uint8_t)ctl->data[0];

		if (num == 0 || num > fabric.nodes[node].nports)
			num = fabric.ports[c->port].num;
		fs_encode_portinfo(&fabric, node, num, fabric.ports[c->port].num,
				   (uint8_t *)ctl->data);
		break;
	}
	case FS_CTL_SET_ISSM:
		break; /* Reports go to subscribers, IsSM or not */
	case FS_CTL_GET_PKEYS:
		memset(ctl->data, 0, sizeof(ctl->data));
		ctl->data[0] = ctl->data[1] = (char)0xff;
		break;
	default:
		ctl->type = FS_CTL_ERROR;
	}
}

static void serve_ctl(int fd)
{
	struct fs_ctl ctl;
	struct sockaddr_un from;
	socklen_t fromlen = sizeof(from);
	ssize_t n;

	while ((n = recvfrom(fd, &ctl, sizeof(ctl), 0, (struct sockaddr *)&from, &fromlen)) >= 0) {
		if (n != (ssize_t)sizeof(ctl) || ctl.magic != FS_MAGIC) {
			fprintf(stderr, "fabricsim: a malformed control packet dropped\n");
		} else {
			ctl_answer(&ctl);
			if (sendto(fd, &ctl, sizeof(ctl), 0, (struct sockaddr *)&from, fromlen) < 0)
				fprintf(stderr, "fabricsim: cannot answer a control packet: %m\n");
		}
		fromlen = sizeof(from);
	}
}

static void report_to_subscribers(struct fabric *f, unsigned trap, struct fs_request *r);

struct sa_emit {
	int client;
};

static void emit_segment(void *ctx, const struct fs_request *seg)
{
	send_to(((struct sa_emit *)ctx)->client, seg);
}

static void serve_client(int id)
{
	struct fs_request r;

	/* a bounded batch: every client gets its turn */
	for (int i = 0; i < 64 && clients[id].fd >= 0; i++) {
		ssize_t n = read(clients[id].fd, &r, sizeof(r));
		struct fs_origin from = {id, clients[id].port};
		unsigned mgmt;

		if (n < 0)
			return;
		if (n != (ssize_t)sizeof(r)) {
			fprintf(stderr, "fabricsim: a packet of %zd bytes dropped\n", n);
			continue;
		}
		mgmt = r.mad[1];
		if (mgmt == IB_SA_CLASS) {
			struct sa_emit e = {id};
			int segments = fs_sa_table(&fabric, &from, &r, emit_segment, &e);

			if (segments) {
				if (segments > 0)
					fs_answered[FS_SA] += (unsigned long)segments; /* every segment */
				if (segments < 0)
					fprintf(stderr, "fabricsim: out of memory for an SA table\n");
				continue;
			}
		}
		if (mgmt == IB_SMI_CLASS) { /* a node's trap to the SM: forwarded */
			struct fs_request report;
			int trap = fs_forward_trap(&fabric, &from, &r, &report);

			if (trap >= 0) {
				report_to_subscribers(&fabric, (unsigned)trap, &report);
				continue;
			}
		}
		if (!fs_answer(&fabric, &from, &r)) {
			if (fabric.bad_mkey) { /* the SMA's trap 256, through the SM */
				struct fs_request report;

				fabric.bad_mkey = false;
				fs_trap256(&fabric, &report);
				report_to_subscribers(&fabric, 256, &report);
			}
			continue;
		}
		fs_answered[fs_class_of(r.mad, r.status)]++;
		if (fs_answer_due)
			hold_answer(id, fs_answer_node, fs_answer_due, &r);
		else
			send_to(id, &r);
	}
}

/* A Report of trap to whoever subscribed to it (the SM forwards traps as
 * Reports; here the simulator is the SM). */
static void report_to_subscribers(struct fabric *f, unsigned trap, struct fs_request *r)
{
	for (int i = 0; i < f->nsubs; i++) {
		struct client *c = &clients[f->subs[i].client];

		if (f->subs[i].trap != trap || c->fd < 0)
			continue;
		r->dlid = htons(f->ports[c->port].lid);
		send_to(f->subs[i].client, r);
	}
}

/* a switch's link changed: trap 128 */
static void link_changed(struct fabric *f, uint32_t node)
{
	struct fs_request r;

	if (f->nodes[node].type != FS_SWITCH)
		return;
	fs_trap128(f, node, &r);
	report_to_subscribers(f, 128, &r);
}

static void on_signal(int sig)
{
	(void)sig;
	stopping = 1;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: fabricsim [--layout fattree3|fattree2|rail] [--hosts N] [--radix R]\n"
		"                 [--speed SDR..XDR] [--width 1X|2X|4X|8X|12X] [--links FILE]\n"
		"                 [--sockname NAME] [--no-console] [--real-names]\n"
		"                 [--mkey KEY [--mkey-protect 0-3] [--mkey-lease SECONDS]]\n"
		"                 [--fabric-id 0-3]\n"
		"Simulates an InfiniBand subnet for libumad2sim clients (LD_PRELOAD=libumad2sim.so),\n"
		"in place of ibsim and opensm. The socket name is $IBSIM_SOCKNAME (or --sockname,\n"
		"else \"sim\"). --hosts: servers in the rail layout (8 HCAs each, one per rail).\n"
		"--real-names: NodeDescriptions as real fabrics have them (a model's switches\n"
		"alike, hosts \"HOST mlx5_N\"); the console keeps its names.\n"
		"--mkey: every port's M_Key (one for the subnet, as opensm's m_key), enforced as\n"
		"IBA says at its protect bits (default 3); the console's MKey sets one node's.\n"
		"--fabric-id: a second simulated fabric's GUIDs apart from the first's.\n"
		"Commands on stdin: help lists them.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"layout", required_argument, NULL, 'l'}, {"hosts", required_argument, NULL, 'n'},
		{"radix", required_argument, NULL, 'r'},  {"speed", required_argument, NULL, 's'},
		{"width", required_argument, NULL, 'w'},  {"links", required_argument, NULL, 'o'},
		{"sockname", required_argument, NULL, 'S'},
		{"no-console", no_argument, NULL, 'C'},   {"help", no_argument, NULL, 'h'},
		{"real-names", no_argument, NULL, 'R'},
		{"mkey", required_argument, NULL, 'K'}, {"mkey-protect", required_argument, NULL, 'P'},
		{"mkey-lease", required_argument, NULL, 'L'},
		{"fabric-id", required_argument, NULL, 'F'},
		{NULL, 0, NULL, 0}};
	unsigned long long mkey = 0;
	int mkey_protect = 3, mkey_lease = 0;
	enum fs_layout layout = FS_FATTREE3;
	unsigned hosts = 128, radix = 64;
	const char *links = NULL;
	bool console = true, real_names = false;
	char err[160], line[512];
	size_t line_len = 0;
	int ctl_fd, c, speed = FS_NDR, width = 2;
	struct sockaddr_un a;
	socklen_t len;
	double t0;

	if (getenv("IBSIM_SOCKNAME") && *getenv("IBSIM_SOCKNAME"))
		sockname = getenv("IBSIM_SOCKNAME");
	while ((c = getopt_long(argc, argv, "l:n:r:s:w:o:S:ChRK:P:L:F:", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			layout = !strcmp(optarg, "fattree2") ? FS_FATTREE2 :
				 !strcmp(optarg, "rail") ? FS_RAIL : FS_FATTREE3;
			if (layout == FS_FATTREE3 && strcmp(optarg, "fattree3")) {
				fprintf(stderr, "fabricsim: unknown layout %s\n", optarg);
				return 2;
			}
			break;
		case 'n':
			hosts = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 'r':
			radix = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 's':
			speed = fs_speed_by_name(optarg);
			break;
		case 'w':
			width = fs_width_by_name(optarg);
			break;
		case 'o':
			links = optarg;
			break;
		case 'S':
			sockname = optarg;
			break;
		case 'C':
			console = false;
			break;
		case 'R':
			real_names = true;
			break;
		case 'K':
			mkey = strtoull(optarg, NULL, 0);
			break;
		case 'P':
			mkey_protect = atoi(optarg);
			break;
		case 'L':
			mkey_lease = atoi(optarg);
			break;
		case 'F':
			fabric.fabric_id = (uint8_t)(atoi(optarg) & 3);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (speed < 0 || width < 0) {
		fprintf(stderr, "fabricsim: bad --speed or --width\n");
		return 2;
	}
	fabric.default_speed = (uint8_t)speed;
	fabric.default_width = (uint8_t)width;
	t0 = fs_now();
	if (fs_generate(&fabric, layout, radix, hosts, err, sizeof(err))) {
		fprintf(stderr, "fabricsim: %s\n", err);
		return 2;
	}
	if (real_names)
		fs_real_names(&fabric);
	if (mkey_protect < 0 || mkey_protect > 3 || mkey_lease < 0 || mkey_lease > 65535) {
		fprintf(stderr, "fabricsim: --mkey-protect 0-3, --mkey-lease 0-65535\n");
		return 2;
	}
	if (mkey)
		fs_set_mkey(&fabric, -1, mkey, mkey_protect, mkey_lease);
	if (links) {
		FILE *out = fopen(links, "w");

		if (!out) {
			fprintf(stderr, "fabricsim: %s: %m\n", links);
			return 1;
		}
		fs_write_links(&fabric, out);
		fclose(out);
	}
	for (int i = 0; i < MAX_CLIENTS; i++)
		clients[i].fd = -1;
	ctl_fd = socket(AF_UNIX, SOCK_DGRAM, 0);
	len = make_name(&a, "%s:ctl", sockname);
	if (ctl_fd < 0 || bind(ctl_fd, (struct sockaddr *)&a, len) < 0) {
		fprintf(stderr, "fabricsim: cannot bind %s:ctl: %m\n", sockname);
		return 1;
	}
	fcntl(ctl_fd, F_SETFL, O_NONBLOCK);
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	signal(SIGPIPE, SIG_IGN);
	printf("fabricsim: %u nodes (%u switches), %u ports, LIDs 1-%u, built in %.2f s\n",
	       fabric.nnodes, fabric.nswitches, fabric.nports - fabric.nnodes, fabric.max_lid,
	       fs_now() - t0);
	printf("socket %s:ctl, SM at \"%s\" (LID %u)\n", sockname,
	       fabric.nodes[fabric.sm_node].name, fabric.nodes[fabric.sm_node].lid);
	if (console)
		printf("sim> ");
	fflush(stdout);

	while (!stopping) {
		struct pollfd pfd[MAX_CLIENTS + 2];
		int ids[MAX_CLIENTS + 2], n = 0;

		pfd[n] = (struct pollfd){.fd = ctl_fd, .events = POLLIN};
		ids[n++] = -1;
		if (console) {
			pfd[n] = (struct pollfd){.fd = 0, .events = POLLIN};
			ids[n++] = -2;
		}
		for (int i = 0; i < MAX_CLIENTS; i++)
			if (clients[i].fd >= 0) {
				pfd[n] = (struct pollfd){.fd = clients[i].fd, .events = POLLIN};
				if (clients[i].count)
					pfd[n].events |= POLLOUT;
				ids[n++] = i;
			}
		int wait_ms = release_held();

		if (poll(pfd, (nfds_t)n, wait_ms >= 0 && wait_ms < 1000 ? wait_ms : 1000) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < n; i++) {
			if (!(pfd[i].revents & (POLLIN | POLLOUT | POLLHUP | POLLERR)))
				continue;
			if (ids[i] == -1) {
				serve_ctl(ctl_fd);
			} else if (ids[i] == -2) {
				ssize_t got = read(0, line + line_len, sizeof(line) - 1 - line_len);
				char *nl;

				if (got <= 0) {
					console = false; /* end of the console: keep serving */
					continue;
				}
				line_len += (size_t)got;
				line[line_len] = 0;
				while ((nl = strchr(line, '\n'))) {
					*nl = 0;
					fs_console(&fabric, line, stdout, link_changed);
					memmove(line, nl + 1, line_len - (size_t)(nl + 1 - line) + 1);
					line_len -= (size_t)(nl + 1 - line);
					printf("sim> ");
					fflush(stdout);
				}
				if (line_len == sizeof(line) - 1)
					line_len = 0; /* an overlong line: dropped */
			} else {
				if (pfd[i].revents & POLLOUT)
					flush_queue(ids[i]);
				if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR))
					serve_client(ids[i]);
			}
		}
	}
	return 0;
}
