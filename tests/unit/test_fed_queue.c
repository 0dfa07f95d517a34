/*
 * Unit tests of the queue term of the federation score (common/fed/
 * pol_fed.c: pol_fed_queue_s and its place in pol_fed_cost and
 * pol_fed_auction): a job leaves its data only when the wait it adds to a
 * longer queue costs more than the transfer; with comparable queues the
 * data stays where it is.  Every number below is computed by hand.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "pol_fed.h"

#define NOW 1000000

static void assert_near(double got, double want, double tol)
{
	if (fabs(got - want) > tol)
		fail_msg("got %.12g, want %.12g (tol %g)", got, want, tol);
}

/* Two clusters with a 1e9 B/s link each; dataset 0 (1e12 bytes) on c0
 * only, so it takes 1,000 s to bring it to c1. */
static pol_fed_site_t sites[2] = {
	{ "c0", 0, 1e9 },
	{ "c1", 0, 1e9 },
};
static pol_fed_dataset_t datasets[1] = { { "d0", 1e12, 1u } };

static pol_fed_catalog_t cat2(void)
{
	pol_fed_catalog_t c = { sites, 2, datasets, 1, NULL, 0 };

	return c;
}

/* A 2-GPU job reading d0 that holds its GPUs for an hour. */
static pol_fed_job_t job2(int64_t id)
{
	pol_fed_job_t j;

	memset(&j, 0, sizeof(j));
	j.id = id;
	j.gpus = 2;
	j.dataset = 0;
	j.eligible = j.hw_match = 3;
	j.submit = NOW - 10;
	j.hold_s = 3600;
	return j;
}

static pol_fed_plan_t plan(int64_t wait, double queue_per_gpu)
{
	pol_fed_plan_t p;

	memset(&p, 0, sizeof(p));
	p.valid = true;
	p.start = NOW + wait;
	p.locality = 0.0;
	p.queue_per_gpu = queue_per_gpu;
	return p;
}

static void test_queue_s(void **state)
{
	(void) state;
	/* 0.5 jobs per GPU x 4 GPUs x (3,600 s + 400 s) */
	assert_near(pol_fed_queue_s(0.5, 4, 3600, 400), 8000, 1e-9);
	assert_near(pol_fed_queue_s(0.25, 1, 100, 0), 25, 1e-9);
	/* no queue, no GPUs, no hold, or nonsense: no term */
	assert_near(pol_fed_queue_s(0, 4, 3600, 400), 0, 0);
	assert_near(pol_fed_queue_s(0.5, 0, 3600, 400), 0, 0);
	assert_near(pol_fed_queue_s(0.5, 4, 0, 400), 0, 0);
	assert_near(pol_fed_queue_s(-1, 4, 3600, 400), 0, 0);
	assert_near(pol_fed_queue_s(0.5, 4, -5, 400), 0, 0);
	assert_near(pol_fed_queue_s(0.5, 4, 3600, -1), 0, 0);
	assert_near(pol_fed_queue_s(NAN, 4, 3600, 0), 0, 0);
	assert_near(pol_fed_queue_s(INFINITY, 4, 3600, 0), 0, 0);
	assert_near(pol_fed_queue_s(0.5, 4, NAN, 0), 0, 0);
	assert_near(pol_fed_queue_s(0.5, 4, 3600, INFINITY), 0, 0);
}

static void test_cost_queue_terms(void **state)
{
	pol_fed_catalog_t cat = cat2();
	pol_fed_job_t j = job2(1);
	pol_fed_plan_t p0 = plan(600, 0.5), p1 = plan(0, 0.1);
	pol_fed_weights_t w;
	char why[POL_FED_WHY_LEN];

	(void) state;
	pol_fed_weights_default(&w);
	assert_near(w.w_queue, 1.0, 0);
	/* c0: wait 600 + 0.5 x 2 x 3,600 = 4,200 */
	assert_near(pol_fed_cost(&w, &cat, &j, 0, &p0, NOW, why, sizeof(why)),
		    4200, 1e-9);
	assert_non_null(strstr(why, "data local, queue 0.500/GPU +3600s"));
	/* c1: transfer 1,000 + 0.1 x 2 x (3,600 + 1,000) = 1,920 */
	assert_near(pol_fed_cost(&w, &cat, &j, 1, &p1, NOW, why, sizeof(why)),
		    1920, 1e-9);
	assert_non_null(strstr(why, "data +1000s, queue 0.100/GPU +920s"));
	/* the weight scales the term: 600 + 0.5 x 3,600 */
	w.w_queue = 0.5;
	assert_near(pol_fed_cost(&w, &cat, &j, 0, &p0, NOW, NULL, 0), 2400,
		    1e-9);
	/* off: wait + transfer only, as before the term */
	w.w_queue = 0;
	assert_near(pol_fed_cost(&w, &cat, &j, 0, &p0, NOW, why, sizeof(why)),
		    600, 1e-9);
	assert_null(strstr(why, "queue"));
	assert_near(pol_fed_cost(&w, &cat, &j, 1, &p1, NOW, NULL, 0), 1000,
		    1e-9);
	/* no hold time known (agorad without a time limit) or no queue
	 * known: no term either */
	pol_fed_weights_default(&w);
	j.hold_s = 0;
	assert_near(pol_fed_cost(&w, &cat, &j, 0, &p0, NOW, NULL, 0), 600,
		    1e-9);
	j.hold_s = 3600;
	p0.queue_per_gpu = 0;
	assert_near(pol_fed_cost(&w, &cat, &j, 0, &p0, NOW, NULL, 0), 600,
		    1e-9);
}

/* The imbalance is real: c0 (the data) has the longer queue, the job goes
 * to c1 although it waits less on c0 and must copy its data to c1.  With
 * comparable queues it keeps its data. */
static void test_auction_levels_or_keeps_data(void **state)
{
	pol_fed_catalog_t cat = cat2();
	pol_fed_job_t j = job2(7);
	pol_fed_plan_t plans[2];
	pol_fed_award_t a;

	(void) state;
	/* without the term: c0 600 < c1 1,000 */
	plans[0] = plan(600, 0.5);
	plans[1] = plan(0, 0.1);
	{
		pol_fed_weights_t w;

		pol_fed_weights_default(&w);
		w.w_queue = 0;
		assert_int_equal(pol_fed_auction(&w, &cat, &j, 1, plans, 2,
						 NULL, NOW, &a),
				 0);
		assert_int_equal(a.cluster, 0);
		assert_near(a.cost, 600, 1e-9);
	}
	/* with it: c1 1,920 < c0 4,200 */
	assert_int_equal(
		pol_fed_auction(NULL, &cat, &j, 1, plans, 2, NULL, NOW, &a), 0);
	assert_int_equal(a.cluster, 1);
	assert_near(a.cost, 1920, 1e-9);
	assert_near(a.second, 4200, 1e-9);
	assert_non_null(strstr(a.why, "c1: start +0s, data +1000s"));
	assert_non_null(strstr(a.why, "; next c0 cost 4200"));
	/* comparable queues (0.2 per GPU on both): c0 600 + 1,440 = 2,040,
	 * c1 1,000 + 0.2 x 2 x 4,600 = 2,840: the data stays */
	plans[0] = plan(600, 0.2);
	plans[1] = plan(0, 0.2);
	assert_int_equal(
		pol_fed_auction(NULL, &cat, &j, 1, plans, 2, NULL, NOW, &a), 0);
	assert_int_equal(a.cluster, 0);
	assert_near(a.cost, 2040, 1e-9);
	assert_near(a.second, 2840, 1e-9);
}

/* The crossover: both start now, c1 has no queue; c0 costs
 * q x 2 x 3,600 = 7,200 q against c1's transfer of 1,000, so the job
 * leaves its data above q = 1,000 / 7,200 = 0.13889 jobs per GPU. */
static void test_queue_crossover(void **state)
{
	pol_fed_catalog_t cat = cat2();
	pol_fed_job_t j = job2(9);
	pol_fed_plan_t plans[2];
	pol_fed_award_t a;
	static const struct {
		double q;
		int want;
	} cases[] = {
		{ 0.0, 0 },    { 0.1, 0 },  { 0.138, 0 }, { 0.1388, 0 },
		{ 0.1389, 1 }, { 0.14, 1 }, { 0.5, 1 },
	};

	(void) state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		plans[0] = plan(0, cases[k].q);
		plans[1] = plan(0, 0);
		assert_int_equal(pol_fed_auction(NULL, &cat, &j, 1, plans, 2,
						 NULL, NOW, &a),
				 0);
		if (a.cluster != cases[k].want)
			fail_msg("q %.5f: cluster %d, want %d (cost %.3f)",
				 cases[k].q, a.cluster, cases[k].want, a.cost);
	}
	/* a job that holds its GPUs ten times longer leaves at a tenth of
	 * the queue: 0.02 x 2 x 36,000 = 1,440 > 1,000 */
	j.hold_s = 36000;
	plans[0] = plan(0, 0.02);
	plans[1] = plan(0, 0);
	assert_int_equal(
		pol_fed_auction(NULL, &cat, &j, 1, plans, 2, NULL, NOW, &a), 0);
	assert_int_equal(a.cluster, 1);
	/* at 0.01 (720 < 1,000) it stays */
	plans[0] = plan(0, 0.01);
	assert_int_equal(
		pol_fed_auction(NULL, &cat, &j, 1, plans, 2, NULL, NOW, &a), 0);
	assert_int_equal(a.cluster, 0);
}

/* agorad's inputs: the queue length per GPU of a cluster's survey */
static void test_queue_per_gpu(void **state)
{
	pol_fed_cluster_load_t l;

	(void) state;
	memset(&l, 0, sizeof(l));
	l.gpus_total = 16;
	l.jobs_queued = 4; /* 4 / 16 */
	assert_near(pol_fed_queue_per_gpu(&l), 0.25, 1e-12);
	l.jobs_queued = 24; /* a queue longer than the cluster: 24 / 16 */
	assert_near(pol_fed_queue_per_gpu(&l), 1.5, 1e-12);
	l.jobs_queued = 0;
	assert_near(pol_fed_queue_per_gpu(&l), 0, 0);
	l.jobs_queued = -3;
	assert_near(pol_fed_queue_per_gpu(&l), 0, 0);
	l.jobs_queued = 4;
	l.gpus_total = 0; /* no GPUs (nodes down): no term */
	assert_near(pol_fed_queue_per_gpu(&l), 0, 0);
	assert_near(pol_fed_queue_per_gpu(NULL), 0, 0);
}

/* agorad's inputs: the hold of a job from its time limit */
static void test_hold_of_limit(void **state)
{
	(void) state;
	/* 0.693 x 3,600 = 2,494.8 */
	assert_int_equal(pol_fed_hold_of_limit(3600), 2495);
	/* 0.693 x 60 = 41.58 */
	assert_int_equal(pol_fed_hold_of_limit(60), 42);
	/* 0.693 x 1 = 0.693: at least a second */
	assert_int_equal(pol_fed_hold_of_limit(1), 1);
	/* capped at a week first: 0.693 x 604,800 = 419,126.4 */
	assert_int_equal(pol_fed_hold_of_limit(30 * 86400), 419126);
	assert_int_equal(pol_fed_hold_of_limit(POL_FED_HORIZON_S), 419126);
	/* no limit (or unlimited, which agorad passes as 0): no hold */
	assert_int_equal(pol_fed_hold_of_limit(0), 0);
	assert_int_equal(pol_fed_hold_of_limit(-60), 0);
}

/* a time limit as the federation counts it: the horizon for none */
static void test_limit_s(void **state)
{
	(void) state;
	assert_int_equal(pol_fed_limit_s(3600), 3600);
	assert_int_equal(pol_fed_limit_s(POL_FED_HORIZON_S - 1),
			 POL_FED_HORIZON_S - 1);
	assert_int_equal(pol_fed_limit_s(30 * 86400), POL_FED_HORIZON_S);
	assert_int_equal(pol_fed_limit_s(0), POL_FED_HORIZON_S);
	assert_int_equal(pol_fed_limit_s(-60), POL_FED_HORIZON_S);
}

/* the hold from a history: the recent mean, capped by the limit */
static void test_hold_of_history(void **state)
{
	(void) state;
	/* a week's limit, the user's jobs ran 40 min: 2,400 s, not 419,126 */
	assert_int_equal(pol_fed_hold_of(POL_FED_HORIZON_S, 2400.0), 2400);
	/* 1,234.5 s rounds to 1,235 (llround: half away from zero) */
	assert_int_equal(pol_fed_hold_of(86400, 1234.5), 1235);
	/* history longer than the limit: the limit (a job is killed there) */
	assert_int_equal(pol_fed_hold_of(3600, 7200.0), 3600);
	/* no limit: the history, capped at the horizon */
	assert_int_equal(pol_fed_hold_of(0, 5000.0), 5000);
	assert_int_equal(pol_fed_hold_of(0, 30.0 * 86400), POL_FED_HORIZON_S);
	/* under a second: one */
	assert_int_equal(pol_fed_hold_of(3600, 0.2), 1);
	/* no history (0, negative, NaN, inf): 0.693 x limit, as before */
	assert_int_equal(pol_fed_hold_of(3600, 0.0), 2495);
	assert_int_equal(pol_fed_hold_of(3600, -1.0), 2495);
	assert_int_equal(pol_fed_hold_of(3600, NAN), 2495);
	assert_int_equal(pol_fed_hold_of(3600, INFINITY), 2495);
	assert_int_equal(pol_fed_hold_of(0, 0.0), 0);
}

/* The two together as agorad fills them, in the bid's why text: a 2-GPU
 * job of a 2-hour limit (hold 0.693 x 7,200 = 4,989.6 -> 4,990 s) on a
 * cluster of 16 GPUs with 4 jobs queued (0.25/GPU), no data: the term is
 * 0.25 x 2 x 4,990 = 2,495 s on top of a 100 s wait. */
static void test_agorad_inputs_why(void **state)
{
	pol_fed_catalog_t cat = cat2();
	pol_fed_cluster_load_t l;
	pol_fed_job_t j = job2(9);
	pol_fed_plan_t p;
	pol_fed_weights_t w;
	char why[POL_FED_WHY_LEN];

	(void) state;
	pol_fed_weights_default(&w);
	memset(&l, 0, sizeof(l));
	l.gpus_total = 16;
	l.jobs_queued = 4;
	j.dataset = -1;
	j.hold_s = pol_fed_hold_of_limit(7200);
	assert_int_equal(j.hold_s, 4990);
	p = plan(100, pol_fed_queue_per_gpu(&l));
	/* wait 100 + 2,495 (locality 0, no preemption, credit 0) */
	assert_near(pol_fed_cost(&w, &cat, &j, 1, &p, NOW, why, sizeof(why)),
		    2595, 1e-9);
	if (!strstr(why, "queue 0.250/GPU +2495s"))
		fail_msg("why: %s", why);
	/* an unlimited job: no hold, no term, nothing in why */
	j.hold_s = pol_fed_hold_of_limit(0);
	assert_near(pol_fed_cost(&w, &cat, &j, 1, &p, NOW, why, sizeof(why)),
		    100, 1e-9);
	if (strstr(why, "queue"))
		fail_msg("why: %s", why);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_queue_s),
		cmocka_unit_test(test_cost_queue_terms),
		cmocka_unit_test(test_auction_levels_or_keeps_data),
		cmocka_unit_test(test_queue_crossover),
		cmocka_unit_test(test_queue_per_gpu),
		cmocka_unit_test(test_hold_of_limit),
		cmocka_unit_test(test_limit_s),
		cmocka_unit_test(test_hold_of_history),
		cmocka_unit_test(test_agorad_inputs_why),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
