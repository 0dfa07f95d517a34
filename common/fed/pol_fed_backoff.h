/*
 * pol_fed_backoff.h - agorad skips a cluster that timed out, for a while
 * (issue 19 medium 9).
 *
 * A cluster whose slurmctld does not answer (stopped, paused, a dead
 * host behind a route that drops packets) costs a federation round the
 * whole child limit (AD_CHILD_LIMIT_S and the grace of its kill) at every
 * step that asks it.  Each round asking it again would make every round
 * that long.  After a timeout the cluster is skipped (counted as down:
 * no survey, no will-run, no pin) for base_s, doubled at each further
 * timeout in a row up to max_s; one answer (even a refusal, which costs
 * nothing) clears it.  A refusal that comes at once (connection refused)
 * is not a timeout: it does not back off.
 *
 * Pure: no clock (now is an argument), no Slurm header, no logging.
 */
#ifndef POL_FED_BACKOFF_H
#define POL_FED_BACKOFF_H

#include <stdbool.h>
#include <stdint.h>

#define POL_FED_BACKOFF_BASE_S 30
#define POL_FED_BACKOFF_MAX_S  600

typedef struct pol_fed_backoff {
	int timeouts;  /* in a row */
	int64_t until; /* skipped while now < until (0: not skipped) */
} pol_fed_backoff_t;

/* Whether the cluster is skipped at now. */
bool pol_fed_backoff_skip(const pol_fed_backoff_t *b, int64_t now);

/* Record what the cluster did when asked at now: timed_out, or answered
 * (answered or refused in time).  Returns the seconds it is skipped for
 * from now (0: not skipped).  base_s <= 0 or max_s < base_s: the
 * defaults. */
int pol_fed_backoff_note(pol_fed_backoff_t *b, bool timed_out, int64_t now,
			 int base_s, int max_s);

#endif
