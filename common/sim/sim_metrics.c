/*
 * sim_metrics.c - the summary of a simulation: JCT and queueing
 * percentiles, utilization, fragmentation and finish-time fairness.  The
 * definitions (rho above all) live here and only here; sim.h states them.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

static int cmp_double(const void *x, const void *y)
{
	double a = *(const double *) x, b = *(const double *) y;

	return (a > b) - (a < b);
}

double sim_percentile(double *v, int n, double p)
{
	int k;

	if (n <= 0)
		return NAN;
	qsort(v, (size_t) n, sizeof(*v), cmp_double);
	k = (int) ceil(p * n) - 1;
	if (k < 0)
		k = 0;
	if (k >= n)
		k = n - 1;
	return v[k];
}

double sim_job_stretch(const sim_job_t *j, const sim_job_out_t *o)
{
	double ideal = j->duration > 0 ? (double) j->duration : 1.0;

	if (o->finish < 0)
		return NAN;
	return (double) (o->finish - j->submit) / ideal;
}

int sim_summarize(const sim_result_t *res, const sim_job_t *jobs, int n,
		  int n_tenants, sim_summary_t *s)
{
	return sim_summarize_apps(res, jobs, n, n_tenants, NULL, 0, s);
}

/* GPU-hours each app asks for (requested GPUs x duration, all its jobs) */
static void app_gpu_hours(const sim_job_t *jobs, int n, const int *app,
			  int n_apps, double *gpuh)
{
	int i;

	for (i = 0; i < n; i++) {
		const sim_job_t *j = &jobs[i];
		int a = app ? app[i] : j->tenant;
		int g = j->nodes > 0 ? j->nodes * j->gpn : j->gpus;

		if (a >= 0 && a < n_apps)
			gpuh[a] += (double) g * (double) j->duration / 3600.0;
	}
}

/* max, mean, Jain, p99 over apps, and the max over apps of at least
 * SIM_APP_BIG_GPUH GPU-hours; v: scratch of n_apps doubles */
static void over_apps(sim_summary_t *s, double *v)
{
	double sx = 0, sxx = 0;
	int a, na = 0;

	s->max_rho_app = s->max_rho_app_10gpuh = NAN;
	for (a = 0; a < s->n_apps; a++) {
		double r = s->app_rho[a];

		if (isnan(r))
			continue;
		if (!na || r > s->max_rho_app)
			s->max_rho_app = r;
		if (s->app_gpuh[a] >= SIM_APP_BIG_GPUH &&
		    (isnan(s->max_rho_app_10gpuh) || r > s->max_rho_app_10gpuh))
			s->max_rho_app_10gpuh = r;
		sx += r;
		sxx += r * r;
		v[na++] = r;
	}
	s->mean_rho_app = na ? sx / na : NAN;
	s->jain_rho_app = na && sxx > 0 ? sx * sx / (na * sxx) : NAN;
	s->p99_rho_app = na ? sim_percentile(v, na, 0.99) : NAN;
}

/* the max rho over tenants (apps = tenants) when the apps are others */
static int tenant_rho(const sim_result_t *res, const sim_job_t *jobs, int n,
		      int n_tenants, sim_summary_t *s)
{
	double *r = malloc((size_t) n_tenants * sizeof(*r));
	int t;

	if (!r || sim_app_rho(res, jobs, n, NULL, n_tenants, r, NULL)) {
		free(r);
		return -1;
	}
	s->max_rho_tenant = NAN;
	for (t = 0; t < n_tenants; t++)
		if (!isnan(r[t]) &&
		    (isnan(s->max_rho_tenant) || r[t] > s->max_rho_tenant))
			s->max_rho_tenant = r[t];
	free(r);
	return 0;
}

int sim_summarize_apps(const sim_result_t *res, const sim_job_t *jobs, int n,
		       int n_tenants, const int *app, int n_apps,
		       sim_summary_t *s)
{
	double *jct = NULL, *q = NULL, *rsum = NULL, sum_j = 0, sum_q = 0;
	int i, m = 0, t, nt = 0;
	double sx = 0, sxx = 0, win, lvl = 0, lvl_multi = 0;
	int n_multi = 0;

	memset(s, 0, sizeof(*s));
	if (n_tenants < 1)
		n_tenants = 1;
	jct = malloc((size_t) (n ? n : 1) * sizeof(*jct));
	q = malloc((size_t) (n ? n : 1) * sizeof(*q));
	if (!app)
		n_apps = n_tenants;
	rsum = calloc((size_t) n_tenants, sizeof(*rsum));
	s->tenant_stretch = calloc((size_t) n_tenants,
				   sizeof(*s->tenant_stretch));
	s->tenant_jobs = calloc((size_t) n_tenants, sizeof(*s->tenant_jobs));
	s->app_rho = calloc((size_t) (n_apps > 0 ? n_apps : 1),
			    sizeof(*s->app_rho));
	s->app_gpuh = calloc((size_t) (n_apps > 0 ? n_apps : 1),
			     sizeof(*s->app_gpuh));
	if (!jct || !q || !rsum || !s->tenant_stretch || !s->tenant_jobs ||
	    !s->app_rho || !s->app_gpuh ||
	    sim_app_rho(res, jobs, n, app, n_apps, s->app_rho, NULL))
		goto nomem;
	s->n_tenants = n_tenants;
	s->n_apps = n_apps;
	app_gpu_hours(jobs, n, app, n_apps, s->app_gpuh);
	over_apps(s, jct); /* jct: scratch, filled below */
	s->max_rho_tenant = s->max_rho_app;
	if (app && tenant_rho(res, jobs, n, n_tenants, s))
		goto nomem;
	for (i = 0; i < n; i++) {
		const sim_job_out_t *o = &res->jobs[i];

		if (o->finish < 0)
			continue;
		jct[m] = (double) (o->finish - jobs[i].submit);
		q[m] = jct[m] - (double) o->run_s;
		sum_j += jct[m];
		sum_q += q[m];
		m++;
		lvl += o->level;
		if (jobs[i].gpus > 1) {
			lvl_multi += o->level;
			n_multi++;
		}
		t = jobs[i].tenant;
		if (t >= 0 && t < n_tenants) {
			rsum[t] += sim_job_stretch(&jobs[i], o);
			s->tenant_jobs[t]++;
		}
	}
	s->jobs = m;
	s->mean_jct_s = m ? sum_j / m : NAN;
	s->mean_queue_s = m ? sum_q / m : NAN;
	s->p50_jct_s = sim_percentile(jct, m, 0.50);
	s->p99_jct_s = sim_percentile(jct, m, 0.99);
	s->p99_queue_s = sim_percentile(q, m, 0.99);
	s->makespan_s = (double) (res->t_end - res->t0);
	win = s->makespan_s * res->total_gpus;
	s->util_makespan = win > 0 ? res->busy_gpu_s / win : NAN;
	win = (double) (res->t_last_submit - res->t0) * res->total_gpus;
	s->util_arrival = win > 0 ? res->busy_gpu_s_arrival / win : NAN;
	s->util_net = win > 0 ? (res->busy_gpu_s_arrival -
				 res->lost_gpu_s_arrival) /
					win
			      : NAN;
	s->gpu_hours_lost = res->lost_gpu_s / 3600.0;
	s->killed_at_limit = res->kills;
	s->failed = res->failed;
	win = s->makespan_s * res->total_gpus;
	s->fragmentation = win > 0 ? res->frag_gpu_s / win : 0;
	s->preemptions = res->preemptions;
	s->gpuh_lost_per_preemption =
		res->preemptions ? (res->preempt_lost_gpu_s + res->rework_gpu_s) /
					   3600.0 / (double) res->preemptions
				 : 0;
	s->preemptions_per_job =
		res->n - res->skipped > 0
			? (double) res->preemptions / (res->n - res->skipped)
			: 0;
	s->max_preemptions = 0;
	for (i = 0; i < res->n; i++)
		if (res->jobs[i].preemptions > s->max_preemptions)
			s->max_preemptions = res->jobs[i].preemptions;
	s->mean_locality_level = m ? lvl / m : NAN;
	s->mean_locality_level_multi = n_multi ? lvl_multi / n_multi : NAN;
	s->max_rho_stretch = NAN;
	for (t = 0; t < n_tenants; t++) {
		double r;

		if (!s->tenant_jobs[t]) {
			s->tenant_stretch[t] = NAN;
			continue;
		}
		r = rsum[t] / s->tenant_jobs[t];
		s->tenant_stretch[t] = r;
		if (!nt || r > s->max_rho_stretch)
			s->max_rho_stretch = r;
		sx += r;
		sxx += r * r;
		nt++;
	}
	s->mean_rho_stretch = nt ? sx / nt : NAN;
	s->jain_rho_stretch = nt && sxx > 0 ? sx * sx / (nt * sxx) : NAN;
	free(jct);
	free(q);
	free(rsum);
	return 0;
nomem:
	free(jct);
	free(q);
	free(rsum);
	sim_summary_free(s);
	errno = ENOMEM;
	return -1;
}

void sim_summary_free(sim_summary_t *s)
{
	if (!s)
		return;
	free(s->tenant_stretch);
	free(s->tenant_jobs);
	free(s->app_rho);
	free(s->app_gpuh);
	memset(s, 0, sizeof(*s));
}
