/* libFuzzer target: a whole datagram from the kernel (or whoever can write
 * to the socket), stepped through message by message as the backend does
 * (dcbnl_decode), and the notification rules over what the messages said. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dcbx/dcbnl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_port(const struct dcbx_port *p)
{
	if (p->n_apps > DCBX_APPS_MAX || p->n_peer_apps > DCBX_APPS_MAX)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t *words = malloc(size + 4); /* aligned, as recv()'s buffer is */
	const uint8_t *buf = (const uint8_t *)words;
	struct dcbx_port ports[2];
	struct dcbx_event ev[16];
	size_t off = 0, n = 0;

	memcpy(words, data, size);
	memset(ports, 0, sizeof(ports));
	while (off < size) {
		struct dcbnl_reply r;
		struct dcbx_port p;
		const char *why;
		int used;

		memset(&p, 0, sizeof(p));
		used = dcbnl_decode(buf + off, size - off, &r, &p, &why);
		if (used < 0 && !why)
			abort(); /* refused without a reason */
		if (used <= 0)
			break;
		if ((size_t)used > size - off || (used % 4 && off + (size_t)used != size))
			abort(); /* a step past the end, or to an unaligned header */
		check_port(&p);
		if (n < 2) {
			p.ifindex = (unsigned)n + 1;
			ports[n++] = p;
		}
		off += (size_t)used;
	}
	/* what the rules make of two successive states of one port */
	if (n == 2) {
		ports[1].ifindex = ports[0].ifindex;
		if (dcbx_events(&ports[0], 1, &ports[1], 1, ev, 16) > 16)
			abort();
	}
	free(words);
	return 0;
}
