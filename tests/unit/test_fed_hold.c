/*
 * Unit tests of the federation hold (common/fed/pol_fed_hold.c): the
 * marks, agorad's next action, and every crash order of a pin (after the
 * pin, after the release, an update applied whose answer was lost, a
 * release refused), run with agorad's application of it (pol_fed_pin.h)
 * against a model of the job at its origin until the job is released by
 * agorad or by the fail-open timeout: never held for ever.
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

static void test_mark_round_trip(void **state)
{
	pol_fed_mark_t m;
	char *w = pol_fed_mark_waiting(T0, TIMEOUT);
	char *p = pol_fed_mark_pinned("c2", T0 + 5, T0,
				      "Agora: fed auction: won by c2; x");
	char *f = pol_fed_mark_foreign(w);

	(void) state;
	assert_non_null(w);
	assert_non_null(p);
	assert_non_null(f);
	pol_fed_mark_parse(w, &m);
	assert_int_equal(m.kind, POL_FED_MARK_WAITING);
	assert_int_equal(m.version, 1);
	assert_int_equal(m.since, T0);
	pol_fed_mark_parse(p, &m);
	assert_int_equal(m.kind, POL_FED_MARK_PINNED);
	assert_string_equal(m.cluster, "c2");
	assert_int_equal(m.at, T0 + 5);
	assert_int_equal(m.since, T0);
	assert_string_equal(m.decision, "Agora: fed auction: won by c2; x");
	pol_fed_mark_parse(f, &m);
	assert_int_equal(m.kind, POL_FED_MARK_FOREIGN);
	free(w);
	free(p);
	free(f);
	/* names a mark cannot carry */
	errno = 0;
	assert_null(pol_fed_mark_pinned("c 2", 1, 1, ""));
	assert_int_equal(errno, EINVAL);
	assert_null(pol_fed_mark_pinned("", 1, 1, ""));
	assert_null(pol_fed_mark_pinned(NULL, 1, 1, ""));
}

static void test_mark_kinds(void **state)
{
	static const struct {
		const char *text;
		pol_fed_mark_kind_t kind;
		int version;
	} cases[] = {
		{ NULL, POL_FED_MARK_NONE, 0 },
		{ "", POL_FED_MARK_NONE, 0 },
		{ "a user's note", POL_FED_MARK_NONE, 0 },
		{ "Agora: fed plan", POL_FED_MARK_NONE, 0 },
		{ "Agora: fed hold: waiting at the origin",
		  POL_FED_MARK_WAITING, 0 },
		{ "Agora: fed hold released: no decision", POL_FED_MARK_OPEN,
		  1 },
		{ "Agora: fed auction: won by c1", POL_FED_MARK_WON, 1 },
		{ "Agora: fed hold v2: something new", POL_FED_MARK_UNKNOWN,
		  2 },
		{ "Agora: fed hold v1: pinned to c2", POL_FED_MARK_UNKNOWN, 1 },
		{ "Agora: fed hold v1: pinned to c2 at x", POL_FED_MARK_UNKNOWN,
		  1 },
		{ "Agora: fed hold v1: waiting since", POL_FED_MARK_UNKNOWN,
		  1 },
		{ "Agora: fed hold v1: what", POL_FED_MARK_UNKNOWN, 1 },
		{ "Agora: fed hold v1: pinned to c3 at 7, held since 5",
		  POL_FED_MARK_PINNED, 1 },
	};

	(void) state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		pol_fed_mark_t m;

		pol_fed_mark_parse(cases[i].text, &m);
		if (m.kind != cases[i].kind || m.version != cases[i].version)
			fail_msg("'%s': kind %d v%d, want %d v%d",
				 cases[i].text ? cases[i].text : "(null)",
				 m.kind, m.version, cases[i].kind,
				 cases[i].version);
	}
}

/* ---- a model of the job at its origin ------------------------------ */

typedef struct {
	bool held, pending, active;
	char comment[4096];
	char clusters[64];
	int64_t submit;
} job_t;

typedef enum {
	F_OK = 0,
	F_LOST,        /* not applied, error answer */
	F_LATE,        /* applied, but the answer timed out (error) */
	F_REFUSED,     /* not applied, ever (every round) */
	F_CRASH_AFTER, /* applied, then agorad dies */
} fault_t;

#define WINNER   "c2"
#define DECISION "Agora: fed auction: won by c2 (cost 0 s): c2: start +0s"

static void job_init(job_t *j)
{
	char *w = pol_fed_mark_waiting(T0, TIMEOUT);

	memset(j, 0, sizeof(*j));
	j->held = j->pending = j->active = true;
	j->submit = T0;
	snprintf(j->comment, sizeof(j->comment), "%s", w);
	free(w);
}

static pol_fed_hold_obs_t observe(const job_t *j)
{
	pol_fed_hold_obs_t o = { .pending = j->pending,
				 .active = j->active,
				 .held = j->held,
				 .submit = j->submit };

	return o;
}

/* Slurm applies one update of the job at its origin. */
static void apply(job_t *j, const pol_fed_update_t *u)
{
	if (u->clusters)
		snprintf(j->clusters, sizeof(j->clusters), "%s", u->clusters);
	if (u->release)
		j->held = false;
	if (u->admin_comment)
		snprintf(j->comment, sizeof(j->comment), "%s",
			 u->admin_comment);
}

/* One agorad round; returns false if agorad died in it.  fault[k]
 * applies to the k-th update agorad sends over the whole run (*sent
 * counts them); a refused step is refused every time. */
static bool agorad_round(job_t *j, int64_t now, const fault_t *fault,
			 int n_fault, pol_fed_step_t refused, int *sent)
{
	pol_fed_mark_t m;
	pol_fed_hold_obs_t o = observe(j);
	pol_fed_step_t steps[3];
	pol_fed_pin_in_t in = { 0 };
	pol_fed_pin_work_t w;
	int n;

	pol_fed_mark_parse(j->comment, &m);
	/* the survey, then the pins child as agorad runs them
	 * (pol_fed_pin.h): a step left by an earlier round is re-read */
	in.act = pol_fed_hold_next(&o, &m);
	in.winner = WINNER;
	in.decision = DECISION;
	if (pol_fed_pin_rereads(in.act)) {
		in.obs_now = &o;
		in.mark_now = &m;
	}
	w = pol_fed_pin_work(&in);
	n = pol_fed_hold_steps(w.act, steps);
	for (int k = 0; k < n; k++) {
		fault_t f = *sent < n_fault ? fault[*sent] : F_OK;
		pol_fed_update_t u;

		(*sent)++;
		if (steps[k] == refused)
			return true; /* an error answer; the job unchanged */
		if (f == F_LOST)
			return true;
		assert_int_equal(
			pol_fed_update_build(steps[k], &w, now,
					     m.since > 0 ? m.since : T0, &u),
			0);
		apply(j, &u);
		pol_fed_update_free(&u);
		if (f == F_CRASH_AFTER)
			return false;
		if (f == F_LATE)
			return true;
	}
	return true;
}

/* site_factor/agora's pass: the fail-open release */
static bool fail_open(job_t *j, int64_t now)
{
	pol_fed_mark_t m;
	pol_fed_hold_obs_t o = observe(j);

	pol_fed_mark_parse(j->comment, &m);
	if (!pol_fed_hold_expired(&o, &m, true, TIMEOUT, now, NULL))
		return false;
	j->held = false;
	snprintf(j->comment, sizeof(j->comment), "%sno decision",
		 POL_FED_TEXT_OPEN);
	return true;
}

static void test_crash_orders(void **state)
{
	static const struct {
		const char *name;
		fault_t fault[4];
		pol_fed_step_t refused;
		bool agorad_returns; /* restarted after a crash */
		int want;    /* 1: released by agorad with its decision; 0: by
			     the fail-open */
		int updates; /* agorad's updates over the run (0: any) */
	} cases[] = {
		{ "no fault", { F_OK }, 0, true, true, 2 },
		{ "crash after the pin", { F_CRASH_AFTER }, 0, true, true, 2 },
		{ "crash after the release (with the decision)",
		  { F_OK, F_CRASH_AFTER },
		  0,
		  true,
		  true,
		  2 },
		{ "pin applied, answer lost", { F_LATE }, 0, true, true, 2 },
		{ "release applied, answer lost",
		  { F_OK, F_LATE },
		  0,
		  true,
		  true,
		  2 },
		{ "pin lost", { F_LOST }, 0, true, true, 3 },
		{ "release lost twice",
		  { F_OK, F_LOST, F_LOST },
		  0,
		  true,
		  true,
		  4 },
		{ "release refused",
		  { F_OK },
		  POL_FED_STEP_RELEASE,
		  true,
		  false,
		  0 },
		{ "crash after the pin, agorad gone",
		  { F_CRASH_AFTER },
		  0,
		  false,
		  false,
		  1 },
		{ "crash after the release, agorad gone",
		  { F_OK, F_CRASH_AFTER },
		  0,
		  false,
		  true,
		  2 },
	};

	(void) state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		job_t j;
		int sent = 0;
		bool alive = true, opened = false;
		int64_t now = T0;
		pol_fed_mark_t m;

		job_init(&j);
		/* rounds every 2 s, the plugin's pass every second */
		for (; now < T0 + 3 * TIMEOUT; now++) {
			if (alive && (now - T0) % 2 == 0)
				alive = agorad_round(&j, now, cases[c].fault, 4,
						     cases[c].refused, &sent);
			if (!alive && cases[c].agorad_returns)
				alive = true; /* restarted */
			if (fail_open(&j, now))
				opened = true;
		}
		if (j.held)
			fail_msg("%s: held for ever", cases[c].name);
		pol_fed_mark_parse(j.comment, &m);
		if (cases[c].updates && sent != cases[c].updates)
			fail_msg("%s: %d updates, not %d", cases[c].name, sent,
				 cases[c].updates);
		if (cases[c].want) {
			if (opened || strcmp(j.comment, DECISION) ||
			    strcmp(j.clusters, WINNER))
				fail_msg("%s: '%s' on '%s' (fail-open %d)",
					 cases[c].name, j.comment, j.clusters,
					 opened);
		} else if (!opened || m.kind != POL_FED_MARK_OPEN) {
			fail_msg("%s: not released by the fail-open ('%s')",
				 cases[c].name, j.comment);
		}
	}
}

static void test_expired_rules(void **state)
{
	pol_fed_hold_obs_t o = {
		.pending = true, .active = true, .held = true, .submit = T0
	};
	pol_fed_mark_t m;
	long waited;
	char *p = pol_fed_mark_pinned("c1", T0 + 50, T0 + 40, "x");

	(void) state;
	/* a pinned mark counts from its hold's start, not the pin */
	pol_fed_mark_parse(p, &m);
	assert_false(pol_fed_hold_expired(&o, &m, true, TIMEOUT,
					  T0 + 40 + TIMEOUT - 1, &waited));
	assert_int_equal(waited, TIMEOUT - 1);
	assert_true(pol_fed_hold_expired(&o, &m, true, TIMEOUT,
					 T0 + 40 + TIMEOUT, &waited));
	free(p);
	/* the old agorad's lost release: a decision, still held */
	pol_fed_mark_parse("Agora: fed auction: won by c2", &m);
	assert_true(pol_fed_hold_expired(&o, &m, true, TIMEOUT, T0 + TIMEOUT,
					 NULL));
	assert_false(pol_fed_hold_expired(&o, &m, true, TIMEOUT,
					  T0 + TIMEOUT - 1, NULL));
	/* ... but not once it has run and been held again (scontrol
	 * requeuehold, a launch failure, the requeue limit): that hold is
	 * Slurm's or an admin's, never released by the fail-open */
	o.ran = true;
	assert_false(
		pol_fed_hold_expired(&o, &m, true, TIMEOUT, T0 + 1000, NULL));
	assert_false(pol_fed_hold_expired(&o, &m, false, TIMEOUT, T0, NULL));
	o.ran = false;
	/* the auction off: at once */
	assert_true(pol_fed_hold_expired(&o, &m, false, TIMEOUT, T0, NULL));
	/* never: someone's hold, a fail-open's mark, no mark, not held */
	p = pol_fed_mark_foreign("Agora: fed hold v1: waiting since 1 x");
	pol_fed_mark_parse(p, &m);
	assert_false(
		pol_fed_hold_expired(&o, &m, false, TIMEOUT, T0 + 1000, NULL));
	assert_int_equal(pol_fed_hold_next(&o, &m), POL_FED_HOLD_NONE);
	free(p);
	pol_fed_mark_parse("Agora: fed hold released: x", &m);
	assert_false(
		pol_fed_hold_expired(&o, &m, true, TIMEOUT, T0 + 1000, NULL));
	pol_fed_mark_parse("my own note", &m);
	assert_false(
		pol_fed_hold_expired(&o, &m, true, TIMEOUT, T0 + 1000, NULL));
	pol_fed_mark_parse("Agora: fed hold: old", &m);
	o.held = false;
	assert_false(
		pol_fed_hold_expired(&o, &m, true, TIMEOUT, T0 + 1000, NULL));
	/* a user released Agora's hold: stock Slurm's now */
	assert_int_equal(pol_fed_hold_next(&o, &m), POL_FED_HOLD_NONE);
	/* a newer agorad's mark: left alone by this one, bounded by the
	 * fail-open */
	o.held = true;
	pol_fed_mark_parse("Agora: fed hold v9: ?", &m);
	assert_int_equal(pol_fed_hold_next(&o, &m), POL_FED_HOLD_NONE);
	assert_true(pol_fed_hold_expired(&o, &m, true, TIMEOUT, T0 + TIMEOUT,
					 NULL));
	/* a pinned job that ended before its decision was written */
	p = pol_fed_mark_pinned("c1", T0, T0, "x");
	pol_fed_mark_parse(p, &m);
	o.held = o.pending = o.active = false;
	assert_int_equal(pol_fed_hold_next(&o, &m), POL_FED_HOLD_NONE);
	o.active = true; /* running at the sibling */
	assert_int_equal(pol_fed_hold_next(&o, &m), POL_FED_HOLD_FINISH);
	free(p);
}

static void test_foreign_holds(void **state)
{
	pol_fed_mark_t m;
	char *w = pol_fed_mark_waiting(T0, TIMEOUT);

	(void) state;
	pol_fed_mark_parse(w, &m);
	/* scontrol hold on a job Agora holds */
	assert_true(pol_fed_hold_update_is_foreign(&m, true, NULL));
	assert_true(pol_fed_hold_update_is_foreign(&m, true, "admin's note"));
	/* Agora's own (re-)hold carries its mark */
	assert_false(pol_fed_hold_update_is_foreign(&m, true, w));
	/* no hold in the update */
	assert_false(pol_fed_hold_update_is_foreign(&m, false, NULL));
	/* after the decision too (a hold then is someone's) */
	pol_fed_mark_parse("Agora: fed auction: won by c1", &m);
	assert_true(pol_fed_hold_update_is_foreign(&m, true, NULL));
	/* not Agora's job, or already marked */
	pol_fed_mark_parse("note", &m);
	assert_false(pol_fed_hold_update_is_foreign(&m, true, NULL));
	free(w);
	w = pol_fed_mark_foreign(NULL);
	pol_fed_mark_parse(w, &m);
	assert_false(pol_fed_hold_update_is_foreign(&m, true, NULL));
	free(w);
}

/* The stamp of a decision: round trip, the winner, bad input. */
static void test_stamp(void **state)
{
	pol_fed_mark_t m;
	char *d = pol_fed_mark_stamp(
		"Agora: fed auction: won by c2 (cost 0 s; runner-up none): x. "
		"Bids: c2 0 s (c2: start +0s);",
		T0, T0 + 30, "c1,c2,c3");
	char *a = pol_fed_mark_stamp("Agora: fed auction: won by c3 (cost 1 s)",
				     T0, 0, NULL);
	char *p;

	(void) state;
	assert_non_null(d);
	assert_non_null(a);
	pol_fed_mark_parse(d, &m);
	assert_int_equal(m.kind, POL_FED_MARK_WON);
	assert_string_equal(m.cluster, "c2");
	assert_int_equal(m.at, T0);
	assert_int_equal(m.start_by, T0 + 30);
	assert_string_equal(m.clusters, "c1,c2,c3");
	pol_fed_mark_parse(a, &m);
	assert_string_equal(m.cluster, "c3");
	assert_int_equal(m.at, T0);
	assert_string_equal(m.clusters, ""); /* any */
	/* the pinned mark carries the stamped decision to the finish */
	p = pol_fed_mark_pinned("c2", T0, T0 - 5, d);
	pol_fed_mark_parse(p, &m);
	assert_int_equal(m.kind, POL_FED_MARK_PINNED);
	pol_fed_mark_parse(m.decision, &m);
	assert_int_equal(m.kind, POL_FED_MARK_WON);
	assert_int_equal(m.start_by, T0 + 30);
	/* an older agorad's decision has no stamp */
	pol_fed_mark_parse("Agora: fed auction: won by c1 (cost 0 s)", &m);
	assert_string_equal(m.cluster, "c1");
	assert_int_equal(m.at, 0);
	/* a broken stamp is no stamp */
	pol_fed_mark_parse("Agora: fed auction: won by c1; pinned at x", &m);
	assert_int_equal(m.at, 0);
	errno = 0;
	assert_null(pol_fed_mark_stamp("d", T0, T0, "c1; c2"));
	assert_int_equal(errno, EINVAL);
	free(d);
	free(a);
	free(p);
}

/* The failover of a pin (pol_fed_pin_next), table-driven: what the
 * winner's copy shows, the mark, the clock. */
static void test_pin_failover(void **state)
{
	static const struct {
		const char *name;
		const char *me;
		bool pending, held;
		int64_t at, start_by; /* the stamp (at 0: none) */
		int timeout;
		int64_t now;
		pol_fed_hold_act_t want;
	} cases[] = {
		{ "not started in time", "c2", true, false, T0, T0, 30, T0 + 30,
		  POL_FED_HOLD_REAUCTION },
		{ "within the bound", "c2", true, false, T0, T0, 30, T0 + 29,
		  POL_FED_HOLD_NONE },
		{ "a planned late start counts from the start", "c2", true,
		  false, T0, T0 + 600, 30, T0 + 100, POL_FED_HOLD_NONE },
		{ "... and re-auctions after it", "c2", true, false, T0,
		  T0 + 600, 30, T0 + 630, POL_FED_HOLD_REAUCTION },
		{ "started (running)", "c2", false, false, T0, T0, 30, T0 + 999,
		  POL_FED_HOLD_NONE },
		{ "held by its owner or an admin", "c2", true, true, T0, T0, 30,
		  T0 + 999, POL_FED_HOLD_NONE },
		{ "seen on a cluster that is not its winner", "c1", true, false,
		  T0, T0, 30, T0 + 999, POL_FED_HOLD_NONE },
		{ "off (FedPinStartTimeout=0)", "c2", true, false, T0, T0, 0,
		  T0 + 999, POL_FED_HOLD_NONE },
		{ "no stamp (an older agorad's decision)", "c2", true, false, 0,
		  0, 30, T0 + 999, POL_FED_HOLD_NONE },
		{ "clock behind the pin", "c2", true, false, T0, T0, 30,
		  T0 - 100, POL_FED_HOLD_NONE },
	};

	/* pol_fed_pin_due() of each case: when the clock alone turns it */
	static const int64_t due[] = { T0 + 30, T0 + 30, T0 + 630, T0 + 630,
				       0,       0,       0,        0,
				       0,       T0 + 30 };

	(void) state;
	assert_int_equal(sizeof(due) / sizeof(due[0]),
			 sizeof(cases) / sizeof(cases[0]));
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		pol_fed_hold_obs_t o = { .pending = cases[k].pending,
					 .active = true,
					 .held = cases[k].held,
					 .submit = T0 - 10 };
		pol_fed_mark_t m;
		char *d = cases[k].at
				  ? pol_fed_mark_stamp(
					    "Agora: fed auction: won by c2 (x)",
					    cases[k].at, cases[k].start_by,
					    "c1,c2")
				  : strdup("Agora: fed auction: won by c2 (x)");

		assert_non_null(d);
		pol_fed_mark_parse(d, &m);
		if (pol_fed_pin_next(&o, &m, cases[k].me, cases[k].timeout,
				     cases[k].now) != cases[k].want)
			fail_msg("case %zu (%s): got %d", k, cases[k].name,
				 pol_fed_pin_next(&o, &m, cases[k].me,
						  cases[k].timeout,
						  cases[k].now));
		if (pol_fed_pin_due(&o, &m, cases[k].me, cases[k].timeout) !=
		    due[k])
			fail_msg("case %zu (%s): due %" PRId64, k,
				 cases[k].name,
				 pol_fed_pin_due(&o, &m, cases[k].me,
						 cases[k].timeout));
		free(d);
	}
	/* a decision waiting at the origin is not a failover */
	{
		pol_fed_hold_obs_t o = { .pending = true, .held = true };
		pol_fed_mark_t m;

		pol_fed_mark_parse(POL_FED_TEXT_HOLD_V1 "waiting since 5 for x",
				   &m);
		assert_int_equal(pol_fed_pin_next(&o, &m, "c2", 30, T0),
				 POL_FED_HOLD_NONE);
	}
	/* the origin's confirmation: only the same stale decision */
	{
		static const struct {
			const char *origin_text;
			const char *stale;
			int64_t at;
			bool want;
		} rows[] = {
			{ "Agora: fed auction: won by c2 (x); pinned at 1000000, start by 1000000, clusters *",
			  "c2", T0, true },
			/* re-pinned already: a newer stamp, or another winner */
			{ "Agora: fed auction: won by c3 (x); pinned at 1000040, start by 1000040, clusters *",
			  "c2", T0, false },
			{ "Agora: fed auction: won by c2 (x); pinned at 1000040, start by 1000040, clusters *",
			  "c2", T0, false },
			{ POL_FED_TEXT_HOLD_V1
			  "pinned to c3 at 1000040, held since 999990; Agora: fed auction: won by c3",
			  "c2", T0, false },
			/* no stamp, no mark */
			{ "Agora: fed auction: won by c2 (x)", "c2", T0,
			  false },
			{ "note", "c2", T0, false },
		};

		for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
			pol_fed_mark_t m;

			pol_fed_mark_parse(rows[k].origin_text, &m);
			if (pol_fed_reauction_confirm(&m, rows[k].stale,
						      rows[k].at) !=
			    rows[k].want)
				fail_msg("confirm row %zu", k);
		}
	}
	/* the re-auction's steps: pin and finish, no release */
	{
		pol_fed_step_t steps[3];
		pol_fed_hold_obs_t o = { .pending = true, .active = true };
		pol_fed_mark_t m;
		char *p = pol_fed_mark_pinned("c2", T0 + 5, T0, "the decision");

		/* an auction: the pin, then the release with the decision
		 * (one update); a pinned job still held: the release alone */
		assert_int_equal(
			pol_fed_hold_steps(POL_FED_HOLD_AUCTION, steps), 2);
		assert_int_equal(steps[0], POL_FED_STEP_PIN);
		assert_int_equal(steps[1], POL_FED_STEP_RELEASE);
		assert_int_equal(
			pol_fed_hold_steps(POL_FED_HOLD_RELEASE, steps), 1);
		assert_int_equal(steps[0], POL_FED_STEP_RELEASE);
		/* released with the pinned mark on (an older agorad): the
		 * decision alone */
		assert_non_null(p);
		pol_fed_mark_parse(p, &m);
		assert_int_equal(pol_fed_hold_next(&o, &m),
				 POL_FED_HOLD_FINISH);
		assert_int_equal(pol_fed_hold_steps(POL_FED_HOLD_FINISH, steps),
				 1);
		assert_int_equal(steps[0], POL_FED_STEP_FINISH);
		free(p);

		assert_int_equal(
			pol_fed_hold_steps(POL_FED_HOLD_REAUCTION, steps), 2);
		assert_int_equal(steps[0], POL_FED_STEP_PIN);
		assert_int_equal(steps[1], POL_FED_STEP_FINISH);
		assert_true(pol_fed_hold_bids(POL_FED_HOLD_REAUCTION));
		assert_true(pol_fed_hold_bids(POL_FED_HOLD_AUCTION));
		assert_false(pol_fed_hold_bids(POL_FED_HOLD_FINISH));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mark_round_trip),
		cmocka_unit_test(test_mark_kinds),
		cmocka_unit_test(test_crash_orders),
		cmocka_unit_test(test_expired_rules),
		cmocka_unit_test(test_foreign_holds),
		cmocka_unit_test(test_stamp),
		cmocka_unit_test(test_pin_failover),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
