/*
 * strategic.c - agora-sim strategic: does a tenant gain by lying about
 * its time limits?  Every job's limit is drawn once from the regime
 * (--limits, seed), then the policy runs with those limits (honest) and,
 * for each liar tenant and each scale, with that tenant's limits scaled
 * (x0.5: it under-states, and --limit-kill decides what Slurm does at
 * the limit; x4: it over-states; max: it asks the partition maximum,
 * the longest duration rounded up to a day) and every other tenant's
 * unchanged.  Reported: the liar's app rho (Themis, apps = tenants)
 * honest and lying, the change, the cluster's max_rho_app, the liar's
 * failed jobs and mean JCT.  A lie "pays" when the liar's rho improves
 * by more than --bound percent and it loses no more jobs at its limit
 * than when honest (rho counts finished jobs only); with --check the
 * exit status is 3 then.
 *
 *   agora-sim strategic --trace FILE --cluster SPEC [--policy P]
 *       [--params k=v,...] [--tenants A,B | --top N] [--limit-scale
 *       0.5,4,max] [--bound PCT] [--check] [--json OUT] [model options]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "sim_cli.h"

#define S_MAX_TEN   16
#define S_MAX_SCALE 8

typedef struct strat {
	cli_ctx_t ctx;
	const char *policy, *params, *tenants, *scales, *json;
	int top;
	double bound;
	bool check;
	int ten[S_MAX_TEN], n_ten;
	double scale[S_MAX_SCALE]; /* < 0: the partition maximum */
	int n_scale;
} strat_t;

static void usage(FILE *f)
{
	fputs("usage: agora-sim strategic --trace FILE --cluster SPEC [--policy P]\n"
	      "         [--params k=v,...] [--tenants A,B,... | --top N]\n"
	      "         [--limit-scale 0.5,4,max] [--bound PCT] [--check] [--json OUT]\n"
	      "         [model options of compare: --limits, --limit-kill, --ckpt, --window, ...]\n"
	      "One policy (default agora), limits drawn once from --limits; for each liar\n"
	      "tenant and scale, that tenant's limits are scaled (max: the partition maximum)\n"
	      "and the rest kept.  A lie pays if the liar's app rho improves by more than\n"
	      "--bound percent (default 5); --check: exit status 3 if one does.\n"
	      "--top N (default 3): the N tenants with the most GPU time.\n",
	      f);
}

static int parse_scales(strat_t *s)
{
	char buf[256], *save = NULL, *tok;
	double d;

	snprintf(buf, sizeof(buf), "%s", s->scales);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (s->n_scale == S_MAX_SCALE)
			goto bad;
		if (!strcmp(tok, "max"))
			d = -1;
		else if (cli_parse_double(tok, 0.01, 1000, &d))
			goto bad;
		s->scale[s->n_scale++] = d;
	}
	if (s->n_scale)
		return 0;
bad:
	fprintf(stderr,
		"agora-sim strategic: --limit-scale: '%s': expected up to %d of a number in [0.01, 1000] or max\n",
		s->scales, S_MAX_SCALE);
	return -1;
}

static int parse(int argc, char **argv, strat_t *s)
{
	static const struct option lo[] = {
		CLI_MODEL_OPTIONS,
		{ "policy", required_argument, NULL, 'p' },
		{ "params", required_argument, NULL, 'a' },
		{ "tenants", required_argument, NULL, 'N' },
		{ "top", required_argument, NULL, 'T' },
		{ "limit-scale", required_argument, NULL, 'X' },
		{ "bound", required_argument, NULL, 'b' },
		{ "check", no_argument, NULL, 'C' },
		{ "json", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch, m;
	double d;

	cli_ctx_init(&s->ctx);
	s->policy = "agora";
	s->scales = "0.5,4,max";
	s->top = 3;
	s->bound = 5;
	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		m = cli_model_opt(ch, optarg, &s->ctx);
		if (m < 0)
			return -1;
		if (m == 0)
			continue;
		switch (ch) {
		case 'p':
			s->policy = optarg;
			break;
		case 'a':
			s->params = optarg;
			break;
		case 'N':
			s->tenants = optarg;
			break;
		case 'T':
			if (cli_parse_double(optarg, 1, S_MAX_TEN, &d) ||
			    d != floor(d)) {
				fprintf(stderr,
					"agora-sim strategic: --top: '%s' is not in [1, %d]\n",
					optarg, S_MAX_TEN);
				return -1;
			}
			s->top = (int) d;
			break;
		case 'X':
			s->scales = optarg;
			break;
		case 'b':
			if (cli_parse_double(optarg, 0, 100, &s->bound)) {
				fprintf(stderr,
					"agora-sim strategic: --bound: '%s' is not a percentage in [0, 100]\n",
					optarg);
				return -1;
			}
			break;
		case 'C':
			s->check = true;
			break;
		case 'j':
			s->json = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr,
			"agora-sim strategic: unexpected argument '%s'\n",
			argv[optind]);
		return -1;
	}
	return parse_scales(s);
}

/* the liars: --tenants by name, else the --top N by GPU time */
static int pick_tenants(strat_t *s)
{
	const trace_t *t = &s->ctx.trace;
	int i, k;

	if (s->tenants) {
		char buf[1024], *save = NULL, *tok;

		snprintf(buf, sizeof(buf), "%s", s->tenants);
		for (tok = strtok_r(buf, ",", &save); tok;
		     tok = strtok_r(NULL, ",", &save)) {
			for (k = 0; k < t->n_tenants; k++)
				if (!strcmp(t->tenants[k], tok))
					break;
			if (k == t->n_tenants || s->n_ten == S_MAX_TEN) {
				fprintf(stderr,
					"agora-sim strategic: --tenants: '%s' is not a tenant of the trace (or more than %d)\n",
					tok, S_MAX_TEN);
				return -1;
			}
			s->ten[s->n_ten++] = k;
		}
		return 0;
	}
	{
		double *gt = calloc((size_t) t->n_tenants + 1, sizeof(*gt));

		if (!gt)
			return -1;
		for (i = 0; i < t->n; i++)
			gt[t->jobs[i].tenant] += (double) t->jobs[i].duration *
						 t->jobs[i].gpus;
		while (s->n_ten < s->top && s->n_ten < t->n_tenants) {
			int best = -1;

			for (k = 0; k < t->n_tenants; k++)
				if (gt[k] >= 0 &&
				    (best < 0 || gt[k] > gt[best]))
					best = k;
			s->ten[s->n_ten++] = best;
			gt[best] = -1;
		}
		free(gt);
	}
	return 0;
}

static int cmp_submit(const void *x, const void *y, void *arg)
{
	const sim_job_t *v = arg;
	int a = *(const int *) x, b = *(const int *) y;

	if (v[a].submit != v[b].submit)
		return v[a].submit < v[b].submit ? -1 : 1;
	return (a > b) - (a < b);
}

/* every job's limit drawn once, in submit order, from the regime */
static int draw_limits(cli_ctx_t *ctx, int64_t *honest, int64_t *partmax)
{
	trace_t *t = &ctx->trace;
	sim_limits_t *l = &ctx->params.limits;
	uint64_t rng = ctx->params.seed;
	int *ord = malloc((size_t) (t->n ? t->n : 1) * sizeof(*ord)), i;
	int64_t m = 0;

	if (!ord)
		return -1;
	for (i = 0; i < t->n; i++) {
		ord[i] = i;
		if (t->jobs[i].duration > m)
			m = t->jobs[i].duration;
	}
	*partmax = l->kind == SIM_LIMITS_PARTMAX && l->t > 0
			   ? l->t
			   : (m / 86400 + 1) * 86400;
	qsort_r(ord, (size_t) t->n, sizeof(*ord), cmp_submit, t->jobs);
	for (i = 0; i < t->n; i++) {
		sim_job_t *j = &t->jobs[ord[i]];

		if (l->kind == SIM_LIMITS_TRACE && j->time_limit <= 0) {
			fprintf(stderr,
				"agora-sim strategic: --limits trace: job %lld has no time_limit\n",
				(long long) j->id);
			free(ord);
			return -1;
		}
		honest[ord[i]] = sim_limit_draw(l, j, *partmax, &rng);
	}
	free(ord);
	l->kind = SIM_LIMITS_TRACE;
	return 0;
}

typedef struct liar_out {
	double rho, max_rho, jct_h;
	int failed, jobs;
} liar_out_t;

static void liar_of(const strat_t *s, const cli_run_t *r, int ten,
		    liar_out_t *o)
{
	const trace_t *t = &s->ctx.trace;
	double sum = 0;
	int i, n = 0;

	memset(o, 0, sizeof(*o));
	o->rho = ten < r->sum.n_apps ? r->sum.app_rho[ten] : NAN;
	o->max_rho = r->sum.max_rho_app;
	for (i = 0; i < t->n; i++) {
		const sim_job_out_t *jo = &r->res.jobs[i];

		if (t->jobs[i].tenant != ten)
			continue;
		o->jobs++;
		if (jo->finish >= 0) {
			sum += (double) (jo->finish - t->jobs[i].submit);
			n++;
		} else if (jo->end >= 0) {
			o->failed++;
		}
	}
	o->jct_h = n ? sum / n / 3600.0 : NAN;
}

static void scale_name(double x, char *buf, size_t len)
{
	if (x < 0)
		snprintf(buf, len, "max");
	else
		snprintf(buf, len, "x%g", x);
}

int strategic_main(int argc, char **argv)
{
	strat_t s;
	cli_run_t *runs = NULL;
	int64_t *honest = NULL, partmax = 0;
	json_object *root = NULL;
	int rc = 2, i, k, paid = 0;
	char lim[64];

	memset(&s, 0, sizeof(s));
	if (parse(argc, argv, &s))
		return 2;
	s.ctx.app_mode = "tenant";
	if (!pol_registry_find(s.policy)) {
		fprintf(stderr, "agora-sim strategic: unknown policy '%s'\n",
			s.policy);
		return 2;
	}
	if (cli_load_inputs(&s.ctx) || pick_tenants(&s))
		goto out;
	sim_limits_format(&s.ctx.params.limits, lim, sizeof(lim));
	honest = malloc((size_t) (s.ctx.trace.n ? s.ctx.trace.n : 1) *
			sizeof(*honest));
	runs = calloc((size_t) (1 + s.n_ten * s.n_scale), sizeof(*runs));
	if (!honest || !runs) {
		rc = 1;
		goto out;
	}
	if (draw_limits(&s.ctx, honest, &partmax))
		goto out;
	rc = 1;
	root = json_object_new_array();
	printf("strategic: trace %s, cluster %s, policy %s%s%s, limits %s (drawn once, seed %llu), kill at limit %s\n",
	       s.ctx.trace_path, s.ctx.cluster_spec, s.policy,
	       s.params ? " " : "", s.params ? s.params : "", lim,
	       (unsigned long long) s.ctx.params.seed,
	       cli_kill_name(s.ctx.params.limit_kill));
	printf("rho = the liar's Themis app rho; change < 0: the lie improved it; bound %.1f%%\n",
	       s.bound);
	printf("%-10s %-6s %9s %9s %8s %12s %12s %8s %10s %10s  %s\n", "liar",
	       "lie", "rho_hon", "rho_lie", "change%", "max_rho_hon",
	       "max_rho_lie", "failed", "jct_hon_h", "jct_lie_h", "verdict");
	for (k = 0; k <= s.n_ten * s.n_scale; k++) {
		cli_run_t *r = &runs[k];
		int ten = k ? s.ten[(k - 1) / s.n_scale] : -1;
		double sc = k ? s.scale[(k - 1) % s.n_scale] : 1;

		for (i = 0; i < s.ctx.trace.n; i++) {
			sim_job_t *j = &s.ctx.trace.jobs[i];

			j->time_limit = honest[i];
			if (j->tenant != ten)
				continue;
			if (sc < 0)
				j->time_limit = partmax;
			else
				j->time_limit = (int64_t) ceil(
							(double) honest[i] *
							sc / 60.0) *
						60;
			if (j->time_limit < 60)
				j->time_limit = 60;
		}
		snprintf(r->label, sizeof(r->label), "%s",
			 k ? s.ctx.trace.tenants[ten] : "honest");
		snprintf(r->policy, sizeof(r->policy), "%s", s.policy);
		if (s.params)
			snprintf(r->params, sizeof(r->params), "%s", s.params);
		if (cli_run_one(&s.ctx, r))
			goto out;
		if (!k)
			continue;
		{
			liar_out_t h, l;
			char sn[16];
			double ch;
			bool pays;
			json_object *o = json_object_new_object();

			liar_of(&s, &runs[0], ten, &h);
			liar_of(&s, r, ten, &l);
			ch = 100.0 * (l.rho - h.rho) / h.rho;
			/* a lie that costs the liar jobs (killed at the
			 * shorter limit) does not pay, whatever the rho of
			 * what is left */
			pays = ch < -s.bound && l.failed <= h.failed;
			paid += pays;
			scale_name(sc, sn, sizeof(sn));
			printf("%-10s %-6s %9.4f %9.4f %+8.2f %12.4f %12.4f %4d/%-4d %10.2f %10.2f  %s\n",
			       s.ctx.trace.tenants[ten], sn, h.rho, l.rho, ch,
			       h.max_rho, l.max_rho, l.failed, l.jobs, h.jct_h,
			       l.jct_h, pays ? "PAYS" : "ok");
			json_object_object_add(
				o, "tenant",
				json_object_new_string(
					s.ctx.trace.tenants[ten]));
			json_object_object_add(o, "lie",
					       json_object_new_string(sn));
			json_object_object_add(o, "rho_honest",
					       json_object_new_double(h.rho));
			json_object_object_add(o, "rho_lie",
					       json_object_new_double(l.rho));
			json_object_object_add(o, "change_pct",
					       json_object_new_double(ch));
			json_object_object_add(
				o, "max_rho_app_honest",
				json_object_new_double(h.max_rho));
			json_object_object_add(
				o, "max_rho_app_lie",
				json_object_new_double(l.max_rho));
			json_object_object_add(o, "liar_failed_honest",
					       json_object_new_int(h.failed));
			json_object_object_add(o, "liar_failed_lie",
					       json_object_new_int(l.failed));
			json_object_object_add(o, "liar_jobs",
					       json_object_new_int(l.jobs));
			json_object_object_add(o, "liar_mean_jct_h_honest",
					       json_object_new_double(h.jct_h));
			json_object_object_add(o, "liar_mean_jct_h_lie",
					       json_object_new_double(l.jct_h));
			json_object_object_add(o, "pays",
					       json_object_new_boolean(pays));
			json_object_array_add(root, o);
		}
		fflush(stdout);
	}
	printf("%d of %d lies pay more than %.1f%%\n", paid,
	       s.n_ten * s.n_scale, s.bound);
	if (s.json &&
	    json_object_to_file_ext(s.json, root, JSON_C_TO_STRING_PRETTY)) {
		fprintf(stderr,
			"agora-sim strategic: %s: cannot write JSON: %s\n",
			s.json, strerror(errno));
		goto out;
	}
	rc = s.check && paid ? 3 : 0;
out:
	json_object_put(root);
	for (i = 0; runs && i <= s.n_ten * s.n_scale; i++) {
		sim_result_free(&runs[i].res);
		sim_summary_free(&runs[i].sum);
	}
	free(runs);
	free(honest);
	trace_free(&s.ctx.trace);
	cli_apps_free(&s.ctx);
	pol_cluster_destroy(&s.ctx.cluster);
	return rc;
}
