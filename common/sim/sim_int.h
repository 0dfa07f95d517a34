/*
 * sim_int.h - internals shared by sim_engine.c (the event loop) and
 * sim_state.c (state changes and checks).  Not an API: use sim.h.
 * A sim_t lives for one sim_run(); it owns everything it points to except
 * in, p and pol (borrowed from the caller) and res (the caller's result).
 */
#ifndef SIM_INT_H
#define SIM_INT_H

#include "sim.h"

enum { S_FUTURE = 0, S_PENDING, S_RUNNING, S_DONE, S_SKIPPED };

/* The most utilisation bins a run keeps (256 MiB of doubles: 3,800 years
 * of simulated time at the default hour): beyond, a trace's times are out
 * of range and the run fails instead of allocating without end. */
#define SIM_MAX_BINS (1 << 25)

typedef struct sjob {
	int state;
	int preempted;   /* has run before: restart cost on next start */
	double work;     /* remaining, s at ideal speed */
	double overhead; /* restart work left in this run, s at ideal speed */
	double saved;    /* work remaining at the last checkpoint */
	double carry;    /* unfinished restart work of a cut-short restart */
	double rate;
	int64_t t_upd;
	int64_t finish;            /* heap time: completion or kill */
	int64_t natural;           /* completion time at the current rate */
	int64_t run_start, ckpt_t; /* ckpt_t: last checkpoint, -1 none */
	int64_t save_t;        /* when this run last saved work (-1: not yet) */
	int stale;             /* preemptions since the job last saved work */
	double prog_start;     /* when this run's overhead ended (INFINITY) */
	int64_t submit, limit; /* queue submit time and limit (resubmits) */
	double att_win;        /* GPU-seconds held inside the arrival window */
	double lost_win;       /* of those, counted as lost */
	uint32_t ver;
	int run_pos;
	int gpus;
	double attained;
	pol_alloc_t alloc;
} sjob_t;

typedef struct hent {
	int64_t t;
	int job;
	uint32_t ver;
} hent_t;

typedef struct sim {
	const sim_job_t *in;
	const sim_params_t *p;
	pol_policy_t *pol;
	pol_cluster_t *c;
	pol_freemap_t *fm;
	pol_gpumask_t *used;
	int n, *order; /* sim id -> input index, by (submit, index) */
	sjob_t *sj;
	pol_job_t *pend_base;
	int pend_off, pend_n, pend_cap;
	pol_job_t *run;
	int run_n, run_cap;
	hent_t *heap;
	int heap_n, heap_cap;
	int busy;
	int n_tenants;
	int maxg_pool[2];
	double frag_now; /* GPUs counted as fragmented until next event */
	int util_cap;
	sim_result_t *res;
	agora_err_t *err;
	int64_t now;
	int64_t partmax;    /* the resolved SIM_LIMITS_PARTMAX limit */
	int64_t livelock_s; /* the resolved guard (<= 0: off) */
} sim_t;

/* sim_state.c */
void sim_h_pop(sim_t *s);
void sim_h_clean(sim_t *s);
int sim_pend_insert(sim_t *s, const pol_job_t *j);
void sim_update_work(sim_t *s, int id);
int sim_kill_at_limit(sim_t *s, int id);
int sim_fail(sim_t *s, int e, const char *what, int64_t id);
void sim_gpus_give(sim_t *s, const pol_alloc_t *a);
void sim_run_remove(sim_t *s, int id);
int sim_act_start(sim_t *s, const pol_action_t *a);
int sim_act_preempt(sim_t *s, const pol_action_t *a);
int sim_act_resize(sim_t *s, const pol_action_t *a);
int sim_check_invariants(sim_t *s);
int sim_probe_frag(sim_t *s);

#endif
