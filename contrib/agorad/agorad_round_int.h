/*
 * agorad_round_int.h - what the files of one auction round share.
 *
 * agorad_round.c    the round: the federation, the children, the steps,
 *                   the state file (owns the round's context, ad_round_t)
 * agorad_survey.c   what the survey and plans children do on a cluster
 * agorad_auction.c  the pins child, the catalog, the credit exchange and
 *                   the decision texts of the auction
 * agorad_round_util.c  scopy, write_all, cluster_index (used by all three;
 *                   agorad_round.c calls the other two, never the reverse)
 */
#ifndef AGORAD_ROUND_INT_H
#define AGORAD_ROUND_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <slurm/slurm.h>
#include "agora_compat_pub.h"
#include <slurm/slurmdb.h>

#include "agorad.h"
#include "pol_fed.h"
#include "pol_fed_hold.h"
#include "topo_model.h"

#define AD_NAME          64
#define AD_STR           256
#define AD_LIST          1024 /* node lists */
#define AD_MAX_CLUSTERS  64
#define AD_CHILD_LIMIT_S 30
#define AD_STOP_GRACE_S  5 /* SIGTERM to SIGKILL of a child */

/* Items of slurmctld_plugstack_conf (Slurm 22.05 read_config.h layout,
 * as agoractl reads them). */
typedef struct {
	char *name;
	char *value;
} ad_pair_t;
typedef struct {
	char *name;
	List key_pairs;
} ad_plugin_params_t;

typedef struct ad_cluster {
	char name[AD_NAME];
	slurmdb_cluster_rec_t *rec;
	bool up;
	int gpus_total, gpus_free, gpus_pending, gpus_per_node, n_nodes;
	/* this round's running jobs and queue, for the start estimate that
	 * replaces will-run answers that cannot be true (busy owned) */
	pol_fed_busy_t *busy;
	pol_fed_cluster_load_t load;
} ad_cluster_t;

typedef struct ad_job {
	uint32_t job_id, user_id, group_id, num_nodes, max_nodes, num_tasks,
		num_cpus, time_limit;
	uint16_t cpus_per_task, ntasks_per_node;
	uint64_t pn_min_memory;
	int gpus;
	int64_t submit;
	int act;                   /* pol_fed_hold_act_t: what is left to do */
	int64_t hold_since;        /* when Agora's hold began */
	char pin_cluster[AD_NAME]; /* act RELEASE/FINISH: the winner */
	char origin[AD_NAME], account[AD_NAME], partition[AD_NAME],
		qos[AD_NAME], dataset[AD_NAME];
	char tres_per_node[AD_STR], tres_per_job[AD_STR], tres_per_task[AD_STR],
		tres_per_socket[AD_STR], cpus_per_tres[AD_STR],
		mem_per_tres[AD_STR], features[AD_STR], viable[AD_STR],
		prefer[AD_STR];
	/* the rest of the request the will-run must see (medium 7) */
	char licenses[AD_STR], reservation[AD_NAME], cluster_features[AD_STR],
		network[AD_STR], req_nodes[AD_LIST], exc_nodes[AD_LIST];
	/* the job's working directory: 24.11 refuses a will-run without
	 * one ("Job cannot be submitted without the current working
	 * directory specified"); 22.05 ignores it there */
	char work_dir[AD_LIST];
	uint16_t shared, contiguous, core_spec, sockets_per_node,
		cores_per_socket, threads_per_core, ntasks_per_socket,
		ntasks_per_core, ntasks_per_tres;
	uint32_t req_switch, wait4switch;
	/* a field of the request longer than its copy: no will-run is asked
	 * (a truncated request would be a different job); "" if all fit */
	char too_long[32];
} ad_job_t;

typedef struct {
	int ok;
	int gpus_total, gpus_free, gpus_pending, gpus_per_node, n_nodes;
	int gpus_queued; /* pending GPUs that may start before ours */
	int n_jobs, n_usage, n_busy; /* then n_jobs ad_job_t, n_usage
					ad_usage_t, n_busy pol_fed_busy_t */
	double queued_gpu_s;
	int64_t max_limit_s;
	char err[128];
} ad_survey_hdr_t;

typedef struct {
	char app[AD_NAME];
	double usage, quota;
} ad_usage_t;

typedef struct {
	uint32_t idx;
	int valid;
	int64_t start;
	int n_preempt, n_nodes;
	double locality; /* the placer's level on the planned nodes, <0 unknown */
	int hw_match;    /* the planned nodes have the features it prefers */
	char err[96];
} ad_plan_msg_t;

typedef struct {
	uint32_t idx;
	int rc; /* 0 pinned and released; else the Slurm error */
	int step;
} ad_pin_msg_t;

typedef struct {
	pol_fed_catalog_t cat;  /* sites: one per cluster, our order */
	pol_fed_catalog_t file; /* FedCatalog as parsed (owns datasets) */
	bool have_file;
	int *col_of_site; /* file site -> cluster index */
} ad_catalog_t;

/*
 * One round's context, passed explicitly to every step (no file shares
 * a global with another).  The clusters are kept between rounds (only
 * what Slurm does not show: the records and whether each answered); the
 * rest is rebuilt each round.
 */
typedef struct ad_round {
	ad_cluster_t clusters[AD_MAX_CLUSTERS];
	int n_clusters;
	/* TopologyModel, as the select wrapper reads it (NULL: none; nodes
	 * get uniform types); borrowed from model_refresh() */
	const topo_model_t *model;
	/* per round */
	ad_job_t *jobs; /* the jobs with a step of the hold left */
	int n_jobs;
	ad_usage_t *usage[AD_MAX_CLUSTERS];
	int n_usage[AD_MAX_CLUSTERS];
	char *usage_text[AD_MAX_CLUSTERS]; /* payload for cluster c */
	pol_fed_award_t *awards;
	char **decision;     /* AdminComment text per job */
	uint64_t *plan_hw;   /* per job: bit c, c's plan is on preferred
				nodes */
	int *winner_cluster; /* per job: the auction's winner, -1 none */
} ad_round_t;

/* agorad_round_util.c */
/* Copy src into dst[size], cut if longer. */
void scopy(char *dst, const char *src, size_t size);
int cluster_index(const ad_round_t *r, const char *name);
int write_all(int fd, const void *p, size_t n);

/* agorad_survey.c: steps 1 and 2, run in the child of cluster c,
 * reporting on fd */
void survey_child(const ad_round_t *r, int c, int fd);
void plans_child(const ad_round_t *r, int c, int fd);
/* What the federation hold's state machine sees of job j. */
pol_fed_hold_obs_t hold_obs(const slurm_job_info_t *j);
/* Whether job j may run on cluster (its viable siblings). */
bool eligible(const ad_job_t *j, const char *cluster);

/* agorad_auction.c: step 3's inputs and texts, step 4 (the pins child) */
void pins_child(const ad_round_t *r, int c, int fd);
void catalog_build(const ad_round_t *r, const agora_conf_t *conf,
		   ad_catalog_t *ac);
void catalog_free(ad_catalog_t *ac);
/* TopologyModel, loaded or reloaded if it changed (NULL: none). */
const topo_model_t *model_refresh(const agora_conf_t *conf);
void model_fini(void);
/* The team's credit fraction over the whole federation. */
double fed_credit(const ad_round_t *r, const char *team);
/* r->usage_text[c]: the GPU-hours of every app on the other clusters */
void build_usage_texts(ad_round_t *r);
/* The AdminComment text of job i's award (malloc'ed). */
char *decision_text(const ad_round_t *r, int i, const pol_fed_award_t *a,
		    const pol_fed_weights_t *w, const ad_catalog_t *ac,
		    const pol_fed_job_t *pj, const pol_fed_plan_t *plans,
		    time_t now);

#endif
