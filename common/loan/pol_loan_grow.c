/*
 * pol_loan_grow.c - the grow decision of a loan round (pol_loan_grow.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "pol_loan.h"
#include "pol_loan_grow.h"
#include "pol_loan_requeue.h"

pol_grow_gate_t pol_grow_gate(const pol_grow_in_t *in, int *blocking)
{
	if (blocking)
		*blocking = -1;
	if (in->quiet)
		return POL_GROW_QUIET;
	if (in->waiting > 0)
		return POL_GROW_WAITING;
	for (int i = 0; i < in->n_jobs; i++) {
		const pol_grow_job_t *j = &in->jobs[i];

		if (j->pending && j->train && !j->held &&
		    j->waits_for_nodes_reason) {
			if (blocking)
				*blocking = i;
			return POL_GROW_QUEUE;
		}
	}
	return POL_GROW_GO;
}

bool pol_grow_candidate(const pol_grow_job_t *j, int max_requeues)
{
	return j->running && j->train && j->elastic && j->mark_free &&
	       j->num_nodes >= 1 && j->max_nodes > j->num_nodes &&
	       pol_requeue_grow_allowed(j->requeue, j->restarts, max_requeues);
}

/* Work since the last checkpoint of a job that has run ran_s. */
static double since_ckpt(int64_t ckpt_s, double ran_s)
{
	if (ckpt_s > 0)
		return ran_s -
		       (double) ckpt_s * (double) (int64_t) (ran_s / ckpt_s);
	return ran_s;
}

int pol_grow_choose(const pol_grow_in_t *in, pol_grow_out_t *out)
{
	pol_loan_grow_job_t *gj = NULL;
	int *at = NULL, *extra = NULL, n = 0, rc = -1;

	if (!in || !out || !out->jobs || in->n_jobs < 0 ||
	    (in->n_jobs && !in->jobs)) {
		errno = EINVAL;
		return -1;
	}
	out->n_candidates = out->n_grown = 0;
	out->gain = out->bound = 0;
	out->exact = true;
	for (int i = 0; i < in->n_jobs; i++)
		out->jobs[i] = (pol_grow_job_out_t){ 0 };
	gj = calloc((size_t) in->n_jobs + 1, sizeof(*gj));
	at = calloc((size_t) in->n_jobs + 1, sizeof(*at));
	extra = calloc((size_t) in->n_jobs + 1, sizeof(*extra));
	if (!gj || !at || !extra) {
		errno = ENOMEM;
		goto out;
	}
	for (int i = 0; i < in->n_jobs; i++) {
		const pol_grow_job_t *j = &in->jobs[i];
		pol_grow_job_out_t *o = &out->jobs[i];
		double ran;

		if (!pol_grow_candidate(j, in->max_requeues))
			continue;
		ran = (double) (in->now - j->start);
		if (ran < 0)
			ran = 0;
		o->candidate = true;
		o->left_s = pol_loan_left_attained(ran, (double) j->limit_s);
		o->resize_s = since_ckpt(in->ckpt_s, ran) +
			      (double) in->restart_s +
			      (double) in->cred_wait_s +
			      (double) in->min_gain_s;
		gj[n] = (pol_loan_grow_job_t){
			.cur = j->num_nodes,
			.max = j->max_nodes,
			.left_s = o->left_s,
			.resize_s = o->resize_s,
			.gpn = j->gpus_per_node > 0 ? j->gpus_per_node : 1,
		};
		at[n++] = i;
	}
	out->n_candidates = n;
	if (!n || in->idle_nodes <= 0) {
		rc = 0;
		goto out;
	}
	if (pol_loan_grow(gj, n, in->idle_nodes, in->serial, extra, &out->gain,
			  &out->exact, &out->bound))
		goto out;
	for (int k = 0; k < n; k++) {
		pol_grow_job_out_t *o = &out->jobs[at[k]];

		if (!extra[k])
			continue;
		o->extra = extra[k];
		/* the reduction, without LoanGrowMinGain (in resize_s) */
		o->gain_s = pol_loan_grow_gain(&gj[k], extra[k], in->serial) +
			    (double) in->min_gain_s;
		out->n_grown++;
	}
	rc = 0;
out:
	free(gj);
	free(at);
	free(extra);
	return rc;
}

int64_t pol_grow_give_up_s(int64_t cred_wait_s, int64_t interval_s)
{
	return cred_wait_s + 5 * interval_s + 60;
}
