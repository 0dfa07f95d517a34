/*
 * agora_gres.h - the GPUs of a node, read from Slurm's gres state: one
 * counter for Agora's pass (site_factor/agora) and the select wrapper.
 * Uses only libslurmfull's gres functions, so it is safe in every process
 * that loads the select wrapper.  Caller holds the node lock that protects
 * node_ptr's gres list (slurmctld) or owns the record (clients).
 */
#ifndef AGORA_GRES_H
#define AGORA_GRES_H

#include "agora_compat.h"
#include AGORA_INC_GRES
#include "src/common/list.h"
#include "src/common/node_conf.h"

#include "pol_model.h"

/*
 * Configured GPUs of a node (its gres/gpu gres_cnt_avail, capped at
 * POL_MAX_GPUS_PER_NODE); free_mask (may be NULL) gets the GPUs no job
 * holds (bit g: GPU g free; a GPU without File= is counted, not indexed).
 */
extern int agora_node_gpus(node_record_t *node_ptr, pol_gpumask_t *free_mask);

/*
 * The GPUs (bit g: GPU g, g < n_gpus) that a shared GRES (gres/shard,
 * gres/mps: GRES_CONF_SHARED) holds on a node whose gres/gpu state is
 * gpu_ns.  A whole-GPU job must never get one of them: stock cons_tres
 * filters them out through alt_gres_ns (gres_sched.c:104-124 in 22.05.8).
 * The shared state is gpu_ns->alt_gres_ns, or, when that is not set (a
 * node usage copy: gres_node_state_list_dup() does not copy alt_gres_ns),
 * the shared GRES of fallback_list (the node's live gres_list): stricter
 * than stock, never looser.  A GPU counts as held when the shared GRES's
 * gres_bit_alloc bit is set or a topo record of it with a count allocated
 * covers the GPU (stock clears the bit when the first of two shard jobs on
 * a GPU ends).  0 when the node has no shared GRES.
 */
extern pol_gpumask_t agora_gres_shared_held(gres_node_state_t *gpu_ns,
					    List fallback_list, int n_gpus);

#endif
