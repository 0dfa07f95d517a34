/* Unit tests of the lower bounds (common/sim/sim_bounds.c): hand-computed
 * 3-job and 2-job cases, and every bound below what real schedules get on
 * a random trace (srtf, the oracle, among them). */
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
#include "sim_bounds.h"

static void near(double got, double want, double tol)
{
	if (fabs(got - want) > tol)
		fail_msg("got %.9g, want %.9g", got, want);
}

/*
 * 4 GPUs.  A (0, 100 s, 4 GPUs: 400 GPU-s), B (0, 50 s, 4: 200), C (10,
 * 10 s, 2: 20).  Fluid SRPT: B from 0; C at 10 (20 < 160 left), done 15;
 * B done 15 + 160/4 = 55; A done 55 + 100 = 155.  JCTs 155, 55, 5: mean
 * 71.67 > mean duration 53.33.  One app: T_id = max(100, 620/4 = 155),
 * and the three cannot all end before 155: rho >= 1.
 */
static void test_bounds_three_jobs(void **state)
{
	static const sim_job_t j[] = {
		{ .submit = 0, .duration = 100, .gpus = 4 },
		{ .submit = 0, .duration = 50, .gpus = 4 },
		{ .submit = 10, .duration = 10, .gpus = 2 },
		{ .submit = 5, .duration = 10, .gpus = 5 }, /* never fits */
	};
	static const int one[] = { 0, 0, 0, 0 };
	sim_bounds_t b;

	(void) state;
	assert_int_equal(sim_bounds(j, 4, 4, one, 1, &b), 0);
	assert_int_equal(b.jobs, 3);
	near(b.mean_srpt_s, 215.0 / 3, 1e-9);
	near(b.mean_dur_s, 160.0 / 3, 1e-9);
	near(b.mean_jct_lb_s, 215.0 / 3, 1e-9);
	near(b.max_rho_app_lb, 1.0, 2e-4);
	assert_int_equal(b.n_apps, 1);
}

/*
 * 2 GPUs.  App 0: X (0, 100 s, 2 GPUs); app 1: Y (50, 10 s, 2 GPUs).  Both
 * apps overlap, N = 2: T_id(0) = max(100, 200 x 2 / 2) = 200, T_id(1) =
 * max(10, 20 x 2 / 2) = 20; deadlines 200 rho and 50 + 20 rho.  EDF runs
 * Y on [50, 60] and X ends at 110: feasible iff 110 <= 200 rho and
 * 60 <= 50 + 20 rho, so the bound is 0.55.
 */
static void test_bounds_two_apps(void **state)
{
	static const sim_job_t j[] = {
		{ .submit = 0, .duration = 100, .gpus = 2, .tenant = 0 },
		{ .submit = 50, .duration = 10, .gpus = 2, .tenant = 1 },
	};
	sim_bounds_t b;

	(void) state;
	assert_int_equal(sim_bounds(j, 2, 2, NULL, 0, &b), 0);
	assert_int_equal(b.n_apps, 2);
	near(b.max_rho_app_lb, 0.55, 2e-4);
	/* SRPT: X alone on [0, 50], Y (20) on [50, 60], X ends 110 */
	near(b.mean_srpt_s, (110.0 + 10.0) / 2, 1e-9);
	near(b.mean_jct_lb_s, 60, 1e-9);
	near(sim_gap_closed(10, 7, 4), 0.5, 1e-12);
	assert_true(isnan(sim_gap_closed(4, 3, 4)));
	assert_int_equal(sim_bounds(j, 2, 0, NULL, 0, &b), -1);
	assert_int_equal(errno, EINVAL);
}

static uint64_t rng = 12345;

static double unit(void)
{
	return (double) (sim_rand(&rng) >> 11) / 9007199254740992.0;
}

/* A random trace: the bounds lie below every policy's result. */
static void test_bounds_below_schedules(void **state)
{
	enum { N = 300 };
	static const int sizes[] = { 1, 1, 1, 2, 4, 8, 16 };
	static const char *const pols[] = { "srtf", "fifo", "backfill-fs",
					    "las", "tiresias" };
	sim_job_t *j = calloc(N, sizeof(*j));
	int *app = calloc(N, sizeof(*app));
	pol_cluster_t *c = pol_cluster_uniform(4, 8, 16);
	double t = 0;
	size_t p;
	int i, mode;

	(void) state;
	assert_non_null(j);
	for (i = 0; i < N; i++) {
		t += -log(1 - unit()) * 300;
		j[i].id = i + 1;
		j[i].submit = (int64_t) t;
		j[i].duration = 60 + (int64_t) (-log(1 - unit()) * 3000);
		j[i].gpus = sizes[sim_rand(&rng) % 7];
		j[i].tenant = (int) (sim_rand(&rng) % 5);
		j[i].dataset = -1;
		app[i] = i / 7; /* bursts of 7 */
	}
	for (mode = 0; mode < 2; mode++) {
		sim_bounds_t b;

		assert_int_equal(sim_bounds(j, N, 32, mode ? app : NULL,
					    mode ? (N + 6) / 7 : 0, &b),
				 0);
		assert_int_equal(b.jobs, N);
		assert_true(b.mean_jct_lb_s > 0);
		assert_true(b.max_rho_app_lb > 0);
		for (p = 0; p < sizeof(pols) / sizeof(pols[0]); p++) {
			pol_policy_t *pol = pol_policy_create(pols[p], NULL,
							      NULL, NULL);
			sim_params_t prm;
			sim_result_t res;
			sim_summary_t s;

			sim_params_default(&prm);
			prm.limit_kill = SIM_KILL_NONE;
			assert_int_equal(
				sim_run(c, j, N, pol, &prm, &res, NULL), 0);
			assert_int_equal(
				sim_summarize_apps(&res, j, N, 5,
						   mode ? app : NULL,
						   mode ? (N + 6) / 7 : 0, &s),
				0);
			assert_int_equal(s.jobs, N);
			if (!(b.mean_jct_lb_s <= s.mean_jct_s + 1e-9))
				fail_msg("%s: mean JCT %g below the bound %g",
					 pols[p], s.mean_jct_s,
					 b.mean_jct_lb_s);
			if (!(b.max_rho_app_lb <= s.max_rho_app + 1e-9))
				fail_msg("%s: max rho %g below the bound %g",
					 pols[p], s.max_rho_app,
					 b.max_rho_app_lb);
			sim_summary_free(&s);
			sim_result_free(&res);
			pol_policy_destroy(&pol);
		}
	}
	pol_cluster_destroy(&c);
	free(j);
	free(app);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bounds_three_jobs),
		cmocka_unit_test(test_bounds_two_apps),
		cmocka_unit_test(test_bounds_below_schedules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
