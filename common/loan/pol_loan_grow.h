/*
 * pol_loan_grow.h - the grow decision of a loan round (doc/loaning.md
 * "Elastic jobs"), snapshot in, grows out: which running elastic jobs of
 * the training partitions get how many of the idle training nodes
 * (loaned ones included).  agorad builds the snapshot from Slurm's job
 * table and node states and carries the grows out (the mark, the requeue
 * after the job's --signal and grace, the size while it pends).
 *
 * The rules, in order (pol_grow_gate):
 *   quiet    a reclaim is under way or the demand is unknown: no grow;
 *   waiting  a grown job has not restarted yet, or one is in the grace
 *            after its --signal: no other grow (two grows never count the
 *            same idle nodes);
 *   queue    a training job waits for nodes (pending, not held, reason
 *            None, Priority, Resources, PartitionNodeLimit or
 *            NodeNotAvail): the queue comes first;
 *   go       otherwise.
 * Then (pol_grow_choose) the candidates: running (not completing) batch
 * jobs that may be requeued, opted in as elastic, of a training
 * partition, below their known maximum, whose AdminComment is free or
 * Agora's elastic mark, and whose requeue limit allows a grow
 * (pol_requeue_grow_allowed).  Each one's time left is the time it has
 * run (capped by what its limit leaves: pol_loan_left_attained); its
 * resize cost is the work since its last checkpoint, the restart
 * overhead, the credential wait of a requeue and LoanGrowMinGain; the
 * multiple-choice knapsack (pol_loan_grow) picks the sizes.
 *
 * Pure C: no clock (now is a parameter), no I/O, no globals, no Slurm.
 */
#ifndef POL_LOAN_GROW_H
#define POL_LOAN_GROW_H

#include <stdbool.h>
#include <stdint.h>

typedef struct pol_grow_job {
	bool running;                /* RUNNING and not completing */
	bool pending;                /* PENDING */
	bool held;                   /* priority 0 */
	bool waits_for_nodes_reason; /* reason None, Priority, Resources,
					PartitionNodeLimit or NodeNotAvail */
	bool train;                  /* of a LoanTrainPartitions partition */
	bool elastic;                /* opted in (--comment=elastic[:MIN]) */
	bool requeue;                /* batch job that may be requeued */
	int restarts;                /* Slurm's Restarts= */
	bool mark_free;              /* AdminComment empty or an elastic mark */
	int num_nodes;               /* its size now */
	int max_nodes;               /* its elastic maximum (0 unknown) */
	int64_t start;               /* its start (epoch s) */
	int64_t limit_s;             /* its time limit (0: none) */
	int gpus_per_node;
} pol_grow_job_t;

typedef struct pol_grow_in {
	const pol_grow_job_t *jobs;
	int n_jobs;
	int idle_nodes; /* idle nodes in the training partitions */
	int64_t now;
	bool quiet;        /* a reclaim under way, or the demand unknown */
	int waiting;       /* grown jobs not restarted + grows in their grace */
	int64_t ckpt_s;    /* LoanCheckpointInterval (0: none) */
	int64_t restart_s; /* LoanRestartOverhead */
	int64_t cred_wait_s; /* a requeued job's wait before it may start */
	int64_t min_gain_s;  /* LoanGrowMinGain */
	double serial;       /* LoanScalingSerial */
	int max_requeues;    /* MaxRequeuesPerJob (0: none) */
} pol_grow_in_t;

typedef enum pol_grow_gate {
	POL_GROW_GO = 0,
	POL_GROW_QUIET,
	POL_GROW_WAITING,
	POL_GROW_QUEUE,
} pol_grow_gate_t;

/* The gate of the rules above; *blocking (may be NULL) gets the index of
 * the job that waits for nodes (QUEUE), else -1.  Needs no idle count. */
pol_grow_gate_t pol_grow_gate(const pol_grow_in_t *in, int *blocking);

/* Whether job j is a grow candidate (the list above). */
bool pol_grow_candidate(const pol_grow_job_t *j, int max_requeues);

typedef struct pol_grow_job_out {
	bool candidate;
	double left_s;   /* time left estimated at its size */
	double resize_s; /* what a grow costs it, LoanGrowMinGain included */
	int extra;       /* nodes added (0: not grown) */
	double gain_s;   /* the JCT reduction of extra (without the min gain) */
} pol_grow_job_out_t;

typedef struct pol_grow_out {
	pol_grow_job_out_t *jobs; /* caller-allocated, n_jobs */
	int n_candidates;
	int n_grown;
	double gain;  /* the knapsack's total */
	bool exact;   /* exact, or greedy */
	double bound; /* its bound */
} pol_grow_out_t;

/* The grows of a round whose gate is GO: candidates, their estimates and
 * the knapsack on idle_nodes.  0, or -1 (EINVAL, ENOMEM). */
int pol_grow_choose(const pol_grow_in_t *in, pol_grow_out_t *out);

/* How long after its grow a grown job that has not restarted keeps its
 * size before it goes back to its range (pol_grow_follow's give_up_s):
 * the credential wait, five loan rounds and a minute. */
int64_t pol_grow_give_up_s(int64_t cred_wait_s, int64_t interval_s);

#endif
