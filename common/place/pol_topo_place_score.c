/*
 * pol_topo_place_score.c - the score of the topology-aware placer
 * (pol_topo_place.h states it): of a set of parts while placing, and of a
 * given allocation (pol_topo_place_score()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pol_topo_place_int.h"

/* ---- scoring ------------------------------------------------------------ */

static int partial(int free, int cap)
{
	return free > 0 && free < cap;
}

/*
 * Score of a chosen set of candidates (each with take/sel/level/dfrag
 * set).  leaf sums are those of the pass.
 */
double pol_tp_score_parts(pol_topo_place_t *a, const cand_t *const *p, int np,
			  const int *leaf_free, const int *leaf_cap,
			  int n_leaves, double maxw)
{
	double f_num = 0, f_den = 0, wsum = 0, lev;
	int i, j, worst = 0, L, total = 0, min_nodes;
	int same_leaf = 1;

	for (i = 0; i < np; i++) {
		pol_place_type_t *t = &a->types[p[i]->type];
		/* level above the best this many GPUs can have on the type:
		 * a whole 2-island node is not "worse" than half of it */
		int excess = p[i]->level -
			     pol_place_type_best(t, t->all, p[i]->take).level;

		total += p[i]->take;
		f_num += p[i]->dfrag;
		f_den += p[i]->g;
		wsum += p[i]->w;
		if (np == 1)
			excess = p[i]->level;
		if (excess > worst)
			worst = excess;
		if (p[i]->leaf != p[0]->leaf)
			same_leaf = 0;
	}
	/* leaves touched: each counts as one group */
	for (i = 0; i < np; i++) {
		int l = p[i]->leaf, taken = 0, seen = 0;

		for (j = 0; j < i; j++)
			if (p[j]->leaf == l)
				seen = 1;
		if (seen || l < 0 || l >= n_leaves)
			continue;
		for (j = i; j < np; j++)
			if (p[j]->leaf == l)
				taken += p[j]->take;
		f_num += partial(leaf_free[l] - taken, leaf_cap[l]) -
			 partial(leaf_free[l], leaf_cap[l]);
		f_den += 1;
	}
	if (np == 1) {
		L = worst;
		lev = L;
	} else {
		/* spread in [0, 0.75): more nodes than needed, then the
		 * worst intra-node excess level; below one level step */
		L = same_leaf ? POL_LVL_LEAF : POL_LVL_CLUSTER;
		min_nodes = a->maxg > 0 ? (total + a->maxg - 1) / a->maxg : np;
		if (min_nodes > np)
			min_nodes = np;
		lev = L + 0.5 * (1.0 - (double) min_nodes / np) +
		      0.25 * worst / 3.0;
	}
	return a->w.level * lev + a->w.frag * (f_den > 0 ? f_num / f_den : 0) +
	       a->w.weight * (maxw > 0 && np ? wsum / np / maxw : 0);
}
double pol_topo_place_score(pol_topo_place_t *a, const pol_cluster_t *c,
			    const pol_gpumask_t *free_masks,
			    const pol_alloc_t *alloc)
{
	fsrc_t src = { c, free_masks, NULL };
	const cand_t **p = NULL;
	cand_t *parts = NULL;
	pol_place_req_t req;
	pass_t ps;
	double s = -1.0;
	int i, nl;

	if (!a || !c || !alloc || alloc->n_parts < 1 ||
	    !pol_tp_types_match(a, c) || pol_tp_scratch(a, c) < 0) {
		errno = EINVAL;
		return -1.0;
	}
	memset(&req, 0, sizeof(req));
	req.pool = c->nodes[alloc->parts[0].node].pool;
	/* leaf sums and the weight scale (no candidates needed: kmin huge) */
	pol_tp_node_pass(a, &src, &req, POL_MAX_GPUS_PER_NODE + 1, 1, &ps);
	a->maxg = 0;
	for (i = 0; i < c->n_nodes; i++) {
		const pol_node_t *nd = &c->nodes[i];

		if (!nd->up || nd->pool != req.pool || nd->type < 0 ||
		    nd->type >= a->n_types)
			continue;
		if (nd->weight > ps.maxw)
			ps.maxw = nd->weight;
		if (a->types[nd->type].n > a->maxg)
			a->maxg = a->types[nd->type].n;
	}
	nl = ps.n_leaves;
	parts = calloc((size_t) alloc->n_parts, sizeof(*parts));
	p = calloc((size_t) alloc->n_parts, sizeof(*p));
	if (!parts || !p) {
		errno = ENOMEM;
		goto out;
	}
	for (i = 0; i < alloc->n_parts; i++) {
		int nd = alloc->parts[i].node;
		pol_place_type_t *t;
		pol_gpumask_t f, g = alloc->parts[i].gpus;

		if (nd < 0 || nd >= c->n_nodes || c->nodes[nd].type < 0 ||
		    c->nodes[nd].type >= a->n_types) {
			errno = EINVAL;
			goto out;
		}
		t = &a->types[c->nodes[nd].type];
		f = fget(&src, nd) & t->all;
		if (!g || (g & ~f)) {
			errno = EINVAL;
			goto out;
		}
		parts[i].node = nd;
		parts[i].type = c->nodes[nd].type;
		parts[i].leaf = c->nodes[nd].leaf >= 0 && c->nodes[nd].leaf < nl
					? c->nodes[nd].leaf
					: 0;
		parts[i].take = pol_popcount(g);
		parts[i].g = t->n_groups;
		parts[i].sel = g;
		parts[i].level = pol_place_type_level(t, g);
		parts[i].dfrag = pol_place_type_frag(t, f & ~g) -
				 pol_place_type_frag(t, f);
		parts[i].w = c->nodes[nd].weight > 0 ? c->nodes[nd].weight : 0;
		p[i] = &parts[i];
	}
	s = pol_tp_score_parts(a, p, alloc->n_parts, a->leaf_free, a->leaf_cap,
			       nl, ps.maxw);
out:
	free(parts);
	free(p);
	return s;
}
