/*
 * test_loan_fewest.c - least-cost reclaim with fewest_first: the fewest
 * victims that meet the need, and among those the least GPU-hours lost,
 * against brute force; the repeat rule under fewest_first.
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

#include "loan_inst.h"

/* brute force over node sets of the reachable size: the fewest victims,
 * and the least cost at that count */
static void brute(const inst_t *x, int *can, int *victims, double *cost)
{
	bool ok[MAXN];
	int v, j, k, n_ok = 0;
	unsigned s;

	for (v = 0; v < x->n_loaned; v++)
		ok[v] = true;
	for (j = 0; j < x->n_jobs; j++)
		if (!x->jobs[j].requeue)
			for (k = 0; k < x->jobs[j].n_nodes; k++)
				ok[x->jobs[j].nodes[k]] = false;
	for (v = 0; v < x->n_loaned; v++)
		n_ok += ok[v];
	*can = x->need < n_ok ? x->need : n_ok;
	*victims = MAXJ + 1;
	*cost = INFINITY;
	for (s = 0; s < (1u << x->n_loaned); s++) {
		double c = 0;
		int n = 0;
		bool bad = false;

		if (__builtin_popcount(s) != *can)
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
					n++;
					break;
				}
		if (n < *victims || (n == *victims && c < *cost)) {
			*victims = n;
			*cost = c;
		}
	}
}

static void run(const inst_t *x, bool fewest_first, pol_loan_mode_t mode,
		outbuf_t *ob)
{
	pol_loan_reclaim_in_t in;

	memset(&in, 0, sizeof(in));
	memset(ob, 0, sizeof(*ob));
	in.n_loaned = x->n_loaned;
	in.need = x->need;
	in.jobs = x->jobs;
	in.n_jobs = x->n_jobs;
	in.order = POL_LOAN_LEAST_COST;
	in.mode = mode;
	in.fewest_first = fewest_first;
	ob->o.node_back = ob->back;
	ob->o.action = ob->action;
	ob->o.shrink_by = ob->shrink_by;
	assert_int_equal(pol_loan_reclaim(&in, &ob->o), 0);
}

/* the out's victims and their real cost, and nothing kept on a node that
 * goes back */
static void check(const inst_t *x, const outbuf_t *ob)
{
	int j, k, pre = 0;
	double cost = 0;

	for (j = 0; j < x->n_jobs; j++) {
		int on = 0;

		for (k = 0; k < x->jobs[j].n_nodes; k++)
			on += ob->back[x->jobs[j].nodes[k]];
		if (ob->action[j] == POL_LOAN_PREEMPT) {
			assert_true(x->jobs[j].requeue);
			cost += x->jobs[j].cost;
			pre++;
		} else {
			assert_int_equal(on, 0);
		}
	}
	assert_int_equal(pre, ob->o.preempted);
	assert_true(fabs(cost - ob->o.cost) < 1e-9);
}

static void test_fewest_first_vs_brute(void **state)
{
	uint64_t s = 1818;
	int it, can, victims, fewer = 0;
	double cost;

	(void) state;
	for (it = 0; it < 3000; it++) {
		inst_t x;
		outbuf_t f, a, g;

		make_inst(&s, &x, false);
		brute(&x, &can, &victims, &cost);
		run(&x, true, POL_LOAN_EXACT, &f);
		check(&x, &f);
		assert_int_equal(f.o.returned, can);
		assert_int_equal(f.o.preempted, victims);
		assert_true(fabs(f.o.cost - cost) < 1e-9);
		/* the any-count least cost is never dearer, never fewer */
		run(&x, false, POL_LOAN_EXACT, &a);
		assert_true(a.o.cost <= f.o.cost + 1e-9);
		assert_true(a.o.preempted >= f.o.preempted);
		fewer += a.o.preempted > f.o.preempted;
		/* greedy fewest-first returns as many, never below the count */
		run(&x, true, POL_LOAN_GREEDY, &g);
		check(&x, &g);
		assert_int_equal(g.o.returned, can);
		assert_true(g.o.preempted >= victims);
	}
	/* the instances do separate the two rules */
	assert_true(fewer > 0);
}

/* node 0: one job of cost 1; node 1: one job of cost 1.04 (repeat: no),
 * node 2: two jobs of cost 0.1 each; need 1.  Any count: node 2 (0.2).
 * Fewest first: node 0 (1 victim, 1.0).  Job 0 a repeat victim: node 1,
 * one victim within 5% of the cost; at 1.2 it is not spared. */
static void test_fewest_first_repeat(void **state)
{
	static const int n0[] = { 0 }, n1[] = { 1 }, n2[] = { 2 };
	inst_t x;
	outbuf_t o;

	(void) state;
	memset(&x, 0, sizeof(x));
	x.n_loaned = 3;
	x.need = 1;
	x.n_jobs = 4;
	x.jobs[0] = (pol_loan_job_t){
		.id = 1, .cost = 1, .n_nodes = 1, .nodes = n0, .requeue = true
	};
	x.jobs[1] = (pol_loan_job_t){ .id = 2,
				      .cost = 1.04,
				      .n_nodes = 1,
				      .nodes = n1,
				      .requeue = true };
	x.jobs[2] = (pol_loan_job_t){
		.id = 3, .cost = 0.1, .n_nodes = 1, .nodes = n2, .requeue = true
	};
	x.jobs[3] = (pol_loan_job_t){
		.id = 4, .cost = 0.1, .n_nodes = 1, .nodes = n2, .requeue = true
	};
	run(&x, false, POL_LOAN_AUTO, &o);
	assert_int_equal(o.o.preempted, 2);
	assert_int_equal(o.back[2], 1);
	run(&x, true, POL_LOAN_AUTO, &o);
	assert_int_equal(o.o.preempted, 1);
	assert_int_equal(o.action[0], POL_LOAN_PREEMPT);
	x.jobs[0].repeat = true;
	run(&x, true, POL_LOAN_AUTO, &o);
	assert_int_equal(o.o.preempted, 1);
	assert_int_equal(o.action[1], POL_LOAN_PREEMPT);
	assert_int_equal(o.action[0], POL_LOAN_KEEP);
	assert_true(fabs(o.o.cost - 1.04) < 1e-12);
	/* the spare costs 20% more: the repeat victim goes again rather
	 * than two victims or a dearer one */
	x.jobs[1].cost = 1.2;
	run(&x, true, POL_LOAN_AUTO, &o);
	assert_int_equal(o.o.preempted, 1);
	assert_int_equal(o.action[0], POL_LOAN_PREEMPT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fewest_first_vs_brute),
		cmocka_unit_test(test_fewest_first_repeat),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
