/* Fixtures several unit tests build their snapshots from (fixtures.c). */
#ifndef IBSNMPD_TEST_FIXTURES_H
#define IBSNMPD_TEST_FIXTURES_H

#include <stdbool.h>
#include <stdint.h>

#include "ibsnmpd/fabric.h"
#include "dcbx/dcbx_internal.h"

/* A DCB port as the kernel reports it: 8 TCs, PGs 0 (priorities 0-3, 60%)
 * and 1 (4-7, 40%), PFC on priority 3, RoCEv2 on priority 3, every feature
 * enabled and advertised; with peer, what a peer sent too (PFC on 3, PGs
 * 50/50, the same application). */
struct dcbx_port fixture_dcbx_port(unsigned ifindex, const char *name, bool peer);

/* A PortInfo answer as a sweep reads it: LID, state and physical state
 * (up: active and LinkUp, else down and polling), 1X|4X supported, the
 * width enabled and active (0 when down), speeds (a LinkSpeed mask:
 * supported and enabled; active the fastest of it). */
void fixture_portinfo(struct fabric_reading *r, uint64_t guid, unsigned port, unsigned lid,
		      bool up, unsigned width_active, unsigned width_enabled, unsigned speeds);

#endif
