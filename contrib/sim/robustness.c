/*
 * robustness.c - agora-sim robustness: every policy under every
 * information regime (--limits) and checkpoint cost (--ckpt), one table,
 * one JSON entry per (regime, ckpt, policy) and a PNG heat map
 * (doc/sim.md "robustness").
 *
 *   agora-sim robustness --trace FILE --cluster SPEC [--policies p1,...]
 *       [--regimes r1,r2] [--ckpts c1,c2] [--json OUT] [--plot DIR]
 *       [--threads N] [--params LABEL:k=v] [model options]
 *
 * The runs are independent (the core has no global state): they are
 * spread over --threads worker threads; results do not depend on it.
 * The table, the JSON and the heat map: robustness_report.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "robustness_int.h"

static const char *const default_pols[] = {
	"fifo", "backfill",    "backfill-fs", "tiresias", "las",
	"srtf", "agora-order", "agora",       NULL,
};

static void usage(FILE *f)
{
	fputs("usage: agora-sim robustness --trace FILE --cluster SPEC [--policies p1,...]\n"
	      "         [--regimes r1,r2,...] [--ckpts c1,c2,...] [--json OUT] [--plot DIR]\n"
	      "         [--threads N] [--params LABEL:k=v,...] [model options of compare]\n"
	      "  --policies  default: fifo,backfill,backfill-fs,tiresias,las,srtf,agora-order,agora\n"
	      "              (those registered)\n"
	      "  --regimes   --limits regimes, default trace (when every job has a limit),\n"
	      "              uniform:1:2,lognormal:1.5,constant:1w,partmax\n"
	      "  --ckpts     checkpoint intervals, default continuous,1800 (0 = none)\n"
	      "  --plot DIR  DIR/robustness.png: heat maps of max_rho_app, mean JCT, util_net\n",
	      f);
}

static int add_list(const char *list, char (*out)[64], int max, int *n,
		    const char *what)
{
	char buf[1024], *save = NULL, *tok;

	if (snprintf(buf, sizeof(buf), "%s", list) >= (int) sizeof(buf)) {
		fprintf(stderr, "agora-sim robustness: --%s: too long\n", what);
		return -1;
	}
	*n = 0;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (*n == max) {
			fprintf(stderr,
				"agora-sim robustness: --%s: at most %d\n",
				what, max);
			return -1;
		}
		snprintf(out[(*n)++], 64, "%.63s", tok);
	}
	if (!*n) {
		fprintf(stderr, "agora-sim robustness: --%s: empty\n", what);
		return -1;
	}
	return 0;
}

static int set_policies(rob_t *r, const char *list)
{
	int i;

	if (list) {
		if (add_list(list, r->labels, R_MAX_POL, &r->n_pol, "policies"))
			return -1;
	} else {
		for (i = 0; default_pols[i]; i++)
			if (pol_registry_find(default_pols[i]))
				snprintf(r->labels[r->n_pol++], 64, "%s",
					 default_pols[i]);
	}
	for (i = 0; i < r->n_pol; i++) {
		char *eq = strchr(r->labels[i], '=');

		snprintf(r->pols[i], 64, "%s", eq ? eq + 1 : r->labels[i]);
		if (eq)
			*eq = '\0';
		if (!pol_registry_find(r->pols[i])) {
			fprintf(stderr,
				"agora-sim: unknown policy '%s' (see agora-sim list)\n",
				r->pols[i]);
			return -1;
		}
	}
	return 0;
}

static int set_regimes(rob_t *r, const char *list)
{
	static const char *const def =
		"uniform:1:2,lognormal:1.5,constant:1w,partmax";
	agora_err_t err = { { 0 } };
	char text[R_MAX_REG][64];
	int i, n, k = 0, all = 1;

	for (i = 0; i < r->ctx.trace.n; i++)
		if (r->ctx.trace.jobs[i].time_limit <= 0)
			all = 0;
	if (!list && all)
		snprintf(r->reg_text[k++], 64, "trace");
	if (add_list(list ? list : def, text, R_MAX_REG - k, &n, "regimes"))
		return -1;
	for (i = 0; i < n; i++)
		memcpy(r->reg_text[k++], text[i], 64);
	r->n_reg = k;
	for (i = 0; i < k; i++)
		if (sim_limits_parse(r->reg_text[i], &r->reg[i], &err)) {
			fprintf(stderr, "agora-sim robustness: --regimes: %s\n",
				err.text);
			return -1;
		}
	return 0;
}

static int set_ckpts(rob_t *r, const char *list)
{
	char text[R_MAX_CKPT][64];
	int i;

	if (add_list(list ? list : "continuous,1800", text, R_MAX_CKPT,
		     &r->n_ckpt, "ckpts"))
		return -1;
	for (i = 0; i < r->n_ckpt; i++) {
		if (!strcmp(text[i], "continuous")) {
			r->ckpt[i] = SIM_CKPT_CONTINUOUS;
		} else if (sim_duration_parse(text[i], &r->ckpt[i])) {
			fprintf(stderr,
				"agora-sim robustness: --ckpts: '%s': expected a duration or continuous\n",
				text[i]);
			return -1;
		}
	}
	return 0;
}

static int set_params(rob_t *r, char **params, int n_params)
{
	int i, k;

	for (i = 0; i < n_params; i++) {
		const char *c = strchr(params[i], ':');
		size_t ll = c ? (size_t) (c - params[i]) : 0;
		int found = 0;

		for (k = 0; c && k < r->n_pol; k++)
			if (strlen(r->labels[k]) == ll &&
			    !strncmp(r->labels[k], params[i], ll)) {
				snprintf(r->prm[k], 256, "%.255s", c + 1);
				found = 1;
			}
		if (!found) {
			fprintf(stderr,
				"agora-sim robustness: --params %s: no such policy label\n",
				params[i]);
			return -1;
		}
	}
	return 0;
}

static int parse(int argc, char **argv, rob_t *r)
{
	static const struct option lo[] = {
		CLI_MODEL_OPTIONS,
		{ "policies", required_argument, NULL, 'P' },
		{ "regimes", required_argument, NULL, 'G' },
		{ "ckpts", required_argument, NULL, 'C' },
		{ "json", required_argument, NULL, 'j' },
		{ "plot", required_argument, NULL, 'g' },
		{ "threads", required_argument, NULL, 'T' },
		{ "params", required_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *pols = NULL, *regs = NULL, *ckpts = NULL;
	char *params[R_MAX_POL];
	int ch, m, n_params = 0;
	double d;

	while ((ch = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		m = cli_model_opt(ch, optarg, &r->ctx);
		if (m < 0)
			return -1;
		if (m == 0)
			continue;
		switch (ch) {
		case 'P':
			pols = optarg;
			break;
		case 'G':
			regs = optarg;
			break;
		case 'C':
			ckpts = optarg;
			break;
		case 'j':
			r->json = optarg;
			break;
		case 'g':
			r->plot = optarg;
			break;
		case 'T':
			if (cli_parse_double(optarg, 1, 256, &d) ||
			    d != floor(d)) {
				fprintf(stderr,
					"agora-sim robustness: --threads: '%s' is not in [1, 256]\n",
					optarg);
				return -1;
			}
			r->threads = (int) d;
			break;
		case 'a':
			if (n_params == R_MAX_POL) {
				fprintf(stderr,
					"agora-sim robustness: --params: at most %d\n",
					R_MAX_POL);
				return -1;
			}
			params[n_params++] = optarg;
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
	if (set_policies(r, pols) || set_params(r, params, n_params) ||
	    set_ckpts(r, ckpts) || cli_load_inputs(&r->ctx))
		return -1;
	return set_regimes(r, regs);
}

/* Expected cost of a policy's run, for the order the workers take the
 * tasks in (longest first, so that the last task to finish is a short
 * one: Graham's LPT rule); results do not depend on it.  Slurm's plan
 * (the will-run test of every tested job at every event) costs the most,
 * then the auction, then the preempting baselines. */
static int pol_cost(const char *pol)
{
	static const char *const rank[] = {
		"backfill", "backfill-fs", "agora-order",
		"agora",    "tiresias",    NULL,
	};
	int i;

	for (i = 0; rank[i]; i++)
		if (!strcmp(pol, rank[i]))
			return i;
	return i;
}

/* Policies that read no checkpoint field of their snapshot (pol_job_t
 * ckpt_s, last_ckpt): their run under another checkpoint cost is the
 * same run when the simulator says so (sim_result_t.ckpt_alt_same: no
 * job requeued, every job's work the same bit for bit under the others).
 * agora-order is agora's filter, charge, estimates and credit order, then
 * Slurm's plan (pol_agora.c order_decide()); only the auction's leases
 * and losers read checkpoints (pol_agora_base.c).  Like every policy but
 * srtf they run with sim_params_t.hide_remaining (cli_run_one()): they
 * read nothing of the work whose rounding a checkpoint split moves. */
static bool ckpt_blind(const char *pol)
{
	return !strcmp(pol, "fifo") || !strcmp(pol, "backfill") ||
	       !strcmp(pol, "backfill-fs") || !strcmp(pol, "agora-order");
}

/* Task k of a checkpoint-blind policy at a checkpoint cost but the first:
 * its run is shared with the first cost's when it can be (share_runs()). */
static bool task_shared(const rob_t *r, int k)
{
	return r->n_ckpt > 1 && (k / r->n_pol) % r->n_ckpt > 0 &&
	       ckpt_blind(r->pols[k % r->n_pol]);
}

static void task_order(rob_t *r)
{
	int i, k, n = 0, c, per = r->n_pol, top = pol_cost("");

	for (c = 0; c <= top; c++)
		for (i = 0; i < r->n_tasks / per; i++)
			for (k = 0; k < per; k++)
				if (pol_cost(r->pols[k]) == c &&
				    !task_shared(r, i * per + k))
					r->order[n++] = i * per + k;
	r->n_run = n;
	for (k = 0; k < r->n_tasks; k++)
		if (task_shared(r, k))
			r->order[n++] = k;
}

/* dst := src's results (the run itself is not repeated: no time) */
static int run_copy(cli_run_t *dst, const cli_run_t *src)
{
	sim_summary_t *d = &dst->sum;
	const sim_summary_t *o = &src->sum;

	dst->res = src->res;
	dst->res.jobs = NULL;
	dst->res.util = NULL;
	dst->res.n_bins = 0;
	*d = *o;
	d->tenant_stretch = NULL;
	d->tenant_jobs = NULL;
	d->app_rho = NULL;
	d->app_gpuh = NULL;
	dst->wall_s = dst->cpu_s = 0;
	dst->livelock = src->livelock;
	dst->app_bids = src->app_bids;
	memcpy(dst->error, src->error, sizeof(dst->error));
#define DUP(f, n)                                                              \
	do {                                                                   \
		if (o->f && (n) > 0) {                                         \
			d->f = malloc((size_t) (n) * sizeof(*o->f));           \
			if (!d->f)                                             \
				return -1;                                     \
			memcpy(d->f, o->f, (size_t) (n) * sizeof(*o->f));      \
		}                                                              \
	} while (0)
	DUP(tenant_stretch, o->n_tenants);
	DUP(tenant_jobs, o->n_tenants);
	DUP(app_rho, o->n_apps);
	DUP(app_gpuh, o->n_apps);
#undef DUP
	return 0;
}

/* The shared tasks (order[n_run..n_tasks)): a copy of the first checkpoint
 * cost's run where the simulator found it the same run, else queued to
 * run (order[n_run..] again, n_run moved past them). */
static int share_runs(rob_t *r)
{
	int i, n = r->n_run, per = r->n_pol, shared = 0;

	for (i = r->n_run; i < r->n_tasks; i++) {
		int k = r->order[i];
		int src = (k / per - (k / per) % r->n_ckpt) * per + k % per;

		if (!r->runs[src].livelock && r->runs[src].res.ckpt_alt_same) {
			if (run_copy(&r->runs[k], &r->runs[src]))
				return -1;
			shared++;
		} else {
			r->order[n++] = k;
		}
	}
	r->n_run = n;
	/* the shared ones last, so that order[0..n_run) are those that ran */
	for (i = 0; i < r->n_tasks && n < r->n_tasks; i++)
		if (task_shared(r, i) && r->runs[i].res.ckpt_alt_same &&
		    !r->runs[i].livelock)
			r->order[n++] = i;
	r->n_shared = shared;
	return 0;
}

/* The runs' CPU time, and the wall time they would take on nt idle
 * cores: their CPU times list-scheduled in the workers' order (each task
 * to the worker that is free first), the bound that CPU contention on a
 * shared host hides. */
static void cpu_report(FILE *f, const rob_t *r, int nt)
{
	double busy[256] = { 0 }, sum = 0, span = 0;
	int i, w, m;

	nt = nt < 1 ? 1 : nt > 256 ? 256 : nt;
	for (i = 0; i < r->n_tasks; i++) {
		double c = r->runs[r->order[i]].cpu_s;

		for (m = 0, w = 1; w < nt; w++)
			if (busy[w] < busy[m])
				m = w;
		busy[m] += c;
		sum += c;
	}
	for (w = 0; w < nt; w++)
		span = busy[w] > span ? busy[w] : span;
	fprintf(f,
		"CPU time %.1f s; on %d idle cores (the runs' CPU times in the workers' order) %.1f s\n",
		sum, nt, span);
}

static void *worker(void *arg)
{
	rob_t *r = arg;

	for (;;) {
		int k, per = r->n_pol;
		cli_run_t *run;

		pthread_mutex_lock(&r->mu);
		k = r->failed ? r->n_run : r->next++;
		pthread_mutex_unlock(&r->mu);
		if (k >= r->n_run)
			return NULL;
		k = r->order[k];
		run = &r->runs[k];
		if (cli_run_one(&r->tctx[k / per], run)) {
			if (run->livelock) {
				/* a finding, not a failure: the cell says so */
				sim_result_free(&run->res);
				continue;
			}
			pthread_mutex_lock(&r->mu);
			r->failed = 1;
			pthread_mutex_unlock(&r->mu);
			return NULL;
		}
		/* keep the scalars, drop the per-job arrays */
		free(run->res.jobs);
		free(run->res.util);
		run->res.jobs = NULL;
		run->res.util = NULL;
		run->res.n_bins = 0;
	}
}

static void run_workers(rob_t *r, int nt)
{
	pthread_t th[256];
	int i, started = 0;

	for (i = 0; i < nt; i++)
		if (!pthread_create(&th[i], NULL, worker, r))
			started++;
		else
			break;
	if (!started)
		worker(r);
	for (i = 0; i < started; i++)
		pthread_join(th[i], NULL);
}

static int run_all(rob_t *r)
{
	int i, k, nt;

	r->tctx = calloc((size_t) (r->n_reg * r->n_ckpt), sizeof(*r->tctx));
	r->n_tasks = r->n_reg * r->n_ckpt * r->n_pol;
	r->runs = calloc((size_t) r->n_tasks, sizeof(*r->runs));
	r->order = calloc((size_t) r->n_tasks, sizeof(*r->order));
	if (!r->tctx || !r->runs || !r->order)
		return -1;
	task_order(r);
	for (i = 0; i < r->n_reg * r->n_ckpt; i++) {
		sim_params_t *p = &r->tctx[i].params;

		r->tctx[i] = r->ctx;
		r->tctx[i].progress = false;
		p->limits = r->reg[i / r->n_ckpt];
		p->ckpt_s = r->ckpt[i % r->n_ckpt];
		/* the first cost's runs say whether they hold for the others */
		p->n_ckpt_alt = 0;
		for (k = 1; i % r->n_ckpt == 0 && k < r->n_ckpt; k++)
			p->ckpt_alt[p->n_ckpt_alt++] =
				r->ckpt[i % r->n_ckpt + k];
		for (k = 0; k < r->n_pol; k++) {
			cli_run_t *run = &r->runs[i * r->n_pol + k];

			snprintf(run->policy, sizeof(run->policy), "%s",
				 r->pols[k]);
			snprintf(run->params, sizeof(run->params), "%s",
				 r->prm[k]);
		}
	}
	nt = r->threads > 0 ? r->threads : (int) sysconf(_SC_NPROCESSORS_ONLN);
	if (nt < 1)
		nt = 1;
	if (nt > r->n_tasks)
		nt = r->n_tasks;
	if (nt > 256)
		nt = 256;
	r->n_threads = nt;
	pthread_mutex_init(&r->mu, NULL);
	run_workers(r, nt);
	/* then the runs the first checkpoint cost's could not stand for */
	if (!r->failed && r->n_run < r->n_tasks) {
		int first = r->n_run;

		if (share_runs(r)) {
			r->failed = 1;
		} else if (first < r->n_run) {
			r->next = first;
			run_workers(r, nt);
		}
	}
	pthread_mutex_destroy(&r->mu);
	/* labels only now: an empty label keeps the runs quiet */
	for (i = 0; i < r->n_tasks; i++)
		snprintf(r->runs[i].label, sizeof(r->runs[i].label), "%s",
			 r->labels[i % r->n_pol]);
	return r->failed ? -1 : 0;
}

int robustness_main(int argc, char **argv)
{
	rob_t *r = calloc(1, sizeof(*r));
	double t0 = cli_now();
	int i, rc = 2;

	if (!r)
		return 1;
	cli_ctx_init(&r->ctx);
	if (parse(argc, argv, r))
		goto out;
	fprintf(stderr,
		"agora-sim robustness: %d regimes x %d checkpoint costs x %d policies = %d runs\n",
		r->n_reg, r->n_ckpt, r->n_pol, r->n_reg * r->n_ckpt * r->n_pol);
	rc = 1;
	if (run_all(r))
		goto out;
	rob_print_table(stdout, r);
	rob_print_goals(stdout, r);
	if (r->json && rob_write_json(r))
		goto out;
	if (r->plot && rob_write_plot(r))
		goto out;
	printf("\nwall time %.1f s (%d runs)\n", cli_now() - t0, r->n_tasks);
	cpu_report(stdout, r, r->n_threads);
	if (r->n_shared)
		printf("%d runs not repeated: a policy blind to checkpoints (fifo, backfill, backfill-fs, agora-order) under a later checkpoint cost, where the simulator found its run under the first cost the same run\n",
		       r->n_shared);
	rc = 0;
out:
	for (i = 0; r->runs && i < r->n_tasks; i++) {
		sim_result_free(&r->runs[i].res);
		sim_summary_free(&r->runs[i].sum);
	}
	free(r->runs);
	free(r->order);
	free(r->tctx);
	trace_free(&r->ctx.trace);
	cli_apps_free(&r->ctx);
	pol_cluster_destroy(&r->ctx.cluster);
	free(r);
	return rc;
}
