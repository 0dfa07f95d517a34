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
 *  - runtime estimates (params.limits, sim_limits.c): the time limit a
 *    job asks for.  SIM_LIMITS_AUTO (the default): the trace's limit, or
 *    duration x U(1, b) rounded up to a minute (the f-model of Mu'alem &
 *    Feitelson); every other regime replaces the trace's limits (see
 *    sim_limits_t).
 *  - kill at the limit (params.limit_kill): a run that reaches its time
 *    limit is killed, as Slurm does.  SIM_KILL_FAIL: the job ends
 *    failed (finish = -1, killed = 1, its GPU time counts as lost);
 *    SIM_KILL_RESUBMIT: it loses work like a preemption and is submitted
 *    again at the kill time with twice the limit (JCT still counts from
 *    the first submit); SIM_KILL_NONE: limits only inform policies.
 *  - elastic speed-up: on g GPUs a job requesting r runs at
 *    speed(g)/speed(r), speed(g) = g / (1 + serial x (g - 1)).
 *  - preemption (params.ckpt_s, params.restart_s): a running job writes a
 *    checkpoint every ckpt_s seconds of wall time since its run started;
 *    a preempted job keeps the work up to its last checkpoint (of this or
 *    an earlier run) and loses the rest; every restart first redoes
 *    restart_s seconds of work (checkpoint reload, at the run's speed).
 *    ckpt_s = SIM_CKPT_NONE (0): every preemption loses all progress;
 *    SIM_CKPT_CONTINUOUS (-1): nothing is lost but the restart (the
 *    model before checkpoints, --restart).
 *
 * Metrics (sim_summarize(); rho is defined only there):
 *  - JCT = finish - submit; queueing delay = JCT - time running, i.e. all
 *    time pending, also after preemptions (first start - submit alone
 *    would call a preemptive policy's waiting zero; the per-job CSV has
 *    both).
 *  - stretch of a job = JCT / duration (its run time alone on an ideal
 *    consolidated allocation of its requested size).  stretch of a tenant
 *    = MEAN of its jobs' stretch.  Reported: max and mean over tenants and
 *    Jain's index (sum x)^2 / (n sum x^2) (max_rho_stretch, ...).
 *  - app rho (Themis' finish-time fairness, NSDI'20), per app (apps are
 *    tenants unless the caller groups jobs otherwise): over the app's
 *    finished jobs J, s = min submit, f = max finish, T_sh = f - s;
 *    N(t) = number of apps with a job submitted and not yet ended at t;
 *    N_avg = max(1, integral_s^f N(t) dt / T_sh); C = GPUs / N_avg;
 *    T_id = max( max_j (r_j - s + d_j),
 *                max_k (r_k - s + sum_{j: r_j >= r_k} g_j d_j / C) )
 *    (r submit, d duration, g GPUs: the fluid finish time of the app's
 *    jobs alone on C GPUs); rho_app = T_sh / T_id.  Reported: max, mean
 *    and Jain's index over apps (max_rho_app, jain_rho_app), the 99th
 *    percentile (nearest rank, p99_rho_app) and the max over apps that
 *    ask for at least 10 GPU-hours (sum of GPUs x duration of their jobs,
 *    max_rho_app_10gpuh: one 3-minute job does not set it).
 *  - utilization = busy GPU-seconds / (GPUs x window), over the makespan
 *    [first submit, last finish] and over the arrival window [first
 *    submit, last submit]; both are reported, named.
 *    util_net = util_arrival without the lost GPU-seconds: restart
 *    overhead, work lost since the last checkpoint, and all GPU time of
 *    jobs that failed at their limit (useful work only).
 *    gpu_hours_lost = the same losses over the whole run, in GPU-hours.
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
#include <stddef.h>
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

typedef enum sim_limits_kind {
	SIM_LIMITS_AUTO = 0,  /* trace limit, else uniform:1:b */
	SIM_LIMITS_TRACE,     /* the trace's; a job without one is an error */
	SIM_LIMITS_UNIFORM,   /* duration x U(a, b) */
	SIM_LIMITS_LOGNORMAL, /* duration x exp(a |Z|), Z ~ N(0, 1) */
	SIM_LIMITS_CONSTANT,  /* t */
	SIM_LIMITS_PARTMAX, /* t, or the longest duration rounded up to a day */
} sim_limits_kind_t;

/* An information regime: how the time limits jobs ask for are drawn.
 * Drawn limits are rounded up to a minute, at least 60 s. */
typedef struct sim_limits {
	sim_limits_kind_t kind;
	double a, b;
	int64_t t;
} sim_limits_t;

enum { SIM_CKPT_CONTINUOUS = -1, SIM_CKPT_NONE = 0 };
/* the fixed part of the automatic livelock guard (sim_params_t) */
#define SIM_LIVELOCK_AUTO_BASE ((int64_t) 7 * 86400)

typedef enum sim_limit_kill {
	SIM_KILL_FAIL = 0,
	SIM_KILL_RESUBMIT,
	SIM_KILL_NONE,
} sim_limit_kill_t;

typedef struct sim_params {
	double slowdown[POL_N_LEVELS];
	sim_limits_t limits;
	sim_limit_kill_t limit_kill;
	double elastic_serial; /* in [0, 1) */
	int64_t ckpt_s;        /* > 0, SIM_CKPT_NONE or SIM_CKPT_CONTINUOUS */
	int64_t restart_s;     /* restart overhead, s of work */
	int64_t launch_s;      /* every start: Slurm's launch and completion
				  (slurmstepd, script, epilog), s holding the
				  GPUs before work begins; default 0 */
	uint64_t seed;
	int64_t bin_s;          /* utilization time series bin */
	bool check;             /* invariants on every event */
	int64_t progress_every; /* decisions between progress calls */
	sim_progress_f progress;
	void *progress_arg;
	const pol_placer_t *frag_placer; /* head-fit test; NULL = stock */
	/* the livelock guard: a run in which no job completes for this many
	 * seconds of simulated time while jobs pend fails (-1/EDEADLK, err
	 * "livelock: ...").  0 = auto (SIM_LIVELOCK_AUTO: 7 days + 2 x the
	 * longest job at its slowest placement); < 0 = off */
	int64_t livelock_s;
	/* other checkpoint intervals (values of ckpt_s): the run reports in
	 * sim_result_t.ckpt_alt_same whether it would have gone the same way
	 * under each of them (for a policy that reads no checkpoint field of
	 * its snapshot: pol_job_t.ckpt_s, last_ckpt) */
	int64_t ckpt_alt[8];
	int n_ckpt_alt;
	/* the snapshot's pol_job_t.remaining is -1 (unknown, as in Slurm:
	 * plugins/site_factor/agora) for every job: for a policy that may
	 * not know durations (all but srtf), which then cannot read them by
	 * mistake.  A run that hides them reads nothing of a job's work, so
	 * the rounding of a work update split at a checkpoint cannot change
	 * it: ckpt_alt_same then asks only that no job was requeued or
	 * resized and no restart or launch work was left when a checkpoint
	 * interval mattered.  Default false. */
	bool hide_remaining;
} sim_params_t;

void sim_params_default(sim_params_t *p);

typedef struct sim_job_out {
	int64_t first_start; /* -1 if never started */
	int64_t finish;      /* -1 if never finished */
	int64_t limit;       /* the time limit used */
	int preemptions;
	int level;         /* worst pol_level_t of its allocations */
	int gpus;          /* GPUs of its last allocation */
	int64_t run_s;     /* seconds it held GPUs, all runs */
	int64_t end;       /* finish, or when it was killed for good; -1 */
	int killed;        /* times killed at its limit */
	double lost_gpu_s; /* GPU-seconds of its runs that were lost */
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
	/* all lost GPU-seconds: rework, work lost since the last checkpoint,
	 * the runs of jobs that failed at their limit; all / inside the
	 * arrival window */
	double lost_gpu_s, lost_gpu_s_arrival;
	/* of those, the work since the last checkpoint that preemptions
	 * threw away (rework after them is in rework_gpu_s) */
	double preempt_lost_gpu_s;
	/* params.n_ckpt_alt > 0: no job was requeued or resized, no update
	 * had restart or launch work left, and every job's work after every
	 * update is, bit for bit, what it would be with ckpt_s = any of
	 * params.ckpt_alt (not asked with params.hide_remaining: the run then
	 * reads none of it): the same run under those, for a policy blind to
	 * checkpoints, but for the checkpoint fields */
	bool ckpt_alt_same;
	int64_t kills; /* runs killed at their limit */
	int failed;    /* jobs that ended killed (SIM_KILL_FAIL) */
	double *util;  /* per bin, fraction busy */
	int n_bins;
	int64_t bin_s;
	int64_t events, decisions, preemptions;
} sim_result_t;

/*
 * Replay jobs[0..n) (any order; ties in submit broken by index) on
 * cluster under policy.  Returns 0, or -1 with errno (EINVAL: bad input,
 * EPROTO: invariant violation or a policy that stalls, EDEADLK: livelock,
 * no job completed for params.livelock_s while jobs pended; ENOMEM) and
 * err.
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
	double util_net; /* util_arrival less lost GPU-seconds */
	double gpu_hours_lost;
	int64_t killed_at_limit; /* runs killed at their limit */
	int failed;              /* jobs that ended killed */
	double max_rho_stretch, mean_rho_stretch, jain_rho_stretch;
	double max_rho_app, mean_rho_app, jain_rho_app;
	double p99_rho_app;        /* nearest rank over apps */
	double max_rho_app_10gpuh; /* over apps of >= SIM_APP_BIG_GPUH */
	double max_rho_tenant;     /* max rho with apps = tenants */
	int64_t preemptions;
	/* (work since the last checkpoint lost at preemptions + restart
	 * rework) / preemptions, GPU-hours (0 without preemptions);
	 * preemptions per simulated job, and the most any job had */
	double gpuh_lost_per_preemption, preemptions_per_job;
	int max_preemptions;
	double fragmentation;
	/* mean over finished jobs of their worst locality level (pol_level_t
	 * 0 nvlink .. 5 cluster, sim_job_out_t.level); _multi: over the
	 * finished jobs of more than one GPU only (NaN if none) */
	double mean_locality_level, mean_locality_level_multi;
	int n_tenants;
	double *tenant_stretch; /* mean stretch per tenant (NaN: no jobs) */
	int *tenant_jobs;
	int n_apps;
	double *app_rho;  /* rho per app (NaN: no finished job) */
	double *app_gpuh; /* GPU-hours per app (requested GPUs x duration) */
} sim_summary_t;

/* apps of at least this many GPU-hours set max_rho_app_10gpuh */
#define SIM_APP_BIG_GPUH 10.0

/* Percentile p in [0,1] of v[0..n) by nearest rank; sorts v. */
double sim_percentile(double *v, int n, double p);
/* The stretch of one job (see top); NaN if it did not finish. */
double sim_job_stretch(const sim_job_t *j, const sim_job_out_t *o);
/* Apps = tenants. */
int sim_summarize(const sim_result_t *res, const sim_job_t *jobs, int n,
		  int n_tenants, sim_summary_t *s);
/* app[i] in [0, n_apps) names job i's app (NULL: its tenant). */
int sim_summarize_apps(const sim_result_t *res, const sim_job_t *jobs, int n,
		       int n_tenants, const int *app, int n_apps,
		       sim_summary_t *s);
/* rho of every app into rho[0..n_apps) (NaN: no finished job), and
 * N_avg into navg when not NULL; total_gpus from res.  0, or -1/ENOMEM. */
int sim_app_rho(const sim_result_t *res, const sim_job_t *jobs, int n,
		const int *app, int n_apps, double *rho, double *navg);

/* The regime of --limits: "trace", "uniform:A:B" (1 <= A <= B),
 * "lognormal:SIGMA" (0 < SIGMA <= 10), "constant:T", "partmax" or
 * "partmax:T" (T a duration, sim_duration_parse).  0, or -1/EINVAL with
 * err = "--limits: 'TEXT': why". */
int sim_limits_parse(const char *text, sim_limits_t *out, agora_err_t *err);
/* Writes the canonical text of l (as sim_limits_parse reads it). */
void sim_limits_format(const sim_limits_t *l, char *buf, size_t len);
/* A duration: seconds ("604800", "90.5" rounded up) or a number with a
 * unit s, m, h, d or w ("7d", "1w", "1.5h").  0, or -1/EINVAL. */
int sim_duration_parse(const char *text, int64_t *out);
/* The partmax of l over jobs[0..n): its T when given, else the longest
 * duration rounded up to a day (what sim_limit_draw's partmax wants). */
int64_t sim_limits_partmax(const sim_limits_t *l, const sim_job_t *jobs, int n);
/* The limit job j asks for under l (rng: the run's model RNG, advanced
 * only by the regimes that draw; partmax: the resolved partmax). */
int64_t sim_limit_draw(const sim_limits_t *l, const sim_job_t *j,
		       int64_t partmax, uint64_t *rng);
void sim_summary_free(sim_summary_t *s);

/* Deterministic RNG (splitmix64) for the models; the state is the
 * caller's. */
uint64_t sim_rand(uint64_t *state);
double sim_rand_unit(uint64_t *state); /* [0, 1) */

#endif
