/* Fixtures several unit tests share (fixtures.h). */
#include <stdio.h>
#include <string.h>

#include <infiniband/mad.h>

#include "ibsnmpd/mad_engine.h"

#include "fixtures.h"

struct dcbx_port fixture_dcbx_port(unsigned ifindex, const char *name, bool peer)
{
	struct dcbx_port p = {.ifindex = ifindex, .have_state = true, .state = 1,
			      .have_numtcs = true, .numtcs_pg = 8, .numtcs_pfc = 8,
			      .have_pg = true, .have_pfc = true, .have_apps = true,
			      .have_feat = true, .n_apps = 1};

	snprintf(p.ifname, sizeof(p.ifname), "%s", name);
	for (int i = 0; i < DCBX_PRIOS; i++)
		p.prio_pgid[i] = i < 4 ? 0 : 1;
	p.pg_bw[0] = 60;
	p.pg_bw[1] = 40;
	p.pfc[3] = 1;
	p.apps[0] = (struct dcbx_app){.selector = 1, .id = 4791, .prio_map = 0x08}; /* RoCEv2 */
	for (int f = 0; f < DCBX_FEAT_COUNT; f++) {
		p.have_feat_of[f] = true;
		p.feat[f] = DCBX_FLAG_ENABLE | DCBX_FLAG_ADVERTISE;
	}
	if (peer) {
		p.have_peer_pg = p.have_peer_pfc = p.have_peer_apps = true;
		p.peer_pg_enable = 1;
		p.peer_pg_tcs = 8;
		p.peer_pg_bw[0] = 50;
		p.peer_pg_bw[1] = 50;
		for (int i = 0; i < DCBX_PRIOS; i++)
			p.peer_prio_pg[i] = (uint8_t)(i % 2);
		p.peer_pfc_en = 0x08;
		p.peer_pfc_tcs = 8;
		p.n_peer_apps = 1;
		p.peer_apps[0] = p.apps[0];
	}
	return p;
}

void fixture_portinfo(struct fabric_reading *r, uint64_t guid, unsigned port, unsigned lid,
		      bool up, unsigned width_active, unsigned width_enabled, unsigned speeds)
{
	unsigned fastest = speeds & 4 ? 4 : speeds & 2 ? 2 : 1;

	memset(r, 0, sizeof(*r));
	r->guid = guid;
	r->port = port;
	r->result = MAD_OK;
	mad_set_field(r->data, 0, IB_PORT_LID_F, lid);
	mad_set_field(r->data, 0, IB_PORT_STATE_F, up ? 4 : 1);
	mad_set_field(r->data, 0, IB_PORT_PHYS_STATE_F, up ? 5 : 2);
	mad_set_field(r->data, 0, IB_PORT_LINK_WIDTH_SUPPORTED_F, 3);
	mad_set_field(r->data, 0, IB_PORT_LINK_WIDTH_ENABLED_F, width_enabled);
	mad_set_field(r->data, 0, IB_PORT_LINK_WIDTH_ACTIVE_F, up ? width_active : 0);
	mad_set_field(r->data, 0, IB_PORT_LINK_SPEED_SUPPORTED_F, speeds);
	mad_set_field(r->data, 0, IB_PORT_LINK_SPEED_ENABLED_F, speeds);
	mad_set_field(r->data, 0, IB_PORT_LINK_SPEED_ACTIVE_F, fastest);
}
