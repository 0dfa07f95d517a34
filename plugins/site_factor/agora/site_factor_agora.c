/*
 * site_factor/agora - MAST's "priority, then credit" order in Slurm's own
 * priority, and the admission hold of auction-managed jobs.
 *
 * Loaded by priority/multifactor (PrioritySiteFactorPlugin=site_factor/agora),
 * only inside slurmctld.
 *
 * 1. Credit.  sched/agora owns the credit ledger (it charges running jobs
 *    every pass) and saves it to StateSaveLocation/agora_credit.json.  This
 *    plugin reads that file (when it changed) every PriorityCalcPeriod and
 *    sets each pending job's site factor to
 *        NICE_OFFSET + CreditWeight * clamp(credit / quota, -1, 1)
 *    so that `sprio` shows the credit term in its SITE column and the main
 *    scheduler and backfill order jobs by it.  Partition PriorityTier and
 *    the other multifactor terms still come first when their weights are
 *    larger (doc/fairness.md).  The file is the hand-over point the
 *    federation helper will use for a global ledger.
 * 2. Hold.  A job submitted (or requeued) to a partition listed in
 *    AuctionPartitions is held for the auction the moment its priority is
 *    first set: state reason AGORA_HOLD_REASON with Agora's own description.  The
 *    main scheduler and backfill skip such jobs (job_independent()); only
 *    sched/agora's auction releases them, so no job starts out of turn.
 *    Doing this here, at submission, closes the window a periodic thread
 *    would leave open.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <sys/stat.h>

#include "slurm/slurm.h"
#include "slurm/slurm_errno.h"
#include "src/common/log.h"
#include "src/common/read_config.h"
#include "src/common/run_in_daemon.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "agora_conf.h"
#include "agora_hold.h"
#include "pol_credit.h"
#include "site_factor_agora.h"

const char plugin_name[] = "Agora site factor (credit) and auction admission";
const char plugin_type[] = "site_factor/agora";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

static pthread_mutex_t sf_lock = PTHREAD_MUTEX_INITIALIZER;
static agora_conf_t sf_conf;
static bool sf_conf_ok = false;
static pol_credit_t *sf_ledger = NULL;
static struct timespec sf_ledger_mtime;

static void load_conf(bool startup)
{
	char name[] = "agora.conf";
	char *path = get_extra_conf_path(name);
	agora_err_t err = { { 0 } };
	agora_conf_t c;

	agora_conf_defaults(&c);
	if (agora_conf_parse_file(path, &c, &err)) {
		if (errno == ENOENT) {
			agora_conf_free(&sf_conf);
			sf_conf = c;
			sf_conf_ok = true;
		} else {
			error("%s: rejected configuration: %s", plugin_type,
			      err.text);
			error("%s: %s", plugin_type,
			      startup ? "starting with defaults (no auction-managed partitions)"
				      : "keeping the previous configuration");
			if (startup) {
				agora_conf_free(&sf_conf);
				sf_conf = c;
				sf_conf_ok = true;
			}
		}
	} else {
		agora_conf_free(&sf_conf);
		sf_conf = c;
		sf_conf_ok = true;
	}
	xfree(path);
	/* quotas may have changed: rebuild the ledger on next read */
	pol_credit_destroy(&sf_ledger);
	memset(&sf_ledger_mtime, 0, sizeof(sf_ledger_mtime));
}

extern int init(void)
{
	if (!running_in_slurmctld())
		return SLURM_SUCCESS;
	slurm_mutex_lock(&sf_lock);
	agora_conf_defaults(&sf_conf);
	load_conf(true);
	slurm_mutex_unlock(&sf_lock);
	info("%s: loaded (CreditWeight=%u, %zu auction-managed partitions)",
	     plugin_type, sf_conf.credit_weight, sf_conf.n_auction_partitions);
	return SLURM_SUCCESS;
}

extern int fini(void)
{
	slurm_mutex_lock(&sf_lock);
	pol_credit_destroy(&sf_ledger);
	agora_conf_free(&sf_conf);
	sf_conf_ok = false;
	slurm_mutex_unlock(&sf_lock);
	return SLURM_SUCCESS;
}

extern void site_factor_p_reconfig(void)
{
	slurm_mutex_lock(&sf_lock);
	load_conf(false);
	slurm_mutex_unlock(&sf_lock);
}

/* Re-read the ledger file if it changed.  Caller holds sf_lock. */
static void refresh_ledger(void)
{
	char *path = NULL;
	struct stat st;
	agora_err_t err = { { 0 } };
	pol_credit_t *l;

	xstrfmtcat(path, "%s/%s", slurm_conf.state_save_location,
		   AGORA_CREDIT_FILE);
	if (stat(path, &st)) {
		xfree(path);
		return; /* no usage recorded yet: everyone has full quota */
	}
	if (sf_ledger && st.st_mtim.tv_sec == sf_ledger_mtime.tv_sec &&
	    st.st_mtim.tv_nsec == sf_ledger_mtime.tv_nsec) {
		xfree(path);
		return;
	}
	l = pol_credit_from_conf(
		slurm_conf.cluster_name ? slurm_conf.cluster_name : "cluster",
		&sf_conf);
	if (!l) {
		error("%s: cannot create credit ledger: %m", plugin_type);
	} else if (pol_credit_load_file(l, path, &err)) {
		error("%s: cannot read credit state: %s", plugin_type,
		      err.text);
		pol_credit_destroy(&l);
	} else {
		pol_credit_destroy(&sf_ledger);
		sf_ledger = l;
		sf_ledger_mtime = st.st_mtim;
	}
	xfree(path);
}

static uint32_t credit_site_factor(job_record_t *job_ptr, time_t now)
{
	double quota, credit, frac;
	const char *acct = job_ptr->account ? job_ptr->account : "";

	quota = sf_ledger ? pol_credit_quota(sf_ledger, acct)
			  : agora_conf_quota(&sf_conf, acct);
	credit = sf_ledger ? pol_credit_get(sf_ledger, acct, now) : quota;
	frac = quota > 0 ? credit / quota : (credit >= 0 ? 1.0 : -1.0);
	if (!isfinite(frac))
		frac = 0;
	frac = frac > 1 ? 1 : (frac < -1 ? -1 : frac);
	return (uint32_t) ((int64_t) NICE_OFFSET +
			   (int64_t) llround(frac * sf_conf.credit_weight));
}

extern void site_factor_p_set(job_record_t *job_ptr)
{
	if (!sf_conf_ok)
		return;
	slurm_mutex_lock(&sf_lock);
	job_ptr->site_factor = credit_site_factor(job_ptr, time(NULL));
	if (IS_JOB_PENDING(job_ptr) &&
	    agora_job_auction_managed(job_ptr, &sf_conf))
		agora_hold_for_auction(job_ptr, NULL);
	slurm_mutex_unlock(&sf_lock);
}

/* Called by priority/multifactor every PriorityCalcPeriod with the job
 * write lock held, before it recomputes priorities. */
extern void site_factor_p_update(void)
{
	ListIterator it;
	job_record_t *job_ptr;
	time_t now = time(NULL);

	if (!sf_conf_ok || !job_list)
		return;
	slurm_mutex_lock(&sf_lock);
	refresh_ledger();
	it = list_iterator_create(job_list);
	while ((job_ptr = list_next(it))) {
		if (!IS_JOB_PENDING(job_ptr))
			continue;
		job_ptr->site_factor = credit_site_factor(job_ptr, now);
	}
	list_iterator_destroy(it);
	slurm_mutex_unlock(&sf_lock);
}
