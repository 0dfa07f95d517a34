/*
 * Unit tests of agorad's will-run rate limit (common/fed/pol_fed_willrun.c):
 * a kept answer stands while young and the free GPUs are unchanged; the
 * shapes that need an answer are asked up to the budget, the rest wait.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "pol_fed_willrun.h"

#define T0 1000000

static void test_fresh(void **state)
{
	pol_fed_willrun_kept_t k = { .have = true,
				     .asked = T0,
				     .free_then = 16 };
	pol_fed_willrun_kept_t none = { 0 };

	(void) state;
	assert_true(pol_fed_willrun_fresh(&k, T0, 16, 10));
	assert_true(pol_fed_willrun_fresh(&k, T0 + 9, 16, 10));
	/* too old */
	assert_false(pol_fed_willrun_fresh(&k, T0 + 10, 16, 10));
	/* a job started or ended: the free GPUs changed */
	assert_false(pol_fed_willrun_fresh(&k, T0 + 1, 8, 10));
	assert_false(pol_fed_willrun_fresh(&k, T0 + 1, 24, 10));
	/* nothing kept; a clock that went back */
	assert_false(pol_fed_willrun_fresh(&none, T0, 0, 10));
	assert_false(pol_fed_willrun_fresh(&k, T0 - 1, 16, 10));
	assert_false(pol_fed_willrun_fresh(NULL, T0, 16, 10));
}

static void test_pick_budget(void **state)
{
	pol_fed_willrun_kept_t k[5] = {
		{ .have = false },
		{ .have = true, .asked = T0 - 2, .free_then = 8 },  /* stands */
		{ .have = true, .asked = T0 - 20, .free_then = 8 }, /* old */
		{ .have = false },
		{ .have = true, .asked = T0 - 1, .free_then = 8 }, /* stands */
	};
	pol_fed_willrun_act_t act[5];

	(void) state;
	assert_int_equal(pol_fed_willrun_pick(k, 5, T0, 8, 10, 2, act), 2);
	assert_int_equal(act[0], POL_FED_WILLRUN_ASK);
	assert_int_equal(act[1], POL_FED_WILLRUN_REUSE);
	assert_int_equal(act[2], POL_FED_WILLRUN_ASK);
	assert_int_equal(act[3], POL_FED_WILLRUN_DEFER);
	assert_int_equal(act[4], POL_FED_WILLRUN_REUSE);
	/* the free GPUs changed: every answer is asked again, in order */
	assert_int_equal(pol_fed_willrun_pick(k, 5, T0, 0, 10, 64, act), 5);
	for (int i = 0; i < 5; i++)
		assert_int_equal(act[i], POL_FED_WILLRUN_ASK);
	/* no budget: nothing asked, kept answers still stand */
	assert_int_equal(pol_fed_willrun_pick(k, 5, T0, 8, 10, 0, act), 0);
	assert_int_equal(act[0], POL_FED_WILLRUN_DEFER);
	assert_int_equal(act[1], POL_FED_WILLRUN_REUSE);
}

static void test_heartbeat(void **state)
{
	(void) state;
	/* never sent, or a clock that went back: due */
	assert_true(pol_fed_heartbeat_due(0, T0, 60));
	assert_true(pol_fed_heartbeat_due(T0 + 5, T0, 60));
	/* a quarter of FedAuctionTimeout */
	assert_false(pol_fed_heartbeat_due(T0, T0 + 14, 60));
	assert_true(pol_fed_heartbeat_due(T0, T0 + 15, 60));
	/* a timeout under 4 s: every round */
	assert_true(pol_fed_heartbeat_due(T0, T0, 3));
	assert_false(pol_fed_heartbeat_due(T0, T0 + 1, 8));
	assert_true(pol_fed_heartbeat_due(T0, T0 + 1, 7));
}

static void test_pin_workers(void **state)
{
	(void) state;
	assert_int_equal(pol_fed_pin_workers(0, 4, 16), 1);
	assert_int_equal(pol_fed_pin_workers(1, 4, 16), 1);
	assert_int_equal(pol_fed_pin_workers(16, 4, 16), 1);
	assert_int_equal(pol_fed_pin_workers(17, 4, 16), 2);
	assert_int_equal(pol_fed_pin_workers(64, 4, 16), 4);
	assert_int_equal(pol_fed_pin_workers(1000, 4, 16), 4);
	/* no helpers allowed, or a bad size */
	assert_int_equal(pol_fed_pin_workers(1000, 1, 16), 1);
	assert_int_equal(pol_fed_pin_workers(1000, 4, 0), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fresh),
		cmocka_unit_test(test_pick_budget),
		cmocka_unit_test(test_heartbeat),
		cmocka_unit_test(test_pin_workers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
