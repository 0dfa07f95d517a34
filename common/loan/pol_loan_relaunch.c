/*
 * pol_loan_relaunch.c - the relaunch rule (pol_loan_relaunch.h).
 */
#include <signal.h>
#include <stddef.h>

#include "pol_loan_relaunch.h"

/* Ended by SIGTERM: killed by it, or a batch shell that exited 128 +
 * SIGTERM (143: its child was killed by it, or it trapped it and
 * exited so). */
static bool by_sigterm(const pol_relaunch_job_t *j)
{
	return (j->signaled && j->term_sig == SIGTERM) ||
	       (j->exited && j->exit_status == 128 + SIGTERM);
}

static bool lost_requeue(const pol_relaunch_job_t *j, int64_t boot)
{
	return j->requeued_at > 0 && j->requeued_at <= boot &&
	       boot - j->requeued_at <= POL_RELAUNCH_LOST_S && by_sigterm(j) &&
	       j->end >= boot;
}

pol_relaunch_t pol_relaunch_decide(const pol_relaunch_job_t *j, int64_t boot,
				   const char **why)
{
	const char *w = NULL;

	if (why)
		*why = NULL;
	if (!j) {
		if (why)
			*why = "no job";
		return POL_RELAUNCH_NO;
	}
	if (j->requeue && lost_requeue(j, boot))
		return POL_RELAUNCH_LOST_REQUEUE;
	if (!j->queued_before)
		w = "it was not queued or running before the slurmctld start";
	else if (!j->requeue)
		w = "cannot be requeued";
	else if (!j->exited || j->exit_status != 1)
		w = "exit code is not 1:0";
	else if (j->end - j->start > 1)
		w = "it ran";
	else if (j->start > boot + POL_RELAUNCH_WINDOW_S)
		w = "not started right after the slurmctld start";
	if (why)
		*why = w;
	return w ? POL_RELAUNCH_NO : POL_RELAUNCH_LAUNCH_FAILED;
}

bool pol_relaunch_window(bool known_before, int64_t now, int64_t boot,
			 int64_t min_job_age)
{
	int64_t keep = min_job_age > 0 ? min_job_age : 300;

	return known_before && now <= boot + POL_RELAUNCH_WINDOW_S + keep + 5;
}
