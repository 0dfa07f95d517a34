/*
 * pol_apps.c - app builders (pol_apps.h): sort the jobs by (key, submit,
 * index), cut a key's run where the submission gap exceeds gap_s (for the
 * definitions that chain), number the groups by their first job.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agora_num.h"
#include "pol_app_index.h"
#include "pol_apps.h"

/* How a job is keyed under a definition. */
typedef enum key_class {
	KC_ARRAY = 0, /* by array_id */
	KC_NAMED,     /* by account, user, name */
	KC_SINGLE,    /* alone */
	KC_ACCOUNT,   /* by account */
	KC_USER,      /* by user */
	KC_PREFIX,    /* by name prefix */
} key_class_t;

typedef struct sort_ctx {
	const pol_apps_spec_t *spec;
	const pol_apps_job_t *jobs;
} sort_ctx_t;

static const char *str(const char *s)
{
	return s ? s : "";
}

static key_class_t key_class(const pol_apps_spec_t *spec,
			     const pol_apps_job_t *j)
{
	switch (spec->def) {
	case POL_APPS_USER:
		return KC_USER;
	case POL_APPS_NAME_PREFIX:
		return KC_PREFIX;
	case POL_APPS_ARRAY:
		if (j->array_id)
			return KC_ARRAY;
		return *str(j->name) ? KC_NAMED : KC_SINGLE;
	case POL_APPS_BURST:
	case POL_APPS_ACCOUNT:
	default:
		return KC_ACCOUNT;
	}
}

/* Does this definition cut a key's run at submission gaps (arrays
 * excepted)? */
static int chains(const pol_apps_spec_t *spec)
{
	return spec->def == POL_APPS_ARRAY || spec->def == POL_APPS_BURST;
}

size_t pol_apps_prefix_len(const char *name, char sep)
{
	const char *p = strchr(str(name), sep);

	return p ? (size_t) (p - name) : strlen(str(name));
}

static int cmp_prefix(const char *a, const char *b, char sep)
{
	size_t la = pol_apps_prefix_len(a, sep),
	       lb = pol_apps_prefix_len(b, sep);
	int c = memcmp(str(a), str(b), la < lb ? la : lb);

	if (c)
		return c;
	return (la > lb) - (la < lb);
}

/* Order of keys: 0 when a and b have the same key. */
static int cmp_key(const pol_apps_spec_t *spec, const pol_apps_job_t *a,
		   const pol_apps_job_t *b, int ia, int ib)
{
	key_class_t ka = key_class(spec, a), kb = key_class(spec, b);
	int c;

	if (ka != kb)
		return ka < kb ? -1 : 1;
	switch (ka) {
	case KC_ARRAY:
		return (a->array_id > b->array_id) -
		       (a->array_id < b->array_id);
	case KC_NAMED:
		if ((c = strcmp(str(a->account), str(b->account))))
			return c;
		if ((c = strcmp(str(a->user), str(b->user))))
			return c;
		return strcmp(str(a->name), str(b->name));
	case KC_SINGLE:
		return (ia > ib) - (ia < ib);
	case KC_ACCOUNT:
		return strcmp(str(a->account), str(b->account));
	case KC_USER:
		return strcmp(str(a->user), str(b->user));
	case KC_PREFIX:
		if ((c = strcmp(str(a->account), str(b->account))))
			return c;
		return cmp_prefix(a->name, b->name, spec->separator);
	}
	return 0;
}

static int cmp_job(const void *x, const void *y, void *arg)
{
	const sort_ctx_t *k = arg;
	int a = *(const int *) x, b = *(const int *) y;
	const pol_apps_job_t *ja = &k->jobs[a], *jb = &k->jobs[b];
	int c = cmp_key(k->spec, ja, jb, a, b);

	if (c)
		return c;
	if (ja->submit != jb->submit)
		return ja->submit < jb->submit ? -1 : 1;
	return (a > b) - (a < b);
}

/* groups by their first job: submit, then index */
static int cmp_first(const void *x, const void *y, void *arg)
{
	const pol_apps_job_t *jobs = arg;
	int a = *(const int *) x, b = *(const int *) y;

	if (jobs[a].submit != jobs[b].submit)
		return jobs[a].submit < jobs[b].submit ? -1 : 1;
	return (a > b) - (a < b);
}

void pol_apps_free(pol_apps_t *a)
{
	if (!a)
		return;
	free(a->app);
	free(a->first);
	free(a->size);
	free(a->other);
	memset(a, 0, sizeof(*a));
}

static int check_spec(const pol_apps_spec_t *spec, agora_err_t *err)
{
	if (!pol_apps_def_name(spec->def)) {
		agora_err_set(err, "apps: unknown definition %d",
			      (int) spec->def);
		return -1;
	}
	if (chains(spec) &&
	    (spec->gap_s < 0 || spec->gap_s > POL_APPS_MAX_GAP)) {
		agora_err_set(err, "apps: gap %lld s is out of range [0, %d] s",
			      (long long) spec->gap_s, POL_APPS_MAX_GAP);
		return -1;
	}
	if (spec->max_per_account < 0 ||
	    spec->max_per_account > POL_APPS_MAX_PER_ACCOUNT) {
		agora_err_set(
			err,
			"apps: %d apps per account is out of range [0, %d]",
			spec->max_per_account, POL_APPS_MAX_PER_ACCOUNT);
		return -1;
	}
	if (spec->def == POL_APPS_NAME_PREFIX && !spec->separator) {
		agora_err_set(err, "apps: name_prefix needs a separator");
		return -1;
	}
	return 0;
}

/*
 * The cap (see pol_apps.h): an account's apps beyond max_per_account, in
 * app order, merge into its first such app, flagged other.  0 or -1/ENOMEM
 * (out unchanged).
 */
static int cap_apps(const pol_apps_spec_t *spec, const pol_apps_job_t *jobs,
		    int n, pol_apps_t *out)
{
	pol_app_index_t *acc = NULL;
	int *cnt = NULL, *over = NULL, *map = NULL, n_acc = 0, g, i, ng = 0;
	size_t m = (size_t) (out->n_apps ? out->n_apps : 1);
	int rc = -1;

	out->other = calloc(m, 1);
	if (!out->other)
		return -1;
	if (!spec->max_per_account || spec->def == POL_APPS_ACCOUNT ||
	    spec->def == POL_APPS_USER)
		return 0;
	acc = pol_app_index_create();
	cnt = calloc(m, sizeof(*cnt));
	over = malloc(m * sizeof(*over));
	map = malloc(m * sizeof(*map));
	if (!acc || !cnt || !over || !map)
		goto out;
	/* apps in order of their first job: map[g] <= g, and an app that
	 * stays moves to map[g] in place (front to back) with its first job;
	 * a merged one only adds its jobs */
	for (g = 0; g < out->n_apps; g++) {
		const char *name = str(jobs[out->first[g]].account);
		int k;

		if (pol_app_index_get(acc, name, &k)) {
			k = n_acc++;
			over[k] = -1;
			if (pol_app_index_put(acc, name, k) < 0)
				goto out;
		}
		if (++cnt[k] <= spec->max_per_account || over[k] < 0) {
			map[g] = ng++;
			out->first[map[g]] = out->first[g];
			out->other[map[g]] = cnt[k] > spec->max_per_account;
			if (out->other[map[g]])
				over[k] = map[g];
		} else {
			map[g] = over[k];
		}
	}
	for (g = 0; g < ng; g++)
		out->size[g] = 0;
	for (i = 0; i < n; i++) {
		out->app[i] = map[out->app[i]];
		out->size[out->app[i]]++;
	}
	out->n_apps = ng;
	rc = 0;
out:
	pol_app_index_destroy(&acc);
	free(cnt);
	free(over);
	free(map);
	return rc;
}

int pol_apps_build(const pol_apps_spec_t *spec, const pol_apps_job_t *jobs,
		   int n, pol_apps_t *out, agora_err_t *err)
{
	sort_ctx_t k = { spec, jobs };
	int *idx = NULL, *gfirst = NULL, *order = NULL, *gof = NULL;
	int i, g, ng = 0;
	size_t m = (size_t) (n > 0 ? n : 1);

	memset(out, 0, sizeof(*out));
	if (!spec || n < 0 || (n > 0 && !jobs) || check_spec(spec, err)) {
		if (!spec || n < 0 || (n > 0 && !jobs))
			agora_err_set(err, "apps: bad arguments");
		errno = EINVAL;
		return -1;
	}
	idx = malloc(m * sizeof(*idx));
	gfirst = malloc(m * sizeof(*gfirst));
	gof = malloc(m * sizeof(*gof)); /* group of each job */
	out->app = malloc(m * sizeof(*out->app));
	if (!idx || !gfirst || !gof || !out->app)
		goto nomem;
	for (i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, (size_t) n, sizeof(*idx), cmp_job, &k);
	for (i = 0; i < n; i++) {
		int j = idx[i], p = i ? idx[i - 1] : -1;

		if (p < 0 || cmp_key(spec, &jobs[p], &jobs[j], p, j) ||
		    (chains(spec) && key_class(spec, &jobs[j]) != KC_ARRAY &&
		     jobs[j].submit - jobs[p].submit > spec->gap_s))
			gfirst[ng++] =
				j; /* sorted: the first is the earliest */
		gof[j] = ng - 1;
	}
	/* number groups by their first job */
	order = malloc((size_t) (ng ? ng : 1) * sizeof(*order));
	out->first = malloc((size_t) (ng ? ng : 1) * sizeof(*out->first));
	out->size = calloc((size_t) (ng ? ng : 1), sizeof(*out->size));
	if (!order || !out->first || !out->size)
		goto nomem;
	memcpy(out->first, gfirst, (size_t) ng * sizeof(*gfirst));
	qsort_r(out->first, (size_t) ng, sizeof(int), cmp_first, (void *) jobs);
	for (g = 0; g < ng; g++)
		order[gof[out->first[g]]] = g;
	for (i = 0; i < n; i++) {
		out->app[i] = order[gof[i]];
		out->size[out->app[i]]++;
	}
	out->n_apps = ng;
	if (cap_apps(spec, jobs, n, out) < 0)
		goto nomem;
	free(idx);
	free(gfirst);
	free(gof);
	free(order);
	return 0;
nomem:
	free(idx);
	free(gfirst);
	free(gof);
	free(order);
	pol_apps_free(out);
	agora_err_set(err, "apps: out of memory");
	errno = ENOMEM;
	return -1;
}

void pol_apps_name(const pol_apps_spec_t *spec, const pol_apps_job_t *first,
		   char *out, size_t len)
{
	if (!len)
		return;
	switch (key_class(spec, first)) {
	case KC_USER:
		snprintf(out, len, "user:%s", str(first->user));
		break;
	case KC_PREFIX:
		snprintf(
			out, len, "%s/%.*s", str(first->account),
			(int) pol_apps_prefix_len(first->name, spec->separator),
			str(first->name));
		break;
	case KC_ARRAY:
		snprintf(out, len, "%s/array:%lld", str(first->account),
			 (long long) first->array_id);
		break;
	case KC_NAMED:
		snprintf(out, len, "%s/%s/%s#%lld", str(first->account),
			 str(first->user), str(first->name),
			 (long long) first->id);
		break;
	case KC_SINGLE:
		snprintf(out, len, "%s/job:%lld", str(first->account),
			 (long long) first->id);
		break;
	case KC_ACCOUNT:
		if (spec->def == POL_APPS_BURST)
			snprintf(out, len, "%s#%lld", str(first->account),
				 (long long) first->id);
		else
			snprintf(out, len, "%s", str(first->account));
		break;
	}
}

void pol_apps_app_name(const pol_apps_spec_t *spec, const pol_apps_t *a,
		       const pol_apps_job_t *jobs, int g, char *out, size_t len)
{
	if (!len)
		return;
	if (a->other && a->other[g])
		snprintf(out, len, "%s/~other", str(jobs[a->first[g]].account));
	else
		pol_apps_name(spec, &jobs[a->first[g]], out, len);
}

static const char *const def_names[] = {
	[POL_APPS_ACCOUNT] = "account",
	[POL_APPS_USER] = "user",
	[POL_APPS_NAME_PREFIX] = "name_prefix",
	[POL_APPS_ARRAY] = "array",
	[POL_APPS_BURST] = "burst",
};

const char *pol_apps_def_name(pol_apps_def_t def)
{
	if ((int) def < 0 ||
	    (size_t) def >= sizeof(def_names) / sizeof(def_names[0]))
		return NULL;
	return def_names[def];
}

int pol_apps_parse(const char *text, pol_apps_spec_t *spec, agora_err_t *err)
{
	const char *colon = strchr(text ? text : "", ':');
	size_t n = colon ? (size_t) (colon - text) : strlen(text ? text : "");
	pol_apps_spec_t s = { POL_APPS_ACCOUNT, 3600, '_', 0 };
	int d;

	for (d = 0; d <= POL_APPS_BURST; d++)
		if (strlen(def_names[d]) == n &&
		    !strncmp(text, def_names[d], n))
			break;
	if (d > POL_APPS_BURST && n == 6 && !strncmp(text, "tenant", 6))
		d = POL_APPS_ACCOUNT;
	if (d > POL_APPS_BURST) {
		agora_err_set(
			err,
			"'%s' is not one of account, tenant, user, name_prefix, array[:GAP], burst[:GAP]",
			text ? text : "");
		errno = EINVAL;
		return -1;
	}
	s.def = (pol_apps_def_t) d;
	if (colon) {
		double g;

		if (!chains(&s)) {
			agora_err_set(err,
				      "'%s': only array and burst take a gap",
				      text);
			errno = EINVAL;
			return -1;
		}
		if (agora_parse_seconds(colon + 1, strlen(colon + 1), &g) ||
		    g < 0 || g > POL_APPS_MAX_GAP || g != floor(g)) {
			agora_err_set(
				err,
				"'%s': the gap is not a whole number of seconds in [0, %d] (suffix s, m, h or d allowed)",
				text, POL_APPS_MAX_GAP);
			errno = EINVAL;
			return -1;
		}
		s.gap_s = (int64_t) g;
	}
	*spec = s;
	return 0;
}
