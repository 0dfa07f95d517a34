/*
 * agora_thread.c - sched/agora's scheduling thread.
 *
 * Each pass follows the pattern the auctions use (doc/design.md):
 *   1. lock  { READ config, READ job, READ node, READ part, NO fed }
 *   2. snapshot Slurm state into the core's pol_* structs
 *   3. unlock
 *   4. decide: pure core code, no lock held
 *   5. lock  { READ config, WRITE job, WRITE node, READ part, READ fed }
 *      and re-check: if jobs or nodes changed since the snapshot, the
 *      decision is stale and is dropped (the next pass retries)
 *   6. apply, unlock
 * No lock is held while the core decides, and none for longer than one
 * snapshot or one apply.
 */
#include "config.h"

#include <errno.h>
#include <sys/time.h>

#include "slurm/slurm.h"
#include "src/common/log.h"
#include "src/common/macros.h"
#include "src/common/xmalloc.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"

#include "sched_agora.h"

static pthread_t agora_tid;
static bool thread_running = false;
static bool stop_requested = false;
static pthread_mutex_t term_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t term_cond = PTHREAD_COND_INITIALIZER;
static uint64_t pass_count = 0;

static int64_t usec_since(const struct timeval *t0)
{
	struct timeval t1;

	gettimeofday(&t1, NULL);
	return (int64_t) (t1.tv_sec - t0->tv_sec) * 1000000 +
	       (t1.tv_usec - t0->tv_usec);
}

/*
 * Apply a decision.  Called with the write locks of step 5 held and after
 * the re-check.  The policy that produces actions arrives with the auction
 * (doc/design.md, "sched/agora passes"); until then a pass decides nothing
 * and this only reports.
 */
static int apply_actions(const pol_actions_t *acts)
{
	return acts->n;
}

static void agora_pass(void)
{
	/* Read config, jobs, nodes and partitions: the snapshot */
	slurmctld_lock_t read_locks = { READ_LOCK, READ_LOCK, READ_LOCK,
					READ_LOCK, NO_LOCK };
	/* Read config and partitions; write jobs and nodes: the apply */
	slurmctld_lock_t write_locks = { READ_LOCK, WRITE_LOCK, WRITE_LOCK,
					 READ_LOCK, READ_LOCK };
	agora_snapshot_t snap;
	pol_actions_t acts = { 0 };
	struct timeval t0;
	int64_t snap_us, decide_us;
	int applied = 0;

	gettimeofday(&t0, NULL);
	lock_slurmctld(read_locks);
	slurm_mutex_lock(&agora_conf_lock);
	if (agora_snapshot_build(&snap, &agora_conf) != SLURM_SUCCESS) {
		slurm_mutex_unlock(&agora_conf_lock);
		unlock_slurmctld(read_locks);
		error("sched/agora: snapshot failed: %m");
		return;
	}
	slurm_mutex_unlock(&agora_conf_lock);
	unlock_slurmctld(read_locks);
	snap_us = usec_since(&t0);

	/* 4. decide (no lock held) */
	gettimeofday(&t0, NULL);
	decide_us = usec_since(&t0);

	if (acts.n) {
		lock_slurmctld(write_locks);
		if (last_job_update != snap.job_update ||
		    last_node_update != snap.node_update) {
			debug("sched/agora: state changed during pass, dropping %d actions",
			      acts.n);
		} else {
			applied = apply_actions(&acts);
		}
		unlock_slurmctld(write_locks);
	}

	pass_count++;
	debug("sched/agora: pass %" PRIu64 ": %d nodes, %d/%d GPUs free, %d pending (%d auction-managed), %d tenants, snapshot %" PRId64 " us, decide %" PRId64 " us, applied %d",
	      pass_count, snap.cluster.n_nodes, snap.gpus_free,
	      snap.gpus_total, snap.n_pending, snap.n_managed,
	      snap.n_tenants, snap_us, decide_us, applied);
	pol_actions_free(&acts);
	agora_snapshot_free(&snap);
}

static void *agora_agent(void *arg)
{
	struct timespec ts;
	int interval;

	(void) arg;
	info("sched/agora: scheduling thread started");
	while (true) {
		slurm_mutex_lock(&agora_conf_lock);
		interval = agora_conf.sched_interval_s;
		slurm_mutex_unlock(&agora_conf_lock);

		slurm_mutex_lock(&term_lock);
		if (!stop_requested) {
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += interval;
			pthread_cond_timedwait(&term_cond, &term_lock, &ts);
		}
		if (stop_requested) {
			slurm_mutex_unlock(&term_lock);
			break;
		}
		slurm_mutex_unlock(&term_lock);

		if (slurmctld_config.shutdown_time)
			break;
		agora_pass();
	}
	info("sched/agora: scheduling thread stopped after %" PRIu64 " passes",
	     pass_count);
	return NULL;
}

extern void agora_thread_start(void)
{
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
	slurm_mutex_unlock(&term_lock);
}

extern void agora_thread_wake(void)
{
	slurm_mutex_lock(&term_lock);
	slurm_cond_signal(&term_cond);
	slurm_mutex_unlock(&term_lock);
}
