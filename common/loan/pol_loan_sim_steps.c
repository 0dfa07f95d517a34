/*
 * pol_loan_sim_steps.c - the steps of the loaning scenario's poll
 * (pol_loan_sim.c runs the loop): elastic jobs grow onto free whole nodes
 * by the knapsack and give grown nodes back when a job waits; the
 * inference pool lends nodes idle against recent demand and takes them
 * back through pol_loan_reclaim() when demand rises; with a drain-ahead
 * horizon, the loaned nodes a forecast (the demand one day earlier) takes
 * back soon accept no new borrowers.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define POL_LOAN_SIM_STATE
#include "pol_loan_sim_int.h"

/* ---- elastic ---- */

/* give back grown nodes (beyond the request), newest nodes first */
void shrink_grown(sim_t *s)
{
	int i;

	for (i = 0; i < s->nrun; i++) {
		int ji = s->run[i];
		sj_t *j = &s->jobs[ji];

		if (!j->elastic || j->n <= j->k)
			continue;
		resize(s, ji, j->nodes, j->k);
		if (in_win(s)) {
			s->r->shrinks++;
			s->m.grown_back++;
		}
		i = -1; /* run[] was reordered */
	}
}

/* j's compute time left at its current size, as grow() estimates it */
static double left_estimate(const sim_t *s, const sj_t *j)
{
	if (s->pol.grow_estimate == POL_LOAN_EST_ORACLE)
		return j->work / j->rate;
	return pol_loan_left_attained(j->run_s, j->limit);
}

int grow(sim_t *s)
{
	int *free_nodes = NULL, *who = NULL, *extra = NULL, i, cap, ng = 0;
	int used = 0, rc = -1;
	pol_loan_grow_job_t *g = NULL;

	free_nodes = calloc((size_t) s->N + 1, sizeof(int));
	if (!free_nodes)
		return -1;
	cap = whole_nodes(s, s->v != POL_LOAN_V_NONE, free_nodes, s->N);
	if (cap == 0) {
		free(free_nodes);
		return 0;
	}
	g = calloc((size_t) s->nrun + 1, sizeof(*g));
	who = calloc((size_t) s->nrun + 1, sizeof(int));
	extra = calloc((size_t) s->nrun + 1, sizeof(int));
	if (!g || !who || !extra)
		goto out;
	for (i = 0; i < s->nrun; i++) {
		sj_t *j = &s->jobs[s->run[i]];
		double left;

		if (!j->elastic || j->n >= j->max_n)
			continue;
		/* time left now: a restart still being paid, then the
		 * compute left at this size */
		left = left_estimate(s, j);
		if (j->overhead + left < (double) s->p->min_grow_s)
			continue;
		g[ng].cur = j->n;
		g[ng].max = j->max_n;
		g[ng].left_s = left;
		/* a grow is a checkpoint and a restart: it costs the restart
		 * minus what is left of the one being paid now */
		g[ng].resize_s = (double) s->p->restart_s - j->overhead;
		g[ng].gpn = s->gpn;
		who[ng++] = s->run[i];
	}
	if (ng == 0) {
		rc = 0;
		goto out;
	}
	if (pol_loan_grow(g, ng, cap, s->p->serial, extra, NULL, NULL, NULL))
		goto out;
	for (i = 0; i < ng; i++) {
		sj_t *j = &s->jobs[who[i]];
		int nodes[64], k, n = 0;

		if (extra[i] <= 0)
			continue;
		for (k = 0; k < j->n && n < 64; k++)
			nodes[n++] = j->nodes[k];
		for (k = 0; k < extra[i] && used < cap && n < 64; k++)
			nodes[n++] = free_nodes[used++];
		resize(s, who[i], nodes, n);
		if (in_win(s))
			s->r->grows++;
	}
	rc = 0;
out:
	free(free_nodes);
	free(g);
	free(who);
	free(extra);
	return rc;
}

/* ---- loans ---- */

static pol_loan_order_t order_of(pol_loan_variant_t v)
{
	switch (v) {
	case POL_LOAN_V_SLURM:
		return POL_LOAN_SLURM;
	case POL_LOAN_V_RANDOM:
		return POL_LOAN_RANDOM;
	case POL_LOAN_V_RECENT:
		return POL_LOAN_RECENT;
	default:
		return POL_LOAN_LEAST_COST;
	}
}

/* the fewest victims that meet in (unit costs, GPU-hours lost break ties;
 * no repeat rule) into s->m.fewest_victims */
static int fewest_bound(sim_t *s, const pol_loan_reclaim_in_t *in)
{
	pol_loan_reclaim_in_t u = *in;
	pol_loan_reclaim_out_t o;
	pol_loan_job_t *jobs = calloc((size_t) in->n_jobs + 1, sizeof(*jobs));
	int k, rc = -1;

	memset(&o, 0, sizeof(o));
	o.node_back = calloc((size_t) in->n_loaned + 1, 1);
	o.action = calloc((size_t) in->n_jobs + 1, sizeof(int));
	o.shrink_by = calloc((size_t) in->n_jobs + 1, sizeof(int));
	if (!jobs || !o.node_back || !o.action || !o.shrink_by)
		goto out;
	for (k = 0; k < in->n_jobs; k++) {
		jobs[k] = in->jobs[k];
		jobs[k].cost = 1 + 1e-4 * jobs[k].cost;
		jobs[k].repeat = false;
	}
	u.jobs = jobs;
	u.order = POL_LOAN_LEAST_COST;
	u.mode = POL_LOAN_AUTO;
	if (pol_loan_reclaim(&u, &o))
		goto out;
	s->m.fewest_victims += o.preempted;
	rc = 0;
out:
	free(jobs);
	free(o.node_back);
	free(o.action);
	free(o.shrink_by);
	return rc;
}

/* GPU-hours the victims lose if preempted wait s from now: a victim
 * whose next checkpoint comes first loses only the time since it */
static double lost_after(const sim_t *s, const int *jidx, int nb,
			 const int *act, double wait)
{
	double c = (double) s->p->ckpt_s, lost = 0;
	int k;

	for (k = 0; k < nb; k++) {
		const sj_t *j = &s->jobs[jidx[k]];
		double el = s->now - j->run_start, since;

		if (act[k] != POL_LOAN_PREEMPT)
			continue;
		since = fmod(el, c) + wait;
		if (since >= c)
			since = fmod(el + wait, c);
		lost += gpus_held(j) * (since + (double) s->p->restart_s) /
			3600.0;
	}
	return lost;
}

/* Least-cost waits for checkpoints: while the inference pool still serves
 * its demand with a node to spare, a reclaim may wait up to deadline -
 * grace after it first came up (the node is still back within the
 * deadline).  The end of that wait, or -1 when it may not wait. */
static double wait_end(sim_t *s)
{
	int ready = count_state(s, N_INFER);

	if (order_of(s->v) != POL_LOAN_LEAST_COST || s->pol.no_ckpt_wait ||
	    s->p->ckpt_s <= 0 || s->p->poll_s <= 0 ||
	    ready < (int) ceil(s->demand - EPS) + 1)
		return -1;
	if (!s->waiting) {
		s->waiting = true;
		s->wait_since = s->now;
	}
	if (s->pol.ckpt_wait_s > 0)
		return s->wait_since + (double) s->pol.ckpt_wait_s;
	return s->wait_since + (double) (s->p->deadline_s - s->p->grace_s);
}

/* the least GPU-hours job k of the candidates loses if preempted at a
 * poll up to end (its cost when it checkpoints before then) */
static double best_cost(const sim_t *s, const int *jidx, int k, double end)
{
	int one = POL_LOAN_PREEMPT;
	double w, best = lost_after(s, &jidx[k], 1, &one, 0);

	for (w = (double) s->p->poll_s; s->now + w <= end + EPS;
	     w += (double) s->p->poll_s) {
		double c = lost_after(s, &jidx[k], 1, &one, w);

		if (c < best)
			best = c;
	}
	return best;
}

/* true: the chosen victims lose fewer GPU-hours at a later poll up to
 * end, after one of them checkpoints: the reclaim waits this poll (the
 * choice is made again at the next) */
static bool ckpt_wait(sim_t *s, const int *jidx, int nb, const int *act,
		      double end)
{
	double now_lost, w, poll = (double) s->p->poll_s;

	if (end < 0)
		return false;
	now_lost = lost_after(s, jidx, nb, act, 0);
	for (w = poll; s->now + w <= end + EPS; w += poll)
		if (lost_after(s, jidx, nb, act, w) < now_lost - EPS) {
			if (in_win(s))
				s->m.ckpt_waits++;
			return true;
		}
	return false;
}

/* the checkpoint wait on the poll and the victims together
 * (pol_loan_reclaim_wait): the wait chosen, 0 to go now, -1 on ENOMEM */
static double joint_wait(sim_t *s, const int *jidx, int nb,
			 const pol_loan_reclaim_in_t *in,
			 pol_loan_reclaim_out_t *out, double end)
{
	int *gpus = calloc((size_t) nb + 1, sizeof(int));
	int64_t *run = calloc((size_t) nb + 1, sizeof(int64_t)), w = -1;
	pol_loan_wait_in_t wi;
	int k;

	if (!gpus || !run)
		goto out;
	for (k = 0; k < nb; k++) {
		const sj_t *j = &s->jobs[jidx[k]];

		gpus[k] = gpus_held(j);
		run[k] = (int64_t) (s->now - j->run_start);
	}
	memset(&wi, 0, sizeof(wi));
	wi.gpus = gpus;
	wi.run_s = run;
	wi.ckpt_s = s->p->ckpt_s;
	wi.restart_s = s->p->restart_s;
	wi.step_s = s->p->poll_s;
	wi.max_wait_s = (int64_t) (end - s->now + EPS);
	if (wi.max_wait_s < 0)
		wi.max_wait_s = 0;
	wi.unit_cost = s->pol.fewest_victims;
	if (pol_loan_reclaim_wait(in, &wi, out, &w))
		w = -1;
out:
	free(gpus);
	free(run);
	return (double) w;
}

/* ahead_end < 0: a reclaim of a shortfall (the wait of wait_end); else a
 * reclaim ahead of a rising demand that may wait until ahead_end */
static int reclaim(sim_t *s, int need, double ahead_end)
{
	int *lidx = NULL, *lnode = NULL, L = 0, i, k, nb = 0, rc = -1;
	int *jn = NULL, *jidx = NULL, *act = NULL, *sby = NULL, tot = 0;
	pol_loan_job_t *b = NULL;
	unsigned char *back = NULL, *had = NULL;
	double end;
	bool waits;
	pol_loan_reclaim_in_t in;
	pol_loan_reclaim_out_t out;

	lidx = calloc((size_t) s->N + 1, sizeof(int));
	lnode = calloc((size_t) s->N + 1, sizeof(int));
	b = calloc((size_t) s->nrun + 1, sizeof(*b));
	jidx = calloc((size_t) s->nrun + 1, sizeof(int));
	act = calloc((size_t) s->nrun + 1, sizeof(int));
	sby = calloc((size_t) s->nrun + 1, sizeof(int));
	back = calloc((size_t) s->N + 1, 1);
	had = calloc((size_t) s->N + 1, 1);
	for (i = 0; i < s->nrun; i++)
		tot += s->jobs[s->run[i]].n;
	end = ahead_end >= 0 ? ahead_end : wait_end(s);
	jn = calloc((size_t) tot + 1, sizeof(int));
	if (!lidx || !lnode || !b || !jidx || !act || !sby || !back || !had ||
	    !jn)
		goto out;
	for (i = 0; i < s->N; i++) {
		lidx[i] = -1;
		if (s->nstate[i] == N_LOANED) {
			lidx[i] = L;
			lnode[L++] = i;
		}
	}
	tot = 0;
	for (i = 0; i < s->nrun; i++) {
		sj_t *j = &s->jobs[s->run[i]];
		pol_loan_job_t *x = &b[nb];
		int on = 0;

		x->nodes = &jn[tot];
		for (k = 0; k < j->n; k++)
			if (lidx[j->nodes[k]] >= 0)
				jn[tot + on++] = lidx[j->nodes[k]];
		if (!on)
			continue;
		x->n_nodes = on;
		tot += on;
		x->id = j->in->id;
		x->start = (int64_t) j->run_start;
		x->cost = pol_loan_preempt_cost(
			gpus_held(j), (int64_t) (s->now - j->run_start),
			s->p->ckpt_s, s->p->restart_s);
		x->requeue = j->in->requeue;
		x->repeat = j->repeat;
		jidx[nb] = s->run[i];
		if (end >= 0 && s->pol.ckpt_wait_per_job)
			x->cost = best_cost(s, jidx, nb, end);
		if (s->pol.fewest_victims &&
		    order_of(s->v) == POL_LOAN_LEAST_COST)
			x->cost = 1 + 1e-4 * x->cost;
		if (j->elastic && s->v == POL_LOAN_V_ELASTIC) {
			x->shrinkable = j->n - j->min_n;
			if (x->shrinkable > on)
				x->shrinkable = on;
		}
		jidx[nb++] = s->run[i];
	}
	memset(&in, 0, sizeof(in));
	in.n_loaned = L;
	in.need = need < L ? need : L;
	in.jobs = b;
	in.n_jobs = nb;
	in.order = order_of(s->v);
	in.mode = POL_LOAN_AUTO;
	in.shrink_first = s->v == POL_LOAN_V_ELASTIC;
	in.fewest_first = !s->pol.any_count;
	in.seed = s->p->seed ^ (uint64_t) s->now;
	memset(&out, 0, sizeof(out));
	out.node_back = back;
	out.action = act;
	out.shrink_by = sby;
	if (end >= 0 && !s->pol.ckpt_wait_per_job) {
		double w = joint_wait(s, jidx, nb, &in, &out, end);

		if (w < 0)
			goto out;
		waits = w > 0;
		if (waits && in_win(s))
			s->m.ckpt_waits++;
	} else {
		if (pol_loan_reclaim(&in, &out))
			goto out;
		waits = ckpt_wait(s, jidx, nb, act, end);
	}
	if (waits) {
		rc = 0;
		goto out;
	}
	if (ahead_end >= 0 && out.returned == 0) {
		rc = 0;
		goto out;
	}
	if (ahead_end >= 0 && in_win(s))
		s->m.ahead_reclaims++;
	s->waiting = false;
	if (in_win(s) && fewest_bound(s, &in))
		goto out;
	/* nodes with jobs wait for the victims' grace; idle ones go now */
	for (k = 0; k < L; k++)
		had[k] = s->freeg[lnode[k]] != s->gpn;
	for (k = 0; k < nb; k++) {
		int ji = jidx[k];
		sj_t *j = &s->jobs[ji];

		if (act[k] == POL_LOAN_PREEMPT) {
			if (in_win(s)) {
				if (j->k == 0)
					s->m.victims_part++;
				else
					s->m.victims_whole++;
			}
			preempt(s, ji, true);
		} else if (act[k] == POL_LOAN_SHRINK) {
			int keep[64], n = 0, q;

			for (q = 0; q < j->n && n < 64; q++)
				if (lidx[j->nodes[q]] < 0 ||
				    !back[lidx[j->nodes[q]]])
					keep[n++] = j->nodes[q];
			resize(s, ji, keep, n);
			if (in_win(s)) {
				s->r->shrinks++;
				s->m.reclaim_shrinks++;
			}
		}
	}
	for (k = 0; k < L; k++) {
		int node = lnode[k];

		if (!back[k])
			continue;
		s->nstate[node] = N_RETURNING;
		s->back_at[node] = s->now +
				   (had[k] ? (double) s->p->grace_s : 0);
	}
	if (in_win(s))
		s->r->reclaims++;
	rc = 0;
out:
	free(lidx);
	free(lnode);
	free(b);
	free(jidx);
	free(act);
	free(sby);
	free(back);
	free(had);
	free(jn);
	return rc;
}

/* reclaim_ahead_s: the nodes held home that the demand's trend needs
 * within reclaim_ahead_s (pol_loan_demand_ahead over the last
 * POL_LOAN_TREND_FIT_S, plus reclaim_ahead_z residual deviations, plus
 * the headroom); -1 when off.  Least-cost only, and only with the
 * checkpoint wait: without a wait there is nothing to gain by reclaiming
 * early */
static int ahead_target(const sim_t *s)
{
	double v[POL_LOAN_TREND_FIT_S / 10 + 1], at;
	int n, k, I = s->N - s->T, target;

	if (s->pol.reclaim_ahead_s <= 0 || s->p->poll_s <= 0 ||
	    order_of(s->v) != POL_LOAN_LEAST_COST || s->pol.no_ckpt_wait ||
	    s->p->ckpt_s <= 0 || s->nday == 0)
		return -1;
	n = (int) (POL_LOAN_TREND_FIT_S / s->p->poll_s);
	if (n > (int) (sizeof(v) / sizeof(v[0])))
		n = (int) (sizeof(v) / sizeof(v[0]));
	if (n > s->nday)
		n = s->nday;
	if (n < 3 || s->polls < n) /* a line and its deviation */
		return -1;
	/* day[(dpos - 1) % nday] is this poll's reading */
	for (k = 0; k < n; k++)
		v[k] = s->day[(s->dpos - n + k + s->nday) % s->nday];
	at = pol_loan_demand_ahead(v, n, (double) s->p->poll_s,
				   (double) s->pol.reclaim_ahead_s,
				   s->pol.reclaim_ahead_z);
	target = (int) ceil(at - EPS) + s->p->headroom;
	return target > I ? I : target;
}

int adjust_loans(sim_t *s)
{
	int held = count_state(s, N_INFER) + count_state(s, N_RETURNING);
	int target = (int) ceil(s->demand - EPS) + s->p->headroom;
	int I = s->N - s->T, i, lend, keep, ahead, projected;
	double peak = s->demand;

	if (target > I)
		target = I;
	if (held < target)
		return reclaim(s, target - held, -1);
	s->waiting = false;
	/* ahead of a rising demand: the nodes it needs within the horizon
	 * come back when the joint wait (reclaim) finds the cheapest poll
	 * within one checkpoint interval from now to be this one; nothing
	 * is lent meanwhile */
	projected = ahead_target(s);
	ahead = projected > held ? projected - held : 0;
	if (ahead > 0) {
		s->ahead_keep = held + ahead;
		s->ahead_until = s->now + (double) s->p->lend_hold_s;
		if (count_state(s, N_LOANED) == 0)
			return 0;
		return reclaim(s, ahead, s->now + (double) s->p->ckpt_s);
	}
	/* lend only what the demand of the last lend_hold_s left idle, so
	 * noise does not lend a node one minute and take it back the next */
	for (i = 0; i < s->nhist; i++)
		if (s->hist[i] > peak)
			peak = s->hist[i];
	keep = (int) ceil(peak - EPS) + s->p->headroom;
	/* and not the nodes a reclaim ahead kept for the rise, until the
	 * lend hold has passed since it last saw the rise */
	if (s->now < s->ahead_until && keep < s->ahead_keep)
		keep = s->ahead_keep;
	/* nor what the projection wants (the next poll would reclaim it) */
	if (keep < projected)
		keep = projected;
	if (keep > I)
		keep = I;
	lend = held - keep;
	for (i = s->N - 1; i >= s->T && lend > 0; i--)
		if (s->nstate[i] == N_INFER) {
			s->nstate[i] = N_LOANED;
			s->freeg[i] = s->gpn;
			lend--;
			s->dirty = true;
		}
	return 0;
}

/* ---- forecast ---- */

int forecast_back(const sim_t *s, double tau)
{
	int held = count_state(s, N_INFER) + count_state(s, N_RETURNING);
	int loaned = count_state(s, N_LOANED), I = s->N - s->T, m, steps;
	int target;
	double peak = -1;

	if (s->nday == 0 || s->polls < s->nday || tau < (double) s->p->poll_s)
		return 0;
	/* after this poll's write, day[(dpos + m - 1) % nday] is the demand
	 * seen one day before now + m polls */
	steps = (int) (tau / (double) s->p->poll_s);
	if (steps > s->nday)
		steps = s->nday;
	for (m = 1; m <= steps; m++) {
		double d = s->day[(s->dpos + m - 1) % s->nday];

		if (d > peak)
			peak = d;
	}
	target = (int) ceil(peak - EPS) + s->p->headroom;
	if (target > I)
		target = I;
	if (target <= held)
		return 0;
	return target - held < loaned ? target - held : loaned;
}

/* the first time the forecast takes back a loaned node, INFINITY if it
 * does not within a day (or without a day of history) */
static double first_back(const sim_t *s)
{
	int held = count_state(s, N_INFER) + count_state(s, N_RETURNING);
	int I = s->N - s->T, m, target;

	if (s->nday == 0 || s->polls < s->nday || count_state(s, N_LOANED) == 0)
		return INFINITY;
	for (m = 1; m <= s->nday; m++) {
		target = (int) ceil(s->day[(s->dpos + m - 1) % s->nday] - EPS) +
			 s->p->headroom;
		if (target > I)
			target = I;
		if (target > held)
			return s->now + (double) m * (double) s->p->poll_s;
	}
	return INFINITY;
}

void mark_draining(sim_t *s)
{
	int back, i, k;

	memset(s->draining, 0, (size_t) s->N);
	s->borrow_until = INFINITY;
	if (s->v == POL_LOAN_V_NONE)
		return;
	if (s->pol.borrow_ends_first)
		s->borrow_until = first_back(s);
	if (s->pol.drain_ahead_s <= 0)
		return;
	back = forecast_back(s, (double) s->pol.drain_ahead_s);
	/* the emptiest loaned nodes (the newest loans first on ties): the
	 * ones a reclaim would take at the least cost once they drain */
	for (k = 0; k < back; k++) {
		int best = -1;

		for (i = s->N - 1; i >= s->T; i--)
			if (s->nstate[i] == N_LOANED && !s->draining[i] &&
			    (best < 0 || s->freeg[i] > s->freeg[best]))
				best = i;
		if (best < 0)
			break;
		s->draining[best] = 1;
	}
}
