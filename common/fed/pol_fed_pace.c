/*
 * pol_fed_pace.c - the next round's start and the id sets
 * (pol_fed_pace.h).
 */
#include "pol_fed_pace.h"

#include <stdlib.h>
#include <string.h>

double pol_fed_round_wait_s(double interval_s, double elapsed_s, int pinned)
{
	double left;

	if (pinned > 0)
		return 0;
	left = interval_s - (elapsed_s > 0 ? elapsed_s : 0);
	return left > 0 ? left : 0;
}

bool pol_fed_survey_late(double now, double first_at, double kept_at,
			 int pins_on_way, bool was_late, double grace_s,
			 double max_age_s)
{
	if (max_age_s <= 0 || first_at < 0 || kept_at < 0 || pins_on_way <= 0 ||
	    was_late)
		return false;
	if (now - first_at < grace_s)
		return false;
	return now - kept_at <= max_age_s;
}

/* The first index of s->v not below id. */
static int idset_at(const pol_fed_idset_t *s, uint32_t id)
{
	int lo = 0, hi = s->n;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (s->v[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool pol_fed_idset_add(pol_fed_idset_t *s, uint32_t id)
{
	int at = idset_at(s, id);

	if (at < s->n && s->v[at] == id)
		return false;
	if (s->n == s->cap) {
		int cap = s->cap ? 2 * s->cap : 16;
		uint32_t *nv = realloc(s->v, (size_t) cap * sizeof(*nv));

		if (!nv)
			return true;
		s->v = nv;
		s->cap = cap;
	}
	memmove(s->v + at + 1, s->v + at, (size_t) (s->n - at) * sizeof(*s->v));
	s->v[at] = id;
	s->n++;
	return true;
}

bool pol_fed_idset_has(const pol_fed_idset_t *s, uint32_t id)
{
	int at = idset_at(s, id);

	return at < s->n && s->v[at] == id;
}

void pol_fed_idset_del(pol_fed_idset_t *s, uint32_t id)
{
	int at = idset_at(s, id);

	if (at >= s->n || s->v[at] != id)
		return;
	memmove(s->v + at, s->v + at + 1,
		(size_t) (s->n - at - 1) * sizeof(*s->v));
	s->n--;
}

void pol_fed_idset_keep(pol_fed_idset_t *s, const uint32_t *keep, int n)
{
	int w = 0;

	for (int i = 0; i < s->n; i++) {
		bool kept = false;

		for (int k = 0; k < n && !kept; k++)
			kept = keep[k] == s->v[i];
		if (kept)
			s->v[w++] = s->v[i];
	}
	s->n = w;
}

void pol_fed_idset_free(pol_fed_idset_t *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int id_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;

	return (x > y) - (x < y);
}

int pol_fed_orphans(const uint32_t *alive, int n_alive,
		    const uint32_t *cancelled, int n_cancelled, uint32_t *out)
{
	uint32_t *c;
	int n = 0;

	if (n_alive <= 0 || n_cancelled <= 0 || !alive || !cancelled)
		return 0;
	if (!(c = malloc((size_t) n_cancelled * sizeof(*c))))
		return -1;
	memcpy(c, cancelled, (size_t) n_cancelled * sizeof(*c));
	qsort(c, (size_t) n_cancelled, sizeof(*c), id_cmp);
	for (int i = 0; i < n_alive; i++)
		if (bsearch(&alive[i], c, (size_t) n_cancelled, sizeof(*c),
			    id_cmp))
			out[n++] = alive[i];
	free(c);
	return n;
}
