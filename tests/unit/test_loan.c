/*
 * test_loan.c - loaning inference nodes to training: least-cost reclaim
 * against brute force, best-fit decreasing, the demand model and the
 * loaning scenario (the knapsack and elastic growth: test_loan_grow.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pol_loan.h"

#include "loan_inst.h"

/* brute force: the least cost of clearing min(need, clearable) nodes */
static double brute(const inst_t *x, int *can)
{
	bool ok[MAXN];
	int v, j, k, n_ok = 0, want;
	unsigned s;
	double best = INFINITY;

	for (v = 0; v < x->n_loaned; v++)
		ok[v] = true;
	for (j = 0; j < x->n_jobs; j++)
		if (!x->jobs[j].requeue)
			for (k = 0; k < x->jobs[j].n_nodes; k++)
				ok[x->jobs[j].nodes[k]] = false;
	for (v = 0; v < x->n_loaned; v++)
		n_ok += ok[v];
	want = x->need < n_ok ? x->need : n_ok;
	*can = want;
	for (s = 0; s < (1u << x->n_loaned); s++) {
		double c = 0;
		bool bad = false;

		if (__builtin_popcount(s) != want)
			continue;
		for (v = 0; v < x->n_loaned; v++)
			if ((s & (1u << v)) && !ok[v])
				bad = true;
		if (bad)
			continue;
		for (j = 0; j < x->n_jobs; j++)
			for (k = 0; k < x->jobs[j].n_nodes; k++)
				if (s & (1u << x->jobs[j].nodes[k])) {
					c += x->jobs[j].cost;
					break;
				}
		if (c < best)
			best = c;
	}
	return best;
}

static void run_reclaim(const inst_t *x, pol_loan_order_t order,
			pol_loan_mode_t mode, bool shrink_first, outbuf_t *ob)
{
	pol_loan_reclaim_in_t in;

	memset(&in, 0, sizeof(in));
	memset(ob, 0, sizeof(*ob));
	in.n_loaned = x->n_loaned;
	in.need = x->need;
	in.jobs = x->jobs;
	in.n_jobs = x->n_jobs;
	in.order = order;
	in.mode = mode;
	in.shrink_first = shrink_first;
	in.seed = 7;
	ob->o.node_back = ob->back;
	ob->o.action = ob->action;
	ob->o.shrink_by = ob->shrink_by;
	assert_int_equal(pol_loan_reclaim(&in, &ob->o), 0);
}

/* Whatever the order: a node given back has no job left on it but
 * preempted ones and ones that shrank off it; --no-requeue jobs are never
 * preempted; the cost is the preempted jobs' cost. */
static void check_valid(const inst_t *x, const outbuf_t *ob)
{
	int v, j, k, back = 0, pre = 0;
	double cost = 0;

	for (v = 0; v < x->n_loaned; v++)
		back += ob->back[v];
	assert_int_equal(back, ob->o.returned);
	assert_true(back <= x->need);
	assert_int_equal(ob->o.short_by, x->need - back);
	for (j = 0; j < x->n_jobs; j++) {
		int a = ob->action[j], on_back = 0;

		if (a == POL_LOAN_PREEMPT) {
			assert_true(x->jobs[j].requeue);
			cost += x->jobs[j].cost;
			pre++;
		}
		assert_true(ob->shrink_by[j] <= x->jobs[j].shrinkable);
		for (k = 0; k < x->jobs[j].n_nodes; k++)
			on_back += ob->back[x->jobs[j].nodes[k]];
		if (a == POL_LOAN_KEEP)
			assert_int_equal(on_back, 0);
		if (a == POL_LOAN_SHRINK)
			assert_true(on_back == ob->shrink_by[j] && on_back > 0);
	}
	assert_int_equal(pre, ob->o.preempted);
	assert_true(fabs(cost - ob->o.cost) < 1e-9);
}

static void test_reclaim_vs_brute(void **state)
{
	uint64_t s = 42;
	int it, can, exact_hits = 0;

	(void) state;
	for (it = 0; it < 3000; it++) {
		inst_t x;
		outbuf_t e, g, o;
		double opt;
		int order;

		make_inst(&s, &x, false);
		opt = brute(&x, &can);
		run_reclaim(&x, POL_LOAN_LEAST_COST, POL_LOAN_EXACT, false, &e);
		check_valid(&x, &e);
		assert_int_equal(e.o.returned, can);
		assert_true(e.o.exact);
		assert_true(fabs(e.o.cost - opt) < 1e-9);
		exact_hits++;

		run_reclaim(&x, POL_LOAN_LEAST_COST, POL_LOAN_GREEDY, false,
			    &g);
		check_valid(&x, &g);
		assert_int_equal(g.o.returned, can);
		assert_true(g.o.cost >= opt - 1e-9);
		assert_true(g.o.cost <= g.o.bound_factor * opt + 1e-9);
		if (g.o.bound_factor == 1)
			assert_true(fabs(g.o.cost - opt) < 1e-9);

		for (order = POL_LOAN_SLURM; order <= POL_LOAN_RECENT;
		     order++) {
			run_reclaim(&x, (pol_loan_order_t) order, POL_LOAN_AUTO,
				    false, &o);
			check_valid(&x, &o);
			assert_int_equal(o.o.returned, can);
			assert_true(o.o.cost >= opt - 1e-9);
		}
	}
	assert_int_equal(exact_hits, 3000);
}

/* Near the greedy's factor: the greedy ranks nodes by the summed cost of
 * their jobs and cannot see that one 2-node job clears two nodes. */
static void test_reclaim_greedy_bound_tight(void **state)
{
	inst_t x;
	outbuf_t e, g;

	(void) state;
	memset(&x, 0, sizeof(x));
	x.n_loaned = 3;
	x.need = 2;
	x.n_jobs = 2;
	/* job A on nodes 0 and 1, cost 2: clearing both costs 2 */
	x.nodes[0][0] = 0;
	x.nodes[0][1] = 1;
	x.jobs[0] = (pol_loan_job_t){ .id = 1,
				      .cost = 2,
				      .n_nodes = 2,
				      .nodes = x.nodes[0],
				      .requeue = true };
	/* job B alone on node 2, cost 1.9 */
	x.nodes[1][0] = 2;
	x.jobs[1] = (pol_loan_job_t){ .id = 2,
				      .cost = 1.9,
				      .n_nodes = 1,
				      .nodes = x.nodes[1],
				      .requeue = true };
	run_reclaim(&x, POL_LOAN_LEAST_COST, POL_LOAN_EXACT, false, &e);
	assert_true(fabs(e.o.cost - 2) < 1e-9);
	assert_int_equal(e.o.preempted, 1);
	/* greedy ranks node 2 (1.9) before nodes 0, 1 (2 each): 3.9 */
	run_reclaim(&x, POL_LOAN_LEAST_COST, POL_LOAN_GREEDY, false, &g);
	assert_true(fabs(g.o.cost - 3.9) < 1e-9);
	assert_int_equal(g.o.bound_factor, 2);
	assert_true(g.o.cost <= 2 * e.o.cost);
}

static void test_no_requeue_never_chosen(void **state)
{
	inst_t x;
	outbuf_t o;
	int order;

	(void) state;
	memset(&x, 0, sizeof(x));
	x.n_loaned = 3;
	x.need = 3;
	x.n_jobs = 3;
	/* every node has one job; the one on node 1 cannot be requeued and
	 * is the cheapest */
	for (int j = 0; j < 3; j++) {
		x.nodes[j][0] = j;
		x.jobs[j] = (pol_loan_job_t){ .id = j + 1,
					      .cost = j == 1 ? 0 : 5,
					      .n_nodes = 1,
					      .nodes = x.nodes[j],
					      .requeue = j != 1 };
	}
	for (order = POL_LOAN_LEAST_COST; order <= POL_LOAN_RECENT; order++) {
		run_reclaim(&x, (pol_loan_order_t) order, POL_LOAN_AUTO, true,
			    &o);
		assert_int_equal(o.action[1], POL_LOAN_KEEP);
		assert_int_equal(o.back[1], 0);
		assert_int_equal(o.o.returned, 2);
		assert_int_equal(o.o.short_by, 1);
		assert_int_equal(o.o.preempted, 2);
	}
}

static void test_elastic_shrinks_first(void **state)
{
	inst_t x;
	outbuf_t o;

	(void) state;
	memset(&x, 0, sizeof(x));
	x.n_loaned = 4;
	x.n_jobs = 3;
	/* elastic job on nodes 0, 1 and 2 that may give up 2 of them; a
	 * cheap rigid job (cost 0.1) on node 3 */
	x.nodes[0][0] = 0;
	x.nodes[0][1] = 1;
	x.nodes[0][2] = 2;
	x.jobs[0] = (pol_loan_job_t){ .id = 1,
				      .cost = 50,
				      .n_nodes = 3,
				      .nodes = x.nodes[0],
				      .shrinkable = 2,
				      .requeue = true };
	x.nodes[1][0] = 3;
	x.jobs[1] = (pol_loan_job_t){ .id = 2,
				      .cost = 0.1,
				      .n_nodes = 1,
				      .nodes = x.nodes[1],
				      .requeue = true };
	x.n_jobs = 2;
	/* two nodes: the shrink covers it, nobody is preempted */
	x.need = 2;
	run_reclaim(&x, POL_LOAN_LEAST_COST, POL_LOAN_AUTO, true, &o);
	check_valid(&x, &o);
	assert_int_equal(o.o.preempted, 0);
	assert_int_equal(o.o.shrunk, 1);
	assert_int_equal(o.shrink_by[0], 2);
	assert_int_equal(o.action[1], POL_LOAN_KEEP);
	/* three: shrink by two, then the cheapest preemption (job 2) */
	x.need = 3;
	run_reclaim(&x, POL_LOAN_LEAST_COST, POL_LOAN_AUTO, true, &o);
	check_valid(&x, &o);
	assert_int_equal(o.action[0], POL_LOAN_SHRINK);
	assert_int_equal(o.action[1], POL_LOAN_PREEMPT);
	assert_int_equal(o.o.preempted, 1);
	/* without shrinking first, the elastic job is preempted whole: its
	 * three nodes (50) are cheaper than two of them plus node 3 (50.1) */
	run_reclaim(&x, POL_LOAN_LEAST_COST, POL_LOAN_AUTO, false, &o);
	assert_int_equal(o.o.preempted, 1);
	assert_int_equal(o.action[0], POL_LOAN_PREEMPT);
	assert_int_equal(o.action[1], POL_LOAN_KEEP);
}

/* random: whenever the shrinkable capacity of lone elastic jobs covers
 * the need, nobody is preempted */
static void test_elastic_random(void **state)
{
	uint64_t s = 9;
	int it;

	(void) state;
	for (it = 0; it < 2000; it++) {
		inst_t x;
		outbuf_t o;
		int v, j, cap = 0, idle = 0, cnt[MAXN] = { 0 };

		make_inst(&s, &x, true);
		run_reclaim(&x, POL_LOAN_LEAST_COST, POL_LOAN_AUTO, true, &o);
		check_valid(&x, &o);
		for (j = 0; j < x.n_jobs; j++)
			for (int k = 0; k < x.jobs[j].n_nodes; k++)
				cnt[x.jobs[j].nodes[k]]++;
		for (v = 0; v < x.n_loaned; v++)
			idle += cnt[v] == 0;
		/* nodes an elastic job holds alone, up to its shrinkable */
		for (j = 0; j < x.n_jobs; j++) {
			int alone = 0;

			for (int k = 0; k < x.jobs[j].n_nodes; k++)
				alone += cnt[x.jobs[j].nodes[k]] == 1;
			cap += alone < x.jobs[j].shrinkable
				       ? alone
				       : x.jobs[j].shrinkable;
		}
		if (idle + cap >= x.need)
			assert_int_equal(o.o.preempted, 0);
	}
}

static void test_preempt_cost(void **state)
{
	(void) state;
	/* 8 GPUs, 1 h into the run, checkpoints every 30 min: 0 lost + the
	 * 120 s restart */
	assert_true(fabs(pol_loan_preempt_cost(8, 3600, 1800, 120) -
			 8 * 120 / 3600.0) < 1e-12);
	assert_true(fabs(pol_loan_preempt_cost(8, 4500, 1800, 120) -
			 8 * (900 + 120) / 3600.0) < 1e-12);
	assert_true(fabs(pol_loan_preempt_cost(2, 4500, 0, 0) -
			 2 * 4500 / 3600.0) < 1e-12);
	assert_true(fabs(pol_loan_preempt_cost(2, 4500, -1, 60) -
			 2 * 60 / 3600.0) < 1e-12);
}

/* ---- best-fit decreasing ---- */

static void test_bfd_properties(void **state)
{
	uint64_t s = 11;
	int it;

	(void) state;
	for (it = 0; it < 2000; it++) {
		int n = rnd(&s, 12), m = rnd(&s, 6), size[12], cap[6], cap0[6];
		int bin[12], ord[12], i, k, placed, got = 0;
		int sim[6];

		for (i = 0; i < n; i++)
			size[i] = 1 + rnd(&s, 8);
		for (k = 0; k < m; k++)
			cap[k] = cap0[k] = sim[k] = rnd(&s, 17);
		placed = pol_loan_bfd(size, n, cap, m, bin);
		for (k = 0; k < m; k++)
			assert_true(cap[k] >= 0);
		for (i = 0; i < n; i++) {
			assert_true(bin[i] >= -1 && bin[i] < m);
			got += bin[i] >= 0;
		}
		assert_int_equal(placed, got);
		/* replay in decreasing size: each item went to the fullest
		 * bin that held it, or none held it */
		for (i = 0; i < n; i++)
			ord[i] = i;
		for (i = 1; i < n; i++)
			for (k = i; k > 0 && size[ord[k - 1]] < size[ord[k]];
			     k--) {
				int t = ord[k];

				ord[k] = ord[k - 1];
				ord[k - 1] = t;
			}
		for (i = 0; i < n; i++) {
			int it2 = ord[i], b = bin[it2];

			for (k = 0; k < m; k++)
				if (sim[k] >= size[it2])
					assert_true(b >= 0 && sim[b] <= sim[k]);
			if (b >= 0) {
				assert_true(sim[b] >= size[it2]);
				sim[b] -= size[it2];
			}
		}
		for (k = 0; k < m; k++)
			assert_int_equal(sim[k], cap[k]);
		(void) cap0;
	}
}

/* ---- demand ---- */

static void test_demand(void **state)
{
	pol_loan_demand_t d;
	int64_t t;
	double a, b;

	(void) state;
	pol_loan_demand_default(&d, 40);
	for (t = 0; t < 2 * 86400; t += 617) {
		a = pol_loan_demand_at(&d, t);
		b = pol_loan_demand_at(&d, t);
		assert_true(a == b);
		assert_true(a >= 0 && a <= 40);
	}
	d.noise = 0;
	assert_true(fabs(pol_loan_demand_at(&d, 14 * 3600) - 34) < 1e-9);
	assert_true(fabs(pol_loan_demand_at(&d, 2 * 3600) - 34.0 / 3) < 1e-9);
	/* the seed changes the noise */
	d.noise = 0.1;
	a = pol_loan_demand_at(&d, 5000);
	d.seed = 2;
	assert_true(pol_loan_demand_at(&d, 5000) != a);
}

/* the trend a reclaim ahead projects: hand-computed lines */
static void test_demand_ahead(void **state)
{
	const double up[3] = { 1, 2, 3 }, noisy[4] = { 1, 3, 2, 4 };
	const double down[3] = { 4, 3, 2 };

	(void) state;
	/* an exact line, one reading ahead: 4; no time ahead: the last */
	assert_true(fabs(pol_loan_demand_ahead(up, 3, 60, 60, 0) - 4) < 1e-9);
	assert_true(fabs(pol_loan_demand_ahead(up, 3, 60, 0, 2) - 3) < 1e-9);
	/* slope 0.8 per reading, mean 2.5 at reading 1.5: two readings
	 * past the last is 2.5 + 0.8 * 3.5 = 5.3; residuals -0.3, 0.9,
	 * -0.9, 0.3 give sd sqrt(1.8 / 2) */
	assert_true(fabs(pol_loan_demand_ahead(noisy, 4, 60, 120, 0) - 5.3) <
		    1e-9);
	assert_true(fabs(pol_loan_demand_ahead(noisy, 4, 60, 120, 2) -
			 (5.3 + 2 * sqrt(0.9))) < 1e-9);
	/* a falling line is flat at the mean, above the last reading */
	assert_true(fabs(pol_loan_demand_ahead(down, 3, 60, 900, 0) - 3) <
		    1e-9);
	/* too few readings or a bad step: the last reading */
	assert_true(fabs(pol_loan_demand_ahead(up, 2, 60, 60, 0) - 2) < 1e-9);
	assert_true(fabs(pol_loan_demand_ahead(up, 3, 0, 60, 0) - 3) < 1e-9);
	assert_true(fabs(pol_loan_demand_ahead(up, 3, 60, -1, 0) - 3) < 1e-9);
	assert_true(pol_loan_demand_ahead(NULL, 3, 60, 60, 0) == 0);
	assert_true(pol_loan_demand_ahead(up, 0, 60, 60, 0) == 0);
}

/* the same trend on readings at the times agorad took them */
static void test_demand_ahead_at(void **state)
{
	const double t[3] = { 1000, 1060, 1180 }, v[3] = { 1, 2, 4 };
	const double even[4] = { 0, 60, 120, 180 }, noisy[4] = { 1, 3, 2, 4 };
	const double late[3] = { 1000, 1180, 1060 };

	(void) state;
	/* the line v = 1 + (t - 1000) / 60 exactly: 5 at t = 1240 */
	assert_true(fabs(pol_loan_demand_ahead_at(t, v, 3, 60, 2) - 5) < 1e-9);
	/* evenly spaced times: as pol_loan_demand_ahead */
	assert_true(fabs(pol_loan_demand_ahead_at(even, noisy, 4, 120, 2) -
			 pol_loan_demand_ahead(noisy, 4, 60, 120, 2)) < 1e-9);
	/* times out of order, one time for all, too few: the last */
	assert_true(fabs(pol_loan_demand_ahead_at(late, v, 3, 60, 0) - 4) <
		    1e-9);
	{
		const double same[3] = { 5, 5, 5 };

		assert_true(fabs(pol_loan_demand_ahead_at(same, v, 3, 60, 0) -
				 4) < 1e-9);
	}
	assert_true(fabs(pol_loan_demand_ahead_at(t, v, 2, 60, 0) - 2) < 1e-9);
	assert_true(pol_loan_demand_ahead_at(NULL, v, 3, 60, 0) == 0);
	assert_true(pol_loan_demand_ahead_at(t, v, 0, 60, 0) == 0);
}

/* ---- scenario ---- */

static pol_loan_sim_job_t *sim_jobs(int n, uint64_t seed, bool requeue)
{
	pol_loan_sim_job_t *j = calloc((size_t) n, sizeof(*j));
	uint64_t s = seed;
	int i;

	assert_non_null(j);
	for (i = 0; i < n; i++) {
		int r = rnd(&s, 10);

		j[i].id = i + 1;
		j[i].submit = (int64_t) i * 600;
		j[i].duration = 1800 + rnd(&s, 6 * 3600);
		j[i].gpus = r < 6 ? 1 : r < 8 ? 4 : r < 9 ? 8 : 16;
		j[i].elastic = j[i].gpus >= 8;
		j[i].requeue = requeue;
	}
	return j;
}

static void small_params(pol_loan_sim_params_t *p)
{
	pol_loan_sim_params_default(p);
	p->train_nodes = 4;
	p->infer_nodes = 4;
	pol_loan_demand_default(&p->demand, 4);
	p->headroom = 0;
}

static void test_sim_variants(void **state)
{
	pol_loan_sim_job_t *j = sim_jobs(300, 3, true);
	pol_loan_sim_params_t p;
	pol_loan_sim_result_t r[POL_LOAN_N_VARIANTS];
	int v;

	(void) state;
	small_params(&p);
	for (v = 0; v < POL_LOAN_N_VARIANTS; v++) {
		assert_int_equal(pol_loan_sim_run(j, 300,
						  (pol_loan_variant_t) v, &p,
						  &r[v]),
				 0);
		assert_int_equal(r[v].finished, r[v].jobs);
		assert_true(r[v].util_total > 0 && r[v].util_total <= 1 + 1e-9);
		assert_true(r[v].util_train > 0 && r[v].util_train <= 1 + 1e-9);
	}
	assert_int_equal(r[POL_LOAN_V_NONE].preemptions, 0);
	assert_true(r[POL_LOAN_V_NONE].mean_loaned == 0);
	/* loans shorten the queue of an overloaded training pool */
	assert_true(r[POL_LOAN_V_LEAST_COST].mean_loaned > 0);
	assert_true(r[POL_LOAN_V_LEAST_COST].mean_queue_s <
		    r[POL_LOAN_V_NONE].mean_queue_s);
	assert_true(r[POL_LOAN_V_LEAST_COST].util_total >
		    r[POL_LOAN_V_NONE].util_total);
	/* only the elastic variant resizes */
	assert_int_equal(r[POL_LOAN_V_LEAST_COST].shrinks +
				 r[POL_LOAN_V_LEAST_COST].grows,
			 0);
	assert_true(r[POL_LOAN_V_ELASTIC].grows > 0);
	for (v = 0; v < POL_LOAN_N_VARIANTS; v++)
		pol_loan_sim_result_free(&r[v]);
	free(j);
}

static void test_sim_no_requeue_not_loaned(void **state)
{
	pol_loan_sim_job_t *j = sim_jobs(200, 4, false);
	pol_loan_sim_params_t p;
	pol_loan_sim_result_t r;

	(void) state;
	small_params(&p);
	assert_int_equal(pol_loan_sim_run(j, 200, POL_LOAN_V_ELASTIC, &p, &r),
			 0);
	assert_int_equal(r.finished, r.jobs);
	assert_int_equal(r.preemptions, 0);
	assert_true(r.train_busy_gpu_s <= r.total_gpu_s / 2 + 1e-6);
	pol_loan_sim_result_free(&r);
	free(j);
}

/* A job of more than 64 nodes (the node lists' size) is skipped as too
 * large: it used to start on 128 nodes and write past its node list
 * (ASan), or under a registry policy never start.  And a node of more
 * GPUs than a mask holds is refused. */
static void test_sim_job_over_64_nodes(void **state)
{
	pol_loan_sim_job_t j[2] = { { 0 } };
	pol_loan_sim_params_t p;
	pol_loan_sim_result_t r;

	(void) state;
	small_params(&p);
	p.train_nodes = 128;
	p.t_from = 0;
	p.t_to = 1000; /* both submissions */
	j[0].id = 1;
	j[0].duration = 3600;
	j[0].gpus = 128 * 8;
	j[0].requeue = true;
	j[1].id = 2;
	j[1].submit = 10;
	j[1].duration = 600;
	j[1].gpus = 8;
	j[1].requeue = true;
	assert_int_equal(pol_loan_sim_run(j, 2, POL_LOAN_V_LEAST_COST, &p, &r),
			 0);
	assert_int_equal(r.jobs, 1);
	assert_int_equal(r.finished, 1);
	pol_loan_sim_result_free(&r);
	p.gpn = 65;
	errno = 0;
	assert_int_equal(pol_loan_sim_run(j, 2, POL_LOAN_V_LEAST_COST, &p, &r),
			 -1);
	assert_int_equal(errno, EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reclaim_vs_brute),
		cmocka_unit_test(test_reclaim_greedy_bound_tight),
		cmocka_unit_test(test_no_requeue_never_chosen),
		cmocka_unit_test(test_elastic_shrinks_first),
		cmocka_unit_test(test_elastic_random),
		cmocka_unit_test(test_preempt_cost),
		cmocka_unit_test(test_bfd_properties),
		cmocka_unit_test(test_demand),
		cmocka_unit_test(test_demand_ahead),
		cmocka_unit_test(test_demand_ahead_at),
		cmocka_unit_test(test_sim_variants),
		cmocka_unit_test(test_sim_no_requeue_not_loaned),
		cmocka_unit_test(test_sim_job_over_64_nodes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
