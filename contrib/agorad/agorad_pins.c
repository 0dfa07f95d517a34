/*
 * agorad_pins.c - step 4 of a round (agorad_round.c) in flight: the pins
 * children of a round (agorad_auction.c, one per origin) run on while
 * the next rounds survey, plan and auction the jobs that arrived since,
 * and start their own pins (AD_PINS_RUNS steps at most; a round with
 * none free waits for the oldest).  In a burst the jobs submitted during
 * a round's pins no longer wait for those pins to end, nor for the next
 * round's survey and plans (issue 18).  With AD_PINS_OVERLAP 0 (the
 * default: on the 2-core harness the overlapped survey slowed the pins
 * more than it hid) ad_round collects its own step before it returns,
 * and no step is in flight between rounds.
 *
 * What keeps it safe: a step's jobs are the ids in r->pinning from its
 * start to its collection, and every later round drops them from its
 * jobs right after the survey (pins_exclude): no job is bid on, planned
 * or pinned by two steps at once.  A step's answers are read back
 * (pins_take) with what they need of their round copied at the start
 * (ad_pin_job_t); a pin that failed, or a step killed at its limit,
 * leaves its jobs as their marks say (pol_fed_hold.h) and a later round
 * takes them up where they stopped, as before.  A fresh winner's GPUs
 * count as on their way to it from the step's start (pol_fed_inflight),
 * so that a round in between does not award them again; a failed pin's
 * are dropped at its collection.  On a stop the steps in flight get the
 * children's grace, then SIGTERM (each finishes the job in hand).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <slurm/slurm.h>
#include "agora_compat_pub.h"
#include <slurm/slurm_errno.h>

#include "agorad_round_int.h"

static void pins_free(ad_pins_run_t *p)
{
	for (int i = 0; p->jobs && i < p->n_jobs; i++)
		free(p->jobs[i].decision);
	free(p->jobs);
	for (int c = 0; c < p->ch.n; c++)
		free(p->ch.out[c]);
	memset(p, 0, sizeof(*p));
}

/* One answer m of step p: logged and counted. */
static void pin_answer(const ad_pins_run_t *p, const ad_pin_msg_t *m,
		       int *pinned, int *failed)
{
	const ad_pin_job_t *j = &p->jobs[m->idx];

	if (m->step == 0)
		return; /* nothing left (re-read) */
	if (m->rc) {
		(*failed)++;
		ad_error(
			"JobId=%u: %s failed (the next round takes it up where it stopped): %s",
			j->job_id,
			m->step == POL_FED_STEP_PIN ? "pinning (Clusters=)"
			: m->step == POL_FED_STEP_RELEASE
				? "the release (with the decision)"
				: "writing the decision",
			slurm_strerror(m->rc));
		return;
	}
	(*pinned)++;
	if (pol_fed_hold_bids(j->act))
		ad_info("JobId=%u (origin %s) %spinned to %s at %lld.%03lld (submitted %lld): %s",
			j->job_id, j->origin,
			j->act == POL_FED_HOLD_REAUCTION
				? "not started in time by its winner, re-"
				: "",
			j->winner, (long long) (m->done_ms / 1000),
			(long long) (m->done_ms % 1000), (long long) j->submit,
			j->decision ? j->decision : "");
	else
		ad_info("JobId=%u (origin %s): pinned to %s before; %s now done",
			j->job_id, j->origin, j->pin_cluster,
			j->act == POL_FED_HOLD_RELEASE
				? "its release and decision"
				: "its decision");
}

/* Step p has ended: its answers logged and counted, its jobs the next
 * rounds' again.  Returns the number pinned. */
static int pins_take(ad_round_t *r, ad_pins_run_t *p, ad_stats_t *st,
		     int *pin_rc)
{
	int pinned = 0, failed = 0, *rc = malloc((p->n_jobs + 1) * sizeof(int));

	for (int i = 0; rc && i < p->n_jobs; i++)
		rc[i] = -1;
	for (int c = 0; c < p->ch.n; c++) {
		size_t n = p->ch.len[c] / sizeof(ad_pin_msg_t);

		for (size_t k = 0; k < n; k++) {
			ad_pin_msg_t m;

			memcpy(&m, p->ch.out[c] + k * sizeof(m), sizeof(m));
			if (m.idx >= (uint32_t) p->n_jobs)
				continue;
			if (rc)
				rc[m.idx] = m.rc;
			pin_answer(p, &m, &pinned, &failed);
		}
	}
	for (int i = 0; i < p->n_jobs; i++) {
		const ad_pin_job_t *j = &p->jobs[i];

		if (!j->mine)
			continue;
		if (pin_rc && p->round == st->rounds && i < r->n_jobs &&
		    r->jobs[i].job_id == j->job_id)
			pin_rc[i] = rc && !rc[i] ? 0 : -1;
		/* a fresh winner's pin that did not land: its GPUs are not
		 * on their way there after all */
		if (pol_fed_hold_bids(j->act) && strcmp(j->winner, j->origin) &&
		    (!rc || rc[i]))
			(void) pol_fed_inflight_drop(&r->inflight, j->job_id);
		pol_fed_idset_del(&r->pinning, j->job_id);
	}
	st->pinned += pinned;
	st->failed += failed;
	ad_verbose("pins of round %llu: %d pinned, %d failed in %.3f s",
		   p->round, pinned, failed, ad_now_s() - p->started);
	free(rc);
	pins_free(p);
	return pinned;
}

int pins_collect(ad_round_t *r, ad_stats_t *st, bool wait, volatile int *stop,
		 int *pin_rc)
{
	int pinned = 0;

	for (int k = 0; k < AD_PINS_RUNS; k++)
		if (r->pins[k].active &&
		    children_collect(&r->pins[k].ch, wait, stop))
			pinned += pins_take(r, &r->pins[k], st, pin_rc);
	return pinned;
}

int pins_exclude(ad_round_t *r)
{
	int w = 0, n = r->n_jobs;

	for (int i = 0; i < n; i++)
		if (!pol_fed_idset_has(&r->pinning, r->jobs[i].job_id))
			r->jobs[w++] = r->jobs[i];
	r->n_jobs = w;
	return n - w;
}

/* A free slot for a step, once the oldest in flight has ended if none
 * is free. */
static ad_pins_run_t *pins_slot(ad_round_t *r, ad_stats_t *st,
				volatile int *stop)
{
	ad_pins_run_t *old = NULL;

	for (int k = 0; k < AD_PINS_RUNS; k++) {
		if (!r->pins[k].active)
			return &r->pins[k];
		if (!old || r->pins[k].round < old->round)
			old = &r->pins[k];
	}
	(void) children_collect(&old->ch, true, stop);
	(void) pins_take(r, old, st, NULL);
	return old;
}

int pins_start(ad_round_t *r, ad_stats_t *st, int *pin_rc, volatile int *stop)
{
	bool want[AD_MAX_CLUSTERS];
	ad_pins_run_t *p;
	int n = 0, o;
	time_t now = time(NULL);

	for (int c = 0; c < r->n_clusters; c++)
		want[c] = false;
	for (int i = 0; i < r->n_jobs; i++)
		if (pin_wanted(r, i) &&
		    (o = cluster_index(r, r->jobs[i].origin)) >= 0 &&
		    r->clusters[o].up)
			want[o] = true, n++;
	if (!n)
		return 0;
	p = pins_slot(r, st, stop);
	p->jobs = calloc(r->n_jobs, sizeof(*p->jobs));
	if (!p->jobs) {
		ad_error("out of memory: no pins this round");
		return 0;
	}
	p->n_jobs = r->n_jobs;
	p->round = st->rounds;
	p->started = ad_now_s();
	for (int i = 0; i < r->n_jobs; i++) {
		ad_pin_job_t *j = &p->jobs[i];
		int w = r->winner_cluster[i];

		o = cluster_index(r, r->jobs[i].origin);
		j->job_id = r->jobs[i].job_id;
		j->mine = pin_wanted(r, i) && o >= 0 && want[o];
		if (!j->mine)
			continue;
		/* its id is what keeps later rounds off it: a job that
		 * cannot be kept there waits for a later round */
		(void) pol_fed_idset_add(&r->pinning, j->job_id);
		if (!pol_fed_idset_has(&r->pinning, j->job_id)) {
			j->mine = false;
			r->jobs[i].act = POL_FED_HOLD_NONE; /* not pin_mine */
			continue;
		}
		j->act = r->jobs[i].act;
		j->gpus = r->jobs[i].gpus;
		j->submit = r->jobs[i].submit;
		scopy(j->origin, r->jobs[i].origin, AD_NAME);
		scopy(j->pin_cluster, r->jobs[i].pin_cluster, AD_NAME);
		if (w >= 0)
			scopy(j->winner, r->clusters[w].name, AD_NAME);
		if (r->decision[i])
			j->decision = strdup(r->decision[i]);
		/* a fresh winner's GPUs are on their way to it from now
		 * (dropped at the collection if the pin fails) */
		if (pol_fed_hold_bids(j->act) && w >= 0 &&
		    strcmp(j->winner, j->origin) &&
		    pol_fed_inflight_add(
			    &r->inflight, j->job_id, j->winner, j->gpus,
			    ad_limit_s(r->jobs[i].time_limit), now))
			ad_error(
				"JobId=%u: out of memory: its pin to %s does not count there until its copy arrives",
				j->job_id, j->winner);
		if (pin_rc)
			pin_rc[i] = 1;
	}
	children_start(r, want, pins_child, AD_CHILD_LIMIT_S, &p->ch);
	p->active = true;
	return n;
}

void pins_drain(ad_round_t *r, ad_stats_t *st, volatile int *stop)
{
	(void) pins_collect(r, st, true, stop, NULL);
}
