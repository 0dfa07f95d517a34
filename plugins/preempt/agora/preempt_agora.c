/*
 * preempt/agora - lease expiry as preemptability (PreemptType=preempt/agora).
 *
 * Themis leases GPUs; when a lease ends and the auction gives its GPUs to a
 * worse-off app, the holder must make room.  Agora does not requeue jobs
 * itself: this plugin tells Slurm which running jobs an auction winner may
 * preempt, and Slurm's own machinery does the rest - cons_tres finds the
 * victim set, GraceTime and (with PreemptParameters=send_user_signal) the
 * job's --signal warn it, and the job is requeued (PreemptMode=REQUEUE).
 *
 * The decision lives in site_factor/agora (the same slurmctld, another
 * shared object).  Plugins are loaded RTLD_LOCAL, so this one finds
 * site_factor_agora.so beside itself, already loaded, with
 * dlopen(RTLD_NOLOAD) and looks up its agora_export_* functions.  Without
 * it (site_factor/agora not configured) nothing is preemptable: the
 * plugin fails safe, never fatal.
 */
#define _GNU_SOURCE
#include "config.h"
#include "agora_compat.h"

#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/job_scheduler.h"
#include AGORA_INC_PREEMPT
#include "src/slurmctld/slurmctld.h"

const char plugin_name[] =
	"Agora: lease losers are preemptable by auction winners";
const char plugin_type[] = "preempt/agora";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/* Slurm entry points (looked up by name by the plugin loader). */
extern int init(void);
extern void fini(void);
extern bool preempt_p_job_preempt_check(job_queue_rec_t *preemptor,
					job_queue_rec_t *preemptee);
extern bool preempt_p_preemptable(job_record_t *preemptee,
				  job_record_t *preemptor);
extern int preempt_p_get_data(job_record_t *job_ptr,
			      slurm_preempt_data_type_t data_type, void *data);

typedef struct {
	bool (*job_won)(job_record_t *job_ptr);
	bool (*preemptable)(job_record_t *victim, job_record_t *preemptor);
	uint32_t (*victim_rank)(job_record_t *job_ptr);
	uint32_t (*grace)(job_record_t *job_ptr);
} agora_exports_t;

static pthread_mutex_t bind_lock = PTHREAD_MUTEX_INITIALIZER;
static agora_exports_t ex;
/* bound: read without bind_lock (every preemption test), so set with
 * release order after ex, and read with acquire order before it */
static bool bound = false;
static bool warned = false;
static void *bound_handle; /* dlopen'ed: closed by fini() */

/* Find site_factor_agora.so beside this plugin (loaded by multifactor
 * before any preemption is tested) and bind its exports, once. */
static bool bind_exports(void)
{
	Dl_info info;
	char self[PATH_MAX], *path = NULL;
	void *h;
	agora_exports_t e;

	if (__atomic_load_n(&bound, __ATOMIC_ACQUIRE))
		return true;
	slurm_mutex_lock(&bind_lock);
	if (bound)
		goto done;
	if (!dladdr((void *) bind_exports, &info) || !info.dli_fname) {
		if (!warned)
			error("%s: cannot find my own path; nothing will be preemptable",
			      plugin_type);
		warned = true;
		goto done;
	}
	strlcpy(self, info.dli_fname, sizeof(self));
	xstrfmtcat(path, "%s/site_factor_agora.so", dirname(self));
	h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
	if (h) {
		e.job_won = dlsym(h, "agora_export_job_won");
		e.preemptable = dlsym(h, "agora_export_preemptable");
		e.victim_rank = dlsym(h, "agora_export_victim_rank");
		e.grace = dlsym(h, "agora_export_grace");
		/* the handle stays open until fini(): slurmctld keeps the
		 * plugin loaded meanwhile */
		if (e.job_won && e.preemptable && e.victim_rank && e.grace) {
			ex = e;
			bound_handle = h;
			__atomic_store_n(&bound, true, __ATOMIC_RELEASE);
			info("%s: bound to %s", plugin_type, path);
		} else {
			dlclose(h);
		}
	}
	if (!bound && !warned) {
		error("%s: %s is not loaded (PrioritySiteFactorPlugin=site_factor/agora with PriorityType=priority/multifactor is needed); no job will be preempted",
		      plugin_type, path);
		warned = true;
	}
done:
	slurm_mutex_unlock(&bind_lock);
	xfree(path);
	return bound;
}

/* Slurm has one PreemptType: this one replaces preempt/qos and
 * preempt/partition_prio (decided, issue 19; doc/design.md), and says so
 * where an admin looks first. */
extern int init(void)
{
	info("%s loaded: it replaces preempt/qos and preempt/partition_prio: QOS Preempt= lists and partition PriorityTier preemption are not applied; only jobs whose Agora lease was lost are preemptable, by auction winners",
	     plugin_type);
	return SLURM_SUCCESS;
}

extern void fini(void)
{
	slurm_mutex_lock(&bind_lock);
	__atomic_store_n(&bound, false, __ATOMIC_RELEASE);
	/* each init() binds again: without the close, every reconfigure
	 * that reloads the plugins would add a reference that keeps
	 * site_factor_agora.so from ever being unloaded */
	if (bound_handle)
		dlclose(bound_handle);
	bound_handle = NULL;
	slurm_mutex_unlock(&bind_lock);
}

/* Queue order: an auction winner goes before a job it may preempt. */
extern bool preempt_p_job_preempt_check(job_queue_rec_t *preemptor,
					job_queue_rec_t *preemptee)
{
	if (!preemptor || !preemptee || !bind_exports())
		return false;
	return (*ex.preemptable)(preemptee->job_ptr, preemptor->job_ptr);
}

extern bool preempt_p_preemptable(job_record_t *preemptee,
				  job_record_t *preemptor)
{
	if (!preemptee || !preemptor || !bind_exports())
		return false;
	return (*ex.preemptable)(preemptee, preemptor);
}

extern int preempt_p_get_data(job_record_t *job_ptr,
			      slurm_preempt_data_type_t data_type, void *data)
{
	switch (data_type) {
	case PREEMPT_DATA_ENABLED:
		*(bool *) data = bind_exports();
		break;
	case PREEMPT_DATA_MODE:
		/* lease losers keep their work: always requeue (only
		 * requeueable batch jobs are ever preemptable) */
		*(uint16_t *) data = PREEMPT_MODE_REQUEUE;
		break;
	case PREEMPT_DATA_PRIO:
		*(uint32_t *) data = bind_exports() ? (*ex.victim_rank)(job_ptr)
						    : UINT32_MAX;
		break;
	case PREEMPT_DATA_GRACE_TIME:
		*(uint32_t *) data = bind_exports() ? (*ex.grace)(job_ptr) : 0;
		break;
	default:
		error("%s: unknown preempt data type %d", plugin_type,
		      (int) data_type);
		return SLURM_ERROR;
	}
	return SLURM_SUCCESS;
}
