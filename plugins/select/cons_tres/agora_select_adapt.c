/*
 * agora_select_adapt.c - cons_tres choose_nodes() arguments <-> plain view.
 *
 * This is the only code that reads avail_res_t; keep it small so that a later
 * Slurm release costs one file.  See agora_select_adapt.h.
 */
#include "config.h"

#include "src/common/slurm_xlator.h"
#include "agora_compat.h" /* after slurm_xlator.h */

#include <stdint.h>
#include <string.h>

#include "src/common/bitstring.h"
#include "src/common/xmalloc.h"
#include "src/slurmctld/slurmctld.h"
#include AGORA_INC_CONS

#include "agora_select_adapt.h"
#include "agora_ctld_weak.h"

extern int agora_sel_view_build(job_record_t *job_ptr, bitstr_t *node_map,
				avail_res_t **avail_res_array,
				uint32_t min_nodes, uint32_t max_nodes,
				uint32_t req_nodes, agora_sel_view_t *view)
{
	bitstr_t *req_map = NULL;
	int64_t n, cnt, len;

	if (!view)
		return SLURM_ERROR;
	memset(view, 0, sizeof(*view));
	if (!job_ptr || !node_map || !avail_res_array)
		return SLURM_ERROR;

	if (job_ptr->details)
		req_map = job_ptr->details->req_node_bitmap;
	view->job_id = job_ptr->job_id;
	view->min_nodes = min_nodes;
	view->max_nodes = max_nodes;
	view->req_nodes = req_nodes;

	cnt = bit_set_count(node_map);
	if (cnt <= 0)
		return SLURM_SUCCESS;
	view->nodes = xcalloc(cnt, sizeof(*view->nodes));

	len = bit_size(node_map);
	if (len > node_record_count)
		len = node_record_count;
	for (n = 0; n < len && view->node_cnt < cnt; n++) {
		agora_sel_node_t *out;
		avail_res_t *ar;

		if (!bit_test(node_map, n))
			continue;
		out = &view->nodes[view->node_cnt++];
		out->node_inx = (uint32_t) n;
		if (req_map && (n < bit_size(req_map)) && bit_test(req_map, n))
			out->required = 1;
		if (!(ar = avail_res_array[n]))
			continue;
		out->avail_cpus = ar->avail_cpus;
		out->max_cpus = ar->max_cpus;
		out->avail_gpus = ar->avail_gpus;
		out->sock_cnt = ar->sock_cnt;
		view->avail_gpus += ar->avail_gpus;
	}
	return SLURM_SUCCESS;
}

extern void agora_sel_view_free(agora_sel_view_t *view)
{
	if (!view)
		return;
	xfree(view->nodes);
	view->node_cnt = 0;
}

extern uint32_t agora_sel_view_apply(const agora_sel_view_t *view,
				     const uint8_t *keep, bitstr_t *node_map)
{
	uint32_t i, cleared = 0;

	if (!view || !keep || !node_map)
		return 0;
	for (i = 0; i < view->node_cnt; i++) {
		const agora_sel_node_t *nd = &view->nodes[i];

		if (keep[i] || nd->required)
			continue;
		if (nd->node_inx >= (uint32_t) bit_size(node_map))
			continue;
		if (!bit_test(node_map, nd->node_inx))
			continue;
		bit_clear(node_map, nd->node_inx);
		cleared++;
	}
	return cleared;
}
