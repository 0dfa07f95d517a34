/*
 * pol_backfill.c - "backfill": priority order plus backfill on time
 * limits, the way Slurm 22.05's sched/backfill plans (the default), or
 * with one EASY reservation (easy=1).
 *
 * Both modes first run the main scheduler: start jobs in priority order
 * while they fit; the first job that does not fit is the head.
 *
 * easy=1 (EASY, Mu'alem & Feitelson, TPDS 2001):
 *  1. the head gets a reservation: walk running jobs (and those just
 *     started) by expected end = start + time limit (never before now),
 *     releasing their GPUs on a scratch map until the head fits; that time
 *     is the shadow time T and the GPUs it would get are the reserved set
 *     R.  No reservation when T is beyond now + window;
 *  2. test at most max_job_test later jobs in priority order: a job whose
 *     limit ends by T may use any free GPU, a longer one only GPUs outside
 *     R.  No backfilled job can delay the head.
 *
 * easy=0, Slurm's plan (src/plugins/sched/backfill/backfill.c,
 * _attempt_backfill(), and the will-run test of
 * src/plugins/select/cons_common/job_test.c, _will_run_test()):
 *  - a map of time slots over [now, now + window), both ends rounded down
 *    to bf_resolution, each slot with the set of NODES not reserved in it
 *    (Slurm's node_space_map_t: reservations are whole nodes);
 *  - every pending job from the head on, at most max_job_test of them, in
 *    priority order: the usable nodes are those free of reservations in
 *    every slot that meets [start, start + limit] (start = now at first);
 *    the will-run test finds the earliest time the job fits on them:
 *    now if it fits, else running jobs on those nodes end in order of
 *    start + limit, in batches (the first batch ends at the next 30 s
 *    boundary after the first end, the window then doubles until the next
 *    end is inside), and the job's time is the last end of the first batch
 *    after which it fits;
 *  - if that time is now, the job starts (backfilled);
 *  - if a slot boundary before that time frees a usable node
 *    ("later_start"), or the reservation would overlap one already made,
 *    the test is repeated from that later time;
 *  - otherwise, unless the time is past now + window, the job's nodes are
 *    reserved from its time to its time + limit, both rounded down to
 *    bf_resolution, at least one bf_resolution long.
 *  So every tested job is protected, not only the head, and a 1-GPU
 *  reservation keeps its whole node from longer jobs.  Passes take no
 *  time here, so Slurm's lock yields (bf_yield_interval) and bf_continue
 *  have nothing to act on; bf_continue is accepted for slurm.conf parity.
 *  Left out: advance reservations, licenses, heterogeneous jobs, per-user
 *  and per-partition test limits (bf_max_job_user, ...), bf_interval (a
 *  pass runs at every event), and the 2 s wall-clock cut of the will-run
 *  test.
 *
 * Parameters (defaults are Slurm 22.05's, slurm.conf(5)
 * SchedulerParameters and backfill.c; times are SECONDS with optional
 * s/m/h/d suffix, where slurm.conf's bf_window is in minutes):
 *   bf_window=86400       (alias window) BACKFILL_WINDOW, 1 day
 *   bf_max_job_test=500   (alias max_job_test) DEF_BF_MAX_JOB_TEST;
 *                         0 = unlimited
 *   bf_resolution=60      BACKFILL_RESOLUTION
 *   bf_continue=0         no effect (see above)
 *   bf_node_space_size=bf_max_job_test  slot records per pass (Slurm
 *                         allocates one per reservation start and end
 *                         inside a slot and ends the pass when the table
 *                         is full: "table size limit reached")
 *   easy=0                1 = one EASY reservation (bf_resolution unused)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pol_backfill_int.h"

pol_bf_t *pol_bf_create(const char *policy, const char *params,
			const char *const *xkeys, double *xvals,
			const pol_placer_t *placer, agora_err_t *err)
{
	static const char *const bkeys[BF_NKEYS] = {
		"window",        "max_job_test",
		"bf_window",     "bf_max_job_test",
		"bf_resolution", "bf_continue",
		"easy",          "bf_node_space_size",
	};
	double v[BF_NKEYS + 16] = { 86400, 500, NAN, NAN, 60, 0, 0, NAN };
	const char *keys[BF_NKEYS + 16 + 1];
	int i, nx = 0;
	pol_bf_t *s;

	while (xkeys && xvals && xkeys[nx])
		nx++;
	if (nx > 16) {
		agora_err_set(err, "policy %s: too many parameters", policy);
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; i < BF_NKEYS; i++)
		keys[i] = bkeys[i];
	for (i = 0; xkeys && xvals && i < nx; i++) {
		keys[BF_NKEYS + i] = xkeys[i];
		v[BF_NKEYS + i] = xvals[i];
	}
	keys[BF_NKEYS + nx] = NULL;
	if (pol_params_parse(policy, params, keys, v, err))
		return NULL;
	if (!isnan(v[2]))
		v[0] = v[2];
	if (!isnan(v[3]))
		v[1] = v[3];
	if (v[0] < 0 || v[1] < 0 || v[1] > 1e9) {
		agora_err_set(
			err,
			"policy %s: window must be >= 0 and max_job_test 0..1e9",
			policy);
		errno = EINVAL;
		return NULL;
	}
	if (!isnan(v[7]) && (v[7] < 2 || v[7] > 2000000)) {
		/* 2 .. 2 * MAX_BF_MAX_JOB_TEST in backfill.c */
		agora_err_set(
			err, "policy %s: bf_node_space_size must be 2..2000000",
			policy);
		errno = EINVAL;
		return NULL;
	}
	if (v[4] < 1 || v[4] > 3600) {
		/* MAX_BACKFILL_RESOLUTION in backfill.c is 3600 */
		agora_err_set(err, "policy %s: bf_resolution must be 1..3600 s",
			      policy);
		errno = EINVAL;
		return NULL;
	}
	if ((v[5] != 0 && v[5] != 1) || (v[6] != 0 && v[6] != 1)) {
		agora_err_set(err, "policy %s: bf_continue and easy are 0 or 1",
			      policy);
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	for (i = 0; i < nx; i++)
		xvals[i] = v[BF_NKEYS + i];
	s->placer = placer;
	s->window = (int64_t) v[0];
	s->max_job_test = (int) v[1];
	s->res = (int64_t) v[4];
	s->easy = v[6] != 0;
	s->space = isnan(v[7]) ? (s->max_job_test ? s->max_job_test : 0)
			       : (int) v[7];
	return s;
}

void pol_bf_set_order(pol_bf_t *bf, pol_bf_order_f order, void *arg)
{
	bf->order = order;
	bf->order_arg = arg;
}

void pol_bf_set_base(pol_bf_t *bf, const pol_freemap_t *base)
{
	bf->base = base;
}

static void *bf_create(const char *params, const pol_placer_t *placer,
		       agora_err_t *err)
{
	return pol_bf_create("backfill", params, NULL, NULL, placer, err);
}

static void started_free(pol_bf_t *s)
{
	int i;

	for (i = 0; i < s->n_started; i++)
		pol_alloc_free(&s->started[i]);
	s->n_started = 0;
}

/* Remember a backfilled job's alloc for later will-run tests; the ends
 * array points into s->started, so it is sized once per pass. */
pol_alloc_t *pol_bf_started_push(pol_bf_t *s, pol_alloc_t *a)
{
	pol_alloc_t *slot = &s->started[s->n_started++];

	*slot = *a;
	a->parts = NULL;
	a->n_parts = 0;
	return slot;
}

static pol_alloc_t *started_copy(pol_bf_t *s, const pol_alloc_t *a)
{
	pol_alloc_t *slot = &s->started[s->n_started];

	if (pol_alloc_copy(slot, a))
		return NULL;
	s->n_started++;
	return slot;
}

/* Fill s->ends with the running jobs and those started since out[first]
 * (expected end = start + limit, never before now), sorted; returns the
 * count or -1. */
int pol_bf_collect_ends(pol_bf_t *s, const pol_snapshot_t *snap, int64_t now,
			const pol_actions_t *out, int first, bool copy)
{
	int n = 0, i, need = snap->n_running + out->n - first;

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

		s->ends[n++] = (bf_end_t){
			e < now ? now : e, r->id, &r->alloc, -1, -1, 0
		};
	}
	for (i = first; i < out->n; i++) {
		const pol_action_t *a = &out->v[i];

		/* the main scheduler stores the expected end in score (-1:
		 * none) */
		const pol_alloc_t *al = &a->alloc;

		if (a->type != POL_ACT_START)
			continue;
		/* out->v moves when actions are added: keep a copy */
		if (copy && !(al = started_copy(s, &a->alloc)))
			return -1;
		s->ends[n++] = (bf_end_t){
			a->score >= 0 ? (int64_t) a->score : INT64_MAX,
			a->job_id,
			al,
			-1,
			-1,
			0
		};
	}
	if (n > 1)
		qsort(s->ends, (size_t) n, sizeof(*s->ends), cmp_end);
	for (i = 0; i < n; i++)
		bf_end_nodes(&s->ends[i]);
	return n;
}

/* Shadow time and reserved GPUs of head h; *T = INT64_MAX if never. */
static int bf_shadow(pol_bf_t *s, const pol_snapshot_t *snap, int64_t now,
		     const pol_actions_t *out, int first, const pol_job_t *h,
		     int64_t *T, pol_alloc_t *R)
{
	int n, i;

	*T = INT64_MAX;
	n = pol_bf_collect_ends(s, snap, now, out, first, false);
	if (n < 0)
		return -1;
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

/* EASY: one reservation for head h (index i in the order), then
 * backfill. */
static int bf_easy(pol_bf_t *s, const pol_snapshot_t *snap, int64_t now,
		   pol_actions_t *out, int first_start, const pol_job_t *h,
		   int i)
{
	pol_alloc_t R = { NULL, 0 };
	int64_t T = INT64_MAX;
	int tested = 0, rc = -1, resv = 0;

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

int pol_bf_decide(pol_bf_t *s, const pol_snapshot_t *snap, int64_t now,
		  pol_actions_t *out)
{
	const pol_job_t *h = NULL;
	int i, first_start = out->n, rc;

	if (pol_work_sync(&s->w, snap->cluster, snap->n_pending) ||
	    (s->base && pol_freemap_assign(s->w.fm, s->base)))
		return -1;
	if (s->order ? s->order(s->order_arg, snap, now, s->w.idx)
		     : pol_order_pending(snap, s->w.idx))
		return -1;
	/* the per-node GPU cache: once per pass, as nodes go up and down
	 * (and are added) in the same cluster */
	s->node_gpus_c = NULL;
	/* rebuilt on a new cluster, or on the same one grown or shrunk in
	 * place (an adapter's snapshot has one address every pass) */
	if (!s->ex || pol_freemap_cluster(s->ex) != snap->cluster ||
	    !pol_freemap_same_shape(s->ex, s->w.fm) ||
	    !pol_freemap_same_shape(s->sh, s->w.fm)) {
		pol_freemap_destroy(&s->ex);
		pol_freemap_destroy(&s->sh);
		s->ex = pol_freemap_create(snap->cluster);
		s->sh = pol_freemap_create(snap->cluster);
		if (!s->ex || !s->sh)
			return -1;
	}
	/* the main scheduler: priority order until the first misfit */
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
	if (s->easy)
		return bf_easy(s, snap, now, out, first_start, h, i);
	rc = pol_bf_slurm(s, snap, now, out, first_start, i);
	started_free(s);
	return rc;
}

static int bf_decide(void *state, const pol_snapshot_t *snap, int64_t now,
		     pol_actions_t *out)
{
	return pol_bf_decide(state, snap, now, out);
}

void pol_bf_destroy(pol_bf_t *s)
{
	int i;

	if (!s)
		return;
	pol_work_free(&s->w);
	pol_freemap_destroy(&s->ex);
	pol_freemap_destroy(&s->sh);
	free(s->ends);
	free(s->sb);
	free(s->se);
	free(s->rise);
	free(s->bits);
	free(s->q);
	free(s->qsuf);
	free(s->qacc);
	free(s->avail);
	free(s->jn);
	free(s->sh_avail);
	free(s->sh_dirty);
	free(s->ew);
	free(s->eb);
	free(s->ebo);
	free(s->parts);
	free(s->node_gpus);
	free(s->node_mask);
	for (i = 0; i < BF_MEMO; i++)
		pol_alloc_free(&s->memo[i].a);
	free(s->memo_avail);
	started_free(s);
	free(s->started);
	free(s);
}

static void bf_destroy(void *state)
{
	pol_bf_destroy(state);
}

const pol_policy_ops_t pol_backfill_ops = {
	.name = "backfill",
	.create = bf_create,
	.decide = bf_decide,
	.destroy = bf_destroy,
};
