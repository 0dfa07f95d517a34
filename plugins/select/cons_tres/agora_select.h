/*
 * agora_select.h - entry points of the Agora select/cons_tres shadow wrapper.
 *
 * The wrapper is named "select/cons_tres" (plugin_id 109) and is found before
 * the stock plugin because its directory comes first in PluginDir.  It
 * dlopen()s the stock select_cons_tres.so by absolute path and forwards all
 * select_p_* operations to it (doc/select.md): 36 on 22.05, 31 on 24.11
 * (agora_compat.h, AGORA_SELECT_OLD_OPS).
 *
 * These prototypes exist to keep -Wmissing-prototypes clean: the functions
 * are looked up by name by Slurm's select interface (node_select_syms[]);
 * their types follow its slurm_select_ops_t, i.e. the caller's view, which
 * is what we forward unchanged.
 *
 * Include after config.h, slurm_xlator.h and the Slurm headers that define
 * job_record_t and friends (src/common/select.h, src/slurmctld/slurmctld.h).
 */
#ifndef AGORA_SELECT_H
#define AGORA_SELECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

extern const char plugin_name[];
extern const char plugin_type[];
extern const uint32_t plugin_id;
extern const uint32_t plugin_version;

extern int init(void);
extern int fini(void);

extern int select_p_state_save(char *dir_name);
extern int select_p_state_restore(char *dir_name);
extern int select_p_job_init(List job_list_arg);
extern int select_p_node_init(void);
extern int select_p_job_test(job_record_t *job_ptr, bitstr_t *bitmap,
			     uint32_t min_nodes, uint32_t max_nodes,
			     uint32_t req_nodes, uint16_t mode,
			     List preemptee_candidates,
			     List *preemptee_job_list,
			     AGORA_SELECT_JOB_TEST_TAIL);
extern int select_p_job_begin(job_record_t *job_ptr);
extern int select_p_job_ready(job_record_t *job_ptr);
extern int select_p_job_expand(job_record_t *from_job_ptr,
			       job_record_t *to_job_ptr);
extern int select_p_job_resized(job_record_t *job_ptr, node_record_t *node_ptr);
#if AGORA_SELECT_OLD_OPS
extern int select_p_job_signal(job_record_t *job_ptr, int signal);
#endif
extern int select_p_job_fini(job_record_t *job_ptr);
extern int select_p_job_suspend(job_record_t *job_ptr, bool indf_susp);
extern int select_p_job_resume(job_record_t *job_ptr, bool indf_susp);
extern bitstr_t *select_p_step_pick_nodes(job_record_t *job_ptr,
					  select_jobinfo_t *step_jobinfo,
					  uint32_t node_count,
					  bitstr_t **avail_nodes);
extern int select_p_step_start(step_record_t *step_ptr);
extern int select_p_step_finish(step_record_t *step_ptr, bool killing_step);
extern int select_p_select_nodeinfo_pack(select_nodeinfo_t *nodeinfo,
					 buf_t *buffer,
					 uint16_t protocol_version);
extern int select_p_select_nodeinfo_unpack(select_nodeinfo_t **nodeinfo,
					   buf_t *buffer,
					   uint16_t protocol_version);
extern select_nodeinfo_t *select_p_select_nodeinfo_alloc(void);
extern int select_p_select_nodeinfo_free(select_nodeinfo_t *nodeinfo);
extern int select_p_select_nodeinfo_set_all(void);
extern int select_p_select_nodeinfo_set(job_record_t *job_ptr);
extern int select_p_select_nodeinfo_get(select_nodeinfo_t *nodeinfo,
					enum select_nodedata_type dinfo,
					enum node_states state, void *data);
extern select_jobinfo_t *select_p_select_jobinfo_alloc(void);
extern int select_p_select_jobinfo_free(select_jobinfo_t *jobinfo);
extern int select_p_select_jobinfo_set(select_jobinfo_t *jobinfo,
				       enum select_jobdata_type data_type,
				       void *data);
extern int select_p_select_jobinfo_get(select_jobinfo_t *jobinfo,
				       enum select_jobdata_type data_type,
				       void *data);
extern select_jobinfo_t *select_p_select_jobinfo_copy(
	select_jobinfo_t *jobinfo);
extern int select_p_select_jobinfo_pack(select_jobinfo_t *jobinfo,
					buf_t *buffer,
					uint16_t protocol_version);
extern int select_p_select_jobinfo_unpack(select_jobinfo_t **jobinfo_pptr,
					  buf_t *buffer,
					  uint16_t protocol_version);
#if AGORA_SELECT_OLD_OPS
extern char *select_p_select_jobinfo_sprint(select_jobinfo_t *jobinfo,
					    char *buf, size_t size, int mode);
extern char *select_p_select_jobinfo_xstrdup(select_jobinfo_t *jobinfo,
					     int mode);
#endif
extern int select_p_get_info_from_plugin(enum select_plugindata_info dinfo,
					 job_record_t *job_ptr, void *data);
extern int select_p_reconfigure(void);
#if AGORA_SELECT_OLD_OPS
extern int select_p_update_node_config(int index);
extern bitstr_t *select_p_resv_test(resv_desc_msg_t *resv_desc_ptr,
				    uint32_t node_cnt, bitstr_t *avail_bitmap,
				    bitstr_t **core_bitmap);
#endif

#endif /* AGORA_SELECT_H */
