/*
 * pol_agora_base.c - the bottom layer of the "agora" policies: what every
 * step of a pass uses (a job's GPUs and limit, the lease a start gets, a
 * placement, a start) and the app table by name.  It calls nothing above
 * it (pol_agora_int.h describes the layers).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pol_agora_int.h"
#include "pol_app.h"
#include "pol_ckpt.h"

/* Jobs and leases ----------------------------------------------------- */

int pol_ag_job_gpus(const pol_job_t *j)
{
	int g = j->alloc.n_parts ? pol_alloc_gpus(&j->alloc) : 0;

	return g > 0 ? g : j->total_gpus;
}

int64_t pol_ag_job_limit(const pol_agora_policy_t *a, const pol_job_t *j)
{
	return j->time_limit > 0 ? j->time_limit : a->p.default_limit;
}

/*
 * Length of a full lease granted now.  Aligned: it ends on the next
 * multiple of lease_s at least min_lease away, so leases granted at
 * different times run out together and one auction sees all their GPUs
 * (a gang larger than what one job frees can be assembled).
 */
int64_t pol_ag_full_lease(const pol_agora_policy_t *a, int64_t now)
{
	int64_t L = a->p.lease_s, end;

	if (!a->p.align)
		return L;
	end = (now >= 0 ? now / L : (now - L + 1) / L) * L + L;
	/* whole leases added at once: min_lease may be many leases (a
	 * loop of 1e11 turns with lease=10,min_lease=1e12) */
	if (end - now < a->p.min_lease_s)
		end += (a->p.min_lease_s - (end - now) + L - 1) / L * L;
	return end - now;
}

/*
 * j as the preemption rules see it (ag_params_t.every, pol_ckpt_rhythm()):
 * its leases, its age rule and its chance to lose fall on the rhythm.
 * tmp holds the copy when the interval changes.
 */
static const pol_job_t *ag_rhythm(const pol_agora_policy_t *a,
				  const pol_job_t *j, pol_job_t *tmp)
{
	int64_t c = pol_ckpt_interval(j, a->p.ckpt_s),
		r = pol_ckpt_rhythm(c, a->p.every);

	if (r == c)
		return j;
	*tmp = *j;
	tmp->ckpt_s = r;
	return tmp;
}

int64_t pol_ag_lease_len(const pol_agora_policy_t *a, const pol_job_t *j0,
			 int64_t start, int64_t now, int64_t dur)
{
	pol_job_t tmp;
	const pol_job_t *j = ag_rhythm(a, j0, &tmp);
	int64_t c = pol_ckpt_interval(j, a->p.ckpt_s), end = now + dur;

	if (a->p.ckpt_lease && c > 0)
		end = pol_ckpt_next(start, c, end + a->p.grace_s) -
		      a->p.grace_s;
	return end - now >= a->p.min_lease_s ? end - now : a->p.min_lease_s;
}

double pol_ag_preempt_cost(const pol_agora_policy_t *a, const pol_job_t *j,
			   int64_t now)
{
	return pol_ckpt_cost(j, a->p.ckpt_s, pol_ag_job_gpus(j),
			     now + a->p.grace_s);
}

bool pol_ag_may_lose(const pol_agora_policy_t *a, const pol_job_t *j0,
		     int64_t now)
{
	pol_job_t tmp;
	const pol_job_t *j = ag_rhythm(a, j0, &tmp);
	int64_t c = pol_ckpt_interval(j, a->p.ckpt_s);
	const pol_preempt_rule_t rule = {
		.budget = a->p.budget,
		.since_save = false,
		.dflt = a->p.ckpt_s,
		.min_run = a->p.lease_s,
	};

	if (!pol_job_may_preempt(j, &rule, now + a->p.grace_s) ||
	    (a->p.max_run > 0 && now - j->start >= a->p.max_run) ||
	    (a->p.keep_long > 0 &&
	     (j->time_limit <= 0 || j->time_limit >= a->p.keep_long)))
		return false;
	if (c == POL_CKPT_NEVER)
		return a->p.unsaved;
	return c <= 0 ||
	       (double) pol_ckpt_lost(j, a->p.ckpt_s, now + a->p.grace_s) <=
		       a->p.max_loss * (double) c;
}

int pol_ag_start_job(pol_agora_policy_t *a, const pol_job_t *j, pol_alloc_t *al,
		     int64_t now, int64_t lease, double score, const char *why,
		     pol_actions_t *out)
{
	char text[POL_REASON_LEN];
	const ag_tenant_t *t = (j->tenant >= 0 && j->tenant < a->n_tmap)
				       ? AG_TEN(a, j->tenant)
				       : NULL;

	/* its first lease lasts to its first checkpoint at least */
	lease = pol_ag_lease_len(a, j, now, now, lease);
	/* what the adapter shows users: why it started and on what terms */
	if (t)
		snprintf(text, sizeof(text),
			 "%s: app %s rho=%.2f credit=%.1f GPU-h, lease %llds",
			 why, t->name, t->n_jobs ? t->rho_sum / t->n_jobs : 1.0,
			 t->credit, (long long) lease);
	else
		snprintf(text, sizeof(text), "%s", why);
	if (pol_freemap_take(a->w.fm, al) < 0 ||
	    pol_actions_add(out, POL_ACT_START, j->id, al, score, text) < 0 ||
	    pol_lease_grant(a->leases, j->id, pol_alloc_gpus(al), now, lease) <
		    0)
		return -1;
	return 0;
}

/* Place j on fm; 1 placed, 0 does not fit, -1 error. */
int pol_ag_try_place(const pol_agora_policy_t *a, const pol_freemap_t *fm,
		     const pol_job_t *j, pol_alloc_t *al)
{
	al->parts = NULL;
	al->n_parts = 0;
	if (a->placer->place(a->placer->arg, fm, j, al) == 0)
		return 1;
	return errno == ENOSPC ? 0 : -1;
}

/* Apps by name ---------------------------------------------------------- */

/* Index of the app with key name, or -1. */
int pol_ag_app_find(const pol_agora_policy_t *a, const char *key)
{
	unsigned long long h;
	int m, k;

	if (!a->n_slot)
		return -1;
	m = a->n_slot - 1;
	h = pol_app_hash(key);
	for (k = (int) (h & (unsigned) m); a->slot[k]; k = (k + 1) & m)
		if (!strcmp(a->app[a->slot[k] - 1].name, key))
			return a->slot[k] - 1;
	return -1;
}

/* Put app index i into slot table s of size n (a power of two). */
static void ag_slot_put(const pol_agora_policy_t *a, int *s, int n, int i)
{
	int m = n - 1, k;

	k = (int) (pol_app_hash(a->app[i].name) & (unsigned) m);
	while (s[k])
		k = (k + 1) & m;
	s[k] = i + 1;
}

/* Index of the app with key name, created (zeroed) if new; -1/ENOMEM. */
int pol_ag_app_get(pol_agora_policy_t *a, const char *key)
{
	int i = pol_ag_app_find(a, key);

	if (i >= 0)
		return i;
	/* keep the table at most half full */
	if (2 * (a->n_app + 1) > a->n_slot) {
		int n = a->n_slot ? 2 * a->n_slot : 32, *ns, k;

		if (!(ns = calloc((size_t) n, sizeof(*ns)))) {
			errno = ENOMEM;
			return -1;
		}
		for (k = 0; k < a->n_app; k++)
			ag_slot_put(a, ns, n, k);
		free(a->slot);
		a->slot = ns;
		a->n_slot = n;
	}
	if (agora_grow((void **) &a->app, &a->app_cap, a->n_app + 1,
		       sizeof(*a->app)) < 0)
		return -1;
	i = a->n_app++;
	memset(&a->app[i], 0, sizeof(a->app[i]));
	snprintf(a->app[i].name, sizeof(a->app[i].name), "%s", key);
	ag_slot_put(a, a->slot, a->n_slot, i);
	return i;
}

int pol_ag_prune_apps(pol_agora_policy_t *a)
{
	unsigned char *keep;
	int *map, i, n = 0;

	if (a->n_app <
	    (a->prune_at > AG_PRUNE_MIN ? a->prune_at : AG_PRUNE_MIN))
		return 0;
	keep = calloc((size_t) a->n_app, 1);
	map = malloc((size_t) a->n_app * sizeof(*map));
	if (!keep || !map) {
		free(keep);
		free(map);
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < a->n_app; i++)
		keep[i] = a->app[i].active;
	pol_ag_est_mark_apps(a, keep);
	for (i = 0; i < a->n_app; i++) {
		map[i] = keep[i] ? n : -1;
		if (keep[i])
			a->app[n++] = a->app[i];
	}
	if (n < a->n_app) {
		a->n_app = n;
		memset(a->slot, 0, (size_t) a->n_slot * sizeof(*a->slot));
		for (i = 0; i < n; i++)
			ag_slot_put(a, a->slot, a->n_slot, i);
		pol_ag_est_remap(a, map);
		a->tmap_ok = false;
	}
	a->prune_at = 2 * n;
	free(keep);
	free(map);
	return 0;
}

/* Key of tenant index t: its name, or "t<t>" without one. */
void pol_ag_tenant_key(const pol_agora_policy_t *a, int t,
		       char key[POL_CREDIT_NAME_LEN])
{
	if (t >= 0 && t < a->n_tname)
		memcpy(key, a->tname[t], POL_CREDIT_NAME_LEN);
	else
		snprintf(key, POL_CREDIT_NAME_LEN, "t%d", t);
}

/*
 * Map tenant indices 0..n-1 of this pass to apps by name (tmap) and list
 * their distinct apps (papp) in tenant order.  Kept from the last pass
 * while the names and n stay the same.  0 or -1/ENOMEM.
 */
int pol_ag_map_tenants(pol_agora_policy_t *a, int n)
{
	char key[POL_CREDIT_NAME_LEN];
	int t, i, k;

	if (a->tmap_ok && a->n_tmap == n)
		return 0;
	a->tmap_ok = false;
	if (agora_grow((void **) &a->tmap, &a->tmap_cap, n, sizeof(*a->tmap)) <
		    0 ||
	    agora_grow((void **) &a->papp, &a->papp_cap, n, sizeof(*a->papp)) <
		    0)
		return -1;
	a->n_papp = 0;
	for (t = 0; t < n; t++) {
		pol_ag_tenant_key(a, t, key);
		if ((i = pol_ag_app_get(a, key)) < 0)
			return -1;
		a->tmap[t] = i;
		/* the ledger account: the adapter's map, else the app */
		if (t < a->n_tacct && a->tacct[t][0])
			memcpy(a->app[i].account, a->tacct[t],
			       POL_CREDIT_NAME_LEN);
		else
			memcpy(a->app[i].account, a->app[i].name,
			       POL_CREDIT_NAME_LEN);
		/* two tenants of one name are one app (names are few) */
		for (k = 0; k < a->n_papp && a->papp[k] != i; k++)
			;
		if (k == a->n_papp)
			a->papp[a->n_papp++] = i;
	}
	a->n_tmap = n;
	a->tmap_ok = true;
	return 0;
}
