/*
 * pol_fed_catalog.c - the dataset catalog: which cluster of the
 * federation holds a replica of which dataset, how big it is, each
 * cluster's storage quota and the rate data arrives at.  JSON, format in
 * doc/federation.md.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "pol_fed.h"

/* Where in the document the parser is, for error messages. */
typedef struct fed_ctx {
	const char *file;
	agora_err_t *err;
} fed_ctx_t;

/*
 * A size or rate: a JSON number, or a string holding a number with an
 * optional decimal (K, M, G, T, P: powers of 1000) or binary (Ki .. Pi:
 * powers of 1024) prefix and an optional unit ("B", "B/s"): "1.5T",
 * "200GiB", "10G", "1.25GB/s".
 */
static int fed_size(const char *s, double *out)
{
	static const char prefixes[] = "KMGTP";
	char *end;
	double v, mult = 1.0;
	const char *p;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno)
		return -1;
	while (*end == ' ')
		end++;
	if (*end && (p = strchr(prefixes, *end)) != NULL) {
		int k = (int) (p - prefixes) + 1;
		double base = 1000.0;

		end++;
		if (*end == 'i') {
			base = 1024.0;
			end++;
		}
		while (k--)
			mult *= base;
	}
	if (*end == 'B')
		end++;
	if (!strcmp(end, "/s"))
		end += 2;
	if (*end)
		return -1;
	v *= mult;
	if (!isfinite(v))
		return -1;
	*out = v;
	return 0;
}

static int fed_number(fed_ctx_t *c, json_object *o, const char *path,
		      const char *key, bool positive, double *out)
{
	json_object *v;
	double x;

	if (!json_object_object_get_ex(o, key, &v)) {
		agora_err_set(c->err, "%s: %s.%s: missing", c->file, path, key);
		return -1;
	}
	if (json_object_is_type(v, json_type_double) ||
	    json_object_is_type(v, json_type_int)) {
		x = json_object_get_double(v);
	} else if (json_object_is_type(v, json_type_string)) {
		if (fed_size(json_object_get_string(v), &x) < 0) {
			agora_err_set(c->err,
				      "%s: %s.%s: '%.64s' is not a size "
				      "(a number, optionally with K/M/G/T/P "
				      "or Ki..Pi)",
				      c->file, path, key,
				      json_object_get_string(v));
			return -1;
		}
	} else {
		agora_err_set(c->err, "%s: %s.%s: not a number", c->file, path,
			      key);
		return -1;
	}
	if (!isfinite(x) || x < 0.0 || (positive && x == 0.0)) {
		agora_err_set(c->err, "%s: %s.%s: %g must be %s", c->file, path,
			      key, x, positive ? "> 0" : ">= 0");
		return -1;
	}
	*out = x;
	return 0;
}

/* Names end up in SystemComment, agoractl output and transfer plans:
 * letters, digits, '.', '_', '-', '/' and ':' only, and no part between
 * '/' that is empty, "." or "..". */
static int fed_name(fed_ctx_t *c, json_object *o, const char *path, char *out)
{
	json_object *v;
	const char *s;
	size_t n;

	if (!json_object_object_get_ex(o, "name", &v)) {
		agora_err_set(c->err, "%s: %s.name: missing", c->file, path);
		return -1;
	}
	if (!json_object_is_type(v, json_type_string)) {
		agora_err_set(c->err, "%s: %s.name: not a string", c->file,
			      path);
		return -1;
	}
	s = json_object_get_string(v);
	n = strlen(s);
	if (n == 0 || n >= POL_FED_NAME_LEN) {
		agora_err_set(c->err, "%s: %s.name: must be 1 to %d characters",
			      c->file, path, POL_FED_NAME_LEN - 1);
		return -1;
	}
	if (strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		      "0123456789._-/:") != n ||
	    s[0] == '-') {
		agora_err_set(c->err,
			      "%s: %s.name: '%.64s' has a character other "
			      "than letters, digits, '.', '_', '-', '/', ':' "
			      "(or starts with '-')",
			      c->file, path, s);
		return -1;
	}
	/* agoractl place prints transfer commands with the name as a path
	 * under datasets/: every '/'-separated part is a plain name (no
	 * "." or "..", none empty), so no plan points outside datasets/ */
	for (const char *p = s; *p;) {
		size_t k = strcspn(p, "/");

		if (k == 0 || (k == 1 && p[0] == '.') ||
		    (k == 2 && p[0] == '.' && p[1] == '.') ||
		    (p[k] == '/' && !p[k + 1])) {
			agora_err_set(c->err,
				      "%s: %s.name: '%.64s' has an empty, '.' "
				      "or '..' part between '/'",
				      c->file, path, s);
			return -1;
		}
		p += k + (p[k] == '/');
	}
	memcpy(out, s, n + 1);
	return 0;
}

/* Every key of o must be one of keys (a typo is an error, not a default). */
static int fed_keys(fed_ctx_t *c, json_object *o, const char *path,
		    const char *const *keys)
{
	json_object_object_foreach (o, k, v) {
		int i;

		(void) v;
		for (i = 0; keys[i]; i++)
			if (!strcmp(k, keys[i]))
				break;
		if (!keys[i]) {
			agora_err_set(c->err, "%s: %s: unknown key '%.64s'",
				      c->file, path, k);
			return -1;
		}
	}
	return 0;
}

static json_object *fed_array(fed_ctx_t *c, json_object *root, const char *key)
{
	json_object *v;

	if (!json_object_object_get_ex(root, key, &v)) {
		agora_err_set(c->err, "%s: %s: missing", c->file, key);
		return NULL;
	}
	if (!json_object_is_type(v, json_type_array)) {
		agora_err_set(c->err, "%s: %s: not an array", c->file, key);
		return NULL;
	}
	return v;
}

static int fed_parse_sites(fed_ctx_t *c, json_object *arr,
			   pol_fed_catalog_t *cat)
{
	static const char *const keys[] = { "name", "storage_bytes",
					    "link_bytes_per_s", NULL };
	int n = (int) json_object_array_length(arr), i, k;
	char path[64];

	if (n > 64) {
		agora_err_set(c->err, "%s: sites: %d clusters, at most 64",
			      c->file, n);
		return -1;
	}
	cat->sites = calloc(n ? (size_t) n : 1, sizeof(*cat->sites));
	if (!cat->sites) {
		agora_err_set(c->err, "%s: out of memory", c->file);
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(arr, i);
		pol_fed_site_t *s = &cat->sites[i];

		snprintf(path, sizeof(path), "sites[%d]", i);
		if (!json_object_is_type(o, json_type_object)) {
			agora_err_set(c->err, "%s: %s: not an object", c->file,
				      path);
			return -1;
		}
		if (fed_keys(c, o, path, keys) < 0 ||
		    fed_name(c, o, path, s->name) < 0)
			return -1;
		if (json_object_object_get_ex(o, "storage_bytes", NULL)) {
			if (fed_number(c, o, path, "storage_bytes", false,
				       &s->storage_bytes) < 0)
				return -1;
		}
		if (fed_number(c, o, path, "link_bytes_per_s", true,
			       &s->link_bytes_per_s) < 0)
			return -1;
		for (k = 0; k < i; k++)
			if (!strcmp(cat->sites[k].name, s->name)) {
				agora_err_set(c->err,
					      "%s: %s.name: '%s' already used "
					      "by sites[%d]",
					      c->file, path, s->name, k);
				return -1;
			}
		cat->n_sites = i + 1;
	}
	return 0;
}

static int fed_parse_where(fed_ctx_t *c, json_object *o, const char *path,
			   const pol_fed_catalog_t *cat, uint64_t *where)
{
	json_object *arr;
	int i, n;

	*where = 0;
	if (!json_object_object_get_ex(o, "where", &arr))
		return 0; /* no replica yet */
	if (!json_object_is_type(arr, json_type_array)) {
		agora_err_set(c->err,
			      "%s: %s.where: not an array of cluster "
			      "names",
			      c->file, path);
		return -1;
	}
	n = (int) json_object_array_length(arr);
	for (i = 0; i < n; i++) {
		json_object *v = json_object_array_get_idx(arr, i);
		const char *s;
		int k;

		if (!json_object_is_type(v, json_type_string)) {
			agora_err_set(c->err, "%s: %s.where[%d]: not a string",
				      c->file, path, i);
			return -1;
		}
		s = json_object_get_string(v);
		k = pol_fed_catalog_site(cat, s);
		if (k < 0) {
			agora_err_set(c->err,
				      "%s: %s.where: unknown cluster '%.64s'",
				      c->file, path, s);
			return -1;
		}
		if ((*where >> k) & 1) {
			agora_err_set(c->err,
				      "%s: %s.where: cluster '%s' listed twice",
				      c->file, path, s);
			return -1;
		}
		*where |= (uint64_t) 1 << k;
	}
	return 0;
}

static int fed_parse_datasets(fed_ctx_t *c, json_object *arr,
			      pol_fed_catalog_t *cat)
{
	static const char *const keys[] = { "name", "bytes", "where", NULL };
	int n = (int) json_object_array_length(arr), i, k;
	char path[64];

	cat->datasets = calloc(n ? (size_t) n : 1, sizeof(*cat->datasets));
	if (!cat->datasets) {
		agora_err_set(c->err, "%s: out of memory", c->file);
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(arr, i);
		pol_fed_dataset_t *d = &cat->datasets[i];

		snprintf(path, sizeof(path), "datasets[%d]", i);
		if (!json_object_is_type(o, json_type_object)) {
			agora_err_set(c->err, "%s: %s: not an object", c->file,
				      path);
			return -1;
		}
		if (fed_keys(c, o, path, keys) < 0 ||
		    fed_name(c, o, path, d->name) < 0 ||
		    fed_number(c, o, path, "bytes", false, &d->bytes) < 0 ||
		    fed_parse_where(c, o, path, cat, &d->where) < 0)
			return -1;
		/* names are unique: a linear check is fine for the
		 * catalogs a site writes by hand (hundreds of datasets) */
		for (k = 0; k < i; k++)
			if (!strcmp(cat->datasets[k].name, d->name)) {
				agora_err_set(c->err,
					      "%s: %s.name: '%s' already used "
					      "by datasets[%d]",
					      c->file, path, d->name, k);
				return -1;
			}
		cat->n_datasets = i + 1;
	}
	return 0;
}

static int fed_parse_account(fed_ctx_t *c, json_object *o, const char *path,
			     const pol_fed_catalog_t *cat, pol_fed_account_t *a)
{
	static const char *const keys[] = { "name", "dataset", NULL };
	json_object *v;
	const char *s;

	if (!json_object_is_type(o, json_type_object)) {
		agora_err_set(c->err, "%s: %s: not an object", c->file, path);
		return -1;
	}
	if (fed_keys(c, o, path, keys) < 0 || fed_name(c, o, path, a->name) < 0)
		return -1;
	if (!json_object_object_get_ex(o, "dataset", &v) ||
	    !json_object_is_type(v, json_type_string)) {
		agora_err_set(c->err, "%s: %s.dataset: missing or not a string",
			      c->file, path);
		return -1;
	}
	s = json_object_get_string(v);
	a->dataset = pol_fed_catalog_dataset(cat, s);
	if (a->dataset < 0) {
		agora_err_set(c->err, "%s: %s.dataset: unknown dataset '%.64s'",
			      c->file, path, s);
		return -1;
	}
	return 0;
}

/* "accounts": [{"name": ACCOUNT, "dataset": DATASET}, ...] */
static int fed_parse_accounts(fed_ctx_t *c, json_object *arr,
			      pol_fed_catalog_t *cat)
{
	int n = (int) json_object_array_length(arr), i, k;
	char path[64];

	cat->accounts = calloc(n ? (size_t) n : 1, sizeof(*cat->accounts));
	if (!cat->accounts) {
		agora_err_set(c->err, "%s: out of memory", c->file);
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < n; i++) {
		pol_fed_account_t *a = &cat->accounts[i];

		snprintf(path, sizeof(path), "accounts[%d]", i);
		if (fed_parse_account(c, json_object_array_get_idx(arr, i),
				      path, cat, a) < 0)
			return -1;
		for (k = 0; k < i; k++)
			if (!strcmp(cat->accounts[k].name, a->name)) {
				agora_err_set(c->err,
					      "%s: %s.name: '%s' already used "
					      "by accounts[%d]",
					      c->file, path, a->name, k);
				return -1;
			}
		cat->n_accounts = i + 1;
	}
	return 0;
}

int pol_fed_catalog_parse(const char *text, const char *name,
			  pol_fed_catalog_t *cat, agora_err_t *err)
{
	static const char *const keys[] = { "sites", "datasets", "accounts",
					    NULL };
	fed_ctx_t c = { name ? name : "(catalog)", err };
	pol_fed_catalog_t out = { 0 };
	json_tokener *tok;
	json_object *root = NULL, *sites, *datasets, *accounts;
	enum json_tokener_error jerr;
	size_t len, end;
	int saved;

	if (!text || !cat) {
		agora_err_set(err, "%s: missing argument", c.file);
		errno = EINVAL;
		return -1;
	}
	len = strlen(text);
	if (len > (size_t) 1 << 30) {
		agora_err_set(err, "%s: larger than 1 GiB", c.file);
		errno = EINVAL;
		return -1;
	}
	tok = json_tokener_new();
	if (!tok) {
		agora_err_set(err, "%s: out of memory", c.file);
		errno = ENOMEM;
		return -1;
	}
	root = json_tokener_parse_ex(tok, text, (int) len);
	jerr = json_tokener_get_error(tok);
	end = json_tokener_get_parse_end(tok);
	json_tokener_free(tok);
	if (!root || jerr != json_tokener_success ||
	    strspn(text + end, " \t\r\n") != len - end) {
		agora_err_set(err, "%s: not valid JSON (%s at byte %zu)",
			      c.file,
			      jerr == json_tokener_continue
				      ? "unexpected end of input"
			      : jerr != json_tokener_success
				      ? json_tokener_error_desc(jerr)
				      : "trailing data",
			      end);
		goto inval;
	}
	if (!json_object_is_type(root, json_type_object)) {
		agora_err_set(err, "%s: top level: not a JSON object", c.file);
		goto inval;
	}
	if (fed_keys(&c, root, "top level", keys) < 0)
		goto inval;
	sites = fed_array(&c, root, "sites");
	if (!sites || fed_parse_sites(&c, sites, &out) < 0)
		goto fail;
	if (json_object_object_get_ex(root, "datasets", NULL)) {
		datasets = fed_array(&c, root, "datasets");
		if (!datasets || fed_parse_datasets(&c, datasets, &out) < 0)
			goto fail;
	}
	if (json_object_object_get_ex(root, "accounts", NULL)) {
		accounts = fed_array(&c, root, "accounts");
		if (!accounts || fed_parse_accounts(&c, accounts, &out) < 0)
			goto fail;
	}
	json_object_put(root);
	*cat = out;
	return 0;
inval:
	errno = EINVAL;
fail:
	saved = errno == ENOMEM ? ENOMEM : EINVAL;
	json_object_put(root);
	pol_fed_catalog_free(&out);
	errno = saved;
	return -1;
}

void pol_fed_catalog_free(pol_fed_catalog_t *cat)
{
	if (!cat)
		return;
	free(cat->sites);
	free(cat->datasets);
	free(cat->accounts);
	memset(cat, 0, sizeof(*cat));
}

void pol_fed_comment_dataset(const char *comment, char *out, size_t size)
{
	const char *p = comment ? strstr(comment, "dataset=") : NULL;
	size_t n = 0;

	if (!out || !size)
		return;
	out[0] = '\0';
	if (!p)
		return;
	p += strlen("dataset=");
	while (p[n] && p[n] != ' ' && p[n] != ',' && p[n] != ';' &&
	       n + 1 < size)
		n++;
	memcpy(out, p, n);
	out[n] = '\0';
}

int pol_fed_catalog_job_dataset(const pol_fed_catalog_t *cat, const char *named,
				const char *account, bool *unknown)
{
	int i;

	if (unknown)
		*unknown = false;
	if (!cat)
		return -1;
	if (named && named[0]) {
		i = pol_fed_catalog_dataset(cat, named);
		if (i < 0 && unknown)
			*unknown = true;
		return i;
	}
	for (i = 0; account && i < cat->n_accounts; i++)
		if (!strcmp(cat->accounts[i].name, account))
			return cat->accounts[i].dataset;
	return -1;
}

int pol_fed_catalog_dataset(const pol_fed_catalog_t *cat, const char *name)
{
	int i;

	if (!cat || !name)
		return -1;
	for (i = 0; i < cat->n_datasets; i++)
		if (!strcmp(cat->datasets[i].name, name))
			return i;
	return -1;
}

int pol_fed_catalog_site(const pol_fed_catalog_t *cat, const char *name)
{
	int i;

	if (!cat || !name)
		return -1;
	for (i = 0; i < cat->n_sites; i++)
		if (!strcmp(cat->sites[i].name, name))
			return i;
	return -1;
}

static int fed_add(json_object *o, const char *key, json_object *v)
{
	if (!v)
		return -1;
	if (json_object_object_add(o, key, v) < 0) {
		json_object_put(v);
		return -1;
	}
	return 0;
}

static json_object *fed_format_site(const pol_fed_site_t *s)
{
	json_object *o = json_object_new_object();

	if (!o || fed_add(o, "name", json_object_new_string(s->name)) < 0 ||
	    fed_add(o, "storage_bytes",
		    json_object_new_double(s->storage_bytes)) < 0 ||
	    fed_add(o, "link_bytes_per_s",
		    json_object_new_double(s->link_bytes_per_s)) < 0) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static json_object *fed_format_dataset(const pol_fed_catalog_t *cat,
				       const pol_fed_dataset_t *d)
{
	json_object *o = json_object_new_object(), *w = json_object_new_array();
	int c;

	if (!o || !w)
		goto fail;
	for (c = 0; c < cat->n_sites && c < 64; c++) {
		json_object *n;

		if (!((d->where >> c) & 1))
			continue;
		n = json_object_new_string(cat->sites[c].name);
		if (!n || json_object_array_add(w, n) < 0) {
			json_object_put(n);
			goto fail;
		}
	}
	if (fed_add(o, "name", json_object_new_string(d->name)) < 0 ||
	    fed_add(o, "bytes", json_object_new_double(d->bytes)) < 0)
		goto fail;
	if (fed_add(o, "where", w) < 0) {
		w = NULL;
		goto fail;
	}
	return o;
fail:
	json_object_put(w);
	json_object_put(o);
	return NULL;
}

static int fed_format_accounts(const pol_fed_catalog_t *cat, json_object *root)
{
	json_object *arr = json_object_new_array();

	if (fed_add(root, "accounts", arr) < 0)
		return -1;
	for (int i = 0; i < cat->n_accounts; i++) {
		const pol_fed_account_t *a = &cat->accounts[i];
		json_object *o = json_object_new_object();

		if (a->dataset < 0 || a->dataset >= cat->n_datasets) {
			json_object_put(o);
			errno = EINVAL;
			return -1;
		}
		if (!o || fed_add(o, "name", json_object_new_string(a->name)) ||
		    fed_add(o, "dataset",
			    json_object_new_string(
				    cat->datasets[a->dataset].name)) ||
		    json_object_array_add(arr, o) < 0) {
			json_object_put(o);
			return -1;
		}
	}
	return 0;
}

char *pol_fed_catalog_format(const pol_fed_catalog_t *cat)
{
	json_object *root = NULL, *sites, *datasets;
	const char *text;
	char *out = NULL;
	int i;

	if (!cat) {
		errno = EINVAL;
		return NULL;
	}
	root = json_object_new_object();
	sites = json_object_new_array();
	if (!root || fed_add(root, "sites", sites) < 0)
		goto nomem;
	for (i = 0; i < cat->n_sites; i++) {
		json_object *o = fed_format_site(&cat->sites[i]);

		if (!o || json_object_array_add(sites, o) < 0) {
			json_object_put(o);
			goto nomem;
		}
	}
	datasets = json_object_new_array();
	if (fed_add(root, "datasets", datasets) < 0)
		goto nomem;
	for (i = 0; i < cat->n_datasets; i++) {
		json_object *o = fed_format_dataset(cat, &cat->datasets[i]);

		if (!o || json_object_array_add(datasets, o) < 0) {
			json_object_put(o);
			goto nomem;
		}
	}
	if (cat->n_accounts && fed_format_accounts(cat, root) < 0)
		goto nomem;
	text = json_object_to_json_string_ext(
		root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
			      JSON_C_TO_STRING_NOSLASHESCAPE);
	out = text ? strdup(text) : NULL;
	if (!out)
		goto nomem;
	json_object_put(root);
	return out;
nomem:
	json_object_put(root);
	errno = ENOMEM;
	return NULL;
}
