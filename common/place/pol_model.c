/*
 * pol_model.c - helpers of the core data model (see pol_model.h).
 *
 * Nothing here allocates behind the caller's back except where the header
 * says "caller owns".  Failing functions leave their outputs untouched.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agora_mem.h"
#include "pol_model.h"

int pol_actions_add(pol_actions_t *acts, pol_action_type_t type, int64_t job_id,
		    const pol_alloc_t *alloc, double score, const char *reason)
{
	pol_action_t *a;

	if (!acts) {
		errno = EINVAL;
		return -1;
	}
	if (agora_grow((void **) &acts->v, &acts->cap, (size_t) acts->n + 1,
		       sizeof(*acts->v)))
		return -1;
	a = &acts->v[acts->n];
	memset(a, 0, sizeof(*a));
	if (alloc && alloc->n_parts > 0 && pol_alloc_copy(&a->alloc, alloc))
		return -1;
	a->type = type;
	a->job_id = job_id;
	a->score = score;
	if (reason)
		snprintf(a->reason, sizeof(a->reason), "%s", reason);
	acts->n++;
	return 0;
}

void pol_actions_clear(pol_actions_t *acts)
{
	int i;

	if (!acts)
		return;
	for (i = 0; i < acts->n; i++)
		pol_alloc_free(&acts->v[i].alloc);
	acts->n = 0;
	acts->wakeup = 0;
}

void pol_actions_free(pol_actions_t *acts)
{
	if (!acts)
		return;
	pol_actions_clear(acts);
	free(acts->v);
	memset(acts, 0, sizeof(*acts));
}

int pol_alloc_gpus(const pol_alloc_t *alloc)
{
	int i, n = 0;

	if (!alloc)
		return 0;
	for (i = 0; i < alloc->n_parts; i++)
		n += pol_popcount(alloc->parts[i].gpus);
	return n;
}

int pol_alloc_copy(pol_alloc_t *dst, const pol_alloc_t *src)
{
	pol_alloc_part_t *p = NULL;

	if (!dst || !src) {
		errno = EINVAL;
		return -1;
	}
	if (src->n_parts > 0) {
		p = malloc((size_t) src->n_parts * sizeof(*p));
		if (!p) {
			errno = ENOMEM;
			return -1;
		}
		memcpy(p, src->parts, (size_t) src->n_parts * sizeof(*p));
	}
	dst->parts = p;
	dst->n_parts = src->n_parts;
	return 0;
}

void pol_alloc_free(pol_alloc_t *alloc)
{
	if (!alloc)
		return;
	free(alloc->parts);
	alloc->parts = NULL;
	alloc->n_parts = 0;
}

pol_level_t pol_alloc_level(const pol_cluster_t *c, const pol_alloc_t *a)
{
	pol_level_t worst = POL_LVL_NVLINK;
	int i, leaf0;

	if (!c || !a || a->n_parts == 0)
		return POL_LVL_NVLINK;
	if (a->n_parts > 1) {
		leaf0 = c->nodes[a->parts[0].node].leaf;
		for (i = 1; i < a->n_parts; i++)
			if (c->nodes[a->parts[i].node].leaf != leaf0)
				return POL_LVL_CLUSTER;
		return POL_LVL_LEAF;
	}
	{
		const pol_node_t *n = &c->nodes[a->parts[0].node];
		const pol_node_type_t *t = &c->types[n->type];
		pol_gpumask_t m = a->parts[0].gpus;
		int g[POL_MAX_GPUS_PER_NODE], k = 0, x, y;

		while (m) {
			g[k++] = __builtin_ctzll(m);
			m &= m - 1;
		}
		for (x = 0; x < k; x++)
			for (y = x + 1; y < k; y++)
				if (t->level[g[x]][g[y]] > worst)
					worst = (pol_level_t)
							t->level[g[x]][g[y]];
	}
	return worst;
}

void pol_node_type_uniform(pol_node_type_t *t, const char *name, int n_gpus,
			   int n_sockets)
{
	int i, j;

	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "%s", name ? name : "node");
	if (n_gpus < 0)
		n_gpus = 0;
	if (n_gpus > POL_MAX_GPUS_PER_NODE)
		n_gpus = POL_MAX_GPUS_PER_NODE;
	if (n_sockets < 1)
		n_sockets = 1;
	t->n_gpus = n_gpus;
	t->n_sockets = n_sockets;
	for (i = 0; i < n_gpus; i++) {
		/* GPUs spread evenly over sockets, in index order */
		t->gpu_socket[i] = (int8_t) (n_gpus ? i * n_sockets / n_gpus
						    : 0);
		t->gpu_island[i] = 0;
		for (j = 0; j < n_gpus; j++)
			t->level[i][j] = POL_LVL_NVLINK;
	}
}

pol_gpumask_t pol_node_all_gpus(const pol_cluster_t *c, int node)
{
	int n = c->types[c->nodes[node].type].n_gpus;

	return n >= 64 ? ~(pol_gpumask_t) 0 : (((pol_gpumask_t) 1 << n) - 1);
}

pol_cluster_t *pol_cluster_uniform(int n_nodes, int gpus_per_node,
				   int nodes_per_leaf)
{
	pol_cluster_t *c;
	int i;

	if (n_nodes <= 0 || gpus_per_node <= 0 ||
	    gpus_per_node > POL_MAX_GPUS_PER_NODE || nodes_per_leaf < 0) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		goto nomem;
	c->types = calloc(1, sizeof(*c->types));
	c->nodes = calloc((size_t) n_nodes, sizeof(*c->nodes));
	if (!c->types || !c->nodes)
		goto nomem;
	snprintf(c->name, sizeof(c->name), "%dx%d", n_nodes, gpus_per_node);
	c->n_types = 1;
	pol_node_type_uniform(&c->types[0], "uniform", gpus_per_node, 2);
	c->n_nodes = n_nodes;
	for (i = 0; i < n_nodes; i++) {
		pol_node_t *n = &c->nodes[i];

		snprintf(n->name, sizeof(n->name), "n%05d", i);
		n->type = 0;
		n->leaf = nodes_per_leaf ? i / nodes_per_leaf : 0;
		n->pool = POL_POOL_TRAINING;
		n->up = true;
		n->free = pol_node_all_gpus(c, i);
	}
	c->n_leaves = c->nodes[n_nodes - 1].leaf + 1;
	return c;
nomem:
	pol_cluster_destroy(&c);
	errno = ENOMEM;
	return NULL;
}

pol_cluster_t *pol_cluster_clone(const pol_cluster_t *src)
{
	pol_cluster_t *c;

	if (!src) {
		errno = EINVAL;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		goto nomem;
	*c = *src;
	c->types = NULL;
	c->nodes = NULL;
	c->types = malloc((size_t) (src->n_types ? src->n_types : 1) *
			  sizeof(*c->types));
	c->nodes = malloc((size_t) (src->n_nodes ? src->n_nodes : 1) *
			  sizeof(*c->nodes));
	if (!c->types || !c->nodes)
		goto nomem;
	memcpy(c->types, src->types, (size_t) src->n_types * sizeof(*c->types));
	memcpy(c->nodes, src->nodes, (size_t) src->n_nodes * sizeof(*c->nodes));
	return c;
nomem:
	pol_cluster_destroy(&c);
	errno = ENOMEM;
	return NULL;
}

void pol_cluster_destroy(pol_cluster_t **cp)
{
	if (!cp || !*cp)
		return;
	free((*cp)->types);
	free((*cp)->nodes);
	free(*cp);
	*cp = NULL;
}

int pol_cluster_gpus(const pol_cluster_t *c)
{
	int i, n = 0;

	for (i = 0; c && i < c->n_nodes; i++)
		n += c->types[c->nodes[i].type].n_gpus;
	return n;
}

int pol_cluster_free_gpus(const pol_cluster_t *c)
{
	int i, n = 0;

	for (i = 0; c && i < c->n_nodes; i++)
		if (c->nodes[i].up)
			n += pol_popcount(c->nodes[i].free);
	return n;
}
