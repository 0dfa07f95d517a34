/*
 * agora_thread.c - Agora's pass inside slurmctld (site_factor/agora).
 *
 * Agora decides, Slurm acts (doc/design.md).  Each pass:
 *   1. lock  { READ config, READ job, READ node, READ part, NO fed }
 *   2. snapshot Slurm state into the core's pol_* structs
 *   3. unlock
 *   4. decide: the core's credit order and Themis auction, no lock held;
 *      the decision becomes an award table (pol_award.h)
 *   5. lock  { READ config, WRITE job, WRITE node, READ part, NO fed }
 *   6. publish the table, then re-check each pending job alone: where
 *      its award changed, set_job_prio() recomputes its priority (the
 *      site factor reads the table); notes (SystemComment, node Comment)
 *      are written only when their text changes
 * Slurm's main scheduler and backfill then start jobs in priority order,
 * with every rule they always apply (dependencies, limits, reservations,
 * licenses, features...), and preempt/agora lets winners preempt the
 * jobs whose lease is lost.
 *
 * Whatever makes a decision fail, the pass fails open: an empty award
 * table is published (plain Slurm order plus the credit term), and the
 * cause is logged once, not every pass.
 */
#include "config.h"
#include "agora_compat.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/time.h>
#include <unistd.h>

#include "slurm/slurm.h"
#include "src/common/log.h"
#include "src/common/macros.h"
#include "src/common/parse_time.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/job_scheduler.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"

#include "agora_fed.h"
#include "agora_hold.h"
#include "agora_note.h"
#include "agora_lease.h"
#include "agora_sched.h"
#include "pol_agora.h"

#define LOG_PREFIX "site_factor/agora"

agora_conf_t agora_conf;
pthread_mutex_t agora_state_lock = PTHREAD_MUTEX_INITIALIZER;

static pthread_t agora_tid;
static bool thread_running = false;
static bool stop_requested = false;
static pthread_mutex_t term_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t term_cond;
static pthread_once_t term_cond_once = PTHREAD_ONCE_INIT;

/* The wait between passes runs on CLOCK_MONOTONIC: a wall-clock step
 * (NTP, an admin's date) neither stalls nor races the passes. */
static void term_cond_init(void)
{
	pthread_condattr_t attr;

	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&term_cond, &attr);
	pthread_condattr_destroy(&attr);
}

/* A configuration offered by reconfigure, taken at the next pass
 * (term_lock). */
static agora_conf_t offered;
static bool offer_pending = false;

/* Thread-private state. */
static uint64_t pass_count = 0;
static time_t next_wakeup = 0; /* the policy asked to run again then */
static time_t last_pass = 0;   /* when the previous pass took its snapshot */
static time_t last_save = 0;
static time_t last_types_build = 0;
/* a pass found nodes no node type covers: the next pass rebuilds the
 * types before its snapshot (never during a pass: the snapshot points
 * into the types, which a rebuild frees) */
static bool types_stale = false;
static bool charges_pending = false;
static int last_fail = 0; /* cause of the last failed pass (logged once) */

/* Statistics, logged with every pass (debug) and summarised at exit. */
static uint64_t stat_applied = 0, stat_dropped = 0;

/* 22.05 unloads this plugin holding site_factor's context lock, which
 * set_job_prio() -> site_factor_g_set() takes while the plugin unloads,
 * and fini() joins this thread: a set_job_prio() then would deadlock
 * before slurmctld's last state save.  Asked right before each call, the
 * window is far shorter than slurmctld's way from shutdown_time to
 * priority_g_fini() (RPC drain, state save, the schedulers' stop); the
 * next slurmctld recomputes every priority. */
extern bool agora_may_set_prio(void)
{
	return !slurmctld_config.shutdown_time;
}

static int64_t usec_since(const struct timeval *t0)
{
	struct timeval t1;

	gettimeofday(&t1, NULL);
	return (int64_t) (t1.tv_sec - t0->tv_sec) * 1000000 +
	       (t1.tv_usec - t0->tv_usec);
}

/* A time as Slurm prints it (ISO 8601, local time). */
static char *tstr(time_t t, char *buf)
{
	slurm_make_time_str(&t, buf, 32);
	return buf;
}

extern void agora_conf_offer(agora_conf_t *c)
{
	slurm_mutex_lock(&term_lock);
	if (offer_pending)
		agora_conf_free(&offered);
	offered = *c;
	offer_pending = true;
	slurm_mutex_unlock(&term_lock);
	memset(c, 0, sizeof(*c));
}

/* Take an offered configuration (agora_state_lock and node read lock
 * held: the policy reset reads the node table). */
static void take_offer(void)
{
	bool take;
	agora_conf_t c;

	slurm_mutex_lock(&term_lock);
	take = offer_pending;
	if (take) {
		c = offered;
		offer_pending = false;
	}
	slurm_mutex_unlock(&term_lock);
	if (!take)
		return;
	agora_conf_free(&agora_conf);
	agora_conf = c;
	agora_policy_reset();
	last_types_build = time(NULL);
}

/* Give the policy the snapshot's tenant names if they changed. */
static void sync_tenants(const agora_snapshot_t *snap)
{
	int i;
	bool same = (agora_n_tenant_names == snap->n_tenants);

	for (i = 0; same && i < snap->n_tenants; i++)
		same = !xstrcmp(agora_tenant_names[i], snap->tenants[i]);
	/* an app's account never changes (it is part of its name) */
	if (same)
		return;
	if (pol_agora_policy_set_tenant_names(
		    agora_policy, (const char *const *) snap->tenants,
		    snap->n_tenants) ||
	    pol_agora_policy_set_tenant_accounts(
		    agora_policy, (const char *const *) snap->accounts,
		    snap->n_tenants))
		error("%s: cannot name apps: %m", LOG_PREFIX);
	for (i = 0; i < agora_n_tenant_names; i++)
		xfree(agora_tenant_names[i]);
	xfree(agora_tenant_names);
	agora_tenant_names = xcalloc(MAX(snap->n_tenants, 1), sizeof(char *));
	for (i = 0; i < snap->n_tenants; i++)
		agora_tenant_names[i] = xstrdup(snap->tenants[i]);
	agora_n_tenant_names = snap->n_tenants;
}

/* Charge GPU use outside the auction to the ledger (agora_state_lock
 * held): the credit order covers every GPU a team uses, whichever
 * partition (MAST: one quota per team). */
static void charge_outside_auction(const agora_snapshot_t *snap, time_t now)
{
	pol_credit_t *l = agora_policy ? pol_agora_policy_ledger(agora_policy)
				       : NULL;
	int i;

	for (i = 0; l && i < snap->n_charges; i++)
		if (pol_credit_charge(l, snap->charges[i].account,
				      snap->charges[i].gpu_seconds, now, NULL))
			error("%s: cannot charge %.0f GPU-s to '%s': %m",
			      LOG_PREFIX, snap->charges[i].gpu_seconds,
			      snap->charges[i].account);
	if (snap->n_charges)
		charges_pending = true;
}

/*
 * The award table of this pass: the decision's winners and lease losers,
 * every app's rho and credit, and every ledger account's credit (the
 * credit term covers jobs outside the auction too).  agora_state_lock
 * held.  NULL on failure (errno set).
 */
static pol_award_t *build_award(const agora_snapshot_t *snap,
				const pol_actions_t *acts, time_t now)
{
	pol_award_t *a = pol_award_create();
	pol_credit_t *l = agora_policy ? pol_agora_policy_ledger(agora_policy)
				       : NULL;
	int n = snap->n_tenants, t, rc = 0;
	double *rho = xcalloc(MAX(n, 1), sizeof(double));
	double *credit = xcalloc(MAX(n, 1), sizeof(double));
	double *quota = xcalloc(MAX(n, 1), sizeof(double));
	size_t i;

	if (!a)
		goto out;
	for (t = 0; t < n; t++) {
		/* the ledger is per account (apps of one account share it) */
		const char *acct = snap->accounts[t] ? snap->accounts[t]
						     : snap->tenants[t];

		rho[t] = 1;
		quota[t] = l ? pol_credit_quota(l, acct)
			     : agora_conf_quota(&agora_conf, acct);
		credit[t] = l ? pol_credit_get(l, acct, now) : quota[t];
		if (agora_policy)
			(void) pol_agora_policy_tenant(agora_policy, t, &rho[t],
						       NULL);
	}
	/*
	 * A winner waits at most a lease plus a grace for its GPUs: by then
	 * the next auction decides again.  One that won free GPUs and has
	 * not started within two of Slurm's main scheduling cycles (its
	 * sched_interval, 60 s by default) plus two passes is short of
	 * something the auction does not model (CPUs, memory, features,
	 * licenses): pol_award_build() backs it off (doc/design.md).
	 */
	if (a)
		(void) pol_award_set_start_window(
			a,
			2 * 60 + 2 * (int64_t) MAX(agora_conf.sched_interval_s,
						   1));
	rc = pol_award_build(
		a, &snap->pol, acts,
		agora_policy ? pol_agora_policy_leases(agora_policy) : NULL,
		(const char *const *) snap->tenants, rho, credit, quota, n,
		award_current, now,
		(int64_t) agora_conf.lease_s + agora_conf.grace_s +
			2 * MAX(agora_conf.sched_interval_s, 1));
	/* the pending jobs the pass left out: their note says why */
	for (t = 0; !rc && agora_policy && t < snap->pol.n_pending; t++) {
		const char *why = pol_agora_policy_left_out(
			agora_policy, snap->pol.pending[t].id);

		if (why)
			(void) pol_award_left_out(a, snap->pol.pending[t].id,
						  why);
	}
	for (i = 0; !rc && l && i < pol_credit_count(l); i++) {
		const char *name = pol_credit_account(l, i);

		if (!pol_award_app_find(a, name) &&
		    pol_award_app(a, name, 1.0, pol_credit_get(l, name, now),
				  pol_credit_quota(l, name)) < 0)
			rc = -1;
	}
	if (rc)
		pol_award_destroy(&a);
out:
	xfree(rho);
	xfree(credit);
	xfree(quota);
	return a;
}

/* Replace the auction's note in a job's SystemComment (beside a
 * federation text, common/base/agora_note.h), only when its text changes,
 * and never a comment another component wrote.  Job write lock held.
 * Takes note; returns true if it wrote. */
static bool note_job(job_record_t *job_ptr, char *note)
{
	char *out = NULL;
	int rc = agora_note_update(job_ptr->system_comment, AGORA_NOTE_AUCTION,
				   note, &out);

	xfree(note);
	if (rc != 1)
		return false;
	xfree(job_ptr->system_comment);
	job_ptr->system_comment = out ? xstrdup(out) : NULL;
	free(out);
	return true;
}

/* The SystemComment Agora keeps on a managed job: what was decided, not
 * the numbers behind it (rho, credit: agoractl and sprio show those). */
static char *job_note(const pol_award_t *a, const pol_award_job_t *aj)
{
	const pol_award_app_t *app = pol_award_app_at(a, aj->app);
	char *note = NULL, t1[32];

	if (aj->flags & POL_AWARD_RUNNING) {
		if (aj->flags & POL_AWARD_LOST)
			xstrfmtcat(
				note,
				"%slease lost to a worse-off app: preemptable by auction winners (app %s)",
				AGORA_DESC_PREFIX, app->name);
		else if (aj->lease_end)
			xstrfmtcat(note, "%slease of %d GPUs until %s (app %s)",
				   AGORA_DESC_PREFIX, aj->gpus,
				   tstr(aj->lease_end, t1), app->name);
		return note;
	}
	if (aj->backoff_until) {
		xstrfmtcat(
			note,
			"%swon GPUs %d time(s) but did not start (short of something besides GPUs?): no auction win before %s (app %s)",
			AGORA_DESC_PREFIX, aj->strikes,
			tstr(aj->backoff_until, t1), app->name);
		return note;
	}
	if (aj->left_out) {
		xstrfmtcat(
			note,
			"%sleft out of the auction (%s): ranks by credit, never wins (app %s)",
			AGORA_DESC_PREFIX, aj->left_out, app->name);
		return note;
	}
	/* the decision only, never rho or credit: the comment (and the job
	 * record slurmctld saves) changes when the decision does */
	xstrfmtcat(
		note, "%s%s (app %s)", AGORA_DESC_PREFIX,
		(aj->flags & POL_AWARD_WON)
			? "won GPUs in the auction: ranks first"
			: "no auction win yet: ranks by credit behind winners",
		app->name);
	return note;
}

/*
 * Apply the published table to Slurm's jobs.  Each job is re-checked on
 * its own (the decision is never dropped as a whole): a job that is no
 * longer pending or running as the snapshot saw it is counted as dropped.
 * Job and node write locks held.
 */
static void apply_award(const agora_snapshot_t *snap, const pol_award_t *a,
			int *applied, int *dropped, bool *job_changed)
{
	ListIterator it;
	job_record_t *job_ptr;
	int i;

	*applied = *dropped = 0;
	it = list_iterator_create(job_list);
	while ((job_ptr = list_next(it))) {
		const pol_award_job_t *aj;
		bool want, has;

		if (!IS_JOB_PENDING(job_ptr) && !IS_JOB_RUNNING(job_ptr))
			continue;
		/* An earlier Agora held jobs out of Slurm's schedulers;
		 * nothing is held now. */
		if (IS_JOB_PENDING(job_ptr) && agora_job_held(job_ptr)) {
			agora_release_hold(job_ptr);
			*job_changed = true;
		}
		aj = a ? pol_award_find(a, job_ptr->job_id) : NULL;
		want = IS_JOB_PENDING(job_ptr) && aj &&
		       (aj->flags & POL_AWARD_WON);
		has = job_ptr->site_factor >=
		      NICE_OFFSET + AGORA_AWARD_BOOST / 2;
		/* a started winner loses its boost at once, so that a requeue
		 * does not put it first again */
		if (want != has && job_ptr->priority != 0 &&
		    !job_ptr->direct_set_prio) {
			if (!agora_may_set_prio())
				continue;
			set_job_prio(job_ptr);
			(*applied)++;
		}
		if (aj && note_job(job_ptr, job_note(a, aj)))
			*job_changed = true;
	}
	list_iterator_destroy(it);
	/* heterogeneous jobs: every component must start together, which the
	 * auction does not model; Slurm schedules them as it always does */
	for (i = 0; i < snap->n_het; i++) {
		job_record_t *j = find_job_record(snap->het[i]);

		if (j && IS_JOB_PENDING(j) &&
		    note_job(
			    j,
			    xstrdup(AGORA_DESC_PREFIX
				    "heterogeneous job: scheduled by Slurm, outside the auction")))
			*job_changed = true;
	}
	/* jobs the decision was about that changed state since the snapshot */
	for (i = 0; i < snap->n_pending; i++) {
		job_record_t *j = find_job_record(
			(uint32_t) snap->pending[i].id);

		if (!j || !IS_JOB_PENDING(j))
			(*dropped)++;
	}
}

/*
 * scontrol show node: the Comment of every node of the auction's pool says
 * what Agora decided there ("Agora: auction pool; lease job 12 (8 GPUs)
 * until ..."), never overwriting a comment an admin wrote, and written only
 * when it changes.  Node write lock held.
 */
static void annotate_nodes(const agora_snapshot_t *snap, const pol_award_t *a)
{
	char **text = xcalloc(MAX(snap->cluster.n_nodes, 1), sizeof(char *));
	int i, k;
	bool changed = false;
	char t1[32], id[48];

	for (k = 0; a && k < snap->n_running; k++) {
		const pol_job_t *pj = &snap->running[k];
		const pol_award_job_t *aj = pol_award_find(a, pj->id);

		if (!aj)
			continue;
		for (i = 0; i < pj->alloc.n_parts; i++) {
			int n = pj->alloc.parts[i].node;

			if (n < 0 || n >= snap->cluster.n_nodes)
				continue;
			/* PrivateData=jobs: no job ids on nodes */
			if (slurm_conf.private_data & PRIVATE_DATA_JOBS)
				snprintf(id, sizeof(id), "a job");
			else
				snprintf(id, sizeof(id), "job %" PRId64,
					 pj->id);
			if (aj->flags & POL_AWARD_LOST)
				xstrfmtcat(text[n], "; %s lost its lease", id);
			else if (aj->lease_end)
				xstrfmtcat(
					text[n],
					"; lease %s (%d GPUs) until %s", id,
					pol_popcount(pj->alloc.parts[i].gpus),
					tstr(aj->lease_end, t1));
		}
	}
	for (i = 0; i < snap->cluster.n_nodes; i++) {
		node_record_t *node_ptr =
			node_record_table_ptr[snap->slurm_index[i]];
		char *c = NULL;

		if (!node_ptr) {
			xfree(text[i]);
			continue;
		}
		xstrfmtcat(c, "%sauction pool%s", AGORA_DESC_PREFIX,
			   text[i] ? text[i] : "; no lease");
		if (node_ptr->comment &&
		    strncmp(node_ptr->comment, AGORA_DESC_PREFIX,
			    strlen(AGORA_DESC_PREFIX))) {
			xfree(c); /* an admin's comment stays */
		} else if (xstrcmp(node_ptr->comment, c)) {
			xfree(node_ptr->comment);
			node_ptr->comment = c;
			changed = true;
		} else {
			xfree(c);
		}
		xfree(text[i]);
	}
	xfree(text);
	if (changed)
		last_node_update = time(NULL);
}

/* Jobs the core left out of a pass (invalid requests): logged when the
 * count changes, not every pass. */
static void log_skipped(void)
{
	static int last_skipped = 0;
	pol_agora_stats_t st;
	int n;

	if (pol_agora_policy_stats(agora_policy, &st))
		return;
	n = st.skipped_pending + st.skipped_running;
	if (n != last_skipped && n > 0)
		info("%s: %d pending and %d running jobs left out of the auction (first: JobId=%" PRId64
		     ": %s)",
		     LOG_PREFIX, st.skipped_pending, st.skipped_running,
		     st.first_id, st.first_why ? st.first_why : "?");
	last_skipped = n;
}

/* Log a failed pass once per cause; a recovery once too. */
static void pass_failed(int cause, const char *what)
{
	if (cause != last_fail)
		error("%s: %s (%s); failing open: Slurm schedules in plain priority order until Agora recovers",
		      LOG_PREFIX, what, slurm_strerror(cause));
	last_fail = cause;
}

/*
 * The start of the interval this pass charges outside the auction
 * (pol_credit_charge_since: the previous pass, at most 10 passes or 60 s
 * back, nothing after a step back of the wall clock or on a first pass),
 * logged when capped.  agora_state_lock held.
 */
static time_t charge_since(time_t now)
{
	int64_t gap;
	time_t since = (time_t) pol_credit_charge_since(
		last_pass, now, agora_conf.sched_interval_s, &gap);

	if (gap)
		info("%s: %ld s since the previous pass; charging only the last %ld s outside the auction",
		     LOG_PREFIX, (long) gap, (long) (now - since));
	return since;
}

static void agora_pass(void)
{
	/* Read config, jobs, nodes and partitions: the snapshot */
	slurmctld_lock_t read_locks = { READ_LOCK, READ_LOCK, READ_LOCK,
					READ_LOCK, NO_LOCK };
	/* Read config and partitions; write jobs and nodes: the apply */
	slurmctld_lock_t write_locks = { READ_LOCK, WRITE_LOCK, WRITE_LOCK,
					 READ_LOCK, NO_LOCK };
	agora_snapshot_t snap;
	pol_actions_t acts = { 0 };
	pol_award_t *award = NULL;
	struct timeval t0;
	int64_t snap_wait_us, snap_us, decide_us, apply_wait_us, apply_us;
	int applied = 0, dropped = 0, rc = 0;
	bool job_changed = false, managed;
	time_t now = time(NULL);

	/* the lock's wait (behind a backfill cycle) and its hold are
	 * measured apart: only the hold delays Slurm */
	gettimeofday(&t0, NULL);
	lock_slurmctld(read_locks);
	snap_wait_us = usec_since(&t0);
	gettimeofday(&t0, NULL);
	slurm_mutex_lock(&agora_state_lock);
	agora_conf_strings_copy();
	take_offer();
	if (types_stale) {
		/* a node changed shape: rebuild types and placer before this
		 * pass's snapshot points into them (node read lock held) */
		agora_policy_reset();
		types_stale = false;
		last_types_build = now;
	}
	if (agora_snapshot_build(&snap, &agora_conf, &agora_types, now,
				 charge_since(now)) != SLURM_SUCCESS) {
		slurm_mutex_unlock(&agora_state_lock);
		unlock_slurmctld(read_locks);
		agora_snapshot_free(&snap);
		pass_failed(errno ? errno : EINVAL, "snapshot failed");
		agora_award_publish(NULL);
		return;
	}
	if (snap.n_uncovered && !types_stale && now - last_types_build >= 60) {
		/* this pass skips those nodes; the next rebuilds the types
		 * first (not here: snap.cluster.types is agora_types') */
		info("%s: %d nodes have a GPU count no node type covers; rebuilding node types before the next pass",
		     LOG_PREFIX, snap.n_uncovered);
		types_stale = true;
	}
	unlock_slurmctld(read_locks);
	snap_us = usec_since(&t0);

	/* 4. decide (no slurmctld lock held) */
	gettimeofday(&t0, NULL);
	charge_outside_auction(&snap, now);
	managed = agora_policy && agora_conf.n_auction_partitions;
	if (managed) {
		sync_tenants(&snap);
		rc = pol_agora_policy_decide(agora_policy, &snap.pol, now,
					     &acts);
		if (rc) {
			pass_failed(errno ? errno : EINVAL,
				    "auction decision failed");
			pol_actions_free(&acts);
		} else {
			log_skipped();
		}
	} else if (!agora_policy && agora_conf.n_auction_partitions) {
		rc = -1;
		pass_failed(EINVAL, "no policy could be built");
	}
	award = build_award(&snap, &acts, now);
	if (!award)
		pass_failed(ENOMEM, "cannot build the award table");
	else if (rc == 0 && last_fail) {
		info("%s: auction decisions work again", LOG_PREFIX);
		last_fail = 0;
	}
	decide_us = usec_since(&t0);
	slurm_mutex_unlock(&agora_state_lock);

	/* 5-6. publish, apply job by job */
	gettimeofday(&t0, NULL);
	lock_slurmctld(write_locks);
	apply_wait_us = usec_since(&t0);
	gettimeofday(&t0, NULL);
	/* Only this thread replaces the published table, so award stays
	 * valid until its next pass; award_lock is not held here because
	 * set_job_prio() calls site_factor_p_set(), which takes it. */
	agora_award_publish(award);
	apply_award(&snap, award, &applied, &dropped, &job_changed);
	if (managed)
		annotate_nodes(&snap, award);
	if (job_changed)
		last_job_update = now;
	unlock_slurmctld(write_locks);
	agora_fed_pass(now); /* federation holds: fail open, decisions shown */
	agora_lease_pass(now); /* loans agorad no longer renews go home */
	apply_us = usec_since(&t0);
	stat_applied += applied;
	stat_dropped += dropped;
	if (acts.wakeup > now)
		next_wakeup = acts.wakeup;

	slurm_mutex_lock(&agora_state_lock);
	if (agora_policy && (now - last_save >= 30 || applied ||
			     (charges_pending && now - last_save >= 10))) {
		charges_pending = false;
		agora_ledger_save();
		agora_view_write(&snap, now, pass_count);
		last_save = now;
	} else if (agora_policy && snap.n_running) {
		/* leases change at every auction: keep the view (and so
		 * what a restart restores) current */
		agora_view_write(&snap, now, pass_count);
	}
	slurm_mutex_unlock(&agora_state_lock);

	last_pass = now;
	pass_count++;
	debug("%s: pass %" PRIu64
	      ": %d nodes, %d/%d GPUs free, %d pending (+%d not ready, %d CPU-only) and %d running auction-managed, %d apps, %d actions, %d won (%d backed off, %d beyond the free GPUs), %d priorities changed, %d dropped, snapshot %" PRId64
	      " us (read lock wait %" PRId64 " us), decide %" PRId64
	      " us, apply %" PRId64 " us (write lock wait %" PRId64 " us)",
	      LOG_PREFIX, pass_count, snap.cluster.n_nodes, snap.gpus_free,
	      snap.gpus_total, snap.n_pending, snap.n_not_ready,
	      snap.n_cpu_only, snap.n_running, snap.n_tenants, acts.n,
	      award ? pol_award_n_won(award) : 0,
	      award ? pol_award_n_backed_off(award) : 0,
	      award ? pol_award_n_capped(award) : 0, applied, dropped, snap_us,
	      snap_wait_us, decide_us, apply_us, apply_wait_us);
	pol_actions_free(&acts);
	agora_snapshot_free(&snap);
}

static void *agora_agent(void *arg)
{
	struct timespec ts;
	int interval;

	(void) arg;
	info("%s: Agora's thread started", LOG_PREFIX);
	while (true) {
		slurm_mutex_lock(&agora_state_lock);
		interval = agora_conf.sched_interval_s > 0
				   ? agora_conf.sched_interval_s
				   : 5;
		slurm_mutex_unlock(&agora_state_lock);

		slurm_mutex_lock(&term_lock);
		if (!stop_requested && !offer_pending) {
			/* next_wakeup (a lease or grace end) is wall time;
			 * the wait itself is monotonic */
			time_t wall = time(NULL);
			int delay = interval;

			if (next_wakeup > wall && next_wakeup < wall + interval)
				delay = (int) (next_wakeup - wall);
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_sec += delay;
			pthread_cond_timedwait(&term_cond, &term_lock, &ts);
		}
		if (stop_requested) {
			slurm_mutex_unlock(&term_lock);
			break;
		}
		slurm_mutex_unlock(&term_lock);

		if (slurmctld_config.shutdown_time)
			break;
		if (!job_list || !part_list)
			continue; /* slurmctld still starting */
		agora_pass();
	}
	info("%s: Agora's thread stopped after %" PRIu64 " passes (%" PRIu64
	     " priority changes applied, %" PRIu64 " dropped)",
	     LOG_PREFIX, pass_count, stat_applied, stat_dropped);
	return NULL;
}

extern void agora_thread_start(void)
{
	pthread_once(&term_cond_once, term_cond_init);
	slurm_mutex_lock(&term_lock);
	if (!thread_running) {
		stop_requested = false;
		slurm_thread_create(&agora_tid, agora_agent, NULL);
		thread_running = true;
	}
	slurm_mutex_unlock(&term_lock);
}

extern void agora_thread_stop(void)
{
	slurm_mutex_lock(&term_lock);
	if (!thread_running) {
		slurm_mutex_unlock(&term_lock);
		return;
	}
	stop_requested = true;
	slurm_cond_signal(&term_cond);
	slurm_mutex_unlock(&term_lock);
	pthread_join(agora_tid, NULL);
	slurm_mutex_lock(&term_lock);
	thread_running = false;
	/* a later start (this controller taking over again after a backup
	 * ran) charges from its first pass, never for the time the other
	 * controller already charged */
	last_pass = 0;
	if (offer_pending) {
		agora_conf_free(&offered);
		offer_pending = false;
	}
	slurm_mutex_unlock(&term_lock);
}

extern void agora_thread_wake(void)
{
	pthread_once(&term_cond_once, term_cond_init);
	slurm_mutex_lock(&term_lock);
	slurm_cond_signal(&term_cond);
	slurm_mutex_unlock(&term_lock);
}
