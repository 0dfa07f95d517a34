/* Unit tests of the agora and agora-order policies (common/policy/pol_agora.c);
 * bad and random input: test_agora_input.c. */
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
#include "pol_ckpt.h"
#include "pol_policy.h"
#include "agora_fixture.h"

#define job(id, tenant, gpus, submit)   fx_job(id, tenant, gpus, submit, 3600)
#define run_on(c, j, part, mask, start) fx_run_at(c, j, part, 0, mask, start)
#define run_at                          fx_run_at
#define find                            fx_find

/* agora-order: the tenant with more credit goes first even if it
 * submitted later; with equal credit, submit order. */
static void test_agora_order_by_credit(void **state)
{
	agora_err_t err = { { 0 } };
	pol_cluster_t *c = pol_cluster_uniform(1, 8, 0);
	pol_policy_t *p = pol_policy_create("agora-order", "quota=100", NULL,
					    &err);
	pol_job_t pend[2] = { job(1, 0, 8, 0), job(2, 1, 8, 10) };
	pol_snapshot_t s = { c, pend, 2, NULL, 0, 2 };
	pol_actions_t out = { 0 };

	(void) state;
	assert_non_null(c);
	assert_non_null(p);
	/* equal credit: job 1 (earlier) starts */
	assert_int_equal(pol_policy_decide(p, &s, 100, &out), 0);
	assert_non_null(find(&out, POL_ACT_START, 1));
	assert_null(find(&out, POL_ACT_START, 2));
	pol_actions_free(&out);
	pol_policy_destroy(&p);

	/* tenant 0 has spent its credit: job 2 goes first */
	{
		agora_conf_t conf;
		pol_agora_policy_t *a;
		const char *names[] = { "vision", "nlp" };

		agora_conf_defaults(&conf);
		a = pol_agora_policy_create_conf(&conf, false, "c1", NULL,
						 &err);
		assert_non_null(a);
		assert_int_equal(pol_agora_policy_set_tenant_names(a, names, 2),
				 0);
		assert_int_equal(pol_credit_charge(pol_agora_policy_ledger(a),
						   "vision", 3600.0 * 500, 50,
						   NULL),
				 0);
		assert_true(
			pol_credit_get(pol_agora_policy_ledger(a), "vision",
				       100) <
			pol_credit_get(pol_agora_policy_ledger(a), "nlp", 100));
		assert_int_equal(pol_agora_policy_decide(a, &s, 100, &out), 0);
		assert_non_null(find(&out, POL_ACT_START, 2));
		assert_null(find(&out, POL_ACT_START, 1));
		assert_null(pol_agora_policy_leases(a));
		pol_actions_free(&out);
		pol_agora_policy_destroy(&a);
		assert_null(a);
		agora_conf_free(&conf);
	}
	pol_cluster_destroy(&c);
}

/* The adapter's snapshot sits at one address every pass, so a cluster
 * that grew (a node added to an auction partition) arrives through the
 * same pointer.  The auction's scratch maps follow its shape: they used
 * to be rebuilt only when the pointer changed, and every later pass
 * failed (EINVAL) until a reconfigure. */
static void test_agora_cluster_resized_in_place(void **state)
{
	/* agora-order and backfill: Slurm's backfill plan, which kept its
	 * own free maps and per-node cache by the cluster's address too */
	static const char *const pols[] = { "agora", "agora-order",
					    "backfill" };

	(void) state;
	for (size_t k = 0; k < sizeof(pols) / sizeof(pols[0]); k++) {
		agora_err_t err = { { 0 } };
		pol_cluster_t *c = pol_cluster_uniform(2, 8, 0);
		pol_cluster_t *c4 = pol_cluster_uniform(4, 8, 0), tmp;
		pol_policy_t *p = pol_policy_create(pols[k], NULL, NULL, &err);
		pol_job_t pend[1] = { job(1, 0, 8, 0) };
		pol_job_t pend2[2] = { job(2, 0, 8, 150), job(4, 0, 1, 160) };
		pol_job_t run4[4];
		pol_alloc_part_t parts[4];
		pol_snapshot_t s = { c, pend, 1, NULL, 0, 2 };
		pol_actions_t out = { 0 };

		assert_non_null(p);
		assert_int_equal(pol_policy_decide(p, &s, 100, &out), 0);
		assert_non_null(find(&out, POL_ACT_START, 1));
		pol_actions_free(&out);
		tmp = *c; /* the same struct, now 4 nodes, all busy: the
			   * head waits, and its reservation is planned */
		*c = *c4;
		*c4 = tmp;
		for (int n = 0; n < 4; n++) {
			run4[n] = job(10 + n, 1, 8, 0);
			run_at(c, &run4[n], &parts[n], n, 0xff, 120);
		}
		s.pending = pend2;
		s.n_pending = 2;
		s.running = run4;
		s.n_running = 4;
		assert_int_equal(pol_policy_decide(p, &s, 200, &out), 0);
		assert_null(find(&out, POL_ACT_START, 2));
		pol_actions_free(&out);
		for (int n = 0; n < 4; n++)
			c->nodes[n].free = 0xff;
		tmp = *c; /* and back to 2, idle */
		*c = *c4;
		*c4 = tmp;
		s.pending = pend;
		s.n_pending = 1;
		s.running = NULL;
		s.n_running = 0;
		pend[0] = job(3, 0, 8, 250);
		assert_int_equal(pol_policy_decide(p, &s, 300, &out), 0);
		assert_non_null(find(&out, POL_ACT_START, 3));
		pol_actions_free(&out);
		pol_policy_destroy(&p);
		pol_cluster_destroy(&c);
		pol_cluster_destroy(&c4);
	}
}

/* A minimum lease of many leases is reached in one step: the grid's
 * end used to advance one lease per loop turn (1e11 turns here). */
static void test_agora_min_lease_many_leases(void **state)
{
	agora_err_t err = { { 0 } };
	pol_cluster_t *c = pol_cluster_uniform(1, 8, 0);
	pol_policy_t *p = pol_policy_create("agora", "lease=10,min_lease=1e12",
					    NULL, &err);
	pol_job_t pend[1] = { job(1, 0, 8, 0) };
	pol_snapshot_t s = { c, pend, 1, NULL, 0, 1 };
	pol_actions_t out = { 0 };

	(void) state;
	assert_non_null(p);
	assert_int_equal(pol_policy_decide(p, &s, 100, &out), 0);
	assert_non_null(find(&out, POL_ACT_START, 1));
	pol_actions_free(&out);
	pol_policy_destroy(&p);
	pol_cluster_destroy(&c);
}

/* Running jobs are charged to their account between passes. */
static void test_agora_charges_running_jobs(void **state)
{
	agora_err_t err = { { 0 } };
	agora_conf_t conf;
	pol_cluster_t *c = pol_cluster_uniform(1, 8, 0);
	pol_job_t run[1] = { job(1, 0, 4, 0) };
	pol_alloc_part_t part;
	pol_snapshot_t s = { c, NULL, 0, run, 1, 1 };
	pol_actions_t out = { 0 };
	pol_agora_policy_t *a;
	double u;

	(void) state;
	agora_conf_defaults(&conf);
	a = pol_agora_policy_create_conf(&conf, true, "c1", NULL, &err);
	run_on(c, &run[0], &part, 0x0f, 0);
	/* first pass charges nothing (restart rule), the second 4 GPUs x
	 * 1000 s */
	assert_int_equal(pol_agora_policy_decide(a, &s, 500, &out), 0);
	assert_true(pol_credit_usage(pol_agora_policy_ledger(a), "t0", 500) ==
		    0);
	/* the running job got a lease, aligned to the 600 s grid */
	assert_non_null(pol_lease_get(pol_agora_policy_leases(a), 1));
	assert_int_equal(pol_lease_get(pol_agora_policy_leases(a), 1)->end,
			 600);
	assert_int_equal(pol_agora_policy_decide(a, &s, 1500, &out), 0);
	u = pol_credit_usage(pol_agora_policy_ledger(a), "t0", 1500);
	/* ln2 * P/H = ln2 with P = H = 1 week */
	assert_true(fabs(u - 4000.0 / 3600 * M_LN2) < 1e-9);
	/* expired at 600, nobody else wants GPUs: renewed to the grid */
	assert_int_equal(pol_lease_get(pol_agora_policy_leases(a), 1)->end,
			 1800);
	pol_actions_free(&out);
	pol_agora_policy_destroy(&a);
	agora_conf_free(&conf);
	pol_cluster_destroy(&c);
}

/*
 * The lease cycle: tenant 0 holds the node, tenant 1 waits.  When the
 * lease runs out tenant 1 (worst rho) wins the auction; tenant 0 keeps
 * running for the grace time and is then requeued; tenant 1 starts as
 * soon as the GPUs are free.
 */
static void test_agora_lease_expiry_requeues_after_grace(void **state)
{
	agora_err_t err = { { 0 } };
	pol_cluster_t *c = pol_cluster_uniform(1, 8, 0);
	/* unsaved=1: job 1 saves nothing, and may lose its run (else it
	 * would keep its GPUs: test_agora_unsaved_kept) */
	pol_policy_t *p = pol_policy_create(
		"agora", "lease=600,grace=60,f=0.8,unsaved=1", NULL, &err);
	pol_job_t run[1] = { job(1, 0, 8, 0) };
	pol_job_t pend[2] = { job(2, 1, 8, 10) };
	pol_alloc_part_t part;
	pol_snapshot_t s = { c, pend, 1, run, 1, 2 };
	pol_actions_t out = { 0 };

	(void) state;
	assert_non_null(p);
	run_on(c, &run[0], &part, 0xff, 0);
	/* t=100: lease until 600, nothing free */
	assert_int_equal(pol_policy_decide(p, &s, 100, &out), 0);
	assert_int_equal(out.n, 0);
	assert_int_equal(out.wakeup, 600);
	pol_actions_clear(&out);
	/* t=600: the auction; job 2 wins and waits for the grace */
	assert_int_equal(pol_policy_decide(p, &s, 600, &out), 0);
	assert_non_null(find(&out, POL_ACT_HOLD, 2));
	assert_null(find(&out, POL_ACT_PREEMPT, 1));
	assert_int_equal(out.wakeup, 660);
	pol_actions_clear(&out);
	/* t=660: grace over: requeue job 1 */
	assert_int_equal(pol_policy_decide(p, &s, 660, &out), 0);
	assert_non_null(find(&out, POL_ACT_PREEMPT, 1));
	assert_null(find(&out, POL_ACT_START, 2));
	assert_int_equal(out.wakeup, 661);
	pol_actions_clear(&out);
	/* t=661: job 1 is pending again, the GPUs are free: the winner
	 * starts first */
	c->nodes[0].free = 0xff;
	run[0].state = POL_JOB_PENDING;
	run[0].alloc.n_parts = 0;
	run[0].alloc.parts = NULL;
	run[0].attained = 8 * 660;
	pend[1] = run[0];
	s.n_pending = 2;
	s.n_running = 0;
	assert_int_equal(pol_policy_decide(p, &s, 661, &out), 0);
	assert_non_null(find(&out, POL_ACT_START, 2));
	assert_null(find(&out, POL_ACT_START, 1));
	pol_actions_free(&out);
	pol_policy_destroy(&p);
	pol_cluster_destroy(&c);
}

/* A job that may not be requeued keeps its GPUs; nobody loses GPUs that
 * no winner needs. */
static void test_agora_no_needless_requeue(void **state)
{
	agora_err_t err = { { 0 } };
	pol_cluster_t *c = pol_cluster_uniform(1, 8, 0);
	pol_policy_t *p = pol_policy_create("agora", "grace=0,unsaved=1", NULL,
					    &err);
	pol_job_t run[2] = { job(1, 0, 4, 0), job(3, 2, 4, 0) };
	pol_job_t pend[1] = { job(2, 1, 4, 10) };
	pol_alloc_part_t part[2];
	pol_snapshot_t s = { c, pend, 1, run, 2, 3 };
	pol_actions_t out = { 0 };
	int i, pre = 0;

	(void) state;
	run_on(c, &run[0], &part[0], 0x0f, 0);
	run_on(c, &run[1], &part[1], 0xf0, 0);
	part[1].gpus = 0xf0;
	run[0].requeueable = false;
	assert_int_equal(pol_policy_decide(p, &s, 100, &out), 0);
	pol_actions_clear(&out);
	assert_int_equal(pol_policy_decide(p, &s, 600, &out), 0);
	/* job 2 needs 4 GPUs: only job 3 (requeueable) can give them, and
	 * with grace 0 it is requeued now; job 1 never */
	assert_null(find(&out, POL_ACT_PREEMPT, 1));
	assert_non_null(find(&out, POL_ACT_PREEMPT, 3));
	for (i = 0; i < out.n; i++)
		pre += out.v[i].type == POL_ACT_PREEMPT;
	assert_int_equal(pre, 1);
	pol_actions_free(&out);
	pol_policy_destroy(&p);
	pol_cluster_destroy(&c);
}

/* A reconfigure carries leases and the charge clock over. */
static void test_agora_carry_keeps_leases(void **state)
{
	agora_err_t err = { { 0 } };
	agora_conf_t conf;
	pol_cluster_t *c = pol_cluster_uniform(1, 8, 0);
	pol_job_t run[1] = { job(1, 0, 8, 0) };
	pol_alloc_part_t part;
	pol_snapshot_t s = { c, NULL, 0, run, 1, 1 };
	pol_actions_t out = { 0 };
	pol_agora_policy_t *old, *nw;
	char *json = NULL;

	(void) state;
	agora_conf_defaults(&conf);
	old = pol_agora_policy_create_conf(&conf, true, "c1", NULL, &err);
	nw = pol_agora_policy_create_conf(&conf, true, "c1", NULL, &err);
	run_on(c, &run[0], &part, 0xff, 0);
	assert_int_equal(pol_agora_policy_decide(old, &s, 100, &out), 0);
	assert_int_equal(pol_agora_policy_decide(old, &s, 200, &out), 0);
	assert_int_equal(pol_credit_save(pol_agora_policy_ledger(old), &json),
			 0);
	assert_int_equal(pol_credit_load(pol_agora_policy_ledger(nw), json,
					 "carry", &err),
			 0);
	assert_int_equal(pol_agora_policy_carry(nw, old), 0);
	pol_agora_policy_destroy(&old);
	assert_int_equal(pol_lease_get(pol_agora_policy_leases(nw), 1)->end,
			 600);
	/* charged from 200 on, not from scratch and not skipped */
	assert_int_equal(pol_agora_policy_decide(nw, &s, 300, &out), 0);
	assert_true(
		fabs(pol_credit_usage(pol_agora_policy_ledger(nw), "t0", 300) -
		     8 * 200.0 / 3600 * M_LN2) < 1e-4);
	assert_int_equal(pol_agora_policy_carry(nw, nw), -1);
	free(json);
	pol_actions_free(&out);
	pol_agora_policy_destroy(&nw);
	agora_conf_free(&conf);
	pol_cluster_destroy(&c);
}

/* Make j run on node n, GPUs mask, since start; marks them busy. */
/* A restart: leases saved by the adapter come back exactly (active and
 * in grace), the next pass keeps them, and bad leases are refused. */
static void test_agora_restore_lease(void **state)
{
	agora_err_t err = { { 0 } };
	agora_conf_t conf;
	pol_cluster_t *c = pol_cluster_uniform(2, 8, 0);
	pol_job_t run[2] = { job(1, 0, 8, 0), job(2, 1, 8, 0) };
	pol_alloc_part_t part[2];
	pol_snapshot_t s = { c, NULL, 0, run, 2, 2 };
	pol_actions_t out = { 0 };
	pol_agora_policy_t *a;
	pol_lease_t act = { 1, 8, 100, 700, 0, POL_LEASE_ACTIVE };
	pol_lease_t gr = { 2, 8, 100, 700, 730, POL_LEASE_GRACE };
	pol_lease_t bad = { 3, 8, 700, 100, 0, POL_LEASE_ACTIVE };
	const pol_lease_t *l;

	(void) state;
	agora_conf_defaults(&conf);
	a = pol_agora_policy_create_conf(&conf, true, "c1", NULL, &err);
	assert_non_null(a);
	run_at(c, &run[0], &part[0], 0, 0xff, 100);
	run_at(c, &run[1], &part[1], 1, 0xff, 100);
	assert_int_equal(pol_agora_policy_restore_lease(a, &act), 0);
	assert_int_equal(pol_agora_policy_restore_lease(a, &gr), 0);
	assert_int_equal(pol_agora_policy_restore_lease(a, &bad), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(pol_agora_policy_restore_lease(NULL, &act), -1);
	/* a pass before the lease end changes nothing */
	assert_int_equal(pol_agora_policy_decide(a, &s, 200, &out), 0);
	l = pol_lease_get(pol_agora_policy_leases(a), 1);
	assert_non_null(l);
	assert_int_equal(l->end, 700);
	assert_int_equal(l->state, POL_LEASE_ACTIVE);
	l = pol_lease_get(pol_agora_policy_leases(a), 2);
	assert_non_null(l);
	assert_int_equal(l->state, POL_LEASE_GRACE);
	assert_int_equal(l->requeue_at, 730);
	assert_null(find(&out, POL_ACT_PREEMPT, 1));
	pol_actions_free(&out);
	pol_agora_policy_destroy(&a);
	agora_conf_free(&conf);
	pol_cluster_destroy(&c);
}

static int start_node(const pol_actions_t *out, int64_t id)
{
	const pol_action_t *a = find(out, POL_ACT_START, id);

	return a && a->alloc.n_parts == 1 ? a->alloc.parts[0].node : -1;
}

/*
 * Victims: a 4-GPU winner needs a whole node of a 2 x 4 cluster.  Node 0
 * holds one 4-GPU job, node 1 two 2-GPU jobs, all with expired leases.
 * victims=1 (default): the smallest jobs go (3 and 4, which restart
 * anywhere); victims=0: credit order, ties by id (job 1).
 */
static void test_agora_victims_smallest_first(void **state)
{
	static const char *const params[] = { "grace=0,every=0",
					      "grace=0,every=0,victims=0" };
	int v;

	(void) state;
	for (v = 0; v < 2; v++) {
		agora_err_t err = { { 0 } };
		pol_cluster_t *c = pol_cluster_uniform(2, 4, 0);
		pol_policy_t *p = pol_policy_create("agora", params[v], NULL,
						    &err);
		pol_job_t run[3] = { job(1, 0, 4, 0), job(3, 2, 2, 0),
				     job(4, 2, 2, 0) };
		pol_job_t pend[1] = { job(2, 1, 4, 10) };
		pol_alloc_part_t part[3];
		pol_snapshot_t s = { c, pend, 1, run, 3, 3 };
		pol_actions_t out = { 0 };

		assert_non_null(p);
		run_at(c, &run[0], &part[0], 0, 0x0f, 0);
		run_at(c, &run[1], &part[1], 1, 0x03, 0);
		run_at(c, &run[2], &part[2], 1, 0x0c, 0);
		/* no work is lost (losers by work lost come first: that
		 * is test_agora_ckpt.c) */
		run[0].ckpt_s = run[1].ckpt_s = run[2].ckpt_s =
			POL_CKPT_CONTINUOUS;
		assert_int_equal(pol_policy_decide(p, &s, 100, &out), 0);
		pol_actions_clear(&out);
		assert_int_equal(pol_policy_decide(p, &s, 600, &out), 0);
		if (v == 0) {
			assert_null(find(&out, POL_ACT_PREEMPT, 1));
			assert_non_null(find(&out, POL_ACT_PREEMPT, 3));
			assert_non_null(find(&out, POL_ACT_PREEMPT, 4));
		} else {
			assert_non_null(find(&out, POL_ACT_PREEMPT, 1));
			assert_null(find(&out, POL_ACT_PREEMPT, 3));
			assert_null(find(&out, POL_ACT_PREEMPT, 4));
		}
		assert_non_null(find(&out, POL_ACT_HOLD, 2));
		pol_actions_free(&out);
		pol_policy_destroy(&p);
		pol_cluster_destroy(&c);
	}
}

/*
 * lose_young: a 4-GPU winner needs one node of a 2 x 4 cluster; node 0
 * holds job 1, node 1 job 3, both 4 GPUs of tenant 0, leases expired,
 * nothing to lose.  Job 1 has attained 100 h of service (an earlier run
 * and this one), job 3 10 minutes.  By default GPUs and credit tie and
 * the lower id goes (job 1, the long one); with lose_young=1 the least
 * served goes (job 3).  limit1: job 1's time limit (job 3's is 1 h).  The
 * victim's id, 0 if none.
 */
static int64_t least_served_victim(const char *params, int64_t limit1)
{
	agora_err_t err = { { 0 } };
	pol_cluster_t *c = pol_cluster_uniform(2, 4, 0);
	pol_policy_t *p = pol_policy_create("agora", params, NULL, &err);
	pol_job_t run[2] = { job(1, 0, 4, 0), job(3, 0, 4, 0) };
	pol_job_t pend[1] = { job(2, 1, 4, 10) };
	pol_alloc_part_t part[2];
	pol_snapshot_t s = { c, pend, 1, run, 2, 2 };
	pol_actions_t out = { 0 };
	int64_t victim = 0;
	int i;

	assert_non_null(p);
	run_at(c, &run[0], &part[0], 0, 0x0f, 0);
	run_at(c, &run[1], &part[1], 1, 0x0f, 0);
	run[0].ckpt_s = run[1].ckpt_s = POL_CKPT_CONTINUOUS;
	run[0].attained = 4 * 100 * 3600;
	run[1].attained = 4 * 600;
	run[0].time_limit = limit1;
	assert_int_equal(pol_policy_decide(p, &s, 100, &out), 0);
	pol_actions_clear(&out);
	assert_int_equal(pol_policy_decide(p, &s, 600, &out), 0);
	for (i = 0; i < out.n; i++)
		if (out.v[i].type == POL_ACT_PREEMPT) {
			assert_int_equal(victim, 0); /* one victim */
			victim = out.v[i].job_id;
		}
	/* the winner waits for its loser's GPUs */
	if (victim)
		assert_non_null(find(&out, POL_ACT_HOLD, 2));
	pol_actions_free(&out);
	pol_policy_destroy(&p);
	pol_cluster_destroy(&c);
	return victim;
}

static void test_agora_victims_least_served(void **state)
{
	(void) state;
	assert_int_equal(least_served_victim("grace=0,every=0", 3600), 1);
	assert_int_equal(
		least_served_victim("grace=0,every=0,lose_young=1", 3600), 3);
}

/*
 * keep_long: a job whose time limit is keep_long or more (or unlimited)
 * is never a loser.  The setup of least_served_victim: job 1 (limit
 * limit1) goes by default; with keep_long=2h and a limit of 200 h it is
 * kept and job 3 (limit 1 h) goes; with a limit under 2 h it goes again;
 * with keep_long=1h both are kept and nobody is preempted; an unlimited
 * job 1 (limit 0) is kept.
 */
static void test_agora_victims_keep_long(void **state)
{
	(void) state;
	assert_int_equal(least_served_victim("grace=0,every=0", 200 * 3600), 1);
	assert_int_equal(least_served_victim("grace=0,every=0,keep_long=7200",
					     200 * 3600),
			 3);
	assert_int_equal(
		least_served_victim("grace=0,every=0,keep_long=7200", 7199), 1);
	assert_int_equal(
		least_served_victim("grace=0,every=0,keep_long=3600", 3600), 0);
	assert_int_equal(
		least_served_victim("grace=0,every=0,keep_long=7200", 0), 3);
}

/*
 * The leftover pass's reservation (drain=1, default).  2 x 4 GPUs: node
 * 0 has 1 GPU free and 3 that free up at t=1000 (limit), node 1 has 2
 * free and 2 busy until t=100000.  Job 1 (4 GPUs, first in order) does
 * not fit and reserves node 0 (it can start there at 1000).  Job 2 (1
 * GPU, ends at 3700 > 1000) must not take node 0's free GPU: it goes to
 * node 1; job 3 (ends at 700 <= 1000) may (best fit: node 0).  With
 * drain=0 job 2 takes node 0 (best fit).
 */
static void test_agora_leftover_drain(void **state)
{
	int v;

	(void) state;
	for (v = 0; v < 2; v++) {
		agora_err_t err = { { 0 } };
		pol_cluster_t *c = pol_cluster_uniform(2, 4, 0);
		pol_policy_t *p = pol_policy_create(
			"agora", v == 0 ? "drain=1" : "drain=0", NULL, &err);
		pol_job_t run[2] = { job(10, 0, 3, 0), job(11, 0, 2, 0) };
		pol_job_t pend[3] = { job(1, 1, 4, -100000), job(2, 2, 1, 50),
				      job(3, 2, 1, 99) };
		pol_alloc_part_t part[2];
		pol_snapshot_t s = { c, pend, 3, run, 2, 3 };
		pol_actions_t out = { 0 };

		assert_non_null(p);
		run[0].time_limit = 1000;
		run[1].time_limit = 100000;
		pend[2].time_limit = 600;
		run_at(c, &run[0], &part[0], 0, 0x07, 0);
		run_at(c, &run[1], &part[1], 1, 0x03, 0);
		assert_int_equal(pol_policy_decide(p, &s, 100, &out), 0);
		assert_null(find(&out, POL_ACT_START, 1));
		if (v == 0) {
			assert_int_equal(start_node(&out, 2), 1);
			assert_int_equal(start_node(&out, 3), 0);
		} else {
			assert_int_equal(start_node(&out, 2), 0);
			assert_int_equal(start_node(&out, 3), 1);
		}
		pol_actions_free(&out);
		pol_policy_destroy(&p);
		pol_cluster_destroy(&c);
	}
}

/*
 * With bid_skip=1 a gang at the head of the worst-off app does not empty
 * its bid: 2 x 8 GPUs, 1 free (node 1).  App 0 has job 1
 * (16 GPUs, waited 1000 s for a 60-s run: rho about 6) and job 2 (1 GPU,
 * submitted at 500); app 1 has job 3 (1 GPU, limit 10 h: rho about 1.03).
 * f=0.8 offers the free GPU to app 0 alone.  Its bid passes over job 1,
 * which the offer cannot hold, and wins the GPU for job 2.  With
 * bid_skip=0 the bid stops at job 1 and is empty, and the leftover pass
 * (credit tie, submit order) gives the GPU to job 3 of the better-off app:
 * on 2017-11-20 a 967-job sweep waited a day behind four 8-GPU jobs of
 * its own this way (doc/evaluation.md, "Robustness").
 */
static bool head_gang_run(const char *params, int64_t *started)
{
	agora_err_t err = { { 0 } };
	pol_cluster_t *c = pol_cluster_uniform(2, 8, 0);
	pol_policy_t *p = pol_policy_create("agora", params, NULL, &err);
	pol_job_t run[2] = { fx_job(10, 2, 8, 0, 100000),
			     fx_job(11, 2, 7, 0, 100000) };
	pol_job_t pend[3] = { fx_job(1, 0, 16, 0, 60),
			      fx_job(2, 0, 1, 500, 600),
			      fx_job(3, 1, 1, 0, 36000) };
	pol_alloc_part_t part[2];
	pol_snapshot_t s = { c, pend, 3, run, 2, 3 };
	pol_actions_t out = { 0 };
	int i, n = 0;

	if (!p)
		fail_msg("policy not created: %s", err.text);
	run_at(c, &run[0], &part[0], 0, 0xff, 0);
	run_at(c, &run[1], &part[1], 1, 0x7f, 0);
	assert_int_equal(pol_policy_decide(p, &s, 1000, &out), 0);
	*started = -1;
	for (i = 0; i < out.n; i++)
		if (out.v[i].type == POL_ACT_START) {
			*started = out.v[i].job_id;
			n++;
		}
	pol_actions_free(&out);
	pol_policy_destroy(&p);
	pol_cluster_destroy(&c);
	return n == 1;
}

static void test_agora_bid_passes_head_gang(void **state)
{
	int64_t id;

	(void) state;
	assert_true(head_gang_run("est=limit,drain=0,bid_skip=1", &id));
	assert_int_equal(id, 2);
	/* the default: the bid stops at the gang */
	assert_true(head_gang_run("est=limit,drain=0", &id));
	assert_int_equal(id, 3);
	assert_true(head_gang_run("est=limit,drain=0,bid_skip=0", &id));
	assert_int_equal(id, 3);
}

/*
 * Per-app history follows the app's NAME, not its tenant index.  1 x 8
 * GPUs; alpha runs 2 GPUs from t=0, beta 6 GPUs from t=1000; at t=2000
 * alpha has drained.  The adapter numbers tenants by first appearance,
 * so beta becomes tenant 0 (alpha's old index).  Beta's contention
 * average must be its own: (area(2000) - area(1000)) / 1000 = 2, not
 * alpha's area(2000) / 2000 = 1.5; its rho (which scales with that
 * average once demand x n_avg exceeds the cluster) must equal that of a
 * reference run where beta kept index 1 throughout.
 */
static void test_agora_history_by_name(void **state)
{
	static const char *const both[] = { "alpha", "beta" };
	static const char *const only_alpha[] = { "alpha" };
	static const char *const only_beta[] = { "beta" };
	agora_err_t err = { { 0 } };
	agora_conf_t conf;
	pol_agora_policy_t *sh, *ref;
	double rho_sh = 0, rho_ref = 0, rho_app = 0, cr_sh = 0, cr_ref = 0;
	int v;

	(void) state;
	agora_conf_defaults(&conf);
	sh = pol_agora_policy_create_conf(&conf, true, "c1", NULL, &err);
	ref = pol_agora_policy_create_conf(&conf, true, "c1", NULL, &err);
	assert_non_null(sh);
	assert_non_null(ref);
	for (v = 0; v < 2; v++) {
		pol_agora_policy_t *a = v ? ref : sh;
		pol_cluster_t *c = pol_cluster_uniform(1, 8, 0);
		pol_job_t run[2] = { job(1, 0, 2, 0), job(2, 1, 6, 1000) };
		pol_alloc_part_t part[2];
		pol_snapshot_t s = { c, NULL, 0, run, 1, 1 };
		pol_actions_t out = { 0 };

		run_on(c, &run[0], &part[0], 0x03, 0);
		run_on(c, &run[1], &part[1], 0xfc, 1000);
		assert_int_equal(
			pol_agora_policy_set_tenant_names(a, only_alpha, 1), 0);
		assert_int_equal(pol_agora_policy_decide(a, &s, 0, &out), 0);
		assert_int_equal(pol_agora_policy_set_tenant_names(a, both, 2),
				 0);
		s.n_running = 2;
		s.n_tenants = 2;
		assert_int_equal(pol_agora_policy_decide(a, &s, 1000, &out), 0);
		/* alpha drained */
		run[0] = run[1];
		s.running = v ? &run[1] : &run[0];
		s.n_running = 1;
		if (!v) {
			run[0].tenant = 0;
			s.n_tenants = 1;
			assert_int_equal(pol_agora_policy_set_tenant_names(
						 a, only_beta, 1),
					 0);
		}
		assert_int_equal(pol_agora_policy_decide(a, &s, 2000, &out), 0);
		pol_actions_free(&out);
		pol_cluster_destroy(&c);
	}
	assert_int_equal(pol_agora_policy_tenant(sh, 0, &rho_sh, &cr_sh), 0);
	assert_int_equal(pol_agora_policy_tenant(ref, 1, &rho_ref, &cr_ref), 0);
	/* beta's job: T_id = 3600 s x (6 GPUs x n_avg 2 / 8 GPUs = 1.5);
	 * 1000 s waited/run + 3600 s left: rho = 4600 / 5400 (with
	 * alpha's history n_avg would be 1.5: rho = 4600 / 4050) */
	assert_true(fabs(rho_ref - 4600.0 / 5400.0) < 1e-9);
	assert_true(fabs(rho_sh - rho_ref) < 1e-12);
	assert_true(fabs(cr_sh - cr_ref) < 1e-12);
	/* by name: the same numbers; the drained app has rho 1 */
	assert_int_equal(pol_agora_policy_app(sh, "beta", &rho_app, NULL), 0);
	assert_true(fabs(rho_app - rho_ref) < 1e-12);
	assert_int_equal(pol_agora_policy_app(sh, "alpha", &rho_app, NULL), 0);
	assert_true(rho_app == 1.0);
	assert_int_equal(pol_agora_policy_app(sh, "gamma", NULL, NULL), -1);
	assert_int_equal(errno, ENOENT);
	assert_int_equal(pol_agora_policy_tenant(sh, 5, NULL, NULL), -1);
	pol_agora_policy_destroy(&sh);
	pol_agora_policy_destroy(&ref);
	agora_conf_free(&conf);
}

/*
 * A reconfigure carries the app table: an app's history survives into
 * the new policy under its name.
 */
static void test_agora_carry_keeps_apps(void **state)
{
	static const char *const names[] = { "vision" };
	agora_err_t err = { { 0 } };
	agora_conf_t conf;
	pol_cluster_t *c = pol_cluster_uniform(1, 8, 0);
	pol_job_t run[1] = { job(1, 0, 8, 0) };
	pol_alloc_part_t part;
	pol_snapshot_t s = { c, NULL, 0, run, 1, 1 };
	pol_actions_t out = { 0 };
	pol_agora_policy_t *old, *nw, *fresh;
	double r_nw = 0, r_fresh = 0;

	(void) state;
	agora_conf_defaults(&conf);
	old = pol_agora_policy_create_conf(&conf, true, "c1", NULL, &err);
	nw = pol_agora_policy_create_conf(&conf, true, "c1", NULL, &err);
	fresh = pol_agora_policy_create_conf(&conf, true, "c1", NULL, &err);
	run_on(c, &run[0], &part, 0xff, 0);
	assert_int_equal(pol_agora_policy_set_tenant_names(old, names, 1), 0);
	assert_int_equal(pol_agora_policy_set_tenant_names(fresh, names, 1), 0);
	assert_int_equal(pol_agora_policy_decide(old, &s, 100, &out), 0);
	assert_int_equal(pol_agora_policy_carry(nw, old), 0);
	assert_int_equal(pol_agora_policy_app(old, "vision", NULL, NULL), -1);
	pol_agora_policy_destroy(&old);
	/* the names came along: the same app, not "t0" */
	assert_int_equal(pol_agora_policy_decide(nw, &s, 5000, &out), 0);
	assert_int_equal(pol_agora_policy_app(nw, "t0", NULL, NULL), -1);
	assert_int_equal(pol_agora_policy_app(nw, "vision", &r_nw, NULL), 0);
	assert_int_equal(pol_agora_policy_decide(fresh, &s, 5000, &out), 0);
	assert_int_equal(pol_agora_policy_app(fresh, "vision", &r_fresh, NULL),
			 0);
	assert_true(r_nw > 0 && r_fresh > 0);
	pol_actions_free(&out);
	pol_agora_policy_destroy(&nw);
	pol_agora_policy_destroy(&fresh);
	agora_conf_free(&conf);
	pol_cluster_destroy(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_agora_order_by_credit),
		cmocka_unit_test(test_agora_cluster_resized_in_place),
		cmocka_unit_test(test_agora_min_lease_many_leases),
		cmocka_unit_test(test_agora_charges_running_jobs),
		cmocka_unit_test(test_agora_lease_expiry_requeues_after_grace),
		cmocka_unit_test(test_agora_no_needless_requeue),
		cmocka_unit_test(test_agora_carry_keeps_leases),
		cmocka_unit_test(test_agora_restore_lease),
		cmocka_unit_test(test_agora_victims_smallest_first),
		cmocka_unit_test(test_agora_victims_least_served),
		cmocka_unit_test(test_agora_victims_keep_long),
		cmocka_unit_test(test_agora_leftover_drain),
		cmocka_unit_test(test_agora_bid_passes_head_gang),
		cmocka_unit_test(test_agora_history_by_name),
		cmocka_unit_test(test_agora_carry_keeps_apps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
