/*
 * agora_policy.c - site_factor/agora's policy state: the "agora" policy
 * object and the node types and placer it borrows, the credit ledger's
 * state file, and the view file (agora_view.json) that slurmctld/agora and
 * agoractl show.  Callers hold agora_state_lock (agora_sched.h).
 */
#include "config.h"
#include "agora_compat.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

#include "slurm/slurm.h"
#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/slurmctld.h"

#include "agora_file.h"
#include "agora_gres.h"
#include "agora_hold.h"
#include "agora_sched.h"
#include "agora_view.h"
#include "pol_agora.h"
#include "pol_app_index.h"
#include "pol_estimate.h"
#include "pol_place.h"
#include "topo_model.h"

/* The policy and its state across passes (leases, contention, ledger). */
pol_agora_policy_t *agora_policy = NULL;
char *agora_state_dir = NULL;
char *agora_cluster_name = NULL;

extern void agora_conf_strings_copy(void)
{
	if (xstrcmp(agora_state_dir, slurm_conf.state_save_location)) {
		xfree(agora_state_dir);
		agora_state_dir = xstrdup(slurm_conf.state_save_location);
	}
	if (xstrcmp(agora_cluster_name, slurm_conf.cluster_name)) {
		xfree(agora_cluster_name);
		agora_cluster_name = xstrdup(slurm_conf.cluster_name);
	}
}
char **agora_tenant_names = NULL; /* names last given to the policy */
int agora_n_tenant_names = 0;

static char *state_file(void)
{
	char *path = NULL;

	xstrfmtcat(path, "%s/%s", agora_state_dir, AGORA_CREDIT_FILE);
	return path;
}

/* The run-time history of the auction's estimates (pol_estimate.h). */
#define AGORA_ESTIMATES_FILE "agora_estimates.txt"
#define AGORA_ESTIMATES_MAX  ((size_t) 64 << 20)
#define AGORA_ESTIMATES_SEED "agora_estimates.seed"

static char *estimates_file(void)
{
	char *path = NULL;

	xstrfmtcat(path, "%s/%s", agora_state_dir, AGORA_ESTIMATES_FILE);
	return path;
}

/* Save the run-time history beside the ledger (same atomic write: mode
 * 0600, fsynced, .prev kept).  Caller holds agora_state_lock. */
static void estimates_save(void)
{
	pol_est_t *est = pol_agora_policy_estimates(agora_policy);
	agora_err_t err = { { 0 } };
	char *path, *text;

	if (!est)
		return;
	if (!(text = pol_est_save(est))) {
		error("site_factor/agora: cannot save run-time history: out of memory");
		return;
	}
	path = estimates_file();
	if (agora_file_write_atomic(path, text, strlen(text), &err))
		error("site_factor/agora: cannot save run-time history: %s",
		      err.text);
	free(text); /* core memory: malloc'ed by pol_est_save */
	xfree(path);
}

/*
 * Load the saved run-time history into a new policy (start-up).  A file
 * that cannot be read or parsed is logged with its file, line and field,
 * moved aside (.bad.<time>, never deleted) and the history starts empty.
 */
static void estimates_load(pol_agora_policy_t *np, time_t now)
{
	pol_est_t *est = pol_agora_policy_estimates(np);
	agora_err_t err = { { 0 } };
	char *path, *buf = NULL, *aside = NULL;
	size_t len;

	if (!est)
		return;
	path = estimates_file();
	if (access(path, F_OK)) {
		xfree(path);
		return; /* nothing recorded yet */
	}
	if (agora_file_read(path, AGORA_ESTIMATES_MAX, &buf, &len, &err) < 0 ||
	    pol_est_load(est, buf, path, &err) < 0) {
		xstrfmtcat(aside, "%s.bad.%ld", path, (long) now);
		(void) rename(path, aside);
		error("site_factor/agora: run-time history unreadable (%s); moved to %s, starting with no history",
		      err.text, aside);
		xfree(aside);
	} else {
		info("site_factor/agora: run-time history recovered from %s (%d completed jobs)",
		     path, pol_est_samples(est));
	}
	free(buf); /* core memory: malloc'ed by agora_file_read */
	xfree(path);
}

/*
 * Merge a seed of the run-time history into np's, once: completed jobs
 * from slurmdbd, written by 'agoractl estimates seed' as
 * StateSaveLocation/agora_estimates.seed.  The file is then renamed
 * .merged.<time> (kept for the record), or .bad.<time> if it cannot be
 * read or parsed (logged with file, line and field).  At start-up and at
 * each reconfigure; merging is idempotent, so a seed that overlaps the
 * history adds nothing twice.
 */
static void estimates_seed(pol_agora_policy_t *np, time_t now)
{
	pol_est_t *est = pol_agora_policy_estimates(np), *seed = NULL;
	agora_err_t err = { { 0 } };
	char *path = NULL, *buf = NULL, *done = NULL;
	size_t len;
	int before;

	if (!est)
		return;
	xstrfmtcat(path, "%s/%s", agora_state_dir, AGORA_ESTIMATES_SEED);
	if (access(path, F_OK)) {
		xfree(path);
		return;
	}
	before = pol_est_samples(est);
	if (!(seed = pol_est_create(pol_est_params(est)))) {
		error("site_factor/agora: %s not merged: out of memory", path);
	} else if (agora_file_read(path, AGORA_ESTIMATES_MAX, &buf, &len,
				   &err) < 0 ||
		   pol_est_load(seed, buf, path, &err) < 0) {
		xstrfmtcat(done, "%s.bad.%ld", path, (long) now);
		(void) rename(path, done);
		error("site_factor/agora: run-time seed unreadable (%s); moved to %s",
		      err.text, done);
	} else if (pol_est_merge(est, seed) < 0) {
		error("site_factor/agora: %s not merged: %m", path);
	} else {
		xstrfmtcat(done, "%s.merged.%ld", path, (long) now);
		(void) rename(path, done);
		info("site_factor/agora: run-time history seeded from %s: %d completed jobs in it, %d new (now %d); the file is now %s",
		     path, pol_est_samples(seed), pol_est_samples(est) - before,
		     pol_est_samples(est), done);
	}
	pol_est_destroy(&seed);
	free(buf); /* core memory: malloc'ed by agora_file_read */
	xfree(done);
	xfree(path);
}

/* Save the credit ledger (this plugin owns it; the federation helper
 * reads it) and the run-time history.  Caller holds agora_state_lock. */
extern void agora_ledger_save(void)
{
	char *path;
	agora_err_t err = { { 0 } };

	if (!agora_policy)
		return;
	path = state_file();
	/* not under slurmctld's state-save lock (lock_state_files): these
	 * files are Agora's own, each written to a temporary file, fsynced
	 * and renamed, and agora_state_lock orders Agora's writers, so
	 * slurmctld's own state saves never wait for Agora's fsyncs */
	if (pol_credit_save_file(pol_agora_policy_ledger(agora_policy), path,
				 &err))
		error("site_factor/agora: cannot save credit state: %s",
		      err.text);
	estimates_save();
	xfree(path);
}

/*
 * Write what the last pass decided to StateSaveLocation/agora_view.json
 * (common/base/agora_view.c owns the format; written with
 * agora_file_write_atomic: mode 0600, fsynced, .prev kept), for
 * slurmctld/agora ("scontrol show config"), agoractl and the lease restore
 * after a restart.  Per app: credit, quota and decayed usage (GPU-hours),
 * rho; per lease: job, GPUs, start, end, state.  Caller holds
 * agora_state_lock.
 */
extern void agora_view_write(const agora_snapshot_t *snap, time_t now,
			     uint64_t pass_count)
{
	pol_credit_t *l = pol_agora_policy_ledger(agora_policy);
	const pol_lease_table_t *lt = pol_agora_policy_leases(agora_policy);
	size_t n_ledger = l ? pol_credit_count(l) : 0, i;
	int t, k, n_leases = lt ? pol_lease_count(lt) : 0;
	agora_view_t v;
	agora_err_t err = { { 0 } };
	char *path = NULL;
	pol_app_index_t *shown;

	memset(&v, 0, sizeof(v));
	v.time = now;
	v.pass = (int64_t) pass_count;
	strlcpy(v.cluster, agora_cluster_name ? agora_cluster_name : "",
		sizeof(v.cluster));
	v.apps = xcalloc(n_ledger + 2 * snap->n_tenants + 1, sizeof(*v.apps));
	/* names shown so far (NULL on ENOMEM: rows may then repeat) */
	shown = pol_app_index_create();
	/* every account the ledger knows, plus every app with jobs now and
	 * its account (AppDefinition=name_prefix/array/burst: the ledger
	 * charges it at the next pass) */
	for (i = 0; i < n_ledger; i++) {
		const char *name = pol_credit_account(l, i);
		agora_view_app_t *a = &v.apps[v.n_apps++];
		double rho;

		strlcpy(a->name, name, sizeof(a->name));
		a->quota = pol_credit_quota(l, name);
		a->usage = pol_credit_usage(l, name, now);
		a->credit = pol_credit_get(l, name, now);
		a->has_rho = !pol_agora_policy_app(agora_policy, name, &rho,
						   NULL);
		a->rho = a->has_rho ? rho : 0;
		if (shown)
			(void) pol_app_index_put(shown, name, 1);
	}
	for (t = 0; t < snap->n_tenants; t++) {
		const char *acct = snap->accounts[t];
		agora_view_app_t *a;
		double rho = 1, credit = 0;

		if (acct && l &&
		    !(shown && !pol_app_index_get(shown, acct, NULL))) {
			a = &v.apps[v.n_apps++];
			strlcpy(a->name, acct, sizeof(a->name));
			a->quota = pol_credit_quota(l, acct);
			a->usage = pol_credit_usage(l, acct, now);
			a->credit = pol_credit_get(l, acct, now);
			if (shown)
				(void) pol_app_index_put(shown, acct, 1);
		}
		if (shown && !pol_app_index_get(shown, snap->tenants[t], NULL))
			continue;
		(void) pol_agora_policy_tenant(agora_policy, t, &rho, &credit);
		a = &v.apps[v.n_apps++];
		strlcpy(a->name, snap->tenants[t], sizeof(a->name));
		a->quota = l ? pol_credit_quota(l,
						acct ? acct : snap->tenants[t])
			     : 0;
		a->credit = credit;
		a->rho = rho;
		a->has_rho = true;
		if (shown)
			(void) pol_app_index_put(shown, snap->tenants[t], 1);
	}
	pol_app_index_destroy(&shown);
	v.leases = xcalloc(n_leases + 1, sizeof(*v.leases));
	for (k = 0; k < n_leases; k++) {
		const pol_lease_t *ls = pol_lease_at(lt, k);
		agora_view_lease_t *o = &v.leases[v.n_leases++];

		o->job = ls->job_id;
		o->gpus = ls->gpus;
		o->start = ls->start;
		o->end = ls->end;
		o->grace = ls->state == POL_LEASE_GRACE;
		o->requeue_at = o->grace ? ls->requeue_at : 0;
	}
	xstrfmtcat(path, "%s/%s", agora_state_dir, AGORA_VIEW_FILE);
	/* outside slurmctld's state-save lock, as agora_ledger_save */
	if (agora_view_save(path, &v, &err))
		error("site_factor/agora: cannot write the view: %s", err.text);
	xfree(path);
	xfree(v.apps);
	xfree(v.leases);
}

/* Node types and the placer the policy borrows (see agora_types_t). */
agora_types_t agora_types;
static topo_model_t tmodel;
static pol_placer_t placer_obj; /* the one agora_policy borrows */

static void types_free(void)
{
	free(agora_types.types);
	agora_types.types = NULL;
	agora_types.n_types = agora_types.n_model = 0;
	agora_types.model = NULL;
	topo_model_free(&tmodel);
}

/*
 * Load TopologyModel (if set) and build the types: the model's, then one
 * uniform type per GPU count of the nodes no model type covers.  Reads
 * the node table: callers hold a node lock or run where slurmctld does
 * (init, reconfigure).  A bad model is logged and ignored (uniform types).
 */
static void types_build(void)
{
	node_record_t *node_ptr;
	agora_err_t err = { { 0 } };
	int i, k;
	size_t cap;

	types_free();
	if (agora_conf.topology_model) {
		if (topo_model_load(agora_conf.topology_model, &tmodel, &err))
			error("site_factor/agora: TopologyModel ignored, every node is one NVLink island: %s",
			      err.text);
		else
			agora_types.model = &tmodel;
	}
	agora_types.n_model = agora_types.model ? tmodel.n_types : 0;
	/* malloc'ed, not xmalloc'ed: topo_model_node_type() grows it */
	cap = (size_t) agora_types.n_model + 4;
	agora_types.types = calloc(cap, sizeof(pol_node_type_t));
	if (!agora_types.types) {
		error("site_factor/agora: no memory for node types");
		return;
	}
	for (k = 0; k < agora_types.n_model; k++)
		agora_types.types[k] = tmodel.types[k].type;
	agora_types.n_types = agora_types.n_model;
	for (i = 0; (node_ptr = next_node(&i)); i++) {
		int g = agora_node_gpus(node_ptr, NULL);
		bool mismatch;

		/* the node-type rule shared with the select wrapper */
		if (topo_model_node_type(agora_types.model, &agora_types.types,
					 &agora_types.n_types, &cap,
					 node_ptr->name, g, &mismatch) < 0) {
			error("site_factor/agora: no memory for node types");
			return;
		}
		if (mismatch)
			error("site_factor/agora: node %s has %d GPUs but TopologyModel says otherwise; using a uniform type",
			      node_ptr->name, g);
	}
}

/*
 * After a restart, put back the leases the last view recorded, so a
 * restart neither extends nor cuts a job's lease (jobs that ended since
 * are dropped by the policy's next pass).  A missing or bad view only
 * means fresh leases.
 */
static void restore_leases(pol_agora_policy_t *np)
{
	char *path = NULL;
	agora_view_t v;
	agora_err_t err = { { 0 } };
	size_t i;
	int restored = 0;

	xstrfmtcat(path, "%s/%s", agora_state_dir, AGORA_VIEW_FILE);
	if (agora_view_load(path, &v, NULL, &err)) {
		if (errno != ENOENT)
			info("site_factor/agora: leases not restored: %s",
			     err.text);
		xfree(path);
		return;
	}
	for (i = 0; i < v.n_leases; i++) {
		pol_lease_t l = { 0 };

		l.job_id = v.leases[i].job;
		l.gpus = (int) v.leases[i].gpus;
		l.start = v.leases[i].start;
		l.end = v.leases[i].end;
		l.state = v.leases[i].grace ? POL_LEASE_GRACE
					    : POL_LEASE_ACTIVE;
		l.requeue_at = v.leases[i].requeue_at;
		if (pol_agora_policy_restore_lease(np, &l) == 0)
			restored++;
	}
	agora_view_free(&v);
	if (restored)
		info("site_factor/agora: %d leases restored from %s", restored,
		     path);
	xfree(path);
}

/* (Re)create the policy from the configuration in force, carrying the
 * ledger over (from the old policy, or from the state file at start-up).
 * Caller holds agora_state_lock. */
extern void agora_policy_reset(void)
{
	pol_agora_policy_t *np;
	agora_err_t err = { { 0 } };
	char *json = NULL, *path;
	pol_placer_t old_placer = placer_obj, new_placer = { 0 };
	pol_cluster_t shape;
	const pol_placer_t *use = NULL;

	memset(&shape, 0, sizeof(shape));
	types_build();
	if (agora_conf.placement == AGORA_PLACEMENT_AGORA) {
		shape.types = agora_types.types;
		shape.n_types = agora_types.n_types;
		if (pol_placer_find("agora", &shape, &new_placer, &err))
			error("site_factor/agora: cannot create the topology-aware placer (%s); the auction places like cons_tres",
			      err.text);
	}
	if (new_placer.place) {
		placer_obj = new_placer;
		use = &placer_obj;
	}
	np = pol_agora_policy_create_conf(
		&agora_conf, agora_conf.n_auction_partitions > 0,
		agora_cluster_name ? agora_cluster_name : "cluster", use, &err);
	if (!np) {
		error("site_factor/agora: cannot create the policy: %s; keeping the previous one",
		      err.text);
		/* the previous policy still borrows placer_obj */
		placer_obj = old_placer;
		pol_placer_release(&new_placer);
		return;
	}
	if (agora_policy) {
		if (!pol_credit_save(pol_agora_policy_ledger(agora_policy),
				     &json) &&
		    pol_credit_load(pol_agora_policy_ledger(np), json,
				    "previous ledger", &err))
			error("site_factor/agora: credit state not carried over: %s",
			      err.text);
		free(json); /* core memory: malloc'ed by pol_credit_save */
		/* leases, waiting winners, contention, tenant names */
		if (pol_agora_policy_carry(np, agora_policy))
			error("site_factor/agora: policy state not carried over: %m");
		pol_agora_policy_destroy(&agora_policy);
	} else {
		char prev[PATH_MAX];
		int rc;
		time_t now = time(NULL);
		pol_credit_t *l = pol_agora_policy_ledger(np);

		path = state_file();
		snprintf(prev, sizeof(prev), "%s.prev", path);
		if (access(path, F_OK) && access(prev, F_OK)) {
			rc = 0; /* nothing recorded yet */
		} else if ((rc = pol_credit_load_file(l, path, &err)) < 0) {
			/* Neither the file nor its .prev copy: never lose
			 * them, set the main file aside. */
			char *aside = NULL;

			xstrfmtcat(aside, "%s.bad.%ld", path, (long) now);
			(void) rename(path, aside);
			error("site_factor/agora: credit state unreadable (%s); moved to %s, starting with empty usage",
			      err.text, aside);
			xfree(aside);
		} else if (rc == 1) {
			error("site_factor/agora: credit state recovered from the previous copy: %s",
			      err.text);
		} else {
			info("site_factor/agora: credit state recovered from %s",
			     path);
		}
		if (rc >= 0) {
			int c = pol_credit_clamp_future(l, now);
			int p = pol_credit_prune(l, now, 20);

			if (c > 0)
				info("site_factor/agora: %d ledger times were in the future (clock stepped back?); clamped to now",
				     c);
			if (p > 0)
				info("site_factor/agora: %d accounts idle for more than 20 half-lives dropped from the ledger",
				     p);
		}
		xfree(path);
		estimates_load(np, now);
		restore_leases(np);
	}
	estimates_seed(np, time(NULL));
	agora_policy = np;
	/* the old agora_policy borrowed the old placer: free it only now */
	pol_placer_release(&old_placer);
	placer_obj = new_placer;
	info("site_factor/agora: %d node types (%d from TopologyModel), placement %s",
	     agora_types.n_types, agora_types.n_model,
	     new_placer.place ? "agora" : "stock");
}

extern void agora_policy_fini(void)
{
	int i;

	agora_ledger_save();
	pol_agora_policy_destroy(&agora_policy);
	pol_placer_release(&placer_obj);
	types_free();
	for (i = 0; i < agora_n_tenant_names; i++)
		xfree(agora_tenant_names[i]);
	xfree(agora_tenant_names);
	agora_n_tenant_names = 0;
	xfree(agora_state_dir);
	xfree(agora_cluster_name);
}
