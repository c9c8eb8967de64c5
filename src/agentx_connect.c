/* A time limit on connect(2) to a local stream socket, for AgentX.
 *
 * net-snmp opens the AgentX session with a blocking connect() and offers no
 * way to bound it. When snmpd hangs (stopped, deadlocked), its listening
 * socket's backlog fills with the subagent's reconnection attempts, and the
 * next connect() blocks until snmpd runs again: the whole daemon (MAD sweeps,
 * trap intake) would stand still with it. So ibsnmpd's executable provides
 * connect() itself (net-snmp links the executable with -Wl,-E, so this one
 * is the one libraries call): a Unix stream socket without a send timeout of
 * its own gets CONNECT_TIMEOUT_MS for the connect (the kernel's
 * unix_stream_connect waits at most SO_SNDTIMEO for room in the backlog),
 * then its setting back; every other connect() is libc's, untouched.
 * Written by hand: no library offers a connect timeout to net-snmp's
 * transports. */
#include <dlfcn.h>
#include <errno.h>
#include <sys/socket.h>
#include <sys/time.h>

#define CONNECT_TIMEOUT_MS 250 /* a local snmpd that is alive accepts at once */

static int (*libc_connect)(int, const struct sockaddr *, socklen_t);

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
	r = libc_connect(fd, addr, len);
	saved = errno;
	if (timed)
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &before, sizeof(before));
	errno = saved;
	return r;
}
