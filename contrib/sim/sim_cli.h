/*
 * sim_cli.h - pieces of the agora-sim program (contrib/sim): the run of
 * one policy, and the reports (table, JSON, per-job CSV, gnuplot).
 * Everything here is the tool's; the core (common/) stays pure.
 */
#ifndef SIM_CLI_H
#define SIM_CLI_H

#include <stdio.h>

#include "pol_policy.h"
#include "sim.h"
#include "trace.h"

/* One policy's run in a comparison.  Owned by the cli (cli_run_free). */
typedef struct cli_run {
	char label[64];
	char policy[64];
	char params[256];
	sim_result_t res;
	sim_summary_t sum;
	double wall_s;
} cli_run_t;

typedef struct cli_ctx {
	const char *trace_path, *cluster_spec, *filter_name, *placement;
	trace_t trace;
	pol_cluster_t *cluster;
	sim_params_t params;
	bool progress;
} cli_ctx_t;

double cli_now(void); /* monotonic seconds */

void report_table(FILE *f, const cli_ctx_t *ctx, cli_run_t *runs, int n,
		  int baseline);
int report_json(const char *path, const cli_ctx_t *ctx, cli_run_t *runs, int n);
int report_jobs_csv(const char *path, const cli_ctx_t *ctx,
		    const cli_run_t *run);
int report_plots(const char *dir, const cli_ctx_t *ctx, cli_run_t *runs, int n);

int bench_main(int argc, char **argv);
int slice_main(int argc, char **argv); /* replay.c */
int score_main(int argc, char **argv); /* replay.c */

#endif
