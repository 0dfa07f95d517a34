/* Unit tests of the livelock guard (sim_engine.c), the per-job preemption
 * budget (pol_job_may_preempt(), pol_ckpt.c) and tiresias' hold of a
 * promoted job until its next checkpoint (pol_tiresias.c); and the app
 * metrics p99_rho_app / max_rho_app_10gpuh (sim_metrics.c). */
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

#include "pol_ckpt.h"
#include "pol_policy.h"
#include "sim.h"

/*
 * Two gangs of 8 GPUs, 4 h each, on one node of 8 GPUs; checkpoints every
 * 1800 s, restarts 120 s.  Tiresias at promote=0.5, its reference's
 * immediate re-demotion (hold=0) and no budget: A runs 450 s, crosses 3600
 * GPU-s, is demoted; B (queue 0) preempts it; B crosses after 450 s while
 * A, having waited 0.5 x 450 s, was promoted: A preempts B; and so on,
 * every run 450 s, none reaching a checkpoint.  Nothing ever completes.
 */
static const sim_job_t pair[] = {
	{ .id = 1,
	  .submit = 0,
	  .duration = 4 * 3600,
	  .gpus = 8,
	  .dataset = -1 },
	{ .id = 2,
	  .submit = 0,
	  .duration = 4 * 3600,
	  .gpus = 8,
	  .dataset = -1 },
};

static int run_pair(const char *params, sim_result_t *res, agora_err_t *err)
{
	pol_cluster_t *c = pol_cluster_uniform(1, 8, 16);
	pol_policy_t *p = pol_policy_create("tiresias", params, NULL, NULL);
	sim_params_t prm;
	int rc;

	assert_non_null(c);
	assert_non_null(p);
	sim_params_default(&prm);
	prm.ckpt_s = 1800;
	prm.restart_s = 120;
	prm.livelock_s = 2 * 86400;
	rc = sim_run(c, pair, 2, p, &prm, res, err);
	pol_policy_destroy(&p);
	pol_cluster_destroy(&c);
	return rc;
}

/* Without the guards the pair livelocks, and the simulator says so. */
static void test_livelock_guard_two_jobs(void **state)
{
	agora_err_t err = { { 0 } };
	sim_result_t res;

	(void) state;
	assert_int_equal(run_pair("promote=0.5,hold=0,budget=0", &res, &err),
			 -1);
	assert_int_equal(errno, EDEADLK);
	assert_non_null(strstr(err.text, "livelock"));
	assert_non_null(strstr(err.text, "tiresias"));
	assert_non_null(strstr(err.text, "0 of 2 jobs done"));
	sim_result_free(&res);
}

/* Each guard alone ends the livelock: both jobs finish, and none is
 * preempted more than the budget allows between two saves. */
static void test_livelock_fixed_by_hold_or_budget(void **state)
{
	static const char *const fixes[] = {
		"promote=0.5,hold=1,budget=0", "promote=0.5,hold=0,budget=1",
		"promote=0.5,hold=0,budget=2",
		"promote=0.5", /* the defaults: hold=1, budget=2 */
	};
	size_t f;

	(void) state;
	for (f = 0; f < sizeof(fixes) / sizeof(fixes[0]); f++) {
		agora_err_t err = { { 0 } };
		sim_result_t res;
		int i;

		if (run_pair(fixes[f], &res, &err))
			fail_msg("%s: %s", fixes[f], err.text);
		for (i = 0; i < 2; i++) {
			assert_true(res.jobs[i].finish > 0);
			/* 4 h of work, 8 GPUs: a few dozen preemptions at
			 * most, not the unbounded churn */
			if (res.jobs[i].preemptions > 20)
				fail_msg("%s: job %d preempted %d times",
					 fixes[f], i, res.jobs[i].preemptions);
		}
		sim_result_free(&res);
	}
}

/* The guard can be turned off, and its auto value scales with the trace. */
static void test_livelock_guard_off_and_auto(void **state)
{
	static const sim_job_t one[] = {
		{ .id = 1,
		  .submit = 0,
		  .duration = 30 * 86400,
		  .gpus = 8,
		  .dataset = -1 },
		{ .id = 2,
		  .submit = 10,
		  .duration = 100,
		  .gpus = 8,
		  .dataset = -1 },
		{ .id = 3,
		  .submit = 15 * 86400,
		  .duration = 100,
		  .gpus = 8,
		  .dataset = -1 },
	};
	pol_cluster_t *c = pol_cluster_uniform(1, 8, 16);
	pol_policy_t *p = pol_policy_create("fifo", NULL, NULL, NULL);
	sim_params_t prm;
	sim_result_t res;
	agora_err_t err = { { 0 } };

	(void) state;
	sim_params_default(&prm);
	prm.limit_kill = SIM_KILL_NONE;
	/* a 30-day job holds the cluster while the other waits: legitimate,
	 * and the auto guard (7 d + 2 x 30 d x 1.4) lets it be */
	if (sim_run(c, one, 3, p, &prm, &res, &err))
		fail_msg("%s", err.text);
	assert_int_equal(res.jobs[1].finish, 30 * 86400 + 100);
	sim_result_free(&res);
	/* a guard shorter than that job fails the run at the next event
	 * (the arrival at day 15) ... */
	prm.livelock_s = 10 * 86400;
	assert_int_equal(sim_run(c, one, 3, p, &prm, &res, &err), -1);
	assert_int_equal(errno, EDEADLK);
	sim_result_free(&res);
	/* ... and off is off */
	prm.livelock_s = -1;
	assert_int_equal(sim_run(c, one, 3, p, &prm, &res, &err), 0);
	sim_result_free(&res);
	pol_policy_destroy(&p);
	pol_cluster_destroy(&c);
}

/* pol_job_may_preempt() with since_save (the baselines' budget), case by
 * case; and the age rule on top of it. */
static void test_budget_rule(void **state)
{
	static const struct {
		bool requeueable;
		int64_t ckpt_s, start, last_ckpt;
		int stale, budget;
		bool want;
	} c[] = {
		{ false, 1800, 100, -1, 0, 2, false }, /* --no-requeue */
		{ true, 1800, 100, -1, 0, 2, true },   /* fresh */
		{ true, 1800, 100, -1, 1, 2, true },   /* one spent */
		{ true, 1800, 100, -1, 2, 2, false },  /* spent, no save yet */
		{ true, 1800, 100, 1900, 2, 2, true }, /* saved in this run */
		{ true, 1800, 100, 50, 5, 2,
		  false }, /* saved in an earlier run */
		/* no checkpoints (or unknown): to the end */
		{ true, POL_CKPT_NEVER, 100, -1, 2, 2, false },
		{ true, POL_CKPT_UNKNOWN, 100, -1, 2, 2, false },
		/* continuous: nothing lost */
		{ true, POL_CKPT_CONTINUOUS, 100, -1, 9, 2, true },
		{ true, 1800, 100, -1, 9, 0, true }, /* no budget */
	};
	pol_preempt_rule_t r = { .since_save = true, .dflt = POL_CKPT_UNKNOWN };
	size_t i;

	(void) state;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		pol_job_t j;

		memset(&j, 0, sizeof(j));
		j.requeueable = c[i].requeueable;
		j.ckpt_s = c[i].ckpt_s;
		j.start = c[i].start;
		j.last_ckpt = c[i].last_ckpt;
		j.stale_preempts = c[i].stale;
		r.budget = c[i].budget;
		r.min_run = -1;
		if (pol_job_may_preempt(&j, &r, 0) != c[i].want)
			fail_msg("case %zu: got %d", i, !c[i].want);
		/* the age rule: a run younger than its interval (or than
		 * min_run without one) is never preempted */
		r.min_run = 60;
		if (pol_job_may_preempt(&j, &r, j.start + 59))
			fail_msg("case %zu: preempted at 59 s", i);
		if (pol_job_may_preempt(&j, &r, j.start + 1800) != c[i].want)
			fail_msg("case %zu: age rule changed the budget", i);
	}
}

/*
 * The budget in a pass: 1 node x 4 GPUs, las; job 1 runs on all 4 GPUs
 * with 10000 GPU-s attained (queue 1), job 2 (4 GPUs, queue 0) waits.
 * las preempts job 1 unless its budget is spent and it has not saved work
 * in this run.
 */
static int las_preempts(int stale, int64_t last_ckpt, const char *params)
{
	pol_cluster_t *c = pol_cluster_uniform(1, 4, 16);
	pol_policy_t *p = pol_policy_create("las", params, NULL, NULL);
	pol_alloc_part_t part = { 0, 0xf };
	pol_job_t run, pend;
	pol_snapshot_t snap;
	pol_actions_t acts = { 0 };
	int i, n = 0;

	assert_non_null(p);
	memset(&run, 0, sizeof(run));
	run.id = 1;
	run.total_gpus = run.min_gpus = run.max_gpus = 4;
	run.requeueable = true;
	run.state = POL_JOB_RUNNING;
	run.start = 1000;
	run.attained = 10000;
	run.ckpt_s = 1800;
	run.last_ckpt = last_ckpt;
	run.stale_preempts = stale;
	run.dataset = -1;
	run.alloc.parts = &part;
	run.alloc.n_parts = 1;
	pend = run;
	pend.id = 2;
	pend.state = POL_JOB_PENDING;
	pend.attained = 0;
	pend.stale_preempts = 0;
	pend.submit = 3000;
	pend.alloc.parts = NULL;
	pend.alloc.n_parts = 0;
	c->nodes[0].free = 0;
	memset(&snap, 0, sizeof(snap));
	snap.cluster = c;
	snap.running = &run;
	snap.n_running = 1;
	snap.pending = &pend;
	snap.n_pending = 1;
	snap.n_tenants = 1;
	assert_int_equal(pol_policy_decide(p, &snap, 3000, &acts), 0);
	for (i = 0; i < acts.n; i++)
		if (acts.v[i].type == POL_ACT_PREEMPT && acts.v[i].job_id == 1)
			n++;
	pol_actions_free(&acts);
	pol_policy_destroy(&p);
	pol_cluster_destroy(&c);
	return n;
}

static void test_budget_in_the_pass(void **state)
{
	(void) state;
	assert_int_equal(las_preempts(0, -1, NULL), 1);
	assert_int_equal(las_preempts(1, -1, NULL), 1);
	/* the default budget is 2: spent, and no save since the start */
	assert_int_equal(las_preempts(2, -1, NULL), 0);
	/* saved work at 2800, after this run began at 1000 */
	assert_int_equal(las_preempts(2, 2800, NULL), 1);
	assert_int_equal(las_preempts(2, -1, "budget=3"), 1);
	assert_int_equal(las_preempts(7, -1, "budget=0"), 1);
	assert_null(pol_policy_create("las", "budget=1.5", NULL, NULL));
	assert_null(pol_policy_create("tiresias", "hold=2", NULL, NULL));
}

/*
 * p99_rho_app and max_rho_app_10gpuh by hand: 4 GPUs, four 1-GPU apps
 * alone on the cluster in turn (N = 1 throughout each app's life).
 * App 0: 1 job of 40000 s (11.1 GPU-h), run at once: rho 1.  App 1:
 * 1 job of 100 s submitted at 0, finished at 300: rho 3.  Apps 2, 3: 100 s
 * jobs run at once: rho 1.  max 3 (a 100-s app), max over apps of >= 10
 * GPU-h 1, p99 (nearest rank of 4) 3; the tenant metric, with all jobs of
 * one tenant: T_sh 40000, T_id 40000.
 */
static void test_app_metrics_by_hand(void **state)
{
	static const sim_job_t j[] = {
		{ .submit = 0, .duration = 40000, .gpus = 1 },
		{ .submit = 0, .duration = 100, .gpus = 1 },
		{ .submit = 1000, .duration = 100, .gpus = 1 },
		{ .submit = 2000, .duration = 100, .gpus = 1 },
	};
	sim_job_out_t o[] = {
		{ .first_start = 0, .finish = 40000, .end = 40000 },
		{ .first_start = 200, .finish = 300, .end = 300 },
		{ .first_start = 1000, .finish = 1100, .end = 1100 },
		{ .first_start = 2000, .finish = 2100, .end = 2100 },
	};
	static const int app[] = { 0, 1, 2, 3 };
	sim_result_t res;
	sim_summary_t s;

	(void) state;
	memset(&res, 0, sizeof(res));
	res.jobs = o;
	res.n = 4;
	res.total_gpus = 4;
	res.t_end = 40000;
	assert_int_equal(sim_summarize_apps(&res, j, 4, 1, app, 4, &s), 0);
	/* app 1 shares [0, 300] with app 0: N = 2, C = 2, T_id 100 */
	assert_true(fabs(s.app_rho[1] - 3) < 1e-12);
	assert_true(fabs(s.max_rho_app - 3) < 1e-12);
	assert_true(fabs(s.p99_rho_app - 3) < 1e-12);
	assert_true(fabs(s.app_gpuh[0] - 40000 / 3600.0) < 1e-12);
	assert_true(fabs(s.max_rho_app_10gpuh - 1) < 1e-12);
	assert_true(fabs(s.max_rho_tenant - 1) < 1e-12);
	sim_summary_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_livelock_guard_two_jobs),
		cmocka_unit_test(test_livelock_fixed_by_hold_or_budget),
		cmocka_unit_test(test_livelock_guard_off_and_auto),
		cmocka_unit_test(test_budget_rule),
		cmocka_unit_test(test_budget_in_the_pass),
		cmocka_unit_test(test_app_metrics_by_hand),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
