/*
 * fed_dispatch.c - agora-sim federation, one dispatcher's run: every
 * cluster's schedule as a step function of free GPUs (FCFS with
 * conservative backfill on exact run times), Slurm's sibling rule, random
 * and least-loaded dispatch, the core's batched auction (pol_fed_auction)
 * and the replica placement slow path (pol_fed_place).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fed_int.h"
#include "pol_estimate.h"

/* ---- a cluster's schedule: free GPUs as a step function of time -------- */

/* free[i] GPUs are free on [t[i], t[i+1]); the last step lasts for ever
 * with every GPU free (reservations are finite). */
typedef struct fed_prof {
	int64_t *t;
	int *free;
	int n, cap, total;
} fed_prof_t;

static int fed_prof_init(fed_prof_t *p, int total, int64_t t0)
{
	memset(p, 0, sizeof(*p));
	p->cap = 64;
	p->t = malloc((size_t) p->cap * sizeof(*p->t));
	p->free = malloc((size_t) p->cap * sizeof(*p->free));
	if (!p->t || !p->free)
		return -1;
	p->t[0] = t0;
	p->free[0] = total;
	p->n = 1;
	p->total = total;
	return 0;
}

static void fed_prof_free(fed_prof_t *p)
{
	free(p->t);
	free(p->free);
	memset(p, 0, sizeof(*p));
}

/* forget the steps that ended by now */
static void fed_prof_trim(fed_prof_t *p, int64_t now)
{
	int k = 0;

	while (k + 1 < p->n && p->t[k + 1] <= now)
		k++;
	if (!k)
		return;
	memmove(p->t, p->t + k, (size_t) (p->n - k) * sizeof(*p->t));
	memmove(p->free, p->free + k, (size_t) (p->n - k) * sizeof(*p->free));
	p->n -= k;
}

/* earliest s >= now with g GPUs free on [s, s + len); p trimmed to now */
static int64_t fed_prof_earliest(const fed_prof_t *p, int64_t now, int g,
				 int64_t len)
{
	int64_t s = now;
	int i = 0, j;

	for (;;) {
		for (j = i; j < p->n && (j == i || p->t[j] < s + len); j++)
			if (p->free[j] < g)
				break;
		if (j == p->n || p->t[j] >= s + len || p->free[j] >= g)
			return s;
		i = j + 1;
		if (i >= p->n)
			return p->t[p->n - 1]; /* not reached: all free */
		s = p->t[i];
	}
}

/* index of the step starting at t, split off the step covering t */
static int fed_prof_split(fed_prof_t *p, int64_t t)
{
	int lo = 0, hi = p->n; /* first index with p->t[k] > t */

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (p->t[mid] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && p->t[lo - 1] == t)
		return lo - 1;
	if (p->n == p->cap) {
		int64_t *nt;
		int *nf;

		p->cap *= 2;
		nt = realloc(p->t, (size_t) p->cap * sizeof(*nt));
		if (nt)
			p->t = nt;
		nf = realloc(p->free, (size_t) p->cap * sizeof(*nf));
		if (nf)
			p->free = nf;
		if (!nt || !nf)
			return -1;
	}
	memmove(p->t + lo + 1, p->t + lo, (size_t) (p->n - lo) * sizeof(*p->t));
	memmove(p->free + lo + 1, p->free + lo,
		(size_t) (p->n - lo) * sizeof(*p->free));
	p->t[lo] = t;
	p->free[lo] = lo > 0 ? p->free[lo - 1] : p->total;
	p->n++;
	return lo;
}

/* g GPUs taken on [s, s + len) of the cluster's schedule: -1/EPROTO if
 * that overcommits */
static int fed_prof_reserve(fed_prof_t *p, int64_t s, int64_t len, int g)
{
	int a, b, k;

	if (fed_prof_split(p, s) < 0)
		return -1;
	b = fed_prof_split(p, s + len);
	a = fed_prof_split(p, s);
	if (a < 0 || b < 0)
		return -1;
	for (k = a; k < b; k++) {
		p->free[k] -= g;
		if (p->free[k] < 0) { /* never more than exist */
			errno = EPROTO;
			return -1;
		}
	}
	return 0;
}

/* ---- one dispatcher's run ------------------------------------------------ */

typedef struct fed_state {
	const fed_scen_t *sc;
	const fed_opts_t *o;
	fed_run_t *r;
	fed_prof_t prof[FED_MAX_SITES];
	double load[FED_MAX_SITES]; /* GPUs of assigned jobs not ended */
	fed_end_t *heap;            /* assigned jobs by end, a min-heap */
	int n_heap;
	fed_end_t *wait; /* jobs not started, by start */
	int n_wait;
	int queued[FED_MAX_SITES]; /* jobs assigned, not started yet */
	pol_fed_catalog_t cat;     /* replicas usable now (sites shared) */
	uint64_t rng;
	int64_t next_place;
	/* --limits --hold history: the run times of the jobs ended so far,
	 * by tenant and GPUs (agorad's history) */
	pol_est_t *est;
} fed_state_t;

/* a min-heap of fed_end_t by .end */
static void fed_heap_push(fed_end_t *heap, int *n, fed_end_t e)
{
	int k = (*n)++;

	while (k > 0 && heap[(k - 1) / 2].end > e.end) {
		heap[k] = heap[(k - 1) / 2];
		k = (k - 1) / 2;
	}
	heap[k] = e;
}

static fed_end_t fed_heap_pop(fed_end_t *heap, int *n)
{
	fed_end_t top = heap[0], last = heap[--*n];
	int k = 0, c;

	for (;;) {
		c = 2 * k + 1;
		if (c >= *n)
			break;
		if (c + 1 < *n && heap[c + 1].end < heap[c].end)
			c++;
		if (heap[c].end >= last.end)
			break;
		heap[k] = heap[c];
		k = c;
	}
	if (*n)
		heap[k] = last;
	return top;
}

static bool fed_usable(const fed_run_t *r, int n_sites, int d, int c, int64_t t)
{
	size_t k = (size_t) d * (size_t) n_sites + (size_t) c;

	return r->rep_from[k] <= t && t < r->rep_to[k];
}

/* the catalog's replicas: those usable at t, or (t < 0) every replica
 * placed and not being dropped, in flight included */
static void fed_where(const fed_state_t *st, int64_t t, pol_fed_catalog_t *cat)
{
	int d, c, S = st->sc->n_sites;

	for (d = 0; d < cat->n_datasets; d++) {
		uint64_t w = 0;

		for (c = 0; c < S; c++) {
			size_t k = (size_t) d * (size_t) S + (size_t) c;

			if (t < 0 ? st->r->rep_to[k] == FED_NEVER
				  : fed_usable(st->r, S, d, c, t))
				w |= (uint64_t) 1 << c;
		}
		cat->datasets[d].where = w;
	}
}

/* seconds job j holds GPUs before computing on c, dispatched at now */
static int64_t fed_xfer(const fed_state_t *st, const fed_job_t *j, int c,
			int64_t now)
{
	const pol_fed_dataset_t *ds = &st->sc->cat.datasets[j->dataset];

	if (fed_usable(st->r, st->sc->n_sites, j->dataset, c, now))
		return 0;
	return (int64_t) ceil(ds->bytes /
			      st->sc->cat.sites[c].link_bytes_per_s);
}

/* the start a cluster's will-run would give job j at now */
static int64_t fed_plan_start(const fed_state_t *st, const fed_job_t *j, int c,
			      int64_t now)
{
	return fed_prof_earliest(&st->prof[c], now, j->gpus,
				 j->dur + fed_xfer(st, j, c, now));
}

/* job i joins cluster c's queue at now: its start is fixed there */
static int fed_commit(fed_state_t *st, int i, int c, int64_t now)
{
	const fed_job_t *j = &st->sc->jobs[i];
	fed_run_t *r = st->r;
	int64_t x = fed_xfer(st, j, c, now), s, lend;

	s = fed_prof_earliest(&st->prof[c], now, j->gpus, j->dur + x);
	if (fed_prof_reserve(&st->prof[c], s, j->dur + x, j->gpus))
		return -1;
	r->cluster[i] = c;
	r->start[i] = s;
	r->xfer[i] = x;
	r->end[i] = s + x + j->dur;
	st->load[c] += j->gpus;
	lend = st->o->knows_limits ? s + x + j->limit : r->end[i];
	fed_heap_push(st->heap, &st->n_heap,
		      (fed_end_t){ r->end[i], j->gpus, c, lend, i });
	if (s > now) {
		st->queued[c]++;
		fed_heap_push(st->wait, &st->n_wait,
			      (fed_end_t){ s, j->gpus, c, s, -1 });
	}
	return 0;
}

/* the history's group of job j: its tenant (app, user) and GPUs */
static pol_est_key_t fed_est_key(const fed_job_t *j, char *buf, size_t len)
{
	snprintf(buf, len, "t%d", j->tenant);
	return (pol_est_key_t){ buf, buf, NULL, j->gpus, NULL };
}

/* the hold of job j in the queue term (fed_opts_t.hold_history) */
static int64_t fed_hold(const fed_state_t *st, const fed_job_t *j)
{
	char buf[24];
	pol_est_key_t key;
	double mean = 0.0;
	int n = 0;

	if (!st->o->knows_limits)
		return j->dur; /* exact run times, as will-run's */
	if (!st->est)
		return pol_fed_hold_of_limit(j->limit);
	key = fed_est_key(j, buf, sizeof(buf));
	if (pol_est_history(st->est, &key, &mean, &n) < 0)
		mean = 0.0;
	return pol_fed_hold_of(j->limit, mean);
}

/* time moves to now: ended jobs leave the loads (and their run time goes
 * into the history), past steps go */
static int fed_advance(fed_state_t *st, int64_t now)
{
	int c;

	while (st->n_heap && st->heap[0].end <= now) {
		fed_end_t e = fed_heap_pop(st->heap, &st->n_heap);

		st->load[e.c] -= e.gpus;
		if (st->est && e.job >= 0) {
			const fed_job_t *j = &st->sc->jobs[e.job];
			char buf[24];
			pol_est_key_t key = fed_est_key(j, buf, sizeof(buf));

			if (pol_est_record(st->est, &key, j->dur, e.end) < 0)
				return -1;
		}
	}
	while (st->n_wait && st->wait[0].end <= now)
		st->queued[fed_heap_pop(st->wait, &st->n_wait).c]--;
	for (c = 0; c < st->sc->n_sites; c++)
		fed_prof_trim(&st->prof[c], now);
	return 0;
}

static bool fed_elig(const fed_job_t *j, int c)
{
	return (j->eligible >> c) & 1;
}

/* first-start, random, least-loaded: the cluster for job j at now */
static int fed_pick(fed_state_t *st, const fed_job_t *j, int64_t now)
{
	int c, best = -1, n_elig = __builtin_popcountll(j->eligible), k;
	int64_t s, best_s = FED_NEVER;
	double v, best_v = INFINITY;

	switch (st->r->disp) {
	case FED_RANDOM:
		k = (int) (sim_rand_unit(&st->rng) * n_elig);
		for (c = 0; c < st->sc->n_sites; c++)
			if (fed_elig(j, c) && k-- == 0)
				return c;
		return -1;
	case FED_LEAST_LOADED:
		for (c = 0; c < st->sc->n_sites; c++) {
			v = st->load[c] / st->sc->site[c].gpus;
			if (fed_elig(j, c) && v < best_v) {
				best_v = v;
				best = c;
			}
		}
		return best;
	default: /* first-start: earliest start, ties to the origin */
		for (c = 0; c < st->sc->n_sites; c++) {
			if (!fed_elig(j, c))
				continue;
			s = fed_plan_start(st, j, c, now);
			if (s < best_s || (s == best_s && c == j->origin)) {
				best_s = s;
				best = c;
			}
		}
		return best;
	}
}

/*
 * --limits: what agorad's survey of each cluster reads at now (its
 * pol_fed_cluster_load_t): the GPUs free, the running jobs with the ends
 * of their limits, the pending ones with their GPUs and limits.  busy
 * holds the running jobs of every cluster (st->n_heap entries at most),
 * each cluster's a slice of it.
 */
static void fed_loads(const fed_state_t *st, int64_t now, pol_fed_busy_t *busy,
		      pol_fed_cluster_load_t *l)
{
	int S = st->sc->n_sites, c, k, nb = 0;
	int first[FED_MAX_SITES];

	memset(l, 0, (size_t) S * sizeof(*l));
	/* the running jobs grouped by cluster: count, then place */
	for (k = 0; k < st->n_heap; k++)
		if (st->r->start[st->heap[k].job] <= now)
			l[st->heap[k].c].n_busy++;
	for (c = 0; c < S; c++) {
		first[c] = nb;
		nb += l[c].n_busy;
		l[c].busy = busy + first[c];
		l[c].n_busy = 0;
		l[c].gpus_total = st->sc->site[c].gpus;
		l[c].gpus_free = st->prof[c].free[0];
	}
	for (k = 0; k < st->n_heap; k++) {
		const fed_end_t *e = &st->heap[k];
		const fed_job_t *j = &st->sc->jobs[e->job];
		pol_fed_cluster_load_t *lc = &l[e->c];
		int64_t lim = pol_fed_limit_s(j->limit);

		if (lim > lc->max_limit_s)
			lc->max_limit_s = lim;
		if (st->r->start[e->job] <= now) {
			busy[first[e->c] + lc->n_busy++] = (pol_fed_busy_t){
				e->lend > now ? e->lend : now, e->gpus
			};
			continue;
		}
		lc->gpus_queued += e->gpus;
		lc->jobs_queued++;
		lc->queued_gpu_s += (double) e->gpus * (double) lim;
	}
}

/*
 * --limits: the start agorad bids for a job of gpus GPUs on a cluster of
 * load l: Slurm's will-run answer, which plans on the running jobs held
 * to their limits and ignores the pending ones (select/cons_tres's
 * will-run test), through the core's pol_fed_start_choose as agorad's
 * plan_take() passes it.  Node boundaries are not modelled.
 */
static int64_t fed_limits_start(const pol_fed_cluster_load_t *l, int gpus,
				int64_t now)
{
	pol_fed_cluster_load_t running = *l;
	int src;

	running.gpus_queued = 0;
	running.jobs_queued = 0;
	running.queued_gpu_s = 0.0;
	return pol_fed_start_choose(l, gpus,
				    pol_fed_start_estimate(&running, gpus, now),
				    0, now, &src);
}

/* agora, agora+data: one auction round at now for jobs [i0, i1) */
static int fed_round(fed_state_t *st, int i0, int i1, int64_t now)
{
	int n = i1 - i0, S = st->sc->n_sites, i, c, rc = -1;
	pol_fed_job_t *jobs = calloc((size_t) n, sizeof(*jobs));
	pol_fed_plan_t *plans = calloc((size_t) n * (size_t) S, sizeof(*plans));
	pol_fed_award_t *aw = calloc((size_t) n, sizeof(*aw));
	pol_fed_busy_t *busy = NULL;
	pol_fed_cluster_load_t load[FED_MAX_SITES];
	int free_gpus[FED_MAX_SITES];
	pol_fed_weights_t w;

	if (!jobs || !plans || !aw)
		goto out;
	fed_where(st, now, &st->cat);
	for (c = 0; c < S; c++)
		free_gpus[c] = st->prof[c].free[0];
	if (st->o->knows_limits) {
		if (!(busy = calloc((size_t) st->n_heap + 1, sizeof(*busy))))
			goto out;
		fed_loads(st, now, busy, load);
		/* agorad's supply: free now, less what the pending jobs
		 * there take first */
		for (c = 0; c < S; c++) {
			int f = load[c].gpus_free - load[c].gpus_queued;

			free_gpus[c] = f > 0 ? f : 0;
		}
	}
	for (i = 0; i < n; i++) {
		const fed_job_t *j = &st->sc->jobs[i0 + i];

		jobs[i].id = j->id;
		jobs[i].gpus = j->gpus;
		jobs[i].dataset = j->dataset;
		jobs[i].eligible = jobs[i].hw_match = j->eligible;
		jobs[i].submit = j->submit;
		/* exact run times, as will-run's; --limits: agorad's hold */
		jobs[i].hold_s = fed_hold(st, j);
		for (c = 0; c < S; c++) {
			pol_fed_plan_t *p = &plans[(size_t) i * S + c];

			p->valid = fed_elig(j, c);
			if (p->valid && st->o->knows_limits)
				p->start = fed_limits_start(&load[c], j->gpus,
							    now);
			else if (p->valid)
				p->start = fed_plan_start(st, j, c, now);
			p->locality = 0.0; /* not modelled: equal everywhere */
			/* the queue before this round's jobs join it (the
			 * auction adds them) */
			p->queue_per_gpu = (double) st->queued[c] /
					   st->sc->site[c].gpus;
			p->gpus_total = st->sc->site[c].gpus;
		}
	}
	pol_fed_weights_default(&w);
	w.w_queue = st->o->w_queue;
	if (pol_fed_auction(&w, &st->cat, jobs, n, plans, S, free_gpus, now,
			    aw))
		goto out;
	for (i = 0; i < n; i++) {
		const fed_job_t *j = &st->sc->jobs[i0 + i];

		c = aw[i].cluster >= 0 ? aw[i].cluster : j->origin;
		if (!fed_elig(j, c))
			c = __builtin_ctzll(j->eligible);
		if (fed_commit(st, i0 + i, c, now))
			goto out;
	}
	rc = 0;
out:
	free(jobs);
	free(plans);
	free(aw);
	free(busy);
	return rc;
}

/* keep the interval of replica k (dataset k / S, cluster k % S) */
static int fed_hist_add(fed_run_t *r, size_t k, int S)
{
	if (r->n_hist == r->cap_hist) {
		int cap = r->cap_hist ? 2 * r->cap_hist : 64;
		fed_ival_t *h = realloc(r->hist, (size_t) cap * sizeof(*h));

		if (!h)
			return -1;
		r->hist = h;
		r->cap_hist = cap;
	}
	r->hist[r->n_hist++] = (fed_ival_t){ (int) (k / (size_t) S),
					     (int) (k % (size_t) S),
					     r->rep_from[k], r->rep_to[k] };
	return 0;
}

/* one move of a placement plan, decided at now */
static int fed_apply_move(fed_state_t *st, const pol_fed_move_t *m, int64_t now)
{
	int S = st->sc->n_sites, c;
	fed_run_t *r = st->r;
	const pol_fed_dataset_t *ds = &st->sc->cat.datasets[m->dataset];
	size_t base = (size_t) m->dataset * (size_t) S;
	int64_t first = FED_NEVER;

	if (m->to >= 0) {
		size_t k = base + (size_t) m->to;

		if (r->rep_to[k] > now && r->rep_from[k] <= now) {
			r->rep_to[k] = FED_NEVER; /* a drop called off */
			return 0;
		}
		if (r->rep_to[k] > r->rep_from[k] && fed_hist_add(r, k, S))
			return -1;
		r->rep_from[k] = now +
				 (int64_t) ceil(ds->bytes /
						st->sc->cat.sites[m->to]
							.link_bytes_per_s);
		r->rep_to[k] = FED_NEVER;
		r->copied_bytes += ds->bytes;
		r->copies++;
		return 0;
	}
	/* a dropped replica serves until another one is usable */
	for (c = 0; c < S; c++)
		if (c != m->from && r->rep_to[base + c] == FED_NEVER &&
		    r->rep_from[base + c] < first)
			first = r->rep_from[base + c];
	r->rep_to[base + m->from] = first == FED_NEVER ? now
				    : first > now      ? first
						       : now;
	r->drops++;
	return 0;
}

/* agora+data: MAST's slow path at now, on the mean GPU demand (pending and
 * running jobs) of each dataset over the period before */
static int fed_place_tick(fed_state_t *st, int64_t now)
{
	const fed_scen_t *sc = st->sc;
	int64_t P = st->o->place_s;
	double *demand = calloc((size_t) sc->cat.n_datasets, sizeof(*demand));
	double supply[FED_MAX_SITES];
	pol_fed_place_result_t res;
	int i, c;

	if (!demand)
		return -1;
	for (i = 0; i < sc->n && sc->jobs[i].submit < now; i++) {
		const fed_job_t *j = &sc->jobs[i];
		int64_t e = st->r->end[i] < now ? st->r->end[i] : now;
		int64_t b = j->submit > now - P ? j->submit : now - P;

		if (e > b)
			demand[j->dataset] += j->gpus * (double) (e - b) / P;
	}
	for (c = 0; c < sc->n_sites; c++)
		supply[c] = sc->site[c].gpus;
	fed_where(st, -1, &st->cat);
	memset(&res, 0, sizeof(res));
	if (pol_fed_place(&st->cat, demand, supply, INT_MAX, false, &res)) {
		free(demand);
		return -1;
	}
	for (i = 0; i < res.n_moves; i++)
		if (fed_apply_move(st, &res.moves[i], now))
			break;
	st->r->placements++;
	pol_fed_place_result_free(&res);
	free(demand);
	return i < res.n_moves ? -1 : 0;
}

static int64_t fed_round_up(int64_t t, int64_t q)
{
	int64_t r = t % q;

	return r == 0 ? t : r > 0 ? t + (q - r) : t - r;
}

/* replica intervals of the scenario's start: the first replicas for ever,
 * no other (from = never, to before any time) */
void fed_reps_init(const fed_scen_t *sc, int64_t *from, int64_t *to)
{
	int d, c, S = sc->n_sites;

	for (d = 0; d < sc->cat.n_datasets; d++)
		for (c = 0; c < S; c++) {
			size_t k = (size_t) d * (size_t) S + (size_t) c;
			bool has = (sc->cat.datasets[d].where >> c) & 1;

			from[k] = has ? INT64_MIN : FED_NEVER;
			to[k] = has ? FED_NEVER : INT64_MIN;
		}
}

static int fed_run_alloc(const fed_scen_t *sc, fed_run_t *r)
{
	size_t n = (size_t) sc->n + 1,
	       reps = (size_t) sc->cat.n_datasets * (size_t) sc->n_sites + 1;
	int i;

	r->cluster = calloc(n, sizeof(*r->cluster));
	r->start = calloc(n, sizeof(*r->start));
	r->xfer = calloc(n, sizeof(*r->xfer));
	r->end = calloc(n, sizeof(*r->end));
	r->rep_from = calloc(reps, sizeof(*r->rep_from));
	r->rep_to = calloc(reps, sizeof(*r->rep_to));
	if (!r->cluster || !r->start || !r->xfer || !r->end || !r->rep_from ||
	    !r->rep_to)
		return -1;
	for (i = 0; i < sc->n; i++)
		r->end[i] = FED_NEVER;
	fed_reps_init(sc, r->rep_from, r->rep_to);
	return 0;
}

void fed_run_free(fed_run_t *r)
{
	free(r->cluster);
	free(r->start);
	free(r->xfer);
	free(r->end);
	free(r->rep_from);
	free(r->rep_to);
	free(r->hist);
	free(r->series);
	free(r->assigned);
}

static int fed_state_init(fed_state_t *st, const fed_scen_t *sc,
			  const fed_opts_t *o, fed_run_t *r)
{
	int c;

	memset(st, 0, sizeof(*st));
	st->sc = sc;
	st->o = o;
	st->r = r;
	st->rng = o->seed * 0xbf58476d1ce4e5b9ULL + 0x7a4d;
	st->next_place = r->disp == FED_AGORA_DATA ? sc->t0 + o->place_s
						   : FED_NEVER;
	st->heap = calloc((size_t) sc->n + 1, sizeof(*st->heap));
	st->wait = calloc((size_t) sc->n + 1, sizeof(*st->wait));
	st->cat = sc->cat;
	st->cat.datasets = calloc((size_t) sc->cat.n_datasets + 1,
				  sizeof(*st->cat.datasets));
	if (!st->heap || !st->wait || !st->cat.datasets)
		return -1;
	if (o->knows_limits && o->hold_history &&
	    (r->disp == FED_AGORA || r->disp == FED_AGORA_DATA) &&
	    !(st->est = pol_est_create(NULL)))
		return -1;
	memcpy(st->cat.datasets, sc->cat.datasets,
	       (size_t) sc->cat.n_datasets * sizeof(*st->cat.datasets));
	for (c = 0; c < sc->n_sites; c++)
		if (fed_prof_init(&st->prof[c], sc->site[c].gpus, sc->t0))
			return -1;
	return 0;
}

static void fed_state_free(fed_state_t *st)
{
	int c;

	for (c = 0; c < FED_MAX_SITES; c++)
		fed_prof_free(&st->prof[c]);
	free(st->heap);
	free(st->wait);
	free(st->cat.datasets);
	pol_est_destroy(&st->est);
}

static int fed_dispatch(fed_state_t *st, int i, int64_t now)
{
	int c = fed_pick(st, &st->sc->jobs[i], now);

	return c < 0 ? -1 : fed_commit(st, i, c, now);
}

/* the whole trace under r->disp: every job's cluster, start and end */
int fed_simulate(const fed_scen_t *sc, const fed_opts_t *o, fed_run_t *r)
{
	fed_state_t st;
	bool auction = r->disp == FED_AGORA || r->disp == FED_AGORA_DATA;
	int i = 0, k, rc = -1;
	int64_t now;

	memset(&st, 0, sizeof(st));
	if (fed_run_alloc(sc, r) || fed_state_init(&st, sc, o, r))
		goto out;
	while (i < sc->n) {
		now = auction ? fed_round_up(sc->jobs[i].submit, o->round_s)
			      : sc->jobs[i].submit;
		for (k = i + 1;
		     auction && k < sc->n &&
		     fed_round_up(sc->jobs[k].submit, o->round_s) == now;
		     k++)
			;
		for (; st.next_place <= now; st.next_place += o->place_s)
			if (fed_place_tick(&st, st.next_place))
				goto out;
		if (fed_advance(&st, now))
			goto out;
		if (auction ? fed_round(&st, i, k, now)
			    : fed_dispatch(&st, i, now))
			goto out;
		i = k;
	}
	rc = 0;
out:
	fed_state_free(&st);
	return rc;
}
