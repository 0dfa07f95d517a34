/*
 * agora_hold.c - see agora_hold.h.
 */
#include "config.h"
#include "agora_compat.h"

#include <string.h>

#include "slurm/slurm.h"
#include "src/common/list.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "agora_hold.h"

/* How many of the job's partitions are auction partitions (*in) out of
 * how many (*all). */
static void auction_parts(job_record_t *job_ptr, const agora_conf_t *conf,
			  int *in, int *all)
{
	ListIterator it;
	part_record_t *part_ptr;

	*in = *all = 0;
	if (job_ptr->part_ptr_list) {
		it = list_iterator_create(job_ptr->part_ptr_list);
		while ((part_ptr = list_next(it))) {
			(*all)++;
			if (agora_conf_auction_partition(conf, part_ptr->name))
				(*in)++;
		}
		list_iterator_destroy(it);
	} else if (job_ptr->part_ptr) {
		*all = 1;
		*in = agora_conf_auction_partition(conf,
						   job_ptr->part_ptr->name);
	}
}

extern bool agora_job_auction_managed(job_record_t *job_ptr,
				      const agora_conf_t *conf)
{
	int in, all;

	if (!conf->n_auction_partitions)
		return false;
	auction_parts(job_ptr, conf, &in, &all);
	return in > 0;
}

extern bool agora_job_auction_only(job_record_t *job_ptr,
				   const agora_conf_t *conf)
{
	int in, all;

	if (!conf->n_auction_partitions)
		return false;
	auction_parts(job_ptr, conf, &in, &all);
	return all > 0 && in == all;
}

extern bool agora_job_held(job_record_t *job_ptr)
{
	return job_ptr->state_reason == AGORA_HOLD_REASON &&
	       job_ptr->state_desc &&
	       !strncmp(job_ptr->state_desc, AGORA_DESC_PREFIX,
			strlen(AGORA_DESC_PREFIX));
}

extern bool agora_job_ready(job_record_t *job_ptr, time_t now)
{
	if (!IS_JOB_PENDING(job_ptr) || !job_ptr->details ||
	    job_ptr->priority == 0 || job_ptr->het_job_id ||
	    job_ptr->details->begin_time > now)
		return false;
	switch (job_ptr->state_reason) {
	case WAIT_NO_REASON:
	case WAIT_PRIORITY:
	case WAIT_RESOURCES:
		return true;
	default:
		return agora_job_held(job_ptr);
	}
}

extern void agora_release_hold(job_record_t *job_ptr)
{
	if (!agora_job_held(job_ptr))
		return;
	job_ptr->state_reason = WAIT_NO_REASON;
	xfree(job_ptr->state_desc);
	last_job_update = time(NULL);
}
