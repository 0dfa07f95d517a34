/*
 * pol_agora_est.c - the service estimate behind "agora"'s bids
 * (pol_estimate.h): each pass learns from the jobs that left the running
 * set since the last pass without coming back as pending (they completed,
 * or were killed at their limit), and answers, per job, the total run
 * time it is expected to need.
 *
 * The Slurm adapter does not learn from the running set (a requeued job
 * is not pending for Slurm's credential window, a completing one is not
 * running): it records each completed job's run time from Slurm's job
 * record (est_learn false, pol_agora_policy_estimates()).
 *
 * est=limit (the old behaviour) uses the time limit (default_limit
 * without one) and learns nothing.  est=hist: the recent-k mean of the
 * job's group (app, user, GPUs), with est_acct=1 else of its app's credit
 * account where shorter than the prior (2: always; an app that is a burst
 * or array of an account starts with the account's history; every sample
 * is kept as its account's too), capped by its limit, with the
 * attained-service fallback.
 * est=service: the fallback alone, capped by the limit (no history).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pol_agora_int.h"

/* A job seen running at the last pass. */
typedef struct ag_track {
	int64_t id;
	int app, user, gpus;
	int64_t att_s; /* seconds of service at its size, then */
	int64_t seen;  /* that pass */
} ag_track_t;

/* The history of one (app, user, GPUs) this pass. */
typedef struct ag_hist {
	int app, user, gpus; /* app -1: empty slot */
	double mean;
	int n;
} ag_hist_t;

struct ag_est {
	ag_track_t *cur, *prev;
	int n_cur, n_prev;
	size_t cur_cap, prev_cap;
	int64_t *gone;
	size_t gone_cap;
	ag_hist_t *h;
	int n_h; /* slots, a power of two */
	int used_h;
};

void pol_ag_est_mark_apps(const pol_agora_policy_t *a, unsigned char *keep)
{
	int i;

	for (i = 0; a->estx && i < a->estx->n_prev; i++)
		if (a->estx->prev[i].app >= 0 &&
		    a->estx->prev[i].app < a->n_app)
			keep[a->estx->prev[i].app] = 1;
}

void pol_ag_est_remap(pol_agora_policy_t *a, const int *map)
{
	int i;

	for (i = 0; a->estx && i < a->estx->n_prev; i++)
		if (a->estx->prev[i].app >= 0)
			a->estx->prev[i].app = map[a->estx->prev[i].app];
}

void pol_ag_est_free(ag_est_t **ep)
{
	ag_est_t *e = *ep;

	if (!e)
		return;
	free(e->cur);
	free(e->prev);
	free(e->gone);
	free(e->h);
	free(e);
	*ep = NULL;
}

int pol_ag_est_setup(pol_agora_policy_t *a)
{
	pol_est_params_t p;

	if (a->p.est_mode == AG_EST_LIMIT)
		return 0;
	pol_est_params_default(&p);
	p.k = a->p.est_k;
	p.prior_s = a->p.est_prior_s;
	if (!(a->est = pol_est_create(&p)))
		return -1;
	if (!(a->estx = calloc(1, sizeof(*a->estx))))
		return -1;
	return 0;
}

static int cmp_track(const void *x, const void *y)
{
	const ag_track_t *a = x, *b = y;

	return (a->id > b->id) - (a->id < b->id);
}

static int64_t att_s(const pol_job_t *j, int g)
{
	return j->attained > 0 && g > 0 ? j->attained / g : 0;
}

static int hslot(const ag_est_t *x, int app, int user, int gpus)
{
	uint64_t k = ((uint64_t) (unsigned) app * 1000003u) ^
		     ((uint64_t) (unsigned) user * 7919u) ^ (uint64_t) gpus;
	int m = x->n_h - 1, s;

	k *= 0x9E3779B97F4A7C15ULL;
	for (s = (int) (k >> 40) & m; x->h[s].app >= 0; s = (s + 1) & m)
		if (x->h[s].app == app && x->h[s].user == user &&
		    x->h[s].gpus == gpus)
			break;
	return s;
}

static int hist_reset(ag_est_t *x, int want)
{
	int n = 256, i;

	while (n < 2 * want)
		n *= 2;
	if (n != x->n_h) {
		ag_hist_t *h = malloc((size_t) n * sizeof(*h));

		if (!h)
			return -1;
		free(x->h);
		x->h = h;
		x->n_h = n;
	}
	for (i = 0; i < x->n_h; i++)
		x->h[i].app = -1;
	x->used_h = 0;
	return 0;
}

static int hist_add(pol_agora_policy_t *a, int app, int user, int gpus)
{
	ag_est_t *x = a->estx;
	int s = hslot(x, app, user, gpus);
	char ubuf[24];
	pol_est_key_t key;

	if (x->h[s].app >= 0)
		return 0;
	if (2 * (x->used_h + 1) > x->n_h)
		return -1; /* sized by hist_reset(): cannot happen */
	snprintf(ubuf, sizeof(ubuf), "%d", user);
	key = (pol_est_key_t){ a->app[app].name, ubuf, NULL, gpus,
			       a->p.est_acct ? a->app[app].account : NULL };
	x->h[s] = (ag_hist_t){ app, user, gpus, 0, 0 };
	/* est_acct=1: the account's only where shorter than the prior.  The
	 * account's jobs are another app's: a job priced too long starves (its
	 * rho grows as its wait over its estimate), one priced too short is
	 * taken at its attained service once it outruns the estimate. */
	if (pol_est_history(a->est, &key, &x->h[s].mean, &x->h[s].n) >= 3 &&
	    a->p.est_acct == 1 && x->h[s].mean >= (double) a->p.est_prior_s) {
		x->h[s].mean = 0;
		x->h[s].n = 0;
	}
	x->used_h++;
	return 0;
}

/* the running jobs of the last pass that are neither running nor pending
 * now ended: their run times go into the history */
static int learn(pol_agora_policy_t *a, const pol_snapshot_t *snap, int64_t now)
{
	ag_est_t *x = a->estx;
	ag_track_t *t;
	int i, k, n_gone = 0;

	if (agora_grow((void **) &x->cur, &x->cur_cap, snap->n_running,
		       sizeof(*x->cur)) < 0)
		return -1;
	for (i = 0; i < snap->n_running; i++) {
		const pol_job_t *j = &snap->running[i];
		int g = pol_ag_job_gpus(j);

		x->cur[i] = (ag_track_t){ j->id, a->tmap[j->tenant], j->user,
					  g,     att_s(j, g),        now };
	}
	x->n_cur = snap->n_running;
	if (x->n_cur > 1)
		qsort(x->cur, (size_t) x->n_cur, sizeof(*x->cur), cmp_track);
	/* prev \ cur (both sorted by id) */
	for (i = 0, k = 0; i < x->n_prev; i++) {
		while (k < x->n_cur && x->cur[k].id < x->prev[i].id)
			k++;
		if (k < x->n_cur && x->cur[k].id == x->prev[i].id)
			continue;
		if (agora_grow((void **) &x->gone, &x->gone_cap, n_gone + 1,
			       sizeof(*x->gone)) < 0)
			return -1;
		x->gone[n_gone++] = i;
	}
	/* a requeued job is pending again: not an end */
	if (n_gone) {
		for (i = 0; i < snap->n_pending; i++)
			for (k = 0; k < n_gone; k++)
				if (x->gone[k] >= 0 &&
				    x->prev[x->gone[k]].id ==
					    snap->pending[i].id)
					x->gone[k] = -1;
	}
	for (k = 0; k < n_gone; k++) {
		char ubuf[24];
		pol_est_key_t key;
		int64_t run;

		if (x->gone[k] < 0)
			continue;
		t = &x->prev[x->gone[k]];
		run = t->att_s + (now > t->seen ? now - t->seen : 0);
		snprintf(ubuf, sizeof(ubuf), "%d", t->user);
		key = (pol_est_key_t){ a->app[t->app].name, ubuf, NULL, t->gpus,
				       a->app[t->app].account };
		if (pol_est_record(a->est, &key, run, now) < 0)
			return -1;
	}
	/* cur becomes prev */
	t = x->prev;
	x->prev = x->cur;
	x->cur = t;
	{
		size_t c = x->prev_cap;

		x->prev_cap = x->cur_cap;
		x->cur_cap = c;
	}
	x->n_prev = x->n_cur;
	x->n_cur = 0;
	return 0;
}

int pol_ag_est_update(pol_agora_policy_t *a, const pol_snapshot_t *snap,
		      int64_t now)
{
	int i;

	if (!a->est)
		return 0;
	if (a->p.est_mode == AG_EST_HIST && a->p.est_learn &&
	    learn(a, snap, now) < 0)
		return -1;
	if (hist_reset(a->estx, snap->n_running + snap->n_pending) < 0)
		return -1;
	if (a->p.est_mode != AG_EST_HIST || !pol_est_groups(a->est))
		return 0;
	for (i = 0; i < snap->n_running; i++) {
		const pol_job_t *j = &snap->running[i];

		if (hist_add(a, a->tmap[j->tenant], j->user,
			     pol_ag_job_gpus(j)) < 0)
			return -1;
	}
	for (i = 0; i < snap->n_pending; i++) {
		const pol_job_t *j = &snap->pending[i];

		if (hist_add(a, a->tmap[j->tenant], j->user, j->total_gpus) < 0)
			return -1;
	}
	return 0;
}

int64_t pol_ag_job_work(const pol_agora_policy_t *a, const pol_job_t *j,
			int gpus)
{
	if (!a->est)
		return pol_ag_job_limit(a, j);
	return att_s(j, gpus) + pol_ag_job_rest(a, j, gpus);
}

int64_t pol_ag_job_rest(const pol_agora_policy_t *a, const pol_job_t *j,
			int gpus)
{
	const ag_est_t *x = a->estx;
	double mean = 0;
	int n = 0;
	int64_t done;

	if (!a->est) {
		done = pol_ag_job_limit(a, j) - att_s(j, gpus);
		return done > 1 ? done : 1;
	}
	if (a->p.est_mode == AG_EST_HIST && x->used_h) {
		int s = hslot(x, a->tmap[j->tenant], j->user, gpus);

		if (x->h[s].app >= 0) {
			mean = x->h[s].mean;
			n = x->h[s].n;
		}
	}
	done = att_s(j, gpus);
	return pol_est_remaining_from(pol_est_params(a->est), mean, n,
				      j->time_limit, done, NULL);
}

pol_est_t *pol_agora_policy_estimates(pol_agora_policy_t *a)
{
	return a ? a->est : NULL;
}
