/*
 * agora_leaves.h - leaf switches of nodes from topology/tree, shared by
 * site_factor/agora (the auction's cluster) and the select/cons_tres wrapper.
 * Uses only libslurmfull's switch table, so it is safe in every process
 * that loads the select wrapper.
 */
#ifndef AGORA_LEAVES_H
#define AGORA_LEAVES_H

#include "pol_model.h"

/*
 * Set c->nodes[i].leaf and c->n_leaves: a node's leaf is the first level-0
 * switch of topology/tree whose node bitmap holds it; nodes under no leaf
 * (or all nodes, without topology/tree) share one extra leaf.
 * slurm_index[i] is the Slurm node index of c->nodes[i] (NULL: i).
 */
extern void agora_set_leaves(pol_cluster_t *c, const int *slurm_index);

#endif
