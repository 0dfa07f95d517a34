/*
 * pol_place.h - GPU placement: a working free-GPU map and the placement
 * strategy type that policies take as a parameter.
 *
 * A policy never edits the snapshot's cluster.  It builds a pol_freemap_t
 * (a private copy of the free masks, indexed for fast best-fit queries),
 * asks a placement strategy (pol_place_f) for an allocation, and takes the
 * allocation from the map before placing the next job.  The map keeps, per
 * pool and per free-GPU count, a two-level bit set of nodes, so "the node
 * with the fewest free GPUs that still fits k" is O(1) plus a short scan,
 * and a job that cannot fit is rejected in O(1) (100k pending jobs on
 * 10k nodes, doc/sim.md "bench").
 *
 * Ownership: a pol_freemap_t is owned by its creator and freed with
 * pol_freemap_destroy(); it BORROWS the cluster it was created from (types,
 * leaves, pools), which must outlive it.  Allocations written by a
 * pol_place_f are owned by the caller (pol_alloc_free()).
 */
#ifndef POL_PLACE_H
#define POL_PLACE_H

#include "agora_err.h"
#include "pol_model.h"

typedef struct pol_freemap pol_freemap_t;

/*
 * Create a map of the free GPUs of c (only nodes that are up).  Caller
 * owns; NULL/ENOMEM or EINVAL.
 */
pol_freemap_t *pol_freemap_create(const pol_cluster_t *c);
/* Reload the free masks from c, which must have the shape of the cluster
 * of create (nodes, leaves, largest node); -1/EINVAL otherwise, or if a
 * node names a bad leaf or type. */
int pol_freemap_reset(pol_freemap_t *fm, const pol_cluster_t *c);
/* Make dst an exact copy of src (same cluster).  0, -1/EINVAL. */
int pol_freemap_assign(pol_freemap_t *dst, const pol_freemap_t *src);
/* May one be assigned to the other (nodes, leaves, largest node)? */
bool pol_freemap_same_shape(const pol_freemap_t *a, const pol_freemap_t *b);
void pol_freemap_destroy(pol_freemap_t **fmp);

const pol_cluster_t *pol_freemap_cluster(const pol_freemap_t *fm);
pol_gpumask_t pol_freemap_node(const pol_freemap_t *fm, int node);
/* Free GPUs / schedulable GPUs (free or not) of up nodes in pool. */
int pol_freemap_free_gpus(const pol_freemap_t *fm, pol_pool_t pool);
int pol_freemap_capacity(const pol_freemap_t *fm, pol_pool_t pool);
/* Largest GPU count of an up node in pool. */
int pol_freemap_max_node_gpus(const pol_freemap_t *fm, pol_pool_t pool);

/*
 * Mark an allocation's GPUs busy.  All must be free (else -1/EBUSY and
 * nothing changes).  pol_freemap_give() is the reverse (all must be busy,
 * else -1/EINVAL).  take_mask() takes only the GPUs of mask that are free
 * (no error if some are not).
 */
int pol_freemap_take(pol_freemap_t *fm, const pol_alloc_t *a);
int pol_freemap_give(pol_freemap_t *fm, const pol_alloc_t *a);
void pol_freemap_take_mask(pol_freemap_t *fm, int node, pol_gpumask_t mask);
/* True if every GPU of a is free in fm. */
bool pol_freemap_fits(const pol_freemap_t *fm, const pol_alloc_t *a);

/*
 * Queries for placement strategies.
 * best_node: the up node of pool with the fewest free GPUs >= k (ties:
 *   lowest index), restricted to leaf unless leaf < 0; -1 if none.
 * count_at_least: number of nodes of pool with >= k free GPUs.
 * full_*: nodes whose GPUs are all free ("whole nodes").
 * next_full: the next whole free node of pool with index > after (use
 *   after = -1 to start), -1 at the end.
 */
int pol_freemap_best_node(const pol_freemap_t *fm, pol_pool_t pool, int k,
			  int leaf);
int pol_freemap_count_at_least(const pol_freemap_t *fm, pol_pool_t pool, int k);
int pol_freemap_next_at_least(const pol_freemap_t *fm, pol_pool_t pool, int k,
			      int after);
int pol_freemap_full_gpus(const pol_freemap_t *fm, pol_pool_t pool);
int pol_freemap_full_gpus_leaf(const pol_freemap_t *fm, pol_pool_t pool,
			       int leaf);
int pol_freemap_next_full(const pol_freemap_t *fm, pol_pool_t pool, int after);

/*
 * A placement strategy.  Find GPUs for job (its pool, and its gang shape:
 * nodes x gpus_per_node when nodes > 0, else total_gpus anywhere) in fm,
 * WITHOUT modifying fm.  On success fill *out (caller owns: pol_alloc_free)
 * and return 0.  If the job does not fit now return -1 with errno ENOSPC
 * (cheap: strategies must reject in O(1) when the map's counters say no);
 * ENOMEM / EINVAL otherwise.  Deterministic.  arg is the strategy's own
 * context (e.g. a topology model), borrowed.
 */
typedef int (*pol_place_f)(void *arg, const pol_freemap_t *fm,
			   const pol_job_t *job, pol_alloc_t *out);

typedef struct pol_placer {
	const char *name; /* "stock", "agora", ... */
	pol_place_f place;
	void *arg;
	void (*release)(void *arg); /* frees arg; NULL: arg is not owned */
} pol_placer_t;

/*
 * The placer registered as name (agora.conf's Placement=, agora-sim's
 * --placement): "stock" (pol_place_basic, no context; c may be NULL) or
 * "agora" (the topology-aware placer of pol_topo_place.h, default
 * weights, built for c's node types; arg is its pol_topo_place_t *).
 * On success *out is filled, the caller owns it (pol_placer_release())
 * and 0 is returned; else -1 with err set and errno ENOENT (unknown name,
 * the message lists the known ones), EINVAL or ENOMEM.
 */
int pol_placer_find(const char *name, const pol_cluster_t *c, pol_placer_t *out,
		    agora_err_t *err);
/* Free what pol_placer_find() built and zero *pl; NULL or zeroed: no-op. */
void pol_placer_release(pol_placer_t *pl);

/*
 * The baseline strategy ("stock", pol_place_basic.c), a stand-in for what
 * Slurm's cons_tres does with GPUs:
 *  - a job that fits one node (total <= the pool's largest node, or
 *    nodes == 1) goes to the node with the FEWEST free GPUs that fits
 *    (best fit; ties: lowest node index), on its lowest-numbered free
 *    GPUs, preferring one NVLink island when one has room;
 *  - a larger job takes WHOLE free nodes, all under one leaf switch when
 *    a leaf has enough (the leaf with the fewest whole free GPUs that
 *    suffices), else from the leaves with the most whole free nodes
 *    first; a remainder (12 = 8 + 4) uses part of the last whole node;
 *  - an explicit gang nodes x gpn (gpn < node size) takes the first
 *    nodes, in index order, with at least gpn free GPUs (first fit).
 * arg is unused (NULL).
 */
int pol_place_basic(void *arg, const pol_freemap_t *fm, const pol_job_t *job,
		    pol_alloc_t *out);

/* The placer table entry for pol_place_basic. */
extern const pol_placer_t pol_placer_stock;

#endif
