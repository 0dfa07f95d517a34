/*
 * pol_credit_json.c - the credit ledger's state file (pol_credit.h): save
 * and load as JSON, and the file forms with the previous copy as a
 * fallback.  A load is built aside and swapped in only when all of it is
 * valid.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "agora_file.h"
#include "agora_json.h"
#include "pol_credit_int.h"

/* JSON ---------------------------------------------------------------- */

static int add(json_object *o, const char *key, json_object *v)
{
	if (!v)
		return -1;
	if (json_object_object_add(o, key, v) < 0) {
		json_object_put(v);
		return -1;
	}
	return 0;
}

static int push(json_object *a, json_object *v)
{
	if (!v)
		return -1;
	if (json_object_array_add(a, v) < 0) {
		json_object_put(v);
		return -1;
	}
	return 0;
}

int pol_credit_save(const pol_credit_t *l, char **json)
{
	json_object *root = NULL, *accts, *srcs, *o;
	const char *s;
	size_t i;
	int rc = -1;

	if (!l || !json) {
		errno = EINVAL;
		return -1;
	}
	if (!(root = json_object_new_object()) ||
	    add(root, "version", json_object_new_int(1)) < 0 ||
	    add(root, "cluster", json_object_new_string(l->cluster)) < 0 ||
	    add(root, "seq", json_object_new_int64((int64_t) l->seq)) < 0 ||
	    add(root, "accounts", (accts = json_object_new_array())) < 0 ||
	    add(root, "sources", (srcs = json_object_new_array())) < 0)
		goto out;
	for (i = 0; i < l->n_acct; i++) {
		const credit_acct_t *a = &l->acct[i];

		if (!a->has_usage)
			continue; /* quota only: comes from agora.conf */
		if (push(accts, (o = json_object_new_object())) < 0 ||
		    add(o, "name", json_object_new_string(a->name)) < 0 ||
		    add(o, "raw", json_object_new_double(a->raw)) < 0 ||
		    add(o, "t", json_object_new_int64(a->t_ref)) < 0)
			goto out;
	}
	for (i = 0; i < l->n_src; i++) {
		if (push(srcs, (o = json_object_new_object())) < 0 ||
		    add(o, "cluster",
			json_object_new_string(l->src[i].cluster)) < 0 ||
		    add(o, "hwm",
			json_object_new_int64((int64_t) l->src[i].hwm)) < 0)
			goto out;
	}
	s = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
	if (!s || !(*json = strdup(s)))
		goto out;
	rc = 0;
out:
	json_object_put(root);
	if (rc < 0)
		errno = ENOMEM;
	return rc;
}

/* Loaded state, built aside and swapped in only when all of it is valid. */
typedef struct credit_state {
	char cluster[POL_CREDIT_NAME_LEN];
	uint64_t seq;
	credit_acct_t *acct;
	size_t n_acct;
	credit_source_t *src;
	size_t n_src;
} credit_state_t;

static int fail(agora_err_t *err, const char *name, const char *field,
		const char *why)
{
	agora_err_set(err, "%s:%s: %s", name, field, why);
	errno = EINVAL;
	return -1;
}

/* Check that o has only the listed keys. */
static int only_keys(json_object *o, const char *const *keys, const char *name,
		     const char *where, agora_err_t *err)
{
	json_object_object_foreach (o, k, v) {
		size_t i;
		bool known = false;

		(void) v;
		for (i = 0; keys[i]; i++)
			if (!strcmp(k, keys[i]))
				known = true;
		if (!known) {
			char f[160];

			snprintf(f, sizeof(f), "%s%s%s", where,
				 *where ? "." : "", k);
			return fail(err, name, f, "unknown key");
		}
	}
	return 0;
}

static int get_int(json_object *o, const char *key, int64_t min, int64_t *out,
		   const char *name, const char *where, agora_err_t *err)
{
	json_object *v;
	char f[160];

	snprintf(f, sizeof(f), "%s%s%s", where, *where ? "." : "", key);
	if (!json_object_object_get_ex(o, key, &v))
		return fail(err, name, f, "missing");
	if (!json_object_is_type(v, json_type_int))
		return fail(err, name, f, "must be an integer");
	errno = 0;
	*out = json_object_get_int64(v);
	if (errno == EINVAL || *out < min)
		return fail(err, name, f, "out of range");
	return 0;
}

static int get_name(json_object *o, const char *key, char *out,
		    const char *name, const char *where, agora_err_t *err)
{
	json_object *v;
	char f[160];
	const char *s;

	snprintf(f, sizeof(f), "%s%s%s", where, *where ? "." : "", key);
	if (!json_object_object_get_ex(o, key, &v))
		return fail(err, name, f, "missing");
	if (!json_object_is_type(v, json_type_string))
		return fail(err, name, f, "must be a string");
	s = json_object_get_string(v);
	if (!name_ok(s) || strlen(s) != (size_t) json_object_get_string_len(v))
		return fail(err, name, f, "must be 1..63 characters");
	snprintf(out, POL_CREDIT_NAME_LEN, "%s", s);
	return 0;
}

static int get_array(json_object *o, const char *key, json_object **out,
		     const char *name, agora_err_t *err)
{
	if (!json_object_object_get_ex(o, key, out))
		return fail(err, name, key, "missing");
	if (!json_object_is_type(*out, json_type_array))
		return fail(err, name, key, "must be an array");
	return 0;
}

static int cmp_acct(const void *a, const void *b)
{
	return strcmp(((const credit_acct_t *) a)->name,
		      ((const credit_acct_t *) b)->name);
}

static int parse_accounts(json_object *arr, credit_state_t *st,
			  const char *name, agora_err_t *err)
{
	static const char *const keys[] = { "name", "raw", "t", NULL };
	size_t i, n = json_object_array_length(arr);

	if (n && !(st->acct = calloc(n, sizeof(*st->acct))))
		return -1;
	for (i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(arr, i), *v;
		credit_acct_t *a = &st->acct[i];
		char where[64], f[96];

		snprintf(where, sizeof(where), "accounts[%zu]", i);
		if (!json_object_is_type(o, json_type_object))
			return fail(err, name, where, "must be an object");
		if (only_keys(o, keys, name, where, err) < 0 ||
		    get_name(o, "name", a->name, name, where, err) < 0 ||
		    get_int(o, "t", INT64_MIN, &a->t_ref, name, where, err) < 0)
			return -1;
		snprintf(f, sizeof(f), "%s.raw", where);
		if (!json_object_object_get_ex(o, "raw", &v))
			return fail(err, name, f, "missing");
		if (!json_object_is_type(v, json_type_double) &&
		    !json_object_is_type(v, json_type_int))
			return fail(err, name, f, "must be a number");
		a->raw = json_object_get_double(v);
		if (!amount_ok(a->raw))
			return fail(err, name, f,
				    "must be a finite number >= 0");
		a->has_usage = true;
		st->n_acct++;
	}
	if (st->n_acct)
		qsort(st->acct, st->n_acct, sizeof(*st->acct), cmp_acct);
	for (i = 1; i < st->n_acct; i++)
		if (!strcmp(st->acct[i - 1].name, st->acct[i].name))
			return fail(err, name, "accounts",
				    "duplicate account name");
	return 0;
}

static int parse_sources(json_object *arr, credit_state_t *st, const char *name,
			 agora_err_t *err)
{
	static const char *const keys[] = { "cluster", "hwm", NULL };
	size_t i, j, n = json_object_array_length(arr);

	if (n && !(st->src = calloc(n + 1, sizeof(*st->src))))
		return -1;
	for (i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(arr, i);
		credit_source_t *s = &st->src[i];
		char where[64];
		int64_t hwm;

		snprintf(where, sizeof(where), "sources[%zu]", i);
		if (!json_object_is_type(o, json_type_object))
			return fail(err, name, where, "must be an object");
		if (only_keys(o, keys, name, where, err) < 0 ||
		    get_name(o, "cluster", s->cluster, name, where, err) < 0 ||
		    get_int(o, "hwm", 0, &hwm, name, where, err) < 0)
			return -1;
		s->hwm = (uint64_t) hwm;
		for (j = 0; j < i; j++)
			if (!strcmp(st->src[j].cluster, s->cluster))
				return fail(err, name, where,
					    "duplicate source cluster");
		st->n_src++;
	}
	return 0;
}

/*
 * A state saved under another cluster name: its sequence becomes that
 * name's high-water mark among the sources, so its records do not come
 * back.  0, or -1 (out of memory).
 */
static int adopt_foreign(credit_state_t *st)
{
	size_t i, k = st->n_src;

	for (i = 0; i < st->n_src; i++)
		if (!strcmp(st->src[i].cluster, st->cluster))
			k = i;
	if (k == st->n_src) {
		/* parse_sources() left room for one more */
		if (!st->src && !(st->src = calloc(1, sizeof(*st->src))))
			return -1;
		st->n_src++;
		snprintf(st->src[k].cluster, sizeof(st->src[k].cluster), "%s",
			 st->cluster);
	}
	if (st->seq > st->src[k].hwm)
		st->src[k].hwm = st->seq;
	st->seq = 0;
	return 0;
}

/* Keep l's configured quotas: merge them into the loaded accounts of st
 * (quota-only accounts appended).  0, or -1 (out of memory). */
static int merge_quotas(const pol_credit_t *l, credit_state_t *st)
{
	size_t i;

	for (i = 0; i < l->n_acct; i++) {
		credit_acct_t key, *hit;

		if (!l->acct[i].has_quota)
			continue;
		key = l->acct[i];
		hit = st->n_acct ? bsearch(&key, st->acct, st->n_acct,
					   sizeof(*st->acct), cmp_acct)
				 : NULL;
		if (hit) {
			hit->has_quota = true;
			hit->quota = key.quota;
			continue;
		}
		/* quota-only account: append, re-sort below */
		{
			credit_acct_t *na = realloc(
				st->acct, (st->n_acct + 1) * sizeof(*na));

			if (!na)
				return -1;
			st->acct = na;
			st->acct[st->n_acct] = key;
			st->acct[st->n_acct].has_usage = false;
			st->acct[st->n_acct].raw = 0;
			st->acct[st->n_acct].t_ref = 0;
			st->n_acct++;
			qsort(st->acct, st->n_acct, sizeof(*st->acct),
			      cmp_acct);
		}
	}
	return 0;
}

int pol_credit_load(pol_credit_t *l, const char *json, const char *name,
		    agora_err_t *err)
{
	static const char *const keys[] = { "version",  "cluster", "seq",
					    "accounts", "sources", NULL };
	credit_state_t st = { .acct = NULL };
	json_object *root = NULL, *arr;
	int64_t v;
	int rc = -1;

	if (!l || !json) {
		errno = EINVAL;
		return -1;
	}
	if (!name)
		name = "credit state";
	/* one JSON value and nothing after it ("NAME:LINE: not JSON: ...") */
	if (!(root = agora_json_parse(json, strlen(json), name, err))) {
		if (errno == ENOMEM)
			goto nomem;
		goto out;
	}
	if (!json_object_is_type(root, json_type_object)) {
		fail(err, name, "(top)", "must be a JSON object");
		goto out;
	}
	if (only_keys(root, keys, name, "", err) < 0 ||
	    get_int(root, "version", 0, &v, name, "", err) < 0)
		goto out;
	if (v != 1) {
		fail(err, name, "version", "unsupported (this build reads 1)");
		goto out;
	}
	if (get_name(root, "cluster", st.cluster, name, "", err) < 0 ||
	    get_int(root, "seq", 0, &v, name, "", err) < 0)
		goto out;
	st.seq = (uint64_t) v;
	if (get_array(root, "accounts", &arr, name, err) < 0 ||
	    parse_accounts(arr, &st, name, err) < 0 ||
	    get_array(root, "sources", &arr, name, err) < 0 ||
	    parse_sources(arr, &st, name, err) < 0)
		goto out;
	/* Saved under another name: keep its records from coming back. */
	if (strcmp(st.cluster, l->cluster) && st.seq > 0 &&
	    adopt_foreign(&st) < 0)
		goto nomem;
	/* Keep configured quotas: merge them into the loaded accounts. */
	if (merge_quotas(l, &st) < 0)
		goto nomem;
	/* commit */
	free(l->acct);
	free(l->src);
	l->acct = st.acct;
	l->n_acct = l->cap_acct = st.n_acct;
	l->src = st.src;
	l->n_src = l->cap_src = st.n_src; /* src_reserve() grows it */
	l->seq = st.seq;
	st.acct = NULL;
	st.src = NULL;
	rc = 0;
	goto out;
nomem:
	agora_err_set(err, "%s: out of memory", name);
	errno = ENOMEM;
out:
	free(st.acct);
	free(st.src);
	json_object_put(root);
	return rc;
}

int pol_credit_save_file(const pol_credit_t *l, const char *path,
			 agora_err_t *err)
{
	char *text = NULL;
	size_t n;
	int rc, e;

	if (!l || !path) {
		errno = EINVAL;
		return -1;
	}
	if (pol_credit_save(l, &text) < 0) {
		agora_err_set(err, "%s: out of memory", path);
		return -1;
	}
	n = strlen(text);
	text[n] = '\n'; /* replaces the NUL: written as n + 1 bytes */
	rc = agora_file_write_atomic(path, text, n + 1, err);
	e = errno;
	free(text);
	errno = e;
	return rc;
}

/* Read and load one file; -1 with err and errno. */
static int load_one(pol_credit_t *l, const char *path, agora_err_t *err)
{
	char *buf = NULL;
	size_t len;
	int rc, e;

	if (agora_file_read(path, POL_CREDIT_FILE_MAX, &buf, &len, err) < 0)
		return -1;
	rc = pol_credit_load(l, buf, path, err);
	e = errno;
	free(buf);
	errno = e;
	return rc;
}

int pol_credit_load_file(pol_credit_t *l, const char *path, agora_err_t *err)
{
	agora_err_t e_main = { { 0 } }, e_prev = { { 0 } };
	char prev[4096];
	int e;

	if (!l || !path) {
		errno = EINVAL;
		return -1;
	}
	if (load_one(l, path, &e_main) == 0)
		return 0;
	e = errno;
	if ((size_t) snprintf(prev, sizeof(prev), "%s%s", path,
			      AGORA_FILE_PREV) >= sizeof(prev)) {
		agora_err_set(err, "%s", e_main.text);
		errno = e;
		return -1;
	}
	if (load_one(l, prev, &e_prev) < 0) {
		/* neither: the main file's error counts; a bad .prev is
		 * worth a mention, a missing one is not */
		if (errno == ENOENT)
			agora_err_set(err, "%s", e_main.text);
		else
			agora_err_set(err, "%s; %s", e_main.text, e_prev.text);
		errno = e;
		return -1;
	}
	agora_err_set(err, "%s; loaded %s instead", e_main.text, prev);
	return 1;
}
