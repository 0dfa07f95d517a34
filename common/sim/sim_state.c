/*
 * sim_state.c - the simulator's state and its changes: the completion
 * heap, the pending and running arrays, the speed model, GPU bookkeeping,
 * the policy actions with their checks, the invariants and the
 * fragmentation probe (sim_int.h; the loop is in sim_engine.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_int.h"

/* ---- heap ---- */

static int h_less(const hent_t *a, const hent_t *b)
{
	return a->t != b->t ? a->t < b->t : a->job < b->job;
}

static int h_push(sim_t *s, int64_t t, int job, uint32_t ver)
{
	int i;

	if (s->heap_n == s->heap_cap) {
		int nc = s->heap_cap ? s->heap_cap * 2 : 256;
		hent_t *nh = realloc(s->heap, (size_t) nc * sizeof(*nh));

		if (!nh)
			return -1;
		s->heap = nh;
		s->heap_cap = nc;
	}
	i = s->heap_n++;
	s->heap[i] = (hent_t){ t, job, ver };
	while (i > 0) {
		int up = (i - 1) / 2;
		hent_t tmp;

		if (!h_less(&s->heap[i], &s->heap[up]))
			break;
		tmp = s->heap[i];
		s->heap[i] = s->heap[up];
		s->heap[up] = tmp;
		i = up;
	}
	return 0;
}

void sim_h_pop(sim_t *s)
{
	int i = 0, n = --s->heap_n;

	s->heap[0] = s->heap[n];
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;
		hent_t tmp;

		if (l < n && h_less(&s->heap[l], &s->heap[m]))
			m = l;
		if (r < n && h_less(&s->heap[r], &s->heap[m]))
			m = r;
		if (m == i)
			break;
		tmp = s->heap[i];
		s->heap[i] = s->heap[m];
		s->heap[m] = tmp;
		i = m;
	}
}

/* drop stale heap tops */
void sim_h_clean(sim_t *s)
{
	while (s->heap_n) {
		const hent_t *h = &s->heap[0];
		const sjob_t *j = &s->sj[h->job];

		if (j->state == S_RUNNING && j->ver == h->ver)
			return;
		sim_h_pop(s);
	}
}

/* ---- pending array ---- */

static int pend_cmp(const pol_job_t *a, int64_t submit, int64_t id)
{
	if (a->submit != submit)
		return a->submit < submit ? -1 : 1;
	return (a->id > id) - (a->id < id);
}

/* position of (submit, id) in pending, or where it would go */
static int pend_find(const sim_t *s, int64_t submit, int64_t id)
{
	const pol_job_t *v = s->pend_base + s->pend_off;
	int lo = 0, hi = s->pend_n;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (pend_cmp(&v[mid], submit, id) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int sim_pend_insert(sim_t *s, const pol_job_t *j)
{
	int pos = pend_find(s, j->submit, j->id);
	pol_job_t *v;

	if (pos < s->pend_n / 2 && s->pend_off > 0) {
		v = s->pend_base + s->pend_off;
		memmove(v - 1, v, (size_t) pos * sizeof(*v));
		s->pend_off--;
		s->pend_base[s->pend_off + pos] = *j;
		s->pend_n++;
		return 0;
	}
	if (s->pend_off + s->pend_n == s->pend_cap) {
		if (s->pend_off > s->pend_cap / 4) {
			memmove(s->pend_base, s->pend_base + s->pend_off,
				(size_t) s->pend_n * sizeof(*v));
			s->pend_off = 0;
		} else {
			int nc = s->pend_cap ? s->pend_cap * 2 : 1024;
			pol_job_t *nb = realloc(s->pend_base,
						(size_t) nc * sizeof(*nb));

			if (!nb)
				return -1;
			s->pend_base = nb;
			s->pend_cap = nc;
		}
	}
	v = s->pend_base + s->pend_off;
	memmove(v + pos + 1, v + pos, (size_t) (s->pend_n - pos) * sizeof(*v));
	v[pos] = *j;
	s->pend_n++;
	return 0;
}

static void pend_remove(sim_t *s, int pos)
{
	pol_job_t *v = s->pend_base + s->pend_off;

	if (pos < s->pend_n / 2) {
		memmove(v + 1, v, (size_t) pos * sizeof(*v));
		s->pend_off++;
	} else {
		memmove(v + pos, v + pos + 1,
			(size_t) (s->pend_n - pos - 1) * sizeof(*v));
	}
	s->pend_n--;
}

/* ---- model ---- */

static int ideal_level(const sim_t *s, const pol_job_t *j)
{
	int k = j->nodes > 0 ? j->nodes * j->gpus_per_node : j->total_gpus;

	return k <= s->maxg_pool[j->pool & 1] && j->nodes <= 1 ? POL_LVL_NVLINK
							       : POL_LVL_LEAF;
}

static double elastic_speed(double g, double serial)
{
	return g / (1.0 + serial * (g - 1.0));
}

static double job_rate(const sim_t *s, const pol_job_t *j, int lvl, int gpus)
{
	double r = s->p->slowdown[ideal_level(s, j)] / s->p->slowdown[lvl];
	int req = j->total_gpus;

	if (gpus != req && gpus > 0 && req > 0)
		r *= elastic_speed(gpus, s->p->elastic_serial) /
		     elastic_speed(req, s->p->elastic_serial);
	return r;
}

/* GPU-seconds of [a, b) on g GPUs inside the arrival window */
static double in_window(const sim_t *s, double a, double b, int g)
{
	double lo = (double) s->res->t0, hi = (double) s->res->t_last_submit;

	if (a < lo)
		a = lo;
	if (b > hi)
		b = hi;
	return b > a ? (b - a) * g : 0;
}

/* count GPU-seconds [a, b) on g GPUs of job id as lost */
static void lose(sim_t *s, int id, double a, double b, int g)
{
	sim_job_out_t *o = &s->res->jobs[s->order[id]];
	double w = in_window(s, a, b, g), all = b > a ? (b - a) * g : 0;

	s->res->lost_gpu_s += all;
	s->res->lost_gpu_s_arrival += w;
	s->sj[id].lost_win += w;
	o->lost_gpu_s += all;
}

/* the run of job id does amount of work (s at ideal speed) from time t:
 * the restart overhead first, then real work */
static void consume(sim_t *s, int id, double amount, double t)
{
	sjob_t *j = &s->sj[id];

	if (j->overhead > 0 && amount > 0) {
		double use = amount < j->overhead ? amount : j->overhead;
		double wall = j->rate > 0 ? use / j->rate : 0;

		j->overhead -= use;
		amount -= use;
		s->res->rework_gpu_s += wall * j->gpus;
		s->res->rework_gpu_s_arrival += in_window(s, t, t + wall,
							  j->gpus);
		lose(s, id, t, t + wall, j->gpus);
		if (j->overhead <= 1e-9) {
			j->overhead = 0;
			j->prog_start = t + wall;
		}
	}
	j->work -= amount;
	if (j->work < 0)
		j->work = 0;
}

/* j's work after an update over dt under checkpoint interval c, as
 * consume() computes it when no overhead is left (splitting the update
 * at a checkpoint as sim_update_work() does). */
static double work_after(const sjob_t *j, int64_t now, int64_t dt, int64_t c)
{
	double w = j->work;

	if (c > 0 && (now - j->run_start) / c > (j->t_upd - j->run_start) / c) {
		int64_t tc = j->run_start + (now - j->run_start) / c * c;

		w -= j->rate * (double) (tc - j->t_upd);
		if (w < 0)
			w = 0;
		w -= j->rate * (double) (now - tc);
	} else {
		w -= j->rate * (double) dt;
	}
	return w < 0 ? 0 : w;
}

/* Would this update give j the same work under every params.ckpt_alt,
 * as far as the run can tell?  With params.hide_remaining the run reads
 * nothing of a job's work (only the srtf oracle is shown it), so the
 * rounding of an update split at a checkpoint cannot change it; else the
 * work must agree bit for bit. */
static bool alt_same(const sim_t *s, const sjob_t *j, int64_t dt)
{
	double w;
	int k;

	if (j->overhead > 0)
		return false;
	if (s->p->hide_remaining)
		return true;
	w = work_after(j, s->now, dt, s->p->ckpt_s);
	for (k = 0; k < s->p->n_ckpt_alt; k++)
		if (work_after(j, s->now, dt, s->p->ckpt_alt[k]) != w)
			return false;
	return true;
}

void sim_update_work(sim_t *s, int id)
{
	sjob_t *j = &s->sj[id];
	int64_t dt = s->now - j->t_upd, c = s->p->ckpt_s;

	if (j->state == S_RUNNING && dt > 0 && s->res->ckpt_alt_same &&
	    !alt_same(s, j, dt))
		s->res->ckpt_alt_same = false;
	if (j->state == S_RUNNING && dt > 0) {
		j->attained += (double) j->gpus * (double) dt;
		j->att_win += in_window(s, (double) j->t_upd, (double) s->now,
					j->gpus);
		s->res->jobs[s->order[id]].run_s += dt;
		if (c > 0 && (s->now - j->run_start) / c >
				     (j->t_upd - j->run_start) / c) {
			/* a checkpoint at tc in (t_upd, now] */
			int64_t tc = j->run_start +
				     (s->now - j->run_start) / c * c;

			consume(s, id, j->rate * (double) (tc - j->t_upd),
				(double) j->t_upd);
			if (j->overhead == 0) {
				j->saved = j->work;
				j->save_t = tc;
			}
			j->ckpt_t = tc;
			consume(s, id, j->rate * (double) (s->now - tc),
				(double) tc);
		} else {
			consume(s, id, j->rate * (double) dt,
				(double) j->t_upd);
		}
		if (c == SIM_CKPT_CONTINUOUS && j->overhead == 0) {
			j->saved = j->work;
			j->save_t = s->now;
		}
	}
	j->t_upd = s->now;
}

static int schedule_finish(sim_t *s, int id)
{
	sjob_t *j = &s->sj[id];
	double left = j->work + j->overhead;
	double dt = j->rate > 0 ? ceil(left / j->rate - 1e-9) : 1e18;

	if (dt < 0)
		dt = 0;
	if (dt > 4e15)
		dt = 4e15;
	j->natural = s->now + (int64_t) dt;
	j->finish = j->natural;
	if (s->p->limit_kill != SIM_KILL_NONE && j->limit > 0 &&
	    j->run_start + j->limit < j->finish)
		j->finish = j->run_start + j->limit;
	j->ver++;
	return h_push(s, j->finish, id, j->ver);
}

/* ---- GPUs ---- */

int sim_fail(sim_t *s, int e, const char *what, int64_t id)
{
	agora_err_set(s->err, "policy %s: t=%lld: job %lld: %s",
		      pol_policy_name(s->pol), (long long) s->now,
		      (long long) (id >= 0 && id < s->n ? s->in[s->order[id]].id
							: id),
		      what);
	errno = e;
	return -1;
}

static int check_alloc(sim_t *s, const pol_job_t *pj, const pol_alloc_t *a,
		       const pol_alloc_t *own)
{
	int i, k, g = pol_alloc_gpus(a);

	if (a->n_parts < 1)
		return sim_fail(s, EPROTO,
				"START/RESIZE with an empty allocation",
				pj->id);
	for (i = 0; i < a->n_parts; i++) {
		const pol_alloc_part_t *pt = &a->parts[i];
		pol_gpumask_t avail;

		if (pt->node < 0 || pt->node >= s->c->n_nodes ||
		    !s->c->nodes[pt->node].up ||
		    s->c->nodes[pt->node].pool != pj->pool || !pt->gpus)
			return sim_fail(s, EPROTO,
					"allocation names a bad node", pj->id);
		for (k = 0; k < i; k++)
			if (a->parts[k].node == pt->node)
				return sim_fail(s, EPROTO,
						"allocation names a node twice",
						pj->id);
		avail = s->c->nodes[pt->node].free;
		for (k = 0; own && k < own->n_parts; k++)
			if (own->parts[k].node == pt->node)
				avail |= own->parts[k].gpus;
		if ((pt->gpus & avail) != pt->gpus)
			return sim_fail(
				s, EPROTO,
				"allocation uses GPUs that are not free",
				pj->id);
		if (pj->nodes > 0 &&
		    pol_popcount(pt->gpus) != pj->gpus_per_node)
			return sim_fail(
				s, EPROTO,
				"gang part does not match gpus_per_node",
				pj->id);
	}
	if (pj->nodes > 0 && a->n_parts != pj->nodes)
		return sim_fail(s, EPROTO,
				"gang does not start whole (node count)",
				pj->id);
	if (g < pj->min_gpus || g > pj->max_gpus ||
	    (pj->min_gpus == pj->max_gpus && g != pj->total_gpus))
		return sim_fail(s, EPROTO,
				"gang does not start whole (GPU count)",
				pj->id);
	return 0;
}

static void gpus_take(sim_t *s, const pol_alloc_t *a)
{
	int i;

	for (i = 0; i < a->n_parts; i++) {
		s->c->nodes[a->parts[i].node].free &= ~a->parts[i].gpus;
		s->used[a->parts[i].node] |= a->parts[i].gpus;
	}
	pol_freemap_take(s->fm, a);
	s->busy += pol_alloc_gpus(a);
}

void sim_gpus_give(sim_t *s, const pol_alloc_t *a)
{
	int i;

	for (i = 0; i < a->n_parts; i++) {
		s->c->nodes[a->parts[i].node].free |= a->parts[i].gpus;
		s->used[a->parts[i].node] &= ~a->parts[i].gpus;
	}
	pol_freemap_give(s->fm, a);
	s->busy -= pol_alloc_gpus(a);
}

/* ---- running array ---- */

static int run_add(sim_t *s, const pol_job_t *pj)
{
	if (s->run_n == s->run_cap) {
		int nc = s->run_cap ? s->run_cap * 2 : 256;
		pol_job_t *nr = realloc(s->run, (size_t) nc * sizeof(*nr));

		if (!nr)
			return -1;
		s->run = nr;
		s->run_cap = nc;
	}
	s->run[s->run_n] = *pj;
	s->sj[pj->id].run_pos = s->run_n++;
	return 0;
}

void sim_run_remove(sim_t *s, int id)
{
	int pos = s->sj[id].run_pos;

	s->run[pos] = s->run[--s->run_n];
	if (pos < s->run_n)
		s->sj[s->run[pos].id].run_pos = pos;
	s->sj[id].run_pos = -1;
}

static void set_alloc(sim_t *s, int id, const pol_alloc_t *a)
{
	sjob_t *j = &s->sj[id];
	pol_job_t *rj = &s->run[j->run_pos];
	sim_job_out_t *o = &s->res->jobs[s->order[id]];
	int lvl = (int) pol_alloc_level(s->c, a);

	pol_alloc_free(&j->alloc);
	j->alloc = *a; /* ownership moves in */
	j->gpus = pol_alloc_gpus(a);
	j->rate = job_rate(s, rj, lvl, j->gpus);
	rj->alloc = j->alloc;
	if (lvl > o->level)
		o->level = lvl;
	o->gpus = j->gpus;
}

/* ---- actions ---- */

int sim_act_start(sim_t *s, const pol_action_t *a)
{
	int64_t id = a->job_id;
	sjob_t *j;
	pol_job_t pj;
	pol_alloc_t copy;
	int pos;

	if (id < 0 || id >= s->n || s->sj[id].state != S_PENDING)
		return sim_fail(s, EPROTO, "START of a job that is not pending",
				id);
	j = &s->sj[id];
	pos = pend_find(s, s->sj[id].submit, id);
	pj = s->pend_base[s->pend_off + pos];
	if (pj.id != id)
		return sim_fail(s, EPROTO, "pending array out of order", id);
	if (check_alloc(s, &pj, &a->alloc, NULL))
		return -1;
	if (pol_alloc_copy(&copy, &a->alloc))
		return -1;
	pend_remove(s, pos);
	gpus_take(s, &copy);
	j->state = S_RUNNING;
	j->t_upd = s->now;
	j->run_start = s->now;
	j->ckpt_t = -1;
	j->save_t = -1;
	/* Slurm's launch on every start, then a restart's reload */
	j->overhead = (double) s->p->launch_s +
		      (j->preempted ? (double) s->p->restart_s + j->carry : 0);
	j->carry = 0;
	j->prog_start = j->overhead > 0 ? INFINITY : (double) s->now;
	if (s->res->jobs[s->order[id]].first_start < 0)
		s->res->jobs[s->order[id]].first_start = s->now;
	pj.state = POL_JOB_RUNNING;
	pj.start = s->now;
	pj.alloc.parts = NULL;
	pj.alloc.n_parts = 0;
	if (run_add(s, &pj)) {
		pol_alloc_free(&copy);
		return -1;
	}
	set_alloc(s, (int) id, &copy);
	return schedule_finish(s, (int) id);
}

/*
 * Take running job id off its GPUs and back to pending (pj: its running
 * entry, updated), losing the work since its last checkpoint: the GPU
 * time from then (or from when this run's restart overhead ended, the
 * overhead being counted as it ran) to now.
 */
static int requeue(sim_t *s, int id, pol_job_t *pj)
{
	sjob_t *j = &s->sj[id];
	double from;

	s->res->ckpt_alt_same = false;
	sim_update_work(s, id);
	if (s->p->ckpt_s != SIM_CKPT_CONTINUOUS) {
		from = (double) (j->ckpt_t >= 0 ? j->ckpt_t : j->run_start);
		if (from < j->prog_start)
			from = j->prog_start;
		if (from < (double) s->now)
			lose(s, id, from, (double) s->now, j->gpus);
		j->work = j->saved;
	} else {
		/* a restart cut short is redone in full next time, with
		 * its unfinished part (the --restart model as it was) */
		j->carry += j->overhead;
	}
	j->overhead = 0;
	sim_gpus_give(s, &j->alloc);
	sim_run_remove(s, id);
	pol_alloc_free(&j->alloc);
	j->gpus = 0;
	j->state = S_PENDING;
	j->preempted = 1;
	j->ver++;
	pj->state = POL_JOB_PENDING;
	pj->alloc.parts = NULL;
	pj->alloc.n_parts = 0;
	return sim_pend_insert(s, pj);
}

int sim_act_preempt(sim_t *s, const pol_action_t *a)
{
	int64_t id = a->job_id;
	pol_job_t pj;
	double lost0 = s->res->lost_gpu_s;
	int rc;
	sjob_t *j;

	if (id < 0 || id >= s->n || s->sj[id].state != S_RUNNING)
		return sim_fail(s, EPROTO,
				"PREEMPT of a job that is not running", id);
	pj = s->run[s->sj[id].run_pos];
	if (!pj.requeueable)
		return sim_fail(s, EPROTO, "PREEMPT of a non-requeueable job",
				id);
	s->res->jobs[s->order[id]].preemptions++;
	s->res->preemptions++;
	pj.preemptions++;
	sim_update_work(s, (int) id);
	/* the budget's count (pol_job_may_preempt()): this preemption is the
	 * first since the job saved work if this run saved some */
	j = &s->sj[id];
	j->stale = j->save_t >= j->run_start ? 1 : j->stale + 1;
	pj.stale_preempts = j->stale;
	pj.last_ckpt = -1;
	rc = requeue(s, (int) id, &pj);
	s->res->preempt_lost_gpu_s += s->res->lost_gpu_s - lost0;
	return rc;
}

/*
 * Running job id reached its time limit (now = run_start + limit).
 * SIM_KILL_FAIL: it ends failed and all its GPU time not yet counted as
 * lost is lost; returns 1.  SIM_KILL_RESUBMIT: requeued like a
 * preemption, with submit = now and twice the limit; returns 0.
 */
int sim_kill_at_limit(sim_t *s, int id)
{
	sjob_t *j = &s->sj[id];
	sim_job_out_t *o = &s->res->jobs[s->order[id]];
	pol_job_t pj = s->run[j->run_pos];

	o->killed++;
	s->res->kills++;
	if (s->p->limit_kill == SIM_KILL_RESUBMIT) {
		j->limit = j->limit > INT64_MAX / 4 ? j->limit : 2 * j->limit;
		j->submit = s->now;
		pj.submit = s->now;
		pj.time_limit = j->limit;
		o->limit = j->limit;
		return requeue(s, id, &pj) ? -1 : 0;
	}
	sim_update_work(s, id);
	{
		double all = j->attained - o->lost_gpu_s;
		double win = j->att_win - j->lost_win;

		s->res->lost_gpu_s += all > 0 ? all : 0;
		s->res->lost_gpu_s_arrival += win > 0 ? win : 0;
		o->lost_gpu_s = j->attained;
		j->lost_win = j->att_win;
	}
	o->end = s->now;
	s->res->failed++;
	sim_gpus_give(s, &j->alloc);
	sim_run_remove(s, id);
	pol_alloc_free(&j->alloc);
	j->gpus = 0;
	j->state = S_DONE;
	return 1;
}

int sim_act_resize(sim_t *s, const pol_action_t *a)
{
	int64_t id = a->job_id;
	sjob_t *j;
	pol_alloc_t copy;

	s->res->ckpt_alt_same = false;
	if (id < 0 || id >= s->n || s->sj[id].state != S_RUNNING)
		return sim_fail(s, EPROTO,
				"RESIZE of a job that is not running", id);
	j = &s->sj[id];
	if (s->run[j->run_pos].min_gpus == s->run[j->run_pos].max_gpus)
		return sim_fail(s, EPROTO, "RESIZE of a rigid job", id);
	if (check_alloc(s, &s->run[j->run_pos], &a->alloc, &j->alloc))
		return -1;
	if (pol_alloc_copy(&copy, &a->alloc))
		return -1;
	sim_update_work(s, (int) id);
	sim_gpus_give(s, &j->alloc);
	gpus_take(s, &copy);
	set_alloc(s, (int) id, &copy);
	return schedule_finish(s, (int) id);
}

int sim_check_invariants(sim_t *s)
{
	int i, busy = 0, total = 0;

	for (i = 0; i < s->c->n_nodes; i++) {
		pol_gpumask_t all = pol_node_all_gpus(s->c, i);
		const pol_node_t *nd = &s->c->nodes[i];

		if (s->used[i] & nd->free)
			return sim_fail(s, EPROTO,
					"a GPU is both busy and free", -1);
		if ((s->used[i] | nd->free) != all && nd->up)
			return sim_fail(s, EPROTO, "a node's GPUs were lost",
					-1);
		busy += pol_popcount(s->used[i]);
		total += pol_popcount(all);
	}
	if (busy != s->busy || busy > total)
		return sim_fail(s, EPROTO, "more GPUs in use than exist", -1);
	busy = 0;
	for (i = 0; i < s->run_n; i++)
		busy += s->sj[s->run[i].id].gpus;
	if (busy != s->busy)
		return sim_fail(s, EPROTO,
				"running jobs do not account for busy GPUs",
				-1);
	return 0;
}

/* fragmentation probe: free GPUs the oldest pending job cannot use */
int sim_probe_frag(sim_t *s)
{
	const pol_placer_t *pl = s->p->frag_placer ? s->p->frag_placer
						   : &pol_placer_stock;
	const pol_job_t *h;
	pol_alloc_t a;
	int free;

	s->frag_now = 0;
	if (!s->pend_n)
		return 0;
	h = &s->pend_base[s->pend_off];
	free = pol_freemap_free_gpus(s->fm, h->pool);
	if (free < h->total_gpus)
		return 0;
	if (!pl->place(pl->arg, s->fm, h, &a)) {
		pol_alloc_free(&a);
		return 0;
	}
	if (errno != ENOSPC)
		return -1;
	s->frag_now = free;
	return 0;
}
