/*
 * pol_policy_int.h - internals the policy files share: the per-policy
 * scratch space (pol_work_t) and the preemptive greedy pass of las, srtf
 * and tiresias (pol_preempt_t).  Not part of the API: callers outside
 * common/policy include pol_policy.h.
 */
#ifndef POL_POLICY_INT_H
#define POL_POLICY_INT_H

#include "pol_policy.h"

/*
 * Scratch space a policy keeps between passes (owned by the policy state,
 * released with pol_work_free()): a free map of the snapshot's cluster and
 * an index buffer of at least n ints.  pol_work_sync() (re)builds the map
 * from c (free masks as in c) and grows the buffer; 0 or -1/ENOMEM.
 */
typedef struct pol_work {
	pol_freemap_t *fm;
	const pol_cluster_t *c;
	int *idx;
	size_t idx_cap;
} pol_work_t;

int pol_work_sync(pol_work_t *w, const pol_cluster_t *c, int n);
void pol_work_free(pol_work_t *w);

/*
 * The preemptive greedy pass shared by las and srtf (pol_preempt.c).
 * next(it, &running) yields running and pending jobs in the policy's
 * order (NULL at the end).  In that order each job is "wanted" while its
 * GPUs fit the pool's remaining capacity (Tiresias' rule: a job that does
 * not fit is skipped, not blocking).  Then: running jobs not wanted are
 * victims; wanted pending jobs are placed on the free GPUs plus the
 * victims' GPUs; a victim whose GPUs were not used stays running, the
 * others get PREEMPT; leftover GPUs are filled with the remaining pending
 * jobs in order (work conserving).  Running jobs that may not be
 * preempted (pol_job_may_preempt() under pp->budget, set by the policy;
 * 0 = no budget) are never victims.  Actions are appended PREEMPTs first, then STARTs.
 * on_run(arg, job, gpus), if set, is called for every job that runs after
 * the pass (kept or started).  0 or -1/errno.
 */
typedef const pol_job_t *(*pol_iter_f)(void *it, bool *running);
typedef void (*pol_on_run_f)(void *arg, const pol_job_t *job, int gpus);

typedef struct pol_preempt {
	pol_work_t w;
	const pol_job_t **cand; /* scratch */
	unsigned char *flag;
	size_t cand_cap, flag_cap;
	pol_actions_t starts;
	int budget; /* preemptions without progress per job; 0 = no limit */
	long protected_runs; /* running jobs the budget kept from being victims */
} pol_preempt_t;

/* budget parameter check: an integer in [0, 1000]; 0 or -1/EINVAL */
int pol_budget_check(const char *policy, double v, agora_err_t *err);

int pol_preempt_pass(pol_preempt_t *pp, const pol_placer_t *placer,
		     const pol_snapshot_t *snap, pol_iter_f next, void *it,
		     pol_on_run_f on_run, void *arg, pol_actions_t *out);
void pol_preempt_free(pol_preempt_t *pp);

#endif
