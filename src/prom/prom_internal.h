/* Inside the Prometheus area (prom.h): its configuration, the listener. */
#ifndef IBSNMPD_PROM_INTERNAL_H
#define IBSNMPD_PROM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "ibsnmpd/prom.h"

/* ---- addresses (prom_config.c, pure: unit-tested, fuzzed) ---- */

/* An address block of prometheusAllow. */
struct prom_cidr {
	int family;          /* AF_INET or AF_INET6 */
	uint8_t addr[16];    /* network byte order; 4 octets for AF_INET */
	unsigned bits;
};
#define PROM_ALLOW_MAX 64

struct prom_config {
	bool listen_set;
	char listen_text[64];             /* as written: for the logs */
	struct sockaddr_storage listen;
	socklen_t listen_len;
	struct prom_cidr allow[PROM_ALLOW_MAX];
	size_t n_allow;
	/* prometheusWebConfig: the path; what its file said when it was read
	 * (prom_web_load reads it again at start and on SIGHUP) */
	char web_path[1024];
	bool web_tls, web_authenticates;
};

/* "127.0.0.1:9100", "[::1]:9100": a numeric address and a port 1-65535
 * (no names: the address a daemon binds should not depend on DNS). */
int prom_parse_listen(const char *text, struct sockaddr_storage *ss, socklen_t *len,
		      const char **why);
/* "10.0.0.0/8", "2001:db8::/32", "192.0.2.7" (one address). */
int prom_parse_cidr(const char *text, struct prom_cidr *c, const char **why);
bool prom_addr_is_loopback(const struct sockaddr *sa);
/* Without allow (n 0), loopback only; with it, an address inside one of
 * its blocks only (an IPv4-mapped IPv6 address taken as the IPv4 one):
 * the list is the whole list, 127.0.0.1 is in it if it says so. */
bool prom_addr_allowed(const struct sockaddr *sa, const struct prom_cidr *allow, size_t n);
/* The address as text, for the logs. */
void prom_addr_text(const struct sockaddr *sa, char *out, size_t len);

/* ---- prometheusWebConfig (prom_web.c, pure: unit-tested, fuzzed) ---- */

/* tls_server_config's client_auth_type, Go's names */
enum prom_client_auth {
	PROM_CLIENT_NONE,           /* NoClientCert */
	PROM_CLIENT_REQUEST,        /* RequestClientCert: asked, not checked */
	PROM_CLIENT_REQUIRE_ANY,    /* RequireAnyClientCert: required, not checked */
	PROM_CLIENT_VERIFY_IF_GIVEN,/* VerifyClientCertIfGiven */
	PROM_CLIENT_REQUIRE_VERIFY, /* RequireAndVerifyClientCert */
	PROM_CLIENT_AUTHS
};

#define PROM_WEB_USERS_MAX 64
#define PROM_WEB_USER_MAX 64
#define PROM_WEB_SANS_MAX 32
#define PROM_WEB_SUITES_MAX 32
#define PROM_WEB_CURVES_MAX 8
#define PROM_WEB_HEADERS 5
extern const char *const prom_web_header_names[PROM_WEB_HEADERS];

struct prom_web_user {
	char name[PROM_WEB_USER_MAX + 1];
	char hash[61];                  /* bcrypt: $2y$10$ and 53 characters */
};

/* The file as written: strings malloc'd (NULL: not given) */
struct prom_web_config {
	bool tls;                       /* anything of tls_server_config given */
	char *cert_file, *key_file, *client_ca_file;
	char *cert, *key, *client_ca;   /* the same, inline (PEM) */
	enum prom_client_auth client_auth;
	char *sans[PROM_WEB_SANS_MAX];  /* client_allowed_sans */
	size_t n_sans;
	unsigned min_version, max_version; /* 10 (TLS 1.0) to 13 (TLS 1.3) */
	unsigned suites[PROM_WEB_SUITES_MAX]; /* cipher_suites: prom_web.c's table */
	size_t n_suites;
	bool prefer_server_suites;
	unsigned curves[PROM_WEB_CURVES_MAX];
	size_t n_curves;
	char *headers[PROM_WEB_HEADERS]; /* by prom_web_header_names */
	struct prom_web_user users[PROM_WEB_USERS_MAX];
	size_t n_users;
	double rate_interval_s;         /* rate_limit; 0: none */
	unsigned rate_burst;
};

/* The file's text: 0, or -1 and why ("line N: ...") */
int prom_web_parse(const char *text, size_t len, struct prom_web_config *c, char *why,
		   size_t why_len);
void prom_web_config_free(struct prom_web_config *c);
/* A Prometheus duration ("1s", "100ms", "1m30s") in seconds; -1: not one */
int prom_web_duration(const char *text, double *seconds);
/* GnuTLS' priority string for min/max_version, cipher_suites,
 * curve_preferences and prefer_server_cipher_suites; in extra, the TLS 1.2
 * suites GnuTLS will also allow because it combines the parts of those
 * listed (empty: none). -1: out does not hold it. */
int prom_web_priorities(const struct prom_web_config *c, char *out, size_t len, char *extra,
			size_t extra_len);
const char *prom_client_auth_name(enum prom_client_auth a);

/* The file and what it names, read: the certificates and keys in memory
 * (prom_area.c) */
struct prom_web {
	struct prom_web_config cfg;
	char *cert_pem, *key_pem, *ca_pem; /* NULL: no TLS / no client CA */
	char priorities[512];
	char extra_suites[512];            /* prom_web_priorities' extra: said at start */
	uint8_t digest[32];                /* of all it read: did a SIGHUP change it */
};

/* Reads path and the files it names (relative to its folder), checks the
 * certificate and key with GnuTLS: 0 and *out, or -1 and why (the file's
 * line where it is the file's). A key file others may read is refused. */
int prom_web_load(const char *path, struct prom_web **out, char *why, size_t why_len);
void prom_web_free(struct prom_web *w);
/* When the server's certificate expires (0: unknown) */
time_t prom_web_cert_expiry(const struct prom_web *w);
/* Whether it says who a scraper is: basic auth users, or client
 * certificates verified (over TLS) */
bool prom_web_authenticates(const struct prom_web *w);

/* ---- basic_auth_users (prom_auth.c) ---- */

#define PROM_AUTH_JOBS 4
enum prom_auth_result { PROM_AUTH_OK, PROM_AUTH_FAILED, PROM_AUTH_PENDING, PROM_AUTH_BUSY };
struct prom_auth;
struct prom_auth *prom_auth_new(const struct prom_web_user *users, size_t n_users);
/* Readable when checks have finished: then prom_auth_collect */
int prom_auth_fd(const struct prom_auth *a);
/* OK: the password passed before (remembered); PENDING: it is being
 * checked, token comes back through prom_auth_collect; BUSY: too many
 * checks wait; FAILED: refused at once */
enum prom_auth_result prom_auth_check(struct prom_auth *a, const char *user, const char *password,
				      void *token);
void prom_auth_collect(struct prom_auth *a, void (*done)(void *token, bool ok, void *arg),
		       void *arg);
/* Stops the checker; the tokens of checks not collected go to abandoned */
void prom_auth_free(struct prom_auth *a, void (*abandoned)(void *token, void *arg), void *arg);

/* ---- the listener (prom_http.c) ---- */

/* What a scrape reads: begin fills src (holding snapshots), end lets go. */
struct prom_feed {
	int (*begin)(void *arg, struct prom_sources *src); /* -1: nothing to serve */
	void (*end)(void *arg, struct prom_sources *src);
	/* Slurm's topology.conf (yaml false) or topology.yaml as last built, a
	 * copy to free; NULL: none */
	char *(*slurm_topology)(void *arg, bool yaml);
	void *arg;
};

struct prom_http;
/* Listens on cfg's address, as web says (NULL: plain HTTP; it is the
 * listener's from now on); NULL (logged) if it cannot. */
struct prom_http *prom_http_start(const struct prom_config *cfg, struct prom_web *web,
				  const struct prom_feed *feed);
/* A SIGHUP's prometheusWebConfig: MHD started again with it on the same
 * socket; -1 (logged): it would not start, the one before serves on. */
int prom_http_set_web(struct prom_http *h, struct prom_web *web);
/* prometheusAllow after a SIGHUP: without it, loopback only, or anyone
 * when the web configuration authenticates the scrapers. */
void prom_http_set_allow(struct prom_http *h, const struct prom_cidr *allow, size_t n,
			 bool authenticated);
void prom_http_get_stats(const struct prom_http *h, struct prom_http_stats *out);
void prom_http_stop(struct prom_http *h);

#endif
