/*
 * topo_model.c - topo_node_t derivation helpers and the JSON model file.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "agora_file.h"
#include "topo_hostlist.h"
#include "agora_mem.h"
#include "topo_model.h"

void topo_node_derive_levels(topo_node_t *n)
{
	int map[POL_MAX_GPUS_PER_NODE * 2 + 1];
	int i, j, next = 0, ng = n->type.n_gpus;

	/* dense island ids in order of first GPU (input ids may be any int) */
	for (i = 0; i < ng; i++) {
		for (j = 0; j < i; j++)
			if (n->gpu[j].island == n->gpu[i].island)
				break;
		map[i] = j < i ? map[j] : next++;
	}
	for (i = 0; i < ng; i++) {
		n->gpu[i].island = map[i];
		n->type.gpu_island[i] = (int8_t) map[i];
		n->type.gpu_socket[i] = (int8_t) (n->gpu[i].socket < 0
							  ? 0
							  : n->gpu[i].socket);
	}
	for (i = 0; i < ng; i++)
		for (j = 0; j < ng; j++) {
			const topo_gpu_t *a = &n->gpu[i], *b = &n->gpu[j];
			pol_level_t l;

			if (i == j || a->island == b->island)
				l = POL_LVL_NVLINK;
			else if (a->pcie_switch >= 0 &&
				 a->pcie_switch == b->pcie_switch)
				l = POL_LVL_PCIE;
			else if (a->socket >= 0 && a->socket == b->socket)
				l = POL_LVL_SOCKET;
			else
				l = POL_LVL_NODE;
			n->type.level[i][j] = (uint8_t) l;
		}
}

int topo_format_ranges(const int *v, int n, char *buf, size_t len)
{
	size_t off = 0;
	int i = 0, w;

	if (!buf || len == 0) {
		errno = ERANGE;
		return -1;
	}
	buf[0] = '\0';
	while (i < n) {
		int a = v[i], b = v[i];

		while (i + 1 < n && v[i + 1] == b + 1)
			b = v[++i];
		i++;
		if (a == b)
			w = snprintf(buf + off, len - off, "%s%d",
				     off ? "," : "", a);
		else
			w = snprintf(buf + off, len - off, "%s%d-%d",
				     off ? "," : "", a, b);
		if (w < 0 || (size_t) w >= len - off) {
			buf[0] = '\0';
			errno = ERANGE;
			return -1;
		}
		off += (size_t) w;
	}
	return 0;
}

static int parse_uint(const char **sp, long *out)
{
	char *end;
	long v;

	if (**sp < '0' || **sp > '9')
		return -1;
	errno = 0;
	v = strtol(*sp, &end, 10);
	if (errno || v > 1000000)
		return -1;
	*sp = end;
	*out = v;
	return 0;
}

int topo_parse_ranges(const char *s, int *v, int max, int limit)
{
	int n = 0;

	if (!s) {
		errno = EINVAL;
		return -1;
	}
	if (!*s)
		return 0;
	for (;;) {
		long a, b, x;

		if (parse_uint(&s, &a) < 0)
			goto bad;
		b = a;
		if (*s == '-') {
			s++;
			if (parse_uint(&s, &b) < 0 || b < a)
				goto bad;
		}
		if (b >= limit)
			goto bad;
		for (x = a; x <= b; x++) {
			if (n == max)
				goto bad;
			v[n++] = (int) x;
		}
		if (*s == '\0')
			return n;
		if (*s != ',')
			goto bad;
		s++;
	}
bad:
	errno = EINVAL;
	return -1;
}

int topo_node_set_islands(topo_node_t *n, const char *spec, agora_err_t *err)
{
	int isl[POL_MAX_GPUS_PER_NODE], i, id = 0;
	const char *p = spec;

	if (!n || !spec) {
		errno = EINVAL;
		agora_err_set(err, "islands: missing argument");
		return -1;
	}
	for (i = 0; i < POL_MAX_GPUS_PER_NODE; i++)
		isl[i] = -1;
	while (*p) {
		long a, b, x;
		/* one island: a, a-b, or a+b+c */
		for (;;) {
			if (parse_uint(&p, &a) < 0)
				goto bad;
			b = a;
			if (*p == '-') {
				p++;
				if (parse_uint(&p, &b) < 0 || b < a)
					goto bad;
			}
			if (b >= n->type.n_gpus) {
				agora_err_set(err,
					      "islands: GPU %ld out of "
					      "range (node type '%s' has %d "
					      "GPUs)",
					      b, n->type.name, n->type.n_gpus);
				errno = EINVAL;
				return -1;
			}
			for (x = a; x <= b; x++) {
				if (isl[x] >= 0) {
					agora_err_set(err,
						      "islands: GPU %ld "
						      "named twice",
						      x);
					errno = EINVAL;
					return -1;
				}
				isl[x] = id;
			}
			if (*p != '+')
				break;
			p++;
		}
		id++;
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			goto bad;
	}
	/* singletons get fresh ids after the named islands */
	for (i = 0; i < n->type.n_gpus; i++) {
		if (isl[i] < 0)
			isl[i] = id++;
	}
	for (i = 0; i < n->type.n_gpus; i++)
		n->gpu[i].island = isl[i];
	topo_node_derive_levels(n);
	return 0;
bad:
	agora_err_set(err,
		      "islands: bad syntax at '%s' in '%s' (want e.g. "
		      "0-3,4-7 or 0+2,1+3)",
		      p, spec);
	errno = EINVAL;
	return -1;
}

void topo_model_free(topo_model_t *model)
{
	if (!model)
		return;
	free(model->types);
	model->types = NULL;
	model->n_types = 0;
}

int topo_model_add(topo_model_t *model, const topo_node_t *n)
{
	topo_node_t *nt;

	nt = realloc(model->types, sizeof(*nt) * (size_t) (model->n_types + 1));
	if (!nt) {
		errno = ENOMEM;
		return -1;
	}
	model->types = nt;
	nt[model->n_types++] = *n;
	return 0;
}

int topo_model_find(const topo_model_t *model, const char *host)
{
	int i, blank = -1, n_blank = 0;

	for (i = 0; i < model->n_types; i++) {
		if (!model->types[i].nodes[0]) {
			blank = i;
			n_blank++;
			continue;
		}
		if (topo_hostlist_contains(model->types[i].nodes, host) == 1)
			return i;
	}
	return n_blank == 1 && model->n_types == 1 ? blank : -1;
}

/* ---- JSON ------------------------------------------------------------ */

char *topo_model_to_json(const topo_model_t *model)
{
	json_object *root = json_object_new_object(), *types;
	char *out = NULL;
	int t, i, j;

	if (!root)
		goto nomem;
	types = json_object_new_array();
	json_object_object_add(root, "format",
			       json_object_new_string(TOPO_MODEL_FORMAT));
	json_object_object_add(root, "version",
			       json_object_new_int(TOPO_MODEL_VERSION));
	json_object_object_add(root, "node_types", types);
	for (t = 0; t < model->n_types; t++) {
		const topo_node_t *n = &model->types[t];
		json_object *o = json_object_new_object();
		json_object *gpus = json_object_new_array();
		json_object *lv = json_object_new_array();

		json_object_array_add(types, o);
		json_object_object_add(o, "name",
				       json_object_new_string(n->type.name));
		json_object_object_add(o, "nodes",
				       json_object_new_string(n->nodes));
		json_object_object_add(o, "gpus",
				       json_object_new_int(n->type.n_gpus));
		json_object_object_add(o, "sockets",
				       json_object_new_int(n->type.n_sockets));
		json_object_object_add(o, "cpus",
				       json_object_new_int(n->type.cpus));
		json_object_object_add(o, "cores",
				       json_object_new_int(n->n_cores));
		json_object_object_add(o, "mem_mb",
				       json_object_new_int64(n->type.mem_mb));
		json_object_object_add(o, "gpu", gpus);
		json_object_object_add(o, "level", lv);
		for (i = 0; i < n->type.n_gpus; i++) {
			const topo_gpu_t *g = &n->gpu[i];
			json_object *go = json_object_new_object();
			json_object *row = json_object_new_array();

			json_object_array_add(gpus, go);
			json_object_object_add(go, "index",
					       json_object_new_int(i));
			json_object_object_add(go, "name",
					       json_object_new_string(g->name));
			json_object_object_add(
				go, "pci",
				json_object_new_string(g->pci_busid));
			json_object_object_add(go, "socket",
					       json_object_new_int(g->socket));
			json_object_object_add(go, "numa",
					       json_object_new_int(g->numa));
			json_object_object_add(
				go, "pcie_switch",
				json_object_new_int(g->pcie_switch));
			json_object_object_add(go, "island",
					       json_object_new_int(g->island));
			json_object_object_add(
				go, "cores", json_object_new_string(g->cores));
			json_object_array_add(lv, row);
			for (j = 0; j < n->type.n_gpus; j++)
				json_object_array_add(
					row, json_object_new_int(
						     n->type.level[i][j]));
		}
	}
	{
		const char *s = json_object_to_json_string_ext(
			root, JSON_C_TO_STRING_PRETTY |
				      JSON_C_TO_STRING_SPACED |
				      JSON_C_TO_STRING_NOSLASHESCAPE);

		out = s ? strdup(s) : NULL;
	}
	json_object_put(root);
	if (!out)
		goto nomem;
	return out;
nomem:
	errno = ENOMEM;
	return NULL;
}

/* Field getters: each error says "file: path.field: why". */
typedef struct jctx {
	const char *file;
	char path[128];
	agora_err_t *err;
	char fld[192]; /* scratch for fpath() */
} jctx_t;

/* "path.key", or "key" at the top level */
static const char *fpath(jctx_t *c, const char *key)
{
	snprintf(c->fld, sizeof(c->fld), "%.120s%s%.60s", c->path,
		 c->path[0] ? "." : "", key);
	return c->fld;
}

static json_object *jget(jctx_t *c, json_object *o, const char *key,
			 json_type type, int required)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v) || !v) {
		if (required)
			agora_err_set(c->err, "%s: %s: missing", c->file,
				      fpath(c, key));
		return NULL;
	}
	if (!json_object_is_type(v, type)) {
		agora_err_set(c->err, "%s: %s: wrong type (want %s)", c->file,
			      fpath(c, key), json_type_to_name(type));
		return NULL;
	}
	return v;
}

/* integer field in [lo, hi] (absent: *out = dflt unless required) */
static int jint(jctx_t *c, json_object *o, const char *key, int required,
		long lo, long hi, long dflt, long *out)
{
	json_object *v = NULL;
	int64_t x;

	if (!json_object_object_get_ex(o, key, &v) || !v) {
		if (required) {
			agora_err_set(c->err, "%s: %s: missing", c->file,
				      fpath(c, key));
			return -1;
		}
		*out = dflt;
		return 0;
	}
	if (!json_object_is_type(v, json_type_int)) {
		agora_err_set(c->err, "%s: %s: not an integer", c->file,
			      fpath(c, key));
		return -1;
	}
	x = json_object_get_int64(v);
	if (x < lo || x > hi) {
		agora_err_set(c->err, "%s: %s: %lld out of range [%ld, %ld]",
			      c->file, fpath(c, key), (long long) x, lo, hi);
		return -1;
	}
	*out = (long) x;
	return 0;
}

static int jstr(jctx_t *c, json_object *o, const char *key, int required,
		char *buf, size_t len)
{
	json_object *v = NULL;
	const char *s;

	if (!json_object_object_get_ex(o, key, &v) || !v) {
		if (required) {
			agora_err_set(c->err, "%s: %s: missing", c->file,
				      fpath(c, key));
			return -1;
		}
		buf[0] = '\0';
		return 0;
	}
	if (!json_object_is_type(v, json_type_string)) {
		agora_err_set(c->err, "%s: %s: not a string", c->file,
			      fpath(c, key));
		return -1;
	}
	s = json_object_get_string(v);
	if (strlen(s) >= len) {
		agora_err_set(c->err, "%s: %s: longer than %zu characters",
			      c->file, fpath(c, key), len - 1);
		return -1;
	}
	strcpy(buf, s);
	return 0;
}

/* GPU i of a node type (c->path names it on return); 0 or -1. */
static int parse_gpu(jctx_t *c, json_object *g, const char *base, int i,
		     topo_gpu_t *tg)
{
	int tmp[4096];
	long v;

	snprintf(c->path, sizeof(c->path), "%.100s.gpu[%d]", base, i);
	if (!json_object_is_type(g, json_type_object)) {
		agora_err_set(c->err, "%s: %s: not an object", c->file,
			      c->path);
		return -1;
	}
	if (jint(c, g, "index", 0, i, i, i, &v) < 0)
		return -1;
	if (jstr(c, g, "name", 0, tg->name, sizeof(tg->name)) < 0 ||
	    jstr(c, g, "pci", 0, tg->pci_busid, sizeof(tg->pci_busid)) < 0 ||
	    jstr(c, g, "cores", 0, tg->cores, sizeof(tg->cores)) < 0)
		return -1;
	if (topo_parse_ranges(tg->cores, tmp, 4096, 1 << 20) < 0) {
		agora_err_set(c->err,
			      "%s: %s.cores: bad core "
			      "list '%s'",
			      c->file, c->path, tg->cores);
		return -1;
	}
	if (jint(c, g, "socket", 0, -1, 63, -1, &v) < 0)
		return -1;
	tg->socket = (int) v;
	if (jint(c, g, "numa", 0, -1, 1 << 16, -1, &v) < 0)
		return -1;
	tg->numa = (int) v;
	if (jint(c, g, "pcie_switch", 0, -1, 1 << 16, -1, &v) < 0)
		return -1;
	tg->pcie_switch = (int) v;
	if (jint(c, g, "island", 0, 0, 1 << 16, i, &v) < 0)
		return -1;
	tg->island = (int) v;
	return 0;
}

/* An explicit level matrix of node type o must agree with the one
 * derived from its GPU fields (n); 0 or -1. */
static int check_levels(jctx_t *c, json_object *o, const topo_node_t *n, int ng)
{
	json_object *lv;
	int i, j;

	lv = jget(c, o, "level", json_type_array, 0);
	if (!lv)
		return json_object_object_get_ex(o, "level", NULL) ? -1 : 0;
	if ((int) json_object_array_length(lv) != ng) {
		agora_err_set(c->err, "%s: %s.level: %zu rows but gpus is %d",
			      c->file, c->path, json_object_array_length(lv),
			      ng);
		return -1;
	}
	for (i = 0; i < ng; i++) {
		json_object *row = json_object_array_get_idx(lv, i);

		if (!json_object_is_type(row, json_type_array) ||
		    (int) json_object_array_length(row) != ng) {
			agora_err_set(c->err,
				      "%s: %s.level[%d]: want an array "
				      "of %d levels",
				      c->file, c->path, i, ng);
			return -1;
		}
		for (j = 0; j < ng; j++) {
			json_object *e = json_object_array_get_idx(row, j);
			int64_t x;

			if (!json_object_is_type(e, json_type_int)) {
				agora_err_set(c->err,
					      "%s: %s.level[%d][%d]: not "
					      "an integer",
					      c->file, c->path, i, j);
				return -1;
			}
			x = json_object_get_int64(e);
			if (x != n->type.level[i][j]) {
				agora_err_set(c->err,
					      "%s: %s.level[%d][%d]: %lld "
					      "contradicts the GPU fields "
					      "(island/pcie_switch/socket give "
					      "%d)",
					      c->file, c->path, i, j,
					      (long long) x,
					      n->type.level[i][j]);
				return -1;
			}
		}
	}
	return 0;
}

static int parse_type(jctx_t *c, json_object *o, topo_node_t *n)
{
	json_object *gpus;
	long v;
	int i, ng;

	if (!json_object_is_type(o, json_type_object)) {
		agora_err_set(c->err, "%s: %s: not an object", c->file,
			      c->path);
		return -1;
	}
	if (jstr(c, o, "name", 1, n->type.name, sizeof(n->type.name)) < 0 ||
	    jstr(c, o, "nodes", 0, n->nodes, sizeof(n->nodes)) < 0)
		return -1;
	if (!n->type.name[0]) {
		agora_err_set(c->err, "%s: %s.name: empty", c->file, c->path);
		return -1;
	}
	if (n->nodes[0] && topo_hostlist_count(n->nodes) < 0) {
		agora_err_set(c->err, "%s: %s.nodes: bad hostlist '%s'",
			      c->file, c->path, n->nodes);
		return -1;
	}
	if (jint(c, o, "gpus", 1, 0, POL_MAX_GPUS_PER_NODE, 0, &v) < 0)
		return -1;
	ng = n->type.n_gpus = (int) v;
	if (jint(c, o, "sockets", 0, 1, 64, 1, &v) < 0)
		return -1;
	n->type.n_sockets = (int) v;
	if (jint(c, o, "cpus", 0, 0, 1 << 20, 0, &v) < 0)
		return -1;
	n->type.cpus = (int) v;
	if (jint(c, o, "cores", 0, 0, 1 << 20, 0, &v) < 0)
		return -1;
	n->n_cores = (int) v;
	if (jint(c, o, "mem_mb", 0, 0, 1L << 40, 0, &v) < 0)
		return -1;
	n->type.mem_mb = v;

	gpus = jget(c, o, "gpu", json_type_array, ng > 0);
	if (!gpus && ng > 0)
		return -1;
	if (gpus && (int) json_object_array_length(gpus) != ng) {
		agora_err_set(c->err, "%s: %s.gpu: %zu entries but gpus is %d",
			      c->file, c->path, json_object_array_length(gpus),
			      ng);
		return -1;
	}
	{
		char base[128];

		snprintf(base, sizeof(base), "%s", c->path);
		for (i = 0; i < ng; i++)
			if (parse_gpu(c, json_object_array_get_idx(gpus, i),
				      base, i, &n->gpu[i]) < 0)
				return -1;
		snprintf(c->path, sizeof(c->path), "%s", base);
	}
	topo_node_derive_levels(n);
	/* an explicit level matrix must agree with the derivation */
	return check_levels(c, o, n, ng);
}

int topo_model_parse_string(const char *text, const char *name,
			    topo_model_t *model, agora_err_t *err)
{
	json_tokener *tok = NULL;
	json_object *root = NULL, *types;
	topo_model_t m = { 0 };
	topo_node_t *n = NULL;
	jctx_t c;
	char fmt[64];
	long ver;
	int i, rc = -1;
	enum json_tokener_error jerr;

	memset(&c, 0, sizeof(c));
	c.file = name ? name : "(model)";
	c.err = err;
	if (!text || !model) {
		agora_err_set(err, "%s: missing argument", c.file);
		errno = EINVAL;
		return -1;
	}
	tok = json_tokener_new();
	if (!tok)
		goto nomem;
	root = json_tokener_parse_ex(tok, text, (int) strlen(text));
	jerr = json_tokener_get_error(tok);
	if (!root || jerr != json_tokener_success ||
	    json_tokener_get_parse_end(tok) != strlen(text)) {
		size_t off = json_tokener_get_parse_end(tok);

		/* trailing whitespace after the document is fine */
		if (root && jerr == json_tokener_success &&
		    strspn(text + off, " \t\r\n") == strlen(text + off))
			goto parsed;
		agora_err_set(err, "%s: not valid JSON (%s at byte %zu)",
			      c.file,
			      jerr == json_tokener_continue
				      ? "unexpected end of input"
			      : jerr != json_tokener_success
				      ? json_tokener_error_desc(jerr)
				      : "trailing data",
			      off);
		goto inval;
	}
parsed:
	if (!json_object_is_type(root, json_type_object)) {
		agora_err_set(err, "%s: top level: not a JSON object", c.file);
		goto inval;
	}
	if (jstr(&c, root, "format", 1, fmt, sizeof(fmt)) < 0)
		goto inval;
	if (strcmp(fmt, TOPO_MODEL_FORMAT)) {
		agora_err_set(err, "%s: format: '%s' is not '%s'", c.file, fmt,
			      TOPO_MODEL_FORMAT);
		goto inval;
	}
	if (jint(&c, root, "version", 1, TOPO_MODEL_VERSION, TOPO_MODEL_VERSION,
		 0, &ver) < 0)
		goto inval;
	types = jget(&c, root, "node_types", json_type_array, 1);
	if (!types)
		goto inval;
	n = calloc(1, sizeof(*n));
	if (!n)
		goto nomem;
	for (i = 0; i < (int) json_object_array_length(types); i++) {
		int k;

		memset(n, 0, sizeof(*n));
		snprintf(c.path, sizeof(c.path), "node_types[%d]", i);
		if (parse_type(&c, json_object_array_get_idx(types, i), n) < 0)
			goto inval;
		for (k = 0; k < m.n_types; k++)
			if (!strcmp(m.types[k].type.name, n->type.name)) {
				agora_err_set(err,
					      "%s: %s.name: '%s' already "
					      "used by node_types[%d]",
					      c.file, c.path, n->type.name, k);
				goto inval;
			}
		if (topo_model_add(&m, n) < 0)
			goto nomem;
	}
	topo_model_free(model);
	*model = m;
	m.types = NULL;
	rc = 0;
	goto out;
nomem:
	agora_err_set(err, "%s: out of memory", c.file);
	errno = ENOMEM;
	goto out;
inval:
	errno = EINVAL;
out:
	topo_model_free(&m);
	free(n);
	if (root)
		json_object_put(root);
	if (tok)
		json_tokener_free(tok);
	return rc;
}

int topo_model_load(const char *path, topo_model_t *model, agora_err_t *err)
{
	char *buf;
	size_t len;
	int rc, saved;

	if (!path) {
		agora_err_set(err, "(null): no model file given");
		errno = EINVAL;
		return -1;
	}
	if (agora_file_read_ex(path, TOPO_MODEL_MAX_BYTES, AGORA_FILE_FOLLOW,
			       &buf, &len, NULL, err) < 0)
		return -1;
	rc = topo_model_parse_string(buf, path, model, err);
	saved = errno;
	free(buf);
	errno = saved;
	return rc;
}

/* The uniform type's name for g GPUs (g already clamped). */
static void uniform_name(char name[POL_NAME_LEN], int gpus)
{
	snprintf(name, POL_NAME_LEN, "uniform-%d", gpus);
}

static int clamp_gpus(int gpus)
{
	if (gpus < 0)
		return 0;
	return gpus > POL_MAX_GPUS_PER_NODE ? POL_MAX_GPUS_PER_NODE : gpus;
}

int topo_model_node_type_find(const topo_model_t *model,
			      const pol_node_type_t *types, int n_types,
			      const char *host, int gpus, bool *mismatch)
{
	int n_model = model ? model->n_types : 0, t = -1, i;
	char name[POL_NAME_LEN];

	if (mismatch)
		*mismatch = false;
	gpus = clamp_gpus(gpus);
	if (n_model && host)
		t = topo_model_find(model, host);
	if (t >= 0 && t < n_model && model->types[t].type.n_gpus == gpus)
		return t;
	if (t >= 0 && mismatch)
		*mismatch = true;
	uniform_name(name, gpus);
	for (i = n_model; i < n_types; i++)
		if (!strcmp(types[i].name, name))
			return i;
	return -1;
}

int topo_model_node_type(const topo_model_t *model, pol_node_type_t **types,
			 int *n_types, size_t *cap, const char *host, int gpus,
			 bool *mismatch)
{
	char name[POL_NAME_LEN];
	int t = topo_model_node_type_find(model, *types, *n_types, host, gpus,
					  mismatch);

	if (t >= 0)
		return t;
	gpus = clamp_gpus(gpus);
	uniform_name(name, gpus);
	if (agora_grow((void **) types, cap, (size_t) *n_types + 1,
		       sizeof(**types)))
		return -1;
	pol_node_type_uniform(&(*types)[*n_types], name, gpus, 1);
	return (*n_types)++;
}
