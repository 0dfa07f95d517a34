/*
 * pol_fed_pin.c - agorad's application of the federation hold's state
 * machine (pol_fed_pin.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pol_fed_pin.h"

pol_fed_hold_act_t pol_fed_seen_act(const pol_fed_seen_t *s,
				    const pol_fed_mark_t *m, const char *me,
				    int pin_timeout_s, int64_t now,
				    int64_t *recheck)
{
	int64_t due;
	pol_fed_hold_act_t act;

	if (m->kind == POL_FED_MARK_NONE)
		return POL_FED_HOLD_NONE;
	if (!s->origin || !me || !strcmp(s->origin, me))
		return pol_fed_hold_next(&s->obs, m);
	if (s->revoked)
		return POL_FED_HOLD_NONE;
	/* a sibling copy pinned here: bid out again by its origin once
	 * its winner (here) has not started it in time */
	act = pol_fed_pin_next(&s->obs, m, me, pin_timeout_s, now);
	due = pol_fed_pin_due(&s->obs, m, me, pin_timeout_s);
	if (recheck && act == POL_FED_HOLD_NONE && due > now &&
	    (!*recheck || due < *recheck))
		*recheck = due;
	return act;
}

bool pol_fed_pin_wanted(pol_fed_hold_act_t act, bool has_winner)
{
	return pol_fed_hold_bids(act) ? has_winner : act != POL_FED_HOLD_NONE;
}

bool pol_fed_pin_rereads(pol_fed_hold_act_t act)
{
	return act != POL_FED_HOLD_NONE && act != POL_FED_HOLD_AUCTION;
}

pol_fed_pin_work_t pol_fed_pin_work(const pol_fed_pin_in_t *in)
{
	pol_fed_pin_work_t w = { .act = POL_FED_HOLD_NONE };
	const pol_fed_mark_t *m = in->mark_now;
	pol_fed_hold_act_t now_act;

	if (pol_fed_hold_bids(in->act)) {
		if (!in->winner || !in->decision)
			return w;
		/* a stale decision seen on its old winner: carried out only
		 * while the origin still carries it (never twice) */
		if (in->act == POL_FED_HOLD_REAUCTION &&
		    (!m || !pol_fed_reauction_confirm(m, in->stale_winner,
						      in->stamp_at)))
			return w;
		w.act = in->act;
		w.winner = in->winner;
		w.decision = in->decision;
		return w;
	}
	if (in->act == POL_FED_HOLD_NONE || !m || !in->obs_now)
		return w;
	/* a step an earlier round left: level-triggered, what the origin's
	 * copy shows now decides, with the winner and decision of its mark */
	now_act = pol_fed_hold_next(in->obs_now, m);
	if (now_act != POL_FED_HOLD_RELEASE && now_act != POL_FED_HOLD_FINISH)
		return w;
	w.act = now_act;
	w.winner = m->cluster;
	w.decision = m->decision && m->decision[0] ? m->decision
						   : POL_FED_TEXT_EARLIER;
	return w;
}

int pol_fed_update_build(pol_fed_step_t s, const pol_fed_pin_work_t *w,
			 int64_t now, int64_t hold_since, pol_fed_update_t *u)
{
	memset(u, 0, sizeof(*u));
	if (!w->decision) {
		errno = EINVAL;
		return -1;
	}
	switch (s) {
	case POL_FED_STEP_PIN:
		/* pinned while held (no sibling copy is submitted); the hold
		 * mark stays until the release lands */
		if (!w->winner || !w->winner[0]) {
			errno = EINVAL;
			return -1;
		}
		u->admin_comment = pol_fed_mark_pinned(w->winner, now,
						       hold_since, w->decision);
		if (!u->admin_comment)
			return -1; /* errno set */
		u->clusters = w->winner;
		return 0;
	case POL_FED_STEP_RELEASE:
		/* the origin submits to the winner only; the decision in
		 * the same update replaces the hold mark as the release
		 * lands, and is forwarded to the winner's copy */
		u->release = true;
		break;
	case POL_FED_STEP_FINISH:
		/* the decision alone: a job released with the pinned mark
		 * on, or a re-auction's pin (not held) */
		break;
	default:
		errno = EINVAL;
		return -1;
	}
	if (!(u->admin_comment = strdup(w->decision))) {
		errno = ENOMEM;
		return -1;
	}
	return 0;
}

void pol_fed_update_free(pol_fed_update_t *u)
{
	free(u->admin_comment);
	memset(u, 0, sizeof(*u));
}
