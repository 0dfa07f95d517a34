/* Unit tests of app keys (common/base/pol_app.c) and their use by the credit
 * ledger and the agora policy: one app identity everywhere. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pol_agora.h"
#include "pol_app.h"
#include "pol_credit.h"
#include "pol_policy.h"

#define H (7 * 86400.0)

static void assert_near(double got, double want, double tol)
{
	if (fabs(got - want) > tol)
		fail_msg("got %.12g, want %.12g (tol %g)", got, want, tol);
}

/* A name of n bytes: prefix, then filler up to n. */
static void long_name(char *buf, size_t n, const char *prefix, char fill)
{
	size_t k = strlen(prefix);

	memcpy(buf, prefix, k);
	memset(buf + k, fill, n - k);
	buf[n] = '\0';
}

/* Names of 1..63 bytes are their own key. */
static void test_app_key_as_is(void **state)
{
	char key[POL_APP_KEY_LEN], n63[64];

	(void) state;
	assert_int_equal(pol_app_key("vision", key), 0);
	assert_string_equal(key, "vision");
	assert_int_equal(pol_app_key("x", key), 0);
	assert_string_equal(key, "x");
	long_name(n63, 63, "", 'a');
	assert_int_equal(pol_app_key(n63, key), 0);
	assert_string_equal(key, n63);
}

/* Empty and NULL: the fixed key "(none)". */
static void test_app_key_empty(void **state)
{
	char key[POL_APP_KEY_LEN];

	(void) state;
	memset(key, 'z', sizeof(key));
	assert_int_equal(pol_app_key("", key), 1);
	assert_string_equal(key, POL_APP_NONE);
	assert_int_equal(pol_app_key(NULL, key), 1);
	assert_string_equal(key, "(none)");
}

/*
 * 64+ bytes: 46-byte prefix + '~' + 16 hex digits of the whole name's
 * hash.  Two long names sharing far more than the prefix differ; the key
 * of a key is the key itself.
 */
static void test_app_key_long(void **state)
{
	char a[200], b[200], c[65], ka[POL_APP_KEY_LEN], kb[POL_APP_KEY_LEN];
	char kc[POL_APP_KEY_LEN], kk[POL_APP_KEY_LEN], want[80];

	(void) state;
	long_name(a, 150, "team-research-", 'q');
	memcpy(b, a, sizeof(b));
	b[149] = 'r'; /* differs only in the last byte */
	assert_int_equal(pol_app_key(a, ka), 1);
	assert_int_equal(pol_app_key(b, kb), 1);
	assert_string_not_equal(ka, kb);
	assert_int_equal(strlen(ka), 63);
	assert_memory_equal(ka, a, POL_APP_PREFIX_LEN);
	assert_int_equal(ka[POL_APP_PREFIX_LEN], '~');
	snprintf(want, sizeof(want), "%.46s~%016llx", a, pol_app_hash(a));
	assert_string_equal(ka, want);
	/* exactly 64 bytes is already too long */
	long_name(c, 64, "", 'c');
	assert_int_equal(pol_app_key(c, kc), 1);
	assert_int_equal(strlen(kc), 63);
	/* idempotent */
	assert_int_equal(pol_app_key(ka, kk), 0);
	assert_string_equal(kk, ka);
	/* no collision with the empty name's key or the prefix alone */
	assert_string_not_equal(ka, POL_APP_NONE);
	assert_int_equal(pol_app_key("team-research-", kk), 0);
	assert_string_not_equal(kk, ka);
}

/* The prefix never ends inside a UTF-8 sequence. */
static void test_app_key_utf8(void **state)
{
	char name[120], key[POL_APP_KEY_LEN];

	(void) state;
	/* 45 ASCII bytes, then 2-byte characters (U+00E9) from byte 45:
	 * byte 46 is a continuation byte, the cut goes back to 45 */
	long_name(name, 45, "", 'a');
	while (strlen(name) < 100)
		strcat(name, "\xc3\xa9");
	assert_int_equal(pol_app_key(name, key), 1);
	assert_int_equal(key[45], '~');
	assert_int_equal(strlen(key), 62);
	assert_memory_equal(key, name, 45);
}

/* The ledger keys every account name: long names get separate entries
 * that every reader (by name or by key) finds. */
static void test_app_ledger_keys(void **state)
{
	pol_credit_t *l = pol_credit_create("c", H, H, 10);
	char a[120], b[120], ka[POL_APP_KEY_LEN];
	pol_credit_record_t rec;
	size_t i;

	(void) state;
	long_name(a, 100, "analytics-", 'x');
	memcpy(b, a, sizeof(b));
	b[99] = 'y';
	pol_app_key(a, ka);
	assert_int_equal(pol_credit_charge(l, a, 3600, 0, &rec), 0);
	assert_string_equal(rec.account, ka);
	assert_int_equal(pol_credit_charge(l, b, 7200, 0, NULL), 0);
	assert_int_equal(pol_credit_charge(l, "", 1800, 0, NULL), 0);
	assert_int_equal(pol_credit_count(l), 3);
	for (i = 0; i < pol_credit_count(l); i++)
		assert_true(strlen(pol_credit_account(l, i)) <= 63);
	assert_near(pol_credit_usage(l, a, 0), M_LN2, 1e-12);
	assert_near(pol_credit_usage(l, ka, 0), M_LN2, 1e-12);
	assert_near(pol_credit_usage(l, b, 0), 2 * M_LN2, 1e-12);
	assert_near(pol_credit_usage(l, "(none)", 0), M_LN2 / 2, 1e-12);
	assert_int_equal(pol_credit_set_quota(l, b, 50), 0);
	assert_near(pol_credit_quota(l, b), 50, 0);
	assert_near(pol_credit_quota(l, a), 10, 0);
	assert_int_equal(pol_credit_charge(l, NULL, 1, 0, NULL), -1);
	assert_int_equal(errno, EINVAL);
	pol_credit_destroy(&l);
}

/*
 * An AccountQuota name the agora.conf parser accepts (here 70 bytes)
 * never breaks the policy: it is created, the quota lands on the app's
 * key, and the auction charges that app's jobs to the same entry.
 */
static void test_app_long_account_quota(void **state)
{
	char name[80], text[128];
	const char *names[1];
	agora_conf_t conf;
	agora_err_t err = { { 0 } };
	pol_agora_policy_t *a;
	pol_cluster_t *c = pol_cluster_uniform(1, 8, 0);
	pol_job_t run;
	pol_alloc_part_t part = { 0, 0xff };
	pol_snapshot_t s = { c, NULL, 0, &run, 1, 1 };
	pol_actions_t out = { 0 };
	pol_credit_t *l;
	double credit = 0;

	(void) state;
	long_name(name, 70, "very-long-account-", 'n');
	snprintf(text, sizeof(text), "AccountQuota=%s:50\n", name);
	agora_conf_defaults(&conf);
	assert_int_equal(agora_conf_parse_string(text, "t.conf", &conf, &err),
			 0);
	a = pol_agora_policy_create_conf(&conf, true, "c1", NULL, &err);
	if (!a)
		fail_msg("policy not created: %s", err.text);
	l = pol_agora_policy_ledger(a);
	assert_near(pol_credit_quota(l, name), 50, 0);
	names[0] = name;
	assert_int_equal(pol_agora_policy_set_tenant_names(a, names, 1), 0);
	memset(&run, 0, sizeof(run));
	run.id = 1;
	run.total_gpus = run.min_gpus = run.max_gpus = 8;
	run.time_limit = 3600;
	run.requeueable = true;
	run.state = POL_JOB_RUNNING;
	run.alloc.parts = &part;
	run.alloc.n_parts = 1;
	c->nodes[0].free = 0;
	assert_int_equal(pol_agora_policy_decide(a, &s, 0, &out), 0);
	assert_int_equal(pol_agora_policy_decide(a, &s, 3600, &out), 0);
	/* 8 GPU-hours charged to the quota's entry: one account */
	assert_int_equal(pol_credit_count(l), 1);
	assert_near(pol_credit_usage(l, name, 3600), 8 * M_LN2, 1e-9);
	assert_int_equal(pol_agora_policy_app(a, name, NULL, &credit), 0);
	assert_near(credit, 50 - 8 * M_LN2, 1e-9);
	pol_actions_free(&out);
	pol_agora_policy_destroy(&a);
	agora_conf_free(&conf);
	pol_cluster_destroy(&c);
}

/* A pending job of tenant t asking for gpus GPUs, submitted at submit. */
static void pending_job(pol_job_t *j, int64_t id, int t, int gpus,
			int64_t submit)
{
	memset(j, 0, sizeof(*j));
	j->id = id;
	j->tenant = t;
	j->total_gpus = j->min_gpus = j->max_gpus = gpus;
	j->time_limit = 3600;
	j->submit = submit;
	j->requeueable = true;
	j->state = POL_JOB_PENDING;
}

/* A running job of tenant t on the GPUs of part (node 0). */
static void running_job(pol_job_t *j, pol_alloc_part_t *part, int64_t id, int t,
			int gpus)
{
	pending_job(j, id, t, gpus, 0);
	j->state = POL_JOB_RUNNING;
	j->alloc.parts = part;
	j->alloc.n_parts = 1;
}

/*
 * AppDefinition=array/burst/name_prefix: apps of one account share its
 * ledger entry (pol_agora_policy_set_tenant_accounts()): two array apps
 * of vc1 charge vc1, no app gets a ledger entry (fresh credit) of its
 * own, and both see vc1's credit.
 */
static void test_app_accounts(void **state)
{
	const char *names[2] = { "vc1/array:10", "vc1/array:20" };
	const char *accts[2] = { "vc1", "vc1" };
	agora_conf_t conf;
	agora_err_t err = { { 0 } };
	pol_agora_policy_t *a;
	pol_cluster_t *c = pol_cluster_uniform(1, 8, 0);
	pol_job_t run[2];
	pol_alloc_part_t part[2] = { { 0, 0x0f }, { 0, 0xf0 } };
	pol_snapshot_t s = { c, NULL, 0, run, 2, 2 };
	pol_actions_t out = { 0 };
	pol_credit_t *l;
	double c0 = 0, c1 = 0;
	int i;

	(void) state;
	agora_conf_defaults(&conf);
	assert_int_equal(agora_conf_parse_string("AccountQuota=vc1:50\n",
						 "t.conf", &conf, &err),
			 0);
	a = pol_agora_policy_create_conf(&conf, true, "c1", NULL, &err);
	if (!a)
		fail_msg("policy not created: %s", err.text);
	l = pol_agora_policy_ledger(a);
	assert_int_equal(pol_agora_policy_set_tenant_names(a, names, 2), 0);
	assert_int_equal(pol_agora_policy_set_tenant_accounts(NULL, accts, 2),
			 -1);
	assert_int_equal(pol_agora_policy_set_tenant_accounts(a, NULL, 2), -1);
	assert_int_equal(pol_agora_policy_set_tenant_accounts(a, accts, 2), 0);
	for (i = 0; i < 2; i++)
		running_job(&run[i], &part[i], i + 1, i, 4);
	c->nodes[0].free = 0;
	assert_int_equal(pol_agora_policy_decide(a, &s, 0, &out), 0);
	assert_int_equal(pol_agora_policy_decide(a, &s, 3600, &out), 0);
	/* 2 x 4 GPU-hours, all on vc1; the apps have no entry */
	assert_int_equal(pol_credit_count(l), 1);
	assert_string_equal(pol_credit_account(l, 0), "vc1");
	assert_near(pol_credit_usage(l, "vc1", 3600), 8 * M_LN2, 1e-9);
	assert_int_equal(pol_agora_policy_app(a, names[0], NULL, &c0), 0);
	assert_int_equal(pol_agora_policy_app(a, names[1], NULL, &c1), 0);
	assert_near(c0, 50 - 8 * M_LN2, 1e-9);
	assert_near(c1, c0, 0);
	pol_actions_free(&out);
	pol_agora_policy_destroy(&a);
	agora_conf_free(&conf);
	pol_cluster_destroy(&c);
}

/*
 * The one START of a pass of policy "agora-order" (credit order) through
 * the registry, the simulator's path (pol_policy_set_apps()): 1 node x 8
 * GPUs, quota 10 GPU-h.  Passes at t = 0 and 3600: app vc1#1 (tenant 0)
 * runs 8 GPUs (charged 8 GPU-hours at the second).  Pass 3 (t = 3660): it
 * ended; app vc1#2 (tenant 1, submitted at 100) and app vc2#3 (tenant 2,
 * submitted at 200) each ask for the whole node.  With accounts {vc1, vc1, vc2}, vc1#2 carries vc1's 8 GPU-hours of
 * use (a credit below 10) and vc2#3 has the full 10: job 3
 * starts.  Without accounts every app is its own account: both have 10,
 * the earlier submission wins, job 2 starts.  Returns the started id.
 */
static int64_t order_start(const char *const *accts)
{
	const char *names[3] = { "vc1#1", "vc1#2", "vc2#3" };
	agora_err_t err = { { 0 } };
	pol_policy_t *p = pol_policy_create("agora-order", "quota=10", NULL,
					    &err);
	pol_cluster_t *c = pol_cluster_uniform(1, 8, 0);
	pol_alloc_part_t part = { 0, 0xff };
	pol_job_t run, pend[2];
	pol_snapshot_t s1 = { c, NULL, 0, &run, 1, 3 };
	pol_snapshot_t s2 = { c, pend, 2, NULL, 0, 3 };
	pol_actions_t out = { 0 };
	int64_t id = -1;
	int i;

	if (!p)
		fail_msg("policy not created: %s", err.text);
	assert_int_equal(pol_policy_set_apps(p, names, accts, 3), 0);
	running_job(&run, &part, 1, 0, 8);
	c->nodes[0].free = 0;
	for (i = 0; i < 2; i++) {
		assert_int_equal(pol_policy_decide(p, &s1, 3600 * i, &out), 0);
		pol_actions_free(&out);
	}
	c->nodes[0].free = 0xff;
	pending_job(&pend[0], 2, 1, 8, 100);
	pending_job(&pend[1], 3, 2, 8, 200);
	assert_int_equal(pol_policy_decide(p, &s2, 3660, &out), 0);
	for (i = 0; i < out.n; i++)
		if (out.v[i].type == POL_ACT_START) {
			assert_int_equal(id, -1); /* one start: one node */
			id = out.v[i].job_id;
		}
	pol_actions_free(&out);
	pol_policy_destroy(&p);
	pol_cluster_destroy(&c);
	return id;
}

/*
 * pol_policy_set_apps(): the registry face of set_tenant_names() +
 * set_tenant_accounts() (agora, agora-order); ENOTSUP for a policy
 * without apps, EINVAL for bad arguments.
 */
static void test_app_registry(void **state)
{
	const char *accts[3] = { "vc1", "vc1", "vc2" };
	const char *names[1] = { "a" };
	agora_err_t err = { { 0 } };
	pol_policy_t *p;

	(void) state;
	assert_int_equal(order_start(accts), 3);
	assert_int_equal(order_start(NULL), 2);
	p = pol_policy_create("backfill", NULL, NULL, &err);
	assert_non_null(p);
	errno = 0;
	assert_int_equal(pol_policy_set_apps(p, names, NULL, 1), -1);
	assert_int_equal(errno, ENOTSUP);
	pol_policy_destroy(&p);
	p = pol_policy_create("agora", NULL, NULL, &err);
	assert_non_null(p);
	assert_int_equal(pol_policy_set_apps(p, names, NULL, 1), 0);
	errno = 0;
	assert_int_equal(pol_policy_set_apps(p, NULL, NULL, 1), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(pol_policy_set_apps(NULL, names, NULL, 1), -1);
	pol_policy_destroy(&p);
}

/*
 * Whether job 4 (4 GPUs, 10 h) starts in a pass of "agora" (est=limit,
 * f=0.9: the auction serves the one worst app; params extra) at t = 1000
 * on 2 nodes x 8 GPUs, each half held until 3600 (node 0) and 7200 (node
 * 1) by tenant 0.  Pending, in credit order (fresh credit everywhere: by
 * submit, then id): job 2 (tenant 1, 8 GPUs on one node, 10 h, submitted
 * at 0), job 3 (tenant 2, a gang of 2 x 8 GPUs, 1 min, submitted at 0:
 * the worst rho, 6.9 against job 2's 0.52 and job 4's 1.02), job 4
 * (tenant 3, submitted at 1000).  No lease is due: the auction offers the
 * 8 free GPUs to job 3's app, which cannot use them.  The leftover pass
 * reserves for one job that does not fit: by credit order job 2, on node 0
 * (free at 3600, the soonest); job 4, ending after that, fits on node 1:
 * it starts.  drain_rho=1: job 3, of the worst-rho app, on both nodes
 * (shadow 7200): job 4 would hold node 1 past it and does not start.
 */
static bool drain_starts_job4_with(pol_policy_t *p, pol_agora_policy_t *a)
{
	pol_cluster_t *c = pol_cluster_uniform(2, 8, 0);
	pol_alloc_part_t part[2] = { { 0, 0x0f }, { 1, 0x0f } };
	pol_job_t run[2], pend[3];
	pol_snapshot_t s = { c, pend, 3, run, 2, 4 };
	pol_actions_t out = { 0 };
	bool started = false;
	int i;

	for (i = 0; i < 2; i++) {
		running_job(&run[i], &part[i], 10 + i, 0, 4);
		run[i].time_limit = 3600 * (i + 1);
		c->nodes[i].free = 0xf0;
	}
	pending_job(&pend[0], 2, 1, 8, 0);
	pend[0].time_limit = 36000;
	pending_job(&pend[1], 3, 2, 16, 0);
	pend[1].nodes = 2;
	pend[1].gpus_per_node = 8;
	pend[1].time_limit = 60;
	pending_job(&pend[2], 4, 3, 4, 1000);
	pend[2].time_limit = 36000;
	assert_int_equal(p ? pol_policy_decide(p, &s, 1000, &out)
			   : pol_agora_policy_decide(a, &s, 1000, &out),
			 0);
	for (i = 0; i < out.n; i++) {
		assert_int_equal(out.v[i].type, POL_ACT_START);
		assert_int_equal(out.v[i].job_id, 4);
		started = true;
	}
	pol_actions_free(&out);
	pol_cluster_destroy(&c);
	return started;
}

static bool drain_starts_job4(const char *extra)
{
	char params[128];
	agora_err_t err = { { 0 } };
	pol_policy_t *p;
	bool started;

	snprintf(params, sizeof(params), "est=limit,f=0.9%s", extra);
	p = pol_policy_create("agora", params, NULL, &err);
	if (!p)
		fail_msg("policy not created: %s", err.text);
	started = drain_starts_job4_with(p, NULL);
	pol_policy_destroy(&p);
	return started;
}

/* The same through agora.conf (site_factor/agora's path):
 * ReserveForWorstApp is the policy's drain_rho. */
static bool drain_starts_job4_conf(const char *conf_text)
{
	agora_conf_t conf;
	agora_err_t err = { { 0 } };
	pol_agora_policy_t *a;
	bool started;

	agora_conf_defaults(&conf);
	assert_int_equal(
		agora_conf_parse_string(conf_text, "t.conf", &conf, &err), 0);
	a = pol_agora_policy_create_conf(&conf, true, "c1", NULL, &err);
	if (!a)
		fail_msg("policy not created: %s", err.text);
	started = drain_starts_job4_with(NULL, a);
	pol_agora_policy_destroy(&a);
	agora_conf_free(&conf);
	return started;
}

/* drain_rho: the leftover pass reserves for Themis' worst-off app. */
static void test_app_drain_worst(void **state)
{
	(void) state;
	assert_true(drain_starts_job4(""));
	assert_false(drain_starts_job4(",drain_rho=1"));
	assert_true(drain_starts_job4_conf("FairnessKnob=0.9\n"));
	assert_false(drain_starts_job4_conf("FairnessKnob=0.9\n"
					    "ReserveForWorstApp=yes\n"));
}

/*
 * left_rho: the leftover pass by the apps' rho, worst first.  Two nodes of
 * 8 GPUs; node 0 has 4 free (job 10 holds the rest, job 11 all of node 1).
 * Pending at 1000: job 2 (tenant 1, 4 GPUs, submitted at sub2 = 0, limit
 * 10 h: rho about 1.03), job 3 (tenant 2, a 2x8 gang, submitted at sub3,
 * limit 60 s: the worst rho, it cannot fit) and job 4 (tenant 3, 4 GPUs, submitted at 500,
 * limit 600 s: rho about 1.83).  The auction offers the free GPUs to job
 * 3's app only (f=0.9), which cannot use them; no reservation (drain=0).
 * The credit is the same for all, so the credit order is by submission:
 * job 2 starts.  By rho, job 4 does.  pre4: job 4's preemptions so far
 * (a requeued job).  The started job's id, or 0.
 */
static int64_t leftover_pass(const char *extra, int64_t sub2, int64_t sub3,
			     int pre4)
{
	pol_cluster_t *c = pol_cluster_uniform(2, 8, 0);
	pol_alloc_part_t part[2] = { { 0, 0x0f }, { 1, 0xff } };
	pol_job_t run[2], pend[3];
	pol_snapshot_t s = { c, pend, 3, run, 2, 4 };
	pol_actions_t out = { 0 };
	agora_err_t err = { { 0 } };
	char params[128];
	pol_policy_t *p;
	int64_t started = 0;
	int i;

	snprintf(params, sizeof(params), "est=limit,f=0.9,drain=0%s", extra);
	p = pol_policy_create("agora", params, NULL, &err);
	if (!p)
		fail_msg("policy not created: %s", err.text);
	running_job(&run[0], &part[0], 10, 0, 4);
	running_job(&run[1], &part[1], 11, 0, 8);
	c->nodes[0].free = 0xf0;
	c->nodes[1].free = 0;
	pending_job(&pend[0], 2, 1, 4, sub2);
	pend[0].time_limit = 36000;
	pending_job(&pend[1], 3, 2, 16, sub3);
	pend[1].nodes = 2;
	pend[1].gpus_per_node = 8;
	pend[1].time_limit = 60;
	pending_job(&pend[2], 4, 3, 4, 500);
	pend[2].time_limit = 600;
	pend[2].preemptions = pre4;
	assert_int_equal(pol_policy_decide(p, &s, 1000, &out), 0);
	for (i = 0; i < out.n; i++) {
		assert_int_equal(out.v[i].type, POL_ACT_START);
		assert_int_equal(started, 0);
		started = out.v[i].job_id;
		/* on the free half of node 0 */
		assert_int_equal(out.v[i].alloc.n_parts, 1);
		assert_int_equal(out.v[i].alloc.parts[0].node, 0);
		assert_int_equal(out.v[i].alloc.parts[0].gpus, 0xf0);
	}
	pol_actions_free(&out);
	pol_policy_destroy(&p);
	pol_cluster_destroy(&c);
	return started;
}

static int64_t leftover_start(const char *extra)
{
	return leftover_pass(extra, 0, 0, 0);
}

static void test_app_leftover_rho(void **state)
{
	(void) state;
	assert_int_equal(leftover_start(""), 2);
	assert_int_equal(leftover_start(",left_rho=1"), 4);
}

/*
 * left_bf: the leftover pass as Slurm's backfill plan, a reservation for
 * every job it tests.  The setup of leftover_pass, but in credit order
 * the gang (job 3, submitted at 0) comes first, then job 2 (submitted at
 * 100, limit 10 h), then job 4 (limit 600 s); both running jobs end at
 * their limit, 3600.  Without a reservation (drain=0) job 2 takes the 4
 * free GPUs.  Slurm's plan reserves both nodes for the gang from 3600:
 * job 2 would run into that and waits, job 4 ends at 1600 and starts.
 */
static void test_app_leftover_bf(void **state)
{
	(void) state;
	assert_int_equal(leftover_pass("", 100, 0, 0), 2);
	assert_int_equal(leftover_pass(",left_bf=1", 100, 0, 0), 4);
}

/*
 * left_back: the leftover pass takes requeued jobs first.  The setup of
 * leftover_pass: in credit order job 2 takes the 4 free GPUs, also when
 * job 4 was requeued by a preemption; with left_back=1 the requeued job 4
 * starts, and without a requeue the order stays the credit order.
 */
static void test_app_leftover_back(void **state)
{
	(void) state;
	assert_int_equal(leftover_pass("", 0, 0, 1), 2);
	assert_int_equal(leftover_pass(",left_back=1", 0, 0, 1), 4);
	assert_int_equal(leftover_pass(",left_back=1", 0, 0, 0), 2);
	/* with left_rho too: the requeued job first, rho after */
	assert_int_equal(leftover_pass(",left_back=1,left_rho=1", 0, 0, 0), 4);
}

/*
 * AppDefinition=name_prefix: 300 passes, each with one new app (a user
 * renaming jobs) of account vc1.  The ledger has one entry (no app mints
 * credit), idle apps are pruned (p0 is gone, the last two are known), and
 * a pruned app that comes back is an app again.
 */
static void test_app_prune(void **state)
{
	const char *acct[1] = { "vc1" };
	agora_conf_t conf;
	agora_err_t err = { { 0 } };
	pol_agora_policy_t *a;
	pol_cluster_t *c = pol_cluster_uniform(1, 8, 0);
	pol_job_t run;
	pol_alloc_part_t part = { 0, 0xff };
	pol_snapshot_t s = { c, NULL, 0, &run, 1, 1 };
	pol_actions_t out = { 0 };
	char name[32];
	const char *names[1] = { name };
	int i;

	(void) state;
	agora_conf_defaults(&conf);
	a = pol_agora_policy_create_conf(&conf, true, "c1", NULL, &err);
	if (!a)
		fail_msg("policy not created: %s", err.text);
	running_job(&run, &part, 1, 0, 8);
	c->nodes[0].free = 0;
	for (i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "vc1/p%d", i);
		run.id = i + 1;
		assert_int_equal(pol_agora_policy_set_tenant_names(a, names, 1),
				 0);
		assert_int_equal(
			pol_agora_policy_set_tenant_accounts(a, acct, 1), 0);
		assert_int_equal(pol_agora_policy_decide(a, &s, 60 * i, &out),
				 0);
		pol_actions_free(&out);
	}
	assert_int_equal(pol_credit_count(pol_agora_policy_ledger(a)), 1);
	assert_int_equal(pol_agora_policy_app(a, "vc1/p0", NULL, NULL), -1);
	assert_int_equal(pol_agora_policy_app(a, "vc1/p299", NULL, NULL), 0);
	assert_int_equal(pol_agora_policy_app(a, "vc1/p298", NULL, NULL), 0);
	snprintf(name, sizeof(name), "vc1/p0");
	assert_int_equal(pol_agora_policy_set_tenant_names(a, names, 1), 0);
	assert_int_equal(pol_agora_policy_decide(a, &s, 60 * 300, &out), 0);
	pol_actions_free(&out);
	assert_int_equal(pol_agora_policy_app(a, "vc1/p0", NULL, NULL), 0);
	pol_agora_policy_destroy(&a);
	agora_conf_free(&conf);
	pol_cluster_destroy(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_app_key_as_is),
		cmocka_unit_test(test_app_leftover_rho),
		cmocka_unit_test(test_app_leftover_bf),
		cmocka_unit_test(test_app_leftover_back),
		cmocka_unit_test(test_app_key_empty),
		cmocka_unit_test(test_app_key_long),
		cmocka_unit_test(test_app_key_utf8),
		cmocka_unit_test(test_app_ledger_keys),
		cmocka_unit_test(test_app_long_account_quota),
		cmocka_unit_test(test_app_accounts),
		cmocka_unit_test(test_app_prune),
		cmocka_unit_test(test_app_registry),
		cmocka_unit_test(test_app_drain_worst),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
