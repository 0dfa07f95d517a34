/*
 * trace_generic.c - the generic job CSV of agora-sim (trace.h, doc/sim.md).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

enum col {
	C_ID,
	C_SUBMIT,
	C_DURATION,
	C_GPUS,
	C_TENANT,
	C_NODES,
	C_GPN,
	C_MIN,
	C_MAX,
	C_LIMIT,
	C_PRIO,
	C_BAND,
	C_DATASET,
	C_POOL,
	C_N
};

static const char *const col_names[C_N] = {
	"id",       "submit",        "duration", "gpus",     "tenant",
	"nodes",    "gpus_per_node", "min_gpus", "max_gpus", "time_limit",
	"priority", "band",          "dataset",  "pool",
};

#define MAX_COLS 32

/* the header's column map and the current row's context */
typedef struct gen {
	const char *name; /* file name for errors */
	trace_line_t tl;
	int map[MAX_COLS], has[C_N + 1], ncol;
	agora_err_t *err;
} gen_t;

__attribute__((format(printf, 3, 4))) static int bad(gen_t *g, const char *col,
						     const char *fmt, ...)
{
	char why[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	agora_err_set(g->err, "%s:%d: %s: %s", g->name, g->tl.line, col, why);
	errno = EINVAL;
	return -1;
}

static int parse_num(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return (errno || end == s || *end || !isfinite(*out)) ? -1 : 0;
}

static int parse_header(gen_t *g)
{
	char *f[MAX_COLS + 1];
	int i, c;

	if (trace_next_line(&g->tl) != 1)
		return bad(
			g, "header",
			"empty file: expected a header line naming the columns");
	g->ncol = trace_split(g->tl.buf, f, MAX_COLS + 1);
	if (g->ncol > MAX_COLS)
		return bad(g, "header", "more than %d columns", MAX_COLS);
	for (i = 0; i < g->ncol; i++) {
		for (c = 0; c <= C_N; c++)
			if (!strcmp(f[i], c < C_N ? col_names[c] : "name"))
				break;
		if (c > C_N)
			return bad(
				g, f[i],
				"unknown column (known: id, submit, duration, gpus, tenant, name, nodes, gpus_per_node, min_gpus, max_gpus, time_limit, priority, band, dataset, pool)");
		if (g->has[c])
			return bad(g, f[i], "column given twice");
		g->has[c] = 1;
		g->map[i] = c;
	}
	if (!g->has[C_SUBMIT] || !g->has[C_DURATION])
		return bad(g, "header",
			   "columns submit and duration are required");
	if (!g->has[C_GPUS] && !(g->has[C_NODES] && g->has[C_GPN]))
		return bad(
			g, "header",
			"column gpus (or nodes and gpus_per_node) is required");
	return 0;
}

/* one field of a row into v[c] (numbers) or *tenant / *jname / j->pool */
static int parse_field(gen_t *g, int c, const char *f, double *v,
		       const char **tenant, const char **jname, sim_job_t *j)
{
	const char *colname = c < C_N ? col_names[c] : "name";

	/* names longer than the tables keep would merge with others that
	 * share their first POL_NAME_LEN - 1 characters */
	if ((c == C_N || c == C_TENANT) && strlen(f) >= POL_NAME_LEN)
		return bad(g, colname, "longer than %d characters",
			   POL_NAME_LEN - 1);
	if (c == C_N) {
		*jname = f;
		return 0;
	}
	if (c == C_TENANT) {
		if (!*f)
			return bad(g, colname, "empty tenant");
		*tenant = f;
		return 0;
	}
	if (c == C_POOL) {
		if (!strcmp(f, "training"))
			j->pool = POL_POOL_TRAINING;
		else if (!strcmp(f, "inference"))
			j->pool = POL_POOL_INFERENCE;
		else
			return bad(g, colname,
				   "'%s' is not training or inference", f);
		return 0;
	}
	if (parse_num(f, &v[c]))
		return bad(g, colname, "'%s' is not a number", f);
	if (v[c] < 0 && c != C_PRIO && c != C_BAND && c != C_DATASET)
		return bad(g, colname, "%g is negative", v[c]);
	if (fabs(v[c]) > 1e15)
		return bad(g, colname, "%g is out of range", v[c]);
	/* counts and ids go into ints (found by libFuzzer) */
	if (c != C_ID && c != C_SUBMIT && c != C_DURATION && c != C_LIMIT &&
	    c != C_PRIO && fabs(v[c]) > 1e9)
		return bad(g, colname, "%g is out of range", v[c]);
	if (c != C_SUBMIT && c != C_DURATION && c != C_LIMIT &&
	    v[c] != floor(v[c]))
		return bad(g, colname, "'%s' is not an integer", f);
	return 0;
}

/* the job of the numbers v; checks the shape */
static int make_job(gen_t *g, const double *v, sim_job_t *j)
{
	if (g->has[C_ID])
		j->id = (int64_t) v[C_ID];
	j->submit = (int64_t) llround(v[C_SUBMIT]);
	j->duration = (int64_t) llround(v[C_DURATION]);
	if (j->duration < 1)
		j->duration = 1;
	j->nodes = (int) v[C_NODES];
	j->gpn = (int) v[C_GPN];
	if (j->nodes > 0 && j->gpn < 1)
		return bad(g, "gpus_per_node",
			   "nodes > 0 needs gpus_per_node >= 1");
	if (j->nodes > 0 &&
	    (j->gpn > POL_MAX_GPUS_PER_NODE || j->nodes > 1000000))
		return bad(g, "nodes", "gang %d x %d is too large", j->nodes,
			   j->gpn);
	j->gpus = g->has[C_GPUS] ? (int) v[C_GPUS] : j->nodes * j->gpn;
	if (j->nodes > 0 && g->has[C_GPUS] && j->gpus != j->nodes * j->gpn)
		return bad(g, "gpus", "%d != nodes x gpus_per_node = %d",
			   j->gpus, j->nodes * j->gpn);
	if (j->gpus < 1 || j->gpus > 10000000)
		return bad(g, "gpus", "%d is not a GPU count >= 1", j->gpus);
	j->min_gpus = (int) v[C_MIN];
	j->max_gpus = (int) v[C_MAX];
	if ((j->min_gpus && j->min_gpus > j->gpus) ||
	    (j->max_gpus && j->max_gpus < j->gpus))
		return bad(g, "min_gpus",
			   "the elastic range [%d, %d] must contain gpus = %d",
			   j->min_gpus, j->max_gpus, j->gpus);
	j->time_limit = (int64_t) ceil(v[C_LIMIT]);
	j->priority = (int64_t) v[C_PRIO];
	j->band = (int) v[C_BAND];
	if (g->has[C_DATASET])
		j->dataset = (int) v[C_DATASET];
	return 0;
}

int trace_parse_generic(const char *text, const char *name,
			trace_filter_t filter, trace_t *out, agora_err_t *err)
{
	gen_t g = { .name = name, .tl = { .p = text }, .err = err };
	trace_t t = { 0 };
	char *f[MAX_COLS + 1];
	int i, rc, row = 0;

	if (parse_header(&g))
		goto fail;
	while ((rc = trace_next_line(&g.tl)) == 1) {
		double v[C_N] = { 0 };
		const char *tenant = "default", *jname = NULL;
		sim_job_t j;
		int n;

		row++;
		n = trace_split(g.tl.buf, f, MAX_COLS + 1);
		if (n != g.ncol) {
			bad(&g, "row", "%d fields, the header has %d", n,
			    g.ncol);
			goto fail;
		}
		memset(&j, 0, sizeof(j));
		j.id = row;
		j.dataset = -1;
		for (i = 0; i < g.ncol; i++)
			if (parse_field(&g, g.map[i], f[i], v, &tenant, &jname,
					&j))
				goto fail;
		if (make_job(&g, v, &j))
			goto fail;
		if (filter == TRACE_FILTER_POLLUX &&
		    (v[C_DURATION] < 60 ||
		     v[C_DURATION] * j.gpus >= 1000.0 * 3600)) {
			t.filtered++;
			continue;
		}
		j.tenant = trace_tenant(&t, tenant);
		if (j.tenant < 0 || trace_add_job(&t, &j) ||
		    (g.has[C_N] && trace_add_name(&t, jname)))
			goto nomem;
	}
	if (rc < 0) {
		bad(&g, "row", "line longer than %zu bytes",
		    sizeof(g.tl.buf) - 1);
		goto fail;
	}
	t.format = "generic";
	*out = t;
	return 0;
nomem:
	agora_err_set(err, "%s: out of memory", name);
	errno = ENOMEM;
fail:
	trace_free(&t);
	return -1;
}
