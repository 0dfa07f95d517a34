/*
 * pol_themis.c - finish-time fairness estimates, the partial-allocation
 * auction and leases (see pol_themis.h, doc/fairness.md).
 *
 * The proportional-fair allocation and the auction over it are in
 * pol_pf.c.
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

/* Leases ------------------------------------------------------------------ */

/*
 * The table is an array whose first n_sorted leases are sorted by job id
 * and whose short tail (new grants) is not: lookups bsearch the prefix and
 * scan the tail; when the tail passes n / 64 leases, at least
 * LEASE_TAIL_MIN and at most LEASE_TAIL, it is sorted and merged into the
 * prefix (O(n) moves), so n grants cost O(n^2 / LEASE_TAIL) element moves
 * at worst instead of O(n^2), and a table of a few hundred leases (a
 * simulated cluster) is not scanned 256 deep on every miss.
 */
#define LEASE_TAIL     256
#define LEASE_TAIL_MIN 16

struct pol_lease_table {
	pol_lease_t *v;
	int n, n_sorted;
	size_t cap;
	pol_lease_t *tmp; /* LEASE_TAIL + 1 entries, for the merge */
	/* an index of v by job id (open addressing, h_cap a power of two
	 * >= 2 n, -1 empty): rebuilt when leases move (a merge, a drop, a
	 * sweep: each O(n) already), added to on a grant; h_ok false (out
	 * of memory) falls back to the search above */
	int *h;
	size_t h_cap;
	bool h_ok;
};

static size_t lease_hash(int64_t id, size_t cap)
{
	uint64_t x = (uint64_t) id * 0x9e3779b97f4a7c15ULL;

	return (size_t) (x ^ (x >> 29)) & (cap - 1);
}

static void h_put(pol_lease_table_t *t, int i)
{
	size_t m = t->h_cap - 1, p = lease_hash(t->v[i].job_id, t->h_cap);

	while (t->h[p] >= 0)
		p = (p + 1) & m;
	t->h[p] = i;
}

/* Index every lease (h_ok false on ENOMEM). */
static void h_rebuild(pol_lease_table_t *t)
{
	size_t cap = 64, k;
	int i;

	while (cap < 2 * (size_t) t->n + 2)
		cap *= 2;
	if (cap != t->h_cap) {
		int *h = realloc(t->h, cap * sizeof(*h));

		if (!h) {
			t->h_ok = false;
			return;
		}
		t->h = h;
		t->h_cap = cap;
	}
	for (k = 0; k < cap; k++)
		t->h[k] = -1;
	for (i = 0; i < t->n; i++)
		h_put(t, i);
	t->h_ok = true;
}

/* v[n - 1] was appended. */
static void h_add(pol_lease_table_t *t)
{
	if (t->h_ok && 2 * (size_t) t->n + 2 <= t->h_cap)
		h_put(t, t->n - 1);
	else
		h_rebuild(t);
}

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
	free((*tp)->h);
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
	h_rebuild(t);
}

static pol_lease_t *lease_find(const pol_lease_table_t *t, int64_t job_id)
{
	int lo = 0, hi, i;

	if (!t)
		return NULL;
	if (t->h_ok) {
		size_t m = t->h_cap - 1, p = lease_hash(job_id, t->h_cap);

		for (; t->h[p] >= 0; p = (p + 1) & m)
			if (t->v[t->h[p]].job_id == job_id)
				return &t->v[t->h[p]];
		return NULL;
	}
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
		h_add(t);
	}
	l->gpus = gpus;
	l->start = now;
	l->end = now + duration_s;
	l->requeue_at = 0;
	l->state = POL_LEASE_ACTIVE;
	if (t->n - t->n_sorted > (t->n / 64 < LEASE_TAIL_MIN ? LEASE_TAIL_MIN
				  : t->n / 64 > LEASE_TAIL   ? LEASE_TAIL
							     : t->n / 64))
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
	h_rebuild(t);
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
	h_rebuild(t);
	return 0;
}
