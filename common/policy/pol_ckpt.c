/*
 * pol_ckpt.c - the cost of a preemption under checkpoints (pol_ckpt.h).
 */
#include "pol_ckpt.h"

int64_t pol_ckpt_interval(const pol_job_t *j, int64_t dflt)
{
	int64_t c = j->ckpt_s;

	if (c == POL_CKPT_UNKNOWN)
		c = dflt;
	if (c > 0 || c == POL_CKPT_CONTINUOUS)
		return c;
	return POL_CKPT_NEVER;
}

int64_t pol_ckpt_lost(const pol_job_t *j, int64_t dflt, int64_t t)
{
	int64_t c = pol_ckpt_interval(j, dflt), run = t - j->start;

	if (run <= 0 || c == POL_CKPT_CONTINUOUS)
		return 0;
	return c > 0 ? run % c : run;
}

double pol_ckpt_cost(const pol_job_t *j, int64_t dflt, int gpus, int64_t t)
{
	return (double) pol_ckpt_lost(j, dflt, t) *
	       (double) (gpus > 0 ? gpus : 0);
}

int64_t pol_ckpt_rhythm(int64_t interval, int64_t every)
{
	if (every <= 0 || interval == POL_CKPT_NEVER || interval >= every)
		return interval;
	return interval > 0 ? (every + interval - 1) / interval * interval
			    : every;
}

int64_t pol_ckpt_next(int64_t start, int64_t interval, int64_t t)
{
	int64_t run = t - start, k;

	if (interval <= 0 || run <= 0)
		return interval > 0 && run <= 0 ? start + interval : t;
	k = (run + interval - 1) / interval;
	return start + k * interval;
}

bool pol_job_may_preempt(const pol_job_t *j, const pol_preempt_rule_t *r,
			 int64_t t)
{
	int64_t c = pol_ckpt_interval(j, r->dflt);

	if (!j->requeueable)
		return false;
	if (r->min_run >= 0 && t - j->start < (c > 0 ? c : r->min_run))
		return false;
	if (r->budget <= 0)
		return true;
	if (!r->since_save)
		return j->preemptions < r->budget;
	return c == POL_CKPT_CONTINUOUS || j->stale_preempts < r->budget ||
	       j->last_ckpt >= j->start;
}
