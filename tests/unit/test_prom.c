/*
 * Unit tests of common/base/agora_prom.c: Prometheus' text format (exact
 * text of a small case, escaping, names, values) and the --json meta
 * block of agoractl in the shape of squeue --json.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agora_prom.h"

static void test_exact_small_case(void **state)
{
	agora_prom_t p;
	const char *l[4] = { "cluster", "c1", "state", "up" };

	(void) state;
	agora_prom_init(&p);
	assert_int_equal(agora_prom_one(&p, "agora_fed_rounds_total", "counter",
					"Auction rounds run", 3),
			 0);
	assert_int_equal(agora_prom_family(&p, "agora_fed_cluster_gpus",
					   "gauge", "GPUs of a cluster"),
			 0);
	assert_int_equal(
		agora_prom_sample(&p, "agora_fed_cluster_gpus", l, 2, 64), 0);
	assert_int_equal(agora_prom_one(&p, "agora_fed_round_seconds", "gauge",
					"Last round", 0.25),
			 0);
	assert_string_equal(
		agora_prom_text(&p),
		"# HELP agora_fed_rounds_total Auction rounds run\n"
		"# TYPE agora_fed_rounds_total counter\n"
		"agora_fed_rounds_total 3\n"
		"# HELP agora_fed_cluster_gpus GPUs of a cluster\n"
		"# TYPE agora_fed_cluster_gpus gauge\n"
		"agora_fed_cluster_gpus{cluster=\"c1\",state=\"up\"} 64\n"
		"# HELP agora_fed_round_seconds Last round\n"
		"# TYPE agora_fed_round_seconds gauge\n"
		"agora_fed_round_seconds 0.25\n");
	agora_prom_free(&p);
}

static void test_escaping(void **state)
{
	agora_prom_t p;
	const char *l[2] = { "account", "a\\b\"c\nd" };

	(void) state;
	agora_prom_init(&p);
	assert_int_equal(agora_prom_family(&p, "x", "gauge",
					   "back\\slash \"quoted\"\nline"),
			 0);
	assert_int_equal(agora_prom_sample(&p, "x", l, 1, -1.5), 0);
	/* HELP: \ and newline escaped, " kept; label value: all three */
	assert_string_equal(agora_prom_text(&p),
			    "# HELP x back\\\\slash \"quoted\"\\nline\n"
			    "# TYPE x gauge\n"
			    "x{account=\"a\\\\b\\\"c\\nd\"} -1.5\n");
	agora_prom_free(&p);
}

static void test_names(void **state)
{
	static const char *good[] = { "a", "_x", "agora:rule_1", "A9" };
	static const char *badm[] = { "", "1a", "a-b", "a b", "a{", "é" };
	agora_prom_t p;
	const char *l[2] = { "__reserved", "v" };

	(void) state;
	for (size_t i = 0; i < sizeof(good) / sizeof(*good); i++)
		assert_true(agora_prom_metric_name_ok(good[i]));
	for (size_t i = 0; i < sizeof(badm) / sizeof(*badm); i++)
		assert_false(agora_prom_metric_name_ok(badm[i]));
	assert_false(agora_prom_label_name_ok("a:b"));
	assert_false(agora_prom_label_name_ok("__name"));
	assert_true(agora_prom_label_name_ok("_name"));

	agora_prom_init(&p);
	assert_int_equal(agora_prom_family(&p, "bad-name", "gauge", "h"), -1);
	assert_true(p.failed);
	assert_non_null(strstr(p.err, "bad-name"));
	assert_null(agora_prom_text(&p));
	agora_prom_free(&p);

	agora_prom_init(&p);
	assert_int_equal(agora_prom_family(&p, "ok", "gaug", "h"), -1);
	assert_non_null(strstr(p.err, "type"));
	agora_prom_free(&p);

	agora_prom_init(&p);
	assert_int_equal(agora_prom_sample(&p, "ok", l, 1, 1), -1);
	assert_non_null(strstr(p.err, "__reserved"));
	agora_prom_free(&p);
}

static void test_values(void **state)
{
	static const struct {
		double v;
		const char *text;
	} cases[] = {
		{ 0, "0" },
		{ 42, "42" },
		{ -7, "-7" },
		{ 0.1, "0.1" },
		{ 1.0 / 3, "0.3333333333333333" },
		{ 1e300, "1e+300" },
		{ 9007199254740993.0 * 4, "3.602879701896397e+16" },
		{ 12345.678, "12345.678" },
	};
	char buf[40];

	(void) state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		agora_prom_value(cases[i].v, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].text);
		assert_true(strtod(buf, NULL) == cases[i].v);
	}
	agora_prom_value(NAN, buf, sizeof(buf));
	assert_string_equal(buf, "NaN");
	agora_prom_value(INFINITY, buf, sizeof(buf));
	assert_string_equal(buf, "+Inf");
	agora_prom_value(-INFINITY, buf, sizeof(buf));
	assert_string_equal(buf, "-Inf");
}

static void test_view_families(void **state)
{
	agora_view_app_t apps[2] = {
		{ .name = "vc_a",
		  .credit = 2.5,
		  .quota = 5,
		  .usage = 1,
		  .rho = 1.25,
		  .has_rho = true },
		{ .name = "vc_b", .credit = -1, .quota = 5, .usage = 9 },
	};
	agora_view_lease_t leases[3] = {
		{ .job = 1, .gpus = 8 },
		{ .job = 2, .gpus = 2 },
		{ .job = 3, .gpus = 4, .grace = true },
	};
	agora_prom_t p;
	const char *t;

	(void) state;
	agora_prom_init(&p);
	assert_int_equal(agora_prom_view(&p, apps, 2, leases, 3), 0);
	t = agora_prom_text(&p);
	/* GPU-hours in the view, GPU-seconds here */
	assert_non_null(strstr(
		t,
		"# TYPE agora_account_credit_gpu_seconds gauge\n"
		"agora_account_credit_gpu_seconds{account=\"vc_a\"} 9000\n"
		"agora_account_credit_gpu_seconds{account=\"vc_b\"} -3600\n"));
	assert_non_null(strstr(
		t,
		"agora_account_usage_gpu_seconds{account=\"vc_b\"} 32400\n"));
	assert_non_null(strstr(
		t,
		"agora_account_quota_gpu_seconds{account=\"vc_a\"} 18000\n"));
	/* rho only where the view has one */
	assert_non_null(
		strstr(t, "agora_account_rho{account=\"vc_a\"} 1.25\n"));
	assert_null(strstr(t, "agora_account_rho{account=\"vc_b\"}"));
	assert_non_null(strstr(t, "agora_leases{state=\"active\"} 2\n"
				  "agora_leases{state=\"grace\"} 1\n"));
	assert_non_null(strstr(t, "agora_lease_gpus{state=\"active\"} 10\n"
				  "agora_lease_gpus{state=\"grace\"} 4\n"));
	agora_prom_free(&p);
}

static void test_json_doc(void **state)
{
	const char *argv[] = { "agoractl", "credits", "--json" };
	json_object *doc, *meta, *v, *s, *a;

	(void) state;
	doc = agora_json_doc("1.2.3", 22, 5, 8, 3, argv);
	assert_non_null(doc);
	assert_true(json_object_object_get_ex(doc, "meta", &meta));
	assert_true(json_object_object_get_ex(meta, "Slurm", &s));
	assert_true(json_object_object_get_ex(s, "release", &v));
	assert_string_equal(json_object_get_string(v), "22.05.8");
	assert_true(json_object_object_get_ex(s, "version", &v));
	assert_true(json_object_object_get_ex(v, "minor", &a));
	assert_int_equal(json_object_get_int(a), 5);
	assert_true(json_object_object_get_ex(meta, "plugin", &v));
	assert_true(json_object_object_get_ex(v, "type", &a));
	assert_string_equal(json_object_get_string(a), "agoractl/credits");
	assert_true(json_object_object_get_ex(meta, "agora", &v));
	assert_true(json_object_object_get_ex(v, "version", &a));
	assert_string_equal(json_object_get_string(a), "1.2.3");
	assert_true(json_object_object_get_ex(meta, "command", &v));
	assert_int_equal(json_object_array_length(v), 3);
	assert_string_equal(
		json_object_get_string(json_object_array_get_idx(v, 2)),
		"--json");
	assert_true(json_object_object_get_ex(doc, "errors", &a));
	assert_int_equal(json_object_array_length(a), 0);
	agora_json_doc_error(doc, false, 2, "cannot reach slurmctld");
	agora_json_doc_error(doc, true, 0, "PrivateData hides rows");
	assert_int_equal(json_object_array_length(a), 1);
	v = json_object_array_get_idx(a, 0);
	assert_true(json_object_object_get_ex(v, "error_number", &s));
	assert_int_equal(json_object_get_int(s), 2);
	assert_true(json_object_object_get_ex(v, "error", &s));
	assert_string_equal(json_object_get_string(s),
			    "cannot reach slurmctld");
	assert_true(json_object_object_get_ex(doc, "warnings", &a));
	assert_int_equal(json_object_array_length(a), 1);
	json_object_put(doc);

	/* 24.11 */
	doc = agora_json_doc("1", 24, 11, 5, 1, argv);
	assert_true(json_object_object_get_ex(doc, "meta", &meta));
	assert_true(json_object_object_get_ex(meta, "Slurm", &s));
	assert_true(json_object_object_get_ex(s, "release", &v));
	assert_string_equal(json_object_get_string(v), "24.11.5");
	assert_true(json_object_object_get_ex(meta, "plugin", &v));
	assert_true(json_object_object_get_ex(v, "type", &a));
	assert_string_equal(json_object_get_string(a), "agoractl/");
	json_object_put(doc);
}

static void test_state_path(void **state)
{
	char *p;

	(void) state;
	p = agora_prom_state_path("/var/lib/agorad/agorad.json");
	assert_string_equal(p, "/var/lib/agorad/agorad.prom");
	free(p);
	p = agora_prom_state_path("/tmp/state");
	assert_string_equal(p, "/tmp/state.prom");
	free(p);
	p = agora_prom_state_path(".json");
	assert_string_equal(p, ".json.prom");
	free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exact_small_case),
		cmocka_unit_test(test_escaping),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_view_families),
		cmocka_unit_test(test_json_doc),
		cmocka_unit_test(test_state_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
