/*
 * Unit tests of the SystemComment composer (common/base/agora_note.c): a
 * federated job shows the federation's text and the within-cluster
 * auction's note, each pass replaces only its own part, a comment of
 * another component is never touched, and the whole fits Slurm's limit.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agora_note.h"

#define FED                                                                    \
	"Agora: fed auction: won by c2 at 2026-12-02T01:00:00. Bids: c1: start +0s || c2: start +5s"
#define WON   "Agora: won GPUs in the auction: ranks first (app a)"
#define LEASE "Agora: lease of 8 GPUs until 2026-12-02T02:00:00 (app a)"

static char *upd(const char *cur, agora_note_part_t p, const char *t, int want)
{
	char *out = (char *) 1;

	assert_int_equal(agora_note_update(cur, p, t, &out), want);
	if (want != 1)
		assert_null(out);
	return out;
}

/* Each part alone, then both, in either order: federation first. */
static void test_both_parts(void **state)
{
	char *a, *b, *c;

	(void) state;
	a = upd(NULL, AGORA_NOTE_FED, FED, 1);
	assert_string_equal(a, FED);
	b = upd(a, AGORA_NOTE_AUCTION, WON, 1);
	assert_string_equal(b, FED AGORA_NOTE_SEP WON);
	c = upd(NULL, AGORA_NOTE_AUCTION, WON, 1);
	assert_string_equal(c, WON);
	free(a);
	a = upd(c, AGORA_NOTE_FED, FED, 1);
	assert_string_equal(a, b);
	free(a);
	free(b);
	free(c);
}

/* One pass replaces its part and keeps the other; the same text again is
 * no change (the job record is not rewritten). */
static void test_replace_keep(void **state)
{
	char *a, *b;

	(void) state;
	upd(FED AGORA_NOTE_SEP WON, AGORA_NOTE_AUCTION, WON, 0);
	upd(FED AGORA_NOTE_SEP WON, AGORA_NOTE_FED, FED, 0);
	a = upd(FED AGORA_NOTE_SEP WON, AGORA_NOTE_AUCTION, LEASE, 1);
	assert_string_equal(a, FED AGORA_NOTE_SEP LEASE);
	b = upd(a, AGORA_NOTE_FED, "Agora: fed hold v1: held since 1", 1);
	assert_string_equal(
		b, "Agora: fed hold v1: held since 1" AGORA_NOTE_SEP LEASE);
	free(a);
	/* removing a part */
	a = upd(b, AGORA_NOTE_AUCTION, NULL, 1);
	assert_string_equal(a, "Agora: fed hold v1: held since 1");
	free(b);
	b = upd(a, AGORA_NOTE_FED, "", 1);
	assert_null(b);
	free(a);
	upd(NULL, AGORA_NOTE_AUCTION, NULL, 0);
}

/* Another component's comment, or a text that is not of its part. */
static void test_foreign(void **state)
{
	(void) state;
	upd("site: maintenance", AGORA_NOTE_AUCTION, WON, -1);
	upd("site: maintenance", AGORA_NOTE_FED, FED, -1);
	upd(NULL, AGORA_NOTE_FED, WON, -1);
	upd(NULL, AGORA_NOTE_AUCTION, FED, -1);
	upd(NULL, AGORA_NOTE_AUCTION, "won GPUs", -1);
}

/* A federation text that holds the separator (bids, names) still splits
 * at the auction note. */
static void test_split(void **state)
{
	const char *f, *a;
	size_t fl, al;

	(void) state;
	assert_int_equal(
		agora_note_split(FED AGORA_NOTE_SEP WON, &f, &fl, &a, &al), 0);
	assert_int_equal(fl, strlen(FED));
	assert_int_equal(al, strlen(WON));
	assert_int_equal(agora_note_split(FED, &f, &fl, &a, &al), 0);
	assert_int_equal(fl, strlen(FED));
	assert_int_equal(al, 0);
	assert_int_equal(agora_note_split(WON, &f, &fl, &a, &al), 0);
	assert_int_equal(fl, 0);
	assert_int_equal(al, strlen(WON));
	assert_int_equal(agora_note_split("x", &f, &fl, &a, &al), -1);
}

/* The whole fits AGORA_NOTE_MAX: the auction note whole, the federation
 * text cut with "..."; cutting again keeps the bound. */
static void test_limit(void **state)
{
	char big[3000], *a, *b;

	(void) state;
	snprintf(big, sizeof(big), "Agora: fed auction: won by c2. Bids:");
	memset(big + strlen(big), 'x', 2500);
	big[2500] = '\0';
	a = upd(NULL, AGORA_NOTE_FED, big, 1);
	assert_int_equal(strlen(a), AGORA_NOTE_MAX);
	assert_string_equal(a + AGORA_NOTE_MAX - 3, "...");
	b = upd(a, AGORA_NOTE_AUCTION, LEASE, 1);
	assert_int_equal(strlen(b), AGORA_NOTE_MAX);
	assert_string_equal(b + AGORA_NOTE_MAX - strlen(LEASE), LEASE);
	assert_non_null(strstr(b, "..." AGORA_NOTE_SEP LEASE));
	assert_int_equal(strncmp(b, "Agora: fed auction: won by c2", 29), 0);
	free(a);
	a = upd(b, AGORA_NOTE_AUCTION, WON, 1);
	assert_true(strlen(a) <= AGORA_NOTE_MAX);
	assert_string_equal(a + strlen(a) - strlen(WON), WON);
	free(a);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_both_parts),
		cmocka_unit_test(test_replace_keep),
		cmocka_unit_test(test_foreign),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_limit),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
