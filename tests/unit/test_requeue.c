/*
 * test_requeue.c - a reclaim's or grow's requeue (pol_loan_requeue.h):
 * the job's --signal first, then its grace, then the requeue; the per-job
 * requeue limit; table-driven over every step and the orders a crash or
 * a restarted agorad leaves (signal sent then forgotten, a requeue lost
 * with slurmctld, a clock that went back, a signal from an earlier
 * cancelled reclaim).
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pol_loan_requeue.h"

#define NOW 1796153774

/* each case is a base job with one field changed: designated initializers
 * that override the base's on purpose */
#pragma GCC diagnostic ignored "-Woverride-init"

/* --requeue --signal=B:USR1@120, restarted once */
#define SIGNALLED_JOB                                                          \
	.requeue = true, .restarts = 1, .signal = SIGUSR1, .signal_time_s = 120

/* ReclaimGrace 60 s, ReclaimDeadline 300 s, MaxRequeuesPerJob 3 */
static const pol_requeue_conf_t conf = { .grace_s = 60,
					 .stale_s = 300,
					 .max_requeues = 3 };

static const struct {
	const char *name;
	pol_requeue_job_t j;
	pol_requeue_conf_t c; /* .grace_s < 0: use conf */
	pol_requeue_act_t want;
	int64_t at; /* *at wanted */
} cases[] = {
	{ "first round: the job's signal, grace = ReclaimGrace (below @N)",
	  { SIGNALLED_JOB },
	  { -1, 0, 0 },
	  POL_REQUEUE_SIGNAL,
	  NOW + 60 },
	{ "grace = the job's @N when it is below ReclaimGrace",
	  { SIGNALLED_JOB, .signal_time_s = 20 },
	  { -1, 0, 0 },
	  POL_REQUEUE_SIGNAL,
	  NOW + 20 },
	{ "signalled 10 s ago: waits out the grace",
	  { SIGNALLED_JOB, .signaled_at = NOW - 10 },
	  { -1, 0, 0 },
	  POL_REQUEUE_WAIT,
	  NOW + 50 },
	{ "the grace is over: requeue now",
	  { SIGNALLED_JOB, .signaled_at = NOW - 60 },
	  { -1, 0, 0 },
	  POL_REQUEUE_NOW,
	  NOW },
	{ "seen again after its requeue (lost with a slurmctld kill -9): "
	  "requeued again, no second signal",
	  { SIGNALLED_JOB, .signaled_at = NOW - 90 },
	  { -1, 0, 0 },
	  POL_REQUEUE_NOW,
	  NOW },
	{ "crash after the signal: a restarted agorad signals again",
	  { SIGNALLED_JOB, .signaled_at = 0 },
	  { -1, 0, 0 },
	  POL_REQUEUE_SIGNAL,
	  NOW + 60 },
	{ "a signal of an earlier, cancelled reclaim is sent again",
	  { SIGNALLED_JOB, .signaled_at = NOW - 300 },
	  { -1, 0, 0 },
	  POL_REQUEUE_SIGNAL,
	  NOW + 60 },
	{ "a signal time after now (clock went back): signalled again",
	  { SIGNALLED_JOB, .signaled_at = NOW + 3600 },
	  { -1, 0, 0 },
	  POL_REQUEUE_SIGNAL,
	  NOW + 60 },
	{ "no --signal: requeued at once (Slurm's own SIGTERM, KillWait)",
	  { SIGNALLED_JOB, .signal = 0 },
	  { -1, 0, 0 },
	  POL_REQUEUE_NOW,
	  NOW },
	{ "--signal with @0: requeued at once",
	  { SIGNALLED_JOB, .signal_time_s = 0 },
	  { -1, 0, 0 },
	  POL_REQUEUE_NOW,
	  NOW },
	{ "ReclaimGrace=0: requeued at once",
	  { SIGNALLED_JOB },
	  { 0, 300, 3 },
	  POL_REQUEUE_NOW,
	  NOW },
	{ "at its requeue limit (Restarts=3 of 3): never requeued",
	  { SIGNALLED_JOB, .restarts = 3 },
	  { -1, 0, 0 },
	  POL_REQUEUE_NONE,
	  NOW },
	{ "at its limit while in its grace: not requeued either",
	  { SIGNALLED_JOB, .restarts = 3, .signaled_at = NOW - 61 },
	  { -1, 0, 0 },
	  POL_REQUEUE_NONE,
	  NOW },
	{ "one below its limit: requeued",
	  { SIGNALLED_JOB, .restarts = 2, .signal = 0 },
	  { -1, 0, 0 },
	  POL_REQUEUE_NOW,
	  NOW },
	{ "MaxRequeuesPerJob=0: no limit",
	  { SIGNALLED_JOB, .restarts = 1000, .signal = 0 },
	  { 60, 300, 0 },
	  POL_REQUEUE_NOW,
	  NOW },
	{ "--no-requeue: never",
	  { SIGNALLED_JOB, .requeue = false },
	  { -1, 0, 0 },
	  POL_REQUEUE_NONE,
	  NOW },
};

static void test_requeue_steps_table(void **state)
{
	(void) state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const pol_requeue_conf_t *c = cases[i].c.grace_s < 0
						      ? &conf
						      : &cases[i].c;
		int64_t at = -1;
		pol_requeue_act_t a = pol_requeue_next(&cases[i].j, c, NOW,
						       &at);

		if (a != cases[i].want || at != cases[i].at)
			fail_msg("%s: got %s at %+lld, want %s at %+lld",
				 cases[i].name, pol_requeue_act_name(a),
				 (long long) (at - NOW),
				 pol_requeue_act_name(cases[i].want),
				 (long long) (cases[i].at - NOW));
	}
}

/* The whole sequence, round by round every 10 s: signal once, wait, then
 * requeue (the job then leaves the node: the rounds stop seeing it). */
static void test_requeue_sequence_signal_once_then_requeue(void **state)
{
	pol_requeue_job_t j = { SIGNALLED_JOB };
	int signals = 0, requeues = 0, waits = 0;
	int64_t first_requeue = 0;

	(void) state;
	for (int64_t t = NOW; t < NOW + 200; t += 10) {
		switch (pol_requeue_next(&j, &conf, t, NULL)) {
		case POL_REQUEUE_SIGNAL:
			signals++;
			j.signaled_at = t;
			break;
		case POL_REQUEUE_WAIT:
			waits++;
			break;
		case POL_REQUEUE_NOW:
			requeues++;
			if (!first_requeue)
				first_requeue = t;
			t = NOW + 200; /* requeued: gone from the node */
			break;
		case POL_REQUEUE_NONE:
			break;
		}
	}
	assert_int_equal(signals, 1);
	assert_int_equal(requeues, 1);
	assert_int_equal(waits, 5);
	/* never before the grace after the signal */
	assert_true(first_requeue >= NOW + conf.grace_s);
	assert_true(first_requeue < NOW + conf.grace_s + 10 + 1);
}

/* Only a job that runs on its nodes takes a requeue: one already
 * requeued (pending, completing), one ending, and one running whose nodes
 * Slurm already saw finish (test_loan on 24.11: a second requeue of such a
 * federated job left it pending and completing on no node for good). */
static void test_requeue_live_table(void **state)
{
	static const struct {
		bool running, completing, has_nodes, live;
	} t[] = {
		{ true, false, true, true },   /* RUNNING on its node */
		{ true, false, false, false }, /* RUNNING, node set emptied */
		{ true, true, true, false },   /* RUNNING|COMPLETING */
		{ false, true, true, false }, /* PENDING|COMPLETING: requeued */
		{ false, true, false, false },  /* ... on no node */
		{ false, false, false, false }, /* PENDING */
		{ false, false, true, false },  /* FAILED, still listed */
	};

	(void) state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		assert_int_equal(pol_requeue_live(t[i].running, t[i].completing,
						  t[i].has_nodes),
				 t[i].live);
		/* only the running job on no node is a run over */
		assert_int_equal(pol_requeue_run_over(t[i].running,
						      t[i].completing,
						      t[i].has_nodes),
				 i == 1);
	}
}

static void test_requeue_limit_victim_and_grow(void **state)
{
	(void) state;
	assert_true(pol_requeue_allowed(true, 0, 1));
	assert_false(pol_requeue_allowed(true, 1, 1));
	assert_false(pol_requeue_allowed(false, 0, 0));
	assert_true(pol_requeue_allowed(true, 50, 0));
	/* a grow never spends the last allowed requeue */
	assert_true(pol_requeue_grow_allowed(true, 0, 2));
	assert_false(pol_requeue_grow_allowed(true, 1, 2));
	assert_false(pol_requeue_grow_allowed(true, 0, 1));
	assert_true(pol_requeue_grow_allowed(true, 9, 0));
	assert_false(pol_requeue_grow_allowed(false, 0, 0));
}

static void test_requeue_grace_bounds(void **state)
{
	pol_requeue_job_t j = { SIGNALLED_JOB, .signal_time_s = -5 };

	(void) state;
	assert_int_equal(pol_requeue_grace(&j, &conf), 0);
	j.signal_time_s = 30;
	assert_int_equal(pol_requeue_grace(&j, &conf), 30);
	j.signal_time_s = 3000;
	assert_int_equal(pol_requeue_grace(&j, &conf), 60);
	assert_int_equal(pol_requeue_grace(NULL, &conf), 0);
	assert_int_equal(pol_requeue_next(NULL, &conf, NOW, NULL),
			 POL_REQUEUE_NONE);
	assert_string_equal(pol_requeue_act_name(POL_REQUEUE_WAIT), "wait");
}

/* The script's #SBATCH --signal, as sbatch reads it. */
static const struct {
	const char *name, *script;
	int rc, sig, time_s;
	bool batch;
} scripts[] = {
	{ "B:USR1@120", "#!/bin/bash\n#SBATCH --signal=B:USR1@120\nsrun x\n", 0,
	  SIGUSR1, 120, true },
	{ "a number, no time: 60 s", "#!/bin/sh\n#SBATCH -N 2 --signal=10\n", 0,
	  10, 60, false },
	{ "SIG prefix, any case, RB flags",
	  "#!/bin/sh\n#SBATCH --signal=RB:sigusr2@30\n", 0, SIGUSR2, 30, true },
	{ "\"--signal ARG\" and quotes",
	  "#!/bin/sh\n#SBATCH --signal \"B:TERM@5\"\n", 0, SIGTERM, 5, true },
	{ "the last one wins",
	  "#!/bin/sh\n#SBATCH --signal=USR1@9\n\n# note\n"
	  "#SBATCH --signal=B:USR2@7\n",
	  0, SIGUSR2, 7, true },
	{ "after the first command: not a directive",
	  "#!/bin/sh\necho hi\n#SBATCH --signal=USR1@9\n", -1, 0, 0, false },
	{ "indented #SBATCH is a comment",
	  "#!/bin/sh\n  #SBATCH --signal=USR1\n", -1, 0, 0, false },
	{ "none (sbatch --wrap)",
	  "#!/bin/sh\n# This script was created by sbatch --wrap.\n\nsleep 1\n",
	  -1, 0, 0, false },
	{ "a bad name", "#!/bin/sh\n#SBATCH --signal=B:NOPE@5\n", -1, 0, 0,
	  false },
	{ "a bad time", "#!/bin/sh\n#SBATCH --signal=USR1@5x\n", -1, 0, 0,
	  false },
	{ "--signal-x is another option", "#!/bin/sh\n#SBATCH --signalx=USR1\n",
	  -1, 0, 0, false },
};

static void test_requeue_signal_from_script_table(void **state)
{
	(void) state;
	for (size_t i = 0; i < sizeof(scripts) / sizeof(scripts[0]); i++) {
		int sig = -1, t = -1;
		bool b = true;
		int rc = pol_requeue_signal_parse(scripts[i].script, &sig, &t,
						  &b);

		if (rc != scripts[i].rc || sig != scripts[i].sig ||
		    (rc == 0 &&
		     (t != scripts[i].time_s || b != scripts[i].batch)))
			fail_msg("%s: rc %d sig %d time %d batch %d",
				 scripts[i].name, rc, sig, t, b);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_requeue_steps_table),
		cmocka_unit_test(
			test_requeue_sequence_signal_once_then_requeue),
		cmocka_unit_test(test_requeue_limit_victim_and_grow),
		cmocka_unit_test(test_requeue_live_table),
		cmocka_unit_test(test_requeue_grace_bounds),
		cmocka_unit_test(test_requeue_signal_from_script_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
