/*
 * pol_themis.c - finish-time fairness estimates, the partial-allocation
 * auction and leases (see pol_themis.h, doc/fairness.md).
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
 *    follows the LP relaxation and ends within one option of its optimum;
 *    it costs O(steps * n * options) and no memory per GPU.  It is for
 *    auctions too large for the DP budget (thousands of offered GPUs times
 *    hundreds of bidders); there x*_{-i} is also approximate and c_i is
 *    clamped to 1.
 *  - BRUTE: enumerate every combination; the reference for the tests.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agora_mem.h"
#include "pol_themis.h"

/* Finish-time fairness ------------------------------------------------- */

static bool app_ok(const pol_ftf_app_t *a, int cluster_gpus)
{
	return a && cluster_gpus > 0 && a->demand > 0 && a->work > 0 &&
	       isfinite(a->work) && a->done >= 0 && isfinite(a->done) &&
	       a->n_avg >= 1 && isfinite(a->n_avg);
}

int pol_ftf_ideal(const pol_ftf_app_t *a, int cluster_gpus, double *t_id)
{
	double t_alone, share;

	if (!app_ok(a, cluster_gpus) || !t_id) {
		errno = EINVAL;
		return -1;
	}
	t_alone = a->work / a->demand;
	share = (double) a->demand * a->n_avg / cluster_gpus;
	*t_id = t_alone * (share > 1 ? share : 1);
	return 0;
}

int pol_ftf_rho(const pol_ftf_app_t *a, int cluster_gpus, int64_t now, int gpus,
		double slowdown, int64_t horizon_s, double *rho)
{
	double t_id, rem, rate, t_rem, h = (double) horizon_s;
	int g;

	if (!rho || gpus < 0 || !(slowdown >= 1) || !isfinite(slowdown) ||
	    horizon_s <= 0 || pol_ftf_ideal(a, cluster_gpus, &t_id) < 0) {
		errno = EINVAL;
		return -1;
	}
	rem = a->work - a->done;
	if (rem < 0)
		rem = 0;
	g = gpus < a->demand ? gpus : a->demand;
	rate = g / slowdown;
	if (rate > 0 && rate * h >= rem)
		t_rem = rem / rate;
	else
		t_rem = h + (rem - rate * h) / a->demand;
	*rho = ((double) now - (double) a->arrival + t_rem) / t_id;
	if (*rho <= 0)
		*rho = 1e-9; /* arrival in the future: clamp, keep rho > 0 */
	return 0;
}

void pol_ftf_contention_update(pol_ftf_contention_t *c, int64_t now,
			       int n_active)
{
	if (!c)
		return;
	if (c->started && now > c->last)
		c->area += (double) c->n * ((double) now - (double) c->last);
	if (!c->started || now > c->last)
		c->last = now;
	c->started = true;
	c->n = n_active;
}

double pol_ftf_contention_area(const pol_ftf_contention_t *c, int64_t now)
{
	if (!c || !c->started)
		return 0;
	if (now <= c->last)
		return c->area;
	return c->area + (double) c->n * ((double) now - (double) c->last);
}

double pol_ftf_contention_avg(const pol_ftf_contention_t *c, int64_t now,
			      int64_t arrival, double area_at_arrival)
{
	double n;

	if (!c)
		return 1;
	if (now > arrival)
		n = (pol_ftf_contention_area(c, now) - area_at_arrival) /
		    ((double) now - (double) arrival);
	else
		n = c->n;
	return n >= 1 ? n : 1;
}

typedef struct rho_idx {
	double rho;
	int i;
} rho_idx_t;

static int cmp_worst(const void *a, const void *b)
{
	const rho_idx_t *x = a, *y = b;

	if (x->rho != y->rho)
		return x->rho > y->rho ? -1 : 1;
	return x->i - y->i;
}

int pol_ftf_worst(const double *rho, int n, double f, int *idx)
{
	rho_idx_t *v;
	int i, k;

	if (n < 0 || !(f >= 0 && f < 1) || (n > 0 && (!rho || !idx))) {
		errno = EINVAL;
		return -1;
	}
	if (n == 0)
		return 0;
	k = (int) ceil((1 - f) * n - 1e-9);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	if (!(v = malloc((size_t) n * sizeof(*v))))
		return -1;
	for (i = 0; i < n; i++) {
		v[i].rho = isnan(rho[i]) ? INFINITY : rho[i];
		v[i].i = i;
	}
	qsort(v, n, sizeof(*v), cmp_worst);
	for (i = 0; i < k; i++)
		idx[i] = v[i].i;
	free(v);
	return k;
}

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

/* Value log(1/rho) of bidder b's choice k (-1 = nothing). */
static double value(const pol_bid_t *b, int k)
{
	return -log(k < 0 ? b->rho0 : b->opts[k].rho);
}

static int gpus_of(const pol_bid_t *b, int k)
{
	return k < 0 ? 0 : b->opts[k].gpus;
}

/* PF solvers ------------------------------------------------------------ */

static int solve_exact(const pol_bid_t *bids, int n, int cap, int exclude,
		       int *choice)
{
	double *best = NULL, *next = NULL;
	int16_t *ch = NULL;
	size_t w = (size_t) cap + 1;
	int i, m, k, rc = -1;

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
			next[m] = best[m] + value(b, -1);
			row[m] = -1;
			for (k = 0; k < b->n_opts; k++) {
				int g = b->opts[k].gpus;
				double v;

				if (g > m)
					continue;
				v = best[m - g] + value(b, k);
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

static void solve_greedy(const pol_bid_t *bids, int n, int cap, int exclude,
			 int *choice)
{
	int i, k, left = cap;

	for (i = 0; i < n; i++)
		choice[i] = -1;
	for (;;) {
		int bi = -1, bk = -1, bdg = 0;
		double bratio = 0, bdv = 0;

		for (i = 0; i < n; i++) {
			const pol_bid_t *b = &bids[i];
			int g0 = gpus_of(b, choice[i]);
			double v0 = value(b, choice[i]);

			if (i == exclude)
				continue;
			for (k = -1; k < b->n_opts; k++) {
				int dg = gpus_of(b, k) - g0;
				double dv = value(b, k) - v0, ratio;

				if (k == choice[i] || dv <= 0 || dg > left)
					continue;
				ratio = dg > 0 ? dv / dg : INFINITY;
				if (bi < 0 || ratio > bratio ||
				    (ratio == bratio && dv > bdv)) {
					bi = i;
					bk = k;
					bdg = dg;
					bratio = ratio;
					bdv = dv;
				}
			}
		}
		if (bi < 0)
			break;
		choice[bi] = bk;
		left -= bdg;
	}
}

static int solve_brute(const pol_bid_t *bids, int n, int cap, int exclude,
		       int *choice)
{
	int *cur, i;
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
			v += value(&bids[i], cur[i]);
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

int pol_pf_solve(const pol_bid_t *bids, int n, int capacity, int exclude,
		 pol_pf_solver_t solver, int *choice, double *objective)
{
	int *tmp, i, rc = 0;

	if (!bids_ok(bids, n) || capacity < 0 || (n > 0 && !choice) ||
	    exclude < -1 || exclude >= (n > 0 ? n : 1)) {
		errno = EINVAL;
		return -1;
	}
	if (solver == POL_PF_AUTO)
		solver = exact_cheap(bids, n, capacity) ? POL_PF_EXACT
							: POL_PF_GREEDY;
	/* solve into a scratch array: no side effect on failure */
	if (!(tmp = malloc((size_t) (n > 0 ? n : 1) * sizeof(*tmp))))
		return -1;
	switch (solver) {
	case POL_PF_EXACT:
		rc = solve_exact(bids, n, useful_cap(bids, n, capacity),
				 exclude, tmp);
		break;
	case POL_PF_GREEDY:
		solve_greedy(bids, n, capacity, exclude, tmp);
		break;
	case POL_PF_BRUTE:
		rc = solve_brute(bids, n, capacity, exclude, tmp);
		break;
	default:
		errno = EINVAL;
		rc = -1;
	}
	if (rc == 0) {
		double obj = 0;

		for (i = 0; i < n; i++)
			if (i != exclude)
				obj += value(&bids[i], tmp[i]);
		memcpy(choice, tmp, n * sizeof(*tmp));
		if (objective)
			*objective = obj;
	}
	free(tmp);
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
	int *other = NULL, i, e;

	if (!out || !bids_ok(bids, n) || capacity < 0) {
		errno = EINVAL;
		return -1;
	}
	if (solver == POL_PF_AUTO)
		solver = exact_cheap(bids, n, capacity) ? POL_PF_EXACT
							: POL_PF_GREEDY;
	r.exact = solver != POL_PF_GREEDY;
	r.choice = malloc((size_t) (n > 0 ? n : 1) * sizeof(*r.choice));
	r.keep = malloc((size_t) (n > 0 ? n : 1) * sizeof(*r.keep));
	other = malloc((size_t) (n > 0 ? n : 1) * sizeof(*other));
	if (!r.choice || !r.keep || !other)
		goto fail;
	if (pol_pf_solve(bids, n, capacity, -1, solver, r.choice,
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
		if (pol_pf_solve(bids, n, capacity, i, solver, other,
				 &without) < 0)
			goto fail;
		others = r.objective - value(&bids[i], r.choice[i]);
		logc = others - without;
		if (logc > 0)
			logc = 0; /* approximate x*_{-i}: no bonus */
		r.keep[i] = exp(logc);
		if (r.keep[i] <= 0)
			r.keep[i] = 1e-300;
	}
	free(other);
	*out = r;
	return 0;
fail:
	e = errno;
	free(other);
	pol_auction_free(&r);
	errno = e;
	return -1;
}

/* Leases ------------------------------------------------------------------ */

/*
 * The table is an array whose first n_sorted leases are sorted by job id
 * and whose short tail (new grants) is not: lookups bsearch the prefix and
 * scan the tail; when the tail passes LEASE_TAIL it is sorted and merged
 * into the prefix (O(n) moves), so n grants cost O(n^2 / LEASE_TAIL)
 * element moves at worst instead of O(n^2).
 */
#define LEASE_TAIL 256

struct pol_lease_table {
	pol_lease_t *v;
	int n, n_sorted;
	size_t cap;
	pol_lease_t *tmp; /* LEASE_TAIL + 1 entries, for the merge */
};

pol_lease_table_t *pol_lease_table_create(void)
{
	pol_lease_table_t *t = calloc(1, sizeof(*t));

	if (t && !(t->tmp = malloc((LEASE_TAIL + 1) * sizeof(*t->tmp)))) {
		free(t);
		return NULL;
	}
	return t;
}

void pol_lease_table_destroy(pol_lease_table_t **tp)
{
	if (!tp || !*tp)
		return;
	free((*tp)->v);
	free((*tp)->tmp);
	free(*tp);
	*tp = NULL;
}

static int cmp_lease(const void *a, const void *b)
{
	int64_t x = ((const pol_lease_t *) a)->job_id,
		y = ((const pol_lease_t *) b)->job_id;

	return (x > y) - (x < y);
}

/* Sort the tail and merge it into the prefix, from the back. */
static void lease_merge(pol_lease_table_t *t)
{
	int nt = t->n - t->n_sorted, i, j, k;

	if (nt <= 0)
		return;
	memcpy(t->tmp, &t->v[t->n_sorted], (size_t) nt * sizeof(*t->tmp));
	qsort(t->tmp, (size_t) nt, sizeof(*t->tmp), cmp_lease);
	i = t->n_sorted - 1;
	j = nt - 1;
	k = t->n - 1;
	while (j >= 0) {
		if (i >= 0 && t->v[i].job_id > t->tmp[j].job_id)
			t->v[k--] = t->v[i--];
		else
			t->v[k--] = t->tmp[j--];
	}
	t->n_sorted = t->n;
}

static pol_lease_t *lease_find(const pol_lease_table_t *t, int64_t job_id)
{
	int lo = 0, hi, i;

	if (!t)
		return NULL;
	hi = t->n_sorted;
	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (t->v[mid].job_id == job_id)
			return &t->v[mid];
		if (t->v[mid].job_id < job_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = t->n_sorted; i < t->n; i++)
		if (t->v[i].job_id == job_id)
			return &t->v[i];
	return NULL;
}

int pol_lease_grant(pol_lease_table_t *t, int64_t job_id, int gpus, int64_t now,
		    int64_t duration_s)
{
	pol_lease_t *l;

	if (!t || gpus < 0 || duration_s <= 0) {
		errno = EINVAL;
		return -1;
	}
	if (!(l = lease_find(t, job_id))) {
		if (agora_grow((void **) &t->v, &t->cap, (size_t) t->n + 1,
			       sizeof(*t->v)))
			return -1;
		l = &t->v[t->n++];
		l->job_id = job_id;
		/* in order at the end: still sorted */
		if (t->n_sorted == t->n - 1 &&
		    (t->n_sorted == 0 || t->v[t->n - 2].job_id < job_id))
			t->n_sorted = t->n;
	}
	l->gpus = gpus;
	l->start = now;
	l->end = now + duration_s;
	l->requeue_at = 0;
	l->state = POL_LEASE_ACTIVE;
	if (t->n - t->n_sorted > LEASE_TAIL)
		lease_merge(t);
	return 0;
}

const pol_lease_t *pol_lease_get(const pol_lease_table_t *t, int64_t job_id)
{
	return lease_find(t, job_id);
}

int pol_lease_drop(pol_lease_table_t *t, int64_t job_id)
{
	pol_lease_t *l = lease_find(t, job_id);
	int i;

	if (!l) {
		errno = ENOENT;
		return -1;
	}
	i = (int) (l - t->v);
	memmove(l, l + 1, (size_t) (t->n - i - 1) * sizeof(*l));
	t->n--;
	if (i < t->n_sorted)
		t->n_sorted--;
	return 0;
}

int pol_lease_count(const pol_lease_table_t *t)
{
	return t ? t->n : 0;
}

const pol_lease_t *pol_lease_at(const pol_lease_table_t *t, int i)
{
	return t && i >= 0 && i < t->n ? &t->v[i] : NULL;
}

bool pol_lease_expired(const pol_lease_t *l, int64_t now)
{
	return l && l->state == POL_LEASE_ACTIVE && l->end <= now;
}

bool pol_lease_due(const pol_lease_t *l, int64_t now)
{
	return l && l->state == POL_LEASE_GRACE && l->requeue_at <= now;
}

int pol_lease_settle(pol_lease_table_t *t, int64_t job_id, bool won,
		     int64_t now, int64_t duration_s, int64_t grace_s)
{
	pol_lease_t *l = lease_find(t, job_id);

	if (!l) {
		errno = ENOENT;
		return -1;
	}
	if (duration_s <= 0 || grace_s < 0) {
		errno = EINVAL;
		return -1;
	}
	if (won)
		return pol_lease_grant(t, job_id, l->gpus, now, duration_s);
	l->state = POL_LEASE_GRACE;
	l->requeue_at = now + grace_s;
	return 0;
}

static int cmp_id(const void *a, const void *b)
{
	int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;

	return (x > y) - (x < y);
}

int pol_lease_sweep(pol_lease_table_t *t, const int64_t *ids, int n)
{
	int64_t *s = NULL;
	int i, m = 0, ms = 0;

	if (!t || n < 0 || (n > 0 && !ids)) {
		errno = EINVAL;
		return -1;
	}
	if (n > 0) {
		if (!(s = malloc((size_t) n * sizeof(*s))))
			return -1;
		memcpy(s, ids, (size_t) n * sizeof(*s));
		qsort(s, n, sizeof(*s), cmp_id);
	}
	/* a stable filter: the prefix stays sorted, the tail stays a tail */
	for (i = 0; i < t->n; i++) {
		if (n > 0 &&
		    bsearch(&t->v[i].job_id, s, n, sizeof(*s), cmp_id)) {
			t->v[m++] = t->v[i];
			if (i < t->n_sorted)
				ms++;
		}
	}
	t->n = m;
	t->n_sorted = ms;
	free(s);
	return 0;
}
