/*
 * report.c - agora-sim outputs: the readable table, the summary JSON, the
 * per-job CSV and the gnuplot charts (doc/sim.md "outputs").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <json-c/json.h>

#include "sim_cli.h"
#include "pol_apps.h"

extern char **environ;

static double ratio(double v, double b)
{
	return (b != 0 && isfinite(b) && isfinite(v)) ? v / b : NAN;
}

void report_table(FILE *f, const cli_ctx_t *ctx, cli_run_t *runs, int n,
		  int base)
{
	char lim[64];
	int i;

	sim_limits_format(&ctx->params.limits, lim, sizeof(lim));
	fprintf(f,
		"\ntrace %s (filter %s, %d jobs), cluster %s (%d GPUs), seed %llu, placement %s\n"
		"limits %s, kill at limit %s, checkpoint %s, restart overhead %llds, apps by %s\n",
		ctx->trace_path, ctx->filter_name, ctx->trace.n,
		ctx->cluster_spec, pol_cluster_gpus(ctx->cluster),
		(unsigned long long) ctx->params.seed, ctx->placement, lim,
		cli_kill_name(ctx->params.limit_kill),
		cli_ckpt_name(ctx->params.ckpt_s, lim, sizeof(lim)),
		(long long) ctx->params.restart_s, ctx->app_mode);
	fprintf(f,
		"times in hours; util_arr = utilization over the arrival window, util_net = the same, useful work only,\n"
		"util_mk = over the makespan; rho_app = Themis' app rho (max, Jain, p99, max over apps of >= 10 GPU-hours),\n"
		"rho_ten = the max with apps = tenants; str = per-job stretch by tenant;\n"
		"lostGPUh = GPU-hours lost (restarts, work since the last checkpoint, jobs killed at their limit);\n"
		"killed = runs killed at their limit; loc = mean locality level (0 nvlink .. 5 cluster), loc_mg = of >1 GPU\n");
	fprintf(f,
		"%-14s %6s %8s %8s %8s %8s %8s %9s %8s %8s %7s %8s %6s %8s %8s %8s %8s %8s %6s %7s %8s %6s %6s %6s %6s %7s\n",
		"policy", "jobs", "meanJCT", "p50JCT", "p99JCT", "meanQ",
		"p99Q", "makespan", "util_arr", "util_net", "util_mk",
		"rho_app", "jain_a", "p99_app", "rho10gh", "rho_ten", "max_str",
		"mean_str", "jain_s", "preempt", "lostGPUh", "killed", "frag",
		"loc", "loc_mg", "wall_s");
	for (i = 0; i < n; i++) {
		const sim_summary_t *s = &runs[i].sum;

		fprintf(f,
			"%-14s %6d %8.2f %8.2f %8.2f %8.2f %8.2f %9.1f %8.3f %8.3f %7.3f %8.3f %6.3f %8.3f %8.3f %8.3f %8.2f %8.2f %6.3f %7lld %8.0f %6lld %6.3f %6.3f %6.3f %7.2f\n",
			runs[i].label, s->jobs, s->mean_jct_s / 3600,
			s->p50_jct_s / 3600, s->p99_jct_s / 3600,
			s->mean_queue_s / 3600, s->p99_queue_s / 3600,
			s->makespan_s / 3600, s->util_arrival, s->util_net,
			s->util_makespan, s->max_rho_app, s->jain_rho_app,
			s->p99_rho_app, s->max_rho_app_10gpuh,
			s->max_rho_tenant, s->max_rho_stretch,
			s->mean_rho_stretch, s->jain_rho_stretch,
			(long long) s->preemptions, s->gpu_hours_lost,
			(long long) s->killed_at_limit, s->fragmentation,
			s->mean_locality_level, s->mean_locality_level_multi,
			runs[i].wall_s);
	}
	if (base < 0)
		return;
	fprintf(f,
		"\nratios against %s (lower is better except util and jain)\n",
		runs[base].label);
	fprintf(f,
		"%-14s %8s %8s %8s %8s %8s %9s %8s %8s %8s %8s %8s %6s %6s\n",
		"policy", "meanJCT", "p50JCT", "p99JCT", "meanQ", "p99Q",
		"makespan", "util_arr", "util_net", "rho_app", "max_str",
		"mean_str", "jain_s", "frag");
	for (i = 0; i < n; i++) {
		const sim_summary_t *s = &runs[i].sum, *b = &runs[base].sum;

		fprintf(f,
			"%-14s %8.3f %8.3f %8.3f %8.3f %8.3f %9.3f %8.3f %8.3f %8.3f %8.3f %8.3f %6.3f %6.3f\n",
			runs[i].label, ratio(s->mean_jct_s, b->mean_jct_s),
			ratio(s->p50_jct_s, b->p50_jct_s),
			ratio(s->p99_jct_s, b->p99_jct_s),
			ratio(s->mean_queue_s, b->mean_queue_s),
			ratio(s->p99_queue_s, b->p99_queue_s),
			ratio(s->makespan_s, b->makespan_s),
			ratio(s->util_arrival, b->util_arrival),
			ratio(s->util_net, b->util_net),
			ratio(s->max_rho_app, b->max_rho_app),
			ratio(s->max_rho_stretch, b->max_rho_stretch),
			ratio(s->mean_rho_stretch, b->mean_rho_stretch),
			ratio(s->jain_rho_stretch, b->jain_rho_stretch),
			ratio(s->fragmentation, b->fragmentation));
	}
}

static json_object *num(double v)
{
	return isfinite(v) ? json_object_new_double(v) : json_object_new_null();
}

/* the model settings of a run, into o */
static void json_model(json_object *o, const cli_ctx_t *ctx)
{
	char buf[64];

	sim_limits_format(&ctx->params.limits, buf, sizeof(buf));
	json_object_object_add(o, "limits", json_object_new_string(buf));
	json_object_object_add(
		o, "limit_kill",
		json_object_new_string(cli_kill_name(ctx->params.limit_kill)));
	json_object_object_add(o, "ckpt_s",
			       json_object_new_int64(ctx->params.ckpt_s));
	json_object_object_add(o, "restart_overhead_s",
			       json_object_new_int64(ctx->params.restart_s));
	json_object_object_add(o, "launch_overhead_s",
			       json_object_new_int64(ctx->params.launch_s));
	json_object_object_add(o, "apps",
			       json_object_new_string(ctx->app_mode));
}

/* the app definition of the metrics *_rho_app (doc/sim.md) */
static json_object *app_json(const cli_ctx_t *ctx)
{
	json_object *a = json_object_new_object();
	pol_apps_spec_t spec;
	const char *m = ctx->app_mode ? ctx->app_mode : "tenant";

	json_object_object_add(a, "mode", json_object_new_string(m));
	if (!pol_apps_parse(m, &spec, NULL) &&
	    (spec.def == POL_APPS_BURST || spec.def == POL_APPS_ARRAY)) {
		json_object_object_add(
			a, "def",
			json_object_new_string(pol_apps_def_name(spec.def)));
		json_object_object_add(a, "gap_s",
				       json_object_new_int64(spec.gap_s));
	} else {
		json_object_object_add(a, "def", json_object_new_string(m));
	}
	json_object_object_add(a, "n_apps", json_object_new_int(ctx->n_apps));
	json_object_object_add(a, "big_app_gpu_hours",
			       json_object_new_double(SIM_APP_BIG_GPUH));
	return a;
}

static json_object *bounds_json(const cli_ctx_t *ctx)
{
	json_object *b = json_object_new_object();
	const sim_bounds_t *x = &ctx->bounds;

	json_object_object_add(b, "mean_jct_lb_s", num(x->mean_jct_lb_s));
	json_object_object_add(b, "mean_jct_srpt_s", num(x->mean_srpt_s));
	json_object_object_add(b, "mean_duration_s", num(x->mean_dur_s));
	json_object_object_add(b, "max_rho_app_lb", num(x->max_rho_app_lb));
	json_object_object_add(b, "jobs", json_object_new_int(x->jobs));
	json_object_object_add(b, "n_apps", json_object_new_int(x->n_apps));
	json_object_object_add(b, "gap_base",
			       json_object_new_string(ctx->bounds_base));
	return b;
}

int cli_bounds(cli_ctx_t *ctx, const cli_run_t *runs, int n, int base)
{
	int i;

	if (sim_bounds(ctx->trace.jobs, ctx->trace.n,
		       pol_cluster_gpus(ctx->cluster), ctx->app, ctx->n_apps,
		       &ctx->bounds)) {
		fprintf(stderr, "agora-sim: bounds: %s\n", strerror(errno));
		return -1;
	}
	ctx->have_bounds = true;
	for (i = 0; i < n; i++)
		if (!strcmp(runs[i].policy, "backfill-fs"))
			base = i;
	ctx->base_jct_s = ctx->base_rho = NAN;
	snprintf(ctx->bounds_base, sizeof(ctx->bounds_base), "%s",
		 base >= 0 && base < n ? runs[base].label : "");
	if (base >= 0 && base < n) {
		ctx->base_jct_s = runs[base].sum.mean_jct_s;
		ctx->base_rho = runs[base].sum.max_rho_app;
	}
	return 0;
}

void report_bounds(FILE *f, const cli_ctx_t *ctx, const cli_run_t *runs, int n)
{
	const sim_bounds_t *b = &ctx->bounds;
	int i;

	fprintf(f,
		"\nlower bounds (%d jobs, %d apps by %s, %d GPUs; fluid relaxation, doc/sim.md \"Bounds\"):\n"
		"  mean JCT >= %.2f h (fluid SRPT %.2f h, mean duration %.2f h)\n"
		"  max rho_app >= %.3f\n",
		b->jobs, b->n_apps, ctx->app_mode,
		pol_cluster_gpus(ctx->cluster), b->mean_jct_lb_s / 3600,
		b->mean_srpt_s / 3600, b->mean_dur_s / 3600, b->max_rho_app_lb);
	if (!n || !ctx->bounds_base[0])
		return;
	fprintf(f,
		"gap closed = (%s - policy) / (%s - bound): 0 = %s, 1 = the bound\n"
		"%-14s %8s %9s %8s %9s\n",
		ctx->bounds_base, ctx->bounds_base, ctx->bounds_base, "policy",
		"meanJCT", "gap_jct", "rho_app", "gap_rho");
	for (i = 0; i < n; i++) {
		const sim_summary_t *s = &runs[i].sum;

		fprintf(f, "%-14s %8.2f %9.3f %8.3f %9.3f\n", runs[i].label,
			s->mean_jct_s / 3600,
			sim_gap_closed(ctx->base_jct_s, s->mean_jct_s,
				       b->mean_jct_lb_s),
			s->max_rho_app,
			sim_gap_closed(ctx->base_rho, s->max_rho_app,
				       b->max_rho_app_lb));
	}
}

int report_bounds_json(const char *path, const cli_ctx_t *ctx)
{
	json_object *o = bounds_json(ctx);
	int rc;

	json_object_object_add(o, "trace",
			       json_object_new_string(ctx->trace_path));
	json_object_object_add(o, "cluster",
			       json_object_new_string(ctx->cluster_spec));
	json_object_object_add(o, "app_definition", app_json(ctx));
	rc = json_object_to_file_ext(path, o, JSON_C_TO_STRING_PRETTY);
	json_object_put(o);
	if (rc) {
		fprintf(stderr, "agora-sim: %s: cannot write JSON: %s\n", path,
			strerror(errno));
		return -1;
	}
	return 0;
}

/* one run's summary keys into o (doc/sim.md "Outputs") */
void report_json_summary(json_object *o, const cli_ctx_t *ctx,
			 const cli_run_t *run)
{
	const sim_summary_t *s = &run->sum;
	json_object *tr;
	int t;

	json_object_object_add(o, "jobs", json_object_new_int(s->jobs));
	json_object_object_add(o, "skipped",
			       json_object_new_int(run->res.skipped));
	json_object_object_add(o, "mean_jct_s", num(s->mean_jct_s));
	json_object_object_add(o, "p50_jct_s", num(s->p50_jct_s));
	json_object_object_add(o, "p99_jct_s", num(s->p99_jct_s));
	json_object_object_add(o, "mean_queue_s", num(s->mean_queue_s));
	json_object_object_add(o, "p99_queue_s", num(s->p99_queue_s));
	json_object_object_add(o, "makespan_s", num(s->makespan_s));
	/* "utilization" is the arrival-window one (doc/sim.md) */
	json_object_object_add(o, "utilization", num(s->util_arrival));
	json_object_object_add(o, "utilization_arrival", num(s->util_arrival));
	json_object_object_add(o, "utilization_makespan",
			       num(s->util_makespan));
	json_object_object_add(o, "util_net", num(s->util_net));
	/* the older name of util_net */
	json_object_object_add(o, "utilization_arrival_net", num(s->util_net));
	json_object_object_add(o, "gpu_hours_lost", num(s->gpu_hours_lost));
	json_object_object_add(o, "rework_gpu_s", num(run->res.rework_gpu_s));
	json_object_object_add(o, "killed_at_limit",
			       json_object_new_int64(s->killed_at_limit));
	json_object_object_add(o, "failed", json_object_new_int(s->failed));
	json_object_object_add(o, "max_rho_app", num(s->max_rho_app));
	json_object_object_add(o, "p99_rho_app", num(s->p99_rho_app));
	json_object_object_add(o, "max_rho_app_10gpuh",
			       num(s->max_rho_app_10gpuh));
	json_object_object_add(o, "max_rho_tenant", num(s->max_rho_tenant));
	json_object_object_add(o, "app_definition", app_json(ctx));
	/* did the policy itself schedule on those apps (agora), or on
	 * tenants (--auction-apps account, or a policy without apps)? */
	json_object_object_add(
		o, "policy_apps",
		json_object_new_string(run->app_bids ? "app" : "tenant"));
	if (ctx->have_bounds) {
		json_object_object_add(o, "bounds", bounds_json(ctx));
		json_object_object_add(
			o, "gap_closed_jct",
			num(sim_gap_closed(ctx->base_jct_s, s->mean_jct_s,
					   ctx->bounds.mean_jct_lb_s)));
		json_object_object_add(
			o, "gap_closed_rho",
			num(sim_gap_closed(ctx->base_rho, s->max_rho_app,
					   ctx->bounds.max_rho_app_lb)));
	}
	json_object_object_add(o, "mean_rho_app", num(s->mean_rho_app));
	json_object_object_add(o, "jain_rho_app", num(s->jain_rho_app));
	json_object_object_add(o, "max_rho_stretch", num(s->max_rho_stretch));
	json_object_object_add(o, "mean_rho_stretch", num(s->mean_rho_stretch));
	json_object_object_add(o, "jain_rho_stretch", num(s->jain_rho_stretch));
	/* older names of the stretch metrics (contrib/replay reads them) */
	json_object_object_add(o, "max_rho", num(s->max_rho_stretch));
	json_object_object_add(o, "mean_rho", num(s->mean_rho_stretch));
	json_object_object_add(o, "jain_rho", num(s->jain_rho_stretch));
	json_object_object_add(o, "preemptions",
			       json_object_new_int64(s->preemptions));
	json_object_object_add(o, "gpu_hours_lost_per_preemption",
			       num(s->gpuh_lost_per_preemption));
	json_object_object_add(o, "preemptions_per_job",
			       num(s->preemptions_per_job));
	json_object_object_add(o, "max_preemptions_job",
			       json_object_new_int(s->max_preemptions));
	json_object_object_add(o, "fragmentation", num(s->fragmentation));
	json_object_object_add(o, "mean_locality_level",
			       num(s->mean_locality_level));
	json_object_object_add(o, "mean_locality_level_multi",
			       num(s->mean_locality_level_multi));
	json_object_object_add(o, "decisions",
			       json_object_new_int64(run->res.decisions));
	json_object_object_add(o, "wall_s", num(run->wall_s));
	json_object_object_add(o, "cpu_s", num(run->cpu_s));
	tr = json_object_new_object();
	for (t = 0; t < s->n_tenants && t < ctx->trace.n_tenants; t++)
		json_object_object_add(tr, ctx->trace.tenants[t],
				       num(s->tenant_stretch[t]));
	json_object_object_add(o, "tenant_rho_stretch", tr);
	json_object_object_add(o, "tenant_rho", json_object_get(tr));
	tr = json_object_new_object();
	for (t = 0; t < s->n_apps && t < ctx->n_apps; t++)
		json_object_object_add(tr, ctx->app_names[t],
				       num(s->app_rho[t]));
	json_object_object_add(o, "app_rho", tr);
}

int report_json(const char *path, const cli_ctx_t *ctx, cli_run_t *runs, int n)
{
	json_object *root = json_object_new_object();
	int i, rc;

	for (i = 0; i < n; i++) {
		json_object *o = json_object_new_object();

		json_object_object_add(o, "policy",
				       json_object_new_string(runs[i].policy));
		json_object_object_add(o, "params",
				       json_object_new_string(runs[i].params));
		json_object_object_add(o, "placement",
				       json_object_new_string(ctx->placement));
		json_object_object_add(o, "trace",
				       json_object_new_string(ctx->trace_path));
		json_object_object_add(
			o, "filter", json_object_new_string(ctx->filter_name));
		json_object_object_add(
			o, "cluster",
			json_object_new_string(ctx->cluster_spec));
		json_object_object_add(
			o, "gpus",
			json_object_new_int(pol_cluster_gpus(ctx->cluster)));
		json_object_object_add(
			o, "seed",
			json_object_new_int64((int64_t) ctx->params.seed));
		json_model(o, ctx);
		report_json_summary(o, ctx, &runs[i]);
		json_object_object_add(root, runs[i].label, o);
	}
	rc = json_object_to_file_ext(path, root, JSON_C_TO_STRING_PRETTY);
	json_object_put(root);
	if (rc) {
		fprintf(stderr, "agora-sim: %s: cannot write JSON: %s\n", path,
			strerror(errno));
		return -1;
	}
	return 0;
}

int report_jobs_csv(const char *path, const cli_ctx_t *ctx,
		    const cli_run_t *run)
{
	FILE *f = fopen(path, "w");
	int i;

	if (!f) {
		fprintf(stderr, "agora-sim: %s: %s\n", path, strerror(errno));
		return -1;
	}
	fprintf(f,
		"id,tenant,submit,duration,gpus,time_limit,first_start,finish,jct,queue,first_wait,run_s,rho,preemptions,level,killed,lost_gpu_s\n");
	for (i = 0; i < ctx->trace.n; i++) {
		const sim_job_t *j = &ctx->trace.jobs[i];
		const sim_job_out_t *o = &run->res.jobs[i];

		fprintf(f,
			"%lld,%s,%lld,%lld,%d,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%.4f,%d,%d,%d,%.0f\n",
			(long long) j->id, ctx->trace.tenants[j->tenant],
			(long long) j->submit, (long long) j->duration, j->gpus,
			(long long) o->limit, (long long) o->first_start,
			(long long) o->finish,
			(long long) (o->finish >= 0 ? o->finish - j->submit
						    : -1),
			(long long) (o->finish >= 0
					     ? o->finish - j->submit - o->run_s
					     : -1),
			(long long) (o->first_start >= 0
					     ? o->first_start - j->submit
					     : -1),
			(long long) o->run_s, sim_job_stretch(j, o),
			o->preemptions, o->level, o->killed, o->lost_gpu_s);
	}
	if (fclose(f)) {
		fprintf(stderr, "agora-sim: %s: write error\n", path);
		return -1;
	}
	return 0;
}

static int cmp_d(const void *x, const void *y)
{
	double a = *(const double *) x, b = *(const double *) y;

	return (a > b) - (a < b);
}

int report_gnuplot(const char *script)
{
	char *argv[] = { (char *) "gnuplot", (char *) script, NULL };
	pid_t pid;
	int st;

	if (posix_spawnp(&pid, "gnuplot", NULL, NULL, argv, environ)) {
		fprintf(stderr,
			"agora-sim: cannot run gnuplot (install gnuplot-nox)\n");
		return -1;
	}
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st)) {
		fprintf(stderr, "agora-sim: gnuplot %s failed\n", script);
		return -1;
	}
	return 0;
}

int report_plots(const char *dir, const cli_ctx_t *ctx, cli_run_t *runs, int n)
{
	char path[4096];
	FILE *f;
	int i, k, t;

	if (mkdir(dir, 0777) && errno != EEXIST) {
		fprintf(stderr, "agora-sim: %s: %s\n", dir, strerror(errno));
		return -1;
	}
	/* data: JCT CDF per policy (at most ~2000 points each) */
	for (i = 0; i < n; i++) {
		double *v = malloc((size_t) (ctx->trace.n + 1) * sizeof(*v));
		int m = 0, step;

		if (!v)
			return -1;
		for (k = 0; k < ctx->trace.n; k++)
			if (runs[i].res.jobs[k].finish >= 0)
				v[m++] = (double) (runs[i].res.jobs[k].finish -
						   ctx->trace.jobs[k].submit) /
					 3600.0;
		qsort(v, (size_t) m, sizeof(*v), cmp_d);
		snprintf(path, sizeof(path), "%s/jct-%s.dat", dir,
			 runs[i].label);
		f = fopen(path, "w");
		if (!f) {
			free(v);
			fprintf(stderr, "agora-sim: %s: %s\n", path,
				strerror(errno));
			return -1;
		}
		step = m > 2000 ? m / 2000 : 1;
		for (k = 0; k < m; k += step)
			fprintf(f, "%.6f %.6f\n", v[k] < 1e-4 ? 1e-4 : v[k],
				(double) (k + 1) / m);
		if (m)
			fprintf(f, "%.6f 1\n", v[m - 1]);
		fclose(f);
		free(v);
		snprintf(path, sizeof(path), "%s/util-%s.dat", dir,
			 runs[i].label);
		f = fopen(path, "w");
		if (!f)
			return -1;
		for (k = 0; k < runs[i].res.n_bins; k++)
			fprintf(f, "%.4f %.5f\n",
				(double) k * (double) runs[i].res.bin_s /
					86400.0,
				runs[i].res.util[k]);
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/rho.dat", dir);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "tenant");
	for (i = 0; i < n; i++)
		fprintf(f, " %s", runs[i].label);
	fputc('\n', f);
	for (t = 0; t < ctx->trace.n_tenants; t++) {
		fprintf(f, "%s", ctx->trace.tenants[t]);
		for (i = 0; i < n; i++)
			fprintf(f, " %.4f",
				isfinite(runs[i].sum.tenant_stretch[t])
					? runs[i].sum.tenant_stretch[t]
					: 0.0);
		fputc('\n', f);
	}
	fclose(f);
	/* the script: one PNG per chart */
	snprintf(path, sizeof(path), "%s/plots.gp", dir);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "# written by agora-sim; rerun with: gnuplot %s\n", path);
	fprintf(f, "set terminal pngcairo size 1000,600 noenhanced\n");
	fprintf(f, "cd '%s'\nset key left top\nset grid\n", dir);
	fprintf(f,
		"set output 'jct_cdf.png'\nset title 'JCT CDF (%s, %s)'\n"
		"set logscale x\nset xlabel 'job completion time (hours, log)'\n"
		"set ylabel 'fraction of jobs'\nset yrange [0:1]\nplot ",
		ctx->trace_path, ctx->cluster_spec);
	for (i = 0; i < n; i++)
		fprintf(f,
			"%s'jct-%s.dat' using 1:2 with lines lw 2 title '%s'",
			i ? ", " : "", runs[i].label, runs[i].label);
	fprintf(f, "\nunset logscale x\nset autoscale y\n");
	fprintf(f,
		"set output 'utilization.png'\nset title 'GPU utilization over time (%llu-s bins)'\n"
		"set xlabel 'days since first submit'\nset ylabel 'busy GPUs / GPUs'\n"
		"set yrange [0:1.05]\nset key right top\nplot ",
		(unsigned long long) ctx->params.bin_s);
	for (i = 0; i < n; i++)
		fprintf(f, "%s'util-%s.dat' using 1:2 with lines title '%s'",
			i ? ", " : "", runs[i].label, runs[i].label);
	fprintf(f, "\nset autoscale y\n");
	fprintf(f,
		"set output 'rho_tenant.png'\nset title 'per-job stretch, mean per tenant (log)'\n"
		"set style data histogram\nset style histogram cluster gap 1\n"
		"set style fill solid 0.8 border -1\nset logscale y\nset yrange [1:*]\n"
		"set xlabel 'tenant'\nset ylabel 'stretch = JCT / duration'\nset xtics rotate by -45\n"
		"set key left top\nplot ");
	for (i = 0; i < n; i++)
		fprintf(f, "%s'rho.dat' using %d:xtic(1) title columnheader",
			i ? ", " : "", i + 2);
	fputc('\n', f);
	fclose(f);
	return report_gnuplot(path);
}
