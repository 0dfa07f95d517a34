/*
 * pol_award.c - the award table (pol_award.h): what the auction decided,
 * as priorities and preemptability for Slurm's own schedulers.
 *
 * Jobs live in an open-addressing hash table keyed by job id (linear
 * probing, power-of-two capacity, at most half full), apps in an array
 * with a name index of the same kind (AppDefinition=user: thousands of
 * apps, looked up once per job under slurmctld's job write lock).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "agora_mem.h"
#include "pol_award.h"

struct pol_award {
	pol_award_job_t *slot; /* job_id 0 = empty */
	size_t cap, n;
	pol_award_app_t *apps;
	int n_apps;
	size_t cap_apps;
	int n_won;
	int n_backed_off, n_capped, gpu_cap; /* of pol_award_build() */
	int64_t start_s;                     /* pol_award_set_start_window() */
	int *app_slot; /* name index: app index + 1, 0 = empty */
	size_t cap_app_slot;
};

static size_t hash_id(int64_t id)
{
	uint64_t x = (uint64_t) id;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return (size_t) x;
}

pol_award_t *pol_award_create(void)
{
	pol_award_t *a = calloc(1, sizeof(*a));

	if (!a)
		errno = ENOMEM;
	else
		a->gpu_cap = -1;
	return a;
}

void pol_award_destroy(pol_award_t **ap)
{
	pol_award_t *a;
	int i;

	if (!ap || !(a = *ap))
		return;
	for (i = 0; i < a->n_apps; i++)
		free(a->apps[i].name);
	free(a->apps);
	free(a->app_slot);
	free(a->slot);
	free(a);
	*ap = NULL;
}

static size_t hash_name(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char) *s) * 1099511628211ULL;
	return (size_t) (h ^ (h >> 29));
}

/* The index of app `name`, or -1. */
static int app_lookup(const pol_award_t *a, const char *name)
{
	size_t h, m;

	if (!a || !name || !a->cap_app_slot)
		return -1;
	m = a->cap_app_slot - 1;
	for (h = hash_name(name) & m; a->app_slot[h]; h = (h + 1) & m)
		if (!strcmp(a->apps[a->app_slot[h] - 1].name, name))
			return a->app_slot[h] - 1;
	return -1;
}

/* Index app i (its name is set); grows the index at half full. */
static int app_index_add(pol_award_t *a, int i)
{
	size_t h, m;
	int k;

	if ((size_t) (a->n_apps + 1) * 2 > a->cap_app_slot) {
		size_t c = a->cap_app_slot ? a->cap_app_slot * 2 : 64;
		int *ns = calloc(c, sizeof(*ns));

		if (!ns) {
			errno = ENOMEM;
			return -1;
		}
		free(a->app_slot);
		a->app_slot = ns;
		a->cap_app_slot = c;
		for (k = 0; k < a->n_apps; k++)
			if (k != i && app_index_add(a, k))
				return -1; /* cannot happen: room made */
	}
	m = a->cap_app_slot - 1;
	for (h = hash_name(a->apps[i].name) & m; a->app_slot[h];
	     h = (h + 1) & m)
		;
	a->app_slot[h] = i + 1;
	return 0;
}

int pol_award_app(pol_award_t *a, const char *name, double rho, double credit,
		  double quota)
{
	pol_award_app_t *ap;
	int i;

	if (!a || !name) {
		errno = EINVAL;
		return -1;
	}
	i = app_lookup(a, name);
	if (i < 0)
		i = a->n_apps;
	if (i == a->n_apps) {
		if (agora_grow((void **) &a->apps, &a->cap_apps,
			       (size_t) a->n_apps + 1, sizeof(*a->apps)))
			return -1;
		ap = &a->apps[a->n_apps];
		memset(ap, 0, sizeof(*ap));
		if (!(ap->name = strdup(name))) {
			errno = ENOMEM;
			return -1;
		}
		if (app_index_add(a, i)) {
			free(ap->name);
			ap->name = NULL;
			return -1;
		}
		a->n_apps++;
	}
	ap = &a->apps[i];
	ap->rho = isfinite(rho) ? rho : 1.0;
	ap->credit = isfinite(credit) ? credit : 0.0;
	ap->quota = isfinite(quota) ? quota : 0.0;
	return i;
}

static int grow(pol_award_t *a)
{
	size_t c = a->cap ? a->cap * 2 : 64, i;
	pol_award_job_t *ns = calloc(c, sizeof(*ns));

	if (!ns) {
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < a->cap; i++) {
		size_t h;

		if (!a->slot[i].job_id)
			continue;
		for (h = hash_id(a->slot[i].job_id) & (c - 1); ns[h].job_id;
		     h = (h + 1) & (c - 1))
			;
		ns[h] = a->slot[i];
	}
	free(a->slot);
	a->slot = ns;
	a->cap = c;
	return 0;
}

static pol_award_job_t *lookup(const pol_award_t *a, int64_t id)
{
	size_t h;

	if (!a || !a->cap || id <= 0)
		return NULL;
	for (h = hash_id(id) & (a->cap - 1); a->slot[h].job_id;
	     h = (h + 1) & (a->cap - 1))
		if (a->slot[h].job_id == id)
			return &a->slot[h];
	return NULL;
}

int pol_award_left_out(pol_award_t *a, int64_t job_id, const char *why)
{
	pol_award_job_t *j;

	if (!a || !why) {
		errno = EINVAL;
		return -1;
	}
	if (!(j = lookup(a, job_id))) {
		errno = ENOENT;
		return -1;
	}
	j->left_out = why;
	return 0;
}

int pol_award_job(pol_award_t *a, int64_t job_id, int app, unsigned flags,
		  int gpus, int64_t lease_end)
{
	pol_award_job_t *j;
	size_t h;

	if (!a || job_id <= 0 || app < 0 || app >= a->n_apps) {
		errno = EINVAL;
		return -1;
	}
	if ((j = lookup(a, job_id))) {
		if (j->flags & POL_AWARD_WON) {
			a->n_won--;
			a->apps[j->app].won_jobs--;
			a->apps[j->app].won_gpus -= j->gpus;
		}
	} else {
		if ((a->n + 1) * 2 > a->cap && grow(a))
			return -1;
		for (h = hash_id(job_id) & (a->cap - 1); a->slot[h].job_id;
		     h = (h + 1) & (a->cap - 1))
			;
		j = &a->slot[h];
		a->n++;
	}
	j->job_id = job_id;
	j->app = app;
	j->flags = flags;
	j->left_out = NULL;
	j->gpus = gpus > 0 ? gpus : 0;
	j->lease_end = lease_end;
	if (flags & POL_AWARD_WON) {
		a->n_won++;
		a->apps[app].won_jobs++;
		a->apps[app].won_gpus += j->gpus;
	}
	return 0;
}

int pol_award_set_start_window(pol_award_t *a, int64_t start_s)
{
	if (!a || start_s < 0) {
		errno = EINVAL;
		return -1;
	}
	a->start_s = start_s;
	return 0;
}

/* How long pj's award may wait for its start. */
static int64_t window(const pol_award_t *a, const pol_award_job_t *pj,
		      int64_t keep_s)
{
	if ((pj->flags & POL_AWARD_FREE) && a->start_s > 0 &&
	    a->start_s < keep_s)
		return a->start_s;
	return keep_s;
}

/* The wait after the n-th expired award: keep_s, 2 keep_s, 4 keep_s, ...
 * capped at POL_AWARD_BACKOFF_MAX_X keep_s. */
static int64_t backoff_s(int64_t keep_s, int strikes)
{
	int64_t x = 1;

	if (keep_s < 1)
		keep_s = 1;
	while (--strikes > 0 && x < POL_AWARD_BACKOFF_MAX_X)
		x *= 2;
	if (x > POL_AWARD_BACKOFF_MAX_X)
		x = POL_AWARD_BACKOFF_MAX_X;
	return keep_s > INT64_MAX / x ? INT64_MAX / 2 : keep_s * x;
}

/* The GPU cap of pol_award_build() (pol_award.h).  ids: the pending
 * winners in submit order (reordered here). */
static void cap_winners(pol_award_t *a, const pol_snapshot_t *snap,
			int64_t *ids, int n)
{
	int64_t budget = 0;
	size_t s;
	int i;

	a->gpu_cap = -1;
	if (!snap->cluster)
		return;
	for (i = 0; i < snap->cluster->n_nodes; i++)
		if (snap->cluster->nodes[i].up)
			budget += pol_popcount(snap->cluster->nodes[i].free);
	for (s = 0; s < a->cap; s++) {
		const pol_award_job_t *j = &a->slot[s];

		if (j->job_id && (j->flags & POL_AWARD_RUNNING) &&
		    (j->flags & POL_AWARD_LOST) &&
		    !(j->flags & POL_AWARD_NOREQUEUE))
			budget += j->gpus;
	}
	a->gpu_cap = budget > INT32_MAX ? INT32_MAX : (int) budget;
	/* older awards first; insertion sort keeps submit order among
	 * equal since (a pass has few winners) */
	for (i = 1; i < n; i++) {
		int64_t v = ids[i], vs = lookup(a, ids[i])->since;
		int k = i;

		while (k > 0 && lookup(a, ids[k - 1])->since > vs) {
			ids[k] = ids[k - 1];
			k--;
		}
		ids[k] = v;
	}
	for (i = 0; i < n; i++) {
		pol_award_job_t *j = lookup(a, ids[i]);

		if (j->gpus <= budget) {
			budget -= j->gpus;
			continue;
		}
		/* beyond the free GPUs: not a winner at this pass */
		a->apps[j->app].won_jobs--;
		a->apps[j->app].won_gpus -= j->gpus;
		a->n_won--;
		j->flags &= ~(POL_AWARD_WON | POL_AWARD_FREE);
		j->since = 0;
		a->n_capped++;
	}
}

int pol_award_build(pol_award_t *a, const pol_snapshot_t *snap,
		    const pol_actions_t *acts, const pol_lease_table_t *leases,
		    const char *const *app_names, const double *rho,
		    const double *credit, const double *quota, int n_apps,
		    const pol_award_t *prev, int64_t now, int64_t keep_s)
{
	int *idx = NULL, i, k, n_wins = 0;
	int64_t *won_ids;

	if (!a || !snap || n_apps < 0 || (n_apps && !app_names)) {
		errno = EINVAL;
		return -1;
	}
	if (n_apps && !(idx = calloc((size_t) n_apps, sizeof(int)))) {
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < n_apps; i++) {
		idx[i] = pol_award_app(
			a, app_names[i] ? app_names[i] : "", rho ? rho[i] : 1.0,
			credit ? credit[i] : 0.0, quota ? quota[i] : 0.0);
		if (idx[i] < 0) {
			free(idx);
			return -1;
		}
	}
	won_ids = NULL;
	if (snap->n_pending &&
	    !(won_ids = calloc((size_t) snap->n_pending, sizeof(*won_ids)))) {
		free(idx);
		errno = ENOMEM;
		return -1;
	}
	a->n_backed_off = a->n_capped = 0;
	for (i = 0; i < snap->n_pending; i++) {
		const pol_job_t *j = &snap->pending[i];
		const pol_award_job_t *pj = lookup(prev, j->id);
		pol_award_job_t *nj;
		unsigned flags = 0;
		int64_t since = 0, until = 0;
		int strikes = 0;

		if (j->tenant < 0 || j->tenant >= n_apps || j->id <= 0)
			continue;
		for (k = 0; acts && k < acts->n; k++)
			if (acts->v[k].job_id == j->id &&
			    (acts->v[k].type == POL_ACT_START ||
			     acts->v[k].type == POL_ACT_HOLD))
				flags |= POL_AWARD_WON |
					 (acts->v[k].type == POL_ACT_START
						  ? POL_AWARD_FREE
						  : 0);
		if (pj && !(pj->flags & POL_AWARD_RUNNING)) {
			strikes = pj->strikes;
			until = pj->backoff_until;
		}
		if (pj && (pj->flags & POL_AWARD_WON) &&
		    !(pj->flags & POL_AWARD_RUNNING) &&
		    now - pj->since < window(a, pj, keep_s)) {
			/* still waiting to start */
			flags |= POL_AWARD_WON | (pj->flags & POL_AWARD_FREE);
			since = pj->since;
		} else if (pj && (pj->flags & POL_AWARD_WON) &&
			   !(pj->flags & POL_AWARD_RUNNING)) {
			/* the award expired and the job never started */
			strikes++;
			until = now + backoff_s(keep_s, strikes);
		} else if (flags & POL_AWARD_WON) {
			since = now;
		}
		if (until > now) {
			flags &= ~(POL_AWARD_WON | POL_AWARD_FREE);
			since = 0;
			a->n_backed_off++;
		}
		if (pol_award_job(a, j->id, idx[j->tenant], flags,
				  j->total_gpus, 0)) {
			free(idx);
			free(won_ids);
			return -1;
		}
		nj = lookup(a, j->id);
		nj->since = since;
		nj->strikes = strikes;
		nj->backoff_until = until > now ? until : 0;
		if (flags & POL_AWARD_WON)
			won_ids[n_wins++] = j->id;
	}
	for (i = 0; i < snap->n_running; i++) {
		const pol_job_t *j = &snap->running[i];
		const pol_lease_t *l = leases ? pol_lease_get(leases, j->id)
					      : NULL;
		const pol_award_job_t *pj = lookup(prev, j->id);
		unsigned flags = POL_AWARD_RUNNING;
		int64_t since = 0;

		if (j->tenant < 0 || j->tenant >= n_apps || j->id <= 0)
			continue;
		if (l && l->state == POL_LEASE_GRACE)
			flags |= POL_AWARD_LOST;
		for (k = 0; acts && k < acts->n; k++)
			if (acts->v[k].job_id == j->id &&
			    acts->v[k].type == POL_ACT_PREEMPT)
				flags |= POL_AWARD_LOST;
		/* carried while Slurm has not preempted it, unless its lease
		 * was renewed since it lost: a renewed lease ends it */
		if (pj && (pj->flags & POL_AWARD_LOST) &&
		    (pj->flags & POL_AWARD_RUNNING) &&
		    now - pj->since < keep_s &&
		    !(l && l->state == POL_LEASE_ACTIVE &&
		      l->start > pj->since)) {
			flags |= POL_AWARD_LOST; /* not preempted yet */
			since = pj->since;
		} else if (flags & POL_AWARD_LOST) {
			since = now;
		}
		if (!j->requeueable)
			flags |= POL_AWARD_NOREQUEUE;
		if (pol_award_job(a, j->id, idx[j->tenant], flags,
				  j->total_gpus, l ? l->end : 0)) {
			free(idx);
			free(won_ids);
			return -1;
		}
		lookup(a, j->id)->since = since;
	}
	free(idx);
	cap_winners(a, snap, won_ids, n_wins);
	free(won_ids);
	return 0;
}

const pol_award_job_t *pol_award_find(const pol_award_t *a, int64_t job_id)
{
	return lookup(a, job_id);
}

const pol_award_app_t *pol_award_app_at(const pol_award_t *a, int i)
{
	return (a && i >= 0 && i < a->n_apps) ? &a->apps[i] : NULL;
}

const pol_award_app_t *pol_award_app_find(const pol_award_t *a,
					  const char *name)
{
	int i = app_lookup(a, name);

	return i >= 0 ? &a->apps[i] : NULL;
}

int pol_award_n_apps(const pol_award_t *a)
{
	return a ? a->n_apps : 0;
}

int pol_award_n_jobs(const pol_award_t *a)
{
	return a ? (int) a->n : 0;
}

int pol_award_n_won(const pol_award_t *a)
{
	return a ? a->n_won : 0;
}

int pol_award_n_backed_off(const pol_award_t *a)
{
	return a ? a->n_backed_off : 0;
}

int pol_award_n_capped(const pol_award_t *a)
{
	return a ? a->n_capped : 0;
}

int pol_award_gpu_cap(const pol_award_t *a)
{
	return a ? a->gpu_cap : -1;
}

bool pol_award_preemptable(const pol_award_t *a, int64_t victim_id,
			   int64_t preemptor_id)
{
	const pol_award_job_t *v = lookup(a, victim_id);
	const pol_award_job_t *p = lookup(a, preemptor_id);

	if (!v || !p || !(p->flags & POL_AWARD_WON) ||
	    (p->flags & POL_AWARD_RUNNING))
		return false;
	if (!(v->flags & POL_AWARD_RUNNING) || !(v->flags & POL_AWARD_LOST) ||
	    (v->flags & POL_AWARD_NOREQUEUE))
		return false;
	if (v->app == p->app)
		return false;
	return a->apps[p->app].rho > a->apps[v->app].rho;
}

uint32_t pol_award_victim_rank(const pol_award_t *a, int64_t job_id)
{
	const pol_award_job_t *j = lookup(a, job_id);
	double rho;
	uint32_t r, g;

	if (!j)
		return UINT32_MAX;
	rho = a->apps[j->app].rho;
	/* rho in [0, 64) with 1/256 resolution: 14 bits; GPUs: 8 bits */
	rho = rho < 0 ? 0 : (rho > 63.99 ? 63.99 : rho);
	r = (uint32_t) (rho * 256.0);
	g = j->gpus > 255 ? 255 : (uint32_t) j->gpus;
	return (r << 8) | g;
}
