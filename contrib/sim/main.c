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

int loaning_main(int argc, char **argv); /* loaning.c */

static void usage(FILE *f)
{
	fputs("usage:\n"
	      "  agora-sim run --trace FILE --cluster SPEC --policy P [options]\n"
	      "  agora-sim compare --trace FILE --cluster SPEC --policies p1,p2,...\n"
	      "                    --baseline p1 --json OUT [--plot DIR] [--seed N] [options]\n"
	      "  agora-sim bench [--nodes N] [--gpus G] [--jobs J] [--contended] [--apps N] [--repeat N]\n"
	      "  agora-sim bounds --trace FILE --cluster SPEC [--app A] [--json OUT] [options]\n"
	      "  agora-sim robustness --trace FILE --cluster SPEC [--policies p1,...] [--regimes r1,r2]\n"
	      "                    [--ckpts c1,c2] [--json OUT] [--plot DIR] [--threads N] [options]\n"
	      "  agora-sim strategic --trace FILE --cluster SPEC [--tenants A,B | --top N]\n"
	      "                    [--limit-scale 0.5,4,max] [--check] [options] (--help)\n"
	      "  agora-sim loaning --trace FILE --json OUT [--plot DIR] [options] (--help)\n"
	      "  agora-sim federation --trace FILE --federation SPEC --json OUT [options] (--help)\n"
	      "  agora-sim list\n"
	      "  agora-sim slice --trace FILE --jobs N --speedup F [--start ROW] [--filter F] (--help)\n"
	      "  agora-sim score --jobs FILE --cluster SPEC [--json OUT] [--label L] [--scale F]\n"
	      "  agora-sim --help | --version\n"
	      "SPEC: a cluster file, or NODESxGPUS (e.g. 80x8: one leaf switch per 16 nodes)\n"
	      "durations: seconds or a number with a unit s, m, h, d, w (604800, 7d, 1w)\n"
	      "policies: a name from 'agora-sim list', or LABEL=NAME to run one policy twice\n"
	      "options:\n"
	      "  --params LABEL:k=v,k=v  policy parameters (repeatable)\n"
	      "  --filter none|pollux    trace filter (default none)\n"
	      "  --seed N                model seed (default 1)\n"
	      "  --limits REGIME         time limits jobs ask for: trace, uniform:A:B,\n"
	      "                          lognormal:SIGMA, constant:T, partmax[:T]\n"
	      "                          (default: the trace's, else uniform:1:2)\n"
	      "  --window FROM:DAYS      simulate the jobs submitted in days [FROM, FROM+DAYS)\n"
	      "                          of the trace (day 0: the first submit's UTC day)\n"
	      "  --limit-factor F        default regime with uniform:1:F\n"
	      "  --limit-kill fail|resubmit|none  a run reaching its limit is killed:\n"
	      "                          fails (default), or is resubmitted with twice\n"
	      "                          the limit; none: limits never kill\n"
	      "  --ckpt C                checkpoint every C (default 1800 s; 0: never,\n"
	      "                          a preempted job loses all its work; continuous)\n"
	      "  --restart-overhead S    work redone on every restart (default 120 s)\n"
	      "  --launch-overhead S     every start holds the GPUs S s before work:\n"
	      "                          Slurm's launch and completion (default 0;\n"
	      "                          about 1 s measured on the harness)\n"
	      "  --app tenant|sweep|burst[:GAP]|array[:GAP]  apps of the app rho:\n"
	      "                          tenants (default), job-name prefixes within a\n"
	      "                          tenant, a tenant's submissions within GAP\n"
	      "                          (default 1h), or AppDefinition=array on names\n"
	      "  --auction-apps app|account  agora bids and its rho per app (default;\n"
	      "                          the credit per tenant), or per tenant\n"
	      "  --livelock D|auto|off   fail a run in which no job completes for D\n"
	      "                          while jobs pend (auto: 7d + 2 x longest job)\n"
	      "  --slowdown a,b,c,d,e,f  relative run time by locality level\n"
	      "                          nvlink,pcie,socket,node,leaf,cluster\n"
	      "                          (default 1,1.05,1.10,1.15,1.25,1.40)\n"
	      "  --restart S             deprecated: --ckpt continuous --restart-overhead S\n"
	      "  --elastic-serial X      elastic speed-up serial fraction (default 0.05)\n"
	      "  --bin S                 utilization time series bin, s (default 3600)\n"
	      "  --placement stock|agora placement strategy (default stock)\n"
	      "  --jobs-csv PREFIX       per-job CSV, one file per policy: PREFIX-LABEL.csv\n"
	      "  --bounds                compare: lower bounds on mean JCT and max rho_app,\n"
	      "                          and the share of the gap from backfill-fs to\n"
	      "                          each bound that a policy closes (table, JSON)\n"
	      "  --json OUT              summary JSON (keyed by policy label)\n"
	      "  --plot DIR              PNG charts via gnuplot (JCT CDF, utilization, rho)\n"
	      "  --progress              progress line on stderr even if not a tty\n"
	      "  --no-check              skip the per-event invariant checks\n",
	      f);
}

typedef struct cli_opts {
	cli_ctx_t ctx;
	const char *policy, *policies, *baseline, *json, *plot, *jobs_csv;
	char *params[MAX_POLICIES];
	int n_params;
	bool bounds; /* --bounds */
} cli_opts_t;

static int parse_opts(int argc, char **argv, cli_opts_t *o)
{
	static const struct option lo[] = {
		CLI_MODEL_OPTIONS,
		{ "policy", required_argument, NULL, 'p' },
		{ "policies", required_argument, NULL, 'P' },
		{ "baseline", required_argument, NULL, 'b' },
		{ "json", required_argument, NULL, 'j' },
		{ "plot", required_argument, NULL, 'g' },
		{ "params", required_argument, NULL, 'a' },
		{ "jobs-csv", required_argument, NULL, 'J' },
		{ "bounds", no_argument, NULL, 'U' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int ch, m;

	cli_ctx_init(&o->ctx);
	o->ctx.progress = isatty(2);
	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		m = cli_model_opt(ch, optarg, &o->ctx);
		if (m < 0)
			return -1;
		if (m == 0)
			continue;
		switch (ch) {
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
		case 'U':
			o->bounds = true;
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

/* agora-sim bounds: the lower bounds alone (sim_bounds.h) */
static int cmd_bounds(int argc, char **argv)
{
	cli_opts_t o;
	int rc = 1;

	memset(&o, 0, sizeof(o));
	if (parse_opts(argc, argv, &o))
		return 2;
	if (cli_load_inputs(&o.ctx)) {
		rc = 2;
		goto out;
	}
	if (cli_bounds(&o.ctx, NULL, 0, -1))
		goto out;
	report_bounds(stdout, &o.ctx, NULL, 0);
	if (o.json && report_bounds_json(o.json, &o.ctx))
		goto out;
	rc = 0;
out:
	trace_free(&o.ctx.trace);
	cli_apps_free(&o.ctx);
	pol_cluster_destroy(&o.ctx.cluster);
	return rc;
}

static int cmd_simulate(int argc, char **argv, bool compare)
{
	cli_opts_t o;
	cli_run_t *runs = NULL;
	int n, i, base = 0, rc = 2;

	memset(&o, 0, sizeof(o));
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
	if (cli_load_inputs(&o.ctx))
		goto out;
	fprintf(stderr,
		"agora-sim: %s: %d jobs, %d tenants (filter %s, %d dropped); cluster %s: %d nodes, %d GPUs\n",
		o.ctx.trace_path, o.ctx.trace.n, o.ctx.trace.n_tenants,
		o.ctx.filter_name, o.ctx.trace.filtered, o.ctx.cluster->name,
		o.ctx.cluster->n_nodes, pol_cluster_gpus(o.ctx.cluster));
	rc = 1;
	for (i = 0; i < n; i++)
		if (cli_run_one(&o.ctx, &runs[i]))
			goto out;
	if (o.bounds && cli_bounds(&o.ctx, runs, n, base))
		goto out;
	report_table(stdout, &o.ctx, runs, n, compare ? base : -1);
	if (o.bounds)
		report_bounds(stdout, &o.ctx, runs, n);
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
	cli_apps_free(&o.ctx);
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
	if (!strcmp(argv[1], "bounds"))
		return cmd_bounds(argc - 1, argv + 1);
	if (!strcmp(argv[1], "slice"))
		return slice_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "score"))
		return score_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "robustness"))
		return robustness_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "strategic")) /* strategic.c */
		return strategic_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "loaning")) /* loaning.c, doc/loaning.md */
		return loaning_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "federation")) /* federation.c */
		return federation_main(argc - 1, argv + 1);
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
