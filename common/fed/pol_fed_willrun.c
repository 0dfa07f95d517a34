/*
 * pol_fed_willrun.c - which will-run requests agorad sends in a round
 * (pol_fed_willrun.h).
 */
#include "pol_fed_willrun.h"

#include <stdio.h>
#include <string.h>

bool pol_fed_willrun_fresh(const pol_fed_willrun_kept_t *k, int64_t now,
			   int free_now, int max_age_s)
{
	return k && k->have && now >= k->asked && now - k->asked < max_age_s &&
	       k->free_then == free_now;
}

int pol_fed_willrun_pick_moot(const pol_fed_willrun_kept_t *kept,
			      const bool *moot, int n, int64_t now,
			      int free_now, int max_age_s, int moot_age_s,
			      int max_asks, pol_fed_willrun_act_t *act)
{
	int asks = 0;

	for (int i = 0; i < n; i++) {
		bool stands = pol_fed_willrun_fresh(&kept[i], now, free_now,
						    max_age_s);

		if (!stands && moot && moot[i] && kept[i].have &&
		    kept[i].valid && now >= kept[i].asked &&
		    now - kept[i].asked < moot_age_s)
			stands = true;
		if (stands)
			act[i] = POL_FED_WILLRUN_REUSE;
		else if (asks < max_asks) {
			act[i] = POL_FED_WILLRUN_ASK;
			asks++;
		} else
			act[i] = POL_FED_WILLRUN_DEFER;
	}
	return asks;
}

int pol_fed_willrun_pick(const pol_fed_willrun_kept_t *kept, int n, int64_t now,
			 int free_now, int max_age_s, int max_asks,
			 pol_fed_willrun_act_t *act)
{
	return pol_fed_willrun_pick_moot(kept, NULL, n, now, free_now,
					 max_age_s, 0, max_asks, act);
}

bool pol_fed_heartbeat_due(int64_t last, int64_t now, int timeout_s)
{
	int64_t every = timeout_s / 4;

	return last <= 0 || now < last || now - last >= every;
}

int pol_fed_pin_workers(int n, int max_workers, int per_worker)
{
	int k;

	if (n <= 0 || max_workers <= 1 || per_worker <= 0)
		return 1;
	k = (n + per_worker - 1) / per_worker;
	return k < 1 ? 1 : k > max_workers ? max_workers : k;
}

bool pol_fed_willrun_copy(char *dst, size_t size, const char *src,
			  const char *field, char *too_long,
			  size_t too_long_size)
{
	size_t len = src ? strlen(src) : 0;

	if (len < size) {
		if (len)
			memcpy(dst, src, len);
		dst[len] = '\0';
		return true;
	}
	if (size)
		dst[0] = '\0';
	if (too_long && too_long_size && !too_long[0])
		snprintf(too_long, too_long_size, "%s", field ? field : "?");
	return false;
}

void pol_fed_willrun_refusal(const char *too_long, char *buf, size_t n)
{
	if (n)
		snprintf(buf, n, "%s too long to copy into a will-run request",
			 too_long ? too_long : "?");
}
