/* The peer's state, and LLDP-EXT-DCBX-MIB's notifications derived from two
 * successive states of the ports (the kernel has none of them as events).
 * Pure; dcbx_notify.c sends what these rules find.
 *
 *   lldpXdcbxMiscFeatureError    a feature's error flag goes up
 *   lldpXdcbxPeerNoFeat          the peer answers but lacks a feature we advertise
 *   lldpXdcbxPeerNoResp          the peer's data (any feature) went away
 *   lldpXdcbxPeerConfigMismatch  the peer's PG/PFC/APP configuration starts to
 *                                differ from ours
 * Each fires on the change only, not while the condition lasts. A port seen
 * for the first time counts as coming from "all clear, no peer". */
#include <string.h>

#include "dcbnl.h"

bool dcbx_peer_has(const struct dcbx_port *p, enum dcbx_feature f)
{
	switch (f) {
	case DCBX_FEAT_PG: return p->have_peer_pg;
	case DCBX_FEAT_PFC: return p->have_peer_pfc;
	case DCBX_FEAT_APP: return p->have_peer_apps;
	}
	return false;
}

static bool peer_present(const struct dcbx_port *p)
{
	return p->have_peer_pg || p->have_peer_pfc || p->have_peer_apps;
}

const struct dcbx_app *dcbx_find_app(const struct dcbx_app *apps, size_t n, uint8_t selector,
				     uint16_t id)
{
	for (size_t i = 0; i < n; i++)
		if (apps[i].selector == selector && apps[i].id == id)
			return &apps[i];
	return NULL;
}

bool dcbx_peer_mismatch(const struct dcbx_port *p, enum dcbx_feature f)
{
	if (!dcbx_peer_has(p, f))
		return false;
	switch (f) {
	case DCBX_FEAT_PG:
		if (!p->have_pg)
			return false;
		return memcmp(p->prio_pgid, p->peer_prio_pg, DCBX_PRIOS) ||
		       memcmp(p->pg_bw, p->peer_pg_bw, DCBX_PGS);
	case DCBX_FEAT_PFC:
		if (!p->have_pfc)
			return false;
		for (int i = 0; i < DCBX_PRIOS; i++)
			if (!!p->pfc[i] != !!(p->peer_pfc_en & (1u << i)))
				return true;
		return false;
	case DCBX_FEAT_APP:
		if (!p->have_apps)
			return false;
		if (p->n_apps != p->n_peer_apps)
			return true;
		for (size_t i = 0; i < p->n_apps; i++) {
			const struct dcbx_app *o = dcbx_find_app(p->peer_apps, p->n_peer_apps,
							    p->apps[i].selector, p->apps[i].id);

			if (!o || o->prio_map != p->apps[i].prio_map)
				return true;
		}
		return false;
	}
	return false;
}

bool dcbx_feature_error(const struct dcbx_port *p, enum dcbx_feature f)
{
	return p && p->have_feat_of[f - DCBX_FEAT_FIRST] &&
	       (dcbx_feat_flags(p, f) & DCBX_FLAG_ERROR);
}

static bool peer_lacks(const struct dcbx_port *p, enum dcbx_feature f)
{
	return p && peer_present(p) && p->have_feat_of[f - DCBX_FEAT_FIRST] &&
	       (dcbx_feat_flags(p, f) & DCBX_FLAG_ADVERTISE) && !dcbx_peer_has(p, f);
}

bool dcbx_any_mismatch(const struct dcbx_port *p)
{
	if (!p)
		return false;
	for (int f = DCBX_FEAT_FIRST; f <= DCBX_FEAT_LAST; f++)
		if (dcbx_peer_mismatch(p, (enum dcbx_feature)f))
			return true;
	return false;
}

const struct dcbx_port *dcbx_port_find(const struct dcbx_port *ports, size_t n,
				       unsigned ifindex)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ports[mid].ifindex == ifindex)
			return &ports[mid];
		if (ports[mid].ifindex < ifindex)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

size_t dcbx_events(const struct dcbx_port *before, size_t n_before,
		   const struct dcbx_port *after, size_t n_after, struct dcbx_event *ev,
		   size_t max)
{
	size_t n = 0;

#define EMIT(w, port, feat)                                                                \
	do {                                                                               \
		if (n < max)                                                               \
			ev[n++] = (struct dcbx_event){.what = (w), .ifindex = (port)->ifindex, \
						      .feature = (feat)};                  \
	} while (0)

	for (size_t i = 0; i < n_after; i++) {
		const struct dcbx_port *p = &after[i];
		const struct dcbx_port *o = dcbx_port_find(before, n_before, p->ifindex);

		for (int f = DCBX_FEAT_FIRST; f <= DCBX_FEAT_LAST; f++) {
			enum dcbx_feature feat = (enum dcbx_feature)f;

			if (dcbx_feature_error(p, feat) && !dcbx_feature_error(o, feat))
				EMIT(DCBX_NOTIFY_FEATURE_ERROR, p, feat);
			if (peer_lacks(p, feat) && !peer_lacks(o, feat))
				EMIT(DCBX_NOTIFY_PEER_NO_FEAT, p, feat);
		}
		if (o && peer_present(o) && !peer_present(p))
			EMIT(DCBX_NOTIFY_PEER_NO_RESP, p, 0);
		if (dcbx_any_mismatch(p) && !dcbx_any_mismatch(o))
			EMIT(DCBX_NOTIFY_CONFIG_MISMATCH, p, 0);
	}
#undef EMIT
	return n;
}
