/*
 * pol_fed_backoff.c - skipping a cluster that timed out (pol_fed_backoff.h).
 */
#include "pol_fed_backoff.h"

bool pol_fed_backoff_skip(const pol_fed_backoff_t *b, int64_t now)
{
	return b->until > 0 && now < b->until;
}

int pol_fed_backoff_note(pol_fed_backoff_t *b, bool timed_out, int64_t now,
			 int base_s, int max_s)
{
	int64_t d;

	if (base_s <= 0 || max_s < base_s) {
		base_s = POL_FED_BACKOFF_BASE_S;
		max_s = POL_FED_BACKOFF_MAX_S;
	}
	if (!timed_out) {
		b->timeouts = 0;
		b->until = 0;
		return 0;
	}
	if (b->timeouts < 30)
		b->timeouts++;
	d = base_s;
	for (int k = 1; k < b->timeouts && d < max_s; k++)
		d *= 2;
	if (d > max_s)
		d = max_s;
	b->until = now + d;
	return (int) d;
}
