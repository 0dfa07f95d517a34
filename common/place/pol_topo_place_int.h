/*
 * pol_topo_place_int.h - the topology-aware placer's state, shared by
 * pol_topo_place.c (the placement: candidates per node, per-leaf choice,
 * gangs and splits) and pol_topo_place_score.c (the score of a set of
 * parts, and of a given allocation).  Not part of the API: include
 * pol_topo_place.h instead.
 */
#ifndef POL_TOPO_PLACE_INT_H
#define POL_TOPO_PLACE_INT_H

#include "pol_place_subset.h"
#include "pol_topo_place.h"

typedef struct cand {
	int node, type, leaf, nfree, take, g;
	pol_gpumask_t sel;
	int level, dfrag;
	double cost, w;
} cand_t;

struct pol_topo_place {
	pol_place_weights_t w;
	pol_place_type_t *types;
	int n_types;
	cand_t *cand, *tmp;
	int cand_cap;
	int *leaf_free, *leaf_cap, *leaf_cnt, *leaf_off, *leaf_sum, *order;
	int leaf_arr_cap;
	int maxg; /* largest eligible node of this decision's pool */
	double last_score;
};

/* where free masks come from */
typedef struct fsrc {
	const pol_cluster_t *c;
	const pol_gpumask_t *arr;
	const pol_freemap_t *fm;
} fsrc_t;

static inline pol_gpumask_t fget(const fsrc_t *s, int i)
{
	if (s->fm)
		return pol_freemap_node(s->fm, i);
	return s->arr ? s->arr[i] : s->c->nodes[i].free;
}

/* What one node pass found (pol_tp_node_pass()). */
typedef struct pass {
	int n_cand, n_leaves, maxg, max_leaf;
	double maxw;
} pass_t;

/* pol_topo_place.c, for the score: */
/* 1 if c has the node types the placer was made for, else 0. */
int pol_tp_types_match(const pol_topo_place_t *a, const pol_cluster_t *c);
/* Grow the per-decision arrays for c; 0 or -1. */
int pol_tp_scratch(pol_topo_place_t *a, const pol_cluster_t *c);
/* One pass over the nodes: leaf sums of the pool and the candidates with
 * at least kmin free GPUs; with k > 0 each gets its best k-subset, else
 * the whole mask. */
void pol_tp_node_pass(pol_topo_place_t *a, const fsrc_t *src,
		      const pol_place_req_t *req, int kmin, int k, pass_t *ps);

/* pol_topo_place_score.c: */
/* Score of the chosen parts p[0..np) (each with take/sel/level/dfrag
 * set); leaf sums are those of the pass. */
double pol_tp_score_parts(pol_topo_place_t *a, const cand_t *const *p, int np,
			  const int *leaf_free, const int *leaf_cap,
			  int n_leaves, double maxw);

#endif
