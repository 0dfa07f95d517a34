/*
 * topo_conf.h - Slurm configuration text from the locality model:
 * gres.conf (Cores=, tiered Links=) and topology.conf (leaf switches),
 * plus the one gres.conf fact we check against a model (GPU count).
 *
 * Links tiers (doc/topology.md has the arithmetic): cons_tres adds up
 * Links values to already-picked GPUs and, when the largest sum exceeds 4,
 * divides all sums by ceil(max / 4) (gres_select_filter.c:1734-1746), so
 * at most 5 levels (0..4) survive.  With tiers 16/8/4/2 a single first
 * pick quantises to 4/2/1/0: NVLink > PCIe switch > socket > cross-socket
 * all stay distinct (a PCIe-only node, max 8, gives 4/2/1).
 */
#ifndef TOPO_CONF_H
#define TOPO_CONF_H

#include <stddef.h>

#include "agora_err.h"
#include "topo_model.h"

#define TOPO_LINK_NVLINK 16
#define TOPO_LINK_PCIE   8
#define TOPO_LINK_SOCKET 4
#define TOPO_LINK_NODE   2

/* The Links= value for a level (-1 is written for self, not by this). */
int topo_link_value(pol_level_t level);

/*
 * gres.conf lines for node type n: one line per GPU,
 *   NodeName=<nodename> Name=gpu [Type=<type>] File=<file_prefix><i>
 *   [Cores=<cores>] Links=<l0>,<l1>,...
 * nodename: hostlist (NULL: n->nodes, else the type name); file_prefix:
 * NULL = "/dev/nvidia" (test harnesses point it at fake devices); type
 * may be NULL.  Returns a malloc'd string (caller frees) or NULL/errno
 * with err.
 */
char *topo_gres_conf(const topo_node_t *n, const char *nodename,
		     const char *file_prefix, const char *type,
		     agora_err_t *err);

/*
 * Count the GPUs gres.conf text (file 'name') gives host: the sum over
 * lines with Name=gpu whose NodeName= (absent = every node) contains
 * host, of Count= or else the number of File= devices ("nvidia[0-7]"
 * counts 8), else 1.  AutoDetect lines without File/Count are skipped.
 * Returns the count, or -1/EINVAL with err "name:LINE: why".
 */
int topo_gres_count_gpus(const char *text, const char *name, const char *host,
			 agora_err_t *err);

/*
 * Check every node of every node type of model against gres.conf text:
 * a node whose gres.conf GPU count differs from its type's is an error
 * "gres_name: NodeName X: 4 GPUs, but model_name: node_types[0] 'dgx'
 * has 8".  Types without "nodes" are checked against host_default if
 * given.  0 or -1/EINVAL.
 */
int topo_gres_check(const topo_model_t *model, const char *model_name,
		    const char *gres_text, const char *gres_name,
		    const char *host_default, agora_err_t *err);

/*
 * topology.conf for a flat two-level tree: nodes (hostlist) split in
 * order into leaves of nodes_per_leaf (<= 0: one leaf), named
 * <leaf_prefix><1..>, under one top switch <top_name> (omitted when
 * there is one leaf).  Returns malloc'd text or NULL/errno with err.
 */
char *topo_topology_conf(const char *nodes, int nodes_per_leaf,
			 const char *leaf_prefix, const char *top_name,
			 agora_err_t *err);

#endif
