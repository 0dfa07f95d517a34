/* Unit tests of the name -> int map (common/base/pol_app_index.c):
 * collisions, growth, removal (backward shift), against a plain array
 * as the reference. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pol_app_index.h"

/* every key in one of four buckets: runs wrap around the table */
static unsigned long long bad_hash(const char *s)
{
	size_t n = strlen(s);

	return n ? (unsigned long long) (unsigned char) s[n - 1] % 4 + 13 : 0;
}

static void test_index_basic(void **state)
{
	pol_app_index_t *m = pol_app_index_create();
	int v = -1;

	(void) state;
	assert_non_null(m);
	assert_int_equal(pol_app_index_get(m, "a", &v), -1);
	assert_int_equal(pol_app_index_remove(m, "a"), -1);
	assert_int_equal(pol_app_index_put(m, "a", 1), 0);
	assert_int_equal(pol_app_index_put(m, "a", 2), 1); /* replaced */
	assert_int_equal(pol_app_index_get(m, "a", &v), 0);
	assert_int_equal(v, 2);
	assert_int_equal(pol_app_index_put(m, NULL, 7), 0); /* NULL = "" */
	assert_int_equal(pol_app_index_get(m, "", &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(pol_app_index_count(m), 2);
	assert_int_equal(pol_app_index_remove(m, "a"), 0);
	assert_int_equal(pol_app_index_get(m, "a", NULL), -1);
	assert_int_equal(pol_app_index_count(m), 1);
	pol_app_index_destroy(&m);
	assert_null(m);
	pol_app_index_destroy(&m);
}

/* random puts and removes, checked against a plain array, under both the
 * real hash and one where everything collides */
static void churn(pol_app_index_t *m, int n_keys, int rounds)
{
	int *ref = malloc((size_t) n_keys * sizeof(*ref));
	unsigned seed = 12345;
	int i, r, v;
	size_t live = pol_app_index_count(m); /* keys of other names */
	char key[32];

	assert_non_null(ref);
	for (i = 0; i < n_keys; i++)
		ref[i] = -1;
	for (r = 0; r < rounds; r++) {
		seed = seed * 1103515245u + 12345u;
		i = (int) ((seed >> 8) % (unsigned) n_keys);
		snprintf(key, sizeof(key), "app-%d", i);
		if (((seed >> 4) & 3) == 0 && ref[i] >= 0) {
			assert_int_equal(pol_app_index_remove(m, key), 0);
			ref[i] = -1;
			live--;
		} else {
			assert_int_equal(pol_app_index_put(m, key, r),
					 ref[i] >= 0 ? 1 : 0);
			live += ref[i] < 0;
			ref[i] = r;
		}
		assert_int_equal(pol_app_index_count(m), live);
	}
	for (i = 0; i < n_keys; i++) {
		snprintf(key, sizeof(key), "app-%d", i);
		if (ref[i] < 0) {
			assert_int_equal(pol_app_index_get(m, key, &v), -1);
		} else {
			assert_int_equal(pol_app_index_get(m, key, &v), 0);
			assert_int_equal(v, ref[i]);
		}
	}
	free(ref);
}

static void test_index_collisions(void **state)
{
	pol_app_index_t *m = pol_app_index_create_hash(bad_hash);

	(void) state;
	assert_non_null(m);
	churn(m, 200, 5000);
	pol_app_index_destroy(&m);
}

static void test_index_growth_removal(void **state)
{
	pol_app_index_t *m = pol_app_index_create();
	char key[32];
	int i, v;

	(void) state;
	assert_non_null(m);
	/* 5,000 users: at most half full after every growth */
	for (i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "user:%d", 1000 + i);
		assert_int_equal(pol_app_index_put(m, key, i), 0);
		assert_true(2 * pol_app_index_count(m) <=
			    pol_app_index_slots(m));
	}
	assert_int_equal(pol_app_index_slots(m), 16384);
	/* remove every other one: the rest are still found */
	for (i = 0; i < 5000; i += 2) {
		snprintf(key, sizeof(key), "user:%d", 1000 + i);
		assert_int_equal(pol_app_index_remove(m, key), 0);
	}
	for (i = 0; i < 5000; i++) {
		snprintf(key, sizeof(key), "user:%d", 1000 + i);
		if (i % 2) {
			assert_int_equal(pol_app_index_get(m, key, &v), 0);
			assert_int_equal(v, i);
		} else {
			assert_int_equal(pol_app_index_get(m, key, &v), -1);
		}
	}
	assert_int_equal(pol_app_index_count(m), 2500);
	churn(m, 3000, 20000); /* mixed with the survivors' keys space */
	pol_app_index_destroy(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_index_basic),
		cmocka_unit_test(test_index_collisions),
		cmocka_unit_test(test_index_growth_removal),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
