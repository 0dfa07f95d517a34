/*
 * sim_cluster.c - the cluster file and shorthand of agora-sim
 * (sim_cluster.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
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

/* the parse of one cluster file: its line cursor, the cluster so far */
typedef struct cparse {
	const char *name;
	trace_line_t tl;
	pol_cluster_t *c;
	sim_nodetype_load_f load;
	void *load_arg;
	agora_err_t *err;
	int leaf; /* the next leaf switch index */
} cparse_t;

__attribute__((format(printf, 3, 4))) static int bad(cparse_t *p,
						     const char *key,
						     const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	agora_err_set(p->err, "%s:%d: %s: %s", p->name, p->tl.line, key, why);
	errno = EINVAL;
	return -1;
}

static int nomem(cparse_t *p)
{
	agora_err_set(p->err, "%s: out of memory", p->name);
	errno = ENOMEM;
	return -1;
}

/* the node type t of an hwloc=FILE key */
static int nodetype_hwloc(cparse_t *p, const char *tname, const char *xml,
			  pol_node_type_t *t)
{
	agora_err_t lerr = { { 0 } };

	if (!p->load)
		return bad(
			p, "hwloc",
			"hwloc node types need the topology loader (topo_*), not available in this build");
	memset(t, 0, sizeof(*t));
	if (p->load(p->load_arg, xml, t, &lerr))
		return bad(p, "hwloc", "%.200s", lerr.text);
	snprintf(t->name, sizeof(t->name), "%s", tname);
	return 0;
}

/* nodetype NAME gpus=N [sockets=S] [islands=I] | hwloc=FILE */
static int parse_nodetype(cparse_t *p, char **tok, int n)
{
	pol_cluster_t *c = p->c;
	pol_node_type_t *nt, t;
	int gpus = -1, sockets = 2, islands = 1, i;
	const char *xml = NULL;

	if (n < 2 || strchr(tok[1], '='))
		return bad(p, "nodetype",
			   "expected 'nodetype NAME gpus=N ...'");
	for (i = 0; i < c->n_types; i++)
		if (!strcmp(c->types[i].name, tok[1]))
			return bad(p, tok[1], "node type defined twice");
	for (i = 2; i < n; i++) {
		char *eq = strchr(tok[i], '=');

		if (!eq)
			return bad(p, tok[i], "expected key=value");
		*eq++ = '\0';
		if (!strcmp(tok[i], "gpus")) {
			if (parse_int(eq, 1, POL_MAX_GPUS_PER_NODE, &gpus))
				return bad(p, "gpus", "'%s' is not in [1, %d]",
					   eq, POL_MAX_GPUS_PER_NODE);
		} else if (!strcmp(tok[i], "sockets")) {
			if (parse_int(eq, 1, 16, &sockets))
				return bad(p, "sockets",
					   "'%s' is not in [1, 16]", eq);
		} else if (!strcmp(tok[i], "islands")) {
			if (parse_int(eq, 1, POL_MAX_GPUS_PER_NODE, &islands))
				return bad(p, "islands",
					   "'%s' is not in [1, %d]", eq,
					   POL_MAX_GPUS_PER_NODE);
		} else if (!strcmp(tok[i], "hwloc")) {
			xml = eq;
		} else {
			return bad(
				p, tok[i],
				"unknown key (gpus, sockets, islands, hwloc)");
		}
	}
	if (xml) {
		if (nodetype_hwloc(p, tok[1], xml, &t))
			return -1;
	} else {
		if (gpus < 0)
			return bad(p, "gpus", "missing (gpus=N or hwloc=FILE)");
		if (islands > gpus)
			return bad(p, "islands", "%d islands for %d GPUs",
				   islands, gpus);
		pol_node_type_uniform(&t, tok[1], gpus, sockets);
		islands_levels(&t, islands);
	}
	nt = realloc(c->types, (size_t) (c->n_types + 1) * sizeof(*nt));
	if (!nt)
		return nomem(p);
	c->types = nt;
	c->types[c->n_types++] = t;
	return 0;
}

/* the key=value options of a nodes line */
static int nodes_options(cparse_t *p, char **tok, int n, int *count,
			 int *per_leaf, pol_pool_t *pool)
{
	int i;

	for (i = 2; i < n; i++) {
		char *eq = strchr(tok[i], '=');

		if (!eq)
			return bad(p, tok[i], "expected key=value");
		*eq++ = '\0';
		if (!strcmp(tok[i], "count")) {
			if (parse_int(eq, 1, 1000000, count))
				return bad(p, "count",
					   "'%s' is not in [1, 1000000]", eq);
		} else if (!strcmp(tok[i], "per_leaf")) {
			if (parse_int(eq, 0, 1000000, per_leaf))
				return bad(p, "per_leaf",
					   "'%s' is not in [0, 1000000]", eq);
		} else if (!strcmp(tok[i], "pool")) {
			if (!strcmp(eq, "training"))
				*pool = POL_POOL_TRAINING;
			else if (!strcmp(eq, "inference"))
				*pool = POL_POOL_INFERENCE;
			else
				return bad(p, "pool",
					   "'%s' is not training or inference",
					   eq);
		} else {
			return bad(p, tok[i],
				   "unknown key (count, per_leaf, pool)");
		}
	}
	if (*count < 0)
		return bad(p, "count", "missing");
	return 0;
}

/* nodes TYPE count=N [per_leaf=L] [pool=training|inference] */
static int parse_nodes(cparse_t *p, char **tok, int n)
{
	pol_cluster_t *c = p->c;
	int type = -1, count = -1, per_leaf = 16, i, k;
	pol_pool_t pool = POL_POOL_TRAINING;
	pol_node_t *nn;

	if (n < 2 || strchr(tok[1], '='))
		return bad(p, "nodes", "expected 'nodes TYPE count=N ...'");
	for (i = 0; i < c->n_types; i++)
		if (!strcmp(c->types[i].name, tok[1]))
			type = i;
	if (type < 0)
		return bad(
			p, tok[1],
			"unknown node type (define it with 'nodetype' first)");
	if (nodes_options(p, tok, n, &count, &per_leaf, &pool))
		return -1;
	if (c->n_nodes + count > 1000000)
		return bad(p, "count", "more than 1000000 nodes in all");
	nn = realloc(c->nodes, (size_t) (c->n_nodes + count) * sizeof(*nn));
	if (!nn)
		return nomem(p);
	c->nodes = nn;
	for (k = 0; k < count; k++) {
		pol_node_t *nd = &c->nodes[c->n_nodes + k];

		memset(nd, 0, sizeof(*nd));
		snprintf(nd->name, sizeof(nd->name), "%.40s%05d",
			 c->types[type].name, c->n_nodes + k);
		nd->type = type;
		nd->leaf = p->leaf + (per_leaf ? k / per_leaf : 0);
		nd->pool = pool;
		nd->up = true;
	}
	p->leaf = c->nodes[c->n_nodes + count - 1].leaf + 1;
	c->n_nodes += count;
	return 0;
}

pol_cluster_t *sim_cluster_parse(const char *text, const char *name,
				 sim_nodetype_load_f load, void *load_arg,
				 agora_err_t *err)
{
	cparse_t p = { .name = name,
		       .tl = { .p = text },
		       .load = load,
		       .load_arg = load_arg,
		       .err = err };
	int rc, i;

	p.c = calloc(1, sizeof(*p.c));
	if (!p.c) {
		errno = ENOMEM;
		return NULL;
	}
	snprintf(p.c->name, sizeof(p.c->name), "%s", "cluster");
	while ((rc = trace_next_line(&p.tl)) == 1) {
		char *tok[16], *hash = strchr(p.tl.buf, '#');
		int n, e;

		if (hash)
			*hash = '\0';
		n = tokens(p.tl.buf, tok, 16);
		if (n == 0)
			continue;
		if (!strcmp(tok[0], "cluster")) {
			e = n != 2 ? bad(&p, "cluster",
					 "expected 'cluster NAME'")
				   : 0;
			if (!e)
				snprintf(p.c->name, sizeof(p.c->name), "%s",
					 tok[1]);
		} else if (!strcmp(tok[0], "nodetype")) {
			e = parse_nodetype(&p, tok, n);
		} else if (!strcmp(tok[0], "nodes")) {
			e = parse_nodes(&p, tok, n);
		} else {
			e = bad(&p, tok[0],
				"unknown directive (cluster, nodetype, nodes)");
		}
		if (e)
			goto fail;
	}
	if ((rc < 0 && bad(&p, "line", "too long")) ||
	    (p.c->n_nodes == 0 && bad(&p, "nodes", "the cluster has no nodes")))
		goto fail;
	p.c->n_leaves = p.leaf;
	for (i = 0; i < p.c->n_nodes; i++)
		p.c->nodes[i].free = pol_node_all_gpus(p.c, i);
	return p.c;
fail:
	pol_cluster_destroy(&p.c);
	return NULL;
}
