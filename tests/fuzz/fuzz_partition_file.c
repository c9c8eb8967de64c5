/* libFuzzer target: opensm's partition file (partition_file_parse), which
 * anyone who edits the file writes. What parses is rendered again with every
 * partition rewritten, and parsed again: the same policy must come back; the
 * unconfigured-ports flag flipped must still render a file that parses. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pkey/partition_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void same_policy(const struct partition_file *a, const struct partition_file *b)
{
	if (a->n_parts != b->n_parts)
		abort();
	for (size_t i = 0; i < a->n_parts; i++) {
		const struct partition *p = &a->parts[i], *q = &b->parts[i];

		if (strcmp(p->name, q->name) || p->pkey != q->pkey || p->ipoib != q->ipoib ||
		    p->mtu != q->mtu || p->rate != q->rate || p->sl != q->sl ||
		    p->scope != q->scope || p->defmember != q->defmember ||
		    strcmp(p->other_flags, q->other_flags) || p->n_members != q->n_members)
			abort();
		for (size_t k = 0; k < p->n_members; k++) {
			const struct partition_member *m = &p->members[k], *o = &q->members[k];

			if (m->is_guid != o->is_guid || m->type != o->type ||
			    (m->is_guid ? m->guid != o->guid : strcmp(m->keyword, o->keyword)))
				abort();
		}
	}
}

static struct partition_file *reparsed(struct partition_file *pf, struct partition_file *out)
{
	char err[200], *text;
	size_t len;

	text = partition_file_render(pf, &len);
	if (!text)
		return NULL; /* out of memory */
	if (partition_file_parse(text, len, out, err, sizeof(err)))
		abort(); /* ibsnmpd would write a file opensm cannot read */
	free(text);
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct partition_file pf, copy, again;
	char err[200];

	if (partition_file_parse((const char *)data, size, &pf, err, sizeof(err)))
		return 0;
	for (size_t i = 0; i < pf.n_parts; i++)
		pf.parts[i].changed = true; /* rendered from the parsed values */
	if (reparsed(&pf, &again)) {
		same_policy(&pf, &again);
		partition_file_free(&again);
	}
	if (!partition_file_copy(&pf, &copy)) {
		/* 1: refused (the name Default taken by another P_Key) */
		if (!partition_set_unconfigured_connected(&copy,
							  !partition_unconfigured_connected(&pf)) &&
		    reparsed(&copy, &again)) {
			if (partition_unconfigured_connected(&again) ==
			    partition_unconfigured_connected(&pf))
				abort(); /* the flag did not change */
			partition_file_free(&again);
		}
		partition_file_free(&copy);
	}
	partition_file_free(&pf);
	return 0;
}
