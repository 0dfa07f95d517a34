/*
 * pol_loan_sim_sched.c - the loaning scenario's training scheduler when it
 * is a policy of the registry (pol_loan_sim_policy_t.train_policy:
 * backfill-fs, the baseline an admin runs, or agora): each pass copies
 * every node into a pol_snapshot_t (the training nodes and the loaned
 * ones not draining in the training pool, the others in the inference
 * pool), with the pending jobs in submit order and the running
 * ones with their allocations, asks the policy, and applies its starts and
 * preemptions.  A start is taken only as the loan scenario can run it: a
 * job of at most gpn GPUs on part of one node, a larger one on whole
 * nodes, on free GPUs, and on loaned nodes only if the job may borrow
 * (may_borrow: jobs that cannot be requeued never do, as agorad keeps them
 * off the loaned nodes with ExcNodeList); any other start is dropped and
 * the job stays pending.  Elastic jobs are shown at their requested size
 * (the loan loop grows and shrinks them).  A preemption by the policy
 * (agora's leases) requeues the job and is counted as the scheduler's,
 * apart from the reclaims'.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define POL_LOAN_SIM_STATE
#include "pol_loan_sim_int.h"
#include "pol_policy.h"

int sched_setup(sim_t *s)
{
	s->cl = pol_cluster_uniform(s->N, s->gpn, 0);
	s->sp = calloc((size_t) s->n + 1, sizeof(*s->sp));
	s->sr = calloc((size_t) s->n + 1, sizeof(*s->sr));
	s->parts = calloc((size_t) s->N * (size_t) s->gpn + 1,
			  sizeof(*s->parts));
	if (!s->cl || !s->sp || !s->sr || !s->parts)
		return -1;
	return 0;
}

void sched_free(sim_t *s)
{
	pol_cluster_destroy(&s->cl);
	free(s->sp);
	free(s->sr);
	free(s->parts);
	pol_actions_free(&s->acts);
	s->sp = s->sr = NULL;
	s->parts = NULL;
}

/* the time limit the scheduler sees: the job's, else a week */
static int64_t limit_of(const sj_t *j)
{
	return j->limit > 0 ? (int64_t) j->limit : 7 * 86400;
}

static void job_of(const sim_t *s, const sj_t *j, int ji, pol_job_t *pj)
{
	memset(pj, 0, sizeof(*pj));
	pj->id = ji;
	pj->tenant = j->in->tenant;
	pj->nodes = j->k > 0 ? j->k : 1;
	pj->gpus_per_node = j->k > 0 ? s->gpn : j->use;
	pj->total_gpus = pj->nodes * pj->gpus_per_node;
	pj->min_gpus = pj->max_gpus = pj->total_gpus;
	pj->pool = POL_POOL_TRAINING;
	pj->submit = j->in->submit;
	pj->time_limit = limit_of(j);
	pj->dataset = -1;
	pj->requeueable = j->in->requeue;
	pj->state = POL_JOB_PENDING;
	pj->attained = (int64_t) (j->run_s * j->in->gpus);
	pj->remaining = (int64_t) ceil(j->work);
}

/* the snapshot of now: nodes up = training and loaned, not draining */
static void snapshot(sim_t *s, pol_snapshot_t *snap)
{
	pol_gpumask_t all = s->gpn >= 64 ? ~(pol_gpumask_t) 0
					 : (((pol_gpumask_t) 1 << s->gpn) - 1);
	int i, k, used = 0;

	/* every node stays up (policies may cache per cluster which nodes
	 * are: backfill's plan does); a node no job may start on is in the
	 * inference pool, with no free GPU */
	for (i = 0; i < s->N; i++) {
		pol_node_t *nd = &s->cl->nodes[i];
		bool open = s->nstate[i] == N_TRAIN ||
			    (s->nstate[i] == N_LOANED && !s->draining[i]);

		nd->up = true;
		nd->pool = open ? POL_POOL_TRAINING : POL_POOL_INFERENCE;
		nd->free = open ? all & ~s->used[i] : 0;
	}
	for (i = 0; i < s->npend; i++)
		job_of(s, &s->jobs[s->pend[i]], s->pend[i], &s->sp[i]);
	for (i = 0; i < s->nrun; i++) {
		const sj_t *j = &s->jobs[s->run[i]];
		pol_job_t *pj = &s->sr[i];

		job_of(s, j, s->run[i], pj);
		pj->state = POL_JOB_RUNNING;
		pj->start = (int64_t) j->run_start;
		pj->nodes = j->k > 0 ? j->n : 1;
		pj->total_gpus = pj->min_gpus = pj->max_gpus =
			pj->nodes * pj->gpus_per_node;
		pj->remaining = (int64_t) ceil(j->overhead + j->work / j->rate);
		pj->alloc.parts = &s->parts[used];
		pj->alloc.n_parts = j->n;
		for (k = 0; k < j->n; k++) {
			s->parts[used + k].node = j->nodes[k];
			s->parts[used + k].gpus = j->gm;
		}
		used += j->n;
	}
	memset(snap, 0, sizeof(*snap));
	snap->cluster = s->cl;
	snap->pending = s->sp;
	snap->n_pending = s->npend;
	snap->running = s->sr;
	snap->n_running = s->nrun;
	snap->n_tenants = s->n_tenants;
}

/* can pending job ji start on the allocation a: 1 and its nodes in out */
static int start_ok(const sim_t *s, int ji, const pol_alloc_t *a, int *out)
{
	const sj_t *j = &s->jobs[ji];
	int want = j->k > 0 ? j->k : 1, i;
	bool lok = may_borrow(s, j);

	if (j->state != J_PENDING || a->n_parts != want || want > j->max_n)
		return 0;
	for (i = 0; i < want; i++) {
		int v = a->parts[i].node;

		if (v < 0 || v >= s->N ||
		    pol_popcount(a->parts[i].gpus) != j->use)
			return 0;
		if (s->nstate[v] != N_TRAIN &&
		    (s->nstate[v] != N_LOANED || s->draining[v] || !lok))
			return 0;
		if (s->freeg[v] < j->use)
			return 0;
		out[i] = v;
	}
	for (i = 1; i < want; i++)
		if (out[i] == out[i - 1])
			return 0;
	return 1;
}

static int pend_pos(const sim_t *s, int ji)
{
	int at;

	for (at = 0; at < s->npend; at++)
		if (s->pend[at] == ji)
			return at;
	return -1;
}

static int run_pos(const sim_t *s, int ji)
{
	int at;

	for (at = 0; at < s->nrun; at++)
		if (s->run[at] == ji)
			return at;
	return -1;
}

int policy_pass(sim_t *s)
{
	pol_snapshot_t snap;
	int i, nodes[64];

	s->dirty = false;
	snapshot(s, &snap);
	pol_actions_clear(&s->acts);
	if (pol_policy_decide(s->pol.train_policy, &snap, (int64_t) s->now,
			      &s->acts))
		return -1;
	for (i = 0; i < s->acts.n; i++) {
		const pol_action_t *a = &s->acts.v[i];
		int ji = (int) a->job_id, at;

		if (ji < 0 || ji >= s->n)
			continue;
		if (a->type == POL_ACT_PREEMPT && run_pos(s, ji) >= 0 &&
		    s->jobs[ji].in->requeue) {
			preempt(s, ji, false);
			continue;
		}
		if (a->type != POL_ACT_START ||
		    !start_ok(s, ji, &a->alloc, nodes))
			continue;
		at = pend_pos(s, ji);
		if (at < 0)
			continue;
		start(s, ji, nodes, s->jobs[ji].k > 0 ? s->jobs[ji].k : 1);
		pend_del(s, at);
	}
	return 0;
}
