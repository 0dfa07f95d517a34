/*
 * agorad_relaunch.h - training jobs that a slurmctld crash made fail at
 * launch, requeued (agorad_relaunch.c, doc/loaning.md "slurmctld kill -9
 * mid-reclaim").
 */
#ifndef AGORAD_RELAUNCH_H
#define AGORAD_RELAUNCH_H

#include <slurm/slurm.h>
#include "agora_compat_pub.h"

#include "agora_conf.h"

/* The controller's configuration, kept and re-read only when it changed
 * (a restart or a reconfigure); NULL when slurmctld cannot be reached.
 * Owned here: do not free. */
const slurm_conf_t *ad_ctl_conf(void);

/* Note the queued and running training-partition jobs, and after a
 * slurmctld (re)start requeue each one that was there before it and then
 * failed at launch by Slurm's crash-window credential race (exit 1:0, no
 * run time; each logged).  At most once a second; now: seconds. */
void ad_loan_relaunch(const agora_conf_t *conf, double now);

#endif
