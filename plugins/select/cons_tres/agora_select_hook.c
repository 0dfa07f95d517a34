/*
 * agora_select_hook.c - the node-choice hook's body, the same on every
 * release: agora_select_choose_nodes().  How it is installed differs:
 * agora_select_hook_cons.c (22.05, cons_common's callbacks) and
 * agora_select_hook_topo.c (23.11+, topology_g_eval_nodes).  See
 * agora_select_hook.h and doc/select.md.
 */
#include "config.h"

#include "src/common/slurm_xlator.h"
#include "agora_compat.h" /* after slurm_xlator.h */

#include <dlfcn.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "src/common/bitstring.h"
#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/slurmctld/slurmctld.h"
#include AGORA_INC_CONS

#include "agora_select_adapt.h"
#include "agora_select_hook.h"
#include "agora_select_place.h"
#include "agora_ctld_weak.h"

/* DebugFlags=SelectType: what the scorer would see. */
static void log_view(job_record_t *job_ptr, const agora_sel_view_t *view,
		     uint16_t cr_type, bool prefer_alloc_nodes)
{
	uint32_t i, req = 0;

	for (i = 0; i < view->node_cnt; i++)
		req += view->nodes[i].required;
	log_flag(SELECT_TYPE,
		 "%pJ candidates=%u required=%u avail_gpus=%" PRIu64
		 " nodes=%u-%u(req %u) cr_type=0x%x prefer_alloc=%d",
		 job_ptr, view->node_cnt, req, view->avail_gpus,
		 view->min_nodes, view->max_nodes, view->req_nodes, cr_type,
		 prefer_alloc_nodes);
	if (!(slurm_conf.debug_flags & DEBUG_FLAG_SELECT_TYPE) ||
	    (get_log_level() < LOG_LEVEL_DEBUG))
		return;
	for (i = 0; i < view->node_cnt; i++) {
		const agora_sel_node_t *nd = &view->nodes[i];
		node_record_t *node_ptr = NULL;

		if (nd->node_inx < (uint32_t) node_record_count)
			node_ptr = node_record_table_ptr[nd->node_inx];
		log_flag(SELECT_TYPE,
			 "%pJ  %s inx=%u cpus=%u/%u gpus=%u sockets=%u%s",
			 job_ptr, node_ptr ? node_ptr->name : "?", nd->node_inx,
			 nd->avail_cpus, nd->max_cpus, nd->avail_gpus,
			 nd->sock_cnt, nd->required ? " required" : "");
	}
}

/*
 * What orig may change that a retry on the full map needs back:
 * avail_core (destructive in _eval_nodes) and the avail_cpus that
 * choose_nodes() lowers for removed cores.
 */
typedef struct saved_args {
	bitstr_t *node_map;
	bitstr_t **avail_core;
	uint16_t *avail_cpus;
} saved_args_t;

/* sv->node_map is the full map, copied before narrowing */
static void save_args(saved_args_t *sv, bitstr_t **avail_core,
		      avail_res_t **avail_res_array)
{
	int i;

	sv->avail_core = NULL;
	if (avail_core) {
		sv->avail_core = xcalloc(node_record_count,
					 sizeof(*sv->avail_core));
		for (i = 0; i < node_record_count; i++)
			if (avail_core[i])
				sv->avail_core[i] = bit_copy(avail_core[i]);
	}
	sv->avail_cpus = xcalloc(node_record_count, sizeof(uint16_t));
	for (i = 0; i < node_record_count; i++)
		if (avail_res_array[i])
			sv->avail_cpus[i] = avail_res_array[i]->avail_cpus;
}

static void restore_args(saved_args_t *sv, bitstr_t *node_map,
			 bitstr_t **avail_core, avail_res_t **avail_res_array)
{
	int i;

	bit_copybits(node_map, sv->node_map);
	for (i = 0; avail_core && i < node_record_count; i++) {
		if (!avail_core[i] || !sv->avail_core[i])
			continue;
		bit_copybits(avail_core[i], sv->avail_core[i]);
	}
	for (i = 0; i < node_record_count; i++)
		if (avail_res_array[i])
			avail_res_array[i]->avail_cpus = sv->avail_cpus[i];
}

static void free_args(saved_args_t *sv)
{
	int i;

	FREE_NULL_BITMAP(sv->node_map);
	for (i = 0; sv->avail_core && i < node_record_count; i++)
		FREE_NULL_BITMAP(sv->avail_core[i]);
	xfree(sv->avail_core);
	xfree(sv->avail_cpus);
}

extern int agora_select_choose_nodes(agora_choose_nodes_f orig,
				     job_record_t *job_ptr, bitstr_t *node_map,
				     bitstr_t **avail_core, uint32_t min_nodes,
				     uint32_t max_nodes, uint32_t req_nodes,
				     avail_res_t **avail_res_array,
				     uint16_t cr_type, bool prefer_alloc_nodes,
				     gres_mc_data_t *tres_mc_ptr)
{
	bool trace = (slurm_conf.debug_flags & DEBUG_FLAG_SELECT_TYPE);
	agora_place_out_t po;
	agora_place_rc_t prc;
	saved_args_t sv = { NULL, NULL, NULL };
	const char *how = "stock";
	int rc;

	if (!orig) {
		error("%s: no stock choose_nodes to call for %pJ", plugin_type,
		      job_ptr);
		return SLURM_ERROR;
	}

	if (trace) {
		agora_sel_view_t view;

		if (agora_sel_view_build(job_ptr, node_map, avail_res_array,
					 min_nodes, max_nodes, req_nodes,
					 &view) == SLURM_SUCCESS)
			log_view(job_ptr, &view, cr_type, prefer_alloc_nodes);
		agora_sel_view_free(&view);
	}

	/*
	 * Agora placement: narrow node_map to the nodes pol_topo_place_req
	 * chose, let stock pick cores and GPUs there, and fall back to the
	 * full map if stock cannot use the narrowed one.  Deterministic
	 * for equal inputs, so RUN_NOW, WILL_RUN and backfill agree.
	 */
	sv.node_map = bit_copy(node_map);
	prc = agora_place_narrow(job_ptr, node_map, avail_res_array, min_nodes,
				 &po);
	if (prc == AGORA_PLACE_NARROWED) {
		/* only now: O(nodes) copies, not for skipped jobs */
		save_args(&sv, avail_core, avail_res_array);
		how = "agora";
		if (trace)
			log_flag(
				SELECT_TYPE,
				"%pJ agora placement %s: score=%.3f level=%d nodes=%s (cleared %u of %u candidates)",
				job_ptr, po.why, po.score, po.level,
				po.chosen ? po.chosen : "?", po.cleared,
				(uint32_t) bit_set_count(sv.node_map));
	} else if (trace) {
		log_flag(SELECT_TYPE, "%pJ agora placement skipped: %s",
			 job_ptr, po.why);
	}
	xfree(po.chosen);

	rc = orig(job_ptr, node_map, avail_core, min_nodes, max_nodes,
		  req_nodes, avail_res_array, cr_type, prefer_alloc_nodes,
		  tres_mc_ptr);
	if ((rc != SLURM_SUCCESS) && (prc == AGORA_PLACE_NARROWED)) {
		if (trace)
			log_flag(
				SELECT_TYPE,
				"%pJ stock choose_nodes rc=%d on the agora nodes; retrying on all candidates",
				job_ptr, rc);
		restore_args(&sv, node_map, avail_core, avail_res_array);
		how = "stock fallback";
		rc = orig(job_ptr, node_map, avail_core, min_nodes, max_nodes,
			  req_nodes, avail_res_array, cr_type,
			  prefer_alloc_nodes, tres_mc_ptr);
	}
	free_args(&sv);

	if (trace) {
		char *nodes = (rc == SLURM_SUCCESS) ? bitmap2node_name(node_map)
						    : NULL;

		log_flag(SELECT_TYPE, "%pJ choose_nodes (%s) rc=%d nodes=%s",
			 job_ptr, how, rc, nodes ? nodes : "(none)");
		xfree(nodes);
	}
	return rc;
}
