/*
 * federation.c - agora-sim federation: one trace on several clusters of a
 * federation, dispatched by Slurm's sibling rule, at random, to the least
 * loaded cluster, or by the core's batched auction (pol_fed_auction) with
 * and without the replica placement slow path (pol_fed_place)
 * (doc/federation.md, "Simulated federation").  This file: the options,
 * the --federation spec and the scenario (jobs, datasets, where the data
 * starts); fed_dispatch.c runs a dispatcher, fed_report.c the metrics and
 * the output; fed_int.h their types.
 *
 *   agora-sim federation --trace T --federation c1:40x8,c2:24x8 --json OUT
 *
 * The model, in short: every cluster is a pool of GPUs scheduled FCFS with
 * conservative backfill on exact run times, so a job's start is fixed when
 * it joins a cluster's queue and that start is also the cluster's will-run
 * answer.  Each job has an origin cluster and a dataset; a job that runs
 * on a cluster without a usable replica of its dataset first holds its
 * GPUs for the transfer (bytes / link rate), then computes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <json-c/json.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pol_fed.h"
#include "sim_cli.h"
#include "fed_int.h"

const char *const fed_disp_names[FED_N_DISP] = {
	"first-start", "random", "least-loaded", "agora", "agora+data",
};

static void fed_usage(FILE *f)
{
	fputs("usage: agora-sim federation --trace FILE --federation SPEC --json OUT\n"
	      "                            [--plot DIR] [options]\n"
	      "  --federation SPEC      NAME:NODESxGPUS,... e.g. c1:40x8,c2:24x8,c3:16x8\n"
	      "  --dispatchers d1,...   first-start, random, least-loaded, agora,\n"
	      "                         agora+data (default: all five)\n"
	      "  --datasets-per-tenant K  datasets of each tenant (default 4)\n"
	      "  --data-size MIN:MAX    replica bytes, log-uniform (default 1e11:1e13)\n"
	      "  --link B               transfer rate into every cluster, bytes/s\n"
	      "                         (default 1.25e9, 10 Gb/s)\n"
	      "  --round S              auction period (default 2 s)\n"
	      "  --queue-weight W       agora, agora+data: the core's weight of the wait\n"
	      "                         a job adds to a cluster's queue (default 1;\n"
	      "                         0: wait + transfer only)\n"
	      "  --place-every S        agora+data: replica placement period, on the\n"
	      "                         mean demand of the period before (default 4h,\n"
	      "                         chosen on days 0-6 of the Philly window)\n"
	      "  --bin S                demand/supply series bin (default 3600 s)\n"
	      "  --filter none|pollux   trace filter (default none)\n"
	      "  --window FROM:DAYS     only the jobs submitted in days [FROM, FROM+DAYS)\n"
	      "                         (day 0: the UTC day of the first submit)\n"
	      "  --seed N               scenario seed (default 1)\n"
	      "  --limits REGIME        what agora's plans know of run times: exact (the\n"
	      "                         default: the run times), or time limits drawn as\n"
	      "                         agora-sim run draws them (uniform:A:B,\n"
	      "                         lognormal:SIGMA, constant:T, partmax[:T], trace):\n"
	      "                         agora bids as agorad does: will-run on the\n"
	      "                         running jobs held to their limits, the jobs\n"
	      "                         queued there first (pol_fed_start_choose);\n"
	      "                         every job still runs its run time\n"
	      "  --hold limit|history   with --limits, the hold of a job in the queue\n"
	      "                         term: limit (the default, agorad's): 0.693 x\n"
	      "                         its limit; history: the mean run time of its\n"
	      "                         tenant's 2 latest completed jobs of its GPU\n"
	      "                         count, capped by its limit, else 0.693 x limit\n"
	      "  --data-placement P     where the datasets start: skewed (three in four on\n"
	      "                         the smallest cluster; default), random (each on a\n"
	      "                         cluster drawn uniformly, seeded), home (all of a\n"
	      "                         tenant's on its home cluster: tenants by their\n"
	      "                         GPU-hours of the week before the window, largest\n"
	      "                         first, each to the least loaded cluster per GPU)\n"
	      "  --plot DIR             PNGs: per-cluster demand/supply, JCT CDF\n"
	      "scenario: tenant t's K datasets; a job reads one drawn uniformly (seeded);\n"
	      "each dataset starts on one cluster (--data-placement); a job's origin is\n"
	      "its dataset's first cluster.\n"
	      "metrics: mean_jct_s, mean_queue_s (start - submit); worst_demand_supply =\n"
	      "time-averaged (bins of --bin) worst cluster demand/supply, demand = GPUs of\n"
	      "pending and running jobs by dataset split over its usable replicas;\n"
	      "gpu_hours_moved = GPU-hours (GPUs x run time, transfer excluded) of jobs\n"
	      "run on a cluster other than their origin.  A job on a cluster without a\n"
	      "usable replica first holds its GPUs for the transfer (bytes / link rate).\n",
	      f);
}

/* ---- the --federation spec --------------------------------------------- */

static int fed_spec_err(int k, const char *tok, const char *field,
			const char *why)
{
	fprintf(stderr,
		"agora-sim federation: --federation: entry %d '%s': %s: %s\n",
		k, tok, field, why);
	return -1;
}

static bool fed_name_ok(const char *s, size_t len)
{
	size_t i;

	if (!len || len >= POL_FED_NAME_LEN)
		return false;
	for (i = 0; i < len; i++)
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789._-",
			    s[i]))
			return false;
	return true;
}

/* one "NAME:NODESxGPUS" entry (the k-th, 1-based) into s */
static int fed_spec_entry(int k, const char *tok, fed_site_t *s)
{
	const char *colon = strchr(tok, ':'), *g;
	char *end;
	long nodes, gpn;

	if (!colon)
		return fed_spec_err(k, tok, "NAME", "expected NAME:NODESxGPUS");
	if (!fed_name_ok(tok, (size_t) (colon - tok)))
		return fed_spec_err(
			k, tok, "NAME",
			"1-63 letters, digits, '.', '_' or '-' expected");
	snprintf(s->name, sizeof(s->name), "%.*s", (int) (colon - tok), tok);
	errno = 0;
	nodes = strtol(colon + 1, &end, 10);
	if (errno || end == colon + 1 || *end != 'x' || nodes < 1 ||
	    nodes > 100000)
		return fed_spec_err(k, tok, "NODES",
				    "an integer 1-100000 then 'x' expected");
	g = end + 1;
	errno = 0;
	gpn = strtol(g, &end, 10);
	if (errno || end == g || *end || gpn < 1 || gpn > 1024)
		return fed_spec_err(
			k, tok, "GPUS",
			"GPUs per node, an integer 1-1024, expected");
	s->nodes = (int) nodes;
	s->gpn = (int) gpn;
	s->gpus = s->nodes * s->gpn;
	return 0;
}

static int fed_spec_parse(const char *spec, fed_scen_t *sc)
{
	char buf[4096], *tok, *save = NULL;
	int k = 0, i;

	if (!spec || !*spec ||
	    snprintf(buf, sizeof(buf), "%s", spec) >= (int) sizeof(buf)) {
		fprintf(stderr,
			"agora-sim federation: --federation: empty or too long\n");
		return -1;
	}
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (k == FED_MAX_SITES)
			return fed_spec_err(k + 1, tok, "NAME",
					    "at most 64 clusters");
		if (fed_spec_entry(k + 1, tok, &sc->site[k]))
			return -1;
		for (i = 0; i < k; i++)
			if (!strcmp(sc->site[i].name, sc->site[k].name))
				return fed_spec_err(k + 1, tok, "NAME",
						    "given twice");
		k++;
	}
	if (!k) {
		fprintf(stderr,
			"agora-sim federation: --federation: no cluster given\n");
		return -1;
	}
	sc->n_sites = k;
	return 0;
}

/* ---- options ------------------------------------------------------------ */

static const struct option fed_lopts[] = {
	{ "trace", required_argument, NULL, 't' },
	{ "federation", required_argument, NULL, 'F' },
	{ "json", required_argument, NULL, 'j' },
	{ "plot", required_argument, NULL, 'g' },
	{ "dispatchers", required_argument, NULL, 'd' },
	{ "filter", required_argument, NULL, 'f' },
	{ "seed", required_argument, NULL, 's' },
	{ "datasets-per-tenant", required_argument, NULL, 'K' },
	{ "data-size", required_argument, NULL, 'Z' },
	{ "link", required_argument, NULL, 'L' },
	{ "round", required_argument, NULL, 'r' },
	{ "queue-weight", required_argument, NULL, 'Q' },
	{ "place-every", required_argument, NULL, 'P' },
	{ "bin", required_argument, NULL, 'B' },
	{ "window", required_argument, NULL, 'W' },
	{ "data-placement", required_argument, NULL, 'D' },
	{ "limits", required_argument, NULL, 'X' },
	{ "hold", required_argument, NULL, 'H' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int fed_bad(const char *opt, const char *arg, const char *why)
{
	fprintf(stderr, "agora-sim federation: --%s: '%s': %s\n", opt, arg,
		why);
	return -1;
}

static int fed_dur(const char *opt, const char *arg, int64_t lo, int64_t *out)
{
	if (sim_duration_parse(arg, out) || *out < lo)
		return fed_bad(opt, arg, "expected a duration (s, or 5m, 1d)");
	return 0;
}

/* "A:B" (--data-size MIN:MAX, --window FROM:DAYS) into *a in [a_lo, a_hi]
 * and *b in [b_lo, b_hi] (b_lo NAN: at least *a); why[0..2] name what is
 * expected of the whole, of A and of B.  0, or -1 with a message. */
static int fed_pair(const char *opt, const char *arg, double a_lo, double a_hi,
		    double b_lo, double b_hi, const char *const why[3],
		    double *a, double *b)
{
	char buf[128], *colon;

	snprintf(buf, sizeof(buf), "%s", arg);
	colon = strchr(buf, ':');
	if (!colon)
		return fed_bad(opt, arg, why[0]);
	*colon = '\0';
	if (cli_parse_double(buf, a_lo, a_hi, a))
		return fed_bad(opt, arg, why[1]);
	if (cli_parse_double(colon + 1, isnan(b_lo) ? *a : b_lo, b_hi, b))
		return fed_bad(opt, arg, why[2]);
	return 0;
}

/* the value options; 0, -1 on a bad value, 1 when ch is none of them */
static int fed_value_opt(int ch, const char *arg, fed_opts_t *o)
{
	double d;

	switch (ch) {
	case 's':
		if (cli_parse_double(arg, 0, 1e18, &d) || d != floor(d))
			return fed_bad("seed", arg, "expected an integer >= 0");
		o->seed = (uint64_t) d;
		return 0;
	case 'K':
		if (cli_parse_double(arg, 1, 64, &d) || d != floor(d))
			return fed_bad("datasets-per-tenant", arg,
				       "expected an integer 1-64");
		o->per_tenant = (int) d;
		return 0;
	case 'Z': {
		static const char *const why[3] = {
			"expected MIN:MAX (bytes)",
			"MIN: expected 1-1e18 bytes",
			"MAX: expected MIN-1e18 bytes"
		};

		return fed_pair("data-size", arg, 1, 1e18, NAN, 1e18, why,
				&o->size_min, &o->size_max);
	}
	case 'L':
		if (cli_parse_double(arg, 1, 1e15, &o->link))
			return fed_bad("link", arg, "expected 1-1e15 bytes/s");
		return 0;
	case 'r':
		return fed_dur("round", arg, 1, &o->round_s);
	case 'Q':
		if (cli_parse_double(arg, 0, 1000, &o->w_queue))
			return fed_bad("queue-weight", arg,
				       "expected a number 0-1000");
		return 0;
	case 'P':
		return fed_dur("place-every", arg, 60, &o->place_s);
	case 'B':
		return fed_dur("bin", arg, 60, &o->bin_s);
	case 'X': {
		agora_err_t err = { { 0 } };

		if (!strcmp(arg, "exact")) {
			o->knows_limits = false;
			return 0;
		}
		if (sim_limits_parse(arg, &o->limits, &err)) {
			fprintf(stderr, "agora-sim federation: %s (or exact)\n",
				err.text);
			return -1;
		}
		o->knows_limits = true;
		return 0;
	}
	case 'H':
		if (strcmp(arg, "history") && strcmp(arg, "limit"))
			return fed_bad("hold", arg,
				       "expected history or limit");
		o->hold_history = !strcmp(arg, "history");
		return 0;
	case 'D':
		if (strcmp(arg, "home") && strcmp(arg, "random") &&
		    strcmp(arg, "skewed"))
			return fed_bad("data-placement", arg,
				       "expected home, random or skewed");
		o->placement = arg;
		return 0;
	case 'W': {
		static const char *const why[3] = {
			"expected FROM:DAYS", "FROM: expected a day >= 0",
			"DAYS: expected a number > 0"
		};

		return fed_pair("window", arg, 0, 1e5, 0.001, 1e5, why,
				&o->window_from, &o->window_days);
	}
	default:
		return 1;
	}
}

static void fed_opts_default(fed_opts_t *o)
{
	memset(o, 0, sizeof(*o));
	o->dispatchers = "first-start,random,least-loaded,agora,agora+data";
	o->filter = "none";
	o->seed = 1;
	o->per_tenant = 4;
	o->size_min = 1e11;
	o->size_max = 1e13;
	o->link = 1.25e9;
	o->round_s = 2;
	o->w_queue = 1.0;
	o->place_s = 4 * 3600;
	o->bin_s = 3600;
	o->placement = "skewed";
}

static int fed_parse(int argc, char **argv, fed_opts_t *o)
{
	int ch, m;

	fed_opts_default(o);
	while ((ch = getopt_long(argc, argv, "h", fed_lopts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			fed_usage(stdout);
			exit(0);
		case 't':
			o->trace = optarg;
			break;
		case 'F':
			o->spec = optarg;
			break;
		case 'j':
			o->json = optarg;
			break;
		case 'g':
			o->plot = optarg;
			break;
		case 'd':
			o->dispatchers = optarg;
			break;
		case 'f':
			o->filter = optarg;
			break;
		default:
			m = fed_value_opt(ch, optarg, o);
			if (m < 0)
				return -1;
			if (m > 0) {
				fed_usage(stderr);
				return -1;
			}
		}
	}
	if (optind < argc) {
		fprintf(stderr,
			"agora-sim federation: unexpected argument '%s'\n",
			argv[optind]);
		return -1;
	}
	if (!o->trace || !o->spec || !o->json) {
		fprintf(stderr,
			"agora-sim federation: --trace, --federation and --json are required\n");
		return -1;
	}
	return 0;
}

/* --dispatchers into list[], in the order given; the count, or -1 */
static int fed_disp_parse(const char *arg, fed_disp_t *list)
{
	char buf[512], *tok, *save = NULL;
	int n = 0, k, i;

	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (k = 0; k < FED_N_DISP; k++)
			if (!strcmp(tok, fed_disp_names[k]))
				break;
		for (i = 0; i < n && k < FED_N_DISP; i++)
			if (list[i] == (fed_disp_t) k)
				k = FED_N_DISP + 1;
		if (k >= FED_N_DISP) {
			fprintf(stderr,
				"agora-sim federation: --dispatchers: %s dispatcher '%s' (known: first-start, random, least-loaded, agora, agora+data)\n",
				k == FED_N_DISP ? "unknown" : "repeated", tok);
			return -1;
		}
		list[n++] = (fed_disp_t) k;
	}
	if (!n) {
		fprintf(stderr,
			"agora-sim federation: --dispatchers: none given\n");
		return -1;
	}
	return n;
}

/* ---- the scenario ------------------------------------------------------ */

static int fed_smallest(const fed_scen_t *sc)
{
	int c, best = 0;

	for (c = 1; c < sc->n_sites; c++)
		if (sc->site[c].gpus < sc->site[best].gpus)
			best = c;
	return best;
}

/* The cluster of dataset d's first replica: three in four datasets (every
 * tenant's k-th for k mod 4 != 3) on the smallest cluster, the others on
 * the other clusters in turn. */
static int fed_first_site(const fed_scen_t *sc, int d, int k)
{
	int small = fed_smallest(sc), other;

	if (sc->n_sites == 1 || k % 4 != 3)
		return small;
	other = (d / 4) % (sc->n_sites - 1);
	return other >= small ? other + 1 : other;
}

/* home[t]: tenants by GPU-seconds of the previous week, largest first,
 * each to the cluster with the least of them per GPU (ties: lower index) */
static void fed_homes(const fed_opts_t *o, const fed_scen_t *sc, int n_tenants,
		      int *home)
{
	double load[FED_MAX_SITES] = { 0 };
	bool *done = calloc((size_t) n_tenants + 1, sizeof(*done));
	int k, t, c;

	for (t = 0; t < n_tenants; t++)
		home[t] = 0;
	if (!done)
		return;
	for (k = 0; k < n_tenants; k++) {
		int best = -1, bc = 0;
		double bg = -1, g;

		for (t = 0; t < n_tenants; t++) {
			g = t < o->prev_n ? o->prev_gpu_s[t] : 0;
			if (!done[t] && g > bg) {
				bg = g;
				best = t;
			}
		}
		for (c = 1; c < sc->n_sites; c++)
			if ((load[c] + bg) / sc->site[c].gpus <
			    (load[bc] + bg) / sc->site[bc].gpus)
				bc = c;
		done[best] = true;
		home[best] = bc;
		load[bc] += bg;
	}
	free(done);
}

static int fed_catalog_build(const fed_opts_t *o, const trace_t *t,
			     fed_scen_t *sc)
{
	pol_fed_catalog_t *cat = &sc->cat;
	uint64_t rng = o->seed * 0x9e3779b97f4a7c15ULL + 0x5eed;
	int c, d, n_tenants = t->n_tenants > 0 ? t->n_tenants : 1;
	int home[1024];

	if (n_tenants > 1024) {
		errno = EINVAL;
		return -1;
	}
	fed_homes(o, sc, n_tenants, home);

	cat->n_sites = sc->n_sites;
	cat->n_datasets = n_tenants * o->per_tenant;
	cat->sites = calloc((size_t) sc->n_sites, sizeof(*cat->sites));
	cat->datasets = calloc((size_t) cat->n_datasets,
			       sizeof(*cat->datasets));
	if (!cat->sites || !cat->datasets)
		return -1;
	for (c = 0; c < sc->n_sites; c++) {
		snprintf(cat->sites[c].name, POL_FED_NAME_LEN, "%s",
			 sc->site[c].name);
		cat->sites[c].link_bytes_per_s = o->link;
	}
	for (d = 0; d < cat->n_datasets; d++) {
		pol_fed_dataset_t *ds = &cat->datasets[d];
		int tn = d / o->per_tenant, k = d % o->per_tenant;

		snprintf(ds->name, sizeof(ds->name), "%.50s/d%d",
			 t->n_tenants > 0 ? t->tenants[tn] : "all", k);
		ds->bytes = o->size_min *
			    pow(o->size_max / o->size_min, sim_rand_unit(&rng));
		if (!strcmp(o->placement, "random"))
			ds->where = (uint64_t) 1 << (int) (sim_rand_unit(&rng) *
							   sc->n_sites);
		else if (!strcmp(o->placement, "home"))
			ds->where = (uint64_t) 1 << home[tn];
		else
			ds->where = (uint64_t) 1 << fed_first_site(sc, d, k);
	}
	return 0;
}

static int fed_job_cmp(const void *a, const void *b)
{
	const fed_job_t *x = a, *y = b;

	if (x->submit != y->submit)
		return x->submit < y->submit ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* jobs of the trace with a dataset drawn per job (seeded) and the origin
 * of that dataset; jobs larger than every cluster are skipped */
static int fed_scen_build(const fed_opts_t *o, const trace_t *t, fed_scen_t *sc)
{
	int i, c;
	int64_t partmax = sim_limits_partmax(&o->limits, t->jobs, t->n);

	if (fed_catalog_build(o, t, sc))
		return -1;
	sc->jobs = calloc((size_t) t->n + 1, sizeof(*sc->jobs));
	if (!sc->jobs)
		return -1;
	for (i = 0; i < t->n; i++) {
		const sim_job_t *s = &t->jobs[i];
		fed_job_t *j = &sc->jobs[sc->n];
		/* drawn from the seed and the job's id: the same in a window */
		uint64_t rng = o->seed * 0x2545f4914f6cdd1dULL +
			       (uint64_t) s->id * 0x9e3779b97f4a7c15ULL;
		int k = (int) (sim_rand_unit(&rng) * o->per_tenant);

		j->eligible = 0;
		for (c = 0; c < sc->n_sites; c++)
			if (s->gpus > 0 && s->gpus <= sc->site[c].gpus)
				j->eligible |= (uint64_t) 1 << c;
		if (!j->eligible) {
			sc->skipped++;
			continue;
		}
		j->id = s->id;
		j->submit = s->submit;
		j->dur = s->duration > 0 ? s->duration : 1;
		j->limit = j->dur;
		if (o->knows_limits) {
			/* drawn from the seed and the id, as the dataset */
			uint64_t lrng = o->seed * 0x94d049bb133111ebULL +
					(uint64_t) s->id *
						0xd6e8feb86659fd93ULL;

			if (o->limits.kind == SIM_LIMITS_TRACE &&
			    s->time_limit <= 0) {
				fprintf(stderr,
					"agora-sim federation: %s: --limits trace: job %lld has no time_limit\n",
					o->trace, (long long) s->id);
				return -1;
			}
			j->limit = sim_limit_draw(&o->limits, s, partmax,
						  &lrng);
		}
		j->gpus = s->gpus;
		j->tenant = s->tenant;
		j->dataset = (s->tenant > 0 ? s->tenant : 0) * o->per_tenant +
			     (k < o->per_tenant ? k : o->per_tenant - 1);
		j->origin = __builtin_ctzll(sc->cat.datasets[j->dataset].where);
		sc->n++;
	}
	qsort(sc->jobs, (size_t) sc->n, sizeof(*sc->jobs), fed_job_cmp);
	sc->t0 = sc->n ? sc->jobs[0].submit : 0;
	sc->t_last = sc->n ? sc->jobs[sc->n - 1].submit : 0;
	return 0;
}

static void fed_scen_free(fed_scen_t *sc)
{
	free(sc->jobs);
	free(sc->cat.sites);
	free(sc->cat.datasets);
	memset(sc, 0, sizeof(*sc));
}

/* ---- the subcommand ----------------------------------------------------- */

static int fed_load(fed_opts_t *o, trace_t *t)
{
	agora_err_t err = { { 0 } };
	trace_filter_t filter;
	char *text;
	int rc;

	if (trace_filter_parse(o->filter, &filter)) {
		fprintf(stderr,
			"agora-sim federation: --filter: '%s' is not none or pollux\n",
			o->filter);
		return -1;
	}
	text = cli_read_file(o->trace, &err);
	if (!text) {
		fprintf(stderr, "agora-sim: %s\n", err.text);
		return -1;
	}
	rc = trace_parse(text, o->trace, filter, t, &err);
	free(text);
	if (rc) {
		fprintf(stderr, "agora-sim: %s\n", err.text);
		return rc;
	}
	if (!t->n) {
		fprintf(stderr, "agora-sim: %s: no job%s\n", o->trace,
			filter != TRACE_FILTER_NONE ? " left after the filter"
						    : "");
		return -1;
	}
	{
		/* the home placement's previous week, before the window */
		int64_t first = INT64_MAX, from, to;
		int i;

		for (i = 0; i < t->n; i++)
			if (t->jobs[i].submit < first)
				first = t->jobs[i].submit;
		/* floored: a submit before 1970 keeps the week on days */
		from = first - ((first % 86400) + 86400) % 86400;
		o->prev_before = o->window_days > 0 && o->window_from >= 7;
		if (o->prev_before)
			from += (int64_t) ((o->window_from - 7) * 86400);
		to = from + 7 * 86400;
		o->prev_n = t->n_tenants > 0 ? t->n_tenants : 1;
		o->prev_gpu_s = calloc((size_t) o->prev_n + 1, sizeof(double));
		if (!o->prev_gpu_s)
			return -1;
		for (i = 0; i < t->n; i++) {
			const sim_job_t *j = &t->jobs[i];

			if (j->submit >= from && j->submit < to &&
			    j->tenant >= 0 && j->tenant < o->prev_n)
				o->prev_gpu_s[j->tenant] +=
					(double) j->gpus * (double) j->duration;
		}
	}
	if (o->window_days > 0) {
		cli_ctx_t ctx;

		cli_ctx_init(&ctx);
		ctx.trace = *t;
		ctx.window_from = o->window_from;
		ctx.window_days = o->window_days;
		rc = cli_window(&ctx);
		*t = ctx.trace;
	}
	return rc;
}

static int fed_run_all(const fed_scen_t *sc, const fed_opts_t *o,
		       fed_run_t *runs, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		double t = cli_now();

		if (fed_simulate(sc, o, &runs[i]) ||
		    fed_summarize(sc, o, &runs[i])) {
			fprintf(stderr,
				"agora-sim federation: %s: simulation failed: %s\n",
				fed_disp_names[runs[i].disp], strerror(errno));
			return -1;
		}
		runs[i].wall_s = cli_now() - t;
	}
	return 0;
}

int federation_main(int argc, char **argv)
{
	fed_opts_t o;
	fed_disp_t list[FED_N_DISP];
	fed_run_t runs[FED_N_DISP];
	fed_scen_t *sc = calloc(1, sizeof(*sc));
	trace_t t;
	double initial = 0, *iseries = NULL;
	int n = 0, i, n_bins = 0, rc = 2;

	memset(runs, 0, sizeof(runs));
	memset(&t, 0, sizeof(t));
	if (!sc)
		return 1;
	if (fed_parse(argc, argv, &o) || fed_spec_parse(o.spec, sc) ||
	    (n = fed_disp_parse(o.dispatchers, list)) < 0 || fed_load(&o, &t))
		goto out;
	rc = 1;
	if (fed_scen_build(&o, &t, sc))
		goto out;
	if (!sc->n) {
		fprintf(stderr,
			"agora-sim federation: %s: no job to simulate (%d larger than every cluster)\n",
			o.trace, sc->skipped);
		rc = 2;
		goto out;
	}
	if (fed_initial(sc, &o, &initial, &iseries, &n_bins))
		goto out;
	fprintf(stderr,
		"agora-sim federation: %s: %d jobs (filter %s, %d dropped, %d larger than every cluster), %d datasets; %d clusters\n",
		o.trace, sc->n, o.filter, t.filtered, sc->skipped,
		sc->cat.n_datasets, sc->n_sites);
	for (i = 0; i < n; i++)
		runs[i].disp = list[i];
	if (fed_run_all(sc, &o, runs, n))
		goto out;
	fed_table(runs, n, initial);
	if (fed_json(o.json, sc, &o, runs, n, initial) ||
	    (o.plot && fed_plots(o.plot, sc, &o, runs, n, iseries, n_bins)))
		goto out;
	rc = 0;
out:
	for (i = 0; i < FED_N_DISP; i++)
		fed_run_free(&runs[i]);
	free(iseries);
	free(o.prev_gpu_s);
	fed_scen_free(sc);
	free(sc);
	trace_free(&t);
	return rc;
}
