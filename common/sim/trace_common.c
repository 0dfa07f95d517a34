/*
 * trace_common.c - line splitting, the tenant table and the filter shared
 * by the trace parsers (trace.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

int trace_next_line(trace_line_t *tl)
{
	for (;;) {
		const char *e;
		size_t len;
		char *b;

		if (!tl->p || !*tl->p)
			return 0;
		e = strchr(tl->p, '\n');
		len = e ? (size_t) (e - tl->p) : strlen(tl->p);
		tl->line++;
		if (len >= sizeof(tl->buf)) {
			errno = E2BIG;
			return -1;
		}
		memcpy(tl->buf, tl->p, len);
		tl->buf[len] = '\0';
		tl->p = e ? e + 1 : tl->p + len;
		if (len && tl->buf[len - 1] == '\r')
			tl->buf[--len] = '\0';
		b = tl->buf;
		while (isspace((unsigned char) *b))
			b++;
		if (*b && *b != '#')
			return 1;
	}
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char) *s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char) e[-1]))
		*--e = '\0';
	return s;
}

int trace_split(char *buf, char **f, int max)
{
	int n = 0;
	char *p = buf;

	while (n < max) {
		char *c = strchr(p, ',');

		if (c)
			*c = '\0';
		f[n++] = trim(p);
		if (!c)
			break;
		p = c + 1;
	}
	return n;
}

/* index of name in the table (*tab, *n), added if new */
static int intern(char (**tab)[POL_NAME_LEN], int *n, const char *name)
{
	int i;

	for (i = *n - 1; i >= 0; i--)
		if (!strncmp((*tab)[i], name, POL_NAME_LEN - 1))
			return i;
	if ((*n & (*n - 1)) == 0) {
		int cap = *n ? *n * 2 : 1;
		char(*nt)[POL_NAME_LEN] = realloc(*tab,
						  (size_t) cap * sizeof(*nt));

		if (!nt) {
			errno = ENOMEM;
			return -1;
		}
		*tab = nt;
	}
	snprintf((*tab)[*n], POL_NAME_LEN, "%s", name);
	return (*n)++;
}

int trace_tenant(trace_t *t, const char *name)
{
	return intern(&t->tenants, &t->n_tenants, name);
}

int trace_add_name(trace_t *t, const char *name)
{
	int k = t->n - 1, id;

	if (k < 0)
		return 0;
	if ((k & (k - 1)) == 0) {
		int cap = k ? k * 2 : 1;
		int *nj = realloc(t->job_name, (size_t) cap * sizeof(*nj));

		if (!nj) {
			errno = ENOMEM;
			return -1;
		}
		t->job_name = nj;
	}
	id = intern(&t->names, &t->n_names, name ? name : "");
	if (id < 0)
		return -1;
	t->job_name[k] = id;
	return 0;
}

int trace_add_job(trace_t *t, const sim_job_t *j)
{
	if ((t->n & (t->n - 1)) == 0) {
		int cap = t->n ? t->n * 2 : 1;
		sim_job_t *nj = realloc(t->jobs, (size_t) cap * sizeof(*nj));

		if (!nj) {
			errno = ENOMEM;
			return -1;
		}
		t->jobs = nj;
	}
	t->jobs[t->n++] = *j;
	return 0;
}

void trace_free(trace_t *t)
{
	if (!t)
		return;
	free(t->jobs);
	free(t->tenants);
	free(t->job_name);
	free(t->names);
	memset(t, 0, sizeof(*t));
}

int trace_filter_parse(const char *s, trace_filter_t *f)
{
	if (!strcmp(s, "none")) {
		*f = TRACE_FILTER_NONE;
		return 0;
	}
	if (!strcmp(s, "pollux")) {
		*f = TRACE_FILTER_POLLUX;
		return 0;
	}
	errno = EINVAL;
	return -1;
}

int trace_parse(const char *text, const char *name, trace_filter_t filter,
		trace_t *t, agora_err_t *err)
{
	trace_line_t tl = { .p = text };

	if (!text) {
		agora_err_set(err, "%s: no data", name);
		errno = EINVAL;
		return -1;
	}
	if (trace_next_line(&tl) == 1 &&
	    !strncmp(tl.buf, "timestamp,duration,num_gpus", 27))
		return trace_parse_philly(text, name, filter, t, err);
	return trace_parse_generic(text, name, filter, t, err);
}
