/*
 * pol_credit.c - the credit ledger (see pol_credit.h for the model): its
 * arithmetic; the state file's JSON is in pol_credit_json.c.
 *
 * Accounts live in one array sorted by name (bsearch to find, memmove to
 * insert); sources (peer clusters) in a short unsorted array.  Capacity is
 * reserved before anything is changed so that no function has a side
 * effect when it fails.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agora_mem.h"
#include "pol_app.h"
#include "pol_credit_int.h"

pol_credit_t *pol_credit_create(const char *cluster, double half_life_s,
				double period_s, double default_quota)
{
	pol_credit_t *l;

	if (!name_ok(cluster) || !(half_life_s > 0) || !isfinite(half_life_s) ||
	    !(period_s > 0) || !isfinite(period_s) || !(default_quota >= 0) ||
	    !isfinite(default_quota)) {
		errno = EINVAL;
		return NULL;
	}
	if (!(l = calloc(1, sizeof(*l))))
		return NULL;
	snprintf(l->cluster, sizeof(l->cluster), "%s", cluster);
	l->half_life_s = half_life_s;
	l->period_s = period_s;
	l->default_quota = default_quota;
	return l;
}

pol_credit_t *pol_credit_from_conf(const char *cluster,
				   const agora_conf_t *conf)
{
	pol_credit_t *l;
	size_t i;

	if (!conf) {
		errno = EINVAL;
		return NULL;
	}
	l = pol_credit_create(cluster, conf->credit_half_life_h * 3600.0,
			      conf->credit_period_h * 3600.0,
			      conf->default_quota);
	if (!l)
		return NULL;
	for (i = 0; i < conf->n_quotas; i++) {
		if (pol_credit_set_quota(l, conf->quotas[i].account,
					 conf->quotas[i].gpu_hours) < 0) {
			int e = errno;

			pol_credit_destroy(&l);
			errno = e;
			return NULL;
		}
	}
	return l;
}

void pol_credit_destroy(pol_credit_t **lp)
{
	if (!lp || !*lp)
		return;
	free((*lp)->acct);
	free((*lp)->src);
	free(*lp);
	*lp = NULL;
}

/* Index of account, or -(insertion point) - 1. */
static long acct_find(const pol_credit_t *l, const char *name)
{
	size_t lo = 0, hi = l->n_acct;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(l->acct[mid].name, name);

		if (!c)
			return (long) mid;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -(long) lo - 1;
}

static int acct_reserve(pol_credit_t *l)
{
	return agora_grow((void **) &l->acct, &l->cap_acct, l->n_acct + 1,
			  sizeof(*l->acct));
}

/* Find or insert (zeroed) account; NULL/ENOMEM with no change. */
static credit_acct_t *acct_get(pol_credit_t *l, const char *name)
{
	long i = acct_find(l, name);
	size_t at;

	if (i >= 0)
		return &l->acct[i];
	if (acct_reserve(l) < 0)
		return NULL;
	at = (size_t) (-i - 1);
	memmove(&l->acct[at + 1], &l->acct[at],
		(l->n_acct - at) * sizeof(*l->acct));
	memset(&l->acct[at], 0, sizeof(*l->acct));
	snprintf(l->acct[at].name, sizeof(l->acct[at].name), "%s", name);
	l->n_acct++;
	return &l->acct[at];
}

static credit_source_t *src_find(const pol_credit_t *l, const char *cluster)
{
	size_t i;

	for (i = 0; i < l->n_src; i++)
		if (!strcmp(l->src[i].cluster, cluster))
			return &l->src[i];
	return NULL;
}

static int src_reserve(pol_credit_t *l)
{
	return agora_grow((void **) &l->src, &l->cap_src, l->n_src + 1,
			  sizeof(*l->src));
}

int pol_credit_set_quota(pol_credit_t *l, const char *account, double gpu_hours)
{
	char key[POL_APP_KEY_LEN];
	credit_acct_t *a;

	if (!l || !account || !(gpu_hours >= 0) || !isfinite(gpu_hours)) {
		errno = EINVAL;
		return -1;
	}
	pol_app_key(account, key);
	if (!(a = acct_get(l, key)))
		return -1;
	a->has_quota = true;
	a->quota = gpu_hours;
	return 0;
}

double pol_credit_quota(const pol_credit_t *l, const char *account)
{
	char key[POL_APP_KEY_LEN];
	long i;

	if (!l)
		return 0;
	if (account)
		pol_app_key(account, key);
	if (!account || (i = acct_find(l, key)) < 0 || !l->acct[i].has_quota)
		return l->default_quota;
	return l->acct[i].quota;
}

/* Decay factor over dt seconds (dt may be negative: growth). */
static double decay(const pol_credit_t *l, double dt)
{
	return exp2(-dt / l->half_life_s);
}

/* Add gpu_seconds at time t to a; cannot fail. */
static void acct_add(const pol_credit_t *l, credit_acct_t *a, double gs,
		     int64_t t)
{
	if (!a->has_usage) {
		a->raw = gs;
		a->t_ref = t;
		a->has_usage = true;
	} else if (t >= a->t_ref) {
		a->raw = a->raw * decay(l, (double) t - (double) a->t_ref) + gs;
		a->t_ref = t;
	} else {
		/* a late record: decay it forward to the reference time */
		a->raw += gs * decay(l, (double) a->t_ref - (double) t);
	}
}

int pol_credit_charge(pol_credit_t *l, const char *account, double gpu_seconds,
		      int64_t t, pol_credit_record_t *rec)
{
	char key[POL_APP_KEY_LEN];
	credit_acct_t *a;

	if (!l || !account || !amount_ok(gpu_seconds)) {
		errno = EINVAL;
		return -1;
	}
	pol_app_key(account, key);
	if (!(a = acct_get(l, key)))
		return -1;
	acct_add(l, a, gpu_seconds, t);
	l->seq++;
	if (rec) {
		memset(rec, 0, sizeof(*rec));
		snprintf(rec->cluster, sizeof(rec->cluster), "%s", l->cluster);
		rec->seq = l->seq;
		snprintf(rec->account, sizeof(rec->account), "%s", key);
		rec->gpu_seconds = gpu_seconds;
		rec->t = t;
	}
	return 0;
}

int pol_credit_absorb(pol_credit_t *l, const pol_credit_record_t *rec)
{
	credit_source_t *s;
	credit_acct_t *a;

	if (!l || !rec || !memchr(rec->cluster, 0, sizeof(rec->cluster)) ||
	    !memchr(rec->account, 0, sizeof(rec->account)) ||
	    !name_ok(rec->cluster) || !name_ok(rec->account) ||
	    !amount_ok(rec->gpu_seconds) || rec->seq == 0) {
		errno = EINVAL;
		return -1;
	}
	if (!strcmp(rec->cluster, l->cluster))
		return 0; /* our own record coming back around */
	s = src_find(l, rec->cluster);
	if (s && rec->seq <= s->hwm)
		return 0;
	/* reserve everything first: no side effect on failure */
	if (!s && src_reserve(l) < 0)
		return -1;
	if (!(a = acct_get(l, rec->account)))
		return -1;
	if (!s) {
		s = &l->src[l->n_src++];
		memset(s, 0, sizeof(*s));
		snprintf(s->cluster, sizeof(s->cluster), "%s", rec->cluster);
	}
	acct_add(l, a, rec->gpu_seconds, rec->t);
	s->hwm = rec->seq;
	return 1;
}

uint64_t pol_credit_hwm(const pol_credit_t *l, const char *cluster)
{
	const credit_source_t *s;

	if (!l || !cluster)
		return 0;
	if (!strcmp(cluster, l->cluster))
		return l->seq;
	s = src_find(l, cluster);
	return s ? s->hwm : 0;
}

double pol_credit_usage(const pol_credit_t *l, const char *account, int64_t t)
{
	char key[POL_APP_KEY_LEN];
	const credit_acct_t *a;
	double dt;
	long i;

	if (!l || !account)
		return 0;
	pol_app_key(account, key);
	if ((i = acct_find(l, key)) < 0)
		return 0;
	a = &l->acct[i];
	if (!a->has_usage)
		return 0;
	dt = (double) t - (double) a->t_ref;
	if (dt < 0)
		dt = 0; /* before the latest charge: read as at it */
	return a->raw * decay(l, dt) / 3600.0 * M_LN2 * l->period_s /
	       l->half_life_s;
}

double pol_credit_get(const pol_credit_t *l, const char *account, int64_t t)
{
	return pol_credit_quota(l, account) - pol_credit_usage(l, account, t);
}

size_t pol_credit_count(const pol_credit_t *l)
{
	return l ? l->n_acct : 0;
}

const char *pol_credit_account(const pol_credit_t *l, size_t i)
{
	return l && i < l->n_acct ? l->acct[i].name : NULL;
}

int pol_credit_clamp_future(pol_credit_t *l, int64_t now)
{
	size_t i;
	int n = 0;

	if (!l) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < l->n_acct; i++)
		if (l->acct[i].has_usage && l->acct[i].t_ref > now) {
			l->acct[i].t_ref = now;
			n++;
		}
	return n;
}

int pol_credit_prune(pol_credit_t *l, int64_t now, double n_half_lives)
{
	size_t i, k = 0;
	int n = 0;

	if (!l || !(n_half_lives > 0) || !isfinite(n_half_lives)) {
		errno = EINVAL;
		return -1;
	}
	for (i = 0; i < l->n_acct; i++) {
		credit_acct_t *a = &l->acct[i];

		if (a->has_usage && (double) now - (double) a->t_ref >
					    n_half_lives * l->half_life_s) {
			n++;
			if (!a->has_quota)
				continue;     /* dropped */
			a->has_usage = false; /* keep its configured quota */
			a->raw = 0;
			a->t_ref = 0;
		}
		l->acct[k++] = *a;
	}
	l->n_acct = k;
	return n;
}

/* Queue order ---------------------------------------------------------- */

int pol_credit_key_cmp(const void *a, const void *b)
{
	const pol_credit_key_t *x = a, *y = b;

	if (x->band != y->band)
		return x->band > y->band ? -1 : 1;
	if (x->credit != y->credit)
		return x->credit > y->credit ? -1 : 1;
	if (x->submit != y->submit)
		return x->submit < y->submit ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return 0;
}

static inline bool key_less(const pol_credit_key_t *x,
			    const pol_credit_key_t *y)
{
	if (x->band != y->band)
		return x->band > y->band;
	if (x->credit != y->credit)
		return x->credit > y->credit;
	if (x->submit != y->submit)
		return x->submit < y->submit;
	return x->id < y->id;
}

/* Stable merge sort of k[0..n) with tmp[0..n): runs of 16 by insertion,
 * then merges, k and tmp trading places. */
void pol_credit_key_sort(pol_credit_key_t *k, size_t n, pol_credit_key_t *tmp)
{
	pol_credit_key_t *from = k, *to = tmp, *sw;
	size_t i, w, run = 16;

	for (i = 0; i < n; i += run) {
		size_t end = i + run < n ? i + run : n, a, b;

		for (a = i + 1; a < end; a++) {
			pol_credit_key_t x = k[a];

			for (b = a; b > i && key_less(&x, &k[b - 1]); b--)
				k[b] = k[b - 1];
			k[b] = x;
		}
	}
	for (w = run; w < n; w *= 2) {
		for (i = 0; i < n; i += 2 * w) {
			size_t m = i + w < n ? i + w : n,
			       e = i + 2 * w < n ? i + 2 * w : n, a = i, b = m,
			       o = i;

			while (a < m && b < e)
				to[o++] = key_less(&from[b], &from[a])
						  ? from[b++]
						  : from[a++];
			while (a < m)
				to[o++] = from[a++];
			while (b < e)
				to[o++] = from[b++];
		}
		sw = from;
		from = to;
		to = sw;
	}
	if (from != k)
		memcpy(k, from, n * sizeof(*k));
}

int64_t pol_credit_charge_since(int64_t last_pass, int64_t now, int interval_s,
				int64_t *capped)
{
	int64_t cap = (int64_t) POL_CREDIT_CHARGE_PASSES *
		      (interval_s > 1 ? interval_s : 1);

	if (cap < 60)
		cap = 60;
	if (capped)
		*capped = 0;
	if (!last_pass)
		return 0;
	if (last_pass >= now)
		return now;
	if (now - last_pass > cap) {
		if (capped)
			*capped = now - last_pass;
		return now - cap;
	}
	return last_pass;
}
