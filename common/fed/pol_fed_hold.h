/*
 * pol_fed_hold.h - the federation hold of a job as a state machine whose
 * state lives on the job itself (its AdminComment), so that any agorad,
 * after any crash, and slurmctld's plugins when agorad is gone, can tell
 * from the job alone what is left to do (doc/design.md, "the federation
 * hold is level-triggered").
 *
 * The marks (AdminComment; only SlurmUser, root and admins may set it, so
 * a user cannot forge one), self-describing and versioned:
 *   "Agora: fed hold v1: waiting since T for ..."   held for the auction
 *   "Agora: fed hold v1: pinned to C at P, held since T; DECISION"
 *                                      Clusters=C set, release pending
 *   "Agora: fed hold v1: held by its owner or an admin ..."
 *                                      a hold that is not Agora's
 *   "Agora: fed auction: won by C ...; pinned at P, start by S,
 *    clusters L"                       the decision, once released (P, S
 *                                      and the clusters L it may run on,
 *                                      "*" for any: for the re-auction)
 *   "Agora: fed hold released: ..."    released by the fail-open timeout
 *   "Agora: fed hold: ..."             the unversioned hold of older
 *                                      releases (read as "waiting")
 *
 * A pin is two updates of the job at its origin: (1) Clusters=C with the
 * "pinned" mark, (2) the release (priority back) with the decision text
 * as the AdminComment, in one update.  The hold mark stays until the
 * release has landed (the two land together, atomically: slurmctld
 * applies one update under its job write lock), so a crash or a lost
 * answer between the steps leaves a job whose mark says what is left:
 * pol_fed_hold_next() gives it.  Slurm forwards the release's update,
 * decision included, to the winner's copy that the release submits
 * (slurmctld's _update_job sets the AdminComment, then releases, then
 * forwards the update to the active siblings, the new copy among them,
 * on the same queue as the copy's submission).  A release that
 * slurmctld refuses after writing the decision leaves a held job with
 * the decision, which the fail-open releases (pol_fed_hold_expired).
 * The decision as an update of its own (FINISH) is left for a job an
 * older agorad released with the pinned mark still on.  pol_fed_hold_expired() is the fail-open
 * rule site_factor/agora applies in slurmctld: a priority-0 job carrying
 * one of Agora's hold marks (or a decision while still held: a release
 * lost by an older agorad) for longer than FedAuctionTimeout is released.
 * A hold by its owner or an admin is never undone.
 *
 * Pure: no Slurm header, no clock (now is an argument), no logging.
 * Linked by agorad and by the plugins (libagorafedhold, no other
 * dependency).
 */
#ifndef POL_FED_HOLD_H
#define POL_FED_HOLD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define POL_FED_TEXT_HOLD_V1 "Agora: fed hold v1: "
#define POL_FED_TEXT_HOLD_VN "Agora: fed hold v" /* any version */
#define POL_FED_TEXT_HOLD_V0 "Agora: fed hold: "
#define POL_FED_TEXT_WON     "Agora: fed auction: "
#define POL_FED_TEXT_OPEN    "Agora: fed hold released: "
#define POL_FED_TEXT_VERSION 1

#define POL_FED_TEXT_STAMP        "; pinned at "
#define POL_FED_MARK_CLUSTER_LEN  64
#define POL_FED_MARK_CLUSTERS_LEN 256

typedef enum pol_fed_mark_kind {
	POL_FED_MARK_NONE = 0, /* no Agora federation mark */
	POL_FED_MARK_WAITING,  /* held for the auction */
	POL_FED_MARK_PINNED,   /* pinned to a cluster, release pending */
	POL_FED_MARK_FOREIGN,  /* held by its owner or an admin */
	POL_FED_MARK_WON,      /* the auction's decision (released) */
	POL_FED_MARK_OPEN,     /* released by the fail-open timeout */
	POL_FED_MARK_UNKNOWN,  /* a hold mark of a newer version, or one
				  that does not parse: Agora's, unread */
} pol_fed_mark_kind_t;

typedef struct pol_fed_mark {
	pol_fed_mark_kind_t kind;
	int version;      /* 0: the unversioned mark of older releases */
	int64_t since;    /* WAITING/PINNED: when Agora's hold began (0: not in
			  the mark; the job's submit time then) */
	int64_t at;       /* PINNED: when it was pinned; WON: from its stamp (0:
			  none) */
	int64_t start_by; /* WON: the winner's planned start (stamp) */
	char cluster[POL_FED_MARK_CLUSTER_LEN]; /* PINNED, WON: the winner */
	/* WON: the clusters it may run on, from its stamp ("" for any) */
	char clusters[POL_FED_MARK_CLUSTERS_LEN];
	const char *decision; /* PINNED: the decision text, borrowed from
				 the parsed text ("" if none) */
} pol_fed_mark_t;

/* Read the mark of an AdminComment (NULL: none) into *m. */
void pol_fed_mark_parse(const char *text, pol_fed_mark_t *m);

/* The marks' texts (malloc'ed, caller frees; NULL/ENOMEM, or EINVAL for
 * a cluster name that is empty, too long or holds ',', ';' or a space). */
char *pol_fed_mark_waiting(int64_t since, int timeout_s);
char *pol_fed_mark_pinned(const char *cluster, int64_t at, int64_t since,
			  const char *decision);
/* The decision text with its stamp: decision + "; pinned at P, start by
 * S, clusters L" (clusters: the job's viable clusters, NULL or "" for
 * any).  malloc'ed; NULL/ENOMEM, or EINVAL for clusters with a space or
 * ';', or longer than POL_FED_MARK_CLUSTERS_LEN - 1. */
char *pol_fed_mark_stamp(const char *decision, int64_t at, int64_t start_by,
			 const char *clusters);
/* The mark of a hold that is not Agora's, keeping what the job's mark
 * said before (may be NULL) after it. */
char *pol_fed_mark_foreign(const char *before);

/* What is observed of a job at its origin. */
typedef struct pol_fed_hold_obs {
	bool pending; /* pending and not revoked */
	bool active;  /* pending, running or suspended, here or (revoked
			 origin copy) at a sibling */
	bool held;    /* priority 0 */
	/* it has been requeued at least once (Slurm's restart count > 0):
	 * a hold now is Slurm's own (a launch failure, requeuehold, the
	 * requeue limit) or an admin's, never a release of Agora's that
	 * did not land */
	bool ran;
	int64_t submit;
} pol_fed_hold_obs_t;

typedef enum pol_fed_hold_act {
	POL_FED_HOLD_NONE = 0,  /* not Agora's, or nothing left to do */
	POL_FED_HOLD_AUCTION,   /* bid it out, then pin, release */
	POL_FED_HOLD_RELEASE,   /* pinned, still held: release with the
				   decision */
	POL_FED_HOLD_FINISH,    /* pinned and released: the decision */
	POL_FED_HOLD_REAUCTION, /* pinned and released, but its winner did
				   not start it in time: bid it out again
				   without that winner, pin, finish */
} pol_fed_hold_act_t;

/* Whether act bids the job out (AUCTION or REAUCTION). */
static inline bool pol_fed_hold_bids(int act)
{
	return act == POL_FED_HOLD_AUCTION || act == POL_FED_HOLD_REAUCTION;
}

/* agorad's next action for job o with mark m (level-triggered: only
 * what the job shows decides). */
pol_fed_hold_act_t pol_fed_hold_next(const pol_fed_hold_obs_t *o,
				     const pol_fed_mark_t *m);

/*
 * The failover of a pin (medium 6 of issue 19): o is what the winner's
 * copy of a job shows (pending there, not revoked), m its mark.  A job
 * whose decision (WON, stamped) names this cluster as its winner and that
 * is still pending, not held, timeout_s after the later of its pin and
 * its planned start, is auctioned again (REAUCTION) among its clusters
 * but this one: the winner drained, lost its nodes or cannot run it for a
 * reason the will-run did not show.  The job, never held again, keeps
 * its place here until another cluster wins it; a cluster that started
 * it meanwhile makes the origin refuse the new Clusters= (Slurm's
 * cluster lock), so it never runs twice.  NONE otherwise (timeout_s 0:
 * off; a job held by anyone; no stamp: an older agorad's decision).
 */
pol_fed_hold_act_t pol_fed_pin_next(const pol_fed_hold_obs_t *o,
				    const pol_fed_mark_t *m, const char *me,
				    int timeout_s, int64_t now);

/*
 * When pol_fed_pin_next() turns REAUCTION for what o and m show now: the
 * later of the pin and the planned start, plus timeout_s; 0 if it never
 * does (the same NONE cases).  agorad's survey reuses a cluster's job part
 * while its job table does not change, so the clock alone must make it
 * read again: it reads the table in full once the earliest due time of
 * the last full read has come.
 */
int64_t pol_fed_pin_due(const pol_fed_hold_obs_t *o, const pol_fed_mark_t *m,
			const char *me, int timeout_s);

/*
 * The origin's check before it re-pins (level-triggered on the origin,
 * whose copy is the job's truth): the winner's copy can show the old
 * decision for a while after a re-pin (the revoke reaches it through
 * Slurm's federation agent), so a re-auction seen there is carried out
 * only if the origin's mark is still the decision that names that winner
 * with that stamp (at).  A job the origin already re-pinned (PINNED or
 * WON naming another cluster, or another stamp) is left alone: never
 * re-pinned twice for one stale decision.
 */
bool pol_fed_reauction_confirm(const pol_fed_mark_t *at_origin,
			       const char *stale_winner, int64_t stamp_at);

/* The updates that carry out act, in order; a failed step ends the
 * sequence (the next round sees where it stopped). */
typedef enum pol_fed_step {
	POL_FED_STEP_PIN = 1, /* Clusters=<winner>, the pinned mark */
	POL_FED_STEP_RELEASE, /* priority back (INFINITE) and AdminComment =
				 the decision text, one update */
	POL_FED_STEP_FINISH,  /* AdminComment = the decision text alone (a
				 job released with the pinned mark on) */
} pol_fed_step_t;

/* steps[3] gets the sequence of act; returns its length (0 for NONE).
 * AUCTION: PIN, RELEASE; RELEASE: RELEASE; FINISH: FINISH; REAUCTION:
 * PIN, FINISH (the job is not held: nothing to release). */
int pol_fed_hold_steps(pol_fed_hold_act_t act, pol_fed_step_t steps[3]);

/*
 * The fail-open rule (site_factor/agora, at the origin): whether a held
 * job must be released now.  True for a held pending job with a
 * WAITING, PINNED or UNKNOWN hold mark, or a WON decision (a release that
 * never landed), once it has waited timeout_s since its hold began (the
 * mark's since, else submit), or at once when the auction is off.  Never
 * for a FOREIGN hold, an OPEN mark or a job without a mark.  *waited (may
 * be NULL) gets the seconds waited.
 */
bool pol_fed_hold_expired(const pol_fed_hold_obs_t *o, const pol_fed_mark_t *m,
			  bool auction_on, int timeout_s, int64_t now,
			  long *waited);

/*
 * Whether an update of a job whose mark is m puts a hold on it that is
 * not Agora's: it sets priority 0 (scontrol hold/uhold) without setting
 * an Agora hold mark itself (new_admin_comment: the update's, NULL if it
 * sets none).  job_submit/agora then marks the job FOREIGN, so that
 * neither agorad nor the fail-open undoes that hold.
 */
bool pol_fed_hold_update_is_foreign(const pol_fed_mark_t *m,
				    bool update_sets_hold,
				    const char *new_admin_comment);

#endif
