/*
 * agorad_requeue.c - a requeue agorad wants (a reclaim's victim, a grow),
 * carried out as the core says (pol_loan_requeue.h): the job's own
 * --signal first (its batch shell with B:, as Slurm sends it before the
 * time limit; read from the #SBATCH lines of its script, once per run,
 * since Slurm's job information does not carry it), then its grace (min(@N, ReclaimGrace)), then Slurm's
 * requeue; a job at MaxRequeuesPerJob is never requeued.  Rounds are
 * level-triggered: a victim is seen again every LoanInterval, so the
 * requeue comes at the first round after its grace.
 *
 * What this agorad remembers: when it signalled each job's current run
 * (a job and its start time).  A restarted agorad has forgotten it: it
 * signals again and waits a new grace (at most one extra signal per
 * restart).  Only a job that Slurm shows running on its nodes is
 * requeued (pol_requeue_live: doc/loaning.md, "slurmctld kill -9
 * mid-reclaim").  A requeue is repeated while the job is seen running on
 * a victim node (a requeue lost with a slurmctld kill -9 keeps the run's
 * start time).
 */
#include <signal.h>
#include <errno.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm.h>
#include "agora_compat_pub.h"
#include <slurm/slurm_errno.h>

#include "agorad.h"
#include "agorad_loan.h"
#include "pol_loan_requeue.h"

#define RQ_RUNS 1024 /* runs remembered (a ring) */

static struct {
	uint32_t id;
	int64_t start;
	int64_t signaled_at;
	bool limit_said;
	bool not_live_said;
	bool end_sent;
	bool script_read; /* sig, sig_time, batch below are known */
	int sig, sig_time;
	bool batch;
} runs[RQ_RUNS];
static int n_runs = 0;

/* The entry of this run of the job, a new one if add (else -1). */
static int run_find(const ln_rq_job_t *rj, bool add)
{
	int i, n = n_runs < RQ_RUNS ? n_runs : RQ_RUNS;

	for (i = 0; i < n; i++)
		if (runs[i].id == rj->id && runs[i].start == rj->start)
			return i;
	if (!add)
		return -1;
	i = n_runs % RQ_RUNS;
	memset(&runs[i], 0, sizeof(runs[i]));
	runs[i].id = rj->id;
	runs[i].start = rj->start;
	n_runs++;
	return i;
}

static pol_requeue_conf_t rq_conf(const agora_conf_t *conf)
{
	return (pol_requeue_conf_t){ .grace_s = conf->reclaim_grace_s,
				     .stale_s = conf->reclaim_deadline_s,
				     .max_requeues = conf->max_requeues };
}

/* A signal's name as --signal takes it ("USR1"), else its number. */
static const char *sig_name(int sig, char *buf, size_t size)
{
	static const struct {
		int sig;
		const char *name;
	} names[] = { { SIGUSR1, "USR1" }, { SIGUSR2, "USR2" },
		      { SIGTERM, "TERM" }, { SIGINT, "INT" },
		      { SIGHUP, "HUP" },   { SIGQUIT, "QUIT" },
		      { SIGALRM, "ALRM" }, { SIGCONT, "CONT" },
		      { SIGURG, "URG" },   { SIGXCPU, "XCPU" } };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (names[i].sig == sig)
			return names[i].name;
	snprintf(buf, size, "%d", sig);
	return buf;
}

/* The --signal of the run's script, read once (an unreadable script:
 * none, said). */
static void read_signal(int k)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc = -1;

	runs[k].script_read = true;
	if (f) {
		rc = slurm_job_batch_script(f, runs[k].id);
		fclose(f);
	}
	if (rc || !buf) {
		ad_error(
			"loan: job %u: cannot read its batch script for its --signal: %s; requeued without it",
			runs[k].id, slurm_strerror(slurm_get_errno()));
	} else if (pol_requeue_signal_parse(buf, &runs[k].sig,
					    &runs[k].sig_time,
					    &runs[k].batch) &&
		   errno == EINVAL)
		ad_error(
			"loan: job %u: its script's --signal does not parse; requeued without it",
			runs[k].id);
	free(buf);
}

pol_requeue_act_t ln_requeue_step(const agora_conf_t *conf,
				  const ln_rq_job_t *rj, int64_t now,
				  const char *why)
{
	pol_requeue_conf_t c = rq_conf(conf);
	int k = run_find(rj, true);
	pol_requeue_job_t j;
	int64_t at = now;
	char sb[16];
	pol_requeue_act_t act;
	uint16_t flags;

	/* a requeue in progress, an end, or a run whose nodes Slurm already
	 * saw finish (pol_requeue_live): the job frees its nodes by itself;
	 * a requeue now would at best count once more in Restarts=, at worst
	 * leave it pending forever */
	if (!rj->live) {
		/* agorad's requeue of this run was lost with a slurmctld
		 * kill, its node ran the requeue's epilog and the new
		 * slurmctld took the node off the job: nothing ends the run
		 * but its batch-complete message (lost too, or retried 15 s
		 * later) or a registration minutes later.  agorad reports the
		 * end as slurmstepd would (killed by SIGTERM): the job ends
		 * FAILED, not requeued, and the relaunch rule (a lost
		 * requeue) requeues it. */
		if (rj->run_over && ln_requeued_at(rj->id) > 0 &&
		    !runs[k].end_sent) {
			runs[k].end_sent = true;
			if (slurm_complete_job(rj->id, SIGTERM))
				ad_error(
					"loan: job %u runs on no node after agorad's requeue; reporting its end failed: %s",
					rj->id,
					slurm_strerror(slurm_get_errno()));
			else
				ad_info("loan: job %u runs on no node after agorad's requeue (a slurmctld kill lost the requeue, its node ran the epilog): its end reported as its batch-complete would (SIGTERM), for the relaunch rule",
					rj->id);
			return POL_REQUEUE_NONE;
		}
		if (!runs[k].not_live_said) {
			runs[k].not_live_said = true;
			ad_info("loan: job %u not requeued for %s: Slurm shows it completing or on no node (a requeue or its end under way); its nodes come back when it ends",
				rj->id, why);
		}
		return POL_REQUEUE_NONE;
	}
	if (!runs[k].script_read && c.grace_s > 0 && ln_rq_allowed(conf, rj))
		read_signal(k);
	j = (pol_requeue_job_t){ .requeue = rj->requeue,
				 .restarts = rj->restarts,
				 .signal = runs[k].sig,
				 .signal_time_s = runs[k].sig_time,
				 .signaled_at = runs[k].signaled_at };
	act = pol_requeue_next(&j, &c, now, &at);
	flags = runs[k].batch ? KILL_JOB_BATCH : 0;

	switch (act) {
	case POL_REQUEUE_NONE:
		break;
	case POL_REQUEUE_SIGNAL:
		runs[k].signaled_at = now;
		if (slurm_kill_job(rj->id, (uint16_t) j.signal, flags))
			ad_error(
				"loan: signal %s of job %u (its --signal, before its requeue for %s): %s; requeued after its grace all the same",
				sig_name(j.signal, sb, sizeof(sb)), rj->id, why,
				slurm_strerror(slurm_get_errno()));
		else
			ad_info("loan: job %u sent its --signal %s%s for %s; requeued in %lld s (grace: min(@%d, ReclaimGrace=%d s))",
				rj->id, runs[k].batch ? "B:" : "",
				sig_name(j.signal, sb, sizeof(sb)), why,
				(long long) (at - now), j.signal_time_s,
				conf->reclaim_grace_s);
		break;
	case POL_REQUEUE_WAIT:
		ad_debug("loan: job %u in its grace (%s): requeued in %lld s",
			 rj->id, why, (long long) (at - now));
		break;
	case POL_REQUEUE_NOW:
		break;
	}
	return act;
}

int ln_requeue_run(const ln_rq_job_t *rj)
{
	return ln_requeue(rj->id);
}

void ln_rq_from_job(const agora_conf_t *conf, const slurm_job_info_t *j,
		    ln_rq_job_t *rj)
{
	uint32_t st = j->job_state & JOB_STATE_BASE;

	(void) conf;
	*rj = (ln_rq_job_t){
		.id = j->job_id,
		.start = (int64_t) j->start_time,
		.requeue = j->requeue && j->batch_flag,
		.restarts = (int) j->restart_cnt,
		/* node_inx: Slurm's node bitmap of the job, in ranges ended
		 * by -1 (none sent: taken as intact) */
		.live = pol_requeue_live(st == JOB_RUNNING ||
						 st == JOB_SUSPENDED,
					 j->job_state & JOB_COMPLETING,
					 !j->node_inx || j->node_inx[0] >= 0),
		.run_over = pol_requeue_run_over(
			st == JOB_RUNNING, j->job_state & JOB_COMPLETING,
			!j->node_inx || j->node_inx[0] >= 0),
	};
}

bool ln_rq_allowed(const agora_conf_t *conf, const ln_rq_job_t *rj)
{
	bool ok = pol_requeue_allowed(rj->requeue, rj->restarts,
				      conf->max_requeues);
	int k;

	/* said once per run: a job at its limit on an inference node */
	if (!ok && rj->requeue && (k = run_find(rj, true)) >= 0 &&
	    !runs[k].limit_said) {
		runs[k].limit_said = true;
		ad_info("loan: job %u is at its requeue limit (Restarts=%d, MaxRequeuesPerJob=%d): no reclaim takes its nodes until it ends",
			rj->id, rj->restarts, conf->max_requeues);
	}
	return ok;
}

void ln_requeue_fini(void)
{
	n_runs = 0;
}

/* ---- Slurm's requeue -------------------------------------------- */

/* agorad's last requeues (job, time), for ln_requeued_at */
#define LN_REQUEUED 1024
static struct {
	uint32_t id;
	int64_t t;
} requeued[LN_REQUEUED];
static int n_requeued = 0;

int ln_requeue(uint32_t job_id)
{
	if (slurm_requeue(job_id, 0)) {
		int e = slurm_get_errno();

		ad_error("loan: requeue of job %u: %s", job_id,
			 slurm_strerror(e));
		return -1;
	}
	requeued[n_requeued % LN_REQUEUED].id = job_id;
	requeued[n_requeued % LN_REQUEUED].t = (int64_t) time(NULL);
	n_requeued++;
	return 0;
}

int64_t ln_requeued_at(uint32_t job_id)
{
	int64_t t = 0;

	for (int i = 0; i < n_requeued && i < LN_REQUEUED; i++)
		if (requeued[i].id == job_id && requeued[i].t > t)
			t = requeued[i].t;
	return t;
}
