/*
 * test_award.c - the award table: what the auction decided, as the
 * priorities and preemption rule Slurm's own schedulers act on.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pol_award.h"

/* Two apps: "happy" (rho 1.1) and "starved" (rho 3.0). */
static pol_award_t *two_apps(void)
{
	pol_award_t *a = pol_award_create();

	assert_non_null(a);
	assert_int_equal(pol_award_app(a, "happy", 1.1, 50, 100), 0);
	assert_int_equal(pol_award_app(a, "starved", 3.0, 90, 100), 1);
	return a;
}

static void test_preempt_rule(void **state)
{
	pol_award_t *a = two_apps();

	(void) state;
	/* happy: job 10 running, lease lost; job 11 running, lease kept;
	 * job 12 running, lost but --no-requeue */
	assert_int_equal(pol_award_job(a, 10, 0,
				       POL_AWARD_RUNNING | POL_AWARD_LOST, 8,
				       100),
			 0);
	assert_int_equal(pol_award_job(a, 11, 0, POL_AWARD_RUNNING, 8, 900), 0);
	assert_int_equal(pol_award_job(a, 12, 0,
				       POL_AWARD_RUNNING | POL_AWARD_LOST |
					       POL_AWARD_NOREQUEUE,
				       8, 100),
			 0);
	/* starved: 20 won, 21 pending without an award */
	assert_int_equal(pol_award_job(a, 20, 1, POL_AWARD_WON, 8, 0), 0);
	assert_int_equal(pol_award_job(a, 21, 1, 0, 8, 0), 0);
	/* happy: 13 won (same app as the victims) */
	assert_int_equal(pol_award_job(a, 13, 0, POL_AWARD_WON, 8, 0), 0);

	assert_true(pol_award_preemptable(a, 10, 20));
	assert_false(pol_award_preemptable(a, 11, 20)); /* lease kept */
	assert_false(pol_award_preemptable(a, 12, 20)); /* no requeue */
	assert_false(pol_award_preemptable(a, 10, 21)); /* no award */
	assert_false(pol_award_preemptable(a, 10, 13)); /* same app */
	assert_false(pol_award_preemptable(a, 10, 99)); /* unknown */
	assert_false(pol_award_preemptable(a, 99, 20)); /* outside auction */
	assert_false(pol_award_preemptable(a, 20, 10)); /* roles reversed */
	assert_int_equal(pol_award_n_won(a), 2);
	assert_int_equal(pol_award_app_find(a, "starved")->won_gpus, 8);
	pol_award_destroy(&a);
	assert_null(a);
}

static void test_better_off_never_preempts(void **state)
{
	pol_award_t *a = two_apps();

	(void) state;
	/* the victim's app is worse off than the winner's: no preemption */
	assert_int_equal(pol_award_job(a, 30, 1,
				       POL_AWARD_RUNNING | POL_AWARD_LOST, 4,
				       100),
			 0);
	assert_int_equal(pol_award_job(a, 31, 0, POL_AWARD_WON, 4, 0), 0);
	assert_false(pol_award_preemptable(a, 30, 31));
	pol_award_destroy(&a);
}

static void test_victim_rank(void **state)
{
	pol_award_t *a = two_apps();

	(void) state;
	assert_int_equal(pol_award_app(a, "third", 1.1, 0, 0), 2);
	assert_int_equal(pol_award_job(a, 1, 0, POL_AWARD_RUNNING, 8, 0), 0);
	assert_int_equal(pol_award_job(a, 2, 0, POL_AWARD_RUNNING, 2, 0), 0);
	assert_int_equal(pol_award_job(a, 3, 1, POL_AWARD_RUNNING, 1, 0), 0);
	/* best-off app first, then fewer GPUs */
	assert_true(pol_award_victim_rank(a, 2) < pol_award_victim_rank(a, 1));
	assert_true(pol_award_victim_rank(a, 1) < pol_award_victim_rank(a, 3));
	assert_int_equal(pol_award_victim_rank(a, 77), UINT32_MAX);
	pol_award_destroy(&a);
}

static void test_many_jobs_and_replace(void **state)
{
	pol_award_t *a = two_apps();
	int64_t id;

	(void) state;
	for (id = 1; id <= 5000; id++)
		assert_int_equal(pol_award_job(a, id * 7919, (int) (id & 1),
					       (id % 3) ? 0 : POL_AWARD_WON, 1,
					       0),
				 0);
	assert_int_equal(pol_award_n_jobs(a), 5000);
	assert_int_equal(pol_award_n_won(a), 1666);
	for (id = 1; id <= 5000; id++) {
		const pol_award_job_t *j = pol_award_find(a, id * 7919);

		assert_non_null(j);
		assert_int_equal(j->app, (int) (id & 1));
	}
	assert_null(pol_award_find(a, 7918));
	/* a second add replaces the first, and keeps the counts right */
	assert_int_equal(pol_award_job(a, 3 * 7919, 0, 0, 1, 0), 0);
	assert_int_equal(pol_award_n_jobs(a), 5000);
	assert_int_equal(pol_award_n_won(a), 1665);
	/* bad input is refused, never fatal */
	assert_int_equal(pol_award_job(a, 0, 0, 0, 1, 0), -1);
	assert_int_equal(pol_award_job(a, 5, 7, 0, 1, 0), -1);
	assert_int_equal(pol_award_job(NULL, 5, 0, 0, 1, 0), -1);
	assert_false(pol_award_preemptable(NULL, 1, 2));
	pol_award_destroy(&a);
}

static void test_build_from_decision(void **state)
{
	pol_award_t *a = pol_award_create();
	pol_lease_table_t *lt = pol_lease_table_create();
	pol_job_t pend[3], run[2];
	pol_snapshot_t snap = { 0 };
	pol_actions_t acts = { 0 };
	const char *names[] = { "a", "b" };
	double rho[] = { 1.0, 2.5 }, credit[] = { 1, 2 }, quota[] = { 5, 5 };

	(void) state;
	memset(pend, 0, sizeof(pend));
	memset(run, 0, sizeof(run));
	pend[0].id = 1, pend[0].tenant = 1, pend[0].total_gpus = 4;
	pend[1].id = 2, pend[1].tenant = 1, pend[1].total_gpus = 4;
	pend[2].id = 3, pend[2].tenant = 9; /* bad tenant: skipped */
	run[0].id = 7, run[0].tenant = 0, run[0].total_gpus = 8;
	run[0].requeueable = true;
	run[1].id = 8, run[1].tenant = 0, run[1].total_gpus = 8;
	snap.pending = pend, snap.n_pending = 3;
	snap.running = run, snap.n_running = 2;
	snap.n_tenants = 2;
	assert_int_equal(pol_lease_grant(lt, 7, 8, 0, 10), 0);
	assert_int_equal(pol_lease_settle(lt, 7, false, 10, 10, 5), 0);
	assert_int_equal(pol_lease_grant(lt, 8, 8, 0, 100), 0);
	assert_true(pol_actions_add(&acts, POL_ACT_HOLD, 1, NULL, 0, "won") >=
		    0);
	assert_int_equal(pol_award_build(a, &snap, &acts, lt, names, rho,
					 credit, quota, 2, NULL, 100, 60),
			 0);
	assert_int_equal(pol_award_n_jobs(a), 4);
	assert_true(pol_award_find(a, 1)->flags & POL_AWARD_WON);
	assert_false(pol_award_find(a, 2)->flags & POL_AWARD_WON);
	assert_null(pol_award_find(a, 3));
	assert_true(pol_award_find(a, 7)->flags & POL_AWARD_LOST);
	assert_false(pol_award_find(a, 8)->flags & POL_AWARD_LOST);
	assert_true(pol_award_find(a, 8)->flags & POL_AWARD_NOREQUEUE);
	assert_int_equal(pol_award_find(a, 8)->lease_end, 100);
	assert_true(pol_award_preemptable(a, 7, 1));
	assert_false(pol_award_preemptable(a, 8, 1));
	assert_false(pol_award_preemptable(a, 7, 2));

	/* the next pass announces nothing new: job 1's award holds while
	 * it waits for the loser's GPUs, until keep_s after it was won */
	{
		pol_award_t *b = pol_award_create(), *c = pol_award_create();

		pol_actions_clear(&acts);
		assert_int_equal(pol_award_build(b, &snap, &acts, lt, names,
						 rho, credit, quota, 2, a, 130,
						 60),
				 0);
		assert_true(pol_award_find(b, 1)->flags & POL_AWARD_WON);
		assert_int_equal(pol_award_find(b, 1)->since, 100);
		assert_true(pol_award_preemptable(b, 7, 1));
		assert_int_equal(pol_award_build(c, &snap, &acts, lt, names,
						 rho, credit, quota, 2, b, 161,
						 60),
				 0);
		assert_false(pol_award_find(c, 1)->flags & POL_AWARD_WON);
		pol_award_destroy(&b);
		pol_award_destroy(&c);
	}

	/* a loser the policy requeues (PREEMPT, lease dropped) stays LOST
	 * while it runs, until keep_s: Slurm preempts it when a winner is
	 * scheduled, not in the same instant */
	{
		pol_award_t *b = pol_award_create(), *c = pol_award_create(),
			    *d = pol_award_create();

		pol_actions_clear(&acts);
		assert_true(pol_actions_add(&acts, POL_ACT_PREEMPT, 8, NULL, 0,
					    "lease lost") >= 0);
		assert_int_equal(pol_award_build(b, &snap, &acts, lt, names,
						 rho, credit, quota, 2, NULL,
						 200, 60),
				 0);
		assert_true(pol_award_find(b, 8)->flags & POL_AWARD_LOST);
		pol_actions_clear(&acts);
		assert_int_equal(pol_lease_drop(lt, 8), 0);
		assert_int_equal(pol_lease_grant(lt, 8, 8, 201, 100), 0);
		assert_int_equal(pol_award_build(c, &snap, &acts, lt, names,
						 rho, credit, quota, 2, b, 230,
						 60),
				 0);
		assert_true(pol_award_find(c, 8)->flags & POL_AWARD_LOST);
		assert_int_equal(pol_award_build(d, &snap, &acts, lt, names,
						 rho, credit, quota, 2, c, 260,
						 60),
				 0);
		assert_false(pol_award_find(d, 8)->flags & POL_AWARD_LOST);
		pol_award_destroy(&b);
		pol_award_destroy(&c);
		pol_award_destroy(&d);
	}
	pol_actions_free(&acts);
	pol_lease_table_destroy(&lt);
	pol_award_destroy(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_preempt_rule),
		cmocka_unit_test(test_better_off_never_preempts),
		cmocka_unit_test(test_victim_rank),
		cmocka_unit_test(test_many_jobs_and_replace),
		cmocka_unit_test(test_build_from_decision),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
