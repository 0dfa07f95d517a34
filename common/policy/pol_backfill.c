/*
 * pol_backfill.c - "backfill": priority order plus EASY backfill on time
 * limits, the behaviour of Slurm's sched/backfill reduced to one
 * reservation.
 *
 * Pass:
 *  1. start jobs in priority order while they fit (the main scheduler);
 *  2. the first job that does not fit (the head) gets a reservation: walk
 *     running jobs (and those just started) by expected end = start +
 *     time limit (never before now), releasing their GPUs on a scratch map
 *     until the head fits; that time is the shadow time T and the GPUs it
 *     would get are the reserved set R.  No reservation when T is beyond
 *     now + window (Slurm plans no further than bf_window);
 *  3. test at most max_job_test later jobs in priority order: a job whose
 *     limit ends by T may use any free GPU, a longer one only GPUs outside
 *     R.  So no backfilled job can delay the head (EASY, Mu'alem &
 *     Feitelson, TPDS 2001).
 * Slurm reserves for every job it tests (conservative); this keeps one,
 * as the issue asks ("EASY").
 *
 * Parameters (defaults are Slurm 22.05's, slurm.conf(5) SchedulerParameters):
 *   window=86400        bf_window (1440 minutes), seconds
 *   max_job_test=500    bf_max_job_test; 0 = unlimited
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pol_policy.h"

typedef struct bf_end {
	int64_t end, id;
	const pol_alloc_t *alloc;
} bf_end_t;

typedef struct bf_state {
	const pol_placer_t *placer;
	pol_work_t w;
	pol_freemap_t *ex, *sh;
	bf_end_t *ends;
	int ends_cap;
	int64_t window;
	int max_job_test;
} bf_state_t;

static void *bf_create(const char *params, const pol_placer_t *placer,
		       agora_err_t *err)
{
	static const char *const keys[] = { "window", "max_job_test", NULL };
	double v[] = { 86400, 500 };
	bf_state_t *s;

	if (pol_params_parse("backfill", params, keys, v, err))
		return NULL;
	if (v[0] < 0 || v[1] < 0) {
		agora_err_set(
			err,
			"policy backfill: window and max_job_test must be >= 0");
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->placer = placer;
	s->window = (int64_t) v[0];
	s->max_job_test = (int) v[1];
	return s;
}

static int cmp_end(const void *x, const void *y)
{
	const bf_end_t *a = x, *b = y;

	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

static int place_take(bf_state_t *s, pol_freemap_t *fm, const pol_job_t *j,
		      pol_alloc_t *a)
{
	if (s->placer->place(s->placer->arg, fm, j, a))
		return -1;
	return 0;
}

/* Shadow time and reserved GPUs of head h; *T = INT64_MAX if never. */
static int bf_shadow(bf_state_t *s, const pol_snapshot_t *snap, int64_t now,
		     const pol_actions_t *out, int first, const pol_job_t *h,
		     int64_t *T, pol_alloc_t *R)
{
	int n = 0, i, need = snap->n_running + out->n - first;

	*T = INT64_MAX;
	if (need > s->ends_cap) {
		bf_end_t *ne = realloc(s->ends, (size_t) need * sizeof(*ne));

		if (!ne) {
			errno = ENOMEM;
			return -1;
		}
		s->ends = ne;
		s->ends_cap = need;
	}
	for (i = 0; i < snap->n_running; i++) {
		const pol_job_t *r = &snap->running[i];
		int64_t e = r->time_limit > 0 ? r->start + r->time_limit
					      : INT64_MAX;

		s->ends[n++] = (bf_end_t){ e < now ? now : e, r->id,
					   &r->alloc };
	}
	for (i = first; i < out->n; i++) {
		const pol_action_t *a = &out->v[i];

		/* phase 1 stores the expected end in score (-1: none) */
		if (a->type != POL_ACT_START)
			continue;
		s->ends[n++] = (bf_end_t){ a->score >= 0 ? (int64_t) a->score
							 : INT64_MAX,
					   a->job_id, &a->alloc };
	}
	if (n > 1)
		qsort(s->ends, (size_t) n, sizeof(*s->ends), cmp_end);
	if (pol_freemap_assign(s->sh, s->w.fm))
		return -1;
	for (i = 0; i < n; i++) {
		if (s->ends[i].end == INT64_MAX)
			break;
		if (pol_freemap_give(s->sh, s->ends[i].alloc))
			return -1; /* alloc not busy: inconsistent snapshot */
		if (i + 1 < n && s->ends[i + 1].end == s->ends[i].end)
			continue;
		if (!place_take(s, s->sh, h, R)) {
			*T = s->ends[i].end;
			return 0;
		}
		if (errno != ENOSPC)
			return -1;
	}
	return 0;
}

static int bf_decide(void *state, const pol_snapshot_t *snap, int64_t now,
		     pol_actions_t *out)
{
	bf_state_t *s = state;
	const pol_job_t *h = NULL;
	pol_alloc_t R = { NULL, 0 };
	int64_t T = INT64_MAX;
	int i, first_start = out->n, tested = 0, rc = -1, resv = 0;

	if (pol_work_sync(&s->w, snap->cluster, snap->n_pending) ||
	    pol_order_pending(snap, s->w.idx))
		return -1;
	if (!s->ex || pol_freemap_cluster(s->ex) != snap->cluster) {
		pol_freemap_destroy(&s->ex);
		pol_freemap_destroy(&s->sh);
		s->ex = pol_freemap_create(snap->cluster);
		s->sh = pol_freemap_create(snap->cluster);
		if (!s->ex || !s->sh)
			return -1;
	}
	/* 1. main scheduler: priority order until the first misfit */
	for (i = 0; i < snap->n_pending; i++) {
		const pol_job_t *j = &snap->pending[s->w.idx[i]];
		pol_alloc_t a;

		if (place_take(s, s->w.fm, j, &a)) {
			if (errno != ENOSPC)
				return -1;
			h = j;
			break;
		}
		if (pol_freemap_take(s->w.fm, &a) ||
		    pol_actions_add(out, POL_ACT_START, j->id, &a,
				    j->time_limit > 0
					    ? (double) (now + j->time_limit)
					    : -1,
				    NULL)) {
			pol_alloc_free(&a);
			return -1;
		}
		pol_alloc_free(&a);
	}
	if (!h)
		return 0;
	/* 2. reservation for the head */
	if (bf_shadow(s, snap, now, out, first_start, h, &T, &R))
		goto out;
	if (pol_freemap_assign(s->ex, s->w.fm))
		goto out;
	if (T != INT64_MAX && T <= now + s->window) {
		int p;

		resv = 1;
		for (p = 0; p < R.n_parts; p++)
			pol_freemap_take_mask(s->ex, R.parts[p].node,
					      R.parts[p].gpus);
	}
	if (pol_actions_add(out, POL_ACT_HOLD, h->id, resv ? &R : NULL,
			    resv ? (double) T : -1, "Resources"))
		goto out;
	/* 3. backfill */
	for (i++; i < snap->n_pending; i++) {
		const pol_job_t *j = &snap->pending[s->w.idx[i]];
		int64_t end = j->time_limit > 0 ? now + j->time_limit
						: INT64_MAX;
		pol_freemap_t *fm;
		pol_alloc_t a;
		int p;

		if (s->max_job_test && tested >= s->max_job_test)
			break;
		tested++;
		fm = (resv && end <= T) ? s->w.fm : s->ex;
		if (place_take(s, fm, j, &a)) {
			if (errno != ENOSPC)
				goto out;
			continue;
		}
		if (pol_freemap_take(s->w.fm, &a)) {
			pol_alloc_free(&a);
			goto out;
		}
		for (p = 0; p < a.n_parts; p++)
			pol_freemap_take_mask(s->ex, a.parts[p].node,
					      a.parts[p].gpus);
		if (pol_actions_add(out, POL_ACT_START, j->id, &a, 0,
				    "backfill")) {
			pol_alloc_free(&a);
			goto out;
		}
		pol_alloc_free(&a);
	}
	rc = 0;
out:
	pol_alloc_free(&R);
	return rc;
}

static void bf_destroy(void *state)
{
	bf_state_t *s = state;

	if (!s)
		return;
	pol_work_free(&s->w);
	pol_freemap_destroy(&s->ex);
	pol_freemap_destroy(&s->sh);
	free(s->ends);
	free(s);
}

const pol_policy_ops_t pol_backfill_ops = {
	.name = "backfill",
	.create = bf_create,
	.decide = bf_decide,
	.destroy = bf_destroy,
};
