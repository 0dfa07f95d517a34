/*
 * Unit tests of skipping a cluster that timed out
 * (common/fed/pol_fed_backoff.c), table-driven: a sequence of rounds,
 * each an answer or a timeout at a time, and whether the cluster is
 * skipped then.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <cmocka.h>

#include "pol_fed_backoff.h"

#define T0 1000000

typedef struct {
	int64_t at;
	enum { ASK_OK, ASK_TIMEOUT, CHECK } what;
	int want; /* ASK_*: seconds skipped; CHECK: 1 skipped, 0 not */
} step_t;

static void run(const char *name, const step_t *s, size_t n, int base, int max)
{
	pol_fed_backoff_t b = { 0 };

	for (size_t k = 0; k < n; k++) {
		int got;

		if (s[k].what == CHECK)
			got = pol_fed_backoff_skip(&b, s[k].at) ? 1 : 0;
		else
			got = pol_fed_backoff_note(&b, s[k].what == ASK_TIMEOUT,
						   s[k].at, base, max);
		if (got != s[k].want)
			fail_msg("%s, step %zu: got %d, want %d", name, k, got,
				 s[k].want);
	}
}

static void test_sequences(void **state)
{
	/* never timed out: never skipped */
	static const step_t fine[] = {
		{ T0, CHECK, 0 },
		{ T0, ASK_OK, 0 },
		{ T0 + 1, CHECK, 0 },
	};
	/* a stopped slurmctld: 30, 60, 120 s, ... up to 600 s */
	static const step_t stopped[] = {
		{ T0, ASK_TIMEOUT, 30 },
		{ T0 + 1, CHECK, 1 },
		{ T0 + 29, CHECK, 1 },
		{ T0 + 30, CHECK, 0 },
		{ T0 + 30, ASK_TIMEOUT, 60 },
		{ T0 + 89, CHECK, 1 },
		{ T0 + 90, ASK_TIMEOUT, 120 },
		{ T0 + 300, ASK_TIMEOUT, 240 },
		{ T0 + 600, ASK_TIMEOUT, 480 },
		{ T0 + 1100, ASK_TIMEOUT, 600 },
		{ T0 + 1700, ASK_TIMEOUT, 600 },
		{ T0 + 2299, CHECK, 1 },
		{ T0 + 2300, CHECK, 0 },
	};
	/* back: one answer clears it, the next timeout starts at 30 s */
	static const step_t back[] = {
		{ T0, ASK_TIMEOUT, 30 }, { T0 + 30, ASK_TIMEOUT, 60 },
		{ T0 + 90, ASK_OK, 0 },  { T0 + 90, CHECK, 0 },
		{ T0 + 91, CHECK, 0 },   { T0 + 92, ASK_TIMEOUT, 30 },
	};
	/* a clock that went back: still skipped until the bound */
	static const step_t clock_back[] = {
		{ T0, ASK_TIMEOUT, 30 },
		{ T0 - 100, CHECK, 1 },
	};

	(void) state;
	run("fine", fine, sizeof(fine) / sizeof(fine[0]), 30, 600);
	run("stopped", stopped, sizeof(stopped) / sizeof(stopped[0]), 30, 600);
	run("back", back, sizeof(back) / sizeof(back[0]), 30, 600);
	run("clock back", clock_back,
	    sizeof(clock_back) / sizeof(clock_back[0]), 30, 600);
	/* bad bounds: the defaults */
	run("defaults", stopped, sizeof(stopped) / sizeof(stopped[0]), 0, 0);
}

/* Many timeouts in a row never overflow the delay. */
static void test_long_outage(void **state)
{
	pol_fed_backoff_t b = { 0 };
	int d = 0;

	(void) state;
	for (int k = 0; k < 1000; k++)
		d = pol_fed_backoff_note(&b, true, T0 + k * 600, 30, 600);
	assert_int_equal(d, 600);
	assert_true(pol_fed_backoff_skip(&b, T0 + 999 * 600 + 599));
	assert_false(pol_fed_backoff_skip(&b, T0 + 999 * 600 + 600));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sequences),
		cmocka_unit_test(test_long_outage),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
