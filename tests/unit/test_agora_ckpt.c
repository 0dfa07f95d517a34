/*
 * Unit tests of preemption under checkpoints: the cost model
 * (common/policy/pol_ckpt.c) and the agora policy's use of it
 * (pol_agora_base.c, pol_agora_pool.c): losers by work lost since their
 * last checkpoint, no preemption twice within one checkpoint interval, the
 * per-job preemption budget, leases that end on a checkpoint.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "pol_agora.h"
#include "pol_ckpt.h"
#include "pol_policy.h"
#include "agora_fixture.h"

#define job(id, tenant, gpus, submit) fx_job(id, tenant, gpus, submit, 100000)
#define run_at                        fx_run_at
#define find                          fx_find

/* How many actions of TYPE A holds. */
static int count(const pol_actions_t *a, pol_action_type_t type)
{
	int i, n = 0;

	for (i = 0; i < a->n; i++)
		n += a->v[i].type == type;
	return n;
}

/* agora's use of the one preemption rule (pol_agora_base.c) */
static bool may(const pol_job_t *j, int budget, int64_t min_run, int64_t t)
{
	const pol_preempt_rule_t r = { .budget = budget,
				       .since_save = false,
				       .dflt = 0,
				       .min_run = min_run };

	return pol_job_may_preempt(j, &r, t);
}

/* The cost model, by hand. */
static void test_ckpt_model(void **state)
{
	pol_job_t j = job(1, 0, 4, 0);

	(void) state;
	j.start = 1000;
	j.ckpt_s = 1800;
	assert_int_equal(pol_ckpt_interval(&j, 600), 1800);
	/* run 2500 s: last checkpoint at 1800 of the run, 700 s lost */
	assert_int_equal(pol_ckpt_lost(&j, 0, 3500), 700);
	assert_true(pol_ckpt_cost(&j, 0, 4, 3500) == 2800.0);
	assert_int_equal(pol_ckpt_lost(&j, 0, 2800), 0);
	assert_int_equal(pol_ckpt_lost(&j, 0, 900), 0);
	/* the next checkpoint at or after t, never the start itself */
	assert_int_equal(pol_ckpt_next(1000, 1800, 3500), 4600);
	assert_int_equal(pol_ckpt_next(1000, 1800, 2800), 2800);
	assert_int_equal(pol_ckpt_next(1000, 1800, 1000), 2800);
	assert_int_equal(pol_ckpt_next(1000, 1800, 0), 2800);
	/* unknown: the caller's assumption; unknown assumption: never */
	j.ckpt_s = POL_CKPT_UNKNOWN;
	assert_int_equal(pol_ckpt_interval(&j, 600), 600);
	assert_int_equal(pol_ckpt_lost(&j, 600, 3500), 100);
	assert_int_equal(pol_ckpt_interval(&j, POL_CKPT_UNKNOWN),
			 POL_CKPT_NEVER);
	assert_int_equal(pol_ckpt_lost(&j, 0, 3500), 2500);
	j.ckpt_s = POL_CKPT_CONTINUOUS;
	assert_int_equal(pol_ckpt_lost(&j, 600, 3500), 0);
	/* the rhythm: on demand -> every; 700 -> 3 x 700; longer intervals,
	 * never, and no rhythm stay */
	assert_int_equal(pol_ckpt_rhythm(POL_CKPT_CONTINUOUS, 1800), 1800);
	assert_int_equal(pol_ckpt_rhythm(700, 1800), 2100);
	assert_int_equal(pol_ckpt_rhythm(600, 1800), 1800);
	assert_int_equal(pol_ckpt_rhythm(2400, 1800), 2400);
	assert_int_equal(pol_ckpt_rhythm(POL_CKPT_NEVER, 1800), POL_CKPT_NEVER);
	assert_int_equal(pol_ckpt_rhythm(700, 0), 700);
	/* agora's rule (pol_job_may_preempt() on all preemptions, with the
	 * age rule): a run one interval old, within the budget */
	j.ckpt_s = 1800;
	assert_false(may(&j, 0, 60, 2799));
	assert_true(may(&j, 0, 60, 2800));
	j.preemptions = 2;
	assert_true(may(&j, 3, 60, 2800));
	assert_false(may(&j, 2, 60, 2800));
	assert_true(may(&j, 0, 60, 2800));
	/* a save in this run does not refill agora's budget */
	j.last_ckpt = 2800;
	assert_false(may(&j, 2, 60, 2800));
	j.requeueable = false;
	assert_false(may(&j, 0, 60, 1e6));
	/* never / continuous: min_run */
	j.requeueable = true;
	j.ckpt_s = POL_CKPT_NEVER;
	assert_false(may(&j, 0, 600, 1599));
	assert_true(may(&j, 0, 600, 1600));
	j.ckpt_s = POL_CKPT_CONTINUOUS;
	assert_false(may(&j, 0, 600, 1599));
	assert_true(may(&j, 0, 600, 1600));
	assert_false(may(&j, 2, 600, 1600));
}

/* Passes of p on s at t[0..n): job 1 is not preempted before the last,
 * and at the last exactly when lose. */
static void preempts_at_last(pol_policy_t *p, const pol_snapshot_t *s,
			     const int64_t *t, int n, bool lose)
{
	pol_actions_t out = { 0 };
	int i;

	for (i = 0; i < n; i++) {
		assert_int_equal(pol_policy_decide(p, s, t[i], &out), 0);
		if (i < n - 1 || !lose)
			assert_null(find(&out, POL_ACT_PREEMPT, 1));
		else
			assert_non_null(find(&out, POL_ACT_PREEMPT, 1));
		pol_actions_clear(&out);
	}
	pol_actions_free(&out);
}

/*
 * The one-node contest of the tests below: job 1 (8 GPUs, tenant 0, run
 * from 0, checkpoint interval ckpt, preempted `preemptions` times) holds
 * the only node of 8 GPUs; job 2 (8 GPUs, tenant 1, submitted at 100)
 * wants it.  Agora with params passes at t[0..n) (preempts_at_last()).
 */
static void one_node_contest(const char *params, int64_t ckpt, int preemptions,
			     const int64_t *t, int n, bool lose)
{
	agora_err_t err = { { 0 } };
	pol_cluster_t *c = pol_cluster_uniform(1, 8, 0);
	pol_policy_t *p = pol_policy_create("agora", params, NULL, &err);
	pol_job_t run[1] = { job(1, 0, 8, 0) };
	pol_job_t pend[1] = { job(2, 1, 8, 100) };
	pol_alloc_part_t part;
	pol_snapshot_t s = { c, pend, 1, run, 1, 2 };

	assert_non_null(p);
	run_at(c, &run[0], &part, 0, 0xff, 0);
	run[0].ckpt_s = ckpt;
	run[0].preemptions = preemptions;
	preempts_at_last(p, &s, t, n, lose);
	pol_policy_destroy(&p);
	pol_cluster_destroy(&c);
}

/*
 * Losers by work lost: two 4-GPU jobs of a 2 x 4 cluster, checkpoint
 * every 1000 s; a 4-GPU winner needs one node at t = 1800.  Job 1 started
 * at 0 (run 1800: 800 s since its checkpoint), job 2 at -500 (run 2300:
 * 300 s).  Job 2 goes (1200 GPU-s lost instead of 3200), although job 1
 * comes first by id and ties on GPUs and credit.
 */
static void test_agora_loser_by_work_lost(void **state)
{
	agora_err_t err = { { 0 } };
	pol_cluster_t *c = pol_cluster_uniform(2, 4, 0);
	pol_policy_t *p = pol_policy_create(
		"agora", "grace=0,lease=600,ckpt_lease=0,max_loss=1,every=0",
		NULL, &err);
	pol_job_t run[2] = { job(1, 0, 4, 0), job(2, 1, 4, -500) };
	pol_job_t pend[1] = { job(3, 2, 4, 100) };
	pol_alloc_part_t part[2];
	pol_snapshot_t s = { c, pend, 1, run, 2, 3 };
	pol_actions_t out = { 0 };

	(void) state;
	assert_non_null(p);
	run_at(c, &run[0], &part[0], 0, 0x0f, 0);
	run_at(c, &run[1], &part[1], 1, 0x0f, -500);
	run[0].ckpt_s = run[1].ckpt_s = 1000;
	/* leases granted now, until the grid end 1800 */
	assert_int_equal(pol_policy_decide(p, &s, 1200, &out), 0);
	assert_int_equal(count(&out, POL_ACT_PREEMPT), 0);
	pol_actions_clear(&out);
	assert_int_equal(pol_policy_decide(p, &s, 1800, &out), 0);
	assert_non_null(find(&out, POL_ACT_PREEMPT, 2));
	assert_null(find(&out, POL_ACT_PREEMPT, 1));
	assert_int_equal(count(&out, POL_ACT_PREEMPT), 1);
	pol_actions_free(&out);
	pol_policy_destroy(&p);
	pol_cluster_destroy(&c);
}

/*
 * Never twice within one interval: job 1 was preempted and restarted at
 * 1000 (checkpoint every 1800 s); a winner (job 2) wants its node.  At the
 * lease ends 1800 and 2400 its run (800, 1400 s) has no checkpoint yet: it
 * keeps its GPUs.  At 3000 (run 2000 s) it may lose them.
 */
static void test_agora_not_twice_per_interval(void **state)
{
	agora_err_t err = { { 0 } };
	pol_cluster_t *c = pol_cluster_uniform(1, 8, 0);
	pol_policy_t *p = pol_policy_create(
		"agora", "grace=0,lease=600,ckpt_lease=0,max_loss=1,budget=0",
		NULL, &err);
	pol_job_t run[1] = { job(1, 0, 8, 0) };
	pol_job_t pend[1] = { job(2, 1, 8, 100) };
	pol_alloc_part_t part;
	pol_snapshot_t s = { c, pend, 1, run, 1, 2 };
	static const int64_t t[] = { 1200, 1800, 2400, 3000 };

	(void) state;
	assert_non_null(p);
	run_at(c, &run[0], &part, 0, 0xff, 1000);
	run[0].ckpt_s = 1800;
	run[0].preemptions = 1;
	preempts_at_last(p, &s, t, 4, true);
	pol_policy_destroy(&p);
	pol_cluster_destroy(&c);
}

/*
 * The rhythm (every): one 8-GPU job (job 1, run from 0) holds the only
 * node; a winner (job 2) wants it.  The passes run at times[] until the
 * first preemption, which must come at the last of them; leases end on
 * the job's checkpoint as the rule sees it (ckpt_lease, the default).  A
 * job that saves on demand (CONTINUOUS) is preempted at its first lease
 * end without the rhythm (600) and at 1800 with every=1800; one that saves
 * every 700 s at its second checkpoint without it (1400: at 600 its run is
 * younger than one interval, so its lease runs to 1400) and at 2100 (3 x
 * 700, the least multiple >= 1800) with it, though 1400 is a checkpoint
 * too; one that saves every 2400 s at 2400 either way.
 */
static void test_agora_rhythm(void **state)
{
	static const struct {
		int64_t ckpt;
		const char *every;
		int64_t times[5];
		int n;
	} cs[] = {
		{ POL_CKPT_CONTINUOUS, "every=0", { 300, 600 }, 2 },
		{ POL_CKPT_CONTINUOUS,
		  "every=1800",
		  { 600, 1200, 1740, 1800 },
		  4 },
		{ 700, "every=0", { 600, 700, 1400 }, 3 },
		{ 700, "every=1800", { 700, 1400, 1800, 2100 }, 4 },
		{ 2400, "every=1800", { 1800, 2100, 2400 }, 3 },
		{ 2400, "every=0", { 1800, 2100, 2400 }, 3 },
	};
	size_t k;

	(void) state;
	for (k = 0; k < sizeof(cs) / sizeof(cs[0]); k++) {
		char params[128];

		snprintf(params, sizeof(params),
			 "grace=0,lease=600,budget=0,%s", cs[k].every);
		one_node_contest(params, cs[k].ckpt, 0, cs[k].times, cs[k].n,
				 true);
	}
}

/*
 * A job that saves nothing (no interval of its own, none assumed: NEVER)
 * is not an auction's loser by default: job 1 (8 GPUs, run from 0, first
 * seen at 100) keeps the node through lease ends at 600, 1200 and 1800
 * however long job 2 waits.  With unsaved=1 it loses at its first lease
 * end (600); with an assumed interval (ckpt=1800, the policy's
 * CheckpointInterval for jobs without one) at its first checkpoint as
 * assumed (1800).
 */
static void test_agora_unsaved_kept(void **state)
{
	static const struct {
		const char *params;
		int64_t times[4];
		int n;
		bool lose;
	} cs[] = {
		{ "grace=0,lease=600", { 100, 600, 1200, 1800 }, 4, false },
		{ "grace=0,lease=600,unsaved=1", { 100, 600 }, 2, true },
		{ "grace=0,lease=600,ckpt=1800",
		  { 100, 600, 1200, 1800 },
		  4,
		  true },
	};
	size_t k;

	(void) state;
	for (k = 0; k < sizeof(cs) / sizeof(cs[0]); k++)
		one_node_contest(cs[k].params, POL_CKPT_UNKNOWN, 0, cs[k].times,
				 cs[k].n, cs[k].lose);
}

/*
 * The budget: the same contest at a lease end with job 1 long past its
 * checkpoint; preempted once (budget 2) it loses, preempted twice it
 * keeps its GPUs, and it loses with any count under budget=0 (none); a
 * run (4800 s) past max_run keeps its GPUs.
 */
static void test_agora_preemption_budget(void **state)
{
	static const struct {
		const char *params;
		int preemptions, lose;
	} cs[] = {
		{ "grace=0,every=0,ckpt_lease=0,max_loss=1,budget=2", 1, 1 },
		{ "grace=0,every=0,ckpt_lease=0,max_loss=1,budget=2", 2, 0 },
		{ "grace=0,every=0,ckpt_lease=0,max_loss=1,budget=0", 9, 1 },
		/* a run of 4800 s is past max_run: kept */
		{ "grace=0,every=0,ckpt_lease=0,max_loss=1,budget=0,max_run=4000",
		  0, 0 },
		{ "grace=0,every=0,ckpt_lease=0,max_loss=1,budget=0,max_run=5000",
		  0, 1 },
	};
	static const int64_t t[] = { 4500, 4800 };
	size_t k;

	(void) state;
	for (k = 0; k < sizeof(cs) / sizeof(cs[0]); k++)
		one_node_contest(cs[k].params, 1000, cs[k].preemptions, t, 2,
				 cs[k].lose);
}

/*
 * A lease is never shorter than the work a loser would lose: a job
 * started at 100 (checkpoint every 1800 s, lease 600, grace 60) gets a
 * lease to 1840, so that its requeue (1900) falls on its first checkpoint
 * and loses nothing; with ckpt_lease=0 the lease ends on the grid (600),
 * and a requeue at 660 would lose 560 s.  A lease renewed at 1840 ends
 * 60 s before the next checkpoint (3640).
 */
static void test_agora_lease_covers_interval(void **state)
{
	static const char *const params[] = {
		"lease=600,grace=60", "lease=600,grace=60,ckpt_lease=0"
	};
	static const int64_t end[] = { 1840, 600 };
	int v;

	(void) state;
	for (v = 0; v < 2; v++) {
		agora_err_t err = { { 0 } };
		pol_cluster_t *c = pol_cluster_uniform(1, 8, 0);
		pol_policy_t *p = pol_policy_create("agora", params[v], NULL,
						    &err);
		pol_job_t pend[1] = { job(1, 0, 8, 100) };
		pol_alloc_part_t part;
		pol_snapshot_t s = { c, pend, 1, NULL, 0, 1 };
		pol_actions_t out = { 0 };
		pol_job_t r;

		assert_non_null(p);
		pend[0].ckpt_s = 1800;
		assert_int_equal(pol_policy_decide(p, &s, 100, &out), 0);
		assert_non_null(find(&out, POL_ACT_START, 1));
		assert_int_equal(out.wakeup, end[v]);
		r = pend[0];
		run_at(c, &r, &part, 0, 0xff, 100);
		assert_int_equal(pol_ckpt_lost(&r, 0, end[v] + 60),
				 v == 0 ? 0 : 560);
		pol_actions_clear(&out);
		if (v == 0) {
			/* renewed (nobody else wants GPUs) */
			s.pending = NULL;
			s.n_pending = 0;
			s.running = &r;
			s.n_running = 1;
			assert_int_equal(pol_policy_decide(p, &s, 1840, &out),
					 0);
			assert_int_equal(count(&out, POL_ACT_PREEMPT), 0);
			assert_int_equal(out.wakeup, 3640);
		}
		pol_actions_free(&out);
		pol_policy_destroy(&p);
		pol_cluster_destroy(&c);
	}
}

/*
 * drain=2: a job of more GPUs than a node has reserves whole nodes in the
 * leftover pass.  2 x 4 GPUs, 2 free on each node (the other 2 end at 1000
 * and 5000); job 1 wants 8 GPUs, job 2 (same app, after it) 1 GPU for
 * 10000 s.  drain=2: job 1 reserves both nodes until 5000, and job 2,
 * which would end after that, waits; drain=1: job 2 starts.
 */
static void test_agora_drain_gang(void **state)
{
	static const char *const params[] = { "est=limit,drain=2",
					      "est=limit,drain=1" };
	int v;

	(void) state;
	for (v = 0; v < 2; v++) {
		agora_err_t err = { { 0 } };
		pol_cluster_t *c = pol_cluster_uniform(2, 4, 0);
		pol_policy_t *p = pol_policy_create("agora", params[v], NULL,
						    &err);
		pol_job_t run[2] = { job(10, 1, 2, 0), job(11, 1, 2, 0) };
		pol_job_t pend[2] = { job(1, 0, 8, 10), job(2, 0, 1, 20) };
		pol_alloc_part_t part[2];
		pol_snapshot_t s = { c, pend, 2, run, 2, 2 };
		pol_actions_t out = { 0 };

		assert_non_null(p);
		run_at(c, &run[0], &part[0], 0, 0x03, 0);
		run_at(c, &run[1], &part[1], 1, 0x03, 0);
		run[0].time_limit = 1000;
		run[1].time_limit = 5000;
		pend[1].time_limit = 10000;
		assert_int_equal(pol_policy_decide(p, &s, 100, &out), 0);
		assert_null(find(&out, POL_ACT_START, 1));
		assert_int_equal(find(&out, POL_ACT_START, 2) != NULL, v == 1);
		pol_actions_free(&out);
		pol_policy_destroy(&p);
		pol_cluster_destroy(&c);
	}
}

/* Bad checkpoint parameters are refused, also seconds beyond int64_t
 * (converted without overflow, then refused). */
static void test_agora_ckpt_bad_params(void **state)
{
	static const char *const bad[] = {
		"budget=-1",      "budget=1.5",   "max_loss=2",
		"ckpt=-3",        "drain=3",      "max_run=-1",
		"max_run=1e30",   "keep_long=-1", "keep_long=1e30",
		"lease=1e300",    "grace=-1e30",  "ckpt=1e19",
		"est_prior=1e30", "options=1e30", "solver=-1e30",
		"every=-1",       "every=1e30"
	};
	size_t k;

	(void) state;
	for (k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		agora_err_t err = { { 0 } };

		assert_null(pol_policy_create("agora", bad[k], NULL, &err));
		assert_int_equal(errno, EINVAL);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ckpt_model),
		cmocka_unit_test(test_agora_loser_by_work_lost),
		cmocka_unit_test(test_agora_not_twice_per_interval),
		cmocka_unit_test(test_agora_rhythm),
		cmocka_unit_test(test_agora_unsaved_kept),
		cmocka_unit_test(test_agora_preemption_budget),
		cmocka_unit_test(test_agora_lease_covers_interval),
		cmocka_unit_test(test_agora_drain_gang),
		cmocka_unit_test(test_agora_ckpt_bad_params),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
