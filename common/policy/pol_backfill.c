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

#include "pol_backfill.h"
#include "pol_policy_int.h"

/* Slurm's will-run test groups job ends in windows of 30 s, doubling
 * (cons_common/job_test.c: time_window = 30, bf_window_scale unset). */
#define BF_WILL_RUN_WINDOW 30
#define BF_NKEYS           8
/* will-run results kept per pass (direct-mapped), until a job starts */
#define BF_MEMO 256

typedef struct bf_memo {
	unsigned gen; /* valid when == pol_bf.gen */
	int total_gpus, nodes, gpn;
	pol_pool_t pool;
	int64_t T;
	pol_alloc_t a;
} bf_memo_t;

typedef struct bf_end {
	int64_t end, id;
	const pol_alloc_t *alloc;
	int node; /* the node of a one-node alloc, else -1 */
} bf_end_t;

struct pol_bf {
	const pol_placer_t *placer;
	pol_work_t w;
	pol_freemap_t *ex, *sh;
	bf_end_t *ends;
	int ends_cap;
	int64_t window;
	int max_job_test;
	int64_t res;
	bool easy;
	pol_bf_order_f order;
	void *order_arg;
	/* Slurm mode: the slot map, slot i = [sb[i], se[i]) with the node
	 * bit set bits + i * nw (1 = not reserved) */
	int64_t *sb, *se;
	uint64_t *bits, *avail, *jn;
	int n_slots, slot_cap, nw;
	int space, recs; /* bf_node_space_size; records Slurm would use */
	bf_memo_t memo[BF_MEMO];
	uint64_t *memo_avail; /* BF_MEMO x nw words */
	unsigned gen;
	int *node_gpus; /* GPUs per node of node_gpus_c */
	pol_gpumask_t *node_mask;
	const pol_cluster_t *node_gpus_c;
	pol_alloc_part_t *parts; /* scratch for partial releases */
	int parts_cap;
	pol_alloc_t *started; /* allocs of jobs backfilled this pass */
	int n_started, started_cap;
};

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
	if (v[0] < 0 || v[1] < 0) {
		agora_err_set(err,
			      "policy %s: window and max_job_test must be >= 0",
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

static void *bf_create(const char *params, const pol_placer_t *placer,
		       agora_err_t *err)
{
	return pol_bf_create("backfill", params, NULL, NULL, placer, err);
}

static int cmp_end(const void *x, const void *y)
{
	const bf_end_t *a = x, *b = y;

	if (a->end != b->end)
		return a->end < b->end ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

static int place_take(pol_bf_t *s, pol_freemap_t *fm, const pol_job_t *j,
		      pol_alloc_t *a)
{
	if (s->placer->place(s->placer->arg, fm, j, a))
		return -1;
	return 0;
}

/* Fill s->ends with the running jobs and those started since out[first]
 * (expected end = start + limit, never before now), sorted; returns the
 * count or -1. */
static pol_alloc_t *started_copy(pol_bf_t *s, const pol_alloc_t *a);

static int bf_collect_ends(pol_bf_t *s, const pol_snapshot_t *snap, int64_t now,
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

		s->ends[n++] = (bf_end_t){ e < now ? now : e, r->id, &r->alloc,
					   -1 };
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
		s->ends[n++] = (bf_end_t){ a->score >= 0 ? (int64_t) a->score
							 : INT64_MAX,
					   a->job_id, al, -1 };
	}
	if (n > 1)
		qsort(s->ends, (size_t) n, sizeof(*s->ends), cmp_end);
	for (i = 0; i < n; i++)
		if (s->ends[i].alloc->n_parts == 1)
			s->ends[i].node = s->ends[i].alloc->parts[0].node;
	return n;
}

/* Shadow time and reserved GPUs of head h; *T = INT64_MAX if never. */
static int bf_shadow(pol_bf_t *s, const pol_snapshot_t *snap, int64_t now,
		     const pol_actions_t *out, int first, const pol_job_t *h,
		     int64_t *T, pol_alloc_t *R)
{
	int n, i;

	*T = INT64_MAX;
	n = bf_collect_ends(s, snap, now, out, first, false);
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

/* ---- Slurm mode: the slot map ---------------------------------------- */

static int64_t rdown(int64_t t, int64_t res)
{
	return t >= 0 ? t / res * res : -((-t + res - 1) / res) * res;
}

static uint64_t *slot_bits(pol_bf_t *s, int i)
{
	return s->bits + (size_t) i * (size_t) s->nw;
}

static int slots_grow(pol_bf_t *s, int n)
{
	int cap;
	int64_t *nb, *ne;
	uint64_t *bits;

	if (n <= s->slot_cap)
		return 0;
	cap = n * 2 + 8;
	nb = realloc(s->sb, (size_t) cap * sizeof(*nb));
	if (nb)
		s->sb = nb;
	ne = realloc(s->se, (size_t) cap * sizeof(*ne));
	if (ne)
		s->se = ne;
	bits = realloc(s->bits, (size_t) cap * (size_t) s->nw * sizeof(*bits));
	if (bits)
		s->bits = bits;
	if (!nb || !ne || !bits) {
		errno = ENOMEM;
		return -1;
	}
	s->slot_cap = cap;
	return 0;
}

static int slots_init(pol_bf_t *s, const pol_cluster_t *c, int64_t now)
{
	int nw = (c->n_nodes + 63) / 64, k;

	if (nw != s->nw) {
		uint64_t *a = realloc(s->avail, (size_t) nw * sizeof(*a));
		uint64_t *jn = a ? realloc(s->jn, (size_t) nw * sizeof(*jn))
				 : NULL;

		if (a)
			s->avail = a;
		if (jn)
			s->jn = jn;
		if (!a || !jn) {
			errno = ENOMEM;
			return -1;
		}
		free(s->bits);
		s->bits = NULL;
		s->slot_cap = 0;
		free(s->memo_avail);
		s->memo_avail = calloc((size_t) BF_MEMO * (size_t) nw,
				       sizeof(uint64_t));
		if (!s->memo_avail) {
			errno = ENOMEM;
			return -1;
		}
		s->nw = nw;
	}
	if (slots_grow(s, 1))
		return -1;
	s->gen++; /* new pass: forget will-run results */
	if (!s->gen)
		s->gen = 1;
	s->n_slots = 1;
	s->recs = 1;
	s->sb[0] = rdown(now, s->res);
	s->se[0] = rdown(now + s->window, s->res);
	if (s->se[0] <= s->sb[0])
		s->se[0] = s->sb[0] + s->res;
	for (k = 0; k < nw; k++)
		s->bits[k] = ~(uint64_t) 0;
	return 0;
}

/* Split slot i at t (sb[i] < t < se[i]): slot i becomes [sb, t), a copy
 * [t, se) follows it. */
static int slot_split(pol_bf_t *s, int i, int64_t t)
{
	if (slots_grow(s, s->n_slots + 1))
		return -1;
	memmove(&s->sb[i + 2], &s->sb[i + 1],
		(size_t) (s->n_slots - i - 1) * sizeof(*s->sb));
	memmove(&s->se[i + 2], &s->se[i + 1],
		(size_t) (s->n_slots - i - 1) * sizeof(*s->se));
	memmove(slot_bits(s, i + 1), slot_bits(s, i),
		(size_t) (s->n_slots - i) * (size_t) s->nw * sizeof(uint64_t));
	s->sb[i + 1] = t;
	s->se[i + 1] = s->se[i];
	s->se[i] = t;
	s->n_slots++;
	return 0;
}

/* The first slot that ends after t (n_slots if none). */
static int slot_after(const pol_bf_t *s, int64_t t)
{
	int lo = 0, hi = s->n_slots;

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (s->se[mid] > t)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/*
 * Nodes usable over [start, end] (inclusive end, as backfill.c compares
 * begin_time <= end_time) into s->avail, and *later = the end of the first
 * slot after start whose successor frees a node (0: none).
 */
static void slots_avail(pol_bf_t *s, int64_t start, int64_t end, int64_t *later)
{
	int i, k, nw = s->nw;

	*later = 0;
	for (k = 0; k < nw; k++)
		s->avail[k] = ~(uint64_t) 0;
	for (i = slot_after(s, start); i < s->n_slots; i++) {
		if (i + 1 < s->n_slots && !*later) {
			const uint64_t *cur = slot_bits(s, i);
			const uint64_t *nxt = slot_bits(s, i + 1);

			for (k = 0; k < nw; k++)
				if (nxt[k] & ~(cur[k] & s->avail[k])) {
					*later = s->se[i];
					break;
				}
		}
		if (s->sb[i] > end)
			break;
		for (k = 0; k < nw; k++)
			s->avail[k] &= slot_bits(s, i)[k];
	}
}

/* Does a reservation of nodes jn over [start, end) meet one already made? */
static bool slots_overlap(pol_bf_t *s, int64_t start, int64_t end)
{
	int i, k;

	for (i = slot_after(s, start); i < s->n_slots; i++) {
		if (s->sb[i] >= end)
			break;
		for (k = 0; k < s->nw; k++)
			if (s->jn[k] & ~slot_bits(s, i)[k])
				return true;
	}
	return false;
}

/* Reserve nodes jn over [start, end) (backfill.c _add_reservation()). */
static int slots_add(pol_bf_t *s, int64_t start, int64_t end)
{
	int i, k;

	if (start < s->sb[0])
		start = s->sb[0];
	if (end < start + s->res)
		end = start + s->res;
	/* the records _add_reservation() takes from the table: one for the
	 * start unless a slot ends there, one for the end inside a slot */
	for (i = 0; i < s->n_slots && s->se[i] < start; i++)
		;
	s->recs += i < s->n_slots && s->se[i] > start;
	for (; i < s->n_slots && s->se[i] < end; i++)
		;
	s->recs += i < s->n_slots && s->se[i] > end;
	for (i = 0; i < s->n_slots; i++) {
		if (s->se[i] <= start)
			continue;
		if (s->sb[i] >= end)
			break;
		if (s->sb[i] < start) {
			if (slot_split(s, i, start))
				return -1;
			continue; /* the [start, ...) half is next */
		}
		if (s->se[i] > end && slot_split(s, i, end))
			return -1;
		for (k = 0; k < s->nw; k++)
			slot_bits(s, i)[k] &= ~s->jn[k];
	}
	return 0;
}

static void nodes_of(pol_bf_t *s, const pol_alloc_t *a)
{
	int p;

	memset(s->jn, 0, (size_t) s->nw * sizeof(*s->jn));
	for (p = 0; p < a->n_parts; p++)
		s->jn[a->parts[p].node / 64] |= (uint64_t) 1
						<< (a->parts[p].node % 64);
}

static bool node_usable(const pol_bf_t *s, int node)
{
	return (s->avail[node / 64] >> (node % 64)) & 1;
}

/* Release on s->sh the GPUs of e that lie on usable nodes; 1 if any. */
static int give_usable(pol_bf_t *s, const bf_end_t *e)
{
	const pol_alloc_t *a = e->alloc;
	pol_alloc_t part = { s->parts, 0 };
	int p;

	if (e->node >= 0) {
		if (!node_usable(s, e->node))
			return 0;
		return pol_freemap_give(s->sh, a) ? -1 : 1;
	}

	if (a->n_parts > s->parts_cap) {
		pol_alloc_part_t *np = realloc(s->parts, (size_t) a->n_parts *
								 sizeof(*np));

		if (!np) {
			errno = ENOMEM;
			return -1;
		}
		s->parts = np;
		s->parts_cap = a->n_parts;
		part.parts = np;
	}
	for (p = 0; p < a->n_parts; p++)
		if (node_usable(s, a->parts[p].node))
			part.parts[part.n_parts++] = a->parts[p];
	if (!part.n_parts)
		return 0;
	if (pol_freemap_give(s->sh, &part))
		return -1;
	return 1;
}

/*
 * The will-run test on the usable nodes (s->avail): *T = now and *a if j
 * fits now, else the end of the batch of running jobs after which it fits
 * (cons_common/job_test.c _will_run_test()), else *T = INT64_MAX.
 */
static int bf_will_run(pol_bf_t *s, int n_ends, const pol_job_t *j, int64_t now,
		       int64_t *T, pol_alloc_t *a)
{
	const pol_cluster_t *c = pol_freemap_cluster(s->w.fm);
	int node, i = 0, cap;
	int64_t bar = 0, tw = BF_WILL_RUN_WINDOW;

	*T = INT64_MAX;
	if (s->node_gpus_c != c) {
		int *ng = realloc(s->node_gpus,
				  (size_t) c->n_nodes * sizeof(*ng));

		if (!ng) {
			errno = ENOMEM;
			return -1;
		}
		pol_gpumask_t *nm = realloc(s->node_mask,
					    (size_t) c->n_nodes * sizeof(*nm));

		s->node_gpus = ng;
		if (!nm) {
			errno = ENOMEM;
			return -1;
		}
		s->node_mask = nm;
		s->node_gpus_c = c;
		for (node = 0; node < c->n_nodes; node++) {
			nm[node] = pol_node_all_gpus(c, node);
			ng[node] = c->nodes[node].up ? pol_popcount(nm[node])
						     : 0;
		}
	}
	/* quick no: the usable nodes cannot hold the job even when empty */
	for (node = 0, cap = 0; node < c->n_nodes && cap < j->total_gpus;
	     node++)
		if (node_usable(s, node) && c->nodes[node].pool == j->pool)
			cap += s->node_gpus[node];
	if (cap < j->total_gpus)
		return 0;
	if (pol_freemap_assign(s->sh, s->w.fm))
		return -1;
	for (node = 0; node < c->n_nodes; node++)
		if (!node_usable(s, node))
			pol_freemap_take_mask(s->sh, node, s->node_mask[node]);
	if (!place_take(s, s->sh, j, a)) {
		*T = now;
		return 0;
	}
	if (errno != ENOSPC)
		return -1;
	while (i < n_ends) {
		const bf_end_t *last = NULL;

		for (; i < n_ends && s->ends[i].end != INT64_MAX; i++) {
			int r = give_usable(s, &s->ends[i]);

			if (r < 0)
				return -1;
			if (!r)
				continue; /* no usable node: skipped */
			if (!bar)
				bar = s->ends[i].end + BF_WILL_RUN_WINDOW -
				      s->ends[i].end % BF_WILL_RUN_WINDOW;
			last = &s->ends[i];
			if (i + 1 >= n_ends || s->ends[i + 1].end > bar + tw) {
				i++;
				break;
			}
		}
		if (!last)
			break;
		while (i < n_ends && s->ends[i].end != INT64_MAX &&
		       s->ends[i].end > bar + tw)
			tw *= 2;
		if (!place_take(s, s->sh, j, a)) {
			*T = last->end <= now ? now + 1 : last->end;
			return 0;
		}
		if (errno != ENOSPC)
			return -1;
		if (i >= n_ends || s->ends[i].end == INT64_MAX)
			break;
	}
	return 0;
}

static bf_memo_t *memo_find(pol_bf_t *s, const pol_job_t *j, bool *hit)
{
	uint64_t h = (uint64_t) j->total_gpus * 0x9e3779b97f4a7c15ULL ^
		     (uint64_t) j->nodes * 0xc2b2ae3d27d4eb4fULL ^
		     (uint64_t) j->gpus_per_node * 0x165667b19e3779f9ULL ^
		     (uint64_t) j->pool;
	bf_memo_t *m;
	uint64_t *ma;
	int k;

	for (k = 0; k < s->nw; k++)
		h = (h ^ s->avail[k]) * 0xff51afd7ed558ccdULL;
	h ^= h >> 29;
	m = &s->memo[h % BF_MEMO];
	ma = s->memo_avail + (size_t) (h % BF_MEMO) * (size_t) s->nw;
	*hit = m->gen == s->gen && m->total_gpus == j->total_gpus &&
	       m->nodes == j->nodes && m->gpn == j->gpus_per_node &&
	       m->pool == j->pool &&
	       !memcmp(ma, s->avail, (size_t) s->nw * sizeof(*ma));
	if (!*hit) {
		memcpy(ma, s->avail, (size_t) s->nw * sizeof(*ma));
		pol_alloc_free(&m->a);
		m->gen = 0;
		m->total_gpus = j->total_gpus;
		m->nodes = j->nodes;
		m->gpn = j->gpus_per_node;
		m->pool = j->pool;
	}
	return m;
}

/* bf_will_run() through the memo: the result depends only on the job's
 * shape, the usable nodes, the free map and the running jobs, and the
 * last two change only when a job starts (s->gen). */
static int bf_will_run_memo(pol_bf_t *s, int n_ends, const pol_job_t *j,
			    int64_t now, int64_t *T, pol_alloc_t *a)
{
	bool hit;
	bf_memo_t *m = memo_find(s, j, &hit);

	if (hit) {
		*T = m->T;
		return m->T == INT64_MAX ? 0 : pol_alloc_copy(a, &m->a);
	}
	if (bf_will_run(s, n_ends, j, now, T, a))
		return -1;
	if (*T != INT64_MAX && pol_alloc_copy(&m->a, a))
		return -1;
	m->T = *T;
	m->gen = s->gen;
	return 0;
}

/* Keep s->ends sorted after a backfilled start (alloc owned by s). */
static int ends_insert(pol_bf_t *s, int *n, int64_t end, int64_t id,
		       const pol_alloc_t *a)
{
	bf_end_t e;
	int k;

	if (*n + 1 > s->ends_cap) {
		int cap = *n * 2 + 16;
		bf_end_t *ne = realloc(s->ends, (size_t) cap * sizeof(*ne));

		if (!ne) {
			errno = ENOMEM;
			return -1;
		}
		s->ends = ne;
		s->ends_cap = cap;
	}
	e = (bf_end_t){ end, id, a, a->n_parts == 1 ? a->parts[0].node : -1 };
	for (k = *n; k > 0 && cmp_end(&s->ends[k - 1], &e) > 0; k--)
		s->ends[k] = s->ends[k - 1];
	s->ends[k] = e;
	(*n)++;
	return 0;
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
static pol_alloc_t *started_push(pol_bf_t *s, pol_alloc_t *a)
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

/* Test one pending job j (Slurm's loop body): 0, 1 when the slot table
 * is full (the pass ends), -1 on error. */
static int bf_slurm_job(pol_bf_t *s, const pol_job_t *j, int64_t now,
			int *n_ends, pol_actions_t *out)
{
	int64_t limit = j->time_limit > 0 ? j->time_limit : INT64_MAX / 4;
	int64_t start_res = now, later, T, rs, re;
	int guard;

	for (guard = 0; guard < 2 * s->n_slots + 8; guard++) {
		pol_alloc_t a = { NULL, 0 };
		int64_t end = (start_res > now ? start_res : now) + limit;

		slots_avail(s, start_res, end, &later);
		if (bf_will_run_memo(s, *n_ends, j, now, &T, &a))
			return -1;
		if (T == INT64_MAX) {
			if (!later)
				return 0; /* never fits on these nodes */
			start_res = later;
			continue;
		}
		if (T < start_res)
			T = start_res;
		if (T <= now) {
			pol_alloc_t *kept;

			if (pol_freemap_take(s->w.fm, &a) ||
			    pol_actions_add(out, POL_ACT_START, j->id, &a, 0,
					    "backfill")) {
				pol_alloc_free(&a);
				return -1;
			}
			kept = started_push(s, &a);
			if (!++s->gen)
				s->gen = 1;
			return ends_insert(s, n_ends,
					   j->time_limit > 0 ? now + limit
							     : INT64_MAX,
					   j->id, kept);
		}
		if (later && T > later) {
			pol_alloc_free(&a);
			start_res = later;
			continue;
		}
		if (T > now + s->window) {
			pol_alloc_free(&a);
			return 0;
		}
		rs = rdown(T, s->res);
		re = rdown(T > INT64_MAX / 2 - limit ? INT64_MAX / 2
						     : T + limit,
			   s->res);
		nodes_of(s, &a);
		pol_alloc_free(&a);
		if (slots_overlap(s, rs, re)) {
			start_res = T;
			continue;
		}
		if (s->space && s->recs >= s->space)
			return 1; /* "table size limit reached": pass ends */
		if (slots_add(s, rs, re))
			return -1;
		return pol_actions_add(out, POL_ACT_HOLD, j->id, NULL,
				       (double) T, "Resources");
	}
	return 0;
}

/* Slurm's backfill pass from the head (index i in the order) on. */
static int bf_slurm(pol_bf_t *s, const pol_snapshot_t *snap, int64_t now,
		    pol_actions_t *out, int first_start, int i)
{
	int n_ends, tested = 0, rest = snap->n_pending - i;

	/* room for the main scheduler's starts and every backfilled job */
	rest += out->n - first_start;
	if (rest > s->started_cap) {
		pol_alloc_t *ns = realloc(s->started,
					  (size_t) rest * sizeof(*ns));

		if (!ns) {
			errno = ENOMEM;
			return -1;
		}
		s->started = ns;
		s->started_cap = rest;
	}
	n_ends = bf_collect_ends(s, snap, now, out, first_start, true);
	if (n_ends < 0 || slots_init(s, snap->cluster, now))
		return -1;
	for (; i < snap->n_pending; i++) {
		if (s->max_job_test && tested >= s->max_job_test)
			break;
		tested++;
		int r = bf_slurm_job(s, &snap->pending[s->w.idx[i]], now,
				     &n_ends, out);

		if (r < 0)
			return -1;
		if (r > 0)
			break;
	}
	return 0;
}

int pol_bf_decide(pol_bf_t *s, const pol_snapshot_t *snap, int64_t now,
		  pol_actions_t *out)
{
	const pol_job_t *h = NULL;
	int i, first_start = out->n, rc;

	if (pol_work_sync(&s->w, snap->cluster, snap->n_pending))
		return -1;
	if (s->order ? s->order(s->order_arg, snap, now, s->w.idx)
		     : pol_order_pending(snap, s->w.idx))
		return -1;
	if (!s->ex || pol_freemap_cluster(s->ex) != snap->cluster) {
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
	rc = bf_slurm(s, snap, now, out, first_start, i);
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
	free(s->bits);
	free(s->avail);
	free(s->jn);
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
