/*
 * pol_place_basic.c - the baseline ("stock") placement strategy; the rule
 * is stated in pol_place.h.  Deterministic: every tie goes to the lowest
 * node / leaf / GPU index.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pol_place.h"

const pol_placer_t pol_placer_stock = { .name = "stock",
					.place = pol_place_basic };

/* k GPUs out of free on a node of type t: one NVLink island if one has
 * room (the island with the fewest free GPUs that fits), else the lowest
 * numbered free GPUs. */
static pol_gpumask_t pick_gpus(const pol_node_type_t *t, pol_gpumask_t free,
			       int k)
{
	pol_gpumask_t isl[POL_MAX_GPUS_PER_NODE] = { 0 }, src = free, out = 0;
	int g, n_isl = 0, best = -1, best_n = 0;

	for (g = 0; g < t->n_gpus; g++) {
		int id = t->gpu_island[g];

		if (id < 0 || id >= POL_MAX_GPUS_PER_NODE)
			continue;
		isl[id] |= (pol_gpumask_t) 1 << g;
		if (id + 1 > n_isl)
			n_isl = id + 1;
	}
	if (n_isl > 1) {
		for (g = 0; g < n_isl; g++) {
			int nf = pol_popcount(free & isl[g]);

			if (nf >= k && (best < 0 || nf < best_n)) {
				best = g;
				best_n = nf;
			}
		}
		if (best >= 0)
			src = free & isl[best];
	}
	while (k-- > 0 && src) {
		pol_gpumask_t low = src & -src;

		out |= low;
		src &= ~low;
	}
	return out;
}

static int one_node(const pol_freemap_t *fm, const pol_job_t *job, int k,
		    pol_alloc_t *out)
{
	const pol_cluster_t *c = pol_freemap_cluster(fm);
	int nd = pol_freemap_best_node(fm, job->pool, k, -1);

	if (nd < 0) {
		errno = ENOSPC;
		return -1;
	}
	out->parts = malloc(sizeof(*out->parts));
	if (!out->parts) {
		errno = ENOMEM;
		return -1;
	}
	out->n_parts = 1;
	out->parts[0].node = nd;
	out->parts[0].gpus = pick_gpus(&c->types[c->nodes[nd].type],
				       pol_freemap_node(fm, nd), k);
	return 0;
}

/*
 * Whole free nodes for k GPUs (or exactly want_nodes nodes of gpn GPUs
 * when want_nodes > 0).  Leaf first, as documented in pol_place.h.
 */
static int whole_nodes(const pol_freemap_t *fm, const pol_job_t *job, int k,
		       int want_nodes, int gpn, pol_alloc_t *out)
{
	const pol_cluster_t *c = pol_freemap_cluster(fm);
	pol_pool_t pool = job->pool;
	int nl = c->n_leaves, best = -1, best_g = 0, l, got = 0, np = 0;
	int *order = NULL, n_order = 0;
	pol_alloc_part_t *parts;

	if (pol_freemap_full_gpus(fm, pool) < k) {
		errno = ENOSPC;
		return -1;
	}
	parts = malloc((size_t) (want_nodes > 0 ? want_nodes : k) *
		       sizeof(*parts));
	order = malloc((size_t) nl * sizeof(*order));
	if (!parts || !order) {
		free(parts);
		free(order);
		errno = ENOMEM;
		return -1;
	}
	for (l = 0; l < nl; l++) {
		int g = pol_freemap_full_gpus_leaf(fm, pool, l);

		if (g >= k && (best < 0 || g < best_g)) {
			best = l;
			best_g = g;
		}
	}
	if (best >= 0) {
		order[n_order++] = best;
	} else {
		/* leaves by whole free GPUs, most first; ties lowest index */
		for (l = 0; l < nl; l++) {
			int g = pol_freemap_full_gpus_leaf(fm, pool, l), j;

			if (!g)
				continue;
			for (j = n_order;
			     j > 0 && pol_freemap_full_gpus_leaf(
					      fm, pool, order[j - 1]) < g;
			     j--)
				order[j] = order[j - 1];
			order[j] = l;
			n_order++;
		}
	}
	for (l = 0; l < n_order && got < k; l++) {
		int nd = -1;

		while (got < k &&
		       (nd = pol_freemap_next_full(fm, pool, nd)) >= 0) {
			const pol_node_type_t *t;
			int take;

			if (c->nodes[nd].leaf != order[l])
				continue;
			t = &c->types[c->nodes[nd].type];
			take = want_nodes > 0 ? gpn : t->n_gpus;
			if (take > k - got)
				take = k - got;
			if (take > t->n_gpus) {
				continue; /* smaller node type: skip */
			}
			parts[np].node = nd;
			parts[np].gpus = pick_gpus(t, pol_freemap_node(fm, nd),
						   take);
			np++;
			got += take;
		}
	}
	free(order);
	if (got < k || (want_nodes > 0 && np != want_nodes)) {
		free(parts);
		errno = ENOSPC;
		return -1;
	}
	out->parts = parts;
	out->n_parts = np;
	return 0;
}

/* Explicit gang of n nodes x gpn GPUs, gpn below a whole node: the first
 * n nodes (index order) with at least gpn free GPUs. */
static int gang_nodes(const pol_freemap_t *fm, const pol_job_t *job, int n,
		      int gpn, pol_alloc_t *out)
{
	const pol_cluster_t *c = pol_freemap_cluster(fm);
	pol_alloc_part_t *parts;
	int i, nd = -1;

	if (pol_freemap_count_at_least(fm, job->pool, gpn) < n) {
		errno = ENOSPC;
		return -1;
	}
	parts = malloc((size_t) n * sizeof(*parts));
	if (!parts) {
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < n; i++) {
		nd = pol_freemap_next_at_least(fm, job->pool, gpn, nd);
		if (nd < 0) {
			free(parts);
			errno = ENOSPC;
			return -1;
		}
		parts[i].node = nd;
		parts[i].gpus = pick_gpus(&c->types[c->nodes[nd].type],
					  pol_freemap_node(fm, nd), gpn);
	}
	out->parts = parts;
	out->n_parts = n;
	return 0;
}

int pol_place_basic(void *arg, const pol_freemap_t *fm, const pol_job_t *job,
		    pol_alloc_t *out)
{
	int k, maxg;

	(void) arg;
	if (!fm || !job || !out) {
		errno = EINVAL;
		return -1;
	}
	out->parts = NULL;
	out->n_parts = 0;
	maxg = pol_freemap_max_node_gpus(fm, job->pool);
	if (job->nodes > 0) {
		int gpn = job->gpus_per_node;

		if (gpn < 1) {
			errno = EINVAL;
			return -1;
		}
		if (gpn > maxg ||
		    pol_freemap_free_gpus(fm, job->pool) < job->nodes * gpn) {
			errno = ENOSPC;
			return -1;
		}
		if (job->nodes == 1)
			return one_node(fm, job, gpn, out);
		if (gpn == maxg)
			return whole_nodes(fm, job, job->nodes * gpn,
					   job->nodes, gpn, out);
		return gang_nodes(fm, job, job->nodes, gpn, out);
	}
	k = job->total_gpus;
	if (k < 1) {
		errno = EINVAL;
		return -1;
	}
	if (pol_freemap_free_gpus(fm, job->pool) < k) {
		errno = ENOSPC;
		return -1;
	}
	if (k <= maxg)
		return one_node(fm, job, k, out);
	return whole_nodes(fm, job, k, 0, 0, out);
}
