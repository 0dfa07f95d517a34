/*
 * pol_srtf.c - "srtf": preemptive shortest remaining time first with
 * perfect knowledge of every job's remaining work (pol_job_t.remaining,
 * which only a simulator can fill).  An oracle bound for mean JCT, not a
 * deployable policy; it starves large gangs under load (see
 * doc/evaluation.md).  Order: remaining seconds, then submit, then id;
 * a job with unknown remaining (< 0) uses its time limit.  The pass is
 * pol_preempt_pass() over a binary heap popped lazily, so only the jobs
 * that can run are ordered.  No parameters.
 */
#include <errno.h>
#include <stdlib.h>

#include "agora_mem.h"
#include "pol_policy_int.h"

typedef struct srtf_ent {
	int64_t key, submit, id;
	const pol_job_t *job;
	bool running;
} srtf_ent_t;

typedef struct srtf_state {
	const pol_placer_t *placer;
	pol_preempt_t pp;
	srtf_ent_t *heap;
	int n;
	size_t cap;
} srtf_state_t;

static void *srtf_create(const char *params, const pol_placer_t *placer,
			 agora_err_t *err)
{
	static const char *const keys[] = { "budget", NULL };
	double v[1] = { POL_PREEMPT_BUDGET_DEFAULT };
	srtf_state_t *s;

	if (pol_params_parse("srtf", params, keys, v, err) ||
	    pol_budget_check("srtf", v[0], err))
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->placer = placer;
	s->pp.budget = (int) v[0];
	return s;
}

static int less(const srtf_ent_t *a, const srtf_ent_t *b)
{
	if (a->key != b->key)
		return a->key < b->key;
	if (a->submit != b->submit)
		return a->submit < b->submit;
	return a->id < b->id;
}

static void sift_down(srtf_ent_t *h, int n, int i)
{
	for (;;) {
		int l = 2 * i + 1, r = l + 1, m = i;
		srtf_ent_t t;

		if (l < n && less(&h[l], &h[m]))
			m = l;
		if (r < n && less(&h[r], &h[m]))
			m = r;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static const pol_job_t *srtf_next(void *it, bool *running)
{
	srtf_state_t *s = it;
	srtf_ent_t top;

	if (s->n == 0)
		return NULL;
	top = s->heap[0];
	s->heap[0] = s->heap[--s->n];
	sift_down(s->heap, s->n, 0);
	*running = top.running;
	return top.job;
}

static int64_t key_of(const pol_job_t *j)
{
	if (j->remaining >= 0)
		return j->remaining;
	return j->time_limit > 0 ? j->time_limit : INT64_MAX;
}

static int srtf_decide(void *state, const pol_snapshot_t *snap, int64_t now,
		       pol_actions_t *out)
{
	srtf_state_t *s = state;
	int i, n = snap->n_pending + snap->n_running;

	(void) now;
	if (agora_grow((void **) &s->heap, &s->cap, (size_t) n,
		       sizeof(*s->heap)))
		return -1;
	s->n = 0;
	for (i = 0; i < snap->n_running; i++) {
		const pol_job_t *j = &snap->running[i];

		s->heap[s->n++] = (srtf_ent_t){ key_of(j), j->submit, j->id, j,
						true };
	}
	for (i = 0; i < snap->n_pending; i++) {
		const pol_job_t *j = &snap->pending[i];

		s->heap[s->n++] = (srtf_ent_t){ key_of(j), j->submit, j->id, j,
						false };
	}
	for (i = s->n / 2 - 1; i >= 0; i--)
		sift_down(s->heap, s->n, i);
	return pol_preempt_pass(&s->pp, s->placer, snap, srtf_next, s, NULL,
				NULL, out);
}

static void srtf_destroy(void *state)
{
	srtf_state_t *s = state;

	if (!s)
		return;
	pol_preempt_free(&s->pp);
	free(s->heap);
	free(s);
}

const pol_policy_ops_t pol_srtf_ops = {
	.name = "srtf",
	.create = srtf_create,
	.decide = srtf_decide,
	.destroy = srtf_destroy,
	.oracle = true,
};
