/*
 * agorad_loan.h - agorad's second job: loaning idle inference nodes to
 * training and taking them back (doc/loaning.md).
 *
 * agorad_loan.c        the loan round: the core's decision (pol_loan_round)
 *                      on a snapshot, applied; logs and history
 * agorad_loan_state.c  the state file agoractl loans reads, read back at
 *                      start
 * agorad_grow.c        elastic jobs grow onto idle training nodes
 * agorad_loan_slurm.c  what it reads from and writes to Slurm (snapshot,
 *                      partition node lists, node Comments, shrinks)
 * agorad_loan_demand.c the demand source
 * agorad_elastic.c     elastic jobs' opt-in, ranges and AdminComment
 * agorad_requeue.c     requeues: --signal, grace, limit, Slurm's requeue
 * Each file calls only files below it in this list (agorad_relaunch.c
 * and agorad_jobs.c sit below agorad_grow.c); check-layers.sh (make
 * check) fails on a loop.
 *
 * The loan is Slurm's state, not agorad's: an inference node is on loan
 * while it is in a training partition's node list, and its Comment is a
 * versioned mark with a heartbeat ("Agora loan v1: lent since T,
 * heartbeat T", pol_loan_lease.h) that agorad renews every round, so that
 * a slurmctld restart leaves a trace agorad reconciles, and so that
 * slurmctld (site_factor/agora) returns the node by itself once agorad
 * stops renewing it for LoanLeaseTimeout.
 */
#ifndef AGORAD_LOAN_H
#define AGORAD_LOAN_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include <json-c/json.h>
#include <slurm/slurm.h>
#include "agora_compat_pub.h"

#include "agora_conf.h"
#include "pol_loan_lease.h"
#include "pol_loan_requeue.h"

/* ---- what agorad.c calls ---- */

/* Run one loan round if LoanInterval has passed since the last one
 * (mono: CLOCK_MONOTONIC seconds, for the interval; now: the wall clock,
 * for what is compared with Slurm's times and written down).
 * state_path: agorad's -s file; the loans go beside it (ad_loan_path).
 * Returns 0, or -1 when Slurm could not be read (logged). */
int ad_loan_tick(const agora_conf_t *conf, const char *state_path, double mono,
		 double now);
/* With Loaning=no, at most every LoanInterval: the grows under way
 * (the loan state file's, or this process') still end; nothing else. */
void ad_loan_follow(const agora_conf_t *conf, const char *state_path,
		    double mono, double now);
/* Seconds until the next loan round is due (0: now), at mono
 * (CLOCK_MONOTONIC seconds). */
double ad_loan_due_in(const agora_conf_t *conf, double mono);
/* agorad stops (SIGTERM): every lent node leaves the training partitions
 * (no new borrower lands there); borrowers keep running on their marks'
 * lease.  0, or -1 (logged). */
int ad_loan_return(const agora_conf_t *conf);
void ad_loan_fini(void);

/* The loan state file beside agorad's state file: X.json -> X.loans.json,
 * else X.loans (malloc'ed; NULL if state_path is NULL). */
char *ad_loan_path(const char *state_path);

/* ---- shared by agorad_loan.c and agorad_loan_slurm.c ---- */

#define LN_NAME        64
#define LN_MAX_HISTORY 64
#define LN_CANCELLED   (-2.0)

/* a requeue agorad wants (agorad_requeue.c) */
typedef struct {
	uint32_t id;
	int64_t start; /* its current run (the signal is per run) */
	bool requeue;  /* batch job, --requeue */
	int restarts;  /* Slurm's Restarts= */
	bool live;     /* Slurm can take its requeue (pol_requeue_live) */
	bool run_over; /* running on no node (pol_requeue_run_over) */
} ln_rq_job_t;

typedef enum {
	LN_HOME = 0,  /* serves inference: not in training, no borrower */
	LN_LENT,      /* in a training partition */
	LN_RETURNING, /* out of training, but borrowers or a loan Comment */
} ln_state_t;

typedef struct {
	char name[LN_NAME];
	bool up;           /* not down, drained or failing */
	bool registering;  /* UNKNOWN: not heard from since slurmctld started */
	bool in_train;     /* in a training partition's node list now */
	bool commented;    /* its Comment is a loan mark (pol_loan_lease.h) */
	bool free_comment; /* Comment empty or Agora's: may be lent */
	pol_loan_lease_mark_t mark; /* the mark, when commented */
	bool other_jobs; /* runs jobs that are not training's (inference) */
	bool pinned;     /* runs a training job that cannot be requeued */
	int64_t since;   /* loan start, from the Comment (0 unknown) */
	int n_borrowers;
	ln_state_t state;
} ln_node_t;

typedef struct {
	uint32_t id;
	int gpus;
	int64_t start;
	bool requeue; /* --requeue (batch job, requeue allowed) */
	int n_nodes;  /* inference nodes it runs on */
	int *nodes;   /* their indices in the snapshot's nodes */
	/* elastic (opt-in: --comment=elastic with sbatch -N MIN-MAX, or
	 * --comment=elastic:MIN): it may shrink down to min_nodes (0
	 * unknown: never shrunk) by giving up nodes but its batch host */
	bool elastic;
	int min_nodes, total_nodes;
	int batch;      /* index of its batch host in the snapshot, or -1 */
	char *all;      /* all its nodes (Slurm's list) */
	ln_rq_job_t rq; /* its requeue: --signal, restarts */
} ln_job_t;

typedef struct {
	ln_node_t *nodes; /* the inference partitions' nodes */
	int n_nodes;
	ln_job_t *jobs; /* running training jobs on inference nodes */
	int n_jobs;
	/* nodes of running or pending jobs of the inference partitions (the
	 * demand source "jobs") */
	int infer_job_nodes;
} ln_snap_t;

typedef struct {
	int64_t time;
	int need;
	char nodes[512];                /* the nodes taken back */
	char victims[512];              /* "job:cost,..." */
	double cost;                    /* GPU-hours lost, least-cost choice */
	double cost_slurm, cost_recent; /* the alternatives' costs */
	int short_by;
	/* nodes home after this long (seen by agorad's next round); -1 not
	 * yet; LN_CANCELLED: demand fell and a node was lent again first */
	double done_s;
	int deadline_s;
} ln_reclaim_t;

/* agorad_loan_slurm.c */
/* The nodes of the inference partitions (*inf; inf may be NULL) and of the
 * training partitions (*train, loans included), as Slurm has them now;
 * the caller destroys the lists.  Returns 0 or -1 (logged). */
int ln_loan_partitions(const agora_conf_t *conf, agora_hostlist_t *inf,
		       agora_hostlist_t *train);
int ln_snapshot(const agora_conf_t *conf, ln_snap_t *s);
void ln_snap_free(ln_snap_t *s);
/* Put exactly the nodes with lend[i] of s into every training partition
 * (and keep each partition's own nodes).  Returns 0 or -1 (logged). */
int ln_set_train_nodes(const agora_conf_t *conf, const ln_snap_t *s,
		       const bool *lend);
/* Set (text non-NULL) or clear a node's loan Comment. */
int ln_set_comment(const char *node, const char *text);
/* Write a node's v1 loan mark: lent since `since`, heartbeat now. */
int ln_set_lent_mark(ln_node_t *n, int64_t now);
/* agorad_requeue.c: a requeue agorad wants (a victim, a grow), with the
 * job's --signal, its grace and the requeue limit (pol_loan_requeue.h). */
/* Requeue one job (Slurm's own requeue: SIGTERM, KillWait, requeued). */
int ln_requeue(uint32_t job_id);
void ln_rq_from_job(const agora_conf_t *conf, const slurm_job_info_t *j,
		    ln_rq_job_t *rj);
/* Whether it may be a victim by requeue (MaxRequeuesPerJob); a job at
 * its limit is logged once per run. */
bool ln_rq_allowed(const agora_conf_t *conf, const ln_rq_job_t *rj);
/* This round's step (pol_requeue_next), the signal sent when it says so
 * (why: "a reclaim of node X", "a grow", for the logs).  The --signal is
 * read from the job's batch script once per run (its #SBATCH lines:
 * Slurm's job information does not carry it).  NOW: the caller
 * requeues it with ln_requeue_run. */
pol_requeue_act_t ln_requeue_step(const agora_conf_t *conf,
				  const ln_rq_job_t *rj, int64_t now,
				  const char *why);
/* Requeue it now (ln_requeue).  0 or -1 (logged). */
int ln_requeue_run(const ln_rq_job_t *rj);
void ln_requeue_fini(void);
/* When agorad last requeued the job (epoch s), 0 if it has not (since
 * this agorad started). */
int64_t ln_requeued_at(uint32_t job_id);
/* agorad_loan_slurm.c: shrink a running job to the nodes of keep
 * (scontrol update job NodeList=). */
int ln_shrink(uint32_t job_id, const char *keep);
/* agorad_elastic.c: the elastic opt-in, the job's comment: "elastic" (the minimum is the
 * MIN of sbatch -N MIN-MAX, seen while the job pends) or "elastic:MIN".
 * Returns MIN, 0 for "elastic", -1 when the job did not opt in. */
int ln_elastic_comment(const char *comment);
/* The node range of an elastic job, first seen while it was pending
 * (kept across agorad restarts in the state file); its minimum, 0 when
 * unknown. */
void ln_elastic_note(uint32_t job_id, int min_nodes, int max_nodes);
int ln_elastic_min(uint32_t job_id);
/* The range from the job's own mark: replaces what was noted. */
void ln_elastic_set(uint32_t job_id, int min_nodes, int max_nodes);
/* Write a job's AdminComment (the elastic mark).  0 or -1 (logged). */
int ln_set_admin_comment(uint32_t job_id, const char *text);
/* Its maximum, 0 when unknown. */
int ln_elastic_max(uint32_t job_id);
/* The ranges' part of the loan state file, and reading it back. */
json_object *ln_elastic_json(void);
void ln_elastic_read(json_object *elastic);
/* agorad_loan_demand.c: the inference demand in nodes; -1 when the
 * source fails (logged). */
double ln_demand(const agora_conf_t *conf, const ln_snap_t *s);
/* What the last round decided besides its nodes: a reclaim waiting for a
 * checkpoint (wait_s > 0: since wait_since, for need nodes; ahead: ahead
 * of a rising demand) and the demand projected LoanReclaimAhead ahead (0:
 * off). */
typedef struct ln_round_view {
	int64_t wait_since, wait_s;
	int need;
	bool ahead;
	double demand_ahead;
} ln_round_view_t;
/* agorad_loan_state.c: the state file agoractl loans reads. */
void ln_write_state(const char *path, const ln_snap_t *s, int64_t now,
		    double demand, int want, const ln_round_view_t *v,
		    const ln_reclaim_t *hist, int n_hist);
/* The reclaim history of a previous agorad's state file. */
int ln_read_history(const char *path, ln_reclaim_t *hist, int max);

/* agorad_grow.c: elastic jobs grow onto idle training nodes by a requeue
 * at the new size (pol_loan_grow).  quiet: a reclaim is under way or the
 * demand is unknown (no new grow, grown jobs are still followed). */
void ad_grow_round(const agora_conf_t *conf, int64_t now, bool quiet);
/* With growing or loaning off: the grows under way still end as the core
 * says (a job that does not restart goes back to its range); no new one.
 * Reads the job table only while a grow is followed. */
void ad_grow_follow_only(const agora_conf_t *conf, int64_t now);
/* Its part of the loan state file, and reading it back. */
json_object *ad_grow_json(void);
void ad_grow_read(json_object *grows);
void ad_grow_fini(void);

#endif
