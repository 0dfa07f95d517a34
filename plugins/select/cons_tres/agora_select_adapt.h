/*
 * agora_select_adapt.h - convert cons_tres's choose_nodes() arguments into
 * an agora_sel_view_t (plain arrays) and apply a scorer's decision back.
 *
 * Only the adapter and the hook touch avail_res_t, whose layout is private to
 * Slurm 22.05.8's cons_common: rebuild for every Slurm micro release.
 *
 * Include after the Slurm headers (cons_common.h provides avail_res_t).
 */
#ifndef AGORA_SELECT_ADAPT_H
#define AGORA_SELECT_ADAPT_H

#include <stdint.h>

/*
 * A plain-C view of one cons_tres node-choice call: the candidates of a
 * choose_nodes() call as plain arrays, logged under DebugFlags=SelectType
 * (agora_select_hook.c).  The adapter allocates and frees every view.
 */
/* One candidate node, as cons_tres sees it for this job right now. */
typedef struct agora_sel_node {
	uint32_t node_inx;   /* Slurm node index (node_record_table_ptr) */
	uint16_t avail_cpus; /* CPUs usable by this job on the node */
	uint16_t max_cpus;   /* most CPUs the job could get on the node */
	uint16_t avail_gpus; /* GPUs free for this job on the node */
	uint16_t sock_cnt;   /* sockets on the node */
	uint8_t required;    /* 1 if in the job's --nodelist: never drop */
} agora_sel_node_t;

/* All candidates of one choose_nodes() call. */
typedef struct agora_sel_view {
	uint32_t job_id;
	uint32_t min_nodes;      /* job needs at least this many nodes */
	uint32_t max_nodes;      /* and at most this many (0: no limit) */
	uint32_t req_nodes;      /* desired node count */
	uint32_t node_cnt;       /* entries in nodes[] */
	uint64_t avail_gpus;     /* sum of nodes[].avail_gpus */
	agora_sel_node_t *nodes; /* node_cnt entries, ascending node_inx */
} agora_sel_view_t;

/*
 * Fill a view with one entry per node set in node_map.
 * job_ptr IN - job being placed (borrowed)
 * node_map IN - candidate nodes (borrowed, not modified)
 * avail_res_array IN - per node index availability, may hold NULLs
 * min_nodes, max_nodes, req_nodes IN - as passed to choose_nodes()
 * view OUT - filled; free its arrays with agora_sel_view_free()
 * RET SLURM_SUCCESS or SLURM_ERROR (bad arguments; view left empty)
 */
extern int agora_sel_view_build(job_record_t *job_ptr, bitstr_t *node_map,
				avail_res_t **avail_res_array,
				uint32_t min_nodes, uint32_t max_nodes,
				uint32_t req_nodes, agora_sel_view_t *view);

/* Release the arrays of a view built by agora_sel_view_build(). */
extern void agora_sel_view_free(agora_sel_view_t *view);

/*
 * Narrow node_map to a scorer's decision: clear every candidate whose keep[]
 * entry is 0, except required nodes, which are always kept.  Never sets a
 * bit that was not set.
 * view IN - the view the decision was computed on
 * keep IN - view->node_cnt entries, 0 = drop, 1 = keep
 * node_map IN/OUT - the choose_nodes() node_map
 * RET number of nodes cleared
 */
extern uint32_t agora_sel_view_apply(const agora_sel_view_t *view,
				     const uint8_t *keep, bitstr_t *node_map);

#endif /* AGORA_SELECT_ADAPT_H */
