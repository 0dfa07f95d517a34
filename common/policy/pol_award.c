/*
 * pol_award.c - the award table (pol_award.h): what the auction decided,
 * as priorities and preemptability for Slurm's own schedulers.
 *
 * Jobs live in an open-addressing hash table keyed by job id (linear
 * probing, power-of-two capacity, at most half full), apps in an array
 * searched by name (a pass has tens of apps, not thousands).
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
	free(a->slot);
	free(a);
	*ap = NULL;
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
	for (i = 0; i < a->n_apps; i++)
		if (!strcmp(a->apps[i].name, name))
			break;
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
	j->gpus = gpus > 0 ? gpus : 0;
	j->lease_end = lease_end;
	if (flags & POL_AWARD_WON) {
		a->n_won++;
		a->apps[app].won_jobs++;
		a->apps[app].won_gpus += j->gpus;
	}
	return 0;
}

int pol_award_build(pol_award_t *a, const pol_snapshot_t *snap,
		    const pol_actions_t *acts, const pol_lease_table_t *leases,
		    const char *const *app_names, const double *rho,
		    const double *credit, const double *quota, int n_apps,
		    const pol_award_t *prev, int64_t now, int64_t keep_s)
{
	int *idx = NULL, i, k;

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
	for (i = 0; i < snap->n_pending; i++) {
		const pol_job_t *j = &snap->pending[i];
		const pol_award_job_t *pj = lookup(prev, j->id);
		unsigned flags = 0;
		int64_t since = 0;

		if (j->tenant < 0 || j->tenant >= n_apps || j->id <= 0)
			continue;
		for (k = 0; acts && k < acts->n; k++)
			if (acts->v[k].job_id == j->id &&
			    (acts->v[k].type == POL_ACT_START ||
			     acts->v[k].type == POL_ACT_HOLD))
				flags |= POL_AWARD_WON;
		if (pj && (pj->flags & POL_AWARD_WON) &&
		    !(pj->flags & POL_AWARD_RUNNING) &&
		    now - pj->since < keep_s) {
			flags |= POL_AWARD_WON; /* still waiting to start */
			since = pj->since;
		} else if (flags & POL_AWARD_WON) {
			since = now;
		}
		if (pol_award_job(a, j->id, idx[j->tenant], flags,
				  j->total_gpus, 0)) {
			free(idx);
			return -1;
		}
		lookup(a, j->id)->since = since;
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
		if (pj && (pj->flags & POL_AWARD_LOST) &&
		    (pj->flags & POL_AWARD_RUNNING) &&
		    now - pj->since < keep_s) {
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
			return -1;
		}
		lookup(a, j->id)->since = since;
	}
	free(idx);
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
	int i;

	for (i = 0; a && name && i < a->n_apps; i++)
		if (!strcmp(a->apps[i].name, name))
			return &a->apps[i];
	return NULL;
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
