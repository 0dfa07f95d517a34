/*
 * pol_agora_auction.c - the pass of the "agora" policy after the first
 * step (pol_agora_prep.c; both called by the entry, pol_agora.c): leases, reservations of earlier winners, one Themis
 * auction per pool (pol_agora_pool.c, on pol_themis.c), leftovers and the
 * wake-up time.  doc/fairness.md describes the mechanism.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pol_agora_int.h"
#include "pol_backfill.h"

/* Pending index of job id, or -1 (linear: reservations are few). */
static int pending_index(const pol_snapshot_t *snap, int64_t id)
{
	int i;

	for (i = 0; i < snap->n_pending; i++)
		if (snap->pending[i].id == id)
			return i;
	return -1;
}

/* Leases of jobs that ended go; new running jobs get one; GRACE over ->
 * requeue. */
static int lease_upkeep(pol_agora_policy_t *a, const pol_snapshot_t *snap,
			int64_t now, pol_actions_t *out)
{
	int64_t *ids = NULL;
	int i, rc = -1;

	if (snap->n_running &&
	    !(ids = malloc((size_t) snap->n_running * sizeof(*ids))))
		return -1;
	for (i = 0; i < snap->n_running; i++)
		ids[i] = snap->running[i].id;
	if (pol_lease_sweep(a->leases, ids, snap->n_running) < 0)
		goto out;
	for (i = 0; i < snap->n_running; i++) {
		const pol_job_t *j = &snap->running[i];
		const pol_lease_t *l = pol_lease_get(a->leases, j->id);

		if (!l) {
			if (pol_lease_grant(
				    a->leases, j->id, pol_ag_job_gpus(j), now,
				    pol_ag_lease_len(
					    a, j, j->start, now,
					    pol_ag_full_lease(a, now))) < 0)
				goto out;
		} else if (pol_lease_due(l, now)) {
			if (pol_actions_add(out, POL_ACT_PREEMPT, j->id, NULL,
					    0, "lease lost (Themis auction)") <
				    0 ||
			    pol_lease_drop(a->leases, j->id) < 0)
				goto out;
			a->rflag[i] |= RF_LEAVING;
		}
	}
	rc = 0;
out:
	free(ids);
	return rc;
}

/* Earlier winners that waited for a loser's GPUs start first. */
static int start_reserved(pol_agora_policy_t *a, const pol_snapshot_t *snap,
			  int64_t now, pol_actions_t *out)
{
	int r = 0;

	while (r < a->n_resv) {
		int p = pending_index(snap, a->resv[r].job_id);
		pol_alloc_t al;
		int fit;

		if (p < 0 || a->resv[r].until < now) {
			a->resv[r] = a->resv[--a->n_resv];
			continue;
		}
		fit = pol_ag_try_place(a, a->w.fm, &snap->pending[p], &al);
		if (fit < 0)
			return -1;
		if (fit) {
			int rc = pol_ag_start_job(a, &snap->pending[p], &al,
						  now,
						  pol_ag_full_lease(a, now), 0,
						  "auction winner", out);

			pol_alloc_free(&al);
			if (rc < 0)
				return -1;
			a->pflag[p] |= PF_STARTED;
			a->resv[r] = a->resv[--a->n_resv];
			continue;
		}
		a->pflag[p] |= PF_RESERVED;
		r++;
	}
	return 0;
}

static void want_wakeup(pol_actions_t *out, int64_t now, int64_t t)
{
	if (t > now && (out->wakeup <= now || t < out->wakeup))
		out->wakeup = t;
}

/*
 * Ask to be called when the next lease ends or grace runs out, and right
 * after a requeue when a winner waits for its GPUs (the simulator calls
 * decide() only on events; the plugin runs every SchedulerInterval).
 */
static void set_wakeup(const pol_agora_policy_t *a, int64_t now, int first_act,
		       pol_actions_t *out)
{
	int i, n = pol_lease_count(a->leases);

	for (i = 0; i < n; i++) {
		const pol_lease_t *l = pol_lease_at(a->leases, i);

		want_wakeup(out, now,
			    l->state == POL_LEASE_ACTIVE ? l->end
							 : l->requeue_at);
	}
	if (a->n_resv == 0)
		return;
	for (i = first_act; i < out->n; i++)
		if (out->v[i].type == POL_ACT_PREEMPT) {
			want_wakeup(out, now, now + 1);
			break;
		}
}

/* Group the pending jobs by tenant, each group in credit order. */
static int group_pending(pol_agora_policy_t *a, const pol_snapshot_t *snap)
{
	int i, pos = 0;

	if (agora_grow((void **) &a->tpend, &a->tpend_cap, snap->n_pending,
		       sizeof(*a->tpend)) < 0)
		return -1;
	for (i = 0; i < a->n_papp; i++) {
		ag_tenant_t *t = &a->app[a->papp[i]];

		t->first = pos;
		pos += t->n;
		t->n = 0;
	}
	for (i = 0; i < snap->n_pending; i++) {
		int p = a->keys[i].index;
		ag_tenant_t *t = AG_TEN(a, snap->pending[p].tenant);

		a->tpend[t->first + t->n++] = p;
	}
	return 0;
}

/* The leftover pass's reservation ("drain", doc/fairness.md section 3) ---- */

/* When a running job is expected to end (with est=limit: start + time
 * limit, as Slurm's backfill plans; else now + the estimate of what
 * remains, so that a shorter stated limit buys no hole in the plan). */
static int64_t run_end(const pol_agora_policy_t *a, const pol_job_t *j,
		       int64_t now)
{
	if (!a->est)
		return j->start + pol_ag_job_limit(a, j);
	return now + pol_ag_job_rest(a, j, pol_ag_job_gpus(j));
}

/* How long a pending job is expected to run, by the same rule. */
static int64_t pend_len(const pol_agora_policy_t *a, const pol_job_t *j)
{
	if (!a->est)
		return pol_ag_job_limit(a, j);
	return pol_ag_job_rest(a, j, j->total_gpus);
}

/* A one-node job of 2+ GPUs: the kind a fragmented map blocks; with
 * drain=2 also a job of several nodes (a gang, or a job of more GPUs than
 * a node has, read as whole nodes: drain_shape()). */
static bool drainable(const pol_agora_policy_t *a, const pol_freemap_t *fm,
		      const pol_job_t *j)
{
	int k = j->nodes > 0 ? j->nodes * j->gpus_per_node : j->total_gpus;
	int maxg = pol_freemap_max_node_gpus(fm, j->pool);

	if (j->nodes > 1 || (j->nodes == 0 && k > maxg))
		return a->p.drain >= 2 && maxg > 0 &&
		       (j->nodes == 0 || j->gpus_per_node <= maxg);
	return k >= 2 && k <= maxg;
}

/* The nodes a drained job needs (*n) and the GPUs on each (*k). */
static void drain_shape(const pol_freemap_t *fm, const pol_job_t *j, int *n,
			int *k)
{
	int maxg = pol_freemap_max_node_gpus(fm, j->pool);

	if (j->nodes > 0) {
		*n = j->nodes;
		*k = j->gpus_per_node;
	} else if (maxg > 0 && j->total_gpus > maxg) {
		*n = (j->total_gpus + maxg - 1) / maxg;
		*k = maxg;
	} else {
		*n = 1;
		*k = j->total_gpus;
	}
}

typedef struct ag_cand {
	int node;
	int64_t t;
} ag_cand_t;

static int cand_cmp(const void *x, const void *y)
{
	const ag_cand_t *p = x, *q = y;

	if (p->t != q->t)
		return p->t < q->t ? -1 : 1;
	return (p->node > q->node) - (p->node < q->node);
}

typedef struct ag_rel {
	int node, gpus;
	int64_t end;
} ag_rel_t;

static int rel_cmp(const void *x, const void *y)
{
	const ag_rel_t *p = x, *q = y;

	if (p->node != q->node)
		return p->node < q->node ? -1 : 1;
	return (p->end > q->end) - (p->end < q->end);
}

/*
 * EASY for one job j that does not fit (one node, or a gang of N whole
 * nodes): the N up nodes of its pool where it can start soonest if running
 * jobs end when run_end() says (GPUs started in this pass are never
 * released), ties to the lowest index, into nodes[0..*n); *shadow is when
 * the last of them is ready.  *n = 0 if the pool cannot hold it.  0, or
 * -1/ENOMEM.
 */
static int pick_drain(pol_agora_policy_t *a, const pol_snapshot_t *snap,
		      const pol_job_t *j, int64_t now, int *nodes, int *n_out,
		      int64_t *shadow)
{
	const pol_cluster_t *c = snap->cluster;
	int k, want, i, p, n = 0, r = 0, nc = 0;
	ag_rel_t *rel;
	ag_cand_t *cand;

	*n_out = 0;
	*shadow = 0;
	drain_shape(a->w.fm, j, &want, &k);
	for (i = 0; i < snap->n_running; i++)
		n += snap->running[i].alloc.n_parts;
	rel = malloc((size_t) (n ? n : 1) * sizeof(*rel));
	cand = malloc((size_t) (c->n_nodes ? c->n_nodes : 1) * sizeof(*cand));
	if (!rel || !cand) {
		free(rel);
		free(cand);
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < snap->n_running; i++) {
		const pol_job_t *rj = &snap->running[i];
		int64_t end = run_end(a, rj, now);

		for (p = 0; p < rj->alloc.n_parts; p++) {
			rel[r].node = rj->alloc.parts[p].node;
			rel[r].gpus = __builtin_popcountll(
				rj->alloc.parts[p].gpus &
				~pol_freemap_node(a->w.fm,
						  rj->alloc.parts[p].node));
			rel[r++].end = end > now ? end : now;
		}
	}
	qsort(rel, (size_t) r, sizeof(*rel), rel_cmp);
	for (i = 0, p = 0; i < c->n_nodes; i++) {
		const pol_node_t *nd = &c->nodes[i];
		int have = __builtin_popcountll(pol_freemap_node(a->w.fm, i));
		int64_t t = now;

		while (p < r && rel[p].node < i)
			p++;
		if (!nd->up || nd->pool != j->pool ||
		    c->types[nd->type].n_gpus < k)
			continue;
		for (; p < r && rel[p].node == i && have < k; p++) {
			have += rel[p].gpus;
			t = rel[p].end;
		}
		if (have >= k)
			cand[nc++] = (ag_cand_t){ i, t };
	}
	if (nc >= want) {
		qsort(cand, (size_t) nc, sizeof(*cand), cand_cmp);
		for (i = 0; i < want; i++)
			nodes[i] = cand[i].node;
		*n_out = want;
		*shadow = cand[want - 1].t;
	}
	free(rel);
	free(cand);
	return 0;
}

/* The leftover pass's reservation for j: its nodes into a->dnodes[0..*nd),
 * a->tent = the free map without them, *shadow when they are ready. */
static int reserve_drain(pol_agora_policy_t *a, const pol_snapshot_t *snap,
			 const pol_job_t *j, int64_t now, int *nd,
			 int64_t *shadow)
{
	int k;

	if (pick_drain(a, snap, j, now, a->dnodes, nd, shadow) < 0 ||
	    (*nd > 0 && pol_freemap_assign(a->tent, a->w.fm) < 0))
		return -1;
	for (k = 0; k < *nd; k++)
		pol_freemap_take_mask(a->tent, a->dnodes[k],
				      pol_freemap_node(a->tent, a->dnodes[k]));
	return 0;
}

/*
 * drain_rho=1: the pending job to reserve for, the one of the worst-rho
 * app (Themis' worst-off) among the drainable jobs that the auction did
 * not start and that do not fit now; ties to the earlier in credit order.
 * Its pending index, -1 if none, -2 on error (errno).
 */
static int worst_drainable(pol_agora_policy_t *a, const pol_snapshot_t *snap,
			   int64_t now, int cgpus)
{
	double best = -INFINITY, r;
	int i, w = -1;

	for (i = 0; i < snap->n_pending; i++) {
		int p = a->keys[i].index, fit;
		const pol_job_t *j = &snap->pending[p];
		pol_alloc_t al;

		if (a->pflag[p] || !drainable(a, a->w.fm, j))
			continue;
		if (pol_ag_app_rho_now(a, AG_TEN(a, j->tenant), cgpus, now,
				       &r) < 0)
			return -2;
		if (!(r > best))
			continue;
		fit = pol_ag_try_place(a, a->w.fm, j, &al);
		if (fit < 0)
			return -2;
		if (fit) {
			pol_alloc_free(&al);
			continue;
		}
		best = r;
		w = p;
	}
	return w;
}

static int okey_cmp(const void *x, const void *y)
{
	const ag_okey_t *p = x, *q = y;

	if (p->band != q->band)
		return p->band > q->band ? -1 : 1;
	if (p->back != q->back)
		return p->back > q->back ? -1 : 1;
	if (p->rho != q->rho)
		return p->rho > q->rho ? -1 : 1;
	return (p->rank > q->rank) - (p->rank < q->rank);
}

/* left_rho, left_back: a->lord = the pending jobs by band, then (left_back)
 * requeued jobs first, then (left_rho) their app's rho as things stand
 * after the auction (worst first), then credit order. */
static int leftover_order(pol_agora_policy_t *a, const pol_snapshot_t *snap,
			  int64_t now, int cgpus)
{
	int i;

	if (agora_grow((void **) &a->lord, &a->lord_cap, snap->n_pending,
		       sizeof(*a->lord)) < 0 ||
	    (a->p.left_rho && agora_grow((void **) &a->arho, &a->arho_cap,
					 a->n_app, sizeof(*a->arho)) < 0))
		return -1;
	for (i = 0; a->p.left_rho && i < a->n_app; i++)
		a->arho[i] = NAN;
	for (i = 0; i < snap->n_pending; i++) {
		int p = a->keys[i].index;
		const pol_job_t *j = &snap->pending[p];
		ag_tenant_t *t = AG_TEN(a, j->tenant);
		int ti = (int) (t - a->app);

		if (a->p.left_rho && isnan(a->arho[ti]) &&
		    pol_ag_app_rho_now(a, t, cgpus, now, &a->arho[ti]) < 0)
			return -1;
		a->lord[i] = (ag_okey_t){
			.band = j->band,
			.back = a->p.left_back && j->preemptions > 0,
			.rho = a->p.left_rho ? a->arho[ti] : 0,
			.rank = i,
			.index = p
		};
	}
	if (snap->n_pending > 1)
		qsort(a->lord, (size_t) snap->n_pending, sizeof(*a->lord),
		      okey_cmp);
	return 0;
}

static int idix_cmp(const void *x, const void *y)
{
	const ag_idix_t *a = x, *b = y;

	return (a->id > b->id) - (a->id < b->id);
}

/*
 * left_bf: the leftover pass as Slurm's backfill plan.  The pending jobs
 * nobody started or reserved for, in credit order (the rank as their
 * priority, as agora-order passes them); the running set with the
 * auction's starts of this pass (their ends bound the plan); the free
 * GPUs the auction left (a->w.fm) as the plan's start.  Each job the plan
 * starts is started here with a full lease, as the EASY pass does.
 */
static int leftover_bf(pol_agora_policy_t *a, const pol_snapshot_t *snap,
		       int64_t now, int first_act, pol_actions_t *out)
{
	pol_snapshot_t s2 = *snap;
	int i, n = 0, nr = snap->n_running, rc = -1;

	if (agora_grow((void **) &a->reord, &a->reord_cap, snap->n_pending,
		       sizeof(*a->reord)) < 0 ||
	    agora_grow((void **) &a->bidx, &a->bidx_cap, snap->n_pending,
		       sizeof(*a->bidx)) < 0 ||
	    agora_grow((void **) &a->brun, &a->brun_cap,
		       snap->n_running + (out->n - first_act),
		       sizeof(*a->brun)) < 0)
		return -1;
	for (i = 0; i < snap->n_pending; i++) {
		int p = a->keys[i].index;

		if (a->pflag[p])
			continue;
		a->reord[n] = snap->pending[p];
		a->reord[n].priority = (int64_t) snap->n_pending - i;
		a->bidx[n] = (ag_idix_t){ .id = snap->pending[p].id,
					  .index = p };
		n++;
	}
	if (n == 0)
		return 0;
	if (nr)
		memcpy(a->brun, snap->running, (size_t) nr * sizeof(*a->brun));
	for (i = first_act; i < out->n; i++) {
		const pol_action_t *act = &out->v[i];
		int p;

		if (act->type != POL_ACT_START ||
		    (p = pending_index(snap, act->job_id)) < 0)
			continue;
		a->brun[nr] = snap->pending[p];
		a->brun[nr].state = POL_JOB_RUNNING;
		a->brun[nr].start = now;
		a->brun[nr].alloc = act->alloc;
		nr++;
	}
	qsort(a->bidx, (size_t) n, sizeof(*a->bidx), idix_cmp);
	s2.pending = a->reord;
	s2.n_pending = n;
	s2.running = a->brun;
	s2.n_running = nr;
	pol_actions_clear(&a->bfout);
	pol_bf_set_base(a->bf, a->w.fm);
	if (pol_backfill_ops.decide(a->bf, &s2, now, &a->bfout) < 0)
		goto out;
	for (i = 0; i < a->bfout.n; i++) {
		pol_action_t *act = &a->bfout.v[i];
		ag_idix_t key = { .id = act->job_id }, *hit;

		if (act->type != POL_ACT_START ||
		    !(hit = bsearch(&key, a->bidx, (size_t) n, sizeof(*a->bidx),
				    idix_cmp)))
			continue;
		if (pol_ag_start_job(a, &snap->pending[hit->index], &act->alloc,
				     now, pol_ag_full_lease(a, now), 0,
				     "leftover", out) < 0)
			goto out;
		a->pflag[hit->index] |= PF_STARTED;
	}
	rc = 0;
out:
	pol_bf_set_base(a->bf, NULL);
	return rc;
}

int pol_ag_auction_decide(pol_agora_policy_t *a, const pol_snapshot_t *snap,
			  int64_t now, pol_actions_t *out)
{
	int i, k, cgpus, pool, first_act = out->n, nd = 0;
	int64_t dshadow = 0;
	bool dtried = false, lord;

	if (group_pending(a, snap) < 0 ||
	    agora_grow((void **) &a->pflag, &a->pflag_cap, snap->n_pending, 1) <
		    0 ||
	    agora_grow((void **) &a->rflag, &a->rflag_cap, snap->n_running, 1) <
		    0 ||
	    agora_grow((void **) &a->dnodes, &a->dnodes_cap,
		       snap->cluster->n_nodes, sizeof(*a->dnodes)) < 0)
		return -1;
	if (snap->n_pending)
		memset(a->pflag, 0, (size_t) snap->n_pending);
	if (snap->n_running)
		memset(a->rflag, 0, (size_t) snap->n_running);
	/* no node with a GPU (an empty auction partition): nothing to
	 * auction, and no free map to build (pol_freemap_create refuses 0
	 * nodes) */
	cgpus = snap->cluster->n_nodes > 0 ? pol_cluster_gpus(snap->cluster)
					   : 0;
	if (cgpus <= 0)
		return 0;
	if (pol_work_sync(&a->w, snap->cluster, snap->n_pending) < 0)
		return -1;
	/* rebuilt on a new cluster, or on the same one grown or shrunk in
	 * place: the adapter's snapshot has one address every pass */
	if (!a->offer || pol_freemap_cluster(a->offer) != snap->cluster ||
	    !pol_freemap_same_shape(a->offer, a->w.fm) ||
	    !pol_freemap_same_shape(a->tent, a->w.fm)) {
		pol_freemap_destroy(&a->offer);
		pol_freemap_destroy(&a->tent);
		if (!(a->offer = pol_freemap_create(snap->cluster)) ||
		    !(a->tent = pol_freemap_create(snap->cluster)))
			return -1;
	}
	if (pol_ag_tenant_rho_base(a, snap, now, cgpus) < 0 ||
	    lease_upkeep(a, snap, now, out) < 0 ||
	    start_reserved(a, snap, now, out) < 0)
		return -1;
	for (pool = POL_POOL_TRAINING; pool <= POL_POOL_INFERENCE; pool++)
		if (pol_ag_auction_pool(a, snap, now, (pol_pool_t) pool, cgpus,
					out) < 0)
			return -1;
	if (a->p.left_bf) {
		if (leftover_bf(a, snap, now, first_act, out) < 0)
			return -1;
		set_wakeup(a, now, first_act, out);
		return 0;
	}
	if (a->p.drain && a->p.drain_rho) {
		int w = worst_drainable(a, snap, now, cgpus);

		if (w < -1)
			return -1;
		dtried = w >= 0;
		if (w >= 0 && reserve_drain(a, snap, &snap->pending[w], now,
					    &nd, &dshadow) < 0)
			return -1;
	}
	/*
	 * leftovers, work-conserving, in credit order; the first one-node
	 * gang that does not fit (drain=2: or gang of whole nodes) reserves
	 * the node(s) where it can start soonest (EASY): later leftovers go
	 * there only if they end by then (a->tent = the free map without
	 * those nodes)
	 */
	lord = a->p.left_rho || a->p.left_back;
	if (lord && leftover_order(a, snap, now, cgpus) < 0)
		return -1;
	for (i = 0; i < snap->n_pending; i++) {
		int p = lord ? a->lord[i].index : a->keys[i].index, fit;
		const pol_job_t *j = &snap->pending[p];
		const pol_freemap_t *m = a->w.fm;
		pol_alloc_t al;

		if (a->pflag[p])
			continue;
		if (nd > 0 && now + pend_len(a, j) > dshadow)
			m = a->tent;
		fit = pol_ag_try_place(a, m, j, &al);
		if (fit < 0)
			return -1;
		if (!fit) {
			if (a->p.drain && nd == 0 && !dtried &&
			    drainable(a, a->w.fm, j)) {
				dtried = true;
				if (reserve_drain(a, snap, j, now, &nd,
						  &dshadow) < 0)
					return -1;
			}
			continue;
		}
		fit = pol_ag_start_job(a, j, &al, now,
				       pol_ag_full_lease(a, now), 0, "leftover",
				       out);
		for (k = 0; fit == 0 && nd > 0 && k < al.n_parts; k++)
			pol_freemap_take_mask(a->tent, al.parts[k].node,
					      al.parts[k].gpus);
		pol_alloc_free(&al);
		if (fit < 0)
			return -1;
		a->pflag[p] |= PF_STARTED;
	}
	set_wakeup(a, now, first_act, out);
	return 0;
}
