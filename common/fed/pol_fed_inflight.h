/*
 * pol_fed_inflight.h - pins whose copy has not reached its winner yet.
 *
 * A pinned job's copy reaches the winner through Slurm's federation agent
 * some time after the release, and until then the winner's survey shows
 * neither a pending job nor GPUs in use for it: a round in between saw
 * the winner's GPUs free and could award them again (test_fed's 2b once
 * put 3 of 4 8-GPU jobs on a cluster with 16 free GPUs when a burst was
 * auctioned over two rounds).  agorad keeps each pin here from the pin
 * until the winner's survey shows the job's copy, and counts its GPUs as
 * queued on the winner meanwhile.  An entry older than max_age_s is
 * dropped once nothing has arrived at its winner for max_age_s either (a
 * copy that never arrives holds nothing for ever), and at the latest
 * after POL_FED_INFLIGHT_HARD_S.
 *
 * The flow to each winner.  Copies do not always arrive with the pins:
 * on Slurm 22.05 a winner takes about one copy a second, however many are
 * on their way (fed_mgr.c sleeps after every forwarded update; doc/
 * evaluation.md, "Pinned is not arrived"), so a burst's copies reach a
 * remote winner minutes after their pins.  The list measures that rate
 * from the surveys (seconds per copy while a backlog remained between two
 * surveys, pol_fed_inflight_seen) rather than assume it from a release,
 * and the auction adds the wait to a remote plan's start
 * (pol_fed_plan_t.transit_s): a job is not sent into a queue of copies
 * when its origin or another winner would start it sooner.
 *
 * Pure: no Slurm header, no clock (now is an argument), no logging.
 */
#ifndef POL_FED_INFLIGHT_H
#define POL_FED_INFLIGHT_H

#include <stdint.h>

#include "pol_fed.h"

/* How long a pin counts at least (s), and for how long nothing may arrive
 * at its winner before it is dropped: copies that flow arrive within
 * seconds of each other. */
#define POL_FED_INFLIGHT_MAX_S 60
/* How long a pin counts at most (s), whatever else arrives. */
#define POL_FED_INFLIGHT_HARD_S 3600
/* The clusters whose flow is measured (one federation: at most 64). */
#define POL_FED_INFLIGHT_FLOWS 64

#define POL_FED_INFLIGHT_NAME 64

typedef struct pol_fed_inflight {
	uint32_t job_id;
	char cluster[POL_FED_INFLIGHT_NAME]; /* the winner */
	int gpus;
	int64_t limit_s; /* its time limit (s), 0: unknown */
	int64_t at;      /* when it was pinned */
} pol_fed_inflight_t;

/* What the surveys of one winner showed of the copies' flow. */
typedef struct pol_fed_inflight_flow {
	char cluster[POL_FED_INFLIGHT_NAME];
	int64_t last_seen;    /* the last survey noted (s; 0: none) */
	int64_t last_arrival; /* the last survey that showed a copy arrive */
	double s_per_copy;    /* seconds per copy, measured while a backlog
				 remained (0: not measured) */
	double prior_s;       /* seconds per copy until one is measured (the
				 winner's Slurm release, pol_fed_copy_prior_s) */
} pol_fed_inflight_flow_t;

typedef struct pol_fed_inflight_list {
	pol_fed_inflight_t *v;
	int n, cap;
	pol_fed_inflight_flow_t flow[POL_FED_INFLIGHT_FLOWS];
	int n_flow;
} pol_fed_inflight_list_t;

/* Keep job_id (gpus GPUs for at most limit_s, 0: unknown) pinned to
 * cluster at `at` (a job already kept is replaced: a re-pin).  0, or -1
 * with errno (EINVAL: no cluster, one too long, gpus < 0 or limit_s < 0;
 * ENOMEM). */
int pol_fed_inflight_add(pol_fed_inflight_list_t *l, uint32_t job_id,
			 const char *cluster, int gpus, int64_t limit_s,
			 int64_t at);

/* What the survey of cluster at now shows: the ids of the jobs' copies
 * there (any order, n_seen of them).  Drops the pins to cluster whose copy
 * is seen and returns how many.  It also measures the flow: when pins
 * kept since the previous survey of cluster are still on their way (a
 * backlog all along), the k copies that arrived in between took
 * (now - previous) / k seconds each (no copy: at least now - previous);
 * the measure is the mean of that and the one before (halves). */
int pol_fed_inflight_seen(pol_fed_inflight_list_t *l, const char *cluster,
			  const uint32_t *seen, int n_seen, int64_t now);

/* Slurm's RPC protocol version of 22.05 ((38 << 8) | 0, as slurmdbd
 * records each cluster's): a winner at it or below sleeps 1 s after every
 * forwarded update (read in 22.05.8's fed_mgr.c:2015-2030; 24.11.5 does
 * not; 23.02-24.05 not read: measured at run time). */
#define POL_FED_RPC_22_05 ((38 << 8) | 0)

/* Seconds per copy to assume for a winner at RPC protocol version
 * rpc_version before any is measured: 1 at 22.05 or below, else 0 (0:
 * unknown, 0). */
double pol_fed_copy_prior_s(int rpc_version);

/* Sets cluster's prior seconds per copy (pol_fed_copy_prior_s); 0, or -1
 * when no more clusters can be kept or the name is bad. */
int pol_fed_inflight_set_prior(pol_fed_inflight_list_t *l, const char *cluster,
			       double prior_s);

/* Seconds per copy for cluster: the measure, else its prior (0: neither). */
double pol_fed_inflight_s_per_copy(const pol_fed_inflight_list_t *l,
				   const char *cluster);

/* Seconds until a copy pinned now reaches cluster: the pins on their way
 * there times its seconds per copy (0 when nothing is in flight or copies
 * arrive with their pins). */
double pol_fed_inflight_transit_s(const pol_fed_inflight_list_t *l,
				  const char *cluster);

/* Drops every pin older than max_age_s at now whose winner has shown no
 * copy arrive for max_age_s either, every pin older than
 * POL_FED_INFLIGHT_HARD_S, and any pinned in the future (a clock step);
 * returns how many. */
int pol_fed_inflight_expire(pol_fed_inflight_list_t *l, int64_t now,
			    int max_age_s);

/* Drops job_id's pin (one that failed: it was kept when its pins step
 * started); returns whether it was kept. */
int pol_fed_inflight_drop(pol_fed_inflight_list_t *l, uint32_t job_id);

/* Drops the pins of the jobs their origin shows cancelled (ids[n], any
 * order): Slurm forwards the cancel, and a copy that still arrives is
 * cancelled there (pol_fed_orphans), so none of them will take GPUs at
 * its winner.  Without this a burst cancelled at its origin kept its
 * winners looking busy until the pins expired (on the harness: 304 GPUs
 * "on their way" to c2 after a 100-job burst's cancel, and the next
 * burst went to c1 alone for 30 s).  Returns how many were dropped (-1:
 * out of memory, none). */
int pol_fed_inflight_cancelled(pol_fed_inflight_list_t *l, const uint32_t *ids,
			       int n);

/* The GPUs of the pins still in flight to cluster. */
int pol_fed_inflight_gpus(const pol_fed_inflight_list_t *l,
			  const char *cluster);

/* Adds the pins still in flight to cluster to what its survey showed
 * (*load): they will queue there, so their GPUs, their count and their
 * work (GPUs x time limit, as the survey counts a queued job's; 0 for an
 * unknown limit) join the queued ones, and their longest limit the
 * cluster's.  The same job counts once: a pin is dropped when the survey
 * shows its copy. */
void pol_fed_inflight_load(const pol_fed_inflight_list_t *l,
			   const char *cluster, pol_fed_cluster_load_t *load);
/* The pins still in flight to cluster (jobs that will queue there). */
int pol_fed_inflight_jobs(const pol_fed_inflight_list_t *l,
			  const char *cluster);

void pol_fed_inflight_free(pol_fed_inflight_list_t *l);

#endif
