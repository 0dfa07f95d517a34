/*
 * sim_cluster.h - cluster descriptions for the simulator: the NODESxGPUS
 * shorthand and a small line-based file (doc/sim.md "cluster file"):
 *
 *   # comment
 *   cluster NAME
 *   nodetype NAME gpus=8 [sockets=2] [islands=1] [hwloc=FILE.xml]
 *   nodes TYPE count=N [per_leaf=16] [pool=training|inference]
 *
 * Each "nodes" line starts a new leaf switch; its nodes fill leaves of
 * per_leaf nodes (default 16, 0 = one leaf for the whole line).  Inside a
 * node type, islands=K splits the GPUs into K NVLink islands of
 * consecutive GPUs: GPUs of one island are POL_LVL_NVLINK apart, of two
 * islands on one socket POL_LVL_SOCKET, on two sockets POL_LVL_NODE.
 * hwloc=FILE asks the loader hook for the node type (the topo_* module
 * builds it from hwloc XML); without a hook it is an error.
 *
 * Errors: NULL, errno EINVAL, err = "NAME:LINE: KEY: why".
 * Ownership: the returned cluster is the caller's (pol_cluster_destroy).
 */
#ifndef SIM_CLUSTER_H
#define SIM_CLUSTER_H

#include "agora_err.h"
#include "pol_model.h"

/*
 * Fill *t from an hwloc XML file at path (relative paths are the caller's
 * business).  0, or -1 with errno and err.  Set by whoever links the
 * topo_* module; NULL means "not available".
 */
typedef int (*sim_nodetype_load_f)(void *arg, const char *path,
				   pol_node_type_t *t, agora_err_t *err);

pol_cluster_t *sim_cluster_parse(const char *text, const char *name,
				 sim_nodetype_load_f load, void *load_arg,
				 agora_err_t *err);

/*
 * "NODESxGPUS" (e.g. 80x8: one leaf switch per 16 nodes).  Returns the
 * cluster, or NULL with errno EINVAL when spec is not of that form (then
 * err is untouched: the caller tries it as a file).
 */
pol_cluster_t *sim_cluster_shorthand(const char *spec);

#endif
