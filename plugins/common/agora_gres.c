/*
 * agora_gres.c - see agora_gres.h.
 */
#include "config.h"
#include "agora_compat.h"

#include <pthread.h>

#include "slurm/slurm.h"
#include "src/common/bitstring.h"
#include AGORA_INC_GRES
#include "src/common/list.h"
#include "src/common/macros.h"

#include "agora_gres.h"
#include "agora_ctld_weak.h"

static uint32_t gpu_plugin_id;
static pthread_once_t gpu_once = PTHREAD_ONCE_INIT;

static void gpu_id_init(void)
{
	char gpu[] = "gpu";

	gpu_plugin_id = gres_build_id(gpu);
}

static pol_gpumask_t mask_of(bitstr_t *b, int n_gpus)
{
	pol_gpumask_t m = 0;
	int g;

	for (g = 0; b && g < n_gpus && g < bit_size(b); g++)
		if (bit_test(b, g))
			m |= (pol_gpumask_t) 1 << g;
	return m;
}

extern pol_gpumask_t agora_gres_shared_held(gres_node_state_t *gpu_ns,
					    List fallback_list, int n_gpus)
{
	gres_node_state_t *sh = gpu_ns ? AGORA_GRES_ALT_NS(gpu_ns) : NULL;
	pol_gpumask_t m = 0;
	int t;

	if (n_gpus > POL_MAX_GPUS_PER_NODE)
		n_gpus = POL_MAX_GPUS_PER_NODE;
	if (!sh && fallback_list) {
		ListIterator it = list_iterator_create(fallback_list);
		gres_state_t *gs;

		while ((gs = list_next(it)))
			if ((gs->config_flags & GRES_CONF_SHARED) &&
			    gs->gres_data) {
				sh = gs->gres_data;
				break;
			}
		list_iterator_destroy(it);
	}
	if (!sh || sh == gpu_ns)
		return 0;
	m = mask_of(sh->gres_bit_alloc, n_gpus);
	for (t = 0; sh->topo_gres_cnt_alloc && sh->topo_gres_bitmap &&
		    t < sh->topo_cnt;
	     t++)
		if (sh->topo_gres_cnt_alloc[t])
			m |= mask_of(sh->topo_gres_bitmap[t], n_gpus);
	return m;
}

extern int agora_node_gpus(node_record_t *node_ptr, pol_gpumask_t *free_mask)
{
	ListIterator it;
	gres_state_t *gs;
	int n = 0;

	if (free_mask)
		*free_mask = 0;
	if (!node_ptr || !node_ptr->gres_list)
		return 0;
	pthread_once(&gpu_once, gpu_id_init);
	it = list_iterator_create(node_ptr->gres_list);
	while ((gs = list_next(it))) {
		gres_node_state_t *ns = gs->gres_data;
		int g;

		if (gs->plugin_id != gpu_plugin_id || !ns)
			continue;
		n = (int) MIN(ns->gres_cnt_avail, POL_MAX_GPUS_PER_NODE);
		for (g = 0; free_mask && g < n; g++) {
			if (ns->gres_bit_alloc &&
			    g < bit_size(ns->gres_bit_alloc) &&
			    bit_test(ns->gres_bit_alloc, g))
				continue;
			if (!ns->gres_bit_alloc && g < (int) ns->gres_cnt_alloc)
				continue; /* no File=: count only */
			*free_mask |= (pol_gpumask_t) 1 << g;
		}
		if (free_mask) /* GPUs a shard/MPS job uses are not free */
			*free_mask &= ~agora_gres_shared_held(
				ns, node_ptr->gres_list, n);
		break;
	}
	list_iterator_destroy(it);
	return n;
}
