/*
 * agora_select_place.h - apply Agora's GPU placement (pol_topo_place_req) in
 * the node-choice hook: map a choose_nodes() call into a pol_cluster_t with
 * per-node free GPU masks, ask the core placer, and narrow node_map to the
 * nodes it chose (doc/select.md section 4, doc/topology.md section 7).
 *
 * Configuration (slurmctld only): agora.conf beside slurm.conf,
 *   Placement=agora|stock      default agora
 *   TopologyModel=PATH         agora-topo model (JSON), optional
 * A node whose name matches a node type's "nodes" hostlist in the model
 * (topo_model_find()) gets that type; any other node gets a uniform type
 * (one NVLink island) from its GPU count.  Leaf switches come from Slurm's
 * switch_record_table (topology/tree), one leaf when there is none.
 *
 * Locking: every function here takes place_lock; choose_nodes runs under
 * slurmctld's job and node write locks, so the lock is never contended in
 * practice.  Include after the Slurm headers.
 */
#ifndef AGORA_SELECT_PLACE_H
#define AGORA_SELECT_PLACE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * (Re)read agora.conf and the model.  A bad agora.conf or a bad model logs
 * one error() and keeps the previous configuration (at first load: stock
 * placement, i.e. pass-through).  A missing agora.conf means the defaults
 * (Placement=agora, no model).  Never fatal.
 * when IN - "init" or "reconfigure", for the log line
 */
extern void agora_place_load_conf(const char *when);

/*
 * select_p_reconfigure(): re-read agora.conf and the model only if either
 * file changed (path, device, inode, size, mtime or ctime) since the last
 * read, successful or not.  slurmctld calls select_p_reconfigure() under
 * its write locks for every partition update, "scontrol setdebugflags" and
 * dynamic node change as well as for "scontrol reconfigure", so the usual
 * cost is two stat() calls.  With the files unchanged, the placement
 * cluster is dropped (rebuilt at the next placement) only if the node
 * table's names, GPU counts or leaf switches changed.
 * RET true if the files were read again
 */
extern bool agora_place_reconfigure(void);

/* Free the model, the cluster and the placer. */
extern void agora_place_fini(void);

/* Outcome of one agora_place_narrow() call. */
typedef enum agora_place_rc {
	AGORA_PLACE_SKIP = 0, /* not applied: see why[], node_map unchanged */
	AGORA_PLACE_NARROWED, /* node_map narrowed to the chosen nodes */
} agora_place_rc_t;

typedef struct agora_place_out {
	double score;     /* pol_agora score of the decision */
	int level;        /* locality level of the decision (0..5) */
	uint32_t cleared; /* nodes cleared from node_map */
	char why[96];     /* SKIP reason, or the request "2x4" */
	char *chosen;     /* xmalloc'd "n1[0x3],n2[0xff]"; xfree it */
} agora_place_out_t;

/*
 * Decide and narrow.  Never sets a bit in node_map and never clears a node
 * of the job's req_node_bitmap (jobs with required nodes are skipped).
 * job_ptr, avail_res_array, min_nodes IN - as passed to choose_nodes()
 * node_map IN/OUT - narrowed on AGORA_PLACE_NARROWED
 * out OUT - filled; xfree(out->chosen) afterwards
 * RET AGORA_PLACE_SKIP or AGORA_PLACE_NARROWED
 */
extern agora_place_rc_t agora_place_narrow(job_record_t *job_ptr,
					   bitstr_t *node_map,
					   avail_res_t **avail_res_array,
					   uint32_t min_nodes,
					   agora_place_out_t *out);

/*
 * Hook 3 (doc/select.md): before stock's select_p_select_nodeinfo_set()
 * allocates a NEW job's GRES, replace the GPU indices cons_tres picked on
 * each node (gres_bit_select) by pol_topo_place_req's best subset of the same
 * size, when that one scores strictly better.  Same count per node; only
 * free GPUs (gres_bit_alloc) of the job's type; never for
 * --gres-flags=enforce-binding, --exclusive whole-node allocations,
 * per-task/per-socket GPUs, several GPU types, shared GRES, or a node whose
 * usage record is a copy (node_usage[i].gres_list).  Placement=stock turns
 * it off with the node-choice hook.
 * job_ptr IN/OUT - gres_bit_select of its gres/gpu request may change
 * node_usage IN - stock's select_node_usage (may be NULL)
 * RET number of nodes whose GPU indices changed
 */
extern int agora_place_gpu_indices(job_record_t *job_ptr,
				   node_use_record_t *node_usage);

#endif /* AGORA_SELECT_PLACE_H */
