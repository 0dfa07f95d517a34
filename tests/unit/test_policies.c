/* Unit tests of the baseline policies (pol_fifo.c, pol_backfill.c,
 * pol_las.c, pol_srtf.c): hand-computed schedules of a 5-job trace on
 * 2 nodes x 4 GPUs, and single decision passes; and of the 2D-LAS queues
 * las and tiresias share (pol_las2d.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pol_las2d.h"
#include "pol_policy.h"
#include "sim.h"

/*
 * The trace (doc/sim.md walks through it): submit, duration = time limit,
 * GPUs.  Cluster 2x4, restart cost 0, no slowdown for whole-node gangs
 * (J3 needs both nodes: LEAF level, which is its ideal level anyway).
 *
 *   J1 t=0  200 s 4 GPUs    J2 t=0  100 s 4 GPUs    J3 t=10 100 s 8 GPUs
 *   J4 t=20  50 s 4 GPUs    J5 t=60  30 s 2 GPUs
 *
 * fifo:     J3 blocks J4 and J5 until J1 ends at 200.
 * backfill (easy=1): J3 reserves both nodes at T=200; J4 (ends 150) and
 *           J5 (ends 180) fit before T on node 1 once J2 ends at 100.
 *           (Slurm's plan, the default, is in test_baselines.c.)
 * las (thresholds=200 GPU-s): J1 and J2 reach 200 GPU-s at t=50 and are
 *           preempted for J3 (queue 0); J3 reaches it at t=75 and yields
 *           to J4 and J5; then queue 1 runs in submit order.
 * srtf:     J4 (50 s) preempts J1 at 20, J5 preempts J2 at 60, J3 runs
 *           at 110 once it is the shortest.
 */
static const sim_job_t five[] = {
	{ .id = 1,
	  .submit = 0,
	  .duration = 200,
	  .gpus = 4,
	  .time_limit = 200,
	  .dataset = -1 },
	{ .id = 2,
	  .submit = 0,
	  .duration = 100,
	  .gpus = 4,
	  .time_limit = 100,
	  .dataset = -1 },
	{ .id = 3,
	  .submit = 10,
	  .duration = 100,
	  .gpus = 8,
	  .time_limit = 100,
	  .dataset = -1 },
	{ .id = 4,
	  .submit = 20,
	  .duration = 50,
	  .gpus = 4,
	  .time_limit = 50,
	  .dataset = -1 },
	{ .id = 5,
	  .submit = 60,
	  .duration = 30,
	  .gpus = 2,
	  .time_limit = 30,
	  .dataset = -1 },
};

static const struct {
	const char *policy, *params;
	int64_t start[5], finish[5];
	int preemptions;
} five_expect[] = {
	{ "fifo",
	  NULL,
	  { 0, 0, 200, 300, 300 },
	  { 200, 100, 300, 350, 330 },
	  0 },
	{ "backfill",
	  "easy=1",
	  { 0, 0, 200, 100, 150 },
	  { 200, 100, 300, 150, 180 },
	  0 },
	{ "las",
	  "thresholds=200",
	  { 0, 0, 50, 75, 75 },
	  { 255, 175, 330, 125, 105 },
	  3 },
	{ "srtf", NULL, { 0, 0, 110, 20, 60 }, { 370, 110, 210, 70, 90 }, 3 },
};

static void test_policies_five_job_trace_hand_computed(void **state)
{
	pol_cluster_t *c = pol_cluster_uniform(2, 4, 16);
	size_t i;
	int k;

	(void) state;
	for (i = 0; i < sizeof(five_expect) / sizeof(five_expect[0]); i++) {
		agora_err_t err = { { 0 } };
		pol_policy_t *p = pol_policy_create(five_expect[i].policy,
						    five_expect[i].params, NULL,
						    &err);
		sim_params_t prm;
		sim_result_t res;

		assert_non_null(p);
		sim_params_default(&prm);
		prm.restart_s = 0;
		prm.ckpt_s = SIM_CKPT_CONTINUOUS; /* progress is never lost */
		if (sim_run(c, five, 5, p, &prm, &res, &err))
			fail_msg("%s: %s", five_expect[i].policy, err.text);
		for (k = 0; k < 5; k++) {
			if (res.jobs[k].first_start !=
				    five_expect[i].start[k] ||
			    res.jobs[k].finish != five_expect[i].finish[k])
				fail_msg(
					"%s: J%d started %lld finished %lld, expected %lld %lld",
					five_expect[i].policy, k + 1,
					(long long) res.jobs[k].first_start,
					(long long) res.jobs[k].finish,
					(long long) five_expect[i].start[k],
					(long long) five_expect[i].finish[k]);
		}
		assert_int_equal(res.preemptions, five_expect[i].preemptions);
		sim_result_free(&res);
		pol_policy_destroy(&p);
	}
	pol_cluster_destroy(&c);
}

/* a snapshot helper: cluster c, pending jobs of the given sizes, submit =
 * index, limit 100 s */
static void make_pending(pol_job_t *v, const int *gpus, int n)
{
	int i;

	memset(v, 0, (size_t) n * sizeof(*v));
	for (i = 0; i < n; i++) {
		v[i].id = i;
		v[i].total_gpus = v[i].min_gpus = v[i].max_gpus = gpus[i];
		v[i].submit = i;
		v[i].time_limit = 100;
		v[i].remaining = 100;
		v[i].requeueable = true;
		v[i].dataset = -1;
	}
}

static int count(const pol_actions_t *a, pol_action_type_t t)
{
	int i, n = 0;

	for (i = 0; i < a->n; i++)
		n += a->v[i].type == t;
	return n;
}

static void test_fifo_head_of_line_blocks_and_priority_orders(void **state)
{
	pol_cluster_t *c = pol_cluster_uniform(2, 4, 16);
	static const int g[] = { 2, 8, 1, 1 };
	pol_job_t pend[4];
	pol_snapshot_t snap = { c, pend, 4, NULL, 0, 0 };
	pol_actions_t acts = { 0 };
	pol_policy_t *p = pol_policy_create("fifo", NULL, NULL, NULL);

	(void) state;
	make_pending(pend, g, 4);
	assert_int_equal(pol_policy_decide(p, &snap, 0, &acts), 0);
	/* job 0 starts, job 1 (8 GPUs, 6 free) blocks jobs 2 and 3 */
	assert_int_equal(count(&acts, POL_ACT_START), 1);
	assert_int_equal(acts.v[0].job_id, 0);
	assert_int_equal(acts.v[1].type, POL_ACT_HOLD);
	assert_int_equal(acts.v[1].job_id, 1);
	/* with a higher priority, job 3 goes first */
	pol_actions_clear(&acts);
	pend[3].priority = 10;
	assert_int_equal(pol_policy_decide(p, &snap, 0, &acts), 0);
	assert_int_equal(acts.v[0].job_id, 3);
	assert_int_equal(acts.v[1].job_id, 0);
	/* the snapshot's cluster is never modified */
	assert_int_equal(pol_cluster_free_gpus(c), 8);
	pol_actions_free(&acts);
	pol_policy_destroy(&p);
	pol_cluster_destroy(&c);
}

/* one running job holds node 0 until t=100; head needs both nodes */
static void test_backfill_never_delays_the_head(void **state)
{
	pol_cluster_t *c = pol_cluster_uniform(2, 4, 16);
	static const int g[] = { 8, 2, 2 };
	pol_job_t pend[3], run;
	pol_alloc_part_t part = { 0, 0x0f };
	pol_snapshot_t snap = { c, pend, 3, &run, 1, 0 };
	pol_actions_t acts = { 0 };
	pol_policy_t *p = pol_policy_create("backfill", "easy=1", NULL, NULL);

	(void) state;
	make_pending(pend, g, 3);
	memset(&run, 0, sizeof(run));
	run.id = 99;
	run.total_gpus = 4;
	run.start = 0;
	run.time_limit = 100;
	run.alloc.parts = &part;
	run.alloc.n_parts = 1;
	c->nodes[0].free = 0;
	pend[1].time_limit = 50;  /* ends at 60 <= T = 100: may start */
	pend[2].time_limit = 500; /* ends after T on node 1: must wait */
	assert_int_equal(pol_policy_decide(p, &snap, 10, &acts), 0);
	assert_int_equal(count(&acts, POL_ACT_START), 1);
	assert_int_equal(acts.v[0].type, POL_ACT_HOLD);
	assert_int_equal(acts.v[0].job_id, 0);
	assert_true(acts.v[0].score == 100); /* shadow time */
	assert_int_equal(acts.v[1].job_id, 1);
	pol_actions_free(&acts);
	pol_policy_destroy(&p);
	/* beyond the window there is no reservation: job 2 starts too */
	p = pol_policy_create("backfill", "easy=1,window=50", NULL, NULL);
	assert_int_equal(pol_policy_decide(p, &snap, 10, &acts), 0);
	assert_int_equal(count(&acts, POL_ACT_START), 2);
	pol_actions_free(&acts);
	pol_policy_destroy(&p);
	/* max_job_test=1 tests only job 1 */
	p = pol_policy_create("backfill", "easy=1,window=50,max_job_test=1",
			      NULL, NULL);
	assert_int_equal(pol_policy_decide(p, &snap, 10, &acts), 0);
	assert_int_equal(count(&acts, POL_ACT_START), 1);
	pol_actions_free(&acts);
	pol_policy_destroy(&p);
	pol_cluster_destroy(&c);
}

static void test_las_wakes_at_threshold_and_skips_misfits(void **state)
{
	pol_cluster_t *c = pol_cluster_uniform(1, 4, 16);
	static const int g[] = { 8, 1, 2 };
	pol_job_t pend[3];
	pol_snapshot_t snap = { c, pend, 3, NULL, 0, 0 };
	pol_actions_t acts = { 0 };
	pol_policy_t *p = pol_policy_create("las", "thresholds=100:1000", NULL,
					    NULL);

	(void) state;
	make_pending(pend, g, 3);
	pend[2].attained = 50; /* queue 0 still: 50 < 100 */
	assert_int_equal(pol_policy_decide(p, &snap, 1000, &acts), 0);
	/* job 0 can never fit 4 GPUs: skipped, jobs 1 and 2 start */
	assert_int_equal(count(&acts, POL_ACT_START), 2);
	/* job 2 (2 GPUs, 50 GPU-s) crosses 100 at +25 s; job 1 at +100 s */
	assert_int_equal(acts.wakeup, 1025);
	pol_actions_free(&acts);
	pol_policy_destroy(&p);
	pol_cluster_destroy(&c);
}

static void test_las2d_thresholds_queues_and_wakeups(void **state)
{
	static const char *const bad[] = { "thresholds=5:3", "thresholds=0",
					   "thresholds=100:100",
					   "thresholds=1:2:3:4:5:6:7:8:9",
					   "thresholds=x" };
	pol_las2d_t q;
	pol_actions_t out = { 0 };
	agora_err_t err = { 0 };
	size_t i;

	(void) state;
	/* no key: one threshold, the caller's default */
	assert_int_equal(pol_las2d_init(&q, "las", NULL, 3600, &err), 0);
	assert_int_equal(q.n_thr, 1);
	assert_true(q.thr[0] == 3600);
	assert_int_equal(pol_las2d_init(&q, "las", "thresholds=1:2:3:4:5:6:7:8",
					3600, &err),
			 0);
	assert_int_equal(q.n_thr, POL_LAS2D_MAX_THR);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err.text[0] = '\0';
		errno = 0;
		assert_int_equal(
			pol_las2d_init(&q, "tiresias", bad[i], 3600, &err), -1);
		assert_int_equal(errno, EINVAL);
		assert_non_null(
			strstr(err.text, "policy tiresias: thresholds"));
	}
	assert_string_equal(
		err.text,
		"policy tiresias: thresholds: bad list 'x' (at most 8 numbers separated by ':')");
	assert_int_equal(
		pol_las2d_init(&q, "las", "thresholds=5:3", 3600, &err), -1);
	assert_string_equal(
		err.text,
		"policy las: thresholds: must be positive and increasing");

	/* queue i holds [thr[i-1], thr[i]) */
	assert_int_equal(
		pol_las2d_init(&q, "las", "thresholds=100:1000", 3600, &err),
		0);
	assert_int_equal(pol_las2d_queue(&q, 0), 0);
	assert_int_equal(pol_las2d_queue(&q, 99.5), 0);
	assert_int_equal(pol_las2d_queue(&q, 100), 1);
	assert_int_equal(pol_las2d_queue(&q, 999), 1);
	assert_int_equal(pol_las2d_queue(&q, 1000), 2);
	assert_int_equal(pol_las2d_queue(&q, 1e12), 2);

	/* wake at the first whole second a running job crosses its
	 * threshold: 50 GPU-s on 2 GPUs crosses 100 at +25 s, 97.5 GPU-s
	 * at +1.25 s, so at +2 s */
	pol_las2d_begin(&q, 1000);
	pol_las2d_end(&q, &out);
	assert_int_equal(out.wakeup, 0);
	pol_las2d_on_run(&q, 50, 2);
	assert_int_equal(q.wake, 1025);
	pol_las2d_on_run(&q, 100, 4); /* queue 1: 1000 at +225 s */
	assert_int_equal(q.wake, 1025);
	pol_las2d_on_run(&q, 97.5, 2);
	assert_int_equal(q.wake, 1002);
	pol_las2d_on_run(&q, 1000, 1); /* last queue: nothing to cross */
	pol_las2d_on_run(&q, 0, 0);    /* no GPUs: never crosses */
	assert_int_equal(q.wake, 1002);
	/* an asked time not after now becomes now + 1 */
	pol_las2d_wake(&q, 900);
	assert_int_equal(q.wake, 1001);
	pol_las2d_wake(&q, 1500);
	assert_int_equal(q.wake, 1001);
	/* the pass's wakeup replaces a later one, not an earlier one */
	out.wakeup = 5000;
	pol_las2d_end(&q, &out);
	assert_int_equal(out.wakeup, 1001);
	out.wakeup = 1000;
	pol_las2d_end(&q, &out);
	assert_int_equal(out.wakeup, 1000);
	/* a new pass forgets the last one's wakeup */
	pol_las2d_begin(&q, 2000);
	assert_int_equal(q.wake, 0);
	pol_las2d_on_run(&q, 0, 1);
	assert_int_equal(q.wake, 2100);
}

static void test_srtf_orders_by_remaining(void **state)
{
	pol_cluster_t *c = pol_cluster_uniform(1, 4, 16);
	static const int g[] = { 4, 4, 4 };
	pol_job_t pend[3];
	pol_snapshot_t snap = { c, pend, 3, NULL, 0, 0 };
	pol_actions_t acts = { 0 };
	pol_policy_t *p = pol_policy_create("srtf", NULL, NULL, NULL);

	(void) state;
	make_pending(pend, g, 3);
	pend[0].remaining = 300;
	pend[1].remaining = 30;
	pend[2].remaining = 200;
	assert_int_equal(pol_policy_decide(p, &snap, 0, &acts), 0);
	assert_int_equal(count(&acts, POL_ACT_START), 1);
	assert_int_equal(acts.v[0].job_id, 1);
	pol_actions_free(&acts);
	pol_policy_destroy(&p);
	pol_cluster_destroy(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policies_five_job_trace_hand_computed),
		cmocka_unit_test(
			test_fifo_head_of_line_blocks_and_priority_orders),
		cmocka_unit_test(test_backfill_never_delays_the_head),
		cmocka_unit_test(test_las_wakes_at_threshold_and_skips_misfits),
		cmocka_unit_test(test_las2d_thresholds_queues_and_wakeups),
		cmocka_unit_test(test_srtf_orders_by_remaining),
	};

	return cmocka_run_group_tests_name("policies", tests, NULL, NULL);
}
