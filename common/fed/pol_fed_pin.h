/*
 * pol_fed_pin.h - how agorad carries out the federation hold's state
 * machine (pol_fed_hold.h) on a job: the act the survey of a cluster
 * gives a job it sees there, what the pins child does for that job this
 * round once it has re-read it at its origin, and the update each step
 * sends.  pol_fed_hold.h decides what is left from what the job shows;
 * these functions are the rest of the decision that agorad used to take
 * itself (which copy of a job decides, which winner and text a step
 * writes, when a re-auction is carried out), so that agorad only reads
 * Slurm into them and sends the updates they return, and the crash
 * orders of a pin and of a re-auction are unit tested against the code
 * agorad runs (tests/unit/test_fed_pin.c).
 *
 * Pure: no Slurm header, no clock (now is an argument), no logging.
 */
#ifndef POL_FED_PIN_H
#define POL_FED_PIN_H

#include <stdbool.h>
#include <stdint.h>

#include "pol_fed_hold.h"

/* The decision a half-done pin is finished with when its pinned mark
 * carries none (a mark of an older agorad). */
#define POL_FED_TEXT_EARLIER POL_FED_TEXT_WON "decided in an earlier round"

/* What the survey of one cluster sees of a copy of a job. */
typedef struct pol_fed_seen {
	pol_fed_hold_obs_t obs;
	const char *origin; /* its origin cluster (NULL: not federated) */
	bool revoked;       /* a revoked copy: the job runs or waits on a
			       sibling */
} pol_fed_seen_t;

/*
 * The act of copy s, whose AdminComment reads m, seen on cluster me.  At
 * its origin (or a job that is not federated): the state machine's next
 * action (pol_fed_hold_next), NONE without an Agora mark.  A sibling copy
 * that is not revoked: the failover of its pin (pol_fed_pin_next, off at
 * pin_timeout_s 0).  A revoked copy: NONE.  recheck (may be NULL): if the
 * clock alone later turns a sibling copy's NONE into REAUCTION
 * (pol_fed_pin_due), *recheck is lowered to that time (0: none yet).
 */
pol_fed_hold_act_t pol_fed_seen_act(const pol_fed_seen_t *s,
				    const pol_fed_mark_t *m, const char *me,
				    int pin_timeout_s, int64_t now,
				    int64_t *recheck);

/* Whether a job with the survey's act and an auction winner (or none)
 * is the pins child's to do this round: a bid-out job once it has a
 * winner, any other act always (a step an earlier round left). */
bool pol_fed_pin_wanted(pol_fed_hold_act_t act, bool has_winner);

/* Whether the pins child reads the job again at its origin before
 * pol_fed_pin_work: every act but a fresh AUCTION (the survey of this
 * round saw it waiting; a REAUCTION seen on its old winner, and a step
 * an earlier round left, are decided by the origin's copy as it is now). */
bool pol_fed_pin_rereads(pol_fed_hold_act_t act);

/* One job as the pins child has it this round. */
typedef struct pol_fed_pin_in {
	pol_fed_hold_act_t act; /* the survey's (pol_fed_seen_act) */
	/* the auction's winner (NULL: none) and its decision text */
	const char *winner;
	const char *decision;
	/* REAUCTION: the old winner it was seen pending on, and its
	 * decision's stamp (pin time) */
	const char *stale_winner;
	int64_t stamp_at;
	/* the job re-read at its origin (pol_fed_pin_rereads), its
	 * AdminComment's mark; NULL: not read, or the read failed */
	const pol_fed_hold_obs_t *obs_now;
	const pol_fed_mark_t *mark_now;
} pol_fed_pin_in_t;

/* What the pins child carries out: act's steps (pol_fed_hold_steps) with
 * this winner and decision (borrowed from the input). */
typedef struct pol_fed_pin_work {
	pol_fed_hold_act_t act; /* NONE: nothing this round */
	const char *winner;
	const char *decision;
} pol_fed_pin_work_t;

/*
 * The work on one job:
 *   AUCTION with a winner: pin to it and release with its decision.
 *   REAUCTION with a winner: pin to it and write its decision, only if
 *     the origin's copy still carries the stale decision
 *     (pol_fed_reauction_confirm); else nothing (re-pinned already).
 *   any other act: what the origin's copy shows now (pol_fed_hold_next):
 *     RELEASE or FINISH with the winner and decision of its pinned mark
 *     (POL_FED_TEXT_EARLIER if the mark has none); else nothing.
 * Nothing without a winner (bids), or without a re-read (the rest).
 */
pol_fed_pin_work_t pol_fed_pin_work(const pol_fed_pin_in_t *in);

/* The update of the job at its origin that carries out one step. */
typedef struct pol_fed_update {
	const char *clusters; /* Clusters= (borrowed); NULL: unchanged */
	bool release;         /* priority back (INFINITE) */
	char *admin_comment;  /* the AdminComment (malloc'ed) */
} pol_fed_update_t;

/*
 * The update of step s of work w, at time now, for a job held since
 * hold_since:
 *   PIN      Clusters=<winner>, AdminComment = the pinned mark (winner,
 *            now, hold_since, the decision inside)
 *   RELEASE  priority back, AdminComment = the decision (one update)
 *   FINISH   AdminComment = the decision
 * 0, or -1 with errno (EINVAL: no winner or decision, or a winner the
 * marks cannot carry; ENOMEM).  *u is cleared first; free it with
 * pol_fed_update_free.
 */
int pol_fed_update_build(pol_fed_step_t s, const pol_fed_pin_work_t *w,
			 int64_t now, int64_t hold_since, pol_fed_update_t *u);
void pol_fed_update_free(pol_fed_update_t *u);

#endif
