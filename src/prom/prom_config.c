/* prometheusListen and prometheusAllow: numeric addresses, address blocks,
 * and who may scrape (prom_internal.h). Pure. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prom_internal.h"

int prom_parse_listen(const char *text, struct sockaddr_storage *ss, socklen_t *len,
		      const char **why)
{
	char host[INET6_ADDRSTRLEN + 2];
	const char *colon, *port_text;
	char *end;
	unsigned long port;
	size_t n;

	memset(ss, 0, sizeof(*ss));
	*why = "expected ADDRESS:PORT, e.g. 127.0.0.1:9683 or [::1]:9683";
	if (text[0] == '[') {
		const char *close = strchr(text, ']');

		if (!close || close[1] != ':')
			return -1;
		n = (size_t)(close - text - 1);
		port_text = close + 2;
		if (n >= sizeof(host))
			return -1;
		memcpy(host, text + 1, n);
	} else {
		colon = strrchr(text, ':');
		if (!colon || memchr(text, ':', (size_t)(colon - text)))
			return -1; /* an IPv6 address needs its brackets */
		n = (size_t)(colon - text);
		port_text = colon + 1;
		if (n >= sizeof(host))
			return -1;
		memcpy(host, text, n);
	}
	host[n] = '\0';
	if (port_text[0] < '0' || port_text[0] > '9')
		return -1;
	port = strtoul(port_text, &end, 10);
	if (*end || port < 1 || port > 65535) {
		*why = "the port must be 1-65535";
		return -1;
	}
	if (text[0] == '[') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		if (inet_pton(AF_INET6, host, &a->sin6_addr) != 1) {
			*why = "not a numeric IPv6 address";
			return -1;
		}
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		*len = sizeof(*a);
	} else {
		struct sockaddr_in *a = (struct sockaddr_in *)ss;

		if (inet_pton(AF_INET, host, &a->sin_addr) != 1) {
			*why = "not a numeric IPv4 address (names are not resolved)";
			return -1;
		}
		a->sin_family = AF_INET;
		a->sin_port = htons((uint16_t)port);
		*len = sizeof(*a);
	}
	return 0;
}

int prom_parse_cidr(const char *text, struct prom_cidr *c, const char **why)
{
	char host[INET6_ADDRSTRLEN];
	const char *slash = strchr(text, '/');
	size_t n = slash ? (size_t)(slash - text) : strlen(text);
	unsigned long bits;
	char *end;

	memset(c, 0, sizeof(*c));
	*why = "expected an address or ADDRESS/BITS, e.g. 10.0.0.0/8 or 2001:db8::/32";
	if (!n || n >= sizeof(host))
		return -1;
	memcpy(host, text, n);
	host[n] = '\0';
	if (inet_pton(AF_INET, host, c->addr) == 1)
		c->family = AF_INET;
	else if (inet_pton(AF_INET6, host, c->addr) == 1)
		c->family = AF_INET6;
	else
		return -1;
	if (!slash) {
		c->bits = c->family == AF_INET ? 32 : 128;
		return 0;
	}
	if (slash[1] < '0' || slash[1] > '9')
		return -1;
	bits = strtoul(slash + 1, &end, 10);
	if (*end || bits > (c->family == AF_INET ? 32u : 128u)) {
		*why = "the prefix length is out of range";
		return -1;
	}
	c->bits = (unsigned)bits;
	return 0;
}

/* The address of sa as (family, octets); an IPv4-mapped IPv6 address is
 * the IPv4 one. -1: not an IP address. */
static int addr_of(const struct sockaddr *sa, int *family, const uint8_t **octets)
{
	static const uint8_t v4_mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

	if (sa->sa_family == AF_INET) {
		*family = AF_INET;
		*octets = (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr;
		return 0;
	}
	if (sa->sa_family == AF_INET6) {
		const uint8_t *a = (const uint8_t *)&((const struct sockaddr_in6 *)sa)->sin6_addr;

		if (!memcmp(a, v4_mapped, sizeof(v4_mapped))) {
			*family = AF_INET;
			*octets = a + 12;
		} else {
			*family = AF_INET6;
			*octets = a;
		}
		return 0;
	}
	return -1;
}

static bool in_block(int family, const uint8_t *a, const struct prom_cidr *c)
{
	unsigned whole = c->bits / 8, rest = c->bits % 8;

	if (family != c->family || memcmp(a, c->addr, whole))
		return false;
	return !rest || ((a[whole] ^ c->addr[whole]) & (0xff00u >> rest & 0xff)) == 0;
}

bool prom_addr_is_loopback(const struct sockaddr *sa)
{
	static const struct prom_cidr loop4 = {AF_INET, {127}, 8},
				      loop6 = {AF_INET6, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
							  0, 1},
					       128};
	const uint8_t *a;
	int family;

	if (addr_of(sa, &family, &a))
		return false;
	return in_block(family, a, &loop4) || in_block(family, a, &loop6);
}

bool prom_addr_allowed(const struct sockaddr *sa, const struct prom_cidr *allow, size_t n)
{
	const uint8_t *a;
	int family;

	if (!n)
		return prom_addr_is_loopback(sa);
	if (addr_of(sa, &family, &a))
		return false;
	for (size_t i = 0; i < n; i++)
		if (in_block(family, a, &allow[i]))
			return true;
	return false;
}

void prom_addr_text(const struct sockaddr *sa, char *out, size_t len)
{
	const void *a = sa->sa_family == AF_INET6
				? (const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr
				: (const void *)&((const struct sockaddr_in *)sa)->sin_addr;

	if (!len)
		return;
	if ((sa->sa_family != AF_INET && sa->sa_family != AF_INET6) ||
	    !inet_ntop(sa->sa_family, a, out, (socklen_t)len))
		snprintf(out, len, "?");
}
