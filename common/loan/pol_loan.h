/*
 * pol_loan.h - loaning idle inference nodes to training (doc/loaning.md):
 * the pure core behind agorad's loans and agora-sim's loaning scenario.
 *
 *  - reclaim: which loaned nodes to give back to inference, and which
 *    training jobs that preempts or shrinks.  Elastic jobs shrink first
 *    (no work is lost), then the least-cost set of nodes is cleared: the
 *    cost of a job is the GPU-hours it loses if preempted (work since its
 *    last checkpoint plus the restart overhead, on all its GPUs).  Jobs
 *    that cannot be requeued (--no-requeue) are never chosen: the nodes
 *    they run on are not returned.  Orders: least-cost (exact or greedy
 *    with a stated bound), Slurm's (the nodes that need the fewest
 *    victims), random, most-recent (youngest jobs first).
 *  - allocation: extra nodes to elastic jobs by a multiple-choice knapsack
 *    on JCT reduction (exact DP, or greedy on convex hulls with a stated
 *    bound), best-fit-decreasing mapping of workers to servers, scaling
 *    curves.
 *  - demand: the diurnal inference demand model (a formula, seeded noise).
 *  - sim: the loaning scenario of agora-sim, a discrete-event loop over a
 *    training pool and an inference pool (pol_loan_sim.c).
 *
 * Pure C (libc, libm): no clock, no I/O, no globals.  Every function
 * returns 0 or -1 with errno (EINVAL bad input, ENOMEM); outputs are
 * caller-allocated unless said otherwise.
 */
#ifndef POL_LOAN_H
#define POL_LOAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- reclaim */

typedef enum pol_loan_order {
	POL_LOAN_LEAST_COST = 0, /* least GPU-hours lost (mode below) */
	POL_LOAN_SLURM,          /* fewest victim jobs per node, Slurm's */
	POL_LOAN_RANDOM,         /* seeded random node order */
	POL_LOAN_RECENT,         /* nodes whose jobs started last first */
} pol_loan_order_t;

typedef enum pol_loan_mode {
	POL_LOAN_AUTO = 0, /* exact when it is cheap enough, else greedy */
	POL_LOAN_EXACT,    /* exact if every component <= 16 nodes */
	POL_LOAN_GREEDY,   /* cheapest nodes first: <= d x optimum */
} pol_loan_mode_t;

/* A training job that runs on loaned nodes. */
typedef struct pol_loan_job {
	int64_t id;
	double cost;      /* GPU-hours lost if preempted now (>= 0) */
	int64_t start;    /* when its current run started (RECENT order) */
	int n_nodes;      /* loaned nodes it runs on */
	const int *nodes; /* their indices in [0, n_loaned) */
	int shrinkable;   /* loaned nodes it can give up by shrinking */
	bool requeue;     /* false: --no-requeue, never preempted */
	/* its current run is a restart after it was a reclaim's victim:
	 * least-cost preempts it again only when every choice that spares
	 * it costs more than POL_LOAN_REPEAT_TOL above the least cost */
	bool repeat;
} pol_loan_job_t;

/* least-cost's tolerance for sparing a repeat victim (pol_loan_job_t) */
#define POL_LOAN_REPEAT_TOL 0.05

typedef struct pol_loan_reclaim_in {
	int n_loaned;               /* loaned nodes, indices 0..n_loaned) */
	int need;                   /* nodes to give back */
	const pol_loan_job_t *jobs; /* the jobs on loaned nodes */
	int n_jobs;
	pol_loan_order_t order;
	pol_loan_mode_t mode; /* POL_LOAN_LEAST_COST only */
	bool shrink_first;    /* elastic jobs shrink before preemption */
	uint64_t seed;        /* POL_LOAN_RANDOM */
	/* POL_LOAN_LEAST_COST: the least-cost choice among those with the
	 * fewest victims (victims first, GPU-hours lost second); false: the
	 * least GPU-hours lost at any victim count */
	bool fewest_first;
} pol_loan_reclaim_in_t;

enum { POL_LOAN_KEEP = 0, POL_LOAN_SHRINK = 1, POL_LOAN_PREEMPT = 2 };

typedef struct pol_loan_reclaim_out {
	/* caller-allocated, n_loaned entries: 1 if the node goes back */
	unsigned char *node_back;
	/* caller-allocated, n_jobs entries: POL_LOAN_KEEP, _SHRINK or
	 * _PREEMPT; shrink_by[j] = loaned nodes job j gives up by
	 * shrinking (the ones in node_back among its nodes) */
	int *action;
	int *shrink_by;
	int returned;  /* nodes given back (need, or fewer: short) */
	int short_by;  /* need - returned when it cannot be met */
	int preempted; /* jobs preempted */
	int shrunk;    /* jobs shrunk */
	double cost;   /* GPU-hours lost: sum of the preempted jobs' cost */
	bool exact;    /* the least-cost choice is proven optimal */
	/* greedy least-cost: cost <= bound_factor x optimum, where
	 * bound_factor = the most cleared-candidate nodes of one victim
	 * (1: greedy is exact) */
	int bound_factor;
} pol_loan_reclaim_out_t;

/*
 * Choose the nodes to give back.  Idle loaned nodes go first at no cost.
 * With shrink_first, elastic jobs then give up to `shrinkable` of their
 * loaned nodes (nodes emptied this way go back at no cost).  The rest is
 * met by clearing nodes: every job on a cleared node is preempted, and a
 * node with a job that cannot be requeued is never cleared.  Least-cost
 * exact: the nodes linked by multi-node jobs form components; each
 * component's cheapest way to clear c of its nodes is enumerated (<= 16
 * nodes) and the components are combined by a covering DP: optimal.
 * Greedy: nodes in order of the summed cost of their jobs, which is at
 * most d x optimum (d = the most candidate nodes one victim runs on;
 * doc/loaning.md has the proof).  Least-cost never preempts a job
 * marked repeat (a victim again in a row) when a choice that spares every
 * repeat job returns as many nodes within POL_LOAN_REPEAT_TOL of the
 * cost: that choice is taken (exact is then false).  With fewest_first
 * the count comes first: the choice has the fewest victims that meet the
 * need (exactly, where the exact mode applies) and, among those, the
 * least cost; the repeat rule then takes a choice that spares the repeat
 * jobs only with no more victims and within POL_LOAN_REPEAT_TOL of the
 * cost.  out->cost is the real GPU-hours in either case.
 */
int pol_loan_reclaim(const pol_loan_reclaim_in_t *in,
		     pol_loan_reclaim_out_t *out);

/* The cost of preempting a job now, GPU-hours: gpus x (the wall time
 * since its last checkpoint + restart_s) / 3600.  ckpt_s > 0: checkpoints
 * every ckpt_s since the run started; 0: none (all of the run is lost);
 * -1: continuous (only the restart is lost). */
double pol_loan_preempt_cost(int gpus, int64_t run_s, int64_t ckpt_s,
			     int64_t restart_s);

/* A reclaim that may wait for checkpoints (pol_loan_wait.c): job j of
 * the reclaim runs on gpus[j] GPUs and its current run has lasted run_s[j]
 * now; waits of 0, step_s, 2 step_s, ... up to max_wait_s are tried. */
typedef struct pol_loan_wait_in {
	const int *gpus;
	const int64_t *run_s;
	int64_t ckpt_s, restart_s; /* as pol_loan_preempt_cost */
	int64_t step_s;            /* > 0 (a poll) */
	int64_t max_wait_s;        /* >= 0 */
	/* the jobs cost 1 + 1e-4 x their GPU-hours (the fewest-victims
	 * bound of agora-sim's --fewest-victims) */
	bool unit_cost;
} pol_loan_wait_in_t;

/*
 * When to reclaim and whom, chosen together: at each wait w every job is
 * valued at what it loses if preempted w from now (pol_loan_preempt_cost
 * on run_s + w; in->jobs' own costs are ignored) and pol_loan_reclaim(in)
 * chooses; the choice with the fewest victims, then the least GPU-hours
 * lost at its w, then the earliest w, is left in out (out->cost: its
 * GPU-hours at w) and w in *wait_s.  *wait_s > 0: waiting that long loses
 * less (the caller waits one step and asks again).  Valuing each victim at
 * its own best time instead sums minima that no single time reaches (two
 * jobs on one node checkpoint at different times).  Returns 0, or -1 with
 * errno EINVAL / ENOMEM.
 */
int pol_loan_reclaim_wait(const pol_loan_reclaim_in_t *in,
			  const pol_loan_wait_in_t *w,
			  pol_loan_reclaim_out_t *out, int64_t *wait_s);

/* ------------------------------------------------------------ allocation */

/* A multiple-choice knapsack group: one option is taken per group; option
 * k uses weight[k] (>= 1) and gains value[k].  Taking none is the implicit
 * option (0, 0). */
typedef struct pol_mckp_group {
	int n;
	const int *weight;
	const double *value;
} pol_mckp_group_t;

/*
 * Maximize the summed value of one option per group with summed weight <=
 * cap.  choice[g] = the option taken in group g, or -1 for none.
 * pol_mckp_dp: exact, O(groups x cap x options).  pol_mckp_greedy:
 * each group's options reduced to the upper convex hull of (weight,
 * value) with (0, 0); hull increments are taken by decreasing value per
 * unit weight while they fit.  Its value is >= the optimum minus *bound,
 * the value of the first increment that did not fit (0 if none), since
 * the LP optimum is the greedy plus a fraction of that increment.
 * *value gets the total value (either may be NULL).
 */
int pol_mckp_dp(const pol_mckp_group_t *g, int n, int cap, int *choice,
		double *value);
int pol_mckp_greedy(const pol_mckp_group_t *g, int n, int cap, int *choice,
		    double *value, double *bound);

/*
 * Best-fit decreasing: items of size[i] (> 0) in decreasing size (ties:
 * lower index first) each go to the bin with the least free capacity that
 * still holds it (ties: lower index).  free_cap[0..m) is updated;
 * bin[i] = the bin, or -1 if no bin held it.  Returns the items placed.
 */
int pol_loan_bfd(const int *size, int n, int *free_cap, int m, int *bin);

/* Speed-up of a job on n workers, relative to one: the default
 * sublinear curve n / (1 + serial (n - 1)) (Amdahl), serial in [0, 1). */
double pol_loan_speedup(int n, double serial);

/*
 * Elastic growth: which jobs get how many of cap free whole nodes.  Job i
 * runs on cur nodes and may run on up to max; left_s is its estimated
 * compute time left at cur nodes, resize_s the wall time a resize costs it
 * (work since its last checkpoint plus the restart), gpn its GPUs per node.
 * Growing by x nodes reduces its time left by
 *   left_s - (resize_s + left_s x speedup(cur gpn) / speedup((cur + x) gpn))
 * (pol_loan_speedup with serial).  One multiple-choice knapsack group per
 * job with cur < max, options x = 1..max-cur with a positive reduction;
 * exact (pol_mckp_dp) while groups x cap x options <= 4e6, else the hull
 * greedy (within *bound of the optimum).  extra[i] = nodes job i gains (0:
 * none); *gain = the summed reduction, *exact = the DP was used, *bound =
 * the greedy's bound (0 for the DP); any of the three may be NULL.
 * Returns 0, or -1 with errno EINVAL (bad job or argument) / ENOMEM.
 */
typedef struct pol_loan_grow_job {
	int cur;         /* nodes it runs on now, >= 1 */
	int max;         /* most nodes it may run on, >= cur */
	double left_s;   /* compute time left at cur nodes, >= 0 */
	double resize_s; /* wall time a resize costs it */
	int gpn;         /* GPUs per node, >= 1 */
} pol_loan_grow_job_t;

/*
 * Time left of a job that has run attained_s so far (all its runs): "a job
 * that has run t runs about t more" (for run times with a Pareto tail of
 * index 1, the median time left of a job that has run t is t), capped by
 * limit_s - attained_s when a time limit is known (limit_s > 0); never
 * below 0.  agorad's rule too.
 */
double pol_loan_left_attained(double attained_s, double limit_s);

/* The JCT reduction of growing j by x nodes (the formula above). */
double pol_loan_grow_gain(const pol_loan_grow_job_t *j, int x, double serial);

int pol_loan_grow(const pol_loan_grow_job_t *jobs, int n, int cap,
		  double serial, int *extra, double *gain, bool *exact,
		  double *bound);

/* ---------------------------------------------------------------- demand */

/*
 * The diurnal inference demand, nodes needed at time t (s, UTC):
 *   base(t) = peak x (r + (1 - r) (1 + cos(2 pi (t - peak_hour h) / day)) / 2)
 *   demand(t) = clamp(base(t) x (1 + noise x z(minute)), 0, nodes)
 * with r = 1 / ratio (trough / peak) and z a standard normal drawn from
 * (seed, minute of t): the same t gives the same demand.
 */
typedef struct pol_loan_demand {
	int nodes;        /* inference pool size */
	double peak;      /* nodes needed at the daily peak */
	double ratio;     /* peak / trough, >= 1 */
	double noise;     /* relative standard deviation, >= 0 */
	double peak_hour; /* hour of the day of the peak, UTC */
	uint64_t seed;
} pol_loan_demand_t;

/* Defaults for a pool of `nodes`: peak 0.85 nodes, ratio 3, noise 0.05,
 * peak at 14:00 UTC, seed 1. */
void pol_loan_demand_default(pol_loan_demand_t *d, int nodes);
/* Nodes needed at t (a real number; callers round up). */
double pol_loan_demand_at(const pol_loan_demand_t *d, int64_t t);

/*
 * The demand's local trend: the least-squares line through the last n
 * demand readings v[0..n-1] (oldest first, one every step_s seconds).
 * Returns the line's value ahead_s seconds after the last reading plus z
 * standard deviations of the readings around the line (z <= 0: none), and
 * never less than the last reading.  A falling line counts as flat (the
 * readings' mean): a dip is not a reason to lend.  With n < 3 (no
 * deviation to measure), step_s <= 0 or ahead_s < 0 it returns the last
 * reading; with n <= 0 or no readings, 0.  A reclaim that starts before
 * demand arrives needs only a rising ramp, not a model of the day.
 */
double pol_loan_demand_ahead(const double *v, int n, double step_s,
			     double ahead_s, double z);
/* The same on readings taken at times t[0..n-1] (s, non-decreasing; agorad's
 * rounds are not evenly spaced when one runs late): the line's value
 * ahead_s after t[n-1].  Times out of order: the last reading. */
double pol_loan_demand_ahead_at(const double *t, const double *v, int n,
				double ahead_s, double z);

/* the longest wait for checkpoints by default: half the checkpoint
 * interval of the default model (doc/evaluation.md has 240, 900 and
 * 1800 s on the three windows); agorad's LoanCheckpointWait defaults to
 * half of LoanCheckpointInterval alike */
#define POL_LOAN_CKPT_WAIT_S 900
/* the demand readings a reclaim ahead fits its trend to, s */
#define POL_LOAN_TREND_FIT_S 1800
/* the default margin of a reclaim ahead, residual deviations */
#define POL_LOAN_AHEAD_Z 1.5

/* -------------------------------------------------------------- scenario */

typedef enum pol_loan_variant {
	POL_LOAN_V_NONE = 0,   /* no loaning */
	POL_LOAN_V_SLURM,      /* loaning, Slurm's victim order */
	POL_LOAN_V_LEAST_COST, /* loaning, least-cost reclaim */
	POL_LOAN_V_ELASTIC,    /* least-cost reclaim + elastic jobs */
	POL_LOAN_V_RANDOM,     /* loaning, random victims */
	POL_LOAN_V_RECENT,     /* loaning, most recent victims */
	POL_LOAN_N_VARIANTS
} pol_loan_variant_t;

/* "none", "slurm-order", "least-cost", "least-cost+elastic", "random",
 * "most-recent" */
const char *pol_loan_variant_name(pol_loan_variant_t v);
int pol_loan_variant_parse(const char *s, pol_loan_variant_t *v);

typedef struct pol_loan_sim_job {
	int64_t id;
	int tenant;       /* account index, >= 0 (the training scheduler's
			     fair share) */
	int64_t submit;   /* s */
	int64_t duration; /* s at the requested size */
	int gpus;         /* requested GPUs */
	bool elastic;     /* may run on [min, max] nodes (whole nodes) */
	bool requeue;     /* false: never runs on loaned nodes */
} pol_loan_sim_job_t;

typedef struct pol_loan_sim_params {
	int train_nodes, infer_nodes, gpn;
	pol_loan_demand_t demand;
	int headroom;       /* nodes kept above demand */
	int64_t poll_s;     /* agorad's period: demand read, loans adjusted */
	int64_t grace_s;    /* victim's signal grace before its node is back */
	int64_t deadline_s; /* ReclaimDeadline */
	int64_t ckpt_s;     /* checkpoint model, as sim_params_t */
	int64_t restart_s;
	double serial;      /* scaling curve of elastic jobs */
	int64_t min_grow_s; /* grow only jobs with at least this left */
	/* lend only nodes idle against the peak demand of the last
	 * lend_hold_s (reclaims follow the current demand) */
	int64_t lend_hold_s;
	int64_t t_from, t_to; /* metrics window (arrival window if both 0) */
	int64_t bin_s;        /* time series bin */
	uint64_t seed;
} pol_loan_sim_params_t;

void pol_loan_sim_params_default(pol_loan_sim_params_t *p);

typedef struct pol_loan_sim_result {
	int jobs, finished;
	double mean_queue_s, mean_jct_s, p99_jct_s;
	double util_train; /* training busy GPU-s / training-held GPU-s */
	double util_total; /* (training + inference busy) / all GPU-s */
	double train_busy_gpu_s, train_held_gpu_s, infer_busy_gpu_s;
	double total_gpu_s;
	int64_t preemptions, shrinks, grows, reclaims;
	double gpu_hours_lost;
	int slo_misses;      /* demand not met within the deadline */
	double unmet_node_s; /* node-seconds of demand above ready */
	double mean_loaned;  /* nodes on loan, time average */
	/* time series, n_bins bins of bin_s from t_from: demand, nodes on
	 * loan, training busy GPUs (means over the bin); malloc'd */
	int n_bins;
	int64_t bin_s, t0;
	double *s_demand, *s_loaned, *s_train_busy, *s_pending;
} pol_loan_sim_result_t;

int pol_loan_sim_run(const pol_loan_sim_job_t *jobs, int n,
		     pol_loan_variant_t v, const pol_loan_sim_params_t *p,
		     pol_loan_sim_result_t *res);
void pol_loan_sim_result_free(pol_loan_sim_result_t *res);

#endif
