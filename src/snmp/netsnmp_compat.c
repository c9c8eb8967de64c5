/* net-snmp's and libc's internals ibsnmpd relies on (netsnmp_compat.h).
 * Checked against net-snmp 5.9.3 (Debian 12: 5.9.3+dfsg-2+deb12u1) and
 * glibc 2.36; tests/unit/test_netsnmp_compat.c has one test per workaround.
 * None of this has a documented interface in net-snmp; each part says why
 * it is needed and what it relies on. */
#include "ibsnmpd/netsnmp.h"

#include <dlfcn.h>
#include <errno.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <net-snmp/agent/agent_callbacks.h>

#include "ibsnmpd/loop.h"
#include "ibsnmpd/netsnmp_compat.h"

/* ---- 1. a time limit on connect(2) to a local stream socket (AgentX) -----------
 *
 * net-snmp opens the AgentX session with a blocking connect() and offers no
 * way to bound it. When snmpd hangs (stopped, deadlocked), its listening
 * socket's backlog fills with the subagent's reconnection attempts, and the
 * next connect() blocks until snmpd runs again: the whole daemon (MAD
 * sweeps, trap intake) would stand still with it. So ibsnmpd provides
 * connect() itself: libnetsnmp calls connect() through the PLT and the
 * executable is linked with -Wl,-E (net-snmp-config --agent-libs), so this
 * one is the one the library calls. A Unix stream socket without a send
 * timeout of its own gets CONNECT_TIMEOUT_MS for the connect (the kernel's
 * unix_stream_connect waits at most SO_SNDTIMEO for room in the backlog),
 * then its setting back; every other connect() is libc's, untouched.
 * Relies on: the interposition above, and Linux honouring SO_SNDTIMEO in a
 * Unix-socket connect (tested: a full backlog ends the call). */

#define CONNECT_TIMEOUT_MS 250 /* a local snmpd that is alive accepts at once */

static int (*libc_connect)(int, const struct sockaddr *, socklen_t);
static unsigned long bounded_connects;

unsigned long compat_bounded_connects(void)
{
	return bounded_connects;
}

int connect(int fd, const struct sockaddr *addr, socklen_t len)
{
	struct timeval before, limit = {0, CONNECT_TIMEOUT_MS * 1000};
	socklen_t blen = sizeof(before), tlen;
	int type, r, saved;
	int timed = 0;

	if (!libc_connect) {
		libc_connect = (int (*)(int, const struct sockaddr *, socklen_t))dlsym(RTLD_NEXT,
											  "connect");
		if (!libc_connect) {
			errno = ENOSYS;
			return -1;
		}
	}
	tlen = sizeof(type);
	if (addr && addr->sa_family == AF_UNIX &&
	    !getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) && type == SOCK_STREAM &&
	    !getsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &before, &blen) && !before.tv_sec &&
	    !before.tv_usec)
		timed = !setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof(limit));
	bounded_connects += timed;
	r = libc_connect(fd, addr, len);
	saved = errno;
	if (timed)
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &before, sizeof(before));
	errno = saved;
	return r;
}

/* ---- 2. AgentX sessions that give up quickly ------------------------------------
 *
 * AgentX's ping, open and registrations are synchronous: with net-snmp's
 * default (1 s, 5 retries) a hung snmpd would hold the main loop, and with
 * it the MAD sweeps and the trap intake, for 6 s at every ping. A silent
 * master is given up on quickly instead (as keepalived does): the session
 * is closed and opened again when snmpd answers. Relies on: the subagent
 * calling SNMP_CALLBACK_SESSION_INIT with its AgentX session before using
 * it, and that session's version being AGENTX_VERSION_1, 192 | 1
 * (agent/mibgroup/agentx/protocol.h, not installed). */

#define AGENTX_SESSION_VERSION (192 | 1)

static int agentx_session_init(int major, int minor, void *serverarg, void *clientarg)
{
	netsnmp_session *s = serverarg;

	(void)major;
	(void)minor;
	(void)clientarg;
	if (s && s->version == AGENTX_SESSION_VERSION) {
		s->timeout = COMPAT_AGENTX_TIMEOUT_US;
		s->retries = 0;
	}
	return 0;
}

void compat_agentx_quick_sessions(void)
{
	snmp_register_callback(SNMP_CALLBACK_LIBRARY, SNMP_CALLBACK_SESSION_INIT,
			       agentx_session_init, NULL);
}

/* ---- 3. a context's roots, registered without telling snmpd ---------------------
 *
 * On the first registration in a context net-snmp registers the context's
 * root subtrees (0, 1, 2) and, in a subagent, sends them to snmpd through
 * the SNMPD_CALLBACK_REGISTER_OID callbacks (the AgentX client's), which
 * snmpd refuses (it made them itself): three AgentX round trips and three
 * "registering pdu failed" lines per context. They are made here first,
 * with those callbacks muted for that one call: net-snmp has no call that
 * loads a context without them. Relies on: netsnmp_register_null_context()
 * of the first root loading all three, and the callbacks being a list
 * snmp_callback_list() returns. */

static int muted_callback(int major, int minor, void *server, void *client)
{
	(void)major;
	(void)minor;
	(void)server;
	(void)client;
	return 0;
}

void compat_context_roots(const char *context)
{
	struct snmp_gen_callback *list =
		snmp_callback_list(SNMP_CALLBACK_APPLICATION, SNMPD_CALLBACK_REGISTER_OID);
	SNMPCallback *saved[8];
	size_t n = 0;
	oid root[1] = {1};

	for (struct snmp_gen_callback *cb = list; cb && n < 8; cb = cb->next, n++) {
		saved[n] = cb->sc_callback;
		cb->sc_callback = muted_callback;
	}
	/* loading the first one loads all three */
	netsnmp_register_null_context(snmp_duplicate_objid(root, 1), 1, context);
	n = 0;
	for (struct snmp_gen_callback *cb = list; cb && n < 8; cb = cb->next, n++)
		cb->sc_callback = saved[n];
}

/* ---- 4. the default context first -----------------------------------------------
 *
 * net-snmp keeps a registry per context in a list, newest first, and finds
 * a request's context by strcmp down that list: with a context per node
 * every request of the default context walked past all of them (612
 * contexts: 44% of a direct-mode walk in strcmp, perf). The default context
 * is put back at the head. Relies on: context_subtrees, libnetsnmpagent's
 * list (exported, not declared in its headers), searched from its head. */

extern subtree_context_cache *context_subtrees;

void compat_default_context_first(void)
{
	for (subtree_context_cache **pp = &context_subtrees; *pp; pp = &(*pp)->next) {
		subtree_context_cache *c = *pp;

		if (c->context_name && !c->context_name[0]) {
			*pp = c->next;
			c->next = context_subtrees;
			context_subtrees = c;
			return;
		}
	}
}

/* ---- 5. a write to a stream socket never waits ----------------------------------
 *
 * net-snmp writes to its stream sockets (AgentX's Unix socket to snmpd, TCP
 * clients and sinks in direct mode) with a blocking sendto() and loops until
 * all is written: a peer that stops reading (snmpd blocked writing answers
 * nobody reads, a stopped snmpd, a TCP client that never reads) would hold
 * the main loop for good. net-snmp has no send queue and no option for
 * this, so ibsnmpd provides sendto() (as connect() above): on a stream
 * socket it writes only what fits now (MSG_DONTWAIT) and, to keep a
 * message whole, only when the socket has room for all of it; otherwise it
 * fails with EAGAIN, which net-snmp treats as a failed send (the request
 * times out, a response is lost, the peer asks again). A message that went
 * out in part would corrupt the stream: the connection is shut down and
 * net-snmp sees it close (AgentX reconnects). Every other sendto() is
 * libc's, untouched. Relies on: the interposition above, net-snmp's Unix
 * and TCP transports sending with sendto() (UDP already sends with
 * MSG_DONTWAIT), and Linux's SIOCOUTQ: on a Unix stream socket the bytes
 * (with their buffers' overhead) the peer has not read, which the kernel
 * holds against SO_SNDBUF; on TCP the bytes not yet acknowledged. */

/* a message's buffers cost about this much beyond its bytes (Unix sockets
 * count each skb's truesize) */
#define STREAM_MESSAGE_OVERHEAD 2048

static ssize_t (*libc_sendto)(int, const void *, size_t, int, const struct sockaddr *,
			      socklen_t);
static unsigned long writes_refused, streams_shut;

void compat_get_write_stats(struct compat_write_stats *st)
{
	st->refused = writes_refused;
	st->shut = streams_shut;
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to,
	       socklen_t tolen)
{
	int type = 0;
	socklen_t tlen = sizeof(type);
	ssize_t r;
	long room;

	if (!libc_sendto) {
		libc_sendto = (ssize_t(*)(int, const void *, size_t, int, const struct sockaddr *,
					  socklen_t))dlsym(RTLD_NEXT, "sendto");
		if (!libc_sendto) {
			errno = ENOSYS;
			return -1;
		}
	}
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) || type != SOCK_STREAM)
		return libc_sendto(fd, buf, len, flags, to, tolen);
	room = loop_stream_room(fd);
	if (room >= 0 && (size_t)room < len + STREAM_MESSAGE_OVERHEAD) {
		writes_refused++;
		errno = EAGAIN;
		return -1;
	}
	r = libc_sendto(fd, buf, len, flags | MSG_DONTWAIT | MSG_NOSIGNAL, to, tolen);
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
		writes_refused++;
		return -1;
	}
	if (r >= 0 && (size_t)r < len) {
		streams_shut++;
		shutdown(fd, SHUT_RDWR);
		errno = EPIPE;
		return -1;
	}
	return r;
}
