/*
 * agora_sched.h - internal interfaces of site_factor/agora, the plugin that
 * carries Agora's scheduling pass inside slurmctld.
 *
 * "Agora decides, Slurm acts" (doc/design.md): a thread of this plugin
 * snapshots Slurm state, lets the core run the credit order and the Themis
 * auction, and publishes the result as an award table (pol_award.h).
 * Slurm's own main scheduler and backfill start every job; Agora steers
 * them only through
 *   - priority: site_factor_p_set() adds AGORA_AWARD_BOOST to the site
 *     factor of jobs that won GPUs, on top of the credit term;
 *   - preemptability: preempt/agora asks agora_export_preemptable()
 *     whether a winner may preempt a job whose lease is lost.
 *
 * Files: site_factor_agora.c (plugin shell, configuration, the site
 * factor, the exports for preempt/agora), agora_thread.c (the pass),
 * agora_policy.c (policy, ledger, view file, node types),
 * agora_snapshot.c (Slurm state -> pol_* structs).
 *
 * Lock order, everywhere: slurmctld locks first, then agora_state_lock,
 * then award_lock.  Nothing takes a slurmctld lock while holding an
 * Agora lock.
 */
#ifndef AGORA_SCHED_H
#define AGORA_SCHED_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "agora_conf.h"
#include "pol_award.h"
#include "pol_model.h"

/* Site factor added to jobs that won GPUs at the last auction: above any
 * sum of multifactor weights an admin plausibly sets, below 2^32. */
#define AGORA_AWARD_BOOST 1000000000u

/* The configuration in force and the policy state: agora_state_lock. */
extern agora_conf_t agora_conf;
extern pthread_mutex_t agora_state_lock;

/* The published award table (immutable once published): award_lock. */
extern pthread_mutex_t award_lock;
extern pol_award_t *award_current;
/* Replace the published table (takes award_lock); frees the old one. */
extern void agora_award_publish(pol_award_t *a);
/* Whether Agora's thread may still call set_job_prio(): not once slurmctld
 * stops (agora_thread.c).  Ask right before each call. */
extern bool agora_may_set_prio(void);

/* Scheduling thread (agora_thread.c). */
/* agora_admin_sf.c: the site factor to set on a pending job, Agora's
 * value unless an admin set another (then kept); award_lock held */
struct job_record;
extern uint32_t agora_admin_sf(struct job_record *job_ptr,
			       uint32_t agora_value);
extern void agora_admin_sf_prune(void); /* after an update pass */
extern void agora_admin_sf_fini(void);
/* agora_notices.c: settings beside it that it overrides, logged once */
extern void agora_site_factor_notices(void);
extern void agora_thread_start(void);
extern void agora_thread_stop(void);
extern void agora_thread_wake(void);
/* A parsed configuration for the thread to take at its next pass (the
 * caller gives up c).  Never blocks on a running decision. */
extern void agora_conf_offer(agora_conf_t *c);

/* Policy state (agora_policy.c).  Callers hold agora_state_lock. */
struct pol_agora_policy;
extern struct pol_agora_policy *agora_policy; /* NULL: no policy built */
extern char **agora_tenant_names; /* names last given to the policy */
extern int agora_n_tenant_names;
/* (Re)create the policy from agora_conf, carrying the ledger, leases and
 * history over (or recovering them from StateSaveLocation at start-up).
 * Reads the node table: slurmctld read locks (node) held or not needed. */
extern void agora_policy_reset(void);
/* Copies of slurm_conf strings that a reconfigure may free: taken by the
 * thread under the config read lock, used without it. */
extern char *agora_state_dir, *agora_cluster_name;
extern void agora_conf_strings_copy(void);
extern void agora_policy_fini(void);
extern void agora_ledger_save(void);
struct agora_snapshot;
extern void agora_view_write(const struct agora_snapshot *snap, time_t now,
			     uint64_t pass_count);

/*
 * A snapshot owned by the adapter: the core structs plus the names the
 * core does not need (for applying and logging).  Built under slurmctld
 * read locks by agora_snapshot_build(), freed by agora_snapshot_free().
 */
typedef struct agora_snapshot {
	pol_snapshot_t pol;    /* what the core sees (points into below) */
	pol_cluster_t cluster; /* nodes of the AuctionPartitions */
	int *pol_index;        /* slurm node index -> cluster node, -1 */
	int *slurm_index;      /* cluster node -> slurm node index */
	int n_slurm_nodes;
	pol_job_t *pending; /* auction-managed pending GPU jobs */
	int n_pending;
	pol_job_t *running; /* auction-managed running GPU jobs */
	int n_running;
	int n_cpu_only;  /* managed jobs without GPUs: Slurm runs them */
	int n_not_ready; /* pending, but Slurm would not start them now */
	int n_uncovered; /* nodes no node type covers (skipped) */
	uint32_t *het;   /* pending het job components: left to Slurm */
	int n_het, cap_het;
	/* GPU usage outside the auction, charged to the credit ledger by the
	 * adapter (the auction's own jobs are charged by the core) */
	struct agora_charge {
		char *account;
		double gpu_seconds;
	} * charges;
	int n_charges, cap_charges; /* grown by doubling: the snapshot runs
				       under slurmctld's read lock */
	char **tenants;             /* tenant index -> app name */
	char **accounts; /* tenant index -> credit account (NULL: the app) */
	int n_tenants, cap_tenants;
	struct pol_app_index *tenant_ix; /* app name -> tenant index */
	/* AppDefinition=name_prefix/array/burst: the app key of the k-th job
	 * of job_list (pol_apps_build()), n_job_app of them; else NULL */
	char (*job_app)[64];
	int n_job_app;
	int gpus_total, gpus_free;
} agora_snapshot_t;

/*
 * The node types the auction places on: the TopologyModel's types first
 * (nodes matched by the model's hostlists), then one uniform type per GPU
 * count of the other nodes.  Fixed between policy resets, because the
 * agora placer is bound to its types.  Owned by agora_policy.c.
 */
typedef struct agora_types {
	pol_node_type_t *types;
	int n_types;
	int n_model;              /* first n_model come from the model */
	struct topo_model *model; /* NULL without TopologyModel */
} agora_types_t;
extern agora_types_t agora_types;

/* Node type index for a node (model match, else uniform by GPU count),
 * -1 if the types do not cover it. */
extern int agora_types_find(const agora_types_t *t, const char *node, int gpus);

/* The gres plugin id of gpu, for the jobs' GPU counts (snapshot). */
extern void agora_gpu_plugin_init(void);

/* The credit account of a job, per AppDefinition: its app under
 * account and user, its account under name_prefix/array/burst
 * (xmalloc'ed). */
struct job_record;
extern char *agora_job_app(struct job_record *job_ptr,
			   const agora_conf_t *conf);

/* Needs at least READ job, node and part locks, and agora_state_lock.
 * since: the previous pass (GPU-seconds outside the auction are charged
 * for (since, now]); 0 at the first pass. */
extern int agora_snapshot_build(agora_snapshot_t *snap,
				const agora_conf_t *conf,
				const agora_types_t *types, time_t now,
				time_t since);
extern void agora_snapshot_free(agora_snapshot_t *snap);

#endif
