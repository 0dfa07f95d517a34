/* Unit tests of the app builders (common/base/pol_apps.c): Themis' apps as
 * Slurm names them (arrays, then names within a gap, then single jobs),
 * bursts, and the older definitions; every case computed by hand. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agora_conf.h"
#include "pol_app.h"
#include "pol_apps.h"

#define MAXJ 12

typedef struct apps_case {
	const char *what;
	pol_apps_spec_t spec;
	int n;
	pol_apps_job_t jobs[MAXJ];
	int want[MAXJ]; /* app of each job */
	int n_apps;
	const char *names[MAXJ]; /* name of each app, in app order */
} apps_case_t;

#define J(id, t, acct, user, name, arr)                                        \
	{                                                                      \
		id, t, acct, user, name, arr                                   \
	}

static const apps_case_t cases[] = {
	{ "array: one app per array, whatever the names and gaps",
	  { POL_APPS_ARRAY, 3600, '_', 0 },
	  4,
	  { J(10, 0, "vc1", "ann", "lr_1", 10),
	    J(11, 0, "vc1", "ann", "lr_2", 10),
	    J(12, 90000, "vc1", "ann", "lr_3", 10),
	    J(20, 5, "vc1", "ann", "lr_1", 20) },
	  { 0, 0, 0, 1 },
	  2,
	  { "vc1/array:10", "vc1/array:20" } },
	{ "array: names chain within the gap (0, 3000, 6000: one app), a gap of 3601 s cuts",
	  { POL_APPS_ARRAY, 3600, '_', 0 },
	  5,
	  { J(1, 0, "vc1", "ann", "sweep", 0),
	    J(2, 3000, "vc1", "ann", "sweep", 0),
	    J(3, 6000, "vc1", "ann", "sweep", 0),
	    J(4, 9601, "vc1", "ann", "sweep", 0),
	    J(5, 9700, "vc1", "ann", "sweep", 0) },
	  { 0, 0, 0, 1, 1 },
	  2,
	  { "vc1/ann/sweep#1", "vc1/ann/sweep#4" } },
	{ "array: exactly gap_s apart is the same app",
	  { POL_APPS_ARRAY, 60, '_', 0 },
	  3,
	  { J(1, 100, "a", "u", "x", 0), J(2, 160, "a", "u", "x", 0),
	    J(3, 221, "a", "u", "x", 0) },
	  { 0, 0, 1 },
	  2,
	  { "a/u/x#1", "a/u/x#3" } },
	{ "array: same name but another user, or another account, or another name: another app",
	  { POL_APPS_ARRAY, 3600, '_', 0 },
	  5,
	  { J(1, 0, "vc1", "ann", "bert", 0), J(2, 10, "vc1", "bob", "bert", 0),
	    J(3, 20, "vc2", "ann", "bert", 0), J(4, 30, "vc1", "ann", "gpt", 0),
	    J(5, 40, "vc1", "ann", "bert", 0) },
	  { 0, 1, 2, 3, 0 },
	  4,
	  { "vc1/ann/bert#1", "vc1/bob/bert#2", "vc2/ann/bert#3",
	    "vc1/ann/gpt#4" } },
	{ "array: a job without a name is an app alone; an array and a named job with the same name stay apart",
	  { POL_APPS_ARRAY, 3600, '_', 0 },
	  5,
	  { J(7, 0, "vc1", "ann", "", 0), J(8, 0, "vc1", "ann", NULL, 0),
	    J(9, 1, "vc1", "ann", "lr", 9), J(30, 2, "vc1", "ann", "lr", 0),
	    J(31, 3, "vc1", "ann", "lr", 0) },
	  { 0, 1, 2, 3, 3 },
	  4,
	  { "vc1/job:7", "vc1/job:8", "vc1/array:9", "vc1/ann/lr#30" } },
	{ "array: apps numbered by first submit, not input order; out-of-order input chains by submit",
	  { POL_APPS_ARRAY, 100, '_', 0 },
	  4,
	  { J(3, 500, "a", "u", "late", 0), J(2, 200, "a", "u", "x", 0),
	    J(1, 100, "a", "u", "x", 0), J(4, 290, "a", "u", "x", 0) },
	  { 1, 0, 0, 0 },
	  2,
	  { "a/u/x#1", "a/u/late#3" } },
	{ "burst: account and gap, names and users ignored",
	  { POL_APPS_BURST, 3600, '_', 0 },
	  6,
	  { J(1, 0, "vc1", "ann", "a", 0), J(2, 1800, "vc1", "bob", "b", 0),
	    J(3, 5400, "vc1", "ann", "c", 0), J(4, 9001, "vc1", "ann", "d", 0),
	    J(5, 100, "vc2", "ann", "a", 0), J(6, 0, "vc2", "ann", "a", 7) },
	  { 0, 0, 0, 2, 1, 1 },
	  3,
	  { "vc1#1", "vc2#6", "vc1#4" } },
	{ "burst gap 0: only jobs of the same second",
	  { POL_APPS_BURST, 0, '_', 0 },
	  3,
	  { J(1, 5, "a", "", "", 0), J(2, 5, "a", "", "", 0),
	    J(3, 6, "a", "", "", 0) },
	  { 0, 0, 1 },
	  2,
	  { "a#1", "a#3" } },
	{ "account: one app per account, no gap",
	  { POL_APPS_ACCOUNT, 0, '_', 0 },
	  4,
	  { J(1, 0, "vc1", "ann", "a", 0), J(2, 999999, "vc1", "bob", "b", 3),
	    J(3, 5, "vc2", "ann", "a", 0), J(4, 6, NULL, "ann", "a", 0) },
	  { 0, 0, 1, 2 },
	  3,
	  { "vc1", "vc2", "" } },
	{ "user: one app per user",
	  { POL_APPS_USER, 0, '_', 0 },
	  3,
	  { J(1, 0, "vc1", "1001", "a", 0), J(2, 1, "vc2", "1002", "b", 0),
	    J(3, 2, "vc2", "1001", "c", 0) },
	  { 0, 1, 0 },
	  2,
	  { "user:1001", "user:1002" } },
	{ "name_prefix: the account and the name up to the separator",
	  { POL_APPS_NAME_PREFIX, 0, '-', 0 },
	  4,
	  { J(1, 0, "a", "u", "bert-lr1", 0), J(2, 1, "b", "v", "bert-lr2", 0),
	    J(3, 2, "a", "u", "bert", 0), J(4, 3, "a", "u", "gpt-x", 0) },
	  { 0, 1, 0, 2 },
	  3,
	  { "a/bert", "b/bert", "a/gpt" } },
	/* the cap: a's 3rd and later prefixes are one app, b keeps its own */
	{ "name_prefix, 2 apps per account: the rest is ACCOUNT/~other",
	  { POL_APPS_NAME_PREFIX, 0, '-', 2 },
	  6,
	  { J(1, 0, "a", "u", "p1-x", 0), J(2, 1, "a", "u", "p2-x", 0),
	    J(3, 2, "b", "v", "p9-x", 0), J(4, 3, "a", "u", "p3-x", 0),
	    J(5, 4, "a", "u", "p4-x", 0), J(6, 5, "a", "u", "p1-y", 0) },
	  { 0, 1, 2, 3, 3, 0 },
	  4,
	  { "a/p1", "a/p2", "b/p9", "a/~other" } },
	{ "array, 1 app per account: arrays and names merge after the first",
	  { POL_APPS_ARRAY, 60, '_', 1 },
	  4,
	  { J(1, 0, "a", "u", "x", 7), J(2, 1, "a", "u", "x", 7),
	    J(3, 2, "a", "u", "y", 0), J(4, 3, "a", "u", "", 0) },
	  { 0, 0, 1, 1 },
	  2,
	  { "a/array:7", "a/~other" } },
};

static void test_apps_cases(void **state)
{
	size_t c;

	(void) state;
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const apps_case_t *k = &cases[c];
		pol_apps_t a;
		agora_err_t err = { { 0 } };
		int i, tot = 0;

		if (pol_apps_build(&k->spec, k->jobs, k->n, &a, &err))
			fail_msg("%s: %s", k->what, err.text);
		if (a.n_apps != k->n_apps)
			fail_msg("%s: %d apps, want %d", k->what, a.n_apps,
				 k->n_apps);
		for (i = 0; i < k->n; i++)
			if (a.app[i] != k->want[i])
				fail_msg("%s: job %d in app %d, want %d",
					 k->what, i, a.app[i], k->want[i]);
		for (i = 0; i < a.n_apps; i++) {
			char name[128];

			assert_int_equal(a.app[a.first[i]], i);
			tot += a.size[i];
			pol_apps_app_name(&k->spec, &a, k->jobs, i, name,
					  sizeof(name));
			if (strcmp(name, k->names[i]))
				fail_msg("%s: app %d named '%s', want '%s'",
					 k->what, i, name, k->names[i]);
		}
		assert_int_equal(tot, k->n);
		pol_apps_free(&a);
	}
}

/* No jobs: no apps; bad specs are refused with a reason. */
static void test_apps_edges(void **state)
{
	pol_apps_spec_t s = { POL_APPS_BURST, -1, '_', 0 };
	pol_apps_t a;
	agora_err_t err = { { 0 } };

	(void) state;
	assert_int_equal(pol_apps_build(&s, NULL, 0, &a, &err), -1);
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err.text, "gap"));
	s.gap_s = 0;
	assert_int_equal(pol_apps_build(&s, NULL, 0, &a, &err), 0);
	assert_int_equal(a.n_apps, 0);
	pol_apps_free(&a);
	s.max_per_account = -1;
	assert_int_equal(pol_apps_build(&s, NULL, 0, &a, &err), -1);
	assert_non_null(strstr(err.text, "apps per account"));
	s.max_per_account = 0;
	s.def = (pol_apps_def_t) 42;
	assert_int_equal(pol_apps_build(&s, NULL, 0, &a, &err), -1);
	assert_null(a.app);
}

static void test_apps_parse(void **state)
{
	pol_apps_spec_t s;
	agora_err_t err = { { 0 } };

	(void) state;
	assert_int_equal(pol_apps_parse("burst:1h", &s, &err), 0);
	assert_int_equal(s.def, POL_APPS_BURST);
	assert_int_equal(s.gap_s, 3600);
	assert_int_equal(pol_apps_parse("array", &s, &err), 0);
	assert_int_equal(s.def, POL_APPS_ARRAY);
	assert_int_equal(s.gap_s, 3600);
	assert_int_equal(pol_apps_parse("array:90", &s, &err), 0);
	assert_int_equal(s.gap_s, 90);
	assert_int_equal(pol_apps_parse("tenant", &s, &err), 0);
	assert_int_equal(s.def, POL_APPS_ACCOUNT);
	assert_int_equal(pol_apps_parse("user", &s, &err), 0);
	assert_int_equal(s.def, POL_APPS_USER);
	assert_int_equal(pol_apps_parse("bursts", &s, &err), -1);
	assert_non_null(strstr(err.text, "not one of"));
	assert_int_equal(pol_apps_parse("burst:8d", &s, &err), -1);
	assert_int_equal(pol_apps_parse("burst:x", &s, &err), -1);
	assert_int_equal(pol_apps_parse("user:60", &s, &err), -1);
	assert_non_null(strstr(err.text, "only array and burst"));
}

/* agora.conf: AppDefinition=array / burst with AppGap; the ledger account
 * of such a job stays its account. */
static void test_apps_conf(void **state)
{
	agora_conf_t c;
	agora_err_t err = { { 0 } };
	pol_apps_spec_t s;
	char *acct;

	(void) state;
	agora_conf_defaults(&c);
	assert_int_equal(
		agora_conf_parse_string("AppDefinition=array\nAppGap=30m\n",
					"t.conf", &c, &err),
		0);
	agora_conf_apps_spec(&c, &s);
	assert_int_equal(s.def, POL_APPS_ARRAY);
	assert_int_equal(s.gap_s, 1800);
	assert_string_equal(agora_app_def_name(c.app_def), "array");
	acct = agora_conf_app_name(&c, "vc1", 1001, "lr_1");
	assert_string_equal(acct, "vc1");
	free(acct);
	assert_int_equal(agora_conf_parse_string("AppDefinition=burst\n",
						 "t.conf", &c, &err),
			 0);
	agora_conf_apps_spec(&c, &s);
	assert_int_equal(s.def, POL_APPS_BURST);
	assert_int_equal(s.gap_s, 3600);
	assert_int_equal(agora_conf_parse_string("AppDefinition=sweep\n",
						 "t.conf", &c, &err),
			 -1);
	assert_non_null(strstr(err.text, "array, burst"));
	assert_int_equal(
		agora_conf_parse_string("AppGap=8d\n", "t.conf", &c, &err), -1);
	/* name_prefix: apps by prefix, credit by account (a new prefix is
	 * no fresh quota) */
	assert_int_equal(
		agora_conf_parse_string(
			"AppDefinition=name_prefix\nAppsPerAccount=5\n",
			"t.conf", &c, &err),
		0);
	acct = agora_conf_app_name(&c, "vc1", 1001, "lr_1");
	assert_string_equal(acct, "vc1");
	free(acct);
	agora_conf_apps_spec(&c, &s);
	assert_int_equal(s.max_per_account, 5);
	assert_int_equal(agora_conf_parse_string("AppsPerAccount=0\n", "t.conf",
						 &c, &err),
			 -1);
	assert_non_null(strstr(err.text, "AppsPerAccount"));
	agora_conf_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_apps_cases),
		cmocka_unit_test(test_apps_edges),
		cmocka_unit_test(test_apps_parse),
		cmocka_unit_test(test_apps_conf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
