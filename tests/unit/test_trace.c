/* Unit tests of the trace parsers (trace_*.c) and the cluster file
 * (sim_cluster.c): good input, and bad input rejected with FILE:LINE. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sim_cluster.h"
#include "trace.h"

static const char philly[] =
	"timestamp,duration,num_gpus,gpu_time,cluster\n"
	"2017-10-02 00:01:55,108.0,1,108.0,11cb48\n"
	"2017-10-02 00:11:55,30.4,2,60.8,6214e9\r\n"
	"\n"
	"2017-10-03 00:00:00,4000000.0,8,32000000.0,11cb48\n";

static void test_trace_philly_parses_and_filters(void **state)
{
	agora_err_t err = { { 0 } };
	trace_t t;

	(void) state;
	assert_int_equal(
		trace_parse(philly, "p.csv", TRACE_FILTER_NONE, &t, &err), 0);
	assert_string_equal(t.format, "philly");
	assert_int_equal(t.n, 3);
	assert_int_equal(t.n_tenants, 2);
	assert_string_equal(t.tenants[1], "6214e9");
	/* 2017-10-02 00:01:55 UTC = 1506902515 */
	assert_int_equal(t.jobs[0].submit, 1506902515);
	assert_int_equal(t.jobs[1].submit - t.jobs[0].submit, 600);
	assert_int_equal(t.jobs[2].submit - t.jobs[0].submit, 86400 - 115);
	assert_int_equal(t.jobs[0].duration, 108);
	assert_int_equal(t.jobs[1].duration, 30);
	assert_int_equal(t.jobs[1].gpus, 2);
	assert_int_equal(t.jobs[2].tenant, 0);
	assert_int_equal(t.jobs[2].id, 3);
	trace_free(&t);
	/* a leap day is a day: 2016-02-29 00:00:00 UTC = 1456704000 */
	assert_int_equal(
		trace_parse("timestamp,duration,num_gpus,gpu_time,cluster\n"
			    "2016-02-29 00:00:00,10.0,1,10.0,a\n",
			    "leap.csv", TRACE_FILTER_NONE, &t, &err),
		0);
	assert_int_equal(t.jobs[0].submit, 1456704000);
	trace_free(&t);
	/* Pollux filter: duration >= 60 s and gpu_time < 1000 GPU-h */
	assert_int_equal(
		trace_parse(philly, "p.csv", TRACE_FILTER_POLLUX, &t, &err), 0);
	assert_int_equal(t.n, 1);
	assert_int_equal(t.filtered, 2);
	trace_free(&t);
}

static void test_trace_generic_columns(void **state)
{
	const char *text =
		"# comment\n"
		"tenant,submit,duration,nodes,gpus_per_node,time_limit,priority,pool,min_gpus,max_gpus,id,dataset,band\n"
		"vision,10,100,2,4,3600,5,training,4,16,42,3,1\n"
		"nlp,11.6,7.4,1,1,0,-1,inference,0,0,43,-1,0\n";
	agora_err_t err = { { 0 } };
	trace_t t;

	(void) state;
	assert_int_equal(
		trace_parse(text, "g.csv", TRACE_FILTER_NONE, &t, &err), 0);
	assert_string_equal(t.format, "generic");
	assert_int_equal(t.n, 2);
	assert_int_equal(t.jobs[0].id, 42);
	assert_int_equal(t.jobs[0].gpus, 8);
	assert_int_equal(t.jobs[0].nodes, 2);
	assert_int_equal(t.jobs[0].gpn, 4);
	assert_int_equal(t.jobs[0].min_gpus, 4);
	assert_int_equal(t.jobs[0].max_gpus, 16);
	assert_int_equal(t.jobs[0].time_limit, 3600);
	assert_int_equal(t.jobs[0].priority, 5);
	assert_int_equal(t.jobs[0].band, 1);
	assert_int_equal(t.jobs[0].dataset, 3);
	assert_int_equal(t.jobs[1].submit, 12);
	assert_int_equal(t.jobs[1].duration, 7);
	assert_int_equal(t.jobs[1].pool, POL_POOL_INFERENCE);
	assert_int_equal(t.jobs[1].tenant, 1);
	trace_free(&t);
}

static const struct {
	const char *text, *expect;
} bad_traces[] = {
	{ "timestamp,duration,num_gpus,gpu_time,cluster\n"
	  "2017-10-02 00:01:55,108.0,1,108.0,a\n"
	  "2017-13-02 00:01:55,108.0,1,108.0,a\n",
	  "t.csv:3: timestamp:" },
	/* a day the month does not have, not rolled into March */
	{ "timestamp,duration,num_gpus,gpu_time,cluster\n"
	  "2017-02-31 00:01:55,108.0,1,108.0,a\n",
	  "t.csv:2: timestamp:" },
	{ "timestamp,duration,num_gpus,gpu_time,cluster\n"
	  "2017-02-29 00:01:55,108.0,1,108.0,a\n",
	  "t.csv:2: timestamp:" },
	{ "timestamp,duration,num_gpus,gpu_time,cluster\n"
	  "2017-10-02 00:01:55,-1,1,108.0,a\n",
	  "t.csv:2: duration:" },
	{ "timestamp,duration,num_gpus,gpu_time,cluster\n"
	  "2017-10-02 00:01:55,10,1.5,108.0,a\n",
	  "t.csv:2: num_gpus:" },
	{ "timestamp,duration,num_gpus,gpu_time,cluster\n"
	  "# ok\n\n2017-10-02 00:01:55,10,1,108.0\n",
	  "t.csv:4: row: 4 fields" },
	{ "timestamp,duration,num_gpus,gpu_time,cluster,extra\n",
	  "t.csv:1: header:" },
	{ "submit,duration,gpu\n1,2,3\n", "t.csv:1: gpu: unknown column" },
	{ "submit,gpus\n1,2\n",
	  "t.csv:1: header: columns submit and duration" },
	{ "submit,duration,gpus\n1,2,3\n4,x,1\n",
	  "t.csv:3: duration: 'x' is not a number" },
	{ "submit,duration,gpus\n1,2,0\n", "t.csv:2: gpus:" },
	{ "submit,duration,gpus\n1,2,4777777777777\n",
	  "t.csv:2: gpus: 4.77778e+12 is out of range" },
	{ "submit,duration,gpus,pool\n1,2,1,gpu\n", "t.csv:2: pool:" },
	{ "submit,duration,gpus,nodes,gpus_per_node\n1,2,6,2,4\n",
	  "t.csv:2: gpus: 6 != nodes" },
	{ "submit,duration,gpus,min_gpus\n1,2,2,4\n", "t.csv:2: min_gpus:" },
	{ "submit,duration,gpus\n1,2\n", "t.csv:2: row: 2 fields" },
	{ "", "t.csv:0: header: empty file" },
	/* names the tables would cut to 63 characters, merging two */
	{ "timestamp,duration,num_gpus,gpu_time,cluster\n"
	  "2017-10-02 00:01:55,108.0,1,108.0,name-of-sixty-four-characters-one-more-than-the-tables-keep-0064\n",
	  "t.csv:2: cluster: longer than 63 characters" },
	{ "submit,duration,gpus,tenant\n1,2,1,name-of-sixty-four-characters-one-more-than-the-tables-keep-0064\n",
	  "t.csv:2: tenant: longer than 63 characters" },
	{ "submit,duration,gpus,name\n1,2,1,name-of-sixty-four-characters-one-more-than-the-tables-keep-0064\n",
	  "t.csv:2: name: longer than 63 characters" },
};

static void test_trace_bad_input_names_file_line(void **state)
{
	size_t i;

	(void) state;
	for (i = 0; i < sizeof(bad_traces) / sizeof(bad_traces[0]); i++) {
		agora_err_t err = { { 0 } };
		trace_t t = { 0 };

		assert_int_equal(trace_parse(bad_traces[i].text, "t.csv",
					     TRACE_FILTER_NONE, &t, &err),
				 -1);
		assert_int_equal(errno, EINVAL);
		if (!strstr(err.text, bad_traces[i].expect))
			fail_msg("case %zu: '%s' lacks '%s'", i, err.text,
				 bad_traces[i].expect);
		assert_null(t.jobs);
	}
}

static void test_cluster_file_and_shorthand(void **state)
{
	const char *text =
		"# mixed\n"
		"cluster lab\n"
		"nodetype big gpus=8 sockets=2 islands=2   # two quads\n"
		"nodetype small gpus=4\n"
		"nodes big count=20 per_leaf=8\n"
		"nodes small count=3 pool=inference per_leaf=0\n";
	agora_err_t err = { { 0 } };
	pol_cluster_t *c = sim_cluster_parse(text, "c.cl", NULL, NULL, &err);

	(void) state;
	assert_non_null(c);
	assert_string_equal(c->name, "lab");
	assert_int_equal(c->n_types, 2);
	assert_int_equal(c->n_nodes, 23);
	assert_int_equal(c->n_leaves, 4); /* 8 + 8 + 4, then one */
	assert_int_equal(c->nodes[19].leaf, 2);
	assert_int_equal(c->nodes[20].leaf, 3);
	assert_int_equal(c->nodes[22].pool, POL_POOL_INFERENCE);
	assert_int_equal(pol_cluster_gpus(c), 172);
	assert_int_equal(c->types[0].level[0][3], POL_LVL_NVLINK);
	assert_int_equal(c->types[0].level[0][4], POL_LVL_NODE);
	assert_int_equal(c->types[0].gpu_island[5], 1);
	pol_cluster_destroy(&c);
	c = sim_cluster_shorthand("80x8");
	assert_non_null(c);
	assert_int_equal(c->n_leaves, 5);
	pol_cluster_destroy(&c);
	assert_null(sim_cluster_shorthand("80x"));
	assert_null(sim_cluster_shorthand("cluster.txt"));
	assert_null(sim_cluster_shorthand("8x65"));
}

static const struct {
	const char *text, *expect;
} bad_clusters[] = {
	{ "nodetype a gpus=8\nnodes b count=2\n",
	  "c.cl:2: b: unknown node type" },
	{ "nodetype a gpus=99\n", "c.cl:1: gpus:" },
	{ "nodetype a\n", "c.cl:1: gpus: missing" },
	{ "nodetype a gpus=8 colour=red\n", "c.cl:1: colour: unknown key" },
	{ "nodetype a gpus=8\nnodetype a gpus=4\n",
	  "c.cl:2: a: node type defined twice" },
	{ "nodetype a gpus=8\n\n# x\nnodes a count=0\n", "c.cl:4: count:" },
	{ "nodetype a gpus=8\nnodes a count=2 pool=gpu\n", "c.cl:2: pool:" },
	{ "switch s1\n", "c.cl:1: switch: unknown directive" },
	{ "nodetype a hwloc=x.xml\n", "c.cl:1: hwloc: hwloc node types need" },
	{ "# nothing\n", "nodes: the cluster has no nodes" },
};

static void test_cluster_bad_input_names_file_line(void **state)
{
	size_t i;

	(void) state;
	for (i = 0; i < sizeof(bad_clusters) / sizeof(bad_clusters[0]); i++) {
		agora_err_t err = { { 0 } };

		assert_null(sim_cluster_parse(bad_clusters[i].text, "c.cl",
					      NULL, NULL, &err));
		assert_int_equal(errno, EINVAL);
		if (!strstr(err.text, bad_clusters[i].expect))
			fail_msg("case %zu: '%s' lacks '%s'", i, err.text,
				 bad_clusters[i].expect);
	}
}

static int fake_loader(void *arg, const char *path, pol_node_type_t *t,
		       agora_err_t *err)
{
	(void) arg;
	if (strcmp(path, "dgx.xml")) {
		agora_err_set(err, "%s: no such file", path);
		errno = ENOENT;
		return -1;
	}
	pol_node_type_uniform(t, "ignored", 8, 2);
	return 0;
}

static void test_cluster_hwloc_hook(void **state)
{
	agora_err_t err = { { 0 } };
	pol_cluster_t *c = sim_cluster_parse(
		"nodetype dgx hwloc=dgx.xml\nnodes dgx count=2\n", "c.cl",
		fake_loader, NULL, &err);

	(void) state;
	assert_non_null(c);
	assert_string_equal(c->types[0].name, "dgx");
	assert_int_equal(pol_cluster_gpus(c), 16);
	pol_cluster_destroy(&c);
	assert_null(sim_cluster_parse("nodetype dgx hwloc=nope.xml\n", "c.cl",
				      fake_loader, NULL, &err));
	assert_non_null(
		strstr(err.text, "c.cl:1: hwloc: nope.xml: no such file"));
}

/* Deterministic mutation smoke test: random byte edits of good inputs must
 * parse or fail cleanly with "NAME:LINE: ..." (run under ASan in CI). */
static void test_parsers_survive_mutations(void **state)
{
	static const char *const seeds[] = {
		philly,
		"tenant,submit,duration,nodes,gpus_per_node,time_limit,pool\n"
		"v,10,100,2,4,3600,training\nn,11,7,1,1,0,inference\n",
		"cluster x\nnodetype a gpus=8 islands=2\nnodes a count=3 per_leaf=2\n",
	};
	static const char alphabet[] = "0123456789,.-=:x \n\r#abcdefghinopst";
	uint64_t rng = 12345;
	char buf[512];
	int i, k, ok = 0, bad = 0;

	(void) state;
	for (i = 0; i < 30000; i++) {
		const char *seed = seeds[i % 3];
		size_t len = strlen(seed);
		int edits = 1 + (int) (sim_rand(&rng) % 4);
		agora_err_t err = { { 0 } };
		trace_t t = { 0 };
		pol_cluster_t *c;
		int rc;

		if (len >= sizeof(buf))
			len = sizeof(buf) - 1;
		memcpy(buf, seed, len);
		buf[len] = '\0';
		for (k = 0; k < edits; k++) {
			size_t pos = (size_t) (sim_rand(&rng) % len);

			switch (sim_rand(&rng) % 3) {
			case 0: /* replace */
				buf[pos] = alphabet[sim_rand(&rng) %
						    (sizeof(alphabet) - 1)];
				break;
			case 1: /* delete */
				memmove(buf + pos, buf + pos + 1, len - pos);
				len--;
				break;
			default: /* truncate */
				buf[pos] = '\0';
				len = pos;
				break;
			}
			if (len < 2)
				break;
		}
		if (i % 3 == 2) {
			c = sim_cluster_parse(buf, "m", NULL, NULL, &err);
			rc = c ? 0 : -1;
			if (c) {
				assert_true(c->n_nodes > 0 && c->n_leaves > 0);
				pol_cluster_destroy(&c);
			}
		} else {
			rc = trace_parse(buf, "m", TRACE_FILTER_NONE, &t, &err);
			if (!rc) {
				for (k = 0; k < t.n; k++) {
					assert_true(t.jobs[k].gpus >= 1);
					assert_true(t.jobs[k].duration >= 1);
					assert_true(t.jobs[k].tenant >= 0 &&
						    t.jobs[k].tenant <
							    t.n_tenants);
				}
				trace_free(&t);
			}
		}
		if (rc) {
			assert_int_equal(strncmp(err.text, "m:", 2), 0);
			bad++;
		} else {
			ok++;
		}
	}
	assert_true(ok > 100 && bad > 100);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trace_philly_parses_and_filters),
		cmocka_unit_test(test_trace_generic_columns),
		cmocka_unit_test(test_trace_bad_input_names_file_line),
		cmocka_unit_test(test_cluster_file_and_shorthand),
		cmocka_unit_test(test_cluster_bad_input_names_file_line),
		cmocka_unit_test(test_cluster_hwloc_hook),
		cmocka_unit_test(test_parsers_survive_mutations),
	};

	return cmocka_run_group_tests_name("trace", tests, NULL, NULL);
}
