/*
 * pol_backfill_plan.c - "backfill" with easy=0: Slurm 22.05's plan (the
 * top of pol_backfill.c describes it), after the main scheduler of
 * pol_backfill.c: the will-run test on the usable nodes (memoised per
 * pass) and the pass over the pending jobs from the head on, on the slot
 * map of whole-node reservations (pol_backfill_slots.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pol_backfill_int.h"

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

	pol_bf_scan_reset(s, &sc);
	for (guard = 0; guard < 2 * s->n_slots + 8; guard++) {
		const pol_alloc_t *ma;
		int64_t end = (start_res > now ? start_res : now) + limit;

		pol_bf_slots_avail(s, start_res, end, &later, &sc);
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
		if (pol_bf_slots_overlap(s, rs, re)) {
			start_res = T;
			sc.i0 = -1;
			continue;
		}
		if (s->space && s->recs >= s->space)
			return 1; /* "table size limit reached": pass ends */
		if (pol_bf_slots_add(s, rs, re))
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
	if (n_ends < 0 || pol_bf_slots_init(s, snap->cluster, now) ||
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
