/*
 * pol_backfill_fs.c - "backfill-fs": Slurm's priority/multifactor with the
 * classic fair-share factor, in front of the backfill of pol_backfill.c
 * (the same pass, only the priority order differs; easy=1 etc. apply).
 *
 * What is modelled (Slurm 22.05, src/plugins/priority/multifactor/
 * priority_multifactor.c):
 *  - usage: every running job adds GPUs x seconds to its tenant (the
 *    account; TRESBillingWeights=GRES/gpu=1).  Usage decays with
 *    PriorityDecayHalfLife: over dt seconds it is multiplied by
 *    d = (1 - 0.693 / halflife)^dt, and the usage of the interval is added
 *    decayed once, gpus x dt x d (_apply_decay(), _apply_new_usage():
 *    decay_factor = 1 - 0.693 / decay_hl, run_decay = run_delta *
 *    pow(decay_factor, run_delta)).  Slurm does this every
 *    PriorityCalcPeriod (5 min); here at every pass;
 *  - the fair-share factor of the classic algorithm (not Fair Tree) for
 *    accounts directly under root, one user each (then the user's
 *    effective usage and normalised shares are the account's,
 *    _set_usage_efctv()):
 *        usage_norm  = U_tenant / U_root          (0 while U_root = 0)
 *        shares_norm = shares_tenant / sum(shares of all tenants)
 *        F = 2^(-(usage_norm / shares_norm) / damp)
 *    (priority_p_calc_fs_factor(); damp = FairShareDampeningFactor = 1);
 *  - the age factor A = min(now - submit, max_age) / max_age;
 *  - priority = (uint32) (w_age * A + w_fs * F), jobs ordered by band
 *    (QOS tier), then priority, then submit time, then id, like
 *    sort_job_queue().
 * Left out: the job size, partition, QOS, association and TRES factors
 * (weight 0 here), Fair Tree and depth-oblivious variants, sub-accounts
 * and several users per account, PriorityUsageResetPeriod, and
 * PriorityFavorSmall.
 *
 * Parameters (besides those of backfill):
 *   halflife=604800  PriorityDecayHalfLife, default 7-0 (slurm.conf(5))
 *   max_age=604800   PriorityMaxAge, default 7-0 (slurm.conf(5))
 *   w_fs=10000       PriorityWeightFairshare; w_age=1000 PriorityWeightAge:
 *                    Slurm's defaults are 0 (no fair-share at all), these
 *                    are the example configuration of Slurm's
 *                    priority_multifactor.html
 *   damp=1           FairShareDampeningFactor
 *   shares=S0:S1:..  raw shares per tenant index (default: 1 each; a
 *                    tenant past the list gets 1)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pol_backfill.h"
#include "pol_baselines.h"

#define FS_MAX_SHARES 64

typedef struct fs_run {
	int64_t id;
	int tenant, gpus;
} fs_run_t;

typedef struct fs_state {
	pol_bf_t *bf;
	double halflife, max_age, w_fs, w_age, damp;
	double shares[FS_MAX_SHARES];
	int n_shares;
	double *usage; /* decayed GPU-seconds per tenant */
	int n_usage;
	int64_t last;
	bool seen;
	fs_run_t *run; /* jobs running at the end of the last pass */
	int n_run, run_cap;
	int64_t *prio, *ids;
	int prio_cap;
	double *fac; /* fs_factor() of tenants 0..n-1 in this pass */
	int fac_cap;
	const pol_snapshot_t *snap; /* during the order callback */
} fs_state_t;

static int fs_grow_usage(fs_state_t *s, int n)
{
	double *u;

	if (n <= s->n_usage)
		return 0;
	u = realloc(s->usage, (size_t) n * sizeof(*u));
	if (!u) {
		errno = ENOMEM;
		return -1;
	}
	memset(u + s->n_usage, 0, (size_t) (n - s->n_usage) * sizeof(*u));
	s->usage = u;
	s->n_usage = n;
	return 0;
}

static double fs_share(const fs_state_t *s, int t)
{
	return t < s->n_shares ? s->shares[t] : 1.0;
}

/* The sums over n tenants of the shares and of the usage. */
static void fs_sums(const fs_state_t *s, int n, double *sh, double *root)
{
	int i;

	*sh = *root = 0;
	for (i = 0; i < n; i++) {
		*sh += fs_share(s, i);
		if (i < s->n_usage)
			*root += s->usage[i];
	}
}

/* The classic fair-share factor of tenant t, given the sums of fs_sums. */
static double fs_factor_of(const fs_state_t *s, int t, double sh, double root)
{
	double un, sn;

	sn = sh > 0 ? fs_share(s, t) / sh : 0;
	if (sn <= 0)
		return 0;
	un = root > 0 && t < s->n_usage ? s->usage[t] / root : 0;
	return pow(2.0, -((un / sn) / s->damp));
}

/* The classic fair-share factor of tenant t (n tenants). */
static double fs_factor(const fs_state_t *s, int t, int n)
{
	double sh, root;

	fs_sums(s, n, &sh, &root);
	return fs_factor_of(s, t, sh, root);
}

/* Decay usage to now and add what ran since the last pass. */
static void fs_account(fs_state_t *s, int64_t now)
{
	double dt, d;
	int i;

	if (!s->seen || now <= s->last) {
		s->seen = true;
		if (now > s->last)
			s->last = now;
		return;
	}
	dt = (double) (now - s->last);
	d = pow(1.0 - 0.693 / s->halflife, dt);
	for (i = 0; i < s->n_usage; i++)
		s->usage[i] *= d;
	for (i = 0; i < s->n_run; i++)
		if (s->run[i].tenant >= 0 && s->run[i].tenant < s->n_usage)
			s->usage[s->run[i].tenant] += s->run[i].gpus * dt * d;
	s->last = now;
}

static int cmp_prio(const void *x, const void *y, void *arg)
{
	const fs_state_t *s = arg;
	int a = *(const int *) x, b = *(const int *) y;
	const pol_job_t *ja = &s->snap->pending[a], *jb = &s->snap->pending[b];

	if (ja->band != jb->band)
		return ja->band > jb->band ? -1 : 1;
	if (s->prio[a] != s->prio[b])
		return s->prio[a] > s->prio[b] ? -1 : 1;
	if (ja->submit != jb->submit)
		return ja->submit < jb->submit ? -1 : 1;
	return (ja->id > jb->id) - (ja->id < jb->id);
}

static int fs_order(void *arg, const pol_snapshot_t *snap, int64_t now,
		    int *idx)
{
	fs_state_t *s = arg;
	double sh, root;
	int i, n = snap->n_tenants;

	if (snap->n_pending > s->prio_cap) {
		int cap = snap->n_pending * 2;
		int64_t *p = realloc(s->prio, (size_t) cap * sizeof(*p));

		if (!p) {
			errno = ENOMEM;
			return -1;
		}
		s->prio = p;
		s->prio_cap = cap;
	}
	if (n > s->fac_cap) {
		double *f = realloc(s->fac, (size_t) n * sizeof(*f));

		if (!f) {
			errno = ENOMEM;
			return -1;
		}
		s->fac = f;
		s->fac_cap = n;
	}
	/* the sums once per pass, not once per job of a tenant past the
	 * first FS_MAX_SHARES (same order of addition: same factors) */
	fs_sums(s, n, &sh, &root);
	for (i = 0; i < n; i++)
		s->fac[i] = fs_factor_of(s, i, sh, root);
	for (i = 0; i < snap->n_pending; i++) {
		const pol_job_t *j = &snap->pending[i];
		double age = (double) (now - j->submit), fs, pr;

		if (age < 0)
			age = 0;
		if (age > s->max_age)
			age = s->max_age;
		fs = j->tenant >= 0 && j->tenant < n
			     ? s->fac[j->tenant]
			     : fs_factor(s, j->tenant,
					 n > j->tenant ? n : j->tenant + 1);
		pr = s->w_age * age / s->max_age + s->w_fs * fs;
		/* Slurm's priority is a uint32_t, the sum truncated */
		s->prio[i] = pr >= 4294967295.0 ? 4294967295 : (int64_t) pr;
		idx[i] = i;
	}
	s->snap = snap;
	if (snap->n_pending > 1)
		qsort_r(idx, (size_t) snap->n_pending, sizeof(*idx), cmp_prio,
			s);
	return 0;
}

static int cmp_id(const void *x, const void *y)
{
	int64_t a = *(const int64_t *) x, b = *(const int64_t *) y;

	return (a > b) - (a < b);
}

/* Remember who runs after this pass: the running jobs and those started. */
static int fs_remember(fs_state_t *s, const pol_snapshot_t *snap,
		       const pol_actions_t *out, int first)
{
	int i, n = 0, ns = 0, need = snap->n_running + out->n - first;

	if (need > s->run_cap) {
		fs_run_t *r = realloc(s->run, (size_t) need * sizeof(*r));
		int64_t *ids = realloc(s->ids, (size_t) need * sizeof(*ids));

		if (r)
			s->run = r;
		if (ids)
			s->ids = ids;
		if (!r || !ids) {
			errno = ENOMEM;
			return -1;
		}
		s->run_cap = need;
	}
	for (i = 0; i < snap->n_running; i++) {
		const pol_job_t *j = &snap->running[i];

		s->run[n++] = (fs_run_t){ j->id, j->tenant,
					  pol_alloc_gpus(&j->alloc) };
	}
	for (i = first; i < out->n; i++)
		if (out->v[i].type == POL_ACT_START)
			s->ids[ns++] = out->v[i].job_id;
	if (ns > 1)
		qsort(s->ids, (size_t) ns, sizeof(*s->ids), cmp_id);
	for (i = 0; ns && i < snap->n_pending; i++) {
		const pol_job_t *j = &snap->pending[i];

		if (bsearch(&j->id, s->ids, (size_t) ns, sizeof(*s->ids),
			    cmp_id))
			s->run[n++] = (fs_run_t){ j->id, j->tenant,
						  j->total_gpus };
	}
	s->n_run = n;
	return 0;
}

static void fs_destroy(void *state)
{
	fs_state_t *s = state;

	if (!s)
		return;
	pol_bf_destroy(s->bf);
	free(s->usage);
	free(s->run);
	free(s->ids);
	free(s->fac);
	free(s->prio);
	free(s);
}

static void *fs_create(const char *params, const pol_placer_t *placer,
		       agora_err_t *err)
{
	static const char *const keys[] = { "halflife", "max_age", "w_fs",
					    "w_age",    "damp",    "shares",
					    NULL };
	double v[] = { 604800, 604800, 10000, 1000, 1, 0 };
	fs_state_t *s = calloc(1, sizeof(*s));
	int i;

	if (!s) {
		errno = ENOMEM;
		return NULL;
	}
	s->bf = pol_bf_create("backfill-fs", params, keys, v, placer, err);
	if (!s->bf)
		goto fail;
	s->n_shares = pol_params_list("backfill-fs", params, "shares",
				      s->shares, FS_MAX_SHARES, err);
	if (s->n_shares < 0)
		goto fail;
	for (i = 0; i < s->n_shares; i++)
		if (s->shares[i] <= 0) {
			agora_err_set(err,
				      "policy backfill-fs: shares must be > 0");
			errno = EINVAL;
			goto fail;
		}
	if (v[0] <= 1 || v[1] <= 0 || v[2] < 0 || v[3] < 0 || v[4] <= 0) {
		agora_err_set(
			err,
			"policy backfill-fs: halflife must be > 1 s, max_age and damp > 0, weights >= 0");
		errno = EINVAL;
		goto fail;
	}
	s->halflife = v[0];
	s->max_age = v[1];
	s->w_fs = v[2];
	s->w_age = v[3];
	s->damp = v[4];
	pol_bf_set_order(s->bf, fs_order, s);
	return s;
fail:
	i = errno;
	fs_destroy(s);
	errno = i;
	return NULL;
}

static int fs_decide(void *state, const pol_snapshot_t *snap, int64_t now,
		     pol_actions_t *out)
{
	fs_state_t *s = state;
	int first = out->n;

	if (fs_grow_usage(s, snap->n_tenants))
		return -1;
	fs_account(s, now);
	if (pol_bf_decide(s->bf, snap, now, out))
		return -1;
	return fs_remember(s, snap, out, first);
}

const pol_policy_ops_t pol_backfill_fs_ops = {
	.name = "backfill-fs",
	.create = fs_create,
	.decide = fs_decide,
	.destroy = fs_destroy,
};

/* Exposed for the unit tests: F of tenant t with usage u[0..n). */
double pol_backfill_fs_factor(const double *u, const double *shares, int n,
			      int t, double damp)
{
	fs_state_t s;

	memset(&s, 0, sizeof(s));
	s.usage = (double *) u;
	s.n_usage = n;
	s.n_shares = n < FS_MAX_SHARES ? n : FS_MAX_SHARES;
	memcpy(s.shares, shares, (size_t) s.n_shares * sizeof(*shares));
	s.damp = damp;
	return fs_factor(&s, t, n);
}
