/*
 * pol_loan_reclaim.c - which loaned nodes go back to inference, and which
 * training jobs that shrinks or preempts (pol_loan.h, doc/loaning.md).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pol_loan.h"

/* a component larger than this, or one whose enumeration would cost more
 * than ENUM_WORK job-subset steps, is cleared greedily (not exact) */
#define ENUM_MAX_NODES 16
#define ENUM_WORK      (1L << 24)

double pol_loan_preempt_cost(int gpus, int64_t run_s, int64_t ckpt_s,
			     int64_t restart_s)
{
	int64_t lost;

	if (gpus <= 0 || run_s < 0)
		return 0;
	if (ckpt_s > 0)
		lost = run_s % ckpt_s;
	else if (ckpt_s == 0)
		lost = run_s;
	else
		lost = 0;
	return (double) gpus * (double) (lost + restart_s) / 3600.0;
}

typedef struct rc {
	const pol_loan_reclaim_in_t *in;
	pol_loan_reclaim_out_t *out;
	int *nj_first, *nj_job; /* CSR: active jobs of each node */
	int *nj_n;              /* active jobs on each node */
	unsigned char *active;  /* node-job incidence still active, by CSR */
	unsigned char *cand;    /* node is a clearing candidate */
	double *tcost;          /* summed cost of a node's active jobs */
	int *pos;               /* candidate index of a node, -1 */
} rc_t;

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int check_in(const pol_loan_reclaim_in_t *in,
		    const pol_loan_reclaim_out_t *out)
{
	int j, k;

	if (!in || !out || in->n_loaned < 0 || in->need < 0 || in->n_jobs < 0 ||
	    (in->n_jobs && !in->jobs) || (in->n_loaned && !out->node_back) ||
	    (in->n_jobs && (!out->action || !out->shrink_by)))
		return -1;
	for (j = 0; j < in->n_jobs; j++) {
		const pol_loan_job_t *b = &in->jobs[j];

		if (b->n_nodes < 0 || (b->n_nodes && !b->nodes) ||
		    b->shrinkable < 0 || !(b->cost >= 0) || isinf(b->cost))
			return -1;
		for (k = 0; k < b->n_nodes; k++)
			if (b->nodes[k] < 0 || b->nodes[k] >= in->n_loaned)
				return -1;
	}
	return 0;
}

/* the node-job incidence as CSR over nodes */
static int build(rc_t *r)
{
	const pol_loan_reclaim_in_t *in = r->in;
	int n = in->n_loaned, j, k, tot = 0;

	r->nj_first = calloc((size_t) n + 1, sizeof(int));
	r->nj_n = calloc((size_t) n + 1, sizeof(int));
	r->cand = calloc((size_t) n + 1, 1);
	r->tcost = calloc((size_t) n + 1, sizeof(double));
	r->pos = calloc((size_t) n + 1, sizeof(int));
	if (!r->nj_first || !r->nj_n || !r->cand || !r->tcost || !r->pos)
		return -1;
	for (j = 0; j < in->n_jobs; j++)
		for (k = 0; k < in->jobs[j].n_nodes; k++) {
			r->nj_n[in->jobs[j].nodes[k]]++;
			tot++;
		}
	for (k = 0; k < n; k++)
		r->nj_first[k + 1] = r->nj_first[k] + r->nj_n[k];
	r->nj_job = calloc((size_t) tot + 1, sizeof(int));
	r->active = calloc((size_t) tot + 1, 1);
	if (!r->nj_job || !r->active)
		return -1;
	memset(r->nj_n, 0, sizeof(int) * ((size_t) n + 1));
	for (j = 0; j < in->n_jobs; j++)
		for (k = 0; k < in->jobs[j].n_nodes; k++) {
			int v = in->jobs[j].nodes[k];
			int at = r->nj_first[v] + r->nj_n[v]++;

			r->nj_job[at] = j;
			r->active[at] = 1;
		}
	return 0;
}

static int free_count(const rc_t *r)
{
	int v, c = 0;

	for (v = 0; v < r->in->n_loaned; v++)
		c += r->out->node_back[v];
	return c;
}

/* nodes with no active job and not yet back */
static int take_idle(rc_t *r, int want)
{
	int v, got = 0;

	for (v = 0; v < r->in->n_loaned && got < want; v++)
		if (!r->out->node_back[v] && r->nj_n[v] == 0) {
			r->out->node_back[v] = 1;
			got++;
		}
	return got;
}

/* Elastic jobs give up nodes where they are the only job left, until
 * enough nodes are free. */
static void shrink(rc_t *r, int want)
{
	const pol_loan_reclaim_in_t *in = r->in;
	int j, k, got = 0;

	for (j = 0; j < in->n_jobs && got < want; j++) {
		const pol_loan_job_t *b = &in->jobs[j];

		for (k = 0; k < b->n_nodes && got < want &&
			    r->out->shrink_by[j] < b->shrinkable;
		     k++) {
			int v = b->nodes[k], a;

			if (r->out->node_back[v] || r->nj_n[v] != 1)
				continue;
			for (a = r->nj_first[v]; a < r->nj_first[v + 1]; a++)
				r->active[a] = 0;
			r->nj_n[v] = 0;
			r->out->node_back[v] = 1;
			r->out->shrink_by[j]++;
			got++;
		}
		if (r->out->shrink_by[j]) {
			r->out->action[j] = POL_LOAN_SHRINK;
			r->out->shrunk++;
		}
	}
}

/* candidates: not back, some active job, none that cannot requeue */
static int candidates(rc_t *r, int *list)
{
	const pol_loan_reclaim_in_t *in = r->in;
	int v, a, n = 0;

	for (v = 0; v < in->n_loaned; v++) {
		bool ok = !r->out->node_back[v] && r->nj_n[v] > 0;

		r->tcost[v] = 0;
		r->pos[v] = -1;
		for (a = r->nj_first[v]; ok && a < r->nj_first[v + 1]; a++) {
			if (!r->active[a])
				continue;
			if (!in->jobs[r->nj_job[a]].requeue)
				ok = false;
			r->tcost[v] += in->jobs[r->nj_job[a]].cost;
		}
		r->cand[v] = ok;
		if (ok) {
			r->pos[v] = n;
			list[n++] = v;
		}
	}
	return n;
}

typedef struct nkey {
	double k1, k2;
	int v;
} nkey_t;

static int nkey_cmp(const void *a, const void *b)
{
	const nkey_t *x = a, *y = b;

	if (x->k1 != y->k1)
		return x->k1 < y->k1 ? -1 : 1;
	if (x->k2 != y->k2)
		return x->k2 < y->k2 ? -1 : 1;
	return x->v - y->v;
}

/* order the candidates by the reclaim order (not the exact mode) */
static int order_nodes(rc_t *r, int *list, int n)
{
	const pol_loan_reclaim_in_t *in = r->in;
	nkey_t *key = calloc((size_t) n + 1, sizeof(*key));
	uint64_t seed = in->seed;
	int i, a;

	if (!key)
		return -1;
	for (i = 0; i < n; i++) {
		int v = list[i];
		double oldest = INFINITY;

		key[i].v = v;
		for (a = r->nj_first[v]; a < r->nj_first[v + 1]; a++)
			if (r->active[a] &&
			    (double) in->jobs[r->nj_job[a]].start < oldest)
				oldest = (double) in->jobs[r->nj_job[a]].start;
		switch (in->order) {
		case POL_LOAN_SLURM:
			key[i].k1 = r->nj_n[v];
			break;
		case POL_LOAN_RANDOM:
			key[i].k1 = (double) (splitmix(&seed) >> 11);
			break;
		case POL_LOAN_RECENT:
			key[i].k1 = -oldest;
			break;
		default:
			key[i].k1 = r->tcost[v];
			key[i].k2 = r->nj_n[v];
			break;
		}
	}
	qsort(key, (size_t) n, sizeof(*key), nkey_cmp);
	for (i = 0; i < n; i++)
		list[i] = key[i].v;
	free(key);
	return 0;
}

/* mark every active job on node v preempted */
static void clear_node(rc_t *r, int v)
{
	int a;

	r->out->node_back[v] = 1;
	for (a = r->nj_first[v]; a < r->nj_first[v + 1]; a++) {
		int j = r->nj_job[a];

		if (!r->active[a] || r->out->action[j] == POL_LOAN_PREEMPT)
			continue;
		if (r->out->action[j] == POL_LOAN_SHRINK)
			r->out->shrunk--;
		r->out->action[j] = POL_LOAN_PREEMPT;
		r->out->preempted++;
		r->out->cost += r->in->jobs[j].cost;
	}
}

/* The most candidate nodes one job with a job on a candidate runs on: the
 * greedy's factor (doc/loaning.md). */
static int degree(const rc_t *r)
{
	const pol_loan_reclaim_in_t *in = r->in;
	int j, k, d = 1;

	for (j = 0; j < in->n_jobs; j++) {
		int c = 0;

		for (k = 0; k < in->jobs[j].n_nodes; k++)
			c += r->cand[in->jobs[j].nodes[k]];
		if (c > d)
			d = c;
	}
	return d;
}

/* --- exact: components, enumeration, covering DP --- */

typedef struct comp {
	int m;          /* nodes */
	int *nodes;     /* candidate nodes */
	double *best;   /* best[c], c = 0..m: least cost to clear c nodes */
	uint32_t *mask; /* the subset (bits over nodes[]), or the greedy
			   prefix length when !exact */
	bool exact;
} comp_t;

static int uf_find(int *p, int x)
{
	while (p[x] != x) {
		p[x] = p[p[x]];
		x = p[x];
	}
	return x;
}

static int comp_enum(rc_t *r, comp_t *c)
{
	const pol_loan_reclaim_in_t *in = r->in;
	int *jl = NULL, nj = 0, i, k, a;
	uint32_t *jm = NULL, s;
	double *jc = NULL;
	int rc = -1;

	for (i = 0; i < c->m; i++)
		nj += r->nj_n[c->nodes[i]];
	jl = calloc((size_t) nj + 1, sizeof(int));
	jm = calloc((size_t) nj + 1, sizeof(uint32_t));
	jc = calloc((size_t) nj + 1, sizeof(double));
	if (!jl || !jm || !jc)
		goto out;
	nj = 0;
	for (i = 0; i < c->m; i++) {
		int v = c->nodes[i];

		for (a = r->nj_first[v]; a < r->nj_first[v + 1]; a++) {
			int j = r->nj_job[a];

			if (!r->active[a])
				continue;
			for (k = 0; k < nj && jl[k] != j; k++)
				;
			if (k == nj) {
				jl[nj] = j;
				jc[nj] = in->jobs[j].cost;
				nj++;
			}
			jm[k] |= 1u << i;
		}
	}
	for (i = 0; i <= c->m; i++)
		c->best[i] = INFINITY;
	for (s = 0; s < (1u << c->m); s++) {
		double cost = 0;
		int pc = __builtin_popcount(s);

		for (k = 0; k < nj; k++)
			if (jm[k] & s)
				cost += jc[k];
		if (cost < c->best[pc]) {
			c->best[pc] = cost;
			c->mask[pc] = s;
		}
	}
	c->exact = true;
	rc = 0;
out:
	free(jl);
	free(jm);
	free(jc);
	return rc;
}

/* a component too large to enumerate: its nodes by summed cost, the best
 * of c nodes is the cost of the first c (an upper bound) */
static int comp_greedy(rc_t *r, comp_t *c)
{
	nkey_t *key = calloc((size_t) c->m + 1, sizeof(*key));
	int i;

	if (!key)
		return -1;
	for (i = 0; i < c->m; i++) {
		key[i].k1 = r->tcost[c->nodes[i]];
		key[i].k2 = r->nj_n[c->nodes[i]];
		key[i].v = c->nodes[i];
	}
	qsort(key, (size_t) c->m, sizeof(*key), nkey_cmp);
	c->best[0] = 0;
	for (i = 0; i < c->m; i++) {
		c->nodes[i] = key[i].v;
		/* summed per-node costs: an upper bound of the union */
		c->best[i + 1] = c->best[i] + key[i].k1;
		c->mask[i + 1] = (uint32_t) (i + 1);
	}
	c->mask[0] = 0;
	c->exact = false;
	free(key);
	return 0;
}

static int exact(rc_t *r, const int *list, int n, int need)
{
	const pol_loan_reclaim_in_t *in = r->in;
	int *par = NULL, *root = NULL, *cidx = NULL, nc = 0, i, k, j, a;
	comp_t *comp = NULL;
	double *dp = NULL;
	int *ch = NULL;
	int rc = -1, R = need;

	par = calloc((size_t) n + 1, sizeof(int));
	root = calloc((size_t) n + 1, sizeof(int));
	cidx = calloc((size_t) n + 1, sizeof(int));
	comp = calloc((size_t) n + 1, sizeof(*comp));
	if (!par || !root || !cidx || !comp)
		goto out;
	for (i = 0; i < n; i++)
		par[i] = i;
	for (j = 0; j < in->n_jobs; j++) {
		int first = -1;

		for (k = 0; k < in->jobs[j].n_nodes; k++) {
			int p = r->pos[in->jobs[j].nodes[k]];

			if (p < 0 || in->jobs[j].n_nodes < 2)
				continue;
			if (first < 0)
				first = p;
			else
				par[uf_find(par, p)] = uf_find(par, first);
		}
	}
	for (i = 0; i < n; i++)
		root[i] = -1;
	for (i = 0; i < n; i++) {
		int q = uf_find(par, i);

		if (root[q] < 0) {
			root[q] = nc;
			comp[nc].nodes = calloc((size_t) n + 1, sizeof(int));
			if (!comp[nc].nodes)
				goto out;
			nc++;
		}
		cidx[i] = root[q];
		comp[cidx[i]].nodes[comp[cidx[i]].m++] = list[i];
	}
	r->out->exact = true;
	for (k = 0; k < nc; k++) {
		comp_t *c = &comp[k];
		long work = 0;

		c->best = calloc((size_t) c->m + 1, sizeof(double));
		c->mask = calloc((size_t) c->m + 1, sizeof(uint32_t));
		if (!c->best || !c->mask)
			goto out;
		for (i = 0; i < c->m; i++)
			work += r->nj_n[c->nodes[i]];
		if (c->m <= ENUM_MAX_NODES && (work << c->m) <= ENUM_WORK) {
			if (comp_enum(r, c))
				goto out;
		} else {
			if (comp_greedy(r, c))
				goto out;
			r->out->exact = false;
		}
	}
	/* covering DP: dp[k][q] = least cost to clear >= q nodes from the
	 * first k components; ch = the count taken from component k-1 */
	dp = calloc(((size_t) nc + 1) * ((size_t) R + 1), sizeof(double));
	ch = calloc(((size_t) nc + 1) * ((size_t) R + 1), sizeof(int));
	if (!dp || !ch)
		goto out;
	for (a = 1; a <= R; a++)
		dp[a] = INFINITY;
	for (k = 1; k <= nc; k++) {
		const comp_t *c = &comp[k - 1];
		double *prev = dp + (size_t) (k - 1) * (R + 1);
		double *cur = dp + (size_t) k * (R + 1);
		int *cc = ch + (size_t) k * (R + 1);

		for (a = 0; a <= R; a++) {
			int t;

			cur[a] = prev[a];
			cc[a] = 0;
			for (t = 1; t <= c->m; t++) {
				int q = a - t < 0 ? 0 : a - t;
				double v = prev[q] + c->best[t];

				if (v < cur[a]) {
					cur[a] = v;
					cc[a] = t;
				}
			}
		}
	}
	/* walk back: R is reachable (n >= need) */
	a = R;
	for (k = nc; k >= 1; k--) {
		const comp_t *c = &comp[k - 1];
		int t = ch[(size_t) k * (R + 1) + a];

		if (t == 0)
			continue;
		if (c->exact) {
			for (i = 0; i < c->m; i++)
				if (c->mask[t] & (1u << i))
					clear_node(r, c->nodes[i]);
		} else {
			for (i = 0; i < t; i++)
				clear_node(r, c->nodes[i]);
		}
		a = a - t < 0 ? 0 : a - t;
	}
	rc = 0;
out:
	if (comp)
		for (k = 0; k < nc; k++) {
			free(comp[k].nodes);
			free(comp[k].best);
			free(comp[k].mask);
		}
	free(comp);
	free(par);
	free(root);
	free(cidx);
	free(dp);
	free(ch);
	return rc;
}

static int reclaim_once(const pol_loan_reclaim_in_t *in,
			pol_loan_reclaim_out_t *out)
{
	rc_t r;
	int *list = NULL, n, want, rc = -1, i;

	if (check_in(in, out)) {
		errno = EINVAL;
		return -1;
	}
	memset(&r, 0, sizeof(r));
	r.in = in;
	r.out = out;
	if (in->n_loaned)
		memset(out->node_back, 0, (size_t) in->n_loaned);
	for (i = 0; i < in->n_jobs; i++) {
		out->action[i] = POL_LOAN_KEEP;
		out->shrink_by[i] = 0;
	}
	out->returned = out->short_by = out->preempted = out->shrunk = 0;
	out->cost = 0;
	out->exact = true;
	out->bound_factor = 1;
	if (build(&r))
		goto nomem;
	want = in->need;
	want -= take_idle(&r, want);
	if (want > 0 && in->shrink_first)
		shrink(&r, want);
	want = in->need - free_count(&r);
	if (want > 0) {
		list = calloc((size_t) in->n_loaned + 1, sizeof(int));
		if (!list)
			goto nomem;
		n = candidates(&r, list);
		out->bound_factor = degree(&r);
		if (n <= want) {
			for (i = 0; i < n; i++)
				clear_node(&r, list[i]);
		} else if (in->order == POL_LOAN_LEAST_COST &&
			   in->mode != POL_LOAN_GREEDY) {
			if (exact(&r, list, n, want))
				goto nomem;
		} else {
			if (order_nodes(&r, list, n))
				goto nomem;
			for (i = 0; i < want; i++)
				clear_node(&r, list[i]);
			out->exact = false;
		}
		if (in->order != POL_LOAN_LEAST_COST)
			out->exact = false;
	}
	out->returned = free_count(&r);
	out->short_by = in->need - out->returned;
	if (out->short_by < 0)
		out->short_by = 0;
	rc = 0;
	goto out;
nomem:
	errno = ENOMEM;
out:
	free(list);
	free(r.nj_first);
	free(r.nj_job);
	free(r.nj_n);
	free(r.active);
	free(r.cand);
	free(r.tcost);
	free(r.pos);
	return rc;
}

/* the GPU-hours of out's victims by real's costs */
static double real_cost(const pol_loan_reclaim_in_t *real,
			const pol_loan_reclaim_out_t *out)
{
	double c = 0;
	int j;

	for (j = 0; j < real->n_jobs; j++)
		if (out->action[j] == POL_LOAN_PREEMPT)
			c += real->jobs[j].cost;
	return c;
}

/* the choice of run with the repeat victims kept (they cannot be preempted
 * in it): taken over *out when it returns as many nodes at no more than
 * POL_LOAN_REPEAT_TOL above out's cost (costs of real; run != real: the
 * fewest-first costs, and then with no more victims) */
static int avoid_repeats(const pol_loan_reclaim_in_t *run,
			 const pol_loan_reclaim_in_t *real,
			 pol_loan_reclaim_out_t *out)
{
	pol_loan_reclaim_in_t alt_in = *run;
	pol_loan_reclaim_out_t alt;
	pol_loan_job_t *jobs = NULL;
	int n = run->n_jobs, j, rc = -1;

	memset(&alt, 0, sizeof(alt));
	jobs = calloc((size_t) n + 1, sizeof(*jobs));
	alt.node_back = calloc((size_t) run->n_loaned + 1, 1);
	alt.action = calloc((size_t) n + 1, sizeof(int));
	alt.shrink_by = calloc((size_t) n + 1, sizeof(int));
	if (!jobs || !alt.node_back || !alt.action || !alt.shrink_by) {
		errno = ENOMEM;
		goto out;
	}
	for (j = 0; j < n; j++) {
		jobs[j] = run->jobs[j];
		if (jobs[j].repeat)
			jobs[j].requeue = false;
	}
	alt_in.jobs = jobs;
	if (reclaim_once(&alt_in, &alt))
		goto out;
	alt.cost = real_cost(real, &alt);
	if (alt.returned >= out->returned &&
	    (run == real || alt.preempted <= out->preempted) &&
	    alt.cost <= out->cost * (1 + POL_LOAN_REPEAT_TOL) + 1e-12) {
		if (run->n_loaned)
			memcpy(out->node_back, alt.node_back,
			       (size_t) run->n_loaned);
		if (n) {
			memcpy(out->action, alt.action,
			       sizeof(int) * (size_t) n);
			memcpy(out->shrink_by, alt.shrink_by,
			       sizeof(int) * (size_t) n);
		}
		out->returned = alt.returned;
		out->short_by = alt.short_by;
		out->preempted = alt.preempted;
		out->shrunk = alt.shrunk;
		out->cost = alt.cost;
		out->exact = false; /* optimal only within the tolerance */
		out->bound_factor = alt.bound_factor;
	}
	rc = 0;
out:
	free(jobs);
	free(alt.node_back);
	free(alt.action);
	free(alt.shrink_by);
	return rc;
}

/* least-cost on run (in's jobs, or their fewest-first costs), then the
 * repeat rule */
static int least_cost(const pol_loan_reclaim_in_t *run,
		      const pol_loan_reclaim_in_t *real,
		      pol_loan_reclaim_out_t *out)
{
	int j;

	if (reclaim_once(run, out))
		return -1;
	out->cost = real_cost(real, out);
	for (j = 0; j < run->n_jobs; j++)
		if (run->jobs[j].repeat && out->action[j] == POL_LOAN_PREEMPT)
			return avoid_repeats(run, real, out);
	return 0;
}

/* fewest_first: each job costs K + its cost, K above every job's cost
 * summed, so one victim fewer always outweighs any GPU-hours saved */
static int fewest_first(const pol_loan_reclaim_in_t *in,
			pol_loan_reclaim_out_t *out)
{
	pol_loan_reclaim_in_t run = *in;
	pol_loan_job_t *jobs;
	double K = 1;
	int j, rc;

	if (check_in(in, out)) {
		errno = EINVAL;
		return -1;
	}
	jobs = calloc((size_t) in->n_jobs + 1, sizeof(*jobs));
	if (!jobs) {
		errno = ENOMEM;
		return -1;
	}
	for (j = 0; j < in->n_jobs; j++)
		K += in->jobs[j].cost;
	for (j = 0; j < in->n_jobs; j++) {
		jobs[j] = in->jobs[j];
		jobs[j].cost = K + in->jobs[j].cost;
	}
	run.jobs = jobs;
	rc = least_cost(&run, in, out);
	free(jobs);
	return rc;
}

int pol_loan_reclaim(const pol_loan_reclaim_in_t *in,
		     pol_loan_reclaim_out_t *out)
{
	if (in && in->order == POL_LOAN_LEAST_COST) {
		if (in->fewest_first)
			return fewest_first(in, out);
		return least_cost(in, in, out);
	}
	return reclaim_once(in, out);
}
