/* libFuzzer target: the hosts Slurm knows (slurm_hosts_parse), read from a
 * slurm.conf or a list an operator writes, with their hostlists. Every host
 * read must be a name Slurm reads; the hosts written as one hostlist
 * (slurm_hostlist_compress) must read back as the same hosts. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/slurm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct count {
	const struct slurm_hosts *h;
	size_t n;
};

static int known(void *arg, const char *name)
{
	struct count *c = arg;

	if (!slurm_hosts_has(c->h, name))
		abort(); /* written, read back: a host that was not there */
	c->n++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[400];
	struct slurm_hosts *h = slurm_hosts_parse((const char *)data, size, "fuzz", err,
						  sizeof(err));
	const char **names;
	struct count c = {h, 0};
	char *list;
	size_t n;

	if (!h) {
		if (!strstr(err, "fuzz:"))
			abort(); /* a refusal names the file and line */
		return 0;
	}
	n = slurm_hosts_count(h);
	names = malloc((n ? n : 1) * sizeof(*names));
	if (!names)
		abort();
	for (size_t i = 0; i < n; i++) {
		names[i] = slurm_hosts_name(h, i);
		if (!slurm_name_ok(names[i]) || (i && strcmp(names[i - 1], names[i]) >= 0))
			abort(); /* names Slurm reads, sorted, unique */
	}
	list = slurm_hostlist_compress(names, n);
	if (!list)
		abort();
	if (*list && slurm_hostlist_expand(list, strlen(list), known, &c, err, sizeof(err)))
		abort();
	if (c.n != n)
		abort(); /* each once */
	free(list);
	free(names);
	slurm_hosts_free(h);
	return 0;
}
