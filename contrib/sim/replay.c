/*
 * replay.c - the two agora-sim subcommands behind contrib/replay/agora-replay
 * (doc/sim.md "slice and score"):
 *
 *   agora-sim slice --trace FILE [--filter none|pollux] [--start ROW]
 *                   --jobs N --speedup F [--min-duration S]
 *                   [--max-duration S] [--limit-factor L] [--seed N]
 *                   [--gpus-per-node G]
 *       The core's trace parser reads FILE (bad rows: FILE:LINE: FIELD);
 *       the first N jobs whose id (data row number) is >= ROW and that
 *       pass the filter are printed as the generic CSV, time-compressed:
 *       submit' = round((submit - first submit) / F),
 *       duration' = max(min, round(duration / F)) (capped at --max-duration
 *       when given), time_limit = duration' x U(1, L) rounded up to a
 *       minute (>= 60 s): the f-model of the simulator (sim_engine.c),
 *       drawn here so that Slurm and the simulator get the same limits.
 *       A job of more than G GPUs (default 8) becomes ceil(gpus / G) whole
 *       nodes of G GPUs (16 -> 2 x 8; 12 -> 2 x 8 = 16 GPUs).
 *
 *   agora-sim score --jobs FILE --cluster SPEC [--json OUT] [--label L]
 *                   [--scale F]
 *       Reads a per-job CSV in the format of --jobs-csv (the columns
 *       jct, queue, first_wait and rho are recomputed, not trusted) and
 *       summarises it with sim_summarize() (common/sim/sim_metrics.c), the
 *       metric code of every simulation; prints the same table and JSON.
 *       A job with finish < 0 did not finish (a FAILED or CANCELLED
 *       replay job): it is counted as "unfinished", not in the metrics.
 *       --scale F multiplies every time by F (a replay compressed by F
 *       reported on the trace's time scale).  Fragmentation and wall_s
 *       cannot be known from per-job records: null in the JSON; so are
 *       the locality levels when a row's level is -1 (unknown), and the
 *       utilization over the arrival window when a preempted job started
 *       inside it (its run intervals are unknown; over the makespan it is
 *       exact).
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
#include "sim_cluster.h"

static int num_opt(const char *name, const char *s, double lo, double hi,
		   double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(d) || d < lo || d > hi) {
		fprintf(stderr, "agora-sim: --%s: '%s' is not in [%g, %g]\n",
			name, s, lo, hi);
		return -1;
	}
	*out = d;
	return 0;
}

static char *slurp(const char *path)
{
	agora_err_t err = { { 0 } };
	char *buf = cli_read_file(path, &err);

	if (!buf)
		fprintf(stderr, "agora-sim: %s\n", err.text);
	return buf;
}

static int cmp_submit(const void *x, const void *y)
{
	const sim_job_t *a = x, *b = y;

	if (a->submit != b->submit)
		return a->submit < b->submit ? -1 : 1;
	return (a->id > b->id) - (a->id < b->id);
}

/* the selected jobs, compressed by F, as the generic CSV on stdout */
static void slice_print(const trace_t *t, const sim_job_t *sel, int k, double F,
			double dmin, double dmax, double L, double gpn,
			uint64_t rng)
{
	int64_t t0 = sel[0].submit;
	int i;

	printf("id,submit,duration,gpus,nodes,gpus_per_node,tenant,time_limit\n");
	for (i = 0; i < k; i++) {
		const sim_job_t *j = &sel[i];
		int64_t d = llround((double) j->duration / F), lim;
		int g = j->nodes > 0 ? j->nodes * j->gpn : j->gpus;
		int nodes = 1, per = g;
		double f;

		if (d < (int64_t) dmin)
			d = (int64_t) dmin;
		if (dmax > 0 && d > (int64_t) dmax)
			d = (int64_t) dmax;
		if (g > (int) gpn) {
			nodes = (g + (int) gpn - 1) / (int) gpn;
			per = (int) gpn;
		}
		f = 1.0 + (L - 1.0) * sim_rand_unit(&rng);
		lim = (int64_t) ceil((double) d * f);
		lim = ((lim + 59) / 60) * 60;
		if (lim < 60)
			lim = 60;
		printf("%lld,%lld,%lld,%d,%d,%d,%s,%lld\n", (long long) j->id,
		       (long long) llround((double) (j->submit - t0) / F),
		       (long long) d, nodes * per, nodes, per,
		       t->tenants[j->tenant], (long long) lim);
	}
}

int slice_main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "trace", required_argument, NULL, 't' },
		{ "filter", required_argument, NULL, 'f' },
		{ "start", required_argument, NULL, 's' },
		{ "jobs", required_argument, NULL, 'n' },
		{ "speedup", required_argument, NULL, 'F' },
		{ "min-duration", required_argument, NULL, 'm' },
		{ "max-duration", required_argument, NULL, 'M' },
		{ "limit-factor", required_argument, NULL, 'L' },
		{ "seed", required_argument, NULL, 'S' },
		{ "gpus-per-node", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *path = NULL, *fname = "none";
	double start = 1, njobs = -1, F = 1, dmin = 1, dmax = 0, L = 2,
	       seed = 1, gpn = 8;
	trace_filter_t filter;
	trace_t t = { 0 };
	agora_err_t err = { { 0 } };
	sim_job_t *sel;
	char *text;
	int ch, i, k = 0;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		int bad = 0;

		switch (ch) {
		case 't':
			path = optarg;
			break;
		case 'f':
			fname = optarg;
			break;
		case 's':
			bad = num_opt("start", optarg, 0, 1e9, &start);
			break;
		case 'n':
			bad = num_opt("jobs", optarg, 1, 1e7, &njobs);
			break;
		case 'F':
			bad = num_opt("speedup", optarg, 1e-3, 1e6, &F);
			break;
		case 'm':
			bad = num_opt("min-duration", optarg, 1, 1e7, &dmin);
			break;
		case 'M':
			bad = num_opt("max-duration", optarg, 0, 1e9, &dmax);
			break;
		case 'L':
			bad = num_opt("limit-factor", optarg, 1, 1000, &L);
			break;
		case 'S':
			bad = num_opt("seed", optarg, 0, 1e18, &seed);
			break;
		case 'g':
			bad = num_opt("gpus-per-node", optarg, 1,
				      POL_MAX_GPUS_PER_NODE, &gpn);
			break;
		case 'h':
			puts("usage: agora-sim slice --trace FILE [--filter none|pollux] [--start ROW]\n"
			     "         --jobs N --speedup F [--min-duration S (1)] [--max-duration S (none)]\n"
			     "         [--limit-factor L (2)] [--seed N (1)] [--gpus-per-node G (8)]");
			return 0;
		default:
			return 2;
		}
		if (bad)
			return 2;
	}
	if (!path || njobs < 1 || optind < argc) {
		fprintf(stderr,
			"agora-sim slice: --trace and --jobs are required\n");
		return 2;
	}
	if (trace_filter_parse(fname, &filter)) {
		fprintf(stderr,
			"agora-sim: --filter: '%s' is not none or pollux\n",
			fname);
		return 2;
	}
	text = slurp(path);
	if (!text)
		return 2;
	if (trace_parse(text, path, filter, &t, &err)) {
		fprintf(stderr, "agora-sim: %s\n", err.text);
		free(text);
		return 2;
	}
	free(text);
	sel = calloc((size_t) njobs, sizeof(*sel));
	if (!sel) {
		trace_free(&t);
		return 1;
	}
	/* the trace's order is submit order for Philly; sort to be sure */
	qsort(t.jobs, (size_t) t.n, sizeof(*t.jobs), cmp_submit);
	for (i = 0; i < t.n && k < (int) njobs; i++)
		if (t.jobs[i].id >= (int64_t) start)
			sel[k++] = t.jobs[i];
	if (k == 0) {
		fprintf(stderr, "agora-sim: %s: no job with id >= %.0f\n", path,
			start);
		free(sel);
		trace_free(&t);
		return 2;
	}
	slice_print(&t, sel, k, F, dmin, dmax, L, gpn, (uint64_t) seed);
	fprintf(stderr,
		"agora-sim slice: %s: %d jobs from id %.0f (filter %s, %d rows dropped by it), speedup %g\n",
		path, k, start, fname, t.filtered, F);
	free(sel);
	trace_free(&t);
	return fflush(stdout) ? 1 : 0;
}

/* score ------------------------------------------------------------------ */

enum {
	S_ID,
	S_TENANT,
	S_SUBMIT,
	S_DURATION,
	S_GPUS,
	S_LIMIT,
	S_START,
	S_FINISH,
	S_RUN,
	S_PREEMPT,
	S_LEVEL,
	S_NCOL
};
static const char *const s_cols[S_NCOL] = {
	"id",          "tenant", "submit", "duration",    "gpus",  "time_limit",
	"first_start", "finish", "run_s",  "preemptions", "level",
};
/* columns of --jobs-csv that score recomputes */
static const char *const s_ignored[] = { "jct", "queue",  "first_wait",
					 "rho", "killed", "lost_gpu_s" };
#define N_IGNORED ((int) (sizeof(s_ignored) / sizeof(s_ignored[0])))

/* the header of a per-job CSV into col (-2: a column score ignores) */
static int score_header(const char *path, int lineno, char **f, int nf,
			int *col)
{
	bool has[S_NCOL] = { false };
	int i, c;

	for (i = 0; i < nf; i++) {
		col[i] = -1;
		for (c = 0; c < S_NCOL; c++)
			if (!strcmp(f[i], s_cols[c]))
				col[i] = c;
		if (col[i] >= 0) {
			if (has[col[i]]) {
				fprintf(stderr,
					"agora-sim: %s:%d: %s: column given twice\n",
					path, lineno, f[i]);
				return -1;
			}
			has[col[i]] = true;
			continue;
		}
		for (c = 0; c < N_IGNORED; c++)
			if (!strcmp(f[i], s_ignored[c]))
				break;
		if (c == N_IGNORED) {
			fprintf(stderr,
				"agora-sim: %s:%d: %s: unknown column\n", path,
				lineno, f[i]);
			return -1;
		}
		col[i] = -2;
	}
	for (c = 0; c < S_NCOL; c++)
		if (!has[c] && c != S_LIMIT && c != S_PREEMPT && c != S_LEVEL) {
			fprintf(stderr,
				"agora-sim: %s:%d: header: column %s is required\n",
				path, lineno, s_cols[c]);
			return -1;
		}
	return 0;
}

static int score_load(const char *path, double scale, trace_t *t,
		      sim_result_t *res, int *unfinished)
{
	char *text = slurp(path), *line, *next;
	int col[32], ncol = 0, lineno = 0, i, cap = 0;

	if (!text)
		return -1;
	for (line = text; line; line = next) {
		char *f[32], *p = line, *fs = NULL;
		int nf = 0;
		double v[S_NCOL] = { 0 };
		const char *tenant = "default";
		sim_job_t j;
		sim_job_out_t *o;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		line[strcspn(line, "\r")] = '\0';
		if (!*line || *line == '#')
			continue;
		/* split on every comma: an empty field is a field (it is
		 * then not a number), and a 33rd one is an error */
		for (p = line; p; p = fs) {
			if (nf == 32) {
				fprintf(stderr,
					"agora-sim: %s:%d: more than 32 fields\n",
					path, lineno);
				goto bad;
			}
			f[nf++] = p;
			if ((fs = strchr(p, ',')))
				*fs++ = '\0';
		}
		if (!ncol) { /* header */
			if (score_header(path, lineno, f, nf, col))
				goto bad;
			ncol = nf;
			continue;
		}
		if (nf != ncol) {
			fprintf(stderr,
				"agora-sim: %s:%d: %d fields, the header has %d\n",
				path, lineno, nf, ncol);
			goto bad;
		}
		for (i = 0; i < nf; i++) {
			char *end;

			if (col[i] == S_TENANT) {
				if (!*f[i] || strlen(f[i]) >= POL_NAME_LEN) {
					fprintf(stderr,
						"agora-sim: %s:%d: tenant: empty or longer than %d characters\n",
						path, lineno, POL_NAME_LEN - 1);
					goto bad;
				}
				tenant = f[i];
				continue;
			}
			if (col[i] < 0)
				continue;
			errno = 0;
			v[col[i]] = strtod(f[i], &end);
			if (errno || end == f[i] || *end ||
			    !isfinite(v[col[i]])) {
				fprintf(stderr,
					"agora-sim: %s:%d: %s: '%s' is not a number\n",
					path, lineno, s_cols[col[i]], f[i]);
				goto bad;
			}
		}
		for (i = 0; i < S_NCOL; i++) {
			/* ints: gpus, level, preemptions; the rest are cast
			 * to int64_t (times scaled) */
			double hi = i == S_GPUS || i == S_LEVEL ||
						    i == S_PREEMPT
					    ? 1e9
					    : 1e15;
			bool whole = i == S_GPUS || i == S_LEVEL ||
				     i == S_PREEMPT || i == S_ID;

			if (i == S_TENANT)
				continue;
			if (fabs(v[i]) > hi ||
			    (!whole && fabs(v[i] * scale) > 1e15) ||
			    (whole && v[i] != floor(v[i]))) {
				fprintf(stderr,
					"agora-sim: %s:%d: %s: %g is out of range%s\n",
					path, lineno, s_cols[i], v[i],
					whole ? " or not an integer" : "");
				goto bad;
			}
		}
		if (v[S_GPUS] < 1 || v[S_DURATION] < 0) {
			fprintf(stderr,
				"agora-sim: %s:%d: gpus: needs gpus >= 1 and duration >= 0\n",
				path, lineno);
			goto bad;
		}
		if (v[S_FINISH] >= 0 &&
		    (v[S_START] < v[S_SUBMIT] || v[S_FINISH] < v[S_START] ||
		     v[S_RUN] < 0 || v[S_RUN] > v[S_FINISH] - v[S_SUBMIT])) {
			fprintf(stderr,
				"agora-sim: %s:%d: finish: needs submit <= first_start <= finish and 0 <= run_s <= finish - submit\n",
				path, lineno);
			goto bad;
		}
		memset(&j, 0, sizeof(j));
		j.id = (int64_t) v[S_ID];
		j.tenant = trace_tenant(t, tenant);
		j.submit = llround(v[S_SUBMIT] * scale);
		j.duration = llround(v[S_DURATION] * scale);
		j.gpus = (int) v[S_GPUS];
		j.time_limit = llround(v[S_LIMIT] * scale);
		j.dataset = -1;
		if (j.tenant < 0 || trace_add_job(t, &j))
			goto nomem;
		if (t->n > cap) {
			sim_job_out_t *no;

			cap = cap ? cap * 2 : 256;
			no = realloc(res->jobs, (size_t) cap * sizeof(*no));
			if (!no)
				goto nomem;
			res->jobs = no;
		}
		o = &res->jobs[t->n - 1];
		memset(o, 0, sizeof(*o));
		o->limit = j.time_limit;
		o->gpus = j.gpus;
		o->level = (int) v[S_LEVEL];
		o->preemptions = (int) v[S_PREEMPT];
		if (v[S_FINISH] < 0 || v[S_START] < 0) {
			o->first_start = v[S_START] < 0
						 ? -1
						 : llround(v[S_START] * scale);
			o->finish = -1;
			o->end = -1;
			(*unfinished)++;
		} else {
			o->first_start = llround(v[S_START] * scale);
			o->finish = llround(v[S_FINISH] * scale);
			o->end = o->finish;
			o->run_s = llround(v[S_RUN] * scale);
		}
	}
	free(text);
	if (!ncol || t->n == 0) {
		fprintf(stderr, "agora-sim: %s: no jobs\n", path);
		return -1;
	}
	res->n = t->n;
	t->format = "jobs-csv";
	return 0;
nomem:
	fprintf(stderr, "agora-sim: %s: out of memory\n", path);
bad:
	free(text);
	return -1;
}

/* the aggregates sim_run() would have kept, from the per-job records */
static void score_aggregate(const trace_t *t, sim_result_t *res)
{
	int i;

	res->t0 = INT64_MAX;
	res->t_last_submit = INT64_MIN;
	res->t_end = INT64_MIN;
	for (i = 0; i < t->n; i++) {
		if (t->jobs[i].submit < res->t0)
			res->t0 = t->jobs[i].submit;
		if (t->jobs[i].submit > res->t_last_submit)
			res->t_last_submit = t->jobs[i].submit;
	}
	for (i = 0; i < t->n; i++) {
		const sim_job_out_t *o = &res->jobs[i];
		/* run time is taken as one interval from the first start
		 * (a requeued job's gaps are not known per interval) */
		int64_t a = o->first_start, b = o->first_start + o->run_s;

		if (o->finish < 0)
			continue;
		if (o->finish > res->t_end)
			res->t_end = o->finish;
		res->busy_gpu_s += (double) o->gpus * (double) o->run_s;
		if (b > res->t_last_submit)
			b = res->t_last_submit;
		if (a < res->t0)
			a = res->t0;
		if (b > a)
			res->busy_gpu_s_arrival += (double) o->gpus *
						   (double) (b - a);
		res->preemptions += o->preemptions;
	}
	if (res->t_end < res->t0)
		res->t_end = res->t0;
}

/* the replay's extras beside the simulator's keys, into the JSON file */
static int score_json_extras(const char *json, const char *label,
			     int unfinished, int submitted, double scale)
{
	json_object *root = json_object_from_file(json), *o;

	if (!root || !json_object_object_get_ex(root, label, &o)) {
		fprintf(stderr, "agora-sim: %s: cannot reread JSON\n", json);
		json_object_put(root);
		return -1;
	}
	json_object_object_add(o, "unfinished",
			       json_object_new_int(unfinished));
	json_object_object_add(o, "submitted", json_object_new_int(submitted));
	json_object_object_add(o, "time_scale", json_object_new_double(scale));
	if (json_object_to_file_ext(json, root, JSON_C_TO_STRING_PRETTY)) {
		fprintf(stderr, "agora-sim: %s: cannot write JSON\n", json);
		json_object_put(root);
		return -1;
	}
	json_object_put(root);
	return 0;
}

int score_main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "jobs", required_argument, NULL, 'j' },
		{ "cluster", required_argument, NULL, 'c' },
		{ "json", required_argument, NULL, 'J' },
		{ "label", required_argument, NULL, 'l' },
		{ "scale", required_argument, NULL, 'F' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *jobs = NULL, *json = NULL, *label = "replay";
	double scale = 1;
	cli_ctx_t ctx;
	cli_run_t run;
	agora_err_t err = { { 0 } };
	int ch, i, rc = 2, unfinished = 0;

	cli_ctx_init(&ctx);
	memset(&run, 0, sizeof(run));
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (ch) {
		case 'j':
			jobs = optarg;
			break;
		case 'c':
			ctx.cluster_spec = optarg;
			break;
		case 'J':
			json = optarg;
			break;
		case 'l':
			label = optarg;
			break;
		case 'F':
			if (num_opt("scale", optarg, 1e-6, 1e6, &scale))
				return 2;
			break;
		case 'h':
			puts("usage: agora-sim score --jobs FILE --cluster SPEC [--json OUT] [--label L] [--scale F]");
			return 0;
		default:
			return 2;
		}
	}
	if (!jobs || !ctx.cluster_spec || optind < argc) {
		fprintf(stderr,
			"agora-sim score: --jobs and --cluster are required\n");
		return 2;
	}
	ctx.cluster = sim_cluster_shorthand(ctx.cluster_spec);
	if (!ctx.cluster) {
		char *text = slurp(ctx.cluster_spec);

		if (!text)
			return 2;
		ctx.cluster = sim_cluster_parse(text, ctx.cluster_spec, NULL,
						NULL, &err);
		free(text);
		if (!ctx.cluster) {
			fprintf(stderr, "agora-sim: %s\n", err.text);
			return 2;
		}
	}
	ctx.trace_path = jobs;
	ctx.filter_name = "as-replayed";
	ctx.placement = "as-replayed";
	snprintf(run.label, sizeof(run.label), "%.63s", label);
	snprintf(run.policy, sizeof(run.policy), "%.63s", label);
	if (score_load(jobs, scale, &ctx.trace, &run.res, &unfinished))
		goto out;
	run.res.total_gpus = pol_cluster_gpus(ctx.cluster);
	score_aggregate(&ctx.trace, &run.res);
	rc = 1;
	if (cli_apps(&ctx) || cli_summarize(&ctx, &run)) {
		fprintf(stderr, "agora-sim: out of memory\n");
		goto out;
	}
	run.sum.fragmentation = NAN;
	run.wall_s = NAN;
	/* a requeued job's run intervals are not in the records: the
	 * busy time inside the arrival window is then unknown */
	for (i = 0; i < ctx.trace.n; i++)
		if (run.res.jobs[i].finish >= 0 &&
		    run.res.jobs[i].preemptions > 0 &&
		    run.res.jobs[i].first_start < run.res.t_last_submit) {
			run.sum.util_arrival = NAN;
			run.sum.util_net = NAN;
			break;
		}
	/* a replayed job's allocation level is not known (level -1) */
	for (i = 0; i < ctx.trace.n; i++)
		if (run.res.jobs[i].finish >= 0 && run.res.jobs[i].level < 0) {
			run.sum.mean_locality_level = NAN;
			run.sum.mean_locality_level_multi = NAN;
			break;
		}
	fprintf(stderr,
		"agora-sim score: %s: %d jobs, %d finished, %d unfinished, %d tenants; cluster %s (%d GPUs), times x %g\n",
		jobs, ctx.trace.n, run.sum.jobs, unfinished,
		ctx.trace.n_tenants, ctx.cluster_spec, run.res.total_gpus,
		scale);
	report_table(stdout, &ctx, &run, 1, -1);
	if (json &&
	    (report_json(json, &ctx, &run, 1) ||
	     score_json_extras(json, label, unfinished, ctx.trace.n, scale)))
		goto out;
	rc = 0;
out:
	sim_result_free(&run.res);
	sim_summary_free(&run.sum);
	trace_free(&ctx.trace);
	cli_apps_free(&ctx);
	pol_cluster_destroy(&ctx.cluster);
	return rc;
}
