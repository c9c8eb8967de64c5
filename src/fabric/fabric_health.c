/* A link's health, from the PM sweeps' counters of its port: the bit error
 * rates before and after FEC over a window, flapping, and congestion. Pure
 * (no net-snmp, no I/O): fabric_build() calls it for every row, the unit
 * tests directly.
 *
 * Bit error rate: errors over the bits the link carried between two
 * counter readings, from berWindow/2 to berWindow seconds apart (two
 * readings are kept; the older is dropped when the newer is half a window
 * old). The bits are the port's data rate (lanes x the lane's data rate)
 * times the seconds between the readings: the rate a link runs at, whether
 * or not it carries traffic, as vendors' tools compute a physical BER.
 * Before FEC the errors are the symbols RS-FEC corrected (or, in the older
 * layout, the errors the lanes detected); after FEC, the blocks FEC could
 * not correct plus SymbolErrorCounter. */
#include <string.h>

#include "ibsnmpd/fabric.h"

void fabric_health_defaults(struct fabric_health_config *c)
{
	*c = (struct fabric_health_config){
		.ber_window_s = FABRIC_BER_WINDOW_DEFAULT,
		.ber_raw_max = FABRIC_BER_RAW_DEFAULT,
		.ber_post_max = FABRIC_BER_POST_DEFAULT,
		.flap_downs = FABRIC_FLAP_DOWNS_DEFAULT,
		.flap_minutes = FABRIC_FLAP_MINUTES_DEFAULT,
	};
}

void fabric_ber_split(double ber, unsigned *mantissa, int *exponent)
{
	int e = 0;
	unsigned m;

	if (!(ber > 0)) { /* 0 (and NaN) */
		*mantissa = 0;
		*exponent = 0;
		return;
	}
	while (ber < 1 && e > -255) {
		ber *= 10;
		e--;
	}
	while (ber >= 10) {
		ber /= 10;
		e++;
	}
	m = (unsigned)(ber * 10 + 0.5);
	if (m >= 100) {
		m = 10;
		e++;
	}
	*mantissa = m;
	*exponent = e;
}

static void note_downs(struct fabric_health *h, uint64_t n, time_t when)
{
	for (; n; n--) {
		memmove(h->downs + 1, h->downs, sizeof(h->downs) - sizeof(h->downs[0]));
		h->downs[0] = (uint32_t)when;
		if (h->n_downs < FABRIC_FLAP_KEPT)
			h->n_downs++;
	}
}

static void flapping(struct fabric_health *h, const struct fabric_health_config *c, time_t now)
{
	time_t since = now - (time_t)c->flap_minutes * 60;
	unsigned recent;

	while (h->n_downs && (time_t)h->downs[h->n_downs - 1] <= since)
		h->n_downs--; /* newest first: the old ones are at the end */
	recent = h->n_downs;
	if (recent > c->flap_downs)
		h->flapping = true;
	else if (!recent)
		h->flapping = false; /* quiet for a whole window */
	/* the other end may show the same downs a sweep later: said until
	 * quiet for a window after the notification */
	if (!h->flapping && !recent && h->flap_said && (time_t)h->flap_said <= since)
		h->flap_said = 0;
}

static void ber_compute(struct fabric_health *h, double bits, uint64_t raw, uint64_t post,
			const struct fabric_health_config *c)
{
	unsigned m;
	int e;
	double raw_ber = (double)raw / bits, post_ber = (double)post / bits;

	fabric_ber_split(raw_ber, &m, &e);
	h->ber_raw_m = (uint8_t)m;
	h->ber_raw_e = (int16_t)e;
	fabric_ber_split(post_ber, &m, &e);
	h->ber_post_m = (uint8_t)m;
	h->ber_post_e = (int16_t)e;
	h->ber_valid = true;
	h->ber_high = raw_ber > c->ber_raw_max || post_ber > c->ber_post_max;
}

static void ber_window(struct fabric_health *h, const struct fabric_port *p,
		       const struct pm_port_state *q, const struct fabric_health_config *c)
{
	uint32_t half = c->ber_window_s / 2 ? c->ber_window_s / 2 : 1;
	uint64_t raw = q->fec_raw_total;
	uint64_t post = q->fec_uncorrectable_total + q->symbol_errors_total;
	uint32_t t = (uint32_t)q->last_read;

	h->ber_valid = false;
	if (!p->up || !p->rate_mbps || !q->have_fec || q->stale) {
		h->anchors = 0; /* the bits count only while the link runs */
		return;
	}
	if (h->anchors && (h->anchor_rate != p->rate_mbps || raw < h->anchor_raw[0] ||
			   post < h->anchor_post[0] || t < h->anchor_t[0]))
		h->anchors = 0; /* another rate, or the totals started again */
	if (h->anchors == 2 && t - h->anchor_t[1] >= half) {
		h->anchor_t[0] = h->anchor_t[1];
		h->anchor_raw[0] = h->anchor_raw[1];
		h->anchor_post[0] = h->anchor_post[1];
		h->anchors = 1;
	}
	if (h->anchors == 0 || (h->anchors == 1 && t - h->anchor_t[0] >= half)) {
		h->anchor_t[h->anchors] = t;
		h->anchor_raw[h->anchors] = raw;
		h->anchor_post[h->anchors] = post;
		h->anchors++;
		h->anchor_rate = p->rate_mbps;
	}
	if (t - h->anchor_t[0] < half)
		return; /* not half a window read yet */
	ber_compute(h, (double)p->rate_mbps * 1e6 * (double)(t - h->anchor_t[0]),
		    raw - h->anchor_raw[0], post - h->anchor_post[0], c);
}

void fabric_health_update(struct fabric_port *p, const struct fabric_port *prev,
			  const struct pm_port_state *q, const struct fabric_health_config *c,
			  time_t now)
{
	struct fabric_health *h = &p->health;
	bool counted = q && q->have_raw;

	if (counted && (uint32_t)q->last_read != h->pm_read) {
		if (h->pm_read) {
			time_t dt = q->last_read - (time_t)h->pm_read;

			note_downs(h, pm_counter_rise(h->link_downed, q->raw.link_downed),
				   q->last_read);
			/* a tick of PortXmitWait: 8 octets at the port's data rate
			 * (Quantum's count; PortSamplesControl Tick 7) */
			h->have_xmit_wait = p->up && p->rate_mbps && dt > 0;
			if (h->have_xmit_wait) {
				double waited =
					(double)pm_counter_rise(h->xmit_wait, q->raw.xmit_wait) *
					64.0 / ((double)p->rate_mbps * 1e6 * (double)dt);

				h->xmit_wait_permille =
					(uint16_t)(waited >= 1 ? 1000 : waited * 1000 + 0.5);
			}
		}
		h->pm_read = (uint32_t)q->last_read;
		h->link_downed = q->raw.link_downed;
		h->xmit_wait = q->raw.xmit_wait;
		ber_window(h, p, q, c);
	} else if (!counted && prev && prev->up && !p->up && p->read_now) {
		note_downs(h, 1, now); /* no counters: the link sweep saw it go */
	}
	if (!p->up) {
		h->have_xmit_wait = false;
		h->ber_valid = false;
		h->anchors = 0;
	}
	flapping(h, c, now);
}
