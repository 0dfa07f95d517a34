/*
 * pol_apps.h - which jobs form one app (Themis' unit of fairness).
 *
 * An app is what a user submits as one experiment.  Themis (NSDI'20)
 * schedules hyper-parameter sweeps of tens of jobs as one app; in Slurm a
 * sweep is a job array, or a run of jobs of one user with one name.  The
 * definitions (AppDefinition in agora.conf, --app in agora-sim):
 *
 *   ACCOUNT      one app per account (the tenant; Philly's virtual cluster)
 *   USER         one app per user
 *   NAME_PREFIX  one app per account and job-name prefix (the name up to
 *                the separator)
 *   ARRAY        Themis' apps as Slurm names them: the jobs of one job
 *                array are one app; else the jobs of one account and user
 *                with the same (non-empty) name whose submissions follow
 *                each other within gap_s are one app; else (no name) the
 *                job alone is an app
 *   BURST        for traces without names: the jobs of one account whose
 *                submissions follow each other within gap_s
 *
 * "Follow each other within gap_s": sorted by submit time, two
 * consecutive jobs of the same key belong to the same app when the later
 * was submitted at most gap_s after the earlier (single linkage: a sweep
 * submitted one job every 50 minutes over a day is one app at gap 1 h).
 *
 * The grouping is a pure function of the jobs handed in: a caller that
 * wants an app to keep its identity from one scheduling pass to the next
 * hands in the jobs that joined it earlier too (finished ones included),
 * at least its first job, which names it (pol_apps_name()).
 *
 * An account may own at most max_per_account apps (NAME_PREFIX, ARRAY,
 * BURST; 0 = no cap): its apps beyond that many, in the order of their
 * first job, are merged into one, "ACCOUNT/~other" (pol_apps_app_name()).
 * Job names are the user's: without the cap, one user could split a
 * queue into any number of apps, each with its own share of the auction.
 *
 * Apps are numbered 0..n_apps-1 in the order of their first job (earliest
 * submit, then lowest index in the input): the same input gives the same
 * numbers.  Pure: no global state; pol_apps_build() allocates the result
 * (pol_apps_free()).
 */
#ifndef POL_APPS_H
#define POL_APPS_H

#include <stddef.h>
#include <stdint.h>

#include "agora_err.h"

typedef enum pol_apps_def {
	POL_APPS_ACCOUNT = 0,
	POL_APPS_USER,
	POL_APPS_NAME_PREFIX,
	POL_APPS_ARRAY,
	POL_APPS_BURST,
} pol_apps_def_t;

/* The largest gap_s accepted (a week). */
#define POL_APPS_MAX_GAP (7 * 86400)

typedef struct pol_apps_spec {
	pol_apps_def_t def;
	int64_t gap_s;       /* ARRAY, BURST: 0..POL_APPS_MAX_GAP */
	char separator;      /* NAME_PREFIX: the name is cut at its first one */
	int max_per_account; /* apps per account (see top); 0: no cap */
} pol_apps_spec_t;

/* The default cap (AppsPerAccount) and the largest accepted. */
#define POL_APPS_DEFAULT_PER_ACCOUNT 64
#define POL_APPS_MAX_PER_ACCOUNT     100000

/* What the builders look at in a job; strings are borrowed, NULL = "". */
typedef struct pol_apps_job {
	int64_t id;
	int64_t submit; /* s */
	const char *account;
	const char *user;
	const char *name;
	int64_t array_id; /* the array's job id (Slurm array_job_id); 0: none */
} pol_apps_job_t;

typedef struct pol_apps {
	int *app;             /* [n jobs]: the app of job i, in [0, n_apps) */
	int *first;           /* [n_apps]: index of the app's first job */
	int *size;            /* [n_apps]: its number of jobs */
	unsigned char *other; /* [n_apps]: 1 for an account's overflow app */
	int n_apps;
} pol_apps_t;

/*
 * Group jobs[0..n) into apps under spec (see top).  Fills *out (freed
 * with pol_apps_free()).  0, or -1 with errno EINVAL (bad spec: err says
 * why) or ENOMEM; *out is empty on failure.
 */
int pol_apps_build(const pol_apps_spec_t *spec, const pol_apps_job_t *jobs,
		   int n, pol_apps_t *out, agora_err_t *err);
void pol_apps_free(pol_apps_t *a);

/*
 * The name of the app whose first job is first, into out (always
 * NUL-terminated, cut at len): ACCOUNT the account, USER "user:USER",
 * NAME_PREFIX "ACCOUNT/PREFIX" (the name up to the separator); ARRAY "ACCOUNT/array:ID" (an
 * array), "ACCOUNT/USER/NAME#ID" (ID: the first job's id) or
 * "ACCOUNT/job:ID" (a job without a name); BURST "ACCOUNT#ID".  Feed it
 * to pol_app_key() for a key of at most 63 bytes.
 */
void pol_apps_name(const pol_apps_spec_t *spec, const pol_apps_job_t *first,
		   char *out, size_t len);

/* The name of app g of a (pol_apps_name() of its first job, or
 * "ACCOUNT/~other" for an account's overflow app). */
void pol_apps_app_name(const pol_apps_spec_t *spec, const pol_apps_t *a,
		       const pol_apps_job_t *jobs, int g, char *out,
		       size_t len);

/* Bytes of name before its first sep (the whole name without one). */
size_t pol_apps_prefix_len(const char *name, char sep);

/* "account", "user", "name_prefix", "array", "burst"; NULL if unknown. */
const char *pol_apps_def_name(pol_apps_def_t def);

/*
 * Parse "account" (or "tenant"), "user", "name_prefix", "array[:GAP]",
 * "burst[:GAP]" (GAP in seconds, or with a suffix s, m, h or d; default
 * gap 3600 s) into *spec (separator '_', no cap per account).  0, or -1/EINVAL with err.
 */
int pol_apps_parse(const char *text, pol_apps_spec_t *spec, agora_err_t *err);

#endif
