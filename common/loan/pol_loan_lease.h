/*
 * pol_loan_lease.h - the promises of a loan and of an elastic grow, kept on
 * Slurm's own objects (doc/loaning.md "Fail-safety"), and the decisions
 * that read them back: pure functions, snapshot in, actions out.
 *
 *  - loan marks: an inference node on loan carries in its Comment a
 *    versioned, self-describing mark with a heartbeat that agorad renews:
 *      Agora loan v1: lent since 2026-12-01T21:20:00Z, heartbeat 2026-12-01T21:22:04Z
 *      Agora loan v1: returned 2026-12-01T21:40:00Z, lent since 2026-12-01T21:20:00Z
 *    (times UTC, ISO 8601).  The legacy "Agora loan: lent since EPOCH" reads
 *    as a v0 mark whose heartbeat is its start.
 *  - lease expiry (pol_loan_lease_expire): slurmctld's site_factor/agora, which
 *    is always there, returns a node whose heartbeat is older than
 *    LoanLeaseTimeout: out of the training partitions, its requeueable
 *    borrowers requeued as a reclaim would, the mark rewritten as returned,
 *    and cleared once no borrower is left.
 *  - elastic marks: an elastic job's submitted node range and a grow in
 *    progress, in its AdminComment, so that any agorad restores the range:
 *      Agora elastic v1: range 2-16
 *      Agora elastic v1: range 2-16; grow 2->15 at 2026-12-01T21:30:00Z
 *      Agora elastic v1: range 2-16; grow 2->15 at 2026-12-01T21:30:00Z, restarted on 15
 *  - the grow follow rule (pol_grow_follow): what to do with a grown job
 *    from its mark and what Slurm shows of it.
 *
 * Pure C (libc): no clock (now is a parameter), no I/O, no globals.
 * Functions return 0 or -1 with errno (EINVAL, ENOENT, ERANGE).
 */
#ifndef POL_LOAN_LEASE_H
#define POL_LOAN_LEASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------ time text */

/* t (epoch s) as "YYYY-MM-DDTHH:MM:SSZ" into buf (>= 21 bytes); returns
 * buf ("?" if it does not fit). */
char *pol_time_utc(int64_t t, char *buf, size_t size);
/* Parse that form at the start of s; 0 and *t, or -1 (EINVAL). *end, if
 * not NULL, is set past the parsed text. */
int pol_time_utc_parse(const char *s, int64_t *t, const char **end);

/* ------------------------------------------------------------ loan marks */

#define POL_LOAN_LEASE_PREFIX  "Agora loan"
#define POL_LOAN_LEASE_VERSION 1

typedef enum pol_loan_lease_state {
	POL_LOAN_LEASE_LENT = 1, /* lent; the heartbeat says until when */
	POL_LOAN_LEASE_RETURNED, /* slurmctld (or agorad) took it back */
} pol_loan_lease_state_t;

typedef struct pol_loan_lease_mark {
	int version; /* 0 legacy, 1 */
	pol_loan_lease_state_t state;
	int64_t since;     /* loan start (0 unknown) */
	int64_t heartbeat; /* last renewal (LENT; 0: none, expired) */
	int64_t returned;  /* when it was returned (RETURNED) */
} pol_loan_lease_mark_t;

/*
 * Read a node Comment.  0: it is a loan mark, *m filled; a mark that
 * starts with POL_LOAN_LEASE_PREFIX but does not parse reads as LENT with no
 * heartbeat (expired: fail safe).  -1 with errno ENOENT: not a loan mark
 * (empty, an admin's text, another Agora note).
 */
int pol_loan_lease_mark_parse(const char *comment, pol_loan_lease_mark_t *m);
/* Write the v1 text of m into buf.  0, or -1 (ERANGE: too small, EINVAL). */
int pol_loan_lease_mark_format(const pol_loan_lease_mark_t *m, char *buf,
			       size_t size);

/* Whether a node with this Comment may be lent: empty, or Agora's own
 * ("Agora..."), never a comment an admin wrote. */
bool pol_loan_lease_comment_free(const char *comment);

/* Whether agorad should rewrite the mark of a node it keeps lent: not a
 * fresh v1 LENT mark, or its heartbeat is older than a quarter of
 * timeout_s (timeout_s 0: only when not a v1 LENT mark). */
bool pol_loan_lease_renew_due(const pol_loan_lease_mark_t *m, bool marked,
			      int64_t now, int64_t timeout_s);

/* Whether a mark has run out: RETURNED, or LENT with a heartbeat older
 * than timeout_s (timeout_s 0: never). */
bool pol_loan_lease_expired(const pol_loan_lease_mark_t *m, int64_t now,
			    int64_t timeout_s);

/* -------------------------------------------------------- lease expiry */

typedef struct pol_loan_lease_node {
	bool marked;                /* its Comment is a loan mark */
	pol_loan_lease_mark_t mark; /* when marked */
	bool in_train;              /* in a training partition's node list */
} pol_loan_lease_node_t;

/* A training job running on inference nodes. */
typedef struct pol_loan_lease_job {
	int n_nodes;
	const int *nodes; /* indices into the nodes */
	bool requeue;     /* batch job that may be requeued */
	bool done;        /* already leaving (completing, requeued) */
} pol_loan_lease_job_t;

typedef struct pol_loan_lease_in {
	const pol_loan_lease_node_t *nodes;
	int n_nodes;
	const pol_loan_lease_job_t *jobs;
	int n_jobs;
	int64_t now;
	int64_t timeout_s; /* LoanLeaseTimeout (0: leases never run out) */
} pol_loan_lease_in_t;

enum {
	POL_LOAN_LEASE_KEEP = 0, /* nothing to do */
	POL_LOAN_LEASE_RETURN,   /* out of the training partitions (if in), mark
			     * rewritten as returned at now */
	POL_LOAN_LEASE_CLEAR, /* returned and no borrower left: clear the mark */
};

typedef struct pol_loan_lease_out {
	int *node_action; /* caller-allocated, n_nodes: POL_LOAN_LEASE_* */
	unsigned char *requeue; /* caller-allocated, n_jobs: 1 requeue now */
	int n_return, n_clear, n_requeue;
} pol_loan_lease_out_t;

/*
 * The lease round of slurmctld.  For each marked node whose mark ran out
 * (pol_loan_lease_expired):
 *   - a LENT mark, or a RETURNED one still in a training partition (a
 *     crash between the steps, or an agorad that added it back without
 *     renewing): POL_LOAN_LEASE_RETURN;
 *   - a RETURNED mark out of training with no borrower: POL_LOAN_LEASE_CLEAR;
 * every borrower (a job on a node that is returned or returned already)
 * that may be requeued and is not leaving yet is requeued; one that may
 * not be requeued keeps running, and the node keeps its RETURNED mark
 * until it ends.  Unmarked nodes are never touched (a node in both kinds
 * of partition by slurm.conf is not a loan).  Level-triggered: applying
 * the actions and running it again gives only KEEP.
 */
int pol_loan_lease_expire(const pol_loan_lease_in_t *in,
			  pol_loan_lease_out_t *out);

/* ---------------------------------------------------- the demand, safely */

/* What one failed read of the demand source does: nothing for grace_s.
 * The demand to act on: d when the source answered (d >= 0; *last and
 * *last_t are updated), else the last good value while it is at most
 * grace_s old, else -1 (unknown: every inference node goes home). */
double pol_loan_demand_safe(double d, double *last, int64_t *last_t,
			    int64_t now, int64_t grace_s);

/* A job of an inference partition, for LoanDemandSource=jobs. */
typedef struct pol_loan_demand_job {
	int nodes;    /* its node count (0 counts as 1) */
	bool running; /* running (or suspended, completing) */
	bool ready;   /* pending and could run now: not held, no dependency
		       * or begin time, reason None, Priority or Resources */
} pol_loan_demand_job_t;

/* The demand in nodes from those jobs: the running ones and the pending
 * ones that could run, each capped at the inference partitions' size,
 * the sum too (a held 500-node job asks for nothing). */
double pol_loan_demand_jobs(const pol_loan_demand_job_t *jobs, int n,
			    int n_nodes);

/* -------------------------------------------------------- elastic marks */

#define POL_ELASTIC_PREFIX  "Agora elastic"
#define POL_ELASTIC_VERSION 1

typedef struct pol_elastic_mark {
	int min, max; /* the range it was submitted with */
	bool grown;   /* a grow is under way or done */
	int from, to; /* the grow: size before, size asked */
	int64_t time; /* when it was requeued for the grow */
	int started;  /* nodes it restarted on (0: not yet) */
} pol_elastic_mark_t;

/* Read an AdminComment: 0 and *m, or -1 with errno ENOENT (not an elastic
 * mark) or EINVAL (one that does not parse). */
int pol_elastic_mark_parse(const char *text, pol_elastic_mark_t *m);
int pol_elastic_mark_format(const pol_elastic_mark_t *m, char *buf,
			    size_t size);

/* --------------------------------------------------- the grow follow rule */

typedef enum pol_grow_action {
	POL_GROW_NONE = 0,
	POL_GROW_SET_SIZE,  /* pending after its grow: NumNodes=to */
	POL_GROW_RESTARTED, /* running again: note started = its size */
	POL_GROW_RESTORE,   /* pending: back to min-max, grow part dropped */
} pol_grow_action_t;

typedef struct pol_grow_obs {
	bool pending, running; /* as Slurm shows the job */
	int num_nodes;         /* running: its size; pending: min nodes */
	int max_nodes;         /* pending: max nodes as Slurm has it */
} pol_grow_obs_t;

/*
 * A grown job (m->grown) from its mark and what Slurm shows:
 *   running, not restarted yet          -> RESTARTED
 *   pending, restarted since the grow   -> RESTORE (requeued again, by a
 *                                          reclaim or an admin)
 *   pending, not restarted, and more than give_up_s after the grow
 *                                       -> RESTORE (the nodes went to
 *                                          other work)
 *   pending, not restarted, its size not yet exactly to..to
 *                                       -> SET_SIZE
 *   otherwise                           -> NONE
 * An ungrown job: NONE.  agorad writes the grow into the mark before it
 * requeues the job, so a crash between the two leaves a running job with
 * a grow mark (RESTARTED, then RESTORE at its next pending).
 */
pol_grow_action_t pol_grow_follow(const pol_elastic_mark_t *m,
				  const pol_grow_obs_t *o, int64_t now,
				  int64_t give_up_s);

#endif
