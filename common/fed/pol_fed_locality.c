/*
 * pol_fed_locality.c - a will-run plan's GPU locality, by the select
 * wrapper's own placer on the planned nodes (see pol_fed_locality.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pol_fed_locality.h"
#include "pol_topo_place.h"

/* The planned nodes as a placement cluster: the model's types first,
 * then uniform types by GPU count (the select wrapper's rule). */
static pol_cluster_t *plan_cluster(const topo_model_t *model,
				   const pol_fed_plan_node_t *nodes, int n)
{
	static const topo_model_t none = { NULL, 0 };
	const topo_model_t *m = model ? model : &none;
	pol_cluster_t *c = calloc(1, sizeof(*c));
	size_t cap = (size_t) m->n_types + 4;

	if (!c)
		return NULL;
	c->types = calloc(cap, sizeof(*c->types));
	c->nodes = calloc((size_t) n, sizeof(*c->nodes));
	if (!c->types || !c->nodes)
		goto nomem;
	for (int i = 0; i < m->n_types; i++)
		c->types[i] = m->types[i].type;
	c->n_types = m->n_types;
	c->n_nodes = n;
	c->n_leaves = 0;
	for (int i = 0; i < n; i++) {
		pol_node_t *nd = &c->nodes[i];
		int t = topo_model_node_type(m, &c->types, &c->n_types, &cap,
					     nodes[i].name, nodes[i].gpus,
					     NULL);

		if (t < 0)
			goto nomem;
		memcpy(nd->name, nodes[i].name, sizeof(nd->name));
		nd->name[sizeof(nd->name) - 1] = '\0';
		nd->type = t;
		/* the plan's leaves, numbered 0.. in order of first use */
		nd->leaf = c->n_leaves;
		for (int k = 0; k < i; k++)
			if (nodes[k].leaf == nodes[i].leaf) {
				nd->leaf = c->nodes[k].leaf;
				break;
			}
		if (nd->leaf == c->n_leaves)
			c->n_leaves++;
		nd->up = true;
		nd->pool = POL_POOL_TRAINING;
		nd->free = pol_node_all_gpus(c, i) & ~nodes[i].used;
	}
	return c;
nomem:
	pol_cluster_destroy(&c);
	errno = ENOMEM;
	return NULL;
}

double pol_fed_plan_locality(const topo_model_t *model,
			     const pol_fed_plan_node_t *nodes, int n,
			     int total_gpus, int gang_nodes)
{
	pol_place_req_t req = { 0 };
	pol_alloc_t alloc = { NULL, 0 };
	pol_topo_place_t *placer;
	pol_cluster_t *c;
	pol_gpumask_t *whole;
	double level = -1.0;
	int rc;

	if (!nodes || n <= 0 || total_gpus <= 0 || gang_nodes < 0 ||
	    (gang_nodes > 0 && total_gpus % gang_nodes)) {
		errno = EINVAL;
		return -1.0;
	}
	for (int i = 0; i < n; i++)
		if (nodes[i].leaf < 0) {
			errno = EINVAL;
			return -1.0;
		}
	c = plan_cluster(model, nodes, n);
	if (!c)
		return -1.0;
	placer = pol_topo_place_create(c, NULL);
	whole = calloc((size_t) n, sizeof(*whole));
	if (!placer || !whole) {
		errno = ENOMEM;
		goto out;
	}
	req.nodes = gang_nodes;
	req.gpus_per_node = gang_nodes ? total_gpus / gang_nodes : 0;
	req.total_gpus = total_gpus;
	req.pool = POL_POOL_TRAINING;
	rc = pol_topo_place_req(placer, c, NULL, &req, &alloc, NULL);
	if (rc < 0 && errno == ENOSPC) {
		for (int i = 0; i < n; i++)
			whole[i] = pol_node_all_gpus(c, i);
		rc = pol_topo_place_req(placer, c, whole, &req, &alloc, NULL);
	}
	if (rc == 0)
		level = (double) pol_alloc_level(c, &alloc);
	pol_alloc_free(&alloc);
out:
	free(whole);
	pol_topo_place_destroy(&placer);
	pol_cluster_destroy(&c);
	return level;
}
