/*
 * agora_snapshot.c - copy slurmctld state into the core's pol_* structs.
 *
 * This and the apply step are the only code that reads job_record_t and
 * node_record_t.  The snapshot is owned by the adapter (xmalloc/xfree);
 * the core only borrows it for one decide() call.
 */
#include "config.h"
#include "agora_compat.h"

#include <string.h>

#include "slurm/slurm.h"
#include "src/common/bitstring.h"
#include AGORA_INC_GRES
#include "src/common/job_resources.h"
#include "src/common/list.h"
#include "src/common/log.h"
#include "src/common/node_conf.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include AGORA_INC_TOPOLOGY

#include "agora_hold.h"
#include "agora_gres.h"
#include "agora_leaves.h"
#include "pol_agora.h"
#include "pol_app.h"
#include "pol_app_index.h"
#include "pol_apps.h"
#include "pol_ckpt.h"
#include "pol_estimate.h"
#include "topo_model.h"
#include "agora_sched.h"

static uint32_t gpu_plugin_id;

extern void agora_gpu_plugin_init(void)
{
	if (!gpu_plugin_id) {
		char gpu[] = "gpu";

		gpu_plugin_id = gres_build_id(gpu);
	}
}

/* GPUs a pending job asks for in total (0 for CPU-only jobs). */
static int job_gpus(job_record_t *job_ptr, int nodes)
{
	ListIterator it;
	gres_state_t *gs;
	uint64_t total = 0;

	if (!job_ptr->gres_list_req)
		return 0;
	it = list_iterator_create(job_ptr->gres_list_req);
	while ((gs = list_next(it))) {
		gres_job_state_t *js = gs->gres_data;

		if (gs->plugin_id != gpu_plugin_id || !js)
			continue;
		if (js->gres_per_job)
			total += js->gres_per_job;
		else if (js->gres_per_node)
			total += js->gres_per_node * (nodes > 0 ? nodes : 1);
		else if (js->total_gres && js->total_gres != NO_VAL64)
			total += js->total_gres;
	}
	list_iterator_destroy(it);
	return (int) MIN(total, (uint64_t) INT32_MAX);
}

/* Does the job ask for its GPUs per job (--gpus=N), not per node
 * (--gres=gpu:N, --gpus-per-node=N)? */
static bool job_gpus_per_job(job_record_t *job_ptr)
{
	ListIterator it;
	gres_state_t *gs;
	bool per_job = false;

	if (!job_ptr->gres_list_req)
		return false;
	it = list_iterator_create(job_ptr->gres_list_req);
	while ((gs = list_next(it))) {
		gres_job_state_t *js = gs->gres_data;

		if (gs->plugin_id == gpu_plugin_id && js && js->gres_per_job &&
		    !js->gres_per_node)
			per_job = true;
	}
	list_iterator_destroy(it);
	return per_job;
}

/* The credit account of a job, per AppDefinition (the app itself for
 * account and user; the account for name_prefix, array and burst, whose
 * apps pol_apps_build() groups per pass).  Caller xfree()s. */
extern char *agora_job_app(job_record_t *job_ptr, const agora_conf_t *conf)
{
	char key[POL_APP_KEY_LEN];

	/* the AppDefinition rule agoractl shares (agora_conf.h); empty and
	 * over-long names get a collision-free key (pol_app.h) */
	agora_conf_app_key(conf, job_ptr->account, job_ptr->user_id, key);
	return xstrdup(key);
}

/* Do apps come from pol_apps_build() (groups of jobs), or one per
 * credit account? */
static bool grouped_apps(const agora_conf_t *conf)
{
	return conf->app_def == AGORA_APP_NAME_PREFIX ||
	       conf->app_def == AGORA_APP_ARRAY ||
	       conf->app_def == AGORA_APP_BURST;
}

/*
 * AppDefinition=name_prefix, array, burst: group every job slurmctld
 * still knows (finished ones too, so that an app keeps the name of its
 * first job while it has jobs) with the core's builders, the same as the
 * simulator.  job_app[k] is the app key of the k-th job of job_list.
 */
static void build_apps(agora_snapshot_t *snap, const agora_conf_t *conf)
{
	int n = list_count(job_list), k = 0, g;
	pol_apps_job_t *aj = xcalloc(MAX(n, 1), sizeof(*aj));
	char(*uid)[12] = xcalloc(MAX(n, 1), sizeof(*uid));
	pol_apps_spec_t spec;
	pol_apps_t apps;
	agora_err_t err = { { 0 } };
	ListIterator it = list_iterator_create(job_list);
	job_record_t *job_ptr;

	agora_conf_apps_spec(conf, &spec);
	while ((job_ptr = list_next(it)) && k < n) {
		snprintf(uid[k], sizeof(uid[k]), "%u", job_ptr->user_id);
		aj[k].id = job_ptr->job_id;
		aj[k].submit = job_ptr->details ? job_ptr->details->submit_time
						: job_ptr->start_time;
		aj[k].account = job_ptr->account;
		aj[k].user = uid[k];
		aj[k].name = job_ptr->name;
		aj[k].array_id = job_ptr->array_job_id;
		k++;
	}
	list_iterator_destroy(it);
	if (pol_apps_build(&spec, aj, k, &apps, &err)) {
		error("site_factor/agora: apps: %s; one app per account this pass",
		      err.text);
	} else {
		char(*key)[POL_APP_KEY_LEN] = xcalloc(MAX(apps.n_apps, 1),
						      sizeof(*key));

		for (g = 0; g < apps.n_apps; g++) {
			char name[256];

			pol_apps_app_name(&spec, &apps, aj, g, name,
					  sizeof(name));
			pol_app_key(name, key[g]);
		}
		snap->job_app = xcalloc(MAX(k, 1), sizeof(*snap->job_app));
		for (g = 0; g < k; g++)
			memcpy(snap->job_app[g], key[apps.app[g]],
			       POL_APP_KEY_LEN);
		snap->n_job_app = k;
		xfree(key);
		pol_apps_free(&apps);
	}
	xfree(aj);
	xfree(uid);
}

/* The tenant index of app name (taken: xmalloc'ed) with credit account
 * acct (NULL: the app's own; taken), through the snapshot's hash index
 * (a linear scan if memory for it ran out). */
static int tenant_index(agora_snapshot_t *snap, char *name, char *acct)
{
	int i = -1;

	if (!snap->tenant_ix && !snap->n_tenants)
		snap->tenant_ix = pol_app_index_create();
	if (snap->tenant_ix) {
		if (pol_app_index_get(snap->tenant_ix, name, &i))
			i = -1;
	} else {
		for (i = snap->n_tenants - 1; i >= 0; i--)
			if (!xstrcmp(snap->tenants[i], name))
				break;
	}
	if (i >= 0) {
		xfree(name);
		xfree(acct);
		return i;
	}
	if (snap->tenant_ix &&
	    pol_app_index_put(snap->tenant_ix, name, snap->n_tenants) < 0)
		pol_app_index_destroy(&snap->tenant_ix);
	if (snap->n_tenants == snap->cap_tenants) {
		snap->cap_tenants = snap->cap_tenants ? 2 * snap->cap_tenants
						      : 64;
		xrecalloc(snap->tenants, snap->cap_tenants, sizeof(char *));
		xrecalloc(snap->accounts, snap->cap_tenants, sizeof(char *));
	}
	snap->tenants[snap->n_tenants] = name;
	snap->accounts[snap->n_tenants] = acct;
	return snap->n_tenants++;
}

/*
 * A completed job's run time into the policy's history of run times
 * (pol_estimate.h; the caller holds agora_state_lock).  Only jobs that
 * ended by themselves (COMPLETED) or at their limit (TIMEOUT): a
 * cancelled or failed run says little about the next one.  A job seen
 * again at a later pass is recorded once (the history ignores a sample
 * it has).  Keyed like the auction's lookups: app key, uid, GPUs; under
 * AppDefinition=name_prefix, array and burst the app is the job's group
 * (app_key, from build_apps(): the tenant name the policy looks its
 * history up by), as in the simulator, and the sample is also kept as the
 * credit account's (est_acct, pol_estimate.h).
 */
static void learn_end(job_record_t *job_ptr, const agora_conf_t *conf,
		      time_t since, const char *app_key)
{
	pol_est_t *est = agora_policy ? pol_agora_policy_estimates(agora_policy)
				      : NULL;
	char uid[24], key_app[POL_APP_KEY_LEN], *app;
	pol_est_key_t key;
	int64_t run;
	int nodes;

	if (!est || !job_ptr->start_time ||
	    job_ptr->end_time < job_ptr->start_time ||
	    (since && job_ptr->end_time + 3600 < since))
		return;
	run = (int64_t) (job_ptr->end_time - job_ptr->start_time) -
	      (int64_t) job_ptr->tot_sus_time;
	nodes = job_ptr->details ? (int) job_ptr->details->min_nodes : 1;
	key.gpus = job_gpus(job_ptr, nodes);
	if (run < 0 || key.gpus <= 0)
		return;
	app = agora_job_app(job_ptr, conf);
	pol_app_key(app, key_app);
	xfree(app);
	snprintf(uid, sizeof(uid), "%d", (int) job_ptr->user_id);
	key.app = app_key ? app_key : key_app;
	key.account = key_app; /* kept as the account's too (pol_estimate.h) */
	key.user = uid;
	key.name = NULL;
	if (pol_est_record(est, &key, run, (int64_t) job_ptr->end_time) < 0)
		debug("site_factor/agora: job %u: run time not recorded: %m",
		      job_ptr->job_id);
}

/*
 * What a preemption of the job loses (pol_ckpt.h): a requeueable job with
 * a --signal checkpoints on it (preempt_send_user_signal sends it before
 * GraceTime ends: nothing lost); else the interval agora.conf declares for
 * its QOS or partition (CheckpointInterval); else unknown (the policy
 * assumes a requeue loses the whole run).
 */
static int64_t job_ckpt(const job_record_t *job_ptr, const agora_conf_t *conf)
{
	int c;

	if (job_ptr->warn_signal && job_ptr->details &&
	    job_ptr->details->requeue)
		return POL_CKPT_CONTINUOUS;
	c = agora_conf_ckpt(conf,
			    job_ptr->part_ptr ? job_ptr->part_ptr->name : NULL,
			    job_ptr->qos_ptr ? job_ptr->qos_ptr->name : NULL);
	return c > 0 ? c : POL_CKPT_UNKNOWN;
}

/* Fill the fields pending and running jobs share. */
static void job_common(agora_snapshot_t *snap, pol_job_t *pj,
		       job_record_t *job_ptr, const agora_conf_t *conf, int k)
{
	job_details_t *d = job_ptr->details;
	int nodes = d ? (int) d->min_nodes : 1;

	pj->id = job_ptr->job_id;
	if (k < snap->n_job_app)
		pj->tenant = tenant_index(snap, xstrdup(snap->job_app[k]),
					  agora_job_app(job_ptr, conf));
	else
		pj->tenant = tenant_index(snap, agora_job_app(job_ptr, conf),
					  NULL);
	pj->user = (int) job_ptr->user_id;
	pj->band = job_ptr->part_ptr ? job_ptr->part_ptr->priority_tier : 0;
	pj->priority = job_ptr->priority;
	pj->total_gpus = job_gpus(job_ptr, nodes);
	pj->nodes = nodes;
	pj->gpus_per_node = nodes > 0 ? pj->total_gpus / nodes : 0;
	/* --gpus=N: Slurm splits N over the nodes as they have room (a
	 * 16-GPU job on 8-GPU nodes has min_nodes 1).  The auction's gang
	 * shape fits only an even split over -N nodes; otherwise any split
	 * (nodes 0): as a gang of min_nodes the job was refused by the
	 * auction's check and never won */
	if (job_gpus_per_job(job_ptr) &&
	    (nodes <= 1 || pj->total_gpus % nodes)) {
		pj->nodes = 0;
		pj->gpus_per_node = 0;
	}
	pj->min_gpus = pj->max_gpus = pj->total_gpus;
	pj->pool = POL_POOL_TRAINING;
	pj->submit = d ? d->submit_time : job_ptr->start_time;
	pj->time_limit = (job_ptr->time_limit == INFINITE ||
			  job_ptr->time_limit == NO_VAL)
				 ? 365 * 86400
				 : (int64_t) job_ptr->time_limit * 60;
	pj->dataset = -1;
	pj->requeueable = d && d->requeue != 0;
	pj->ckpt_s = job_ckpt(job_ptr, conf);
	pj->preemptions = (int) job_ptr->restart_cnt;
	pj->remaining = -1;
}

/* A running job's GPUs per node, as pol_alloc_t parts (xmalloc'ed). */
static void job_alloc(agora_snapshot_t *snap, pol_job_t *pj,
		      job_record_t *job_ptr)
{
	job_resources_t *jr = job_ptr->job_resrcs;
	gres_job_state_t *js = NULL;
	ListIterator it;
	gres_state_t *gs;
	int i, k = 0, first, last;

	if (!jr || !jr->node_bitmap)
		return;
	if (job_ptr->gres_list_alloc) {
		it = list_iterator_create(job_ptr->gres_list_alloc);
		while ((gs = list_next(it)))
			if (gs->plugin_id == gpu_plugin_id && gs->gres_data) {
				js = gs->gres_data;
				break;
			}
		list_iterator_destroy(it);
	}
	first = bit_ffs(jr->node_bitmap);
	last = bit_fls(jr->node_bitmap);
	pj->alloc.parts = xcalloc(MAX(bit_set_count(jr->node_bitmap), 1),
				  sizeof(pol_alloc_part_t));
	for (i = first; first >= 0 && i <= last; i++) {
		pol_gpumask_t mask = 0;
		int g, pi;

		if (!bit_test(jr->node_bitmap, i))
			continue;
		if (js && js->gres_bit_alloc && k < (int) js->node_cnt &&
		    js->gres_bit_alloc[k]) {
			for (g = 0; g < bit_size(js->gres_bit_alloc[k]) &&
				    g < POL_MAX_GPUS_PER_NODE;
			     g++)
				if (bit_test(js->gres_bit_alloc[k], g))
					mask |= (pol_gpumask_t) 1 << g;
		}
		k++;
		pi = (i < snap->n_slurm_nodes) ? snap->pol_index[i] : -1;
		if (pi < 0)
			continue; /* node outside the auction's pool */
		pj->alloc.parts[pj->alloc.n_parts].node = pi;
		pj->alloc.parts[pj->alloc.n_parts].gpus = mask;
		pj->alloc.n_parts++;
	}
}

/* GPUs a started job holds (allocated, else requested). */
static int job_alloc_gpus(job_record_t *job_ptr)
{
	ListIterator it;
	gres_state_t *gs;
	uint64_t total = 0;

	if (!job_ptr->gres_list_alloc)
		return job_gpus(job_ptr, job_ptr->node_cnt);
	it = list_iterator_create(job_ptr->gres_list_alloc);
	while ((gs = list_next(it))) {
		gres_job_state_t *js = gs->gres_data;

		if (gs->plugin_id == gpu_plugin_id && js &&
		    js->total_gres != NO_VAL64)
			total += js->total_gres;
	}
	list_iterator_destroy(it);
	return (int) MIN(total, (uint64_t) INT32_MAX);
}

/*
 * MAST's credit covers every GPU a team uses, not only the auction's: a
 * GPU job outside the AuctionPartitions that ran during (since, now] is
 * charged for that part of its run.
 */
static void charge_outside(agora_snapshot_t *snap, job_record_t *job_ptr,
			   const agora_conf_t *conf, time_t now, time_t since)
{
	time_t from, to;
	int gpus;

	if (!since || !job_ptr->start_time)
		return;
	if (IS_JOB_RUNNING(job_ptr) || IS_JOB_SUSPENDED(job_ptr))
		to = now;
	else if (IS_JOB_FINISHED(job_ptr) || IS_JOB_COMPLETING(job_ptr))
		to = MIN(job_ptr->end_time, now);
	else
		return;
	if (IS_JOB_SUSPENDED(job_ptr))
		return;
	from = MAX(job_ptr->start_time, since);
	if (to <= from)
		return;
	gpus = job_alloc_gpus(job_ptr);
	if (gpus <= 0)
		return;
	if (snap->n_charges == snap->cap_charges) {
		snap->cap_charges = snap->cap_charges ? 2 * snap->cap_charges
						      : 64;
		xrecalloc(snap->charges, snap->cap_charges,
			  sizeof(*snap->charges));
	}
	snap->charges[snap->n_charges].account = agora_job_app(job_ptr, conf);
	snap->charges[snap->n_charges].gpu_seconds = (double) gpus *
						     (double) (to - from);
	snap->n_charges++;
}

extern int agora_types_find(const agora_types_t *t, const char *node, int gpus)
{
	/* the node-type rule shared with the select wrapper (topo_model.h);
	 * find only: the placer is bound to its types until a reset */
	return topo_model_node_type_find(t->model, t->types, t->n_types, node,
					 gpus, NULL);
}

extern int agora_snapshot_build(agora_snapshot_t *snap,
				const agora_conf_t *conf,
				const agora_types_t *types, time_t now,
				time_t since)
{
	node_record_t *node_ptr;
	job_record_t *job_ptr;
	part_record_t *part_ptr;
	ListIterator it;
	bitstr_t *pool = NULL;
	int i, k, n = 0, pcap = 0, rcap = 0;

	memset(snap, 0, sizeof(*snap));
	agora_gpu_plugin_init();

	/* The auction's pool: nodes of the AuctionPartitions. */
	pool = bit_alloc(MAX(node_record_count, 1));
	it = list_iterator_create(part_list);
	while ((part_ptr = list_next(it)))
		if (part_ptr->node_bitmap &&
		    agora_conf_auction_partition(conf, part_ptr->name))
			bit_or(pool, part_ptr->node_bitmap);
	list_iterator_destroy(it);

	/* Nodes, with one node type per distinct GPU count. */
	snap->n_slurm_nodes = node_record_count;
	snap->pol_index = xcalloc(MAX(node_record_count, 1), sizeof(int));
	snap->slurm_index = xcalloc(MAX(node_record_count, 1), sizeof(int));
	snap->cluster.nodes = xcalloc(MAX(node_record_count, 1),
				      sizeof(pol_node_t));
	for (i = 0; i < node_record_count; i++)
		snap->pol_index[i] = -1;
	for (i = 0; (node_ptr = next_node(&i)); i++) {
		pol_node_t *pn = &snap->cluster.nodes[n];
		pol_gpumask_t free_mask;
		int g, t;

		if (!bit_test(pool, node_ptr->index))
			continue;
		g = agora_node_gpus(node_ptr, &free_mask);
		strlcpy(pn->name, node_ptr->name, sizeof(pn->name));
		t = agora_types_find(types, node_ptr->name, g);
		if (t < 0) {
			/* a shape the types do not cover (changed since the
			 * last reset): the auction skips this node, Slurm
			 * still schedules it; the thread rebuilds types */
			snap->n_uncovered++;
			continue;
		}
		pn->type = t;
		pn->leaf = 0;
		pn->pool = POL_POOL_TRAINING;
		/* slurm.conf's Weight, as the select wrapper reads it:
		 * sched_weight is Weight << 16 plus flag bits (24.11), which
		 * an int cut to nonsense from Weight 32768 up */
		pn->weight = node_ptr->config_ptr
				     ? (int) MIN(node_ptr->config_ptr->weight,
						 INT32_MAX)
				     : 0;
		pn->up = !IS_NODE_DOWN(node_ptr) && !IS_NODE_DRAIN(node_ptr) &&
			 !IS_NODE_FAIL(node_ptr) &&
			 !IS_NODE_NO_RESPOND(node_ptr);
		pn->free = pn->up ? free_mask : 0;
		snap->gpus_total += g;
		snap->gpus_free += pol_popcount(pn->free);
		snap->pol_index[node_ptr->index] = n;
		snap->slurm_index[n] = node_ptr->index;
		n++;
	}
	FREE_NULL_BITMAP(pool);
	snap->cluster.n_nodes = n;
	snap->cluster.types = types->types;
	snap->cluster.n_types = types->n_types;
	agora_set_leaves(&snap->cluster, snap->slurm_index);
	if (snap->cluster.n_leaves == 0)
		snap->cluster.n_leaves = 1;
	strlcpy(snap->cluster.name,
		agora_cluster_name ? agora_cluster_name : "",
		sizeof(snap->cluster.name));

	/* Auction-managed GPU jobs: pending ones that Slurm would start now,
	 * and running ones. */
	if (grouped_apps(conf))
		build_apps(snap, conf);
	it = list_iterator_create(job_list);
	for (k = -1; (job_ptr = list_next(it));) {
		pol_job_t *pj;

		k++; /* job_list's order, as build_apps() saw it */
		if (!agora_job_auction_managed(job_ptr, conf)) {
			charge_outside(snap, job_ptr, conf, now, since);
			continue;
		}
		if (IS_JOB_PENDING(job_ptr)) {
			if (!job_gpus(
				    job_ptr,
				    job_ptr->details
					    ? (int) job_ptr->details->min_nodes
					    : 1)) {
				snap->n_cpu_only++;
				continue;
			}
			if (job_ptr->het_job_id) {
				if (snap->n_het == snap->cap_het) {
					snap->cap_het =
						snap->cap_het
							? 2 * snap->cap_het
							: 64;
					xrecalloc(snap->het, snap->cap_het,
						  sizeof(uint32_t));
				}
				snap->het[snap->n_het++] = job_ptr->job_id;
				continue;
			}
			/* also in a partition the auction does not manage:
			 * credit order only, never a win (its boost would
			 * count there too) */
			if (!agora_job_ready(job_ptr, now) ||
			    !agora_job_auction_only(job_ptr, conf)) {
				snap->n_not_ready++;
				continue;
			}
			if (snap->n_pending == pcap) {
				pcap = pcap ? pcap * 2 : 64;
				xrecalloc(snap->pending, pcap,
					  sizeof(pol_job_t));
			}
			pj = &snap->pending[snap->n_pending++];
			job_common(snap, pj, job_ptr, conf, k);
			pj->state = POL_JOB_PENDING;
		} else if (IS_JOB_RUNNING(job_ptr) &&
			   !IS_JOB_COMPLETING(job_ptr)) {
			if (job_alloc_gpus(job_ptr) <= 0)
				continue; /* CPU-only: nothing to lease */
			if (snap->n_running == rcap) {
				rcap = rcap ? rcap * 2 : 64;
				xrecalloc(snap->running, rcap,
					  sizeof(pol_job_t));
			}
			pj = &snap->running[snap->n_running++];
			job_common(snap, pj, job_ptr, conf, k);
			pj->state = POL_JOB_RUNNING;
			pj->start = job_ptr->start_time;
			job_alloc(snap, pj, job_ptr);
			pj->total_gpus = pol_alloc_gpus(&pj->alloc)
						 ? pol_alloc_gpus(&pj->alloc)
						 : pj->total_gpus;
			pj->min_gpus = pj->max_gpus = pj->total_gpus;
			pj->attained = (int64_t) pj->total_gpus *
				       MAX(now - job_ptr->start_time, 0);
			pj->requeueable = pj->requeueable &&
					  job_ptr->batch_flag &&
					  !job_ptr->het_job_id;
		} else if (IS_JOB_COMPLETE(job_ptr) ||
			   IS_JOB_TIMEOUT(job_ptr)) {
			learn_end(job_ptr, conf, since,
				  k < snap->n_job_app ? snap->job_app[k]
						      : NULL);
		}
	}
	list_iterator_destroy(it);
	snap->pol.cluster = &snap->cluster;
	snap->pol.pending = snap->pending;
	snap->pol.n_pending = snap->n_pending;
	snap->pol.running = snap->running;
	snap->pol.n_running = snap->n_running;
	snap->pol.n_tenants = snap->n_tenants;
	return SLURM_SUCCESS;
}

extern void agora_snapshot_free(agora_snapshot_t *snap)
{
	int i;

	for (i = 0; i < snap->n_charges; i++)
		xfree(snap->charges[i].account);
	xfree(snap->charges);
	for (i = 0; i < snap->n_running; i++)
		xfree(snap->running[i].alloc.parts);
	xfree(snap->running);
	for (i = 0; i < snap->n_tenants; i++) {
		xfree(snap->tenants[i]);
		xfree(snap->accounts[i]);
	}
	xfree(snap->tenants);
	xfree(snap->accounts);
	xfree(snap->job_app);
	pol_app_index_destroy(&snap->tenant_ix);
	xfree(snap->pending);
	xfree(snap->het);
	xfree(snap->cluster.nodes);
	xfree(snap->pol_index);
	xfree(snap->slurm_index);
	memset(snap, 0, sizeof(*snap));
}
