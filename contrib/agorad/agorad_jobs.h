/*
 * agorad_jobs.h - a job table read with slurmctld's update-time cache.
 */
#ifndef AGORAD_JOBS_H
#define AGORAD_JOBS_H

#include <stdbool.h>
#include <stdint.h>

#include <slurm/slurm.h>

/* One reader's copy of the job table (SHOW_ALL) of the cluster libslurm
 * talks to.  Zero-initialised before the first use. */
typedef struct ad_jobs_cache {
	job_info_msg_t *msg;
	uint64_t loads; /* answers with the table */
	uint64_t same;  /* SLURM_NO_CHANGE_IN_DATA answers */
	double asked;   /* monotonic s of the last answer */
} ad_jobs_cache_t;

/* The job table.  A copy answered less than max_age_s ago is returned
 * as it is (no RPC: readers of one pass share one read); else it is
 * asked for with the last answer's update time: when no job changed
 * since, slurmctld answers SLURM_NO_CHANGE_IN_DATA without packing a job
 * and the copy in c is returned.  *changed (may be NULL)
 * says whether the table is new.  NULL if slurmctld cannot be read
 * (slurm_get_errno() says why); the copy is kept for the next call.
 * The table stays c's: valid until the next call or ad_jobs_free. */
const job_info_msg_t *ad_jobs_load(ad_jobs_cache_t *c, double max_age_s,
				   bool *changed);
void ad_jobs_free(ad_jobs_cache_t *c);

/* Readers after the loan snapshot in one pass take its table if it is
 * younger than this (a requeue or update they send is seen next pass). */
#define AD_JOBS_PASS_S 1.0

/* The loan loop's copy of the local cluster's table, shared by the loan
 * snapshot, the grow and the relaunch check (one thread: the loop's). */
ad_jobs_cache_t *ad_jobs_local(void);

#endif
