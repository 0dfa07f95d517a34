/*
 * Unit tests of the federation core's replica placement (common/fed/
 * pol_fed_place.c): hill climbing against brute force on small cases, a
 * random property test, and the limits and errors.
 */

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pol_fed.h"

static void assert_near(double got, double want, double tol)
{
	if (fabs(got - want) > tol)
		fail_msg("got %.12g, want %.12g (tol %g)", got, want, tol);
}

/* ---- hill climbing against brute force -------------------------------- */

#define MAXD 5
#define MAXC 4

typedef struct pcase {
	int n_c, n_d;
	double supply[MAXC], quota[MAXC]; /* quota 0: unlimited */
	double demand[MAXD], bytes[MAXD];
	uint64_t where[MAXD];
} pcase_t;

static void case_catalog(const pcase_t *k, pol_fed_catalog_t *cat)
{
	int i;

	cat->n_sites = k->n_c;
	cat->n_datasets = k->n_d;
	cat->sites = calloc(MAXC, sizeof(*cat->sites));
	cat->datasets = calloc(MAXD, sizeof(*cat->datasets));
	assert_non_null(cat->sites);
	assert_non_null(cat->datasets);
	for (i = 0; i < k->n_c; i++) {
		snprintf(cat->sites[i].name, POL_FED_NAME_LEN, "c%d", i + 1);
		cat->sites[i].storage_bytes = k->quota[i];
		cat->sites[i].link_bytes_per_s = 1e9;
	}
	for (i = 0; i < k->n_d; i++) {
		snprintf(cat->datasets[i].name, POL_FED_NAME_LEN, "d%d", i);
		cat->datasets[i].bytes = k->bytes[i];
		cat->datasets[i].where = k->where[i];
	}
}

static double worst_of(const pcase_t *k, const uint64_t *where)
{
	double dem[MAXC] = { 0 }, worst = 0;
	int d, c;

	for (d = 0; d < k->n_d; d++) {
		int n = __builtin_popcountll(where[d]);

		for (c = 0; c < k->n_c; c++)
			if (n && ((where[d] >> c) & 1))
				dem[c] += k->demand[d] / n;
	}
	for (c = 0; c < k->n_c; c++) {
		double r = k->supply[c] > 0 ? dem[c] / k->supply[c]
			   : dem[c] > 0     ? INFINITY
					    : 0;

		if (r > worst)
			worst = r;
	}
	return worst;
}

static bool fits(const pcase_t *k, const uint64_t *where)
{
	int c, d;

	for (c = 0; c < k->n_c; c++) {
		double used = 0;

		for (d = 0; d < k->n_d; d++)
			if ((where[d] >> c) & 1)
				used += k->bytes[d];
		if (k->quota[c] > 0 && used > k->quota[c] * (1 + 1e-9))
			return false;
	}
	return true;
}

/* every placement (each dataset on a non-empty subset of the clusters)
 * that fits the quotas: the lowest worst demand/supply */
static double brute_force(const pcase_t *k)
{
	uint64_t where[MAXD] = { 0 };
	int sub = (1 << k->n_c) - 1, idx[MAXD] = { 0 }, d;
	double best = INFINITY;

	for (;;) {
		for (d = 0; d < k->n_d; d++)
			where[d] = (uint64_t) idx[d] + 1;
		if (fits(k, where)) {
			double w = worst_of(k, where);

			if (w < best)
				best = w;
		}
		for (d = 0; d < k->n_d; d++) {
			if (++idx[d] < sub)
				break;
			idx[d] = 0;
		}
		if (d == k->n_d)
			return best;
	}
}

/* Run the placer on case k; check the plan replays within the quotas,
 * keeps a replica of every dataset, ends at worst_after, and is no worse
 * than the start.  The worst load it reaches. */
static double climb(const pcase_t *k)
{
	pol_fed_catalog_t cat;
	pol_fed_place_result_t res;
	uint64_t where[MAXD] = { 0 };
	int i, d;

	case_catalog(k, &cat);
	assert_int_equal(
		pol_fed_place(&cat, k->demand, k->supply, INT_MAX, true, &res),
		0);
	memcpy(where, k->where, sizeof(where));
	assert_near(res.worst_before, worst_of(k, where), 1e-9);
	for (i = 0; i < res.n_moves; i++) {
		const pol_fed_move_t *m = &res.moves[i];

		d = m->dataset;
		assert_in_range(d, 0, k->n_d - 1);
		assert_in_range(m->from, 0, k->n_c - 1);
		assert_true((where[d] >> m->from) & 1);
		if (m->to < 0) {
			where[d] &= ~((uint64_t) 1 << m->from);
			assert_true(where[d] != 0);
		} else {
			assert_false((where[d] >> m->to) & 1);
			assert_near(m->bytes, k->bytes[d], 0);
			where[d] |= (uint64_t) 1 << m->to;
			/* within quota after every copy, also the copy of
			 * a moved replica before its drop */
			assert_true(fits(k, where));
		}
	}
	assert_true(fits(k, where));
	for (d = 0; d < k->n_d; d++)
		assert_true(cat.datasets[d].where == where[d]); /* applied */
	assert_near(res.worst_after, worst_of(k, where), 1e-9);
	assert_true(res.worst_after <= res.worst_before + 1e-9);
	for (i = 0; i < k->n_c; i++)
		assert_near(res.after.supply_gpus[i], k->supply[i], 0);
	pol_fed_place_result_free(&res);
	free(cat.sites);
	free(cat.datasets);
	return worst_of(k, where);
}

/* Cases where hill climbing reaches the optimum. */
static void test_place_matches_brute_force(void **state)
{
	static const pcase_t cases[] = {
		/* everything on c1, unlimited storage: spread to balance */
		{ 3,
		  4,
		  { 8, 8, 8 },
		  { 0, 0, 0 },
		  { 8, 8, 8, 8 },
		  { 1, 1, 1, 1 },
		  { 1, 1, 1, 1 } },
		/* c1 is small: its four datasets' demand goes elsewhere */
		{ 3,
		  4,
		  { 8, 32, 24 },
		  { 0, 0, 0 },
		  { 8, 8, 8, 8 },
		  { 1, 1, 1, 1 },
		  { 1, 1, 1, 1 } },
		/* quotas of two datasets each: replicas must move */
		{ 3,
		  4,
		  { 16, 16, 16 },
		  { 4, 2, 2 },
		  { 12, 12, 4, 4 },
		  { 1, 1, 1, 1 },
		  { 1, 1, 1, 1 } },
		/* one hot dataset, replicas everywhere already: only drops
		 * could change anything and none helps */
		{ 3,
		  4,
		  { 8, 8, 8 },
		  { 0, 0, 0 },
		  { 24, 0, 0, 0 },
		  { 1, 1, 1, 1 },
		  { 7, 1, 2, 4 } },
		/* sizes differ: c3 can hold the big dataset only */
		{ 3,
		  4,
		  { 32, 8, 16 },
		  { 0, 3, 10 },
		  { 32, 8, 8, 8 },
		  { 10, 1, 1, 1 },
		  { 1, 2, 2, 2 } },
		/* already optimal: no move */
		{ 3,
		  4,
		  { 8, 8, 8 },
		  { 0, 0, 0 },
		  { 8, 8, 8, 0 },
		  { 1, 1, 1, 1 },
		  { 1, 2, 4, 1 } },
	};
	size_t i;

	(void) state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double hc = climb(&cases[i]), bf = brute_force(&cases[i]);

		if (fabs(hc - bf) > 1e-9)
			fail_msg("case %zu: hill climbing %.6f, brute force "
				 "%.6f",
				 i, hc, bf);
	}
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

/* Random small cases: quotas hold at every step, never worse than the
 * start, never better than brute force; how often it is optimal and how
 * far it is otherwise go to the TAP log. */
static void test_place_random_property(void **state)
{
	int trial, equal = 0, n = 0;
	double sum_gap = 0, max_gap = 0;

	(void) state;
	for (trial = 0; trial < 300; trial++) {
		pcase_t k;
		int c, d;
		double hc, bf;

		memset(&k, 0, sizeof(k));
		k.n_c = 2 + (int) (rng() % 2); /* 2 or 3 */
		k.n_d = 2 + (int) (rng() % 3); /* 2 .. 4 */
		for (c = 0; c < k.n_c; c++) {
			k.supply[c] = 8.0 * (double) (1 + rng() % 6);
			k.quota[c] = rng() % 3 ? (double) (2 + rng() % 6) : 0;
		}
		for (d = 0; d < k.n_d; d++) {
			k.demand[d] = (double) (rng() % 40);
			k.bytes[d] = (double) (1 + rng() % 3);
		}
		/* a start within the quotas: first-fit one replica each */
		for (d = 0; d < k.n_d; d++) {
			int start = (int) (rng() % (uint64_t) k.n_c), t;

			for (t = 0; t < k.n_c; t++) {
				k.where[d] = (uint64_t) 1
					     << ((start + t) % k.n_c);
				if (fits(&k, k.where))
					break;
			}
			if (t == k.n_c)
				break;
		}
		if (d < k.n_d)
			continue; /* no start within the quotas */
		hc = climb(&k);
		bf = brute_force(&k);
		assert_true(hc >= bf - 1e-9);
		n++;
		if (hc - bf <= 1e-9)
			equal++;
		else if (isfinite(hc) && bf > 0) {
			sum_gap += hc / bf - 1;
			if (hc / bf - 1 > max_gap)
				max_gap = hc / bf - 1;
		}
	}
	assert_true(n > 100);
	print_message("# hill climbing vs brute force: %d/%d cases optimal; "
		      "the rest %.1f%% worse on average, %.1f%% at most\n",
		      equal, n, n > equal ? 100 * sum_gap / (n - equal) : 0.0,
		      100 * max_gap);
}

static void test_place_limits_and_errors(void **state)
{
	static const pcase_t k = { 3,
				   4,
				   { 8, 8, 8 },
				   { 0, 0, 0 },
				   { 8, 8, 8, 8 },
				   { 1, 1, 1, 1 },
				   { 1, 1, 1, 1 } };
	pol_fed_catalog_t cat;
	pol_fed_place_result_t res, res2;
	pol_fed_load_t load;
	double bad[4] = { 8, -1, 8, 8 };
	int i;

	(void) state;
	case_catalog(&k, &cat);
	/* max_moves 0: the loads only */
	assert_int_equal(
		pol_fed_place(&cat, k.demand, k.supply, 0, false, &res), 0);
	assert_int_equal(res.n_moves, 0);
	assert_near(res.worst_before, 4.0, 1e-12);
	assert_near(res.worst_after, 4.0, 1e-12);
	assert_near(res.before.demand_gpus[0], 32, 1e-12);
	pol_fed_place_result_free(&res);
	/* one move: the best single add */
	assert_int_equal(
		pol_fed_place(&cat, k.demand, k.supply, 1, false, &res), 0);
	assert_int_equal(res.n_moves, 1);
	assert_int_equal(res.moves[0].from, 0);
	assert_true(res.moves[0].to > 0);
	assert_near(res.worst_after, 28.0 / 8, 1e-12);
	pol_fed_place_result_free(&res);
	/* apply false leaves the catalog alone, and the plan is the same
	 * every time */
	assert_int_equal(
		pol_fed_place(&cat, k.demand, k.supply, INT_MAX, false, &res),
		0);
	assert_true(cat.datasets[0].where == 1);
	assert_int_equal(
		pol_fed_place(&cat, k.demand, k.supply, INT_MAX, false, &res2),
		0);
	assert_int_equal(res.n_moves, res2.n_moves);
	for (i = 0; i < res.n_moves; i++) {
		assert_int_equal(res.moves[i].dataset, res2.moves[i].dataset);
		assert_int_equal(res.moves[i].from, res2.moves[i].from);
		assert_int_equal(res.moves[i].to, res2.moves[i].to);
	}
	assert_near(res.worst_after, 32.0 / 24, 1e-9);
	pol_fed_place_result_free(&res);
	pol_fed_place_result_free(&res2);
	/* the load alone */
	assert_near(pol_fed_load_compute(&cat, k.demand, k.supply, &load), 4.0,
		    1e-12);
	assert_near(load.demand_gpus[1], 0, 0);
	assert_near(load.supply_gpus[2], 8, 0);
	/* bad input */
	errno = 0;
	assert_int_equal(pol_fed_place(&cat, bad, k.supply, 5, false, &res),
			 -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(
		pol_fed_place(&cat, k.demand, k.supply, -1, false, &res), -1);
	assert_int_equal(
		pol_fed_place(NULL, k.demand, k.supply, 1, false, &res), -1);
	assert_true(pol_fed_load_compute(&cat, bad, k.supply, &load) < 0);
	free(cat.sites);
	free(cat.datasets);
}

/* Will-run answers that cannot be true, and agorad's estimate instead:
 * c1 at 48/64 busy with 1 h jobs (ends at +600 s .. +3600 s). */

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_place_matches_brute_force),
		cmocka_unit_test(test_place_random_property),
		cmocka_unit_test(test_place_limits_and_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
