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
 */
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

#define LN_DEMAND_RING 4096

static double last_round = -1e18;
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

double ad_loan_due_in(const agora_conf_t *conf, double now)
{
	double d;

	if (!conf->loaning)
		return 1e9;
	d = last_round + conf->loan_interval_s - now;
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

static int want_nodes(const agora_conf_t *conf, double d, int n_up)
{
	double w = ceil(d - 1e-9) + conf->loan_headroom;

	return w > n_up ? n_up : (int) w;
}

static void classify(ln_snap_t *s)
{
	for (int i = 0; i < s->n_nodes; i++) {
		ln_node_t *n = &s->nodes[i];

		n->state = n->in_train                      ? LN_LENT
			   : n->n_borrowers || n->commented ? LN_RETURNING
							    : LN_HOME;
	}
}

/* An elastic job's node list without its nodes on victim nodes, if it can
 * shrink to it (its minimum known and kept, its batch host kept);
 * malloc'ed, or NULL. */
static char *shrunk_list(const ln_snap_t *s, const ln_job_t *lj,
			 const bool *victim_node)
{
	agora_hostlist_t all, keep;
	char *h, *out = NULL;
	int dropped = 0;

	if (!lj->elastic || lj->min_nodes <= 0 || !lj->all ||
	    (lj->batch >= 0 && victim_node[lj->batch]))
		return NULL;
	for (int k = 0; k < lj->n_nodes; k++)
		dropped += victim_node[lj->nodes[k]];
	if (lj->total_nodes - dropped < lj->min_nodes)
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

/* Every training job on a victim node gives it up: an elastic job that
 * can shrink off those nodes shrinks (nothing is lost), any other is
 * requeued (once per job). */
static void free_victim_nodes(const ln_snap_t *s, const bool *victim_node)
{
	for (int j = 0; j < s->n_jobs; j++) {
		const ln_job_t *lj = &s->jobs[j];
		char *keep;
		int k = 0;

		while (k < lj->n_nodes && !victim_node[lj->nodes[k]])
			k++;
		if (k == lj->n_nodes)
			continue;
		if ((keep = shrunk_list(s, lj, victim_node))) {
			if (!ln_shrink(lj->id, keep))
				ad_info("loan: job %u shrunk to %s (elastic; node %s goes back to inference)",
					lj->id, keep,
					s->nodes[lj->nodes[k]].name);
			free(keep);
			continue;
		}
		if (!lj->requeue)
			continue;
		if (!ln_requeue(lj->id))
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
	for (int h = 0; h < n_hist; h++) {
		ln_reclaim_t *r = &hist[h];
		bool done = true;

		if (r->done_s >= 0 || r->done_s == LN_CANCELLED)
			continue;
		for (int i = 0; i < s->n_nodes && done; i++) {
			if (!in_list(r->nodes, s->nodes[i].name))
				continue;
			if (s->nodes[i].state == LN_LENT) {
				/* demand fell first: lent again, not taken */
				ad_info("loan: reclaim of %s cancelled: %s lent again",
					r->nodes, s->nodes[i].name);
				r->done_s = LN_CANCELLED;
				break;
			}
			if (s->nodes[i].state != LN_HOME)
				done = false;
		}
		if (r->done_s == LN_CANCELLED)
			continue;
		if (!done) {
			if (now - r->time > conf->reclaim_deadline_s &&
			    r->deadline_s > 0) {
				ad_error(
					"loan: reclaim of %s at %ld not done within ReclaimDeadline=%d s",
					r->nodes, (long) r->time,
					r->deadline_s);
				r->deadline_s = -r->deadline_s; /* once */
			}
			continue;
		}
		r->done_s = (double) (now - r->time);
		if (r->deadline_s < 0)
			r->deadline_s = -r->deadline_s;
		ad_info("loan: reclaim of %s done in %.0f s (ReclaimDeadline %d s)",
			r->nodes, r->done_s, r->deadline_s);
	}
}

/* The core's input for the lent nodes: idx[k] = snapshot node of loaned
 * node k; jobs with their nodes renumbered.  Returns the count of jobs. */
static int reclaim_input(const agora_conf_t *conf, const ln_snap_t *s,
			 const int *idx, int n_lent, int64_t now,
			 pol_loan_job_t *pj, int *pnodes, int *job_of)
{
	int n = 0, used = 0, pos[s->n_nodes + 1];

	for (int i = 0; i < s->n_nodes; i++)
		pos[i] = -1;
	for (int k = 0; k < n_lent; k++)
		pos[idx[k]] = k;
	for (int j = 0; j < s->n_jobs; j++) {
		const ln_job_t *lj = &s->jobs[j];
		pol_loan_job_t *p = &pj[n];

		memset(p, 0, sizeof(*p));
		p->nodes = pnodes + used;
		/* the batch host last: the core shrinks off a job's nodes in
		 * order, and Slurm cannot take a job's batch host away */
		for (int k = 0; k < lj->n_nodes; k++)
			if (pos[lj->nodes[k]] >= 0 && lj->nodes[k] != lj->batch)
				pnodes[used + p->n_nodes++] = pos[lj->nodes[k]];
		p->shrinkable = lj->elastic && lj->min_nodes > 0
					? lj->total_nodes - lj->min_nodes
					: 0;
		if (p->shrinkable > p->n_nodes)
			p->shrinkable = p->n_nodes;
		if (lj->batch >= 0 && pos[lj->batch] >= 0)
			pnodes[used + p->n_nodes++] = pos[lj->batch];
		if (!p->n_nodes)
			continue;
		used += p->n_nodes;
		p->id = lj->id;
		p->start = lj->start;
		p->requeue = lj->requeue;
		p->cost = pol_loan_preempt_cost(lj->gpus, now - lj->start,
						conf->loan_ckpt_s,
						conf->loan_restart_s);
		job_of[n++] = j;
	}
	return n;
}

/* The cost of another order on the same input (for the log). */
static double alt_cost(pol_loan_reclaim_in_t in, pol_loan_order_t order,
		       int n_lent, int n_jobs)
{
	unsigned char back[n_lent + 1];
	int action[n_jobs + 1], shrink[n_jobs + 1];
	pol_loan_reclaim_out_t out = { .node_back = back,
				       .action = action,
				       .shrink_by = shrink };

	in.order = order;
	/* Slurm's preemption does not know that a job could shrink */
	in.shrink_first = order != POL_LOAN_SLURM;
	return pol_loan_reclaim(&in, &out) ? -1 : out.cost;
}

/* Log the decision: per candidate node its cost, chosen or not. */
static void log_decision(const ln_snap_t *s, const int *idx, int n_lent,
			 const pol_loan_job_t *pj, int n_pj,
			 const pol_loan_reclaim_out_t *out,
			 const ln_reclaim_t *r)
{
	char line[2048];
	int len = 0;

	for (int k = 0; k < n_lent && len < (int) sizeof(line) - 64; k++) {
		double c = 0;
		bool fixed = false;

		for (int j = 0; j < n_pj; j++)
			for (int m = 0; m < pj[j].n_nodes; m++)
				if (pj[j].nodes[m] == k) {
					c += pj[j].cost;
					fixed |= !pj[j].requeue;
				}
		len += snprintf(line + len, sizeof(line) - len, " %s%s=%s%.3f",
				out->node_back[k] ? "*" : "",
				s->nodes[idx[k]].name,
				fixed ? "no-requeue:" : "", c);
	}
	ad_info("loan: reclaim %d node(s): %s; victims %s; cost %.3f GPU-h (%s), Slurm's order %.3f, most-recent %.3f%s",
		r->need, r->nodes[0] ? r->nodes : "(none)",
		r->victims[0] ? r->victims : "(none)", r->cost,
		out->exact ? "least-cost, exact" : "least-cost, greedy",
		r->cost_slurm, r->cost_recent,
		r->short_by ? " (short of nodes)" : "");
	ad_info("loan: candidates (GPU-h lost if cleared, * taken):%s", line);
}

static void reclaim_record(const ln_snap_t *s, const int *idx, int n_lent,
			   const pol_loan_job_t *pj, int n_pj,
			   const pol_loan_reclaim_out_t *out, ln_reclaim_t *r)
{
	int ln = 0, lv = 0;

	for (int k = 0; k < n_lent; k++)
		if (out->node_back[k] && ln < (int) sizeof(r->nodes) - LN_NAME)
			ln += snprintf(r->nodes + ln, sizeof(r->nodes) - ln,
				       "%s%s", ln ? "," : "",
				       s->nodes[idx[k]].name);
	for (int j = 0; j < n_pj; j++)
		if (out->action[j] == POL_LOAN_PREEMPT &&
		    lv < (int) sizeof(r->victims) - 40)
			lv += snprintf(r->victims + lv, sizeof(r->victims) - lv,
				       "%s%lld:%.3f", lv ? "," : "",
				       (long long) pj[j].id, pj[j].cost);
		else if (out->action[j] == POL_LOAN_SHRINK &&
			 lv < (int) sizeof(r->victims) - 40)
			lv += snprintf(r->victims + lv, sizeof(r->victims) - lv,
				       "%s%lld:shrink-%d", lv ? "," : "",
				       (long long) pj[j].id, out->shrink_by[j]);
	r->cost = out->cost;
	r->short_by = out->short_by;
}

/* Room for every job's inference nodes (at least 1). */
static int job_slots(const ln_snap_t *s)
{
	int n = 1;

	for (int j = 0; j < s->n_jobs; j++)
		n += s->jobs[j].n_nodes;
	return n;
}

/* Take `need` lent nodes back by the core's least-cost choice: they leave
 * the training partitions (lend[i] = false) and their jobs are requeued
 * by the caller after the partition update. */
static int reclaim_lent(const agora_conf_t *conf, ln_snap_t *s, int need,
			int64_t now, bool *lend, bool *victim_node)
{
	int idx[s->n_nodes + 1], n_lent = 0, pnodes[job_slots(s)];
	pol_loan_job_t pj[s->n_jobs + 1];
	int job_of[s->n_jobs + 1], action[s->n_jobs + 1], shrink[s->n_jobs + 1],
		n_pj;
	unsigned char back[s->n_nodes + 1];
	pol_loan_reclaim_out_t out = { .node_back = back,
				       .action = action,
				       .shrink_by = shrink };
	pol_loan_reclaim_in_t in = { 0 };
	ln_reclaim_t r = { .time = now,
			   .need = need,
			   .done_s = -1,
			   .deadline_s = conf->reclaim_deadline_s };

	for (int i = 0; i < s->n_nodes; i++)
		if (s->nodes[i].state == LN_LENT)
			idx[n_lent++] = i;
	if (!n_lent)
		return 0;
	n_pj = reclaim_input(conf, s, idx, n_lent, now, pj, pnodes, job_of);
	in = (pol_loan_reclaim_in_t){ .n_loaned = n_lent,
				      .need = need < n_lent ? need : n_lent,
				      .jobs = pj,
				      .n_jobs = n_pj,
				      .order = POL_LOAN_LEAST_COST,
				      .mode = POL_LOAN_AUTO,
				      .shrink_first = true };
	if (pol_loan_reclaim(&in, &out)) {
		ad_error("loan: the reclaim choice failed (need %d of %d)",
			 need, n_lent);
		return -1;
	}
	r.cost_slurm = alt_cost(in, POL_LOAN_SLURM, n_lent, n_pj);
	r.cost_recent = alt_cost(in, POL_LOAN_RECENT, n_lent, n_pj);
	r.short_by = need - out.returned;
	reclaim_record(s, idx, n_lent, pj, n_pj, &out, &r);
	r.short_by = need - out.returned;
	log_decision(s, idx, n_lent, pj, n_pj, &out, &r);
	for (int k = 0; k < n_lent; k++)
		if (back[k]) {
			lend[idx[k]] = false;
			victim_node[idx[k]] = true;
			s->nodes[idx[k]].state = LN_RETURNING;
		}
	if (out.returned)
		hist_add(&r);
	return out.returned;
}

/* Lend up to k home nodes: idle ones (no inference job), whose Comment
 * is empty or Agora's, from the end.  Their marks are written by
 * renew_marks(). */
static int lend_nodes(ln_snap_t *s, int k, int64_t now, bool *lend)
{
	int n = 0;

	for (int i = s->n_nodes - 1; i >= 0 && n < k; i--) {
		ln_node_t *nd = &s->nodes[i];

		if (nd->state != LN_HOME || !nd->up || nd->other_jobs ||
		    !nd->free_comment)
			continue;
		nd->since = now;
		nd->state = LN_LENT;
		lend[i] = true;
		n++;
	}
	if (n)
		ad_info("loan: lent %d node(s) to training", n);
	return n;
}

/* Every node that stays or becomes lent carries a fresh v1 mark before
 * the partition update (the mark first: a crash before the update leaves
 * a returning node without borrowers, cleared next round); the heartbeat
 * is renewed once a quarter of LoanLeaseTimeout has passed, so slurmctld
 * returns the loan by itself if agorad stops.  A node whose mark cannot
 * be written is not lent. */
static void renew_marks(const agora_conf_t *conf, ln_snap_t *s, bool *lend,
			int64_t now)
{
	int renewed = 0;

	for (int i = 0; i < s->n_nodes; i++) {
		ln_node_t *nd = &s->nodes[i];

		if (!lend[i] ||
		    !pol_loan_lease_renew_due(&nd->mark, nd->commented, now,
					      conf->loan_lease_timeout_s))
			continue;
		if (ln_set_lent_mark(nd, now)) {
			if (!nd->in_train) {
				lend[i] = false;
				nd->state = nd->n_borrowers ? LN_RETURNING
							    : LN_HOME;
			}
			continue;
		}
		renewed++;
	}
	if (renewed)
		ad_debug("loan: %d loan mark(s) written or renewed", renewed);
}

/* Returning nodes: finish (requeue) as many as inference needs, lend the
 * others again; ones without borrowers go home.  Returns the home count
 * after it. */
static int settle_returning(ln_snap_t *s, int home, int want, bool *lend,
			    bool *victim_node)
{
	for (int i = 0; i < s->n_nodes; i++) {
		ln_node_t *n = &s->nodes[i];

		if (n->state != LN_RETURNING)
			continue;
		if (!n->n_borrowers) {
			if (!ln_set_comment(n->name, NULL)) {
				n->commented = false;
				n->state = LN_HOME;
				n->since = 0;
				home += n->up;
			}
		} else if (n->up && !n->pinned && home < want) {
			victim_node[i] = true;
			home++; /* home once its jobs are requeued */
		} else if (!n->pinned && home >= want) {
			lend[i] = true;
			n->state = LN_LENT;
			ad_info("loan: %s lent again (its borrowers keep running)",
				n->name);
		}
	}
	return home;
}

/* One round on a snapshot: returns the nodes inference wants; *busy: a
 * reclaim is under way (nodes still to come home). */
static int loan_round(const agora_conf_t *conf, ln_snap_t *s, double d,
		      int64_t now, bool *busy)
{
	bool lend[s->n_nodes + 1], victim_node[s->n_nodes + 1], changed = false;
	int n_up = 0, home = 0, want, hold;

	classify(s);
	for (int i = 0; i < s->n_nodes; i++) {
		lend[i] = s->nodes[i].in_train;
		victim_node[i] = false;
		n_up += s->nodes[i].up;
		home += s->nodes[i].up && s->nodes[i].state == LN_HOME;
	}
	/* unknown demand: every node goes back to inference */
	want = d < 0 ? n_up : want_nodes(conf, d, n_up);
	hold = d < 0 ? n_up : want_nodes(conf, demand_peak(conf, now, d), n_up);
	home = settle_returning(s, home, want, lend, victim_node);
	/* before this round's own changes: what Slurm shows now */
	hist_progress(conf, s, now);
	*busy = home < want;
	for (int i = 0; i < s->n_nodes; i++)
		*busy |= s->nodes[i].state == LN_RETURNING;
	if (home < want)
		home += reclaim_lent(conf, s, want - home, now, lend,
				     victim_node);
	else if (home > hold)
		lend_nodes(s, home - hold, now, lend);
	renew_marks(conf, s, lend, now);
	for (int i = 0; i < s->n_nodes; i++)
		changed |= lend[i] != s->nodes[i].in_train;
	/* out of the training partitions first: no new job lands there */
	if (changed && ln_set_train_nodes(conf, s, lend))
		return want;
	free_victim_nodes(s, victim_node);
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

int ad_loan_tick(const agora_conf_t *conf, const char *state_path, double now)
{
	char *path;
	ln_snap_t s;
	double d;
	int want;
	bool busy = false;

	if (!conf->loaning || now < last_round + conf->loan_interval_s)
		return 0;
	last_round = now;
	path = ad_loan_path(state_path);
	if (!hist_loaded) {
		n_hist = ln_read_history(path, hist, LN_MAX_HISTORY);
		hist_loaded = true;
	}
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
	ln_write_state(path, &s, (int64_t) now, d, want, hist, n_hist);
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
	n_hist = 0;
	hist_loaded = false;
	lease_checked = false;
}
