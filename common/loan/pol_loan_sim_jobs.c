/*
 * pol_loan_sim_jobs.c - the loaning scenario's jobs (pol_loan_sim.c): the
 * pending queue in submit order, starting, releasing, preempting and
 * resizing runs with the checkpoint model's lost progress, and the
 * placement helpers (best fit on one node, whole free nodes, which jobs
 * may borrow loaned nodes).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define POL_LOAN_SIM_STATE
#include "pol_loan_sim_int.h"

/* ---- pending queue ---- */

static bool pend_before(const sim_t *s, int a, int b)
{
	const sj_t *x = &s->jobs[a], *y = &s->jobs[b];

	if (x->in->submit != y->in->submit)
		return x->in->submit < y->in->submit;
	return a < b;
}

void pend_add(sim_t *s, int j)
{
	int i = s->npend;

	while (i > 0 && pend_before(s, j, s->pend[i - 1])) {
		s->pend[i] = s->pend[i - 1];
		i--;
	}
	s->pend[i] = j;
	s->npend++;
	s->jobs[j].state = J_PENDING;
	s->dirty = true;
}

void pend_del(sim_t *s, int at)
{
	memmove(&s->pend[at], &s->pend[at + 1],
		sizeof(int) * (size_t) (s->npend - at - 1));
	s->npend--;
}

static void run_del(sim_t *s, int j)
{
	int i;

	for (i = 0; i < s->nrun; i++)
		if (s->run[i] == j) {
			s->run[i] = s->run[--s->nrun];
			return;
		}
}

/* ---- runs ---- */

/* the lowest `use` GPUs of node v that are free */
static pol_gpumask_t pick_gpus(const sim_t *s, int v, int use)
{
	pol_gpumask_t m = 0;
	int g;

	for (g = 0; g < s->gpn && use > 0; g++)
		if (!(s->used[v] & ((pol_gpumask_t) 1 << g))) {
			m |= (pol_gpumask_t) 1 << g;
			use--;
		}
	return m;
}

void start(sim_t *s, int ji, const int *nodes, int n)
{
	sj_t *j = &s->jobs[ji];
	int i;

	/* a job of part of one node gets GPUs of its node; whole-node jobs
	 * get all of each node's */
	j->gm = n > 0 ? pick_gpus(s, nodes[0], j->use) : 0;
	for (i = 0; i < n; i++) {
		j->nodes[i] = nodes[i];
		s->freeg[nodes[i]] -= j->use;
		s->used[nodes[i]] |= j->gm;
	}
	j->n = n;
	j->rate = rate_of(s, j, n);
	j->overhead = j->oh_run = j->ran ? (double) s->p->restart_s : 0;
	j->run_start = s->now;
	j->work0 = j->work;
	if (j->first_start < 0)
		j->first_start = s->now;
	j->ran = true;
	j->state = J_RUNNING;
	s->run[s->nrun++] = ji;
}

/* release every node of j */
void release(sim_t *s, sj_t *j)
{
	int i;

	for (i = 0; i < j->n; i++) {
		s->freeg[j->nodes[i]] += j->use;
		s->used[j->nodes[i]] &= ~j->gm;
	}
	j->n = 0;
	s->dirty = true;
}

/* the progress of j's current run lost if it stopped now */
static double progress_lost(const sim_t *s, const sj_t *j)
{
	double el = s->now - j->run_start, tc, kept;
	double prog = j->work0 - j->work;

	if (s->p->ckpt_s < 0)
		return 0;
	if (s->p->ckpt_s == 0)
		return prog;
	tc = floor(el / (double) s->p->ckpt_s) * (double) s->p->ckpt_s;
	kept = j->rate * (tc - j->oh_run);
	if (kept < 0)
		kept = 0;
	if (kept > prog)
		kept = prog;
	return prog - kept;
}

double last_save(const sim_t *s, const sj_t *j)
{
	double ok = j->run_start + j->oh_run, c = (double) s->p->ckpt_s, tc;

	if (s->p->ckpt_s < 0)
		return s->now >= ok ? s->now : -1;
	if (s->p->ckpt_s == 0)
		return -1;
	tc = j->run_start + floor((s->now - j->run_start) / c) * c;
	return tc > j->run_start && tc >= ok ? tc : -1;
}

void preempt(sim_t *s, int ji, bool reclaim)
{
	sj_t *j = &s->jobs[ji];
	double lost = progress_lost(s, j), gh = 0;

	if (s->p->ckpt_s == 0)
		lost = j->in->duration - j->work; /* all progress of all runs */
	if (j->rate > 0)
		gh = gpus_held(j) * (lost / j->rate) / 3600.0;
	if (in_win(s) && reclaim) {
		s->r->preemptions++;
		s->r->gpu_hours_lost += gh;
	} else if (in_win(s)) {
		s->m.sched_preemptions++;
		s->m.sched_gpu_hours_lost += gh;
	}
	j->stale = last_save(s, j) >= j->run_start ? 1 : j->stale + 1;
	j->work += lost;
	j->preempted++;
	j->repeat = reclaim;
	release(s, j);
	run_del(s, ji);
	pend_add(s, ji);
}

/* a resize: a checkpoint, then a restart on nodes[0..n) */
void resize(sim_t *s, int ji, const int *nodes, int n)
{
	sj_t *j = &s->jobs[ji];
	int keep[64] = { 0 }, i;

	if (n > 64)
		n = 64;
	for (i = 0; i < n; i++)
		keep[i] = nodes[i];
	release(s, j);
	run_del(s, ji);
	start(s, ji, keep, n);
}

/* ---- placement ---- */

int best_fit(const sim_t *s, int g, int st)
{
	int i, best = -1;

	for (i = 0; i < s->N; i++)
		if (s->nstate[i] == st && s->freeg[i] >= g &&
		    (best < 0 || s->freeg[i] < s->freeg[best]))
			best = i;
	return best;
}

/* up to want whole free nodes, training nodes first */
int whole_nodes(const sim_t *s, bool loaned_ok, int *out, int want)
{
	int i, c = 0, pass;

	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < s->N && c < want; i++)
			if (s->nstate[i] == (pass ? N_LOANED : N_TRAIN) &&
			    (pass == 0 || (loaned_ok && !s->draining[i])) &&
			    s->freeg[i] == s->gpn)
				out[c++] = i;
	return c;
}

/* may job j start on loaned nodes now */
bool may_borrow(const sim_t *s, const sj_t *j)
{
	if (s->v == POL_LOAN_V_NONE || !j->in->requeue)
		return false;
	if (s->pol.borrow_elastic_only && !j->elastic)
		return false;
	if (!s->pol.borrow_ends_first || s->borrow_until == INFINITY)
		return true;
	return s->now + pol_loan_left_attained(j->run_s, j->limit) <=
	       s->borrow_until;
}
