/*
 * agora-sim - replay a GPU job trace on a described cluster under the
 * core's policies (doc/sim.md).
 *
 *   agora-sim run     --trace FILE --cluster SPEC --policy P [options]
 *   agora-sim compare --trace FILE --cluster SPEC --policies p1,p2,...
 *                     --baseline p1 --json OUT [--plot DIR] [--seed N]
 *   agora-sim bench   [--nodes N --gpus G --jobs J] [--trace FILE]
 *
 * Exit status: 0 ok, 1 simulation or output error, 2 usage or bad input.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agora_config.h"
#include "sim_cli.h"
#include "pol_place_agora.h"
#include "sim_cluster.h"

#define MAX_POLICIES 16

double cli_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static void usage(FILE *f)
{
	fputs("usage:\n"
	      "  agora-sim run --trace FILE --cluster SPEC --policy P [options]\n"
	      "  agora-sim compare --trace FILE --cluster SPEC --policies p1,p2,...\n"
	      "                    --baseline p1 --json OUT [--plot DIR] [--seed N] [options]\n"
	      "  agora-sim bench [--nodes N] [--gpus G] [--jobs J] [--trace FILE --cluster SPEC]\n"
	      "  agora-sim list\n"
	      "  agora-sim slice --trace FILE --jobs N --speedup F [--start ROW] [--filter F] (--help)\n"
	      "  agora-sim score --jobs FILE --cluster SPEC [--json OUT] [--label L] [--scale F]\n"
	      "  agora-sim --help | --version\n"
	      "SPEC: a cluster file, or NODESxGPUS (e.g. 80x8: one leaf switch per 16 nodes)\n"
	      "policies: a name from 'agora-sim list', or LABEL=NAME to run one policy twice\n"
	      "options:\n"
	      "  --params LABEL:k=v,k=v  policy parameters (repeatable)\n"
	      "  --filter none|pollux    trace filter (default none)\n"
	      "  --seed N                model seed (default 1)\n"
	      "  --limit-factor F        time limit = duration x U(1,F) (default 2)\n"
	      "  --slowdown a,b,c,d,e,f  relative run time by locality level\n"
	      "                          nvlink,pcie,socket,node,leaf,cluster\n"
	      "                          (default 1,1.05,1.10,1.15,1.25,1.40)\n"
	      "  --restart S             work redone after a preemption, s (default 60)\n"
	      "  --elastic-serial X      elastic speed-up serial fraction (default 0.05)\n"
	      "  --bin S                 utilization time series bin, s (default 3600)\n"
	      "  --placement stock|agora placement strategy (default stock)\n"
	      "  --jobs-csv PREFIX       per-job CSV, one file per policy: PREFIX-LABEL.csv\n"
	      "  --json OUT              summary JSON (keyed by policy label)\n"
	      "  --plot DIR              PNG charts via gnuplot (JCT CDF, utilization, rho)\n"
	      "  --progress              progress line on stderr even if not a tty\n"
	      "  --no-check              skip the per-event invariant checks\n",
	      f);
}

static char *read_file(const char *path, agora_err_t *err)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (!f) {
		agora_err_set(err, "%s: %s", path, strerror(errno));
		return NULL;
	}
	for (;;) {
		if (cap - len < 65536) {
			char *nb;

			cap = cap ? cap * 2 : 1 << 20;
			nb = realloc(buf, cap + 1);
			if (!nb) {
				free(buf);
				fclose(f);
				agora_err_set(err, "%s: out of memory", path);
				return NULL;
			}
			buf = nb;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	if (ferror(f)) {
		agora_err_set(err, "%s: read error", path);
		free(buf);
		fclose(f);
		return NULL;
	}
	fclose(f);
	buf[len] = '\0';
	if (memchr(buf, '\0', len)) {
		agora_err_set(err, "%s: binary data (NUL byte)", path);
		free(buf);
		return NULL;
	}
	return buf;
}

/* load the cluster: shorthand or file (no hwloc loader linked yet) */
static pol_cluster_t *load_cluster(const char *spec, agora_err_t *err)
{
	pol_cluster_t *c = sim_cluster_shorthand(spec);
	char *text;

	if (c)
		return c;
	text = read_file(spec, err);
	if (!text)
		return NULL;
	/* hook: topo_* provides sim_nodetype_load_f for hwloc= node types */
	c = sim_cluster_parse(text, spec, NULL, NULL, err);
	free(text);
	return c;
}

static void progress_cb(void *arg, const sim_progress_t *p)
{
	const char *label = arg;

	fprintf(stderr,
		"\r%-12s day %6.2f  done %6d/%-6d  pending %6d  running %5d ",
		label, (double) (p->now - p->t0) / 86400.0, p->done, p->n,
		p->pending, p->running);
	fflush(stderr);
}

static int parse_slowdown(const char *s, double *out)
{
	double v[POL_N_LEVELS];
	int i;
	char *end;

	for (i = 0; i < POL_N_LEVELS; i++) {
		errno = 0;
		v[i] = strtod(s, &end);
		if (errno || end == s || !isfinite(v[i]) || v[i] <= 0)
			return -1;
		s = end;
		if (i < POL_N_LEVELS - 1) {
			if (*s != ',')
				return -1;
			s++;
		}
	}
	if (*s)
		return -1;
	memcpy(out, v, sizeof(v));
	return 0;
}

static int parse_double_opt(const char *s, double lo, double hi, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(s, &end);
	if (errno || end == s || *end || !isfinite(d) || d < lo || d > hi)
		return -1;
	*out = d;
	return 0;
}

typedef struct cli_opts {
	cli_ctx_t ctx;
	const char *policy, *policies, *baseline, *json, *plot, *jobs_csv;
	char *params[MAX_POLICIES];
	int n_params;
} cli_opts_t;

static int parse_opts(int argc, char **argv, cli_opts_t *o)
{
	static const struct option lo[] = {
		{ "trace", required_argument, NULL, 't' },
		{ "cluster", required_argument, NULL, 'c' },
		{ "policy", required_argument, NULL, 'p' },
		{ "policies", required_argument, NULL, 'P' },
		{ "baseline", required_argument, NULL, 'b' },
		{ "json", required_argument, NULL, 'j' },
		{ "plot", required_argument, NULL, 'g' },
		{ "seed", required_argument, NULL, 's' },
		{ "params", required_argument, NULL, 'a' },
		{ "filter", required_argument, NULL, 'f' },
		{ "limit-factor", required_argument, NULL, 'L' },
		{ "slowdown", required_argument, NULL, 'S' },
		{ "restart", required_argument, NULL, 'R' },
		{ "elastic-serial", required_argument, NULL, 'E' },
		{ "bin", required_argument, NULL, 'B' },
		{ "placement", required_argument, NULL, 'x' },
		{ "jobs-csv", required_argument, NULL, 'J' },
		{ "progress", no_argument, NULL, 'r' },
		{ "no-check", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;
	double d;

	sim_params_default(&o->ctx.params);
	o->ctx.filter_name = "none";
	o->ctx.placement = "stock";
	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (ch) {
		case 't':
			o->ctx.trace_path = optarg;
			break;
		case 'c':
			o->ctx.cluster_spec = optarg;
			break;
		case 'p':
			o->policy = optarg;
			break;
		case 'P':
			o->policies = optarg;
			break;
		case 'b':
			o->baseline = optarg;
			break;
		case 'j':
			o->json = optarg;
			break;
		case 'g':
			o->plot = optarg;
			break;
		case 'J':
			o->jobs_csv = optarg;
			break;
		case 'f':
			o->ctx.filter_name = optarg;
			break;
		case 'x':
			o->ctx.placement = optarg;
			break;
		case 'r':
			o->ctx.progress = true;
			break;
		case 'n':
			o->ctx.params.check = false;
			break;
		case 's':
			if (parse_double_opt(optarg, 0, 1e18, &d) ||
			    d != floor(d)) {
				fprintf(stderr,
					"agora-sim: --seed: '%s' is not a non-negative integer\n",
					optarg);
				return -1;
			}
			o->ctx.params.seed = (uint64_t) d;
			break;
		case 'a':
			if (o->n_params == MAX_POLICIES ||
			    !strchr(optarg, ':')) {
				fprintf(stderr,
					"agora-sim: --params: expected LABEL:k=v,k=v (at most %d)\n",
					MAX_POLICIES);
				return -1;
			}
			o->params[o->n_params++] = optarg;
			break;
		case 'L':
			if (parse_double_opt(optarg, 1, 1000,
					     &o->ctx.params.limit_factor)) {
				fprintf(stderr,
					"agora-sim: --limit-factor: '%s' is not in [1, 1000]\n",
					optarg);
				return -1;
			}
			break;
		case 'S':
			if (parse_slowdown(optarg, o->ctx.params.slowdown)) {
				fprintf(stderr,
					"agora-sim: --slowdown: expected %d positive numbers separated by ','\n",
					POL_N_LEVELS);
				return -1;
			}
			break;
		case 'R':
			if (parse_double_opt(optarg, 0, 1e7, &d)) {
				fprintf(stderr,
					"agora-sim: --restart: '%s' is not in [0, 1e7] s\n",
					optarg);
				return -1;
			}
			o->ctx.params.restart_s = (int64_t) d;
			break;
		case 'E':
			if (parse_double_opt(optarg, 0, 0.999,
					     &o->ctx.params.elastic_serial)) {
				fprintf(stderr,
					"agora-sim: --elastic-serial: '%s' is not in [0, 0.999]\n",
					optarg);
				return -1;
			}
			break;
		case 'B':
			if (parse_double_opt(optarg, 1, 1e8, &d)) {
				fprintf(stderr,
					"agora-sim: --bin: '%s' is not in [1, 1e8] s\n",
					optarg);
				return -1;
			}
			o->ctx.params.bin_s = (int64_t) d;
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
		fprintf(stderr, "agora-sim: unexpected argument '%s'\n",
			argv[optind]);
		return -1;
	}
	return 0;
}

/*
 * The placement strategies of --placement, one line each.  A strategy
 * whose context depends on the cluster gets it from make(); the context
 * is released with unmake().
 */
static void *make_agora(const pol_cluster_t *c)
{
	return pol_agora_create(c, NULL);
}

static void unmake_agora(void *arg)
{
	pol_agora_t *a = arg;

	pol_agora_destroy(&a);
}

static const struct placement {
	const char *name;
	pol_place_f place;
	void *(*make)(const pol_cluster_t *c);
	void (*unmake)(void *arg);
} placements[] = {
	{ "stock", pol_place_basic, NULL, NULL },
	{ "agora", pol_place_agora, make_agora, unmake_agora },
};

static const struct placement *find_placement(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(placements) / sizeof(placements[0]); i++)
		if (!strcmp(placements[i].name, name))
			return &placements[i];
	return NULL;
}

static int load_inputs(cli_ctx_t *ctx)
{
	agora_err_t err = { { 0 } };
	trace_filter_t filter;
	char *text;

	if (!ctx->trace_path || !ctx->cluster_spec) {
		fprintf(stderr,
			"agora-sim: --trace and --cluster are required\n");
		return -1;
	}
	if (trace_filter_parse(ctx->filter_name, &filter)) {
		fprintf(stderr,
			"agora-sim: --filter: '%s' is not none or pollux\n",
			ctx->filter_name);
		return -1;
	}
	ctx->cluster = load_cluster(ctx->cluster_spec, &err);
	if (!ctx->cluster) {
		fprintf(stderr, "agora-sim: %s\n", err.text);
		return -1;
	}
	text = read_file(ctx->trace_path, &err);
	if (!text) {
		fprintf(stderr, "agora-sim: %s\n", err.text);
		return -1;
	}
	if (trace_parse(text, ctx->trace_path, filter, &ctx->trace, &err)) {
		fprintf(stderr, "agora-sim: %s\n", err.text);
		free(text);
		return -1;
	}
	free(text);
	return 0;
}

/* Run one labelled policy over the context's trace. */
static int run_one(cli_ctx_t *ctx, cli_run_t *run)
{
	agora_err_t err = { { 0 } };
	const struct placement *pm = find_placement(ctx->placement);
	pol_placer_t pl;
	pol_policy_t *pol;
	sim_params_t p = ctx->params;
	double t0;
	int rc;

	if (!pm) {
		fprintf(stderr,
			"agora-sim: --placement: unknown strategy '%s' (stock, agora)\n",
			ctx->placement);
		return -1;
	}
	pl.name = pm->name;
	pl.place = pm->place;
	pl.arg = pm->make ? pm->make(ctx->cluster) : NULL;
	if (pm->make && !pl.arg) {
		fprintf(stderr,
			"agora-sim: --placement %s: cannot build it for this cluster\n",
			pm->name);
		return -1;
	}
	pol = pol_policy_create(run->policy,
				run->params[0] ? run->params : NULL, &pl, &err);
	if (!pol) {
		fprintf(stderr, "agora-sim: %s\n", err.text);
		if (pm->unmake)
			pm->unmake(pl.arg);
		return -1;
	}
	if (ctx->progress) {
		p.progress = progress_cb;
		p.progress_arg = run->label;
	}
	p.frag_placer = &pl;
	t0 = cli_now();
	rc = sim_run(ctx->cluster, ctx->trace.jobs, ctx->trace.n, pol, &p,
		     &run->res, &err);
	run->wall_s = cli_now() - t0;
	if (ctx->progress)
		fputc('\n', stderr);
	pol_policy_destroy(&pol);
	if (pm->unmake)
		pm->unmake(pl.arg);
	if (rc) {
		fprintf(stderr, "agora-sim: %s\n", err.text);
		return -1;
	}
	if (sim_summarize(&run->res, ctx->trace.jobs, ctx->trace.n,
			  ctx->trace.n_tenants, &run->sum)) {
		fprintf(stderr, "agora-sim: out of memory\n");
		return -1;
	}
	return 0;
}

static int setup_runs(cli_opts_t *o, const char *list, cli_run_t *runs)
{
	char buf[1024], *save = NULL, *tok;
	int n = 0, i;

	if (snprintf(buf, sizeof(buf), "%s", list) >= (int) sizeof(buf)) {
		fprintf(stderr, "agora-sim: --policies: list too long\n");
		return -1;
	}
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		cli_run_t *r;

		if (n == MAX_POLICIES) {
			fprintf(stderr, "agora-sim: at most %d policies\n",
				MAX_POLICIES);
			return -1;
		}
		r = &runs[n];
		memset(r, 0, sizeof(*r));
		snprintf(r->label, sizeof(r->label), "%.63s", tok);
		if (eq) {
			*eq = '\0';
			snprintf(r->label, sizeof(r->label), "%.63s", tok);
			snprintf(r->policy, sizeof(r->policy), "%.63s", eq + 1);
		} else {
			snprintf(r->policy, sizeof(r->policy), "%.63s", tok);
		}
		if (!pol_registry_find(r->policy)) {
			fprintf(stderr,
				"agora-sim: unknown policy '%s' (see agora-sim list)\n",
				r->policy);
			return -1;
		}
		for (i = 0; i < n; i++)
			if (!strcmp(runs[i].label, r->label)) {
				fprintf(stderr,
					"agora-sim: policy label '%s' given twice (use LABEL=NAME)\n",
					r->label);
				return -1;
			}
		n++;
	}
	for (i = 0; i < o->n_params; i++) {
		const char *c = strchr(o->params[i], ':');
		size_t ll = (size_t) (c - o->params[i]);
		int k, found = 0;

		for (k = 0; k < n; k++)
			if (strlen(runs[k].label) == ll &&
			    !strncmp(runs[k].label, o->params[i], ll)) {
				snprintf(runs[k].params, sizeof(runs[k].params),
					 "%.255s", c + 1);
				found = 1;
			}
		if (!found) {
			fprintf(stderr,
				"agora-sim: --params %s: no such policy label\n",
				o->params[i]);
			return -1;
		}
	}
	if (n == 0) {
		fprintf(stderr, "agora-sim: no policy given\n");
		return -1;
	}
	return n;
}

static int cmd_simulate(int argc, char **argv, bool compare)
{
	cli_opts_t o;
	cli_run_t *runs = NULL;
	int n, i, base = 0, rc = 2;

	memset(&o, 0, sizeof(o));
	o.ctx.progress = isatty(2);
	if (parse_opts(argc, argv, &o))
		return 2;
	if (compare && (!o.policies || !o.baseline || !o.json)) {
		fprintf(stderr,
			"agora-sim compare: --policies, --baseline and --json are required\n");
		return 2;
	}
	if (!compare && !o.policy) {
		fprintf(stderr, "agora-sim run: --policy is required\n");
		return 2;
	}
	runs = calloc(MAX_POLICIES, sizeof(*runs));
	if (!runs)
		return 1;
	n = setup_runs(&o, compare ? o.policies : o.policy, runs);
	if (n < 0)
		goto out;
	if (compare) {
		for (base = 0; base < n; base++)
			if (!strcmp(runs[base].label, o.baseline))
				break;
		if (base == n) {
			fprintf(stderr,
				"agora-sim: --baseline %s is not in --policies\n",
				o.baseline);
			goto out;
		}
	}
	if (load_inputs(&o.ctx))
		goto out;
	fprintf(stderr,
		"agora-sim: %s: %d jobs, %d tenants (filter %s, %d dropped); cluster %s: %d nodes, %d GPUs\n",
		o.ctx.trace_path, o.ctx.trace.n, o.ctx.trace.n_tenants,
		o.ctx.filter_name, o.ctx.trace.filtered, o.ctx.cluster->name,
		o.ctx.cluster->n_nodes, pol_cluster_gpus(o.ctx.cluster));
	rc = 1;
	for (i = 0; i < n; i++)
		if (run_one(&o.ctx, &runs[i]))
			goto out;
	report_table(stdout, &o.ctx, runs, n, compare ? base : -1);
	if (o.json && report_json(o.json, &o.ctx, runs, n))
		goto out;
	if (o.jobs_csv) {
		for (i = 0; i < n; i++) {
			char path[4096];

			snprintf(path, sizeof(path), "%s-%s.csv", o.jobs_csv,
				 runs[i].label);
			if (report_jobs_csv(path, &o.ctx, &runs[i]))
				goto out;
		}
	}
	if (o.plot && report_plots(o.plot, &o.ctx, runs, n))
		goto out;
	rc = 0;
out:
	for (i = 0; i < MAX_POLICIES; i++) {
		sim_result_free(&runs[i].res);
		sim_summary_free(&runs[i].sum);
	}
	free(runs);
	trace_free(&o.ctx.trace);
	pol_cluster_destroy(&o.ctx.cluster);
	return rc;
}

int main(int argc, char **argv)
{
	const pol_policy_ops_t *const *r;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "run"))
		return cmd_simulate(argc - 1, argv + 1, false);
	if (!strcmp(argv[1], "compare"))
		return cmd_simulate(argc - 1, argv + 1, true);
	if (!strcmp(argv[1], "bench"))
		return bench_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "slice"))
		return slice_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "score"))
		return score_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "list")) {
		for (r = pol_registry(); *r; r++)
			printf("%s\n", (*r)->name);
		return 0;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		printf("agora-sim %s\n", PACKAGE_VERSION);
		return 0;
	}
	fprintf(stderr, "agora-sim: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
