/*
 * pol_loan_sim_int.h - the loaning scenario's state, shared by
 * pol_loan_sim.c (the pending queue, runs, placement, time, the
 * scenario loop) and pol_loan_sim_steps.c (the poll's steps: elastic
 * grow and shrink, lending and reclaiming inference nodes), and the
 * scenario's options beyond pol_loan_sim_params_t (pol_loan_sim_policy_t,
 * used by agora-sim loaning).
 */
#ifndef POL_LOAN_SIM_INT_H
#define POL_LOAN_SIM_INT_H

#include "pol_loan.h"
#include "pol_model.h"

struct pol_policy; /* pol_policy.h */

/* How grow() estimates an elastic job's compute time left. */
typedef enum pol_loan_estimate {
	/* pol_loan_left_attained (pol_loan.h): what a daemon can know, the
	 * default */
	POL_LOAN_EST_ATTAINED = 0,
	/* the job's true remaining work: an oracle, for sensitivity only */
	POL_LOAN_EST_ORACLE,
} pol_loan_estimate_t;

/* "attained", "oracle" */
const char *pol_loan_estimate_name(pol_loan_estimate_t e);
int pol_loan_estimate_parse(const char *str, pol_loan_estimate_t *e);

/* Loan policies that apply to every loaning variant alike. */
typedef struct pol_loan_sim_policy {
	pol_loan_estimate_t grow_estimate;
	/* per job time limits in s (0: unknown), indexed as the jobs;
	 * NULL: none known */
	const int64_t *limit_s;
	/* drain ahead: loaned nodes that the forecast (the demand seen one
	 * day earlier) takes back within drain_ahead_s accept no new
	 * borrowers (0: off) */
	int64_t drain_ahead_s;
	/* a job starts on loaned nodes only if its attained estimate says
	 * it ends before the forecast takes back any loaned node */
	bool borrow_ends_first;
	/* only elastic jobs start or grow on loaned nodes (Lyra's split:
	 * a reclaim then shrinks instead of preempting) */
	bool borrow_elastic_only;
	/* a bound, not a policy: the least-cost variants choose the fewest
	 * victims (GPU-hours lost only break ties) */
	bool fewest_victims;
	/* least-cost at any victim count (pol_loan_reclaim_in_t.fewest_first
	 * false): the old least-cost, for comparison; default: the least
	 * cost among the choices with the fewest victims */
	bool any_count;
	/* least-cost without the checkpoint wait (ckpt_wait in
	 * pol_loan_sim_steps.c): the victims go at once */
	bool no_ckpt_wait;
	/* the longest a least-cost reclaim may wait for checkpoints, s
	 * (default POL_LOAN_CKPT_WAIT_S; 0: deadline - grace, so the node
	 * is back within the deadline of the first shortfall); every poll
	 * of the wait still needs a node of headroom to spare */
	int64_t ckpt_wait_s;
	/* the wait's older rule (ckpt_wait): each victim valued at its own
	 * least cost within the wait; default: time and victims chosen
	 * together (joint_wait in pol_loan_sim_steps.c) */
	bool ckpt_wait_per_job;
	/* least-cost reclaims ahead of a rising demand: the nodes that the
	 * demand's trend (the least-squares line of the last
	 * POL_LOAN_TREND_FIT_S) needs within reclaim_ahead_s, above those
	 * held, come back at the cheapest poll over one checkpoint interval
	 * from now, while no node is short yet (0: off) */
	int64_t reclaim_ahead_s;
	/* the margin of that projection in residual standard deviations
	 * of the fitted line (POL_LOAN_AHEAD_Z by default): noise spikes
	 * above the trend are what takes a node of headroom at once */
	double reclaim_ahead_z;
	/* the training scheduler: a policy of the registry (pol_policy.h:
	 * backfill-fs, agora, ...) deciding over the training nodes and the
	 * loaned ones, borrowed, fresh per run (its state is the run's);
	 * NULL: fifo-hold, the simple first-fit with a 4-h head block */
	struct pol_policy *train_policy;
} pol_loan_sim_policy_t;

/* Counts beyond pol_loan_sim_result_t, over the metrics window. */
typedef struct pol_loan_sim_more {
	int64_t reclaim_shrinks; /* elastic jobs shrunk by a reclaim */
	int64_t grown_back;      /* shrinks that gave grown nodes back */
	int64_t victims_part;    /* preempted jobs on part of one node */
	int64_t victims_whole;   /* preempted jobs of whole nodes */
	/* the per-event fewest-victims bound: summed over the reclaims,
	 * the fewest victims that could have met each one (the same state,
	 * pol_loan_reclaim with unit costs) */
	int64_t fewest_victims;
	/* polls at which a least-cost reclaim waited for checkpoints */
	int64_t ckpt_waits;
	/* reclaims made ahead of a rising demand (reclaim_ahead_s) */
	int64_t ahead_reclaims;
	/* training busy GPU-s on loaned nodes; GPU-s of inference nodes the
	 * demand curve left lendable (pool - ceil(demand) - headroom) */
	double loan_busy_gpu_s, lendable_gpu_s;
	/* the most of lendable_gpu_s training could have used: at each
	 * moment min(lendable, busy on loaned nodes + the GPUs of the
	 * pending jobs that may borrow) - harvest's upper bound when the
	 * training queue, not the loans, is short */
	double harvest_cap_gpu_s;
	/* requeues of the window's jobs (reclaims and the scheduler's) */
	int requeues_max, requeues_p99;
	/* the training scheduler's own preemptions (agora's leases), and
	 * the work they lost (not in preemptions / gpu_hours_lost) */
	int64_t sched_preemptions;
	double sched_gpu_hours_lost;
} pol_loan_sim_more_t;

void pol_loan_sim_policy_default(pol_loan_sim_policy_t *pol);

/* pol_loan_sim_run with the policies of pol (NULL: the defaults); more
 * (may be NULL) gets the counts beyond res */
int pol_loan_sim_run_policy(const pol_loan_sim_job_t *jobs, int n,
			    pol_loan_variant_t v,
			    const pol_loan_sim_params_t *p,
			    const pol_loan_sim_policy_t *pol,
			    pol_loan_sim_result_t *res,
			    pol_loan_sim_more_t *more);

#ifdef POL_LOAN_SIM_STATE
#define EPS 1e-6

enum { J_FUTURE, J_PENDING, J_RUNNING, J_DONE, J_SKIPPED };
enum { N_TRAIN, N_INFER, N_LOANED, N_RETURNING };

typedef struct sj {
	const pol_loan_sim_job_t *in;
	int idx, state;
	int k;   /* requested whole nodes; 0: a part of one node */
	int use; /* GPUs used per node */
	int min_n, max_n;
	bool elastic;
	int n;        /* nodes held */
	int *nodes;   /* max_n (or 1) entries */
	double work;  /* remaining, s at the requested size */
	double work0; /* remaining when this run started */
	double limit; /* time limit, s; 0: unknown */
	double rate, overhead, oh_run, run_start;
	double first_start, finish, run_s;
	bool ran;
	int preempted;    /* requeues, all causes */
	bool repeat;      /* its last stop was a reclaim's preemption */
	int stale;        /* preemptions since it last saved work */
	pol_gpumask_t gm; /* its GPUs on each of its nodes */
} sj_t;

typedef struct sim {
	const pol_loan_sim_params_t *p;
	pol_loan_sim_policy_t pol;
	pol_loan_variant_t v;
	pol_loan_sim_result_t *r;
	pol_loan_sim_more_t m;
	int N, T, gpn;
	int *nstate, *freeg;
	pol_gpumask_t *used; /* GPUs held per node */
	double *back_at;
	sj_t *jobs;
	int n;
	int *pend, npend; /* indices by (submit, index) */
	int *run, nrun;
	double now, t_from, t_to;
	double demand; /* at the last poll */
	double *hist;  /* demand at the last polls, a ring */
	int nhist, hpos;
	double unmet_since;
	bool unmet_counted;
	/* a least-cost reclaim waiting for its victims' checkpoints since
	 * wait_since (waiting false: none) */
	bool waiting;
	double wait_since;
	/* a reclaim ahead keeps ahead_keep nodes (held, returning) from
	 * being lent again until ahead_until (the lend hold after it last
	 * saw the rise), so a loan does not undo it at the next poll */
	int ahead_keep;
	double ahead_until;
	bool dirty; /* a pass may start something */
	/* demand at each poll of the last day, a ring of nday (the
	 * forecast: the same time one day earlier) */
	double *day;
	int nday, dpos;
	int64_t polls;
	unsigned char *draining; /* loaned nodes closed to new borrowers */
	/* borrow_ends_first: jobs start on loaned nodes only if their
	 * estimate ends them before this time */
	double borrow_until;
	/* the training policy's snapshot (train_policy only) */
	pol_cluster_t *cl;
	pol_job_t *sp, *sr;
	pol_alloc_part_t *parts;
	pol_actions_t acts;
	int n_tenants;
	double idle_since; /* last time a job ran or was yet to arrive */
} sim_t;

static inline bool in_win(const sim_t *s)
{
	return s->now >= s->t_from && s->now < s->t_to;
}

static inline int gpus_held(const sj_t *j)
{
	return j->n * j->use;
}

static inline double rate_of(const sim_t *s, const sj_t *j, int n)
{
	if (!j->elastic || j->k <= 0)
		return 1.0;
	return pol_loan_speedup(n * s->gpn, s->p->serial) /
	       pol_loan_speedup(j->k * s->gpn, s->p->serial);
}

static inline int count_state(const sim_t *s, int st)
{
	int i, c = 0;

	for (i = 0; i < s->N; i++)
		c += s->nstate[i] == st;
	return c;
}

/* pol_loan_sim_jobs.c: add job j to the pending queue (submit order) */
void pend_add(sim_t *s, int j);
/* free job j's GPUs */
void release(sim_t *s, sj_t *j);
/* the node for a g-GPU job among nodes in state st (best fit), or -1 */
int best_fit(const sim_t *s, int g, int st);
/* pol_loan_sim_jobs.c: stop job ji and requeue it, its progress since the last
 * checkpoint lost (by a reclaim: counted in preemptions / gpu_hours_lost;
 * else as the scheduler's) */
void preempt(sim_t *s, int ji, bool reclaim);
/* start job ji on nodes[0..n) */
void start(sim_t *s, int ji, const int *nodes, int n);
/* remove pending position at */
void pend_del(sim_t *s, int at);
/* may job j start on loaned nodes now */
bool may_borrow(const sim_t *s, const sj_t *j);
/* when j's current run last saved work (a checkpoint after its restart,
 * pol_model.h's last_ckpt), or -1 */
double last_save(const sim_t *s, const sj_t *j);

/* pol_loan_sim_sched.c: the training policy's pass (train_policy) */
int sched_setup(sim_t *s);
int policy_pass(sim_t *s);
void sched_free(sim_t *s);
/* a checkpoint of job ji, then a restart on nodes[0..n) */
void resize(sim_t *s, int ji, const int *nodes, int n);
/* up to want whole free nodes into out, training nodes first (loaned
 * nodes only if loaned_ok, never draining ones) */
int whole_nodes(const sim_t *s, bool loaned_ok, int *out, int want);
/* loaned nodes the forecast takes back within tau s from now (0 without a
 * day of demand history) */
int forecast_back(const sim_t *s, double tau);

/* pol_loan_sim_steps.c: give grown nodes back (a job waits) */
void shrink_grown(sim_t *s);
/* grow elastic jobs onto free whole nodes; 0, or -1 out of memory */
int grow(sim_t *s);
/* lend idle inference nodes or reclaim loaned ones to meet demand */
int adjust_loans(sim_t *s);
/* at a poll, after the loans: the loaned nodes the forecast takes back
 * within drain_ahead_s (draining) and borrow_until */
void mark_draining(sim_t *s);

#endif /* POL_LOAN_SIM_STATE */

#endif
