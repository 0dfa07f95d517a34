/*
 * loaning.c - agora-sim loaning: training jobs of a trace on a training
 * pool, an inference pool that follows a diurnal demand curve, and idle
 * inference nodes loaned to training (doc/loaning.md).  The loop and the
 * policies are the core's (common/loan, pol_loan.h); this file reads the
 * trace, runs the variants and writes the table, the JSON and the plots.
 *
 *   agora-sim loaning --trace T --json FILE [--plot DIR] [options]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pol_loan.h"
#include "pol_loan_sim_int.h"
#include "pol_policy.h"
#include "sim_cli.h"

static void loaning_usage(FILE *f)
{
	fputs("usage: agora-sim loaning --trace FILE --json OUT [--plot DIR] [options]\n"
	      "  --variants v1,v2,...   none, slurm-order, least-cost, least-cost+elastic,\n"
	      "                         random, most-recent (default: the first four)\n"
	      "  --train-scheduler S    the training pool's scheduler, the same in every\n"
	      "                         variant: backfill-fs (Slurm's backfill with\n"
	      "                         fair share, what an admin runs; default), agora,\n"
	      "                         or fifo-hold (first fit, a head pending > 4 h\n"
	      "                         blocks the queue: the simulator's old scheduler)\n"
	      "  --train-nodes N        training pool (default 64)\n"
	      "  --infer-nodes N        inference pool (default 64)\n"
	      "  --gpus-per-node G      (default 8)\n"
	      "  --headroom N           nodes kept above demand (default 4)\n"
	      "  --peak F               demand peak, fraction of the pool (default 0.85)\n"
	      "  --ratio R              peak / trough (default 3)\n"
	      "  --noise S              relative noise, std dev (default 0.05)\n"
	      "  --peak-hour H          UTC hour of the peak (default 14)\n"
	      "  --poll S               loan period (default 60 s)\n"
	      "  --grace S              victims' grace before a node is back (default 60 s)\n"
	      "  --deadline S           ReclaimDeadline (default 300 s)\n"
	      "  --elastic-frac F       share of whole-node jobs that are elastic (default 0.5)\n"
	      "  --no-requeue-frac F    share of jobs with --no-requeue (default 0)\n"
	      "  --min-grow S           grow only jobs with this much left (default 30m)\n"
	      "  --lend-hold S          lend only nodes idle against the peak demand of the\n"
	      "                         last S (default 30m; 0: the current demand)\n"
	      "  --grow-estimate E      time left that values a grow: attained (the run time\n"
	      "                         so far, capped by the time limit; default) or oracle\n"
	      "                         (the job's true remaining work, for comparison)\n"
	      "  --drain-ahead S        loaned nodes that the forecast (yesterday's demand)\n"
	      "                         takes back within S accept no new borrowers (default 0:\n"
	      "                         off)\n"
	      "  --borrow-ends-first    a job starts on loaned nodes only if its attained\n"
	      "                         estimate ends it before the forecast takes any back\n"
	      "  --borrow-elastic-only  only elastic jobs start or grow on loaned nodes (a\n"
	      "                         reclaim then shrinks them instead of preempting)\n"
	      "  --fewest-victims       a bound, not a policy: least-cost variants choose the\n"
	      "                         fewest victims (GPU-hours lost break ties)\n"
	      "  --least-cost-any-count least-cost minimises GPU-hours lost at any victim\n"
	      "                         count (the old rule; default: the least cost among\n"
	      "                         the choices with the fewest victims)\n"
	      "  --no-ckpt-wait         least-cost preempts at once (default: a reclaim\n"
	      "                         waits for its victims' checkpoints while demand is\n"
	      "                         met with a node to spare)\n"
	      "  --ckpt-wait S          the longest such wait (default 15m; 0: deadline -\n"
	      "                         grace)\n"
	      "  --ckpt-wait-per-job    value each victim at its own best cost within the\n"
	      "                         wait (the older rule; default: the poll and the\n"
	      "                         victims are chosen together)\n"
	      "  --reclaim-ahead S      least-cost takes back, at its victims' checkpoints,\n"
	      "                         the nodes that demand's rising trend (the line\n"
	      "                         through the last 30 min) needs within S, before any\n"
	      "                         node is short (default 0: off)\n"
	      "  --reclaim-ahead-z Z    the trend's margin, in standard deviations of the\n"
	      "                         readings around the line (default 1.5)\n"
	      "  --from-day D --days N  metrics over jobs submitted in days [D, D+N) of the\n"
	      "                         trace (day 0 starts at the first submit's midnight);\n"
	      "                         default: the whole arrival window\n"
	      "  --trace, --filter, --seed, --ckpt, --restart-overhead, --elastic-serial,\n"
	      "  --bin: as for agora-sim run\n",
	      f);
}

typedef struct lopts {
	cli_ctx_t ctx;
	const char *json, *plot, *variants, *sched;
	pol_loan_sim_params_t p;
	pol_loan_sim_policy_t pol;
	double elastic_frac, noreq_frac, peak;
	double from_day, days;
} lopts_t;

static int int_arg(const char *name, const char *arg, double lo, double hi,
		   double *out)
{
	if (cli_parse_double(arg, lo, hi, out)) {
		fprintf(stderr, "agora-sim loaning: --%s: bad value '%s'\n",
			name, arg);
		return -1;
	}
	return 0;
}

static int dur_arg(const char *name, const char *arg, int64_t *out)
{
	if (sim_duration_parse(arg, out)) {
		fprintf(stderr, "agora-sim loaning: --%s: bad duration '%s'\n",
			name, arg);
		return -1;
	}
	return 0;
}

static const struct option loaning_opts[] = {
	CLI_MODEL_OPTIONS,
	{ "json", required_argument, NULL, 1000 },
	{ "plot", required_argument, NULL, 1001 },
	{ "variants", required_argument, NULL, 1002 },
	{ "train-nodes", required_argument, NULL, 1003 },
	{ "infer-nodes", required_argument, NULL, 1004 },
	{ "gpus-per-node", required_argument, NULL, 1005 },
	{ "headroom", required_argument, NULL, 1006 },
	{ "peak", required_argument, NULL, 1007 },
	{ "ratio", required_argument, NULL, 1008 },
	{ "noise", required_argument, NULL, 1009 },
	{ "peak-hour", required_argument, NULL, 1010 },
	{ "poll", required_argument, NULL, 1011 },
	{ "grace", required_argument, NULL, 1012 },
	{ "deadline", required_argument, NULL, 1013 },
	{ "elastic-frac", required_argument, NULL, 1014 },
	{ "no-requeue-frac", required_argument, NULL, 1015 },
	{ "min-grow", required_argument, NULL, 1016 },
	{ "from-day", required_argument, NULL, 1017 },
	{ "days", required_argument, NULL, 1018 },
	{ "lend-hold", required_argument, NULL, 1019 },
	{ "grow-estimate", required_argument, NULL, 1020 },
	{ "drain-ahead", required_argument, NULL, 1021 },
	{ "borrow-ends-first", no_argument, NULL, 1022 },
	{ "borrow-elastic-only", no_argument, NULL, 1024 },
	{ "fewest-victims", no_argument, NULL, 1023 },
	{ "train-scheduler", required_argument, NULL, 1025 },
	{ "least-cost-any-count", no_argument, NULL, 1026 },
	{ "no-ckpt-wait", no_argument, NULL, 1027 },
	{ "ckpt-wait", required_argument, NULL, 1028 },
	{ "ckpt-wait-per-job", no_argument, NULL, 1029 },
	{ "reclaim-ahead", required_argument, NULL, 1030 },
	{ "reclaim-ahead-z", required_argument, NULL, 1031 },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static void lopts_default(lopts_t *o)
{
	cli_ctx_init(&o->ctx);
	pol_loan_sim_params_default(&o->p);
	pol_loan_sim_policy_default(&o->pol);
	o->elastic_frac = 0.5;
	o->peak = 0.85;
	o->from_day = -1;
	o->variants = "none,slurm-order,least-cost,least-cost+elastic";
	o->sched = "backfill-fs";
}

/* the pools and the demand curve (--train-nodes .. --peak-hour): 0, -1 on
 * a bad value, 1 when ch is none of them */
static int pool_opt(int ch, const char *arg, lopts_t *o)
{
	double d;

	switch (ch) {
	case 1003:
		if (int_arg("train-nodes", arg, 1, 1e6, &d))
			return -1;
		o->p.train_nodes = (int) d;
		return 0;
	case 1004:
		if (int_arg("infer-nodes", arg, 0, 1e6, &d))
			return -1;
		o->p.infer_nodes = (int) d;
		return 0;
	case 1005:
		if (int_arg("gpus-per-node", arg, 1, POL_MAX_GPUS_PER_NODE, &d))
			return -1;
		o->p.gpn = (int) d;
		return 0;
	case 1006:
		if (int_arg("headroom", arg, 0, 1e6, &d))
			return -1;
		o->p.headroom = (int) d;
		return 0;
	case 1007:
		return int_arg("peak", arg, 0, 1, &o->peak);
	case 1008:
		return int_arg("ratio", arg, 1, 1e6, &o->p.demand.ratio);
	case 1009:
		return int_arg("noise", arg, 0, 10, &o->p.demand.noise);
	case 1010:
		return int_arg("peak-hour", arg, 0, 24, &o->p.demand.peak_hour);
	default:
		return 1;
	}
}

/* the loans' timing, the job mix and the metrics window (--poll ..
 * --lend-hold): 0, -1 on a bad value, 1 when ch is none of them */
static int loan_opt(int ch, const char *arg, lopts_t *o)
{
	switch (ch) {
	case 1011:
		if (dur_arg("poll", arg, &o->p.poll_s) || o->p.poll_s < 1)
			return -1;
		return 0;
	case 1012:
		return dur_arg("grace", arg, &o->p.grace_s);
	case 1013:
		return dur_arg("deadline", arg, &o->p.deadline_s);
	case 1014:
		return int_arg("elastic-frac", arg, 0, 1, &o->elastic_frac);
	case 1015:
		return int_arg("no-requeue-frac", arg, 0, 1, &o->noreq_frac);
	case 1016:
		return dur_arg("min-grow", arg, &o->p.min_grow_s);
	case 1017:
		return int_arg("from-day", arg, 0, 1e5, &o->from_day);
	case 1018:
		return int_arg("days", arg, 0.001, 1e5, &o->days);
	case 1019:
		return dur_arg("lend-hold", arg, &o->p.lend_hold_s);
	case 1020:
		if (pol_loan_estimate_parse(arg, &o->pol.grow_estimate)) {
			fprintf(stderr,
				"agora-sim loaning: --grow-estimate: '%s' is not attained or oracle\n",
				arg);
			return -1;
		}
		return 0;
	case 1021:
		return dur_arg("drain-ahead", arg, &o->pol.drain_ahead_s);
	case 1022:
		o->pol.borrow_ends_first = true;
		return 0;
	case 1023:
		o->pol.fewest_victims = true;
		return 0;
	case 1024:
		o->pol.borrow_elastic_only = true;
		return 0;
	case 1026:
		o->pol.any_count = true;
		return 0;
	case 1027:
		o->pol.no_ckpt_wait = true;
		return 0;
	case 1028:
		return dur_arg("ckpt-wait", arg, &o->pol.ckpt_wait_s);
	case 1029:
		o->pol.ckpt_wait_per_job = true;
		return 0;
	case 1030:
		return dur_arg("reclaim-ahead", arg, &o->pol.reclaim_ahead_s);
	case 1031:
		return int_arg("reclaim-ahead-z", arg, 0, 10,
			       &o->pol.reclaim_ahead_z);
	case 1025:
		if (strcmp(arg, "fifo-hold") && strcmp(arg, "backfill-fs") &&
		    strcmp(arg, "agora")) {
			fprintf(stderr,
				"agora-sim loaning: --train-scheduler: '%s' is not backfill-fs, agora or fifo-hold\n",
				arg);
			return -1;
		}
		o->sched = arg;
		return 0;
	default:
		return 1;
	}
}

/* what the options must say together */
static int check_opts(int argc, char **argv, const lopts_t *o)
{
	if (optind < argc) {
		fprintf(stderr, "agora-sim loaning: unexpected argument '%s'\n",
			argv[optind]);
		return -1;
	}
	if (!o->ctx.trace_path || !o->json) {
		fprintf(stderr,
			"agora-sim loaning: --trace and --json are required\n");
		return -1;
	}
	if ((o->from_day >= 0) != (o->days > 0)) {
		fprintf(stderr,
			"agora-sim loaning: --from-day and --days go together\n");
		return -1;
	}
	return 0;
}

static int parse(int argc, char **argv, lopts_t *o)
{
	int ch, m;

	lopts_default(o);
	while ((ch = getopt_long(argc, argv, "h", loaning_opts, NULL)) != -1) {
		if (ch < 1000 && ch != 'h') {
			m = cli_model_opt(ch, optarg, &o->ctx);
			if (m < 0)
				return -1;
			if (m == 0)
				continue;
			loaning_usage(stderr);
			return -1;
		}
		switch (ch) {
		case 'h':
			loaning_usage(stdout);
			exit(0);
		case 1000:
			o->json = optarg;
			break;
		case 1001:
			o->plot = optarg;
			break;
		case 1002:
			o->variants = optarg;
			break;
		default:
			m = pool_opt(ch, optarg, o);
			if (m > 0)
				m = loan_opt(ch, optarg, o);
			if (m < 0)
				return -1;
			if (m > 0) {
				loaning_usage(stderr);
				return -1;
			}
		}
	}
	return check_opts(argc, argv, o);
}

typedef struct lrun {
	pol_loan_variant_t v;
	pol_loan_sim_result_t r;
	pol_loan_sim_more_t m;
} lrun_t;

/* a over b, 0 when b is 0 */
static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

static void summary_json(json_object *o, const lopts_t *lo, const lrun_t *x,
			 const lrun_t *none, int skipped)
{
	const pol_loan_sim_result_t *r = &x->r;
	const pol_loan_sim_params_t *p = &lo->p;

#define D(k, v) json_object_object_add(o, k, json_object_new_double(v))
#define I(k, v) json_object_object_add(o, k, json_object_new_int64(v))
	json_object_object_add(
		o, "variant",
		json_object_new_string(pol_loan_variant_name(x->v)));
	json_object_object_add(o, "trace",
			       json_object_new_string(lo->ctx.trace_path));
	json_object_object_add(o, "filter",
			       json_object_new_string(lo->ctx.filter_name));
	I("train_nodes", p->train_nodes);
	I("infer_nodes", p->infer_nodes);
	I("gpus_per_node", p->gpn);
	I("headroom", p->headroom);
	D("demand_peak", p->demand.peak);
	D("demand_ratio", p->demand.ratio);
	D("demand_noise", p->demand.noise);
	D("demand_peak_hour", p->demand.peak_hour);
	I("poll_s", p->poll_s);
	I("grace_s", p->grace_s);
	I("lend_hold_s", p->lend_hold_s);
	json_object_object_add(o, "grow_estimate",
			       json_object_new_string(pol_loan_estimate_name(
				       lo->pol.grow_estimate)));
	I("drain_ahead_s", lo->pol.drain_ahead_s);
	json_object_object_add(
		o, "borrow_ends_first",
		json_object_new_boolean(lo->pol.borrow_ends_first));
	json_object_object_add(
		o, "borrow_elastic_only",
		json_object_new_boolean(lo->pol.borrow_elastic_only));
	json_object_object_add(o, "fewest_victims",
			       json_object_new_boolean(lo->pol.fewest_victims));
	json_object_object_add(o, "least_cost_fewest_first",
			       json_object_new_boolean(!lo->pol.any_count));
	json_object_object_add(o, "ckpt_wait",
			       json_object_new_boolean(!lo->pol.no_ckpt_wait));
	I("ckpt_wait_s", lo->pol.ckpt_wait_s > 0 ? lo->pol.ckpt_wait_s
						 : p->deadline_s - p->grace_s);
	json_object_object_add(
		o, "ckpt_wait_per_job",
		json_object_new_boolean(lo->pol.ckpt_wait_per_job));
	I("reclaim_ahead_s", lo->pol.reclaim_ahead_s);
	D("reclaim_ahead_z", lo->pol.reclaim_ahead_z);
	I("deadline_s", p->deadline_s);
	I("ckpt_s", p->ckpt_s);
	I("restart_overhead_s", p->restart_s);
	D("elastic_serial", p->serial);
	D("elastic_frac", lo->elastic_frac);
	D("no_requeue_frac", lo->noreq_frac);
	I("seed", (int64_t) p->seed);
	I("t_from", p->t_from);
	I("t_to", p->t_to);
	I("jobs", r->jobs);
	I("finished", r->finished);
	I("skipped", skipped);
	D("mean_queue_s", r->mean_queue_s);
	D("mean_jct_s", r->mean_jct_s);
	D("p99_jct_s", r->p99_jct_s);
	D("util_train", r->util_train);
	D("util_total", r->util_total);
	D("train_busy_gpu_h", r->train_busy_gpu_s / 3600);
	D("infer_busy_gpu_h", r->infer_busy_gpu_s / 3600);
	I("preemptions", r->preemptions);
	D("gpu_hours_lost", r->gpu_hours_lost);
	I("slo_misses", r->slo_misses);
	D("unmet_node_h", r->unmet_node_s / 3600);
	D("mean_loaned_nodes", r->mean_loaned);
	I("reclaims", r->reclaims);
	I("shrinks", r->shrinks);
	I("grows", r->grows);
	I("reclaim_shrinks", x->m.reclaim_shrinks);
	I("grown_back_shrinks", x->m.grown_back);
	I("victims_part_node", x->m.victims_part);
	I("victims_whole_nodes", x->m.victims_whole);
	json_object_object_add(o, "train_scheduler",
			       json_object_new_string(lo->sched));
	/* loaned GPU-hours used by training over the idle inference
	 * GPU-hours the demand curve left lendable */
	D("harvest", ratio(x->m.loan_busy_gpu_s, x->m.lendable_gpu_s));
	D("harvest_bound", ratio(x->m.harvest_cap_gpu_s, x->m.lendable_gpu_s));
	D("loan_busy_gpu_h", x->m.loan_busy_gpu_s / 3600);
	D("lendable_gpu_h", x->m.lendable_gpu_s / 3600);
	I("fewest_victims_preemptions", x->m.fewest_victims);
	I("ckpt_waits", x->m.ckpt_waits);
	I("ahead_reclaims", x->m.ahead_reclaims);
	I("requeues_max", x->m.requeues_max);
	I("requeues_p99", x->m.requeues_p99);
	I("sched_preemptions", x->m.sched_preemptions);
	D("sched_gpu_hours_lost", x->m.sched_gpu_hours_lost);
	if (none) {
		/* how many times shorter than none's (> 1: shorter) */
		D("queue_vs_none",
		  ratio(none->r.mean_queue_s, r->mean_queue_s));
		D("jct_vs_none", ratio(none->r.mean_jct_s, r->mean_jct_s));
	}
	/* training GPU-hours over the training pool's own GPU-hours: the
	 * work delivered, loans not counted as capacity */
	D("util_train_pool",
	  r->total_gpu_s > 0
		  ? r->train_busy_gpu_s / (r->total_gpu_s * p->train_nodes /
					   (p->train_nodes + p->infer_nodes))
		  : 0);
#undef D
#undef I
}

static int write_json(const char *path, const lopts_t *o, const lrun_t *runs,
		      int n, int skipped)
{
	json_object *top = json_object_new_object();
	const lrun_t *none = NULL;
	int i, rc;

	for (i = 0; i < n; i++)
		if (runs[i].v == POL_LOAN_V_NONE)
			none = &runs[i];
	json_object_object_add(top, "train_scheduler",
			       json_object_new_string(o->sched));
	for (i = 0; i < n; i++) {
		json_object *x = json_object_new_object();

		summary_json(x, o, &runs[i], none, skipped);
		json_object_object_add(top, pol_loan_variant_name(runs[i].v),
				       x);
	}
	rc = json_object_to_file_ext(path, top, JSON_C_TO_STRING_PRETTY);
	json_object_put(top);
	if (rc) {
		fprintf(stderr, "agora-sim loaning: %s: write error\n", path);
		return -1;
	}
	return 0;
}

static void table(const lrun_t *runs, int n)
{
	int i;

	printf("%-20s %8s %8s %7s %7s %8s %7s %9s %5s %7s %7s %6s %5s\n",
	       "variant", "queue_h", "jct_h", "u_train", "u_total", "preempt",
	       "fewest", "lost_GPUh", "slo", "loaned", "harvest", "grows",
	       "rq_mx");
	for (i = 0; i < n; i++) {
		const pol_loan_sim_result_t *r = &runs[i].r;
		const pol_loan_sim_more_t *m = &runs[i].m;

		printf("%-20s %8.3f %8.3f %7.3f %7.3f %8lld %7lld %9.1f %5d %7.1f %7.3f %6lld %5d\n",
		       pol_loan_variant_name(runs[i].v), r->mean_queue_s / 3600,
		       r->mean_jct_s / 3600, r->util_train, r->util_total,
		       (long long) r->preemptions,
		       (long long) m->fewest_victims, r->gpu_hours_lost,
		       r->slo_misses, r->mean_loaned,
		       ratio(m->loan_busy_gpu_s, m->lendable_gpu_s),
		       (long long) r->grows, m->requeues_max);
	}
	if (n > 1 && runs[0].v == POL_LOAN_V_NONE)
		for (i = 1; i < n; i++) {
			const pol_loan_sim_result_t *a = &runs[0].r,
						    *b = &runs[i].r;

			printf("%-20s vs none: queue %.2fx shorter, JCT %.2fx shorter, util_total %+.1f%%\n",
			       pol_loan_variant_name(runs[i].v),
			       b->mean_queue_s > 0
				       ? a->mean_queue_s / b->mean_queue_s
				       : INFINITY,
			       b->mean_jct_s > 0 ? a->mean_jct_s / b->mean_jct_s
						 : INFINITY,
			       a->util_total > 0
				       ? 100 * (b->util_total / a->util_total -
						1)
				       : 0);
		}
}

static int plots(const char *dir, const lrun_t *runs, int n)
{
	char path[4096];
	FILE *f;
	int i, k;

	if (mkdir(dir, 0777) && errno != EEXIST) {
		fprintf(stderr, "agora-sim loaning: %s: %s\n", dir,
			strerror(errno));
		return -1;
	}
	for (i = 0; i < n; i++) {
		const pol_loan_sim_result_t *r = &runs[i].r;

		snprintf(path, sizeof(path), "%s/loan-%s.dat", dir,
			 pol_loan_variant_name(runs[i].v));
		f = fopen(path, "w");
		if (!f) {
			fprintf(stderr, "agora-sim loaning: %s: %s\n", path,
				strerror(errno));
			return -1;
		}
		fprintf(f,
			"# day demand_nodes loaned_nodes train_busy_gpus pending_jobs\n");
		for (k = 0; k < r->n_bins; k++)
			fprintf(f, "%.4f %.3f %.3f %.2f %.2f\n",
				(double) k * (double) r->bin_s / 86400.0,
				r->s_demand[k], r->s_loaned[k],
				r->s_train_busy[k], r->s_pending[k]);
		fclose(f);
	}
	snprintf(path, sizeof(path), "%s/loaning.gp", dir);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "# written by agora-sim loaning; rerun with: gnuplot %s\n",
		path);
	fprintf(f, "set terminal pngcairo size 1100,600 noenhanced\n");
	fprintf(f,
		"cd '%s'\nset grid\nset key right top\n"
		"set xlabel 'days since the window start'\n",
		dir);
	fprintf(f,
		"set output 'loan_nodes.png'\n"
		"set title 'inference demand and nodes on loan (hourly means)'\n"
		"set ylabel 'nodes'\nplot ");
	fprintf(f, "'loan-%s.dat' using 1:2 with lines lw 2 title 'demand'",
		pol_loan_variant_name(runs[0].v));
	for (i = 0; i < n; i++)
		if (runs[i].v != POL_LOAN_V_NONE)
			fprintf(f,
				", 'loan-%s.dat' using 1:3 with lines title 'on loan: %s'",
				pol_loan_variant_name(runs[i].v),
				pol_loan_variant_name(runs[i].v));
	fprintf(f, "\nset output 'train_busy.png'\n"
		   "set title 'GPUs busy with training (hourly means)'\n"
		   "set ylabel 'GPUs'\nplot ");
	for (i = 0; i < n; i++)
		fprintf(f, "%s'loan-%s.dat' using 1:4 with lines title '%s'",
			i ? ", " : "", pol_loan_variant_name(runs[i].v),
			pol_loan_variant_name(runs[i].v));
	fprintf(f, "\nset output 'pending.png'\n"
		   "set title 'pending training jobs (hourly means)'\n"
		   "set ylabel 'jobs'\nplot ");
	for (i = 0; i < n; i++)
		fprintf(f, "%s'loan-%s.dat' using 1:5 with lines title '%s'",
			i ? ", " : "", pol_loan_variant_name(runs[i].v),
			pol_loan_variant_name(runs[i].v));
	fputc('\n', f);
	fclose(f);
	return report_gnuplot(path);
}

int loaning_main(int argc, char **argv);

int loaning_main(int argc, char **argv)
{
	lopts_t o;
	lrun_t runs[POL_LOAN_N_VARIANTS];
	pol_loan_sim_job_t *jobs = NULL;
	int64_t *limits = NULL;
	agora_err_t err = { { 0 } };
	trace_filter_t filter;
	char buf[512], *tok, *save = NULL, *text;
	int n = 0, i, rc = 2, skipped = 0;
	uint64_t rng;

	memset(&o, 0, sizeof(o));
	memset(runs, 0, sizeof(runs));
	if (parse(argc, argv, &o))
		return 2;
	o.p.seed = o.ctx.params.seed;
	o.p.ckpt_s = o.ctx.params.ckpt_s;
	o.p.restart_s = o.ctx.params.restart_s;
	o.p.serial = o.ctx.params.elastic_serial;
	o.p.bin_s = o.ctx.params.bin_s;
	{
		double ratio = o.p.demand.ratio, noise = o.p.demand.noise;
		double ph = o.p.demand.peak_hour;

		pol_loan_demand_default(&o.p.demand, o.p.infer_nodes);
		o.p.demand.peak = o.peak * o.p.infer_nodes;
		o.p.demand.ratio = ratio;
		o.p.demand.noise = noise;
		o.p.demand.peak_hour = ph;
		o.p.demand.seed = o.p.seed;
	}
	snprintf(buf, sizeof(buf), "%s", o.variants);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (n == POL_LOAN_N_VARIANTS ||
		    pol_loan_variant_parse(tok, &runs[n].v)) {
			fprintf(stderr,
				"agora-sim loaning: --variants: unknown or repeated '%s'\n",
				tok);
			return 2;
		}
		n++;
	}
	if (trace_filter_parse(o.ctx.filter_name, &filter)) {
		fprintf(stderr,
			"agora-sim loaning: --filter: '%s' is not none or pollux\n",
			o.ctx.filter_name);
		return 2;
	}
	text = cli_read_file(o.ctx.trace_path, &err);
	if (!text) {
		fprintf(stderr, "agora-sim: %s\n", err.text);
		return 2;
	}
	if (trace_parse(text, o.ctx.trace_path, filter, &o.ctx.trace, &err)) {
		fprintf(stderr, "agora-sim: %s\n", err.text);
		free(text);
		return 2;
	}
	free(text);
	jobs = calloc((size_t) o.ctx.trace.n + 1, sizeof(*jobs));
	limits = calloc((size_t) o.ctx.trace.n + 1, sizeof(*limits));
	if (!jobs || !limits) {
		rc = 1;
		goto out;
	}
	/* elastic and --no-requeue jobs are drawn, seeded, per job */
	rng = o.p.seed * 0x2545f4914f6cdd1dULL + 17;
	{
		int64_t first = INT64_MAX,
			partmax = sim_limits_partmax(&o.ctx.params.limits,
						     o.ctx.trace.jobs,
						     o.ctx.trace.n);
		uint64_t lrng = o.p.seed;
		int m = 0;

		for (i = 0; i < o.ctx.trace.n; i++) {
			const sim_job_t *s = &o.ctx.trace.jobs[i];
			pol_loan_sim_job_t *j = &jobs[m];
			double u1 = sim_rand_unit(&rng),
			       u2 = sim_rand_unit(&rng);

			if (s->pool == POL_POOL_INFERENCE)
				continue;
			if (s->gpus > o.p.train_nodes * o.p.gpn) {
				skipped++;
				continue;
			}
			j->id = s->id;
			j->tenant = s->tenant;
			j->submit = s->submit;
			j->duration = s->duration;
			j->gpus = s->gpus;
			j->elastic = s->gpus >= o.p.gpn && u1 < o.elastic_frac;
			j->requeue = u2 >= o.noreq_frac;
			/* the trace's time limit, when it has one; a policy
			 * scheduler plans on limits: drawn as agora-sim run
			 * draws them (--limits) */
			limits[m] = s->time_limit > 0 ? s->time_limit : 0;
			if (strcmp(o.sched, "fifo-hold"))
				limits[m] = sim_limit_draw(&o.ctx.params.limits,
							   s, partmax, &lrng);
			if (s->submit < first)
				first = s->submit;
			m++;
		}
		if (o.from_day >= 0 && m) {
			int64_t day0 = first - first % 86400;

			o.p.t_from = day0 + (int64_t) (o.from_day * 86400);
			o.p.t_to = o.p.t_from + (int64_t) (o.days * 86400);
		}
		fprintf(stderr,
			"agora-sim loaning: %s: %d training jobs (filter %s, %d dropped, %d too large); pools %d + %d nodes x %d GPUs\n",
			o.ctx.trace_path, m, o.ctx.filter_name,
			o.ctx.trace.filtered, skipped, o.p.train_nodes,
			o.p.infer_nodes, o.p.gpn);
		rc = 1;
		o.pol.limit_s = limits;
		for (i = 0; i < n; i++) {
			pol_policy_t *tp = NULL;
			int e;

			/* a fresh scheduler per variant: its fair-share
			 * usage is the run's */
			if (strcmp(o.sched, "fifo-hold")) {
				tp = pol_policy_create(o.sched, NULL, NULL,
						       &err);
				if (!tp) {
					fprintf(stderr,
						"agora-sim loaning: %s\n",
						err.text);
					goto out;
				}
			}
			o.pol.train_policy = tp;
			e = pol_loan_sim_run_policy(jobs, m, runs[i].v, &o.p,
						    &o.pol, &runs[i].r,
						    &runs[i].m);
			pol_policy_destroy(&tp);
			if (e) {
				fprintf(stderr,
					"agora-sim loaning: %s: simulation failed: %s\n",
					pol_loan_variant_name(runs[i].v),
					strerror(errno));
				goto out;
			}
		}
	}
	table(runs, n);
	if (write_json(o.json, &o, runs, n, skipped))
		goto out;
	if (o.plot && plots(o.plot, runs, n))
		goto out;
	rc = 0;
out:
	for (i = 0; i < n; i++)
		pol_loan_sim_result_free(&runs[i].r);
	free(jobs);
	free(limits);
	trace_free(&o.ctx.trace);
	return rc;
}
