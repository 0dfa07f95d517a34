/*
 * sim_engine.c - the event loop of the simulator (contract in sim.h);
 * the state changes and checks it calls are in sim_state.c.
 *
 * Data structures, chosen so a 24k-job two-week replay takes well under a
 * second per policy:
 *  - pending jobs live in one pol_job_t array in (submit, id) order, with
 *    free space at both ends: removing or inserting job i moves the
 *    shorter side (FIFO removals at the head are O(1));
 *  - running jobs are a pol_job_t array with swap-remove;
 *  - completions are a binary heap of (finish, job, version); a job whose
 *    speed changes bumps its version and the stale entry is skipped;
 *  - a pol_freemap_t mirrors the free GPUs for the fragmentation probe.
 * Sim time is integer seconds; remaining work is a double (seconds at the
 * ideal speed).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pol_ckpt.h"
#include "sim_int.h"

uint64_t sim_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

double sim_rand_unit(uint64_t *s)
{
	return (double) (sim_rand(s) >> 11) * (1.0 / 9007199254740992.0);
}

void sim_params_default(sim_params_t *p)
{
	/* doc/sim.md "placement slowdown": relative run time by the worst
	 * GPU-to-GPU level of the allocation */
	static const double slow[POL_N_LEVELS] = { 1.00, 1.05, 1.10,
						   1.15, 1.25, 1.40 };

	memset(p, 0, sizeof(*p));
	memcpy(p->slowdown, slow, sizeof(slow));
	p->limits.kind = SIM_LIMITS_AUTO;
	p->limits.a = 1.0;
	p->limits.b = 2.0;
	p->limit_kill = SIM_KILL_FAIL;
	p->elastic_serial = 0.05;
	p->ckpt_s = 1800;
	p->restart_s = 120;
	p->seed = 1;
	p->bin_s = 3600;
	p->check = true;
	p->progress_every = 2000;
}

/* account [s->now, t) into the integrals */
static int account(sim_t *s, int64_t t)
{
	sim_result_t *r = s->res;
	int64_t a = s->now;

	if (t <= a)
		return 0;
	r->busy_gpu_s += (double) s->busy * (double) (t - a);
	r->frag_gpu_s += s->frag_now * (double) (t - a);
	if (a < r->t_last_submit)
		r->busy_gpu_s_arrival +=
			(double) s->busy *
			(double) ((t < r->t_last_submit ? t
							: r->t_last_submit) -
				  a);
	/* the last bin [a, t) touches, checked before any is allocated */
	if ((t - 1 - r->t0) / r->bin_s >= SIM_MAX_BINS) {
		char what[160];

		snprintf(
			what, sizeof(what),
			"simulated time passes %d utilisation bins of %lld s: a job or a submit time far out of range, or use a larger bin",
			SIM_MAX_BINS, (long long) r->bin_s);
		return sim_fail(s, EOVERFLOW, what, -1);
	}
	while (a < t) {
		int64_t b = (a - r->t0) / r->bin_s;
		int64_t bend = r->t0 + (b + 1) * r->bin_s;
		int64_t e = t < bend ? t : bend;

		if (b >= r->n_bins) {
			if (b >= s->util_cap) {
				int64_t nc = b * 2 + 64;
				double *nu;

				if (nc > SIM_MAX_BINS)
					nc = SIM_MAX_BINS;
				nu = realloc(r->util,
					     (size_t) nc * sizeof(*nu));
				if (!nu) {
					errno = ENOMEM;
					return -1;
				}
				r->util = nu;
				s->util_cap = (int) nc;
			}
			memset(r->util + r->n_bins, 0,
			       (size_t) (b + 1 - r->n_bins) * sizeof(*r->util));
			r->n_bins = (int) b + 1;
		}
		r->util[b] += (double) s->busy * (double) (e - a);
		a = e;
	}
	return 0;
}

static void make_pending(sim_t *s, int id, pol_job_t *pj, uint64_t *rng)
{
	const sim_job_t *in = &s->in[s->order[id]];
	sim_job_out_t *o = &s->res->jobs[s->order[id]];

	memset(pj, 0, sizeof(*pj));
	pj->id = id;
	pj->tenant = in->tenant;
	pj->band = in->band;
	pj->priority = in->priority;
	pj->nodes = in->nodes;
	pj->gpus_per_node = in->nodes > 0 ? in->gpn : 0;
	pj->total_gpus = in->nodes > 0 ? in->nodes * in->gpn : in->gpus;
	pj->min_gpus = in->min_gpus > 0 ? in->min_gpus : pj->total_gpus;
	pj->max_gpus = in->max_gpus > 0 ? in->max_gpus : pj->total_gpus;
	pj->pool = in->pool;
	pj->submit = in->submit;
	pj->dataset = in->dataset;
	pj->requeueable = true;
	/* what the policy may know of checkpoints: the model's interval */
	pj->ckpt_s = s->p->ckpt_s > 0                      ? s->p->ckpt_s
		     : s->p->ckpt_s == SIM_CKPT_CONTINUOUS ? POL_CKPT_CONTINUOUS
							   : POL_CKPT_NEVER;
	pj->state = POL_JOB_PENDING;
	pj->remaining = s->p->hide_remaining ? -1 : in->duration;
	pj->last_ckpt = -1;
	pj->time_limit = sim_limit_draw(&s->p->limits, in, s->partmax, rng);
	o->limit = pj->time_limit;
	s->sj[id].submit = in->submit;
	s->sj[id].limit = pj->time_limit;
}

static int fits_ever(const sim_t *s, const sim_job_t *j)
{
	int cap = pol_freemap_capacity(s->fm, j->pool);
	int k = j->nodes > 0 ? j->nodes * j->gpn : j->gpus;

	if (k < 1 || k > cap || j->duration < 0)
		return 0;
	if (j->nodes > 0 && j->gpn > s->maxg_pool[j->pool & 1])
		return 0;
	return 1;
}

static int cmp_order(const void *x, const void *y, void *arg)
{
	const sim_job_t *v = arg;
	int a = *(const int *) x, b = *(const int *) y;

	if (v[a].submit != v[b].submit)
		return v[a].submit < v[b].submit ? -1 : 1;
	return (a > b) - (a < b);
}

static void sim_free(sim_t *s)
{
	int i;

	for (i = 0; s->sj && i < s->n; i++)
		pol_alloc_free(&s->sj[i].alloc);
	free(s->sj);
	free(s->order);
	free(s->pend_base);
	free(s->run);
	free(s->heap);
	free(s->used);
	pol_freemap_destroy(&s->fm);
	pol_cluster_destroy(&s->c);
}

/* the time of the next event, or INT64_MAX; ai: the next arrival */
static int64_t next_event(sim_t *s, int *ai, int64_t wake)
{
	int64_t t = INT64_MAX;

	while (*ai < s->n && s->sj[*ai].state == S_SKIPPED)
		(*ai)++;
	if (*ai < s->n)
		t = s->in[s->order[*ai]].submit;
	sim_h_clean(s);
	if (s->heap_n && s->heap[0].t < t)
		t = s->heap[0].t;
	if (wake > s->now && wake < t)
		t = wake;
	return t;
}

/* completions and kills at the limit up to now; adds to *done */
static int completions(sim_t *s, int *done)
{
	sim_result_t *r = s->res;

	for (sim_h_clean(s); s->heap_n && s->heap[0].t <= s->now;
	     sim_h_clean(s)) {
		int id = s->heap[0].job, k;
		sjob_t *j = &s->sj[id];

		sim_h_pop(s);
		if (j->state != S_RUNNING)
			continue;
		if (j->finish < j->natural) {
			k = sim_kill_at_limit(s, id);
			if (k < 0)
				return -1;
			*done += k;
			continue;
		}
		sim_update_work(s, id);
		if (r->jobs[s->order[id]].finish >= 0)
			return sim_fail(s, EPROTO, "job ends twice", id);
		r->jobs[s->order[id]].finish = s->now;
		r->jobs[s->order[id]].end = s->now;
		sim_gpus_give(s, &j->alloc);
		sim_run_remove(s, id);
		pol_alloc_free(&j->alloc);
		j->gpus = 0;
		j->state = S_DONE;
		(*done)++;
	}
	return 0;
}

static int arrivals(sim_t *s, int *ai, uint64_t *rng)
{
	while (*ai < s->n && (s->sj[*ai].state == S_SKIPPED ||
			      s->in[s->order[*ai]].submit <= s->now)) {
		pol_job_t pj;

		if (s->sj[*ai].state != S_SKIPPED) {
			make_pending(s, *ai, &pj, rng);
			s->sj[*ai].state = S_PENDING;
			s->sj[*ai].work =
				(double) s->in[s->order[*ai]].duration;
			s->sj[*ai].saved = s->sj[*ai].work;
			if (sim_pend_insert(s, &pj)) {
				agora_err_set(s->err,
					      "simulator: out of memory");
				errno = ENOMEM;
				return -1;
			}
		}
		(*ai)++;
	}
	return 0;
}

/* refresh the running and requeued jobs' service and remaining work */
static void refresh(sim_t *s, pol_snapshot_t *snap)
{
	int i;

	for (i = 0; i < s->run_n; i++) {
		int id = (int) s->run[i].id;

		sim_update_work(s, id);
		s->run[i].attained = (int64_t) s->sj[id].attained;
		s->run[i].remaining = s->p->hide_remaining
					      ? -1
					      : (int64_t) ceil(
							s->sj[id].work +
							s->sj[id].overhead);
		s->run[i].last_ckpt = s->sj[id].save_t;
	}
	for (i = 0; i < s->pend_n; i++) {
		pol_job_t *pj = &s->pend_base[s->pend_off + i];

		if (s->sj[pj->id].preempted) {
			pj->attained = (int64_t) s->sj[pj->id].attained;
			pj->remaining = s->p->hide_remaining
						? -1
						: (int64_t) ceil(
							  s->sj[pj->id].work +
							  s->sj[pj->id].carry);
		}
	}
	snap->cluster = s->c;
	snap->pending = s->pend_base + s->pend_off;
	snap->n_pending = s->pend_n;
	snap->running = s->run;
	snap->n_running = s->run_n;
	snap->n_tenants = s->n_tenants;
}

static int apply(sim_t *s, const pol_actions_t *acts)
{
	int i;

	for (i = 0; i < acts->n; i++) {
		const pol_action_t *a = &acts->v[i];
		int e = 0;

		switch (a->type) {
		case POL_ACT_START:
			e = sim_act_start(s, a);
			break;
		case POL_ACT_PREEMPT:
			e = sim_act_preempt(s, a);
			break;
		case POL_ACT_RESIZE:
			e = sim_act_resize(s, a);
			break;
		case POL_ACT_HOLD:
			break;
		}
		if (e)
			return -1;
	}
	return 0;
}

static void livelock(sim_t *s, int64_t quiet, int done, int live)
{
	agora_err_set(
		s->err,
		"livelock: policy %s: no job completed for %.1f days of simulated time, from t=%lld to t=%lld, while %d jobs pended and %d ran, %d of %d jobs done, %lld preemptions (guard: %.1f days)",
		pol_policy_name(s->pol), (double) (s->now - quiet) / 86400.0,
		(long long) quiet, (long long) s->now, s->pend_n, s->run_n,
		done, live, (long long) s->res->preemptions,
		(double) s->livelock_s / 86400.0);
	errno = EDEADLK;
}

/* params.livelock_s resolved: 0 = 7 days + 2 x the longest job at its
 * slowest placement */
static int64_t resolve_livelock(const sim_params_t *p, const sim_job_t *jobs,
				int n)
{
	double lo = p->slowdown[0], hi = p->slowdown[0], longest = 0;
	int i;

	if (p->livelock_s)
		return p->livelock_s;
	for (i = 1; i < POL_N_LEVELS; i++) {
		lo = p->slowdown[i] < lo ? p->slowdown[i] : lo;
		hi = p->slowdown[i] > hi ? p->slowdown[i] : hi;
	}
	for (i = 0; i < n; i++)
		if ((double) jobs[i].duration > longest)
			longest = (double) jobs[i].duration;
	return SIM_LIVELOCK_AUTO_BASE +
	       (int64_t) (2 * longest * (lo > 0 ? hi / lo : 1));
}

static int sim_loop(sim_t *s)
{
	pol_actions_t acts = { 0 };
	uint64_t rng = s->p->seed;
	int64_t wake = 0, next_prog = s->p->progress_every, quiet;
	int ai = 0, done = 0, rc = -1, i, live = 0, done_before;
	sim_result_t *r = s->res;

	for (i = 0; i < s->n; i++)
		if (s->sj[i].state != S_SKIPPED)
			live++;
	s->now = r->t0;
	quiet = r->t0;
	while (done < live) {
		int64_t t = next_event(s, &ai, wake);
		pol_snapshot_t snap;

		if (t == INT64_MAX) {
			sim_fail(
				s, EPROTO,
				"stall: jobs pending, none running, no event left (a job the policy never starts)",
				s->pend_n ? s->pend_base[s->pend_off].id : -1);
			goto out;
		}
		if (account(s, t)) {
			if (errno == ENOMEM)
				goto nomem;
			goto out;
		}
		s->now = t;
		r->events++;
		done_before = done;
		if (completions(s, &done) || arrivals(s, &ai, &rng))
			goto out;
		if (done > done_before || !s->pend_n)
			quiet = t; /* progress, or nothing waits */
		else if (s->livelock_s > 0 && t - quiet > s->livelock_s) {
			livelock(s, quiet, done, live);
			goto out;
		}
		if (wake && wake <= t)
			wake = 0;
		if (done == live)
			break;
		refresh(s, &snap);
		pol_actions_clear(&acts);
		if (pol_policy_decide(s->pol, &snap, t, &acts)) {
			agora_err_set(s->err,
				      "policy %s: t=%lld: decide failed",
				      pol_policy_name(s->pol), (long long) t);
			goto out;
		}
		r->decisions++;
		if (apply(s, &acts))
			goto out;
		if (acts.wakeup > t)
			wake = acts.wakeup;
		if (s->p->check && sim_check_invariants(s))
			goto out;
		if (sim_probe_frag(s))
			goto out;
		if (s->p->progress && r->decisions >= next_prog) {
			sim_progress_t pr = { t,        r->t0,     done,
					      live,     s->pend_n, s->run_n,
					      r->events };

			s->p->progress(s->p->progress_arg, &pr);
			next_prog = r->decisions + s->p->progress_every;
		}
	}
	r->t_end = s->now;
	for (i = 0; i < r->n_bins; i++)
		r->util[i] /= (double) r->bin_s * (double) r->total_gpus;
	if (s->pend_n || s->run_n) {
		sim_fail(s, EPROTO, "jobs left at the end", -1);
		goto out;
	}
	rc = 0;
	goto out;
nomem:
	agora_err_set(s->err, "simulator: out of memory");
	errno = ENOMEM;
out:
	pol_actions_free(&acts);
	return rc;
}

static int check_params(const sim_params_t *p, agora_err_t *err)
{
	const sim_limits_t *l = &p->limits;

	if ((l->kind == SIM_LIMITS_AUTO || l->kind == SIM_LIMITS_UNIFORM) &&
	    !(l->a >= 1 && l->b >= l->a)) {
		agora_err_set(err, "simulator: limits: needs 1 <= a <= b");
		return -1;
	}
	if (l->kind == SIM_LIMITS_LOGNORMAL && !(l->a > 0 && l->a <= 10)) {
		agora_err_set(err, "simulator: limits: needs 0 < sigma <= 10");
		return -1;
	}
	if (l->kind == SIM_LIMITS_CONSTANT && l->t < 1) {
		agora_err_set(err, "simulator: limits: constant needs t >= 1");
		return -1;
	}
	if (p->ckpt_s < SIM_CKPT_CONTINUOUS || p->restart_s < 0 ||
	    p->launch_s < 0 || p->limit_kill < SIM_KILL_FAIL ||
	    p->limit_kill > SIM_KILL_NONE) {
		agora_err_set(
			err,
			"simulator: bad ckpt_s, restart_s, launch_s or limit_kill");
		return -1;
	}
	return 0;
}

/* --limits trace needs every job's limit from the trace */
static int check_trace_limits(const sim_params_t *p, const sim_job_t *jobs,
			      int n, agora_err_t *err)
{
	int i;

	if (p->limits.kind != SIM_LIMITS_TRACE)
		return 0;
	for (i = 0; i < n; i++)
		if (jobs[i].time_limit <= 0) {
			agora_err_set(
				err,
				"--limits trace: job %lld has no time_limit in the trace",
				(long long) jobs[i].id);
			return -1;
		}
	return 0;
}

int sim_run(const pol_cluster_t *cluster, const sim_job_t *jobs, int n,
	    pol_policy_t *policy, const sim_params_t *params, sim_result_t *res,
	    agora_err_t *err)
{
	sim_t s;
	int i, rc;

	memset(res, 0, sizeof(*res));
	if (!cluster || (!jobs && n) || n < 0 || !policy || !params ||
	    params->bin_s <= 0) {
		agora_err_set(err, "simulator: invalid arguments");
		errno = EINVAL;
		return -1;
	}
	if (check_params(params, err) ||
	    check_trace_limits(params, jobs, n, err)) {
		errno = EINVAL;
		return -1;
	}
	memset(&s, 0, sizeof(s));
	s.partmax = sim_limits_partmax(&params->limits, jobs, n);
	s.livelock_s = resolve_livelock(params, jobs, n);
	s.in = jobs;
	s.p = params;
	s.pol = policy;
	s.n = n;
	s.res = res;
	s.err = err;
	s.c = pol_cluster_clone(cluster);
	if (!s.c)
		goto nomem;
	for (i = 0; i < s.c->n_nodes; i++)
		s.c->nodes[i].free = s.c->nodes[i].up
					     ? pol_node_all_gpus(s.c, i)
					     : 0;
	s.fm = pol_freemap_create(s.c);
	s.used = calloc((size_t) s.c->n_nodes, sizeof(*s.used));
	s.sj = calloc((size_t) (n ? n : 1), sizeof(*s.sj));
	s.order = malloc((size_t) (n ? n : 1) * sizeof(*s.order));
	res->jobs = calloc((size_t) (n ? n : 1), sizeof(*res->jobs));
	if (!s.fm || !s.used || !s.sj || !s.order || !res->jobs)
		goto nomem;
	s.maxg_pool[0] = pol_freemap_max_node_gpus(s.fm, POL_POOL_TRAINING);
	s.maxg_pool[1] = pol_freemap_max_node_gpus(s.fm, POL_POOL_INFERENCE);
	res->n = n;
	res->ckpt_alt_same = params->n_ckpt_alt > 0;
	res->bin_s = params->bin_s;
	res->total_gpus = pol_cluster_gpus(s.c);
	for (i = 0; i < n; i++) {
		if (jobs[i].tenant >= s.n_tenants)
			s.n_tenants = jobs[i].tenant + 1;
		s.order[i] = i;
		res->jobs[i].first_start = res->jobs[i].finish = -1;
		res->jobs[i].end = -1;
		res->jobs[i].limit = -1;
	}
	qsort_r(s.order, (size_t) n, sizeof(*s.order), cmp_order,
		(void *) jobs);
	for (i = 0; i < n; i++) {
		s.sj[i].run_pos = -1;
		if (!fits_ever(&s, &jobs[s.order[i]])) {
			s.sj[i].state = S_SKIPPED;
			res->skipped++;
		}
	}
	res->t0 = n ? jobs[s.order[0]].submit : 0;
	res->t_last_submit = n ? jobs[s.order[n - 1]].submit : 0;
	rc = sim_loop(&s);
	sim_free(&s);
	if (rc) {
		int e = errno;

		sim_result_free(res);
		errno = e;
	}
	return rc;
nomem:
	sim_free(&s);
	sim_result_free(res);
	agora_err_set(err, "simulator: out of memory");
	errno = ENOMEM;
	return -1;
}

void sim_result_free(sim_result_t *res)
{
	if (!res)
		return;
	free(res->jobs);
	free(res->util);
	memset(res, 0, sizeof(*res));
}
