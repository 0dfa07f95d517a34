/*
 * sim_cluster.c - the cluster file and shorthand of agora-sim
 * (sim_cluster.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_cluster.h"
#include "trace.h"

pol_cluster_t *sim_cluster_shorthand(const char *spec)
{
	int n, g, used = 0;

	if (!spec || sscanf(spec, "%dx%d%n", &n, &g, &used) != 2 ||
	    spec[used] || n < 1 || n > 1000000 || g < 1 ||
	    g > POL_MAX_GPUS_PER_NODE) {
		errno = EINVAL;
		return NULL;
	}
	return pol_cluster_uniform(n, g, 16);
}

static int parse_int(const char *s, int lo, int hi, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = (int) v;
	return 0;
}

/* split "key=value" tokens of a line */
static int tokens(char *buf, char **tok, int max)
{
	int n = 0;
	char *save = NULL, *p;

	for (p = strtok_r(buf, " \t", &save); p && n < max;
	     p = strtok_r(NULL, " \t", &save))
		tok[n++] = p;
	return n;
}

static void islands_levels(pol_node_type_t *t, int islands)
{
	int i, j, per = (t->n_gpus + islands - 1) / islands;

	for (i = 0; i < t->n_gpus; i++)
		t->gpu_island[i] = (int8_t) (i / per);
	for (i = 0; i < t->n_gpus; i++)
		for (j = 0; j < t->n_gpus; j++) {
			if (t->gpu_island[i] == t->gpu_island[j])
				t->level[i][j] = POL_LVL_NVLINK;
			else if (t->gpu_socket[i] == t->gpu_socket[j])
				t->level[i][j] = POL_LVL_SOCKET;
			else
				t->level[i][j] = POL_LVL_NODE;
		}
}

pol_cluster_t *sim_cluster_parse(const char *text, const char *name,
				 sim_nodetype_load_f load, void *load_arg,
				 agora_err_t *err)
{
	trace_line_t tl = { .p = text };
	pol_cluster_t *c = calloc(1, sizeof(*c));
	int rc, i, leaf = 0;

	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	snprintf(c->name, sizeof(c->name), "%s", "cluster");

#define BAD(key, ...)                                                          \
	do {                                                                   \
		char why_[256];                                                \
		snprintf(why_, sizeof(why_), __VA_ARGS__);                     \
		agora_err_set(err, "%s:%d: %s: %s", name, tl.line, key, why_); \
		errno = EINVAL;                                                \
		goto fail;                                                     \
	} while (0)

	while ((rc = trace_next_line(&tl)) == 1) {
		char *tok[16], *hash = strchr(tl.buf, '#');
		int n;

		if (hash)
			*hash = '\0';
		n = tokens(tl.buf, tok, 16);
		if (n == 0)
			continue;
		if (!strcmp(tok[0], "cluster")) {
			if (n != 2)
				BAD("cluster", "expected 'cluster NAME'");
			snprintf(c->name, sizeof(c->name), "%s", tok[1]);
		} else if (!strcmp(tok[0], "nodetype")) {
			pol_node_type_t *nt, t;
			int gpus = -1, sockets = 2, islands = 1;
			const char *xml = NULL;

			if (n < 2 || strchr(tok[1], '='))
				BAD("nodetype",
				    "expected 'nodetype NAME gpus=N ...'");
			for (i = 0; i < c->n_types; i++)
				if (!strcmp(c->types[i].name, tok[1]))
					BAD(tok[1], "node type defined twice");
			for (i = 2; i < n; i++) {
				char *eq = strchr(tok[i], '=');

				if (!eq)
					BAD(tok[i], "expected key=value");
				*eq++ = '\0';
				if (!strcmp(tok[i], "gpus")) {
					if (parse_int(eq, 1,
						      POL_MAX_GPUS_PER_NODE,
						      &gpus))
						BAD("gpus",
						    "'%s' is not in [1, %d]",
						    eq, POL_MAX_GPUS_PER_NODE);
				} else if (!strcmp(tok[i], "sockets")) {
					if (parse_int(eq, 1, 16, &sockets))
						BAD("sockets",
						    "'%s' is not in [1, 16]",
						    eq);
				} else if (!strcmp(tok[i], "islands")) {
					if (parse_int(eq, 1,
						      POL_MAX_GPUS_PER_NODE,
						      &islands))
						BAD("islands",
						    "'%s' is not in [1, %d]",
						    eq, POL_MAX_GPUS_PER_NODE);
				} else if (!strcmp(tok[i], "hwloc")) {
					xml = eq;
				} else {
					BAD(tok[i],
					    "unknown key (gpus, sockets, islands, hwloc)");
				}
			}
			if (xml) {
				agora_err_t lerr = { { 0 } };

				if (!load)
					BAD("hwloc",
					    "hwloc node types need the topology loader (topo_*), not available in this build");
				memset(&t, 0, sizeof(t));
				if (load(load_arg, xml, &t, &lerr))
					BAD("hwloc", "%.200s", lerr.text);
				snprintf(t.name, sizeof(t.name), "%s", tok[1]);
			} else {
				if (gpus < 0)
					BAD("gpus",
					    "missing (gpus=N or hwloc=FILE)");
				if (islands > gpus)
					BAD("islands", "%d islands for %d GPUs",
					    islands, gpus);
				pol_node_type_uniform(&t, tok[1], gpus,
						      sockets);
				islands_levels(&t, islands);
			}
			nt = realloc(c->types,
				     (size_t) (c->n_types + 1) * sizeof(*nt));
			if (!nt)
				goto nomem;
			c->types = nt;
			c->types[c->n_types++] = t;
		} else if (!strcmp(tok[0], "nodes")) {
			int type = -1, count = -1, per_leaf = 16, k;
			pol_pool_t pool = POL_POOL_TRAINING;
			pol_node_t *nn;

			if (n < 2 || strchr(tok[1], '='))
				BAD("nodes",
				    "expected 'nodes TYPE count=N ...'");
			for (i = 0; i < c->n_types; i++)
				if (!strcmp(c->types[i].name, tok[1]))
					type = i;
			if (type < 0)
				BAD(tok[1],
				    "unknown node type (define it with 'nodetype' first)");
			for (i = 2; i < n; i++) {
				char *eq = strchr(tok[i], '=');

				if (!eq)
					BAD(tok[i], "expected key=value");
				*eq++ = '\0';
				if (!strcmp(tok[i], "count")) {
					if (parse_int(eq, 1, 1000000, &count))
						BAD("count",
						    "'%s' is not in [1, 1000000]",
						    eq);
				} else if (!strcmp(tok[i], "per_leaf")) {
					if (parse_int(eq, 0, 1000000,
						      &per_leaf))
						BAD("per_leaf",
						    "'%s' is not in [0, 1000000]",
						    eq);
				} else if (!strcmp(tok[i], "pool")) {
					if (!strcmp(eq, "training"))
						pool = POL_POOL_TRAINING;
					else if (!strcmp(eq, "inference"))
						pool = POL_POOL_INFERENCE;
					else
						BAD("pool",
						    "'%s' is not training or inference",
						    eq);
				} else {
					BAD(tok[i],
					    "unknown key (count, per_leaf, pool)");
				}
			}
			if (count < 0)
				BAD("count", "missing");
			if (c->n_nodes + count > 1000000)
				BAD("count", "more than 1000000 nodes in all");
			nn = realloc(c->nodes, (size_t) (c->n_nodes + count) *
						       sizeof(*nn));
			if (!nn)
				goto nomem;
			c->nodes = nn;
			for (k = 0; k < count; k++) {
				pol_node_t *nd = &c->nodes[c->n_nodes + k];

				memset(nd, 0, sizeof(*nd));
				snprintf(nd->name, sizeof(nd->name),
					 "%.40s%05d", c->types[type].name,
					 c->n_nodes + k);
				nd->type = type;
				nd->leaf = leaf + (per_leaf ? k / per_leaf : 0);
				nd->pool = pool;
				nd->up = true;
			}
			leaf = c->nodes[c->n_nodes + count - 1].leaf + 1;
			c->n_nodes += count;
		} else {
			BAD(tok[0],
			    "unknown directive (cluster, nodetype, nodes)");
		}
	}
	if (rc < 0)
		BAD("line", "too long");
	if (c->n_nodes == 0)
		BAD("nodes", "the cluster has no nodes");
#undef BAD
	c->n_leaves = leaf;
	for (i = 0; i < c->n_nodes; i++)
		c->nodes[i].free = pol_node_all_gpus(c, i);
	return c;
nomem:
	agora_err_set(err, "%s: out of memory", name);
	errno = ENOMEM;
fail:
	pol_cluster_destroy(&c);
	return NULL;
}
