/*
 * pol_loan_wait.c - a reclaim that may wait for its victims' checkpoints:
 * the wait and the victims chosen together (pol_loan.h, doc/loaning.md
 * "Waiting for a checkpoint").
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pol_loan.h"

static void take(pol_loan_reclaim_out_t *out, const pol_loan_reclaim_out_t *t,
		 int n_loaned, int n_jobs)
{
	if (n_loaned)
		memcpy(out->node_back, t->node_back, (size_t) n_loaned);
	if (n_jobs) {
		memcpy(out->action, t->action, sizeof(int) * (size_t) n_jobs);
		memcpy(out->shrink_by, t->shrink_by,
		       sizeof(int) * (size_t) n_jobs);
	}
	out->returned = t->returned;
	out->short_by = t->short_by;
	out->preempted = t->preempted;
	out->shrunk = t->shrunk;
	out->exact = t->exact;
	out->bound_factor = t->bound_factor;
}

int pol_loan_reclaim_wait(const pol_loan_reclaim_in_t *in,
			  const pol_loan_wait_in_t *w,
			  pol_loan_reclaim_out_t *out, int64_t *wait_s)
{
	pol_loan_reclaim_in_t at;
	pol_loan_reclaim_out_t t;
	pol_loan_job_t *jobs = NULL;
	int n, j, best_n = 0, rc = -1;
	double best_lost = 0;
	int64_t d, best_w = -1;

	if (!in || !w || !out || !wait_s || w->step_s <= 0 ||
	    w->max_wait_s < 0 || in->n_jobs < 0 ||
	    (in->n_jobs && (!w->gpus || !w->run_s))) {
		errno = EINVAL;
		return -1;
	}
	n = in->n_jobs;
	memset(&t, 0, sizeof(t));
	jobs = calloc((size_t) n + 1, sizeof(*jobs));
	t.node_back = calloc((size_t) in->n_loaned + 1, 1);
	t.action = calloc((size_t) n + 1, sizeof(int));
	t.shrink_by = calloc((size_t) n + 1, sizeof(int));
	if (!jobs || !t.node_back || !t.action || !t.shrink_by) {
		errno = ENOMEM;
		goto out;
	}
	at = *in;
	at.jobs = jobs;
	for (d = 0; d <= w->max_wait_s; d += w->step_s) {
		double lost = 0;

		for (j = 0; j < n; j++) {
			double c = pol_loan_preempt_cost(
				w->gpus[j], w->run_s[j] + d, w->ckpt_s,
				w->restart_s);

			jobs[j] = in->jobs[j];
			jobs[j].cost = w->unit_cost ? 1 + 1e-4 * c : c;
		}
		if (pol_loan_reclaim(&at, &t))
			goto out;
		for (j = 0; j < n; j++)
			if (t.action[j] == POL_LOAN_PREEMPT)
				lost += pol_loan_preempt_cost(
					w->gpus[j], w->run_s[j] + d, w->ckpt_s,
					w->restart_s);
		if (best_w < 0 || t.preempted < best_n ||
		    (t.preempted == best_n && lost < best_lost - 1e-12)) {
			best_w = d;
			best_n = t.preempted;
			best_lost = lost;
			take(out, &t, in->n_loaned, n);
			out->cost = lost;
		}
	}
	*wait_s = best_w;
	rc = 0;
out:
	free(jobs);
	free(t.node_back);
	free(t.action);
	free(t.shrink_by);
	return rc;
}
