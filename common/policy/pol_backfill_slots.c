/*
 * pol_backfill_slots.c - "backfill" with easy=0, Slurm 22.05's plan: the
 * slot map of whole-node reservations (split from pol_backfill_plan.c,
 * which tests and places the pending jobs on it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pol_backfill_int.h"

/* ---- Slurm mode: the slot map ---------------------------------------- */

static uint64_t *slot_bits(pol_bf_t *s, int i)
{
	return s->bits + (size_t) i * (size_t) s->nw;
}

static int slots_grow(pol_bf_t *s, int n)
{
	int cap;
	int64_t *nb, *ne;
	int *nr, *nq;
	uint64_t *bits, *qsuf;

	if (n <= s->slot_cap)
		return 0;
	cap = n * 2 + 8;
	nb = realloc(s->sb, (size_t) cap * sizeof(*nb));
	if (nb)
		s->sb = nb;
	ne = realloc(s->se, (size_t) cap * sizeof(*ne));
	if (ne)
		s->se = ne;
	nr = realloc(s->rise, (size_t) cap * sizeof(*nr));
	if (nr)
		s->rise = nr;
	bits = realloc(s->bits, (size_t) cap * (size_t) s->nw * sizeof(*bits));
	if (bits)
		s->bits = bits;
	nq = realloc(s->q, (size_t) cap * sizeof(*nq));
	if (nq)
		s->q = nq;
	qsuf = realloc(s->qsuf, (size_t) cap * (size_t) s->nw * sizeof(*qsuf));
	if (qsuf)
		s->qsuf = qsuf;
	if (!nb || !ne || !nr || !bits || !nq || !qsuf) {
		errno = ENOMEM;
		return -1;
	}
	s->slot_cap = cap;
	return 0;
}

int pol_bf_slots_init(pol_bf_t *s, const pol_cluster_t *c, int64_t now)
{
	int nw = (c->n_nodes + 63) / 64, k;

	if (nw != s->nw) {
		/* avail[nw]: a word of ones for the ends spanning words */
		uint64_t *a = realloc(s->avail, (size_t) (nw + 1) * sizeof(*a));
		uint64_t *jn = a ? realloc(s->jn, (size_t) nw * sizeof(*jn))
				 : NULL;
		uint64_t *sa = jn ? realloc(s->sh_avail,
					    (size_t) nw * sizeof(*sa))
				  : NULL;
		uint64_t *sd = sa ? realloc(s->sh_dirty,
					    (size_t) nw * sizeof(*sd))
				  : NULL;
		uint64_t *qa = sd ? realloc(s->qacc, (size_t) nw * sizeof(*qa))
				  : NULL;

		if (a)
			s->avail = a;
		if (jn)
			s->jn = jn;
		if (sa)
			s->sh_avail = sa;
		if (sd)
			s->sh_dirty = sd;
		if (qa)
			s->qacc = qa;
		if (!a || !jn || !sa || !sd || !qa) {
			errno = ENOMEM;
			return -1;
		}
		free(s->bits);
		s->bits = NULL;
		free(s->qsuf);
		s->qsuf = NULL;
		s->slot_cap = 0;
		free(s->memo_avail);
		s->memo_avail = calloc((size_t) BF_MEMO * (size_t) nw,
				       sizeof(uint64_t));
		if (!s->memo_avail) {
			errno = ENOMEM;
			return -1;
		}
		s->nw = nw;
	}
	if (slots_grow(s, 1))
		return -1;
	s->sh_gen = 0; /* s->sh: rebuilt at the first will-run test */
	s->avail[nw] = ~(uint64_t) 0;
	s->gen++; /* new pass: forget will-run results */
	if (!s->gen)
		s->gen = 1;
	s->n_slots = 1;
	s->recs = 1;
	s->sb[0] = rdown(now, s->res);
	s->se[0] = rdown(now + s->window, s->res);
	if (s->se[0] <= s->sb[0])
		s->se[0] = s->sb[0] + s->res;
	for (k = 0; k < nw; k++)
		s->bits[k] = ~(uint64_t) 0;
	s->rise[0] = 1;
	return 0;
}

/* Recompute s->rise after the nodes of slots lo..hi changed: from hi
 * down, past lo - 1 only until a slot whose own successor frees a node
 * (the entries below it depend on nothing above). */
static void slots_rise(pol_bf_t *s, int lo, int hi)
{
	int i, k, n = s->n_slots;

	if (hi >= n - 1) {
		s->rise[n - 1] = 1;
		hi = n - 2;
	}
	for (i = hi; i >= 0; i--) {
		const uint64_t *cur = slot_bits(s, i);
		const uint64_t *nxt = slot_bits(s, i + 1);

		for (k = 0; k < s->nw && !(nxt[k] & ~cur[k]); k++)
			;
		if (k == s->nw) {
			s->rise[i] = s->rise[i + 1] + 1;
		} else {
			s->rise[i] = 0;
			if (i < lo - 1)
				break;
		}
	}
}

/* Split slot i at t (sb[i] < t < se[i]): slot i becomes [sb, t), a copy
 * [t, se) follows it. */
static int slot_split(pol_bf_t *s, int i, int64_t t)
{
	if (slots_grow(s, s->n_slots + 1))
		return -1;
	memmove(&s->sb[i + 2], &s->sb[i + 1],
		(size_t) (s->n_slots - i - 1) * sizeof(*s->sb));
	memmove(&s->se[i + 2], &s->se[i + 1],
		(size_t) (s->n_slots - i - 1) * sizeof(*s->se));
	memmove(&s->rise[i + 1], &s->rise[i],
		(size_t) (s->n_slots - i) * sizeof(*s->rise));
	memmove(slot_bits(s, i + 1), slot_bits(s, i),
		(size_t) (s->n_slots - i) * (size_t) s->nw * sizeof(uint64_t));
	s->sb[i + 1] = t;
	s->se[i + 1] = s->se[i];
	s->se[i] = t;
	s->n_slots++;
	return 0;
}

/* The first slot that ends after t (n_slots if none). */
static int slot_after(const pol_bf_t *s, int64_t t)
{
	int lo = 0, hi = s->n_slots;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (s->se[mid] > t)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* The first slot from i on that begins after t (n_slots if none). */
static int slot_begin_after(const pol_bf_t *s, int i, int64_t t)
{
	int hi = s->n_slots;

	while (i < hi) {
		int mid = i + (hi - i) / 2;

		if (s->sb[mid] > t)
			hi = mid;
		else
			i = mid + 1;
	}
	return i;
}

/* The first slot from i on that begins after t, galloping from i: a
 * caller whose t only grows starts from its last answer. */
static int slot_begin_gallop(const pol_bf_t *s, int i, int64_t t)
{
	int step = 1, hi;

	if (i >= s->n_slots || s->sb[i] > t)
		return i;
	/* sb[i] <= t: find hi with sb[hi] > t (or n_slots) */
	for (;;) {
		hi = i + step;
		if (hi >= s->n_slots) {
			hi = s->n_slots;
			break;
		}
		if (s->sb[hi] > t)
			break;
		i = hi;
		step *= 2;
	}
	return slot_begin_after(s, i + 1, t);
}

void pol_bf_scan_reset(pol_bf_t *s, bf_scan_t *sc)
{
	int k;

	*sc = (bf_scan_t){ -1, 0, 0, 0, 0, -1 };
	for (k = 0; k < s->nw; k++)
		s->qacc[k] = ~(uint64_t) 0;
}

/* The back of the queue (qm..qt) to its front: suffix ANDs. */
static void scan_flip(pol_bf_t *s, bf_scan_t *sc)
{
	int nw = s->nw, x, k;

	for (x = sc->qt - 1; x >= sc->qm; x--) {
		const uint64_t *b = slot_bits(s, s->q[x]);
		uint64_t *d = s->qsuf + (size_t) x * (size_t) nw;

		if (x == sc->qt - 1)
			memcpy(d, b, (size_t) nw * sizeof(*d));
		else
			for (k = 0; k < nw; k++)
				d[k] = b[k] & d[nw + k];
	}
	sc->qm = sc->qt;
	for (k = 0; k < nw; k++)
		s->qacc[k] = ~(uint64_t) 0;
}

void pol_bf_slots_avail(pol_bf_t *s, int64_t start, int64_t end, int64_t *later,
			bf_scan_t *sc)
{
	int i0 = sc->i0 >= 0 ? sc->i0 : slot_after(s, start), ie, r, k;
	int nw = s->nw;

	*later = 0;
	sc->i0 = -1;
	for (k = 0; k < nw; k++)
		s->avail[k] = ~(uint64_t) 0;
	if (i0 >= s->n_slots)
		return;
	ie = slot_begin_gallop(s, sc->ie > i0 ? sc->ie : i0, end);
	sc->ie = ie;
	r = i0 + s->rise[i0];
	if (r <= ie && r + 1 < s->n_slots) {
		*later = s->se[r];
		sc->i0 = r + 1;
	}
	if (ie <= i0)
		return;
	/* the rises below r leave the queue */
	while (sc->qh < sc->qt && s->q[sc->qh] < r) {
		if (sc->qh == sc->qm)
			scan_flip(s, sc);
		sc->qh++;
	}
	if (sc->qh == sc->qt) {
		sc->qh = sc->qm = sc->qt = 0;
		for (k = 0; k < nw; k++)
			s->qacc[k] = ~(uint64_t) 0;
		sc->nx = r;
	}
	/* those in [nx, ie - 1) enter it */
	for (; sc->nx < ie - 1; sc->nx = sc->nx + 1 + s->rise[sc->nx + 1]) {
		const uint64_t *b = slot_bits(s, sc->nx);

		s->q[sc->qt++] = sc->nx;
		for (k = 0; k < nw; k++)
			s->qacc[k] &= b[k];
	}
	for (k = 0; k < nw; k++)
		s->avail[k] = s->qacc[k] & slot_bits(s, ie - 1)[k];
	if (sc->qh < sc->qm)
		for (k = 0; k < nw; k++)
			s->avail[k] &= s->qsuf[(size_t) sc->qh * (size_t) nw +
					       (size_t) k];
}

/* Does a reservation of nodes jn over [start, end) meet one already made? */
bool pol_bf_slots_overlap(pol_bf_t *s, int64_t start, int64_t end)
{
	int i, k;

	for (i = slot_after(s, start); i < s->n_slots; i++) {
		if (s->sb[i] >= end)
			break;
		for (k = 0; k < s->nw; k++)
			if (s->jn[k] & ~slot_bits(s, i)[k])
				return true;
	}
	return false;
}

/* Reserve nodes jn over [start, end) (backfill.c _add_reservation()). */
int pol_bf_slots_add(pol_bf_t *s, int64_t start, int64_t end)
{
	int i, k, lo = -1, hi = -1;

	if (start < s->sb[0])
		start = s->sb[0];
	if (end < start + s->res)
		end = start + s->res;
	/* the records _add_reservation() takes from the table: one for the
	 * start unless a slot ends there, one for the end inside a slot */
	i = slot_after(s, start - 1); /* the first slot with se >= start */
	s->recs += i < s->n_slots && s->se[i] > start;
	i = slot_after(s, end - 1);
	s->recs += i < s->n_slots && s->se[i] > end;
	for (i = slot_after(s, start); i < s->n_slots; i++) {
		if (s->sb[i] >= end)
			break;
		if (s->sb[i] < start) {
			if (slot_split(s, i, start))
				return -1;
			continue; /* the [start, ...) half is next */
		}
		if (s->se[i] > end && slot_split(s, i, end))
			return -1;
		for (k = 0; k < s->nw; k++)
			slot_bits(s, i)[k] &= ~s->jn[k];
		if (lo < 0)
			lo = i;
		hi = i;
	}
	if (lo >= 0)
		slots_rise(s, lo, hi);
	return 0;
}
