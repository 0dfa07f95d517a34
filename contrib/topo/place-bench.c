/*
 * place-bench - time gang placement decisions on a large fragmented
 * cluster: the "agora" strategy (common/place/pol_topo_place.c) next to the
 * "stock" best fit (common/place/pol_place_basic.c), same requests, same state.
 *
 *   place-bench [--nodes 10000] [--per-leaf 32] [--busy 0.6] [--iters 200]
 *               [--model MODEL.json [--type-name N]] [--seed 1]
 *
 * Node type: two 4-GPU NVLink islands, 4 PCIe switches, 2 sockets unless
 * --model gives one.  The busy fraction is applied per node with a
 * deterministic PRNG.  Prints ms per decision per request shape, then a
 * "fill" run (place and apply until nothing fits) comparing quality.
 * Timing uses CLOCK_MONOTONIC here, in contrib/; the core never reads a
 * clock.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pol_place.h"
#include "pol_topo_place.h"
#include "topo_model.h"

static uint64_t rng_state = 88172645463325252ULL;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void two_island_type(pol_node_type_t *t)
{
	int i, j;

	memset(t, 0, sizeof(*t));
	snprintf(t->name, sizeof(t->name), "2x4nvlink");
	t->n_gpus = 8;
	t->n_sockets = 2;
	for (i = 0; i < 8; i++) {
		t->gpu_socket[i] = (int8_t) (i / 4);
		t->gpu_island[i] = (int8_t) (i / 4);
		for (j = 0; j < 8; j++)
			t->level[i][j] = i / 4 == j / 4 ? POL_LVL_NVLINK
							: POL_LVL_NODE;
	}
}

typedef struct shape {
	const char *name;
	int nodes, gpn, total;
} shape_t;

static const shape_t shapes[] = {
	{ "1 GPU", 0, 0, 1 },          { "2 GPUs", 0, 0, 2 },
	{ "4 GPUs", 0, 0, 4 },         { "8 GPUs", 0, 0, 8 },
	{ "2 nodes x 4", 2, 4, 8 },    { "2 nodes x 8", 2, 8, 16 },
	{ "8 nodes x 8", 8, 8, 64 },   { "32 GPUs total", 0, 0, 32 },
	{ "64 GPUs total", 0, 0, 64 },
};

static void fill_job(pol_job_t *j, const shape_t *s)
{
	memset(j, 0, sizeof(*j));
	j->nodes = s->nodes;
	j->gpus_per_node = s->gpn;
	j->total_gpus = s->total;
	j->min_gpus = j->max_gpus = s->total;
	j->pool = POL_POOL_TRAINING;
}

/* The node type: of --model (the first GPU type, or --type-name), else
 * two_island_type().  0, or 1 with a message. */
static int load_type(const char *model, const char *type_name,
		     pol_node_type_t *type)
{
	if (model) {
		topo_model_t m = { 0 };
		agora_err_t err = { { 0 } };
		int t = 0;

		if (topo_model_load(model, &m, &err) < 0) {
			fprintf(stderr, "place-bench: %s\n", err.text);
			return 1;
		}
		if (type_name)
			for (t = 0; t < m.n_types; t++)
				if (!strcmp(m.types[t].type.name, type_name))
					break;
		if (t >= m.n_types || !m.types[t].type.n_gpus) {
			fprintf(stderr, "place-bench: %s: no GPU node type\n",
				model);
			return 1;
		}
		*type = m.types[t].type;
		topo_model_free(&m);
	} else {
		two_island_type(type);
	}
	return 0;
}

/* A cluster of n_nodes nodes of type, per_leaf to a leaf, a quarter of
 * them whole and the others with each GPU busy with probability busy.
 * 0, or -1 (out of memory). */
static int build_cluster(pol_cluster_t *cl, pol_node_type_t *type, int n_nodes,
			 int per_leaf, double busy)
{
	pol_gpumask_t all;
	int i;

	memset(cl, 0, sizeof(*cl));
	snprintf(cl->name, sizeof(cl->name), "bench");
	cl->types = type;
	cl->n_types = 1;
	cl->n_nodes = n_nodes;
	cl->n_leaves = (n_nodes + per_leaf - 1) / per_leaf;
	cl->nodes = calloc((size_t) n_nodes, sizeof(*cl->nodes));
	if (!cl->nodes)
		return -1;
	all = type->n_gpus >= 64 ? ~(pol_gpumask_t) 0
				 : (((pol_gpumask_t) 1 << type->n_gpus) - 1);
	for (i = 0; i < n_nodes; i++) {
		pol_node_t *nd = &cl->nodes[i];
		int g;

		snprintf(nd->name, sizeof(nd->name), "n%05d", i);
		nd->leaf = i / per_leaf;
		nd->up = true;
		nd->weight = (int) (rng() % 3);
		nd->free = all;
		/* a quarter of the nodes stay whole, the rest fragment */
		if (rng() % 4 == 0)
			continue;
		for (g = 0; g < type->n_gpus; g++)
			if ((double) (rng() % 1000) / 1000.0 < busy)
				nd->free &= ~((pol_gpumask_t) 1 << g);
	}
	return 0;
}

/* ms per decision of each request shape: agora on masks, agora on the
 * free map, stock best fit; and the level each gets. */
static void time_shapes(pol_topo_place_t *ag, pol_freemap_t *fm,
			const pol_cluster_t *cl, int iters)
{
	int s;

	for (s = 0; s < (int) (sizeof(shapes) / sizeof(shapes[0])); s++) {
		pol_job_t job;
		pol_place_req_t req;
		pol_alloc_t a1 = { 0 }, a2 = { 0 }, a3 = { 0 };
		double t0, ta, tf, ts;
		int r1 = 0, r2 = 0, r3 = 0, it;

		fill_job(&job, &shapes[s]);
		memset(&req, 0, sizeof(req));
		req.nodes = job.nodes;
		req.gpus_per_node = job.gpus_per_node;
		req.total_gpus = job.total_gpus;
		/* warm the memo once (steady state is what slurmctld sees) */
		pol_topo_place_req(ag, cl, NULL, &req, &a1, NULL);
		pol_alloc_free(&a1);
		t0 = now_ms();
		for (it = 0; it < iters; it++) {
			pol_alloc_free(&a1);
			r1 = pol_topo_place_req(ag, cl, NULL, &req, &a1, NULL);
		}
		ta = (now_ms() - t0) / iters;
		t0 = now_ms();
		for (it = 0; it < iters; it++) {
			pol_alloc_free(&a3);
			r3 = pol_topo_place_job(ag, fm, &job, &a3);
		}
		tf = (now_ms() - t0) / iters;
		t0 = now_ms();
		for (it = 0; it < iters; it++) {
			pol_alloc_free(&a2);
			r2 = pol_place_basic(NULL, fm, &job, &a2);
		}
		ts = (now_ms() - t0) / iters;
		printf("%-16s %12.4f %12.4f %12.4f   %-8d %-8d\n",
		       shapes[s].name, ta, tf, ts,
		       r1 == 0 ? (int) pol_alloc_level(cl, &a1) : -1,
		       r2 == 0 ? (int) pol_alloc_level(cl, &a2) : -1);
		(void) r3;
		pol_alloc_free(&a1);
		pol_alloc_free(&a2);
		pol_alloc_free(&a3);
	}
}

/* Fill run: random jobs placed and applied until a shape fails 50x. */
static void fill_run(pol_topo_place_t *ag, const pol_cluster_t *cl)
{
	int strat;

	printf("\nfill run (random shapes, applied until 50 straight "
	       "misses): placed GPUs, jobs, mean level, jobs above "
	       "their best level\n");
	for (strat = 0; strat < 2; strat++) {
		pol_freemap_t *f2 = pol_freemap_create(cl);
		uint64_t saved = rng_state;
		int misses = 0, jobs = 0, gpus = 0, worse = 0;
		double lev = 0, t0 = now_ms();

		rng_state = 12345;
		while (f2 && misses < 50) {
			const shape_t *sh = &shapes[rng() % 6];
			pol_job_t job;
			pol_alloc_t a = { 0 };
			int r;

			fill_job(&job, sh);
			r = strat == 0 ? pol_topo_place_job(ag, f2, &job, &a)
				       : pol_place_basic(NULL, f2, &job, &a);
			if (r < 0) {
				misses++;
				continue;
			}
			misses = 0;
			jobs++;
			gpus += pol_alloc_gpus(&a);
			{
				int l = (int) pol_alloc_level(cl, &a);

				lev += l;
				/* best possible: NVLink within a node
				 * for <= 4, node for 8, leaf above */
				worse += l > (sh->total <= 4   ? 0
					      : sh->total <= 8 ? 3
							       : 4);
			}
			pol_freemap_take(f2, &a);
			pol_alloc_free(&a);
		}
		printf("  %-6s %8d GPUs %7d jobs  mean level %.3f  "
		       "%6d above best  (%.1f ms total)\n",
		       strat == 0 ? "agora" : "stock", gpus, jobs,
		       jobs ? lev / jobs : 0.0, worse, now_ms() - t0);
		pol_freemap_destroy(&f2);
		rng_state = saved;
	}
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "nodes", required_argument, NULL, 'n' },
		{ "per-leaf", required_argument, NULL, 'l' },
		{ "busy", required_argument, NULL, 'b' },
		{ "iters", required_argument, NULL, 'i' },
		{ "model", required_argument, NULL, 'm' },
		{ "type-name", required_argument, NULL, 't' },
		{ "seed", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	int n_nodes = 10000, per_leaf = 32, iters = 200, c;
	double busy = 0.6;
	const char *model = NULL, *type_name = NULL;
	pol_cluster_t cl;
	pol_node_type_t type;
	pol_topo_place_t *ag;
	pol_freemap_t *fm;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'n':
			n_nodes = atoi(optarg);
			break;
		case 'l':
			per_leaf = atoi(optarg);
			break;
		case 'b':
			busy = atof(optarg);
			break;
		case 'i':
			iters = atoi(optarg);
			break;
		case 'm':
			model = optarg;
			break;
		case 't':
			type_name = optarg;
			break;
		case 's':
			rng_state ^= strtoull(optarg, NULL, 10) * 2654435761ULL;
			break;
		default:
			fprintf(stderr,
				"usage: place-bench [--nodes N] "
				"[--per-leaf N] [--busy F] [--iters N] "
				"[--model M [--type-name T]] [--seed S]\n");
			return 2;
		}
	}
	if (n_nodes < 1 || per_leaf < 1 || iters < 1 || busy < 0 || busy > 1)
		return 2;
	if (load_type(model, type_name, &type))
		return 1;
	if (build_cluster(&cl, &type, n_nodes, per_leaf, busy) < 0)
		return 1;
	ag = pol_topo_place_create(&cl, NULL);
	fm = pol_freemap_create(&cl);
	if (!ag || !fm) {
		fprintf(stderr, "place-bench: create: %s\n", strerror(errno));
		return 1;
	}
	printf("cluster: %d nodes x %d GPUs (%s), %d leaves, %d/%d GPUs "
	       "free; %d iterations per shape\n",
	       n_nodes, type.n_gpus, type.name, cl.n_leaves,
	       pol_cluster_free_gpus(&cl), pol_cluster_gpus(&cl), iters);
	printf("%-16s %12s %12s %12s   %-8s %-8s\n", "request", "agora ms",
	       "agora/fm ms", "stock ms", "agora L", "stock L");
	time_shapes(ag, fm, &cl, iters);
	fill_run(ag, &cl);
	pol_topo_place_destroy(&ag);
	pol_freemap_destroy(&fm);
	free(cl.nodes);
	return 0;
}
