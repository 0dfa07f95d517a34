/*
 * agora_select_gpuidx.c - Hook 3 (doc/select.md): the GPU indices inside
 * each node of a new allocation, before stock cons_tres allocates them
 * (agora_place_gpu_indices(), agora_select_place.h).  The placement state
 * (configuration, cluster, placer) is agora_select_place.c's, borrowed
 * under its lock through agora_select_place_int.h.
 */
#include "config.h"

#include "src/common/slurm_xlator.h"
#include "agora_compat.h" /* after slurm_xlator.h */

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "src/common/bitstring.h"
#include AGORA_INC_GRES
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"
#include AGORA_INC_CONS

#include "pol_model.h"
#include "pol_topo_place.h"

#include "agora_gres.h"
#include "agora_select_place.h"
#include "agora_select_place_int.h"
#include "agora_ctld_weak.h"

/* ---- Hook 3: GPU indices inside each node --------------------------- */

/* The job's one gres/gpu request, or NULL. */
static gres_job_state_t *job_gpu_state(job_record_t *job_ptr)
{
	gres_job_state_t *js = NULL;
	ListIterator it;
	gres_state_t *gs;
	int n = 0;

	if (!job_ptr->gres_list_req)
		return NULL;
	it = list_iterator_create(job_ptr->gres_list_req);
	while ((gs = list_next(it)))
		if (agora_place_is_gpu(gs) && gs->gres_data) {
			js = gs->gres_data;
			n++;
		}
	list_iterator_destroy(it);
	return (n == 1) ? js : NULL;
}

static gres_node_state_t *node_gpu_state(List gres_list)
{
	gres_node_state_t *ns = NULL;
	ListIterator it;
	gres_state_t *gs;

	if (!gres_list)
		return NULL;
	it = list_iterator_create(gres_list);
	while ((gs = list_next(it)))
		if (agora_place_is_gpu(gs) && gs->gres_data) {
			ns = gs->gres_data;
			break;
		}
	list_iterator_destroy(it);
	return ns;
}

/*
 * GPUs of node state ns that a job of js may get: the devices of topology
 * entries of the job's type (any type when the job names none), minus the
 * allocated ones and those a shard/MPS job holds (the alt_gres filter of
 * stock cons_tres).  -1 if the node state cannot be read safely.
 */
static int node_free_for_job(gres_node_state_t *ns, List gres_list,
			     gres_job_state_t *js, int n_gpus,
			     pol_gpumask_t *free_out)
{
	pol_gpumask_t allowed = 0;
	int t, g;

	if (!ns || ns->no_consume || !ns->gres_bit_alloc ||
	    (bit_size(ns->gres_bit_alloc) != n_gpus) || !ns->topo_cnt ||
	    !ns->topo_gres_bitmap)
		return -1;
	for (t = 0; t < ns->topo_cnt; t++) {
		bitstr_t *b = ns->topo_gres_bitmap[t];

		if (!b || (bit_size(b) != n_gpus))
			continue;
		if (js->type_name && ns->topo_type_id &&
		    (ns->topo_type_id[t] != js->type_id))
			continue;
		for (g = 0; g < n_gpus; g++)
			if (bit_test(b, g))
				allowed |= (pol_gpumask_t) 1 << g;
	}
	for (g = 0; g < n_gpus; g++)
		if (bit_test(ns->gres_bit_alloc, g))
			allowed &= ~((pol_gpumask_t) 1 << g);
	*free_out = allowed & ~agora_gres_shared_held(ns, gres_list, n_gpus);
	return 0;
}

#if AGORA_RESV_GRES
/*
 * Does a reservation hold GPUs of node i?  Stock cons_tres keeps a job
 * outside it off those GPUs (resv_exc_t.gres_list_exc) and a job inside
 * it on them; Hook 3 sees neither, so it leaves such a node to stock.
 * Any reservation, started or not: keeping stock's choice is always safe.
 * Job and node write locks held, under which reservations do not change.
 */
static bool resv_holds_gpus(int64_t i)
{
	ListIterator it;
	slurmctld_resv_t *r;
	bool held = false;

	if (!resv_list)
		return false;
	it = list_iterator_create(resv_list);
	while (!held && (r = list_next(it)))
		held = r->gres_list_alloc && list_count(r->gres_list_alloc) &&
		       r->node_bitmap && (i < bit_size(r->node_bitmap)) &&
		       bit_test(r->node_bitmap, i);
	list_iterator_destroy(it);
	return held;
}
#endif

extern int agora_place_gpu_indices(job_record_t *job_ptr,
				   node_use_record_t *node_usage)
{
	agora_place_ctx_t ctx;
	const pol_cluster_t *cluster;
	pol_topo_place_t *placer;
	pol_gpumask_t *free_masks;
	job_resources_t *jr;
	gres_job_state_t *js;
	int64_t i, len;
	int changed = 0;

	if (!job_ptr || !(jr = job_ptr->job_resrcs) || !jr->node_bitmap ||
	    job_ptr->gres_list_alloc)
		return 0; /* not a new allocation (restart, resize) */
	if ((job_ptr->bit_flags & GRES_ENFORCE_BIND) ||
	    (job_ptr->details && (job_ptr->details->whole_node == 1)))
		return 0; /* cores constrain GPUs / all GPUs anyway */
#if AGORA_RESV_GRES
	if (job_ptr->resv_ptr && job_ptr->resv_ptr->gres_list_alloc)
		return 0; /* on the reservation's GPUs: stock's choice */
#endif
	if (!(js = job_gpu_state(job_ptr)) || !js->gres_bit_select ||
	    js->gres_per_task || js->gres_per_socket ||
	    (!js->gres_per_node && !js->gres_per_job))
		return 0;

	if (!agora_place_begin(&ctx))
		goto out;
	cluster = ctx.cluster;
	placer = ctx.placer;
	free_masks = ctx.free_masks;
	len = bit_size(jr->node_bitmap);
	if (len > cluster->n_nodes)
		len = cluster->n_nodes;
	if (js->total_node_cnt && (len > js->total_node_cnt))
		len = js->total_node_cnt; /* size of gres_bit_select */
	for (i = 0; i < len; i++) {
		node_record_t *node_ptr = node_record_table_ptr[i];
		bitstr_t *sel = js->gres_bit_select[i];
		int n_gpus = cluster->types[cluster->nodes[i].type].n_gpus;
		pol_gpumask_t fr = 0, stock = 0, best;
		pol_alloc_part_t part;
		pol_alloc_t cur = { &part, 1 };
		pol_alloc_t alloc = { NULL, 0 };
		pol_place_req_t req;
		double s_stock, s_best = 0;
		int g, k;

		if (!bit_test(jr->node_bitmap, i) || !sel || !node_ptr)
			continue;
		if (node_usage && node_usage[i].gres_list)
			continue; /* not the live node state: leave it */
		if ((n_gpus < 2) || (bit_size(sel) != n_gpus))
			continue;
#if AGORA_RESV_GRES
		if (resv_holds_gpus(i))
			continue;
#endif
#if AGORA_RES_CORES_PER_GPU
		if (node_ptr->res_cores_per_gpu)
			continue; /* cores tied to GPUs: stock pairs them */
#endif
		if (node_free_for_job(node_gpu_state(node_ptr->gres_list),
				      node_ptr->gres_list, js, n_gpus, &fr))
			continue;
		for (g = 0; g < n_gpus; g++)
			if (bit_test(sel, g))
				stock |= (pol_gpumask_t) 1 << g;
		k = pol_popcount(stock);
		if (!k || ((stock & fr) != stock) || (k == pol_popcount(fr)))
			continue; /* nothing to choose, or stale view */

		memset(free_masks, 0,
		       sizeof(*free_masks) * (size_t) cluster->n_nodes);
		free_masks[i] = fr;
		memset(&req, 0, sizeof(req));
		req.nodes = 1;
		req.gpus_per_node = k;
		req.pool = cluster->nodes[i].pool;
		part.node = (int) i;
		part.gpus = stock;
		s_stock = pol_topo_place_score(placer, cluster, free_masks,
					       &cur);
		if (pol_topo_place_req(placer, cluster, free_masks, &req,
				       &alloc, &s_best) ||
		    (alloc.n_parts != 1) || (alloc.parts[0].node != i) ||
		    (pol_popcount(alloc.parts[0].gpus) != k) ||
		    ((alloc.parts[0].gpus & fr) != alloc.parts[0].gpus)) {
			pol_alloc_free(&alloc);
			continue;
		}
		best = alloc.parts[0].gpus;
		pol_alloc_free(&alloc);
		/* strictly better only: ties keep stock's choice */
		if ((best == stock) || !(s_best < s_stock - 1e-9))
			continue;
		bit_clear_all(sel);
		for (g = 0; g < n_gpus; g++)
			if (best & ((pol_gpumask_t) 1 << g))
				bit_set(sel, g);
		changed++;
		log_flag(SELECT_TYPE,
			 "%pJ agora GPU indices on %s: stock 0x%" PRIx64
			 " (score %.3f) -> 0x%" PRIx64 " (score %.3f)",
			 job_ptr, node_ptr->name, (uint64_t) stock, s_stock,
			 (uint64_t) best, s_best);
	}
out:
	agora_place_end();
	return changed;
}
