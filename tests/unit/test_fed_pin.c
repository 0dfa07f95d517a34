/*
 * Unit tests of agorad's application of the federation hold
 * (common/fed/pol_fed_pin.c): which copy of a job decides, what the pins
 * child does after its re-read, the update of each step, and the crash
 * orders of a pin and of a re-auction (a pin's failover), run with the
 * functions agorad calls against a model of a job's copies (origin c1,
 * old winner c2, new winner c3) until nothing is left to do: never held
 * for ever, never re-pinned twice for one stale decision.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pol_fed_pin.h"

#define T0      1000000
#define TIMEOUT 60
#define PIN_TO  30

/* ---- pol_fed_seen_act: which copy decides --------------------------- */

static void test_seen_act(void **state)
{
	char *waiting = pol_fed_mark_waiting(T0, TIMEOUT);
	char *pinned = pol_fed_mark_pinned("c2", T0 + 2, T0, "Agora: fed x");
	char *won = pol_fed_mark_stamp("Agora: fed auction: won by c2 (x)",
				       T0 + 2, T0 + 2, "c1,c2,c3");
	static const struct {
		const char *name;
		int text; /* 0 none, 1 waiting, 2 pinned, 3 won (c2) */
		const char *origin, *me;
		bool pending, held, revoked;
		int64_t now;
		pol_fed_hold_act_t want;
		int64_t recheck; /* *recheck after (from 0) */
	} cases[] = {
		{ "no mark", 0, "c1", "c1", true, true, false, T0,
		  POL_FED_HOLD_NONE, 0 },
		{ "waiting at its origin", 1, "c1", "c1", true, true, false, T0,
		  POL_FED_HOLD_AUCTION, 0 },
		{ "waiting, not federated", 1, NULL, "c1", true, true, false,
		  T0, POL_FED_HOLD_AUCTION, 0 },
		{ "a waiting copy seen on a sibling", 1, "c1", "c2", true, true,
		  false, T0, POL_FED_HOLD_NONE, 0 },
		{ "pinned, held at its origin", 2, "c1", "c1", true, true, true,
		  T0, POL_FED_HOLD_RELEASE, 0 },
		{ "pinned, released at its origin", 2, "c1", "c1", true, false,
		  true, T0, POL_FED_HOLD_FINISH, 0 },
		{ "decision at its origin", 3, "c1", "c1", true, false, true,
		  T0 + 999, POL_FED_HOLD_NONE, 0 },
		{ "its winner's copy, within the bound", 3, "c1", "c2", true,
		  false, false, T0 + 10, POL_FED_HOLD_NONE, T0 + 2 + PIN_TO },
		{ "its winner's copy, not started in time", 3, "c1", "c2", true,
		  false, false, T0 + 2 + PIN_TO, POL_FED_HOLD_REAUCTION, 0 },
		{ "its winner's copy, revoked", 3, "c1", "c2", true, false,
		  true, T0 + 999, POL_FED_HOLD_NONE, 0 },
		{ "its winner's copy, running", 3, "c1", "c2", false, false,
		  false, T0 + 999, POL_FED_HOLD_NONE, 0 },
		{ "a copy on a cluster that did not win", 3, "c1", "c3", true,
		  false, false, T0 + 999, POL_FED_HOLD_NONE, 0 },
	};
	const char *texts[] = { NULL, waiting, pinned, won };

	(void) state;
	assert_non_null(waiting);
	assert_non_null(pinned);
	assert_non_null(won);
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		pol_fed_seen_t s = {
			.obs = { .pending = cases[k].pending,
				 .active = true,
				 .held = cases[k].held,
				 .submit = T0 - 5 },
			.origin = cases[k].origin,
			.revoked = cases[k].revoked,
		};
		pol_fed_mark_t m;
		int64_t recheck = 0;
		pol_fed_hold_act_t act;

		pol_fed_mark_parse(texts[cases[k].text], &m);
		act = pol_fed_seen_act(&s, &m, cases[k].me, PIN_TO,
				       cases[k].now, &recheck);
		if (act != cases[k].want || recheck != cases[k].recheck)
			fail_msg("%s: act %d recheck %" PRId64, cases[k].name,
				 act, recheck);
	}
	/* an earlier recheck is kept, a later one lowered */
	{
		pol_fed_seen_t s = { .obs = { .pending = true, .active = true },
				     .origin = "c1" };
		pol_fed_mark_t m;
		int64_t recheck = T0 + 5;

		pol_fed_mark_parse(won, &m);
		assert_int_equal(
			pol_fed_seen_act(&s, &m, "c2", PIN_TO, T0, &recheck),
			POL_FED_HOLD_NONE);
		assert_int_equal(recheck, T0 + 5);
		recheck = T0 + 500;
		(void) pol_fed_seen_act(&s, &m, "c2", PIN_TO, T0, &recheck);
		assert_int_equal(recheck, T0 + 2 + PIN_TO);
		/* failover off: nothing, no recheck */
		recheck = 0;
		assert_int_equal(
			pol_fed_seen_act(&s, &m, "c2", 0, T0 + 999, &recheck),
			POL_FED_HOLD_NONE);
		assert_int_equal(recheck, 0);
		/* recheck may be NULL */
		assert_int_equal(
			pol_fed_seen_act(&s, &m, "c2", PIN_TO, T0 + 999, NULL),
			POL_FED_HOLD_REAUCTION);
	}
	free(waiting);
	free(pinned);
	free(won);
}

/* ---- pol_fed_pin_work: the pins child's work after its re-read ------ */

static void test_pin_work(void **state)
{
	char *pinned = pol_fed_mark_pinned("c2", T0 + 2, T0, "Agora: fed d");
	char *bare = pol_fed_mark_pinned("c2", T0 + 2, T0, NULL);
	char *won = pol_fed_mark_stamp("Agora: fed auction: won by c2 (x)",
				       T0 + 2, T0 + 2, "*");
	char *won3 = pol_fed_mark_stamp("Agora: fed auction: won by c3 (x)",
					T0 + 40, T0 + 40, "*");
	char *waiting = pol_fed_mark_waiting(T0, TIMEOUT);
	static const struct {
		const char *name;
		pol_fed_hold_act_t act;
		bool winner; /* the auction gave c3 */
		int now;     /* the re-read: -1 none; else the text below */
		bool pending, held;
		pol_fed_hold_act_t want;
		const char *want_winner, *want_decision;
	} cases[] = {
		{ "auction, a winner", POL_FED_HOLD_AUCTION, true, -1, true,
		  true, POL_FED_HOLD_AUCTION, "c3", "D3" },
		{ "auction, no winner", POL_FED_HOLD_AUCTION, false, -1, true,
		  true, POL_FED_HOLD_NONE, NULL, NULL },
		{ "re-auction confirmed at the origin", POL_FED_HOLD_REAUCTION,
		  true, 2, true, false, POL_FED_HOLD_REAUCTION, "c3", "D3" },
		{ "re-auction, origin re-pinned already",
		  POL_FED_HOLD_REAUCTION, true, 3, true, false,
		  POL_FED_HOLD_NONE, NULL, NULL },
		{ "re-auction, origin pinned to c3 (half done)",
		  POL_FED_HOLD_REAUCTION, true, 0, true, false,
		  POL_FED_HOLD_NONE, NULL, NULL },
		{ "re-auction, origin not read", POL_FED_HOLD_REAUCTION, true,
		  -1, true, false, POL_FED_HOLD_NONE, NULL, NULL },
		{ "re-auction, no winner", POL_FED_HOLD_REAUCTION, false, 2,
		  true, false, POL_FED_HOLD_NONE, NULL, NULL },
		{ "release left, still held", POL_FED_HOLD_RELEASE, false, 0,
		  true, true, POL_FED_HOLD_RELEASE, "c2", "Agora: fed d" },
		{ "release left, released since (fail-open)",
		  POL_FED_HOLD_RELEASE, false, 0, true, false,
		  POL_FED_HOLD_FINISH, "c2", "Agora: fed d" },
		{ "release left, an older mark without decision",
		  POL_FED_HOLD_RELEASE, false, 1, true, true,
		  POL_FED_HOLD_RELEASE, "c2", POL_FED_TEXT_EARLIER },
		{ "finish left, done since", POL_FED_HOLD_FINISH, false, 2,
		  true, false, POL_FED_HOLD_NONE, NULL, NULL },
		{ "release left, job gone", POL_FED_HOLD_RELEASE, false, 0,
		  false, false, POL_FED_HOLD_NONE, NULL, NULL },
		{ "release left, not read", POL_FED_HOLD_RELEASE, false, -1,
		  true, true, POL_FED_HOLD_NONE, NULL, NULL },
		{ "release left, waiting again (a new hold)",
		  POL_FED_HOLD_RELEASE, false, 4, true, true, POL_FED_HOLD_NONE,
		  NULL, NULL },
		{ "nothing", POL_FED_HOLD_NONE, true, 0, true, true,
		  POL_FED_HOLD_NONE, NULL, NULL },
	};
	const char *texts[] = { pinned, bare, won, won3, waiting };

	(void) state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		pol_fed_hold_obs_t o = { .pending = cases[k].pending,
					 .active = cases[k].pending,
					 .held = cases[k].held,
					 .submit = T0 - 5 };
		pol_fed_mark_t m;
		pol_fed_pin_in_t in = {
			.act = cases[k].act,
			.winner = cases[k].winner ? "c3" : NULL,
			.decision = "D3",
			.stale_winner = "c2",
			.stamp_at = T0 + 2,
		};
		pol_fed_pin_work_t w;

		if (cases[k].now >= 0) {
			pol_fed_mark_parse(texts[cases[k].now], &m);
			in.obs_now = &o;
			in.mark_now = &m;
		}
		w = pol_fed_pin_work(&in);
		if (w.act != cases[k].want ||
		    (cases[k].want_winner &&
		     (!w.winner || strcmp(w.winner, cases[k].want_winner))) ||
		    (cases[k].want_decision &&
		     (!w.decision ||
		      strcmp(w.decision, cases[k].want_decision))))
			fail_msg("%s: act %d winner %s decision %s",
				 cases[k].name, w.act,
				 w.winner ? w.winner : "-",
				 w.decision ? w.decision : "-");
	}
	assert_true(pol_fed_pin_rereads(POL_FED_HOLD_REAUCTION));
	assert_true(pol_fed_pin_rereads(POL_FED_HOLD_RELEASE));
	assert_true(pol_fed_pin_rereads(POL_FED_HOLD_FINISH));
	assert_false(pol_fed_pin_rereads(POL_FED_HOLD_AUCTION));
	assert_false(pol_fed_pin_rereads(POL_FED_HOLD_NONE));
	assert_true(pol_fed_pin_wanted(POL_FED_HOLD_AUCTION, true));
	assert_false(pol_fed_pin_wanted(POL_FED_HOLD_AUCTION, false));
	assert_false(pol_fed_pin_wanted(POL_FED_HOLD_REAUCTION, false));
	assert_true(pol_fed_pin_wanted(POL_FED_HOLD_FINISH, false));
	assert_false(pol_fed_pin_wanted(POL_FED_HOLD_NONE, true));
	free(pinned);
	free(bare);
	free(won);
	free(won3);
	free(waiting);
}

/* ---- pol_fed_update_build: each step's update ----------------------- */

static void test_updates(void **state)
{
	pol_fed_pin_work_t w = { POL_FED_HOLD_AUCTION, "c3", "Agora: fed D" };
	pol_fed_update_t u;
	pol_fed_mark_t m;

	(void) state;
	assert_int_equal(
		pol_fed_update_build(POL_FED_STEP_PIN, &w, T0 + 9, T0, &u), 0);
	assert_string_equal(u.clusters, "c3");
	assert_false(u.release);
	pol_fed_mark_parse(u.admin_comment, &m);
	assert_int_equal(m.kind, POL_FED_MARK_PINNED);
	assert_string_equal(m.cluster, "c3");
	assert_int_equal(m.at, T0 + 9);
	assert_int_equal(m.since, T0);
	assert_string_equal(m.decision, "Agora: fed D");
	pol_fed_update_free(&u);
	assert_null(u.admin_comment);

	assert_int_equal(
		pol_fed_update_build(POL_FED_STEP_RELEASE, &w, T0, T0, &u), 0);
	assert_null(u.clusters);
	assert_true(u.release);
	assert_string_equal(u.admin_comment, "Agora: fed D");
	pol_fed_update_free(&u);

	assert_int_equal(
		pol_fed_update_build(POL_FED_STEP_FINISH, &w, T0, T0, &u), 0);
	assert_null(u.clusters);
	assert_false(u.release);
	assert_string_equal(u.admin_comment, "Agora: fed D");
	pol_fed_update_free(&u);

	/* refused: no winner to pin to, one the marks cannot carry, no
	 * decision, an unknown step */
	w.winner = NULL;
	errno = 0;
	assert_int_equal(pol_fed_update_build(POL_FED_STEP_PIN, &w, T0, T0, &u),
			 -1);
	assert_int_equal(errno, EINVAL);
	assert_null(u.admin_comment);
	w.winner = "c 3";
	assert_int_equal(pol_fed_update_build(POL_FED_STEP_PIN, &w, T0, T0, &u),
			 -1);
	assert_int_equal(errno, EINVAL);
	w.winner = "c3";
	w.decision = NULL;
	assert_int_equal(
		pol_fed_update_build(POL_FED_STEP_RELEASE, &w, T0, T0, &u), -1);
	assert_int_equal(errno, EINVAL);
	w.decision = "x";
	assert_int_equal(
		pol_fed_update_build((pol_fed_step_t) 9, &w, T0, T0, &u), -1);
	assert_int_equal(errno, EINVAL);
}

/* ---- crash orders, with the functions agorad runs -------------------- */

/* A copy of the job on one cluster. */
typedef struct {
	bool exists, held, pending, revoked;
	int64_t revoke_at; /* the revoke reaches this copy (0: none) */
	char comment[4096];
} copy_t;

/* The job: its copies on c1 (origin), c2, c3, and its Clusters=. */
typedef struct {
	copy_t c[3];
	char clusters[64];
	int pins;    /* Clusters= updates that changed the winner */
	int64_t now; /* the model's clock */
	int lag;     /* seconds until a revoke reaches a sibling copy */
} fjob_t;

static const char *const names[] = { "c1", "c2", "c3" };

static int cl_index(const char *n)
{
	for (int k = 0; k < 3; k++)
		if (n && !strcmp(n, names[k]))
			return k;
	return -1;
}

/* Slurm's federation, as far as a pin goes: a released origin copy
 * pinned to W has its one live sibling copy on W (the origin's copy is
 * revoked unless W is the origin); the copy takes the origin's
 * AdminComment when the update is forwarded; the revoke of an older
 * copy reaches it lag seconds later (Slurm's federation agent). */
static void fed_sync(fjob_t *j)
{
	int w = cl_index(j->clusters);

	if (j->c[0].held || w < 0)
		return;
	for (int k = 1; k < 3; k++) {
		copy_t *c = &j->c[k];

		if (k == w) {
			if (!c->exists)
				c->exists = c->pending = true;
			c->revoked = false;
			c->revoke_at = 0;
			snprintf(c->comment, sizeof(c->comment), "%s",
				 j->c[0].comment);
		} else if (c->exists && !c->revoked && !c->revoke_at) {
			if (j->lag)
				c->revoke_at = j->now + j->lag;
			else
				c->revoked = true;
		}
	}
	j->c[0].revoked = w != 0;
}

static void update_apply(fjob_t *j, const pol_fed_update_t *u)
{
	if (u->clusters && strcmp(j->clusters, u->clusters)) {
		snprintf(j->clusters, sizeof(j->clusters), "%s", u->clusters);
		j->pins++;
	}
	if (u->release)
		j->c[0].held = false;
	if (u->admin_comment)
		snprintf(j->c[0].comment, sizeof(j->c[0].comment), "%s",
			 u->admin_comment);
	fed_sync(j);
}

typedef enum {
	F_OK = 0,
	F_LOST,        /* not applied, error answer */
	F_LATE,        /* applied, answer timed out */
	F_CRASH_AFTER, /* applied, then agorad dies */
} fault_t;

static pol_fed_hold_obs_t obs_of(const copy_t *c, int64_t submit)
{
	pol_fed_hold_obs_t o = { .pending = c->pending,
				 .active = c->exists,
				 .held = c->held,
				 .submit = submit };

	return o;
}

/*
 * One agorad round over the three clusters (survey, auction, pins), with
 * pol_fed_seen_act, pol_fed_pin_work and pol_fed_update_build exactly as
 * agorad_survey.c and agorad_auction.c call them.  The auction's winner
 * is the first cluster the job may still run on (exclude: a stale
 * winner).  Returns false if agorad died.
 */
static bool round_run(fjob_t *j, int64_t now, const fault_t *fault, int n_fault,
		      int *sent)
{
	for (int k = 0; k < 3; k++) {
		copy_t *c = &j->c[k];
		pol_fed_seen_t s;
		pol_fed_mark_t m, mo;
		pol_fed_hold_obs_t oo;
		pol_fed_pin_in_t in = { 0 };
		pol_fed_pin_work_t w;
		pol_fed_step_t steps[3];
		char *decision = NULL;
		int n, win = -1;

		if (!c->exists)
			continue;
		s.obs = obs_of(c, T0);
		s.origin = "c1";
		s.revoked = c->revoked;
		pol_fed_mark_parse(c->comment, &m);
		in.act = pol_fed_seen_act(&s, &m, names[k], PIN_TO, now, NULL);
		if (in.act == POL_FED_HOLD_NONE)
			continue;
		if (pol_fed_hold_bids(in.act)) {
			/* c2 first; a re-auction leaves its old winner out */
			win = in.act == POL_FED_HOLD_REAUCTION ? 2 : 1;
			decision = pol_fed_mark_stamp(
				win == 1 ? POL_FED_TEXT_WON "won by c2 (test)"
					 : POL_FED_TEXT_WON "won by c3 (test)",
				now, now, "*");
			assert_non_null(decision);
			in.winner = names[win];
			in.decision = decision;
			in.stale_winner = m.cluster;
			in.stamp_at = m.at;
		}
		if (!pol_fed_pin_wanted(in.act, win >= 0)) {
			free(decision);
			continue;
		}
		/* the pins child, at the origin */
		if (pol_fed_pin_rereads(in.act)) {
			oo = obs_of(&j->c[0], T0);
			pol_fed_mark_parse(j->c[0].comment, &mo);
			in.obs_now = &oo;
			in.mark_now = &mo;
		}
		w = pol_fed_pin_work(&in);
		n = pol_fed_hold_steps(w.act, steps);
		for (int t = 0; t < n; t++) {
			fault_t f = *sent < n_fault ? fault[*sent] : F_OK;
			pol_fed_update_t u;

			(*sent)++;
			if (f == F_LOST)
				break;
			assert_int_equal(
				pol_fed_update_build(steps[t], &w, now,
						     m.since > 0 ? m.since : T0,
						     &u),
				0);
			update_apply(j, &u);
			pol_fed_update_free(&u);
			if (f == F_CRASH_AFTER) {
				free(decision);
				return false;
			}
			if (f == F_LATE)
				break;
		}
		free(decision);
	}
	return true;
}

/* site_factor/agora's fail-open at the origin */
static void fail_open(fjob_t *j, int64_t now)
{
	pol_fed_mark_t m;
	pol_fed_hold_obs_t o = obs_of(&j->c[0], T0);

	pol_fed_mark_parse(j->c[0].comment, &m);
	if (!pol_fed_hold_expired(&o, &m, true, TIMEOUT, now, NULL))
		return;
	j->c[0].held = false;
	snprintf(j->c[0].comment, sizeof(j->c[0].comment), "%sno decision",
		 POL_FED_TEXT_OPEN);
}

static void test_crash_orders(void **state)
{
	static const struct {
		const char *name;
		fault_t fault[4];
		bool never_starts;  /* c2 never starts it: a re-auction */
		bool returns;       /* agorad restarted after a crash */
		int lag;            /* the revoke's lag (s) */
		const char *winner; /* Clusters= at the end */
		int pins;           /* winners pinned over the run */
		int sent;           /* updates sent over the run */
	} cases[] = {
		{ "pin, no fault", { F_OK }, false, true, 0, "c2", 1, 2 },
		{ "pin, crash after the pin",
		  { F_CRASH_AFTER },
		  false,
		  true,
		  0,
		  "c2",
		  1,
		  2 },
		{ "pin, release applied, answer lost",
		  { F_OK, F_LATE },
		  false,
		  true,
		  0,
		  "c2",
		  1,
		  2 },
		{ "pin, release lost",
		  { F_OK, F_LOST },
		  false,
		  true,
		  0,
		  "c2",
		  1,
		  3 },
		{ "re-auction, no fault", { F_OK }, true, true, 0, "c3", 2, 4 },
		{ "re-auction, the old winner's copy lags 7 s",
		  { F_OK },
		  true,
		  true,
		  7,
		  "c3",
		  2,
		  4 },
		{ "re-auction, crash after its pin",
		  { F_OK, F_OK, F_CRASH_AFTER },
		  true,
		  true,
		  0,
		  "c3",
		  2,
		  4 },
		{ "re-auction, its pin applied, answer lost",
		  { F_OK, F_OK, F_LATE },
		  true,
		  true,
		  0,
		  "c3",
		  2,
		  4 },
		{ "re-auction, its pin lost",
		  { F_OK, F_OK, F_LOST },
		  true,
		  true,
		  0,
		  "c3",
		  2,
		  5 },
		{ "re-auction, its decision lost",
		  { F_OK, F_OK, F_OK, F_LOST },
		  true,
		  true,
		  0,
		  "c3",
		  2,
		  5 },
		{ "re-auction, crash after its pin, agorad gone",
		  { F_OK, F_OK, F_CRASH_AFTER },
		  true,
		  false,
		  0,
		  "c3",
		  2,
		  3 },
	};

	(void) state;
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		fjob_t j;
		char *w = pol_fed_mark_waiting(T0, TIMEOUT);
		int sent = 0;
		bool alive = true;
		pol_fed_mark_t m;

		memset(&j, 0, sizeof(j));
		j.lag = cases[k].lag;
		j.c[0].exists = j.c[0].held = j.c[0].pending = true;
		assert_non_null(w);
		snprintf(j.c[0].comment, sizeof(j.c[0].comment), "%s", w);
		free(w);
		for (int64_t now = T0; now < T0 + 10 * PIN_TO; now++) {
			/* the winner starts it a second after the pin (c3
			 * always; c2 not in a re-auction case) */
			int at = cl_index(j.clusters);

			j.now = now;
			for (int c = 0; c < 3; c++)
				if (j.c[c].revoke_at && now >= j.c[c].revoke_at)
					j.c[c].revoked = true;
			if (at > 0 && j.c[at].pending && !j.c[at].revoked &&
			    !j.c[0].held && (at == 2 || !cases[k].never_starts))
				j.c[at].pending = false;
			if (alive && (now - T0) % 2 == 0)
				alive = round_run(&j, now, cases[k].fault, 4,
						  &sent);
			else if (!alive && cases[k].returns)
				alive = true;
			fail_open(&j, now);
		}
		pol_fed_mark_parse(j.c[0].comment, &m);
		if (j.c[0].held || strcmp(j.clusters, cases[k].winner) ||
		    j.pins != cases[k].pins || sent != cases[k].sent)
			fail_msg(
				"%s: held %d, Clusters=%s, %d pins, %d updates ('%s')",
				cases[k].name, j.c[0].held, j.clusters, j.pins,
				sent, j.c[0].comment);
		/* done with agorad: the decision (stamped) naming the winner,
		 * on the origin and on the running copy */
		if (cases[k].returns) {
			int at = cl_index(cases[k].winner);

			if (m.kind != POL_FED_MARK_WON ||
			    strcmp(m.cluster, cases[k].winner) ||
			    j.c[at].pending ||
			    strcmp(j.c[at].comment, j.c[0].comment))
				fail_msg("%s: '%s' on the origin, '%s' on %s",
					 cases[k].name, j.c[0].comment,
					 j.c[at].comment, cases[k].winner);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_seen_act),
		cmocka_unit_test(test_pin_work),
		cmocka_unit_test(test_updates),
		cmocka_unit_test(test_crash_orders),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
