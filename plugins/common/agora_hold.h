/*
 * agora_hold.h - Slurm-side helpers shared by Agora's slurmctld plugins:
 * which jobs the auction manages, whether Slurm would start a pending job
 * now, and the names of Agora's state files.
 *
 * Agora no longer holds jobs out of Slurm's schedulers (doc/design.md,
 * "Agora decides, Slurm acts"); jobs held by an earlier version (state
 * reason AGORA_HOLD_REASON with an "Agora: " description) are released
 * by the next pass.  Callers hold the job lock their call names.
 */
#ifndef AGORA_HOLD_H
#define AGORA_HOLD_H

#include <stdbool.h>
#include <time.h>

#include "src/slurmctld/slurmctld.h"

#include "agora_conf.h"

/* Ledger state file in StateSaveLocation (written by site_factor/agora). */
#define AGORA_CREDIT_FILE "agora_credit.json"
/* What the last pass decided (written by site_factor/agora, shown by
 * slurmctld/agora in "scontrol show config" and by agoractl). */
#define AGORA_VIEW_FILE "agora_view.json"
/* The state reason an earlier Agora used to hold auction jobs. */
#define AGORA_HOLD_REASON WAIT_RESV_DELETED
/* Prefix of every text Agora writes (SystemComment, node Comment). */
#define AGORA_DESC_PREFIX "Agora: "

/* True if the job's partition (any of them) is in AuctionPartitions.
 * Job read lock. */
extern bool agora_job_auction_managed(job_record_t *job_ptr,
				      const agora_conf_t *conf);

/* True if every partition the job may run in is in AuctionPartitions:
 * only such a job may win the auction and get its boost, which is one
 * site factor for all of a job's partitions and would otherwise put it
 * first in a partition the auction does not manage.  Job read lock. */
extern bool agora_job_auction_only(job_record_t *job_ptr,
				   const agora_conf_t *conf);

/*
 * True if Slurm's own schedulers would consider this pending job now:
 * not held, its begin time has come, and Slurm's last reason for it is one
 * of waiting for resources or for higher-priority jobs (a dependency, an
 * array task limit, a QOS/association/partition limit, a reservation or
 * licenses give other reasons, set by Slurm, and keep it out of the
 * auction).  Heterogeneous jobs are left to Slurm.  Job read lock.
 */
extern bool agora_job_ready(job_record_t *job_ptr, time_t now);

/* True if the job carries an earlier Agora's auction hold. */
extern bool agora_job_held(job_record_t *job_ptr);

/* Clear such a hold (job write lock). */
extern void agora_release_hold(job_record_t *job_ptr);

#endif
