/* libFuzzer target: the active alarms' state file (alarm_state_parse),
 * which anything with write access to it may change. What parses is
 * written again and parsed again: the same alarms must come back; and it
 * must serve as what a first build takes back (no two rows one index). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ibsnmpd/alarm.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[200], *text;
	size_t len;
	struct alarm_snapshot *s = alarm_state_parse((const char *)data, size, err, sizeof(err)),
			      *again, *built;
	struct alarm_list conds = {0};
	struct alarm_build in = {.conds = &conds, .now = 1, .now_ticks = 1};

	if (!s)
		return 0;
	text = alarm_state_format(s, &len);
	if (!text || !(again = alarm_state_parse(text, len, err, sizeof(err))))
		abort();
	if (again->n != s->n || again->next_index != s->next_index)
		abort();
	for (size_t i = 0; i < s->n; i++)
		if (alarm_key_cmp(&s->rows[i].key, &again->rows[i].key) ||
		    s->rows[i].index != again->rows[i].index || s->rows[i].began != again->rows[i].began)
			abort();
	/* every alarm still holds, and one more: the kept ones keep their index */
	for (size_t i = 0; i < s->n; i++)
		alarm_list_add(&conds, s->rows[i].key.kind, s->rows[i].key.guid, s->rows[i].key.port,
			       s->rows[i].key.sub, 0);
	alarm_list_add(&conds, ALARM_KINDS - 1, UINT64_MAX, UINT32_MAX, UINT32_MAX, 0);
	in.kept = s;
	if (!(built = alarm_build(&in)) || conds.failed)
		abort();
	for (size_t i = 1; i < built->n; i++)
		if (built->rows[i - 1].index >= built->rows[i].index)
			abort();
	alarm_snapshot_free(built);
	alarm_list_free(&conds);
	alarm_snapshot_free(again);
	alarm_snapshot_free(s);
	free(text);
	return 0;
}
