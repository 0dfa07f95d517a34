/*
 * pol_topo_place.c - topology-aware gang placement; the rule and the
 * score are stated in pol_topo_place.h, the reasoning in doc/topology.md.
 *
 * Structure: per node type, near[i][L] = GPUs within level L of GPU i and
 * the list of locality groups (islands, PCIe switches, sockets, the node);
 * a lazily filled memo gives the best k-subset of any free mask.  A
 * decision is one pass over the nodes (eligibility, memo lookups, leaf
 * sums), then a per-leaf choice among the candidates.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pol_topo_place_int.h"

void pol_place_weights_default(pol_place_weights_t *w)
{
	w->level = 1000.0;
	w->frag = 10.0;
	w->weight = 1.0;
	w->split_small = false;
}

pol_topo_place_t *pol_topo_place_create(const pol_cluster_t *c,
					const pol_place_weights_t *w)
{
	pol_topo_place_t *a;
	int i;

	if (!c || c->n_types < 0 || (c->n_types && !c->types)) {
		errno = EINVAL;
		return NULL;
	}
	if (w && (!isfinite(w->level) || !isfinite(w->frag) ||
		  !isfinite(w->weight) || w->level < 0 || w->frag < 0 ||
		  w->weight < 0)) {
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; i < c->n_types; i++)
		if (c->types[i].n_gpus < 0 ||
		    c->types[i].n_gpus > POL_MAX_GPUS_PER_NODE) {
			errno = EINVAL;
			return NULL;
		}
	a = calloc(1, sizeof(*a));
	if (!a)
		goto nomem;
	if (w)
		a->w = *w;
	else
		pol_place_weights_default(&a->w);
	a->types = calloc((size_t) (c->n_types ? c->n_types : 1),
			  sizeof(*a->types));
	if (!a->types)
		goto nomem;
	for (i = 0; i < c->n_types; i++) {
		a->n_types = i + 1;
		if (pol_place_type_init(&a->types[i], &c->types[i]) < 0)
			goto nomem;
	}
	return a;
nomem:
	pol_topo_place_destroy(&a);
	errno = ENOMEM;
	return NULL;
}

void pol_topo_place_destroy(pol_topo_place_t **ap)
{
	pol_topo_place_t *a;
	int i;

	if (!ap || !*ap)
		return;
	a = *ap;
	for (i = 0; i < a->n_types; i++)
		pol_place_type_fini(&a->types[i]);
	free(a->types);
	free(a->cand);
	free(a->tmp);
	free(a->leaf_free);
	free(a->leaf_cap);
	free(a->leaf_cnt);
	free(a->leaf_off);
	free(a->leaf_sum);
	free(a->order);
	free(a);
	*ap = NULL;
}

double pol_topo_place_last_score(const pol_topo_place_t *a)
{
	return a ? a->last_score : 0.0;
}

/* the cluster must have the node types the placer was made for */
int pol_tp_types_match(const pol_topo_place_t *a, const pol_cluster_t *c)
{
	int i;

	if (c->n_types != a->n_types)
		return 0;
	for (i = 0; i < c->n_types; i++)
		if (c->types[i].n_gpus != a->types[i].t.n_gpus ||
		    strcmp(c->types[i].name, a->types[i].t.name))
			return 0;
	return 1;
}

int pol_tp_scratch(pol_topo_place_t *a, const pol_cluster_t *c)
{
	int nl = c->n_leaves > 0 ? c->n_leaves : 1;

	if (c->n_nodes > a->cand_cap) {
		cand_t *nc = realloc(a->cand,
				     sizeof(*nc) * (size_t) c->n_nodes);
		cand_t *nt;

		if (!nc)
			return -1;
		a->cand = nc;
		nt = realloc(a->tmp, sizeof(*nt) * (size_t) c->n_nodes);
		if (!nt)
			return -1;
		a->tmp = nt;
		a->cand_cap = c->n_nodes;
	}
	if (nl + 1 > a->leaf_arr_cap) {
		size_t sz = sizeof(int) * (size_t) (nl + 1);
		int **arrs[] = { &a->leaf_free, &a->leaf_cap, &a->leaf_cnt,
				 &a->leaf_off,  &a->leaf_sum, &a->order };
		size_t k;

		for (k = 0; k < sizeof(arrs) / sizeof(arrs[0]); k++) {
			int *p = realloc(*arrs[k], sz);

			if (!p)
				return -1;
			*arrs[k] = p;
		}
		a->leaf_arr_cap = nl + 1;
	}
	return 0;
}
/* ---- placement ---------------------------------------------------------- */

static int cmp_cost(const void *x, const void *y)
{
	const cand_t *a = x, *b = y;

	if (a->cost != b->cost)
		return a->cost < b->cost ? -1 : 1;
	return (a->node > b->node) - (a->node < b->node);
}

/* total-split order: most free first (largest fit decreasing) */
static int cmp_free(const void *x, const void *y)
{
	const cand_t *a = x, *b = y;

	if (a->nfree != b->nfree)
		return a->nfree > b->nfree ? -1 : 1;
	return cmp_cost(x, y);
}

/*
 * One pass over the nodes: leaf sums of the pool and the candidates with
 * at least kmin free GPUs (eligible: up, pool, features, type known).
 * With k > 0 each candidate gets its best k-subset, else the whole mask.
 */
void pol_tp_node_pass(pol_topo_place_t *a, const fsrc_t *src,
		      const pol_place_req_t *req, int kmin, int k, pass_t *ps)
{
	const pol_cluster_t *c = src->c;
	int i, nl = c->n_leaves > 0 ? c->n_leaves : 1;

	memset(ps, 0, sizeof(*ps));
	ps->n_leaves = nl;
	memset(a->leaf_free, 0, sizeof(int) * (size_t) nl);
	memset(a->leaf_cap, 0, sizeof(int) * (size_t) nl);
	for (i = 0; i < c->n_nodes; i++) {
		const pol_node_t *nd = &c->nodes[i];
		pol_place_type_t *t;
		pol_gpumask_t f;
		int nf, leaf;
		cand_t *cd;
		pol_subset_t e;

		if (!nd->up || nd->pool != req->pool || nd->type < 0 ||
		    nd->type >= a->n_types)
			continue;
		t = &a->types[nd->type];
		f = fget(src, i) & t->all;
		nf = pol_popcount(f);
		leaf = nd->leaf >= 0 && nd->leaf < nl ? nd->leaf : 0;
		a->leaf_free[leaf] += nf;
		a->leaf_cap[leaf] += t->n;
		if (nf < kmin || nf == 0 ||
		    (nd->features & req->features) != req->features)
			continue;
		if (t->n > ps->maxg)
			ps->maxg = t->n;
		if (nd->weight > ps->maxw)
			ps->maxw = nd->weight;
		e = pol_place_type_best(t, f, k > 0 ? k : nf);
		cd = &a->cand[ps->n_cand++];
		cd->node = i;
		cd->type = nd->type;
		cd->leaf = leaf;
		cd->nfree = nf;
		cd->take = k > 0 ? k : nf;
		cd->g = t->n_groups;
		cd->sel = e.sel;
		cd->level = e.level;
		cd->dfrag = e.dfrag;
		cd->w = nd->weight > 0 ? nd->weight : 0;
	}
}

/* per-candidate sort key (a separable proxy of the job score) */
static void set_costs(pol_topo_place_t *a, pass_t *ps, double level_div)
{
	int i;

	for (i = 0; i < ps->n_cand; i++) {
		cand_t *cd = &a->cand[i];

		cd->cost = a->w.level * cd->level / level_div +
			   a->w.frag *
				   (cd->g ? (double) cd->dfrag / cd->g : 0) +
			   a->w.weight * (ps->maxw > 0 ? cd->w / ps->maxw : 0);
	}
}

/* bucket candidates by leaf into a->tmp (stable: node order kept) */
static void by_leaf(pol_topo_place_t *a, const pass_t *ps)
{
	int i, nl = ps->n_leaves, off = 0;

	memset(a->leaf_cnt, 0, sizeof(int) * (size_t) nl);
	memset(a->leaf_sum, 0, sizeof(int) * (size_t) nl);
	for (i = 0; i < ps->n_cand; i++) {
		a->leaf_cnt[a->cand[i].leaf]++;
		a->leaf_sum[a->cand[i].leaf] += a->cand[i].nfree;
	}
	for (i = 0; i < nl; i++) {
		a->leaf_off[i] = off;
		off += a->leaf_cnt[i];
	}
	for (i = 0; i < nl; i++)
		a->order[i] = a->leaf_off[i];
	for (i = 0; i < ps->n_cand; i++)
		a->tmp[a->order[a->cand[i].leaf]++] = a->cand[i];
}

static int emit(const cand_t *const *p, int np, pol_alloc_t *out)
{
	int i;

	out->parts = malloc(sizeof(*out->parts) * (size_t) np);
	if (!out->parts) {
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < np; i++) {
		out->parts[i].node = p[i]->node;
		out->parts[i].gpus = p[i]->sel;
	}
	out->n_parts = np;
	return 0;
}

static int place_one(pol_topo_place_t *a, const fsrc_t *src,
		     const pol_place_req_t *req, int k, pol_alloc_t *out,
		     double *score)
{
	pass_t ps;
	const cand_t *best = NULL;
	double bs = 0;
	int i;

	pol_tp_node_pass(a, src, req, k, k, &ps);
	for (i = 0; i < ps.n_cand; i++) {
		const cand_t *cd = &a->cand[i];
		double s = pol_tp_score_parts(a, &cd, 1, a->leaf_free,
					      a->leaf_cap, ps.n_leaves,
					      ps.maxw);

		if (!best || s < bs) { /* ties: lower index came first */
			best = cd;
			bs = s;
		}
	}
	if (!best) {
		errno = ENOSPC;
		return -1;
	}
	if (emit(&best, 1, out) < 0)
		return -1;
	*score = bs;
	return 0;
}

/* gang of n nodes x k GPUs */
static int place_gang(pol_topo_place_t *a, const fsrc_t *src,
		      const pol_place_req_t *req, int n, int k,
		      pol_alloc_t *out, double *score)
{
	pass_t ps;
	const cand_t **pick = NULL, **best = NULL;
	double bs = 0;
	int l, i, found = 0, rc = -1;

	pol_tp_node_pass(a, src, req, k, k, &ps);
	if (ps.n_cand < n) {
		errno = ENOSPC;
		return -1;
	}
	set_costs(a, &ps, 4.0);
	by_leaf(a, &ps);
	pick = malloc(sizeof(*pick) * (size_t) n);
	best = malloc(sizeof(*best) * (size_t) n);
	if (!pick || !best) {
		errno = ENOMEM;
		goto out;
	}
	for (l = 0; l < ps.n_leaves; l++) {
		cand_t *seg = a->tmp + a->leaf_off[l];
		double s;

		if (a->leaf_cnt[l] < n)
			continue;
		qsort(seg, (size_t) a->leaf_cnt[l], sizeof(*seg), cmp_cost);
		for (i = 0; i < n; i++)
			pick[i] = &seg[i];
		s = pol_tp_score_parts(a, pick, n, a->leaf_free, a->leaf_cap,
				       ps.n_leaves, ps.maxw);
		if (!found || s < bs) {
			memcpy(best, pick, sizeof(*pick) * (size_t) n);
			bs = s;
			found = 1;
		}
	}
	if (!found) {
		/* across leaves: fullest leaves first, the last best fit */
		int nl = 0, got = 0, j;

		for (l = 0; l < ps.n_leaves; l++) {
			if (!a->leaf_cnt[l])
				continue;
			qsort(a->tmp + a->leaf_off[l], (size_t) a->leaf_cnt[l],
			      sizeof(cand_t), cmp_cost);
			for (j = nl; j > 0 && a->leaf_cnt[a->order[j - 1]] <
						      a->leaf_cnt[l];
			     j--)
				a->order[j] = a->order[j - 1];
			a->order[j] = l;
			nl++;
		}
		for (i = 0; i < nl && got < n; i++) {
			int lf = a->order[i], take;

			if (a->leaf_cnt[lf] > n - got) {
				/* best fit: the smallest leaf that suffices */
				for (j = i;
				     j + 1 < nl &&
				     a->leaf_cnt[a->order[j + 1]] >= n - got;
				     j++)
					;
				lf = a->order[j];
				a->order[j] = a->order[i];
				a->order[i] = lf;
			}
			take = a->leaf_cnt[lf] < n - got ? a->leaf_cnt[lf]
							 : n - got;
			for (j = 0; j < take; j++)
				best[got++] = &a->tmp[a->leaf_off[lf] + j];
		}
		bs = pol_tp_score_parts(a, best, n, a->leaf_free, a->leaf_cap,
					ps.n_leaves, ps.maxw);
	}
	if (emit(best, n, out) < 0)
		goto out;
	*score = bs;
	rc = 0;
out:
	free(pick);
	free(best);
	return rc;
}

/*
 * Take total GPUs from segment seg (sorted by cmp_free) into p: whole
 * free masks first, the remainder on the node with the fewest free GPUs
 * that still covers it (best fit).  Returns parts used, or -1 if the
 * segment has too few.  Rewrites take/sel/level/dfrag of the last part.
 */
static int split_take(pol_topo_place_t *a, const fsrc_t *src, cand_t *seg,
		      int cnt, int total, const cand_t **p, int np0)
{
	int i = 0, np = np0, rem = total;

	while (rem > 0 && i < cnt) {
		if (seg[i].nfree <= rem) {
			p[np++] = &seg[i];
			rem -= seg[i].nfree;
			i++;
			continue;
		}
		{
			/* last j >= i with nfree >= rem: fewest free */
			int j = i, nf;
			cand_t *cd;
			pol_place_type_t *t;
			pol_subset_t e;

			while (j + 1 < cnt && seg[j + 1].nfree >= rem)
				j++;
			nf = seg[j].nfree;
			while (j > i && seg[j - 1].nfree == nf)
				j--; /* first of that size: best cost */
			cd = &seg[j];
			t = &a->types[src->c->nodes[cd->node].type];
			e = pol_place_type_best(t, fget(src, cd->node) & t->all,
						rem);
			cd->take = rem;
			cd->sel = e.sel;
			cd->level = e.level;
			cd->dfrag = e.dfrag;
			p[np++] = cd;
			rem = 0;
		}
	}
	return rem > 0 ? -1 : np - np0;
}

static int place_split(pol_topo_place_t *a, const fsrc_t *src,
		       const pol_place_req_t *req, int total, pol_alloc_t *out,
		       double *score)
{
	pass_t ps;
	const cand_t **pick = NULL, **best = NULL;
	cand_t *saved = NULL;
	double bs = 0;
	int l, np, bn = 0, found = 0, rc = -1;

	pol_tp_node_pass(a, src, req, 1, 0, &ps);
	set_costs(a, &ps, 4.0);
	by_leaf(a, &ps);
	pick = malloc(sizeof(*pick) * (size_t) (ps.n_cand + 1));
	best = malloc(sizeof(*best) * (size_t) (ps.n_cand + 1));
	saved = malloc(sizeof(*saved) * (size_t) (ps.n_cand + 1));
	if (!pick || !best || !saved) {
		errno = ENOMEM;
		goto out;
	}
	for (l = 0; l < ps.n_leaves; l++) {
		cand_t *seg = a->tmp + a->leaf_off[l];
		double s;
		int i;

		if (a->leaf_sum[l] < total)
			continue;
		qsort(seg, (size_t) a->leaf_cnt[l], sizeof(*seg), cmp_free);
		np = split_take(a, src, seg, a->leaf_cnt[l], total, pick, 0);
		if (np < 0)
			continue;
		s = pol_tp_score_parts(a, pick, np, a->leaf_free, a->leaf_cap,
				       ps.n_leaves, ps.maxw);
		if (!found || s < bs) {
			/* keep copies: later leaves reuse nothing of seg */
			for (i = 0; i < np; i++) {
				saved[i] = *pick[i];
				best[i] = &saved[i];
			}
			bn = np;
			bs = s;
			found = 1;
		}
	}
	if (!found) {
		/* across leaves: the leaves with most free GPUs first */
		int nl = 0, j, got = 0, i;

		for (l = 0; l < ps.n_leaves; l++) {
			if (!a->leaf_cnt[l])
				continue;
			qsort(a->tmp + a->leaf_off[l], (size_t) a->leaf_cnt[l],
			      sizeof(cand_t), cmp_free);
			for (j = nl; j > 0 && a->leaf_sum[a->order[j - 1]] <
						      a->leaf_sum[l];
			     j--)
				a->order[j] = a->order[j - 1];
			a->order[j] = l;
			nl++;
		}
		np = 0;
		for (i = 0; i < nl && got < total; i++) {
			int lf = a->order[i], want, r;

			want = a->leaf_sum[lf] < total - got ? a->leaf_sum[lf]
							     : total - got;
			r = split_take(a, src, a->tmp + a->leaf_off[lf],
				       a->leaf_cnt[lf], want, pick, np);
			if (r < 0)
				break;
			np += r;
			got += want;
		}
		if (got < total) {
			errno = ENOSPC;
			goto out;
		}
		for (i = 0; i < np; i++)
			best[i] = pick[i];
		bn = np;
		bs = pol_tp_score_parts(a, best, bn, a->leaf_free, a->leaf_cap,
					ps.n_leaves, ps.maxw);
	}
	if (emit(best, bn, out) < 0)
		goto out;
	*score = bs;
	rc = 0;
out:
	free(pick);
	free(best);
	free(saved);
	return rc;
}

static int place(pol_topo_place_t *a, const fsrc_t *src,
		 const pol_place_req_t *req, pol_alloc_t *out, double *score)
{
	const pol_cluster_t *c = src->c;
	double sc = 0;
	int maxg = 0, i, rc;

	if (!a || !c || !req || !out) {
		errno = EINVAL;
		return -1;
	}
	out->parts = NULL;
	out->n_parts = 0;
	if (!pol_tp_types_match(a, c)) {
		errno = EINVAL;
		return -1;
	}
	if (req->nodes < 0 || (req->nodes > 0 && req->gpus_per_node < 1) ||
	    (req->nodes == 0 && req->total_gpus < 1)) {
		errno = EINVAL;
		return -1;
	}
	if (pol_tp_scratch(a, c) < 0) {
		errno = ENOMEM;
		return -1;
	}
	/* largest eligible node of the pool (not of the whole cluster) */
	for (i = 0; i < c->n_nodes; i++) {
		const pol_node_t *nd = &c->nodes[i];

		if (nd->up && nd->pool == req->pool && nd->type >= 0 &&
		    nd->type < a->n_types &&
		    (nd->features & req->features) == req->features &&
		    a->types[nd->type].n > maxg)
			maxg = a->types[nd->type].n;
	}
	a->maxg = maxg;
	if (req->nodes == 1)
		rc = place_one(a, src, req, req->gpus_per_node, out, &sc);
	else if (req->nodes > 1)
		rc = req->gpus_per_node > maxg
			     ? (errno = ENOSPC, -1)
			     : place_gang(a, src, req, req->nodes,
					  req->gpus_per_node, out, &sc);
	else {
		rc = -1;
		errno = ENOSPC;
		if (req->total_gpus <= maxg)
			rc = place_one(a, src, req, req->total_gpus, out, &sc);
		if (rc < 0 && errno == ENOSPC &&
		    (req->total_gpus > maxg || a->w.split_small))
			rc = place_split(a, src, req, req->total_gpus, out,
					 &sc);
	}
	if (rc == 0) {
		a->last_score = sc;
		if (score)
			*score = sc;
	}
	return rc;
}

int pol_topo_place_req(pol_topo_place_t *a, const pol_cluster_t *c,
		       const pol_gpumask_t *free_masks,
		       const pol_place_req_t *req, pol_alloc_t *out,
		       double *score)
{
	fsrc_t src = { c, free_masks, NULL };

	return place(a, &src, req, out, score);
}

int pol_topo_place_job(void *arg, const pol_freemap_t *fm, const pol_job_t *job,
		       pol_alloc_t *out)
{
	pol_topo_place_t *a = arg;
	pol_place_req_t req;
	fsrc_t src;

	if (!a || !fm || !job || !out) {
		errno = EINVAL;
		return -1;
	}
	out->parts = NULL;
	out->n_parts = 0;
	memset(&req, 0, sizeof(req));
	req.nodes = job->nodes;
	req.gpus_per_node = job->gpus_per_node;
	req.total_gpus = job->nodes > 0 ? job->nodes * job->gpus_per_node
					: job->total_gpus;
	req.pool = job->pool;
	/* O(1) rejection with the map's counters */
	if (req.total_gpus > 0 &&
	    pol_freemap_free_gpus(fm, job->pool) < req.total_gpus) {
		errno = ENOSPC;
		return -1;
	}
	if (job->nodes > 0 && job->gpus_per_node > 0 &&
	    pol_freemap_count_at_least(fm, job->pool, job->gpus_per_node) <
		    job->nodes) {
		errno = ENOSPC;
		return -1;
	}
	src.c = pol_freemap_cluster(fm);
	src.arr = NULL;
	src.fm = fm;
	return place(a, &src, &req, out, NULL);
}
