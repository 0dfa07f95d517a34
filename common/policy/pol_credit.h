/*
 * pol_credit.h - the credit ledger (MAST-style global priority + credit).
 *
 * Every account (Slurm account, or whatever AppDefinition maps a job to)
 * has a quota of GPU-hours per CreditPeriod P.  Running jobs are charged
 * the GPU-seconds they hold; past usage decays exponentially with
 * half-life H:
 *
 *     raw(t)   = raw(t0) * 2^(-(t - t0) / H) + charges in (t0, t]
 *     usage(t) = raw(t) * ln2 * P / H          (GPU-hours)
 *     credit   = quota - usage(t)              (GPU-hours, may be < 0)
 *
 * The factor ln2*P/H makes the decay kernel weigh the past exactly as
 * much in total as a sliding window of length P (integral of
 * 2^(-a/H) da = H/ln2), so an account that runs at exactly quota/P
 * GPU-hours per hour converges to usage == quota and credit == 0.
 * With P == H the factor is ln2 = 0.693.  See doc/fairness.md.
 *
 * Charges are order-independent: a charge time-stamped before the ledger's
 * reference time is decayed forward (the decay is linear), so records that
 * arrive late from another cluster give the same result as records that
 * arrived in time.  That makes the ledger mergeable: every charge is a
 * record (cluster, seq, account, gpu_seconds, t); pol_credit_absorb()
 * applies a foreign record once, keeping one high-water mark per source
 * cluster.  A federation helper ships the records a ledger produced
 * locally (pol_credit_charge() hands them out) and asks peers to resend
 * from pol_credit_hwm() + 1 after a restart.
 *
 * Pure: time is a parameter (int64_t seconds, any epoch), no I/O except
 * the explicit *_file() functions, no logging, no global state.
 *
 * Account names: every function that takes an account name keys it with
 * pol_app_key() (pol_app.h) first, so any name works (an empty one is
 * "(none)", one of 64+ bytes a prefix plus a hash) and the ledger, the
 * auction and the adapters agree on one entry per app.  Names handed out
 * (pol_credit_account(), records) are keys; a key is its own key.
 *
 * Ownership: a pol_credit_t is owned by its creator; free it with
 * pol_credit_destroy().  Strings passed in are copied.  Strings handed
 * out (pol_credit_save()) are owned by the caller (free()).
 */
#ifndef POL_CREDIT_H
#define POL_CREDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agora_conf.h"
#include "agora_err.h"
#include "pol_app.h"

/* Names of clusters and account keys, NUL included (pol_app.h). */
#define POL_CREDIT_NAME_LEN POL_APP_KEY_LEN

typedef struct pol_credit pol_credit_t;

/* One charge, as produced locally and as absorbed from a peer. */
typedef struct pol_credit_record {
	char cluster[POL_CREDIT_NAME_LEN]; /* source ledger's cluster name */
	uint64_t seq;                      /* 1, 2, ... per source */
	char account[POL_CREDIT_NAME_LEN];
	double gpu_seconds; /* >= 0 */
	int64_t t;          /* s, when the usage happened */
} pol_credit_record_t;

/*
 * Create an empty ledger for cluster 'cluster' (names its own records;
 * non-empty, shorter than POL_CREDIT_NAME_LEN).  half_life_s and period_s
 * > 0; default_quota >= 0 GPU-hours per period.
 * Returns NULL with errno EINVAL or ENOMEM.  Caller owns.
 */
pol_credit_t *pol_credit_create(const char *cluster, double half_life_s,
				double period_s, double default_quota);

/*
 * Create from agora.conf (CreditHalfLife, CreditPeriod, DefaultQuota,
 * AccountQuota).  Same errors as pol_credit_create().
 */
pol_credit_t *pol_credit_from_conf(const char *cluster,
				   const agora_conf_t *conf);

/* Free; *lp = NULL.  NULL or *lp == NULL: nothing happens. */
void pol_credit_destroy(pol_credit_t **lp);

/* Quota of one account (GPU-hours per period; account keyed, NULL is
 * EINVAL).  0 or -1/EINVAL|ENOMEM. */
int pol_credit_set_quota(pol_credit_t *l, const char *account,
			 double gpu_hours);
/* The account's quota (default quota if never set). */
double pol_credit_quota(const pol_credit_t *l, const char *account);

/*
 * Charge gpu_seconds (>= 0, finite) of usage at time t to account, as a
 * new local record (the ledger's cluster, next seq).  If rec is not NULL
 * the record is copied there for the federation helper to ship (its
 * account is the key).  0, or -1 with errno EINVAL (NULL account, bad
 * amount) or ENOMEM; on failure the
 * ledger is unchanged.
 */
int pol_credit_charge(pol_credit_t *l, const char *account, double gpu_seconds,
		      int64_t t, pol_credit_record_t *rec);

/*
 * From when a pass at now charges the GPUs in use (site_factor/agora's
 * pass; the snapshot charges running jobs for [since, now]): the previous
 * pass's time last_pass, but never more than POL_CREDIT_CHARGE_PASSES
 * passes of interval_s back, and at least 60 s (a controller that stalled,
 * a wall clock stepped forward: *capped, may be NULL, gets the gap then,
 * else 0); now when the clock stepped back (nothing is charged); 0 on a
 * first pass (last_pass 0: nothing to charge, also after a failover, when
 * the other controller charged the time between).
 */
#define POL_CREDIT_CHARGE_PASSES 10
int64_t pol_credit_charge_since(int64_t last_pass, int64_t now, int interval_s,
				int64_t *capped);

/*
 * Apply a record from another ledger once.  Returns 1 if applied, 0 if it
 * was a duplicate (rec->seq <= the high-water mark of rec->cluster, or the
 * record is our own), -1 with errno EINVAL/ENOMEM (ledger unchanged).
 * Records of one source must be absorbed in seq order; a gap is accepted
 * (the hwm jumps) because a lost record cannot be recovered later anyway.
 */
int pol_credit_absorb(pol_credit_t *l, const pol_credit_record_t *rec);

/* Highest seq absorbed from cluster (our own: last seq issued); 0 if none. */
uint64_t pol_credit_hwm(const pol_credit_t *l, const char *cluster);

/* Decayed usage in GPU-hours at time t (window-normalised, see top).  A t
 * before the account's latest charge reads as at that charge. */
double pol_credit_usage(const pol_credit_t *l, const char *account, int64_t t);
/* quota - usage(t), GPU-hours; an unknown account has its full quota. */
double pol_credit_get(const pol_credit_t *l, const char *account, int64_t t);

/* Number of accounts with usage state, and the i-th name (borrowed). */
size_t pol_credit_count(const pol_credit_t *l);
const char *pol_credit_account(const pol_credit_t *l, size_t i);

/*
 * State as JSON text (accounts' decayed usage, own seq, peers' hwms; not
 * the quotas or half-life, which come from agora.conf).  *json is owned by
 * the caller (free()).  0 or -1/ENOMEM.
 *
 *   {"version":1,"cluster":"c","seq":12,
 *    "accounts":[{"name":"a","raw":3600.0,"t":1000}],
 *    "sources":[{"cluster":"d","hwm":7}]}
 */
int pol_credit_save(const pol_credit_t *l, char **json);

/*
 * Replace the ledger's state with the JSON text (as from save).  'name'
 * labels errors: "name:accounts[2].raw: must be a finite number >= 0".
 * On failure: -1, errno EINVAL (or ENOMEM), err filled, ledger unchanged.
 * A state saved under another cluster name is accepted (renamed cluster):
 * its own seq becomes that source's hwm so its records are not re-applied.
 */
int pol_credit_load(pol_credit_t *l, const char *json, const char *name,
		    agora_err_t *err);

/* Largest state file pol_credit_load_file() reads (64 MiB). */
#define POL_CREDIT_FILE_MAX ((size_t) 64 << 20)

/*
 * Save the state to path with agora_file_write_atomic() (agora_file.h):
 * path.new (mode 0600, O_NOFOLLOW) fsynced, the previous file kept as
 * path.prev, renamed into place, directory fsynced; a symbolic link at
 * path is refused.  0, or -1 with errno and err naming the file.
 */
int pol_credit_save_file(const pol_credit_t *l, const char *path,
			 agora_err_t *err);

/*
 * Load the state from path (agora_file_read(): no symbolic link, a
 * regular file of at most POL_CREDIT_FILE_MAX bytes, no NUL), falling
 * back to path.prev when path is missing, unreadable or corrupt, so one
 * bad write never resets everyone's usage.
 * Returns 0: loaded from path.
 *         1: loaded from path.prev; err says why path was not used
 *            ("PATH:FIELD: why; loaded PATH.prev instead") for the log.
 *        -1: neither loaded (ledger unchanged); errno and err are those
 *            of path (ENOENT: no state at all, the first start), plus
 *            path.prev's error when it exists but is bad too.
 * Then call pol_credit_clamp_future() and pol_credit_prune() with the
 * current time (see there): loading does not look at a clock.
 */
int pol_credit_load_file(pol_credit_t *l, const char *path, agora_err_t *err);

/*
 * Clamp every account whose latest usage time is later than now to now,
 * so that after the clock stepped back (or a peer's clock runs ahead)
 * decay resumes at once instead of freezing until the clock catches up.
 * The usage recorded is kept (read as at now).  Idempotent; the policy
 * calls it at every pass.  Number of accounts clamped, or -1/EINVAL.
 */
int pol_credit_clamp_future(pol_credit_t *l, int64_t now);

/*
 * Drop the usage of accounts idle (no usage recorded) for more than
 * n_half_lives half-lives before now: it has decayed to at most
 * 2^-n_half_lives of what it was (20: one millionth), and the ledger
 * and its state file would otherwise grow with every app ever seen.  An
 * account with a configured quota keeps its quota entry.  Peers'
 * high-water marks are kept.  Number of accounts pruned, or -1/EINVAL
 * (n_half_lives not a finite number > 0).
 */
int pol_credit_prune(pol_credit_t *l, int64_t now, double n_half_lives);

/* Queue order ---------------------------------------------------------- */

/* What the order looks at for one job. */
typedef struct pol_credit_key {
	int band;       /* higher first */
	double credit;  /* of the job's account; higher first */
	int64_t submit; /* earlier first */
	int64_t id;     /* lower first: total order */
	int index;      /* caller's index, carried along */
} pol_credit_key_t;

/* qsort comparator over pol_credit_key_t: band desc, credit desc, submit
 * asc, id asc. */
int pol_credit_key_cmp(const void *a, const void *b);
/* k[0..n) in pol_credit_key_cmp's order, equal keys kept in their order
 * (as glibc's qsort keeps them); tmp: n keys of scratch. */
void pol_credit_key_sort(pol_credit_key_t *k, size_t n, pol_credit_key_t *tmp);

#endif
