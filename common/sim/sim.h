/*
 * sim.h - the trace-driven discrete-event simulator behind agora-sim,
 * pure (no clock, no I/O) so it is unit tested like any other module.
 *
 * sim_run() replays jobs on a cluster under one policy: events are job
 * arrivals, job completions and policy wake-ups; after every batch of
 * events at the same second the policy decides on a snapshot and the
 * simulator applies its actions (PREEMPT, RESIZE, START, in the order
 * given), checking them.  Invariants checked on every event (params.check,
 * on by default): never more GPUs busy than exist and a node's busy and
 * free GPUs partition it; gangs start whole (an allocation has exactly the
 * job's GPUs and shape); every job ends exactly once.  A violation stops
 * the run with -1/EPROTO and a message naming the policy, time and job.
 *
 * Models (defaults in sim_params_default(), references in doc/sim.md):
 *  - placement slowdown: a job runs at speed slowdown[ideal] /
 *    slowdown[level], level = pol_alloc_level() of its allocation and
 *    ideal = NVLINK when it fits one node, else LEAF.  A trace duration is
 *    the run time at the ideal placement.
 *  - runtime estimates: a job without a time limit gets
 *    limit = duration x U(1, limit_factor), rounded up to a minute (the
 *    f-model of Mu'alem & Feitelson).  Jobs are never killed at their
 *    limit: the limit only informs backfill.
 *  - elastic speed-up: on g GPUs a job requesting r runs at
 *    speed(g)/speed(r), speed(g) = g / (1 + serial x (g - 1)).
 *  - preemption: a restarted job redoes restart_s seconds of work
 *    (checkpoint reload).
 *
 * Metrics (sim_summarize(); rho is defined only there):
 *  - JCT = finish - submit; queueing delay = JCT - time running, i.e. all
 *    time pending, also after preemptions (first start - submit alone
 *    would call a preemptive policy's waiting zero; the per-job CSV has
 *    both).
 *  - rho of a job = JCT / T_ideal, T_ideal = its duration, i.e. the run
 *    time alone on an ideal consolidated allocation of its requested
 *    size (Themis' finish-time fairness with T_ideal measured alone).
 *    rho of a tenant = MEAN of its jobs' rho.  Reported: max and mean
 *    over tenants, and Jain's index over tenants
 *    (sum x)^2 / (n sum x^2).
 *  - utilization = busy GPU-seconds / (GPUs x window), over the makespan
 *    [first submit, last finish] and over the arrival window [first
 *    submit, last submit]; both are reported, named.
 *    util_arrival_net = util_arrival without the GPU-seconds spent
 *    redoing restart_s after preemptions (the preemption model's rework
 *    counts as busy in util_arrival).
 *  - fragmentation = time average, over the makespan, of the fraction of
 *    GPUs that are free while the pending head job (oldest pending) does
 *    not fit although free GPUs >= its size.
 *  - locality: mean_locality_level = mean over finished jobs of the worst
 *    pol_level_t of their allocations (0 nvlink .. 5 cluster);
 *    mean_locality_level_multi the same over jobs of more than one GPU
 *    (1-GPU jobs are always level 0).
 *
 * Ownership: sim_run() borrows the cluster (it works on a copy), jobs and
 * policy; it fills *res, which the caller releases with sim_result_free().
 * sim_summarize() fills a sim_summary_t released with sim_summary_free().
 */
#ifndef SIM_H
#define SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "agora_err.h"
#include "pol_model.h"
#include "pol_policy.h"

typedef struct sim_job {
	int64_t id;             /* the trace's id (for output) */
	int tenant;             /* index into the trace's tenant names */
	int64_t submit;         /* s */
	int64_t duration;       /* s, at the requested size, ideal placement */
	int gpus;               /* total GPUs requested */
	int nodes, gpn;         /* explicit gang shape, nodes = 0: any */
	int min_gpus, max_gpus; /* elastic range (0 = rigid) */
	int64_t time_limit;     /* s; 0 = drawn from the model */
	int band;
	int64_t priority;
	int dataset; /* -1 = none */
	pol_pool_t pool;
} sim_job_t;

typedef struct sim_progress {
	int64_t now, t0;
	int done, n, pending, running;
	int64_t events;
} sim_progress_t;

typedef void (*sim_progress_f)(void *arg, const sim_progress_t *p);

typedef struct sim_params {
	double slowdown[POL_N_LEVELS];
	double limit_factor;   /* >= 1 */
	double elastic_serial; /* in [0, 1) */
	int64_t restart_s;
	uint64_t seed;
	int64_t bin_s;          /* utilization time series bin */
	bool check;             /* invariants on every event */
	int64_t progress_every; /* decisions between progress calls */
	sim_progress_f progress;
	void *progress_arg;
	const pol_placer_t *frag_placer; /* head-fit test; NULL = stock */
} sim_params_t;

void sim_params_default(sim_params_t *p);

typedef struct sim_job_out {
	int64_t first_start; /* -1 if never started */
	int64_t finish;      /* -1 if never finished */
	int64_t limit;       /* the time limit used */
	int preemptions;
	int level;     /* worst pol_level_t of its allocations */
	int gpus;      /* GPUs of its last allocation */
	int64_t run_s; /* seconds it held GPUs, all runs */
} sim_job_out_t;

typedef struct sim_result {
	sim_job_out_t *jobs; /* indexed like the input jobs */
	int n;
	int skipped; /* jobs that can never fit (not simulated) */
	int total_gpus;
	int64_t t0, t_last_submit, t_end;
	double busy_gpu_s;         /* over the makespan */
	double busy_gpu_s_arrival; /* over the arrival window */
	double frag_gpu_s;         /* free-but-unusable GPU-seconds */
	/* GPU-seconds spent redoing restart_s after preemptions (at the
	 * restart's speed), all / those inside the arrival window */
	double rework_gpu_s, rework_gpu_s_arrival;
	double *util; /* per bin, fraction busy */
	int n_bins;
	int64_t bin_s;
	int64_t events, decisions, preemptions;
} sim_result_t;

/*
 * Replay jobs[0..n) (any order; ties in submit broken by index) on
 * cluster under policy.  Returns 0, or -1 with errno (EINVAL: bad input,
 * EPROTO: invariant violation or a policy that stalls, ENOMEM) and err.
 */
int sim_run(const pol_cluster_t *cluster, const sim_job_t *jobs, int n,
	    pol_policy_t *policy, const sim_params_t *params, sim_result_t *res,
	    agora_err_t *err);
void sim_result_free(sim_result_t *res);

typedef struct sim_summary {
	int jobs; /* finished */
	double mean_jct_s, p50_jct_s, p99_jct_s;
	double mean_queue_s, p99_queue_s;
	double makespan_s;
	double util_makespan, util_arrival;
	double util_arrival_net; /* util_arrival less preemption rework */
	double max_rho, mean_rho, jain_rho;
	int64_t preemptions;
	double fragmentation;
	/* mean over finished jobs of their worst locality level (pol_level_t
	 * 0 nvlink .. 5 cluster, sim_job_out_t.level); _multi: over the
	 * finished jobs of more than one GPU only (NaN if none) */
	double mean_locality_level, mean_locality_level_multi;
	int n_tenants;
	double *tenant_rho; /* mean rho per tenant (NaN: no jobs) */
	int *tenant_jobs;
} sim_summary_t;

/* Percentile p in [0,1] of v[0..n) by nearest rank; sorts v. */
double sim_percentile(double *v, int n, double p);
/* The rho of one job (see top). */
double sim_job_rho(const sim_job_t *j, const sim_job_out_t *o);
int sim_summarize(const sim_result_t *res, const sim_job_t *jobs, int n,
		  int n_tenants, sim_summary_t *s);
void sim_summary_free(sim_summary_t *s);

/* Deterministic RNG (splitmix64) for the models; the state is the
 * caller's. */
uint64_t sim_rand(uint64_t *state);
double sim_rand_unit(uint64_t *state); /* [0, 1) */

#endif
