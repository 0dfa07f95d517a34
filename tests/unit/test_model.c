/* Unit tests of the core model (pol_model.c), the free map
 * (pol_freemap.c), the stock placement (pol_place_basic.c) and the policy
 * registry (pol_registry.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pol_model.h"
#include "pol_place.h"
#include "pol_policy.h"

static pol_alloc_t one_part(int node, pol_gpumask_t gpus)
{
	pol_alloc_t a;

	a.parts = malloc(sizeof(*a.parts));
	assert_non_null(a.parts);
	a.n_parts = 1;
	a.parts[0].node = node;
	a.parts[0].gpus = gpus;
	return a;
}

static void test_model_actions_add_copies_and_frees(void **state)
{
	pol_actions_t acts = { 0 };
	pol_alloc_t a = one_part(3, 0x0f);
	int i;

	(void) state;
	for (i = 0; i < 40; i++)
		assert_int_equal(pol_actions_add(&acts, POL_ACT_START, i, &a,
						 1.5, "why"),
				 0);
	pol_alloc_free(&a); /* the actions hold deep copies */
	assert_int_equal(acts.n, 40);
	assert_int_equal(acts.v[39].alloc.parts[0].node, 3);
	assert_int_equal(pol_alloc_gpus(&acts.v[39].alloc), 4);
	assert_string_equal(acts.v[0].reason, "why");
	acts.wakeup = 77;
	pol_actions_clear(&acts);
	assert_int_equal(acts.n, 0);
	assert_int_equal(acts.wakeup, 0);
	assert_int_equal(pol_actions_add(&acts, POL_ACT_HOLD, 1, NULL, 0, NULL),
			 0);
	assert_int_equal(acts.v[0].alloc.n_parts, 0);
	pol_actions_free(&acts);
	assert_null(acts.v);
	assert_int_equal(pol_actions_add(NULL, POL_ACT_HOLD, 1, NULL, 0, NULL),
			 -1);
	assert_int_equal(errno, EINVAL);
}

static void test_model_cluster_uniform_shape_and_clone(void **state)
{
	pol_cluster_t *c = pol_cluster_uniform(40, 8, 16), *d;

	(void) state;
	assert_non_null(c);
	assert_int_equal(c->n_nodes, 40);
	assert_int_equal(c->n_leaves, 3); /* 16 + 16 + 8 */
	assert_int_equal(c->nodes[15].leaf, 0);
	assert_int_equal(c->nodes[16].leaf, 1);
	assert_int_equal(c->nodes[39].leaf, 2);
	assert_int_equal(pol_cluster_gpus(c), 320);
	assert_int_equal(pol_cluster_free_gpus(c), 320);
	assert_true(pol_node_all_gpus(c, 0) == 0xff);
	d = pol_cluster_clone(c);
	assert_non_null(d);
	d->nodes[0].free = 0;
	assert_int_equal(pol_cluster_free_gpus(c), 320);
	assert_int_equal(pol_cluster_free_gpus(d), 312);
	pol_cluster_destroy(&d);
	assert_null(d);
	pol_cluster_destroy(&c);
	pol_cluster_destroy(&c); /* NULL is fine */
	assert_null(pol_cluster_uniform(0, 8, 16));
	assert_int_equal(errno, EINVAL);
	assert_null(pol_cluster_uniform(4, 65, 16));
}

static void test_model_alloc_level(void **state)
{
	pol_cluster_t *c = pol_cluster_uniform(40, 8, 16);
	pol_alloc_part_t p[2] = { { 0, 0x3 }, { 1, 0x1 } };
	pol_alloc_t a = { p, 1 };
	pol_node_type_t *t;

	(void) state;
	assert_int_equal(pol_alloc_level(c, &a), POL_LVL_NVLINK);
	a.n_parts = 2;
	assert_int_equal(pol_alloc_level(c, &a), POL_LVL_LEAF);
	p[1].node = 20;
	assert_int_equal(pol_alloc_level(c, &a), POL_LVL_CLUSTER);
	/* a type with two islands, one per socket */
	t = &c->types[0];
	t->level[0][4] = t->level[4][0] = POL_LVL_NODE;
	a.n_parts = 1;
	p[0].gpus = 0x11;
	assert_int_equal(pol_alloc_level(c, &a), POL_LVL_NODE);
	pol_cluster_destroy(&c);
}

static void test_freemap_take_give_are_checked(void **state)
{
	pol_cluster_t *c = pol_cluster_uniform(4, 8, 2);
	pol_freemap_t *fm;
	pol_alloc_t a = one_part(1, 0x0f), b = one_part(1, 0x18);

	(void) state;
	c->nodes[3].up = false;
	fm = pol_freemap_create(c);
	assert_non_null(fm);
	assert_int_equal(pol_freemap_capacity(fm, POL_POOL_TRAINING), 24);
	assert_int_equal(pol_freemap_free_gpus(fm, POL_POOL_TRAINING), 24);
	assert_int_equal(pol_freemap_full_gpus(fm, POL_POOL_TRAINING), 24);
	assert_int_equal(pol_freemap_take(fm, &a), 0);
	assert_true(pol_freemap_node(fm, 1) == 0xf0);
	/* overlapping take fails without side effects */
	assert_int_equal(pol_freemap_take(fm, &b), -1);
	assert_int_equal(errno, EBUSY);
	assert_true(pol_freemap_node(fm, 1) == 0xf0);
	assert_int_equal(pol_freemap_free_gpus(fm, POL_POOL_TRAINING), 20);
	assert_int_equal(pol_freemap_full_gpus_leaf(fm, POL_POOL_TRAINING, 0),
			 8);
	/* giving back GPUs that are free is an error */
	assert_int_equal(pol_freemap_give(fm, &b), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(pol_freemap_give(fm, &a), 0);
	assert_int_equal(pol_freemap_full_gpus(fm, POL_POOL_TRAINING), 24);
	/* a down node is never offered */
	assert_int_equal(pol_freemap_next_full(fm, POL_POOL_TRAINING, 2), -1);
	pol_freemap_destroy(&fm);
	assert_null(fm);
	pol_alloc_free(&a);
	pol_alloc_free(&b);
	pol_cluster_destroy(&c);
}

static void test_freemap_best_node_is_fewest_free_then_lowest(void **state)
{
	pol_cluster_t *c = pol_cluster_uniform(200, 8, 16);
	pol_freemap_t *fm;

	(void) state;
	c->nodes[150].free = 0x07; /* 3 free */
	c->nodes[70].free = 0x07;  /* 3 free, lower index */
	c->nodes[90].free = 0x01;  /* 1 free */
	c->nodes[199].free = 0x3f; /* 6 free */
	fm = pol_freemap_create(c);
	assert_int_equal(pol_freemap_best_node(fm, POL_POOL_TRAINING, 1, -1),
			 90);
	assert_int_equal(pol_freemap_best_node(fm, POL_POOL_TRAINING, 2, -1),
			 70);
	assert_int_equal(pol_freemap_best_node(fm, POL_POOL_TRAINING, 4, -1),
			 199);
	assert_int_equal(pol_freemap_best_node(fm, POL_POOL_TRAINING, 7, -1),
			 0);
	assert_int_equal(pol_freemap_best_node(fm, POL_POOL_TRAINING, 2, 9),
			 150);
	assert_int_equal(pol_freemap_best_node(fm, POL_POOL_INFERENCE, 1, -1),
			 -1);
	assert_int_equal(pol_freemap_count_at_least(fm, POL_POOL_TRAINING, 3),
			 199);
	pol_freemap_destroy(&fm);
	pol_cluster_destroy(&c);
}

/* table: cluster 4 leaves x 4 nodes x 8 GPUs, some GPUs busy, a job, the
 * expected allocation (nodes in order, GPU masks) */
static const struct {
	const char *what;
	int busy_node[4];
	pol_gpumask_t busy_mask[4];
	int nodes, gpn, total;
	int expect_rc; /* 0 or ENOSPC */
	int n_parts;
	int node[4];
	pol_gpumask_t gpus[4];
} place_cases[] = {
	{ "1 GPU goes to the fullest node that fits",
	  { 5, 9 },
	  { 0x7f, 0x3f },
	  0,
	  0,
	  1,
	  0,
	  1,
	  { 5 },
	  { 0x80 } },
	{ "2 GPUs skip the node with 1 free",
	  { 5, 9 },
	  { 0x7f, 0x3f },
	  0,
	  0,
	  2,
	  0,
	  1,
	  { 9 },
	  { 0xc0 } },
	{ "8 GPUs need a whole node",
	  { 0 },
	  { 0x01 },
	  0,
	  0,
	  8,
	  0,
	  1,
	  { 1 },
	  { 0xff } },
	{ "16 GPUs: two whole nodes of one leaf, the fullest leaf",
	  { 0, 1, 4 },
	  { 0x01, 0x01, 0x01 },
	  0,
	  0,
	  16,
	  0,
	  2,
	  { 2, 3 },
	  { 0xff, 0xff } },
	{ "12 GPUs: a whole node plus half of one, same leaf",
	  { 0 },
	  { 0x01 },
	  0,
	  0,
	  12,
	  0,
	  2,
	  { 1, 2 },
	  { 0xff, 0x0f } },
	{ "32 GPUs across leaves when no leaf has 4 whole nodes",
	  { 0, 4, 8, 12 },
	  { 0x01, 0x01, 0x01, 0x01 },
	  0,
	  0,
	  32,
	  0,
	  4,
	  { 1, 2, 3, 5 },
	  { 0xff, 0xff, 0xff, 0xff } },
	{ "explicit gang 2 x 4 on nodes with >= 4 free",
	  { 0 },
	  { 0x1f },
	  2,
	  4,
	  0,
	  0,
	  2,
	  { 1, 2 },
	  { 0x0f, 0x0f } },
	{ "explicit gang 2 x 8 = whole nodes",
	  { 0 },
	  { 0x01 },
	  2,
	  8,
	  0,
	  0,
	  2,
	  { 1, 2 },
	  { 0xff, 0xff } },
	{ "more GPUs than exist: no space",
	  { 0 },
	  { 0 },
	  0,
	  0,
	  129,
	  ENOSPC,
	  0,
	  { 0 },
	  { 0 } },
};

static void test_place_basic_table(void **state)
{
	size_t i;

	(void) state;
	for (i = 0; i < sizeof(place_cases) / sizeof(place_cases[0]); i++) {
		pol_cluster_t *c = pol_cluster_uniform(16, 8, 4);
		pol_freemap_t *fm;
		pol_job_t j;
		pol_alloc_t a;
		int k, rc;

		for (k = 0; k < 4; k++)
			c->nodes[place_cases[i].busy_node[k]].free &=
				~place_cases[i].busy_mask[k];
		fm = pol_freemap_create(c);
		memset(&j, 0, sizeof(j));
		j.nodes = place_cases[i].nodes;
		j.gpus_per_node = place_cases[i].gpn;
		j.total_gpus = place_cases[i].nodes ? place_cases[i].nodes *
							      place_cases[i].gpn
						    : place_cases[i].total;
		rc = pol_place_basic(NULL, fm, &j, &a);
		if (place_cases[i].expect_rc) {
			if (rc != -1 || errno != place_cases[i].expect_rc)
				fail_msg("%s: expected failure",
					 place_cases[i].what);
		} else {
			if (rc != 0)
				fail_msg("%s: rc %d errno %d",
					 place_cases[i].what, rc, errno);
			if (a.n_parts != place_cases[i].n_parts)
				fail_msg("%s: %d parts", place_cases[i].what,
					 a.n_parts);
			for (k = 0; k < a.n_parts; k++)
				if (a.parts[k].node != place_cases[i].node[k] ||
				    a.parts[k].gpus != place_cases[i].gpus[k])
					fail_msg(
						"%s: part %d = node %d mask %#llx",
						place_cases[i].what, k,
						a.parts[k].node,
						(unsigned long long) a.parts[k]
							.gpus);
			/* the strategy does not modify the map */
			assert_true(pol_freemap_fits(fm, &a));
			pol_alloc_free(&a);
		}
		pol_freemap_destroy(&fm);
		pol_cluster_destroy(&c);
	}
}

static void test_place_basic_prefers_one_island(void **state)
{
	pol_cluster_t *c = pol_cluster_uniform(1, 8, 0);
	pol_node_type_t *t = &c->types[0];
	pol_freemap_t *fm;
	pol_job_t j = { 0 };
	pol_alloc_t a;
	int g;

	(void) state;
	for (g = 0; g < 8; g++)
		t->gpu_island[g] = (int8_t) (g / 4);
	c->nodes[0].free = 0xfe; /* GPU 0 busy: island 0 has 3 free */
	fm = pol_freemap_create(c);
	j.total_gpus = 3;
	assert_int_equal(pol_place_basic(NULL, fm, &j, &a), 0);
	assert_true(a.parts[0].gpus == 0x0e); /* fills island 0 */
	pol_alloc_free(&a);
	j.total_gpus = 4;
	assert_int_equal(pol_place_basic(NULL, fm, &j, &a), 0);
	assert_true(a.parts[0].gpus == 0xf0); /* island 1 whole */
	pol_alloc_free(&a);
	pol_freemap_destroy(&fm);
	pol_cluster_destroy(&c);
}

static void test_registry_and_params(void **state)
{
	agora_err_t err = { { 0 } };
	pol_policy_t *p;
	double v[2] = { 1, 2 }, l[4];
	static const char *const keys[] = { "window", "max_job_test", NULL };

	(void) state;
	assert_non_null(pol_registry_find("fifo"));
	assert_non_null(pol_registry_find("backfill"));
	assert_non_null(pol_registry_find("las"));
	assert_non_null(pol_registry_find("srtf"));
	assert_null(pol_registry_find("nope"));
	p = pol_policy_create("nope", NULL, NULL, &err);
	assert_null(p);
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(err.text, "nope"));
	p = pol_policy_create("backfill", "window=2h,max_job_test=0", NULL,
			      &err);
	assert_non_null(p);
	assert_string_equal(pol_policy_name(p), "backfill");
	pol_policy_destroy(&p);
	assert_null(p);
	p = pol_policy_create("backfill", "windw=1", NULL, &err);
	assert_null(p);
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err.text, "windw: unknown parameter"));
	assert_null(pol_policy_create("las", "thresholds=5:3", NULL, &err));
	assert_non_null(strstr(err.text, "increasing"));
	assert_int_equal(pol_params_parse("t", "window=1.5h", keys, v, &err),
			 0);
	assert_true(v[0] == 5400 && v[1] == 2);
	assert_int_equal(pol_params_parse("t", "max_job_test=x", keys, v, &err),
			 -1);
	assert_non_null(strstr(err.text, "max_job_test: 'x' is not a number"));
	assert_int_equal(
		pol_params_list("t", "a=1,th=1m:2h:3", "th", l, 4, &err), 3);
	assert_true(l[0] == 60 && l[1] == 7200 && l[2] == 3);
	/* a list's items are range-checked as single values are: las and
	 * tiresias cast thresholds to int64_t */
	assert_int_equal(
		pol_params_list("t", "th=3600:1e300", "th", l, 4, &err), -1);
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err.text, "th: item 2 of '3600:1e300'"));
	assert_non_null(strstr(err.text, "out of range"));
	assert_null(
		pol_policy_create("las", "thresholds=3600:-1e20", NULL, &err));
	assert_non_null(strstr(err.text, "out of range"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_model_actions_add_copies_and_frees),
		cmocka_unit_test(test_model_cluster_uniform_shape_and_clone),
		cmocka_unit_test(test_model_alloc_level),
		cmocka_unit_test(test_freemap_take_give_are_checked),
		cmocka_unit_test(
			test_freemap_best_node_is_fewest_free_then_lowest),
		cmocka_unit_test(test_place_basic_table),
		cmocka_unit_test(test_place_basic_prefers_one_island),
		cmocka_unit_test(test_registry_and_params),
	};

	return cmocka_run_group_tests_name("pol_model", tests, NULL, NULL);
}
