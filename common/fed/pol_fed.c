/*
 * pol_fed.c - the score of one cluster's plan for one job and the batched
 * auction that hands every pending federated job to its best plan.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pol_fed.h"

/* Unknown locality (< 0) counts as this level: same node, across sockets. */
#define FED_LOCALITY_UNKNOWN 3.0

void pol_fed_weights_default(pol_fed_weights_t *w)
{
	if (!w)
		return;
	/* A preempted job loses up to a checkpoint interval of work. */
	w->w_preempt = 300.0;
	/* One locality level is worth a minute of waiting: a job spread
	 * across leaf switches (5) pays five minutes against NVLink. */
	w->w_locality = 60.0;
	/* The wrong hardware is worth an hour of waiting. */
	w->w_hw = 3600.0;
	/* A team at its full credit (1) gains ten minutes over a team at
	 * zero; one in debt (-1) loses ten. */
	w->w_credit = 600.0;
	/* GPUs given away earlier in the round come back when some running
	 * job ends: assume a quarter of an hour. */
	w->taken_wait_s = 900.0;
	/* The queue term as estimated (pol_fed_queue_s); it is 0 for plans
	 * without a queue length or jobs without a hold time. */
	w->w_queue = 1.0;
}

double pol_fed_queue_s(double queue_per_gpu, int gpus, double hold_s,
		       double transfer_s)
{
	if (!(queue_per_gpu > 0.0) || gpus <= 0 || !(hold_s > 0.0) ||
	    !(transfer_s >= 0.0) || !isfinite(queue_per_gpu) ||
	    !isfinite(hold_s) || !isfinite(transfer_s))
		return 0.0;
	return queue_per_gpu * (double) gpus * (hold_s + transfer_s);
}

double pol_fed_queue_per_gpu(const pol_fed_cluster_load_t *l)
{
	if (!l || l->gpus_total <= 0 || l->jobs_queued <= 0)
		return 0.0;
	return (double) l->jobs_queued / (double) l->gpus_total;
}

int64_t pol_fed_limit_s(int64_t limit_s)
{
	return limit_s > 0 && limit_s < POL_FED_HORIZON_S ? limit_s
							  : POL_FED_HORIZON_S;
}

int64_t pol_fed_hold_of_limit(int64_t limit_s)
{
	int64_t hold;

	if (limit_s <= 0)
		return 0;
	hold = llround(POL_FED_HOLD_OF_LIMIT *
		       (double) pol_fed_limit_s(limit_s));
	return hold > 0 ? hold : 1;
}

int64_t pol_fed_hold_of(int64_t limit_s, double hist_s)
{
	double cap = (double) pol_fed_limit_s(limit_s);
	int64_t hold;

	if (!(hist_s > 0.0) || !isfinite(hist_s))
		return pol_fed_hold_of_limit(limit_s);
	hold = llround(hist_s < cap ? hist_s : cap);
	return hold > 0 ? hold : 1;
}

static bool fed_bit(uint64_t mask, int c)
{
	return c >= 0 && c < 64 && (mask >> c) & 1;
}

double pol_fed_transfer_s(const pol_fed_catalog_t *cat, int d, int c)
{
	const pol_fed_dataset_t *ds;
	double rate;

	if (!cat || d < 0 || d >= cat->n_datasets)
		return 0.0;
	if (c < 0 || c >= cat->n_sites)
		return INFINITY;
	ds = &cat->datasets[d];
	if (fed_bit(ds->where, c) || !(ds->bytes > 0.0))
		return 0.0;
	rate = cat->sites[c].link_bytes_per_s;
	if (!(rate > 0.0) || !isfinite(ds->bytes))
		return INFINITY;
	return ds->bytes / rate;
}

/* The terms of one plan's cost, so that the score and its account agree. */
typedef struct fed_terms {
	double wait, transfer, queue, preempt, locality, hw, credit;
	bool local; /* the data is on the cluster, or there is no data */
} fed_terms_t;

static double fed_sanitize(double x, double lo, double hi, double dflt)
{
	if (isnan(x))
		return dflt;
	return x < lo ? lo : x > hi ? hi : x;
}

static double fed_terms(const pol_fed_weights_t *w,
			const pol_fed_catalog_t *cat, const pol_fed_job_t *j,
			int c, const pol_fed_plan_t *p, int64_t start,
			int64_t now, fed_terms_t *t)
{
	double loc;

	t->wait = start > now ? (double) (start - now) : 0.0;
	t->transfer = 0.0;
	t->local = true;
	if (cat && j->dataset >= 0 && j->dataset < cat->n_datasets) {
		t->transfer = pol_fed_transfer_s(cat, j->dataset, c);
		t->local = t->transfer == 0.0;
	}
	t->queue = w->w_queue > 0.0
			   ? w->w_queue * pol_fed_queue_s(p->queue_per_gpu,
							  j->gpus,
							  (double) j->hold_s,
							  t->transfer)
			   : 0.0;
	t->preempt = w->w_preempt * (p->n_preempt > 0 ? p->n_preempt : 0);
	loc = p->locality < 0.0 || isnan(p->locality) ? FED_LOCALITY_UNKNOWN
						      : p->locality;
	t->locality = w->w_locality * fed_sanitize(loc, 0.0, 5.0, 0.0);
	t->hw = fed_bit(j->hw_match, c) ? 0.0 : w->w_hw;
	t->credit = w->w_credit * fed_sanitize(p->team_credit, -1.0, 1.0, 0.0);
	return t->wait + t->transfer + t->queue + t->preempt + t->locality +
	       t->hw - t->credit;
}

/* The start of plan p when the job's copy arrives after transit_s plus
 * ahead copies won earlier in the round: the later of the two.  On a
 * deep queue (POL_FED_START_DEEP: the start is the horizon, not a time)
 * the copy joins the queue when it arrives, so its wait there counts
 * from then: the horizon plus the transit.  Without it a deep remote
 * cluster tied with a deep origin whatever its copies' delay (22.05
 * forwards them one a second). */
static int64_t fed_arrival_start(const pol_fed_plan_t *p, int64_t start,
				 int ahead, int64_t now)
{
	double transit = fed_sanitize(p->transit_s, 0.0, 1e9, 0.0) +
			 ahead * fed_sanitize(p->transit_per_job, 0.0, 1e6,
					      0.0);
	int64_t at = now + (int64_t) ceil(transit);

	if (transit <= 0.0)
		return start;
	if (p->start_src == POL_FED_START_DEEP)
		return start + (int64_t) ceil(transit);
	return at > start ? at : start;
}

static bool fed_usable(const pol_fed_catalog_t *cat, const pol_fed_job_t *j,
		       int c, const pol_fed_plan_t *p)
{
	if (!j || !p || !p->valid || c < 0 || c >= 64)
		return false;
	if (cat && c >= cat->n_sites)
		return false;
	return fed_bit(j->eligible, c);
}

static void fed_cat(char *why, size_t len, const char *more)
{
	size_t l = strlen(why);

	if (l < len)
		snprintf(why + l, len - l, "%s", more);
}

static void fed_why(const pol_fed_catalog_t *cat, const pol_fed_job_t *j, int c,
		    const pol_fed_plan_t *p, const fed_terms_t *t, double cost,
		    bool taken, int64_t now, char *why, size_t len)
{
	char name[POL_FED_NAME_LEN + 8], data[96];

	if (!why || !len)
		return;
	if (cat && c < cat->n_sites)
		snprintf(name, sizeof(name), "%s", cat->sites[c].name);
	else
		snprintf(name, sizeof(name), "cluster%d", c);
	if (!cat || j->dataset < 0 || j->dataset >= cat->n_datasets)
		snprintf(data, sizeof(data), "no data");
	else if (t->local)
		snprintf(data, sizeof(data), "data local");
	else
		snprintf(data, sizeof(data), "data +%.0fs", t->transfer);
	if (t->queue > 0.0) {
		size_t l = strlen(data);

		snprintf(data + l, sizeof(data) - l, ", queue %.3f/GPU +%.0fs",
			 p->queue_per_gpu, t->queue);
	}
	snprintf(why, len,
		 "%s: start +%.0fs%s, %s, %d preempted, locality %.1f%s, "
		 "credit %.2f%s, cost %.0f",
		 name, t->wait, taken ? " (GPUs taken this round)" : "", data,
		 p->n_preempt > 0 ? p->n_preempt : 0,
		 p->locality >= 0.0 ? p->locality : FED_LOCALITY_UNKNOWN,
		 p->locality >= 0.0 ? "" : "?",
		 fed_sanitize(p->team_credit, -1.0, 1.0, 0.0),
		 fed_bit(j->hw_match, c) ? "" : ", hardware mismatch", cost);
	if (p->transit_s > 0.0 || p->transit_per_job > 0.0) {
		char tr[96];

		snprintf(tr, sizeof(tr),
			 ", copy arrives +%.0fs (%.2fs per copy)",
			 fed_sanitize(p->transit_s, 0.0, 1e9, 0.0),
			 fed_sanitize(p->transit_per_job, 0.0, 1e6, 0.0));
		fed_cat(why, len, tr);
	}
	if (p->start_src == POL_FED_START_WILL_RUN)
		fed_cat(why, len, ", start: will-run");
	else if (p->start_src == POL_FED_START_ESTIMATE ||
		 p->start_src == POL_FED_START_DEEP) {
		char est[160];

		snprintf(est, sizeof(est),
			 ", start: agorad's estimate (will-run said +%.0fs%s)",
			 p->will_run > now ? (double) (p->will_run - now) : 0.0,
			 p->start_src == POL_FED_START_DEEP
				 ? "; a deep queue, more GPUs queued than its "
				   "running jobs free: the horizon, a week"
				 : "");
		fed_cat(why, len, est);
	}
}

double pol_fed_cost(const pol_fed_weights_t *w, const pol_fed_catalog_t *cat,
		    const pol_fed_job_t *j, int c, const pol_fed_plan_t *p,
		    int64_t now, char *why, size_t why_len)
{
	pol_fed_weights_t dflt;
	fed_terms_t t;
	double cost;

	if (why && why_len)
		why[0] = '\0';
	if (!fed_usable(cat, j, c, p)) {
		if (why && why_len)
			snprintf(why, why_len, "cluster %d: %s", c,
				 !p || !p->valid ? "no plan" : "not eligible");
		return INFINITY;
	}
	if (!w) {
		pol_fed_weights_default(&dflt);
		w = &dflt;
	}
	cost = fed_terms(w, cat, j, c, p,
			 fed_arrival_start(p, p->start, 0, now), now, &t);
	fed_why(cat, j, c, p, &t, cost, false, now, why, why_len);
	return cost;
}

/* ---- the batched auction -------------------------------------------- */

typedef struct fed_order {
	double priority, credit;
	int64_t submit, id;
	int idx;
} fed_order_t;

static int fed_order_cmp(const void *a, const void *b)
{
	const fed_order_t *x = a, *y = b;

	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	if (x->credit != y->credit)
		return x->credit > y->credit ? -1 : 1;
	if (x->submit != y->submit)
		return x->submit < y->submit ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* Whether plan p starts "now" for the round's supply. */
static bool fed_now(const pol_fed_plan_t *p, int64_t now)
{
	return p->start <= now + POL_FED_NOW_SLACK_S;
}

/* The start of a plan on GPUs the round has given away: taken_wait_s
 * from now, and once more for each free GPU's worth (free_gpus) of GPUs
 * already given beyond them (over). */
static int64_t fed_taken_start(const pol_fed_weights_t *w, int free_gpus,
			       int over, int64_t now)
{
	double turns = 1.0 + (free_gpus > 0 ? (double) over / free_gpus : 0.0);

	return now + (int64_t) (w->taken_wait_s * turns);
}

/* What a round has given a cluster that does not start now: jobs that
 * queue there, and their work (GPUs x hold_s). */
typedef struct fed_queued {
	int jobs;
	double gpu_s;
} fed_queued_t;

/* Plan p as the round's earlier awards left it (q: what they queued on
 * its cluster): their jobs join the queue term's queue, and a plan that
 * starts later, not now, waits for their work spread over the cluster's
 * GPUs too.  Unchanged when the cluster's GPUs are unknown. */
static pol_fed_plan_t fed_plan_after(const pol_fed_plan_t *p,
				     const fed_queued_t *q, int64_t now)
{
	pol_fed_plan_t a = *p;

	if (p->gpus_total <= 0 || q->jobs <= 0)
		return a;
	a.queue_per_gpu += (double) q->jobs / p->gpus_total;
	if (!fed_now(p, now)) {
		double s = q->gpu_s / p->gpus_total;

		a.start += (int64_t) (s < 1e9 ? s : 1e9);
	}
	return a;
}

/* The team's credit used for the batch order: the best of its valid plans
 * (one federation-wide ledger makes them equal), 0 if none. */
static double fed_job_credit(const pol_fed_plan_t *row, int n)
{
	double best = -INFINITY;
	int c;

	for (c = 0; c < n; c++)
		if (row[c].valid && !isnan(row[c].team_credit) &&
		    row[c].team_credit > best)
			best = row[c].team_credit;
	return isfinite(best) ? fed_sanitize(best, -1.0, 1.0, 0.0) : 0.0;
}

int pol_fed_auction(const pol_fed_weights_t *w, const pol_fed_catalog_t *cat,
		    const pol_fed_job_t *jobs, int n_jobs,
		    const pol_fed_plan_t *plans, int n_clusters,
		    const int *free_gpus, int64_t now, pol_fed_award_t *out)
{
	pol_fed_weights_t dflt;
	fed_order_t *ord;
	int avail[64], sent[64] = { 0 }, over[64] = { 0 };
	fed_queued_t queued[64];
	int i, c;

	if (n_jobs < 0 || n_clusters < 0 || n_clusters > 64 ||
	    (n_jobs > 0 && (!jobs || !out || (n_clusters > 0 && !plans))) ||
	    (cat && n_clusters > cat->n_sites)) {
		errno = EINVAL;
		return -1;
	}
	if (!w) {
		pol_fed_weights_default(&dflt);
		w = &dflt;
	}
	if (n_jobs == 0)
		return 0;
	ord = calloc((size_t) n_jobs, sizeof(*ord));
	if (!ord) {
		errno = ENOMEM;
		return -1;
	}
	for (c = 0; c < n_clusters; c++)
		avail[c] = free_gpus ? (free_gpus[c] > 0 ? free_gpus[c] : 0)
				     : 0;
	memset(queued, 0, sizeof(queued));
	for (i = 0; i < n_jobs; i++) {
		ord[i].priority = isnan(jobs[i].priority) ? 0.0
							  : jobs[i].priority;
		ord[i].credit = fed_job_credit(
			plans + (size_t) i * (size_t) n_clusters, n_clusters);
		ord[i].submit = jobs[i].submit;
		ord[i].id = jobs[i].id;
		ord[i].idx = i;
	}
	qsort(ord, (size_t) n_jobs, sizeof(*ord), fed_order_cmp);

	for (i = 0; i < n_jobs; i++) {
		const pol_fed_job_t *j = &jobs[ord[i].idx];
		const pol_fed_plan_t *row = plans + (size_t) ord[i].idx *
							    (size_t) n_clusters;
		pol_fed_award_t *a = &out[ord[i].idx];
		double best = INFINITY, second = INFINITY;
		int win = -1, runner = -1;
		bool win_taken = false, starts_now;
		int gpus = j->gpus > 0 ? j->gpus : 0;

		for (c = 0; c < n_clusters; c++) {
			pol_fed_plan_t pa;
			const pol_fed_plan_t *p = &pa;
			fed_terms_t t;
			int64_t start;
			bool taken;
			double cost;

			if (!fed_usable(cat, j, c, &row[c]))
				continue;
			pa = fed_plan_after(&row[c], &queued[c], now);
			start = p->start;
			/* Starts now, but this round already gave the free
			 * GPUs it counted on to earlier jobs. */
			taken = free_gpus && fed_now(p, now) &&
				avail[c] < gpus && avail[c] < free_gpus[c];
			if (taken)
				start = fed_taken_start(w, free_gpus[c],
							over[c], now);
			start = fed_arrival_start(p, start, sent[c], now);
			cost = fed_terms(w, cat, j, c, p, start, now, &t);
			if (isnan(cost))
				continue;
			if (cost < best) {
				second = best;
				runner = win;
				best = cost;
				win = c;
				win_taken = taken;
			} else if (cost < second) {
				second = cost;
				runner = c;
			}
		}
		memset(a, 0, sizeof(*a));
		a->job_id = j->id;
		a->cluster = win;
		a->cost = best;
		a->second = second;
		if (win < 0) {
			snprintf(a->why, sizeof(a->why),
				 "no valid plan on an eligible cluster");
			continue;
		}
		{
			const pol_fed_plan_t pa = fed_plan_after(
				&row[win], &queued[win], now);
			const pol_fed_plan_t *p = &pa;
			int64_t start = win_taken ? fed_taken_start(
							    w, free_gpus[win],
							    over[win], now)
						  : p->start;
			fed_terms_t t;
			size_t len;

			start = fed_arrival_start(p, start, sent[win], now);
			fed_terms(w, cat, j, win, p, start, now, &t);
			fed_why(cat, j, win, p, &t, best, win_taken, now,
				a->why, sizeof(a->why));
			len = strlen(a->why);
			if (runner >= 0 && len < sizeof(a->why) && cat)
				snprintf(a->why + len, sizeof(a->why) - len,
					 "; next %s cost %.0f",
					 cat->sites[runner].name, second);
			else if (runner >= 0 && len < sizeof(a->why))
				snprintf(a->why + len, sizeof(a->why) - len,
					 "; next cluster%d cost %.0f", runner,
					 second);
			/* it starts now on GPUs the round still had free
			 * (supply unknown: as will-run says) */
			starts_now = fed_now(p, now) && !win_taken &&
				     (!free_gpus || avail[win] >= gpus);
			/* the copy queues behind the ones won before it */
			if (p->transit_per_job > 0.0)
				sent[win]++;
			if (fed_now(p, now) && !win_taken)
				avail[win] = avail[win] > gpus
						     ? avail[win] - gpus
						     : 0;
			else if (win_taken)
				over[win] += gpus;
			/* it queues there (a later plan, GPUs taken, or none
			 * free for it): the later jobs of the round wait
			 * behind it */
			if (!starts_now) {
				queued[win].jobs++;
				queued[win].gpu_s +=
					(double) gpus *
					(double) (j->hold_s > 0 ? j->hold_s
								: 0);
			}
		}
	}
	free(ord);
	return 0;
}

/* Whether the name want[0..n) is one of the ','-separated names in have. */
static bool fed_has_feature(const char *want, size_t n, const char *have)
{
	const char *p = have;

	while (n && p && *p) {
		size_t k = strcspn(p, ",");

		if (k == n && !strncmp(p, want, n))
			return true;
		p += k;
		if (*p == ',')
			p++;
	}
	return n == 0;
}

/* One '&' term: alternatives separated by '|'. */
static bool fed_term_match(const char *t, size_t len, const char *have)
{
	size_t i = 0;

	while (i < len) {
		size_t start, end;

		while (i < len && strchr("[]() ", t[i]))
			i++;
		start = i;
		while (i < len && t[i] != '|' && !strchr("[]()* ", t[i]))
			i++;
		end = i;
		while (i < len && t[i] != '|')
			i++; /* a count ("*2") or a closing bracket */
		if (end > start &&
		    fed_has_feature(t + start, end - start, have))
			return true;
		if (i < len)
			i++; /* the '|' */
	}
	return false;
}

bool pol_fed_features_match(const char *want, const char *have)
{
	const char *p = want;

	if (!want)
		return true;
	while (*p) {
		size_t len = strcspn(p, "&,");
		size_t k = strspn(p, "[]() ");

		if (k < len && !fed_term_match(p, len, have))
			return false;
		p += len;
		if (*p)
			p++;
	}
	return true;
}
