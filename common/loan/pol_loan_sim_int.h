/*
 * pol_loan_sim_int.h - the loaning scenario's state, shared by
 * pol_loan_sim.c (the pending queue, runs, placement, time, the
 * scenario loop) and pol_loan_sim_steps.c (the poll's steps: elastic
 * grow and shrink, lending and reclaiming inference nodes).  Not part of
 * the API: include pol_loan.h instead.
 */
#ifndef POL_LOAN_SIM_INT_H
#define POL_LOAN_SIM_INT_H

#include "pol_loan.h"

#define EPS 1e-6

enum { J_FUTURE, J_PENDING, J_RUNNING, J_DONE, J_SKIPPED };
enum { N_TRAIN, N_INFER, N_LOANED, N_RETURNING };

typedef struct sj {
	const pol_loan_sim_job_t *in;
	int idx, state;
	int k;   /* requested whole nodes; 0: a part of one node */
	int use; /* GPUs used per node */
	int min_n, max_n;
	bool elastic;
	int n;        /* nodes held */
	int *nodes;   /* max_n (or 1) entries */
	double work;  /* remaining, s at the requested size */
	double work0; /* remaining when this run started */
	double rate, overhead, oh_run, run_start;
	double first_start, finish, run_s;
	bool ran;
	int preempted;
} sj_t;

typedef struct sim {
	const pol_loan_sim_params_t *p;
	pol_loan_variant_t v;
	pol_loan_sim_result_t *r;
	int N, T, gpn;
	int *nstate, *freeg;
	double *back_at;
	sj_t *jobs;
	int n;
	int *pend, npend; /* indices by (submit, index) */
	int *run, nrun;
	double now, t_from, t_to;
	double demand; /* at the last poll */
	double *hist;  /* demand at the last polls, a ring */
	int nhist, hpos;
	double unmet_since;
	bool unmet_counted;
	bool dirty; /* a pass may start something */
} sim_t;

static inline bool in_win(const sim_t *s)
{
	return s->now >= s->t_from && s->now < s->t_to;
}

static inline int gpus_held(const sj_t *j)
{
	return j->n * j->use;
}

static inline double rate_of(const sim_t *s, const sj_t *j, int n)
{
	if (!j->elastic || j->k <= 0)
		return 1.0;
	return pol_loan_speedup(n * s->gpn, s->p->serial) /
	       pol_loan_speedup(j->k * s->gpn, s->p->serial);
}

static inline int count_state(const sim_t *s, int st)
{
	int i, c = 0;

	for (i = 0; i < s->N; i++)
		c += s->nstate[i] == st;
	return c;
}

/* pol_loan_sim.c: stop job ji and requeue it, its progress since the last
 * checkpoint lost */
void preempt(sim_t *s, int ji);
/* a checkpoint of job ji, then a restart on nodes[0..n) */
void resize(sim_t *s, int ji, const int *nodes, int n);
/* up to want whole free nodes into out, training nodes first */
int whole_nodes(const sim_t *s, bool loaned_ok, int *out, int want);

/* pol_loan_sim_steps.c: give grown nodes back (a job waits) */
void shrink_grown(sim_t *s);
/* grow elastic jobs onto free whole nodes; 0, or -1 out of memory */
int grow(sim_t *s);
/* lend idle inference nodes or reclaim loaned ones to meet demand */
int adjust_loans(sim_t *s);

#endif
