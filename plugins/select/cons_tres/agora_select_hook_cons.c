/*
 * agora_select_hook_cons.c - Hook 2 up to 22.05: install our choose_nodes
 * into the stock plugin's cons_common_callbacks (a data symbol of the stock
 * select_cons_tres.so) and route node choice through
 * agora_select_choose_nodes().  23.11 removed that table:
 * agora_select_hook_topo.c is the hook there (agora_compat.h,
 * AGORA_HAVE_CONS_HOOK).
 */
#include "config.h"

#include "src/common/slurm_xlator.h"
#include "agora_compat.h" /* after slurm_xlator.h */

#if AGORA_HAVE_CONS_HOOK

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "src/common/bitstring.h"
#include "src/common/log.h"
#include "src/slurmctld/slurmctld.h"
#include AGORA_INC_CONS

#include "agora_select_hook.h"

/*
 * hook_lock protects installation; the callback itself reads orig_choose
 * without the lock: it is written before our pointer is published and
 * cons_tres calls choose_nodes under slurmctld's job and node write locks.
 */
static pthread_mutex_t hook_lock = PTHREAD_MUTEX_INITIALIZER;
static cons_common_callbacks_t *stock_cb = NULL; /* in the stock .so */
static agora_choose_nodes_f orig_choose = NULL;
static bool hook_broken = false; /* logged once, run without hook */

static int agora_choose_nodes_cb(job_record_t *job_ptr, bitstr_t *node_map,
				 bitstr_t **avail_core, uint32_t min_nodes,
				 uint32_t max_nodes, uint32_t req_nodes,
				 avail_res_t **avail_res_array,
				 uint16_t cr_type, bool prefer_alloc_nodes,
				 gres_mc_data_t *tres_mc_ptr)
{
	agora_choose_nodes_f orig = __atomic_load_n(&orig_choose,
						    __ATOMIC_ACQUIRE);

	return agora_select_choose_nodes(orig, job_ptr, node_map, avail_core,
					 min_nodes, max_nodes, req_nodes,
					 avail_res_array, cr_type,
					 prefer_alloc_nodes, tres_mc_ptr);
}

static bool hook_in_place(void)
{
	cons_common_callbacks_t *cb = __atomic_load_n(&stock_cb,
						      __ATOMIC_ACQUIRE);

	return cb && (__atomic_load_n(&cb->choose_nodes, __ATOMIC_ACQUIRE) ==
		      agora_choose_nodes_cb);
}

extern bool agora_hook_ensure(void *stock_handle)
{
	agora_choose_nodes_f cur;
	bool ok = false;

	if (hook_in_place())
		return true;

	pthread_mutex_lock(&hook_lock);
	if (hook_broken || !stock_handle)
		goto out;
	if (!stock_cb) {
		(void) dlerror();
		stock_cb = dlsym(stock_handle, "cons_common_callbacks");
		if (!stock_cb) {
			error("%s: cannot find cons_common_callbacks in the stock plugin (%s); node choice is stock cons_tres only",
			      plugin_type, dlerror());
			hook_broken = true;
			goto out;
		}
	}
	cur = stock_cb->choose_nodes;
	if (cur == agora_choose_nodes_cb) {
		ok = true;
		goto out;
	}
	if (!cur) {
		/* stock init() has not run: nothing to wrap yet */
		debug("stock choose_nodes not set yet");
		goto out;
	}
	if (orig_choose && (cur != orig_choose))
		info("choose_nodes callback was replaced behind our back; wrapping the new one");
	__atomic_store_n(&orig_choose, cur, __ATOMIC_RELEASE);
	__atomic_store_n(&stock_cb->choose_nodes, agora_choose_nodes_cb,
			 __ATOMIC_RELEASE);
	info("Agora node-choice hook installed (stock choose_nodes=%p)",
	     (void *) cur);
	ok = true;
out:
	pthread_mutex_unlock(&hook_lock);
	return ok;
}

extern void agora_hook_remove(void)
{
	pthread_mutex_lock(&hook_lock);
	if (stock_cb && orig_choose &&
	    (stock_cb->choose_nodes == agora_choose_nodes_cb))
		stock_cb->choose_nodes = orig_choose;
	stock_cb = NULL;
	orig_choose = NULL;
	hook_broken = false;
	pthread_mutex_unlock(&hook_lock);
}

#endif /* AGORA_HAVE_CONS_HOOK */
