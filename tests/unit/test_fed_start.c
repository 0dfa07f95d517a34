/*
 * Unit tests of a plan's start in the federation core (pol_fed_start.c):
 * agorad's own estimate from a cluster's busy GPUs, whether will-run's
 * answer is plausible, which of the two a bid uses, and the reason the
 * score prints for it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pol_fed.h"

#define NOW 1000000

static void test_start_estimate(void **state)
{
	pol_fed_busy_t busy[6] = { { NOW + 3600, 8 }, { NOW + 600, 8 },
				   { NOW + 1200, 8 }, { NOW + 1800, 8 },
				   { NOW + 2400, 8 }, { NOW + 3000, 8 } };
	pol_fed_cluster_load_t l = { .gpus_total = 64,
				     .gpus_free = 16,
				     .busy = busy,
				     .n_busy = 6,
				     .max_limit_s = 3600 };
	pol_fed_plan_t p = { .valid = true, .locality = 0 };
	pol_fed_job_t j = {
		.id = 1, .gpus = 8, .dataset = -1, .eligible = 1, .hw_match = 1
	};
	char why[POL_FED_WHY_LEN];
	int src;

	(void) state;
	/* fits in the free GPUs: now; 32 GPUs: the second job's end */
	assert_int_equal(pol_fed_start_estimate(&l, 8, NOW), NOW);
	assert_int_equal(pol_fed_start_estimate(&l, 32, NOW), NOW + 1200);
	assert_int_equal(pol_fed_start_estimate(&l, 64, NOW), NOW + 3600);
	assert_true(pol_fed_start_estimate(&l, 65, NOW) == INT64_MAX);
	/* Slurm's "2058" answer: beyond every limit and the free GPUs */
	assert_false(pol_fed_start_plausible(&l, 8, NOW + 503316420, NOW));
	assert_int_equal(
		pol_fed_start_choose(&l, 8, NOW + 503316420, 0, NOW, &src),
		NOW);
	assert_int_equal(src, POL_FED_START_ESTIMATE);
	/* an answer within the estimate plus one limit (and the slack) is
	 * taken */
	assert_true(pol_fed_start_plausible(
		&l, 32, NOW + 1200 + 3600 + POL_FED_START_SLACK_S, NOW));
	assert_false(pol_fed_start_plausible(
		&l, 32, NOW + 1201 + 3600 + POL_FED_START_SLACK_S, NOW));
	assert_int_equal(pol_fed_start_choose(&l, 8, NOW + 60, 0, NOW, &src),
			 NOW + 60);
	assert_int_equal(src, POL_FED_START_WILL_RUN);
	/* "now" while jobs pinned here a round ago take the free GPUs:
	 * will-run ignores them, the estimate does not; preempting, it may
	 * be true */
	l.gpus_queued = 16;
	assert_int_equal(pol_fed_start_estimate(&l, 8, NOW), NOW + 600);
	assert_int_equal(pol_fed_start_choose(&l, 8, NOW, 0, NOW, &src),
			 NOW + 600);
	assert_int_equal(src, POL_FED_START_ESTIMATE);
	assert_int_equal(pol_fed_start_choose(&l, 8, NOW, 1, NOW, &src), NOW);
	assert_int_equal(src, POL_FED_START_WILL_RUN);
	/* will-run answers at its own clock, "+1s": still now (a 22.05
	 * burst's second round trusted it on a cluster with 345 copies on
	 * their way) */
	assert_int_equal(pol_fed_start_choose(&l, 8, NOW + 1, 0, NOW, &src),
			 NOW + 600);
	assert_int_equal(src, POL_FED_START_ESTIMATE);
	assert_int_equal(pol_fed_start_choose(&l, 8, NOW + POL_FED_NOW_SLACK_S,
					      0, NOW, &src),
			 NOW + 600);
	/* later than now, but ahead of the queued jobs (will-run: +60 s,
	 * the queue takes the free GPUs and the first end): the estimate;
	 * a will-run answer later than the estimate stands, and without a
	 * queue the answer stands too */
	assert_int_equal(pol_fed_start_choose(&l, 8, NOW + 60, 0, NOW, &src),
			 NOW + 600);
	assert_int_equal(src, POL_FED_START_ESTIMATE);
	l.gpus_queued = 24;
	assert_int_equal(pol_fed_start_estimate(&l, 8, NOW), NOW + 1200);
	assert_int_equal(pol_fed_start_choose(&l, 8, NOW + 900, 0, NOW, &src),
			 NOW + 1200);
	assert_int_equal(src, POL_FED_START_ESTIMATE);
	assert_int_equal(pol_fed_start_choose(&l, 8, NOW + 1500, 0, NOW, &src),
			 NOW + 1500);
	assert_int_equal(src, POL_FED_START_WILL_RUN);
	assert_int_equal(pol_fed_start_choose(&l, 8, NOW + 900, 1, NOW, &src),
			 NOW + 900);
	assert_int_equal(src, POL_FED_START_WILL_RUN);
	l.gpus_queued = 0;
	assert_int_equal(pol_fed_start_choose(&l, 8, NOW + 300, 0, NOW, &src),
			 NOW + 300);
	assert_int_equal(src, POL_FED_START_WILL_RUN);
	/* a queue ahead (64 GPUs x 10 h) makes a later answer true */
	l.queued_gpu_s = 64.0 * 36000;
	assert_true(pol_fed_start_plausible(&l, 8, NOW + 36000, NOW));
	assert_false(pol_fed_start_plausible(&l, 8, NOW + 503316420, NOW));
	/* unlimited jobs count as a week, not as Slurm's years */
	l.queued_gpu_s = 0;
	l.max_limit_s = 400000000;
	assert_true(pol_fed_start_plausible(&l, 8, NOW + 86400, NOW));
	assert_false(pol_fed_start_plausible(&l, 8, NOW + 503316420, NOW));
	/* queued GPUs beyond what every running job frees (the demo: 16
	 * free, 48 queued, 48 running): a deep queue bids the horizon, not
	 * "never", so Slurm's +1e9 s answer is replaced, and so is an
	 * earlier answer that ignores the queue */
	l.max_limit_s = 3600;
	l.gpus_queued = 80;
	l.queued_gpu_s = 64.0 * 7200;
	assert_int_equal(pol_fed_start_estimate(&l, 8, NOW),
			 NOW + POL_FED_HORIZON_S);
	assert_false(pol_fed_start_plausible(&l, 8, NOW + 1000000000, NOW));
	assert_int_equal(
		pol_fed_start_choose(&l, 8, NOW + 1000000000, 0, NOW, &src),
		NOW + POL_FED_HORIZON_S);
	assert_int_equal(src, POL_FED_START_DEEP);
	assert_int_equal(pol_fed_start_choose(&l, 8, NOW + 3600, 0, NOW, &src),
			 NOW + POL_FED_HORIZON_S);
	assert_int_equal(src, POL_FED_START_DEEP);
	{
		/* and the bid says why it reads a week */
		pol_fed_plan_t dp = { .valid = true,
				      .locality = 0,
				      .start_src = src,
				      .start = NOW + POL_FED_HORIZON_S,
				      .will_run = NOW + 3600 };

		(void) pol_fed_cost(NULL, NULL, &j, 0, &dp, NOW, why,
				    sizeof(why));
		assert_non_null(strstr(why, "start +604800s"));
		assert_non_null(strstr(why, "will-run said +3600s; a deep "
					    "queue"));
	}
	{
		/* one running job of a five-day limit: the deep queue's bid
		 * does not depend on it (it was +5 days + the queue's work
		 * over the GPUs, +438,300 s, below the horizon while a
		 * cluster without it bid the horizon: the sparse window's
		 * worst seed, doc/evaluation.md "A deep queue's start") */
		pol_fed_busy_t lng[2] = { { NOW + 5 * 86400, 8 },
					  { NOW + 600, 56 } };
		pol_fed_cluster_load_t d = { .gpus_total = 64,
					     .busy = lng,
					     .n_busy = 2,
					     .gpus_queued = 100,
					     .queued_gpu_s = 56.0 * 7200,
					     .max_limit_s = 5 * 86400 };

		assert_int_equal(pol_fed_start_estimate(&d, 8, NOW),
				 NOW + POL_FED_HORIZON_S);
		/* there, without preemption, no will-run answer changes the
		 * bid: an earlier start, a later one and Slurm's "never"
		 * all bid the horizon, so agorad does not ask again */
		assert_true(pol_fed_willrun_moot(&d, 8, false, NOW));
		for (int64_t a = 0; a <= 1000000000; a += 250000000)
			assert_int_equal(pol_fed_start_choose(&d, 8, NOW + a, 0,
							      NOW, &src),
					 NOW + POL_FED_HORIZON_S);
		/* with preemption an answer may be a plan that preempts */
		assert_false(pol_fed_willrun_moot(&d, 8, true, NOW));
		assert_int_equal(pol_fed_start_choose(&d, 8, NOW, 2, NOW, &src),
				 NOW);
		assert_false(pol_fed_willrun_moot(NULL, 8, false, NOW));
		/* no work known for the queue (pins without a limit): the
		 * last running job's end */
		d.queued_gpu_s = 0;
		assert_false(pol_fed_willrun_moot(&d, 8, false, NOW));
		assert_int_equal(pol_fed_start_estimate(&d, 8, NOW),
				 NOW + 5 * 86400);
		/* not deep (the jobs ending at +600 s free the queue's 40
		 * GPUs and the job's 8): that end */
		d.gpus_queued = 40;
		d.queued_gpu_s = 40.0 * 7200;
		assert_int_equal(pol_fed_start_estimate(&d, 8, NOW), NOW + 600);
		assert_false(pol_fed_willrun_moot(&d, 8, false, NOW));
	}
	/* a bid starts at most a week out: queued work of two weeks */
	l.queued_gpu_s = 64.0 * 14 * 86400;
	assert_int_equal(
		pol_fed_start_choose(&l, 8, NOW + 1000000000, 0, NOW, &src),
		NOW + POL_FED_HORIZON_S);
	assert_int_equal(src, POL_FED_START_DEEP);
	l.queued_gpu_s = 64.0 * 7200;
	/* no running job and the queue beyond the free GPUs: deep too */
	l.n_busy = 0;
	assert_int_equal(pol_fed_start_estimate(&l, 8, NOW),
			 NOW + POL_FED_HORIZON_S);
	l.n_busy = 6;
	l.gpus_queued = 0;
	l.queued_gpu_s = 0;
	l.max_limit_s = 400000000;
	/* nothing known: the answer stands */
	assert_true(pol_fed_start_plausible(NULL, 8, NOW + 503316420, NOW));
	/* the bid says which start it used */
	p.start = pol_fed_start_choose(&l, 8, NOW + 503316420, 0, NOW,
				       &p.start_src);
	p.will_run = NOW + 503316420;
	(void) pol_fed_cost(NULL, NULL, &j, 0, &p, NOW, why, sizeof(why));
	assert_non_null(strstr(why, "start +0s"));
	assert_non_null(strstr(
		why, "start: agorad's estimate (will-run said +503316420s)"));
	p.start = NOW + 60;
	p.start_src = POL_FED_START_WILL_RUN;
	(void) pol_fed_cost(NULL, NULL, &j, 0, &p, NOW, why, sizeof(why));
	assert_non_null(strstr(why, "start +60s"));
	assert_non_null(strstr(why, "start: will-run"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_start_estimate),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
