/*
 * pol_agora.c - the "agora-order" and "agora" policies (pol_agora.h):
 * construction, the API, the entry of a pass (pol_agora_policy_decide(),
 * which runs every step below it in order), agora-order and the registry
 * face.  The layers are in pol_agora_int.h.
 *
 * A pass of "agora":
 *  1. charge running jobs' GPU-seconds since the last pass to their
 *     accounts; read every tenant's credit; order pending jobs by
 *     (band, credit, submit, id); track the time-averaged contention;
 *  2. leases: forget those of ended jobs, give one to running jobs that
 *     have none (started by someone else, or before a restart), requeue
 *     the jobs whose grace ran out;
 *  3. start the auction winners of earlier passes that waited for GPUs;
 *  4. per pool: offer the free GPUs plus those of expired leases to the
 *     (1 - f) worst-rho apps that want GPUs (pol_themis.c), apply the
 *     result: kept leases are renewed for c_i * LeaseTime, won pending
 *     jobs start (or wait for a loser's grace), losers are requeued only
 *     as far as winners need their GPUs;
 *  5. leftovers: start pending jobs in credit order where they fit; the
 *     first one-node job of 2+ GPUs that does not fit reserves the node
 *     where it can start soonest (EASY on time limits, "drain"), and later
 *     leftovers use that node only if they end by then.
 * Free GPUs that a requeue releases are not reused in the same pass
 * (Slurm releases them asynchronously); the winner waits for them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pol_agora_int.h"
#include "pol_app.h"
#include "pol_ckpt.h"

/* Construction ------------------------------------------------------------ */

static pol_agora_policy_t *ag_new(bool auctions, const ag_params_t *p,
				  const char *cluster,
				  const pol_placer_t *placer, agora_err_t *err)
{
	/* same relative run times as the simulator (doc/sim.md) */
	static const double slow[POL_N_LEVELS] = { 1.00, 1.05, 1.10,
						   1.15, 1.25, 1.40 };
	const char *name = auctions ? "agora" : "agora-order";
	pol_agora_policy_t *a;

	if (!(p->half_life_s > 0) || !(p->period_s > 0) || !(p->quota >= 0) ||
	    p->default_limit <= 0 || !(p->f >= 0 && p->f < 1) ||
	    p->lease_s <= 0 || p->grace_s < 0 || p->min_lease_s <= 0 ||
	    p->max_opts < 1 || p->max_opts > 64 || (int) p->solver < 0 ||
	    p->solver > POL_PF_GREEDY ||
	    (p->app_model != AG_APP_MEAN && p->app_model != AG_APP_POOL) ||
	    (int) p->est_mode < 0 || p->est_mode > AG_EST_SERVICE ||
	    p->est_k < 1 || p->est_k > POL_EST_MAX_K || p->est_prior_s <= 0 ||
	    p->est_prior_s >= ((int64_t) 1 << 53) ||
	    p->ckpt_s < POL_CKPT_NEVER || p->ckpt_s >= ((int64_t) 1 << 40) ||
	    p->budget < 0 || !(p->max_loss >= 0 && p->max_loss <= 1) ||
	    p->drain < 0 || p->drain > 2 || p->max_run < 0 ||
	    p->keep_long < 0 || p->every < 0 ||
	    p->every >= ((int64_t) 1 << 40) || p->est_acct < 0 ||
	    p->est_acct > 2) {
		agora_err_set(
			err,
			"policy %s: half_life, period, default_limit, lease, min_lease and est_prior must be > 0, quota and grace >= 0, f in [0,1), options in 1..64, solver 0..2, app 0..1, est_k 1..16, ckpt >= -2, budget an integer >= 0, max_loss in [0,1], drain 0..2, est_acct 0..2, max_run, keep_long and every >= 0",
			name);
		errno = EINVAL;
		return NULL;
	}
	if (!(a = calloc(1, sizeof(*a))))
		goto nomem;
	a->auctions = auctions;
	a->p = *p;
	a->placer = placer ? placer : &pol_placer_stock;
	memcpy(a->slow, slow, sizeof(slow));
	a->ledger = pol_credit_create(cluster ? cluster : "local",
				      p->half_life_s, p->period_s, p->quota);
	if (!a->ledger) {
		agora_err_set(err, "policy %s: bad ledger parameters", name);
		pol_agora_policy_destroy(&a);
		errno = EINVAL;
		return NULL;
	}
	if (auctions && !(a->leases = pol_lease_table_create()))
		goto nomem;
	if (pol_ag_est_setup(a) < 0)
		goto nomem;
	if (!auctions || p->left_bf) {
		char bp[96];

		snprintf(bp, sizeof(bp), "window=%.0f,max_job_test=%.0f",
			 p->window, p->max_job_test);
		if (!(a->bf = pol_backfill_ops.create(bp, a->placer, err))) {
			int e = errno;

			pol_agora_policy_destroy(&a);
			errno = e;
			return NULL;
		}
	}
	return a;
nomem:
	agora_err_set(err, "policy %s: out of memory", name);
	pol_agora_policy_destroy(&a);
	errno = ENOMEM;
	return NULL;
}

static void params_default(ag_params_t *p)
{
	memset(p, 0, sizeof(*p));
	p->half_life_s = 7 * 86400.0;
	p->period_s = 7 * 86400.0;
	p->quota = 1000;
	p->default_limit = 3600;
	p->window = 86400;
	p->max_job_test = 500;
	p->f = 0.8;
	p->lease_s = 600;
	p->grace_s = 60;
	p->min_lease_s = 60;
	p->max_opts = 8;
	p->solver = POL_PF_AUTO;
	p->app_model = AG_APP_MEAN;
	p->align = true;
	p->drain = 2;
	p->small_victims = true;
	/* a bid passes over a gang the offer cannot hold: not the default,
	 * it moves the 2017-11-20 cells both ways (doc/evaluation.md,
	 * "Robustness": the per-app regret) */
	p->bid_skip = false;
	/* chosen on the first week of the Philly window (doc/evaluation.md,
	 * "Estimates instead of limits") */
	p->est_mode = AG_EST_HIST;
	p->est_k = 2;
	p->est_prior_s = 4 * 3600;
	p->est_learn = true;
	/* preemption under checkpoints: chosen on all three Philly windows,
	 * heavy and moderate, three limit regimes at once (doc/evaluation.md,
	 * "Three windows") */
	p->ckpt_s = POL_CKPT_UNKNOWN;
	p->ckpt_lease = true;
	p->budget = 1;
	p->max_loss = 0;
	p->max_run = 12 * 3600;
	/* the interval the defaults above were chosen at */
	p->every = 1800;
}

pol_agora_policy_t *pol_agora_policy_create_conf(const agora_conf_t *conf,
						 bool auctions,
						 const char *cluster,
						 const pol_placer_t *placer,
						 agora_err_t *err)
{
	ag_params_t p;
	pol_agora_policy_t *a;
	size_t i;

	if (!conf) {
		errno = EINVAL;
		return NULL;
	}
	params_default(&p);
	/* the adapter records completed jobs from Slurm's job records */
	p.est_learn = false;
	p.half_life_s = conf->credit_half_life_h * 3600.0;
	p.period_s = conf->credit_period_h * 3600.0;
	p.quota = conf->default_quota;
	p.f = conf->fairness_knob;
	p.lease_s = conf->lease_s;
	p.grace_s = conf->grace_s;
	p.budget = conf->preempt_budget;
	p.every = conf->preempt_every_s;
	p.unsaved = conf->preempt_unsaved;
	p.drain_rho = conf->reserve_worst_app;
	if (p.min_lease_s > p.lease_s)
		p.min_lease_s = p.lease_s;
	if (!(a = ag_new(auctions, &p, cluster, placer, err)))
		return NULL;
	for (i = 0; i < conf->n_quotas; i++) {
		if (pol_credit_set_quota(a->ledger, conf->quotas[i].account,
					 conf->quotas[i].gpu_hours) < 0) {
			int e = errno;

			agora_err_set(err, "AccountQuota=%s: %s",
				      conf->quotas[i].account, strerror(e));
			pol_agora_policy_destroy(&a);
			errno = e;
			return NULL;
		}
	}
	return a;
}

void pol_agora_policy_destroy(pol_agora_policy_t **ap)
{
	pol_agora_policy_t *a;

	if (!ap || !*ap)
		return;
	a = *ap;
	pol_credit_destroy(&a->ledger);
	pol_lease_table_destroy(&a->leases);
	pol_est_destroy(&a->est);
	pol_ag_est_free(&a->estx);
	if (a->bf)
		pol_backfill_ops.destroy(a->bf);
	free(a->brun);
	free(a->bidx);
	pol_actions_free(&a->bfout);
	pol_work_free(&a->w);
	pol_freemap_destroy(&a->offer);
	pol_freemap_destroy(&a->tent);
	free(a->app);
	free(a->slot);
	free(a->tname);
	free(a->tacct);
	free(a->tmap);
	free(a->papp);
	free(a->left);
	free(a->keys);
	free(a->keys_tmp);
	free(a->reord);
	free(a->tpend);
	free(a->lord);
	free(a->arho);
	free(a->pflag);
	free(a->rflag);
	free(a->resv);
	free(a->dnodes);
	free(a->fpend);
	free(a->frun);
	free(a->claimed);
	free(a);
	*ap = NULL;
}

/* Key in[0..n) into a new table for *out (n_out): NULL names become
 * POL_APP_NONE, or stay empty with keep_null.  0, -1/EINVAL or ENOMEM
 * (*out unchanged). */
static int set_keys(pol_agora_policy_t *a, const char *const *in, int n,
		    bool keep_null, char (**out)[POL_CREDIT_NAME_LEN],
		    int *n_out)
{
	char(*nn)[POL_CREDIT_NAME_LEN] = NULL;
	int i;

	if (!a || n < 0 || (n > 0 && !in)) {
		errno = EINVAL;
		return -1;
	}
	if (n && !(nn = calloc((size_t) n, sizeof(*nn)))) {
		errno = ENOMEM;
		return -1;
	}
	for (i = 0; i < n; i++)
		if (in[i] || !keep_null)
			pol_app_key(in[i], nn[i]);
	free(*out);
	*out = nn;
	*n_out = n;
	a->tmap_ok = false;
	return 0;
}

int pol_agora_policy_set_tenant_names(pol_agora_policy_t *a,
				      const char *const *names, int n)
{
	return set_keys(a, names, n, false, a ? &a->tname : NULL,
			a ? &a->n_tname : NULL);
}

int pol_agora_policy_set_tenant_accounts(pol_agora_policy_t *a,
					 const char *const *accounts, int n)
{
	return set_keys(a, accounts, n, true, a ? &a->tacct : NULL,
			a ? &a->n_tacct : NULL);
}

int pol_agora_policy_carry(pol_agora_policy_t *dst, pol_agora_policy_t *src)
{
	pol_lease_table_t *lt;

	if (!dst || !src || dst == src) {
		errno = EINVAL;
		return -1;
	}
	if (dst->auctions && src->auctions) {
		lt = dst->leases;
		dst->leases = src->leases;
		src->leases = lt;
		free(dst->resv);
		dst->resv = src->resv;
		dst->n_resv = src->n_resv;
		dst->resv_cap = src->resv_cap;
		src->resv = NULL;
		src->n_resv = 0;
		src->resv_cap = 0;
	}
	dst->cont = src->cont;
	dst->charged = src->charged;
	dst->last_charge = src->last_charge;
	/* the apps and the tenant names move; dst's (unused) go */
	free(dst->app);
	free(dst->slot);
	free(dst->tname);
	free(dst->tacct);
	dst->app = src->app;
	dst->n_app = src->n_app;
	dst->app_cap = src->app_cap;
	dst->slot = src->slot;
	dst->n_slot = src->n_slot;
	dst->tname = src->tname;
	dst->n_tname = src->n_tname;
	dst->tacct = src->tacct;
	dst->n_tacct = src->n_tacct;
	dst->tmap_ok = src->tmap_ok = false;
	src->app = NULL;
	src->slot = NULL;
	src->tname = NULL;
	src->tacct = NULL;
	src->n_app = src->n_slot = src->n_tname = src->n_tacct = 0;
	src->app_cap = 0;
	/* the run-time history (last: a failure loses only it) */
	if (dst->est && src->est && pol_est_merge(dst->est, src->est) < 0)
		return -1;
	return 0;
}

int pol_agora_policy_restore_lease(pol_agora_policy_t *a, const pol_lease_t *l)
{
	if (!a || !l || !a->leases || l->end <= l->start || l->gpus < 0 ||
	    (l->state != POL_LEASE_ACTIVE && l->state != POL_LEASE_GRACE)) {
		errno = EINVAL;
		return -1;
	}
	if (pol_lease_grant(a->leases, l->job_id, l->gpus, l->start,
			    l->end - l->start) < 0)
		return -1;
	if (l->state == POL_LEASE_GRACE &&
	    pol_lease_settle(a->leases, l->job_id, false, l->requeue_at,
			     l->end - l->start, 0) < 0)
		return -1;
	return 0;
}

static void app_values(const ag_tenant_t *t, double *rho, double *credit)
{
	if (rho)
		*rho = t->n_jobs ? t->rho_sum / t->n_jobs : 1.0;
	if (credit)
		*credit = t->credit;
}

int pol_agora_policy_tenant(const pol_agora_policy_t *a, int tenant,
			    double *rho, double *credit)
{
	char key[POL_CREDIT_NAME_LEN];
	int i;

	if (!a || tenant < 0 || (tenant >= a->n_tname && tenant >= a->n_tmap)) {
		errno = ENOENT;
		return -1;
	}
	pol_ag_tenant_key(a, tenant, key);
	if ((i = pol_ag_app_find(a, key)) < 0) {
		errno = ENOENT;
		return -1;
	}
	app_values(&a->app[i], rho, credit);
	return 0;
}

int pol_agora_policy_app(const pol_agora_policy_t *a, const char *name,
			 double *rho, double *credit)
{
	char key[POL_CREDIT_NAME_LEN];
	int i;

	if (!a) {
		errno = ENOENT;
		return -1;
	}
	pol_app_key(name, key);
	if ((i = pol_ag_app_find(a, key)) < 0) {
		errno = ENOENT;
		return -1;
	}
	app_values(&a->app[i], rho, credit);
	return 0;
}

pol_credit_t *pol_agora_policy_ledger(pol_agora_policy_t *a)
{
	return a ? a->ledger : NULL;
}

const pol_lease_table_t *pol_agora_policy_leases(const pol_agora_policy_t *a)
{
	return a ? a->leases : NULL;
}

/* agora-order ---------------------------------------------------------- */

static int order_decide(pol_agora_policy_t *a, const pol_snapshot_t *snap,
			int64_t now, pol_actions_t *out)
{
	pol_snapshot_t s2 = *snap;
	int i, n = snap->n_pending;

	if (agora_grow((void **) &a->reord, &a->reord_cap, n,
		       sizeof(*a->reord)) < 0)
		return -1;
	/* backfill walks band desc, priority desc: make priority the rank */
	for (i = 0; i < n; i++) {
		a->reord[i] = snap->pending[a->keys[i].index];
		a->reord[i].priority = (int64_t) n - i;
	}
	s2.pending = a->reord;
	return pol_backfill_ops.decide(a->bf, &s2, now, out);
}

/*
 * The one entry of a pass: filter (pol_agora_check.c), prepare
 * (pol_agora_prep.c: charge, credits, estimates, the credit order), then
 * the order pass above or the auction pass (pol_agora_auction.c and its
 * pools, pol_agora_pool.c).  No step calls back up.
 */
int pol_agora_policy_decide(pol_agora_policy_t *a, const pol_snapshot_t *snap,
			    int64_t now, pol_actions_t *out)
{
	pol_snapshot_t use;

	if (!a || !snap || !snap->cluster || !out || snap->n_pending < 0 ||
	    snap->n_running < 0 || snap->n_tenants < 0 ||
	    (snap->n_pending > 0 && !snap->pending) ||
	    (snap->n_running > 0 && !snap->running) || !pol_ag_time_ok(now)) {
		errno = EINVAL;
		return -1;
	}
	if (pol_ag_filter_jobs(a, snap, &use) < 0 ||
	    pol_ag_prepare(a, &use, now) < 0)
		return -1;
	return a->auctions ? pol_ag_auction_decide(a, &use, now, out)
			   : order_decide(a, &use, now, out);
}

/* The registry's face ------------------------------------------------ */

/*
 * est=limit|hist|service (a word, which pol_params_parse() would refuse):
 * into *mode, and params less that item into rest.  0, or -1/EINVAL.
 */
static int est_param(const char *params, char *rest, size_t len,
		     ag_est_mode_t *mode, agora_err_t *err)
{
	static const char *const names[] = { "limit", "hist", "service" };
	const char *p = params, *item, *end;
	size_t n = 0, il, i;

	if (!params)
		return 0;
	if (strlen(params) >= len) {
		agora_err_set(err, "policy agora: parameters too long");
		errno = EINVAL;
		return -1;
	}
	rest[0] = '\0';
	for (; *p; p = *end ? end + 1 : end) {
		while (*p == ' ')
			p++;
		item = p;
		end = strchr(p, ',');
		if (!end)
			end = p + strlen(p);
		il = (size_t) (end - item);
		if (il > 4 && !strncmp(item, "est=", 4)) {
			for (i = 0; i < 3; i++)
				if (il - 4 == strlen(names[i]) &&
				    !strncmp(item + 4, names[i], il - 4))
					break;
			if (i == 3) {
				agora_err_set(
					err,
					"policy agora: est: '%.*s' is not limit, hist or service",
					(int) (il - 4), item + 4);
				errno = EINVAL;
				return -1;
			}
			*mode = (ag_est_mode_t) i;
			continue;
		}
		if (n)
			rest[n++] = ',';
		memcpy(rest + n, item, il);
		n += il;
		rest[n] = '\0';
	}
	return 0;
}

/* An integer parameter; one beyond int becomes INT_MIN, which every
 * check refuses. */
static int param_i(double v)
{
	return v > INT_MIN && v < INT_MAX ? (int) v : INT_MIN;
}

static void *create_common(bool auctions, const char *params,
			   const pol_placer_t *placer, agora_err_t *err)
{
	static const char *const keys_order[] = { "half_life", "period",
						  "quota",     "default_limit",
						  "window",    "max_job_test",
						  NULL };
	static const char *const keys_agora[] = {
		"half_life", "period",    "quota",      "default_limit",
		"f",         "lease",     "grace",      "min_lease",
		"options",   "solver",    "app",        "align",
		"drain",     "victims",   "est_k",      "est_prior",
		"est_order", "ckpt",      "ckpt_lease", "budget",
		"max_loss",  "max_run",   "drain_rho",  "est_acct",
		"bid_skip",  "left_rho",  "left_bf",    "lose_young",
		"left_back", "keep_long", "every",      "unsaved",
		NULL
	};
	ag_params_t p;
	double v[32];
	char rest[256];

	params_default(&p);
	if (!auctions)
		p.est_mode = AG_EST_LIMIT;
	else if (est_param(params, rest, sizeof(rest), &p.est_mode, err) < 0)
		return NULL;
	else if (params)
		params = rest;
	v[0] = p.half_life_s;
	v[1] = p.period_s;
	v[2] = p.quota;
	v[3] = (double) p.default_limit;
	if (!auctions) {
		v[4] = p.window;
		v[5] = p.max_job_test;
		if (pol_params_parse("agora-order", params, keys_order, v,
				     err) < 0)
			return NULL;
		p.window = v[4];
		p.max_job_test = v[5];
	} else {
		v[4] = p.f;
		v[5] = (double) p.lease_s;
		v[6] = (double) p.grace_s;
		v[7] = (double) p.min_lease_s;
		v[8] = p.max_opts;
		v[9] = p.solver;
		v[10] = p.app_model;
		v[11] = p.align;
		v[12] = p.drain;
		v[13] = p.small_victims;
		v[14] = p.est_k;
		v[15] = (double) p.est_prior_s;
		v[16] = p.est_order;
		v[17] = (double) p.ckpt_s;
		v[18] = p.ckpt_lease;
		v[19] = p.budget;
		v[20] = p.max_loss;
		v[21] = (double) p.max_run;
		v[22] = p.drain_rho;
		v[23] = p.est_acct;
		v[24] = p.bid_skip;
		v[25] = p.left_rho;
		v[26] = p.left_bf;
		v[27] = p.lose_young;
		v[28] = p.left_back;
		v[29] = (double) p.keep_long;
		v[30] = (double) p.every;
		v[31] = p.unsaved;
		if (pol_params_parse("agora", params, keys_agora, v, err) < 0)
			return NULL;
		p.f = v[4];
		p.lease_s = (int64_t) v[5];
		p.grace_s = (int64_t) v[6];
		p.min_lease_s = (int64_t) v[7];
		p.max_opts = param_i(v[8]);
		p.solver = (pol_pf_solver_t) param_i(v[9]);
		if (v[9] != floor(v[9]))
			p.solver = (pol_pf_solver_t) -1;
		p.app_model = v[10] == floor(v[10])
				      ? (ag_app_model_t) (int) v[10]
				      : (ag_app_model_t) -1;
		p.align = v[11] != 0;
		p.drain = v[12] == floor(v[12]) && v[12] >= 0 && v[12] <= 2
				  ? (int) v[12]
				  : -1;
		p.small_victims = v[13] != 0;
		p.est_k = v[14] == floor(v[14]) && v[14] >= 1 && v[14] <= 64
				  ? (int) v[14]
				  : -1;
		p.est_prior_s = (int64_t) v[15];
		p.est_order = v[16] != 0;
		p.ckpt_s = (int64_t) v[17];
		p.ckpt_lease = v[18] != 0;
		p.budget = v[19] == floor(v[19]) && v[19] >= 0 && v[19] < 1e6
				   ? (int) v[19]
				   : -1;
		p.max_loss = v[20];
		p.max_run = (int64_t) v[21];
		p.drain_rho = v[22] != 0;
		p.est_acct = v[23] == floor(v[23]) && v[23] >= 0 && v[23] <= 2
				     ? (int) v[23]
				     : -1;
		p.bid_skip = v[24] != 0;
		p.left_rho = v[25] != 0;
		p.left_bf = v[26] != 0;
		p.lose_young = v[27] != 0;
		p.left_back = v[28] != 0;
		p.keep_long = (int64_t) v[29];
		p.every = (int64_t) v[30];
		p.unsaved = v[31] != 0;
	}
	p.half_life_s = v[0];
	p.period_s = v[1];
	p.quota = v[2];
	p.default_limit = (int64_t) v[3];
	return ag_new(auctions, &p, "sim", placer, err);
}

static void *agora_create(const char *params, const struct pol_placer *placer,
			  struct agora_err *err)
{
	return create_common(true, params, placer, err);
}

static void *order_create(const char *params, const struct pol_placer *placer,
			  struct agora_err *err)
{
	return create_common(false, params, placer, err);
}

static int ops_decide(void *state, const pol_snapshot_t *snap, int64_t now,
		      pol_actions_t *out)
{
	return pol_agora_policy_decide(state, snap, now, out);
}

/* the registry face of set_tenant_names() + set_tenant_accounts(): the
 * same two calls site_factor/agora makes for AppDefinition=array/burst */
static int ops_set_apps(void *state, const char *const *names,
			const char *const *accounts, int n)
{
	pol_agora_policy_t *a = state;

	if (pol_agora_policy_set_tenant_names(a, names, n) < 0)
		return -1;
	if (accounts)
		return pol_agora_policy_set_tenant_accounts(a, accounts, n);
	return pol_agora_policy_set_tenant_accounts(a, NULL, 0);
}

static void ops_destroy(void *state)
{
	pol_agora_policy_t *a = state;

	pol_agora_policy_destroy(&a);
}

const pol_policy_ops_t pol_agora_ops = {
	.name = "agora",
	.create = agora_create,
	.decide = ops_decide,
	.destroy = ops_destroy,
	.set_apps = ops_set_apps,
};

const pol_policy_ops_t pol_agora_order_ops = {
	.name = "agora-order",
	.create = order_create,
	.decide = ops_decide,
	.destroy = ops_destroy,
	.set_apps = ops_set_apps,
};
