/*
 * trace.h - job traces for the simulator: pure parsing of text buffers
 * (reading files is the caller's job, contrib/sim).
 *
 * Two formats, told apart by the header line (doc/sim.md):
 *  - Philly as preprocessed by Pollux:
 *      timestamp,duration,num_gpus,gpu_time,cluster
 *    timestamp "YYYY-MM-DD HH:MM:SS" (UTC), duration s (may be
 *    fractional: rounded to the nearest second, at least 1 s), cluster =
 *    the tenant.  ids are the 1-based data row numbers.
 *  - the generic CSV: a header naming columns in any order; required
 *    submit (s), duration (s) and gpus (or nodes + gpus_per_node);
 *    optional id, tenant, name (the job name), nodes, gpus_per_node,
 *    min_gpus, max_gpus,
 *    time_limit (s), priority, band, dataset, pool (training|inference).
 *    Unknown columns are an error.
 * In both, blank lines and lines starting with '#' are skipped.
 *
 * Errors: -1, errno EINVAL, err = "NAME:LINE: COLUMN: why" (ENOMEM as
 * usual); nothing is returned on error.
 *
 * Ownership: trace_parse*() fill a trace_t the caller owns and releases
 * with trace_free().
 */
#ifndef TRACE_H
#define TRACE_H

#include "agora_err.h"
#include "sim.h"

typedef enum trace_filter {
	TRACE_FILTER_NONE = 0,
	/* Pollux/Sia: duration >= 60 s and gpu_time < 1000 GPU-hours */
	TRACE_FILTER_POLLUX,
} trace_filter_t;

typedef struct trace {
	sim_job_t *jobs;
	int n;
	char (*tenants)[POL_NAME_LEN];
	int n_tenants;
	int filtered; /* rows dropped by the filter */
	/* job names (generic "name" column): job_name[i] indexes names;
	 * NULL when the trace has none */
	int *job_name;
	char (*names)[POL_NAME_LEN];
	int n_names;
	const char *format; /* "philly" or "generic" (static) */
} trace_t;

int trace_parse(const char *text, const char *name, trace_filter_t filter,
		trace_t *t, agora_err_t *err);
int trace_parse_philly(const char *text, const char *name,
		       trace_filter_t filter, trace_t *t, agora_err_t *err);
int trace_parse_generic(const char *text, const char *name,
			trace_filter_t filter, trace_t *t, agora_err_t *err);
void trace_free(trace_t *t);

/* "none" / "pollux" -> filter; -1/EINVAL otherwise. */
int trace_filter_parse(const char *s, trace_filter_t *f);

/* Internal helpers shared by the trace_*.c parsers. */
typedef struct trace_line {
	const char *p; /* cursor */
	int line;      /* 1-based number of the line last returned */
	char buf[4096];
} trace_line_t;
/* Next non-blank, non-comment line into tl->buf (no newline); 1, 0 at the
 * end, -1 if a line is too long (errno E2BIG). */
int trace_next_line(trace_line_t *tl);
/* Split buf at ',' in place; returns the field count (at most max). */
int trace_split(char *buf, char **f, int max);
int trace_tenant(trace_t *t, const char *name);
int trace_add_job(trace_t *t, const sim_job_t *j);
/* The name of the job just added (t->n - 1); 0 or -1/ENOMEM. */
int trace_add_name(trace_t *t, const char *name);

#endif
