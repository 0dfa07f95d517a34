/*
 * agora_select_view.h - a plain-C view of one cons_tres node-choice call.
 *
 * This header includes no Slurm header on purpose: it is the shape in which
 * the wrapper hands the candidates of a choose_nodes() call to a placement
 * scorer in common/ (pure C, no Slurm).  The adapter (agora_select_adapt.c)
 * fills it from cons_tres's node_map and avail_res_array and applies a
 * decision back.
 *
 * Ownership: the adapter allocates and frees every view; a scorer only
 * borrows it for the duration of one call and must not keep pointers.
 */
#ifndef AGORA_SELECT_VIEW_H
#define AGORA_SELECT_VIEW_H

#include <stdint.h>

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

#endif /* AGORA_SELECT_VIEW_H */
