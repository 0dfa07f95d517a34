/*
 * pol_fed.h - MAST's global scheduling across the clusters of a Slurm
 * federation, as pure core code: the score of one cluster's plan for one
 * job, the batched auction that gives every pending federated job to the
 * best plan, the dataset catalog, and the slow path that moves dataset
 * replicas by hill climbing so that demand meets supply.
 *
 * The federation helper (contrib/agorad) fills these structs from Slurm
 * (will-run answers, node states, the merged credit ledger) and applies
 * the result (Clusters=<winner>, release); agora-sim fills them from a
 * trace.  Pure: no Slurm header, no clock (times are arguments), no
 * logging, no global state.
 *
 * Ownership: callers own everything they pass; results are written into
 * caller-provided arrays or into objects the caller frees with the
 * matching *_free/_destroy.
 */
#ifndef POL_FED_H
#define POL_FED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agora_err.h"

#define POL_FED_NAME_LEN 64
#define POL_FED_WHY_LEN  256

/* ---- the catalog: which cluster holds which dataset ------------------ */

typedef struct pol_fed_dataset {
	char name[POL_FED_NAME_LEN];
	double bytes;   /* size of one replica */
	uint64_t where; /* bit c: cluster c holds a replica (<= 64 clusters) */
} pol_fed_dataset_t;

typedef struct pol_fed_site {
	char name[POL_FED_NAME_LEN]; /* Slurm ClusterName */
	double storage_bytes;        /* quota for replicas (0: unlimited) */
	double link_bytes_per_s;     /* transfer rate into this cluster (> 0) */
} pol_fed_site_t;

/* An account's default dataset: the data its jobs read when the job does
 * not name one (no script change needed). */
typedef struct pol_fed_account {
	char name[POL_FED_NAME_LEN]; /* Slurm account */
	int dataset;                 /* index into datasets */
} pol_fed_account_t;

typedef struct pol_fed_catalog {
	pol_fed_site_t *sites;
	int n_sites;
	pol_fed_dataset_t *datasets;
	int n_datasets;
	pol_fed_account_t *accounts; /* may be NULL when n_accounts is 0 */
	int n_accounts;
} pol_fed_catalog_t;

/*
 * Parse a catalog (JSON text; format in doc/federation.md) named 'name'
 * for errors ("name: datasets[3].where: unknown cluster 'c9'").
 * 0, or -1 with errno EINVAL/ENOMEM and err set; *cat unchanged on error.
 */
int pol_fed_catalog_parse(const char *text, const char *name,
			  pol_fed_catalog_t *cat, agora_err_t *err);
/* JSON text of a catalog (malloc'ed, caller frees), NULL/ENOMEM. */
char *pol_fed_catalog_format(const pol_fed_catalog_t *cat);
void pol_fed_catalog_free(pol_fed_catalog_t *cat);
/* Index of a dataset / site by name, -1 if unknown. */
int pol_fed_catalog_dataset(const pol_fed_catalog_t *cat, const char *name);
int pol_fed_catalog_site(const pol_fed_catalog_t *cat, const char *name);
/*
 * The dataset a job's comment names: the word after "dataset=" (up to a
 * space, ',' or ';'), cut to size - 1 characters, into out ("" if none).
 */
void pol_fed_comment_dataset(const char *comment, char *out, size_t size);
/*
 * The dataset a job reads: the one it names (its comment's dataset=NAME),
 * else its account's default, else none.  named may be NULL or "".
 * The catalog index, or -1: none, or (with *unknown set, may be NULL) a
 * named dataset the catalog does not have.
 */
int pol_fed_catalog_job_dataset(const pol_fed_catalog_t *cat, const char *named,
				const char *account, bool *unknown);
/* Seconds to bring dataset d to cluster c (0 if c holds a replica). */
double pol_fed_transfer_s(const pol_fed_catalog_t *cat, int d, int c);

/* ---- one job, one cluster's plan for it ----------------------------- */

typedef struct pol_fed_job {
	int64_t id;
	char team[POL_FED_NAME_LEN]; /* the app key (pol_app_key) */
	int gpus;                    /* total GPUs asked */
	int dataset;                 /* catalog index, -1: none */
	uint64_t eligible;           /* bit c: cluster c may run it */
	uint64_t hw_match;           /* bit c: cluster c has what it asked for
					(features/GPU type); 0 bits are
					eligible but a worse match */
	int64_t submit;              /* s */
	double priority;             /* Slurm priority band/value: higher
					first in the batch order */
	int64_t hold_s;              /* s it holds its GPUs once started
					(its time limit; agora-sim: its run
					time); 0 unknown: no queue term */
} pol_fed_job_t;

/* What a cluster answered (will-run) and what the helper knows of it. */
typedef struct pol_fed_plan {
	bool valid;           /* false: no answer (cluster down, refused) */
	int64_t start;        /* earliest start, s (will-run) */
	int n_preempt;        /* jobs it would preempt */
	double locality;      /* mean locality level of the planned GPUs,
			       0 (NVLink) .. 5 (cross-cluster); <0 unknown */
	double team_credit;   /* the team's credit fraction, credit/quota in
			       [-1, 1] (one federation-wide ledger) */
	int start_src;        /* where start came from (pol_fed_start_src_t) */
	int64_t will_run;     /* START_ESTIMATE, START_DEEP: what will-run
				 said, s */
	double queue_per_gpu; /* jobs waiting on the cluster for GPUs, per
				 GPU of the cluster (0: none or unknown) */
	double transit_s;     /* s until the job's copy, pinned now, would
				 reach the cluster: the copies on their way
				 there (0: its origin, or copies arrive
				 with their pins; pol_fed_inflight.h) */
	double transit_per_job; /* s each job the cluster wins in this
				   round adds to that (its seconds per
				   copy; 0 at the origin) */
	int gpus_total;         /* the cluster's GPUs (0: unknown: the jobs
				   the round gives it before this one move
				   neither the start nor the queue term) */
} pol_fed_plan_t;

/* ---- start times that cannot be true -------------------------------- */

typedef enum pol_fed_start_src {
	POL_FED_START_UNSAID = 0, /* not shown (agora-sim) */
	POL_FED_START_WILL_RUN,   /* Slurm's will-run answer */
	POL_FED_START_ESTIMATE,   /* will-run's answer could not be true:
				     pol_fed_start_estimate's instead */
	POL_FED_START_DEEP,       /* the same, on a deep queue: the
				     estimate is the horizon */
} pol_fed_start_src_t;

/* A horizon for time limits Slurm does not bound (UNLIMITED): a week. */
#define POL_FED_HORIZON_S (7 * 86400)

/* A job's time limit of limit_s seconds as the federation counts it: the
 * limit, or POL_FED_HORIZON_S for none (<= 0: unlimited) and for one
 * beyond the horizon (agorad's survey, agora-sim's, the hold's cap). */
int64_t pol_fed_limit_s(int64_t limit_s);

/* A running job as the estimate sees it: its GPUs and the end of its
 * time limit (a job without a limit: now + POL_FED_HORIZON_S). */
typedef struct pol_fed_busy {
	int64_t end;
	int gpus;
} pol_fed_busy_t;

/* What the estimate knows of a cluster. */
typedef struct pol_fed_cluster_load {
	int gpus_total, gpus_free; /* on usable nodes, free = not in use */
	int gpus_queued; /* GPUs of pending jobs that may start first (not
			    held, waiting only for resources) */
	const pol_fed_busy_t *busy; /* running jobs (any order) */
	int n_busy;
	double queued_gpu_s; /* pending jobs that may run (not held): the
				sum of GPUs x time limit (unlimited:
				POL_FED_HORIZON_S) */
	int64_t max_limit_s; /* the longest time limit of any job on the
				cluster, unlimited as POL_FED_HORIZON_S */
	int jobs_queued;     /* pending GPU jobs that may run (the ones in
			    gpus_queued): the queue term's queue length */
} pol_fed_cluster_load_t;

/*
 * agorad's own start estimate for a job of gpus GPUs: the earliest time at
 * which the free GPUs now (less the queued ones) plus those of running
 * jobs at the ends of their limits reach gpus (now if they do already).
 * When the queued jobs keep them short even then (a deep queue: the job
 * waits for queued jobs to end, at run times nobody knows): now +
 * POL_FED_HORIZON_S, the same for every such cluster, so that the
 * auction's queue term chooses among them (with no queued work known:
 * the last running job's end; the demo saw Slurm answer +1e9 s there, and
 * an estimate of "never" let that stand).
 * INT64_MAX only when the job asks more GPUs than the cluster has.
 * Ignores node boundaries.
 */
int64_t pol_fed_start_estimate(const pol_fed_cluster_load_t *l, int gpus,
			       int64_t now);

/*
 * Whether a will-run start for a job of gpus GPUs could be true: it is no
 * later than the estimate above plus the work queued ahead spread over the
 * cluster's GPUs plus the longest job limit (a schedule of every job ahead
 * of it at their limits ends by then, fragmentation aside).  Answers
 * beyond that (Slurm answers "2058" for jobs without a limit behind one
 * that waits for its begin time) are not.
 */
/* Slack on that bound: a will-run answer may lie a little beyond it (jobs
 * run past their limit by OverTimeLimit and KillWait, the controller
 * rounds and schedules in intervals).  CI saw +658 s against a 600 s bound
 * for an --exclusive job that fit the free GPUs but no free node. */
#define POL_FED_START_SLACK_S 300
bool pol_fed_start_plausible(const pol_fed_cluster_load_t *l, int gpus,
			     int64_t start, int64_t now);

/* Whether a will-run of a job of gpus GPUs cannot change its bid on a
 * cluster with load l: the cluster cannot preempt (can_preempt false:
 * its PreemptType is preempt/none) and its queue is deep for the job
 * (pol_fed_start_estimate's horizon).  Then pol_fed_start_choose bids
 * the horizon whatever the answer says: an earlier start without
 * preemption gives way to the estimate, a later one is capped at the
 * horizon. */
bool pol_fed_willrun_moot(const pol_fed_cluster_load_t *l, int gpus,
			  bool can_preempt, int64_t now);

/* The start the auction uses for will-run answer start: it, or (src
 * START_ESTIMATE) the estimate when it cannot be true: too late (above),
 * or, without preempting (n_preempt 0), earlier than the estimate, which
 * puts the jobs queued there first ("now" while the GPUs free now, less
 * the queued ones, do not suffice, or a later start ahead of the queued
 * ones: will-run ignores pending jobs, those agorad pinned here a round
 * ago among them; an answer within POL_FED_NOW_SLACK_S is "now").  *src
 * gets which (START_DEEP: the estimate, a deep queue's horizon).  Either
 * is capped at now + POL_FED_HORIZON_S: beyond the horizon that job
 * limits are capped at, starts are not told apart (a cluster full of
 * jobs without --time bids "a week", not two). */
int64_t pol_fed_start_choose(const pol_fed_cluster_load_t *l, int gpus,
			     int64_t start, int n_preempt, int64_t now,
			     int *src);

/*
 * Whether a cluster whose nodes carry the features in have (a list
 * separated by ',', the union over its usable nodes) matches the soft
 * feature request want (Slurm's --prefer, the --constraint syntax): every
 * '&'- or ','-separated term must be present, a term "a|b" needs one of
 * its alternatives; brackets and counts ("[a|b]", "a*2") are read as the
 * plain names.  An empty or NULL want matches everything.
 */
bool pol_fed_features_match(const char *want, const char *have);

/* Weights of the score (agora.conf Fed* keys; defaults in
 * pol_fed_weights_default()).  A plan's cost, lower is better:
 *   wait + transfer (s, the data's transfer if the cluster lacks it)
 *   + w_queue * queue_per_gpu * gpus * (hold_s + transfer)
 *   + w_preempt * n_preempt + w_locality * locality
 *   + w_hw * (cluster is not a hardware match)
 *   - w_credit * team_credit
 * The queue term is the wait the job adds to the jobs queued behind it
 * (pol_fed_queue_s).  The wait counts from the later of the plan's start
 * and the copy's arrival (pol_fed_plan_t.transit_s, plus transit_per_job
 * for each job the cluster has won before it in the same auction). */
typedef struct pol_fed_weights {
	double w_preempt;    /* s per preempted job */
	double w_locality;   /* s per locality level */
	double w_hw;         /* s for a hardware mismatch */
	double w_credit;     /* s per unit of credit fraction */
	double taken_wait_s; /* s of waiting assumed for a plan that would
				start now on GPUs an earlier job of the same
				round has already won; once the round has
				given the cluster more GPUs than it had
				free, each free GPU's worth more waits
				that long again (see pol_fed_auction) */
	double w_queue;      /* weight of the queue term (1: the estimate
				as it is; 0: off) */
} pol_fed_weights_t;

void pol_fed_weights_default(pol_fed_weights_t *w);

/*
 * The wait a job adds to the others on a cluster with a queue: while it
 * holds gpus GPUs for hold_s + transfer_s seconds, that GPU-time is not
 * there for the jobs behind it; spread over the cluster's GPUs it delays
 * the queue's drain by gpus * (hold_s + transfer_s) / G, and about as many
 * jobs as wait there now (queue_per_gpu * G) arrive into that backlog, so
 * the delay summed over them is
 *     queue_per_gpu * gpus * (hold_s + transfer_s)       (seconds).
 * 0 when the cluster has no queue, the hold is unknown (<= 0) or an
 * argument is negative or not a number.  With comparable queues per GPU
 * the term differs between clusters only by the transfer (data locality
 * wins); where one cluster's queue is longer its extra cost levels load.
 */
double pol_fed_queue_s(double queue_per_gpu, int gpus, double hold_s,
		       double transfer_s);

/* The queue term's queue length of a cluster (pol_fed_plan_t.queue_per_gpu):
 * its jobs_queued per GPU of gpus_total; 0 when it has no GPUs or no
 * such job (or l is NULL). */
double pol_fed_queue_per_gpu(const pol_fed_cluster_load_t *l);

/* What agorad takes of a time limit for the hold (pol_fed_job_t.hold_s):
 * limits overstate run times, and the simulator's f-model draws a limit
 * as run time x U(1, 2), where run / limit averages ln 2 = 0.693; so the
 * hold is that share of the limit, the limit capped at POL_FED_HORIZON_S
 * first. */
#define POL_FED_HOLD_OF_LIMIT 0.693
/* The hold of a job whose time limit is limit_s seconds (<= 0: none, or
 * unlimited): POL_FED_HOLD_OF_LIMIT x min(limit_s, POL_FED_HORIZON_S),
 * rounded to the second and at least 1 s; 0 (unknown: no queue term) for a
 * job without a limit, which says nothing of its hold. */
int64_t pol_fed_hold_of_limit(int64_t limit_s);
/* The hold of a job whose group's recent completed jobs ran hist_s
 * seconds on average (pol_estimate.h's history; <= 0 or not finite: no
 * history): that mean, capped by the limit (limit_s > 0) and by
 * POL_FED_HORIZON_S, rounded to the second and at least 1 s.  Without a
 * history, pol_fed_hold_of_limit(limit_s).  A limit says how long a job
 * may run; what the same user's jobs did run says how long it will, and
 * only a limit that means something (doc/evaluation.md, "What the plans
 * know") makes 0.693 x limit a hold. */
int64_t pol_fed_hold_of(int64_t limit_s, double hist_s);

/*
 * The cost of plan p for job j on cluster c (see pol_fed_weights_t);
 * +INFINITY when the plan is invalid or c is not eligible.  why (may be
 * NULL) gets a one-line account of the terms, e.g.
 * "c2: start +40s, data local, 0 preempted, locality 1.0, credit 0.62".
 */
double pol_fed_cost(const pol_fed_weights_t *w, const pol_fed_catalog_t *cat,
		    const pol_fed_job_t *j, int c, const pol_fed_plan_t *p,
		    int64_t now, char *why, size_t why_len);

/* ---- the batched auction -------------------------------------------- */

/* A will-run start this close to now is "now" for the auction's supply:
 * slurmctld answers at its own clock, a second or two after the round's
 * now (a burst on the harness saw every plan at "+1s", so no job of the
 * round consumed a free GPU and every tie went to the first cluster). */
#define POL_FED_NOW_SLACK_S 5

typedef struct pol_fed_award {
	int64_t job_id;
	int cluster;   /* winner, -1: no valid plan (stays at its origin) */
	double cost;   /* the winner's cost */
	double second; /* the runner-up's cost (INFINITY if none) */
	char why[POL_FED_WHY_LEN];
} pol_fed_award_t;

/*
 * One round for all pending federated jobs (MAST's global scheduler):
 * jobs in (priority desc, team credit desc, submit, id) order each take the
 * cluster of lowest cost; a cluster's free GPUs (free[c]) are consumed by
 * the jobs it wins with start <= now + POL_FED_NOW_SLACK_S, so later jobs
 * see the updated supply (a won plan that would start now on GPUs already
 * given away costs as waiting instead: taken_wait_s x (1 + the GPUs
 * already given beyond free[c], over free[c]), so that a round's overflow
 * goes to the clusters by their free GPUs rather than all to the lowest
 * index).  A job the round gives a cluster that does not start it now
 * (a plan that starts later, or GPUs taken) queues there: for the later
 * jobs of the round it joins the cluster's queue term (one more job per
 * gpus_total), and a plan there that starts later starts later still by
 * its GPUs x hold_s spread over gpus_total (without it a round sent every
 * such job to the one cluster whose will-run was a few seconds sooner).
 * plans is n_jobs x n_clusters, row-major.
 * out[n_jobs] receives one award per job, in the jobs' order.
 * free_gpus may be NULL: supply unknown, nothing is consumed.  Ties go to
 * the lower cluster index.  A plan with locality < 0 (unknown) counts as
 * level 3 (same node, across sockets).
 * 0, or -1/EINVAL (bad sizes, n_clusters > 64) or ENOMEM.
 */
int pol_fed_auction(const pol_fed_weights_t *w, const pol_fed_catalog_t *cat,
		    const pol_fed_job_t *jobs, int n_jobs,
		    const pol_fed_plan_t *plans, int n_clusters,
		    const int *free_gpus, int64_t now, pol_fed_award_t *out);

/* ---- MAST's slow path: replica placement ---------------------------- */

/* Demand (GPUs asked by pending+running jobs whose data is on it, split
 * evenly over a dataset's replicas) and supply (GPUs) per cluster. */
typedef struct pol_fed_load {
	double demand_gpus[64];
	double supply_gpus[64];
} pol_fed_load_t;

/*
 * Demand and supply per cluster of catalog cat (the split described
 * above): demand[d] is dataset d's GPU demand (n_datasets entries),
 * supply[c] cluster c's GPUs (n_sites entries).  Returns the worst
 * demand/supply (INFINITY where demand meets no supply), or -1/EINVAL.
 */
double pol_fed_load_compute(const pol_fed_catalog_t *cat, const double *demand,
			    const double *supply, pol_fed_load_t *load);

/* One move of the plan: copy dataset d from cluster 'from' to 'to', or,
 * with to == -1, drop the replica at 'from'.  Moving a replica is an add
 * followed by a drop. */
typedef struct pol_fed_move {
	int dataset;
	int from, to; /* add a replica at 'to' copied from 'from'; or, with
			 to == -1, drop the replica at 'from' */
	double bytes;
} pol_fed_move_t;

typedef struct pol_fed_place_result {
	pol_fed_move_t *moves;
	int n_moves;
	double worst_before, worst_after; /* max over clusters of
					     demand/supply */
	pol_fed_load_t before, after;
} pol_fed_place_result_t;

/*
 * Hill climbing over replica placement: starting from cat, repeatedly
 * apply the single move (add or drop one replica) that lowers the worst
 * cluster's demand/supply most while every cluster's replicas fit its
 * storage quota, until no move helps or max_moves is reached.  demand[d]
 * is dataset d's GPU demand; supply[c] cluster c's GPUs.  cat is updated
 * in place only if apply is true.  Deterministic.  max_moves counts the
 * moves of the plan (a replica moved is two: an add and a drop); 0 gives
 * the loads only (INT_MAX: no limit).  A dataset with no replica keeps
 * none (there is nothing to copy) and its demand counts nowhere.
 * 0, or -1/EINVAL|ENOMEM.
 */
int pol_fed_place(pol_fed_catalog_t *cat, const double *demand,
		  const double *supply, int max_moves, bool apply,
		  pol_fed_place_result_t *res);
void pol_fed_place_result_free(pol_fed_place_result_t *res);

#endif
