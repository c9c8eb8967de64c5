/* The Prometheus listener (prom_internal.h): libmicrohttpd, driven by the
 * main loop. MHD runs without a thread of its own, on epoll: its one epoll
 * descriptor is in net-snmp's select set (register_readfd), and MHD_run is
 * called when that is readable and when MHD_get_timeout says (a one-shot
 * alarm). So every callback here, the renderer's included, runs on the
 * main thread between SNMP requests, and reads the snapshots as the MIB
 * handlers do. (MHD wants to run again at once while a connection has
 * more to send: an eventfd in the same select set says so, see run().)
 *
 * A scrape holds the snapshots it began with (cache_snapshot_hold) and is
 * rendered a block at a time, as the socket takes it: a SNMP request waits
 * for at most one block, a slow scraper costs memory (held snapshots) but
 * no time.
 *
 * prometheusWebConfig (prom_web.c) adds TLS (MHD's GnuTLS: the
 * certificate and key in memory, the versions and suites as a GnuTLS
 * priority string, the client's certificate asked, required and checked
 * per client_auth_type by a verify function set on each session before
 * its handshake), basic auth (prom_auth.c: bcrypt off the main thread,
 * the request suspended meanwhile), its headers and its rate limit. A
 * SIGHUP that changes any of it starts MHD again on the same listening
 * socket.
 *
 * Limits, each counted by reason (ibsnmpd_http_refused_total):
 * PROM_CONNECTIONS_MAX connections, PROM_PER_ADDRESS_MAX of one address
 * (closed at once past them); a request sent whole within
 * PROM_REQUEST_MAX_S of the connection (or of the answer before, on a
 * connection kept alive), else cut; a header within PROM_REQUEST_MEMORY
 * (MHD answers 431); PROM_SCRAPES_MAX scrapes at once (503), but a scrape
 * from an address with none under way cuts the slowest if it reads under
 * PROM_SCRAPE_EVICT_RATE (so that slow readers cannot keep Prometheus out;
 * no limit per address: the shards of a big fabric are scraped at once
 * from one Prometheus); a scrape done within PROM_SCRAPE_MAX_S and read at
 * PROM_SCRAPE_MIN_RATE on average after its first PROM_SCRAPE_GRACE_S
 * (else cut); PROM_AUTH_JOBS passwords checked at once (503); MHD closes
 * a connection idle for PROM_IDLE_S. */
#include "ibsnmpd/netsnmp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <linux/sockios.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <microhttpd.h>

#include "prom_internal.h"

#define PROM_SCRAPES_MAX 4
/* with every place taken, a scrape this old reading slower than this gives
 * its place to a new one: Prometheus reads at the network's pace, a
 * scraper under a megaoctet a second keeps others out */
#define PROM_SCRAPE_EVICT_S 1
#define PROM_SCRAPE_EVICT_RATE (1024 * 1024)
#define PROM_SCRAPE_MAX_S 120
#define PROM_SCRAPE_GRACE_S 10
#define PROM_SCRAPE_MIN_RATE (64 * 1024) /* octets a second */
#define PROM_IDLE_S 30
#define PROM_REQUEST_MAX_S 10
#define PROM_CONNECTIONS_MAX 32
#define PROM_PER_ADDRESS_MAX 8
#define PROM_REQUEST_MEMORY (64 * 1024)
/* A block of text per write: rendered in about a millisecond */
#define PROM_BLOCK (256 * 1024)
/* MHD's turn of the main loop, at most */
#define PROM_RUN_SLICE_S 0.002
#define SAID_EVERY_S 60
#define REALM "ibsnmpd"

const char *const prom_http_refusal_names[PROM_HTTP_REFUSALS] = {
	[PROM_HTTP_OUTSIDE_ALLOW] = "outside_allow",
	[PROM_HTTP_CONNECTIONS] = "connections",
	[PROM_HTTP_PER_ADDRESS] = "connections_per_address",
	[PROM_HTTP_NO_REQUEST] = "no_request",
	[PROM_HTTP_SLOW_REQUEST] = "slow_request",
	[PROM_HTTP_UNAUTHORIZED] = "unauthorized",
	[PROM_HTTP_AUTH_BUSY] = "auth_busy",
	[PROM_HTTP_RATE_LIMITED] = "rate_limited",
	[PROM_HTTP_SCRAPES] = "scrapes",
	[PROM_HTTP_SLOW_SCRAPE] = "slow_scrape",
	[PROM_HTTP_BAD_CERTIFICATE] = "bad_certificate",
};

/* A connection, from MHD's STARTED notice to its CLOSED one */
struct conn {
	struct conn *prev, *next;
	struct prom_http *h;
	struct MHD_Connection *c;
	struct sockaddr_storage addr;
	double deadline;        /* of the request, while none is answered */
	bool in_request, saw_request;
	int fd;                 /* its socket */
	/* TLS: the records GnuTLS made, sent together (tls_push) */
	char *out;
	size_t out_len;
	int broken;             /* the errno a send ended with */
};

/* A request, from its header to MHD's COMPLETED notice */
struct request {
	struct prom_http *h;
	struct MHD_Connection *c;
	enum { AUTH_NEW, AUTH_WAITING, AUTH_PASSED, AUTH_FAILED, AUTH_ABANDONED } auth;
	char user[PROM_WEB_USER_MAX + 1];
	char addr[64];
};

/* One scrape: what it holds and where its text is. */
struct scrape {
	struct prom_http *h;
	struct MHD_Connection *c;
	struct prom_sources src;
	struct prom_render render;
	struct sockaddr_storage addr;
	double started;
	uint64_t sent;          /* octets the socket has taken */
};

/* A log line said at most once a minute, with how many since */
struct said {
	unsigned long count;
	time_t at;
};

struct prom_http {
	int listen_fd;
	char listen_text[64];
	struct MHD_Daemon *daemon;
	int epoll_fd;
	int wakeup_fd;                /* an eventfd: run again after the next select */
	unsigned alarm;               /* MHD's next timeout, 0: none */
	unsigned tick;                /* the limits' check, once a second */
	struct prom_feed feed;
	struct prom_cidr allow[PROM_ALLOW_MAX];
	size_t n_allow;
	bool allow_any;               /* no prometheusAllow, and the web config authenticates */
	struct prom_web *web;         /* NULL: plain HTTP, no users */
	struct prom_auth *auth;       /* NULL: no basic_auth_users */
	double tokens, tokens_at;     /* rate_limit's bucket */
	struct conn *conns;
	unsigned n_conns;
	struct draining *drainings;
	struct scrape *scrapes[PROM_SCRAPES_MAX];
	struct prom_http_stats stats;
	struct said outside, logins, certs, slow;
	bool starting;                /* MHD's messages are errors until it listens */
};

/* libmicrohttpd's messages: printf formats of its own */
__attribute__((format(printf, 2, 0)))
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct prom_http *h = cls;
	char line[512];

	vsnprintf(line, sizeof(line), fmt, ap);
	if (h->starting)
		snmp_log(LOG_ERR, "prometheusListen: %s%s", line,
			 line[0] && line[strlen(line) - 1] == '\n' ? "" : "\n");
	else
		DEBUGMSGTL(("ibsnmpd:http", "%s%s", line,
			    line[0] && line[strlen(line) - 1] == '\n' ? "" : "\n"));
}

/* One more of s; true when a line should say so now (the first, then at
 * most one a minute) */
static bool say(struct said *s)
{
	time_t now = monotonic_whole_seconds();

	s->count++;
	if (s->count > 1 && now - s->at < SAID_EVERY_S)
		return false;
	s->at = now;
	return true;
}

static bool same_address(const struct sockaddr_storage *a, const struct sockaddr *b)
{
	if (a->ss_family != b->sa_family)
		return false;
	if (b->sa_family == AF_INET)
		return !memcmp(&((const struct sockaddr_in *)a)->sin_addr,
			       &((const struct sockaddr_in *)b)->sin_addr, sizeof(struct in_addr));
	if (b->sa_family == AF_INET6)
		return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
			       &((const struct sockaddr_in6 *)b)->sin6_addr,
			       sizeof(struct in6_addr));
	return false;
}

static void copy_address(struct sockaddr_storage *to, const struct sockaddr *from)
{
	memset(to, 0, sizeof(*to));
	memcpy(to, from, from->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
						     : sizeof(struct sockaddr_in));
}

/* ---- who may connect -------------------------------------------------------------- */

static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t len)
{
	struct prom_http *h = cls;
	unsigned from_address = 0;
	char text[64];

	(void)len;
	if (!h->allow_any && !prom_addr_allowed(addr, h->allow, h->n_allow)) {
		h->stats.refused[PROM_HTTP_OUTSIDE_ALLOW]++;
		if (say(&h->outside)) {
			prom_addr_text(addr, text, sizeof(text));
			snmp_log(LOG_WARNING, "prometheusListen: refused %lu connection(s) from "
				 "outside prometheusAllow (the last from %s)\n", h->outside.count,
				 text);
		}
		return MHD_NO;
	}
	if (h->n_conns >= PROM_CONNECTIONS_MAX) {
		h->stats.refused[PROM_HTTP_CONNECTIONS]++;
		return MHD_NO;
	}
	for (const struct conn *k = h->conns; k; k = k->next)
		from_address += same_address(&k->addr, addr);
	if (from_address >= PROM_PER_ADDRESS_MAX) {
		h->stats.refused[PROM_HTTP_PER_ADDRESS]++;
		return MHD_NO;
	}
	return MHD_YES;
}

/* ---- TLS: the client's certificate ------------------------------------------------ */

static struct conn *conn_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *info =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return info ? info->socket_context : NULL;
}

/* Whether one of the certificate's subject alternative names (DNS, IP,
 * e-mail, URI) is one of client_allowed_sans, exactly */
static bool san_allowed(const gnutls_datum_t *der, char *const *sans, size_t n_sans)
{
	gnutls_x509_crt_t crt;
	bool found = false;

	if (gnutls_x509_crt_init(&crt))
		return false;
	if (gnutls_x509_crt_import(crt, der, GNUTLS_X509_FMT_DER)) {
		gnutls_x509_crt_deinit(crt);
		return false;
	}
	for (unsigned seq = 0; !found; seq++) {
		char name[512], text[INET6_ADDRSTRLEN];
		size_t size = sizeof(name) - 1;
		int type = gnutls_x509_crt_get_subject_alt_name(crt, seq, name, &size, NULL);

		if (type == GNUTLS_E_REQUESTED_DATA_NOT_AVAILABLE)
			break;
		if (type == GNUTLS_E_SHORT_MEMORY_BUFFER)
			continue;
		if (type < 0)
			break;
		if (type == GNUTLS_SAN_IPADDRESS) {
			if (!inet_ntop(size == 16 ? AF_INET6 : AF_INET, name, text, sizeof(text)) ||
			    (size != 4 && size != 16))
				continue;
			snprintf(name, sizeof(name), "%s", text);
		} else if (type == GNUTLS_SAN_DNSNAME || type == GNUTLS_SAN_RFC822NAME ||
			   type == GNUTLS_SAN_URI) {
			name[size] = '\0';
		} else {
			continue;
		}
		for (size_t i = 0; i < n_sans && !found; i++)
			found = !strcmp(sans[i], name);
	}
	gnutls_x509_crt_deinit(crt);
	return found;
}

static void certificate_refused(struct prom_http *h, struct conn *k, const char *why)
{
	char text[64];

	h->stats.refused[PROM_HTTP_BAD_CERTIFICATE]++;
	if (!say(&h->certs))
		return;
	prom_addr_text((struct sockaddr *)&k->addr, text, sizeof(text));
	snmp_log(LOG_WARNING, "prometheusWebConfig: refused %lu client certificate(s) (the last "
		 "from %s: %s)\n", h->certs.count, text, why);
}

/* GnuTLS' check of the client's certificate, in the handshake: as
 * client_auth_type says. A certificate required and not sent fails in
 * GnuTLS itself (GNUTLS_CERT_REQUIRE). */
static int verify_client(gnutls_session_t session)
{
	struct conn *k = conn_of(gnutls_session_get_ptr(session));
	const struct prom_web_config *w;
	const gnutls_datum_t *certs;
	unsigned n = 0, status = 0;

	if (!k || !k->h->web)
		return -1;
	w = &k->h->web->cfg;
	certs = gnutls_certificate_get_peers(session, &n);
	if (!certs || !n)
		return 0;
	if (w->client_auth == PROM_CLIENT_VERIFY_IF_GIVEN ||
	    w->client_auth == PROM_CLIENT_REQUIRE_VERIFY) {
		if (gnutls_certificate_verify_peers2(session, &status) < 0) {
			certificate_refused(k->h, k, "cannot be checked");
			return -1;
		}
		if (status) {
			gnutls_datum_t text = {NULL, 0};

			gnutls_certificate_verification_status_print(status, GNUTLS_CRT_X509, &text,
								     0);
			certificate_refused(k->h, k, text.data ? (char *)text.data : "not valid");
			gnutls_free(text.data);
			return -1;
		}
	}
	if (w->n_sans && !san_allowed(&certs[0], w->sans, w->n_sans)) {
		certificate_refused(k->h, k, "none of its names is in client_allowed_sans");
		return -1;
	}
	return 0;
}

/* ---- TLS: records sent together ---------------------------------------------------------- */

/* GnuTLS sends a record (16 KiB at most) per send(), and MHD one record a
 * turn: a scrape of 70 MB was 4,300 sends and cost twice plain HTTP's
 * time. So the records of a connection are gathered here (GnuTLS' push
 * function) and sent TLS_OUT_FLUSH at a time, and what is left after each
 * turn of MHD; a connection closed with records not sent yet keeps its
 * socket (a dup) until they are (struct draining). */
#define TLS_OUT_MAX (512 * 1024)
#define TLS_OUT_FLUSH (256 * 1024)
/* room past TLS_OUT_MAX for an alert (GnuTLS' close_notify when MHD closes) */
#define TLS_OUT_SLACK 4096
#define DRAIN_S 10

/* A closed connection's records not sent yet: its socket (a dup of MHD's)
 * until they are, or until the reader has taken nothing (of the records
 * or of the socket's queue) for DRAIN_S: a
 * slow reader that keeps reading gets the whole scrape (a fixed 10 s cut
 * one that read 1.6 MB/s on a loaded machine), a stalled one is let go */
struct draining {
	struct draining *next;
	int fd;
	char *out;
	size_t out_len;
	size_t left;  /* out_len and what the kernel still holds, when last seen */
	double until;
};

static struct prom_http *listener; /* the one listener, for GnuTLS' push */

static struct conn *conn_by_fd(const struct prom_http *h, int fd)
{
	for (struct conn *k = h ? h->conns : NULL; k; k = k->next)
		if (k->fd == fd)
			return k;
	return NULL;
}

/* As much of out as the socket takes now; -1 when it never will */
static int send_out(int fd, char *out, size_t *len, int *broken)
{
	while (*len) {
		ssize_t n = send(fd, out, *len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				return 0;
			*broken = errno;
			*len = 0;
			return -1;
		}
		memmove(out, out + n, *len - (size_t)n);
		*len -= (size_t)n;
	}
	return 0;
}

static ssize_t tls_push(gnutls_transport_ptr_t ptr, const giovec_t *iov, int iovcnt)
{
	int fd = (int)(intptr_t)ptr;
	struct conn *k = conn_by_fd(listener, fd);
	size_t total = 0;

	for (int i = 0; i < iovcnt; i++)
		total += iov[i].iov_len;
	if (!k) {
		struct msghdr m = {.msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iovcnt};

		return sendmsg(fd, &m, MSG_NOSIGNAL);
	}
	if (k->broken) {
		errno = k->broken;
		return -1;
	}
	if (!k->out && !(k->out = malloc(TLS_OUT_MAX + TLS_OUT_SLACK))) {
		errno = ENOMEM;
		return -1;
	}
	if (k->out_len + total > TLS_OUT_MAX)
		send_out(fd, k->out, &k->out_len, &k->broken);
	if (k->broken || k->out_len + total > TLS_OUT_MAX + (total <= 256 ? TLS_OUT_SLACK : 0)) {
		errno = k->broken ? k->broken : EAGAIN;
		return -1;
	}
	for (int i = 0; i < iovcnt; i++) {
		memcpy(k->out + k->out_len, iov[i].iov_base, iov[i].iov_len);
		k->out_len += iov[i].iov_len;
	}
	if (k->out_len >= TLS_OUT_FLUSH)
		send_out(fd, k->out, &k->out_len, &k->broken);
	return (ssize_t)total;
}

static void draining_end(struct prom_http *h, struct draining *l)
{
	for (struct draining **p = &h->drainings; *p; p = &(*p)->next)
		if (*p == l) {
			*p = l->next;
			break;
		}
	unregister_writefd(l->fd);
	close(l->fd);
	free(l->out);
	free(l);
}

/* What l has still to deliver: its records and the socket's send queue.
 * The reader's progress is this going down: the socket is writable again
 * only once half its (autotuned, megaoctets) buffer is free, which a slow
 * reader takes longer than DRAIN_S to read while reading all along. */
static size_t draining_left(const struct draining *l)
{
	int queued = 0;

	if (ioctl(l->fd, SIOCOUTQ, &queued) || queued < 0)
		queued = 0;
	return l->out_len + (size_t)queued;
}

/* Whether the reader took something since last seen (then it has DRAIN_S
 * more) */
static bool draining_progressed(struct draining *l, double now)
{
	size_t left = draining_left(l);

	if (left >= l->left)
		return false;
	l->left = left;
	l->until = now + DRAIN_S;
	return true;
}

static void on_draining_writable(int fd, void *arg)
{
	struct draining *l = arg;
	int broken = 0;

	send_out(fd, l->out, &l->out_len, &broken);
	if (!l->out_len)
		draining_end(listener, l);
	else
		draining_progressed(l, monotonic_seconds());
}

/* k closes with records not sent: they go on (MHD closes its descriptor) */
static void draining_start(struct prom_http *h, struct conn *k)
{
	struct draining *l = calloc(1, sizeof(*l));

	if (!l || (l->fd = dup(k->fd)) < 0) {
		free(l);
		return; /* the records are lost: the scraper sees the end cut */
	}
	l->out = k->out;
	l->out_len = k->out_len;
	l->left = draining_left(l);
	l->until = monotonic_seconds() + DRAIN_S;
	if (register_writefd(l->fd, on_draining_writable, l)) {
		close(l->fd);
		free(l);
		return;
	}
	DEBUGMSGTL(("ibsnmpd:http", "closed with %zu octets of TLS records to send: draining\n",
		    l->out_len));
	k->out = NULL;
	k->out_len = 0;
	l->next = h->drainings;
	h->drainings = l;
}

/* ---- connections ----------------------------------------------------------------------- */

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			  enum MHD_ConnectionNotificationCode code)
{
	struct prom_http *h = cls;
	struct conn *k = *socket_context;

	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *addr =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
		const union MHD_ConnectionInfo *tls =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);

		k = calloc(1, sizeof(*k));
		if (!k)
			return; /* not tracked: its limits are MHD's own */
		k->h = h;
		k->c = c;
		k->fd = -1;
		{
			const union MHD_ConnectionInfo *fd =
				MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);

			if (fd)
				k->fd = fd->connect_fd;
		}
		if (addr && addr->client_addr)
			copy_address(&k->addr, addr->client_addr);
		k->deadline = monotonic_seconds() + PROM_REQUEST_MAX_S;
		k->next = h->conns;
		if (h->conns)
			h->conns->prev = k;
		h->conns = k;
		h->n_conns++;
		*socket_context = k;
		if (tls && tls->tls_session && h->web) {
			gnutls_session_t s = tls->tls_session;

			switch (h->web->cfg.client_auth) {
			case PROM_CLIENT_NONE:
				gnutls_certificate_server_set_request(s, GNUTLS_CERT_IGNORE);
				break;
			case PROM_CLIENT_REQUEST:
			case PROM_CLIENT_VERIFY_IF_GIVEN:
				gnutls_certificate_server_set_request(s, GNUTLS_CERT_REQUEST);
				break;
			default:
				gnutls_certificate_server_set_request(s, GNUTLS_CERT_REQUIRE);
				break;
			}
			if (h->web->cfg.client_auth != PROM_CLIENT_NONE)
				gnutls_session_set_verify_function(s, verify_client);
			gnutls_transport_set_vec_push_function(s, tls_push);
		}
		return;
	}
	if (!k)
		return;
	if (!k->saw_request)
		h->stats.refused[PROM_HTTP_NO_REQUEST]++;
	if (k->out_len)
		send_out(k->fd, k->out, &k->out_len, &k->broken);
	if (k->out_len && !k->broken)
		draining_start(h, k);
	free(k->out);
	if (k->prev)
		k->prev->next = k->next;
	else
		h->conns = k->next;
	if (k->next)
		k->next->prev = k->prev;
	h->n_conns--;
	free(k);
	*socket_context = NULL;
}

/* ---- the main loop drives MHD ------------------------------------------------------ */

static void run(struct prom_http *h);
static bool cut_slow_scrapes(struct prom_http *h, double now);

static void on_timeout(unsigned reg, void *arg)
{
	struct prom_http *h = arg;

	(void)reg;
	h->alarm = 0;
	run(h);
}

static void on_readable(int fd, void *arg)
{
	(void)fd;
	run(arg);
}

static void on_wakeup(int fd, void *arg)
{
	uint64_t n;

	if (read(fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
		snmp_log(LOG_ERR, "prometheusListen: wakeup: %s\n", strerror(errno));
	run(arg);
}

/* MHD's work now, for at most PROM_RUN_SLICE_S, then when it wants to run
 * again: at once while a connection has more to send (its socket took what
 * was written), through the wakeup descriptor, so that the main loop's
 * select (and the SNMP requests waiting there) comes between two slices;
 * net-snmp runs an alarm due now again and again before it selects. Else at
 * MHD's next timeout. (A slice, not one MHD_run: over TLS an MHD_run sends
 * one record, 16 KiB, and a pass of the main loop a record made TLS twice
 * as slow as plain HTTP.) */
static void run(struct prom_http *h)
{
	static const uint64_t one = 1;
	MHD_UNSIGNED_LONG_LONG ms;
	struct timeval when;
	double until = monotonic_seconds() + PROM_RUN_SLICE_S;
	enum MHD_Result timed;

	do {
		MHD_run(h->daemon);
		for (struct conn *k = h->conns; k; k = k->next)
			if (k->out_len)
				send_out(k->fd, k->out, &k->out_len, &k->broken);
		timed = MHD_get_timeout(h->daemon, &ms);
	} while (timed == MHD_YES && !ms && monotonic_seconds() < until);
	if (h->alarm) {
		snmp_alarm_unregister(h->alarm);
		h->alarm = 0;
	}
	if (timed != MHD_YES)
		return;
	if (!ms) {
		if (write(h->wakeup_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
			snmp_log(LOG_ERR, "prometheusListen: wakeup: %s\n", strerror(errno));
		return;
	}
	if (ms > 60000)
		ms = 60000;
	when.tv_sec = (time_t)(ms / 1000);
	when.tv_usec = (suseconds_t)(ms % 1000 * 1000);
	h->alarm = snmp_alarm_register_hr(when, 0, on_timeout, h);
}

/* Once a second: a connection whose request is late is cut (shut down:
 * MHD sees it closed and lets it go) */
static void on_tick(unsigned reg, void *arg)
{
	struct prom_http *h = arg;
	double now = monotonic_seconds();
	bool cut = false;

	(void)reg;
	cut = cut_slow_scrapes(h, now);
	for (struct draining *l = h->drainings, *next; l; l = next) {
		next = l->next;
		if (now > l->until && !draining_progressed(l, now))
			draining_end(h, l);
	}
	for (struct conn *k = h->conns; k; k = k->next) {
		const union MHD_ConnectionInfo *fd;

		if (k->in_request || now < k->deadline)
			continue;
		fd = MHD_get_connection_info(k->c, MHD_CONNECTION_INFO_CONNECTION_FD);
		if (!fd)
			continue;
		shutdown(fd->connect_fd, SHUT_RDWR);
		k->deadline = now + PROM_IDLE_S; /* once */
		h->stats.refused[PROM_HTTP_SLOW_REQUEST]++;
		cut = true;
	}
	if (cut)
		run(h);
}

/* ---- a scrape ---------------------------------------------------------------------- */

static ssize_t scrape_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct scrape *s = cls;
	size_t n;

	s->sent = pos; /* what MHD has written: it asks for more once it has */
	n = prom_render_next(&s->render, buf, max);
	return n ? (ssize_t)n : MHD_CONTENT_READER_END_OF_STREAM;
}

/* The scraper's pace, octets a second: what it has taken, not what the
 * kernel's send buffer (megaoctets on loopback) and the TLS records not
 * sent yet hold */
static double scrape_rate(const struct prom_http *h, const struct scrape *s, double now,
			  int *fd_out)
{
	const union MHD_ConnectionInfo *fd =
		MHD_get_connection_info(s->c, MHD_CONNECTION_INFO_CONNECTION_FD);
	double took = now - s->started, taken = (double)s->sent;
	int queued = 0;

	*fd_out = fd ? fd->connect_fd : -1;
	if (fd && !ioctl(fd->connect_fd, SIOCOUTQ, &queued)) {
		const struct conn *k = conn_by_fd(h, fd->connect_fd);

		taken -= queued + (k ? (double)k->out_len : 0);
	}
	return took > 0 ? (taken > 0 ? taken : 0) / took : 0;
}

/* A scrape cut: its connection shut down (MHD sees it closed, ends the
 * response and lets its snapshots go); its place free now */
static void scrape_cut(struct prom_http *h, size_t slot, int fd)
{
	if (fd >= 0)
		shutdown(fd, SHUT_RDWR);
	h->scrapes[slot] = NULL;
	h->stats.refused[PROM_HTTP_SLOW_SCRAPE]++;
}

/* Once a second: a scrape read under PROM_SCRAPE_MIN_RATE after its first
 * PROM_SCRAPE_GRACE_S, or longer than PROM_SCRAPE_MAX_S, is cut */
static bool cut_slow_scrapes(struct prom_http *h, double now)
{
	bool cut = false;

	for (size_t i = 0; i < PROM_SCRAPES_MAX; i++) {
		const struct scrape *s = h->scrapes[i];
		double took, rate;
		int fd;

		if (!s)
			continue;
		took = now - s->started;
		rate = scrape_rate(h, s, now, &fd);
		if (took <= PROM_SCRAPE_MAX_S &&
		    (took <= PROM_SCRAPE_GRACE_S || rate >= PROM_SCRAPE_MIN_RATE))
			continue;
		scrape_cut(h, i, fd);
		cut = true;
		if (say(&h->slow))
			snmp_log(LOG_WARNING, "prometheusListen: cut %lu scrape(s) read too slowly "
				 "(under %d KiB/s, or over %d s)\n", h->slow.count,
				 PROM_SCRAPE_MIN_RATE / 1024, PROM_SCRAPE_MAX_S);
	}
	return cut;
}

static void scrape_free(void *cls)
{
	struct scrape *s = cls;

	prom_render_end(&s->render);
	s->h->feed.end(s->h->feed.arg, &s->src);
	for (size_t i = 0; i < PROM_SCRAPES_MAX; i++)
		if (s->h->scrapes[i] == s)
			s->h->scrapes[i] = NULL;
	free(s);
}

static void add_headers(const struct prom_http *h, struct MHD_Response *r)
{
	if (!h->web)
		return;
	for (size_t i = 0; i < PROM_WEB_HEADERS; i++)
		if (h->web->cfg.headers[i] && h->web->cfg.headers[i][0])
			MHD_add_response_header(r, prom_web_header_names[i], h->web->cfg.headers[i]);
}

static unsigned scrapes_from(const struct prom_http *h, const struct sockaddr_storage *addr)
{
	unsigned n = 0;

	for (size_t i = 0; i < PROM_SCRAPES_MAX; i++)
		n += h->scrapes[i] && same_address(&h->scrapes[i]->addr, (const struct sockaddr *)addr);
	return n;
}

/* Every place taken, and the newcomer's address has none of them: a
 * scrape under way for PROM_SCRAPE_EVICT_S and reading under
 * PROM_SCRAPE_EVICT_RATE, or one younger than that of an address holding
 * two places or more (too young to judge, and its address keeps one), is
 * cut (its connection shut down: MHD closes it and lets its snapshots go)
 * and gives its place; the slowest of the address holding the most. (Only
 * an address with none may cut: slow readers of two addresses would
 * otherwise cut each other's and keep every place young.) */
static size_t evict_slowest(struct prom_http *h, const struct sockaddr_storage *from)
{
	double now = monotonic_seconds(), slowest = PROM_SCRAPE_EVICT_RATE;
	unsigned most = 0;
	size_t victim = PROM_SCRAPES_MAX;
	int victim_fd = -1;

	if (scrapes_from(h, from))
		return victim;
	for (size_t i = 0; i < PROM_SCRAPES_MAX; i++) {
		const struct scrape *s = h->scrapes[i];
		int fd;
		double took = now - s->started, rate = scrape_rate(h, s, now, &fd);
		unsigned theirs = scrapes_from(h, &s->addr);

		bool judged = took >= PROM_SCRAPE_EVICT_S;

		if ((judged ? rate >= PROM_SCRAPE_EVICT_RATE : theirs < 2) || theirs < most ||
		    (theirs == most && rate >= slowest))
			continue;
		most = theirs;
		slowest = rate;
		victim = i;
		victim_fd = fd;
	}
	if (victim < PROM_SCRAPES_MAX)
		scrape_cut(h, victim, victim_fd);
	return victim;
}

/* NULL: too many scrapes at once, or nothing to serve (503) */
static struct MHD_Response *scrape_response(struct prom_http *h, struct MHD_Connection *c,
					    enum prom_format format,
					    const struct prom_filter *filter)
{
	const union MHD_ConnectionInfo *from =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	struct sockaddr_storage addr = {0};
	struct scrape *s;
	struct MHD_Response *r;
	size_t slot = PROM_SCRAPES_MAX;

	if (from && from->client_addr)
		copy_address(&addr, from->client_addr);
	for (size_t i = 0; i < PROM_SCRAPES_MAX; i++)
		if (!h->scrapes[i])
			slot = i;
	if (slot == PROM_SCRAPES_MAX)
		slot = evict_slowest(h, &addr);
	if (slot == PROM_SCRAPES_MAX) {
		h->stats.refused[PROM_HTTP_SCRAPES]++;
		for (size_t i = 0; i < PROM_SCRAPES_MAX; i++) {
			char text[64];

			prom_addr_text((struct sockaddr *)&h->scrapes[i]->addr, text, sizeof(text));
			int fd;

			DEBUGMSGTL(("ibsnmpd:http", "no place for a scrape: %s's for %.2f s, "
				    "%.0f octets/s\n", text, monotonic_seconds() - h->scrapes[i]->started,
				    scrape_rate(h, h->scrapes[i], monotonic_seconds(), &fd)));
		}
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->h = h;
	s->c = c;
	s->addr = addr;
	s->started = monotonic_seconds();
	if (h->feed.begin(h->feed.arg, &s->src)) {
		free(s);
		return NULL;
	}
	s->src.filter = *filter;
	prom_http_get_stats(h, &s->src.http);
	s->src.have_http = true;
	if (prom_render_begin(&s->render, &s->src, format)) {
		h->feed.end(h->feed.arg, &s->src);
		free(s);
		return NULL;
	}
	h->scrapes[slot] = s;
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, PROM_BLOCK, scrape_read, s,
					      scrape_free);
	if (!r) {
		scrape_free(s);
		return NULL;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, prom_content_type(format));
	add_headers(h, r);
	return r;
}

/* ---- requests ---------------------------------------------------------------------- */

/* The query's selection (collect[], node_type, shard, shards): each
 * argument through prom_filter_arg; the first it refuses says why */
struct query {
	struct prom_filter filter;
	const char *why;
};

static enum MHD_Result query_arg(void *cls, enum MHD_ValueKind kind, const char *key,
				 const char *value)
{
	struct query *q = cls;

	(void)kind;
	if (prom_filter_arg(&q->filter, key, value, &q->why))
		return MHD_NO; /* the first refused ends the walk */
	return MHD_YES;
}

/* As the exporters' landing pages: what is here, and where */
static const char landing[] =
	"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>ibsnmpd</title></head>"
	"<body><h1>ibsnmpd</h1>\n"
	"<p>The InfiniBand subnet as ibsnmpd sees it: nodes, ports and their counters, links, "
	"the hardware's vitals, the modules' optics, the active alarms, the routing checks; and "
	"ibsnmpd's own "
	"statistics. The same data is served over SNMP.</p>\n"
	"<ul>\n<li><a href=\"/metrics\">/metrics</a>: all of it</li>\n"
	"<li>one collector: <a href=\"/metrics?collect[]=agent\">agent</a>, "
	"<a href=\"/metrics?collect[]=nodes\">nodes</a>, "
	"<a href=\"/metrics?collect[]=counters\">counters</a>, "
	"<a href=\"/metrics?collect[]=links\">links</a>, "
	"<a href=\"/metrics?collect[]=vitals\">vitals</a>, "
	"<a href=\"/metrics?collect[]=modules\">modules</a>, "
	"<a href=\"/metrics?collect[]=alarms\">alarms</a>, "
	"<a href=\"/metrics?collect[]=routing\">routing</a></li>\n"
	"<li>a part of a big fabric: <a href=\"/metrics?node_type=switch\">the switches</a>, "
	"<a href=\"/metrics?shard=0&amp;shards=4\">one shard of four</a></li>\n"
	"<li><a href=\"/slurm/topology.conf\">/slurm/topology.conf</a>, "
	"<a href=\"/slurm/topology.yaml\">/slurm/topology.yaml</a>: Slurm's topology, "
	"when slurmTopologyFile or slurmTopologyYaml is set</li>\n"
	"<li><a href=\"/-/healthy\">/-/healthy</a>, <a href=\"/-/ready\">/-/ready</a></li>\n"
	"</ul>\n<p>See ibsnmpd.conf(5): prometheusListen, prometheusWebConfig.</p>\n"
	"</body></html>\n";

static enum MHD_Result answer_text(struct prom_http *h, struct MHD_Connection *c,
				   unsigned status, const char *text, const char *type)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ok;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	add_headers(h, r);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	if (status == MHD_HTTP_SERVICE_UNAVAILABLE || status == MHD_HTTP_TOO_MANY_REQUESTS)
		MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "5");
	if (status == MHD_HTTP_UNAUTHORIZED)
		ok = MHD_queue_basic_auth_fail_response(c, REALM, r);
	else
		ok = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ok;
}

#define TEXT "text/plain; charset=utf-8"

static void login_failed(struct prom_http *h, const struct request *q)
{
	h->stats.refused[PROM_HTTP_UNAUTHORIZED]++;
	if (say(&h->logins))
		snmp_log(LOG_WARNING, "prometheusWebConfig: %lu failed login(s) (the last: user "
			 "'%s' from %s)\n", h->logins.count, q->user[0] ? q->user : "(none)",
			 q->addr);
}

/* The password's check finished (on the checker thread): the request
 * goes on */
static void auth_done(void *token, bool ok, void *arg)
{
	struct request *q = token;

	(void)arg;
	q->auth = ok ? AUTH_PASSED : AUTH_FAILED;
	MHD_resume_connection(q->c);
}

/* The checker stops (a SIGHUP's new configuration) with requests waiting:
 * they go on, to a 503 (MHD cannot stop with a request suspended) */
static void auth_abandoned(void *token, void *arg)
{
	struct request *q = token;

	(void)arg;
	q->auth = AUTH_ABANDONED;
	MHD_resume_connection(q->c);
}

static void on_auth_done(int fd, void *arg)
{
	struct prom_http *h = arg;

	(void)fd;
	prom_auth_collect(h->auth, auth_done, h);
	run(h);
}

/* basic_auth_users: 1 the request goes on, 0 it waits (suspended), -1 it
 * was answered */
static int authenticate(struct prom_http *h, struct MHD_Connection *c, struct request *q,
			enum MHD_Result *answered)
{
	char *user, *password = NULL;
	enum prom_auth_result r;

	if (!h->auth && q->auth != AUTH_ABANDONED)
		return 1;
	if (q->auth == AUTH_PASSED)
		return 1;
	if (q->auth == AUTH_ABANDONED) {
		h->stats.refused[PROM_HTTP_AUTH_BUSY]++;
		*answered = answer_text(h, c, MHD_HTTP_SERVICE_UNAVAILABLE,
					"the listener is starting again\n", TEXT);
		return -1;
	}
	if (q->auth == AUTH_FAILED) {
		login_failed(h, q);
		*answered = answer_text(h, c, MHD_HTTP_UNAUTHORIZED, "unauthorized\n", TEXT);
		return -1;
	}
	user = MHD_basic_auth_get_username_password(c, &password);
	if (!user || !password) {
		/* no credentials: what a browser's first request is; not logged */
		h->stats.refused[PROM_HTTP_UNAUTHORIZED]++;
		MHD_free(user);
		MHD_free(password);
		*answered = answer_text(h, c, MHD_HTTP_UNAUTHORIZED, "unauthorized\n", TEXT);
		return -1;
	}
	snprintf(q->user, sizeof(q->user), "%s", user);
	r = prom_auth_check(h->auth, user, password, q);
	explicit_bzero(password, strlen(password));
	MHD_free(user);
	MHD_free(password);
	switch (r) {
	case PROM_AUTH_OK:
		q->auth = AUTH_PASSED;
		return 1;
	case PROM_AUTH_PENDING:
		q->auth = AUTH_WAITING;
		MHD_suspend_connection(c);
		*answered = MHD_YES;
		return 0;
	case PROM_AUTH_BUSY:
		h->stats.refused[PROM_HTTP_AUTH_BUSY]++;
		*answered = answer_text(h, c, MHD_HTTP_SERVICE_UNAVAILABLE,
					"too many logins being checked\n", TEXT);
		return -1;
	default:
		login_failed(h, q);
		*answered = answer_text(h, c, MHD_HTTP_UNAUTHORIZED, "unauthorized\n", TEXT);
		return -1;
	}
}

/* rate_limit: a token bucket of burst tokens, one more every interval */
static bool rate_limited(struct prom_http *h)
{
	const struct prom_web_config *w = h->web ? &h->web->cfg : NULL;
	double now = monotonic_seconds();

	if (!w || w->rate_interval_s <= 0)
		return false;
	h->tokens += (now - h->tokens_at) / w->rate_interval_s;
	h->tokens_at = now;
	if (h->tokens > w->rate_burst)
		h->tokens = w->rate_burst;
	if (h->tokens < 1) {
		h->stats.refused[PROM_HTTP_RATE_LIMITED]++;
		return true;
	}
	h->tokens -= 1;
	return false;
}

/* Slurm's topology.conf or topology.yaml as the files hold them
 * (slurmTopologyFile, slurmTopologyYaml), for a controller on another host:
 * behind the same TLS and logins as /metrics */
static enum MHD_Result answer_slurm_topology(struct prom_http *h, struct MHD_Connection *c,
					     bool yaml)
{
	char *text = h->feed.slurm_topology ? h->feed.slurm_topology(h->feed.arg, yaml) : NULL;
	struct MHD_Response *r;
	enum MHD_Result ok;

	if (!text)
		return answer_text(h, c, MHD_HTTP_NOT_FOUND,
				   "not found: no slurmTopologyFile or slurmTopologyYaml, or the tree "
				   "is not built yet\n",
				   TEXT);
	r = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, TEXT);
	add_headers(h, r);
	ok = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ok;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size,
				  void **con_cls)
{
	struct prom_http *h = cls;
	struct request *q = *con_cls;
	struct query query = {{0}, NULL};
	const union MHD_ConnectionInfo *from =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	struct MHD_Response *r;
	enum MHD_Result ok = MHD_NO;

	(void)version;
	(void)upload_data;
	if (!q) {
		struct conn *k = conn_of(c);

		if (!(q = calloc(1, sizeof(*q))))
			return MHD_NO;
		q->h = h;
		q->c = c;
		if (from && from->client_addr)
			prom_addr_text(from->client_addr, q->addr, sizeof(q->addr));
		*con_cls = q;
		if (k)
			k->in_request = k->saw_request = true;
		DEBUGMSGTL(("ibsnmpd:http", "%s %s from %s\n", method, url, q->addr));
	}
	if (*upload_data_size) {
		*upload_data_size = 0; /* a body: not read, the answer says no */
		return MHD_YES;
	}
	switch (authenticate(h, c, q, &ok)) {
	case 0:
	case -1: return ok;
	default: break;
	}
	if (rate_limited(h))
		return answer_text(h, c, MHD_HTTP_TOO_MANY_REQUESTS, "over rate_limit\n", TEXT);
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return answer_text(h, c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n", TEXT);
	if (!strcmp(url, "/"))
		return answer_text(h, c, MHD_HTTP_OK, landing, "text/html; charset=utf-8");
	if (!strcmp(url, "/-/healthy"))
		return answer_text(h, c, MHD_HTTP_OK, "ibsnmpd is healthy.\n", TEXT);
	if (!strcmp(url, "/-/ready")) {
		struct prom_sources src;
		bool ready = !h->feed.begin(h->feed.arg, &src) && src.topology;

		h->feed.end(h->feed.arg, &src);
		return ready ? answer_text(h, c, MHD_HTTP_OK, "ibsnmpd is ready.\n", TEXT)
			     : answer_text(h, c, MHD_HTTP_SERVICE_UNAVAILABLE,
					   "no subnet discovered yet\n", TEXT);
	}
	if (!strcmp(url, "/slurm/topology.conf") || !strcmp(url, "/slurm/topology.yaml"))
		return answer_slurm_topology(h, c, !strcmp(url, "/slurm/topology.yaml"));
	if (strcmp(url, "/metrics"))
		return answer_text(h, c, MHD_HTTP_NOT_FOUND,
				   "not found: the metrics are at /metrics\n", TEXT);
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, query_arg, &query);
	if (query.why || prom_filter_check(&query.filter, &query.why)) {
		/* a static text: the reason, then the URL's form */
		return answer_text(h, c, MHD_HTTP_BAD_REQUEST, query.why, TEXT);
	}
	r = scrape_response(h, c,
			    prom_format_for(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
									MHD_HTTP_HEADER_ACCEPT)),
			    &query.filter);
	if (!r)
		return answer_text(h, c, MHD_HTTP_SERVICE_UNAVAILABLE,
				   "too many scrapes at once, or nothing to serve yet\n", TEXT);
	ok = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ok;
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode code)
{
	struct prom_http *h = cls;
	struct conn *k = conn_of(c);

	(void)code;
	if (*con_cls) {
		h->stats.requests++;
		free(*con_cls);
		*con_cls = NULL;
	}
	if (k) {
		k->in_request = false;
		k->deadline = monotonic_seconds() + PROM_IDLE_S + PROM_REQUEST_MAX_S;
	}
}

/* ---- life cycle -------------------------------------------------------------------- */

/* The listening socket: ibsnmpd's own, so that MHD can be started again
 * on it (a SIGHUP's new TLS) without a moment of refused connections */
static int listen_on(const struct prom_config *cfg)
{
	int one = 1, fd = socket(cfg->listen.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
				 0);

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (cfg->listen.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)&cfg->listen, cfg->listen_len) || listen(fd, 64)) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static void daemon_stop(struct prom_http *h)
{
	if (!h->daemon)
		return;
	if (h->alarm)
		snmp_alarm_unregister(h->alarm);
	h->alarm = 0;
	unregister_readfd(h->epoll_fd);
	if (h->auth) {
		unregister_readfd(prom_auth_fd(h->auth));
		prom_auth_free(h->auth, auth_abandoned, h);
		h->auth = NULL;
		MHD_run(h->daemon); /* the requests resumed are answered */
	}
	MHD_quiesce_daemon(h->daemon); /* the listening socket stays ours */
	/* closes every connection: their scrapes let go of the snapshots */
	MHD_stop_daemon(h->daemon);
	h->daemon = NULL;
	h->epoll_fd = -1;
}

static int daemon_start(struct prom_http *h)
{
	const union MHD_DaemonInfo *info;
	unsigned flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME;
	struct MHD_OptionItem tls[5];
	size_t n_tls = 0;

	if (h->web && h->web->cfg.tls) {
		flags |= MHD_USE_TLS;
		tls[n_tls++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_CERT, 0,
						       h->web->cert_pem};
		tls[n_tls++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_KEY, 0, h->web->key_pem};
		tls[n_tls++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_PRIORITIES, 0,
						       h->web->priorities};
		if (h->web->ca_pem)
			tls[n_tls++] = (struct MHD_OptionItem){MHD_OPTION_HTTPS_MEM_TRUST, 0,
							       h->web->ca_pem};
	}
	tls[n_tls] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
	if (h->web && h->web->cfg.n_users) {
		h->auth = prom_auth_new(h->web->cfg.users, h->web->cfg.n_users);
		if (!h->auth || register_readfd(prom_auth_fd(h->auth), on_auth_done, h)) {
			snmp_log(LOG_ERR, "prometheusWebConfig: cannot start the password checker\n");
			prom_auth_free(h->auth, NULL, NULL);
			h->auth = NULL;
			return -1;
		}
	}
	h->tokens = h->web ? h->web->cfg.rate_burst : 0;
	h->tokens_at = monotonic_seconds();
	h->starting = true;
	/* MHD's own limits above ours: ours refuse first, and count */
	h->daemon = MHD_start_daemon(
		flags, 0, accept_policy, h, on_request, h, MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,
		MHD_OPTION_LISTEN_SOCKET, h->listen_fd,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)PROM_CONNECTIONS_MAX + 4,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)PROM_PER_ADDRESS_MAX + 2,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)PROM_IDLE_S,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)PROM_REQUEST_MEMORY,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
		MHD_OPTION_ARRAY, tls, MHD_OPTION_END);
	h->starting = false;
	if (!h->daemon) {
		snmp_log(LOG_ERR, "prometheusListen %s: cannot serve (see the line above)\n",
			 h->listen_text);
		goto fail;
	}
	info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_EPOLL_FD);
	h->epoll_fd = info ? info->epoll_fd : -1;
	if (h->epoll_fd < 0 || register_readfd(h->epoll_fd, on_readable, h)) {
		snmp_log(LOG_ERR, "prometheusListen %s: cannot join the main loop\n",
			 h->listen_text);
		MHD_quiesce_daemon(h->daemon);
		MHD_stop_daemon(h->daemon);
		h->daemon = NULL;
		goto fail;
	}
	run(h);
	return 0;
fail:
	if (h->auth) {
		unregister_readfd(prom_auth_fd(h->auth));
		prom_auth_free(h->auth, NULL, NULL);
		h->auth = NULL;
	}
	return -1;
}

struct prom_http *prom_http_start(const struct prom_config *cfg, struct prom_web *web,
				  const struct prom_feed *feed)
{
	struct prom_http *h = calloc(1, sizeof(*h));

	if (!h) {
		prom_web_free(web);
		return NULL;
	}
	h->feed = *feed;
	h->epoll_fd = -1;
	h->web = web;
	snprintf(h->listen_text, sizeof(h->listen_text), "%s", cfg->listen_text);
	prom_http_set_allow(h, cfg->allow, cfg->n_allow, prom_web_authenticates(web));
	h->listen_fd = listen_on(cfg);
	if (h->listen_fd < 0) {
		snmp_log(LOG_ERR, "prometheusListen %s: cannot listen: %s\n", cfg->listen_text,
			 strerror(errno));
		goto fail;
	}
	h->wakeup_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (h->wakeup_fd < 0 || register_readfd(h->wakeup_fd, on_wakeup, h)) {
		snmp_log(LOG_ERR, "prometheusListen %s: cannot join the main loop\n",
			 cfg->listen_text);
		if (h->wakeup_fd >= 0)
			close(h->wakeup_fd);
		close(h->listen_fd);
		goto fail;
	}
	if (daemon_start(h)) {
		unregister_readfd(h->wakeup_fd);
		close(h->wakeup_fd);
		close(h->listen_fd);
		goto fail;
	}
	h->tick = snmp_alarm_register(1, SA_REPEAT, on_tick, h);
	listener = h;
	snmp_log(LOG_INFO, "Prometheus metrics on %s://%s/metrics%s\n",
		 web && web->cfg.tls ? "https" : "http", cfg->listen_text,
		 web && web->cfg.n_users ? " (basic auth)" : "");
	return h;
fail:
	prom_web_free(web);
	free(h);
	return NULL;
}

int prom_http_set_web(struct prom_http *h, struct prom_web *web)
{
	struct prom_web *before = h->web;

	daemon_stop(h);
	h->web = web;
	if (!daemon_start(h)) {
		prom_web_free(before);
		snmp_log(LOG_INFO, "prometheusWebConfig: now serving %s%s\n",
			 web && web->cfg.tls ? "https" : "http",
			 web && web->cfg.n_users ? " with basic auth" : "");
		return 0;
	}
	/* the new one would not start: the one before again */
	h->web = before;
	prom_web_free(web);
	if (daemon_start(h))
		snmp_log(LOG_ERR, "prometheusListen %s: not serving any more\n", h->listen_text);
	return -1;
}

void prom_http_set_allow(struct prom_http *h, const struct prom_cidr *allow, size_t n,
			 bool authenticated)
{
	if (n > PROM_ALLOW_MAX)
		n = PROM_ALLOW_MAX;
	memcpy(h->allow, allow, n * sizeof(*allow));
	h->n_allow = n;
	h->allow_any = !n && authenticated;
}

void prom_http_get_stats(const struct prom_http *h, struct prom_http_stats *out)
{
	*out = h->stats;
	out->connections = h->n_conns;
}

void prom_http_stop(struct prom_http *h)
{
	if (!h)
		return;
	if (h->tick)
		snmp_alarm_unregister(h->tick);
	daemon_stop(h);
	while (h->drainings)
		draining_end(h, h->drainings);
	listener = NULL;
	unregister_readfd(h->wakeup_fd);
	close(h->wakeup_fd);
	close(h->listen_fd);
	prom_web_free(h->web);
	free(h);
}
