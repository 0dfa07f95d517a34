/*
 * agora_hold.c - see agora_hold.h.
 */
#include "config.h"

#include <string.h>

#include "slurm/slurm.h"
#include "src/common/list.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"

#include "agora_hold.h"

extern bool agora_job_auction_managed(job_record_t *job_ptr,
				      const agora_conf_t *conf)
{
	ListIterator it;
	part_record_t *part_ptr;
	bool managed = false;

	if (!conf->n_auction_partitions)
		return false;
	if (job_ptr->part_ptr_list) {
		it = list_iterator_create(job_ptr->part_ptr_list);
		while ((part_ptr = list_next(it)))
			if (agora_conf_auction_partition(conf, part_ptr->name))
				managed = true;
		list_iterator_destroy(it);
		return managed;
	}
	return job_ptr->part_ptr &&
	       agora_conf_auction_partition(conf, job_ptr->part_ptr->name);
}

extern bool agora_job_held(job_record_t *job_ptr)
{
	return job_ptr->state_reason == AGORA_HOLD_REASON &&
	       job_ptr->state_desc &&
	       !strncmp(job_ptr->state_desc, AGORA_DESC_PREFIX,
			strlen(AGORA_DESC_PREFIX));
}

extern void agora_hold_for_auction(job_record_t *job_ptr, const char *why)
{
	char *desc = NULL;

	/* Never override a user's or an admin's own hold. */
	if (job_ptr->priority == 0)
		return;
	if ((job_ptr->state_reason == WAIT_HELD ||
	     job_ptr->state_reason == WAIT_HELD_USER ||
	     job_ptr->state_reason == AGORA_HOLD_REASON) &&
	    !agora_job_held(job_ptr))
		return;
	xstrfmtcat(desc, "%s%s", AGORA_DESC_PREFIX,
		   why ? why : "waiting for the next GPU auction");
	if (job_ptr->state_reason == AGORA_HOLD_REASON &&
	    !xstrcmp(job_ptr->state_desc, desc)) {
		xfree(desc);
		return;
	}
	job_ptr->state_reason = AGORA_HOLD_REASON;
	xfree(job_ptr->state_desc);
	job_ptr->state_desc = desc;
	last_job_update = time(NULL);
}

extern void agora_release_hold(job_record_t *job_ptr)
{
	if (!agora_job_held(job_ptr))
		return;
	job_ptr->state_reason = WAIT_NO_REASON;
	xfree(job_ptr->state_desc);
	last_job_update = time(NULL);
}
