/*
 * test_loan_grow.c - elastic growth on loaned GPUs: the multiple-choice
 * knapsack and the growth round against brute force, the greedy at
 * scale, bad input, and the attained time a lender may keep.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pol_loan.h"

#include "loan_inst.h"

/* ---- knapsack ---- */

#define MG 5
#define MO 4

typedef struct mk {
	int n, cap;
	int w[MG][MO];
	double v[MG][MO];
	pol_mckp_group_t g[MG];
} mk_t;

static double mk_brute(const mk_t *m, int gi, int cap)
{
	double best, x;
	int k;

	if (gi == m->n)
		return 0;
	best = mk_brute(m, gi + 1, cap);
	for (k = 0; k < m->g[gi].n; k++)
		if (m->w[gi][k] <= cap) {
			x = m->v[gi][k] +
			    mk_brute(m, gi + 1, cap - m->w[gi][k]);
			if (x > best)
				best = x;
		}
	return best;
}

static void mk_check_choice(const mk_t *m, const int *choice, double value)
{
	int i, w = 0;
	double v = 0;

	for (i = 0; i < m->n; i++) {
		assert_true(choice[i] >= -1 && choice[i] < m->g[i].n);
		if (choice[i] >= 0) {
			w += m->w[i][choice[i]];
			v += m->v[i][choice[i]];
		}
	}
	assert_true(w <= m->cap);
	assert_true(fabs(v - value) < 1e-9);
}

static void test_mckp_vs_brute(void **state)
{
	uint64_t s = 5;
	int it, gaps = 0;

	(void) state;
	for (it = 0; it < 3000; it++) {
		mk_t m;
		int choice[MG], i, k;
		double dp, gr, bound, opt;

		memset(&m, 0, sizeof(m));
		m.n = 1 + rnd(&s, MG);
		m.cap = rnd(&s, 13);
		for (i = 0; i < m.n; i++) {
			m.g[i].n = 1 + rnd(&s, MO);
			for (k = 0; k < m.g[i].n; k++) {
				m.w[i][k] = 1 + rnd(&s, 5);
				m.v[i][k] = (double) (rnd(&s, 41) - 5) / 2;
			}
			m.g[i].weight = m.w[i];
			m.g[i].value = m.v[i];
		}
		opt = mk_brute(&m, 0, m.cap);
		assert_int_equal(pol_mckp_dp(m.g, m.n, m.cap, choice, &dp), 0);
		mk_check_choice(&m, choice, dp);
		assert_true(fabs(dp - opt) < 1e-9);
		assert_int_equal(
			pol_mckp_greedy(m.g, m.n, m.cap, choice, &gr, &bound),
			0);
		mk_check_choice(&m, choice, gr);
		assert_true(gr <= opt + 1e-9);
		assert_true(gr >= opt - bound - 1e-9);
		gaps += gr < opt - 1e-9;
	}
	/* the greedy is not the DP: the test would see it if it were */
	assert_true(gaps > 0);
}

static void test_mckp_concave_greedy_exact(void **state)
{
	/* concave curves that fit exactly: the greedy is optimal */
	int w[3] = { 1, 2, 3 };
	double a[3] = { 10, 18, 24 }, b[3] = { 8, 15, 21 };
	pol_mckp_group_t g[2] = { { 3, w, a }, { 3, w, b } };
	int choice[2];
	double dp, gr, bound;

	(void) state;
	assert_int_equal(pol_mckp_dp(g, 2, 4, choice, &dp), 0);
	assert_int_equal(pol_mckp_greedy(g, 2, 4, choice, &gr, &bound), 0);
	/* increments 10, 8, 8, 7, 6, 6: take 10, 8, 8, 7 = 33 */
	assert_true(fabs(dp - 33) < 1e-9);
	assert_true(fabs(gr - 33) < 1e-9);
	assert_int_equal(choice[0], 1);
	assert_int_equal(choice[1], 1);
	assert_int_equal(pol_mckp_dp(g, 2, -1, choice, &dp), -1);
}

/* ---- elastic growth ---- */

static double gv(const pol_loan_grow_job_t *j, int x, double serial)
{
	if (x == 0)
		return 0;
	return j->left_s -
	       (j->resize_s +
		j->left_s * pol_loan_speedup(j->cur * j->gpn, serial) /
			pol_loan_speedup((j->cur + x) * j->gpn, serial));
}

/* best summed reduction over every extra[] with sum <= cap */
static double grow_brute(const pol_loan_grow_job_t *j, int n, int cap,
			 double serial)
{
	double best = 0, v;
	int x;

	if (n == 0)
		return 0;
	best = grow_brute(j + 1, n - 1, cap, serial);
	for (x = 1; x <= j->max - j->cur && x <= cap; x++) {
		v = gv(j, x, serial);
		if (v <= 0)
			continue;
		v += grow_brute(j + 1, n - 1, cap - x, serial);
		if (v > best)
			best = v;
	}
	return best;
}

static void test_grow_vs_brute(void **state)
{
	uint64_t s = 11;
	int it, grown = 0, skipped = 0;

	(void) state;
	for (it = 0; it < 2000; it++) {
		pol_loan_grow_job_t j[6];
		int extra[6], n = rnd(&s, 7), cap = rnd(&s, 10), i, sum = 0;
		double serial = (double) rnd(&s, 30) / 100, gain = -1, opt,
		       v = 0, bound = -1;
		bool exact = false;

		for (i = 0; i < n; i++) {
			j[i].cur = 1 + rnd(&s, 4);
			j[i].max = j[i].cur + rnd(&s, 5);
			j[i].left_s = (double) rnd(&s, 20000);
			j[i].resize_s = (double) rnd(&s, 3000);
			j[i].gpn = 1 + rnd(&s, 8);
		}
		assert_int_equal(pol_loan_grow(j, n, cap, serial, extra, &gain,
					       &exact, &bound),
				 0);
		assert_true(exact);
		assert_true(bound == 0);
		for (i = 0; i < n; i++) {
			assert_true(extra[i] >= 0);
			assert_true(j[i].cur + extra[i] <= j[i].max);
			/* a job that gains no time never grows */
			if (extra[i])
				assert_true(gv(&j[i], extra[i], serial) > 0);
			sum += extra[i];
			v += gv(&j[i], extra[i], serial);
			grown += extra[i] > 0;
			skipped += extra[i] == 0 && j[i].max > j[i].cur;
		}
		assert_true(sum <= cap);
		assert_true(fabs(v - gain) < 1e-6);
		opt = grow_brute(j, n, cap, serial);
		assert_true(fabs(gain - opt) < 1e-6);
	}
	assert_true(grown > 100);
	assert_true(skipped > 100);
}

static void test_grow_greedy_at_scale(void **state)
{
	/* large enough for the greedy: within its bound of the DP */
	enum { N = 2000, CAP = 600, GO = 8 };
	pol_loan_grow_job_t *j = calloc(N, sizeof(*j));
	int *extra = calloc(N, sizeof(int)), *choice = calloc(N, sizeof(int));
	int *w = calloc(N * GO, sizeof(int)), i, x, sum = 0;
	double *v = calloc(N * GO, sizeof(double)), gain, bound, dp;
	pol_mckp_group_t *g = calloc(N, sizeof(*g));
	uint64_t s = 3;
	bool exact = true;

	(void) state;
	assert_non_null(j);
	assert_non_null(extra);
	assert_non_null(choice);
	assert_non_null(w);
	assert_non_null(v);
	assert_non_null(g);
	for (i = 0; i < N; i++) {
		j[i].cur = 1 + rnd(&s, 3);
		j[i].max = j[i].cur + 1 + rnd(&s, GO);
		if (j[i].max - j[i].cur > GO)
			j[i].max = j[i].cur + GO;
		j[i].left_s = (double) rnd(&s, 40000);
		j[i].resize_s = (double) rnd(&s, 2000);
		j[i].gpn = 8;
	}
	assert_int_equal(
		pol_loan_grow(j, N, CAP, 0.05, extra, &gain, &exact, &bound),
		0);
	assert_false(exact);
	for (i = 0; i < N; i++) {
		g[i].weight = &w[i * GO];
		g[i].value = &v[i * GO];
		for (x = 1; x <= j[i].max - j[i].cur; x++) {
			w[i * GO + g[i].n] = x;
			v[i * GO + g[i].n] = gv(&j[i], x, 0.05) > 0
						     ? gv(&j[i], x, 0.05)
						     : 0;
			g[i].n++;
		}
		sum += extra[i];
	}
	assert_true(sum <= CAP);
	assert_int_equal(pol_mckp_dp(g, N, CAP, choice, &dp), 0);
	assert_true(gain <= dp + 1e-6);
	assert_true(gain >= dp - bound - 1e-6);
	free(j);
	free(extra);
	free(choice);
	free(w);
	free(v);
	free(g);
}

static void test_left_attained(void **state)
{
	(void) state;
	/* the time run so far */
	assert_true(pol_loan_left_attained(600, 0) == 600);
	/* capped by what the limit leaves */
	assert_true(pol_loan_left_attained(600, 1000) == 400);
	assert_true(pol_loan_left_attained(600, 5000) == 600);
	/* never below 0 */
	assert_true(pol_loan_left_attained(1200, 1000) == 0);
	assert_true(pol_loan_left_attained(-5, 0) == 0);
}

static void test_grow_bad_input(void **state)
{
	pol_loan_grow_job_t j = { 2, 1, 100, 10, 8 };
	int extra[1];

	(void) state;
	/* max below cur */
	assert_int_equal(pol_loan_grow(&j, 1, 4, 0.05, extra, NULL, NULL, NULL),
			 -1);
	j.max = 4;
	j.left_s = NAN;
	assert_int_equal(pol_loan_grow(&j, 1, 4, 0.05, extra, NULL, NULL, NULL),
			 -1);
	j.left_s = 100;
	assert_int_equal(
		pol_loan_grow(&j, 1, -1, 0.05, extra, NULL, NULL, NULL), -1);
	/* a resize dearer than the time left: no growth */
	j.resize_s = 200;
	assert_int_equal(pol_loan_grow(&j, 1, 4, 0.05, extra, NULL, NULL, NULL),
			 0);
	assert_int_equal(extra[0], 0);
	j.resize_s = 10;
	j.left_s = 100000;
	assert_int_equal(pol_loan_grow(&j, 1, 4, 0.05, extra, NULL, NULL, NULL),
			 0);
	assert_int_equal(extra[0], 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mckp_vs_brute),
		cmocka_unit_test(test_mckp_concave_greedy_exact),
		cmocka_unit_test(test_grow_vs_brute),
		cmocka_unit_test(test_grow_greedy_at_scale),
		cmocka_unit_test(test_grow_bad_input),
		cmocka_unit_test(test_left_attained),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
