/*
 * agora_select_hook.h - the node-choice interposer (Hook 2, doc/select.md).
 *
 * The stock plugin keeps its node-choice routine in the data symbol
 * cons_common_callbacks.choose_nodes.  We keep the original pointer and put
 * ours in its place; ours calls agora_select_choose_nodes(), which is the one
 * place where Agora placement logic goes.  It runs in RUN_NOW, TEST_ONLY and
 * WILL_RUN alike (main scheduler, backfill, will-run simulation), so plans
 * and starts stay consistent.
 *
 * Only slurmctld installs the hook.  Include after the Slurm headers.
 */
#ifndef AGORA_SELECT_HOOK_H
#define AGORA_SELECT_HOOK_H

#include <stdbool.h>
#include <stdint.h>

/* The type of cons_common_callbacks_t.choose_nodes in Slurm 22.05.8. */
typedef int (*agora_choose_nodes_f)(job_record_t *job_ptr, bitstr_t *node_map,
				    bitstr_t **avail_core, uint32_t min_nodes,
				    uint32_t max_nodes, uint32_t req_nodes,
				    avail_res_t **avail_res_array,
				    uint16_t cr_type, bool prefer_alloc_nodes,
				    gres_mc_data_t *tres_mc_ptr);

/*
 * Make sure our choose_nodes is installed in the stock plugin's callbacks.
 * Cheap when already installed; re-installs (and logs) if something put
 * another pointer there, e.g. a second init() of the stock code.
 * stock_handle IN - dlopen() handle of the stock plugin (borrowed)
 * RET true if the hook is in place
 */
extern bool agora_hook_ensure(void *stock_handle);

/* Put the original pointer back (before the stock plugin is unloaded). */
extern void agora_hook_remove(void);

/*
 * The hook point.  Same arguments as choose_nodes plus the original
 * routine.  Unless agora.conf says Placement=stock, it narrows node_map to
 * the nodes pol_topo_place_req() chooses (agora_select_place.h), calls orig,
 * and if orig fails on the narrowed map, restores node_map, avail_core and
 * avail_cpus and calls orig again on all candidates.  DebugFlags=SelectType
 * logs the view, the decision (score, level, nodes and GPU masks) and the
 * result.
 * RET what orig returns, or SLURM_ERROR if orig is NULL
 */
extern int agora_select_choose_nodes(agora_choose_nodes_f orig,
				     job_record_t *job_ptr, bitstr_t *node_map,
				     bitstr_t **avail_core, uint32_t min_nodes,
				     uint32_t max_nodes, uint32_t req_nodes,
				     avail_res_t **avail_res_array,
				     uint16_t cr_type, bool prefer_alloc_nodes,
				     gres_mc_data_t *tres_mc_ptr);

#endif /* AGORA_SELECT_HOOK_H */
