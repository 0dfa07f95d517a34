/*
 * sim_bounds.c - lower bounds on mean JCT and max rho_app (sim_bounds.h):
 * fluid SRPT, and a bisection on rho with an EDF feasibility test.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_bounds.h"

typedef struct bjob {
	double r, d, w; /* submit, duration, GPU-seconds */
	int app;
} bjob_t;

typedef struct hent {
	double key;
	int i;
	double left;
} bh_t;

typedef struct heap {
	bh_t *v;
	int n;
} heap_t;

static void h_push(heap_t *h, bh_t e)
{
	int i = h->n++;

	while (i > 0 && h->v[(i - 1) / 2].key > e.key) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = e;
}

static void h_pop(heap_t *h)
{
	bh_t e = h->v[--h->n];
	int i = 0;

	for (;;) {
		int l = 2 * i + 1, m = l;

		if (l >= h->n)
			break;
		if (l + 1 < h->n && h->v[l + 1].key < h->v[l].key)
			m = l + 1;
		if (h->v[m].key >= e.key)
			break;
		h->v[i] = h->v[m];
		i = m;
	}
	if (h->n)
		h->v[i] = e;
}

static int cmp_r(const void *x, const void *y)
{
	const bjob_t *a = x, *b = y;

	if (a->r != b->r)
		return a->r < b->r ? -1 : 1;
	return (a->app > b->app) - (a->app < b->app);
}

/*
 * Serve the jobs (sorted by r) on one fluid resource of rate cap, the
 * least key first (key[i]: SRPT = remaining work, EDF = deadline).  Writes
 * each job's completion time into fin.  srpt: the key is the remaining
 * work (updated as served).
 */
static void fluid(const bjob_t *j, int n, double cap, const double *key,
		  bool srpt, heap_t *h, double *fin)
{
	double t = 0;
	int next = 0;

	h->n = 0;
	while (next < n || h->n) {
		double until;

		if (!h->n) {
			t = j[next].r > t ? j[next].r : t;
		}
		while (next < n && j[next].r <= t) {
			bh_t e = { srpt ? j[next].w : key[next], next,
				   j[next].w };

			h_push(h, e);
			next++;
		}
		if (!h->n)
			continue;
		until = next < n ? j[next].r : INFINITY;
		{
			bh_t *top = &h->v[0];
			double done = t + top->left / cap;

			if (done <= until) {
				fin[top->i] = done;
				t = done;
				h_pop(h);
			} else {
				top->left -= (until - t) * cap;
				if (srpt)
					top->key = top->left; /* still least */
				t = until;
			}
		}
	}
}

typedef struct app_t {
	double s;      /* first submit */
	double alone;  /* max (r_j - s + d_j) */
	int first, m;  /* its backlog terms: term[first .. first+m) */
	double d, nup; /* deadline, N bound */
} bapp_t;

typedef struct term {
	double dr, w; /* r_k - s, work submitted at or after r_k */
} term_t;

static double t_id(const bapp_t *a, const term_t *tm, double cap, double nv)
{
	double x = a->alone;
	int k;

	for (k = 0; k < a->m; k++) {
		double y = tm[a->first + k].dr + tm[a->first + k].w * nv / cap;

		if (y > x)
			x = y;
	}
	return x < 1 ? 1 : x;
}

typedef struct rctx {
	const bjob_t *j;
	int n, na;
	double cap;
	bapp_t *a;
	term_t *tm;
	/* scratch */
	double *ev_t, *ev_v, *sp, *key, *fin;
	int *ev_d;
	int lg;
	heap_t h;
} rctx_t;

typedef struct nev {
	double t;
	int d;
} nev_t;

static int cmp_nev(const void *x, const void *y)
{
	const nev_t *a = x, *b = y;

	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return b->d - a->d; /* +1 before -1: an app ending at t is alive */
}

/* max over [lo, hi] of the step function (ev_t[k], ev_v[k]) by a sparse
 * table sp[level * m + k] */
/* the step covering x: the last starting at or before x (0 if none) */
static int step_at(const double *t, int m, double x)
{
	int l = 0, r = m;

	while (l < r) {
		int mid = (l + r) / 2;

		if (t[mid] <= x)
			l = mid + 1;
		else
			r = mid;
	}
	return l > 0 ? l - 1 : 0;
}

static double range_max(const rctx_t *c, int m, double lo, double hi)
{
	int a = step_at(c->ev_t, m, lo), b = step_at(c->ev_t, m, hi), k;
	double x;

	if (b < a)
		b = a;
	k = 0;
	while ((2 << k) <= b - a + 1)
		k++;
	x = c->sp[k * m + a];
	if (c->sp[k * m + b - (1 << k) + 1] > x)
		x = c->sp[k * m + b - (1 << k) + 1];
	return x;
}

/* tighten every app's N bound from the deadlines */
static void tighten(rctx_t *c, nev_t *ev)
{
	int i, m = 2 * c->na, cur = 0, k, lv;

	for (i = 0; i < c->na; i++) {
		ev[2 * i].t = c->a[i].s;
		ev[2 * i].d = 1;
		ev[2 * i + 1].t = c->a[i].d;
		ev[2 * i + 1].d = -1;
	}
	qsort(ev, (size_t) m, sizeof(*ev), cmp_nev);
	/* value after each event; an end at t counts until t, so the -1 of
	 * an end applies just after: step k holds on [t_k, t_{k+1}) but the
	 * ends are sorted after the starts of the same t and the max over a
	 * closed range also reads the value before the end */
	for (i = 0; i < m; i++) {
		c->ev_t[i] = ev[i].t;
		cur += ev[i].d;
		c->ev_v[i] = cur + (ev[i].d < 0 ? 1 : 0);
	}
	for (i = 0; i < m; i++)
		c->sp[i] = c->ev_v[i];
	for (lv = 1; (1 << lv) <= m; lv++)
		for (k = 0; k + (1 << lv) <= m; k++) {
			double x = c->sp[(lv - 1) * m + k],
			       y = c->sp[(lv - 1) * m + k + (1 << (lv - 1))];

			c->sp[lv * m + k] = x > y ? x : y;
		}
	for (i = 0; i < c->na; i++) {
		double v = range_max(c, m, c->a[i].s, c->a[i].d);

		if (v < 1)
			v = 1;
		if (v < c->a[i].nup)
			c->a[i].nup = v;
	}
}

static bool feasible(rctx_t *c, double rho, nev_t *ev)
{
	int i, it;

	for (i = 0; i < c->na; i++)
		c->a[i].nup = c->na > 0 ? c->na : 1;
	for (it = 0; it < 4; it++) {
		for (i = 0; i < c->na; i++)
			c->a[i].d = c->a[i].s + rho * t_id(&c->a[i], c->tm,
							   c->cap, c->a[i].nup);
		if (it < 3)
			tighten(c, ev);
	}
	for (i = 0; i < c->n; i++) {
		const bjob_t *j = &c->j[i];
		double dl = c->a[j->app].d;

		if (j->r + j->d > dl * (1 + 1e-12) + 1e-9)
			return false;
		c->key[i] = dl;
	}
	fluid(c->j, c->n, c->cap, c->key, false, &c->h, c->fin);
	for (i = 0; i < c->n; i++)
		if (c->fin[i] > c->key[i] * (1 + 1e-12) + 1e-6)
			return false;
	return true;
}

static int cmp_app_r(const void *x, const void *y)
{
	const bjob_t *a = x, *b = y;

	if (a->app != b->app)
		return a->app < b->app ? -1 : 1;
	return (a->r > b->r) - (a->r < b->r);
}

/* the apps' releases, alone times and backlog terms (j sorted by app, r) */
static void build_apps(rctx_t *c, const bjob_t *j)
{
	int i = 0, nt = 0;

	while (i < c->n) {
		int a = j[i].app, e = i, k;
		bapp_t *ap = &c->a[a];
		double w = 0;

		while (e < c->n && j[e].app == a)
			e++;
		ap->s = j[i].r;
		ap->alone = 0;
		for (k = i; k < e; k++)
			if (j[k].r - ap->s + j[k].d > ap->alone)
				ap->alone = j[k].r - ap->s + j[k].d;
		/* backlog terms at the first job of each submit time, from
		 * the last */
		ap->first = nt;
		for (k = e - 1; k >= i; k--) {
			w += j[k].w;
			if (k == i || j[k - 1].r != j[k].r) {
				c->tm[nt].dr = j[k].r - ap->s;
				c->tm[nt].w = w;
				nt++;
			}
		}
		ap->m = nt - ap->first;
		i = e;
	}
}

double sim_gap_closed(double base, double value, double bound)
{
	if (!(base > bound) || !isfinite(base) || !isfinite(value) ||
	    !isfinite(bound))
		return NAN;
	return (base - value) / (base - bound);
}

int sim_bounds(const sim_job_t *jobs, int n, int total_gpus, const int *app,
	       int n_apps, sim_bounds_t *out)
{
	rctx_t c;
	bjob_t *j = NULL, *ja = NULL;
	nev_t *ev = NULL;
	double sd = 0, ss = 0, lo, hi;
	int i, m = 0, lg = 1, rc = -1, na = 0, prev;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	out->max_rho_app_lb = NAN;
	if (n < 0 || (n && !jobs) || total_gpus < 1 || (app && n_apps < 0)) {
		errno = EINVAL;
		return -1;
	}
	if (!app)
		for (i = 0; i < n; i++)
			if (jobs[i].tenant + 1 > n_apps)
				n_apps = jobs[i].tenant + 1;
	j = malloc((size_t) (n ? n : 1) * sizeof(*j));
	if (!j)
		goto out;
	for (i = 0; i < n; i++) {
		const sim_job_t *x = &jobs[i];
		int g = x->nodes > 0 ? x->nodes * x->gpn : x->gpus;
		int a = app ? app[i] : x->tenant;

		if (g < 1 || g > total_gpus || x->duration < 0 || a < 0 ||
		    a >= n_apps)
			continue;
		j[m].r = (double) x->submit;
		j[m].d = (double) x->duration;
		j[m].w = (double) g * (double) x->duration;
		j[m].app = a;
		m++;
	}
	out->jobs = m;
	c.n = m;
	c.cap = total_gpus;
	c.key = malloc((size_t) (m ? m : 1) * sizeof(*c.key));
	c.fin = malloc((size_t) (m ? m : 1) * sizeof(*c.fin));
	c.h.v = malloc((size_t) (m ? m : 1) * sizeof(*c.h.v));
	if (!c.key || !c.fin || !c.h.v)
		goto out;
	if (m == 0) {
		rc = 0;
		goto out;
	}
	/* mean JCT */
	qsort(j, (size_t) m, sizeof(*j), cmp_r);
	fluid(j, m, c.cap, NULL, true, &c.h, c.fin);
	for (i = 0; i < m; i++) {
		sd += j[i].d;
		ss += c.fin[i] - j[i].r;
	}
	out->mean_dur_s = sd / m;
	out->mean_srpt_s = ss / m;
	out->mean_jct_lb_s = out->mean_dur_s > out->mean_srpt_s
				     ? out->mean_dur_s
				     : out->mean_srpt_s;
	/* max rho_app: renumber the apps that have jobs */
	ja = malloc((size_t) m * sizeof(*ja));
	if (!ja)
		goto out;
	memcpy(ja, j, (size_t) m * sizeof(*ja));
	qsort(ja, (size_t) m, sizeof(*ja), cmp_app_r);
	for (i = 0, prev = -1; i < m; i++) {
		int a = ja[i].app;

		if (i == 0 || a != prev)
			na++;
		prev = a;
		ja[i].app = na - 1;
	}
	c.na = na;
	out->n_apps = na;
	c.a = calloc((size_t) na, sizeof(*c.a));
	c.tm = malloc((size_t) m * sizeof(*c.tm));
	ev = malloc((size_t) (2 * na) * sizeof(*ev));
	c.ev_t = malloc((size_t) (2 * na) * sizeof(*c.ev_t));
	c.ev_v = malloc((size_t) (2 * na) * sizeof(*c.ev_v));
	while ((1 << lg) <= 2 * na)
		lg++;
	c.sp = malloc((size_t) (lg + 1) * (size_t) (2 * na) * sizeof(*c.sp));
	if (!c.a || !c.tm || !ev || !c.ev_t || !c.ev_v || !c.sp)
		goto out;
	build_apps(&c, ja);
	/* the EDF test wants the jobs by submit time, with the new ids */
	qsort(ja, (size_t) m, sizeof(*ja), cmp_r);
	c.j = ja;
	hi = 1;
	while (!feasible(&c, hi, ev) && hi < 1e12)
		hi *= 2;
	lo = hi > 1 ? hi / 2 : 0;
	while (hi - lo > 1e-4 * hi)
		if (feasible(&c, (lo + hi) / 2, ev))
			hi = (lo + hi) / 2;
		else
			lo = (lo + hi) / 2;
	out->max_rho_app_lb = hi;
	rc = 0;
out:
	if (rc && errno != EINVAL)
		errno = ENOMEM;
	free(j);
	free(ja);
	free(ev);
	free(c.key);
	free(c.fin);
	free(c.h.v);
	free(c.a);
	free(c.tm);
	free(c.ev_t);
	free(c.ev_v);
	free(c.sp);
	return rc;
}
