/*
 * pol_fed_pace.h - when agorad's next federation round starts, and sets
 * of job ids (refusals logged, pins in flight).
 *
 * A round runs every FedAuctionInterval as a rule.  After a round that
 * pinned jobs the next starts at once: in a burst, the jobs submitted
 * while a round's pins ran wait for no interval on top (issue 18: up to
 * 1 s of the submit-to-pinned p99).  Every such round made progress (a
 * pinned job leaves the held set), so the rounds at once end with the
 * burst; a round that pinned nothing (all failed, none held) waits.
 *
 * The id set: the ids of the jobs whose refusal (pol_fed_willrun_copy)
 * was logged, so that it is logged once per job rather than every
 * round (kept to the jobs still refused); and the ids of the jobs a pins
 * step still in flight has, which a later round leaves alone.
 *
 * Pure: no Slurm header, no clock (times are arguments), no logging.
 */
#ifndef POL_FED_PACE_H
#define POL_FED_PACE_H

#include <stdbool.h>
#include <stdint.h>

/* Seconds from now until the next round: 0 after a round that pinned
 * jobs (pinned > 0), else what is left of interval_s since the round
 * began (elapsed_s ago), at least 0. */
double pol_fed_round_wait_s(double interval_s, double elapsed_s, int pinned);

/* Whether a round may go on without a cluster whose survey is still
 * reading, its last answer standing in (issue 18: on Slurm 24.11 the
 * sibling that takes a burst's copies answers its job table read in
 * 0.6-2.4 s, slurmctld's job lock, while the origin answers in 0.01-0.07
 * s; every job submitted meanwhile waited for it).  Only such a
 * sibling: one with pins on their way to it (pins_on_way > 0), whose
 * answer was not given up in the round before (was_late: a cluster's
 * own new held jobs wait at most one round, and an origin busy with
 * its own submissions, which has no pins on their way, is always
 * waited for).  Yes when the round's first answer came grace_s or more
 * ago (first_at: when, < 0 none yet), and the cluster's last full
 * answer was read at kept_at (< 0: none) no more than max_age_s before
 * now (0: never).  So a bid stands on a survey at most max_age_s old,
 * plus the pins on their way (counted by pol_fed_inflight_load).  Times
 * in seconds on one clock. */
bool pol_fed_survey_late(double now, double first_at, double kept_at,
			 int pins_on_way, bool was_late, double grace_s,
			 double max_age_s);

typedef struct pol_fed_idset {
	uint32_t *v; /* sorted */
	int n, cap;
} pol_fed_idset_t;

/* Adds id to s: whether it is new (a refusal not logged yet).  true if
 * it cannot be kept (out of memory): a log line twice rather than never;
 * use pol_fed_idset_has where a missing id matters. */
bool pol_fed_idset_add(pol_fed_idset_t *s, uint32_t id);

/* Whether s holds id. */
bool pol_fed_idset_has(const pol_fed_idset_t *s, uint32_t id);

/* Removes id from s (none: nothing). */
void pol_fed_idset_del(pol_fed_idset_t *s, uint32_t id);

/* Keeps only the ids of s that are among keep[n] (any order). */
void pol_fed_idset_keep(pol_fed_idset_t *s, const uint32_t *keep, int n);

void pol_fed_idset_free(pol_fed_idset_t *s);

/* The copies to cancel at one cluster: of alive[n_alive], the live copies
 * there of jobs from other origins (pending, running or suspended, not
 * revoked), those whose id is in cancelled[n_cancelled], the jobs that
 * their origin shows cancelled.  Slurm 22.05 delivers a sibling's copies
 * and forwarded cancels one a second, so a cancel at the origin in the
 * seconds after a burst's pins misses the copies still on their way: they
 * arrive and start (on the harness 48 of 130 were running a minute after
 * `scancel -u` at the origin; doc/federation.md, "Faults").  A copy whose
 * origin says cancelled is the user's cancel not yet applied.  Into out
 * (room for n_alive), in alive's order; returns how many (-1: out of
 * memory, nothing decided). */
int pol_fed_orphans(const uint32_t *alive, int n_alive,
		    const uint32_t *cancelled, int n_cancelled, uint32_t *out);

#endif
