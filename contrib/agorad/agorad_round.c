/*
 * agorad_round.c - one auction round over the federation.
 *
 *   0. the federation's clusters, from slurmdbd (slurmdb_get_info_cluster);
 *      the last list is kept while slurmdbd is down
 *   1. survey, one process per cluster, in parallel: the jobs at that
 *      origin with a step of the federation hold left, free/total GPUs,
 *      pending GPU demand, the running jobs' limits (the start estimate
 *      that replaces will-run answers that cannot be true), and the usage
 *      per app that slurmctld/agora publishes
 *  1b. copies of cancelled jobs (agorad_orphans.c): a live copy at one
 *      cluster of a job that its origin shows cancelled (a 22.05 copy that
 *      arrived after the user's cancel) is cancelled there
 *   2. plans, one process per cluster, in parallel: Slurm's will-run of
 *      each held job on that cluster (start, nodes, preempted jobs); the
 *      first request carries the other clusters' usage per app (the
 *      credit term's federation-wide usage) and tells job_submit/agora
 *      that agorad is alive
 *   3. the core's batched auction (pol_fed_auction): every held job of the
 *      federation is decided in one call
 *   4. pins, one process per origin, in parallel: Clusters=<winner> with
 *      the hold mark "pinned to <winner>", then the release with the
 *      decision as the AdminComment, one update (Slurm forwards it to the
 *      sibling copy the release submits), so the SystemComment that
 *      site_factor/agora copies from it is shown on every cluster; on
 *      SIGTERM the child finishes the job in hand
 *
 * One process per cluster because libslurm's target cluster
 * (working_cluster_rec) is process-global.  Children report through pipes
 * in fixed-size records; a child that does not finish within its limit
 * is killed and its cluster counts as down for the round.
 *
 * This file runs the round: the collection of each step's answers and
 * the auction's inputs.  agorad_clusters.c is step 0, agorad_children.c
 * runs the children, agorad_survey.c holds what the children of steps 1
 * and 2 do, agorad_auction.c steps 3 and 4 and the credit exchange,
 * agorad_state.c the state file.
 *
 * Crash safety (level-triggered, doc/design.md): agorad keeps nothing
 * between rounds that Slurm does not show.  Every step of a pin leaves a
 * versioned mark on the job (pol_fed_hold.h), and the survey takes each
 * job up where its mark says it stopped: killed after step 4's first
 * update, the job is still held with the mark "pinned to <winner>" and
 * the next round releases it (the decision lands with the release; a job
 * an older agorad released with the pinned mark on gets its decision).  If no agorad comes back, site_factor/agora
 * releases any job still held with an Agora mark after FedAuctionTimeout.
 * A pin is one Slurm update of one job, and Slurm's federation lets only
 * one sibling copy start: no job runs twice.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <slurm/slurm.h>
#include "agora_compat_pub.h"
#include <slurm/slurm_errno.h>

#include "agora_sanitize.h"
#include "agorad_round_int.h"

/* The round's context (agorad_round_int.h): the only state of the
 * round, passed explicitly to every step; the module keeps it between
 * rounds for the clusters' records and up/down (agorad_clusters.c owns
 * the slurmdbd list that owns the records). */
static ad_round_t round_ctx;

static void round_reset(ad_round_t *r)
{
	willrun_reset(r);
	for (int c = 0; c < AD_MAX_CLUSTERS; c++) {
		free(r->usage[c]);
		r->usage[c] = NULL;
		r->n_usage[c] = 0;
	}
	for (int i = 0; r->decision && i < r->n_jobs; i++)
		free(r->decision[i]);
	free(r->decision);
	r->decision = NULL;
	free(r->jobs);
	r->jobs = NULL;
	free(r->awards);
	r->awards = NULL;
	free(r->winner_cluster);
	r->winner_cluster = NULL;
	free(r->plan_hw);
	r->plan_hw = NULL;
	r->n_jobs = 0;
}

/* ---- the round ------------------------------------------------------ */

/* Step 1 for cluster c: its answer (out, len) into clusters[c], jobs and
 * usage[c].  Returns whether it answered. */
static bool survey_take(ad_round_t *r, int c, const char *out, size_t len,
			const ad_stats_t *st)
{
	ad_survey_hdr_t h;
	bool was_up = r->clusters[c].up;

	r->clusters[c].up = false;
	if (len < sizeof(h)) {
		if (was_up || st->rounds == 1)
			ad_error("%s: no survey: its bids are skipped",
				 r->clusters[c].name);
		return false;
	}
	memcpy(&h, out, sizeof(h));
	if (!h.ok || h.jp.n_jobs < 0 || h.n_usage < 0 || h.jp.n_busy < 0 ||
	    h.jp.n_copies < 0 || h.jp.n_alive < 0 || h.jp.n_cancelled < 0 ||
	    len != sizeof(h) + h.jp.n_jobs * sizeof(ad_job_t) +
			    h.n_usage * sizeof(ad_usage_t) +
			    h.jp.n_busy * sizeof(pol_fed_busy_t) +
			    (h.jp.n_copies + h.jp.n_alive + h.jp.n_cancelled) *
				    sizeof(uint32_t)) {
		if (was_up || st->rounds == 1)
			ad_error(
				"%s: cannot reach slurmctld (%s): its bids are skipped",
				r->clusters[c].name,
				h.ok ? "short answer" : h.err);
		return false;
	}
	if (h.jp.n_jobs) {
		ad_job_t *nj = realloc(r->jobs, (r->n_jobs + h.jp.n_jobs) *
							sizeof(*r->jobs));

		if (!nj) {
			ad_error("%s: out of memory: its bids are skipped",
				 r->clusters[c].name);
			return false;
		}
		r->jobs = nj;
	}
	if (h.n_usage &&
	    !(r->usage[c] = malloc(h.n_usage * sizeof(ad_usage_t)))) {
		ad_error("%s: out of memory: its bids are skipped",
			 r->clusters[c].name);
		return false;
	}
	if (!was_up && st->rounds > 1)
		ad_info("%s: answers again", r->clusters[c].name);
	r->clusters[c].up = true;
	r->clusters[c].gpus_total = h.gpus_total;
	r->clusters[c].gpus_free = h.gpus_free;
	r->clusters[c].gpus_pending = h.jp.gpus_pending;
	r->clusters[c].gpus_per_node = h.gpus_per_node;
	r->clusters[c].n_nodes = h.n_nodes;
	if (h.jp.n_jobs) {
		memcpy(r->jobs + r->n_jobs, out + sizeof(h),
		       h.jp.n_jobs * sizeof(ad_job_t));
		r->n_jobs += h.jp.n_jobs;
	}
	if (h.n_usage) {
		memcpy(r->usage[c],
		       out + sizeof(h) + h.jp.n_jobs * sizeof(ad_job_t),
		       h.n_usage * sizeof(ad_usage_t));
		r->n_usage[c] = h.n_usage;
	}
	h.usage_src[sizeof(h.usage_src) - 1] = '\0';
	usage_note(&r->clusters[c], h.usage_src, h.n_usage);
	free(r->clusters[c].busy);
	r->clusters[c].busy = NULL;
	if (h.jp.n_busy && (r->clusters[c].busy = malloc(
				    h.jp.n_busy * sizeof(pol_fed_busy_t))))
		memcpy(r->clusters[c].busy,
		       out + sizeof(h) + h.jp.n_jobs * sizeof(ad_job_t) +
			       h.n_usage * sizeof(ad_usage_t),
		       h.jp.n_busy * sizeof(pol_fed_busy_t));
	/* the pins to c whose copy it shows have arrived: Slurm's queue
	 * there counts them now; a survey without copies still tells the
	 * flow (pol_fed_inflight.h).  Not from a last answer standing in for
	 * a late one: every pin since is still on its way, and no copy
	 * arrived in the meantime as far as the flow can tell */
	if (!r->clusters[c].survey_late) {
		uint32_t *ids = h.jp.n_copies
					? malloc(h.jp.n_copies * sizeof(*ids))
					: NULL;

		if (ids || !h.jp.n_copies) {
			if (ids)
				memcpy(ids,
				       out + len -
					       (h.jp.n_copies + h.jp.n_alive +
						h.jp.n_cancelled) *
						       sizeof(*ids),
				       h.jp.n_copies * sizeof(*ids));
			(void) pol_fed_inflight_seen(
				&r->inflight, r->clusters[c].name, ids,
				ids ? h.jp.n_copies : 0, time(NULL));
			free(ids);
		}
		/* the pins of jobs that c, their origin, shows cancelled
		 * are not on their way any more */
		if (h.jp.n_cancelled) {
			uint32_t *cids = malloc(h.jp.n_cancelled *
						sizeof(*cids));

			if (cids) {
				memcpy(cids,
				       out + len -
					       h.jp.n_cancelled * sizeof(*cids),
				       h.jp.n_cancelled * sizeof(*cids));
				(void) pol_fed_inflight_cancelled(
					&r->inflight, cids, h.jp.n_cancelled);
				free(cids);
			}
		}
		if (pol_fed_inflight_transit_s(&r->inflight,
					       r->clusters[c].name) > 0.0)
			ad_verbose(
				"%s: %d GPUs of pins on their way, %.2f s per copy: a copy pinned now arrives in %.0f s",
				r->clusters[c].name,
				pol_fed_inflight_gpus(&r->inflight,
						      r->clusters[c].name),
				pol_fed_inflight_s_per_copy(
					&r->inflight, r->clusters[c].name),
				pol_fed_inflight_transit_s(
					&r->inflight, r->clusters[c].name));
	}
	r->clusters[c].load = (pol_fed_cluster_load_t){
		.gpus_total = h.gpus_total,
		.gpus_free = h.gpus_free,
		.gpus_queued = h.jp.gpus_queued,
		.busy = r->clusters[c].busy,
		.n_busy = r->clusters[c].busy ? h.jp.n_busy : 0,
		.queued_gpu_s = h.jp.queued_gpu_s,
		.max_limit_s = h.jp.max_limit_s,
		.jobs_queued = h.jp.jobs_queued,
	};
	/* plus the pins still on their way to c: their GPUs, their count
	 * (the queue term) and their work (the start estimate; without it a
	 * winner whose copies were still on their way looked hundreds of
	 * seconds shorter than the origin) */
	pol_fed_inflight_load(&r->inflight, r->clusters[c].name,
			      &r->clusters[c].load);
	return true;
}

/* Step 1: every cluster's survey.  Returns the number of clusters up. */
static int round_survey(ad_round_t *r, ad_stats_t *st, volatile int *stop)
{
	bool want[AD_MAX_CLUSTERS];
	char *out[AD_MAX_CLUSTERS];
	size_t len[AD_MAX_CLUSTERS];
	bool late[AD_MAX_CLUSTERS];
	ad_late_t lt[AD_MAX_CLUSTERS];
	double started[AD_MAX_CLUSTERS];
	int n_up = 0;
	time_t now = time(NULL);

	/* a cluster that timed out is skipped for a while (pol_fed_backoff):
	 * one that does not answer would cost every round the child limit */
	for (int c = 0; c < r->n_clusters; c++) {
		want[c] = !pol_fed_backoff_skip(&r->clusters[c].backoff, now);
		/* a cluster late to answer may stand on its last answer
		 * (pol_fed_survey_late) */
		lt[c].kept_at = r->clusters[c].survey && r->clusters[c].up
					? r->clusters[c].survey_at
					: -1;
		lt[c].pins_on_way = pol_fed_inflight_jobs(&r->inflight,
							  r->clusters[c].name);
		lt[c].was_late = r->clusters[c].survey_late;
	}
	run_children_late(r, want, survey_child, lt, AD_SURVEY_LATE_S,
			  r->survey_max_age_s, out, len, late, started,
			  AD_CHILD_LIMIT_S, stop);
	for (int c = 0; c < r->n_clusters; c++) {
		ad_cluster_t *cl = &r->clusters[c];

		cl->survey_late = false;
		if (!want[c]) {
			r->clusters[c].up = false;
			continue;
		}
		if (late[c]) {
			size_t sl = 0;
			char *s = survey_stale(cl, &sl, now);

			cl->survey_late = s != NULL;
			if (survey_take(r, c, s, s ? sl : 0, st)) {
				n_up++;
				ad_verbose(
					"%s: still reading %.1f s after the first answer: its answer of %.1f s ago stands in (its own held jobs wait for the next round, which takes the read in progress)",
					cl->name, AD_SURVEY_LATE_S,
					ad_now_s() - cl->survey_at);
			}
			free(s);
			continue;
		}
		/* nothing at all: killed at the limit; or its slurmctld did
		 * not answer within MessageTimeout (a refusal comes at once
		 * and does not count) */
		ad_survey_hdr_t h = { 0 };

		if (len[c] >= sizeof(h))
			memcpy(&h, out[c], sizeof(h));
		if (h.ok && h.jobs_same) {
			size_t ml = 0;
			char *m = survey_merge(cl, out[c], len[c], &ml, now);

			free(out[c]);
			out[c] = m; /* NULL: no answer (the next reads all) */
			len[c] = m ? ml : 0;
			st->survey_same++;
			ad_debug(
				"%s: job table unchanged since %lld: the last survey's jobs stand",
				cl->name, (long long) cl->jobs_update);
		}
		int off = pol_fed_backoff_note(
			&cl->backoff, len[c] == 0 || (!h.ok && h.timed_out),
			time(NULL), 0, 0);

		if (off)
			ad_error(
				"%s: skipped for %d s (its survey timed out %d times in a row)",
				cl->name, off, cl->backoff.timeouts);
		if (survey_take(r, c, out[c], len[c], st)) {
			n_up++;
			/* kept for the next round's update-time read */
			free(cl->survey);
			cl->survey = out[c];
			cl->survey_len = len[c];
			/* what it says: since its read began */
			cl->survey_at = started[c];
			memcpy(&h, out[c], sizeof(h));
			cl->jobs_update = (time_t) h.jp.jobs_update;
			if (h.conf_read) {
				h.save_dir[sizeof(h.save_dir) - 1] = '\0';
				scopy(cl->save_dir, h.save_dir,
				      sizeof(cl->save_dir));
				cl->save_dir_at = now;
				cl->preempt_none = h.preempt_none != 0;
			}
			continue;
		}
		free(cl->survey);
		cl->survey = NULL;
		cl->survey_len = 0;
		cl->jobs_update = 0;
		free(out[c]);
	}
	return n_up;
}

/* Step 2: the will-run answer m of cluster c into plans. */
static void plan_take(ad_round_t *r, int c, const ad_plan_msg_t *m,
		      pol_fed_plan_t *plans, time_t now)
{
	pol_fed_plan_t *p = &plans[(size_t) m->idx * r->n_clusters + c];

	p->valid = m->valid;
	p->start = m->start < now ? now : m->start;
	/* an answer that cannot be true (Slurm's "2058" for jobs without a
	 * limit) gives way to agorad's own estimate; the bid says so */
	if (m->valid) {
		p->will_run = p->start;
		p->start = pol_fed_start_choose(
			&r->clusters[c].load, r->jobs[m->idx].gpus, p->start,
			m->n_preempt, now, &p->start_src);
		if (p->start_src == POL_FED_START_ESTIMATE ||
		    p->start_src == POL_FED_START_DEEP)
			ad_verbose(
				"JobId=%u on %s: will-run said start +%lld s, which cannot be true (free GPUs, queued jobs, limits); agorad's estimate +%lld s%s",
				r->jobs[m->idx].job_id, r->clusters[c].name,
				(long long) (p->will_run - now),
				(long long) (p->start - now),
				p->start_src == POL_FED_START_DEEP
					? " (a deep queue: the horizon)"
					: "");
	}
	p->n_preempt = m->n_preempt;
	/* the select wrapper's placer on the planned nodes (-1: unknown,
	 * which the auction counts as level 3) */
	p->locality = m->valid ? m->locality : -1;
	if (m->valid && m->hw_match && r->plan_hw)
		r->plan_hw[m->idx] |= 1ULL << c;
	if (!m->valid)
		ad_debug("JobId=%u on %s: no plan: %s", r->jobs[m->idx].job_id,
			 r->clusters[c].name, m->err);
}

/* Step 2 (also the heartbeat when there is nothing to plan): the plans
 * of every job on every cluster up, plans[job * n_clusters + cluster]
 * (calloc'ed; NULL if out of memory). */
static pol_fed_plan_t *round_plans(ad_round_t *r, const agora_conf_t *conf,
				   time_t now, volatile int *stop)
{
	bool want[AD_MAX_CLUSTERS];
	char *out[AD_MAX_CLUSTERS];
	size_t len[AD_MAX_CLUSTERS];
	pol_fed_plan_t *plans;

	plans = calloc((size_t) (r->n_jobs + 1) * r->n_clusters,
		       sizeof(*plans));
	r->plan_hw = calloc((size_t) r->n_jobs + 1, sizeof(*r->plan_hw));
	willrun_plan(r, now);
	for (int c = 0; c < r->n_clusters; c++) {
		ad_cluster_t *cl = &r->clusters[c];

		/* none to a cluster late to answer (the next round's) */
		cl->heartbeat = !cl->survey_late &&
				pol_fed_heartbeat_due(
					cl->will_run_at, now,
					conf->fed_auction_timeout_s);
		want[c] = cl->up && (cl->heartbeat || r->n_jobs > 0);
		if (!want[c])
			continue;
		/* a heartbeat or a will-run for a job (the first carries
		 * the usage); a child that asks nothing sends nothing */
		for (size_t at = c; !cl->heartbeat && r->wr_act &&
				    at < (size_t) r->n_jobs * r->n_clusters;
		     at += r->n_clusters)
			if (r->wr_act[at] == POL_FED_WILLRUN_ASK && r->shape &&
			    r->shape[at / r->n_clusters])
				cl->heartbeat = true;
		if (cl->heartbeat)
			cl->will_run_at = now;
	}
	run_children(r, want, plans_child, out, len, AD_CHILD_LIMIT_S, stop);
	for (int c = 0; c < r->n_clusters; c++) {
		size_t n = len[c] / sizeof(ad_plan_msg_t);

		for (size_t k = 0; plans && k < n; k++) {
			ad_plan_msg_t m;

			memcpy(&m, out[c] + k * sizeof(m), sizeof(m));
			if (m.idx >= (uint32_t) r->n_jobs)
				continue;
			plan_take(r, c, &m, plans, now);
			willrun_keep(r, c, &m, now);
		}
		free(out[c]);
	}
	return plans;
}

/* Step 3: the auction's jobs (calloc'ed; NULL if out of memory), and
 * each team's credit in plans. */
static pol_fed_job_t *auction_jobs(const ad_round_t *r, const ad_catalog_t *ac,
				   pol_fed_plan_t *plans)
{
	pol_fed_job_t *pj = calloc(r->n_jobs, sizeof(*pj));
	bool unknown;

	for (int i = 0; pj && i < r->n_jobs; i++) {
		pj[i].id = r->jobs[i].job_id;
		scopy(pj[i].team, r->jobs[i].account, POL_FED_NAME_LEN);
		pj[i].gpus = r->jobs[i].gpus;
		pj[i].dataset = pol_fed_catalog_job_dataset(
			&ac->cat, r->jobs[i].dataset, r->jobs[i].account,
			&unknown);
		if (unknown) {
			char ds[AGORA_NAME_SIZE]; /* the user's words */

			(void) agora_sanitize_name(r->jobs[i].dataset,
						   strlen(r->jobs[i].dataset),
						   ds);
			ad_info("JobId=%u names dataset '%s', which %s does not list: no data locality for it",
				r->jobs[i].job_id, ds,
				ac->have_file ? "FedCatalog" : "no catalog");
		}
		pj[i].submit = r->jobs[i].submit;
		pj[i].priority = 0;
		/* the queue term's hold: a share of its time limit */
		pj[i].hold_s = pol_fed_hold_of_limit(
			r->jobs[i].time_limit == INFINITE ||
					r->jobs[i].time_limit == NO_VAL
				? 0
				: 60 * (int64_t) r->jobs[i].time_limit);
		/* only jobs waiting for the auction bid (a pinned job's
		 * release or decision is left: it keeps its winner) */
		for (int c = 0; c < r->n_clusters; c++)
			if (pol_fed_hold_bids(r->jobs[i].act) &&
			    eligible(&r->jobs[i], r->clusters[c].name))
				pj[i].eligible |= 1ULL << c;
		/* a cluster's will-run deferred to the next round (over its
		 * budget): the job waits a round rather than be decided
		 * without that bid */
		for (int c = 0; r->wr_act && c < r->n_clusters; c++)
			if (r->wr_act[(size_t) i * r->n_clusters + c] ==
				    POL_FED_WILLRUN_DEFER &&
			    r->clusters[c].up)
				pj[i].eligible = 0;
		/* the hardware it prefers (--prefer): a cluster that would
		 * run it on other nodes may, at a cost */
		pj[i].hw_match = pj[i].eligible &
				 (r->plan_hw ? r->plan_hw[i] : ~0ULL);
		for (int c = 0; c < r->n_clusters; c++) {
			pol_fed_plan_t *p =
				&plans[(size_t) i * r->n_clusters + c];

			p->team_credit = fed_credit(r, r->jobs[i].account);
			/* a copy to another cluster queues behind the ones
			 * on their way there (pol_fed_inflight.h) */
			if (strcmp(r->clusters[c].name, r->jobs[i].origin)) {
				p->transit_s = pol_fed_inflight_transit_s(
					&r->inflight, r->clusters[c].name);
				p->transit_per_job =
					pol_fed_inflight_s_per_copy(
						&r->inflight,
						r->clusters[c].name);
			}
			/* the queue term's queue: this round's survey; the
			 * auction adds the jobs the round queues there */
			p->queue_per_gpu = pol_fed_queue_per_gpu(
				&r->clusters[c].load);
			p->gpus_total = r->clusters[c].load.gpus_total;
		}
	}
	return pj;
}

/* The jobs refused this round (a field of the request longer than its
 * copy: no will-run is asked, no cluster wins): logged at info once per
 * job, not every round (pol_fed_idset). */
static void refusals_log(ad_round_t *r)
{
	uint32_t *ids = malloc((r->n_jobs + 1) * sizeof(*ids));
	int n = 0;

	for (int i = 0; i < r->n_jobs; i++) {
		char why[128];

		if (!r->jobs[i].too_long[0] ||
		    !pol_fed_hold_bids(r->jobs[i].act))
			continue;
		if (ids)
			ids[n++] = r->jobs[i].job_id;
		if (!pol_fed_idset_add(&r->refused_logged, r->jobs[i].job_id))
			continue;
		pol_fed_willrun_refusal(r->jobs[i].too_long, why, sizeof(why));
		ad_info("JobId=%u (origin %s): %s (refused, never truncated): no will-run is asked, it stays held until the fail-open (FedAuctionTimeout)",
			r->jobs[i].job_id, r->jobs[i].origin, why);
	}
	/* kept to the jobs still refused, once every cluster answered (a
	 * job whose origin did not is not seen: not a change) */
	for (int c = 0; c < r->n_clusters; c++)
		if (!r->clusters[c].up)
			n = -1;
	if (ids && n >= 0)
		pol_fed_idset_keep(&r->refused_logged, ids, n);
	free(ids);
}

/* Step 3: the auction of every held job: awards, decision and
 * winner_cluster per job.  Returns the number of jobs without a plan, -1
 * if the auction failed (the jobs stay held). */
static int round_auction(ad_round_t *r, const agora_conf_t *conf,
			 pol_fed_plan_t *plans, time_t now)
{
	ad_catalog_t ac;
	pol_fed_weights_t w;
	pol_fed_job_t *pj;
	int free_gpus[AD_MAX_CLUSTERS], no_plan = 0, rc = 0;

	catalog_build(r, conf, &ac);
	pj = auction_jobs(r, &ac, plans);
	/* free now, less what pending jobs (pinned here in earlier rounds
	 * among them) will take first */
	for (int c = 0; c < r->n_clusters; c++) {
		int f = r->clusters[c].gpus_free -
			r->clusters[c].load.gpus_queued;

		free_gpus[c] = r->clusters[c].up && f > 0 ? f : 0;
	}
	pol_fed_weights_default(&w);
	r->awards = calloc(r->n_jobs, sizeof(*r->awards));
	r->decision = calloc(r->n_jobs, sizeof(char *));
	r->winner_cluster = calloc(r->n_jobs, sizeof(int));
	if (!pj || !r->awards || !r->decision || !r->winner_cluster)
		rc = ENOMEM;
	else if (pol_fed_auction(&w, &ac.cat, pj, r->n_jobs, plans,
				 r->n_clusters, free_gpus, now, r->awards))
		rc = errno;
	if (rc) {
		ad_error("the auction failed (%s): jobs stay held this round",
			 strerror(rc));
		catalog_free(&ac);
		free(pj);
		return -1;
	}
	refusals_log(r);
	/* awards come in the jobs' order */
	for (int i = 0; i < r->n_jobs; i++) {
		r->winner_cluster[i] = r->awards[i].cluster;
		r->decision[i] = decision_text(r, i, &r->awards[i], &w, &ac, pj,
					       plans, now);
		if (!r->decision[i] && r->winner_cluster[i] >= 0) {
			ad_error("JobId=%u: out of memory: held this round",
				 r->jobs[i].job_id);
			r->winner_cluster[i] = -1;
		}
		if (!pol_fed_hold_bids(r->jobs[i].act)) {
			/* its winner is in its mark; the pins child re-reads
			 * its decision from the job */
			free(r->decision[i]);
			r->decision[i] = NULL;
			r->winner_cluster[i] = -1;
		} else if (r->awards[i].cluster < 0) {
			no_plan++;
		}
	}
	catalog_free(&ac);
	free(pj);
	return no_plan;
}

int ad_round(const agora_conf_t *conf, const char *state_path, ad_stats_t *st,
	     volatile int *stop)
{
	pol_fed_plan_t *plans;
	int *pin_rc;
	int started, collected, no_plan, n_up, in_flight;
	time_t now = time(NULL);
	double t0 = ad_now_s(), t_survey, t_plans, t_auction;
	ad_round_t *r = &round_ctx;

	round_reset(r);
	r->pin_start_timeout_s = conf->fed_pin_start_timeout_s;
	r->survey_max_age_s = conf->fed_survey_max_age_s;
	/* the pins steps of earlier rounds that have ended */
	collected = pins_collect(r, st, false, stop, NULL);
	if (refresh_clusters(r))
		return -1;
	st->rounds++;

	/* a pin's copy that never reached its winner counts no longer */
	(void) pol_fed_inflight_expire(&r->inflight, now,
				       POL_FED_INFLIGHT_MAX_S);
	n_up = round_survey(r, st, stop);
	t_survey = ad_now_s();
	if (!n_up) {
		ad_error("no cluster of federation %s answers", r->fed_name);
		return -1;
	}
	/* copies that arrived after their job was cancelled at its origin */
	(void) orphans_reap(r, stop);
	/* the jobs of a pins step still in flight are its own */
	in_flight = pins_exclude(r);
	build_usage_texts(r);

	r->model = model_refresh(conf);
	plans = round_plans(r, conf, now, stop);
	t_plans = ad_now_s();
	if (!plans) {
		ad_error("out of memory: no auction this round");
		return -1;
	}
	if (!r->n_jobs) {
		write_state(r, state_path, now, ad_now_s() - t0, NULL);
		free(plans);
		/* nothing of its own: the pins in flight end first (a next
		 * round at once would only survey the same jobs again) */
		return collected + pins_collect(r, st, true, stop, NULL);
	}

	no_plan = round_auction(r, conf, plans, now);
	free(plans);
	if (no_plan < 0)
		return -1;
	t_auction = ad_now_s();

	if (!(pin_rc = malloc(r->n_jobs * sizeof(int)))) {
		ad_error("out of memory: no pins this round");
		return -1;
	}
	for (int i = 0; i < r->n_jobs; i++)
		pin_rc[i] = -1;
	/* step 4 runs on while the next rounds go on (agorad_pins.c) */
	started = pins_start(r, st, pin_rc, stop);
	/* ended within the round (AD_PINS_OVERLAP 0): pin_rc[i] 0 for each
	 * job pinned, for the state file */
	if (!started || !AD_PINS_OVERLAP)
		collected += pins_collect(r, st, true, stop,
					  AD_PINS_OVERLAP ? NULL : pin_rc);
	st->no_plan += no_plan;
	write_state(r, state_path, now, ad_now_s() - t0, pin_rc);
	ad_verbose(
		"round %llu: %d held jobs, %d to pin (%d more in pins in flight), %d without a plan; %d/%d clusters up; survey %.3f s, plans %.3f s, auction %.3f s, pins started in %.3f s",
		(unsigned long long) st->rounds, r->n_jobs, started, in_flight,
		no_plan, n_up, r->n_clusters, t_survey - t0, t_plans - t_survey,
		t_auction - t_plans, ad_now_s() - t_auction);
	free(pin_rc);
	return started + collected;
}

void ad_round_drain(ad_stats_t *st, volatile int *stop)
{
	pins_drain(&round_ctx, st, stop);
}

void ad_round_fini(void)
{
	ad_round_t *r = &round_ctx;
	ad_stats_t st = { 0 };
	static volatile int stopping = 1;

	/* pins still in flight: the children's grace, then SIGTERM */
	pins_drain(r, &st, &stopping);
	pol_fed_idset_free(&r->pinning);
	round_reset(r);
	willrun_fini(r);
	pol_fed_inflight_free(&r->inflight);
	pol_fed_idset_free(&r->refused_logged);
	for (int c = 0; c < AD_MAX_CLUSTERS; c++) {
		free(r->usage_text[c]);
		r->usage_text[c] = NULL;
	}
	clusters_fini(r);
	model_fini();
}
