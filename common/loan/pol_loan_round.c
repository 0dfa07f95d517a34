/*
 * pol_loan_round.c - the decision of one loan round (pol_loan_round.h).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pol_loan_round.h"

pol_loan_node_state_t pol_loan_round_classify(const pol_loan_round_node_t *n)
{
	if (n->in_train)
		return n->commented ? POL_LOAN_NODE_LENT : POL_LOAN_NODE_ALONE;
	return n->n_borrowers || n->commented ? POL_LOAN_NODE_RETURNING
					      : POL_LOAN_NODE_HOME;
}

static int want_nodes(double d, int headroom, int n_up)
{
	double w = ceil(d - 1e-9) + headroom;

	return w > n_up ? n_up : (int) w;
}

static int check_in(const pol_loan_round_in_t *in,
		    const pol_loan_round_out_t *out)
{
	if (!in || !out || in->n_nodes < 0 || in->n_jobs < 0 ||
	    (in->n_nodes && (!in->nodes || !out->nodes)) ||
	    (in->n_jobs && (!in->jobs || !out->jobs)))
		return -1;
	for (int j = 0; j < in->n_jobs; j++) {
		const pol_loan_round_job_t *jb = &in->jobs[j];

		if (jb->n_nodes < 0 || (jb->n_nodes && !jb->nodes) ||
		    jb->batch >= in->n_nodes)
			return -1;
		for (int k = 0; k < jb->n_nodes; k++)
			if (jb->nodes[k] < 0 || jb->nodes[k] >= in->n_nodes)
				return -1;
	}
	return 0;
}

/* Returning nodes: finish (victims) as many as inference needs, lend the
 * others again unless a reclaim ahead keeps them (up to keep >= want home:
 * they stay returning, home once their borrowers leave); ones without
 * borrowers go home.  Returns the home count after it. */
static int settle_returning(const pol_loan_round_in_t *in,
			    pol_loan_round_out_t *out, int home, int want,
			    int keep)
{
	for (int i = 0; i < in->n_nodes; i++) {
		const pol_loan_round_node_t *n = &in->nodes[i];
		pol_loan_round_node_out_t *o = &out->nodes[i];

		if (o->state != POL_LOAN_NODE_RETURNING)
			continue;
		if (!n->n_borrowers) {
			o->clear_mark = true;
			o->state = POL_LOAN_NODE_HOME;
			o->since = 0;
			home += n->up;
		} else if (n->up && !n->pinned && home < want) {
			o->victim = true;
			home++; /* home once its jobs are requeued */
		} else if (!n->pinned && home >= keep) {
			o->lend = true;
			o->state = POL_LOAN_NODE_LENT;
			o->relent = true;
		} else if (n->up && !n->pinned)
			home++; /* kept for the rise: home once they leave */
	}
	return home;
}

/* The reclaim's input for the lent nodes: idx[k] = node of candidate k;
 * jobs with their nodes renumbered, the batch host last (the core shrinks
 * off a job's nodes in order, and Slurm cannot take a batch host away).
 * Returns the count of jobs. */
static int reclaim_input(const pol_loan_round_in_t *in, const int *pos,
			 pol_loan_job_t *pj, int *pnodes, int *job_of)
{
	int n = 0, used = 0;

	for (int j = 0; j < in->n_jobs; j++) {
		const pol_loan_round_job_t *lj = &in->jobs[j];
		pol_loan_job_t *p = &pj[n];

		memset(p, 0, sizeof(*p));
		p->nodes = pnodes + used;
		for (int k = 0; k < lj->n_nodes; k++)
			if (pos[lj->nodes[k]] >= 0 && lj->nodes[k] != lj->batch)
				pnodes[used + p->n_nodes++] = pos[lj->nodes[k]];
		p->shrinkable = lj->elastic && lj->min_nodes > 0
					? lj->total_nodes - lj->min_nodes
					: 0;
		if (p->shrinkable > p->n_nodes)
			p->shrinkable = p->n_nodes;
		if (lj->batch >= 0 && pos[lj->batch] >= 0)
			pnodes[used + p->n_nodes++] = pos[lj->batch];
		if (!p->n_nodes)
			continue;
		used += p->n_nodes;
		p->id = lj->id;
		p->start = lj->start;
		p->requeue = lj->requeue;
		p->cost = pol_loan_preempt_cost(lj->gpus, in->now - lj->start,
						in->ckpt_s, in->restart_s);
		job_of[n++] = j;
	}
	return n;
}

/* The cost of another order on the same input (for the log); -1 when it
 * fails. */
static double alt_cost(pol_loan_reclaim_in_t r, pol_loan_order_t order,
		       unsigned char *back, int *action, int *shrink)
{
	pol_loan_reclaim_out_t o = { .node_back = back,
				     .action = action,
				     .shrink_by = shrink };

	r.order = order;
	/* Slurm's preemption does not know that a job could shrink */
	r.shrink_first = order != POL_LOAN_SLURM;
	return pol_loan_reclaim(&r, &o) ? -1 : o.cost;
}

/* The least-cost choice, with the wait for checkpoints when max_wait >= 0
 * (pol_loan_reclaim_wait): *wait > 0 when waiting loses less. */
static int choose(const pol_loan_round_in_t *in,
		  const pol_loan_reclaim_in_t *ri, const int *job_of,
		  int64_t max_wait, pol_loan_reclaim_out_t *ro, int64_t *wait)
{
	pol_loan_wait_in_t wi;
	int *gpus, rc = -1;
	int64_t *run;

	*wait = 0;
	if (max_wait < 0)
		return pol_loan_reclaim(ri, ro);
	gpus = calloc((size_t) ri->n_jobs + 1, sizeof(*gpus));
	run = calloc((size_t) ri->n_jobs + 1, sizeof(*run));
	if (gpus && run) {
		for (int j = 0; j < ri->n_jobs; j++) {
			gpus[j] = in->jobs[job_of[j]].gpus;
			run[j] = in->now - in->jobs[job_of[j]].start;
		}
		wi = (pol_loan_wait_in_t){ .gpus = gpus,
					   .run_s = run,
					   .ckpt_s = in->ckpt_s,
					   .restart_s = in->restart_s,
					   .step_s = in->step_s,
					   .max_wait_s = max_wait };
		rc = pol_loan_reclaim_wait(ri, &wi, ro, wait);
	} else
		errno = ENOMEM;
	free(gpus);
	free(run);
	return rc;
}

/* Take `need` lent nodes back by the least-cost choice, waiting up to
 * max_wait for checkpoints (< 0: not).  Returns the nodes given back (0
 * while it waits), or -1 (ENOMEM, or the choice failed). */
static int reclaim_lent(const pol_loan_round_in_t *in,
			pol_loan_round_out_t *out, int need, int64_t max_wait)
{
	int64_t wait = 0;
	int n = in->n_nodes, nj = in->n_jobs, slots = 1, n_lent = 0, n_pj;
	int *idx, *pos, *pnodes, *job_of, *action, *shrink, rc = -1;
	unsigned char *back;
	pol_loan_job_t *pj;
	pol_loan_reclaim_out_t ro = { 0 };
	pol_loan_reclaim_in_t ri;

	for (int j = 0; j < nj; j++)
		slots += in->jobs[j].n_nodes;
	idx = calloc((size_t) n + 1, sizeof(*idx));
	pos = calloc((size_t) n + 1, sizeof(*pos));
	back = calloc((size_t) n + 1, sizeof(*back));
	pnodes = calloc((size_t) slots, sizeof(*pnodes));
	job_of = calloc((size_t) nj + 1, sizeof(*job_of));
	action = calloc((size_t) nj + 1, sizeof(*action));
	shrink = calloc((size_t) nj + 1, sizeof(*shrink));
	pj = calloc((size_t) nj + 1, sizeof(*pj));
	if (!idx || !pos || !back || !pnodes || !job_of || !action || !shrink ||
	    !pj) {
		errno = ENOMEM;
		goto out;
	}
	for (int i = 0; i < n; i++) {
		pos[i] = -1;
		if (out->nodes[i].state == POL_LOAN_NODE_LENT) {
			pos[i] = n_lent;
			idx[n_lent++] = i;
		}
	}
	rc = 0;
	if (!n_lent)
		goto out;
	n_pj = reclaim_input(in, pos, pj, pnodes, job_of);
	ri = (pol_loan_reclaim_in_t){ .n_loaned = n_lent,
				      .need = need < n_lent ? need : n_lent,
				      .jobs = pj,
				      .n_jobs = n_pj,
				      .order = POL_LOAN_LEAST_COST,
				      .mode = POL_LOAN_AUTO,
				      .shrink_first = true,
				      .fewest_first = in->fewest_first };
	ro = (pol_loan_reclaim_out_t){ .node_back = back,
				       .action = action,
				       .shrink_by = shrink };
	out->need = need;
	out->n_candidates = n_lent;
	if (choose(in, &ri, job_of, max_wait, &ro, &wait)) {
		out->reclaim_failed = true;
		rc = -1;
		goto out;
	}
	if (wait > 0) { /* a checkpoint first: nothing is taken now */
		out->wait_s = wait;
		out->wait_max_s = max_wait;
		rc = 0;
		goto out;
	}
	out->reclaim = true;
	out->choice = ro;
	out->choice.node_back = NULL;
	out->choice.action = NULL;
	out->choice.shrink_by = NULL;
	for (int j = 0; j < n_pj; j++) {
		pol_loan_round_job_out_t *jo = &out->jobs[job_of[j]];

		jo->reclaim_action = action[j];
		jo->shrink_by = shrink[j];
		jo->cost = pj[j].cost;
		for (int m = 0; m < pj[j].n_nodes; m++) {
			pol_loan_round_node_out_t *no =
				&out->nodes[idx[pj[j].nodes[m]]];

			no->cost += pj[j].cost;
			no->fixed |= !pj[j].requeue;
		}
	}
	for (int k = 0; k < n_lent; k++) {
		pol_loan_round_node_out_t *no = &out->nodes[idx[k]];

		no->candidate = true;
		if (back[k]) {
			no->reclaimed = true;
			no->lend = false;
			no->victim = true;
			no->state = POL_LOAN_NODE_RETURNING;
		}
	}
	/* the alternatives reuse the arrays: the choice is copied out */
	out->cost_slurm = alt_cost(ri, POL_LOAN_SLURM, back, action, shrink);
	out->cost_recent = alt_cost(ri, POL_LOAN_RECENT, back, action, shrink);
	rc = ro.returned;
out:
	free(idx);
	free(pos);
	free(back);
	free(pnodes);
	free(job_of);
	free(action);
	free(shrink);
	free(pj);
	return rc;
}

/* Lend up to k home nodes: up and registered, idle (no inference job),
 * whose Comment is empty or Agora's, from the end. */
static int lend_nodes(const pol_loan_round_in_t *in, pol_loan_round_out_t *out,
		      int k)
{
	int n = 0;

	for (int i = in->n_nodes - 1; i >= 0 && n < k; i--) {
		const pol_loan_round_node_t *nd = &in->nodes[i];
		pol_loan_round_node_out_t *o = &out->nodes[i];

		if (o->state != POL_LOAN_NODE_HOME || !nd->up ||
		    nd->registering || nd->other_jobs || !nd->free_comment)
			continue;
		o->since = in->now;
		o->state = POL_LOAN_NODE_LENT;
		o->lend = true;
		o->newly_lent = true;
		n++;
	}
	return n;
}

/* Who gives up a victim node: an elastic job that can shrink off every
 * victim node shrinks, any other is requeued if it may be. */
static void victim_jobs(const pol_loan_round_in_t *in,
			pol_loan_round_out_t *out)
{
	for (int j = 0; j < in->n_jobs; j++) {
		const pol_loan_round_job_t *lj = &in->jobs[j];
		pol_loan_round_job_out_t *jo = &out->jobs[j];
		int dropped = 0;

		for (int k = 0; k < lj->n_nodes; k++)
			dropped += out->nodes[lj->nodes[k]].victim;
		if (!dropped)
			continue;
		jo->shrink = lj->elastic && lj->min_nodes > 0 &&
			     !(lj->batch >= 0 &&
			       out->nodes[lj->batch].victim) &&
			     lj->total_nodes - dropped >= lj->min_nodes;
		jo->requeue = lj->requeue;
	}
}

/* The reclaim may wait for checkpoints (pol_loan_round_in_t). */
static bool can_wait(const pol_loan_round_in_t *in)
{
	return in->ckpt_wait_s > 0 && in->ckpt_s > 0 && in->step_s > 0 &&
	       in->demand >= 0;
}

/* The home nodes a reclaim ahead keeps from lending (pol_loan_round_in_t):
 * the projection's, and those of a recent rise until ahead_until; at
 * least want. */
static int ahead_keep(const pol_loan_round_in_t *in,
		      const pol_loan_round_out_t *out, int n_up)
{
	int keep = out->want, target;

	if (in->demand_ahead > 0 && can_wait(in) &&
	    (target = want_nodes(in->demand_ahead, in->headroom, n_up)) > keep)
		keep = target;
	if (in->now < in->ahead_until && in->ahead_keep > keep)
		keep = in->ahead_keep < n_up ? in->ahead_keep : n_up;
	return keep;
}

/* A shortfall: reclaim, waiting for checkpoints while a home node is
 * spare above the demand. */
static int shortfall(const pol_loan_round_in_t *in, pol_loan_round_out_t *out,
		     int home)
{
	int64_t max_wait = -1;
	int ready = 0;

	for (int i = 0; i < in->n_nodes; i++)
		ready += in->nodes[i].up &&
			 out->nodes[i].state == POL_LOAN_NODE_HOME;
	/* compared as doubles: a demand far above the pool (a source in the
	 * wrong units) cast to int was undefined, and in practice INT_MIN */
	if (can_wait(in) && (double) ready >= ceil(in->demand - 1e-9) + 1) {
		out->wait_since = in->wait_since > 0 ? in->wait_since : in->now;
		max_wait = out->wait_since + in->ckpt_wait_s - in->now;
		if (max_wait < 0)
			max_wait = 0;
	}
	if (reclaim_lent(in, out, out->want - home, max_wait) < 0 &&
	    !out->reclaim_failed)
		return -1; /* ENOMEM */
	if (!out->wait_s)
		out->wait_since = 0;
	return 0;
}

/* No shortfall: reclaim ahead of a rising demand, or lend what neither the
 * peak demand nor a recent rise keeps. */
static int surplus(const pol_loan_round_in_t *in, pol_loan_round_out_t *out,
		   int home, int n_up)
{
	int keep = ahead_keep(in, out, n_up);

	if (in->demand_ahead > 0 && can_wait(in)) {
		int target = want_nodes(in->demand_ahead, in->headroom, n_up);

		if (target > home) {
			out->ahead = true;
			out->ahead_keep = target;
			out->ahead_until = in->now + in->lend_hold_s;
			out->busy = true;
			if (reclaim_lent(in, out, target - home, in->ckpt_s) <
				    0 &&
			    !out->reclaim_failed)
				return -1;
			return 0;
		}
	}
	/* lend what neither the peak demand nor the projection nor a recent
	 * rise keeps (the next round would take it back); a node not yet
	 * registered counts as home against a reclaim but not for a loan:
	 * the doubt never requeues a job, nor lends a node */
	if (keep < out->hold)
		keep = out->hold;
	for (int i = 0; i < in->n_nodes; i++)
		home -= out->nodes[i].state == POL_LOAN_NODE_HOME &&
			in->nodes[i].up && in->nodes[i].registering;
	if (home > keep)
		out->lent = lend_nodes(in, out, home - keep);
	return 0;
}

int pol_loan_round(const pol_loan_round_in_t *in, pol_loan_round_out_t *out)
{
	int n_up = 0, home = 0;

	if (check_in(in, out)) {
		errno = EINVAL;
		return -1;
	}
	{
		pol_loan_round_node_out_t *nodes = out->nodes;
		pol_loan_round_job_out_t *jobs = out->jobs;

		memset(out, 0, sizeof(*out));
		out->nodes = nodes;
		out->jobs = jobs;
	}
	if (in->n_jobs)
		memset(out->jobs, 0, (size_t) in->n_jobs * sizeof(*out->jobs));
	for (int i = 0; i < in->n_nodes; i++) {
		const pol_loan_round_node_t *n = &in->nodes[i];
		pol_loan_round_node_out_t *o = &out->nodes[i];

		memset(o, 0, sizeof(*o));
		o->seen = o->state = pol_loan_round_classify(n);
		o->lend = n->in_train;
		o->since = n->since;
		if (o->seen == POL_LOAN_NODE_ALONE)
			continue;
		n_up += n->up;
		home += n->up && o->seen == POL_LOAN_NODE_HOME;
	}
	/* unknown demand: every node goes back to inference */
	out->want = in->demand < 0 ? n_up
				   : want_nodes(in->demand, in->headroom, n_up);
	out->hold = in->demand < 0 ? n_up
				   : want_nodes(in->demand_peak > in->demand
							? in->demand_peak
							: in->demand,
						in->headroom, n_up);
	home = settle_returning(in, out, home, out->want,
				ahead_keep(in, out, n_up));
	out->busy = home < out->want;
	for (int i = 0; i < in->n_nodes; i++) {
		out->nodes[i].settled = out->nodes[i].state;
		out->busy |= out->nodes[i].state == POL_LOAN_NODE_RETURNING;
	}
	out->ahead_keep = in->ahead_keep;
	out->ahead_until = in->ahead_until;
	if (home < out->want ? shortfall(in, out, home)
			     : surplus(in, out, home, n_up))
		return -1; /* ENOMEM */
	for (int i = 0; i < in->n_nodes; i++) {
		const pol_loan_round_node_t *n = &in->nodes[i];
		pol_loan_round_node_out_t *o = &out->nodes[i];

		if (o->seen == POL_LOAN_NODE_ALONE)
			continue;
		o->write_mark = o->lend &&
				pol_loan_lease_renew_due(
					&n->mark,
					n->commented && !o->clear_mark, in->now,
					in->lease_timeout_s);
		out->changed |= o->lend != n->in_train;
	}
	victim_jobs(in, out);
	return 0;
}

pol_loan_reclaim_progress_t pol_loan_reclaim_progress(
	const pol_loan_node_state_t *states, int n, int64_t since, int64_t now,
	int64_t deadline_s, bool report_late, int *lent_again)
{
	for (int i = 0; i < n; i++) {
		if (states[i] == POL_LOAN_NODE_HOME)
			continue;
		if (states[i] == POL_LOAN_NODE_LENT) {
			if (lent_again)
				*lent_again = i;
			return POL_LOAN_RECLAIM_CANCELLED;
		}
		return now - since > deadline_s && report_late
			       ? POL_LOAN_RECLAIM_LATE
			       : POL_LOAN_RECLAIM_WAITING;
	}
	return POL_LOAN_RECLAIM_DONE;
}
