/*
 * pol_fed_willrun.h - which will-run requests agorad sends in a round.
 *
 * A will-run takes slurmctld's job and node write locks.  agorad asks one
 * per job shape and cluster; an answer is kept for a bound and stands for
 * later rounds while the cluster's free GPUs have not changed (what else
 * changes the answer, a start or an end, changes the free GPUs), and at
 * most a fixed number of shapes is asked per cluster and round: the rest
 * wait for the next round.  Snapshot in, decision out; no clock.
 */
#ifndef POL_FED_WILLRUN_H
#define POL_FED_WILLRUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* an answer stands this long at most */
#define POL_FED_WILLRUN_MAX_AGE_S 10
/* new requests per cluster and round */
#define POL_FED_WILLRUN_MAX_ASKS 64
/* a moot answer (pol_fed_willrun_moot) stands this long at most, free
 * GPUs changed or not */
#define POL_FED_WILLRUN_MOOT_AGE_S 60

typedef enum {
	POL_FED_WILLRUN_ASK = 0, /* send a will-run */
	POL_FED_WILLRUN_REUSE,   /* the kept answer stands */
	POL_FED_WILLRUN_DEFER,   /* over this round's budget: next round */
} pol_fed_willrun_act_t;

/* One shape's kept answer on one cluster. */
typedef struct {
	bool have;     /* an answer is kept */
	int64_t asked; /* when it was asked */
	int free_then; /* the cluster's free GPUs then */
	bool valid;    /* it was a plan (a refusal is never moot) */
} pol_fed_willrun_kept_t;

/* Whether kept answer k stands at now with free_now GPUs free. */
bool pol_fed_willrun_fresh(const pol_fed_willrun_kept_t *k, int64_t now,
			   int free_now, int max_age_s);

/* For the n shapes of a round on one cluster, in the order they are
 * asked: act[i] for shape i: REUSE if its answer stands, else ASK for
 * the first max_asks that need one, DEFER for the rest.  Returns the
 * number of ASK. */
int pol_fed_willrun_pick(const pol_fed_willrun_kept_t *kept, int n, int64_t now,
			 int free_now, int max_age_s, int max_asks,
			 pol_fed_willrun_act_t *act);

/* The same, where moot[i] (NULL: none) says that shape i's answer cannot
 * change its bid this round (pol_fed_willrun_moot): its kept answer then
 * stands while it is under moot_age_s old, whether or not the free GPUs
 * changed; with none kept it is asked, as any other.  A burst's second
 * round found both clusters' queues deep, and each of its will-runs
 * (slurmctld's job and node write locks, on a sibling busy taking the
 * copies) took up to 3.4 s to bid the horizon it would have bid without
 * them (doc/evaluation.md, "The sibling's answers on the round's
 * path"). */
int pol_fed_willrun_pick_moot(const pol_fed_willrun_kept_t *kept,
			      const bool *moot, int n, int64_t now,
			      int free_now, int max_age_s, int moot_age_s,
			      int max_asks, pol_fed_willrun_act_t *act);

/* One field of a held job's request into agorad's copy of it (issue 19,
 * medium 7: refuse rather than truncate): src (NULL: "") into dst[size]
 * whole, or not at all, since a truncated request would be a different
 * job.  On a refusal dst is left "" (unless size is 0) and, if *too_long
 * is still "", field's name goes into too_long[too_long_size], so that it
 * names the first field that did not fit; the will-run is then refused
 * with that name (pol_fed_willrun_refusal).  Returns true if src was
 * copied whole. */
bool pol_fed_willrun_copy(char *dst, size_t size, const char *src,
			  const char *field, char *too_long,
			  size_t too_long_size);

/* The bid's error for a job whose field too_long did not fit:
 * "<field> too long to copy into a will-run request" into buf[n]. */
void pol_fed_willrun_refusal(const char *too_long, char *buf, size_t n);

/* Whether agorad's heartbeat will-run is due on a cluster whose last
 * will-run was sent at last (0: never).  job_submit/agora holds new jobs
 * only while a will-run reached it within FedAuctionTimeout (timeout_s),
 * so one is due when the last is a quarter of that old (every round
 * below 4 s).  Any will-run counts.  Each changes the job table
 * (slurmctld creates and drops a job record for it), so that every
 * reader's update-time read misses: an idle federation sends no more. */
bool pol_fed_heartbeat_due(int64_t last, int64_t now, int timeout_s);

/* How many processes pin n jobs of one origin: one per per_worker jobs
 * (rounded up), at least 1, at most max_workers.  A pin is three
 * updates, one round trip each; parallel pins overlap the round trips. */
int pol_fed_pin_workers(int n, int max_workers, int per_worker);

#endif
