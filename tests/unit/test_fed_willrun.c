/*
 * Unit tests of agorad's will-run rate limit (common/fed/pol_fed_willrun.c):
 * a kept answer stands while young and the free GPUs are unchanged; the
 * shapes that need an answer are asked up to the budget, the rest wait.
 * And agorad's copy of a held job's request (issue 19, medium 7): each
 * field whole or refused, never truncated; the first refused field named.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
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

/* A moot shape (no preemption, a deep queue: pol_fed_willrun_moot) keeps
 * a valid answer up to moot_age_s although the free GPUs changed; a
 * refusal, an old answer and no answer are asked as before. */
static void test_pick_moot(void **state)
{
	pol_fed_willrun_kept_t k[5] = {
		{ .have = true,
		  .asked = T0 - 3,
		  .free_then = 8,
		  .valid = true },
		{ .have = true,
		  .asked = T0 - 3,
		  .free_then = 8,
		  .valid = true },
		{ .have = true,
		  .asked = T0 - 60,
		  .free_then = 8,
		  .valid = true },
		{ .have = true,
		  .asked = T0 - 3,
		  .free_then = 8,
		  .valid = false },
		{ .have = false },
	};
	bool moot[5] = { true, false, true, true, true };
	pol_fed_willrun_act_t act[5];

	(void) state;
	/* free GPUs 8 -> 0 */
	assert_int_equal(
		pol_fed_willrun_pick_moot(k, moot, 5, T0, 0, 10, 60, 64, act),
		4);
	assert_int_equal(act[0], POL_FED_WILLRUN_REUSE);
	assert_int_equal(act[1], POL_FED_WILLRUN_ASK); /* not moot */
	assert_int_equal(act[2], POL_FED_WILLRUN_ASK); /* a minute old */
	assert_int_equal(act[3], POL_FED_WILLRUN_ASK); /* a refusal */
	assert_int_equal(act[4], POL_FED_WILLRUN_ASK); /* none kept */
	/* without moot flags: pol_fed_willrun_pick */
	assert_int_equal(
		pol_fed_willrun_pick_moot(k, NULL, 5, T0, 0, 10, 60, 64, act),
		5);
	assert_int_equal(act[0], POL_FED_WILLRUN_ASK);
	/* a clock that went back: asked */
	assert_int_equal(pol_fed_willrun_pick_moot(k, moot, 1, T0 - 10, 0, 10,
						   60, 64, act),
			 1);
	assert_int_equal(act[0], POL_FED_WILLRUN_ASK);
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

/* One row: a field of size bytes given src; copied whole or refused. */
static void test_copy_table(void **state)
{
	static const char c63[] =
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	static const char c64[] =
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
	static const struct {
		size_t size;
		const char *src;
		bool whole;
	} rows[] = {
		{ 64, "gpu_a100|gpu_h100", true },
		{ 64, c63, true },  /* 63 bytes and the NUL: fits */
		{ 64, c64, false }, /* one byte more: refused, not cut */
		{ 8, "abcdefgh", false },
		{ 8, "", true },
		{ 8, NULL, true }, /* Slurm's unset string: "" */
		{ 1, "", true },
		{ 1, "x", false },
	};

	(void) state;
	assert_int_equal(strlen(c63), 63);
	assert_int_equal(strlen(c64), 64);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char dst[128], too_long[32] = "";

		memset(dst, 'z', sizeof(dst));
		assert_int_equal(pol_fed_willrun_copy(
					 dst, rows[i].size, rows[i].src,
					 "prefer", too_long, sizeof(too_long)),
				 rows[i].whole);
		if (rows[i].whole) {
			assert_string_equal(dst,
					    rows[i].src ? rows[i].src : "");
			assert_string_equal(too_long, "");
		} else {
			/* nothing of it: a prefix is a different request */
			assert_string_equal(dst, "");
			assert_string_equal(too_long, "prefer");
		}
		/* never a byte past the field */
		assert_int_equal(dst[rows[i].size], 'z');
	}
}

/* A job's copy: the first field that did not fit names the refusal, the
 * fields that fit are whole, and the bid's error says which field. */
static void test_copy_job(void **state)
{
	struct {
		char account[64], features[256], prefer[256], exc_nodes[1024];
		char too_long[32];
	} a;
	char features[300], exc_nodes[1024], err[128];

	(void) state;
	memset(&a, 0, sizeof(a));
	memset(features, 'f', sizeof(features) - 1);
	features[sizeof(features) - 1] = '\0';
	memset(exc_nodes, 'n', sizeof(exc_nodes) - 1);
	exc_nodes[sizeof(exc_nodes) - 1] = '\0';
	assert_true(pol_fed_willrun_copy(a.account, sizeof(a.account), "vc_a",
					 "account", a.too_long,
					 sizeof(a.too_long)));
	assert_false(pol_fed_willrun_copy(a.features, sizeof(a.features),
					  features, "features", a.too_long,
					  sizeof(a.too_long)));
	assert_false(pol_fed_willrun_copy(a.prefer, sizeof(a.prefer), features,
					  "prefer", a.too_long,
					  sizeof(a.too_long)));
	assert_true(pol_fed_willrun_copy(a.exc_nodes, sizeof(a.exc_nodes),
					 exc_nodes, "exc_nodes", a.too_long,
					 sizeof(a.too_long)));
	assert_string_equal(a.account, "vc_a");
	assert_string_equal(a.features, "");
	assert_string_equal(a.prefer, "");
	assert_string_equal(a.exc_nodes, exc_nodes); /* 1023 bytes: whole */
	assert_string_equal(a.too_long, "features"); /* the first refused */

	pol_fed_willrun_refusal(a.too_long, err, sizeof(err));
	assert_string_equal(
		err, "features too long to copy into a will-run request");
	/* a short buffer is cut, never overrun */
	memset(err, 'z', sizeof(err));
	pol_fed_willrun_refusal(a.too_long, err, 9);
	assert_string_equal(err, "features");
	assert_int_equal(err[9], 'z');
	/* no field name in hand, no room for one */
	assert_false(pol_fed_willrun_copy(a.prefer, sizeof(a.prefer), features,
					  NULL, NULL, 0));
	assert_false(pol_fed_willrun_copy(a.prefer, 0, "x", "prefer", NULL, 0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fresh),
		cmocka_unit_test(test_pick_budget),
		cmocka_unit_test(test_pick_moot),
		cmocka_unit_test(test_heartbeat),
		cmocka_unit_test(test_pin_workers),
		cmocka_unit_test(test_copy_table),
		cmocka_unit_test(test_copy_job),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
