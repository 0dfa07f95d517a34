/*
 * agorad_round_int.h - what the files of one auction round share.
 *
 * agorad_round.c    the round: each step's answers, the auction's inputs
 *                   (owns the round's context, ad_round_t)
 * agorad_clusters.c step 0: the federation's clusters from slurmdbd
 * agorad_children.c one child per cluster, answers through pipes
 * agorad_state.c    the state file agoractl fed / explain read
 * agorad_survey.c   what the survey and plans children do on a cluster
 * agorad_kept.c     a cluster's kept survey answer standing in for this
 *                   round's (unchanged job table, a cluster late to answer)
 * agorad_auction.c  the pins child, the catalog, the credit exchange and
 *                   the decision texts of the auction
 * agorad_pins.c     step 4 in flight: a round's pins run on while the
 *                   next rounds go on
 * agorad_round_util.c  scopy, write_all, cluster_index, ad_now_s (used by
 *                   all; agorad_round.c calls the others, never the
 *                   reverse)
 */
#ifndef AGORAD_ROUND_INT_H
#define AGORAD_ROUND_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <slurm/slurm.h>
#include "agora_compat_pub.h"
#include <slurm/slurmdb.h>

#include "agorad.h"
#include "pol_fed.h"
#include "pol_fed_backoff.h"
#include "pol_fed_inflight.h"
#include "pol_fed_pace.h"
#include "pol_fed_pin.h"
#include "pol_fed_willrun.h"
#include "topo_model.h"

#define AD_NAME          64
#define AD_STR           256
#define AD_LIST          1024 /* node lists */
#define AD_MAX_CLUSTERS  64
#define AD_CHILD_LIMIT_S 30
#define AD_STOP_GRACE_S  5 /* SIGTERM to SIGKILL of a child */
/* a survey still reading this long after the round's first answer may
 * be given up for its last answer (FedSurveyMaxAge, pol_fed_survey_late);
 * an idle cluster answers in 0.01-0.07 s on the harness */
#define AD_SURVEY_LATE_S 0.2
/* a StateSaveLocation path at most (longer: the configuration is read
 * every round, as before the cache) */
#define AD_SAVE_DIR 1024
/* the survey reads a cluster's configuration (for its StateSaveLocation)
 * this often at most; a reconfigure that moves it is seen within this */
#define AD_CONF_REREAD_S 60
/* a pins child's processes at most, and the jobs that make one more
 * worth its fork (pol_fed_pin_workers); 8 rather than 4: p99 of a
 * 1,000-job burst 5.2-6.0 s against 6.4-7.4 s in four interleaved pairs
 * (doc/evaluation.md, "Dispatch through agorad") */
#define AD_PINS_WORKERS    8
#define AD_PINS_PER_WORKER 16

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

/* A survey child given up as late (run_children_late): not killed (that
 * would cost slurmctld an error line and the read it is doing); it reads
 * on, and the next round takes its answer instead of asking again.  pid
 * <= 0: none. */
typedef struct {
	pid_t pid;
	int fd;
	char *out;
	size_t len, cap;
	double started; /* ad_now_s() at its fork: what its answer says */
} ad_held_child_t;

/* The GPUs of one account's running jobs on a cluster (the metrics'
 * agora_account_running_gpus, from the round's surveys via the state
 * file: doc/agorad.8).
 * A survey tells at most AD_ACCT_MAX accounts; the rest are summed into
 * the last row, named AD_ACCT_OTHER. */
#define AD_ACCT_MAX   256
#define AD_ACCT_OTHER "(other accounts)"
typedef struct {
	char account[AD_NAME];
	int gpus;
} ad_acct_gpus_t;

typedef struct ad_cluster {
	char name[AD_NAME];
	slurmdb_cluster_rec_t *rec;
	bool up;
	int gpus_total, gpus_free, gpus_pending, gpus_per_node, n_nodes;
	/* this round's running jobs and queue, for the start estimate that
	 * replaces will-run answers that cannot be true (busy owned) */
	pol_fed_busy_t *busy;
	pol_fed_cluster_load_t load;
	/* kept between rounds: the last survey answer whose job part was
	 * read in full, and the job table's update time it was read at
	 * (the next survey asks with it: SLURM_NO_CHANGE_IN_DATA reuses the
	 * job part); NULL/0: none */
	char *survey;
	size_t survey_len;
	time_t jobs_update;
	/* when that answer came (ad_now_s), and whether this round stands
	 * on it because the cluster was late to answer (run_children_late) */
	double survey_at;
	bool survey_late;
	ad_held_child_t late_child;
	int64_t will_run_at; /* the last will-run sent (kept) */
	bool heartbeat;      /* this round's plans child sends one if it
				asks nothing else (pol_fed_heartbeat_due) */
	/* where the last survey read the usage per app ("none: why") */
	char usage_src[256];
	/* kept between rounds: its StateSaveLocation (the view file's
	 * directory) from the last configuration read, and when ("" / 0:
	 * none); the survey reads the configuration again after
	 * AD_CONF_REREAD_S */
	char save_dir[AD_SAVE_DIR];
	time_t save_dir_at;
	/* kept with it: its PreemptType is preempt/none (no will-run can
	 * preempt there: pol_fed_willrun_moot) */
	bool preempt_none;
	/* kept between rounds: skipped for a while after a timeout */
	pol_fed_backoff_t backoff;
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
	char pin_cluster[AD_NAME]; /* act RELEASE/FINISH: the winner;
				      REAUCTION: the old winner */
	int64_t stamp_at;          /* REAUCTION: the old decision's pin time */
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
	 * directory specified"); 22.05 ignores it there.  Not PATH_MAX:
	 * every held job's record crosses the survey pipe and is copied
	 * a few times per round (4 KiB more per job, 4 MB per 1,000-job
	 * burst), and a longer one is refused, never cut (too_long) */
	char work_dir[AD_LIST];
	uint16_t shared, contiguous, core_spec, sockets_per_node,
		cores_per_socket, threads_per_core, ntasks_per_socket,
		ntasks_per_core, ntasks_per_tres;
	uint32_t req_switch, wait4switch;
	/* a field of the request longer than its copy: no will-run is asked
	 * (a truncated request would be a different job); "" if all fit */
	char too_long[32];
} ad_job_t;

/* A survey answer's job part: what the cluster's job table gives (the
 * jobs to act on, the queue, the running jobs' ends, the copies and
 * cancels, the GPUs per account).  An answer whose job table did not
 * change (jobs_same) carries none of it; survey_merge puts the last full
 * answer's back whole. */
typedef struct {
	int gpus_pending;
	int gpus_queued;    /* pending GPUs that may start before ours */
	int n_jobs, n_busy; /* then n_jobs ad_job_t, (n_usage ad_usage_t,)
			       n_busy pol_fed_busy_t */
	double queued_gpu_s;
	int64_t max_limit_s;
	int jobs_queued;     /* the pending jobs in gpus_queued */
	int64_t jobs_update; /* the job table's last_update */
	/* the earliest time a decision on the job part turns by the clock
	 * alone (pol_fed_pin_due, the failover of a pin); 0 none.  Once it
	 * has come the next survey reads the job table in full even if it
	 * did not change */
	int64_t recheck_at;
	int n_copies; /* then n_copies uint32_t: the ids of the active
			 copies here of jobs from other origins (the pins
			 that have arrived) */
	/* then n_alive uint32_t: the live copies here of jobs from other
	 * origins (pending, running, suspended; not revoked), and
	 * n_cancelled uint32_t: the jobs from this origin that it shows
	 * cancelled (pol_fed_orphans) */
	int n_alive, n_cancelled;
	/* the running jobs' GPUs per account */
	int n_acct;
	ad_acct_gpus_t acct[AD_ACCT_MAX];
} ad_jobpart_t;

typedef struct {
	int ok;
	int gpus_total, gpus_free, gpus_per_node, n_nodes;
	int n_usage;   /* then jp.n_jobs ad_job_t, n_usage ad_usage_t, then
			the rest of the job part's arrays */
	int jobs_same; /* the job table did not change since the
				update time asked with: jp is empty, the last
				answer's holds */
	ad_jobpart_t jp;
	int timed_out; /* !ok: slurmctld did not answer in time */
	char err[128];
	char usage_src[256]; /* agorad_usage.c: the file, or "none: why" */
	int conf_read;       /* the configuration was read: save_dir is its
				StateSaveLocation */
	char save_dir[AD_SAVE_DIR];
	int preempt_none; /* conf_read: PreemptType is preempt/none */
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
	int64_t done_ms; /* wall clock (ms) when its last step answered */
} ad_pin_msg_t;

typedef struct {
	pol_fed_catalog_t cat;  /* sites: one per cluster, our order */
	pol_fed_catalog_t file; /* FedCatalog as parsed (owns datasets) */
	bool have_file;
	int *col_of_site; /* file site -> cluster index */
} ad_catalog_t;

/* A will-run answer kept between rounds (pol_fed_willrun.h). */
typedef struct {
	char cluster[AD_NAME];
	char *key; /* the shape (shape_key) */
	ad_plan_msg_t m;
	pol_fed_willrun_kept_t kept;
} ad_willrun_t;

/* A set of children, one per cluster (agorad_children.c). */
typedef struct ad_children {
	int n, open_n, limit_s;
	pid_t pid[AD_MAX_CLUSTERS];
	int fd[AD_MAX_CLUSTERS];
	char *out[AD_MAX_CLUSTERS];
	size_t len[AD_MAX_CLUSTERS], cap[AD_MAX_CLUSTERS];
	char name[AD_MAX_CLUSTERS][AD_NAME];
	double deadline;
	bool termed, stop_seen;
} ad_children_t;

/* What the answers of a pins step need of its round's job idx (the
 * round's own arrays are gone when a later round collects them). */
typedef struct ad_pin_job {
	uint32_t job_id;
	bool mine; /* handed to the pins children */
	int act, gpus;
	int64_t submit;
	char origin[AD_NAME], winner[AD_NAME], pin_cluster[AD_NAME];
	char *decision; /* malloc'ed (bids only) */
} ad_pin_job_t;

/* A pins step in flight: its children pin while later rounds survey,
 * plan and auction the jobs it does not have. */
typedef struct ad_pins_run {
	bool active;
	unsigned long long round;
	double started;
	ad_children_t ch;
	ad_pin_job_t *jobs;
	int n_jobs;
} ad_pins_run_t;

/* pins steps in flight at most.  1: a round surveys, plans and
 * auctions while the last round's pins run, and its own pins start when
 * those end.  Two steps at once (8 updates in flight at one slurmctld)
 * halved the pins' rate on the 2-core harness: slurmctld applies
 * updates one at a time under its job write lock, and more writers
 * waiting only made each slower (doc/evaluation.md, "Dispatch"). */
#define AD_PINS_RUNS 1
/* Whether a round's pins run on while the next round surveys, plans and
 * auctions (1), or end within their round as before (0).  Off: on the
 * 2-core harness the next survey (a job table read of 1,000 jobs at the
 * origin) then competed with the pins for slurmctld's CPU and locks:
 * that survey took 3.9 s instead of 0.7-0.9 s and the pins ran at 42/s
 * instead of 100-250/s, and no burst got faster (doc/evaluation.md,
 * "Dispatch").  The machinery stays for a slurmctld with cores to
 * spare; the safety rules hold either way (agorad_pins.c). */
#define AD_PINS_OVERLAP 0

/*
 * One round's context, passed explicitly to every step (no file shares
 * a global with another).  The clusters are kept between rounds (only
 * what Slurm does not show: the records and whether each answered); the
 * rest is rebuilt each round.
 */
typedef struct ad_round {
	char fed_name[AD_NAME]; /* the federation (step 0) */
	ad_cluster_t clusters[AD_MAX_CLUSTERS];
	int n_clusters;
	/* TopologyModel, as the select wrapper reads it (NULL: none; nodes
	 * get uniform types); borrowed from model_refresh() */
	const topo_model_t *model;
	int pin_start_timeout_s; /* FedPinStartTimeout (0: off) */
	int survey_max_age_s;    /* FedSurveyMaxAge (0: always wait) */
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
	/* step 2's requests: each job's shape, and per job and cluster
	 * (job * n_clusters + c) what the plans child does: ask, take the
	 * kept answer wr_plan (REUSE), or wait a round (DEFER) */
	char **shape;
	pol_fed_willrun_act_t *wr_act;
	ad_plan_msg_t *wr_plan;
	/* kept between rounds */
	ad_willrun_t *wr;
	int n_wr;
	/* pins whose copy has not reached the winner yet: their GPUs count
	 * as queued there (pol_fed_inflight.h) */
	pol_fed_inflight_list_t inflight;
	/* the jobs whose refusal (a field too long to copy) is logged:
	 * once per job, not every round */
	pol_fed_idset_t refused_logged;
	/* the pins steps in flight, and the ids of their jobs: a later
	 * round leaves those jobs alone until the step is collected */
	ad_pins_run_t pins[AD_PINS_RUNS];
	pol_fed_idset_t pinning;
	/* step 1b, within the round: the copies to cancel per cluster
	 * (agorad_orphans.c) */
	uint32_t *orphans[AD_MAX_CLUSTERS];
	int n_orphans[AD_MAX_CLUSTERS];
} ad_round_t;

/* agorad_round_util.c */
/* Copy src into dst[size], cut if longer. */
void scopy(char *dst, const char *src, size_t size);
int cluster_index(const ad_round_t *r, const char *name);
int write_all(int fd, const void *p, size_t n);
/* Wall-clock seconds (gettimeofday), for the round's timings. */
double ad_now_s(void);

/* agorad_clusters.c: step 0.  The federation with the most members and
 * its active clusters into r (up/down kept by name); the last list is
 * kept while slurmdbd is down.  0, or -1 if there is none. */
int refresh_clusters(ad_round_t *r);
void clusters_fini(ad_round_t *r);

/* agorad_children.c: fn(r, c, fd) in one child per cluster with
 * want[c]; what each wrote into out[c] (malloc'ed) / len[c].  Children
 * past limit_s, or AD_STOP_GRACE_S after *stop was set, get SIGTERM, then
 * SIGKILL AD_STOP_GRACE_S later; what a killed child wrote is dropped. */
typedef void (*child_fn)(const ad_round_t *r, int c, int fd);
/* agorad_orphans.c: cancels the live copies of jobs that their origin
 * shows cancelled (pol_fed_orphans), from this round's surveys; returns
 * how many were cancelled */
int orphans_reap(ad_round_t *r, volatile int *stop);
void run_children(const ad_round_t *r, const bool *want, child_fn fn,
		  char **out, size_t *len, int limit_s, volatile int *stop);
/* The same for the survey: once the children still reading may all be
 * given up (pol_fed_survey_late on lt[c], the round's first answer
 * grace_s old, max_age_s), they are left to read on as the clusters'
 * late_child and late[c] is set (the caller stands on their last
 * answers); a cluster's late_child from an earlier round is this round's
 * child for it, not a new one.  started[c]: when the read of out[c]
 * began (ad_now_s). */
typedef struct {
	double kept_at;  /* its last full answer's read (< 0: none) */
	int pins_on_way; /* pins to it whose copies it did not show yet */
	bool was_late;   /* given up in the round before */
} ad_late_t;
void run_children_late(ad_round_t *r, const bool *want, child_fn fn,
		       const ad_late_t *lt, double grace_s, double max_age_s,
		       char **out, size_t *len, bool *late, double *started,
		       int limit_s, volatile int *stop);
/* Ends a late_child (SIGKILL, reaped): shutdown, a cluster that left. */
void late_child_end(ad_held_child_t *h);
/* The same in two halves, for a step that runs on while later rounds
 * go on (the pins): children_start forks them into *ch;
 * children_collect reads what has come and, with wait, until every
 * child ended (the limit and the stop as above); true once all ended:
 * ch->out[c] (malloc'ed, the caller frees) / ch->len[c]. */
void children_start(const ad_round_t *r, const bool *want, child_fn fn,
		    int limit_s, ad_children_t *ch);
bool children_collect(ad_children_t *ch, bool wait, volatile int *stop);

/* agorad_willrun.c: step 2's requests.  willrun_plan fills r->shape,
 * wr_act and wr_plan for this round's jobs (the core's pick per cluster);
 * willrun_keep keeps answer m of cluster c of an asked job. */
void willrun_plan(ad_round_t *r, time_t now);
void willrun_keep(ad_round_t *r, int c, const ad_plan_msg_t *m, time_t now);
void willrun_reset(ad_round_t *r);
void willrun_fini(ad_round_t *r);

/* agorad_state.c: the state file at path (none if NULL); pinned_rc[i]
 * is 0 once job i is pinned, 1 while its pins step runs (NULL: none). */
void write_state(const ad_round_t *r, const char *path, time_t now, double secs,
		 const int *pinned_rc);

/* agorad_survey.c: steps 1 and 2, run in the child of cluster c,
 * reporting on fd */
void survey_child(const ad_round_t *r, int c, int fd);
void plans_child(const ad_round_t *r, int c, int fd);
/* agorad_topo.c: the leaf switch of each node record of nm (malloc'ed),
 * NULL when the cluster has no switch tree (one leaf) */
int *leaf_map(const node_info_msg_t *nm);
/* What the federation hold's state machine sees of job j. */
pol_fed_hold_obs_t hold_obs(const slurm_job_info_t *j);
/* A job's time limit (minutes, as Slurm gives it) in s; unlimited or
 * unset as POL_FED_HORIZON_S. */
int64_t ad_limit_s(uint32_t minutes);
/* The shape of a request: jobs of one shape share one will-run
 * (malloc'ed; NULL if out of memory). */
char *shape_key(const ad_job_t *j);
/* Whether job j may run on cluster (its viable siblings). */
bool eligible(const ad_job_t *j, const char *cluster);

/* agorad_kept.c: a survey whose job table did not change (h.jobs_same):
 * the last full answer's job part with this answer's nodes and usage
 * (malloc'ed, *mlen); a cluster late to answer: its last full answer
 * without its jobs, live copies and cancels (malloc'ed, *slen).  NULL if
 * there is no last answer or no memory; running jobs' ends clamped at
 * now, as a fresh read would. */
char *survey_merge(const ad_cluster_t *cl, const char *out, size_t len,
		   size_t *mlen, time_t now);
char *survey_stale(const ad_cluster_t *cl, size_t *slen, time_t now);
/* agorad_usage.c: the usage per app of cluster c into *us, h->n_usage and
 * h->usage_src, from the view file (its directory kept up to
 * AD_CONF_REREAD_S from the last configuration read, h->conf_read when
 * read again) or 22.05's plugstack rows. */
void survey_usage_any(const ad_round_t *r, int c, ad_survey_hdr_t *h,
		      ad_usage_t **us);

/* agorad_usage.c: usage per app from StateSaveLocation's view file
 * (state_dir as the cluster's slurmctld reports it): the count, *out
 * malloc'ed, src the file; or -1, src the reason.  usage_note logs where
 * cluster c's usage came from when it changed ("none: why": an error). */
int usage_from_view(const char *state_dir, const char *cluster,
		    ad_usage_t **out, char *src, size_t src_size);
void usage_note(ad_cluster_t *c, const char *src, int n);

/* agorad_pins.c: step 4 in flight.  pins_start hands this round's pins
 * to a step of their own (pin_rc[i] = 1 for each job handed; waits for
 * the oldest step if AD_PINS_RUNS run) and returns how many;
 * pins_collect takes up the steps that have ended (with wait: all) and
 * returns the jobs they pinned (pin_rc, if not NULL: the step of this
 * round sets pin_rc[i] to 0 for each job it pinned, -1 for the rest it
 * had); pins_exclude drops from r->jobs the jobs
 * of the steps in flight, returns how many; pins_drain waits for all. */
int pins_start(ad_round_t *r, ad_stats_t *st, int *pin_rc, volatile int *stop);
int pins_collect(ad_round_t *r, ad_stats_t *st, bool wait, volatile int *stop,
		 int *pin_rc);
int pins_exclude(ad_round_t *r);
void pins_drain(ad_round_t *r, ad_stats_t *st, volatile int *stop);

/* agorad_auction.c: step 3's inputs and texts, step 4 (the pins child) */
void pins_child(const ad_round_t *r, int c, int fd);
/* Whether job i has pins-child work: a fresh winner, or a pin's release
 * or decision left by an earlier round. */
bool pin_wanted(const ad_round_t *r, int i);
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
