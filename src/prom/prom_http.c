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
 * no time. Limits: PROM_SCRAPES_MAX scrapes at once (503 past it), a
 * scrape ends after PROM_SCRAPE_MAX_S whatever its pace, MHD closes a
 * connection idle for PROM_IDLE_S and answers a request whose header does
 * not fit its PROM_REQUEST_MEMORY (431). */
#include "ibsnmpd/netsnmp.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#include "prom_internal.h"

#define PROM_SCRAPES_MAX 4
#define PROM_SCRAPE_MAX_S 120
#define PROM_IDLE_S 30
#define PROM_CONNECTIONS_MAX 32
#define PROM_PER_ADDRESS_MAX 8
#define PROM_REQUEST_MEMORY (64 * 1024)
/* A block of text per write: rendered in about a millisecond */
#define PROM_BLOCK (256 * 1024)
#define REFUSED_LOG_S 60

struct prom_http {
	struct MHD_Daemon *daemon;
	int epoll_fd;
	int wakeup_fd;                /* an eventfd: run again after the next select */
	unsigned alarm;               /* MHD's next timeout, 0: none */
	struct prom_feed feed;
	struct prom_cidr allow[PROM_ALLOW_MAX];
	size_t n_allow;
	unsigned scrapes;             /* under way */
	unsigned long refused;        /* connections from outside prometheusAllow */
	time_t refused_said;
	bool starting;                /* MHD's messages are errors until it listens */
};

/* One scrape: what it holds and where its text is. */
struct scrape {
	struct prom_http *h;
	struct prom_sources src;
	struct prom_render render;
	time_t started;
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

/* ---- who may connect -------------------------------------------------------------- */

static enum MHD_Result accept_policy(void *cls, const struct sockaddr *addr, socklen_t len)
{
	struct prom_http *h = cls;
	char text[64];
	time_t now;

	(void)len;
	if (prom_addr_allowed(addr, h->allow, h->n_allow))
		return MHD_YES;
	/* one line when it starts, then at most one a minute with the count */
	h->refused++;
	now = cache_clock_s();
	if (h->refused == 1 || now - h->refused_said >= REFUSED_LOG_S) {
		prom_addr_text(addr, text, sizeof(text));
		snmp_log(LOG_WARNING, "prometheusListen: refused %lu connection(s) from outside "
			 "prometheusAllow (the last from %s)\n", h->refused, text);
		h->refused_said = now;
	}
	return MHD_NO;
}

/* ---- the main loop drives MHD ------------------------------------------------------ */

static void run(struct prom_http *h);

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

/* MHD's work now, then when it wants to run again: at once while a
 * connection has more to send (its socket took a block), through the
 * wakeup descriptor, so that the main loop's select (and the SNMP requests
 * waiting there) comes between two blocks; net-snmp runs an alarm due now
 * again and again before it selects. Else at MHD's next timeout. */
static void run(struct prom_http *h)
{
	static const uint64_t one = 1;
	MHD_UNSIGNED_LONG_LONG ms;
	struct timeval when;

	MHD_run(h->daemon);
	if (h->alarm) {
		snmp_alarm_unregister(h->alarm);
		h->alarm = 0;
	}
	if (MHD_get_timeout(h->daemon, &ms) != MHD_YES)
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

/* ---- a scrape ---------------------------------------------------------------------- */

static ssize_t scrape_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct scrape *s = cls;
	size_t n;

	(void)pos;
	if (cache_clock_s() - s->started > PROM_SCRAPE_MAX_S) {
		snmp_log(LOG_WARNING, "prometheusListen: a scrape took over %d s (a slow client): "
			 "closed\n", PROM_SCRAPE_MAX_S);
		return MHD_CONTENT_READER_END_WITH_ERROR;
	}
	n = prom_render_next(&s->render, buf, max);
	return n ? (ssize_t)n : MHD_CONTENT_READER_END_OF_STREAM;
}

static void scrape_free(void *cls)
{
	struct scrape *s = cls;

	prom_render_end(&s->render);
	s->h->feed.end(s->h->feed.arg, &s->src);
	s->h->scrapes--;
	free(s);
}

/* NULL: too many scrapes at once, or nothing to serve (503) */
static struct MHD_Response *scrape_response(struct prom_http *h, enum prom_format format,
					    const struct prom_filter *filter)
{
	struct scrape *s;
	struct MHD_Response *r;

	if (h->scrapes >= PROM_SCRAPES_MAX)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->h = h;
	s->started = cache_clock_s();
	if (h->feed.begin(h->feed.arg, &s->src)) {
		free(s);
		return NULL;
	}
	s->src.filter = *filter;
	if (prom_render_begin(&s->render, &s->src, format)) {
		h->feed.end(h->feed.arg, &s->src);
		free(s);
		return NULL;
	}
	h->scrapes++;
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, PROM_BLOCK, scrape_read, s,
					      scrape_free);
	if (!r) {
		scrape_free(s);
		return NULL;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, prom_content_type(format));
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

static const char landing[] =
	"<html><head><title>ibsnmpd</title></head><body><h1>ibsnmpd</h1>"
	"<p>InfiniBand subnet metrics: <a href=\"/metrics\">/metrics</a></p></body></html>\n";

static enum MHD_Result answer_text(struct MHD_Connection *c, unsigned status, const char *text,
				   const char *type)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(strlen(text), (void *)text, MHD_RESPMEM_PERSISTENT);
	enum MHD_Result ok;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	if (status == MHD_HTTP_SERVICE_UNAVAILABLE)
		MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "5");
	ok = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ok;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size,
				  void **con_cls)
{
	struct prom_http *h = cls;
	struct query q = {{0}, NULL};
	struct MHD_Response *r;
	enum MHD_Result ok;

	(void)version;
	(void)upload_data;
	(void)upload_data_size;
	(void)con_cls;
	DEBUGMSGTL(("ibsnmpd:http", "%s %s\n", method, url));
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return answer_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET and HEAD\n",
				   "text/plain; charset=utf-8");
	if (!strcmp(url, "/"))
		return answer_text(c, MHD_HTTP_OK, landing, "text/html; charset=utf-8");
	if (strcmp(url, "/metrics"))
		return answer_text(c, MHD_HTTP_NOT_FOUND, "not found: the metrics are at /metrics\n",
				   "text/plain; charset=utf-8");
	MHD_get_connection_values(c, MHD_GET_ARGUMENT_KIND, query_arg, &q);
	if (q.why || prom_filter_check(&q.filter, &q.why)) {
		/* a static text: the reason, then the URL's form */
		return answer_text(c, MHD_HTTP_BAD_REQUEST, q.why, "text/plain; charset=utf-8");
	}
	r = scrape_response(h, prom_format_for(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
									  MHD_HTTP_HEADER_ACCEPT)),
			    &q.filter);
	if (!r)
		return answer_text(c, MHD_HTTP_SERVICE_UNAVAILABLE,
				   "too many scrapes at once, or nothing to serve yet\n",
				   "text/plain; charset=utf-8");
	ok = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ok;
}

/* ---- life cycle -------------------------------------------------------------------- */

struct prom_http *prom_http_start(const struct prom_config *cfg, const struct prom_feed *feed)
{
	struct prom_http *h = calloc(1, sizeof(*h));
	const union MHD_DaemonInfo *info;
	unsigned flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;

	if (!h)
		return NULL;
	h->feed = *feed;
	h->epoll_fd = -1;
	prom_http_set_allow(h, cfg->allow, cfg->n_allow);
	if (cfg->listen.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	h->starting = true;
	h->daemon = MHD_start_daemon(
		flags, 0, accept_policy, h, on_request, h, MHD_OPTION_SOCK_ADDR, &cfg->listen,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)PROM_CONNECTIONS_MAX,
		MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)PROM_PER_ADDRESS_MAX,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)PROM_IDLE_S,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)PROM_REQUEST_MEMORY,
		MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h, MHD_OPTION_END);
	h->starting = false;
	if (!h->daemon) {
		snmp_log(LOG_ERR, "prometheusListen %s: cannot listen (see the line above)\n",
			 cfg->listen_text);
		free(h);
		return NULL;
	}
	info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_EPOLL_FD);
	h->epoll_fd = info ? info->epoll_fd : -1;
	h->wakeup_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (h->epoll_fd < 0 || h->wakeup_fd < 0 || register_readfd(h->epoll_fd, on_readable, h) ||
	    register_readfd(h->wakeup_fd, on_wakeup, h)) {
		snmp_log(LOG_ERR, "prometheusListen %s: cannot join the main loop\n",
			 cfg->listen_text);
		if (h->epoll_fd >= 0)
			unregister_readfd(h->epoll_fd);
		if (h->wakeup_fd >= 0)
			close(h->wakeup_fd);
		MHD_stop_daemon(h->daemon);
		free(h);
		return NULL;
	}
	snmp_log(LOG_INFO, "Prometheus metrics on http://%s/metrics\n", cfg->listen_text);
	run(h);
	return h;
}

void prom_http_set_allow(struct prom_http *h, const struct prom_cidr *allow, size_t n)
{
	if (n > PROM_ALLOW_MAX)
		n = PROM_ALLOW_MAX;
	memcpy(h->allow, allow, n * sizeof(*allow));
	h->n_allow = n;
}

void prom_http_stop(struct prom_http *h)
{
	if (!h)
		return;
	if (h->alarm)
		snmp_alarm_unregister(h->alarm);
	unregister_readfd(h->epoll_fd);
	unregister_readfd(h->wakeup_fd);
	close(h->wakeup_fd);
	/* closes every connection: their scrapes let go of the snapshots */
	MHD_stop_daemon(h->daemon);
	free(h);
}
