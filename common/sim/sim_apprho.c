/*
 * sim_apprho.c - Themis' finish-time fairness per app (sim.h "app rho"):
 * rho = T_sh / T_id, T_id = the app's finish time alone on 1/N_avg of the
 * cluster, N_avg = the time average of the number of apps with work
 * (pending or running) over the app's lifetime in the shared run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

typedef struct ev {
	int64_t t;
	int d;
} ev_t;

typedef struct actv {
	int64_t *t; /* step times */
	double *p;  /* integral of N from t[0] to t[k] */
	int *nv;    /* N on [t[k], t[k+1]) */
	int m;
} actv_t;

typedef struct arkey {
	const sim_job_t *jobs;
	const int *app;
} arkey_t;

static int app_of(const arkey_t *k, int i)
{
	return k->app ? k->app[i] : k->jobs[i].tenant;
}

static int cmp_idx(const void *x, const void *y, void *arg)
{
	const arkey_t *k = arg;
	int a = *(const int *) x, b = *(const int *) y;
	int aa = app_of(k, a), ab = app_of(k, b);

	if (aa != ab)
		return aa < ab ? -1 : 1;
	if (k->jobs[a].submit != k->jobs[b].submit)
		return k->jobs[a].submit < k->jobs[b].submit ? -1 : 1;
	return (a > b) - (a < b);
}

static int cmp_ev(const void *x, const void *y)
{
	const ev_t *a = x, *b = y;

	return (a->t > b->t) - (a->t < b->t);
}

/* integral of N over [t[0], x] */
static double integral(const actv_t *v, int64_t x)
{
	int lo = 0, hi = v->m;

	if (!v->m || x <= v->t[0])
		return 0;
	while (hi - lo > 1) {
		int mid = (lo + hi) / 2;

		if (v->t[mid] <= x)
			lo = mid;
		else
			hi = mid;
	}
	return v->p[lo] + (double) v->nv[lo] * (double) (x - v->t[lo]);
}

/* N(t) from the apps' merged activity intervals; idx sorted by app */
static int build_activity(const sim_result_t *res, const arkey_t *k,
			  const int *idx, int m, actv_t *v)
{
	ev_t *ev = malloc((size_t) (2 * m + 1) * sizeof(*ev));
	int i, ne = 0, cur = 0;

	if (!ev)
		return -1;
	for (i = 0; i < m;) {
		int a = app_of(k, idx[i]);
		int64_t lo = k->jobs[idx[i]].submit, hi = res->jobs[idx[i]].end;

		for (i++; i < m && app_of(k, idx[i]) == a; i++) {
			const sim_job_t *j = &k->jobs[idx[i]];

			if (j->submit > hi) {
				ev[ne++] = (ev_t){ lo, 1 };
				ev[ne++] = (ev_t){ hi, -1 };
				lo = j->submit;
				hi = res->jobs[idx[i]].end;
			} else if (res->jobs[idx[i]].end > hi) {
				hi = res->jobs[idx[i]].end;
			}
		}
		ev[ne++] = (ev_t){ lo, 1 };
		ev[ne++] = (ev_t){ hi, -1 };
	}
	qsort(ev, (size_t) ne, sizeof(*ev), cmp_ev);
	v->t = malloc((size_t) (ne + 1) * sizeof(*v->t));
	v->p = malloc((size_t) (ne + 1) * sizeof(*v->p));
	v->nv = malloc((size_t) (ne + 1) * sizeof(*v->nv));
	if (!v->t || !v->p || !v->nv) {
		free(ev);
		return -1;
	}
	v->m = 0;
	for (i = 0; i < ne; i++) {
		cur += ev[i].d;
		if (i + 1 < ne && ev[i + 1].t == ev[i].t)
			continue;
		v->t[v->m] = ev[i].t;
		v->nv[v->m] = cur;
		v->p[v->m] = v->m ? v->p[v->m - 1] +
					     (double) v->nv[v->m - 1] *
						     (double) (ev[i].t -
							       v->t[v->m - 1])
				  : 0;
		v->m++;
	}
	free(ev);
	return 0;
}

/* rho of the app whose ran jobs are idx[0..m) (sorted by submit) */
static double one_app(const sim_result_t *res, const sim_job_t *jobs,
		      const int *idx, int m, const actv_t *v, double *navg)
{
	int64_t s = INT64_MAX, f = -1;
	double n_avg, cap, w = 0, t_id = 0;
	int i;

	for (i = 0; i < m; i++) {
		const sim_job_out_t *o = &res->jobs[idx[i]];

		if (o->finish < 0)
			continue;
		if (jobs[idx[i]].submit < s)
			s = jobs[idx[i]].submit;
		if (o->finish > f)
			f = o->finish;
	}
	if (f < 0 || res->total_gpus < 1)
		return NAN;
	n_avg = f > s ? (integral(v, f) - integral(v, s)) / (double) (f - s)
		      : 1;
	if (n_avg < 1)
		n_avg = 1;
	if (navg)
		*navg = n_avg;
	cap = (double) res->total_gpus / n_avg;
	for (i = m - 1; i >= 0; i--) {
		const sim_job_t *j = &jobs[idx[i]];
		int g = j->nodes > 0 ? j->nodes * j->gpn : j->gpus;
		double x;

		if (res->jobs[idx[i]].finish < 0)
			continue;
		w += (double) g * (double) j->duration;
		x = (double) (j->submit - s + j->duration);
		if (x > t_id)
			t_id = x;
		/* the backlog bound at the first job of a submit time */
		if (i == 0 || jobs[idx[i - 1]].submit != j->submit) {
			x = (double) (j->submit - s) + w / cap;
			if (x > t_id)
				t_id = x;
		}
	}
	if (t_id < 1)
		t_id = 1;
	return (double) (f - s) / t_id;
}

int sim_app_rho(const sim_result_t *res, const sim_job_t *jobs, int n,
		const int *app, int n_apps, double *rho, double *navg)
{
	arkey_t k = { jobs, app };
	actv_t v = { 0 };
	int *idx = malloc((size_t) (n ? n : 1) * sizeof(*idx));
	int i, m = 0, rc = -1;

	if (!idx)
		goto out;
	for (i = 0; i < n_apps; i++) {
		rho[i] = NAN;
		if (navg)
			navg[i] = NAN;
	}
	for (i = 0; i < n; i++) {
		int a = app_of(&k, i);

		if (a >= 0 && a < n_apps && res->jobs[i].end >= 0 &&
		    res->jobs[i].end >= jobs[i].submit)
			idx[m++] = i;
	}
	qsort_r(idx, (size_t) m, sizeof(*idx), cmp_idx, &k);
	if (build_activity(res, &k, idx, m, &v))
		goto out;
	for (i = 0; i < m;) {
		int a = app_of(&k, idx[i]), e = i;

		while (e < m && app_of(&k, idx[e]) == a)
			e++;
		rho[a] = one_app(res, jobs, idx + i, e - i, &v,
				 navg ? &navg[a] : NULL);
		i = e;
	}
	rc = 0;
out:
	free(idx);
	free(v.t);
	free(v.p);
	free(v.nv);
	if (rc)
		errno = ENOMEM;
	return rc;
}
