/*
 * test_loan_wait.c - pol_loan_reclaim_wait: when to reclaim and whom,
 * chosen together, on hand-computed cases (checkpoints every 1800 s, a
 * 120-s restart, polls of 60 s).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pol_loan.h"

#define MJ 4

typedef struct wcase {
	pol_loan_job_t jobs[MJ];
	int nodes[MJ];
	int gpus[MJ];
	int64_t run[MJ];
	unsigned char back[MJ];
	int action[MJ], shrink_by[MJ];
	pol_loan_reclaim_in_t in;
	pol_loan_wait_in_t w;
	pol_loan_reclaim_out_t out;
} wcase_t;

/* n jobs, job j on node node[j] with gpus[j] GPUs, run for run[j] s */
static void setup(wcase_t *x, int n_loaned, int n, const int *node,
		  const int *gpus, const int64_t *run, int64_t max_wait)
{
	int j;

	memset(x, 0, sizeof(*x));
	for (j = 0; j < n; j++) {
		x->nodes[j] = node[j];
		x->gpus[j] = gpus[j];
		x->run[j] = run[j];
		x->jobs[j] = (pol_loan_job_t){ .id = j + 1,
					       .cost = 99, /* ignored */
					       .n_nodes = 1,
					       .nodes = &x->nodes[j],
					       .requeue = true };
	}
	x->in.n_loaned = n_loaned;
	x->in.need = 1;
	x->in.jobs = x->jobs;
	x->in.n_jobs = n;
	x->in.order = POL_LOAN_LEAST_COST;
	x->in.fewest_first = true;
	x->w.gpus = x->gpus;
	x->w.run_s = x->run;
	x->w.ckpt_s = 1800;
	x->w.restart_s = 120;
	x->w.step_s = 60;
	x->w.max_wait_s = max_wait;
	x->out.node_back = x->back;
	x->out.action = x->action;
	x->out.shrink_by = x->shrink_by;
}

/* run the choice and check the wait, each job's action (the nodes back are
 * those of the preempted jobs), the victims and their GPU-hours */
static void expect(wcase_t *x, int64_t want_w, const int *want_act,
		   double want_lost)
{
	int64_t w = -7;
	int j, v, n_pre = 0;

	assert_int_equal(pol_loan_reclaim_wait(&x->in, &x->w, &x->out, &w), 0);
	assert_int_equal(w, want_w);
	for (j = 0; j < x->in.n_jobs; j++) {
		assert_int_equal(x->action[j], want_act[j]);
		n_pre += want_act[j] == POL_LOAN_PREEMPT;
	}
	for (v = 0; v < x->in.n_loaned; v++) {
		int back = 0;

		for (j = 0; j < x->in.n_jobs; j++)
			back |= x->nodes[j] == v &&
				want_act[j] == POL_LOAN_PREEMPT;
		assert_int_equal(x->back[v], back);
	}
	assert_int_equal(x->out.preempted, n_pre);
	assert_float_equal(x->out.cost, want_lost / 3600, 1e-12);
}

/* A (1 GPU, run 960 s) checkpoints 840 s from now; B (8 GPUs, run
 * 100 s) is dearer at any time.  Up to 900 s: wait 840 s, then A loses
 * only the restart, 120/3600 GPU-h.  Up to 600 s: A now, 1080/3600. */
static void test_wait_for_checkpoint(void **state)
{
	const int node[2] = { 0, 1 }, gpus[2] = { 1, 8 };
	const int64_t run[2] = { 960, 100 };
	const int act[2] = { POL_LOAN_PREEMPT, POL_LOAN_KEEP };
	wcase_t x;

	(void) state;
	setup(&x, 2, 2, node, gpus, run, 900);
	expect(&x, 840, act, 120);
	setup(&x, 2, 2, node, gpus, run, 600);
	expect(&x, 0, act, 1080);
}

/* The count comes first: node 0 holds X and Y (1 GPU each, 10 s before a
 * checkpoint: 2 x 170/3600 at w = 60), node 1 one 8-GPU job Z that just
 * started (8 x 120/3600 now, more later).  One victim: Z now. */
static void test_wait_fewest_first(void **state)
{
	const int node[3] = { 0, 0, 1 }, gpus[3] = { 1, 1, 8 };
	const int64_t run[3] = { 1790, 1790, 0 };
	const int act[3] = { POL_LOAN_KEEP, POL_LOAN_KEEP, POL_LOAN_PREEMPT };
	wcase_t x;

	(void) state;
	setup(&x, 2, 3, node, gpus, run, 900);
	expect(&x, 0, act, 8 * 120);
}

/* Two jobs on each node, one GPU each, up to 900 s.  Node 0: X (run
 * 1740) checkpoints at w = 60, Y (run 1080) at w = 720; each job's own
 * best sums to 120 + 120 s, but at one time the pair loses at best 900 s
 * (w = 720: X 720 - 60 + 120 = 780, Y 120).  Node 1: P and Q (run 1490)
 * checkpoint together at w = 310, so at w = 360 they lose 2 x 170 = 340 s.
 * Valuing each job at its own best time would take node 0 (240 < 340)
 * and lose 900 s; together: node 1 at w = 360, 340 s. */
static void test_wait_joint_not_per_job(void **state)
{
	const int node[4] = { 0, 0, 1, 1 }, gpus[4] = { 1, 1, 1, 1 };
	const int64_t run[4] = { 1740, 1080, 1490, 1490 };
	const int act[4] = { POL_LOAN_KEEP, POL_LOAN_KEEP, POL_LOAN_PREEMPT,
			     POL_LOAN_PREEMPT };
	wcase_t x;

	(void) state;
	setup(&x, 2, 4, node, gpus, run, 900);
	expect(&x, 360, act, 340);
}

static void test_wait_bad_input(void **state)
{
	const int node[1] = { 0 }, gpus[1] = { 1 };
	const int64_t run[1] = { 10 };
	wcase_t x;
	int64_t w;

	(void) state;
	setup(&x, 1, 1, node, gpus, run, 900);
	x.w.step_s = 0;
	errno = 0;
	assert_int_equal(pol_loan_reclaim_wait(&x.in, &x.w, &x.out, &w), -1);
	assert_int_equal(errno, EINVAL);
	setup(&x, 1, 1, node, gpus, run, -1);
	assert_int_equal(pol_loan_reclaim_wait(&x.in, &x.w, &x.out, &w), -1);
	setup(&x, 1, 1, node, gpus, run, 0);
	x.w.run_s = NULL;
	assert_int_equal(pol_loan_reclaim_wait(&x.in, &x.w, &x.out, &w), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wait_for_checkpoint),
		cmocka_unit_test(test_wait_fewest_first),
		cmocka_unit_test(test_wait_joint_not_per_job),
		cmocka_unit_test(test_wait_bad_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
