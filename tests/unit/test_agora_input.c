/* Unit tests of the agora and agora-order policies (common/policy/pol_agora.c)
 * on bad and random input: jobs it must skip, mutated snapshots that must
 * never make it fail, bad parameters. */
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

#include "pol_agora.h"
#include "pol_ckpt.h"
#include "pol_policy.h"
#include "agora_fixture.h"

#define job(id, tenant, gpus, submit)   fx_job(id, tenant, gpus, submit, 3600)
#define run_on(c, j, part, mask, start) fx_run_at(c, j, part, 0, mask, start)
#define run_at                          fx_run_at
#define find                            fx_find

/*
 * No single job fails a pass.  One 8-GPU node; pending: a CPU-only job
 * (0 GPUs), a job of an unknown tenant, a gang with min > max, and a
 * valid 1-GPU job; running: a job claiming GPUs that are free in the
 * cluster.  The valid job starts, decide returns 0, and the stats name
 * what was left out.  Both policies.
 */
static void test_agora_skips_bad_jobs(void **state)
{
	int v;

	(void) state;
	for (v = 0; v < 2; v++) {
		agora_err_t err = { { 0 } };
		agora_conf_t conf;
		pol_cluster_t *c = pol_cluster_uniform(1, 8, 0);
		pol_job_t pend[4] = { job(1, 0, 0, 0), job(2, 7, 1, 0),
				      job(3, 1, 2, 0), job(4, 1, 1, 5) };
		pol_job_t run[1] = { job(9, 0, 2, 0) };
		pol_alloc_part_t part = { 0, 0x03 };
		pol_snapshot_t s = { c, pend, 4, run, 1, 2 };
		pol_actions_t out = { 0 };
		pol_agora_stats_t st;
		pol_agora_policy_t *a;

		agora_conf_defaults(&conf);
		a = pol_agora_policy_create_conf(&conf, v == 0, "c1", NULL,
						 &err);
		assert_non_null(a);
		assert_int_equal(pol_agora_policy_stats(a, &st), 0);
		assert_int_equal(st.skipped_pending + st.skipped_running, 0);
		assert_null(st.first_why);
		pend[2].min_gpus = 4; /* > max_gpus 2 */
		/* job 9 says it runs on GPUs 0-1, which are free */
		run[0].alloc.parts = &part;
		run[0].alloc.n_parts = 1;
		run[0].state = POL_JOB_RUNNING;
		assert_int_equal(pol_agora_policy_decide(a, &s, 100, &out), 0);
		assert_non_null(find(&out, POL_ACT_START, 4));
		assert_int_equal(out.n, 1);
		assert_int_equal(pol_agora_policy_stats(a, &st), 0);
		assert_int_equal(st.skipped_pending, 3);
		assert_int_equal(st.skipped_running, 1);
		assert_int_equal(st.first_id, 1);
		assert_string_equal(st.first_why, "no GPUs");
		assert_string_equal(pol_agora_job_check(c, &pend[1], false, 2),
				    "unknown tenant index");
		assert_non_null(strstr(
			pol_agora_job_check(c, &pend[2], false, 2), "elastic"));
		assert_null(pol_agora_job_check(c, &pend[3], false, 2));
		/* each pending job left out, by id, with its reason (the
		 * adapter's note on the job); the one used: none */
		assert_string_equal(pol_agora_policy_left_out(a, 1), "no GPUs");
		assert_string_equal(pol_agora_policy_left_out(a, 2),
				    "unknown tenant index");
		assert_non_null(
			strstr(pol_agora_policy_left_out(a, 3), "elastic"));
		assert_null(pol_agora_policy_left_out(a, 4));
		assert_null(pol_agora_policy_left_out(a, 9)); /* running */
		assert_null(pol_agora_policy_left_out(a, 77));
		/* nothing charged for the skipped running job */
		assert_int_equal(pol_agora_policy_decide(a, &s, 200, &out), 0);
		assert_true(pol_credit_usage(pol_agora_policy_ledger(a), "t0",
					     200) == 0);
		/* a clean pass resets the counts */
		s.n_pending = 0;
		s.n_running = 0;
		assert_int_equal(pol_agora_policy_decide(a, &s, 300, &out), 0);
		assert_int_equal(pol_agora_policy_stats(a, &st), 0);
		assert_int_equal(st.skipped_pending + st.skipped_running, 0);
		assert_null(pol_agora_policy_left_out(a, 1));
		/* only a broken snapshot as a whole fails */
		s.cluster = NULL;
		assert_int_equal(pol_agora_policy_decide(a, &s, 400, &out), -1);
		assert_int_equal(errno, EINVAL);
		s.cluster = c;
		s.n_pending = 1;
		s.pending = NULL;
		assert_int_equal(pol_agora_policy_decide(a, &s, 400, &out), -1);
		assert_int_equal(pol_agora_policy_decide(NULL, &s, 400, &out),
				 -1);
		pol_actions_free(&out);
		pol_agora_policy_destroy(&a);
		agora_conf_free(&conf);
		pol_cluster_destroy(&c);
	}
}

/* A small deterministic generator (xorshift64*) for the mutation test. */
static uint64_t rng_next(uint64_t *x)
{
	*x ^= *x >> 12;
	*x ^= *x << 25;
	*x ^= *x >> 27;
	return *x * 0x2545f4914f6cdd1dULL;
}

/* A value of v, now and then an extreme one. */
static int64_t wild(uint64_t *x, int64_t v)
{
	static const int64_t odd[] = { 0,         -1,        1,
				       INT32_MAX, INT32_MIN, INT64_MAX,
				       INT64_MIN, 65,        -100000 };

	if (rng_next(x) % 16)
		return v;
	return odd[rng_next(x) % (sizeof(odd) / sizeof(odd[0]))];
}

static int wild_int(uint64_t *x, int v)
{
	int64_t w = wild(x, v);

	return w > INT32_MAX || w < INT32_MIN ? (int) (w & 0xffff) : (int) w;
}

/*
 * Seeded mutations: random snapshots (clusters of 1..6 nodes, jobs with
 * every field now and then extreme, running jobs on random or clashing
 * GPUs, tenants beyond the count) never make decide fail; every START is
 * of a pending job that pol_agora_job_check() accepts, on GPUs free
 * before the pass.  Several passes per policy so history is exercised.
 */
static void test_agora_random_snapshots_never_fail(void **state)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	pol_agora_stats_t st;
	int round, starts = 0, skipped = 0;

	(void) state;
	for (round = 0; round < 120; round++) {
		agora_err_t err = { { 0 } };
		agora_conf_t conf;
		int nn = 1 + (int) (rng_next(&x) % 6);
		int g = 1 + (int) (rng_next(&x) % 8);
		pol_cluster_t *c = pol_cluster_uniform(nn, g, 2);
		pol_agora_policy_t *a;
		pol_job_t pend[24], run[12];
		pol_alloc_part_t parts[12][2];
		pol_actions_t out = { 0 };
		int64_t now = 1000;
		int pass, i, k;

		assert_non_null(c);
		agora_conf_defaults(&conf);
		a = pol_agora_policy_create_conf(&conf, round % 3 != 0, "c1",
						 NULL, &err);
		assert_non_null(a);
		for (pass = 0; pass < 4; pass++) {
			int n_t = (int) (rng_next(&x) % 5);
			int np = (int) (rng_next(&x) % 24);
			int nr = (int) (rng_next(&x) % 12);
			pol_snapshot_t s = { c, pend, np, run, nr, n_t };
			pol_gpumask_t free0[6];

			for (i = 0; i < nn; i++)
				c->nodes[i].free = pol_node_all_gpus(c, i) &
						   rng_next(&x);
			for (i = 0; i < np; i++) {
				pol_job_t *j = &pend[i];
				int gg = 1 + (int) (rng_next(&x) % 9);

				*j = job(1 + i, (int) (rng_next(&x) % 6), gg,
					 (int64_t) (rng_next(&x) % 1000));
				if (rng_next(&x) % 3 == 0) {
					j->nodes = 1 + (int) (rng_next(&x) % 3);
					j->gpus_per_node = gg;
					j->total_gpus = j->min_gpus =
						j->max_gpus = j->nodes * gg;
				}
				j->tenant = wild_int(&x, j->tenant);
				j->total_gpus = wild_int(&x, j->total_gpus);
				j->min_gpus = wild_int(&x, j->min_gpus);
				j->max_gpus = wild_int(&x, j->max_gpus);
				j->nodes = wild_int(&x, j->nodes);
				j->gpus_per_node = wild_int(&x,
							    j->gpus_per_node);
				j->pool = (pol_pool_t) wild_int(&x, 0);
				j->band = wild_int(&x, 0);
				j->submit = wild(&x, j->submit);
				j->time_limit = wild(&x, j->time_limit);
				j->attained = wild(&x, 0);
				j->requeueable = rng_next(&x) & 1;
			}
			for (i = 0; i < nr; i++) {
				pol_job_t *j = &run[i];
				int n_parts = 1 + (int) (rng_next(&x) % 2);

				*j = job(100 + i, (int) (rng_next(&x) % 6), 1,
					 0);
				j->state = POL_JOB_RUNNING;
				j->start = wild(&x, now - 500);
				j->tenant = wild_int(&x, j->tenant);
				j->requeueable = rng_next(&x) & 1;
				j->total_gpus = 0;
				for (k = 0; k < n_parts; k++) {
					int node = (int) (rng_next(&x) % nn);

					parts[i][k].node = wild_int(&x, node);
					parts[i][k].gpus = rng_next(&x) &
							   0xffff;
					/* mostly: busy GPUs of the node */
					if (rng_next(&x) % 4)
						parts[i][k].gpus &=
							pol_node_all_gpus(
								c, node) &
							~c->nodes[node].free;
					j->total_gpus += pol_popcount(
						parts[i][k].gpus);
				}
				j->alloc.parts = parts[i];
				j->alloc.n_parts = wild_int(&x, n_parts);
				if (j->alloc.n_parts > n_parts)
					j->alloc.n_parts = n_parts;
				j->min_gpus = j->max_gpus = j->total_gpus;
			}
			for (i = 0; i < nn; i++)
				free0[i] = c->nodes[i].free;
			pol_actions_clear(&out);
			if (pol_agora_policy_decide(a, &s, now, &out) != 0)
				fail_msg("round %d pass %d: decide failed: %s",
					 round, pass, strerror(errno));
			for (i = 0; i < out.n; i++) {
				const pol_action_t *act = &out.v[i];

				if (act->type != POL_ACT_START)
					continue;
				for (k = 0; k < np; k++)
					if (pend[k].id == act->job_id)
						break;
				assert_true(k < np);
				assert_null(pol_agora_job_check(c, &pend[k],
								false, n_t));
				/* on GPUs free before the pass (a requeue's
				 * GPUs are never reused in the same pass),
				 * each GPU started once */
				for (k = 0; k < act->alloc.n_parts; k++) {
					const pol_alloc_part_t *pt =
						&act->alloc.parts[k];

					assert_true(pt->node >= 0 &&
						    pt->node < nn);
					assert_true((pt->gpus &
						     ~free0[pt->node]) == 0);
					free0[pt->node] &= ~pt->gpus;
				}
				starts++;
			}
			assert_int_equal(pol_agora_policy_stats(a, &st), 0);
			skipped += st.skipped_pending + st.skipped_running;
			now += 1 + (int64_t) (rng_next(&x) % 900);
		}
		pol_actions_free(&out);
		pol_agora_policy_destroy(&a);
		agora_conf_free(&conf);
		pol_cluster_destroy(&c);
	}
	/* the generator exercises both sides */
	assert_true(starts > 100);
	assert_true(skipped > 100);
}

static void test_agora_bad_params(void **state)
{
	static const char *const bad[] = {
		"f=1",      "f=-0.1", "lease=0",  "grace=-1", "options=0",
		"solver=7", "app=2",  "nosuch=1", "quota=-5",
	};
	size_t i;

	(void) state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		agora_err_t err = { { 0 } };
		pol_policy_t *p = pol_policy_create("agora", bad[i], NULL,
						    &err);

		if (p)
			fail_msg("'%s' accepted", bad[i]);
		assert_int_equal(errno, EINVAL);
		assert_non_null(strstr(err.text, "agora"));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agora_skips_bad_jobs),
		cmocka_unit_test(test_agora_random_snapshots_never_fail),
		cmocka_unit_test(test_agora_bad_params),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
