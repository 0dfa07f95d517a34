/*
 * test_pol_estimate.c - run-time estimates: the recent-k mean of the most
 * specific group, the cap by the time limit, the attained-service
 * fallback, the fall back to the app's credit account (issue 17: a new
 * burst app starts with its account's history), the text state (round
 * trip, merge, errors by line and field).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agora_conf.h"
#include "pol_agora.h"
#include "pol_estimate.h"
#include "agora_fixture.h"

static const pol_est_key_t alice8 = { "vision", "alice", "resnet", 8, NULL };
static const pol_est_key_t alice1 = { "vision", "alice", "resnet", 1, NULL };
static const pol_est_key_t alice_bert = { "vision", "alice", "bert", 8, NULL };
static const pol_est_key_t bob8 = { "vision", "bob", "resnet", 8, NULL };

static pol_est_t *make(int k, int64_t prior)
{
	pol_est_params_t p;
	pol_est_t *e;

	pol_est_params_default(&p);
	p.k = k;
	p.prior_s = prior;
	e = pol_est_create(&p);
	assert_non_null(e);
	return e;
}

static void test_recent_k_mean(void **state)
{
	pol_est_t *e = make(2, 3600);
	double mean;
	int n;

	(void) state;
	assert_int_equal(pol_est_history(e, &alice8, &mean, &n), -1);
	assert_int_equal(n, 0);
	assert_int_equal(pol_est_record(e, &alice8, 1000, 100), 1);
	assert_int_equal(pol_est_history(e, &alice8, &mean, &n), 0);
	assert_int_equal(n, 1);
	assert_true(mean == 1000);
	assert_int_equal(pol_est_record(e, &alice8, 3000, 200), 1);
	assert_int_equal(pol_est_record(e, &alice8, 5000, 300), 1);
	/* the two most recent: (3000 + 5000) / 2 */
	assert_int_equal(pol_est_history(e, &alice8, &mean, &n), 0);
	assert_int_equal(n, 2);
	assert_true(mean == 4000);
	/* an older sample than the two kept changes nothing, nor a repeat */
	assert_int_equal(pol_est_record(e, &alice8, 9000, 50), 0);
	assert_int_equal(pol_est_record(e, &alice8, 5000, 300), 0);
	assert_int_equal(pol_est_history(e, &alice8, &mean, &n), 0);
	assert_true(mean == 4000);
	/* remaining: the mean less the service so far */
	assert_int_equal(pol_est_remaining(e, &alice8, 0, 1500, NULL), 2500);
	pol_est_destroy(&e);
	assert_null(e);
}

static void test_levels(void **state)
{
	pol_est_t *e = make(2, 3600);
	double mean;
	int n;

	(void) state;
	assert_int_equal(pol_est_record(e, &alice8, 1000, 100), 1);
	assert_int_equal(pol_est_record(e, &alice1, 200, 110), 1);
	assert_int_equal(pol_est_record(e, &alice_bert, 7000, 120), 1);
	/* same name and GPUs: level 0 */
	assert_int_equal(pol_est_history(e, &alice8, &mean, &n), 0);
	assert_true(mean == 1000);
	/* same name, other GPU count: level 1, both resnet samples */
	{
		pol_est_key_t k4 = alice8;

		k4.gpus = 4;
		assert_int_equal(pol_est_history(e, &k4, &mean, &n), 1);
		assert_true(mean == 600);
	}
	/* another name: level 2, the user's two most recent jobs */
	{
		pol_est_key_t gpt = { "vision", "alice", "gpt", 8, NULL };

		assert_int_equal(pol_est_history(e, &gpt, &mean, &n), 2);
		assert_int_equal(n, 2);
		assert_true(mean == (200 + 7000) / 2.0);
	}
	/* another user: nothing */
	assert_int_equal(pol_est_history(e, &bob8, &mean, &n), -1);
	pol_est_destroy(&e);
}

/*
 * Apps that are bursts of an account ("vision#1", "vision#7"): a sample of
 * one is kept as its app's and as its account's, so a burst without
 * history of its own is priced by the account's recent jobs (levels 3-5),
 * and a key of app = account (AppDefinition=account, or the plugin's
 * seed) finds them at level 0.  The saved state keeps both as plain
 * records.
 */
static void test_account_fallback(void **state)
{
	const pol_est_key_t b1 = { "vision#1", "alice", NULL, 8, "vision" };
	const pol_est_key_t b7 = { "vision#7", "alice", NULL, 8, "vision" };
	const pol_est_key_t b7_4 = { "vision#7", "alice", NULL, 4, "vision" };
	const pol_est_key_t acct = { "vision", "alice", NULL, 8, "vision" };
	const pol_est_key_t other = { "nlp#7", "alice", NULL, 8, "nlp" };
	pol_est_t *e = make(2, 3600), *back = make(2, 3600);
	agora_err_t err = { { 0 } };
	double mean;
	char *text;
	int n;

	(void) state;
	assert_int_equal(pol_est_record(e, &b1, 1000, 100), 1);
	assert_int_equal(pol_est_record(e, &b1, 1000, 100), 0); /* repeat */
	/* its own app: level 0 */
	assert_int_equal(pol_est_history(e, &b1, &mean, &n), 0);
	assert_true(mean == 1000);
	/* a new burst of the account: the account's, same GPUs (level 3),
	 * other GPUs (level 4: the account's jobs of that user) */
	assert_int_equal(pol_est_history(e, &b7, &mean, &n), 3);
	assert_int_equal(n, 1);
	assert_true(mean == 1000);
	assert_int_equal(pol_est_history(e, &b7_4, &mean, &n), 4);
	assert_true(mean == 1000);
	/* the account as the app (account = app: no second lookup) */
	assert_int_equal(pol_est_history(e, &acct, &mean, &n), 0);
	/* another account's burst: nothing */
	assert_int_equal(pol_est_history(e, &other, &mean, &n), -1);
	/* once the new burst has history of its own, that comes first */
	assert_int_equal(pol_est_record(e, &b7, 300, 200), 1);
	assert_int_equal(pol_est_history(e, &b7, &mean, &n), 0);
	assert_true(mean == 300);
	/* the account's: both bursts' samples, (1000 + 300) / 2 */
	assert_int_equal(pol_est_history(e, &acct, &mean, &n), 0);
	assert_int_equal(n, 2);
	assert_true(mean == 650);
	/* a key of app = account records once */
	assert_int_equal(pol_est_record(e, &acct, 500, 300), 1);
	/* kept: one per burst, the account's newest two */
	assert_int_equal(pol_est_samples(e), 4);
	/* round trip: the same answers */
	text = pol_est_save(e);
	assert_non_null(text);
	assert_int_equal(pol_est_load(back, text, "s", &err), 0);
	assert_int_equal(pol_est_samples(back), 4);
	assert_int_equal(pol_est_history(back, &b1, &mean, &n), 0);
	assert_true(mean == 1000);
	{
		const pol_est_key_t b9 = { "vision#9", "alice", NULL, 8,
					   "vision" };

		assert_int_equal(pol_est_history(back, &b9, &mean, &n), 3);
		assert_true(mean == 400); /* (300 + 500) / 2 */
	}
	free(text);
	pol_est_destroy(&back);
	/* the history itself has no cap (the policy's est_acct=1 has): an
	 * account whose recent jobs ran longer than the prior prices too */
	{
		const pol_est_key_t l1 = { "long#1", "bob", NULL, 8, "long" };
		const pol_est_key_t l2 = { "long#2", "bob", NULL, 8, "long" };

		assert_int_equal(pol_est_record(e, &l1, 7200, 400), 1);
		assert_int_equal(pol_est_history(e, &l2, &mean, &n), 3);
		assert_true(mean == 7200);
		assert_int_equal(pol_est_remaining(e, &l2, 0, 0, NULL), 7200);
	}
	pol_est_destroy(&e);
}

static void test_limit_cap(void **state)
{
	pol_est_t *e = make(2, 3600);
	pol_est_source_t src;

	(void) state;
	assert_int_equal(pol_est_record(e, &alice8, 10000, 100), 1);
	assert_int_equal(pol_est_record(e, &alice8, 20000, 200), 1);
	/* history says 15000; the job asked for 4000: 4000 - 1000 */
	assert_int_equal(pol_est_remaining(e, &alice8, 4000, 1000, &src), 3000);
	assert_int_equal(src, POL_EST_LIMIT);
	/* a limit above the history does not raise it */
	assert_int_equal(pol_est_remaining(e, &alice8, 604800, 1000, &src),
			 14000);
	assert_int_equal(src, POL_EST_HISTORY);
	/* at or past the limit: 1 s */
	assert_int_equal(pol_est_remaining(e, &alice8, 4000, 5000, &src), 1);
	assert_int_equal(src, POL_EST_LIMIT);
	pol_est_destroy(&e);
}

static void test_fallback(void **state)
{
	pol_est_t *e = make(2, 600);
	pol_est_source_t src;

	(void) state;
	/* no history: max(attained, prior) */
	assert_int_equal(pol_est_remaining(e, &bob8, 0, 0, &src), 600);
	assert_int_equal(src, POL_EST_SERVICE);
	assert_int_equal(pol_est_remaining(e, &bob8, 0, 100, &src), 600);
	assert_int_equal(pol_est_remaining(e, &bob8, 0, 5000, &src), 5000);
	assert_int_equal(src, POL_EST_SERVICE);
	/* the longer it ran, the longer it looks */
	assert_true(pol_est_remaining(e, &bob8, 0, 9000, NULL) >
		    pol_est_remaining(e, &bob8, 0, 5000, NULL));
	/* ...but never past the limit */
	assert_int_equal(pol_est_remaining(e, &bob8, 7000, 5000, &src), 2000);
	assert_int_equal(src, POL_EST_LIMIT);
	/* a job that outran its history falls back too */
	assert_int_equal(pol_est_record(e, &bob8, 1000, 10), 1);
	assert_int_equal(pol_est_remaining(e, &bob8, 0, 400, &src), 600);
	assert_int_equal(src, POL_EST_HISTORY);
	assert_int_equal(pol_est_remaining(e, &bob8, 0, 3000, &src), 3000);
	assert_int_equal(src, POL_EST_SERVICE);
	pol_est_destroy(&e);
}

static void test_bad_args(void **state)
{
	pol_est_params_t p;
	pol_est_t *e = make(2, 600);

	(void) state;
	pol_est_params_default(&p);
	p.k = 0;
	errno = 0;
	assert_null(pol_est_create(&p));
	assert_int_equal(errno, EINVAL);
	p.k = POL_EST_MAX_K + 1;
	assert_null(pol_est_create(&p));
	pol_est_params_default(&p);
	p.prior_s = 0;
	assert_null(pol_est_create(&p));
	assert_int_equal(pol_est_record(e, &alice8, -1, 10), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(pol_est_record(NULL, &alice8, 1, 10), -1);
	assert_int_equal(pol_est_record(e, NULL, 1, 10), -1);
	assert_int_equal(pol_est_samples(e), 0);
	pol_est_destroy(&e);
	pol_est_destroy(NULL);
}

static void test_round_trip(void **state)
{
	pol_est_t *e = make(2, 600), *f = make(2, 600);
	pol_est_key_t odd = { "team a", "-", "job\nname%", 0, NULL };
	char *t1, *t2;
	agora_err_t err = { { 0 } };
	double m1, m2;
	int n1, n2;

	(void) state;
	assert_int_equal(pol_est_record(e, &alice8, 1000, 100), 1);
	assert_int_equal(pol_est_record(e, &alice8, 3000, 200), 1);
	assert_int_equal(pol_est_record(e, &alice8, 5000, 300), 1);
	assert_int_equal(pol_est_record(e, &alice_bert, 70, 150), 1);
	assert_int_equal(pol_est_record(e, &odd, 42, 160), 1);
	t1 = pol_est_save(e);
	assert_non_null(t1);
	/* names are escaped: nothing can add a line or a field */
	assert_non_null(
		strstr(t1, "job team%20a %2D job%0Aname%25 0 160 42\n"));
	assert_int_equal(pol_est_load(f, t1, "est", &err), 0);
	t2 = pol_est_save(f);
	assert_non_null(t2);
	assert_string_equal(t1, t2);
	/* the same answers, at every level */
	pol_est_history(e, &alice8, &m1, &n1);
	pol_est_history(f, &alice8, &m2, &n2);
	assert_true(m1 == m2 && n1 == n2 && m1 == 4000);
	{
		pol_est_key_t gpt = { "vision", "alice", "gpt", 8, NULL };

		assert_int_equal(pol_est_history(e, &gpt, &m1, &n1), 2);
		assert_int_equal(pol_est_history(f, &gpt, &m2, &n2), 2);
		assert_true(m1 == m2 && n1 == n2);
	}
	assert_int_equal(pol_est_history(f, &odd, &m2, &n2), 0);
	assert_true(m2 == 42);
	free(t1);
	free(t2);
	pol_est_destroy(&e);
	pol_est_destroy(&f);
}

static void test_merge(void **state)
{
	pol_est_t *a = make(2, 600), *b = make(2, 600), *ab, *ba;
	char *s1, *s2;

	(void) state;
	assert_int_equal(pol_est_record(a, &alice8, 1000, 100), 1);
	assert_int_equal(pol_est_record(a, &alice8, 3000, 300), 1);
	assert_int_equal(pol_est_record(b, &alice8, 2000, 200), 1);
	assert_int_equal(pol_est_record(b, &alice8, 4000, 400), 1);
	assert_int_equal(pol_est_record(b, &bob8, 10, 50), 1);
	ab = make(2, 600);
	ba = make(2, 600);
	assert_int_equal(pol_est_merge(ab, a), 0);
	assert_int_equal(pol_est_merge(ab, b), 0);
	assert_int_equal(pol_est_merge(ab, b), 0); /* idempotent */
	assert_int_equal(pol_est_merge(ba, b), 0);
	assert_int_equal(pol_est_merge(ba, a), 0);
	s1 = pol_est_save(ab);
	s2 = pol_est_save(ba);
	assert_string_equal(s1, s2); /* commutative */
	/* alice: the newest two of all four */
	assert_non_null(strstr(s1, "job vision alice resnet 8 300 3000\n"
				   "job vision alice resnet 8 400 4000\n"));
	assert_null(strstr(s1, " 100 1000"));
	assert_int_equal(pol_est_samples(ab), 3);
	free(s1);
	free(s2);
	pol_est_destroy(&a);
	pol_est_destroy(&b);
	pol_est_destroy(&ab);
	pol_est_destroy(&ba);
}

/* load text into a fresh state; returns the error text (static) or NULL */
static const char *load_err(const char *text)
{
	static agora_err_t err;
	pol_est_t *e = make(2, 600);
	int rc;

	memset(&err, 0, sizeof(err));
	errno = 0;
	rc = pol_est_load(e, text, "/var/spool/agora_estimates.txt", &err);
	if (rc == 0) {
		pol_est_destroy(&e);
		return NULL;
	}
	assert_int_equal(errno, EINVAL);
	/* nothing of a bad file is kept */
	assert_int_equal(pol_est_groups(e), 0);
	pol_est_destroy(&e);
	return err.text;
}

static void test_bad_text(void **state)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "", "agora_estimates.txt:1: header:" },
		{ "agora-estimates 2\n", ":1: header:" },
		{ "# c\nagora-estimates 1\njob a u n 8 100 1000\nfoo a u n 8 100 1\n",
		  ":4: record: expected 'job'" },
		{ "agora-estimates 1\njob a u n 8 100\n",
		  ":2: run: expected 7 fields" },
		{ "agora-estimates 1\njob a u n x8 100 5\n", ":2: gpus: 'x8'" },
		{ "agora-estimates 1\njob a u n 8 1e3 5\n", ":2: end: '1e3'" },
		{ "agora-estimates 1\n\njob a u n 8 100 -5\n",
		  ":3: run: '-5'" },
		{ "agora-estimates 1\njob a u%2 n 8 100 5\n",
		  ":2: user: 'u%2': bad %XX escape" },
		{ "agora-estimates 1\njob a%41 u n 8 100 5\n",
		  ":2: app: 'a%41': an escaped byte that needs no escape" },
		{ "agora-estimates 1\njob a u n;rm 8 100 5\n",
		  ":2: name: 'n;rm': a byte that must be escaped" },
		{ "agora-estimates 1\njob a u n 8 100 5 extra\n",
		  ":2: record: expected 7 fields" },
	};
	size_t i;

	(void) state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *why = load_err(cases[i].text);

		if (!why || !strstr(why, cases[i].want))
			fail_msg("case %zu: got '%s', want '%s'", i,
				 why ? why : "(loaded)", cases[i].want);
	}
	/* and a good one with comments, blanks and CRLF loads */
	assert_null(load_err("# saved\r\n\r\nagora-estimates 1\r\n"
			     "job a u - 8 100 5\r\n"));
}

static void test_bounded(void **state)
{
	pol_est_params_t p;
	pol_est_t *e;
	int i;

	(void) state;
	pol_est_params_default(&p);
	p.max_groups = 30;
	e = pol_est_create(&p);
	assert_non_null(e);
	for (i = 0; i < 100; i++) {
		char name[16];
		pol_est_key_t k = { "a", "u", name, 1, NULL };

		snprintf(name, sizeof(name), "j%d", i);
		assert_int_equal(pol_est_record(e, &k, 10 + i, 1000 + i), 1);
		assert_true(pol_est_groups(e) <= 30);
	}
	/* the newest job's group survives */
	{
		pol_est_key_t k = { "a", "u", "j99", 1, NULL };
		double mean;
		int n;

		assert_int_equal(pol_est_history(e, &k, &mean, &n), 0);
		assert_true(mean == 109);
	}
	pol_est_destroy(&e);
}

/* An 8-GPU job of tenant 0 ("t0", uid 0) running on node 0 since start. */
static pol_job_t running8(int64_t id, int64_t start, int64_t now,
			  pol_alloc_part_t *part)
{
	pol_job_t j;

	memset(&j, 0, sizeof(j));
	j.id = id;
	j.total_gpus = j.min_gpus = j.max_gpus = 8;
	j.time_limit = 604800;
	j.dataset = -1;
	j.requeueable = true;
	j.state = POL_JOB_RUNNING;
	j.start = start;
	j.submit = start;
	j.attained = 8 * (now - start);
	j.remaining = -1;
	part->node = 0;
	part->gpus = 0xff;
	j.alloc.parts = part;
	j.alloc.n_parts = 1;
	return j;
}

/* one pass of a with job j running (or nothing, j NULL) */
static void pass(pol_agora_policy_t *a, pol_cluster_t *c, pol_job_t *run,
		 int n_run, pol_job_t *pend, int n_pend, int64_t now)
{
	pol_snapshot_t s = { c, pend, n_pend, run, n_run, 1 };
	pol_actions_t out = { 0 };

	c->nodes[0].free = n_run ? 0 : 0xff;
	assert_int_equal(pol_agora_policy_decide(a, &s, now, &out), 0);
	pol_actions_free(&out);
}

/* The simulator's "agora" learns a job's run time when it leaves the
 * running set without coming back as pending; a requeue is no sample. */
static void test_agora_learns_from_passes(void **state)
{
	agora_err_t err = { { 0 } };
	pol_cluster_t *c = pol_cluster_uniform(1, 8, 0);
	pol_agora_policy_t *a = pol_agora_ops.create(NULL, NULL, &err);
	pol_est_key_t k = { "t0", "0", NULL, 8, NULL };
	pol_alloc_part_t part;
	pol_job_t j;
	double mean;
	int n;

	(void) state;
	assert_non_null(c);
	assert_non_null(a);
	assert_non_null(pol_agora_policy_estimates(a));
	j = running8(1, 0, 100, &part);
	pass(a, c, &j, 1, NULL, 0, 100);
	assert_int_equal(pol_est_samples(pol_agora_policy_estimates(a)), 0);
	/* gone at 400: it ran 100 s of service plus 300 s since */
	pass(a, c, NULL, 0, NULL, 0, 400);
	assert_int_equal(
		pol_est_history(pol_agora_policy_estimates(a), &k, &mean, &n),
		0);
	assert_int_equal(n, 1);
	assert_true(mean == 400);
	/* job 2 runs, then is pending again (requeued): not an end */
	j = running8(2, 500, 600, &part);
	pass(a, c, &j, 1, NULL, 0, 600);
	j.state = POL_JOB_PENDING;
	j.alloc.n_parts = 0;
	j.alloc.parts = NULL;
	pass(a, c, NULL, 0, &j, 1, 700);
	assert_int_equal(pol_est_samples(pol_agora_policy_estimates(a)), 1);
	pol_agora_policy_destroy(&a);
	/* est=limit keeps no history */
	a = pol_agora_ops.create("est=limit", NULL, &err);
	assert_non_null(a);
	assert_null(pol_agora_policy_estimates(a));
	pol_agora_policy_destroy(&a);
	/* a bad mode is named */
	assert_null(pol_agora_ops.create("f=0.8,est=oracle", NULL, &err));
	assert_non_null(strstr(err.text,
			       "est: 'oracle' is not limit, hist or service"));
	pol_cluster_destroy(&c);
}

/* one pass with n_ten tenants; the rho of tenant t afterwards */
static double pass_rho(pol_agora_policy_t *a, pol_cluster_t *c, pol_job_t *run,
		       int n_run, pol_job_t *pend, int n_pend, int n_ten,
		       int64_t now, int t)
{
	pol_snapshot_t s = { c, pend, n_pend, run, n_run, n_ten };
	pol_actions_t out = { 0 };
	double rho = -1;

	c->nodes[0].free = n_run ? 0 : 0xff;
	assert_int_equal(pol_agora_policy_decide(a, &s, now, &out), 0);
	pol_actions_free(&out);
	if (t >= 0)
		assert_int_equal(pol_agora_policy_tenant(a, t, &rho, NULL), 0);
	return rho;
}

/*
 * The rho of a waiting burst: app t0 (names[0], of account accts[0]) ran
 * one 8-GPU job of run_s seconds; then app "other" holds the node and
 * app 1 (names[1], accts[1]) waits 600 s with an 8-GPU job.
 */
static double burst_rho(const char *params, const char *const *names,
			const char *const *accts, int64_t run_s)
{
	agora_err_t err = { { 0 } };
	pol_cluster_t *c = pol_cluster_uniform(1, 8, 0);
	pol_agora_policy_t *a = pol_agora_ops.create(params, NULL, &err);
	pol_est_key_t k = { names[0], "0", NULL, 8, NULL };
	pol_est_key_t k2 = { names[1], "0", NULL, 8, accts[1] };
	pol_alloc_part_t part, part3;
	pol_job_t j1, j2, j3;
	double rho, mean;
	int n;

	assert_non_null(c);
	assert_non_null(a);
	assert_int_equal(pol_agora_policy_set_tenant_names(a, names, 3), 0);
	assert_int_equal(pol_agora_policy_set_tenant_accounts(a, accts, 3), 0);
	j1 = running8(1, 0, 100, &part);
	pass_rho(a, c, &j1, 1, NULL, 0, 3, 100, -1);
	pass_rho(a, c, NULL, 0, NULL, 0, 3, run_s, -1);
	/* kept as the app's and as its account's */
	assert_int_equal(
		pol_est_history(pol_agora_policy_estimates(a), &k, &mean, &n),
		0);
	assert_true(mean == (double) run_s);
	k.app = accts[0];
	assert_int_equal(
		pol_est_history(pol_agora_policy_estimates(a), &k, &mean, &n),
		0);
	assert_int_equal(
		pol_est_history(pol_agora_policy_estimates(a), &k2, &mean, &n),
		strcmp(accts[0], accts[1]) ? -1 : 3);
	j3 = running8(3, run_s, run_s + 600, &part3);
	j3.tenant = 2;
	j2 = fx_job(2, 1, 8, run_s, 604800);
	rho = pass_rho(a, c, &j3, 1, &j2, 1, 3, run_s + 600, 1);
	pol_agora_policy_destroy(&a);
	pol_cluster_destroy(&c);
	return rho;
}

/*
 * Issue 17: with apps = bursts of an account (the simulator's --app
 * burst, AppDefinition=burst), a new burst has no history of its own: a
 * 400-s job is priced at the 4-h prior, so its rho hardly grows while it
 * waits.  Every sample is kept as its account's too; with est_acct=1 the
 * account's earlier burst prices it where that is shorter than the prior
 * (2: always), and by default (0) nothing changes.
 */
static void test_agora_burst_uses_account_history(void **state)
{
	const char *same[] = { "acct#1", "acct#2", "other" };
	const char *same_acct[] = { "acct", "acct", "other" };
	const char *other[] = { "acct#1", "zzz#2", "other" };
	const char *other_acct[] = { "acct", "zzz", "other" };
	double mine, none, dflt, long1, long_none, long2;

	(void) state;
	/* after 400 s: acct#2 priced by acct#1's 400 s, zzz#2 and (by
	 * default) acct#2 by the 4-h prior: rho 2.0 against 0.54 */
	mine = burst_rho("est_acct=1", same, same_acct, 400);
	none = burst_rho("est_acct=1", other, other_acct, 400);
	dflt = burst_rho(NULL, same, same_acct, 400);
	assert_true(mine > 1.9);
	assert_true(none < 0.6);
	assert_true(dflt == none);
	/* after a 5-h job: longer than the prior, so est_acct=1 prices by the
	 * prior as without history; est_acct=2 by the 5 h (a lower rho) */
	long1 = burst_rho("est_acct=1", same, same_acct, 18000);
	long_none = burst_rho("est_acct=1", other, other_acct, 18000);
	long2 = burst_rho("est_acct=2", same, same_acct, 18000);
	assert_true(long1 == long_none);
	assert_true(long2 < long_none);
	/* a bad value is named */
	{
		agora_err_t err = { { 0 } };

		assert_null(pol_agora_ops.create("est_acct=3", NULL, &err));
		assert_non_null(strstr(err.text, "est_acct 0..2"));
	}
}

/* The plugin's policy keeps a history but does not learn from its
 * snapshots (a requeued job is not pending for Slurm's credential
 * window): the adapter records completed jobs itself. */
static void test_agora_conf_records_only(void **state)
{
	agora_err_t err = { { 0 } };
	agora_conf_t conf;
	pol_cluster_t *c = pol_cluster_uniform(1, 8, 0);
	pol_agora_policy_t *a;
	pol_alloc_part_t part;
	pol_job_t j;

	(void) state;
	agora_conf_defaults(&conf);
	a = pol_agora_policy_create_conf(&conf, true, "c1", NULL, &err);
	assert_non_null(a);
	assert_non_null(pol_agora_policy_estimates(a));
	j = running8(1, 0, 100, &part);
	pass(a, c, &j, 1, NULL, 0, 100);
	pass(a, c, NULL, 0, NULL, 0, 400);
	assert_int_equal(pol_est_samples(pol_agora_policy_estimates(a)), 0);
	pol_agora_policy_destroy(&a);
	pol_cluster_destroy(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_recent_k_mean),
		cmocka_unit_test(test_levels),
		cmocka_unit_test(test_account_fallback),
		cmocka_unit_test(test_limit_cap),
		cmocka_unit_test(test_fallback),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_bad_text),
		cmocka_unit_test(test_bounded),
		cmocka_unit_test(test_agora_learns_from_passes),
		cmocka_unit_test(test_agora_burst_uses_account_history),
		cmocka_unit_test(test_agora_conf_records_only),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
