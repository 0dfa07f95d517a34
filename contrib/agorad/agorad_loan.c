/*
 * agorad_loan.c - the loan round (doc/loaning.md): every LoanInterval,
 * agorad keeps ceil(demand) + LoanHeadroomNodes inference nodes serving
 * inference, lends the rest to the training partitions, and when demand
 * rises takes nodes back by the core's least-cost reclaim
 * (pol_loan_reclaim): the victims are requeued with Slurm's own requeue
 * and complete later.
 *
 * Each inference node is, as Slurm shows it:
 *   lent       in a training partition's node list;
 *   returning  not in one, but training jobs still run on it, or its
 *              Comment still names a loan (a crash between two steps, or
 *              a slurmctld restart, which resets partition node lists to
 *              slurm.conf but keeps node Comments);
 *   home       neither: it serves inference.
 * Lending sets the Comment and then adds the node to the training
 * partitions; reclaiming removes it from them and then requeues the
 * victims; the Comment is cleared once no training job runs there.  A
 * crash (agorad or slurmctld) between any two steps leaves a returning
 * node, which the next round either finishes taking back (requeue) when
 * inference needs it, or lends again.  agorad keeps no loan state of its
 * own: only the reclaim history, for agoractl loans.
 *
 * The Comment is the core's versioned mark with a heartbeat (pol_loan_lease.h)
 * that every round renews (renew_marks); slurmctld's site_factor/agora
 * returns a node whose heartbeat is older than LoanLeaseTimeout, so a loan
 * ends even when agorad never comes back.
 *
 * What to do in a round (which nodes to lend, which to reclaim and who
 * gives them up, whose mark to write or clear) is the core's decision,
 * pol_loan_round (pol_loan_round.h, unit tested on every crash order):
 * this file builds its snapshot from ln_snapshot, applies what it returns
 * in the safe order, logs it and keeps the reclaim history.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <slurm/slurm.h>
#include "agora_compat_pub.h"

#include "agorad.h"
#include "agorad_loan.h"
#include "agorad_relaunch.h"
#include "pol_loan.h"
#include "pol_loan_round.h"

#define LN_DEMAND_RING 4096

_Static_assert((int) LN_HOME == (int) POL_LOAN_NODE_HOME &&
		       (int) LN_LENT == (int) POL_LOAN_NODE_LENT &&
		       (int) LN_RETURNING == (int) POL_LOAN_NODE_RETURNING,
	       "ln_state_t follows pol_loan_node_state_t");

static double last_round = -1e18; /* CLOCK_MONOTONIC s */
static ln_reclaim_t hist[LN_MAX_HISTORY];
static int n_hist = 0;
static bool hist_loaded = false, demand_failed = false, lease_checked = false;
static double last_good = -1;
static int64_t last_good_t = 0;
static struct {
	int64_t t;
	double d;
} dring[LN_DEMAND_RING];
static int dring_n = 0, dring_head = 0;
/* what a round carries to the next (pol_loan_round_in_t): the checkpoint
 * wait under way, and the nodes a reclaim ahead keeps home; lost with
 * agorad, which then starts a new wait (the headroom still covers it) */
static struct {
	int64_t wait_since, ahead_until;
	int ahead_keep;
	ln_round_view_t view; /* the last round's, for the state file */
} carry;

char *ad_loan_path(const char *state_path)
{
	size_t n;
	char *p;

	if (!state_path)
		return NULL;
	n = strlen(state_path);
	if (!(p = malloc(n + sizeof(".loans.json"))))
		return NULL;
	if (n > 5 && !strcmp(state_path + n - 5, ".json"))
		snprintf(p, n + sizeof(".loans.json"), "%.*s.loans.json",
			 (int) (n - 5), state_path);
	else
		snprintf(p, n + sizeof(".loans.json"), "%s.loans", state_path);
	return p;
}

double ad_loan_due_in(const agora_conf_t *conf, double mono)
{
	double d;

	if (!conf->loaning)
		return 1e9;
	d = last_round + conf->loan_interval_s - mono;
	return d > 0 ? d : 0;
}

/* The peak demand over the last LoanLendHold, with d the newest sample. */
static double demand_peak(const agora_conf_t *conf, int64_t now, double d)
{
	double peak = d;

	dring[dring_head].t = now;
	dring[dring_head].d = d;
	dring_head = (dring_head + 1) % LN_DEMAND_RING;
	if (dring_n < LN_DEMAND_RING)
		dring_n++;
	for (int i = 0; i < dring_n; i++)
		if (now - dring[i].t <= conf->loan_lend_hold_s &&
		    dring[i].d > peak)
			peak = dring[i].d;
	return peak;
}

/* The demand LoanReclaimAhead from now by the trend of the last
 * POL_LOAN_TREND_FIT_S of readings (demand_peak added this round's); 0
 * when off. */
static double demand_ahead(const agora_conf_t *conf, int64_t now, double d)
{
	double t[dring_n + 1], v[dring_n + 1];
	int n = 0;

	if (conf->loan_ahead_s <= 0 || d < 0)
		return 0;
	for (int k = 0; k < dring_n; k++) {
		int i = (dring_head - dring_n + k + LN_DEMAND_RING) %
			LN_DEMAND_RING;

		if (now - dring[i].t > POL_LOAN_TREND_FIT_S)
			continue;
		t[n] = (double) dring[i].t;
		v[n++] = dring[i].d;
	}
	return pol_loan_demand_ahead_at(t, v, n, conf->loan_ahead_s,
					conf->loan_ahead_z);
}

/* An elastic job's node list without its nodes on victim nodes (the core
 * decided it may shrink to it); malloc'ed, or NULL. */
static char *shrunk_list(const ln_snap_t *s, const ln_job_t *lj,
			 const bool *victim_node)
{
	agora_hostlist_t all, keep;
	char *h, *out = NULL;

	if (!lj->all)
		return NULL;
	all = slurm_hostlist_create(lj->all);
	keep = slurm_hostlist_create(NULL);
	while ((h = slurm_hostlist_shift(all))) {
		int k = 0;

		while (k < s->n_nodes && strcmp(s->nodes[k].name, h))
			k++;
		if (k == s->n_nodes || !victim_node[k])
			slurm_hostlist_push_host(keep, h);
		free(h);
	}
	if (slurm_hostlist_count(keep) > 0)
		out = slurm_hostlist_ranged_string_malloc(keep);
	slurm_hostlist_destroy(all);
	slurm_hostlist_destroy(keep);
	return out;
}

/* Every training job on a victim node gives it up as the core said: an
 * elastic job that can shrink off those nodes shrinks (nothing is lost),
 * any other, and one whose shrink Slurm refuses, is requeued (once per
 * run), after its --signal and grace (ln_requeue_step); one at its
 * requeue limit keeps running. */
static void free_victim_nodes(const agora_conf_t *conf, const ln_snap_t *s,
			      const pol_loan_round_out_t *out,
			      const bool *victim_node, int64_t now)
{
	for (int j = 0; j < s->n_jobs; j++) {
		const ln_job_t *lj = &s->jobs[j];
		char *keep, why[LN_NAME + 32];
		int k = 0;

		while (k < lj->n_nodes && !victim_node[lj->nodes[k]])
			k++;
		if (k == lj->n_nodes)
			continue;
		if (out->jobs[j].shrink &&
		    (keep = shrunk_list(s, lj, victim_node))) {
			int rc = ln_shrink(lj->id, keep);

			if (!rc)
				ad_info("loan: job %u shrunk to %s (elastic; node %s goes back to inference)",
					lj->id, keep,
					s->nodes[lj->nodes[k]].name);
			free(keep);
			if (!rc)
				continue;
			/* Slurm refused the shrink (disable_job_shrink, a
			 * resize it will not do): requeued as any other, or
			 * the node would never come back */
		}
		snprintf(why, sizeof(why), "the reclaim of %s",
			 s->nodes[lj->nodes[k]].name);
		if (!out->jobs[j].requeue)
			continue;
		if (ln_requeue_step(conf, &lj->rq, now, why) != POL_REQUEUE_NOW)
			continue;
		if (!ln_requeue_run(&lj->rq))
			ad_info("loan: job %u requeued (node %s goes back to inference)",
				lj->id, s->nodes[lj->nodes[k]].name);
	}
}

static void hist_add(const ln_reclaim_t *r)
{
	if (n_hist == LN_MAX_HISTORY) {
		memmove(hist, hist + 1, (n_hist - 1) * sizeof(*hist));
		n_hist--;
	}
	hist[n_hist++] = *r;
}

/* Whether name is one of the comma-separated names of list. */
static bool in_list(const char *list, const char *name)
{
	size_t l = strlen(name);

	for (const char *p = list; p && *p;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t) (e - p) : strlen(p);

		if (n == l && !strncmp(p, name, l))
			return true;
		p = e ? e + 1 : NULL;
	}
	return false;
}

/* Reclaims in progress: done when every node of theirs is home. */
static void hist_progress(const agora_conf_t *conf, const ln_snap_t *s,
			  int64_t now)
{
	pol_loan_node_state_t st[s->n_nodes + 1];
	int at[s->n_nodes + 1];

	for (int h = 0; h < n_hist; h++) {
		ln_reclaim_t *r = &hist[h];
		int n = 0, lent = 0;

		if (r->done_s >= 0 || r->done_s == LN_CANCELLED)
			continue;
		for (int i = 0; i < s->n_nodes; i++)
			if (in_list(r->nodes, s->nodes[i].name)) {
				at[n] = i;
				st[n++] = (pol_loan_node_state_t) s->nodes[i]
						  .state;
			}
		switch (pol_loan_reclaim_progress(st, n, r->time, now,
						  conf->reclaim_deadline_s,
						  r->deadline_s > 0, &lent)) {
		case POL_LOAN_RECLAIM_CANCELLED:
			/* demand fell first: lent again, not taken */
			ad_info("loan: reclaim of %s cancelled: %s lent again",
				r->nodes, s->nodes[at[lent]].name);
			r->done_s = LN_CANCELLED;
			break;
		case POL_LOAN_RECLAIM_LATE:
			ad_error(
				"loan: reclaim of %s at %ld not done within ReclaimDeadline=%d s",
				r->nodes, (long) r->time, r->deadline_s);
			r->deadline_s = -r->deadline_s; /* once */
			break;
		case POL_LOAN_RECLAIM_WAITING:
			break;
		case POL_LOAN_RECLAIM_DONE:
			r->done_s = (double) (now - r->time);
			if (r->deadline_s < 0)
				r->deadline_s = -r->deadline_s;
			ad_info("loan: reclaim of %s done in %.0f s (ReclaimDeadline %d s)",
				r->nodes, r->done_s, r->deadline_s);
			break;
		}
	}
}

/* The core's snapshot of the loan state (pol_loan_round.h). */
static void round_input(const agora_conf_t *conf, const ln_snap_t *s, double d,
			double peak, int64_t now, pol_loan_round_in_t *in,
			pol_loan_round_node_t *pn, pol_loan_round_job_t *pj)
{
	for (int i = 0; i < s->n_nodes; i++) {
		const ln_node_t *n = &s->nodes[i];

		pn[i] = (pol_loan_round_node_t){
			.up = n->up,
			.registering = n->registering,
			.in_train = n->in_train,
			.commented = n->commented,
			.free_comment = n->free_comment,
			.mark = n->mark,
			.other_jobs = n->other_jobs,
			.pinned = n->pinned,
			.since = n->since,
			.n_borrowers = n->n_borrowers,
		};
	}
	for (int j = 0; j < s->n_jobs; j++) {
		const ln_job_t *lj = &s->jobs[j];

		pj[j] = (pol_loan_round_job_t){
			.id = lj->id,
			.gpus = lj->gpus,
			.start = lj->start,
			.requeue = lj->requeue,
			.n_nodes = lj->n_nodes,
			.nodes = lj->nodes,
			.elastic = lj->elastic,
			.min_nodes = lj->min_nodes,
			.total_nodes = lj->total_nodes,
			.batch = lj->batch,
		};
	}
	*in = (pol_loan_round_in_t){
		.nodes = pn,
		.n_nodes = s->n_nodes,
		.jobs = pj,
		.n_jobs = s->n_jobs,
		.demand = d,
		.demand_peak = peak,
		.headroom = conf->loan_headroom,
		.now = now,
		.lease_timeout_s = conf->loan_lease_timeout_s,
		.ckpt_s = conf->loan_ckpt_s,
		.restart_s = conf->loan_restart_s,
		/* the simulator's rule (issue 18): the fewest victims,
		 * the least cost among those */
		.fewest_first = true,
		.ckpt_wait_s = conf->loan_ckpt_wait_s,
		.step_s = conf->loan_interval_s,
		.wait_since = carry.wait_since,
		.demand_ahead = demand_ahead(conf, now, d),
		.ahead_keep = carry.ahead_keep,
		.ahead_until = carry.ahead_until,
		.lend_hold_s = conf->loan_lend_hold_s,
	};
}

/* A reclaim that waits for a checkpoint, or one made ahead: said when it
 * starts and, at debug level, every round after. */
static void wait_log(const agora_conf_t *conf, const pol_loan_round_in_t *in,
		     const pol_loan_round_out_t *out)
{
	if (out->wait_s > 0 && out->ahead)
		ad_log(carry.view.wait_s > 0 && carry.view.ahead ? AD_LOG_DEBUG
								 : AD_LOG_INFO,
		       "loan: the demand rises (%.2f nodes now, %.2f projected %d s ahead): %d lent node(s) to take back; the reclaim waits %ld s for a checkpoint",
		       in->demand, in->demand_ahead, conf->loan_ahead_s,
		       out->need, (long) out->wait_s);
	else if (out->wait_s > 0)
		ad_log(in->wait_since ? AD_LOG_DEBUG : AD_LOG_INFO,
		       "loan: reclaim of %d node(s) waits %ld s for a checkpoint (a home node to spare; at most %ld s more, LoanCheckpointWait)",
		       out->need, (long) out->wait_s, (long) out->wait_max_s);
}

/* Log the reclaim and keep it in the history: per candidate node its
 * cost, chosen or not; the victims with their cost. */
static void reclaim_log(const agora_conf_t *conf, const ln_snap_t *s,
			const pol_loan_round_out_t *out, int64_t now)
{
	char line[2048];
	int len = 0, ln = 0, lv = 0;
	ln_reclaim_t r = { .time = now,
			   .need = out->need,
			   .done_s = -1,
			   .deadline_s = conf->reclaim_deadline_s,
			   .cost = out->choice.cost,
			   .cost_slurm = out->cost_slurm,
			   .cost_recent = out->cost_recent,
			   .short_by = out->need - out->choice.returned };

	for (int i = 0; i < s->n_nodes; i++) {
		const pol_loan_round_node_out_t *o = &out->nodes[i];

		if (!o->candidate)
			continue;
		if (len < (int) sizeof(line) - 64)
			len += snprintf(line + len, sizeof(line) - len,
					" %s%s=%s%.3f", o->reclaimed ? "*" : "",
					s->nodes[i].name,
					o->fixed ? "no-requeue:" : "", o->cost);
		if (o->reclaimed && ln < (int) sizeof(r.nodes) - LN_NAME)
			ln += snprintf(r.nodes + ln, sizeof(r.nodes) - ln,
				       "%s%s", ln ? "," : "", s->nodes[i].name);
	}
	for (int j = 0; j < s->n_jobs; j++) {
		const pol_loan_round_job_out_t *jo = &out->jobs[j];

		if (lv >= (int) sizeof(r.victims) - 40)
			break;
		if (jo->reclaim_action == POL_LOAN_PREEMPT)
			lv += snprintf(r.victims + lv, sizeof(r.victims) - lv,
				       "%s%lld:%.3f", lv ? "," : "",
				       (long long) s->jobs[j].id, jo->cost);
		else if (jo->reclaim_action == POL_LOAN_SHRINK)
			lv += snprintf(r.victims + lv, sizeof(r.victims) - lv,
				       "%s%lld:shrink-%d", lv ? "," : "",
				       (long long) s->jobs[j].id,
				       jo->shrink_by);
	}
	ad_info("loan: reclaim %d node(s)%s: %s; victims %s; cost %.3f GPU-h (%s), Slurm's order %.3f, most-recent %.3f%s",
		r.need, out->ahead ? " ahead of a rising demand" : "",
		r.nodes[0] ? r.nodes : "(none)",
		r.victims[0] ? r.victims : "(none)", r.cost,
		out->choice.exact ? "least-cost, exact" : "least-cost, greedy",
		r.cost_slurm, r.cost_recent,
		r.short_by ? " (short of nodes)" : "");
	ad_info("loan: candidates (GPU-h lost if cleared, * taken):%s", line);
	if (out->choice.returned)
		hist_add(&r);
}

/* Apply the core's round: Comments cleared, the reclaim logged, marks
 * written (the mark first: a crash before the partition update leaves a
 * returning node without borrowers, cleared next round; a node whose mark
 * cannot be written is not lent), the training partitions' node lists,
 * then the victims give their nodes up.  A write that fails is seen again
 * by the next round. */
static void round_apply(const agora_conf_t *conf, ln_snap_t *s,
			const pol_loan_round_out_t *out, int64_t now)
{
	bool lend[s->n_nodes + 1], victim[s->n_nodes + 1], changed = false;
	int renewed = 0;

	for (int i = 0; i < s->n_nodes; i++) {
		ln_node_t *n = &s->nodes[i];
		const pol_loan_round_node_out_t *o = &out->nodes[i];

		n->state = (ln_state_t) o->settled;
		if (o->clear_mark && !ln_set_comment(n->name, NULL)) {
			n->commented = false;
			n->since = 0;
		} else if (o->clear_mark)
			n->state = LN_RETURNING;
		if (o->relent)
			ad_info("loan: %s lent again (its borrowers keep running)",
				n->name);
	}
	/* before this round's own changes: what Slurm shows now */
	hist_progress(conf, s, now);
	if (out->reclaim_failed)
		ad_error("loan: the reclaim choice failed (need %d of %d)",
			 out->need, out->n_candidates);
	else if (out->reclaim)
		reclaim_log(conf, s, out, now);
	if (out->lent)
		ad_info("loan: lent %d node(s) to training", out->lent);
	for (int i = 0; i < s->n_nodes; i++) {
		ln_node_t *n = &s->nodes[i];
		const pol_loan_round_node_out_t *o = &out->nodes[i];

		lend[i] = o->lend;
		victim[i] = o->victim;
		if (o->state != o->settled)
			n->state = (ln_state_t) o->state;
		if (o->newly_lent)
			n->since = o->since;
		if (!o->write_mark)
			continue;
		if (!ln_set_lent_mark(n, now)) {
			renewed++;
			continue;
		}
		if (!n->in_train) {
			lend[i] = false;
			n->state = n->n_borrowers ? LN_RETURNING : LN_HOME;
		}
	}
	if (renewed)
		ad_debug("loan: %d loan mark(s) written or renewed", renewed);
	for (int i = 0; i < s->n_nodes; i++)
		changed |= lend[i] != s->nodes[i].in_train;
	/* out of the training partitions first: no new job lands there */
	if (changed && ln_set_train_nodes(conf, s, lend))
		return;
	free_victim_nodes(conf, s, out, victim, now);
}

/* One round on a snapshot: returns the nodes inference wants; *busy: a
 * reclaim is under way (nodes still to come home). */
static int loan_round(const agora_conf_t *conf, ln_snap_t *s, double d,
		      int64_t now, bool *busy)
{
	int n = s->n_nodes + 1, nj = s->n_jobs + 1, want;
	pol_loan_round_node_t *pn = calloc((size_t) n, sizeof(*pn));
	pol_loan_round_job_t *pj = calloc((size_t) nj, sizeof(*pj));
	pol_loan_round_node_out_t *on = calloc((size_t) n, sizeof(*on));
	pol_loan_round_job_out_t *oj = calloc((size_t) nj, sizeof(*oj));
	pol_loan_round_out_t out = { .nodes = on, .jobs = oj };
	pol_loan_round_in_t in;
	double peak = d < 0 ? d : demand_peak(conf, now, d);

	*busy = false;
	want = 0;
	if (pn && pj && on && oj)
		round_input(conf, s, d, peak, now, &in, pn, pj);
	if (!pn || !pj || !on || !oj || pol_loan_round(&in, &out)) {
		ad_error("loan: the round's decision failed: %s",
			 strerror(errno));
		goto out;
	}
	want = out.want;
	*busy = out.busy;
	wait_log(conf, &in, &out);
	carry.wait_since = out.wait_since;
	carry.ahead_keep = out.ahead_keep;
	carry.ahead_until = out.ahead_until;
	carry.view = (ln_round_view_t){
		/* 0 for a wait ahead: each round chooses it anew */
		.wait_since = out.wait_since,
		.wait_s = out.wait_s,
		.need = out.need,
		.ahead = out.ahead,
		.demand_ahead = in.demand_ahead,
	};
	round_apply(conf, s, &out, now);
out:
	free(pn);
	free(pj);
	free(on);
	free(oj);
	return want;
}
/* The lease is enforced by site_factor/agora inside slurmctld: say once
 * when the controller does not run it. */
static void lease_check(const agora_conf_t *conf)
{
	const slurm_conf_t *c;

	if (lease_checked || !conf->loan_lease_timeout_s ||
	    !(c = ad_ctl_conf()))
		return;
	lease_checked = true;
	if (!c->site_factor_plugin ||
	    strcmp(c->site_factor_plugin, "site_factor/agora"))
		ad_error(
			"loan: PrioritySiteFactorPlugin is %s, not site_factor/agora: LoanLeaseTimeout is not enforced, and lent nodes stay lent while agorad is down",
			c->site_factor_plugin ? c->site_factor_plugin : "none");
}

/* Once per process: the reclaim history, the elastic ranges and the grows
 * an earlier agorad followed, from the loan state file at path. */
static void hist_load(const char *path)
{
	if (hist_loaded)
		return;
	n_hist = ln_read_history(path, hist, LN_MAX_HISTORY);
	hist_loaded = true;
}

void ad_loan_follow(const agora_conf_t *conf, const char *state_path,
		    double mono, double now)
{
	char *path;

	if (mono < last_round + conf->loan_interval_s)
		return;
	last_round = mono;
	/* the grows an earlier agorad (or this one, before Loaning=no)
	 * followed: its state file says which */
	path = ad_loan_path(state_path);
	hist_load(path);
	free(path);
	ad_grow_follow_only(conf, (int64_t) now);
}

int ad_loan_tick(const agora_conf_t *conf, const char *state_path, double mono,
		 double now)
{
	char *path;
	ln_snap_t s;
	double d;
	int want;
	bool busy = false;

	if (!conf->loaning || mono < last_round + conf->loan_interval_s)
		return 0;
	last_round = mono;
	path = ad_loan_path(state_path);
	hist_load(path);
	if (ln_snapshot(conf, &s)) {
		free(path);
		return -1;
	}
	lease_check(conf);
	d = ln_demand(conf, &s);
	/* one failed read (a file mid-rewrite, a slow command) keeps the
	 * last good value for LoanDemandGrace, then fails safe */
	if (d < 0 && last_good_t > 0 &&
	    (int64_t) now - last_good_t <= conf->loan_demand_grace_s)
		ad_info("loan: no demand this round: the last good value (%.2f nodes, %lld s old) stands for LoanDemandGrace=%d s",
			last_good, (long long) ((int64_t) now - last_good_t),
			conf->loan_demand_grace_s);
	d = pol_loan_demand_safe(d, &last_good, &last_good_t, (int64_t) now,
				 conf->loan_demand_grace_s);
	if (d < 0 && !demand_failed)
		ad_error(
			"loan: no demand: every inference node goes back to inference until the source answers");
	else if (d >= 0 && demand_failed)
		ad_info("loan: the demand source answers again (%.2f nodes)",
			d);
	demand_failed = d < 0;
	want = loan_round(conf, &s, d, (int64_t) now, &busy);
	/* after the partition update: grows see this round's loans */
	ad_grow_round(conf, (int64_t) now, busy || d < 0);
	ad_debug("loan: demand %.2f, want %d home", d, want);
	ln_write_state(path, &s, (int64_t) now, d, want, &carry.view, hist,
		       n_hist);
	ln_snap_free(&s);
	free(path);
	return 0;
}

int ad_loan_return(const agora_conf_t *conf)
{
	ln_snap_t s;
	bool *lend;
	int n = 0, rc;

	if (!conf->loaning || ln_snapshot(conf, &s))
		return -1;
	lend = calloc((size_t) s.n_nodes + 1, sizeof(*lend));
	if (!lend) {
		ln_snap_free(&s);
		return -1;
	}
	for (int i = 0; i < s.n_nodes; i++)
		n += s.nodes[i].in_train;
	rc = n ? ln_set_train_nodes(conf, &s, lend) : 0;
	if (n)
		ad_info("loan: stopping: %d lent node(s) out of the training partitions; their borrowers run on until the next agorad lends them again or LoanLeaseTimeout=%d s ends the loan",
			n, conf->loan_lease_timeout_s);
	free(lend);
	ln_snap_free(&s);
	return rc;
}

void ad_loan_fini(void)
{
	ad_grow_fini();
	ln_requeue_fini();
	n_hist = 0;
	hist_loaded = false;
	lease_checked = false;
	memset(&carry, 0, sizeof(carry));
}
