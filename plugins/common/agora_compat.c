/*
 * agora_compat.c - the release-specific accessors of agora_compat.h whose
 * bodies differ between Slurm releases (doc/design.md, "Slurm releases").
 */
#include "config.h"
#include "agora_compat.h"

#include <stdbool.h>

#include "src/common/bitstring.h"
#include "src/common/list.h"
#include "src/common/node_conf.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include AGORA_INC_TOPOLOGY

#include "agora_ctld_weak.h"

/* as in agora_ctld_weak.h: the select wrapper loads in libslurm programs too */
#pragma weak bit_copy
#pragma weak bit_free

#if AGORA_SLURM_AT_LEAST(23, 11)
/*
 * topology/tree keeps its switch table to itself since 23.02; its
 * TOPO_DATA_TOPOLOGY_PTR answer (what scontrol show topology prints) is a
 * topoinfo_tree_t, private to topology_tree.c, of this shape.
 */
typedef struct {
	uint32_t record_count;
	topo_info_t *topo_array;
} agora_topoinfo_tree_t;

/*
 * topology/block (23.11's native block-aligned placement): its answer is a
 * topoinfo_block_t of topoinfo_bblock_t, private to topology_block.c, of
 * this shape.  Its base blocks (not aggregated) are Agora's leaves.
 */
typedef struct {
	bool aggregated;
	uint16_t block_index;
	char *name;
	char *nodes;
	uint32_t size;
} agora_topoinfo_bblock_t;

typedef struct {
	uint32_t record_count;
	agora_topoinfo_bblock_t *topo_array;
} agora_topoinfo_block_t;

#pragma weak topology_g_get
#pragma weak topology_g_topology_free
#pragma weak node_name2bitmap

typedef void (*leaf_fn_t)(void *arg, const char *name, const char *nodes);

/*
 * fn(arg, name, nodes) for each leaf: topology/tree's level-0 switches, or
 * topology/block's base blocks (not aggregated); RET the number of leaves.
 */
static int leaf_each(leaf_fn_t fn, void *arg)
{
	dynamic_plugin_data_t *dyn = NULL;
	agora_topoinfo_tree_t *tree;
	agora_topoinfo_block_t *block;
	int n = 0;
	uint32_t i;

	if (!topology_g_get || topology_g_get(TOPO_DATA_TOPOLOGY_PTR, &dyn) ||
	    !dyn)
		return 0;
	if (dyn->plugin_id == TOPOLOGY_PLUGIN_TREE && (tree = dyn->data)) {
		for (i = 0; i < tree->record_count; i++) {
			topo_info_t *sw = &tree->topo_array[i];

			if (!sw->level && sw->nodes && sw->nodes[0]) {
				fn(arg, sw->name, sw->nodes);
				n++;
			}
		}
	} else if (dyn->plugin_id == TOPOLOGY_PLUGIN_BLOCK &&
		   (block = dyn->data)) {
		for (i = 0; i < block->record_count; i++) {
			agora_topoinfo_bblock_t *bb = &block->topo_array[i];

			if (!bb->aggregated && bb->nodes && bb->nodes[0]) {
				fn(arg, bb->name, bb->nodes);
				n++;
			}
		}
	}
	topology_g_topology_free(dyn);
	return n;
}

extern int agora_switch_count(void)
{
	int cnt = 0;

	if (!topology_g_get || topology_g_get(TOPO_DATA_REC_CNT, &cnt))
		return 0;
	return cnt;
}

typedef struct {
	bitstr_t **maps;
	int n, size;
} leaf_maps_t;

/* one node bitmap per leaf, as agora_leaf_switches() gives them */
static void leaf_map_add(void *arg, const char *name, const char *nodes)
{
	leaf_maps_t *lm = arg;
	bitstr_t *b = NULL;

	(void) name;
	if (node_name2bitmap((char *) nodes, true, &b, NULL) && !b)
		return;
	if (lm->n + 1 >= lm->size) {
		lm->size = lm->size ? 2 * lm->size : 16;
		xrecalloc(lm->maps, lm->size, sizeof(bitstr_t *));
	}
	lm->maps[lm->n++] = b;
}

extern int agora_leaf_switches(bitstr_t ***maps)
{
	leaf_maps_t lm = { NULL, 0, 0 };

	*maps = NULL;
	if (!node_name2bitmap)
		return 0;
	(void) leaf_each(leaf_map_add, &lm);
	*maps = lm.maps;
	return lm.n;
}

/* Leaf[<name>]=<nodes>, one config_key_pair_t */
static void leaf_pair_add(void *arg, const char *name, const char *nodes)
{
	config_key_pair_t *kp = xmalloc(sizeof(*kp));

	kp->name = xstrdup_printf("Leaf[%s]", name ? name : "");
	kp->value = xstrdup(nodes);
	list_append((List) arg, kp);
}

extern int agora_leaf_pairs_append(List key_pairs)
{
	return leaf_each(leaf_pair_add, key_pairs);
}
#else
extern int agora_switch_count(void)
{
	return &switch_record_cnt ? switch_record_cnt : 0;
}

extern int agora_leaf_switches(bitstr_t ***maps)
{
	int s, n = 0;

	*maps = NULL;
	if (!&switch_record_cnt || !&switch_record_table ||
	    !switch_record_table || switch_record_cnt <= 0)
		return 0;
	*maps = xcalloc(switch_record_cnt + 1, sizeof(bitstr_t *));
	for (s = 0; s < switch_record_cnt; s++) {
		switch_record_t *sw = &switch_record_table[s];

		if (sw->level != 0 || !sw->node_bitmap)
			continue;
		(*maps)[n++] = bit_copy(sw->node_bitmap);
	}
	return n;
}
#endif

extern void agora_leaf_switches_free(bitstr_t **maps, int n)
{
	for (int i = 0; i < n; i++)
		FREE_NULL_BITMAP(maps[i]);
	xfree(maps);
}
