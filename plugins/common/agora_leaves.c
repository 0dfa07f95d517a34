/*
 * agora_leaves.c - see agora_leaves.h.
 */
#include "config.h"
#include "agora_compat.h"

#include <stdbool.h>

#include "src/common/bitstring.h"
#include AGORA_INC_TOPOLOGY

#include "agora_leaves.h"
#include "agora_ctld_weak.h"

extern void agora_set_leaves(pol_cluster_t *c, const int *slurm_index)
{
	int s, i, n_sw, n_leaves = 0;
	bool orphan = false;
	bitstr_t **sw = NULL;

	for (i = 0; i < c->n_nodes; i++)
		c->nodes[i].leaf = -1;
	n_sw = agora_leaf_switches(&sw);
	for (s = 0; s < n_sw; s++) {
		for (i = 0; i < c->n_nodes; i++) {
			int si = slurm_index ? slurm_index[i] : i;

			if (c->nodes[i].leaf < 0 && si < bit_size(sw[s]) &&
			    bit_test(sw[s], si))
				c->nodes[i].leaf = n_leaves;
		}
		n_leaves++;
	}
	agora_leaf_switches_free(sw, n_sw);
	for (i = 0; i < c->n_nodes; i++)
		if (c->nodes[i].leaf < 0) {
			c->nodes[i].leaf = n_leaves;
			orphan = true;
		}
	c->n_leaves = n_leaves + (orphan ? 1 : 0);
}
