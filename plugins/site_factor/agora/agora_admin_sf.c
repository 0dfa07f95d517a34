/*
 * agora_admin_sf.c - an admin's "scontrol update job SiteFactor=N" is kept
 * (issue 19, low): site_factor/agora sets every pending job's site factor
 * at each PriorityCalcPeriod, which would undo the admin's value within
 * seconds.  Slurm's update writes job_ptr->site_factor directly (job_mgr.c
 * _update_job) and calls no site factor hook, so the plugin remembers the
 * value it set last on each pending job: a job whose site factor is no
 * longer that value was set by someone else, and from then on keeps it
 * (logged once per job).  Not kept across a slurmctld restart: the table
 * is in memory, so after a restart Agora's value comes back (the job's
 * saved site factor is then the admin's, but nothing says who set it).
 *
 * One open-addressing table keyed by job id, rebuilt at every update
 * pass from the jobs still pending (so it holds only those), guarded by
 * award_lock.
 */
#include "config.h"
#include "agora_compat.h"

#include <stdint.h>

#include "slurm/slurm.h"
#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/slurmctld/slurmctld.h"

#include "agora_sched.h"

typedef struct {
	uint32_t job_id; /* 0: empty */
	uint32_t value;  /* what Agora set last, or the admin's */
	bool admin;
	bool seen; /* pending at this update pass */
} sf_ent_t;

static sf_ent_t *tab;
static size_t cap, used;

static size_t slot(sf_ent_t *t, size_t c, uint32_t job_id)
{
	size_t i = (job_id * 2654435761u) & (c - 1);

	while (t[i].job_id && t[i].job_id != job_id)
		i = (i + 1) & (c - 1);
	return i;
}

static void grow(size_t want)
{
	size_t ncap = cap ? cap : 1024, i;
	sf_ent_t *nt;

	while (want * 2 > ncap)
		ncap *= 2;
	if (ncap == cap)
		return;
	nt = xcalloc(ncap, sizeof(*nt));
	for (i = 0; i < cap; i++)
		if (tab[i].job_id)
			nt[slot(nt, ncap, tab[i].job_id)] = tab[i];
	xfree(tab);
	tab = nt;
	cap = ncap;
}

extern uint32_t agora_admin_sf(job_record_t *job_ptr, uint32_t agora_value)
{
	sf_ent_t *e;

	grow(used + 1);
	e = &tab[slot(tab, cap, job_ptr->job_id)];
	if (!e->job_id) {
		e->job_id = job_ptr->job_id;
		used++;
	} else if (!e->admin && job_ptr->site_factor != e->value) {
		e->admin = true;
		info("site_factor/agora: %pJ: keeping SiteFactor=%d set by an admin (Agora's credit and auction boost no longer apply to it)",
		     job_ptr, (int) job_ptr->site_factor - (int) NICE_OFFSET);
	}
	e->seen = true;
	e->value = e->admin ? job_ptr->site_factor : agora_value;
	return e->value;
}

extern void agora_admin_sf_prune(void)
{
	sf_ent_t *old = tab;
	size_t ocap = cap, i;

	tab = NULL;
	cap = used = 0;
	for (i = 0; i < ocap; i++)
		if (old[i].job_id && old[i].seen)
			used++;
	if (used) {
		size_t n = used;

		used = 0;
		grow(n);
		for (i = 0; i < ocap; i++)
			if (old[i].job_id && old[i].seen) {
				sf_ent_t *e =
					&tab[slot(tab, cap, old[i].job_id)];

				*e = old[i];
				e->seen = false;
				used++;
			}
	}
	xfree(old);
}

extern void agora_admin_sf_fini(void)
{
	xfree(tab);
	cap = used = 0;
}
