/* libFuzzer target: the SA's answers (sa_view.c), segment by segment, and
 * the view made of them. Input: chunks of [table 0-2][length, 2 octets][a
 * MAD], fed to the NodeRecord, PortInfoRecord or LinkRecord table. What
 * the view prints must read back (topology_parse) as a whole discovery. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <infiniband/mad.h>

#include "ibsnmpd/sa_view.h"
#include "ibsnmpd/topology.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned attrs[3] = {IB_SA_ATTR_NODERECORD, IB_SA_ATTR_PORTINFORECORD,
					  IB_SA_ATTR_LINKRECORD};
	struct sa_table t[3];
	bool whole[3] = {false, false, false};
	char err[160], *text = NULL;
	size_t len = 0;
	FILE *out;

	for (int i = 0; i < 3; i++)
		sa_table_init(&t[i], attrs[i]);
	while (size >= 3) {
		unsigned which = data[0] % 3;
		size_t n = (size_t)data[1] << 8 | data[2];

		data += 3;
		size -= 3;
		if (n > size)
			n = size;
		if (!whole[which]) {
			int r = sa_table_take(&t[which], data, n, err, sizeof(err));

			if (r < 0) { /* of no use: begun again */
				sa_table_free(&t[which]);
				sa_table_init(&t[which], attrs[which]);
			}
			whole[which] = r == 1;
		}
		data += n;
		size -= n;
	}
	out = open_memstream(&text, &len);
	if (out && !sa_view_print(out, &t[0], &t[1], &t[2], 1, err, sizeof(err))) {
		struct topology *f;

		fprintf(out, "done 0\n");
		fclose(out);
		f = topology_parse(text, len, NULL, err, sizeof(err));
		if (!f) { /* the view printed what the daemon would refuse */
			fprintf(stderr, "refused: %s\n", err);
			abort();
		}
		topology_free(f);
	} else if (out) {
		fclose(out);
	}
	free(text);
	for (int i = 0; i < 3; i++)
		sa_table_free(&t[i]);
	return 0;
}
