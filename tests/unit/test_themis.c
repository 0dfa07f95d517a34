/* Unit tests of finish-time fairness, the PA auction and leases
 * (common/policy/pol_themis.c). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pol_themis.h"

static void assert_near(double got, double want, double tol)
{
	if (fabs(got - want) > tol)
		fail_msg("got %.12g, want %.12g (tol %g)", got, want, tol);
}

/* Deterministic PRNG for the property tests (xorshift64*). */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static int rnd(int lo, int hi) /* inclusive */
{
	return lo + (int) (rng() % (uint64_t) (hi - lo + 1));
}

static double rndf(double lo, double hi)
{
	return lo + (hi - lo) * ((double) (rng() >> 11) / 9007199254740992.0);
}

/* rho by hand ------------------------------------------------------------ */

/* 8-GPU gang, one hour at full speed, N_avg = 4 on 64 GPUs: its share
 * (16 GPUs) covers its demand, so T_id = T_alone = 3600 s. */
static const pol_ftf_app_t app8 = {
	.arrival = 0, .work = 8 * 3600.0, .done = 0, .demand = 8, .n_avg = 4
};

static const struct {
	const char *what;
	pol_ftf_app_t app;
	int64_t now;
	int gpus;
	double slowdown;
	double rho;
} rho_cases[] = {
	/* full demand from the start: exactly the ideal */
	{ "fair", { 0, 28800, 0, 8, 4 }, 0, 8, 1.0, 1.0 },
	/* nothing this lease: 600 s lost, then 3600 s: 4200/3600 */
	{ "no gpus", { 0, 28800, 0, 8, 4 }, 0, 0, 1.0, 4200.0 / 3600 },
	/* waited 30 min already: (1800 + 3600) / 3600 */
	{ "waited", { 0, 28800, 0, 8, 4 }, 1800, 8, 1.0, 1.5 },
	/* N_avg = 16: share is 4 GPUs, T_id = 3600 * 8*16/64 = 7200 */
	{ "contended", { 0, 28800, 0, 8, 16 }, 0, 8, 1.0, 0.5 },
	/* 2x slower placement for the lease: 600 + (28800-2400)/8 = 3900 */
	{ "slow placement", { 0, 28800, 0, 8, 4 }, 0, 8, 2.0, 3900.0 / 3600 },
	/* half the GPUs for the lease: 600 + (28800-2400)/8 = 3900 */
	{ "half gpus", { 0, 28800, 0, 8, 4 }, 0, 4, 1.0, 3900.0 / 3600 },
	/* more GPUs than it can use count as its demand */
	{ "over demand", { 0, 28800, 0, 8, 4 }, 0, 64, 1.0, 1.0 },
	/* finishes inside the lease: 2400 GPU-s on 4 GPUs = 600 s, T_id 300 */
	{ "short, half", { 0, 2400, 0, 8, 4 }, 0, 4, 1.0, 2.0 },
	{ "short, full", { 0, 2400, 0, 8, 4 }, 0, 8, 1.0, 1.0 },
	/* half done after 1000 s: 1000 + 1800 = 2800 over 3600 */
	{ "half done", { 0, 28800, 14400, 8, 4 }, 1000, 8, 1.0, 2800.0 / 3600 },
	/* over its estimate (time limit too low): rem = 0 */
	{ "overrun", { 0, 28800, 40000, 8, 4 }, 3600, 8, 1.0, 1.0 },
	/* arrived at 100: elapsed counts from arrival */
	{ "late arrival", { 100, 28800, 0, 8, 4 }, 1900, 8, 1.0, 1.5 },
};

static void test_themis_rho_hand_computed(void **state)
{
	size_t i;

	(void) state;
	for (i = 0; i < sizeof(rho_cases) / sizeof(rho_cases[0]); i++) {
		double rho = -1;

		if (pol_ftf_rho(&rho_cases[i].app, 64, rho_cases[i].now,
				rho_cases[i].gpus, rho_cases[i].slowdown, 600,
				&rho) < 0)
			fail_msg("%s: failed", rho_cases[i].what);
		if (fabs(rho - rho_cases[i].rho) > 1e-12)
			fail_msg("%s: rho %.12g, want %.12g", rho_cases[i].what,
				 rho, rho_cases[i].rho);
	}
}

static void test_themis_ideal_and_bad_input(void **state)
{
	pol_ftf_app_t a = app8;
	double v;

	(void) state;
	assert_int_equal(pol_ftf_ideal(&a, 64, &v), 0);
	assert_near(v, 3600, 1e-12);
	/* the whole cluster for one app with N = 1: T_cluster * N_avg */
	a.demand = 64;
	a.work = 64 * 3600.0;
	a.n_avg = 3;
	assert_int_equal(pol_ftf_ideal(&a, 64, &v), 0);
	assert_near(v, 3600 * 3, 1e-9);
	a = app8;
	a.demand = 0;
	assert_int_equal(pol_ftf_rho(&a, 64, 0, 8, 1, 600, &v), -1);
	assert_int_equal(errno, EINVAL);
	a = app8;
	a.n_avg = 0.5;
	assert_int_equal(pol_ftf_ideal(&a, 64, &v), -1);
	a = app8;
	assert_int_equal(pol_ftf_rho(&a, 64, 0, 8, 0.9, 600, &v), -1);
	assert_int_equal(pol_ftf_rho(&a, 64, 0, 8, 1, 0, &v), -1);
	assert_int_equal(pol_ftf_rho(&a, 64, 0, -1, 1, 600, &v), -1);
	assert_int_equal(pol_ftf_rho(&a, 0, 0, 8, 1, 600, &v), -1);
}

/* rho never increases with more GPUs or a better placement. */
static void test_themis_rho_monotone(void **state)
{
	int i, g;

	(void) state;
	for (i = 0; i < 500; i++) {
		pol_ftf_app_t a = { .arrival = rnd(0, 1000),
				    .work = rndf(1, 1e6),
				    .demand = rnd(1, 32),
				    .n_avg = rndf(1, 20) };
		int64_t now = a.arrival + rnd(0, 5000);
		double prev = INFINITY, r, rs;

		a.done = rndf(0, a.work);
		for (g = 0; g <= 40; g++) {
			assert_int_equal(
				pol_ftf_rho(&a, 128, now, g, 1.0, 600, &r), 0);
			assert_int_equal(
				pol_ftf_rho(&a, 128, now, g, 1.5, 600, &rs), 0);
			assert_true(r <= prev + 1e-12);
			assert_true(r <= rs + 1e-12);
			prev = r;
		}
	}
}

static void test_themis_contention_average(void **state)
{
	pol_ftf_contention_t c = { 0 };

	(void) state;
	pol_ftf_contention_update(&c, 0, 2);
	pol_ftf_contention_update(&c, 100, 4);
	assert_near(pol_ftf_contention_area(&c, 200), 600, 0);
	assert_near(pol_ftf_contention_avg(&c, 200, 0, 0), 3, 1e-12);
	/* arrived at 100 when the area was 200 */
	assert_near(pol_ftf_contention_avg(&c, 200, 100, 200), 4, 1e-12);
	/* no time passed: current contention */
	assert_near(pol_ftf_contention_avg(&c, 100, 100, 200), 4, 0);
	/* never below one */
	pol_ftf_contention_update(&c, 300, 0);
	assert_near(pol_ftf_contention_avg(&c, 400, 300, 1000), 1, 0);
}

static void test_themis_worst_fraction(void **state)
{
	double rho[] = { 1, 3, 2, 5, 4, 5 };
	double ten[10] = { 0 };
	int idx[10], n;

	(void) state;
	/* f = 0.8 of 6: ceil(1.2) = 2, ties to the lower index */
	n = pol_ftf_worst(rho, 6, 0.8, idx);
	assert_int_equal(n, 2);
	assert_int_equal(idx[0], 3);
	assert_int_equal(idx[1], 5);
	n = pol_ftf_worst(rho, 6, 0.5, idx);
	assert_int_equal(n, 3);
	assert_int_equal(idx[2], 4);
	assert_int_equal(pol_ftf_worst(rho, 6, 0, idx), 6);
	/* (1 - 0.8) * 10 is 2.0000000000000004 in doubles: still 2 */
	assert_int_equal(pol_ftf_worst(ten, 10, 0.8, idx), 2);
	assert_int_equal(pol_ftf_worst(rho, 1, 0.99, idx), 1);
	assert_int_equal(pol_ftf_worst(rho, 0, 0.8, idx), 0);
	assert_int_equal(pol_ftf_worst(rho, 6, 1.0, idx), -1);
	assert_int_equal(errno, EINVAL);
}

static void test_themis_bid_best_placement(void **state)
{
	pol_bid_opt_t o[] = {
		{ 8, 1.3, 1 }, { 4, 2.0, 2 }, { 8, 1.1, 3 },
		{ 0, 1.0, 4 }, { 4, 2.5, 5 }, { 16, -1, 6 },
	};
	int n = pol_bid_best(o, 6);

	(void) state;
	assert_int_equal(n, 2);
	assert_int_equal(o[0].gpus, 4);
	assert_int_equal(o[0].tag, 2);
	assert_int_equal(o[1].gpus, 8);
	assert_int_equal(o[1].tag, 3);
}

/* The auction ---------------------------------------------------------- */

/* A hand-sized auction: two apps want the same 8 GPUs. */
static void test_themis_auction_hand_computed(void **state)
{
	pol_bid_opt_t oa[] = { { 8, 1.0, 0 } }, ob[] = { { 8, 1.5, 0 } };
	pol_bid_t b[] = { { 2.0, oa, 1 }, { 2.0, ob, 1 } };
	pol_auction_t r;

	(void) state;
	/* A: 1/1 * 1/2 = 0.5 beats B: 1/2 * 1/1.5 = 0.33 */
	assert_int_equal(pol_auction_run(b, 2, 8, POL_PF_EXACT, &r), 0);
	assert_int_equal(r.choice[0], 0);
	assert_int_equal(r.choice[1], -1);
	assert_int_equal(r.used, 8);
	assert_int_equal(r.leftover, 0);
	assert_true(r.exact);
	/* A pays: B's value with A, over B's value without A */
	assert_near(r.keep[0], (1 / 2.0) / (1 / 1.5), 1e-12);
	assert_near(r.keep[1], 1, 0);
	assert_near(r.objective, -log(2.0), 1e-12);
	pol_auction_free(&r);
	/* room for both: nobody pays */
	assert_int_equal(pol_auction_run(b, 2, 20, POL_PF_EXACT, &r), 0);
	assert_int_equal(r.choice[0], 0);
	assert_int_equal(r.choice[1], 0);
	assert_int_equal(r.leftover, 4);
	assert_near(r.keep[0], 1, 1e-12);
	assert_near(r.keep[1], 1, 1e-12);
	pol_auction_free(&r);
	/* nothing offered: nobody wins */
	assert_int_equal(pol_auction_run(b, 2, 0, POL_PF_AUTO, &r), 0);
	assert_int_equal(r.choice[0], -1);
	assert_int_equal(r.used, 0);
	pol_auction_free(&r);
}

/* Random rho tables of up to n bidders; opts has room for 4 each. */
static void random_instance(pol_bid_t *b, pol_bid_opt_t (*opts)[4], int n)
{
	int i, k;

	for (i = 0; i < n; i++) {
		int m = rnd(0, 4), g = 0;

		b[i].rho0 = rndf(1.0, 6.0);
		for (k = 0; k < m; k++) {
			g += rnd(1, 4);
			opts[i][k].gpus = g;
			opts[i][k].rho = b[i].rho0 * rndf(0.2, 1.0);
			opts[i][k].tag = k;
		}
		b[i].opts = opts[i];
		b[i].n_opts = m;
	}
}

static int used_gpus(const pol_bid_t *b, const int *choice, int n)
{
	int i, g = 0;

	for (i = 0; i < n; i++)
		if (choice[i] >= 0)
			g += b[i].opts[choice[i]].gpus;
	return g;
}

/* The DP finds the same PF allocation as enumerating every combination;
 * the greedy one is feasible and never better. */
static void test_themis_pf_exact_matches_brute_force(void **state)
{
	pol_bid_t b[6];
	pol_bid_opt_t opts[6][4];
	int trial, i;

	(void) state;
	for (trial = 0; trial < 2000; trial++) {
		int n = rnd(1, 6), cap = rnd(0, 20);
		int cb[6], ce[6], cg[6];
		double ob, oe, og;

		random_instance(b, opts, n);
		assert_int_equal(
			pol_pf_solve(b, n, cap, -1, POL_PF_BRUTE, cb, &ob), 0);
		assert_int_equal(
			pol_pf_solve(b, n, cap, -1, POL_PF_EXACT, ce, &oe), 0);
		assert_int_equal(
			pol_pf_solve(b, n, cap, -1, POL_PF_GREEDY, cg, &og), 0);
		assert_near(oe, ob, 1e-9);
		for (i = 0; i < n; i++)
			if (cb[i] != ce[i])
				fail_msg("trial %d: bidder %d brute %d dp %d",
					 trial, i, cb[i], ce[i]);
		assert_true(used_gpus(b, ce, n) <= cap);
		assert_true(used_gpus(b, cg, n) <= cap);
		assert_true(og <= oe + 1e-9);
	}
}

/* Leaving a bidder out (x*_{-i}) matches brute force as well. */
static void test_themis_pf_exclude(void **state)
{
	pol_bid_t b[5];
	pol_bid_opt_t opts[5][4];
	int trial;

	(void) state;
	for (trial = 0; trial < 500; trial++) {
		int n = rnd(2, 5), cap = rnd(0, 16), ex = rnd(0, n - 1);
		int cb[5], ce[5];
		double ob, oe;

		random_instance(b, opts, n);
		assert_int_equal(
			pol_pf_solve(b, n, cap, ex, POL_PF_BRUTE, cb, &ob), 0);
		assert_int_equal(
			pol_pf_solve(b, n, cap, ex, POL_PF_EXACT, ce, &oe), 0);
		assert_int_equal(ce[ex], -1);
		assert_near(oe, ob, 1e-9);
	}
}

/*
 * The heap GREEDY (and its x*_{-i} replay in the auction) makes exactly
 * the choices of the full-scan reference, ties included: rho tables that
 * are not monotone (a change that frees GPUs), equal rhos (ties), and
 * capacities that bind early, late or never.
 */
static void test_themis_greedy_heap_matches_scan(void **state)
{
	pol_bid_t b[40];
	pol_bid_opt_t opts[40][4];
	int trial, i;

	(void) state;
	for (trial = 0; trial < 3000; trial++) {
		int n = rnd(1, 40), cap = rnd(0, 4 * n), ex = rnd(-1, n - 1);
		int ch[40], cs[40];
		double oh, os;
		pol_auction_t rh, rs;

		random_instance(b, opts, n);
		if (trial % 2)
			for (i = 0; i < n; i++) { /* coarse rhos: ties */
				int k;

				b[i].rho0 = rnd(2, 4);
				for (k = 0; k < b[i].n_opts; k++)
					opts[i][k].rho = rnd(1, 4) * 0.5;
			}
		assert_int_equal(
			pol_pf_solve(b, n, cap, ex, POL_PF_GREEDY, ch, &oh), 0);
		assert_int_equal(pol_pf_solve(b, n, cap, ex, POL_PF_GREEDY_SCAN,
					      cs, &os),
				 0);
		for (i = 0; i < n; i++)
			if (ch[i] != cs[i])
				fail_msg("trial %d: bidder %d heap %d scan %d",
					 trial, i, ch[i], cs[i]);
		assert_true(oh == os);
		assert_int_equal(pol_auction_run(b, n, cap, POL_PF_GREEDY, &rh),
				 0);
		assert_int_equal(
			pol_auction_run(b, n, cap, POL_PF_GREEDY_SCAN, &rs), 0);
		assert_true(rh.objective == rs.objective);
		assert_int_equal(rh.used, rs.used);
		assert_false(rh.exact);
		for (i = 0; i < n; i++) {
			if (rh.choice[i] != rs.choice[i] ||
			    rh.keep[i] != rs.keep[i])
				fail_msg(
					"trial %d: bidder %d heap %d/%g scan %d/%g",
					trial, i, rh.choice[i], rh.keep[i],
					rs.choice[i], rs.keep[i]);
		}
		pol_auction_free(&rh);
		pol_auction_free(&rs);
	}
}

/* Utility of bidder i under PA: c_i * V_i(x*_i) with its TRUE values. */
static double utility(const pol_auction_t *r, const pol_bid_t *truth, int i)
{
	int k = r->choice[i];
	double rho = k < 0 ? truth->rho0 : truth->opts[k].rho;

	return r->keep[i] / rho;
}

/* A misreporting app never gains (truthfulness of PA), whatever it
 * reports: scaled, shuffled or withheld options, a fake rho0. */
static void test_themis_misreport_never_gains(void **state)
{
	pol_bid_t b[5], lie[5];
	pol_bid_opt_t opts[5][4], lopts[4];
	int trial, k, gains = 0;

	(void) state;
	for (trial = 0; trial < 3000; trial++) {
		int n = rnd(1, 5), cap = rnd(1, 16), i = rnd(0, n - 1);
		pol_auction_t rt, rl;
		double ut, ul;

		random_instance(b, opts, n);
		memcpy(lie, b, sizeof(b));
		/* i lies: every option keeps its gpus (it cannot use an
		 * allocation it does not have), values are made up */
		for (k = 0; k < b[i].n_opts; k++) {
			lopts[k] = b[i].opts[k];
			switch (rnd(0, 3)) {
			case 0:
				lopts[k].rho *= rndf(0.05, 1.0);
				break;
			case 1:
				lopts[k].rho *= rndf(1.0, 5.0);
				break;
			case 2:
				lopts[k].rho = rndf(0.1, 10);
				break;
			default:
				break;
			}
		}
		lie[i].opts = lopts;
		lie[i].n_opts = rnd(0, b[i].n_opts); /* may withhold some */
		if (rnd(0, 1))
			lie[i].rho0 = b[i].rho0 * rndf(0.2, 5.0);
		assert_int_equal(pol_auction_run(b, n, cap, POL_PF_EXACT, &rt),
				 0);
		assert_int_equal(
			pol_auction_run(lie, n, cap, POL_PF_EXACT, &rl), 0);
		ut = utility(&rt, &b[i], i);
		ul = utility(&rl, &b[i], i); /* same tags: true rho of choice */
		if (ul > ut * (1 + 1e-9))
			fail_msg("trial %d: bidder %d gains by lying: %.12g > "
				 "%.12g",
				 trial, i, ul, ut);
		if (rl.choice[i] != rt.choice[i])
			gains++; /* lies do change outcomes: the test bites */
		for (k = 0; k < n; k++) {
			assert_true(rt.keep[k] > 0 && rt.keep[k] <= 1);
			assert_true(rl.keep[k] > 0 && rl.keep[k] <= 1);
		}
		pol_auction_free(&rt);
		pol_auction_free(&rl);
	}
	assert_true(gains > 100);
}

/* A large auction takes the greedy path under AUTO and stays feasible. */
static void test_themis_auction_large_uses_greedy(void **state)
{
	enum { N = 300 };
	static pol_bid_t b[N];
	static pol_bid_opt_t opts[N][4];
	pol_auction_t r;
	int i;

	(void) state;
	random_instance(b, opts, N);
	for (i = 0; i < N; i++) {
		int k;

		for (k = 0; k < b[i].n_opts; k++)
			opts[i][k].gpus *= 8;
	}
	assert_int_equal(pol_auction_run(b, N, 4096, POL_PF_AUTO, &r), 0);
	assert_false(r.exact);
	assert_true(r.used <= 4096);
	assert_int_equal(r.used + r.leftover, 4096);
	assert_int_equal(used_gpus(b, r.choice, N), r.used);
	for (i = 0; i < N; i++)
		assert_true(r.keep[i] > 0 && r.keep[i] <= 1);
	pol_auction_free(&r);
}

static void test_themis_auction_bad_bids(void **state)
{
	pol_bid_opt_t o[] = { { 0, 1.0, 0 } };
	pol_bid_t b[] = { { 2.0, o, 1 } };
	pol_auction_t r;
	int ch[1];

	(void) state;
	assert_int_equal(pol_auction_run(b, 1, 8, POL_PF_AUTO, &r), -1);
	assert_int_equal(errno, EINVAL);
	o[0].gpus = 1;
	b[0].rho0 = 0;
	assert_int_equal(pol_pf_solve(b, 1, 8, -1, POL_PF_EXACT, ch, NULL), -1);
	b[0].rho0 = 1;
	assert_int_equal(pol_pf_solve(b, 1, -1, -1, POL_PF_EXACT, ch, NULL),
			 -1);
	assert_int_equal(pol_pf_solve(b, 1, 8, 1, POL_PF_EXACT, ch, NULL), -1);
}

/* Leases ---------------------------------------------------------------- */

static void test_themis_lease_lifecycle(void **state)
{
	pol_lease_table_t *t = pol_lease_table_create();
	const pol_lease_t *l;
	int64_t live[] = { 7 };

	(void) state;
	assert_non_null(t);
	assert_int_equal(pol_lease_grant(t, 7, 8, 100, 600), 0);
	assert_int_equal(pol_lease_grant(t, 3, 4, 100, 600), 0);
	assert_int_equal(pol_lease_grant(t, 5, 4, 100, 600), 0);
	assert_int_equal(pol_lease_count(t), 3);
	assert_non_null(pol_lease_at(t, 2));
	assert_null(pol_lease_at(t, 3));
	l = pol_lease_get(t, 7);
	assert_int_equal(l->end, 700);
	assert_false(pol_lease_expired(l, 699));
	assert_true(pol_lease_expired(l, 700));
	/* won the next auction: renewed */
	assert_int_equal(pol_lease_settle(t, 7, true, 700, 300, 60), 0);
	l = pol_lease_get(t, 7);
	assert_int_equal(l->state, POL_LEASE_ACTIVE);
	assert_int_equal(l->end, 1000);
	/* lost: grace, then due */
	assert_int_equal(pol_lease_settle(t, 7, false, 1000, 600, 60), 0);
	l = pol_lease_get(t, 7);
	assert_int_equal(l->state, POL_LEASE_GRACE);
	assert_false(pol_lease_expired(l, 5000));
	assert_false(pol_lease_due(l, 1059));
	assert_true(pol_lease_due(l, 1060));
	assert_int_equal(pol_lease_settle(t, 99, true, 0, 1, 1), -1);
	assert_int_equal(errno, ENOENT);
	/* jobs 3 and 5 ended */
	assert_int_equal(pol_lease_sweep(t, live, 1), 0);
	assert_int_equal(pol_lease_count(t), 1);
	assert_null(pol_lease_get(t, 3));
	assert_int_equal(pol_lease_drop(t, 7), 0);
	assert_int_equal(pol_lease_drop(t, 7), -1);
	assert_int_equal(pol_lease_count(t), 0);
	assert_int_equal(pol_lease_grant(t, 1, 1, 0, 0), -1);
	pol_lease_table_destroy(&t);
	assert_null(t);
}

/* The table against a plain array, through merges, drops and sweeps. */
static void test_themis_lease_table_matches_reference(void **state)
{
	enum { IDS = 3000 };
	static int ref[IDS]; /* gpus + 1, 0 = no lease */
	pol_lease_table_t *t = pol_lease_table_create();
	int op, id, n, i;

	(void) state;
	memset(ref, 0, sizeof(ref));
	for (op = 0; op < 40000; op++) {
		int what = rnd(0, 99);

		id = rnd(0, IDS - 1);
		if (what < 60) {
			int g = rnd(0, 64);

			assert_int_equal(pol_lease_grant(t, id, g, op, 10), 0);
			ref[id] = g + 1;
		} else if (what < 80) {
			assert_int_equal(pol_lease_drop(t, id),
					 ref[id] ? 0 : -1);
			ref[id] = 0;
		} else if (what < 81) {
			int64_t live[IDS];

			for (n = 0, i = 0; i < IDS; i++)
				if (rnd(0, 1))
					live[n++] = i;
				else
					ref[i] = 0;
			assert_int_equal(pol_lease_sweep(t, live, n), 0);
		} else {
			const pol_lease_t *l = pol_lease_get(t, id);

			if (ref[id]) {
				assert_non_null(l);
				assert_int_equal(l->gpus, ref[id] - 1);
			} else {
				assert_null(l);
			}
		}
	}
	for (n = 0, i = 0; i < IDS; i++)
		n += ref[i] != 0;
	assert_int_equal(pol_lease_count(t), n);
	for (i = 0; i < n; i++)
		assert_true(ref[pol_lease_at(t, i)->job_id] != 0);
	pol_lease_table_destroy(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_themis_rho_hand_computed),
		cmocka_unit_test(test_themis_ideal_and_bad_input),
		cmocka_unit_test(test_themis_rho_monotone),
		cmocka_unit_test(test_themis_contention_average),
		cmocka_unit_test(test_themis_worst_fraction),
		cmocka_unit_test(test_themis_bid_best_placement),
		cmocka_unit_test(test_themis_auction_hand_computed),
		cmocka_unit_test(test_themis_pf_exact_matches_brute_force),
		cmocka_unit_test(test_themis_pf_exclude),
		cmocka_unit_test(test_themis_misreport_never_gains),
		cmocka_unit_test(test_themis_auction_large_uses_greedy),
		cmocka_unit_test(test_themis_greedy_heap_matches_scan),
		cmocka_unit_test(test_themis_auction_bad_bids),
		cmocka_unit_test(test_themis_lease_lifecycle),
		cmocka_unit_test(test_themis_lease_table_matches_reference),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
