/*
 * pol_topo_place.h - topology-aware gang placement ("agora" strategy).
 *
 * For a request (nodes x GPUs per node, or a total GPU count) on a cluster
 * with free GPU masks, choose nodes and GPUs that, in this order (each
 * criterion has a configurable weight):
 *   1. keep the job at the lowest locality level possible
 *      (NVLink island < PCIe switch < socket < node < leaf < cluster);
 *   2. keep NVLink islands, PCIe switches, sockets, nodes and leaf
 *      switches whole for other jobs: best fit into groups that are
 *      already partly used, largest-fit-decreasing for multi-node totals
 *      (whole free nodes first, the remainder best fit);
 *   3. prefer low Slurm node Weight;
 * restricted to nodes that are up, in the job's pool and carry all
 * required features.  Deterministic: ties go to the lowest node (leaf,
 * GPU mask) index.
 *
 * THE SCORE (lower is better; what the auctions compare):
 *
 *   score = W_level * (L + spread) + W_frag * f + W_weight * w
 *
 *   L  job locality level, pol_level_t 0..5 (pol_alloc_level()).
 *   spread  multi-node jobs only (0 for one node), in [0, 0.75) so L
 *      dominates: 0.5 * (1 - min_nodes / nodes) for using more nodes than
 *      ceil(GPUs / largest node), plus 0.25 * e / 3 where e is the worst
 *      part's intra-node level above the best that many GPUs can have on
 *      its node type (a whole two-island node is e = 0).
 *   f  fragmentation change in [-1, 1]: over the locality groups the job
 *      touches (NVLink islands, PCIe switches, sockets, nodes, leaves),
 *      (groups partly free after - groups partly free before) / groups.
 *      Negative: the job fills holes; positive: it breaks whole groups.
 *   w  mean node Weight of the parts / largest Weight among eligible
 *      nodes, in [0, 1] (0 when all weights are 0).
 *
 * Defaults W_level = 1000, W_frag = 10, W_weight = 1: the level decides
 * first, then fragmentation, then weight (near-lexicographic; for gangs of
 * many nodes a tiny fragmentation difference can lose to weight).
 *
 * Speed: the best k-subset of a node's free mask (level first, then
 * fragmentation, then the smallest mask) is memoised per (node type, free
 * mask, k) for node types of up to POL_TOPO_MEMO_GPUS GPUs (256 masks for
 * 8 GPUs, filled lazily), so a decision is one O(nodes) pass plus a sort
 * of the candidates of the feasible leaves.  contrib/topo/place-bench
 * measures it (doc/topology.md).
 *
 * Ownership: a pol_topo_place_t is owned by its creator (pol_topo_place_destroy()).
 * It is bound to the node types of the cluster it was created for (it
 * copies them); recreate it when the types change.  Not thread-safe: it
 * keeps memo tables and scratch space.  Allocations are owned by the
 * caller (pol_alloc_free()).
 */
#ifndef POL_TOPO_PLACE_H
#define POL_TOPO_PLACE_H

#include <stdint.h>

#include "pol_model.h"
#include "pol_place.h"
#include "pol_place_subset.h" /* POL_TOPO_MEMO_GPUS */

typedef struct pol_topo_place pol_topo_place_t;

typedef struct pol_place_weights {
	double level;  /* W_level, default 1000 */
	double frag;   /* W_frag, default 10 */
	double weight; /* W_weight, default 1 */
	/*
	 * A total-GPU job (nodes == 0) no larger than the largest node goes
	 * on one node.  split_small = true lets it be split over nodes when
	 * no node has room (level LEAF/CLUSTER, scored as such); default
	 * false, like the stock strategy: training jobs rarely want that.
	 */
	bool split_small;
} pol_place_weights_t;

/* A placement request (the adapter fills it from a job). */
typedef struct pol_place_req {
	int nodes;         /* gang nodes; 0 = any split of total_gpus */
	int gpus_per_node; /* with nodes > 0 */
	int total_gpus;    /* with nodes == 0 */
	pol_pool_t pool;
	uint64_t features; /* required feature bits (node has all); 0 = any */
} pol_place_req_t;

/* Fill w with the defaults above. */
void pol_place_weights_default(pol_place_weights_t *w);

/*
 * Create a placer for cluster c's node types.  w NULL = defaults; weights
 * must be >= 0 and finite.  Caller owns; NULL/EINVAL or ENOMEM.
 */
pol_topo_place_t *pol_topo_place_create(const pol_cluster_t *c,
					const pol_place_weights_t *w);
void pol_topo_place_destroy(pol_topo_place_t **ap);

/*
 * Place req on c.  free_masks: per-node free masks (NULL: c->nodes[i].free).
 * On success *out is filled (caller owns), *score (may be NULL) set, and
 * 0 returned; -1 with errno ENOSPC if it does not fit now, EINVAL on a
 * bad request or a cluster whose types differ from the placer's, ENOMEM.
 * Nothing is modified.
 */
int pol_topo_place_req(pol_topo_place_t *a, const pol_cluster_t *c,
		       const pol_gpumask_t *free_masks,
		       const pol_place_req_t *req, pol_alloc_t *out,
		       double *score);

/*
 * Score an allocation as if it were placed on free masks free (NULL:
 * c->nodes[i].free), with the formula above.  Every GPU of alloc must be
 * free; else -1.0 with errno EINVAL.
 */
double pol_topo_place_score(pol_topo_place_t *a, const pol_cluster_t *c,
			    const pol_gpumask_t *free_masks,
			    const pol_alloc_t *alloc);

/*
 * The pol_place_f adapter (pol_place.h): arg is a pol_topo_place_t *.  Uses
 * job->pool and the gang shape; no required features (pol_job_t has no
 * feature field yet).  Rejects in O(1) with the freemap's counters.
 * The score of the last successful call: pol_topo_place_last_score().
 */
int pol_topo_place_job(void *arg, const pol_freemap_t *fm, const pol_job_t *job,
		       pol_alloc_t *out);
double pol_topo_place_last_score(const pol_topo_place_t *a);

#endif
