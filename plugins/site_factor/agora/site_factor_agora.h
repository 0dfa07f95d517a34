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

#endif
