/*
 * pol_estimate.c - run-time estimates from the recent history of
 * completed jobs, capped by the time limit, with an attained-service
 * fallback (pol_estimate.h).
 *
 * Groups are kept by their key text (the escaped fields joined by
 * spaces, as the state file writes them) in one array, found through an
 * open-addressing table of indices.  Each group keeps its newest k
 * samples, newest first, ordered by (end, run).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pol_estimate.h"

/* escaped field: 3 bytes per raw byte at most */
#define ESC_LEN (3 * POL_EST_FIELD_LEN + 1)
#define KEY_LEN (3 * ESC_LEN + 16)
#define T53     ((int64_t) 1 << 53)

typedef struct est_group {
	char *key;
	int level;
	int n;
	int64_t end[POL_EST_MAX_K], run[POL_EST_MAX_K];
} est_group_t;

struct pol_est {
	pol_est_params_t p;
	est_group_t **g;
	int n, cap;
	int *slot; /* group index + 1, 0 = empty */
	int n_slot;
	uint64_t gen;
};

void pol_est_params_default(pol_est_params_t *p)
{
	p->k = 2;
	p->prior_s = 3600;
	p->max_groups = 30000;
}

pol_est_t *pol_est_create(const pol_est_params_t *p)
{
	pol_est_params_t d;
	pol_est_t *e;

	if (!p) {
		pol_est_params_default(&d);
		p = &d;
	}
	if (p->k < 1 || p->k > POL_EST_MAX_K || p->prior_s <= 0 ||
	    p->prior_s >= T53 || p->max_groups < 3) {
		errno = EINVAL;
		return NULL;
	}
	if (!(e = calloc(1, sizeof(*e))))
		return NULL;
	e->p = *p;
	return e;
}

static void group_free(est_group_t *g)
{
	if (g) {
		free(g->key);
		free(g);
	}
}

void pol_est_destroy(pol_est_t **ep)
{
	pol_est_t *e;
	int i;

	if (!ep || !(e = *ep))
		return;
	for (i = 0; i < e->n; i++)
		group_free(e->g[i]);
	free(e->g);
	free(e->slot);
	free(e);
	*ep = NULL;
}

const pol_est_params_t *pol_est_params(const pol_est_t *e)
{
	return e ? &e->p : NULL;
}

static int safe_byte(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || (c && strchr("._+@:/=,", c));
}

/* s (NULL: empty), at most POL_EST_FIELD_LEN bytes of it, escaped */
static void escape(const char *s, char *out)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t i;
	char *o = out;

	if (!s || !*s) {
		strcpy(out, "-");
		return;
	}
	for (i = 0; i < POL_EST_FIELD_LEN && s[i]; i++) {
		unsigned char c = (unsigned char) s[i];

		if (safe_byte(c)) {
			*o++ = (char) c;
		} else {
			*o++ = '%';
			*o++ = hex[c >> 4];
			*o++ = hex[c & 15];
		}
	}
	*o = '\0';
}

/* the key texts of the three levels of key */
static void make_keys(const pol_est_key_t *key, char k[3][KEY_LEN])
{
	char app[ESC_LEN], user[ESC_LEN], name[ESC_LEN];

	escape(key->app, app);
	escape(key->user, user);
	escape(key->name, name);
	snprintf(k[0], KEY_LEN, "%s %s %s %d", app, user, name, key->gpus);
	snprintf(k[1], KEY_LEN, "%s %s %s *", app, user, name);
	snprintf(k[2], KEY_LEN, "%s %s * *", app, user);
}

/* the account of key (as an app key: no name), or NULL when it has none
 * or is the app itself */
static int account_key(const pol_est_key_t *key, pol_est_key_t *acct)
{
	if (!key->account || !key->account[0] ||
	    (key->app && !strcmp(key->account, key->app)))
		return 0;
	*acct = (pol_est_key_t){ key->account, key->user, key->name, key->gpus,
				 NULL };
	return 1;
}

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	while (*s)
		h = (h ^ (unsigned char) *s++) * 1099511628211ULL;
	return h;
}

static int find(const pol_est_t *e, const char *key)
{
	uint64_t h;
	int m, s;

	if (!e->n_slot)
		return -1;
	m = e->n_slot - 1;
	for (h = hash(key), s = (int) (h & (uint64_t) m); e->slot[s];
	     s = (s + 1) & m)
		if (!strcmp(e->g[e->slot[s] - 1]->key, key))
			return e->slot[s] - 1;
	return -1;
}

static int rehash(pol_est_t *e, int n_slot)
{
	int *slot = calloc((size_t) n_slot, sizeof(*slot)), i, m = n_slot - 1;

	if (!slot)
		return -1;
	for (i = 0; i < e->n; i++) {
		int s = (int) (hash(e->g[i]->key) & (uint64_t) m);

		while (slot[s])
			s = (s + 1) & m;
		slot[s] = i + 1;
	}
	free(e->slot);
	e->slot = slot;
	e->n_slot = n_slot;
	return 0;
}

/* drop the group whose newest sample is the oldest (ties: the last) */
static int evict(pol_est_t *e)
{
	int i, v = 0;

	for (i = 1; i < e->n; i++)
		if (e->g[i]->n == 0 ||
		    (e->g[v]->n && e->g[i]->end[0] <= e->g[v]->end[0]))
			v = i;
	group_free(e->g[v]);
	e->g[v] = e->g[--e->n];
	return rehash(e, e->n_slot);
}

static est_group_t *get_group(pol_est_t *e, const char *key, int level)
{
	est_group_t *g;
	int i = find(e, key);

	if (i >= 0)
		return e->g[i];
	if (e->n == e->cap) {
		int nc = e->cap ? 2 * e->cap : 64;
		est_group_t **ng = realloc(e->g, (size_t) nc * sizeof(*ng));

		if (!ng)
			return NULL;
		e->g = ng;
		e->cap = nc;
	}
	if (!(g = calloc(1, sizeof(*g))) || !(g->key = strdup(key))) {
		free(g);
		return NULL;
	}
	g->level = level;
	e->g[e->n++] = g;
	if (2 * e->n > e->n_slot) {
		if (rehash(e, e->n_slot ? 2 * e->n_slot : 128) < 0) {
			e->n--;
			group_free(g);
			return NULL;
		}
	} else {
		int m = e->n_slot - 1, s = (int) (hash(key) & (uint64_t) m);

		while (e->slot[s])
			s = (s + 1) & m;
		e->slot[s] = e->n;
	}
	return g;
}

/* (end, run) newer than (e2, r2)? */
static int newer(int64_t e1, int64_t r1, int64_t e2, int64_t r2)
{
	return e1 != e2 ? e1 > e2 : r1 > r2;
}

/* 1 if the sample goes into g (new and among its newest k), else 0 */
static int wanted(const est_group_t *g, int k, int64_t run, int64_t end)
{
	int i;

	for (i = 0; i < g->n; i++)
		if (g->end[i] == end && g->run[i] == run)
			return 0;
	return g->n < k || newer(end, run, g->end[g->n - 1], g->run[g->n - 1]);
}

static void insert(est_group_t *g, int k, int64_t run, int64_t end)
{
	int i;

	if (g->n < k)
		g->n++;
	for (i = g->n - 1;
	     i > 0 && newer(end, run, g->end[i - 1], g->run[i - 1]); i--) {
		g->end[i] = g->end[i - 1];
		g->run[i] = g->run[i - 1];
	}
	g->end[i] = end;
	g->run[i] = run;
}

/* record under the three key texts (level 0 decides whether it is new) */
static int record_keys(pol_est_t *e, char k[3][KEY_LEN], int64_t run,
		       int64_t end)
{
	est_group_t *g[3];
	int l, i, missing;

	i = find(e, k[0]);
	if (i >= 0 && !wanted(e->g[i], e->p.k, run, end))
		return 0;
	/* room for the groups to create (this may evict one of them) */
	for (;;) {
		for (missing = 0, l = 0; l < 3; l++)
			missing += find(e, k[l]) < 0;
		if (e->n + missing <= e->p.max_groups)
			break;
		if (evict(e) < 0)
			goto nomem;
	}
	for (l = 0; l < 3; l++)
		if (!(g[l] = get_group(e, k[l], l)))
			goto nomem;
	if (!wanted(g[0], e->p.k, run, end))
		return 0;
	for (l = 0; l < 3; l++)
		if (wanted(g[l], e->p.k, run, end))
			insert(g[l], e->p.k, run, end);
	e->gen++;
	return 1;
nomem:
	errno = ENOMEM;
	return -1;
}

int pol_est_record(pol_est_t *e, const pol_est_key_t *key, int64_t run_s,
		   int64_t end)
{
	char k[3][KEY_LEN];
	pol_est_key_t acct;
	int r, ra = 0;

	if (!e || !key || run_s < 0 || run_s >= T53 || key->gpus < 0 ||
	    end <= -T53 || end >= T53) {
		errno = EINVAL;
		return -1;
	}
	make_keys(key, k);
	if ((r = record_keys(e, k, run_s, end)) < 0)
		return -1;
	if (account_key(key, &acct)) {
		make_keys(&acct, k);
		if ((ra = record_keys(e, k, run_s, end)) < 0)
			return -1;
	}
	return r || ra;
}

int pol_est_history(const pol_est_t *e, const pol_est_key_t *key, double *mean,
		    int *n)
{
	char k[6][KEY_LEN];
	pol_est_key_t acct;
	int l, i, s, levels = 3;

	*mean = 0;
	*n = 0;
	if (!e || !key || !e->n)
		return -1;
	make_keys(key, k);
	if (account_key(key, &acct)) {
		make_keys(&acct, k + 3);
		levels = 6;
	}
	for (l = 0; l < levels; l++) {
		const est_group_t *g;
		double sum = 0;

		if ((i = find(e, k[l])) < 0 || !(g = e->g[i])->n)
			continue;
		for (s = 0; s < g->n; s++)
			sum += (double) g->run[s];
		*mean = sum / g->n;
		*n = g->n;
		return l;
	}
	return -1;
}

int64_t pol_est_remaining_from(const pol_est_params_t *p, double mean, int n,
			       int64_t limit_s, int64_t attained_s,
			       pol_est_source_t *src)
{
	pol_est_source_t from = POL_EST_SERVICE;
	double a = attained_s > 0 ? (double) attained_s : 0, r;

	if (n > 0 && mean > a) {
		r = mean - a;
		from = POL_EST_HISTORY;
	} else {
		r = a > (double) p->prior_s ? a : (double) p->prior_s;
	}
	if (limit_s > 0 && r > (double) limit_s - a) {
		r = (double) limit_s - a;
		from = POL_EST_LIMIT;
	}
	if (r < 1)
		r = 1;
	if (r > (double) (T53 - 1))
		r = (double) (T53 - 1);
	if (src)
		*src = from;
	return (int64_t) (r + 0.5);
}

int64_t pol_est_remaining(const pol_est_t *e, const pol_est_key_t *key,
			  int64_t limit_s, int64_t attained_s,
			  pol_est_source_t *src)
{
	pol_est_params_t d;
	double mean;
	int n;

	if (!e)
		pol_est_params_default(&d);
	pol_est_history(e, key, &mean, &n);
	return pol_est_remaining_from(e ? &e->p : &d, mean, n, limit_s,
				      attained_s, src);
}

int pol_est_groups(const pol_est_t *e)
{
	return e ? e->n : 0;
}

int pol_est_samples(const pol_est_t *e)
{
	int i, s = 0;

	for (i = 0; e && i < e->n; i++)
		if (e->g[i]->level == 0)
			s += e->g[i]->n;
	return s;
}

uint64_t pol_est_generation(const pol_est_t *e)
{
	return e ? e->gen : 0;
}

/* Text ------------------------------------------------------------------ */

static int cmp_group(const void *x, const void *y)
{
	const est_group_t *a = *(est_group_t *const *) x;
	const est_group_t *b = *(est_group_t *const *) y;

	return strcmp(a->key, b->key);
}

/* append to a growing string; 0 or -1/ENOMEM */
static int put(char **buf, size_t *len, size_t *cap, const char *s)
{
	size_t n = strlen(s);

	if (*len + n + 1 > *cap) {
		size_t nc = *cap ? *cap : 4096;
		char *nb;

		while (*len + n + 1 > nc)
			nc *= 2;
		if (!(nb = realloc(*buf, nc)))
			return -1;
		*buf = nb;
		*cap = nc;
	}
	memcpy(*buf + *len, s, n + 1);
	*len += n;
	return 0;
}

char *pol_est_save(const pol_est_t *e)
{
	est_group_t **v = NULL;
	char *buf = NULL, line[KEY_LEN + 64];
	size_t len = 0, cap = 0;
	int i, m = 0, s;

	if (!e) {
		errno = EINVAL;
		return NULL;
	}
	if (e->n && !(v = malloc((size_t) e->n * sizeof(*v))))
		return NULL;
	for (i = 0; i < e->n; i++)
		if (e->g[i]->level == 0 && e->g[i]->n)
			v[m++] = e->g[i];
	if (m > 1)
		qsort(v, (size_t) m, sizeof(*v), cmp_group);
	if (put(&buf, &len, &cap,
		"agora-estimates 1\n"
		"# job APP USER NAME GPUS END RUN: completed jobs, newest k per group\n") <
	    0)
		goto nomem;
	for (i = 0; i < m; i++)
		for (s = v[i]->n - 1; s >= 0; s--) {
			snprintf(line, sizeof(line),
				 "job %s %" PRId64 " %" PRId64 "\n", v[i]->key,
				 v[i]->end[s], v[i]->run[s]);
			if (put(&buf, &len, &cap, line) < 0)
				goto nomem;
		}
	free(v);
	return buf;
nomem:
	free(v);
	free(buf);
	errno = ENOMEM;
	return NULL;
}

static const char *const field_names[] = { "record", "app", "user", "name",
					   "gpus",   "end", "run" };

/* a key field as written by escape(): 0, or -1 with why */
static int check_field(const char *s, const char **why)
{
	size_t i, raw = 0;

	if (!strcmp(s, "-"))
		return 0;
	if (!*s) {
		*why = "empty";
		return -1;
	}
	for (i = 0; s[i]; i++, raw++) {
		if (s[i] == '%') {
			if (!strchr("0123456789ABCDEF", s[i + 1]) ||
			    !s[i + 1] ||
			    !strchr("0123456789ABCDEF", s[i + 2]) ||
			    !s[i + 2]) {
				*why = "bad %XX escape";
				return -1;
			}
			if (safe_byte((unsigned char) strtol(
				    (char[]){ s[i + 1], s[i + 2], 0 }, NULL,
				    16))) {
				*why = "an escaped byte that needs no escape";
				return -1;
			}
			i += 2;
		} else if (!safe_byte((unsigned char) s[i])) {
			*why = "a byte that must be escaped";
			return -1;
		}
	}
	if (raw > POL_EST_FIELD_LEN) {
		*why = "longer than 64 bytes";
		return -1;
	}
	return 0;
}

static int parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
	char *end;
	long long v;

	if (!*s || (*s != '-' && (*s < '0' || *s > '9')))
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

static int load_line(pol_est_t *e, char *line, const char *file, int ln,
		     agora_err_t *err)
{
	char *f[8], *save = NULL, *t, k[3][KEY_LEN];
	const char *why = NULL;
	int n = 0, bad = -1;
	int64_t gpus = 0, end = 0, run = 0;

	for (t = strtok_r(line, " \t", &save); t && n < 8;
	     t = strtok_r(NULL, " \t", &save))
		f[n++] = t;
	if (n == 0 || strcmp(f[0], "job")) {
		agora_err_set(err, "%s:%d: record: expected 'job'", file, ln);
		goto inval;
	}
	if (n != 7) {
		agora_err_set(
			err,
			"%s:%d: %s: expected 7 fields (job APP USER NAME GPUS END RUN), got %d",
			file, ln, field_names[n < 7 ? n : 0], n);
		goto inval;
	}
	for (bad = 1; bad <= 3; bad++)
		if (check_field(f[bad], &why) < 0)
			break;
	if (bad <= 3) {
		agora_err_set(err, "%s:%d: %s: '%.64s': %s", file, ln,
			      field_names[bad], f[bad], why);
		goto inval;
	}
	if (parse_int(f[4], 0, 1000000, &gpus) < 0)
		bad = 4, why = "an integer in 0..1000000";
	else if (parse_int(f[5], -T53 + 1, T53 - 1, &end) < 0)
		bad = 5, why = "an integer time, |END| < 2^53";
	else if (parse_int(f[6], 0, T53 - 1, &run) < 0)
		bad = 6, why = "a non-negative integer of seconds";
	else
		bad = -1;
	if (bad > 0) {
		agora_err_set(err, "%s:%d: %s: '%.64s': expected %s", file, ln,
			      field_names[bad], f[bad], why);
		goto inval;
	}
	snprintf(k[0], KEY_LEN, "%s %s %s %d", f[1], f[2], f[3], (int) gpus);
	snprintf(k[1], KEY_LEN, "%s %s %s *", f[1], f[2], f[3]);
	snprintf(k[2], KEY_LEN, "%s %s * *", f[1], f[2]);
	if (record_keys(e, k, run, end) < 0) {
		agora_err_set(err, "%s:%d: out of memory", file, ln);
		return -1;
	}
	return 0;
inval:
	errno = EINVAL;
	return -1;
}

int pol_est_load(pol_est_t *e, const char *text, const char *file,
		 agora_err_t *err)
{
	pol_est_t *tmp;
	const char *p = text, *nl;
	char line[4096];
	int ln = 0, header = 0, rc = -1;

	if (!file)
		file = "(estimates)";
	if (!e || !text) {
		agora_err_set(err, "%s: no state", file);
		errno = EINVAL;
		return -1;
	}
	if (!(tmp = pol_est_create(&e->p))) {
		agora_err_set(err, "%s: out of memory", file);
		return -1;
	}
	for (; *p; p = nl ? nl + 1 : p + strlen(p)) {
		size_t len;
		char *s;

		nl = strchr(p, '\n');
		len = nl ? (size_t) (nl - p) : strlen(p);
		ln++;
		if (len >= sizeof(line)) {
			agora_err_set(
				err,
				"%s:%d: record: line longer than %zu bytes",
				file, ln, sizeof(line) - 1);
			errno = EINVAL;
			goto out;
		}
		memcpy(line, p, len);
		line[len] = '\0';
		if (len && line[len - 1] == '\r')
			line[len - 1] = '\0';
		for (s = line; *s == ' ' || *s == '\t'; s++)
			;
		if (!*s || *s == '#')
			continue;
		if (!header) {
			if (strcmp(s, "agora-estimates 1")) {
				agora_err_set(
					err,
					"%s:%d: header: expected 'agora-estimates 1'",
					file, ln);
				errno = EINVAL;
				goto out;
			}
			header = 1;
			continue;
		}
		if (load_line(tmp, s, file, ln, err) < 0)
			goto out;
	}
	if (!header) {
		agora_err_set(err,
			      "%s:%d: header: expected 'agora-estimates 1'",
			      file, ln ? ln : 1);
		errno = EINVAL;
		goto out;
	}
	if (pol_est_merge(e, tmp) < 0) {
		agora_err_set(err, "%s: out of memory", file);
		goto out;
	}
	rc = 0;
out:
	pol_est_destroy(&tmp);
	return rc;
}

/* the three key texts of a level-0 key text "APP USER NAME GPUS" */
static int split_key(const char *key, char k[3][KEY_LEN])
{
	char app[ESC_LEN], user[ESC_LEN], name[ESC_LEN];

	if (sscanf(key, "%192s %192s %192s", app, user, name) != 3)
		return -1;
	snprintf(k[0], KEY_LEN, "%s", key);
	snprintf(k[1], KEY_LEN, "%s %s %s *", app, user, name);
	snprintf(k[2], KEY_LEN, "%s %s * *", app, user);
	return 0;
}

int pol_est_merge(pol_est_t *dst, const pol_est_t *src)
{
	char k[3][KEY_LEN];
	int i, s;

	if (!dst || !src) {
		errno = EINVAL;
		return -1;
	}
	if (dst == src)
		return 0;
	for (i = 0; i < src->n; i++) {
		const est_group_t *g = src->g[i];

		if (g->level != 0 || !g->n)
			continue;
		if (split_key(g->key, k) < 0) {
			errno = EINVAL;
			return -1;
		}
		for (s = g->n - 1; s >= 0; s--)
			if (record_keys(dst, k, g->run[s], g->end[s]) < 0)
				return -1;
	}
	return 0;
}
