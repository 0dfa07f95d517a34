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
#include "sim_bounds.h"
#include "trace.h"

/* One policy's run in a comparison.  Owned by the cli (cli_run_free). */
typedef struct cli_run {
	char label[64];
	char policy[64];
	char params[256];
	sim_result_t res;
	sim_summary_t sum;
	double wall_s;
	double cpu_s;  /* the run's thread CPU time */
	bool livelock; /* the run failed on the livelock guard */
	bool app_bids; /* the policy ran on the apps (pol_policy_set_apps()) */
	char error[512]; /* why the run failed */
} cli_run_t;

typedef struct cli_ctx {
	const char *trace_path, *cluster_spec, *filter_name, *placement;
	trace_t trace;
	pol_cluster_t *cluster;
	sim_params_t params;
	bool progress;
	/* apps for Themis' rho: "tenant" (app = NULL, names = tenants),
	 * "sweep" (job-name prefix within a tenant), "burst[:GAP]" or
	 * "array[:GAP]" (pol_apps.h, the tenant as the account; cli_apps()) */
	const char *app_mode;
	/* --auction-apps account: a policy with apps (agora) still sees
	 * tenants; default (false): it runs its auction and rho on the
	 * apps above, the credit per tenant (pol_policy_set_apps()) */
	bool auction_accounts;
	double window_from, window_days; /* --window FROM:DAYS (days 0: all) */
	int *app;
	int n_apps;
	char (*app_names)[POL_NAME_LEN];
	/* --bounds (cli_bounds()): the bounds, and the run whose gap to them
	 * the others close (backfill-fs if run, else the baseline) */
	bool have_bounds;
	sim_bounds_t bounds;
	char bounds_base[64];
	double base_jct_s, base_rho;
} cli_ctx_t;

double cli_now(void);        /* monotonic seconds */
double cli_thread_cpu(void); /* the calling thread's CPU seconds */
/* defaults: sim_params_default(), filter none, placement stock, apps by
 * tenant */
void cli_ctx_init(cli_ctx_t *ctx);
char *cli_read_file(const char *path, agora_err_t *err);
int cli_parse_double(const char *s, double lo, double hi, double *out);
int cli_parse_slowdown(const char *s, double *out);
/* trace and cluster of ctx (and its apps); 0, or -1 with a message */
int cli_load_inputs(cli_ctx_t *ctx);
/* run one labelled policy over ctx's trace and summarize it (no
 * progress line when run->label is empty); 0, or -1 with a message */
int cli_run_one(const cli_ctx_t *ctx, cli_run_t *run);

/* long options of the model, shared by the subcommands (cli_model_opt) */
/* long-only model options (no short letter to collide with) */
#define CLI_OPT_LAUNCH   0x300
#define CLI_OPT_LIVELOCK 0x301
#define CLI_OPT_AUCTION  0x302

#define CLI_MODEL_OPTIONS                                                      \
	{ "trace", required_argument, NULL, 't' },                             \
		{ "cluster", required_argument, NULL, 'c' },                   \
		{ "filter", required_argument, NULL, 'f' },                    \
		{ "placement", required_argument, NULL, 'x' },                 \
		{ "progress", no_argument, NULL, 'r' },                        \
		{ "no-check", no_argument, NULL, 'n' },                        \
		{ "app", required_argument, NULL, 'A' },                       \
		{ "seed", required_argument, NULL, 's' },                      \
		{ "limit-factor", required_argument, NULL, 'L' },              \
		{ "limits", required_argument, NULL, 'l' },                    \
		{ "slowdown", required_argument, NULL, 'S' },                  \
		{ "restart", required_argument, NULL, 'R' },                   \
		{ "ckpt", required_argument, NULL, 'K' },                      \
		{ "restart-overhead", required_argument, NULL, 'O' },          \
		{ "launch-overhead", required_argument, NULL,                  \
		  CLI_OPT_LAUNCH },                                            \
		{ "limit-kill", required_argument, NULL, 'k' },                \
		{ "elastic-serial", required_argument, NULL, 'E' },            \
		{ "window", required_argument, NULL, 'W' },                    \
		{ "livelock", required_argument, NULL, CLI_OPT_LIVELOCK },     \
		{ "auction-apps", required_argument, NULL, CLI_OPT_AUCTION },  \
	{                                                                      \
		"bin", required_argument, NULL, 'B'                            \
	}
int cli_model_opt(int ch, const char *arg, cli_ctx_t *ctx);
void cli_model_opt_error(int ch, const char *arg);
const char *cli_kill_name(sim_limit_kill_t k);
/* "none", "continuous" or the interval in seconds, written into buf */
const char *cli_ckpt_name(int64_t ckpt_s, char *buf, size_t len);
/* --window: drop the trace's jobs outside it; 0 or -1 with a message */
int cli_window(cli_ctx_t *ctx);
/* group the loaded trace's jobs into apps by ctx->app_mode; 0 or -1 */
int cli_apps(cli_ctx_t *ctx);
void cli_apps_free(cli_ctx_t *ctx);
/* summarize one finished run with the context's apps; 0 or -1 */
int cli_summarize(const cli_ctx_t *ctx, cli_run_t *run);

/* bounds of ctx's trace, cluster and apps into ctx (runs[base], or the
 * run of backfill-fs, the base of the gaps); 0 or -1 with a message */
int cli_bounds(cli_ctx_t *ctx, const cli_run_t *runs, int n, int base);
void report_bounds(FILE *f, const cli_ctx_t *ctx, const cli_run_t *runs, int n);
int report_bounds_json(const char *path, const cli_ctx_t *ctx);

void report_table(FILE *f, const cli_ctx_t *ctx, cli_run_t *runs, int n,
		  int baseline);
int report_json(const char *path, const cli_ctx_t *ctx, cli_run_t *runs, int n);
struct json_object;
/* one run's summary keys into o */
void report_json_summary(struct json_object *o, const cli_ctx_t *ctx,
			 const cli_run_t *run);
int report_jobs_csv(const char *path, const cli_ctx_t *ctx,
		    const cli_run_t *run);
int report_plots(const char *dir, const cli_ctx_t *ctx, cli_run_t *runs, int n);
/* run gnuplot on script; 0, or -1 with a message */
int report_gnuplot(const char *script);

int bench_main(int argc, char **argv);
int slice_main(int argc, char **argv);      /* replay.c */
int score_main(int argc, char **argv);      /* replay.c */
int robustness_main(int argc, char **argv); /* robustness.c */
int strategic_main(int argc, char **argv);  /* strategic.c */
int federation_main(int argc, char **argv); /* federation.c */

#endif
