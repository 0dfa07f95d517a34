/* Unit tests of the simulator's limits (sim_engine.c, sim_limits.c): a
 * job killed at its time limit, the duration and --limits parsers, and
 * the limit regimes drawn from run times. */
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

static void test_sim_kill_at_limit(void **state)
{
	/* 1 GPU, fifo.  J1 (1000 s) asks for 600 s; J2 (100 s) for 200 s */
	static const sim_job_t j[] = {
		{ .id = 1,
		  .submit = 0,
		  .duration = 1000,
		  .gpus = 1,
		  .time_limit = 600,
		  .dataset = -1 },
		{ .id = 2,
		  .submit = 0,
		  .duration = 100,
		  .gpus = 1,
		  .time_limit = 200,
		  .dataset = -1 },
	};
	pol_cluster_t *c = pol_cluster_uniform(1, 1, 16);
	pol_policy_t *p = pol_policy_create("fifo", NULL, NULL, NULL);
	sim_params_t prm;
	sim_result_t res;
	sim_summary_t s;

	(void) state;
	sim_params_default(&prm);
	/* fail (default): J1 killed at 600, its 600 GPU-s lost */
	assert_int_equal(prm.limit_kill, SIM_KILL_FAIL);
	assert_int_equal(sim_run(c, j, 2, p, &prm, &res, NULL), 0);
	assert_int_equal(res.jobs[0].finish, -1);
	assert_int_equal(res.jobs[0].end, 600);
	assert_int_equal(res.jobs[0].killed, 1);
	assert_int_equal(res.jobs[1].first_start, 600);
	assert_int_equal(res.jobs[1].finish, 700);
	assert_int_equal(res.kills, 1);
	assert_int_equal(res.failed, 1);
	assert_true(fabs(res.lost_gpu_s - 600) < 1e-9);
	assert_int_equal(sim_summarize(&res, j, 2, 1, &s), 0);
	assert_int_equal(s.jobs, 1); /* a failed job has no JCT */
	assert_int_equal(s.killed_at_limit, 1);
	assert_int_equal(s.failed, 1);
	sim_summary_free(&s);
	sim_result_free(&res);
	/* resubmit: at 600 with limit 1200 and submit 600, behind J2; no
	 * checkpoint yet, so 1000 s again + 120 s restart: 700 -> 1820 */
	prm.limit_kill = SIM_KILL_RESUBMIT;
	assert_int_equal(sim_run(c, j, 2, p, &prm, &res, NULL), 0);
	assert_int_equal(res.jobs[1].finish, 700);
	assert_int_equal(res.jobs[0].finish, 1820);
	assert_int_equal(res.jobs[0].limit, 1200);
	assert_int_equal(res.jobs[0].killed, 1);
	assert_int_equal(res.kills, 1);
	assert_int_equal(res.failed, 0);
	assert_true(fabs(res.lost_gpu_s - 720) < 1e-9);
	assert_int_equal(sim_summarize(&res, j, 2, 1, &s), 0);
	assert_true(fabs(s.mean_jct_s - (1820 + 700) / 2.0) < 1e-9);
	sim_summary_free(&s);
	sim_result_free(&res);
	/* none: limits never kill */
	prm.limit_kill = SIM_KILL_NONE;
	assert_int_equal(sim_run(c, j, 2, p, &prm, &res, NULL), 0);
	assert_int_equal(res.jobs[0].finish, 1000);
	assert_int_equal(res.jobs[1].finish, 1100);
	assert_int_equal(res.kills, 0);
	sim_result_free(&res);
	pol_policy_destroy(&p);
	pol_cluster_destroy(&c);
}

static void test_sim_duration_parse(void **state)
{
	static const struct {
		const char *s;
		int64_t v;
	} ok[] = { { "604800", 604800 }, { "7d", 604800 }, { "1w", 604800 },
		   { "1.5h", 5400 },     { "90s", 90 },    { "2m", 120 },
		   { "0", 0 },           { "90.2", 91 } };
	static const char *const bad[] = { "",    "-1", "1y",   "1dd",
					   "abc", "d",  "1e40", "nan" };
	size_t i;
	int64_t v;

	(void) state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		if (sim_duration_parse(ok[i].s, &v) || v != ok[i].v)
			fail_msg("'%s' -> %lld", ok[i].s, (long long) v);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		if (!sim_duration_parse(bad[i], &v) || errno != EINVAL)
			fail_msg("'%s' accepted", bad[i]);
	}
}

static void test_sim_limits_parse(void **state)
{
	static const struct {
		const char *s;
		sim_limits_kind_t k;
		double a, b;
		int64_t t;
	} ok[] = {
		{ "trace", SIM_LIMITS_TRACE, 0, 0, 0 },
		{ "uniform:1:2", SIM_LIMITS_UNIFORM, 1, 2, 0 },
		{ "uniform:1.5:1.5", SIM_LIMITS_UNIFORM, 1.5, 1.5, 0 },
		{ "lognormal:1.5", SIM_LIMITS_LOGNORMAL, 1.5, 0, 0 },
		{ "constant:604800", SIM_LIMITS_CONSTANT, 0, 0, 604800 },
		{ "constant:7d", SIM_LIMITS_CONSTANT, 0, 0, 604800 },
		{ "constant:1w", SIM_LIMITS_CONSTANT, 0, 0, 604800 },
		{ "partmax", SIM_LIMITS_PARTMAX, 0, 0, 0 },
		{ "partmax:2w", SIM_LIMITS_PARTMAX, 0, 0, 1209600 },
	};
	static const struct {
		const char *s, *why;
	} bad[] = {
		{ "bogus",
		  "--limits: 'bogus': unknown regime (trace, uniform" },
		{ "uniform:2:1", "--limits: 'uniform:2:1': needs 1 <= A <= B" },
		{ "uniform:0.5:2", "needs 1 <= A <= B" },
		{ "uniform:1", "'uniform:1': expected uniform:A:B" },
		{ "uniform:1:x", "expected uniform:A:B" },
		{ "lognormal", "expected lognormal:SIGMA" },
		{ "lognormal:0", "needs 0 < SIGMA <= 10" },
		{ "constant:7x", "'constant:7x': expected constant:T" },
		{ "constant:", "expected constant:T" },
		{ "constant:0", "T must be at least 1 s" },
		{ "partmax:soon", "expected partmax or partmax:T" },
		{ "trace:3", "trace takes no argument" },
	};
	sim_limits_t l;
	agora_err_t err;
	char buf[64];
	size_t i;

	(void) state;
	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		memset(&err, 0, sizeof(err));
		if (sim_limits_parse(ok[i].s, &l, &err) || l.kind != ok[i].k ||
		    l.a != ok[i].a || l.b != ok[i].b || l.t != ok[i].t)
			fail_msg("'%s': %s", ok[i].s, err.text);
		/* the canonical text reads back the same */
		sim_limits_format(&l, buf, sizeof(buf));
		{
			sim_limits_t m;

			assert_int_equal(sim_limits_parse(buf, &m, NULL), 0);
			assert_memory_equal(&l, &m, sizeof(l));
		}
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&err, 0, sizeof(err));
		errno = 0;
		if (!sim_limits_parse(bad[i].s, &l, &err) || errno != EINVAL ||
		    !strstr(err.text, bad[i].why))
			fail_msg("'%s': '%s'", bad[i].s, err.text);
	}
}

static void test_sim_limits_regimes(void **state)
{
	static const sim_job_t j[] = {
		{ .id = 1,
		  .submit = 0,
		  .duration = 100,
		  .gpus = 1,
		  .dataset = -1 },
		{ .id = 2,
		  .submit = 0,
		  .duration = 90000,
		  .gpus = 1,
		  .time_limit = 95000,
		  .dataset = -1 },
	};
	pol_cluster_t *c = pol_cluster_uniform(1, 2, 16);
	pol_policy_t *p = pol_policy_create("fifo", NULL, NULL, NULL);
	agora_err_t err = { { 0 } };
	sim_params_t prm;
	sim_result_t res;
	int i;

	(void) state;
	sim_params_default(&prm);
	/* auto: J2 keeps its trace limit, J1 draws in [100, 200] */
	assert_int_equal(sim_run(c, j, 2, p, &prm, &res, NULL), 0);
	assert_int_equal(res.jobs[1].limit, 95000);
	assert_true(res.jobs[0].limit >= 120 && res.jobs[0].limit <= 240);
	sim_result_free(&res);
	/* uniform replaces the trace's limits: uniform:1:1 = d, to a minute */
	prm.limits = (sim_limits_t){ SIM_LIMITS_UNIFORM, 1, 1, 0 };
	assert_int_equal(sim_run(c, j, 2, p, &prm, &res, NULL), 0);
	assert_int_equal(res.jobs[0].limit, 120);
	assert_int_equal(res.jobs[1].limit, 90000);
	sim_result_free(&res);
	/* constant:1w for everyone */
	prm.limits = (sim_limits_t){ SIM_LIMITS_CONSTANT, 0, 0, 604800 };
	assert_int_equal(sim_run(c, j, 2, p, &prm, &res, NULL), 0);
	for (i = 0; i < 2; i++)
		assert_int_equal(res.jobs[i].limit, 604800);
	sim_result_free(&res);
	/* partmax: the longest duration (90000) rounded up to a day */
	prm.limits = (sim_limits_t){ SIM_LIMITS_PARTMAX, 0, 0, 0 };
	assert_int_equal(sim_run(c, j, 2, p, &prm, &res, NULL), 0);
	for (i = 0; i < 2; i++)
		assert_int_equal(res.jobs[i].limit, 172800);
	sim_result_free(&res);
	/* lognormal: never below the duration, deterministic per seed */
	prm.limits = (sim_limits_t){ SIM_LIMITS_LOGNORMAL, 1.5, 0, 0 };
	assert_int_equal(sim_run(c, j, 2, p, &prm, &res, NULL), 0);
	assert_true(res.jobs[0].limit >= 120);
	assert_true(res.jobs[1].limit >= 90000);
	{
		int64_t l0 = res.jobs[0].limit;

		sim_result_free(&res);
		assert_int_equal(sim_run(c, j, 2, p, &prm, &res, NULL), 0);
		assert_int_equal(res.jobs[0].limit, l0);
	}
	sim_result_free(&res);
	/* trace: J1 has none, an error naming it */
	prm.limits = (sim_limits_t){ SIM_LIMITS_TRACE, 0, 0, 0 };
	errno = 0;
	assert_int_equal(sim_run(c, j, 2, p, &prm, &res, &err), -1);
	assert_int_equal(errno, EINVAL);
	assert_non_null(
		strstr(err.text, "--limits trace: job 1 has no time_limit"));
	/* bad parameters are refused */
	prm.limits = (sim_limits_t){ SIM_LIMITS_UNIFORM, 2, 1, 0 };
	assert_int_equal(sim_run(c, j, 2, p, &prm, &res, &err), -1);
	sim_params_default(&prm);
	prm.ckpt_s = -2;
	assert_int_equal(sim_run(c, j, 2, p, &prm, &res, &err), -1);
	pol_policy_destroy(&p);
	pol_cluster_destroy(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sim_kill_at_limit),
		cmocka_unit_test(test_sim_duration_parse),
		cmocka_unit_test(test_sim_limits_parse),
		cmocka_unit_test(test_sim_limits_regimes),
	};

	return cmocka_run_group_tests_name("sim_limits", tests, NULL, NULL);
}
