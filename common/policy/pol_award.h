/*
 * pol_award.h - what the auction decided, in the form Slurm's own
 * schedulers act on (doc/design.md, "Agora decides, Slurm acts").
 *
 * The adapter runs the "agora" policy, then turns its decision into one
 * immutable award table:
 *   - per pending job: won (an auction or leftover award: rank first in
 *     Slurm's priority order) or not;
 *   - per running job: its lease end, and whether it lost its lease
 *     (the policy put it in GRACE: a winner needs its GPUs);
 *   - per app: its finish-time fairness rho and its credit.
 * Slurm plugins read the table while Slurm holds its own locks:
 * site_factor/agora (priority), preempt/agora (who may preempt whom,
 * and in which order victims go).  The rules are here, pure and unit
 * tested; the table is built once per pass and never changed after.
 *
 * Ownership: the table owns copies of every name; lookups return
 * borrowed pointers valid until pol_award_destroy().
 */
#ifndef POL_AWARD_H
#define POL_AWARD_H

#include <stdbool.h>
#include <stdint.h>

#include "pol_model.h"
#include "pol_themis.h"

/* Per-job facts.  flags: POL_AWARD_* bits. */
#define POL_AWARD_WON       0x1  /* pending: won GPUs at this pass */
#define POL_AWARD_RUNNING   0x2  /* running auction-managed job */
#define POL_AWARD_LOST      0x4  /* running: lost its lease (preemptable) */
#define POL_AWARD_NOREQUEUE 0x8  /* running: may not be requeued */
#define POL_AWARD_FREE      0x10 /* WON with GPUs free (a START, not a HOLD) */

typedef struct pol_award_job {
	int64_t job_id;
	int app; /* index into the table's apps */
	unsigned flags;
	int gpus;
	int64_t lease_end;     /* running jobs with a lease, else 0 */
	int64_t since;         /* WON or LOST: when the auction first said so */
	int strikes;           /* pending: awards that expired unstarted */
	int64_t backoff_until; /* pending: no award before this (0: none) */
	const char *left_out;  /* pending: why the pass left it out of the
				* auction (a static string), else NULL */
} pol_award_job_t;

typedef struct pol_award_app {
	char *name;    /* owned by the table */
	double rho;    /* finish-time fairness estimate (1: no contention) */
	double credit; /* GPU-hours */
	double quota;  /* GPU-hours per period */
	int won_jobs;  /* pending jobs awarded at this pass */
	int won_gpus;
} pol_award_app_t;

typedef struct pol_award pol_award_t;

/* Empty table.  NULL/ENOMEM. */
pol_award_t *pol_award_create(void);
/* Free; *ap = NULL.  NULL or *ap == NULL: nothing happens. */
void pol_award_destroy(pol_award_t **ap);

/* Add (or find) an app by name; returns its index, or -1/EINVAL|ENOMEM. */
int pol_award_app(pol_award_t *a, const char *name, double rho, double credit,
		  double quota);
/* Add a job (a job id appears at most once: a second add replaces the
 * first).  0, -1/EINVAL (bad app index, id <= 0) or ENOMEM. */
int pol_award_job(pol_award_t *a, int64_t job_id, int app, unsigned flags,
		  int gpus, int64_t lease_end);

/* Say why the pass left pending job job_id out of the auction (why: a
 * static string, e.g. pol_agora_policy_left_out()'s).  0, -1/ENOENT (not
 * in the table) or EINVAL. */
int pol_award_left_out(pol_award_t *a, int64_t job_id, const char *why);

/*
 * Build from one pass of the "agora" policy: every pending job of snap
 * is entered (WON if acts has a START or a HOLD for it: HOLD is a winner
 * waiting for a loser's GPUs), every running job with its lease from
 * leases (LOST when the lease is in GRACE, or acts requeues it: PREEMPT).
 * A decision outlives the pass that made it: a pending job WON in prev
 * stays WON until Slurm starts it, and a running job LOST in prev stays
 * LOST while it runs (unless its lease is renewed after it lost: an ACTIVE
 * lease that started later ends it), each for at most keep_s seconds after the auction
 * said so (the policy announces a winner and a loser once; Slurm starts
 * the winner and preempts the loser when its schedulers next run).  app_names[t], rho[t],
 * credit[t], quota[t] describe tenant t of the snapshot (n_apps of them).
 * Jobs with an out-of-range tenant are skipped, never fatal.
 *
 * Two guards, because the auction models only GPUs (a winner short of
 * CPUs, memory, features or licenses would otherwise rank first at every
 * pass and, as the top job, stop Slurm's main scheduler in its partition):
 *   - back-off: a pending job still WON keep_s after its award (or, for
 *     an award made on free GPUs (POL_AWARD_FREE), the start window of
 *     pol_award_set_start_window(), when shorter) did not start within it.  It loses the award and gets none before
 *     backoff_until = now + keep_s * 2^(strikes-1) (strikes counts such
 *     expiries, the wait capped at POL_AWARD_BACKOFF_MAX_X * keep_s),
 *     whatever the policy says meanwhile;
 *   - GPU cap: the pending winners together never hold more GPUs than
 *     the snapshot's cluster has free (up nodes' free masks) plus the
 *     GPUs of requeueable running jobs that lost their lease (a HOLD
 *     winner waits for those).  Older awards keep theirs first, then
 *     submit order; a winner beyond the cap is simply not WON at this
 *     pass (no strike).  No cluster in snap: no cap.
 * 0, -1/EINVAL|ENOMEM.
 */
#define POL_AWARD_BACKOFF_MAX_X 16
int pol_award_build(pol_award_t *a, const pol_snapshot_t *snap,
		    const pol_actions_t *acts, const pol_lease_table_t *leases,
		    const char *const *app_names, const double *rho,
		    const double *credit, const double *quota, int n_apps,
		    const pol_award_t *prev, int64_t now, int64_t keep_s);

/* Before pol_award_build(): an award made on free GPUs (a START) that has
 * not started after start_s seconds expires, as a HOLD does after keep_s
 * (0: keep_s for both).  0, -1/EINVAL. */
int pol_award_set_start_window(pol_award_t *a, int64_t start_s);

/* Lookups (borrowed; NULL when unknown). */
const pol_award_job_t *pol_award_find(const pol_award_t *a, int64_t job_id);
const pol_award_app_t *pol_award_app_at(const pol_award_t *a, int i);
const pol_award_app_t *pol_award_app_find(const pol_award_t *a,
					  const char *name);
int pol_award_n_apps(const pol_award_t *a);
int pol_award_n_jobs(const pol_award_t *a);
int pol_award_n_won(const pol_award_t *a);
/* Of the last build: pending jobs backed off (in their wait), winners
 * dropped by the GPU cap, and the cap (-1: none). */
int pol_award_n_backed_off(const pol_award_t *a);
int pol_award_n_capped(const pol_award_t *a);
int pol_award_gpu_cap(const pol_award_t *a);

/*
 * The preemption rule.  A running job may be preempted by a pending job
 * only if
 *   - the preemptor won GPUs at the last auction,
 *   - the victim lost its lease (LOST) and may be requeued,
 *   - they belong to different apps, and the preemptor's app is worse
 *     off (higher rho) than the victim's.
 * Everything else: false (unknown jobs, jobs outside the auction).
 */
bool pol_award_preemptable(const pol_award_t *a, int64_t victim_id,
			   int64_t preemptor_id);

/*
 * Victim order (Slurm preempts candidates in ascending order): best-off
 * app first (lowest rho), then the smallest GPU count (fewest GPUs lost
 * to requeue).  Unknown jobs rank last.
 */
uint32_t pol_award_victim_rank(const pol_award_t *a, int64_t job_id);

#endif
