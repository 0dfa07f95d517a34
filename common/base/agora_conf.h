/*
 * agora_conf.h - agora.conf, the one configuration file of Agora's plugins.
 *
 * Format: one "Key=Value" per line, keys case-insensitive (as slurm.conf),
 * '#' starts a comment, blank lines ignored.  Every key is validated and an
 * unknown key is an error: a typo must not silently fall back to a default.
 * Durations accept a suffix s, m, h or d (default seconds).
 *
 * Ownership: agora_conf_t is owned by the caller; agora_conf_parse_*() fill
 * it and agora_conf_free() releases the strings/arrays inside (not the
 * struct itself).  On failure the parse functions leave *conf untouched
 * (no side effects on failure), so a plugin can keep running on its
 * previous configuration.
 */
#ifndef AGORA_CONF_H
#define AGORA_CONF_H

#include <stdbool.h>
#include <stddef.h>

#include "agora_err.h"

/* agora.conf is read whole (agora_file_read_ex(), links followed); larger
 * files are refused with EFBIG. */
#define AGORA_CONF_MAX_BYTES ((size_t) 16 << 20)

typedef enum agora_app_def {
	AGORA_APP_ACCOUNT = 0, /* one app per Slurm account (default) */
	AGORA_APP_USER,        /* one app per user */
	AGORA_APP_NAME_PREFIX, /* job-name prefix up to AppNameSeparator */
	AGORA_APP_ARRAY, /* job array, else user+name within AppGap, else job */
	AGORA_APP_BURST, /* account + submissions within AppGap */
} agora_app_def_t;       /* the order of pol_apps_def_t (pol_apps.h) */

/* Placement=: who picks the nodes of a GPU job in select/cons_tres. */
typedef enum agora_placement {
	AGORA_PLACEMENT_AGORA = 0, /* pol_topo_place_req narrows, stock picks */
	AGORA_PLACEMENT_STOCK,     /* stock cons_tres only (the A/B baseline) */
} agora_placement_t;

/* LoanDemandSource=: where agorad reads the inference demand (nodes). */
typedef enum agora_demand_kind {
	AGORA_DEMAND_JOBS = 0, /* jobs: the inference partitions' jobs */
	AGORA_DEMAND_FILE,     /* file:PATH, a number of nodes */
	AGORA_DEMAND_COMMAND,  /* command:CMD, prints a number of nodes */
} agora_demand_kind_t;

typedef struct agora_quota {
	char *account;
	double gpu_hours; /* per CreditPeriod */
} agora_quota_t;

/* CheckpointInterval=: the interval jobs write checkpoints at (what a
 * preemption loses), for every job, a partition's or a QOS's. */
typedef enum agora_ckpt_scope {
	AGORA_CKPT_ALL = 0,   /* CheckpointInterval=DURATION */
	AGORA_CKPT_PARTITION, /* CheckpointInterval=partition:NAME:DURATION */
	AGORA_CKPT_QOS,       /* CheckpointInterval=qos:NAME:DURATION */
} agora_ckpt_scope_t;

typedef struct agora_ckpt {
	agora_ckpt_scope_t scope;
	char *name; /* NULL for AGORA_CKPT_ALL */
	int ckpt_s;
} agora_ckpt_t;

typedef struct agora_conf {
	/* sched/agora thread */
	int sched_interval_s;      /* SchedulerInterval: thread period */
	bool embed_backfill;       /* EmbedBackfill: run sched/backfill too */
	char **auction_partitions; /* AuctionPartitions: NULL-terminated */
	size_t n_auction_partitions;

	/* Themis finish-time fairness */
	agora_app_def_t app_def; /* AppDefinition */
	char app_separator;      /* AppNameSeparator */
	int app_gap_s;           /* AppGap: array and burst apps */
	int apps_per_account;    /* AppsPerAccount: name_prefix, array, burst */
	double fairness_knob;    /* FairnessKnob: f in [0,1) */
	int lease_s;             /* LeaseTime */
	int grace_s;             /* GraceTime */
	agora_ckpt_t *ckpts;     /* CheckpointInterval (repeatable) */
	size_t n_ckpts;
	int preempt_budget; /* PreemptBudget: preemptions per job */
	/* PreemptEvery: a job that checkpoints more often (or on its
	 * --signal) is preempted as if it checkpointed this often (s; 0:
	 * off; the policy's every) */
	int preempt_every_s;
	/* PreemptUnsaved: a job that saves nothing (no CheckpointInterval,
	 * no --signal) may lose its GPUs and its run (the policy's unsaved;
	 * default no) */
	bool preempt_unsaved;
	/* ReserveForWorstApp: the leftover pass reserves for the worst-rho
	 * app's job (the policy's drain_rho) */
	bool reserve_worst_app;

	/* MAST-style credit */
	double credit_half_life_h; /* CreditHalfLife */
	double credit_period_h;    /* CreditPeriod */
	double default_quota;      /* DefaultQuota (GPU-hours per period) */
	agora_quota_t *quotas;     /* AccountQuota=name:gpu_hours ... */
	size_t n_quotas;
	unsigned credit_weight; /* CreditWeight: site factor span */

	/* topology-aware placement */
	char *topology_model; /* TopologyModel: path to agora-topo model */
	agora_placement_t placement; /* Placement: agora (default) or stock */

	/* federation: cross-cluster auctions decided by agorad */
	bool fed_auction;            /* FedAuction: hold federated GPU jobs at
				      their origin for agorad's auction */
	int fed_auction_timeout_s;   /* FedAuctionTimeout: a hold agorad has
				      not decided by then is released */
	int fed_pin_start_timeout_s; /* FedPinStartTimeout: a job pinned to a
					cluster that has not started it this
					long after its planned start is
					auctioned again (0: never) */
	int fed_interval_s;          /* FedAuctionInterval: agorad's round */
	int fed_survey_max_age_s;    /* FedSurveyMaxAge: a sibling still
					reading stands on its last answer
					if no older (0: always wait) */
	char *fed_catalog;           /* FedCatalog: dataset catalog (JSON) */

	/* loaning idle inference nodes to training, by agorad */
	bool loaning;                 /* Loaning: agorad lends and reclaims */
	char **loan_infer_partitions; /* LoanInferencePartitions */
	size_t n_loan_infer_partitions;
	char **loan_train_partitions; /* LoanTrainPartitions */
	size_t n_loan_train_partitions;
	int loan_headroom;      /* LoanHeadroomNodes: kept above demand */
	int loan_interval_s;    /* LoanInterval: agorad's loan period */
	int loan_lend_hold_s;   /* LoanLendHold: lend against the peak
				      demand of this last window */
	int reclaim_deadline_s; /* ReclaimDeadline: nodes back by then */
	/* ReclaimGrace: a victim that asked for --signal=[B:]SIG@N gets SIG
	 * and min(N, this) seconds before its requeue (pol_loan_requeue.h);
	 * unset: 60 s, at most ReclaimDeadline / 2; set: < ReclaimDeadline */
	int reclaim_grace_s;
	/* MaxRequeuesPerJob: a job Slurm shows restarted this often is no
	 * reclaim's victim and is not grown (0: no limit) */
	int max_requeues;
	/* LoanLeaseTimeout: slurmctld returns a loan whose heartbeat is
	 * older (0: never) */
	int loan_lease_timeout_s;
	/* LoanDemandGrace: a failed demand read keeps the last good value
	 * this long */
	int loan_demand_grace_s;
	int loan_ckpt_s;    /* LoanCheckpointInterval (0: none) */
	int loan_restart_s; /* LoanRestartOverhead */
	/* LoanCheckpointWait: a reclaim with a node to spare waits up to
	 * this for its victims' checkpoints (unset: half of
	 * LoanCheckpointInterval; 0: never) */
	int loan_ckpt_wait_s;
	/* LoanReclaimAhead: reclaim for the demand's trend this far ahead
	 * (0: off); LoanReclaimAheadSigma: its margin, in deviations of the
	 * readings around the trend */
	int loan_ahead_s;
	double loan_ahead_z;
	agora_demand_kind_t loan_demand_kind; /* LoanDemandSource= kind */
	char *loan_demand_arg;    /* its PATH or CMD (NULL for jobs) */
	bool loan_grow;           /* LoanElasticGrow: grow elastic jobs */
	int loan_grow_min_gain_s; /* LoanGrowMinGain: least JCT reduction */
	double loan_serial;       /* LoanScalingSerial: Amdahl's serial part */
	int metrics_port;         /* MetricsPort: agorad's /metrics (0: none) */
} agora_conf_t;

/* Fill *conf with the documented defaults (doc/agora.conf.5). */
void agora_conf_defaults(agora_conf_t *conf);

/* Release what *conf owns and reset it to defaults-free zero state. */
void agora_conf_free(agora_conf_t *conf);

/*
 * Parse text (NUL-terminated) as if it were the file 'name'.  On success
 * replace *conf (after agora_conf_free() of the old one) and return 0; on
 * error return -1, errno = EINVAL (or ENOMEM), err = "name:LINE: KEY: why",
 * and *conf is unchanged.
 */
int agora_conf_parse_string(const char *text, const char *name,
			    agora_conf_t *conf, agora_err_t *err);

/* Read and parse the file at path; a missing file is an error (ENOENT). */
int agora_conf_parse_file(const char *path, agora_conf_t *conf,
			  agora_err_t *err);

/*
 * The checkpoint interval (s) declared for a job of partition and qos
 * (either NULL): the QOS's, else the partition's, else the bare
 * CheckpointInterval, else 0 (none declared).
 */
int agora_conf_ckpt(const agora_conf_t *conf, const char *partition,
		    const char *qos);

/* The quota of an account (DefaultQuota unless an AccountQuota names it). */
double agora_conf_quota(const agora_conf_t *conf, const char *account);

/* True if part (or any of a job's "a,b" partition list) is listed in
 * LoanInferencePartitions (infer) or LoanTrainPartitions (!infer). */
bool agora_conf_loan_partition(const agora_conf_t *conf, const char *part,
			       bool infer);

/* True if partition is listed in AuctionPartitions. */
bool agora_conf_auction_partition(const agora_conf_t *conf, const char *part);

/* Name of a placement mode, for logs ("agora", "stock"). */
const char *agora_placement_name(agora_placement_t p);

/* Name of an app definition, for logs ("account", "user", "name_prefix",
 * "array", "burst"). */
const char *agora_app_def_name(agora_app_def_t def);

/*
 * The credit-ledger account of a job under conf's AppDefinition, before
 * pol_app_key(): "user:<uid>" (AppDefinition=user), else the account
 * (NULL strings are empty; AppDefinition=name_prefix, array and burst: the
 * ledger stays per account while the auction and rho run per app,
 * pol_apps_build(), so a new app never brings fresh credit).  The one rule of site_factor/agora and
 * agoractl.  malloc'ed (caller frees), NULL with ENOMEM.
 */
char *agora_conf_app_name(const agora_conf_t *conf, const char *account,
			  unsigned int uid, const char *job_name);

/*
 * The same, keyed (pol_app_key()) into out[POL_APP_KEY_LEN], without
 * allocating: for per-job lookups under slurmctld's job lock.
 */
void agora_conf_app_key(const agora_conf_t *conf, const char *account,
			unsigned int uid, char out[64]);

/* conf's AppDefinition, AppGap, AppNameSeparator and AppsPerAccount as a
 * pol_apps spec
 * (pol_apps_build(), for the apps of the auction and of rho). */
struct pol_apps_spec;
void agora_conf_apps_spec(const agora_conf_t *conf, struct pol_apps_spec *spec);

#endif
