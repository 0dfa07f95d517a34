/*
 * test_lease.c - the loan lease and the elastic marks (pol_loan_lease.h):
 * mark texts round-trip, the expiry decision of slurmctld on every crash
 * order of a loan, and the grow follow rule on every crash order of a
 * grow.  Table-driven.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pol_loan_lease.h"

#define T0 1796153774 /* 2026-12-01T... */

static void test_time_utc_round_trip(void **state)
{
	static const int64_t ts[] = { 0, 951782400 /* 2000-02-29 */, T0,
				      4102444799 };
	char buf[32];
	int64_t t;
	const char *end;

	(void) state;
	for (size_t i = 0; i < sizeof(ts) / sizeof(ts[0]); i++) {
		pol_time_utc(ts[i], buf, sizeof(buf));
		assert_int_equal(pol_time_utc_parse(buf, &t, &end), 0);
		assert_true(t == ts[i]);
		assert_int_equal(*end, '\0');
	}
	assert_string_equal(pol_time_utc(951782400, buf, sizeof(buf)),
			    "2000-02-29T00:00:00Z");
	assert_int_equal(pol_time_utc_parse("2026-13-01T00:00:00Z", &t, NULL),
			 -1);
	assert_int_equal(pol_time_utc_parse("1796153774", &t, NULL), -1);
}

static void test_lease_mark_texts(void **state)
{
	static const struct {
		const char *text;
		int rc, version, st;
		int64_t since, hb;
	} cases[] = {
		{ "", -1, 0, 0, 0, 0 },
		{ "rack 3, PSU swapped", -1, 0, 0, 0, 0 },
		{ "Agora: auction pool; no lease", -1, 0, 0, 0, 0 },
		/* legacy: heartbeat = start */
		{ "Agora loan: lent since 1796153774", 0, 0,
		  POL_LOAN_LEASE_LENT, T0, T0 },
		{ "Agora loan v1: lent since 2026-12-01T10:00:00Z, heartbeat 2026-12-01T10:05:00Z",
		  0, 1, POL_LOAN_LEASE_LENT, 1796119200, 1796119500 },
		{ "Agora loan v1: returned 2026-12-01T10:05:00Z, lent since 2026-12-01T10:00:00Z",
		  0, 1, POL_LOAN_LEASE_RETURNED, 1796119200, 0 },
		/* ours, unreadable: lent with no heartbeat (expired) */
		{ "Agora loan v1: lent since yesterday", 0, 1,
		  POL_LOAN_LEASE_LENT, 0, 0 },
	};
	pol_loan_lease_mark_t m;
	char buf[160];

	(void) state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = pol_loan_lease_mark_parse(cases[i].text, &m);

		assert_int_equal(rc, cases[i].rc);
		if (rc) {
			assert_int_equal(errno, ENOENT);
			continue;
		}
		assert_int_equal(m.version, cases[i].version);
		assert_int_equal(m.state, cases[i].st);
		assert_true(m.since == cases[i].since);
		assert_true(m.heartbeat == cases[i].hb);
	}
	m = (pol_loan_lease_mark_t){ .state = POL_LOAN_LEASE_LENT,
				     .since = T0,
				     .heartbeat = T0 + 60 };
	assert_int_equal(pol_loan_lease_mark_format(&m, buf, sizeof(buf)), 0);
	assert_non_null(strstr(buf, "lent since 2026-"));
	assert_null(strstr(buf, "1796153774")); /* a time a person reads */
	assert_int_equal(pol_loan_lease_mark_parse(buf, &m), 0);
	assert_true(m.heartbeat == T0 + 60 && m.version == 1);
	assert_int_equal(pol_loan_lease_mark_format(&m, buf, 20), -1);
	assert_int_equal(errno, ERANGE);
	assert_true(pol_loan_lease_comment_free(NULL));
	assert_true(pol_loan_lease_comment_free(""));
	assert_true(
		pol_loan_lease_comment_free("Agora: auction pool; no lease"));
	assert_false(pol_loan_lease_comment_free("disk replaced, do not use"));
}

static void test_lease_renew_due(void **state)
{
	pol_loan_lease_mark_t m = { .version = 1,
				    .state = POL_LOAN_LEASE_LENT,
				    .since = T0,
				    .heartbeat = T0 };
	pol_loan_lease_mark_t legacy = m, ret = m;

	(void) state;
	legacy.version = 0;
	ret.state = POL_LOAN_LEASE_RETURNED;
	assert_true(pol_loan_lease_renew_due(&m, false, T0, 600));
	assert_false(pol_loan_lease_renew_due(&m, true, T0 + 149, 600));
	assert_true(pol_loan_lease_renew_due(&m, true, T0 + 150, 600));
	assert_true(pol_loan_lease_renew_due(&legacy, true, T0, 600));
	assert_true(pol_loan_lease_renew_due(&ret, true, T0, 600));
	assert_false(pol_loan_lease_renew_due(&m, true, T0 + 9999, 0));
}

/* Two inference nodes; job 0 (requeueable) on node 0, job 1
 * (--no-requeue) on node 1, job 2 (requeueable) on both. */
enum { LENT_FRESH, LENT_OLD, RET, NONE };

static pol_loan_lease_node_t node_of(int kind, bool in_train)
{
	pol_loan_lease_node_t n = { .in_train = in_train };

	if (kind == NONE)
		return n;
	n.marked = true;
	n.mark.version = 1;
	n.mark.since = T0 - 1000;
	n.mark.state = kind == RET ? POL_LOAN_LEASE_RETURNED
				   : POL_LOAN_LEASE_LENT;
	n.mark.heartbeat = kind == LENT_FRESH ? T0 - 10 : T0 - 700;
	n.mark.returned = kind == RET ? T0 - 5 : 0;
	return n;
}

static void test_lease_expire_crash_orders(void **state)
{
	static const int n0[] = { 0 }, n1[] = { 1 }, n01[] = { 0, 1 };
	static const struct {
		const char *what;
		int kind0, kind1;
		bool train0, train1;
		int jobs; /* bit j: job j runs */
		bool done0;
		int act0, act1;
		int rq; /* bit j: requeued */
	} cases[] = {
		{ "fresh heartbeat: kept", LENT_FRESH, LENT_FRESH, true, true,
		  7, false, POL_LOAN_LEASE_KEEP, POL_LOAN_LEASE_KEEP, 0 },
		{ "agorad gone: both expired, returned, requeueable borrowers requeued",
		  LENT_OLD, LENT_OLD, true, true, 7, false,
		  POL_LOAN_LEASE_RETURN, POL_LOAN_LEASE_RETURN, 5 },
		{ "one node expired: its borrowers only (job 2 spans both)",
		  LENT_OLD, LENT_FRESH, true, true, 7, false,
		  POL_LOAN_LEASE_RETURN, POL_LOAN_LEASE_KEEP, 5 },
		{ "agorad stopped (SIGTERM): out of training, borrowers run until the lease ends",
		  LENT_FRESH, LENT_FRESH, false, false, 7, false,
		  POL_LOAN_LEASE_KEEP, POL_LOAN_LEASE_KEEP, 0 },
		{ "after the SIGTERM, the lease ends: mark returned, requeue",
		  LENT_OLD, LENT_OLD, false, false, 7, false,
		  POL_LOAN_LEASE_RETURN, POL_LOAN_LEASE_RETURN, 5 },
		{ "crash after the mark, before the partition update: again",
		  RET, RET, true, true, 7, false, POL_LOAN_LEASE_RETURN,
		  POL_LOAN_LEASE_RETURN, 5 },
		{ "crash after the partition update, before the requeue", RET,
		  RET, false, false, 7, false, POL_LOAN_LEASE_KEEP,
		  POL_LOAN_LEASE_KEEP, 5 },
		{ "requeued (job 0 leaving), no-requeue job 1 keeps node 1",
		  RET, RET, false, false, 3, true, POL_LOAN_LEASE_KEEP,
		  POL_LOAN_LEASE_KEEP, 0 },
		{ "borrowers gone: marks cleared", RET, RET, false, false, 0,
		  false, POL_LOAN_LEASE_CLEAR, POL_LOAN_LEASE_CLEAR, 0 },
		{ "only the no-requeue job left on node 1", RET, RET, false,
		  false, 2, false, POL_LOAN_LEASE_CLEAR, POL_LOAN_LEASE_KEEP,
		  0 },
		{ "unmarked nodes in training (slurm.conf overlap): untouched",
		  NONE, NONE, true, true, 7, false, POL_LOAN_LEASE_KEEP,
		  POL_LOAN_LEASE_KEEP, 0 },
		{ "expired, not in training, no borrower: returned, then cleared",
		  LENT_OLD, NONE, false, false, 0, false, POL_LOAN_LEASE_RETURN,
		  POL_LOAN_LEASE_KEEP, 0 },
	};
	(void) state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		pol_loan_lease_node_t nodes[2] = {
			node_of(cases[c].kind0, cases[c].train0),
			node_of(cases[c].kind1, cases[c].train1)
		};
		pol_loan_lease_job_t all[3] = {
			{ 1, n0, true, cases[c].done0 },
			{ 1, n1, false, false },
			{ 2, n01, true, cases[c].done0 },
		}, jobs[3];
		int map[3], nj = 0, act[2];
		unsigned char rq[3];
		pol_loan_lease_out_t out = { .node_action = act,
					     .requeue = rq };
		pol_loan_lease_in_t in;
		int got = 0;

		for (int j = 0; j < 3; j++)
			if (cases[c].jobs & (1 << j)) {
				map[nj] = j;
				jobs[nj++] = all[j];
			}
		in = (pol_loan_lease_in_t){ nodes, 2, jobs, nj, T0, 600 };
		assert_int_equal(pol_loan_lease_expire(&in, &out), 0);
		for (int j = 0; j < nj; j++)
			got |= rq[j] << map[j];
		if (act[0] != cases[c].act0 || act[1] != cases[c].act1 ||
		    got != cases[c].rq)
			fail_msg("%s: actions %d %d requeue %d, want %d %d %d",
				 cases[c].what, act[0], act[1], got,
				 cases[c].act0, cases[c].act1, cases[c].rq);
		assert_int_equal(out.n_requeue, __builtin_popcount(got));
	}
}

/* Applying the actions and deciding again gives only KEEP (level
 * triggered), and a disabled lease never returns a node. */
static void test_lease_expire_idempotent(void **state)
{
	static const int n0[] = { 0 };
	pol_loan_lease_node_t nodes[1] = { node_of(LENT_OLD, true) };
	pol_loan_lease_job_t jobs[1] = { { 1, n0, true, false } };
	int act[1];
	unsigned char rq[1];
	pol_loan_lease_out_t out = { .node_action = act, .requeue = rq };
	pol_loan_lease_in_t in = { nodes, 1, jobs, 1, T0, 600 };

	(void) state;
	assert_int_equal(pol_loan_lease_expire(&in, &out), 0);
	assert_int_equal(act[0], POL_LOAN_LEASE_RETURN);
	assert_int_equal(rq[0], 1);
	/* applied: out of training, marked returned, job leaving */
	nodes[0].in_train = false;
	nodes[0].mark.state = POL_LOAN_LEASE_RETURNED;
	nodes[0].mark.returned = T0;
	jobs[0].done = true;
	assert_int_equal(pol_loan_lease_expire(&in, &out), 0);
	assert_int_equal(act[0], POL_LOAN_LEASE_KEEP);
	assert_int_equal(rq[0], 0);
	/* the job is gone */
	in.n_jobs = 0;
	assert_int_equal(pol_loan_lease_expire(&in, &out), 0);
	assert_int_equal(act[0], POL_LOAN_LEASE_CLEAR);
	/* LoanLeaseTimeout=0: a lent mark never runs out */
	nodes[0] = node_of(LENT_OLD, true);
	in.timeout_s = 0;
	assert_int_equal(pol_loan_lease_expire(&in, &out), 0);
	assert_int_equal(act[0], POL_LOAN_LEASE_KEEP);
	/* bad input */
	jobs[0].nodes = (const int[]){ 5 };
	in.n_jobs = 1;
	assert_int_equal(pol_loan_lease_expire(&in, &out), -1);
	assert_int_equal(errno, EINVAL);
}

static void test_elastic_mark_texts(void **state)
{
	static const struct {
		const char *text;
		int rc, min, max, from, to, started;
	} cases[] = {
		{ "Agora elastic v1: range 2-16", 0, 2, 16, 0, 0, 0 },
		{ "Agora elastic v1: range 2-16; grow 2->15 at 2026-12-01T10:00:00Z",
		  0, 2, 16, 2, 15, 0 },
		{ "Agora elastic v1: range 2-16; grow 2->15 at 2026-12-01T10:00:00Z, restarted on 15",
		  0, 2, 16, 2, 15, 15 },
		{ "Agora elastic v1: range 5-2", -1, 0, 0, 0, 0, 0 },
		{ "Agora elastic v1: range 2-16; grow 4->3 at 2026-12-01T10:00:00Z",
		  -1, 0, 0, 0, 0, 0 },
		{ "Agora: fed won by c2", -1, 0, 0, 0, 0, 0 },
		{ "", -1, 0, 0, 0, 0, 0 },
	};
	pol_elastic_mark_t m;
	char buf[160];

	(void) state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(pol_elastic_mark_parse(cases[i].text, &m),
				 cases[i].rc);
		if (cases[i].rc)
			continue;
		assert_int_equal(m.min, cases[i].min);
		assert_int_equal(m.max, cases[i].max);
		assert_int_equal(m.from, cases[i].from);
		assert_int_equal(m.to, cases[i].to);
		assert_int_equal(m.started, cases[i].started);
		assert_int_equal(pol_elastic_mark_format(&m, buf, sizeof(buf)),
				 0);
		assert_string_equal(buf, cases[i].text);
	}
}

/* The grow follow rule on every step and crash order of a grow: the mark
 * is written, the job requeued, its size set, it restarts, and later
 * pends again (a reclaim); agorad may be gone (and its state with it)
 * between any two steps: the next agorad decides from the mark alone. */
static void test_grow_follow_crash_orders(void **state)
{
	static const struct {
		const char *what;
		bool grown;
		int started;
		bool pending, running;
		int num, max;
		int64_t age;
		pol_grow_action_t want;
	} cases[] = {
		{ "not grown", false, 0, true, false, 2, 16, 0, POL_GROW_NONE },
		{ "mark written, requeue not done (crash): runs", true, 0,
		  false, true, 2, 2, 5, POL_GROW_RESTARTED },
		{ "requeued, size not set (crash)", true, 0, true, false, 2, 16,
		  5, POL_GROW_SET_SIZE },
		{ "requeued, size set: waits", true, 0, true, false, 15, 15, 5,
		  POL_GROW_NONE },
		{ "not restarted long after: range back", true, 0, true, false,
		  15, 15, 500, POL_GROW_RESTORE },
		{ "restarted: noted", true, 0, false, true, 15, 15, 30,
		  POL_GROW_RESTARTED },
		{ "restarted and noted: nothing", true, 15, false, true, 15, 15,
		  30, POL_GROW_NONE },
		{ "requeued again after its restart: range back", true, 15,
		  true, false, 15, 15, 900, POL_GROW_RESTORE },
		{ "ended", true, 15, false, false, 15, 15, 900, POL_GROW_NONE },
	};
	(void) state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		pol_elastic_mark_t m = { .min = 2,
					 .max = 16,
					 .grown = cases[c].grown,
					 .from = 2,
					 .to = 15,
					 .time = T0,
					 .started = cases[c].started };
		pol_grow_obs_t o = { cases[c].pending, cases[c].running,
				     cases[c].num, cases[c].max };
		pol_grow_action_t a = pol_grow_follow(&m, &o, T0 + cases[c].age,
						      100);

		if (a != cases[c].want)
			fail_msg("%s: %d, want %d", cases[c].what, a,
				 cases[c].want);
	}
}

/* One failed read keeps the last good value for the grace period, then
 * the demand is unknown (fail safe); an answer resets it. */
static void test_demand_safe_grace(void **state)
{
	static const struct {
		int64_t t;
		double read, want;
	} steps[] = {
		{ 100, -1, -1 },                 /* nothing good yet: unknown */
		{ 110, 3, 3 },   { 120, -1, 3 }, /* a file mid-rewrite */
		{ 140, -1, 3 },                  /* 30 s old: still kept */
		{ 141, -1, -1 },                 /* then fail safe */
		{ 150, 5, 5 },   { 160, -1, 5 },
	};
	double last = -1;
	int64_t last_t = 0;

	(void) state;
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		if (pol_loan_demand_safe(steps[i].read, &last, &last_t,
					 steps[i].t, 30) != steps[i].want)
			fail_msg("step %zu (t %lld): want %.0f", i,
				 (long long) steps[i].t, steps[i].want);
}

/* LoanDemandSource=jobs counts only jobs that could run, capped. */
static void test_demand_jobs_counts_only_runnable(void **state)
{
	static const struct {
		const char *what;
		pol_loan_demand_job_t jobs[3];
		int n;
		double want;
	} cases[] = {
		{ "running and ready",
		  { { 2, true, false }, { 1, false, true } },
		  2,
		  3 },
		{ "a held -N 500 job asks nothing",
		  { { 500, false, false }, { 1, true, false } },
		  2,
		  1 },
		{ "a ready -N 500 job: capped at the partition",
		  { { 500, false, true }, { 1, true, false } },
		  2,
		  8 },
		{ "0 nodes counts as 1", { { 0, true, false } }, 1, 1 },
		{ "nothing", { { 0 } }, 0, 0 },
	};
	(void) state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
		if (pol_loan_demand_jobs(cases[c].jobs, cases[c].n, 8) !=
		    cases[c].want)
			fail_msg("%s: %.0f, want %.0f", cases[c].what,
				 pol_loan_demand_jobs(cases[c].jobs, cases[c].n,
						      8),
				 cases[c].want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_time_utc_round_trip),
		cmocka_unit_test(test_lease_mark_texts),
		cmocka_unit_test(test_lease_renew_due),
		cmocka_unit_test(test_lease_expire_crash_orders),
		cmocka_unit_test(test_lease_expire_idempotent),
		cmocka_unit_test(test_elastic_mark_texts),
		cmocka_unit_test(test_grow_follow_crash_orders),
		cmocka_unit_test(test_demand_safe_grace),
		cmocka_unit_test(test_demand_jobs_counts_only_runnable),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
