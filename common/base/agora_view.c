/*
 * agora_view.c - read and render Agora's view file (agora_view.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "agora_file.h"
#include "agora_json.h"
#include "agora_view.h"

static void skip(agora_view_t *v, const char *what, size_t i, const char *field,
		 const char *why)
{
	if (!v->n_skipped++)
		snprintf(v->skipped, sizeof(v->skipped), "%s[%zu]: %s: %s",
			 what, i, field, why);
}

/* A JSON number (int or double) into *d; false if absent or not a number. */
static bool get_num(json_object *o, const char *key, double *d)
{
	json_object *x;

	if (!json_object_object_get_ex(o, key, &x))
		return false;
	if (!json_object_is_type(x, json_type_double) &&
	    !json_object_is_type(x, json_type_int))
		return false;
	*d = json_object_get_double(x);
	return isfinite(*d);
}

static bool get_int(json_object *o, const char *key, int64_t *n)
{
	json_object *x;

	if (!json_object_object_get_ex(o, key, &x) ||
	    !json_object_is_type(x, json_type_int))
		return false;
	*n = json_object_get_int64(x);
	return true;
}

static void parse_app(agora_view_t *v, json_object *a, size_t i)
{
	agora_view_app_t *r = &v->apps[v->n_apps];
	json_object *x;
	const char *f = NULL;

	if (!json_object_is_type(a, json_type_object)) {
		skip(v, "apps", i, "entry", "not an object");
		return;
	}
	if (!json_object_object_get_ex(a, "name", &x) ||
	    !json_object_is_type(x, json_type_string)) {
		skip(v, "apps", i, "name", "missing or not a string");
		return;
	}
	if (!get_num(a, "credit", &r->credit))
		f = "credit";
	else if (!get_num(a, "quota", &r->quota))
		f = "quota";
	else if (!get_num(a, "usage", &r->usage))
		f = "usage";
	if (f) {
		skip(v, "apps", i, f, "missing or not a finite number");
		return;
	}
	r->has_rho = json_object_object_get_ex(a, "rho", NULL);
	if (r->has_rho && !get_num(a, "rho", &r->rho)) {
		skip(v, "apps", i, "rho", "not a finite number");
		return;
	}
	(void) agora_sanitize_name(json_object_get_string(x),
				   (size_t) json_object_get_string_len(x),
				   r->name);
	v->n_apps++;
}

static void parse_lease(agora_view_t *v, json_object *l, size_t i)
{
	agora_view_lease_t *r = &v->leases[v->n_leases];
	json_object *x;
	const char *st;

	if (!json_object_is_type(l, json_type_object)) {
		skip(v, "leases", i, "entry", "not an object");
		return;
	}
	if (!get_int(l, "job", &r->job) || r->job <= 0) {
		skip(v, "leases", i, "job",
		     "missing or not a positive integer");
		return;
	}
	if (!get_int(l, "gpus", &r->gpus) || r->gpus < 0) {
		skip(v, "leases", i, "gpus", "missing or not an integer >= 0");
		return;
	}
	if (!get_int(l, "end", &r->end)) {
		skip(v, "leases", i, "end", "missing or not an integer");
		return;
	}
	r->start = r->requeue_at = 0;
	if (json_object_object_get_ex(l, "start", NULL) &&
	    !get_int(l, "start", &r->start)) {
		skip(v, "leases", i, "start", "not an integer");
		return;
	}
	if (json_object_object_get_ex(l, "requeue_at", NULL) &&
	    !get_int(l, "requeue_at", &r->requeue_at)) {
		skip(v, "leases", i, "requeue_at", "not an integer");
		return;
	}
	r->grace = false;
	if (json_object_object_get_ex(l, "state", &x)) {
		st = json_object_is_type(x, json_type_string)
			     ? json_object_get_string(x)
			     : "";
		if (!strcmp(st, "grace")) {
			r->grace = true;
		} else if (strcmp(st, "active")) {
			skip(v, "leases", i, "state", "not active or grace");
			return;
		}
	}
	v->n_leases++;
}

/* The array at key, or NULL (absent: empty; another type: an error). */
static int get_array(json_object *root, const char *key, json_object **arr,
		     const char *name, agora_err_t *err)
{
	*arr = NULL;
	if (!json_object_object_get_ex(root, key, arr))
		return 0;
	if (!json_object_is_type(*arr, json_type_array)) {
		agora_err_set(err, "%s: %s: not an array", name, key);
		return -1;
	}
	return 0;
}

int agora_view_parse(const char *text, size_t len, const char *name,
		     agora_view_t *v, agora_err_t *err)
{
	json_object *root, *apps, *leases;
	size_t i, n_apps, n_leases;
	double t = 0;

	memset(v, 0, sizeof(*v));
	if (!len) {
		agora_err_set(err, "%s: empty file", name);
		errno = EINVAL;
		return -1;
	}
	if (len > (size_t) AGORA_VIEW_MAX_BYTES) {
		agora_err_set(err, "%s: larger than %ld bytes", name,
			      AGORA_VIEW_MAX_BYTES);
		errno = EFBIG;
		return -1;
	}
	if (!(root = agora_json_parse(text, len, name, err)))
		return -1;
	if (!json_object_is_type(root, json_type_object)) {
		agora_err_set(err, "%s: top level: not a JSON object", name);
		goto einval;
	}
	if (json_object_object_get_ex(root, "time", NULL) &&
	    !get_num(root, "time", &t)) {
		agora_err_set(err, "%s: time: not a number", name);
		goto einval;
	}
	/* a time as seconds since the epoch; one outside int64_t (which
	 * would not convert) is as wrong as a string */
	if (t < -9.2e18 || t > 9.2e18) {
		agora_err_set(err, "%s: time: out of range", name);
		goto einval;
	}
	v->time = (int64_t) t;
	{
		json_object *x;

		if (json_object_object_get_ex(root, "cluster", &x) &&
		    json_object_is_type(x, json_type_string))
			(void) agora_sanitize_name(
				json_object_get_string(x),
				(size_t) json_object_get_string_len(x),
				v->cluster);
		if (json_object_object_get_ex(root, "pass", &x) &&
		    json_object_is_type(x, json_type_int))
			v->pass = json_object_get_int64(x);
	}
	if (get_array(root, "apps", &apps, name, err) ||
	    get_array(root, "leases", &leases, name, err))
		goto einval;
	n_apps = apps ? json_object_array_length(apps) : 0;
	n_leases = leases ? json_object_array_length(leases) : 0;
	if ((n_apps && !(v->apps = calloc(n_apps, sizeof(*v->apps)))) ||
	    (n_leases && !(v->leases = calloc(n_leases, sizeof(*v->leases))))) {
		agora_view_free(v);
		json_object_put(root);
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < n_apps; i++)
		parse_app(v, json_object_array_get_idx(apps, i), i);
	for (i = 0; i < n_leases; i++)
		parse_lease(v, json_object_array_get_idx(leases, i), i);
	json_object_put(root);
	return 0;
einval:
	json_object_put(root);
	errno = EINVAL;
	return -1;
}

int agora_view_load(const char *path, agora_view_t *v, struct stat *st,
		    agora_err_t *err)
{
	char *buf;
	size_t len;
	int rc, e;

	memset(v, 0, sizeof(*v));
	if (agora_file_read_ex(path, AGORA_VIEW_MAX_BYTES, AGORA_FILE_FOLLOW,
			       &buf, &len, st, err) < 0)
		return -1;
	rc = agora_view_parse(buf, len, path, v, err);
	e = errno;
	free(buf);
	errno = e;
	return rc;
}

bool agora_view_same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	       a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
	       a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
	       a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

void agora_view_free(agora_view_t *v)
{
	free(v->apps);
	free(v->leases);
	memset(v, 0, sizeof(*v));
}

/* A GPU-hour figure: fixed point unless huge (one token either way). */
static void fmt_num(char *buf, size_t size, double d)
{
	if (fabs(d) < 1e12)
		snprintf(buf, size, "%.2f", d);
	else
		snprintf(buf, size, "%.6g", d);
}

static void fmt_secs(int64_t t, char *buf, size_t size)
{
	snprintf(buf, size, "%" PRId64, t);
}

void agora_view_render(const agora_view_t *v, const agora_view_hide_t *hide,
		       agora_view_time_f fmt_time, agora_view_emit_f emit,
		       void *arg)
{
	char key[AGORA_NAME_SIZE + 16], val[512], tbuf[64];
	char c[32], q[32], u[32], r[32];
	size_t i;

	if (!fmt_time)
		fmt_time = fmt_secs;
	fmt_time(v->time, tbuf, sizeof(tbuf));
	emit(arg, "View", tbuf);
	snprintf(val, sizeof(val), "%zu", v->n_apps);
	emit(arg, "Apps", val);
	if (hide && hide->apps_why) {
		snprintf(val, sizeof(val), "hidden: %s", hide->apps_why);
		emit(arg, "Credit", val);
	} else {
		for (i = 0; i < v->n_apps; i++) {
			const agora_view_app_t *a = &v->apps[i];

			fmt_num(c, sizeof(c), a->credit);
			fmt_num(q, sizeof(q), a->quota);
			fmt_num(u, sizeof(u), a->usage);
			if (a->has_rho)
				fmt_num(r, sizeof(r), a->rho);
			snprintf(key, sizeof(key), "Credit[%s]", a->name);
			snprintf(val, sizeof(val),
				 "credit=%s quota=%s usage=%s GPU-h%s%s", c, q,
				 u, a->has_rho ? " rho=" : "",
				 a->has_rho ? r : "");
			emit(arg, key, val);
		}
	}
	snprintf(val, sizeof(val), "%zu", v->n_leases);
	emit(arg, "Leases", val);
	if (hide && hide->jobs_why) {
		snprintf(val, sizeof(val), "hidden: %s", hide->jobs_why);
		emit(arg, "LeaseJobs", val);
	}
	for (i = 0; i < v->n_leases; i++) {
		const agora_view_lease_t *l = &v->leases[i];

		if (hide && hide->jobs_why)
			snprintf(key, sizeof(key), "Lease[#%zu]", i + 1);
		else
			snprintf(key, sizeof(key), "Lease[%" PRId64 "]",
				 l->job);
		fmt_time(l->end, tbuf, sizeof(tbuf));
		snprintf(val, sizeof(val), "gpus=%" PRId64 " until=%s state=%s",
			 l->gpus, tbuf, l->grace ? "grace" : "active");
		emit(arg, key, val);
	}
	if (v->n_skipped) {
		snprintf(val, sizeof(val),
			 "%zu malformed entries left out (first: %s)",
			 v->n_skipped, v->skipped);
		emit(arg, "ViewSkipped", val);
	}
}

char *agora_view_format(const agora_view_t *v)
{
	json_object *root = json_object_new_object(), *apps, *leases;
	char *text = NULL;
	size_t i;

	if (!root || !v)
		goto out;
	json_object_object_add(root, "time", json_object_new_int64(v->time));
	json_object_object_add(root, "cluster",
			       json_object_new_string(v->cluster));
	json_object_object_add(root, "pass", json_object_new_int64(v->pass));
	apps = json_object_new_array();
	for (i = 0; i < v->n_apps; i++) {
		const agora_view_app_t *a = &v->apps[i];
		json_object *o = json_object_new_object();

		json_object_object_add(o, "name",
				       json_object_new_string(a->name));
		json_object_object_add(o, "quota",
				       json_object_new_double(a->quota));
		json_object_object_add(o, "usage",
				       json_object_new_double(a->usage));
		json_object_object_add(o, "credit",
				       json_object_new_double(a->credit));
		if (a->has_rho)
			json_object_object_add(o, "rho",
					       json_object_new_double(a->rho));
		json_object_array_add(apps, o);
	}
	json_object_object_add(root, "apps", apps);
	leases = json_object_new_array();
	for (i = 0; i < v->n_leases; i++) {
		const agora_view_lease_t *l = &v->leases[i];
		json_object *o = json_object_new_object();

		json_object_object_add(o, "job", json_object_new_int64(l->job));
		json_object_object_add(o, "gpus",
				       json_object_new_int64(l->gpus));
		json_object_object_add(o, "start",
				       json_object_new_int64(l->start));
		json_object_object_add(o, "end", json_object_new_int64(l->end));
		json_object_object_add(
			o, "state",
			json_object_new_string(l->grace ? "grace" : "active"));
		if (l->grace)
			json_object_object_add(
				o, "requeue_at",
				json_object_new_int64(l->requeue_at));
		json_object_array_add(leases, o);
	}
	json_object_object_add(root, "leases", leases);
	text = strdup(
		json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN));
out:
	if (root)
		json_object_put(root);
	if (!text)
		errno = ENOMEM;
	return text;
}

int agora_view_save(const char *path, const agora_view_t *v, agora_err_t *err)
{
	char *text = agora_view_format(v);
	int rc;

	if (!text) {
		agora_err_set(err, "%s: out of memory", path ? path : "view");
		return -1;
	}
	rc = agora_file_write_atomic(path, text, strlen(text), err);
	free(text);
	return rc;
}
