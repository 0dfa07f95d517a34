/*
 * agorad_jobs.c - a job table read with slurmctld's update-time cache
 * (agorad_jobs.h).  A full dump of 20,000 jobs holds slurmctld's job read
 * lock while it packs them; an unchanged table costs one small answer.
 */
#include <stddef.h>
#include <time.h>

#include <slurm/slurm.h>
#include "agora_compat_pub.h"
#include <slurm/slurm_errno.h>

#include "agorad_jobs.h"

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

const job_info_msg_t *ad_jobs_load(ad_jobs_cache_t *c, double max_age_s,
				   bool *changed)
{
	job_info_msg_t *n = NULL;
	time_t since = c->msg ? c->msg->last_update : (time_t) 0;
	double t = mono_s();

	if (changed)
		*changed = false;
	if (c->msg && t - c->asked < max_age_s)
		return c->msg;
	/* SHOW_LOCAL: a federated read also waits on every sibling */
	if (slurm_load_jobs(since, &n, SHOW_ALL | SHOW_LOCAL)) {
		if (c->msg && slurm_get_errno() == SLURM_NO_CHANGE_IN_DATA) {
			c->same++;
			c->asked = t;
			return c->msg;
		}
		return NULL;
	}
	c->asked = t;
	if (c->msg)
		slurm_free_job_info_msg(c->msg);
	c->msg = n;
	c->loads++;
	if (changed)
		*changed = true;
	return n;
}

void ad_jobs_free(ad_jobs_cache_t *c)
{
	if (c->msg)
		slurm_free_job_info_msg(c->msg);
	c->msg = NULL;
}

ad_jobs_cache_t *ad_jobs_local(void)
{
	static ad_jobs_cache_t local;

	return &local;
}
