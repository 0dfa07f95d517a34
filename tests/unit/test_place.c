/*
 * Unit tests of the agora placement strategy (common/place/pol_topo_place.c):
 * the choice on hand-built free maps, determinism, weights, features,
 * pools, the score, the pol_place_f adapter, bad input.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pol_place.h"
#include "pol_topo_place.h"

/* 8 GPUs: islands 0-3 / 4-7 (= sockets), no PCIe info */
static void type_2island(pol_node_type_t *t)
{
	int i, j;

	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "2x4nvlink");
	t->n_gpus = 8;
	t->n_sockets = 2;
	for (i = 0; i < 8; i++) {
		t->gpu_socket[i] = (int8_t) (i / 4);
		t->gpu_island[i] = (int8_t) (i / 4);
		for (j = 0; j < 8; j++)
			t->level[i][j] = i / 4 == j / 4 ? POL_LVL_NVLINK
							: POL_LVL_NODE;
	}
}

/* 8 GPUs, PCIe only: pairs per switch, 4 per socket (2s-8gpu-pcie.xml) */
static void type_pcie(pol_node_type_t *t)
{
	int i, j;

	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "pcie8");
	t->n_gpus = 8;
	t->n_sockets = 2;
	for (i = 0; i < 8; i++) {
		t->gpu_socket[i] = (int8_t) (i / 4);
		t->gpu_island[i] = (int8_t) i;
		for (j = 0; j < 8; j++)
			t->level[i][j] = i == j           ? POL_LVL_NVLINK
					 : i / 2 == j / 2 ? POL_LVL_PCIE
					 : i / 4 == j / 4 ? POL_LVL_SOCKET
							  : POL_LVL_NODE;
	}
}

/* 16 GPUs in two 8-GPU islands: beyond the memo (greedy path) */
static void type_big(pol_node_type_t *t)
{
	int i, j;

	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "big16");
	t->n_gpus = 16;
	t->n_sockets = 2;
	for (i = 0; i < 16; i++) {
		t->gpu_socket[i] = (int8_t) (i / 8);
		t->gpu_island[i] = (int8_t) (i / 8);
		for (j = 0; j < 16; j++)
			t->level[i][j] = i / 8 == j / 8 ? POL_LVL_NVLINK
							: POL_LVL_NODE;
	}
}

/* compare allocations field by field (parts have padding) */
static void assert_alloc_equal(const pol_alloc_t *a, const pol_alloc_t *b)
{
	int i;

	assert_int_equal(a->n_parts, b->n_parts);
	for (i = 0; i < a->n_parts; i++) {
		assert_int_equal(a->parts[i].node, b->parts[i].node);
		assert_int_equal(a->parts[i].gpus, b->parts[i].gpus);
	}
}

typedef struct tcl {
	pol_cluster_t c;
	pol_node_type_t t;
} tcl_t;

/* n nodes of one type, per_leaf nodes per leaf, all free */
static tcl_t *mk(int n, int per_leaf, void (*type)(pol_node_type_t *))
{
	tcl_t *x = calloc(1, sizeof(*x));
	int i;

	assert_non_null(x);
	type(&x->t);
	x->c.types = &x->t;
	x->c.n_types = 1;
	x->c.n_nodes = n;
	x->c.n_leaves = (n + per_leaf - 1) / per_leaf;
	x->c.nodes = calloc((size_t) n, sizeof(pol_node_t));
	assert_non_null(x->c.nodes);
	for (i = 0; i < n; i++) {
		snprintf(x->c.nodes[i].name, POL_NAME_LEN, "n%d", i);
		x->c.nodes[i].leaf = i / per_leaf;
		x->c.nodes[i].up = true;
		x->c.nodes[i].free = ((pol_gpumask_t) 1 << x->t.n_gpus) - 1;
	}
	return x;
}

static void rm(tcl_t *x)
{
	free(x->c.nodes);
	free(x);
}

static int place(tcl_t *x, int nodes, int gpn, int total, pol_alloc_t *a,
		 double *score)
{
	pol_topo_place_t *ag = pol_topo_place_create(&x->c, NULL);
	pol_place_req_t r = { nodes, gpn, total, POL_POOL_TRAINING, 0 };
	int rc;

	assert_non_null(ag);
	rc = pol_topo_place_req(ag, &x->c, NULL, &r, a, score);
	pol_topo_place_destroy(&ag);
	assert_null(ag);
	return rc;
}

static void test_place_4gpu_job_takes_the_whole_island(void **state)
{
	tcl_t *x = mk(2, 2, type_2island);
	pol_alloc_t a = { 0 };

	(void) state;
	x->c.nodes[0].free = 0x33; /* 2 free in each island */
	x->c.nodes[1].free = 0xf0; /* island 1 whole */
	assert_int_equal(place(x, 0, 0, 4, &a, NULL), 0);
	assert_int_equal(a.n_parts, 1);
	assert_int_equal(a.parts[0].node, 1);
	assert_int_equal(a.parts[0].gpus, 0xf0);
	assert_int_equal(pol_alloc_level(&x->c, &a), POL_LVL_NVLINK);
	pol_alloc_free(&a);
	rm(x);
}

static void test_place_small_job_fills_a_hole_not_a_whole_island(void **s)
{
	tcl_t *x = mk(1, 1, type_2island);
	pol_alloc_t a = { 0 };

	(void) s;
	/* island 0 whole, island 1 has 2 free: a 2-GPU job goes to 1 */
	x->c.nodes[0].free = 0x3f;
	assert_int_equal(place(x, 1, 2, 2, &a, NULL), 0);
	assert_int_equal(a.parts[0].gpus, 0x30);
	pol_alloc_free(&a);
	/* 1 GPU: best fit, the island with 1 free (GPU 7) over 3 free */
	x->c.nodes[0].free = 0x8e;
	assert_int_equal(place(x, 0, 0, 1, &a, NULL), 0);
	assert_int_equal(a.parts[0].gpus, 0x80);
	pol_alloc_free(&a);
	rm(x);
}

static void test_place_4gpu_job_does_not_straddle_sockets(void **state)
{
	tcl_t *x = mk(2, 2, type_pcie);
	pol_alloc_t a = { 0 };

	(void) state;
	/* node 0: 2-5 free (straddles); node 1: 4-7 free (whole socket) */
	x->c.nodes[0].free = 0x3c;
	x->c.nodes[1].free = 0xf0;
	assert_int_equal(place(x, 0, 0, 4, &a, NULL), 0);
	assert_int_equal(a.parts[0].node, 1);
	assert_int_equal(a.parts[0].gpus, 0xf0);
	assert_int_equal(pol_alloc_level(&x->c, &a), POL_LVL_SOCKET);
	pol_alloc_free(&a);
	/* inside one node: 2-7 free, take the whole socket 4-7 */
	x->c.nodes[1].free = 0;
	x->c.nodes[0].free = 0xfc;
	assert_int_equal(place(x, 1, 4, 4, &a, NULL), 0);
	assert_int_equal(a.parts[0].gpus, 0xf0);
	pol_alloc_free(&a);
	/* 2 GPUs: one PCIe switch, the half-used socket (2-3) */
	assert_int_equal(place(x, 0, 0, 2, &a, NULL), 0);
	assert_int_equal(a.parts[0].gpus, 0x0c);
	assert_int_equal(pol_alloc_level(&x->c, &a), POL_LVL_PCIE);
	pol_alloc_free(&a);
	rm(x);
}

static void test_place_16gpu_job_takes_two_whole_nodes_in_one_leaf(void **s)
{
	tcl_t *x = mk(12, 4, type_2island);
	pol_alloc_t a = { 0 };
	int i, shape;

	(void) s;
	/* leaf 0: every node half used; leaf 1: nodes 4,6 whole, 5,7
	 * busy; leaf 2: all whole (must stay whole) */
	for (i = 0; i < 4; i++)
		x->c.nodes[i].free = 0x0f;
	x->c.nodes[5].free = 0;
	x->c.nodes[7].free = 0;
	for (shape = 0; shape < 2; shape++) {
		if (shape == 0)
			assert_int_equal(place(x, 0, 0, 16, &a, NULL), 0);
		else
			assert_int_equal(place(x, 2, 8, 16, &a, NULL), 0);
		assert_int_equal(a.n_parts, 2);
		assert_int_equal(a.parts[0].node, 4);
		assert_int_equal(a.parts[1].node, 6);
		assert_int_equal(a.parts[0].gpus, 0xff);
		assert_int_equal(a.parts[1].gpus, 0xff);
		assert_int_equal(pol_alloc_level(&x->c, &a), POL_LVL_LEAF);
		pol_alloc_free(&a);
	}
	/* 12 GPUs total: one whole node + a 4-GPU remainder, best fit on
	 * a half-used node's island, all in one leaf */
	assert_int_equal(place(x, 0, 0, 12, &a, NULL), 0);
	assert_int_equal(pol_alloc_gpus(&a), 12);
	assert_int_equal(pol_alloc_level(&x->c, &a), POL_LVL_LEAF);
	pol_alloc_free(&a);
	rm(x);
}

static void test_place_gang_spans_leaves_only_when_needed(void **state)
{
	tcl_t *x = mk(8, 2, type_2island);
	pol_alloc_t a = { 0 };
	int i;

	(void) state;
	/* one whole node per leaf: a 3 x 8 gang must span 3 leaves */
	for (i = 0; i < 8; i += 2)
		x->c.nodes[i].free = 0;
	assert_int_equal(place(x, 3, 8, 24, &a, NULL), 0);
	assert_int_equal(a.n_parts, 3);
	assert_int_equal(pol_alloc_level(&x->c, &a), POL_LVL_CLUSTER);
	pol_alloc_free(&a);
	/* 5 x 8 cannot fit: ENOSPC */
	assert_int_equal(place(x, 5, 8, 40, &a, NULL), -1);
	assert_int_equal(errno, ENOSPC);
	assert_null(a.parts);
	rm(x);
}

static void test_place_respects_weight_features_pool_and_up(void **state)
{
	tcl_t *x = mk(4, 4, type_2island);
	pol_topo_place_t *ag;
	pol_place_req_t r = { 1, 8, 8, POL_POOL_TRAINING, 0 };
	pol_alloc_t a = { 0 };

	(void) state;
	x->c.nodes[0].weight = 5;
	x->c.nodes[1].weight = 1;
	x->c.nodes[2].weight = 1;
	x->c.nodes[3].weight = 1;
	x->c.nodes[1].up = false;
	x->c.nodes[2].pool = POL_POOL_INFERENCE;
	x->c.nodes[3].features = 0x4;
	ag = pol_topo_place_create(&x->c, NULL);
	assert_non_null(ag);
	/* node 1 down, 2 other pool: 3 (weight 1) beats 0 (weight 5) */
	assert_int_equal(pol_topo_place_req(ag, &x->c, NULL, &r, &a, NULL), 0);
	assert_int_equal(a.parts[0].node, 3);
	pol_alloc_free(&a);
	/* a feature only node 3 lacks... none has 0x2: ENOSPC */
	r.features = 0x2;
	assert_int_equal(pol_topo_place_req(ag, &x->c, NULL, &r, &a, NULL), -1);
	assert_int_equal(errno, ENOSPC);
	r.features = 0x4;
	x->c.nodes[0].weight = 0;
	assert_int_equal(pol_topo_place_req(ag, &x->c, NULL, &r, &a, NULL), 0);
	assert_int_equal(a.parts[0].node, 3);
	pol_alloc_free(&a);
	r.features = 0;
	r.pool = POL_POOL_INFERENCE;
	assert_int_equal(pol_topo_place_req(ag, &x->c, NULL, &r, &a, NULL), 0);
	assert_int_equal(a.parts[0].node, 2);
	pol_alloc_free(&a);
	pol_topo_place_destroy(&ag);
	rm(x);
}

static void test_place_is_deterministic_ties_by_index(void **state)
{
	tcl_t *x = mk(64, 16, type_2island);
	pol_topo_place_t *ag;
	pol_place_req_t r = { 0, 0, 3, POL_POOL_TRAINING, 0 };
	pol_alloc_t a = { 0 }, b = { 0 };
	uint64_t rs = 7;
	int i, k;

	(void) state;
	for (i = 0; i < 64; i++) {
		rs ^= rs << 13;
		rs ^= rs >> 7;
		rs ^= rs << 17;
		x->c.nodes[i].free = rs & 0xff;
	}
	ag = pol_topo_place_create(&x->c, NULL);
	for (k = 1; k <= 40; k++) {
		r.total_gpus = k;
		r.nodes = 0;
		if (pol_topo_place_req(ag, &x->c, NULL, &r, &a, NULL) < 0)
			continue;
		/* a fresh placer (empty memo) gives the same answer */
		assert_int_equal(place(x, 0, 0, k, &b, NULL), 0);
		assert_alloc_equal(&a, &b);
		pol_alloc_free(&a);
		pol_alloc_free(&b);
	}
	pol_topo_place_destroy(&ag);
	/* identical nodes: the lowest index wins */
	for (i = 0; i < 64; i++)
		x->c.nodes[i].free = 0xff;
	assert_int_equal(place(x, 0, 0, 8, &a, NULL), 0);
	assert_int_equal(a.parts[0].node, 0);
	pol_alloc_free(&a);
	rm(x);
}

static void test_place_score_ranks_better_placements_lower(void **state)
{
	tcl_t *x = mk(2, 2, type_2island);
	pol_topo_place_t *ag;
	pol_alloc_t a = { 0 }, worse = { 0 };
	pol_alloc_part_t wp = { 1, 0x11 };
	double s1 = -1, s2;

	(void) state;
	x->c.nodes[0].free = 0x0f;
	ag = pol_topo_place_create(&x->c, NULL);
	{
		pol_place_req_t r = { 0, 0, 2, POL_POOL_TRAINING, 0 };

		assert_int_equal(
			pol_topo_place_req(ag, &x->c, NULL, &r, &a, &s1), 0);
	}
	assert_int_equal(a.parts[0].node, 0);
	/* its own score is reproducible */
	s2 = pol_topo_place_score(ag, &x->c, NULL, &a);
	assert_true(s2 > s1 - 1e-9 && s2 < s1 + 1e-9);
	assert_true(pol_topo_place_last_score(ag) == s1);
	/* 2 GPUs across islands of a whole node: level NODE, and breaks
	 * a whole node: much worse */
	worse.parts = &wp;
	worse.n_parts = 1;
	s2 = pol_topo_place_score(ag, &x->c, NULL, &worse);
	assert_true(s2 > s1 + 2000.0);
	/* scoring busy GPUs is an error */
	wp.node = 0;
	wp.gpus = 0x10;
	assert_true(pol_topo_place_score(ag, &x->c, NULL, &worse) < 0);
	assert_int_equal(errno, EINVAL);
	pol_alloc_free(&a);
	pol_topo_place_destroy(&ag);
	rm(x);
}

static void test_place_adapter_matches_core_and_rejects_cheaply(void **s)
{
	tcl_t *x = mk(32, 8, type_2island);
	pol_topo_place_t *ag;
	pol_freemap_t *fm;
	pol_job_t job;
	pol_alloc_t a = { 0 }, b = { 0 };
	int i;

	(void) s;
	for (i = 0; i < 32; i++)
		x->c.nodes[i].free = (pol_gpumask_t) (0xff >> (i % 5));
	ag = pol_topo_place_create(&x->c, NULL);
	fm = pol_freemap_create(&x->c);
	assert_non_null(fm);
	memset(&job, 0, sizeof(job));
	job.nodes = 2;
	job.gpus_per_node = 4;
	job.total_gpus = 8;
	assert_int_equal(pol_topo_place_job(ag, fm, &job, &a), 0);
	{
		pol_place_req_t r = { 2, 4, 8, POL_POOL_TRAINING, 0 };

		assert_int_equal(
			pol_topo_place_req(ag, &x->c, NULL, &r, &b, NULL), 0);
	}
	assert_alloc_equal(&a, &b);
	assert_true(pol_freemap_fits(fm, &a));
	pol_alloc_free(&a);
	pol_alloc_free(&b);
	job.nodes = 0;
	job.total_gpus = 100000;
	assert_int_equal(pol_topo_place_job(ag, fm, &job, &a), -1);
	assert_int_equal(errno, ENOSPC);
	pol_freemap_destroy(&fm);
	pol_topo_place_destroy(&ag);
	rm(x);
}

static void test_place_large_node_type_uses_greedy(void **state)
{
	tcl_t *x = mk(1, 1, type_big);
	pol_alloc_t a = { 0 };

	(void) state;
	x->c.nodes[0].free = 0xff7f; /* island 0 has 7 free, island 1 8 */
	assert_int_equal(place(x, 0, 0, 8, &a, NULL), 0);
	assert_int_equal(a.parts[0].gpus, 0xff00);
	pol_alloc_free(&a);
	assert_int_equal(place(x, 0, 0, 4, &a, NULL), 0);
	assert_int_equal(pol_alloc_level(&x->c, &a), POL_LVL_NVLINK);
	assert_int_equal(a.parts[0].gpus & 0xff00, 0); /* the partial one */
	pol_alloc_free(&a);
	rm(x);
}

static void test_place_free_masks_array_and_split_small(void **state)
{
	tcl_t *x = mk(4, 4, type_2island);
	pol_gpumask_t fm[4] = { 0x03, 0x30, 0x01, 0x00 };
	pol_place_weights_t w;
	pol_place_req_t r = { 0, 0, 4, POL_POOL_TRAINING, 0 };
	pol_topo_place_t *ag = pol_topo_place_create(&x->c, NULL);
	pol_alloc_t a = { 0 };

	(void) state;
	/* the array overrides c->nodes[i].free (all free there) */
	assert_int_equal(pol_topo_place_req(ag, &x->c, fm, &r, &a, NULL), -1);
	assert_int_equal(errno, ENOSPC); /* no node has 4, no split */
	r.total_gpus = 2;
	assert_int_equal(pol_topo_place_req(ag, &x->c, fm, &r, &a, NULL), 0);
	assert_int_equal(a.parts[0].node, 0); /* ties: lowest index */
	assert_int_equal(a.parts[0].gpus, 0x03);
	pol_alloc_free(&a);
	pol_topo_place_destroy(&ag);
	/* split_small: 4 GPUs over nodes 0 and 1 (2 + 2, fewest nodes) */
	pol_place_weights_default(&w);
	w.split_small = true;
	ag = pol_topo_place_create(&x->c, &w);
	r.total_gpus = 4;
	assert_int_equal(pol_topo_place_req(ag, &x->c, fm, &r, &a, NULL), 0);
	assert_int_equal(a.n_parts, 2);
	assert_int_equal(pol_alloc_gpus(&a), 4);
	assert_int_equal(pol_alloc_level(&x->c, &a), POL_LVL_LEAF);
	pol_alloc_free(&a);
	pol_topo_place_destroy(&ag);
	rm(x);
}

static void test_place_bad_input(void **state)
{
	tcl_t *x = mk(2, 2, type_2island);
	pol_topo_place_t *ag = pol_topo_place_create(&x->c, NULL);
	pol_place_weights_t w;
	pol_place_req_t r = { 0, 0, 0, POL_POOL_TRAINING, 0 };
	pol_alloc_t a = { 0 };
	pol_node_type_t other;

	(void) state;
	assert_int_equal(pol_topo_place_req(ag, &x->c, NULL, &r, &a, NULL), -1);
	assert_int_equal(errno, EINVAL);
	r.nodes = 2;
	assert_int_equal(pol_topo_place_req(ag, &x->c, NULL, &r, &a, NULL), -1);
	assert_int_equal(errno, EINVAL);
	r.gpus_per_node = 9;
	assert_int_equal(pol_topo_place_req(ag, &x->c, NULL, &r, &a, NULL), -1);
	assert_int_equal(errno, ENOSPC);
	/* a cluster with other node types than the placer's */
	type_pcie(&other);
	x->c.types = &other;
	r.gpus_per_node = 1;
	assert_int_equal(pol_topo_place_req(ag, &x->c, NULL, &r, &a, NULL), -1);
	assert_int_equal(errno, EINVAL);
	pol_place_weights_default(&w);
	w.frag = -1;
	assert_null(pol_topo_place_create(&x->c, &w));
	assert_int_equal(errno, EINVAL);
	pol_topo_place_destroy(&ag);
	pol_topo_place_destroy(&ag); /* NULL: no-op */
	rm(x);
}

/* pol_placer_find: the two placers by name; an unknown name lists them. */
static void test_place_placer_find_by_name(void **state)
{
	tcl_t *x = mk(2, 2, type_2island);
	agora_err_t err = { { 0 } };
	pol_placer_t pl;
	pol_freemap_t *fm = pol_freemap_create(&x->c);
	pol_job_t job = { 0 };
	pol_alloc_t a = { 0 }, b = { 0 };
	pol_place_req_t r = { 0, 0, 4, POL_POOL_TRAINING, 0 };

	(void) state;
	assert_non_null(fm);
	job.total_gpus = job.min_gpus = job.max_gpus = 4;
	job.pool = POL_POOL_TRAINING;

	assert_int_equal(pol_placer_find("stock", NULL, &pl, &err), 0);
	assert_string_equal(pl.name, "stock");
	assert_true(pl.place == pol_place_basic);
	assert_null(pl.arg);
	pol_placer_release(&pl);

	assert_int_equal(pol_placer_find("agora", &x->c, &pl, &err), 0);
	assert_string_equal(pl.name, "agora");
	assert_non_null(pl.arg);
	/* the same decision as the placer built by hand */
	assert_int_equal(pl.place(pl.arg, fm, &job, &a), 0);
	assert_int_equal(pol_topo_place_req(pl.arg, &x->c, NULL, &r, &b, NULL),
			 0);
	assert_int_equal(a.n_parts, b.n_parts);
	assert_int_equal(a.parts[0].node, b.parts[0].node);
	assert_true(a.parts[0].gpus == b.parts[0].gpus);
	pol_placer_release(&pl);
	assert_null(pl.arg);
	assert_null(pl.release);
	pol_placer_release(&pl); /* zeroed: no-op */

	assert_int_equal(pol_placer_find("agora", NULL, &pl, &err), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(pol_placer_find("best", &x->c, &pl, &err), -1);
	assert_int_equal(errno, ENOENT);
	assert_string_equal(err.text,
			    "unknown placement strategy 'best' (stock, agora)");
	assert_null(pl.place);

	pol_alloc_free(&a);
	pol_alloc_free(&b);
	pol_freemap_destroy(&fm);
	rm(x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_place_4gpu_job_takes_the_whole_island),
		cmocka_unit_test(
			test_place_small_job_fills_a_hole_not_a_whole_island),
		cmocka_unit_test(test_place_4gpu_job_does_not_straddle_sockets),
		cmocka_unit_test(
			test_place_16gpu_job_takes_two_whole_nodes_in_one_leaf),
		cmocka_unit_test(test_place_gang_spans_leaves_only_when_needed),
		cmocka_unit_test(
			test_place_respects_weight_features_pool_and_up),
		cmocka_unit_test(test_place_is_deterministic_ties_by_index),
		cmocka_unit_test(
			test_place_score_ranks_better_placements_lower),
		cmocka_unit_test(
			test_place_adapter_matches_core_and_rejects_cheaply),
		cmocka_unit_test(test_place_large_node_type_uses_greedy),
		cmocka_unit_test(test_place_free_masks_array_and_split_small),
		cmocka_unit_test(test_place_bad_input),
		cmocka_unit_test(test_place_placer_find_by_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
