/*
 * sim_bounds.h - lower bounds for a trace on a cluster of C GPUs, beside
 * the policies' results (doc/sim.md "Bounds").  Pure.
 *
 * Every job j: submit r_j, duration d_j (ideal placement), g_j GPUs, work
 * w_j = g_j d_j.  Jobs larger than the cluster are left out (the simulator
 * skips them too).  Both bounds relax the cluster to one fluid resource of
 * C GPU-seconds per second: no gang, placement, restart or limit.
 *
 *  - mean JCT: every JCT is at least d_j, and the sum of completion times
 *    of any schedule is at least that of preemptive SRPT on the fluid
 *    resource (optimal for 1|r_j,pmtn|sum C_j, job j being w_j / C long),
 *    so mean JCT >= max(mean d_j, mean (F_j^SRPT - r_j)).
 *
 *  - max rho_app (sim.h's definition): for a candidate rho every app a
 *    must end by D_a = s_a + rho T_id(a, N_a) for some N_a >= its N_avg in
 *    the run.  N_a starts at the number of apps (N(t) can be no larger)
 *    and is tightened three times to max over [s_a, D_a] of
 *    #{b : s_b <= t <= D_b} (a run in which every app meets its D_b has no
 *    more apps alive at t).  rho is infeasible when some job cannot end by
 *    its deadline alone (r_j + d_j > D_a) or fluid EDF on C GPU-s/s misses
 *    one (for one fluid resource EDF meets every deadline exactly when the
 *    max-flow of Horn's test, 1974, saturates the jobs; the per-job rate
 *    cap g_j of the full test is dropped, which only lowers the bound).
 *    The bound is the least feasible rho, by bisection (1e-4 relative).
 *    Valid when every job finishes: a job killed at its limit leaves its
 *    app's rho in the simulator.
 *
 * The srtf oracle's result (agora-sim compare) is a third reference:
 * perfect knowledge, but a heuristic, not a proof.
 */
#ifndef SIM_BOUNDS_H
#define SIM_BOUNDS_H

#include "sim.h"

typedef struct sim_bounds {
	int jobs;              /* jobs counted (fit the cluster) */
	double mean_dur_s;     /* mean d_j */
	double mean_srpt_s;    /* mean F_j^SRPT - r_j on the fluid resource */
	double mean_jct_lb_s;  /* the max of the two */
	double max_rho_app_lb; /* least feasible rho (NaN: no app) */
	int n_apps;
} sim_bounds_t;

/*
 * Bounds for jobs[0..n) on total_gpus GPUs; app[i] in [0, n_apps) (NULL:
 * tenants, n_apps = the number of tenants).  0, or -1/EINVAL (bad input)
 * or ENOMEM.
 */
int sim_bounds(const sim_job_t *jobs, int n, int total_gpus, const int *app,
	       int n_apps, sim_bounds_t *out);

/* The share of the gap from base to bound that value closes:
 * (base - value) / (base - bound); NaN when base <= bound. */
double sim_gap_closed(double base, double value, double bound);

#endif
