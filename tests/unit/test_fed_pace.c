/*
 * test_fed_pace.c - when agorad's next round starts, and the id sets
 * (refusals logged, pins in flight) (pol_fed_pace.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "pol_fed_pace.h"

static void test_round_wait(void **state)
{
	(void) state;
	/* nothing pinned: the rest of the interval */
	assert_true(pol_fed_round_wait_s(1.0, 0.25, 0) == 0.75);
	assert_true(pol_fed_round_wait_s(5.0, 0.0, 0) == 5.0);
	/* a round longer than the interval: the next at once */
	assert_true(pol_fed_round_wait_s(1.0, 3.5, 0) == 0.0);
	/* a clock step back: never more than the interval */
	assert_true(pol_fed_round_wait_s(1.0, -2.0, 0) == 1.0);
	/* a round that pinned jobs: the next at once (a burst) */
	assert_true(pol_fed_round_wait_s(1.0, 0.25, 1) == 0.0);
	assert_true(pol_fed_round_wait_s(30.0, 0.1, 750) == 0.0);
	/* failures only (pinned 0, or a bad count): the interval */
	assert_true(pol_fed_round_wait_s(1.0, 0.5, -1) == 0.5);
}

static void test_idset(void **state)
{
	pol_fed_idset_t s = { 0 };
	uint32_t keep[] = { 7, 40 };

	(void) state;
	assert_true(pol_fed_idset_add(&s, 40));
	assert_true(pol_fed_idset_add(&s, 7));
	assert_true(pol_fed_idset_add(&s, 99));
	/* the second time: not new (logged already) */
	assert_false(pol_fed_idset_add(&s, 40));
	assert_false(pol_fed_idset_add(&s, 7));
	assert_false(pol_fed_idset_add(&s, 99));
	assert_int_equal(s.n, 3);
	/* kept sorted */
	assert_int_equal(s.v[0], 7);
	assert_int_equal(s.v[1], 40);
	assert_int_equal(s.v[2], 99);
	/* 99 is no longer refused: dropped, so a later refusal logs again */
	pol_fed_idset_keep(&s, keep, 2);
	assert_int_equal(s.n, 2);
	assert_false(pol_fed_idset_add(&s, 7));
	assert_true(pol_fed_idset_add(&s, 99));
	/* none refused: empty */
	pol_fed_idset_keep(&s, NULL, 0);
	assert_int_equal(s.n, 0);
	assert_true(pol_fed_idset_add(&s, 7));
	pol_fed_idset_free(&s);
	assert_null(s.v);
	assert_int_equal(s.n, 0);
}

/* The pins in flight: a later round leaves their jobs alone until the
 * step is collected (has, del). */
static void test_idset_inflight(void **state)
{
	pol_fed_idset_t s = { 0 };

	(void) state;
	assert_false(pol_fed_idset_has(&s, 5));
	pol_fed_idset_del(&s, 5); /* none: nothing */
	for (uint32_t id = 10; id < 20; id++)
		assert_true(pol_fed_idset_add(&s, id));
	assert_true(pol_fed_idset_has(&s, 10));
	assert_true(pol_fed_idset_has(&s, 19));
	assert_false(pol_fed_idset_has(&s, 9));
	assert_false(pol_fed_idset_has(&s, 20));
	/* collected: 10, 15 and 19 are the next round's again */
	pol_fed_idset_del(&s, 15);
	pol_fed_idset_del(&s, 10);
	pol_fed_idset_del(&s, 19);
	pol_fed_idset_del(&s, 19);
	assert_int_equal(s.n, 7);
	assert_false(pol_fed_idset_has(&s, 15));
	assert_false(pol_fed_idset_has(&s, 10));
	assert_false(pol_fed_idset_has(&s, 19));
	assert_true(pol_fed_idset_has(&s, 11));
	assert_true(pol_fed_idset_has(&s, 18));
	for (int i = 1; i < s.n; i++)
		assert_true(s.v[i - 1] < s.v[i]);
	pol_fed_idset_free(&s);
}

/* Many ids, in an order that is not sorted: each new once, then not. */
static void test_idset_many(void **state)
{
	pol_fed_idset_t s = { 0 };

	(void) state;
	for (uint32_t i = 0; i < 1000; i++)
		assert_true(pol_fed_idset_add(&s, (i * 7919u) % 1000u + 1));
	for (uint32_t i = 1; i <= 1000; i++)
		assert_false(pol_fed_idset_add(&s, i));
	for (int i = 1; i < s.n; i++)
		assert_true(s.v[i - 1] < s.v[i]);
	pol_fed_idset_free(&s);
}

/* A survey still reading: given up for its last answer only once the
 * round's first answer is grace old, and only while that answer is young */
static void test_survey_late(void **state)
{
	(void) state;
	/* c1 answered at 100.05, c2 still reads; c2's last answer: 98.0 */
	assert_false(
		pol_fed_survey_late(100.2, 100.05, 98.0, 10, false, 0.3, 5));
	assert_true(
		pol_fed_survey_late(100.4, 100.05, 98.0, 10, false, 0.3, 5));
	/* no answer yet this round: nobody is late */
	assert_false(pol_fed_survey_late(103.0, -1, 98.0, 10, false, 0.3, 5));
	/* no last answer (a first round, a cluster that was down) */
	assert_false(pol_fed_survey_late(100.4, 100.05, -1, 10, false, 0.3, 5));
	/* the last answer is too old: wait for this one, as before */
	assert_true(
		pol_fed_survey_late(103.0, 100.05, 98.0, 10, false, 0.3, 5));
	assert_false(
		pol_fed_survey_late(103.01, 100.05, 98.0, 10, false, 0.3, 5));
	/* max age 0: never (FedSurveyMaxAge=0) */
	assert_false(
		pol_fed_survey_late(100.4, 100.05, 100.0, 10, false, 0.3, 0));
	/* no pins on their way to it: an origin busy with its own
	 * submissions, its held jobs in this answer; waited for */
	assert_false(
		pol_fed_survey_late(100.4, 100.05, 98.0, 0, false, 0.3, 5));
	/* given up in the round before: waited for this time */
	assert_false(
		pol_fed_survey_late(100.4, 100.05, 98.0, 10, true, 0.3, 5));
	/* grace 0: at the first answer */
	assert_true(pol_fed_survey_late(100.05, 100.05, 98.0, 10, false, 0, 5));
}

/* A copy is cancelled where its origin shows the job cancelled, and
 * nowhere else. */
static void test_orphans(void **state)
{
	const uint32_t alive[5] = { 67108871, 67108876, 67108891, 67108895,
				    134217730 };
	const uint32_t cancelled[4] = { 67108895, 67108876, 1, 67108900 };
	uint32_t out[5];

	(void) state;
	assert_int_equal(pol_fed_orphans(alive, 5, cancelled, 4, out), 2);
	assert_int_equal(out[0], 67108876);
	assert_int_equal(out[1], 67108895);
	/* nothing cancelled, nothing alive */
	assert_int_equal(pol_fed_orphans(alive, 5, cancelled, 0, out), 0);
	assert_int_equal(pol_fed_orphans(alive, 0, cancelled, 4, out), 0);
	assert_int_equal(pol_fed_orphans(NULL, 5, cancelled, 4, out), 0);
	/* a running copy whose origin shows it revoked is not in the
	 * cancelled list: left alone */
	assert_int_equal(pol_fed_orphans(alive, 1, cancelled, 4, out), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_wait),
		cmocka_unit_test(test_orphans),
		cmocka_unit_test(test_survey_late),
		cmocka_unit_test(test_idset),
		cmocka_unit_test(test_idset_inflight),
		cmocka_unit_test(test_idset_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
