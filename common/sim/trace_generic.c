/*
 * trace_generic.c - the generic job CSV of agora-sim (trace.h, doc/sim.md).
 */
#include <errno.h>
#include <math.h>
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

static int parse_num(const char *s, double *out)
{
	char *end;

	errno = 0;
	*out = strtod(s, &end);
	return (errno || end == s || *end || !isfinite(*out)) ? -1 : 0;
}

int trace_parse_generic(const char *text, const char *name,
			trace_filter_t filter, trace_t *out, agora_err_t *err)
{
	trace_line_t tl = { .p = text };
	trace_t t = { 0 };
	int map[MAX_COLS], has[C_N] = { 0 }, ncol, i, rc, row = 0;
	char *f[MAX_COLS + 1];

#define BAD(col, ...)                                                          \
	do {                                                                   \
		char why_[256];                                                \
		snprintf(why_, sizeof(why_), __VA_ARGS__);                     \
		agora_err_set(err, "%s:%d: %s: %s", name, tl.line, col, why_); \
		errno = EINVAL;                                                \
		goto fail;                                                     \
	} while (0)

	rc = trace_next_line(&tl);
	if (rc != 1)
		BAD("header",
		    "empty file: expected a header line naming the columns");
	ncol = trace_split(tl.buf, f, MAX_COLS + 1);
	if (ncol > MAX_COLS)
		BAD("header", "more than %d columns", MAX_COLS);
	for (i = 0; i < ncol; i++) {
		int c;

		for (c = 0; c < C_N; c++)
			if (!strcmp(f[i], col_names[c]))
				break;
		if (c == C_N)
			BAD(f[i],
			    "unknown column (known: id, submit, duration, gpus, tenant, nodes, gpus_per_node, min_gpus, max_gpus, time_limit, priority, band, dataset, pool)");
		if (has[c])
			BAD(f[i], "column given twice");
		has[c] = 1;
		map[i] = c;
	}
	if (!has[C_SUBMIT] || !has[C_DURATION])
		BAD("header", "columns submit and duration are required");
	if (!has[C_GPUS] && !(has[C_NODES] && has[C_GPN]))
		BAD("header",
		    "column gpus (or nodes and gpus_per_node) is required");
	while ((rc = trace_next_line(&tl)) == 1) {
		double v[C_N] = { 0 };
		const char *tenant = "default", *colname = "";
		sim_job_t j;
		int n;

		row++;
		n = trace_split(tl.buf, f, MAX_COLS + 1);
		if (n != ncol)
			BAD("row", "%d fields, the header has %d", n, ncol);
		memset(&j, 0, sizeof(j));
		j.id = row;
		j.dataset = -1;
		for (i = 0; i < ncol; i++) {
			int c = map[i];

			colname = col_names[c];
			if (c == C_TENANT) {
				if (!*f[i])
					BAD(colname, "empty tenant");
				tenant = f[i];
				continue;
			}
			if (c == C_POOL) {
				if (!strcmp(f[i], "training"))
					j.pool = POL_POOL_TRAINING;
				else if (!strcmp(f[i], "inference"))
					j.pool = POL_POOL_INFERENCE;
				else
					BAD(colname,
					    "'%s' is not training or inference",
					    f[i]);
				continue;
			}
			if (parse_num(f[i], &v[c]))
				BAD(colname, "'%s' is not a number", f[i]);
			if (v[c] < 0 && c != C_PRIO && c != C_BAND &&
			    c != C_DATASET)
				BAD(colname, "%g is negative", v[c]);
			if (fabs(v[c]) > 1e15)
				BAD(colname, "%g is out of range", v[c]);
			/* counts and ids go into ints (found by libFuzzer) */
			if (c != C_ID && c != C_SUBMIT && c != C_DURATION &&
			    c != C_LIMIT && c != C_PRIO && fabs(v[c]) > 1e9)
				BAD(colname, "%g is out of range", v[c]);
			if (c != C_SUBMIT && c != C_DURATION && c != C_LIMIT &&
			    v[c] != floor(v[c]))
				BAD(colname, "'%s' is not an integer", f[i]);
		}
		if (has[C_ID])
			j.id = (int64_t) v[C_ID];
		j.submit = (int64_t) llround(v[C_SUBMIT]);
		j.duration = (int64_t) llround(v[C_DURATION]);
		if (j.duration < 1)
			j.duration = 1;
		j.nodes = (int) v[C_NODES];
		j.gpn = (int) v[C_GPN];
		if (j.nodes > 0 && j.gpn < 1)
			BAD("gpus_per_node",
			    "nodes > 0 needs gpus_per_node >= 1");
		if (j.nodes > 0 &&
		    (j.gpn > POL_MAX_GPUS_PER_NODE || j.nodes > 1000000))
			BAD("nodes", "gang %d x %d is too large", j.nodes,
			    j.gpn);
		j.gpus = has[C_GPUS] ? (int) v[C_GPUS] : j.nodes * j.gpn;
		if (j.nodes > 0 && has[C_GPUS] && j.gpus != j.nodes * j.gpn)
			BAD("gpus", "%d != nodes x gpus_per_node = %d", j.gpus,
			    j.nodes * j.gpn);
		if (j.gpus < 1 || j.gpus > 10000000)
			BAD("gpus", "%d is not a GPU count >= 1", j.gpus);
		j.min_gpus = (int) v[C_MIN];
		j.max_gpus = (int) v[C_MAX];
		if ((j.min_gpus && j.min_gpus > j.gpus) ||
		    (j.max_gpus && j.max_gpus < j.gpus))
			BAD("min_gpus",
			    "the elastic range [%d, %d] must contain gpus = %d",
			    j.min_gpus, j.max_gpus, j.gpus);
		j.time_limit = (int64_t) ceil(v[C_LIMIT]);
		j.priority = (int64_t) v[C_PRIO];
		j.band = (int) v[C_BAND];
		if (has[C_DATASET])
			j.dataset = (int) v[C_DATASET];
		if (filter == TRACE_FILTER_POLLUX &&
		    (v[C_DURATION] < 60 ||
		     v[C_DURATION] * j.gpus >= 1000.0 * 3600)) {
			t.filtered++;
			continue;
		}
		j.tenant = trace_tenant(&t, tenant);
		if (j.tenant < 0 || trace_add_job(&t, &j))
			goto nomem;
	}
	if (rc < 0)
		BAD("row", "line longer than %zu bytes", sizeof(tl.buf) - 1);
#undef BAD
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
