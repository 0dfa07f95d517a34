/*
 * Unit tests of the federation core (common/fed/): the catalog parser and
 * writer, the score of a plan and the batched auction (replica placement
 * by hill climbing: test_fed_place.c).
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
#include "pol_fed_locality.h"

#define NOW 1000000

static void assert_near(double got, double want, double tol)
{
	if (fabs(got - want) > tol)
		fail_msg("got %.12g, want %.12g (tol %g)", got, want, tol);
}

static const char *catalog3 =
	"{\n"
	"  \"sites\": [\n"
	"    {\"name\": \"c1\", \"storage_bytes\": \"2T\",\n"
	"     \"link_bytes_per_s\": 1e9},\n"
	"    {\"name\": \"c2\", \"link_bytes_per_s\": \"1.25GB/s\"},\n"
	"    {\"name\": \"c3\", \"storage_bytes\": 0,\n"
	"     \"link_bytes_per_s\": \"1Gi\"}\n"
	"  ],\n"
	"  \"datasets\": [\n"
	"    {\"name\": \"imagenet\", \"bytes\": \"100G\", \"where\": [\"c1\"]},\n"
	"    {\"name\": \"c4\", \"bytes\": 5e11, \"where\": [\"c2\", \"c3\"]},\n"
	"    {\"name\": \"new\", \"bytes\": 1}\n"
	"  ],\n"
	"  \"accounts\": [\n"
	"    {\"name\": \"vision\", \"dataset\": \"imagenet\"},\n"
	"    {\"name\": \"crawl\", \"dataset\": \"c4\"}\n"
	"  ]\n"
	"}\n";

static void parse_ok(const char *text, pol_fed_catalog_t *cat)
{
	agora_err_t err = { "" };

	if (pol_fed_catalog_parse(text, "cat.json", cat, &err) < 0)
		fail_msg("parse failed: %s", err.text);
}

/* ---- a plan's GPU locality, by the select wrapper's placer ------------ */

/* Nodes g[1-4]: two sockets of four GPUs, one NVLink island per socket. */
static void model_2x4(topo_model_t *m, topo_node_t *t)
{
	memset(t, 0, sizeof(*t));
	snprintf(t->type.name, sizeof(t->type.name), "2s-8gpu");
	snprintf(t->nodes, sizeof(t->nodes), "g[1-4]");
	t->type.n_gpus = 8;
	t->type.n_sockets = 2;
	for (int i = 0; i < 8; i++) {
		t->gpu[i].socket = i / 4;
		t->gpu[i].island = i / 4;
		t->gpu[i].pcie_switch = -1;
		t->gpu[i].numa = i / 4;
	}
	topo_node_derive_levels(t);
	m->types = t;
	m->n_types = 1;
}

static void plan_node(pol_fed_plan_node_t *p, const char *name, int gpus,
		      pol_gpumask_t used)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->gpus = gpus;
	p->used = used;
}

static void test_plan_locality(void **state)
{
	topo_model_t m;
	topo_node_t t;
	pol_fed_plan_node_t n[2];

	(void) state;
	model_2x4(&m, &t);
	/* the four free GPUs are one socket's island: NVLink */
	plan_node(&n[0], "g1", 8, 0x0F);
	assert_near(pol_fed_plan_locality(&m, n, 1, 4, 0), POL_LVL_NVLINK, 0);
	/* two free on each socket: four GPUs must cross sockets */
	plan_node(&n[0], "g1", 8, 0x33);
	assert_near(pol_fed_plan_locality(&m, n, 1, 4, 0), POL_LVL_NODE, 0);
	/* two planned nodes: the placer takes the whole island on g2 */
	plan_node(&n[1], "g2", 8, 0xF0);
	assert_near(pol_fed_plan_locality(&m, n, 2, 4, 0), POL_LVL_NVLINK, 0);
	/* two GPUs fit on one socket of g1 */
	assert_near(pol_fed_plan_locality(&m, n, 1, 2, 0), POL_LVL_NVLINK, 0);
	/* a node the model does not name: uniform, one island */
	plan_node(&n[0], "x1", 8, 0x55);
	assert_near(pol_fed_plan_locality(&m, n, 1, 4, 0), POL_LVL_NVLINK, 0);
	assert_near(pol_fed_plan_locality(NULL, n, 1, 4, 0), POL_LVL_NVLINK, 0);
	/* nothing free now (the plan starts later): the node counts as
	 * wholly free */
	plan_node(&n[0], "g1", 8, 0xFF);
	assert_near(pol_fed_plan_locality(&m, n, 1, 8, 0), POL_LVL_NODE, 0);
	/* a gang over two nodes: one leaf */
	plan_node(&n[0], "g1", 8, 0);
	plan_node(&n[1], "g2", 8, 0);
	assert_near(pol_fed_plan_locality(&m, n, 2, 16, 2), POL_LVL_LEAF, 0);
	/* the same gang over two leaf switches */
	n[1].leaf = 1;
	assert_near(pol_fed_plan_locality(&m, n, 2, 16, 2), POL_LVL_CLUSTER, 0);
	/* one node's worth on either leaf: the placer stays on one node */
	assert_near(pol_fed_plan_locality(&m, n, 2, 8, 0), POL_LVL_NODE, 0);
	/* any leaf numbers do: only equal or not counts */
	n[0].leaf = 7;
	n[1].leaf = 3;
	assert_near(pol_fed_plan_locality(&m, n, 2, 16, 2), POL_LVL_CLUSTER, 0);
	n[1].leaf = 7;
	assert_near(pol_fed_plan_locality(&m, n, 2, 16, 2), POL_LVL_LEAF, 0);
	n[0].leaf = 0;
	/* a negative leaf is a bad argument */
	n[1].leaf = -1;
	errno = 0;
	assert_near(pol_fed_plan_locality(&m, n, 2, 16, 2), -1, 0);
	assert_int_equal(errno, EINVAL);
	n[1].leaf = 0;
	/* unknown: bad shapes, or too big even on free nodes */
	errno = 0;
	assert_near(pol_fed_plan_locality(&m, n, 2, 16, 3), -1, 0);
	assert_int_equal(errno, EINVAL);
	assert_near(pol_fed_plan_locality(&m, n, 0, 4, 0), -1, 0);
	assert_near(pol_fed_plan_locality(&m, NULL, 1, 4, 0), -1, 0);
	assert_near(pol_fed_plan_locality(&m, n, 1, 0, 0), -1, 0);
	errno = 0;
	assert_near(pol_fed_plan_locality(&m, n, 2, 32, 0), -1, 0);
	assert_int_equal(errno, ENOSPC);
}

/* Soft features (--prefer) against a cluster's feature union. */
static void test_features_match(void **state)
{
	const char *have = "a100,nvlink,ib";

	(void) state;
	assert_true(pol_fed_features_match(NULL, have));
	assert_true(pol_fed_features_match("", have));
	assert_true(pol_fed_features_match("a100", have));
	assert_true(pol_fed_features_match("a100&ib", have));
	assert_true(pol_fed_features_match("a100,nvlink", have));
	assert_false(pol_fed_features_match("h100", have));
	assert_false(pol_fed_features_match("a100&h100", have));
	assert_true(pol_fed_features_match("h100|a100", have));
	assert_true(pol_fed_features_match("[h100|a100]&ib", have));
	assert_true(pol_fed_features_match("nvlink*2", have));
	/* a prefix is not the feature */
	assert_false(pol_fed_features_match("a10", have));
	assert_false(pol_fed_features_match("a1000", have));
	assert_false(pol_fed_features_match("a100", NULL));
	assert_false(pol_fed_features_match("a100", ""));
}

/* ---- catalog ---------------------------------------------------------- */

static void test_catalog_parse(void **state)
{
	pol_fed_catalog_t cat;

	(void) state;
	parse_ok(catalog3, &cat);
	assert_int_equal(cat.n_sites, 3);
	assert_int_equal(cat.n_datasets, 3);
	assert_string_equal(cat.sites[1].name, "c2");
	assert_near(cat.sites[0].storage_bytes, 2e12, 0);
	assert_near(cat.sites[1].storage_bytes, 0, 0); /* absent: unlimited */
	assert_near(cat.sites[1].link_bytes_per_s, 1.25e9, 0);
	assert_near(cat.sites[2].link_bytes_per_s, 1024.0 * 1024 * 1024, 0);
	assert_near(cat.datasets[0].bytes, 1e11, 0);
	assert_true(cat.datasets[0].where == 1);
	assert_true(cat.datasets[1].where == 6);
	assert_true(cat.datasets[2].where == 0);
	assert_int_equal(pol_fed_catalog_dataset(&cat, "c4"), 1);
	assert_int_equal(pol_fed_catalog_dataset(&cat, "c2"), -1);
	assert_int_equal(pol_fed_catalog_site(&cat, "c3"), 2);
	assert_int_equal(pol_fed_catalog_site(&cat, "imagenet"), -1);
	/* transfer: 0 where a replica is, bytes / link elsewhere */
	assert_near(pol_fed_transfer_s(&cat, 0, 0), 0, 0);
	assert_near(pol_fed_transfer_s(&cat, 0, 1), 1e11 / 1.25e9, 1e-9);
	assert_near(pol_fed_transfer_s(&cat, 1, 0), 5e11 / 1e9, 1e-9);
	assert_near(pol_fed_transfer_s(&cat, 1, 2), 0, 0);
	assert_near(pol_fed_transfer_s(&cat, -1, 0), 0, 0);
	assert_true(isinf(pol_fed_transfer_s(&cat, 0, 7)));
	pol_fed_catalog_free(&cat);
	assert_null(cat.sites);
	pol_fed_catalog_free(&cat);
}

static void test_catalog_round_trip(void **state)
{
	pol_fed_catalog_t a, b;
	char *text, *again;
	int i;

	(void) state;
	parse_ok(catalog3, &a);
	text = pol_fed_catalog_format(&a);
	assert_non_null(text);
	parse_ok(text, &b);
	assert_int_equal(a.n_sites, b.n_sites);
	assert_int_equal(a.n_datasets, b.n_datasets);
	for (i = 0; i < a.n_sites; i++) {
		assert_string_equal(a.sites[i].name, b.sites[i].name);
		assert_true(a.sites[i].storage_bytes ==
			    b.sites[i].storage_bytes);
		assert_true(a.sites[i].link_bytes_per_s ==
			    b.sites[i].link_bytes_per_s);
	}
	assert_int_equal(a.n_accounts, 2);
	assert_int_equal(b.n_accounts, 2);
	for (i = 0; i < a.n_accounts; i++) {
		assert_string_equal(a.accounts[i].name, b.accounts[i].name);
		assert_int_equal(a.accounts[i].dataset, b.accounts[i].dataset);
	}
	for (i = 0; i < a.n_datasets; i++) {
		assert_string_equal(a.datasets[i].name, b.datasets[i].name);
		assert_true(a.datasets[i].bytes == b.datasets[i].bytes);
		assert_true(a.datasets[i].where == b.datasets[i].where);
	}
	again = pol_fed_catalog_format(&b);
	assert_string_equal(text, again);
	free(text);
	free(again);
	pol_fed_catalog_free(&a);
	pol_fed_catalog_free(&b);
}

/* text with %s replaced by a datasets entry, parsed: the error or "" */
static void expect_error(const char *text, const char *want)
{
	pol_fed_catalog_t cat = { (pol_fed_site_t *) 1, 42, NULL, 0, NULL, 0 };
	agora_err_t err = { "" };

	errno = 0;
	assert_int_equal(pol_fed_catalog_parse(text, "fed.json", &cat, &err),
			 -1);
	assert_int_equal(errno, EINVAL);
	if (!strstr(err.text, want))
		fail_msg("error '%s' does not contain '%s'", err.text, want);
	/* *cat unchanged on error */
	assert_true(cat.sites == (pol_fed_site_t *) 1);
	assert_int_equal(cat.n_sites, 42);
}

#define SITES2                                                                 \
	"\"sites\":[{\"name\":\"c1\",\"link_bytes_per_s\":1},"                 \
	"{\"name\":\"c2\",\"link_bytes_per_s\":1}]"

static void test_catalog_errors(void **state)
{
	(void) state;
	expect_error(
		"{" SITES2 ",\"datasets\":[{\"name\":\"a\",\"bytes\":1},"
		"{\"name\":\"b\",\"bytes\":1},{\"name\":\"c\",\"bytes\":1},"
		"{\"name\":\"d\",\"bytes\":1,\"where\":[\"c2\",\"c9\"]}]}",
		"fed.json: datasets[3].where: unknown cluster 'c9'");
	expect_error("{" SITES2 ",\"datasets\":[{\"name\":\"a\",\"bytes\":1,"
		     "\"where\":[\"c1\",\"c1\"]}]}",
		     "fed.json: datasets[0].where: cluster 'c1' listed twice");
	expect_error("{" SITES2 ",\"datasets\":[{\"name\":\"a\",\"bytes\":1},"
		     "{\"name\":\"a\",\"bytes\":2}]}",
		     "fed.json: datasets[1].name: 'a' already used by "
		     "datasets[0]");
	expect_error("{" SITES2 ",\"datasets\":[{\"name\":\"a\"}]}",
		     "fed.json: datasets[0].bytes: missing");
	expect_error("{" SITES2 ",\"datasets\":[{\"name\":\"a\",\"bytes\":"
		     "\"12 parsecs\"}]}",
		     "fed.json: datasets[0].bytes: '12 parsecs' is not a size");
	expect_error("{" SITES2
		     ",\"datasets\":[{\"name\":\"a\",\"bytes\":-1}]}",
		     "fed.json: datasets[0].bytes: -1 must be >= 0");
	expect_error("{" SITES2 ",\"datasets\":[{\"name\":\"a\",\"byte\":1}]}",
		     "fed.json: datasets[0]: unknown key 'byte'");
	expect_error("{" SITES2
		     ",\"datasets\":[{\"name\":\"a b\",\"bytes\":1}]}",
		     "fed.json: datasets[0].name: 'a b' has a character");
	/* agoractl place prints datasets/NAME/ paths: none may leave
	 * datasets/ or name it whole */
	{
		static const char *const bad[] = { "..",   "../etc", "a/../b",
						   "a/..", "/a",     "a//b",
						   "a/",   ".",      "./a" };

		for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
			char json[256], want[160];

			snprintf(json, sizeof(json),
				 "{" SITES2 ",\"datasets\":[{\"name\":\"%s\","
				 "\"bytes\":1}]}",
				 bad[k]);
			snprintf(want, sizeof(want),
				 "fed.json: datasets[0].name: '%s' has an "
				 "empty, '.' or '..' part",
				 bad[k]);
			expect_error(json, want);
		}
		expect_error("{\"sites\":[{\"name\":\"..\","
			     "\"link_bytes_per_s\":1}]}",
			     "fed.json: sites[0].name: '..' has an empty");
	}
	expect_error("{" SITES2 ",\"datasets\":{}}",
		     "fed.json: datasets: not an array");
	expect_error("{\"sites\":[{\"name\":\"c1\"}]}",
		     "fed.json: sites[0].link_bytes_per_s: missing");
	expect_error("{\"sites\":[{\"name\":\"c1\",\"link_bytes_per_s\":0}]}",
		     "fed.json: sites[0].link_bytes_per_s: 0 must be > 0");
	expect_error("{\"sites\":[{\"name\":\"c1\",\"link_bytes_per_s\":1,"
		     "\"storage_bytes\":\"x\"}]}",
		     "fed.json: sites[0].storage_bytes: 'x' is not a size");
	expect_error("{\"sites\":[{\"name\":\"c1\",\"link_bytes_per_s\":1},"
		     "{\"name\":\"c1\",\"link_bytes_per_s\":1}]}",
		     "fed.json: sites[1].name: 'c1' already used by sites[0]");
	expect_error("{" SITES2 ",\"datasets\":[{\"name\":\"a\",\"bytes\":1}],"
		     "\"accounts\":[{\"name\":\"x\",\"dataset\":\"b\"}]}",
		     "fed.json: accounts[0].dataset: unknown dataset 'b'");
	expect_error("{" SITES2 ",\"datasets\":[{\"name\":\"a\",\"bytes\":1}],"
		     "\"accounts\":[{\"name\":\"x\",\"dataset\":\"a\"},"
		     "{\"name\":\"x\",\"dataset\":\"a\"}]}",
		     "fed.json: accounts[1].name: 'x' already used by "
		     "accounts[0]");
	expect_error("{" SITES2 ",\"accounts\":[{\"name\":\"x\"}]}",
		     "fed.json: accounts[0].dataset: missing or not a string");
	expect_error("{" SITES2 ",\"accounts\":[{\"name\":\"x\","
		     "\"dataset\":\"a\",\"qos\":1}]}",
		     "fed.json: accounts[0]: unknown key 'qos'");
	expect_error("{" SITES2 ",\"accounts\":{}}",
		     "fed.json: accounts: not an array");
	expect_error("{\"datasets\":[]}", "fed.json: sites: missing");
	expect_error("{\"sites\":[],\"extra\":1}",
		     "fed.json: top level: unknown key 'extra'");
	expect_error("[]", "fed.json: top level: not a JSON object");
	expect_error("{\"sites\":[", "fed.json: not valid JSON");
	expect_error("{\"sites\":[]} x", "fed.json: not valid JSON");
	expect_error("", "fed.json: not valid JSON");
}

/* A job's dataset: the one it names, else its account's default. */
static void test_catalog_job_dataset(void **state)
{
	pol_fed_catalog_t cat;
	bool unknown = true;

	(void) state;
	parse_ok(catalog3, &cat);
	assert_int_equal(
		pol_fed_catalog_job_dataset(&cat, "", "vision", &unknown), 0);
	assert_false(unknown);
	assert_int_equal(
		pol_fed_catalog_job_dataset(&cat, NULL, "crawl", &unknown), 1);
	/* a named dataset wins over the account's default */
	assert_int_equal(
		pol_fed_catalog_job_dataset(&cat, "new", "vision", &unknown),
		2);
	/* an account without a default, or no account: none */
	assert_int_equal(
		pol_fed_catalog_job_dataset(&cat, "", "physics", &unknown), -1);
	assert_false(unknown);
	assert_int_equal(pol_fed_catalog_job_dataset(&cat, NULL, NULL, NULL),
			 -1);
	/* a named dataset the catalog lacks: none, flagged, no fallback */
	assert_int_equal(
		pol_fed_catalog_job_dataset(&cat, "laion", "vision", &unknown),
		-1);
	assert_true(unknown);
	pol_fed_catalog_free(&cat);
	assert_null(cat.accounts);
	{
		char w[8];

		pol_fed_comment_dataset("run 3; dataset=c4,lr=0.1", w,
					sizeof(w));
		assert_string_equal(w, "c4");
		pol_fed_comment_dataset("dataset=imagenet-21k", w, sizeof(w));
		assert_string_equal(w, "imagene"); /* cut to the buffer */
		pol_fed_comment_dataset("no data", w, sizeof(w));
		assert_string_equal(w, "");
		pol_fed_comment_dataset(NULL, w, sizeof(w));
		assert_string_equal(w, "");
	}
	assert_int_equal(cat.n_accounts, 0);
}

static void test_catalog_too_many_sites(void **state)
{
	char *text = malloc(65 * 64 + 64), *p = text;
	int i;

	(void) state;
	p += sprintf(p, "{\"sites\":[");
	for (i = 0; i < 65; i++)
		p += sprintf(p, "%s{\"name\":\"c%d\",\"link_bytes_per_s\":1}",
			     i ? "," : "", i);
	sprintf(p, "]}");
	expect_error(text, "fed.json: sites: 65 clusters, at most 64");
	free(text);
}

/* ---- the score -------------------------------------------------------- */

/* Two clusters; the job's 100 GB dataset is on c1 only; the link into c2
 * moves 1 GB/s, so running on c2 costs 100 s of transfer. */
static void two_cluster_catalog(pol_fed_catalog_t *cat)
{
	parse_ok("{\"sites\":[{\"name\":\"c1\",\"link_bytes_per_s\":1e9},"
		 "{\"name\":\"c2\",\"link_bytes_per_s\":1e9}],"
		 "\"datasets\":[{\"name\":\"d\",\"bytes\":1e11,"
		 "\"where\":[\"c1\"]}]}",
		 cat);
}

static pol_fed_job_t job(int64_t id, int gpus, int dataset)
{
	pol_fed_job_t j;

	memset(&j, 0, sizeof(j));
	j.id = id;
	snprintf(j.team, sizeof(j.team), "team%d", (int) id);
	j.gpus = gpus;
	j.dataset = dataset;
	j.eligible = ~(uint64_t) 0;
	j.hw_match = ~(uint64_t) 0;
	j.submit = NOW - 100;
	return j;
}

static pol_fed_plan_t plan(int64_t start)
{
	pol_fed_plan_t p = { .valid = true, .start = start, .locality = 1.0 };

	return p;
}

static void test_cost_terms(void **state)
{
	pol_fed_catalog_t cat;
	pol_fed_weights_t w = { 300, 60, 3600, 600, 900, 1.0 };
	pol_fed_job_t j = job(1, 8, 0);
	pol_fed_plan_t p = plan(NOW + 40);
	char why[POL_FED_WHY_LEN];

	(void) state;
	two_cluster_catalog(&cat);
	p.n_preempt = 2;
	p.locality = 1.5;
	p.team_credit = 0.5;
	/* on c1, data local: 40 + 2*300 + 1.5*60 - 0.5*600 */
	assert_near(pol_fed_cost(&w, &cat, &j, 0, &p, NOW, why, sizeof(why)),
		    40 + 600 + 90 - 300, 1e-9);
	assert_non_null(strstr(why, "c1: start +40s"));
	assert_non_null(strstr(why, "data local"));
	assert_non_null(strstr(why, "2 preempted"));
	assert_non_null(strstr(why, "credit 0.50"));
	/* on c2: plus 100 s of transfer, and a hardware mismatch */
	j.hw_match = 1;
	assert_near(pol_fed_cost(&w, &cat, &j, 1, &p, NOW, why, sizeof(why)),
		    40 + 100 + 600 + 90 + 3600 - 300, 1e-9);
	assert_non_null(strstr(why, "data +100s"));
	assert_non_null(strstr(why, "hardware mismatch"));
	/* a start in the past is no negative wait; credit clamps to [-1, 1];
	 * unknown locality counts as level 3 */
	p = plan(NOW - 50);
	p.team_credit = -7;
	p.locality = -1;
	assert_near(pol_fed_cost(&w, &cat, &j, 0, &p, NOW, NULL, 0),
		    0 + 3 * 60 + 600, 1e-9);
	/* no dataset: no transfer anywhere */
	j = job(1, 8, -1);
	p = plan(NOW);
	assert_near(pol_fed_cost(&w, &cat, &j, 1, &p, NOW, NULL, 0), 60, 1e-9);
	/* invalid plan, ineligible cluster, unknown cluster: +inf */
	p.valid = false;
	assert_true(isinf(
		pol_fed_cost(&w, &cat, &j, 0, &p, NOW, why, sizeof(why))));
	assert_non_null(strstr(why, "no plan"));
	p.valid = true;
	j.eligible = 2;
	assert_true(isinf(
		pol_fed_cost(&w, &cat, &j, 0, &p, NOW, why, sizeof(why))));
	assert_non_null(strstr(why, "not eligible"));
	assert_true(isinf(pol_fed_cost(&w, &cat, &j, 2, &p, NOW, NULL, 0)));
	/* NULL weights: the defaults */
	pol_fed_weights_default(&w);
	j = job(1, 8, -1);
	assert_near(pol_fed_cost(NULL, &cat, &j, 0, &p, NOW, NULL, 0),
		    pol_fed_cost(&w, &cat, &j, 0, &p, NOW, NULL, 0), 0);
	pol_fed_catalog_free(&cat);
}

/* The data is on c1; c2 starts the job now.  It stays on c1 while waiting
 * there costs less than the 100 s transfer to c2, and goes to c2 once the
 * wait is longer: the crossover is at exactly the transfer time. */
static void test_cost_data_crossover(void **state)
{
	pol_fed_catalog_t cat;
	pol_fed_weights_t w;
	pol_fed_job_t j = job(7, 8, 0);
	pol_fed_plan_t plans[2];
	pol_fed_award_t a;
	int free_gpus[2] = { 64, 64 };
	int64_t wait;

	(void) state;
	two_cluster_catalog(&cat);
	pol_fed_weights_default(&w);
	assert_near(pol_fed_transfer_s(&cat, 0, 1), 100, 1e-9);
	for (wait = 0; wait <= 200; wait += 1) {
		double on_a, on_b;

		plans[0] = plan(NOW + wait);
		plans[1] = plan(NOW);
		on_a = pol_fed_cost(&w, &cat, &j, 0, &plans[0], NOW, NULL, 0);
		on_b = pol_fed_cost(&w, &cat, &j, 1, &plans[1], NOW, NULL, 0);
		assert_near(on_a - on_b, (double) wait - 100, 1e-9);
		assert_int_equal(pol_fed_auction(&w, &cat, &j, 1, plans, 2,
						 free_gpus, NOW, &a),
				 0);
		assert_int_equal(a.job_id, 7);
		/* equal cost at wait == 100: the tie goes to c1 */
		assert_int_equal(a.cluster, wait <= 100 ? 0 : 1);
	}
	pol_fed_catalog_free(&cat);
}

/* ---- the auction ------------------------------------------------------ */

/* Two jobs of 8 GPUs, both best on c1, which has 8 free GPUs: the first in
 * the batch order takes them; the second sees them gone and goes to c2. */
static void test_auction_consumes_supply(void **state)
{
	pol_fed_catalog_t cat;
	pol_fed_weights_t w;
	pol_fed_job_t jobs[2] = { job(1, 8, -1), job(2, 8, -1) };
	pol_fed_plan_t plans[4];
	pol_fed_award_t out[2];
	int free_gpus[2] = { 8, 64 };

	(void) state;
	two_cluster_catalog(&cat);
	pol_fed_weights_default(&w);
	plans[0] = plan(NOW);
	plans[1] = plan(NOW);
	plans[1].locality = 4; /* c2 spreads the job: worse */
	plans[2] = plans[0];
	plans[3] = plans[1];
	/* job 2 first in the batch: higher priority */
	jobs[1].priority = 10;
	assert_int_equal(pol_fed_auction(&w, &cat, jobs, 2, plans, 2, free_gpus,
					 NOW, out),
			 0);
	/* out is in the jobs' order, not the batch order */
	assert_int_equal(out[0].job_id, 1);
	assert_int_equal(out[1].job_id, 2);
	assert_int_equal(out[1].cluster, 0);
	assert_int_equal(out[0].cluster, 1);
	assert_near(out[1].cost, 60, 1e-9);
	assert_near(out[1].second, 240, 1e-9);
	assert_near(out[0].cost, 240, 1e-9);
	/* job 1's c1 plan counted as waiting taken_wait_s */
	assert_near(out[0].second, w.taken_wait_s + 60, 1e-9);
	assert_non_null(strstr(out[0].why, "c2: start +0s"));
	assert_non_null(strstr(out[0].why, "next c1"));
	assert_int_equal(free_gpus[0], 8); /* the caller's array is input */
	/* room for both: both on c1 */
	free_gpus[0] = 16;
	assert_int_equal(pol_fed_auction(&w, &cat, jobs, 2, plans, 2, free_gpus,
					 NOW, out),
			 0);
	assert_int_equal(out[0].cluster, 0);
	assert_int_equal(out[1].cluster, 0);
	/* supply unknown (NULL): nothing consumed */
	assert_int_equal(
		pol_fed_auction(&w, &cat, jobs, 2, plans, 2, NULL, NOW, out),
		0);
	assert_int_equal(out[0].cluster, 0);
	assert_int_equal(out[1].cluster, 0);
	/* a plan that starts later does not consume the free GPUs */
	free_gpus[0] = 8;
	plans[2] = plan(NOW + 10); /* job 2 on c1: in 10 s */
	assert_int_equal(pol_fed_auction(&w, &cat, jobs, 2, plans, 2, free_gpus,
					 NOW, out),
			 0);
	assert_int_equal(out[1].cluster, 0);
	assert_int_equal(out[0].cluster, 0);
	pol_fed_catalog_free(&cat);
}

/* The batch order: priority, then credit, then submit, then id. */
static void test_auction_order(void **state)
{
	pol_fed_job_t jobs[4] = { job(4, 8, -1), job(3, 8, -1), job(2, 8, -1),
				  job(1, 8, -1) };
	pol_fed_plan_t plans[8];
	pol_fed_award_t out[4], again[4];
	int free_gpus[2] = { 8, 0 };
	int i;

	(void) state;
	for (i = 0; i < 4; i++) {
		plans[2 * i] = plan(NOW);
		plans[2 * i + 1] = plan(NOW + 500);
	}
	/* job 3 has more credit; job 4 was submitted earlier than 1 and 2;
	 * 1 and 2 differ by id only */
	plans[2].team_credit = plans[3].team_credit = 0.5;
	jobs[0].submit = NOW - 1000;
	/* no catalog: clusters are named by index */
	assert_int_equal(pol_fed_auction(NULL, NULL, jobs, 4, plans, 2,
					 free_gpus, NOW, out),
			 0);
	assert_int_equal(out[1].cluster, 0); /* job 3: credit first */
	assert_int_equal(out[0].cluster, 1);
	assert_int_equal(out[2].cluster, 1);
	assert_int_equal(out[3].cluster, 1);
	assert_non_null(strstr(out[0].why, "cluster1: start +500s"));
	/* raise job 1's priority: it wins c1 */
	jobs[3].priority = 1;
	assert_int_equal(pol_fed_auction(NULL, NULL, jobs, 4, plans, 2,
					 free_gpus, NOW, out),
			 0);
	assert_int_equal(out[3].cluster, 0);
	assert_int_equal(out[1].cluster, 1);
	/* deterministic */
	assert_int_equal(pol_fed_auction(NULL, NULL, jobs, 4, plans, 2,
					 free_gpus, NOW, again),
			 0);
	assert_memory_equal(out, again, sizeof(out));
}

static void test_auction_no_plan_and_errors(void **state)
{
	pol_fed_job_t j = job(9, 1, -1);
	pol_fed_plan_t plans[2] = { plan(NOW), plan(NOW) };
	pol_fed_award_t a;
	pol_fed_catalog_t cat;

	(void) state;
	plans[0].valid = false;
	j.eligible = 1; /* only c1, which did not answer */
	assert_int_equal(
		pol_fed_auction(NULL, NULL, &j, 1, plans, 2, NULL, NOW, &a), 0);
	assert_int_equal(a.cluster, -1);
	assert_true(isinf(a.cost));
	assert_true(isinf(a.second));
	assert_non_null(strstr(a.why, "no valid plan"));
	errno = 0;
	assert_int_equal(
		pol_fed_auction(NULL, NULL, &j, 1, plans, 65, NULL, NOW, &a),
		-1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(
		pol_fed_auction(NULL, NULL, &j, -1, plans, 2, NULL, NOW, &a),
		-1);
	assert_int_equal(
		pol_fed_auction(NULL, NULL, &j, 1, plans, 2, NULL, NOW, NULL),
		-1);
	/* more clusters than the catalog has sites */
	two_cluster_catalog(&cat);
	assert_int_equal(
		pol_fed_auction(NULL, &cat, &j, 1, plans, 3, NULL, NOW, &a),
		-1);
	assert_int_equal(
		pol_fed_auction(NULL, NULL, NULL, 0, NULL, 2, NULL, NOW, NULL),
		0);
	pol_fed_catalog_free(&cat);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_catalog_parse),
		cmocka_unit_test(test_catalog_round_trip),
		cmocka_unit_test(test_catalog_errors),
		cmocka_unit_test(test_catalog_job_dataset),
		cmocka_unit_test(test_plan_locality),
		cmocka_unit_test(test_features_match),
		cmocka_unit_test(test_catalog_too_many_sites),
		cmocka_unit_test(test_cost_terms),
		cmocka_unit_test(test_cost_data_crossover),
		cmocka_unit_test(test_auction_consumes_supply),
		cmocka_unit_test(test_auction_order),
		cmocka_unit_test(test_auction_no_plan_and_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
