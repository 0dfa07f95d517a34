/*
 * sim_engine.c - the event loop of the simulator (contract in sim.h).
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
#include <stdlib.h>
#include <string.h>

#include "sim.h"

enum { S_FUTURE = 0, S_PENDING, S_RUNNING, S_DONE, S_SKIPPED };

typedef struct sjob {
	int state;
	int preempted; /* has run before: restart cost on next start */
	double work;   /* remaining, s at ideal speed */
	double rate;
	int64_t t_upd;
	int64_t finish;
	uint32_t ver;
	int run_pos;
	int gpus;
	double attained;
	pol_alloc_t alloc;
} sjob_t;

typedef struct hent {
	int64_t t;
	int job;
	uint32_t ver;
} hent_t;

typedef struct sim {
	const sim_job_t *in;
	const sim_params_t *p;
	pol_policy_t *pol;
	pol_cluster_t *c;
	pol_freemap_t *fm;
	pol_gpumask_t *used;
	int n, *order; /* sim id -> input index, by (submit, index) */
	sjob_t *sj;
	pol_job_t *pend_base;
	int pend_off, pend_n, pend_cap;
	pol_job_t *run;
	int run_n, run_cap;
	hent_t *heap;
	int heap_n, heap_cap;
	int busy;
	int maxg_pool[2];
	double frag_now; /* GPUs counted as fragmented until next event */
	int util_cap;
	sim_result_t *res;
	agora_err_t *err;
	int64_t now;
} sim_t;

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
	p->limit_factor = 2.0;
	p->elastic_serial = 0.05;
	p->restart_s = 60;
	p->seed = 1;
	p->bin_s = 3600;
	p->check = true;
	p->progress_every = 2000;
}

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
	s->heap[i] = (hent_t) { t, job, ver };
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

static void h_pop(sim_t *s)
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
static void h_clean(sim_t *s)
{
	while (s->heap_n) {
		const hent_t *h = &s->heap[0];
		const sjob_t *j = &s->sj[h->job];

		if (j->state == S_RUNNING && j->ver == h->ver)
			return;
		h_pop(s);
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

static int pend_insert(sim_t *s, const pol_job_t *j)
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

	return k <= s->maxg_pool[j->pool & 1] && j->nodes <= 1
		       ? POL_LVL_NVLINK
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

static void update_work(sim_t *s, int id)
{
	sjob_t *j = &s->sj[id];
	int64_t dt = s->now - j->t_upd;

	if (j->state == S_RUNNING && dt > 0) {
		j->work -= j->rate * (double) dt;
		if (j->work < 0)
			j->work = 0;
		j->attained += (double) j->gpus * (double) dt;
		s->res->jobs[s->order[id]].run_s += dt;
	}
	j->t_upd = s->now;
}

static int schedule_finish(sim_t *s, int id)
{
	sjob_t *j = &s->sj[id];
	double dt = j->rate > 0 ? ceil(j->work / j->rate - 1e-9) : 1e18;

	if (dt < 0)
		dt = 0;
	if (dt > 4e15)
		dt = 4e15;
	j->finish = s->now + (int64_t) dt;
	j->ver++;
	return h_push(s, j->finish, id, j->ver);
}

/* ---- GPUs ---- */

static int fail(sim_t *s, int e, const char *what, int64_t id)
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
		return fail(s, EPROTO, "START/RESIZE with an empty allocation",
			    pj->id);
	for (i = 0; i < a->n_parts; i++) {
		const pol_alloc_part_t *pt = &a->parts[i];
		pol_gpumask_t avail;

		if (pt->node < 0 || pt->node >= s->c->n_nodes ||
		    !s->c->nodes[pt->node].up ||
		    s->c->nodes[pt->node].pool != pj->pool || !pt->gpus)
			return fail(s, EPROTO, "allocation names a bad node",
				    pj->id);
		for (k = 0; k < i; k++)
			if (a->parts[k].node == pt->node)
				return fail(s, EPROTO,
					    "allocation names a node twice",
					    pj->id);
		avail = s->c->nodes[pt->node].free;
		for (k = 0; own && k < own->n_parts; k++)
			if (own->parts[k].node == pt->node)
				avail |= own->parts[k].gpus;
		if ((pt->gpus & avail) != pt->gpus)
			return fail(s, EPROTO,
				    "allocation uses GPUs that are not free",
				    pj->id);
		if (pj->nodes > 0 && pol_popcount(pt->gpus) !=
					     pj->gpus_per_node)
			return fail(s, EPROTO,
				    "gang part does not match gpus_per_node",
				    pj->id);
	}
	if (pj->nodes > 0 && a->n_parts != pj->nodes)
		return fail(s, EPROTO, "gang does not start whole (node count)",
			    pj->id);
	if (g < pj->min_gpus || g > pj->max_gpus ||
	    (pj->min_gpus == pj->max_gpus && g != pj->total_gpus))
		return fail(s, EPROTO, "gang does not start whole (GPU count)",
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

static void gpus_give(sim_t *s, const pol_alloc_t *a)
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

static void run_remove(sim_t *s, int id)
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

static int act_start(sim_t *s, const pol_action_t *a)
{
	int64_t id = a->job_id;
	sjob_t *j;
	pol_job_t pj;
	pol_alloc_t copy;
	int pos;

	if (id < 0 || id >= s->n || s->sj[id].state != S_PENDING)
		return fail(s, EPROTO, "START of a job that is not pending",
			    id);
	j = &s->sj[id];
	pos = pend_find(s, s->in[s->order[id]].submit, id);
	pj = s->pend_base[s->pend_off + pos];
	if (pj.id != id)
		return fail(s, EPROTO, "pending array out of order", id);
	if (check_alloc(s, &pj, &a->alloc, NULL))
		return -1;
	if (pol_alloc_copy(&copy, &a->alloc))
		return -1;
	pend_remove(s, pos);
	gpus_take(s, &copy);
	j->state = S_RUNNING;
	j->t_upd = s->now;
	if (j->preempted)
		j->work += (double) s->p->restart_s;
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

static int act_preempt(sim_t *s, const pol_action_t *a)
{
	int64_t id = a->job_id;
	sjob_t *j;
	pol_job_t pj;

	if (id < 0 || id >= s->n || s->sj[id].state != S_RUNNING)
		return fail(s, EPROTO, "PREEMPT of a job that is not running",
			    id);
	j = &s->sj[id];
	pj = s->run[j->run_pos];
	if (!pj.requeueable)
		return fail(s, EPROTO, "PREEMPT of a non-requeueable job", id);
	update_work(s, (int) id);
	gpus_give(s, &j->alloc);
	run_remove(s, (int) id);
	pol_alloc_free(&j->alloc);
	j->gpus = 0;
	j->state = S_PENDING;
	j->preempted = 1;
	j->ver++;
	pj.state = POL_JOB_PENDING;
	pj.alloc.parts = NULL;
	pj.alloc.n_parts = 0;
	s->res->jobs[s->order[id]].preemptions++;
	s->res->preemptions++;
	return pend_insert(s, &pj);
}

static int act_resize(sim_t *s, const pol_action_t *a)
{
	int64_t id = a->job_id;
	sjob_t *j;
	pol_alloc_t copy;

	if (id < 0 || id >= s->n || s->sj[id].state != S_RUNNING)
		return fail(s, EPROTO, "RESIZE of a job that is not running",
			    id);
	j = &s->sj[id];
	if (s->run[j->run_pos].min_gpus == s->run[j->run_pos].max_gpus)
		return fail(s, EPROTO, "RESIZE of a rigid job", id);
	if (check_alloc(s, &s->run[j->run_pos], &a->alloc, &j->alloc))
		return -1;
	if (pol_alloc_copy(&copy, &a->alloc))
		return -1;
	update_work(s, (int) id);
	gpus_give(s, &j->alloc);
	gpus_take(s, &copy);
	set_alloc(s, (int) id, &copy);
	return schedule_finish(s, (int) id);
}

static int check_invariants(sim_t *s)
{
	int i, busy = 0, total = 0;

	for (i = 0; i < s->c->n_nodes; i++) {
		pol_gpumask_t all = pol_node_all_gpus(s->c, i);
		const pol_node_t *nd = &s->c->nodes[i];

		if (s->used[i] & nd->free)
			return fail(s, EPROTO, "a GPU is both busy and free",
				    -1);
		if ((s->used[i] | nd->free) != all && nd->up)
			return fail(s, EPROTO, "a node's GPUs were lost", -1);
		busy += pol_popcount(s->used[i]);
		total += pol_popcount(all);
	}
	if (busy != s->busy || busy > total)
		return fail(s, EPROTO, "more GPUs in use than exist", -1);
	busy = 0;
	for (i = 0; i < s->run_n; i++)
		busy += s->sj[s->run[i].id].gpus;
	if (busy != s->busy)
		return fail(s, EPROTO, "running jobs do not account for busy GPUs",
			    -1);
	return 0;
}

/* fragmentation probe: free GPUs the oldest pending job cannot use */
static int probe_frag(sim_t *s)
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
			(double) ((t < r->t_last_submit ? t : r->t_last_submit) -
				  a);
	while (a < t) {
		int64_t b = (a - r->t0) / r->bin_s;
		int64_t bend = r->t0 + (b + 1) * r->bin_s;
		int64_t e = t < bend ? t : bend;

		if (b >= r->n_bins) {
			if (b >= s->util_cap) {
				int nc = (int) b * 2 + 64;
				double *nu = realloc(r->util,
						     (size_t) nc * sizeof(*nu));

				if (!nu)
					return -1;
				r->util = nu;
				s->util_cap = nc;
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
	pj->state = POL_JOB_PENDING;
	pj->remaining = in->duration;
	if (in->time_limit > 0) {
		pj->time_limit = in->time_limit;
	} else {
		double f = 1.0 + (s->p->limit_factor - 1.0) * sim_rand_unit(rng);
		int64_t l = (int64_t) ceil((double) in->duration * f);

		pj->time_limit = ((l + 59) / 60) * 60;
		if (pj->time_limit < 60)
			pj->time_limit = 60;
	}
	o->limit = pj->time_limit;
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

static int sim_loop(sim_t *s)
{
	pol_actions_t acts = { 0 };
	uint64_t rng = s->p->seed;
	int64_t wake = 0, next_prog = s->p->progress_every;
	int ai = 0, done = 0, rc = -1, i, live = 0;
	sim_result_t *r = s->res;

	for (i = 0; i < s->n; i++)
		if (s->sj[i].state != S_SKIPPED)
			live++;
	s->now = r->t0;
	while (done < live) {
		int64_t t = INT64_MAX;
		pol_snapshot_t snap;

		while (ai < s->n && s->sj[ai].state == S_SKIPPED)
			ai++;
		if (ai < s->n)
			t = s->in[s->order[ai]].submit;
		h_clean(s);
		if (s->heap_n && s->heap[0].t < t)
			t = s->heap[0].t;
		if (wake > s->now && wake < t)
			t = wake;
		if (t == INT64_MAX) {
			fail(s, EPROTO, "stall: jobs pending, none running, no event left (a job the policy never starts)",
			     s->pend_n ? s->pend_base[s->pend_off].id : -1);
			goto out;
		}
		if (account(s, t))
			goto nomem;
		s->now = t;
		r->events++;
		/* completions */
		for (h_clean(s); s->heap_n && s->heap[0].t <= t; h_clean(s)) {
			int id = s->heap[0].job;
			sjob_t *j = &s->sj[id];

			h_pop(s);
			if (j->state != S_RUNNING)
				continue;
			update_work(s, id);
			if (r->jobs[s->order[id]].finish >= 0) {
				fail(s, EPROTO, "job ends twice", id);
				goto out;
			}
			r->jobs[s->order[id]].finish = t;
			gpus_give(s, &j->alloc);
			run_remove(s, id);
			pol_alloc_free(&j->alloc);
			j->gpus = 0;
			j->state = S_DONE;
			done++;
		}
		/* arrivals */
		while (ai < s->n && (s->sj[ai].state == S_SKIPPED ||
				     s->in[s->order[ai]].submit <= t)) {
			pol_job_t pj;

			if (s->sj[ai].state != S_SKIPPED) {
				make_pending(s, ai, &pj, &rng);
				s->sj[ai].state = S_PENDING;
				s->sj[ai].work = (double) s->in[s->order[ai]].duration;
				if (pend_insert(s, &pj))
					goto nomem;
			}
			ai++;
		}
		if (wake && wake <= t)
			wake = 0;
		if (done == live)
			break;
		/* refresh the running jobs' service and remaining work */
		for (i = 0; i < s->run_n; i++) {
			int id = (int) s->run[i].id;

			update_work(s, id);
			s->run[i].attained = (int64_t) s->sj[id].attained;
			s->run[i].remaining = (int64_t) ceil(s->sj[id].work);
		}
		for (i = 0; i < s->pend_n; i++) {
			pol_job_t *pj = &s->pend_base[s->pend_off + i];

			if (s->sj[pj->id].preempted) {
				pj->attained = (int64_t) s->sj[pj->id].attained;
				pj->remaining = (int64_t) ceil(s->sj[pj->id].work);
			}
		}
		snap.cluster = s->c;
		snap.pending = s->pend_base + s->pend_off;
		snap.n_pending = s->pend_n;
		snap.running = s->run;
		snap.n_running = s->run_n;
		snap.n_tenants = 0;
		pol_actions_clear(&acts);
		if (pol_policy_decide(s->pol, &snap, t, &acts)) {
			agora_err_set(s->err, "policy %s: t=%lld: decide failed",
				      pol_policy_name(s->pol), (long long) t);
			goto out;
		}
		r->decisions++;
		for (i = 0; i < acts.n; i++) {
			const pol_action_t *a = &acts.v[i];
			int e = 0;

			switch (a->type) {
			case POL_ACT_START: e = act_start(s, a); break;
			case POL_ACT_PREEMPT: e = act_preempt(s, a); break;
			case POL_ACT_RESIZE: e = act_resize(s, a); break;
			case POL_ACT_HOLD: break;
			}
			if (e)
				goto out;
		}
		if (acts.wakeup > t)
			wake = acts.wakeup;
		if (s->p->check && check_invariants(s))
			goto out;
		if (probe_frag(s))
			goto out;
		if (s->p->progress && r->decisions >= next_prog) {
			sim_progress_t pr = { t, r->t0, done, live, s->pend_n,
					      s->run_n, r->events };

			s->p->progress(s->p->progress_arg, &pr);
			next_prog = r->decisions + s->p->progress_every;
		}
	}
	r->t_end = s->now;
	for (i = 0; i < r->n_bins; i++)
		r->util[i] /= (double) r->bin_s * (double) r->total_gpus;
	if (s->pend_n || s->run_n) {
		fail(s, EPROTO, "jobs left at the end", -1);
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

int sim_run(const pol_cluster_t *cluster, const sim_job_t *jobs, int n,
	    pol_policy_t *policy, const sim_params_t *params,
	    sim_result_t *res, agora_err_t *err)
{
	sim_t s;
	int i, rc;

	memset(res, 0, sizeof(*res));
	if (!cluster || (!jobs && n) || n < 0 || !policy || !params ||
	    params->bin_s <= 0 || params->limit_factor < 1) {
		agora_err_set(err, "simulator: invalid arguments");
		errno = EINVAL;
		return -1;
	}
	memset(&s, 0, sizeof(s));
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
	res->bin_s = params->bin_s;
	res->total_gpus = pol_cluster_gpus(s.c);
	for (i = 0; i < n; i++) {
		s.order[i] = i;
		res->jobs[i].first_start = res->jobs[i].finish = -1;
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
