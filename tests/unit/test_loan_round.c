/*
 * test_loan_round.c - the loan round's decision (pol_loan_round.h):
 * table-driven over snapshots of the inference nodes, including every
 * crash order of a loan (marked but out of the partition, with and without
 * borrowers; in the partition without a mark; an expired heartbeat), the
 * lend choice, the least-cost reclaim with its victims, and the shrink or
 * requeue of a victim job.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "pol_loan_round.h"

#define NOW  1796153774
#define TO   600 /* LoanLeaseTimeout */
#define MAXN 8
#define MAXJ 4

/* marks: fresh (heartbeat now), stale (older than TO / 4), expired */
#define FRESH                                                                  \
	.commented = true, .since = NOW - 3600,                                \
	.mark = { .version = 1,                                                \
		  .state = POL_LOAN_LEASE_LENT,                                \
		  .since = NOW - 3600,                                         \
		  .heartbeat = NOW - 10 }
#define EXPIRED                                                                \
	.commented = true, .since = NOW - 7200,                                \
	.mark = { .version = 1,                                                \
		  .state = POL_LOAN_LEASE_LENT,                                \
		  .since = NOW - 7200,                                         \
		  .heartbeat = NOW - 2 * TO }
#define RETURNED                                                               \
	.commented = true, .since = NOW - 7200,                                \
	.mark = { .version = 1,                                                \
		  .state = POL_LOAN_LEASE_RETURNED,                            \
		  .since = NOW - 7200,                                         \
		  .returned = NOW - 60 }
#define IDLE .up = true, .free_comment = true

typedef struct {
	int n;
	int nodes[MAXN];
	int gpus;
	int64_t run_s;
	bool requeue, elastic;
	int min_nodes, total_nodes, batch;
} jspec_t;

typedef struct {
	const char *name;
	int n_nodes;
	pol_loan_round_node_t nodes[MAXN];
	int n_jobs;
	jspec_t jobs[MAXJ];
	double demand, peak;
	int headroom;
	/* expected: want; per node the state after the round (H home, L lent,
	 * R returning, A alone), and 0/1 for lend, write_mark, clear_mark,
	 * victim; per job S shrink, Q requeue, - neither */
	int want;
	const char *state, *lend, *mark, *clear, *victim, *jobs_do;
	bool changed, busy;
} rcase_t;

/* one case per block, fields grouped as they are read */
/* clang-format off */
static const rcase_t cases[] = {
	{ .name = "idle nodes are lent from the end, marks written",
	  .n_nodes = 4, .nodes = { { IDLE }, { IDLE }, { IDLE }, { IDLE } },
	  .demand = 0.5, .peak = 0.5, .headroom = 1, .want = 2,
	  .state = "HHLL", .lend = "0011", .mark = "0011", .clear = "0000",
	  .victim = "0000", .jobs_do = "", .changed = true },
	{ .name = "the peak demand over LoanLendHold keeps nodes home",
	  .n_nodes = 4, .nodes = { { IDLE }, { IDLE }, { IDLE }, { IDLE } },
	  .demand = 0.5, .peak = 2.5, .headroom = 1, .want = 2,
	  .state = "HHHH", .lend = "0000", .mark = "0000", .clear = "0000",
	  .victim = "0000", .jobs_do = "" },
	{ .name = "busy, down or admin-commented nodes are never lent",
	  .n_nodes = 4,
	  .nodes = { { IDLE }, { IDLE, .other_jobs = true },
		     { .free_comment = true }, { .up = true } },
	  .demand = 0, .peak = 0, .headroom = 0, .want = 0,
	  .state = "LHHH", .lend = "1000", .mark = "1000", .clear = "0000",
	  .victim = "0000", .jobs_do = "", .changed = true },
	{ .name = "a fresh lent node is kept without a rewrite",
	  .n_nodes = 2, .nodes = { { IDLE }, { IDLE, .in_train = true, FRESH } },
	  .demand = 0, .peak = 1, .headroom = 0, .want = 0,
	  .state = "HL", .lend = "01", .mark = "00", .clear = "00",
	  .victim = "00", .jobs_do = "" },
	{ .name = "crash: an expired heartbeat on a kept loan is renewed",
	  .n_nodes = 2, .nodes = { { IDLE }, { IDLE, .in_train = true, EXPIRED } },
	  .demand = 0, .peak = 1, .headroom = 0, .want = 0,
	  .state = "HL", .lend = "01", .mark = "01", .clear = "00",
	  .victim = "00", .jobs_do = "" },
	{ .name = "crash: marked, out of the partition, no borrower: home",
	  .n_nodes = 2, .nodes = { { IDLE }, { IDLE, FRESH } },
	  .demand = 1, .peak = 1, .headroom = 1, .want = 2,
	  .state = "HH", .lend = "00", .mark = "00", .clear = "01",
	  .victim = "00", .jobs_do = "" },
	{ .name = "crash: a returned mark with no borrower is cleared and lent",
	  .n_nodes = 2, .nodes = { { IDLE }, { IDLE, RETURNED } },
	  .demand = 0, .peak = 0, .headroom = 1, .want = 1,
	  .state = "HL", .lend = "01", .mark = "01", .clear = "01",
	  .victim = "00", .jobs_do = "", .changed = true },
	{ .name = "crash: out of the partition with borrowers, needed: finish",
	  .n_nodes = 2, .nodes = { { IDLE }, { IDLE, FRESH, .n_borrowers = 1 } },
	  .n_jobs = 1, .jobs = { { .n = 1, .nodes = { 1 }, .gpus = 8,
				   .run_s = 600, .requeue = true, .batch = 1 } },
	  .demand = 1, .peak = 1, .headroom = 1, .want = 2,
	  .state = "HR", .lend = "00", .mark = "00", .clear = "00",
	  .victim = "01", .jobs_do = "Q", .busy = true },
	{ .name = "crash: out of the partition with borrowers, not needed: lent again",
	  .n_nodes = 2, .nodes = { { IDLE }, { IDLE, EXPIRED, .n_borrowers = 1 } },
	  .n_jobs = 1, .jobs = { { .n = 1, .nodes = { 1 }, .gpus = 8,
				   .run_s = 600, .requeue = true, .batch = 1 } },
	  .demand = 0, .peak = 0, .headroom = 1, .want = 1,
	  .state = "HL", .lend = "01", .mark = "01", .clear = "00",
	  .victim = "00", .jobs_do = "-", .changed = true },
	{ .name = "crash: a pinned returning node is neither finished nor lent",
	  .n_nodes = 2,
	  .nodes = { { IDLE }, { IDLE, FRESH, .n_borrowers = 1, .pinned = true } },
	  .n_jobs = 1, .jobs = { { .n = 1, .nodes = { 1 }, .gpus = 8,
				   .run_s = 600, .batch = 1 } },
	  .demand = 1, .peak = 1, .headroom = 1, .want = 2,
	  .state = "HR", .lend = "00", .mark = "00", .clear = "00",
	  .victim = "00", .jobs_do = "-", .busy = true },
	{ .name = "crash: in the partition without a mark: left alone",
	  .n_nodes = 3,
	  .nodes = { { IDLE }, { IDLE }, { IDLE, .in_train = true, .n_borrowers = 1 } },
	  .n_jobs = 1, .jobs = { { .n = 1, .nodes = { 2 }, .gpus = 8,
				   .run_s = 600, .requeue = true, .batch = 2 } },
	  .demand = -1, .peak = -1, .headroom = 0, .want = 2,
	  .state = "HHA", .lend = "001", .mark = "000", .clear = "000",
	  .victim = "000", .jobs_do = "-" },
	{ .name = "reclaim: the idle lent node goes back at no cost",
	  .n_nodes = 3,
	  .nodes = { { IDLE }, { IDLE, .in_train = true, FRESH, .n_borrowers = 1 },
		     { IDLE, .in_train = true, FRESH } },
	  .n_jobs = 1, .jobs = { { .n = 1, .nodes = { 1 }, .gpus = 8,
				   .run_s = 3600, .requeue = true, .batch = 1 } },
	  .demand = 1.5, .peak = 1.5, .headroom = 0, .want = 2,
	  .state = "HLR", .lend = "010", .mark = "000", .clear = "000",
	  .victim = "001", .jobs_do = "-", .changed = true, .busy = true },
	{ .name = "reclaim: the cheaper victim is requeued, the no-requeue job spared",
	  .n_nodes = 4,
	  .nodes = { { IDLE }, { IDLE, .in_train = true, FRESH, .n_borrowers = 1 },
		     { IDLE, .in_train = true, FRESH, .n_borrowers = 1 },
		     { IDLE, .in_train = true, FRESH, .n_borrowers = 1, .pinned = true } },
	  .n_jobs = 3,
	  .jobs = { { .n = 1, .nodes = { 1 }, .gpus = 8, .run_s = 7200,
		      .requeue = true, .batch = 1 },
		    { .n = 1, .nodes = { 2 }, .gpus = 8, .run_s = 600,
		      .requeue = true, .batch = 2 },
		    { .n = 1, .nodes = { 3 }, .gpus = 1, .run_s = 60, .batch = 3 } },
	  .demand = 2, .peak = 2, .headroom = 0, .want = 2,
	  .state = "HLRL", .lend = "0101", .mark = "0000", .clear = "0000",
	  .victim = "0010", .jobs_do = "-Q-", .changed = true, .busy = true },
	{ .name = "reclaim: an elastic job shrinks off the node, batch host kept",
	  .n_nodes = 3,
	  .nodes = { { IDLE }, { IDLE, .in_train = true, FRESH, .n_borrowers = 1 },
		     { IDLE, .in_train = true, FRESH, .n_borrowers = 1 } },
	  .n_jobs = 1,
	  .jobs = { { .n = 2, .nodes = { 1, 2 }, .gpus = 16, .run_s = 3600,
		      .requeue = true, .elastic = true, .min_nodes = 1,
		      .total_nodes = 2, .batch = 1 } },
	  .demand = 2, .peak = 2, .headroom = 0, .want = 2,
	  .state = "HLR", .lend = "010", .mark = "000", .clear = "000",
	  .victim = "001", .jobs_do = "S", .changed = true, .busy = true },
	{ .name = "slurmctld restart: home nodes not yet registered count, borrowers kept",
	  .n_nodes = 4,
	  .nodes = { { IDLE, .registering = true }, { IDLE, .registering = true },
		     { IDLE, FRESH, .n_borrowers = 1 }, { IDLE, FRESH, .n_borrowers = 1 } },
	  .n_jobs = 2, .jobs = { { .n = 1, .nodes = { 2 }, .gpus = 8,
				   .run_s = 600, .requeue = true, .batch = 2 },
				 { .n = 1, .nodes = { 3 }, .gpus = 8,
				   .run_s = 600, .requeue = true, .batch = 3 } },
	  .demand = 1, .peak = 1, .headroom = 1, .want = 2,
	  .state = "HHLL", .lend = "0011", .mark = "0000", .clear = "0000",
	  .victim = "0000", .jobs_do = "--", .changed = true },
	{ .name = "a node not yet registered is never lent, nor counted for a loan",
	  .n_nodes = 3,
	  .nodes = { { IDLE }, { IDLE }, { IDLE, .registering = true } },
	  .demand = 0, .peak = 0, .headroom = 1, .want = 1,
	  .state = "HLH", .lend = "010", .mark = "010", .clear = "000",
	  .victim = "000", .jobs_do = "", .changed = true },
	{ .name = "unknown demand: every lent node comes home",
	  .n_nodes = 3,
	  .nodes = { { IDLE }, { IDLE, .in_train = true, FRESH, .n_borrowers = 1 },
		     { IDLE, .in_train = true, FRESH } },
	  .n_jobs = 1, .jobs = { { .n = 1, .nodes = { 1 }, .gpus = 8,
				   .run_s = 3600, .requeue = true, .batch = 1 } },
	  .demand = -1, .peak = -1, .headroom = 0, .want = 3,
	  .state = "HRR", .lend = "000", .mark = "000", .clear = "000",
	  .victim = "011", .jobs_do = "Q", .changed = true, .busy = true },
};
/* clang-format on */

static char state_char(pol_loan_node_state_t s)
{
	return "HLRA"[s];
}

/* The round's input for a case; jobs gets its jobs. */
static pol_loan_round_in_t case_input(const rcase_t *c,
				      pol_loan_round_job_t *jobs)
{
	for (int j = 0; j < c->n_jobs; j++) {
		const jspec_t *s = &c->jobs[j];

		jobs[j] = (pol_loan_round_job_t){
			.id = 100 + j,
			.gpus = s->gpus,
			.start = NOW - s->run_s,
			.requeue = s->requeue,
			.n_nodes = s->n,
			.nodes = s->nodes,
			.elastic = s->elastic,
			.min_nodes = s->min_nodes,
			.total_nodes = s->total_nodes ? s->total_nodes : s->n,
			.batch = s->batch,
		};
	}
	return (pol_loan_round_in_t){ .nodes = c->nodes,
				      .n_nodes = c->n_nodes,
				      .jobs = jobs,
				      .n_jobs = c->n_jobs,
				      .demand = c->demand,
				      .demand_peak = c->peak,
				      .headroom = c->headroom,
				      .now = NOW,
				      .lease_timeout_s = TO,
				      .fewest_first = true };
}

static void run_case(const rcase_t *c)
{
	pol_loan_round_job_t jobs[MAXJ];
	pol_loan_round_node_out_t on[MAXN] = { 0 };
	pol_loan_round_job_out_t oj[MAXJ];
	pol_loan_round_out_t out = { .nodes = on, .jobs = oj };
	pol_loan_round_in_t in = case_input(c, jobs);
	char st[MAXN + 1] = "", ln[MAXN + 1] = "", mk[MAXN + 1] = "",
		       cl[MAXN + 1] = "", vi[MAXN + 1] = "", jd[MAXJ + 1] = "";

	assert_int_equal(pol_loan_round(&in, &out), 0);
	for (int i = 0; i < c->n_nodes; i++) {
		st[i] = state_char(on[i].state);
		ln[i] = on[i].lend ? '1' : '0';
		mk[i] = on[i].write_mark ? '1' : '0';
		cl[i] = on[i].clear_mark ? '1' : '0';
		vi[i] = on[i].victim ? '1' : '0';
		if (on[i].newly_lent)
			assert_true(on[i].since == NOW);
	}
	for (int j = 0; j < c->n_jobs; j++)
		jd[j] = oj[j].shrink ? 'S' : oj[j].requeue ? 'Q' : '-';
	print_message("# %s\n", c->name);
	assert_int_equal(out.want, c->want);
	assert_string_equal(st, c->state);
	assert_string_equal(ln, c->lend);
	assert_string_equal(mk, c->mark);
	assert_string_equal(cl, c->clear);
	assert_string_equal(vi, c->victim);
	assert_string_equal(jd, c->jobs_do);
	assert_int_equal(out.changed, c->changed);
	assert_int_equal(out.busy, c->busy);
}

static void test_loan_round_table(void **state)
{
	(void) state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		run_case(&cases[i]);
}

static void test_loan_round_classify_crash_orders(void **state)
{
	static const struct {
		pol_loan_round_node_t n;
		pol_loan_node_state_t want;
	} t[] = {
		{ { .up = true }, POL_LOAN_NODE_HOME },
		{ { .in_train = true, FRESH }, POL_LOAN_NODE_LENT },
		{ { .in_train = true, EXPIRED }, POL_LOAN_NODE_LENT },
		{ { .in_train = true }, POL_LOAN_NODE_ALONE },
		{ { FRESH }, POL_LOAN_NODE_RETURNING },
		{ { RETURNED }, POL_LOAN_NODE_RETURNING },
		{ { .n_borrowers = 2 }, POL_LOAN_NODE_RETURNING },
	};

	(void) state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		assert_int_equal(pol_loan_round_classify(&t[i].n), t[i].want);
}

/* The reclaim's view is reported for the log and the history: the
 * candidates' costs, the chosen node, the victim with its cost, and the
 * other orders' costs. */
static void test_loan_round_reclaim_report(void **state)
{
	const rcase_t *c = &cases[12];
	pol_loan_round_job_t jobs[MAXJ];
	pol_loan_round_node_out_t on[MAXN] = { 0 };
	pol_loan_round_job_out_t oj[MAXJ];
	pol_loan_round_out_t out = { .nodes = on, .jobs = oj };
	pol_loan_round_in_t in = case_input(c, jobs);

	(void) state;
	assert_int_equal(pol_loan_round(&in, &out), 0);
	assert_true(out.reclaim);
	assert_int_equal(out.need, 1);
	assert_int_equal(out.n_candidates, 3);
	assert_int_equal(out.choice.returned, 1);
	assert_true(on[1].candidate && on[2].candidate && on[3].candidate);
	assert_false(on[0].candidate);
	assert_true(on[2].reclaimed && !on[1].reclaimed && !on[3].reclaimed);
	assert_true(on[3].fixed && !on[2].fixed);
	/* 8 GPUs x (600 s + 0 restart) / 3600 */
	assert_true(on[2].cost > 1.33 && on[2].cost < 1.34);
	assert_int_equal(oj[1].reclaim_action, POL_LOAN_PREEMPT);
	assert_int_equal(oj[0].reclaim_action, POL_LOAN_KEEP);
	assert_true(out.choice.cost > 1.33 && out.choice.cost < 1.34);
	assert_true(out.cost_slurm >= out.choice.cost);
	assert_true(out.cost_recent >= 0);
}

static void test_loan_round_bad_input(void **state)
{
	pol_loan_round_node_t n[1] = { { IDLE } };
	int bad[] = { 3 };
	pol_loan_round_job_t j[1] = { { .n_nodes = 1, .nodes = bad } };
	pol_loan_round_node_out_t on[1];
	pol_loan_round_job_out_t oj[1];
	pol_loan_round_out_t out = { .nodes = on, .jobs = oj };
	pol_loan_round_in_t in = {
		.nodes = n, .n_nodes = 1, .jobs = j, .n_jobs = 1, .now = NOW
	};

	(void) state;
	errno = 0;
	assert_int_equal(pol_loan_round(&in, &out), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(pol_loan_round(NULL, &out), -1);
	in.n_jobs = 0;
	out.nodes = NULL;
	assert_int_equal(pol_loan_round(&in, &out), -1);
}

/* Two home nodes, two lent ones each with an 8-GPU borrower: job 100 on
 * node 2 ran 1,700 s (its checkpoint, every 1,800 s, is 100 s away), job
 * 101 on node 3 ran 1,000 s. */
static pol_loan_round_in_t wait_input(pol_loan_round_node_t *n,
				      pol_loan_round_job_t *j, int64_t now)
{
	static const int on2[] = { 2 }, on3[] = { 3 };
	const pol_loan_round_node_t idle = { IDLE };
	const pol_loan_round_node_t lent = { IDLE, .in_train = true, FRESH,
					     .n_borrowers = 1 };

	n[0] = n[1] = idle;
	n[2] = n[3] = lent;
	j[0] = (pol_loan_round_job_t){ .id = 100,
				       .gpus = 8,
				       .start = NOW - 1700,
				       .requeue = true,
				       .n_nodes = 1,
				       .nodes = on2,
				       .batch = 2 };
	j[1] = j[0];
	j[1].id = 101;
	j[1].start = NOW - 1000;
	j[1].nodes = on3;
	j[1].batch = 3;
	return (pol_loan_round_in_t){ .nodes = n,
				      .n_nodes = 4,
				      .jobs = j,
				      .n_jobs = 2,
				      .demand = 0.5,
				      .demand_peak = 0.5,
				      .headroom = 2,
				      .now = now,
				      .lease_timeout_s = TO,
				      .ckpt_s = 1800,
				      .fewest_first = true,
				      .ckpt_wait_s = 900,
				      .step_s = 60 };
}

/* A reclaim with a home node to spare waits for the cheaper victim's
 * checkpoint, then takes it; without a spare node, past the wait, or with
 * the wait off, it takes the cheapest victim now. */
static void test_loan_round_ckpt_wait(void **state)
{
	pol_loan_round_node_t n[4];
	pol_loan_round_job_t j[2];
	pol_loan_round_node_out_t on[4];
	pol_loan_round_job_out_t oj[2];
	pol_loan_round_out_t out = { .nodes = on, .jobs = oj };
	pol_loan_round_in_t in = wait_input(n, j, NOW);

	(void) state;
	/* want 3 home of 2; 2 home >= ceil(0.5) + 1: it may wait.  Now job
	 * 101 is the cheaper victim (2.2 GPU-h against 3.8); 120 s on, job
	 * 100 has checkpointed and loses 20 s of 8 GPUs */
	assert_int_equal(pol_loan_round(&in, &out), 0);
	assert_int_equal(out.want, 3);
	assert_int_equal(out.wait_s, 120);
	assert_int_equal(out.wait_max_s, 900);
	assert_int_equal(out.wait_since, NOW);
	assert_false(out.reclaim);
	assert_true(out.busy);
	assert_false(on[2].victim || on[3].victim);
	assert_false(oj[0].requeue || oj[1].requeue);
	/* a round later the wait goes on from when it began */
	in = wait_input(n, j, NOW + 60);
	in.wait_since = NOW;
	assert_int_equal(pol_loan_round(&in, &out), 0);
	assert_int_equal(out.wait_s, 60);
	assert_int_equal(out.wait_max_s, 840);
	assert_int_equal(out.wait_since, NOW);
	/* 120 s on: job 100 goes, losing 20 s since its checkpoint */
	in = wait_input(n, j, NOW + 120);
	in.wait_since = NOW;
	assert_int_equal(pol_loan_round(&in, &out), 0);
	assert_int_equal(out.wait_s, 0);
	assert_int_equal(out.wait_since, 0);
	assert_true(out.reclaim);
	assert_true(on[2].victim && !on[3].victim);
	assert_true(oj[0].requeue && !oj[1].requeue);
	assert_true(out.choice.cost > 0.04 && out.choice.cost < 0.05);
	/* no node to spare (2 home < ceil(1.5) + 1): job 101 now */
	in = wait_input(n, j, NOW);
	in.demand = in.demand_peak = 1.5;
	in.headroom = 1;
	assert_int_equal(pol_loan_round(&in, &out), 0);
	assert_int_equal(out.want, 3);
	assert_int_equal(out.wait_s, 0);
	assert_true(on[3].victim && !on[2].victim);
	/* the wait is spent: job 101 now */
	in = wait_input(n, j, NOW);
	in.wait_since = NOW - 900;
	assert_int_equal(pol_loan_round(&in, &out), 0);
	assert_int_equal(out.wait_s, 0);
	assert_true(on[3].victim && !on[2].victim);
	/* the wait off, or no checkpoint model: job 101 now */
	in = wait_input(n, j, NOW);
	in.ckpt_wait_s = 0;
	assert_int_equal(pol_loan_round(&in, &out), 0);
	assert_true(on[3].victim && !on[2].victim);
	in = wait_input(n, j, NOW);
	in.ckpt_s = 0;
	assert_int_equal(pol_loan_round(&in, &out), 0);
	assert_true(on[3].victim || on[2].victim);
	assert_int_equal(out.wait_s, 0);
}

/* A rising demand: with no node short, the nodes its projection wants
 * come back at the cheapest step within a checkpoint interval, and none
 * is lent until a lend hold after the rise was last seen. */
static void test_loan_round_reclaim_ahead(void **state)
{
	pol_loan_round_node_t n[4];
	pol_loan_round_job_t j[2];
	pol_loan_round_node_out_t on[4];
	pol_loan_round_job_out_t oj[2];
	pol_loan_round_out_t out = { .nodes = on, .jobs = oj };
	pol_loan_round_in_t in = wait_input(n, j, NOW);

	(void) state;
	in.headroom = 1; /* want 2: none short */
	in.lend_hold_s = 1800;
	assert_int_equal(pol_loan_round(&in, &out), 0);
	assert_false(out.reclaim || out.ahead);
	assert_int_equal(out.lent, 0);
	/* the projection wants ceil(1.5) + 1 = 3 home: job 100's checkpoint
	 * is 120 s away, so it waits */
	in.demand_ahead = 1.5;
	assert_int_equal(pol_loan_round(&in, &out), 0);
	assert_true(out.ahead);
	assert_int_equal(out.wait_s, 120);
	assert_int_equal(out.wait_max_s, 1800);
	assert_int_equal(out.ahead_keep, 3);
	assert_int_equal(out.ahead_until, NOW + 1800);
	assert_false(out.reclaim || on[2].victim || on[3].victim);
	in = wait_input(n, j, NOW + 120);
	in.headroom = 1;
	in.lend_hold_s = 1800;
	in.demand_ahead = 1.5;
	assert_int_equal(pol_loan_round(&in, &out), 0);
	assert_true(out.ahead && out.reclaim);
	assert_true(on[2].victim && !on[3].victim);
	assert_true(oj[0].requeue && !oj[1].requeue);
	/* node 2 home, the rise gone: the three are kept until the hold
	 * ends, then one is lent */
	n[2] = n[0];
	in.n_jobs = 1;
	in.jobs = &j[1];
	in.demand_ahead = 0;
	in.ahead_keep = 3;
	in.ahead_until = NOW + 1800;
	in.now = NOW + 1799;
	assert_int_equal(pol_loan_round(&in, &out), 0);
	assert_int_equal(out.lent, 0);
	assert_int_equal(out.ahead_keep, 3);
	in.now = NOW + 1800;
	assert_int_equal(pol_loan_round(&in, &out), 0);
	assert_int_equal(out.lent, 1);
	/* a projection that still wants the three keeps them, hold or not */
	in.demand_ahead = 1.2;
	assert_int_equal(pol_loan_round(&in, &out), 0);
	assert_int_equal(out.lent, 0);
	assert_false(out.ahead);
	/* the round after the reclaim ahead: node 2 returning, job 100 still
	 * leaving it; the projection still wants it, so it is not lent again
	 * (nor taken twice); once the rise is over it is */
	in = wait_input(n, j, NOW + 125);
	n[2].in_train = false;
	in.headroom = 1;
	in.lend_hold_s = 1800;
	in.demand_ahead = 1.5;
	assert_int_equal(pol_loan_round(&in, &out), 0);
	assert_int_equal(on[2].state, POL_LOAN_NODE_RETURNING);
	assert_false(on[2].lend || on[2].relent || on[2].victim);
	assert_false(out.reclaim || out.ahead);
	assert_int_equal(out.lent, 0);
	in.demand_ahead = 0;
	assert_int_equal(pol_loan_round(&in, &out), 0);
	assert_true(on[2].relent && on[2].lend);
	/* without the wait there is no reclaim ahead */
	in = wait_input(n, j, NOW);
	in.headroom = 1;
	in.demand_ahead = 1.5;
	in.ckpt_wait_s = 0;
	assert_int_equal(pol_loan_round(&in, &out), 0);
	assert_false(out.ahead || out.reclaim);
}

#define H POL_LOAN_NODE_HOME
#define L POL_LOAN_NODE_LENT
#define R POL_LOAN_NODE_RETURNING

static void test_loan_reclaim_progress(void **state)
{
	static const struct {
		int n;
		pol_loan_node_state_t st[3];
		int64_t age;
		bool report;
		pol_loan_reclaim_progress_t want;
		int lent_again;
	} t[] = {
		{ 2, { H, H }, 5, true, POL_LOAN_RECLAIM_DONE, -1 },
		{ 0, { H }, 5, true, POL_LOAN_RECLAIM_DONE, -1 },
		{ 2, { H, R }, 5, true, POL_LOAN_RECLAIM_WAITING, -1 },
		{ 2, { H, R }, 61, true, POL_LOAN_RECLAIM_LATE, -1 },
		{ 2, { H, R }, 61, false, POL_LOAN_RECLAIM_WAITING, -1 },
		{ 2, { H, R }, 60, true, POL_LOAN_RECLAIM_WAITING, -1 },
		{ 3, { H, L, R }, 5, true, POL_LOAN_RECLAIM_CANCELLED, 1 },
		/* the first node not home decides */
		{ 3, { R, L, H }, 5, true, POL_LOAN_RECLAIM_WAITING, -1 },
	};

	(void) state;
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		int lent = -1;

		assert_int_equal(pol_loan_reclaim_progress(t[i].st, t[i].n, NOW,
							   NOW + t[i].age, 60,
							   t[i].report, &lent),
				 t[i].want);
		assert_int_equal(lent, t[i].lent_again);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loan_round_table),
		cmocka_unit_test(test_loan_round_classify_crash_orders),
		cmocka_unit_test(test_loan_round_reclaim_report),
		cmocka_unit_test(test_loan_round_bad_input),
		cmocka_unit_test(test_loan_round_ckpt_wait),
		cmocka_unit_test(test_loan_round_reclaim_ahead),
		cmocka_unit_test(test_loan_reclaim_progress),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
