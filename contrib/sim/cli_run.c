/*
 * cli_run.c - what every agora-sim subcommand that simulates shares:
 * loading the trace and cluster, the model options (--limits, --ckpt,
 * ...), the placement strategies, running one policy and summarizing it
 * with the run's apps (sim_cli.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agora_file.h"
#include "sim_cli.h"
#include "pol_apps.h"
#include "pol_place_agora.h"
#include "sim_cluster.h"

double cli_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

double cli_thread_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

char *cli_read_file(const char *path, agora_err_t *err)
{
	char *buf = NULL;
	size_t len;

	/* traces, cluster files: up to 1 GiB of text, links followed */
	if (agora_file_read_ex(path, (size_t) 1 << 30, AGORA_FILE_FOLLOW, &buf,
			       &len, NULL, err))
		return NULL;
	return buf;
}

/* load the cluster: shorthand or file (no hwloc loader linked yet) */
static pol_cluster_t *load_cluster(const char *spec, agora_err_t *err)
{
	pol_cluster_t *c = sim_cluster_shorthand(spec);
	char *text;

	if (c)
		return c;
	text = cli_read_file(spec, err);
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

int cli_parse_slowdown(const char *s, double *out)
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

int cli_parse_double(const char *s, double lo, double hi, double *out)
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

int cli_load_inputs(cli_ctx_t *ctx)
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
	text = cli_read_file(ctx->trace_path, &err);
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
	if (cli_window(ctx))
		return -1;
	return cli_apps(ctx);
}

/*
 * --window FROM:DAYS: keep the jobs submitted in days [FROM, FROM+DAYS)
 * of the trace, day 0 being the UTC day of the first submit.  The jobs
 * before it are not simulated: the window starts on an empty cluster.
 */
int cli_window(cli_ctx_t *ctx)
{
	trace_t *t = &ctx->trace;
	int64_t first = INT64_MAX, from, to;
	int i, n = 0;

	if (ctx->window_days <= 0)
		return 0;
	for (i = 0; i < t->n; i++)
		if (t->jobs[i].submit < first)
			first = t->jobs[i].submit;
	if (first == INT64_MAX)
		return 0;
	first -= ((first % 86400) + 86400) % 86400;
	from = first + (int64_t) (ctx->window_from * 86400);
	to = from + (int64_t) (ctx->window_days * 86400);
	for (i = 0; i < t->n; i++) {
		if (t->jobs[i].submit < from || t->jobs[i].submit >= to)
			continue;
		t->jobs[n] = t->jobs[i];
		if (t->job_name)
			t->job_name[n] = t->job_name[i];
		n++;
	}
	fprintf(stderr,
		"agora-sim: --window %g:%g: %d of %d jobs (submitted in days [%g, %g))\n",
		ctx->window_from, ctx->window_days, n, t->n, ctx->window_from,
		ctx->window_from + ctx->window_days);
	if (n == 0) {
		fprintf(stderr, "agora-sim: --window: no job in the window\n");
		return -1;
	}
	t->filtered += t->n - n;
	t->n = n;
	return 0;
}

/*
 * Apps that are not tenants (--app burst/array/sweep) for a policy that
 * keeps per-app state (agora): name each app (its tenant index in the
 * snapshot) and its account (the tenant of its jobs), the two calls
 * site_factor/agora makes under AppDefinition=array/burst, and hand back
 * the trace's jobs with the app as the tenant index (*jobs_out, freed by
 * the caller).  *jobs_out stays NULL where the policy sees tenants (apps
 * are tenants, --auction-apps account, or a policy without apps).
 * 0, or -1 with a message.
 */
static int policy_apps(const cli_ctx_t *ctx, pol_policy_t *pol,
		       sim_job_t **jobs_out)
{
	const trace_t *t = &ctx->trace;
	const char **names = NULL, **accts = NULL;
	sim_job_t *jobs = NULL;
	int i, rc = -1;

	*jobs_out = NULL;
	if (!ctx->app || ctx->auction_accounts)
		return 0;
	names = calloc((size_t) (ctx->n_apps ? ctx->n_apps : 1),
		       sizeof(*names));
	accts = calloc((size_t) (ctx->n_apps ? ctx->n_apps : 1),
		       sizeof(*accts));
	jobs = malloc((size_t) (t->n ? t->n : 1) * sizeof(*jobs));
	if (!names || !accts || !jobs)
		goto out;
	for (i = 0; i < ctx->n_apps; i++)
		names[i] = ctx->app_names[i];
	for (i = 0; i < t->n; i++) {
		jobs[i] = t->jobs[i];
		jobs[i].tenant = ctx->app[i];
		accts[ctx->app[i]] = t->tenants[t->jobs[i].tenant];
	}
	if (pol_policy_set_apps(pol, names, accts, ctx->n_apps) < 0) {
		if (errno == ENOTSUP)
			rc = 0;
		goto out;
	}
	*jobs_out = jobs;
	jobs = NULL;
	rc = 0;
out:
	if (rc)
		fprintf(stderr, "agora-sim: %s: apps: %s\n",
			pol_policy_name(pol), strerror(errno));
	free(names);
	free(accts);
	free(jobs);
	return rc;
}

/* Run one labelled policy over the context's trace. */
int cli_run_one(const cli_ctx_t *ctx, cli_run_t *run)
{
	agora_err_t err = { { 0 } };
	const struct placement *pm = find_placement(ctx->placement);
	const pol_policy_ops_t *ops = pol_registry_find(run->policy);
	pol_placer_t pl;
	pol_policy_t *pol;
	sim_job_t *app_jobs = NULL;
	sim_params_t p = ctx->params;
	double t0, c0;
	int rc;

	/* what a policy may know: limits, not durations.  Only an oracle
	 * (srtf) is shown a job's remaining work; every other policy sees
	 * -1, as site_factor/agora gives it in Slurm (doc/sim.md) */
	if (!ops || !ops->oracle)
		p.hide_remaining = true;
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
	if (policy_apps(ctx, pol, &app_jobs)) {
		pol_policy_destroy(&pol);
		if (pm->unmake)
			pm->unmake(pl.arg);
		return -1;
	}
	if (ctx->progress && run->label[0]) {
		p.progress = progress_cb;
		p.progress_arg = run->label;
	}
	p.frag_placer = &pl;
	t0 = cli_now();
	c0 = cli_thread_cpu();
	run->app_bids = app_jobs != NULL;
	rc = sim_run(ctx->cluster, app_jobs ? app_jobs : ctx->trace.jobs,
		     ctx->trace.n, pol, &p, &run->res, &err);
	run->cpu_s = cli_thread_cpu() - c0;
	run->wall_s = cli_now() - t0;
	free(app_jobs);
	if (p.progress)
		fputc('\n', stderr);
	pol_policy_destroy(&pol);
	if (pm->unmake)
		pm->unmake(pl.arg);
	if (rc) {
		run->livelock = errno == EDEADLK;
		snprintf(run->error, sizeof(run->error), "%s", err.text);
		fprintf(stderr, "agora-sim: %s\n", err.text);
		return -1;
	}
	if (cli_summarize(ctx, run)) {
		fprintf(stderr, "agora-sim: out of memory\n");
		return -1;
	}
	return 0;
}

int cli_summarize(const cli_ctx_t *ctx, cli_run_t *run)
{
	return sim_summarize_apps(&run->res, ctx->trace.jobs, ctx->trace.n,
				  ctx->trace.n_tenants, ctx->app, ctx->n_apps,
				  &run->sum);
}

const char *cli_kill_name(sim_limit_kill_t k)
{
	return k == SIM_KILL_FAIL       ? "fail"
	       : k == SIM_KILL_RESUBMIT ? "resubmit"
					: "none";
}

const char *cli_ckpt_name(int64_t ckpt_s, char *buf, size_t len)
{
	if (ckpt_s == SIM_CKPT_CONTINUOUS)
		snprintf(buf, len, "continuous");
	else if (ckpt_s == SIM_CKPT_NONE)
		snprintf(buf, len, "none");
	else
		snprintf(buf, len, "every %llds", (long long) ckpt_s);
	return buf;
}

/* the sweep prefix of a job name: the name less its trailing run of
 * digits and separators (lr-sweep-03 -> lr-sweep, bert_7 -> bert) */
static void sweep_prefix(const char *name, char *out, size_t len)
{
	size_t n = strlen(name);

	while (n > 0 && strchr("0123456789-_.:", name[n - 1]))
		n--;
	if (n == 0) /* all digits: the name is its own app */
		n = strlen(name);
	snprintf(out, len, "%.*s", (int) n, name);
}

/* --app burst:GAP / array:GAP: the core's builders (pol_apps.h), the
 * tenant as the account, the trace's job name (if any) as the name */
static int core_apps(cli_ctx_t *ctx, const pol_apps_spec_t *spec)
{
	const trace_t *t = &ctx->trace;
	pol_apps_job_t *aj = calloc((size_t) (t->n ? t->n : 1), sizeof(*aj));
	pol_apps_t apps;
	agora_err_t err = { { 0 } };
	int i;

	if (!aj)
		return -1;
	for (i = 0; i < t->n; i++) {
		aj[i].id = t->jobs[i].id;
		aj[i].submit = t->jobs[i].submit;
		aj[i].account = t->tenants[t->jobs[i].tenant];
		aj[i].name = t->job_name ? t->names[t->job_name[i]] : NULL;
	}
	if (pol_apps_build(spec, aj, t->n, &apps, &err)) {
		fprintf(stderr, "agora-sim: --app %s: %s\n", ctx->app_mode,
			err.text);
		free(aj);
		return -1;
	}
	ctx->app_names = malloc((size_t) (apps.n_apps ? apps.n_apps : 1) *
				sizeof(*ctx->app_names));
	if (!ctx->app_names) {
		pol_apps_free(&apps);
		free(aj);
		return -1;
	}
	for (i = 0; i < apps.n_apps; i++)
		pol_apps_name(spec, &aj[apps.first[i]], ctx->app_names[i],
			      sizeof(ctx->app_names[i]));
	ctx->app = apps.app; /* ownership moves to ctx */
	apps.app = NULL;
	ctx->n_apps = apps.n_apps;
	pol_apps_free(&apps);
	free(aj);
	return 0;
}

int cli_apps(cli_ctx_t *ctx)
{
	const trace_t *t = &ctx->trace;
	int i, k;

	cli_apps_free(ctx);
	if (!ctx->app_mode)
		ctx->app_mode = "tenant";
	if (!strncmp(ctx->app_mode, "burst", 5) ||
	    !strncmp(ctx->app_mode, "array", 5)) {
		pol_apps_spec_t spec;
		agora_err_t err = { { 0 } };

		if (pol_apps_parse(ctx->app_mode, &spec, &err)) {
			fprintf(stderr, "agora-sim: --app: %s\n", err.text);
			return -1;
		}
		if (spec.def == POL_APPS_ARRAY && !t->job_name)
			fprintf(stderr,
				"agora-sim: --app %s: the trace has no job names (column name): every job is an app\n",
				ctx->app_mode);
		return core_apps(ctx, &spec);
	}
	if (!strcmp(ctx->app_mode, "tenant") || !t->job_name) {
		if (strcmp(ctx->app_mode, "tenant"))
			fprintf(stderr,
				"agora-sim: --app %s: the trace has no job names (column name): apps are tenants\n",
				ctx->app_mode);
		ctx->app_names = malloc(
			(size_t) (t->n_tenants ? t->n_tenants : 1) *
			sizeof(*ctx->app_names));
		if (!ctx->app_names)
			return -1;
		memcpy(ctx->app_names, t->tenants,
		       (size_t) t->n_tenants * sizeof(*ctx->app_names));
		ctx->n_apps = t->n_tenants;
		return 0;
	}
	ctx->app = malloc((size_t) (t->n ? t->n : 1) * sizeof(*ctx->app));
	ctx->app_names = malloc((size_t) (t->n ? t->n : 1) *
				sizeof(*ctx->app_names));
	if (!ctx->app || !ctx->app_names)
		return -1;
	for (i = 0; i < t->n; i++) {
		char key[POL_NAME_LEN], pre[POL_NAME_LEN];

		sweep_prefix(t->names[t->job_name[i]], pre, sizeof(pre));
		snprintf(key, sizeof(key), "%.30s/%.32s",
			 t->tenants[t->jobs[i].tenant], pre);
		for (k = ctx->n_apps - 1; k >= 0; k--)
			if (!strcmp(ctx->app_names[k], key))
				break;
		if (k < 0) {
			k = ctx->n_apps++;
			memcpy(ctx->app_names[k], key, sizeof(key));
		}
		ctx->app[i] = k;
	}
	return 0;
}

void cli_apps_free(cli_ctx_t *ctx)
{
	free(ctx->app);
	free(ctx->app_names);
	ctx->app = NULL;
	ctx->app_names = NULL;
	ctx->n_apps = 0;
}

/*
 * The model options shared by run, compare and robustness (long option
 * table: CLI_MODEL_OPTIONS in sim_cli.h).  Returns 0 if ch was one and
 * is applied, 1 if ch is not a model option, -1 on a bad value (message
 * printed).
 */
int cli_model_opt(int ch, const char *arg, cli_ctx_t *ctx)
{
	sim_params_t *p = &ctx->params;
	agora_err_t err = { { 0 } };
	double d;
	int64_t v;

	switch (ch) {
	case 't':
		ctx->trace_path = arg;
		return 0;
	case 'c':
		ctx->cluster_spec = arg;
		return 0;
	case 'f':
		ctx->filter_name = arg;
		return 0;
	case 'x':
		ctx->placement = arg;
		return 0;
	case 'r':
		ctx->progress = true;
		return 0;
	case 'n':
		p->check = false;
		return 0;
	case 'A': {
		pol_apps_spec_t spec;

		if (strcmp(arg, "tenant") && strcmp(arg, "sweep") &&
		    ((strncmp(arg, "burst", 5) && strncmp(arg, "array", 5)) ||
		     pol_apps_parse(arg, &spec, &err)))
			break;
		ctx->app_mode = arg;
		return 0;
	}
	case CLI_OPT_AUCTION:
		if (strcmp(arg, "app") && strcmp(arg, "account"))
			break;
		ctx->auction_accounts = !strcmp(arg, "account");
		return 0;
	case CLI_OPT_LIVELOCK:
		if (!strcmp(arg, "off")) {
			p->livelock_s = -1;
			return 0;
		}
		if (!strcmp(arg, "auto")) {
			p->livelock_s = 0;
			return 0;
		}
		if (sim_duration_parse(arg, &v) || v < 1)
			break;
		p->livelock_s = v;
		return 0;
	case 's':
		if (cli_parse_double(arg, 0, 1e18, &d) || d != floor(d))
			break;
		p->seed = (uint64_t) d;
		return 0;
	case 'L':
		if (cli_parse_double(arg, 1, 1000, &d))
			break;
		p->limits.kind = SIM_LIMITS_AUTO;
		p->limits.a = 1;
		p->limits.b = d;
		return 0;
	case 'l':
		if (sim_limits_parse(arg, &p->limits, &err)) {
			fprintf(stderr, "agora-sim: %s\n", err.text);
			return -1;
		}
		return 0;
	case 'S':
		if (cli_parse_slowdown(arg, p->slowdown))
			break;
		return 0;
	case 'R':
		if (cli_parse_double(arg, 0, 1e7, &d))
			break;
		fprintf(stderr,
			"agora-sim: --restart is deprecated: it means --ckpt continuous --restart-overhead %s (no work lost but the overhead)\n",
			arg);
		p->ckpt_s = SIM_CKPT_CONTINUOUS;
		p->restart_s = (int64_t) d;
		return 0;
	case 'K':
		if (!strcmp(arg, "continuous")) {
			p->ckpt_s = SIM_CKPT_CONTINUOUS;
			return 0;
		}
		if (sim_duration_parse(arg, &v))
			break;
		p->ckpt_s = v;
		return 0;
	case 'O':
		if (sim_duration_parse(arg, &v))
			break;
		p->restart_s = v;
		return 0;
	case CLI_OPT_LAUNCH:
		if (sim_duration_parse(arg, &v))
			break;
		p->launch_s = v;
		return 0;
	case 'k':
		if (!strcmp(arg, "fail"))
			p->limit_kill = SIM_KILL_FAIL;
		else if (!strcmp(arg, "resubmit"))
			p->limit_kill = SIM_KILL_RESUBMIT;
		else if (!strcmp(arg, "none"))
			p->limit_kill = SIM_KILL_NONE;
		else
			break;
		return 0;
	case 'E':
		if (cli_parse_double(arg, 0, 0.999, &p->elastic_serial))
			break;
		return 0;
	case 'B':
		if (cli_parse_double(arg, 1, 1e8, &d))
			break;
		p->bin_s = (int64_t) d;
		return 0;
	case 'W': {
		char *end;
		double f, n;

		errno = 0;
		f = strtod(arg, &end);
		if (errno || end == arg || *end != ':' || !isfinite(f) ||
		    f < 0 || f > 1e5 ||
		    cli_parse_double(end + 1, 0.001, 1e5, &n))
			break;
		ctx->window_from = f;
		ctx->window_days = n;
		return 0;
	}
	default:
		return 1;
	}
	cli_model_opt_error(ch, arg);
	return -1;
}

void cli_model_opt_error(int ch, const char *arg)
{
	static const struct {
		int ch;
		const char *name, *want;
	} m[] = {
		{ 'A', "app",
		  "tenant, sweep, burst[:GAP] or array[:GAP] (GAP <= 7d)" },
		{ CLI_OPT_AUCTION, "auction-apps", "app or account" },
		{ CLI_OPT_LIVELOCK, "livelock",
		  "a duration (30d, 864000), auto or off" },
		{ 's', "seed", "a non-negative integer" },
		{ 'L', "limit-factor", "a number in [1, 1000]" },
		{ 'S', "slowdown", "6 positive numbers separated by ','" },
		{ 'R', "restart", "a number in [0, 1e7] s" },
		{ 'K', "ckpt",
		  "a duration (1800, 30m, 0 = none) or continuous" },
		{ 'O', "restart-overhead", "a duration (120, 2m)" },
		{ CLI_OPT_LAUNCH, "launch-overhead", "a duration (0, 1, 2s)" },
		{ 'k', "limit-kill", "fail, resubmit or none" },
		{ 'E', "elastic-serial", "a number in [0, 0.999]" },
		{ 'B', "bin", "a number in [1, 1e8] s" },
		{ 'W', "window",
		  "FROM:DAYS, days since the first submit's day" },
	};
	size_t i;

	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++)
		if (m[i].ch == ch) {
			fprintf(stderr, "agora-sim: --%s: '%s': expected %s\n",
				m[i].name, arg, m[i].want);
			return;
		}
}

void cli_ctx_init(cli_ctx_t *ctx)
{
	memset(ctx, 0, sizeof(*ctx));
	sim_params_default(&ctx->params);
	ctx->filter_name = "none";
	ctx->placement = "stock";
	ctx->app_mode = "tenant";
}
