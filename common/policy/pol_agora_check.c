/*
 * pol_agora_check.c - the jobs a pass of "agora" or "agora-order" can use
 * (pol_agora.c): every job of the snapshot is checked against the cluster
 * (tenant, pool, times, GPU counts, its allocation); a pass runs on the
 * usable ones, and pol_agora_policy_stats() counts the others.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pol_agora_int.h"

/* Jobs a pass can use ------------------------------------------------ */

/* Times beyond this (2^53 s) are absurd and could overflow sums. */
#define AG_TIME_MAX ((int64_t) 1 << 53)

/* What a job check needs to know of the cluster, computed once a pass. */
typedef struct ag_limits {
	const pol_cluster_t *c;
	int n_tenants;
	int64_t gpus; /* all GPUs of the cluster */
	int max_node; /* GPUs of the largest node */
} ag_limits_t;

/* -1 if a node of c has an unknown type (a broken cluster), else 0. */
static int limits_of(const pol_cluster_t *c, int n_tenants, ag_limits_t *lim)
{
	int i;

	lim->c = c;
	lim->n_tenants = n_tenants;
	lim->gpus = 0;
	lim->max_node = 0;
	if (c->n_nodes < 0 || (c->n_nodes > 0 && (!c->nodes || !c->types)))
		return -1;
	for (i = 0; i < c->n_nodes; i++) {
		int t = c->nodes[i].type, g;

		if (t < 0 || t >= c->n_types)
			return -1;
		g = c->types[t].n_gpus;
		if (g < 0 || g > POL_MAX_GPUS_PER_NODE)
			return -1;
		lim->gpus += g;
		if (g > lim->max_node)
			lim->max_node = g;
	}
	return 0;
}

bool pol_ag_time_ok(int64_t t)
{
	return t > -AG_TIME_MAX && t < AG_TIME_MAX;
}

static const char *job_check(const ag_limits_t *lim, const pol_job_t *j,
			     bool running)
{
	const pol_cluster_t *c = lim->c;
	int p;

	if (j->tenant < 0 || j->tenant >= lim->n_tenants)
		return "unknown tenant index";
	if (j->pool != POL_POOL_TRAINING && j->pool != POL_POOL_INFERENCE)
		return "unknown pool";
	if (!pol_ag_time_ok(j->submit) || !pol_ag_time_ok(j->time_limit) ||
	    !pol_ag_time_ok(j->attained) ||
	    (running && !pol_ag_time_ok(j->start)))
		return "time beyond 2^53 s";
	if (running) {
		const pol_alloc_t *al = &j->alloc;

		if (al->n_parts < 0 || (al->n_parts > 0 && !al->parts))
			return "bad allocation";
		for (p = 0; p < al->n_parts; p++) {
			const pol_alloc_part_t *pt = &al->parts[p];

			if (pt->node < 0 || pt->node >= c->n_nodes ||
			    !pt->gpus ||
			    (pt->gpus & ~pol_node_all_gpus(c, pt->node)))
				return "allocation outside the cluster";
		}
		if (pol_ag_job_gpus(j) <= 0)
			return "no GPUs";
		return NULL;
	}
	if (j->total_gpus <= 0)
		return "no GPUs";
	if (j->nodes < 0)
		return "negative node count";
	if ((int64_t) j->total_gpus > lim->gpus)
		return "more GPUs than the cluster has";
	if (j->nodes > 0) {
		if (j->gpus_per_node <= 0)
			return "gang without GPUs per node";
		if (j->gpus_per_node > lim->max_node)
			return "more GPUs per node than any node has";
		if (j->nodes > c->n_nodes)
			return "more nodes than the cluster has";
		if ((int64_t) j->nodes * j->gpus_per_node != j->total_gpus)
			return "total GPUs is not nodes x GPUs per node";
	}
	if (j->min_gpus < 0 || j->max_gpus < 0 || j->min_gpus > j->max_gpus)
		return "bad elastic range (min_gpus, max_gpus)";
	return NULL;
}

const char *pol_agora_job_check(const pol_cluster_t *c, const pol_job_t *j,
				bool running, int n_tenants)
{
	ag_limits_t lim;

	if (!c || !j)
		return "no job or cluster";
	if (limits_of(c, n_tenants, &lim) < 0)
		return "broken cluster";
	return job_check(&lim, j, running);
}

static int cmp_left(const void *x, const void *y)
{
	const ag_left_out_t *a = x, *b = y;

	return (a->id > b->id) - (a->id < b->id);
}

static void skip(pol_agora_policy_t *a, const pol_job_t *j, bool running,
		 const char *why)
{
	pol_agora_stats_t *st = &a->stats;

	/* the pending ones by id, for the adapter's note on each; out of
	 * memory, a job goes unrecorded (only its note is the poorer) */
	if (!running && !agora_grow((void **) &a->left, &a->left_cap,
				    a->left_n + 1, sizeof(*a->left))) {
		a->left[a->left_n].id = j->id;
		a->left[a->left_n++].why = why;
	}

	if (!st->first_why) {
		st->first_id = j->id;
		st->first_why = why;
	}
	if (running)
		st->skipped_running++;
	else
		st->skipped_pending++;
}

/*
 * The usable part of snap: snap itself when every job is usable, else
 * a copy (a->fpend/a->frun) without the others, counted in a->stats.
 * Running jobs also must hold GPUs that are busy in the cluster and that
 * no earlier running job holds (or freeing them would fail).
 * 0, -1/EINVAL (broken cluster) or ENOMEM.
 */
int pol_ag_filter_jobs(pol_agora_policy_t *a, const pol_snapshot_t *snap,
		       pol_snapshot_t *use)
{
	const pol_cluster_t *c = snap->cluster;
	ag_limits_t lim;
	int i, p, np = 0, nr = 0;
	bool all = true;

	memset(&a->stats, 0, sizeof(a->stats));
	a->left_n = 0;
	*use = *snap;
	if (limits_of(c, snap->n_tenants, &lim) < 0) {
		errno = EINVAL;
		return -1;
	}
	if (agora_grow((void **) &a->claimed, &a->claimed_cap, c->n_nodes,
		       sizeof(*a->claimed)) < 0)
		return -1;
	if (c->n_nodes > 0)
		memset(a->claimed, 0,
		       (size_t) c->n_nodes * sizeof(*a->claimed));
	/* pass 1: anything to leave out? (the usual answer: no) */
	for (i = 0; i < snap->n_pending && all; i++)
		all = !job_check(&lim, &snap->pending[i], false);
	for (i = 0; i < snap->n_running && all; i++) {
		const pol_job_t *j = &snap->running[i];

		if (job_check(&lim, j, true)) {
			all = false;
			break;
		}
		for (p = 0; p < j->alloc.n_parts && all; p++) {
			const pol_alloc_part_t *pt = &j->alloc.parts[p];

			all = !(pt->gpus & (c->nodes[pt->node].free |
					    a->claimed[pt->node]));
			a->claimed[pt->node] |= pt->gpus;
		}
	}
	if (all)
		return 0;
	/* pass 2: copy the usable ones */
	if (c->n_nodes > 0)
		memset(a->claimed, 0,
		       (size_t) c->n_nodes * sizeof(*a->claimed));
	if (agora_grow((void **) &a->fpend, &a->fpend_cap, snap->n_pending,
		       sizeof(*a->fpend)) < 0 ||
	    agora_grow((void **) &a->frun, &a->frun_cap, snap->n_running,
		       sizeof(*a->frun)) < 0)
		return -1;
	for (i = 0; i < snap->n_pending; i++) {
		const pol_job_t *j = &snap->pending[i];
		const char *why = job_check(&lim, j, false);

		if (why)
			skip(a, j, false, why);
		else
			a->fpend[np++] = *j;
	}
	for (i = 0; i < snap->n_running; i++) {
		const pol_job_t *j = &snap->running[i];
		const char *why = job_check(&lim, j, true);

		for (p = 0; !why && p < j->alloc.n_parts; p++) {
			const pol_alloc_part_t *pt = &j->alloc.parts[p];

			if (pt->gpus & c->nodes[pt->node].free)
				why = "allocated GPUs are free in the cluster";
			else if (pt->gpus & a->claimed[pt->node])
				why = "GPUs held by another running job";
		}
		if (why) {
			skip(a, j, true, why);
			continue;
		}
		for (p = 0; p < j->alloc.n_parts; p++)
			a->claimed[j->alloc.parts[p].node] |=
				j->alloc.parts[p].gpus;
		a->frun[nr++] = *j;
	}
	use->pending = a->fpend;
	use->n_pending = np;
	use->running = a->frun;
	use->n_running = nr;
	if (a->left_n > 1)
		qsort(a->left, a->left_n, sizeof(*a->left), cmp_left);
	return 0;
}

const char *pol_agora_policy_left_out(const pol_agora_policy_t *a,
				      int64_t job_id)
{
	const ag_left_out_t key = { .id = job_id }, *hit;

	if (!a || !a->left_n)
		return NULL;
	hit = bsearch(&key, a->left, a->left_n, sizeof(*a->left), cmp_left);
	return hit ? hit->why : NULL;
}

int pol_agora_policy_stats(const pol_agora_policy_t *a, pol_agora_stats_t *st)
{
	if (!a || !st) {
		errno = EINVAL;
		return -1;
	}
	*st = a->stats;
	return 0;
}
