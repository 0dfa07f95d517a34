/*
 * pol_loan_relaunch.h - the relaunch rule (agorad_relaunch.c has the
 * story): after a SIGKILL of slurmctld, which training job that FAILED
 * did so only because of the crash window, and is requeued again.
 *
 *  - a launch failure: the job was queued or running at agorad's last look
 *    before the controller start, it may be requeued (--requeue, batch),
 *    it FAILED with exit code 1:0 (no signal) and ran at most 1 s, and it
 *    started within POL_RELAUNCH_WINDOW_S of the start (slurmd refused the
 *    launch: its credential was revoked by the abort of the recovered
 *    copy);
 *  - a lost requeue: agorad requeued it at most POL_RELAUNCH_LOST_S before
 *    the start (slurmctld saves its state at most every 5 s), the job got
 *    that requeue's SIGTERM and ended FAILED by it after the start (killed
 *    by SIGTERM, or its batch shell exited 143 = 128 + SIGTERM).
 *
 * Pure C (libc): no clock (the boot time and now are parameters), no I/O.
 */
#ifndef POL_LOAN_RELAUNCH_H
#define POL_LOAN_RELAUNCH_H

#include <stdbool.h>
#include <stdint.h>

/* a launch right after the boot: slurmd registrations (and so the aborts
 * of recovered-pending jobs) come within seconds of the start */
#define POL_RELAUNCH_WINDOW_S 60
/* a requeue sent less than this long before a start may have been lost */
#define POL_RELAUNCH_LOST_S 10

typedef struct pol_relaunch_job {
	bool requeue;       /* batch job that may be requeued */
	bool queued_before; /* queued or running at the last look before boot */
	bool exited;        /* WIFEXITED of its exit code */
	int exit_status;    /* WEXITSTATUS, when exited */
	bool signaled;      /* WIFSIGNALED */
	int term_sig;       /* WTERMSIG, when signaled */
	int64_t start, end; /* its last start and end (epoch s) */
	int64_t requeued_at; /* when agorad last requeued it (0: never) */
} pol_relaunch_job_t;

typedef enum pol_relaunch {
	POL_RELAUNCH_NO = 0,        /* left as it is (*why says why) */
	POL_RELAUNCH_LAUNCH_FAILED, /* the crash window's launch failure */
	POL_RELAUNCH_LOST_REQUEUE,  /* agorad's requeue lost with the state */
} pol_relaunch_t;

/* Whether a FAILED training job, seen after the controller start `boot`,
 * is requeued again.  why (may be NULL) gets a static reason for
 * POL_RELAUNCH_NO, NULL otherwise. */
pol_relaunch_t pol_relaunch_decide(const pol_relaunch_job_t *j, int64_t boot,
				   const char **why);

/* Whether failed jobs of the start `boot` are still looked at, at `now`:
 * some job was known before the start, and a job that failed in the
 * window is still held by slurmctld (min_job_age s, MinJobAge; <= 0:
 * Slurm's default 300 s). */
bool pol_relaunch_window(bool known_before, int64_t now, int64_t boot,
			 int64_t min_job_age);

#endif
