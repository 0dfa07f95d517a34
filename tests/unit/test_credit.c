/* Unit tests of the credit ledger (common/policy/pol_credit.c). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "pol_credit.h"

#define H 3600.0 /* half-life and period of most tests: one hour */

static void assert_near(double got, double want, double tol)
{
	if (fabs(got - want) > tol) {
		fail_msg("got %.12g, want %.12g (tol %g)", got, want, tol);
	}
}

/* One GPU-hour charged at t=0, read at 0 and one half-life later, then a
 * second charge: usage = raw * ln2 * P / H in GPU-hours. */
static void test_credit_decay_hand_computed(void **state)
{
	pol_credit_t *l = pol_credit_create("c1", H, H, 10);

	(void) state;
	assert_non_null(l);
	assert_int_equal(pol_credit_charge(l, "a", 3600, 0, NULL), 0);
	assert_near(pol_credit_usage(l, "a", 0), M_LN2, 1e-12);
	assert_near(pol_credit_usage(l, "a", 3600), 0.5 * M_LN2, 1e-12);
	assert_near(pol_credit_usage(l, "a", 7200), 0.25 * M_LN2, 1e-12);
	/* 1800 GPU-s left at t=3600, plus 7200: 9000 GPU-s = 2.5 GPU-h */
	assert_int_equal(pol_credit_charge(l, "a", 7200, 3600, NULL), 0);
	assert_near(pol_credit_usage(l, "a", 3600), 2.5 * M_LN2, 1e-12);
	assert_near(pol_credit_get(l, "a", 3600), 10 - 2.5 * M_LN2, 1e-12);
	/* unknown account: full default quota */
	assert_near(pol_credit_get(l, "zz", 3600), 10, 0);
	assert_near(pol_credit_usage(l, "zz", 3600), 0, 0);
	pol_credit_destroy(&l);
	assert_null(l);
	pol_credit_destroy(&l); /* NULL: nothing */
}

/* Period twice the half-life doubles the normalisation. */
static void test_credit_period_scales_usage(void **state)
{
	pol_credit_t *l = pol_credit_create("c1", H, 2 * H, 10);

	(void) state;
	assert_int_equal(pol_credit_charge(l, "a", 3600, 100, NULL), 0);
	assert_near(pol_credit_usage(l, "a", 100 + 2 * 3600), 0.25 * 2 * M_LN2,
		    1e-12);
	pol_credit_destroy(&l);
}

/* Running at exactly quota/period converges to usage == quota. */
static void test_credit_steady_state_at_quota_is_zero_credit(void **state)
{
	double week = 7 * 24 * 3600.0;
	pol_credit_t *l = pol_credit_create("c1", week, week, 168);
	int64_t t;

	(void) state;
	/* one GPU, all the time: 168 GPU-hours a week = the quota */
	for (t = 60; t <= 10 * (int64_t) week; t += 60)
		assert_int_equal(pol_credit_charge(l, "a", 60, t, NULL), 0);
	assert_near(pol_credit_usage(l, "a", t - 60), 168, 168 * 0.005);
	assert_near(pol_credit_get(l, "a", t - 60), 0, 168 * 0.005);
	pol_credit_destroy(&l);
}

/* A late record gives the same usage as one that arrived in time. */
static void test_credit_order_independent(void **state)
{
	pol_credit_t *a = pol_credit_create("c1", H, H, 0);
	pol_credit_t *b = pol_credit_create("c1", H, H, 0);

	(void) state;
	pol_credit_charge(a, "x", 100, 10, NULL);
	pol_credit_charge(a, "x", 200, 500, NULL);
	pol_credit_charge(a, "x", 300, 4000, NULL);
	pol_credit_charge(b, "x", 300, 4000, NULL);
	pol_credit_charge(b, "x", 100, 10, NULL);
	pol_credit_charge(b, "x", 200, 500, NULL);
	assert_near(pol_credit_usage(a, "x", 5000),
		    pol_credit_usage(b, "x", 5000), 1e-12);
	pol_credit_destroy(&a);
	pol_credit_destroy(&b);
}

static void test_credit_bad_arguments(void **state)
{
	pol_credit_t *l;
	char long_name[100];

	(void) state;
	errno = 0;
	assert_null(pol_credit_create("", H, H, 1));
	assert_int_equal(errno, EINVAL);
	assert_null(pol_credit_create("c", 0, H, 1));
	assert_null(pol_credit_create("c", H, -1, 1));
	assert_null(pol_credit_create("c", H, H, NAN));
	l = pol_credit_create("c", H, H, 1);
	memset(long_name, 'a', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	/* an over-long name is keyed (pol_app.h), never refused */
	assert_int_equal(pol_credit_charge(l, NULL, 1, 0, NULL), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(pol_credit_charge(l, "a", -1, 0, NULL), -1);
	assert_int_equal(pol_credit_charge(l, "a", INFINITY, 0, NULL), -1);
	assert_int_equal(pol_credit_count(l), 0); /* no side effect */
	assert_int_equal(pol_credit_hwm(l, "c"), 0);
	assert_int_equal(pol_credit_charge(l, long_name, 1, 0, NULL), 0);
	assert_int_equal(pol_credit_count(l), 1);
	assert_int_equal(strlen(pol_credit_account(l, 0)), 63);
	pol_credit_destroy(&l);
}

static void test_credit_quotas_from_conf(void **state)
{
	agora_conf_t c;
	agora_err_t err = { { 0 } };
	pol_credit_t *l;

	(void) state;
	agora_conf_defaults(&c);
	assert_int_equal(agora_conf_parse_string("CreditHalfLife=1\n"
						 "CreditPeriod=2\n"
						 "DefaultQuota=5\n"
						 "AccountQuota=vision:100\n",
						 "t.conf", &c, &err),
			 0);
	l = pol_credit_from_conf("c1", &c);
	assert_non_null(l);
	assert_near(pol_credit_quota(l, "vision"), 100, 0);
	assert_near(pol_credit_quota(l, "nlp"), 5, 0);
	pol_credit_charge(l, "vision", 3600, 0, NULL);
	/* P = 2 h, H = 1 h: 1 GPU-h counts 2 ln2 */
	assert_near(pol_credit_get(l, "vision", 0), 100 - 2 * M_LN2, 1e-12);
	pol_credit_destroy(&l);
	agora_conf_free(&c);
}

/* Records carry (cluster, seq); absorbing is idempotent per source. */
static void test_credit_absorb_idempotent(void **state)
{
	pol_credit_t *a = pol_credit_create("east", H, H, 10);
	pol_credit_t *b = pol_credit_create("west", H, H, 10);
	pol_credit_record_t r[3], bad;
	int i;

	(void) state;
	assert_int_equal(pol_credit_charge(a, "x", 3600, 0, &r[0]), 0);
	assert_int_equal(pol_credit_charge(a, "y", 1800, 60, &r[1]), 0);
	assert_int_equal(pol_credit_charge(a, "x", 900, 120, &r[2]), 0);
	assert_string_equal(r[2].cluster, "east");
	assert_int_equal(r[0].seq, 1);
	assert_int_equal(r[2].seq, 3);
	assert_int_equal(pol_credit_hwm(a, "east"), 3);
	for (i = 0; i < 3; i++)
		assert_int_equal(pol_credit_absorb(b, &r[i]), 1);
	/* replays and our own records are no-ops */
	for (i = 0; i < 3; i++)
		assert_int_equal(pol_credit_absorb(b, &r[i]), 0);
	assert_int_equal(pol_credit_absorb(a, &r[0]), 0);
	assert_int_equal(pol_credit_hwm(b, "east"), 3);
	assert_int_equal(pol_credit_hwm(b, "north"), 0);
	assert_near(pol_credit_usage(b, "x", 500),
		    pol_credit_usage(a, "x", 500), 1e-12);
	assert_near(pol_credit_usage(b, "y", 500),
		    pol_credit_usage(a, "y", 500), 1e-12);
	/* a gap is accepted: the hwm jumps */
	r[2].seq = 10;
	assert_int_equal(pol_credit_absorb(b, &r[2]), 1);
	assert_int_equal(pol_credit_hwm(b, "east"), 10);
	/* invalid records change nothing */
	bad = r[0];
	bad.seq = 11;
	bad.gpu_seconds = -5;
	assert_int_equal(pol_credit_absorb(b, &bad), -1);
	assert_int_equal(errno, EINVAL);
	bad.gpu_seconds = 5;
	bad.seq = 0;
	assert_int_equal(pol_credit_absorb(b, &bad), -1);
	assert_int_equal(pol_credit_hwm(b, "east"), 10);
	pol_credit_destroy(&a);
	pol_credit_destroy(&b);
}

/* Two clusters absorbing each other's records agree on every account,
 * whatever order the records arrive in. */
static void test_credit_federated_ledgers_agree(void **state)
{
	pol_credit_t *a = pol_credit_create("east", H, H, 10);
	pol_credit_t *b = pol_credit_create("west", H, H, 10);
	pol_credit_record_t ra[4], rb[4];
	int i;

	(void) state;
	for (i = 0; i < 4; i++) {
		pol_credit_charge(a, "x", 100.0 * (i + 1), 100 * i, &ra[i]);
		pol_credit_charge(b, i % 2 ? "x" : "y", 50.0 * (i + 1),
				  100 * i + 30, &rb[i]);
	}
	for (i = 0; i < 4; i++) {
		pol_credit_absorb(a, &rb[i]);
		pol_credit_absorb(b, &ra[i]);
	}
	assert_near(pol_credit_usage(a, "x", 1000),
		    pol_credit_usage(b, "x", 1000), 1e-12);
	assert_near(pol_credit_usage(a, "y", 1000),
		    pol_credit_usage(b, "y", 1000), 1e-12);
	pol_credit_destroy(&a);
	pol_credit_destroy(&b);
}

static void test_credit_json_round_trip(void **state)
{
	pol_credit_t *a = pol_credit_create("east", H, H, 10);
	pol_credit_t *b = pol_credit_create("east", H, H, 10);
	pol_credit_record_t r = { .cluster = "west",
				  .seq = 7,
				  .account = "z",
				  .gpu_seconds = 42,
				  .t = 5 };
	agora_err_t err = { { 0 } };
	char *s1 = NULL, *s2 = NULL;

	(void) state;
	pol_credit_set_quota(a, "q-only", 3);
	pol_credit_set_quota(b, "x", 77); /* config of b survives a load */
	pol_credit_charge(a, "x", 1234.5678901234567, 10, NULL);
	pol_credit_charge(a, "y", 1e-3, 20, NULL);
	assert_int_equal(pol_credit_absorb(a, &r), 1);
	assert_int_equal(pol_credit_save(a, &s1), 0);
	assert_int_equal(pol_credit_load(b, s1, "state.json", &err), 0);
	assert_int_equal(pol_credit_save(b, &s2), 0);
	assert_string_equal(s1, s2);
	assert_true(pol_credit_usage(a, "x", 99) ==
		    pol_credit_usage(b, "x", 99));
	assert_true(pol_credit_usage(a, "z", 99) ==
		    pol_credit_usage(b, "z", 99));
	assert_int_equal(pol_credit_hwm(b, "west"), 7);
	assert_int_equal(pol_credit_hwm(b, "east"), 2);
	assert_near(pol_credit_quota(b, "x"), 77, 0);
	/* records after the restart continue the sequence */
	pol_credit_charge(b, "x", 1, 30, &r);
	assert_int_equal(r.seq, 3);
	free(s1);
	free(s2);
	pol_credit_destroy(&a);
	pol_credit_destroy(&b);
}

/* A state saved under another cluster name keeps its records out. */
static void test_credit_load_renamed_cluster(void **state)
{
	pol_credit_t *a = pol_credit_create("old", H, H, 10);
	pol_credit_t *b = pol_credit_create("new", H, H, 10);
	pol_credit_record_t r;
	agora_err_t err = { { 0 } };
	char *s = NULL;

	(void) state;
	pol_credit_charge(a, "x", 100, 0, &r);
	pol_credit_save(a, &s);
	assert_int_equal(pol_credit_load(b, s, "s", &err), 0);
	assert_int_equal(pol_credit_hwm(b, "old"), 1);
	assert_int_equal(pol_credit_absorb(b, &r), 0);
	assert_int_equal(pol_credit_hwm(b, "new"), 0);
	free(s);
	pol_credit_destroy(&a);
	pol_credit_destroy(&b);
}

static const struct {
	const char *json;
	const char *expect; /* substring of the error */
} bad_states[] = {
	{ "", "s.json:1: not JSON" },
	{ "{\"version\":1,", "s.json:1: not JSON" },
	{ "{\"version\":1}\n{}", "s.json:2: not JSON: data after the value" },
	{ "[1,2]", "s.json:(top): must be a JSON object" },
	{ "{\"cluster\":\"c\",\"seq\":0,\"accounts\":[],\"sources\":[]}",
	  "s.json:version: missing" },
	{ "{\"version\":2,\"cluster\":\"c\",\"seq\":0,\"accounts\":[],"
	  "\"sources\":[]}",
	  "s.json:version: unsupported" },
	{ "{\"version\":1,\"cluster\":\"\",\"seq\":0,\"accounts\":[],"
	  "\"sources\":[]}",
	  "s.json:cluster: must be 1..63 characters" },
	{ "{\"version\":1,\"cluster\":\"c\",\"seq\":-1,\"accounts\":[],"
	  "\"sources\":[]}",
	  "s.json:seq: out of range" },
	{ "{\"version\":1,\"cluster\":\"c\",\"seq\":\"3\",\"accounts\":[],"
	  "\"sources\":[]}",
	  "s.json:seq: must be an integer" },
	{ "{\"version\":1,\"cluster\":\"c\",\"seq\":0,\"accounts\":{},"
	  "\"sources\":[]}",
	  "s.json:accounts: must be an array" },
	{ "{\"version\":1,\"cluster\":\"c\",\"seq\":0,\"accounts\":[],"
	  "\"sources\":[],\"extra\":1}",
	  "s.json:extra: unknown key" },
	{ "{\"version\":1,\"cluster\":\"c\",\"seq\":0,\"accounts\":[{\"name\":"
	  "\"a\",\"raw\":1,\"t\":0},{\"name\":\"b\",\"raw\":-1,\"t\":0}],"
	  "\"sources\":[]}",
	  "s.json:accounts[1].raw: must be a finite number >= 0" },
	{ "{\"version\":1,\"cluster\":\"c\",\"seq\":0,\"accounts\":[{\"name\":"
	  "\"a\",\"raw\":\"x\",\"t\":0}],\"sources\":[]}",
	  "s.json:accounts[0].raw: must be a number" },
	{ "{\"version\":1,\"cluster\":\"c\",\"seq\":0,\"accounts\":[{\"name\":"
	  "\"a\",\"raw\":1}],\"sources\":[]}",
	  "s.json:accounts[0].t: missing" },
	{ "{\"version\":1,\"cluster\":\"c\",\"seq\":0,\"accounts\":[{\"name\":"
	  "\"a\",\"raw\":1,\"t\":0,\"q\":1}],\"sources\":[]}",
	  "s.json:accounts[0].q: unknown key" },
	{ "{\"version\":1,\"cluster\":\"c\",\"seq\":0,\"accounts\":[{\"name\":"
	  "\"a\",\"raw\":1,\"t\":0},{\"name\":\"a\",\"raw\":1,\"t\":0}],"
	  "\"sources\":[]}",
	  "s.json:accounts: duplicate account name" },
	{ "{\"version\":1,\"cluster\":\"c\",\"seq\":0,\"accounts\":[5],"
	  "\"sources\":[]}",
	  "s.json:accounts[0]: must be an object" },
	{ "{\"version\":1,\"cluster\":\"c\",\"seq\":0,\"accounts\":[],"
	  "\"sources\":[{\"cluster\":\"d\",\"hwm\":-3}]}",
	  "s.json:sources[0].hwm: out of range" },
	{ "{\"version\":1,\"cluster\":\"c\",\"seq\":0,\"accounts\":[],"
	  "\"sources\":[{\"cluster\":\"d\",\"hwm\":1},{\"cluster\":\"d\","
	  "\"hwm\":2}]}",
	  "s.json:sources[1]: duplicate source cluster" },
};

static void test_credit_json_bad_input(void **state)
{
	pol_credit_t *l = pol_credit_create("c", H, H, 10);
	char *before = NULL, *after = NULL;
	size_t i;

	(void) state;
	pol_credit_charge(l, "keep", 100, 0, NULL);
	pol_credit_save(l, &before);
	for (i = 0; i < sizeof(bad_states) / sizeof(bad_states[0]); i++) {
		agora_err_t err = { { 0 } };

		errno = 0;
		if (pol_credit_load(l, bad_states[i].json, "s.json", &err) !=
		    -1)
			fail_msg("case %zu: accepted", i);
		assert_int_equal(errno, EINVAL);
		if (!strstr(err.text, bad_states[i].expect))
			fail_msg("case %zu: '%s' lacks '%s'", i, err.text,
				 bad_states[i].expect);
	}
	pol_credit_save(l, &after);
	assert_string_equal(before, after); /* unchanged by failures */
	free(before);
	free(after);
	pol_credit_destroy(&l);
}

static void test_credit_file_round_trip(void **state)
{
	char dir[64], path[128];
	pol_credit_t *a = pol_credit_create("c", H, H, 10);
	pol_credit_t *b = pol_credit_create("c", H, H, 10);
	agora_err_t err = { { 0 } };

	(void) state;
	/* mkdtemp template: a prefix and six X */
	snprintf(dir, sizeof(dir), "%s", "/tmp/agora-credit-");
	memset(dir + strlen(dir), 'X', 6);
	dir[strlen("/tmp/agora-credit-") + 6] = '\0';
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/credit.json", dir);
	pol_credit_charge(a, "x", 360, 0, NULL);
	assert_int_equal(pol_credit_save_file(a, path, &err), 0);
	assert_int_equal(pol_credit_load_file(b, path, &err), 0);
	assert_true(pol_credit_usage(a, "x", 10) ==
		    pol_credit_usage(b, "x", 10));
	unlink(path);
	assert_int_equal(pol_credit_load_file(b, path, &err), -1);
	assert_int_equal(errno, ENOENT);
	assert_non_null(strstr(err.text, "credit.json"));
	rmdir(dir);
	pol_credit_destroy(&a);
	pol_credit_destroy(&b);
}

/*
 * One bad write never resets everyone's usage: after two saves the main
 * file is corrupted; loading falls back to .prev (the first save),
 * returns 1 and names both files.  Both bad: -1, ledger unchanged.
 * Neither there: -1/ENOENT.  The saved file has mode 0600.
 */
static void test_credit_file_prev_fallback(void **state)
{
	char dir[64], path[128], prev[140];
	pol_credit_t *a = pol_credit_create("c", H, H, 10);
	pol_credit_t *b = pol_credit_create("c", H, H, 10);
	agora_err_t err = { { 0 } };
	struct stat st;
	FILE *f;

	(void) state;
	snprintf(dir, sizeof(dir), "%s", "/tmp/agora-credit-");
	memset(dir + strlen(dir), 'X', 6);
	dir[strlen("/tmp/agora-credit-") + 6] = '\0';
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/credit.json", dir);
	snprintf(prev, sizeof(prev), "%s.prev", path);
	assert_int_equal(pol_credit_charge(a, "x", 3600, 0, NULL), 0);
	assert_int_equal(pol_credit_save_file(a, path, &err), 0);
	assert_int_equal(pol_credit_charge(a, "x", 3600, 0, NULL), 0);
	assert_int_equal(pol_credit_save_file(a, path, &err), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	assert_int_equal(pol_credit_load_file(b, path, &err), 0);
	assert_near(pol_credit_usage(b, "x", 0), 2 * M_LN2, 1e-12);
	/* a torn write */
	assert_non_null(f = fopen(path, "w"));
	fputs("{\"version\":1,\"clus", f);
	fclose(f);
	pol_credit_destroy(&b);
	b = pol_credit_create("c", H, H, 10);
	assert_int_equal(pol_credit_load_file(b, path, &err), 1);
	assert_near(pol_credit_usage(b, "x", 0), M_LN2, 1e-12);
	assert_non_null(strstr(err.text, "credit.json:"));
	assert_non_null(strstr(err.text, "credit.json.prev instead"));
	/* the main file missing: .prev too */
	unlink(path);
	assert_int_equal(pol_credit_load_file(b, path, &err), 1);
	/* both bad: nothing changes */
	assert_non_null(f = fopen(path, "w"));
	fputs("[]", f);
	fclose(f);
	assert_non_null(f = fopen(prev, "w"));
	fputs("{}", f);
	fclose(f);
	assert_int_equal(pol_credit_load_file(b, path, &err), -1);
	assert_int_equal(errno, EINVAL);
	assert_non_null(strstr(err.text, "credit.json.prev"));
	assert_near(pol_credit_usage(b, "x", 0), M_LN2, 1e-12);
	/* no state at all: the first start */
	unlink(path);
	unlink(prev);
	assert_int_equal(pol_credit_load_file(b, path, &err), -1);
	assert_int_equal(errno, ENOENT);
	rmdir(dir);
	pol_credit_destroy(&a);
	pol_credit_destroy(&b);
}

/* Usage recorded after now (the clock stepped back) decays from now on
 * once clamped, instead of staying frozen until the clock catches up. */
static void test_credit_clamp_future(void **state)
{
	pol_credit_t *l = pol_credit_create("c", H, H, 10);
	double u0;

	(void) state;
	assert_int_equal(pol_credit_charge(l, "x", 3600, 100000, NULL), 0);
	assert_int_equal(pol_credit_charge(l, "y", 3600, 1000, NULL), 0);
	u0 = pol_credit_usage(l, "x", 50000);
	/* frozen: one half-life later it still reads the same */
	assert_near(pol_credit_usage(l, "x", 50000 + 3600), u0, 1e-12);
	assert_int_equal(pol_credit_clamp_future(l, 50000), 1);
	assert_near(pol_credit_usage(l, "x", 50000), u0, 1e-12);
	assert_near(pol_credit_usage(l, "x", 50000 + 3600), u0 / 2, 1e-12);
	assert_int_equal(pol_credit_clamp_future(l, 50000), 0);
	assert_int_equal(pol_credit_clamp_future(NULL, 0), -1);
	pol_credit_destroy(&l);
}

/* Accounts idle for more than N half-lives go; a configured quota
 * stays; active accounts are untouched. */
static void test_credit_prune(void **state)
{
	pol_credit_t *l = pol_credit_create("c", H, H, 10);

	(void) state;
	assert_int_equal(pol_credit_set_quota(l, "q", 50), 0);
	assert_int_equal(pol_credit_charge(l, "old", 3600, 0, NULL), 0);
	assert_int_equal(pol_credit_charge(l, "q", 3600, 0, NULL), 0);
	assert_int_equal(pol_credit_charge(l, "new", 3600, 20 * 3600, NULL), 0);
	assert_int_equal(pol_credit_count(l), 3);
	assert_int_equal(pol_credit_prune(l, 20 * 3600, 20), 0); /* = 20 */
	assert_int_equal(pol_credit_prune(l, 21 * 3600, 20), 2);
	assert_int_equal(pol_credit_count(l), 2);
	assert_string_equal(pol_credit_account(l, 0), "new");
	assert_string_equal(pol_credit_account(l, 1), "q");
	assert_near(pol_credit_quota(l, "q"), 50, 0);
	assert_near(pol_credit_usage(l, "q", 21 * 3600), 0, 0);
	assert_near(pol_credit_usage(l, "old", 21 * 3600), 0, 0);
	assert_true(pol_credit_usage(l, "new", 21 * 3600) > 0);
	/* a charge after pruning starts afresh */
	assert_int_equal(pol_credit_charge(l, "old", 3600, 21 * 3600, NULL), 0);
	assert_near(pol_credit_usage(l, "old", 21 * 3600), M_LN2, 1e-12);
	assert_int_equal(pol_credit_prune(l, 0, 0), -1);
	assert_int_equal(errno, EINVAL);
	pol_credit_destroy(&l);
}

/* band desc, credit desc, submit asc, id asc */
static void test_credit_order(void **state)
{
	pol_credit_key_t k[] = {
		{ .band = 0, .credit = 50, .submit = 1, .id = 1, .index = 0 },
		{ .band = 1, .credit = -10, .submit = 9, .id = 2, .index = 1 },
		{ .band = 0, .credit = 80, .submit = 5, .id = 3, .index = 2 },
		{ .band = 0, .credit = 50, .submit = 0, .id = 4, .index = 3 },
		{ .band = 0, .credit = 50, .submit = 0, .id = 0, .index = 4 },
	};
	int want[] = { 1, 2, 4, 3, 0 };
	size_t i;

	(void) state;
	qsort(k, 5, sizeof(k[0]), pol_credit_key_cmp);
	for (i = 0; i < 5; i++)
		assert_int_equal(k[i].index, want[i]);
}

/* pol_credit_key_sort gives qsort's order on random keys with many ties
 * in band, credit and submit (sizes around its runs of 16 and merges). */
static void test_credit_key_sort(void **state)
{
	static const size_t sizes[] = { 0,  1,  2,   15,   16,  17,
					31, 33, 100, 1000, 4097 };
	uint64_t x = 88172645463325252ULL;
	size_t s, i;

	(void) state;
	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		size_t n = sizes[s];
		pol_credit_key_t *a = calloc(n + 1, sizeof(*a));
		pol_credit_key_t *b = calloc(n + 1, sizeof(*b));
		pol_credit_key_t *tmp = calloc(n + 1, sizeof(*tmp));

		assert_non_null(a);
		assert_non_null(b);
		assert_non_null(tmp);
		for (i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			a[i] = (pol_credit_key_t){
				.band = (int) (x % 3),
				.credit = (double) ((x >> 8) % 5) / 4.0,
				.submit = (int64_t) ((x >> 16) % 7),
				.id = (int64_t) ((x >> 24) % (n + 1)),
				.index = (int) i,
			};
		}
		memcpy(b, a, n * sizeof(*a));
		pol_credit_key_sort(a, n, tmp);
		if (n)
			qsort(b, n, sizeof(*b), pol_credit_key_cmp);
		for (i = 0; i < n; i++) {
			assert_int_equal(pol_credit_key_cmp(&a[i], &b[i]), 0);
			if (i)
				assert_true(pol_credit_key_cmp(&a[i - 1],
							       &a[i]) <= 0);
		}
		free(a);
		free(b);
		free(tmp);
	}
}

/* The interval a pass charges (pol_credit_charge_since), as a table:
 * SchedulerInterval 5 s caps at 60 s, 30 s at 300 s. */
static void test_charge_since(void **state)
{
	static const struct {
		const char *name;
		int64_t last, now;
		int interval;
		int64_t want, capped;
	} cases[] = {
		{ "first pass (or after a failover)", 0, 1000, 5, 0, 0 },
		{ "the previous pass", 990, 1000, 5, 990, 0 },
		{ "a gap of 60 s, the cap", 940, 1000, 5, 940, 0 },
		{ "a stalled controller: 60 s at most", 100, 1000, 5, 940,
		  900 },
		{ "10 passes of 30 s", 100, 1000, 30, 700, 900 },
		{ "interval 0 counts as 1 s: 60 s", 100, 1000, 0, 940, 900 },
		{ "wall clock stepped back: nothing", 2000, 1000, 5, 1000, 0 },
		{ "the same second: nothing", 1000, 1000, 5, 1000, 0 },
	};

	(void) state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		int64_t capped = -1;
		int64_t got = pol_credit_charge_since(
			cases[k].last, cases[k].now, cases[k].interval,
			&capped);

		if (got != cases[k].want || capped != cases[k].capped)
			fail_msg("%s: since %lld capped %lld", cases[k].name,
				 (long long) got, (long long) capped);
	}
	assert_int_equal(pol_credit_charge_since(100, 1000, 5, NULL), 940);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_credit_decay_hand_computed),
		cmocka_unit_test(test_credit_period_scales_usage),
		cmocka_unit_test(
			test_credit_steady_state_at_quota_is_zero_credit),
		cmocka_unit_test(test_credit_order_independent),
		cmocka_unit_test(test_credit_bad_arguments),
		cmocka_unit_test(test_credit_quotas_from_conf),
		cmocka_unit_test(test_credit_absorb_idempotent),
		cmocka_unit_test(test_credit_federated_ledgers_agree),
		cmocka_unit_test(test_credit_json_round_trip),
		cmocka_unit_test(test_credit_load_renamed_cluster),
		cmocka_unit_test(test_credit_json_bad_input),
		cmocka_unit_test(test_credit_file_round_trip),
		cmocka_unit_test(test_credit_file_prev_fallback),
		cmocka_unit_test(test_credit_clamp_future),
		cmocka_unit_test(test_credit_prune),
		cmocka_unit_test(test_credit_order),
		cmocka_unit_test(test_credit_key_sort),
		cmocka_unit_test(test_charge_since),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
