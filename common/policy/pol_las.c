/*
 * pol_las.c - "las": Tiresias' discretized two-dimensional least attained
 * service (Gu et al., NSDI'19, section 4.1).
 *
 * A job's attained service is GPUs x seconds it has run (pol_job_t
 * .attained, the "2D" of 2D-LAS).  Thresholds split jobs into queues:
 * queue 0 holds jobs below the first threshold, and so on.  Queues are
 * served in order, jobs within a queue in submit order (FIFO inside a
 * queue, as Tiresias does to avoid the thrashing of continuous LAS).  A
 * job that does not fit is skipped, and running jobs of a later queue are
 * preempted for earlier ones (pol_preempt_pass()).  The policy asks to be
 * woken when a running job crosses its queue's threshold
 * (pol_actions_t.wakeup).
 * The thresholds, queues and wakeups are pol_las2d.c's, shared with
 * tiresias; the order within a queue is this file's.
 *
 * Parameters:
 *   thresholds=3600   GPU-seconds, ':'-separated, increasing (at most 8);
 *                     the default is two queues split at one GPU-hour.
 *                     Queue count and thresholds are parameters in
 *                     Tiresias too; these values are our choice.
 *   budget=2          preemptions of a job without progress
 *                     (pol_job_may_preempt(), since_save); 0 = no budget.
 * Tiresias' starvation guard (promote a job that waited longer than
 * STARVE_LIMIT x its last run) is left out on purpose: pol_job_t does not
 * carry when a job was last preempted, and the baseline is meant as plain
 * 2D-LAS (doc/sim.md lists the difference).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agora_mem.h"
#include "pol_las2d.h"
#include "pol_policy_int.h"

typedef struct las_state {
	const pol_placer_t *placer;
	pol_preempt_t pp;
	pol_las2d_t lq;
	int *run_idx;
	size_t run_cap;
	/* iterator */
	const pol_snapshot_t *snap;
	int q, pi, ri;
} las_state_t;

static void *las_create(const char *params, const pol_placer_t *placer,
			agora_err_t *err)
{
	static const char *const keys[] = { "thresholds", "budget", NULL };
	double v[2] = { 3600, POL_PREEMPT_BUDGET_DEFAULT };
	las_state_t *s;

	if (pol_params_parse("las", params, keys, v, err) ||
	    pol_budget_check("las", v[1], err))
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->placer = placer;
	s->pp.budget = (int) v[1];
	if (pol_las2d_init(&s->lq, "las", params, v[0], err)) {
		free(s);
		return NULL;
	}
	return s;
}

static int las_queue(const las_state_t *s, const pol_job_t *j)
{
	return pol_las2d_queue(&s->lq, (double) j->attained);
}

static int by_submit(const pol_job_t *a, const pol_job_t *b)
{
	if (a->submit != b->submit)
		return a->submit < b->submit ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

static const pol_job_t *las_next(void *it, bool *running)
{
	las_state_t *s = it;
	const pol_snapshot_t *snap = s->snap;

	while (s->q <= s->lq.n_thr) {
		const pol_job_t *p = NULL, *r = NULL;

		while (s->pi < snap->n_pending &&
		       las_queue(s, &snap->pending[s->pi]) != s->q)
			s->pi++;
		while (s->ri < snap->n_running &&
		       las_queue(s, &snap->running[s->run_idx[s->ri]]) != s->q)
			s->ri++;
		if (s->pi < snap->n_pending)
			p = &snap->pending[s->pi];
		if (s->ri < snap->n_running)
			r = &snap->running[s->run_idx[s->ri]];
		if (p && (!r || by_submit(p, r) < 0)) {
			s->pi++;
			*running = false;
			return p;
		}
		if (r) {
			s->ri++;
			*running = true;
			return r;
		}
		s->q++;
		s->pi = s->ri = 0;
	}
	return NULL;
}

static void las_on_run(void *arg, const pol_job_t *j, int gpus)
{
	las_state_t *s = arg;

	pol_las2d_on_run(&s->lq, (double) j->attained, gpus);
}

static int cmp_run(const void *x, const void *y, void *arg)
{
	const pol_job_t *v = arg;

	return by_submit(&v[*(const int *) x], &v[*(const int *) y]);
}

static int las_decide(void *state, const pol_snapshot_t *snap, int64_t now,
		      pol_actions_t *out)
{
	las_state_t *s = state;
	int i;

	if (agora_grow((void **) &s->run_idx, &s->run_cap,
		       (size_t) snap->n_running, sizeof(*s->run_idx)))
		return -1;
	for (i = 0; i < snap->n_running; i++)
		s->run_idx[i] = i;
	if (snap->n_running > 1)
		qsort_r(s->run_idx, (size_t) snap->n_running, sizeof(int),
			cmp_run, snap->running);
	s->snap = snap;
	s->q = s->pi = s->ri = 0;
	pol_las2d_begin(&s->lq, now);
	if (pol_preempt_pass(&s->pp, s->placer, snap, las_next, s, las_on_run,
			     s, out))
		return -1;
	pol_las2d_end(&s->lq, out);
	return 0;
}

static void las_destroy(void *state)
{
	las_state_t *s = state;

	if (!s)
		return;
	pol_preempt_free(&s->pp);
	free(s->run_idx);
	free(s);
}

const pol_policy_ops_t pol_las_ops = {
	.name = "las",
	.create = las_create,
	.decide = las_decide,
	.destroy = las_destroy,
};
