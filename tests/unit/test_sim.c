/* Unit tests of the simulator (sim_engine.c, sim_metrics.c): invariants
 * catch bad policies, the models, the metrics and determinism. */
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

#include "pol_policy.h"
#include "sim.h"

/* ---- deliberately broken policies ---- */

typedef enum bad_kind {
	BAD_DOUBLE_BOOK,  /* start every pending job on node 0 GPU 0 */
	BAD_PARTIAL_GANG, /* start a job on one GPU less than asked */
	BAD_NEVER_START,
	BAD_PREEMPT_PENDING,
} bad_kind_t;

static void *bad_create(const char *params, const struct pol_placer *pl,
			struct agora_err *err)
{
	bad_kind_t *k = malloc(sizeof(*k));

	(void) pl;
	(void) err;
	*k = (bad_kind_t) atoi(params);
	return k;
}

static int bad_decide(void *state, const pol_snapshot_t *snap, int64_t now,
		      pol_actions_t *out)
{
	bad_kind_t k = *(bad_kind_t *) state;
	pol_alloc_part_t part = { 0, 0x1 };
	pol_alloc_t a = { &part, 1 };
	int i;

	(void) now;
	for (i = 0; i < snap->n_pending; i++) {
		const pol_job_t *j = &snap->pending[i];

		switch (k) {
		case BAD_DOUBLE_BOOK:
			part.gpus = ((pol_gpumask_t) 1 << j->total_gpus) - 1;
			pol_actions_add(out, POL_ACT_START, j->id, &a, 0, NULL);
			break;
		case BAD_PARTIAL_GANG:
			part.gpus = ((pol_gpumask_t) 1 << (j->total_gpus - 1)) -
				    1;
			pol_actions_add(out, POL_ACT_START, j->id, &a, 0, NULL);
			break;
		case BAD_PREEMPT_PENDING:
			pol_actions_add(out, POL_ACT_PREEMPT, j->id, NULL, 0,
					NULL);
			break;
		case BAD_NEVER_START:
			break;
		}
	}
	return 0;
}

static void bad_destroy(void *state)
{
	free(state);
}

static const pol_policy_ops_t bad_ops = { "bad", bad_create, bad_decide,
					  bad_destroy };

static const sim_job_t two[] = {
	{ .id = 7, .submit = 0, .duration = 100, .gpus = 2, .dataset = -1 },
	{ .id = 8, .submit = 5, .duration = 100, .gpus = 2, .dataset = -1 },
};

static void test_sim_invariants_reject_bad_policies(void **state)
{
	static const struct {
		const char *kind;
		const char *expect;
	} cases[] = {
		{ "0", "not free" },
		{ "1", "does not start whole" },
		{ "2", "stall" },
		{ "3", "PREEMPT of a job that is not running" },
	};
	pol_cluster_t *c = pol_cluster_uniform(1, 4, 16);
	size_t i;

	(void) state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		agora_err_t err = { { 0 } };
		pol_policy_t *p = pol_policy_create_ops(&bad_ops, cases[i].kind,
							NULL, &err);
		sim_params_t prm;
		sim_result_t res;

		sim_params_default(&prm);
		assert_int_equal(sim_run(c, two, 2, p, &prm, &res, &err), -1);
		assert_int_equal(errno, EPROTO);
		if (!strstr(err.text, cases[i].expect))
			fail_msg("case %s: '%s'", cases[i].kind, err.text);
		assert_non_null(strstr(err.text, "policy bad: t="));
		assert_null(res.jobs); /* nothing returned on error */
		pol_policy_destroy(&p);
	}
	pol_cluster_destroy(&c);
}

static void test_sim_metrics_by_hand(void **state)
{
	/* 1 node x 2 GPUs, fifo: J1 (2 GPUs, 100 s) at 0, J2 (1 GPU, 50 s)
	 * at 0 waits to 100, J3 (1 GPU, 100 s) at 10 runs 100-200 */
	static const sim_job_t j[] = {
		{ .submit = 0,
		  .duration = 100,
		  .gpus = 2,
		  .tenant = 0,
		  .dataset = -1 },
		{ .submit = 0,
		  .duration = 50,
		  .gpus = 1,
		  .tenant = 1,
		  .dataset = -1 },
		{ .submit = 10,
		  .duration = 100,
		  .gpus = 1,
		  .tenant = 1,
		  .dataset = -1 },
	};
	pol_cluster_t *c = pol_cluster_uniform(1, 2, 16);
	pol_policy_t *p = pol_policy_create("fifo", NULL, NULL, NULL);
	sim_params_t prm;
	sim_result_t res;
	sim_summary_t s;
	double v[] = { 5, 1, 4, 2, 3 };

	(void) state;
	sim_params_default(&prm);
	prm.bin_s = 100;
	assert_int_equal(sim_run(c, j, 3, p, &prm, &res, NULL), 0);
	assert_int_equal(res.jobs[1].first_start, 100);
	assert_int_equal(res.jobs[1].finish, 150);
	assert_int_equal(res.jobs[2].finish, 200);
	assert_int_equal(sim_summarize(&res, j, 3, 2, &s), 0);
	/* JCTs 100, 150, 190; queueing 0, 100, 90 */
	assert_true(fabs(s.mean_jct_s - 440.0 / 3) < 1e-9);
	assert_true(s.p50_jct_s == 150 && s.p99_jct_s == 190);
	assert_true(fabs(s.mean_queue_s - 190.0 / 3) < 1e-9);
	assert_true(s.makespan_s == 200);
	/* busy GPU-s: 2x100 + 1x50 + 1x100 = 350 over 2 GPUs x 200 s */
	assert_true(fabs(s.util_makespan - 350.0 / 400) < 1e-9);
	/* arrival window [0, 10]: both GPUs busy */
	assert_true(fabs(s.util_arrival - 1.0) < 1e-9);
	assert_int_equal(res.n_bins, 2);
	assert_true(fabs(res.util[0] - 1.0) < 1e-9);
	assert_true(fabs(res.util[1] - 0.75) < 1e-9);
	/* rho: tenant 0 = 1; tenant 1 = mean(150/50, 190/100) = 2.45 */
	assert_true(fabs(s.tenant_rho[0] - 1.0) < 1e-9);
	assert_true(fabs(s.tenant_rho[1] - 2.45) < 1e-9);
	assert_true(fabs(s.max_rho - 2.45) < 1e-9);
	assert_true(fabs(s.mean_rho - 1.725) < 1e-9);
	/* Jain: (3.45)^2 / (2 x (1 + 6.0025)) */
	assert_true(fabs(s.jain_rho - 3.45 * 3.45 / (2 * 7.0025)) < 1e-9);
	assert_int_equal(s.jobs, 3);
	/* one node, one island: every job at level 0 (NVLINK) */
	assert_true(s.mean_locality_level == 0);
	assert_true(s.mean_locality_level_multi == 0);
	sim_summary_free(&s);
	sim_result_free(&res);
	assert_true(sim_percentile(v, 5, 0.5) == 3);
	assert_true(sim_percentile(v, 5, 0.99) == 5);
	assert_true(sim_percentile(v, 5, 0) == 1);
	pol_policy_destroy(&p);
	pol_cluster_destroy(&c);
}

static void test_sim_locality_level_by_hand(void **state)
{
	/* hand-built result: levels 0 (1 GPU), 3 (4 GPUs), 4 (16 GPUs) and
	 * an unfinished 8-GPU job at 5 (not counted) */
	static const sim_job_t j[] = {
		{ .submit = 0, .duration = 10, .gpus = 1, .dataset = -1 },
		{ .submit = 0, .duration = 10, .gpus = 4, .dataset = -1 },
		{ .submit = 0, .duration = 10, .gpus = 16, .dataset = -1 },
		{ .submit = 0, .duration = 10, .gpus = 8, .dataset = -1 },
	};
	sim_job_out_t o[] = {
		{ .first_start = 0, .finish = 10, .level = 0, .run_s = 10 },
		{ .first_start = 0, .finish = 10, .level = 3, .run_s = 10 },
		{ .first_start = 0, .finish = 10, .level = 4, .run_s = 10 },
		{ .first_start = -1, .finish = -1, .level = 5 },
	};
	sim_result_t res;
	sim_summary_t s;

	(void) state;
	memset(&res, 0, sizeof(res));
	res.jobs = o;
	res.n = 4;
	res.total_gpus = 32;
	res.t_end = 10;
	assert_int_equal(sim_summarize(&res, j, 4, 1, &s), 0);
	assert_true(fabs(s.mean_locality_level - 7.0 / 3) < 1e-9);
	assert_true(fabs(s.mean_locality_level_multi - 3.5) < 1e-9);
	sim_summary_free(&s);
	/* only the 1-GPU job: level 0, no multi-GPU mean */
	assert_int_equal(sim_summarize(&res, j, 1, 1, &s), 0);
	assert_true(s.mean_locality_level == 0);
	assert_true(isnan(s.mean_locality_level_multi));
	sim_summary_free(&s);
}

static void test_sim_models_slowdown_restart_limits(void **state)
{
	/* 4 nodes x 2 GPUs, 2 nodes per leaf.  A 4-GPU job whose ideal is
	 * one leaf (LEAF) placed across leaves (CLUSTER) runs at 1.25/1.40. */
	static const sim_job_t j[] = {
		{ .submit = 0, .duration = 1000, .gpus = 2, .dataset = -1 },
		{ .submit = 0, .duration = 1400, .gpus = 4, .dataset = -1 },
	};
	pol_cluster_t *c = pol_cluster_uniform(4, 2, 2);
	pol_policy_t *p = pol_policy_create("fifo", NULL, NULL, NULL);
	sim_params_t prm;
	sim_result_t res;
	int i;

	(void) state;
	sim_params_default(&prm);
	/* J1 takes node 0: J2 gets whole nodes 2 and 3 (leaf 1): LEAF */
	assert_int_equal(sim_run(c, j, 2, p, &prm, &res, NULL), 0);
	assert_int_equal(res.jobs[1].finish, 1400);
	assert_int_equal(res.jobs[1].level, POL_LVL_LEAF);
	sim_result_free(&res);
	/* node 3 down: J2 spans leaves, 1400 x 1.40 / 1.25 = 1568 s */
	c->nodes[3].up = false;
	assert_int_equal(sim_run(c, j, 2, p, &prm, &res, NULL), 0);
	assert_int_equal(res.jobs[1].level, POL_LVL_CLUSTER);
	assert_int_equal(res.jobs[1].finish, 1568);
	{
		/* mean_locality_level: (0 + 5) / 2 jobs; _multi over the
		 * two jobs of > 1 GPU, same; a 1-GPU-only trace has no
		 * multi-GPU mean (NaN) */
		sim_summary_t s;

		assert_int_equal(sim_summarize(&res, j, 2, 1, &s), 0);
		assert_true(fabs(s.mean_locality_level - 2.5) < 1e-9);
		assert_true(fabs(s.mean_locality_level_multi - 2.5) < 1e-9);
		sim_summary_free(&s);
	}
	/* limits drawn in [d, 2d], rounded up to a minute */
	for (i = 0; i < 2; i++) {
		assert_true(res.jobs[i].limit >= j[i].duration);
		assert_true(res.jobs[i].limit <= 2 * j[i].duration + 60);
		assert_int_equal(res.jobs[i].limit % 60, 0);
	}
	sim_result_free(&res);
	pol_policy_destroy(&p);
	pol_cluster_destroy(&c);
}

static void test_sim_restart_cost_on_preemption(void **state)
{
	/* 1x4, las thresholds=200: J1 (4 GPUs, 1000 s) is preempted at 100
	 * by J2 (4 GPUs, 40 s) and redoes restart_s = 60 s of work. */
	static const sim_job_t j[] = {
		{ .submit = 0, .duration = 1000, .gpus = 4, .dataset = -1 },
		{ .submit = 100, .duration = 40, .gpus = 4, .dataset = -1 },
	};
	pol_cluster_t *c = pol_cluster_uniform(1, 4, 16);
	pol_policy_t *p = pol_policy_create("las", "thresholds=200", NULL,
					    NULL);
	sim_params_t prm;
	sim_result_t res;

	(void) state;
	sim_params_default(&prm);
	assert_int_equal(sim_run(c, j, 2, p, &prm, &res, NULL), 0);
	assert_int_equal(res.jobs[1].first_start, 100);
	assert_int_equal(res.jobs[1].finish, 140);
	assert_int_equal(res.jobs[0].preemptions, 1);
	/* 100 s done, 900 left + 60 restart from 140 */
	assert_int_equal(res.jobs[0].finish, 140 + 960);
	assert_int_equal(res.jobs[0].run_s, 100 + 960);
	/* rework: 60 s on 4 GPUs; the arrival window [0, 100] ends before
	 * the restart at 140, so none of it is inside */
	assert_true(fabs(res.rework_gpu_s - 240) < 1e-9);
	assert_true(res.rework_gpu_s_arrival == 0);
	{
		sim_summary_t s;

		assert_int_equal(sim_summarize(&res, j, 2, 1, &s), 0);
		assert_true(s.util_arrival_net == s.util_arrival);
		sim_summary_free(&s);
	}
	sim_result_free(&res);
	pol_policy_destroy(&p);
	pol_cluster_destroy(&c);
}

static void test_sim_deterministic_and_every_job_ends_once(void **state)
{
	pol_cluster_t *c = pol_cluster_uniform(8, 8, 4);
	sim_job_t *j = calloc(600, sizeof(*j));
	const char *const pols[] = { "fifo", "backfill", "las", "srtf" };
	uint64_t rng = 42;
	int i, k;

	(void) state;
	for (i = 0; i < 600; i++) {
		static const int sz[] = { 1, 1, 1, 1, 2, 4, 8, 16 };

		j[i].submit = i * 30 + (int64_t) (sim_rand(&rng) % 30);
		j[i].duration = 10 + (int64_t) (sim_rand(&rng) % 5000);
		j[i].gpus = sz[sim_rand(&rng) % 8];
		j[i].tenant = (int) (sim_rand(&rng) % 3);
		j[i].dataset = -1;
	}
	j[599].gpus = 1000; /* can never fit: skipped, not stalled */
	for (k = 0; k < 4; k++) {
		pol_policy_t *p = pol_policy_create(pols[k], NULL, NULL, NULL);
		sim_params_t prm;
		sim_result_t a, b;
		agora_err_t err = { { 0 } };

		sim_params_default(&prm);
		if (sim_run(c, j, 600, p, &prm, &a, &err))
			fail_msg("%s: %s", pols[k], err.text);
		assert_int_equal(sim_run(c, j, 600, p, &prm, &b, &err), 0);
		assert_int_equal(a.skipped, 1);
		for (i = 0; i < 599; i++) {
			assert_true(a.jobs[i].finish >=
				    j[i].submit + j[i].duration);
			assert_true(a.jobs[i].first_start >= j[i].submit);
			assert_int_equal(a.jobs[i].finish, b.jobs[i].finish);
		}
		assert_int_equal(a.jobs[599].finish, -1);
		assert_int_equal(a.preemptions, b.preemptions);
		sim_result_free(&a);
		sim_result_free(&b);
		pol_policy_destroy(&p);
	}
	free(j);
	pol_cluster_destroy(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sim_invariants_reject_bad_policies),
		cmocka_unit_test(test_sim_metrics_by_hand),
		cmocka_unit_test(test_sim_locality_level_by_hand),
		cmocka_unit_test(test_sim_models_slowdown_restart_limits),
		cmocka_unit_test(test_sim_restart_cost_on_preemption),
		cmocka_unit_test(
			test_sim_deterministic_and_every_job_ends_once),
	};

	return cmocka_run_group_tests_name("sim", tests, NULL, NULL);
}
