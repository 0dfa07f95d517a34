/*
 * pol_agora_int.h - internals of the agora policies.  Not part of the
 * API: include pol_agora.h instead.  The files are layers; each calls
 * only those below it:
 *
 *   pol_agora.c          the entry: construction, the API, the registry
 *                        face, agora-order, and pol_agora_policy_decide(),
 *                        which runs the steps in order:
 *   pol_agora_check.c      1. filter: the usable part of the snapshot
 *   pol_agora_prep.c       2. prepare: charge, credits, app aggregates,
 *                             contention, the credit order
 *   pol_agora_auction.c    3. the auction pass of "agora": leases,
 *                             reservations, the pools, leftovers
 *   pol_agora_pool.c          one pool's auction: bids, winners, losers
 *   pol_agora_est.c      service estimates (used by 2 and 3)
 *   pol_agora_base.c     the bottom: a job's GPUs, limit and lease,
 *                        placing and starting a job, the app table, the
 *                        checkpoint cost of a preemption
 */
#ifndef POL_AGORA_INT_H
#define POL_AGORA_INT_H

#include "agora_mem.h"
#include "pol_agora.h"
#include "pol_estimate.h"
#include "pol_policy_int.h"

/*
 * One app, keyed by its name (pol_app_key()): its history lives here, in
 * the policy's app table, whatever tenant index the snapshot gives it.
 */
typedef struct ag_tenant {
	char name[POL_CREDIT_NAME_LEN];
	/* its credit-ledger account (the name, unless the adapter maps apps
	 * to accounts: pol_agora_policy_set_tenant_accounts()) */
	char account[POL_CREDIT_NAME_LEN];
	bool active;  /* had jobs at the last pass */
	int64_t seen; /* when it became active */
	double area0; /* contention area then */
	/* per pass */
	double credit;
	pol_ftf_app_t app;
	int held;       /* GPUs of its running jobs */
	double rho_sum; /* APP_MEAN: sum of its jobs' rho as they stand */
	int n_jobs;
	int first, n; /* its pending jobs in ag->tpend[first..first+n) */
} ag_tenant_t;

typedef struct ag_resv {
	int64_t job_id;
	int64_t until;
} ag_resv_t;

/*
 * How an app's rho is made of its jobs' (doc/fairness.md "apps"); the
 * values are the policy parameter app=0|1.
 */
typedef enum ag_app_model {
	/* the mean of its jobs' rho, each job with its own T_id (a Slurm
	 * account is many independent jobs, each with a user waiting) */
	AG_APP_MEAN = 0,
	/* Themis' app: one pool of work finishing when all of it is done */
	AG_APP_POOL = 1,
} ag_app_model_t;

/* The service estimate of a job (pol_agora_est.c); the values are the
 * policy parameter est=limit|hist|service. */
typedef enum ag_est_mode {
	AG_EST_LIMIT = 0,   /* its time limit (default_limit without one) */
	AG_EST_HIST = 1,    /* recent history, capped by the limit */
	AG_EST_SERVICE = 2, /* max(attained, prior), capped by the limit */
} ag_est_mode_t;

typedef struct ag_est ag_est_t;

/* left_rho, left_back: one pending job in the leftover pass's order */
typedef struct ag_okey {
	int band;
	int back; /* left_back: 1 for a job a preemption requeued */
	double rho;
	int rank;  /* in credit order */
	int index; /* pending index */
} ag_okey_t;

/* left_bf: a pending job's id and its index in the snapshot */
typedef struct ag_idix {
	int64_t id;
	int index;
} ag_idix_t;

typedef struct ag_params {
	double half_life_s, period_s, quota;
	int64_t default_limit;
	/* agora-order */
	double window, max_job_test;
	/* agora */
	double f;
	int64_t lease_s, grace_s, min_lease_s;
	int max_opts;
	pol_pf_solver_t solver;
	ag_app_model_t app_model;
	bool align; /* full leases end on a grid of lease_s */
	int drain;  /* leftover pass keeps one EASY reservation: 0 none, 1 for a
		    * one-node job, 2 also for a gang of whole nodes */
	bool drain_rho; /* ... for the job of the worst-rho app that does not
			 * fit (else the first in credit order) */
	bool small_victims; /* losers in GPU order (fewest first), then credit */
	/* losers by least service attained (GPU-seconds over GPUs) before
	 * the GPU order: a long job, which sets the p99 JCT, goes last */
	bool lose_young;
	bool bid_skip; /* a bid passes over a job the offer cannot hold (else,
			* the default, it stops there) */
	ag_est_mode_t est_mode;
	int est_k;           /* recent samples averaged */
	int64_t est_prior_s; /* remaining time without history or service */
	bool est_order; /* within an app, shortest estimate first (else FIFO) */
	/* an app without history of its own takes its credit account's: 0 no,
	 * 1 where shorter than the prior, 2 always (pol_estimate.h; issue 17,
	 * not the default) */
	int est_acct;
	bool est_learn; /* learn from the running set (else the caller
			      * records completions, pol_est_record()) */
	/* preemption under checkpoints (pol_ckpt.h) */
	int64_t ckpt_s;  /* interval assumed for a job without one
			  * (POL_CKPT_UNKNOWN: NEVER) */
	bool ckpt_lease; /* a lease ends so that its requeue falls on the
			  * job's next checkpoint */
	int budget;      /* preemptions per job (0: no limit) */
	/* the leftover pass visits pending jobs by their app's rho, worst
	 * first, within a band (else, the default, in credit order) */
	bool left_rho;
	/* the leftover pass visits requeued jobs (preempted at least once)
	 * first within a band, so that a long job a preemption sent back
	 * does not wait behind its account's credit a second time (issue
	 * 17's p99 JCT tail; in Slurm the job's restart count) */
	bool left_back;
	/* the leftover pass is Slurm's backfill plan (pol_backfill.c, as
	 * backfill-fs and agora-order run it) over the pending jobs in credit
	 * order, from the free GPUs the auction left: a reservation for every
	 * job it tests, as Slurm's sched/backfill makes after site_factor/agora
	 * has set the priorities (else, the default, one EASY reservation,
	 * "drain") */
	bool left_bf;
	int64_t max_run; /* a run this long (s) is not preempted (0: none) */
	/* a job whose time limit is this long (s) or unlimited is not
	 * preempted (0: none): limits are not durations, but a long job, the
	 * p99 JCT tail, has a long limit (issue 17) */
	int64_t keep_long;
	/* the rhythm of preemption (s; 0: off): a job that saves its state
	 * more often than this, or on demand (CONTINUOUS: Slurm's --signal),
	 * is preempted as if it saved every `every` seconds (the least
	 * multiple of its own interval that is at least this), so that cheap
	 * checkpoints do not let the auction requeue it every lease
	 * (doc/evaluation.md, "Free checkpoints") */
	int64_t every;
	/* a job that saves nothing (NEVER: no CheckpointInterval, no
	 * --signal) may lose its GPUs, and its whole run with them (else,
	 * the default, it is never an auction's loser) */
	bool unsaved;
	double max_loss; /* an incumbent that would lose more than this
			  * share of its interval is not offered */
} ag_params_t;

/* A pending job a pass left out, and why (a static string). */
typedef struct ag_left_out {
	int64_t id;
	const char *why;
} ag_left_out_t;

struct pol_agora_policy {
	bool auctions;
	ag_params_t p;
	const pol_placer_t *placer;
	double slow[POL_N_LEVELS];
	pol_credit_t *ledger;
	pol_lease_table_t *leases;
	pol_ftf_contention_t cont;
	/* apps by name: entries app[0..n_app) (never removed, so an index
	 * stays valid), found through slot[] (open addressing, linear
	 * probing, n_slot a power of two, app index + 1, 0 = empty) */
	ag_tenant_t *app;
	int n_app;
	size_t app_cap;
	int *slot, n_slot;
	/* keys of the snapshot's tenant indices (set_tenant_names()) */
	char (*tname)[POL_CREDIT_NAME_LEN];
	int n_tname;
	/* their ledger accounts (set_tenant_accounts(); "" = the name) */
	char (*tacct)[POL_CREDIT_NAME_LEN];
	int n_tacct;
	/* this pass: tenant index -> app index (tmap[0..n_tmap)), and the
	 * distinct apps of those tenants in tenant order (papp[0..n_papp)) */
	int *tmap, n_tmap;
	size_t tmap_cap;
	int *papp, n_papp;
	size_t papp_cap;
	bool tmap_ok; /* tmap/papp still match the names */
	int prune_at; /* n_app at which idle apps are dropped (0: the minimum) */
	bool charged;
	int64_t last_charge;
	void *bf; /* agora-order, left_bf: a pol_backfill state */
	/* left_bf: the running set with the auction's starts of this pass,
	 * its actions, and the pending jobs' (id, index) sorted by id */
	pol_job_t *brun;
	size_t brun_cap;
	pol_actions_t bfout;
	ag_idix_t *bidx;
	size_t bidx_cap;
	/* scratch, grown as needed */
	pol_work_t w;
	pol_freemap_t *offer, *tent;
	pol_credit_key_t *keys, *keys_tmp; /* keys_tmp: the sort's scratch */
	size_t keys_cap, keys_tmp_cap;
	pol_job_t *reord;
	size_t reord_cap;
	int *tpend;
	size_t tpend_cap;
	ag_okey_t *lord; /* left_rho, left_back: the leftover pass's order */
	size_t lord_cap;
	double *arho; /* left_rho: per app */
	size_t arho_cap;
	unsigned char *pflag, *rflag; /* per pending / running job */
	size_t pflag_cap, rflag_cap;
	int *dnodes; /* the leftover pass's reserved nodes */
	size_t dnodes_cap;
	ag_resv_t *resv;
	int n_resv;
	size_t resv_cap;
	/* jobs a pass leaves out (pol_agora_policy_stats()), and the
	 * snapshot of the usable ones when there are any such */
	pol_agora_stats_t stats;
	ag_left_out_t *left; /* the pending ones, by id (left_n) */
	size_t left_n, left_cap;
	pol_job_t *fpend, *frun;
	size_t fpend_cap, frun_cap;
	pol_gpumask_t *claimed; /* per node: GPUs of running jobs so far */
	size_t claimed_cap;
	/* service estimates (NULL with est=limit) and their pass state */
	pol_est_t *est;
	ag_est_t *estx;
};

/* pending flags */
#define PF_STARTED  1
#define PF_RESERVED 2
/* running flags */
#define RF_LEAVING   1
#define RF_INCUMBENT 2
#define RF_KEPT      4

/* The app of tenant index t of the current pass (t checked by the pass). */
#define AG_TEN(a, t) (&(a)->app[(a)->tmap[(t)]])

/* pol_agora_base.c ---------------------------------------------------- */
/* GPUs a job holds (running) or asks for (pending). */
int pol_ag_job_gpus(const pol_job_t *j);
/* The job's service estimate: its time limit, or default_limit. */
int64_t pol_ag_job_limit(const pol_agora_policy_t *a, const pol_job_t *j);
/* Length of a full lease granted now (aligned to the lease grid). */
int64_t pol_ag_full_lease(const pol_agora_policy_t *a, int64_t now);
/* The length of a lease of j (whose run began at start: now for a job
 * about to start) granted now for a nominal dur: with ckpt_lease it
 * ends so that the requeue after it (end + grace) falls on j's first
 * checkpoint at or after now + dur + grace, so a loser loses no work and
 * no lease is shorter than one interval; at least min_lease. */
int64_t pol_ag_lease_len(const pol_agora_policy_t *a, const pol_job_t *j,
			 int64_t start, int64_t now, int64_t dur);
/* GPU-seconds running job j would lose if it lost its lease now (its
 * requeue at now + grace). */
double pol_ag_preempt_cost(const pol_agora_policy_t *a, const pol_job_t *j,
			   int64_t now);
/* May running job j lose its GPUs in an auction now: requeueable, within
 * its preemption budget, its run at least one interval old (so never two
 * preemptions within one checkpoint interval), and losing at most
 * max_loss of an interval. */
bool pol_ag_may_lose(const pol_agora_policy_t *a, const pol_job_t *j,
		     int64_t now);
/* Start j on al (taken from a->w.fm) with a lease of lease seconds; the
 * START action's text tells why and on what terms.  0 or -1. */
int pol_ag_start_job(pol_agora_policy_t *a, const pol_job_t *j, pol_alloc_t *al,
		     int64_t now, int64_t lease, double score, const char *why,
		     pol_actions_t *out);
/* Place j on fm; 1 placed, 0 does not fit, -1 error. */
int pol_ag_try_place(const pol_agora_policy_t *a, const pol_freemap_t *fm,
		     const pol_job_t *j, pol_alloc_t *al);
/* Index of the app with key name, or -1. */
int pol_ag_app_find(const pol_agora_policy_t *a, const char *key);
/* Index of the app with key name, created (zeroed) if new; -1/ENOMEM. */
int pol_ag_app_get(pol_agora_policy_t *a, const char *key);
/* Key of tenant index t: its name, or "t<t>" without one. */
void pol_ag_tenant_key(const pol_agora_policy_t *a, int t,
		       char key[POL_CREDIT_NAME_LEN]);
/* Tenant indices 0..n-1 of this pass to apps by name (a->tmap) and their
 * distinct apps (a->papp).  0 or -1/ENOMEM. */
int pol_ag_map_tenants(pol_agora_policy_t *a, int n);
/* Apps in the table below which nothing is pruned. */
#define AG_PRUNE_MIN 64
/*
 * Drop the apps that had no job at the last pass (and that no tracked
 * run-time sample refers to) once the table holds prune_at apps, then
 * wait until it holds twice what stayed (amortised O(1) per app): apps
 * named by users (AppDefinition=name_prefix, array, burst) come and go,
 * and an idle app holds no state a new one would not start with.
 * 0 or -1/ENOMEM (nothing dropped).
 */
int pol_ag_prune_apps(pol_agora_policy_t *a);
/* pol_agora_est.c: mark keep[app] for the apps its tracked running jobs
 * refer to; then renumber them by map[old] (the new index). */
void pol_ag_est_mark_apps(const pol_agora_policy_t *a, unsigned char *keep);
void pol_ag_est_remap(pol_agora_policy_t *a, const int *map);

/* pol_agora_est.c ----------------------------------------------------- */
/* The run time (s, at its size gpus) j is expected to need in all: its
 * limit with est=limit, else its service so far plus the estimate of
 * what remains (after pol_ag_est_update() this pass). */
int64_t pol_ag_job_work(const pol_agora_policy_t *a, const pol_job_t *j,
			int gpus);
/* The same, less the service j had: what remains (>= 1 s). */
int64_t pol_ag_job_rest(const pol_agora_policy_t *a, const pol_job_t *j,
			int gpus);
/* est != limit: the estimator and its pass state; 0 or -1/ENOMEM. */
int pol_ag_est_setup(pol_agora_policy_t *a);
void pol_ag_est_free(ag_est_t **ep);
/* Learn from the jobs that ended since the last pass, look up the
 * histories this pass needs.  0 or -1/ENOMEM. */
int pol_ag_est_update(pol_agora_policy_t *a, const pol_snapshot_t *snap,
		      int64_t now);

/* pol_agora_check.c --------------------------------------------------- */
/* A time the policy can add and compare without overflow (|t| < 2^53). */
bool pol_ag_time_ok(int64_t t);
/* The usable part of snap into use (snap itself when every job is usable,
 * else a copy without the others, counted in a->stats).  0, -1/EINVAL
 * (broken cluster) or ENOMEM. */
int pol_ag_filter_jobs(pol_agora_policy_t *a, const pol_snapshot_t *snap,
		       pol_snapshot_t *use);

/* pol_agora_prep.c ---------------------------------------------------- */
/* Charge, credits, contention, app aggregates, credit order (a->keys). */
int pol_ag_prepare(pol_agora_policy_t *a, const pol_snapshot_t *snap,
		   int64_t now);

/* pol_agora_pool.c ---------------------------------------------------- */
/* APP_MEAN: every app's sum of job rho as things stand (rho_sum, n_jobs;
 * zeroed for APP_POOL).  0 or -1. */
/* The rho of app t as things stand (after pol_ag_tenant_rho_base()). */
int pol_ag_app_rho_now(const pol_agora_policy_t *a, const ag_tenant_t *t,
		       int cgpus, int64_t now, double *rho);
int pol_ag_tenant_rho_base(pol_agora_policy_t *a, const pol_snapshot_t *snap,
			   int64_t now, int cgpus);
/* One pool's auction: incumbents and free GPUs to the worst-off apps;
 * winners keep or start, losers a winner needs are requeued.  0 or -1. */
int pol_ag_auction_pool(pol_agora_policy_t *a, const pol_snapshot_t *snap,
			int64_t now, pol_pool_t pool, int cgpus,
			pol_actions_t *out);

/* pol_agora_auction.c ------------------------------------------------- */
/* The "agora" pass after pol_ag_prepare(). */
int pol_ag_auction_decide(pol_agora_policy_t *a, const pol_snapshot_t *snap,
			  int64_t now, pol_actions_t *out);

#endif
