/* Inside the Prometheus area (prom.h): its configuration, the listener. */
#ifndef IBSNMPD_PROM_INTERNAL_H
#define IBSNMPD_PROM_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

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

/* ---- the listener (prom_http.c) ---- */

/* What a scrape reads: begin fills src (holding snapshots), end lets go. */
struct prom_feed {
	int (*begin)(void *arg, struct prom_sources *src); /* -1: nothing to serve */
	void (*end)(void *arg, struct prom_sources *src);
	void *arg;
};

struct prom_http;
/* Listens on cfg's address; NULL (logged) if it cannot. */
struct prom_http *prom_http_start(const struct prom_config *cfg, const struct prom_feed *feed);
/* prometheusAllow after a SIGHUP. */
void prom_http_set_allow(struct prom_http *h, const struct prom_cidr *allow, size_t n);
void prom_http_stop(struct prom_http *h);

#endif
