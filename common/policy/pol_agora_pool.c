/*
 * pol_agora_pool.c - one pool's Themis auction in the "agora" pass
 * (pol_agora_auction.c): the apps' bids (rho tables over prefixes of their
 * pending jobs), the winners' leases and starts, and the losers whose GPUs
 * the winners need.  doc/fairness.md describes the mechanism.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pol_agora_int.h"

/* Run-time factor of j on al relative to its ideal placement. */
static double slowdown_of(const pol_agora_policy_t *a, const pol_cluster_t *c,
			  const pol_job_t *j, const pol_alloc_t *al)
{
	pol_level_t lvl = pol_alloc_level(c, al), ideal;
	double s;

	ideal = al->n_parts <= 1 ? POL_LVL_NVLINK : POL_LVL_LEAF;
	if (j->nodes <= 1 && al->n_parts > 1)
		ideal = POL_LVL_NVLINK; /* could have fit one node */
	s = a->slow[lvl] / a->slow[ideal];
	return s >= 1 ? s : 1;
}

static int resv_add(pol_agora_policy_t *a, int64_t id, int64_t until)
{
	if (agora_grow((void **) &a->resv, &a->resv_cap, a->n_resv + 1,
		       sizeof(*a->resv)) < 0)
		return -1;
	a->resv[a->n_resv++] = (ag_resv_t){ id, until };
	return 0;
}

/* Scratch of one pool's auction. */
typedef struct ag_auction {
	int *apps;           /* tenant of each interested app */
	double *rho;         /* its rho now */
	int *sel;            /* worst (1-f): indices into apps */
	pol_bid_t *bids;     /* one per selected app */
	pol_bid_opt_t *opts; /* max_opts per selected app */
	int *loser;          /* running indices, in loser_before() order */
	double *lcost;       /* per loser: GPU-seconds it would lose */
	unsigned char *lfit; /* per loser: a winner needs its GPUs */
	int *wait;           /* pending indices of winners without GPUs */
	double *wkeep;       /* their c_i */
	unsigned char *wfit; /* per waiting winner: fits with victims */
	int *inc;            /* incumbents (running indices) by app, */
	int *inc_at;         /* app t's: inc[inc_at[t] .. inc_at[t + 1]) */
	unsigned char *skip; /* per pending job: its app's bid passed it over
			      * (the offer could not hold it, bid_skip) */
} ag_auction_t;

static void auction_free(ag_auction_t *x)
{
	free(x->apps);
	free(x->rho);
	free(x->sel);
	free(x->bids);
	free(x->opts);
	free(x->loser);
	free(x->lcost);
	free(x->lfit);
	free(x->wait);
	free(x->wkeep);
	free(x->wfit);
	free(x->inc);
	free(x->inc_at);
	free(x->skip);
}

/* The incumbents by app, in running order (x->inc, x->inc_at): an app's
 * bid and its winners' leases look at its own, not at every running job. */
static int index_incumbents(ag_auction_t *x, const pol_agora_policy_t *a,
			    const pol_snapshot_t *snap)
{
	int i, t;

	x->inc = malloc((size_t) (snap->n_running ? snap->n_running : 1) *
			sizeof(*x->inc));
	x->inc_at = calloc((size_t) a->n_app + 2, sizeof(*x->inc_at));
	if (!x->inc || !x->inc_at)
		return -1;
	for (i = 0; i < snap->n_running; i++)
		if (a->rflag[i] & RF_INCUMBENT)
			x->inc_at[a->tmap[snap->running[i].tenant] + 2]++;
	for (t = 0; t < a->n_app; t++)
		x->inc_at[t + 2] += x->inc_at[t + 1];
	/* inc_at[t + 1] is app t's next slot while filling */
	for (i = 0; i < snap->n_running; i++)
		if (a->rflag[i] & RF_INCUMBENT)
			x->inc[x->inc_at[a->tmap[snap->running[i].tenant] +
					 1]++] = i;
	return 0;
}

static bool wants(const pol_agora_policy_t *a, const pol_snapshot_t *snap,
		  int p, pol_pool_t pool)
{
	return snap->pending[p].pool == pool && !a->pflag[p];
}

/* rho of one job if it holds gpus for the next lease at slowdown slow,
 * lost GPU-seconds of its service gone (a preemption's cost). */
static int job_rho_lost(const pol_agora_policy_t *a, const ag_tenant_t *t,
			const pol_job_t *j, int demand, int cgpus, int64_t now,
			int gpus, double slow, double lost, double *rho)
{
	double done = j->attained > 0 ? (double) j->attained - lost : 0;
	pol_ftf_app_t app = {
		.arrival = j->submit,
		.work = (double) pol_ag_job_work(a, j, demand) * demand,
		.done = done > 0 ? done : 0,
		.demand = demand > 0 ? demand : 1,
		.n_avg = t->app.n_avg >= 1 ? t->app.n_avg : 1,
	};

	if (app.work <= app.done)
		app.work = app.done + 1;
	return pol_ftf_rho(&app, cgpus, now, gpus, slow, a->p.lease_s, rho);
}

/* rho of one job if it holds gpus for the next lease at slowdown slow. */
static int job_rho(const pol_agora_policy_t *a, const ag_tenant_t *t,
		   const pol_job_t *j, int demand, int cgpus, int64_t now,
		   int gpus, double slow, double *rho)
{
	return job_rho_lost(a, t, j, demand, cgpus, now, gpus, slow, 0, rho);
}

/* APP_MEAN: every tenant's sum of job rho as things stand. */
int pol_ag_tenant_rho_base(pol_agora_policy_t *a, const pol_snapshot_t *snap,
			   int64_t now, int cgpus)
{
	int i;
	double r;

	for (i = 0; i < a->n_app; i++) {
		a->app[i].rho_sum = 0;
		a->app[i].n_jobs = 0;
	}
	if (a->p.app_model != AG_APP_MEAN)
		return 0;
	for (i = 0; i < snap->n_running; i++) {
		const pol_job_t *j = &snap->running[i];
		ag_tenant_t *t = AG_TEN(a, j->tenant);
		int g = pol_ag_job_gpus(j);

		if (job_rho(a, t, j, g, cgpus, now, g, 1.0, &r) < 0)
			return -1;
		t->rho_sum += r;
		t->n_jobs++;
	}
	for (i = 0; i < snap->n_pending; i++) {
		const pol_job_t *j = &snap->pending[i];
		ag_tenant_t *t = AG_TEN(a, j->tenant);

		if (job_rho(a, t, j, j->total_gpus, cgpus, now, 0, 1.0, &r) < 0)
			return -1;
		t->rho_sum += r;
		t->n_jobs++;
	}
	return 0;
}

/* The app's rho as things stand (who is worst). */
int pol_ag_app_rho_now(const pol_agora_policy_t *a, const ag_tenant_t *t,
		       int cgpus, int64_t now, double *rho)
{
	if (a->p.app_model == AG_APP_MEAN) {
		*rho = t->n_jobs ? t->rho_sum / t->n_jobs : 1;
		return 0;
	}
	return pol_ftf_rho(&t->app, cgpus, now, t->held, 1.0, a->p.lease_s,
			   rho);
}

/*
 * App t's rho table: keep its incumbents (tag 0, if any), or keep them and
 * start its first k wanted pending jobs (tag k = 1..max_opts), each gang
 * placed on the offer map after the previous ones.  A job the offer cannot
 * hold (a gang wider than the offered nodes) stops the table (bid_skip=0,
 * the default), so one gang at the head of an app, say a sweep of a
 * thousand 1-GPU jobs, empties its bid until a whole node is offered; with
 * bid_skip=1 it is passed over (x->skip, for apply_winner()) and the
 * app's later jobs bid, as the leftover pass passes it over too, up to
 * max_opts such jobs (doc/evaluation.md, "Robustness": the per-app
 * regret on 2017-11-20).  rho0: it loses its
 * incumbents and starts nothing.  APP_MEAN: the mean job rho changes by
 * each started job's gain and each lost incumbent's loss; APP_POOL: the
 * app's pooled rho with its GPU total, at the GPU-weighted mean slowdown
 * of the option (incumbents count 1).
 */
static int build_bid(pol_agora_policy_t *a, const pol_snapshot_t *snap,
		     const ag_auction_t *x, int64_t now, pol_pool_t pool, int t,
		     int cgpus, pol_bid_t *b, pol_bid_opt_t *opts)
{
	ag_tenant_t *tn = &a->app[t];
	bool mean = a->p.app_model == AG_APP_MEAN;
	int ig = 0, other, k = 0, i, g, passed = 0;
	double wslow, rho, lose = 0, gain = 0, r0, r1, cost = 0;
	int n = tn->n_jobs > 0 ? tn->n_jobs : 1;

	b->opts = opts;
	b->n_opts = 0;
	for (i = x->inc_at[t]; i < x->inc_at[t + 1]; i++) {
		const pol_job_t *j = &snap->running[x->inc[i]];
		int jg;
		double c;

		jg = pol_ag_job_gpus(j);
		ig += jg;
		/* losing it costs the work since its last checkpoint */
		c = pol_ag_preempt_cost(a, j, now);
		cost += c;
		if (mean) {
			if (job_rho_lost(a, tn, j, jg, cgpus, now, 0, 1.0, c,
					 &r0) < 0 ||
			    job_rho(a, tn, j, jg, cgpus, now, jg, 1.0, &r1) < 0)
				return -1;
			lose += r0 - r1;
		}
	}
	other = tn->held - ig;
	if (mean) {
		b->rho0 = (tn->rho_sum + lose) / n;
	} else {
		pol_ftf_app_t lost = tn->app;

		lost.done = lost.done > cost ? lost.done - cost : 0;
		if (pol_ftf_rho(&lost, cgpus, now, other, 1.0, a->p.lease_s,
				&b->rho0) < 0)
			return -1;
	}
	if (pol_freemap_assign(a->tent, a->offer) < 0)
		return -1;
	g = ig;
	wslow = ig;
	if (ig > 0) {
		if (mean)
			rho = tn->rho_sum / n;
		else if (pol_ftf_rho(&tn->app, cgpus, now, tn->held, 1.0,
				     a->p.lease_s, &rho) < 0)
			return -1;
		opts[b->n_opts++] = (pol_bid_opt_t){ ig, rho, 0 };
	}
	for (i = 0; i < tn->n && k < a->p.max_opts; i++) {
		int p = a->tpend[tn->first + i], fit, ag;
		const pol_job_t *j = &snap->pending[p];
		pol_alloc_t al;
		double sd;

		if (!wants(a, snap, p, pool))
			continue;
		fit = pol_ag_try_place(a, a->tent, j, &al);
		if (fit < 0)
			return -1;
		if (!fit) {
			/* whole gangs: pass over one the offer cannot hold,
			 * or stop there (bid_skip=0) */
			if (!a->p.bid_skip || ++passed > a->p.max_opts ||
			    pol_freemap_free_gpus(a->tent, pool) == 0)
				break;
			x->skip[p] = 1;
			continue;
		}
		ag = pol_alloc_gpus(&al);
		sd = slowdown_of(a, snap->cluster, j, &al);
		wslow += sd * ag;
		g += ag;
		k++;
		fit = pol_freemap_take(a->tent, &al);
		pol_alloc_free(&al);
		if (fit < 0)
			return -1;
		if (mean) {
			if (job_rho(a, tn, j, j->total_gpus, cgpus, now, 0, 1.0,
				    &r0) < 0 ||
			    job_rho(a, tn, j, j->total_gpus, cgpus, now, ag, sd,
				    &r1) < 0)
				return -1;
			gain += r0 - r1;
			rho = (tn->rho_sum - gain) / n;
		} else if (pol_ftf_rho(&tn->app, cgpus, now, other + g,
				       g > 0 && wslow / g > 1 ? wslow / g : 1.0,
				       a->p.lease_s, &rho) < 0) {
			return -1;
		}
		if (!(rho > 0))
			rho = 1e-9;
		if (g > 0)
			opts[b->n_opts++] = (pol_bid_opt_t){ g, rho, k };
	}
	if (!(b->rho0 > 0))
		b->rho0 = 1e-9;
	return 0;
}

/* Place the waiting winners in order on a copy of m; wfit[] says who fit.
 * Returns how many fit, or -1.  The placements stay taken in a->tent. */
static int place_waiting(pol_agora_policy_t *a, const pol_snapshot_t *snap,
			 ag_auction_t *x, int n_wait, const pol_freemap_t *m)
{
	int i, fits = 0;

	if (pol_freemap_assign(a->tent, m) < 0)
		return -1;
	for (i = 0; i < n_wait; i++) {
		pol_alloc_t al;
		int fit = pol_ag_try_place(a, a->tent,
					   &snap->pending[x->wait[i]], &al);

		x->wfit[i] = 0;
		if (fit < 0)
			return -1;
		if (!fit)
			continue;
		fit = pol_freemap_take(a->tent, &al);
		pol_alloc_free(&al);
		if (fit < 0)
			return -1;
		x->wfit[i] = 1;
		fits++;
	}
	return fits;
}

/*
 * Which losers must go: add losers' GPUs to the free map in credit order
 * (in doubling batches) until every waiting winner fits or all are added,
 * place the winners there, and requeue exactly the losers whose GPUs the
 * placements use.
 * (a->offer is free again here and serves as the map.)
 */
static int pick_victims(pol_agora_policy_t *a, const pol_snapshot_t *snap,
			ag_auction_t *x, int n_wait, int n_lose)
{
	int i, added = 0, p;

	for (i = 0; i < n_lose; i++)
		x->lfit[i] = 0;
	if (n_wait == 0)
		return 0;
	if (pol_freemap_assign(a->offer, a->w.fm) < 0)
		return -1;
	/* batches of 1, 2, 4, ... losers: O(log n_lose) placement rounds */
	while (added < n_lose) {
		int fits, batch = added ? added : 1;

		for (; batch > 0 && added < n_lose; batch--, added++)
			if (pol_freemap_give(
				    a->offer,
				    &snap->running[x->loser[added]].alloc) < 0)
				return -1;
		if ((fits = place_waiting(a, snap, x, n_wait, a->offer)) < 0)
			return -1;
		if (fits == n_wait)
			break;
	}
	if (added == 0 && place_waiting(a, snap, x, n_wait, a->offer) < 0)
		return -1;
	/* a->tent holds the last placement: who lost GPUs to it? */
	for (i = 0; i < added; i++) {
		const pol_alloc_t *al = &snap->running[x->loser[i]].alloc;

		for (p = 0; p < al->n_parts; p++)
			if ((pol_freemap_node(a->tent, al->parts[p].node) &
			     al->parts[p].gpus) != al->parts[p].gpus)
				x->lfit[i] = 1;
	}
	return 0;
}

/* Mark the incumbents of pool: running jobs whose lease expired and that
 * may lose it (pol_ag_may_lose()); the others keep their GPUs on a new
 * lease. */
static int mark_incumbents(pol_agora_policy_t *a, const pol_snapshot_t *snap,
			   int64_t now, pol_pool_t pool)
{
	int i;

	for (i = 0; i < snap->n_running; i++) {
		const pol_job_t *j = &snap->running[i];
		const pol_lease_t *l = pol_lease_get(a->leases, j->id);

		a->rflag[i] &= (unsigned char) ~(RF_INCUMBENT | RF_KEPT);
		if (j->pool != pool || (a->rflag[i] & RF_LEAVING) ||
		    !pol_lease_expired(l, now))
			continue;
		if (!pol_ag_may_lose(a, j, now)) {
			/* not requeueable, out of its preemption budget, too
			 * young or mid-interval: it keeps its GPUs (to its
			 * next checkpoint) */
			if (pol_lease_settle(
				    a->leases, j->id, true, now,
				    pol_ag_lease_len(a, j, j->start, now,
						     pol_ag_full_lease(a, now)),
				    a->p.grace_s) < 0)
				return -1;
			continue;
		}
		a->rflag[i] |= RF_INCUMBENT;
	}
	return 0;
}

/* The per-pass arrays of x, sized for the snapshot; 0 or -1. */
static int auction_alloc(ag_auction_t *x, const pol_agora_policy_t *a,
			 const pol_snapshot_t *snap)
{
	size_t na = (size_t) (a->n_papp ? a->n_papp : 1);
	size_t nr = (size_t) (snap->n_running ? snap->n_running : 1);
	size_t np = (size_t) (snap->n_pending ? snap->n_pending : 1);

	x->apps = malloc(na * sizeof(int));
	x->rho = malloc(na * sizeof(double));
	x->sel = malloc(na * sizeof(int));
	x->loser = malloc(nr * sizeof(int));
	x->lcost = malloc(nr * sizeof(double));
	x->lfit = calloc(nr, 1);
	x->wait = malloc(np * sizeof(int));
	x->wkeep = malloc(np * sizeof(double));
	x->wfit = calloc(np, 1);
	x->skip = calloc(np, 1);
	return x->apps && x->rho && x->sel && x->loser && x->lcost && x->lfit &&
			       x->wait && x->wkeep && x->wfit && x->skip
		       ? 0
		       : -1;
}

/* The apps with a wanted pending job in pool, and their rho now, into
 * x->apps and x->rho; their count, or -1. */
static int interested_apps(pol_agora_policy_t *a, const pol_snapshot_t *snap,
			   ag_auction_t *x, pol_pool_t pool, int cgpus,
			   int64_t now)
{
	int i, n_app = 0;

	for (i = 0; i < a->n_papp; i++) {
		ag_tenant_t *t = &a->app[a->papp[i]];
		bool in = false;
		int k;

		for (k = 0; k < t->n && !in; k++)
			in = wants(a, snap, a->tpend[t->first + k], pool);
		if (!in)
			continue;
		if (pol_ag_app_rho_now(a, t, cgpus, now, &x->rho[n_app]) < 0)
			return -1;
		x->apps[n_app++] = a->papp[i];
	}
	return n_app;
}

/* The incumbents of app tenant (tenant < 0: every incumbent; else x has
 * them by app) keep their GPUs on a lease of dur; an app's kept ones are
 * marked RF_KEPT. */
static int keep_incumbents(pol_agora_policy_t *a, const pol_snapshot_t *snap,
			   const ag_auction_t *x, int64_t now, int64_t dur,
			   int tenant)
{
	int r, i, end = tenant >= 0 ? x->inc_at[tenant + 1] : snap->n_running;

	for (i = tenant >= 0 ? x->inc_at[tenant] : 0; i < end; i++) {
		r = tenant >= 0 ? x->inc[i] : i;
		if (!(a->rflag[r] & RF_INCUMBENT))
			continue;
		if (tenant >= 0)
			a->rflag[r] |= RF_KEPT;
		if (pol_lease_settle(a->leases, snap->running[r].id, true, now,
				     pol_ag_lease_len(a, &snap->running[r],
						      snap->running[r].start,
						      now, dur),
				     a->p.grace_s) < 0)
			return -1;
	}
	return 0;
}

/*
 * Apply the auction's choice for selected app i: its incumbents keep
 * their GPUs for c_i * LeaseTime, and the first jobs of its chosen prefix
 * start where they fit now, or wait (x->wait) for a loser's GPUs.
 */
static int apply_winner(pol_agora_policy_t *a, const pol_snapshot_t *snap,
			ag_auction_t *x, const pol_auction_t *res, int i,
			int64_t now, pol_pool_t pool, int *n_wait,
			pol_actions_t *out)
{
	int t = x->apps[x->sel[i]], ch = res->choice[i], k, started = 0;
	int64_t full = pol_ag_full_lease(a, now);
	int64_t dur = (int64_t) llround(res->keep[i] * (double) full);
	ag_tenant_t *tn = &a->app[t];
	int want;

	if (ch < 0)
		return 0;
	if (dur < a->p.min_lease_s)
		dur = a->p.min_lease_s;
	if (dur > full)
		dur = full;
	if (keep_incumbents(a, snap, x, now, dur, t) < 0)
		return -1;
	want = x->bids[i].opts[ch].tag; /* prefix length */
	for (k = 0; k < tn->n && started < want; k++) {
		int p = a->tpend[tn->first + k], fit;
		const pol_job_t *j = &snap->pending[p];
		pol_alloc_t al;

		if (!wants(a, snap, p, pool) || x->skip[p])
			continue;
		started++;
		fit = pol_ag_try_place(a, a->w.fm, j, &al);
		if (fit < 0)
			return -1;
		if (fit) {
			int e = pol_ag_start_job(a, j, &al, now, dur,
						 res->keep[i], "auction winner",
						 out);

			pol_alloc_free(&al);
			if (e < 0)
				return -1;
			a->pflag[p] |= PF_STARTED;
			continue;
		}
		/* needs GPUs a loser still holds */
		a->pflag[p] |= PF_RESERVED;
		x->wait[*n_wait] = p;
		x->wkeep[(*n_wait)++] = res->keep[i];
	}
	return 0;
}

/* Seconds of service a job has attained over all its runs (GPU-seconds
 * over its GPUs). */
static double service_s(const pol_job_t *j)
{
	int g = pol_ag_job_gpus(j);

	return j->attained > 0 && g > 0 ? (double) j->attained / g : 0;
}

/* A loser's sort key: least work lost (GPU-seconds since the last
 * checkpoint) first; then least service attained when lose_young; then
 * fewest GPUs when small_victims, else lowest credit; then job id
 * (unique: a total order). */
typedef struct ag_lkey {
	double cost, service, credit;
	int gpus, idx;
	int64_t id;
} ag_lkey_t;

static int cmp_lkey(const void *pa, const void *pb)
{
	const ag_lkey_t *u = pa, *v = pb;

	if (u->cost != v->cost)
		return u->cost < v->cost ? -1 : 1;
	if (u->service != v->service)
		return u->service < v->service ? -1 : 1;
	if (u->gpus != v->gpus)
		return u->gpus < v->gpus ? -1 : 1;
	if (u->credit != v->credit)
		return u->credit < v->credit ? -1 : 1;
	return (u->id > v->id) - (u->id < v->id);
}

/* Losers (incumbents not kept) into x->loser in that order (their costs
 * in x->lcost).  Their count, or -1. */
static int order_losers(const pol_agora_policy_t *a, const pol_snapshot_t *snap,
			ag_auction_t *x, int64_t now)
{
	ag_lkey_t *k;
	int i, n_lose = 0;

	k = malloc((size_t) (snap->n_running ? snap->n_running : 1) *
		   sizeof(*k));
	if (!k)
		return -1;
	for (i = 0; i < snap->n_running; i++) {
		const pol_job_t *j = &snap->running[i];

		if (!(a->rflag[i] & RF_INCUMBENT) || (a->rflag[i] & RF_KEPT))
			continue;
		k[n_lose++] = (ag_lkey_t){
			.cost = pol_ag_preempt_cost(a, j, now),
			.service = a->p.lose_young ? service_s(j) : 0,
			.credit = AG_TEN(a, j->tenant)->credit,
			.gpus = a->p.small_victims ? pol_ag_job_gpus(j) : 0,
			.idx = i,
			.id = j->id,
		};
	}
	qsort(k, (size_t) n_lose, sizeof(*k), cmp_lkey);
	for (i = 0; i < n_lose; i++) {
		x->loser[i] = k[i].idx;
		x->lcost[i] = k[i].cost;
	}
	free(k);
	return n_lose;
}

/* Waiting winners that fit with the victims' GPUs hold a reservation;
 * the others go back to the leftover pass. */
static int hold_waiting(pol_agora_policy_t *a, const pol_snapshot_t *snap,
			const ag_auction_t *x, int n_wait, int64_t now,
			pol_actions_t *out)
{
	int i;

	for (i = 0; i < n_wait; i++) {
		int p = x->wait[i];

		if (!x->wfit[i]) {
			a->pflag[p] &= (unsigned char) ~PF_RESERVED;
			continue;
		}
		if (resv_add(a, snap->pending[p].id,
			     now + a->p.grace_s + a->p.lease_s) < 0 ||
		    pol_actions_add(out, POL_ACT_HOLD, snap->pending[p].id,
				    NULL, x->wkeep[i],
				    "auction won: waiting for GPUs") < 0)
			return -1;
	}
	return 0;
}

/* Losers a winner needs go to GRACE (or are requeued at once with no
 * grace); the others keep their GPUs on a new lease. */
static int settle_losers(pol_agora_policy_t *a, const pol_snapshot_t *snap,
			 const ag_auction_t *x, int n_lose, int64_t now,
			 pol_actions_t *out)
{
	int i;

	for (i = 0; i < n_lose; i++) {
		const pol_job_t *j = &snap->running[x->loser[i]];
		bool lose = x->lfit[i];

		if (pol_lease_settle(
			    a->leases, j->id, !lose, now,
			    pol_ag_lease_len(a, j, j->start, now,
					     pol_ag_full_lease(a, now)),
			    a->p.grace_s) < 0)
			return -1;
		if (!lose || a->p.grace_s > 0)
			continue;
		if (pol_actions_add(out, POL_ACT_PREEMPT, j->id, NULL, 0,
				    "lease lost (Themis auction)") < 0 ||
		    pol_lease_drop(a->leases, j->id) < 0)
			return -1;
		a->rflag[x->loser[i]] |= RF_LEAVING;
	}
	return 0;
}

/*
 * One pool's auction: incumbents (expired leases) and the free GPUs are
 * offered to the worst-off (1 - f) apps that want GPUs here; winners
 * keep or start, losers a winner needs are requeued.
 */
int pol_ag_auction_pool(pol_agora_policy_t *a, const pol_snapshot_t *snap,
			int64_t now, pol_pool_t pool, int cgpus,
			pol_actions_t *out)
{
	ag_auction_t x = { NULL };
	pol_auction_t res = { 0 };
	int i, n_app, n_sel, cap, n_lose, n_wait = 0;
	int rc = -1;

	if (mark_incumbents(a, snap, now, pool) < 0)
		return -1;
	cap = pol_freemap_free_gpus(a->w.fm, pool);
	for (i = 0; i < snap->n_running; i++)
		if (a->rflag[i] & RF_INCUMBENT)
			cap += pol_ag_job_gpus(&snap->running[i]);
	if (auction_alloc(&x, a, snap) < 0 ||
	    index_incumbents(&x, a, snap) < 0 ||
	    (n_app = interested_apps(a, snap, &x, pool, cgpus, now)) < 0)
		goto out;
	if (n_app == 0 || cap == 0) {
		/* nobody wants GPUs here (or none are offered): incumbents
		 * keep theirs */
		rc = keep_incumbents(a, snap, NULL, now,
				     pol_ag_full_lease(a, now), -1);
		goto out;
	}
	if ((n_sel = pol_ftf_worst(x.rho, n_app, a->p.f, x.sel)) < 0)
		goto out;
	x.bids = calloc((size_t) n_sel, sizeof(*x.bids));
	x.opts = calloc((size_t) n_sel * (size_t) (a->p.max_opts + 1),
			sizeof(*x.opts));
	if (!x.bids || !x.opts)
		goto out;
	/* the offer: free GPUs plus the incumbents' */
	if (pol_freemap_assign(a->offer, a->w.fm) < 0)
		goto out;
	for (i = 0; i < snap->n_running; i++)
		if ((a->rflag[i] & RF_INCUMBENT) &&
		    pol_freemap_give(a->offer, &snap->running[i].alloc) < 0)
			goto out;
	for (i = 0; i < n_sel; i++)
		if (build_bid(a, snap, &x, now, pool, x.apps[x.sel[i]], cgpus,
			      &x.bids[i],
			      &x.opts[(size_t) i * (a->p.max_opts + 1)]) < 0)
			goto out;
	if (pol_auction_run(x.bids, n_sel, cap, a->p.solver, &res) < 0)
		goto out;
	/* apply: winners in order of worst rho */
	for (i = 0; i < n_sel; i++)
		if (apply_winner(a, snap, &x, &res, i, now, pool, &n_wait,
				 out) < 0)
			goto out;
	/* losers: lowest credit first, only those whose GPUs winners use */
	if ((n_lose = order_losers(a, snap, &x, now)) < 0)
		goto out;
	if (pick_victims(a, snap, &x, n_wait, n_lose) < 0 ||
	    hold_waiting(a, snap, &x, n_wait, now, out) < 0 ||
	    settle_losers(a, snap, &x, n_lose, now, out) < 0)
		goto out;
	rc = 0;
out:
	pol_auction_free(&res);
	auction_free(&x);
	return rc;
}
