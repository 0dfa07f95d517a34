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
 * queued on the winner meanwhile; an entry older than max_age_s is
 * dropped (a copy that never arrives holds nothing for ever).
 *
 * Pure: no Slurm header, no clock (now is an argument), no logging.
 */
#ifndef POL_FED_INFLIGHT_H
#define POL_FED_INFLIGHT_H

#include <stdint.h>

/* How long a pin counts at most (s): copies arrive within seconds. */
#define POL_FED_INFLIGHT_MAX_S 60

#define POL_FED_INFLIGHT_NAME 64

typedef struct pol_fed_inflight {
	uint32_t job_id;
	char cluster[POL_FED_INFLIGHT_NAME]; /* the winner */
	int gpus;
	int64_t at; /* when it was pinned */
} pol_fed_inflight_t;

typedef struct pol_fed_inflight_list {
	pol_fed_inflight_t *v;
	int n, cap;
} pol_fed_inflight_list_t;

/* Keep job_id pinned to cluster at `at` (a job already kept is replaced:
 * a re-pin).  0, or -1 with errno (EINVAL: no cluster, one too long, or
 * gpus < 0; ENOMEM). */
int pol_fed_inflight_add(pol_fed_inflight_list_t *l, uint32_t job_id,
			 const char *cluster, int gpus, int64_t at);

/* What the survey of cluster shows: the ids of the jobs' copies there
 * (any order, n_seen of them).  Drops the pins to cluster whose copy is
 * seen; returns how many. */
int pol_fed_inflight_seen(pol_fed_inflight_list_t *l, const char *cluster,
			  const uint32_t *seen, int n_seen);

/* Drops every pin older than max_age_s at now (and any pinned in the
 * future: a clock step); returns how many. */
int pol_fed_inflight_expire(pol_fed_inflight_list_t *l, int64_t now,
			    int max_age_s);

/* Drops job_id's pin (one that failed: it was kept when its pins step
 * started); returns whether it was kept. */
int pol_fed_inflight_drop(pol_fed_inflight_list_t *l, uint32_t job_id);

/* The GPUs of the pins still in flight to cluster. */
int pol_fed_inflight_gpus(const pol_fed_inflight_list_t *l,
			  const char *cluster);

void pol_fed_inflight_free(pol_fed_inflight_list_t *l);

#endif
