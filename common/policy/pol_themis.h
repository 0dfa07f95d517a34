/*
 * pol_themis.h - finish-time fairness and the partial-allocation auction
 * (Themis, Mahajan et al., NSDI'20), plus GPU leases.
 *
 * Finish-time fairness of an app: rho = T_sh / T_id, the time it takes
 * in the shared cluster over the time it would take in an ideal 1/N share
 * of it (N = time-averaged number of contending apps).  rho < 1 is better
 * than fair, rho > 1 worse.  Every auction offers the free GPUs to the
 * (1 - f) fraction of apps with the worst rho; each bids a table of rho
 * over the whole-gang allocations it could use; the arbiter picks the
 * proportional-fair allocation x* (maximises sum log(1/rho_i)), and each
 * winner keeps a fraction c_i of what it won (the hidden payment that
 * makes lying unprofitable).  What is left goes out work-conservingly.
 * doc/fairness.md has the formulas, the defaults and the reasons.
 *
 * Pure: time, the cluster size and all estimates are parameters.  No
 * logging, no global state.  Functions return 0 / -1 with errno (EINVAL,
 * ENOMEM) and have no side effects on failure.
 */
#ifndef POL_THEMIS_H
#define POL_THEMIS_H

#include <stdbool.h>
#include <stdint.h>

/* Finish-time fairness estimate --------------------------------------- */

/*
 * What Slurm knows about an app (all its unfinished jobs together).  The
 * service estimate comes from the jobs' time limits: work = sum over jobs
 * of time_limit * gpus (GPU-seconds at full speed), done = GPU-seconds
 * attained, demand = sum of the jobs' gang sizes (the most the app can use
 * at once).
 */
typedef struct pol_ftf_app {
	int64_t arrival; /* s: first submit of the app's unfinished jobs */
	double work;     /* GPU-seconds needed in total, > 0 */
	double done;     /* GPU-seconds attained, >= 0 */
	int demand;      /* GPUs usable at once, > 0 */
	double n_avg;    /* time-averaged contention (apps), >= 1 */
} pol_ftf_app_t;

/*
 * T_id: the app's running time in an ideal 1/N_avg share of a cluster of
 * cluster_gpus GPUs.  T_alone = work / demand; if the app's demand fits in
 * its share (demand * n_avg <= cluster_gpus) that is T_id, else its share
 * time-slices it: T_id = T_alone * demand * n_avg / cluster_gpus.
 * (Themis' T_cluster * N_avg is the special case demand == cluster_gpus.)
 * 0, or -1/EINVAL.
 */
int pol_ftf_ideal(const pol_ftf_app_t *a, int cluster_gpus, double *t_id);

/*
 * rho of the app if it holds 'gpus' GPUs (in total, after the decision)
 * for the next horizon_s seconds on a placement that runs 'slowdown'
 * (>= 1) times slower than an ideal one; after the horizon it is assumed
 * to run at full demand and speed (the same optimistic future for every
 * option, so the bids differ only by what this round gives):
 *
 *   rem   = max(0, work - done)           rate = min(gpus, demand) / slowdown
 *   t_rem = rem / rate                            if rate * horizon >= rem
 *         = horizon + (rem - rate*horizon)/demand otherwise
 *   rho   = (now - arrival + t_rem) / T_id
 *
 * So "no GPUs this round" (gpus = 0) costs one horizon of delay and rho
 * stays finite; rho never increases with gpus.  horizon_s > 0 (the lease).
 * 0, or -1/EINVAL.
 */
int pol_ftf_rho(const pol_ftf_app_t *a, int cluster_gpus, int64_t now, int gpus,
		double slowdown, int64_t horizon_s, double *rho);

/*
 * Time-averaged contention.  area is the integral of the number of active
 * apps over time; an app remembers the area when it arrived, and its
 * N_avg = (area(now) - area_at_arrival) / (now - arrival).
 */
typedef struct pol_ftf_contention {
	int64_t last; /* time of the last update */
	int n;        /* active apps since last */
	double area;  /* integral of n dt up to last */
	bool started;
} pol_ftf_contention_t;

/* Advance to now (>= last) and set the current number of active apps. */
void pol_ftf_contention_update(pol_ftf_contention_t *c, int64_t now,
			       int n_active);
/* Area under n up to now (>= last). */
double pol_ftf_contention_area(const pol_ftf_contention_t *c, int64_t now);
/* N_avg since (arrival, area_at_arrival); current n if no time passed;
 * never below 1. */
double pol_ftf_contention_avg(const pol_ftf_contention_t *c, int64_t now,
			      int64_t arrival, double area_at_arrival);

/*
 * The apps that get offers: the ceil((1 - f) * n) (at least one when
 * n > 0) with the highest rho, ties by lower index.  idx receives their
 * indices (worst first); returns the count, or -1/EINVAL (f outside
 * [0,1), n < 0) or ENOMEM.
 */
int pol_ftf_worst(const double *rho, int n, double f, int *idx);

/* The auction --------------------------------------------------------- */

/* One allocation an app bids on: 'gpus' more GPUs (whole gangs). */
typedef struct pol_bid_opt {
	int gpus;   /* > 0 */
	double rho; /* > 0: the app's rho with this allocation */
	int tag;    /* caller's id of the option (e.g. jobs + placement) */
} pol_bid_opt_t;

/* An app's bid: its rho table.  opts are borrowed. */
typedef struct pol_bid {
	double rho0; /* > 0: rho if it wins nothing */
	const pol_bid_opt_t *opts;
	int n_opts;
} pol_bid_t;

/*
 * Keep one option per GPU count, the one with the lowest rho (when an app
 * can take k GPUs on several placements of different locality, it bids
 * the best one).  Sorts opts by gpus (then rho, tag) in place and
 * compacts; drops options with gpus <= 0 or rho not > 0.  Returns the new
 * count.
 */
int pol_bid_best(pol_bid_opt_t *opts, int n);

typedef enum pol_pf_solver {
	POL_PF_AUTO = 0,    /* exact when it is cheap enough, else greedy */
	POL_PF_EXACT,       /* dynamic programme over GPU counts: optimal */
	POL_PF_GREEDY,      /* marginal gain per GPU + 1-swap improvement */
	POL_PF_BRUTE,       /* enumerate every combination (tests; tiny n) */
	POL_PF_GREEDY_SCAN, /* GREEDY's steps found by a full scan each
			     * (tests: the same choices as GREEDY) */
} pol_pf_solver_t;

/*
 * Work budget for POL_PF_AUTO: exact if (n + 1) * n * (capacity + 1) *
 * (max_options + 1) stays below this (the auction solves n + 1 problems;
 * capacity here is capped at the sum of every bidder's largest option).
 * About 50 ms on a 2020s core.
 */
#define POL_PF_EXACT_BUDGET 50000000.0

/*
 * The proportional-fair allocation: choose for every bidder one option
 * or nothing (choice[i] = index into bids[i].opts, or -1) with total GPUs
 * <= capacity, maximising sum_i log(1/rho_i).  Bidder 'exclude' (or -1
 * for none) is left out (choice -1, not counted): that is x*_{-i}.
 * *objective (may be NULL) gets the sum over counted bidders.  Ties go to
 * the earlier choice (nothing before options, lower index first).
 * POL_PF_BRUTE refuses (E2BIG) more than 1e7 combinations.
 * 0, or -1/EINVAL|ENOMEM|E2BIG.
 */
int pol_pf_solve(const pol_bid_t *bids, int n, int capacity, int exclude,
		 pol_pf_solver_t solver, int *choice, double *objective);

/* What the auction decided; arrays of n, owned (pol_auction_free()). */
typedef struct pol_auction {
	int n;
	int *choice;      /* per bidder: option index, or -1 */
	double *keep;     /* per bidder: c_i in (0, 1]; 1 for a loser */
	double objective; /* sum log(1/rho) of x* */
	int used;         /* GPUs in x* */
	int leftover;     /* capacity - used: to go out work-conservingly */
	bool exact;       /* x* (and every x*_{-i}) is optimal */
} pol_auction_t;

/*
 * Run the partial-allocation auction over 'capacity' offered GPUs:
 * x* = PF allocation, then for each bidder i
 *
 *   c_i = prod_{j != i} V_j(x*) / prod_{j != i} V_j(x*_{-i}),  V = 1/rho
 *
 * (clamped to (0, 1]; it is <= 1 whenever x*_{-i} is exact).  How c_i is
 * charged is the caller's choice; pol_agora.c shortens the winner's lease
 * to c_i of a full one, which keeps the truthfulness of PA for any rho
 * table: a bidder's utility c_i * V_i(x*) = prod_all V(x*) /
 * prod_{j != i} V_j(x*_{-i}), and only the numerator depends on its bid.
 * The result is written to *out (call pol_auction_free() when done;
 * on failure nothing needs freeing).  0, or -1/EINVAL|ENOMEM.
 */
int pol_auction_run(const pol_bid_t *bids, int n, int capacity,
		    pol_pf_solver_t solver, pol_auction_t *out);
void pol_auction_free(pol_auction_t *a);

/* Leases --------------------------------------------------------------- */

typedef enum pol_lease_state {
	POL_LEASE_ACTIVE = 0, /* holds its GPUs until end */
	POL_LEASE_GRACE,      /* lost an auction: requeue at requeue_at */
} pol_lease_state_t;

typedef struct pol_lease {
	int64_t job_id;
	int gpus;
	int64_t start;      /* when the current lease began */
	int64_t end;        /* lease end */
	int64_t requeue_at; /* GRACE only */
	pol_lease_state_t state;
} pol_lease_t;

/* The leases of running jobs, keyed by job id.  Opaque; caller owns. */
typedef struct pol_lease_table pol_lease_table_t;

pol_lease_table_t *pol_lease_table_create(void);
void pol_lease_table_destroy(pol_lease_table_t **tp);

/* Grant or renew: ACTIVE, [now, now + duration_s).  0, -1/EINVAL|ENOMEM. */
int pol_lease_grant(pol_lease_table_t *t, int64_t job_id, int gpus, int64_t now,
		    int64_t duration_s);
/* Borrowed; valid until the next call that changes t.  NULL if none. */
const pol_lease_t *pol_lease_get(const pol_lease_table_t *t, int64_t job_id);
/* Forget a job's lease (it ended or was requeued).  0, -1/ENOENT. */
int pol_lease_drop(pol_lease_table_t *t, int64_t job_id);
int pol_lease_count(const pol_lease_table_t *t);
/* The i-th lease (0 <= i < count; order unspecified), borrowed as above. */
const pol_lease_t *pol_lease_at(const pol_lease_table_t *t, int i);

/* True if the lease is ACTIVE and has run out (end <= now). */
bool pol_lease_expired(const pol_lease_t *l, int64_t now);
/* True if the lease is in GRACE and its requeue time has come. */
bool pol_lease_due(const pol_lease_t *l, int64_t now);

/*
 * Settle an expired lease after the auction: won -> renewed for
 * duration_s; lost -> GRACE, requeue at now + grace_s (the job keeps
 * running until then, to checkpoint).  0, -1/ENOENT|EINVAL.
 */
int pol_lease_settle(pol_lease_table_t *t, int64_t job_id, bool won,
		     int64_t now, int64_t duration_s, int64_t grace_s);

/* Drop every lease whose job is not in ids[0..n) (ended jobs).
 * O((n + leases) log n).  0, -1/EINVAL|ENOMEM (then nothing changes). */
int pol_lease_sweep(pol_lease_table_t *t, const int64_t *ids, int n);

#endif
