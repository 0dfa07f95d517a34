/*
 * pol_loan_round.h - the decision of one loan round (doc/loaning.md):
 * agorad observes the inference nodes (their loan marks, whether they are
 * in a training partition's node list, the training jobs on them) and the
 * demand; this function says, from that observation alone, which nodes
 * are lent, which are reclaimed and which jobs give them up, whose mark is
 * written or renewed and whose is cleared.  agorad builds the snapshot and
 * applies the actions (STYLE.md section 6: a level-triggered reconcile
 * loop; a half-applied round is seen again in the next one and finished).
 *
 * Each inference node is, from the snapshot alone:
 *   lent       in a training partition's node list, with a loan mark;
 *   returning  not in one, but training jobs still run on it, or its
 *              Comment still names a loan (a crash between two steps, or
 *              a slurmctld restart, which resets partition node lists to
 *              slurm.conf but keeps node Comments);
 *   home       neither: it serves inference;
 *   alone      in a training partition without a loan mark: slurm.conf puts
 *              it in both kinds of partition (agorad marks a node before
 *              it adds it), so it is never lent, reclaimed or taken out.
 *
 * Pure C: no clock (now is a parameter), no I/O, no globals, no Slurm.
 * Caller owns every array; the function writes only into out.
 */
#ifndef POL_LOAN_ROUND_H
#define POL_LOAN_ROUND_H

#include <stdbool.h>
#include <stdint.h>

#include "pol_loan.h"
#include "pol_loan_lease.h"

typedef enum pol_loan_node_state {
	POL_LOAN_NODE_HOME = 0,
	POL_LOAN_NODE_LENT,
	POL_LOAN_NODE_RETURNING,
	POL_LOAN_NODE_ALONE,
} pol_loan_node_state_t;

typedef struct pol_loan_round_node {
	bool up;           /* not down, drained or failing */
	bool in_train;     /* in a training partition's node list now */
	bool commented;    /* its Comment is a loan mark */
	bool free_comment; /* Comment empty or Agora's: may be lent */
	pol_loan_lease_mark_t mark; /* the mark, when commented */
	bool other_jobs; /* runs jobs that are not training's (inference) */
	bool pinned;     /* runs a training job that cannot be requeued */
	int64_t since;   /* loan start, from the mark (0 unknown) */
	int n_borrowers; /* training jobs running on it */
	/* slurmctld has not heard from it since it started (Slurm's UNKNOWN:
	 * a restart recovers idle nodes so until their slurmd registers,
	 * a few seconds): home against a reclaim (it serves inference as
	 * before, as a node that stopped answering does until Slurm says
	 * DOWN), but never lent nor counted for a loan */
	bool registering;
} pol_loan_round_node_t;

/* A running training job on inference nodes. */
typedef struct pol_loan_round_job {
	int64_t id;
	int gpus;
	int64_t start;
	bool requeue;     /* batch job that may be requeued */
	int n_nodes;      /* inference nodes it runs on */
	const int *nodes; /* their indices in the nodes */
	/* elastic: may shrink down to min_nodes (0 unknown: never shrunk)
	 * by giving up nodes but its batch host */
	bool elastic;
	int min_nodes, total_nodes;
	int batch; /* index of its batch host in the nodes, or -1 */
} pol_loan_round_job_t;

typedef struct pol_loan_round_in {
	const pol_loan_round_node_t *nodes;
	int n_nodes;
	const pol_loan_round_job_t *jobs;
	int n_jobs;
	double demand;      /* inference demand, nodes; < 0 unknown */
	double demand_peak; /* its peak over LoanLendHold (>= demand) */
	int headroom;       /* LoanHeadroomNodes */
	int64_t now;
	int64_t lease_timeout_s;   /* LoanLeaseTimeout (0: none) */
	int64_t ckpt_s, restart_s; /* pol_loan_preempt_cost */
	bool fewest_first;         /* pol_loan_reclaim_in_t */
	/* Waiting for a checkpoint (LoanCheckpointWait): a reclaim that
	 * leaves the pool at least one home node above ceil(demand) may
	 * wait, a step_s (LoanInterval) at a time, up to ckpt_wait_s after
	 * it first came up, when the victims chosen with the wait
	 * (pol_loan_reclaim_wait) lose less later; 0 (or ckpt_s 0): never
	 * waits.  wait_since: when the wait under way began (0: none),
	 * the previous round's out->wait_since. */
	int64_t ckpt_wait_s, step_s, wait_since;
	/* Reclaiming ahead of a rising demand (LoanReclaimAhead): the
	 * demand projected ahead (pol_loan_demand_ahead_at; <= 0: off; only
	 * with the wait above).  When no node is short and it wants more
	 * home nodes than there are, lent ones are reclaimed through the
	 * wait over one ckpt_s, and nothing is lent until lend_hold_s after
	 * the rise was last seen; no node the projection wants is ever lent.
	 * ahead_keep, ahead_until: the previous round's out. */
	double demand_ahead;
	int ahead_keep;
	int64_t ahead_until, lend_hold_s;
} pol_loan_round_in_t;

typedef struct pol_loan_round_node_out {
	pol_loan_node_state_t seen;    /* as the snapshot shows it */
	pol_loan_node_state_t settled; /* after returning nodes settle */
	pol_loan_node_state_t state;   /* after the round */
	bool lend;       /* in the training partitions after the round */
	bool write_mark; /* write a v1 lent mark (since, heartbeat now) */
	bool clear_mark; /* clear its Comment: returned, no borrower left */
	bool victim;     /* its borrowers give it up (shrink or requeue) */
	bool relent;     /* a returning node lent again */
	bool newly_lent; /* a home node lent this round */
	bool candidate;  /* a lent node the reclaim chose among */
	bool reclaimed;  /* chosen by this round's reclaim */
	double cost;     /* candidate: GPU-hours lost if cleared */
	bool fixed;      /* candidate: runs a job that cannot be requeued */
	int64_t since;   /* loan start for its mark */
} pol_loan_round_node_out_t;

typedef struct pol_loan_round_job_out {
	/* this job runs on a victim node: shrink off the victim nodes (when
	 * shrink), else requeue (when requeue); neither: left running */
	bool shrink;
	bool requeue;
	/* the reclaim's view: POL_LOAN_KEEP, _SHRINK or _PREEMPT, its cost
	 * and shrink count (POL_LOAN_KEEP for jobs it did not consider) */
	int reclaim_action;
	int shrink_by;
	double cost;
} pol_loan_round_job_out_t;

typedef struct pol_loan_round_out {
	pol_loan_round_node_out_t *nodes; /* caller-allocated, n_nodes */
	pol_loan_round_job_out_t *jobs;   /* caller-allocated, n_jobs */
	int want;                         /* nodes inference wants home */
	int hold;     /* home nodes kept before lending (peak demand) */
	bool busy;    /* a reclaim is under way: nodes still to come home */
	int lent;     /* home nodes lent this round */
	bool reclaim; /* a reclaim was chosen this round */
	bool reclaim_failed; /* pol_loan_reclaim failed */
	int need;            /* nodes the reclaim was asked for */
	int n_candidates;
	pol_loan_reclaim_out_t choice;  /* counts and cost (arrays NULL) */
	double cost_slurm, cost_recent; /* the other orders' costs */
	bool changed; /* the training partitions' node lists change */
	/* wait_s > 0: the reclaim waits this round for a checkpoint (no
	 * victim), wait_s being the wait its choice found cheapest;
	 * wait_max_s the wait left; wait_since: for the next round's in */
	int64_t wait_s, wait_max_s, wait_since;
	bool ahead; /* the reclaim (or its wait) is ahead of a rising demand */
	int ahead_keep;      /* for the next round's in */
	int64_t ahead_until; /* for the next round's in */
} pol_loan_round_out_t;

/* How a node reads from the snapshot alone (the states above). */
pol_loan_node_state_t pol_loan_round_classify(const pol_loan_round_node_t *n);

/*
 * One loan round: want = ceil(demand) + headroom home nodes (all up nodes
 * when demand is unknown), hold = the same from the peak demand.
 * Returning nodes without borrowers go home (mark cleared); returning
 * nodes with borrowers are finished (victims) while inference wants more
 * home nodes, else lent again.  Then, if fewer than want are home, lent
 * nodes are reclaimed by the least-cost choice (pol_loan_reclaim, shrink
 * first); if more than hold are home, idle home nodes whose Comment is
 * free are lent, from the end.  Every node lent after the round gets its
 * mark written when pol_loan_lease_renew_due says so.  With ckpt_wait_s,
 * a reclaim that leaves a node to spare may wait for checkpoints, and
 * with demand_ahead a rising demand is reclaimed for ahead (the fields
 * above).  A job on a victim
 * node shrinks off it when it is elastic, its minimum is known and kept,
 * and its batch host is not a victim; else it is requeued if it may be.
 * Returns 0, or -1 (EINVAL bad input, ENOMEM).
 */
int pol_loan_round(const pol_loan_round_in_t *in, pol_loan_round_out_t *out);

/* ------------------------------------------------- a reclaim's progress */

typedef enum pol_loan_reclaim_progress {
	POL_LOAN_RECLAIM_WAITING = 0, /* its nodes are not all home yet */
	POL_LOAN_RECLAIM_LATE,        /* ... and ReclaimDeadline has passed */
	POL_LOAN_RECLAIM_DONE,        /* every node of it is home */
	POL_LOAN_RECLAIM_CANCELLED,   /* demand fell first: one is lent again */
} pol_loan_reclaim_progress_t;

/*
 * Where a reclaim made at `since` stands, from the states its nodes have
 * now (states[0..n), in snapshot order, after returning nodes settle): the
 * first node that is not home decides: lent, the reclaim was cancelled
 * (*lent_again = its index); returning, it is still waiting, LATE once
 * more than deadline_s has passed and report_late (said once).  Every node
 * home: DONE.  lent_again may be NULL.
 */
pol_loan_reclaim_progress_t pol_loan_reclaim_progress(
	const pol_loan_node_state_t *states, int n, int64_t since, int64_t now,
	int64_t deadline_s, bool report_late, int *lent_again);

#endif
