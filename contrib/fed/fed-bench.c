/*
 * fed-bench - the federation core's benchmark: one batched auction round
 * (pol_fed_auction) over many pending federated jobs and clusters, and
 * one placement pass (pol_fed_place) over a large catalog.  Prints times
 * and ratios; asserts nothing about time (a benchmark, not a test).
 *
 *   fed-bench [--jobs N] [--clusters C] [--nodes N] [--gpus G]
 *             [--datasets D] [--rounds R] [--seed S]
 *
 * The plans a real round scores come from each cluster's will-run answer;
 * here they are drawn from a model of C clusters of N nodes of G GPUs
 * each with a random busy fraction: a job starts now where its GPUs are
 * free, later otherwise.  Building them is not timed (agorad asks the
 * clusters in parallel); scoring and deciding the round is.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pol_fed.h"

static uint64_t rng_state = 88172645463325252ULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static double urand(void)
{
	return (double) (rng() >> 11) / 9007199254740992.0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + ts.tv_nsec / 1e9;
}

static long arg_long(const char *name, const char *v, long lo, long hi)
{
	char *end;
	long x;

	errno = 0;
	x = v ? strtol(v, &end, 10) : 0;
	if (!v || errno || *end || x < lo || x > hi) {
		fprintf(stderr, "fed-bench: %s: want an integer in %ld..%ld\n",
			name, lo, hi);
		exit(2);
	}
	return x;
}

/* the naive dispatch the auction replaces: each job to the eligible
 * cluster that starts it first, ignoring data, locality and supply */
static void first_start(const pol_fed_job_t *jobs, int n_jobs,
			const pol_fed_plan_t *plans, int n_cl, int *out)
{
	int i, c;

	for (i = 0; i < n_jobs; i++) {
		const pol_fed_plan_t *row = plans + (size_t) i * n_cl;
		int best = -1;

		for (c = 0; c < n_cl; c++)
			if (row[c].valid && ((jobs[i].eligible >> c) & 1) &&
			    (best < 0 || row[c].start < row[best].start))
				best = c;
		out[i] = best;
	}
}

/* the benchmark's sizes (the command line) and the model it builds */
typedef struct {
	long n_jobs, n_cl, n_nodes, gpn, n_ds, rounds;
	int64_t now;
	pol_fed_catalog_t cat;
	pol_fed_weights_t w;
	pol_fed_job_t *jobs;
	pol_fed_plan_t *plans;
	pol_fed_award_t *out;
	int *free_gpus, *naive;
	double *demand, supply[64];
	long with_data;
} bench_t;

/* what a run measured */
typedef struct {
	double t_auction, t_place;
	long local_auction, local_naive;
	double xfer_auction, xfer_naive;
	pol_fed_place_result_t res;
} bench_result_t;

/* 0 to run, else the exit status (2 for bad usage, 0 for --help) + 1 */
static int parse_args(int argc, char **argv, bench_t *b)
{
	long i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--jobs"))
			b->n_jobs = arg_long(a, v, 1, 10000000);
		else if (!strcmp(a, "--clusters"))
			b->n_cl = arg_long(a, v, 1, 64);
		else if (!strcmp(a, "--nodes"))
			b->n_nodes = arg_long(a, v, 1, 1000000);
		else if (!strcmp(a, "--gpus"))
			b->gpn = arg_long(a, v, 1, 64);
		else if (!strcmp(a, "--datasets"))
			b->n_ds = arg_long(a, v, 1, 1000000);
		else if (!strcmp(a, "--rounds"))
			b->rounds = arg_long(a, v, 1, 1000);
		else if (!strcmp(a, "--seed"))
			rng_state = (uint64_t) arg_long(a, v, 1, LONG_MAX);
		else {
			fprintf(stderr,
				"usage: fed-bench [--jobs N] [--clusters C] "
				"[--nodes N] [--gpus G] [--datasets D] "
				"[--rounds R] [--seed S]\n");
			return strcmp(a, "--help") ? 3 : 1;
		}
		i++;
	}
	return 0;
}

static void bench_free(bench_t *b)
{
	free(b->cat.sites);
	free(b->cat.datasets);
	free(b->jobs);
	free(b->plans);
	free(b->out);
	free(b->naive);
	free(b->free_gpus);
	free(b->demand);
}

static int bench_alloc(bench_t *b)
{
	b->cat.n_sites = (int) b->n_cl;
	b->cat.sites = calloc((size_t) b->n_cl, sizeof(*b->cat.sites));
	b->cat.n_datasets = (int) b->n_ds;
	b->cat.datasets = calloc((size_t) b->n_ds, sizeof(*b->cat.datasets));
	b->jobs = calloc((size_t) b->n_jobs, sizeof(*b->jobs));
	b->plans = calloc((size_t) b->n_jobs * b->n_cl, sizeof(*b->plans));
	b->out = calloc((size_t) b->n_jobs, sizeof(*b->out));
	b->naive = calloc((size_t) b->n_jobs, sizeof(*b->naive));
	b->free_gpus = calloc((size_t) b->n_cl, sizeof(*b->free_gpus));
	b->demand = calloc((size_t) b->n_ds, sizeof(*b->demand));
	if (!b->cat.sites || !b->cat.datasets || !b->jobs || !b->plans ||
	    !b->out || !b->naive || !b->free_gpus || !b->demand) {
		fprintf(stderr, "fed-bench: out of memory\n");
		return -1;
	}
	return 0;
}

/* the catalog: datasets of 10 GB .. 2 TB, most data on cluster 0 */
static void build_catalog(bench_t *b)
{
	pol_fed_catalog_t *cat = &b->cat;
	long i, c;

	for (c = 0; c < b->n_cl; c++) {
		snprintf(cat->sites[c].name, sizeof(cat->sites[c].name), "c%ld",
			 c + 1);
		cat->sites[c].link_bytes_per_s = 1.25e9; /* 10 Gb/s */
		cat->sites[c].storage_bytes = 200e12;
	}
	for (i = 0; i < b->n_ds; i++) {
		snprintf(cat->datasets[i].name, sizeof(cat->datasets[i].name),
			 "ds%ld", i);
		cat->datasets[i].bytes = 10e9 + urand() * 2e12;
		cat->datasets[i].where = urand() < 0.7
						 ? 1
						 : (uint64_t) 1
							   << (rng() % b->n_cl);
	}
}

/* node states: each node busy with probability busy[c]; a cluster's
 * free GPUs are what will-run would see now */
static void build_nodes(bench_t *b)
{
	long c;

	for (c = 0; c < b->n_cl; c++) {
		double busy = 0.5 + 0.45 * urand();
		long n;

		b->supply[c] = (double) (b->n_nodes * b->gpn);
		for (n = 0; n < b->n_nodes; n++)
			if (urand() >= busy)
				b->free_gpus[c] += (int) b->gpn;
	}
}

/* the pending jobs and each cluster's will-run plan for each */
static void build_jobs(bench_t *b)
{
	long i, c, n_cl = b->n_cl;
	int64_t now = b->now;

	for (i = 0; i < b->n_jobs; i++) {
		pol_fed_job_t *j = &b->jobs[i];
		static const int sizes[] = { 1, 1, 2, 4, 8, 8, 16, 32, 64 };
		double credit;

		j->id = 1000 + i;
		snprintf(j->team, sizeof(j->team), "team%ld", i % 37);
		j->gpus = sizes[rng() % 9];
		j->dataset = urand() < 0.9 ? (int) (rng() % b->n_ds) : -1;
		j->eligible = n_cl >= 64 ? ~(uint64_t) 0
					 : ((uint64_t) 1 << n_cl) - 1;
		j->hw_match = urand() < 0.8 ? j->eligible
					    : j->eligible & ~(uint64_t) 1;
		j->submit = now - (int64_t) (rng() % 7200);
		j->priority = (double) (rng() % 3);
		credit = 2.0 * urand() - 1.0;
		if (j->dataset >= 0) {
			b->demand[j->dataset] += j->gpus;
			b->with_data++;
		}
		for (c = 0; c < n_cl; c++) {
			pol_fed_plan_t *p = &b->plans[i * n_cl + c];
			double load = 1.0 -
				      (double) b->free_gpus[c] / b->supply[c];

			p->valid = urand() >
				   0.02; /* a cluster may not answer */
			p->start = j->gpus <= b->free_gpus[c] / 4
					   ? now
					   : now + (int64_t) (load * 3600 *
							      urand());
			p->n_preempt = urand() < 0.05 ? 1 : 0;
			p->locality = j->gpus <= b->gpn ? 2.0 * urand()
							: 4.0 + urand();
			p->team_credit = credit; /* one ledger */
		}
	}
}

/* the auction, best of b->rounds; then what it and first-start moved */
static int run_auction(bench_t *b, bench_result_t *r)
{
	long i, k;

	for (k = 0; k < b->rounds; k++) {
		double t0, dt;

		t0 = now_s();
		if (pol_fed_auction(&b->w, &b->cat, b->jobs, (int) b->n_jobs,
				    b->plans, (int) b->n_cl, b->free_gpus,
				    b->now, b->out) < 0) {
			perror("pol_fed_auction");
			return -1;
		}
		dt = now_s() - t0;
		if (dt < r->t_auction)
			r->t_auction = dt;
	}
	first_start(b->jobs, (int) b->n_jobs, b->plans, (int) b->n_cl,
		    b->naive);
	for (i = 0; i < b->n_jobs; i++) {
		int d = b->jobs[i].dataset;

		if (d < 0)
			continue;
		if (b->out[i].cluster >= 0) {
			double x = pol_fed_transfer_s(&b->cat, d,
						      b->out[i].cluster);

			r->local_auction += x == 0.0;
			r->xfer_auction += x;
		}
		if (b->naive[i] >= 0) {
			double x = pol_fed_transfer_s(&b->cat, d, b->naive[i]);

			r->local_naive += x == 0.0;
			r->xfer_naive += x;
		}
	}
	return 0;
}

static int run_place(bench_t *b, bench_result_t *r)
{
	double t0 = now_s();

	if (pol_fed_place(&b->cat, b->demand, b->supply, INT_MAX, false,
			  &r->res) < 0) {
		perror("pol_fed_place");
		return -1;
	}
	r->t_place = now_s() - t0;
	return 0;
}

static void report(const bench_t *b, const bench_result_t *r)
{
	long with_data = b->with_data;

	printf("auction: %ld jobs x %ld clusters (%ld nodes x %ld GPUs "
	       "each), best of %ld rounds\n",
	       b->n_jobs, b->n_cl, b->n_nodes, b->gpn, b->rounds);
	printf("  round time            %.3f s   (goal 1 s: %.3fx of it)\n",
	       r->t_auction, r->t_auction / 1.0);
	printf("  per job               %.2f us\n",
	       r->t_auction / b->n_jobs * 1e6);
	printf("                         auction   first-start   ratio\n");
	printf("  jobs on their data     %7.1f%%   %10.1f%%   %5.2fx\n",
	       100.0 * r->local_auction / (with_data ? with_data : 1),
	       100.0 * r->local_naive / (with_data ? with_data : 1),
	       r->local_naive ? (double) r->local_auction / r->local_naive
			      : 0.0);
	printf("  transfer hours         %8.1f   %11.1f   %5.2fx\n",
	       r->xfer_auction / 3600, r->xfer_naive / 3600,
	       r->xfer_auction > 0 ? r->xfer_naive / r->xfer_auction : 0.0);
	printf("placement: %ld datasets x %ld clusters\n", b->n_ds, b->n_cl);
	printf("  time                  %.3f s\n", r->t_place);
	printf("  moves                 %d\n", r->res.n_moves);
	printf("  worst demand/supply   %.2f -> %.2f\n", r->res.worst_before,
	       r->res.worst_after);
}

int main(int argc, char **argv)
{
	bench_t b = { .n_jobs = 10000,
		      .n_cl = 10,
		      .n_nodes = 1000,
		      .gpn = 8,
		      .n_ds = 1000,
		      .rounds = 5,
		      .now = 1700000000 };
	bench_result_t r = { .t_auction = INFINITY };
	int rc = parse_args(argc, argv, &b);

	if (rc)
		return rc - 1;
	if (bench_alloc(&b) < 0) {
		bench_free(&b);
		return 1;
	}
	build_catalog(&b);
	build_nodes(&b);
	pol_fed_weights_default(&b.w);
	build_jobs(&b);
	if (run_auction(&b, &r) < 0 || run_place(&b, &r) < 0) {
		bench_free(&b);
		return 1;
	}
	report(&b, &r);
	pol_fed_place_result_free(&r.res);
	bench_free(&b);
	return 0;
}
