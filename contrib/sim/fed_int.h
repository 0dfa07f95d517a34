/*
 * fed_int.h - agora-sim federation's shared types (doc/federation.md,
 * "Simulated federation"): the scenario and its options (federation.c),
 * one dispatcher's run (fed_dispatch.c), the metrics and the report
 * (fed_report.c).
 */
#ifndef FED_INT_H
#define FED_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "pol_fed.h"
#include "sim_cli.h"

#define FED_MAX_SITES 64
#define FED_NEVER     INT64_MAX

typedef enum fed_disp {
	FED_FIRST_START = 0,
	FED_RANDOM,
	FED_LEAST_LOADED,
	FED_AGORA,
	FED_AGORA_DATA,
	FED_N_DISP,
} fed_disp_t;

extern const char *const fed_disp_names[FED_N_DISP];

typedef struct fed_site {
	char name[POL_FED_NAME_LEN];
	int nodes, gpn, gpus;
} fed_site_t;

typedef struct fed_opts {
	const char *trace, *spec, *json, *plot, *dispatchers, *filter;
	uint64_t seed;
	int per_tenant;
	double size_min, size_max, link;
	int64_t round_s, place_s, bin_s;
	double w_queue; /* the core's queue weight (pol_fed_weights_t) */
	double window_from, window_days; /* --window (days 0: all) */
	const char *placement; /* --data-placement: home, random, skewed */
	/* home: GPU-seconds per tenant in the week before the window (the
	 * trace's first week when it has no such week), malloc'd */
	double *prev_gpu_s;
	int prev_n;
	bool prev_before; /* the week before the window, not the first */
	/* --limits: what the auction knows of run times.  Unset (exact):
	 * the run times, as before.  Set: the time limits drawn under this
	 * regime, and agora bids as agorad does: will-run plans on the
	 * running jobs held to their limits and ignores the pending ones
	 * (Slurm's will-run test), the core's pol_fed_start_choose puts the
	 * jobs queued there first (agorad's survey of the cluster: GPUs
	 * free, running jobs' limit ends, queued GPUs and GPU-seconds of
	 * limit), the supply is the free GPUs less the queued ones, the
	 * hold agorad's 0.693 x limit.  The clusters still run every job
	 * for its run time. */
	bool knows_limits;
	sim_limits_t limits;
	/* --hold history: with --limits, the hold of a job whose tenant and
	 * GPU count have completed jobs is their recent mean run time
	 * (pol_estimate.h), else 0.693 x limit; false (--hold limit, the
	 * default, agorad's): always 0.693 x limit */
	bool hold_history;
} fed_opts_t;

typedef struct fed_job {
	int64_t id, submit, dur;
	int64_t limit; /* the time limit it asks for (--limits; else dur) */
	int gpus, dataset, origin;
	int tenant; /* the trace's tenant (its history's group) */
	uint64_t eligible;
} fed_job_t;

typedef struct fed_scen {
	fed_site_t site[FED_MAX_SITES];
	int n_sites;
	fed_job_t *jobs;
	int n, skipped;
	pol_fed_catalog_t cat; /* one replica per dataset: the start */
	int64_t t0, t_last;
} fed_scen_t;

/* ---- one dispatcher's run ------------------------------------------------ */

typedef struct fed_end {
	int64_t end;
	int gpus, c;
	int64_t lend; /* the end its limit planned (--limits), else end */
	int job;      /* the job's index (ends), -1 (starts) */
} fed_end_t;

/* a replica that served on [from, to) and was later copied in again */
typedef struct fed_ival {
	int d, c;
	int64_t from, to;
} fed_ival_t;

typedef struct fed_run {
	fed_disp_t disp;
	/* per job: cluster, start (GPUs taken), transfer s, end */
	int *cluster;
	int64_t *start, *xfer, *end;
	/* replica of dataset d on cluster c usable on [from, to) */
	int64_t *rep_from, *rep_to;
	fed_ival_t *hist;
	int n_hist, cap_hist;
	double copied_bytes;
	int copies, drops, placements;
	/* results */
	double mean_jct, p50_jct, p99_jct, mean_queue, mean_xfer;
	double worst, worst_after, worst_assigned;
	/* the hourly bound: per bin the demand over the supply of the whole
	 * federation (jobs moved freely, split as a fluid), its time mean;
	 * the share of the time the worst assigned cluster is within 5% of
	 * it; the share within 5% of it or with no cluster assigned more
	 * GPUs than it has (no queue that levelling could shorten) */
	double opt_worst, within_5pct, within_5pct_or_unsat;
	double moved_h, remote_h, xfer_h, job_bytes;
	double site_ds[FED_MAX_SITES], site_asg[FED_MAX_SITES];
	double site_gpu_h[FED_MAX_SITES];
	int site_jobs[FED_MAX_SITES];
	double *series, *assigned; /* n_bins x n_sites */
	int n_bins;
	double wall_s;
} fed_run_t;

/* the bins of the metrics */
typedef struct fed_win {
	int64_t t0, t_end, bin;
	int n_bins;
} fed_win_t;

/* fed_dispatch.c */
/* the first replicas: usable from the start for ever */
void fed_reps_init(const fed_scen_t *sc, int64_t *from, int64_t *to);
/* run dispatcher r->disp over the scenario into r (fed_run_free) */
int fed_simulate(const fed_scen_t *sc, const fed_opts_t *o, fed_run_t *r);
void fed_run_free(fed_run_t *r);

/* fed_report.c */
int fed_summarize(const fed_scen_t *sc, const fed_opts_t *o, fed_run_t *r);
int fed_initial(const fed_scen_t *sc, const fed_opts_t *o, double *worst,
		double **series, int *n_bins);
void fed_table(const fed_run_t *runs, int n, double initial);
int fed_json(const char *path, const fed_scen_t *sc, const fed_opts_t *o,
	     const fed_run_t *runs, int n, double initial);
int fed_plots(const char *dir, const fed_scen_t *sc, const fed_opts_t *o,
	      const fed_run_t *runs, int n, const double *iseries, int n_bins);

#endif
