/*
 * site_factor/agora - Agora inside slurmctld: MAST's "priority, then
 * credit" order and Themis' finish-time-fair GPU auctions, expressed
 * through Slurm's own levers.
 *
 * Loaded by priority/multifactor (PrioritySiteFactorPlugin=site_factor/agora),
 * only inside slurmctld.  Slurm's main scheduler and backfill start every
 * job (SchedulerType stays sched/backfill); this plugin
 *   1. runs Agora's pass in a thread (agora_thread.c): snapshot, the core's
 *      credit order and auction, the award table published;
 *   2. sets each job's site factor (sprio's SITE column):
 *          NICE_OFFSET + CreditWeight * clamp(credit / quota, -1, 1)
 *                      + AGORA_AWARD_BOOST if the job won GPUs
 *      so that auction winners rank first in Slurm's own queue and the
 *      credit orders the rest;
 *   3. answers preempt/agora (agora_export_*): a job whose lease is lost
 *      may be preempted by a winner of a worse-off app, nothing else.
 *
 * agora.conf is read here (beside slurm.conf).  A bad file never takes
 * slurmctld down: at start-up the plugin logs FILE:LINE: KEY and runs in
 * safe mode (no auction partitions: plain Slurm plus the credit term); on
 * reconfigure it logs and keeps the previous configuration.
 */
#define _GNU_SOURCE
#include "config.h"
#include "agora_compat.h"

#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <math.h>
#include <string.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/log.h"
#include "src/common/read_config.h"
#include "src/common/run_in_daemon.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "agora_conf.h"
#include "agora_fed.h"
#include "agora_hold.h"
#include "agora_sched.h"
#include "pol_app.h"
#include "site_factor_agora.h"

const char plugin_name[] =
	"Agora: credit order and finish-time-fair GPU auctions (site factor)";
const char plugin_type[] = "site_factor/agora";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

/*
 * What the site factor and the preemption rule read, replaced as a whole:
 * the configuration (its own parsed copy) and the last award table.
 * award_lock guards both; it is held only for lookups.
 */
pthread_mutex_t award_lock = PTHREAD_MUTEX_INITIALIZER;
pol_award_t *award_current = NULL;
static agora_conf_t pub_conf;
static bool pub_ok = false;
static bool in_ctld = false;

extern void agora_award_publish(pol_award_t *a)
{
	pol_award_t *old;

	slurm_mutex_lock(&award_lock);
	old = award_current;
	award_current = a;
	slurm_mutex_unlock(&award_lock);
	pol_award_destroy(&old);
}

/*
 * Parse agora.conf into *c.  SLURM_SUCCESS (a missing file means the
 * defaults), or SLURM_ERROR after one error line naming file, line and
 * key (*c is then the defaults).
 */
static int load_conf(agora_conf_t *c)
{
	char name[] = "agora.conf";
	char *path = get_extra_conf_path(name);
	agora_err_t err = { { 0 } };
	int rc = SLURM_SUCCESS;

	agora_conf_defaults(c);
	if (agora_conf_parse_file(path, c, &err)) {
		if (errno == ENOENT) {
			info("%s: %s not found, using defaults", plugin_type,
			     path);
		} else {
			error("%s: rejected configuration: %s", plugin_type,
			      err.text);
			rc = SLURM_ERROR;
		}
	}
	xfree(path);
	return rc;
}

static void log_conf(const agora_conf_t *c, const char *when)
{
	char *parts = NULL;
	size_t i;

	for (i = 0; i < c->n_auction_partitions; i++)
		xstrfmtcat(parts, "%s%s", i ? "," : "",
			   c->auction_partitions[i]);
	info("%s: %s: SchedulerInterval=%d AuctionPartitions=%s AppDefinition=%s FairnessKnob=%.2f LeaseTime=%d GraceTime=%d CreditHalfLife=%.1fh DefaultQuota=%.1f AccountQuotas=%zu CreditWeight=%u CheckpointIntervals=%zu PreemptBudget=%d PreemptEvery=%d PreemptUnsaved=%s",
	     plugin_type, when, c->sched_interval_s, parts ? parts : "(none)",
	     agora_app_def_name(c->app_def), c->fairness_knob, c->lease_s,
	     c->grace_s, c->credit_half_life_h, c->default_quota, c->n_quotas,
	     c->credit_weight, c->n_ckpts, c->preempt_budget,
	     c->preempt_every_s, c->preempt_unsaved ? "yes" : "no");
	xfree(parts);
}

/* Load agora.conf: one copy for the site factor, one for the thread. */
static void configure(bool startup)
{
	agora_conf_t a, b;

	if (load_conf(&a) != SLURM_SUCCESS) {
		agora_conf_free(&a);
		if (!startup) {
			error("%s: keeping the previous configuration",
			      plugin_type);
			return;
		}
		error("%s: starting in safe mode: defaults, no auction-managed partitions (plain Slurm scheduling plus the credit term); fix agora.conf and run 'scontrol reconfigure'",
		      plugin_type);
		agora_conf_defaults(&a);
		agora_conf_defaults(&b);
	} else if (load_conf(&b) != SLURM_SUCCESS) {
		/* the file changed between the two reads: next time */
		agora_conf_free(&a);
		agora_conf_free(&b);
		return;
	}
	if (a.embed_backfill != true)
		info("%s: EmbedBackfill is ignored: Slurm's own sched/backfill (SchedulerType) runs the backfill",
		     plugin_type);
	slurm_mutex_lock(&award_lock);
	agora_conf_free(&pub_conf);
	pub_conf = a;
	pub_ok = true;
	slurm_mutex_unlock(&award_lock);
	log_conf(&b, startup ? "loaded" : "reconfigured");
	agora_conf_offer(&b);
}

/* slurmctld is stopping for good (not a controller going back to backup
 * mode, which loads its plugins again in the same process) */
static bool ctld_exiting(void)
{
	return slurmctld_config.shutdown_time &&
	       !slurmctld_config.resume_backup;
}

/* dl_iterate_phdr: the path of the loaded priority_multifactor.so */
static int find_multifactor(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/')
					   : NULL;

	(void) size;
	if (!base || strcmp(base + 1, "priority_multifactor.so"))
		return 0;
	strlcpy(arg, info->dlpi_name, PATH_MAX);
	return 1;
}

/* Keep a loaded object mapped until the process exits. */
static void pin_object(const char *path)
{
	if (!path[0])
		return;
	if (dlopen(path, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE))
		debug("%s: %s stays mapped until slurmctld exits", plugin_type,
		      path);
	else
		debug("%s: cannot pin %s: %s", plugin_type, path, dlerror());
}

/*
 * At exit, Slurm 22.05 and 24.11 unload the priority plugin (and with it
 * this one) in priority_g_fini() before fed_mgr_fini() stops the
 * federation's job update thread (controller.c).  A sibling's job update
 * that thread handles in between reaches set_job_prio() -> priority_g_set()
 * through the pointers of the unloaded plugins and segfaults slurmctld
 * before its last state save (a core from agorad's dispatch bench,
 * doc/design.md "Shutdown").  Called from fini() only when slurmctld
 * exits: both objects stay mapped, so such a call runs their code (this
 * one's entry points do nothing once fini() ran).  Never while a
 * controller only goes back to backup mode: priority/multifactor's
 * statics (its decay thread's stop flag) must be fresh when it is loaded
 * again.
 */
static void pin_for_exit(void)
{
	char path[PATH_MAX] = "";
	Dl_info self;

	dl_iterate_phdr(find_multifactor, path);
	pin_object(path);
	if (dladdr((void *) pin_for_exit, &self) && self.dli_fname) {
		strlcpy(path, self.dli_fname, sizeof(path));
		pin_object(path);
	}
}

extern int init(void)
{
	if (!(in_ctld = running_in_slurmctld()))
		return SLURM_SUCCESS;
	/* loaded again after fini() by a late priority_g_set() while
	 * slurmctld exits (22.05's priority_g_init() reloads): stay idle */
	if (ctld_exiting()) {
		debug("%s: loaded while slurmctld exits: idle", plugin_type);
		return SLURM_SUCCESS;
	}
	agora_conf_defaults(&pub_conf);
	configure(true);
	if (xstrcmp(slurm_conf.preempt_type, "preempt/agora"))
		info("%s: PreemptType is not preempt/agora: jobs whose lease is lost are never preempted (auction winners wait for GPUs to free up)",
		     plugin_type);
	else if ((slurm_conf.preempt_mode & ~PREEMPT_MODE_GANG) !=
		 PREEMPT_MODE_REQUEUE)
		info("%s: PreemptMode is not REQUEUE: preempt/agora requeues lease losers anyway",
		     plugin_type);
	agora_site_factor_notices();
	agora_thread_start();
	return SLURM_SUCCESS;
}

extern int fini(void)
{
	if (!in_ctld)
		return SLURM_SUCCESS;
	agora_thread_stop();
	slurm_mutex_lock(&agora_state_lock);
	agora_policy_fini();
	slurm_mutex_unlock(&agora_state_lock);
	agora_award_publish(NULL);
	slurm_mutex_lock(&award_lock);
	agora_conf_free(&pub_conf);
	pub_ok = false;
	agora_admin_sf_fini();
	slurm_mutex_unlock(&award_lock);
	if (ctld_exiting())
		pin_for_exit();
	return SLURM_SUCCESS;
}

/* Never waits for a running decision: the thread takes the new
 * configuration at its next pass. */
extern void site_factor_p_reconfig(void)
{
	if (!in_ctld)
		return;
	configure(false);
	agora_thread_wake();
}

/* The site factor of a job.  award_lock held.  Called for every pending
 * job under the job write lock: no allocation, and hash lookups only
 * (the job in the award table, which names its app; else its credit
 * account by name). */
static uint32_t job_site_factor(job_record_t *job_ptr)
{
	const pol_award_app_t *app = NULL;
	const pol_award_job_t *aj = NULL;
	double quota, credit, frac;
	char key[POL_APP_KEY_LEN];
	int64_t sf;

	agora_conf_app_key(&pub_conf, job_ptr->account, job_ptr->user_id, key);
	if (award_current) {
		aj = pol_award_find(award_current, job_ptr->job_id);
		/* an app of a job array or burst carries its account's credit
		 * (build_award()); one of the account or user is that account */
		app = aj ? pol_award_app_at(award_current, aj->app)
			 : pol_award_app_find(award_current, key);
	}
	quota = app ? app->quota : agora_conf_quota(&pub_conf, key);
	credit = app ? app->credit : quota;
	credit -= agora_fed_remote_usage(key); /* used on other clusters */
	frac = quota > 0 ? credit / quota : (credit >= 0 ? 1.0 : -1.0);
	if (!isfinite(frac))
		frac = 0;
	frac = frac > 1 ? 1 : (frac < -1 ? -1 : frac);
	sf = (int64_t) NICE_OFFSET + llround(frac * pub_conf.credit_weight);
	if (IS_JOB_PENDING(job_ptr) && aj && (aj->flags & POL_AWARD_WON) &&
	    agora_job_auction_only(job_ptr, &pub_conf))
		sf += AGORA_AWARD_BOOST;
	return (uint32_t) MIN(MAX(sf, 0), (int64_t) UINT32_MAX);
}

/* Called by priority/multifactor whenever a job's priority is set
 * (submission, release, requeue, and by Agora's thread after an award
 * changed).  Job write lock held. */
extern void site_factor_p_set(job_record_t *job_ptr)
{
	if (!in_ctld)
		return;
	slurm_mutex_lock(&award_lock);
	if (pub_ok)
		job_ptr->site_factor = agora_admin_sf(job_ptr,
						      job_site_factor(job_ptr));
	slurm_mutex_unlock(&award_lock);
}

/* Called by priority/multifactor every PriorityCalcPeriod with the job
 * write lock held, before it recomputes priorities: refresh the credit
 * term of pending jobs. */
extern void site_factor_p_update(void)
{
	ListIterator it;
	job_record_t *job_ptr;

	if (!in_ctld || !job_list)
		return;
	slurm_mutex_lock(&award_lock);
	if (pub_ok) {
		it = list_iterator_create(job_list);
		while ((job_ptr = list_next(it)))
			if (IS_JOB_PENDING(job_ptr))
				job_ptr->site_factor = agora_admin_sf(
					job_ptr, job_site_factor(job_ptr));
		list_iterator_destroy(it);
		agora_admin_sf_prune();
	}
	slurm_mutex_unlock(&award_lock);
}

/* True if the job won GPUs at the last auction (job lock held). */
extern bool agora_export_job_won(job_record_t *job_ptr)
{
	const pol_award_job_t *aj;
	bool won = false;

	if (!in_ctld || !job_ptr)
		return false;
	slurm_mutex_lock(&award_lock);
	if (award_current &&
	    (aj = pol_award_find(award_current, job_ptr->job_id)))
		won = (aj->flags & POL_AWARD_WON) != 0;
	slurm_mutex_unlock(&award_lock);
	return won;
}

/* The preemption rule of pol_award.h, for preempt/agora (job lock held). */
extern bool agora_export_preemptable(job_record_t *victim,
				     job_record_t *preemptor)
{
	bool ok = false;

	if (!in_ctld || !victim || !preemptor)
		return false;
	/* only batch, non-het jobs can be requeued and restarted */
	if (!victim->batch_flag || victim->het_job_id || !victim->details ||
	    !victim->details->requeue)
		return false;
	slurm_mutex_lock(&award_lock);
	if (pub_ok && award_current)
		ok = pol_award_preemptable(award_current, victim->job_id,
					   preemptor->job_id);
	slurm_mutex_unlock(&award_lock);
	return ok;
}

/* Victim order (ascending: preempted first). */
extern uint32_t agora_export_victim_rank(job_record_t *job_ptr)
{
	uint32_t r = UINT32_MAX;

	if (!in_ctld || !job_ptr)
		return r;
	slurm_mutex_lock(&award_lock);
	if (award_current)
		r = pol_award_victim_rank(award_current, job_ptr->job_id);
	slurm_mutex_unlock(&award_lock);
	return r;
}

/* Grace of a lease loser: the partition's GraceTime, else agora.conf's. */
extern uint32_t agora_export_grace(job_record_t *job_ptr)
{
	uint32_t g = 0;

	if (job_ptr && job_ptr->part_ptr && job_ptr->part_ptr->grace_time)
		return job_ptr->part_ptr->grace_time;
	slurm_mutex_lock(&award_lock);
	if (pub_ok && pub_conf.grace_s > 0)
		g = (uint32_t) pub_conf.grace_s;
	slurm_mutex_unlock(&award_lock);
	return g;
}
