/*
 * pol_fed_place.c - MAST's slow path: move dataset replicas between the
 * clusters of a federation, by hill climbing, so that the GPU demand that
 * follows the data meets each cluster's GPU supply, within every
 * cluster's storage quota.
 *
 * The model: a dataset's demand is split evenly over its replicas;
 * cluster c's load is the sum of its shares over its supply.  A state is
 * one replica set per dataset; a neighbour adds one replica, drops one
 * (never the last), or moves one (an add and a drop in one step, which
 * lets a cluster whose quota is full trade a replica).  A state's key is
 * its loads sorted from the worst down; a neighbour is better when its key
 * is lexicographically lower (first the worst load, then the next ...),
 * ties going to fewer bytes copied.  The best neighbour is taken until
 * none is better; the key only falls, so the search ends.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agora_mem.h"
#include "pol_fed.h"

/* Relative tolerance when two loads are compared. */
#define FED_EPS 1e-9

static int fed_popcount(uint64_t x)
{
	return __builtin_popcountll(x);
}

static double fed_ratio(double demand, double supply)
{
	if (supply > 0.0)
		return demand / supply;
	return demand > 0.0 ? INFINITY : 0.0;
}

static bool fed_same(double a, double b)
{
	if (a == b)
		return true;
	if (!isfinite(a) || !isfinite(b))
		return false;
	return fabs(a - b) <= FED_EPS * fmax(1.0, fmax(fabs(a), fabs(b)));
}

/* worst load over n clusters and how many clusters are at it */
static double fed_worst(const double *demand, const double *supply, int n,
			int *at_worst)
{
	double worst = 0.0;
	int c, k = 0;

	for (c = 0; c < n; c++) {
		double r = fed_ratio(demand[c], supply[c]);

		if (r > worst && !fed_same(r, worst))
			worst = r;
	}
	for (c = 0; c < n; c++)
		if (fed_same(fed_ratio(demand[c], supply[c]), worst))
			k++;
	if (at_worst)
		*at_worst = k;
	return worst;
}

/* the clusters at load 'worst' */
static uint64_t fed_worst_set(const double *demand, const double *supply, int n,
			      double worst)
{
	uint64_t set = 0;
	int c;

	for (c = 0; c < n; c++)
		if (fed_same(fed_ratio(demand[c], supply[c]), worst))
			set |= (uint64_t) 1 << c;
	return set;
}

/* add (sign 1) or remove (sign -1) dataset d's shares over 'where' */
static void fed_share(double *dem, uint64_t where, double demand, int sign)
{
	int n = fed_popcount(where), c;

	if (!n || !(demand > 0.0))
		return;
	for (c = 0; c < 64; c++)
		if ((where >> c) & 1)
			dem[c] += sign * demand / n;
}

static int fed_check(const pol_fed_catalog_t *cat, const double *demand,
		     const double *supply)
{
	int i;

	if (!cat || cat->n_sites < 0 || cat->n_sites > 64 ||
	    cat->n_datasets < 0 || (cat->n_sites && !cat->sites) ||
	    (cat->n_datasets && (!cat->datasets || !demand)) ||
	    (cat->n_sites && !supply))
		return -1;
	for (i = 0; i < cat->n_datasets; i++)
		if (!isfinite(demand[i]) || demand[i] < 0.0 ||
		    !isfinite(cat->datasets[i].bytes) ||
		    cat->datasets[i].bytes < 0.0)
			return -1;
	for (i = 0; i < cat->n_sites; i++)
		if (!isfinite(supply[i]) || supply[i] < 0.0)
			return -1;
	return 0;
}

static void fed_load_of(const pol_fed_catalog_t *cat, const uint64_t *where,
			const double *demand, const double *supply,
			pol_fed_load_t *load)
{
	uint64_t mask = cat->n_sites >= 64 ? ~(uint64_t) 0
					   : ((uint64_t) 1 << cat->n_sites) - 1;
	int d, c;

	memset(load, 0, sizeof(*load));
	for (c = 0; c < cat->n_sites; c++)
		load->supply_gpus[c] = supply[c];
	for (d = 0; d < cat->n_datasets; d++)
		fed_share(load->demand_gpus, where[d] & mask, demand[d], 1);
}

double pol_fed_load_compute(const pol_fed_catalog_t *cat, const double *demand,
			    const double *supply, pol_fed_load_t *load)
{
	uint64_t *where;
	int d;

	if (!load || fed_check(cat, demand, supply) < 0) {
		errno = EINVAL;
		return -1.0;
	}
	where = calloc(cat->n_datasets ? (size_t) cat->n_datasets : 1,
		       sizeof(*where));
	if (!where) {
		errno = ENOMEM;
		return -1.0;
	}
	for (d = 0; d < cat->n_datasets; d++)
		where[d] = cat->datasets[d].where;
	fed_load_of(cat, where, demand, supply, load);
	free(where);
	return fed_worst(load->demand_gpus, load->supply_gpus, cat->n_sites,
			 NULL);
}

/* One candidate step and the state it leads to: the loads of all
 * clusters, sorted from the worst down (the key the search lowers). */
typedef struct fed_step {
	int kind; /* 0 none, 1 drop, 2 add, 3 move (add at to, drop at from) */
	int d, from, to;
	double bytes;
	double key[64];
} fed_step_t;

/* the search's state */
typedef struct fed_hc {
	const pol_fed_catalog_t *cat;
	const double *demand;
	uint64_t *where;
	int n;           /* clusters */
	double used[64]; /* replica bytes per cluster */
	double dem[64];  /* demand per cluster in the current state */
	double supply[64];
	double scratch[64];
} fed_hc_t;

static bool fed_fits(const fed_hc_t *h, int c, double bytes)
{
	double q = h->cat->sites[c].storage_bytes;

	return !(q > 0.0) || h->used[c] + bytes <= q * (1.0 + FED_EPS);
}

/* the loads of dem, sorted from the worst down */
static void fed_key(const double *dem, const double *supply, int n, double *key)
{
	int i, k;

	for (i = 0; i < n; i++) {
		double r = fed_ratio(dem[i], supply[i]);

		for (k = i; k > 0 && key[k - 1] < r; k--)
			key[k] = key[k - 1];
		key[k] = r;
	}
}

/* <0: key a is lower (better) than b, 0 the same, >0 higher */
static int fed_key_cmp(const double *a, const double *b, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!fed_same(a[i], b[i]))
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

/* a better than b: a lower key, then fewer bytes; else the earlier
 * candidate (b, found first) is kept */
static bool fed_better(const fed_step_t *a, const fed_step_t *b, int n)
{
	int k = fed_key_cmp(a->key, b->key, n);

	if (k)
		return k < 0;
	return a->bytes < b->bytes && !fed_same(a->bytes, b->bytes);
}

static void fed_try(fed_hc_t *h, int kind, int d, int from, int to,
		    fed_step_t *best, fed_step_t *s)
{
	uint64_t w = h->where[d], nw = w;

	s->kind = kind;
	s->d = d;
	s->from = from;
	s->to = to;
	s->bytes = 0.0;
	if (kind == 1 || kind == 3)
		nw &= ~((uint64_t) 1 << from);
	if (kind == 2 || kind == 3) {
		nw |= (uint64_t) 1 << to;
		s->bytes = h->cat->datasets[d].bytes;
	}
	memcpy(h->scratch, h->dem, sizeof(h->scratch));
	fed_share(h->scratch, w, h->demand[d], -1);
	fed_share(h->scratch, nw, h->demand[d], 1);
	fed_key(h->scratch, h->supply, h->n, s->key);
	if (best->kind == 0 || fed_better(s, best, h->n))
		*best = *s;
}

/*
 * The best neighbour of the current state (kind 0 if there is none),
 * among those that change a dataset with a replica on a cluster of
 * 'from_set', and drop or move replicas only from such a cluster.  With
 * from_set the clusters at the worst load, these are all the neighbours
 * that can lower the worst load or the number of clusters at it: a
 * cluster's load falls only if it held a replica of the dataset that
 * changed and either drops it or shares it with a new one.
 */
static void fed_best_step(fed_hc_t *h, uint64_t from_set, int budget,
			  fed_step_t *best, fed_step_t *tmp)
{
	const pol_fed_catalog_t *cat = h->cat;
	int d, a, b, n = h->n;

	best->kind = 0;
	for (d = 0; d < cat->n_datasets; d++) {
		uint64_t w = h->where[d];
		double bytes = cat->datasets[d].bytes;

		if (!(w & from_set) || !(h->demand[d] > 0.0))
			continue; /* not concerned, or no demand */
		for (a = 0; a < n; a++) {
			bool has = (w >> a) & 1;
			bool in_set = (from_set >> a) & 1;

			if (has && in_set && fed_popcount(w) > 1)
				fed_try(h, 1, d, a, -1, best, tmp);
			if (!has && fed_fits(h, a, bytes))
				fed_try(h, 2, d, __builtin_ctzll(w), a, best,
					tmp);
			if (!has || !in_set || budget < 2)
				continue;
			for (b = 0; b < n; b++)
				if (!((w >> b) & 1) && fed_fits(h, b, bytes))
					fed_try(h, 3, d, a, b, best, tmp);
		}
	}
}

static int fed_push(pol_fed_place_result_t *res, size_t *cap, int d, int from,
		    int to, double bytes)
{
	pol_fed_move_t *m;

	if (agora_grow((void **) &res->moves, cap, (size_t) res->n_moves + 1,
		       sizeof(*res->moves)) < 0)
		return -1;
	m = &res->moves[res->n_moves++];
	m->dataset = d;
	m->from = from;
	m->to = to;
	m->bytes = bytes;
	return 0;
}

int pol_fed_place(pol_fed_catalog_t *cat, const double *demand,
		  const double *supply, int max_moves, bool apply,
		  pol_fed_place_result_t *res)
{
	fed_hc_t h;
	fed_step_t *cur = NULL, *s, *tmp;
	size_t cap = 0;
	int d, c;

	if (!res) {
		errno = EINVAL;
		return -1;
	}
	memset(res, 0, sizeof(*res));
	if (fed_check(cat, demand, supply) < 0 || max_moves < 0) {
		errno = EINVAL;
		return -1;
	}
	memset(&h, 0, sizeof(h));
	h.cat = cat;
	h.n = cat->n_sites;
	h.demand = demand;
	h.where = calloc(cat->n_datasets ? (size_t) cat->n_datasets : 1,
			 sizeof(*h.where));
	if (!h.where) {
		errno = ENOMEM;
		return -1;
	}
	for (c = 0; c < cat->n_sites; c++)
		h.supply[c] = supply[c];
	for (d = 0; d < cat->n_datasets; d++) {
		uint64_t mask = cat->n_sites >= 64
					? ~(uint64_t) 0
					: ((uint64_t) 1 << cat->n_sites) - 1;

		h.where[d] = cat->datasets[d].where & mask;
		for (c = 0; c < cat->n_sites; c++)
			if ((h.where[d] >> c) & 1)
				h.used[c] += cat->datasets[d].bytes;
	}
	fed_load_of(cat, h.where, demand, supply, &res->before);
	memcpy(h.dem, res->before.demand_gpus, sizeof(h.dem));
	res->worst_before = fed_worst(h.dem, h.supply, h.n, NULL);
	cur = malloc(3 * sizeof(*cur));
	if (!cur)
		goto nomem;
	s = cur + 1;
	tmp = cur + 2;
	memset(cur, 0, sizeof(*cur));

	for (;;) {
		int budget = max_moves - res->n_moves, n_at;
		double worst;

		if (budget <= 0)
			break;
		fed_key(h.dem, h.supply, h.n, cur->key);
		worst = fed_worst(h.dem, h.supply, h.n, &n_at);
		/* first the neighbours that can lower the worst load or the
		 * number of clusters at it: the best of them beats any
		 * other if it does; otherwise the best of all (it lowers
		 * the load of clusters further down the key) */
		fed_best_step(&h, fed_worst_set(h.dem, h.supply, h.n, worst),
			      budget, s, tmp);
		if (s->kind == 0 || n_at == 0 ||
		    fed_same(s->key[n_at - 1], worst))
			fed_best_step(&h, ~(uint64_t) 0, budget, s, tmp);
		if (s->kind == 0 || fed_key_cmp(s->key, cur->key, h.n) >= 0)
			break;
		d = s->d;
		if (s->kind == 2 || s->kind == 3) {
			if (fed_push(res, &cap, d, s->from, s->to,
				     cat->datasets[d].bytes) < 0)
				goto nomem;
			h.used[s->to] += cat->datasets[d].bytes;
		}
		if (s->kind == 1 || s->kind == 3) {
			if (fed_push(res, &cap, d, s->from, -1, 0.0) < 0)
				goto nomem;
			h.used[s->from] -= cat->datasets[d].bytes;
		}
		fed_share(h.dem, h.where[d], demand[d], -1);
		if (s->kind == 1 || s->kind == 3)
			h.where[d] &= ~((uint64_t) 1 << s->from);
		if (s->kind == 2 || s->kind == 3)
			h.where[d] |= (uint64_t) 1 << s->to;
		fed_share(h.dem, h.where[d], demand[d], 1);
	}
	free(cur);
	/* the after-state from scratch, so rounding does not accumulate */
	fed_load_of(cat, h.where, demand, supply, &res->after);
	res->worst_after = fed_worst(res->after.demand_gpus,
				     res->after.supply_gpus, cat->n_sites,
				     NULL);
	if (apply)
		for (d = 0; d < cat->n_datasets; d++)
			cat->datasets[d].where = h.where[d];
	free(h.where);
	return 0;
nomem:
	free(cur);
	free(h.where);
	pol_fed_place_result_free(res);
	errno = ENOMEM;
	return -1;
}

void pol_fed_place_result_free(pol_fed_place_result_t *res)
{
	if (!res)
		return;
	free(res->moves);
	memset(res, 0, sizeof(*res));
}
