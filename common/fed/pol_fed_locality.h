/*
 * pol_fed_locality.h - the GPU locality of a cluster's plan for a job, as
 * the select wrapper's placer would reach it on the nodes the cluster's
 * will-run planned.
 *
 * agorad asks each cluster for a will-run plan (a start time and a node
 * list).  The plan's locality term in pol_fed_cost is the locality level
 * (pol_level_t: 0 NVLink .. 5 across leaf switches) of the GPUs the
 * select wrapper's topology placer (pol_topo_place, the same code and the
 * same TopologyModel) would pick on those nodes for the job.  Pure: the
 * caller passes the nodes, their GPU counts and the GPUs in use.
 */
#ifndef POL_FED_LOCALITY_H
#define POL_FED_LOCALITY_H

#include "pol_fed.h"
#include "pol_model.h"
#include "topo_model.h"

/* One planned node: its name (to find its type in the model), its GPUs,
 * the GPUs allocated on it now, and its leaf switch (a number >= 0 from
 * the cluster's switch tree: nodes of equal number share a leaf; all 0
 * when the cluster has no tree). */
typedef struct pol_fed_plan_node {
	char name[POL_NAME_LEN];
	int gpus;
	pol_gpumask_t used;
	int leaf;
} pol_fed_plan_node_t;

/*
 * The locality level the placer reaches for a job of total_gpus GPUs
 * (gang_nodes > 0: exactly that many nodes with total_gpus / gang_nodes
 * GPUs each) on the planned nodes[n].  The GPUs free now are tried first;
 * if the job does not fit on them (the plan starts later, when running
 * jobs end), the planned nodes count as wholly free.  model may be NULL
 * (every node is a uniform type of its GPU count: one NVLink island).
 * A multi-node plan is level 4 on one leaf switch and 5 across leaves
 * (the nodes' leaf indices).  Returns the level, or
 * -1.0 (errno EINVAL: bad arguments, ENOSPC: the job does not fit even
 * on free nodes, ENOMEM) meaning unknown.
 */
double pol_fed_plan_locality(const topo_model_t *model,
			     const pol_fed_plan_node_t *nodes, int n,
			     int total_gpus, int gang_nodes);

#endif
