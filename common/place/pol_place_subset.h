/*
 * pol_place_subset.h - per node type GPU subset choice for the agora
 * placement (pol_topo_place.c); internal to the core.
 *
 * For one node type: near[i][L] (GPUs within level L of GPU i), the list
 * of locality groups (NVLink islands, PCIe switches, sockets, the node;
 * duplicates removed, singletons dropped), and the best k-subset of any
 * free mask: lowest worst level, then least fragmentation change (partly
 * free groups after - before), then the smallest mask.  Memoised lazily
 * per (free mask, k) for types of up to POL_TOPO_MEMO_GPUS GPUs, greedy
 * beyond.
 *
 * Ownership: a pol_place_type_t is embedded by its user;
 * pol_place_type_init() allocates, pol_place_type_fini() frees.
 */
#ifndef POL_PLACE_SUBSET_H
#define POL_PLACE_SUBSET_H

#include <stdint.h>

#include "pol_model.h"

#define POL_TOPO_MEMO_GPUS 12

#define POL_PLACE_NODE_LEVELS 4 /* NVLINK..NODE: levels inside one node */

typedef struct pol_subset {
	pol_gpumask_t sel;
	int8_t level; /* -1: no subset of that size */
	int16_t dfrag;
} pol_subset_t;

typedef struct pol_place_type {
	pol_node_type_t t; /* copy: the placer is bound to these types */
	int n;
	pol_gpumask_t all;
	pol_gpumask_t near[POL_MAX_GPUS_PER_NODE][POL_PLACE_NODE_LEVELS];
	pol_gpumask_t *groups;
	int n_groups;
	pol_subset_t *memo; /* (1 << n) * (n + 1) entries, or NULL */
	uint8_t *done;      /* per free mask: memo row filled */
} pol_place_type_t;

/* 0, or -1 (ENOMEM: call pol_place_type_fini() anyway). */
int pol_place_type_init(pol_place_type_t *a, const pol_node_type_t *t);
void pol_place_type_fini(pol_place_type_t *a);

/* Partly free groups of free mask r. */
int pol_place_type_frag(const pol_place_type_t *t, pol_gpumask_t r);

/* Worst level among the GPUs of s (0 for at most one GPU). */
int pol_place_type_level(const pol_place_type_t *t, pol_gpumask_t s);

/*
 * Best k-subset of free mask f (f must hold >= k GPUs of the type): sel,
 * its level, its fragmentation change.  Fills the memo row of f on first
 * use (not thread-safe).
 */
pol_subset_t pol_place_type_best(pol_place_type_t *t, pol_gpumask_t f, int k);

#endif
