/*
 * pol_ckpt.h - what a preemption costs under checkpoints, for every
 * preempting policy (agora, and the baselines that want it) and the
 * adapters' snapshots.  Pure functions of a running job (pol_job_t:
 * start, ckpt_s, preemptions, its GPUs) and a time.
 *
 * Model (the simulator's, sim.h): a run that started at `start` writes a
 * checkpoint every c = ckpt_s seconds of wall time (start + c, start + 2c,
 * ...); a requeue at t loses the work since the last one, (t - start) mod c
 * seconds on all its GPUs.  In Slurm, c is what the admin declares per
 * partition or QOS (agora.conf CheckpointInterval), or what the job's
 * --signal says (doc/agora.conf.5).
 *
 * Interval of a job: j->ckpt_s when > 0 or CONTINUOUS or NEVER; when
 * UNKNOWN, the caller's assumption dflt (with the same encoding; an
 * UNKNOWN dflt reads as NEVER).
 */
#ifndef POL_CKPT_H
#define POL_CKPT_H

#include <stdbool.h>
#include <stdint.h>

#include "pol_model.h"

enum {
	POL_CKPT_UNKNOWN = 0,
	POL_CKPT_CONTINUOUS = -1,
	POL_CKPT_NEVER = -2,
};

/* The interval that applies to j (> 0, CONTINUOUS or NEVER). */
int64_t pol_ckpt_interval(const pol_job_t *j, int64_t dflt);

/* Seconds of work running job j loses if requeued at t (>= 0; 0 before
 * its start). */
int64_t pol_ckpt_lost(const pol_job_t *j, int64_t dflt, int64_t t);

/* The same in GPU-seconds on gpus GPUs. */
double pol_ckpt_cost(const pol_job_t *j, int64_t dflt, int gpus, int64_t t);

/*
 * The first time >= t at which a requeue of j loses nothing: its next
 * checkpoint (t when CONTINUOUS).  NEVER: t (nothing is ever saved, so no
 * time is better than another).  start is when the run began (pass the
 * current time for a job about to start).
 */
int64_t pol_ckpt_next(int64_t start, int64_t interval, int64_t t);

/*
 * May running job j be preempted at t?  It must be requeueable, have
 * fewer than budget preemptions (budget <= 0: no limit), and its current
 * run must be at least one interval old (min_run for CONTINUOUS and
 * NEVER): a job is never preempted twice within one checkpoint interval,
 * since every preemption is followed by a new run.
 */
bool pol_ckpt_preemptable(const pol_job_t *j, int64_t dflt, int budget,
			  int64_t min_run, int64_t t);

#endif
