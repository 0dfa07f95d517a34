/*
 * agora_fed.c - the federation's side of site_factor/agora: the fail-open
 * timeout of Agora's federation holds, the auction's decision shown in
 * the SystemComment, and the federation-wide usage in the credit term.
 *
 * job_submit/agora holds a new federated GPU job at its origin (priority
 * 0, AdminComment AGORA_FED_HOLD) for agorad's auction; agorad pins and
 * releases it.  The plugins, not agorad, guarantee that no job waits for
 * ever: each pass, on the origin, a hold that began FedAuctionTimeout ago
 * (or any hold once FedAuction=no), whatever step of a pin it stopped at,
 * is released exactly as "scontrol release"
 * would (the job then goes on as stock Slurm's federation runs it:
 * sibling copies on every viable cluster, first to start wins).
 *
 * agorad writes its decision (winner, bids, reason) into the AdminComment,
 * which Slurm forwards to the sibling copy with every update; each pass
 * copies it into the SystemComment on every cluster, so "scontrol show
 * job" shows it wherever the job is.
 *
 * The credit term: agorad sends each cluster the decayed GPU-hours its
 * apps used on the other clusters (job_submit/agora hands them over with
 * agora_export_fed_usage()); job_site_factor() subtracts them from the
 * local credit, so a team's usage anywhere counts everywhere.
 */
#include "config.h"
#include "agora_compat.h"

#include <stdlib.h>
#include <string.h>

#include "slurm/slurm.h"
#include "src/common/log.h"
#include "src/common/xmalloc.h"
#include "src/common/xstring.h"
#include "src/slurmctld/slurmctld.h"
#include "src/slurmctld/fed_mgr.h"
#include "src/slurmctld/locks.h"

#include "agora_fed.h"
#include "agora_fed_marks.h"
#include "agora_hold.h"
#include "agora_note.h"
#include "agora_sched.h"
#include "pol_app_index.h"

#define LOG_PREFIX "site_factor/agora"

/* ---- federation-wide usage (leaf lock: taken last, held briefly) ---- */

typedef struct {
	char *app;
	double gpu_hours;
} fed_usage_t;

static pthread_mutex_t usage_lock = PTHREAD_MUTEX_INITIALIZER;
static fed_usage_t *usage_tab = NULL;
static int usage_n = 0;
static pol_app_index_t *usage_ix = NULL; /* app -> usage_tab index */
static time_t usage_time = 0;

/* "app:GPU-hours,app:GPU-hours" from agorad; a malformed entry is
 * skipped, the rest is taken. */
extern void agora_export_fed_usage(const char *text, time_t now)
{
	fed_usage_t *tab = NULL;
	pol_app_index_t *ix;
	int n = 0, bad = 0;
	char *copy, *tok, *save = NULL;

	if (!text)
		return;
	copy = xstrdup(text);
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *colon = strrchr(tok, ':'), *end;
		double v;

		if (!colon || colon == tok) {
			bad++;
			continue;
		}
		*colon = '\0';
		v = strtod(colon + 1, &end);
		if (*end || !(v >= 0) || v > 1e12) {
			bad++;
			continue;
		}
		xrecalloc(tab, n + 1, sizeof(*tab));
		tab[n].app = xstrdup(tok);
		tab[n].gpu_hours = v;
		n++;
	}
	xfree(copy);
	if (bad)
		debug("%s: %d malformed federation usage entries skipped",
		      LOG_PREFIX, bad);
	/* an index for the per-job lookups (NULL on ENOMEM: linear) */
	if ((ix = pol_app_index_create()))
		for (int i = 0; i < n; i++)
			if (pol_app_index_put(ix, tab[i].app, i) < 0) {
				pol_app_index_destroy(&ix);
				break;
			}
	slurm_mutex_lock(&usage_lock);
	for (int i = 0; i < usage_n; i++)
		xfree(usage_tab[i].app);
	xfree(usage_tab);
	pol_app_index_destroy(&usage_ix);
	usage_tab = tab;
	usage_n = n;
	usage_ix = ix;
	usage_time = now;
	slurm_mutex_unlock(&usage_lock);
}

extern double agora_fed_remote_usage(const char *app)
{
	double v = 0;

	if (!app)
		return 0;
	slurm_mutex_lock(&usage_lock);
	if (usage_ix) {
		int i;

		if (!pol_app_index_get(usage_ix, app, &i))
			v = usage_tab[i].gpu_hours;
	} else {
		for (int i = 0; i < usage_n; i++)
			if (!xstrcmp(usage_tab[i].app, app)) {
				v = usage_tab[i].gpu_hours;
				break;
			}
	}
	slurm_mutex_unlock(&usage_lock);
	return v;
}

extern void agora_fed_fini(void)
{
	slurm_mutex_lock(&usage_lock);
	for (int i = 0; i < usage_n; i++)
		xfree(usage_tab[i].app);
	xfree(usage_tab);
	pol_app_index_destroy(&usage_ix);
	usage_n = 0;
	slurm_mutex_unlock(&usage_lock);
}

/* ---- holds and decisions ------------------------------------------- */

static bool starts_with(const char *s, const char *prefix)
{
	return s && !strncmp(s, prefix, strlen(prefix));
}

/* What "scontrol release" does (job_mgr.c _release_job_rec): the job gets
 * its priority back and the origin submits the sibling copies (to every
 * viable cluster, or to the one agorad pinned).  The rule of which held
 * job is released (any Agora hold mark, or a decision whose release never
 * landed; never a hold of its owner or an admin): pol_fed_hold_expired.
 * Job write, fed read. */
static bool fed_release(job_record_t *job_ptr, time_t now, long waited)
{
	/* the next slurmctld releases it */
	if (!agora_may_set_prio())
		return false;
	if (job_ptr->details && job_ptr->details->begin_time < now)
		job_ptr->details->begin_time = 0;
	xfree(job_ptr->admin_comment);
	xstrfmtcat(job_ptr->admin_comment,
		   "%sno auction decision within %ld s: stock Slurm federation",
		   AGORA_FED_OPEN, waited);
	job_ptr->direct_set_prio = 0;
	set_job_prio(job_ptr);
	job_ptr->state_reason = WAIT_NO_REASON;
	xfree(job_ptr->state_desc);
	(void) fed_mgr_job_requeue(job_ptr);
	return true;
}

/* Copy an Agora federation text (AdminComment) into the SystemComment's
 * federation part, keeping the within-cluster auction's note beside it
 * (common/base/agora_note.h), never over a SystemComment another
 * component wrote. */
static bool mirror_note(job_record_t *job_ptr)
{
	const char *text = job_ptr->admin_comment;
	char *out = NULL;

	if (!starts_with(text, AGORA_FED_WON) &&
	    !starts_with(text, AGORA_FED_HOLD))
		return false;
	if (agora_note_update(job_ptr->system_comment, AGORA_NOTE_FED, text,
			      &out) != 1)
		return false;
	xfree(job_ptr->system_comment);
	job_ptr->system_comment = xstrdup(out);
	free(out);
	return true;
}

extern void agora_fed_pass(time_t now)
{
	/* write jobs; read config, partitions and the federation */
	slurmctld_lock_t locks = { READ_LOCK, WRITE_LOCK, NO_LOCK, READ_LOCK,
				   READ_LOCK };
	ListIterator it;
	job_record_t *job_ptr;
	bool on, changed = false;
	int timeout, released = 0;

	static time_t idle_since = 0; /* FedAuction=no and no mark seen */
	int marks = 0;

	slurm_mutex_lock(&agora_state_lock);
	on = agora_conf.fed_auction;
	timeout = agora_conf.fed_auction_timeout_s;
	slurm_mutex_unlock(&agora_state_lock);
	/* federation off and nothing of it seen lately: look once a minute
	 * only (an admin may still set a mark), sparing the job write lock */
	if (!on && idle_since && now - idle_since < 60)
		return;

	lock_slurmctld(locks);
	if (!job_list) {
		unlock_slurmctld(locks);
		return;
	}
	it = list_iterator_create(job_list);
	while ((job_ptr = list_next(it))) {
		long waited;
		pol_fed_mark_t m;
		pol_fed_hold_obs_t o;

		if (!job_ptr->admin_comment ||
		    !starts_with(job_ptr->admin_comment, AGORA_DESC_PREFIX))
			continue;
		marks++;
		pol_fed_mark_parse(job_ptr->admin_comment, &m);
		/* an origin copy pinned elsewhere is pending and revoked */
		o.pending = IS_JOB_PENDING(job_ptr) && job_ptr->details;
		o.active = !IS_JOB_FINISHED(job_ptr);
		o.held = job_ptr->priority == 0;
		o.ran = job_ptr->restart_cnt > 0;
		o.submit = job_ptr->details ? job_ptr->details->submit_time : 0;
		/* only the origin releases (a sibling copy is never held) */
		if ((!fed_mgr_fed_rec || fed_mgr_is_origin_job(job_ptr)) &&
		    pol_fed_hold_expired(&o, &m, on && fed_mgr_fed_rec, timeout,
					 now, &waited) &&
		    fed_release(job_ptr, now, waited)) {
			released++;
			changed = true;
		}
		if (mirror_note(job_ptr))
			changed = true;
	}
	list_iterator_destroy(it);
	if (changed)
		last_job_update = now;
	unlock_slurmctld(locks);
	idle_since = (!on && !marks) ? now : 0;
	if (released)
		info("%s: released %d federated jobs that waited %d s or more for agorad's auction (fail open: stock Slurm federation)",
		     LOG_PREFIX, released, timeout);
}
