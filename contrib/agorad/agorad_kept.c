/*
 * agorad_kept.c - a cluster's kept survey answer (ad_cluster_t.survey, the
 * last one read in full) standing in for part or all of this round's:
 * with a job table that did not change (survey_merge), and for a cluster
 * late to answer (survey_stale, FedSurveyMaxAge).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <slurm/slurm.h>
#include "agora_compat_pub.h"

#include "agorad_round_int.h"

/* The n running jobs' ends at p (pol_fed_busy_t, unaligned) clamped at
 * now, as a fresh read would give them. */
static void busy_clamp(char *p, int n, time_t now)
{
	for (int k = 0; k < n; k++) {
		pol_fed_busy_t b;

		memcpy(&b, p + k * sizeof(b), sizeof(b));
		if (b.end < now)
			b.end = now;
		memcpy(p + k * sizeof(b), &b, sizeof(b));
	}
}

/* A survey whose job table did not change (h.jobs_same): the last full
 * answer's job part with this answer's nodes and usage, as one answer
 * (malloc'ed, *mlen); NULL if there is no last answer or no memory.
 * The running jobs' ends are clamped at now, as a fresh read would. */
char *survey_merge(const ad_cluster_t *cl, const char *out, size_t len,
		   size_t *mlen, time_t now)
{
	ad_survey_hdr_t h, o;
	size_t jobs_b, busy_b, use_b, copies_b, fate_b, tail_b;
	char *m, *p;

	if (!cl->survey || cl->survey_len < sizeof(o) || len < sizeof(h))
		return NULL;
	memcpy(&h, out, sizeof(h));
	memcpy(&o, cl->survey, sizeof(o));
	jobs_b = o.jp.n_jobs * sizeof(ad_job_t);
	busy_b = o.jp.n_busy * sizeof(pol_fed_busy_t);
	copies_b = o.jp.n_copies * sizeof(uint32_t);
	fate_b = (o.jp.n_alive + o.jp.n_cancelled) * sizeof(uint32_t);
	tail_b = busy_b + copies_b + fate_b; /* the job part after usage */
	use_b = h.n_usage > 0 ? h.n_usage * sizeof(ad_usage_t) : 0;
	if (len != sizeof(h) + use_b ||
	    cl->survey_len != sizeof(o) + jobs_b +
				      o.n_usage * sizeof(ad_usage_t) + tail_b)
		return NULL;
	h.jp = o.jp; /* the last full answer's job part, whole */
	h.jobs_same = 0;
	*mlen = sizeof(h) + jobs_b + use_b + tail_b;
	if (!(m = malloc(*mlen)))
		return NULL;
	p = m;
	memcpy(p, &h, sizeof(h));
	p += sizeof(h);
	memcpy(p, cl->survey + sizeof(o), jobs_b);
	p += jobs_b;
	memcpy(p, out + sizeof(h), use_b);
	p += use_b;
	memcpy(p, cl->survey + cl->survey_len - tail_b, tail_b);
	busy_clamp(p, o.jp.n_busy, now);
	return m;
}

/* A cluster late to answer (run_children_late): its last full answer as
 * this round's (malloc'ed, *slen), without its jobs to act on (they wait
 * for the next round that reads them) and without its live copies and
 * cancels (the orphans step acts only on answers of this round); its
 * load (free GPUs, queue, running jobs' ends clamped at now) and usage
 * stand.  NULL if there is none or no memory. */
char *survey_stale(const ad_cluster_t *cl, size_t *slen, time_t now)
{
	ad_survey_hdr_t o;
	size_t jobs_b, use_b, busy_b, copies_b;
	char *m, *p;

	if (!cl->survey || cl->survey_len < sizeof(o))
		return NULL;
	memcpy(&o, cl->survey, sizeof(o));
	jobs_b = o.jp.n_jobs * sizeof(ad_job_t);
	use_b = o.n_usage * sizeof(ad_usage_t);
	busy_b = o.jp.n_busy * sizeof(pol_fed_busy_t);
	copies_b = o.jp.n_copies * sizeof(uint32_t);
	if (cl->survey_len !=
	    sizeof(o) + jobs_b + use_b + busy_b + copies_b +
		    (o.jp.n_alive + o.jp.n_cancelled) * sizeof(uint32_t))
		return NULL;
	*slen = sizeof(o) + use_b + busy_b + copies_b;
	if (!(m = malloc(*slen)))
		return NULL;
	p = m + sizeof(o);
	memcpy(p, cl->survey + sizeof(o) + jobs_b, use_b + busy_b + copies_b);
	busy_clamp(p + use_b, o.jp.n_busy, now);
	o.jp.n_jobs = 0;
	o.jp.n_alive = o.jp.n_cancelled = 0;
	o.jobs_same = 0;
	o.conf_read = 0;
	memcpy(m, &o, sizeof(o));
	return m;
}
