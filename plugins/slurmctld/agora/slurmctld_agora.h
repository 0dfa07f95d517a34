/*
 * slurmctld_agora.h - entry points of slurmctld/agora.
 */
#ifndef SLURMCTLD_AGORA_H
#define SLURMCTLD_AGORA_H

#include "src/common/read_config.h"

extern int init(void);
extern int fini(void);
extern void slurmctld_plugstack_p_get_config(config_plugin_params_t *p);

#endif
