/*
 * pol_loan_sim_steps.c - the steps of the loaning scenario's poll
 * (pol_loan_sim.c runs the loop): elastic jobs grow onto free whole nodes
 * by the knapsack and give grown nodes back when a job waits; the
 * inference pool lends nodes idle against recent demand and takes them
 * back through pol_loan_reclaim() when demand rises.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pol_loan_sim_int.h"

/* ---- elastic ---- */

/* give back grown nodes (beyond the request), newest nodes first */
void shrink_grown(sim_t *s)
{
	int i;

	for (i = 0; i < s->nrun; i++) {
		int ji = s->run[i];
		sj_t *j = &s->jobs[ji];

		if (!j->elastic || j->n <= j->k)
			continue;
		resize(s, ji, j->nodes, j->k);
		s->r->shrinks++;
		i = -1; /* run[] was reordered */
	}
}

int grow(sim_t *s)
{
	int *grp = NULL, ng = 0, i, cap, *free_nodes = NULL, *choice = NULL;
	pol_mckp_group_t *g = NULL;
	int *w = NULL;
	double *val = NULL;
	int tot = 0, rc = -1, used = 0, runs[4096], nr;

	free_nodes = calloc((size_t) s->N + 1, sizeof(int));
	if (!free_nodes)
		return -1;
	cap = whole_nodes(s, s->v != POL_LOAN_V_NONE, free_nodes, s->N);
	if (cap == 0) {
		free(free_nodes);
		return 0;
	}
	grp = calloc((size_t) s->nrun + 1, sizeof(int));
	g = calloc((size_t) s->nrun + 1, sizeof(*g));
	choice = calloc((size_t) s->nrun + 1, sizeof(int));
	if (!grp || !g || !choice)
		goto out;
	for (i = 0; i < s->nrun; i++) {
		sj_t *j = &s->jobs[s->run[i]];

		if (j->elastic && j->n < j->max_n &&
		    j->overhead + j->work / j->rate >=
			    (double) s->p->min_grow_s)
			tot += j->max_n - j->n;
	}
	w = calloc((size_t) tot + 1, sizeof(int));
	val = calloc((size_t) tot + 1, sizeof(double));
	if (!w || !val)
		goto out;
	tot = 0;
	for (i = 0; i < s->nrun; i++) {
		sj_t *j = &s->jobs[s->run[i]];
		int x;
		double left;

		if (!j->elastic || j->n >= j->max_n)
			continue;
		left = j->overhead + j->work / j->rate;
		if (left < (double) s->p->min_grow_s)
			continue;
		g[ng].weight = &w[tot];
		g[ng].value = &val[tot];
		for (x = 1; x <= j->max_n - j->n; x++) {
			/* JCT reduction: time left now minus time left on
			 * n + x nodes after the restart */
			double after = (double) s->p->restart_s +
				       j->work / rate_of(s, j, j->n + x);

			w[tot] = x;
			val[tot] = left - after;
			tot++;
			g[ng].n++;
		}
		grp[ng++] = s->run[i];
	}
	if (ng == 0) {
		rc = 0;
		goto out;
	}
	if ((double) ng * cap * (tot / ng + 1) <= 4e6)
		rc = pol_mckp_dp(g, ng, cap, choice, NULL);
	else
		rc = pol_mckp_greedy(g, ng, cap, choice, NULL, NULL);
	if (rc)
		goto out;
	nr = 0;
	for (i = 0; i < ng && nr < 4096; i++)
		if (choice[i] >= 0 && g[i].value[choice[i]] > 0)
			runs[nr++] = i;
	for (i = 0; i < nr; i++) {
		int gi = runs[i], ji = grp[gi], x = g[gi].weight[choice[gi]];
		sj_t *j = &s->jobs[ji];
		int nodes[64], k, n = 0;

		for (k = 0; k < j->n && n < 64; k++)
			nodes[n++] = j->nodes[k];
		for (k = 0; k < x && used < cap && n < 64; k++)
			nodes[n++] = free_nodes[used++];
		resize(s, ji, nodes, n);
		s->r->grows++;
	}
	rc = 0;
out:
	free(free_nodes);
	free(grp);
	free(g);
	free(choice);
	free(w);
	free(val);
	return rc;
}

/* ---- loans ---- */

static pol_loan_order_t order_of(pol_loan_variant_t v)
{
	switch (v) {
	case POL_LOAN_V_SLURM:
		return POL_LOAN_SLURM;
	case POL_LOAN_V_RANDOM:
		return POL_LOAN_RANDOM;
	case POL_LOAN_V_RECENT:
		return POL_LOAN_RECENT;
	default:
		return POL_LOAN_LEAST_COST;
	}
}

static int reclaim(sim_t *s, int need)
{
	int *lidx = NULL, *lnode = NULL, L = 0, i, k, nb = 0, rc = -1;
	int *jn = NULL, *jidx = NULL, *act = NULL, *sby = NULL, tot = 0;
	pol_loan_job_t *b = NULL;
	unsigned char *back = NULL, *had = NULL;
	pol_loan_reclaim_in_t in;
	pol_loan_reclaim_out_t out;

	lidx = calloc((size_t) s->N + 1, sizeof(int));
	lnode = calloc((size_t) s->N + 1, sizeof(int));
	b = calloc((size_t) s->nrun + 1, sizeof(*b));
	jidx = calloc((size_t) s->nrun + 1, sizeof(int));
	act = calloc((size_t) s->nrun + 1, sizeof(int));
	sby = calloc((size_t) s->nrun + 1, sizeof(int));
	back = calloc((size_t) s->N + 1, 1);
	had = calloc((size_t) s->N + 1, 1);
	for (i = 0; i < s->nrun; i++)
		tot += s->jobs[s->run[i]].n;
	jn = calloc((size_t) tot + 1, sizeof(int));
	if (!lidx || !lnode || !b || !jidx || !act || !sby || !back || !had ||
	    !jn)
		goto out;
	for (i = 0; i < s->N; i++) {
		lidx[i] = -1;
		if (s->nstate[i] == N_LOANED) {
			lidx[i] = L;
			lnode[L++] = i;
		}
	}
	tot = 0;
	for (i = 0; i < s->nrun; i++) {
		sj_t *j = &s->jobs[s->run[i]];
		pol_loan_job_t *x = &b[nb];
		int on = 0;

		x->nodes = &jn[tot];
		for (k = 0; k < j->n; k++)
			if (lidx[j->nodes[k]] >= 0)
				jn[tot + on++] = lidx[j->nodes[k]];
		if (!on)
			continue;
		x->n_nodes = on;
		tot += on;
		x->id = j->in->id;
		x->start = (int64_t) j->run_start;
		x->cost = pol_loan_preempt_cost(
			gpus_held(j), (int64_t) (s->now - j->run_start),
			s->p->ckpt_s, s->p->restart_s);
		x->requeue = j->in->requeue;
		if (j->elastic && s->v == POL_LOAN_V_ELASTIC) {
			x->shrinkable = j->n - j->min_n;
			if (x->shrinkable > on)
				x->shrinkable = on;
		}
		jidx[nb++] = s->run[i];
	}
	memset(&in, 0, sizeof(in));
	in.n_loaned = L;
	in.need = need < L ? need : L;
	in.jobs = b;
	in.n_jobs = nb;
	in.order = order_of(s->v);
	in.mode = POL_LOAN_AUTO;
	in.shrink_first = s->v == POL_LOAN_V_ELASTIC;
	in.seed = s->p->seed ^ (uint64_t) s->now;
	memset(&out, 0, sizeof(out));
	out.node_back = back;
	out.action = act;
	out.shrink_by = sby;
	if (pol_loan_reclaim(&in, &out))
		goto out;
	/* nodes with jobs wait for the victims' grace; idle ones go now */
	for (k = 0; k < L; k++)
		had[k] = s->freeg[lnode[k]] != s->gpn;
	for (k = 0; k < nb; k++) {
		int ji = jidx[k];
		sj_t *j = &s->jobs[ji];

		if (act[k] == POL_LOAN_PREEMPT) {
			preempt(s, ji);
		} else if (act[k] == POL_LOAN_SHRINK) {
			int keep[64], n = 0, q;

			for (q = 0; q < j->n && n < 64; q++)
				if (lidx[j->nodes[q]] < 0 ||
				    !back[lidx[j->nodes[q]]])
					keep[n++] = j->nodes[q];
			resize(s, ji, keep, n);
			s->r->shrinks++;
		}
	}
	for (k = 0; k < L; k++) {
		int node = lnode[k];

		if (!back[k])
			continue;
		s->nstate[node] = N_RETURNING;
		s->back_at[node] = s->now +
				   (had[k] ? (double) s->p->grace_s : 0);
	}
	s->r->reclaims++;
	rc = 0;
out:
	free(lidx);
	free(lnode);
	free(b);
	free(jidx);
	free(act);
	free(sby);
	free(back);
	free(had);
	free(jn);
	return rc;
}

int adjust_loans(sim_t *s)
{
	int held = count_state(s, N_INFER) + count_state(s, N_RETURNING);
	int target = (int) ceil(s->demand - EPS) + s->p->headroom;
	int I = s->N - s->T, i, lend, keep;
	double peak = s->demand;

	if (target > I)
		target = I;
	if (held < target)
		return reclaim(s, target - held);
	/* lend only what the demand of the last lend_hold_s left idle, so
	 * noise does not lend a node one minute and take it back the next */
	for (i = 0; i < s->nhist; i++)
		if (s->hist[i] > peak)
			peak = s->hist[i];
	keep = (int) ceil(peak - EPS) + s->p->headroom;
	if (keep > I)
		keep = I;
	lend = held - keep;
	for (i = s->N - 1; i >= s->T && lend > 0; i--)
		if (s->nstate[i] == N_INFER) {
			s->nstate[i] = N_LOANED;
			s->freeg[i] = s->gpn;
			lend--;
			s->dirty = true;
		}
	return 0;
}
