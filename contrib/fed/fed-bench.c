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

int main(int argc, char **argv)
{
	long n_jobs = 10000, n_cl = 10, n_nodes = 1000, gpn = 8, n_ds = 1000;
	long rounds = 5, i, c, r;
	int64_t now = 1700000000;
	pol_fed_catalog_t cat = { 0 };
	pol_fed_weights_t w;
	pol_fed_job_t *jobs;
	pol_fed_plan_t *plans;
	pol_fed_award_t *out;
	int *free_gpus, *naive;
	double *demand, supply[64];
	double t0, t_auction = INFINITY, t_place;
	long local_auction = 0, local_naive = 0, with_data = 0;
	double xfer_auction = 0, xfer_naive = 0;
	pol_fed_place_result_t res;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--jobs"))
			n_jobs = arg_long(a, v, 1, 10000000);
		else if (!strcmp(a, "--clusters"))
			n_cl = arg_long(a, v, 1, 64);
		else if (!strcmp(a, "--nodes"))
			n_nodes = arg_long(a, v, 1, 1000000);
		else if (!strcmp(a, "--gpus"))
			gpn = arg_long(a, v, 1, 64);
		else if (!strcmp(a, "--datasets"))
			n_ds = arg_long(a, v, 1, 1000000);
		else if (!strcmp(a, "--rounds"))
			rounds = arg_long(a, v, 1, 1000);
		else if (!strcmp(a, "--seed"))
			rng_state = (uint64_t) arg_long(a, v, 1, LONG_MAX);
		else {
			fprintf(stderr,
				"usage: fed-bench [--jobs N] [--clusters C] "
				"[--nodes N] [--gpus G] [--datasets D] "
				"[--rounds R] [--seed S]\n");
			return strcmp(a, "--help") ? 2 : 0;
		}
		i++;
	}

	/* the catalog: datasets of 10 GB .. 2 TB, most data on cluster 0 */
	cat.n_sites = (int) n_cl;
	cat.sites = calloc((size_t) n_cl, sizeof(*cat.sites));
	cat.n_datasets = (int) n_ds;
	cat.datasets = calloc((size_t) n_ds, sizeof(*cat.datasets));
	jobs = calloc((size_t) n_jobs, sizeof(*jobs));
	plans = calloc((size_t) n_jobs * n_cl, sizeof(*plans));
	out = calloc((size_t) n_jobs, sizeof(*out));
	naive = calloc((size_t) n_jobs, sizeof(*naive));
	free_gpus = calloc((size_t) n_cl, sizeof(*free_gpus));
	demand = calloc((size_t) n_ds, sizeof(*demand));
	if (!cat.sites || !cat.datasets || !jobs || !plans || !out || !naive ||
	    !free_gpus || !demand) {
		fprintf(stderr, "fed-bench: out of memory\n");
		/* the process ends here; nothing to give back */
		// cppcheck-suppress memleak
		return 1;
	}
	for (c = 0; c < n_cl; c++) {
		snprintf(cat.sites[c].name, sizeof(cat.sites[c].name), "c%ld",
			 c + 1);
		cat.sites[c].link_bytes_per_s = 1.25e9; /* 10 Gb/s */
		cat.sites[c].storage_bytes = 200e12;
	}
	for (i = 0; i < n_ds; i++) {
		snprintf(cat.datasets[i].name, sizeof(cat.datasets[i].name),
			 "ds%ld", i);
		cat.datasets[i].bytes = 10e9 + urand() * 2e12;
		cat.datasets[i].where = urand() < 0.7
						? 1
						: (uint64_t) 1
							  << (rng() % n_cl);
	}

	/* node states: each node busy with probability busy[c]; a cluster's
	 * free GPUs are what will-run would see now */
	for (c = 0; c < n_cl; c++) {
		double busy = 0.5 + 0.45 * urand();
		long n;

		supply[c] = (double) (n_nodes * gpn);
		for (n = 0; n < n_nodes; n++)
			if (urand() >= busy)
				free_gpus[c] += (int) gpn;
	}
	pol_fed_weights_default(&w);
	for (i = 0; i < n_jobs; i++) {
		pol_fed_job_t *j = &jobs[i];
		static const int sizes[] = { 1, 1, 2, 4, 8, 8, 16, 32, 64 };
		double credit;

		j->id = 1000 + i;
		snprintf(j->team, sizeof(j->team), "team%ld", i % 37);
		j->gpus = sizes[rng() % 9];
		j->dataset = urand() < 0.9 ? (int) (rng() % n_ds) : -1;
		j->eligible = n_cl >= 64 ? ~(uint64_t) 0
					 : ((uint64_t) 1 << n_cl) - 1;
		j->hw_match = urand() < 0.8 ? j->eligible
					    : j->eligible & ~(uint64_t) 1;
		j->submit = now - (int64_t) (rng() % 7200);
		j->priority = (double) (rng() % 3);
		credit = 2.0 * urand() - 1.0;
		if (j->dataset >= 0) {
			demand[j->dataset] += j->gpus;
			with_data++;
		}
		for (c = 0; c < n_cl; c++) {
			pol_fed_plan_t *p = &plans[i * n_cl + c];
			double load = 1.0 - (double) free_gpus[c] / supply[c];

			p->valid = urand() >
				   0.02; /* a cluster may not answer */
			p->start = j->gpus <= free_gpus[c] / 4
					   ? now
					   : now + (int64_t) (load * 3600 *
							      urand());
			p->n_preempt = urand() < 0.05 ? 1 : 0;
			p->locality = j->gpus <= gpn ? 2.0 * urand()
						     : 4.0 + urand();
			p->team_credit = credit; /* one ledger */
		}
	}

	for (r = 0; r < rounds; r++) {
		double dt;

		t0 = now_s();
		if (pol_fed_auction(&w, &cat, jobs, (int) n_jobs, plans,
				    (int) n_cl, free_gpus, now, out) < 0) {
			perror("pol_fed_auction");
			return 1;
		}
		dt = now_s() - t0;
		if (dt < t_auction)
			t_auction = dt;
	}
	first_start(jobs, (int) n_jobs, plans, (int) n_cl, naive);
	for (i = 0; i < n_jobs; i++) {
		int d = jobs[i].dataset;

		if (d < 0)
			continue;
		if (out[i].cluster >= 0) {
			double x = pol_fed_transfer_s(&cat, d, out[i].cluster);

			local_auction += x == 0.0;
			xfer_auction += x;
		}
		if (naive[i] >= 0) {
			double x = pol_fed_transfer_s(&cat, d, naive[i]);

			local_naive += x == 0.0;
			xfer_naive += x;
		}
	}

	t0 = now_s();
	if (pol_fed_place(&cat, demand, supply, INT_MAX, false, &res) < 0) {
		perror("pol_fed_place");
		return 1;
	}
	t_place = now_s() - t0;

	printf("auction: %ld jobs x %ld clusters (%ld nodes x %ld GPUs "
	       "each), best of %ld rounds\n",
	       n_jobs, n_cl, n_nodes, gpn, rounds);
	printf("  round time            %.3f s   (goal 1 s: %.3fx of it)\n",
	       t_auction, t_auction / 1.0);
	printf("  per job               %.2f us\n", t_auction / n_jobs * 1e6);
	printf("                         auction   first-start   ratio\n");
	printf("  jobs on their data     %7.1f%%   %10.1f%%   %5.2fx\n",
	       100.0 * local_auction / (with_data ? with_data : 1),
	       100.0 * local_naive / (with_data ? with_data : 1),
	       local_naive ? (double) local_auction / local_naive : 0.0);
	printf("  transfer hours         %8.1f   %11.1f   %5.2fx\n",
	       xfer_auction / 3600, xfer_naive / 3600,
	       xfer_auction > 0 ? xfer_naive / xfer_auction : 0.0);
	printf("placement: %ld datasets x %ld clusters\n", n_ds, n_cl);
	printf("  time                  %.3f s\n", t_place);
	printf("  moves                 %d\n", res.n_moves);
	printf("  worst demand/supply   %.2f -> %.2f\n", res.worst_before,
	       res.worst_after);
	pol_fed_place_result_free(&res);
	free(cat.sites);
	free(cat.datasets);
	free(jobs);
	free(plans);
	free(out);
	free(naive);
	free(free_gpus);
	free(demand);
	return 0;
}
