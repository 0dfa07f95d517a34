/*
 * agorad_relaunch.c - training jobs lost to Slurm's crash-window race,
 * requeued.
 *
 * slurmctld saves job state at most every 5 s (SAVE_MAX_WAIT,
 * state_save.c).  A job that started after the last save before a
 * SIGKILL of slurmctld is recovered as pending while its slurmd still
 * runs it.  When that slurmd registers, slurmctld aborts the running copy
 * ("Registered PENDING JobId=... on node", abort_job_on_node), which makes
 * slurmd revoke the job's credential, and the main scheduler starts the
 * pending job again at once.  If the new launch credential is not newer
 * than the revocation (same second, or the abort reaches slurmd after the
 * launch was signed), slurmd refuses it (ESLURMD_CREDENTIAL_REVOKED) and
 * slurmctld ends the job ("Killing non-startable batch JobId=...: Job
 * credential revoked", agent.c): FAILED, exit code 1:0, start = end, no
 * requeue whatever --requeue says.  Slurm's own requeue would have waited
 * out the credential lifetime (batch_requeue_fini sets the begin time to
 * now + cred_expire + 1); this start does not.
 *
 * agorad requeues such jobs.  It notes, at each pass of its loop (every
 * LoanInterval or sooner, at most once a second), the pending and running
 * jobs of the LoanTrainPartitions partitions; after a controller start
 * (its boot time changed) a job is requeued when all of these hold: it
 * was queued or running at agorad's last look before that start, it is
 * requeueable (--requeue, batch), and it FAILED with exit code 1:0 (no
 * signal) and zero run time (end - start <= 1 s), started within
 * POL_RELAUNCH_WINDOW_S seconds after the start; and agorad has not requeued
 * it since that start.  "Running" alone would not do: the race's jobs
 * started in the last seconds before the kill, often after agorad's last
 * look.  A job submitted after the start never passes, nor does one that
 * ran.  The one case it cannot tell apart: a job queued at the crash
 * whose script exits 1 in its first second, within the window: it runs
 * once more (once per controller start).  slurm_requeue() works on a
 * finished batch job that slurmctld still holds (MinJobAge), and its
 * requeue delays the next start past the credential lifetime.  Every such
 * requeue is logged, and so is every other failed training job of the
 * window (left as it is).  The cost: none beyond the loan loop's read of
 * the jobs (agorad_jobs.c, shared with the loan snapshot and the grow,
 * asked with its update time); the table is scanned again only when it
 * changed or the controller's start time did.
 *
 * The same SIGKILL can also lose a requeue agorad itself sent (a
 * reclaim's victim) in the last seconds before it: the job has its
 * SIGTERM, the restarted controller still has it running and ends it
 * FAILED by that signal.  agorad requeues such a job again when it
 * requeued it at most POL_RELAUNCH_LOST_S seconds before the start and it
 * ended FAILED by SIGTERM after it (killed by it, or its shell exited 143).
 *
 * The rule itself is the core's (pol_loan_relaunch.h, unit tested): this
 * file keeps the looks (which jobs were queued before a start) and the
 * requeues.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include <slurm/slurm.h>
#include "agora_compat_pub.h"
#include <slurm/slurm_errno.h>

#include "agorad.h"
#include "agorad_jobs.h"
#include "agorad_loan.h"
#include "agorad_relaunch.h"
#include "pol_loan_relaunch.h"

#define RELAUNCH_SEEN 256

typedef struct {
	uint32_t *id;
	size_t n, cap;
} idset_t;

static slurm_conf_t *ctl = NULL;
static double last_check = -1e18;
/* the job table's update time at the last scan */
static time_t scanned_update = 0;
static time_t cur_boot = 0;
static idset_t known;  /* training jobs queued or running at the last look */
static idset_t before; /* ... at the last look before the current boot */
static struct {
	uint32_t job_id;
	time_t boot;
} seen[RELAUNCH_SEEN];
static int n_seen = 0;

static bool ids_has(const idset_t *s, uint32_t id)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->id[i] == id)
			return true;
	return false;
}

static void ids_add(idset_t *s, uint32_t id)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		uint32_t *n = realloc(s->id, cap * sizeof(*n));

		if (!n)
			return; /* not noted: never requeued (the safe side) */
		s->id = n;
		s->cap = cap;
	}
	s->id[s->n++] = id;
}

static bool was_seen(uint32_t job_id, time_t boot)
{
	for (int i = 0; i < n_seen && i < RELAUNCH_SEEN; i++)
		if (seen[i].job_id == job_id && seen[i].boot == boot)
			return true;
	return false;
}

static void mark_seen(uint32_t job_id, time_t boot)
{
	seen[n_seen % RELAUNCH_SEEN].job_id = job_id;
	seen[n_seen % RELAUNCH_SEEN].boot = boot;
	n_seen++;
}

const slurm_conf_t *ad_ctl_conf(void)
{
	slurm_conf_t *n = NULL;

	if (!slurm_load_ctl_conf(ctl ? ctl->last_update : (time_t) 0, &n)) {
		if (ctl)
			slurm_free_ctl_conf(ctl);
		ctl = n;
	} else if (slurm_get_errno() != SLURM_NO_CHANGE_IN_DATA) {
		return NULL;
	}
	return ctl;
}

/* The core's view of a failed training job (pol_loan_relaunch.h). */
static pol_relaunch_job_t relaunch_job(const slurm_job_info_t *j)
{
	return (pol_relaunch_job_t){
		.requeue = j->requeue && j->batch_flag,
		.queued_before = ids_has(&before, j->job_id),
		.exited = WIFEXITED(j->exit_code),
		.exit_status = WIFEXITED(j->exit_code)
				       ? WEXITSTATUS(j->exit_code)
				       : 0,
		.signaled = WIFSIGNALED(j->exit_code),
		.term_sig = WIFSIGNALED(j->exit_code) ? WTERMSIG(j->exit_code)
						      : 0,
		.start = j->start_time,
		.end = j->end_time,
		.requeued_at = ln_requeued_at(j->job_id),
	};
}

static void relaunch_one(const slurm_job_info_t *j, time_t boot)
{
	pol_relaunch_job_t pj = relaunch_job(j);
	const char *why;
	pol_relaunch_t r;

	mark_seen(j->job_id, boot);
	r = pol_relaunch_decide(&pj, (int64_t) boot, &why);
	if (r == POL_RELAUNCH_NO) {
		ad_info("loan: job %u FAILED %ld s after the slurmctld start (exit %d:%d, ran %ld s): left as it is: %s",
			j->job_id, (long) (j->start_time - boot),
			pj.exit_status, pj.term_sig,
			(long) (j->end_time - j->start_time), why);
		return;
	}
	if (slurm_requeue(j->job_id, 0)) {
		ad_error(
			"loan: job %u failed at launch after the slurmctld start; its requeue failed: %s",
			j->job_id, slurm_strerror(slurm_get_errno()));
		return;
	}
	if (r == POL_RELAUNCH_LOST_REQUEUE)
		ad_info("loan: job %u FAILED by the SIGTERM of agorad's requeue %lld s before the slurmctld start, which lost that requeue: requeued",
			j->job_id,
			(long long) ((int64_t) boot - pj.requeued_at));
	else
		ad_info("loan: job %u failed at launch %ld s after the slurmctld start (queued or running before it, started again inside the credential revocation window: exit 1:0, ran 0 s): requeued",
			j->job_id, (long) (j->start_time - boot));
}

void ad_loan_relaunch(const agora_conf_t *conf, double now)
{
	const slurm_conf_t *cc;
	const job_info_msg_t *jm;
	idset_t now_known = { 0 };
	time_t boot, t = time(NULL);
	bool window, changed, new_boot;

	if (now - last_check < 1.0)
		return;
	last_check = now;
	if (!(cc = ad_ctl_conf()))
		return;
	boot = cc->boot_time;
	new_boot = cur_boot && boot != cur_boot;
	if (new_boot) {
		/* a new controller: what was there at the last look before */
		free(before.id);
		before = known;
		memset(&known, 0, sizeof(known));
	}
	cur_boot = boot;
	/* a failed job stays in slurmctld MinJobAge seconds after its end */
	window = pol_relaunch_window(before.n > 0, (int64_t) t, (int64_t) boot,
				     (int64_t) cc->min_job_age);
	/* the loan loop's table, read with its update time: unchanged, it
	 * holds no job the last look did not see (and no new failure) */
	if (!(jm = ad_jobs_load(ad_jobs_local(), AD_JOBS_PASS_S, NULL))) {
		ad_debug("loan: relaunch check: cannot read the jobs: %s",
			 slurm_strerror(slurm_get_errno()));
		return;
	}
	/* changed since the last scan, whoever loaded it: the loan snapshot
	 * loads the shared table just before this check, so the load's own
	 * "changed" would almost never be ours */
	changed = jm->last_update != scanned_update;
	scanned_update = jm->last_update;
	if (!changed && !new_boot && known.n)
		goto window_end;
	for (uint32_t i = 0; i < jm->record_count; i++) {
		const slurm_job_info_t *j = &jm->job_array[i];
		uint32_t st = j->job_state & JOB_STATE_BASE;

		if (!agora_conf_loan_partition(conf, j->partition, false))
			continue;
		if (st == JOB_RUNNING || st == JOB_PENDING)
			ids_add(&now_known, j->job_id);
		else if (window && st == JOB_FAILED &&
			 !(j->job_state & JOB_COMPLETING) &&
			 (j->start_time >= boot || j->end_time >= boot) &&
			 !was_seen(j->job_id, boot))
			relaunch_one(j, boot);
	}
	free(known.id);
	known = now_known;
window_end:
	if (!window && before.n) {
		free(before.id);
		memset(&before, 0, sizeof(before));
	}
}
