/*
 * fed_report.c - agora-sim federation, the metrics and the report: per bin
 * demand/supply by dataset and by assigned cluster, the hourly optimum and
 * the share of hours within 5% of it, the table, the JSON and the plots.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fed_int.h"

/* ---- metrics ------------------------------------------------------------ */

/* Demand/supply per bin of the arrival window [t0, t_last]: the GPUs of
 * jobs between submit and end (pending or running), by dataset split over
 * the replicas usable at the bin's middle (pol_fed_load_compute), and by
 * the cluster each job was given (cluster may be NULL).  Per cluster into
 * series / assigned (n_bins x n_sites); the length-weighted mean of the
 * worst into *worst, from t_after on into *after. */

static void fed_win(const fed_scen_t *sc, const fed_opts_t *o, fed_win_t *w)
{
	w->t0 = sc->t0;
	w->t_end = sc->t_last > sc->t0 ? sc->t_last : sc->t0 + 1;
	w->bin = o->bin_s;
	w->n_bins = (int) ((w->t_end - w->t0 + w->bin - 1) / w->bin);
}

static double fed_bin_len(const fed_win_t *w, int b)
{
	int64_t s = w->t0 + (int64_t) b * w->bin, e = s + w->bin;

	return (double) ((e < w->t_end ? e : w->t_end) - s);
}

/* job GPU-seconds per bin and dataset (dem) and per bin and cluster
 * (asg), as mean GPUs over each bin */
static void fed_bin_demand(const fed_scen_t *sc, const fed_win_t *w,
			   const int64_t *end, const int *cluster, double *dem,
			   double *asg)
{
	int i, b, D = sc->cat.n_datasets, S = sc->n_sites;

	for (i = 0; i < sc->n; i++) {
		const fed_job_t *j = &sc->jobs[i];
		int64_t s = j->submit,
			e = end[i] < w->t_end ? end[i] : w->t_end;

		for (b = (int) ((s - w->t0) / w->bin); s < e && b < w->n_bins;
		     b++) {
			int64_t bs = w->t0 + (int64_t) b * w->bin,
				be = bs + w->bin;
			double x = j->gpus *
				   (double) ((e < be ? e : be) -
					     (s > bs ? s : bs)) /
				   fed_bin_len(w, b);

			dem[(size_t) b * D + j->dataset] += x;
			if (cluster)
				asg[(size_t) b * S + cluster[i]] += x;
			s = be;
		}
	}
}

static int fed_series(const fed_scen_t *sc, const fed_win_t *w,
		      const int64_t *end, const int *cluster,
		      const int64_t *from, const int64_t *to,
		      const fed_ival_t *hist, int n_hist, int64_t t_after,
		      double *series, double *assigned, double *worst,
		      double *after)
{
	int D = sc->cat.n_datasets, S = sc->n_sites, b, c, d;
	double *dem = calloc((size_t) w->n_bins * D + 1, sizeof(*dem)),
	       supply[FED_MAX_SITES], sum = 0, len = 0, sum_a = 0, len_a = 0;
	pol_fed_catalog_t cat = sc->cat;
	pol_fed_load_t load;

	cat.datasets = calloc((size_t) D + 1, sizeof(*cat.datasets));
	if (!dem || !cat.datasets) {
		free(dem);
		free(cat.datasets);
		return -1;
	}
	memcpy(cat.datasets, sc->cat.datasets,
	       (size_t) D * sizeof(*cat.datasets));
	fed_bin_demand(sc, w, end, cluster, dem, assigned);
	for (c = 0; c < S; c++)
		supply[c] = sc->site[c].gpus;
	for (b = 0; b < w->n_bins; b++) {
		double l = fed_bin_len(w, b), x;
		int64_t mid = w->t0 + (int64_t) b * w->bin + (int64_t) l / 2;

		for (d = 0; d < D; d++) {
			cat.datasets[d].where = 0;
			for (c = 0; c < S; c++) {
				size_t k = (size_t) d * S + c;

				if (from[k] <= mid && mid < to[k])
					cat.datasets[d].where |= (uint64_t) 1
								 << c;
			}
		}
		for (d = 0; d < n_hist; d++)
			if (hist[d].from <= mid && mid < hist[d].to)
				cat.datasets[hist[d].d].where |= (uint64_t) 1
								 << hist[d].c;
		x = pol_fed_load_compute(&cat, dem + (size_t) b * D, supply,
					 &load);
		for (c = 0; c < S; c++) {
			series[(size_t) b * S + c] = load.demand_gpus[c] /
						     supply[c];
			if (assigned)
				assigned[(size_t) b * S + c] /= supply[c];
		}
		sum += x * l;
		len += l;
		if (mid >= t_after) {
			sum_a += x * l;
			len_a += l;
		}
	}
	*worst = len > 0 ? sum / len : 0;
	*after = len_a > 0 ? sum_a / len_a : NAN;
	free(dem);
	free(cat.datasets);
	return 0;
}

/* time-weighted mean over bins of the worst cluster of s (n_bins x S) */
static double fed_worst_mean(const fed_win_t *w, const double *s, int S)
{
	double sum = 0, len = 0;
	int b, c;

	for (b = 0; b < w->n_bins; b++) {
		double x = 0, l = fed_bin_len(w, b);

		for (c = 0; c < S; c++)
			if (s[(size_t) b * S + c] > x)
				x = s[(size_t) b * S + c];
		sum += x * l;
		len += l;
	}
	return len > 0 ? sum / len : 0;
}

/* the hourly optimum and the share of time within 5% of it; the share
 * within 5% of it or unsaturated (the worst cluster's assigned demand at
 * most its supply, so that no job waits for GPUs that levelling would
 * give it) */
static void fed_optimum(const fed_scen_t *sc, const fed_win_t *w, fed_run_t *r)
{
	double tot = 0, sum = 0, in = 0, in_u = 0, len = 0;
	int b, c, S = sc->n_sites;

	for (c = 0; c < S; c++)
		tot += sc->site[c].gpus;
	for (b = 0; b < w->n_bins; b++) {
		double l = fed_bin_len(w, b), dem = 0, worst = 0, opt;

		for (c = 0; c < S; c++) {
			double x = r->assigned[(size_t) b * S + c];

			dem += x * sc->site[c].gpus;
			if (x > worst)
				worst = x;
		}
		opt = tot > 0 ? dem / tot : 0;
		sum += opt * l;
		in += worst <= 1.05 * opt + 1e-9 ? l : 0;
		in_u += worst <= 1.05 * opt + 1e-9 || worst <= 1 + 1e-9 ? l : 0;
		len += l;
	}
	r->opt_worst = len > 0 ? sum / len : 0;
	r->within_5pct = len > 0 ? in / len : 0;
	r->within_5pct_or_unsat = len > 0 ? in_u / len : 0;
}

int fed_summarize(const fed_scen_t *sc, const fed_opts_t *o, fed_run_t *r)
{
	int i, c, S = sc->n_sites;
	double *jct = calloc((size_t) sc->n + 1, sizeof(*jct)), n = sc->n;
	fed_win_t w;

	fed_win(sc, o, &w);
	r->n_bins = w.n_bins;
	r->series = calloc((size_t) w.n_bins * S + 1, sizeof(*r->series));
	r->assigned = calloc((size_t) w.n_bins * S + 1, sizeof(*r->assigned));
	if (!jct || !r->series || !r->assigned) {
		free(jct);
		return -1;
	}
	for (i = 0; i < sc->n; i++) {
		const fed_job_t *j = &sc->jobs[i];
		double gh = j->gpus * (double) j->dur / 3600;

		c = r->cluster[i];
		jct[i] = (double) (r->end[i] - j->submit);
		r->mean_jct += jct[i] / n;
		r->mean_queue += (double) (r->start[i] - j->submit) / n;
		r->mean_xfer += (double) r->xfer[i] / n;
		r->moved_h += c != j->origin ? gh : 0;
		r->remote_h += r->xfer[i] > 0 ? gh : 0;
		r->xfer_h += j->gpus * (double) r->xfer[i] / 3600;
		r->job_bytes += r->xfer[i] > 0
					? sc->cat.datasets[j->dataset].bytes
					: 0;
		r->site_jobs[c]++;
		r->site_gpu_h[c] += gh;
	}
	r->p50_jct = sim_percentile(jct, sc->n, 0.5);
	r->p99_jct = sim_percentile(jct, sc->n, 0.99);
	free(jct);
	if (fed_series(sc, &w, r->end, r->cluster, r->rep_from, r->rep_to,
		       r->hist, r->n_hist, sc->t0 + o->place_s, r->series,
		       r->assigned, &r->worst, &r->worst_after))
		return -1;
	r->worst_assigned = fed_worst_mean(&w, r->assigned, S);
	fed_optimum(sc, &w, r);
	for (c = 0; c < S; c++) {
		double sum = 0, sa = 0, len = 0;
		int b;

		for (b = 0; b < w.n_bins; b++) {
			double l = fed_bin_len(&w, b);

			sum += r->series[(size_t) b * S + c] * l;
			sa += r->assigned[(size_t) b * S + c] * l;
			len += l;
		}
		r->site_ds[c] = len > 0 ? sum / len : 0;
		r->site_asg[c] = len > 0 ? sa / len : 0;
	}
	return 0;
}

/* the scenario before any placement: every job running from its submit
 * for its duration (offered load), on the first replicas */
int fed_initial(const fed_scen_t *sc, const fed_opts_t *o, double *worst,
		double **series, int *n_bins)
{
	size_t reps = (size_t) sc->cat.n_datasets * (size_t) sc->n_sites + 1;
	int64_t *end = calloc((size_t) sc->n + 1, sizeof(*end)),
		*from = calloc(reps, sizeof(*from)),
		*to = calloc(reps, sizeof(*to));
	double after;
	fed_win_t w;
	int i, rc = -1;

	fed_win(sc, o, &w);
	*n_bins = w.n_bins;
	*series = calloc((size_t) w.n_bins * sc->n_sites + 1, sizeof(**series));
	if (end && from && to && *series) {
		for (i = 0; i < sc->n; i++)
			end[i] = sc->jobs[i].submit + sc->jobs[i].dur;
		fed_reps_init(sc, from, to);
		rc = fed_series(sc, &w, end, NULL, from, to, NULL, 0, sc->t0,
				*series, NULL, worst, &after);
	}
	free(end);
	free(from);
	free(to);
	return rc;
}

/* ---- output ------------------------------------------------------------- */

void fed_table(const fed_run_t *runs, int n, double initial)
{
	int i;

	printf("initial worst demand/supply (offered load, first replicas): %.2f\n",
	       initial);
	printf("%-13s %7s %7s %7s %7s %7s %8s %6s %6s %8s %8s %7s\n",
	       "dispatcher", "jct_h", "queue_h", "xfer_s", "worst", "w_after",
	       "assigned", "opt", "in5%", "moved_Gh", "remot_Gh", "copy_TB");
	for (i = 0; i < n; i++) {
		const fed_run_t *r = &runs[i];

		printf("%-13s %7.2f %7.2f %7.0f %7.2f %7.2f %8.2f %6.2f %6.3f %8.0f %8.0f %7.1f\n",
		       fed_disp_names[r->disp], r->mean_jct / 3600,
		       r->mean_queue / 3600, r->mean_xfer, r->worst,
		       r->worst_after, r->worst_assigned, r->opt_worst,
		       r->within_5pct, r->moved_h, r->remote_h,
		       r->copied_bytes / 1e12);
	}
	for (i = 0; i < n; i++)
		if (runs[i].disp == FED_FIRST_START)
			break;
	if (i < n) {
		int k;

		for (k = 0; k < n; k++)
			if (k != i && runs[k].mean_jct > 0)
				printf("%-13s mean JCT %.2fx shorter than first-start\n",
				       fed_disp_names[runs[k].disp],
				       runs[i].mean_jct / runs[k].mean_jct);
	}
}

/* a number, or null when it is not finite (no such window) */
static json_object *fed_num(double v)
{
	return isfinite(v) ? json_object_new_double(v) : NULL;
}

#define FED_D(o, k, v) json_object_object_add(o, k, fed_num(v))
#define FED_I(o, k, v) json_object_object_add(o, k, json_object_new_int64(v))

static json_object *fed_json_run(const fed_scen_t *sc, const fed_run_t *r,
				 double initial)
{
	json_object *o = json_object_new_object(),
		    *cl = json_object_new_object();
	int c;

	json_object_object_add(o, "dispatcher",
			       json_object_new_string(fed_disp_names[r->disp]));
	FED_I(o, "jobs", sc->n);
	FED_D(o, "mean_jct_s", r->mean_jct);
	FED_D(o, "p50_jct_s", r->p50_jct);
	FED_D(o, "p99_jct_s", r->p99_jct);
	FED_D(o, "mean_queue_s", r->mean_queue);
	FED_D(o, "mean_transfer_s", r->mean_xfer);
	FED_D(o, "worst_demand_supply", r->worst);
	FED_D(o, "worst_demand_supply_after_first_place", r->worst_after);
	FED_D(o, "worst_demand_supply_initial", initial);
	FED_D(o, "worst_assigned_supply", r->worst_assigned);
	FED_D(o, "optimum_worst_demand_supply", r->opt_worst);
	FED_D(o, "hours_within_5pct", r->within_5pct);
	FED_D(o, "hours_within_5pct_or_unsaturated", r->within_5pct_or_unsat);
	FED_D(o, "gpu_hours_moved", r->moved_h);
	FED_D(o, "gpu_hours_remote", r->remote_h);
	FED_D(o, "transfer_gpu_hours", r->xfer_h);
	FED_D(o, "job_transfer_bytes", r->job_bytes);
	FED_D(o, "replica_bytes_copied", r->copied_bytes);
	FED_I(o, "replica_copies", r->copies);
	FED_I(o, "replica_drops", r->drops);
	FED_I(o, "placements", r->placements);
	FED_D(o, "wall_s", r->wall_s);
	for (c = 0; c < sc->n_sites; c++) {
		json_object *x = json_object_new_object();

		FED_I(x, "jobs", r->site_jobs[c]);
		FED_D(x, "gpu_hours", r->site_gpu_h[c]);
		FED_D(x, "mean_demand_supply", r->site_ds[c]);
		FED_D(x, "mean_assigned_supply", r->site_asg[c]);
		json_object_object_add(cl, sc->site[c].name, x);
	}
	json_object_object_add(o, "clusters", cl);
	return o;
}

static json_object *fed_json_scen(const fed_scen_t *sc, const fed_opts_t *o,
				  double initial)
{
	json_object *x = json_object_new_object(),
		    *cl = json_object_new_array();
	int c;

	json_object_object_add(x, "trace", json_object_new_string(o->trace));
	json_object_object_add(x, "filter", json_object_new_string(o->filter));
	json_object_object_add(x, "federation",
			       json_object_new_string(o->spec));
	for (c = 0; c < sc->n_sites; c++) {
		json_object *s = json_object_new_object();

		json_object_object_add(
			s, "name", json_object_new_string(sc->site[c].name));
		FED_I(s, "nodes", sc->site[c].nodes);
		FED_I(s, "gpus_per_node", sc->site[c].gpn);
		FED_I(s, "gpus", sc->site[c].gpus);
		json_object_array_add(cl, s);
	}
	json_object_object_add(x, "clusters", cl);
	FED_I(x, "seed", (int64_t) o->seed);
	FED_I(x, "jobs", sc->n);
	FED_I(x, "skipped", sc->skipped);
	FED_I(x, "datasets", sc->cat.n_datasets);
	FED_I(x, "datasets_per_tenant", o->per_tenant);
	FED_D(x, "data_size_min", o->size_min);
	FED_D(x, "data_size_max", o->size_max);
	FED_D(x, "link_bytes_per_s", o->link);
	FED_I(x, "round_s", o->round_s);
	FED_D(x, "queue_weight", o->w_queue);
	FED_I(x, "place_every_s", o->place_s);
	FED_I(x, "bin_s", o->bin_s);
	FED_I(x, "t0", sc->t0);
	FED_I(x, "t_last_submit", sc->t_last);
	FED_D(x, "worst_demand_supply_initial", initial);
	json_object_object_add(x, "data_placement",
			       json_object_new_string(o->placement));
	json_object_object_add(x, "home_from_week_before",
			       json_object_new_boolean(o->prev_before));
	return x;
}

int fed_json(const char *path, const fed_scen_t *sc, const fed_opts_t *o,
	     const fed_run_t *runs, int n, double initial)
{
	json_object *top = json_object_new_object();
	int i, rc;

	FED_D(top, "worst_demand_supply_initial", initial);
	json_object_object_add(top, "data_placement",
			       json_object_new_string(o->placement));
	{
		char lim[64] = "exact";

		if (o->knows_limits)
			sim_limits_format(&o->limits, lim, sizeof(lim));
		json_object_object_add(top, "limits",
				       json_object_new_string(lim));
		json_object_object_add(
			top, "hold",
			json_object_new_string(!o->knows_limits  ? "run_time"
					       : o->hold_history ? "history"
								 : "limit"));
	}
	if (n > 0)
		FED_D(top, "optimum_worst_demand_supply", runs[0].opt_worst);
	json_object_object_add(top, "scenario", fed_json_scen(sc, o, initial));
	for (i = 0; i < n; i++)
		json_object_object_add(top, fed_disp_names[runs[i].disp],
				       fed_json_run(sc, &runs[i], initial));
	rc = json_object_to_file_ext(path, top, JSON_C_TO_STRING_PRETTY);
	json_object_put(top);
	if (rc) {
		fprintf(stderr, "agora-sim federation: %s: write error\n",
			path);
		return -1;
	}
	return 0;
}
#undef FED_D
#undef FED_I

/* ---- plots (gnuplot, report_gnuplot) ---------------------------------- */

static void fed_safe(const char *name, char *out, size_t len)
{
	size_t i;

	for (i = 0; name[i] && i + 1 < len; i++)
		out[i] = name[i] == '+' ? '-' : name[i];
	out[i] = '\0';
}

/* day, demand/supply per cluster, assigned/supply per cluster */
static int fed_plot_dat(const char *dir, const char *name, const fed_scen_t *sc,
			const fed_opts_t *o, const double *series,
			const double *assigned, int n_bins)
{
	char path[4096];
	FILE *f;
	int b, c, S = sc->n_sites;

	snprintf(path, sizeof(path), "%s/fed-%s.dat", dir, name);
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "agora-sim federation: %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	fprintf(f,
		"# day, demand/supply per cluster, assigned/supply per cluster\n");
	for (b = 0; b < n_bins; b++) {
		fprintf(f, "%.4f",
			((double) b + 0.5) * (double) o->bin_s / 86400);
		for (c = 0; c < S; c++)
			fprintf(f, " %.4f", series[(size_t) b * S + c]);
		for (c = 0; c < S; c++)
			fprintf(f, " %.4f",
				assigned ? assigned[(size_t) b * S + c] : 0.0);
		fputc('\n', f);
	}
	fclose(f);
	return 0;
}

static int fed_plot_jct(const char *dir, const char *name, const fed_scen_t *sc,
			const fed_run_t *r)
{
	char path[4096];
	double *v = calloc((size_t) sc->n + 1, sizeof(*v));
	FILE *f;
	int i, step;

	snprintf(path, sizeof(path), "%s/fed-jct-%s.dat", dir, name);
	f = v ? fopen(path, "w") : NULL;
	if (!f) {
		fprintf(stderr, "agora-sim federation: %s: %s\n", path,
			v ? strerror(errno) : "out of memory");
		free(v);
		return -1;
	}
	for (i = 0; i < sc->n; i++)
		v[i] = (double) (r->end[i] - sc->jobs[i].submit) / 3600;
	sim_percentile(v, sc->n, 0.5); /* sorts */
	step = sc->n > 2000 ? sc->n / 2000 : 1;
	for (i = 0; i < sc->n; i += step)
		fprintf(f, "%.5f %.5f\n", v[i], (double) (i + 1) / sc->n);
	if (sc->n)
		fprintf(f, "%.5f 1\n", v[sc->n - 1]);
	fclose(f);
	free(v);
	return 0;
}

static void fed_plot_demand(FILE *f, const fed_scen_t *sc, const char *name,
			    const char *title)
{
	int c;

	fprintf(f,
		"set output 'fed_demand_%s.png'\n"
		"set title 'demand/supply per cluster: %s (hourly means)'\n"
		"set xlabel 'days since the first submit'\n"
		"set ylabel 'demand / supply'\nunset logscale x\nplot 1 with lines dt 2 lc rgb 'gray' title 'balance'",
		name, title);
	for (c = 0; c < sc->n_sites; c++)
		fprintf(f, ", 'fed-%s.dat' using 1:%d with lines title '%s'",
			name, c + 2, sc->site[c].name);
	fputc('\n', f);
}

int fed_plots(const char *dir, const fed_scen_t *sc, const fed_opts_t *o,
	      const fed_run_t *runs, int n, const double *initial, int n_bins)
{
	char path[4096], name[64];
	FILE *f;
	int i;

	if (mkdir(dir, 0777) && errno != EEXIST) {
		fprintf(stderr, "agora-sim federation: %s: %s\n", dir,
			strerror(errno));
		return -1;
	}
	if (fed_plot_dat(dir, "initial", sc, o, initial, NULL, n_bins))
		return -1;
	for (i = 0; i < n; i++) {
		fed_safe(fed_disp_names[runs[i].disp], name, sizeof(name));
		if (fed_plot_dat(dir, name, sc, o, runs[i].series,
				 runs[i].assigned, runs[i].n_bins) ||
		    fed_plot_jct(dir, name, sc, &runs[i]))
			return -1;
	}
	snprintf(path, sizeof(path), "%s/federation.gp", dir);
	f = fopen(path, "w");
	if (!f) {
		fprintf(stderr, "agora-sim federation: %s: %s\n", path,
			strerror(errno));
		return -1;
	}
	fprintf(f,
		"# written by agora-sim federation; rerun with: gnuplot %s\n"
		"set terminal pngcairo size 1100,600 noenhanced\n"
		"cd '%s'\nset grid\nset key right top\n",
		path, dir);
	fed_plot_demand(f, sc, "initial", "offered load on the first replicas");
	for (i = 0; i < n; i++) {
		fed_safe(fed_disp_names[runs[i].disp], name, sizeof(name));
		fed_plot_demand(f, sc, name, fed_disp_names[runs[i].disp]);
	}
	fprintf(f, "set output 'fed_jct_cdf.png'\nset title 'JCT CDF'\n"
		   "set xlabel 'JCT (hours)'\nset ylabel 'fraction of jobs'\n"
		   "set logscale x\nset key right bottom\nplot ");
	for (i = 0; i < n; i++) {
		fed_safe(fed_disp_names[runs[i].disp], name, sizeof(name));
		fprintf(f, "%s'fed-jct-%s.dat' using 1:2 with lines title '%s'",
			i ? ", " : "", name, fed_disp_names[runs[i].disp]);
	}
	fputc('\n', f);
	fclose(f);
	return report_gnuplot(path);
}
