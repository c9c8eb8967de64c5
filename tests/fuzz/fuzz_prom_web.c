/* libFuzzer target: a prometheusWebConfig file (prom_web_parse), and the
 * GnuTLS priority string made of what it took. Whatever the text, it is
 * taken or refused with a line and a reason; what is taken is whole (TLS
 * with a certificate and a key, bcrypt hashes of 60 characters, versions
 * in order) and its priority string fits. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "prom/prom_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prom_web_config c;
	char why[256], prio[512], extra[1024];

	if (prom_web_parse((const char *)data, size, &c, why, sizeof(why))) {
		if (!why[0])
			abort(); /* a refusal says why */
		return 0;
	}
	if (c.tls && (!(c.cert_file || c.cert) || !(c.key_file || c.key)))
		abort();
	if (c.min_version < 10 || c.max_version > 13 || c.min_version > c.max_version)
		abort();
	for (size_t i = 0; i < c.n_users; i++)
		if (strlen(c.users[i].hash) != 60 || !c.users[i].name[0])
			abort();
	if (prom_web_priorities(&c, prio, sizeof(prio), extra, sizeof(extra)))
		abort();
	prom_web_config_free(&c);
	return 0;
}
