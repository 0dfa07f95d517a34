/*
 * test_award.c - the award table: what the auction decided, as the
 * priorities and preemption rule Slurm's own schedulers act on.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
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
	/* a job left out of the auction says why; re-entered, it is not
	 * left out any more unless said again */
	assert_null(pol_award_find(a, 21)->left_out);
	assert_int_equal(pol_award_left_out(a, 21, "no GPUs"), 0);
	assert_string_equal(pol_award_find(a, 21)->left_out, "no GPUs");
	assert_int_equal(pol_award_left_out(a, 99, "no GPUs"), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(pol_award_job(a, 21, 1, 0, 8, 0), 0);
	assert_null(pol_award_find(a, 21)->left_out);
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
		/* its lease was renewed at 201, after it lost at 200: no
		 * longer a loser (issue 19: a renewed lease ends
		 * preemptability) */
		assert_false(pol_award_find(c, 8)->flags & POL_AWARD_LOST);
		/* without a renewal it stays LOST until keep_s */
		assert_int_equal(pol_lease_drop(lt, 8), 0);
		assert_int_equal(pol_award_build(d, &snap, &acts, lt, names,
						 rho, credit, quota, 2, b, 230,
						 60),
				 0);
		assert_true(pol_award_find(d, 8)->flags & POL_AWARD_LOST);
		pol_award_destroy(&c);
		c = pol_award_create();
		assert_int_equal(pol_award_build(c, &snap, &acts, lt, names,
						 rho, credit, quota, 2, d, 260,
						 60),
				 0);
		assert_false(pol_award_find(c, 8)->flags & POL_AWARD_LOST);
		pol_award_destroy(&b);
		pol_award_destroy(&c);
		pol_award_destroy(&d);
	}
	pol_actions_free(&acts);
	pol_lease_table_destroy(&lt);
	pol_award_destroy(&a);
}

/* One node of 8 GPUs, `free` of them free; pending jobs of `gpus` each. */
typedef struct {
	pol_node_type_t type;
	pol_node_t node;
	pol_cluster_t cl;
	pol_job_t pend[4];
	pol_job_t run[1];
	pol_snapshot_t snap;
} mini_t;

static void mini_init(mini_t *m, pol_gpumask_t free_mask, int n_pend,
		      const int *gpus)
{
	int i;

	memset(m, 0, sizeof(*m));
	m->type.n_gpus = 8;
	m->node.up = true;
	m->node.free = free_mask;
	m->cl.types = &m->type;
	m->cl.n_types = 1;
	m->cl.nodes = &m->node;
	m->cl.n_nodes = 1;
	for (i = 0; i < n_pend; i++) {
		m->pend[i].id = i + 1;
		m->pend[i].tenant = 0;
		m->pend[i].total_gpus = gpus[i];
	}
	m->snap.cluster = &m->cl;
	m->snap.pending = m->pend;
	m->snap.n_pending = n_pend;
	m->snap.running = m->run;
	m->snap.n_tenants = 1;
}

/* build one pass at `now` from prev with START (or HOLD) for jobs 1..n */
static pol_award_t *pass(mini_t *m, const pol_award_t *prev, int64_t now,
			 int n_start, pol_action_type_t type)
{
	pol_award_t *a = pol_award_create();
	pol_actions_t acts = { 0 };
	const char *names[] = { "x" };
	int i;

	assert_non_null(a);
	assert_int_equal(pol_award_set_start_window(a, 10), 0);
	for (i = 1; i <= n_start; i++)
		assert_true(pol_actions_add(&acts, type, i, NULL, 0, "won") >=
			    0);
	assert_int_equal(pol_award_build(a, &m->snap, &acts, NULL, names, NULL,
					 NULL, NULL, 1, prev, now, 60),
			 0);
	pol_actions_free(&acts);
	return a;
}

static bool won(const pol_award_t *a, int64_t id)
{
	return pol_award_find(a, id)->flags & POL_AWARD_WON;
}

/*
 * A winner that the policy keeps re-awarding (it models only GPUs) but
 * Slurm never starts (short of CPUs, memory, licenses...) loses its award
 * after the start window and is backed off, longer at each expiry: it
 * cannot rank first for ever and stop the main scheduler.
 */
static void test_backoff_unstarted_winner(void **state)
{
	int gpus[] = { 4 };
	mini_t m;
	pol_award_t *p[8] = { NULL };
	int64_t t[] = { 100, 105, 111, 150, 171, 175, 182, 301 };
	int i;

	(void) state;
	mini_init(&m, 0xff, 1, gpus);
	for (i = 0; i < 8; i++)
		p[i] = pass(&m, i ? p[i - 1] : NULL, t[i], 1, POL_ACT_START);
	assert_true(won(p[0], 1));  /* 100: won */
	assert_true(won(p[1], 1));  /* 105: within its 10 s */
	assert_false(won(p[2], 1)); /* 111: expired unstarted */
	assert_int_equal(pol_award_find(p[2], 1)->strikes, 1);
	assert_int_equal(pol_award_find(p[2], 1)->backoff_until, 111 + 60);
	assert_int_equal(pol_award_n_backed_off(p[2]), 1);
	assert_false(won(p[3], 1)); /* 150: still backed off */
	assert_true(won(p[4], 1));  /* 171: the wait is over */
	assert_true(won(p[5], 1));
	assert_false(won(p[6], 1)); /* 182: second expiry, waits 120 s */
	assert_int_equal(pol_award_find(p[6], 1)->strikes, 2);
	assert_int_equal(pol_award_find(p[6], 1)->backoff_until, 182 + 120);
	assert_false(won(p[7], 1)); /* 301 < 302 */
	for (i = 0; i < 8; i++)
		pol_award_destroy(&p[i]);

	/* a HOLD winner (waiting for a loser's GPUs) has keep_s, not the
	 * start window; after keep_s it is backed off too */
	mini_init(&m, 0, 1, gpus);
	m.run[0].id = 9, m.run[0].tenant = 0, m.run[0].total_gpus = 8;
	m.run[0].requeueable = true;
	p[0] = pass(&m, NULL, 100, 1, POL_ACT_HOLD);
	/* no lease table: the runner is not LOST, so the cap is 0 GPUs */
	assert_false(won(p[0], 1));
	assert_int_equal(pol_award_n_capped(p[0]), 1);
	assert_int_equal(pol_award_gpu_cap(p[0]), 0);
	pol_award_destroy(&p[0]);
	m.node.free = 0xff;
	p[0] = pass(&m, NULL, 100, 1, POL_ACT_HOLD);
	p[1] = pass(&m, p[0], 150, 1, POL_ACT_HOLD);
	p[2] = pass(&m, p[1], 161, 1, POL_ACT_HOLD);
	assert_true(won(p[1], 1));
	assert_false(won(p[2], 1));
	assert_int_equal(pol_award_find(p[2], 1)->strikes, 1);
	for (i = 0; i < 3; i++)
		pol_award_destroy(&p[i]);
}

/* The pending winners together never hold more GPUs than are free (plus
 * what requeueable lease losers give back); older awards first. */
static void test_never_more_gpus_than_free(void **state)
{
	int gpus[] = { 4, 4, 2 };
	mini_t m;
	pol_award_t *a, *b;

	(void) state;
	mini_init(&m, 0x0f, 3, gpus); /* 4 free */
	a = pass(&m, NULL, 100, 3, POL_ACT_START);
	assert_int_equal(pol_award_gpu_cap(a), 4);
	assert_true(won(a, 1));
	assert_false(won(a, 2));
	assert_false(won(a, 3)); /* 2 GPUs, but none left */
	assert_int_equal(pol_award_n_won(a), 1);
	assert_int_equal(pol_award_n_capped(a), 2);
	assert_int_equal(pol_award_app_find(a, "x")->won_gpus, 4);
	/* capped is not a strike */
	assert_int_equal(pol_award_find(a, 2)->strikes, 0);
	pol_award_destroy(&a);

	/* job 2's award is older (won at 95, alone): it keeps its GPUs at
	 * 100, although job 1 comes first in submit order */
	{
		int g2[] = { 4 };
		mini_t m2;
		pol_award_t *old;

		mini_init(&m2, 0x0f, 1, g2);
		m2.pend[0].id = 2;
		{
			pol_actions_t acts = { 0 };
			const char *names[] = { "x" };

			old = pol_award_create();
			assert_true(pol_actions_add(&acts, POL_ACT_START, 2,
						    NULL, 0, "won") >= 0);
			assert_int_equal(pol_award_build(old, &m2.snap, &acts,
							 NULL, names, NULL,
							 NULL, NULL, 1, NULL,
							 95, 60),
					 0);
			pol_actions_free(&acts);
		}
		b = pass(&m, old, 100, 3, POL_ACT_START);
		assert_true(won(b, 2));
		assert_false(won(b, 1));
		assert_false(won(b, 3));
		pol_award_destroy(&old);
		pol_award_destroy(&b);
	}

	/* a requeueable running job that lost its lease gives its GPUs to
	 * the cap */
	mini_init(&m, 0x0f, 3, gpus);
	m.run[0].id = 9, m.run[0].tenant = 0, m.run[0].total_gpus = 4;
	m.run[0].requeueable = true;
	m.snap.n_running = 1;
	{
		pol_award_t *c = pol_award_create();
		pol_actions_t acts = { 0 };
		const char *names[] = { "x" };
		int i;

		for (i = 1; i <= 3; i++)
			assert_true(pol_actions_add(&acts, POL_ACT_START, i,
						    NULL, 0, "won") >= 0);
		assert_true(pol_actions_add(&acts, POL_ACT_PREEMPT, 9, NULL, 0,
					    "lost") >= 0);
		assert_int_equal(pol_award_build(c, &m.snap, &acts, NULL, names,
						 NULL, NULL, NULL, 1, NULL, 100,
						 60),
				 0);
		assert_int_equal(pol_award_gpu_cap(c), 8);
		assert_true(won(c, 1));
		assert_true(won(c, 2));
		assert_false(won(c, 3));
		pol_actions_free(&acts);
		pol_award_destroy(&c);
	}
	/* no cluster in the snapshot: no cap */
	m.snap.cluster = NULL;
	m.snap.n_running = 0;
	a = pass(&m, NULL, 100, 3, POL_ACT_START);
	assert_int_equal(pol_award_gpu_cap(a), -1);
	assert_int_equal(pol_award_n_won(a), 3);
	pol_award_destroy(&a);
}

/* AppDefinition=user: thousands of apps, each found through the name
 * index; re-adding one updates it in place. */
static void test_many_apps_indexed(void **state)
{
	pol_award_t *a = pol_award_create();
	char name[32];
	int i;

	(void) state;
	for (i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "user%04d", i);
		assert_int_equal(pol_award_app(a, name, 1.0 + i, i, 10), i);
	}
	assert_int_equal(pol_award_n_apps(a), 5000);
	for (i = 0; i < 5000; i++) {
		const pol_award_app_t *ap;

		snprintf(name, sizeof(name), "user%04d", i);
		ap = pol_award_app_find(a, name);
		assert_non_null(ap);
		assert_string_equal(ap->name, name);
		assert_true(ap->credit == (double) i);
	}
	assert_null(pol_award_app_find(a, "user5000"));
	assert_null(pol_award_app_find(a, ""));
	assert_null(pol_award_app_find(a, NULL));
	assert_int_equal(pol_award_app(a, "user0042", 7.0, 1, 1), 42);
	assert_true(pol_award_app_find(a, "user0042")->rho == 7.0);
	assert_int_equal(pol_award_n_apps(a), 5000);
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
		cmocka_unit_test(test_backoff_unstarted_winner),
		cmocka_unit_test(test_never_more_gpus_than_free),
		cmocka_unit_test(test_many_apps_indexed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
