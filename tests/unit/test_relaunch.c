/*
 * test_relaunch.c - the relaunch rule (pol_loan_relaunch.h): which FAILED
 * training job after a slurmctld start is requeued again, table-driven
 * over each condition of the rule, and the window in which failed jobs
 * are looked at.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pol_loan_relaunch.h"

#define BOOT 1796153774

/* each case is a base job with one field changed: designated initializers
 * that override the base's on purpose */
#pragma GCC diagnostic ignored "-Woverride-init"

/* the crash window's launch failure: queued before, requeueable, exit
 * 1:0, ran 0 s, started 3 s after the start */
#define LAUNCH_FAILED                                                          \
	.requeue = true, .queued_before = true, .exited = true,                \
	.exit_status = 1, .start = BOOT + 3, .end = BOOT + 3
/* agorad's requeue 4 s before the start, its SIGTERM ending the job */
#define LOST_REQUEUE                                                           \
	.requeue = true, .signaled = true, .term_sig = SIGTERM,                \
	.start = BOOT - 600, .end = BOOT + 2, .requeued_at = BOOT - 4

static const struct {
	const char *name;
	pol_relaunch_job_t j;
	pol_relaunch_t want;
	const char *why; /* a word of the reason, for POL_RELAUNCH_NO */
} cases[] = {
	{ "launch failure",
	  { LAUNCH_FAILED },
	  POL_RELAUNCH_LAUNCH_FAILED,
	  NULL },
	{ "launch failure, ran 1 s",
	  { LAUNCH_FAILED, .end = BOOT + 4 },
	  POL_RELAUNCH_LAUNCH_FAILED,
	  NULL },
	{ "launch failure at the window's end",
	  { LAUNCH_FAILED, .start = BOOT + POL_RELAUNCH_WINDOW_S,
	    .end = BOOT + POL_RELAUNCH_WINDOW_S },
	  POL_RELAUNCH_LAUNCH_FAILED,
	  NULL },
	{ "submitted after the start",
	  { LAUNCH_FAILED, .queued_before = false },
	  POL_RELAUNCH_NO,
	  "not queued" },
	{ "--no-requeue",
	  { LAUNCH_FAILED, .requeue = false },
	  POL_RELAUNCH_NO,
	  "cannot be requeued" },
	{ "exit 2",
	  { LAUNCH_FAILED, .exit_status = 2 },
	  POL_RELAUNCH_NO,
	  "exit code" },
	{ "killed by a signal",
	  { LAUNCH_FAILED, .exited = false, .signaled = true,
	    .term_sig = SIGKILL },
	  POL_RELAUNCH_NO,
	  "exit code" },
	{ "it ran 2 s",
	  { LAUNCH_FAILED, .end = BOOT + 5 },
	  POL_RELAUNCH_NO,
	  "it ran" },
	{ "started after the window",
	  { LAUNCH_FAILED, .start = BOOT + POL_RELAUNCH_WINDOW_S + 1,
	    .end = BOOT + POL_RELAUNCH_WINDOW_S + 1 },
	  POL_RELAUNCH_NO,
	  "not started right after" },
	{ "lost requeue", { LOST_REQUEUE }, POL_RELAUNCH_LOST_REQUEUE, NULL },
	{ "lost requeue at the limit",
	  { LOST_REQUEUE, .requeued_at = BOOT - POL_RELAUNCH_LOST_S },
	  POL_RELAUNCH_LOST_REQUEUE,
	  NULL },
	{ "requeue too long before the start",
	  { LOST_REQUEUE, .requeued_at = BOOT - POL_RELAUNCH_LOST_S - 1 },
	  POL_RELAUNCH_NO,
	  "not queued" },
	{ "requeue after the start",
	  { LOST_REQUEUE, .requeued_at = BOOT + 1 },
	  POL_RELAUNCH_NO,
	  "not queued" },
	{ "lost requeue, its batch shell exited 143 (128 + SIGTERM)",
	  { LOST_REQUEUE, .signaled = false, .term_sig = 0, .exited = true,
	    .exit_status = 128 + SIGTERM },
	  POL_RELAUNCH_LOST_REQUEUE,
	  NULL },
	{ "exit 137 (128 + SIGKILL) is not the requeue's SIGTERM",
	  { LOST_REQUEUE, .signaled = false, .term_sig = 0, .exited = true,
	    .exit_status = 128 + SIGKILL },
	  POL_RELAUNCH_NO,
	  "not queued" },
	{ "ended by SIGKILL, not the requeue's SIGTERM",
	  { LOST_REQUEUE, .term_sig = SIGKILL },
	  POL_RELAUNCH_NO,
	  "not queued" },
	{ "ended before the start",
	  { LOST_REQUEUE, .end = BOOT - 1 },
	  POL_RELAUNCH_NO,
	  "not queued" },
	{ "lost requeue of a job that may not be requeued",
	  { LOST_REQUEUE, .requeue = false, .queued_before = true },
	  POL_RELAUNCH_NO,
	  "cannot be requeued" },
	{ "never requeued by agorad",
	  { LOST_REQUEUE, .requeued_at = 0 },
	  POL_RELAUNCH_NO,
	  "not queued" },
};

static void test_relaunch_rule(void **state)
{
	(void) state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *why = "unset";

		print_message("# %s\n", cases[i].name);
		assert_int_equal(pol_relaunch_decide(&cases[i].j, BOOT, &why),
				 cases[i].want);
		if (cases[i].want == POL_RELAUNCH_NO) {
			assert_non_null(why);
			assert_non_null(strstr(why, cases[i].why));
		} else
			assert_null(why);
	}
	assert_int_equal(pol_relaunch_decide(NULL, BOOT, NULL),
			 POL_RELAUNCH_NO);
}

static void test_relaunch_window(void **state)
{
	(void) state;
	/* MinJobAge 300: looked at until boot + 60 + 300 + 5 */
	assert_true(pol_relaunch_window(true, BOOT, BOOT, 300));
	assert_true(pol_relaunch_window(true, BOOT + 365, BOOT, 300));
	assert_false(pol_relaunch_window(true, BOOT + 366, BOOT, 300));
	/* MinJobAge 0 reads as Slurm's default 300 */
	assert_true(pol_relaunch_window(true, BOOT + 365, BOOT, 0));
	assert_false(pol_relaunch_window(true, BOOT + 366, BOOT, 0));
	assert_true(pol_relaunch_window(true, BOOT + 1065, BOOT, 1000));
	/* nothing known before the start: nothing to relaunch */
	assert_false(pol_relaunch_window(false, BOOT, BOOT, 300));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_relaunch_rule),
		cmocka_unit_test(test_relaunch_window),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
