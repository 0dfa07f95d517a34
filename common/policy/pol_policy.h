/*
 * pol_policy.h - the policy registry and the baseline policies.
 *
 * Every policy is a pol_policy_ops_t (pol_model.h) listed in ONE table in
 * pol_registry.c; adding a policy is one line there plus its file.  The
 * baselines:
 *   fifo      Slurm's main scheduler: priority order, head-of-line
 *             blocking per pool (pol_fifo.c)
 *   backfill  priority + Slurm 22.05's backfill plan on time limits: a
 *             reservation for every tested job, bf_resolution slots,
 *             bf_window, bf_max_job_test; easy=1: one EASY reservation
 *             (pol_backfill.c)
 *   backfill-fs  Slurm's classic fair-share priority in front of that
 *             backfill (pol_backfill_fs.c)
 *   las       2D-LAS on attained GPU-service, preemptive (pol_las.c)
 *   tiresias  Tiresias' discretised 2D-LAS with starvation promotion
 *             (pol_tiresias.c)
 *   srtf      shortest remaining time first with perfect knowledge
 *             (pol_job_t.remaining), preemptive: an oracle bound
 *             (pol_srtf.c)
 *
 * Ownership: pol_policy_create() returns a pol_policy_t the caller owns
 * (pol_policy_destroy()); it BORROWS the placer, which must outlive it.
 */
#ifndef POL_POLICY_H
#define POL_POLICY_H

#include "agora_err.h"
#include "pol_model.h"
#include "pol_place.h"

extern const pol_policy_ops_t pol_fifo_ops;
extern const pol_policy_ops_t pol_backfill_ops;
extern const pol_policy_ops_t pol_las_ops;
extern const pol_policy_ops_t pol_srtf_ops;

/* The registry: NULL-terminated, in display order.  Borrowed, static. */
const pol_policy_ops_t *const *pol_registry(void);
/* Look a policy up by name; NULL/ENOENT. */
const pol_policy_ops_t *pol_registry_find(const char *name);

/*
 * Create policy 'name' with params ("k=v,k=v", NULL = defaults) and the
 * placement strategy placer (NULL = pol_placer_stock).  NULL on error with
 * errno (ENOENT: unknown name; EINVAL: bad params) and err filled.
 */
pol_policy_t *pol_policy_create(const char *name, const char *params,
				const pol_placer_t *placer, agora_err_t *err);
/* The same from an ops table that need not be in the registry (tests,
 * out-of-tree policies). */
pol_policy_t *pol_policy_create_ops(const pol_policy_ops_t *ops,
				    const char *params,
				    const pol_placer_t *placer,
				    agora_err_t *err);
/* Run one decision pass; see pol_policy_ops_t.decide. */
int pol_policy_decide(pol_policy_t *p, const pol_snapshot_t *snap, int64_t now,
		      pol_actions_t *out);
const char *pol_policy_name(const pol_policy_t *p);
void pol_policy_destroy(pol_policy_t **pp);

/*
 * Parameter strings "k=v,k=v" for policies.  keys is NULL-terminated;
 * vals[i] holds the default of keys[i] on entry and the parsed value on
 * return.  Values are numbers (an optional suffix s/m/h/d multiplies by
 * 1/60/3600/86400).  Lists use ':' ("thresholds=3600:36000") and are
 * returned by pol_params_list().  An unknown key or a bad number is an
 * error: -1/EINVAL, err = "policy NAME: KEY: why".
 */
int pol_params_parse(const char *policy, const char *params,
		     const char *const *keys, double *vals, agora_err_t *err);
/*
 * Parse the ':'-separated list value of key in params into v (at most
 * max entries); returns the count (0 if the key is absent), or -1/EINVAL.
 */
int pol_params_list(const char *policy, const char *params, const char *key,
		    double *v, int max, agora_err_t *err);

/*
 * Helpers shared by the baselines.
 * pol_order_cmp: Slurm order: band desc, priority desc, submit asc, id asc.
 * pol_order_pending: fill idx[0..n) with the indices of snap->pending in
 *   that order (no sort when the array already is).  Returns 0 or -1/ENOMEM.
 */
int pol_order_cmp(const pol_job_t *a, const pol_job_t *b);
int pol_order_pending(const pol_snapshot_t *snap, int *idx);

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
 * jobs in order (work conserving).  Non-requeueable running jobs are
 * never victims.  Actions are appended PREEMPTs first, then STARTs.
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
} pol_preempt_t;

int pol_preempt_pass(pol_preempt_t *pp, const pol_placer_t *placer,
		     const pol_snapshot_t *snap, pol_iter_f next, void *it,
		     pol_on_run_f on_run, void *arg, pol_actions_t *out);
void pol_preempt_free(pol_preempt_t *pp);

#endif
