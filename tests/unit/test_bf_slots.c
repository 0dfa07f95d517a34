/* Unit test of Slurm's slot map in pol_backfill_slots.c: the usable nodes
 * and the next node-freeing slot (pol_bf_slots_avail(), through the rise
 * distances kept by pol_bf_slots_add()) against the slot-by-slot scan of
 * backfill.c, over random reservations on 100 nodes (two words) and on
 * 50 (one word, its own loop), fresh and as a job's loop calls it (start
 * moved to the next node-freeing slot or past it, the scan's hints and
 * its queue of rises carried). The
 * files are included to reach their static functions; pol_bf_slurm() and
 * the slot map then come from here, not from the library. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../common/policy/pol_backfill_plan.c"
#include "../../common/policy/pol_backfill_slots.c"

/* backfill.c's scan: every slot from the one that ends after start to
 * the first one that begins after end. */
static void scan_avail(pol_bf_t *s, int64_t start, int64_t end, uint64_t *avail,
		       int64_t *later)
{
	int i, k, nw = s->nw;

	*later = 0;
	for (k = 0; k < nw; k++)
		avail[k] = ~(uint64_t) 0;
	for (i = slot_after(s, start); i < s->n_slots; i++) {
		if (i + 1 < s->n_slots && !*later) {
			const uint64_t *cur = slot_bits(s, i);
			const uint64_t *nxt = slot_bits(s, i + 1);

			for (k = 0; k < nw; k++)
				if (nxt[k] & ~(cur[k] & avail[k])) {
					*later = s->se[i];
					break;
				}
		}
		if (s->sb[i] > end)
			break;
		for (k = 0; k < nw; k++)
			avail[k] &= slot_bits(s, i)[k];
	}
}

static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void slots_avail_matches_scan(int nodes)
{
	pol_cluster_t c;
	uint64_t x = 88172645463325252ULL, want[2];
	int run, n, q, k, checked = 0, chained = 0;

	memset(&c, 0, sizeof(c));
	c.n_nodes = nodes;
	for (run = 0; run < 200; run++) {
		pol_bf_t *s = calloc(1, sizeof(*s));
		int64_t now = 1000 + (int64_t) (rnd(&x) % 5000);

		assert_non_null(s);
		s->res = 60;
		s->window = 86400;
		assert_int_equal(pol_bf_slots_init(s, &c, now), 0);
		for (n = 0; n < 150; n++) {
			int64_t a = now + (int64_t) (rnd(&x) % 90000) - 600;
			int64_t len = 60 + (int64_t) (rnd(&x) % 40000);

			/* a few nodes, sometimes many, in one or both words */
			memset(s->jn, 0, (size_t) s->nw * sizeof(*s->jn));
			for (k = (int) (rnd(&x) % 3) + 1; k > 0; k--) {
				int node = (int) (rnd(&x) % (uint64_t) nodes);

				s->jn[node / 64] |= (uint64_t) 1 << (node % 64);
			}
			if (rnd(&x) % 8 == 0)
				s->jn[rnd(&x) % (uint64_t) s->nw] |= rnd(&x);
			/* no bits past the last node */
			s->jn[s->nw - 1] &= nodes % 64 ? ((uint64_t) 1
							  << (nodes % 64)) -
								 1
						       : ~(uint64_t) 0;
			assert_int_equal(pol_bf_slots_add(s, rdown(a, 60),
							  rdown(a + len, 60)),
					 0);
			for (q = 0; q < 20; q++) {
				int64_t st = now + (int64_t) (rnd(&x) % 95000) -
					     1000,
					en = st + (int64_t) (rnd(&x) % 50000);
				int64_t l1, l2, lim;
				bf_scan_t sc;
				int step;

				if (q == 0)
					st = now; /* the common query */
				lim = en > st ? en - st
					      : 0; /* end only grows */
				pol_bf_scan_reset(s, &sc);
				scan_avail(s, st, en, want, &l1);
				pol_bf_slots_avail(s, st, en, &l2, &sc);
				assert_int_equal(l2, l1);
				assert_memory_equal(s->avail, want,
						    (size_t) s->nw *
							    sizeof(*want));
				checked++;
				/* the job's loop: on to later, hints kept */
				for (step = 0; step < 8 && l2; step++) {
					st = l2;
					/* or past it, as after an overlap (the
					 * slot hint dropped) */
					if (rnd(&x) % 4 == 0) {
						st += (int64_t) (rnd(&x) %
								 5000);
						sc.i0 = -1;
					}
					en = st + lim;
					scan_avail(s, st, en, want, &l1);
					pol_bf_slots_avail(s, st, en, &l2, &sc);
					assert_int_equal(l2, l1);
					assert_memory_equal(
						s->avail, want,
						(size_t) s->nw * sizeof(*want));
					chained++;
				}
			}
		}
		free(s->sb);
		free(s->se);
		free(s->rise);
		free(s->bits);
		free(s->avail);
		free(s->jn);
		free(s->q);
		free(s->qsuf);
		free(s->qacc);
		free(s->sh_avail);
		free(s->sh_dirty);
		free(s->memo_avail);
		free(s);
	}
	assert_int_equal(checked, 200 * 150 * 20);
	assert_true(chained > checked); /* the loop went on, often */
}

static void test_slots_avail_matches_scan(void **state)
{
	(void) state;
	slots_avail_matches_scan(100);
}

static void test_slots_avail_one_word(void **state)
{
	(void) state;
	slots_avail_matches_scan(50);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_slots_avail_matches_scan),
		cmocka_unit_test(test_slots_avail_one_word),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
