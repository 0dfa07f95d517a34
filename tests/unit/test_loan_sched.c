/*
 * test_loan_sched.c - least-cost reclaim spares a repeat victim when a
 * choice within POL_LOAN_REPEAT_TOL spares it; the loaning scenario on a
 * registry policy (backfill-fs) as the training scheduler, with the
 * harvest, the per-event fewest-victims bound and the requeue counts; the
 * checkpoint wait and the reclaim ahead of a rising demand.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pol_loan.h"
#include "pol_loan_sim_int.h"
#include "pol_policy.h"

typedef struct one {
	pol_loan_job_t jobs[4];
	int nodes[4];
	unsigned char back[4];
	int action[4], shrink_by[4];
	pol_loan_reclaim_in_t in;
	pol_loan_reclaim_out_t out;
} one_t;

/* four loaned nodes, one single-node job each, need one node back */
static void four(one_t *x, const double *cost, const bool *repeat)
{
	int j;

	memset(x, 0, sizeof(*x));
	for (j = 0; j < 4; j++) {
		x->nodes[j] = j;
		x->jobs[j] = (pol_loan_job_t){ .id = j + 1,
					       .cost = cost[j],
					       .start = 100 * j,
					       .n_nodes = 1,
					       .nodes = &x->nodes[j],
					       .requeue = true,
					       .repeat = repeat[j] };
	}
	x->in.n_loaned = 4;
	x->in.need = 1;
	x->in.jobs = x->jobs;
	x->in.n_jobs = 4;
	x->in.order = POL_LOAN_LEAST_COST;
	x->out.node_back = x->back;
	x->out.action = x->action;
	x->out.shrink_by = x->shrink_by;
}

static void test_repeat_spared_within_tol(void **state)
{
	const double cost[4] = { 1.0, 1.04, 2.0, 3.0 };
	bool rep[4] = { true, false, false, false };
	pol_loan_mode_t mode;
	one_t x;

	(void) state;
	for (mode = POL_LOAN_AUTO; mode <= POL_LOAN_GREEDY; mode++) {
		/* job 1 was the last victim: job 2 costs 4% more, taken */
		four(&x, cost, rep);
		x.in.mode = mode;
		assert_int_equal(pol_loan_reclaim(&x.in, &x.out), 0);
		assert_int_equal(x.action[0], POL_LOAN_KEEP);
		assert_int_equal(x.action[1], POL_LOAN_PREEMPT);
		assert_int_equal(x.out.preempted, 1);
		assert_int_equal(x.out.returned, 1);
		assert_true(fabs(x.out.cost - 1.04) < 1e-12);
		/* not a repeat: the cheapest, as before */
		rep[0] = false;
		four(&x, cost, rep);
		x.in.mode = mode;
		assert_int_equal(pol_loan_reclaim(&x.in, &x.out), 0);
		assert_int_equal(x.action[0], POL_LOAN_PREEMPT);
		assert_true(fabs(x.out.cost - 1.0) < 1e-12);
		rep[0] = true;
	}
}

static void test_repeat_beyond_tol(void **state)
{
	const double cost[4] = { 1.0, 1.2, 2.0, 3.0 };
	const bool rep[4] = { true, false, false, false };
	one_t x;

	(void) state;
	/* the next choice costs 20% more: the repeat victim goes again */
	four(&x, cost, rep);
	assert_int_equal(pol_loan_reclaim(&x.in, &x.out), 0);
	assert_int_equal(x.action[0], POL_LOAN_PREEMPT);
	assert_true(x.out.exact);
	/* every job a repeat: no choice spares one, the cheapest stays */
	{
		const bool all[4] = { true, true, true, true };

		four(&x, cost, all);
		assert_int_equal(pol_loan_reclaim(&x.in, &x.out), 0);
		assert_int_equal(x.action[0], POL_LOAN_PREEMPT);
		assert_int_equal(x.out.returned, 1);
	}
	/* Slurm's order ignores the flag: it counts victims only */
	{
		const double c2[4] = { 1.0, 1.01, 1.02, 1.03 };

		four(&x, c2, rep);
		x.in.order = POL_LOAN_SLURM;
		assert_int_equal(pol_loan_reclaim(&x.in, &x.out), 0);
		assert_int_equal(x.action[0], POL_LOAN_PREEMPT);
	}
}

static pol_loan_sim_job_t *sim_jobs(int n, uint64_t seed)
{
	pol_loan_sim_job_t *j = calloc((size_t) n, sizeof(*j));
	uint64_t s = seed;
	int i;

	assert_non_null(j);
	for (i = 0; i < n; i++) {
		s = s * 6364136223846793005ULL + 1442695040888963407ULL;
		j[i].id = i + 1;
		j[i].tenant = (int) ((s >> 33) % 3);
		j[i].submit = (int64_t) i * 600;
		j[i].duration = 1800 + (int64_t) ((s >> 20) % (6 * 3600));
		j[i].gpus = (s >> 40) % 10 < 6 ? 1 : (s >> 40) % 10 < 8 ? 4 : 8;
		j[i].requeue = true;
	}
	return j;
}

static void test_sim_backfill_fs(void **state)
{
	pol_loan_sim_job_t *j = sim_jobs(300, 5);
	int64_t lim[300];
	pol_loan_sim_params_t p;
	pol_loan_sim_policy_t pol;
	pol_loan_sim_result_t r[2];
	pol_loan_sim_more_t m[2];
	agora_err_t err = { { 0 } };
	int k;

	(void) state;
	for (k = 0; k < 300; k++)
		lim[k] = 2 * j[k].duration;
	pol_loan_sim_params_default(&p);
	p.train_nodes = 4;
	p.infer_nodes = 4;
	pol_loan_demand_default(&p.demand, 4);
	p.headroom = 0;
	pol_loan_sim_policy_default(&pol);
	pol.limit_s = lim;
	for (k = 0; k < 2; k++) {
		pol_policy_t *bf = pol_policy_create("backfill-fs", NULL, NULL,
						     &err);

		assert_non_null(bf);
		pol.train_policy = bf;
		assert_int_equal(
			pol_loan_sim_run_policy(j, 300,
						k ? POL_LOAN_V_LEAST_COST
						  : POL_LOAN_V_NONE,
						&p, &pol, &r[k], &m[k]),
			0);
		pol_policy_destroy(&bf);
		assert_int_equal(r[k].finished, r[k].jobs);
	}
	/* no loans: nothing on loaned nodes, no requeue, no bound */
	assert_true(m[0].loan_busy_gpu_s == 0);
	assert_true(m[0].lendable_gpu_s > 0);
	assert_int_equal(m[0].requeues_max, 0);
	assert_int_equal(m[0].fewest_victims, 0);
	/* loans: part of the lendable GPU-hours used, a shorter queue, and
	 * no reclaim met with fewer victims than the per-event bound */
	assert_true(m[1].loan_busy_gpu_s > 0);
	assert_true(m[1].loan_busy_gpu_s <= m[1].lendable_gpu_s + 1e-6);
	assert_true(r[1].mean_queue_s < r[0].mean_queue_s);
	assert_true(r[1].preemptions >= m[1].fewest_victims);
	assert_true(r[1].preemptions == 0 || m[1].requeues_max >= 1);
	assert_true(m[1].requeues_p99 <= m[1].requeues_max);
	for (k = 0; k < 2; k++)
		pol_loan_sim_result_free(&r[k]);
	free(j);
}

/* agora's leases on the loan scenario: the snapshot tells it the
 * checkpoints and the requeues (pol_ckpt.h), so a job that saved nothing
 * since its last requeue is not requeued again and again */
static void test_sim_agora_no_thrash(void **state)
{
	pol_loan_sim_job_t *j = sim_jobs(300, 7);
	int64_t lim[300];
	pol_loan_sim_params_t p;
	pol_loan_sim_policy_t pol;
	pol_loan_sim_result_t r;
	pol_loan_sim_more_t m;
	agora_err_t err = { { 0 } };
	pol_policy_t *ag;
	int k;

	(void) state;
	for (k = 0; k < 300; k++)
		lim[k] = 2 * j[k].duration;
	pol_loan_sim_params_default(&p);
	p.train_nodes = 4;
	p.infer_nodes = 4;
	pol_loan_demand_default(&p.demand, 4);
	pol_loan_sim_policy_default(&pol);
	pol.limit_s = lim;
	ag = pol_policy_create("agora", NULL, NULL, &err);
	assert_non_null(ag);
	pol.train_policy = ag;
	assert_int_equal(pol_loan_sim_run_policy(j, 300, POL_LOAN_V_LEAST_COST,
						 &p, &pol, &r, &m),
			 0);
	pol_policy_destroy(&ag);
	assert_int_equal(r.finished, r.jobs);
	assert_true(m.requeues_max <= 10);
	pol_loan_sim_result_free(&r);
	free(j);
}

/* least-cost on 300 jobs, 4 training and 6 inference nodes, 2 of headroom:
 * every job ends, no SLO is missed, the harvest is under its ceiling */
static void run_headroom2(const pol_loan_sim_job_t *j,
			  const pol_loan_sim_policy_t *pol,
			  pol_loan_sim_result_t *r, pol_loan_sim_more_t *m)
{
	pol_loan_sim_params_t p;

	pol_loan_sim_params_default(&p);
	p.train_nodes = 4;
	p.infer_nodes = 6;
	pol_loan_demand_default(&p.demand, 6);
	p.headroom = 2;
	assert_int_equal(pol_loan_sim_run_policy(j, 300, POL_LOAN_V_LEAST_COST,
						 &p, pol, r, m),
			 0);
	assert_int_equal(r->finished, r->jobs);
	assert_int_equal(r->slo_misses, 0);
	assert_true(m->loan_busy_gpu_s <= m->harvest_cap_gpu_s + 1e-6);
	assert_true(m->harvest_cap_gpu_s <= m->lendable_gpu_s + 1e-6);
}

/* least-cost waits for checkpoints: with a node of headroom to spare a
 * reclaim waits when its victims lose less after one of them checkpoints;
 * without the wait none is counted.  The older rule (each victim valued
 * at its own best cost within deadline - grace) waits less and loses more
 * than the default (time and victims chosen together, up to
 * POL_LOAN_CKPT_WAIT_S).  The waits never cost an SLO miss, and the
 * harvest bound holds the harvest. */
static void test_sim_ckpt_wait(void **state)
{
	pol_loan_sim_job_t *j = sim_jobs(300, 5);
	pol_loan_sim_policy_t pol;
	pol_loan_sim_result_t r[3];
	pol_loan_sim_more_t m[3];
	int k;

	(void) state;
	for (k = 0; k < 3; k++) {
		pol_loan_sim_policy_default(&pol);
		pol.no_ckpt_wait = k == 1;
		if (k == 2) {
			pol.ckpt_wait_s = 0;
			pol.ckpt_wait_per_job = true;
		}
		run_headroom2(j, &pol, &r[k], &m[k]);
	}
	assert_true(m[0].ckpt_waits > 0);
	assert_int_equal(m[1].ckpt_waits, 0);
	assert_true(r[0].gpu_hours_lost < r[1].gpu_hours_lost);
	assert_true(m[2].ckpt_waits > 0);
	assert_true(m[0].ckpt_waits > m[2].ckpt_waits);
	assert_true(r[0].gpu_hours_lost < r[2].gpu_hours_lost);
	assert_true(r[2].gpu_hours_lost < r[1].gpu_hours_lost);
	for (k = 0; k < 3; k++)
		pol_loan_sim_result_free(&r[k]);
	free(j);
}

/* least-cost reclaims ahead of a rising demand: off by default (no
 * ahead reclaim counted); on, it reclaims ahead, at its victims'
 * checkpoints, and loses less work than without, still with no SLO miss
 * and the harvest under its ceiling */
static void test_sim_reclaim_ahead(void **state)
{
	pol_loan_sim_job_t *j = sim_jobs(300, 5);
	pol_loan_sim_policy_t pol;
	pol_loan_sim_result_t r[2];
	pol_loan_sim_more_t m[2];
	int k;

	(void) state;
	for (k = 0; k < 2; k++) {
		pol_loan_sim_policy_default(&pol);
		assert_int_equal(pol.reclaim_ahead_s, 0);
		if (k == 1)
			pol.reclaim_ahead_s = 900;
		run_headroom2(j, &pol, &r[k], &m[k]);
	}
	assert_int_equal(m[0].ahead_reclaims, 0);
	assert_true(m[1].ahead_reclaims > 0);
	assert_true(r[1].gpu_hours_lost < r[0].gpu_hours_lost);
	for (k = 0; k < 2; k++)
		pol_loan_sim_result_free(&r[k]);
	free(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_repeat_spared_within_tol),
		cmocka_unit_test(test_repeat_beyond_tol),
		cmocka_unit_test(test_sim_backfill_fs),
		cmocka_unit_test(test_sim_agora_no_thrash),
		cmocka_unit_test(test_sim_ckpt_wait),
		cmocka_unit_test(test_sim_reclaim_ahead),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
