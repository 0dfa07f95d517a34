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
/*
 * Name the snapshot's tenant indices as apps with their credit accounts
 * (pol_policy_ops_t.set_apps; accounts NULL: every app is its own
 * account).  0, or -1 with errno ENOTSUP (the policy has no apps: it
 * sees tenants only), EINVAL or ENOMEM.
 */
int pol_policy_set_apps(pol_policy_t *p, const char *const *names,
			const char *const *accounts, int n);
const char *pol_policy_name(const pol_policy_t *p);
void pol_policy_destroy(pol_policy_t **pp);

/*
 * Parameter strings "k=v,k=v" for policies.  keys is NULL-terminated;
 * vals[i] holds the default of keys[i] on entry and the parsed value on
 * return.  Values are numbers (an optional suffix s/m/h/d multiplies by
 * 1/60/3600/86400).  Lists use ':' ("thresholds=3600:36000") and are
 * returned by pol_params_list().  An unknown key, a bad number or one
 * beyond +-POL_PARAM_MAX (so that a policy may cast any value to int64_t;
 * counts cast to int still need their own range check) is an error:
 * -1/EINVAL, err = "policy NAME: KEY: why".
 */
#define POL_PARAM_MAX 1e15
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
 * The default per-job preemption budget of las, srtf and tiresias
 * (pol_job_may_preempt() in pol_ckpt.h, the one rule of every preempting
 * policy, with since_save: preemptions since the job last saved work).
 */
#define POL_PREEMPT_BUDGET_DEFAULT 2

#endif
