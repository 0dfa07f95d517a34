/*
 * site_factor_agora.h - entry points of site_factor/agora.
 */
#ifndef SITE_FACTOR_AGORA_H
#define SITE_FACTOR_AGORA_H

#include "src/slurmctld/slurmctld.h"

extern int init(void);
extern int fini(void);
extern void site_factor_p_reconfig(void);
extern void site_factor_p_set(job_record_t *job_ptr);
extern void site_factor_p_update(void);

/* For preempt/agora, which looks them up with dlsym (job lock held). */
extern bool agora_export_job_won(job_record_t *job_ptr);
extern bool agora_export_preemptable(job_record_t *victim,
				     job_record_t *preemptor);
extern uint32_t agora_export_victim_rank(job_record_t *job_ptr);
extern uint32_t agora_export_grace(job_record_t *job_ptr);

#endif
