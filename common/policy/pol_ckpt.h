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

/* pol_job_t.ckpt_s: > 0, UNKNOWN, CONTINUOUS or NEVER (the simulator's
 * --ckpt 0). */
enum {
	POL_CKPT_UNKNOWN = 0,
	POL_CKPT_CONTINUOUS = -1,
	POL_CKPT_NEVER = -2,
};

/* The interval that applies to j (> 0, CONTINUOUS or NEVER). */
int64_t pol_ckpt_interval(const pol_job_t *j, int64_t dflt);

/*
 * An interval (> 0, CONTINUOUS or NEVER) as preemption on a rhythm of
 * every seconds sees it: CONTINUOUS becomes every, an interval c < every
 * the least multiple of c that is >= every (each such instant is one of
 * the job's checkpoints); NEVER, intervals >= every and every <= 0 stay.
 */
int64_t pol_ckpt_rhythm(int64_t interval, int64_t every);

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
 * The per-job preemption rule of every preempting policy, in the
 * simulator and in Slurm alike (one function: pol_job_may_preempt()).
 * A job that is not requeueable is never preempted.  Then:
 *
 *  - the budget (budget > 0): with since_save (las, srtf, tiresias) it
 *    counts the preemptions since j last saved work (stale_preempts); once
 *    spent, j is preempted again only after its current run has saved
 *    work (last_ckpt >= start), and never binds under CONTINUOUS
 *    checkpoints (nothing is lost).  Without since_save (agora) it counts
 *    all of j's preemptions, and a spent budget protects j for good.
 *  - the age (min_run >= 0; agora): j's current run must be at least one
 *    checkpoint interval old (min_run for CONTINUOUS and NEVER), so a job
 *    is never preempted twice within one interval, since every
 *    preemption is followed by a new run.
 *
 * Either way a job that spent its budget runs to its next checkpoint at
 * least (NEVER: to its end): every job makes progress, no schedule
 * livelocks on it.  dflt is the interval assumed for an UNKNOWN ckpt_s
 * (pol_ckpt_interval()).
 */
typedef struct pol_preempt_rule {
	int budget;      /* <= 0: no budget */
	bool since_save; /* count stale_preempts (else preemptions) */
	int64_t dflt;    /* interval assumed when j->ckpt_s is UNKNOWN */
	int64_t min_run; /* < 0: no age rule */
} pol_preempt_rule_t;

/* May running job j be preempted at t under rule r? */
bool pol_job_may_preempt(const pol_job_t *j, const pol_preempt_rule_t *r,
			 int64_t t);

#endif
