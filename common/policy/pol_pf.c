/*
 * pol_pf.c - the proportional-fair allocation and the partial-allocation
 * auction over it (pol_themis.h, doc/fairness.md).
 *
 * The proportional-fair (PF) allocation is a multiple-choice knapsack:
 * every bidder picks one option (or nothing), the weights are GPU counts,
 * the values log(1/rho) and the capacity the offered GPUs.  Three solvers:
 *
 *  - EXACT: dynamic programme over the GPU count, best[m] = the highest
 *    sum of values of the bidders so far using at most m GPUs.
 *    O(n * capacity * options) time, n * (capacity + 1) choices of
 *    memory.  Optimal for any rho table (no concavity needed), so the
 *    truthfulness argument of PA holds exactly.
 *  - GREEDY: start with nothing for everyone and repeatedly apply the
 *    single option change that fits and has the highest gain in
 *    log(1/rho) per extra GPU (a change that gains with no extra GPUs
 *    first).  This is the classic greedy for the multiple-choice knapsack
 *    (Sinha & Zoltners 1979): on the convex hull of each bidder's table it
 *    follows the LP relaxation and ends within one option of its optimum.
 *    It is for auctions too large for the DP budget (thousands of offered
 *    GPUs times hundreds of bidders); there x*_{-i} is also approximate
 *    and c_i is clamped to 1.  The step is found with a heap of every
 *    bidder's best change (lazy: a key computed when more GPUs were left
 *    is an upper bound, since the capacity left only shrinks, so the top
 *    is recomputed and taken only if it did not fall; a change that frees
 *    GPUs rebuilds the heap): O(steps * options * log n) per solve instead
 *    of the O(steps * n * options) scan (GREEDY_SCAN, kept for the tests:
 *    both make the same choices, ties included).
 *  - BRUTE: enumerate every combination; the reference for the tests.
 *
 * Every option's value is computed once per auction (the n + 1 solves of
 * pol_auction_run() share it), not once per look.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pol_themis.h"

/* Bids -------------------------------------------------------------------- */

static int cmp_opt(const void *a, const void *b)
{
	const pol_bid_opt_t *x = a, *y = b;

	if (x->gpus != y->gpus)
		return x->gpus < y->gpus ? -1 : 1;
	if (x->rho != y->rho)
		return x->rho < y->rho ? -1 : 1;
	return (x->tag > y->tag) - (x->tag < y->tag);
}

int pol_bid_best(pol_bid_opt_t *opts, int n)
{
	int i, m = 0;

	if (!opts || n <= 0)
		return 0;
	for (i = 0; i < n; i++)
		if (opts[i].gpus > 0 && opts[i].rho > 0 &&
		    isfinite(opts[i].rho))
			opts[m++] = opts[i];
	qsort(opts, m, sizeof(*opts), cmp_opt);
	n = m;
	m = 0;
	for (i = 0; i < n; i++)
		if (m == 0 || opts[m - 1].gpus != opts[i].gpus)
			opts[m++] = opts[i];
	return m;
}

static bool bids_ok(const pol_bid_t *bids, int n)
{
	int i, k;

	if (n < 0 || (n > 0 && !bids))
		return false;
	for (i = 0; i < n; i++) {
		if (!(bids[i].rho0 > 0) || !isfinite(bids[i].rho0) ||
		    bids[i].n_opts < 0 || bids[i].n_opts > 32767 ||
		    (bids[i].n_opts > 0 && !bids[i].opts))
			return false;
		for (k = 0; k < bids[i].n_opts; k++)
			if (bids[i].opts[k].gpus <= 0 ||
			    !(bids[i].opts[k].rho > 0) ||
			    !isfinite(bids[i].opts[k].rho))
				return false;
	}
	return true;
}

/* The values log(1/rho) of every bidder's options, computed once. */
typedef struct pf_vals {
	const pol_bid_t *bids;
	int n;
	double *v; /* bidder i's choice k (-1 = nothing): v[off[i] + k + 1] */
	int *off;
} pf_vals_t;

static void vals_free(pf_vals_t *pv)
{
	free(pv->v);
	free(pv->off);
}

static int vals_make(pf_vals_t *pv, const pol_bid_t *bids, int n)
{
	size_t tot = 0;
	int i, k;

	pv->bids = bids;
	pv->n = n;
	for (i = 0; i < n; i++)
		tot += (size_t) bids[i].n_opts + 1;
	pv->v = malloc((tot ? tot : 1) * sizeof(*pv->v));
	pv->off = malloc((size_t) (n > 0 ? n : 1) * sizeof(*pv->off));
	if (!pv->v || !pv->off) {
		vals_free(pv);
		return -1;
	}
	tot = 0;
	for (i = 0; i < n; i++) {
		pv->off[i] = (int) tot;
		pv->v[tot++] = -log(bids[i].rho0);
		for (k = 0; k < bids[i].n_opts; k++)
			pv->v[tot++] = -log(bids[i].opts[k].rho);
	}
	return 0;
}

/* Value log(1/rho) of bidder i's choice k (-1 = nothing). */
static double val(const pf_vals_t *pv, int i, int k)
{
	return pv->v[pv->off[i] + k + 1];
}

static int gpus_of(const pol_bid_t *b, int k)
{
	return k < 0 ? 0 : b->opts[k].gpus;
}

/* PF solvers ------------------------------------------------------------ */

static int solve_exact(const pf_vals_t *pv, int cap, int exclude, int *choice)
{
	const pol_bid_t *bids = pv->bids;
	double *best = NULL, *next = NULL;
	int16_t *ch = NULL;
	size_t w = (size_t) cap + 1;
	int n = pv->n, i, m, k, rc = -1;

	best = calloc(w, sizeof(*best));
	next = malloc(w * sizeof(*next));
	ch = malloc((n ? (size_t) n : 1) * w * sizeof(*ch));
	if (!best || !next || !ch)
		goto out;
	for (i = 0; i < n; i++) {
		const pol_bid_t *b = &bids[i];
		int16_t *row = &ch[(size_t) i * w];
		double *t;

		if (i == exclude)
			continue;
		for (m = 0; m <= cap; m++) {
			next[m] = best[m] + val(pv, i, -1);
			row[m] = -1;
			for (k = 0; k < b->n_opts; k++) {
				int g = b->opts[k].gpus;
				double v;

				if (g > m)
					continue;
				v = best[m - g] + val(pv, i, k);
				if (v > next[m]) {
					next[m] = v;
					row[m] = (int16_t) k;
				}
			}
		}
		t = best;
		best = next;
		next = t;
	}
	m = cap;
	for (i = n - 1; i >= 0; i--) {
		if (i == exclude) {
			choice[i] = -1;
			continue;
		}
		k = ch[(size_t) i * w + m];
		choice[i] = k;
		m -= gpus_of(&bids[i], k);
	}
	rc = 0;
out:
	free(best);
	free(next);
	free(ch);
	return rc;
}

/* One bidder's change of option: to k, dg more GPUs, dv more value. */
typedef struct pf_move {
	double ratio, dv;
	int k, dg;
} pf_move_t;

/*
 * Bidder i's best change from its choice c that needs at most left more
 * GPUs: the highest gain per GPU (a gain with no extra GPUs first), then
 * the highest gain, then the lowest k.  false: none gains.
 */
static bool best_move(const pf_vals_t *pv, int i, int c, int left, pf_move_t *m)
{
	const pol_bid_t *b = &pv->bids[i];
	int g0 = gpus_of(b, c), k;
	double v0 = val(pv, i, c);
	bool any = false;

	for (k = -1; k < b->n_opts; k++) {
		int dg = gpus_of(b, k) - g0;
		double dv = val(pv, i, k) - v0, ratio;

		if (k == c || dv <= 0 || dg > left)
			continue;
		ratio = dg > 0 ? dv / dg : INFINITY;
		if (!any || ratio > m->ratio ||
		    (ratio == m->ratio && dv > m->dv)) {
			any = true;
			m->ratio = ratio;
			m->dv = dv;
			m->k = k;
			m->dg = dg;
		}
	}
	return any;
}

/* The reference GREEDY: every step scans every bidder's every option. */
static void solve_greedy_scan(const pf_vals_t *pv, int cap, int exclude,
			      int *choice)
{
	int i, left = cap;

	for (i = 0; i < pv->n; i++)
		choice[i] = -1;
	for (;;) {
		pf_move_t m, bm = { 0 };
		int bi = -1;

		for (i = 0; i < pv->n; i++) {
			if (i == exclude ||
			    !best_move(pv, i, choice[i], left, &m))
				continue;
			if (bi < 0 || m.ratio > bm.ratio ||
			    (m.ratio == bm.ratio && m.dv > bm.dv)) {
				bi = i;
				bm = m;
			}
		}
		if (bi < 0)
			break;
		choice[bi] = bm.k;
		left -= bm.dg;
	}
}

/* Heap of bidders by their move: higher ratio, then dv, then lower id. */
typedef struct pf_heap {
	int *h, n;
	pf_move_t *mv; /* per bidder */
} pf_heap_t;

static bool heap_before(const pf_heap_t *hp, int a, int b)
{
	const pf_move_t *x = &hp->mv[a], *y = &hp->mv[b];

	if (x->ratio != y->ratio)
		return x->ratio > y->ratio;
	if (x->dv != y->dv)
		return x->dv > y->dv;
	return a < b;
}

static void heap_down(pf_heap_t *hp, int at)
{
	for (;;) {
		int l = 2 * at + 1, r = l + 1, top = at, t;

		if (l < hp->n && heap_before(hp, hp->h[l], hp->h[top]))
			top = l;
		if (r < hp->n && heap_before(hp, hp->h[r], hp->h[top]))
			top = r;
		if (top == at)
			return;
		t = hp->h[at];
		hp->h[at] = hp->h[top];
		hp->h[top] = t;
		at = top;
	}
}

/* Every bidder with a move at left GPUs, as a heap. */
static void heap_fill(pf_heap_t *hp, const pf_vals_t *pv, const int *choice,
		      int exclude, int left)
{
	int i;

	hp->n = 0;
	for (i = 0; i < pv->n; i++)
		if (i != exclude &&
		    best_move(pv, i, choice[i], left, &hp->mv[i]))
			hp->h[hp->n++] = i;
	for (i = hp->n / 2 - 1; i >= 0; i--)
		heap_down(hp, i);
}

static void heap_pop(pf_heap_t *hp)
{
	hp->h[0] = hp->h[--hp->n];
	heap_down(hp, 0);
}

/* The steps of one GREEDY solve: bidder, option, GPUs taken, GPUs left
 * before the step. */
typedef struct pf_trace {
	int *who, *k, *dg, *left;
	int n, cap;
} pf_trace_t;

static void trace_free(pf_trace_t *tr)
{
	free(tr->who);
	free(tr->k);
	free(tr->dg);
	free(tr->left);
	memset(tr, 0, sizeof(*tr));
}

static int trace_add(pf_trace_t *tr, int who, const pf_move_t *m, int left)
{
	if (tr->n == tr->cap) {
		int cap = tr->cap ? 2 * tr->cap : 256, *v[4], f;
		int **a[4] = { &tr->who, &tr->k, &tr->dg, &tr->left };

		for (f = 0; f < 4; f++) {
			v[f] = realloc(*a[f], (size_t) cap * sizeof(int));
			if (!v[f])
				return -1;
			*a[f] = v[f];
		}
		tr->cap = cap;
	}
	tr->who[tr->n] = who;
	tr->k[tr->n] = m->k;
	tr->dg[tr->n] = m->dg;
	tr->left[tr->n++] = left;
	return 0;
}

/*
 * GREEDY from the state choice[] with left GPUs free; rec (may be NULL)
 * gets the steps.
 */
static int greedy_run(const pf_vals_t *pv, pf_heap_t *hp, int exclude,
		      int *choice, int left, pf_trace_t *rec)
{
	heap_fill(hp, pv, choice, exclude, left);
	while (hp->n > 0) {
		pf_move_t m;
		int i = hp->h[0];

		if (!best_move(pv, i, choice[i], left, &m)) {
			heap_pop(hp);
			continue;
		}
		if (m.ratio != hp->mv[i].ratio || m.dv != hp->mv[i].dv) {
			/* it fell since its key was computed: try again */
			hp->mv[i] = m;
			heap_down(hp, 0);
			continue;
		}
		if (rec && trace_add(rec, i, &m, left) < 0)
			return -1;
		choice[i] = m.k;
		left -= m.dg;
		if (m.dg < 0) {
			/* GPUs came back: the others' keys may have risen */
			heap_fill(hp, pv, choice, exclude, left);
			continue;
		}
		if (best_move(pv, i, choice[i], left, &hp->mv[i]))
			heap_down(hp, 0);
		else
			heap_pop(hp);
	}
	return 0;
}

/*
 * GREEDY, recording its steps in rec (may be NULL), or, with from (the
 * steps of the solve with every bidder), x*_{-exclude} from them: while
 * at least as many GPUs are left as any option takes, no move is too big
 * and each step is the best change among all bidders, so without the
 * excluded bidder the solve takes the same steps but its own; from the
 * first step where the capacity could bind, it continues on its own.
 */
static int solve_greedy(const pf_vals_t *pv, int cap, int exclude, int *choice,
			const pf_trace_t *from, pf_trace_t *rec)
{
	pf_heap_t hp;
	int i, t, left = cap, most = 0, rc;

	hp.h = malloc((size_t) (pv->n > 0 ? pv->n : 1) * sizeof(*hp.h));
	hp.mv = malloc((size_t) (pv->n > 0 ? pv->n : 1) * sizeof(*hp.mv));
	if (!hp.h || !hp.mv) {
		free(hp.h);
		free(hp.mv);
		return -1;
	}
	for (i = 0; i < pv->n; i++) {
		const pol_bid_t *b = &pv->bids[i];

		choice[i] = -1;
		for (t = 0; t < b->n_opts; t++)
			if (b->opts[t].gpus > most)
				most = b->opts[t].gpus;
	}
	for (t = 0; from && t < from->n && from->left[t] >= most; t++) {
		if (from->who[t] == exclude)
			continue;
		choice[from->who[t]] = from->k[t];
		left -= from->dg[t];
	}
	rc = greedy_run(pv, &hp, exclude, choice, left, rec);
	free(hp.h);
	free(hp.mv);
	return rc;
}

static int solve_brute(const pf_vals_t *pv, int cap, int exclude, int *choice)
{
	const pol_bid_t *bids = pv->bids;
	int *cur, n = pv->n, i;
	double combos = 1, bestv = -INFINITY;

	for (i = 0; i < n; i++)
		if (i != exclude)
			combos *= bids[i].n_opts + 1;
	if (combos > 1e7) {
		errno = E2BIG;
		return -1;
	}
	if (!(cur = malloc((size_t) (n > 0 ? n : 1) * sizeof(*cur))))
		return -1;
	for (i = 0; i < n; i++)
		cur[i] = choice[i] = -1;
	for (;;) {
		int g = 0;
		double v = 0;

		for (i = 0; i < n; i++) {
			if (i == exclude)
				continue;
			g += gpus_of(&bids[i], cur[i]);
			v += val(pv, i, cur[i]);
		}
		if (g <= cap && v > bestv) {
			bestv = v;
			memcpy(choice, cur, n * sizeof(*cur));
		}
		/* next combination: last bidder varies fastest */
		for (i = n - 1; i >= 0; i--) {
			if (i == exclude)
				continue;
			if (++cur[i] < bids[i].n_opts)
				break;
			cur[i] = -1;
		}
		if (i < 0)
			break;
	}
	free(cur);
	return 0;
}

static int max_opts(const pol_bid_t *bids, int n)
{
	int i, m = 0;

	for (i = 0; i < n; i++)
		if (bids[i].n_opts > m)
			m = bids[i].n_opts;
	return m;
}

/* No allocation uses more than every bidder's largest option together:
 * the DP need not look past that (a big offer to small bidders). */
static int useful_cap(const pol_bid_t *bids, int n, int cap)
{
	double sum = 0;
	int i, k;

	for (i = 0; i < n; i++) {
		int m = 0;

		for (k = 0; k < bids[i].n_opts; k++)
			if (bids[i].opts[k].gpus > m)
				m = bids[i].opts[k].gpus;
		sum += m;
	}
	return sum < cap ? (int) sum : cap;
}

static bool exact_cheap(const pol_bid_t *bids, int n, int cap)
{
	cap = useful_cap(bids, n, cap);
	return (double) (n + 1) * n * ((double) cap + 1) *
		       (max_opts(bids, n) + 1) <=
	       POL_PF_EXACT_BUDGET;
}

/* pol_pf_solve() on values already computed (solver not AUTO). */
static int pf_solve(const pf_vals_t *pv, int capacity, int exclude,
		    pol_pf_solver_t solver, const pf_trace_t *from,
		    pf_trace_t *rec, int *choice, double *objective)
{
	int *tmp, n = pv->n, i, rc = 0;

	/* solve into a scratch array: no side effect on failure */
	if (!(tmp = malloc((size_t) (n > 0 ? n : 1) * sizeof(*tmp))))
		return -1;
	switch (solver) {
	case POL_PF_EXACT:
		rc = solve_exact(pv, useful_cap(pv->bids, n, capacity), exclude,
				 tmp);
		break;
	case POL_PF_GREEDY:
		rc = solve_greedy(pv, capacity, exclude, tmp, from, rec);
		break;
	case POL_PF_GREEDY_SCAN:
		solve_greedy_scan(pv, capacity, exclude, tmp);
		break;
	case POL_PF_BRUTE:
		rc = solve_brute(pv, capacity, exclude, tmp);
		break;
	default:
		errno = EINVAL;
		rc = -1;
	}
	if (rc == 0) {
		double obj = 0;

		for (i = 0; i < n; i++)
			if (i != exclude)
				obj += val(pv, i, tmp[i]);
		memcpy(choice, tmp, n * sizeof(*tmp));
		if (objective)
			*objective = obj;
	}
	free(tmp);
	return rc;
}

int pol_pf_solve(const pol_bid_t *bids, int n, int capacity, int exclude,
		 pol_pf_solver_t solver, int *choice, double *objective)
{
	pf_vals_t pv;
	int rc, e;

	if (!bids_ok(bids, n) || capacity < 0 || (n > 0 && !choice) ||
	    exclude < -1 || exclude >= (n > 0 ? n : 1)) {
		errno = EINVAL;
		return -1;
	}
	if (solver == POL_PF_AUTO)
		solver = exact_cheap(bids, n, capacity) ? POL_PF_EXACT
							: POL_PF_GREEDY;
	if (vals_make(&pv, bids, n) < 0)
		return -1;
	rc = pf_solve(&pv, capacity, exclude, solver, NULL, NULL, choice,
		      objective);
	e = errno;
	vals_free(&pv);
	errno = e;
	return rc;
}

void pol_auction_free(pol_auction_t *a)
{
	if (!a)
		return;
	free(a->choice);
	free(a->keep);
	memset(a, 0, sizeof(*a));
}

int pol_auction_run(const pol_bid_t *bids, int n, int capacity,
		    pol_pf_solver_t solver, pol_auction_t *out)
{
	pol_auction_t r = { .n = n };
	pf_vals_t pv = { NULL };
	pf_trace_t tr = { NULL };
	int *other = NULL, i, e;

	if (!out || !bids_ok(bids, n) || capacity < 0) {
		errno = EINVAL;
		return -1;
	}
	if (solver == POL_PF_AUTO)
		solver = exact_cheap(bids, n, capacity) ? POL_PF_EXACT
							: POL_PF_GREEDY;
	r.exact = solver != POL_PF_GREEDY && solver != POL_PF_GREEDY_SCAN;
	r.choice = malloc((size_t) (n > 0 ? n : 1) * sizeof(*r.choice));
	r.keep = malloc((size_t) (n > 0 ? n : 1) * sizeof(*r.keep));
	other = malloc((size_t) (n > 0 ? n : 1) * sizeof(*other));
	if (!r.choice || !r.keep || !other || vals_make(&pv, bids, n) < 0)
		goto fail;
	if (pf_solve(&pv, capacity, -1, solver, NULL, &tr, r.choice,
		     &r.objective) < 0)
		goto fail;
	for (i = 0; i < n; i++)
		r.used += gpus_of(&bids[i], r.choice[i]);
	r.leftover = capacity - r.used;
	for (i = 0; i < n; i++) {
		double without, others, logc;

		r.keep[i] = 1;
		/* x* minus i is feasible for the others; if i won nothing
		 * it is also their optimum, so c_i = 1 with no solve. */
		if (r.choice[i] < 0)
			continue;
		if (pf_solve(&pv, capacity, i, solver, &tr, NULL, other,
			     &without) < 0)
			goto fail;
		others = r.objective - val(&pv, i, r.choice[i]);
		logc = others - without;
		if (logc > 0)
			logc = 0; /* approximate x*_{-i}: no bonus */
		r.keep[i] = exp(logc);
		if (r.keep[i] <= 0)
			r.keep[i] = 1e-300;
	}
	free(other);
	vals_free(&pv);
	trace_free(&tr);
	*out = r;
	return 0;
fail:
	e = errno;
	free(other);
	vals_free(&pv);
	trace_free(&tr);
	pol_auction_free(&r);
	errno = e;
	return -1;
}
