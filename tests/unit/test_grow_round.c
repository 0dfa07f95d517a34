/*
 * test_grow_round.c - the grow decision of a loan round (pol_loan_grow.h):
 * the gate (quiet, a grown job not restarted or in its grace, the queue
 * first), who is a candidate, the estimates and the knapsack's choice,
 * table-driven.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pol_loan_grow.h"

#define NOW 1796153774

#pragma GCC diagnostic ignored "-Woverride-init"

/* a running elastic job on 2 of 16 nodes, 1 h in, no limit */
#define ELASTIC                                                                \
	.running = true, .train = true, .elastic = true, .requeue = true,      \
	.mark_free = true, .num_nodes = 2, .max_nodes = 16,                    \
	.start = NOW - 3600, .gpus_per_node = 8
/* a training job pending for resources */
#define WAITING                                                                \
	.pending = true, .train = true, .waits_for_nodes_reason = true,        \
	.num_nodes = 1

static pol_grow_in_t base_in(const pol_grow_job_t *jobs, int n)
{
	return (pol_grow_in_t){ .jobs = jobs,
				.n_jobs = n,
				.idle_nodes = 13,
				.now = NOW,
				.ckpt_s = 1800,
				.restart_s = 120,
				.cred_wait_s = 120,
				.min_gain_s = 600,
				.serial = 0.05 };
}

static const struct {
	const char *name;
	pol_grow_job_t other; /* beside one elastic job */
	bool quiet;
	int waiting;
	pol_grow_gate_t want;
} gates[] = {
	{ "nothing waits: go",
	  { .running = true, .train = true },
	  false,
	  0,
	  POL_GROW_GO },
	{ "a reclaim under way", { 0 }, true, 0, POL_GROW_QUIET },
	{ "a grown job has not restarted (or is in its grace)",
	  { 0 },
	  false,
	  1,
	  POL_GROW_WAITING },
	{ "the queue first: a training job waits for nodes",
	  { WAITING },
	  false,
	  0,
	  POL_GROW_QUEUE },
	{ "a held job does not count",
	  { WAITING, .held = true },
	  false,
	  0,
	  POL_GROW_GO },
	{ "a job waiting for a dependency or begin time does not count",
	  { WAITING, .waits_for_nodes_reason = false },
	  false,
	  0,
	  POL_GROW_GO },
	{ "a job of another partition does not count",
	  { WAITING, .train = false },
	  false,
	  0,
	  POL_GROW_GO },
};

static void test_grow_gate_table(void **state)
{
	(void) state;
	for (size_t i = 0; i < sizeof(gates) / sizeof(gates[0]); i++) {
		pol_grow_job_t jobs[2] = { { ELASTIC }, gates[i].other };
		pol_grow_in_t in = base_in(jobs, 2);
		int blocking = 7;
		pol_grow_gate_t g;

		in.quiet = gates[i].quiet;
		in.waiting = gates[i].waiting;
		g = pol_grow_gate(&in, &blocking);
		if (g != gates[i].want)
			fail_msg("%s: gate %d, want %d", gates[i].name, g,
				 gates[i].want);
		assert_int_equal(blocking, g == POL_GROW_QUEUE ? 1 : -1);
	}
}

static const struct {
	const char *name;
	pol_grow_job_t j;
	int max_requeues;
	bool want;
} cands[] = {
	{ "running elastic below its maximum", { ELASTIC }, 0, true },
	{ "at its maximum", { ELASTIC, .max_nodes = 2 }, 0, false },
	{ "maximum unknown", { ELASTIC, .max_nodes = 0 }, 0, false },
	{ "not elastic", { ELASTIC, .elastic = false }, 0, false },
	{ "not a training partition's", { ELASTIC, .train = false }, 0, false },
	{ "cannot be requeued", { ELASTIC, .requeue = false }, 0, false },
	{ "an AdminComment that is not Agora's",
	  { ELASTIC, .mark_free = false },
	  0,
	  false },
	{ "pending", { ELASTIC, .running = false, .pending = true }, 0, false },
	{ "one requeue left of 2: a grow would spend it",
	  { ELASTIC, .restarts = 1 },
	  2,
	  false },
	{ "two left of 3", { ELASTIC, .restarts = 1 }, 3, true },
};

static void test_grow_candidate_table(void **state)
{
	(void) state;
	for (size_t i = 0; i < sizeof(cands) / sizeof(cands[0]); i++)
		if (pol_grow_candidate(&cands[i].j, cands[i].max_requeues) !=
		    cands[i].want)
			fail_msg("%s: want %d", cands[i].name, cands[i].want);
}

/* One candidate and 13 idle nodes: it is grown, its estimates follow
 * the rules (time left = time run, resize = since checkpoint + restart +
 * credential wait + min gain); a job that cannot be grown gets nothing. */
static void test_grow_choose_estimates_and_sizes(void **state)
{
	pol_grow_job_t jobs[3] = { { ELASTIC },
				   { ELASTIC, .elastic = false },
				   { ELASTIC, .start = NOW - 100 } };
	pol_grow_job_out_t jo[3];
	pol_grow_out_t out = { .jobs = jo };
	pol_grow_in_t in = base_in(jobs, 3);

	(void) state;
	assert_int_equal(pol_grow_choose(&in, &out), 0);
	assert_int_equal(out.n_candidates, 2);
	assert_true(jo[0].candidate);
	assert_false(jo[1].candidate);
	assert_int_equal(jo[1].extra, 0);
	/* ran 3600 s: left 3600, checkpoint 1800 -> 0 s since it */
	assert_true(jo[0].left_s > 3599 && jo[0].left_s < 3601);
	assert_true(jo[0].resize_s > 839 && jo[0].resize_s < 841);
	/* the long one is worth growing; the 100-s one is not (its
	 * resize costs more than its 100 s left) */
	assert_true(jo[0].extra > 0 && jo[0].extra <= 13);
	assert_int_equal(jo[2].extra, 0);
	assert_int_equal(out.n_grown, 1);
	assert_true(jo[0].gain_s > 600);
	/* no idle node: nobody */
	in.idle_nodes = 0;
	assert_int_equal(pol_grow_choose(&in, &out), 0);
	assert_int_equal(out.n_grown, 0);
	assert_int_equal(jo[0].extra, 0);
	/* a time limit caps the time left */
	jobs[0].limit_s = 3600 + 600;
	in.idle_nodes = 13;
	assert_int_equal(pol_grow_choose(&in, &out), 0);
	assert_true(jo[0].left_s <= 600 + 1);
	assert_int_equal(pol_grow_give_up_s(120, 10), 230);
	out.jobs = NULL;
	assert_int_equal(pol_grow_choose(&in, &out), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grow_gate_table),
		cmocka_unit_test(test_grow_candidate_table),
		cmocka_unit_test(test_grow_choose_estimates_and_sizes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
