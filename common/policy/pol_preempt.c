/*
 * pol_preempt.c - the preemptive greedy pass of las and srtf (contract in
 * pol_policy.h).  Cost: O(jobs consumed from the iterator + running);
 * the iterator is lazy, so a pass over 100k pending jobs stops once the
 * capacity is spoken for and no GPU is left free.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agora_mem.h"
#include "pol_ckpt.h"
#include "pol_policy_int.h"

enum { F_NONE = 0, F_WANT, F_STARTED, F_KEPT };

static int grow(pol_preempt_t *pp, int n)
{
	if (agora_grow((void **) &pp->cand, &pp->cand_cap, (size_t) n,
		       sizeof(*pp->cand)) ||
	    agora_grow((void **) &pp->flag, &pp->flag_cap, (size_t) n,
		       sizeof(*pp->flag)))
		return -1;
	return 0;
}

static int job_gpus(const pol_job_t *j, bool running)
{
	if (running)
		return pol_alloc_gpus(&j->alloc);
	return j->nodes > 0 ? j->nodes * j->gpus_per_node : j->total_gpus;
}

/* index into flag[]: running first, then pending */
static int slot(const pol_snapshot_t *snap, const pol_job_t *j, bool running)
{
	return running ? (int) (j - snap->running)
		       : snap->n_running + (int) (j - snap->pending);
}

static int try_start(pol_preempt_t *pp, const pol_placer_t *pl,
		     const pol_job_t *j)
{
	pol_alloc_t a;

	if (pl->place(pl->arg, pp->w.fm, j, &a))
		return errno == ENOSPC ? 1 : -1;
	if (pol_freemap_take(pp->w.fm, &a) ||
	    pol_actions_add(&pp->starts, POL_ACT_START, j->id, &a, 0, NULL)) {
		pol_alloc_free(&a);
		return -1;
	}
	pol_alloc_free(&a);
	return 0;
}

int pol_preempt_pass(pol_preempt_t *pp, const pol_placer_t *pl,
		     const pol_snapshot_t *snap, pol_iter_f next, void *it,
		     pol_on_run_f on_run, void *arg, pol_actions_t *out)
{
	int budget[2], n = 0, i, total = snap->n_running + snap->n_pending;
	const pol_job_t *j;
	bool running;
	int rc;
	/* the budget of the baselines: preemptions since the last save */
	const pol_preempt_rule_t rule = {
		.budget = pp->budget,
		.since_save = true,
		.dflt = POL_CKPT_UNKNOWN,
		.min_run = -1,
	};

	if (pol_work_sync(&pp->w, snap->cluster, 0) || grow(pp, total + 1))
		return -1;
	pol_actions_clear(&pp->starts);
	memset(pp->flag, F_NONE, (size_t) total);
	budget[0] = pol_freemap_capacity(pp->w.fm, POL_POOL_TRAINING);
	budget[1] = pol_freemap_capacity(pp->w.fm, POL_POOL_INFERENCE);
	for (i = 0; i < snap->n_running; i++) {
		const pol_job_t *r = &snap->running[i];

		if (!pol_job_may_preempt(r, &rule, 0)) {
			if (r->requeueable)
				pp->protected_runs++;
			pp->flag[i] = F_WANT;
			budget[r->pool & 1] -= pol_alloc_gpus(&r->alloc);
		}
	}
	/* A. the wanted set */
	while ((budget[0] > 0 || budget[1] > 0) && (j = next(it, &running))) {
		int s = slot(snap, j, running), k = job_gpus(j, running);

		pp->cand[n++] = j;
		if (pp->flag[s] == F_WANT)
			continue; /* not preemptible, counted */
		if (k <= budget[j->pool & 1]) {
			pp->flag[s] = F_WANT;
			budget[j->pool & 1] -= k;
		}
	}
	/* B. victims' GPUs become free */
	for (i = 0; i < snap->n_running; i++)
		if (pp->flag[i] != F_WANT &&
		    pol_freemap_give(pp->w.fm, &snap->running[i].alloc))
			return -1;
	/* C. wanted pending jobs, in order */
	for (i = 0; i < n; i++) {
		j = pp->cand[i];
		if (j >= snap->running && j < snap->running + snap->n_running)
			continue;
		if (pp->flag[slot(snap, j, false)] != F_WANT)
			continue;
		rc = try_start(pp, pl, j);
		if (rc < 0)
			return -1;
		if (rc == 0)
			pp->flag[slot(snap, j, false)] = F_STARTED;
	}
	/* D. victims whose GPUs are still free keep running */
	for (i = 0; i < snap->n_running; i++) {
		const pol_job_t *r = &snap->running[i];

		if (pp->flag[i] == F_WANT)
			continue;
		if (pol_freemap_fits(pp->w.fm, &r->alloc)) {
			if (pol_freemap_take(pp->w.fm, &r->alloc))
				return -1;
			pp->flag[i] = F_KEPT;
		} else if (pol_actions_add(out, POL_ACT_PREEMPT, r->id, NULL, 0,
					   "preempted")) {
			return -1;
		}
	}
	/* E. work conserving fill with the rest, in order */
	for (i = 0;; i++) {
		if (pol_freemap_free_gpus(pp->w.fm, POL_POOL_TRAINING) == 0 &&
		    pol_freemap_free_gpus(pp->w.fm, POL_POOL_INFERENCE) == 0)
			break;
		if (i < n) {
			j = pp->cand[i];
			running = j >= snap->running &&
				  j < snap->running + snap->n_running;
		} else if (!(j = next(it, &running))) {
			break;
		}
		if (running || pp->flag[slot(snap, j, false)] != F_NONE)
			continue;
		rc = try_start(pp, pl, j);
		if (rc < 0)
			return -1;
		if (rc == 0)
			pp->flag[slot(snap, j, false)] = F_STARTED;
	}
	for (i = 0; i < pp->starts.n; i++) {
		const pol_action_t *a = &pp->starts.v[i];

		if (pol_actions_add(out, POL_ACT_START, a->job_id, &a->alloc, 0,
				    NULL))
			return -1;
	}
	if (on_run) {
		for (i = 0; i < snap->n_running; i++)
			if (pp->flag[i] == F_WANT || pp->flag[i] == F_KEPT)
				on_run(arg, &snap->running[i],
				       pol_alloc_gpus(&snap->running[i].alloc));
		for (i = 0; i < snap->n_pending; i++)
			if (pp->flag[snap->n_running + i] == F_STARTED)
				on_run(arg, &snap->pending[i],
				       job_gpus(&snap->pending[i], false));
	}
	return 0;
}

int pol_budget_check(const char *policy, double v, agora_err_t *err)
{
	if (v >= 0 && v <= 1000 && v == floor(v))
		return 0;
	agora_err_set(
		err, "policy %s: budget: %g is not a whole number in [0, 1000]",
		policy, v);
	errno = EINVAL;
	return -1;
}

void pol_preempt_free(pol_preempt_t *pp)
{
	if (!pp)
		return;
	pol_work_free(&pp->w);
	free(pp->cand);
	free(pp->flag);
	pol_actions_free(&pp->starts);
	memset(pp, 0, sizeof(*pp));
}
