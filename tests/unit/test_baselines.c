/* Unit tests of the baselines an administrator would run (pol_backfill.c
 * in Slurm's mode, pol_backfill_fs.c, pol_tiresias.c): one hand-computed
 * trace on which five policies start jobs at different times, the
 * classic fair-share factor against Slurm's formula, Slurm's backfill
 * plan in single passes, and Tiresias' starvation promotion. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pol_baselines.h"
#include "sim.h"

/*
 * One node of 4 GPUs; duration = time limit; tenant 0 = A, B, tenant 1 =
 * C, D, E.
 *
 *   A t=0 2 GPUs 100 s   B t=1 4 GPUs 100 s   C t=2 1 GPU 70 s
 *   D t=3 1 GPU   50 s   E t=4 1 GPU 200 s
 *
 * fifo: B blocks C, D, E until it has run (100-200).
 * backfill easy=1: B's shadow time is 100 (A ends); C (ends 72) and D
 *   (ends 53) fit before it, E (ends 204) would delay B: E at 200.
 * backfill (Slurm, bf_resolution 60): B's reservation covers the node
 *   from rdown(100) = 60; C's window [2, 72] meets it, so C is planned
 *   after it (180) and starts when B ends (200); D's window [3, 53] ends
 *   before 60: D starts at 3.  E as C.
 * backfill-fs: tenant 0 has used the GPUs since t=0, so tenant 1's jobs
 *   rank first (F1 = 1 vs F0 = 2^-2 at t=2): C and D start at once (the
 *   main scheduler), E is first in line at t=4 and takes D's GPU at 53
 *   (F1 = 2^(-(101/207)/0.5) = 0.508 vs F0 = 0.492), so B waits for E
 *   (253).
 * tiresias (thresholds=100, promote=0): B does not fit and is skipped,
 *   C and D start; A reaches 100 GPU-s at 50 and yields its GPUs to E
 *   (queue 0); B runs when E reaches 100 GPU-s at 150.
 */
static const sim_job_t trace[] = {
	{ .id = 1,
	  .tenant = 0,
	  .submit = 0,
	  .duration = 100,
	  .gpus = 2,
	  .time_limit = 100,
	  .dataset = -1 },
	{ .id = 2,
	  .tenant = 0,
	  .submit = 1,
	  .duration = 100,
	  .gpus = 4,
	  .time_limit = 100,
	  .dataset = -1 },
	{ .id = 3,
	  .tenant = 1,
	  .submit = 2,
	  .duration = 70,
	  .gpus = 1,
	  .time_limit = 70,
	  .dataset = -1 },
	{ .id = 4,
	  .tenant = 1,
	  .submit = 3,
	  .duration = 50,
	  .gpus = 1,
	  .time_limit = 50,
	  .dataset = -1 },
	{ .id = 5,
	  .tenant = 1,
	  .submit = 4,
	  .duration = 200,
	  .gpus = 1,
	  .time_limit = 200,
	  .dataset = -1 },
};

static const struct {
	const char *policy, *params;
	int64_t start[5];
} expect[] = {
	{ "fifo", NULL, { 0, 100, 200, 200, 200 } },
	{ "backfill", "easy=1", { 0, 100, 2, 3, 200 } },
	{ "backfill", NULL, { 0, 100, 200, 3, 200 } },
	{ "backfill-fs", NULL, { 0, 253, 2, 3, 53 } },
	{ "tiresias", "thresholds=100,promote=0", { 0, 150, 2, 3, 50 } },
};

static void run_trace(const char *policy, const char *params, sim_result_t *res)
{
	pol_cluster_t *c = pol_cluster_uniform(1, 4, 16);
	agora_err_t err = { { 0 } };
	pol_policy_t *p = pol_policy_create(policy, params, NULL, &err);
	sim_params_t prm;

	if (!p)
		fail_msg("%s: %s", policy, err.text);
	sim_params_default(&prm);
	prm.restart_s = 0;
	prm.ckpt_s = SIM_CKPT_CONTINUOUS;
	prm.limit_kill = SIM_KILL_NONE;
	if (sim_run(c, trace, 5, p, &prm, res, &err))
		fail_msg("%s: %s", policy, err.text);
	pol_policy_destroy(&p);
	pol_cluster_destroy(&c);
}

static void test_five_policies_hand_computed_starts(void **state)
{
	size_t i, k;

	(void) state;
	for (i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
		sim_result_t res;

		run_trace(expect[i].policy, expect[i].params, &res);
		for (k = 0; k < 5; k++)
			if (res.jobs[k].first_start != expect[i].start[k])
				fail_msg(
					"%s %s: job %c started at %lld, expected %lld",
					expect[i].policy,
					expect[i].params ? expect[i].params
							 : "",
					(int) ('A' + k),
					(long long) res.jobs[k].first_start,
					(long long) expect[i].start[k]);
		sim_result_free(&res);
	}
	/* and the five schedules are pairwise different */
	for (i = 0; i < sizeof(expect) / sizeof(expect[0]); i++)
		for (k = i + 1; k < sizeof(expect) / sizeof(expect[0]); k++)
			assert_memory_not_equal(expect[i].start,
						expect[k].start,
						sizeof(expect[i].start));
}

/* Tiresias with thresholds=100: A is preempted at 50 and resumes at 53
 * (D's GPU and the one A left), E at 150 for B and resumes when B ends. */
static void test_tiresias_finishes_and_preemptions(void **state)
{
	sim_result_t res;

	(void) state;
	run_trace("tiresias", "thresholds=100,promote=0", &res);
	assert_int_equal(res.jobs[0].finish, 103); /* 50 + 50 s from 53 */
	assert_int_equal(res.jobs[1].finish, 250);
	assert_int_equal(res.jobs[4].finish, 350); /* 100 s + 100 s */
	assert_int_equal(res.preemptions, 2);
	sim_result_free(&res);
}

/* Slurm's formula: F = 2^(-(U_t / U_root) / (S_t / S_root) / damp) */
static void test_fairshare_factor_by_hand(void **state)
{
	const double eq[3] = { 1, 1, 1 }, sh[3] = { 2, 1, 1 };
	const double u[3] = { 600, 300, 100 }, zero[3] = { 0, 0, 0 };

	(void) state;
	/* no usage at all: every factor is 1 */
	assert_float_equal(pol_backfill_fs_factor(zero, eq, 3, 0, 1), 1.0,
			   1e-12);
	/* equal shares: usage_norm 0.6, shares_norm 1/3 -> 2^-1.8 */
	assert_float_equal(pol_backfill_fs_factor(u, eq, 3, 0, 1),
			   0.287174588749, 1e-9);
	/* 0.3 / (1/3) = 0.9 -> 2^-0.9 = 0.535886731268 */
	assert_float_equal(pol_backfill_fs_factor(u, eq, 3, 1, 1),
			   0.535886731268, 1e-9);
	/* 0.1 / (1/3) = 0.3 -> 2^-0.3 = 0.812252396356 */
	assert_float_equal(pol_backfill_fs_factor(u, eq, 3, 2, 1),
			   0.812252396356, 1e-9);
	/* shares 2:1:1: tenant 0 has shares_norm 0.5: 0.6 / 0.5 = 1.2 ->
	 * 2^-1.2 = 0.435275281648; damp 2 halves the exponent: 2^-0.6 */
	assert_float_equal(pol_backfill_fs_factor(u, sh, 3, 0, 1),
			   0.435275281648, 1e-9);
	assert_float_equal(pol_backfill_fs_factor(u, sh, 3, 0, 2),
			   0.659753955386, 1e-9);
	/* a tenant that used exactly its share gets 0.5 */
	{
		const double half[2] = { 50, 50 };

		assert_float_equal(pol_backfill_fs_factor(half, eq, 2, 1, 1),
				   0.5, 1e-12);
	}
}

/*
 * Usage decays with PriorityDecayHalfLife (1000 s here): tenant 0 ran 4
 * GPUs over [0, 100], tenant 1 4 GPUs over [1050, 1100].  At 1100, with
 * d(t) = (1 - 0.693/1000)^t: U0 = 400 d(100) d(1000) = 186.6 and U1 =
 * 200 d(50) = 193.2, so F0 = 2^-(0.491/0.5) > F1 and tenant 0's job
 * starts first.  Without decay (a half-life of a year) U0 = 400 > U1 =
 * 200 and tenant 1's job starts first.
 */
static void test_fairshare_usage_decays(void **state)
{
	pol_cluster_t *c = pol_cluster_uniform(1, 4, 16);
	pol_job_t run, pend[2];
	pol_alloc_part_t part = { 0, 0x0f };
	pol_snapshot_t snap = { c, NULL, 0, &run, 1, 2 };
	pol_actions_t acts = { 0 };
	const char *params[2] = { "halflife=1000,w_age=0",
				  "halflife=365d,w_age=0" };
	int64_t first[2] = { 10, 11 };
	int k;

	(void) state;
	for (k = 0; k < 2; k++) {
		pol_policy_t *p = pol_policy_create("backfill-fs", params[k],
						    NULL, NULL);
		int i;

		assert_non_null(p);
		memset(&run, 0, sizeof(run));
		run.id = 1;
		run.tenant = 0;
		run.total_gpus = 4;
		run.time_limit = 100;
		run.alloc.parts = &part;
		run.alloc.n_parts = 1;
		c->nodes[0].free = 0;
		/* t=0..100: tenant 0 runs */
		snap.pending = NULL;
		snap.n_pending = 0;
		snap.n_running = 1;
		assert_int_equal(pol_policy_decide(p, &snap, 0, &acts), 0);
		pol_actions_clear(&acts);
		snap.n_running = 0;
		c->nodes[0].free = 0x0f;
		assert_int_equal(pol_policy_decide(p, &snap, 100, &acts), 0);
		pol_actions_clear(&acts);
		/* t=1050..1100: tenant 1 runs 4 GPUs x 50 s */
		run.id = 2;
		run.tenant = 1;
		run.start = 1050;
		snap.n_running = 1;
		c->nodes[0].free = 0;
		assert_int_equal(pol_policy_decide(p, &snap, 1050, &acts), 0);
		pol_actions_clear(&acts);
		snap.n_running = 0;
		c->nodes[0].free = 0x0f;
		/* t=1100: a 4-GPU job of each tenant, tenant 0's older */
		memset(pend, 0, sizeof(pend));
		for (i = 0; i < 2; i++) {
			pend[i].id = 10 + i;
			pend[i].tenant = i;
			pend[i].total_gpus = pend[i].min_gpus =
				pend[i].max_gpus = 4;
			pend[i].submit = 1000 + i;
			pend[i].time_limit = 100;
			pend[i].dataset = -1;
		}
		snap.pending = pend;
		snap.n_pending = 2;
		assert_int_equal(pol_policy_decide(p, &snap, 1100, &acts), 0);
		assert_int_equal(acts.v[0].type, POL_ACT_START);
		if (acts.v[0].job_id != first[k])
			fail_msg("%s: job %lld started first, expected %lld",
				 params[k], (long long) acts.v[0].job_id,
				 (long long) first[k]);
		pol_actions_clear(&acts);
		snap.pending = NULL;
		snap.n_pending = 0;
		pol_policy_destroy(&p);
	}
	pol_actions_free(&acts);
	pol_cluster_destroy(&c);
}

/* a pending job helper: id i, submit i, limit L */
static void pend_job(pol_job_t *j, int64_t id, int gpus, int64_t limit)
{
	memset(j, 0, sizeof(*j));
	j->id = id;
	j->total_gpus = j->min_gpus = j->max_gpus = gpus;
	j->submit = id;
	j->time_limit = limit;
	j->dataset = -1;
	j->requeueable = true;
}

static int count(const pol_actions_t *a, pol_action_type_t t)
{
	int i, n = 0;

	for (i = 0; i < a->n; i++)
		n += a->v[i].type == t;
	return n;
}

/*
 * Slurm's plan in one pass on 2 nodes x 4 GPUs: job 99 holds node 0 until
 * t=100 (limit), node 1 is free; at t=10 the head wants 8 GPUs.
 *  - its will-run time is 100, its reservation both nodes over
 *    [rdown(100), rdown(200)) = [60, 180);
 *  - a 1-GPU job with a 40 s limit (window [10, 50]) starts on node 1;
 *  - one with a 60 s limit (window [10, 70] meets 60) does not;
 *  - with bf_resolution=1 the reservation starts at 100 and the 60 s job
 *    fits before it;
 *  - EASY would start both.
 */
static void test_slurm_plan_whole_node_reservation(void **state)
{
	pol_cluster_t *c = pol_cluster_uniform(2, 4, 16);
	pol_job_t pend[3], run;
	pol_alloc_part_t part = { 0, 0x0f };
	pol_snapshot_t snap = { c, pend, 3, &run, 1, 1 };
	pol_actions_t acts = { 0 };
	const struct {
		const char *params;
		int starts;
		double head_t;
	} cases[] = {
		{ NULL, 1, 100 },
		{ "bf_resolution=1", 2, 100 },
		{ "easy=1", 2, 100 },
	};
	size_t k;

	(void) state;
	pend_job(&pend[0], 0, 8, 100);
	pend_job(&pend[1], 1, 1, 40);
	pend_job(&pend[2], 2, 1, 60);
	memset(&run, 0, sizeof(run));
	run.id = 99;
	run.total_gpus = 4;
	run.start = 0;
	run.time_limit = 100;
	run.alloc.parts = &part;
	run.alloc.n_parts = 1;
	c->nodes[0].free = 0;
	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		pol_policy_t *p = pol_policy_create("backfill", cases[k].params,
						    NULL, NULL);
		int i;

		assert_non_null(p);
		assert_int_equal(pol_policy_decide(p, &snap, 10, &acts), 0);
		if (count(&acts, POL_ACT_START) != cases[k].starts)
			fail_msg("%s: %d starts, expected %d",
				 cases[k].params ? cases[k].params : "default",
				 count(&acts, POL_ACT_START), cases[k].starts);
		for (i = 0; i < acts.n; i++) {
			if (acts.v[i].type == POL_ACT_START)
				assert_true(acts.v[i].job_id != 0);
			if (acts.v[i].type == POL_ACT_HOLD &&
			    acts.v[i].job_id == 0)
				assert_true(acts.v[i].score == cases[k].head_t);
		}
		/* job 1 is always among the started */
		for (i = 0; i < acts.n; i++)
			if (acts.v[i].type == POL_ACT_START &&
			    acts.v[i].job_id == 1)
				break;
		assert_true(i < acts.n);
		pol_actions_clear(&acts);
		pol_policy_destroy(&p);
	}
	pol_actions_free(&acts);
	pol_cluster_destroy(&c);
}

/*
 * Every tested job is protected, not only the head (bf_resolution=1, 2
 * nodes x 4 GPUs, node 0 busy until 100, node 1 until 50 by the limits):
 *  - job 0 (8 GPUs) is planned at 100 on both nodes, [100, 200);
 *  - job 1 (4 GPUs, 100 s) would fit node 1 at 50, but [50, 150] meets
 *    job 0's reservation: it is planned after it, at 200, on node 1;
 *  - job 2 (4 GPUs, 100 s) likewise, at 200, on node 0 (node 1 is taken
 *    by job 1's reservation).
 * EASY plans only the head.
 */
static void test_slurm_plan_reserves_every_tested_job(void **state)
{
	pol_cluster_t *c = pol_cluster_uniform(2, 4, 16);
	pol_job_t pend[3], run[2];
	pol_alloc_part_t part[2] = { { 0, 0x0f }, { 1, 0x0f } };
	pol_snapshot_t snap = { c, pend, 3, run, 2, 1 };
	pol_actions_t acts = { 0 };
	pol_policy_t *p = pol_policy_create("backfill", "bf_resolution=1", NULL,
					    NULL);
	double t[3] = { -1, -1, -1 };
	int i;

	(void) state;
	assert_non_null(p);
	pend_job(&pend[0], 0, 8, 100);
	pend_job(&pend[1], 1, 4, 100);
	pend_job(&pend[2], 2, 4, 100);
	for (i = 0; i < 2; i++) {
		memset(&run[i], 0, sizeof(run[i]));
		run[i].id = 90 + i;
		run[i].total_gpus = 4;
		run[i].time_limit = i ? 50 : 100;
		run[i].alloc.parts = &part[i];
		run[i].alloc.n_parts = 1;
		c->nodes[i].free = 0;
	}
	assert_int_equal(pol_policy_decide(p, &snap, 0, &acts), 0);
	assert_int_equal(count(&acts, POL_ACT_START), 0);
	for (i = 0; i < acts.n; i++)
		if (acts.v[i].type == POL_ACT_HOLD)
			t[acts.v[i].job_id] = acts.v[i].score;
	/* job 0 at 100 (both nodes); job 1 would fit node 1 at 50 but
	 * [50, 150] meets job 0's reservation: after it, at 200; job 2 too,
	 * on the other node */
	assert_true(t[0] == 100);
	assert_true(t[1] == 200);
	assert_true(t[2] == 200);
	pol_actions_free(&acts);
	pol_policy_destroy(&p);
	pol_cluster_destroy(&c);
}

/*
 * Starvation promotion: one node of 4 GPUs; job 1 (4 GPUs) ran 100 s to
 * 400 GPU-s (queue 1 with thresholds=100) and was preempted at t=100 for
 * job 2 (4 GPUs, queue 0, running since).  With promote=2 job 1 is due at
 * 100 + 2 x 100 = 300: the policy asks to be woken then, and at 300 job 1
 * is back in queue 0 where it preempts job 2 (which has reached queue 1).
 * Before 300 it stays pending; with promote=0 it never comes back.
 * (The policy sees job 1 from its start at t=0: its run time is what the
 * policy saw it run.)
 */
static void test_tiresias_promotes_starving_job(void **state)
{
	pol_cluster_t *c = pol_cluster_uniform(1, 4, 16);
	pol_job_t pend, run;
	pol_alloc_part_t part = { 0, 0x0f };
	pol_snapshot_t snap = { c, &pend, 1, &run, 1, 1 };
	pol_actions_t acts = { 0 };
	const char *params[2] = { "thresholds=100,promote=2",
				  "thresholds=100,promote=0" };
	int k;

	(void) state;
	for (k = 0; k < 2; k++) {
		pol_policy_t *p = pol_policy_create("tiresias", params[k], NULL,
						    NULL);
		pol_job_t r1;
		pol_snapshot_t s0 = { c, NULL, 0, &r1, 1, 1 };

		assert_non_null(p);
		/* t=0: job 1 running (seen from its start) */
		pend_job(&r1, 1, 4, 1000);
		r1.alloc.parts = &part;
		r1.alloc.n_parts = 1;
		c->nodes[0].free = 0;
		assert_int_equal(pol_policy_decide(p, &s0, 0, &acts), 0);
		assert_int_equal(count(&acts, POL_ACT_PREEMPT), 0);
		pol_actions_clear(&acts);
		/* t=100: job 1 has 400 GPU-s (queue 1); job 2 arrives and
		 * preempts it */
		r1.attained = 400;
		r1.start = 0;
		pend_job(&pend, 2, 4, 1000);
		pend.submit = 100;
		{
			pol_snapshot_t s1 = { c, &pend, 1, &r1, 1, 1 };

			assert_int_equal(pol_policy_decide(p, &s1, 100, &acts),
					 0);
		}
		assert_int_equal(count(&acts, POL_ACT_PREEMPT), 1);
		assert_int_equal(count(&acts, POL_ACT_START), 1);
		pol_actions_clear(&acts);
		/* now job 2 runs, job 1 waits */
		run = pend;
		run.start = 100;
		run.alloc.parts = &part;
		run.alloc.n_parts = 1;
		pend = r1;
		pend.alloc.parts = NULL;
		pend.alloc.n_parts = 0;
		/* t=200: 100 s of waiting < 2 x 100 s: no change, but a
		 * wake-up for the promotion (job 2 is in the last queue) */
		run.attained = 400;
		assert_int_equal(pol_policy_decide(p, &snap, 200, &acts), 0);
		assert_int_equal(count(&acts, POL_ACT_START), 0);
		assert_int_equal(acts.wakeup, k == 0 ? 300 : 0);
		pol_actions_clear(&acts);
		/* t=300: job 1 has waited 200 s = 2 x 100 s */
		run.attained = 800;
		assert_int_equal(pol_policy_decide(p, &snap, 300, &acts), 0);
		if (k == 0) {
			assert_int_equal(count(&acts, POL_ACT_PREEMPT), 1);
			assert_int_equal(count(&acts, POL_ACT_START), 1);
			for (int i = 0; i < acts.n; i++)
				if (acts.v[i].type == POL_ACT_START)
					assert_int_equal(acts.v[i].job_id, 1);
		} else {
			assert_int_equal(count(&acts, POL_ACT_START), 0);
		}
		pol_actions_clear(&acts);
		pol_policy_destroy(&p);
	}
	pol_actions_free(&acts);
	pol_cluster_destroy(&c);
}

static void test_params_rejected(void **state)
{
	agora_err_t err = { { 0 } };

	(void) state;
	assert_null(
		pol_policy_create("backfill", "bf_resolution=0", NULL, &err));
	assert_non_null(strstr(err.text, "bf_resolution"));
	assert_null(pol_policy_create("backfill", "easy=2", NULL, &err));
	/* beyond what the plan's integers hold: refused, not cast */
	assert_null(pol_policy_create("backfill", "window=1e30", NULL, &err));
	assert_non_null(strstr(err.text, "window"));
	assert_non_null(strstr(err.text, "out of range"));
	assert_null(
		pol_policy_create("backfill", "max_job_test=1e30", NULL, &err));
	assert_null(pol_policy_create("agora-order", "max_job_test=1e12", NULL,
				      &err));
	assert_null(pol_policy_create("backfill-fs", "shares=1:0", NULL, &err));
	assert_non_null(strstr(err.text, "shares"));
	assert_null(pol_policy_create("backfill-fs", "halflife=0", NULL, &err));
	assert_null(pol_policy_create("backfill-fs", "nope=1", NULL, &err));
	assert_non_null(strstr(err.text, "nope: unknown parameter"));
	assert_null(pol_policy_create("tiresias", "promote=-1", NULL, &err));
	assert_null(
		pol_policy_create("tiresias", "thresholds=5:3", NULL, &err));
	assert_non_null(strstr(err.text, "increasing"));
	/* the backfill keys reach backfill-fs, Slurm's names and ours */
	{
		pol_policy_t *p = pol_policy_create(
			"backfill-fs",
			"bf_window=2h,bf_max_job_test=10,window=1h,easy=1,shares=2:1",
			NULL, &err);

		assert_non_null(p);
		pol_policy_destroy(&p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_five_policies_hand_computed_starts),
		cmocka_unit_test(test_tiresias_finishes_and_preemptions),
		cmocka_unit_test(test_fairshare_factor_by_hand),
		cmocka_unit_test(test_fairshare_usage_decays),
		cmocka_unit_test(test_slurm_plan_whole_node_reservation),
		cmocka_unit_test(test_slurm_plan_reserves_every_tested_job),
		cmocka_unit_test(test_tiresias_promotes_starving_job),
		cmocka_unit_test(test_params_rejected),
	};

	return cmocka_run_group_tests_name("baselines", tests, NULL, NULL);
}
