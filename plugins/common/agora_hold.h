/*
 * agora_hold.h - Slurm-side helpers shared by Agora's slurmctld plugins
 * (sched/agora and site_factor/agora): which jobs the auction manages, how
 * they are held out of the main scheduler and backfill, and released.
 *
 * Compiled into each plugin (plugins live in separate .so files and cannot
 * share code at run time).  Callers hold the job write lock.
 */
#ifndef AGORA_HOLD_H
#define AGORA_HOLD_H

#include <stdbool.h>

#include "src/slurmctld/slurmctld.h"

#include "agora_conf.h"

/* Ledger state file in StateSaveLocation (written by sched/agora). */
#define AGORA_CREDIT_FILE "agora_credit.json"
/* What the last pass decided (written by sched/agora, shown by
 * slurmctld/agora in "scontrol show config" and by agoractl). */
#define AGORA_VIEW_FILE "agora_view.json"
/*
 * The state reason of Agora's auction hold.  It must be a reason that
 * job_independent() treats as "not eligible" while the job keeps its
 * priority (so sprio shows it), and that no Slurm code path rewrites for a
 * job with priority > 0: WAIT_HELD is turned into WAIT_DEPENDENCY by the
 * main scheduler's runnable test and then released.  WAIT_RESV_DELETED is
 * left alone by the schedulers and by job updates.  Users never see its
 * name: state_desc ("Agora: ...") replaces the reason in squeue/scontrol.
 */
#define AGORA_HOLD_REASON WAIT_RESV_DELETED
/* Prefix of every state_desc Agora writes (so it knows its own holds). */
#define AGORA_DESC_PREFIX "Agora: "

/* True if the job's partition (any of them) is in AuctionPartitions. */
extern bool agora_job_auction_managed(job_record_t *job_ptr,
				      const agora_conf_t *conf);

/*
 * Hold a pending job for the auction: reason AGORA_HOLD_REASON (skipped by
 * the main scheduler and backfill, which test job_independent()) with description
 * "Agora: <why>" (default: waiting for the next GPU auction).  The priority
 * is kept, so sprio still shows the job's factors.
 */
extern void agora_hold_for_auction(job_record_t *job_ptr, const char *why);

/* True if the job carries Agora's auction hold. */
extern bool agora_job_held(job_record_t *job_ptr);

/* Clear Agora's hold (before select_nodes() of an awarded job). */
extern void agora_release_hold(job_record_t *job_ptr);

#endif
