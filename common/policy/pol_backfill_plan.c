/*
 * pol_backfill_plan.c - "backfill" with easy=0: Slurm 22.05's plan (the
 * top of pol_backfill.c describes it), after the main scheduler of
 * pol_backfill.c: the slot map of whole-node reservations, the will-run
 * test on the usable nodes (memoised per pass), and the pass over the
 * pending jobs from the head on.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pol_backfill_int.h"

/* ---- Slurm mode: the slot map ---------------------------------------- */

static int64_t rdown(int64_t t, int64_t res)
{
	return t >= 0 ? t / res * res : -((-t + res - 1) / res) * res;
}

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

static int slots_init(pol_bf_t *s, const pol_cluster_t *c, int64_t now)
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

/*
 * Nodes usable over [start, end] (inclusive end, as backfill.c compares
 * begin_time <= end_time) into s->avail, and *later = the end of the first
 * slot after start whose successor frees a node (0: none).
 *
 * Slurm's scan goes slot by slot from start, ANDing the slots' nodes and
 * testing each next slot (up to the first one past end) for a node that
 * is not in the running AND.  Between two rises (s->rise) the slots' node
 * sets only shrink, so the running AND is the current slot's set: the
 * first slot the scan stops at is the first rise, and the AND over the
 * range is that of the rises in it and of its last slot.
 *
 * sc carries what one job's loop learns between calls (its start and end
 * only grow, and the slots do not change): sc->i0 >= 0 is the first slot
 * that ends after start (slot_after(start)), else it is searched;
 * sc->ie the last answer for the first slot past end; on return
 * sc->i0 = the slot after the rise that gave *later (slot_after(*later))
 * or -1.  The rises of the range, [r, ie - 1), only move right too: they
 * are kept in a queue (s->q from sc->qh to sc->qt) whose AND is the AND
 * of qsuf[qh] (the rises below qm) and qacc (those from qm on), so that a
 * call ANDs the rises that entered or left the range, not all of them.
 */
typedef struct bf_scan {
	int i0, ie;
	int qh, qm, qt, nx; /* nx: the next rise to push (-1: none yet) */
} bf_scan_t;

static void scan_reset(pol_bf_t *s, bf_scan_t *sc)
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

static void slots_avail(pol_bf_t *s, int64_t start, int64_t end, int64_t *later,
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
static bool slots_overlap(pol_bf_t *s, int64_t start, int64_t end)
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
static int slots_add(pol_bf_t *s, int64_t start, int64_t end)
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

static void nodes_of(pol_bf_t *s, const pol_alloc_t *a)
{
	int p;

	memset(s->jn, 0, (size_t) s->nw * sizeof(*s->jn));
	for (p = 0; p < a->n_parts; p++)
		s->jn[a->parts[p].node / 64] |= (uint64_t) 1
						<< (a->parts[p].node % 64);
}

static bool node_usable(const pol_bf_t *s, int node)
{
	return (s->avail[node / 64] >> (node % 64)) & 1;
}

/* Release on s->sh the GPUs of e that lie on usable nodes; 1 if any. */
static int give_usable(pol_bf_t *s, const bf_end_t *e)
{
	const pol_alloc_t *a = e->alloc;
	pol_alloc_t part = { s->parts, 0 };
	int p;

	if (e->node >= 0) {
		if (!node_usable(s, e->node))
			return 0;
		return pol_freemap_give(s->sh, a) ? -1 : 1;
	}

	if (a->n_parts > s->parts_cap) {
		pol_alloc_part_t *np = realloc(s->parts, (size_t) a->n_parts *
								 sizeof(*np));

		if (!np) {
			errno = ENOMEM;
			return -1;
		}
		s->parts = np;
		s->parts_cap = a->n_parts;
		part.parts = np;
	}
	for (p = 0; p < a->n_parts; p++)
		if (node_usable(s, a->parts[p].node))
			part.parts[part.n_parts++] = a->parts[p];
	if (!part.n_parts)
		return 0;
	if (pol_freemap_give(s->sh, &part))
		return -1;
	return 1;
}

/*
 * The will-run test on the usable nodes (s->avail): *T = now and *a if j
 * fits now, else the end of the batch of running jobs after which it fits
 * (cons_common/job_test.c _will_run_test()), else *T = INT64_MAX.
 */
/* Node nd of s->sh to what the test's base has there: its free GPUs in
 * s->w.fm if usable, else none. */
static int sh_reset(pol_bf_t *s, int nd)
{
	pol_gpumask_t want = node_usable(s, nd) ? pol_freemap_node(s->w.fm, nd)
						: 0,
		      cur = pol_freemap_node(s->sh, nd);
	pol_alloc_part_t pt = { nd, want & ~cur };
	pol_alloc_t a = { &pt, 1 };

	if (cur & ~want)
		pol_freemap_take_mask(s->sh, nd, cur & ~want);
	if (pt.gpus && pol_freemap_give(s->sh, &a))
		return -1;
	return 0;
}

/* s->sh := s->w.fm with the nodes outside s->avail emptied: a copy and
 * every unusable node at the first test of a gen, then only the nodes
 * whose usability changed and those the last test gave GPUs on (the map
 * is a function of its nodes' free masks, so both give the same map). */
static int sh_base(pol_bf_t *s, const pol_cluster_t *c)
{
	int k, node;
	uint64_t w;

	if (s->sh_gen != s->gen) {
		if (pol_freemap_assign(s->sh, s->w.fm))
			return -1;
		for (k = 0; k < s->nw; k++)
			for (w = ~s->avail[k]; w; w &= w - 1) {
				node = k * 64 + __builtin_ctzll(w);
				if (node >= c->n_nodes)
					break;
				pol_freemap_take_mask(s->sh, node,
						      s->node_mask[node]);
			}
		s->sh_gen = s->gen;
	} else {
		for (k = 0; k < s->nw; k++)
			for (w = (s->sh_avail[k] ^ s->avail[k]) |
				 s->sh_dirty[k];
			     w; w &= w - 1) {
				node = k * 64 + __builtin_ctzll(w);
				if (node >= c->n_nodes)
					break;
				if (sh_reset(s, node))
					return -1;
			}
	}
	memcpy(s->sh_avail, s->avail, (size_t) s->nw * sizeof(*s->avail));
	memset(s->sh_dirty, 0, (size_t) s->nw * sizeof(*s->sh_dirty));
	return 0;
}

/* Mark the nodes of e (given on s->sh) dirty. */
static void sh_mark(pol_bf_t *s, const bf_end_t *e)
{
	int p;

	if (e->w >= 0) {
		s->sh_dirty[e->w] |= e->bits;
		return;
	}
	for (p = 0; p < e->alloc->n_parts; p++)
		s->sh_dirty[e->alloc->parts[p].node / 64] |=
			(uint64_t) 1 << (e->alloc->parts[p].node % 64);
}

/* Has block b of the ends (BF_EBLK ends from b * BF_EBLK) an end with a
 * usable node? */
static bool block_usable(const pol_bf_t *s, int b)
{
	const uint64_t *o = s->ebo + (size_t) b * (size_t) (s->nw + 1);
	uint64_t u = 0;
	int k;

	for (k = 0; k <= s->nw; k++)
		u |= s->avail[k] & o[k];
	return u != 0;
}

static int bf_will_run(pol_bf_t *s, int n_ends, const pol_job_t *j, int64_t now,
		       int64_t *T, pol_alloc_t *a)
{
	const pol_cluster_t *c = pol_freemap_cluster(s->w.fm);
	int node, i = 0, cap, k;
	uint64_t w;
	int64_t bar = 0, tw = BF_WILL_RUN_WINDOW;
	const int *ew = s->ew, nf = s->n_fin;
	const uint64_t *eb = s->eb, *av = s->avail;

	*T = INT64_MAX;
	if (s->node_gpus_c != c) {
		int *ng = realloc(s->node_gpus,
				  (size_t) c->n_nodes * sizeof(*ng));

		if (!ng) {
			errno = ENOMEM;
			return -1;
		}
		pol_gpumask_t *nm = realloc(s->node_mask,
					    (size_t) c->n_nodes * sizeof(*nm));

		s->node_gpus = ng;
		if (!nm) {
			errno = ENOMEM;
			return -1;
		}
		s->node_mask = nm;
		s->node_gpus_c = c;
		for (node = 0; node < c->n_nodes; node++) {
			nm[node] = pol_node_all_gpus(c, node);
			ng[node] = c->nodes[node].up ? pol_popcount(nm[node])
						     : 0;
		}
	}
	/* quick no: the usable nodes cannot hold the job even when empty */
	cap = 0;
	for (k = 0; k < s->nw && cap < j->total_gpus; k++)
		for (w = s->avail[k]; w && cap < j->total_gpus; w &= w - 1) {
			node = k * 64 + __builtin_ctzll(w);
			if (node >= c->n_nodes)
				break;
			if (c->nodes[node].pool == j->pool)
				cap += s->node_gpus[node];
		}
	if (cap < j->total_gpus)
		return 0;
	if (sh_base(s, c))
		return -1;
	if (!place_take(s, s->sh, j, a)) {
		*T = now;
		return 0;
	}
	if (errno != ENOSPC)
		return -1;
	while (i < n_ends) {
		const bf_end_t *last = NULL;

		for (;;) {
			const bf_end_t *e;
			int r;

			/* to the next end with a usable node: a block of
			 * BF_EBLK at a time, then 4 at a time */
			for (;;) {
				if (!(i % BF_EBLK) && i + BF_EBLK <= nf &&
				    !block_usable(s, i / BF_EBLK)) {
					i += BF_EBLK;
					continue;
				}
				if (i + 4 <= nf &&
				    !((av[ew[i]] & eb[i]) |
				      (av[ew[i + 1]] & eb[i + 1]) |
				      (av[ew[i + 2]] & eb[i + 2]) |
				      (av[ew[i + 3]] & eb[i + 3]))) {
					i += 4;
					continue;
				}
				while (i < nf && !(av[ew[i]] & eb[i]))
					i++;
				break;
			}
			if (i >= nf)
				break;
			e = &s->ends[i];
			r = give_usable(s, e);
			if (r < 0)
				return -1;
			if (!r) {
				i++;
				continue; /* no usable node: skipped */
			}
			sh_mark(s, e);
			if (!bar)
				bar = e->end + BF_WILL_RUN_WINDOW -
				      e->end % BF_WILL_RUN_WINDOW;
			last = e;
			i++;
			if (i >= n_ends || s->ends[i].end > bar + tw)
				break;
		}
		if (!last)
			break;
		while (i < n_ends && s->ends[i].end != INT64_MAX &&
		       s->ends[i].end > bar + tw)
			tw *= 2;
		if (!place_take(s, s->sh, j, a)) {
			*T = last->end <= now ? now + 1 : last->end;
			return 0;
		}
		if (errno != ENOSPC)
			return -1;
		if (i >= n_ends || s->ends[i].end == INT64_MAX)
			break;
	}
	return 0;
}

static bf_memo_t *memo_find(pol_bf_t *s, const pol_job_t *j, bool *hit)
{
	uint64_t h = (uint64_t) j->total_gpus * 0x9e3779b97f4a7c15ULL ^
		     (uint64_t) j->nodes * 0xc2b2ae3d27d4eb4fULL ^
		     (uint64_t) j->gpus_per_node * 0x165667b19e3779f9ULL ^
		     (uint64_t) j->pool;
	bf_memo_t *m;
	uint64_t *ma;
	int k;

	for (k = 0; k < s->nw; k++)
		h = (h ^ s->avail[k]) * 0xff51afd7ed558ccdULL;
	h ^= h >> 29;
	m = &s->memo[h % BF_MEMO];
	ma = s->memo_avail + (size_t) (h % BF_MEMO) * (size_t) s->nw;
	*hit = m->gen == s->gen && m->total_gpus == j->total_gpus &&
	       m->nodes == j->nodes && m->gpn == j->gpus_per_node &&
	       m->pool == j->pool &&
	       !memcmp(ma, s->avail, (size_t) s->nw * sizeof(*ma));
	if (!*hit) {
		memcpy(ma, s->avail, (size_t) s->nw * sizeof(*ma));
		pol_alloc_free(&m->a);
		m->gen = 0;
		m->total_gpus = j->total_gpus;
		m->nodes = j->nodes;
		m->gpn = j->gpus_per_node;
		m->pool = j->pool;
	}
	return m;
}

/* bf_will_run() through the memo: the result depends only on the job's
 * shape, the usable nodes, the free map and the running jobs, and the
 * last two change only when a job starts (s->gen).  *a points to the
 * memo's alloc (valid until the next call; empty when *T is INT64_MAX). */
static int bf_will_run_memo(pol_bf_t *s, int n_ends, const pol_job_t *j,
			    int64_t now, int64_t *T, const pol_alloc_t **a)
{
	bool hit;
	bf_memo_t *m = memo_find(s, j, &hit);

	*a = &m->a;
	if (hit) {
		*T = m->T;
		return 0;
	}
	if (bf_will_run(s, n_ends, j, now, T, &m->a)) {
		s->sh_gen = 0;
		pol_alloc_free(&m->a);
		return -1;
	}
	if (*T == INT64_MAX)
		pol_alloc_free(&m->a);
	m->T = *T;
	m->gen = s->gen;
	return 0;
}

/* Pack the nodes of the n ends into s->ew, s->eb and count s->n_fin. */
static int ends_index(pol_bf_t *s, int n)
{
	size_t need;
	int i;

	if (n > s->e_cap) {
		int cap = n * 2 + 16;
		int *nw = realloc(s->ew, (size_t) cap * sizeof(*nw));
		uint64_t *nb = nw ? realloc(s->eb, (size_t) cap * sizeof(*nb))
				  : NULL;

		if (nw)
			s->ew = nw;
		if (!nw || !nb) {
			errno = ENOMEM;
			return -1;
		}
		s->eb = nb;
		s->e_cap = cap;
	}
	need = (size_t) (s->e_cap / BF_EBLK + 1) * (size_t) (s->nw + 1);
	if (need > s->ebo_cap) {
		uint64_t *no = realloc(s->ebo, need * sizeof(*no));

		if (!no) {
			errno = ENOMEM;
			return -1;
		}
		s->ebo = no;
		s->ebo_cap = need;
	}
	s->n_fin = 0;
	for (i = 0; i < n; i++) {
		const bf_end_t *e = &s->ends[i];
		uint64_t *o = s->ebo +
			      (size_t) (i / BF_EBLK) * (size_t) (s->nw + 1);

		if (!(i % BF_EBLK))
			memset(o, 0, (size_t) (s->nw + 1) * sizeof(*o));
		s->ew[i] = e->w >= 0 ? e->w : s->nw;
		s->eb[i] = e->w >= 0 ? e->bits : ~(uint64_t) 0;
		o[s->ew[i]] |= s->eb[i];
		if (e->end != INT64_MAX)
			s->n_fin = i + 1;
	}
	return 0;
}

/* Keep s->ends sorted after a backfilled start (alloc owned by s). */
static int ends_insert(pol_bf_t *s, int *n, int64_t end, int64_t id,
		       const pol_alloc_t *a)
{
	bf_end_t e;
	int k;

	if (*n + 1 > s->ends_cap) {
		int cap = *n * 2 + 16;
		bf_end_t *ne = realloc(s->ends, (size_t) cap * sizeof(*ne));

		if (!ne) {
			errno = ENOMEM;
			return -1;
		}
		s->ends = ne;
		s->ends_cap = cap;
	}
	e = (bf_end_t){ end, id, a, -1, -1, 0 };
	bf_end_nodes(&e);
	for (k = *n; k > 0 && cmp_end(&s->ends[k - 1], &e) > 0; k--)
		s->ends[k] = s->ends[k - 1];
	s->ends[k] = e;
	(*n)++;
	return ends_index(s, *n);
}

/* Test one pending job j (Slurm's loop body): 0, 1 when the slot table
 * is full (the pass ends), -1 on error. */
static int bf_slurm_job(pol_bf_t *s, const pol_job_t *j, int64_t now,
			int *n_ends, pol_actions_t *out)
{
	int64_t limit = j->time_limit > 0 ? j->time_limit : INT64_MAX / 4;
	int64_t start_res = now, later, T, rs, re;
	int guard;

	bf_scan_t sc;

	scan_reset(s, &sc);
	for (guard = 0; guard < 2 * s->n_slots + 8; guard++) {
		const pol_alloc_t *ma;
		int64_t end = (start_res > now ? start_res : now) + limit;

		slots_avail(s, start_res, end, &later, &sc);
		if (bf_will_run_memo(s, *n_ends, j, now, &T, &ma))
			return -1;
		if (T == INT64_MAX) {
			if (!later)
				return 0; /* never fits on these nodes */
			start_res = later;
			continue;
		}
		if (T < start_res)
			T = start_res;
		if (T <= now) {
			pol_alloc_t a = { NULL, 0 }, *kept;

			if (pol_alloc_copy(&a, ma) ||
			    pol_freemap_take(s->w.fm, &a) ||
			    pol_actions_add(out, POL_ACT_START, j->id, &a, 0,
					    "backfill")) {
				pol_alloc_free(&a);
				return -1;
			}
			kept = pol_bf_started_push(s, &a);
			if (!++s->gen)
				s->gen = 1;
			return ends_insert(s, n_ends,
					   j->time_limit > 0 ? now + limit
							     : INT64_MAX,
					   j->id, kept);
		}
		if (later && T > later) {
			start_res = later;
			continue;
		}
		if (T > now + s->window)
			return 0;
		rs = rdown(T, s->res);
		re = rdown(T > INT64_MAX / 2 - limit ? INT64_MAX / 2
						     : T + limit,
			   s->res);
		nodes_of(s, ma);
		if (slots_overlap(s, rs, re)) {
			start_res = T;
			sc.i0 = -1;
			continue;
		}
		if (s->space && s->recs >= s->space)
			return 1; /* "table size limit reached": pass ends */
		if (slots_add(s, rs, re))
			return -1;
		return pol_actions_add(out, POL_ACT_HOLD, j->id, NULL,
				       (double) T, "Resources");
	}
	return 0;
}

/* Slurm's backfill pass from the head (index i in the order) on. */
int pol_bf_slurm(pol_bf_t *s, const pol_snapshot_t *snap, int64_t now,
		 pol_actions_t *out, int first_start, int i)
{
	int n_ends, tested = 0, rest = snap->n_pending - i;

	/* room for the main scheduler's starts and every backfilled job */
	rest += out->n - first_start;
	if (rest > s->started_cap) {
		pol_alloc_t *ns = realloc(s->started,
					  (size_t) rest * sizeof(*ns));

		if (!ns) {
			errno = ENOMEM;
			return -1;
		}
		s->started = ns;
		s->started_cap = rest;
	}
	n_ends = pol_bf_collect_ends(s, snap, now, out, first_start, true);
	if (n_ends < 0 || slots_init(s, snap->cluster, now) ||
	    ends_index(s, n_ends))
		return -1;
	for (; i < snap->n_pending; i++) {
		if (s->max_job_test && tested >= s->max_job_test)
			break;
		tested++;
		int r = bf_slurm_job(s, &snap->pending[s->w.idx[i]], now,
				     &n_ends, out);

		if (r < 0)
			return -1;
		if (r > 0)
			break;
	}
	return 0;
}
