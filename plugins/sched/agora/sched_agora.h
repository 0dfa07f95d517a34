/*
 * sched_agora.h - entry points and internal interfaces of sched/agora.
 *
 * The plugin is a thin adapter (doc/design.md): sched_agora.c is the
 * plugin shell (config, embedded sched/backfill, thread start/stop),
 * agora_thread.c runs the pass (lock, snapshot, unlock, decide, re-check,
 * apply) and agora_snapshot.c copies Slurm state into the core's pol_*
 * structs.  Only these files include Slurm headers.
 */
#ifndef SCHED_AGORA_H
#define SCHED_AGORA_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#include "agora_conf.h"
#include "pol_model.h"

/* Slurm plugin entry points (looked up by name by the plugin loader). */
extern int init(void);
extern void fini(void);
extern int sched_p_reconfig(void);

/* The configuration currently in force, and its lock (agora_conf_lock). */
extern agora_conf_t agora_conf;
extern pthread_mutex_t agora_conf_lock;

/* Scheduling thread (agora_thread.c). */
extern void agora_thread_start(void);
extern void agora_thread_stop(void);
extern void agora_thread_wake(void);
/* (Re)create the policy from agora_conf (caller holds agora_conf_lock);
 * the credit ledger is carried over or recovered from StateSaveLocation. */
extern void agora_policy_reset(void);
/* Save the ledger and free the policy (takes agora_conf_lock). */
extern void agora_policy_fini(void);

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
	pol_job_t *pending; /* auction-managed pending jobs */
	int n_pending;
	pol_job_t *running; /* auction-managed running jobs */
	int n_running;
	int n_managed; /* pending jobs in AuctionPartitions */
	/* GPU usage outside the auction, charged to the credit ledger by the
	 * adapter (the auction's own jobs are charged by the core) */
	struct agora_charge {
		char *account;
		double gpu_seconds;
	} * charges;
	int n_charges;
	char **tenants; /* tenant index -> app name */
	int n_tenants;
	time_t job_update; /* last_job_update when taken */
	time_t node_update;
	int gpus_total, gpus_free;
	bool types_stale; /* a node's type is not in the types: rebuild */
} agora_snapshot_t;

/*
 * The node types the auction places on: the TopologyModel's types first
 * (nodes matched by the model's hostlists), then one uniform type per GPU
 * count of the other nodes.  Fixed between policy resets, because the
 * agora placer is bound to its types.  Owned by agora_thread.c.
 */
typedef struct agora_types {
	pol_node_type_t *types;
	int n_types;
	int n_model;              /* first n_model come from the model */
	struct topo_model *model; /* NULL without TopologyModel */
} agora_types_t;

/* Node type index for a node (model match, else uniform by GPU count),
 * -1 if the types do not cover it (they must be rebuilt). */
extern int agora_types_find(const agora_types_t *t, const char *node, int gpus);

/* GPUs of a node (count) and its free ones (mask).  Node lock held. */
struct node_record;
extern int agora_node_gpus(struct node_record *node_ptr,
			   pol_gpumask_t *free_mask);
extern void agora_gpu_plugin_init(void);

/* Needs at least READ job, node and part locks held by the caller. */
/* since: the previous pass (GPU-seconds outside the auction are charged
 * for (since, now]); 0 at the first pass. */
extern int agora_snapshot_build(agora_snapshot_t *snap,
				const agora_conf_t *conf,
				const agora_types_t *types, time_t now,
				time_t since);
extern void agora_snapshot_free(agora_snapshot_t *snap);

#endif
