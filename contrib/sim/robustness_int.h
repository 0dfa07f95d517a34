/*
 * robustness_int.h - agora-sim robustness's shared state: the options and
 * the runs (robustness.c), the table, the JSON and the heat map
 * (robustness_report.c).
 */
#ifndef ROBUSTNESS_INT_H
#define ROBUSTNESS_INT_H

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#include "sim_cli.h"

#define R_MAX_POL  16
#define R_MAX_REG  8
#define R_MAX_CKPT 6

typedef struct rob {
	cli_ctx_t ctx;
	char pols[R_MAX_POL][64], labels[R_MAX_POL][64], prm[R_MAX_POL][256];
	int n_pol;
	char reg_text[R_MAX_REG][64];
	sim_limits_t reg[R_MAX_REG];
	int n_reg;
	int64_t ckpt[R_MAX_CKPT];
	int n_ckpt;
	const char *json, *plot;
	int threads;
	/* tasks: (regime, ckpt, policy), regime-major */
	cli_ctx_t *tctx; /* per (regime, ckpt) */
	cli_run_t *runs;
	int *order; /* the tasks in the order the workers take them */
	int n_threads;
	int n_tasks, next, failed;
	int n_run;    /* the workers take order[next..n_run) */
	int n_shared; /* runs copied from their first checkpoint cost's */
	pthread_mutex_t mu;
} rob_t;

/* robustness_report.c: */
void rob_print_table(FILE *f, const rob_t *r);
void rob_print_goals(FILE *f, const rob_t *r);
int rob_write_json(const rob_t *r);
int rob_write_plot(const rob_t *r);

#endif
