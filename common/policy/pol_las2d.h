/*
 * pol_las2d.h - the discretised two-dimensional least-attained-service
 * queues of Tiresias (Gu et al., NSDI'19, section 4.1) that las and
 * tiresias share (pol_las2d.c): the thresholds parameter, the queue of a
 * service, and the wakeup a pass asks for when a running job crosses its
 * queue's threshold.  How a policy orders the jobs of a queue, and what
 * service it counts, stay in the policy.
 *
 * A service is GPU-seconds.  Thresholds split queues: queue 0 holds the
 * services below thr[0], queue i those in [thr[i-1], thr[i]), queue
 * n_thr those at or above the last.
 */
#ifndef POL_LAS2D_H
#define POL_LAS2D_H

#include "pol_policy.h"

#define POL_LAS2D_MAX_THR 8

typedef struct pol_las2d {
	double thr[POL_LAS2D_MAX_THR]; /* GPU-seconds, increasing */
	int n_thr;
	int64_t now;  /* the pass under way */
	int64_t wake; /* earliest wakeup asked in this pass; 0: none */
} pol_las2d_t;

/*
 * Read the ':'-separated "thresholds" of params into q (def, one
 * threshold, when the key is absent; at most POL_LAS2D_MAX_THR).  0, or
 * -1/EINVAL with err = "policy POLICY: thresholds: why" when the list is
 * malformed, too long, not positive or not increasing.  The caller
 * checks the other keys of params with pol_params_parse().
 */
int pol_las2d_init(pol_las2d_t *q, const char *policy, const char *params,
		   double def, agora_err_t *err);

/* The queue of service: the number of thresholds at or below it. */
int pol_las2d_queue(const pol_las2d_t *q, double service);

/* Start a pass at now: no wakeup asked yet. */
void pol_las2d_begin(pol_las2d_t *q, int64_t now);

/* Ask to be woken at t, or at now + 1 if t is not after now. */
void pol_las2d_wake(pol_las2d_t *q, int64_t t);

/*
 * A job with service that runs on gpus GPUs after the pass: ask to be
 * woken at the first whole second its service reaches the threshold of
 * its queue (none in the last queue, or with gpus <= 0).
 */
void pol_las2d_on_run(pol_las2d_t *q, double service, int gpus);

/* End the pass: out->wakeup becomes the earlier of it and q's wakeup. */
void pol_las2d_end(const pol_las2d_t *q, pol_actions_t *out);

#endif
