/*
 * agora_select.c - Agora's select/cons_tres: a shadow wrapper over the stock
 * cons_tres plugin (doc/select.md).
 *
 * We are found first because our directory comes first in PluginDir, so
 * Slurm loads us instead of the stock file of the same name.  init() opens
 * the stock select_cons_tres.so by absolute path, checks it is the cons_tres
 * of this exact Slurm release, calls its init() and looks up its select_p_*
 * operations (36 on 22.05, 31 on 24.11); every select_p_* below forwards to it unchanged.  Inside
 * slurmctld we additionally route node choice through agora_select_hook.c.
 *
 * This file is loaded by every process that loads select plugins: slurmctld,
 * slurmd, slurmstepd, srun and the client commands.  Outside slurmctld it
 * only loads and forwards.  It references nothing that only slurmctld
 * defines (check with "make check"), so it needs no local copies of
 * slurmctld's data globals; see doc/select.md before adding such a reference.
 */
#define _GNU_SOURCE /* dladdr() */

#include "config.h"

#include "src/common/slurm_xlator.h"
#include "agora_compat.h" /* after slurm_xlator.h */

#include <dlfcn.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/read_config.h"
#include "src/common/run_in_daemon.h"
#include AGORA_INC_SELECT
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"
#include AGORA_INC_CONS

#include "agora_select.h"
#include "agora_select_hook.h"
#include "agora_select_place.h"
#include "agora_view_pairs.h"

#ifndef AGORA_STOCK_PLUGINDIR
#error "AGORA_STOCK_PLUGINDIR must be set by configure (SLURM_STOCK_PLUGINDIR)"
#endif

/*
 * The stock plugin is always the file configure found: nothing at run time
 * (environment, configuration file) can make slurmctld load other code
 * through the wrapper.  To test the wrapper against another file, build it
 * with SLURM_STOCK_PLUGINDIR=DIR ./configure (doc/select.md section 2).
 */
#define STOCK_FILE "select_cons_tres.so"
#define STOCK_TYPE "select/cons_tres"
#define STOCK_PATH AGORA_STOCK_PLUGINDIR "/" STOCK_FILE

const char plugin_name[] =
	"Agora wrapper over Trackable RESources (TRES) Selection plugin";
const char plugin_type[] = "select/cons_tres";
const uint32_t plugin_id = SELECT_PLUGIN_CONS_TRES; /* 109, as stock */
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/*
 * The stock plugin's select_p_* operations, looked up by name (the order
 * only has to match between the two lists below).  The field of
 * select_p_X is X, typed from our own prototype (agora_select.h), so a
 * forwarded call cannot disagree with the signature we export.
 */
/* clang-format off */
#define SELECT_OPS(X)              \
	X(state_save)              \
	X(state_restore)           \
	X(job_init)                \
	X(node_init)               \
	X(job_test)                \
	X(job_begin)               \
	X(job_ready)               \
	X(job_expand)              \
	X(job_resized)             \
	X(job_fini)                \
	X(job_suspend)             \
	X(job_resume)              \
	X(step_pick_nodes)         \
	X(step_start)              \
	X(step_finish)             \
	X(select_nodeinfo_pack)    \
	X(select_nodeinfo_unpack)  \
	X(select_nodeinfo_alloc)   \
	X(select_nodeinfo_free)    \
	X(select_nodeinfo_set_all) \
	X(select_nodeinfo_set)     \
	X(select_nodeinfo_get)     \
	X(select_jobinfo_alloc)    \
	X(select_jobinfo_free)     \
	X(select_jobinfo_set)      \
	X(select_jobinfo_get)      \
	X(select_jobinfo_copy)     \
	X(select_jobinfo_pack)     \
	X(select_jobinfo_unpack)   \
	X(get_info_from_plugin)    \
	X(reconfigure)
/* up to 22.05 only (agora_compat.h) */
#if AGORA_SELECT_OLD_OPS
#define SELECT_OLD_OPS(X)         \
	X(job_signal)             \
	X(select_jobinfo_sprint)  \
	X(select_jobinfo_xstrdup) \
	X(update_node_config)     \
	X(resv_test)
#else
#define SELECT_OLD_OPS(X)
#endif
/* clang-format on */

#define OP_FIELD(n) __typeof__(select_p_##n) *n;
#define OP_NAME(n)  "select_p_" #n,

typedef struct agora_select_ops {
	const uint32_t *plugin_id;
	SELECT_OPS(OP_FIELD)
	SELECT_OLD_OPS(OP_FIELD)
} agora_select_ops_t;

static const char *stock_syms[] = { "plugin_id",
				    SELECT_OPS(OP_NAME)
					    SELECT_OLD_OPS(OP_NAME) };
#define STOCK_SYM_CNT (sizeof(stock_syms) / sizeof(stock_syms[0]))

_Static_assert(sizeof(agora_select_ops_t) == STOCK_SYM_CNT * sizeof(void *),
	       "agora_select_ops_t and stock_syms[] differ");
#if AGORA_SELECT_OLD_OPS
/* 22.05 publishes its table (src/common/select.h): same size as ours */
_Static_assert(sizeof(slurm_select_ops_t) == sizeof(agora_select_ops_t),
	       "slurm_select_ops_t changed: update SELECT_OPS");
#endif

static void *stock_handle = NULL;
static agora_select_ops_t stock; /* pointers into the stock plugin */
static bool in_ctld = false;

/* True if path is this very file (installed over the stock one). */
static bool is_self(const char *path)
{
	Dl_info self;
	char a[PATH_MAX], b[PATH_MAX];

	if (!dladdr((void *) &plugin_id, &self) || !self.dli_fname)
		return false;
	if (!realpath(path, a) || !realpath(self.dli_fname, b))
		return false;
	return !strcmp(a, b);
}

/* RET SLURM_SUCCESS, or SLURM_ERROR after one error() naming the cause */
static int stock_load(void)
{
	const char *path = STOCK_PATH;
	/*
	 * slurmctld defines everything the stock plugin calls, so bind now
	 * and fail at startup rather than on first use.  Other processes
	 * lack slurmctld-only functions (gres_ctld_*, find_job_record, ...)
	 * that stock code calls only inside slurmctld: bind lazily there, as
	 * Slurm's own loader does (plugin.c).
	 */
	int flags = (in_ctld ? RTLD_NOW : RTLD_LAZY) | RTLD_LOCAL;
	void **ops = (void **) &stock;
	const char *type;
	const uint32_t *ver;
	int (*stock_init)(void);
	size_t i;

	if (is_self(path)) {
		error("%s: stock plugin path %s is this wrapper itself; install the wrapper in its own directory and list it first in PluginDir",
		      plugin_type, path);
		return SLURM_ERROR;
	}
	if (!(stock_handle = dlopen(path, flags))) {
		error("%s: Agora wrapper cannot load the stock cons_tres plugin %s: %s",
		      plugin_type, path, dlerror());
		return SLURM_ERROR;
	}

	type = dlsym(stock_handle, "plugin_type");
	ver = dlsym(stock_handle, "plugin_version");
	if (!type || xstrcmp(type, STOCK_TYPE) || !ver ||
	    ((*ver & 0xffffff) != (SLURM_VERSION_NUMBER & 0xffffff))) {
		error("%s: %s is not the %s plugin of Slurm %s (type %s, version 0x%x)",
		      plugin_type, path, STOCK_TYPE, SLURM_VERSION_STRING,
		      type ? type : "none", ver ? *ver : 0);
		goto fail;
	}

	for (i = 0; i < STOCK_SYM_CNT; i++) {
		if (!(ops[i] = dlsym(stock_handle, stock_syms[i]))) {
			error("%s: stock plugin %s lacks %s", plugin_type, path,
			      stock_syms[i]);
			goto fail;
		}
	}
	if (*stock.plugin_id != plugin_id) {
		error("%s: stock plugin %s has plugin_id %u, expected %u",
		      plugin_type, path, *stock.plugin_id, plugin_id);
		goto fail;
	}

	if ((stock_init = dlsym(stock_handle, "init")) &&
	    (stock_init() != SLURM_SUCCESS)) {
		error("%s: init() of the stock plugin %s failed", plugin_type,
		      path);
		goto fail;
	}

	if (in_ctld)
		info("Agora wrapper loaded, forwarding to stock %s", path);
	else
		debug("Agora wrapper loaded, forwarding to stock %s", path);
	return SLURM_SUCCESS;

fail:
	dlclose(stock_handle);
	stock_handle = NULL;
	memset(&stock, 0, sizeof(stock));
	return SLURM_ERROR;
}

/* Lazily put the node-choice hook in place; slurmctld only. */
static void hook_ensure(void)
{
	if (in_ctld)
		(void) agora_hook_ensure(stock_handle);
}

extern int init(void)
{
	/*
	 * Everything beyond loading the stock plugin waits for the first
	 * slurmctld call (hook_ensure): clients and slurmd only forward.
	 */
	int rc;

	in_ctld = running_in_slurmctld();
	rc = stock_load();
	if ((rc == SLURM_SUCCESS) && in_ctld)
		agora_place_load_conf("init");
	return rc;
}

extern int fini(void)
{
	int (*stock_fini)(void);
	int rc = SLURM_SUCCESS;

	if (!stock_handle)
		return SLURM_SUCCESS;
	agora_hook_remove();
	agora_place_fini();
	agora_view_pairs_fini();
	if ((stock_fini = dlsym(stock_handle, "fini")))
		rc = stock_fini();
	dlclose(stock_handle);
	stock_handle = NULL;
	memset(&stock, 0, sizeof(stock));
	return rc;
}

/* ---- the forwarded operations ---- */

extern int select_p_state_save(char *dir_name)
{
	return stock.state_save(dir_name);
}

extern int select_p_state_restore(char *dir_name)
{
	return stock.state_restore(dir_name);
}

extern int select_p_job_init(List job_list_arg)
{
	return stock.job_init(job_list_arg);
}

extern int select_p_node_init(void)
{
	int rc = stock.node_init();

	hook_ensure();
	return rc;
}

extern int select_p_job_test(job_record_t *job_ptr, bitstr_t *bitmap,
			     uint32_t min_nodes, uint32_t max_nodes,
			     uint32_t req_nodes, uint16_t mode,
			     List preemptee_candidates,
			     List *preemptee_job_list,
			     AGORA_SELECT_JOB_TEST_TAIL)
{
	hook_ensure();
	return stock.job_test(job_ptr, bitmap, min_nodes, max_nodes, req_nodes,
			      mode, preemptee_candidates, preemptee_job_list,
			      AGORA_SELECT_JOB_TEST_ARGS);
}

extern int select_p_job_begin(job_record_t *job_ptr)
{
	return stock.job_begin(job_ptr);
}

extern int select_p_job_ready(job_record_t *job_ptr)
{
	return stock.job_ready(job_ptr);
}

extern int select_p_job_expand(job_record_t *from_job_ptr,
			       job_record_t *to_job_ptr)
{
	return stock.job_expand(from_job_ptr, to_job_ptr);
}

extern int select_p_job_resized(job_record_t *job_ptr, node_record_t *node_ptr)
{
	return stock.job_resized(job_ptr, node_ptr);
}

#if AGORA_SELECT_OLD_OPS
extern int select_p_job_signal(job_record_t *job_ptr, int signal)
{
	return stock.job_signal(job_ptr, signal);
}
#endif

extern int select_p_job_fini(job_record_t *job_ptr)
{
	return stock.job_fini(job_ptr);
}

extern int select_p_job_suspend(job_record_t *job_ptr, bool indf_susp)
{
	return stock.job_suspend(job_ptr, indf_susp);
}

extern int select_p_job_resume(job_record_t *job_ptr, bool indf_susp)
{
	return stock.job_resume(job_ptr, indf_susp);
}

extern bitstr_t *select_p_step_pick_nodes(job_record_t *job_ptr,
					  select_jobinfo_t *step_jobinfo,
					  uint32_t node_count,
					  bitstr_t **avail_nodes)
{
	return stock.step_pick_nodes(job_ptr, step_jobinfo, node_count,
				     avail_nodes);
}

extern int select_p_step_start(step_record_t *step_ptr)
{
	return stock.step_start(step_ptr);
}

extern int select_p_step_finish(step_record_t *step_ptr, bool killing_step)
{
	return stock.step_finish(step_ptr, killing_step);
}

extern int select_p_select_nodeinfo_pack(select_nodeinfo_t *nodeinfo,
					 buf_t *buffer,
					 uint16_t protocol_version)
{
	return stock.select_nodeinfo_pack(nodeinfo, buffer, protocol_version);
}

extern int select_p_select_nodeinfo_unpack(select_nodeinfo_t **nodeinfo,
					   buf_t *buffer,
					   uint16_t protocol_version)
{
	return stock.select_nodeinfo_unpack(nodeinfo, buffer, protocol_version);
}

extern select_nodeinfo_t *select_p_select_nodeinfo_alloc(void)
{
	return stock.select_nodeinfo_alloc();
}

extern int select_p_select_nodeinfo_free(select_nodeinfo_t *nodeinfo)
{
	return stock.select_nodeinfo_free(nodeinfo);
}

extern int select_p_select_nodeinfo_set_all(void)
{
	return stock.select_nodeinfo_set_all();
}

extern int select_p_select_nodeinfo_set(job_record_t *job_ptr)
{
	/*
	 * Hook 3: a new allocation's GPU indices, before stock allocates
	 * them (job_res_add_job -> gres_ctld_job_alloc).
	 */
	if (in_ctld && stock_handle) {
		node_use_record_t **usage = dlsym(stock_handle,
						  "select_node_usage");

		(void) agora_place_gpu_indices(job_ptr, usage ? *usage : NULL);
	}
	return stock.select_nodeinfo_set(job_ptr);
}

extern int select_p_select_nodeinfo_get(select_nodeinfo_t *nodeinfo,
					enum select_nodedata_type dinfo,
					enum node_states state, void *data)
{
	return stock.select_nodeinfo_get(nodeinfo, dinfo, state, data);
}

extern select_jobinfo_t *select_p_select_jobinfo_alloc(void)
{
	return stock.select_jobinfo_alloc();
}

extern int select_p_select_jobinfo_free(select_jobinfo_t *jobinfo)
{
	return stock.select_jobinfo_free(jobinfo);
}

extern int select_p_select_jobinfo_set(select_jobinfo_t *jobinfo,
				       enum select_jobdata_type data_type,
				       void *data)
{
	return stock.select_jobinfo_set(jobinfo, data_type, data);
}

extern int select_p_select_jobinfo_get(select_jobinfo_t *jobinfo,
				       enum select_jobdata_type data_type,
				       void *data)
{
	return stock.select_jobinfo_get(jobinfo, data_type, data);
}

extern select_jobinfo_t *select_p_select_jobinfo_copy(select_jobinfo_t *jobinfo)
{
	return stock.select_jobinfo_copy(jobinfo);
}

extern int select_p_select_jobinfo_pack(select_jobinfo_t *jobinfo,
					buf_t *buffer,
					uint16_t protocol_version)
{
	return stock.select_jobinfo_pack(jobinfo, buffer, protocol_version);
}

extern int select_p_select_jobinfo_unpack(select_jobinfo_t **jobinfo_pptr,
					  buf_t *buffer,
					  uint16_t protocol_version)
{
	return stock.select_jobinfo_unpack(jobinfo_pptr, buffer,
					   protocol_version);
}

#if AGORA_SELECT_OLD_OPS
extern char *select_p_select_jobinfo_sprint(select_jobinfo_t *jobinfo,
					    char *buf, size_t size, int mode)
{
	return stock.select_jobinfo_sprint(jobinfo, buf, size, mode);
}

extern char *select_p_select_jobinfo_xstrdup(select_jobinfo_t *jobinfo,
					     int mode)
{
	return stock.select_jobinfo_xstrdup(jobinfo, mode);
}
#endif

extern int select_p_get_info_from_plugin(enum select_plugindata_info dinfo,
					 job_record_t *job_ptr, void *data)
{
	/* SELECT_CR_PLUGIN must keep answering SELECT_TYPE_CONS_TRES */
	int rc = stock.get_info_from_plugin(dinfo, job_ptr, data);

#if !AGORA_HAVE_CTLD_PLUGSTACK
	/*
	 * No SlurmctldPlugstack after 22.05: Agora's view pairs go in the
	 * select section of "scontrol show config" (agora_view_pairs.h),
	 * after stock's (none for cons_tres), then the switch tree's leaves
	 * (Leaf[<switch>]=<nodes>): 24.11's slurm_load_topo() cannot decode
	 * the tree in a public-libslurm program such as agorad
	 * (agora_compat_pub.h AGORA_TOPO_IN_SELECT_CONF).
	 */
	if ((dinfo == SELECT_CONFIG_INFO) && in_ctld && (rc == SLURM_SUCCESS)) {
		List *l = data;

		if (!*l)
			*l = list_create(destroy_config_key_pair);
		agora_view_pairs_append(plugin_type, *l);
		(void) agora_leaf_pairs_append(*l);
	}
#endif
	return rc;
}

#if AGORA_SELECT_OLD_OPS
extern int select_p_update_node_config(int index)
{
	return stock.update_node_config(index);
}
#endif

extern int select_p_reconfigure(void)
{
	int rc = stock.reconfigure();

	if (in_ctld)
		(void) agora_place_reconfigure();
	hook_ensure();
	return rc;
}

#if AGORA_SELECT_OLD_OPS
extern bitstr_t *select_p_resv_test(resv_desc_msg_t *resv_desc_ptr,
				    uint32_t node_cnt, bitstr_t *avail_bitmap,
				    bitstr_t **core_bitmap)
{
	return stock.resv_test(resv_desc_ptr, node_cnt, avail_bitmap,
			       core_bitmap);
}
#endif
