/*
 * pol_loan_alloc.c - extra nodes to elastic jobs: the multiple-choice
 * knapsack (exact DP, greedy on convex hulls), best-fit-decreasing
 * mapping of workers to servers, and the default scaling curve
 * (pol_loan.h, doc/loaning.md).
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pol_loan.h"

static int check_groups(const pol_mckp_group_t *g, int n, int cap,
			const int *choice)
{
	int i, k;

	if (n < 0 || cap < 0 || (n && (!g || !choice)))
		return -1;
	for (i = 0; i < n; i++) {
		if (g[i].n < 0 || (g[i].n && (!g[i].weight || !g[i].value)))
			return -1;
		for (k = 0; k < g[i].n; k++)
			if (g[i].weight[k] < 1 || !isfinite(g[i].value[k]))
				return -1;
	}
	return 0;
}

int pol_mckp_dp(const pol_mckp_group_t *g, int n, int cap, int *choice,
		double *value)
{
	double *dp;
	int *ch, i, k, c;
	size_t w = (size_t) cap + 1;

	if (check_groups(g, n, cap, choice)) {
		errno = EINVAL;
		return -1;
	}
	/* dp[i][c] = best value of the first i groups within weight c */
	dp = calloc(((size_t) n + 1) * w, sizeof(double));
	ch = calloc(((size_t) n + 1) * w, sizeof(int));
	if (!dp || !ch) {
		free(dp);
		free(ch);
		errno = ENOMEM;
		return -1;
	}
	for (i = 1; i <= n; i++) {
		const pol_mckp_group_t *gr = &g[i - 1];
		double *prev = dp + (size_t) (i - 1) * w, *cur = dp + i * w;
		int *cc = ch + i * w;

		for (c = 0; c <= cap; c++) {
			cur[c] = prev[c];
			cc[c] = -1;
			for (k = 0; k < gr->n; k++) {
				double v;

				if (gr->weight[k] > c)
					continue;
				v = prev[c - gr->weight[k]] + gr->value[k];
				if (v > cur[c]) {
					cur[c] = v;
					cc[c] = k;
				}
			}
		}
	}
	if (value)
		*value = dp[(size_t) n * w + (size_t) cap];
	c = cap;
	for (i = n; i >= 1; i--) {
		k = ch[(size_t) i * w + (size_t) c];
		choice[i - 1] = k;
		if (k >= 0)
			c -= g[i - 1].weight[k];
	}
	free(dp);
	free(ch);
	return 0;
}

/* one increment of a group's upper hull: from option `from` (-1: none)
 * to option `to` */
typedef struct inc {
	int group, to, step; /* step: its position in the group's hull */
	int dw;
	double dv;
} inc_t;

static int inc_cmp(const void *a, const void *b)
{
	const inc_t *x = a, *y = b;
	/* decreasing dv/dw; compare dv_x dw_y with dv_y dw_x (dw > 0) */
	double l = x->dv * y->dw, r = y->dv * x->dw;

	if (l != r)
		return l > r ? -1 : 1;
	if (x->group != y->group)
		return x->group - y->group;
	return x->step - y->step;
}

/* The upper concave hull of {(0,0)} and the group's options, by weight;
 * appends its increments (positive value only) to inc. */
static int hull(const pol_mckp_group_t *gr, int gi, inc_t *inc, int *ninc,
		int *stack)
{
	int *ord = calloc((size_t) gr->n + 1, sizeof(int));
	int n = 0, i, k, top = 0;

	if (!ord)
		return -1;
	/* options by weight, the best value per weight, dominated dropped */
	for (k = 0; k < gr->n; k++) {
		if (gr->value[k] <= 0)
			continue;
		for (i = n;
		     i > 0 && (gr->weight[ord[i - 1]] > gr->weight[k] ||
			       (gr->weight[ord[i - 1]] == gr->weight[k] &&
				gr->value[ord[i - 1]] < gr->value[k]));
		     i--)
			ord[i] = ord[i - 1];
		ord[i] = k;
		n++;
	}
	/* stack of hull points; -1 stands for the origin */
	stack[top++] = -1;
	for (i = 0; i < n; i++) {
		int k2 = ord[i];
		double w2 = gr->weight[k2], v2 = gr->value[k2];

		/* dominated: no more value than the last point */
		{
			int t = stack[top - 1];
			double vt = t < 0 ? 0 : gr->value[t];
			double wt = t < 0 ? 0 : gr->weight[t];

			if (v2 <= vt)
				continue;
			if (w2 == wt) /* same weight, more value: replace */
				top--;
		}
		while (top >= 2) {
			int a = stack[top - 2], b = stack[top - 1];
			double wa = a < 0 ? 0 : gr->weight[a];
			double va = a < 0 ? 0 : gr->value[a];
			double wb = gr->weight[b], vb = gr->value[b];

			/* b under the chord a..k2: drop it */
			if ((vb - va) * (w2 - wa) <= (v2 - va) * (wb - wa))
				top--;
			else
				break;
		}
		stack[top++] = k2;
	}
	for (i = 1; i < top; i++) {
		int a = stack[i - 1], b = stack[i];
		inc_t *e = &inc[(*ninc)++];

		e->group = gi;
		e->to = b;
		e->step = i;
		e->dw = gr->weight[b] - (a < 0 ? 0 : gr->weight[a]);
		e->dv = gr->value[b] - (a < 0 ? 0 : gr->value[a]);
	}
	free(ord);
	return 0;
}

int pol_mckp_greedy(const pol_mckp_group_t *g, int n, int cap, int *choice,
		    double *value, double *bound)
{
	inc_t *inc = NULL;
	int *stack = NULL, *next = NULL, tot = 0, ninc = 0, i, left = cap;
	double val = 0, bnd = 0;
	bool stopped = false;

	if (check_groups(g, n, cap, choice)) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < n; i++)
		tot += g[i].n;
	inc = calloc((size_t) tot + 1, sizeof(*inc));
	stack = calloc((size_t) tot + 2, sizeof(int));
	next = calloc((size_t) n + 1, sizeof(int));
	if (!inc || !stack || !next) {
		free(inc);
		free(stack);
		free(next);
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < n; i++) {
		choice[i] = -1;
		next[i] = 1;
		if (hull(&g[i], i, inc, &ninc, stack)) {
			free(inc);
			free(stack);
			free(next);
			errno = ENOMEM;
			return -1;
		}
	}
	/* by density; a group's hull increments have strictly decreasing
	 * density, so each group's steps stay in order */
	qsort(inc, (size_t) ninc, sizeof(*inc), inc_cmp);
	for (i = 0; i < ninc; i++) {
		inc_t *e = &inc[i];

		if (next[e->group] != e->step)
			continue; /* an earlier step of its group was skipped */
		if (e->dw > left) {
			if (!stopped)
				bnd = e->dv;
			stopped = true;
			next[e->group] = -1;
			continue;
		}
		left -= e->dw;
		val += e->dv;
		choice[e->group] = e->to;
		next[e->group]++;
	}
	if (value)
		*value = val;
	if (bound)
		*bound = bnd;
	free(inc);
	free(stack);
	free(next);
	return 0;
}

int pol_loan_bfd(const int *size, int n, int *free_cap, int m, int *bin)
{
	int *ord, i, k, placed = 0;

	if (n < 0 || m < 0 || (n && (!size || !bin)) || (m && !free_cap)) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < n; i++)
		if (size[i] <= 0) {
			errno = EINVAL;
			return -1;
		}
	ord = calloc((size_t) n + 1, sizeof(int));
	if (!ord) {
		errno = ENOMEM;
		return -1;
	}
	/* insertion sort by decreasing size, stable */
	for (i = 0; i < n; i++) {
		for (k = i; k > 0 && size[ord[k - 1]] < size[i]; k--)
			ord[k] = ord[k - 1];
		ord[k] = i;
	}
	for (i = 0; i < n; i++) {
		int it = ord[i], best = -1;

		for (k = 0; k < m; k++)
			if (free_cap[k] >= size[it] &&
			    (best < 0 || free_cap[k] < free_cap[best]))
				best = k;
		bin[it] = best;
		if (best >= 0) {
			free_cap[best] -= size[it];
			placed++;
		}
	}
	free(ord);
	return placed;
}

double pol_loan_speedup(int n, double serial)
{
	if (n <= 0)
		return 0;
	if (serial < 0)
		serial = 0;
	return (double) n / (1.0 + serial * (double) (n - 1));
}

double pol_loan_left_attained(double attained_s, double limit_s)
{
	double left = attained_s > 0 ? attained_s : 0;

	if (limit_s > 0 && limit_s - attained_s < left)
		left = limit_s - attained_s;
	return left > 0 ? left : 0;
}

double pol_loan_grow_gain(const pol_loan_grow_job_t *j, int x, double serial)
{
	double now = pol_loan_speedup(j->cur * j->gpn, serial);
	double then = pol_loan_speedup((j->cur + x) * j->gpn, serial);

	return j->left_s - (j->resize_s + j->left_s * now / then);
}

int pol_loan_grow(const pol_loan_grow_job_t *jobs, int n, int cap,
		  double serial, int *extra, double *gain, bool *exact,
		  double *bound)
{
	pol_mckp_group_t *g = NULL;
	int *grp = NULL, *choice = NULL, *w = NULL, i, ng = 0, tot = 0, rc;
	double *val = NULL, v = 0, bnd = 0;
	bool dp;

	if (n < 0 || cap < 0 || (n && (!jobs || !extra))) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < n; i++) {
		const pol_loan_grow_job_t *j = &jobs[i];

		if (j->cur < 1 || j->max < j->cur || j->gpn < 1 ||
		    !(j->left_s >= 0) || !isfinite(j->left_s) ||
		    !isfinite(j->resize_s)) {
			errno = EINVAL;
			return -1;
		}
		extra[i] = 0;
		tot += j->max - j->cur < cap ? j->max - j->cur : cap;
	}
	if (gain)
		*gain = 0;
	if (exact)
		*exact = true;
	if (bound)
		*bound = 0;
	if (n == 0 || cap == 0 || tot == 0)
		return 0;
	g = calloc((size_t) n, sizeof(*g));
	grp = calloc((size_t) n, sizeof(int));
	choice = calloc((size_t) n, sizeof(int));
	w = calloc((size_t) tot, sizeof(int));
	val = calloc((size_t) tot, sizeof(double));
	rc = -1;
	if (!g || !grp || !choice || !w || !val) {
		errno = ENOMEM;
		goto out;
	}
	tot = 0;
	for (i = 0; i < n; i++) {
		const pol_loan_grow_job_t *j = &jobs[i];
		int x, top = j->max - j->cur < cap ? j->max - j->cur : cap;

		g[ng].weight = &w[tot];
		g[ng].value = &val[tot];
		for (x = 1; x <= top; x++) {
			double gv = pol_loan_grow_gain(j, x, serial);

			if (gv <= 0)
				continue;
			w[tot] = x;
			val[tot] = gv;
			tot++;
			g[ng].n++;
		}
		if (g[ng].n)
			grp[ng++] = i;
	}
	rc = 0;
	if (ng == 0)
		goto out;
	dp = (double) ng * cap * ((double) tot / ng + 1) <= 4e6;
	if (dp)
		rc = pol_mckp_dp(g, ng, cap, choice, &v);
	else
		rc = pol_mckp_greedy(g, ng, cap, choice, &v, &bnd);
	if (rc)
		goto out;
	for (i = 0; i < ng; i++)
		if (choice[i] >= 0)
			extra[grp[i]] = g[i].weight[choice[i]];
	if (gain)
		*gain = v;
	if (exact)
		*exact = dp;
	if (bound)
		*bound = bnd;
out:
	free(g);
	free(grp);
	free(choice);
	free(w);
	free(val);
	return rc;
}
