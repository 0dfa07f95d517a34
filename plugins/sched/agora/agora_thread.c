/*
 * agora_thread.c - sched/agora's scheduling thread.
 *
 * Each pass follows the pattern the auctions use (doc/design.md):
 *   1. lock  { READ config, READ job, READ node, READ part, NO fed }
 *   2. snapshot Slurm state into the core's pol_* structs
 *   3. unlock
 *   4. decide: pure core code, no lock held
 *   5. lock  { READ config, WRITE job, WRITE node, READ part, READ fed }
 *      and re-check: if jobs or nodes changed since the snapshot, the
 *      decision is stale and is dropped (the next pass retries)
 *   6. apply, unlock
 * No lock is held while the core decides, and none for longer than one
 * snapshot or one apply.
 */
#include "config.h"

#include <errno.h>
#include <sys/time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "slurm/slurm.h"
#include "src/common/log.h"
#include "src/common/parse_time.h"
#include "src/common/macros.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"
#include "src/slurmctld/fed_mgr.h"
#include "src/slurmctld/job_scheduler.h"
#include "src/slurmctld/locks.h"
#include "src/slurmctld/node_scheduler.h"
#include "src/slurmctld/srun_comm.h"
#include "src/slurmctld/state_save.h"
#include "src/slurmctld/slurmctld.h"

#include "agora_hold.h"
#include "pol_agora.h"
#include "pol_place_agora.h"
#include "topo_model.h"
#include "sched_agora.h"

static pthread_t agora_tid;
static bool thread_running = false;
static bool stop_requested = false;
static pthread_mutex_t term_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t term_cond = PTHREAD_COND_INITIALIZER;
static uint64_t pass_count = 0;
static time_t next_wakeup = 0; /* the policy asked to run again then */
static time_t last_pass = 0;   /* when the previous pass took its snapshot */

static int64_t usec_since(const struct timeval *t0)
{
	struct timeval t1;

	gettimeofday(&t1, NULL);
	return (int64_t) (t1.tv_sec - t0->tv_sec) * 1000000 +
	       (t1.tv_usec - t0->tv_usec);
}

/* A time as Slurm prints it (ISO 8601, local time). */
static char *tstr(time_t t, char *buf)
{
	slurm_make_time_str(&t, buf, 32);
	return buf;
}

/* The policy and its state across passes (leases, contention, ledger). */
static pol_agora_policy_t *policy = NULL;
static char **tenant_names = NULL; /* names last given to the policy */
static int n_tenant_names = 0;
static time_t last_save = 0;
static bool charges_pending = false; /* ledger changed since last save */

static char *state_file(void)
{
	char *path = NULL;

	xstrfmtcat(path, "%s/%s", slurm_conf.state_save_location,
		   AGORA_CREDIT_FILE);
	return path;
}

/* Save the credit ledger (sched/agora owns it; site_factor/agora and the
 * federation helper read it).  Caller holds agora_conf_lock. */
static void save_ledger(void)
{
	char *path;
	agora_err_t err = { { 0 } };

	if (!policy)
		return;
	path = state_file();
	lock_state_files();
	if (pol_credit_save_file(pol_agora_policy_ledger(policy), path, &err))
		error("sched/agora: cannot save credit state: %s", err.text);
	unlock_state_files();
	xfree(path);
}

/*
 * Write what the last pass decided to StateSaveLocation/agora_view.json
 * (atomically: .tmp then rename), for slurmctld/agora, which shows it in
 * "scontrol show config", and for agoractl.  Per app: credit, quota and
 * decayed usage (GPU-hours), rho; per lease: job, GPUs, end, state.
 * Caller holds agora_conf_lock.
 */
static void write_view(const agora_snapshot_t *snap, time_t now)
{
	json_object *root = json_object_new_object(), *apps, *leases;
	pol_credit_t *l = pol_agora_policy_ledger(policy);
	const pol_lease_table_t *lt = pol_agora_policy_leases(policy);
	char *path = NULL, *tmp = NULL;
	const char *text;
	size_t i;
	int t, k;
	FILE *f;

	json_object_object_add(root, "time", json_object_new_int64(now));
	json_object_object_add(
		root, "cluster",
		json_object_new_string(slurm_conf.cluster_name
					       ? slurm_conf.cluster_name
					       : ""));
	json_object_object_add(root, "pass",
			       json_object_new_int64((int64_t) pass_count));
	apps = json_object_new_array();
	/* every account the ledger knows, plus every app with jobs now */
	for (i = 0; l && i < pol_credit_count(l); i++) {
		const char *name = pol_credit_account(l, i);
		json_object *o = json_object_new_object();
		double rho = -1;

		for (t = 0; t < snap->n_tenants; t++)
			if (!xstrcmp(snap->tenants[t], name))
				(void) pol_agora_policy_tenant(policy, t, &rho,
							       NULL);
		json_object_object_add(o, "name", json_object_new_string(name));
		json_object_object_add(
			o, "quota",
			json_object_new_double(pol_credit_quota(l, name)));
		json_object_object_add(
			o, "usage",
			json_object_new_double(pol_credit_usage(l, name, now)));
		json_object_object_add(
			o, "credit",
			json_object_new_double(pol_credit_get(l, name, now)));
		if (rho >= 0)
			json_object_object_add(o, "rho",
					       json_object_new_double(rho));
		json_object_array_add(apps, o);
	}
	for (t = 0; t < snap->n_tenants; t++) {
		bool known = false;
		double rho = 1, credit = 0;
		json_object *o;

		for (i = 0; l && i < pol_credit_count(l) && !known; i++)
			known = !xstrcmp(pol_credit_account(l, i),
					 snap->tenants[t]);
		if (known)
			continue;
		(void) pol_agora_policy_tenant(policy, t, &rho, &credit);
		o = json_object_new_object();
		json_object_object_add(
			o, "name", json_object_new_string(snap->tenants[t]));
		json_object_object_add(
			o, "quota",
			json_object_new_double(
				l ? pol_credit_quota(l, snap->tenants[t]) : 0));
		json_object_object_add(o, "usage", json_object_new_double(0));
		json_object_object_add(o, "credit",
				       json_object_new_double(credit));
		json_object_object_add(o, "rho", json_object_new_double(rho));
		json_object_array_add(apps, o);
	}
	json_object_object_add(root, "apps", apps);
	leases = json_object_new_array();
	for (k = 0; lt && k < pol_lease_count(lt); k++) {
		const pol_lease_t *ls = pol_lease_at(lt, k);
		json_object *o = json_object_new_object();

		json_object_object_add(o, "job",
				       json_object_new_int64(ls->job_id));
		json_object_object_add(o, "gpus",
				       json_object_new_int(ls->gpus));
		json_object_object_add(o, "end",
				       json_object_new_int64(ls->end));
		json_object_object_add(
			o, "state",
			json_object_new_string(ls->state == POL_LEASE_GRACE
						       ? "grace"
						       : "active"));
		if (ls->state == POL_LEASE_GRACE)
			json_object_object_add(
				o, "requeue_at",
				json_object_new_int64(ls->requeue_at));
		json_object_array_add(leases, o);
	}
	json_object_object_add(root, "leases", leases);

	text = json_object_to_json_string_ext(root, JSON_C_TO_STRING_PLAIN);
	xstrfmtcat(path, "%s/%s", slurm_conf.state_save_location,
		   AGORA_VIEW_FILE);
	xstrfmtcat(tmp, "%s.tmp", path);
	lock_state_files();
	if ((f = fopen(tmp, "w"))) {
		bool ok = fputs(text, f) >= 0;

		ok = (fclose(f) == 0) && ok;
		if (!ok || rename(tmp, path))
			error("sched/agora: cannot write %s: %m", path);
	} else {
		error("sched/agora: cannot write %s: %m", tmp);
	}
	unlock_state_files();
	xfree(path);
	xfree(tmp);
	json_object_put(root);
}

/* Node types and the placer the policy borrows (see agora_types_t). */
static agora_types_t types;
static topo_model_t tmodel;
static pol_agora_t *placer_state = NULL;
static pol_placer_t placer_obj;

static void types_free(void)
{
	xfree(types.types);
	types.n_types = types.n_model = 0;
	types.model = NULL;
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

	types_free();
	if (agora_conf.topology_model) {
		if (topo_model_load(agora_conf.topology_model, &tmodel, &err))
			error("sched/agora: TopologyModel ignored, every node is one NVLink island: %s",
			      err.text);
		else
			types.model = &tmodel;
	}
	types.n_model = types.model ? tmodel.n_types : 0;
	types.types = xcalloc(types.n_model + 1, sizeof(pol_node_type_t));
	for (k = 0; k < types.n_model; k++)
		types.types[k] = tmodel.types[k].type;
	types.n_types = types.n_model;
	agora_gpu_plugin_init();
	for (i = 0; (node_ptr = next_node(&i)); i++) {
		pol_gpumask_t fm;
		int g = agora_node_gpus(node_ptr, &fm);
		char name[POL_NAME_LEN];

		if (agora_types_find(&types, node_ptr->name, g) >= 0)
			continue;
		if (types.model &&
		    topo_model_find(types.model, node_ptr->name) >= 0)
			error("sched/agora: node %s has %d GPUs but TopologyModel says otherwise; using a uniform type",
			      node_ptr->name, g);
		xrecalloc(types.types, types.n_types + 1,
			  sizeof(pol_node_type_t));
		snprintf(name, sizeof(name), "uniform%d", g);
		pol_node_type_uniform(
			&types.types[types.n_types], name, g,
			node_ptr->tot_sockets > 0 ? node_ptr->tot_sockets : 1);
		types.n_types++;
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
	json_object *root, *leases, *v;
	size_t i, n;
	int restored = 0;

	xstrfmtcat(path, "%s/%s", slurm_conf.state_save_location,
		   AGORA_VIEW_FILE);
	root = json_object_from_file(path);
	if (!root) {
		xfree(path);
		return;
	}
	if (json_object_object_get_ex(root, "leases", &leases) &&
	    json_object_is_type(leases, json_type_array)) {
		n = json_object_array_length(leases);
		for (i = 0; i < n; i++) {
			json_object *o = json_object_array_get_idx(leases, i);
			pol_lease_t l = { 0 };

			if (!json_object_object_get_ex(o, "job", &v))
				continue;
			l.job_id = json_object_get_int64(v);
			if (json_object_object_get_ex(o, "gpus", &v))
				l.gpus = json_object_get_int(v);
			if (json_object_object_get_ex(o, "start", &v))
				l.start = json_object_get_int64(v);
			if (json_object_object_get_ex(o, "end", &v))
				l.end = json_object_get_int64(v);
			l.state = POL_LEASE_ACTIVE;
			if (json_object_object_get_ex(o, "state", &v) &&
			    !xstrcmp(json_object_get_string(v), "grace")) {
				l.state = POL_LEASE_GRACE;
				if (json_object_object_get_ex(o, "requeue_at",
							      &v))
					l.requeue_at = json_object_get_int64(v);
			}
			if (pol_agora_policy_restore_lease(np, &l) == 0)
				restored++;
		}
	}
	json_object_put(root);
	if (restored)
		info("sched/agora: %d leases restored from %s", restored, path);
	xfree(path);
}

/* (Re)create the policy from the configuration in force, carrying the
 * ledger over (from the old policy, or from the state file at start-up).
 * Caller holds agora_conf_lock. */
extern void agora_policy_reset(void)
{
	pol_agora_policy_t *np;
	agora_err_t err = { { 0 } };
	char *json = NULL, *path;
	pol_agora_t *old_placer = placer_state, *new_placer = NULL;
	pol_cluster_t shape;
	const pol_placer_t *use = NULL;

	memset(&shape, 0, sizeof(shape));
	types_build();
	if (agora_conf.placement == AGORA_PLACEMENT_AGORA) {
		shape.types = types.types;
		shape.n_types = types.n_types;
		new_placer = pol_agora_create(&shape, NULL);
		if (!new_placer)
			error("sched/agora: cannot create the topology-aware placer (%m); the auction places like cons_tres");
	}
	if (new_placer) {
		placer_obj.name = "agora";
		placer_obj.place = pol_place_agora;
		placer_obj.arg = new_placer;
		use = &placer_obj;
	}
	np = pol_agora_policy_create_conf(
		&agora_conf, agora_conf.n_auction_partitions > 0,
		slurm_conf.cluster_name ? slurm_conf.cluster_name : "cluster",
		use, &err);
	if (!np) {
		error("sched/agora: cannot create the policy: %s; keeping the previous one",
		      err.text);
		pol_agora_destroy(&new_placer);
		return;
	}
	if (policy) {
		if (!pol_credit_save(pol_agora_policy_ledger(policy), &json) &&
		    pol_credit_load(pol_agora_policy_ledger(np), json,
				    "previous ledger", &err))
			error("sched/agora: credit state not carried over: %s",
			      err.text);
		free(json); /* core memory: malloc'ed by pol_credit_save */
		/* leases, waiting winners, contention, tenant names */
		if (pol_agora_policy_carry(np, policy))
			error("sched/agora: policy state not carried over: %m");
		pol_agora_policy_destroy(&policy);
	} else {
		path = state_file();
		if (!access(path, F_OK) &&
		    pol_credit_load_file(pol_agora_policy_ledger(np), path,
					 &err)) {
			/* Never lose the old state: set it aside. */
			char *aside = NULL;

			xstrfmtcat(aside, "%s.bad.%ld", path,
				   (long) time(NULL));
			(void) rename(path, aside);
			error("sched/agora: credit state unreadable (%s); moved to %s, starting with empty usage",
			      err.text, aside);
			xfree(aside);
		} else if (!access(path, F_OK)) {
			info("sched/agora: credit state recovered from %s",
			     path);
		}
		xfree(path);
		restore_leases(np);
	}
	policy = np;
	/* the old policy borrowed the old placer: free it only now */
	if (old_placer != new_placer)
		pol_agora_destroy(&old_placer);
	placer_state = new_placer;
	info("sched/agora: %d node types (%d from TopologyModel), placement %s",
	     types.n_types, types.n_model, new_placer ? "agora" : "stock");
}

extern void agora_policy_fini(void)
{
	int i;

	slurm_mutex_lock(&agora_conf_lock);
	save_ledger();
	pol_agora_policy_destroy(&policy);
	pol_agora_destroy(&placer_state);
	types_free();
	for (i = 0; i < n_tenant_names; i++)
		xfree(tenant_names[i]);
	xfree(tenant_names);
	n_tenant_names = 0;
	slurm_mutex_unlock(&agora_conf_lock);
}

/* Give the policy the snapshot's tenant names if they changed. */
static void sync_tenants(const agora_snapshot_t *snap)
{
	int i;
	bool same = (n_tenant_names == snap->n_tenants);

	for (i = 0; same && i < snap->n_tenants; i++)
		same = !xstrcmp(tenant_names[i], snap->tenants[i]);
	if (same)
		return;
	if (pol_agora_policy_set_tenant_names(
		    policy, (const char *const *) snap->tenants,
		    snap->n_tenants))
		error("sched/agora: cannot name tenants: %m");
	for (i = 0; i < n_tenant_names; i++)
		xfree(tenant_names[i]);
	xfree(tenant_names);
	tenant_names = xcalloc(MAX(snap->n_tenants, 1), sizeof(char *));
	for (i = 0; i < snap->n_tenants; i++)
		tenant_names[i] = xstrdup(snap->tenants[i]);
	n_tenant_names = snap->n_tenants;
}

/* Start an awarded job on exactly the awarded nodes (backfill's
 * _start_job() pattern: exclude every other node, select_nodes(),
 * restore).  Job and node write locks held. */
static int start_awarded(job_record_t *job_ptr, const pol_action_t *act,
			 const agora_snapshot_t *snap, time_t now)
{
	bitstr_t *exc, *orig_exc = NULL;
	int i, rc;

	exc = bit_alloc(node_record_count);
	bit_set_all(exc);
	for (i = 0; i < act->alloc.n_parts; i++) {
		int n = act->alloc.parts[i].node;

		if (n >= 0 && n < snap->cluster.n_nodes)
			bit_clear(exc, snap->slurm_index[n]);
	}
	if (fed_mgr_job_lock(job_ptr)) {
		FREE_NULL_BITMAP(exc);
		agora_hold_for_auction(
			job_ptr,
			"auction won, waiting for the federation job lock");
		return ESLURM_FED_JOB_LOCK;
	}
	if (job_ptr->details->exc_node_bitmap) {
		orig_exc = bit_copy(job_ptr->details->exc_node_bitmap);
		bit_or(job_ptr->details->exc_node_bitmap, exc);
	} else {
		job_ptr->details->exc_node_bitmap = bit_copy(exc);
	}
	agora_release_hold(job_ptr);
	rc = select_nodes(job_ptr, false, NULL, NULL, false,
			  SLURMDB_JOB_FLAG_SCHED);
	if (job_ptr->details) {
		FREE_NULL_BITMAP(job_ptr->details->exc_node_bitmap);
		job_ptr->details->exc_node_bitmap = orig_exc;
	} else {
		FREE_NULL_BITMAP(orig_exc);
	}
	FREE_NULL_BITMAP(exc);
	if (rc == SLURM_SUCCESS) {
		fed_mgr_job_start(job_ptr, job_ptr->start_time);
		last_job_update = now;
		xfree(job_ptr->system_comment);
		xstrfmtcat(job_ptr->system_comment,
			   "%s%s (placement score %.3f)", AGORA_DESC_PREFIX,
			   act->reason[0] ? act->reason : "started",
			   act->score);
		info("sched/agora: started %pJ on %s: %s", job_ptr,
		     job_ptr->nodes, act->reason);
		if (job_ptr->batch_flag == 0)
			srun_allocate(job_ptr);
		else if (!IS_JOB_CONFIGURING(job_ptr))
			launch_job(job_ptr);
	} else {
		char *why = NULL;

		fed_mgr_job_unlock(job_ptr);
		xstrfmtcat(
			why,
			"won the auction, but the awarded GPUs could not start it (%s); retrying",
			slurm_strerror(rc));
		agora_hold_for_auction(job_ptr, why);
		xfree(why);
		debug("sched/agora: %pJ: select_nodes failed: %s", job_ptr,
		      slurm_strerror(rc));
	}
	return rc;
}

/*
 * Apply a decision.  Called with the write locks of step 5 held and after
 * the re-check.  Returns the number of actions applied.
 */
static int apply_actions(const pol_actions_t *acts,
			 const agora_snapshot_t *snap, time_t now)
{
	int i, applied = 0;

	for (i = 0; i < acts->n; i++) {
		const pol_action_t *act = &acts->v[i];
		job_record_t *job_ptr = find_job_record((uint32_t) act->job_id);
		char *why = NULL, t1[32];

		if (!job_ptr)
			continue;
		switch (act->type) {
		case POL_ACT_START:
			if (!IS_JOB_PENDING(job_ptr) || !job_ptr->details)
				break;
			if (start_awarded(job_ptr, act, snap, now) ==
			    SLURM_SUCCESS)
				applied++;
			break;
		case POL_ACT_PREEMPT:
			if (!IS_JOB_RUNNING(job_ptr))
				break;
			if (!job_ptr->details || !job_ptr->details->requeue) {
				/* --no-requeue jobs run to their limit */
				debug("sched/agora: %pJ lost its lease but is not requeueable; it keeps running",
				      job_ptr);
				break;
			}
			info("sched/agora: requeue %pJ: %s", job_ptr,
			     act->reason);
			xfree(job_ptr->system_comment);
			xstrfmtcat(job_ptr->system_comment,
				   "%srequeued at %s: %s", AGORA_DESC_PREFIX,
				   tstr(now, t1), act->reason);
			if (job_requeue(slurm_conf.slurm_user_id,
					job_ptr->job_id, NULL, true,
					0) == SLURM_SUCCESS) {
				/* back to the auction at once: Slurm's
				 * requeue BeginTime would otherwise release
				 * it to the main scheduler */
				agora_hold_for_auction(
					job_ptr,
					"requeued after losing its lease; waiting for the next auction");
				applied++;
			}
			break;
		case POL_ACT_HOLD:
			if (!IS_JOB_PENDING(job_ptr))
				break;
			xstrfmtcat(why, "%s", act->reason);
			agora_hold_for_auction(job_ptr, why);
			xfree(why);
			applied++;
			break;
		case POL_ACT_RESIZE:
			break;
		}
	}
	return applied;
}

/*
 * Jobs whose lease was lost enter the policy's grace period.  Tell each
 * one once, the way it asked to be warned: a job submitted with
 * --signal=[B:]SIG gets SIG (to the batch shell with B:), so checkpointing
 * jobs can save before the requeue GraceTime later.  Jobs that asked for no
 * signal are simply requeued at the end of the grace.  The lease end and
 * the grace are recorded in SystemComment (scontrol show job).
 */
static int64_t *signaled = NULL;
static int n_signaled = 0;

static bool was_signaled(int64_t id)
{
	int i;

	for (i = 0; i < n_signaled; i++)
		if (signaled[i] == id)
			return true;
	return false;
}

static void record_leases(time_t now)
{
	const pol_lease_table_t *lt = pol_agora_policy_leases(policy);
	int i, n = lt ? pol_lease_count(lt) : 0;
	int64_t *keep = xcalloc(MAX(n, 1), sizeof(int64_t));
	int n_keep = 0;

	for (i = 0; i < n; i++) {
		const pol_lease_t *l = pol_lease_at(lt, i);
		job_record_t *job_ptr = find_job_record((uint32_t) l->job_id);
		char *note = NULL, t1[32], t2[32];

		if (!job_ptr || !IS_JOB_RUNNING(job_ptr))
			continue;
		if (l->state == POL_LEASE_GRACE) {
			keep[n_keep++] = l->job_id;
			if (was_signaled(l->job_id))
				continue;
			xstrfmtcat(note, "%slease lost at %s; requeue at %s",
				   AGORA_DESC_PREFIX, tstr(now, t1),
				   tstr(l->requeue_at, t2));
			if (job_ptr->warn_signal && job_ptr->details &&
			    job_ptr->details->requeue) {
				uint16_t flags = job_ptr->warn_flags &
						 (KILL_JOB_BATCH |
						  KILL_FULL_JOB);

				info("sched/agora: %pJ lost its lease: signal %u, requeue in %ld s",
				     job_ptr, job_ptr->warn_signal,
				     (long) (l->requeue_at - now));
				(void) job_signal(
					job_ptr, job_ptr->warn_signal, flags,
					slurm_conf.slurm_user_id, false);
				xstrfmtcat(note, " (signal %u sent)",
					   job_ptr->warn_signal);
			} else {
				info("sched/agora: %pJ lost its lease: requeue in %ld s",
				     job_ptr, (long) (l->requeue_at - now));
			}
		} else {
			xstrfmtcat(note, "%slease of %d GPUs until %s",
				   AGORA_DESC_PREFIX, l->gpus,
				   tstr(l->end, t1));
			if (job_ptr->system_comment &&
			    strstr(job_ptr->system_comment, note)) {
				xfree(note);
				continue;
			}
			if (job_ptr->system_comment &&
			    !strncmp(job_ptr->system_comment, AGORA_DESC_PREFIX,
				     strlen(AGORA_DESC_PREFIX))) {
				/* keep how it started, refresh the lease */
				char *semi = strstr(job_ptr->system_comment,
						    "; lease");
				if (semi)
					*semi = '\0';
				xstrfmtcat(job_ptr->system_comment,
					   "; lease of %d GPUs until %s",
					   l->gpus, tstr(l->end, t1));
				xfree(note);
				last_job_update = now;
				continue;
			}
		}
		xfree(job_ptr->system_comment);
		job_ptr->system_comment = note;
		last_job_update = now;
	}
	xfree(signaled);
	signaled = keep;
	n_signaled = n_keep;
}

/* Charge GPU use outside the auction to the ledger (agora_conf_lock held).
 * The credit order then covers every GPU a team uses, whichever
 * partition (MAST: one quota per team). */
static void charge_outside_auction(const agora_snapshot_t *snap, time_t now)
{
	pol_credit_t *l = policy ? pol_agora_policy_ledger(policy) : NULL;
	int i;

	for (i = 0; l && i < snap->n_charges; i++)
		if (pol_credit_charge(l, snap->charges[i].account,
				      snap->charges[i].gpu_seconds, now, NULL))
			error("sched/agora: cannot charge %.0f GPU-s to '%s': %m",
			      snap->charges[i].gpu_seconds,
			      snap->charges[i].account);
	if (snap->n_charges)
		charges_pending = true;
}

/*
 * scontrol show node: the Comment of every node of the auction's pool says
 * what Agora decided there ("Agora: auction pool; lease job 12 (8 GPUs)
 * until ..."), never overwriting a comment an admin wrote.  Node write
 * lock held.
 */
static void annotate_nodes(const agora_snapshot_t *snap)
{
	const pol_lease_table_t *lt = policy ? pol_agora_policy_leases(policy)
					     : NULL;
	char **text = xcalloc(MAX(snap->cluster.n_nodes, 1), sizeof(char *));
	int i, k, n = lt ? pol_lease_count(lt) : 0;
	bool changed = false;

	for (k = 0; k < n; k++) {
		const pol_lease_t *l = pol_lease_at(lt, k);
		job_record_t *job_ptr = find_job_record((uint32_t) l->job_id);
		char t1[32];

		if (!job_ptr || !IS_JOB_RUNNING(job_ptr) ||
		    !job_ptr->node_bitmap)
			continue;
		for (i = 0; i < snap->cluster.n_nodes; i++) {
			int si = snap->slurm_index[i];

			if (si >= bit_size(job_ptr->node_bitmap) ||
			    !bit_test(job_ptr->node_bitmap, si))
				continue;
			xstrfmtcat(text[i], "; %s job %u (%d GPUs) %s %s",
				   l->state == POL_LEASE_GRACE ? "requeue"
							       : "lease",
				   job_ptr->job_id, l->gpus,
				   l->state == POL_LEASE_GRACE ? "at" : "until",
				   tstr(l->state == POL_LEASE_GRACE
						? l->requeue_at
						: l->end,
					t1));
		}
	}
	for (i = 0; i < snap->cluster.n_nodes; i++) {
		node_record_t *node_ptr =
			node_record_table_ptr[snap->slurm_index[i]];
		char *c = NULL;

		if (!node_ptr)
			continue;
		xstrfmtcat(c, "%sauction pool%s", AGORA_DESC_PREFIX,
			   text[i] ? text[i] : "; no lease");
		if (node_ptr->comment &&
		    strncmp(node_ptr->comment, AGORA_DESC_PREFIX,
			    strlen(AGORA_DESC_PREFIX))) {
			xfree(c); /* an admin's comment stays */
		} else if (xstrcmp(node_ptr->comment, c)) {
			xfree(node_ptr->comment);
			node_ptr->comment = c;
			changed = true;
		} else {
			xfree(c);
		}
		xfree(text[i]);
	}
	xfree(text);
	if (changed)
		last_node_update = time(NULL);
}

/* Held jobs the policy said nothing about: say why they wait. */
static void annotate_waiting(const agora_snapshot_t *snap,
			     const pol_actions_t *acts)
{
	int i, k;

	for (i = 0; i < snap->n_pending; i++) {
		job_record_t *job_ptr;
		bool named = false;

		for (k = 0; k < acts->n && !named; k++)
			named = acts->v[k].job_id == snap->pending[i].id;
		if (named)
			continue;
		job_ptr = find_job_record((uint32_t) snap->pending[i].id);
		if (job_ptr && IS_JOB_PENDING(job_ptr)) {
			double rho = 1, credit = 0;
			char *why = NULL;
			int t = snap->pending[i].tenant;

			if (policy)
				(void) pol_agora_policy_tenant(policy, t, &rho,
							       &credit);
			xstrfmtcat(
				why, "%s; app %s rho=%.2f credit=%.1f GPU-h",
				snap->gpus_free
					? "no auction win yet: free GPUs went to worse-off apps or do not fit"
					: "waiting for GPUs: next auction at a lease end",
				t >= 0 && t < snap->n_tenants ? snap->tenants[t]
							      : "?",
				rho, credit);
			agora_hold_for_auction(job_ptr, why);
			xfree(why);
		}
	}
}

static void agora_pass(void)
{
	/* Read config, jobs, nodes and partitions: the snapshot */
	slurmctld_lock_t read_locks = { READ_LOCK, READ_LOCK, READ_LOCK,
					READ_LOCK, NO_LOCK };
	/* Read config and partitions; write jobs and nodes: the apply */
	slurmctld_lock_t write_locks = { READ_LOCK, WRITE_LOCK, WRITE_LOCK,
					 READ_LOCK, READ_LOCK };
	agora_snapshot_t snap;
	pol_actions_t acts = { 0 };
	struct timeval t0;
	int64_t snap_us, decide_us;
	int applied = 0, rc = 0;
	time_t now = time(NULL);

	gettimeofday(&t0, NULL);
	lock_slurmctld(read_locks);
	slurm_mutex_lock(&agora_conf_lock);
	if (agora_snapshot_build(&snap, &agora_conf, &types, now, last_pass) !=
	    SLURM_SUCCESS) {
		slurm_mutex_unlock(&agora_conf_lock);
		unlock_slurmctld(read_locks);
		error("sched/agora: snapshot failed: %m");
		return;
	}
	if (snap.types_stale) {
		/* a node changed shape: rebuild types and placer (node read
		 * lock held), decide next pass */
		info("sched/agora: node shapes changed, rebuilding node types");
		agora_policy_reset();
		slurm_mutex_unlock(&agora_conf_lock);
		unlock_slurmctld(read_locks);
		agora_snapshot_free(&snap);
		return;
	}
	unlock_slurmctld(read_locks);
	snap_us = usec_since(&t0);

	/* 4. decide (no slurmctld lock held) */
	gettimeofday(&t0, NULL);
	charge_outside_auction(&snap, now);
	if (policy && agora_conf.n_auction_partitions) {
		sync_tenants(&snap);
		rc = pol_agora_policy_decide(policy, &snap.pol, now, &acts);
		if (rc)
			error("sched/agora: decision failed: %m");
	}
	decide_us = usec_since(&t0);
	slurm_mutex_unlock(&agora_conf_lock);

	if (!rc &&
	    (acts.n || snap.n_pending || snap.n_running ||
	     (agora_conf.n_auction_partitions && snap.cluster.n_nodes))) {
		lock_slurmctld(write_locks);
		if (last_job_update != snap.job_update ||
		    last_node_update != snap.node_update) {
			debug("sched/agora: state changed during pass, dropping %d actions",
			      acts.n);
		} else {
			slurm_mutex_lock(&agora_conf_lock);
			applied = apply_actions(&acts, &snap, now);
			if (policy) {
				record_leases(now);
				annotate_nodes(&snap);
			}
			slurm_mutex_unlock(&agora_conf_lock);
			annotate_waiting(&snap, &acts);
		}
		unlock_slurmctld(write_locks);
	}
	if (acts.wakeup > now)
		next_wakeup = acts.wakeup;

	if (policy && (now - last_save >= 30 || applied ||
		       (charges_pending && now - last_save >= 10))) {
		charges_pending = false;
		slurm_mutex_lock(&agora_conf_lock);
		save_ledger();
		write_view(&snap, now);
		slurm_mutex_unlock(&agora_conf_lock);
		last_save = now;
	} else if (policy && snap.n_running) {
		/* leases change at every auction: keep the view (and so
		 * what a restart restores) current */
		slurm_mutex_lock(&agora_conf_lock);
		write_view(&snap, now);
		slurm_mutex_unlock(&agora_conf_lock);
	}

	last_pass = now;
	pass_count++;
	debug("sched/agora: pass %" PRIu64
	      ": %d nodes, %d/%d GPUs free, %d pending and %d running auction-managed, %d apps, %d actions (%d applied), snapshot %" PRId64
	      " us, decide %" PRId64 " us",
	      pass_count, snap.cluster.n_nodes, snap.gpus_free, snap.gpus_total,
	      snap.n_pending, snap.n_running, snap.n_tenants, acts.n, applied,
	      snap_us, decide_us);
	pol_actions_free(&acts);
	agora_snapshot_free(&snap);
}

static void *agora_agent(void *arg)
{
	struct timespec ts;
	int interval;

	(void) arg;
	info("sched/agora: scheduling thread started");
	while (true) {
		slurm_mutex_lock(&agora_conf_lock);
		interval = agora_conf.sched_interval_s;
		slurm_mutex_unlock(&agora_conf_lock);

		slurm_mutex_lock(&term_lock);
		if (!stop_requested) {
			clock_gettime(CLOCK_REALTIME, &ts);
			if (next_wakeup > ts.tv_sec &&
			    next_wakeup < ts.tv_sec + interval)
				ts.tv_sec = next_wakeup;
			else
				ts.tv_sec += interval;
			pthread_cond_timedwait(&term_cond, &term_lock, &ts);
		}
		if (stop_requested) {
			slurm_mutex_unlock(&term_lock);
			break;
		}
		slurm_mutex_unlock(&term_lock);

		if (slurmctld_config.shutdown_time)
			break;
		agora_pass();
	}
	info("sched/agora: scheduling thread stopped after %" PRIu64 " passes",
	     pass_count);
	return NULL;
}

extern void agora_thread_start(void)
{
	slurm_mutex_lock(&term_lock);
	if (!thread_running) {
		stop_requested = false;
		slurm_thread_create(&agora_tid, agora_agent, NULL);
		thread_running = true;
	}
	slurm_mutex_unlock(&term_lock);
}

extern void agora_thread_stop(void)
{
	slurm_mutex_lock(&term_lock);
	if (!thread_running) {
		slurm_mutex_unlock(&term_lock);
		return;
	}
	stop_requested = true;
	slurm_cond_signal(&term_cond);
	slurm_mutex_unlock(&term_lock);
	pthread_join(agora_tid, NULL);
	slurm_mutex_lock(&term_lock);
	thread_running = false;
	slurm_mutex_unlock(&term_lock);
}

extern void agora_thread_wake(void)
{
	slurm_mutex_lock(&term_lock);
	slurm_cond_signal(&term_cond);
	slurm_mutex_unlock(&term_lock);
}
