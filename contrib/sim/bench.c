/*
 * bench.c - "agora-sim bench": one decision pass of every registered
 * policy on a synthetic snapshot (default 10,000 nodes x 8 GPUs with
 * 100,000 pending jobs, then 1,000 nodes with 10,000 jobs), and the
 * stock placement's cost per job.
 *
 * "agora" is timed twice: its first pass (fresh leases for the running
 * jobs: no incumbents) and "agora+600s", a second pass on the same
 * snapshot one lease later, when those leases have expired and their
 * GPUs are auctioned too.
 *
 * The snapshot: every node runs one job on a random number (0..8) of its
 * GPUs (so about half the GPUs are busy and every free count occurs);
 * pending jobs follow the Philly size mix (93% 1 GPU, 2% 2, 1% 4, 2% 8,
 * 1% 16, 1% 32), 11 tenants, time limits 1-24 h, remaining = half the
 * limit.  Seeded: the same --seed gives the same snapshot.
 *
 * The contended snapshot (issue 17; --contended, and after the two above
 * by default): a full cluster, every node running one to four jobs that
 * take all its GPUs, with 10 GPU-days attained, each in a run that
 * started 12 checkpoint intervals (1800 s) before the second agora pass
 * plus its 60 s grace, so that pass finds every one at a checkpoint, with
 * no preemption yet, younger than agora's max_run (12 h): no budget,
 * lease, loss or age rule protects it; and the same pending mix spread
 * over --apps apps (default 3000, tenant = app): a policy that starts
 * anything must preempt.
 *
 * Each pass is timed in wall and thread CPU time; --repeat N runs every
 * policy N times (a fresh policy each time, both agora passes each time)
 * and prints the least of each, so that a shared host's waits for a
 * core do not pass for the pass's cost.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_cli.h"

typedef struct bench_snap {
	pol_cluster_t *c;
	pol_job_t *pend, *run;
	int n_pend, n_run;
} bench_snap_t;

static void bench_free(bench_snap_t *b)
{
	int i;

	for (i = 0; b->run && i < b->n_run; i++)
		pol_alloc_free(&b->run[i].alloc);
	free(b->pend);
	free(b->run);
	pol_cluster_destroy(&b->c);
}

/* contended: every node full, one to four running jobs splitting it */
static int bench_full(bench_snap_t *b, int nodes, int gpus, int apps,
		      uint64_t *rng, int64_t now)
{
	int i, k;

	for (i = 0; i < nodes; i++) {
		int parts = 1 + (int) (sim_rand(rng) % 4), lo = 0;

		if (parts > gpus)
			parts = gpus;
		for (k = 0; k < parts; k++) {
			int n = k == parts - 1 ? gpus - lo : gpus / parts;
			pol_job_t *r = &b->run[b->n_run];

			r->id = 1000000000LL + (int64_t) i * 8 + k;
			r->tenant = (int) (sim_rand(rng) % (uint64_t) apps);
			r->total_gpus = r->min_gpus = r->max_gpus = n;
			r->submit = now - 86400;
			r->start = now + 660 - 12 * 1800;
			r->time_limit = 7 * 86400;
			r->remaining = 86400;
			r->attained = 10 * 86400;
			r->requeueable = true;
			r->state = POL_JOB_RUNNING;
			r->dataset = -1;
			r->ckpt_s = 1800;
			r->last_ckpt = now - 1140;
			r->alloc.parts = malloc(sizeof(*r->alloc.parts));
			if (!r->alloc.parts)
				return -1;
			r->alloc.n_parts = 1;
			r->alloc.parts[0].node = i;
			r->alloc.parts[0].gpus = (((pol_gpumask_t) 1 << n) - 1)
						 << lo;
			b->c->nodes[i].free &= ~r->alloc.parts[0].gpus;
			b->n_run++;
			lo += n;
		}
	}
	return 0;
}

static int bench_make(bench_snap_t *b, int nodes, int gpus, int jobs,
		      uint64_t seed, int64_t now, int apps)
{
	static const int sizes[] = { 1, 2, 4, 8, 16, 32 };
	static const int cum[] = { 93, 95, 96, 98, 99, 100 };
	uint64_t rng = seed;
	int i, tenants = apps > 0 ? apps : 11;

	memset(b, 0, sizeof(*b));
	b->c = pol_cluster_uniform(nodes, gpus, 16);
	b->pend = calloc((size_t) jobs, sizeof(*b->pend));
	b->run = calloc((size_t) nodes * (apps > 0 ? 4 : 1), sizeof(*b->run));
	if (!b->c || !b->pend || !b->run)
		return -1;
	if (apps > 0 && bench_full(b, nodes, gpus, apps, &rng, now))
		return -1;
	for (i = 0; apps <= 0 && i < nodes; i++) {
		int busy = (int) (sim_rand(&rng) % (uint64_t) (gpus + 1));
		pol_job_t *r;

		if (!busy)
			continue;
		r = &b->run[b->n_run];
		r->id = 1000000000LL + i;
		r->tenant = (int) (sim_rand(&rng) % 11);
		r->total_gpus = r->min_gpus = r->max_gpus = busy;
		r->submit = now - 7200;
		r->start = now - (int64_t) (sim_rand(&rng) % 7200);
		r->time_limit = 3600 * (1 + (int64_t) (sim_rand(&rng) % 24));
		r->remaining = r->time_limit / 2;
		r->attained = (now - r->start) * busy;
		r->requeueable = true;
		r->state = POL_JOB_RUNNING;
		r->dataset = -1;
		r->alloc.parts = malloc(sizeof(*r->alloc.parts));
		if (!r->alloc.parts)
			return -1;
		r->alloc.n_parts = 1;
		r->alloc.parts[0].node = i;
		r->alloc.parts[0].gpus = ((pol_gpumask_t) 1 << busy) - 1;
		b->c->nodes[i].free &= ~r->alloc.parts[0].gpus;
		b->n_run++;
	}
	for (i = 0; i < jobs; i++) {
		pol_job_t *j = &b->pend[i];
		int p = (int) (sim_rand(&rng) % 100), k = 0;

		while (p >= cum[k])
			k++;
		j->id = i;
		j->tenant = (int) (sim_rand(&rng) % (uint64_t) tenants);
		j->total_gpus = j->min_gpus = j->max_gpus = sizes[k];
		j->submit = now - jobs + i;
		j->time_limit = 3600 * (1 + (int64_t) (sim_rand(&rng) % 24));
		j->remaining = j->time_limit / 2;
		j->requeueable = true;
		j->dataset = -1;
	}
	b->n_pend = jobs;
	return 0;
}

/* apps > 0: the contended snapshot with that many apps */
/* One pass's result: the least wall and thread CPU time over the
 * repeats (the host is shared: CPU time is what the pass costs, wall time
 * adds the waits for a core), its actions, and whether it failed. */
typedef struct bench_pass {
	double wall, cpu;
	int st, pr, ho, failed;
} bench_pass_t;

static void timed_decide(pol_policy_t *p, const pol_snapshot_t *snap,
			 int64_t now, bench_pass_t *out)
{
	pol_actions_t acts = { 0 };
	double t0 = cli_now(), c0 = cli_thread_cpu(), dt, dc;
	int k = pol_policy_decide(p, snap, now, &acts), i;

	dc = cli_thread_cpu() - c0;
	dt = cli_now() - t0;
	out->st = out->pr = out->ho = 0;
	for (i = 0; i < acts.n; i++) {
		out->st += acts.v[i].type == POL_ACT_START;
		out->pr += acts.v[i].type == POL_ACT_PREEMPT;
		out->ho += acts.v[i].type == POL_ACT_HOLD;
	}
	out->failed |= k != 0;
	out->wall = dt < out->wall ? dt : out->wall;
	out->cpu = dc < out->cpu ? dc : out->cpu;
	pol_actions_free(&acts);
}

/* A fresh policy's first pass into *first; for agora also the auction
 * pass proper into *second: the same snapshot one lease later, when the
 * leases the first pass gave the running jobs have expired (their GPUs
 * are in the offer, losers are picked). -1 if it cannot be created. */
static int bench_policy(const char *name, const pol_snapshot_t *snap,
			int64_t now, bench_pass_t *first, bench_pass_t *second)
{
	agora_err_t err = { { 0 } };
	pol_policy_t *p = pol_policy_create(name, NULL, NULL, &err);

	if (!p) {
		printf("%-10s error: %s\n", name, err.text);
		first->failed = second->failed = 1;
		return -1;
	}
	timed_decide(p, snap, now, first);
	if (!first->failed && !strcmp(name, "agora"))
		timed_decide(p, snap, now + 600, second);
	pol_policy_destroy(&p);
	return first->failed ? -1 : 0;
}

static void bench_print(const char *name, const bench_pass_t *r, int n_pend)
{
	if (r->failed) {
		printf("%-10s decide failed\n", name);
		return;
	}
	printf("%-10s %10.2f %8.2f %8d %8d %8d %14.3f %14.3f\n", name,
	       r->wall * 1e3, r->cpu * 1e3, r->st, r->pr, r->ho,
	       r->wall * 1e6 / n_pend, r->st ? r->wall * 1e6 / r->st : 0.0);
}

static void bench_one(int nodes, int gpus, int jobs, uint64_t seed, int repeat,
		      int apps)
{
	const int64_t now = 1000000000;
	const pol_policy_ops_t *const *r;
	bench_snap_t b;
	pol_snapshot_t snap;
	pol_freemap_t *fm;
	double t0, dt;
	int i, placed = 0;

	if (bench_make(&b, nodes, gpus, jobs, seed, now, apps)) {
		fprintf(stderr, "agora-sim bench: out of memory\n");
		bench_free(&b);
		return;
	}
	snap.cluster = b.c;
	snap.pending = b.pend;
	snap.n_pending = b.n_pend;
	snap.running = b.run;
	snap.n_running = b.n_run;
	snap.n_tenants = apps > 0 ? apps : 11;
	printf("\n%ssnapshot: %d nodes x %d GPUs (%d free), %d running, %d pending, %d apps\n",
	       apps > 0 ? "contended " : "", nodes, gpus,
	       pol_cluster_free_gpus(b.c), b.n_run, b.n_pend, snap.n_tenants);
	/* placement alone: each pending job on the same map, not taken */
	fm = pol_freemap_create(b.c);
	t0 = cli_now();
	for (i = 0; fm && i < b.n_pend; i++) {
		pol_alloc_t a;

		if (!pol_place_basic(NULL, fm, &b.pend[i], &a)) {
			placed++;
			pol_alloc_free(&a);
		}
	}
	dt = cli_now() - t0;
	printf("stock placement: %d jobs (%d fit) in %.2f ms = %.3f us/job; free map build %s\n",
	       b.n_pend, placed, dt * 1e3, dt * 1e6 / b.n_pend,
	       fm ? "ok" : "FAILED");
	pol_freemap_destroy(&fm);
	printf("%-10s %10s %8s %8s %8s %8s %14s %14s\n", "policy", "pass_ms",
	       "cpu_ms", "starts", "preempt", "holds", "us/pending_job",
	       "us/start");
	for (r = pol_registry(); *r; r++) {
		bench_pass_t first = { 1e30, 1e30, 0, 0, 0, 0 }, second = first;

		for (i = 0; i < repeat; i++)
			if (bench_policy((*r)->name, &snap, now, &first,
					 &second))
				break;
		bench_print((*r)->name, &first, b.n_pend);
		if (!strcmp((*r)->name, "agora"))
			bench_print("agora+600s", &second, b.n_pend);
	}
	bench_free(&b);
}

int bench_main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "nodes", required_argument, NULL, 'n' },
		{ "gpus", required_argument, NULL, 'g' },
		{ "jobs", required_argument, NULL, 'j' },
		{ "seed", required_argument, NULL, 's' },
		{ "contended", no_argument, NULL, 'C' },
		{ "apps", required_argument, NULL, 'a' },
		{ "repeat", required_argument, NULL, 'r' },
		{ NULL, 0, NULL, 0 },
	};
	int nodes = 0, gpus = 8, jobs = 0, ch, apps = 3000, repeat = 1;
	bool only_contended = false;
	uint64_t seed = 1;

	while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (ch) {
		case 'n':
			nodes = atoi(optarg);
			break;
		case 'g':
			gpus = atoi(optarg);
			break;
		case 'j':
			jobs = atoi(optarg);
			break;
		case 's':
			seed = strtoull(optarg, NULL, 10);
			break;
		case 'C':
			only_contended = true;
			break;
		case 'a':
			apps = atoi(optarg);
			break;
		case 'r':
			repeat = atoi(optarg);
			break;
		default:
			fprintf(stderr,
				"usage: agora-sim bench [--nodes N --gpus G --jobs J] [--contended] [--apps N] [--seed N] [--repeat N]\n");
			return 2;
		}
	}
	if (gpus < 1 || gpus > 64 || nodes < 0 || jobs < 0 || apps < 1 ||
	    repeat < 1 || repeat > 1000) {
		fprintf(stderr, "agora-sim bench: bad sizes\n");
		return 2;
	}
	printf("agora-sim bench: one decision pass per policy (seed %llu, least of %d)\n",
	       (unsigned long long) seed, repeat);
	if (!nodes || !jobs) {
		nodes = 10000;
		jobs = 100000;
		if (!only_contended) {
			bench_one(10000, gpus, 100000, seed, repeat, 0);
			bench_one(1000, gpus, 10000, seed, repeat, 0);
		}
	} else if (!only_contended) {
		bench_one(nodes, gpus, jobs, seed, repeat, 0);
	}
	bench_one(nodes, gpus, jobs, seed, repeat, apps);
	return 0;
}
