/*
 * pol_fed_start.c - start times that cannot be true, and agorad's own
 * estimate in their place (pol_fed.h).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "pol_fed.h"

static int busy_by_end(const void *a, const void *b)
{
	const pol_fed_busy_t *x = a, *y = b;

	return (x->end > y->end) - (x->end < y->end);
}

/* pol_fed_start_estimate; *deep: whether it is a deep queue's horizon */
static int64_t estimate(const pol_fed_cluster_load_t *l, int gpus, int64_t now,
			bool *deep)
{
	pol_fed_busy_t *b;
	int64_t t = INT64_MAX, last = now;
	long avail;

	if (!l || gpus <= 0)
		return now;
	avail = (long) l->gpus_free - (l->gpus_queued > 0 ? l->gpus_queued : 0);
	if (avail >= gpus)
		return now;
	if (gpus > l->gpus_total)
		return INT64_MAX; /* never fits */
	if (l->n_busy > 0 && l->busy) {
		if (!(b = malloc((size_t) l->n_busy * sizeof(*b))))
			return INT64_MAX;
		for (int i = 0; i < l->n_busy; i++)
			b[i] = l->busy[i];
		qsort(b, (size_t) l->n_busy, sizeof(*b), busy_by_end);
		for (int i = 0; i < l->n_busy && t == INT64_MAX; i++) {
			avail += b[i].gpus > 0 ? b[i].gpus : 0;
			if (avail >= gpus)
				t = b[i].end > now ? b[i].end : now;
		}
		last = b[l->n_busy - 1].end;
		free(b);
	}
	if (t == INT64_MAX) {
		/* A deep queue: the queued jobs need more GPUs than every
		 * running job frees, so this job starts only after queued
		 * jobs end, at run times and in an order nobody here knows.
		 * Not estimated: the horizon, the same for every such
		 * cluster, so that a cluster whose running jobs free the GPUs
		 * wins over them and among them the auction's queue term
		 * (jobs queued per GPU) chooses.  "The last running job's end
		 * plus the queued work over the cluster's GPUs" made one
		 * multi-day limit set a cluster's bid and sent a round's jobs
		 * elsewhere up to 8.1x that cluster's supply; the queued work
		 * poured into the GPUs as they come free sent more jobs to
		 * deep queues and lost more (doc/evaluation.md, "A deep
		 * queue's start").  A queue of GPUs but no work known (pins
		 * without a limit): the last running job's end. */
		if (l->queued_gpu_s > 0) {
			t = now + POL_FED_HORIZON_S;
			*deep = true;
		} else {
			t = last > now ? last : now;
		}
	}
	return t;
}

int64_t pol_fed_start_estimate(const pol_fed_cluster_load_t *l, int gpus,
			       int64_t now)
{
	bool deep = false;

	return estimate(l, gpus, now, &deep);
}

bool pol_fed_start_plausible(const pol_fed_cluster_load_t *l, int gpus,
			     int64_t start, int64_t now)
{
	int64_t est, limit, bound;
	double ahead;

	if (!l || start <= now)
		return true;
	est = pol_fed_start_estimate(l, gpus, now);
	if (est == INT64_MAX)
		return true; /* nothing to judge it by */
	limit = l->max_limit_s > 0 ? l->max_limit_s : 0;
	if (limit > POL_FED_HORIZON_S)
		limit = POL_FED_HORIZON_S;
	ahead = l->gpus_total > 0 && l->queued_gpu_s > 0
			? l->queued_gpu_s / l->gpus_total
			: 0.0;
	if (ahead > 100.0 * POL_FED_HORIZON_S)
		ahead = 100.0 * POL_FED_HORIZON_S;
	bound = est + limit + (int64_t) ahead + POL_FED_START_SLACK_S;
	return start <= bound;
}

bool pol_fed_willrun_moot(const pol_fed_cluster_load_t *l, int gpus,
			  bool can_preempt, int64_t now)
{
	bool deep = false;

	if (can_preempt || !l)
		return false;
	(void) estimate(l, gpus, now, &deep);
	return deep;
}

static int64_t start_choose(const pol_fed_cluster_load_t *l, int gpus,
			    int64_t start, int n_preempt, int64_t now, int *src)
{
	int64_t est, asked;
	bool deep = false;

	*src = POL_FED_START_WILL_RUN;
	if (!l)
		return start;
	est = estimate(l, gpus, now, &deep);
	/* too early: will-run plans on the running jobs alone (select/
	 * cons_tres's will-run test holds them to their limits and ignores
	 * the pending ones, those agorad pinned here a round ago among
	 * them), so an answer before the estimate puts this job ahead of the
	 * jobs queued there: "now" while they take the free GPUs first, or a
	 * later start ahead of the whole queue (agora-sim's federation, on
	 * time limits, sent the small jobs of a round to the cluster whose
	 * running jobs ended first, however long its queue: doc/
	 * evaluation.md, "Federation: what agorad's bids know").  "Now" is
	 * within POL_FED_NOW_SLACK_S: slurmctld answers at its own clock, a
	 * second or two after the round's.  A plan that preempts may be
	 * true. */
	asked = start <= now + POL_FED_NOW_SLACK_S ? now + POL_FED_NOW_SLACK_S
						   : start;
	if (n_preempt <= 0 && est != INT64_MAX && est > asked) {
		*src = deep ? POL_FED_START_DEEP : POL_FED_START_ESTIMATE;
		return est;
	}
	if (pol_fed_start_plausible(l, gpus, start, now))
		return start;
	if (est == INT64_MAX)
		return start;
	*src = deep ? POL_FED_START_DEEP : POL_FED_START_ESTIMATE;
	return est;
}

/* A start is told apart from "later" up to the horizon only (job limits
 * are capped at it too): a bid says at most now + POL_FED_HORIZON_S. */
static int64_t horizon(int64_t t, int64_t now)
{
	return t > now && t - now > POL_FED_HORIZON_S ? now + POL_FED_HORIZON_S
						      : t;
}

int64_t pol_fed_start_choose(const pol_fed_cluster_load_t *l, int gpus,
			     int64_t start, int n_preempt, int64_t now,
			     int *src)
{
	return horizon(start_choose(l, gpus, start, n_preempt, now, src), now);
}
