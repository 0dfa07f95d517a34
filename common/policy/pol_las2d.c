/*
 * pol_las2d.c - Tiresias' discretised 2D-LAS queues, shared by las and
 * tiresias (contract in pol_las2d.h).
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "pol_las2d.h"

int pol_las2d_init(pol_las2d_t *q, const char *policy, const char *params,
		   double def, agora_err_t *err)
{
	int i, n;

	memset(q, 0, sizeof(*q));
	n = pol_params_list(policy, params, "thresholds", q->thr,
			    POL_LAS2D_MAX_THR, err);
	if (n < 0)
		return -1;
	if (n == 0) {
		q->thr[0] = def;
		n = 1;
	}
	for (i = 0; i < n; i++)
		if (q->thr[i] <= 0 || (i && q->thr[i] <= q->thr[i - 1])) {
			agora_err_set(
				err,
				"policy %s: thresholds: must be positive and increasing",
				policy);
			errno = EINVAL;
			return -1;
		}
	q->n_thr = n;
	return 0;
}

int pol_las2d_queue(const pol_las2d_t *q, double service)
{
	int i = 0;

	while (i < q->n_thr && service >= q->thr[i])
		i++;
	return i;
}

void pol_las2d_begin(pol_las2d_t *q, int64_t now)
{
	q->now = now;
	q->wake = 0;
}

void pol_las2d_wake(pol_las2d_t *q, int64_t t)
{
	if (t <= q->now)
		t = q->now + 1;
	if (!q->wake || t < q->wake)
		q->wake = t;
}

void pol_las2d_on_run(pol_las2d_t *q, double service, int gpus)
{
	int i = pol_las2d_queue(q, service);

	if (i >= q->n_thr || gpus <= 0)
		return;
	pol_las2d_wake(q,
		       q->now + (int64_t) ceil((q->thr[i] - service) / gpus));
}

void pol_las2d_end(const pol_las2d_t *q, pol_actions_t *out)
{
	if (q->wake && (!out->wakeup || q->wake < out->wakeup))
		out->wakeup = q->wake;
}
