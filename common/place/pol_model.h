/*
 * pol_model.h - Agora's core data model: clusters, nodes, GPUs, jobs,
 * snapshots and the decisions a policy returns.
 *
 * This is the one vocabulary shared by the Slurm adapters (plugins/) and
 * the simulator (contrib/sim): an
 * adapter copies Slurm state INTO these structs, a policy decides, and the
 * adapter copies the decision OUT.  Nothing here knows about Slurm, clocks
 * or I/O; time is a parameter (int64_t seconds, any epoch).
 *
 * Ownership (json-c wording): a pol_cluster_t owns its node types and
 * nodes (pol_cluster_destroy()).  A pol_snapshot_t BORROWS its cluster and
 * job arrays: whoever built the snapshot keeps them alive until the policy
 * call returns.  A pol_actions_t is owned by the caller of decide() and
 * released with pol_actions_free().
 */
#ifndef POL_MODEL_H
#define POL_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* GPUs of one node are a bit mask: at most 64 per node. */
#define POL_MAX_GPUS_PER_NODE 64
#define POL_NAME_LEN          64

typedef uint64_t pol_gpumask_t;

/*
 * Locality level between two GPUs: lower is closer.  The order is the order
 * of communication cost for distributed training (Themis/Tiresias
 * consolidation measurements).
 */
typedef enum pol_level {
	POL_LVL_NVLINK = 0, /* same NVLink island / NVSwitch domain */
	POL_LVL_PCIE = 1,   /* same PCIe switch */
	POL_LVL_SOCKET = 2, /* same CPU socket (NUMA) */
	POL_LVL_NODE = 3,   /* same node, across sockets */
	POL_LVL_LEAF = 4,   /* other node under the same leaf switch */
	POL_LVL_CLUSTER = 5 /* across leaf switches */
} pol_level_t;
#define POL_N_LEVELS 6

/* Pools a node can belong to (Aryl: training vs inference). */
typedef enum pol_pool {
	POL_POOL_TRAINING = 0,
	POL_POOL_INFERENCE = 1,
} pol_pool_t;

/*
 * A node type: the GPU locality model of one hardware shape, derived from
 * hwloc by agora-topo (contrib/topo) or given as the "NODESxGPUS" shorthand
 * (then all GPUs of a node are one NVLink island).
 */
typedef struct pol_node_type {
	char name[POL_NAME_LEN];
	int n_gpus;
	int n_sockets;
	int cpus;
	int64_t mem_mb;
	/* level[i][j], symmetric, level[i][i] = POL_LVL_NVLINK */
	uint8_t level[POL_MAX_GPUS_PER_NODE][POL_MAX_GPUS_PER_NODE];
	int8_t gpu_socket[POL_MAX_GPUS_PER_NODE];
	int8_t gpu_island[POL_MAX_GPUS_PER_NODE]; /* NVLink island id */
} pol_node_type_t;

typedef struct pol_node {
	char name[POL_NAME_LEN];
	int type; /* index into pol_cluster_t.types */
	int leaf; /* leaf switch index, 0..n_leaves-1 */
	pol_pool_t pool;
	int weight;         /* Slurm node Weight: lower is preferred */
	uint64_t features;  /* bit set of feature ids (adapter-defined) */
	bool up;            /* schedulable (not down/drained) */
	pol_gpumask_t free; /* GPUs free now */
} pol_node_t;

typedef struct pol_cluster {
	char name[POL_NAME_LEN];
	pol_node_type_t *types;
	int n_types;
	pol_node_t *nodes;
	int n_nodes;
	int n_leaves;
} pol_cluster_t;

/* An allocation: per node of a gang, the GPUs held there. */
typedef struct pol_alloc_part {
	int node;
	pol_gpumask_t gpus;
} pol_alloc_part_t;

typedef struct pol_alloc {
	pol_alloc_part_t *parts;
	int n_parts;
} pol_alloc_t;

typedef enum pol_job_state {
	POL_JOB_PENDING = 0,
	POL_JOB_RUNNING,
	POL_JOB_DONE,
} pol_job_state_t;

/*
 * A job as a policy sees it.  Either a gang shape (nodes x gpus_per_node,
 * nodes > 0) or a total GPU count (nodes == 0: any split).  Elastic jobs
 * have min_gpus < max_gpus (total GPUs).
 */
typedef struct pol_job {
	int64_t id;
	int tenant; /* app/account index (fairness, credit) */
	int user;
	int band;          /* priority band: higher runs first (QOS/tier) */
	int64_t priority;  /* Slurm priority within a band */
	int nodes;         /* gang nodes, 0 = any */
	int gpus_per_node; /* with nodes > 0 */
	int total_gpus;    /* total GPUs requested (= nodes*gpn if gang) */
	int min_gpus, max_gpus; /* elastic range; both = total_gpus if rigid */
	pol_pool_t pool;
	int64_t submit;     /* s */
	int64_t time_limit; /* s; what the user asked for */
	int dataset;        /* dataset id, -1 = none */
	bool requeueable;   /* may be preempted (no --no-requeue) */
	/* running jobs only */
	pol_job_state_t state;
	int64_t start;     /* s, when the current run began */
	int64_t attained;  /* GPU-seconds of service received so far */
	pol_alloc_t alloc; /* borrowed from the snapshot builder */
	/* checkpoints (pol_ckpt.h): the job writes one every ckpt_s s of a
	 * run (> 0), POL_CKPT_UNKNOWN (0: the policy's assumption),
	 * POL_CKPT_CONTINUOUS (nothing lost) or POL_CKPT_NEVER (a requeue
	 * loses the whole run) */
	int64_t ckpt_s;
	int preemptions; /* times it was requeued by a preemption so far */
	/* oracle knowledge (simulator only; < 0 when unknown) */
	int64_t remaining; /* s of work left at full speed */
	/* progress since the last save (the simulator's, or an adapter's;
	 * 0 when unknown: pol_job_may_preempt() is then plain requeueable,
	 * with ckpt_s above) */
	int64_t last_ckpt;  /* running: when the current run last saved
			       work (a checkpoint after its restart); < start:
			       not yet */
	int stale_preempts; /* preemptions since the job last saved work */
} pol_job_t;

/* Everything a policy may look at.  Borrowed pointers (see top). */
typedef struct pol_snapshot {
	const pol_cluster_t *cluster;
	pol_job_t *pending; /* in submit order */
	int n_pending;
	pol_job_t *running;
	int n_running;
	int n_tenants;
} pol_snapshot_t;

typedef enum pol_action_type {
	POL_ACT_START = 0, /* start job on alloc */
	POL_ACT_PREEMPT,   /* requeue a running job */
	POL_ACT_RESIZE,    /* change an elastic job's allocation */
	POL_ACT_HOLD,      /* keep pending, with reason */
} pol_action_type_t;

#define POL_REASON_LEN 128

typedef struct pol_action {
	pol_action_type_t type;
	int64_t job_id;
	pol_alloc_t alloc; /* owned by the pol_actions_t */
	double score;      /* placement score / bid (policy-defined) */
	char reason[POL_REASON_LEN];
} pol_action_t;

typedef struct pol_actions {
	pol_action_t *v;
	int n;
	size_t cap;
	/*
	 * Optional: the earliest time (s) at which the policy wants to be
	 * called again even if nothing else happens (LAS: a running job
	 * crosses a queue threshold).  0 = no request.  decide() may lower
	 * it; pol_actions_clear() resets it.
	 */
	int64_t wakeup;
} pol_actions_t;

/* Append an action; alloc (may be NULL) is deep-copied.  0 or -1/ENOMEM. */
int pol_actions_add(pol_actions_t *acts, pol_action_type_t type, int64_t job_id,
		    const pol_alloc_t *alloc, double score, const char *reason);
/* Free what acts owns and reset it to empty (acts itself stays). */
void pol_actions_free(pol_actions_t *acts);
/* Drop all actions but keep the storage. */
void pol_actions_clear(pol_actions_t *acts);

/* Number of set bits of a GPU mask. */
static inline int pol_popcount(pol_gpumask_t m)
{
	return __builtin_popcountll(m);
}

/* Total GPUs of an allocation. */
int pol_alloc_gpus(const pol_alloc_t *alloc);
/* Deep copy; 0 or -1/ENOMEM.  dst must be empty or freed. */
int pol_alloc_copy(pol_alloc_t *dst, const pol_alloc_t *src);
void pol_alloc_free(pol_alloc_t *alloc);

/*
 * Worst (highest) locality level between any two GPUs of an allocation in
 * the cluster: POL_LVL_NVLINK for a single GPU.
 */
pol_level_t pol_alloc_level(const pol_cluster_t *c, const pol_alloc_t *a);

/* Cluster construction helpers (caller owns; free with pol_cluster_destroy). */

/* Deep copy of a cluster (caller owns the copy).  NULL/ENOMEM. */
pol_cluster_t *pol_cluster_clone(const pol_cluster_t *c);
/* All GPUs of node i as a mask (from its type). */
pol_gpumask_t pol_node_all_gpus(const pol_cluster_t *c, int node);

/*
 * A homogeneous cluster: n_nodes nodes of gpus_per_node GPUs, one leaf
 * switch per nodes_per_leaf nodes (0 = one leaf), every node one NVLink
 * island.  Returns NULL/errno on bad arguments or ENOMEM.
 */
pol_cluster_t *pol_cluster_uniform(int n_nodes, int gpus_per_node,
				   int nodes_per_leaf);
void pol_cluster_destroy(pol_cluster_t **cp);
/* Total GPUs / free GPUs. */
int pol_cluster_gpus(const pol_cluster_t *c);
int pol_cluster_free_gpus(const pol_cluster_t *c);
/* Fill a node type as one uniform island of n GPUs on n_sockets sockets. */
void pol_node_type_uniform(pol_node_type_t *t, const char *name, int n_gpus,
			   int n_sockets);

/* The policy interface ------------------------------------------------- */

/*
 * A policy is an ops table plus its private state.  decide() looks at a
 * snapshot at time now and appends actions; it never modifies the
 * snapshot's cluster (work on a copy of free masks if needed).  Returns 0,
 * or -1 with errno.  Deterministic for equal inputs.  The caller applies
 * the actions in the order given, so a START may use GPUs that an
 * earlier PREEMPT or RESIZE in the same list frees.
 */
typedef struct pol_policy pol_policy_t;

struct pol_placer; /* pol_place.h */
struct agora_err;  /* agora_err.h */

typedef struct pol_policy_ops {
	const char *name;
	/*
	 * params: "k=v,k=v" or NULL (unknown keys are an error).  placer:
	 * the placement strategy (borrowed; must outlive the state).  On
	 * error return NULL, errno set, err filled.
	 */
	void *(*create)(const char *params, const struct pol_placer *placer,
			struct agora_err *err);
	int (*decide)(void *state, const pol_snapshot_t *snap, int64_t now,
		      pol_actions_t *out);
	void (*destroy)(void *state);
	/*
	 * Optional (NULL: the policy keeps no per-app state): name the
	 * snapshot's tenant indices, names[t] the app of tenant index t and
	 * accounts[t] its credit-ledger account (NULL: the app's own name).
	 * An app of several jobs (a job array, a burst) is then one tenant
	 * index while its credit stays its account's.  0 or -1/errno.
	 */
	int (*set_apps)(void *state, const char *const *names,
			const char *const *accounts, int n);
	/* reads pol_job_t.remaining, which no scheduler knows (srtf, the
	 * clairvoyant bound): the simulator shows durations only to such a
	 * policy and -1 to every other, as Slurm does */
	bool oracle;
} pol_policy_ops_t;

#endif
