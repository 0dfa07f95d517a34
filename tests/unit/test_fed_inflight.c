/*
 * Unit tests of the pins in flight (common/fed/pol_fed_inflight.c): a
 * pin counts on its winner from the pin until the winner's survey shows
 * the job's copy, or for POL_FED_INFLIGHT_MAX_S at most once nothing
 * arrives there; a burst auctioned over two rounds does not see the first
 * round's winners' GPUs as free again; the flow to a winner that takes one
 * copy a second (Slurm 22.05) is measured, and the auction sends a job
 * into that queue only while its copy would still start there first.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "pol_fed.h"
#include "pol_fed_inflight.h"

#define NOW 1000000

static void test_inflight_list(void **state)
{
	pol_fed_inflight_list_t l = { 0 };
	const uint32_t seen_c2[] = { 7, 2, 99 };

	(void) state;
	assert_int_equal(pol_fed_inflight_add(&l, 1, "c2", 8, 0, NOW), 0);
	assert_int_equal(pol_fed_inflight_add(&l, 2, "c2", 8, 0, NOW), 0);
	assert_int_equal(pol_fed_inflight_add(&l, 3, "c3", 4, 0, NOW + 1), 0);
	assert_int_equal(pol_fed_inflight_gpus(&l, "c2"), 16);
	assert_int_equal(pol_fed_inflight_gpus(&l, "c3"), 4);
	assert_int_equal(pol_fed_inflight_gpus(&l, "c1"), 0);
	/* a re-pin replaces the job's entry */
	assert_int_equal(pol_fed_inflight_add(&l, 1, "c3", 8, 0, NOW + 2), 0);
	assert_int_equal(l.n, 3);
	assert_int_equal(pol_fed_inflight_gpus(&l, "c2"), 8);
	assert_int_equal(pol_fed_inflight_gpus(&l, "c3"), 12);
	/* a pin kept as its step started and then failed: dropped */
	assert_int_equal(pol_fed_inflight_add(&l, 50, "c2", 2, 0, NOW + 2), 0);
	assert_int_equal(pol_fed_inflight_gpus(&l, "c2"), 10);
	assert_int_equal(pol_fed_inflight_drop(&l, 50), 1);
	assert_int_equal(pol_fed_inflight_drop(&l, 50), 0);
	assert_int_equal(pol_fed_inflight_drop(&l, 12345), 0);
	assert_int_equal(l.n, 3);
	assert_int_equal(pol_fed_inflight_gpus(&l, "c2"), 8);
	/* c2's survey shows job 2's copy: gone; job 7 is not ours; a copy
	 * of job 3 seen on another cluster than its winner does not count */
	assert_int_equal(pol_fed_inflight_seen(&l, "c2", seen_c2, 3, NOW + 2),
			 1);
	assert_int_equal(pol_fed_inflight_gpus(&l, "c2"), 0);
	assert_int_equal(pol_fed_inflight_gpus(&l, "c3"), 12);
	assert_int_equal(
		pol_fed_inflight_seen(&l, "c2", (uint32_t[]){ 3 }, 1, NOW + 2),
		0);
	assert_int_equal(pol_fed_inflight_seen(&l, "c3", NULL, 0, NOW + 2), 0);
	/* a copy that never arrives counts for POL_FED_INFLIGHT_MAX_S */
	assert_int_equal(
		pol_fed_inflight_expire(&l, NOW + 1 + POL_FED_INFLIGHT_MAX_S,
					POL_FED_INFLIGHT_MAX_S),
		0);
	assert_int_equal(
		pol_fed_inflight_expire(&l, NOW + 2 + POL_FED_INFLIGHT_MAX_S,
					POL_FED_INFLIGHT_MAX_S),
		1); /* job 3, pinned at NOW + 1 */
	assert_int_equal(pol_fed_inflight_gpus(&l, "c3"), 8);
	/* a clock stepped back: nothing is kept from the future */
	assert_int_equal(
		pol_fed_inflight_expire(&l, NOW, POL_FED_INFLIGHT_MAX_S), 1);
	assert_int_equal(l.n, 0);
	/* refused */
	errno = 0;
	assert_int_equal(pol_fed_inflight_add(&l, 4, "", 8, 0, NOW), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(pol_fed_inflight_add(&l, 4, NULL, 8, 0, NOW), -1);
	assert_int_equal(pol_fed_inflight_add(&l, 4, "c1", -1, 0, NOW), -1);
	assert_int_equal(
		pol_fed_inflight_add(&l, 4,
				     "a-cluster-name-of-sixty-four-characters-"
				     "or-more-is-too-long-for-it",
				     8, 0, NOW),
		-1);
	/* growth past the first block */
	for (uint32_t j = 1; j <= 200; j++)
		assert_int_equal(pol_fed_inflight_add(&l, j, "c1", 1, 0, NOW),
				 0);
	assert_int_equal(pol_fed_inflight_gpus(&l, "c1"), 200);
	pol_fed_inflight_free(&l);
	assert_null(l.v);
	assert_int_equal(l.n, 0);
}

/*
 * A burst over two rounds: c2 has 16 GPUs, all free; round 1 pins two
 * 8-GPU jobs there, and round 2 runs before their copies arrive (c2's
 * survey still shows 16 free, nothing queued).  agorad counts the pins
 * in flight as queued on c2, so its start estimate for a third 8-GPU job
 * there is not "now" (without them it was, and c2 won a job it had no
 * GPUs for); once the copies are seen (pending there: Slurm's own queue
 * counts them) the pins stop counting.
 */
/* A burst cancelled at its origin: its pins are no longer on their way */
static void test_inflight_cancelled(void **state)
{
	pol_fed_inflight_list_t l = { 0 };
	const uint32_t cancelled[] = { 9, 4, 1, 77 };

	(void) state;
	for (uint32_t j = 1; j <= 6; j++)
		assert_int_equal(pol_fed_inflight_add(
					 &l, j, j % 2 ? "c2" : "c3", 8, 0, NOW),
				 0);
	assert_int_equal(pol_fed_inflight_gpus(&l, "c2"), 24);
	assert_int_equal(pol_fed_inflight_gpus(&l, "c3"), 24);
	/* 1 (c2) and 4 (c3) cancelled; 9 and 77 were never pinned */
	assert_int_equal(pol_fed_inflight_cancelled(&l, cancelled, 4), 2);
	assert_int_equal(l.n, 4);
	assert_int_equal(pol_fed_inflight_gpus(&l, "c2"), 16);
	assert_int_equal(pol_fed_inflight_gpus(&l, "c3"), 16);
	assert_int_equal(pol_fed_inflight_jobs(&l, "c2"), 2);
	/* again: nothing left to drop; nothing cancelled, no list */
	assert_int_equal(pol_fed_inflight_cancelled(&l, cancelled, 4), 0);
	assert_int_equal(pol_fed_inflight_cancelled(&l, cancelled, 0), 0);
	assert_int_equal(pol_fed_inflight_cancelled(&l, NULL, 4), 0);
	/* every one cancelled, the last ones moved into the dropped slots */
	assert_int_equal(
		pol_fed_inflight_cancelled(&l, (uint32_t[]){ 6, 5, 3, 2 }, 4),
		4);
	assert_int_equal(l.n, 0);
	assert_int_equal(pol_fed_inflight_gpus(&l, "c2"), 0);
	pol_fed_inflight_free(&l);
}

static void test_burst_over_two_rounds(void **state)
{
	pol_fed_inflight_list_t l = { 0 };
	pol_fed_busy_t busy = { .end = NOW + 600, .gpus = 0 };
	pol_fed_cluster_load_t c2 = { .gpus_total = 16,
				      .gpus_free = 16,
				      .busy = &busy,
				      .n_busy = 1,
				      .max_limit_s = 600 };
	pol_fed_cluster_load_t seen;
	const uint32_t copies[] = { 11, 12 };

	(void) state;
	assert_int_equal(pol_fed_start_estimate(&c2, 8, NOW), NOW);
	/* round 1: jobs 11 and 12 pinned to c2 */
	assert_int_equal(pol_fed_inflight_add(&l, 11, "c2", 8, 0, NOW), 0);
	assert_int_equal(pol_fed_inflight_add(&l, 12, "c2", 8, 0, NOW), 0);
	/* round 2, 2 s later: no copy on c2 yet */
	assert_int_equal(pol_fed_inflight_seen(&l, "c2", NULL, 0, NOW + 2), 0);
	seen = c2;
	seen.gpus_queued += pol_fed_inflight_gpus(&l, "c2");
	assert_int_equal(seen.gpus_queued, 16);
	assert_true(pol_fed_start_estimate(&seen, 8, NOW + 2) > NOW + 2);
	/* round 3: both copies pending on c2, in its own queue */
	assert_int_equal(pol_fed_inflight_seen(&l, "c2", copies, 2, NOW + 4),
			 2);
	assert_int_equal(pol_fed_inflight_gpus(&l, "c2"), 0);
	pol_fed_inflight_free(&l);
}

/*
 * Slurm 22.05's winner takes one copy a second.  Round 1 (survey at NOW)
 * pins 10 jobs to c2; the survey 4 s later shows 4 of them arrived while
 * 6 remain: 4 s / 4 copies = 1 s a copy, and a copy pinned now would
 * arrive after the 6 ahead of it, 6 s.  The next survey, 2 s later, shows
 * 1 more: a sample of 2 s, the measure (1 + 2) / 2 = 1.5 s.  A survey
 * that finds the queue empty (every copy there) measures nothing: the
 * transit is 0 with nothing in flight.  And on a winner whose copies
 * arrive with their pins (24.11) nothing is measured at all.
 */
static void test_flow_measured(void **state)
{
	pol_fed_inflight_list_t l = { 0 };
	uint32_t arrived[10];

	(void) state;
	/* the first survey of c2: nothing measured yet */
	assert_int_equal(pol_fed_inflight_seen(&l, "c2", NULL, 0, NOW), 0);
	for (uint32_t j = 0; j < 10; j++) {
		arrived[j] = 100 + j;
		assert_int_equal(
			pol_fed_inflight_add(&l, 100 + j, "c2", 1, 0, NOW), 0);
	}
	assert_true(pol_fed_inflight_transit_s(&l, "c2") == 0.0);
	assert_int_equal(pol_fed_inflight_jobs(&l, "c2"), 10);
	assert_int_equal(pol_fed_inflight_seen(&l, "c2", arrived, 4, NOW + 4),
			 4);
	assert_int_equal(pol_fed_inflight_jobs(&l, "c2"), 6);
	assert_int_equal(pol_fed_inflight_jobs(&l, "c1"), 0);
	assert_true(pol_fed_inflight_s_per_copy(&l, "c2") == 1.0);
	assert_true(pol_fed_inflight_transit_s(&l, "c2") == 6.0);
	assert_int_equal(pol_fed_inflight_seen(&l, "c2", arrived, 5, NOW + 6),
			 1);
	assert_true(pol_fed_inflight_s_per_copy(&l, "c2") == 1.5);
	assert_true(pol_fed_inflight_transit_s(&l, "c2") == 5 * 1.5);
	/* the rest arrive: no backlog remained, nothing new measured */
	assert_int_equal(pol_fed_inflight_seen(&l, "c2", arrived, 10, NOW + 20),
			 5);
	assert_true(pol_fed_inflight_s_per_copy(&l, "c2") == 1.5);
	assert_true(pol_fed_inflight_transit_s(&l, "c2") == 0.0);
	/* unknown clusters: none */
	assert_true(pol_fed_inflight_transit_s(&l, "c9") == 0.0);
	assert_true(pol_fed_inflight_s_per_copy(&l, NULL) == 0.0);

	/* c3 (24.11): 500 pins, all there at the next survey */
	assert_int_equal(pol_fed_inflight_seen(&l, "c3", NULL, 0, NOW), 0);
	for (uint32_t j = 0; j < 500; j++)
		assert_int_equal(
			pol_fed_inflight_add(&l, 1000 + j, "c3", 1, 0, NOW + 1),
			0);
	{
		uint32_t *all = malloc(500 * sizeof(*all));

		assert_non_null(all);
		for (uint32_t j = 0; j < 500; j++)
			all[j] = 1000 + j;
		assert_int_equal(
			pol_fed_inflight_seen(&l, "c3", all, 500, NOW + 3),
			500);
		free(all);
	}
	assert_true(pol_fed_inflight_s_per_copy(&l, "c3") == 0.0);

	/* the prior: 22.05 (and older) 1 s a copy, later releases none, an
	 * unknown version none; until a measure replaces it */
	assert_true(pol_fed_copy_prior_s(POL_FED_RPC_22_05) == 1.0);
	assert_true(pol_fed_copy_prior_s((37 << 8) | 0) == 1.0);
	assert_true(pol_fed_copy_prior_s((39 << 8) | 0) == 0.0);
	assert_true(pol_fed_copy_prior_s((42 << 8) | 0) == 0.0);
	assert_true(pol_fed_copy_prior_s(0) == 0.0);
	assert_int_equal(pol_fed_inflight_set_prior(&l, "c4", 1.0), 0);
	assert_int_equal(pol_fed_inflight_set_prior(&l, "", 1.0), -1);
	for (uint32_t j = 0; j < 3; j++)
		assert_int_equal(
			pol_fed_inflight_add(&l, 2000 + j, "c4", 1, 0, NOW), 0);
	assert_true(pol_fed_inflight_transit_s(&l, "c4") == 3.0);
	/* measured: 4 s for 1 copy with 2 left waiting */
	assert_int_equal(pol_fed_inflight_seen(&l, "c4", NULL, 0, NOW), 0);
	assert_int_equal(pol_fed_inflight_seen(&l, "c4", (uint32_t[]){ 2000 },
					       1, NOW + 4),
			 1);
	assert_true(pol_fed_inflight_s_per_copy(&l, "c4") == 4.0);
	assert_true(pol_fed_inflight_transit_s(&l, "c4") == 8.0);
	pol_fed_inflight_free(&l);
}

/*
 * A pin older than POL_FED_INFLIGHT_MAX_S still counts while copies keep
 * arriving at its winner (it is in a queue of copies, not lost), and is
 * dropped once nothing has arrived there for POL_FED_INFLIGHT_MAX_S, or
 * at POL_FED_INFLIGHT_HARD_S whatever arrives.
 */
static void test_expire_while_flowing(void **state)
{
	pol_fed_inflight_list_t l = { 0 };
	int64_t t = NOW + POL_FED_INFLIGHT_MAX_S + 30;

	(void) state;
	assert_int_equal(pol_fed_inflight_seen(&l, "c2", NULL, 0, NOW), 0);
	assert_int_equal(pol_fed_inflight_add(&l, 1, "c2", 8, 0, NOW), 0);
	assert_int_equal(pol_fed_inflight_add(&l, 2, "c2", 8, 0, NOW), 0);
	assert_int_equal(pol_fed_inflight_add(&l, 3, "c3", 8, 0, NOW), 0);
	/* job 1's copy arrives late, at t: c2 flows, c3 does not */
	assert_int_equal(
		pol_fed_inflight_seen(&l, "c2", (uint32_t[]){ 1 }, 1, t), 1);
	assert_int_equal(
		pol_fed_inflight_expire(&l, t + 1, POL_FED_INFLIGHT_MAX_S), 1);
	assert_int_equal(pol_fed_inflight_gpus(&l, "c2"), 8); /* job 2 kept */
	assert_int_equal(pol_fed_inflight_gpus(&l, "c3"), 0);
	/* nothing more arrives at c2 for POL_FED_INFLIGHT_MAX_S */
	assert_int_equal(pol_fed_inflight_expire(&l, t + POL_FED_INFLIGHT_MAX_S,
						 POL_FED_INFLIGHT_MAX_S),
			 0);
	assert_int_equal(pol_fed_inflight_expire(&l,
						 t + POL_FED_INFLIGHT_MAX_S + 1,
						 POL_FED_INFLIGHT_MAX_S),
			 1);
	/* the hard limit: copies flow all along, the pin goes at 1 h */
	assert_int_equal(pol_fed_inflight_add(&l, 4, "c2", 8, 0, NOW), 0);
	assert_int_equal(pol_fed_inflight_add(&l, 5, "c2", 8, 0, NOW + 10), 0);
	assert_int_equal(pol_fed_inflight_seen(&l, "c2", (uint32_t[]){ 5 }, 1,
					       NOW + POL_FED_INFLIGHT_HARD_S),
			 1);
	assert_int_equal(pol_fed_inflight_expire(&l,
						 NOW + POL_FED_INFLIGHT_HARD_S,
						 POL_FED_INFLIGHT_MAX_S),
			 0);
	assert_int_equal(
		pol_fed_inflight_expire(&l, NOW + POL_FED_INFLIGHT_HARD_S + 1,
					POL_FED_INFLIGHT_MAX_S),
		1);
	assert_int_equal(l.n, 0);
	pol_fed_inflight_free(&l);
}

/*
 * Will-run answers a second after the round's now ("+1s", slurmctld's
 * clock): the jobs still consume the free GPUs (POL_FED_NOW_SLACK_S).
 * Two clusters with 2 free GPUs each and four 1-GPU jobs: two each (all
 * four went to c1, the lower index, when "+1s" was not "now").
 */
static void test_auction_now_slack(void **state)
{
	pol_fed_weights_t w;
	pol_fed_job_t jobs[4];
	pol_fed_plan_t plans[8];
	pol_fed_award_t out[4];
	const int free_gpus[2] = { 2, 2 };
	int won[2] = { 0, 0 };

	(void) state;
	pol_fed_weights_default(&w);
	memset(jobs, 0, sizeof(jobs));
	memset(plans, 0, sizeof(plans));
	for (int i = 0; i < 4; i++) {
		jobs[i].id = i + 1;
		jobs[i].gpus = 1;
		jobs[i].dataset = -1;
		jobs[i].eligible = 3;
		jobs[i].hw_match = 3;
		jobs[i].submit = NOW - 4 + i;
		for (int c = 0; c < 2; c++) {
			plans[i * 2 + c].valid = true;
			plans[i * 2 + c].start = NOW + 1;
		}
	}
	assert_int_equal(pol_fed_auction(&w, NULL, jobs, 4, plans, 2, free_gpus,
					 NOW, out),
			 0);
	for (int i = 0; i < 4; i++)
		won[out[i].cluster]++;
	assert_int_equal(won[0], 2);
	assert_int_equal(won[1], 2);
	/* beyond the slack a start is a wait: nothing is consumed */
	for (int i = 0; i < 8; i++)
		plans[i].start = NOW + POL_FED_NOW_SLACK_S + 1;
	assert_int_equal(pol_fed_auction(&w, NULL, jobs, 4, plans, 2, free_gpus,
					 NOW, out),
			 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(out[i].cluster, 0);
}

/* n one-GPU jobs of team "a" without data, eligible on two clusters,
 * submitted a second apart before NOW, each with a plan on both clusters
 * that starts at start (locality 0); everything else zero. */
static void one_gpu_jobs(pol_fed_job_t *jobs, pol_fed_plan_t *plans, int n,
			 int64_t start)
{
	memset(jobs, 0, (size_t) n * sizeof(*jobs));
	memset(plans, 0, (size_t) n * 2 * sizeof(*plans));
	for (int i = 0; i < n; i++) {
		jobs[i].id = i + 1;
		snprintf(jobs[i].team, sizeof(jobs[i].team), "a");
		jobs[i].gpus = 1;
		jobs[i].dataset = -1;
		jobs[i].eligible = 3;
		jobs[i].hw_match = 3;
		jobs[i].submit = NOW - n + i;
		for (int c = 0; c < 2; c++) {
			plans[i * 2 + c].valid = true;
			plans[i * 2 + c].start = start;
			plans[i * 2 + c].locality = 0;
		}
	}
}

/*
 * The auction and the queue of copies.  Two clusters with 8 free GPUs
 * each, 20 one-GPU jobs of origin c1, will-run "now" on both.  Without
 * a transit both clusters fill (ties to c1, then c2 once c1's GPUs are
 * taken).  With c2 taking 1 s a copy and 30 copies already on their way
 * there, a copy pinned now reaches c2 in 30 s: the jobs that c1 can
 * start now stay at c1, and once c1 is taken (a wait of taken_wait_s,
 * set to 60 s here) c2 wins while its copies' arrival (30 s, then 31 s, ...) is
 * sooner than that, and its why says when the copy arrives.
 */
static void test_auction_transit(void **state)
{
	enum { NJ = 20 };
	pol_fed_site_t sites[2] = { { .name = "c1", .link_bytes_per_s = 1 },
				    { .name = "c2", .link_bytes_per_s = 1 } };
	pol_fed_catalog_t cat = { .sites = sites, .n_sites = 2 };
	pol_fed_weights_t w;
	pol_fed_job_t jobs[NJ];
	pol_fed_plan_t plans[NJ * 2];
	pol_fed_award_t out[NJ];
	const int free_gpus[2] = { 8, 8 };
	int won[2] = { 0, 0 }, first_c2 = -1;

	(void) state;
	pol_fed_weights_default(&w);
	w.taken_wait_s = 60;
	one_gpu_jobs(jobs, plans, NJ, NOW);
	for (int i = 0; i < NJ; i++) {
		plans[i * 2 + 1].transit_s = 30;
		plans[i * 2 + 1].transit_per_job = 1;
	}
	assert_int_equal(pol_fed_auction(&w, &cat, jobs, NJ, plans, 2,
					 free_gpus, NOW, out),
			 0);
	for (int i = 0; i < NJ; i++) {
		won[out[i].cluster]++;
		if (out[i].cluster == 1 && first_c2 < 0)
			first_c2 = i;
	}
	/* c1's 8 GPUs first (no transit), then c2 */
	assert_int_equal(first_c2, 8);
	assert_non_null(strstr(out[first_c2].why, "start +30s"));
	assert_non_null(strstr(out[first_c2].why, "copy arrives +30s"));
	assert_non_null(strstr(out[first_c2 + 1].why, "start +31s"));
	/* c2 wins while 30 + k s is below c1's taken wait (60 s), and its
	 * own 8 free GPUs run out after 8; then both are taken: 60 s each, a
	 * tie to c1, whose next taken wait is 60 x (1 + 1/8) = 67 s, so c2
	 * (60 s: its copies' 39 s are sooner) takes the next, and so on */
	assert_int_equal(won[1], 10);
	assert_int_equal(won[0], 10);
	assert_int_equal(out[16].cluster, 0);
	assert_int_equal(out[17].cluster, 1);
	assert_non_null(strstr(out[18].why, "start +67s (GPUs taken"));

	/* the same without a transit: c1's first 8, then c2's 8 at once */
	for (int i = 0; i < NJ; i++) {
		plans[i * 2 + 1].transit_s = 0;
		plans[i * 2 + 1].transit_per_job = 0;
	}
	assert_int_equal(pol_fed_auction(&w, &cat, jobs, NJ, plans, 2,
					 free_gpus, NOW, out),
			 0);
	assert_null(strstr(out[8].why, "copy arrives"));
	assert_non_null(strstr(out[8].why, "start +0s"));

	/* a queue of copies longer than c1's wait: nothing goes to c2 */
	for (int i = 0; i < NJ; i++)
		plans[i * 2 + 1].transit_s = 600;
	assert_int_equal(pol_fed_auction(&w, &cat, jobs, NJ, plans, 2,
					 free_gpus, NOW, out),
			 0);
	for (int i = 0; i < NJ; i++)
		assert_int_equal(out[i].cluster, 0);

	/* Both deep queues (the horizon on both, no free GPU): the copies'
	 * delay still counts, from the horizon on, so c1 wins every job
	 * even at equal queues; without it the tie went to c1 only until
	 * the round's own queue made c2 the cheaper */
	for (int i = 0; i < NJ; i++)
		for (int c = 0; c < 2; c++) {
			pol_fed_plan_t *p = &plans[i * 2 + c];

			p->start = NOW + POL_FED_HORIZON_S;
			p->start_src = POL_FED_START_DEEP;
			p->queue_per_gpu = 1.0;
			p->gpus_total = 8;
			p->transit_s = c == 1 ? 600 : 0;
			p->transit_per_job = c == 1 ? 1 : 0;
		}
	for (int i = 0; i < NJ; i++)
		jobs[i].hold_s = 60;
	assert_int_equal(
		pol_fed_auction(&w, &cat, jobs, NJ, plans, 2, NULL, NOW, out),
		0);
	memset(won, 0, sizeof(won));
	for (int i = 0; i < NJ; i++)
		won[out[i].cluster]++;
	assert_int_equal(won[0], NJ);
	assert_non_null(strstr(out[0].why, "a deep queue"));
}

/*
 * The pins in flight join the winner's queue with their work.  Two
 * clusters of 64 GPUs, each busy with 64 one-GPU jobs ending at +100 s and
 * 100 more one-GPU jobs of 120 s behind them: on a the survey shows the
 * 100 queued, on b they are pins whose copies are still on their way.
 * Both must get the same start estimate: a deep queue's, the horizon
 * (without their work b's was +100 s, the running jobs' end: a round sent
 * its whole overflow there, 24.11's bench of 6 December).  Limits unknown
 * (0) count in the queue but add no work.
 */
static void test_inflight_load(void **state)
{
	pol_fed_inflight_list_t l = { 0 };
	pol_fed_busy_t busy[64];
	pol_fed_cluster_load_t a = { 0 }, b;

	(void) state;
	for (int i = 0; i < 64; i++)
		busy[i] = (pol_fed_busy_t){ .end = NOW + 100, .gpus = 1 };
	a.gpus_total = 64;
	a.busy = busy;
	a.n_busy = 64;
	b = a;
	a.gpus_queued = 100;
	a.jobs_queued = 100;
	a.queued_gpu_s = 100 * 120.0;
	a.max_limit_s = 120;
	for (int j = 0; j < 100; j++)
		assert_int_equal(
			pol_fed_inflight_add(&l, 100 + j, "b", 1, 120, NOW), 0);
	{
		/* nothing in flight to a: its load is left as it was */
		pol_fed_cluster_load_t z = { 0 };

		pol_fed_inflight_load(&l, "a", &z);
		assert_true(z.queued_gpu_s == 0.0);
		assert_int_equal(z.max_limit_s, 0);
		assert_int_equal(z.jobs_queued, 0);
	}
	pol_fed_inflight_load(&l, "b", &b);
	assert_int_equal(b.gpus_queued, 100);
	assert_int_equal(b.jobs_queued, 100);
	assert_true(b.queued_gpu_s == 12000.0);
	assert_int_equal(b.max_limit_s, 120);
	assert_int_equal(pol_fed_start_estimate(&a, 1, NOW),
			 NOW + POL_FED_HORIZON_S);
	assert_int_equal(pol_fed_start_estimate(&b, 1, NOW),
			 NOW + POL_FED_HORIZON_S);
	/* a load of its own keeps its longer limit; an unknown limit adds a
	 * job and its GPUs, no work */
	b.max_limit_s = 600;
	assert_int_equal(pol_fed_inflight_add(&l, 999, "b", 2, 0, NOW), 0);
	pol_fed_inflight_load(&l, "b", &b);
	assert_int_equal(b.max_limit_s, 600);
	assert_int_equal(b.jobs_queued, 201);
	assert_int_equal(b.gpus_queued, 202);
	assert_true(b.queued_gpu_s == 24000.0);
	/* a bad limit is refused */
	assert_int_equal(pol_fed_inflight_add(&l, 5, "b", 1, -1, NOW), -1);
	pol_fed_inflight_free(&l);
}

/*
 * A round's own queue.  Two clusters of 8 GPUs, none free; ten one-GPU
 * jobs of 80 s hold, will-run at +600 s on c1 and +630 s on c2.  Each job
 * the round gives a cluster queues there: for the later jobs it adds 80 /
 * 8 = 10 s to a plan's start and 1/8 job per GPU x 80 s = 10 s of queue
 * term, 20 s in all.  So c1 takes jobs 1 and 2 (600, 620 < 630), then the
 * two alternate: c1 gets 1, 2, 4, 6, 8, 10 and c2 3, 5, 7, 9.  Without
 * gpus_total (unknown) every job sees the same bids: all ten to c1, as
 * before.
 */
static void test_auction_round_queue(void **state)
{
	enum { NJ = 10 };
	pol_fed_weights_t w;
	pol_fed_job_t jobs[NJ];
	pol_fed_plan_t plans[NJ * 2];
	pol_fed_award_t out[NJ];
	const int free_gpus[2] = { 0, 0 };
	static const int want[NJ] = { 0, 0, 1, 0, 1, 0, 1, 0, 1, 0 };

	(void) state;
	pol_fed_weights_default(&w);
	one_gpu_jobs(jobs, plans, NJ, NOW + 600);
	for (int i = 0; i < NJ; i++) {
		jobs[i].hold_s = 80;
		plans[i * 2 + 1].start = NOW + 630;
		for (int c = 0; c < 2; c++)
			plans[i * 2 + c].gpus_total = 8;
	}
	assert_int_equal(pol_fed_auction(&w, NULL, jobs, NJ, plans, 2,
					 free_gpus, NOW, out),
			 0);
	for (int i = 0; i < NJ; i++)
		assert_int_equal(out[i].cluster, want[i]);
	/* job 4 at c1 behind jobs 1 and 2 of the round */
	assert_non_null(strstr(out[3].why, "start +620s"));
	assert_non_null(strstr(out[3].why, "queue 0.250/GPU +20s"));
	assert_true(fabs(out[3].cost - 640) < 1e-9);

	for (int i = 0; i < NJ * 2; i++)
		plans[i].gpus_total = 0;
	assert_int_equal(pol_fed_auction(&w, NULL, jobs, NJ, plans, 2,
					 free_gpus, NOW, out),
			 0);
	for (int i = 0; i < NJ; i++)
		assert_int_equal(out[i].cluster, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inflight_list),
		cmocka_unit_test(test_inflight_cancelled),
		cmocka_unit_test(test_burst_over_two_rounds),
		cmocka_unit_test(test_flow_measured),
		cmocka_unit_test(test_expire_while_flowing),
		cmocka_unit_test(test_auction_now_slack),
		cmocka_unit_test(test_auction_transit),
		cmocka_unit_test(test_inflight_load),
		cmocka_unit_test(test_auction_round_queue),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
