/*
 * agora_gres.h - the GPUs of a node, read from Slurm's gres state: one
 * counter for Agora's pass (site_factor/agora) and the select wrapper.
 * Uses only libslurmfull's gres functions, so it is safe in every process
 * that loads the select wrapper.  Caller holds the node lock that protects
 * node_ptr's gres list (slurmctld) or owns the record (clients).
 */
#ifndef AGORA_GRES_H
#define AGORA_GRES_H

#include "src/common/node_conf.h"

#include "pol_model.h"

/*
 * Configured GPUs of a node (its gres/gpu gres_cnt_avail, capped at
 * POL_MAX_GPUS_PER_NODE); free_mask (may be NULL) gets the GPUs no job
 * holds (bit g: GPU g free; a GPU without File= is counted, not indexed).
 */
extern int agora_node_gpus(node_record_t *node_ptr, pol_gpumask_t *free_mask);

#endif
