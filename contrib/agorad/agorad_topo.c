/*
 * agorad_topo.c - a cluster's switch tree as agorad's plans see it: the
 * leaf switch of each node, for the locality of a will-run's planned
 * nodes (doc/federation.md "GPU locality").  Where it comes from differs
 * per release (agora_compat_pub.h AGORA_TOPO_IN_SELECT_CONF): 22.05's
 * slurm_load_topo() records, 23.11+'s Leaf[] pairs of the select
 * wrapper in "scontrol show config".
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <slurm/slurm.h>
#include "agora_compat_pub.h"

#include "agorad_round_int.h"

/* leaf[i] = n for each node record i of nm that is in the hostlist nodes */
static void leaf_mark(const node_info_msg_t *nm, const char *nodes, int n,
		      int *leaf)
{
	agora_hostlist_t hl = slurm_hostlist_create(nodes);
	char *host;

	while (hl && (host = slurm_hostlist_shift(hl))) {
		for (uint32_t i = 0; i < nm->record_count; i++)
			if (nm->node_array[i].name &&
			    !strcmp(nm->node_array[i].name, host))
				leaf[i] = n;
		free(host);
	}
	if (hl)
		slurm_hostlist_destroy(hl);
}

/* The leaf switch of each node record of nm, from the cluster's switch
 * tree (topology/tree: the level-0 switches, numbered in order; on 23.11+
 * the select wrapper's Leaf[] pairs, agora_compat_pub.h
 * AGORA_TOPO_IN_SELECT_CONF); NULL when the cluster has no tree (every
 * node then counts as one leaf). */
int *leaf_map(const node_info_msg_t *nm)
{
	int *leaf = NULL, n_leaf = 0;

	if (!nm || !nm->record_count)
		return NULL;
#if AGORA_TOPO_IN_SELECT_CONF
	slurm_conf_t *cf = NULL;
	ListIterator it;
	agora_key_pair_t *kp;

	if (slurm_load_ctl_conf((time_t) 0, &cf) || !cf)
		return NULL;
	if (cf->select_conf_key_pairs &&
	    (it = slurm_list_iterator_create(cf->select_conf_key_pairs))) {
		while ((kp = slurm_list_next(it))) {
			if (!kp->name || strncmp(kp->name, "Leaf[", 5) ||
			    !kp->value || !*kp->value)
				continue;
			if (!leaf &&
			    !(leaf = calloc(nm->record_count, sizeof(int))))
				break;
			leaf_mark(nm, kp->value, n_leaf++, leaf);
		}
		slurm_list_iterator_destroy(it);
	}
	slurm_free_ctl_conf(cf);
#else
	topo_info_response_msg_t *tm = NULL;

	if (slurm_load_topo(&tm) || !tm)
		return NULL;
	if (tm->record_count)
		leaf = calloc(nm->record_count, sizeof(int));
	for (uint32_t k = 0; leaf && k < tm->record_count; k++) {
		const topo_info_t *t = &tm->topo_array[k];

		if (t->level != 0 || !t->nodes || !*t->nodes)
			continue;
		leaf_mark(nm, t->nodes, n_leaf++, leaf);
	}
	slurm_free_topo_info_msg(tm);
#endif
	return leaf;
}
