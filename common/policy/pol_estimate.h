/*
 * pol_estimate.h - how long a job will still run, from what a Slurm site
 * knows: the time limit the user asked for, the run times of the same
 * user's recent completed jobs, and the service the job already had.
 * The limit is an upper bound the user states, never trusted as the
 * estimate itself (doc/fairness.md, "remaining time").
 *
 * History (Tsafrir, Etsion and Feitelson, TPDS 2007): the mean run time of
 * the k most recent completed jobs (k = 2 by default) of the most
 * specific group that has any:
 *   level 0  same app, user, job name and GPU count
 *   level 1  same app, user and job name
 *   level 2  same app and user
 * then, when the key names the app's credit account and it is not the app
 * itself (apps that are bursts, arrays or name prefixes of an account,
 * AppDefinition != account), the same three of the account, levels 3-5:
 * an app without history of its own (a new burst) is priced by its
 * account's recent jobs, as with apps = accounts.  A sample of such a key
 * is kept both as its app's and as its account's (a job of app =
 * account), so the state needs no other field.
 * Estimate of the remaining run time of a job with limit L (0: none) and
 * attained service a (seconds of run time at its size):
 *   history h, a < h:        h - a
 *   history h, a >= h, or    max(a, prior): the longer a job has run, the
 *   no history:              longer it is expected to run (LAS/Tiresias)
 *   then capped by the limit: at most L - a (at least 1 s).
 *
 * The state is mergeable: it is, per level-0 group, the k most recent
 * samples (end time, run time) of every completed job recorded; merging
 * two states (pol_est_merge()) is their union, idempotent and
 * commutative.  It is saved as text (pol_est_save()):
 *   agora-estimates 1
 *   job APP USER NAME GPUS END RUN      one line per kept sample
 * APP, USER, NAME escaped: bytes outside [A-Za-z0-9._+@:/=,] as %XX, an
 * empty field as "-"; GPUS 0 = unknown; END (s since the epoch) and RUN
 * (s) integers.  '#' lines and blank lines are skipped.
 *
 * Pure: no clock, no logging, no globals; the caller passes every time.
 * Ownership: pol_est_t is the caller's (pol_est_destroy()); pol_est_save()
 * returns a string the caller frees.
 */
#ifndef POL_ESTIMATE_H
#define POL_ESTIMATE_H

#include <stdint.h>

#include "agora_err.h"

#define POL_EST_MAX_K     16
#define POL_EST_FIELD_LEN 64 /* bytes of app, user, name kept (longer: cut) */

typedef struct pol_est_params {
	int k;           /* samples averaged, 1..POL_EST_MAX_K (2) */
	int64_t prior_s; /* remaining time of a job with no history and no
			    * service, > 0 (3600) */
	int max_groups;  /* groups kept, all levels; the one with the
			    * oldest newest sample goes first (30000) */
} pol_est_params_t;

/* The group of a job.  NULL strings are empty; gpus 0 = unknown. */
typedef struct pol_est_key {
	const char *app;
	const char *user;
	const char *name;
	int gpus;
	/* the app's credit account; NULL, empty or equal to app: none (the
	 * app is the account) */
	const char *account;
} pol_est_key_t;

/* Where an estimate came from. */
typedef enum pol_est_source {
	POL_EST_HISTORY = 0, /* the recent-k mean, less the service so far */
	POL_EST_SERVICE, /* no history, or the job outran it: max(a, prior) */
	POL_EST_LIMIT,   /* capped by the time limit */
} pol_est_source_t;

typedef struct pol_est pol_est_t;

void pol_est_params_default(pol_est_params_t *p);

/* NULL params: defaults.  NULL with errno EINVAL (bad params) or ENOMEM. */
pol_est_t *pol_est_create(const pol_est_params_t *p);
void pol_est_destroy(pol_est_t **ep); /* *ep = NULL; NULL is fine */
const pol_est_params_t *pol_est_params(const pol_est_t *e);

/*
 * A completed job of group key ran run_s seconds and ended at end (kept
 * under its app and, with an account, under the account too).  1
 * recorded, 0 ignored (the same sample is already there, or it is older
 * than the k kept for its group, in the app and in the account), -1 with errno EINVAL (NULL e or key,
 * run_s < 0, gpus < 0, |end| >= 2^53) or ENOMEM.
 */
int pol_est_record(pol_est_t *e, const pol_est_key_t *key, int64_t run_s,
		   int64_t end);

/*
 * The recent-k mean run time of the most specific group of key with
 * samples into *mean and their count into *n: the level used (0..2 the
 * app's, 3..5 its account's), or -1 if none has any (*mean = 0, *n = 0).
 */
int pol_est_history(const pol_est_t *e, const pol_est_key_t *key, double *mean,
		    int *n);

/*
 * The remaining run time (s, >= 1) of a job of group key with time limit
 * limit_s (<= 0: none) that has run attained_s seconds (see the top).
 * src (may be NULL) says where it came from.
 */
int64_t pol_est_remaining(const pol_est_t *e, const pol_est_key_t *key,
			  int64_t limit_s, int64_t attained_s,
			  pol_est_source_t *src);

/* The same from a history looked up before (n = 0: none). */
int64_t pol_est_remaining_from(const pol_est_params_t *p, double mean, int n,
			       int64_t limit_s, int64_t attained_s,
			       pol_est_source_t *src);

/* Number of groups (all levels) and of level-0 samples kept. */
int pol_est_groups(const pol_est_t *e);
int pol_est_samples(const pol_est_t *e);

/*
 * Increases whenever a record changes what pol_est_history() answers, so
 * a caller may cache answers until it moves.
 */
uint64_t pol_est_generation(const pol_est_t *e);

/* The state as text (see the top), groups sorted; NULL with ENOMEM. */
char *pol_est_save(const pol_est_t *e);

/*
 * Add the samples of a saved state to e (into an empty e: the state as
 * saved).  file names the text in errors.  0, or -1 with errno EINVAL and
 * err = "FILE:LINE: FIELD: why" (e is unchanged then), or ENOMEM.
 */
int pol_est_load(pol_est_t *e, const char *text, const char *file,
		 agora_err_t *err);

/* Add every sample of src to dst.  0, or -1 (EINVAL, ENOMEM). */
int pol_est_merge(pol_est_t *dst, const pol_est_t *src);

#endif
