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
		break;
	}
	list_iterator_destroy(it);
	return n;
}
