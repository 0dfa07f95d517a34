/*
 * agora_select_place_int.h - what agora_select_place.c shares with
 * agora_select_gpuidx.c (Hook 3): the placement state under its lock.
 * Internal to the select wrapper.  Include after the Slurm headers and
 * pol_topo_place.h.
 */
#ifndef AGORA_SELECT_PLACE_INT_H
#define AGORA_SELECT_PLACE_INT_H

#include <stdbool.h>

typedef struct agora_place_ctx {
	const pol_cluster_t *cluster; /* the node table as the placer sees it */
	pol_topo_place_t *placer;
	pol_gpumask_t *free_masks; /* scratch, cluster->n_nodes entries */
} agora_place_ctx_t;

/*
 * Take the placement lock and, if Placement=agora, fill ctx (building the
 * cluster when the node table or topology changed).  Call
 * agora_place_end() afterwards whatever it returns; ctx is valid until then.
 * RET true if ctx is filled
 */
extern bool agora_place_begin(agora_place_ctx_t *ctx);
extern void agora_place_end(void);

/* true for a gres/gpu state */
extern bool agora_place_is_gpu(const gres_state_t *gs);

#endif /* AGORA_SELECT_PLACE_INT_H */
