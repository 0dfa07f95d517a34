/*
 * federation.c - agora-sim federation: one trace on several clusters of a
 * federation, dispatched by Slurm's sibling rule, at random, to the least
 * loaded cluster, or by the core's batched auction (pol_fed_auction) with
 * and without the replica placement slow path (pol_fed_place)
 * (doc/federation.md, "Simulated federation").
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

#define FED_MAX_SITES 64
#define FED_NEVER     INT64_MAX

typedef enum fed_disp {
	FED_FIRST_START = 0,
	FED_RANDOM,
	FED_LEAST_LOADED,
	FED_AGORA,
	FED_AGORA_DATA,
	FED_N_DISP,
} fed_disp_t;

static const char *const fed_disp_names[FED_N_DISP] = {
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
	      "  --place-every S        agora+data: replica placement period, on the\n"
	      "                         mean demand of the period before (default 4h,\n"
	      "                         chosen on days 0-6 of the Philly window)\n"
	      "  --bin S                demand/supply series bin (default 3600 s)\n"
	      "  --filter none|pollux   trace filter (default none)\n"
	      "  --window FROM:DAYS     only the jobs submitted in days [FROM, FROM+DAYS)\n"
	      "                         (day 0: the UTC day of the first submit)\n"
	      "  --seed N               scenario seed (default 1)\n"
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

typedef struct fed_site {
	char name[POL_FED_NAME_LEN];
	int nodes, gpn, gpus;
} fed_site_t;

typedef struct fed_opts {
	const char *trace, *spec, *json, *plot, *dispatchers, *filter;
	uint64_t seed;
	int per_tenant;
	double size_min, size_max, link;
	int64_t round_s, place_s, bin_s;
	double window_from, window_days; /* --window (days 0: all) */
	const char *placement; /* --data-placement: home, random, skewed */
	/* home: GPU-seconds per tenant in the week before the window (the
	 * trace's first week when it has no such week), malloc'd */
	double *prev_gpu_s;
	int prev_n;
	bool prev_before; /* the week before the window, not the first */
} fed_opts_t;

typedef struct fed_job {
	int64_t id, submit, dur;
	int gpus, dataset, origin;
	uint64_t eligible;
} fed_job_t;

typedef struct fed_scen {
	fed_site_t site[FED_MAX_SITES];
	int n_sites;
	fed_job_t *jobs;
	int n, skipped;
	pol_fed_catalog_t cat; /* one replica per dataset: the start */
	int64_t t0, t_last;
} fed_scen_t;

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
	{ "place-every", required_argument, NULL, 'P' },
	{ "bin", required_argument, NULL, 'B' },
	{ "window", required_argument, NULL, 'W' },
	{ "data-placement", required_argument, NULL, 'D' },
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
	case 'P':
		return fed_dur("place-every", arg, 60, &o->place_s);
	case 'B':
		return fed_dur("bin", arg, 60, &o->bin_s);
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
		j->gpus = s->gpus;
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

/* ---- a cluster's schedule: free GPUs as a step function of time -------- */

/* free[i] GPUs are free on [t[i], t[i+1]); the last step lasts for ever
 * with every GPU free (reservations are finite). */
typedef struct fed_prof {
	int64_t *t;
	int *free;
	int n, cap, total;
} fed_prof_t;

static int fed_prof_init(fed_prof_t *p, int total, int64_t t0)
{
	memset(p, 0, sizeof(*p));
	p->cap = 64;
	p->t = malloc((size_t) p->cap * sizeof(*p->t));
	p->free = malloc((size_t) p->cap * sizeof(*p->free));
	if (!p->t || !p->free)
		return -1;
	p->t[0] = t0;
	p->free[0] = total;
	p->n = 1;
	p->total = total;
	return 0;
}

static void fed_prof_free(fed_prof_t *p)
{
	free(p->t);
	free(p->free);
	memset(p, 0, sizeof(*p));
}

/* forget the steps that ended by now */
static void fed_prof_trim(fed_prof_t *p, int64_t now)
{
	int k = 0;

	while (k + 1 < p->n && p->t[k + 1] <= now)
		k++;
	if (!k)
		return;
	memmove(p->t, p->t + k, (size_t) (p->n - k) * sizeof(*p->t));
	memmove(p->free, p->free + k, (size_t) (p->n - k) * sizeof(*p->free));
	p->n -= k;
}

/* earliest s >= now with g GPUs free on [s, s + len); p trimmed to now */
static int64_t fed_prof_earliest(const fed_prof_t *p, int64_t now, int g,
				 int64_t len)
{
	int64_t s = now;
	int i = 0, j;

	for (;;) {
		for (j = i; j < p->n && (j == i || p->t[j] < s + len); j++)
			if (p->free[j] < g)
				break;
		if (j == p->n || p->t[j] >= s + len || p->free[j] >= g)
			return s;
		i = j + 1;
		if (i >= p->n)
			return p->t[p->n - 1]; /* not reached: all free */
		s = p->t[i];
	}
}

/* index of the step starting at t, split off the step covering t */
static int fed_prof_split(fed_prof_t *p, int64_t t)
{
	int lo = 0, hi = p->n; /* first index with p->t[k] > t */

	while (lo < hi) {
		int mid = (lo + hi) / 2;

		if (p->t[mid] <= t)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && p->t[lo - 1] == t)
		return lo - 1;
	if (p->n == p->cap) {
		int64_t *nt;
		int *nf;

		p->cap *= 2;
		nt = realloc(p->t, (size_t) p->cap * sizeof(*nt));
		if (nt)
			p->t = nt;
		nf = realloc(p->free, (size_t) p->cap * sizeof(*nf));
		if (nf)
			p->free = nf;
		if (!nt || !nf)
			return -1;
	}
	memmove(p->t + lo + 1, p->t + lo, (size_t) (p->n - lo) * sizeof(*p->t));
	memmove(p->free + lo + 1, p->free + lo,
		(size_t) (p->n - lo) * sizeof(*p->free));
	p->t[lo] = t;
	p->free[lo] = lo > 0 ? p->free[lo - 1] : p->total;
	p->n++;
	return lo;
}

/* g GPUs taken on [s, s + len); -1/EPROTO if that overcommits */
static int fed_prof_reserve(fed_prof_t *p, int64_t s, int64_t len, int g)
{
	int a, b, k;

	if (fed_prof_split(p, s) < 0)
		return -1;
	b = fed_prof_split(p, s + len);
	a = fed_prof_split(p, s);
	if (a < 0 || b < 0)
		return -1;
	for (k = a; k < b; k++) {
		p->free[k] -= g;
		if (p->free[k] < 0) { /* never more GPUs taken than exist */
			errno = EPROTO;
			return -1;
		}
	}
	return 0;
}

/* ---- one dispatcher's run ------------------------------------------------ */

typedef struct fed_end {
	int64_t end;
	int gpus, c;
} fed_end_t;

/* a replica that served on [from, to) and was later copied in again */
typedef struct fed_ival {
	int d, c;
	int64_t from, to;
} fed_ival_t;

typedef struct fed_run {
	fed_disp_t disp;
	/* per job: cluster, start (GPUs taken), transfer s, end */
	int *cluster;
	int64_t *start, *xfer, *end;
	/* replica of dataset d on cluster c usable on [from, to) */
	int64_t *rep_from, *rep_to;
	fed_ival_t *hist;
	int n_hist, cap_hist;
	double copied_bytes;
	int copies, drops, placements;
	/* results */
	double mean_jct, p50_jct, p99_jct, mean_queue, mean_xfer;
	double worst, worst_after, worst_assigned;
	/* the hourly bound: per bin the demand over the supply of the whole
	 * federation (jobs moved freely, split as a fluid), its time mean;
	 * the share of the time the worst assigned cluster is within 5% of
	 * it */
	double opt_worst, within_5pct;
	double moved_h, remote_h, xfer_h, job_bytes;
	double site_ds[FED_MAX_SITES], site_asg[FED_MAX_SITES];
	double site_gpu_h[FED_MAX_SITES];
	int site_jobs[FED_MAX_SITES];
	double *series, *assigned; /* n_bins x n_sites */
	int n_bins;
	double wall_s;
} fed_run_t;

typedef struct fed_state {
	const fed_scen_t *sc;
	const fed_opts_t *o;
	fed_run_t *r;
	fed_prof_t prof[FED_MAX_SITES];
	double load[FED_MAX_SITES]; /* GPUs of assigned jobs not ended */
	fed_end_t *heap;            /* assigned jobs by end, a min-heap */
	int n_heap;
	pol_fed_catalog_t cat; /* replicas usable now (sites shared) */
	uint64_t rng;
	int64_t next_place;
} fed_state_t;

static void fed_heap_push(fed_state_t *st, fed_end_t e)
{
	int k = st->n_heap++;

	while (k > 0 && st->heap[(k - 1) / 2].end > e.end) {
		st->heap[k] = st->heap[(k - 1) / 2];
		k = (k - 1) / 2;
	}
	st->heap[k] = e;
}

static fed_end_t fed_heap_pop(fed_state_t *st)
{
	fed_end_t top = st->heap[0], last = st->heap[--st->n_heap];
	int k = 0, c;

	for (;;) {
		c = 2 * k + 1;
		if (c >= st->n_heap)
			break;
		if (c + 1 < st->n_heap && st->heap[c + 1].end < st->heap[c].end)
			c++;
		if (st->heap[c].end >= last.end)
			break;
		st->heap[k] = st->heap[c];
		k = c;
	}
	if (st->n_heap)
		st->heap[k] = last;
	return top;
}

static bool fed_usable(const fed_run_t *r, int n_sites, int d, int c, int64_t t)
{
	size_t k = (size_t) d * (size_t) n_sites + (size_t) c;

	return r->rep_from[k] <= t && t < r->rep_to[k];
}

/* the catalog's replicas: those usable at t, or (t < 0) every replica
 * placed and not being dropped, in flight included */
static void fed_where(const fed_state_t *st, int64_t t, pol_fed_catalog_t *cat)
{
	int d, c, S = st->sc->n_sites;

	for (d = 0; d < cat->n_datasets; d++) {
		uint64_t w = 0;

		for (c = 0; c < S; c++) {
			size_t k = (size_t) d * (size_t) S + (size_t) c;

			if (t < 0 ? st->r->rep_to[k] == FED_NEVER
				  : fed_usable(st->r, S, d, c, t))
				w |= (uint64_t) 1 << c;
		}
		cat->datasets[d].where = w;
	}
}

/* seconds job j holds GPUs before computing on c, dispatched at now */
static int64_t fed_xfer(const fed_state_t *st, const fed_job_t *j, int c,
			int64_t now)
{
	const pol_fed_dataset_t *ds = &st->sc->cat.datasets[j->dataset];

	if (fed_usable(st->r, st->sc->n_sites, j->dataset, c, now))
		return 0;
	return (int64_t) ceil(ds->bytes /
			      st->sc->cat.sites[c].link_bytes_per_s);
}

/* the start a cluster's will-run would give job j at now */
static int64_t fed_plan_start(const fed_state_t *st, const fed_job_t *j, int c,
			      int64_t now)
{
	return fed_prof_earliest(&st->prof[c], now, j->gpus,
				 j->dur + fed_xfer(st, j, c, now));
}

/* job i joins cluster c's queue at now: its start is fixed there */
static int fed_commit(fed_state_t *st, int i, int c, int64_t now)
{
	const fed_job_t *j = &st->sc->jobs[i];
	fed_run_t *r = st->r;
	int64_t x = fed_xfer(st, j, c, now), s;

	s = fed_prof_earliest(&st->prof[c], now, j->gpus, j->dur + x);
	if (fed_prof_reserve(&st->prof[c], s, j->dur + x, j->gpus))
		return -1;
	r->cluster[i] = c;
	r->start[i] = s;
	r->xfer[i] = x;
	r->end[i] = s + x + j->dur;
	st->load[c] += j->gpus;
	fed_heap_push(st, (fed_end_t){ r->end[i], j->gpus, c });
	return 0;
}

/* time moves to now: ended jobs leave the loads, past steps go */
static void fed_advance(fed_state_t *st, int64_t now)
{
	int c;

	while (st->n_heap && st->heap[0].end <= now) {
		fed_end_t e = fed_heap_pop(st);

		st->load[e.c] -= e.gpus;
	}
	for (c = 0; c < st->sc->n_sites; c++)
		fed_prof_trim(&st->prof[c], now);
}

static bool fed_elig(const fed_job_t *j, int c)
{
	return (j->eligible >> c) & 1;
}

/* first-start, random, least-loaded: the cluster for job j at now */
static int fed_pick(fed_state_t *st, const fed_job_t *j, int64_t now)
{
	int c, best = -1, n_elig = __builtin_popcountll(j->eligible), k;
	int64_t s, best_s = FED_NEVER;
	double v, best_v = INFINITY;

	switch (st->r->disp) {
	case FED_RANDOM:
		k = (int) (sim_rand_unit(&st->rng) * n_elig);
		for (c = 0; c < st->sc->n_sites; c++)
			if (fed_elig(j, c) && k-- == 0)
				return c;
		return -1;
	case FED_LEAST_LOADED:
		for (c = 0; c < st->sc->n_sites; c++) {
			v = st->load[c] / st->sc->site[c].gpus;
			if (fed_elig(j, c) && v < best_v) {
				best_v = v;
				best = c;
			}
		}
		return best;
	default: /* first-start: earliest start, ties to the origin */
		for (c = 0; c < st->sc->n_sites; c++) {
			if (!fed_elig(j, c))
				continue;
			s = fed_plan_start(st, j, c, now);
			if (s < best_s || (s == best_s && c == j->origin)) {
				best_s = s;
				best = c;
			}
		}
		return best;
	}
}

/* agora, agora+data: one auction round at now for jobs [i0, i1) */
static int fed_round(fed_state_t *st, int i0, int i1, int64_t now)
{
	int n = i1 - i0, S = st->sc->n_sites, i, c, rc = -1;
	pol_fed_job_t *jobs = calloc((size_t) n, sizeof(*jobs));
	pol_fed_plan_t *plans = calloc((size_t) n * (size_t) S, sizeof(*plans));
	pol_fed_award_t *aw = calloc((size_t) n, sizeof(*aw));
	int free_gpus[FED_MAX_SITES];

	if (!jobs || !plans || !aw)
		goto out;
	fed_where(st, now, &st->cat);
	for (c = 0; c < S; c++)
		free_gpus[c] = st->prof[c].free[0];
	for (i = 0; i < n; i++) {
		const fed_job_t *j = &st->sc->jobs[i0 + i];

		jobs[i].id = j->id;
		jobs[i].gpus = j->gpus;
		jobs[i].dataset = j->dataset;
		jobs[i].eligible = jobs[i].hw_match = j->eligible;
		jobs[i].submit = j->submit;
		for (c = 0; c < S; c++) {
			pol_fed_plan_t *p = &plans[(size_t) i * S + c];

			p->valid = fed_elig(j, c);
			if (p->valid)
				p->start = fed_plan_start(st, j, c, now);
			p->locality = 0.0; /* not modelled: equal everywhere */
		}
	}
	if (pol_fed_auction(NULL, &st->cat, jobs, n, plans, S, free_gpus, now,
			    aw))
		goto out;
	for (i = 0; i < n; i++) {
		const fed_job_t *j = &st->sc->jobs[i0 + i];

		c = aw[i].cluster >= 0 ? aw[i].cluster : j->origin;
		if (!fed_elig(j, c))
			c = __builtin_ctzll(j->eligible);
		if (fed_commit(st, i0 + i, c, now))
			goto out;
	}
	rc = 0;
out:
	free(jobs);
	free(plans);
	free(aw);
	return rc;
}

/* keep the interval of replica k (dataset k / S, cluster k % S) */
static int fed_hist_add(fed_run_t *r, size_t k, int S)
{
	if (r->n_hist == r->cap_hist) {
		int cap = r->cap_hist ? 2 * r->cap_hist : 64;
		fed_ival_t *h = realloc(r->hist, (size_t) cap * sizeof(*h));

		if (!h)
			return -1;
		r->hist = h;
		r->cap_hist = cap;
	}
	r->hist[r->n_hist++] = (fed_ival_t){ (int) (k / (size_t) S),
					     (int) (k % (size_t) S),
					     r->rep_from[k], r->rep_to[k] };
	return 0;
}

/* one move of a placement plan, decided at now */
static int fed_apply_move(fed_state_t *st, const pol_fed_move_t *m, int64_t now)
{
	int S = st->sc->n_sites, c;
	fed_run_t *r = st->r;
	const pol_fed_dataset_t *ds = &st->sc->cat.datasets[m->dataset];
	size_t base = (size_t) m->dataset * (size_t) S;
	int64_t first = FED_NEVER;

	if (m->to >= 0) {
		size_t k = base + (size_t) m->to;

		if (r->rep_to[k] > now && r->rep_from[k] <= now) {
			r->rep_to[k] = FED_NEVER; /* a drop called off */
			return 0;
		}
		if (r->rep_to[k] > r->rep_from[k] && fed_hist_add(r, k, S))
			return -1;
		r->rep_from[k] = now +
				 (int64_t) ceil(ds->bytes /
						st->sc->cat.sites[m->to]
							.link_bytes_per_s);
		r->rep_to[k] = FED_NEVER;
		r->copied_bytes += ds->bytes;
		r->copies++;
		return 0;
	}
	/* a dropped replica serves until another one is usable */
	for (c = 0; c < S; c++)
		if (c != m->from && r->rep_to[base + c] == FED_NEVER &&
		    r->rep_from[base + c] < first)
			first = r->rep_from[base + c];
	r->rep_to[base + m->from] = first == FED_NEVER ? now
				    : first > now      ? first
						       : now;
	r->drops++;
	return 0;
}

/* agora+data: MAST's slow path at now, on the mean GPU demand (pending and
 * running jobs) of each dataset over the period before */
static int fed_place_tick(fed_state_t *st, int64_t now)
{
	const fed_scen_t *sc = st->sc;
	int64_t P = st->o->place_s;
	double *demand = calloc((size_t) sc->cat.n_datasets, sizeof(*demand));
	double supply[FED_MAX_SITES];
	pol_fed_place_result_t res;
	int i, c;

	if (!demand)
		return -1;
	for (i = 0; i < sc->n && sc->jobs[i].submit < now; i++) {
		const fed_job_t *j = &sc->jobs[i];
		int64_t e = st->r->end[i] < now ? st->r->end[i] : now;
		int64_t b = j->submit > now - P ? j->submit : now - P;

		if (e > b)
			demand[j->dataset] += j->gpus * (double) (e - b) / P;
	}
	for (c = 0; c < sc->n_sites; c++)
		supply[c] = sc->site[c].gpus;
	fed_where(st, -1, &st->cat);
	memset(&res, 0, sizeof(res));
	if (pol_fed_place(&st->cat, demand, supply, INT_MAX, false, &res)) {
		free(demand);
		return -1;
	}
	for (i = 0; i < res.n_moves; i++)
		if (fed_apply_move(st, &res.moves[i], now))
			break;
	st->r->placements++;
	pol_fed_place_result_free(&res);
	free(demand);
	return i < res.n_moves ? -1 : 0;
}

static int64_t fed_round_up(int64_t t, int64_t q)
{
	int64_t r = t % q;

	return r == 0 ? t : r > 0 ? t + (q - r) : t - r;
}

/* replica intervals of the scenario's start: the first replicas for ever,
 * no other (from = never, to before any time) */
static void fed_reps_init(const fed_scen_t *sc, int64_t *from, int64_t *to)
{
	int d, c, S = sc->n_sites;

	for (d = 0; d < sc->cat.n_datasets; d++)
		for (c = 0; c < S; c++) {
			size_t k = (size_t) d * (size_t) S + (size_t) c;
			bool has = (sc->cat.datasets[d].where >> c) & 1;

			from[k] = has ? INT64_MIN : FED_NEVER;
			to[k] = has ? FED_NEVER : INT64_MIN;
		}
}

static int fed_run_alloc(const fed_scen_t *sc, fed_run_t *r)
{
	size_t n = (size_t) sc->n + 1,
	       reps = (size_t) sc->cat.n_datasets * (size_t) sc->n_sites + 1;
	int i;

	r->cluster = calloc(n, sizeof(*r->cluster));
	r->start = calloc(n, sizeof(*r->start));
	r->xfer = calloc(n, sizeof(*r->xfer));
	r->end = calloc(n, sizeof(*r->end));
	r->rep_from = calloc(reps, sizeof(*r->rep_from));
	r->rep_to = calloc(reps, sizeof(*r->rep_to));
	if (!r->cluster || !r->start || !r->xfer || !r->end || !r->rep_from ||
	    !r->rep_to)
		return -1;
	for (i = 0; i < sc->n; i++)
		r->end[i] = FED_NEVER;
	fed_reps_init(sc, r->rep_from, r->rep_to);
	return 0;
}

static void fed_run_free(fed_run_t *r)
{
	free(r->cluster);
	free(r->start);
	free(r->xfer);
	free(r->end);
	free(r->rep_from);
	free(r->rep_to);
	free(r->hist);
	free(r->series);
	free(r->assigned);
}

static int fed_state_init(fed_state_t *st, const fed_scen_t *sc,
			  const fed_opts_t *o, fed_run_t *r)
{
	int c;

	memset(st, 0, sizeof(*st));
	st->sc = sc;
	st->o = o;
	st->r = r;
	st->rng = o->seed * 0xbf58476d1ce4e5b9ULL + 0x7a4d;
	st->next_place = r->disp == FED_AGORA_DATA ? sc->t0 + o->place_s
						   : FED_NEVER;
	st->heap = calloc((size_t) sc->n + 1, sizeof(*st->heap));
	st->cat = sc->cat;
	st->cat.datasets = calloc((size_t) sc->cat.n_datasets + 1,
				  sizeof(*st->cat.datasets));
	if (!st->heap || !st->cat.datasets)
		return -1;
	memcpy(st->cat.datasets, sc->cat.datasets,
	       (size_t) sc->cat.n_datasets * sizeof(*st->cat.datasets));
	for (c = 0; c < sc->n_sites; c++)
		if (fed_prof_init(&st->prof[c], sc->site[c].gpus, sc->t0))
			return -1;
	return 0;
}

static void fed_state_free(fed_state_t *st)
{
	int c;

	for (c = 0; c < FED_MAX_SITES; c++)
		fed_prof_free(&st->prof[c]);
	free(st->heap);
	free(st->cat.datasets);
}

static int fed_dispatch(fed_state_t *st, int i, int64_t now)
{
	int c = fed_pick(st, &st->sc->jobs[i], now);

	return c < 0 ? -1 : fed_commit(st, i, c, now);
}

/* the whole trace under r->disp: every job's cluster, start and end */
static int fed_simulate(const fed_scen_t *sc, const fed_opts_t *o, fed_run_t *r)
{
	fed_state_t st;
	bool auction = r->disp == FED_AGORA || r->disp == FED_AGORA_DATA;
	int i = 0, k, rc = -1;
	int64_t now;

	memset(&st, 0, sizeof(st));
	if (fed_run_alloc(sc, r) || fed_state_init(&st, sc, o, r))
		goto out;
	while (i < sc->n) {
		now = auction ? fed_round_up(sc->jobs[i].submit, o->round_s)
			      : sc->jobs[i].submit;
		for (k = i + 1;
		     auction && k < sc->n &&
		     fed_round_up(sc->jobs[k].submit, o->round_s) == now;
		     k++)
			;
		for (; st.next_place <= now; st.next_place += o->place_s)
			if (fed_place_tick(&st, st.next_place))
				goto out;
		fed_advance(&st, now);
		if (auction ? fed_round(&st, i, k, now)
			    : fed_dispatch(&st, i, now))
			goto out;
		i = k;
	}
	rc = 0;
out:
	fed_state_free(&st);
	return rc;
}

/* ---- metrics ------------------------------------------------------------ */

/* Demand/supply per bin of the arrival window [t0, t_last]: the GPUs of
 * jobs between submit and end (pending or running), by dataset split over
 * the replicas usable at the bin's middle (pol_fed_load_compute), and by
 * the cluster each job was given (cluster may be NULL).  Per cluster into
 * series / assigned (n_bins x n_sites); the length-weighted mean of the
 * worst into *worst, from t_after on into *after. */
typedef struct fed_win {
	int64_t t0, t_end, bin;
	int n_bins;
} fed_win_t;

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

/* the hourly optimum and the share of time within 5% of it */
static void fed_optimum(const fed_scen_t *sc, const fed_win_t *w, fed_run_t *r)
{
	double tot = 0, sum = 0, in = 0, len = 0;
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
		len += l;
	}
	r->opt_worst = len > 0 ? sum / len : 0;
	r->within_5pct = len > 0 ? in / len : 0;
}

static int fed_summarize(const fed_scen_t *sc, const fed_opts_t *o,
			 fed_run_t *r)
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
static int fed_initial(const fed_scen_t *sc, const fed_opts_t *o, double *worst,
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

static void fed_table(const fed_run_t *runs, int n, double initial)
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

static int fed_json(const char *path, const fed_scen_t *sc, const fed_opts_t *o,
		    const fed_run_t *runs, int n, double initial)
{
	json_object *top = json_object_new_object();
	int i, rc;

	FED_D(top, "worst_demand_supply_initial", initial);
	json_object_object_add(top, "data_placement",
			       json_object_new_string(o->placement));
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

static int fed_plots(const char *dir, const fed_scen_t *sc, const fed_opts_t *o,
		     const fed_run_t *runs, int n, const double *initial,
		     int n_bins)
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
	{
		/* the home placement's previous week, before the window */
		int64_t first = INT64_MAX, from, to;
		int i;

		for (i = 0; i < t->n; i++)
			if (t->jobs[i].submit < first)
				first = t->jobs[i].submit;
		from = first - first % 86400;
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
