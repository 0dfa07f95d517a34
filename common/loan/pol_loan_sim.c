/*
 * pol_loan_sim.c - the loaning scenario of agora-sim (doc/loaning.md): a
 * training pool and an inference pool of whole nodes; the inference pool
 * keeps demand + headroom nodes and loans the rest to training, taking
 * nodes back through pol_loan_reclaim() when demand rises.
 *
 * Training scheduler (the same in every variant): pending jobs in submit
 * order, each started where it fits (a job that does not fit is skipped),
 * except that a head job pending longer than BLOCK_AFTER blocks the queue
 * (as Slurm's main scheduler blocks at the first job that does not fit).
 * A job of at most gpn GPUs runs on one node (best fit, training nodes
 * first); a larger job takes ceil(gpus / gpn) whole nodes.  Only jobs that
 * can be requeued run on loaned nodes; one-node jobs go to loaned nodes in
 * one best-fit-decreasing batch per pass (pol_loan_bfd), which packs them
 * on few nodes.  Elastic jobs (least-cost+elastic only) run on [k/2, 2k]
 * whole nodes (k requested), start on fewer than k when only that many
 * are free, grow onto free whole nodes by the knapsack (pol_mckp_*) when
 * no job waits, and give the grown nodes back when one waits.  The
 * knapsack values a grow by the job's estimated time left: by default its
 * attained run time, pol_loan_left_attained; the oracle (its true
 * remaining work) only when asked.
 *
 * Checkpoint model (as sim.h): a run checkpoints every ckpt_s of wall
 * time from its start; a preempted job loses its progress since the last
 * checkpoint; every restart first redoes restart_s seconds.  A resize is a
 * checkpoint and a restart at the new size.
 *
 * The jobs (queue, runs, placement) are in pol_loan_sim_jobs.c; the
 * poll's steps (grow, shrink, lend, reclaim) are in
 * pol_loan_sim_steps.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define POL_LOAN_SIM_STATE
#include "pol_loan_sim_int.h"

#define BLOCK_AFTER (4 * 3600.0)

static int pass(sim_t *s)
{
	int *defer = NULL, nd = 0, *nodes = NULL, i, rc = -1;

	if (s->pol.train_policy)
		return policy_pass(s);
	s->dirty = false;
	defer = calloc((size_t) s->npend + 1, sizeof(int));
	nodes = calloc((size_t) s->N + 1, sizeof(int));
	if (!defer || !nodes)
		goto out;
	for (i = 0; i < s->npend; i++) {
		int ji = s->pend[i], node, c;
		sj_t *j = &s->jobs[ji];
		bool lok = may_borrow(s, j);
		bool started = false;

		if (j->k == 0) {
			node = best_fit(s, j->use, N_TRAIN);
			if (node >= 0) {
				start(s, ji, &node, 1);
				started = true;
			} else if (lok) {
				defer[nd++] = ji;
				continue;
			}
		} else {
			int want = j->k, least = j->elastic ? j->min_n : j->k;

			c = whole_nodes(s, lok, nodes, want);
			if (c >= least) {
				start(s, ji, nodes, c);
				started = true;
			}
		}
		if (started) {
			pend_del(s, i);
			i--;
			continue;
		}
		if (i == 0 && s->now - (double) j->in->submit > BLOCK_AFTER)
			break; /* the starving head blocks the queue */
	}
	if (nd) {
		int *size = calloc((size_t) nd, sizeof(int));
		int *bin = calloc((size_t) nd, sizeof(int));
		int *cap = calloc((size_t) s->N + 1, sizeof(int));
		int m = 0, k;

		if (!size || !bin || !cap) {
			free(size);
			free(bin);
			free(cap);
			goto out;
		}
		for (k = 0; k < s->N; k++)
			if (s->nstate[k] == N_LOANED && !s->draining[k]) {
				nodes[m] = k;
				cap[m++] = s->freeg[k];
			}
		for (k = 0; k < nd; k++)
			size[k] = s->jobs[defer[k]].use;
		if (pol_loan_bfd(size, nd, cap, m, bin) < 0) {
			free(size);
			free(bin);
			free(cap);
			goto out;
		}
		for (k = 0; k < nd; k++) {
			int at;

			if (bin[k] < 0)
				continue;
			start(s, defer[k], &nodes[bin[k]], 1);
			for (at = 0; at < s->npend; at++)
				if (s->pend[at] == defer[k])
					break;
			pend_del(s, at);
		}
		free(size);
		free(bin);
		free(cap);
	}
	rc = 0;
out:
	free(defer);
	free(nodes);
	return rc;
}

/* ---- time ---- */

static void advance(sim_t *s, double to)
{
	double dt = to - s->now;
	int i, busy = 0, ready, loaned;

	if (dt <= 0)
		return;
	for (i = 0; i < s->nrun; i++) {
		sj_t *j = &s->jobs[s->run[i]];
		double d = dt, oh = j->overhead < d ? j->overhead : d;

		j->overhead -= oh;
		d -= oh;
		j->work -= j->rate * d;
		if (j->work < 0)
			j->work = 0;
		j->run_s += dt;
		busy += gpus_held(j);
		if (oh > 0 && in_win(s))
			s->r->gpu_hours_lost += gpus_held(j) * oh / 3600.0;
	}
	ready = count_state(s, N_INFER);
	loaned = count_state(s, N_LOANED);
	{
		double served = s->demand < ready ? s->demand : ready;
		double lo = s->now > s->t_from ? s->now : s->t_from;
		double hi = to < s->t_to ? to : s->t_to;
		double w = hi - lo;
		int64_t b0;

		if (w <= 0)
			goto done;

		s->r->train_busy_gpu_s += busy * w;
		s->r->train_held_gpu_s += (double) (s->T + loaned) * s->gpn * w;
		s->r->infer_busy_gpu_s += served * s->gpn * w;
		s->r->total_gpu_s += (double) s->N * s->gpn * w;
		s->r->mean_loaned += loaned * w;
		{
			int I = s->N - s->T, k, lb = 0;
			double lend = (double) I - ceil(s->demand - EPS) -
				      s->p->headroom;

			for (k = s->T; k < s->N; k++)
				if (s->nstate[k] == N_LOANED)
					lb += s->gpn - s->freeg[k];
			s->m.loan_busy_gpu_s += lb * w;
			if (lend > 0) {
				double want = lb;

				s->m.lendable_gpu_s += lend * s->gpn * w;
				for (k = 0; k < s->npend; k++)
					if (may_borrow(s, &s->jobs[s->pend[k]]))
						want += s->jobs[s->pend[k]]
								.in->gpus;
				if (want > lend * s->gpn)
					want = lend * s->gpn;
				s->m.harvest_cap_gpu_s += want * w;
			}
		}
		if (s->demand > ready)
			s->r->unmet_node_s += (s->demand - ready) * w;
		/* time series: split [lo, hi) over bins */
		while (lo < hi) {
			double end;

			b0 = (int64_t) ((lo - s->t_from) /
					(double) s->r->bin_s);
			end = s->t_from + (double) (b0 + 1) * s->r->bin_s;
			if (end > hi)
				end = hi;
			if (b0 >= 0 && b0 < s->r->n_bins) {
				double f = (end - lo) / (double) s->r->bin_s;

				s->r->s_demand[b0] += s->demand * f;
				s->r->s_loaned[b0] += loaned * f;
				s->r->s_train_busy[b0] += busy * f;
				s->r->s_pending[b0] += s->npend * f;
			}
			lo = end;
		}
	}
done:
	s->now = to;
}

static void slo_check(sim_t *s)
{
	int ready = count_state(s, N_INFER);

	if (s->demand > ready + EPS) {
		if (s->unmet_since < 0) {
			s->unmet_since = s->now;
			s->unmet_counted = false;
		}
		if (!s->unmet_counted &&
		    s->now - s->unmet_since >= (double) s->p->deadline_s) {
			if (in_win(s))
				s->r->slo_misses++;
			s->unmet_counted = true;
		}
	} else {
		s->unmet_since = -1;
	}
}

void pol_loan_sim_params_default(pol_loan_sim_params_t *p)
{
	memset(p, 0, sizeof(*p));
	p->train_nodes = 64;
	p->infer_nodes = 64;
	p->gpn = 8;
	pol_loan_demand_default(&p->demand, p->infer_nodes);
	p->headroom = 4;
	p->poll_s = 60;
	p->grace_s = 60;
	p->deadline_s = 300;
	p->ckpt_s = 1800;
	p->restart_s = 120;
	p->serial = 0.05;
	p->min_grow_s = 1800;
	p->lend_hold_s = 1800;
	p->bin_s = 3600;
	p->seed = 1;
}

static const char *const vnames[POL_LOAN_N_VARIANTS] = {
	"none",   "slurm-order", "least-cost", "least-cost+elastic",
	"random", "most-recent",
};

const char *pol_loan_variant_name(pol_loan_variant_t v)
{
	return (unsigned) v < POL_LOAN_N_VARIANTS ? vnames[v] : "?";
}

int pol_loan_variant_parse(const char *str, pol_loan_variant_t *v)
{
	int i;

	for (i = 0; str && i < POL_LOAN_N_VARIANTS; i++)
		if (!strcmp(str, vnames[i])) {
			*v = (pol_loan_variant_t) i;
			return 0;
		}
	errno = EINVAL;
	return -1;
}

void pol_loan_sim_result_free(pol_loan_sim_result_t *r)
{
	if (!r)
		return;
	free(r->s_demand);
	free(r->s_loaned);
	free(r->s_train_busy);
	free(r->s_pending);
	r->s_demand = r->s_loaned = r->s_train_busy = r->s_pending = NULL;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *) a, y = *(const int *) b;

	return (x > y) - (x < y);
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *) a, y = *(const double *) b;

	return x < y ? -1 : x > y;
}

static int setup(sim_t *s, const pol_loan_sim_job_t *jobs, int n)
{
	const pol_loan_sim_params_t *p = s->p;
	int i;

	s->T = p->train_nodes;
	s->N = p->train_nodes + p->infer_nodes;
	s->gpn = p->gpn;
	s->nstate = calloc((size_t) s->N + 1, sizeof(int));
	s->freeg = calloc((size_t) s->N + 1, sizeof(int));
	s->used = calloc((size_t) s->N + 1, sizeof(*s->used));
	s->back_at = calloc((size_t) s->N + 1, sizeof(double));
	s->jobs = calloc((size_t) n + 1, sizeof(sj_t));
	s->pend = calloc((size_t) n + 1, sizeof(int));
	s->run = calloc((size_t) n + 1, sizeof(int));
	s->nhist = (int) (p->lend_hold_s / p->poll_s);
	s->hist = calloc((size_t) s->nhist + 1, sizeof(double));
	s->nday = (int) (86400 / p->poll_s);
	s->day = calloc((size_t) s->nday + 1, sizeof(double));
	s->draining = calloc((size_t) s->N + 1, 1);
	s->borrow_until = INFINITY;
	if (!s->hist || !s->day || !s->draining || !s->nstate || !s->freeg ||
	    !s->back_at || !s->jobs || !s->pend || !s->run || !s->used)
		return -1;
	for (i = 0; i < s->N; i++) {
		s->nstate[i] = i < s->T ? N_TRAIN : N_INFER;
		s->freeg[i] = i < s->T ? s->gpn : 0;
	}
	s->n = n;
	for (i = 0; i < n; i++) {
		sj_t *j = &s->jobs[i];
		int g = jobs[i].gpus;

		j->in = &jobs[i];
		j->idx = i;
		if (jobs[i].tenant >= s->n_tenants)
			s->n_tenants = jobs[i].tenant + 1;
		j->first_start = j->finish = -1;
		j->work = (double) jobs[i].duration;
		j->rate = 1;
		j->limit = s->pol.limit_s ? (double) s->pol.limit_s[i] : 0;
		if (g <= s->gpn) {
			j->k = 0;
			j->use = g;
		} else {
			j->k = (g + s->gpn - 1) / s->gpn;
			j->use = s->gpn;
		}
		j->elastic = s->v == POL_LOAN_V_ELASTIC && jobs[i].elastic &&
			     jobs[i].requeue && g >= s->gpn;
		if (j->elastic && j->k == 0)
			j->k = 1;
		j->min_n = j->max_n = j->k ? j->k : 1;
		if (j->elastic) {
			j->min_n = (j->k + 1) / 2;
			j->max_n = 2 * j->k;
		}
		if (j->max_n > 64)
			j->max_n = 64;
		if (j->min_n > j->max_n)
			j->min_n = j->max_n;
		/* more than 64 nodes (the node lists' size): skipped as too
		 * large, not started past the end of j->nodes */
		j->state = (j->k > s->T || j->k > 64) ? J_SKIPPED : J_FUTURE;
		j->nodes = calloc((size_t) j->max_n + 1, sizeof(int));
		if (!j->nodes)
			return -1;
	}
	return 0;
}

static int cmp_submit(const void *a, const void *b, void *arg)
{
	const sj_t *jobs = arg;
	int x = *(const int *) a, y = *(const int *) b;

	if (jobs[x].in->submit != jobs[y].in->submit)
		return jobs[x].in->submit < jobs[y].in->submit ? -1 : 1;
	return x - y;
}

static int loop(sim_t *s, int *order)
{
	int next = 0, i, left = 0;
	double next_poll;

	for (i = 0; i < s->n; i++)
		if (s->jobs[order[i]].state == J_FUTURE)
			left++;
	s->now = s->n ? (double) s->jobs[order[0]].in->submit : 0;
	next_poll = s->now;
	while (left > 0) {
		double t = INFINITY;

		while (next < s->n && s->jobs[order[next]].state != J_FUTURE)
			next++;
		if (next < s->n)
			t = (double) s->jobs[order[next]].in->submit;
		for (i = 0; i < s->nrun; i++) {
			sj_t *j = &s->jobs[s->run[i]];
			double f = s->now + j->overhead + j->work / j->rate;

			if (f < t)
				t = f;
		}
		if (next_poll < t)
			t = next_poll;
		for (i = s->T; i < s->N; i++)
			if (s->nstate[i] == N_RETURNING && s->back_at[i] < t)
				t = s->back_at[i];
		if (!isfinite(t)) {
			errno = EDEADLK;
			return -1;
		}
		if (t < s->now)
			t = s->now;
		advance(s, t);
		/* finishes */
		for (i = 0; i < s->nrun; i++) {
			int ji = s->run[i];
			sj_t *j = &s->jobs[ji];

			if (j->overhead <= EPS && j->work <= EPS * 1000) {
				j->finish = s->now;
				j->state = J_DONE;
				release(s, j);
				s->run[i--] = s->run[--s->nrun];
				left--;
			}
		}
		/* returns */
		for (i = s->T; i < s->N; i++)
			if (s->nstate[i] == N_RETURNING &&
			    s->back_at[i] <= s->now + EPS) {
				s->nstate[i] = N_INFER;
				s->freeg[i] = 0;
			}
		/* arrivals */
		while (next < s->n && s->jobs[order[next]].state == J_FUTURE &&
		       (double) s->jobs[order[next]].in->submit <= s->now) {
			pend_add(s, order[next]);
			next++;
		}
		if (s->now + EPS >= next_poll) {
			s->demand = pol_loan_demand_at(&s->p->demand,
						       (int64_t) s->now);
			if (s->nhist) {
				s->hist[s->hpos] = s->demand;
				s->hpos = (s->hpos + 1) % s->nhist;
			}
			if (s->nday) {
				s->day[s->dpos] = s->demand;
				s->dpos = (s->dpos + 1) % s->nday;
			}
			s->polls++;
			if (s->v != POL_LOAN_V_NONE && adjust_loans(s))
				return -1;
			mark_draining(s);
			slo_check(s);
			if (s->v == POL_LOAN_V_ELASTIC) {
				if (s->dirty && pass(s))
					return -1;
				if (s->npend > 0)
					shrink_grown(s);
				else if (grow(s))
					return -1;
			}
			/* fifo-hold's head block moves with time; a policy
			 * is asked at events and at the wakeup it asked for
			 * (as agora-sim run asks it) */
			if (!s->pol.train_policy ||
			    (s->acts.wakeup > 0 &&
			     s->now >= (double) s->acts.wakeup))
				s->dirty = true;
			next_poll = s->now + (double) s->p->poll_s;
		}
		if (s->dirty && pass(s))
			return -1;
		if (s->nrun > 0 || next < s->n)
			s->idle_since = s->now;
		/* a policy may hold jobs a while (agora's auction), the
		 * simple scheduler never does */
		if (left > 0 && s->nrun == 0 && next >= s->n &&
		    s->v == POL_LOAN_V_NONE && s->npend > 0 &&
		    (!s->pol.train_policy ||
		     s->now - s->idle_since > 30 * 86400.0)) {
			/* pending jobs that nothing will ever start */
			errno = EDEADLK;
			return -1;
		}
	}
	return 0;
}

static const char *const enames[] = { "attained", "oracle" };

const char *pol_loan_estimate_name(pol_loan_estimate_t e)
{
	return (unsigned) e <= POL_LOAN_EST_ORACLE ? enames[e] : "?";
}

int pol_loan_estimate_parse(const char *str, pol_loan_estimate_t *e)
{
	int i;

	for (i = 0; str && i <= (int) POL_LOAN_EST_ORACLE; i++)
		if (!strcmp(str, enames[i])) {
			*e = (pol_loan_estimate_t) i;
			return 0;
		}
	errno = EINVAL;
	return -1;
}

void pol_loan_sim_policy_default(pol_loan_sim_policy_t *pol)
{
	memset(pol, 0, sizeof(*pol));
	pol->grow_estimate = POL_LOAN_EST_ATTAINED;
	pol->ckpt_wait_s = POL_LOAN_CKPT_WAIT_S;
	pol->reclaim_ahead_z = POL_LOAN_AHEAD_Z;
}

int pol_loan_sim_run(const pol_loan_sim_job_t *jobs, int n,
		     pol_loan_variant_t v, const pol_loan_sim_params_t *p,
		     pol_loan_sim_result_t *res)
{
	return pol_loan_sim_run_policy(jobs, n, v, p, NULL, res, NULL);
}

int pol_loan_sim_run_policy(const pol_loan_sim_job_t *jobs, int n,
			    pol_loan_variant_t v,
			    const pol_loan_sim_params_t *p,
			    const pol_loan_sim_policy_t *pol,
			    pol_loan_sim_result_t *res,
			    pol_loan_sim_more_t *more)
{
	sim_t s;
	int *order = NULL, i, rc = -1, m = 0;
	double *jct = NULL, sq = 0, sj = 0;

	if (!p || !res || n < 0 || (n && !jobs) || p->train_nodes < 1 ||
	    p->infer_nodes < 0 || p->gpn < 1 ||
	    p->gpn > POL_MAX_GPUS_PER_NODE || p->poll_s < 1 || p->bin_s < 1 ||
	    p->headroom < 0 || p->grace_s < 0 || p->deadline_s < 0 ||
	    p->restart_s < 0 || p->ckpt_s < -1 ||
	    (unsigned) v >= POL_LOAN_N_VARIANTS ||
	    (pol && ((unsigned) pol->grow_estimate > POL_LOAN_EST_ORACLE ||
		     pol->drain_ahead_s < 0))) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < n; i++)
		if (jobs[i].gpus < 1 || jobs[i].duration < 1 ||
		    jobs[i].tenant < 0) {
			errno = EINVAL;
			return -1;
		}
	memset(res, 0, sizeof(*res));
	memset(&s, 0, sizeof(s));
	s.p = p;
	if (pol)
		s.pol = *pol;
	else
		pol_loan_sim_policy_default(&s.pol);
	s.v = v;
	s.r = res;
	s.unmet_since = -1;
	if (setup(&s, jobs, n) || (s.pol.train_policy && sched_setup(&s)))
		goto nomem;
	order = calloc((size_t) n + 1, sizeof(int));
	jct = calloc((size_t) n + 1, sizeof(double));
	if (!order || !jct)
		goto nomem;
	for (i = 0; i < n; i++)
		order[i] = i;
	qsort_r(order, (size_t) n, sizeof(int), cmp_submit, s.jobs);
	s.t_from = (double) p->t_from;
	s.t_to = (double) p->t_to;
	if (p->t_from == 0 && p->t_to == 0 && n) {
		s.t_from = (double) jobs[order[0]].submit;
		s.t_to = (double) jobs[order[n - 1]].submit;
	}
	if (s.t_to <= s.t_from)
		s.t_to = s.t_from + 1;
	res->bin_s = p->bin_s;
	res->t0 = (int64_t) s.t_from;
	res->n_bins = (int) ceil((s.t_to - s.t_from) / (double) p->bin_s);
	res->s_demand = calloc((size_t) res->n_bins + 1, sizeof(double));
	res->s_loaned = calloc((size_t) res->n_bins + 1, sizeof(double));
	res->s_train_busy = calloc((size_t) res->n_bins + 1, sizeof(double));
	res->s_pending = calloc((size_t) res->n_bins + 1, sizeof(double));
	if (!res->s_demand || !res->s_loaned || !res->s_train_busy ||
	    !res->s_pending)
		goto nomem;
	if (loop(&s, order))
		goto out;
	for (i = 0; i < n; i++) {
		sj_t *j = &s.jobs[i];
		double sub = (double) j->in->submit;

		if (sub < s.t_from || sub >= s.t_to || j->state == J_SKIPPED)
			continue;
		res->jobs++;
		if (j->state != J_DONE)
			continue;
		res->finished++;
		jct[m++] = j->finish - sub;
		sj += j->finish - sub;
		sq += j->finish - sub - j->run_s;
	}
	{
		int *rq = calloc((size_t) n + 1, sizeof(int)), nq = 0;

		if (!rq)
			goto nomem;
		for (i = 0; i < n; i++) {
			const sj_t *j = &s.jobs[i];
			double sub = (double) j->in->submit;

			if (sub < s.t_from || sub >= s.t_to ||
			    j->state == J_SKIPPED)
				continue;
			rq[nq++] = j->preempted;
		}
		qsort(rq, (size_t) nq, sizeof(int), cmp_int);
		if (nq) {
			s.m.requeues_max = rq[nq - 1];
			s.m.requeues_p99 = rq[(int) ceil(0.99 * nq) - 1];
		}
		free(rq);
	}
	if (m) {
		res->mean_jct_s = sj / m;
		res->mean_queue_s = sq / m;
		qsort(jct, (size_t) m, sizeof(double), cmp_dbl);
		res->p99_jct_s = jct[(int) ceil(0.99 * m) - 1];
	}
	if (res->train_held_gpu_s > 0)
		res->util_train = res->train_busy_gpu_s / res->train_held_gpu_s;
	if (res->total_gpu_s > 0) {
		res->util_total = (res->train_busy_gpu_s +
				   res->infer_busy_gpu_s) /
				  res->total_gpu_s;
		res->mean_loaned /= res->total_gpu_s / ((double) s.N * s.gpn);
	}
	if (more)
		*more = s.m;
	rc = 0;
	goto out;
nomem:
	errno = ENOMEM;
out:
	if (rc)
		pol_loan_sim_result_free(res);
	if (s.jobs)
		for (i = 0; i < n; i++)
			free(s.jobs[i].nodes);
	free(s.jobs);
	free(s.nstate);
	free(s.freeg);
	free(s.used);
	sched_free(&s);
	free(s.back_at);
	free(s.hist);
	free(s.day);
	free(s.draining);
	free(s.pend);
	free(s.run);
	free(order);
	free(jct);
	return rc;
}
