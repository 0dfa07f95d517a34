/*
 * Unit tests of the pins in flight (common/fed/pol_fed_inflight.c): a
 * pin counts on its winner from the pin until the winner's survey shows
 * the job's copy, or for POL_FED_INFLIGHT_MAX_S at most; and a burst
 * auctioned over two rounds does not see the first round's winners' GPUs
 * as free again.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pol_fed.h"
#include "pol_fed_inflight.h"

#define NOW 1000000

static void test_inflight_list(void **state)
{
	pol_fed_inflight_list_t l = { 0 };
	const uint32_t seen_c2[] = { 7, 2, 99 };

	(void) state;
	assert_int_equal(pol_fed_inflight_add(&l, 1, "c2", 8, NOW), 0);
	assert_int_equal(pol_fed_inflight_add(&l, 2, "c2", 8, NOW), 0);
	assert_int_equal(pol_fed_inflight_add(&l, 3, "c3", 4, NOW + 1), 0);
	assert_int_equal(pol_fed_inflight_gpus(&l, "c2"), 16);
	assert_int_equal(pol_fed_inflight_gpus(&l, "c3"), 4);
	assert_int_equal(pol_fed_inflight_gpus(&l, "c1"), 0);
	/* a re-pin replaces the job's entry */
	assert_int_equal(pol_fed_inflight_add(&l, 1, "c3", 8, NOW + 2), 0);
	assert_int_equal(l.n, 3);
	assert_int_equal(pol_fed_inflight_gpus(&l, "c2"), 8);
	assert_int_equal(pol_fed_inflight_gpus(&l, "c3"), 12);
	/* a pin kept as its step started and then failed: dropped */
	assert_int_equal(pol_fed_inflight_add(&l, 50, "c2", 2, NOW + 2), 0);
	assert_int_equal(pol_fed_inflight_gpus(&l, "c2"), 10);
	assert_int_equal(pol_fed_inflight_drop(&l, 50), 1);
	assert_int_equal(pol_fed_inflight_drop(&l, 50), 0);
	assert_int_equal(pol_fed_inflight_drop(&l, 12345), 0);
	assert_int_equal(l.n, 3);
	assert_int_equal(pol_fed_inflight_gpus(&l, "c2"), 8);
	/* c2's survey shows job 2's copy: gone; job 7 is not ours; a copy
	 * of job 3 seen on another cluster than its winner does not count */
	assert_int_equal(pol_fed_inflight_seen(&l, "c2", seen_c2, 3), 1);
	assert_int_equal(pol_fed_inflight_gpus(&l, "c2"), 0);
	assert_int_equal(pol_fed_inflight_gpus(&l, "c3"), 12);
	assert_int_equal(pol_fed_inflight_seen(&l, "c2", (uint32_t[]){ 3 }, 1),
			 0);
	assert_int_equal(pol_fed_inflight_seen(&l, "c3", NULL, 0), 0);
	/* a copy that never arrives counts for POL_FED_INFLIGHT_MAX_S */
	assert_int_equal(
		pol_fed_inflight_expire(&l, NOW + 1 + POL_FED_INFLIGHT_MAX_S,
					POL_FED_INFLIGHT_MAX_S),
		0);
	assert_int_equal(
		pol_fed_inflight_expire(&l, NOW + 2 + POL_FED_INFLIGHT_MAX_S,
					POL_FED_INFLIGHT_MAX_S),
		1); /* job 3, pinned at NOW + 1 */
	assert_int_equal(pol_fed_inflight_gpus(&l, "c3"), 8);
	/* a clock stepped back: nothing is kept from the future */
	assert_int_equal(
		pol_fed_inflight_expire(&l, NOW, POL_FED_INFLIGHT_MAX_S), 1);
	assert_int_equal(l.n, 0);
	/* refused */
	errno = 0;
	assert_int_equal(pol_fed_inflight_add(&l, 4, "", 8, NOW), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(pol_fed_inflight_add(&l, 4, NULL, 8, NOW), -1);
	assert_int_equal(pol_fed_inflight_add(&l, 4, "c1", -1, NOW), -1);
	assert_int_equal(
		pol_fed_inflight_add(&l, 4,
				     "a-cluster-name-of-sixty-four-characters-"
				     "or-more-is-too-long-for-it",
				     8, NOW),
		-1);
	/* growth past the first block */
	for (uint32_t j = 1; j <= 200; j++)
		assert_int_equal(pol_fed_inflight_add(&l, j, "c1", 1, NOW), 0);
	assert_int_equal(pol_fed_inflight_gpus(&l, "c1"), 200);
	pol_fed_inflight_free(&l);
	assert_null(l.v);
	assert_int_equal(l.n, 0);
}

/*
 * A burst over two rounds: c2 has 16 GPUs, all free; round 1 pins two
 * 8-GPU jobs there, and round 2 runs before their copies arrive (c2's
 * survey still shows 16 free, nothing queued).  agorad counts the pins
 * in flight as queued on c2, so its start estimate for a third 8-GPU job
 * there is not "now" (without them it was, and c2 won a job it had no
 * GPUs for); once the copies are seen (pending there: Slurm's own queue
 * counts them) the pins stop counting.
 */
static void test_burst_over_two_rounds(void **state)
{
	pol_fed_inflight_list_t l = { 0 };
	pol_fed_busy_t busy = { .end = NOW + 600, .gpus = 0 };
	pol_fed_cluster_load_t c2 = { .gpus_total = 16,
				      .gpus_free = 16,
				      .busy = &busy,
				      .n_busy = 1,
				      .max_limit_s = 600 };
	pol_fed_cluster_load_t seen;
	const uint32_t copies[] = { 11, 12 };

	(void) state;
	assert_int_equal(pol_fed_start_estimate(&c2, 8, NOW), NOW);
	/* round 1: jobs 11 and 12 pinned to c2 */
	assert_int_equal(pol_fed_inflight_add(&l, 11, "c2", 8, NOW), 0);
	assert_int_equal(pol_fed_inflight_add(&l, 12, "c2", 8, NOW), 0);
	/* round 2, 2 s later: no copy on c2 yet */
	assert_int_equal(pol_fed_inflight_seen(&l, "c2", NULL, 0), 0);
	seen = c2;
	seen.gpus_queued += pol_fed_inflight_gpus(&l, "c2");
	assert_int_equal(seen.gpus_queued, 16);
	assert_true(pol_fed_start_estimate(&seen, 8, NOW + 2) > NOW + 2);
	/* round 3: both copies pending on c2, in its own queue */
	assert_int_equal(pol_fed_inflight_seen(&l, "c2", copies, 2), 2);
	assert_int_equal(pol_fed_inflight_gpus(&l, "c2"), 0);
	pol_fed_inflight_free(&l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inflight_list),
		cmocka_unit_test(test_burst_over_two_rounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
