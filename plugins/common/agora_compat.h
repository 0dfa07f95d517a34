/*
 * agora_compat.h - the one place where Agora's plugins differ between Slurm
 * releases (doc/design.md, "Slurm releases").
 *
 * Keyed on the version the configured Slurm tree declares
 * (SLURM_VERSION_NUMBER in its config.h), so a plugin is built for exactly
 * one release and supporting the next release is one more case here.  The
 * core (common/) never sees any of this.  Include after config.h (and after
 * src/common/slurm_xlator.h where a file uses it).
 *
 * Supported: 22.05 (Debian 12) and 24.11 (Debian 13).
 */
#ifndef AGORA_COMPAT_H
#define AGORA_COMPAT_H

#ifndef SLURM_VERSION_NUMBER
#error "include config.h of the configured Slurm tree before agora_compat.h"
#endif

/*
 * The version macros (AGORA_SLURM_AT_LEAST(maj, min)), the supported
 * releases and the public types (List, ListIterator, agora_hostlist_t):
 * agora_compat_pub.h, shared with the tools.
 */
#include "agora_compat_pub.h"

/*
 * Headers that moved: 23.02 put the plugin interfaces in src/interfaces/,
 * 23.11 merged select/cons_common into select/cons_tres.  Use as
 * #include AGORA_INC_GRES.
 */
#if AGORA_SLURM_AT_LEAST(23, 2)
#define AGORA_INC_GRES     "src/interfaces/gres.h"
#define AGORA_INC_TOPOLOGY "src/interfaces/topology.h"
#define AGORA_INC_SELECT   "src/interfaces/select.h"
#define AGORA_INC_PREEMPT  "src/interfaces/preempt.h"
#else
#define AGORA_INC_GRES     "src/common/gres.h"
#define AGORA_INC_TOPOLOGY "src/common/slurm_topology.h"
#define AGORA_INC_SELECT   "src/common/select.h"
#define AGORA_INC_PREEMPT  "src/slurmctld/preempt.h"
#endif
#if AGORA_SLURM_AT_LEAST(23, 11)
#define AGORA_INC_CONS "src/plugins/select/cons_tres/select_cons_tres.h"
#else
#define AGORA_INC_CONS "src/plugins/select/cons_common/cons_common.h"
#endif

/*
 * job_submit's job_modify() and the update's authorization: 22.05's
 * _update_job() calls the plugins first and only then checks that the uid
 * may update the job (its owner, an operator, a coordinator of its
 * account); 24.11 checks first.  AGORA_MODIFY_CHECKED: the uid was checked
 * before job_modify().
 */
#if AGORA_SLURM_AT_LEAST(24, 11)
#define AGORA_MODIFY_CHECKED 1
#else
#define AGORA_MODIFY_CHECKED 0
#endif

/* job_details_t: 22.05 has only struct job_details */
#if !AGORA_SLURM_AT_LEAST(23, 2)
typedef struct job_details job_details_t;
#endif

/* lock_state_files() moved from slurmctld/locks.h to common/state_save.h */
#if AGORA_SLURM_AT_LEAST(23, 2)
#include "src/common/state_save.h"
#else
#include "src/slurmctld/locks.h"
#endif

/*
 * The leaf (level 0) switches of topology/tree, one node bitmap each (the
 * caller frees them with agora_leaf_switches_free); 0 without topology/tree.
 * 22.05: slurmctld's switch_record_table; 23.11+: topology_g_get(), and
 * topology/block's base blocks count as leaves there.
 * agora_switch_count(): the topology plugin's record count (switches or
 * blocks), cheap, to notice a changed topology.
 */
#include "src/common/bitstring.h"
extern int agora_leaf_switches(bitstr_t ***maps);
extern int agora_switch_count(void);
extern void agora_leaf_switches_free(bitstr_t **maps, int n);

#if AGORA_SLURM_AT_LEAST(23, 11)
/*
 * 23.11+: the leaves as config_key_pair_t "Leaf[<switch or block>]=<nodes>"
 * appended to key_pairs (the select wrapper's SELECT_CONFIG_INFO answer):
 * how agorad, on public libslurm, learns a cluster's switch tree there
 * (agora_compat_pub.h AGORA_TOPO_IN_SELECT_CONF).  RET the number added.
 */
extern int agora_leaf_pairs_append(List key_pairs);
#endif

/*
 * job_submit's job_modify() gained the err_msg of job_submit() in 23.02:
 *   extern int job_modify(job_desc_msg_t *job_desc, job_record_t *job_ptr,
 *                         uint32_t submit_uid AGORA_JOB_MODIFY_ERR_MSG)
 */
#if AGORA_SLURM_AT_LEAST(23, 2)
#define AGORA_JOB_MODIFY_ERR_MSG , char **err_msg __attribute__((unused))
#else
#define AGORA_JOB_MODIFY_ERR_MSG
#endif

/*
 * slurmctld/agora has no host after 22.05 (configure builds it only where
 * the host exists: AM_CONDITIONAL SLURM_CTLD_PLUGSTACK): SlurmctldPlugstack
 * (and "scontrol show config"'s plugstack section) was removed in 23.02;
 * agoractl reads the view file there.
 */

/*
 * The select/cons_tres wrapper's node-choice hook (agora_select_hook.h).
 * Up to 22.05: cons_common's callback table (cons_common_callbacks, a data
 * symbol of the stock plugin).  23.11 merged cons_common into cons_tres and
 * removed the table; node choice is topology_g_eval_nodes(topology_eval_t *),
 * which the stock plugin calls through its PLT, so the wrapper points the
 * stock plugin's GOT slot of that function at its own
 * (agora_select_hook_topo.c) and calls the real one.
 */
#define AGORA_HAVE_CONS_HOOK      (!AGORA_SLURM_AT_LEAST(23, 11))
#define AGORA_HAVE_TOPO_EVAL_HOOK AGORA_SLURM_AT_LEAST(23, 11)

/*
 * The select plugin API (select_p_*) as found in 24.11: the ops table is
 * private to src/interfaces/select.c; job_signal, jobinfo_sprint,
 * jobinfo_xstrdup, update_node_config and resv_test are gone; job_test's
 * exc_core_bitmap became resv_exc_ptr and will_run_ptr.  Keyed on 24.11,
 * the release this was read from (23.x sources are not reachable here).
 */
#if AGORA_SLURM_AT_LEAST(24, 11)
#define AGORA_SELECT_OLD_OPS 0
#define AGORA_SELECT_JOB_TEST_TAIL                                             \
	resv_exc_t *resv_exc_ptr, will_run_data_t *will_run_ptr
#define AGORA_SELECT_JOB_TEST_ARGS resv_exc_ptr, will_run_ptr
#else
#define AGORA_SELECT_OLD_OPS       1
#define AGORA_SELECT_JOB_TEST_TAIL bitstr_t *exc_core_bitmap
#define AGORA_SELECT_JOB_TEST_ARGS exc_core_bitmap
#endif

/*
 * The shared gres (shard, mps) sharing a node's GPUs: 22.05 points at its
 * node state (alt_gres_ns), 23.02+ at its gres_state_t (alt_gres).
 */
#if AGORA_SLURM_AT_LEAST(23, 2)
#define AGORA_GRES_ALT_NS(ns)                                                  \
	((ns)->alt_gres ? (gres_node_state_t *) (ns)->alt_gres->gres_data      \
			: NULL)
#else
#define AGORA_GRES_ALT_NS(ns) ((ns)->alt_gres_ns)
#endif

/*
 * GPUs a reservation holds (23.02+: slurmctld_resv_t.gres_list_alloc;
 * stock cons_tres leaves them out for a job outside the reservation and
 * keeps a job inside it on them) and cores tied to GPUs (24.05+:
 * RestrictedCoresPerGPU, node_record_t.res_cores_per_gpu).  Hook 3, which
 * sees neither, leaves such nodes and jobs to stock's choice.
 */
#define AGORA_RESV_GRES         AGORA_SLURM_AT_LEAST(23, 2)
#define AGORA_RES_CORES_PER_GPU AGORA_SLURM_AT_LEAST(24, 5)

#endif /* AGORA_COMPAT_H */
