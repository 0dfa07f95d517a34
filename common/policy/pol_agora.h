/*
 * pol_agora.h - Agora's own policies, as the simulator and the sched/agora
 * plugin both run them.
 *
 *   agora-order  MAST-style global order: band desc, credit desc, submit
 *                asc, id (pol_credit_key_cmp), then EASY backfill
 *                (pol_backfill.c) in that order.  No preemption.
 *   agora        the same order, plus Themis: whenever GPUs are free or a
 *                lease runs out, the (1 - f) worst-rho apps bid in a
 *                partial-allocation auction (pol_themis.h) for the free
 *                GPUs plus those of expired leases; winners get a lease of
 *                c_i * LeaseTime; a running job that loses is requeued
 *                after GraceTime, but only when a winner's placement
 *                uses its GPUs;
 *                what the auction leaves goes out in credit order (work
 *                conserving).
 *
 * The plugin is a thin adapter: it creates the state with
 * pol_agora_policy_create_conf() (agora.conf), names the tenants
 * (pol_agora_policy_set_tenant_names(): snapshot tenant index ->
 * account; the policy keeps per-app state by name), calls pol_agora_policy_decide() on each snapshot and applies
 * the actions, and keeps the credit ledger across restarts with
 * pol_credit_save_file() / pol_credit_load_file() on
 * pol_agora_policy_ledger().  The simulator reaches the same code through
 * pol_agora_ops / pol_agora_order_ops (registry).
 *
 * Simulator parameters ("k=v,k=v"; durations take s/m/h/d):
 *   both:   half_life=7d period=7d quota=1000 (GPU-hours per period, every
 *           tenant) default_limit=1h (service estimate of a job without a
 *           time limit)
 *   agora-order: window=1d max_job_test=500 (pol_backfill.c)
 *   agora:  f=0.8 lease=600 grace=60 min_lease=60 options=8 (pending
 *           jobs per app an app can bid for) solver=0 (0 auto, 1 exact,
 *           2 greedy) app=0 (0: an app's rho is the mean of its jobs',
 *           1: Themis' pooled app) align=1 (full leases end on a grid of
 *           LeaseTime so expiries coincide) drain=2 (the leftover pass
 *           keeps one EASY reservation: the first one-node job of 2+ GPUs
 *           that does not fit reserves the node where it can start
 *           soonest; 2: also a job of several nodes, the nodes where it
 *           can start soonest) victims=1 (losers give up GPUs: least work
 *           lost first, then fewest GPUs, then lowest credit; 0: least
 *           work lost, then lowest credit)
 *           checkpoints (pol_ckpt.h, doc/fairness.md section 4):
 *           ckpt=0 (the interval assumed for a job without one: s, 0
 *           unknown = a requeue loses the whole run, -1 continuous)
 *           ckpt_lease=1 (a lease ends so that its requeue falls on the
 *           job's next checkpoint) budget=1 (preemptions per job; 0 no
 *           limit) max_loss=0 (an incumbent that would lose more than
 *           this share of its interval keeps its GPUs) max_run=12h (s: a
 *           run this long is not preempted any more; 0 none)
 *           est=hist (what a job's bid takes as its run time: hist = the
 *           mean of the est_k=2 most recent run times of the same app,
 *           user and GPU count, capped by the job's time limit, without
 *           history max(attained, est_prior=4h) capped by the limit;
 *           service = that fallback only; limit = the time limit, the
 *           behaviour before estimates; pol_estimate.h).  est_acct=0
 *           (1: an app without history of its own, a burst or array of
 *           an account, takes its account's where it is shorter than
 *           est_prior; 2: always; simulator only, measured in
 *           doc/evaluation.md, "Three windows").  est_order=0
 *           (1: an app's pending jobs in shortest-estimate order instead
 *           of submit order, in its bids and the leftover pass).  The plugin's
 *           policy (pol_agora_policy_create_conf()) uses est=hist but
 *           does not learn from its snapshots: the adapter records each
 *           completed job (pol_est_record() on
 *           pol_agora_policy_estimates(), group app, uid, GPUs).
 *
 * Ownership: pol_agora_policy_t is owned by its creator
 * (pol_agora_policy_destroy()); it borrows the placer.
 * pol_agora_policy_ledger() and pol_agora_policy_leases() return borrowed
 * pointers valid until pol_agora_policy_destroy().
 */
#ifndef POL_AGORA_H
#define POL_AGORA_H

#include <stdbool.h>
#include <stdint.h>

#include "agora_conf.h"
#include "agora_err.h"
#include "pol_credit.h"
#include "pol_model.h"
#include "pol_place.h"
#include "pol_themis.h"

extern const pol_policy_ops_t pol_agora_ops;       /* "agora" */
extern const pol_policy_ops_t pol_agora_order_ops; /* "agora-order" */

typedef struct pol_agora_policy pol_agora_policy_t;

/*
 * Create from agora.conf: FairnessKnob, LeaseTime, GraceTime,
 * CreditHalfLife, CreditPeriod, DefaultQuota, AccountQuota.  auctions
 * selects "agora" (true) or "agora-order" (false).  cluster names the
 * ledger's records (federation).  placer is borrowed (NULL: stock).
 * Caller owns the result (pol_agora_policy_destroy()).
 * NULL with errno EINVAL/ENOMEM and err filled.
 */
pol_agora_policy_t *pol_agora_policy_create_conf(const agora_conf_t *conf,
						 bool auctions,
						 const char *cluster,
						 const pol_placer_t *placer,
						 agora_err_t *err);

/*
 * One pass (see pol_policy_ops_t.decide): appends PREEMPT (lease lost,
 * grace over), START (auction winners, leftovers; "agora-order": backfill
 * starts), HOLD (a winner waiting for a loser's GPUs) and lowers
 * out->wakeup to the next lease end or grace end.
 *
 * No single job fails a pass: a job pol_agora_job_check() refuses (a
 * CPU-only job, an unknown tenant, an impossible shape), or a running
 * job whose GPUs are free in the cluster or held by an earlier running
 * job of the snapshot, is left out of this pass (no action, no charge,
 * no lease) and counted in pol_agora_policy_stats(); the rest is decided
 * as if it were not there.
 *
 * 0, or -1 with errno: EINVAL only for a broken snapshot as a whole (a
 * NULL policy, snapshot, cluster or out; negative counts; NULL job
 * arrays with jobs; a node with an unknown type; |now| >= 2^53), ENOMEM.
 */
int pol_agora_policy_decide(pol_agora_policy_t *a, const pol_snapshot_t *snap,
			    int64_t now, pol_actions_t *out);

/*
 * Why the policy cannot use job j of a snapshot of cluster c with
 * n_tenants tenants (running: j is in the running array), as a static
 * string for a log line or a job's reason, or NULL if it can:
 *   both:    tenant outside 0..n_tenants-1; pool other than training or
 *            inference; no GPUs (a CPU-only job); submit/start/time
 *            limit/attained beyond +-2^53 s
 *   pending: negative node count; more GPUs than the cluster has; a gang
 *            (nodes > 0) without GPUs per node, with more GPUs per node
 *            than any node has, with more nodes than the cluster, or
 *            whose total is not nodes x GPUs per node; min_gpus < 0,
 *            max_gpus < 0 or min_gpus > max_gpus
 *   running: a bad allocation (negative part count, parts NULL, a node
 *            outside the cluster, no GPUs or GPUs the node lacks)
 * c must be a valid cluster (node types in range).  O(nodes) per call:
 * decide() uses a cached form.
 */
const char *pol_agora_job_check(const pol_cluster_t *c, const pol_job_t *j,
				bool running, int n_tenants);

/* What the last pol_agora_policy_decide() left out. */
typedef struct pol_agora_stats {
	int skipped_pending; /* pending jobs left out of the last pass */
	int skipped_running; /* running jobs left out of the last pass */
	int64_t first_id;    /* the first one left out (pending first), or 0 */
	const char *first_why; /* why (static string), NULL if none */
} pol_agora_stats_t;

/*
 * Copy the counts of the last pass into *st (all zero before the first
 * pass or after a pass that used every job).  For the adapter to log
 * once per change, e.g. "N pending jobs not scheduled by Agora: job ID:
 * WHY".  0, or -1/EINVAL (a or st NULL).
 */
int pol_agora_policy_stats(const pol_agora_policy_t *a, pol_agora_stats_t *st);

/*
 * Why the last pass left pending job job_id out (a static string, one of
 * pol_agora_job_check()'s reasons), or NULL when it used the job or never
 * saw it.  For the adapter's note on the job: a job left out still ranks
 * by credit but can never win.
 */
const char *pol_agora_policy_left_out(const pol_agora_policy_t *a,
				      int64_t job_id);

/* Free; *ap = NULL.  NULL or *ap == NULL: nothing happens. */
void pol_agora_policy_destroy(pol_agora_policy_t **ap);

/*
 * Account names of the snapshot's tenant indices (names[t] for tenant t;
 * copied, each keyed with pol_app_key(): NULL, empty or over-long names
 * get their fallback key and never fail).  Without a name a tenant t is
 * the app "t<t>".  Call again whenever the mapping changes: the policy
 * keeps every app's history (contention since it became active, credit,
 * rho) by NAME, so indices may shift between passes (an app drained, a
 * new one came) without one app's history landing on another.
 * 0, -1/EINVAL (a NULL policy, n < 0, names NULL with n > 0) or ENOMEM
 * (the previous names stay).
 */
int pol_agora_policy_set_tenant_names(pol_agora_policy_t *a,
				      const char *const *names, int n);

/*
 * The credit-ledger accounts of the snapshot's tenant indices
 * (accounts[t] for tenant t, keyed like names; NULL or "" = the app's own
 * name, the default): AppDefinition=array, burst and name_prefix run the
 * auction and rho per app while the ledger stays per account, so apps of
 * one account share its credit and no new app brings fresh credit.  Call
 * beside pol_agora_policy_set_tenant_names() whenever the map changes.
 * 0, -1/EINVAL (a NULL policy, n < 0, accounts NULL with n > 0) or ENOMEM
 * (the previous map stays).
 */
int pol_agora_policy_set_tenant_accounts(pol_agora_policy_t *a,
					 const char *const *accounts, int n);

/*
 * After a reconfigure: move the running state of src (leases, waiting
 * winners, contention history, the app table and tenant names, the time
 * of the last charge) into the freshly created dst, so that no lease is reset and
 * no GPU-second is charged twice or missed.  The ledger is not moved: copy
 * it with pol_credit_save() / pol_credit_load() (dst keeps its own
 * quotas).  Leases move only between two "agora" states.  src stays valid
 * (to be destroyed).  0, -1/EINVAL.
 */
int pol_agora_policy_carry(pol_agora_policy_t *dst, pol_agora_policy_t *src);

/*
 * Put back a lease as it was (job, GPUs, start, end, state and, in GRACE,
 * requeue_at): the adapter restores the leases it saved before a restart,
 * so a restart neither extends nor shortens a lease.  "agora" only.
 * 0, or -1 with errno EINVAL (bad lease, or no lease table) or ENOMEM.
 */
int pol_agora_policy_restore_lease(pol_agora_policy_t *a, const pol_lease_t *l);

/*
 * What the last pass computed for the app of tenant index t (named by the
 * current pol_agora_policy_set_tenant_names()): its finish-time fairness
 * estimate rho (1 if it had no jobs) and its credit (GPU-hours).  For the
 * adapter's "why does it wait" messages.  rho/credit may be NULL.
 * 0, or -1/ENOENT (t < 0, t beyond the names and the last pass, or an
 * app no pass has seen yet); rho and credit are untouched then.
 */
int pol_agora_policy_tenant(const pol_agora_policy_t *a, int tenant,
			    double *rho, double *credit);

/*
 * The same by app name (keyed with pol_app_key(), so the raw account
 * name, "" or an over-long name work as for the ledger).  An app a pass
 * has seen stays known while it has jobs, and after that (rho 1; credit
 * as of the last pass) until the app table is pruned: idle apps go once
 * the table holds twice the apps kept at the last pruning (at least 64).
 * 0, or -1/ENOENT (NULL policy, or no pass has seen the app, or it was
 * pruned); rho and credit are untouched then.
 */
int pol_agora_policy_app(const pol_agora_policy_t *a, const char *name,
			 double *rho, double *credit);

/* The credit ledger (borrowed): save/load it, absorb peers' records. */
pol_credit_t *pol_agora_policy_ledger(pol_agora_policy_t *a);

/* The run-time history behind the bids (borrowed; NULL with est=limit):
 * save it with pol_est_save(), put a saved one back with pol_est_load(). */
struct pol_est;
struct pol_est *pol_agora_policy_estimates(pol_agora_policy_t *a);

/* The leases of running jobs (borrowed; "agora" only, else NULL). */
const pol_lease_table_t *pol_agora_policy_leases(const pol_agora_policy_t *a);

#endif
