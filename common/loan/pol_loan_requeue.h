/*
 * pol_loan_requeue.h - how agorad requeues a training job it takes nodes
 * from (a reclaim's victim) or grows (doc/loaning.md "Requeues: the
 * job's signal, a grace, a limit"):
 *
 *  - the job's own warning first: a job submitted with --signal=[B:]SIG@N
 *    (ML jobs use it to checkpoint) gets SIG (its batch shell only with
 *    B:, as Slurm sends it before the time limit) and is requeued only
 *    after grace = min(N, ReclaimGrace) seconds; a job without --signal,
 *    or ReclaimGrace=0, is requeued at once (Slurm's requeue still sends
 *    SIGTERM and waits KillWait);
 *  - a limit: a job that Slurm shows restarted MaxRequeuesPerJob times
 *    (its Restarts= count, kept by slurmctld on the job itself, so it
 *    survives agorad and slurmctld restarts) is never chosen as a victim
 *    again: the reclaim treats it as a job that cannot be requeued (it
 *    keeps its node until it ends); a grow never spends a job's last
 *    allowed requeue, so a grown job can still be reclaimed.
 *
 * agorad keeps only when it signalled a job's current run (a restarted
 * agorad signals it again: at most one extra signal and grace).  The
 * decision of each round is pol_requeue_next, from that alone.
 *
 * Pure C: no clock (now is a parameter), no I/O, no globals, no Slurm.
 */
#ifndef POL_LOAN_REQUEUE_H
#define POL_LOAN_REQUEUE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct pol_requeue_conf {
	int64_t grace_s;  /* ReclaimGrace: the longest wait after the signal */
	int64_t stale_s;  /* a signal older than this (ReclaimDeadline) was
			     for an earlier, cancelled requeue: sent again */
	int max_requeues; /* MaxRequeuesPerJob (0: no limit) */
} pol_requeue_conf_t;

typedef struct pol_requeue_job {
	bool requeue;        /* batch job that may be requeued (--requeue) */
	int restarts;        /* Slurm's restart count (Restarts=) */
	int signal;          /* --signal's signal number (0: none) */
	int signal_time_s;   /* its @N: the warning the job asked for */
	int64_t signaled_at; /* when agorad signalled this run (0: not) */
} pol_requeue_job_t;

typedef enum pol_requeue_act {
	POL_REQUEUE_NONE = 0, /* not requeued (not allowed) */
	POL_REQUEUE_SIGNAL,   /* send its signal now; requeue at *at */
	POL_REQUEUE_WAIT,     /* signalled: its grace runs until *at */
	POL_REQUEUE_NOW,      /* requeue it now */
} pol_requeue_act_t;

/* Whether a job may be a reclaim's victim by requeue: it may be requeued
 * and its restart count is below the limit (max_requeues 0: none). */
bool pol_requeue_allowed(bool requeue, int restarts, int max_requeues);

/* Whether a grow may requeue it: allowed, and still allowed after this
 * requeue (a grow never spends the last one). */
bool pol_requeue_grow_allowed(bool requeue, int restarts, int max_requeues);

/*
 * Whether Slurm can take a requeue of the job now: it runs (or is
 * suspended) on its nodes.  Not a job already completing (a requeue in
 * progress, or its end): a requeue changes nothing there but its
 * Restarts= count.  Not a running job whose node set Slurm shows empty
 * (its nodes reported the end of a run that an earlier requeue killed
 * before a slurmctld restart, and its batch-complete message is still to
 * come): Slurm (24.11, federated jobs) would leave it pending and
 * completing on no node, never to run again.  Either way the job frees
 * its nodes by itself.
 */
bool pol_requeue_live(bool running, bool completing, bool has_nodes);

/* The second case above: Slurm shows the job running on no node, its run
 * over on its nodes (their epilog reported), its end not yet reported. */
bool pol_requeue_run_over(bool running, bool completing, bool has_nodes);

/* The grace of a job: min(signal_time_s, grace_s) when it asked for a
 * signal, else 0; never negative. */
int64_t pol_requeue_grace(const pol_requeue_job_t *j,
			  const pol_requeue_conf_t *c);

/*
 * The next step of a requeue agorad wants now (a victim, or a chosen
 * grow): NONE when the job may not be requeued (pol_requeue_allowed);
 * NOW when its grace is 0; SIGNAL when it
 * was not signalled (or its signal is stale: older than stale_s, or set
 * after now, a clock that went back); WAIT while now < signaled_at +
 * grace; else NOW.  *at (may be NULL) gets when the grace ends (SIGNAL,
 * WAIT), else now.  A job seen again after NOW (its requeue lost with a
 * slurmctld killed before it saved its state, or still completing) is
 * NOW again, not signalled again while its signal is fresh: level-
 * triggered, a requeue is repeated until Slurm shows it.
 */
pol_requeue_act_t pol_requeue_next(const pol_requeue_job_t *j,
				   const pol_requeue_conf_t *c, int64_t now,
				   int64_t *at);

/*
 * The --signal a batch script asks for in its #SBATCH lines, read as
 * sbatch reads them (Slurm 22.05's and 24.11's job information carries no
 * --signal, so agorad reads the script): the directives before the
 * first command line, the last --signal=[R][B]:SIG[@TIME] (or "--signal
 * ARG") of them; SIG a number or a name with or without "SIG" (any
 * case); TIME 60 when not given.  0 and *sig, *time_s, *batch (B:); -1
 * with errno ENOENT (no --signal; *sig 0) or EINVAL (one that does not
 * parse, as sbatch would refuse it).  A --signal on sbatch's command line
 * or in SBATCH_SIGNAL is not in the script: the caller cannot see it.
 */
int pol_requeue_signal_parse(const char *script, int *sig, int *time_s,
			     bool *batch);

/* A static name of act, for logs and tests. */
const char *pol_requeue_act_name(pol_requeue_act_t act);

#endif
