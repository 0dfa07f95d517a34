/*
 * pol_registry.c - THE table of policies, the pol_policy_t wrapper, the
 * "k=v" parameter parser and the priority order shared by the baselines.
 *
 * To add a policy: write pol_NAME.c exporting pol_NAME_ops, declare it in
 * pol_policy.h and add one line to registry[] below.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agora_mem.h"
#include "agora_num.h"
#include "pol_policy_int.h"
#include "pol_agora.h"     /* agora, agora-order */
#include "pol_baselines.h" /* backfill-fs, tiresias */

static const pol_policy_ops_t *const registry[] = {
	&pol_fifo_ops,        &pol_backfill_ops,    &pol_las_ops,
	&pol_srtf_ops,        &pol_agora_order_ops, &pol_agora_ops,
	&pol_backfill_fs_ops, &pol_tiresias_ops,    NULL,
};

struct pol_policy {
	const pol_policy_ops_t *ops;
	void *state;
};

const pol_policy_ops_t *const *pol_registry(void)
{
	return registry;
}

const pol_policy_ops_t *pol_registry_find(const char *name)
{
	int i;

	for (i = 0; name && registry[i]; i++)
		if (!strcmp(registry[i]->name, name))
			return registry[i];
	errno = ENOENT;
	return NULL;
}

pol_policy_t *pol_policy_create(const char *name, const char *params,
				const pol_placer_t *placer, agora_err_t *err)
{
	const pol_policy_ops_t *ops = pol_registry_find(name);

	if (!ops) {
		agora_err_set(err, "unknown policy '%s'", name ? name : "");
		errno = ENOENT;
		return NULL;
	}
	return pol_policy_create_ops(ops, params, placer, err);
}

pol_policy_t *pol_policy_create_ops(const pol_policy_ops_t *ops,
				    const char *params,
				    const pol_placer_t *placer,
				    agora_err_t *err)
{
	const char *name = ops ? ops->name : "";
	pol_policy_t *p;

	if (!ops || !ops->create || !ops->decide || !ops->destroy) {
		agora_err_set(err, "policy '%s': incomplete ops table", name);
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		agora_err_set(err, "policy %s: out of memory", name);
		errno = ENOMEM;
		return NULL;
	}
	p->ops = ops;
	p->state = ops->create(params, placer ? placer : &pol_placer_stock,
			       err);
	if (!p->state) {
		int e = errno;

		free(p);
		errno = e;
		return NULL;
	}
	return p;
}

int pol_policy_decide(pol_policy_t *p, const pol_snapshot_t *snap, int64_t now,
		      pol_actions_t *out)
{
	if (!p || !snap || !out) {
		errno = EINVAL;
		return -1;
	}
	return p->ops->decide(p->state, snap, now, out);
}

int pol_policy_set_apps(pol_policy_t *p, const char *const *names,
			const char *const *accounts, int n)
{
	if (!p || n < 0 || (n > 0 && !names)) {
		errno = EINVAL;
		return -1;
	}
	if (!p->ops->set_apps) {
		errno = ENOTSUP;
		return -1;
	}
	return p->ops->set_apps(p->state, names, accounts, n);
}

const char *pol_policy_name(const pol_policy_t *p)
{
	return p ? p->ops->name : "";
}

void pol_policy_destroy(pol_policy_t **pp)
{
	if (!pp || !*pp)
		return;
	(*pp)->ops->destroy((*pp)->state);
	free(*pp);
	*pp = NULL;
}

/* Iterate "k=v" items: returns the next item's bounds or 0 at the end. */
static int next_item(const char **pp, const char **k, size_t *klen,
		     const char **v, size_t *vlen)
{
	const char *p = *pp, *e, *eq;

	while (*p == ',' || *p == ' ')
		p++;
	if (!*p)
		return 0;
	e = strchr(p, ',');
	if (!e)
		e = p + strlen(p);
	eq = memchr(p, '=', (size_t) (e - p));
	*k = p;
	*klen = eq ? (size_t) (eq - p) : (size_t) (e - p);
	*v = eq ? eq + 1 : e;
	*vlen = eq ? (size_t) (e - eq - 1) : 0;
	*pp = e;
	return 1;
}

int pol_params_parse(const char *policy, const char *params,
		     const char *const *keys, double *vals, agora_err_t *err)
{
	const char *p = params, *k, *v;
	size_t kl, vl;
	int i;

	if (!params)
		return 0;
	while (next_item(&p, &k, &kl, &v, &vl)) {
		for (i = 0; keys[i]; i++)
			if (strlen(keys[i]) == kl && !strncmp(keys[i], k, kl))
				break;
		if (!keys[i]) {
			agora_err_set(err, "policy %s: %.*s: unknown parameter",
				      policy, (int) kl, k);
			errno = EINVAL;
			return -1;
		}
		if (memchr(v, ':', vl))
			continue; /* a list: pol_params_list() reads it */
		if (agora_parse_seconds(v, vl, &vals[i])) {
			agora_err_set(err,
				      "policy %s: %s: '%.*s' is not a number",
				      policy, keys[i], (int) vl, v);
			errno = EINVAL;
			return -1;
		}
		/* every policy casts seconds to int64_t: beyond that the
		 * cast is undefined */
		if (fabs(vals[i]) > POL_PARAM_MAX) {
			agora_err_set(err, "policy %s: %s: %g is out of range",
				      policy, keys[i], vals[i]);
			errno = EINVAL;
			return -1;
		}
	}
	return 0;
}

int pol_params_list(const char *policy, const char *params, const char *key,
		    double *out, int max, agora_err_t *err)
{
	const char *p = params, *k, *v;
	size_t kl, vl;
	int n = 0;

	if (!params)
		return 0;
	while (next_item(&p, &k, &kl, &v, &vl)) {
		const char *s = v, *e = v + vl;

		if (strlen(key) != kl || strncmp(key, k, kl))
			continue;
		n = 0;
		while (s < e) {
			const char *c = memchr(s, ':', (size_t) (e - s));
			const char *ie = c ? c : e;

			if (n >= max ||
			    agora_parse_seconds(s, (size_t) (ie - s),
						&out[n])) {
				agora_err_set(
					err,
					"policy %s: %s: bad list '%.*s' (at most %d numbers separated by ':')",
					policy, key, (int) vl, v, max);
				errno = EINVAL;
				return -1;
			}
			/* as pol_params_parse(): the policies cast these */
			if (fabs(out[n]) > POL_PARAM_MAX) {
				agora_err_set(
					err,
					"policy %s: %s: item %d of '%.*s': %g is out of range",
					policy, key, n + 1, (int) vl, v,
					out[n]);
				errno = EINVAL;
				return -1;
			}
			n++;
			s = c ? c + 1 : e;
		}
	}
	return n;
}

int pol_order_cmp(const pol_job_t *a, const pol_job_t *b)
{
	if (a->band != b->band)
		return a->band > b->band ? -1 : 1;
	if (a->priority != b->priority)
		return a->priority > b->priority ? -1 : 1;
	if (a->submit != b->submit)
		return a->submit < b->submit ? -1 : 1;
	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return 0;
}

static int cmp_idx(const void *x, const void *y, void *arg)
{
	const pol_job_t *v = arg;

	return pol_order_cmp(&v[*(const int *) x], &v[*(const int *) y]);
}

int pol_order_pending(const pol_snapshot_t *snap, int *idx)
{
	int i, sorted = 1;

	for (i = 0; i < snap->n_pending; i++) {
		idx[i] = i;
		if (i &&
		    pol_order_cmp(&snap->pending[i - 1], &snap->pending[i]) > 0)
			sorted = 0;
	}
	if (!sorted)
		qsort_r(idx, (size_t) snap->n_pending, sizeof(*idx), cmp_idx,
			snap->pending);
	return 0;
}

int pol_work_sync(pol_work_t *w, const pol_cluster_t *c, int n)
{
	if (!w->fm || w->c != c || pol_freemap_reset(w->fm, c)) {
		pol_freemap_t *fm = pol_freemap_create(c);

		if (!fm)
			return -1;
		pol_freemap_destroy(&w->fm);
		w->fm = fm;
		w->c = c;
	}
	if (agora_grow((void **) &w->idx, &w->idx_cap, (size_t) n,
		       sizeof(*w->idx)))
		return -1;
	return 0;
}

void pol_work_free(pol_work_t *w)
{
	if (!w)
		return;
	pol_freemap_destroy(&w->fm);
	free(w->idx);
	memset(w, 0, sizeof(*w));
}
