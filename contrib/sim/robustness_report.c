/*
 * robustness_report.c - agora-sim robustness's report (robustness.c runs
 * the tasks): the table, the goals, the JSON entries and the PNG heat map
 * (doc/sim.md "robustness").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "robustness_int.h"

static const char *ckpt_text(int64_t c, char *buf, size_t len)
{
	if (c == SIM_CKPT_CONTINUOUS)
		snprintf(buf, len, "cont");
	else
		snprintf(buf, len, "%lld", (long long) c);
	return buf;
}

/* the best (lowest) value of metric m over the non-agora, non-oracle
 * policies of one (regime, ckpt); label of the best in *who */
static double best_baseline(const rob_t *r, int rc, int fair_only,
			    double (*m)(const sim_summary_t *),
			    const char **who)
{
	double best = NAN;
	int k;

	*who = "-";
	for (k = 0; k < r->n_pol; k++) {
		const char *p = r->pols[k];
		double v = m(&r->runs[rc * r->n_pol + k].sum);

		if (!strncmp(p, "agora", 5) || !strcmp(p, "srtf") ||
		    r->runs[rc * r->n_pol + k].livelock)
			continue;
		if (fair_only && strcmp(p, "backfill-fs") &&
		    strcmp(p, "tiresias") && strcmp(p, "las"))
			continue;
		if (isfinite(v) && (isnan(best) || v < best)) {
			best = v;
			*who = r->labels[k];
		}
	}
	return best;
}

static double m_rho(const sim_summary_t *s)
{
	return s->max_rho_app;
}

static double m_jct(const sim_summary_t *s)
{
	return s->mean_jct_s;
}

void rob_print_table(FILE *f, const rob_t *r)
{
	char lim[64], ck[32];
	int rc, k;

	fprintf(f,
		"\nrobustness: trace %s (%d jobs), cluster %s (%d GPUs), seed %llu, placement %s,\n"
		"kill at limit %s, restart overhead %llds, apps by %s; times in hours; srtf is an oracle\n",
		r->ctx.trace_path, r->ctx.trace.n, r->ctx.cluster_spec,
		pol_cluster_gpus(r->ctx.cluster),
		(unsigned long long) r->ctx.params.seed, r->ctx.placement,
		cli_kill_name(r->ctx.params.limit_kill),
		(long long) r->ctx.params.restart_s, r->ctx.app_mode);
	fprintf(f, "%-16s %5s %-13s %8s %7s %8s %8s %8s %8s %8s %9s %7s %7s\n",
		"regime", "ckpt", "policy", "rho_app", "jain_a", "max_str",
		"meanJCT", "p99JCT", "util_arr", "util_net", "lostGPUh",
		"killed", "preempt");
	for (rc = 0; rc < r->n_reg * r->n_ckpt; rc++) {
		sim_limits_format(&r->reg[rc / r->n_ckpt], lim, sizeof(lim));
		ckpt_text(r->ckpt[rc % r->n_ckpt], ck, sizeof(ck));
		for (k = 0; k < r->n_pol; k++) {
			const sim_summary_t *s =
				&r->runs[rc * r->n_pol + k].sum;

			if (r->runs[rc * r->n_pol + k].livelock) {
				fprintf(f, "%-16s %5s %-13s %8s\n",
					r->reg_text[rc / r->n_ckpt], ck,
					r->labels[k], "livelock");
				continue;
			}
			fprintf(f,
				"%-16s %5s %-13s %8.3f %7.3f %8.2f %8.2f %8.2f %8.4f %8.4f %9.0f %7lld %7lld\n",
				r->reg_text[rc / r->n_ckpt], ck, r->labels[k],
				s->max_rho_app, s->jain_rho_app,
				s->max_rho_stretch, s->mean_jct_s / 3600,
				s->p99_jct_s / 3600, s->util_arrival,
				s->util_net, s->gpu_hours_lost,
				(long long) s->killed_at_limit,
				(long long) s->preemptions);
		}
	}
}

/* the goals for every agora* policy of each (regime, ckpt) */
void rob_print_goals(FILE *f, const rob_t *r)
{
	int rc, k, bf = -1;
	char ck[32];

	for (k = 0; k < r->n_pol; k++)
		if (!strcmp(r->pols[k], "backfill-fs") ||
		    (bf < 0 && !strcmp(r->pols[k], "backfill")))
			bf = k;
	fprintf(f,
		"\ngoals: rho_gain = best max_rho_app of backfill-fs/tiresias/las / the policy's (goal >= 2.25);\n"
		"jct = mean JCT / the best non-oracle baseline's (goal <= 1.10); dutil = util_net - %s's (goal >= 0)\n",
		bf >= 0 ? r->labels[bf] : "backfill-fs");
	fprintf(f, "%-16s %5s %-13s %9s %-12s %7s %-12s %8s\n", "regime",
		"ckpt", "policy", "rho_gain", "vs", "jct", "vs", "dutil");
	for (rc = 0; rc < r->n_reg * r->n_ckpt; rc++) {
		const char *wr, *wj;
		double br = best_baseline(r, rc, 1, m_rho, &wr);
		double bj = best_baseline(r, rc, 0, m_jct, &wj);

		ckpt_text(r->ckpt[rc % r->n_ckpt], ck, sizeof(ck));
		for (k = 0; k < r->n_pol; k++) {
			const sim_summary_t *s =
				&r->runs[rc * r->n_pol + k].sum;

			if (strncmp(r->pols[k], "agora", 5))
				continue;
			if (r->runs[rc * r->n_pol + k].livelock) {
				fprintf(f, "%-16s %5s %-13s %9s\n",
					r->reg_text[rc / r->n_ckpt], ck,
					r->labels[k], "livelock");
				continue;
			}
			fprintf(f,
				"%-16s %5s %-13s %9.3f %-12s %7.3f %-12s %+8.4f\n",
				r->reg_text[rc / r->n_ckpt], ck, r->labels[k],
				br / s->max_rho_app, wr, s->mean_jct_s / bj, wj,
				bf >= 0 && !r->runs[rc * r->n_pol + bf].livelock
					? s->util_net -
						  r->runs[rc * r->n_pol + bf]
							  .sum.util_net
					: NAN);
		}
	}
}

int rob_write_json(const rob_t *r)
{
	json_object *root = json_object_new_array();
	char ck[32];
	int i, rc;

	for (i = 0; i < r->n_tasks; i++) {
		const cli_run_t *run = &r->runs[i];
		const cli_ctx_t *c = &r->tctx[i / r->n_pol];
		json_object *o = json_object_new_object();

		json_object_object_add(
			o, "regime",
			json_object_new_string(
				r->reg_text[i / r->n_pol / r->n_ckpt]));
		json_object_object_add(
			o, "ckpt",
			json_object_new_string(cli_ckpt_name(c->params.ckpt_s,
							     ck, sizeof(ck))));
		json_object_object_add(o, "label",
				       json_object_new_string(run->label));
		json_object_object_add(o, "policy",
				       json_object_new_string(run->policy));
		json_object_object_add(o, "params",
				       json_object_new_string(run->params));
		json_object_object_add(o, "trace",
				       json_object_new_string(c->trace_path));
		json_object_object_add(o, "cluster",
				       json_object_new_string(c->cluster_spec));
		json_object_object_add(o, "placement",
				       json_object_new_string(c->placement));
		json_object_object_add(
			o, "seed",
			json_object_new_int64((int64_t) c->params.seed));
		json_object_object_add(o, "ckpt_s",
				       json_object_new_int64(c->params.ckpt_s));
		json_object_object_add(
			o, "restart_overhead_s",
			json_object_new_int64(c->params.restart_s));
		json_object_object_add(o, "limit_kill",
				       json_object_new_string(cli_kill_name(
					       c->params.limit_kill)));
		json_object_object_add(o, "livelock",
				       json_object_new_boolean(run->livelock));
		if (run->livelock)
			json_object_object_add(
				o, "error", json_object_new_string(run->error));
		else
			report_json_summary(o, c, run);
		json_object_array_add(root, o);
	}
	rc = json_object_to_file_ext(r->json, root, JSON_C_TO_STRING_PRETTY);
	json_object_put(root);
	if (rc) {
		fprintf(stderr, "agora-sim: %s: cannot write JSON: %s\n",
			r->json, strerror(errno));
		return -1;
	}
	return 0;
}

static double m_util(const sim_summary_t *s)
{
	return s->util_net;
}

static double m_jct_h(const sim_summary_t *s)
{
	return s->mean_jct_s / 3600;
}

/* one matrix file: a header of policies, a row per (regime, ckpt) */
static int heat_data(const rob_t *r, const char *path,
		     double (*m)(const sim_summary_t *))
{
	FILE *f = fopen(path, "w");
	char ck[32];
	int rc, k;

	if (!f) {
		fprintf(stderr, "agora-sim: %s: %s\n", path, strerror(errno));
		return -1;
	}
	fputs("x", f);
	for (k = 0; k < r->n_pol; k++)
		fprintf(f, " %s", r->labels[k]);
	fputc('\n', f);
	for (rc = 0; rc < r->n_reg * r->n_ckpt; rc++) {
		fprintf(f, "%s/%s", r->reg_text[rc / r->n_ckpt],
			ckpt_text(r->ckpt[rc % r->n_ckpt], ck, sizeof(ck)));
		for (k = 0; k < r->n_pol; k++) {
			double v = m(&r->runs[rc * r->n_pol + k].sum);

			if (r->runs[rc * r->n_pol + k].livelock)
				v = NAN; /* no value: drawn as 0 */
			fprintf(f, " %.4f", isfinite(v) ? v : 0.0);
		}
		fputc('\n', f);
	}
	return fclose(f) ? -1 : 0;
}

int rob_write_plot(const rob_t *r)
{
	static const char *const panel[][3] = {
		{ "heat-rho_app.dat", "max rho_app (Themis, lower is better)",
		  "set logscale cb" },
		{ "heat-jct.dat", "mean JCT, hours (lower is better)",
		  "set logscale cb" },
		{ "heat-util_net.dat", "util_net (higher is better)",
		  "unset logscale cb" },
	};
	double (*const ms[])(const sim_summary_t *) = { m_rho, m_jct_h,
							m_util };
	char path[4096];
	FILE *f;
	int i, h = 160 + 28 * r->n_reg * r->n_ckpt;

	if (mkdir(r->plot, 0777) && errno != EEXIST) {
		fprintf(stderr, "agora-sim: %s: %s\n", r->plot,
			strerror(errno));
		return -1;
	}
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", r->plot, panel[i][0]);
		if (heat_data(r, path, ms[i]))
			return -1;
	}
	snprintf(path, sizeof(path), "%s/robustness.gp", r->plot);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f,
		"# written by agora-sim robustness; rerun with: gnuplot %s\n",
		path);
	fprintf(f,
		"set terminal pngcairo size %d,%d noenhanced font ',9'\n"
		"cd '%s'\nset output 'robustness.png'\n"
		"set multiplot layout 1,3 title 'agora-sim robustness: %s on %s (rows: limits regime / checkpoint)'\n"
		"set palette defined (0 '#1a9850', 1 '#fee08b', 2 '#d73027')\n"
		"set xtics rotate by -45 scale 0\nset ytics scale 0\nunset key\n"
		"set yrange [] reverse\n",
		360 * 3 + 40 * r->n_pol, h, r->plot, r->ctx.trace_path,
		r->ctx.cluster_spec);
	for (i = 0; i < 3; i++) {
		fprintf(f, "%s\n", panel[i][2]);
		if (i == 2)
			fprintf(f, "set palette negative\n");
		if (i > 0)
			fprintf(f, "set format y ''\n");
		fprintf(f,
			"set title '%s'\n"
			"plot '%s' matrix rowheaders columnheaders using 1:2:3 with image, \\\n"
			"     '%s' matrix rowheaders columnheaders using 1:2:(sprintf('%%.%df',$3)) with labels\n",
			panel[i][1], panel[i][0], panel[i][0], i == 2 ? 3 : 2);
	}
	fprintf(f, "unset multiplot\n");
	fclose(f);
	return report_gnuplot(path);
}
