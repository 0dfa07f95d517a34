/*
 * pol_agora_prep.c - the first step of a pass of both "agora" policies,
 * below the entry (pol_agora.c) and above the base (pol_agora_base.c):
 * charge the running jobs to their accounts, read the credits, the app
 * aggregates (with the service estimates, pol_agora_est.c), the time-
 * averaged contention and the credit order of the pending jobs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pol_agora_int.h"

static void add_work(pol_agora_policy_t *a, ag_tenant_t *t, const pol_job_t *j,
		     int g)
{
	if (t->app.work == 0 || j->submit < t->app.arrival)
		t->app.arrival = j->submit;
	t->app.work += (double) pol_ag_job_work(a, j, g) * g;
	t->app.done += j->attained > 0 ? (double) j->attained : 0;
	t->app.demand += g;
}

/*
 * Charge, credits, contention, app aggregates and the credit order of the
 * pending jobs (a->keys[0..n_pending), index = pending index).
 */
int pol_ag_prepare(pol_agora_policy_t *a, const pol_snapshot_t *snap,
		   int64_t now)
{
	int i, n_ten = 0, active = 0;

	/* every job's tenant is in 0..snap->n_tenants-1 (pol_ag_filter_jobs()):
	 * map those up to the highest one in use */
	for (i = 0; i < snap->n_pending; i++)
		if (snap->pending[i].tenant >= n_ten)
			n_ten = snap->pending[i].tenant + 1;
	for (i = 0; i < snap->n_running; i++)
		if (snap->running[i].tenant >= n_ten)
			n_ten = snap->running[i].tenant + 1;
	if (pol_ag_prune_apps(a) < 0 || pol_ag_map_tenants(a, n_ten) < 0 ||
	    pol_ag_est_update(a, snap, now) < 0)
		return -1;
	/* usage recorded in the future (the clock stepped back, a peer's
	 * clock runs ahead) would not decay until then: read it as now */
	if (pol_credit_clamp_future(a->ledger, now) < 0)
		return -1;
	/* 1. charge GPU-seconds since the last pass (none for the time
	 * before the first pass: after a restart we under-charge the gap
	 * rather than charge twice what the saved ledger already holds) */
	for (i = 0; i < snap->n_running; i++) {
		const pol_job_t *j = &snap->running[i];
		int64_t from;

		from = a->charged ? (j->start > a->last_charge ? j->start
							       : a->last_charge)
				  : now;
		if (now > from &&
		    pol_credit_charge(a->ledger, AG_TEN(a, j->tenant)->account,
				      (double) pol_ag_job_gpus(j) *
					      (double) (now - from),
				      now, NULL) < 0)
			return -1;
	}
	a->charged = true;
	a->last_charge = now;
	/* 2. per-app aggregates (every app: one without jobs now has none) */
	for (i = 0; i < a->n_app; i++) {
		ag_tenant_t *t = &a->app[i];

		memset(&t->app, 0, sizeof(t->app));
		t->held = 0;
		t->n = 0;
		t->rho_sum = 0;
		t->n_jobs = 0;
		t->credit = pol_credit_get(
			a->ledger, t->account[0] ? t->account : t->name, now);
	}
	for (i = 0; i < snap->n_running; i++) {
		const pol_job_t *j = &snap->running[i];
		ag_tenant_t *t = AG_TEN(a, j->tenant);
		int g = pol_ag_job_gpus(j);

		add_work(a, t, j, g);
		t->held += g;
	}
	for (i = 0; i < snap->n_pending; i++) {
		const pol_job_t *j = &snap->pending[i];
		ag_tenant_t *t = AG_TEN(a, j->tenant);

		add_work(a, t, j, j->total_gpus);
		t->n++;
	}
	/* 3. contention: apps with jobs */
	for (i = 0; i < a->n_app; i++)
		if (a->app[i].app.demand > 0)
			active++;
	pol_ftf_contention_update(&a->cont, now, active);
	for (i = 0; i < a->n_app; i++) {
		ag_tenant_t *t = &a->app[i];
		bool now_active = t->app.demand > 0;

		if (now_active && !t->active) {
			t->seen = now;
			t->area0 = pol_ftf_contention_area(&a->cont, now);
		}
		t->active = now_active;
		if (now_active) {
			if (t->app.work <= t->app.done)
				t->app.work = t->app.done + 1;
			t->app.n_avg = pol_ftf_contention_avg(
				&a->cont, now, t->seen, t->area0);
		}
	}
	/* 4. the credit order */
	if (agora_grow((void **) &a->keys, &a->keys_cap, snap->n_pending,
		       sizeof(*a->keys)) < 0 ||
	    agora_grow((void **) &a->keys_tmp, &a->keys_tmp_cap,
		       snap->n_pending, sizeof(*a->keys_tmp)) < 0)
		return -1;
	for (i = 0; i < snap->n_pending; i++) {
		const pol_job_t *j = &snap->pending[i];

		a->keys[i] = (pol_credit_key_t){
			.band = j->band,
			.credit = AG_TEN(a, j->tenant)->credit,
			/* jobs of one app share its credit: est_order puts
			 * its shortest expected job first */
			.submit = a->est && a->p.est_order
					  ? pol_ag_job_rest(a, j, j->total_gpus)
					  : j->submit,
			.id = j->id,
			.index = i,
		};
	}
	if (snap->n_pending > 1)
		pol_credit_key_sort(a->keys, (size_t) snap->n_pending,
				    a->keys_tmp);
	return 0;
}
